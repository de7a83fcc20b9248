/* learner/gpu-train.c — LoRA training steps on the GPU (gpu-train.h): the CPU graph of
 * model-train-impl.c, op for op, on kernels/train.hip's device ops. */
#include <math.h>
#include <string.h>
#include "gpu-train.h"
#include "model-train.h"   /* hz_train_rope_table */
#include "hanzo/engine-train-gpu.h"

/* The activations of one layer's forward that its backward reads (device buffers). */
typedef struct {
  float *h1, *rstd1, *q_pre, *k_pre, *rstd_q, *rstd_k, *q, *k, *vv, *P, *att, *x_mid, *h2,
        *rstd2, *gate, *up, *act, *u[HZ_LORA_N_TARGETS];
} LayerCache;

/* Device weights of one layer. */
typedef struct {
  HzGpuTensor *w[HZ_LORA_N_TARGETS];   /* q, k, v, o, gate, up, down (HzLoraTarget order) */
  float *attn_norm, *ffn_norm, *bq, *bk, *bv, *bo, *q_norm, *k_norm;
} GpuLayer;

/* Kinds of ops in the profile (HZ_GPU_TRAIN_PROFILE=1). */
enum { PROF_BASE, PROF_BASE_BWD, PROF_LORA, PROF_ATTN, PROF_OTHER, PROF_N };
static const char *const prof_names[PROF_N] = { "base products forward (W x, bf16 copies of x)",
                                                "base products backward (W^T dy)",
                                                "LoRA products", "attention", "other ops" };

struct _HzGpuTrainer {
  const HzLlm  *llm;
  const HzLora *lora;
  HzGpu        *gpu;
  void         *stream;
  int           max_seqs;
  int64_t       max_T;
  int           n_seq;      /* of the last forward */
  int64_t       T, R;       /* tokens per sequence, rows n_seq·T */
  GpuLayer     *layers;
  HzGpuTensor  *tok_embd, *output;    /* output == tok_embd when tied (not freed twice) */
  float        *output_norm;
  float        *cs;         /* RoPE tables [max_T][n_rot] */
  float        *params, *grads, *m, *v;
  int64_t       step;
  /* activations: layer inputs; the caches of layers 0 .. n_keep−1, kept from the forward to
   * the backward; one more cache (`work`) for the other layers, recomputed in the backward
   * (it holds layer cached_layer); the head */
  float *xs;
  LayerCache *keep, work;
  int   n_keep;
  float *hf, *rstd_f, *logits;
  double *loss, *partial;
  int32_t *tok, *tgt;
  void  *xb;                /* bfloat16 copy of a forward product's input [R][max n_in] */
  /* backward scratch */
  float *dx, *dh, *d_att, *dq, *dk, *dv, *dq_pre, *dk_pre, *d_act, *d_gate, *d_up, *dS, *du;
  int   cached_layer;
  void *pinned[2];          /* lora->params and lora->grads when page-locked (faster copies) */
  GPtrArray *bufs;          /* device buffers freed together */
  char *desc;
  /* HZ_GPU_TRAIN_PROFILE=1: device seconds per kind of op, from events recorded on the
   * stream between the ops (read at the end of each call), logged when the trainer is freed */
  gboolean prof;
  GPtrArray *prof_ev;       /* events, reused from call to call */
  GArray   *prof_cat;       /* int: the kind of the interval ending at event i */
  guint     prof_n;         /* events recorded in this call */
  double    prof_s[PROF_N];
};

/* Attribute the device time since the last mark of this call to `cat` (profiling only):
 * an event recorded on the stream, the intervals summed by prof_collect. */
static void
prof_mark (HzGpuTrainer *t, int cat)
{
  if (!t->prof)
    return;
  if (t->prof_n == t->prof_ev->len)
    {
      void *ev = NULL;
      if (hzk_event_create (&ev) != 0)
        {
          t->prof = FALSE;
          return;
        }
      g_ptr_array_add (t->prof_ev, ev);
      g_array_set_size (t->prof_cat, t->prof_ev->len);
    }
  g_array_index (t->prof_cat, int, t->prof_n) = cat;
  hzk_event_record (g_ptr_array_index (t->prof_ev, t->prof_n), t->stream);
  t->prof_n++;
}

/* Add the intervals between this call's events to their kinds (waits for the last). */
static void
prof_collect (HzGpuTrainer *t)
{
  if (!t->prof)
    return;
  for (guint i = 1; i < t->prof_n; i++)
    {
      float ms = 0;
      if (hzk_event_elapsed_ms (g_ptr_array_index (t->prof_ev, i - 1),
                                g_ptr_array_index (t->prof_ev, i), &ms) == 0)
        t->prof_s[g_array_index (t->prof_cat, int, i)] += ms / 1e3;
    }
  t->prof_n = 0;
}

gboolean
hz_gpu_train_wanted (void)
{
  return g_strcmp0 (g_getenv ("HZ_DEVICE"), "cpu") != 0;
}

static gboolean
ck (int err, const char *what, GError **error)
{
  if (err == 0)
    return TRUE;
  g_set_error (error, HZ_GPU_ERROR, HZ_GPU_ERROR_RUNTIME, "%s: %s", what, hzk_error_string (err));
  return FALSE;
}

static void *
dalloc (HzGpuTrainer *t, size_t bytes, GError **error)
{
  void *p = hz_gpu_alloc (t->gpu, bytes ? bytes : 16, error);
  if (p)
    {
      g_ptr_array_add (t->bufs, p);
      if (!hz_gpu_sync (t->gpu, error) || !ck (hzk_memset (p, 0, bytes ? bytes : 16, t->stream), "memset", error))
        return NULL;
    }
  return p;
}

