/* learner/model-train-impl.c — training forward/backward over REAL (model-train.h).
 * Compiled twice, through model-train-f32.c and model-train-f64.c. */
#include <string.h>
#include "model-train.h"
#include "train-ops.h"

#define HZ_REAL_DOUBLE HZ_INSTANCE_DOUBLE
#include "real.h"

#define Graph HZ_R (HzTrainGraph)
#define Cache HZ_R (HzTrainCache)

/* Activations of one layer kept for its backward. */
typedef struct {
  REAL *h1, *rstd1;            /* attention-norm output [T, d], rstd [T] */
  REAL *q_pre, *k_pre;         /* projections before the q/k norms (qwen3 only) */
  REAL *rstd_q, *rstd_k;       /* [T * n_head], [T * n_head_kv] (qwen3 only) */
  REAL *q, *k, *v;             /* after RoPE: [T, n_head*hdk], [T, n_kv*hdk], [T, n_kv*hdv] */
  REAL *P;                     /* attention probabilities [n_head, T, T] */
  REAL *att;                   /* [T, n_head*hdv] */
  REAL *x_mid;                 /* residual after attention [T, d] */
  REAL *h2, *rstd2;            /* FFN-norm output and rstd */
  REAL *gate, *up, *act;       /* [T, n_ff] */
  REAL *u[HZ_LORA_N_TARGETS];  /* LoRA x A^T [T, r] */
} Cache;

struct HZ_R (_HzTrainGraph) {
  const HzLlm  *llm;
  const HzLora *lora;
  int64_t       max_T, T;
  gboolean      recompute;
  int           n_cache;
  Cache        *caches;
  int           cached_layer;          /* recompute: the layer whose activations caches[0]
                                          holds (-1: none) */
  float        *cs;                    /* RoPE tables [max_T, n_rot] */
  REAL *xs;                            /* layer inputs [n_layer + 1, T, d] */
  REAL *hf, *rstd_f, *logits, *dlogits;
  /* backward scratch */
  REAL *dx, *dh, *d_att, *dq, *dk, *dv, *dq_pre, *dk_pre, *d_act, *d_gate, *d_up;
  GPtrArray *bufs;                     /* every allocation above, freed together */
  HzOpsThreads *th;                    /* threads of the ops (one by default) */
};

static REAL *
HZ_R (alloc) (Graph *g, int64_t n)
{
  REAL *p = g_new0 (REAL, MAX (n, 1));
  g_ptr_array_add (g->bufs, p);
  return p;
}

