/* tests/engine/test-gemma.c — the sliding-window architectures, Gemma 2, Gemma 3 and gpt-oss
 * (engine/llm.h), past their window, in the paged serving path, and their metadata.
 *
 * The logits of the synthetic tiny-gemma3 / tiny-gemma2 models (window 32) against a
 * float64 reference are test-synth's (/synth/forward/gemma*). Here:
 *   - decoding token by token to position 80 (the cached K/V of the window layers read from
 *     p - 31 on) gives the logits of a full recompute of every prefix in one batch (another
 *     code path: the batch's rows mask their own windows);
 *   - the paged serving path (HzServe: block tables, chunked prompts, several sequences in a
 *     step) gives the greedy ids of HzContext for prompts shorter and longer than the
 *     window, alone and together (F32: with Q8_0 a near-tie of 0.024 in logits of 3.1 at
 *     position 42 parted one of the 6 sequences, the paged attention summing in another
 *     order);
 *   - the paged KV pool with window layers that keep only their window (kv-paged.h) = a
 *     pool keeping every position (bit for bit) = a full recompute, decoding to position
 *     199, with at most 4 window slots held, and the next turn through the prefix cache;
 *   - the hyperparameters llama.cpp reads (window, window pattern as a period or a per-layer
 *     array, the window layers' RoPE base, soft-capping defaults, the 27B query scale) and
 *     refused metadata; the KV bytes of the window rule (hz_hparams_kv_bytes).
 *   - gpt-oss (tiny-gpt-oss, window 32, with its attention sinks, biases, MoE and YaRN) the
 *     same way: decode = recompute past the window, paged = context; its keys (required ones
 *     refused by name, the window pattern, YaRN's attention factor), a file without its sinks
 *     refused, and its harmony chat template (tests/engine/chat-templates) rendering,
 *     reasoning split and a generated reply.
 *
 * Needs the vocabulary of ../shared/models/stories260K.gguf (skipped when absent).
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "gguf.h"
#include "hanzo/engine.h"
#include "cpu/forward-paged.h"
#include "kv-paged.h"
#include "lora-adapter.h"
#include "llm.h"
#include "model-private.h"
#include "prefix-cache.h"
#include "serving-test-util.h"
#include "synth-test-util.h"
#include "../thinking-model.h"

#define N_THREADS 2

typedef struct {
  const char *shape;
  uint32_t    type;
  double      tol;   /* max |decode - recompute| / max |logit| */
} WindowCase;

static HzModel *
load (const char *path)
{
  g_autoptr (GError) error = NULL;
  HzModel *m = hz_test_model_load (path, N_THREADS, &error);
  g_assert_no_error (error);
  return m;
}

static HzContext *
context_batch (HzModel *m, guint n_ctx, guint n_batch)
{
  g_autoptr (GError) error = NULL;
  HzContextParams cp;
  hz_context_params_init (&cp);
  cp.n_ctx = n_ctx;
  if (n_batch)
    cp.n_batch = n_batch;
  cp.n_threads = N_THREADS;
  HzContext *ctx = hz_context_new (m, &cp, &error);
  g_assert_no_error (error);
  return ctx;
}

static HzContext *
context (HzModel *m, guint n_ctx)
{
  return context_batch (m, n_ctx, 0);
}

#define N_DECODE 80

static void
test_window_decode (gconstpointer data)
{
  const WindowCase *c = data;
  g_autoptr (GError) error = NULL;
  g_autofree char *path = hz_test_synth_write ("gemma", c->shape, NULL, c->type, 3, N_THREADS, &error);
  if (!path && !error)
    return;
  g_assert_no_error (error);
  g_autoptr (HzModel) m = load (path);
  const int nv = hz_model_n_vocab (m);
  HzToken toks[N_DECODE];
  g_autoptr (GRand) rng = g_rand_new_with_seed (17);
  toks[0] = hz_model_bos (m);
  for (int i = 1; i < N_DECODE; i++)
    toks[i] = g_rand_int_range (rng, 3, nv);

  /* decode: 8 prompt tokens in a batch, then one token per evaluation */
  g_autoptr (HzContext) a = context (m, 128);
  g_autofree float *dec = g_new (float, (gsize) N_DECODE * nv);
  g_assert_true (hz_context_eval (a, toks, 8, TRUE, NULL, &error));
  g_assert_no_error (error);
  for (int p = 0; p < 8; p++)
    memcpy (dec + (gsize) p * nv, hz_context_logits (a, p), nv * sizeof (float));
  for (int p = 8; p < N_DECODE; p++)
    {
      g_assert_true (hz_context_eval (a, &toks[p], 1, FALSE, NULL, &error));
      g_assert_no_error (error);
      memcpy (dec + (gsize) p * nv, hz_context_logits (a, -1), nv * sizeof (float));
    }

  /* full recomputes: every prefix up to a checkpoint in one batch from an empty cache */
  static const int checkpoints[] = { 30, 31, 32, 33, 47, 63, 64, 65, 79 };
  double worst = 0, max_logit = 0;
  for (gsize i = 0; i < G_N_ELEMENTS (checkpoints); i++)
    {
      const int p = checkpoints[i];
      g_autoptr (HzContext) b = context (m, 128);
      g_assert_true (hz_context_eval (b, toks, p + 1, FALSE, NULL, &error));
      g_assert_no_error (error);
      const float *full = hz_context_logits (b, -1);
      const float *d = dec + (gsize) p * nv;
      double diff = 0, mx = 0;
      for (int v = 0; v < nv; v++)
        {
          g_assert_true (isfinite (d[v]));
          diff = MAX (diff, fabs (d[v] - full[v]));
          mx = MAX (mx, fabs (full[v]));
        }
      worst = MAX (worst, diff / mx);
      max_logit = MAX (max_logit, mx);
    }
  g_test_message ("%s %s: decode to position %d vs full recompute at %" G_GSIZE_FORMAT
                  " checkpoints: max |diff| / max |logit| = %.2e (tolerance %.0e; max |logit| %.3g)",
                  c->shape, hz_quant_traits (c->type)->name, N_DECODE - 1,
                  G_N_ELEMENTS (checkpoints), worst, c->tol, max_logit);
  g_assert_cmpfloat (worst, <=, c->tol);

  /* the same decode with batches of 8: the window layers keep a ring of 32 + 8 - 1 = 39
   * cells (cpu/forward.h), wrapping twice by position 79: the same floats at every
   * position; a cut 5 back is kept and continues alike, one 20 back keeps nothing */
  g_autoptr (HzContext) r = context_batch (m, 128, 8);
  int same = 0;
  g_assert_true (hz_context_eval (r, toks, 8, TRUE, NULL, &error));
  for (int p = 0; p < 8; p++)
    same += memcmp (dec + (gsize) p * nv, hz_context_logits (r, p), nv * sizeof (float)) == 0;
  for (int p = 8; p < N_DECODE; p++)
    {
      g_assert_true (hz_context_eval (r, &toks[p], 1, FALSE, NULL, &error));
      g_assert_no_error (error);
      same += memcmp (dec + (gsize) p * nv, hz_context_logits (r, -1), nv * sizeof (float)) == 0;
    }
  hz_context_truncate (r, N_DECODE - 5);
  g_assert_cmpuint (hz_context_n_past (r), ==, N_DECODE - 5);
  for (int p = N_DECODE - 5; p < N_DECODE; p++)   /* one by one, as the decode above */
    {
      g_assert_true (hz_context_eval (r, &toks[p], 1, FALSE, NULL, &error));
      g_assert_no_error (error);
    }
  same += memcmp (dec + (gsize) (N_DECODE - 1) * nv, hz_context_logits (r, -1), nv * sizeof (float)) == 0;
  hz_context_truncate (r, N_DECODE - 20);
  g_assert_cmpuint (hz_context_n_past (r), ==, 0);
  g_test_message ("batches of 8 (window rings of 39 cells): logits bit-identical at %d of %d "
                  "positions and after a cut of 5", same - 1, N_DECODE);
  g_assert_cmpint (same, ==, N_DECODE + 1);
  g_unlink (path);
}