/* Device copy of a host float vector of n (NULL stays NULL). */
static gboolean
dvec (HzGpuTrainer *t, const float *host, int64_t n, float **out, GError **error)
{
  *out = NULL;
  if (host == NULL)
    return TRUE;
  return (*out = dalloc (t, n * sizeof (float), error)) != NULL
         && hz_gpu_upload (t->gpu, *out, host, n * sizeof (float), error);
}

static HzGpuTensor *
dmat (HzGpuTrainer *t, const HzMatrix *M, GError **error)
{
  HzGpuTensor *w = hz_gpu_tensor_upload (t->gpu, M->qt->type, M->n_out, M->n_in, M->data, error);
  if (w && !hzk_train_qmm_available (hz_gpu_tensor_device_type (w)))
    {
      g_set_error (error, HZ_GPU_ERROR, HZ_GPU_ERROR_UNSUPPORTED,
                   "%s: no device decoder for the training products", M->name);
      hz_gpu_tensor_free (w);
      return NULL;
    }
  return w;
}

static const HzMatrix *
layer_matrix (const HzLayer *L, HzLoraTarget tg)
{
  switch (tg)
    {
    case HZ_LORA_Q: return &L->wq;
    case HZ_LORA_K: return &L->wk;
    case HZ_LORA_V: return &L->wv;
    case HZ_LORA_O: return &L->wo;
    case HZ_LORA_GATE: return &L->w_gate;
    case HZ_LORA_UP: return &L->w_up;
    case HZ_LORA_DOWN: return &L->w_down;
    default: g_assert_not_reached ();
    }
}

void
hz_gpu_trainer_free (HzGpuTrainer *t)
{
  if (t == NULL)
    return;
  if (t->gpu)
    hz_gpu_sync (t->gpu, NULL);
  for (int i = 0; i < 2; i++)
    if (t->pinned[i])
      hzk_train_host_unregister (t->pinned[i]);
  if (t->prof)
    g_message ("GPU training time (device): %s %.3f s, %s %.3f s, %s %.3f s, %s %.3f s, %s %.3f s",
               prof_names[0], t->prof_s[0], prof_names[1], t->prof_s[1], prof_names[2],
               t->prof_s[2], prof_names[3], t->prof_s[3], prof_names[4], t->prof_s[4]);
  if (t->prof_ev)
    for (guint i = 0; i < t->prof_ev->len; i++)
      hzk_event_destroy (g_ptr_array_index (t->prof_ev, i));
  g_clear_pointer (&t->prof_ev, g_ptr_array_unref);
  g_clear_pointer (&t->prof_cat, g_array_unref);
  if (t->layers)
    for (int il = 0; il < t->llm->hp.n_layer; il++)
      for (int j = 0; j < HZ_LORA_N_TARGETS; j++)
        hz_gpu_tensor_free (t->layers[il].w[j]);
  if (t->output != t->tok_embd)
    hz_gpu_tensor_free (t->output);
  hz_gpu_tensor_free (t->tok_embd);
  if (t->bufs)
    for (guint i = 0; i < t->bufs->len; i++)
      hz_gpu_free (t->gpu, g_ptr_array_index (t->bufs, i));
  g_clear_pointer (&t->bufs, g_ptr_array_unref);
  g_free (t->layers);
  g_free (t->keep);
  g_free (t->desc);
  if (t->gpu)
    hz_gpu_close (t->gpu);
  g_free (t);
}

/* The buffers of one layer cache for the trainer's maxima; with bytes != NULL only their
 * size is added to *bytes (nothing allocated). */
static gboolean
cache_alloc (HzGpuTrainer *t, LayerCache *c, size_t *bytes, GError **error)
{
  const HzHparams *hp = &t->llm->hp;
  const int64_t R = (int64_t) t->max_seqs * t->max_T, T = t->max_T, d = hp->n_embd, ff = hp->n_ff;
  const int64_t nh = hp->n_head, nkv = hp->n_head_kv;
  const int64_t dq = nh * hp->head_dim_k, dk = nkv * hp->head_dim_k;
  const int64_t dv = nkv * hp->head_dim_v, dov = nh * hp->head_dim_v;
  const int r = t->lora ? t->lora->config.r : 0;
  const gboolean qk_norm = hp->n_layer > 0 && t->llm->layers[0].q_norm != NULL;
  gboolean ok = TRUE;
#define A(field, n) do { \
    if (bytes) \
      *bytes += (size_t) (n) * sizeof (float); \
    else \
      ok = ok && (c->field = dalloc (t, (size_t) (n) * sizeof (float), error)) != NULL; \
  } while (0)
  A (h1, R * d); A (rstd1, R);
  if (qk_norm)
    {
      A (q_pre, R * dq); A (k_pre, R * dk); A (rstd_q, R * nh); A (rstd_k, R * nkv);
    }
  A (q, R * dq); A (k, R * dk); A (vv, R * dv);
  A (P, (int64_t) t->max_seqs * nh * T * T);
  A (att, R * dov); A (x_mid, R * d); A (h2, R * d); A (rstd2, R);
  A (gate, R * ff); A (up, R * ff); A (act, R * ff);
  for (int j = 0; j < HZ_LORA_N_TARGETS; j++)
    if (t->lora && (t->lora->config.targets & HZ_LORA_BIT (j)))
      A (u[j], R * r);
#undef A
  return ok;
}

/* Layers 0 .. n_keep−1 get caches of their own, so that the backward does not recompute
 * their forward: as many as fit in HZ_GPU_TRAIN_KEEP_MIB (default 1536 MiB) and in half of
 * the device memory still free, never the last layer (its forward is in `work` anyway).
 * Without adapters (no backward) none. An allocation that fails only ends the keeping. */