Graph *
HZ_R (hz_train_graph_new) (const HzLlm *llm, const HzLora *lora, int64_t max_tokens,
                           gboolean recompute)
{
  const HzHparams *hp = &llm->hp;
  const int64_t T = max_tokens, d = hp->n_embd, ff = hp->n_ff;
  const int64_t dq = (int64_t) hp->n_head * hp->head_dim_k;
  const int64_t dk = (int64_t) hp->n_head_kv * hp->head_dim_k;
  const int64_t dv = (int64_t) hp->n_head_kv * hp->head_dim_v;
  const int64_t dov = (int64_t) hp->n_head * hp->head_dim_v;

  g_assert (max_tokens >= 1);
  g_assert (lora == NULL || lora->n_layer == hp->n_layer);
  Graph *g = g_new0 (Graph, 1);
  g->llm = llm;
  g->lora = lora;
  g->max_T = T;
  g->recompute = recompute;
  g->bufs = g_ptr_array_new_with_free_func (g_free);
  g->th = hz_ops_threads_new (1);
  g->cs = hz_train_rope_table (llm, T);
  g->n_cache = recompute ? 1 : hp->n_layer;
  g->cached_layer = -1;
  g->caches = g_new0 (Cache, g->n_cache);
  for (int i = 0; i < g->n_cache; i++)
    {
      Cache *c = &g->caches[i];
      const gboolean qk_norm = llm->layers[0].q_norm != NULL;
      c->h1 = HZ_R (alloc) (g, T * d);
      c->rstd1 = HZ_R (alloc) (g, T);
      c->q_pre = qk_norm ? HZ_R (alloc) (g, T * dq) : NULL;
      c->k_pre = qk_norm ? HZ_R (alloc) (g, T * dk) : NULL;
      c->rstd_q = qk_norm ? HZ_R (alloc) (g, T * hp->n_head) : NULL;
      c->rstd_k = qk_norm ? HZ_R (alloc) (g, T * hp->n_head_kv) : NULL;
      c->q = HZ_R (alloc) (g, T * dq);
      c->k = HZ_R (alloc) (g, T * dk);
      c->v = HZ_R (alloc) (g, T * dv);
      c->P = HZ_R (alloc) (g, (int64_t) hp->n_head * T * T);
      c->att = HZ_R (alloc) (g, T * dov);
      c->x_mid = HZ_R (alloc) (g, T * d);
      c->h2 = HZ_R (alloc) (g, T * d);
      c->rstd2 = HZ_R (alloc) (g, T);
      c->gate = HZ_R (alloc) (g, T * ff);
      c->up = HZ_R (alloc) (g, T * ff);
      c->act = HZ_R (alloc) (g, T * ff);
      for (int t = 0; t < HZ_LORA_N_TARGETS; t++)
        if (lora && (lora->config.targets & HZ_LORA_BIT (t)))
          c->u[t] = HZ_R (alloc) (g, T * lora->config.r);
    }
  g->xs = HZ_R (alloc) (g, (hp->n_layer + 1) * T * d);
  g->hf = HZ_R (alloc) (g, T * d);
  g->rstd_f = HZ_R (alloc) (g, T);
  g->logits = HZ_R (alloc) (g, T * hp->n_vocab);
  g->dlogits = HZ_R (alloc) (g, T * hp->n_vocab);
  g->dx = HZ_R (alloc) (g, T * d);
  g->dh = HZ_R (alloc) (g, T * d);
  g->d_att = HZ_R (alloc) (g, T * dov);
  g->dq = HZ_R (alloc) (g, T * dq);
  g->dk = HZ_R (alloc) (g, T * dk);
  g->dv = HZ_R (alloc) (g, T * dv);
  g->dq_pre = HZ_R (alloc) (g, T * dq);
  g->dk_pre = HZ_R (alloc) (g, T * dk);
  g->d_act = HZ_R (alloc) (g, T * ff);
  g->d_gate = HZ_R (alloc) (g, T * ff);
  g->d_up = HZ_R (alloc) (g, T * ff);
  return g;
}

void
HZ_R (hz_train_graph_free) (Graph *g)
{
  if (g == NULL)
    return;
  g_ptr_array_free (g->bufs, TRUE);
  hz_ops_threads_free (g->th);
  g_free (g->caches);
  g_free (g->cs);
  g_free (g);
}

void
HZ_R (hz_train_graph_set_threads) (Graph *g, guint n_threads)
{
  hz_ops_threads_free (g->th);
  g->th = hz_ops_threads_new (n_threads);
}

guint
HZ_R (hz_train_graph_n_threads) (const Graph *g)
{
  return hz_ops_threads_n (g->th);
}

HzOpsThreads *
HZ_R (hz_train_graph_threads) (Graph *g)
{
  return g->th;
}

REAL *
HZ_R (hz_train_dlogits) (Graph *g)
{
  return g->dlogits;
}

static inline void
HZ_R (zero) (REAL *p, int64_t n)
{
  memset (p, 0, n * sizeof (REAL));
}

/* The adapter of (layer, target) as pointers into params / grads, or all NULL. */
typedef struct {
  const REAL *A, *B;
  REAL *dA, *dB;
  int32_t r;
  REAL scaling;
} HZ_R (Adapter);

static HZ_R (Adapter)
HZ_R (adapter) (const Graph *g, const REAL *params, REAL *grads, int il, HzLoraTarget t)
{
  HZ_R (Adapter) a = { 0 };
  const HzLoraSlot *s = (g->lora && params) ? hz_lora_slot (g->lora, il, t) : NULL;
  if (s == NULL)
    return a;
  a.A = params + s->off_a;
  a.B = params + s->off_b;
  a.dA = grads ? grads + s->off_a : NULL;
  a.dB = grads ? grads + s->off_b : NULL;
  a.r = g->lora->config.r;
  a.scaling = g->lora->scaling;
  return a;
}

