/* tests/learner/test-ops.c — finite-difference gradient checks of every training op:
 * the f64 backward against central differences of the f64 forward (relative error
 * < 1e-4) and the f32 backward against the same differences (< 1e-2). Each loss is
 * L = sum(out * R) for a fixed random R, so dL/dout = R is fed to the backward.
 * The threaded (*_mt) float ops are checked on larger, ragged shapes: bit-identical for 1,
 * 2 and 3 threads (and with every op forced onto all threads), and the blocked float
 * products against the f64 loops. */
#include <glib.h>
#include <math.h>
#include <string.h>
#include "train-ops.h"
#include "grad-check.h"

#define TOL64 1e-4
#define TOL32 1e-2
#define H 1e-5

static double
weighted_sum (const double *y, const double *R, gsize n)
{
  double s = 0;
  for (gsize i = 0; i < n; i++)
    s += y[i] * R[i];
  return s;
}

/* ------------------------------------------------------------------ RMSNorm */

typedef struct { int64_t rows, d; double *x, *R, *wd; float *w; } NormCase;

static double
norm_loss (gpointer p)
{
  NormCase *c = p;
  for (int64_t j = 0; j < c->d; j++)
    c->w[j] = (float) c->wd[j];   /* w is float in the op: values and h are exact in float */
  g_autofree double *y = g_new (double, c->rows * c->d);
  g_autofree double *rstd = g_new (double, c->rows);
  hz_op_rmsnorm_fwd_f64 (y, rstd, c->x, c->w, c->rows, c->d, 1e-5f);
  return weighted_sum (y, c->R, c->rows * c->d);
}

static void
test_rmsnorm (void)
{
  g_autoptr (GRand) rng = g_rand_new_with_seed (1);
  NormCase c = { 5, 16 };
  const gsize n = c.rows * c.d;
  g_autofree double *x = c.x = g_new (double, n);
  g_autofree double *R = c.R = g_new (double, n);
  g_autofree double *wd = c.wd = g_new (double, c.d);
  g_autofree float *w = c.w = g_new (float, c.d);
  fill_uniform (rng, x, n, -2, 2);
  fill_uniform (rng, R, n, -1, 1);
  for (int64_t j = 0; j < c.d; j++)
    wd[j] = w[j] = (float) g_rand_int_range (rng, 32, 96) / 64.0f;

  /* f64 */
  g_autofree double *y = g_new (double, n), *rstd = g_new (double, c.rows);
  g_autofree double *dx = g_new0 (double, n), *dw = g_new0 (double, c.d);
  hz_op_rmsnorm_fwd_f64 (y, rstd, x, w, c.rows, c.d, 1e-5f);
  hz_op_rmsnorm_bwd_f64 (dx, dw, R, x, w, rstd, c.rows, c.d);
  /* f32 */
  g_autofree float *xf = to_f32 (x, n), *Rf = to_f32 (R, n), *yf = g_new (float, n);
  g_autofree float *rf = g_new (float, c.rows), *dxf = g_new0 (float, n), *dwf = g_new0 (float, c.d);
  hz_op_rmsnorm_fwd_f32 (yf, rf, xf, w, c.rows, c.d, 1e-5f);
  hz_op_rmsnorm_bwd_f32 (dxf, dwf, Rf, xf, w, rf, c.rows, c.d);
  g_autofree double *dx32 = to_f64 (dxf, n), *dw32 = to_f64 (dwf, c.d);

  grad_check ("rmsnorm dx", norm_loss, &c, x, n, NULL, 0, dx, dx32, H, TOL64, TOL32);
  /* L is linear in w: differences with h = 1/64 are exact in float */
  grad_check ("rmsnorm dw", norm_loss, &c, wd, c.d, NULL, 0, dw, dw32, 1.0 / 64, TOL64, TOL32);
}

/* --------------------------------------------------------------------- RoPE */

typedef struct { int64_t T; int32_t nh, hd, nrot; HzRopeMode mode; double *x, *R; float *cs; } RopeCase;

static double
rope_loss (gpointer p)
{
  RopeCase *c = p;
  const gsize n = c->T * c->nh * c->hd;
  g_autofree double *y = g_memdup2 (c->x, n * sizeof (double));
  hz_op_rope_f64 (y, c->cs, c->T, c->nh, c->hd, c->nrot, c->mode, FALSE);
  return weighted_sum (y, c->R, n);
}