static void
keep_caches (HzGpuTrainer *t)
{
  const int n_layer = t->llm->hp.n_layer;
  if (t->lora == NULL || n_layer < 2)
    return;
  const char *env = g_getenv ("HZ_GPU_TRAIN_KEEP_MIB");
  size_t budget = (size_t) (env ? g_ascii_strtoull (env, NULL, 10) : 1536) << 20;
  size_t used = 0, total = 0;
  if (hzk_train_mem_used (&used) == 0
      && hzk_device_info (0, NULL, 0, &total, NULL, NULL) == 0 && total > used)
    budget = MIN (budget, (total - used) / 2);
  size_t per = 0;
  cache_alloc (t, NULL, &per, NULL);
  const int n = (int) MIN ((size_t) (n_layer - 1), per ? budget / per : 0);
  if (n < 1)
    return;
  t->keep = g_new0 (LayerCache, n);
  for (int il = 0; il < n; il++)
    {
      g_autoptr (GError) local = NULL;
      if (!cache_alloc (t, &t->keep[il], NULL, &local))
        break;
      t->n_keep = il + 1;
    }
}

HzGpuTrainer *
hz_gpu_trainer_new (const HzLlm *llm, const HzLora *lora, int max_seqs, int64_t max_tokens,
                    GError **error)
{
  const HzHparams *hp = &llm->hp;
  g_return_val_if_fail (max_seqs >= 1 && max_tokens >= 1, NULL);
  if (hp->n_expert > 0)
    {
      g_set_error (error, HZ_GPU_ERROR, HZ_GPU_ERROR_UNSUPPORTED,
                   "GPU training of mixture-of-experts models is not implemented");
      return NULL;
    }
  if (lora && lora->n_layer != hp->n_layer)
    {
      g_set_error (error, HZ_GPU_ERROR, HZ_GPU_ERROR_INVALID, "adapter layers %d != model layers %d",
                   lora->n_layer, hp->n_layer);
      return NULL;
    }
  HzGpu *gpu = hz_gpu_open (0, error);
  if (gpu == NULL)
    return NULL;
  HzGpuTrainer *t = g_new0 (HzGpuTrainer, 1);
  t->llm = llm;
  t->lora = lora;
  t->gpu = gpu;
  t->stream = hz_gpu_stream (gpu);
  t->max_seqs = max_seqs;
  t->max_T = max_tokens;
  t->cached_layer = -1;
  t->bufs = g_ptr_array_new ();
  t->desc = g_strdup (hz_gpu_describe (gpu));
  t->prof = g_strcmp0 (g_getenv ("HZ_GPU_TRAIN_PROFILE"), "1") == 0;
  t->prof_ev = g_ptr_array_new ();
  t->prof_cat = g_array_new (FALSE, TRUE, sizeof (int));

  const int64_t R = (int64_t) max_seqs * max_tokens, T = max_tokens, d = hp->n_embd;
  const int64_t ff = hp->n_ff, V = hp->n_vocab;
  const int64_t dq = (int64_t) hp->n_head * hp->head_dim_k;
  const int64_t dk = (int64_t) hp->n_head_kv * hp->head_dim_k;
  const int64_t dv = (int64_t) hp->n_head_kv * hp->head_dim_v;
  const int64_t dov = (int64_t) hp->n_head * hp->head_dim_v;
  const int64_t np = lora ? (int64_t) lora->n_params : 0;
  const int r = lora ? lora->config.r : 0;
  const gboolean qk_norm = hp->n_layer > 0 && llm->layers[0].q_norm != NULL;
  const size_t F = sizeof (float);

  gboolean ok = TRUE;
  t->layers = g_new0 (GpuLayer, hp->n_layer);
  for (int il = 0; ok && il < hp->n_layer; il++)
    {
      const HzLayer *L = &llm->layers[il];
      GpuLayer *G = &t->layers[il];
      for (int j = 0; ok && j < HZ_LORA_N_TARGETS; j++)
        ok = (G->w[j] = dmat (t, layer_matrix (L, j), error)) != NULL;
      ok = ok && dvec (t, L->attn_norm, d, &G->attn_norm, error)
           && dvec (t, L->ffn_norm, d, &G->ffn_norm, error)
           && dvec (t, L->bq, dq, &G->bq, error) && dvec (t, L->bk, dk, &G->bk, error)
           && dvec (t, L->bv, dv, &G->bv, error) && dvec (t, L->bo, d, &G->bo, error)
           && dvec (t, L->q_norm, hp->head_dim_k, &G->q_norm, error)
           && dvec (t, L->k_norm, hp->head_dim_k, &G->k_norm, error);
    }
  ok = ok && (t->tok_embd = hz_gpu_tensor_upload (gpu, llm->tok_embd.qt->type, llm->tok_embd.n_out,
                                                  llm->tok_embd.n_in, llm->tok_embd.data, error));
  if (ok && llm->output.data == llm->tok_embd.data && llm->output.qt == llm->tok_embd.qt
      && hzk_train_qmm_available (hz_gpu_tensor_device_type (t->tok_embd)))
    t->output = t->tok_embd;
  else if (ok)
    ok = (t->output = dmat (t, &llm->output, error)) != NULL;
  ok = ok && dvec (t, llm->output_norm, d, &t->output_norm, error);
  if (ok)
    {
      g_autofree float *cs = hz_train_rope_table (llm, T);
      ok = dvec (t, cs, T * hp->n_rot, &t->cs, error);
    }
#define A(field, n) (ok = ok && ((t->field = dalloc (t, (size_t) (n) * F, error)) != NULL))
  A (params, np); A (grads, np); A (m, np); A (v, np);
  A (xs, (hp->n_layer + 1) * R * d);
  if (qk_norm)
    {
      A (dq_pre, R * dq); A (dk_pre, R * dk);
    }
  A (dS, (int64_t) max_seqs * hp->n_head * T * T);
  if (lora)
    A (du, R * r);
  A (hf, R * d); A (rstd_f, R); A (logits, R * V);
  A (dx, R * d); A (dh, R * d); A (d_att, R * dov); A (dq, R * dq); A (dk, R * dk); A (dv, R * dv);
  A (d_act, R * ff); A (d_gate, R * ff); A (d_up, R * ff);
#undef A
  ok = ok && cache_alloc (t, &t->work, NULL, error)
       && (t->xb = dalloc (t, (size_t) R * MAX (MAX (d, dov), ff) * sizeof (uint16_t), error));
  ok = ok && (t->loss = dalloc (t, R * sizeof (double), error))
       && (t->partial = dalloc (t, HZK_TRAIN_SUMSQ_BLOCKS * sizeof (double), error))
       && (t->tok = dalloc (t, R * sizeof (int32_t), error))
       && (t->tgt = dalloc (t, R * sizeof (int32_t), error))
       && hz_gpu_sync (gpu, error);
  if (!ok)
    {
      hz_gpu_trainer_free (t);
      return NULL;
    }
  keep_caches (t);
  /* the SFT trainer copies the adapters to the device and back around every step: from
   * page-locked memory these copies run at the bus's speed (a failure only costs speed) */
  float *host_arrays[2] = { lora ? lora->params : NULL, lora ? lora->grads : NULL };
  for (int i = 0; i < 2; i++)
    if (host_arrays[i] && np > 0 && hzk_train_host_register (host_arrays[i], np * F) == 0)
      t->pinned[i] = host_arrays[i];
  return t;
}