/* ------------------------------------------------------------- serving (paged) */

#define N_REQ 6
#define N_PREDICT 40

static void
test_serving (gconstpointer data)
{
  const char *shape = data;
  g_autoptr (GError) error = NULL;
  g_autofree char *path = hz_test_synth_write ("gemma-serve", shape, NULL, HZ_TYPE_F32, 5,
                                               N_THREADS, &error);
  if (!path && !error)
    return;
  g_assert_no_error (error);
  g_autoptr (HzModel) m = load (path);
  g_autoptr (HzServe) alone = hz_test_small_server (m, N_THREADS);
  g_autoptr (HzServe) together = hz_test_small_server (m, N_THREADS);
  Collect seq, conc;
  collect_init (&seq);
  collect_init (&conc);
  guint64 ids_seq[N_REQ], ids_conc[N_REQ];
  /* prompts of 5 + 7 i tokens: 5..40, and 40 more generated: every sequence passes the
   * 32-token window */
  serve_alone_and_together (m, alone, together, N_REQ, N_PREDICT, &seq, ids_seq, &conc, ids_conc);

  g_autoptr (HzContext) ctx = context (m, 256);
  for (guint i = 0; i < N_REQ; i++)
    {
      GArray *s = got (&seq, ids_seq[i], 0), *c = got (&conc, ids_conc[i], 0);
      g_assert_cmpuint (s->len, ==, N_PREDICT);
      assert_same (s, c);   /* batch invariance: exact */
      const guint len = 5 + 7 * i;
      g_autofree HzToken *prompt = make_prompt (m, 100 + i, len);
      HzGenerateParams gp;
      hz_generate_params_init (&gp);
      gp.n_predict = N_PREDICT;
      gp.ignore_eog = TRUE;
      g_autoptr (GArray) want = g_array_new (FALSE, FALSE, sizeof (HzToken));
      g_free (hz_context_generate (ctx, prompt, len, &gp, NULL, NULL, NULL, want, NULL, &error));
      g_assert_no_error (error);
      assert_same (s, want);  /* the paged path = the contiguous cache's */
    }
  g_test_message ("%s F32: %d requests of 5..%d prompt tokens + %d generated, concurrent = "
                  "alone = hz_context_generate", shape, N_REQ, 5 + 7 * (N_REQ - 1), N_PREDICT);
  collect_clear (&seq);
  collect_clear (&conc);
  g_unlink (path);
}

/* ------------------------------------------------- paged KV: window layers keep their window */

#define PW_BLOCK 16
#define PW_LEN 200    /* positions 0..199: six windows of 32 past the first */

/* One step of a sequence in pool: reserve n tokens (sliding its window first), the paged
 * forward of them, the logits of the last row into out; the pool checked after. */
static void
paged_step (HzCpuForward *f, const HzLlm *llm, HzKvPool *pool, HzPrefixCache *cache,
            HzKvSeq *seq, const HzToken *toks, guint pos0, guint n, float *out)
{
  g_autoptr (GError) error = NULL;
  g_assert_true (hz_kv_seq_reserve (seq, n));
  g_autofree guint *pos = g_new (guint, n);
  g_autofree const gint32 **tables = g_new (const gint32 *, n);
  for (guint t = 0; t < n; t++)
    {
      pos[t] = pos0 + t;
      tables[t] = hz_kv_seq_table (seq);
    }
  const guint last = n - 1;
  const HzPagedRows rows = { toks + pos0, pos, tables, n, &last, 1, NULL };
  g_assert_true (hz_cpu_forward_paged (f, llm, pool, &rows, out, &error));
  g_assert_no_error (error);
  if (cache)
    hz_prefix_cache_commit (cache, seq, toks, pos0 + n);
  HzKvSeq *one[1] = { seq };
  hz_kv_pool_check (pool, one, 1, NULL, &error);
  g_assert_no_error (error);
}

