/* tests/gpu/test-ops.c — the decode-step ops of kernels/decode.hip and the embedding
 * lookup against their CPU twins (engine/cpu/ops.c, attention.c, the format table's
 * to_float) on fresh random inputs. Errors are norm-wise, ||gpu − cpu|| / ||cpu||;
 * thresholds per op and dtype:
 *
 *   rms_norm (+ residual add + bias)  x after the add: exact (same fp32 operations);
 *                                     y 1e-6 (fp32 sum of squares in another order);
 *                                     its int8 quantization dequantized vs y 1e-2
 *   qkv_rope (bias, q/k norm, NORM / NEOX RoPE, cache append)
 *                                     q, k, v 1e-6 with an fp32 cache, 1e-3 with fp16
 *   attention (split-K flash decode, GQA, n_split 1, 5, 32, positions 0 .. 700)
 *                                     1e-5 (fp32 and fp16 caches: the CPU reads the same
 *                                     fp16-rounded values), online vs two-pass softmax;
 *                                     its fused int8 quantization vs the output 1e-2
 *   swiglu                            1e-6 (expf vs ggml's polynomial exp)
 *   embedding (every format with a decoder and one fallback format)
 *                                     1e-6 (the decoders' d·q + m in one rounding)
 *   int8 activations in the CPU's Q8_0 / Q8_1 / Q8_K schemes (fused into rms_norm,
 *   swiglu; standalone)               q and d bit-exact with the CPU quantizer on the same
 *                                     input (Q8_1's sum term too)
 *   argmax                            exact, ties to the lowest index
 *   position counter / token history  exact
 *   prefill attention (causal, batch of 1..512 tokens from position 0..700, GQA, fp32 and
 *                     fp16 caches, head dims 8..256) vs the CPU head per token:
 *                     tensor-core kernel (NVIDIA sm_80+, head dims 32, 64, 128; fp16
 *                     operands with fp32 accumulation, both cache dtypes) 3e-3 (measured
 *                     on the H200: docs/PERFORMANCE.md "GPU prefill attention");
 *                     fp32 kernel (HZ_GPU_ATTN=fp32, AMD, other head dims) 1e-5;
 *                     its int8 rows (fused or not) bit-identical to the standalone quantizer
 *   Gemma: geglu rows (the CPU's fp16 GELU table) bit-identical to hz_cpu_geglu; softcap
 *                     1e-6; prefill and decode attention under a sliding window and/or
 *                     soft-capping (HzkAttnMask) vs the CPU head over the window 1e-5
 *   row-batched rms_norm / swiglu_rows (+ int8 rows) and qkv_rope over several tokens vs
 *                     one-row calls: bit-identical
 *   sampling (hzk_sample): 20000 draws per parameter set (top-k, top-p, min-p,
 *                     temperature, a tie at the top, NaN and −inf logits): Pearson's χ²
 *                     of the device's histogram and of the CPU sampler's (hz_sampler_sample
 *                     with the same parameters) against the probabilities of the CPU
 *                     sampler's definition, each below df + 6·sqrt(2·df); no draw outside
 *                     the support; top-k 1 and temperature 0 exact (the lowest id of the
 *                     tied maximum); the same seed gives the same draws
 * TAP output; exit 77 (skip) without a GPU.
 */
#include "cpu/attention.h"
#include "cpu/ops.h"
#include "gpu-test-util.h"
#include "hz-gpu.h"
#include "hzk.h"
#include "hanzo/engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static GtuTap tap;
static HzGpu *gpu;
static GRand *rng;

static double
rel_err (const float *a, const float *ref, int64_t n)
{
  double se = 0, sr = 0;
  for (int64_t i = 0; i < n; i++)
    {
      se += ((double) a[i] - ref[i]) * ((double) a[i] - ref[i]);
      sr += (double) ref[i] * ref[i];
    }
  const double e = sqrt (se / (sr > 0 ? sr : 1));
  return isfinite (e) ? e : INFINITY;
}

#define CHECK(call) g_assert_cmpint ((call), ==, 0)

/* ---- rms_norm ------------------------------------------------------------------------ */
static void
test_rms_norm (int64_t n, gboolean with_add)
{
  void *st = hz_gpu_stream (gpu);
  const float eps = 1e-5f;
  float *x = gtu_randn (rng, n, 1.0), *a = gtu_randn (rng, n, 0.5), *b = gtu_randn (rng, n, 0.1), *w = gtu_randn (rng, n, 1.0);
  float *xd = gtu_up (gpu, x, 4 * n), *ad = gtu_up (gpu, a, 4 * n), *bd = gtu_up (gpu, b, 4 * n), *wd = gtu_up (gpu, w, 4 * n);
  float *yd = gtu_up (gpu, NULL, 4 * n);
  void *act = gtu_up (gpu, NULL, hzk_act_bytes (n, 1));
  CHECK (hzk_rms_norm (xd, with_add ? ad : NULL, with_add ? bd : NULL, wd, n, 1, eps, yd, act,
                       HZK_ACT_F32, st));
  float *xg = g_new (float, n), *yg = g_new (float, n), *yc = g_new (float, n);
  int8_t *aq = g_new (int8_t, n);
  float *am = g_new (float, n / 8), *deq = g_new (float, n);
  gtu_down (gpu, xg, xd, 4 * n);
  gtu_down (gpu, yg, yd, 4 * n);
  gtu_down (gpu, aq, hzk_act_q (act, n, 1), n);
  gtu_down (gpu, am, hzk_act_m (act, n, 1), 4 * (n / 8));
  if (with_add)
    for (int64_t i = 0; i < n; i++)
      x[i] += a[i] + b[i];
  hz_cpu_rms_norm_to (yc, x, w, n, eps);
  for (int64_t i = 0; i < n; i++)
    deq[i] = am[2 * (i / 16)] * aq[i];
  const gboolean x_exact = memcmp (xg, x, 4 * n) == 0;
  const double ey = rel_err (yg, yc, n), eq = rel_err (deq, yc, n);
  gtu_report (&tap, x_exact && ey <= 1e-6 && eq <= 1e-2,
          "rms_norm n=%" G_GINT64_FORMAT "%s: x %s, y %.2e (< 1e-6), int8 %.2e (< 1e-2)", n,
          with_add ? " +add+bias" : "", x_exact ? "exact" : "DIFFERS", ey, eq);
  void *bufs[] = { xd, ad, bd, wd, yd, act };
  for (size_t i = 0; i < G_N_ELEMENTS (bufs); i++)
    hz_gpu_free (gpu, bufs[i]);
  g_free (x), g_free (a), g_free (b), g_free (w), g_free (xg), g_free (yg), g_free (yc);
  g_free (aq), g_free (am), g_free (deq);
}

