/* learner/ops-impl.c — training ops over REAL (see ops-decl.h for shapes and formulas).
 * Compiled twice, through ops-f32.c and ops-f64.c (HZ_INSTANCE_DOUBLE = 0 / 1). */
#include <math.h>
#include <string.h>
#include "ops.h"

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

void
HZ_R (hz_op_attention_fwd) (REAL *out, REAL *P, const REAL *q, const REAL *k, const REAL *v,
                            int64_t T, int32_t n_head, int32_t n_head_kv, int32_t hdk,
                            int32_t hdv)
{
  const int group = n_head / n_head_kv;
  const int64_t dq = (int64_t) n_head * hdk, dk = (int64_t) n_head_kv * hdk;
  const int64_t dov = (int64_t) n_head * hdv, dv = (int64_t) n_head_kv * hdv;
  const REAL scale = (REAL) (1.0 / sqrt ((double) hdk));

  g_assert (n_head % n_head_kv == 0);
  for (int32_t h = 0; h < n_head; h++)
    {
      const int kvh = h / group;
      for (int64_t t = 0; t < T; t++)
        {
          REAL *p = P + ((int64_t) h * T + t) * T;
          const REAL *qt = q + t * dq + (int64_t) h * hdk;
          REAL mx = -INFINITY;
          for (int64_t s = 0; s <= t; s++)
            {
              p[s] = HZ_R (dot) (qt, k + s * dk + (int64_t) kvh * hdk, hdk) * scale;
              mx = MAX (mx, p[s]);
            }
          double sum = 0;
          for (int64_t s = 0; s <= t; s++)
            {
              p[s] = (REAL) exp ((double) (p[s] - mx));
              sum += p[s];
            }
          const REAL inv = (REAL) (1.0 / sum);
          REAL *o = out + t * dov + (int64_t) h * hdv;
          memset (o, 0, hdv * sizeof (REAL));
          for (int64_t s = 0; s <= t; s++)
            {
              p[s] *= inv;
              HZ_R (axpy) (o, p[s], v + s * dv + (int64_t) kvh * hdv, hdv);
            }
          for (int64_t s = t + 1; s < T; s++)
            p[s] = 0;
        }
    }
}

void
HZ_R (hz_op_attention_bwd) (REAL *dq, REAL *dk, REAL *dv, const REAL *dout, const REAL *q,
                            const REAL *k, const REAL *v, const REAL *P, int64_t T,
                            int32_t n_head, int32_t n_head_kv, int32_t hdk, int32_t hdv)
{
  const int group = n_head / n_head_kv;
  const int64_t sq = (int64_t) n_head * hdk, sk = (int64_t) n_head_kv * hdk;
  const int64_t so = (int64_t) n_head * hdv, sv = (int64_t) n_head_kv * hdv;
  const REAL scale = (REAL) (1.0 / sqrt ((double) hdk));
  g_autofree REAL *dS = g_new (REAL, T);

  for (int32_t h = 0; h < n_head; h++)
    {
      const int kvh = h / group;
      for (int64_t t = 0; t < T; t++)
        {
          const REAL *p = P + ((int64_t) h * T + t) * T;
          const REAL *dot_ = dout + t * so + (int64_t) h * hdv;
          const REAL *qt = q + t * sq + (int64_t) h * hdk;
          REAL *dqt = dq + t * sq + (int64_t) h * hdk;
          double pdp = 0;
          for (int64_t s = 0; s <= t; s++)
            {
              dS[s] = HZ_R (dot) (dot_, v + s * sv + (int64_t) kvh * hdv, hdv);   /* dP */
              pdp += (double) p[s] * dS[s];
            }
          for (int64_t s = 0; s <= t; s++)
            {
              const REAL ds = p[s] * (dS[s] - (REAL) pdp) * scale;
              HZ_R (axpy) (dqt, ds, k + s * sk + (int64_t) kvh * hdk, hdk);
              HZ_R (axpy) (dk + s * sk + (int64_t) kvh * hdk, ds, qt, hdk);
              HZ_R (axpy) (dv + s * sv + (int64_t) kvh * hdv, p[s], dot_, hdv);
            }
        }
    }
}

/* ------------------------------------------------------------------- SwiGLU */

void
HZ_R (hz_op_swiglu_fwd) (REAL *h, const REAL *g, const REAL *u, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    h[i] = g[i] / (1 + (REAL) exp (-(double) g[i])) * u[i];
}

