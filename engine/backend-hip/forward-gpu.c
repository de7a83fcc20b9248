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

/* The routed experts of one projection (kernels/moe.hip): one device tensor per expert
 * (an expert's gate and up rows stacked when their formats agree) and a device array of
 * the experts' base pointers, which the MoE kernels index with device-side expert ids. */
typedef struct {
  HzGpuTensor **t;           /* [n_expert] */
  void        **ptr;         /* device: the n_expert base pointers */
  uint32_t      type;        /* device format (all experts alike) */
  int64_t       rows, k;     /* each expert's rows and K */
  int64_t       off;         /* output offset (elements) within the slot's row */
  uint64_t      bytes;       /* one expert's weight bytes */
} GpuExperts;

/* A mixture-of-experts FFN (engine/llm.h): router, routed gate|up and down, the
 * optional shared expert of qwen2moe. */
typedef struct {
  GpuMat      router;        /* ffn_gate_inp: [n_embd] -> [n_expert] */
  GpuExperts  gu[2];         /* gate|up per expert (n_gu = 1), or gate and up (2) */
  int         n_gu;
  GpuExperts  down;
  HzGpuTensor *sh_inp;       /* ffn_gate_inp_shexp as a 1-row F32 tensor, or NULL */
  GpuMat      sh_gu, sh_down;
} GpuMoe;

