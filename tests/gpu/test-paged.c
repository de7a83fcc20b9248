/* tests/gpu/test-paged.c — paged KV cache and batched serving on the GPU (issue 5:
 * kernels/attn-paged.hip, engine/backend-hip/forward-gpu-paged.c, engine/serving.c's GPU
 * dispatch). TAP output; exit 77 (skip) without a device; the model tests skip without
 * the shared data (stories260K.gguf, stories-distill/stories-distill-Q4_0.gguf).
 *
 *  attention  hzk_paged_kv_store + hzk_attn_paged over random K/V scattered into a pool
 *             through shuffled block tables (3 sequences: a prompt chunk, a decode row at
 *             position 99, a fresh prompt; GQA 8/2, head dim 64, blocks of 16) against
 *             (a) the contiguous GPU attention hzk_attn_decode on each sequence's own
 *             cache and (b) the CPU twin hz_cpu_attn_head_paged over a host pool; for
 *             n_split 1, 3 and 32. Bound: max |diff| <= 1e-5 · (1 + |ref|) (fp32 both,
 *             only the summation order differs).
 *  forward    hz_gpu_paged_forward against hz_cpu_forward_paged on the same mixed batches
 *             (two prompt chunks, then two decode rows with a third prompt): logits of the
 *             rows asked, norm-wise relative error <= 1e-3 for F32 weights (argmax equal),
 *             3e-2 for Q4_0 (the GPU decode's bounds, tests/gpu/test-forward.c).
 *             Also on synthetic tiny-gemma3 / tiny-gemma2 (F32): rows past their 32-position
 *             window (the window layers' RoPE table, masked paged attention, soft-capping).
 *  batching   through HzServe (which must report serving on the GPU): 16 concurrent greedy
 *             sequences give the same tokens as the 16 run one after another. Exact in
 *             the row-invariant mode (HZ_GPU_SERVE_MV=0: every matrix through qmmq); in
 *             the default mode (batched matvec up to 8 rows, qmmq above: other rounding
 *             for the same row) at least 90 % of the tokens, the count printed.
 *  preemption a pool of 12 blocks for 10 sequences (interactive and background): the
 *             preempted ones (recomputed on resume) finish with the tokens of a large pool
 *             (row-invariant mode).
 *  fork       n_samples = 4 share the prompt's blocks (copy-on-write of the partial last
 *             block on the device): greedy, all 4 give the tokens of one request; seeded,
 *             they equal 4 separate requests with seeds seed .. seed + 3.
 */
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend-hip/forward-gpu-paged.h"
#include "cpu/attention-paged.h"
#include "cpu/forward-paged.h"
#include "hanzo/engine.h"
#include "hanzo/serving.h"
#include "hz-gpu.h"
#include "../engine/serving-test-util.h"
#include "hzk.h"
#include "kv-paged.h"
#include "model-private.h"
#include "../engine/synth-test-util.h"
#include <glib/gstdio.h>
#include "../hz-test-util.h"

static HzGpu *gpu;

/* ------------------------------------------------------------------ attention kernel */

static float
frand (GRand *r)
{
  return (float) g_rand_double_range (r, -1.0, 1.0);
}

