/* kernels/decode.hip — the element-wise and attention ops of a llama-family decode step
 * (one token, batch 1): fused residual add + RMSNorm (+ int8 activation quantization for
 * the next matvec), q/k bias + per-head norm + RoPE + KV-cache append, split-K flash
 * attention over the device KV cache (GQA), SwiGLU (+ quantization), the device-side
 * position counter of the decode graph, and for prefill (n tokens at once) the same ops on
 * n rows plus a causal tiled attention (hzk_attn_prefill: flash attention on tensor cores
 * on NVIDIA sm_80+, an fp32 kernel elsewhere). C ABI and shapes: kernels/hzk.h.
 *
 * Every op reads the position from device memory (`pos`, an int32), so a decode step
 * captured once as a graph replays at any position. Formulas follow the CPU backend
 * (engine/cpu/ops.c, attention.c: llama.cpp's ggml ops); reductions run in fp32 in a
 * different order, so results agree to rounding (tests/gpu/test-ops.c states the bounds).
 * Reading reference (not copied): ggml-cuda norm.cu, rope.cu, fattn-vec.cuh, argmax.cu.
 */
#include "gpu_compat.h"
#include "hzk.h"
#include "attn-mask.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HZK_OP_THREADS 256
#define HZK_SEG 32            /* reduction segment: 32 lanes on NVIDIA, wave32 and wave64 */

static __device__ __forceinline__ float hzk_load_kv (const float *p) { return *p; }
static __device__ __forceinline__ float hzk_load_kv (const __half *p) { return __half2float (*p); }
static __device__ __forceinline__ void hzk_store_kv (float *p, float v) { *p = v; }
static __device__ __forceinline__ void hzk_store_kv (__half *p, float v) { *p = __float2half (v); }

/** Sum over the whole block (blockDim.x a multiple of 32, at most 1024); all threads get it.
 *  `sh` holds at least blockDim.x / 32 floats. */
static __device__ __forceinline__ float
hzk_block_sum (float v, float *sh)
{
  v = hzk_segment_sum (v, HZK_SEG);
  const int seg = threadIdx.x / HZK_SEG, nseg = blockDim.x / HZK_SEG;
  __syncthreads ();                 /* sh may still be read by a previous call */
  if (threadIdx.x % HZK_SEG == 0)
    sh[seg] = v;
  __syncthreads ();
  float s = 0.0f;
  for (int i = 0; i < nseg; i++)
    s += sh[i];
  return s;
}

static __device__ __forceinline__ float hzk_round_fp16 (float x) { return __half2float (__float2half_rn (x)); }

/** Int8 quantization of 32 consecutive elements held by the 32 lanes of a segment (one
 *  element each, `idx` = the element index, a multiple of 32 at lane 0), in the layout of
 *  hzk_quantize_act (aq[idx], am[idx/16] = {d, s}); `mode` (HZK_ACT_*, hzk.h):
 *    F32   d = amax/127, q = round(x/d), s = d·Σq                (fp32 scales)
 *    Q8_0  as ggml-cpu's x86 quantize_row_q8_0: q = rint(x·127/amax), d = fp16(amax/127),
 *          s = d·Σq                         (the CPU's Q8_0 activations, exactly)
 *    Q8_1  as Q8_0 with ggml's Q8_1 sum term fp16(amax/127 · Σq over the 32) as the first
 *          half's s and 0 as the second's
 *  Lanes with valid == false contribute 0 and store nothing; all 32 lanes must call it. */
static __device__ __forceinline__ void
hzk_quant32 (float v, int64_t idx, bool valid, int mode, int8_t *aq, float2 *am)
{
  const int lane = threadIdx.x % HZK_SEG;
  float amax = fabsf (v);
  for (int o = 16; o > 0; o >>= 1)
    amax = fmaxf (amax, hzk_shfl_xor (amax, o, HZK_SEG));
  const float d = amax / 127.0f;
  int q;
  if (mode == HZK_ACT_F32)
    q = amax == 0.0f ? 0 : (int) roundf (v / d);
  else
    {
      const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
      q = (int) rintf (__fmul_rn (v, id));
    }
  if (valid)
    aq[idx] = (int8_t) q;
  int s = q;
  for (int o = 8; o > 0; o >>= 1)
    s += hzk_shfl_xor (s, o, HZK_SEG);
  const int s32 = s + hzk_shfl_xor (s, 16, HZK_SEG);
  if (valid && (lane & 15) == 0)
    {
      const float dd = mode == HZK_ACT_F32 ? d : hzk_round_fp16 (d);
      /* Q8_1: ggml's one sum term of the 32 in the first half, 0 in the second (the
       * matvec adds m·s of both halves) */
      const float ss = mode != HZK_ACT_Q8_1 ? dd * (float) s
                       : lane == 0 ? hzk_round_fp16 (d * (float) s32) : 0.0f;
      am[idx / 16] = make_float2 (dd, ss);
    }
}

/** Q8_K quantization (ggml quantize_row_q8_K_ref, as the CPU's K-quant activations) of 256
 *  consecutive elements held by 8 consecutive 32-lane segments of the block (element
 *  idx by thread, idx % 256 == (threadIdx.x % 256)): v_max = the element of largest
 *  magnitude (first on ties), iscale = −127/v_max, q = min(127, rint(iscale·x)),
 *  d = 1/iscale, am[idx/16] = {d, d·Σq over the 16}. Every thread of the block must call
 *  it (it synchronises); sh: 2·blockDim/32 floats of shared memory. */
static __device__ __forceinline__ void
hzk_quant256 (float v, int64_t idx, bool valid, int8_t *aq, float2 *am, float *sh)
{
  const int lane = threadIdx.x % HZK_SEG, seg = threadIdx.x / HZK_SEG, nseg = blockDim.x / HZK_SEG;
  float ax = valid ? fabsf (v) : 0.0f, mx = valid ? v : 0.0f;
  int at = lane;
  for (int o = 16; o > 0; o >>= 1)
    {
      const float oax = hzk_shfl_xor (ax, o, HZK_SEG), omx = hzk_shfl_xor (mx, o, HZK_SEG);
      const int oat = hzk_shfl_xor (at, o, HZK_SEG);
      if (oax > ax || (oax == ax && oat < at))
        {
          ax = oax;
          mx = omx;
          at = oat;
        }
    }
  __syncthreads ();
  if (lane == 0)
    {
      sh[seg] = ax;
      sh[nseg + seg] = mx;
    }
  __syncthreads ();
  const int g0 = seg / 8 * 8;
  float amax = 0.0f, vmax = 0.0f;
  for (int j = 0; j < 8; j++)
    if (sh[g0 + j] > amax)
      {
        amax = sh[g0 + j];
        vmax = sh[nseg + g0 + j];
      }
  int q = 0;
  float d = 0.0f;
  if (amax != 0.0f)
    {
      const float iscale = -127.0f / vmax;
      q = min (127, (int) rintf (__fmul_rn (iscale, v)));
      d = 1.0f / iscale;
    }
  if (valid)
    aq[idx] = (int8_t) q;
  int s = q;
  for (int o = 8; o > 0; o >>= 1)
    s += hzk_shfl_xor (s, o, HZK_SEG);
  if (valid && (lane & 15) == 0)
    am[idx / 16] = make_float2 (d, d * (float) s);
}

/** hzk_quant32 or hzk_quant256 by mode (block-uniform). */
static __device__ __forceinline__ void
hzk_quant_store (float v, int64_t idx, bool valid, int mode, int8_t *aq, float2 *am, float *sh)
{
  if (mode == HZK_ACT_Q8_K)
    hzk_quant256 (v, idx, valid, aq, am, sh);
  else
    hzk_quant32 (v, idx, valid, mode, aq, am);
}

/** Standalone quantizer of x[n] (n % 256 == 0 for Q8_K): blocks of 256 threads. */
__global__ void __launch_bounds__ (HZK_OP_THREADS)
hzk_quantize_mode_kernel (const float *HZK_RESTRICT x, int64_t n, int mode,
                          int8_t *HZK_RESTRICT aq, float2 *HZK_RESTRICT am)
{
  hzk_dep_begin ();
  __shared__ float qsh[2 * HZK_OP_THREADS / HZK_SEG];
  const int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
  const bool valid = i < n;
  hzk_quant_store (valid ? x[i] : 0.0f, i, valid, mode, aq, am, qsh);
}

/* ---- residual add + RMSNorm ------------------------------------------------------------ */
#define HZK_NORM_THREADS 1024
#define HZK_NORM_REG 8        /* elements per thread kept in registers (n <= 8192) */

/** Element i of token `row`'s mixture-of-experts output (hzk_rms_norm_moe): the k expert
 *  rows weighted and summed as hzk_moe_combine does (same order and rounding, so the
 *  residual is bit-identical to combine + add). */
