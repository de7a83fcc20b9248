/* tests/learner/test-sft.c — LoRA SFT learns a synthetic "user style": held-out loss on
 * the response tokens goes down. Core case: a random tiny llama with a token-level style
 * (always open with a greeting token, echo the prompt's last token, sign off with two
 * fixed tokens). Real-model case: stories260K (../shared, skipped when absent) with
 * replies in one user's voice ("<Name> said hi. Bye for now, Bob."). */
#include <sys/resource.h>
#include <signal.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <gio/gio.h>
#include <math.h>
#include <string.h>
#include "hanzo/engine.h"
#include "job.h"
#include "sft.h"
#include "hz-test-util.h"
#include "tiny-llama.h"

typedef struct {
  GPtrArray *bufs;
  GArray    *examples;   /* HzSftExample */
} Dataset;

static void
dataset_init (Dataset *d)
{
  d->bufs = g_ptr_array_new_with_free_func (g_free);
  d->examples = g_array_new (FALSE, FALSE, sizeof (HzSftExample));
}

static void
dataset_clear (Dataset *d)
{
  g_ptr_array_free (d->bufs, TRUE);
  g_array_free (d->examples, TRUE);
}

static void
dataset_add (Dataset *d, const int32_t *prompt, int64_t np, const int32_t *resp, int64_t nr)
{
  int32_t *tok = g_new (int32_t, np + nr), *tgt = g_new (int32_t, np + nr);
  g_ptr_array_add (d->bufs, tok);
  g_ptr_array_add (d->bufs, tgt);
  HzSftExample e = { tok, tgt, hz_sft_example_build (prompt, np, resp, nr, tok, tgt) };
  g_array_append_val (d->examples, e);
}

static void
test_example_build (void)
{
  const int32_t p[3] = { 1, 7, 8 }, r[2] = { 9, 2 };
  int32_t tok[4], tgt[4];
  g_assert_cmpint (hz_sft_example_build (p, 3, r, 2, tok, tgt), ==, 4);
  const int32_t want_tok[4] = { 1, 7, 8, 9 }, want_tgt[4] = { -100, -100, 9, 2 };
  g_assert_cmpmem (tok, sizeof tok, want_tok, sizeof want_tok);
  g_assert_cmpmem (tgt, sizeof tgt, want_tgt, sizeof want_tgt);
  g_assert_cmpint (hz_sft_example_build (p, 3, r, 0, tok, tgt), ==, 0);
}

/* Train for n_steps on batches of `batch` examples cycling through `train`; returns the
 * held-out losses before and after. */
static void
run_sft (const HzLlm *llm, HzLora *lora, const Dataset *train, const Dataset *held,
         int n_steps, int batch, double lr, double *before, double *after)
{
  HzSftParams p;
  hz_sft_params_init (&p);
  p.adamw.lr = lr;
  p.adamw.weight_decay = 0.0;
  p.schedule = (HzSchedule) { HZ_SCHEDULE_COSINE, 3, n_steps, 0.1 };
  int64_t max_len = 0;
  for (guint i = 0; i < train->examples->len; i++)
    max_len = MAX (max_len, g_array_index (train->examples, HzSftExample, i).n);
  for (guint i = 0; i < held->examples->len; i++)
    max_len = MAX (max_len, g_array_index (held->examples, HzSftExample, i).n);
  g_autoptr (HzSftTrainer) tr = hz_sft_trainer_new (llm, lora, &p, max_len);
  const HzSftExample *tx = (const HzSftExample *) train->examples->data;
  const HzSftExample *hx = (const HzSftExample *) held->examples->data;
  *before = hz_sft_trainer_evaluate (tr, hx, held->examples->len);
  g_autofree HzSftExample *b = g_new (HzSftExample, batch);
  double first = 0, last = 0;
  for (int s = 0; s < n_steps; s++)
    {
      for (int i = 0; i < batch; i++)
        b[i] = tx[(s * batch + i) % train->examples->len];
      double gn;
      const double loss = hz_sft_trainer_step (tr, b, batch, &gn);
      g_assert_true (isfinite (loss) && isfinite (gn));
      if (s == 0)
        first = loss;
      last = loss;
    }
  g_assert_cmpint (hz_sft_trainer_steps (tr), ==, n_steps);
  *after = hz_sft_trainer_evaluate (tr, hx, held->examples->len);
  g_test_message ("train loss %.4f -> %.4f; held-out loss %.4f -> %.4f (%d steps x %d)",
                  first, last, *before, *after, n_steps, batch);
}

