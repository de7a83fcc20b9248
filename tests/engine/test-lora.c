/* tests/engine/test-lora.c — LoRA adapters at serving time (hanzo/engine.h HzAdapter,
 * hz_context_set_adapters, HzRequestParams.adapters).
 *
 *  - logits with an adapter (PEFT folder and GGUF LoRA) equal the logits of the model with
 *    the adapter merged in (learner/merge.c, F32 base: within 1e-5 of the largest logit),
 *    on synthetic tiny llama and qwen2 models and on stories260K (skipped without
 *    ../shared);
 *  - two stacked adapters equal the model with both merged; a scale s equals merging an
 *    adapter whose B is multiplied by s; scale 0 gives the base's logits bit for bit;
 *  - a serving batch whose requests carry different adapters gives each request the same
 *    tokens as a server running it alone, and the prefix cache never hands blocks
 *    computed with one adapter stack to another;
 *  - bad adapter files (shapes of another model, a rank that contradicts the config, NaN,
 *    truncated files, a model given as adapter) give errors naming the file and tensor.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include "adapter-io.h"
#include "hanzo/serving.h"
#include "hz-test-util.h"
#include "merge.h"
#include "tiny-model.h"

/* ------------------------------------------------------------------ helpers */

static char *
tmp_dir (void)
{
  g_autoptr (GError) error = NULL;
  char *d = g_dir_make_tmp ("hz-lora-XXXXXX", &error);
  g_assert_no_error (error);
  return d;
}

static const HzToken prompt[] = { 1, 5, 9, 13, 20, 40, 7, 3, 11, 30, 17, 4 };
#define N_PROMPT G_N_ELEMENTS (prompt)

/* logits of every prompt position [N_PROMPT][n_vocab] (g_free) with `adapters` */
static float *
logits_of (HzModel *m, HzAdapter *const *adapters, const float *scales, guint n)
{
  g_autoptr (GError) error = NULL;
  HzContextParams cp;
  hz_context_params_init (&cp);
  cp.n_ctx = 64;
  cp.n_threads = 2;
  g_autoptr (HzContext) ctx = hz_context_new (m, &cp, &error);
  g_assert_no_error (error);
  g_assert_true (hz_context_set_adapters (ctx, adapters, scales, n, &error));
  g_assert_no_error (error);
  g_assert_true (hz_context_eval (ctx, prompt, N_PROMPT, TRUE, NULL, &error));
  g_assert_no_error (error);
  const gsize V = (gsize) hz_model_n_vocab (m);
  float *out = g_new (float, N_PROMPT * V);
  for (guint i = 0; i < N_PROMPT; i++)
    memcpy (out + i * V, hz_context_logits (ctx, (gint) i), V * sizeof (float));
  return out;
}

/* max |a - b| / max(1, max |b|) */
static double
rel_diff (const float *a, const float *b, gsize n)
{
  double d = 0, s = 1;
  for (gsize i = 0; i < n; i++)
    {
      d = MAX (d, fabs ((double) a[i] - b[i]));
      s = MAX (s, fabs ((double) b[i]));
    }
  return d / s;
}

static char *
merge_into (const char *base, const HzLora *lora)
{
  g_autoptr (GError) error = NULL;
  static int counter;
  char *out = g_strdup_printf ("%s.merged%d.gguf", base, counter++);
  g_assert_true (hz_lora_merge_gguf (base, lora, -1, out, &error));
  g_assert_no_error (error);
  return out;
}

/* ------------------------------------------------------------ merged = applied */

