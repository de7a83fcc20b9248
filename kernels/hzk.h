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
/** Prefill matrix multiplication (kernels/qmmq.hip): y[t·ldy + r] = Σ_k W[r][k]·x[t][k]
 *  for r < n_rows, t < n_tok (ldy >= n_rows). Integer formats read aq/am, the activations
 *  quantized per token in the layout of hzk_quantize_act with batch = n_tok (what
 *  hzk_rms_norm / hzk_swiglu_rows write for n_tok rows), and ignore x; float formats read
 *  x [n_tok][K] fp32 and ignore aq/am. */
typedef int (*HzkMatmulFn) (const void *w, int64_t n_rows, int64_t k, int n_tok,
                            const int8_t *aq, const void *am, const float *x, float *y,
                            int64_t ldy, void *stream);
/** Repack n_rows·(K/block_elems) raw ggml blocks at src (device) into the split-block
 *  layout at dst (device, device_bytes long). */
typedef int (*HzkRepackFn) (const void *src, void *dst, int64_t n_rows, int64_t k, void *stream);

/** out[i][0..K) = row row_dev[i] (device int32s, clamped to [0, n_rows)) of W as fp32
 *  for i < n, through the format's decoder (embedding lookup of n tokens). */
typedef int (*HzkEmbedFn) (const void *w, int64_t n_rows, int64_t k, const int *row_dev,
                           int n, float *out, void *stream);

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
  HzkEmbedFn  embed;
  HzkMatvecFn matvec[HZK_MAX_BATCH];   /* [batch − 1] */
  HzkMatmulFn matmul;                  /* prefill (any number of tokens) */
} HzkOps;

/** The prefill launcher of ggml type `type` (NULL without a device decoder). The
 *  dispatch table's `matmul` column; exported for it by kernels/qmmq.hip. */
HzkMatmulFn hzk_matmul_fn (uint32_t type);

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

/** Benchmark hook: launch-geometry variant v (0 = the table's default) of the batch-1
 *  matvec of `type`, and its name; NULL when v is out of range or the format has no
 *  variants (only Q4_0, Q8_0, Q4_K, Q6_K have; float formats only v = 0). */
HzkMatvecFn hzk_matvec_variant (uint32_t type, int v, const char **name);

/* ---- decode-step ops (kernels/decode.hip) ---------------------------------------------
 * All pointers are device pointers; `pos` is a device int32 (the position of the token
 * being decoded), so that a captured graph replays at any position. `act`, where taken,
 * is an activation scratch (hzk_act_bytes) that receives the op's output quantized in the
 * layout of hzk_quantize_act (batch 1; NULL: fp32 output only) by `act_mode`:
 *   HZK_ACT_F32   per 32, fp32 d = amax/127, q = round(x/d)      (= hzk_quantize_act)
 *   HZK_ACT_Q8_0  per 32 as the CPU's Q8_0 activations (ggml-cpu x86: q = rint(x·127/amax),
 *                 d rounded to fp16): the weights of Q4_0, Q5_0, Q8_0, IQ4_NL, MXFP4
 *   HZK_ACT_Q8_1  as Q8_0 with the fp16 sum term of Q8_1 (of the 32, in the first 16's
 *                 slot, 0 in the second's): Q4_1, Q5_1
 *   HZK_ACT_Q8_K  per 256 as the CPU's Q8_K (quantize_row_q8_K_ref): the K-quants
 * so that the GPU's dot products use the CPU's activations; lengths must be multiples of
 * 32 (256 for Q8_K). */
enum { HZK_ACT_F32 = 0, HZK_ACT_Q8_0 = 1, HZK_ACT_Q8_1 = 2, HZK_ACT_Q8_K = 3 };

/** For each of `rows` rows of n: if add, x += add (+ add_bias: x + (add + add_bias), the
 *  CPU's order; [n], nullable) in place (the residual add); then y = x / sqrt(mean(x²) + eps) · w (w nullable = 1). Formula of
 *  hz_cpu_rms_norm_to (engine/cpu/ops.c), sum of squares in fp32. */
int hzk_rms_norm (float *x, const float *add, const float *add_bias, const float *w, int64_t n,
                  int rows, float eps, float *y, void *act, int act_mode, void *stream);
/** qkv = [q: n_head·hdk | k: n_head_kv·hdk | v: n_head_kv·hdv] (one matvec's output):
 *  + bias (same layout, nullable); q, k heads RMS-normed with q_norm / k_norm ([hdk],
 *  nullable; qwen3); RoPE of the first n_rot dims of each q and k head with the
 *  (cos, sin) pairs cs[pos·n_rot + 2i, +1] (hz_cpu_rope_cache rows, one per position),
 *  pairs (2i, 2i+1) (neox = 0) or (i, i + n_rot/2) (neox = 1); q -> q_out
 *  [n_head·hdk]; k, v -> row pos of the layer's caches k_cache [n_ctx][n_head_kv·hdk],
 *  v_cache [n_ctx][n_head_kv·hdv] (fp32, or fp16 when kv_f16). hdk, hdv <= 1024.
 *  n_tok tokens at once (prefill): qkv and q_out have n_tok rows, token t is at position
 *  *pos + t (cache row *pos + t). */