static void
test_tiny_random_llama (void)
{
  TinyLlamaSpec spec;
  tiny_llama_spec_init (&spec);
  spec.type = HZ_TYPE_Q8_0;   /* QLoRA: the base stays quantized */
  g_autoptr (HzTrainBase) base = tiny_llama_open (&spec);
  g_autoptr (GRand) rng = g_rand_new_with_seed (2024);
  Dataset train, held;
  dataset_init (&train);
  dataset_init (&held);
  for (int i = 0; i < 48; i++)
    {
      int32_t prompt[6], resp[4];
      for (int j = 0; j < 6; j++)
        prompt[j] = g_rand_int_range (rng, 3, 36);
      resp[0] = 40;              /* greeting */
      resp[1] = prompt[5];       /* echo */
      resp[2] = 41;              /* signature */
      resp[3] = 42;
      dataset_add (i < 36 ? &train : &held, prompt, 6, resp, 4);
    }
  HzLoraConfig cfg;
  hz_lora_config_init (&cfg);
  cfg.targets = HZ_LORA_TARGETS_ALL;
  g_autoptr (HzLora) lora = hz_lora_new (&base->llm->hp, &cfg, NULL);
  hz_lora_init_peft (lora, 1);
  double before, after;
  run_sft (base->llm, lora, &train, &held, 200, 6, 2e-2, &before, &after);
  g_assert_cmpfloat (after, <, 0.5 * before);
  dataset_clear (&train);
  dataset_clear (&held);
}

static void
add_story (Dataset *d, const HzModel *m, const char *name, const char *place)
{
  g_autofree char *ptext = g_strdup_printf ("%s went to the %s.", name, place);
  g_autofree char *rtext = g_strdup_printf (" %s said hi. Bye for now, Bob.", name);
  gsize np = 0, nr = 0;
  g_autofree HzToken *p = hz_model_tokenize (m, ptext, -1, TRUE, FALSE, &np);
  g_autofree HzToken *r = hz_model_tokenize (m, rtext, -1, FALSE, FALSE, &nr);
  dataset_add (d, p, np, r, nr);
}

static void
test_stories260k (void)
{
  g_autofree char *path = hz_test_shared_path ("models/stories260K.gguf");
  if (path == NULL)
    return;
  g_autoptr (GError) error = NULL;
  HzModelParams mp;
  hz_model_params_init (&mp);
  mp.vocab_only = TRUE;
  g_autoptr (HzModel) tok = hz_model_load (path, &mp, &error);
  g_assert_no_error (error);
  g_autoptr (HzTrainBase) base = hz_train_base_open (path, &error);
  g_assert_no_error (error);

  static const char *const names[] = { "Tom", "Lily", "Sam", "Anna", "Ben", "Mia", "Max",
                                       "Sue", "Tim", "Lucy", "Jack", "Amy" };
  static const char *const places[] = { "park", "shop", "beach", "forest", "school", "farm" };
  Dataset train, held;
  dataset_init (&train);
  dataset_init (&held);
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    for (gsize j = 0; j < G_N_ELEMENTS (places); j++)
      {
        /* held out: the last two names entirely, and one place for every name */
        const gboolean is_held = i >= G_N_ELEMENTS (names) - 2 || j == (i % G_N_ELEMENTS (places));
        add_story (is_held ? &held : &train, tok, names[i], places[j]);
      }
  HzLoraConfig cfg;
  hz_lora_config_init (&cfg);
  cfg.r = 8;
  cfg.alpha = 16;
  cfg.targets = HZ_LORA_TARGETS_ALL;
  g_autoptr (HzLora) lora = hz_lora_new (&base->llm->hp, &cfg, NULL);
  hz_lora_init_peft (lora, 7);
  double before, after;
  run_sft (base->llm, lora, &train, &held, 40, 8, 5e-3, &before, &after);
  g_assert_cmpfloat (after, <, 0.6 * before);
  dataset_clear (&train);
  dataset_clear (&held);
}

