/* learner/train-ops-impl.c — training ops over REAL (see train-ops-decl.h for shapes and formulas).
 * Compiled twice, through train-ops-f32.c and train-ops-f64.c (HZ_INSTANCE_DOUBLE = 0 / 1). */
#include <math.h>
#include <string.h>
#include "train-ops.h"
#include "train-ops-gemm.h"

#define HZ_REAL_DOUBLE HZ_INSTANCE_DOUBLE
#include "real.h"

/* ------------------------------------------------------------------ helpers */

/* dot product with 8 independent accumulators (lets the compiler vectorise without
 * -ffast-math; summation order differs from a serial loop by rounding only) */
static inline REAL
HZ_R (dot) (const REAL *restrict a, const REAL *restrict b, int64_t n)
{
  REAL acc[8] = { 0 };
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; k++)
      acc[k] += a[i + k] * b[i + k];
  REAL s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
  for (; i < n; i++)
    s += a[i] * b[i];
  return s;
}

static inline void
HZ_R (axpy) (REAL *restrict y, REAL a, const REAL *restrict x, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    y[i] += a * x[i];
}

/* Rows o0..o0+n-1 of a quant-table matrix as REAL [n][n_in]. Rows are contiguous, so one
 * to_float call converts them all; `tmp` is float scratch of the same size (unused when
 * REAL is float). */
static void
HZ_R (dequant_rows) (const HzMatrix *W, int64_t o0, int64_t n, REAL *out, float *tmp)
{
  const guint8 *src = (const guint8 *) W->data + (gsize) o0 * W->row_bytes;
#if HZ_REAL_DOUBLE
  W->qt->to_float (src, tmp, n * W->n_in);
  for (int64_t i = 0; i < n * W->n_in; i++)
    out[i] = tmp[i];
#else
  (void) tmp;
  W->qt->to_float (src, out, n * W->n_in);
#endif
}

enum { ROW_TILE = 8 };   /* weight rows dequantized together and reused across tokens */

/* `th`, or when NULL a one-thread HzOpsThreads for this call, stored in *own for the caller
 * to free (g_autoptr). */
static HzOpsThreads *
HZ_R (threads_or_own) (HzOpsThreads *th, HzOpsThreads **own)
{
  if (th == NULL)
    th = *own = hz_ops_threads_new (1);
  return th;
}

#define OPS_THREADS(th)                                   \
  g_autoptr (HzOpsThreads) own_th_ = NULL;                \
  th = HZ_R (threads_or_own) (th, &own_th_)

/* ------------------------------------------------------------------ RMSNorm */

void
HZ_R (hz_op_rmsnorm_fwd) (REAL *y, REAL *rstd, const REAL *x, const float *w,
                          int64_t n_rows, int64_t d, float eps)
{
  for (int64_t t = 0; t < n_rows; t++)
    {
      const REAL *xt = x + t * d;
      REAL *yt = y + t * d;
      double ss = 0;
      for (int64_t j = 0; j < d; j++)
        ss += (double) xt[j] * xt[j];
      const REAL r = (REAL) (1.0 / sqrt (ss / d + eps));
      rstd[t] = r;
      for (int64_t j = 0; j < d; j++)
        yt[j] = xt[j] * r * (w ? (REAL) w[j] : (REAL) 1);
    }
}

void
HZ_R (hz_op_rmsnorm_bwd) (REAL *dx, REAL *dw, const REAL *dy, const REAL *x, const float *w,
                          const REAL *rstd, int64_t n_rows, int64_t d)
{
  for (int64_t t = 0; t < n_rows; t++)
    {
      const REAL *xt = x + t * d, *dyt = dy + t * d;
      REAL *dxt = dx + t * d;
      const REAL r = rstd[t];
      double gx = 0;   /* sum_k dy_k w_k x_k */
      for (int64_t j = 0; j < d; j++)
        gx += (double) dyt[j] * (w ? w[j] : 1.0f) * xt[j];
      const REAL c = (REAL) (gx * r * r * r / d);
      for (int64_t j = 0; j < d; j++)
        dxt[j] += r * dyt[j] * (w ? (REAL) w[j] : (REAL) 1) - c * xt[j];
      if (dw)
        for (int64_t j = 0; j < d; j++)
          dw[j] += dyt[j] * xt[j] * r;
    }
}

/* --------------------------------------------------------------------- RoPE */

