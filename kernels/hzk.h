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
/** Matrix multiplication of several tokens (kernels/qmmq.hip): y[t·ldy + r] =
 *  Σ_k W[r][k]·x[t][k] for r < n_rows, t < n_tok (ldy >= n_rows). Integer formats read
 *  aq/am, the activations quantized per token in the layout of hzk_quantize_act with
 *  batch = n_tok (what hzk_rms_norm / hzk_swiglu_rows write for n_tok rows), and ignore x;
 *  float formats read x [n_tok][K] fp32 and ignore aq/am. ws: NULL, or a device workspace
 *  of hzk_matmul_ws_bytes() bytes (when that is > 0), zeroed once before its first use and
 *  then used by one stream at a time; with it, products of few tokens (up to 64) on few
 *  rows are split over K across blocks (deterministic: the partial sums are added in a
 *  fixed order, and the split does not depend on n_tok, so a token's result does not
 *  depend on the others). Leaves the workspace zeroed again. */
typedef int (*HzkMatmulFn) (const void *w, int64_t n_rows, int64_t k, int n_tok,
                            const int8_t *aq, const void *am, const float *x, float *y,
                            int64_t ldy, void *ws, void *stream);
/** Bytes of the split-K workspace of HzkMatmulFn on the current device: 0 unless
 *  HZ_GPU_MMQ_SPLIT=N (N >= 2) asks for split-K (kernels/qmmq.hip says why it is off by
 *  default); then a few MB (about 8 MB on a 132-multiprocessor GPU). */
size_t hzk_matmul_ws_bytes (void);
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

/** The k expert rows of a mixture-of-experts output still to be summed (hzk_rms_norm_moe). */
typedef struct {
  const float *ys;           /* row t·k+j at ys + (t·k+j)·ldys; NULL: none */
  int64_t      ldys;
  const float *weights;      /* [rows·k] */
  int          k;
  const float *shared, *shared_gate;   /* qwen2moe's shared expert [rows·n], gate [rows]; nullable */
} HzkMoeSum;

/** For each of `rows` rows of n: if add, x += add (+ add_bias: x + (add + add_bias), the
 *  CPU's order; [n], nullable) in place (the residual add); then y = x / sqrt(mean(x²) + eps) · w (w nullable = 1). Formula of
 *  hz_cpu_rms_norm_to (engine/cpu/ops.c), sum of squares in fp32. */
int hzk_rms_norm (float *x, const float *add, const float *add_bias, const float *w, int64_t n,
                  int rows, float eps, float *y, void *act, int act_mode, void *stream);

/** hzk_rms_norm whose residual is the mixture-of-experts output of each row, summed here
 *  instead of by hzk_moe_combine (one launch fewer per MoE layer): row t adds
 *  Σ_j weights[t·k+j]·ys[(t·k+j)·ldys + i] (+ sigmoid(shared_gate[t])·shared[t·n + i]),
 *  bit-identical to hzk_moe_combine (pos NULL) followed by hzk_rms_norm with that add. */
