/* engine/backend-hip/forward-gpu.c — llama-family decode step on the GPU; see forward-gpu.h. */
#include "forward-gpu.h"

#include <math.h>
#include <string.h>
#include "cpu/ops.h"
#include "hanzo/engine.h"
#include "hz-gpu.h"
#include "hzk.h"

/* A matrix, or several read from the same input, computed into consecutive slices of one
 * output: one stacked tensor when the formats agree, else one tensor per part. */
typedef struct {
  HzGpuTensor *t[3];
  int64_t      off[3];      /* output offset (elements) of each tensor */
  int          n;
} GpuMat;

typedef struct {
  float *attn_norm, *ffn_norm, *bqkv, *bo, *q_norm, *k_norm;
  GpuMat qkv, wo, gu, down;
  void  *k_cache, *v_cache;
} GpuLayer;

struct _HzGpuForward {
  const HzLlm *llm;
  HzGpu       *gpu;
  guint        n_ctx;
  int          kv_f16, n_split, n_rot;
  GpuLayer    *layers;
  HzGpuTensor *embd, *output;   /* output == embd when tied */
  float       *output_norm;
  /* activations */
  float *x, *h, *qkv, *q, *att, *y, *gu, *s, *logits, *part, *cs;
  void  *act_d, *act_att, *act_ff;   /* quantized h, att, s (NULL when K % 32 != 0) */
  int   *tok, *pos, *hist;
  void  *graph[2];             /* decode step ending in [0] argmax, [1] hzk_sample */
  gboolean graph_tried[2];
  /* sampling on the device (hz_gpu_forward_set_sampler) */
  HzkSampleParams *sp;         /* device copy of the parameters */
  uint64_t        *rng;        /* device xoshiro256** state */
  gboolean         sampler_set;
  /* prefill (n > 1 tokens at once), allocated at the first one: up to pf_cap rows */
  guint  pf_cap;
  float *px, *ph, *pqkv, *pq, *patt, *py, *pgu, *ps, *plog;
  void  *pact;                 /* quantized rows of the next matmul's input */
  int   *ptok;
  guint  plog_rows;            /* rows plog holds (all-logits prefill) */
  /* profile (hz_gpu_forward_profile): an event after each op, with the op's category */
  void  **ev;
  int    *ev_cat, n_ev, ev_cap;
  gboolean prof_on;
  uint64_t step_bytes;
  guint    n_converted;       /* tensors on the host F16 fallback */
  char   desc[320];
};

static gboolean
rt (int err, const char *what, GError **error)
{
  if (err == 0)
    return TRUE;
  g_set_error (error, HZ_GPU_ERROR, HZ_GPU_ERROR_RUNTIME, "%s: %s", what, hzk_error_string (err));
  return FALSE;
}

static void *
dev_alloc (HzGpuForward *f, size_t bytes, GError **error)
{
  void *p = hz_gpu_alloc (f->gpu, bytes, error);
  if (p && !rt (hzk_memset (p, 0, bytes, hz_gpu_stream (f->gpu)), "clear", error))
    {
      hz_gpu_free (f->gpu, p);
      return NULL;
    }
  return p;
}

/* a host float vector on the device (NULL stays NULL) */
static gboolean
upload_vec (HzGpuForward *f, const float *v, int64_t n, float **out, GError **error)
{
  *out = NULL;
  if (!v)
    return TRUE;
  return (*out = hz_gpu_alloc (f->gpu, sizeof (float) * n, error)) != NULL
         && hz_gpu_upload (f->gpu, *out, v, sizeof (float) * n, error);
}

static gboolean
upload_mat (HzGpuForward *f, const HzMatrix *const *m, int n, GpuMat *out, GError **error)
{
  gboolean same = TRUE;
  for (int i = 1; i < n; i++)
    same = same && m[i]->qt->type == m[0]->qt->type && m[i]->n_in == m[0]->n_in;
  memset (out, 0, sizeof *out);
  if (same)
    {
      int64_t rows[3];
      const void *data[3];
      for (int i = 0; i < n; i++)
        {
          rows[i] = m[i]->n_out;
          data[i] = m[i]->data;
        }
      out->n = 1;
      out->t[0] = hz_gpu_tensor_upload_stacked (f->gpu, m[0]->qt->type, m[0]->n_in, n, rows,
                                                data, error);
      if (!out->t[0])
        return FALSE;
      f->step_bytes += hz_gpu_tensor_bytes (out->t[0]);
      f->n_converted += hz_gpu_tensor_device_type (out->t[0]) != m[0]->qt->type;
      return TRUE;
    }
  int64_t off = 0;
  for (int i = 0; i < n; i++)
    {
      out->off[i] = off;
      off += m[i]->n_out;
      if (!(out->t[i] = hz_gpu_tensor_upload (f->gpu, m[i]->qt->type, m[i]->n_out, m[i]->n_in,
                                              m[i]->data, error)))
        return FALSE;
      out->n = i + 1;
      f->step_bytes += hz_gpu_tensor_bytes (out->t[i]);
      f->n_converted += hz_gpu_tensor_device_type (out->t[i]) != m[i]->qt->type;
    }
  return TRUE;
}