static __device__ __forceinline__ float
hzk_moe_sum_at (const HzkMoeSum &ms, int64_t row, int64_t n, int64_t i)
{
  float acc = 0.0f;
  for (int j = 0; j < ms.k; j++)
    {
      const int64_t pr = row * ms.k + j;
      const float v = __fmul_rn (ms.weights[pr], ms.ys[(size_t) pr * ms.ldys + i]);
      acc = j == 0 ? v : __fadd_rn (acc, v);
    }
  if (ms.shared)
    {
      const float g = 1.0f / (1.0f + expf (-ms.shared_gate[row]));
      acc = __fadd_rn (acc, __fmul_rn (ms.shared[(size_t) row * n + i], g));
    }
  return acc;
}

/** One block of 1024 threads per row; a row of up to 8192 elements stays in registers
 *  (each thread's loads are independent, so one DRAM round trip instead of a chain of
 *  them); longer rows re-read x. */
__global__ void __launch_bounds__ (HZK_NORM_THREADS)
hzk_rms_norm_kernel (float *HZK_RESTRICT x, const float *HZK_RESTRICT add,
                     const float *HZK_RESTRICT add_bias, const float *HZK_RESTRICT w, int64_t n,
                     float eps, float *HZK_RESTRICT y, int8_t *HZK_RESTRICT aq,
                     float2 *HZK_RESTRICT am, int mode, HzkMoeSum ms)
{
  hzk_dep_begin ();
  __shared__ float sh[HZK_NORM_THREADS / HZK_SEG];
  __shared__ float qsh[2 * HZK_NORM_THREADS / HZK_SEG];
  const int64_t row = blockIdx.x;
  float *xr = x + row * n;
  float *yr = y + row * n;
  const int64_t T = blockDim.x;
  float reg[HZK_NORM_REG];
  float ss = 0.0f;
#pragma unroll
  for (int k = 0; k < HZK_NORM_REG; k++)
    {
      const int64_t i = threadIdx.x + k * T;
      float v = 0.0f;
      if (i < n)
        {
          v = xr[i];
          if (ms.ys)
            {
              v += hzk_moe_sum_at (ms, row, n, i);
              xr[i] = v;
            }
          else if (add)
            {
              /* the CPU adds the bias inside the matmul, then the residual: x + (y + b) */
              v += add_bias ? add[row * n + i] + add_bias[i] : add[row * n + i];
              xr[i] = v;
            }
        }
      reg[k] = v;
      ss += v * v;
    }
  for (int64_t i = threadIdx.x + HZK_NORM_REG * T; i < n; i += T)
    {
      float v = xr[i];
      if (ms.ys)
        {
          v += hzk_moe_sum_at (ms, row, n, i);
          xr[i] = v;
        }
      else if (add)
        {
          v += add_bias ? add[row * n + i] + add_bias[i] : add[row * n + i];
          xr[i] = v;
        }
      ss += v * v;
    }
  const float mean = hzk_block_sum (ss, sh) / (float) n;
  const float scale = 1.0f / sqrtf (mean + eps);
  /* whole 32-element segments, so that the quantizer's shuffles see all lanes (the
   * conditions below are the same for the whole block) */
#pragma unroll
  for (int k = 0; k < HZK_NORM_REG; k++)
    {
      if ((int64_t) k * T >= n)
        break;
      const int64_t i = threadIdx.x + k * T;
      const bool valid = i < n;
      const float v = valid ? (reg[k] * scale) * (w ? w[i] : 1.0f) : 0.0f;
      if (valid)
        yr[i] = v;
      if (aq)
        hzk_quant_store (v, row * n + i, valid, mode, aq, am, qsh);
    }
  const int64_t n_up = (n + T - 1) / T * T;
  for (int64_t i = threadIdx.x + HZK_NORM_REG * T; i < n_up; i += T)
    {
      const bool valid = i < n;
      const float v = valid ? (xr[i] * scale) * (w ? w[i] : 1.0f) : 0.0f;
      if (valid)
        yr[i] = v;
      if (aq)
        hzk_quant_store (v, row * n + i, valid, mode, aq, am, qsh);
    }
}

/* ---- q/k/v: bias, per-head norm, RoPE, cache append ------------------------------------ */
/** Block (h, t): token t of the batch (position *pos_p + t; qkv row t, q_out row t);
 *  h < n_head: q head h; n_head <= h < n_head + n_head_kv: k head (and v head) h −
 *  n_head. The rotation table cs holds cos, sin pairs per position (hz_cpu_rope_cache). */
template <typename KV>
__global__ void __launch_bounds__ (128)
hzk_qkv_rope_kernel (const float *HZK_RESTRICT qkv, const float *HZK_RESTRICT bias,
                     const float *HZK_RESTRICT q_norm, const float *HZK_RESTRICT k_norm,
                     float eps, const float *HZK_RESTRICT cs, const int *HZK_RESTRICT pos_p,
                     int n_head, int n_head_kv, int hdk, int hdv, int n_rot, int neox,
                     float *HZK_RESTRICT q_out, KV *HZK_RESTRICT k_cache, KV *HZK_RESTRICT v_cache)
{
  hzk_dep_begin ();
  extern __shared__ float hbuf[];            /* [hdk] */
  __shared__ float sh[128 / HZK_SEG];
  const int pos = *pos_p + (int) blockIdx.y;
  const int h = blockIdx.x;
  const bool is_q = h < n_head;
  const int64_t dq = (int64_t) n_head * hdk, dk = (int64_t) n_head_kv * hdk;
  qkv += (size_t) blockIdx.y * (dq + dk + (int64_t) n_head_kv * hdv);
  q_out += (size_t) blockIdx.y * dq;
  const int64_t in_off = is_q ? (int64_t) h * hdk : dq + (int64_t) (h - n_head) * hdk;
  const float *nw = is_q ? q_norm : k_norm;
  float ss = 0.0f;
  for (int i = threadIdx.x; i < hdk; i += blockDim.x)
    {
      float v = qkv[in_off + i];
      if (bias)
        v += bias[in_off + i];
      hbuf[i] = v;
      ss += v * v;
    }
  __syncthreads ();
  if (nw)
    {
      const float scale = 1.0f / sqrtf (hzk_block_sum (ss, sh) / (float) hdk + eps);
      for (int i = threadIdx.x; i < hdk; i += blockDim.x)
        hbuf[i] = (hbuf[i] * scale) * nw[i];
      __syncthreads ();
    }
  const float *c = cs + (int64_t) pos * n_rot;
  float out_v[8];
  int n_out = 0;
  for (int i = threadIdx.x; i < hdk; i += blockDim.x)
    {
      float r = hbuf[i];
      if (i < n_rot)
        {
          if (!neox)
            {
              const int i0 = i & ~1;
              const float cc = c[i0], s = c[i0 + 1], x0 = hbuf[i0], x1 = hbuf[i0 + 1];
              r = (i & 1) ? fmaf (x0, s, x1 * cc) : fmaf (x0, cc, -(x1 * s));
            }
          else
            {
              const int half = n_rot / 2, j = i < half ? i : i - half;
              const float cc = c[2 * j], s = c[2 * j + 1], x0 = hbuf[j], x1 = hbuf[j + half];
              r = i < half ? x0 * cc - x1 * s : x0 * s + x1 * cc;
            }
        }
      out_v[n_out++ & 7] = r;
    }
  n_out = 0;
  if (is_q)
    for (int i = threadIdx.x; i < hdk; i += blockDim.x)
      q_out[in_off + i] = out_v[n_out++ & 7];
  else
    {
      const int kvh = h - n_head;
      KV *kc = k_cache + (int64_t) pos * dk + (int64_t) kvh * hdk;
      for (int i = threadIdx.x; i < hdk; i += blockDim.x)
        hzk_store_kv (kc + i, out_v[n_out++ & 7]);
      const int64_t dv = (int64_t) n_head_kv * hdv;
      const int64_t v_off = dq + dk + (int64_t) kvh * hdv;
      KV *vc = v_cache + (int64_t) pos * dv + (int64_t) kvh * hdv;
      for (int i = threadIdx.x; i < hdv; i += blockDim.x)
        hzk_store_kv (vc + i, qkv[v_off + i] + (bias ? bias[v_off + i] : 0.0f));
    }
}

/* ---- split-K flash attention (decode) -------------------------------------------------- */
#define HZK_ATT_THREADS 128
#define HZK_ATT_MAXD 256

/** Block (h, s): q head h against positions [s·chunk, min(n_kv, (s+1)·chunk)) of its KV
 *  head, chunk = ceil(n_kv / n_split), n_kv = *pos + 1. Each 32-lane segment walks every
 *  4th position with an online softmax (running max m, sum l, output acc, lane owning
 *  dims lane + 32i); the four are merged in shared memory into the partial
 *  part[h][s] = {m, l, acc[hdv]}. */