static void
check_rope (HzRopeMode mode, const char *name)
{
  g_autoptr (GRand) rng = g_rand_new_with_seed (2 + mode);
  RopeCase c = { 4, 2, 6, 4, mode };
  const gsize n = c.T * c.nh * c.hd;
  g_autofree double *x = c.x = g_new (double, n), *R = c.R = g_new (double, n);
  g_autofree float *cs = c.cs = g_new (float, c.T * c.nrot);
  fill_uniform (rng, x, n, -1, 1);
  fill_uniform (rng, R, n, -1, 1);
  for (int64_t t = 0; t < c.T; t++)
    for (int i = 0; i < c.nrot / 2; i++)
      {
        const double th = t * pow (10000.0, -2.0 * i / c.nrot), m = 1.1;   /* YaRN-like magnitude */
        cs[t * c.nrot + 2 * i] = (float) (m * cos (th));
        cs[t * c.nrot + 2 * i + 1] = (float) (m * sin (th));
      }
  g_autofree double *g = g_memdup2 (R, n * sizeof (double));
  hz_op_rope_f64 (g, cs, c.T, c.nh, c.hd, c.nrot, mode, TRUE);
  g_autofree float *gf = to_f32 (R, n);
  hz_op_rope_f32 (gf, cs, c.T, c.nh, c.hd, c.nrot, mode, TRUE);
  g_autofree double *g32 = to_f64 (gf, n);
  grad_check (name, rope_loss, &c, x, n, NULL, 0, g, g32, H, TOL64, TOL32);

  /* the un-rotated tail of each head (n_rot < head_dim) passes through unchanged */
  g_autofree double *y = g_memdup2 (x, n * sizeof (double));
  hz_op_rope_f64 (y, cs, c.T, c.nh, c.hd, c.nrot, mode, FALSE);
  for (gsize i = 0; i < n; i++)
    if ((int) (i % c.hd) >= c.nrot)
      g_assert_cmpfloat (y[i], ==, x[i]);
  /* position 0 with magnitude 1.1 scales the rotated part only */
  g_assert_cmpfloat_with_epsilon (y[0], 1.1 * x[0], 1e-6);
}

static void
test_rope_norm (void)
{
  check_rope (HZ_ROPE_NORM, "rope (normal)");
}

static void
test_rope_neox (void)
{
  check_rope (HZ_ROPE_NEOX, "rope (neox)");
}

/* ---------------------------------------------------------------- attention */

typedef struct { int64_t T; int32_t nh, nkv, hdk, hdv; double *q, *k, *v, *R; } AttnCase;

static double
attn_loss (gpointer p)
{
  AttnCase *c = p;
  const gsize no = c->T * c->nh * c->hdv;
  g_autofree double *out = g_new (double, no), *P = g_new (double, c->nh * c->T * c->T);
  hz_op_attention_fwd_f64 (out, P, c->q, c->k, c->v, c->T, c->nh, c->nkv, c->hdk, c->hdv);
  return weighted_sum (out, c->R, no);
}

static void
test_attention (void)
{
  g_autoptr (GRand) rng = g_rand_new_with_seed (4);
  AttnCase c = { 6, 4, 2, 4, 3 };   /* GQA x2, value head size != key head size */
  const gsize nq = c.T * c.nh * c.hdk, nk = c.T * c.nkv * c.hdk, nv = c.T * c.nkv * c.hdv;
  const gsize no = c.T * c.nh * c.hdv, nP = c.nh * c.T * c.T;
  g_autofree double *q = c.q = g_new (double, nq), *k = c.k = g_new (double, nk);
  g_autofree double *v = c.v = g_new (double, nv), *R = c.R = g_new (double, no);
  fill_uniform (rng, q, nq, -2, 2);
  fill_uniform (rng, k, nk, -2, 2);
  fill_uniform (rng, v, nv, -1, 1);
  fill_uniform (rng, R, no, -1, 1);

  g_autofree double *out = g_new (double, no), *P = g_new (double, nP);
  g_autofree double *dq = g_new0 (double, nq), *dk = g_new0 (double, nk), *dv = g_new0 (double, nv);
  hz_op_attention_fwd_f64 (out, P, q, k, v, c.T, c.nh, c.nkv, c.hdk, c.hdv);
  hz_op_attention_bwd_f64 (dq, dk, dv, R, q, k, v, P, c.T, c.nh, c.nkv, c.hdk, c.hdv);
  /* causality: the probabilities of row t sum to 1 over s <= t and vanish beyond */
  for (int h = 0; h < c.nh; h++)
    for (int64_t t = 0; t < c.T; t++)
      {
        double s = 0;
        for (int64_t j = 0; j < c.T; j++)
          {
            const double pj = P[(h * c.T + t) * c.T + j];
            if (j > t)
              g_assert_cmpfloat (pj, ==, 0);
            s += pj;
          }
        g_assert_cmpfloat_with_epsilon (s, 1.0, 1e-12);
      }

  g_autofree float *qf = to_f32 (q, nq), *kf = to_f32 (k, nk), *vf = to_f32 (v, nv), *Rf = to_f32 (R, no);
  g_autofree float *of = g_new (float, no), *Pf = g_new (float, nP);
  g_autofree float *dqf = g_new0 (float, nq), *dkf = g_new0 (float, nk), *dvf = g_new0 (float, nv);
  hz_op_attention_fwd_f32 (of, Pf, qf, kf, vf, c.T, c.nh, c.nkv, c.hdk, c.hdv);
  hz_op_attention_bwd_f32 (dqf, dkf, dvf, Rf, qf, kf, vf, Pf, c.T, c.nh, c.nkv, c.hdk, c.hdv);
  g_autofree double *dq32 = to_f64 (dqf, nq), *dk32 = to_f64 (dkf, nk), *dv32 = to_f64 (dvf, nv);

  grad_check ("attention dq", attn_loss, &c, q, nq, NULL, 0, dq, dq32, H, TOL64, TOL32);
  grad_check ("attention dk (GQA)", attn_loss, &c, k, nk, NULL, 0, dk, dk32, H, TOL64, TOL32);
  grad_check ("attention dv (GQA)", attn_loss, &c, v, nv, NULL, 0, dv, dv32, H, TOL64, TOL32);
}

