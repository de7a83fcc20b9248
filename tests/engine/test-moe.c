/* tests/engine/test-moe.c — mixture-of-experts models on the CPU engine (engine/cpu/moe.h).
 *
 * The logits of the MoE shapes against a float64 reference are checked in test-synth.c
 * (tiny-qwen3moe, tiny-mixtral, tiny-qwen2moe in several formats). Here:
 *  - route: hz_cpu_moe_route against a float64 softmax, top-k order, ties to the lower id,
 *    the renormalisation (on for Mixtral/qwen3moe, off for qwen2moe), NaN rows;
 *  - serving: for each tiny MoE shape, HzServe (the paged, row-invariant path, experts
 *    grouped over the batch) gives 6 concurrent greedy requests the tokens they get alone
 *    and the tokens of hz_context_generate; every logit finite;
 *  - hostile: malformed MoE metadata and tensors fail to load with an error naming the key
 *    or tensor (expert_used_count > expert_count or 0 or missing, expert_count 0 or > 512,
 *    an expert tensor with the wrong number of experts or dimensions, a missing router or
 *    shared expert, an expert width contradicting the tensors, experts on a dense model);
 *  - LoRA: adapters of the attention projections are accepted, those of the FFN
 *    projections (there is no dense FFN) and training sets are refused.
 *
 * Needs the vocabulary of ../shared/models/stories260K.gguf (skipped when absent).
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "cpu/moe.h"
#include "gguf.h"
#include "hanzo/engine.h"
#include "hanzo/serving.h"
#include "lora-adapter.h"
#include "model-private.h"
#include "quant.h"
#include "synth.h"
#include "synth-test-util.h"

#define N_THREADS 2

/* ------------------------------------------------------------------ routing */

static void
check_route (const float *logits, int ne, int k, gboolean norm)
{
  HzHparams hp = { 0 };
  hp.n_expert = ne;
  hp.n_expert_used = k;
  hp.expert_weights_norm = norm;
  g_autofree float *p = g_memdup2 (logits, ne * sizeof (float));
  g_autofree int32_t *ids = g_new (int32_t, k);
  g_autofree float *w = g_new (float, k);
  hz_cpu_moe_route (&hp, p, ids, w);

  double mx = -INFINITY, sum = 0, wsum = 0;
  for (int e = 0; e < ne; e++)
    mx = MAX (mx, logits[e]);
  for (int e = 0; e < ne; e++)
    sum += exp (logits[e] - mx);
  for (int e = 0; e < ne; e++)
    g_assert_cmpfloat (fabs (p[e] - exp (logits[e] - mx) / sum), <, 1e-6);
  for (int j = 0; j < k; j++)
    {
      g_assert_cmpint (ids[j], >=, 0);
      g_assert_cmpint (ids[j], <, ne);
      wsum += p[ids[j]];
      if (j > 0)  /* descending, ties to the lower id */
        g_assert_true (p[ids[j]] < p[ids[j - 1]] ||
                       (p[ids[j]] == p[ids[j - 1]] && ids[j] > ids[j - 1]));
    }
  for (int e = 0; e < ne; e++)  /* nothing unselected beats the last selected */
    {
      gboolean sel = FALSE;
      for (int j = 0; j < k; j++)
        sel |= ids[j] == e;
      if (!sel)
        g_assert_true (p[e] < p[ids[k - 1]] || (p[e] == p[ids[k - 1]] && e > ids[k - 1]));
    }
  for (int j = 0; j < k; j++)
    g_assert_cmpfloat (fabs (w[j] - (norm ? p[ids[j]] / wsum : p[ids[j]])), <, 1e-6);
}