/* ---- qkv + RoPE + cache -------------------------------------------------------------- */
static void
test_rope (HzRopeMode mode, gboolean bias, gboolean norm, gboolean f16)
{
  void *st = hz_gpu_stream (gpu);
  const int nh = 32, nkv = 8, hd = 128, n_ctx = 64, pos = 37;
  HzHparams hp = { 0 };
  hp.n_rot = hd;
  hp.rope_mode = mode;
  hp.rope_freq_base = 10000.0f;
  hp.rope_freq_scale = 1.0f;
  hp.rope_n_ctx_orig = 4096;
  hp.yarn_attn_factor = 1.0f;
  hp.yarn_beta_fast = 32.0f;
  hp.yarn_beta_slow = 1.0f;
  HzRope rope;
  hz_cpu_rope_init (&rope, &hp, NULL);
  float *cs = g_new (float, n_ctx * hd);
  for (int p = 0; p < n_ctx; p++)
    hz_cpu_rope_cache (&rope, p, cs + p * hd);
  const int64_t dq = nh * hd, dk = nkv * hd, dv = nkv * hd, nt = dq + dk + dv;
  float *qkv = gtu_randn (rng, nt, 1.0), *b = gtu_randn (rng, nt, 0.1), *qn = gtu_randn (rng, hd, 1.0), *kn = gtu_randn (rng, hd, 1.0);
  float *qkvd = gtu_up (gpu, qkv, 4 * nt), *bd = gtu_up (gpu, b, 4 * nt), *qnd = gtu_up (gpu, qn, 4 * hd), *knd = gtu_up (gpu, kn, 4 * hd);
  float *csd = gtu_up (gpu, cs, 4 * n_ctx * hd), *qd = gtu_up (gpu, NULL, 4 * dq);
  const size_t el = f16 ? 2 : 4;
  void *kc = gtu_up (gpu, NULL, el * n_ctx * dk), *vc = gtu_up (gpu, NULL, el * n_ctx * dv);
  int *posd = gtu_up (gpu, &pos, sizeof pos);
  CHECK (hzk_qkv_rope (qkvd, bias ? bd : NULL, norm ? qnd : NULL, norm ? knd : NULL, 1e-6f, csd,
                       posd, 1, nh, nkv, hd, hd, hd, mode == HZ_ROPE_NEOX, qd, kc, vc, f16, st));
  /* CPU twin */
  if (bias)
    for (int64_t i = 0; i < nt; i++)
      qkv[i] += b[i];
  if (norm)
    {
      for (int h = 0; h < nh + nkv; h++)
        hz_cpu_rms_norm (qkv + h * hd, h < nh ? qn : kn, hd, 1e-6f);
    }
  hz_cpu_rope_apply (&rope, cs + pos * hd, qkv, nh, hd);
  hz_cpu_rope_apply (&rope, cs + pos * hd, qkv + dq, nkv, hd);
  float *qg = g_new (float, dq), *kg = g_new (float, dk), *vg = g_new (float, dv);
  gtu_down (gpu, qg, qd, 4 * dq);
  uint8_t *raw = g_malloc (el * dk);
  gtu_down (gpu, raw, (uint8_t *) kc + el * pos * dk, el * dk);
  for (int64_t i = 0; i < dk; i++)
    kg[i] = f16 ? hz_fp16_to_fp32 (((uint16_t *) raw)[i]) : ((float *) raw)[i];
  gtu_down (gpu, raw, (uint8_t *) vc + el * pos * dv, el * dv);
  for (int64_t i = 0; i < dv; i++)
    vg[i] = f16 ? hz_fp16_to_fp32 (((uint16_t *) raw)[i]) : ((float *) raw)[i];
  const double eq = rel_err (qg, qkv, dq), ek = rel_err (kg, qkv + dq, dk),
               ev = rel_err (vg, qkv + dq + dk, dv), tol = f16 ? 1e-3 : 1e-6;
  gtu_report (&tap, eq <= 1e-6 && ek <= tol && ev <= tol,
          "qkv_rope %s%s%s kv %s: q %.2e k %.2e v %.2e (< %.0e)", mode == HZ_ROPE_NEOX ? "neox" : "norm",
          bias ? " +bias" : "", norm ? " +qk_norm" : "", f16 ? "f16" : "f32", eq, ek, ev, tol);
  void *bufs[] = { qkvd, bd, qnd, knd, csd, qd, kc, vc, posd };
  for (size_t i = 0; i < G_N_ELEMENTS (bufs); i++)
    hz_gpu_free (gpu, bufs[i]);
  g_free (cs), g_free (qkv), g_free (b), g_free (qn), g_free (kn), g_free (qg), g_free (kg);
  g_free (vg), g_free (raw);
}

/* ---- attention ------------------------------------------------------------------------ */
/* KV head kvh of the n value rows v [n][dk] transposed, as ggml's V cache: vt[e·n + j]. */
static void
v_transposed (const float *v, int64_t dk, int kvh, int hd, int n, float *vt)
{
  for (int e = 0; e < hd; e++)
    for (int j = 0; j < n; j++)
      vt[(gsize) e * n + j] = v[(gsize) j * dk + kvh * hd + e];
}