static void
free_mat (GpuMat *m)
{
  for (int i = 0; i < m->n; i++)
    hz_gpu_tensor_free (m->t[i]);
  m->n = 0;
}

static gboolean
run_mat (HzGpuForward *f, const GpuMat *m, const float *x, const void *act, float *y,
         GError **error)
{
  for (int i = 0; i < m->n; i++)
    if (!hz_gpu_matvec_act (f->gpu, m->t[i], x, act, y + m->off[i], error))
      return FALSE;
  return TRUE;
}

void
hz_gpu_forward_free (HzGpuForward *f)
{
  if (!f)
    return;
  HzGpu *g = f->gpu;
  for (int i = 0; i < f->ev_cap; i++)
    if (f->ev[i])
      hzk_event_destroy (f->ev[i]);
  g_free (f->ev);
  g_free (f->ev_cat);
  for (int i = 0; i < 2; i++)
    if (f->graph[i])
      hzk_graph_destroy (f->graph[i]);
  if (f->layers)
    for (int il = 0; il < f->llm->hp.n_layer; il++)
      {
        GpuLayer *L = &f->layers[il];
        float *vecs[] = { L->attn_norm, L->ffn_norm, L->bqkv, L->bo, L->q_norm, L->k_norm };
        for (size_t i = 0; i < G_N_ELEMENTS (vecs); i++)
          hz_gpu_free (g, vecs[i]);
        free_mat (&L->qkv);
        free_mat (&L->wo);
        free_mat (&L->gu);
        free_mat (&L->down);
        hz_gpu_free (g, L->k_cache);
        hz_gpu_free (g, L->v_cache);
      }
  g_free (f->layers);
  if (f->output != f->embd)
    hz_gpu_tensor_free (f->output);
  hz_gpu_tensor_free (f->embd);
  void *bufs[] = { f->output_norm, f->x, f->h, f->qkv, f->q, f->att, f->y, f->gu, f->s,
                   f->logits, f->part, f->cs, f->act_d, f->act_att, f->act_ff, f->tok,
                   f->pos, f->hist, f->sp, f->rng, f->px, f->ph, f->pqkv, f->pq, f->patt,
                   f->py, f->pgu, f->ps, f->plog, f->pact, f->ptok };
  for (size_t i = 0; i < G_N_ELEMENTS (bufs); i++)
    hz_gpu_free (g, bufs[i]);
  hz_gpu_close (g);
  g_free (f);
}

