/* tests/engine/test-synth.c — random-weight models (engine/synth.h) through the engine.
 *
 * For every weight format of the quant table (those without an encoder, whose ggml
 * quantizer needs an importance matrix, as random blocks: hz_synth_random_blocks), a small
 * custom shape
 * (dim 256, 2 layers, 4 heads, 2 KV heads, FFN 512; vocabulary of stories260K) is written
 * with all matrices in that format; the engine's logits for a fixed 8-token prompt are
 * compared with a float64 reference forward written here over the dequantized weights, and
 * 24 greedy tokens are decoded without NaN/Inf. The difference comes from the engine's
 * float32 arithmetic and, for quantized formats, from quantizing the activations to the
 * format's vec_dot_type (Q8_0/Q8_1/Q8_K, F16, BF16); the tolerance per activation format is
 * stated in `tolerance()`, relative to the largest reference logit.
 * Also: qwen2 (biases) and qwen3 (q/k norms, head_dim != dim/heads), the mixture-of-experts
 * shapes (tiny-qwen3moe, tiny-mixtral, tiny-qwen2moe with its shared expert: the reference
 * routes in float64 as llm.h describes), the named shapes, seeds and thread counts.
 * Gemma (tiny-gemma3, tiny-gemma2: 48-token prompts through a 32-token window) against the
 * same reference written from the models' definition (Hugging Face's modeling_gemma2/3):
 * embeddings * sqrt(n_embd), window layers with their own RoPE, q/k norms, the query scale,
 * soft-capping, post-norms, the exact tanh GELU (the engine uses ggml's fp16 GELU table,
 * hence the wider F32 tolerance), tied output; and decoding past the window equal to a
 * full recompute of every prefix.
 * gpt-oss (tiny-gpt-oss: F32 over 48 tokens through its 32-token window, Q8_0 and MXFP4 over
 * 8) against its definition (HF modeling_gpt_oss, the model card): q/k/v/o biases, YaRN
 * RoPE, each head's sink logit in the softmax, even layers windowed, the biased router's
 * top-k logits softmaxed, experts with biases and the clamped SwiGLU.
 *
 * Needs the vocabulary of ../shared/models/stories260K.gguf (skipped when absent).
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gguf.h"
#include "hanzo/engine.h"
#include "quant.h"
#include "synth.h"
#include "synth-test-util.h"

/* ------------------------------------------------- float64 reference forward */

typedef struct {
  HzGguf *g;
  int d, n_layer, n_head, n_kv, hd, n_ff, n_vocab;
  double eps, base;
  gboolean neox;
  /* mixture of experts (n_expert 0: dense) */
  int n_expert, n_used, n_ff_exp, n_ff_shexp;
  gboolean norm_w;     /* renormalise the selected probabilities */
  double min_gap;      /* smallest gap between the k-th and (k+1)-th probability seen */
  /* gemma2 / gemma3 (gemma FALSE: none of these apply) */
  gboolean gemma;
  double attn_scale, attn_softcap, final_softcap;
  int window, swa_period;       /* window layers: il % swa_period < swa_period - 1 */
  double base_swa, scale_global; /* RoPE base of window layers; freq scale of the others */
  /* gpt-oss (gpt_oss FALSE: none of these apply) */
  gboolean gpt_oss;
  double yarn_factor;  /* 0: no YaRN */
  int yarn_orig;
  GHashTable *cache;  /* name → double[] */
} Ref;

static const double *
W (Ref *r, const char *fmt, int l)
{
  char name[96];
  g_snprintf (name, sizeof name, fmt, l);
  double *d = g_hash_table_lookup (r->cache, name);
  if (d)
    return d;
  const HzGgufTensor *t = hz_gguf_find_tensor (r->g, name);
  if (!t)
    return NULL;
  int64_t n = t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3];
  g_autofree float *f = g_new (float, n);
  hz_quant_traits (t->type)->to_float (t->data, f, n);
  d = g_new (double, n);
  for (int64_t i = 0; i < n; i++)
    d[i] = f[i];
  g_hash_table_insert (r->cache, g_strdup (name), d);
  return d;
}

static void
matvec (const double *w, const double *x, double *y, int n_in, int n_out)
{
  for (int o = 0; o < n_out; o++)
    {
      double s = 0;
      for (int i = 0; i < n_in; i++)
        s += w[(int64_t) o * n_in + i] * x[i];
      y[o] = s;
    }
}

static void
rmsnorm (double *x, const double *w, int n, double eps)
{
  double ss = 0;
  for (int i = 0; i < n; i++)
    ss += x[i] * x[i];
  double sc = 1.0 / sqrt (ss / n + eps);
  for (int i = 0; i < n; i++)
    x[i] *= sc * w[i];
}

/* YaRN's correction dimension (Peng et al. 2023, HF _compute_yarn_parameters): the
 * dimension whose wavelength fits `rotations` times into the original context */
static double
yarn_dim (const Ref *r, double rotations, double base)
{
  return r->hd * log (r->yarn_orig / (rotations * 2 * G_PI)) / (2 * log (base));
}