void
HZ_R (hz_op_rope) (REAL *x, const float *cs, int64_t T, int32_t n_heads, int32_t head_dim,
                   int32_t n_rot, HzRopeMode mode, gboolean transpose)
{
  const int half = n_rot / 2;
  const REAL sgn = transpose ? -1 : 1;   /* R^T: same cos, negated sin */

  for (int64_t t = 0; t < T; t++)
    {
      const float *c = cs + t * n_rot;
      for (int32_t h = 0; h < n_heads; h++)
        {
          REAL *v = x + (t * n_heads + h) * head_dim;
          for (int i = 0; i < half; i++)
            {
              const REAL co = c[2 * i], si = sgn * c[2 * i + 1];
              const int a = mode == HZ_ROPE_NORM ? 2 * i : i;
              const int b = mode == HZ_ROPE_NORM ? 2 * i + 1 : i + half;
              const REAL x0 = v[a], x1 = v[b];
              v[a] = x0 * co - x1 * si;
              v[b] = x0 * si + x1 * co;
            }
        }
    }
}

/* ---------------------------------------------------------------- attention */

typedef struct {
  HzOpsThreads *th;
  REAL *out, *P, *dq, *dk, *dv;
  const REAL *q, *k, *v, *dout, *Pc;
  int64_t T;
  int32_t n_head, n_head_kv, hdk, hdv;
} HZ_R (AttnJob);

/* Row t of a causal softmax in place: p[0..t] holds the scaled scores on entry and the
 * probabilities on return (max-subtracted, the sum in double); p[t+1..T) is set to 0. */
static void
HZ_R (softmax_causal_row) (REAL *p, int64_t t, int64_t T)
{
  REAL mx = -INFINITY;
  for (int64_t s = 0; s <= t; s++)
    mx = MAX (mx, p[s]);
  double sum = 0;
  for (int64_t s = 0; s <= t; s++)
    {
      p[s] = (REAL) exp ((double) (p[s] - mx));
      sum += p[s];
    }
  const REAL inv = (REAL) (1.0 / sum);
  for (int64_t s = 0; s <= t; s++)
    p[s] *= inv;
  for (int64_t s = t + 1; s < T; s++)
    p[s] = 0;
}

/* Row t of the softmax backward in place: d[0..t] holds dP on entry and
 * dS = P (dP - sum_s P dP) * scale on return (the sum in double); d[t+1..T) is set to 0. */
static void
HZ_R (softmax_causal_row_bwd) (REAL *d, const REAL *p, int64_t t, int64_t T, REAL scale)
{
  double pdp = 0;
  for (int64_t s = 0; s <= t; s++)
    pdp += (double) p[s] * d[s];
  for (int64_t s = 0; s <= t; s++)
    d[s] = p[s] * (d[s] - (REAL) pdp) * scale;
  for (int64_t s = t + 1; s < T; s++)
    d[s] = 0;
}

#if HZ_REAL_DOUBLE
/* forward of head h for all tokens (double: plain loops, the gradient-check reference) */
static void
HZ_R (attention_fwd_head) (int64_t h, guint ith, gpointer data)
{
  const HZ_R (AttnJob) *j = data;
  const int64_t T = j->T;
  const int group = j->n_head / j->n_head_kv, kvh = (int) h / group;
  const int32_t hdk = j->hdk, hdv = j->hdv;
  const int64_t dq = (int64_t) j->n_head * hdk, dk = (int64_t) j->n_head_kv * hdk;
  const int64_t dov = (int64_t) j->n_head * hdv, dv = (int64_t) j->n_head_kv * hdv;
  const REAL scale = (REAL) (1.0 / sqrt ((double) hdk));

  (void) ith;
  for (int64_t t = 0; t < T; t++)
    {
      REAL *p = j->P + (h * T + t) * T;
      const REAL *qt = j->q + t * dq + h * hdk;
      for (int64_t s = 0; s <= t; s++)
        p[s] = HZ_R (dot) (qt, j->k + s * dk + (int64_t) kvh * hdk, hdk) * scale;
      HZ_R (softmax_causal_row) (p, t, T);
      REAL *o = j->out + t * dov + h * hdv;
      memset (o, 0, hdv * sizeof (REAL));
      for (int64_t s = 0; s <= t; s++)
        HZ_R (axpy) (o, p[s], j->v + s * dv + (int64_t) kvh * hdv, hdv);
    }
}

#else
/* forward of head h for all tokens: S = q_h k^T (lower triangle) and out_h = P v through
 * train-ops-gemm.h on this thread, the softmax between them as in the double build */