int hzk_rms_norm_moe (float *x, const float *ys, int64_t ldys, const float *weights, int k,
                      const float *shared, const float *shared_gate, const float *w, int64_t n,
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
/** A layer's attention mask beyond causality (Gemma; {0, 0}: plain causal attention):
 *  window > 0: the query at position p attends to positions p − window < j <= p only (a
 *  sliding-window layer); softcap > 0: each scaled score s becomes softcap·tanh(s / softcap)
 *  before the softmax (Gemma 2's attention logit soft-capping, computed as
 *  tanhf (s · (1/softcap)) · softcap like the CPU's hz_cpu_softcap). */
typedef struct {
  int32_t window;
  float   softcap;
} HzkAttnMask;

/** Bytes of the split-K partials of hzk_attn_decode. */
size_t hzk_attn_part_bytes (int n_head, int hdv, int n_split);
/** Decode attention over positions 0..*pos of one layer's caches (layout as
 *  hzk_qkv_rope), GQA (q head h reads kv head h / (n_head / n_head_kv)):
 *  out[h·hdv ..] = softmax(scale · q_h·K^T) V. Split-K: n_split blocks per head each take
 *  a contiguous share of the positions (online softmax), then a merge (which also writes
 *  the quantization of out into act when given; needs hdv % 32 == 0, not Q8_K). part:
 *  hzk_attn_part_bytes. hdk, hdv <= 256. counters (nullable): n_head device ints, 0 before
 *  and left 0 after: then each head's last split block to finish merges the head in the
 *  same launch (one launch instead of two; same arithmetic), else a second launch merges. */
int hzk_attn_decode (const float *q, const void *k_cache, const void *v_cache, int kv_f16,
                     const int *pos, int n_head, int n_head_kv, int hdk, int hdv, float scale,
                     int n_split, float *part, float *out, void *act, int act_mode,
                     int *counters, void *stream);
/** hzk_attn_decode under `mask` (scores scale·q·k, then soft-capped; under a window the
 *  n_split shares split the window's positions *pos − window + 1 .. *pos). */
int hzk_attn_decode_ext (const float *q, const void *k_cache, const void *v_cache, int kv_f16,
                         const int *pos, int n_head, int n_head_kv, int hdk, int hdv,
                         float scale, HzkAttnMask mask, int n_split, float *part, float *out,
                         void *act, int act_mode, int *counters, void *stream);
/** Causal attention of n_tok tokens at positions *pos .. *pos + n_tok − 1 (prefill; their
 *  K/V rows are in the caches already, hzk_qkv_rope with n_tok; *pos > 0 continues a
 *  cache: chunked prefill): for token t and q head h,
 *  out[t][h·hdv ..] = softmax(scale · q_{t,h}·K[0..*pos+t]^T) V[0..*pos+t], GQA as
 *  hzk_attn_decode; q [n_tok][n_head·hdk]. act (nullable): also the int8 quantization of
 *  out (n_tok·n_head·hdv elements as one row, the layout of hzk_quantize_act_mode, which
 *  gives the same bytes) by act_mode; that length must be a multiple of 32 (256 for
 *  Q8_K), else hipErrorInvalidValue. hdk, hdv <= 256.
 *  Two kernels (kernels/decode.hip, docs/PERFORMANCE.md "GPU prefill attention"):
 *  - NVIDIA compute capability >= 8.0, hdk == hdv in {32, 64, 128}, 16-byte aligned q
 *    and caches: flash attention on tensor cores (mma.sync m16n8k16, fp16 operands — Q
 *    scaled, K/V, softmax weights — with fp32 accumulation and softmax; 64 queries × 64
 *    keys per tile, the next K/V tile fetched during the current one, causal tile
 *    skipping), int8 rows fused into its epilogue (Q8_K by a
 *    separate pass). Error vs the fp32 reference about 1e-3 relative (fp16 rounding of
 *    the operands; tests/gpu/test-ops.c states the bound).
 *  - Otherwise, and with HZ_GPU_ATTN=fp32 in the environment (read at each call): the
 *    portable fp32 kernel (AMD and every head dim): tiles of 16 queries × 32 keys (8 keys
 *    when that would exceed 48 KB of shared memory), online softmax, 1e-5 relative; the
 *    int8 rows by a separate pass.
 *  fp16_ok = 0 keeps the fp32 kernel whatever the device (engine/backend-hip/forward-gpu.c
 *  passes 0 when the output feeds a float-weight o-projection: models with F32/F16/BF16
 *  weights keep fp32 precision end to end, within 1e-3 of the CPU's logits). */
int hzk_attn_prefill (const float *q, const void *k_cache, const void *v_cache, int kv_f16,
                      const int *pos, int n_tok, int n_head, int n_head_kv, int hdk, int hdv,
                      float scale, float *out, void *act, int act_mode, int fp16_ok,
                      void *stream);
/** hzk_attn_prefill under `mask` (HzkAttnMask): each query's keys restricted to its window,
 *  scores soft-capped. A mask with a window or soft-capping always takes the portable fp32
 *  kernel (the tensor-core one has neither). */
int hzk_attn_prefill_ext (const float *q, const void *k_cache, const void *v_cache, int kv_f16,
                          const int *pos, int n_tok, int n_head, int n_head_kv, int hdk,
                          int hdv, float scale, HzkAttnMask mask, float *out, void *act,
                          int act_mode, int fp16_ok, void *stream);
/** out = silu(gate) · up (n elements; silu(g) = g / (1 + e^-g)), optionally quantized. */
int hzk_swiglu (const float *gate, const float *up, int64_t n, float *out, void *act,
                int act_mode, void *stream);
/** hzk_swiglu for `rows` rows: gate and up rows ld apart (the [gate|up] rows of a stacked
 *  matmul output: up = gate + n, ld = 2n), out [rows][n], act as hzk_rms_norm's for
 *  `rows` rows of n. */
int hzk_swiglu_rows (const float *gate, const float *up, int64_t ld, int64_t n, int rows,
                     float *out, void *act, int act_mode, void *stream);
/** GeGLU of `rows` rows (Gemma's FFN; layout and act as hzk_swiglu_rows): out = gelu(gate)
 *  · up with ggml's CPU GELU (engine/cpu/ops.c hz_cpu_geglu): 0 for gate <= −10, gate for
 *  gate >= 10, else table[fp16 bits of gate] as fp16, where `table` (device, 65536 uint16)
 *  holds the tanh-approximated GELU of every fp16 value (hz_cpu_gelu_table): bit-identical
 *  to the CPU. */
int hzk_geglu_rows (const float *gate, const float *up, int64_t ld, int64_t n, int rows,
                    const uint16_t *table, float *out, void *act, int act_mode, void *stream);
/** x[i] = c·tanh(x[i] / c) for i < n, in place (Gemma's final logit soft-capping; computed
 *  as hz_cpu_softcap). c > 0. */
int hzk_softcap (float *x, int64_t n, float c, void *stream);
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
/** Programmatic dependent launches for the decode step's kernels (kernels/gpu_compat.h,
 *  hzk_launch_dep): asks for them when `on` and the current device supports them (NVIDIA
 *  compute capability 9.0+; never on AMD). Process-wide; set it before capturing graphs.
 *  Returns whether they are now used. Not thread-safe against concurrent launches. */
int  hzk_dep_launch_set (int on);
/** With dependent launches on: whether the decode matvec (batch 1) pulls its block's weight
 *  rows into L2 before it waits for the kernel before it (default off). Process-wide. */
void hzk_weight_prefetch_set (int on);
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

/* ---- paged KV cache (kernels/attn-paged.hip; issue 5) -----------------------------------
 * Pool of one layer: K [P][block_size][dk], V [P][block_size][dv] fp32 (dk = n_head_kv·hdk,
 * dv = n_head_kv·hdv). Row t of a batch is at position pos[t] of sequence seq[t], whose
 * block table (int32 block ids) is tables[seq[t]·tab_stride ..]; position p lives in slot
 * p % block_size of block table[p / block_size]. All pointers are device pointers. */
/** Store k_rows [n][dk] and v_rows [n][dv] into the slots of positions pos[t]. */
int hzk_paged_kv_store (const float *k_rows, const float *v_rows, int64_t dk, int64_t dv,
                        const int *pos, const int *seq, const int *tables, int tab_stride,
                        int block_size, int n, float *k_pool, float *v_pool, void *stream);
/** Bytes of the split-K partials of hzk_attn_paged for n_rows rows. */
size_t hzk_attn_paged_part_bytes (int n_rows, int n_head, int hdv, int n_split);
/** Causal attention of n rows through their block tables: for row t and q head h (GQA as
 *  hzk_attn_decode), out[t][h·hdv ..] = softmax(scale · q_{t,h}·K[0..pos[t]]^T) V[0..pos[t]]
 *  over the row's sequence; q [n][n_head·hdk]. Split-K flash attention, n_split shares of
 *  each row's positions, then a merge; part: hzk_attn_paged_part_bytes (n, …). The rows'
 *  own K/V must be stored first (hzk_paged_kv_store). hdk, hdv <= 256. */
int hzk_attn_paged (const float *q, const float *k_pool, const float *v_pool, const int *pos,
                    const int *seq, const int *tables, int tab_stride, int block_size, int n,
                    int n_head, int n_head_kv, int hdk, int hdv, float scale, int n_split,
                    float *part, float *out, void *stream);
/** hzk_attn_paged under `mask` (HzkAttnMask: each row's keys restricted to its window, the
 *  n_split shares splitting the window; scores soft-capped). */
int hzk_attn_paged_ext (const float *q, const float *k_pool, const float *v_pool, const int *pos,
                        const int *seq, const int *tables, int tab_stride, int block_size, int n,
                        int n_head, int n_head_kv, int hdk, int hdv, float scale,
                        HzkAttnMask mask, int n_split, float *part, float *out, void *stream);
/** dst[i][0..width) = src[idx[i]·ld ..] for i < n (row gather; idx on the device). */
int hzk_gather_rows (const float *src, int64_t ld, const int *idx, int n, int64_t width,
                     float *dst, void *stream);

/* ---- mixture of experts (kernels/moe.hip) ----------------------------------------------
 * Routed experts of one projection live as n_expert separate device tensors (each in the
 * split-block layout of its format, e.g. an expert's gate and up rows stacked as one
 * tensor); `w` is a device array of their n_expert base pointers, so the kernels find an
 * expert's weights from a device-side expert id. `type` is the tensors' device format. */
#define HZK_MOE_MAX_EXPERT 1024   /* experts per layer the kernels take */
#define HZK_MOE_MAX_USED 32       /* experts selected per token */

/** Router: for each of n_tok rows of logits (ld apart; [n_tok][n_expert] used), p =
 *  softmax over the n_expert logits (max subtracted, expf, the sum in double as
 *  ggml_vec_soft_max_f32, p = e·(1/sum)); ids[t][j] (int32) = the k experts of largest p,
 *  descending, ties to the lower id; weights[t][j] = their p, divided by
 *  (float) max(Σ_j p in double, 6.103515625e-5) when norm (Mixtral, qwen3moe; not
 *  qwen2moe). k <= HZK_MOE_MAX_USED, n_expert <= HZK_MOE_MAX_EXPERT. */
int hzk_moe_route (const float *logits, int64_t ld, int n_expert, int n_tok, int k, int norm,
                   int *ids, float *weights, void *stream);
/** Decode product of the n_slot routed experts of one token: for slot s < n_slot,
 *  y[s·ldy + r] = Σ_k W_{ids[s]}[r][k]·a_s[k] (r < n_rows <= ldy) with W_e at w[e] (ids clamped to
 *  [0, n_expert)). a_s: per_slot = 0: the same activations for every slot (batch-1 layout
 *  of hzk_quantize_act, or x [K] for float formats); per_slot = 1: row s of a batch-n_slot
 *  layout (aq/am of hzk_act_q/hzk_act_m(act, K, n_slot), or x [n_slot][K]). The decode
 *  matvec's body (qmatvec_core) per expert; capturable (no host reads). */
typedef int (*HzkMoeMatvecFn) (const void *const *w, int n_expert, int64_t n_rows, int64_t k,
                               const int *ids, int n_slot, const int8_t *aq, const void *am,
                               const float *x, int per_slot, float *y, int64_t ldy,
                               void *stream);
HzkMoeMatvecFn hzk_moe_matvec_fn (uint32_t type);   /* NULL without a device decoder */
/** Decode router of one token in one launch: logits[e] = Σ W[e][·]·x (W [n_expert][K] in the
 *  format's device layout; integer formats read aq/am as hzk_matvec, float formats x), then
 *  the routing of hzk_moe_route (n_tok 1) into ids / weights by the grid's last block.
 *  counter: one device int, 0 before the launch and left 0 after it (one per stream). */
typedef int (*HzkMoeRouterFn) (const void *w, int n_expert, int64_t K, const int8_t *aq,
                               const void *am, const float *x, float *logits, int k, int norm,
                               int *ids, float *weights, int *counter, void *stream);
HzkMoeRouterFn hzk_moe_router_fn (uint32_t type);   /* NULL without a device decoder */
/** Device bytes of the prefill plan of n_pairs = n_tok·k (token, slot) pairs. */
size_t hzk_moe_plan_bytes (int n_pairs, int n_expert);
/** Sort the pairs (pair i = token i / k, slot i % k; expert ids[i]) by expert on the
 *  device into `plan` (hzk_moe_plan_bytes): each expert's pairs contiguous ("sorted
 *  positions", experts ascending), cut into tiles of 32 for hzk_moe_matmul. */
int hzk_moe_plan (const int *ids, int n_pairs, int k, int n_expert, void *plan, void *stream);
/** The plan's map pair -> sorted position (device int32 [n_pairs]), for hzk_moe_combine. */
const int *hzk_moe_plan_pos (const void *plan, int n_pairs, int n_expert);
/** Grouped prefill product over a plan: for every sorted position p (pair i, expert e),
 *  y[p·ldy + r] = Σ_k W_e[r][k]·a[k], where a is the activation row of the pair's token
 *  (gather = 1: rows of [n_tok][K] activations, e.g. the FFN norm's output) or row p
 *  itself (gather = 0: rows already in sorted order, e.g. SwiGLU of the gate|up output).
 *  Activations as for HzkMatmulFn (quantized rows aq/am, or x for float formats). Each
 *  expert's rows go through the prefill matmul's tile body (qmmq_core / qmmf_core) once per
 *  batch, one launch for all experts. */
typedef int (*HzkMoeMatmulFn) (const void *const *w, int n_expert, int64_t n_rows, int64_t k,
                               const void *plan, int n_pairs, int gather, const int8_t *aq,
                               const void *am, const float *x, float *y, int64_t ldy,
                               void *stream);
HzkMoeMatmulFn hzk_moe_matmul_fn (uint32_t type);   /* NULL without a device decoder */
/** out[t][i] = Σ_{j<k} weights[t][j]·ys[pos(t·k + j)][i] (ys rows ldys apart; pos NULL:
 *  the identity) + sigmoid(shared_gate[t])·shared[t][i] (shared [n_tok][n] nullable),
 *  for i < n: products and sums rounded one by one in the order j, as ggml's graph. */
int hzk_moe_combine (const float *ys, int64_t ldys, const float *weights, const int *pos,
                     int n_tok, int k, int64_t n, const float *shared, const float *shared_gate,
                     float *out, void *stream);

/* ---- LoRA training (kernels/train.hip; issue 7) -----------------------------------------
 * The ops of learner/train-ops-decl.h on the device, fp32 row-major tensors (device pointers).
 * Ops named *_bwd ADD into their gradient outputs, as the CPU twins do. */
/** Batch addressing of hzk_train_gemm: matrix z of an operand starts at
 *  base + (z / zdiv)·outer + ((z % zdiv) / gdiv)·inner elements (e.g. z = sequence·n_head
 *  + head with zdiv = n_head; gdiv = n_head / n_head_kv maps query heads to key/value
 *  heads). {0, 0, 1, 1} = the same matrix for every z. */
typedef struct {
  int64_t outer, inner;
  int     zdiv, gdiv;
} HzkTrainBatch;
/** For z < batch (<= 65535): C_z = alpha·op(A_z)·op(B_z) + beta·C_z, C_z [M][N] (ldc),
 *  op(A)[m][k] = ta ? A[k·lda + m] : A[m·lda + k], op(B)[k][n] = tb ? B[n·ldb + k] :
 *  B[k·ldb + n]; fp32 FMA (64 × 64 tiles; 256 × 16 when N <= 16, 16 × 256 when M <= 16: the
 *  LoRA factors' products). beta == 0 does not read C. The C_z must be
 *  distinct, except that bc.gdiv > 1 lets the z of a group share one C (the GQA key/value
 *  gradients summed over their query heads; beta must then be 1). Products with too few
 *  output tiles for the device and K >= 128 are split along K. Split and shared products
 *  add their parts atomically: the summation order, and so the last bits, may vary from
 *  run to run. `causal` (square attention matrices, M = T queries): 0 none; 1 only C[m][n]
 *  with n <= m is wanted (tiles wholly above the diagonal are not written); 2 op(A)[m][k]
 *  is zero for k > m (P·V, dS·K: those k are skipped); 3 op(A)[m][k] is zero for k < m
 *  (P^T·dO, dS^T·Q). */
int hzk_train_gemm (int ta, int tb, int M, int N, int K, float alpha, const float *A, int64_t lda,
                    HzkTrainBatch ba, const float *B, int64_t ldb, HzkTrainBatch bb, float beta,
                    float *C, int64_t ldc, HzkTrainBatch bc, int batch, int causal, void *stream);
/** Products with a weight W (n_rows × K, split-block layout of device format `type`, as
 *  hz_gpu_tensor_upload keeps it): trans 0: y[t][r] (+)= Σ_k x[t][k]·W[r][k] (x
 *  [n_tok][K], y [n_tok][n_rows]); trans 1: y[t][k] (+)= Σ_r x[t][r]·W[r][k] (x
 *  [n_tok][n_rows], y [n_tok][K]); accumulate adds to y, else overwrites. xb (nullable,
 *  trans 0 only) is x already rounded to bfloat16 by hzk_train_to_bf16: the tiles copy it
 *  (the same values, half the bytes) instead of converting x. Tiles of W are
 *  decoded by the format's decoder (qdec.h) into shared memory as bfloat16 next to bf16
 *  activations, fp32 accumulation (tensor cores on NVIDIA sm_80+ unless
 *  HZ_GPU_TRAIN_MMA=0). When the tiles are too few for the device (a short batch, a
 *  narrow W) the reduction is split over blocks whose partial sums are added atomically
 *  (the last bits may vary from run to run). Error (invalid value) for a format without a
 *  device decoder. */
int hzk_train_qmm (uint32_t type, const void *w, int64_t n_rows, int64_t K, int trans,
                   const float *x, const void *xb, int64_t n_tok, float *y, int accumulate,
                   void *stream);
/** xb[i] = x[i] rounded to bfloat16 (nearest even; the bits as uint16) for n elements: the
 *  activations of a forward hzk_train_qmm converted once (`xb`), instead of in every tile. */
int hzk_train_to_bf16 (void *xb, const float *x, int64_t n, void *stream);
/** Whether hzk_train_qmm takes device format `type`. */
int hzk_train_qmm_available (uint32_t type);
/** RMSNorm of `rows` rows of d: rstd[t] = 1/sqrt(mean x² + eps) (sum in double),
 *  y = x·rstd·w (w nullable = 1). */
int hzk_train_rmsnorm_fwd (float *y, float *rstd, const float *x, const float *w, int64_t rows,
                           int d, float eps, void *stream);
/** dx += rstd·g − rstd³/d·x·Σ_k g_k x_k with g = dy·w (dx must not alias dy). */
int hzk_train_rmsnorm_bwd (float *dx, const float *dy, const float *x, const float *w,
                           const float *rstd, int64_t rows, int d, void *stream);
/** RoPE in place on x [rows][n_heads·hd] (row r at position r % T: sequences of T tokens
 *  back to back), tables cs [T][n_rot] of hz_cpu_rope_cache rows, pairs (2i, 2i+1)
 *  (neox 0) or (i, i + n_rot/2); transpose applies R^T (the backward, in place). */
int hzk_train_rope (float *x, const float *cs, int64_t rows, int T, int n_heads, int hd, int n_rot,
                    int neox, int transpose, void *stream);
/** S [n_mat][T][T] -> P in place: row t = softmax over s <= t of scale·S[t][s] (max
 *  subtracted, sum in double), 0 for s > t. */
int hzk_train_softmax_causal (float *S, int64_t n_mat, int T, float scale, void *stream);
/** dP [n_mat][T][T] -> dS = P·(dP − Σ_s P·dP) in place (0 above the diagonal). */
int hzk_train_softmax_bwd (float *dP, const float *P, int64_t n_mat, int T, void *stream);
/** h = silu(g)·u over n elements. */
int hzk_train_swiglu_fwd (float *h, const float *g, const float *u, int64_t n, void *stream);
/** s = sigmoid(g): dg += dh·u·s·(1 + g(1 − s)), du += dh·g·s. */
int hzk_train_swiglu_bwd (float *dg, float *du, const float *dh, const float *g, const float *u,
                          int64_t n, void *stream);
/** y += a·x over n elements. */
int hzk_train_axpy (float *y, const float *x, float a, int64_t n, void *stream);
/** y[t][i] += b[i] for `rows` rows of n. */
int hzk_train_add_bias (float *y, const float *b, int64_t rows, int64_t n, void *stream);
/** Masked cross-entropy of `rows` rows of logits [rows][V]: loss[t] (double) =
 *  logsumexp(logits[t]) − logits[t][y_t] (log-sum-exp in double), 0 where targets[t] < 0;
 *  with grad, the logits are overwritten by their gradient weight·(softmax − onehot(y_t))
 *  (0 for masked rows). */
int hzk_train_cross_entropy (float *logits, const int32_t *targets, int64_t rows, int64_t V,
                             double weight, double *loss, int grad, void *stream);
/** AdamW update number `step` (>= 1) as learner/optim.h (torch.optim.AdamW): decoupled
 *  decay, fp32 moments, each element's update in double. */
int hzk_train_adamw (float *p, const float *g, float *m, float *v, int64_t n, double lr,
                     double beta1, double beta2, double eps, double weight_decay, int64_t step,
                     void *stream);
#define HZK_TRAIN_SUMSQ_BLOCKS 256
/** partial[0..HZK_TRAIN_SUMSQ_BLOCKS) = block sums of x² (double, fixed order: the same
 *  result on every run); the caller adds them up. */
int hzk_train_sumsq (const float *x, int64_t n, double *partial, void *stream);
/** x *= s over n elements. */
int hzk_train_scale (float *x, int64_t n, float s, void *stream);
/** Page-lock `bytes` of host memory at p for faster copies (cudaHostRegister /
 *  hipHostRegister) until hzk_train_host_unregister(p), which must come before the memory
 *  is freed. A failure (e.g. not allowed) leaves p usable as ordinary memory. */
int hzk_train_host_register (void *p, size_t bytes);
int hzk_train_host_unregister (void *p);
/** Device memory in use (total − free, all users of the device). */
int hzk_train_mem_used (size_t *used);

#ifdef __cplusplus
}
#endif