static void
check_merged_equal (const char *base_path, const char *label)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (HzModel) base = tiny_model_load (base_path);
  g_autoptr (HzLora) lora = tiny_random_lora (base, HZ_LORA_TARGETS_ALL, 4, 8, FALSE, 3);
  g_autofree char *dir = tmp_dir ();
  g_autofree char *peft = g_build_filename (dir, "peft", NULL);
  g_autofree char *gguf = g_build_filename (dir, "lora.gguf", NULL);
  g_assert_true (hz_lora_save_peft (lora, peft, HZ_ST_F32, NULL, &error));
  g_assert_true (hz_lora_save_gguf (lora, gguf, HZ_TYPE_F32, &error));
  g_assert_no_error (error);
  g_autofree char *merged_path = merge_into (base_path, lora);
  g_autoptr (HzModel) merged = tiny_model_load (merged_path);
  const gsize n = N_PROMPT * (gsize) hz_model_n_vocab (base);

  g_autofree float *want = logits_of (merged, NULL, NULL, 0);
  g_autofree float *plain = logits_of (base, NULL, NULL, 0);
  g_assert_cmpfloat (rel_diff (plain, want, n), >, 1e-3);   /* the adapter matters */
  const char *paths[2] = { peft, gguf };
  for (int k = 0; k < 2; k++)
    {
      g_autoptr (HzAdapter) a = hz_adapter_load (base, paths[k], &error);
      g_assert_no_error (error);
      g_assert_cmpint (hz_adapter_rank (a), ==, 4);
      g_assert_cmpfloat (hz_adapter_scaling (a), ==, 2.0);
      g_autofree float *got = logits_of (base, &a, NULL, 1);
      const double d = rel_diff (got, want, n);
      g_test_message ("%s, %s adapter vs merged: max |diff| / max |logit| = %.2e", label,
                      k == 0 ? "PEFT" : "GGUF", d);
      g_assert_cmpfloat (d, <, 1e-5);
    }
  g_unlink (merged_path);
  tiny_rm_rf (dir);
}

static void
test_merged_synthetic (void)
{
  const char *arches[] = { "llama", "qwen2", "qwen3" };
  for (gsize i = 0; i < G_N_ELEMENTS (arches); i++)
    {
      g_autofree char *path = tiny_model_write (arches[i], 7 + (guint32) i, 64);
      check_merged_equal (path, arches[i]);
      g_unlink (path);
    }
}

static void
test_merged_stories (void)
{
  g_autofree char *path = hz_test_shared_path ("models/stories260K.gguf");
  if (path == NULL)
    return;
  /* merge writes next to the base: work on a copy in the temporary directory */
  g_autofree char *copy = g_build_filename (g_get_tmp_dir (), "hz-lora-stories260K.gguf", NULL);
  g_autoptr (GError) error = NULL;
  g_autofree char *data = NULL;
  gsize len;
  g_assert_true (g_file_get_contents (path, &data, &len, &error));
  g_assert_true (g_file_set_contents (copy, data, (gssize) len, &error));
  check_merged_equal (copy, "stories260K");
  g_unlink (copy);
}

/* ------------------------------------------------------- stacks and scales */