static void
test_route (void)
{
  const float a[8] = { 0.5f, -1.0f, 2.0f, 0.25f, 2.0f, -3.0f, 1.0f, 0.0f };
  check_route (a, 8, 2, TRUE);
  check_route (a, 8, 2, FALSE);
  check_route (a, 8, 8, TRUE);
  check_route (a, 8, 1, FALSE);
  /* the tie of experts 2 and 4 goes to 2 first */
  HzHparams hp = { 0 };
  hp.n_expert = 8;
  hp.n_expert_used = 3;
  hp.expert_weights_norm = TRUE;
  float p[8];
  int32_t ids[3];
  float w[3];
  memcpy (p, a, sizeof p);
  hz_cpu_moe_route (&hp, p, ids, w);
  g_assert_cmpint (ids[0], ==, 2);
  g_assert_cmpint (ids[1], ==, 4);
  g_assert_cmpint (ids[2], ==, 6);
  g_assert_cmpfloat (fabs (w[0] + w[1] + w[2] - 1.0f), <, 1e-6);
  /* random rows of 128 experts, top 8 */
  g_autoptr (GRand) rng = g_rand_new_with_seed (3);
  float r[128];
  for (int t = 0; t < 20; t++)
    {
      for (int e = 0; e < 128; e++)
        r[e] = (float) g_rand_double_range (rng, -4, 4);
      check_route (r, 128, 8, t % 2 == 0);
    }
  /* a NaN row still names distinct, valid experts */
  for (int e = 0; e < 8; e++)
    p[e] = NAN;
  hz_cpu_moe_route (&hp, p, ids, w);
  for (int j = 0; j < 3; j++)
    {
      g_assert_cmpint (ids[j], >=, 0);
      g_assert_cmpint (ids[j], <, 8);
      for (int i = 0; i < j; i++)
        g_assert_cmpint (ids[i], !=, ids[j]);
    }
}

/* ------------------------------------------------------------------ models */

/* A synthetic MoE model of `shape` with every matrix in `type`; NULL when the vocabulary
 * is absent (skipped). Caller unlinks and frees. */
static char *
write_moe (const char *shape, uint32_t type, guint64 seed)
{
  g_autoptr (GError) error = NULL;
  char *out = hz_test_synth_write ("moe", shape, NULL, type, seed, N_THREADS, &error);
  g_assert_no_error (error);
  return out;
}

static HzModel *
load (const char *path, GError **error)
{
  return hz_test_model_load (path, N_THREADS, error);
}

/* ------------------------------------------------------------------ serving */

typedef struct {
  GHashTable *tokens;   /* request id -> GArray of HzToken */
} Collect;

static void
on_done (const HzServeResult *r, gpointer user_data)
{
  Collect *c = user_data;
  GArray *t = g_array_new (FALSE, FALSE, sizeof (HzToken));
  g_array_append_vals (t, r->tokens, r->n_generated);
  g_hash_table_insert (c->tokens, GSIZE_TO_POINTER ((gsize) r->request), t);
}

static guint64
submit (HzServe *srv, const HzToken *p, guint n, int n_predict, Collect *c)
{
  HzRequestParams rp;
  hz_request_params_init (&rp);
  rp.n_predict = n_predict;
  rp.ignore_eog = TRUE;
  g_autoptr (GError) error = NULL;
  guint64 id = hz_serve_submit (srv, p, n, &rp, NULL, on_done, c, &error);
  g_assert_no_error (error);
  return id;
}

static HzServe *
server (HzModel *m)
{
  return hz_test_small_server (m, N_THREADS);
}

static void
assert_same (GArray *a, GArray *b)
{
  g_assert_cmpuint (a->len, ==, b->len);
  g_assert_cmpmem (a->data, a->len * sizeof (HzToken), b->data, b->len * sizeof (HzToken));
}

#define N_REQ 6
#define N_PREDICT 24