static __device__ void hzk_attn_merge_head (int h, const float *HZK_RESTRICT part, int n_split,
                                             int hdv, float *HZK_RESTRICT out,
                                             int8_t *HZK_RESTRICT aq, float2 *HZK_RESTRICT am,
                                             int mode);

template <typename KV>
__global__ void __launch_bounds__ (HZK_ATT_THREADS)
hzk_attn_split_kernel (const float *HZK_RESTRICT q, const KV *HZK_RESTRICT kc,
                       const KV *HZK_RESTRICT vc, const int *HZK_RESTRICT pos_p, int n_head,
                       int n_head_kv, int hdk, int hdv, float scale, HzkAttnMask mk,
                       float *HZK_RESTRICT part,
                       int *HZK_RESTRICT counters, float *HZK_RESTRICT att_out,
                       int8_t *HZK_RESTRICT aq, float2 *HZK_RESTRICT am, int mode)
{
  hzk_dep_begin ();
  constexpr int NW = HZK_ATT_THREADS / HZK_SEG, MAXV = HZK_ATT_MAXD / HZK_SEG;
  __shared__ float qs[HZK_ATT_MAXD];
  __shared__ float wm[NW], wl[NW];
  __shared__ float wacc[NW][HZK_ATT_MAXD];
  const int h = blockIdx.x, split = blockIdx.y, n_split = gridDim.y;
  const int kvh = h / (n_head / n_head_kv);
  const int n_kv = *pos_p + 1;
  const int lo = hzk_attn_lo (mk, n_kv - 1);           /* the window's first position */
  const int chunk = (n_kv - lo + n_split - 1) / n_split;
  const int j0 = lo + split * chunk, j1 = min (n_kv, j0 + chunk);
  const int64_t dk = (int64_t) n_head_kv * hdk, dv = (int64_t) n_head_kv * hdv;
  for (int i = threadIdx.x; i < hdk; i += blockDim.x)
    qs[i] = q[(int64_t) h * hdk + i];
  __syncthreads ();

  const int w = threadIdx.x / HZK_SEG, lane = threadIdx.x % HZK_SEG;
  float m = -INFINITY, l = 0.0f, acc[MAXV];
  for (int i = 0; i < MAXV; i++)
    acc[i] = 0.0f;
  for (int j = j0 + w; j < j1; j += NW)
    {
      const KV *kj = kc + (int64_t) j * dk + (int64_t) kvh * hdk;
      float s = 0.0f;
      for (int d = lane; d < hdk; d += HZK_SEG)
        s += qs[d] * hzk_load_kv (kj + d);
      s = hzk_softcap_score (mk, hzk_segment_sum (s, HZK_SEG) * scale);
      const float m_new = fmaxf (m, s);
      const float corr = expf (m - m_new), p = expf (s - m_new);
      l = l * corr + p;
      const KV *vj = vc + (int64_t) j * dv + (int64_t) kvh * hdv;
#pragma unroll
      for (int i = 0; i < MAXV; i++)
        {
          const int d = lane + HZK_SEG * i;
          if (d < hdv)
            acc[i] = acc[i] * corr + p * hzk_load_kv (vj + d);
        }
      m = m_new;
    }
  if (lane == 0)
    {
      wm[w] = m;
      wl[w] = l;
    }
  for (int i = 0; i < MAXV; i++)
    {
      const int d = lane + HZK_SEG * i;
      if (d < hdv)
        wacc[w][d] = acc[i];
    }
  __syncthreads ();
  float M = -INFINITY;
  for (int i = 0; i < NW; i++)
    M = fmaxf (M, wm[i]);
  float *out = part + ((int64_t) h * n_split + split) * (2 + hdv);
  if (threadIdx.x == 0)
    {
      float L = 0.0f;
      for (int i = 0; i < NW; i++)
        L += wm[i] == -INFINITY ? 0.0f : wl[i] * expf (wm[i] - M);
      out[0] = M;
      out[1] = L;
    }
  for (int d = threadIdx.x; d < hdv; d += blockDim.x)
    {
      float a = 0.0f;
      for (int i = 0; i < NW; i++)
        a += wm[i] == -INFINITY ? 0.0f : wacc[i][d] * expf (wm[i] - M);
      out[2 + d] = a;
    }
  if (!counters)
    return;
  /* fused merge: the head's last split block to finish merges the head */
  __shared__ int last;
  __threadfence ();
  __syncthreads ();
  if (threadIdx.x == 0)
    last = atomicAdd (&counters[h], 1) == n_split - 1;
  __syncthreads ();
  if (!last)
    return;
  __threadfence ();
  hzk_attn_merge_head (h, part, n_split, hdv, att_out, aq, am, mode);
  if (threadIdx.x == 0)
    counters[h] = 0;
}

/** Merge the n_split partials of head h: out[h·hdv + d] = Σ_s acc_s[d] e^{m_s − M} / Σ_s l_s e^{m_s − M}.
 *  With aq (hdv % 32 == 0), also the int8 quantization of the output (hzk_quant32). */
/** The merge of head h's n_split partials (+ the int8 quantization of the head's output);
 *  all HZK_ATT_THREADS threads of the block call it. Partials are read from L2: in the
 *  fused launch other blocks of the grid wrote them. */
static __device__ void
hzk_attn_merge_head (int h, const float *HZK_RESTRICT part, int n_split, int hdv,
                     float *HZK_RESTRICT out, int8_t *HZK_RESTRICT aq, float2 *HZK_RESTRICT am,
                     int mode)
{
  const float *p = part + (int64_t) h * n_split * (2 + hdv);
  float M = -INFINITY;
  for (int s = 0; s < n_split; s++)
    M = fmaxf (M, hzk_ld_l2 (p + s * (2 + hdv)));
  float L = 0.0f;
  for (int s = 0; s < n_split; s++)
    {
      const float ms = hzk_ld_l2 (p + s * (2 + hdv));
      L += ms == -INFINITY ? 0.0f : hzk_ld_l2 (p + s * (2 + hdv) + 1) * expf (ms - M);
    }
  const float inv = 1.0f / L;
  const int d_up = (hdv + HZK_SEG - 1) / HZK_SEG * HZK_SEG;
  for (int d = threadIdx.x; d < d_up; d += blockDim.x)
    {
      const bool valid = d < hdv;
      float a = 0.0f;
      for (int s = 0; valid && s < n_split; s++)
        {
          const float ms = hzk_ld_l2 (p + s * (2 + hdv));
          if (ms != -INFINITY)
            a += hzk_ld_l2 (p + s * (2 + hdv) + 2 + d) * expf (ms - M);
        }
      a *= inv;
      if (valid)
        out[(int64_t) h * hdv + d] = a;
      if (aq)
        hzk_quant32 (a, (int64_t) h * hdv + d, valid, mode, aq, am);
    }}

__global__ void __launch_bounds__ (HZK_ATT_THREADS)
hzk_attn_combine_kernel (const float *HZK_RESTRICT part, int n_split, int hdv,
                         float *HZK_RESTRICT out, int8_t *HZK_RESTRICT aq, float2 *HZK_RESTRICT am,
                         int mode)
{
  hzk_dep_begin ();
  hzk_attn_merge_head (blockIdx.x, part, n_split, hdv, out, aq, am, mode);
}

/* ---- causal attention of a batch of tokens (prefill) ----------------------------------- */
#define HZK_PA_THREADS 128
#define HZK_PA_BQ 16                                     /* queries per block */
#define HZK_PA_QPW (HZK_PA_BQ / (HZK_PA_THREADS / HZK_SEG)) /* queries per 32-lane segment */

/** Shared floats of hzk_attn_prefill_kernel: the q tile [BQ][hdk4], the K chunk
 *  [kc][hdk4 + 4] (rows shifted by 4 floats: lane j's 16-byte loads of key j's row hit
 *  distinct banks) and the V chunk [kc][hdv]; hdk4 = hdk rounded up to 4 (zero padded). */
static __host__ __device__ __forceinline__ size_t
hzk_pa_shared (int kc, int hdk, int hdv)
{
  const size_t hdk4 = (size_t) (hdk + 3) / 4 * 4;
  return HZK_PA_BQ * hdk4 + (size_t) kc * (hdk4 + 4) + (size_t) kc * hdv;
}

/** Block (h, tile): queries t0 .. t0 + 15 (t0 = 16·tile) of q head h, at positions
 *  *pos_p + t, against keys 0 .. *pos_p + t of KV head h / (n_head / n_head_kv) (causal;
 *  the batch's own keys are in the cache already: hzk_qkv_rope ran first). Keys go through
 *  shared memory in chunks of KC; each 32-lane segment owns 4 queries. Scores: lane j takes
 *  key j of the chunk and dots it with the 4 queries at once (one 16-byte K load per 4
 *  dims feeds 16 FMAs). Then per query an online softmax (running max m, sum l), and
 *  acc[d] += p_j·v_j[d] with lane owning dims lane + 32i: each V element loaded once per
 *  segment serves its 4 queries. out[t][h·hdv + d] = acc / l. MAXV = ceil(hdv / 32). */