/* ------------------------------------------------------------------- SwiGLU */

typedef struct { int64_t n; double *g, *u, *R; } SwigluCase;

static double
swiglu_loss (gpointer p)
{
  SwigluCase *c = p;
  g_autofree double *h = g_new (double, c->n);
  hz_op_swiglu_fwd_f64 (h, c->g, c->u, c->n);
  return weighted_sum (h, c->R, c->n);
}

static void
test_swiglu (void)
{
  g_autoptr (GRand) rng = g_rand_new_with_seed (5);
  SwigluCase c = { 24 };
  g_autofree double *g = c.g = g_new (double, c.n), *u = c.u = g_new (double, c.n);
  g_autofree double *R = c.R = g_new (double, c.n);
  fill_uniform (rng, g, c.n, -4, 4);
  fill_uniform (rng, u, c.n, -2, 2);
  fill_uniform (rng, R, c.n, -1, 1);
  g_autofree double *dg = g_new0 (double, c.n), *du = g_new0 (double, c.n);
  hz_op_swiglu_bwd_f64 (dg, du, R, g, u, c.n);
  g_autofree float *gf = to_f32 (g, c.n), *uf = to_f32 (u, c.n), *Rf = to_f32 (R, c.n);
  g_autofree float *dgf = g_new0 (float, c.n), *duf = g_new0 (float, c.n);
  hz_op_swiglu_bwd_f32 (dgf, duf, Rf, gf, uf, c.n);
  g_autofree double *dg32 = to_f64 (dgf, c.n), *du32 = to_f64 (duf, c.n);
  grad_check ("swiglu dg", swiglu_loss, &c, g, c.n, NULL, 0, dg, dg32, H, TOL64, TOL32);
  grad_check ("swiglu du", swiglu_loss, &c, u, c.n, NULL, 0, du, du32, H, TOL64, TOL32);
}

/* ---------------------------------------------------------------- embedding */

typedef struct { int64_t T, V, d; double *table64; float *table; HzMatrix m; int32_t *tok; double *R; } EmbCase;

static double
emb_loss (gpointer p)
{
  EmbCase *c = p;
  for (int64_t i = 0; i < c->V * c->d; i++)
    c->table[i] = (float) c->table64[i];
  g_autofree double *y = g_new (double, c->T * c->d);
  hz_op_embedding_fwd_f64 (y, &c->m, c->tok, c->T);
  return weighted_sum (y, c->R, c->T * c->d);
}

static void
test_embedding (void)
{
  g_autoptr (GRand) rng = g_rand_new_with_seed (6);
  int32_t tok[5] = { 3, 0, 3, 6, 2 };   /* a repeated token accumulates */
  EmbCase c = { 5, 7, 4 };
  const gsize nt = c.V * c.d;
  g_autofree double *t64 = c.table64 = g_new (double, nt);
  g_autofree float *tab = c.table = g_new (float, nt);
  g_autofree double *R = c.R = g_new (double, c.T * c.d);
  c.tok = tok;
  for (gsize i = 0; i < nt; i++)
    t64[i] = tab[i] = g_rand_int_range (rng, -64, 64) / 64.0f;
  fill_uniform (rng, R, c.T * c.d, -1, 1);
  c.m = (HzMatrix) { "emb", tab, hz_quant_traits (HZ_TYPE_F32), c.d, c.V, c.d * sizeof (float) };

  g_autofree double *y = g_new (double, c.T * c.d);
  hz_op_embedding_fwd_f64 (y, &c.m, tok, c.T);
  for (int64_t t = 0; t < c.T; t++)
    for (int64_t j = 0; j < c.d; j++)
      g_assert_cmpfloat (y[t * c.d + j], ==, tab[tok[t] * c.d + j]);
  g_autofree double *dt = g_new0 (double, nt);
  hz_op_embedding_bwd_f64 (dt, R, tok, c.T, c.d);
  g_autofree float *Rf = to_f32 (R, c.T * c.d), *dtf = g_new0 (float, nt);
  hz_op_embedding_bwd_f32 (dtf, Rf, tok, c.T, c.d);
  g_autofree double *dt32 = to_f64 (dtf, nt);
  /* linear in the table: h = 1/64 is exact in float */
  grad_check ("embedding dtable", emb_loss, &c, t64, nt, NULL, 0, dt, dt32, 1.0 / 64, TOL64, TOL32);
}