static void
test_stack_and_scale (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = tiny_model_write ("llama", 11, 64);
  g_autoptr (HzModel) base = tiny_model_load (path);
  g_autoptr (HzLora) l1 = tiny_random_lora (base, HZ_LORA_BIT (HZ_LORA_Q) | HZ_LORA_BIT (HZ_LORA_V) |
                                       HZ_LORA_BIT (HZ_LORA_DOWN), 4, 8, FALSE, 5);
  g_autoptr (HzLora) l2 = tiny_random_lora (base, HZ_LORA_TARGETS_ALL, 2, 4, TRUE, 9);
  g_autofree char *dir = tmp_dir ();
  g_autofree char *p1 = g_build_filename (dir, "a.gguf", NULL);
  g_autofree char *p2 = g_build_filename (dir, "b.gguf", NULL);
  g_assert_true (hz_lora_save_gguf (l1, p1, HZ_TYPE_F32, &error));
  g_assert_true (hz_lora_save_gguf (l2, p2, HZ_TYPE_F32, &error));
  g_autoptr (HzAdapter) a1 = hz_adapter_load (base, p1, &error);
  g_assert_no_error (error);
  g_autoptr (HzAdapter) a2 = hz_adapter_load (base, p2, &error);
  g_assert_no_error (error);
  const gsize n = N_PROMPT * (gsize) hz_model_n_vocab (base);

  /* two stacked = both merged */
  g_autofree char *m1 = merge_into (path, l1);
  g_autofree char *m12 = merge_into (m1, l2);
  g_autoptr (HzModel) merged12 = tiny_model_load (m12);
  g_autofree float *want12 = logits_of (merged12, NULL, NULL, 0);
  HzAdapter *both[2] = { a1, a2 };
  g_autofree float *got12 = logits_of (base, both, NULL, 2);
  g_test_message ("two stacked adapters vs both merged: %.2e", rel_diff (got12, want12, n));
  g_assert_cmpfloat (rel_diff (got12, want12, n), <, 1e-5);

  /* scale s = merging B * s */
  const float s = 0.5f;
  g_autoptr (HzLora) l1s = tiny_random_lora (base, l1->config.targets, 4, 8, FALSE, 5);
  for (int32_t il = 0; il < l1s->n_layer; il++)
    for (int t = 0; t < HZ_LORA_N_TARGETS; t++)
      {
        const HzLoraSlot *sl = hz_lora_slot (l1s, il, t);
        for (int64_t i = 0; sl && i < sl->n_out * l1s->config.r; i++)
          l1s->params[sl->off_b + i] *= s;
      }
  g_autofree char *m1s = merge_into (path, l1s);
  g_autoptr (HzModel) merged1s = tiny_model_load (m1s);
  g_autofree float *want1s = logits_of (merged1s, NULL, NULL, 0);
  g_autofree float *got1s = logits_of (base, &a1, &s, 1);
  g_assert_cmpfloat (rel_diff (got1s, want1s, n), <, 1e-5);

  /* scale 0 = the base, bit for bit; so is an empty stack after one was set */
  g_autofree float *plain = logits_of (base, NULL, NULL, 0);
  const float zeros[2] = { 0, 0 };
  g_autofree float *got0 = logits_of (base, both, zeros, 2);
  g_assert_cmpmem (got0, n * sizeof (float), plain, n * sizeof (float));

  /* a context: setting adapters clears the KV cache, unsetting them gives the base back */
  HzContextParams cp;
  hz_context_params_init (&cp);
  cp.n_ctx = 64;
  cp.n_threads = 2;
  g_autoptr (HzContext) ctx = hz_context_new (base, &cp, &error);
  g_assert_true (hz_context_eval (ctx, prompt, N_PROMPT, TRUE, NULL, &error));
  g_assert_cmpuint (hz_context_n_past (ctx), ==, N_PROMPT);
  g_assert_true (hz_context_set_adapters (ctx, both, NULL, 2, &error));
  g_assert_cmpuint (hz_context_n_adapters (ctx), ==, 2);
  g_assert_cmpuint (hz_context_n_past (ctx), ==, 0);
  g_assert_true (hz_context_set_adapters (ctx, both, NULL, 2, &error));  /* same: kept */
  g_assert_true (hz_context_eval (ctx, prompt, N_PROMPT, FALSE, NULL, &error));
  g_assert_true (hz_context_set_adapters (ctx, both, NULL, 2, &error));
  g_assert_cmpuint (hz_context_n_past (ctx), ==, N_PROMPT);
  g_assert_true (hz_context_set_adapters (ctx, NULL, NULL, 0, &error));
  g_assert_cmpuint (hz_context_n_past (ctx), ==, 0);
  g_assert_true (hz_context_eval (ctx, prompt, N_PROMPT, TRUE, NULL, &error));
  const gsize V = (gsize) hz_model_n_vocab (base);
  g_assert_cmpmem (hz_context_logits (ctx, -1), V * sizeof (float),
                   plain + (N_PROMPT - 1) * V, V * sizeof (float));
  /* invalid arguments change nothing */
  const float nan_scale = NAN;
  g_assert_false (hz_context_set_adapters (ctx, &a1, &nan_scale, 1, &error));
  g_assert_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_cmpuint (hz_context_n_past (ctx), ==, N_PROMPT);

  g_unlink (m1);
  g_unlink (m12);
  g_unlink (m1s);
  tiny_rm_rf (dir);
  g_unlink (path);
}

/* ------------------------------------------------------------------ serving */

typedef struct {
  guint64 first;           /* id of tokens[0]'s request */
  GArray *tokens[8];
} Collect;

static gboolean
on_token (guint64 request, guint sample, HzToken token, const char *text, gpointer data)
{
  Collect *c = data;
  g_array_append_val (c->tokens[request - c->first], token);
  return TRUE;
}

static HzServe *
new_server (HzModel *m, gboolean fcfs)
{
  HzServeParams sp;
  hz_serve_params_init (&sp);
  sp.fcfs = fcfs;
  sp.block_size = 4;
  sp.n_blocks = 64;
  sp.max_batch_tokens = 64;
  sp.n_threads = 2;
  g_autoptr (GError) error = NULL;
  HzServe *srv = hz_serve_new (m, &sp, &error);
  g_assert_no_error (error);
  return srv;
}

