/* engine/backend-hip/hz-gpu.c — host side of the GPU backend; see hz-gpu.h. */
#include "hz-gpu.h"

#include "hzk.h"
#include "quant.h"

#include <string.h>

G_DEFINE_QUARK (hz-gpu-error-quark, hz_gpu_error)

struct HzGpu {
  int     device;
  void   *stream;
  void   *act;            /* activation scratch (int8 + scales), act_bytes long */
  size_t  act_bytes;
  void   *mm_ws;          /* split-K workspace of the matmul (hzk_matmul_ws_bytes, zeroed;
                             NULL: no split-K) */
  size_t  l2_bytes;
  int     n_sm;
  char    desc[256];
};

struct HzGpuTensor {
  HzGpu        *gpu;
  const HzkOps *ops;      /* of the device type */
  uint32_t      type;     /* as uploaded */
  int64_t       n_rows, k;
  void         *dev;
  size_t        dev_bytes;
  size_t        read_bytes;
};

/* runtime call -> GError; returns TRUE on success */
static gboolean
check (int err, const char *what, GError **error)
{
  if (err == 0)
    return TRUE;
  g_set_error (error, HZ_GPU_ERROR, HZ_GPU_ERROR_RUNTIME, "%s: %s (%s error %d)", what,
               hzk_error_string (err), hzk_platform (), err);
  return FALSE;
}

HzGpu *
hz_gpu_open (int device, GError **error)
{
  int n = 0, err = hzk_device_count (&n);
  if (err != 0 || n == 0)
    {
      g_set_error (error, HZ_GPU_ERROR, HZ_GPU_ERROR_NO_DEVICE, "no %s GPU: %s",
                   hzk_platform (), err ? hzk_error_string (err) : "no device found");
      return NULL;
    }
  if (device < 0 || device >= n)
    {
      g_set_error (error, HZ_GPU_ERROR, HZ_GPU_ERROR_NO_DEVICE,
                   "GPU %d requested but only %d present", device, n);
      return NULL;
    }
  HzGpu *g = g_new0 (HzGpu, 1);
  g->device = device;
  char name[200];
  size_t mem = 0;
  if (!check (hzk_set_device (device), "select the GPU", error)
      || !check (hzk_device_info (device, name, sizeof name, &mem, &g->n_sm, &g->l2_bytes),
                 "query the GPU", error)
      || !check (hzk_stream_create (&g->stream), "create a stream", error))
    {
      g_free (g);
      return NULL;
    }
  /* the matmul's split-K workspace (HZ_GPU_MMQ_SPLIT), zeroed once (each product leaves
   * it zeroed) */
  const size_t ws = hzk_matmul_ws_bytes ();
  if (ws > 0
      && (!check (hzk_malloc (&g->mm_ws, ws), "allocate the matmul workspace", error)
          || !check (hzk_memset (g->mm_ws, 0, ws, g->stream), "clear the matmul workspace", error)
          || !hz_gpu_sync (g, error)))
    {
      hz_gpu_close (g);
      return NULL;
    }
  /* the decode step's kernels as programmatic dependent launches where the device has them
   * (NVIDIA sm_90+; kernels/gpu_compat.h); HZ_GPU_PDL=0 launches them plainly */
  const int pdl = hzk_dep_launch_set (g_strcmp0 (g_getenv ("HZ_GPU_PDL"), "0") != 0);
  /* HZ_GPU_PREFETCH=1: the decode matvec prefetches its weights into L2 while it waits */
  hzk_weight_prefetch_set (g_strcmp0 (g_getenv ("HZ_GPU_PREFETCH"), "1") == 0);
  g_snprintf (g->desc, sizeof g->desc, "%s (%s, %.1f GB, %d SMs, L2 %.0f MB%s)", name,
              hzk_platform (), mem / 1e9, g->n_sm, g->l2_bytes / 1e6,
              pdl ? ", dependent launches" : "");
  return g;
}

void
hz_gpu_close (HzGpu *g)
{
  if (!g)
    return;
  if (g->act)
    hzk_free (g->act);
  if (g->mm_ws)
    hzk_free (g->mm_ws);
  hzk_stream_destroy (g->stream);
  g_free (g);
}

const char *hz_gpu_describe (const HzGpu *g) { return g->desc; }
void *hz_gpu_stream (HzGpu *g) { return g->stream; }
int hz_gpu_n_sm (const HzGpu *g) { return g->n_sm; }
size_t hz_gpu_l2_bytes (const HzGpu *g) { return g->l2_bytes; }