HzGpuForward *
hz_gpu_forward_new (const HzLlm *llm, guint n_ctx, GError **error)
{
  const HzHparams *hp = &llm->hp;
  if (hp->head_dim_k > 256 || hp->head_dim_v > 256 || hp->n_head % hp->n_head_kv
      || hp->n_rot > hp->head_dim_k || hp->n_rot % 2 || n_ctx == 0)
    {
      g_set_error (error, HZ_GPU_ERROR, HZ_GPU_ERROR_UNSUPPORTED,
                   "the GPU decode kernels take head dims up to 256 and whole GQA groups "
                   "(this model: head dims %d/%d, %d heads, %d KV heads)",
                   hp->head_dim_k, hp->head_dim_v, hp->n_head, hp->n_head_kv);
      return NULL;
    }
  HzGpu *gpu = hz_gpu_open (0, error);
  if (!gpu)
    return NULL;
  HzGpuForward *f = g_new0 (HzGpuForward, 1);
  f->llm = llm;
  f->gpu = gpu;
  f->n_ctx = n_ctx;
  f->kv_f16 = g_strcmp0 (g_getenv ("HZ_GPU_KV"), "f16") == 0;
  f->n_rot = hp->n_rot;
  f->n_split = CLAMP (2 * hz_gpu_n_sm (gpu) / hp->n_head, 1, 32);

  const int64_t d = hp->n_embd, dq = (int64_t) hp->n_head * hp->head_dim_k;
  const int64_t dk = (int64_t) hp->n_head_kv * hp->head_dim_k;
  const int64_t dv = (int64_t) hp->n_head_kv * hp->head_dim_v;
  const int64_t dov = (int64_t) hp->n_head * hp->head_dim_v, nff = hp->n_ff;
  const size_t kv_elem = f->kv_f16 ? 2 : 4;

  gboolean ok = TRUE;
  f->layers = g_new0 (GpuLayer, hp->n_layer);
  for (int il = 0; ok && il < hp->n_layer; il++)
    {
      const HzLayer *W = &llm->layers[il];
      GpuLayer *L = &f->layers[il];
      const HzMatrix *qkv[3] = { &W->wq, &W->wk, &W->wv }, *wo[1] = { &W->wo };
      const HzMatrix *gu[2] = { &W->w_gate, &W->w_up }, *down[1] = { &W->w_down };
      ok = upload_vec (f, W->attn_norm, d, &L->attn_norm, error)
           && upload_vec (f, W->ffn_norm, d, &L->ffn_norm, error)
           && upload_vec (f, W->bo, d, &L->bo, error)
           && upload_vec (f, W->q_norm, hp->head_dim_k, &L->q_norm, error)
           && upload_vec (f, W->k_norm, hp->head_dim_k, &L->k_norm, error)
           && upload_mat (f, qkv, 3, &L->qkv, error) && upload_mat (f, wo, 1, &L->wo, error)
           && upload_mat (f, gu, 2, &L->gu, error) && upload_mat (f, down, 1, &L->down, error)
           && (L->k_cache = dev_alloc (f, kv_elem * n_ctx * dk, error))
           && (L->v_cache = dev_alloc (f, kv_elem * n_ctx * dv, error));
      if (ok && (W->bq || W->bk || W->bv))
        {
          float *b = g_new0 (float, dq + dk + dv);
          if (W->bq)
            memcpy (b, W->bq, sizeof (float) * dq);
          if (W->bk)
            memcpy (b + dq, W->bk, sizeof (float) * dk);
          if (W->bv)
            memcpy (b + dq + dk, W->bv, sizeof (float) * dv);
          ok = upload_vec (f, b, dq + dk + dv, &L->bqkv, error) && hz_gpu_sync (gpu, error);
          g_free (b);
        }
    }
  const HzMatrix *e = &llm->tok_embd;
  ok = ok && (f->embd = hz_gpu_tensor_upload (gpu, e->qt->type, e->n_out, e->n_in, e->data, error));
  if (ok && llm->output.data == e->data && llm->output.qt == e->qt)
    f->output = f->embd;
  else if (ok)
    ok = (f->output = hz_gpu_tensor_upload (gpu, llm->output.qt->type, llm->output.n_out,
                                            llm->output.n_in, llm->output.data, error)) != NULL;
  if (ok)
    f->n_converted += (hz_gpu_tensor_device_type (f->embd) != e->qt->type)
                      + (f->output != f->embd
                         && hz_gpu_tensor_device_type (f->output) != llm->output.qt->type);
  if (ok)
    f->step_bytes += hz_gpu_tensor_bytes (f->output)
                     + hz_gpu_tensor_bytes (f->embd) / (uint64_t) MAX (1, e->n_out);

  /* RoPE table: the CPU's rows for every position */
  float *cs = g_new (float, (gsize) n_ctx * hp->n_rot);
  HzRope rope;
  hz_cpu_rope_init (&rope, hp, llm->rope_freqs);
  for (guint p = 0; p < n_ctx; p++)
    hz_cpu_rope_cache (&rope, p, cs + (gsize) p * hp->n_rot);
  ok = ok && upload_vec (f, llm->output_norm, d, &f->output_norm, error)
       && upload_vec (f, cs, (int64_t) n_ctx * hp->n_rot, &f->cs, error)
       && (f->x = dev_alloc (f, sizeof (float) * d, error))
       && (f->h = dev_alloc (f, sizeof (float) * d, error))
       && (f->qkv = dev_alloc (f, sizeof (float) * (dq + dk + dv), error))
       && (f->q = dev_alloc (f, sizeof (float) * dq, error))
       && (f->att = dev_alloc (f, sizeof (float) * dov, error))
       && (f->y = dev_alloc (f, sizeof (float) * d, error))
       && (f->gu = dev_alloc (f, sizeof (float) * 2 * nff, error))
       && (f->s = dev_alloc (f, sizeof (float) * nff, error))
       && (f->logits = dev_alloc (f, sizeof (float) * hp->n_vocab, error))
       && (f->part = dev_alloc (f, hzk_attn_part_bytes (hp->n_head, hp->head_dim_v, f->n_split), error))
       && (f->tok = dev_alloc (f, sizeof (int), error))
       && (f->pos = dev_alloc (f, sizeof (int), error))
       && (f->hist = dev_alloc (f, sizeof (int) * (n_ctx + 1), error))
       && (f->sp = dev_alloc (f, sizeof (HzkSampleParams), error))
       && (f->rng = dev_alloc (f, 4 * sizeof (uint64_t), error))
       && (d % 32 || (f->act_d = dev_alloc (f, hzk_act_bytes (d, 1), error)))
       && (dov % 32 || (f->act_att = dev_alloc (f, hzk_act_bytes (dov, 1), error)))
       && (nff % 32 || (f->act_ff = dev_alloc (f, hzk_act_bytes (nff, 1), error)))
       && hz_gpu_sync (gpu, error);
  g_free (cs);
  if (!ok)
    {
      hz_gpu_forward_free (f);
      return NULL;
    }
  g_snprintf (f->desc, sizeof f->desc, "%s, %.2f GB of weights read per token, KV %s%s",
              hz_gpu_describe (gpu), f->step_bytes / 1e9, f->kv_f16 ? "f16" : "f32",
              f->n_converted ? ", some tensors converted to F16 (no device decoder)" : "");
  return f;
}