/* ------------------------------------------------------------------- linear */

typedef struct {
  int64_t T, n_in, n_out; int32_t r; double s;
  const HzMatrix *W; const float *bias;
  double *x, *A, *B, *R;
} LinCase;

static double
lin_loss (gpointer p)
{
  LinCase *c = p;
  g_autofree double *y = g_new (double, c->T * c->n_out), *u = g_new (double, c->T * c->r);
  hz_op_linear_fwd_f64 (y, u, c->x, c->T, c->W, c->bias, c->A, c->B, c->r, c->s);
  return weighted_sum (y, c->R, c->T * c->n_out);
}

static void
check_linear (HzType type)
{
  g_autoptr (GRand) rng = g_rand_new_with_seed (7 + type);
  const HzQuantTraits *qt = hz_quant_traits (type);
  LinCase c = { 3, 64, 5, 3, 0.7 };
  const gsize nW = c.n_in * c.n_out, nx = c.T * c.n_in, nA = c.r * c.n_in, nB = c.n_out * c.r;
  const gsize ny = c.T * c.n_out;
  g_autofree float *wf = g_new (float, nW), *bias = g_new (float, c.n_out);
  for (gsize i = 0; i < nW; i++)
    wf[i] = (float) g_rand_double_range (rng, -0.3, 0.3);
  for (int64_t o = 0; o < c.n_out; o++)
    bias[o] = (float) g_rand_double_range (rng, -1, 1);
  const gsize row_bytes = hz_quant_row_size (type, c.n_in);
  g_autofree guint8 *wq = g_malloc (row_bytes * c.n_out);
  qt->from_float (wf, wq, nW);
  HzMatrix W = { "w", wq, qt, c.n_in, c.n_out, row_bytes };
  c.W = &W;
  c.bias = bias;
  g_autofree double *x = c.x = g_new (double, nx), *A = c.A = g_new (double, nA);
  g_autofree double *B = c.B = g_new (double, nB), *R = c.R = g_new (double, ny);
  fill_uniform (rng, x, nx, -1, 1);
  fill_uniform (rng, A, nA, -0.2, 0.2);
  fill_uniform (rng, B, nB, -0.5, 0.5);
  fill_uniform (rng, R, ny, -1, 1);

  /* forward against a direct evaluation with the dequantized base */
  g_autofree float *wd = g_new (float, nW);
  qt->to_float (wq, wd, nW);
  g_autofree double *y = g_new (double, ny), *u = g_new (double, c.T * c.r);
  hz_op_linear_fwd_f64 (y, u, x, c.T, &W, bias, A, B, c.r, c.s);
  for (int64_t t = 0; t < c.T; t++)
    for (int64_t o = 0; o < c.n_out; o++)
      {
        double ref = bias[o];
        for (int64_t i = 0; i < c.n_in; i++)
          ref += (double) wd[o * c.n_in + i] * x[t * c.n_in + i];
        for (int j = 0; j < c.r; j++)
          {
            double ax = 0;
            for (int64_t i = 0; i < c.n_in; i++)
              ax += A[j * c.n_in + i] * x[t * c.n_in + i];
            ref += c.s * B[o * c.r + j] * ax;
          }
        g_assert_cmpfloat_with_epsilon (y[t * c.n_out + o], ref, 1e-12);
      }

  g_autofree double *dx = g_new0 (double, nx), *dA = g_new0 (double, nA), *dB = g_new0 (double, nB);
  hz_op_linear_bwd_f64 (dx, dA, dB, R, x, u, c.T, &W, A, B, c.r, c.s);
  g_autofree float *xf = to_f32 (x, nx), *Af = to_f32 (A, nA), *Bf = to_f32 (B, nB), *Rf = to_f32 (R, ny);
  g_autofree float *yf = g_new (float, ny), *uf = g_new (float, c.T * c.r);
  g_autofree float *dxf = g_new0 (float, nx), *dAf = g_new0 (float, nA), *dBf = g_new0 (float, nB);
  hz_op_linear_fwd_f32 (yf, uf, xf, c.T, &W, bias, Af, Bf, c.r, (float) c.s);
  hz_op_linear_bwd_f32 (dxf, dAf, dBf, Rf, xf, uf, c.T, &W, Af, Bf, c.r, (float) c.s);
  g_autofree double *dx32 = to_f64 (dxf, nx), *dA32 = to_f64 (dAf, nA), *dB32 = to_f64 (dBf, nB);

  g_autofree char *n1 = g_strdup_printf ("linear %s dx", qt->name);
  g_autofree char *n2 = g_strdup_printf ("linear %s dA", qt->name);
  g_autofree char *n3 = g_strdup_printf ("linear %s dB", qt->name);
  grad_check (n1, lin_loss, &c, x, nx, NULL, 0, dx, dx32, H, TOL64, TOL32);
  grad_check (n2, lin_loss, &c, A, nA, NULL, 0, dA, dA32, H, TOL64, TOL32);
  grad_check (n3, lin_loss, &c, B, nB, NULL, 0, dB, dB32, H, TOL64, TOL32);
}