const char *
hz_gpu_trainer_describe (const HzGpuTrainer *t)
{
  return t->desc;
}

gboolean
hz_gpu_trainer_set_params (HzGpuTrainer *t, const float *params, GError **error)
{
  if (!t->lora)
    return TRUE;
  return hz_gpu_upload (t->gpu, t->params, params, t->lora->n_params * sizeof (float), error)
         && hz_gpu_sync (t->gpu, error);
}

gboolean
hz_gpu_trainer_get_params (HzGpuTrainer *t, float *params, GError **error)
{
  return !t->lora || hz_gpu_download (t->gpu, params, t->params, t->lora->n_params * sizeof (float), error);
}

gboolean
hz_gpu_trainer_zero_grad (HzGpuTrainer *t, GError **error)
{
  return !t->lora || ck (hzk_memset (t->grads, 0, t->lora->n_params * sizeof (float), t->stream),
                         "memset", error);
}

gboolean
hz_gpu_trainer_get_grads (HzGpuTrainer *t, float *grads, GError **error)
{
  return !t->lora || hz_gpu_download (t->gpu, grads, t->grads, t->lora->n_params * sizeof (float), error);
}

/* ---- the graph ------------------------------------------------------------------------- */

static const HzkTrainBatch ONE = { 0, 0, 1, 1 };

/* The adapter of (layer, target) on the device, or A == NULL. */
typedef struct {
  float *A, *B, *dA, *dB;
  int r;
  float s;
} Adapter;

static Adapter
adapter (HzGpuTrainer *t, int il, HzLoraTarget tg, gboolean use)
{
  Adapter a = { 0 };
  const HzLoraSlot *s = use && t->lora ? hz_lora_slot (t->lora, il, tg) : NULL;
  if (s == NULL)
    return a;
  a.A = t->params + s->off_a;
  a.B = t->params + s->off_b;
  a.dA = t->grads + s->off_a;
  a.dB = t->grads + s->off_b;
  a.r = t->lora->config.r;
  a.s = t->lora->scaling;
  return a;
}

static gboolean
qmm (HzGpuTrainer *t, const HzGpuTensor *w, int trans, const float *x, const void *xb, float *y,
     int acc, GError **error)
{
  prof_mark (t, PROF_OTHER);
  const gboolean ok = ck (hzk_train_qmm (hz_gpu_tensor_device_type (w), hz_gpu_tensor_data (w),
                                         hz_gpu_tensor_rows (w), hz_gpu_tensor_k (w), trans, x,
                                         xb, t->R, y, acc, t->stream), "training product", error);
  prof_mark (t, trans ? PROF_BASE_BWD : PROF_BASE);
  return ok;
}

/* A LoRA product (batch 1) or an attention product (batch > 1, a matrix per head). */
static gboolean
gemm (HzGpuTrainer *t, int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha,
      const float *A, int64_t lda, HzkTrainBatch ba, const float *B, int64_t ldb,
      HzkTrainBatch bb, float beta, float *C, int64_t ldc, HzkTrainBatch bc, int batch,
      int causal, GError **error)
{
  prof_mark (t, PROF_OTHER);
  const gboolean ok = ck (hzk_train_gemm (ta, tb, (int) M, (int) N, (int) K, alpha, A, lda, ba,
                                          B, ldb, bb, beta, C, ldc, bc, batch, causal, t->stream),
                          "training gemm", error);
  prof_mark (t, batch > 1 ? PROF_ATTN : PROF_LORA);
  return ok;
}

/* t->xb = x [R][n] rounded to bfloat16 once for the forward products that read x (counted
 * with the base products). */
static gboolean
to_bf16 (HzGpuTrainer *t, const float *x, int64_t n, GError **error)
{
  prof_mark (t, PROF_OTHER);
  const gboolean ok = ck (hzk_train_to_bf16 (t->xb, x, t->R * n, t->stream), "bf16 copy", error);
  prof_mark (t, PROF_BASE);
  return ok;
}