const char *hz_gpu_forward_describe (const HzGpuForward *f) { return f->desc; }
uint64_t hz_gpu_forward_step_bytes (const HzGpuForward *f) { return f->step_bytes; }
guint hz_gpu_forward_n_converted (const HzGpuForward *f) { return f->n_converted; }

static const char *const prof_names[] = {
  "embedding", "norms (+residual, int8)", "matvec q|k|v", "qkv bias/norm/RoPE + KV append",
  "attention (split-K + merge)", "matvec o", "matvec gate|up", "swiglu (+int8)", "matvec down",
  "logits matvec", "argmax + position",
};
/* the same categories in a prefill pass */
static const char *const prof_names_pf[] = {
  "embedding", "norms (+residual, int8)", "qmmq q|k|v", "qkv bias/norm/RoPE + KV append",
  "attention (causal tiles) + int8", "qmmq o", "qmmq gate|up", "swiglu (+int8)", "qmmq down",
  "last row: norm + logits matvec", "-",
};
enum { P_EMBED, P_NORM, P_QKV, P_ROPE, P_ATTN, P_WO, P_GU, P_SWIGLU, P_DOWN, P_LOGITS, P_ARGMAX,
       P_N };

/* How the activations feeding m are quantized: as the CPU quantizes them for the first
 * tensor's format (its vec_dot_type), so that both backends dot the same int8 values.
 * HZ_GPU_ACT=per32 keeps the K-quants on per-32 fp32 scales instead of the CPU's Q8_K
 * (one 256-element reduction less per norm/SwiGLU and a fused attention merge: ~10 %
 * faster decode of Q4_K models on an H200, logits no longer the CPU's rounding). */
static int
act_mode (const GpuMat *m)
{
  const HzQuantTraits *qt = hz_quant_traits (hz_gpu_tensor_device_type (m->t[0]));
  switch (qt ? qt->vec_dot_type : HZ_TYPE_F32)
    {
    case HZ_TYPE_Q8_0: return HZK_ACT_Q8_0;
    case HZ_TYPE_Q8_1: return HZK_ACT_Q8_1;
    case HZ_TYPE_Q8_K:
      return g_strcmp0 (g_getenv ("HZ_GPU_ACT"), "per32") == 0 ? HZK_ACT_F32 : HZK_ACT_Q8_K;
    default: return HZK_ACT_F32;
    }
}

/* profile mark: an event recorded after the op of category cat */
static gboolean
mark (HzGpuForward *f, int cat)
{
  if (!f->prof_on)
    return TRUE;
  if (f->n_ev == f->ev_cap)
    return FALSE;
  f->ev_cat[f->n_ev] = cat;
  return hzk_event_record (f->ev[f->n_ev++], hz_gpu_stream (f->gpu)) == 0;
}

/* Enqueue one decode step (token *f->tok at position *f->pos) on the stream; its token
 * choice is the argmax, or hzk_sample under f->sp / f->rng when `sample`. */
