/* kernels/runtime.hip — thin C wrappers over the HIP runtime (CUDA runtime under nvcc,
 * through gpu_compat.h), so that the host side (engine/backend-hip/) is plain C and needs
 * no GPU headers. Each wrapper returns the runtime's error code (0 = success).
 */
#include "gpu_compat.h"
#include "hzk.h"

#include <string.h>

#define S(stream) ((hipStream_t) (stream))

extern "C" {

const char *hzk_error_string (int err) { return hipGetErrorString ((hipError_t) err); }

const char *
hzk_platform (void)
{
#ifdef HZK_CUDA
  return "cuda";
#else
  return "hip";
#endif
}

int hzk_device_count (int *n) { *n = 0; return (int) hipGetDeviceCount (n); }

int
hzk_device_info (int dev, char *name, size_t name_len, size_t *mem, int *n_sm, size_t *l2)
{
  hipDeviceProp_t p;
  hipError_t e = hipGetDeviceProperties (&p, dev);
  if (e != hipSuccess)
    return (int) e;
  if (name && name_len)
    {
      strncpy (name, p.name, name_len - 1);
      name[name_len - 1] = '\0';
    }
  if (mem)
    *mem = p.totalGlobalMem;
  if (n_sm)
    *n_sm = p.multiProcessorCount;
  if (l2)
    *l2 = (size_t) p.l2CacheSize;
  return 0;
}

int hzk_set_device (int dev) { return (int) hipSetDevice (dev); }

}  /* extern "C" */

int hzk_dep_enabled = 0, hzk_weight_prefetch = 0;

extern "C" {

void hzk_weight_prefetch_set (int on) { hzk_weight_prefetch = on != 0; }

int
hzk_dep_launch_set (int on)
{
  int use = 0;
#ifdef HZK_CUDA
  int dev = 0, major = 0;
  if (on && cudaGetDevice (&dev) == cudaSuccess
      && cudaDeviceGetAttribute (&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess)
    use = major >= 9;
#else
  (void) on;
#endif
  hzk_dep_enabled = use;
  return use;
}

int
hzk_stream_create (void **stream)
{
  hipStream_t s;
  hipError_t e = hipStreamCreateWithFlags (&s, hipStreamNonBlocking);
  *stream = e == hipSuccess ? (void *) s : NULL;
  return (int) e;
}

int hzk_stream_destroy (void *stream) { return (int) hipStreamDestroy (S (stream)); }
int hzk_stream_sync (void *stream) { return (int) hipStreamSynchronize (S (stream)); }
int hzk_malloc (void **p, size_t bytes) { *p = NULL; return (int) hipMalloc (p, bytes); }
int hzk_free (void *p) { return (int) hipFree (p); }

int
hzk_memcpy_h2d (void *dst, const void *src, size_t bytes, void *stream)
{
  return (int) hipMemcpyAsync (dst, src, bytes, hipMemcpyHostToDevice, S (stream));
}

int
hzk_memcpy_d2h (void *dst, const void *src, size_t bytes, void *stream)
{
  hipError_t e = hipMemcpyAsync (dst, src, bytes, hipMemcpyDeviceToHost, S (stream));
  return (int) (e != hipSuccess ? e : hipStreamSynchronize (S (stream)));
}

int
hzk_memcpy_d2d (void *dst, const void *src, size_t bytes, void *stream)
{
  return (int) hipMemcpyAsync (dst, src, bytes, hipMemcpyDeviceToDevice, S (stream));
}

int
hzk_memset (void *dst, int value, size_t bytes, void *stream)
{
  return (int) hipMemsetAsync (dst, value, bytes, S (stream));
}

int hzk_last_error (void) { return (int) hipGetLastError (); }

int
hzk_event_create (void **ev)
{
  hipEvent_t e;
  hipError_t r = hipEventCreate (&e);
  *ev = r == hipSuccess ? (void *) e : NULL;
  return (int) r;
}

int hzk_event_destroy (void *ev) { return (int) hipEventDestroy ((hipEvent_t) ev); }
int hzk_event_record (void *ev, void *stream) { return (int) hipEventRecord ((hipEvent_t) ev, S (stream)); }

int
hzk_event_elapsed_ms (void *start, void *stop, float *ms)
{
  hipError_t e = hipEventSynchronize ((hipEvent_t) stop);
  if (e != hipSuccess)
    return (int) e;
  return (int) hipEventElapsedTime (ms, (hipEvent_t) start, (hipEvent_t) stop);
}

int
hzk_graph_begin (void *stream)
{
  return (int) hipStreamBeginCapture (S (stream), hipStreamCaptureModeThreadLocal);
}

int
hzk_graph_end (void *stream, void **graph_exec)
{
  hipGraph_t g;
  hipGraphExec_t x;
  *graph_exec = NULL;
  hipError_t e = hipStreamEndCapture (S (stream), &g);
  if (e != hipSuccess)
    return (int) e;
  e = hipGraphInstantiate (&x, g, NULL, NULL, 0);
  hipGraphDestroy (g);
  if (e == hipSuccess)
    *graph_exec = (void *) x;
  return (int) e;
}

int hzk_graph_launch (void *graph_exec, void *stream) { return (int) hipGraphLaunch ((hipGraphExec_t) graph_exec, S (stream)); }
int hzk_graph_destroy (void *graph_exec) { return (int) hipGraphExecDestroy ((hipGraphExec_t) graph_exec); }

} /* extern "C" */