static void
test_linear_f32_base (void)
{
  check_linear (HZ_TYPE_F32);
}

static void
test_linear_q8_0_base (void)
{
  check_linear (HZ_TYPE_Q8_0);
}

static void
test_linear_q4_k_base (void)
{
  /* a 256-element-block format: rows of 256, forward and dx against dequantized rows */
  g_autoptr (GRand) rng = g_rand_new_with_seed (9);
  const HzQuantTraits *qt = hz_quant_traits (HZ_TYPE_Q4_K);
  const int64_t n_in = 256, n_out = 3, T = 2;
  g_autofree float *wf = g_new (float, n_in * n_out), *wd = g_new (float, n_in * n_out);
  for (int64_t i = 0; i < n_in * n_out; i++)
    wf[i] = (float) g_rand_double_range (rng, -1, 1);
  const gsize rb = hz_quant_row_size (HZ_TYPE_Q4_K, n_in);
  g_autofree guint8 *wq = g_malloc (rb * n_out);
  qt->from_float (wf, wq, n_in * n_out);
  qt->to_float (wq, wd, n_in * n_out);
  HzMatrix W = { "w", wq, qt, n_in, n_out, rb };
  g_autofree double *x = g_new (double, T * n_in), *dy = g_new (double, T * n_out);
  fill_uniform (rng, x, T * n_in, -1, 1);
  fill_uniform (rng, dy, T * n_out, -1, 1);
  /* no LoRA: y = x W^T and dx = dy W against the dequantized rows */
  g_autofree double *y = g_new (double, T * n_out), *dx = g_new0 (double, T * n_in);
  hz_op_linear_fwd_f64 (y, NULL, x, T, &W, NULL, NULL, NULL, 0, 0);
  hz_op_linear_bwd_f64 (dx, NULL, NULL, dy, x, NULL, T, &W, NULL, NULL, 0, 0);
  for (int64_t t = 0; t < T; t++)
    {
      for (int64_t o = 0; o < n_out; o++)
        {
          double ref = 0;
          for (int64_t i = 0; i < n_in; i++)
            ref += (double) wd[o * n_in + i] * x[t * n_in + i];
          g_assert_cmpfloat_with_epsilon (y[t * n_out + o], ref, 1e-10);
        }
      for (int64_t i = 0; i < n_in; i++)
        {
          double ref = 0;
          for (int64_t o = 0; o < n_out; o++)
            ref += dy[t * n_out + o] * wd[o * n_in + i];
          g_assert_cmpfloat_with_epsilon (dx[t * n_in + i], ref, 1e-12);
        }
    }
}

/* ------------------------------------------------ log-probs and cross-entropy */

typedef struct { int64_t T, V; double *logits, *R; const int32_t *tgt; double weight; } LpCase;

static double
logprob_loss (gpointer p)
{
  LpCase *c = p;
  g_autofree double *lp = g_new (double, c->T);
  hz_op_logprob_fwd_f64 (lp, c->logits, c->tgt, c->T, c->V);
  return weighted_sum (lp, c->R, c->T);
}

static double
ce_loss (gpointer p)
{
  LpCase *c = p;
  return c->weight * hz_op_cross_entropy_fwd_f64 (c->logits, c->tgt, c->T, c->V, NULL);
}