static void
HZ_R (attention_fwd_head) (int64_t h, guint ith, gpointer data)
{
  const HZ_R (AttnJob) *j = data;
  const int64_t T = j->T;
  const int group = j->n_head / j->n_head_kv, kvh = (int) h / group;
  const int32_t hdk = j->hdk, hdv = j->hdv;
  const int64_t dq = (int64_t) j->n_head * hdk, dk = (int64_t) j->n_head_kv * hdk;
  const int64_t dov = (int64_t) j->n_head * hdv, dv = (int64_t) j->n_head_kv * hdv;
  const float scale = (float) (1.0 / sqrt ((double) hdk));
  float *Ph = j->P + h * T * T;

  memset (Ph, 0, T * T * sizeof (float));
  const HzGemmSrc ks = hz_gemm_src_float (j->k + (int64_t) kvh * hdk, T, hdk, dk);
  hz_gemm_nt_on (j->th, ith, Ph, T, j->q + h * hdk, dq, T, &ks, HZ_GEMM_LOWER);
  for (int64_t t = 0; t < T; t++)
    {
      float *p = Ph + t * T;
      for (int64_t s = 0; s <= t; s++)
        p[s] *= scale;
      HZ_R (softmax_causal_row) (p, t, T);
    }
  float *o = j->out + h * hdv;
  for (int64_t t = 0; t < T; t++)
    memset (o + t * dov, 0, hdv * sizeof (float));
  const HzGemmSrc vs = hz_gemm_src_float (j->v + (int64_t) kvh * hdv, T, hdv, dv);
  hz_gemm_nn_on (j->th, ith, o, dov, Ph, T, T, &vs, HZ_GEMM_LOWER);
}
#endif

void
HZ_R (hz_op_attention_fwd_mt) (HzOpsThreads *th, REAL *out, REAL *P, const REAL *q,
                               const REAL *k, const REAL *v, int64_t T, int32_t n_head,
                               int32_t n_head_kv, int32_t hdk, int32_t hdv)
{
  g_assert (n_head % n_head_kv == 0);
  OPS_THREADS (th);
  HZ_R (AttnJob) j = { .th = th, .out = out, .P = P, .q = q, .k = k, .v = v, .T = T, .n_head = n_head,
                       .n_head_kv = n_head_kv, .hdk = hdk, .hdv = hdv };
  hz_ops_parallel_for (th, n_head, (double) T * (T + 1) / 2 * (hdk + hdv),
                       HZ_R (attention_fwd_head), &j);
}

void
HZ_R (hz_op_attention_fwd) (REAL *out, REAL *P, const REAL *q, const REAL *k, const REAL *v,
                            int64_t T, int32_t n_head, int32_t n_head_kv, int32_t hdk,
                            int32_t hdv)
{
  HZ_R (hz_op_attention_fwd_mt) (NULL, out, P, q, k, v, T, n_head, n_head_kv, hdk, hdv);
}

#if HZ_REAL_DOUBLE
/* backward of the heads of key/value head kvh, in head order (dk, dv sum over them) */
static void
HZ_R (attention_bwd_kv_head) (int64_t kvh, guint ith, gpointer data)
{
  const HZ_R (AttnJob) *j = data;
  const int64_t T = j->T;
  const int group = j->n_head / j->n_head_kv;
  const int32_t hdk = j->hdk, hdv = j->hdv;
  const int64_t sq = (int64_t) j->n_head * hdk, sk = (int64_t) j->n_head_kv * hdk;
  const int64_t so = (int64_t) j->n_head * hdv, sv = (int64_t) j->n_head_kv * hdv;
  const REAL scale = (REAL) (1.0 / sqrt ((double) hdk));
  g_autofree REAL *dS = g_new (REAL, T);

  (void) ith;
  for (int64_t h = kvh * group; h < (kvh + 1) * group; h++)
    for (int64_t t = 0; t < T; t++)
      {
        const REAL *p = j->Pc + (h * T + t) * T;
        const REAL *dot_ = j->dout + t * so + h * hdv;
        const REAL *qt = j->q + t * sq + h * hdk;
        REAL *dqt = j->dq + t * sq + h * hdk;
        for (int64_t s = 0; s <= t; s++)
          dS[s] = HZ_R (dot) (dot_, j->v + s * sv + kvh * hdv, hdv);   /* dP */
        HZ_R (softmax_causal_row_bwd) (dS, p, t, T, scale);
        for (int64_t s = 0; s <= t; s++)
          {
            const REAL ds = dS[s];
            HZ_R (axpy) (dqt, ds, j->k + s * sk + kvh * hdk, hdk);
            HZ_R (axpy) (j->dk + s * sk + kvh * hdk, ds, qt, hdk);
            HZ_R (axpy) (j->dv + s * sv + kvh * hdv, p[s], dot_, hdv);
          }
      }
}

#else
/* [n, n] -> its transpose */
static void
transpose_square (float *restrict dst, const float *restrict src, int64_t n)
{
  enum { B = 32 };
  for (int64_t i0 = 0; i0 < n; i0 += B)
    for (int64_t j0 = 0; j0 < n; j0 += B)
      for (int64_t i = i0; i < MIN (i0 + B, n); i++)
        for (int64_t jj = j0; jj < MIN (j0 + B, n); jj++)
          dst[jj * n + i] = src[i * n + jj];
}