static void
rope (const Ref *r, double *v, int pos, double base, double scale)
{
  /* YaRN (gpt-oss): frequencies blended between interpolation (/ factor) and extrapolation
   * by a ramp over the dimensions [floor(dim(32)), ceil(dim(1))] (beta_fast 32, beta_slow 1;
   * rounded as llama.cpp's ggml_rope_yarn_corr_dims does), cos and sin scaled by
   * 0.1 ln(factor) + 1 */
  const double lo = r->yarn_factor > 0 ? MAX (0, floor (yarn_dim (r, 32, base))) : 0;
  const double hi = r->yarn_factor > 0 ? MIN (r->hd - 1, ceil (yarn_dim (r, 1, base))) : 0;
  const double mscale = r->yarn_factor > 0 ? 0.1 * log (r->yarn_factor) + 1 : 1;
  for (int i = 0; i < r->hd / 2; i++)
    {
      double th = pos * scale * pow (base, -2.0 * i / r->hd);
      if (r->yarn_factor > 0)
        {
          const double extrap = pos * pow (base, -2.0 * i / r->hd), interp = extrap / r->yarn_factor;
          const double ramp = 1 - CLAMP ((i - lo) / MAX (0.001, hi - lo), 0.0, 1.0);
          th = interp * (1 - ramp) + extrap * ramp;
        }
      int a = r->neox ? i : 2 * i, b = r->neox ? i + r->hd / 2 : 2 * i + 1;
      double x0 = v[a], x1 = v[b];
      v[a] = (x0 * cos (th) - x1 * sin (th)) * mscale;
      v[b] = (x0 * sin (th) + x1 * cos (th)) * mscale;
    }
}

typedef enum { GLU_SILU, GLU_GELU, GLU_OAI } Glu;

/* SwiGLU FFN of one row: o = down (silu (gate h) * up h), widths d -> F -> d; GLU_GELU:
 * GeGLU, o = down (gelu_tanh (gate h) * up h); GLU_OAI: gpt-oss's clamped SwiGLU (its model
 * card and HF modeling_gpt_oss), g = min(gate h + bg, 7), u = clamp(up h + bu, -7, 7),
 * o = down ((u + 1) g sigmoid(1.702 g)) + bd. Biases may be NULL (none). */
static void
ref_glu_ffn (const double *wg, const double *wu, const double *wd, const double *bg,
             const double *bu, const double *bd, const double *h, double *o, int d, int F,
             Glu glu)
{
  double *gg = g_new (double, F), *u = g_new (double, F);
  matvec (wg, h, gg, d, F);
  matvec (wu, h, u, d, F);
  for (int i = 0; i < F; i++)
    {
      double x = gg[i] + (bg ? bg[i] : 0), y = u[i] + (bu ? bu[i] : 0);
      if (glu == GLU_OAI)
        gg[i] = MIN (x, 7.0) / (1 + exp (-1.702 * MIN (x, 7.0))) * (CLAMP (y, -7.0, 7.0) + 1);
      else
        gg[i] = (glu == GLU_GELU ? 0.5 * x * (1 + tanh (sqrt (2 / G_PI) * (x + 0.044715 * x * x * x)))
                                 : x / (1 + exp (-x))) * y;
    }
  matvec (wd, gg, o, F, d);
  for (int i = 0; bd && i < d; i++)
    o[i] += bd[i];
  g_free (gg);
  g_free (u);
}

/* The mixture-of-experts FFN of one row (llm.h): softmax router, top-k (ties to the lower
 * id), optional renormalisation, weighted sum of the selected SwiGLU experts, plus the
 * sigmoid-gated shared expert when the layer has one. */
static void
ref_moe_ffn (Ref *r, int l, const double *h, double *out)
{
  const int d = r->d, ne = r->n_expert, k = r->n_used, fe = r->n_ff_exp;
  double *p = g_new (double, ne), *o = g_new (double, d);
  int *ids = g_new (int, k);
  double mx = -INFINITY, sum = 0;
  matvec (W (r, "blk.%d.ffn_gate_inp.weight", l), h, p, d, ne);
  const double *rb = W (r, "blk.%d.ffn_gate_inp.bias", l);
  for (int e = 0; rb && e < ne; e++)
    p[e] += rb[e];
  for (int e = 0; e < ne; e++)
    mx = MAX (mx, p[e]);
  /* gpt-oss routes on the logits and softmaxes the selected ones (below) */
  for (int e = 0; !r->gpt_oss && e < ne; e++)
    sum += (p[e] = exp (p[e] - mx));
  for (int e = 0; !r->gpt_oss && e < ne; e++)
    p[e] /= sum;
  double wsum = 0;
  for (int j = 0; j < k; j++)
    {
      int best = -1;
      for (int e = 0; e < ne; e++)
        {
          gboolean taken = FALSE;
          for (int i = 0; i < j; i++)
            taken |= ids[i] == e;
          if (!taken && (best < 0 || p[e] > p[best]))
            best = e;
        }
      ids[j] = best;
      wsum += p[best];
    }
  for (int e = 0; e < ne && k < ne; e++)  /* gap between the last selected and the rest */
    {
      gboolean taken = FALSE;
      for (int i = 0; i < k; i++)
        taken |= ids[i] == e;
      if (!taken)
        r->min_gap = MIN (r->min_gap, p[ids[k - 1]] - p[e]);
    }
  const double *gx = W (r, "blk.%d.ffn_gate_exps.weight", l), *ux = W (r, "blk.%d.ffn_up_exps.weight", l),
               *dx = W (r, "blk.%d.ffn_down_exps.weight", l);
  const double *gb = W (r, "blk.%d.ffn_gate_exps.bias", l), *ub = W (r, "blk.%d.ffn_up_exps.bias", l),
               *db = W (r, "blk.%d.ffn_down_exps.bias", l);
  const gsize per = (gsize) d * fe;
  double ssel = 0;   /* gpt-oss: softmax over the selected logits */
  for (int j = 0; r->gpt_oss && j < k; j++)
    ssel += exp (p[ids[j]] - p[ids[0]]);
  memset (out, 0, d * sizeof *out);
  for (int j = 0; j < k; j++)
    {
      const double w = r->gpt_oss ? exp (p[ids[j]] - p[ids[0]]) / ssel
                       : r->norm_w ? p[ids[j]] / wsum : p[ids[j]];
      ref_glu_ffn (gx + ids[j] * per, ux + ids[j] * per, dx + ids[j] * per,
                   gb ? gb + (gsize) ids[j] * fe : NULL, ub ? ub + (gsize) ids[j] * fe : NULL,
                   db ? db + (gsize) ids[j] * d : NULL, h, o, d, fe, r->gpt_oss ? GLU_OAI : GLU_SILU);
      for (int i = 0; i < d; i++)
        out[i] += w * o[i];
    }
  const double *sg = W (r, "blk.%d.ffn_gate_inp_shexp.weight", l);
  if (sg)
    {
      double gl = 0;
      for (int i = 0; i < d; i++)
        gl += sg[i] * h[i];
      const double g = 1.0 / (1.0 + exp (-gl));
      ref_glu_ffn (W (r, "blk.%d.ffn_gate_shexp.weight", l), W (r, "blk.%d.ffn_up_shexp.weight", l),
                   W (r, "blk.%d.ffn_down_shexp.weight", l), NULL, NULL, NULL, h, o, d,
                   r->n_ff_shexp, GLU_SILU);
      for (int i = 0; i < d; i++)
        out[i] += g * o[i];
    }
  g_free (p);
  g_free (o);
  g_free (ids);
}