static void
HZ_R (lin_fwd) (const Graph *g, const REAL *params, int il, HzLoraTarget t, const HzMatrix *W,
                const float *bias, const REAL *x, REAL *y, Cache *c)
{
  HZ_R (Adapter) a = HZ_R (adapter) (g, params, NULL, il, t);
  HZ_R (hz_op_linear_fwd_mt) (g->th, y, c->u[t], x, g->T, W, bias, a.A, a.B, a.r, a.scaling);
}

static void
HZ_R (lin_bwd) (const Graph *g, const REAL *params, REAL *grads, int il, HzLoraTarget t,
                const HzMatrix *W, REAL *dx, const REAL *dy, const REAL *x, const Cache *c)
{
  HZ_R (Adapter) a = HZ_R (adapter) (g, params, grads, il, t);
  HZ_R (hz_op_linear_bwd_mt) (g->th, dx, a.dA, a.dB, dy, x, c->u[t], g->T, W, a.A, a.B, a.r, a.scaling);
}

/* Forward of layer il into the cache c and x_out; x_out == NULL (recomputation for the
 * backward) skips the down projection's base product, whose output the backward does not
 * read, and computes only its LoRA input projection. */
static void
HZ_R (layer_fwd) (Graph *g, const REAL *params, int il, const REAL *x_in, REAL *x_out, Cache *c)
{
  const HzHparams *hp = &g->llm->hp;
  const HzLayer *L = &g->llm->layers[il];
  const int64_t T = g->T, d = hp->n_embd;

  /* attention block */
  HZ_R (hz_op_rmsnorm_fwd) (c->h1, c->rstd1, x_in, L->attn_norm, T, d, hp->norm_eps);
  HZ_R (lin_fwd) (g, params, il, HZ_LORA_Q, &L->wq, L->bq, c->h1, L->q_norm ? c->q_pre : c->q, c);
  HZ_R (lin_fwd) (g, params, il, HZ_LORA_K, &L->wk, L->bk, c->h1, L->k_norm ? c->k_pre : c->k, c);
  HZ_R (lin_fwd) (g, params, il, HZ_LORA_V, &L->wv, L->bv, c->h1, c->v, c);
  if (L->q_norm)
    HZ_R (hz_op_rmsnorm_fwd) (c->q, c->rstd_q, c->q_pre, L->q_norm, T * hp->n_head,
                              hp->head_dim_k, hp->norm_eps);
  if (L->k_norm)
    HZ_R (hz_op_rmsnorm_fwd) (c->k, c->rstd_k, c->k_pre, L->k_norm, T * hp->n_head_kv,
                              hp->head_dim_k, hp->norm_eps);
  HZ_R (hz_op_rope) (c->q, g->cs, T, hp->n_head, hp->head_dim_k, hp->n_rot, hp->rope_mode, FALSE);
  HZ_R (hz_op_rope) (c->k, g->cs, T, hp->n_head_kv, hp->head_dim_k, hp->n_rot, hp->rope_mode, FALSE);
  HZ_R (hz_op_attention_fwd_mt) (g->th, c->att, c->P, c->q, c->k, c->v, T, hp->n_head, hp->n_head_kv,
                              hp->head_dim_k, hp->head_dim_v);
  HZ_R (lin_fwd) (g, params, il, HZ_LORA_O, &L->wo, L->bo, c->att, c->x_mid, c);
  for (int64_t i = 0; i < T * d; i++)
    c->x_mid[i] += x_in[i];

  /* feed-forward block */
  HZ_R (hz_op_rmsnorm_fwd) (c->h2, c->rstd2, c->x_mid, L->ffn_norm, T, d, hp->norm_eps);
  HZ_R (lin_fwd) (g, params, il, HZ_LORA_GATE, &L->w_gate, NULL, c->h2, c->gate, c);
  HZ_R (lin_fwd) (g, params, il, HZ_LORA_UP, &L->w_up, NULL, c->h2, c->up, c);
  HZ_R (hz_op_swiglu_fwd_mt) (g->th, c->act, c->gate, c->up, T * hp->n_ff);
  if (x_out == NULL)
    {
      HZ_R (Adapter) a = HZ_R (adapter) (g, params, NULL, il, HZ_LORA_DOWN);
      if (a.A)
        HZ_R (hz_op_lora_u_mt) (g->th, c->u[HZ_LORA_DOWN], c->act, T, hp->n_ff, a.A, a.r);
      return;
    }
  HZ_R (lin_fwd) (g, params, il, HZ_LORA_DOWN, &L->w_down, NULL, c->act, x_out, c);
  for (int64_t i = 0; i < T * d; i++)
    x_out[i] += c->x_mid[i];
}