static void
test_serving (gconstpointer data)
{
  const char *shape = data;
  g_autofree char *path = write_moe (shape, HZ_TYPE_Q8_0, 11);
  if (!path)
    return;
  g_autoptr (GError) error = NULL;
  g_autoptr (HzModel) m = load (path, &error);
  g_assert_no_error (error);

  HzToken *prompts[N_REQ];
  guint lens[N_REQ];
  g_autoptr (GRand) rng = g_rand_new_with_seed (5);
  for (guint i = 0; i < N_REQ; i++)
    {
      lens[i] = 4 + 9 * i;
      prompts[i] = g_new (HzToken, lens[i]);
      prompts[i][0] = hz_model_bos (m);
      for (guint j = 1; j < lens[i]; j++)
        prompts[i][j] = g_rand_int_range (rng, 3, hz_model_n_vocab (m));
    }
  Collect seq = { g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) g_array_unref) };
  Collect conc = { g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) g_array_unref) };
  guint64 id_seq[N_REQ], id_conc[N_REQ];
  g_autoptr (HzServe) a = server (m);
  for (guint i = 0; i < N_REQ; i++)
    {
      id_seq[i] = submit (a, prompts[i], lens[i], N_PREDICT, &seq);
      g_assert_true (hz_serve_run (a, &error));
      g_assert_no_error (error);
    }
  g_autoptr (HzServe) b = server (m);
  for (guint i = 0; i < N_REQ; i++)
    id_conc[i] = submit (b, prompts[i], lens[i], N_PREDICT, &conc);
  g_assert_true (hz_serve_run (b, &error));
  g_assert_no_error (error);

  HzContextParams cp;
  hz_context_params_init (&cp);
  cp.n_threads = N_THREADS;
  cp.n_ctx = 256;
  g_autoptr (HzContext) ctx = hz_context_new (m, &cp, &error);
  g_assert_no_error (error);
  guint n_ctx_same = 0;
  for (guint i = 0; i < N_REQ; i++)
    {
      GArray *s = g_hash_table_lookup (seq.tokens, GSIZE_TO_POINTER ((gsize) id_seq[i]));
      GArray *c = g_hash_table_lookup (conc.tokens, GSIZE_TO_POINTER ((gsize) id_conc[i]));
      g_assert_nonnull (s);
      g_assert_nonnull (c);
      g_assert_cmpuint (s->len, ==, N_PREDICT);
      /* batch invariance: exact */
      assert_same (s, c);
      /* against the non-paged context (other kernels for prompt batches) */
      HzGenerateParams gp;
      hz_generate_params_init (&gp);
      gp.n_predict = N_PREDICT;
      gp.ignore_eog = TRUE;
      g_autoptr (GArray) want = g_array_new (FALSE, FALSE, sizeof (HzToken));
      g_free (hz_context_generate (ctx, prompts[i], lens[i], &gp, NULL, NULL, NULL, want, NULL,
                                   &error));
      g_assert_no_error (error);
      assert_same (s, want);
      n_ctx_same++;
      const float *row = hz_context_logits (ctx, -1);
      for (int v = 0; v < hz_model_n_vocab (m); v++)
        g_assert_true (isfinite (row[v]));
      g_free (prompts[i]);
    }
  g_test_message ("%s: %u requests, concurrent = alone = hz_context_generate (%d tokens each)",
                  shape, n_ctx_same, N_PREDICT);
  g_hash_table_unref (seq.tokens);
  g_hash_table_unref (conc.tokens);
  g_unlink (path);
}

/* ------------------------------------------------------------------ hostile files */

typedef struct {
  const char *key;        /* metadata key to set (u32) or drop */
  gint64      value;      /* < 0: drop the key */
  const char *drop;       /* tensor to leave out, or NULL */
  const char *reshape;    /* tensor written with `dims` instead, or NULL */
  int64_t     dims[3];
  const char *expect;     /* substring of the error message */
} Hostile;