/* The paged pool with the model's window layers (each keeping only its window: slots given
 * back as the sequence slides) against a pool that keeps every position of every layer and
 * against a full recompute (HzContext, one batch of the whole prefix):
 *  - a prompt of 20 tokens, then decoding one token per step to position 199: the logits of
 *    every step bit-identical between the two pools (the same attention reads the same
 *    cells), and within the window-decode tolerance of the full recompute at positions 40,
 *    99, 150, 199; the window pool holds at most ceil((32 + 1) / 16) + 1 = 4 window slots
 *    after each step (of 13 blocks at the end), the pool's bookkeeping checked every step;
 *  - the next turn: a new sequence with the first 200 tokens and 8 more through the prefix
 *    cache: the hit stops at 192 tokens (the blocks whose window-layer slots are still
 *    there), and its logits equal those of the same 208 tokens computed from scratch. */
static void
test_paged_window (gconstpointer data)
{
  const WindowCase *c = data;
  g_autoptr (GError) error = NULL;
  g_autofree char *path = hz_test_synth_write ("gemma-pw", c->shape, NULL, c->type, 7,
                                               N_THREADS, &error);
  if (!path && !error)
    return;
  g_assert_no_error (error);
  g_autoptr (HzModel) m = load (path);
  const HzLlm *llm = hz_model_get_llm (m);
  const HzHparams *hp = &llm->hp;
  const int nv = hp->n_vocab;
  const guint n_all = PW_LEN + 8;
  HzToken toks[PW_LEN + 8];
  g_autoptr (GRand) rng = g_rand_new_with_seed (23);
  toks[0] = hz_model_bos (m);
  for (guint i = 1; i < n_all; i++)
    toks[i] = g_rand_int_range (rng, 3, nv);

  g_autofree guint8 *layer_swa = g_new0 (guint8, hp->n_layer);
  guint n_win = 0;
  for (int il = 0; il < hp->n_layer; il++)
    n_win += layer_swa[il] = hz_layer_swa (hp, il);
  g_assert_cmpuint (n_win, >, 0);
  const guint kk = (guint) (hp->n_head_kv * hp->head_dim_k), kv = (guint) (hp->n_head_kv * hp->head_dim_v);
  HzKvPoolParams pf = { PW_BLOCK, 40, (guint) hp->n_layer, kk, kv, 0, NULL, 0 };
  HzKvPoolParams pw = { PW_BLOCK, 40, (guint) hp->n_layer, kk, kv, (guint) hp->n_swa, layer_swa, 8 };
  g_autoptr (HzKvPool) full = hz_kv_pool_new (&pf, &error);
  g_assert_no_error (error);
  g_autoptr (HzKvPool) win = hz_kv_pool_new (&pw, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hz_kv_pool_window (win), ==, (guint) hp->n_swa);
  /* storage: the window layers hold 8 slots instead of 40 blocks */
  g_assert_cmpuint (hz_kv_pool_storage_bytes (win), ==,
                    hz_kv_pool_storage_bytes (full) / hp->n_layer
                      * (hp->n_layer - n_win + n_win * 8 / 40.0));
  g_autoptr (HzPrefixCache) cache = hz_prefix_cache_new (win);
  HzCpuForward *f = hz_cpu_forward_new (llm, 512, 256, N_THREADS, &error);
  g_assert_no_error (error);

  HzKvSeq *sf = hz_kv_seq_new (full), *sw = hz_kv_seq_new (win);
  g_autofree float *lf = g_new (float, nv), *lw = g_new (float, nv);
  const guint slot_bound = (hp->n_swa + 1 + PW_BLOCK - 1) / PW_BLOCK + 1;
  guint max_slots = 0, n_same = 0, n_steps = 0;
  double worst = 0;
  for (guint pos = 0; pos < PW_LEN;)
    {
      const guint n = pos == 0 ? 20 : 1;
      paged_step (f, llm, full, NULL, sf, toks, pos, n, lf);
      paged_step (f, llm, win, cache, sw, toks, pos, n, lw);
      pos += n;
      n_steps++;
      n_same += memcmp (lf, lw, sizeof (float) * nv) == 0;
      max_slots = MAX (max_slots, hz_kv_pool_n_slots_used (win));
      if (pos == 41 || pos == 100 || pos == 151 || pos == PW_LEN)
        {
          g_autoptr (HzContext) ctx = context (m, 256);
          g_assert_true (hz_context_eval (ctx, toks, pos, FALSE, NULL, &error));
          g_assert_no_error (error);
          const float *ref = hz_context_logits (ctx, -1);
          double diff = 0, mx = 0;
          for (int v = 0; v < nv; v++)
            {
              diff = MAX (diff, fabs (lw[v] - ref[v]));
              mx = MAX (mx, fabs (ref[v]));
            }
          worst = MAX (worst, diff / mx);
        }
    }
  g_test_message ("%s %s: paged window pool = full pool at %u/%u steps; vs full recompute "
                  "%.2e (< %.0e); window slots held at most %u (bound %u) for %u blocks",
                  c->shape, hz_quant_traits (c->type)->name, n_same, n_steps, worst, c->tol,
                  max_slots, slot_bound, hz_kv_seq_n_blocks (sw));
  g_assert_cmpuint (n_same, ==, n_steps);
  g_assert_cmpfloat (worst, <=, c->tol);
  g_assert_cmpuint (max_slots, <=, slot_bound);
  g_assert_cmpuint (hz_kv_seq_n_blocks (sw), ==, (PW_LEN + PW_BLOCK - 1) / PW_BLOCK);

  /* the next turn through the prefix cache */
  hz_kv_seq_free (sw);
  hz_kv_seq_free (sf);
  HzKvSeq *sb = hz_kv_seq_new (win);
  const guint hit = hz_prefix_cache_match (cache, sb, toks, n_all);
  g_assert_cmpuint (hit, ==, PW_LEN / PW_BLOCK * PW_BLOCK);
  paged_step (f, llm, win, cache, sb, toks, hit, n_all - hit, lw);
  HzKvSeq *sc = hz_kv_seq_new (full);
  paged_step (f, llm, full, NULL, sc, toks, 0, n_all, lf);
  g_assert_true (memcmp (lf, lw, sizeof (float) * nv) == 0);
  g_test_message ("next turn: prefix-cache hit of %u of %u tokens, logits = from scratch", hit,
                  n_all);
  hz_kv_seq_free (sb);
  hz_kv_seq_free (sc);
  hz_cpu_forward_free (f);
  g_unlink (path);
}