static void
serving_mixed (gboolean fcfs)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = tiny_model_write ("llama", 21, 64);
  g_autoptr (HzModel) m = tiny_model_load (path);
  g_autoptr (HzLora) l1 = tiny_random_lora (m, HZ_LORA_TARGETS_ALL, 4, 16, FALSE, 2);
  g_autoptr (HzLora) l2 = tiny_random_lora (m, HZ_LORA_BIT (HZ_LORA_UP) | HZ_LORA_BIT (HZ_LORA_O),
                                       8, 32, FALSE, 4);
  g_autofree char *dir = tmp_dir ();
  g_autofree char *p1 = g_build_filename (dir, "a.gguf", NULL);
  g_autofree char *p2 = g_build_filename (dir, "b", NULL);
  g_assert_true (hz_lora_save_gguf (l1, p1, HZ_TYPE_F32, &error));
  g_assert_true (hz_lora_save_peft (l2, p2, HZ_ST_BF16, NULL, &error));
  g_autoptr (HzAdapter) a1 = hz_adapter_load (m, p1, &error);
  g_assert_no_error (error);
  g_autoptr (HzAdapter) a2 = hz_adapter_load (m, p2, &error);
  g_assert_no_error (error);

  /* request k: 0 base, 1 a1, 2 a1 + 0.7 a2, 3 a2 at scale 0 (= base) */
  HzAdapter *stack[2] = { a1, a2 };
  const float scales[4][2] = { { 1, 1 }, { 1, 1 }, { 1, 0.7f }, { 0, 0 } };
  const guint n_ad[4] = { 0, 1, 2, 1 };
  HzAdapter *const *ads[4] = { NULL, stack, stack, stack + 1 };
  HzRequestParams rp[4];
  for (int k = 0; k < 4; k++)
    {
      hz_request_params_init (&rp[k]);
      rp[k].n_predict = 12;
      rp[k].ignore_eog = TRUE;
      rp[k].adapters = ads[k];
      rp[k].adapter_scales = scales[k];
      rp[k].n_adapters = n_ad[k];
    }
  rp[3].adapter_scales = scales[3] + 1;

  /* alone, each on its own server */
  GArray *alone[4];
  for (int k = 0; k < 4; k++)
    {
      g_autoptr (HzServe) srv = new_server (m, fcfs);
      Collect c = { .first = 1 };
      c.tokens[0] = g_array_new (FALSE, FALSE, sizeof (HzToken));
      g_assert_cmpuint (hz_serve_submit (srv, prompt, N_PROMPT, &rp[k], on_token, NULL, &c,
                                         &error), ==, 1);
      g_assert_true (hz_serve_run (srv, &error));
      g_assert_cmpuint (c.tokens[0]->len, ==, 12);
      alone[k] = c.tokens[0];
    }
  g_assert_cmpmem (alone[0]->data, 12 * sizeof (HzToken), alone[3]->data, 12 * sizeof (HzToken));
  g_assert_true (memcmp (alone[0]->data, alone[1]->data, 12 * sizeof (HzToken)) != 0 ||
                 memcmp (alone[1]->data, alone[2]->data, 12 * sizeof (HzToken)) != 0);

  /* together in one batch, twice (the second round finds the prompt in the prefix cache
   * of its own adapter stack only) */
  g_autoptr (HzServe) srv = new_server (m, fcfs);
  for (int round = 0; round < 2; round++)
    {
      Collect c = { .first = 1 + 4 * (guint64) round };
      for (int k = 0; k < 4; k++)
        c.tokens[k] = g_array_new (FALSE, FALSE, sizeof (HzToken));
      for (int k = 0; k < 4; k++)
        {
          g_assert_cmpuint (hz_serve_submit (srv, prompt, N_PROMPT, &rp[k], on_token, NULL, &c,
                                             &error), ==, c.first + k);
          g_assert_no_error (error);
        }
      g_assert_true (hz_serve_run (srv, &error));
      g_assert_no_error (error);
      for (int k = 0; k < 4; k++)
        {
          g_assert_cmpmem (c.tokens[k]->data, c.tokens[k]->len * sizeof (HzToken),
                           alone[k]->data, 12 * sizeof (HzToken));
          g_array_unref (c.tokens[k]);
        }
      HzServeStats st;
      hz_serve_get_stats (srv, &st);
      /* round 0: nothing cached (four prompts in one step, requests 0 and 3 share the
       * base's blocks only once they are committed); round 1: every request finds the
       * 8 tokens (two blocks of 4; the last token is always computed) of its own stack */
      g_test_message ("round %d: %" G_GUINT64_FORMAT " prompt tokens cached", round,
                      st.n_prompt_cached);
      if (round == 1 && !fcfs)
        g_assert_cmpuint (st.n_prompt_cached, >=, 4 * 8);
    }
  for (int k = 0; k < 4; k++)
    g_array_unref (alone[k]);

  /* a request with a bad adapter scale is refused at submit */
  const float bad = INFINITY;
  rp[1].adapter_scales = &bad;
  g_assert_cmpuint (hz_serve_submit (srv, prompt, N_PROMPT, &rp[1], NULL, NULL, NULL, &error),
                    ==, 0);
  g_assert_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT);
  tiny_rm_rf (dir);
  g_unlink (path);
}