static void
test_logprob_and_ce (void)
{
  g_autoptr (GRand) rng = g_rand_new_with_seed (10);
  static const int32_t tgt[5] = { 2, -100, 8, 0, 5 };   /* one ignored row */
  LpCase c = { 5, 9 };
  const gsize n = c.T * c.V;
  g_autofree double *lg = c.logits = g_new (double, n), *R = c.R = g_new (double, c.T);
  c.tgt = tgt;
  fill_uniform (rng, lg, n, -3, 3);
  fill_uniform (rng, R, c.T, -1, 1);

  /* log-probabilities against a direct formula; the ignored row gets 0 */
  g_autofree double *lp = g_new (double, c.T);
  hz_op_logprob_fwd_f64 (lp, lg, tgt, c.T, c.V);
  for (int64_t t = 0; t < c.T; t++)
    {
      double z = 0;
      for (int64_t v = 0; v < c.V; v++)
        z += exp (lg[t * c.V + v]);
      g_assert_cmpfloat_with_epsilon (lp[t], tgt[t] < 0 ? 0 : lg[t * c.V + tgt[t]] - log (z), 1e-12);
    }

  g_autofree double *d = g_new0 (double, n);
  hz_op_logprob_bwd_f64 (d, R, lg, tgt, c.T, c.V);
  g_autofree float *lgf = to_f32 (lg, n), *Rf = to_f32 (R, c.T), *df = g_new0 (float, n);
  hz_op_logprob_bwd_f32 (df, Rf, lgf, tgt, c.T, c.V);
  g_autofree double *d32 = to_f64 (df, n);
  grad_check ("logprob dlogits", logprob_loss, &c, lg, n, NULL, 0, d, d32, H, TOL64, TOL32);

  int64_t nv = 0;
  const double sum = hz_op_cross_entropy_fwd_f64 (lg, tgt, c.T, c.V, &nv);
  g_assert_cmpint (nv, ==, 4);
  double ref = 0;
  for (int64_t t = 0; t < c.T; t++)
    ref -= lp[t];
  g_assert_cmpfloat_with_epsilon (sum, ref, 1e-12);
  c.weight = 1.0 / nv;
  g_autofree double *dc = g_new0 (double, n);
  hz_op_cross_entropy_bwd_f64 (dc, lg, tgt, c.T, c.V, c.weight);
  g_autofree float *dcf = g_new0 (float, n);
  hz_op_cross_entropy_bwd_f32 (dcf, lgf, tgt, c.T, c.V, c.weight);
  g_autofree double *dc32 = to_f64 (dcf, n);
  grad_check ("cross-entropy dlogits", ce_loss, &c, lg, n, NULL, 0, dc, dc32, H, TOL64, TOL32);
  for (int64_t v = 0; v < c.V; v++)
    g_assert_cmpfloat (dc[1 * c.V + v], ==, 0);   /* the ignored row has no gradient */
}

/* ------------------------------------------------------------ thread invariance */

static const guint n_threads_tried[] = { 1, 2, 3 };

/* A fresh HzOpsThreads of n threads; `force` splits even tiny ops across all of them. */
static HzOpsThreads *
threads_new (guint n, gboolean force)
{
  HzOpsThreads *th = hz_ops_threads_new (n);
  if (force)
    hz_ops_threads_set_min_work (th, 0);
  return th;
}

static void
assert_same_floats (const char *what, const float *a, const float *b, gsize n)
{
  if (memcmp (a, b, n * sizeof (float)) != 0)
    for (gsize i = 0; i < n; i++)
      if (memcmp (&a[i], &b[i], sizeof (float)) != 0)
        g_error ("%s: element %" G_GSIZE_FORMAT " differs across thread counts: %.9g vs %.9g",
                 what, i, a[i], b[i]);
}

/* max |a - b| / max |b| */
static double
rel_err (const float *a, const double *b, gsize n)
{
  double num = 0, den = 0;
  for (gsize i = 0; i < n; i++)
    {
      num = MAX (num, fabs ((double) a[i] - b[i]));
      den = MAX (den, fabs (b[i]));
    }
  g_assert_cmpfloat (den, >, 0);
  return num / den;
}

/* Linear forward and backward with LoRA on a ragged shape (T not a multiple of the 6-row
 * tile, n_out not a multiple of the 16-column panel, n_in over several 256-long reduction
 * slices, r not 16): every thread count gives the same bits, and the float products agree
 * with the f64 loops to float rounding. */