static void
test_attention (int nh, int nkv, int hd, int pos, int n_split, gboolean f16)
{
  void *st = hz_gpu_stream (gpu);
  const int n_ctx = pos + 9;
  const int64_t dk = (int64_t) nkv * hd, dq = (int64_t) nh * hd;
  float *k = gtu_randn (rng, n_ctx * dk, 1.0), *v = gtu_randn (rng, n_ctx * dk, 1.0), *q = gtu_randn (rng, dq, 0.3);
  const size_t el = f16 ? 2 : 4;
  uint16_t *kh = NULL, *vh = NULL;
  if (f16)
    {
      kh = g_new (uint16_t, n_ctx * dk);
      vh = g_new (uint16_t, n_ctx * dk);
      for (int64_t i = 0; i < n_ctx * dk; i++)
        {
          kh[i] = hz_fp32_to_fp16 (k[i]);
          vh[i] = hz_fp32_to_fp16 (v[i]);
          k[i] = hz_fp16_to_fp32 (kh[i]);
          v[i] = hz_fp16_to_fp32 (vh[i]);
        }
    }
  void *kd = gtu_up (gpu, f16 ? (void *) kh : (void *) k, el * n_ctx * dk);
  void *vd = gtu_up (gpu, f16 ? (void *) vh : (void *) v, el * n_ctx * dk);
  float *qd = gtu_up (gpu, q, 4 * dq), *od = gtu_up (gpu, NULL, 4 * dq);
  float *part = gtu_up (gpu, NULL, hzk_attn_part_bytes (nh, hd, n_split));
  int *posd = gtu_up (gpu, &pos, sizeof pos);
  const float scale = 1.0f / sqrtf ((float) hd);
  void *act = hd % 32 == 0 ? gtu_up (gpu, NULL, hzk_act_bytes (dq, 1)) : NULL;
  CHECK (hzk_attn_decode (qd, kd, vd, f16, posd, nh, nkv, hd, hd, scale, n_split, part, od, act,
                          HZK_ACT_F32, NULL, st));
  float *og = g_new (float, dq), *oc = g_new (float, dq);
  gtu_down (gpu, og, od, 4 * dq);
  {
    /* the fused merge (each head's last split block merges): the same bytes, counters back
     * at 0; run twice so that a counter left over would show */
    int *zero = g_new0 (int, nh), *cnt_h = g_new (int, nh);
    int *cnt = gtu_up (gpu, zero, sizeof (int) * nh);
    void *act2 = act ? gtu_up (gpu, NULL, hzk_act_bytes (dq, 1)) : NULL;
    float *od2 = gtu_up (gpu, NULL, 4 * dq), *og2 = g_new (float, dq);
    gboolean same = TRUE;
    for (int r = 0; r < 2; r++)
      {
        CHECK (hzk_attn_decode (qd, kd, vd, f16, posd, nh, nkv, hd, hd, scale, n_split, part,
                                od2, act2, HZK_ACT_F32, cnt, st));
        gtu_down (gpu, og2, od2, 4 * dq);
        gtu_down (gpu, cnt_h, cnt, sizeof (int) * nh);
        same = same && memcmp (og, og2, 4 * dq) == 0 && memcmp (zero, cnt_h, sizeof (int) * nh) == 0;
        if (act)
          {
            int8_t *q1 = g_new (int8_t, dq), *q2 = g_new (int8_t, dq);
            gtu_down (gpu, q1, hzk_act_q (act, dq, 1), dq);
            gtu_down (gpu, q2, hzk_act_q (act2, dq, 1), dq);
            same = same && memcmp (q1, q2, dq) == 0;
            g_free (q1), g_free (q2);
          }
      }
    gtu_report (&tap, same, "attention %d/%d heads, d %d, pos %d, %d splits: fused merge identical",
                nh, nkv, hd, pos, n_split);
    hz_gpu_free (gpu, cnt), hz_gpu_free (gpu, od2);
    if (act2)
      hz_gpu_free (gpu, act2);
    g_free (zero), g_free (cnt_h), g_free (og2);
  }
  double eq = 0;             /* the fused int8 quantization of the output, dequantized */
  if (act)
    {
      int8_t *aq = g_new (int8_t, dq);
      float *am = g_new (float, dq / 8), *deq = g_new (float, dq);
      gtu_down (gpu, aq, hzk_act_q (act, dq, 1), dq);
      gtu_down (gpu, am, hzk_act_m (act, dq, 1), 4 * (dq / 8));
      for (int64_t i = 0; i < dq; i++)
        deq[i] = am[2 * (i / 16)] * aq[i];
      eq = rel_err (deq, og, dq);
      g_free (aq), g_free (am), g_free (deq);
      hz_gpu_free (gpu, act);
    }
  /* CPU: V transposed per KV head, as ggml's cache */
  const int n_kv = pos + 1;
  float *vt = g_new (float, (gsize) hd * n_kv), *scores = g_new (float, n_kv);
  for (int h = 0; h < nh; h++)
    {
      const int kvh = h / (nh / nkv);
      v_transposed (v, dk, kvh, hd, n_kv, vt);
      hz_cpu_attn_head (q + (gsize) h * hd, k + kvh * hd, dk, vt, n_kv, n_kv, n_kv, hd, hd, scale,
                        FALSE, scores, oc + (gsize) h * hd);
    }
  const double e = rel_err (og, oc, dq);
  gtu_report (&tap, e <= 1e-5 && eq <= 1e-2,
          "attention %d/%d heads, d %d, pos %d, %d splits, kv %s: %.2e (< 1e-5), int8 %.2e (< 1e-2)",
          nh, nkv, hd, pos, n_split, f16 ? "f16" : "f32", e, eq);
  void *bufs[] = { kd, vd, qd, od, part, posd };
  for (size_t i = 0; i < G_N_ELEMENTS (bufs); i++)
    hz_gpu_free (gpu, bufs[i]);
  g_free (k), g_free (v), g_free (q), g_free (kh), g_free (vh), g_free (og), g_free (oc);
  g_free (vt), g_free (scores);
}

/* ---- swiglu --------------------------------------------------------------------------- */
static void
test_swiglu (int64_t n)
{
  void *st = hz_gpu_stream (gpu);
  float *g = gtu_randn (rng, n, 2.0), *u = gtu_randn (rng, n, 1.0);
  float *gd = gtu_up (gpu, g, 4 * n), *ud = gtu_up (gpu, u, 4 * n), *od = gtu_up (gpu, NULL, 4 * n);
  void *act = gtu_up (gpu, NULL, hzk_act_bytes (n, 1));
  CHECK (hzk_swiglu (gd, ud, n, od, n % 32 ? NULL : act, HZK_ACT_F32, st));
  float *og = g_new (float, n);
  gtu_down (gpu, og, od, 4 * n);
  hz_cpu_swiglu (g, u, n);
  const double e = rel_err (og, g, n);
  gtu_report (&tap, e <= 1e-6, "swiglu n=%" G_GINT64_FORMAT ": %.2e (< 1e-6)", n, e);
  hz_gpu_free (gpu, gd), hz_gpu_free (gpu, ud), hz_gpu_free (gpu, od), hz_gpu_free (gpu, act);
  g_free (g), g_free (u), g_free (og);
}

/* ---- embedding ------------------------------------------------------------------------ */
static void
test_embed (const HzQuantTraits *qt)
{
  GError *error = NULL;
  const int64_t rows = 97, k = 4096;
  uint8_t *pool = gtu_block_pool (qt, rng);
  uint8_t *w = gtu_matrix (qt, pool, rows, k);
  HzGpuTensor *t = hz_gpu_tensor_upload (gpu, qt->type, rows, k, w, &error);
  g_assert_no_error (error);
  const gboolean fallback = hz_gpu_tensor_device_type (t) != qt->type;
  /* four rows in one call (the prefill's batched lookup) */
  const int rs[] = { 0, 1, 50, 96 }, nr = G_N_ELEMENTS (rs);
  float *od = gtu_up (gpu, NULL, 4 * nr * k), *og = g_new (float, nr * k), *oc = g_new (float, k);
  int *rd = gtu_up (gpu, rs, sizeof rs);
  double worst = 0;
  g_assert_true (hz_gpu_embed (gpu, t, rd, nr, od, &error));
  gtu_down (gpu, og, od, 4 * nr * k);
  for (int i = 0; i < nr; i++)
    {
      qt->to_float (w + (size_t) rs[i] * hz_quant_row_size (qt->type, k), oc, k);
      if (fallback)
        for (int64_t j = 0; j < k; j++)
          oc[j] = hz_fp16_to_fp32 (hz_fp32_to_fp16 (oc[j]));
      worst = MAX (worst, rel_err (og + (size_t) i * k, oc, k));
    }
  hz_gpu_free (gpu, rd);
  gtu_report (&tap, worst <= 1e-6, "embedding %-7s %s: %.2e (< 1e-6)", qt->name,
          fallback ? "f16 fallback" : "native", worst);
  hz_gpu_tensor_free (t);
  hz_gpu_free (gpu, od);
  g_free (og), g_free (oc), g_free (w), g_free (pool);
}

/* ---- activation quantization as the CPU's Q8_0 / Q8_1 / Q8_K ---------------------------
 * The GPU's output y (fp32) quantized by the fused op in mode m must equal the CPU's
 * activation quantizer (hz_quant_act_from_float of Q8_0/Q8_1, Q8_K) run on the same y:
 * every q and every scale bit-exact. Through rms_norm (1024-thread block), swiglu
 * (256-thread blocks), the attention merge (per head) and the standalone quantizer. */