/* On entry g->dx holds d loss / d x_out; on return d loss / d x_in (not needed below
 * layer 0, where the input is the frozen embedding). */
static void
HZ_R (layer_bwd) (Graph *g, const REAL *params, REAL *grads, int il, const REAL *x_in,
                  const Cache *c)
{
  const HzHparams *hp = &g->llm->hp;
  const HzLayer *L = &g->llm->layers[il];
  const int64_t T = g->T, d = hp->n_embd, ff = hp->n_ff;
  const int64_t dq = (int64_t) hp->n_head * hp->head_dim_k;
  const int64_t dk = (int64_t) hp->n_head_kv * hp->head_dim_k;
  const int64_t dv = (int64_t) hp->n_head_kv * hp->head_dim_v;
  const int64_t dov = (int64_t) hp->n_head * hp->head_dim_v;
  const gboolean need_dx = il > 0;

  /* feed-forward block: x_out = x_mid + down(swiglu(gate(h2), up(h2))) */
  HZ_R (zero) (g->d_act, T * ff);
  HZ_R (lin_bwd) (g, params, grads, il, HZ_LORA_DOWN, &L->w_down, g->d_act, g->dx, c->act, c);
  HZ_R (zero) (g->d_gate, T * ff);
  HZ_R (zero) (g->d_up, T * ff);
  HZ_R (hz_op_swiglu_bwd_mt) (g->th, g->d_gate, g->d_up, g->d_act, c->gate, c->up, T * ff);
  HZ_R (zero) (g->dh, T * d);
  HZ_R (lin_bwd) (g, params, grads, il, HZ_LORA_GATE, &L->w_gate, g->dh, g->d_gate, c->h2, c);
  HZ_R (lin_bwd) (g, params, grads, il, HZ_LORA_UP, &L->w_up, g->dh, g->d_up, c->h2, c);
  HZ_R (hz_op_rmsnorm_bwd) (g->dx, NULL, g->dh, c->x_mid, L->ffn_norm, c->rstd2, T, d);
  /* g->dx is now d loss / d x_mid */

  /* attention block: x_mid = x_in + o(attention(rope(q(h1)), rope(k(h1)), v(h1))) */
  HZ_R (zero) (g->d_att, T * dov);
  HZ_R (lin_bwd) (g, params, grads, il, HZ_LORA_O, &L->wo, g->d_att, g->dx, c->att, c);
  HZ_R (zero) (g->dq, T * dq);
  HZ_R (zero) (g->dk, T * dk);
  HZ_R (zero) (g->dv, T * dv);
  HZ_R (hz_op_attention_bwd_mt) (g->th, g->dq, g->dk, g->dv, g->d_att, c->q, c->k, c->v, c->P, T,
                              hp->n_head, hp->n_head_kv, hp->head_dim_k, hp->head_dim_v);
  HZ_R (hz_op_rope) (g->dq, g->cs, T, hp->n_head, hp->head_dim_k, hp->n_rot, hp->rope_mode, TRUE);
  HZ_R (hz_op_rope) (g->dk, g->cs, T, hp->n_head_kv, hp->head_dim_k, hp->n_rot, hp->rope_mode, TRUE);
  const REAL *dq_lin = g->dq, *dk_lin = g->dk;
  if (L->q_norm)
    {
      HZ_R (zero) (g->dq_pre, T * dq);
      HZ_R (hz_op_rmsnorm_bwd) (g->dq_pre, NULL, g->dq, c->q_pre, L->q_norm, c->rstd_q,
                                T * hp->n_head, hp->head_dim_k);
      dq_lin = g->dq_pre;
    }
  if (L->k_norm)
    {
      HZ_R (zero) (g->dk_pre, T * dk);
      HZ_R (hz_op_rmsnorm_bwd) (g->dk_pre, NULL, g->dk, c->k_pre, L->k_norm, c->rstd_k,
                                T * hp->n_head_kv, hp->head_dim_k);
      dk_lin = g->dk_pre;
    }
  REAL *dh = need_dx ? g->dh : NULL;
  if (need_dx)
    HZ_R (zero) (g->dh, T * d);
  HZ_R (lin_bwd) (g, params, grads, il, HZ_LORA_Q, &L->wq, dh, dq_lin, c->h1, c);
  HZ_R (lin_bwd) (g, params, grads, il, HZ_LORA_K, &L->wk, dh, dk_lin, c->h1, c);
  HZ_R (lin_bwd) (g, params, grads, il, HZ_LORA_V, &L->wv, dh, g->dv, c->h1, c);
  if (need_dx)
    HZ_R (hz_op_rmsnorm_bwd) (g->dx, NULL, g->dh, x_in, L->attn_norm, c->rstd1, T, d);
}