/* backward of the heads of key/value head kvh, in head order (dk, dv sum over them), the
 * products through train-ops-gemm.h on this thread:
 * dP = dout_h v^T, dS = P (dP - rowsum (P dP)) / sqrt(hdk), dq_h += dS k, dk += dS^T q_h,
 * dv += P^T dout_h */
static void
HZ_R (attention_bwd_kv_head) (int64_t kvh, guint ith, gpointer data)
{
  const HZ_R (AttnJob) *j = data;
  const int64_t T = j->T;
  const int group = j->n_head / j->n_head_kv;
  const int32_t hdk = j->hdk, hdv = j->hdv;
  const int64_t sq = (int64_t) j->n_head * hdk, sk = (int64_t) j->n_head_kv * hdk;
  const int64_t so = (int64_t) j->n_head * hdv, sv = (int64_t) j->n_head_kv * hdv;
  const float scale = (float) (1.0 / sqrt ((double) hdk));
  float *dS = hz_ops_scratch (j->th, ith, 3, (gsize) 2 * T * T), *tr = dS + T * T;
  const HzGemmSrc vs = hz_gemm_src_float (j->v + kvh * hdv, T, hdv, sv);
  const HzGemmSrc ks = hz_gemm_src_float (j->k + kvh * hdk, T, hdk, sk);

  for (int64_t h = kvh * group; h < (kvh + 1) * group; h++)
    {
      const float *Ph = j->Pc + h * T * T;
      const float *dout_h = j->dout + h * hdv;
      memset (dS, 0, T * T * sizeof (float));
      hz_gemm_nt_on (j->th, ith, dS, T, dout_h, so, T, &vs, HZ_GEMM_LOWER);   /* dP */
      for (int64_t t = 0; t < T; t++)
        HZ_R (softmax_causal_row_bwd) (dS + t * T, Ph + t * T, t, T, scale);
      hz_gemm_nn_on (j->th, ith, j->dq + h * hdk, sq, dS, T, T, &ks, HZ_GEMM_LOWER);
      transpose_square (tr, dS, T);
      const HzGemmSrc qs = hz_gemm_src_float (j->q + h * hdk, T, hdk, sq);
      hz_gemm_nn_on (j->th, ith, j->dk + kvh * hdk, sk, tr, T, T, &qs, HZ_GEMM_UPPER);
      transpose_square (tr, Ph, T);
      const HzGemmSrc ds = hz_gemm_src_float (dout_h, T, hdv, so);
      hz_gemm_nn_on (j->th, ith, j->dv + kvh * hdv, sv, tr, T, T, &ds, HZ_GEMM_UPPER);
    }
}
#endif

void
HZ_R (hz_op_attention_bwd_mt) (HzOpsThreads *th, REAL *dq, REAL *dk, REAL *dv,
                               const REAL *dout, const REAL *q, const REAL *k, const REAL *v,
                               const REAL *P, int64_t T, int32_t n_head, int32_t n_head_kv,
                               int32_t hdk, int32_t hdv)
{
  g_assert (n_head % n_head_kv == 0);
  OPS_THREADS (th);
  HZ_R (AttnJob) j = { .th = th, .dq = dq, .dk = dk, .dv = dv, .dout = dout, .q = q, .k = k, .v = v,
                       .Pc = P, .T = T, .n_head = n_head, .n_head_kv = n_head_kv, .hdk = hdk,
                       .hdv = hdv };
  hz_ops_parallel_for (th, n_head_kv,
                       (double) (n_head / n_head_kv) * T * (T + 1) / 2 * (2 * hdk + 2 * hdv),
                       HZ_R (attention_bwd_kv_head), &j);
}

void
HZ_R (hz_op_attention_bwd) (REAL *dq, REAL *dk, REAL *dv, const REAL *dout, const REAL *q,
                            const REAL *k, const REAL *v, const REAL *P, int64_t T,
                            int32_t n_head, int32_t n_head_kv, int32_t hdk, int32_t hdv)
{
  HZ_R (hz_op_attention_bwd_mt) (NULL, dq, dk, dv, dout, q, k, v, P, T, n_head, n_head_kv,
                                 hdk, hdv);
}

/* ------------------------------------------------------------------- SwiGLU */

enum { ELEM_CHUNK = 4096 };   /* elements per work item of the elementwise ops */

typedef struct {
  REAL *h, *dg, *du;
  const REAL *g, *u, *dh;
  int64_t n;
} HZ_R (SwigluJob);

