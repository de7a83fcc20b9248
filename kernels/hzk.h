/* kernels/hzk.h — C ABI of the device library libhzkernels (the .hip sources of kernels/, built by hipcc
 * or nvcc). Used by the host side in engine/backend-hip/; nothing here includes a GPU
 * runtime header, so plain C compilers can include it.
 *
 * Errors: functions returning int give 0 on success or the runtime's error code
 * (hipError_t / cudaError_t); hzk_error_string() names it. Streams are opaque pointers
 * (NULL = the library's default stream of the calling thread).
 *
 * Weight tensors on the device use the split-block layout of kernels/qdec.h; their size
 * is hzk_ops(type)->device_bytes(n_rows, K). Activations x are [batch][K] fp32, outputs
 * y are [batch][n_rows] fp32 (row-major by batch column).
 */
#pragma once

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HZK_MAX_BATCH 8

/** y[c][r] = Σ_k W[r][k]·x[c][k] for c < batch (the function's own batch size).
 *  Integer formats read aq/am (hzk_quantize_act output) and ignore x; float formats read
 *  x and ignore aq/am. */
typedef int (*HzkMatvecFn) (const void *w, int64_t n_rows, int64_t k, const int8_t *aq,
                            const void *am, const float *x, float *y, void *stream);
/** Repack n_rows·(K/block_elems) raw ggml blocks at src (device) into the split-block
 *  layout at dst (device, device_bytes long). */
typedef int (*HzkRepackFn) (const void *src, void *dst, int64_t n_rows, int64_t k, void *stream);

/** One row of the device dispatch table, generated from engine/quant/formats.def. */
typedef struct {
  uint32_t    type;            /* ggml id */
  const char *name;            /* codec prefix, "q4_0" */
  bool        available;       /* a device decoder exists (else: host F16 fallback) */
  bool        is_float;        /* F32/F16/BF16: fp32 dot, no activation quantization */
  bool        symmetric;       /* w = d·q (no min/offset term) */
  uint32_t    block_elems, block_bytes;  /* the table's columns */
  uint32_t    unit_bytes, unit_elems, units_per_block, meta_bytes, scale_slots;
  uint32_t    k_multiple;      /* K must be a multiple of this (block and 32) */
  HzkRepackFn repack;
  HzkMatvecFn matvec[HZK_MAX_BATCH];   /* [batch − 1] */
} HzkOps;

/** The row for ggml type id `type`, or NULL if the id is not in the table. */
const HzkOps *hzk_ops (uint32_t type);
/** Device bytes of a weight tensor in the split-block layout (0 if K is not a multiple of
 *  ops->k_multiple or the format has no decoder). */
size_t hzk_device_bytes (const HzkOps *ops, int64_t n_rows, int64_t k);
/** Scratch bytes hzk_quantize_act needs for batch × K activations (aq then am). */
size_t hzk_act_bytes (int64_t k, int batch);
/** Quantize x[batch][K] (fp32, K % 32 == 0) to int8 per 32 elements: aq[batch][K] and
 *  am[batch][K/16] = {d_a, d_a·Σq over the 16} as float2, d_a = amax/127,
 *  q = round(x/d_a). `scratch` is hzk_act_bytes long; *aq / *am point into it. */
int hzk_quantize_act (const float *x, int64_t k, int batch, void *scratch, void *stream);
const int8_t *hzk_act_q (const void *scratch, int64_t k, int batch);
const void *hzk_act_m (const void *scratch, int64_t k, int batch);

/* ---- runtime (kernels/runtime.hip) ---------------------------------------------------- */
const char *hzk_error_string (int err);
const char *hzk_platform (void);          /* "cuda" or "hip" */
int  hzk_device_count (int *n);
/** Name, global memory bytes, multiprocessors, L2 bytes of device `dev`. */
int  hzk_device_info (int dev, char *name, size_t name_len, size_t *mem, int *n_sm,
                      size_t *l2_bytes);
int  hzk_set_device (int dev);
int  hzk_stream_create (void **stream);
int  hzk_stream_destroy (void *stream);
int  hzk_stream_sync (void *stream);
int  hzk_malloc (void **p, size_t bytes);
int  hzk_free (void *p);
int  hzk_memcpy_h2d (void *dst, const void *src, size_t bytes, void *stream);
int  hzk_memcpy_d2h (void *dst, const void *src, size_t bytes, void *stream);
int  hzk_memcpy_d2d (void *dst, const void *src, size_t bytes, void *stream);
int  hzk_memset (void *dst, int value, size_t bytes, void *stream);
int  hzk_last_error (void);
/* timing and graphs (benchmarks, the decode graph) */
int  hzk_event_create (void **ev);
int  hzk_event_destroy (void *ev);
int  hzk_event_record (void *ev, void *stream);
int  hzk_event_elapsed_ms (void *start, void *stop, float *ms);   /* waits for stop */
int  hzk_graph_begin (void *stream);                 /* start capturing `stream` */
int  hzk_graph_end (void *stream, void **graph_exec);/* stop and instantiate */
int  hzk_graph_launch (void *graph_exec, void *stream);
int  hzk_graph_destroy (void *graph_exec);

#ifdef __cplusplus
}
#endif