void *
hz_gpu_alloc (HzGpu *g, size_t bytes, GError **error)
{
  void *p = NULL;
  if (!check (hzk_malloc (&p, bytes ? bytes : 1), "allocate device memory", error))
    return NULL;
  return p;
}

void
hz_gpu_free (HzGpu *g, void *dev)
{
  if (dev)
    hzk_free (dev);
}

gboolean
hz_gpu_upload (HzGpu *g, void *dev, const void *host, size_t bytes, GError **error)
{
  return check (hzk_memcpy_h2d (dev, host, bytes, g->stream), "copy to the GPU", error);
}

gboolean
hz_gpu_download (HzGpu *g, void *host, const void *dev, size_t bytes, GError **error)
{
  return check (hzk_memcpy_d2h (host, dev, bytes, g->stream), "copy from the GPU", error);
}

gboolean
hz_gpu_sync (HzGpu *g, GError **error)
{
  return check (hzk_stream_sync (g->stream), "GPU work", error);
}

/* Host fallback for formats without a device decoder: to_float (the CPU table), then fp16,
 * written at h (n_rows·k halves). */
static void
to_f16 (const HzQuantTraits *qt, const void *data, int64_t n_rows, int64_t k, uint16_t *h)
{
  float *row = g_malloc ((size_t) k * sizeof (float));
  const size_t rs = hz_quant_row_size (qt->type, k);
  for (int64_t r = 0; r < n_rows; r++)
    {
      qt->to_float ((const uint8_t *) data + (size_t) r * rs, row, k);
      for (int64_t i = 0; i < k; i++)
        h[(size_t) r * k + i] = hz_fp32_to_fp16 (row[i]);
    }
  g_free (row);
}

HzGpuTensor *
hz_gpu_tensor_upload (HzGpu *g, uint32_t type, int64_t n_rows, int64_t k, const void *data,
                      GError **error)
{
  return hz_gpu_tensor_upload_stacked (g, type, k, 1, &n_rows, &data, error);
}

HzGpuTensor *
hz_gpu_tensor_upload_stacked (HzGpu *g, uint32_t type, int64_t k, int n_parts,
                              const int64_t *rows, const void *const *data, GError **error)
{
  const HzQuantTraits *qt = hz_quant_traits (type);
  const HzkOps *ops = hzk_ops (type);
  int64_t n_rows = 0;
  for (int i = 0; i < n_parts; i++)
    n_rows += rows[i] > 0 ? rows[i] : 0;
  if (!qt || !ops || n_parts < 1 || n_rows <= 0 || k <= 0 || hz_quant_row_size (type, k) == 0)
    {
      g_set_error (error, HZ_GPU_ERROR, HZ_GPU_ERROR_UNSUPPORTED,
                   "cannot upload a %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " tensor of type %u",
                   n_rows, k, type);
      return NULL;
    }
  gboolean fallback = !ops->available;
  if (fallback)
    {
      if (!qt->to_float)
        {
          g_set_error (error, HZ_GPU_ERROR, HZ_GPU_ERROR_UNSUPPORTED,
                       "type %s has neither a device decoder nor a CPU decoder", qt->name);
          return NULL;
        }
      ops = hzk_ops (HZ_TYPE_F16);
    }
  const size_t dev_bytes = hzk_device_bytes (ops, n_rows, k);
  const size_t dev_rs = hz_quant_row_size (ops->type, k), raw_bytes = (size_t) n_rows * dev_rs;
  if (dev_bytes == 0)
    {
      g_set_error (error, HZ_GPU_ERROR, HZ_GPU_ERROR_UNSUPPORTED,
                   "%s: K = %" G_GINT64_FORMAT " is not a multiple of %u", ops->name, k,
                   ops->k_multiple);
      return NULL;
    }
  HzGpuTensor *t = g_new0 (HzGpuTensor, 1);
  t->gpu = g;
  t->ops = ops;
  t->type = type;
  t->n_rows = n_rows;
  t->k = k;
  t->dev_bytes = dev_bytes;
  t->read_bytes = raw_bytes;
  void *staging = NULL;
  uint16_t *f16 = fallback ? g_malloc (raw_bytes) : NULL;
  gboolean ok = (t->dev = hz_gpu_alloc (g, dev_bytes, error)) != NULL
                && (staging = hz_gpu_alloc (g, raw_bytes, error)) != NULL;
  size_t off = 0;
  for (int i = 0; ok && i < n_parts; i++)
    {
      const size_t bytes = (size_t) rows[i] * dev_rs;
      const void *src = data[i];
      if (fallback)
        {
          to_f16 (qt, data[i], rows[i], k, f16 + off / 2);
          src = (const uint8_t *) f16 + off;
        }
      ok = hz_gpu_upload (g, (uint8_t *) staging + off, src, bytes, error);
      off += bytes;
    }
  ok = ok && check (ops->repack (staging, t->dev, n_rows, k, g->stream), "repack", error)
       && hz_gpu_sync (g, error);
  hz_gpu_free (g, staging);
  g_free (f16);
  if (!ok)
    {
      hz_gpu_tensor_free (t);
      return NULL;
    }
  return t;
}