static void
HZ_R (swiglu_fwd_chunk) (int64_t item, guint ith, gpointer data)
{
  const HZ_R (SwigluJob) *j = data;
  const int64_t i1 = MIN ((item + 1) * ELEM_CHUNK, j->n);
  (void) ith;
  for (int64_t i = item * ELEM_CHUNK; i < i1; i++)
    j->h[i] = j->g[i] / (1 + (REAL) exp (-(double) j->g[i])) * j->u[i];
}

static void
HZ_R (swiglu_bwd_chunk) (int64_t item, guint ith, gpointer data)
{
  const HZ_R (SwigluJob) *j = data;
  const int64_t i1 = MIN ((item + 1) * ELEM_CHUNK, j->n);
  (void) ith;
  for (int64_t i = item * ELEM_CHUNK; i < i1; i++)
    {
      const REAL g = j->g[i], u = j->u[i], dh = j->dh[i];
      const REAL s = 1 / (1 + (REAL) exp (-(double) g));
      j->dg[i] += dh * u * s * (1 + g * (1 - s));
      j->du[i] += dh * g * s;
    }
}

void
HZ_R (hz_op_swiglu_fwd_mt) (HzOpsThreads *th, REAL *h, const REAL *g, const REAL *u, int64_t n)
{
  OPS_THREADS (th);
  HZ_R (SwigluJob) j = { .h = h, .g = g, .u = u, .n = n };
  hz_ops_parallel_for (th, (n + ELEM_CHUNK - 1) / ELEM_CHUNK, 16.0 * ELEM_CHUNK,
                       HZ_R (swiglu_fwd_chunk), &j);
}

void
HZ_R (hz_op_swiglu_fwd) (REAL *h, const REAL *g, const REAL *u, int64_t n)
{
  HZ_R (hz_op_swiglu_fwd_mt) (NULL, h, g, u, n);
}

void
HZ_R (hz_op_swiglu_bwd_mt) (HzOpsThreads *th, REAL *dg, REAL *du, const REAL *dh,
                            const REAL *g, const REAL *u, int64_t n)
{
  OPS_THREADS (th);
  HZ_R (SwigluJob) j = { .dg = dg, .du = du, .dh = dh, .g = g, .u = u, .n = n };
  hz_ops_parallel_for (th, (n + ELEM_CHUNK - 1) / ELEM_CHUNK, 16.0 * ELEM_CHUNK,
                       HZ_R (swiglu_bwd_chunk), &j);
}

void
HZ_R (hz_op_swiglu_bwd) (REAL *dg, REAL *du, const REAL *dh, const REAL *g, const REAL *u,
                         int64_t n)
{
  HZ_R (hz_op_swiglu_bwd_mt) (NULL, dg, du, dh, g, u, n);
}

/* ---------------------------------------------------------------- embedding */

void
HZ_R (hz_op_embedding_fwd) (REAL *y, const HzMatrix *table, const int32_t *tokens, int64_t T)
{
  const int64_t d = table->n_in;
  g_autofree float *tmp = HZ_REAL_DOUBLE ? g_new (float, d) : NULL;
  for (int64_t t = 0; t < T; t++)
    {
      g_assert (tokens[t] >= 0 && tokens[t] < table->n_out);
      HZ_R (dequant_rows) (table, tokens[t], 1, y + t * d, tmp);
    }
}

void
HZ_R (hz_op_embedding_bwd) (REAL *dtable, const REAL *dy, const int32_t *tokens, int64_t T,
                            int64_t d)
{
  for (int64_t t = 0; t < T; t++)
    HZ_R (axpy) (dtable + (int64_t) tokens[t] * d, 1, dy + t * d, d);
}

/* ------------------------------------------------------------------- linear */

#if HZ_REAL_DOUBLE
/* The double build (gradient checks): plain loops, W dequantized ROW_TILE rows at a time. */

void
HZ_R (hz_op_linear_fwd_mt) (HzOpsThreads *th, REAL *y, REAL *u, const REAL *x, int64_t T,
                            const HzMatrix *W, const float *bias, const REAL *A, const REAL *B,
                            int32_t r, REAL scaling)
{
  const int64_t n_in = W->n_in, n_out = W->n_out;
  g_autofree REAL *w = g_new (REAL, ROW_TILE * n_in);
  g_autofree float *tmp = g_new (float, ROW_TILE * n_in);

  (void) th;
  for (int64_t o0 = 0; o0 < n_out; o0 += ROW_TILE)
    {
      const int64_t nb = MIN (ROW_TILE, n_out - o0);
      HZ_R (dequant_rows) (W, o0, nb, w, tmp);
      for (int64_t t = 0; t < T; t++)
        for (int64_t j = 0; j < nb; j++)
          y[t * n_out + o0 + j] = HZ_R (dot) (x + t * n_in, w + j * n_in, n_in) +
                                  (bias ? (REAL) bias[o0 + j] : (REAL) 0);
    }
  if (A == NULL)
    return;
  HZ_R (hz_op_lora_u_mt) (th, u, x, T, n_in, A, r);
  for (int64_t t = 0; t < T; t++)
    for (int64_t o = 0; o < n_out; o++)
      y[t * n_out + o] += scaling * HZ_R (dot) (u + t * r, B + o * r, r);
}