static void
check_linear_threads (HzType type)
{
  g_autoptr (GRand) rng = g_rand_new_with_seed (20 + type);
  const HzQuantTraits *qt = hz_quant_traits (type);
  const int64_t T = 37, n_in = 768, n_out = 150;
  const int32_t r = 5;
  const float s = 0.75f;
  const gsize nW = n_in * n_out, nx = T * n_in, ny = T * n_out, nA = r * n_in, nB = n_out * r;
  g_autofree float *wf = g_new (float, nW), *bias = g_new (float, n_out);
  for (gsize i = 0; i < nW; i++)
    wf[i] = (float) g_rand_double_range (rng, -0.5, 0.5);
  for (int64_t o = 0; o < n_out; o++)
    bias[o] = (float) g_rand_double_range (rng, -1, 1);
  const gsize rb = hz_quant_row_size (type, n_in);
  g_autofree guint8 *wq = g_malloc (rb * n_out);
  qt->from_float (wf, wq, nW);
  HzMatrix W = { "w", wq, qt, n_in, n_out, rb };
  g_autofree double *x = g_new (double, nx), *A = g_new (double, nA), *B = g_new (double, nB);
  g_autofree double *dy = g_new (double, ny);
  fill_uniform (rng, x, nx, -1, 1);
  fill_uniform (rng, A, nA, -0.2, 0.2);
  fill_uniform (rng, B, nB, -0.5, 0.5);
  fill_uniform (rng, dy, ny, -1, 1);
  g_autofree float *xf = to_f32 (x, nx), *Af = to_f32 (A, nA), *Bf = to_f32 (B, nB);
  g_autofree float *dyf = to_f32 (dy, ny);
  /* the f64 reference on the float-rounded inputs */
  g_autofree double *x3 = to_f64 (xf, nx), *A3 = to_f64 (Af, nA), *B3 = to_f64 (Bf, nB);
  g_autofree double *dy3 = to_f64 (dyf, ny);
  g_autofree double *y64 = g_new (double, ny), *u64 = g_new (double, T * r);
  g_autofree double *dx64 = g_new0 (double, nx), *dA64 = g_new0 (double, nA);
  g_autofree double *dB64 = g_new0 (double, nB);
  hz_op_linear_fwd_f64 (y64, u64, x3, T, &W, bias, A3, B3, r, s);
  hz_op_linear_bwd_f64 (dx64, dA64, dB64, dy3, x3, u64, T, &W, A3, B3, r, s);

  g_autofree float *y1 = NULL, *dx1 = NULL, *dA1 = NULL, *dB1 = NULL;
  for (guint force = 0; force < 2; force++)
    for (guint k = 0; k < G_N_ELEMENTS (n_threads_tried); k++)
      {
        g_autoptr (HzOpsThreads) th = threads_new (n_threads_tried[k], force);
        g_autofree float *y = g_new (float, ny), *u = g_new (float, T * r);
        g_autofree float *dx = g_new0 (float, nx), *dA = g_new0 (float, nA);
        g_autofree float *dB = g_new0 (float, nB);
        hz_op_linear_fwd_mt_f32 (th, y, u, xf, T, &W, bias, Af, Bf, r, s);
        hz_op_linear_bwd_mt_f32 (th, dx, dA, dB, dyf, xf, u, T, &W, Af, Bf, r, s);
        if (y1 == NULL)
          {
            g_assert_cmpfloat (rel_err (y, y64, ny), <, 1e-5);
            g_assert_cmpfloat (rel_err (dx, dx64, nx), <, 1e-5);
            g_assert_cmpfloat (rel_err (dA, dA64, nA), <, 1e-5);
            g_assert_cmpfloat (rel_err (dB, dB64, nB), <, 1e-5);
            y1 = g_steal_pointer (&y);
            dx1 = g_steal_pointer (&dx);
            dA1 = g_steal_pointer (&dA);
            dB1 = g_steal_pointer (&dB);
            continue;
          }
        assert_same_floats ("linear y", y, y1, ny);
        assert_same_floats ("linear dx", dx, dx1, nx);
        assert_same_floats ("linear dA", dA, dA1, nA);
        assert_same_floats ("linear dB", dB, dB1, nB);
      }
}

static void
test_linear_threads (void)
{
  check_linear_threads (HZ_TYPE_Q4_K);
  check_linear_threads (HZ_TYPE_Q8_0);
  check_linear_threads (HZ_TYPE_F32);
  check_linear_threads (HZ_TYPE_F16);
}