void
hz_gpu_tensor_free (HzGpuTensor *t)
{
  if (!t)
    return;
  hz_gpu_free (t->gpu, t->dev);
  g_free (t);
}

uint32_t hz_gpu_tensor_device_type (const HzGpuTensor *t) { return t->ops->type; }
int64_t hz_gpu_tensor_rows (const HzGpuTensor *t) { return t->n_rows; }
const void *hz_gpu_tensor_data (const HzGpuTensor *t) { return t->dev; }
int64_t hz_gpu_tensor_k (const HzGpuTensor *t) { return t->k; }
size_t hz_gpu_tensor_bytes (const HzGpuTensor *t) { return t->read_bytes; }

static gboolean
ensure_act (HzGpu *g, int64_t k, int batch, GError **error)
{
  const size_t need = hzk_act_bytes (k, batch);
  if (need <= g->act_bytes)
    return TRUE;
  if (g->act && !hz_gpu_sync (g, error))
    return FALSE;
  hz_gpu_free (g, g->act);
  g->act_bytes = 0;
  if (!(g->act = hz_gpu_alloc (g, need, error)))
    return FALSE;
  g->act_bytes = need;
  return TRUE;
}

gboolean
hz_gpu_matvec (HzGpu *g, const HzGpuTensor *w, const float *x, float *y, int batch,
               GError **error)
{
  if (batch < 1 || !x || !y)
    {
      g_set_error (error, HZ_GPU_ERROR, HZ_GPU_ERROR_INVALID, "matvec: batch %d", batch);
      return FALSE;
    }
  const HzkOps *o = w->ops;
  const int64_t k = w->k, n = w->n_rows;
  for (int c0 = 0; c0 < batch; c0 += HZK_MAX_BATCH)
    {
      const int nb = MIN (HZK_MAX_BATCH, batch - c0);
      const float *xc = x + (size_t) c0 * k;
      float *yc = y + (size_t) c0 * n;
      const int8_t *aq = NULL;
      const void *am = NULL;
      if (!o->is_float)
        {
          if (!ensure_act (g, k, nb, error)
              || !check (hzk_quantize_act (xc, k, nb, g->act, g->stream), "quantize activations", error))
            return FALSE;
          aq = hzk_act_q (g->act, k, nb);
          am = hzk_act_m (g->act, k, nb);
        }
      if (!check (o->matvec[nb - 1] (w->dev, n, k, aq, am, xc, yc, g->stream), o->name, error))
        return FALSE;
    }
  return TRUE;
}

gboolean
hz_gpu_matvec_act (HzGpu *g, const HzGpuTensor *w, const float *x, const void *act, float *y,
                   GError **error)
{
  const HzkOps *o = w->ops;
  if (!act || o->is_float)
    return hz_gpu_matvec (g, w, x, y, 1, error);
  return check (o->matvec[0] (w->dev, w->n_rows, w->k, hzk_act_q (act, w->k, 1),
                              hzk_act_m (act, w->k, 1), x, y, g->stream), o->name, error);
}

gboolean
hz_gpu_matmul_act (HzGpu *g, const HzGpuTensor *w, const float *x, const void *act, int n_tok,
                   float *y, int64_t ldy, GError **error)
{
  const HzkOps *o = w->ops;
  const int64_t k = w->k;
  if (n_tok < 1 || ldy < w->n_rows || !o->matmul)
    {
      g_set_error (error, HZ_GPU_ERROR, HZ_GPU_ERROR_INVALID, "matmul: %d tokens, ldy %" G_GINT64_FORMAT,
                   n_tok, ldy);
      return FALSE;
    }
  if (!o->is_float && !act)
    {
      if (!ensure_act (g, k, n_tok, error)
          || !check (hzk_quantize_act (x, k, n_tok, g->act, g->stream), "quantize activations", error))
        return FALSE;
      act = g->act;
    }
  const int8_t *aq = o->is_float ? NULL : hzk_act_q (act, k, n_tok);
  const void *am = o->is_float ? NULL : hzk_act_m (act, k, n_tok);
  return check (o->matmul (w->dev, w->n_rows, k, n_tok, aq, am, x, y, ldy, g->mm_ws, g->stream),
                o->name, error);
}

