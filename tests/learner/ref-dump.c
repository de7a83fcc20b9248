/* tests/learner/ref-dump.c — writes the inputs and our results for the PyTorch + PEFT
 * reference check (tests/reference/peft_reference.py):
 *
 *   learner-ref-dump MODEL.gguf OUTDIR
 *
 * MODEL is a llama GGUF with F32 weights (stories260K). OUTDIR receives:
 *   model.gguf          a copy of the model (the script reads it with its own parser)
 *   adapter_init/       the initial LoRA (PEFT safetensors, F32, our PEFT-style init)
 *   adapter_final/      the adapter after the run
 *   run.json            hyperparameters, the 20 batches (tokens / targets, -100 masked),
 *                       the learning rate of every step, our per-step losses and
 *                       gradient norms, and a probe sequence with our logits under the
 *                       final adapter.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include "hanzo/engine.h"
#include "adapter-io.h"
#include "sft.h"

enum { N_STEPS = 20, BATCH = 4 };

/* JSON is written by hand: json-glib 1.6 prints doubles such as 1e-08 as "1e-08.0",
 * which is not JSON. Doubles use %.17g (round-trip exact). */
static void
add_int_array (GString *j, const int32_t *v, int64_t n)
{
  g_string_append_c (j, '[');
  for (int64_t i = 0; i < n; i++)
    g_string_append_printf (j, "%s%d", i ? "," : "", v[i]);
  g_string_append_c (j, ']');
}