static gboolean
record_step (HzGpuForward *f, gboolean sample, GError **error)
{
  const HzHparams *hp = &f->llm->hp;
  void *st = hz_gpu_stream (f->gpu);
  const int64_t d = hp->n_embd, dov = (int64_t) hp->n_head * hp->head_dim_v, nff = hp->n_ff;
  const int kv_f16 = f->kv_f16;
  const float scale = 1.0f / sqrtf ((float) hp->head_dim_k);
  const GpuMat out = { { f->output }, { 0 }, 1 };

  if (!mark (f, P_EMBED) || !hz_gpu_embed (f->gpu, f->embd, f->tok, 1, f->x, error)
      || !mark (f, P_EMBED))
    return FALSE;
  for (int il = 0; il < hp->n_layer; il++)
    {
      const GpuLayer *L = &f->layers[il];
      const int m_o = act_mode (&L->wo);
      /* the attention merge quantizes its output itself when the heads are whole 32-groups */
      const gboolean fuse_q = f->act_att && hp->head_dim_v % 32 == 0 && m_o != HZK_ACT_Q8_K;
      if (!rt (hzk_rms_norm (f->x, il > 0 ? f->y : NULL, NULL, L->attn_norm, d, 1, hp->norm_eps,
                             f->h, f->act_d, act_mode (&L->qkv), st), "attention norm", error)
          || !mark (f, P_NORM)
          || !run_mat (f, &L->qkv, f->h, f->act_d, f->qkv, error) || !mark (f, P_QKV)
          || !rt (hzk_qkv_rope (f->qkv, L->bqkv, L->q_norm, L->k_norm, hp->norm_eps, f->cs, f->pos,
                                1, hp->n_head, hp->n_head_kv, hp->head_dim_k, hp->head_dim_v,
                                hp->n_rot, hp->rope_mode == HZ_ROPE_NEOX, f->q, L->k_cache,
                                L->v_cache, kv_f16, st), "rope", error)
          || !mark (f, P_ROPE)
          || !rt (hzk_attn_decode (f->q, L->k_cache, L->v_cache, kv_f16, f->pos, hp->n_head,
                                   hp->n_head_kv, hp->head_dim_k, hp->head_dim_v, scale,
                                   f->n_split, f->part, f->att, fuse_q ? f->act_att : NULL, m_o,
                                   st), "attention", error)
          || (f->act_att && !fuse_q
              && !rt (hzk_quantize_act_mode (f->att, dov, m_o, f->act_att, st), "quantize", error))
          || !mark (f, P_ATTN)
          || !run_mat (f, &L->wo, f->att, f->act_att, f->y, error) || !mark (f, P_WO)
          || !rt (hzk_rms_norm (f->x, f->y, L->bo, L->ffn_norm, d, 1, hp->norm_eps, f->h,
                                f->act_d, act_mode (&L->gu), st), "ffn norm", error)
          || !mark (f, P_NORM)
          || !run_mat (f, &L->gu, f->h, f->act_d, f->gu, error) || !mark (f, P_GU)
          || !rt (hzk_swiglu (f->gu, f->gu + nff, nff, f->s, f->act_ff, act_mode (&L->down), st),
                  "swiglu", error)
          || !mark (f, P_SWIGLU)
          || !run_mat (f, &L->down, f->s, f->act_ff, f->y, error) || !mark (f, P_DOWN))
        return FALSE;
    }
  return rt (hzk_rms_norm (f->x, f->y, NULL, f->output_norm, d, 1, hp->norm_eps, f->h, f->act_d,
                          act_mode (&out), st), "output norm", error)
         && mark (f, P_NORM)
         && run_mat (f, &out, f->h, f->act_d, f->logits, error) && mark (f, P_LOGITS)
         && (sample ? rt (hzk_sample (f->logits, hp->n_vocab, f->sp, f->rng, f->tok, st), "sample", error)
                    : rt (hzk_argmax (f->logits, hp->n_vocab, f->tok, st), "argmax", error))
         && rt (hzk_pos_add (f->pos, 1, f->tok, f->hist, st), "position", error)
         && mark (f, P_ARGMAX);
}

/* One step: the graph of its kind (argmax or sample) when it could be captured (once, at
 * the first such step), else direct launches. HZ_GPU_GRAPH=0 disables graphs. */
static gboolean
step (HzGpuForward *f, gboolean sample, GError **error)
{
  void *st = hz_gpu_stream (f->gpu);
  const int gi = sample ? 1 : 0;
  if (!f->graph_tried[gi])
    {
      f->graph_tried[gi] = TRUE;
      if (g_strcmp0 (g_getenv ("HZ_GPU_GRAPH"), "0") != 0)
        {
          GError *local = NULL;
          void *g = NULL;
          gboolean rec = hzk_graph_begin (st) == 0 && record_step (f, sample, &local);
          const int err = hzk_graph_end (st, &g);
          if (rec && err == 0)
            f->graph[gi] = g;
          else
            {
              g_debug ("GPU decode graph not captured (%s); launching kernels directly",
                       local ? local->message : hzk_error_string (err));
              if (g)
                hzk_graph_destroy (g);
              hzk_last_error ();      /* clear a sticky capture error */
            }
          g_clear_error (&local);
        }
    }
  if (f->graph[gi])
    return rt (hzk_graph_launch (f->graph[gi], st), "graph launch", error);
  return record_step (f, sample, error);
}

static gboolean
set_state (HzGpuForward *f, int32_t token, guint pos, GError **error)
{
  const int t = token, p = (int) pos;
  return hz_gpu_upload (f->gpu, f->tok, &t, sizeof t, error)
         && hz_gpu_upload (f->gpu, f->pos, &p, sizeof p, error);
}

/* ---- prefill ---------------------------------------------------------------------------- */
/* Prefill rows per pass: the context's batch size (512 tokens) at most. */
#define PF_MAX 512