static void
test_attention (void)
{
  enum { NH = 8, NKV = 2, HD = 64, S = 16, P = 40, NSEQ = 3, CTX = 128 };
  const int dk = NKV * HD, dv = NKV * HD, dq = NH * HD;
  const guint len[NSEQ] = { 37, 100, 5 };        /* positions 0..len-1 exist after the step */
  const guint first[NSEQ] = { 30, 99, 0 };       /* the step's rows: positions first..len-1 */
  g_autoptr (GRand) r = g_rand_new_with_seed (5);
  void *st = hz_gpu_stream (gpu);
  g_autoptr (GError) error = NULL;

  /* shuffled block ids, dealt to the sequences */
  int perm[P];
  for (int i = 0; i < P; i++)
    perm[i] = i;
  for (int i = P - 1; i > 0; i--)
    {
      const int j = g_rand_int_range (r, 0, i + 1), t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
  const int stride = CTX / S;
  int tables[NSEQ * CTX / S] = { 0 }, next = 0;
  for (int q = 0; q < NSEQ; q++)
    for (guint b = 0; b < (len[q] + S - 1) / S; b++)
      tables[q * stride + b] = perm[next++];
  g_assert_cmpint (next, <=, P);

  /* K/V of every position; the pool gets the positions before the step's rows, the rows'
   * own through hzk_paged_kv_store */
  float *K[NSEQ], *V[NSEQ];
  float *pk = g_new0 (float, (gsize) P * S * dk), *pv = g_new0 (float, (gsize) P * S * dv);
  guint n = 0;
  for (int q = 0; q < NSEQ; q++)
    {
      K[q] = g_new (float, (gsize) CTX * dk);
      V[q] = g_new (float, (gsize) CTX * dv);
      for (gsize i = 0; i < (gsize) CTX * dk; i++)
        K[q][i] = frand (r);
      for (gsize i = 0; i < (gsize) CTX * dv; i++)
        V[q][i] = frand (r);
      for (guint p = 0; p < first[q]; p++)
        {
          const gsize slot = (gsize) tables[q * stride + p / S] * S + p % S;
          memcpy (pk + slot * dk, K[q] + (gsize) p * dk, sizeof (float) * dk);
          memcpy (pv + slot * dv, V[q] + (gsize) p * dv, sizeof (float) * dv);
        }
      n += len[q] - first[q];
    }
  int *pos = g_new (int, n), *seq = g_new (int, n);
  float *krows = g_new (float, (gsize) n * dk), *vrows = g_new (float, (gsize) n * dv);
  float *qrows = g_new (float, (gsize) n * dq);
  for (guint t = 0, q = 0; q < NSEQ; q++)
    for (guint p = first[q]; p < len[q]; p++, t++)
      {
        pos[t] = (int) p;
        seq[t] = (int) q;
        memcpy (krows + (gsize) t * dk, K[q] + (gsize) p * dk, sizeof (float) * dk);
        memcpy (vrows + (gsize) t * dv, V[q] + (gsize) p * dv, sizeof (float) * dv);
      }
  for (gsize i = 0; i < (gsize) n * dq; i++)
    qrows[i] = frand (r);

  float *d_pk = hz_gpu_alloc (gpu, sizeof (float) * P * S * dk, &error);
  float *d_pv = hz_gpu_alloc (gpu, sizeof (float) * P * S * dv, &error);
  float *d_kr = hz_gpu_alloc (gpu, sizeof (float) * n * dk, &error);
  float *d_vr = hz_gpu_alloc (gpu, sizeof (float) * n * dv, &error);
  float *d_q = hz_gpu_alloc (gpu, sizeof (float) * n * dq, &error);
  float *d_out = hz_gpu_alloc (gpu, sizeof (float) * n * NH * HD, &error);
  float *d_part = hz_gpu_alloc (gpu, hzk_attn_paged_part_bytes (n, NH, HD, 32), &error);
  int *d_pos = hz_gpu_alloc (gpu, sizeof (int) * n, &error);
  int *d_seq = hz_gpu_alloc (gpu, sizeof (int) * n, &error);
  int *d_tab = hz_gpu_alloc (gpu, sizeof tables, &error);
  float *d_kc = hz_gpu_alloc (gpu, sizeof (float) * CTX * dk, &error);
  float *d_vc = hz_gpu_alloc (gpu, sizeof (float) * CTX * dv, &error);
  float *d_ref = hz_gpu_alloc (gpu, sizeof (float) * NH * HD, &error);
  float *d_cpart = hz_gpu_alloc (gpu, hzk_attn_part_bytes (NH, HD, 4), &error);
  int *d_p1 = hz_gpu_alloc (gpu, sizeof (int), &error);
  g_assert_no_error (error);
  g_assert_true (hz_gpu_upload (gpu, d_pk, pk, sizeof (float) * P * S * dk, &error)
                 && hz_gpu_upload (gpu, d_pv, pv, sizeof (float) * P * S * dv, &error)
                 && hz_gpu_upload (gpu, d_kr, krows, sizeof (float) * n * dk, &error)
                 && hz_gpu_upload (gpu, d_vr, vrows, sizeof (float) * n * dv, &error)
                 && hz_gpu_upload (gpu, d_q, qrows, sizeof (float) * n * dq, &error)
                 && hz_gpu_upload (gpu, d_pos, pos, sizeof (int) * n, &error)
                 && hz_gpu_upload (gpu, d_seq, seq, sizeof (int) * n, &error)
                 && hz_gpu_upload (gpu, d_tab, tables, sizeof tables, &error));
  g_assert_cmpint (hzk_paged_kv_store (d_kr, d_vr, dk, dv, d_pos, d_seq, d_tab, stride, S, (int) n,
                                       d_pk, d_pv, st), ==, 0);

  /* references per row: the contiguous GPU attention, and the CPU's through a host pool */
  const float scale = 1.0f / sqrtf ((float) HD);
  float *ref_gpu = g_new (float, (gsize) n * NH * HD), *ref_cpu = g_new (float, (gsize) n * NH * HD);
  HzKvPoolParams pp = { .block_size = S, .n_blocks = P, .n_layer = 1, .kv_dim_k = dk, .kv_dim_v = dv };
  g_autoptr (HzKvPool) hpool = hz_kv_pool_new (&pp, &error);
  g_assert_no_error (error);
  for (int q = 0; q < NSEQ; q++)
    for (guint p = 0; p < len[q]; p++)
      {
        const gint32 *tab = tables + q * stride;
        hz_cpu_kv_store_paged (hpool, 0, tab, p, K[q] + (gsize) p * dk, V[q] + (gsize) p * dv);
      }
  float scores[CTX];
  for (guint t = 0; t < n; t++)
    {
      const int q = seq[t];
      g_assert_true (hz_gpu_upload (gpu, d_kc, K[q], sizeof (float) * CTX * dk, &error)
                     && hz_gpu_upload (gpu, d_vc, V[q], sizeof (float) * CTX * dv, &error)
                     && hz_gpu_upload (gpu, d_p1, &pos[t], sizeof (int), &error));
      g_assert_cmpint (hzk_attn_decode (d_q + (gsize) t * dq, d_kc, d_vc, 0, d_p1, NH, NKV, HD, HD,
                                        scale, 4, d_cpart, d_ref, NULL, 0, NULL, st), ==, 0);
      g_assert_true (hz_gpu_download (gpu, ref_gpu + (gsize) t * NH * HD, d_ref,
                                      sizeof (float) * NH * HD, &error));
      for (int h = 0; h < NH; h++)
        hz_cpu_attn_head_paged (qrows + (gsize) t * dq + h * HD, hpool, 0,
                                (const gint32 *) tables + q * stride, h / (NH / NKV), pos[t] + 1,
                                HD, HD, scale, scores, ref_cpu + ((gsize) t * NH + h) * HD);
    }
  float *got = g_new (float, (gsize) n * NH * HD);
  const int splits[] = { 1, 3, 32 };
  for (gsize si = 0; si < G_N_ELEMENTS (splits); si++)
    {
      g_assert_cmpint (hzk_attn_paged (d_q, d_pk, d_pv, d_pos, d_seq, d_tab, stride, S, (int) n, NH,
                                       NKV, HD, HD, scale, splits[si], d_part, d_out, st), ==, 0);
      g_assert_true (hz_gpu_download (gpu, got, d_out, sizeof (float) * n * NH * HD, &error));
      double worst_g = 0, worst_c = 0;
      for (gsize i = 0; i < (gsize) n * NH * HD; i++)
        {
          worst_g = MAX (worst_g, fabs (got[i] - ref_gpu[i]) / (1 + fabs (ref_gpu[i])));
          worst_c = MAX (worst_c, fabs (got[i] - ref_cpu[i]) / (1 + fabs (ref_cpu[i])));
        }
      g_test_message ("n_split %d: %u rows, max diff vs contiguous GPU %.2e, vs CPU %.2e",
                      splits[si], n, worst_g, worst_c);
      g_assert_cmpfloat (worst_g, <=, 1e-5);
      g_assert_cmpfloat (worst_c, <=, 1e-5);
    }
  void *bufs[] = { d_pk, d_pv, d_kr, d_vr, d_q, d_out, d_part, d_pos, d_seq, d_tab, d_kc, d_vc,
                   d_ref, d_cpart, d_p1 };
  for (gsize i = 0; i < G_N_ELEMENTS (bufs); i++)
    hz_gpu_free (gpu, bufs[i]);
  for (int q = 0; q < NSEQ; q++)
    {
      g_free (K[q]);
      g_free (V[q]);
    }
  g_free (pk), g_free (pv), g_free (pos), g_free (seq), g_free (krows), g_free (vrows);
  g_free (qrows), g_free (ref_gpu), g_free (ref_cpu), g_free (got);
}

/* ------------------------------------------------------------------------ models */

static const char *const model_files[] = {
  "models/stories260K.gguf",
  "models/stories-distill/stories-distill-Q4_0.gguf",
};

static HzModel *
load_model (const char *rel)
{
  g_autofree char *path = hz_test_shared_path (rel);
  if (path == NULL)
    return NULL;
  g_autoptr (GError) error = NULL;
  HzModelParams mp;
  hz_model_params_init (&mp);
  mp.n_threads = 2;
  HzModel *m = hz_model_load (path, &mp, &error);
  g_assert_no_error (error);
  return m;
}

/* The rows of one step: chunks (sequence, first position, count), last row of each with
 * logits. Slots are reserved in both pools (same operations: same block ids). */
typedef struct {
  HzKvSeq *seq_g, *seq_c;
  HzToken *tokens;
} TSeq;

static void
step_both (HzGpuPaged *g, HzCpuForward *cf, const HzLlm *llm, HzKvPool *cpool, TSeq *seqs,
           const guint (*chunks)[3], guint n_chunks, double bound, gboolean same_argmax)
{
  g_autoptr (GError) error = NULL;
  GArray *tok = g_array_new (FALSE, FALSE, sizeof (int32_t));
  GArray *pos = g_array_new (FALSE, FALSE, sizeof (guint));
  GArray *tabs = g_array_new (FALSE, FALSE, sizeof (const gint32 *));
  GArray *tabs_c = g_array_new (FALSE, FALSE, sizeof (const gint32 *));
  GArray *outs = g_array_new (FALSE, FALSE, sizeof (guint));
  for (guint c = 0; c < n_chunks; c++)
    {
      TSeq *s = &seqs[chunks[c][0]];
      g_assert_true (hz_kv_seq_reserve (s->seq_g, chunks[c][2]));
      g_assert_true (hz_kv_seq_reserve (s->seq_c, chunks[c][2]));
      g_assert_cmpmem (s->seq_g->table->data, s->seq_g->table->len * 4, s->seq_c->table->data,
                       s->seq_c->table->len * 4);
    }
  for (guint c = 0; c < n_chunks; c++)
    {
      TSeq *s = &seqs[chunks[c][0]];
      const gint32 *tg = hz_kv_seq_table (s->seq_g), *tc = hz_kv_seq_table (s->seq_c);
      for (guint p = chunks[c][1]; p < chunks[c][1] + chunks[c][2]; p++)
        {
          g_array_append_val (tok, s->tokens[p]);
          g_array_append_val (pos, p);
          g_array_append_val (tabs, tg);
          g_array_append_val (tabs_c, tc);
        }
      const guint last = tok->len - 1;
      g_array_append_val (outs, last);
    }
  HzPagedRows rows = { (const int32_t *) (void *) tok->data, (const guint *) (void *) pos->data,
                       (const gint32 *const *) (void *) tabs->data, tok->len,
                       (const guint *) (void *) outs->data, outs->len, NULL };
  const gsize nv = llm->hp.n_vocab;
  float *lg = g_new (float, outs->len * nv), *lc = g_new (float, outs->len * nv);
  g_assert_true (hz_gpu_paged_forward (g, &rows, lg, &error));
  g_assert_no_error (error);
  rows.tables = (const gint32 *const *) (void *) tabs_c->data;
  g_assert_true (hz_cpu_forward_paged (cf, llm, cpool, &rows, lc, &error));
  g_assert_no_error (error);
  for (guint o = 0; o < outs->len; o++)
    {
      double num = 0, den = 0;
      gsize ag = 0, ac = 0;
      for (gsize i = 0; i < nv; i++)
        {
          const double d = lg[o * nv + i] - lc[o * nv + i];
          num += d * d;
          den += (double) lc[o * nv + i] * lc[o * nv + i];
          ag = lg[o * nv + i] > lg[o * nv + ag] ? i : ag;
          ac = lc[o * nv + i] > lc[o * nv + ac] ? i : ac;
        }
      const double rel = sqrt (num / MAX (den, 1e-30));
      g_test_message ("  row %u (of %u): relative logits error %.2e, argmax %zu / %zu",
                      g_array_index (outs, guint, o), tok->len, rel, ag, ac);
      g_assert_cmpfloat (rel, <=, bound);
      if (same_argmax)
        g_assert_cmpuint (ag, ==, ac);
    }
  g_free (lg);
  g_free (lc);
  g_array_unref (tok), g_array_unref (pos), g_array_unref (tabs), g_array_unref (tabs_c);
  g_array_unref (outs);
}

/* The mixed batches of test_forward on m: three sequences of n_tok prompt tokens, the
 * steps' chunks (sequence, first position, rows) of step1 / step2 / step3. */
static void
forward_steps (HzModel *m, gboolean is_f32, guint n_tok, const guint (*step1)[3], guint n1,
               const guint (*step2)[3], guint n2, const guint (*step3)[3], guint n3)
{
  const HzLlm *llm = hz_model_get_llm (m);
  const HzHparams *hp = &llm->hp;
  g_autoptr (GError) error = NULL;
  HzKvPoolParams pp = { .block_size = 16, .n_blocks = 32, .n_layer = 0,
                        .kv_dim_k = hp->n_head_kv * hp->head_dim_k,
                        .kv_dim_v = hp->n_head_kv * hp->head_dim_v };
  g_autoptr (HzKvPool) gpool = hz_kv_pool_new (&pp, &error);
  pp.n_layer = hp->n_layer;
  g_autoptr (HzKvPool) cpool = hz_kv_pool_new (&pp, &error);
  g_assert_no_error (error);
  HzGpuPaged *g = hz_gpu_paged_new (llm, gpool, 64, 256, &error);
  g_assert_no_error (error);
  HzCpuForward *cf = hz_cpu_forward_new (llm, 64, 64, 2, &error);
  g_assert_no_error (error);
  TSeq seqs[3];
  for (int i = 0; i < 3; i++)
    {
      seqs[i].seq_g = hz_kv_seq_new (gpool);
      seqs[i].seq_c = hz_kv_seq_new (cpool);
      seqs[i].tokens = make_prompt (m, 11 + i, n_tok);
    }
  const double bound = is_f32 ? 1e-3 : 3e-2;
  step_both (g, cf, llm, cpool, seqs, step1, n1, bound, is_f32);
  step_both (g, cf, llm, cpool, seqs, step2, n2, bound, is_f32);
  step_both (g, cf, llm, cpool, seqs, step3, n3, bound, is_f32);
  for (int i = 0; i < 3; i++)
    {
      hz_kv_seq_free (seqs[i].seq_g);
      hz_kv_seq_free (seqs[i].seq_c);
      g_free (seqs[i].tokens);
    }
  hz_gpu_paged_free (g);
  hz_cpu_forward_free (cf);
}

static void
test_forward (gconstpointer data)
{
  g_autoptr (HzModel) m = load_model (data);
  if (!m)
    return;
  /* (sequence, first position, rows) */
  const guint step1[][3] = { { 0, 0, 20 }, { 1, 0, 9 } };
  const guint step2[][3] = { { 0, 20, 1 }, { 1, 9, 1 }, { 2, 0, 5 } };
  const guint step3[][3] = { { 0, 21, 1 }, { 1, 10, 1 }, { 2, 5, 1 } };
  forward_steps (m, strstr (data, "Q4_0") == NULL, 40, step1, 2, step2, 3, step3, 3);
}

/* test_forward's check on a synthetic Gemma model (F32, the stories260K vocabulary): the
 * window layers (32 positions) through the GPU hook's window table and masked paged
 * attention, with rows past the window: a 45-token chunk, a 30-token chunk from position 9,
 * decode rows at 45, 46 and 39. */
static void
test_forward_gemma (gconstpointer shape)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = hz_test_synth_write ("paged-gemma", shape, NULL, HZ_TYPE_F32, 5, 2,
                                               &error);
  if (!path && !error)
    return;
  g_assert_no_error (error);
  g_autoptr (HzModel) m = hz_test_model_load (path, 2, &error);
  g_assert_no_error (error);
  const guint step1[][3] = { { 0, 0, 45 }, { 1, 0, 9 } };
  const guint step2[][3] = { { 0, 45, 1 }, { 1, 9, 30 }, { 2, 0, 5 } };
  const guint step3[][3] = { { 0, 46, 1 }, { 1, 39, 1 }, { 2, 5, 1 } };
  forward_steps (m, TRUE, 60, step1, 2, step2, 3, step3, 3);
  g_unlink (path);
}

