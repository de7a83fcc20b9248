/* engine/backend-hip/hz-gpu.h — host side of the GPU backend (issue 4), plain C over the
 * device library's C ABI (kernels/hzk.h). One HzGpu per device: a stream, the activation
 * scratch, and the dispatch table generated from engine/quant/formats.def (no switch on
 * formats here: every per-format decision is a lookup in hzk_ops()).
 *
 * Weight tensors: hz_gpu_tensor_upload() takes a ggml-layout tensor (n_rows rows of K
 * elements, row-major, hz_quant_row_size(type, K) bytes per row) and keeps it on the
 * device in the split-block layout of kernels/qdec.h (same byte count). A format without a
 * device decoder yet is converted on the host (the CPU table's to_float, then fp16) and
 * kept as F16: hz_gpu_tensor_device_type() tells which.
 *
 * Threads: an HzGpu is used by one thread at a time (its stream orders all work).
 * Errors: GError in HZ_GPU_ERROR; messages carry the runtime's error string.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

#define HZ_GPU_ERROR (hz_gpu_error_quark ())
GQuark hz_gpu_error_quark (void);
typedef enum {
  HZ_GPU_ERROR_NO_DEVICE,      /* no runtime, no device, or the device index is out of range */
  HZ_GPU_ERROR_RUNTIME,        /* a runtime call failed (message: the runtime's string) */
  HZ_GPU_ERROR_UNSUPPORTED,    /* type unknown, or K not a multiple of the block size */
  HZ_GPU_ERROR_INVALID,        /* bad argument */
} HzGpuError;

typedef struct HzGpu HzGpu;
typedef struct HzGpuTensor HzGpuTensor;

/** Open device `device` (0 = first). NULL with HZ_GPU_ERROR_NO_DEVICE and the reason
 *  (e.g. "no CUDA-capable device is detected") when there is none: callers fall back to
 *  the CPU backend and show the message. */
HzGpu *hz_gpu_open (int device, GError **error);
void hz_gpu_close (HzGpu *gpu);
/** "NVIDIA H200 (cuda, 140.4 GB, 132 SMs, L2 60 MB, dependent launches)" (the last part where
 *  the decode step's kernels are programmatic dependent launches, hzk_dep_launch_set). */
const char *hz_gpu_describe (const HzGpu *gpu);
/** Bytes of the device's last-level cache (benchmarks rotate buffers larger than it). */
size_t hz_gpu_l2_bytes (const HzGpu *gpu);

/* device buffers (async on the HzGpu's stream unless noted) */
void *hz_gpu_alloc (HzGpu *gpu, size_t bytes, GError **error);
void hz_gpu_free (HzGpu *gpu, void *dev);
gboolean hz_gpu_upload (HzGpu *gpu, void *dev, const void *host, size_t bytes, GError **error);
/** Synchronous: returns when host holds the data. */
gboolean hz_gpu_download (HzGpu *gpu, void *host, const void *dev, size_t bytes, GError **error);
gboolean hz_gpu_sync (HzGpu *gpu, GError **error);

/** The HzGpu's stream (kernels/hzk.h calls made by the backend's own modules). */
void *hz_gpu_stream (HzGpu *gpu);
/** Multiprocessors (CUs) of the device. */
int hz_gpu_n_sm (const HzGpu *gpu);

/** Upload a ggml-layout weight tensor (see above). Synchronous. */
HzGpuTensor *hz_gpu_tensor_upload (HzGpu *gpu, uint32_t type, int64_t n_rows, int64_t k,
                                   const void *data, GError **error);
/** Upload n_parts ggml-layout matrices of the same type and K stacked as one tensor of
 *  Σ rows[i] rows (part i's rows after part i−1's): one matvec then computes all of them
 *  (q|k|v, gate|up). Synchronous. Errors as hz_gpu_tensor_upload. */
HzGpuTensor *hz_gpu_tensor_upload_stacked (HzGpu *gpu, uint32_t type, int64_t k, int n_parts,
                                           const int64_t *rows, const void *const *data,
                                           GError **error);