/* logits [n][n_vocab] */
static double *
ref_forward (Ref *r, const HzToken *toks, int n)
{
  const int d = r->d, dq = r->n_head * r->hd, dk = r->n_kv * r->hd, F = r->n_ff;
  double *kc = g_new0 (double, (gsize) r->n_layer * n * dk), *vc = g_new0 (double, (gsize) r->n_layer * n * dk);
  double *logits = g_new0 (double, (gsize) n * r->n_vocab);
  double *x = g_new (double, d), *h = g_new (double, d), *q = g_new (double, dq), *k = g_new (double, dk),
         *v = g_new (double, dk), *att = g_new (double, dq), *o = g_new (double, d),
         *sc = g_new (double, n);
  const double *emb = W (r, "token_embd.weight", 0), *outw = W (r, "output.weight", 0);
  for (int p = 0; p < n; p++)
    {
      memcpy (x, emb + (gsize) toks[p] * d, d * sizeof *x);
      for (int i = 0; r->gemma && i < d; i++)
        x[i] *= sqrt ((double) d);
      for (int l = 0; l < r->n_layer; l++)
        {
          const gboolean swa = r->window > 0 && l % r->swa_period < r->swa_period - 1;
          const double base = swa ? r->base_swa : r->base, fscale = swa ? 1.0 : r->scale_global;
          const int j0 = swa ? MAX (0, p + 1 - r->window) : 0;  /* first position attended */
          memcpy (h, x, d * sizeof *h);
          rmsnorm (h, W (r, "blk.%d.attn_norm.weight", l), d, r->eps);
          matvec (W (r, "blk.%d.attn_q.weight", l), h, q, d, dq);
          matvec (W (r, "blk.%d.attn_k.weight", l), h, k, d, dk);
          matvec (W (r, "blk.%d.attn_v.weight", l), h, v, d, dk);
          const double *bq = W (r, "blk.%d.attn_q.bias", l), *bk = W (r, "blk.%d.attn_k.bias", l),
                       *bv = W (r, "blk.%d.attn_v.bias", l), *qn = W (r, "blk.%d.attn_q_norm.weight", l),
                       *kn = W (r, "blk.%d.attn_k_norm.weight", l);
          for (int i = 0; bq && i < dq; i++)
            q[i] += bq[i];
          for (int i = 0; bk && i < dk; i++)
            k[i] += bk[i], v[i] += bv[i];
          for (int hh = 0; hh < r->n_head; hh++)
            {
              if (qn)
                rmsnorm (q + hh * r->hd, qn, r->hd, r->eps);
              rope (r, q + hh * r->hd, p, base, fscale);
            }
          for (int hh = 0; hh < r->n_kv; hh++)
            {
              if (kn)
                rmsnorm (k + hh * r->hd, kn, r->hd, r->eps);
              rope (r, k + hh * r->hd, p, base, fscale);
            }
          memcpy (kc + ((gsize) l * n + p) * dk, k, dk * sizeof *k);
          memcpy (vc + ((gsize) l * n + p) * dk, v, dk * sizeof *v);
          for (int hh = 0; hh < r->n_head; hh++)
            {
              const int kvh = hh / (r->n_head / r->n_kv);
              double mx = -INFINITY, sum = 0;
              for (int j = j0; j <= p; j++)
                {
                  double s = 0;
                  for (int e = 0; e < r->hd; e++)
                    s += q[hh * r->hd + e] * kc[((gsize) l * n + j) * dk + kvh * r->hd + e];
                  sc[j] = r->gemma ? s * r->attn_scale : s / sqrt ((double) r->hd);
                  if (r->attn_softcap > 0)
                    sc[j] = r->attn_softcap * tanh (sc[j] / r->attn_softcap);
                  mx = MAX (mx, sc[j]);
                }
              /* gpt-oss: the head's sink logit joins the softmax (its value is zero) */
              const double *sinks = W (r, "blk.%d.attn_sinks.weight", l);
              if (sinks)
                mx = MAX (mx, sinks[hh]);
              for (int j = j0; j <= p; j++)
                sum += (sc[j] = exp (sc[j] - mx));
              if (sinks)
                sum += exp (sinks[hh] - mx);
              for (int e = 0; e < r->hd; e++)
                {
                  double acc = 0;
                  for (int j = j0; j <= p; j++)
                    acc += sc[j] / sum * vc[((gsize) l * n + j) * dk + kvh * r->hd + e];
                  att[hh * r->hd + e] = acc;
                }
            }
          matvec (W (r, "blk.%d.attn_output.weight", l), att, o, dq, d);
          const double *bo = W (r, "blk.%d.attn_output.bias", l);
          for (int i = 0; bo && i < d; i++)
            o[i] += bo[i];
          if (r->gemma)
            rmsnorm (o, W (r, "blk.%d.post_attention_norm.weight", l), d, r->eps);
          for (int i = 0; i < d; i++)
            x[i] += o[i];
          memcpy (h, x, d * sizeof *h);
          rmsnorm (h, W (r, r->gpt_oss ? "blk.%d.post_attention_norm.weight" : "blk.%d.ffn_norm.weight", l),
                   d, r->eps);
          if (r->n_expert > 0)
            ref_moe_ffn (r, l, h, o);
          else
            ref_glu_ffn (W (r, "blk.%d.ffn_gate.weight", l), W (r, "blk.%d.ffn_up.weight", l),
                         W (r, "blk.%d.ffn_down.weight", l), NULL, NULL, NULL, h, o, d, F,
                         r->gemma ? GLU_GELU : GLU_SILU);
          if (r->gemma)
            rmsnorm (o, W (r, "blk.%d.post_ffw_norm.weight", l), d, r->eps);
          for (int i = 0; i < d; i++)
            x[i] += o[i];
        }
      memcpy (h, x, d * sizeof *h);
      rmsnorm (h, W (r, "output_norm.weight", 0), d, r->eps);
      double *lg = logits + (gsize) p * r->n_vocab;
      matvec (outw ? outw : emb, h, lg, d, r->n_vocab);
      for (int v = 0; r->final_softcap > 0 && v < r->n_vocab; v++)
        lg[v] = r->final_softcap * tanh (lg[v] / r->final_softcap);
    }
  g_free (kc); g_free (vc); g_free (x); g_free (h); g_free (q); g_free (k); g_free (v);
  g_free (att); g_free (o); g_free (sc);
  return logits;
}