/* ------------------------------------------------------------------ serving */

static gboolean saw_gpu_serving;

/* Every message (g_log's default handler ends here too) is checked for serving.c's. */
static GLogWriterOutput
log_writer (GLogLevelFlags level, const GLogField *fields, gsize n_fields, gpointer data)
{
  static const char prefix[] = "serving on the GPU";
  for (gsize i = 0; i < n_fields; i++)
    if (g_strcmp0 (fields[i].key, "MESSAGE") == 0
        && (fields[i].length < 0 ? strlen (fields[i].value) : (gsize) fields[i].length)
               >= sizeof prefix - 1
        && memcmp (fields[i].value, prefix, sizeof prefix - 1) == 0)
      saw_gpu_serving = TRUE;
  return g_log_writer_default (level, fields, n_fields, data);
}

static HzServe *
server (HzModel *m, guint n_blocks, guint budget)
{
  HzServeParams sp;
  hz_serve_params_init (&sp);
  sp.n_blocks = n_blocks;
  sp.prefix_cache = FALSE;
  sp.max_batch_tokens = budget;
  sp.max_seq_len = 256;
  g_autoptr (GError) error = NULL;
  saw_gpu_serving = FALSE;
  HzServe *srv = hz_serve_new (m, &sp, &error);
  g_assert_no_error (error);
  g_assert_true (saw_gpu_serving);   /* the GPU step, not the CPU fallback */
  return srv;
}