/* Attention (GQA), SwiGLU and the loss heads: the same bits for every thread count. */
static void
test_other_ops_threads (void)
{
  g_autoptr (GRand) rng = g_rand_new_with_seed (30);
  const int64_t T = 300, V = 700, n = 9001;   /* T > 256: two reduction slices in P V */
  const int32_t nh = 6, nkv = 2, hd = 24;
  const gsize nq = T * nh * hd, nk = T * nkv * hd, nP = (gsize) nh * T * T, nl = T * V;
  g_autofree double *q64 = g_new (double, nq), *k64 = g_new (double, nk);
  g_autofree double *v64 = g_new (double, nk), *do64 = g_new (double, nq);
  g_autofree double *g64 = g_new (double, n), *u64 = g_new (double, n);
  g_autofree double *dh64 = g_new (double, n), *lg64 = g_new (double, nl);
  g_autofree double *dlp64 = g_new (double, T);
  fill_uniform (rng, q64, nq, -1, 1);
  fill_uniform (rng, k64, nk, -1, 1);
  fill_uniform (rng, v64, nk, -1, 1);
  fill_uniform (rng, do64, nq, -1, 1);
  fill_uniform (rng, g64, n, -4, 4);
  fill_uniform (rng, u64, n, -2, 2);
  fill_uniform (rng, dh64, n, -1, 1);
  fill_uniform (rng, lg64, nl, -5, 5);
  fill_uniform (rng, dlp64, T, -1, 1);
  g_autofree int32_t *tgt = g_new (int32_t, T);
  int64_t n_counted = 0;
  for (int64_t t = 0; t < T; t++)
    {
      tgt[t] = t % 7 == 3 ? -100 : g_rand_int_range (rng, 0, V);
      n_counted += tgt[t] >= 0;
    }
  g_autofree float *q = to_f32 (q64, nq), *k = to_f32 (k64, nk), *v = to_f32 (v64, nk);
  g_autofree float *dout = to_f32 (do64, nq), *g = to_f32 (g64, n), *u = to_f32 (u64, n);
  g_autofree float *dh = to_f32 (dh64, n), *lg = to_f32 (lg64, nl), *dlp = to_f32 (dlp64, T);

  /* outputs of one thread count, concatenated: att, P, dq, dk, dv, h, dg, du, logp,
   * dlogits (logprob), dlogits (cross-entropy), loss */
  const gsize n_all = nq + nP + nq + 2 * nk + 3 * n + T + 2 * nl + 1;
  g_autofree float *first = NULL;
  for (guint force = 0; force < 2; force++)
    for (guint i = 0; i < G_N_ELEMENTS (n_threads_tried); i++)
      {
        g_autoptr (HzOpsThreads) th = threads_new (n_threads_tried[i], force);
        g_autofree float *all = g_new0 (float, n_all);
        float *att = all, *P = att + nq, *dq = P + nP, *dk = dq + nq, *dv = dk + nk;
        float *h = dv + nk, *dg = h + n, *du = dg + n, *logp = du + n, *dl1 = logp + T;
        float *dl2 = dl1 + nl, *loss = dl2 + nl;
        hz_op_attention_fwd_mt_f32 (th, att, P, q, k, v, T, nh, nkv, hd, hd);
        hz_op_attention_bwd_mt_f32 (th, dq, dk, dv, dout, q, k, v, P, T, nh, nkv, hd, hd);
        hz_op_swiglu_fwd_mt_f32 (th, h, g, u, n);
        hz_op_swiglu_bwd_mt_f32 (th, dg, du, dh, g, u, n);
        hz_op_logprob_fwd_mt_f32 (th, logp, lg, tgt, T, V);
        hz_op_logprob_bwd_mt_f32 (th, dl1, dlp, lg, tgt, T, V);
        int64_t nv = 0;
        *loss = (float) hz_op_cross_entropy_fwd_mt_f32 (th, lg, tgt, T, V, &nv);
        hz_op_cross_entropy_bwd_mt_f32 (th, dl2, lg, tgt, T, V, 1.0 / nv);
        g_assert_cmpint (nv, ==, n_counted);
        if (first == NULL)
          {
            /* the float attention (blocked products) against the f64 loops */
            g_autofree double *q3 = to_f64 (q, nq), *k3 = to_f64 (k, nk), *v3 = to_f64 (v, nk);
            g_autofree double *do3 = to_f64 (dout, nq), *att64 = g_new (double, nq);
            g_autofree double *P64 = g_new (double, nP), *dq64 = g_new0 (double, nq);
            g_autofree double *dk64 = g_new0 (double, nk), *dv64 = g_new0 (double, nk);
            hz_op_attention_fwd_f64 (att64, P64, q3, k3, v3, T, nh, nkv, hd, hd);
            hz_op_attention_bwd_f64 (dq64, dk64, dv64, do3, q3, k3, v3, P64, T, nh, nkv, hd, hd);
            g_assert_cmpfloat (rel_err (att, att64, nq), <, 1e-5);
            g_assert_cmpfloat (rel_err (P, P64, nP), <, 1e-5);
            g_assert_cmpfloat (rel_err (dq, dq64, nq), <, 1e-4);
            g_assert_cmpfloat (rel_err (dk, dk64, nk), <, 1e-4);
            g_assert_cmpfloat (rel_err (dv, dv64, nk), <, 1e-5);
            /* the threaded op is the serial one: the serial entry points agree */
            g_autofree float *att_s = g_new (float, nq), *P_s = g_new (float, nP);
            hz_op_attention_fwd_f32 (att_s, P_s, q, k, v, T, nh, nkv, hd, hd);
            assert_same_floats ("attention (serial entry)", att_s, att, nq);
            g_assert_cmpfloat ((float) hz_op_cross_entropy_fwd_f32 (lg, tgt, T, V, NULL), ==, *loss);
            first = g_steal_pointer (&all);
            continue;
          }
        assert_same_floats ("attention, swiglu, log-probs, cross-entropy", all, first, n_all);
      }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/learner/ops/rmsnorm", test_rmsnorm);
  g_test_add_func ("/learner/ops/rope-normal", test_rope_norm);
  g_test_add_func ("/learner/ops/rope-neox", test_rope_neox);
  g_test_add_func ("/learner/ops/attention-gqa", test_attention);
  g_test_add_func ("/learner/ops/swiglu", test_swiglu);
  g_test_add_func ("/learner/ops/embedding", test_embedding);
  g_test_add_func ("/learner/ops/linear-lora-f32-base", test_linear_f32_base);
  g_test_add_func ("/learner/ops/linear-lora-q8_0-base", test_linear_q8_0_base);
  g_test_add_func ("/learner/ops/linear-q4_k-base", test_linear_q4_k_base);
  g_test_add_func ("/learner/ops/logprob-cross-entropy", test_logprob_and_ce);
  g_test_add_func ("/learner/ops/linear-threads", test_linear_threads);
  g_test_add_func ("/learner/ops/other-ops-threads", test_other_ops_threads);
  return g_test_run ();
}