/* The prefill buffers for up to pf_cap rows (first prefill). */
static gboolean
prefill_alloc (HzGpuForward *f, GError **error)
{
  if (f->pf_cap)
    return TRUE;
  const HzHparams *hp = &f->llm->hp;
  const guint cap = MIN (f->n_ctx, PF_MAX);
  const int64_t d = hp->n_embd, dq = (int64_t) hp->n_head * hp->head_dim_k;
  const int64_t dk = (int64_t) hp->n_head_kv * hp->head_dim_k;
  const int64_t dv = (int64_t) hp->n_head_kv * hp->head_dim_v;
  const int64_t dov = (int64_t) hp->n_head * hp->head_dim_v, nff = hp->n_ff;
  const size_t r = cap, fl = sizeof (float);
  if (!(f->px = dev_alloc (f, fl * r * d, error)) || !(f->ph = dev_alloc (f, fl * r * d, error))
      || !(f->pqkv = dev_alloc (f, fl * r * (dq + dk + dv), error))
      || !(f->pq = dev_alloc (f, fl * r * dq, error))
      || !(f->patt = dev_alloc (f, fl * r * dov, error))
      || !(f->py = dev_alloc (f, fl * r * d, error))
      || !(f->pgu = dev_alloc (f, fl * r * 2 * nff, error))
      || !(f->ps = dev_alloc (f, fl * r * nff, error))
      || !(f->pact = dev_alloc (f, hzk_act_bytes (MAX (d, MAX (dov, nff)), (int) cap), error))
      || !(f->ptok = dev_alloc (f, sizeof (int) * r, error)))
    return FALSE;
  f->pf_cap = cap;
  return TRUE;
}

/* The matmul of m over n rows of x (quantized in act, NULL: not quantizable) into rows of
 * y ldy apart. */
static gboolean
run_mm (HzGpuForward *f, const GpuMat *m, const float *x, const void *act, int n, float *y,
        int64_t ldy, GError **error)
{
  for (int i = 0; i < m->n; i++)
    if (!hz_gpu_matmul_act (f->gpu, m->t[i], x, act, n, y + m->off[i], ldy, error))
      return FALSE;
  return TRUE;
}

/* Prefill of n (<= pf_cap) tokens at positions pos0..: the decode step's ops on n rows,
 * matrices through qmmq (hz_gpu_matmul_act), causal attention through hzk_attn_prefill.
 * Logits: of every row into logits [n][n_vocab] (all_logits), of the last row (else), or
 * none (logits NULL). Direct launches (n varies: no graph). */