/* A copy of `src` with one change. */
static char *
write_hostile (const char *src, const Hostile *h, int i)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (HzGguf) g = hz_gguf_open (src, &error);
  g_assert_no_error (error);
  g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
  for (int64_t k = 0; k < hz_gguf_n_kv (g); k++)
    {
      HzGgufStr name = hz_gguf_key (g, k);
      if (h->key && strlen (h->key) == name.len && memcmp (name.ptr, h->key, name.len) == 0)
        continue;
      hz_gguf_writer_copy_kv (w, g, k);
    }
  if (h->key && h->value >= 0)
    hz_gguf_writer_set_u32 (w, h->key, (uint32_t) h->value);
  for (int64_t k = 0; k < hz_gguf_n_tensors (g); k++)
    {
      const HzGgufTensor *t = hz_gguf_tensor (g, k);
      g_autofree char *name = g_strndup (t->name.ptr, t->name.len);
      if (h->drop && strcmp (name, h->drop) == 0)
        continue;
      if (h->reshape && strcmp (name, h->reshape) == 0)
        {
          const int n_dims = h->dims[2] > 1 ? 3 : 2;
          const uint64_t bytes = hz_quant_row_size (t->type, h->dims[0]) * h->dims[1] *
                                 (n_dims == 3 ? h->dims[2] : 1);
          g_assert_cmpuint (bytes, <=, t->n_bytes);
          g_assert_true (hz_gguf_writer_add_tensor (w, name, t->type, n_dims, h->dims, t->data,
                                                    bytes, TRUE, &error));
          continue;
        }
      g_assert_true (hz_gguf_writer_copy_tensor (w, g, k, TRUE, &error));
    }
  char *out = g_strdup_printf ("%s.hostile-%d.gguf", src, i);
  g_assert_true (hz_gguf_writer_write_file (w, out, &error));
  g_assert_no_error (error);
  return out;
}

static void
check_hostile (const char *src, const Hostile *cases, gsize n)
{
  for (gsize i = 0; i < n; i++)
    {
      g_autofree char *path = write_hostile (src, &cases[i], (int) i);
      g_autoptr (GError) error = NULL;
      g_autoptr (HzModel) m = load (path, &error);
      g_assert_null (m);
      g_assert_nonnull (error);
      g_test_message ("%s", error->message);
      g_assert_true (error->domain == HZ_ENGINE_ERROR);
      g_assert_cmpint (error->code, ==, HZ_ENGINE_ERROR_BAD_MODEL);
      g_assert_nonnull (strstr (error->message, cases[i].expect));
      g_unlink (path);
    }
}