#define N_SEQ 16
#define N_GEN 32

/* 16 concurrent vs 16 sequential: returns the tokens that agree (of N_SEQ · N_GEN). */
static guint
batching_once (HzModel *m)
{
  guint64 ids_seq[N_SEQ], ids_conc[N_SEQ];
  Collect seq, conc;
  collect_init (&seq);
  collect_init (&conc);
  g_autoptr (HzServe) a = server (m, 0, 64);
  g_autoptr (HzServe) b = server (m, 0, 64);
  serve_alone_and_together (m, a, b, N_SEQ, N_GEN, &seq, ids_seq, &conc, ids_conc);
  HzServeStats st;
  hz_serve_get_stats (b, &st);
  g_assert_cmpuint (st.n_steps, <, N_SEQ * N_GEN);   /* sequences really shared steps */
  guint same = 0;
  for (guint i = 0; i < N_SEQ; i++)
    {
      GArray *x = got (&seq, ids_seq[i], 0), *y = got (&conc, ids_conc[i], 0);
      g_assert_cmpuint (x->len, ==, N_GEN);
      g_assert_cmpuint (y->len, ==, N_GEN);
      for (guint k = 0; k < N_GEN; k++)
        same += g_array_index (x, HzToken, k) == g_array_index (y, HzToken, k);
    }
  collect_clear (&seq);
  collect_clear (&conc);
  return same;
}