static gboolean
prefill (HzGpuForward *f, const int32_t *tokens, guint n, guint pos0, gboolean all_logits,
         float *logits, GError **error)
{
  const HzHparams *hp = &f->llm->hp;
  void *st = hz_gpu_stream (f->gpu);
  const int64_t d = hp->n_embd, dq = (int64_t) hp->n_head * hp->head_dim_k;
  const int64_t dk = (int64_t) hp->n_head_kv * hp->head_dim_k;
  const int64_t dv = (int64_t) hp->n_head_kv * hp->head_dim_v;
  const int64_t dov = (int64_t) hp->n_head * hp->head_dim_v, nff = hp->n_ff, nv = hp->n_vocab;
  const float scale = 1.0f / sqrtf ((float) hp->head_dim_k);
  const GpuMat out = { { f->output }, { 0 }, 1 };
  const int kv_f16 = f->kv_f16, nt = (int) n;
  /* quantized rows only where every row is whole 32-blocks (the integer formats' K) */
  void *act_d = d % 32 ? NULL : f->pact, *act_o = dov % 32 ? NULL : f->pact;
  void *act_f = nff % 32 ? NULL : f->pact;
  G_STATIC_ASSERT (sizeof (int32_t) == sizeof (int));
  if (!hz_gpu_upload (f->gpu, f->ptok, tokens, sizeof (int32_t) * n, error)
      || !set_state (f, tokens[n - 1], pos0, error) || !mark (f, P_EMBED)
      || !hz_gpu_embed (f->gpu, f->embd, f->ptok, nt, f->px, error) || !mark (f, P_EMBED))
    return FALSE;
  for (int il = 0; il < hp->n_layer; il++)
    {
      const GpuLayer *L = &f->layers[il];
      const int m_o = act_mode (&L->wo);
      if (!rt (hzk_rms_norm (f->px, il > 0 ? f->py : NULL, NULL, L->attn_norm, d, nt,
                             hp->norm_eps, f->ph, act_d, act_mode (&L->qkv), st),
               "attention norm", error)
          || !mark (f, P_NORM)
          || !run_mm (f, &L->qkv, f->ph, act_d, nt, f->pqkv, dq + dk + dv, error)
          || !mark (f, P_QKV)
          || !rt (hzk_qkv_rope (f->pqkv, L->bqkv, L->q_norm, L->k_norm, hp->norm_eps, f->cs,
                                f->pos, nt, hp->n_head, hp->n_head_kv, hp->head_dim_k,
                                hp->head_dim_v, hp->n_rot, hp->rope_mode == HZ_ROPE_NEOX, f->pq,
                                L->k_cache, L->v_cache, kv_f16, st), "rope", error)
          || !mark (f, P_ROPE)
          || !rt (hzk_attn_prefill (f->pq, L->k_cache, L->v_cache, kv_f16, f->pos, nt,
                                    hp->n_head, hp->n_head_kv, hp->head_dim_k, hp->head_dim_v,
                                    scale, f->patt, st), "attention", error)
          || (act_o && !rt (hzk_quantize_act_mode (f->patt, dov * nt, m_o, act_o, st),
                            "quantize", error))
          || !mark (f, P_ATTN)
          || !run_mm (f, &L->wo, f->patt, act_o, nt, f->py, d, error) || !mark (f, P_WO)
          || !rt (hzk_rms_norm (f->px, f->py, L->bo, L->ffn_norm, d, nt, hp->norm_eps, f->ph,
                                act_d, act_mode (&L->gu), st), "ffn norm", error)
          || !mark (f, P_NORM)
          || !run_mm (f, &L->gu, f->ph, act_d, nt, f->pgu, 2 * nff, error) || !mark (f, P_GU)
          || !rt (hzk_swiglu_rows (f->pgu, f->pgu + nff, 2 * nff, nff, nt, f->ps, act_f,
                                   act_mode (&L->down), st), "swiglu", error)
          || !mark (f, P_SWIGLU)
          || !run_mm (f, &L->down, f->ps, act_f, nt, f->py, d, error) || !mark (f, P_DOWN))
        return FALSE;
    }
  if (!logits)
    return TRUE;
  if (all_logits)
    {
      if (f->plog_rows < f->pf_cap)
        {
          hz_gpu_free (f->gpu, f->plog);
          f->plog_rows = 0;
          if (!(f->plog = dev_alloc (f, sizeof (float) * f->pf_cap * nv, error)))
            return FALSE;
          f->plog_rows = f->pf_cap;
        }
      return rt (hzk_rms_norm (f->px, f->py, NULL, f->output_norm, d, nt, hp->norm_eps, f->ph,
                               act_d, act_mode (&out), st), "output norm", error)
             && run_mm (f, &out, f->ph, act_d, nt, f->plog, nv, error)
             && hz_gpu_download (f->gpu, logits, f->plog, sizeof (float) * n * nv, error);
    }
  /* the last row only: the decode step's logits path */
  const size_t last = (size_t) (n - 1) * d;
  return rt (hzk_rms_norm (f->px + last, f->py + last, NULL, f->output_norm, d, 1, hp->norm_eps,
                           f->h, f->act_d, act_mode (&out), st), "output norm", error)
         && run_mat (f, &out, f->h, f->act_d, f->logits, error) && mark (f, P_LOGITS)
         && hz_gpu_download (f->gpu, logits, f->logits, sizeof (float) * nv, error);
}

gboolean
hz_gpu_forward_eval (HzGpuForward *f, const int32_t *tokens, guint n, guint pos0,
                     gboolean all_logits, float *logits, GError **error)
{
  const HzHparams *hp = &f->llm->hp;
  if (n == 0 || pos0 > f->n_ctx || n > f->n_ctx - pos0)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "cannot evaluate %u tokens at position %u (context %u)", n, pos0, f->n_ctx);
      return FALSE;
    }
  if (!hz_llm_check_tokens (f->llm, tokens, n, error))
    return FALSE;
  if (n > 1 && g_strcmp0 (g_getenv ("HZ_GPU_PREFILL"), "0") != 0)
    {
      if (!prefill_alloc (f, error))
        return FALSE;
      for (guint t0 = 0; t0 < n; t0 += f->pf_cap)
        {
          const guint nb = MIN (f->pf_cap, n - t0);
          float *lg = !logits ? NULL
                      : all_logits ? logits + (gsize) t0 * hp->n_vocab
                      : t0 + nb == n ? logits : NULL;
          if (!prefill (f, tokens + t0, nb, pos0 + t0, all_logits, lg, error))
            return FALSE;
        }
      return hz_gpu_sync (f->gpu, error);
    }
  for (guint t = 0; t < n; t++)
    {
      if (!set_state (f, tokens[t], pos0 + t, error) || !step (f, FALSE, error))
        return FALSE;
      if ((all_logits || t == n - 1) && logits
          && !hz_gpu_download (f->gpu, logits + (all_logits ? (gsize) t * hp->n_vocab : 0),
                               f->logits, sizeof (float) * hp->n_vocab, error))
        return FALSE;
    }
  return hz_gpu_sync (f->gpu, error);
}