static void
test_hostile (void)
{
  g_autofree char *q3 = write_moe ("tiny-qwen3moe", HZ_TYPE_F32, 1);
  if (!q3)
    return;
  g_autofree char *q2 = write_moe ("tiny-qwen2moe", HZ_TYPE_Q8_0, 1);
  g_autofree char *dense = write_moe ("custom:dim=256,layers=2,heads=4,kv=2,ffn=512", HZ_TYPE_F32, 1);
  /* tiny-qwen3moe: 8 experts, 2 used, expert width 256, n_embd 256 */
  static const Hostile q3_cases[] = {
    { "qwen3moe.expert_used_count", 9, NULL, NULL, { 0 }, "expert_used_count = 9" },
    { "qwen3moe.expert_used_count", 0, NULL, NULL, { 0 }, "expert_used_count = 0" },
    { "qwen3moe.expert_used_count", -1, NULL, NULL, { 0 }, "'qwen3moe.expert_used_count'" },
    { "qwen3moe.expert_count", 0, NULL, NULL, { 0 }, "'qwen3moe.expert_count' must be > 0" },
    { "qwen3moe.expert_count", -1, NULL, NULL, { 0 }, "'qwen3moe.expert_count' must be > 0" },
    { "qwen3moe.expert_count", 1000, NULL, NULL, { 0 }, "LLAMA_MAX_EXPERTS" },
    { "qwen3moe.expert_feed_forward_length", 128, NULL, NULL, { 0 }, "blk.0.ffn_gate_exps.weight" },
    { NULL, 0, NULL, "blk.0.ffn_gate_exps.weight", { 256, 256, 4 },
      "tensor 'blk.0.ffn_gate_exps.weight' has shape [256, 256, 4], expected [256, 256, 8]" },
    { NULL, 0, NULL, "blk.1.ffn_down_exps.weight", { 256, 256, 1 },
      "tensor 'blk.1.ffn_down_exps.weight' has shape [256, 256], expected [256, 256, 8]" },
    { NULL, 0, NULL, "blk.1.ffn_gate_inp.weight", { 256, 4, 1 }, "'blk.1.ffn_gate_inp.weight'" },
    { NULL, 0, "blk.1.ffn_gate_inp.weight", NULL, { 0 }, "lacks the tensor 'blk.1.ffn_gate_inp.weight'" },
    { NULL, 0, "blk.0.ffn_up_exps.weight", NULL, { 0 }, "lacks the tensor 'blk.0.ffn_up_exps.weight'" },
  };
  check_hostile (q3, q3_cases, G_N_ELEMENTS (q3_cases));
  static const Hostile q2_cases[] = {
    { NULL, 0, "blk.0.ffn_gate_inp_shexp.weight", NULL, { 0 }, "'blk.0.ffn_gate_inp_shexp.weight'" },
    { NULL, 0, "blk.1.ffn_down_shexp.weight", NULL, { 0 }, "'blk.1.ffn_down_shexp.weight'" },
    { "qwen2moe.expert_shared_feed_forward_length", 256, NULL, NULL, { 0 }, "blk.0.ffn_gate_shexp.weight" },
  };
  check_hostile (q2, q2_cases, G_N_ELEMENTS (q2_cases));
  static const Hostile dense_cases[] = {
    /* a dense llama file claiming experts: the MoE tensors are missing */
    { "llama.expert_count", 4, NULL, NULL, { 0 }, "'llama.expert_used_count'" },
    { "llama.expert_used_count", 2, NULL, NULL, { 0 }, "expert_used_count is set but expert_count is 0" },
  };
  check_hostile (dense, dense_cases, G_N_ELEMENTS (dense_cases));

  /* LoRA on a MoE model: attention adapters yes; FFN adapters and training no */
  g_autoptr (GError) error = NULL;
  g_autoptr (HzModel) m = load (q3, &error);
  g_assert_no_error (error);
  const HzHparams *hp = &hz_model_get_llm (m)->hp;
  g_assert_cmpint (hp->n_expert, ==, 8);
  g_assert_cmpint (hp->n_expert_used, ==, 2);
  g_assert_cmpint (hp->n_ff_exp, ==, 256);
  g_assert_true (hp->expert_weights_norm);
  HzLoraConfig cfg;
  hz_lora_config_init (&cfg);
  g_autoptr (HzLora) att = hz_lora_alloc (hp, &cfg, FALSE, &error);
  g_assert_no_error (error);
  g_assert_nonnull (att);
  g_assert_null (hz_lora_alloc (hp, &cfg, TRUE, &error));
  g_assert_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  cfg.targets |= 1u << HZ_LORA_UP;
  g_assert_null (hz_lora_alloc (hp, &cfg, FALSE, &error));
  g_assert_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "mixture-of-experts"));
  g_unlink (q3);
  g_unlink (q2);
  g_unlink (dense);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/moe/route", test_route);
  g_test_add_func ("/moe/hostile", test_hostile);
  g_test_add_data_func ("/moe/serving/tiny-qwen3moe", "tiny-qwen3moe", test_serving);
  g_test_add_data_func ("/moe/serving/tiny-mixtral", "tiny-mixtral", test_serving);
  g_test_add_data_func ("/moe/serving/tiny-qwen2moe", "tiny-qwen2moe", test_serving);
  return g_test_run ();
}