/* A diverged run (NaN held-out loss) is never promoted, and its adapter is not written. */
static void
test_diverged (void)
{
  HzLearnJobResult r = { .steps = 5, .heldout_before = 4.1, .heldout_after = NAN };
  g_assert_false (hz_learn_job_improved (&r));
  r.heldout_after = INFINITY;
  g_assert_false (hz_learn_job_improved (&r));
  r.heldout_after = 3.9;
  g_assert_true (hz_learn_job_improved (&r));
  r.heldout_before = r.heldout_after = NAN;   /* no held-out split */
  g_assert_true (hz_learn_job_improved (&r));

  TinyLlamaSpec spec;
  tiny_llama_spec_init (&spec);
  g_autoptr (HzTrainBase) base = tiny_llama_open (&spec);
  HzLoraConfig cfg;
  hz_lora_config_init (&cfg);
  g_autoptr (HzLora) lora = hz_lora_new (&base->llm->hp, &cfg, NULL);
  hz_lora_init_peft (lora, 3);
  lora->params[lora->n_params / 2] = NAN;
  g_autofree char *dir = g_dir_make_tmp ("hz-diverged-XXXXXX", NULL);
  g_autofree char *out = g_build_filename (dir, "adapter", NULL);
  g_autoptr (GError) error = NULL;
  g_assert_false (hz_learn_save_adapter (lora, out, "tiny", &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  g_rmdir (dir);
}

static GBytes *
file_bytes (const char *dir, const char *name)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr (GMappedFile) f = g_mapped_file_new (path, FALSE, NULL);
  g_assert_nonnull (f);
  return g_mapped_file_get_bytes (f);
}

static void
assert_no_staging (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  while ((name = g_dir_read_name (d)) != NULL)
    g_assert_false (g_str_has_prefix (name, ".saving-"));
}

/* A save that fails part-way (here: the file-size limit lets the BF16 safetensors through
 * but not the twice larger F32 GGUF, as a full disk would) leaves the adapter already in
 * the folder whole — not the new safetensors next to the old GGUF — and no staging folder. */
static void
test_save_atomic (void)
{
  TinyLlamaSpec spec;
  tiny_llama_spec_init (&spec);
  g_autoptr (HzTrainBase) base = tiny_llama_open (&spec);
  HzLoraConfig cfg;
  hz_lora_config_init (&cfg);
  g_autoptr (HzLora) a = hz_lora_new (&base->llm->hp, &cfg, NULL);
  g_autoptr (HzLora) b = hz_lora_new (&base->llm->hp, &cfg, NULL);
  hz_lora_init_peft (a, 3);
  hz_lora_init_peft (b, 4);
  for (gsize i = 0; i < b->n_params; i++)
    b->params[i] += 0.01f;   /* B = 0 after the PEFT init: make the two adapters differ */
  g_autofree char *tmp = g_dir_make_tmp ("hz-save-XXXXXX", NULL);
  g_autofree char *out = g_build_filename (tmp, "adapter", NULL);
  g_autoptr (GError) error = NULL;
  g_assert_true (hz_learn_save_adapter (a, out, "tiny", &error));
  g_assert_no_error (error);
  assert_no_staging (out);
  g_autoptr (GBytes) st_a = file_bytes (out, "adapter_model.safetensors");
  g_autoptr (GBytes) gg_a = file_bytes (out, "adapter.gguf");
  g_assert_cmpuint (g_bytes_get_size (gg_a), >, g_bytes_get_size (st_a) + 1024);

  struct rlimit old, lim;
  g_assert_cmpint (getrlimit (RLIMIT_FSIZE, &old), ==, 0);
  lim = old;
  lim.rlim_cur = (rlim_t) ((g_bytes_get_size (st_a) + g_bytes_get_size (gg_a)) / 2);
  void (*prev) (int) = signal (SIGXFSZ, SIG_IGN);
  g_assert_cmpint (setrlimit (RLIMIT_FSIZE, &lim), ==, 0);
  gboolean ok = hz_learn_save_adapter (b, out, "tiny", &error);
  g_assert_cmpint (setrlimit (RLIMIT_FSIZE, &old), ==, 0);
  signal (SIGXFSZ, prev);
  g_assert_false (ok);
  g_assert_nonnull (error);
  g_test_message ("failed save: %s", error->message);
  g_clear_error (&error);
  assert_no_staging (out);
  g_autoptr (GBytes) st_now = file_bytes (out, "adapter_model.safetensors");
  g_autoptr (GBytes) gg_now = file_bytes (out, "adapter.gguf");
  g_assert_true (g_bytes_equal (st_now, st_a));
  g_assert_true (g_bytes_equal (gg_now, gg_a));

  /* without the limit the new adapter replaces the old one, whole */
  g_assert_true (hz_learn_save_adapter (b, out, "tiny", &error));
  g_assert_no_error (error);
  assert_no_staging (out);
  g_autoptr (GBytes) st_b = file_bytes (out, "adapter_model.safetensors");
  g_autoptr (GBytes) gg_b = file_bytes (out, "adapter.gguf");
  g_assert_false (g_bytes_equal (st_b, st_a));
  g_assert_false (g_bytes_equal (gg_b, gg_a));

  const char *names[] = { "adapter_model.safetensors", "adapter_config.json", "adapter.gguf" };
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *path = g_build_filename (out, names[i], NULL);
      g_unlink (path);
    }
  g_rmdir (out);
  g_rmdir (tmp);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/learner/sft/example-build", test_example_build);
  g_test_add_func ("/learner/sft/tiny-random-llama", test_tiny_random_llama);
  g_test_add_func ("/learner/sft/stories260k", test_stories260k);
  g_test_add_func ("/learner/sft/diverged", test_diverged);
  g_test_add_func ("/learner/sft/save-atomic", test_save_atomic);
  return g_test_run ();
}