void
HZ_R (hz_op_lora_u_mt) (HzOpsThreads *th, REAL *u, const REAL *x, int64_t T, int64_t n_in,
                        const REAL *A, int32_t r)
{
  (void) th;
  for (int64_t t = 0; t < T; t++)
    for (int32_t j = 0; j < r; j++)
      u[t * r + j] = HZ_R (dot) (x + t * n_in, A + j * n_in, n_in);
}

void
HZ_R (hz_op_linear_bwd_mt) (HzOpsThreads *th, REAL *dx, REAL *dA, REAL *dB, const REAL *dy,
                            const REAL *x, const REAL *u, int64_t T, const HzMatrix *W,
                            const REAL *A, const REAL *B, int32_t r, REAL scaling)
{
  const int64_t n_in = W->n_in, n_out = W->n_out;

  (void) th;
  if (dx)
    {
      g_autofree REAL *w = g_new (REAL, ROW_TILE * n_in);
      g_autofree float *tmp = g_new (float, ROW_TILE * n_in);
      for (int64_t o0 = 0; o0 < n_out; o0 += ROW_TILE)
        {
          const int64_t nb = MIN (ROW_TILE, n_out - o0);
          HZ_R (dequant_rows) (W, o0, nb, w, tmp);
          for (int64_t t = 0; t < T; t++)
            for (int64_t j = 0; j < nb; j++)
              HZ_R (axpy) (dx + t * n_in, dy[t * n_out + o0 + j], w + j * n_in, n_in);
        }
    }
  if (A == NULL)
    return;

  g_autofree REAL *du = g_new0 (REAL, T * r);
  for (int64_t t = 0; t < T; t++)
    {
      const REAL *dyt = dy + t * n_out;
      REAL *dut = du + t * r;
      for (int64_t o = 0; o < n_out; o++)
        {
          const REAL g = scaling * dyt[o];
          HZ_R (axpy) (dut, g, B + o * r, r);
          if (dB)
            HZ_R (axpy) (dB + o * r, g, u + t * r, r);
        }
      for (int32_t j = 0; j < r; j++)
        {
          if (dA)
            HZ_R (axpy) (dA + j * n_in, dut[j], x + t * n_in, n_in);
          if (dx)
            HZ_R (axpy) (dx + t * n_in, dut[j], A + j * n_in, n_in);
        }
    }
}

#else
/* The float build: every product through train-ops-gemm.h (blocked kernel, threads split the
 * output columns, the base dequantized block by block into per-thread scratch). */

/* [rows, cols] -> [cols, rows] */
static float *
transpose_new (const float *a, int64_t rows, int64_t cols)
{
  float *t = g_new (float, MAX (rows * cols, 1));
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++)
      t[j * rows + i] = a[i * cols + j];
  return t;
}

void
HZ_R (hz_op_linear_fwd_mt) (HzOpsThreads *th, REAL *y, REAL *u, const REAL *x, int64_t T,
                            const HzMatrix *W, const float *bias, const REAL *A, const REAL *B,
                            int32_t r, REAL scaling)
{
  const int64_t n_in = W->n_in, n_out = W->n_out;
  OPS_THREADS (th);

  for (int64_t t = 0; t < T; t++)
    if (bias)
      memcpy (y + t * n_out, bias, n_out * sizeof (float));
    else
      memset (y + t * n_out, 0, n_out * sizeof (float));
  const HzGemmSrc w = hz_gemm_src_quant (W);
  hz_gemm_nt (th, y, n_out, x, n_in, T, &w);   /* y += x W^T */
  if (A == NULL)
    return;
  HZ_R (hz_op_lora_u_mt) (th, u, x, T, n_in, A, r);
  g_autofree float *us = g_new (float, T * r);
  for (int64_t i = 0; i < T * r; i++)
    us[i] = scaling * u[i];
  const HzGemmSrc b = hz_gemm_src_float (B, n_out, r, r);
  hz_gemm_nt (th, y, n_out, us, r, T, &b);     /* y += (scaling u) B^T */
}

void
HZ_R (hz_op_lora_u_mt) (HzOpsThreads *th, REAL *u, const REAL *x, int64_t T, int64_t n_in,
                        const REAL *A, int32_t r)
{
  OPS_THREADS (th);
  memset (u, 0, T * r * sizeof (float));
  const HzGemmSrc a = hz_gemm_src_float (A, r, n_in, n_in);
  hz_gemm_nt (th, u, r, x, n_in, T, &a);   /* u = x A^T */
}