/* ------------------------------------------------------------------ tests */

#define SHAPE "custom:dim=256,layers=2,heads=4,kv=2,ffn=512,ctx=256"

/* max |engine - reference| allowed, as a fraction of max |reference logit|, by the
 * activation format the weight format is dotted against */
static double
tolerance (uint32_t type)
{
  const HzQuantTraits *t = hz_quant_traits (type);
  switch (t->vec_dot_type)
    {
    case HZ_TYPE_F32:  return 1e-4;
    case HZ_TYPE_F16:  return 5e-3;   /* activations rounded to fp16 (11-bit mantissa) */
    case HZ_TYPE_BF16: return 3e-2;   /* activations rounded to bf16 (8-bit mantissa) */
    default:           return 6e-2;   /* 8-bit activations (Q8_0 / Q8_1 / Q8_K) */
    }
}

typedef struct {
  const char *arch;
  const char *shape;
  uint32_t    type;
} Case;

static char *
write_synth (const Case *c, guint64 seed, guint threads, GError **error)
{
  return hz_test_synth_write ("synth", c->shape, c->arch, c->type, seed, threads, error);
}

/* Read the reference's hyperparameters from the written file. */
static void
ref_open (Ref *r, const char *arch, const char *path)
{
  g_autoptr (GError) error = NULL;
  memset (r, 0, sizeof *r);
  r->g = hz_gguf_open (path, &error);
  g_assert_no_error (error);
  r->cache = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  char key[96];
  uint32_t u;
  float f;
#define GET(s, dst) (g_snprintf (key, sizeof key, "%s.%s", arch, s), hz_gguf_get_u32 (r->g, key, &u) ? (dst = (int) u, 1) : 0)
  g_assert_true (GET ("embedding_length", r->d));
  g_assert_true (GET ("block_count", r->n_layer));
  g_assert_true (GET ("attention.head_count", r->n_head));
  g_assert_true (GET ("attention.head_count_kv", r->n_kv));
  g_assert_true (GET ("feed_forward_length", r->n_ff));
  g_assert_true (GET ("rope.dimension_count", r->hd));
  if (GET ("expert_count", r->n_expert))
    {
      g_assert_true (GET ("expert_used_count", r->n_used));
      if (!GET ("expert_feed_forward_length", r->n_ff_exp))
        r->n_ff_exp = r->n_ff;   /* llama (Mixtral): the experts have the dense width */
      if (!GET ("expert_shared_feed_forward_length", r->n_ff_shexp))
        r->n_ff_shexp = r->n_ff;
      r->norm_w = strcmp (arch, "qwen2moe") != 0;   /* llama.cpp: Mixtral and qwen3moe */
    }
#undef GET
  r->min_gap = INFINITY;
  g_snprintf (key, sizeof key, "%s.attention.layer_norm_rms_epsilon", arch);
  g_assert_true (hz_gguf_get_f32 (r->g, key, &f));
  r->eps = f;
  g_snprintf (key, sizeof key, "%s.rope.freq_base", arch);
  g_assert_true (hz_gguf_get_f32 (r->g, key, &f));
  r->base = f;
  r->neox = strcmp (arch, "llama") != 0;
  r->n_vocab = (int) hz_gguf_find_tensor (r->g, "token_embd.weight")->ne[1];
  r->gemma = g_str_has_prefix (arch, "gemma");
  r->scale_global = 1.0;
  if (r->gemma)
    {
      /* Gemma's definition (config.json of the models; HF modeling_gemma2/3): the query
       * scaled by query_pre_attn_scalar^-1/2 = head_dim^-1/2 for these shapes, window layers
       * with a period of 2 (gemma2) or 6 (gemma3), soft-capping 50/30 (gemma2) */
      const gboolean g2 = strcmp (arch, "gemma2") == 0;
      r->attn_scale = 1.0 / sqrt ((double) r->hd);
      r->swa_period = g2 ? 2 : 6;
      g_snprintf (key, sizeof key, "%s.attention.sliding_window", arch);
      g_assert_true (hz_gguf_get_u32 (r->g, key, &u));
      r->window = (int) u;
      r->base_swa = r->base;
      g_snprintf (key, sizeof key, "%s.rope.freq_base_swa", arch);
      if (hz_gguf_get_f32 (r->g, key, &f))
        r->base_swa = f;
      g_snprintf (key, sizeof key, "%s.rope.scaling.factor", arch);
      if (hz_gguf_get_f32 (r->g, key, &f))
        r->scale_global = 1.0 / f;
      if (g2)
        {
          r->attn_softcap = 50;
          r->final_softcap = 30;
        }
    }
  r->gpt_oss = strcmp (arch, "gpt-oss") == 0;
  if (r->gpt_oss)
    {
      /* gpt-oss's definition (HF modeling_gpt_oss, config.json): even layers attend through
       * the sliding window, odd ones to everything; YaRN over the original context */
      r->swa_period = 2;
      g_snprintf (key, sizeof key, "%s.attention.sliding_window", arch);
      g_assert_true (hz_gguf_get_u32 (r->g, key, &u));
      r->window = (int) u;
      r->base_swa = r->base;
      g_snprintf (key, sizeof key, "%s.rope.scaling.factor", arch);
      g_assert_true (hz_gguf_get_f32 (r->g, key, &f));
      r->yarn_factor = f;
      g_snprintf (key, sizeof key, "%s.rope.scaling.original_context_length", arch);
      g_assert_true (hz_gguf_get_u32 (r->g, key, &u));
      r->yarn_orig = (int) u;
      g_snprintf (key, sizeof key, "%s.expert_feed_forward_length", arch);
      g_assert_true (hz_gguf_get_u32 (r->g, key, &u));
      r->n_ff_exp = (int) u;
    }
}