static gboolean
act_matches (const void *act, const float *y, int64_t n, int mode, int *bad)
{
  int8_t *aq = g_new (int8_t, n);
  float *am = g_new (float, n / 8);
  gtu_down (gpu, aq, hzk_act_q (act, n, 1), n);
  gtu_down (gpu, am, hzk_act_m (act, n, 1), 4 * (n / 8));
  const uint32_t t = mode == HZK_ACT_Q8_0 ? HZ_TYPE_Q8_0 : mode == HZK_ACT_Q8_1 ? HZ_TYPE_Q8_1 : HZ_TYPE_Q8_K;
  uint8_t *ref = g_malloc (hz_quant_row_size (t, n));
  hz_quant_act_from_float (t) (y, ref, n);
  *bad = 0;
  const HzQuantTraits *qt = hz_quant_traits (t);
  for (int64_t b = 0; b < n / qt->block_elems; b++)
    {
      const uint8_t *blk = ref + (size_t) b * qt->block_bytes;
      const int be = qt->block_elems;
      float d, s = 0;
      const int8_t *qs;
      if (t == HZ_TYPE_Q8_K)
        {
          memcpy (&d, blk, 4);
          qs = (const int8_t *) blk + 4;
        }
      else
        {
          uint16_t h;
          memcpy (&h, blk, 2);
          d = hz_fp16_to_fp32 (h);
          if (t == HZ_TYPE_Q8_1)
            {
              memcpy (&h, blk + 2, 2);
              s = hz_fp16_to_fp32 (h);
            }
          qs = (const int8_t *) blk + (t == HZ_TYPE_Q8_1 ? 4 : 2);
        }
      for (int j = 0; j < be; j++)
        *bad += aq[b * be + j] != qs[j];
      for (int g = 0; g < be / 16; g++)
        *bad += am[2 * (b * be / 16 + g)] != d;
      if (t == HZ_TYPE_Q8_1)      /* ggml's s of the 32 in the first half, 0 in the second */
        *bad += am[2 * (b * 2) + 1] != s || am[2 * (b * 2 + 1) + 1] != 0.0f;
    }
  g_free (aq), g_free (am), g_free (ref);
  return *bad == 0;
}

static void
test_act_modes (void)
{
  void *st = hz_gpu_stream (gpu);
  const int64_t n = 4096;
  const int modes[] = { HZK_ACT_Q8_0, HZK_ACT_Q8_1, HZK_ACT_Q8_K };
  const char *names[] = { "q8_0", "q8_1", "q8_K" };
  float *x = gtu_randn (rng, n, 1.0), *w = gtu_randn (rng, n, 1.0), *u = gtu_randn (rng, n, 1.0), *y = g_new (float, n);
  float *xd = gtu_up (gpu, x, 4 * n), *wd = gtu_up (gpu, w, 4 * n), *ud = gtu_up (gpu, u, 4 * n), *yd = gtu_up (gpu, NULL, 4 * n);
  void *act = gtu_up (gpu, NULL, hzk_act_bytes (n, 1));
  for (size_t m = 0; m < G_N_ELEMENTS (modes); m++)
    {
      int bad = 0;
      CHECK (hzk_rms_norm (xd, NULL, NULL, wd, n, 1, 1e-5f, yd, act, modes[m], st));
      gtu_down (gpu, y, yd, 4 * n);
      gboolean ok = act_matches (act, y, n, modes[m], &bad);
      gtu_report (&tap, ok, "rms_norm int8 as the CPU's %s: %d mismatches", names[m], bad);
      CHECK (hzk_swiglu (xd, ud, n, yd, act, modes[m], st));
      gtu_down (gpu, y, yd, 4 * n);
      ok = act_matches (act, y, n, modes[m], &bad);
      gtu_report (&tap, ok, "swiglu int8 as the CPU's %s: %d mismatches", names[m], bad);
      CHECK (hzk_quantize_act_mode (xd, n, modes[m], act, st));
      ok = act_matches (act, x, n, modes[m], &bad);
      gtu_report (&tap, ok, "quantize_act_mode as the CPU's %s: %d mismatches", names[m], bad);
    }
  hz_gpu_free (gpu, xd), hz_gpu_free (gpu, wd), hz_gpu_free (gpu, ud), hz_gpu_free (gpu, yd);
  hz_gpu_free (gpu, act);
  g_free (x), g_free (w), g_free (u), g_free (y);
}

/* ---- argmax and the position counter ------------------------------------------------- */
static void
test_argmax (void)
{
  void *st = hz_gpu_stream (gpu);
  const int64_t n = 32000;
  float *x = gtu_randn (rng, n, 1.0);
  x[12345] = 100.0f;
  x[23456] = 100.0f;             /* tie: the lower index wins */
  x[777] = NAN;
  float *xd = gtu_up (gpu, x, 4 * n);
  int got = -1, pos = 5, tok = 0;
  int *od = gtu_up (gpu, &got, sizeof got), *pd = gtu_up (gpu, &pos, sizeof pos);
  int *hist = gtu_up (gpu, NULL, sizeof (int) * 16);
  CHECK (hzk_argmax (xd, n, od, st));
  CHECK (hzk_pos_add (pd, 1, od, hist, st));
  int h[16];
  gtu_down (gpu, &got, od, sizeof got);
  gtu_down (gpu, &pos, pd, sizeof pos);
  gtu_down (gpu, h, hist, sizeof h);
  gtu_report (&tap, got == 12345, "argmax with a tie and a NaN: %d (expected 12345)", got);
  gtu_report (&tap, pos == 6 && h[6] == 12345, "position counter: pos %d (6), history[6] %d (12345)", pos, h[6]);
  (void) tok;
  hz_gpu_free (gpu, xd), hz_gpu_free (gpu, od), hz_gpu_free (gpu, pd), hz_gpu_free (gpu, hist);
  g_free (x);
}

/* ---- prefill: causal attention of a batch, ops on several rows -------------------------- */
/* One hzk_attn_prefill call with int8 rows in `mode`; og = its output. The int8 rows must
 * be the bytes of the standalone quantizer (hzk_quantize_act_mode) run on og. */
static gboolean
attn_prefill_run (const float *qd, const void *kd, const void *vd, gboolean f16, const int *posd,
                  int n_tok, int nh, int nkv, int hd, float scale, int mode, float *og)
{
  void *st = hz_gpu_stream (gpu);
  const int64_t n = (int64_t) n_tok * nh * hd;
  const size_t ab = hzk_act_bytes (n, 1);
  float *od = gtu_up (gpu, NULL, 4 * n);
  void *act = gtu_up (gpu, NULL, ab), *act2 = gtu_up (gpu, NULL, ab);
  CHECK (hzk_attn_prefill (qd, kd, vd, f16, posd, n_tok, nh, nkv, hd, hd, scale, od, act, mode,
                           1, st));
  CHECK (hzk_quantize_act_mode (od, n, mode, act2, st));
  uint8_t *a1 = g_malloc (ab), *a2 = g_malloc (ab);
  gtu_down (gpu, og, od, 4 * n);
  gtu_down (gpu, a1, act, ab);
  gtu_down (gpu, a2, act2, ab);
  const gboolean same = memcmp (a1, a2, ab) == 0;
  hz_gpu_free (gpu, od), hz_gpu_free (gpu, act), hz_gpu_free (gpu, act2);
  g_free (a1), g_free (a2);
  return same;
}

/* Causal attention of n_tok tokens from position pos0 against the CPU head per token, on
 * both kernels: the default one (tensor cores on NVIDIA sm_80+ for head dims 32, 64, 128:
 * fp16 operands, bound 3e-3; else the fp32 kernel, 1e-5) and the fp32 fallback forced by
 * HZ_GPU_ATTN=fp32 (1e-5). The int8 rows (Q8_0 or F32 scales) must equal the standalone
 * quantizer's bytes on the same output. */