/* ------------------------------------------------------------------ metadata */

/* Hyperparameters of a metadata-only GGUF: `arch` with the base keys of a 6-layer model and
 * the extra keys set by `extra` (may be NULL). */
typedef void (*ExtraKeys) (HzGgufWriter *w, const char *arch);

static gboolean
read_hparams (const char *arch, int n_layer, ExtraKeys extra, HzHparams *hp, GError **error)
{
  g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
  char key[96];
#define K(s) (g_snprintf (key, sizeof key, "%s.%s", arch, s), key)
  hz_gguf_writer_set_str (w, "general.architecture", arch);
  hz_gguf_writer_set_u32 (w, K ("embedding_length"), 512);
  hz_gguf_writer_set_u32 (w, K ("block_count"), (uint32_t) n_layer);
  hz_gguf_writer_set_u32 (w, K ("feed_forward_length"), 1024);
  hz_gguf_writer_set_u32 (w, K ("attention.head_count"), 4);
  hz_gguf_writer_set_u32 (w, K ("attention.head_count_kv"), 2);
  hz_gguf_writer_set_u32 (w, K ("attention.key_length"), 256);
  hz_gguf_writer_set_u32 (w, K ("attention.value_length"), 256);
  hz_gguf_writer_set_f32 (w, K ("attention.layer_norm_rms_epsilon"), 1e-6f);
  hz_gguf_writer_set_f32 (w, K ("rope.freq_base"), 1e6f);
#undef K
  if (extra)
    extra (w, arch);
  g_autoptr (GBytes) bytes = hz_gguf_writer_to_bytes (w, error);
  g_assert_nonnull (bytes);
  g_autoptr (HzGguf) g = hz_gguf_open_from_data (g_bytes_get_data (bytes, NULL),
                                                 g_bytes_get_size (bytes), error);
  g_assert_nonnull (g);
  return hz_hparams_read (hp, g, error);
}

static void
set_window (HzGgufWriter *w, const char *arch)
{
  g_autofree char *k = g_strdup_printf ("%s.attention.sliding_window", arch);
  hz_gguf_writer_set_u32 (w, k, 1024);
}

/* the window and a per-layer pattern array of n bools */
static void
set_pattern_array (HzGgufWriter *w, const char *arch, const guint8 *pattern, guint n)
{
  set_window (w, arch);
  g_autofree char *k = g_strdup_printf ("%s.attention.sliding_window_pattern", arch);
  hz_gguf_writer_set_arr (w, k, HZ_GGUF_TYPE_BOOL, pattern, n);
}

static void
set_window_array (HzGgufWriter *w, const char *arch)
{
  static const guint8 pattern[6] = { 1, 0, 1, 1, 0, 0 };
  set_pattern_array (w, arch, pattern, 6);
}

static void
set_short_array (HzGgufWriter *w, const char *arch)
{
  static const guint8 pattern[3] = { 1, 0, 1 };
  set_pattern_array (w, arch, pattern, 3);
}

static void
set_window_period (HzGgufWriter *w, const char *arch)
{
  set_window (w, arch);
  g_autofree char *k = g_strdup_printf ("%s.attention.sliding_window_pattern", arch);
  hz_gguf_writer_set_u32 (w, k, 3);
}

static void
set_gemma3_rope (HzGgufWriter *w, const char *arch)
{
  set_window (w, arch);
  g_autofree char *b = g_strdup_printf ("%s.rope.freq_base_swa", arch);
  g_autofree char *t = g_strdup_printf ("%s.rope.scaling.type", arch);
  g_autofree char *f = g_strdup_printf ("%s.rope.scaling.factor", arch);
  g_autofree char *c = g_strdup_printf ("%s.final_logit_softcapping", arch);
  hz_gguf_writer_set_f32 (w, b, 20000.0f);
  hz_gguf_writer_set_str (w, t, "linear");
  hz_gguf_writer_set_f32 (w, f, 8.0f);
  hz_gguf_writer_set_f32 (w, c, 25.0f);
}

static void
set_zero_softcap (HzGgufWriter *w, const char *arch)
{
  g_autofree char *k = g_strdup_printf ("%s.attn_logit_softcapping", arch);
  hz_gguf_writer_set_f32 (w, k, 0.0f);
}

static guint64
swa_mask (const HzHparams *hp)
{
  guint64 m = 0;
  for (int il = 0; il < hp->n_layer; il++)
    m |= (guint64) hz_layer_swa (hp, il) << il;
  return m;
}