template <typename KV, int KC, int MAXV>
__global__ void __launch_bounds__ (HZK_PA_THREADS)
hzk_attn_prefill_kernel (const float *HZK_RESTRICT q, const KV *HZK_RESTRICT kc,
                         const KV *HZK_RESTRICT vc, const int *HZK_RESTRICT pos_p, int n_tok,
                         int n_head, int n_head_kv, int hdk, int hdv, float scale,
                         HzkAttnMask mk, float *HZK_RESTRICT out)
{
  constexpr int QPW = HZK_PA_QPW;
  extern __shared__ float4 pa_sh4[];
  const int hdk4 = (hdk + 3) / 4 * 4, ks_ld = hdk4 + 4;
  float *qs = (float *) pa_sh4, *ks = qs + HZK_PA_BQ * hdk4, *vs = ks + KC * ks_ld;
  const int h = blockIdx.x, t0 = blockIdx.y * HZK_PA_BQ, tid = threadIdx.x;
  const int kvh = h / (n_head / n_head_kv);
  const int pos0 = *pos_p;
  const int64_t dq = (int64_t) n_head * hdk, dk = (int64_t) n_head_kv * hdk;
  const int64_t dv = (int64_t) n_head_kv * hdv, dov = (int64_t) n_head * hdv;
  const int nq = min (HZK_PA_BQ, n_tok - t0);
  for (int i = tid; i < HZK_PA_BQ * hdk4; i += blockDim.x)
    {
      const int qi = i / hdk4, d = i % hdk4;
      qs[i] = qi < nq && d < hdk ? q[(int64_t) (t0 + qi) * dq + (int64_t) h * hdk + d] : 0.0f;
    }
  const int w = tid / HZK_SEG, lane = tid % HZK_SEG;
  const int nqw = min (QPW, max (0, nq - w * QPW));    /* valid queries of this segment */
  const int p_last = pos0 + t0 + w * QPW + nqw - 1;     /* its last query's position */
  float m[QPW], l[QPW], acc[QPW][MAXV];
  for (int a = 0; a < QPW; a++)
    {
      m[a] = -INFINITY;
      l[a] = 0.0f;
      for (int i = 0; i < MAXV; i++)
        acc[a][i] = 0.0f;
    }
  const int n_keys = pos0 + t0 + nq;               /* keys of the block's last query */
  /* under a window, the chunks before the block's first query's window hold no key */
  for (int j0 = hzk_attn_lo (mk, pos0 + t0) / KC * KC; j0 < n_keys; j0 += KC)
    {
      __syncthreads ();                              /* the previous chunk is consumed */
      for (int i = tid; i < KC * hdk4; i += blockDim.x)
        {
          const int jj = i / hdk4, d = i % hdk4, j = j0 + jj;
          ks[jj * ks_ld + d] = j < n_keys && d < hdk
                                 ? hzk_load_kv (kc + (int64_t) j * dk + (int64_t) kvh * hdk + d) : 0.0f;
        }
      for (int i = tid; i < KC * hdv; i += blockDim.x)
        {
          const int jj = i / hdv, d = i % hdv, j = j0 + jj;
          vs[i] = j < n_keys ? hzk_load_kv (vc + (int64_t) j * dv + (int64_t) kvh * hdv + d) : 0.0f;
        }
      __syncthreads ();
      if (nqw == 0 || j0 > p_last)                   /* uniform over the segment */
        continue;
      /* scores of key j0 + lane against the segment's queries */
      float sc[QPW];
      {
        float dot[QPW];
        for (int a = 0; a < QPW; a++)
          dot[a] = 0.0f;
        if (lane < KC)
          {
            const float4 *kr = (const float4 *) (ks + lane * ks_ld);
            const float4 *qr = (const float4 *) (qs + w * QPW * hdk4);
            for (int d4 = 0; d4 < hdk4 / 4; d4++)
              {
                const float4 kv = kr[d4];
#pragma unroll
                for (int a = 0; a < QPW; a++)
                  {
                    const float4 qv = qr[a * (hdk4 / 4) + d4];
                    dot[a] = fmaf (qv.x, kv.x, dot[a]);
                    dot[a] = fmaf (qv.y, kv.y, dot[a]);
                    dot[a] = fmaf (qv.z, kv.z, dot[a]);
                    dot[a] = fmaf (qv.w, kv.w, dot[a]);
                  }
              }
          }
#pragma unroll
        for (int a = 0; a < QPW; a++)
          {
            const int p = pos0 + t0 + w * QPW + a;     /* the query's position */
            sc[a] = lane < KC && a < nqw && j0 + lane <= p && j0 + lane >= hzk_attn_lo (mk, p)
                      ? hzk_softcap_score (mk, dot[a] * scale) : -INFINITY;
          }
      }
      /* online softmax per query; pl = this lane's key's weight */
      float pl[QPW];
#pragma unroll
      for (int a = 0; a < QPW; a++)
        {
          float mc = sc[a];
          for (int o = HZK_SEG / 2; o > 0; o >>= 1)
            mc = fmaxf (mc, hzk_shfl_xor (mc, o, HZK_SEG));
          pl[a] = 0.0f;
          if (mc == -INFINITY)                       /* uniform: no key of this query here */
            continue;
          const float m_new = fmaxf (m[a], mc);
          const float corr = expf (m[a] - m_new);
          pl[a] = expf (sc[a] - m_new);
          l[a] = l[a] * corr + hzk_segment_sum (pl[a], HZK_SEG);
          for (int i = 0; i < MAXV; i++)
            acc[a][i] *= corr;
          m[a] = m_new;
        }
      const int nk = min (KC, p_last - j0 + 1);
      for (int jj = 0; jj < nk; jj++)
        {
          float vr[MAXV];
#pragma unroll
          for (int i = 0; i < MAXV; i++)
            {
              const int d = lane + HZK_SEG * i;
              vr[i] = d < hdv ? vs[jj * hdv + d] : 0.0f;
            }
#pragma unroll
          for (int a = 0; a < QPW; a++)
            {
              const float pj = hzk_shfl_idx (pl[a], jj, HZK_SEG);
#pragma unroll
              for (int i = 0; i < MAXV; i++)
                acc[a][i] = fmaf (pj, vr[i], acc[a][i]);
            }
        }
    }
  for (int a = 0; a < nqw; a++)
    {
      const int qi = w * QPW + a;
      const float inv = 1.0f / l[a];
      for (int i = 0; i < MAXV; i++)
        {
          const int d = lane + HZK_SEG * i;
          if (d < hdv)
            out[(int64_t) (t0 + qi) * dov + (int64_t) h * hdv + d] = acc[a][i] * inv;
        }
    }
}

/* ---- causal attention of a batch on tensor cores (prefill, NVIDIA sm_80+) --------------
 * Flash-attention-2 scheme (Dao 2023, "FlashAttention-2: Faster Attention with Better
 * Parallelism and Work Partitioning", Algorithm 1): a block takes 64 queries of one q head (4
 * warps × 16 rows); each warp keeps its Q rows as fp16 mma fragments in registers
 * (pre-multiplied by scale·log2 e, so the softmax runs on exp2), the block stages K and V
 * tiles of 64 keys in shared memory as fp16 (fetched with cp.async one tile ahead, in the
 * cache's dtype, then converted into the padded fp16 tiles the warps read), and each
 * warp computes S = Q·Kᵀ (mma.sync m16n8k16, fp32 accumulation), the online
 * softmax of its rows in registers, and O += P·V with P re-packed from S's accumulator
 * fragments as the A operand (no trip through shared memory). Causal: a block visits key
 * tiles up to its last query's position only; a warp skips the tiles past its last row;
 * masking runs only on the tiles that cross a row's position. The epilogue stages O / l
 * in shared memory so that every row is written (and quantized to int8) by 32 lanes in
 * the layout of the fp32 kernel. Register fragments follow the PTX ISA's tables for
 * mma.m16n8k16 .f16 (g = lane / 4, c = lane % 4):
 *   A (16×16, row):  a0 = (g, 2c..2c+1), a1 = (g+8, 2c..), a2 = (g, 2c+8..), a3 = (g+8, 2c+8..)
 *   B (16×8, col):   b0 = (k 2c..2c+1, n g), b1 = (k 2c+8..2c+9, n g)
 *   C (16×8, fp32):  c0, c1 = (g, 2c..2c+1), c2, c3 = (g+8, 2c..2c+1)
 * ldmatrix.x4 (row-major tile in shared memory) yields B fragments of Kᵀ directly, and
 * ldmatrix.x4.trans those of V. */