static void
test_attention_prefill (int nh, int nkv, int hd, int pos0, int n_tok, gboolean f16)
{
  const int n_ctx = pos0 + n_tok + 3;
  const int64_t dk = (int64_t) nkv * hd, dq = (int64_t) nh * hd;
  float *k = gtu_randn (rng, n_ctx * dk, 1.0), *v = gtu_randn (rng, n_ctx * dk, 1.0), *q = gtu_randn (rng, n_tok * dq, 0.3);
  const size_t el = f16 ? 2 : 4;
  uint16_t *kh = NULL, *vh = NULL;
  if (f16)
    {
      kh = g_new (uint16_t, n_ctx * dk);
      vh = g_new (uint16_t, n_ctx * dk);
      for (int64_t i = 0; i < n_ctx * dk; i++)
        {
          kh[i] = hz_fp32_to_fp16 (k[i]);
          vh[i] = hz_fp32_to_fp16 (v[i]);
          k[i] = hz_fp16_to_fp32 (kh[i]);
          v[i] = hz_fp16_to_fp32 (vh[i]);
        }
    }
  void *kd = gtu_up (gpu, f16 ? (void *) kh : (void *) k, el * n_ctx * dk);
  void *vd = gtu_up (gpu, f16 ? (void *) vh : (void *) v, el * n_ctx * dk);
  float *qd = gtu_up (gpu, q, 4 * n_tok * dq);
  int *posd = gtu_up (gpu, &pos0, sizeof pos0);
  const float scale = 1.0f / sqrtf ((float) hd);
  float *og = g_new (float, n_tok * dq), *oc = g_new (float, n_tok * dq);
  const int n_max = pos0 + n_tok;
  float *vt = g_new (float, (gsize) hd * n_max), *scores = g_new (float, n_max);
  for (int h = 0; h < nh; h++)
    {
      const int kvh = h / (nh / nkv);
      v_transposed (v, dk, kvh, hd, n_max, vt);
      for (int t = 0; t < n_tok; t++)
        hz_cpu_attn_head (q + (gsize) t * dq + (gsize) h * hd, k + kvh * hd, dk, vt, n_max,
                          pos0 + t + 1, pos0 + t + 1, hd, hd, scale, FALSE, scores,
                          oc + (gsize) t * dq + (gsize) h * hd);
    }
  for (int fp32 = 0; fp32 < 2; fp32++)
    {
      if (fp32)
        g_setenv ("HZ_GPU_ATTN", "fp32", TRUE);
      const gboolean tc = !fp32 && (hd == 32 || hd == 64 || hd == 128);
      const double tol = tc ? 3e-3 : 1e-5;
      const int mode = fp32 ? HZK_ACT_F32 : HZK_ACT_Q8_0;
      const gboolean same = attn_prefill_run (qd, kd, vd, f16, posd, n_tok, nh, nkv, hd, scale,
                                              mode, og);
      if (fp32)
        g_unsetenv ("HZ_GPU_ATTN");
      const double e = rel_err (og, oc, n_tok * dq);
      gtu_report (&tap, e <= tol && same,
                  "prefill attention (%s) %d/%d heads, d %d, positions %d..%d, kv %s: %.2e "
                  "(< %.0e), int8 rows %s the standalone quantizer's", fp32 ? "fp32" : "default",
                  nh, nkv, hd, pos0, pos0 + n_tok - 1, f16 ? "f16" : "f32", e, tol,
                  same ? "=" : "!=");
    }
  void *bufs[] = { kd, vd, qd, posd };
  for (size_t i = 0; i < G_N_ELEMENTS (bufs); i++)
    hz_gpu_free (gpu, bufs[i]);
  g_free (k), g_free (v), g_free (q), g_free (kh), g_free (vh), g_free (og), g_free (oc);
  g_free (vt), g_free (scores);
}

/* ---- Gemma: GeGLU, soft-capping, masked attention --------------------------------------- */
/* hzk_geglu_rows against hz_cpu_geglu (both look up the CPU's fp16 GELU table): bit-identical
 * on gates spread over ±12 (both branches past ±10 too), 3 rows; hzk_softcap against
 * hz_cpu_softcap 1e-6 (the device's tanhf vs glibc's). */
static void
test_geglu_softcap (int64_t n)
{
  void *st = hz_gpu_stream (gpu);
  const int R = 3;
  float *gu = gtu_randn (rng, 2 * n * R, 4.0);
  float *gud = gtu_up (gpu, gu, 4 * 2 * n * R), *od = gtu_up (gpu, NULL, 4 * n * R);
  uint16_t *tab = gtu_up (gpu, hz_cpu_gelu_table (), sizeof (uint16_t) << 16);
  CHECK (hzk_geglu_rows (gud, gud + n, 2 * n, n, R, tab, od, NULL, HZK_ACT_F32, st));
  float *og = g_new (float, n * R), *oc = g_new (float, n * R);
  gtu_down (gpu, og, od, 4 * n * R);
  for (int r = 0; r < R; r++)
    {
      memcpy (oc + r * n, gu + r * 2 * n, 4 * n);
      hz_cpu_geglu (oc + r * n, gu + r * 2 * n + n, n);
    }
  gtu_report (&tap, memcmp (og, oc, 4 * n * R) == 0,
              "geglu %d rows of %" G_GINT64_FORMAT " (fp16 GELU table): %s the CPU's", R, n,
              memcmp (og, oc, 4 * n * R) == 0 ? "bit-identical to" : "differs from");
  float *x = gtu_randn (rng, n, 40.0), *xd = gtu_up (gpu, x, 4 * n);
  CHECK (hzk_softcap (xd, n, 30.0f, st));
  gtu_down (gpu, og, xd, 4 * n);
  hz_cpu_softcap (x, n, 30.0f);
  const double e = rel_err (og, x, n);
  gtu_report (&tap, e <= 1e-6, "softcap 30 over %" G_GINT64_FORMAT ": %.2e (< 1e-6)", n, e);
  hz_gpu_free (gpu, gud), hz_gpu_free (gpu, od), hz_gpu_free (gpu, tab), hz_gpu_free (gpu, xd);
  g_free (gu), g_free (og), g_free (oc), g_free (x);
}

/* hzk_attn_prefill_ext of n_tok tokens from pos0 and hzk_attn_decode_ext of the last one
 * (5 splits), under a sliding window and/or soft-capping (HzkAttnMask), against the CPU
 * head given the window's cells only (as cpu/forward.c passes them) with the same
 * soft-capping: 1e-5 each (fp32 caches; the masked prefill always takes the fp32 kernel). */