static void
test_batching (gconstpointer data)
{
  g_autoptr (HzModel) m = load_model (data);
  if (!m)
    return;
  g_setenv ("HZ_GPU_SERVE_MV", "0", TRUE);
  const guint exact = batching_once (m);
  g_unsetenv ("HZ_GPU_SERVE_MV");
  const guint dflt = batching_once (m);
  g_test_message ("16 concurrent vs 16 sequential, same tokens: %u/%u row-invariant, %u/%u default",
                  exact, N_SEQ * N_GEN, dflt, N_SEQ * N_GEN);
  g_assert_cmpuint (exact, ==, N_SEQ * N_GEN);
  g_assert_cmpuint (dflt * 10, >=, 9 * N_SEQ * N_GEN);
}

static void
test_preemption (gconstpointer data)
{
  g_autoptr (HzModel) m = load_model (data);
  if (!m)
    return;
  enum { N = 10 };
  g_setenv ("HZ_GPU_SERVE_MV", "0", TRUE);
  HzToken *prompts[N];
  guint64 ids_big[N], ids_small[N];
  Collect big, small;
  collect_init (&big);
  collect_init (&small);
  g_autoptr (HzServe) a = server (m, 0, 48);
  g_autoptr (HzServe) b = server (m, 12, 48);   /* 192 slots for 10 sequences of <= 87 */
  for (guint i = 0; i < N; i++)
    {
      const guint len = 10 + 3 * i;
      prompts[i] = make_prompt (m, 200 + i, len);
      const HzPriority pr = i % 3 == 0 ? HZ_PRIORITY_BACKGROUND : HZ_PRIORITY_INTERACTIVE;
      ids_big[i] = submit (a, prompts[i], len, 50, pr, &big);
      ids_small[i] = submit (b, prompts[i], len, 50, pr, &small);
    }
  run (a);
  run (b);
  HzServeStats sb;
  hz_serve_get_stats (b, &sb);
  guint preempted = 0;
  for (guint i = 0; i < N; i++)
    {
      GArray *x = got (&big, ids_big[i], 0), *y = got (&small, ids_small[i], 0);
      g_assert_cmpuint (x->len, ==, y->len);
      g_assert_cmpmem (x->data, x->len * sizeof (HzToken), y->data, y->len * sizeof (HzToken));
      preempted += result (&small, ids_small[i], 0)->n_preemptions > 0;
      g_free (prompts[i]);
    }
  g_test_message ("small pool: %" G_GUINT64_FORMAT " preemptions of %u sequences",
                  sb.n_preemptions, preempted);
  g_assert_cmpuint (preempted, >, 0);
  g_assert_cmpuint (sb.n_blocks_free, ==, 12);
  g_unsetenv ("HZ_GPU_SERVE_MV");
  collect_clear (&big);
  collect_clear (&small);
}