#define HZK_FA_THREADS 128
#define HZK_FA_BQ 64                      /* queries per block: 16 per warp */
#define HZK_FA_BK 64                      /* keys per shared-memory tile */

#if defined(HZK_CUDA)
/** Shared bytes of the tensor-core kernel: K and V tiles [BK][D + 8] fp16 (rows padded by
 *  16 bytes: the 8 row addresses of an ldmatrix hit distinct banks; the epilogue reuses
 *  them as [BQ][D + 8] fp32, the same size), then the next K and V tiles in flight,
 *  [BK][D] each in the cache's dtype (kv_bytes per element). */
static __host__ __device__ constexpr size_t
hzk_fa_shared (int d, int kv_bytes)
{
  return (size_t) 2 * HZK_FA_BK * (d + 8) * 2 + (size_t) 2 * HZK_FA_BK * d * kv_bytes;
}

static __device__ __forceinline__ uint32_t
hzk_pack_half2 (float lo, float hi)
{
  __half2 h = __floats2half2_rn (lo, hi);           /* lo in the low 16 bits */
  return *reinterpret_cast<uint32_t *> (&h);
}

/** D (fp32) += A·B, mma.sync m16n8k16 with fp16 A, B (fragments above). */
static __device__ __forceinline__ void
hzk_mma_f16_16816 (const uint32_t a[4], uint32_t b0, uint32_t b1, float c[4])
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
                "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

/** Four 8×8 fp16 tiles from shared memory (lane l gives the address of row l % 8 of tile
 *  l / 8); trans: each tile transposed. */
template <bool TRANS>
static __device__ __forceinline__ void
hzk_ldmatrix_x4 (const __half *p, uint32_t r[4])
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const uint32_t a = (uint32_t) __cvta_generic_to_shared (p);
  if (TRANS)
    asm volatile ("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                  : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
  else
    asm volatile ("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                  : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
#endif
}

/** Starts copying rows j0 .. j0 + BK − 1 of one KV head (element (j, d) at src[j·ld + d])
 *  into st[BK][D] (the cache's dtype, unpadded); rows j >= n_keys are zero (a zero V row
 *  times a zero weight stays zero). */
template <typename KV, int D>
static __device__ __forceinline__ void
hzk_fa_fetch_tile (const KV *HZK_RESTRICT src, int64_t ld, int j0, int n_keys,
                   KV *HZK_RESTRICT st)
{
  constexpr int E = 16 / sizeof (KV), C = D / E, N = HZK_FA_BK * C / HZK_FA_THREADS;
#pragma unroll
  for (int k = 0; k < N; k++)
    {
      const int i = threadIdx.x + k * HZK_FA_THREADS, j = j0 + i / C;
      const bool ok = j < n_keys;
      hzk_cp_async16 (st + (int64_t) E * i, src + (int64_t) (ok ? j : 0) * ld + E * (i % C), ok);
    }
}

/** A fetched tile st[BK][D] -> sh[BK][D + 8] fp16 (rounded from an fp32 cache). */
template <int D>
static __device__ __forceinline__ void
hzk_fa_convert_tile (const float *HZK_RESTRICT st, __half *HZK_RESTRICT sh)
{
  constexpr int C = D / 4, N = HZK_FA_BK * C / HZK_FA_THREADS;
#pragma unroll
  for (int k = 0; k < N; k++)
    {
      const int i = threadIdx.x + k * HZK_FA_THREADS;
      const float4 v = *(const float4 *) (st + 4 * i);
      *(uint2 *) (sh + (i / C) * (D + 8) + 4 * (i % C))
          = make_uint2 (hzk_pack_half2 (v.x, v.y), hzk_pack_half2 (v.z, v.w));
    }
}

template <int D>
static __device__ __forceinline__ void
hzk_fa_convert_tile (const __half *HZK_RESTRICT st, __half *HZK_RESTRICT sh)
{
  constexpr int C = D / 8, N = HZK_FA_BK * C / HZK_FA_THREADS;
#pragma unroll
  for (int k = 0; k < N; k++)
    {
      const int i = threadIdx.x + k * HZK_FA_THREADS;
      *(uint4 *) (sh + (i / C) * (D + 8) + 8 * (i % C)) = *(const uint4 *) (st + 8 * i);
    }
}

/** Block (x, h): queries t0 .. t0 + 63 (t0 = 64·(gridDim.x − 1 − x): the longest rows
 *  start first) of q head h at positions *pos_p + t against keys 0 .. *pos_p + t of KV
 *  head h / (n_head / n_head_kv); hdk = hdv = D (32, 64 or 128). out and the optional
 *  int8 rows (aq/am, mode: hzk_quant32) as hzk_attn_prefill_kernel. */
template <typename KV, int D>
__global__ void __launch_bounds__ (HZK_FA_THREADS)
hzk_attn_prefill_mma_kernel (const float *HZK_RESTRICT q, const KV *HZK_RESTRICT kc,
                             const KV *HZK_RESTRICT vc, const int *HZK_RESTRICT pos_p,
                             int n_tok, int n_head, int n_head_kv, float scale,
                             float *HZK_RESTRICT out, int8_t *HZK_RESTRICT aq,
                             float2 *HZK_RESTRICT am, int mode)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  constexpr int LD = D + 8, NT = HZK_FA_BK / 8, KD = D / 16;
  extern __shared__ uint4 fa_sh4[];
  __half *sk = (__half *) fa_sh4, *sv = sk + HZK_FA_BK * LD;
  KV *stk = (KV *) (sv + HZK_FA_BK * LD), *stv = stk + HZK_FA_BK * D;
  const int t0 = (gridDim.x - 1 - blockIdx.x) * HZK_FA_BQ, h = blockIdx.y;
  const int kvh = h / (n_head / n_head_kv), pos0 = *pos_p;
  const int w = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
  const int64_t dq = (int64_t) n_head * D, dkv = (int64_t) n_head_kv * D;
  const int nq = min (HZK_FA_BQ, n_tok - t0), n_keys = pos0 + t0 + nq;
  const int wr = t0 + 16 * w;                         /* the warp's first row (token) */
  const bool w_live = wr < n_tok;
  const int w_first = pos0 + wr, w_last = pos0 + min (wr + 15, n_tok - 1);  /* positions */
  /* positions of rows g and g + 8 (padding rows take the last token's: never stored) */
  const int p_r0 = pos0 + min (wr + g, n_tok - 1), p_r1 = pos0 + min (wr + g + 8, n_tok - 1);

  /* Q fragments, scaled into the log2 domain */
  uint32_t qf[KD][4];
  const float qscale = scale * 1.44269504088896341f;
#pragma unroll
  for (int kk = 0; kk < KD; kk++)
#pragma unroll
    for (int i = 0; i < 4; i++)
      {
        const int row = wr + g + 8 * (i & 1), col = 16 * kk + 2 * c + 8 * (i >> 1);
        float2 x = make_float2 (0.0f, 0.0f);
        if (row < n_tok)
          x = *(const float2 *) (q + (int64_t) row * dq + (int64_t) h * D + col);
        qf[kk][i] = hzk_pack_half2 (x.x * qscale, x.y * qscale);
      }

  float o[D / 8][4];
#pragma unroll
  for (int n = 0; n < D / 8; n++)
    o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
  float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.0f, l1 = 0.0f;  /* rows g, g + 8 */

  /* software pipeline: tile j0 + BK is in flight (cp.async) while tile j0 is computed */
  const KV *kh = kc + (int64_t) kvh * D, *vh = vc + (int64_t) kvh * D;
  hzk_fa_fetch_tile<KV, D> (kh, dkv, 0, n_keys, stk);
  hzk_fa_fetch_tile<KV, D> (vh, dkv, 0, n_keys, stv);
  for (int j0 = 0; j0 < n_keys; j0 += HZK_FA_BK)
    {
      hzk_cp_async_wait_all ();
      __syncthreads ();                 /* tile j0 fetched; the previous one is consumed */
      hzk_fa_convert_tile<D> (stk, sk);
      hzk_fa_convert_tile<D> (stv, sv);
      __syncthreads ();                 /* sk, sv ready; the fetch buffers are free */
      if (j0 + HZK_FA_BK < n_keys)
        {
          hzk_fa_fetch_tile<KV, D> (kh, dkv, j0 + HZK_FA_BK, n_keys, stk);
          hzk_fa_fetch_tile<KV, D> (vh, dkv, j0 + HZK_FA_BK, n_keys, stv);
        }
      if (!w_live || j0 > w_last)                     /* uniform over the warp */
        continue;
      /* S = Q·Kᵀ: n-tile n = keys j0 + 8n .. + 7 */
      float s[NT][4];
#pragma unroll
      for (int n = 0; n < NT; n++)
        {
          s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
#pragma unroll
          for (int kp = 0; kp < KD / 2; kp++)
            {
              uint32_t b[4];
              hzk_ldmatrix_x4<false> (sk + (8 * n + (lane & 7)) * LD + 32 * kp + 8 * (lane >> 3), b);
              hzk_mma_f16_16816 (qf[2 * kp], b[0], b[1], s[n]);
              hzk_mma_f16_16816 (qf[2 * kp + 1], b[2], b[3], s[n]);
            }
        }
      if (j0 + HZK_FA_BK - 1 > w_first)               /* a key past some row's position */
        {
#pragma unroll
          for (int n = 0; n < NT; n++)
#pragma unroll
            for (int i = 0; i < 4; i++)
              if (j0 + 8 * n + 2 * c + (i & 1) > (i < 2 ? p_r0 : p_r1))
                s[n][i] = -INFINITY;
        }
      /* online softmax; key 0 is in every row's first tile, so m stays finite after it */
      float x0 = -INFINITY, x1 = -INFINITY;
#pragma unroll
      for (int n = 0; n < NT; n++)
        {
          x0 = fmaxf (x0, fmaxf (s[n][0], s[n][1]));
          x1 = fmaxf (x1, fmaxf (s[n][2], s[n][3]));
        }
      x0 = fmaxf (x0, __shfl_xor_sync (0xffffffffu, x0, 1));
      x0 = fmaxf (x0, __shfl_xor_sync (0xffffffffu, x0, 2));
      x1 = fmaxf (x1, __shfl_xor_sync (0xffffffffu, x1, 1));
      x1 = fmaxf (x1, __shfl_xor_sync (0xffffffffu, x1, 2));
      const float mn0 = fmaxf (m0, x0), mn1 = fmaxf (m1, x1);
      const float cr0 = exp2f (m0 - mn0), cr1 = exp2f (m1 - mn1);
      m0 = mn0;
      m1 = mn1;
      float ls0 = 0.0f, ls1 = 0.0f;
#pragma unroll
      for (int n = 0; n < NT; n++)
        {
          s[n][0] = exp2f (s[n][0] - mn0);
          s[n][1] = exp2f (s[n][1] - mn0);
          s[n][2] = exp2f (s[n][2] - mn1);
          s[n][3] = exp2f (s[n][3] - mn1);
          ls0 += s[n][0] + s[n][1];
          ls1 += s[n][2] + s[n][3];
        }
      l0 = l0 * cr0 + ls0;                            /* this lane's share of the row sum */
      l1 = l1 * cr1 + ls1;
#pragma unroll
      for (int n = 0; n < D / 8; n++)
        {
          o[n][0] *= cr0;
          o[n][1] *= cr0;
          o[n][2] *= cr1;
          o[n][3] *= cr1;
        }
      /* O += P·V: keys 16 kc .. + 15 of the tile; P's A fragment is S's n-tiles 2kc, 2kc+1 */
#pragma unroll
      for (int kc2 = 0; kc2 < HZK_FA_BK / 16; kc2++)
        {
          const uint32_t a[4] = { hzk_pack_half2 (s[2 * kc2][0], s[2 * kc2][1]),
                                  hzk_pack_half2 (s[2 * kc2][2], s[2 * kc2][3]),
                                  hzk_pack_half2 (s[2 * kc2 + 1][0], s[2 * kc2 + 1][1]),
                                  hzk_pack_half2 (s[2 * kc2 + 1][2], s[2 * kc2 + 1][3]) };
#pragma unroll
          for (int dn = 0; dn < D / 16; dn++)
            {
              uint32_t b[4];
              hzk_ldmatrix_x4<true> (sv + (16 * kc2 + (lane & 7) + 8 * ((lane >> 3) & 1)) * LD
                                        + 16 * dn + 8 * (lane >> 4), b);
              hzk_mma_f16_16816 (a, b[0], b[1], o[2 * dn]);
              hzk_mma_f16_16816 (a, b[2], b[3], o[2 * dn + 1]);
            }
        }
    }

  /* epilogue: O / l through shared memory [BQ][D + 8] fp32, then row by row */
  l0 += __shfl_xor_sync (0xffffffffu, l0, 1);
  l0 += __shfl_xor_sync (0xffffffffu, l0, 2);
  l1 += __shfl_xor_sync (0xffffffffu, l1, 1);
  l1 += __shfl_xor_sync (0xffffffffu, l1, 2);
  const float i0 = l0 > 0.0f ? 1.0f / l0 : 0.0f, i1 = l1 > 0.0f ? 1.0f / l1 : 0.0f;
  float *so = (float *) fa_sh4 + 16 * w * LD;
  __syncthreads ();                                   /* every warp is done with sk, sv */
#pragma unroll
  for (int n = 0; n < D / 8; n++)
    {
      *(float2 *) (so + g * LD + 8 * n + 2 * c) = make_float2 (o[n][0] * i0, o[n][1] * i0);
      *(float2 *) (so + (g + 8) * LD + 8 * n + 2 * c) = make_float2 (o[n][2] * i1, o[n][3] * i1);
    }
  __syncwarp ();
  const int64_t dov = (int64_t) n_head * D;
  for (int r = 0; r < 16 && wr + r < n_tok; r++)
#pragma unroll
    for (int d = lane; d < D; d += 32)
      {
        const float v = so[r * LD + d];
        const int64_t idx = (int64_t) (wr + r) * dov + (int64_t) h * D + d;
        out[idx] = v;
        if (aq)
          hzk_quant32 (v, idx, true, mode, aq, am);
      }
#endif
}
#endif /* HZK_CUDA */