static void
test_attention_masked (int nh, int nkv, int hd, int pos0, int n_tok, int window, float softcap)
{
  void *st = hz_gpu_stream (gpu);
  const int n_ctx = pos0 + n_tok, n_split = 5;
  const int64_t dk = (int64_t) nkv * hd, dq = (int64_t) nh * hd;
  float *k = gtu_randn (rng, n_ctx * dk, 1.0), *v = gtu_randn (rng, n_ctx * dk, 1.0);
  float *q = gtu_randn (rng, n_tok * dq, softcap > 0 ? 2.0 : 0.3);
  float *kd = gtu_up (gpu, k, 4 * n_ctx * dk), *vd = gtu_up (gpu, v, 4 * n_ctx * dk);
  float *qd = gtu_up (gpu, q, 4 * n_tok * dq), *od = gtu_up (gpu, NULL, 4 * n_tok * dq);
  float *part = gtu_up (gpu, NULL, hzk_attn_part_bytes (nh, hd, n_split));
  const int last = pos0 + n_tok - 1;
  int *posd = gtu_up (gpu, &pos0, sizeof pos0), *lastd = gtu_up (gpu, &last, sizeof last);
  const float scale = 1.0f / sqrtf ((float) hd);
  const HzkAttnMask mk = { window, softcap };
  float *og = g_new (float, n_tok * dq), *ogd = g_new (float, dq), *oc = g_new (float, n_tok * dq);
  CHECK (hzk_attn_prefill_ext (qd, kd, vd, FALSE, posd, n_tok, nh, nkv, hd, hd, scale, mk, od,
                               NULL, HZK_ACT_F32, 1, st));
  gtu_down (gpu, og, od, 4 * n_tok * dq);
  CHECK (hzk_attn_decode_ext (qd + (n_tok - 1) * dq, kd, vd, FALSE, lastd, nh, nkv, hd, hd,
                              scale, mk, n_split, part, od, NULL, HZK_ACT_F32, NULL, st));
  gtu_down (gpu, ogd, od, 4 * dq);
  float *vt = g_new (float, (gsize) hd * n_ctx), *scores = g_new (float, n_ctx);
  /* the CPU head soft-caps q·k and scales inside the softmax; the engine (cpu/forward.c)
   * gives it q already scaled (Gemma's attn_scale) and scale 1, which is the kernels'
   * softcap(scale · q·k) */
  float *qs = g_new (float, n_tok * dq);
  for (int64_t i = 0; i < n_tok * dq; i++)
    qs[i] = q[i] * scale;
  for (int h = 0; h < nh; h++)
    {
      const int kvh = h / (nh / nkv);
      v_transposed (v, dk, kvh, hd, n_ctx, vt);
      for (int t = 0; t < n_tok; t++)
        {
          const int p = pos0 + t, lo = window > 0 && p + 1 > window ? p + 1 - window : 0;
          hz_cpu_attn_head_ext (qs + (gsize) t * dq + (gsize) h * hd, k + (gsize) lo * dk + kvh * hd,
                                dk, vt + lo, n_ctx, p + 1 - lo, p + 1 - lo, hd, hd, 1.0f,
                                softcap, -INFINITY, FALSE, scores, oc + (gsize) t * dq + (gsize) h * hd);
        }
    }
  const double ep = rel_err (og, oc, n_tok * dq), ed = rel_err (ogd, oc + (n_tok - 1) * dq, dq);
  gtu_report (&tap, ep <= 1e-5 && ed <= 1e-5,
              "masked attention %d/%d heads, d %d, positions %d..%d, window %d, softcap %g: "
              "prefill %.2e, decode (5 splits) %.2e (< 1e-5)", nh, nkv, hd, pos0, last, window,
              softcap, ep, ed);
  void *bufs[] = { kd, vd, qd, od, part, posd, lastd };
  for (size_t i = 0; i < G_N_ELEMENTS (bufs); i++)
    hz_gpu_free (gpu, bufs[i]);
  g_free (k), g_free (v), g_free (q), g_free (og), g_free (ogd), g_free (oc), g_free (vt);
  g_free (scores), g_free (qs);
}

/* The row-batched forms used by prefill (rms_norm and swiglu_rows over R rows with their
 * int8 rows, qkv_rope over R tokens) against R single-row calls: bit-identical. */
static void
test_rows (void)
{
  void *st = hz_gpu_stream (gpu);
  const int R = 5, n = 512, nh = 4, nkv = 2, hd = 64, n_ctx = 16;
  const int64_t dq = nh * hd, dk = nkv * hd, nt = dq + 2 * dk;
  const size_t ab = hzk_act_bytes (n, R);
  float *x = gtu_randn (rng, R * n, 1.0), *a = gtu_randn (rng, R * n, 0.5), *w = gtu_randn (rng, n, 1.0);
  float *gu = gtu_randn (rng, R * 2 * n, 1.0), *qkv = gtu_randn (rng, R * nt, 1.0), *cs = gtu_randn (rng, n_ctx * hd, 1.0);
  float *xd1 = gtu_up (gpu, x, 4 * R * n), *xd2 = gtu_up (gpu, x, 4 * R * n), *ad = gtu_up (gpu, a, 4 * R * n), *wd = gtu_up (gpu, w, 4 * n);
  float *y1 = gtu_up (gpu, NULL, 4 * R * n), *y2 = gtu_up (gpu, NULL, 4 * R * n), *gud = gtu_up (gpu, gu, 4 * R * 2 * n);
  void *act1 = gtu_up (gpu, NULL, ab), *act2 = gtu_up (gpu, NULL, ab);
  uint8_t *h1 = g_malloc (ab), *h2 = g_malloc (ab);
  float *f1 = g_new (float, R * nt), *f2 = g_new (float, R * nt);
  gboolean same_norm = TRUE, same_swiglu = TRUE;
  for (int mode = HZK_ACT_Q8_0; mode <= HZK_ACT_Q8_K; mode++)
    {
      CHECK (hzk_rms_norm (xd1, ad, NULL, wd, n, R, 1e-5f, y1, act1, mode, st));
      for (int r = 0; r < R; r++)
        {
          /* row r alone: its int8 row lands at row r of a one-row layout of n·R elements */
          CHECK (hzk_rms_norm (xd2 + r * n, ad + r * n, NULL, wd, n, 1, 1e-5f, y2 + r * n, NULL, mode, st));
        }
      CHECK (hzk_quantize_act_mode (y2, (int64_t) R * n, mode, act2, st));
      gtu_down (gpu, f1, y1, 4 * R * n), gtu_down (gpu, f2, y2, 4 * R * n);
      gtu_down (gpu, h1, act1, ab), gtu_down (gpu, h2, act2, ab);
      same_norm = same_norm && !memcmp (f1, f2, 4 * R * n) && !memcmp (h1, h2, ab);
      CHECK (hzk_swiglu_rows (gud, gud + n, 2 * n, n, R, y1, act1, mode, st));
      for (int r = 0; r < R; r++)
        CHECK (hzk_swiglu (gud + r * 2 * n, gud + r * 2 * n + n, n, y2 + r * n, NULL, mode, st));
      CHECK (hzk_quantize_act_mode (y2, (int64_t) R * n, mode, act2, st));
      gtu_down (gpu, f1, y1, 4 * R * n), gtu_down (gpu, f2, y2, 4 * R * n);
      gtu_down (gpu, h1, act1, ab), gtu_down (gpu, h2, act2, ab);
      same_swiglu = same_swiglu && !memcmp (f1, f2, 4 * R * n) && !memcmp (h1, h2, ab);
    }
  gtu_report (&tap, same_norm, "rms_norm (+residual, int8 rows) over %d rows = %d one-row calls", R, R);
  gtu_report (&tap, same_swiglu, "swiglu_rows (int8 rows) over %d rows = %d one-row calls", R, R);
  /* qkv_rope: R tokens from position 3 in one call vs R calls */
  float *qkvd = gtu_up (gpu, qkv, 4 * R * nt), *csd = gtu_up (gpu, cs, 4 * n_ctx * hd);
  float *q1 = gtu_up (gpu, NULL, 4 * R * dq), *q2 = gtu_up (gpu, NULL, 4 * R * dq);
  void *kc1 = gtu_up (gpu, NULL, 4 * n_ctx * dk), *vc1 = gtu_up (gpu, NULL, 4 * n_ctx * dk);
  void *kc2 = gtu_up (gpu, NULL, 4 * n_ctx * dk), *vc2 = gtu_up (gpu, NULL, 4 * n_ctx * dk);
  int p0 = 3;
  int *posd = gtu_up (gpu, &p0, sizeof p0);
  CHECK (hzk_qkv_rope (qkvd, NULL, NULL, NULL, 1e-6f, csd, posd, R, nh, nkv, hd, hd, hd, 0, q1,
                       kc1, vc1, 0, st));
  for (int r = 0; r < R; r++)
    {
      int p = p0 + r;
      int *pd = gtu_up (gpu, &p, sizeof p);
      CHECK (hzk_qkv_rope (qkvd + r * nt, NULL, NULL, NULL, 1e-6f, csd, pd, 1, nh, nkv, hd, hd, hd,
                           0, q2 + r * dq, kc2, vc2, 0, st));
      hz_gpu_free (gpu, pd);
    }
  float *c1 = g_new (float, n_ctx * dk), *c2 = g_new (float, n_ctx * dk);
  gboolean same_rope = TRUE;
  gtu_down (gpu, f1, q1, 4 * R * dq), gtu_down (gpu, f2, q2, 4 * R * dq);
  same_rope = !memcmp (f1, f2, 4 * R * dq);
  gtu_down (gpu, c1, kc1, 4 * n_ctx * dk), gtu_down (gpu, c2, kc2, 4 * n_ctx * dk);
  same_rope = same_rope && !memcmp (c1, c2, 4 * n_ctx * dk);
  gtu_down (gpu, c1, vc1, 4 * n_ctx * dk), gtu_down (gpu, c2, vc2, 4 * n_ctx * dk);
  same_rope = same_rope && !memcmp (c1, c2, 4 * n_ctx * dk);
  gtu_report (&tap, same_rope, "qkv_rope over %d tokens (q rows, cache rows %d..%d) = %d one-token calls", R,
          p0, p0 + R - 1, R);
  void *bufs[] = { xd1, xd2, ad, wd, y1, y2, gud, act1, act2, qkvd, csd, q1, q2, kc1, vc1, kc2,
                   vc2, posd };
  for (size_t i = 0; i < G_N_ELEMENTS (bufs); i++)
    hz_gpu_free (gpu, bufs[i]);
  g_free (x), g_free (a), g_free (w), g_free (gu), g_free (qkv), g_free (cs), g_free (h1);
  g_free (h2), g_free (f1), g_free (f2), g_free (c1), g_free (c2);
}