void hz_gpu_tensor_free (HzGpuTensor *t);
/** The type the device copy is in: `type`, or HZ_TYPE_F16 for the host fallback. */
uint32_t hz_gpu_tensor_device_type (const HzGpuTensor *t);
/** Bytes a matvec reads from the device copy (its size in ggml layout, i.e.
 *  n_rows · row size of the device type). */
size_t hz_gpu_tensor_bytes (const HzGpuTensor *t);

/** y[c][r] = Σ_k W[r][k]·x[c][k] for c < batch: x_dev [batch][K] fp32, y_dev
 *  [batch][n_rows] fp32, both device pointers. Integer formats quantize x to int8 per 32
 *  elements first (hzk_quantize_act); batches above 8 run in chunks of 8. Asynchronous. */
gboolean hz_gpu_matvec (HzGpu *gpu, const HzGpuTensor *w, const float *x_dev, float *y_dev,
                        int batch, GError **error);

/** As hz_gpu_matvec for batch 1, with the activations already quantized into `act` (an
 *  hzk_act_bytes(K, 1) scratch filled by a fused op: hzk_rms_norm, hzk_swiglu,
 *  hzk_quantize_act); act NULL quantizes x here. Float formats read x. Asynchronous;
 *  capturable in a graph when act is given. */
gboolean hz_gpu_matvec_act (HzGpu *gpu, const HzGpuTensor *w, const float *x_dev,
                            const void *act_dev, float *y_dev, GError **error);
/** Prefill product (kernels/qmmq.hip): y_dev[t·ldy + r] = Σ_k W[r][k]·x_dev[t][k] for
 *  t < n_tok (ldy >= rows). Integer formats read `act`, the n_tok rows of x quantized per
 *  token (hzk_act_bytes(K, n_tok), written by a fused op: hzk_rms_norm / hzk_swiglu_rows
 *  with n_tok rows, or hzk_quantize_act_mode); act NULL quantizes x here (per 32, fp32
 *  scales; the scratch grows to n_tok·K). Float formats read x [n_tok][K]. Asynchronous.
 *  Errors: HZ_GPU_ERROR_INVALID (n_tok < 1, ldy < rows), HZ_GPU_ERROR_RUNTIME. */
gboolean hz_gpu_matmul_act (HzGpu *gpu, const HzGpuTensor *w, const float *x_dev,
                            const void *act_dev, int n_tok, float *y_dev, int64_t ldy,
                            GError **error);
/** out_dev[i][0..K) = row rows_dev[i] of w in fp32 for i < n (the embedding lookup; the
 *  row indices are read on the device, clamped to the rows). Asynchronous. */
gboolean hz_gpu_embed (HzGpu *gpu, const HzGpuTensor *w, const int *rows_dev, int n,
                       float *out_dev, GError **error);
/** The device copy (split-block layout of kernels/qdec.h), for hzk_* calls. */
const void *hz_gpu_tensor_data (const HzGpuTensor *t);
/** Rows and K of a tensor. */
int64_t hz_gpu_tensor_rows (const HzGpuTensor *t);
int64_t hz_gpu_tensor_k (const HzGpuTensor *t);

/* ---- benchmarks (tools/bench-gpu.sh) ---------------------------------------------- */
/** Device-to-device copy bandwidth, GB/s counted as 2·bytes (read + write) per copy,
 *  best of `reps` copies of a `bytes` buffer. */
gboolean hz_gpu_bench_copy (HzGpu *gpu, size_t bytes, int reps, double *gbps, GError **error);
/** Seconds per matvec: `reps` matvecs cycling through the n tensors `w` (same shape and
 *  type; rotate more bytes than the L2 so every call reads DRAM), captured in one graph
 *  and replayed; the activation quantization is included iff with_act. */
gboolean hz_gpu_bench_matvec (HzGpu *gpu, HzGpuTensor *const *w, int n, const float *x_dev,
                              float *y_dev, int batch, int reps, gboolean with_act,
                              double *seconds, GError **error);

G_END_DECLS