/* ---- SwiGLU ---------------------------------------------------------------------------- */
/** Row blockIdx.y: out[row·n + i] = silu(gate[row·ld + i]) · up[row·ld + i]. */
__global__ void __launch_bounds__ (HZK_OP_THREADS)
hzk_swiglu_kernel (const float *HZK_RESTRICT gate, const float *HZK_RESTRICT up, int64_t ld,
                   int64_t n, float *HZK_RESTRICT out, int8_t *HZK_RESTRICT aq,
                   float2 *HZK_RESTRICT am, int mode)
{
  hzk_dep_begin ();
  __shared__ float qsh[2 * HZK_OP_THREADS / HZK_SEG];
  const int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y;
  const bool valid = i < n;
  float v = 0.0f;
  if (valid)
    {
      const float g = gate[row * ld + i];
      v = (g / (1.0f + expf (-g))) * up[row * ld + i];
      out[row * n + i] = v;
    }
  if (aq)
    hzk_quant_store (v, row * n + i, valid, mode, aq, am, qsh);
}

/* ---- GeGLU and soft-capping (Gemma) ---------------------------------------------------- */
/** Row blockIdx.y: out[row·n + i] = gelu(gate[row·ld + i]) · up[row·ld + i] with ggml's CPU
 *  GELU: 0 for g <= −10, g for g >= 10, else the fp16 table's value at fp16(g) (`table`:
 *  65536 fp16 values, gelu_tanh of every fp16 bit pattern, the CPU's own table). */
__global__ void __launch_bounds__ (HZK_OP_THREADS)
hzk_geglu_kernel (const float *HZK_RESTRICT gate, const float *HZK_RESTRICT up, int64_t ld,
                  int64_t n, const uint16_t *HZK_RESTRICT table, float *HZK_RESTRICT out,
                  int8_t *HZK_RESTRICT aq, float2 *HZK_RESTRICT am, int mode)
{
  hzk_dep_begin ();
  __shared__ float qsh[2 * HZK_OP_THREADS / HZK_SEG];
  const int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y;
  const bool valid = i < n;
  float v = 0.0f;
  if (valid)
    {
      const float g = gate[row * ld + i];
      const float u = up[row * ld + i];
      if (g <= -10.0f)
        v = 0.0f;
      else if (g >= 10.0f)
        v = g * u;
      else
        v = hzk_half_bits_to_float (table[hzk_float_to_half_bits (g)]) * u;
      out[row * n + i] = v;
    }
  if (aq)
    hzk_quant_store (v, row * n + i, valid, mode, aq, am, qsh);
}

/** x[i] = tanhf (x[i] · (1/c)) · c (hz_cpu_softcap). */
__global__ void __launch_bounds__ (HZK_OP_THREADS)
hzk_softcap_kernel (float *HZK_RESTRICT x, int64_t n, float c)
{
  hzk_dep_begin ();
  const int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = tanhf (x[i] * (1.0f / c)) * c;
}

/* ---- position counter (the argmax is in kernels/sample.hip) ---------------------------- */
__global__ void
hzk_pos_add_kernel (int *pos, int delta, const int *tok, int *hist)
{
  hzk_dep_begin ();
  if (hist)
    hist[*pos + delta] = *tok;
  *pos += delta;
}