/* ---- sampling ---------------------------------------------------------------------------- */
typedef struct { float l; int id; } Cand;

static int
cand_cmp (const void *pa, const void *pb)
{
  const Cand *a = pa, *b = pb;
  if (a->l != b->l)
    return a->l > b->l ? -1 : 1;
  return a->id - b->id;
}

/* The probabilities hz_sampler_sample draws with (engine/sampler.c, no penalties), from
 * its definition: sort by (logit desc, id asc), top-k, w = expf((l − max)/T), top-p
 * prefix, min-p, normalise. prob[n]. */
static void
sampler_probs (const float *x, int n, const HzSamplerParams *p, double *prob)
{
  Cand *c = g_new (Cand, n);
  int m = 0;
  for (int i = 0; i < n; i++)
    {
      prob[i] = 0;
      if (x[i] > -INFINITY)
        c[m++] = (Cand) { x[i], i };
    }
  qsort (c, m, sizeof *c, cand_cmp);
  if (p->top_k > 0 && p->top_k < m)
    m = p->top_k;
  double *w = g_new (double, m), sum = 0;
  const double inv_t = 1.0 / (double) p->temperature;
  for (int i = 0; i < m; i++)
    sum += w[i] = expf ((float) ((double) (c[i].l - c[0].l) * inv_t));
  if (p->top_p < 1.0f)
    {
      double acc = 0;
      int keep = m;
      for (int i = 0; i < m; i++)
        if ((acc += w[i]) >= p->top_p * sum)
          {
            keep = i + 1;
            break;
          }
      m = keep;
    }
  double z = 0;
  for (int i = 0; i < m; i++)
    if (!(p->min_p > 0) || w[i] >= fmin (p->min_p, 1.0))
      z += w[i];
  for (int i = 0; i < m; i++)
    if (!(p->min_p > 0) || w[i] >= fmin (p->min_p, 1.0))
      prob[c[i].id] = w[i] / z;
  g_free (c), g_free (w);
}

/* Pearson's χ² of counts against prob over N draws (bins with an expectation below 5 are
 * pooled); *outside = draws of tokens with probability 0; *df the degrees of freedom. */
static double
chi2 (const int *count, const double *prob, int n, int N, int *df, int *outside)
{
  double x2 = 0, pe = 0, po = 0;
  int bins = 0;
  *outside = 0;
  for (int i = 0; i < n; i++)
    {
      if (prob[i] == 0)
        {
          *outside += count[i];
          continue;
        }
      const double e = prob[i] * N;
      if (e < 5)
        {
          pe += e;
          po += count[i];
          continue;
        }
      x2 += (count[i] - e) * (count[i] - e) / e;
      bins++;
    }
  if (pe > 0)
    {
      x2 += (po - pe) * (po - pe) / pe;
      bins++;
    }
  *df = MAX (bins - 1, 1);
  return x2;
}