typedef struct {
  float *attn_norm, *ffn_norm, *bqkv, *bo, *q_norm, *k_norm;
  float *attn_post_norm, *ffn_post_norm;   /* Gemma's post-norms, else NULL */
  GpuMat qkv, wo, gu, down;
  GpuMoe *moe;               /* NULL: dense FFN (gu, down) */
  void  *k_cache, *v_cache;
  const float *cs;           /* the layer's RoPE table (f->cs, or f->cs_swa: a window layer) */
  HzkAttnMask  mask;         /* sliding window and soft-capping (Gemma), else {0, 0} */
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
  /* Gemma: the window layers' RoPE table (own base), ggml's fp16 GELU table, the post-normed
   * attention / FFN output of a decode step and of a prefill pass (the residual's add) */
  float    *cs_swa, *yn, *pyn;
  uint16_t *gelu;
  float     attn_scale;       /* the q·k scale: 1/sqrt(head_dim), or Gemma's attn_scale */
  const float *pres;         /* what the last prefill pass's residual adds last (py, or pyn) */
  void  *act_d, *act_att, *act_ff;   /* quantized h, att, s (NULL when K % 32 != 0) */
  /* mixture of experts, decode (NULL for a dense model): router logits, selected ids and
   * weights, the k experts' gate|up rows, SwiGLU rows (+ int8), outputs; shared expert */
  float *rlog, *wts, *egu, *es, *eo, *shgu, *shs, *sho, *shg;
  int   *ids;
  void  *eact, *act_r, *act_sh;
  /* mixture of experts, prefill (with the other prefill buffers) */
  float *prlog, *pwts, *pegu, *pes, *peo, *pshgu, *pshs, *psho, *pshg;
  int   *pids;
  void  *pplan, *peact, *pact_r, *pact_sh;
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
  /* decode-step fusions, opt-in (HZ_GPU_FUSE=1; measured no faster on an H200 with the
   * dependent launches, docs/PERFORMANCE.md): the attention merge in the split launch, the
   * router and routing in one launch, a MoE layer's weighted sum left to the next norm
   * (moe_pend: that layer, until the norm that sums it is enqueued) */
  gboolean fuse;
  const GpuMoe *moe_pend;
  int     *att_cnt, *rt_cnt;       /* the fused launches' counters (n_head, 1), left at 0 */
  uint64_t step_bytes;
  guint    n_converted;       /* tensors on the host F16 fallback */
  /* paged serving (hz_gpu_forward_rows, forward-gpu-paged.c) */
  gboolean      no_kv;         /* made by hz_gpu_forward_new_weights: no contiguous cache */
  guint         pf_rows;       /* prefill rows per pass asked for (0: min(n_ctx, 512)) */
  HzGpuAttnHook attn;          /* set during hz_gpu_forward_rows */
  gpointer      attn_data;
  guint         mv_rows;       /* its row count up to which matrices run as batched matvecs */
  void        **row_graph;     /* [pf_cap]: captured passes of n rows all with logits */
  gboolean     *row_graph_tried;
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

/* Upload the experts of n (1, or 2: gate and up stacked per expert) expert matrices of the
 * same format as one GpuExperts writing at output offset `off`. */
static gboolean
upload_experts (HzGpuForward *f, const HzExpertMatrix *const *m, int n, int64_t off,
                GpuExperts *out, GError **error)
{
  const int ne = m[0]->n_expert;
  memset (out, 0, sizeof *out);
  out->t = g_new0 (HzGpuTensor *, ne);
  out->k = m[0]->mat.n_in;
  out->off = off;
  void **host = g_new (void *, ne);
  gboolean ok = TRUE;
  for (int e = 0; ok && e < ne; e++)
    {
      int64_t rows[2];
      const void *data[2];
      for (int i = 0; i < n; i++)
        {
          const HzMatrix x = hz_expert_matrix (m[i], e);
          rows[i] = x.n_out;
          data[i] = x.data;
        }
      ok = (out->t[e] = hz_gpu_tensor_upload_stacked (f->gpu, m[0]->mat.qt->type, out->k, n,
                                                      rows, data, error)) != NULL;
      if (ok)
        host[e] = (void *) hz_gpu_tensor_data (out->t[e]);
    }
  if (ok)
    {
      out->rows = hz_gpu_tensor_rows (out->t[0]);
      out->type = hz_gpu_tensor_device_type (out->t[0]);
      out->bytes = hz_gpu_tensor_bytes (out->t[0]);
      f->n_converted += out->type != m[0]->mat.qt->type ? (guint) ne : 0;
      ok = (out->ptr = hz_gpu_alloc (f->gpu, sizeof (void *) * ne, error)) != NULL
           && hz_gpu_upload (f->gpu, out->ptr, host, sizeof (void *) * ne, error)
           && hz_gpu_sync (f->gpu, error);
    }
  g_free (host);
  return ok;
}

static void
free_experts (HzGpu *g, GpuExperts *x, int ne)
{
  if (x->t)
    for (int e = 0; e < ne; e++)
      hz_gpu_tensor_free (x->t[e]);
  g_free (x->t);
  hz_gpu_free (g, x->ptr);
  memset (x, 0, sizeof *x);
}

static gboolean
upload_moe (HzGpuForward *f, const HzLayer *W, GpuMoe *M, GError **error)
{
  const HzHparams *hp = &f->llm->hp;
  const HzMatrix *router[1] = { &W->ffn_gate_inp };
  const HzExpertMatrix *gate = &W->ffn_gate_exps, *up = &W->ffn_up_exps;
  const HzExpertMatrix *gu[2] = { gate, up }, *down[1] = { &W->ffn_down_exps };
  if (!upload_mat (f, router, 1, &M->router, error))
    return FALSE;
  if (gate->mat.qt->type == up->mat.qt->type)
    {
      M->n_gu = 1;
      if (!upload_experts (f, gu, 2, 0, &M->gu[0], error))
        return FALSE;
    }
  else
    {
      M->n_gu = 2;
      if (!upload_experts (f, gu, 1, 0, &M->gu[0], error)
          || !upload_experts (f, gu + 1, 1, gate->mat.n_out, &M->gu[1], error))
        return FALSE;
    }
  if (!upload_experts (f, down, 1, 0, &M->down, error))
    return FALSE;
  uint64_t per_expert = M->down.bytes;
  for (int i = 0; i < M->n_gu; i++)
    per_expert += M->gu[i].bytes;
  f->step_bytes += per_expert * (uint64_t) hp->n_expert_used;
  if (!W->ffn_gate_inp_shexp)
    return TRUE;
  const HzMatrix *sgu[2] = { &W->ffn_gate_shexp, &W->ffn_up_shexp }, *sdown[1] = { &W->ffn_down_shexp };
  f->step_bytes += sizeof (float) * hp->n_embd;
  return (M->sh_inp = hz_gpu_tensor_upload (f->gpu, HZ_TYPE_F32, 1, hp->n_embd,
                                            W->ffn_gate_inp_shexp, error)) != NULL
         && upload_mat (f, sgu, 2, &M->sh_gu, error) && upload_mat (f, sdown, 1, &M->sh_down, error);
}

static void
free_moe (HzGpu *g, GpuMoe *M, int ne)
{
  if (!M)
    return;
  free_mat (&M->router);
  for (int i = 0; i < M->n_gu; i++)
    free_experts (g, &M->gu[i], ne);
  free_experts (g, &M->down, ne);
  hz_gpu_tensor_free (M->sh_inp);
  free_mat (&M->sh_gu);
  free_mat (&M->sh_down);
  g_free (M);
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
  for (guint i = 0; f->row_graph && i < f->pf_cap; i++)
    if (f->row_graph[i])
      hzk_graph_destroy (f->row_graph[i]);
  g_free (f->row_graph);
  g_free (f->row_graph_tried);
  if (f->layers)
    for (int il = 0; il < f->llm->hp.n_layer; il++)
      {
        GpuLayer *L = &f->layers[il];
        float *vecs[] = { L->attn_norm, L->ffn_norm, L->bqkv, L->bo, L->q_norm, L->k_norm,
                          L->attn_post_norm, L->ffn_post_norm };
        for (size_t i = 0; i < G_N_ELEMENTS (vecs); i++)
          hz_gpu_free (g, vecs[i]);
        free_mat (&L->qkv);
        free_mat (&L->wo);
        free_mat (&L->gu);
        free_mat (&L->down);
        free_moe (g, L->moe, f->llm->hp.n_expert);
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
                   f->py, f->pgu, f->ps, f->plog, f->pact, f->ptok, f->rlog, f->wts, f->egu,
                   f->es, f->eo, f->shgu, f->shs, f->sho, f->shg, f->ids, f->eact, f->act_r,
                   f->act_sh, f->prlog, f->pwts, f->pegu, f->pes, f->peo, f->pshgu, f->pshs,
                   f->psho, f->pshg, f->pids, f->pplan, f->peact, f->pact_r, f->pact_sh,
                   f->att_cnt, f->rt_cnt, f->cs_swa, f->yn, f->pyn, f->gelu };
  for (size_t i = 0; i < G_N_ELEMENTS (bufs); i++)
    hz_gpu_free (g, bufs[i]);
  hz_gpu_close (g);
  g_free (f);
}

/* The decode step's MoE buffers. */
static gboolean
moe_alloc (HzGpuForward *f, GError **error)
{
  const HzHparams *hp = &f->llm->hp;
  const int64_t d = hp->n_embd, fe = hp->n_ff_exp, fs = hp->n_ff_shexp, k = hp->n_expert_used;
  const size_t fl = sizeof (float);
  return (f->rlog = dev_alloc (f, fl * hp->n_expert, error))
         && (f->wts = dev_alloc (f, fl * k, error))
         && (f->ids = dev_alloc (f, sizeof (int) * k, error))
         && (f->egu = dev_alloc (f, fl * k * 2 * fe, error))
         && (f->es = dev_alloc (f, fl * k * fe, error))
         && (f->eo = dev_alloc (f, fl * k * d, error))
         && (f->eact = dev_alloc (f, hzk_act_bytes (fe, (int) k), error))
         && (f->act_r = dev_alloc (f, hzk_act_bytes (d, 1), error))
         && (f->rt_cnt = dev_alloc (f, sizeof (int), error))
         && (fs == 0
             || ((f->shgu = dev_alloc (f, fl * 2 * fs, error))
                 && (f->shs = dev_alloc (f, fl * fs, error))
                 && (f->sho = dev_alloc (f, fl * d, error))
                 && (f->shg = dev_alloc (f, fl, error))
                 && (f->act_sh = dev_alloc (f, hzk_act_bytes (fs, 1), error))));
}

static HzGpuForward *
forward_new (const HzLlm *llm, guint n_ctx, gboolean no_kv, guint pf_rows, GError **error)
{
  const HzHparams *hp = &llm->hp;
  if (hp->arch == HZ_ARCH_GPT_OSS)
    {
      /* no GPU kernels yet for gpt-oss's sinks, biases, clamped SwiGLU and MXFP4 experts: the
       * context (and the server) then run on the CPU */
      g_set_error (error, HZ_GPU_ERROR, HZ_GPU_ERROR_UNSUPPORTED,
                   "the GPU forward pass does not run %s models yet", hz_arch_name (hp->arch));
      return NULL;
    }
  if (hp->gemma && (hp->n_expert > 0 || hp->n_embd % 32))
    {
      g_set_error (error, HZ_GPU_ERROR, HZ_GPU_ERROR_UNSUPPORTED,
                   "the GPU forward pass takes %s models with a dense FFN and n_embd a multiple "
                   "of 32 (this model: n_embd %d, %d experts)", hz_arch_name (hp->arch),
                   hp->n_embd, hp->n_expert);
      return NULL;
    }
  if (hp->head_dim_k > 256 || hp->head_dim_v > 256 || hp->n_head % hp->n_head_kv
      || hp->n_rot > hp->head_dim_k || hp->n_rot % 2 || n_ctx == 0)
    {
      g_set_error (error, HZ_GPU_ERROR, HZ_GPU_ERROR_UNSUPPORTED,
                   "the GPU decode kernels take head dims up to 256 and whole GQA groups "
                   "(this model: head dims %d/%d, %d heads, %d KV heads)",
                   hp->head_dim_k, hp->head_dim_v, hp->n_head, hp->n_head_kv);
      return NULL;
    }
  if (hp->n_expert > 0
      && (hp->n_expert > HZK_MOE_MAX_EXPERT || hp->n_expert_used < 1
          || hp->n_expert_used > MIN (HZK_MOE_MAX_USED, hp->n_expert) || hp->n_embd % 32
          || hp->n_ff_exp % 32 || hp->n_ff_shexp % 32))
    {
      /* (the int8 activation rows are per 32; K-quant experts, whose activations are per
       * 256, have K % 256 == 0 by their block size) */
      g_set_error (error, HZ_GPU_ERROR, HZ_GPU_ERROR_UNSUPPORTED,
                   "the GPU MoE kernels take up to %d experts (%d selected) and widths that "
                   "are multiples of 32 (this model: %d experts, %d selected, n_embd %d, "
                   "expert FFN %d, shared %d)", HZK_MOE_MAX_EXPERT, HZK_MOE_MAX_USED,
                   hp->n_expert, hp->n_expert_used, hp->n_embd, hp->n_ff_exp, hp->n_ff_shexp);
      return NULL;
    }
  HzGpu *gpu = hz_gpu_open (0, error);
  if (!gpu)
    return NULL;
  HzGpuForward *f = g_new0 (HzGpuForward, 1);
  f->llm = llm;
  f->gpu = gpu;
  f->n_ctx = n_ctx;
  f->no_kv = no_kv;
  f->pf_rows = pf_rows;
  f->kv_f16 = g_strcmp0 (g_getenv ("HZ_GPU_KV"), "f16") == 0;
  f->fuse = g_strcmp0 (g_getenv ("HZ_GPU_FUSE"), "1") == 0;
  f->n_rot = hp->n_rot;
  f->attn_scale = hp->attn_scale > 0 ? hp->attn_scale : 1.0f / sqrtf ((float) hp->head_dim_k);
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
           && upload_vec (f, W->attn_post_norm, d, &L->attn_post_norm, error)
           && upload_vec (f, W->ffn_post_norm, d, &L->ffn_post_norm, error)
           && upload_mat (f, qkv, 3, &L->qkv, error) && upload_mat (f, wo, 1, &L->wo, error)
           && (hp->n_expert > 0
                 ? upload_moe (f, W, (L->moe = g_new0 (GpuMoe, 1)), error)
                 : upload_mat (f, gu, 2, &L->gu, error) && upload_mat (f, down, 1, &L->down, error))
           && (no_kv || (L->k_cache = dev_alloc (f, kv_elem * n_ctx * dk, error)))
           && (no_kv || (L->v_cache = dev_alloc (f, kv_elem * n_ctx * dv, error)));
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

  /* RoPE tables: the CPU's rows for every position (and the window layers' own) */
  float *cs = g_new (float, (gsize) n_ctx * hp->n_rot);
  float *cs_swa = hp->n_swa > 0 ? g_new (float, (gsize) n_ctx * hp->n_rot) : NULL;
  HzRope rope, rope_swa;
  hz_cpu_rope_init (&rope, hp, llm->rope_freqs);
  hz_cpu_rope_init_swa (&rope_swa, hp, llm->rope_freqs);
  for (guint p = 0; p < n_ctx; p++)
    {
      hz_cpu_rope_cache (&rope, p, cs + (gsize) p * hp->n_rot);
      if (cs_swa)
        hz_cpu_rope_cache (&rope_swa, p, cs_swa + (gsize) p * hp->n_rot);
    }
  ok = ok && upload_vec (f, llm->output_norm, d, &f->output_norm, error)
       && upload_vec (f, cs, (int64_t) n_ctx * hp->n_rot, &f->cs, error)
       && upload_vec (f, cs_swa, (int64_t) n_ctx * hp->n_rot, &f->cs_swa, error)
       && (!hp->gemma
           || ((f->yn = dev_alloc (f, sizeof (float) * d, error))
               && (f->gelu = hz_gpu_alloc (gpu, sizeof (uint16_t) << 16, error))
               && hz_gpu_upload (gpu, f->gelu, hz_cpu_gelu_table (), sizeof (uint16_t) << 16,
                                 error)))
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
       && (f->att_cnt = dev_alloc (f, sizeof (int) * hp->n_head, error))
       && (f->tok = dev_alloc (f, sizeof (int), error))
       && (f->pos = dev_alloc (f, sizeof (int), error))
       && (f->hist = dev_alloc (f, sizeof (int) * (n_ctx + 1), error))
       && (f->sp = dev_alloc (f, sizeof (HzkSampleParams), error))
       && (f->rng = dev_alloc (f, 4 * sizeof (uint64_t), error))
       && (d % 32 || (f->act_d = dev_alloc (f, hzk_act_bytes (d, 1), error)))
       && (dov % 32 || (f->act_att = dev_alloc (f, hzk_act_bytes (dov, 1), error)))
       && (nff % 32 || (f->act_ff = dev_alloc (f, hzk_act_bytes (nff, 1), error)))
       && (hp->n_expert == 0 || moe_alloc (f, error))
       && hz_gpu_sync (gpu, error);
  g_free (cs);
  g_free (cs_swa);
  for (int il = 0; ok && il < hp->n_layer; il++)
    {
      GpuLayer *L = &f->layers[il];
      const gboolean swa = hz_layer_swa (hp, il);
      L->cs = swa ? f->cs_swa : f->cs;
      L->mask.window = swa ? hp->n_swa : 0;
      L->mask.softcap = hp->attn_softcap;
    }
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

HzGpuForward *
hz_gpu_forward_new (const HzLlm *llm, guint n_ctx, GError **error)
{
  return forward_new (llm, n_ctx, FALSE, 0, error);
}

HzGpuForward *
hz_gpu_forward_new_weights (const HzLlm *llm, guint n_ctx, guint max_rows, GError **error)
{
  return forward_new (llm, n_ctx, TRUE, MAX (max_rows, 1), error);
}

HzGpu *hz_gpu_forward_gpu (HzGpuForward *f) { return f->gpu; }
const float *hz_gpu_forward_rope_table (const HzGpuForward *f) { return f->cs; }
const float *hz_gpu_forward_rope_table_swa (const HzGpuForward *f) { return f->cs_swa; }

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
act_mode_of (uint32_t device_type)
{
  const HzQuantTraits *qt = hz_quant_traits (device_type);
  switch (qt ? qt->vec_dot_type : HZ_TYPE_F32)
    {
    case HZ_TYPE_Q8_0: return HZK_ACT_Q8_0;
    case HZ_TYPE_Q8_1: return HZK_ACT_Q8_1;
    case HZ_TYPE_Q8_K:
      return g_strcmp0 (g_getenv ("HZ_GPU_ACT"), "per32") == 0 ? HZK_ACT_F32 : HZK_ACT_Q8_K;
    default: return HZK_ACT_F32;
    }
}

static int act_mode (const GpuMat *m) { return act_mode_of (hz_gpu_tensor_device_type (m->t[0])); }

/* The activation mode the FFN's first matrices read (the ffn norm's quantization). */
static int
ffn_act_mode (const GpuLayer *L)
{
  return L->moe ? act_mode_of (L->moe->gu[0].type) : act_mode (&L->gu);
}

static gboolean
is_float_type (uint32_t device_type)
{
  const HzkOps *o = hzk_ops (device_type);
  return o && o->is_float;
}

/* Whether layer L's prefill attention may run on fp16 tensor cores (hzk_attn_prefill's
 * fp16_ok): only when its output goes on to an integer-format o-projection, i.e. is
 * rounded to int8 activations anyway (steps of 1/127 of a block's largest value, far
 * coarser than fp16's 2^-11). Float-weight layers keep the fp32 kernel: fp16 attention
 * moved the logits of F32 models from ~2e-6 to ~9e-4 of the CPU's (tiny-mixtral, H200,
 * 2026-11-30), against the 1e-3 goal for float weights. */
static int
attn_fp16_ok (const GpuLayer *L)
{
  return !is_float_type (hz_gpu_tensor_device_type (L->wo.t[0]));
}

/* The quantized activations a matrix of device type `type` reads from x (`rows` rows of
 * n): `act` when it holds x in that type's mode (`have`), else `spare` after quantizing x
 * into it (float formats read x: act is passed through). */
static gboolean
act_for (HzGpuForward *f, uint32_t type, int have, const float *x, int64_t n, int rows,
         void *act, void *spare, void **out, GError **error)
{
  const int need = act_mode_of (type);
  *out = act;
  if (is_float_type (type) || need == have)
    return TRUE;
  *out = spare;
  return rt (hzk_quantize_act_mode (x, n * rows, need, spare, hz_gpu_stream (f->gpu)),
             "quantize", error);
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

/* ---- mixture of experts ----------------------------------------------------------------- */
static gboolean run_mm (HzGpuForward *f, const GpuMat *m, const float *x, const void *act, int n,
                        float *y, int64_t ldy, GError **error);

/* The decode product of the k routed experts of E (ids on the device) into y (slot s at
 * y + s·ldy): activations `act` (per_slot 0: one row for every slot, as the ffn norm
 * writes it; 1: row s of a batch-k layout) or x for float formats. */
static gboolean
run_experts (HzGpuForward *f, const GpuExperts *E, const void *act, const float *x,
             int per_slot, float *y, int64_t ldy, GError **error)
{
  const int ne = f->llm->hp.n_expert, k = f->llm->hp.n_expert_used, b = per_slot ? k : 1;
  const gboolean fl = is_float_type (E->type);
  return rt (hzk_moe_matvec_fn (E->type) (
                 (const void *const *) E->ptr, ne, E->rows, E->k, f->ids, k,
                 fl ? NULL : hzk_act_q (act, E->k, b), fl ? NULL : hzk_act_m (act, E->k, b), x,
                 per_slot, y + E->off, ldy, hz_gpu_stream (f->gpu)),
             "routed experts", error);
}

/* The grouped prefill product of E over the plan of n_pairs pairs (kernels/moe.hip):
 * gather 1 reads the n_tok token rows of act / x, gather 0 the n_pairs sorted rows. */
static gboolean
run_experts_mm (HzGpuForward *f, const GpuExperts *E, const void *act, const float *x,
                int gather, int n_rows_act, int n_pairs, float *y, int64_t ldy, GError **error)
{
  const int ne = f->llm->hp.n_expert;
  const gboolean fl = is_float_type (E->type);
  return rt (hzk_moe_matmul_fn (E->type) (
                 (const void *const *) E->ptr, ne, E->rows, E->k, f->pplan, n_pairs, gather,
                 fl ? NULL : hzk_act_q (act, E->k, n_rows_act),
                 fl ? NULL : hzk_act_m (act, E->k, n_rows_act), x, y + E->off, ldy,
                 hz_gpu_stream (f->gpu)),
             "routed experts (grouped)", error);
}

/* The MoE FFN of one decode step: f->h (normed, quantized in act_d as the routed gate|up
 * read it) -> f->y. Router matvec, routing on the device, the k experts' gate|up, SwiGLU
 * of k rows (+ int8), their down products, the shared expert (qwen2moe), the weighted sum.
 * No host reads: capturable. */
static gboolean
moe_step (HzGpuForward *f, const GpuMoe *M, GError **error)
{
  const HzHparams *hp = &f->llm->hp;
  void *st = hz_gpu_stream (f->gpu), *a = NULL;
  const int64_t d = hp->n_embd, fe = hp->n_ff_exp, fs = hp->n_ff_shexp;
  const int ne = hp->n_expert, k = hp->n_expert_used, have = act_mode_of (M->gu[0].type);
  const uint32_t rtype = hz_gpu_tensor_device_type (M->router.t[0]);
  /* router matvec and routing in one launch when the router is one tensor */
  const HzkMoeRouterFn router = f->fuse && M->router.n == 1 ? hzk_moe_router_fn (rtype) : NULL;
  const gboolean rfl = is_float_type (rtype);
  if (!act_for (f, rtype, have, f->h, d, 1, f->act_d, f->act_r, &a, error)
      || !(router ? rt (router (hz_gpu_tensor_data (M->router.t[0]), ne, d,
                                rfl ? NULL : hzk_act_q (a, d, 1), rfl ? NULL : hzk_act_m (a, d, 1),
                                f->h, f->rlog, k, hp->expert_weights_norm, f->ids, f->wts,
                                f->rt_cnt, st), "router", error)
                  : run_mat (f, &M->router, f->h, a, f->rlog, error)
                    && rt (hzk_moe_route (f->rlog, ne, ne, 1, k, hp->expert_weights_norm, f->ids,
                                          f->wts, st), "routing", error))
      || !mark (f, P_GU))
    return FALSE;
  for (int i = 0; i < M->n_gu; i++)
    if (!act_for (f, M->gu[i].type, have, f->h, d, 1, f->act_d, f->act_r, &a, error)
        || !run_experts (f, &M->gu[i], a, f->h, 0, f->egu, 2 * fe, error))
      return FALSE;
  if (!mark (f, P_GU)
      || !rt (hzk_swiglu_rows (f->egu, f->egu + fe, 2 * fe, fe, k, f->es, f->eact,
                               act_mode_of (M->down.type), st), "swiglu", error)
      || !mark (f, P_SWIGLU)
      || !run_experts (f, &M->down, f->eact, f->es, 1, f->eo, d, error))
    return FALSE;
  if (M->sh_inp
      && (!hz_gpu_matvec_act (f->gpu, M->sh_inp, f->h, NULL, f->shg, error)
          || !act_for (f, hz_gpu_tensor_device_type (M->sh_gu.t[0]), have, f->h, d, 1,
                       f->act_d, f->act_r, &a, error)
          || !run_mat (f, &M->sh_gu, f->h, a, f->shgu, error)
          || !rt (hzk_swiglu (f->shgu, f->shgu + fs, fs, f->shs, f->act_sh,
                              act_mode (&M->sh_down), st), "swiglu", error)
          || !run_mat (f, &M->sh_down, f->shs, f->act_sh, f->sho, error)))
    return FALSE;
  if (f->fuse)
    {
      f->moe_pend = M;                     /* summed by the next norm (step_norm) */
      return mark (f, P_DOWN);
    }
  return rt (hzk_moe_combine (f->eo, d, f->wts, NULL, 1, k, d, M->sh_inp ? f->sho : NULL,
                              f->shg, f->y, st), "expert sum", error)
         && mark (f, P_DOWN);
}

/* The residual add and RMSNorm of a decode step: x += add (+ bias), h = norm(x)·w,
 * quantized in `mode` into act_d; when the previous layer's MoE sum is pending, the norm
 * sums it itself as the residual (hzk_rms_norm_moe, bit-identical to combine + add). */
static gboolean
step_norm (HzGpuForward *f, const float *add, const float *bias, const float *w, int mode,
           const char *what, GError **error)
{
  const HzHparams *hp = &f->llm->hp;
  const int64_t d = hp->n_embd;
  void *st = hz_gpu_stream (f->gpu);
  const GpuMoe *M = f->moe_pend;
  f->moe_pend = NULL;
  if (M)
    return rt (hzk_rms_norm_moe (f->x, f->eo, d, f->wts, hp->n_expert_used,
                                 M->sh_inp ? f->sho : NULL, f->shg, w, d, 1, hp->norm_eps, f->h,
                                 f->act_d, mode, st), what, error);
  return rt (hzk_rms_norm (f->x, add, bias, w, d, 1, hp->norm_eps, f->h, f->act_d, mode, st),
             what, error);
}

/* The MoE FFN of a prefill pass of nt rows: f->ph (quantized in act as the routed gate|up
 * read it) -> f->py. Router matmul, routing, the pairs sorted by expert on the device
 * (hzk_moe_plan), each expert's gate|up and down over its rows in one grouped launch,
 * the shared expert (qwen2moe), the weighted sums. */
static gboolean
moe_prefill (HzGpuForward *f, const GpuMoe *M, int nt, void *act, GError **error)
{
  const HzHparams *hp = &f->llm->hp;
  void *st = hz_gpu_stream (f->gpu), *a = NULL;
  const int64_t d = hp->n_embd, fe = hp->n_ff_exp, fs = hp->n_ff_shexp;
  const int ne = hp->n_expert, k = hp->n_expert_used, np = nt * k;
  const int have = act_mode_of (M->gu[0].type);
  if (!act_for (f, hz_gpu_tensor_device_type (M->router.t[0]), have, f->ph, d, nt, act,
                f->pact_r, &a, error)
      || !run_mm (f, &M->router, f->ph, a, nt, f->prlog, ne, error)
      || !rt (hzk_moe_route (f->prlog, ne, ne, nt, k, hp->expert_weights_norm, f->pids, f->pwts,
                             st), "routing", error)
      || !rt (hzk_moe_plan (f->pids, np, k, ne, f->pplan, st), "expert plan", error)
      || !mark (f, P_GU))
    return FALSE;
  for (int i = 0; i < M->n_gu; i++)
    if (!act_for (f, M->gu[i].type, have, f->ph, d, nt, act, f->pact_r, &a, error)
        || !run_experts_mm (f, &M->gu[i], a, f->ph, 1, nt, np, f->pegu, 2 * fe, error))
      return FALSE;
  if (!mark (f, P_GU)
      || !rt (hzk_swiglu_rows (f->pegu, f->pegu + fe, 2 * fe, fe, np, f->pes, f->peact,
                               act_mode_of (M->down.type), st), "swiglu", error)
      || !mark (f, P_SWIGLU)
      || !run_experts_mm (f, &M->down, f->peact, f->pes, 0, np, np, f->peo, d, error))
    return FALSE;
  if (M->sh_inp
      && (!hz_gpu_matmul_act (f->gpu, M->sh_inp, f->ph, NULL, nt, f->pshg, 1, error)
          || !act_for (f, hz_gpu_tensor_device_type (M->sh_gu.t[0]), have, f->ph, d, nt, act,
                       f->pact_r, &a, error)
          || !run_mm (f, &M->sh_gu, f->ph, a, nt, f->pshgu, 2 * fs, error)
          || !rt (hzk_swiglu_rows (f->pshgu, f->pshgu + fs, 2 * fs, fs, nt, f->pshs, f->pact_sh,
                                   act_mode (&M->sh_down), st), "swiglu", error)
          || !run_mm (f, &M->sh_down, f->pshs, f->pact_sh, nt, f->psho, d, error)))
    return FALSE;
  return rt (hzk_moe_combine (f->peo, d, f->pwts, hzk_moe_plan_pos (f->pplan, np, ne), nt, k, d,
                              M->sh_inp ? f->psho : NULL, f->pshg, f->py, st), "expert sum",
             error)
         && mark (f, P_DOWN);
}

/* ---- Gemma's extra ops (engine/cpu/forward.c) -------------------------------------------- */
/* The embedding rows x [rows][n_embd] times sqrt(n_embd) (Gemma; ggml_scale), else nothing. */
static gboolean
embed_scale (HzGpuForward *f, float *x, int rows, GError **error)
{
  const HzHparams *hp = &f->llm->hp;
  if (!hp->gemma)
    return TRUE;
  return rt (hzk_train_scale (x, (int64_t) rows * hp->n_embd, sqrtf ((float) hp->n_embd),
                              hz_gpu_stream (f->gpu)), "embedding scale", error);
}

/* A block's output y [rows][n_embd] as the residual adds it: y itself, or with a post-norm
 * w (Gemma's attn_post_norm / ffn_post_norm) rms_norm(y)·w written into yn. *res = that. */
static gboolean
post_norm (HzGpuForward *f, const float *w, float *y, float *yn, int rows, const float **res,
           GError **error)
{
  const HzHparams *hp = &f->llm->hp;
  *res = y;
  if (!w)
    return TRUE;
  *res = yn;
  return rt (hzk_rms_norm (y, NULL, NULL, w, hp->n_embd, rows, hp->norm_eps, yn, NULL,
                           HZK_ACT_F32, hz_gpu_stream (f->gpu)), "post-norm", error);
}

/* The gated activation of `rows` rows of [gate|up] (2n apart) into out (+ act): GeGLU
 * (Gemma, the CPU's fp16 GELU table) or SwiGLU. */
static gboolean
glu_rows (HzGpuForward *f, const float *gu, int64_t n, int rows, float *out, void *act, int mode,
          GError **error)
{
  void *st = hz_gpu_stream (f->gpu);
  return f->gelu ? rt (hzk_geglu_rows (gu, gu + n, 2 * n, n, rows, f->gelu, out, act, mode, st),
                       "geglu", error)
                 : rt (hzk_swiglu_rows (gu, gu + n, 2 * n, n, rows, out, act, mode, st),
                       "swiglu", error);
}

/* The final soft-capping of `rows` rows of logits (Gemma 2), else nothing. */
static gboolean
logit_softcap (HzGpuForward *f, float *logits, int rows, GError **error)
{
  const HzHparams *hp = &f->llm->hp;
  if (!(hp->final_softcap > 0))
    return TRUE;
  return rt (hzk_softcap (logits, (int64_t) rows * hp->n_vocab, hp->final_softcap,
                          hz_gpu_stream (f->gpu)), "logit soft-capping", error);
}

/* Enqueue one decode step (token *f->tok at position *f->pos) on the stream; its token
 * choice is the argmax, or hzk_sample under f->sp / f->rng when `sample`. */
static gboolean
record_step (HzGpuForward *f, gboolean sample, GError **error)
{
  const HzHparams *hp = &f->llm->hp;
  void *st = hz_gpu_stream (f->gpu);
  const int64_t dov = (int64_t) hp->n_head * hp->head_dim_v, nff = hp->n_ff;
  const int kv_f16 = f->kv_f16;
  const GpuMat out = { { f->output }, { 0 }, 1 };
  const float *res = NULL;     /* what the residual adds next (the previous block's output) */

  f->moe_pend = NULL;
  if (!mark (f, P_EMBED) || !hz_gpu_embed (f->gpu, f->embd, f->tok, 1, f->x, error)
      || !embed_scale (f, f->x, 1, error) || !mark (f, P_EMBED))
    return FALSE;
  for (int il = 0; il < hp->n_layer; il++)
    {
      const GpuLayer *L = &f->layers[il];
      const int m_o = act_mode (&L->wo);
      /* the attention merge quantizes its output itself when the heads are whole 32-groups */
      const gboolean fuse_q = f->act_att && hp->head_dim_v % 32 == 0 && m_o != HZK_ACT_Q8_K;
      if (!step_norm (f, res, NULL, L->attn_norm, act_mode (&L->qkv), "attention norm", error)
          || !mark (f, P_NORM)
          || !run_mat (f, &L->qkv, f->h, f->act_d, f->qkv, error) || !mark (f, P_QKV)
          || !rt (hzk_qkv_rope (f->qkv, L->bqkv, L->q_norm, L->k_norm, hp->norm_eps, L->cs, f->pos,
                                1, hp->n_head, hp->n_head_kv, hp->head_dim_k, hp->head_dim_v,
                                hp->n_rot, hp->rope_mode == HZ_ROPE_NEOX, f->q, L->k_cache,
                                L->v_cache, kv_f16, st), "rope", error)
          || !mark (f, P_ROPE)
          || !rt (hzk_attn_decode_ext (f->q, L->k_cache, L->v_cache, kv_f16, f->pos, hp->n_head,
                                       hp->n_head_kv, hp->head_dim_k, hp->head_dim_v,
                                       f->attn_scale, L->mask, f->n_split, f->part, f->att,
                                       fuse_q ? f->act_att : NULL, m_o,
                                       f->fuse ? f->att_cnt : NULL, st), "attention", error)
          || (f->act_att && !fuse_q
              && !rt (hzk_quantize_act_mode (f->att, dov, m_o, f->act_att, st), "quantize", error))
          || !mark (f, P_ATTN)
          || !run_mat (f, &L->wo, f->att, f->act_att, f->y, error)
          || !post_norm (f, L->attn_post_norm, f->y, f->yn, 1, &res, error) || !mark (f, P_WO)
          || !step_norm (f, res, L->bo, L->ffn_norm, ffn_act_mode (L), "ffn norm", error)
          || !mark (f, P_NORM))
        return FALSE;
      if (L->moe)
        {
          if (!moe_step (f, L->moe, error))
            return FALSE;
          res = f->y;
          continue;
        }
      if (!run_mat (f, &L->gu, f->h, f->act_d, f->gu, error) || !mark (f, P_GU)
          || !glu_rows (f, f->gu, nff, 1, f->s, f->act_ff, act_mode (&L->down), error)
          || !mark (f, P_SWIGLU)
          || !run_mat (f, &L->down, f->s, f->act_ff, f->y, error)
          || !post_norm (f, L->ffn_post_norm, f->y, f->yn, 1, &res, error) || !mark (f, P_DOWN))
        return FALSE;
    }
  return step_norm (f, res, NULL, f->output_norm, act_mode (&out), "output norm", error)
         && mark (f, P_NORM)
         && run_mat (f, &out, f->h, f->act_d, f->logits, error)
         && logit_softcap (f, f->logits, 1, error) && mark (f, P_LOGITS)
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
  const guint cap = f->pf_rows ? f->pf_rows : MIN (f->n_ctx, PF_MAX);
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
      || !(f->ptok = dev_alloc (f, sizeof (int) * r, error))
      || (hp->gemma && !(f->pyn = dev_alloc (f, fl * r * d, error))))
    return FALSE;
  if (hp->n_expert > 0)
    {
      /* MoE: r·k (token, expert) pairs */
      const int64_t fe = hp->n_ff_exp, fs = hp->n_ff_shexp, ne = hp->n_expert;
      const size_t np = r * hp->n_expert_used;
      if (!(f->prlog = dev_alloc (f, fl * r * ne, error))
          || !(f->pwts = dev_alloc (f, fl * np, error))
          || !(f->pids = dev_alloc (f, sizeof (int) * np, error))
          || !(f->pplan = dev_alloc (f, hzk_moe_plan_bytes ((int) np, (int) ne), error))
          || !(f->pegu = dev_alloc (f, fl * np * 2 * fe, error))
          || !(f->pes = dev_alloc (f, fl * np * fe, error))
          || !(f->peact = dev_alloc (f, hzk_act_bytes (fe, (int) np), error))
          || !(f->peo = dev_alloc (f, fl * np * d, error))
          || !(f->pact_r = dev_alloc (f, hzk_act_bytes (d, (int) cap), error))
          || (fs > 0
              && (!(f->pshgu = dev_alloc (f, fl * r * 2 * fs, error))
                  || !(f->pshs = dev_alloc (f, fl * r * fs, error))
                  || !(f->psho = dev_alloc (f, fl * r * d, error))
                  || !(f->pshg = dev_alloc (f, fl * r, error))
                  || !(f->pact_sh = dev_alloc (f, hzk_act_bytes (fs, (int) cap), error)))))
        return FALSE;
    }
  f->pf_cap = cap;
  return TRUE;
}

/* y [n][rows] = W x for n rows quantized in act as for qmmq (the same layout): the decode
 * matvec in batches of up to HZK_MAX_BATCH rows, each batch streaming the weights once;
 * for few rows less work than qmmq, whose 64 × 32 tiles leave most of the device idle.
 * Used by the paged serving step (hz_gpu_forward_rows). */
static gboolean
run_matvec_rows (HzGpuForward *f, const HzGpuTensor *t, const float *x, const void *act, int n,
                 float *y, GError **error)
{
  const HzkOps *o = hzk_ops (hz_gpu_tensor_device_type (t));
  const int64_t k = hz_gpu_tensor_k (t), rows = hz_gpu_tensor_rows (t);
  if (!o->is_float && !act)
    return hz_gpu_matmul_act (f->gpu, t, x, act, n, y, rows, error);
  const int8_t *aq = o->is_float ? NULL : hzk_act_q (act, k, n);
  const uint8_t *am = o->is_float ? NULL : (const uint8_t *) hzk_act_m (act, k, n);
  for (int c0 = 0; c0 < n; c0 += HZK_MAX_BATCH)
    {
      const int nb = MIN (HZK_MAX_BATCH, n - c0);
      if (!o->matvec[nb - 1])
        return hz_gpu_matmul_act (f->gpu, t, x, act, n, y, rows, error);
      /* per row: k int8s and k / 16 (d, s) pairs of 8 bytes (kernels/hzk.h) */
      if (!rt (o->matvec[nb - 1] (hz_gpu_tensor_data (t), rows, k, aq ? aq + c0 * k : NULL,
                                  am ? am + (size_t) c0 * (k / 16) * 8 : NULL, x + c0 * k,
                                  y + c0 * rows, hz_gpu_stream (f->gpu)), o->name, error))
        return FALSE;
    }
  return TRUE;
}

/* The logits buffer of all_logits prefill / hz_gpu_forward_rows: pf_cap rows. */
static gboolean
plog_alloc (HzGpuForward *f, GError **error)
{
  if (f->plog_rows >= f->pf_cap)
    return TRUE;
  hz_gpu_free (f->gpu, f->plog);
  f->plog_rows = 0;
  if (!(f->plog = dev_alloc (f, sizeof (float) * f->pf_cap * f->llm->hp.n_vocab, error)))
    return FALSE;
  f->plog_rows = f->pf_cap;
  return TRUE;
}

/* The matmul of m over n rows of x (quantized in act, NULL: not quantizable) into rows of
 * y ldy apart. */
static gboolean
run_mm (HzGpuForward *f, const GpuMat *m, const float *x, const void *act, int n, float *y,
        int64_t ldy, GError **error)
{
  if (f->attn && m->n == 1 && (guint) n <= f->mv_rows && ldy == hz_gpu_tensor_rows (m->t[0]))
    return run_matvec_rows (f, m->t[0], x, act, n, y, error);
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
  const GpuMat out = { { f->output }, { 0 }, 1 };
  const int kv_f16 = f->kv_f16, nt = (int) n;
  const float *res = NULL;     /* what the residual adds next (the previous block's output) */
  /* quantized rows only where every row is whole 32-blocks (the integer formats' K) */
  void *act_d = d % 32 ? NULL : f->pact, *act_o = dov % 32 ? NULL : f->pact;
  void *act_f = nff % 32 ? NULL : f->pact;
  G_STATIC_ASSERT (sizeof (int32_t) == sizeof (int));
  /* (hz_gpu_forward_rows uploads the tokens itself: its passes may be captured) */
  if ((!f->attn && (!hz_gpu_upload (f->gpu, f->ptok, tokens, sizeof (int32_t) * n, error)
                    || !set_state (f, tokens[n - 1], pos0, error)))
      || !mark (f, P_EMBED)
      || !hz_gpu_embed (f->gpu, f->embd, f->ptok, nt, f->px, error)
      || !embed_scale (f, f->px, nt, error) || !mark (f, P_EMBED))
    return FALSE;
  for (int il = 0; il < hp->n_layer; il++)
    {
      const GpuLayer *L = &f->layers[il];
      const int m_o = act_mode (&L->wo);
      if (!rt (hzk_rms_norm (f->px, res, NULL, L->attn_norm, d, nt,
                             hp->norm_eps, f->ph, act_d, act_mode (&L->qkv), st),
               "attention norm", error)
          || !mark (f, P_NORM)
          || !run_mm (f, &L->qkv, f->ph, act_d, nt, f->pqkv, dq + dk + dv, error)
          || !mark (f, P_QKV)
          || (f->attn  /* paged serving: the hook stores K/V and attends */
              ? !f->attn (f->attn_data, il, n, f->pqkv, L->bqkv, L->q_norm, L->k_norm, f->patt,
                          error)
              : !rt (hzk_qkv_rope (f->pqkv, L->bqkv, L->q_norm, L->k_norm, hp->norm_eps, L->cs,
                                   f->pos, nt, hp->n_head, hp->n_head_kv, hp->head_dim_k,
                                   hp->head_dim_v, hp->n_rot, hp->rope_mode == HZ_ROPE_NEOX,
                                   f->pq, L->k_cache, L->v_cache, kv_f16, st), "rope", error)
                || !mark (f, P_ROPE)
                || !rt (hzk_attn_prefill_ext (f->pq, L->k_cache, L->v_cache, kv_f16, f->pos, nt,
                                              hp->n_head, hp->n_head_kv, hp->head_dim_k,
                                              hp->head_dim_v, f->attn_scale, L->mask, f->patt,
                                              act_o, m_o, attn_fp16_ok (L), st),
                        "attention", error))
          || (f->attn && act_o
              && !rt (hzk_quantize_act_mode (f->patt, dov * nt, m_o, act_o, st), "quantize",
                      error))
          || !mark (f, P_ATTN)
          || !run_mm (f, &L->wo, f->patt, act_o, nt, f->py, d, error)
          || !post_norm (f, L->attn_post_norm, f->py, f->pyn, nt, &res, error) || !mark (f, P_WO)
          || !rt (hzk_rms_norm (f->px, res, L->bo, L->ffn_norm, d, nt, hp->norm_eps, f->ph,
                                act_d, ffn_act_mode (L), st), "ffn norm", error)
          || !mark (f, P_NORM))
        return FALSE;
      if (L->moe)
        {
          if (!moe_prefill (f, L->moe, nt, act_d, error))
            return FALSE;
          res = f->py;
          continue;
        }
      if (!run_mm (f, &L->gu, f->ph, act_d, nt, f->pgu, 2 * nff, error) || !mark (f, P_GU)
          || !glu_rows (f, f->pgu, nff, nt, f->ps, act_f, act_mode (&L->down), error)
          || !mark (f, P_SWIGLU)
          || !run_mm (f, &L->down, f->ps, act_f, nt, f->py, d, error)
          || !post_norm (f, L->ffn_post_norm, f->py, f->pyn, nt, &res, error) || !mark (f, P_DOWN))
        return FALSE;
    }
  f->pres = res;
  if (!logits)
    return TRUE;
  if (all_logits)
    {
      if (!plog_alloc (f, error))
        return FALSE;
      return rt (hzk_rms_norm (f->px, res, NULL, f->output_norm, d, nt, hp->norm_eps, f->ph,
                               act_d, act_mode (&out), st), "output norm", error)
             && run_mm (f, &out, f->ph, act_d, nt, f->plog, nv, error)
             && logit_softcap (f, f->plog, nt, error)
             && hz_gpu_download (f->gpu, logits, f->plog, sizeof (float) * n * nv, error);
    }
  /* the last row only: the decode step's logits path */
  const size_t last = (size_t) (n - 1) * d;
  return rt (hzk_rms_norm (f->px + last, res + last, NULL, f->output_norm, d, 1, hp->norm_eps,
                           f->h, f->act_d, act_mode (&out), st), "output norm", error)
         && run_mat (f, &out, f->h, f->act_d, f->logits, error)
         && logit_softcap (f, f->logits, 1, error) && mark (f, P_LOGITS)
         && hz_gpu_download (f->gpu, logits, f->logits, sizeof (float) * nv, error);
}

gboolean
hz_gpu_forward_eval (HzGpuForward *f, const int32_t *tokens, guint n, guint pos0,
                     gboolean all_logits, float *logits, GError **error)
{
  const HzHparams *hp = &f->llm->hp;
  if (f->no_kv || n == 0 || pos0 > f->n_ctx || n > f->n_ctx - pos0)
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

/* The launches of one hz_gpu_forward_rows pass (tokens on the device in ptok): the layers,
 * then the wanted rows: x += y (the last residual) on every row, those rows gathered (into
 * py), output norm and the output matrix on them only (into plog). */
static gboolean
rows_pass (HzGpuForward *f, guint n, const int *out_rows_dev, guint n_out, GError **error)
{
  const HzHparams *hp = &f->llm->hp;
  void *st = hz_gpu_stream (f->gpu);
  const int64_t d = hp->n_embd, nv = hp->n_vocab;
  const GpuMat out = { { f->output }, { 0 }, 1 };
  void *act_d = d % 32 ? NULL : f->pact;
  return prefill (f, NULL, n, 0, FALSE, NULL, error)
         && (n_out == 0
             || (rt (hzk_rms_norm (f->px, f->pres, NULL, NULL, d, (int) n, hp->norm_eps, f->ph,
                                   NULL, HZK_ACT_F32, st), "residual", error)
                 && rt (hzk_gather_rows (f->px, d, out_rows_dev, (int) n_out, d, f->py, st),
                        "gather", error)
                 && rt (hzk_rms_norm (f->py, NULL, NULL, f->output_norm, d, (int) n_out,
                                      hp->norm_eps, f->ph, act_d, act_mode (&out), st),
                        "output norm", error)
                 && run_mm (f, &out, f->ph, act_d, (int) n_out, f->plog, nv, error)
                 && logit_softcap (f, f->plog, (int) n_out, error)));
}

gboolean
hz_gpu_forward_rows (HzGpuForward *f, const int32_t *tokens, guint n, HzGpuAttnHook attn,
                     gpointer attn_data, guint mv_rows, const int *out_rows_dev, guint n_out,
                     float *logits, GError **error)
{
  const HzHparams *hp = &f->llm->hp;
  if (!prefill_alloc (f, error) || !plog_alloc (f, error))
    return FALSE;
  if (n == 0 || n > f->pf_cap || n_out > n || !attn || (n_out > 0 && !logits))
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "forward rows: %u rows (at most %u), %u with logits", n, f->pf_cap, n_out);
      return FALSE;
    }
  if (!hz_llm_check_tokens (f->llm, tokens, n, error))
    return FALSE;
  void *st = hz_gpu_stream (f->gpu);
  f->attn = attn;
  f->attn_data = attn_data;
  f->mv_rows = mv_rows;
  G_STATIC_ASSERT (sizeof (int32_t) == sizeof (int));
  gboolean ok = hz_gpu_upload (f->gpu, f->ptok, tokens, sizeof (int32_t) * n, error);
  /* passes whose every row gives logits (decode steps) replay a graph captured at the
   * first pass of that many rows (the hook must launch the same for the same n) */
  const gboolean graphable = ok && n_out == n && g_strcmp0 (g_getenv ("HZ_GPU_GRAPH"), "0") != 0;
  if (graphable && !f->row_graph)
    {
      f->row_graph = g_new0 (void *, f->pf_cap);
      f->row_graph_tried = g_new0 (gboolean, f->pf_cap);
    }
  if (graphable && !f->row_graph_tried[n - 1])
    {
      f->row_graph_tried[n - 1] = TRUE;
      GError *local = NULL;
      void *gr = NULL;
      const gboolean rec = hzk_graph_begin (st) == 0
                           && rows_pass (f, n, out_rows_dev, n_out, &local);
      const int err = hzk_graph_end (st, &gr);
      if (rec && err == 0)
        f->row_graph[n - 1] = gr;
      else
        {
          g_debug ("GPU rows pass of %u not captured (%s); launching kernels directly", n,
                   local ? local->message : hzk_error_string (err));
          if (gr)
            hzk_graph_destroy (gr);
          hzk_last_error ();
        }
      g_clear_error (&local);
    }
  if (ok && graphable && f->row_graph[n - 1])
    ok = rt (hzk_graph_launch (f->row_graph[n - 1], st), "graph launch", error);
  else
    ok = ok && rows_pass (f, n, out_rows_dev, n_out, error);
  ok = ok && (n_out == 0 || hz_gpu_download (f->gpu, logits, f->plog,
                                             sizeof (float) * n_out * hp->n_vocab, error));
  f->attn = NULL;
  f->attn_data = NULL;
  return ok;
}

/* n_steps device-side steps from `token` at pos, each feeding its choice to the next. */
static gboolean
generate (HzGpuForward *f, gboolean sample, int32_t token, guint pos, guint n_steps,
          int32_t *out_ids, guint *n_done, GError **error)
{
  const HzHparams *hp = &f->llm->hp;
  *n_done = 0;
  if (f->no_kv || token < 0 || token >= hp->n_vocab || pos >= f->n_ctx)
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
  if (f->no_kv || n == 0 || pos >= f->n_ctx || n > f->n_ctx - pos || n > MAX (f->pf_cap, PF_MAX)
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