int hzk_qkv_rope (const float *qkv, const float *bias, const float *q_norm, const float *k_norm,
                  float eps, const float *cs, const int *pos, int n_tok, int n_head,
                  int n_head_kv, int hdk, int hdv, int n_rot, int neox, float *q_out,
                  void *k_cache, void *v_cache, int kv_f16, void *stream);
/** Bytes of the split-K partials of hzk_attn_decode. */
size_t hzk_attn_part_bytes (int n_head, int hdv, int n_split);
/** Decode attention over positions 0..*pos of one layer's caches (layout as
 *  hzk_qkv_rope), GQA (q head h reads kv head h / (n_head / n_head_kv)):
 *  out[h·hdv ..] = softmax(scale · q_h·K^T) V. Split-K: n_split blocks per head each take
 *  a contiguous share of the positions (online softmax), then a merge (which also writes
 *  the quantization of out into act when given; needs hdv % 32 == 0, not Q8_K). part:
 *  hzk_attn_part_bytes. hdk, hdv <= 256. */
int hzk_attn_decode (const float *q, const void *k_cache, const void *v_cache, int kv_f16,
                     const int *pos, int n_head, int n_head_kv, int hdk, int hdv, float scale,
                     int n_split, float *part, float *out, void *act, int act_mode,
                     void *stream);
/** Causal attention of n_tok tokens at positions *pos .. *pos + n_tok − 1 (prefill; their
 *  K/V rows are in the caches already, hzk_qkv_rope with n_tok): for token t and q head h,
 *  out[t][h·hdv ..] = softmax(scale · q_{t,h}·K[0..*pos+t]^T) V[0..*pos+t], GQA as
 *  hzk_attn_decode; q [n_tok][n_head·hdk]. Tiles of 16 queries × 32 keys (8 keys when
 *  that would exceed 48 KB of shared memory) in shared memory, online softmax.
 *  hdk, hdv <= 256. */
int hzk_attn_prefill (const float *q, const void *k_cache, const void *v_cache, int kv_f16,
                      const int *pos, int n_tok, int n_head, int n_head_kv, int hdk, int hdv,
                      float scale, float *out, void *stream);
/** out = silu(gate) · up (n elements; silu(g) = g / (1 + e^-g)), optionally quantized. */
int hzk_swiglu (const float *gate, const float *up, int64_t n, float *out, void *act,
                int act_mode, void *stream);
/** hzk_swiglu for `rows` rows: gate and up rows ld apart (the [gate|up] rows of a stacked
 *  matmul output: up = gate + n, ld = 2n), out [rows][n], act as hzk_rms_norm's for
 *  `rows` rows of n. */
int hzk_swiglu_rows (const float *gate, const float *up, int64_t ld, int64_t n, int rows,
                     float *out, void *act, int act_mode, void *stream);
/** Quantize x[n] into act (batch 1) by act_mode (the modes above). */
int hzk_quantize_act_mode (const float *x, int64_t n, int act_mode, void *act, void *stream);
/* ---- token selection (kernels/sample.hip) ---- */
/** *out = index of the largest of x[0..n) (ties: lowest index; NaNs ignored; 0 if none). */
int hzk_argmax (const float *x, int64_t n, int *out, void *stream);
/** Sampling parameters, read from device memory by hzk_sample (so that a captured graph
 *  takes new values without a new capture). Meaning as HzSamplerParams (hanzo/engine.h):
 *  temperature <= 0 greedy; top_k <= 0 off; top_p >= 1 off; min_p <= 0 off. */
typedef struct {
  float   temperature;
  int32_t top_k;
  float   top_p;
  float   min_p;
} HzkSampleParams;
/** *out = a token drawn from x[0..n) (n <= INT_MAX) as hz_sampler_sample draws it without
 *  penalties (engine/sampler.c: top-k -> temperature -> top-p -> min-p -> draw), with the
 *  uniform from the xoshiro256** state rng[4] (device memory; advanced once per draw, as
 *  the CPU advances its generator; hzk_rng_seed gives the CPU's state for a seed). Masses
 *  are summed in 2^-40 fixed point (exact, order-independent); see kernels/sample.hip.
 *  One block: about 14 passes over the row. */
int hzk_sample (const float *x, int64_t n, const HzkSampleParams *params, uint64_t *rng,
                int *out, void *stream);
/** state = the CPU sampler's xoshiro256** state for `seed` (splitmix64 seeding); host. */
void hzk_rng_seed (uint64_t seed, uint64_t state[4]);
/** On the device: hist[*pos + delta] = *tok when hist is given (the token chosen for the
 *  next position), then *pos += delta (the decode graph's position update). */
int hzk_pos_add (int *pos, int delta, const int *tok, int *hist, void *stream);

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