/* The cache that layer il's forward writes and its backward reads. */
static LayerCache *
layer_cache (HzGpuTrainer *t, int il)
{
  return il < t->n_keep ? &t->keep[il] : &t->work;
}

/* y = x W^T + bias + s·(x A^T) B^T; u = x A^T cached. new_x: x differs from the last
 * product's (its bf16 copy t->xb is made first), else t->xb already holds it. */
static gboolean
lin_fwd (HzGpuTrainer *t, LayerCache *c, gboolean use_lora, int il, HzLoraTarget tg,
         const float *bias, const float *x, gboolean new_x, float *y, GError **error)
{
  const HzGpuTensor *W = t->layers[il].w[tg];
  const int64_t n_in = hz_gpu_tensor_k (W), n_out = hz_gpu_tensor_rows (W);
  Adapter a = adapter (t, il, tg, use_lora);
  if ((new_x && !to_bf16 (t, x, n_in, error)) || !qmm (t, W, 0, x, t->xb, y, 0, error))
    return FALSE;
  if (bias && !ck (hzk_train_add_bias (y, bias, t->R, n_out, t->stream), "bias", error))
    return FALSE;
  if (!a.A)
    return TRUE;
  return gemm (t, 0, 1, t->R, a.r, n_in, 1.0f, x, n_in, ONE, a.A, n_in, ONE, 0.0f, c->u[tg], a.r, ONE, 1, 0, error)
         && gemm (t, 0, 1, t->R, n_out, a.r, a.s, c->u[tg], a.r, ONE, a.B, a.r, ONE, 1.0f, y, n_out, ONE, 1, 0, error);
}

/* dB += s dy^T u; du = s dy B; dA += du^T x; dx (nullable) += du A + dy W. */
static gboolean
lin_bwd (HzGpuTrainer *t, LayerCache *c, int il, HzLoraTarget tg, float *dx, const float *dy,
         const float *x, GError **error)
{
  const HzGpuTensor *W = t->layers[il].w[tg];
  const int64_t n_in = hz_gpu_tensor_k (W), n_out = hz_gpu_tensor_rows (W);
  Adapter a = adapter (t, il, tg, TRUE);
  if (a.A)
    {
      if (!gemm (t, 1, 0, n_out, a.r, t->R, a.s, dy, n_out, ONE, c->u[tg], a.r, ONE, 1.0f, a.dB, a.r, ONE, 1, 0, error)
          || !gemm (t, 0, 0, t->R, a.r, n_out, a.s, dy, n_out, ONE, a.B, a.r, ONE, 0.0f, t->du, a.r, ONE, 1, 0, error)
          || !gemm (t, 1, 0, a.r, n_in, t->R, 1.0f, t->du, a.r, ONE, x, n_in, ONE, 1.0f, a.dA, n_in, ONE, 1, 0, error))
        return FALSE;
      if (dx && !gemm (t, 0, 0, t->R, n_in, a.r, 1.0f, t->du, a.r, ONE, a.A, n_in, ONE, 1.0f, dx, n_in, ONE, 1, 0, error))
        return FALSE;
    }
  return dx == NULL || qmm (t, W, 1, dy, NULL, dx, 1, error);
}

/* Causal attention of the n_seq sequences: P = softmax(q k^T / sqrt(hdk)), att = P v (the
 * products skip the tiles above the diagonal: hzk_train_gemm's causal modes). */
static gboolean
attn_fwd (HzGpuTrainer *t, LayerCache *c, GError **error)
{
  const HzHparams *hp = &t->llm->hp;
  const int64_t T = t->T, nh = hp->n_head, grp = hp->n_head / hp->n_head_kv;
  const int64_t hdk = hp->head_dim_k, hdv = hp->head_dim_v;
  const int64_t dq = nh * hdk, dk = hp->n_head_kv * hdk, dv = hp->n_head_kv * hdv, dov = nh * hdv;
  const int nz = (int) (t->n_seq * nh);
  const HzkTrainBatch bq = { T * dq, hdk, (int) nh, 1 }, bk = { T * dk, hdk, (int) nh, (int) grp };
  const HzkTrainBatch bs = { T * T, 0, 1, 1 }, bv = { T * dv, hdv, (int) nh, (int) grp };
  const HzkTrainBatch bo = { T * dov, hdv, (int) nh, 1 };
  return gemm (t, 0, 1, T, T, hdk, 1.0f, c->q, dq, bq, c->k, dk, bk, 0.0f, c->P, T, bs, nz, 1, error)
         && ck (hzk_train_softmax_causal (c->P, nz, (int) T, (float) (1.0 / sqrt ((double) hdk)), t->stream),
                "softmax", error)
         && (prof_mark (t, PROF_ATTN), TRUE)
         && gemm (t, 0, 0, T, hdv, T, 1.0f, c->P, T, bs, c->vv, dv, bv, 0.0f, c->att, dov, bo, nz, 2, error);
}

/* dq, dk, dv += the gradients of attention from d_att (dq, dk, dv zeroed by the caller). The
 * key/value gradients of a GQA group are the sums over its query heads: one product over
 * all query heads adding into the shared dk / dv. */