gboolean
hz_gpu_embed (HzGpu *g, const HzGpuTensor *w, const int *rows, int n, float *out, GError **error)
{
  return check (w->ops->embed (w->dev, w->n_rows, w->k, rows, n, out, g->stream), "embedding", error);
}

gboolean
hz_gpu_bench_copy (HzGpu *g, size_t bytes, int reps, double *gbps, GError **error)
{
  void *a = NULL, *b = NULL, *e0 = NULL, *e1 = NULL;
  double best = 0;
  gboolean ok = (a = hz_gpu_alloc (g, bytes, error)) && (b = hz_gpu_alloc (g, bytes, error))
                && check (hzk_memset (a, 1, bytes, g->stream), "memset", error)
                && check (hzk_event_create (&e0), "event", error)
                && check (hzk_event_create (&e1), "event", error);
  for (int i = 0; ok && i < reps + 1; i++)
    {
      float ms = 0;
      ok = check (hzk_event_record (e0, g->stream), "event", error)
           && check (hzk_memcpy_d2d (b, a, bytes, g->stream), "copy", error)
           && check (hzk_event_record (e1, g->stream), "event", error)
           && check (hzk_event_elapsed_ms (e0, e1, &ms), "timing", error);
      if (ok && i > 0 && ms > 0)
        best = MAX (best, 2.0 * bytes / (ms * 1e-3) / 1e9);
    }
  if (e0)
    hzk_event_destroy (e0);
  if (e1)
    hzk_event_destroy (e1);
  hz_gpu_free (g, a);
  hz_gpu_free (g, b);
  *gbps = best;
  return ok;
}

gboolean
hz_gpu_bench_matvec (HzGpu *g, HzGpuTensor *const *w, int n, const float *x, float *y,
                     int batch, int reps, gboolean with_act, double *seconds, GError **error)
{
  const HzkOps *o = w[0]->ops;
  const int64_t k = w[0]->k, rows = w[0]->n_rows;
  void *graph = NULL, *e0 = NULL, *e1 = NULL;
  if (batch < 1 || batch > HZK_MAX_BATCH)
    {
      g_set_error (error, HZ_GPU_ERROR, HZ_GPU_ERROR_INVALID, "bench: batch 1..8");
      return FALSE;
    }
  /* warm up (sizes the scratch outside the capture) */
  if (!hz_gpu_matvec (g, w[0], x, y, batch, error) || !hz_gpu_sync (g, error))
    return FALSE;
  const int8_t *aq = o->is_float ? NULL : hzk_act_q (g->act, k, batch);
  const void *am = o->is_float ? NULL : hzk_act_m (g->act, k, batch);
  gboolean ok = check (hzk_graph_begin (g->stream), "graph capture", error);
  for (int i = 0; ok && i < reps; i++)
    {
      if (with_act)
        ok = hz_gpu_matvec (g, w[i % n], x, y, batch, error);
      else
        ok = check (o->matvec[batch - 1] (w[i % n]->dev, rows, k, aq, am, x, y, g->stream),
                    o->name, error);
    }
  ok = check (hzk_graph_end (g->stream, &graph), "graph instantiate", error) && ok;
  float best = 0;
  ok = ok && check (hzk_event_create (&e0), "event", error)
       && check (hzk_event_create (&e1), "event", error);
  for (int it = 0; ok && it < 4; it++)
    {
      float ms = 0;
      ok = check (hzk_event_record (e0, g->stream), "event", error)
           && check (hzk_graph_launch (graph, g->stream), "graph launch", error)
           && check (hzk_event_record (e1, g->stream), "event", error)
           && check (hzk_event_elapsed_ms (e0, e1, &ms), "timing", error);
      if (ok && it > 0 && (best == 0 || ms < best))
        best = ms;                       /* first replay warms up */
    }
  if (graph)
    hzk_graph_destroy (graph);
  if (e0)
    hzk_event_destroy (e0);
  if (e1)
    hzk_event_destroy (e1);
  *seconds = best * 1e-3 / reps;
  return ok;
}