int
main (int argc, char **argv)
{
  if (argc != 3)
    {
      g_printerr ("usage: %s MODEL.gguf OUTDIR\n", argv[0]);
      return 2;
    }
  const char *model_path = argv[1], *out = argv[2];
  g_autoptr (GError) error = NULL;
  HzModelParams mp;
  hz_model_params_init (&mp);
  mp.vocab_only = TRUE;
  g_autoptr (HzModel) tok = hz_model_load (model_path, &mp, &error);
  g_autoptr (HzTrainBase) base = tok ? hz_train_base_open (model_path, &error) : NULL;
  if (base == NULL)
    {
      g_printerr ("%s\n", error->message);
      return 1;
    }
  g_mkdir_with_parents (out, 0755);
  g_autofree char *model_copy = g_build_filename (out, "model.gguf", NULL);
  {
    g_autofree char *bytes = NULL;
    gsize len = 0;
    if (!g_file_get_contents (model_path, &bytes, &len, &error) ||
        !g_file_set_contents (model_copy, bytes, len, &error))
      {
        g_printerr ("%s\n", error->message);
        return 1;
      }
  }

  /* the synthetic "user style" data of test-sft */
  static const char *const names[] = { "Tom", "Lily", "Sam", "Anna", "Ben", "Mia", "Max", "Sue" };
  static const char *const places[] = { "park", "shop", "beach", "forest", "school" };
  GPtrArray *bufs = g_ptr_array_new_with_free_func (g_free);
  GArray *ex = g_array_new (FALSE, FALSE, sizeof (HzSftExample));
  int64_t max_len = 0;
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    for (gsize j = 0; j < G_N_ELEMENTS (places); j++)
      {
        g_autofree char *pt = g_strdup_printf ("%s went to the %s.", names[i], places[j]);
        g_autofree char *rt = g_strdup_printf (" %s said hi. Bye for now, Bob.", names[i]);
        gsize np, nr;
        g_autofree HzToken *p = hz_model_tokenize (tok, pt, -1, TRUE, FALSE, &np);
        g_autofree HzToken *r = hz_model_tokenize (tok, rt, -1, FALSE, FALSE, &nr);
        int32_t *t = g_new (int32_t, np + nr), *y = g_new (int32_t, np + nr);
        g_ptr_array_add (bufs, t);
        g_ptr_array_add (bufs, y);
        HzSftExample e = { t, y, hz_sft_example_build (p, np, r, nr, t, y) };
        max_len = MAX (max_len, e.n);
        g_array_append_val (ex, e);
      }

  HzLoraConfig cfg;
  hz_lora_config_init (&cfg);
  cfg.r = 8;
  cfg.alpha = 16;
  cfg.targets = HZ_LORA_TARGETS_ALL;
  g_autoptr (HzLora) lora = hz_lora_new (&base->llm->hp, &cfg, &error);
  hz_lora_init_peft (lora, 42);
  /* a non-zero B so that step 1 already exercises every path (PEFT's B = 0 would make the
   * first gradients of A vanish); the same values reach PyTorch through the file */
  g_autoptr (GRand) rng = g_rand_new_with_seed (43);
  for (int32_t il = 0; il < lora->n_layer; il++)
    for (int t = 0; t < HZ_LORA_N_TARGETS; t++)
      {
        const HzLoraSlot *s = hz_lora_slot (lora, il, t);
        for (int64_t i = 0; i < s->n_out * cfg.r; i++)
          lora->params[s->off_b + i] = (float) g_rand_double_range (rng, -0.02, 0.02);
      }
  g_autofree char *init_dir = g_build_filename (out, "adapter_init", NULL);
  g_autofree char *final_dir = g_build_filename (out, "adapter_final", NULL);
  if (!hz_lora_save_peft (lora, init_dir, HZ_ST_F32, "stories260K", &error))
    {
      g_printerr ("%s\n", error->message);
      return 1;
    }

  HzSftParams sp;
  hz_sft_params_init (&sp);
  sp.adamw.lr = 5e-3;
  sp.adamw.weight_decay = 0.01;
  sp.max_grad_norm = 1.0;
  sp.schedule = (HzSchedule) { HZ_SCHEDULE_COSINE, 2, N_STEPS, 0.0 };
  sp.recompute = FALSE;
  g_autoptr (HzSftTrainer) tr = hz_sft_trainer_new (base->llm, lora, &sp, max_len);

  char num[G_ASCII_DTOSTR_BUF_SIZE];
#define D(v) g_ascii_formatd (num, sizeof num, "%.17g", (v))
  GString *j = g_string_new ("{");
  g_string_append_printf (j, "\"lr_peak\":%s,", D (sp.adamw.lr));
  g_string_append_printf (j, "\"betas\":[%s,", D (sp.adamw.beta1));
  g_string_append_printf (j, "%s],", D (sp.adamw.beta2));
  g_string_append_printf (j, "\"eps\":%s,", D (sp.adamw.eps));
  g_string_append_printf (j, "\"weight_decay\":%s,", D (sp.adamw.weight_decay));
  g_string_append_printf (j, "\"max_grad_norm\":%s,", D (sp.max_grad_norm));
  g_string_append (j, "\"steps\":[");
  const HzSftExample *all = (const HzSftExample *) ex->data;
  for (int s = 0; s < N_STEPS; s++)
    {
      HzSftExample batch[BATCH];
      for (int i = 0; i < BATCH; i++)
        batch[i] = all[(s * 7 + i * 11) % ex->len];
      const double lr = sp.adamw.lr * hz_schedule_factor (&sp.schedule, s);
      double gn;
      const double loss = hz_sft_trainer_step (tr, batch, BATCH, &gn);
      g_print ("step %2d  lr %.6f  loss %.6f  grad norm %.6f\n", s + 1, lr, loss, gn);
      g_string_append_printf (j, "%s{\"lr\":%s,", s ? "," : "", D (lr));
      g_string_append_printf (j, "\"loss\":%s,", D (loss));
      g_string_append_printf (j, "\"grad_norm\":%s,\"batch\":[", D (gn));
      for (int i = 0; i < BATCH; i++)
        {
          g_string_append_printf (j, "%s{\"tokens\":", i ? "," : "");
          add_int_array (j, batch[i].tokens, batch[i].n);
          g_string_append (j, ",\"targets\":");
          add_int_array (j, batch[i].targets, batch[i].n);
          g_string_append_c (j, '}');
        }
      g_string_append (j, "]}");
    }
  g_string_append (j, "],");

  /* logits of a probe under the final adapter */
  if (!hz_lora_save_peft (lora, final_dir, HZ_ST_F32, "stories260K", &error))
    {
      g_printerr ("%s\n", error->message);
      return 1;
    }
  gsize n_probe;
  g_autofree HzToken *probe = hz_model_tokenize (tok, "Lucy went to the farm. Lucy said", -1,
                                                 TRUE, FALSE, &n_probe);
  HzTrainGraph_f32 *g = hz_train_graph_new_f32 (base->llm, lora, n_probe, FALSE);
  const float *logits = hz_train_forward_f32 (g, lora->params, probe, n_probe);
  g_string_append (j, "\"probe\":");
  add_int_array (j, probe, n_probe);
  g_string_append (j, ",\"probe_logits\":[");
  for (gsize i = 0; i < n_probe * base->llm->hp.n_vocab; i++)
    g_string_append_printf (j, "%s%s", i ? "," : "", D (logits[i]));
  g_string_append (j, "]}\n");
#undef D
  hz_train_graph_free_f32 (g);

  g_autofree char *json_path = g_build_filename (out, "run.json", NULL);
  if (!g_file_set_contents (json_path, j->str, j->len, &error))
    {
      g_printerr ("%s\n", error->message);
      return 1;
    }
  g_string_free (j, TRUE);
  g_ptr_array_free (bufs, TRUE);
  g_array_free (ex, TRUE);
  return 0;
}