static gboolean
attn_bwd (HzGpuTrainer *t, LayerCache *c, GError **error)
{
  const HzHparams *hp = &t->llm->hp;
  const int64_t T = t->T, nh = hp->n_head, nkv = hp->n_head_kv, grp = nh / nkv;
  const int64_t hdk = hp->head_dim_k, hdv = hp->head_dim_v;
  const int64_t dq = nh * hdk, dk = nkv * hdk, dv = nkv * hdv, dov = nh * hdv;
  const int nz = (int) (t->n_seq * nh);
  const float scale = (float) (1.0 / sqrt ((double) hdk));
  const HzkTrainBatch bq = { T * dq, hdk, (int) nh, 1 }, bk = { T * dk, hdk, (int) nh, (int) grp };
  const HzkTrainBatch bs = { T * T, 0, 1, 1 }, bv = { T * dv, hdv, (int) nh, (int) grp };
  const HzkTrainBatch bo = { T * dov, hdv, (int) nh, 1 };
  return gemm (t, 0, 1, T, T, hdv, 1.0f, t->d_att, dov, bo, c->vv, dv, bv, 0.0f, t->dS, T, bs, nz, 1, error)
         && ck (hzk_train_softmax_bwd (t->dS, c->P, nz, (int) T, t->stream), "softmax backward", error)
         && (prof_mark (t, PROF_ATTN), TRUE)
         && gemm (t, 0, 0, T, hdk, T, scale, t->dS, T, bs, c->k, dk, bk, 1.0f, t->dq, dq, bq, nz, 2, error)
         && gemm (t, 1, 0, T, hdk, T, scale, t->dS, T, bs, c->q, dq, bq, 1.0f, t->dk, dk, bk, nz, 3, error)
         && gemm (t, 1, 0, T, hdv, T, 1.0f, c->P, T, bs, t->d_att, dov, bo, 1.0f, t->dv, dv, bv, nz, 3, error);
}

/* Forward of layer il into the cache and x_out; x_out == NULL (recomputation) skips the
 * down projection's base product and computes only its LoRA input u. */
static gboolean
layer_fwd (HzGpuTrainer *t, gboolean use_lora, int il, const float *x_in, float *x_out,
           GError **error)
{
  const HzHparams *hp = &t->llm->hp;
  const GpuLayer *G = &t->layers[il];
  LayerCache *c = layer_cache (t, il);
  const int64_t R = t->R, d = hp->n_embd, ff = hp->n_ff;
  const int neox = hp->rope_mode == HZ_ROPE_NEOX;
  void *s = t->stream;
  if (!ck (hzk_train_rmsnorm_fwd (c->h1, c->rstd1, x_in, G->attn_norm, R, (int) d, hp->norm_eps, s), "norm", error)
      || !lin_fwd (t, c, use_lora, il, HZ_LORA_Q, G->bq, c->h1, TRUE, G->q_norm ? c->q_pre : c->q, error)
      || !lin_fwd (t, c, use_lora, il, HZ_LORA_K, G->bk, c->h1, FALSE, G->k_norm ? c->k_pre : c->k, error)
      || !lin_fwd (t, c, use_lora, il, HZ_LORA_V, G->bv, c->h1, FALSE, c->vv, error))
    return FALSE;
  if (G->q_norm && !ck (hzk_train_rmsnorm_fwd (c->q, c->rstd_q, c->q_pre, G->q_norm, R * hp->n_head,
                                               hp->head_dim_k, hp->norm_eps, s), "q norm", error))
    return FALSE;
  if (G->k_norm && !ck (hzk_train_rmsnorm_fwd (c->k, c->rstd_k, c->k_pre, G->k_norm, R * hp->n_head_kv,
                                               hp->head_dim_k, hp->norm_eps, s), "k norm", error))
    return FALSE;
  if (!ck (hzk_train_rope (c->q, t->cs, R, (int) t->T, hp->n_head, hp->head_dim_k, hp->n_rot, neox, 0, s), "rope", error)
      || !ck (hzk_train_rope (c->k, t->cs, R, (int) t->T, hp->n_head_kv, hp->head_dim_k, hp->n_rot, neox, 0, s), "rope", error)
      || !attn_fwd (t, c, error)
      || !lin_fwd (t, c, use_lora, il, HZ_LORA_O, G->bo, c->att, TRUE, c->x_mid, error)
      || !ck (hzk_train_axpy (c->x_mid, x_in, 1.0f, R * d, s), "residual", error)
      || !ck (hzk_train_rmsnorm_fwd (c->h2, c->rstd2, c->x_mid, G->ffn_norm, R, (int) d, hp->norm_eps, s), "norm", error)
      || !lin_fwd (t, c, use_lora, il, HZ_LORA_GATE, NULL, c->h2, TRUE, c->gate, error)
      || !lin_fwd (t, c, use_lora, il, HZ_LORA_UP, NULL, c->h2, FALSE, c->up, error)
      || !ck (hzk_train_swiglu_fwd (c->act, c->gate, c->up, R * ff, s), "swiglu", error))
    return FALSE;
  if (x_out == NULL)
    {
      Adapter a = adapter (t, il, HZ_LORA_DOWN, use_lora);
      return !a.A || gemm (t, 0, 1, R, a.r, ff, 1.0f, c->act, ff, ONE, a.A, ff, ONE, 0.0f,
                           c->u[HZ_LORA_DOWN], a.r, ONE, 1, 0, error);
    }
  return lin_fwd (t, c, use_lora, il, HZ_LORA_DOWN, NULL, c->act, TRUE, x_out, error)
         && ck (hzk_train_axpy (x_out, c->x_mid, 1.0f, R * d, s), "residual", error);
}