/* The metadata of read_hparams (arch, n_layer, extra) is refused as a bad model, the
 * message naming `what`. */
static void
assert_refused (const char *arch, int n_layer, ExtraKeys extra, const char *what)
{
  g_autoptr (GError) error = NULL;
  HzHparams hp;
  g_assert_false (read_hparams (arch, n_layer, extra, &hp, &error));
  g_assert_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_BAD_MODEL);
  g_assert_nonnull (strstr (error->message, what));
}

static void
test_metadata (void)
{
  g_autoptr (GError) error = NULL;
  HzHparams hp;

  /* gemma3 without attention.sliding_window: no window layers, global RoPE everywhere */
  g_assert_true (read_hparams ("gemma3", 6, NULL, &hp, &error));
  g_assert_no_error (error);
  g_assert_true (hp.gemma);
  g_assert_cmpint (hp.n_swa, ==, 0);
  g_assert_cmpuint (swa_mask (&hp), ==, 0);
  g_assert_cmpfloat (hp.attn_softcap, ==, 0);
  g_assert_cmpfloat (hp.final_softcap, ==, 0);
  g_assert_cmpfloat (hp.attn_scale, ==, 1.0f / sqrtf (256.0f));
  g_assert_cmpint (hp.rope_mode, ==, HZ_ROPE_NEOX);
  /* with a window: five window layers to one global, window base 10000 unscaled */
  g_assert_true (read_hparams ("gemma3", 12, set_window, &hp, &error));
  g_assert_cmpint (hp.n_swa, ==, 1024);
  g_assert_cmpuint (swa_mask (&hp), ==, 0x7df);   /* layers 5 and 11 global */
  g_assert_cmpfloat (hp.rope_freq_base, ==, 1e6f);
  g_assert_cmpfloat (hp.rope_freq_base_swa, ==, 10000.0f);
  g_assert_cmpfloat (hp.rope_freq_scale_swa, ==, 1.0f);
  /* rope.freq_base_swa, linear scaling of the global layers only, final soft-capping */
  g_assert_true (read_hparams ("gemma3", 6, set_gemma3_rope, &hp, &error));
  g_assert_cmpfloat (hp.rope_freq_base_swa, ==, 20000.0f);
  g_assert_cmpfloat (hp.rope_freq_scale, ==, 0.125f);
  g_assert_cmpfloat (hp.rope_freq_scale_swa, ==, 1.0f);
  g_assert_cmpfloat (hp.final_softcap, ==, 25.0f);
  /* the pattern as a per-layer array, and as a period */
  g_assert_true (read_hparams ("gemma3", 6, set_window_array, &hp, &error));
  g_assert_cmpuint (swa_mask (&hp), ==, 0x0d);
  g_assert_true (read_hparams ("gemma3", 6, set_window_period, &hp, &error));
  g_assert_cmpuint (swa_mask (&hp), ==, 0x1b);    /* il % 3 < 2 */
  /* the 27B shape (62 layers): q scaled by 1/sqrt(n_embd / n_head), not the head size */
  g_assert_true (read_hparams ("gemma3", 62, set_window, &hp, &error));
  g_assert_cmpfloat (hp.attn_scale, ==, 1.0f / sqrtf (128.0f));

  /* gemma2: window 4096 by default on even layers, soft-capping 50 / 30, one RoPE */
  g_assert_true (read_hparams ("gemma2", 6, NULL, &hp, &error));
  g_assert_no_error (error);
  g_assert_cmpint (hp.n_swa, ==, 4096);
  g_assert_cmpuint (swa_mask (&hp), ==, 0x15);
  g_assert_cmpfloat (hp.attn_softcap, ==, 50.0f);
  g_assert_cmpfloat (hp.final_softcap, ==, 30.0f);
  g_assert_cmpfloat (hp.rope_freq_base_swa, ==, hp.rope_freq_base);
  g_assert_true (read_hparams ("gemma2", 46, NULL, &hp, &error));
  g_assert_cmpfloat (hp.attn_scale, ==, 1.0f / sqrtf (128.0f));

  /* KV bytes of the window rule: gemma2, 6 layers (3 window), 2 KV heads of 256 + 256 */
  g_assert_true (read_hparams ("gemma2", 6, set_window, &hp, &error));
  const guint64 cell = 2 * (256 + 256) * 4;
  g_assert_cmpuint (hz_hparams_kv_bytes (&hp, 100, 4), ==, 6 * 100 * cell);
  g_assert_cmpuint (hz_hparams_kv_bytes (&hp, 8192, 4), ==, (3 * 8192 + 3 * 1024) * cell);

  /* refused: a per-layer array shorter than the layers, gemma2 without soft-capping */
  assert_refused ("gemma3", 6, set_short_array, "gemma3.attention.sliding_window_pattern");
  assert_refused ("gemma2", 6, set_zero_softcap, "soft-capping");

  /* LoRA adapters: applied at inference, not trained (the learner's pass has no Gemma) */
  g_assert_true (read_hparams ("gemma3", 6, set_window, &hp, &error));
  HzLoraConfig cfg;
  hz_lora_config_init (&cfg);
  g_autoptr (HzLora) infer = hz_lora_alloc (&hp, &cfg, FALSE, &error);
  g_assert_no_error (error);
  g_assert_nonnull (infer);
  g_autoptr (HzLora) train = hz_lora_alloc (&hp, &cfg, TRUE, &error);
  g_assert_null (train);
  g_assert_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "gemma3"));
  g_clear_error (&error);
}

/* gpt-oss's keys beyond the base ones: experts, the window (unless `window` is FALSE),
 * head width 256 everywhere, YaRN */