/* paged: one batch mixes the stacks; fcfs: one request after another on a context whose
 * adapters are switched (and KV cache cleared) between requests */
static void
test_serving_mixed (void)
{
  serving_mixed (FALSE);
}

static void
test_serving_fcfs_mixed (void)
{
  serving_mixed (TRUE);
}

/* ------------------------------------------------------------------ errors */

static void
assert_load_error (HzModel *m, const char *path, GQuark domain, int code, const char *needle)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (HzAdapter) a = hz_adapter_load (m, path, &error);
  g_assert_null (a);
  g_assert_nonnull (error);
  g_test_message ("%s -> %s", path, error->message);
  g_assert_error (error, domain, code);
  if (needle)
    g_assert_nonnull (strstr (error->message, needle));
}

static void
truncate_file (const char *path, gsize keep)
{
  g_autofree char *data = NULL;
  gsize len;
  g_assert_true (g_file_get_contents (path, &data, &len, NULL));
  g_assert_cmpuint (keep, <, len);
  g_assert_true (g_file_set_contents (path, data, (gssize) keep, NULL));
}

static void
test_bad_files (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = tiny_model_write ("llama", 31, 64);
  g_autofree char *wide_path = tiny_model_write ("llama", 31, 96);
  g_autoptr (HzModel) m = tiny_model_load (path);
  g_autoptr (HzModel) wide = tiny_model_load (wide_path);
  g_autoptr (HzLora) lora = tiny_random_lora (m, HZ_LORA_BIT (HZ_LORA_Q) | HZ_LORA_BIT (HZ_LORA_UP),
                                         4, 8, FALSE, 1);
  g_autofree char *dir = tmp_dir ();
  g_autofree char *peft = g_build_filename (dir, "peft", NULL);
  g_autofree char *gguf = g_build_filename (dir, "a.gguf", NULL);
  g_assert_true (hz_lora_save_peft (lora, peft, HZ_ST_F32, NULL, &error));
  g_assert_true (hz_lora_save_gguf (lora, gguf, HZ_TYPE_F32, &error));

  /* shapes of another model (n_ff 64 vs 96) */
  assert_load_error (wide, peft, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_ADAPTER_MISMATCH,
                     "layers.0.mlp.up_proj.lora_B.weight' is [64, 4] but should be [96, 4]");
  assert_load_error (wide, gguf, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_ADAPTER_MISMATCH,
                     "blk.0.ffn_up.weight.lora_b");
  /* an adapter loaded for one model is refused by a context of another shape */
  g_autoptr (HzAdapter) ok = hz_adapter_load (m, gguf, &error);
  g_assert_no_error (error);
  g_autoptr (HzContext) wctx = hz_context_new (wide, NULL, &error);
  g_assert_false (hz_context_set_adapters (wctx, &ok, NULL, 1, &error));
  g_assert_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_ADAPTER_MISMATCH);
  g_clear_error (&error);

  /* a rank that contradicts the tensors */
  g_autofree char *cfg_path = g_build_filename (peft, "adapter_config.json", NULL);
  g_autofree char *cfg = NULL;
  g_assert_true (g_file_get_contents (cfg_path, &cfg, NULL, NULL));
  g_assert_true (g_file_set_contents (cfg_path,
      "{\"peft_type\":\"LORA\",\"r\":8,\"lora_alpha\":8,\"target_modules\":[\"q_proj\",\"up_proj\"]}",
      -1, NULL));
  assert_load_error (m, peft, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_ADAPTER_MISMATCH,
                     "layers.0.self_attn.q_proj.lora_A.weight' is [4, 32] but should be [8, 32]");
  /* hostile configs: a huge rank (it used to abort allocating terabytes), a rank past
   * int32, a fractional rank, members of the wrong JSON type */
  struct { const char *json; const char *needle; } hostile[] = {
    { "{\"r\":1000000000,\"lora_alpha\":8,\"target_modules\":[\"q_proj\",\"up_proj\"]}", NULL },
    { "{\"r\":99999999999,\"lora_alpha\":8,\"target_modules\":[\"q_proj\"]}", "is not in 1.." },
    { "{\"r\":4.5,\"lora_alpha\":8,\"target_modules\":[\"q_proj\"]}", "'r' has the wrong JSON type" },
    { "{\"r\":4,\"lora_alpha\":[8],\"target_modules\":[\"q_proj\"]}", "'lora_alpha' has the wrong JSON type" },
    { "{\"r\":4,\"lora_alpha\":8,\"use_rslora\":{},\"target_modules\":[\"q_proj\"]}", "'use_rslora' has the wrong JSON type" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (hostile); i++)
    {
      g_assert_true (g_file_set_contents (cfg_path, hostile[i].json, -1, NULL));
      g_autoptr (HzAdapter) a = hz_adapter_load (m, peft, &error);
      g_assert_null (a);
      g_assert_nonnull (error);
      g_assert_true (error->domain == HZ_ENGINE_ERROR);
      g_test_message ("%s -> %s", hostile[i].json, error->message);
      if (hostile[i].needle)
        g_assert_nonnull (strstr (error->message, hostile[i].needle));
      g_clear_error (&error);
    }
  g_assert_true (g_file_set_contents (cfg_path, cfg, -1, NULL));

  /* NaN in a tensor */
  g_autoptr (HzLora) nan_lora = tiny_random_lora (m, lora->config.targets, 4, 8, FALSE, 1);
  nan_lora->params[hz_lora_slot (nan_lora, 1, HZ_LORA_UP)->off_b + 3] = NAN;
  g_autofree char *nan_dir = g_build_filename (dir, "nan", NULL);
  g_autofree char *nan_gguf = g_build_filename (dir, "nan.gguf", NULL);
  g_assert_true (hz_lora_save_peft (nan_lora, nan_dir, HZ_ST_BF16, NULL, &error));
  g_assert_true (hz_lora_save_gguf (nan_lora, nan_gguf, HZ_TYPE_F16, &error));
  assert_load_error (m, nan_dir, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_BAD_ADAPTER,
                     "layers.1.mlp.up_proj.lora_B.weight' holds a non-finite value");
  assert_load_error (m, nan_gguf, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_BAD_ADAPTER,
                     "blk.1.ffn_up.weight.lora_b' holds a non-finite value");

  /* truncated files */
  truncate_file (gguf, 200);
  {
    g_autoptr (HzAdapter) a = hz_adapter_load (m, gguf, &error);
    g_assert_null (a);
    g_assert_true (error->domain == HZ_GGUF_ERROR);
    g_test_message ("truncated GGUF -> %s", error->message);
    g_clear_error (&error);
  }
  g_autofree char *st_path = g_build_filename (peft, "adapter_model.safetensors", NULL);
  truncate_file (st_path, 300);
  {
    g_autoptr (HzAdapter) a = hz_adapter_load (m, peft, &error);
    g_assert_null (a);
    g_assert_true (error->domain == HZ_SAFETENSORS_ERROR);
    g_test_message ("truncated safetensors -> %s", error->message);
    g_clear_error (&error);
  }
  /* a model is not an adapter; a missing config */
  assert_load_error (m, path, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_BAD_ADAPTER, "not a LoRA adapter");
  g_autofree char *empty = g_build_filename (dir, "empty", NULL);
  g_mkdir (empty, 0700);
  {
    g_autoptr (HzAdapter) a = hz_adapter_load (m, empty, &error);
    g_assert_null (a);
    g_assert_nonnull (error);
    g_clear_error (&error);
  }
  tiny_rm_rf (dir);
  g_unlink (path);
  g_unlink (wide_path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  /* adapters are applied by the CPU paths (the GPU serving step refuses them: HzServe
   * says so at submit); a GPU build run on a machine with a GPU tests the same paths */
  g_setenv ("HZ_DEVICE", "cpu", TRUE);
  g_test_add_func ("/engine/lora/merged-synthetic", test_merged_synthetic);
  g_test_add_func ("/engine/lora/merged-stories260K", test_merged_stories);
  g_test_add_func ("/engine/lora/stack-and-scale", test_stack_and_scale);
  g_test_add_func ("/engine/lora/serving-mixed", test_serving_mixed);
  g_test_add_func ("/engine/lora/serving-fcfs-mixed", test_serving_fcfs_mixed);
  g_test_add_func ("/engine/lora/bad-files", test_bad_files);
  return g_test_run ();
}