/* n_steps device-side steps from `token` at pos, each feeding its choice to the next. */
static gboolean
generate (HzGpuForward *f, gboolean sample, int32_t token, guint pos, guint n_steps,
          int32_t *out_ids, guint *n_done, GError **error)
{
  const HzHparams *hp = &f->llm->hp;
  *n_done = 0;
  if (token < 0 || token >= hp->n_vocab || pos >= f->n_ctx)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "generate: token %d at position %u (vocabulary %d, context %u)", token, pos,
                   hp->n_vocab, f->n_ctx);
      return FALSE;
    }
  const guint n = MIN (n_steps, f->n_ctx - pos);
  if (!set_state (f, token, pos, error))
    return FALSE;
  for (guint i = 0; i < n; i++)
    if (!step (f, sample, error))
      return FALSE;
  if (n > 0 && !hz_gpu_download (f->gpu, out_ids, f->hist + pos + 1, sizeof (int32_t) * n, error))
    return FALSE;
  *n_done = n;
  return TRUE;
}

gboolean
hz_gpu_forward_greedy (HzGpuForward *f, int32_t token, guint pos, guint n_steps,
                       int32_t *out_ids, guint *n_done, GError **error)
{
  return generate (f, FALSE, token, pos, n_steps, out_ids, n_done, error);
}

gboolean
hz_gpu_forward_set_sampler (HzGpuForward *f, const HzSamplerParams *p, GError **error)
{
  if (p->repeat_penalty != 1.0f || p->frequency_penalty != 0.0f || p->presence_penalty != 0.0f)
    {
      g_set_error (error, HZ_GPU_ERROR, HZ_GPU_ERROR_UNSUPPORTED,
                   "the device sampler applies no repeat/frequency/presence penalties");
      return FALSE;
    }
  HzkSampleParams sp = {
    .temperature = isnan (p->temperature) ? 0.0f : p->temperature,
    .top_k = p->top_k,
    .top_p = isnan (p->top_p) ? 1.0f : p->top_p,
    .min_p = isnan (p->min_p) ? 0.0f : p->min_p,
  };
  uint64_t state[4];
  hzk_rng_seed (p->seed, state);
  if (!hz_gpu_upload (f->gpu, f->sp, &sp, sizeof sp, error)
      || !hz_gpu_upload (f->gpu, f->rng, state, sizeof state, error)
      || !hz_gpu_sync (f->gpu, error))
    return FALSE;
  f->sampler_set = TRUE;
  return TRUE;
}

gboolean
hz_gpu_forward_sample (HzGpuForward *f, int32_t token, guint pos, guint n_steps,
                       int32_t *out_ids, guint *n_done, GError **error)
{
  if (!f->sampler_set)
    {
      *n_done = 0;
      g_set_error (error, HZ_GPU_ERROR, HZ_GPU_ERROR_INVALID,
                   "hz_gpu_forward_sample: no sampler (hz_gpu_forward_set_sampler)");
      return FALSE;
    }
  return generate (f, TRUE, token, pos, n_steps, out_ids, n_done, error);
}

gboolean
hz_gpu_forward_profile (HzGpuForward *f, const int32_t *tokens, guint n, guint pos, double *ms,
                        const char *const **names, int *n_cat, GError **error)
{
  const int need = 12 * f->llm->hp.n_layer + 16;
  if (f->ev_cap < need)
    {
      f->ev = g_renew (void *, f->ev, need);
      f->ev_cat = g_renew (int, f->ev_cat, need);
      for (int i = f->ev_cap; i < need; i++)
        {
          f->ev[i] = NULL;
          if (!rt (hzk_event_create (&f->ev[i]), "event", error))
            {
              f->ev_cap = i;
              return FALSE;
            }
        }
      f->ev_cap = need;
    }
  *names = n > 1 ? prof_names_pf : prof_names;
  *n_cat = P_N;
  for (int c = 0; c < P_N; c++)
    ms[c] = 0;
  if (n == 0 || pos >= f->n_ctx || n > f->n_ctx - pos || n > MAX (f->pf_cap, PF_MAX)
      || !hz_llm_check_tokens (f->llm, tokens, n, error)
      || (n > 1 && !prefill_alloc (f, error))
      || (n == 1 && !set_state (f, tokens[0], pos, error)))
    {
      if (error && !*error)
        g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                     "profile: %u tokens at position %u (context %u)", n, pos, f->n_ctx);
      return FALSE;
    }
  float *logits = n > 1 ? g_new (float, f->llm->hp.n_vocab) : NULL;
  f->n_ev = 0;
  f->prof_on = TRUE;
  const gboolean ok = n > 1 ? prefill (f, tokens, n, pos, FALSE, logits, error)
                            : record_step (f, FALSE, error);
  f->prof_on = FALSE;
  g_free (logits);
  if (!ok || !hz_gpu_sync (f->gpu, error))
    return FALSE;
  for (int i = 1; i < f->n_ev; i++)
    {
      float t = 0;
      if (!rt (hzk_event_elapsed_ms (f->ev[i - 1], f->ev[i], &t), "event timing", error))
        return FALSE;
      ms[f->ev_cat[i]] += t;
    }
  return TRUE;
}