static void
test_sample (void)
{
  void *st = hz_gpu_stream (gpu);
  const int n = 1000, N = 20000;
  float *x = gtu_randn (rng, n, 2.0);
  x[10] = x[11] = x[12] = 9.0f;     /* a three-way tie at the top */
  x[500] = NAN;
  x[501] = -INFINITY;
  float *xd = gtu_up (gpu, x, 4 * n);
  HzkSampleParams *pd = gtu_up (gpu, NULL, sizeof (HzkSampleParams));
  uint64_t *rd = gtu_up (gpu, NULL, 4 * sizeof (uint64_t));
  int *outd = gtu_up (gpu, NULL, sizeof (int) * N);
  int *out = g_new (int, N), *cnt_g = g_new (int, n), *cnt_c = g_new (int, n);
  double *prob = g_new (double, n);
  struct { float t; int k; float p, minp; } sets[] = {
    { 0.8f, 40, 0.9f, 0.05f },      /* llama.cpp's defaults but temperature */
    { 1.5f, 0, 1.0f, 0.0f },        /* the whole softmax */
    { 1.0f, 0, 0.5f, 0.0f },        /* top-p alone */
    { 0.7f, 2, 1.0f, 0.0f },        /* top-k inside a tie: ids 10 and 11 only */
    { 1.0f, 1, 1.0f, 0.0f },        /* top-k 1: the argmax, every draw */
  };
  for (size_t si = 0; si < G_N_ELEMENTS (sets); si++)
    {
      HzSamplerParams sp;
      hz_sampler_params_init (&sp);
      sp.temperature = sets[si].t;
      sp.top_k = sets[si].k;
      sp.top_p = sets[si].p;
      sp.min_p = sets[si].minp;
      sp.seed = 1234 + si;
      const HzkSampleParams kp = { sp.temperature, sp.top_k, sp.top_p, sp.min_p };
      uint64_t state[4];
      hzk_rng_seed (sp.seed, state);
      GError *error = NULL;
      g_assert_true (hz_gpu_upload (gpu, pd, &kp, sizeof kp, &error));
      g_assert_true (hz_gpu_upload (gpu, rd, state, sizeof state, &error));
      for (int i = 0; i < N; i++)
        CHECK (hzk_sample (xd, n, pd, rd, outd + i, st));
      gtu_down (gpu, out, outd, sizeof (int) * N);
      HzSampler *cpu = hz_sampler_new (&sp);
      memset (cnt_g, 0, sizeof (int) * n);
      memset (cnt_c, 0, sizeof (int) * n);
      gboolean in_range = TRUE;
      for (int i = 0; i < N; i++)
        {
          in_range = in_range && out[i] >= 0 && out[i] < n;
          if (out[i] >= 0 && out[i] < n)
            cnt_g[out[i]]++;
          cnt_c[hz_sampler_sample (cpu, x, n)]++;
        }
      hz_sampler_free (cpu);
      sampler_probs (x, n, &sp, prob);
      int df_g, df_c, out_g, out_c;
      const double x2g = chi2 (cnt_g, prob, n, N, &df_g, &out_g);
      const double x2c = chi2 (cnt_c, prob, n, N, &df_c, &out_c);
      /* ~6 standard deviations of χ²(df) above its mean */
      const double lim_g = df_g + 6 * sqrt (2.0 * df_g), lim_c = df_c + 6 * sqrt (2.0 * df_c);
      gtu_report (&tap, in_range && out_g == 0 && out_c == 0 && x2g <= lim_g && x2c <= lim_c,
              "sample T %.1f top-k %d top-p %.2f min-p %.2f, %d draws: device χ² %.1f, CPU "
              "sampler χ² %.1f (df %d, < %.0f), outside the support %d/%d",
              sp.temperature, sp.top_k, sp.top_p, sp.min_p, N, x2g, x2c, df_g, lim_g, out_g, out_c);
      if (sp.top_k == 1)
        gtu_report (&tap, cnt_g[10] == N, "sample top-k 1: the argmax (lowest of a tie) in %d/%d draws",
                cnt_g[10], N);
    }
  /* the same seed gives the same draws; temperature 0 is the argmax */
  {
    const HzkSampleParams kp = { 0.9f, 0, 0.95f, 0.0f };
    uint64_t state[4];
    int a[200], b[200];
    GError *error = NULL;
    for (int rep = 0; rep < 2; rep++)
      {
        hzk_rng_seed (99, state);
        g_assert_true (hz_gpu_upload (gpu, pd, &kp, sizeof kp, &error));
        g_assert_true (hz_gpu_upload (gpu, rd, state, sizeof state, &error));
        for (int i = 0; i < 200; i++)
          CHECK (hzk_sample (xd, n, pd, rd, outd + i, st));
        gtu_down (gpu, rep ? b : a, outd, sizeof a);
      }
    gtu_report (&tap, !memcmp (a, b, sizeof a), "sample: the same seed gives the same 200 draws");
    const HzkSampleParams g0 = { 0.0f, 40, 0.9f, 0.05f };
    int got = -1;
    g_assert_true (hz_gpu_upload (gpu, pd, &g0, sizeof g0, &error));
    CHECK (hzk_sample (xd, n, pd, rd, outd, st));
    gtu_down (gpu, &got, outd, sizeof got);
    gtu_report (&tap, got == 10, "sample with temperature 0: argmax %d (10)", got);
  }
  hz_gpu_free (gpu, xd), hz_gpu_free (gpu, pd), hz_gpu_free (gpu, rd), hz_gpu_free (gpu, outd);
  g_free (x), g_free (out), g_free (cnt_g), g_free (cnt_c), g_free (prob);
}

int
main (void)
{
  gpu = gtu_open_or_skip ();
  rng = g_rand_new_with_seed (4242);

  test_rms_norm (4096, FALSE);
  test_rms_norm (4096, TRUE);
  test_rms_norm (11008, TRUE);
  for (int f16 = 0; f16 < 2; f16++)
    {
      test_rope (HZ_ROPE_NORM, FALSE, FALSE, f16);
      test_rope (HZ_ROPE_NEOX, TRUE, FALSE, f16);
      test_rope (HZ_ROPE_NEOX, TRUE, TRUE, f16);
    }
  const int pos[] = { 0, 1, 31, 300, 700 }, splits[] = { 1, 5, 32 };
  for (int f16 = 0; f16 < 2; f16++)
    for (size_t i = 0; i < G_N_ELEMENTS (pos); i++)
      for (size_t s = 0; s < G_N_ELEMENTS (splits); s++)
        test_attention (32, 8, 128, pos[i], splits[s], f16);
  test_attention (8, 4, 32, 100, 4, FALSE);     /* stories-distill's heads */
  test_attention (8, 4, 8, 100, 4, FALSE);      /* stories260K's */
  test_attention (16, 2, 256, 200, 8, TRUE);
  test_swiglu (11008);
  test_swiglu (172);
  const char *fmts[] = { "f32", "f16", "bf16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q2_K",
                         "q4_K", "q5_K", "q6_K", "iq4_nl", "mxfp4", "q3_K" };
  for (size_t i = 0; i < G_N_ELEMENTS (fmts); i++)
    test_embed (hz_quant_traits_by_name (fmts[i]));
  test_act_modes ();
  test_argmax ();
  /* prefill */
  test_attention_prefill (32, 8, 128, 0, 77, FALSE);
  test_attention_prefill (32, 8, 128, 40, 33, TRUE);
  test_attention_prefill (32, 8, 128, 300, 200, FALSE);  /* continues a cache, 4 q tiles */
  test_attention_prefill (8, 8, 128, 0, 512, TRUE);      /* the pp512 shape, 8 heads */
  test_attention_prefill (32, 8, 128, 700, 1, FALSE);    /* one token */
  test_attention_prefill (16, 16, 64, 130, 150, TRUE);
  test_attention_prefill (16, 4, 64, 0, 64, FALSE);
  test_attention_prefill (8, 4, 32, 5, 20, FALSE);        /* stories-distill's heads */
  test_attention_prefill (8, 4, 32, 0, 100, TRUE);
  test_attention_prefill (8, 4, 8, 0, 9, FALSE);          /* fp32 kernel only */
  test_attention_prefill (16, 2, 256, 100, 17, FALSE);
  /* Gemma */
  test_geglu_softcap (512);
  test_geglu_softcap (6912);
  test_attention_masked (4, 2, 64, 0, 100, 32, 0.0f);     /* tiny-gemma3's window layers */
  test_attention_masked (4, 2, 64, 40, 60, 32, 50.0f);    /* tiny-gemma2's */
  test_attention_masked (8, 4, 256, 200, 40, 0, 50.0f);   /* a global layer of gemma2 */
  test_attention_masked (16, 8, 128, 600, 20, 512, 0.0f);
  test_attention_masked (4, 1, 256, 0, 33, 1, 0.0f);      /* a window of one position */
  test_rows ();
  test_sample ();

  printf ("1..%d\n", tap.n_test);
  g_rand_free (rng);
  hz_gpu_close (gpu);
  return tap.n_fail ? 1 : 0;
}