static void
ref_close (Ref *r)
{
  g_hash_table_unref (r->cache);
  hz_gguf_free (r->g);
}

/* Mixture of experts: the reference routes in float64, the engine in float32 after
 * activations rounded to the format's vec_dot_type, so a routing decision closer than that
 * error could go either way and the logits would then differ by far more than the
 * tolerance. The test takes the first seed from 7 on whose reference routing has every
 * "last selected vs best unselected" probability gap at least this large (a property of
 * the weights alone, checked in float64 before the engine runs). */
static double
min_routing_gap (uint32_t type)
{
  const HzQuantTraits *t = hz_quant_traits (type);
  switch (t->vec_dot_type)
    {
    case HZ_TYPE_F32:  return 1e-5;
    case HZ_TYPE_F16:  return 5e-4;
    default:           return 1.5e-3;
    }
}

static void
test_format (gconstpointer data)
{
  const Case *c = data;
  g_autoptr (GError) error = NULL;
  /* Gemma: a prompt longer than the shapes' 32-token window */
  /* gpt-oss F32 too; quantized gpt-oss 8 tokens: its routing decisions on logits are
   * closer than the 8-bit activations' error in most seeds over 48 tokens */
  const gboolean oss = strcmp (c->arch, "gpt-oss") == 0;
  const int n = g_str_has_prefix (c->arch, "gemma") || (oss && c->type == HZ_TYPE_F32) ? 48 : 8;
  HzToken toks[48] = { 1, 403, 261, 378, 299, 13, 266, 495 };
  for (int i = 8; i < n; i++)
    toks[i] = (HzToken) ((toks[i - 1] * 37 + toks[i - 8] + 11) % 512);
  Ref r;
  g_autofree char *path = NULL;
  g_autofree double *ref = NULL;
  for (guint64 seed = 7;; seed++)
    {
      path = write_synth (c, seed, 2, &error);
      if (!path && !error)
        return;  /* skipped */
      g_assert_no_error (error);
      ref_open (&r, c->arch, path);
      ref = ref_forward (&r, toks, n);
      /* gpt-oss routes on logits, whose gaps are about n_expert times the probabilities' */
      const double gap = min_routing_gap (c->type) * (r.gpt_oss ? 10 : 1);
      if (r.n_expert == 0 || r.min_gap >= gap)
        break;
      g_test_message ("seed %" G_GUINT64_FORMAT ": routing gap %.3g below %.0e, next seed",
                      seed, r.min_gap, gap);
      g_assert_cmpuint (seed, <, 7 + 64);
      ref_close (&r);
      g_unlink (path);
      g_clear_pointer (&path, g_free);
      g_clear_pointer (&ref, g_free);
    }
  g_autoptr (HzModel) model = hz_model_load (path, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (hz_model_arch (model), ==, c->arch);
  g_assert_cmpint (r.n_vocab, ==, hz_model_n_vocab (model));
  g_assert_cmpint (r.n_vocab, ==, 512);
  /* every matrix is in the requested format, vectors in F32 */
  g_assert_cmpuint (hz_gguf_find_tensor (r.g, r.n_expert ? "blk.1.ffn_down_exps.weight"
                                                          : "blk.1.ffn_down.weight")->type, ==, c->type);
  if (r.n_expert)  /* the router stays F32, as llama-quantize leaves it */
    g_assert_cmpuint (hz_gguf_find_tensor (r.g, "blk.1.ffn_gate_inp.weight")->type, ==, HZ_TYPE_F32);
  g_assert_cmpuint (hz_gguf_find_tensor (r.g, "token_embd.weight")->type, ==, c->type);
  g_assert_cmpuint (hz_gguf_find_tensor (r.g, "blk.0.attn_norm.weight")->type, ==, HZ_TYPE_F32);

  double max_ref = 0;
  for (gsize i = 0; i < (gsize) n * r.n_vocab; i++)
    max_ref = MAX (max_ref, fabs (ref[i]));

  HzContextParams cp;
  hz_context_params_init (&cp);
  cp.n_ctx = 128;
  cp.n_threads = 2;
  g_autoptr (HzContext) ctx = hz_context_new (model, &cp, &error);
  g_assert_no_error (error);
  g_assert_true (hz_context_eval (ctx, toks, n, TRUE, NULL, &error));
  g_assert_no_error (error);
  double max_diff = 0;
  for (int p = 0; p < n; p++)
    {
      const float *row = hz_context_logits (ctx, p);
      for (int v = 0; v < r.n_vocab; v++)
        max_diff = MAX (max_diff, fabs (row[v] - ref[(gsize) p * r.n_vocab + v]));
    }
  /* Gemma's GELU goes through ggml's fp16 table (values and results rounded to fp16, relative
   * error up to 2^-11 each) where the reference has the exact tanh GELU: 3.9e-4 measured on
   * tiny-gemma3 F32 (6.9e-7 with an exact GELU in the engine) */
  const double tol = r.gemma ? MAX (tolerance (c->type), 1e-3) : tolerance (c->type);
  g_test_message ("%s %-7s: max |logit - f64 reference| = %.3g = %.2e of max |logit| %.3g "
                  "(tolerance %.0e, activations %s)", c->arch, hz_quant_traits (c->type)->name,
                  max_diff, max_diff / max_ref, max_ref, tol,
                  hz_quant_traits (hz_quant_traits (c->type)->vec_dot_type)->name);
  if (r.n_expert)
    g_test_message ("%d of %d experts per token; smallest gap between the last selected and "
                    "the best unselected probability: %.3g", r.n_used, r.n_expert, r.min_gap);
  g_assert_cmpfloat (max_diff, <=, tol * max_ref);

  /* greedy decoding: 24 tokens, all logits finite */
  HzToken t = toks[n - 1];
  const float *row = hz_context_logits (ctx, -1);
  for (int step = 0; step < 24; step++)
    {
      int best = 0;
      for (int v = 0; v < r.n_vocab; v++)
        {
          g_assert_true (isfinite (row[v]));
          if (row[v] > row[best])
            best = v;
        }
      t = best;
      g_assert_true (hz_context_eval (ctx, &t, 1, FALSE, NULL, &error));
      g_assert_no_error (error);
      row = hz_context_logits (ctx, -1);
    }
  ref_close (&r);
  g_unlink (path);
}

static void
test_shapes_and_errors (void)
{
  HzSynthShape s;
  g_autoptr (GError) error = NULL;
  for (const char *const *nm = hz_synth_shape_names (); *nm; nm++)
    g_assert_true (hz_synth_shape_parse (*nm, &s, NULL));
  g_assert_true (hz_synth_shape_parse ("tinyllama-1.1b", &s, NULL));
  g_assert_cmpint (s.n_embd, ==, 2048);
  g_assert_cmpint (s.n_layer, ==, 22);
  g_assert_cmpint (s.n_head_kv, ==, 4);
  g_assert_cmpint (s.n_ff, ==, 5632);
  g_assert_true (hz_synth_shape_parse ("qwen2.5-0.5b", &s, NULL));
  g_assert_cmpstr (s.arch, ==, "qwen2");
  g_assert_true (s.tied);
  g_assert_false (hz_synth_shape_parse ("custom:dim=100,layers=2,heads=3,ffn=8", &s, &error));
  g_assert_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (hz_synth_shape_parse ("custom:dim=64,layers=4097,heads=4,ffn=8", &s, &error));
  g_assert_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "at most 4096 layers"));
  g_clear_error (&error);
  g_assert_true (hz_synth_shape_parse ("custom:dim=64,layers=4096,heads=4,ffn=8", &s, &error));
  g_assert_cmpint (s.n_layer, ==, 4096);
  g_assert_false (hz_synth_shape_parse ("custom:dim=128,layers=2,heads=4,bogus=1,ffn=8", &s, &error));
  g_assert_nonnull (strstr (error->message, "bogus"));
  g_clear_error (&error);
  g_assert_false (hz_synth_shape_parse ("gpt5", &s, &error));
  g_clear_error (&error);
  /* gpt-oss-20b's config.json */
  g_assert_true (hz_synth_shape_parse ("gpt-oss-20b", &s, NULL));
  g_assert_cmpstr (s.arch, ==, "gpt-oss");
  g_assert_cmpint (s.n_embd, ==, 2880);
  g_assert_cmpint (s.n_layer, ==, 24);
  g_assert_cmpint (s.n_head, ==, 64);
  g_assert_cmpint (s.n_head_kv, ==, 8);
  g_assert_cmpint (s.head_dim, ==, 64);
  g_assert_cmpint (s.n_expert, ==, 32);
  g_assert_cmpint (s.n_expert_used, ==, 4);
  g_assert_cmpint (s.n_ff_exp, ==, 2880);
  g_assert_cmpint (s.n_swa, ==, 128);
  g_assert_cmpfloat (s.rope_yarn, ==, 32.0f);
  g_assert_cmpint (s.yarn_orig_ctx, ==, 4096);
  g_assert_cmpint (s.n_ctx, ==, 131072);
  g_assert_false (s.tied);
  g_assert_true (hz_synth_shape_parse ("gpt-oss-120b", &s, NULL));
  g_assert_cmpint (s.n_layer, ==, 36);
  g_assert_cmpint (s.n_expert, ==, 128);

  g_autofree char *vocab = hz_test_shared_path ("models/stories260K.gguf");
  if (!vocab)
    return;
  /* the MoE shape is Qwen3-30B-A3B's; a MoE shape with a dense arch is refused, nothing
   * written */
  HzSynthParams p = { 0 };
  p.matrix_type = -1;
  p.ftype = HZ_FTYPE_Q4_K_M;
  p.vocab_gguf = vocab;
  g_assert_true (hz_synth_shape_parse ("moe-30b-a3b", &p.shape, NULL));
  g_assert_cmpstr (p.shape.arch, ==, "qwen3moe");
  g_assert_cmpint (p.shape.n_expert, ==, 128);
  g_assert_cmpint (p.shape.n_expert_used, ==, 8);
  g_assert_cmpint (p.shape.n_ff_exp, ==, 768);
  g_autofree char *out = g_strdup_printf ("%s/hz-test-synth-moe-%d.gguf", g_get_tmp_dir (), (int) getpid ());
  p.arch = "qwen3";
  g_assert_false (hz_synth_write (&p, out, &error));
  g_assert_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "qwen3moe"));
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  g_clear_error (&error);
  g_assert_false (hz_synth_shape_parse ("custom:dim=128,layers=2,heads=4,ffn=8,experts=4,experts_used=5",
                                        &p.shape, &error));
  g_assert_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  /* gpt-oss needs experts */
  g_assert_true (hz_synth_shape_parse (SHAPE, &p.shape, NULL));
  p.arch = "gpt-oss";
  g_assert_false (hz_synth_write (&p, out, &error));
  g_assert_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT);
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  g_clear_error (&error);
  p.arch = NULL;
  /* unknown architecture */
  g_assert_true (hz_synth_shape_parse (SHAPE, &p.shape, NULL));
  p.arch = "gpt2";
  g_assert_false (hz_synth_write (&p, out, &error));
  g_assert_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_UNSUPPORTED_ARCH);
  g_clear_error (&error);
}