const REAL *
HZ_R (hz_train_forward) (Graph *g, const REAL *params, const int32_t *tokens, int64_t T)
{
  const HzLlm *llm = g->llm;
  const HzHparams *hp = &llm->hp;
  const int64_t d = hp->n_embd;

  g_assert (T >= 1 && T <= g->max_T);
  g->T = T;
  HZ_R (hz_op_embedding_fwd) (g->xs, &llm->tok_embd, tokens, T);
  for (int il = 0; il < hp->n_layer; il++)
    HZ_R (layer_fwd) (g, params, il, g->xs + (int64_t) il * T * d,
                      g->xs + (int64_t) (il + 1) * T * d, &g->caches[g->recompute ? 0 : il]);
  g->cached_layer = hp->n_layer - 1;   /* the backward starts there: no recomputation */
  HZ_R (hz_op_rmsnorm_fwd) (g->hf, g->rstd_f, g->xs + (int64_t) hp->n_layer * T * d,
                            llm->output_norm, T, d, hp->norm_eps);
  HZ_R (hz_op_linear_fwd_mt) (g->th, g->logits, NULL, g->hf, T, &llm->output, NULL, NULL, NULL, 0, 0);
  HZ_R (zero) (g->dlogits, T * hp->n_vocab);
  return g->logits;
}

void
HZ_R (hz_train_backward) (Graph *g, const REAL *params, REAL *grads)
{
  const HzLlm *llm = g->llm;
  const HzHparams *hp = &llm->hp;
  const int64_t T = g->T, d = hp->n_embd;

  g_assert (params != NULL && grads != NULL);
  HZ_R (zero) (g->dh, T * d);
  HZ_R (hz_op_linear_bwd_mt) (g->th, g->dh, NULL, NULL, g->dlogits, g->hf, NULL, T, &llm->output,
                           NULL, NULL, 0, 0);
  HZ_R (zero) (g->dx, T * d);
  HZ_R (hz_op_rmsnorm_bwd) (g->dx, NULL, g->dh, g->xs + (int64_t) hp->n_layer * T * d,
                            llm->output_norm, g->rstd_f, T, d);
  for (int il = hp->n_layer - 1; il >= 0; il--)
    {
      const REAL *x_in = g->xs + (int64_t) il * T * d;
      Cache *c = &g->caches[g->recompute ? 0 : il];
      if (g->recompute && g->cached_layer != il)
        {
          HZ_R (layer_fwd) (g, params, il, x_in, NULL, c);
          g->cached_layer = il;
        }
      HZ_R (layer_bwd) (g, params, grads, il, x_in, c);
    }
}

double
HZ_R (hz_train_sft_step) (Graph *g, const REAL *params, REAL *grads, const int32_t *tokens,
                          const int32_t *targets, int64_t T, double weight, int64_t *n_valid)
{
  const int64_t V = g->llm->hp.n_vocab;
  const REAL *logits = HZ_R (hz_train_forward) (g, params, tokens, T);
  const double loss = HZ_R (hz_op_cross_entropy_fwd_mt) (g->th, logits, targets, T, V, n_valid);
  if (grads != NULL)
    {
      HZ_R (hz_op_cross_entropy_bwd_mt) (g->th, g->dlogits, logits, targets, T, V, weight);
      HZ_R (hz_train_backward) (g, params, grads);
    }
  return loss;
}