static void
test_fork (gconstpointer data)
{
  g_autoptr (HzModel) m = load_model (data);
  if (!m)
    return;
  g_setenv ("HZ_GPU_SERVE_MV", "0", TRUE);
  g_autofree HzToken *p = make_prompt (m, 400, 37);   /* 37: a partial last block */
  Collect c;
  collect_init (&c);
  g_autoptr (HzServe) srv = server (m, 0, 64);
  HzRequestParams rp;
  hz_request_params_init (&rp);
  rp.n_predict = 30;
  rp.ignore_eog = TRUE;
  rp.sampler.temperature = 0.9f;
  rp.sampler.seed = 42;
  rp.n_samples = 4;
  g_autoptr (GError) error = NULL;
  const guint64 group = hz_serve_submit (srv, p, 37, &rp, NULL, on_done, &c, &error);
  g_assert_no_error (error);
  run (srv);
  rp.n_samples = 1;
  guint distinct = 0;
  for (guint i = 0; i < 4; i++)
    {
      rp.sampler.seed = 42 + i;
      const guint64 one = hz_serve_submit (srv, p, 37, &rp, NULL, on_done, &c, &error);
      g_assert_no_error (error);
      run (srv);
      GArray *x = got (&c, group, i), *y = got (&c, one, 0);
      g_assert_cmpuint (x->len, ==, y->len);
      for (guint k = 0; k < x->len; k++)
        if (g_array_index (x, HzToken, k) != g_array_index (y, HzToken, k))
          {
            g_test_message ("sample %u differs from its own request at token %u", i, k);
            break;
          }
      g_assert_cmpmem (x->data, x->len * sizeof (HzToken), y->data, y->len * sizeof (HzToken));
      distinct += i > 0 && memcmp (x->data, got (&c, group, 0)->data, x->len * sizeof (HzToken));
    }
  g_assert_cmpuint (distinct, >, 0);
  g_unsetenv ("HZ_GPU_SERVE_MV");
  collect_clear (&c);
}