/* same seed → same bytes with 1 or 2 threads; another seed → other weights; the mix rules of
 * the file type apply (Q4_K_M: output Q6_K, some attn_v / ffn_down Q6_K) */
static void
test_determinism_and_mix (void)
{
  g_autofree char *vocab = hz_test_shared_path ("models/stories260K.gguf");
  if (!vocab)
    return;
  g_autoptr (GError) error = NULL;
  char *paths[3];
  for (int i = 0; i < 3; i++)
    {
      HzSynthParams p = { 0 };
      g_assert_true (hz_synth_shape_parse ("custom:dim=256,layers=8,heads=4,kv=1,ffn=512", &p.shape, NULL));
      p.matrix_type = -1;
      p.ftype = HZ_FTYPE_Q4_K_M;
      p.seed = i == 2 ? 99 : 5;
      p.vocab_gguf = vocab;
      p.n_threads = i == 0 ? 1 : 2;
      paths[i] = g_strdup_printf ("%s/hz-test-synth-det-%d-%d.gguf", g_get_tmp_dir (), (int) getpid (), i);
      g_assert_true (hz_synth_write (&p, paths[i], &error));
      g_assert_no_error (error);
    }
  g_autofree char *a = NULL, *b = NULL, *c = NULL;
  gsize la, lb, lc;
  g_assert_true (g_file_get_contents (paths[0], &a, &la, NULL));
  g_assert_true (g_file_get_contents (paths[1], &b, &lb, NULL));
  g_assert_true (g_file_get_contents (paths[2], &c, &lc, NULL));
  g_assert_cmpmem (a, la, b, lb);
  g_assert_true (la == lc && memcmp (a, c, la) != 0);
  g_autoptr (HzGguf) g = hz_gguf_open (paths[0], &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hz_gguf_find_tensor (g, "output.weight")->type, ==, HZ_TYPE_Q6_K);
  g_assert_cmpuint (hz_gguf_find_tensor (g, "blk.0.attn_v.weight")->type, ==, HZ_TYPE_Q6_K);
  g_assert_cmpuint (hz_gguf_find_tensor (g, "blk.1.attn_v.weight")->type, ==, HZ_TYPE_Q4_K);
  g_assert_cmpuint (hz_gguf_find_tensor (g, "blk.7.ffn_down.weight")->type, ==, HZ_TYPE_Q6_K);
  g_assert_cmpuint (hz_gguf_find_tensor (g, "blk.1.attn_q.weight")->type, ==, HZ_TYPE_Q4_K);
  uint32_t ft;
  g_assert_true (hz_gguf_get_u32 (g, "general.file_type", &ft));
  g_assert_cmpuint (ft, ==, HZ_FTYPE_Q4_K_M);
  g_assert_cmpint (hz_gguf_find_key (g, "tokenizer.ggml.tokens"), >=, 0);
  for (int i = 0; i < 3; i++)
    {
      g_unlink (paths[i]);
      g_free (paths[i]);
    }
}