static void
set_gpt_oss_keys (HzGgufWriter *w, const char *arch, gboolean window)
{
  char key[96];
#define K(s) (g_snprintf (key, sizeof key, "%s.%s", arch, s), key)
  hz_gguf_writer_set_u32 (w, K ("expert_count"), 32);
  hz_gguf_writer_set_u32 (w, K ("expert_used_count"), 4);
  hz_gguf_writer_set_u32 (w, K ("expert_feed_forward_length"), 640);
  hz_gguf_writer_set_u32 (w, K ("rope.dimension_count"), 256);
  hz_gguf_writer_set_str (w, K ("rope.scaling.type"), "yarn");
  hz_gguf_writer_set_f32 (w, K ("rope.scaling.factor"), 32.0f);
  hz_gguf_writer_set_u32 (w, K ("rope.scaling.original_context_length"), 4096);
  if (window)
    hz_gguf_writer_set_u32 (w, K ("attention.sliding_window"), 128);
#undef K
}

static void
set_gpt_oss (HzGgufWriter *w, const char *arch)
{
  set_gpt_oss_keys (w, arch, TRUE);
}

static void
set_gpt_oss_no_window (HzGgufWriter *w, const char *arch)
{
  set_gpt_oss_keys (w, arch, FALSE);
}

static void
set_gpt_oss_no_expert_width (HzGgufWriter *w, const char *arch)
{
  g_autofree char *k1 = g_strdup_printf ("%s.expert_count", arch);
  g_autofree char *k2 = g_strdup_printf ("%s.expert_used_count", arch);
  g_autofree char *k3 = g_strdup_printf ("%s.attention.sliding_window", arch);
  hz_gguf_writer_set_u32 (w, k1, 32);
  hz_gguf_writer_set_u32 (w, k2, 4);
  hz_gguf_writer_set_u32 (w, k3, 128);
}

static void
test_metadata_gpt_oss (void)
{
  g_autoptr (GError) error = NULL;
  HzHparams hp;

  g_assert_true (read_hparams ("gpt-oss", 6, set_gpt_oss, &hp, &error));
  g_assert_no_error (error);
  g_assert_cmpint (hp.arch, ==, HZ_ARCH_GPT_OSS);
  g_assert_cmpint (hp.rope_mode, ==, HZ_ROPE_NEOX);
  g_assert_cmpint (hp.n_swa, ==, 128);
  g_assert_cmpuint (swa_mask (&hp), ==, 0x15);    /* even layers: the window */
  g_assert_cmpfloat (hp.rope_freq_base_swa, ==, hp.rope_freq_base);
  g_assert_cmpint (hp.rope_scaling, ==, HZ_ROPE_SCALING_YARN);
  g_assert_cmpfloat (hp.rope_freq_scale, ==, 1.0f / 32.0f);
  g_assert_cmpfloat (hp.rope_freq_scale_swa, ==, hp.rope_freq_scale);  /* YaRN everywhere */
  g_assert_cmpint (hp.rope_n_ctx_orig, ==, 4096);
  /* llama.cpp's get_mscale(32) / (1 + 0.1 ln 32), in float: 1 within an ulp */
  g_assert_cmpfloat (fabsf (hp.yarn_attn_factor - 1.0f), <=, 2e-7f);
  g_assert_cmpint (hp.n_expert, ==, 32);
  g_assert_cmpint (hp.n_expert_used, ==, 4);
  g_assert_cmpint (hp.n_ff_exp, ==, 640);
  g_assert_true (hp.moe_softmax_selected);
  g_assert_false (hp.expert_weights_norm);
  g_assert_cmpfloat (hp.swiglu_alpha, ==, 1.702f);
  g_assert_cmpfloat (hp.swiglu_limit, ==, 7.0f);
  g_assert_true (hp.ffn_all_rows);
  g_assert_cmpfloat (hp.attn_scale, ==, 0);   /* 1/sqrt(head) inside the softmax */
  /* KV bytes: 3 window layers keep 128 positions, 2 KV heads of 256 + 256 */
  const guint64 cell = 2 * (256 + 256) * 4;
  g_assert_cmpuint (hz_hparams_kv_bytes (&hp, 8192, 4), ==, (3 * 8192 + 3 * 128) * cell);

  /* required keys (llama.cpp reads them without defaults) */
  assert_refused ("gpt-oss", 6, set_gpt_oss_no_window, "gpt-oss.attention.sliding_window");
  assert_refused ("gpt-oss", 6, set_gpt_oss_no_expert_width, "gpt-oss.expert_feed_forward_length");
  /* no experts at all */
  assert_refused ("gpt-oss", 6, set_window, "expert_count");
}

/* A copy of the GGUF `src` at `dst` without the tensor `drop` (NULL: none) and, when
 * `chat_template` is not NULL, with it as tokenizer.chat_template. */
static void
copy_gguf (const char *src, const char *dst, const char *drop, const char *chat_template)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (HzGguf) g = hz_gguf_open (src, &error);
  g_assert_no_error (error);
  g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
  for (int64_t i = 0; i < hz_gguf_n_kv (g); i++)
    hz_gguf_writer_copy_kv (w, g, i);
  if (chat_template)
    hz_gguf_writer_set_str (w, "tokenizer.chat_template", chat_template);
  for (int64_t i = 0; i < hz_gguf_n_tensors (g); i++)
    {
      const HzGgufTensor *t = hz_gguf_tensor (g, i);
      if (drop && t->name.len == strlen (drop) && memcmp (t->name.ptr, drop, t->name.len) == 0)
        continue;
      g_assert_true (hz_gguf_writer_copy_tensor (w, g, i, FALSE, &error));
    }
  g_assert_true (hz_gguf_writer_write_file (w, dst, &error));
  g_assert_no_error (error);
}