void
HZ_R (hz_op_linear_bwd_mt) (HzOpsThreads *th, REAL *dx, REAL *dA, REAL *dB, const REAL *dy,
                            const REAL *x, const REAL *u, int64_t T, const HzMatrix *W,
                            const REAL *A, const REAL *B, int32_t r, REAL scaling)
{
  const int64_t n_in = W->n_in, n_out = W->n_out;
  OPS_THREADS (th);

  if (dx)
    {
      const HzGemmSrc w = hz_gemm_src_quant (W);
      hz_gemm_nn (th, dx, n_in, dy, n_out, T, &w);   /* dx += dy W */
    }
  if (A == NULL)
    return;

  /* du = scaling dy B  [T, r] */
  g_autofree float *du = g_new0 (float, T * r);
  const HzGemmSrc b = hz_gemm_src_float (B, n_out, r, r);
  hz_gemm_nn (th, du, r, dy, n_out, T, &b);
  for (int64_t i = 0; i < T * r; i++)
    du[i] *= scaling;
  if (dB)   /* dB += scaling dy^T u, computed as its transpose u^T dy [r, n_out] */
    {
      g_autofree float *ut = transpose_new (u, T, r);
      g_autofree float *dbt = g_new0 (float, (int64_t) r * n_out);
      const HzGemmSrc dys = hz_gemm_src_float (dy, T, n_out, n_out);
      hz_gemm_nn (th, dbt, n_out, ut, T, r, &dys);
      for (int64_t o = 0; o < n_out; o++)
        for (int32_t j = 0; j < r; j++)
          dB[o * r + j] += scaling * dbt[(int64_t) j * n_out + o];
    }
  if (dA)   /* dA += du^T x */
    {
      g_autofree float *dut = transpose_new (du, T, r);
      const HzGemmSrc xs = hz_gemm_src_float (x, T, n_in, n_in);
      hz_gemm_nn (th, dA, n_in, dut, T, r, &xs);
    }
  if (dx)   /* dx += du A */
    {
      const HzGemmSrc a = hz_gemm_src_float (A, r, n_in, n_in);
      hz_gemm_nn (th, dx, n_in, du, r, T, &a);
    }
}
#endif

void
HZ_R (hz_op_linear_fwd) (REAL *y, REAL *u, const REAL *x, int64_t T, const HzMatrix *W,
                         const float *bias, const REAL *A, const REAL *B, int32_t r,
                         REAL scaling)
{
  HZ_R (hz_op_linear_fwd_mt) (NULL, y, u, x, T, W, bias, A, B, r, scaling);
}

void
HZ_R (hz_op_linear_bwd) (REAL *dx, REAL *dA, REAL *dB, const REAL *dy, const REAL *x,
                         const REAL *u, int64_t T, const HzMatrix *W, const REAL *A,
                         const REAL *B, int32_t r, REAL scaling)
{
  HZ_R (hz_op_linear_bwd_mt) (NULL, dx, dA, dB, dy, x, u, T, W, A, B, r, scaling);
}

/* ------------------------------------------------ log-probs and cross-entropy */

static double
HZ_R (logsumexp) (const REAL *row, int64_t V)
{
  REAL mx = -INFINITY;
  for (int64_t v = 0; v < V; v++)
    mx = MAX (mx, row[v]);
  double s = 0;
  for (int64_t v = 0; v < V; v++)
    s += exp ((double) row[v] - mx);
  return mx + log (s);
}

/* dlogits[t] += g * (softmax - onehot(y)) for one row */
static void
HZ_R (softmax_minus_onehot) (REAL *drow, const REAL *row, int32_t y, int64_t V, double g)
{
  const double lse = HZ_R (logsumexp) (row, V);
  for (int64_t v = 0; v < V; v++)
    drow[v] += (REAL) (g * exp ((double) row[v] - lse));
  drow[y] -= (REAL) g;
}

typedef struct {
  const REAL *logits, *dlogp;
  REAL *logp, *dlogits;
  const int32_t *targets;
  int64_t V;
  double weight;
  double *row_loss;
} HZ_R (RowsJob);

static void
HZ_R (logprob_fwd_row) (int64_t t, guint ith, gpointer data)
{
  const HZ_R (RowsJob) *j = data;
  const int32_t y = j->targets[t];
  (void) ith;
  if (y < 0)
    {
      j->logp[t] = 0;
      return;
    }
  g_assert (y < j->V);
  const REAL *row = j->logits + t * j->V;
  j->logp[t] = (REAL) (row[y] - HZ_R (logsumexp) (row, j->V));
}