/* ---- host launchers ----------------------------------------------------------------------- */
#define S(stream) ((hipStream_t) (stream))

static int
rms_norm_launch (float *x, const float *add, const float *add_bias, const HzkMoeSum &ms,
                 const float *w, int64_t n, int rows, float eps, float *y, void *act,
                 int act_mode, void *stream)
{
  if (act && (n % (act_mode == HZK_ACT_Q8_K ? 256 : 32)))
    return (int) hipErrorInvalidValue;
  int8_t *aq = act ? (int8_t *) act : NULL;
  float2 *am = act ? (float2 *) hzk_act_m (act, n * rows, 1) : NULL;
  (void) hzk_launch_dep (hzk_rms_norm_kernel, rows, HZK_NORM_THREADS, 0, S (stream), x, add, add_bias, w, n, eps,
                                                                    y, aq, am, act_mode, ms);
  return (int) hipGetLastError ();
}

extern "C" int
hzk_rms_norm (float *x, const float *add, const float *add_bias, const float *w, int64_t n,
              int rows, float eps, float *y, void *act, int act_mode, void *stream)
{
  return rms_norm_launch (x, add, add_bias, HzkMoeSum {}, w, n, rows, eps, y, act, act_mode,
                          stream);
}

extern "C" int
hzk_rms_norm_moe (float *x, const float *ys, int64_t ldys, const float *weights, int k,
                  const float *shared, const float *shared_gate, const float *w, int64_t n,
                  int rows, float eps, float *y, void *act, int act_mode, void *stream)
{
  if (!ys || !weights || k < 1 || ldys < n || (shared && !shared_gate))
    return (int) hipErrorInvalidValue;
  const HzkMoeSum ms = { ys, ldys, weights, k, shared, shared_gate };
  return rms_norm_launch (x, NULL, NULL, ms, w, n, rows, eps, y, act, act_mode, stream);
}

extern "C" int
hzk_qkv_rope (const float *qkv, const float *bias, const float *q_norm, const float *k_norm,
              float eps, const float *cs, const int *pos, int n_tok, int n_head, int n_head_kv,
              int hdk, int hdv, int n_rot, int neox, float *q_out, void *k_cache, void *v_cache,
              int kv_f16, void *stream)
{
  if (hdk > 8 * 128 || hdv > 8 * 128 || n_tok < 1)
    return (int) hipErrorInvalidValue;
  const size_t shm = sizeof (float) * hdk;
  const dim3 grid ((unsigned) (n_head + n_head_kv), (unsigned) n_tok);
  if (kv_f16)
    (void) hzk_launch_dep (hzk_qkv_rope_kernel<__half>, grid, 128, shm, S (stream),
        qkv, bias, q_norm, k_norm, eps, cs, pos, n_head, n_head_kv, hdk, hdv, n_rot, neox, q_out,
        (__half *) k_cache, (__half *) v_cache);
  else
    (void) hzk_launch_dep (hzk_qkv_rope_kernel<float>, grid, 128, shm, S (stream),
        qkv, bias, q_norm, k_norm, eps, cs, pos, n_head, n_head_kv, hdk, hdv, n_rot, neox, q_out,
        (float *) k_cache, (float *) v_cache);
  return (int) hipGetLastError ();
}

extern "C" size_t
hzk_attn_part_bytes (int n_head, int hdv, int n_split)
{
  return sizeof (float) * (size_t) n_head * n_split * (2 + hdv);
}

extern "C" int
hzk_attn_decode (const float *q, const void *k_cache, const void *v_cache, int kv_f16,
                 const int *pos, int n_head, int n_head_kv, int hdk, int hdv, float scale,
                 int n_split, float *part, float *out, void *act, int act_mode,
                 int *counters, void *stream)
{
  return hzk_attn_decode_ext (q, k_cache, v_cache, kv_f16, pos, n_head, n_head_kv, hdk, hdv,
                              scale, HzkAttnMask {}, n_split, part, out, act, act_mode, counters,
                              stream);
}

extern "C" int
hzk_attn_decode_ext (const float *q, const void *k_cache, const void *v_cache, int kv_f16,
                     const int *pos, int n_head, int n_head_kv, int hdk, int hdv, float scale,
                     HzkAttnMask mask, int n_split, float *part, float *out, void *act,
                     int act_mode, int *counters, void *stream)
{
  if (act && (hdv % 32 || act_mode == HZK_ACT_Q8_K))
    return (int) hipErrorInvalidValue;
  if (hdk > HZK_ATT_MAXD || hdv > HZK_ATT_MAXD || n_split < 1 || n_head % n_head_kv)
    return (int) hipErrorInvalidValue;
  const dim3 grid (n_head, n_split);
  int8_t *aq = act ? (int8_t *) act : NULL;
  float2 *am = act ? (float2 *) hzk_act_m (act, (int64_t) n_head * hdv, 1) : NULL;
  if (kv_f16)
    (void) hzk_launch_dep (hzk_attn_split_kernel<__half>, grid, HZK_ATT_THREADS, 0, S (stream),
        q, (const __half *) k_cache, (const __half *) v_cache, pos, n_head, n_head_kv, hdk, hdv,
        scale, mask, part, counters, out, aq, am, act_mode);
  else
    (void) hzk_launch_dep (hzk_attn_split_kernel<float>, grid, HZK_ATT_THREADS, 0, S (stream),
        q, (const float *) k_cache, (const float *) v_cache, pos, n_head, n_head_kv, hdk, hdv,
        scale, mask, part, counters, out, aq, am, act_mode);
  if (!counters)
    (void) hzk_launch_dep (hzk_attn_combine_kernel, n_head, HZK_ATT_THREADS, 0, S (stream),
                           part, n_split, hdv, out, aq, am, act_mode);
  return (int) hipGetLastError ();
}

template <typename KV, int KC, int MAXV>
static void
hzk_attn_prefill_go (const float *q, const void *k_cache, const void *v_cache, const int *pos,
                     int n_tok, int n_head, int n_head_kv, int hdk, int hdv, float scale,
                     HzkAttnMask mk, float *out, void *stream)
{
  const dim3 grid ((unsigned) n_head, (unsigned) ((n_tok + HZK_PA_BQ - 1) / HZK_PA_BQ));
  hzk_attn_prefill_kernel<KV, KC, MAXV><<<grid, HZK_PA_THREADS,
                                          sizeof (float) * hzk_pa_shared (KC, hdk, hdv), S (stream)>>> (
      q, (const KV *) k_cache, (const KV *) v_cache, pos, n_tok, n_head, n_head_kv, hdk, hdv,
      scale, mk, out);
}

/* Key chunks of 32 while the q tile and the K/V chunks fit in 48 KB of shared memory
 * (head dims up to 128 + 128), else of 8. */
template <typename KV>
static int
hzk_attn_prefill_launch (const float *q, const void *k_cache, const void *v_cache, const int *pos,
                         int n_tok, int n_head, int n_head_kv, int hdk, int hdv, float scale,
                         HzkAttnMask mk, float *out, void *stream)
{
  const bool big = hzk_pa_shared (32, hdk, hdv) * sizeof (float) > 48 * 1024;
  if (hdv <= 128)
    big ? hzk_attn_prefill_go<KV, 8, 4> (q, k_cache, v_cache, pos, n_tok, n_head, n_head_kv, hdk, hdv, scale, mk, out, stream)
        : hzk_attn_prefill_go<KV, 32, 4> (q, k_cache, v_cache, pos, n_tok, n_head, n_head_kv, hdk, hdv, scale, mk, out, stream);
  else
    big ? hzk_attn_prefill_go<KV, 8, 8> (q, k_cache, v_cache, pos, n_tok, n_head, n_head_kv, hdk, hdv, scale, mk, out, stream)
        : hzk_attn_prefill_go<KV, 32, 8> (q, k_cache, v_cache, pos, n_tok, n_head, n_head_kv, hdk, hdv, scale, mk, out, stream);
  return (int) hipGetLastError ();
}

#if defined(HZK_CUDA)
/** The tensor-core kernel runs on a device of compute capability 8.0 or newer unless
 *  HZ_GPU_ATTN=fp32 (read at each call, so that a test can compare both kernels). */