/* A gemma file without its post-norms is refused naming the tensor. */
static void
test_missing_tensor (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = hz_test_synth_write ("gemma-bad", "tiny-gemma3", NULL, HZ_TYPE_F32, 1,
                                               N_THREADS, &error);
  if (!path && !error)
    return;
  g_assert_no_error (error);
  g_autofree char *bad = g_strconcat (path, ".bad.gguf", NULL);
  copy_gguf (path, bad, "blk.2.post_ffw_norm.weight", NULL);
  g_autoptr (HzModel) m = hz_model_load (bad, NULL, &error);
  g_assert_null (m);
  g_assert_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_BAD_MODEL);
  g_assert_nonnull (strstr (error->message, "blk.2.post_ffw_norm.weight"));
  g_unlink (bad);
  g_unlink (path);
}

/* A gpt-oss file without one layer's sinks, or without its output bias, is refused naming
 * the tensor. */
static void
test_missing_tensor_gpt_oss (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = hz_test_synth_write ("gpt-oss-bad", "tiny-gpt-oss", NULL, HZ_TYPE_F32, 1,
                                               N_THREADS, &error);
  if (!path && !error)
    return;
  g_assert_no_error (error);
  static const char *const drop[] = { "blk.1.attn_sinks.weight", "blk.3.attn_output.bias",
                                      "blk.2.ffn_down_exps.bias", "output.weight" };
  for (gsize i = 0; i < G_N_ELEMENTS (drop); i++)
    {
      g_autofree char *bad = g_strconcat (path, ".bad.gguf", NULL);
      copy_gguf (path, bad, drop[i], NULL);
      g_autoptr (HzModel) m = hz_model_load (bad, NULL, &error);
      g_assert_null (m);
      g_assert_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_BAD_MODEL);
      g_assert_nonnull (strstr (error->message, drop[i]));
      g_clear_error (&error);
      g_unlink (bad);
    }
  g_unlink (path);
}

/* gpt-oss's harmony template (openai/gpt-oss-120b's, tests/engine/chat-templates) in a
 * tiny-gpt-oss file: the conversation renders through the Jinja interpreter (system
 * preamble with the date, developer-less user turns, the final channel of the earlier
 * reply, the generation prompt), the model's reasoning format is harmony and a reply of
 * analysis + final splits into reasoning and answer, and a reply is generated (the
 * stories260K vocabulary has no harmony tokens: the markup is spelled out). */