void
HZ_R (hz_op_logprob_fwd_mt) (HzOpsThreads *th, REAL *logp, const REAL *logits,
                             const int32_t *targets, int64_t T, int64_t V)
{
  OPS_THREADS (th);
  HZ_R (RowsJob) j = { .logits = logits, .logp = logp, .targets = targets, .V = V };
  hz_ops_parallel_for (th, T, 8.0 * V, HZ_R (logprob_fwd_row), &j);
}

void
HZ_R (hz_op_logprob_fwd) (REAL *logp, const REAL *logits, const int32_t *targets, int64_t T,
                          int64_t V)
{
  HZ_R (hz_op_logprob_fwd_mt) (NULL, logp, logits, targets, T, V);
}

static void
HZ_R (logprob_bwd_row) (int64_t t, guint ith, gpointer data)
{
  const HZ_R (RowsJob) *j = data;
  (void) ith;
  if (j->targets[t] >= 0 && j->dlogp[t] != 0)
    HZ_R (softmax_minus_onehot) (j->dlogits + t * j->V, j->logits + t * j->V, j->targets[t],
                                 j->V, -(double) j->dlogp[t]);
}

void
HZ_R (hz_op_logprob_bwd_mt) (HzOpsThreads *th, REAL *dlogits, const REAL *dlogp,
                             const REAL *logits, const int32_t *targets, int64_t T, int64_t V)
{
  OPS_THREADS (th);
  HZ_R (RowsJob) j = { .logits = logits, .dlogp = dlogp, .dlogits = dlogits,
                       .targets = targets, .V = V };
  hz_ops_parallel_for (th, T, 16.0 * V, HZ_R (logprob_bwd_row), &j);
}

void
HZ_R (hz_op_logprob_bwd) (REAL *dlogits, const REAL *dlogp, const REAL *logits,
                          const int32_t *targets, int64_t T, int64_t V)
{
  HZ_R (hz_op_logprob_bwd_mt) (NULL, dlogits, dlogp, logits, targets, T, V);
}

static void
HZ_R (cross_entropy_fwd_row) (int64_t t, guint ith, gpointer data)
{
  const HZ_R (RowsJob) *j = data;
  const int32_t y = j->targets[t];
  (void) ith;
  if (y < 0)
    return;
  g_assert (y < j->V);
  const REAL *row = j->logits + t * j->V;
  j->row_loss[t] = HZ_R (logsumexp) (row, j->V) - row[y];
}

double
HZ_R (hz_op_cross_entropy_fwd_mt) (HzOpsThreads *th, const REAL *logits,
                                   const int32_t *targets, int64_t T, int64_t V,
                                   int64_t *n_valid)
{
  OPS_THREADS (th);
  g_autofree double *row_loss = g_new (double, MAX (T, 1));
  HZ_R (RowsJob) j = { .logits = logits, .targets = targets, .V = V, .row_loss = row_loss };
  hz_ops_parallel_for (th, T, 8.0 * V, HZ_R (cross_entropy_fwd_row), &j);
  double loss = 0;
  int64_t n = 0;
  for (int64_t t = 0; t < T; t++)
    if (targets[t] >= 0)
      {
        loss += row_loss[t];
        n++;
      }
  if (n_valid)
    *n_valid = n;
  return loss;
}

double
HZ_R (hz_op_cross_entropy_fwd) (const REAL *logits, const int32_t *targets, int64_t T,
                                int64_t V, int64_t *n_valid)
{
  return HZ_R (hz_op_cross_entropy_fwd_mt) (NULL, logits, targets, T, V, n_valid);
}

static void
HZ_R (cross_entropy_bwd_row) (int64_t t, guint ith, gpointer data)
{
  const HZ_R (RowsJob) *j = data;
  (void) ith;
  if (j->targets[t] >= 0)
    HZ_R (softmax_minus_onehot) (j->dlogits + t * j->V, j->logits + t * j->V, j->targets[t],
                                 j->V, j->weight);
}

void
HZ_R (hz_op_cross_entropy_bwd_mt) (HzOpsThreads *th, REAL *dlogits, const REAL *logits,
                                   const int32_t *targets, int64_t T, int64_t V, double weight)
{
  OPS_THREADS (th);
  HZ_R (RowsJob) j = { .logits = logits, .dlogits = dlogits, .targets = targets, .V = V,
                       .weight = weight };
  hz_ops_parallel_for (th, T, 16.0 * V, HZ_R (cross_entropy_bwd_row), &j);
}

void
HZ_R (hz_op_cross_entropy_bwd) (REAL *dlogits, const REAL *logits, const int32_t *targets,
                                int64_t T, int64_t V, double weight)
{
  HZ_R (hz_op_cross_entropy_bwd_mt) (NULL, dlogits, logits, targets, T, V, weight);
}