static bool
hzk_pa_use_mma (void)
{
  static int cc_ok = -1;
  if (cc_ok < 0)
    {
      int dev = 0, major = 0;
      cc_ok = cudaGetDevice (&dev) == cudaSuccess
              && cudaDeviceGetAttribute (&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess
              && major >= 8;
    }
  const char *e = getenv ("HZ_GPU_ATTN");
  return cc_ok > 0 && !(e && strcmp (e, "fp32") == 0);
}

template <typename KV, int D>
static void
hzk_attn_prefill_mma_go (const float *q, const void *k_cache, const void *v_cache,
                         const int *pos, int n_tok, int n_head, int n_head_kv, float scale,
                         float *out, int8_t *aq, float2 *am, int mode, void *stream)
{
  const dim3 grid ((unsigned) ((n_tok + HZK_FA_BQ - 1) / HZK_FA_BQ), (unsigned) n_head);
  const size_t shm = hzk_fa_shared (D, sizeof (KV));   /* 18 .. 100 KB */
  if (cudaFuncSetAttribute (hzk_attn_prefill_mma_kernel<KV, D>,
                            cudaFuncAttributeMaxDynamicSharedMemorySize, (int) shm) != cudaSuccess)
    return;                             /* the caller reads the error */
  hzk_attn_prefill_mma_kernel<KV, D><<<grid, HZK_FA_THREADS, shm, S (stream)>>> (
      q, (const KV *) k_cache, (const KV *) v_cache, pos, n_tok, n_head, n_head_kv, scale, out,
      aq, am, mode);
}

/* The tensor-core kernel for head dims 32, 64, 128 (hdk == hdv) and 16-byte aligned
 * operands; false: not taken (the caller runs the fp32 kernel). */
template <typename KV>
static bool
hzk_attn_prefill_mma (const float *q, const void *k_cache, const void *v_cache, const int *pos,
                      int n_tok, int n_head, int n_head_kv, int hd, float scale, float *out,
                      int8_t *aq, float2 *am, int mode, void *stream)
{
  if (((uintptr_t) q | (uintptr_t) k_cache | (uintptr_t) v_cache) % 16 || !hzk_pa_use_mma ())
    return false;
  switch (hd)
    {
    case 32:
      hzk_attn_prefill_mma_go<KV, 32> (q, k_cache, v_cache, pos, n_tok, n_head, n_head_kv, scale, out, aq, am, mode, stream);
      return true;
    case 64:
      hzk_attn_prefill_mma_go<KV, 64> (q, k_cache, v_cache, pos, n_tok, n_head, n_head_kv, scale, out, aq, am, mode, stream);
      return true;
    case 128:
      hzk_attn_prefill_mma_go<KV, 128> (q, k_cache, v_cache, pos, n_tok, n_head, n_head_kv, scale, out, aq, am, mode, stream);
      return true;
    default:
      return false;
    }
}
#endif

extern "C" int
hzk_attn_prefill (const float *q, const void *k_cache, const void *v_cache, int kv_f16,
                  const int *pos, int n_tok, int n_head, int n_head_kv, int hdk, int hdv,
                  float scale, float *out, void *act, int act_mode, int fp16_ok, void *stream)
{
  return hzk_attn_prefill_ext (q, k_cache, v_cache, kv_f16, pos, n_tok, n_head, n_head_kv, hdk,
                               hdv, scale, HzkAttnMask {}, out, act, act_mode, fp16_ok, stream);
}

extern "C" int
hzk_attn_prefill_ext (const float *q, const void *k_cache, const void *v_cache, int kv_f16,
                      const int *pos, int n_tok, int n_head, int n_head_kv, int hdk, int hdv,
                      float scale, HzkAttnMask mk, float *out, void *act, int act_mode,
                      int fp16_ok, void *stream)
{
  if (hdk > HZK_ATT_MAXD || hdv > HZK_ATT_MAXD || n_tok < 1 || n_head % n_head_kv)
    return (int) hipErrorInvalidValue;
  const int64_t n_out = (int64_t) n_tok * n_head * hdv;
  if (act && n_out % (act_mode == HZK_ACT_Q8_K ? 256 : 32))
    return (int) hipErrorInvalidValue;
#if defined(HZK_CUDA)
  /* int8 rows fused into the epilogue: 32-blocks within one head's row (any D here) */
  const bool fuse = act && act_mode != HZK_ACT_Q8_K;
  int8_t *aq = fuse ? (int8_t *) act : NULL;
  float2 *am = fuse ? (float2 *) hzk_act_m (act, n_out, 1) : NULL;
  /* (the tensor-core kernel has no window or soft-capping: masked layers take the fp32 one) */
  if (fp16_ok && hdk == hdv && mk.window <= 0 && mk.softcap <= 0.0f
      && (kv_f16 ? hzk_attn_prefill_mma<__half> (q, k_cache, v_cache, pos, n_tok, n_head,
                                                 n_head_kv, hdk, scale, out, aq, am, act_mode,
                                                 stream)
                 : hzk_attn_prefill_mma<float> (q, k_cache, v_cache, pos, n_tok, n_head,
                                                n_head_kv, hdk, scale, out, aq, am, act_mode,
                                                stream)))
    {
      const int rc = (int) hipGetLastError ();
      return rc || !act || fuse ? rc : hzk_quantize_act_mode (out, n_out, act_mode, act, stream);
    }
#endif
  const int rc = kv_f16 ? hzk_attn_prefill_launch<__half> (q, k_cache, v_cache, pos, n_tok, n_head,
                                                           n_head_kv, hdk, hdv, scale, mk, out, stream)
                        : hzk_attn_prefill_launch<float> (q, k_cache, v_cache, pos, n_tok, n_head,
                                                          n_head_kv, hdk, hdv, scale, mk, out, stream);
  return rc || !act ? rc : hzk_quantize_act_mode (out, n_out, act_mode, act, stream);
}

extern "C" int
hzk_swiglu_rows (const float *gate, const float *up, int64_t ld, int64_t n, int rows, float *out,
                 void *act, int act_mode, void *stream)
{
  if ((act && (n % (act_mode == HZK_ACT_Q8_K ? 256 : 32))) || rows < 1 || (rows > 1 && ld < n))
    return (int) hipErrorInvalidValue;
  int8_t *aq = act ? (int8_t *) act : NULL;
  float2 *am = act ? (float2 *) hzk_act_m (act, n * rows, 1) : NULL;
  const dim3 grid ((unsigned) ((n + HZK_OP_THREADS - 1) / HZK_OP_THREADS), (unsigned) rows);
  (void) hzk_launch_dep (hzk_swiglu_kernel, grid, HZK_OP_THREADS, 0, S (stream), gate, up, ld, n, out, aq, am,
                                                              act_mode);
  return (int) hipGetLastError ();
}

extern "C" int
hzk_swiglu (const float *gate, const float *up, int64_t n, float *out, void *act, int act_mode,
            void *stream)
{
  return hzk_swiglu_rows (gate, up, n, n, 1, out, act, act_mode, stream);
}

extern "C" int
hzk_geglu_rows (const float *gate, const float *up, int64_t ld, int64_t n, int rows,
                const uint16_t *table, float *out, void *act, int act_mode, void *stream)
{
  if ((act && (n % (act_mode == HZK_ACT_Q8_K ? 256 : 32))) || rows < 1 || (rows > 1 && ld < n)
      || !table)
    return (int) hipErrorInvalidValue;
  int8_t *aq = act ? (int8_t *) act : NULL;
  float2 *am = act ? (float2 *) hzk_act_m (act, n * rows, 1) : NULL;
  const dim3 grid ((unsigned) ((n + HZK_OP_THREADS - 1) / HZK_OP_THREADS), (unsigned) rows);
  (void) hzk_launch_dep (hzk_geglu_kernel, grid, HZK_OP_THREADS, 0, S (stream), gate, up, ld, n,
                         table, out, aq, am, act_mode);
  return (int) hipGetLastError ();
}

extern "C" int
hzk_softcap (float *x, int64_t n, float c, void *stream)
{
  if (n < 1 || !(c > 0.0f))
    return (int) hipErrorInvalidValue;
  const unsigned grid = (unsigned) ((n + HZK_OP_THREADS - 1) / HZK_OP_THREADS);
  (void) hzk_launch_dep (hzk_softcap_kernel, grid, HZK_OP_THREADS, 0, S (stream), x, n, c);
  return (int) hipGetLastError ();
}

extern "C" int
hzk_quantize_act_mode (const float *x, int64_t n, int mode, void *act, void *stream)
{
  if (n % (mode == HZK_ACT_Q8_K ? 256 : 32))
    return (int) hipErrorInvalidValue;
  const unsigned grid = (unsigned) ((n + HZK_OP_THREADS - 1) / HZK_OP_THREADS);
  (void) hzk_launch_dep (hzk_quantize_mode_kernel, grid, HZK_OP_THREADS, 0, S (stream),
      x, n, mode, (int8_t *) act, (float2 *) hzk_act_m (act, n, 1));
  return (int) hipGetLastError ();
}

extern "C" int
hzk_pos_add (int *pos, int delta, const int *tok, int *hist, void *stream)
{
  (void) hzk_launch_dep (hzk_pos_add_kernel, 1, 1, 0, S (stream), pos, delta, tok, hist);
  return (int) hipGetLastError ();
}