void
HZ_R (hz_op_swiglu_bwd) (REAL *dg, REAL *du, const REAL *dh, const REAL *g, const REAL *u,
                         int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    {
      const REAL s = 1 / (1 + (REAL) exp (-(double) g[i]));
      dg[i] += dh[i] * u[i] * s * (1 + g[i] * (1 - s));
      du[i] += dh[i] * g[i] * s;
    }
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

void
HZ_R (hz_op_linear_fwd) (REAL *y, REAL *u, const REAL *x, int64_t T, const HzMatrix *W,
                         const float *bias, const REAL *A, const REAL *B, int32_t r,
                         REAL scaling)
{
  const int64_t n_in = W->n_in, n_out = W->n_out;
  g_autofree REAL *w = g_new (REAL, ROW_TILE * n_in);
  g_autofree float *tmp = HZ_REAL_DOUBLE ? g_new (float, ROW_TILE * n_in) : NULL;

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
  for (int64_t t = 0; t < T; t++)
    {
      REAL *ut = u + t * r;
      for (int32_t j = 0; j < r; j++)
        ut[j] = HZ_R (dot) (x + t * n_in, A + j * n_in, n_in);
      for (int64_t o = 0; o < n_out; o++)
        y[t * n_out + o] += scaling * HZ_R (dot) (ut, B + o * r, r);
    }
}

void
HZ_R (hz_op_linear_bwd) (REAL *dx, REAL *dA, REAL *dB, const REAL *dy, const REAL *x,
                         const REAL *u, int64_t T, const HzMatrix *W, const REAL *A,
                         const REAL *B, int32_t r, REAL scaling)
{
  const int64_t n_in = W->n_in, n_out = W->n_out;

  if (dx)
    {
      g_autofree REAL *w = g_new (REAL, ROW_TILE * n_in);
      g_autofree float *tmp = HZ_REAL_DOUBLE ? g_new (float, ROW_TILE * n_in) : NULL;
      for (int64_t o0 = 0; o0 < n_out; o0 += ROW_TILE)
        {
          const int64_t nb = MIN (ROW_TILE, n_out - o0);
          HZ_R (dequant_rows) (W, o0, nb, w, tmp);
          for (int64_t t = 0; t < T; t++)
            for (int64_t j = 0; j < nb; j++)
              {
                const REAL g = dy[t * n_out + o0 + j];
                if (g != 0)
                  HZ_R (axpy) (dx + t * n_in, g, w + j * n_in, n_in);
              }
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
          if (g == 0)
            continue;
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

void
HZ_R (hz_op_logprob_fwd) (REAL *logp, const REAL *logits, const int32_t *targets, int64_t T,
                          int64_t V)
{
  for (int64_t t = 0; t < T; t++)
    {
      if (targets[t] < 0)
        {
          logp[t] = 0;
          continue;
        }
      g_assert (targets[t] < V);
      const REAL *row = logits + t * V;
      logp[t] = (REAL) (row[targets[t]] - HZ_R (logsumexp) (row, V));
    }
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

void
HZ_R (hz_op_logprob_bwd) (REAL *dlogits, const REAL *dlogp, const REAL *logits,
                          const int32_t *targets, int64_t T, int64_t V)
{
  for (int64_t t = 0; t < T; t++)
    if (targets[t] >= 0 && dlogp[t] != 0)
      HZ_R (softmax_minus_onehot) (dlogits + t * V, logits + t * V, targets[t], V,
                                   -(double) dlogp[t]);
}

double
HZ_R (hz_op_cross_entropy_fwd) (const REAL *logits, const int32_t *targets, int64_t T,
                                int64_t V, int64_t *n_valid)
{
  double loss = 0;
  int64_t n = 0;
  for (int64_t t = 0; t < T; t++)
    if (targets[t] >= 0)
      {
        g_assert (targets[t] < V);
        const REAL *row = logits + t * V;
        loss += HZ_R (logsumexp) (row, V) - row[targets[t]];
        n++;
      }
  if (n_valid)
    *n_valid = n;
  return loss;
}

void
HZ_R (hz_op_cross_entropy_bwd) (REAL *dlogits, const REAL *logits, const int32_t *targets,
                                int64_t T, int64_t V, double weight)
{
  for (int64_t t = 0; t < T; t++)
    if (targets[t] >= 0)
      HZ_R (softmax_minus_onehot) (dlogits + t * V, logits + t * V, targets[t], V, weight);
}