static void
test_chat_template_gpt_oss (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *tpl = hz_test_source_file ("tests/engine/chat-templates/openai-gpt-oss-120b.jinja");
  g_autofree char *path = hz_test_synth_write ("gpt-oss-chat", "tiny-gpt-oss", NULL, HZ_TYPE_Q8_0, 1,
                                               N_THREADS, &error);
  if (!path && !error)
    return;
  g_assert_no_error (error);
  g_autofree char *chat = g_strconcat (path, ".chat.gguf", NULL);
  copy_gguf (path, chat, NULL, tpl);
  g_autoptr (HzModel) m = load (chat);
  g_assert_true (hz_model_is_chat (m));
  g_assert_cmpint (hz_model_reasoning_format (m), ==, HZ_REASONING_HARMONY);

  g_setenv ("SOURCE_DATE_EPOCH", "1796299200", TRUE);   /* the template writes today's date */
  const HzChatMessage msgs[] = {
    { "user", "What is 2+2?" }, { "assistant", "4" }, { "user", "And 3+3?" },
  };
  g_autoptr (HzPrompt) p = hz_model_render_chat (m, msgs, G_N_ELEMENTS (msgs), TRUE, &error);
  g_assert_no_error (error);
  const char *text = hz_prompt_text (p, NULL);
  g_test_message ("gpt-oss's template: %s", text);
  g_assert_true (g_str_has_prefix (text, "<|start|>system<|message|>You are ChatGPT"));
  g_assert_nonnull (strstr (text, "Current date: 2026-12-03"));
  g_assert_nonnull (strstr (text, "<|start|>user<|message|>What is 2+2?<|end|>"
                                  "<|start|>assistant<|channel|>final<|message|>4<|end|>"
                                  "<|start|>user<|message|>And 3+3?<|end|>"));
  g_assert_true (g_str_has_suffix (text, "<|start|>assistant"));

  /* a harmony reply: the analysis channel is reasoning, the final channel the answer */
  g_autofree char *r = NULL, *a = NULL;
  hz_reasoning_split (hz_model_reasoning_format (m), FALSE,
                      "<|channel|>analysis<|message|>Add them.<|end|><|start|>assistant"
                      "<|channel|>final<|message|>6", -1, &r, &a);
  g_assert_cmpstr (r, ==, "Add them.");
  g_assert_cmpstr (a, ==, "6");

  HzChatFit fit;
  g_autofree HzToken *prompt = hz_model_fit_chat (m, msgs, G_N_ELEMENTS (msgs), 1024, 16, &fit, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (fit.n_dropped, ==, 0);
  g_autoptr (HzContext) ctx = context (m, 1024);
  HzGenerateParams gp;
  hz_generate_params_init (&gp);
  gp.n_predict = 16;
  gp.ignore_eog = TRUE;
  g_autoptr (GArray) ids = g_array_new (FALSE, FALSE, sizeof (HzToken));
  g_free (hz_context_generate (ctx, prompt, fit.n_tokens, &gp, NULL, NULL, NULL, ids, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (ids->len, ==, 16);
  g_test_message ("gpt-oss's template: %" G_GSIZE_FORMAT " prompt tokens (past the window of "
                  "32), reply of %u tokens", fit.n_tokens, ids->len);
  g_unlink (chat);
  g_unlink (path);
}

/* Gemma's chat template (Gemma 2's, ../shared/chat-templates: Gemma 3's is the same turn
 * markup) in a tiny-gemma3 file: the conversation renders through the Jinja interpreter as
 * transformers renders it (the golden text), a system message is refused as the template
 * says, and a chat reply is generated (the stories260K vocabulary has no <start_of_turn>
 * token: the markup is spelled out, about 100 tokens). */
static void
test_chat_template (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *tpl_path = hz_test_shared_path ("chat-templates/templates/google-gemma-2-2b-it.jinja");
  if (!tpl_path)
    return;
  g_autofree char *golden_path = hz_test_shared_path ("chat-templates/golden/google-gemma-2-2b-it.nosys.txt");
  if (!golden_path)
    return;
  g_autofree char *tpl = NULL, *golden = NULL;
  g_assert_true (g_file_get_contents (tpl_path, &tpl, NULL, &error));
  g_assert_true (g_file_get_contents (golden_path, &golden, NULL, &error));
  g_autofree char *path = hz_test_synth_write ("gemma-chat", "tiny-gemma3", NULL, HZ_TYPE_Q8_0, 1,
                                               N_THREADS, &error);
  if (!path && !error)
    return;
  g_assert_no_error (error);
  g_autofree char *chat = g_strconcat (path, ".chat.gguf", NULL);
  copy_gguf (path, chat, NULL, tpl);
  g_autoptr (HzModel) m = load (chat);
  g_assert_true (hz_model_is_chat (m));
  g_assert_cmpint (hz_model_chat_template (m), ==, HZ_CHAT_TEMPLATE_GEMMA);

  /* the fixture "nosys" of ../shared/chat-templates/fixtures (bos_token "<s>" as there) */
  const HzChatMessage msgs[] = {
    { "user", "What is 2+2?" }, { "assistant", "4" }, { "user", "And 3+3?" },
  };
  g_autoptr (HzPrompt) p = hz_model_render_chat (m, msgs, G_N_ELEMENTS (msgs), TRUE, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (hz_prompt_text (p, NULL), ==, golden);

  const HzChatMessage sys[] = { { "system", "Be brief." }, { "user", "Hi" } };
  g_autoptr (HzPrompt) none = hz_model_render_chat (m, sys, G_N_ELEMENTS (sys), TRUE, &error);
  g_assert_null (none);
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "System role not supported"));
  g_clear_error (&error);

  HzChatFit fit;
  g_autofree HzToken *prompt = hz_model_fit_chat (m, msgs, G_N_ELEMENTS (msgs), 256, 16, &fit, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (fit.n_dropped, ==, 0);
  g_autoptr (HzContext) ctx = context (m, 256);
  HzGenerateParams gp;
  hz_generate_params_init (&gp);
  gp.n_predict = 16;
  gp.ignore_eog = TRUE;
  g_autoptr (GArray) ids = g_array_new (FALSE, FALSE, sizeof (HzToken));
  g_free (hz_context_generate (ctx, prompt, fit.n_tokens, &gp, NULL, NULL, NULL, ids, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (ids->len, ==, 16);
  g_test_message ("Gemma 2's template: %" G_GSIZE_FORMAT " prompt tokens, reply of %u tokens",
                  fit.n_tokens, ids->len);
  g_unlink (chat);
  g_unlink (path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/gemma/metadata", test_metadata);
  g_test_add_func ("/gemma/missing-tensor", test_missing_tensor);
  g_test_add_func ("/gemma/chat-template", test_chat_template);
  g_test_add_func ("/gpt-oss/metadata", test_metadata_gpt_oss);
  g_test_add_func ("/gpt-oss/missing-tensor", test_missing_tensor_gpt_oss);
  g_test_add_func ("/gpt-oss/chat-template", test_chat_template_gpt_oss);
  static const WindowCase windows[] = {
    /* measured: F32 2.2e-4 / 1.7e-4 (a value crossing an fp16 rounding boundary of ggml's
     * GELU table moves by 2^-11), Q8_0 bit-identical, Q4_K 3.1e-2 (other kernels for the
     * longer batches, through the table; 6e-2 is test-synth's quantized tolerance) */
    { "tiny-gemma3", HZ_TYPE_F32, 5e-4 }, { "tiny-gemma3", HZ_TYPE_Q4_K, 6e-2 },
    { "tiny-gemma2", HZ_TYPE_F32, 5e-4 }, { "tiny-gemma2", HZ_TYPE_Q8_0, 5e-4 },
    /* gpt-oss measured: F32 1.6e-6, MXFP4 bit-identical (its serial kernel is the same for
     * one row and for batches) */
    { "tiny-gpt-oss", HZ_TYPE_F32, 5e-4 }, { "tiny-gpt-oss", HZ_TYPE_MXFP4, 5e-4 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (windows); i++)
    {
      g_autofree char *p = g_strdup_printf ("/%s/window-decode/%s/%s",
                                            strstr (windows[i].shape, "gpt-oss") ? "gpt-oss" : "gemma",
                                            windows[i].shape,
                                            hz_quant_traits (windows[i].type)->name);
      g_test_add_data_func (p, &windows[i], test_window_decode);
    }
  static const WindowCase paged[] = {
    { "tiny-gemma3", HZ_TYPE_F32, 5e-4 }, { "tiny-gemma2", HZ_TYPE_F32, 5e-4 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (paged); i++)
    {
      g_autofree char *p = g_strdup_printf ("/gemma/paged-window/%s", paged[i].shape);
      g_test_add_data_func (p, &paged[i], test_paged_window);
    }
  g_test_add_data_func ("/gemma/serving/tiny-gemma3", "tiny-gemma3", test_serving);
  g_test_add_data_func ("/gemma/serving/tiny-gemma2", "tiny-gemma2", test_serving);
  g_test_add_data_func ("/gpt-oss/serving/tiny-gpt-oss", "tiny-gpt-oss", test_serving);
  return g_test_run ();
}