/* --fast: the first ~1M elements of each tensor as usual, byte-identical to the normal file;
 * every later row a copy of one of those rows (and the normal file's are not); same layout
 * and size; the model loads and decodes to finite logits. */
static void
test_fast (void)
{
  g_autofree char *vocab = hz_test_shared_path ("models/stories260K.gguf");
  if (!vocab)
    return;
  g_autoptr (GError) error = NULL;
  char *paths[2];
  for (int i = 0; i < 2; i++)
    {
      HzSynthParams p = { 0 };
      /* ffn_up: 1024 inputs x 2560 rows = 2.5 chunks of 1024 rows */
      g_assert_true (hz_synth_shape_parse ("custom:dim=1024,layers=1,heads=8,kv=8,ffn=2560",
                                           &p.shape, NULL));
      p.matrix_type = HZ_TYPE_Q4_K;
      p.seed = 3;
      p.vocab_gguf = vocab;
      p.n_threads = 2;
      p.fast = i == 1;
      paths[i] = g_strdup_printf ("%s/hz-test-synth-fast-%d-%d.gguf", g_get_tmp_dir (), (int) getpid (), i);
      g_assert_true (hz_synth_write (&p, paths[i], &error));
      g_assert_no_error (error);
    }
  g_autoptr (HzGguf) g0 = hz_gguf_open (paths[0], &error);
  g_assert_no_error (error);
  g_autoptr (HzGguf) g1 = hz_gguf_open (paths[1], &error);
  g_assert_no_error (error);
  const HzGgufTensor *t0 = hz_gguf_find_tensor (g0, "blk.0.ffn_up.weight");
  const HzGgufTensor *t1 = hz_gguf_find_tensor (g1, "blk.0.ffn_up.weight");
  g_assert_nonnull (t0);
  g_assert_nonnull (t1);
  g_assert_cmpuint (t0->offset, ==, t1->offset);
  g_assert_cmpuint (hz_gguf_data_offset (g0), ==, hz_gguf_data_offset (g1));
  const size_t row = hz_quant_row_size (HZ_TYPE_Q4_K, 1024);
  const guint8 *d0 = (const guint8 *) hz_gguf_file_data (g0) + hz_gguf_data_offset (g0) + t0->offset;
  const guint8 *d1 = (const guint8 *) hz_gguf_file_data (g1) + hz_gguf_data_offset (g1) + t1->offset;
  g_assert_cmpmem (d0, 1024 * row, d1, 1024 * row);   /* the first chunk */
  int copies0 = 0, copies1 = 0;
  for (int r = 1024; r < 2560; r++)
    {
      gboolean in0 = FALSE, in1 = FALSE;
      for (int s = 0; s < 1024 && !(in0 && in1); s++)
        {
          in0 |= memcmp (d0 + (size_t) r * row, d0 + (size_t) s * row, row) == 0;
          in1 |= memcmp (d1 + (size_t) r * row, d1 + (size_t) s * row, row) == 0;
        }
      copies0 += in0;
      copies1 += in1;
    }
  g_assert_cmpint (copies0, ==, 0);
  g_assert_cmpint (copies1, ==, 2560 - 1024);
  /* it is a model: loads and decodes to finite logits */
  g_autoptr (HzModel) m = hz_model_load (paths[1], NULL, &error);
  g_assert_no_error (error);
  g_autoptr (HzContext) ctx = hz_context_new (m, NULL, &error);
  g_assert_no_error (error);
  const HzToken toks[] = { 1, 100, 200 };
  g_assert_true (hz_context_eval (ctx, toks, G_N_ELEMENTS (toks), FALSE, NULL, &error));
  g_assert_no_error (error);
  const float *logits = hz_context_logits (ctx, -1);
  for (guint i = 0; i < hz_model_n_vocab (m); i++)
    g_assert_true (isfinite (logits[i]));
  for (int i = 0; i < 2; i++)
    {
      g_unlink (paths[i]);
      g_free (paths[i]);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/synth/shapes-and-errors", test_shapes_and_errors);
  g_test_add_func ("/synth/determinism-and-mix", test_determinism_and_mix);
  g_test_add_func ("/synth/fast", test_fast);
  /* every weight format with an encoder, on llama */
  for (gsize i = 0; i < hz_quant_n_formats (); i++)
    {
      const HzQuantTraits *t = hz_quant_format (i);
      if (!t->vec_dot)
        continue;  /* activation-only formats (Q8_1, Q8_K) */
      g_assert_true (t->from_float || hz_synth_random_blocks (t->type));
      Case *c = g_new (Case, 1);  /* test data: freed at exit */
      *c = (Case) { "llama", SHAPE, t->type };
      g_autofree char *path = g_strdup_printf ("/synth/forward/llama/%s", t->name);
      g_test_add_data_func (path, c, test_format);
    }
  static const Case others[] = {
    { "qwen2", SHAPE, HZ_TYPE_F32 }, { "qwen2", SHAPE, HZ_TYPE_Q4_K },
    { "qwen3", "custom:dim=256,layers=2,heads=4,kv=2,ffn=512,head_dim=64,ctx=256", HZ_TYPE_F32 },
    { "qwen3", "custom:dim=256,layers=2,heads=2,kv=1,ffn=512,head_dim=128,ctx=256", HZ_TYPE_Q8_0 },
    /* mixture of experts */
    { "qwen3moe", "tiny-qwen3moe", HZ_TYPE_F32 }, { "qwen3moe", "tiny-qwen3moe", HZ_TYPE_Q8_0 },
    { "qwen3moe", "tiny-qwen3moe", HZ_TYPE_Q4_K },
    { "llama", "tiny-mixtral", HZ_TYPE_F32 }, { "llama", "tiny-mixtral", HZ_TYPE_Q4_K },
    { "qwen2moe", "tiny-qwen2moe", HZ_TYPE_F32 }, { "qwen2moe", "tiny-qwen2moe", HZ_TYPE_Q8_0 },
    /* Gemma: 48 tokens through a window of 32 */
    { "gemma3", "tiny-gemma3", HZ_TYPE_F32 }, { "gemma3", "tiny-gemma3", HZ_TYPE_Q8_0 },
    { "gemma3", "tiny-gemma3", HZ_TYPE_Q4_K },
    { "gemma2", "tiny-gemma2", HZ_TYPE_F32 }, { "gemma2", "tiny-gemma2", HZ_TYPE_Q8_0 },
    /* gpt-oss: 48 tokens through a window of 32, sinks, YaRN, biases, clamped SwiGLU */
    { "gpt-oss", "tiny-gpt-oss", HZ_TYPE_F32 }, { "gpt-oss", "tiny-gpt-oss", HZ_TYPE_Q8_0 },
    { "gpt-oss", "tiny-gpt-oss", HZ_TYPE_MXFP4 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (others); i++)
    {
      g_autofree char *path = g_strdup_printf ("/synth/forward/%s/%s-%" G_GSIZE_FORMAT, others[i].arch,
                                               hz_quant_traits (others[i].type)->name, i);
      g_test_add_data_func (path, &others[i], test_format);
    }
  return g_test_run ();
}