/* greedy: the 4 samples (3 of them copied-on-write) all give the single request's tokens */
static void
test_fork_greedy (gconstpointer data)
{
  g_autoptr (HzModel) m = load_model (data);
  if (!m)
    return;
  g_setenv ("HZ_GPU_SERVE_MV", "0", TRUE);
  g_autofree HzToken *p = make_prompt (m, 400, 37);
  Collect c;
  collect_init (&c);
  g_autoptr (HzServe) srv = server (m, 0, 64);
  HzRequestParams rp;
  hz_request_params_init (&rp);
  rp.n_predict = 30;
  rp.ignore_eog = TRUE;
  g_autoptr (GError) error = NULL;
  rp.sampler.temperature = 0.0f;
  rp.n_samples = 4;
  const guint64 g4 = hz_serve_submit (srv, p, 37, &rp, NULL, on_done, &c, &error);
  rp.n_samples = 1;
  const guint64 g1 = hz_serve_submit (srv, p, 37, &rp, NULL, on_done, &c, &error);
  g_assert_no_error (error);
  run (srv);
  for (guint i = 0; i < 4; i++)
    {
      GArray *x = got (&c, g4, i), *y = got (&c, g1, 0);
      g_assert_cmpuint (x->len, ==, y->len);
      g_assert_cmpmem (x->data, x->len * sizeof (HzToken), y->data, y->len * sizeof (HzToken));
    }
  g_unsetenv ("HZ_GPU_SERVE_MV");
  collect_clear (&c);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_autoptr (GError) error = NULL;
  gpu = hz_gpu_open (0, &error);
  if (!gpu)
    {
      g_print ("1..0 # SKIP no GPU: %s\n", error->message);
      return 77;
    }
  g_log_set_writer_func (log_writer, NULL, NULL);
  g_test_add_func ("/gpu/paged/attention", test_attention);
  for (gsize i = 0; i < G_N_ELEMENTS (model_files); i++)
    {
      const char *base = strrchr (model_files[i], '/') + 1;
      g_autofree char *a = g_strdup_printf ("/gpu/paged/forward/%s", base);
      g_autofree char *b = g_strdup_printf ("/gpu/paged/batching/%s", base);
      g_test_add_data_func (a, model_files[i], test_forward);
      g_test_add_data_func (b, model_files[i], test_batching);
    }
  g_test_add_data_func ("/gpu/paged/forward/tiny-gemma3", "tiny-gemma3", test_forward_gemma);
  g_test_add_data_func ("/gpu/paged/forward/tiny-gemma2", "tiny-gemma2", test_forward_gemma);
  g_test_add_data_func ("/gpu/paged/preemption", model_files[0], test_preemption);
  g_test_add_data_func ("/gpu/paged/fork-greedy", model_files[0], test_fork_greedy);
  g_test_add_data_func ("/gpu/paged/fork", model_files[0], test_fork);
  const int rc = g_test_run ();
  hz_gpu_close (gpu);
  return rc;
}