/* On entry t->dx = d loss / d x_out; on return d loss / d x_in (for il > 0). */
static gboolean
layer_bwd (HzGpuTrainer *t, int il, const float *x_in, GError **error)
{
  const HzHparams *hp = &t->llm->hp;
  const GpuLayer *G = &t->layers[il];
  LayerCache *c = layer_cache (t, il);
  const int64_t R = t->R, d = hp->n_embd, ff = hp->n_ff;
  const int64_t dq = (int64_t) hp->n_head * hp->head_dim_k;
  const int64_t dk = (int64_t) hp->n_head_kv * hp->head_dim_k;
  const int64_t dv = (int64_t) hp->n_head_kv * hp->head_dim_v;
  const int64_t dov = (int64_t) hp->n_head * hp->head_dim_v;
  const int neox = hp->rope_mode == HZ_ROPE_NEOX;
  const size_t F = sizeof (float);
  void *s = t->stream;
  const gboolean need_dx = il > 0;

  if (!ck (hzk_memset (t->d_act, 0, R * ff * F, s), "memset", error)
      || !lin_bwd (t, c, il, HZ_LORA_DOWN, t->d_act, t->dx, c->act, error)
      || !ck (hzk_memset (t->d_gate, 0, R * ff * F, s), "memset", error)
      || !ck (hzk_memset (t->d_up, 0, R * ff * F, s), "memset", error)
      || !ck (hzk_train_swiglu_bwd (t->d_gate, t->d_up, t->d_act, c->gate, c->up, R * ff, s), "swiglu", error)
      || !ck (hzk_memset (t->dh, 0, R * d * F, s), "memset", error)
      || !lin_bwd (t, c, il, HZ_LORA_GATE, t->dh, t->d_gate, c->h2, error)
      || !lin_bwd (t, c, il, HZ_LORA_UP, t->dh, t->d_up, c->h2, error)
      || !ck (hzk_train_rmsnorm_bwd (t->dx, t->dh, c->x_mid, G->ffn_norm, c->rstd2, R, (int) d, s), "norm", error))
    return FALSE;
  /* t->dx is now d loss / d x_mid */
  if (!ck (hzk_memset (t->d_att, 0, R * dov * F, s), "memset", error)
      || !lin_bwd (t, c, il, HZ_LORA_O, t->d_att, t->dx, c->att, error)
      || !ck (hzk_memset (t->dq, 0, R * dq * F, s), "memset", error)
      || !ck (hzk_memset (t->dk, 0, R * dk * F, s), "memset", error)
      || !ck (hzk_memset (t->dv, 0, R * dv * F, s), "memset", error)
      || !attn_bwd (t, c, error)
      || !ck (hzk_train_rope (t->dq, t->cs, R, (int) t->T, hp->n_head, hp->head_dim_k, hp->n_rot, neox, 1, s), "rope", error)
      || !ck (hzk_train_rope (t->dk, t->cs, R, (int) t->T, hp->n_head_kv, hp->head_dim_k, hp->n_rot, neox, 1, s), "rope", error))
    return FALSE;
  const float *dq_lin = t->dq, *dk_lin = t->dk;
  if (G->q_norm)
    {
      if (!ck (hzk_memset (t->dq_pre, 0, R * dq * F, s), "memset", error)
          || !ck (hzk_train_rmsnorm_bwd (t->dq_pre, t->dq, c->q_pre, G->q_norm, c->rstd_q,
                                         R * hp->n_head, hp->head_dim_k, s), "q norm", error))
        return FALSE;
      dq_lin = t->dq_pre;
    }
  if (G->k_norm)
    {
      if (!ck (hzk_memset (t->dk_pre, 0, R * dk * F, s), "memset", error)
          || !ck (hzk_train_rmsnorm_bwd (t->dk_pre, t->dk, c->k_pre, G->k_norm, c->rstd_k,
                                         R * hp->n_head_kv, hp->head_dim_k, s), "k norm", error))
        return FALSE;
      dk_lin = t->dk_pre;
    }
  float *dh = need_dx ? t->dh : NULL;
  if (need_dx && !ck (hzk_memset (t->dh, 0, R * d * F, s), "memset", error))
    return FALSE;
  if (!lin_bwd (t, c, il, HZ_LORA_Q, dh, dq_lin, c->h1, error)
      || !lin_bwd (t, c, il, HZ_LORA_K, dh, dk_lin, c->h1, error)
      || !lin_bwd (t, c, il, HZ_LORA_V, dh, t->dv, c->h1, error))
    return FALSE;
  return !need_dx
         || ck (hzk_train_rmsnorm_bwd (t->dx, t->dh, x_in, G->attn_norm, c->rstd1, R, (int) d, s), "norm", error);
}

static gboolean
check_ids (const HzHparams *hp, const int32_t *tokens, const int32_t *targets, int64_t n,
           GError **error)
{
  for (int64_t i = 0; i < n; i++)
    if (tokens[i] < 0 || tokens[i] >= hp->n_vocab || targets[i] >= hp->n_vocab)
      {
        g_set_error (error, HZ_GPU_ERROR, HZ_GPU_ERROR_INVALID,
                     "token %d / target %d at %" G_GINT64_FORMAT " outside the vocabulary [0, %d)",
                     tokens[i], targets[i], i, hp->n_vocab);
        return FALSE;
      }
  return TRUE;
}

static gboolean
sft_step (HzGpuTrainer *t, const int32_t *tokens, const int32_t *targets, int n_seq, int64_t T,
          double weight, gboolean backward, double *loss_sum, int64_t *n_valid, GError **error)
{
  const HzLlm *llm = t->llm;
  const HzHparams *hp = &llm->hp;
  if (n_seq < 1 || n_seq > t->max_seqs || T < 1 || T > t->max_T)
    {
      g_set_error (error, HZ_GPU_ERROR, HZ_GPU_ERROR_INVALID,
                   "%d sequences of %" G_GINT64_FORMAT " tokens (at most %d of %" G_GINT64_FORMAT ")",
                   n_seq, T, t->max_seqs, t->max_T);
      return FALSE;
    }
  const int64_t R = (int64_t) n_seq * T, d = hp->n_embd, V = hp->n_vocab;
  if (!check_ids (hp, tokens, targets, R, error))
    return FALSE;
  t->n_seq = n_seq;
  t->T = T;
  t->R = R;
  int64_t count = 0;
  for (int64_t i = 0; i < R; i++)
    count += targets[i] >= 0;
  backward = backward && t->lora != NULL;
  void *s = t->stream;
  if (!hz_gpu_upload (t->gpu, t->tok, tokens, R * sizeof (int32_t), error)
      || !hz_gpu_upload (t->gpu, t->tgt, targets, R * sizeof (int32_t), error)
      || !hz_gpu_embed (t->gpu, t->tok_embd, t->tok, (int) R, t->xs, error))
    return FALSE;
  const gboolean use_lora = t->lora != NULL;
  for (int il = 0; il < hp->n_layer; il++)
    if (!layer_fwd (t, use_lora, il, t->xs + il * R * d, t->xs + (il + 1) * R * d, error))
      return FALSE;
  t->cached_layer = hp->n_layer - 1;      /* the last layer's forward ran in `work` */
  if (!ck (hzk_train_rmsnorm_fwd (t->hf, t->rstd_f, t->xs + hp->n_layer * R * d, t->output_norm, R,
                                  (int) d, hp->norm_eps, s), "norm", error)
      || !to_bf16 (t, t->hf, d, error)
      || !qmm (t, t->output, 0, t->hf, t->xb, t->logits, 0, error)
      || !ck (hzk_train_cross_entropy (t->logits, t->tgt, R, V, weight, t->loss, backward, s),
              "cross-entropy", error))
    return FALSE;
  g_autofree double *loss = g_new (double, R);
  if (!hz_gpu_download (t->gpu, loss, t->loss, R * sizeof (double), error))
    return FALSE;
  double sum = 0;
  for (int64_t i = 0; i < R; i++)
    sum += loss[i];
  if (loss_sum)
    *loss_sum = sum;
  if (n_valid)
    *n_valid = count;
  if (!backward)
    return TRUE;

  /* backward: logits' gradient (in t->logits) through the head, then the layers */
  if (!qmm (t, t->output, 1, t->logits, NULL, t->dh, 0, error)
      || !ck (hzk_memset (t->dx, 0, R * d * sizeof (float), s), "memset", error)
      || !ck (hzk_train_rmsnorm_bwd (t->dx, t->dh, t->xs + hp->n_layer * R * d, t->output_norm,
                                     t->rstd_f, R, (int) d, s), "norm", error))
    return FALSE;
  for (int il = hp->n_layer - 1; il >= 0; il--)
    {
      const float *x_in = t->xs + il * R * d;
      if (il >= t->n_keep && t->cached_layer != il)
        {
          if (!layer_fwd (t, TRUE, il, x_in, NULL, error))
            return FALSE;
          t->cached_layer = il;
        }
      if (!layer_bwd (t, il, x_in, error))
        return FALSE;
    }
  return hz_gpu_sync (t->gpu, error);
}

gboolean
hz_gpu_trainer_sft_step (HzGpuTrainer *t, const int32_t *tokens, const int32_t *targets,
                         int n_seq, int64_t T, double weight, gboolean backward,
                         double *loss_sum, int64_t *n_valid, GError **error)
{
  const gboolean ok = sft_step (t, tokens, targets, n_seq, T, weight, backward, loss_sum,
                                n_valid, error);
  prof_collect (t);
  return ok;
}

gboolean
hz_gpu_trainer_optimizer_step (HzGpuTrainer *t, const HzAdamWParams *p, double lr,
                               double max_grad_norm, double *grad_norm, GError **error)
{
  if (!t->lora)
    return TRUE;
  const int64_t n = t->lora->n_params;
  double part[HZK_TRAIN_SUMSQ_BLOCKS];
  if (!ck (hzk_train_sumsq (t->grads, n, t->partial, t->stream), "norm", error)
      || !hz_gpu_download (t->gpu, part, t->partial, sizeof part, error))
    return FALSE;
  double ss = 0;
  for (int i = 0; i < HZK_TRAIN_SUMSQ_BLOCKS; i++)
    ss += part[i];
  const double norm = sqrt (ss);
  if (grad_norm)
    *grad_norm = norm;
  /* torch.nn.utils.clip_grad_norm_, as hz_grad_clip */
  if (max_grad_norm > 0)
    {
      const double c = max_grad_norm / (norm + 1e-6);
      if (c < 1 && !ck (hzk_train_scale (t->grads, n, (float) c, t->stream), "clip", error))
        return FALSE;
    }
  t->step++;
  return ck (hzk_train_adamw (t->params, t->grads, t->m, t->v, n, lr, p->beta1, p->beta2, p->eps,
                              p->weight_decay, t->step, t->stream), "adamw", error)
         && hz_gpu_sync (t->gpu, error);
}

gboolean
hz_gpu_trainer_get_optimizer (HzGpuTrainer *t, HzAdamW *opt, GError **error)
{
  g_return_val_if_fail (t->lora && opt->n == t->lora->n_params, FALSE);
  opt->step = t->step;
  return hz_gpu_download (t->gpu, opt->m, t->m, opt->n * sizeof (float), error)
         && hz_gpu_download (t->gpu, opt->v, t->v, opt->n * sizeof (float), error);
}

gboolean
hz_gpu_trainer_set_optimizer (HzGpuTrainer *t, const HzAdamW *opt, GError **error)
{
  g_return_val_if_fail (t->lora && opt->n == t->lora->n_params, FALSE);
  t->step = opt->step;
  return hz_gpu_upload (t->gpu, t->m, opt->m, opt->n * sizeof (float), error)
         && hz_gpu_upload (t->gpu, t->v, opt->v, opt->n * sizeof (float), error)
         && hz_gpu_sync (t->gpu, error);
}

size_t
hz_gpu_trainer_device_bytes (HzGpuTrainer *t)
{
  size_t used = 0;
  hzk_train_mem_used (&used);
  return used;
}
