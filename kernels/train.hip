/* kernels/train.hip — device ops of LoRA training (issue 7, the GPU half): the forward and
 * backward ops of learner/train-ops-decl.h (RMSNorm, RoPE, causal attention through batched
 * products and a masked softmax, SwiGLU, masked cross-entropy), a strided batched fp32
 * matrix product for the LoRA factors and the attention products, the base products
 * y = x W^T and dx = dy W through the QUANTIZED base, and AdamW. C ABI: kernels/hzk.h
 * ("training" section); host side: learner/gpu-train.c.
 *
 * Quantized products (hzk_train_qmm). W stays in the split-block layout of kernels/qdec.h
 * (the serving tensors, no second copy). A block decodes a tile of W — BR rows × one K tile
 * of 256 elements (a whole number of blocks of every format) — with the format's own
 * decoder (qdec<W>::decode for integer formats: runs of 16 values w = d·v + m;
 * decode_f for F32/F16/BF16) into shared memory as bfloat16, next to a bf16 tile of the
 * activations, and multiplies the tiles with fp32 accumulation:
 *   forward  (trans 0):  y[t][r]  (+)= Σ_k x[t][k] · W[r][k]   tile 128 tokens (tensor
 *                                                              cores; 64 with FMA) × 64 rows,
 *                                                              walking K by 256
 *   backward (trans 1):  y[t][k]  (+)= Σ_r x[t][r] · W[r][k]   tile 64 tokens × 256 columns,
 *                                                              walking the rows by 64
 * The forward reads x as bf16 converted once per product (hzk_train_to_bf16) when the caller
 * gives that copy. When the tiles are too few for the device's waves (a short batch, a
 * narrow W), the walk (K tiles forward, rows backward) is split over blocks whose partial
 * sums are added atomically.
 * On NVIDIA sm_80+ the tile products run on tensor cores (WMMA bf16 16×16×16, fp32
 * accumulators; HZ_GPU_TRAIN_MMA=0 turns them off), elsewhere (AMD, older NVIDIA) by fp32
 * FMA from the same bf16 tiles. bf16 is the precision PyTorch trains a bf16 base in; the
 * accumulation is fp32. Every format with a device decoder works through the one template;
 * formats without one are uploaded as F16 by the host (hz-gpu.h) and take the F16 decoder.
 *
 * Everything else is fp32 (activations, LoRA factors and gradients, optimiser moments);
 * reductions of a row (norm, softmax, log-sum-exp) run in one block through shared memory
 * (no warp intrinsics, so wave64 AMD devices take the same code).
 * Formulas: those of the CPU twins in learner/train-ops-decl.h, restated at each function in hzk.h.
 */
#include "qdec.h"
#include "hzk.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(HZK_CUDA)
#include <mma.h>
#include <cuda_bf16.h>
#endif

#if defined(HZK_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define HZK_TRAIN_WMMA_ARCH 1
#endif

#define HZK_TQ_KT 256          /* K tile of the quantized products (whole blocks) */
#define HZK_TQ_LD (HZK_TQ_KT + 8)   /* padded bf16 row of a W tile */
#define HZK_TQ_BM 64           /* forward: W rows per block */
#define HZK_TQ_BN 64           /* tokens per block (backward; forward without tensor cores) */
#define HZK_TQ_BN_MMA 128      /* tokens per block of the forward with tensor cores */
#define HZK_TQ_BR 64           /* backward: W rows per step */
#define HZK_TQ_LDX (HZK_TQ_BR + 8)
#define HZK_TQ_THREADS 256

typedef uint16_t hzk_bf16;     /* bfloat16 bits (round to nearest even) */

static __device__ __forceinline__ hzk_bf16
hzk_f2bf (float f)
{
#if defined(HZK_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  return __bfloat16_as_ushort (__float2bfloat16_rn (f));   /* cvt.rn.bf16.f32 */
#else
  uint32_t u = __float_as_uint (f);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return (hzk_bf16) ((u >> 16) | 0x40u);         /* quiet NaN */
  u += 0x7fffu + ((u >> 16) & 1u);
  return (hzk_bf16) (u >> 16);
#endif
}

static __device__ __forceinline__ float
hzk_bf2f (hzk_bf16 b)
{
  return __uint_as_float ((uint32_t) b << 16);
}

/** Multiprocessors of the current device (asked once; 80 if the runtime does not say). */
static int
hzk_tr_n_sm (void)
{
  static int n = 0;
  if (n == 0)
    {
      int dev = 0, v = 0;
#if defined(HZK_CUDA)
      if (cudaGetDevice (&dev) != cudaSuccess
          || cudaDeviceGetAttribute (&v, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
        v = 0;
#else
      if (hipGetDevice (&dev) != hipSuccess
          || hipDeviceGetAttribute (&v, hipDeviceAttributeMultiprocessorCount, dev) != hipSuccess)
        v = 0;
#endif
      n = v > 0 ? v : 80;
    }
  return n;
}

/* ---- W tile decode ------------------------------------------------------------------- */
/** Decode rows r0 .. r0+nrows−1 of W (n_rows × K, split blocks) over K tile kt
 *  (elements 256·kt ..) into s[row][0..256) as bf16; rows ≥ n_rows and elements ≥ K are 0.
 *  Called by all threads of the block (no barrier inside). */
template <int W>
static __device__ __forceinline__ void
hzk_tq_decode_tile (const uint8_t *HZK_RESTRICT w, int64_t n_rows, int64_t K, int64_t r0,
                    int nrows, int64_t kt, hzk_bf16 *s, int ld)
{
  using T = qdw_traits<W>;
  const int tid = threadIdx.x, nt = blockDim.x;
  const int64_t e0 = kt * HZK_TQ_KT;
  const int valid = (int) min ((int64_t) HZK_TQ_KT, K - e0);
  if constexpr (T::is_float)
    {
      constexpr int UE = T::unit_elems, UT = HZK_TQ_KT / UE;
      const int64_t nu = K / UE;
      const size_t row_bytes = (size_t) nu * T::unit_bytes;
      for (int p = tid; p < nrows * UT; p += nt)
        {
          const int rl = p / UT, ul = p % UT;
          const int64_t r = r0 + rl, u = e0 / UE + ul;
          hzk_bf16 *d = s + rl * ld + ul * UE;
          if (r >= n_rows || ul * UE >= valid)
            {
              for (int i = 0; i < UE; i++)
                d[i] = 0;
              continue;
            }
          const uint4 q = *(const uint4 *) (w + (size_t) r * row_bytes + (size_t) u * 16);
          float f[UE];
          qdec<W>::decode_f (&q, f);
          for (int i = 0; i < UE; i++)
            d[i] = hzk_f2bf (f[i]);
        }
    }
  else
    {
      using D = qdec<W>;
      constexpr int CH = T::chunks, RUNS = D::runs;
      constexpr int UT = HZK_TQ_KT / T::unit_elems, BPT = HZK_TQ_KT / T::blk_elems;
      static_assert (HZK_TQ_KT % T::blk_elems == 0, "a K tile holds whole blocks");
      const int64_t nu = K / T::unit_elems, nb = K / T::blk_elems;
      const size_t row_bytes = (size_t) nu * T::unit_bytes;
      const uint8_t *M = w + hzk_align256 ((size_t) n_rows * row_bytes);
      for (int p = tid; p < nrows * UT; p += nt)
        {
          const int rl = p / UT, ul = p % UT;
          const int64_t r = r0 + rl, u = kt * UT + ul;
          hzk_bf16 *row = s + rl * ld;
          if (r >= n_rows || u >= nu)
            {
              /* this unit's runs are outside the matrix: zero the elements it would cover
               * (whole units tile the K tile, so the positions are the unit's share) */
              for (int i = 0; i < T::unit_elems; i++)
                row[ul * T::unit_elems + i] = 0;
              continue;
            }
          const uint8_t *P = w + (size_t) r * row_bytes;
          uint4 q[CH];
          qdw_load_unit<W> (P, nu, u, q);
          const int64_t b = u / T::units_per_block;
          const int ub = (int) (u % T::units_per_block);
          int v[RUNS][4], off[RUNS];
          float d[RUNS], m[RUNS];
          D::decode (q, M + (size_t) (r * nb + b) * T::meta_bytes, ub, v, d, m, off);
          const int eb = (int) (b - kt * BPT) * T::blk_elems;
          for (int j = 0; j < RUNS; j++)
            {
              hzk_bf16 *o = row + eb + off[j];
              const float mm = T::symmetric ? 0.0f : m[j];
              for (int k = 0; k < 4; k++)
                for (int i = 0; i < 4; i++)
                  {
                    const int8_t q8 = (int8_t) ((uint32_t) v[j][k] >> (8 * i));
                    o[4 * k + i] = hzk_f2bf (fmaf (d[j], (float) q8, mm));
                  }
            }
        }
    }
}

/* The unit-zeroing above covers the positions of whole units only when units map to
 * contiguous element ranges; for the K-quants a unit's runs are scattered, so an invalid
 * unit zeroes another unit's positions. That only happens for rows ≥ n_rows (whole rows
 * invalid: every position zeroed by some unit) and never for u ≥ nu within a valid row,
 * because integer formats have K % 256 == 0 or blocks of 32 (legacy: one unit = its own
 * 32 contiguous elements). */

/* ---- forward: y[t][r] (+)= Σ_k x[t][k] W[r][k] --------------------------------------- */
template <int W, bool MMA, int BN>
__global__ void __launch_bounds__ (HZK_TQ_THREADS)
hzk_tq_fwd (const uint8_t *HZK_RESTRICT w, int64_t n_rows, int64_t K, const float *HZK_RESTRICT x,
            const hzk_bf16 *HZK_RESTRICT xb, int64_t n_tok, float *HZK_RESTRICT y, int accumulate,
            int kt_per)
{
  extern __shared__ __align__ (16) unsigned char hzk_tq_smem[];
  hzk_bf16 *sw = (hzk_bf16 *) hzk_tq_smem;                    /* [BM][LD] */
  hzk_bf16 *sx = sw + HZK_TQ_BM * HZK_TQ_LD;                  /* [BN][LD] */
  float *stage = (float *) (sx + BN * HZK_TQ_LD);             /* [8 warps][16][16] (MMA) */
  const int tid = threadIdx.x;
  const int64_t row0 = (int64_t) blockIdx.x * HZK_TQ_BM;
  const int64_t tok0 = (int64_t) blockIdx.y * BN;
  static_assert (MMA || BN == 64, "the FMA path computes 64 tokens");
  constexpr int FT = BN / 64;           /* token fragments per warp (tensor cores) */
  const int64_t n_tiles = (K + HZK_TQ_KT - 1) / HZK_TQ_KT;
  /* split K (gridDim.z > 1): this block's K tiles, its partial sum added atomically */
  const int64_t kt_beg = (int64_t) blockIdx.z * kt_per;
  const int64_t kt_end = min (n_tiles, kt_beg + kt_per);
  const bool split = gridDim.z > 1;

#if defined(HZK_TRAIN_WMMA_ARCH)
  using namespace nvcuda;
  /* 8 warps: warp wp takes tokens 16·FT·(wp % 4).. (FT fragments) and rows 32·(wp / 4)..
   * (two fragments) */
  const int wp = tid / 32, wt = wp % 4, wr = wp / 4;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[FT][2];
  if constexpr (MMA)
    for (int i = 0; i < FT; i++)
      {
        wmma::fill_fragment (acc[i][0], 0.0f);
        wmma::fill_fragment (acc[i][1], 0.0f);
      }
#endif
  /* fallback: thread tid computes tokens tid / 16 + 16 i, rows tid % 16 + 16 j */
  float facc[4][4];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++)
      facc[i][j] = 0.0f;

  for (int64_t kt = kt_beg; kt < kt_end; kt++)
    {
      const int64_t e0 = kt * HZK_TQ_KT;
      const int valid = (int) min ((int64_t) HZK_TQ_KT, K - e0);
      __syncthreads ();
      hzk_tq_decode_tile<W> (w, n_rows, K, row0, HZK_TQ_BM, kt, sw, HZK_TQ_LD);
      if (xb && (K & 7) == 0)
        /* x already in bf16 (hzk_train_to_bf16): 16-byte copies, half the bytes of fp32 */
        for (int p = tid; p < BN * HZK_TQ_KT / 8; p += HZK_TQ_THREADS)
          {
            const int t = p / (HZK_TQ_KT / 8), k8 = (p % (HZK_TQ_KT / 8)) * 8;
            const int64_t tg = tok0 + t;
            uint4 v = make_uint4 (0u, 0u, 0u, 0u);
            if (tg < n_tok && k8 < valid)          /* valid is a multiple of 8 here */
              v = *(const uint4 *) (xb + (size_t) tg * K + e0 + k8);
            *(uint4 *) (sx + t * HZK_TQ_LD + k8) = v;
          }
      else if (xb)
        for (int p = tid; p < BN * HZK_TQ_KT; p += HZK_TQ_THREADS)
          {
            const int t = p / HZK_TQ_KT, k = p % HZK_TQ_KT;
            const int64_t tg = tok0 + t;
            sx[t * HZK_TQ_LD + k] = tg < n_tok && k < valid ? xb[(size_t) tg * K + e0 + k] : (hzk_bf16) 0;
          }
      else
        /* fp32 x, converted tile by tile */
        for (int p = tid; p < BN * HZK_TQ_KT / 4; p += HZK_TQ_THREADS)
          {
            const int t = p / (HZK_TQ_KT / 4), k4 = (p % (HZK_TQ_KT / 4)) * 4;
            const int64_t tg = tok0 + t;
            float4 v = make_float4 (0.f, 0.f, 0.f, 0.f);
            if (tg < n_tok)
              {
                const float *src = x + (size_t) tg * K + e0 + k4;
                if (k4 + 3 < valid && ((K & 3) == 0))
                  v = *(const float4 *) src;
                else
                  {
                    v.x = k4 < valid ? src[0] : 0.f;
                    v.y = k4 + 1 < valid ? src[1] : 0.f;
                    v.z = k4 + 2 < valid ? src[2] : 0.f;
                    v.w = k4 + 3 < valid ? src[3] : 0.f;
                  }
              }
            hzk_bf16 *d = sx + t * HZK_TQ_LD + k4;
            d[0] = hzk_f2bf (v.x);
            d[1] = hzk_f2bf (v.y);
            d[2] = hzk_f2bf (v.z);
            d[3] = hzk_f2bf (v.w);
          }
      __syncthreads ();
#if defined(HZK_TRAIN_WMMA_ARCH)
      if constexpr (MMA)
        {
          const int kend = (valid + 15) & ~15;
          for (int k = 0; k < kend; k += 16)
            {
              wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> b0, b1;
              wmma::load_matrix_sync (b0, (const __nv_bfloat16 *) (sw + (32 * wr) * HZK_TQ_LD + k), HZK_TQ_LD);
              wmma::load_matrix_sync (b1, (const __nv_bfloat16 *) (sw + (32 * wr + 16) * HZK_TQ_LD + k), HZK_TQ_LD);
              for (int i = 0; i < FT; i++)
                {
                  wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a;
                  wmma::load_matrix_sync (a, (const __nv_bfloat16 *) (sx + (16 * FT * wt + 16 * i) * HZK_TQ_LD + k),
                                          HZK_TQ_LD);
                  wmma::mma_sync (acc[i][0], a, b0, acc[i][0]);
                  wmma::mma_sync (acc[i][1], a, b1, acc[i][1]);
                }
            }
        }
#endif
      if constexpr (!MMA)
        for (int k = 0; k < valid; k++)
        {
          float xv[4], wv[4];
          for (int i = 0; i < 4; i++)
            xv[i] = hzk_bf2f (sx[(tid / 16 + 16 * i) * HZK_TQ_LD + k]);
          for (int j = 0; j < 4; j++)
            wv[j] = hzk_bf2f (sw[(tid % 16 + 16 * j) * HZK_TQ_LD + k]);
          for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++)
              facc[i][j] = fmaf (xv[i], wv[j], facc[i][j]);
        }
    }
#if defined(HZK_TRAIN_WMMA_ARCH)
  if constexpr (MMA)
    {
      float *st = stage + wp * 256;
      const int lane = tid % 32;
      for (int ff = 0; ff < 2 * FT; ff++)
        {
          const int i = ff / 2, f = ff % 2;
          wmma::store_matrix_sync (st, acc[i][f], 16, wmma::mem_row_major);
          __syncwarp ();
          for (int e = lane; e < 256; e += 32)
            {
              const int64_t t = tok0 + 16 * FT * wt + 16 * i + e / 16, r = row0 + 32 * wr + 16 * f + e % 16;
              if (t < n_tok && r < n_rows)
                {
                  float *o = y + (size_t) t * n_rows + r;
                  if (split)
                    atomicAdd (o, st[e]);
                  else
                    *o = accumulate ? *o + st[e] : st[e];
                }
            }
          __syncwarp ();
        }
    }
#endif
  if constexpr (!MMA)
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++)
      {
        const int64_t t = tok0 + tid / 16 + 16 * i, r = row0 + tid % 16 + 16 * j;
        if (t < n_tok && r < n_rows)
          {
            float *o = y + (size_t) t * n_rows + r;
            if (split)
              atomicAdd (o, facc[i][j]);
            else
              *o = accumulate ? *o + facc[i][j] : facc[i][j];
          }
      }
}

/* ---- backward: y[t][k] (+)= Σ_r x[t][r] W[r][k] -------------------------------------- */
template <int W, bool MMA>
__global__ void __launch_bounds__ (HZK_TQ_THREADS)
hzk_tq_bwd (const uint8_t *HZK_RESTRICT w, int64_t n_rows, int64_t K, const float *HZK_RESTRICT x,
            int64_t n_tok, float *HZK_RESTRICT y, int accumulate, int64_t rows_per)
{
  extern __shared__ __align__ (16) unsigned char hzk_tq_smem[];
  hzk_bf16 *sw = (hzk_bf16 *) hzk_tq_smem;                    /* [BR][LD] */
  hzk_bf16 *sx = sw + HZK_TQ_BR * HZK_TQ_LD;                  /* [BN][LDX] */
  float *stage = (float *) (sx + HZK_TQ_BN * HZK_TQ_LDX);     /* [8][16][16] */
  const int tid = threadIdx.x;
  const int64_t kt = blockIdx.x;
  const int64_t e0 = kt * HZK_TQ_KT;
  const int valid = (int) min ((int64_t) HZK_TQ_KT, K - e0);
  const int64_t tok0 = (int64_t) blockIdx.y * HZK_TQ_BN;
  /* split rows (gridDim.z > 1; rows_per a multiple of HZK_TQ_BR): this block's rows of W,
   * its partial sum added atomically */
  const int64_t r_beg = (int64_t) blockIdx.z * rows_per;
  const int64_t r_end = min (n_rows, r_beg + rows_per);
  const bool split = gridDim.z > 1;

#if defined(HZK_TRAIN_WMMA_ARCH)
  using namespace nvcuda;
  /* warp wp: tokens 16·(wp % 4).., columns 128·(wp / 4) .. +128 (eight fragments) */
  const int wp = tid / 32, wt = wp % 4, wc = wp / 4;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[8];
  if constexpr (MMA)
    for (int f = 0; f < 8; f++)
      wmma::fill_fragment (acc[f], 0.0f);
#endif
  /* fallback: thread: tokens tid / 64 + 4 i (16 of them), columns tid % 64 + 64 j (4) */
  float facc[16][4];
  if constexpr (!MMA)
    for (int i = 0; i < 16; i++)
      for (int j = 0; j < 4; j++)
        facc[i][j] = 0.0f;

  for (int64_t r0 = r_beg; r0 < r_end; r0 += HZK_TQ_BR)
    {
      const int nr = (int) min ((int64_t) HZK_TQ_BR, r_end - r0);
      __syncthreads ();
      hzk_tq_decode_tile<W> (w, n_rows, K, r0, HZK_TQ_BR, kt, sw, HZK_TQ_LD);
      for (int p = tid; p < HZK_TQ_BN * HZK_TQ_BR; p += HZK_TQ_THREADS)
        {
          const int t = p / HZK_TQ_BR, rl = p % HZK_TQ_BR;
          const int64_t tg = tok0 + t;
          const float v = tg < n_tok && rl < nr ? x[(size_t) tg * n_rows + r0 + rl] : 0.0f;
          sx[t * HZK_TQ_LDX + rl] = hzk_f2bf (v);
        }
      __syncthreads ();
#if defined(HZK_TRAIN_WMMA_ARCH)
      if constexpr (MMA)
        {
          for (int r = 0; r < HZK_TQ_BR; r += 16)
            {
              wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a;
              wmma::load_matrix_sync (a, (const __nv_bfloat16 *) (sx + 16 * wt * HZK_TQ_LDX + r), HZK_TQ_LDX);
              for (int f = 0; f < 8; f++)
                {
                  wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> b;
                  wmma::load_matrix_sync (b, (const __nv_bfloat16 *) (sw + r * HZK_TQ_LD + 128 * wc + 16 * f), HZK_TQ_LD);
                  wmma::mma_sync (acc[f], a, b, acc[f]);
                }
            }
        }
#endif
      if constexpr (!MMA)
        for (int r = 0; r < nr; r++)
          {
            float wv[4];
            for (int j = 0; j < 4; j++)
              wv[j] = hzk_bf2f (sw[r * HZK_TQ_LD + tid % 64 + 64 * j]);
            for (int i = 0; i < 16; i++)
              {
                const float xv = hzk_bf2f (sx[(tid / 64 + 4 * i) * HZK_TQ_LDX + r]);
                for (int j = 0; j < 4; j++)
                  facc[i][j] = fmaf (xv, wv[j], facc[i][j]);
              }
          }
    }
#if defined(HZK_TRAIN_WMMA_ARCH)
  if constexpr (MMA)
    {
      float *st = stage + wp * 256;
      const int lane = tid % 32;
      for (int f = 0; f < 8; f++)
        {
          wmma::store_matrix_sync (st, acc[f], 16, wmma::mem_row_major);
          __syncwarp ();
          for (int e = lane; e < 256; e += 32)
            {
              const int64_t t = tok0 + 16 * wt + e / 16;
              const int c = 128 * wc + 16 * f + e % 16;
              if (t < n_tok && c < valid)
                {
                  float *o = y + (size_t) t * K + e0 + c;
                  if (split)
                    atomicAdd (o, st[e]);
                  else
                    *o = accumulate ? *o + st[e] : st[e];
                }
            }
          __syncwarp ();
        }
    }
#endif
  if constexpr (!MMA)
    for (int i = 0; i < 16; i++)
      for (int j = 0; j < 4; j++)
        {
          const int64_t t = tok0 + tid / 64 + 4 * i;
          const int c = tid % 64 + 64 * j;
          if (t < n_tok && c < valid)
            {
              float *o = y + (size_t) t * K + e0 + c;
              if (split)
                atomicAdd (o, facc[i][j]);
              else
                *o = accumulate ? *o + facc[i][j] : facc[i][j];
            }
        }
}

static size_t
hzk_tq_smem_fwd (int bn)
{
  return (size_t) (HZK_TQ_BM + bn) * HZK_TQ_LD * sizeof (hzk_bf16) + 8 * 256 * sizeof (float);
}

static size_t
hzk_tq_smem_bwd (void)
{
  return (size_t) HZK_TQ_BR * HZK_TQ_LD * sizeof (hzk_bf16)
         + (size_t) HZK_TQ_BN * HZK_TQ_LDX * sizeof (hzk_bf16) + 8 * 256 * sizeof (float);
}

/** Tensor cores for the quantized training products: CUDA device of compute capability
 *  8.0 or newer unless HZ_GPU_TRAIN_MMA=0 (asked once). */
static bool
hzk_tq_use_mma (void)
{
#if defined(HZK_CUDA)
  static int use = -1;
  if (use < 0)
    {
      int dev = 0, major = 0;
      const char *e = getenv ("HZ_GPU_TRAIN_MMA");
      use = cudaGetDevice (&dev) == cudaSuccess
            && cudaDeviceGetAttribute (&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess
            && major >= 8 && !(e && strcmp (e, "0") == 0);
    }
  return use > 0;
#else
  return false;
#endif
}

template <typename F>
static int
hzk_tq_allow_smem (F *kernel, size_t bytes)
{
#if defined(HZK_CUDA)
  return (int) cudaFuncSetAttribute ((const void *) kernel,
                                     cudaFuncAttributeMaxDynamicSharedMemorySize, (int) bytes);
#else
  return (int) hipFuncSetAttribute ((const void *) kernel,
                                    hipFuncAttributeMaxDynamicSharedMemorySize, (int) bytes);
#endif
}

/* How many parts (1 .. max_parts, at most 16) to split the reduction of `blocks` tiles
 * into so that the blocks best fill whole waves of `wave` blocks; each further split must
 * raise the fill by a tenth (the atomic adds cost something too). */
static int64_t
hzk_tq_parts (int64_t blocks, int64_t max_parts, int64_t wave)
{
  int64_t best = 1;
  double best_fill = 0;
  for (int64_t p = 1; p <= max_parts && p <= 16; p++)
    {
      const int64_t n = blocks * p, waves = (n + wave - 1) / wave;
      const double fill = (double) n / (double) (waves * wave);
      if (p == 1 || fill > best_fill + 0.1)
        best = p, best_fill = fill;
    }
  return best;
}

template <int W, bool MMA>
static int
hzk_tq_launch (const void *w, int64_t n_rows, int64_t K, int trans, const float *x,
               const void *xb, int64_t n_tok, float *y, int accumulate, void *stream)
{
  const hipStream_t s = (hipStream_t) stream;
  /* Too few tiles to fill the device's waves (small batches, narrow W): split the
   * reduction over blocks (K tiles forward, rows of W backward) whose partial sums are added
   * atomically into y, zeroed first unless accumulating. A wave is taken as two blocks per
   * multiprocessor (the forward's ~110 KB of shared memory with tensor cores). */
  const int64_t n_sm = hzk_tr_n_sm ();
  int nsplit = 1;
  if (!trans)
    {
      constexpr int BN = MMA ? HZK_TQ_BN_MMA : HZK_TQ_BN;
      const size_t smem = hzk_tq_smem_fwd (BN);
      int err = hzk_tq_allow_smem (hzk_tq_fwd<W, MMA, BN>, smem);
      if (err)
        return err;
      const int64_t gx = (n_rows + HZK_TQ_BM - 1) / HZK_TQ_BM, gy = (n_tok + BN - 1) / BN;
      const int64_t n_tiles = (K + HZK_TQ_KT - 1) / HZK_TQ_KT;
      const int64_t parts = hzk_tq_parts (gx * gy, n_tiles, 2 * n_sm);
      const int64_t kt_per = (n_tiles + parts - 1) / parts;
      nsplit = (int) ((n_tiles + kt_per - 1) / kt_per);
      if (nsplit > 1 && !accumulate
          && (err = (int) hipMemsetAsync (y, 0, (size_t) n_tok * n_rows * sizeof (float), s)))
        return err;
      const dim3 grid ((unsigned) gx, (unsigned) gy, (unsigned) nsplit);
      hzk_tq_fwd<W, MMA, BN><<<grid, HZK_TQ_THREADS, smem, s>>> ((const uint8_t *) w, n_rows, K, x,
                                                                  (const hzk_bf16 *) xb, n_tok, y,
                                                                  accumulate, (int) kt_per);
    }
  else
    {
      const size_t smem = hzk_tq_smem_bwd ();
      int err = hzk_tq_allow_smem (hzk_tq_bwd<W, MMA>, smem);
      if (err)
        return err;
      const int64_t gx = (K + HZK_TQ_KT - 1) / HZK_TQ_KT, gy = (n_tok + HZK_TQ_BN - 1) / HZK_TQ_BN;
      const int64_t n_steps = (n_rows + HZK_TQ_BR - 1) / HZK_TQ_BR;
      const int64_t parts = hzk_tq_parts (gx * gy, n_steps, 2 * n_sm);
      const int64_t rows_per = (n_steps + parts - 1) / parts * HZK_TQ_BR;
      nsplit = (int) ((n_rows + rows_per - 1) / rows_per);
      if (nsplit > 1 && !accumulate
          && (err = (int) hipMemsetAsync (y, 0, (size_t) n_tok * K * sizeof (float), s)))
        return err;
      const dim3 grid ((unsigned) gx, (unsigned) gy, (unsigned) nsplit);
      hzk_tq_bwd<W, MMA><<<grid, HZK_TQ_THREADS, smem, s>>> ((const uint8_t *) w, n_rows, K, x,
                                                              n_tok, y, accumulate, rows_per);
    }
  return (int) hipGetLastError ();
}

template <int W>
static int
hzk_tq_entry (const void *w, int64_t n_rows, int64_t K, int trans, const float *x,
              const void *xb, int64_t n_tok, float *y, int accumulate, void *stream)
{
  if constexpr (qdw_traits<W>::available)
    {
      if (K % (qdw_traits<W>::is_float ? qdw_traits<W>::unit_elems : qdw_traits<W>::blk_elems))
        return (int) hipErrorInvalidValue;
      if (hzk_tq_use_mma ())
        return hzk_tq_launch<W, true> (w, n_rows, K, trans, x, xb, n_tok, y, accumulate, stream);
      return hzk_tq_launch<W, false> (w, n_rows, K, trans, x, xb, n_tok, y, accumulate, stream);
    }
  else
    return (int) hipErrorInvalidValue;
}

extern "C" int
hzk_train_qmm (uint32_t type, const void *w, int64_t n_rows, int64_t K, int trans,
               const float *x, const void *xb, int64_t n_tok, float *y, int accumulate, void *stream)
{
  if (n_rows < 1 || K < 1 || n_tok < 1)
    return (int) hipErrorInvalidValue;
  switch (type)
    {
#define HZ_QUANT(NAME, ...) \
    case HZ_TYPE_##NAME: return hzk_tq_entry<HZ_TYPE_##NAME> (w, n_rows, K, trans, x, xb, n_tok, y, accumulate, stream);
#include "formats.def"
#undef HZ_QUANT
    default: return (int) hipErrorInvalidValue;
    }
}

extern "C" int
hzk_train_qmm_available (uint32_t type)
{
  switch (type)
    {
#define HZ_QUANT(NAME, ...) case HZ_TYPE_##NAME: return qdw_traits<HZ_TYPE_##NAME>::available;
#include "formats.def"
#undef HZ_QUANT
    default: return 0;
    }
}

/* ---- strided batched fp32 product ---------------------------------------------------- */
/* Tiles of BM × BN outputs, 256 threads of 4 × 4, K steps of 16: 64 × 64, or 256 × 16 and
 * 16 × 256 for the LoRA factors' products (N or M = r <= 16), which a square tile would
 * leave three quarters empty. */
#define HZK_TG_BK 16

static __device__ __forceinline__ int64_t
hzk_tg_off (HzkTrainBatch b, int z)
{
  return (int64_t) (z / b.zdiv) * b.outer + (int64_t) ((z % b.zdiv) / b.gdiv) * b.inner;
}

/* One K step's BM × 16 tile of op(A) and 16 × BN tile of op(B) into registers: thread tid
 * takes elements p = tid + 256 i, consecutive threads along the contiguous dimension of
 * each operand; 0 outside the matrix or at k >= kend. */
template <int BM, int BN>
static __device__ __forceinline__ void
hzk_tg_load (int ta, int tb, int M, int N, const float *HZK_RESTRICT A, int64_t lda,
             const float *HZK_RESTRICT B, int64_t ldb, int m0, int n0, int k0, int kend,
             float ra[BM * HZK_TG_BK / 256], float rb[BN * HZK_TG_BK / 256])
{
  const int tid = threadIdx.x;
#pragma unroll
  for (int i = 0; i < BM * HZK_TG_BK / 256; i++)
    {
      const int p = tid + 256 * i;
      const int mm = ta ? p % BM : p / HZK_TG_BK, ka = ta ? p / BM : p % HZK_TG_BK;
      const int m = m0 + mm, k = k0 + ka;
      ra[i] = m < M && k < kend ? (ta ? A[(size_t) k * lda + m] : A[(size_t) m * lda + k]) : 0.0f;
    }
#pragma unroll
  for (int i = 0; i < BN * HZK_TG_BK / 256; i++)
    {
      const int p = tid + 256 * i;
      const int nn = tb ? p / HZK_TG_BK : p % BN, kb = tb ? p % HZK_TG_BK : p / BN;
      const int n = n0 + nn, k = k0 + kb;
      rb[i] = n < N && k < kend ? (tb ? B[(size_t) n * ldb + k] : B[(size_t) k * ldb + n]) : 0.0f;
    }
}

/* The registers of hzk_tg_load into the shared tiles sa[k][m], sb[k][n]. */
template <int BM, int BN>
static __device__ __forceinline__ void
hzk_tg_store (int ta, int tb, const float ra[BM * HZK_TG_BK / 256],
              const float rb[BN * HZK_TG_BK / 256], float (*sa)[BM + 4], float (*sb)[BN + 4])
{
  const int tid = threadIdx.x;
#pragma unroll
  for (int i = 0; i < BM * HZK_TG_BK / 256; i++)
    {
      const int p = tid + 256 * i;
      const int mm = ta ? p % BM : p / HZK_TG_BK, ka = ta ? p / BM : p % HZK_TG_BK;
      sa[ka][mm] = ra[i];
    }
#pragma unroll
  for (int i = 0; i < BN * HZK_TG_BK / 256; i++)
    {
      const int p = tid + 256 * i;
      const int nn = tb ? p / HZK_TG_BK : p % BN, kb = tb ? p % HZK_TG_BK : p / BN;
      sb[kb][nn] = rb[i];
    }
}

/* C = alpha · op(A) op(B) + beta · C for matrix z = blockIdx.z / ksplit over one BM × BN
 * tile; thread tid computes rows tm + (BM/4)·i and columns tn + (BN/4)·j (i, j < 4). The
 * next K step's tiles are loaded into registers while the current one is multiplied (two
 * shared buffers, one barrier a step). Blocks add alpha·partial to C atomically when
 * ksplit > 1 (block share blockIdx.z % ksplit of K) or `atomic` (several z share one C),
 * C having been scaled by beta before the launch. `causal` as hzk_train_gemm: 1 skips the
 * output tiles above the diagonal, 2 / 3 the K range where op(A) is zero (k > m / k < m). */
template <int BM, int BN>
__global__ void __launch_bounds__ (256)
hzk_tg_kernel (int ta, int tb, int M, int N, int K, float alpha, const float *HZK_RESTRICT A,
               int64_t lda, HzkTrainBatch ba, const float *HZK_RESTRICT B, int64_t ldb,
               HzkTrainBatch bb, float beta, float *HZK_RESTRICT C, int64_t ldc, HzkTrainBatch bc,
               int ksplit, int kchunk, int causal, int atomic)
{
  static_assert (BM * BN == 4096 && BM >= 16 && BN >= 16, "256 threads of 4 x 4");
  constexpr int TN = BN / 4, TM = BM / 4;
  __shared__ float sa[2][HZK_TG_BK][BM + 4];
  __shared__ float sb[2][HZK_TG_BK][BN + 4];
  const int z = blockIdx.z / ksplit, ks = blockIdx.z % ksplit, tid = threadIdx.x;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  if (causal == 1 && n0 > m0 + BM - 1)
    return;                                  /* every n > m: not wanted */
  int kbeg = ks * kchunk, kend = min (K, kbeg + kchunk);
  if (causal == 2)
    kend = min (kend, m0 + BM);              /* op(A)[m][k] = 0 for k > m */
  if (causal == 3)
    kbeg = max (kbeg, m0);                   /* op(A)[m][k] = 0 for k < m */
  const bool add = ksplit > 1 || atomic;
  if (add && kbeg >= kend)
    return;                                  /* nothing to add */
  A += hzk_tg_off (ba, z);
  B += hzk_tg_off (bb, z);
  C += hzk_tg_off (bc, z);
  const int tm = tid / TN, tn = tid % TN;
  float acc[4][4] = { { 0 } };
  float ra[BM * HZK_TG_BK / 256], rb[BN * HZK_TG_BK / 256];
  if (kbeg < kend)
    {
      hzk_tg_load<BM, BN> (ta, tb, M, N, A, lda, B, ldb, m0, n0, kbeg, kend, ra, rb);
      hzk_tg_store<BM, BN> (ta, tb, ra, rb, sa[0], sb[0]);
    }
  __syncthreads ();
  int buf = 0;
  for (int k0 = kbeg; k0 < kend; k0 += HZK_TG_BK, buf ^= 1)
    {
      const bool more = k0 + HZK_TG_BK < kend;
      if (more)
        hzk_tg_load<BM, BN> (ta, tb, M, N, A, lda, B, ldb, m0, n0, k0 + HZK_TG_BK, kend, ra, rb);
#pragma unroll
      for (int kk = 0; kk < HZK_TG_BK; kk++)
        {
          float av[4], bv[4];
          for (int i = 0; i < 4; i++)
            av[i] = sa[buf][kk][tm + TM * i];
          for (int j = 0; j < 4; j++)
            bv[j] = sb[buf][kk][tn + TN * j];
          for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++)
              acc[i][j] = fmaf (av[i], bv[j], acc[i][j]);
        }
      if (more)
        hzk_tg_store<BM, BN> (ta, tb, ra, rb, sa[buf ^ 1], sb[buf ^ 1]);
      __syncthreads ();
    }
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++)
      {
        const int m = m0 + tm + TM * i, n = n0 + tn + TN * j;
        if (m < M && n < N)
          {
            float *o = C + (size_t) m * ldc + n;
            if (add)
              atomicAdd (o, alpha * acc[i][j]);
            else
              *o = beta == 0.0f ? alpha * acc[i][j] : fmaf (beta, *o, alpha * acc[i][j]);
          }
      }
}

/* C_z[m][n] *= beta over M × N (ldc) for z = blockIdx.y, before a split-K product (beta 0
 * writes 0) */
__global__ void
hzk_tg_scale_c (float *C, int M, int N, int64_t ldc, HzkTrainBatch bc, float beta)
{
  const int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= (int64_t) M * N)
    return;
  float *o = C + hzk_tg_off (bc, (int) blockIdx.y) + (i / N) * ldc + i % N;
  *o = beta == 0.0f ? 0.0f : beta * *o;
}

template <int BM, int BN>
static int
hzk_tg_launch (int ta, int tb, int M, int N, int K, float alpha, const float *A, int64_t lda,
               HzkTrainBatch ba, const float *B, int64_t ldb, HzkTrainBatch bb, float beta,
               float *C, int64_t ldc, HzkTrainBatch bc, int batch, int causal, void *stream)
{
  const int gn = (N + BN - 1) / BN, gm = (M + BM - 1) / BM;
  const int atomic = bc.gdiv > 1;
  /* split K when the output tiles are too few to fill the device (about four blocks per
   * multiprocessor wanted), in chunks of at least 64 */
  const int64_t tiles = (int64_t) gn * gm * batch, want = 4 * (int64_t) hzk_tr_n_sm ();
  int ksplit = 1, kchunk = K > 0 ? K : 1;
  if (tiles < want && K >= 128)
    {
      const int64_t ks = want / tiles < K / 64 ? want / tiles : K / 64;
      ksplit = (int) (ks < 65535 / batch ? ks : 65535 / batch);
      ksplit = ksplit > 1 ? ksplit : 1;
      kchunk = ((K + ksplit - 1) / ksplit + HZK_TG_BK - 1) / HZK_TG_BK * HZK_TG_BK;
      ksplit = (K + kchunk - 1) / kchunk;
    }
  if ((ksplit > 1 || atomic) && beta != 1.0f)
    {
      const int64_t n = (int64_t) M * N;
      const dim3 sgrid ((unsigned) ((n + 255) / 256), (unsigned) batch);
      hzk_tg_scale_c<<<sgrid, 256, 0, (hipStream_t) stream>>> (C, M, N, ldc, bc, beta);
    }
  const dim3 grid ((unsigned) gn, (unsigned) gm, (unsigned) (batch * ksplit));
  hzk_tg_kernel<BM, BN><<<grid, 256, 0, (hipStream_t) stream>>> (ta, tb, M, N, K, alpha, A, lda,
                                                                 ba, B, ldb, bb, beta, C, ldc, bc,
                                                                 ksplit, kchunk, causal, atomic);
  return (int) hipGetLastError ();
}

extern "C" int
hzk_train_gemm (int ta, int tb, int M, int N, int K, float alpha, const float *A, int64_t lda,
                HzkTrainBatch ba, const float *B, int64_t ldb, HzkTrainBatch bb, float beta,
                float *C, int64_t ldc, HzkTrainBatch bc, int batch, int causal, void *stream)
{
  if (M < 1 || N < 1 || K < 0 || batch < 1 || ba.zdiv < 1 || bb.zdiv < 1 || bc.zdiv < 1
      || ba.gdiv < 1 || bb.gdiv < 1 || bc.gdiv < 1 || batch > 65535 || causal < 0 || causal > 3
      || (bc.gdiv > 1 && beta != 1.0f))
    return (int) hipErrorInvalidValue;
  if (N <= 16 && M > 16)
    return hzk_tg_launch<256, 16> (ta, tb, M, N, K, alpha, A, lda, ba, B, ldb, bb, beta, C, ldc,
                                   bc, batch, causal, stream);
  if (M <= 16 && N > 16)
    return hzk_tg_launch<16, 256> (ta, tb, M, N, K, alpha, A, lda, ba, B, ldb, bb, beta, C, ldc,
                                   bc, batch, causal, stream);
  return hzk_tg_launch<64, 64> (ta, tb, M, N, K, alpha, A, lda, ba, B, ldb, bb, beta, C, ldc, bc,
                                batch, causal, stream);
}

/* ---- row ops ------------------------------------------------------------------------- */
#define HZK_TR_THREADS 256

/** Sum of v over the block (all threads get it); red: HZK_TR_THREADS doubles. */
static __device__ __forceinline__ double
hzk_tr_sum (double v, double *red)
{
  const int tid = threadIdx.x;
  __syncthreads ();
  red[tid] = v;
  __syncthreads ();
  for (int s = HZK_TR_THREADS / 2; s > 0; s >>= 1)
    {
      if (tid < s)
        red[tid] += red[tid + s];
      __syncthreads ();
    }
  return red[0];
}

static __device__ __forceinline__ float
hzk_tr_max (float v, float *red)
{
  const int tid = threadIdx.x;
  __syncthreads ();
  red[tid] = v;
  __syncthreads ();
  for (int s = HZK_TR_THREADS / 2; s > 0; s >>= 1)
    {
      if (tid < s)
        red[tid] = fmaxf (red[tid], red[tid + s]);
      __syncthreads ();
    }
  return red[0];
}

__global__ void __launch_bounds__ (HZK_TR_THREADS)
hzk_tr_rmsnorm_fwd (float *y, float *rstd, const float *x, const float *w, int d, float eps)
{
  __shared__ double red[HZK_TR_THREADS];
  const int64_t row = blockIdx.x;
  const float *xr = x + row * d;
  double ss = 0;
  for (int j = threadIdx.x; j < d; j += HZK_TR_THREADS)
    ss += (double) xr[j] * xr[j];
  ss = hzk_tr_sum (ss, red);
  const float r = (float) (1.0 / sqrt (ss / d + (double) eps));
  if (threadIdx.x == 0)
    rstd[row] = r;
  for (int j = threadIdx.x; j < d; j += HZK_TR_THREADS)
    y[row * d + j] = xr[j] * r * (w ? w[j] : 1.0f);
}

__global__ void __launch_bounds__ (HZK_TR_THREADS)
hzk_tr_rmsnorm_bwd (float *dx, const float *dy, const float *x, const float *w,
                    const float *rstd, int d)
{
  __shared__ double red[HZK_TR_THREADS];
  const int64_t row = blockIdx.x;
  const float *xr = x + row * d, *dyr = dy + row * d;
  double s = 0;
  for (int j = threadIdx.x; j < d; j += HZK_TR_THREADS)
    s += (double) dyr[j] * (w ? w[j] : 1.0f) * xr[j];
  s = hzk_tr_sum (s, red);
  const float r = rstd[row];
  const float c = (float) ((double) r * r * r / d * s);
  for (int j = threadIdx.x; j < d; j += HZK_TR_THREADS)
    dx[row * d + j] += r * dyr[j] * (w ? w[j] : 1.0f) - c * xr[j];
}

extern "C" int
hzk_train_rmsnorm_fwd (float *y, float *rstd, const float *x, const float *w, int64_t rows,
                       int d, float eps, void *stream)
{
  if (rows < 1 || d < 1)
    return (int) hipErrorInvalidValue;
  hzk_tr_rmsnorm_fwd<<<(unsigned) rows, HZK_TR_THREADS, 0, (hipStream_t) stream>>> (y, rstd, x, w, d, eps);
  return (int) hipGetLastError ();
}

extern "C" int
hzk_train_rmsnorm_bwd (float *dx, const float *dy, const float *x, const float *w,
                       const float *rstd, int64_t rows, int d, void *stream)
{
  if (rows < 1 || d < 1)
    return (int) hipErrorInvalidValue;
  hzk_tr_rmsnorm_bwd<<<(unsigned) rows, HZK_TR_THREADS, 0, (hipStream_t) stream>>> (dx, dy, x, w, rstd, d);
  return (int) hipGetLastError ();
}

/* one thread per rotated pair */
__global__ void
hzk_tr_rope (float *x, const float *cs, int64_t n_pairs, int T, int n_heads, int hd, int n_rot,
             int neox, int transpose)
{
  const int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
  const int half = n_rot / 2;
  if (i >= n_pairs)
    return;
  const int p = (int) (i % half);
  const int64_t rh = i / half;                  /* row · n_heads + head */
  const int64_t row = rh / n_heads;
  const int pos = (int) (row % T);
  float *h = x + rh * hd;
  const float c = cs[(int64_t) pos * n_rot + 2 * p], s0 = cs[(int64_t) pos * n_rot + 2 * p + 1];
  const float s = transpose ? -s0 : s0;
  const int a = neox ? p : 2 * p, b = neox ? p + half : 2 * p + 1;
  const float x0 = h[a], x1 = h[b];
  h[a] = x0 * c - x1 * s;
  h[b] = x0 * s + x1 * c;
}

extern "C" int
hzk_train_rope (float *x, const float *cs, int64_t rows, int T, int n_heads, int hd, int n_rot,
                int neox, int transpose, void *stream)
{
  if (rows < 1 || T < 1 || n_rot < 2 || n_rot > hd)
    return (int) hipErrorInvalidValue;
  const int64_t n = rows * n_heads * (n_rot / 2);
  hzk_tr_rope<<<(unsigned) ((n + 255) / 256), 256, 0, (hipStream_t) stream>>> (x, cs, n, T, n_heads, hd,
                                                                              n_rot, neox, transpose);
  return (int) hipGetLastError ();
}

/* row (matrix z, query t) of S [n_mat][T][T]: P = softmax over s ≤ t of scale·S, 0 beyond */
__global__ void __launch_bounds__ (HZK_TR_THREADS)
hzk_tr_softmax_causal (float *S, int T, float scale)
{
  __shared__ double red[HZK_TR_THREADS];
  __shared__ float redf[HZK_TR_THREADS];
  const int64_t row = blockIdx.x;
  const int t = (int) (row % T);
  float *r = S + row * T;
  float mx = -INFINITY;
  for (int s = threadIdx.x; s <= t; s += HZK_TR_THREADS)
    mx = fmaxf (mx, scale * r[s]);
  mx = hzk_tr_max (mx, redf);
  double sum = 0;
  for (int s = threadIdx.x; s <= t; s += HZK_TR_THREADS)
    sum += exp ((double) (scale * r[s] - mx));
  sum = hzk_tr_sum (sum, red);
  const float inv = (float) (1.0 / sum);
  for (int s = threadIdx.x; s < T; s += HZK_TR_THREADS)
    r[s] = s <= t ? expf (scale * r[s] - mx) * inv : 0.0f;
}

extern "C" int
hzk_train_softmax_causal (float *S, int64_t n_mat, int T, float scale, void *stream)
{
  if (n_mat < 1 || T < 1)
    return (int) hipErrorInvalidValue;
  hzk_tr_softmax_causal<<<(unsigned) (n_mat * T), HZK_TR_THREADS, 0, (hipStream_t) stream>>> (S, T, scale);
  return (int) hipGetLastError ();
}

/* dS = P · (dP − Σ_s P·dP) in place over dP */
__global__ void __launch_bounds__ (HZK_TR_THREADS)
hzk_tr_softmax_bwd (float *dP, const float *P, int T)
{
  __shared__ double red[HZK_TR_THREADS];
  const int64_t row = blockIdx.x;
  const int t = (int) (row % T);
  float *d = dP + row * T;
  const float *p = P + row * T;
  double s = 0;
  for (int j = threadIdx.x; j <= t; j += HZK_TR_THREADS)
    s += (double) p[j] * d[j];
  s = hzk_tr_sum (s, red);
  for (int j = threadIdx.x; j < T; j += HZK_TR_THREADS)
    d[j] = j <= t ? p[j] * (d[j] - (float) s) : 0.0f;
}

extern "C" int
hzk_train_softmax_bwd (float *dP, const float *P, int64_t n_mat, int T, void *stream)
{
  if (n_mat < 1 || T < 1)
    return (int) hipErrorInvalidValue;
  hzk_tr_softmax_bwd<<<(unsigned) (n_mat * T), HZK_TR_THREADS, 0, (hipStream_t) stream>>> (dP, P, T);
  return (int) hipGetLastError ();
}

/* ---- elementwise --------------------------------------------------------------------- */
#define HZK_EW_GRID(n) (unsigned) (((n) + 255) / 256), 256

__global__ void
hzk_tr_swiglu_fwd (float *h, const float *g, const float *u, int64_t n)
{
  const int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    h[i] = g[i] / (1.0f + expf (-g[i])) * u[i];
}

__global__ void
hzk_tr_swiglu_bwd (float *dg, float *du, const float *dh, const float *g, const float *u, int64_t n)
{
  const int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  const float s = 1.0f / (1.0f + expf (-g[i]));
  dg[i] += dh[i] * u[i] * s * (1.0f + g[i] * (1.0f - s));
  du[i] += dh[i] * g[i] * s;
}

__global__ void
hzk_tr_axpy (float *y, const float *x, float a, int64_t n)
{
  const int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] += a * x[i];
}

__global__ void
hzk_tr_add_bias (float *y, const float *b, int64_t rows, int64_t n)
{
  const int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
  if (i < rows * n)
    y[i] += b[i % n];
}

__global__ void
hzk_tr_to_bf16 (hzk_bf16 *xb, const float *x, int64_t n)
{
  const int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    xb[i] = hzk_f2bf (x[i]);
}

extern "C" int
hzk_train_to_bf16 (void *xb, const float *x, int64_t n, void *stream)
{
  if (n < 1)
    return (int) hipErrorInvalidValue;
  hzk_tr_to_bf16<<<HZK_EW_GRID (n), 0, (hipStream_t) stream>>> ((hzk_bf16 *) xb, x, n);
  return (int) hipGetLastError ();
}

extern "C" int
hzk_train_swiglu_fwd (float *h, const float *g, const float *u, int64_t n, void *stream)
{
  if (n < 1)
    return (int) hipErrorInvalidValue;
  hzk_tr_swiglu_fwd<<<HZK_EW_GRID (n), 0, (hipStream_t) stream>>> (h, g, u, n);
  return (int) hipGetLastError ();
}

extern "C" int
hzk_train_swiglu_bwd (float *dg, float *du, const float *dh, const float *g, const float *u,
                      int64_t n, void *stream)
{
  if (n < 1)
    return (int) hipErrorInvalidValue;
  hzk_tr_swiglu_bwd<<<HZK_EW_GRID (n), 0, (hipStream_t) stream>>> (dg, du, dh, g, u, n);
  return (int) hipGetLastError ();
}

extern "C" int
hzk_train_axpy (float *y, const float *x, float a, int64_t n, void *stream)
{
  if (n < 1)
    return (int) hipErrorInvalidValue;
  hzk_tr_axpy<<<HZK_EW_GRID (n), 0, (hipStream_t) stream>>> (y, x, a, n);
  return (int) hipGetLastError ();
}

extern "C" int
hzk_train_add_bias (float *y, const float *b, int64_t rows, int64_t n, void *stream)
{
  if (rows < 1 || n < 1)
    return (int) hipErrorInvalidValue;
  hzk_tr_add_bias<<<HZK_EW_GRID (rows * n), 0, (hipStream_t) stream>>> (y, b, rows, n);
  return (int) hipGetLastError ();
}

/* ---- cross-entropy ------------------------------------------------------------------- */
__global__ void __launch_bounds__ (HZK_TR_THREADS)
hzk_tr_cross_entropy (float *logits, const int32_t *targets, int64_t V, double weight,
                      double *loss, int grad)
{
  __shared__ double red[HZK_TR_THREADS];
  __shared__ float redf[HZK_TR_THREADS];
  const int64_t row = blockIdx.x;
  float *l = logits + row * V;
  const int32_t y = targets[row];
  if (y < 0 || y >= V)
    {
      if (threadIdx.x == 0)
        loss[row] = 0.0;
      if (grad)
        for (int64_t j = threadIdx.x; j < V; j += HZK_TR_THREADS)
          l[j] = 0.0f;
      return;
    }
  float mx = -INFINITY;
  for (int64_t j = threadIdx.x; j < V; j += HZK_TR_THREADS)
    mx = fmaxf (mx, l[j]);
  mx = hzk_tr_max (mx, redf);
  double s = 0;
  for (int64_t j = threadIdx.x; j < V; j += HZK_TR_THREADS)
    s += exp ((double) l[j] - mx);
  s = hzk_tr_sum (s, red);
  const double lse = mx + log (s);
  const float ly = l[y];
  __syncthreads ();          /* every thread has read l[y] before the gradient overwrites it */
  if (threadIdx.x == 0)
    loss[row] = lse - ly;
  if (grad)
    for (int64_t j = threadIdx.x; j < V; j += HZK_TR_THREADS)
      l[j] = (float) (weight * (exp ((double) l[j] - lse) - (j == y ? 1.0 : 0.0)));
}

extern "C" int
hzk_train_cross_entropy (float *logits, const int32_t *targets, int64_t rows, int64_t V,
                         double weight, double *loss, int grad, void *stream)
{
  if (rows < 1 || V < 1)
    return (int) hipErrorInvalidValue;
  hzk_tr_cross_entropy<<<(unsigned) rows, HZK_TR_THREADS, 0, (hipStream_t) stream>>> (
      logits, targets, V, weight, loss, grad);
  return (int) hipGetLastError ();
}

/* ---- optimiser ----------------------------------------------------------------------- */
__global__ void
hzk_tr_adamw (float *p, const float *g, float *m, float *v, int64_t n, double lr, double b1,
              double b2, double eps, double wd, double bc1, double bc2)
{
  const int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  double pi = p[i];
  const double gi = g[i];
  pi *= 1.0 - lr * wd;
  const float mi = (float) (b1 * m[i] + (1.0 - b1) * gi);
  const float vi = (float) (b2 * v[i] + (1.0 - b2) * gi * gi);
  m[i] = mi;
  v[i] = vi;
  pi -= (lr / bc1) * mi / (sqrt ((double) vi) / sqrt (bc2) + eps);
  p[i] = (float) pi;
}

extern "C" int
hzk_train_adamw (float *p, const float *g, float *m, float *v, int64_t n, double lr,
                 double beta1, double beta2, double eps, double weight_decay, int64_t step,
                 void *stream)
{
  if (n < 1 || step < 1)
    return (int) hipErrorInvalidValue;
  const double bc1 = 1.0 - pow (beta1, (double) step), bc2 = 1.0 - pow (beta2, (double) step);
  hzk_tr_adamw<<<HZK_EW_GRID (n), 0, (hipStream_t) stream>>> (p, g, m, v, n, lr, beta1, beta2, eps,
                                                               weight_decay, bc1, bc2);
  return (int) hipGetLastError ();
}

/* Σ x² per block into partial[blockIdx.x] (fixed order: deterministic) */
__global__ void __launch_bounds__ (HZK_TR_THREADS)
hzk_tr_sumsq (const float *x, int64_t n, double *partial)
{
  __shared__ double red[HZK_TR_THREADS];
  double s = 0;
  for (int64_t i = (int64_t) blockIdx.x * HZK_TR_THREADS + threadIdx.x; i < n;
       i += (int64_t) gridDim.x * HZK_TR_THREADS)
    s += (double) x[i] * x[i];
  s = hzk_tr_sum (s, red);
  if (threadIdx.x == 0)
    partial[blockIdx.x] = s;
}

extern "C" int
hzk_train_sumsq (const float *x, int64_t n, double *partial, void *stream)
{
  if (n < 1)
    return (int) hipErrorInvalidValue;
  hzk_tr_sumsq<<<HZK_TRAIN_SUMSQ_BLOCKS, HZK_TR_THREADS, 0, (hipStream_t) stream>>> (x, n, partial);
  return (int) hipGetLastError ();
}

__global__ void
hzk_tr_scale (float *x, int64_t n, float s)
{
  const int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= s;
}

extern "C" int
hzk_train_scale (float *x, int64_t n, float s, void *stream)
{
  if (n < 1)
    return (int) hipErrorInvalidValue;
  hzk_tr_scale<<<HZK_EW_GRID (n), 0, (hipStream_t) stream>>> (x, n, s);
  return (int) hipGetLastError ();
}

extern "C" int
hzk_train_host_register (void *p, size_t bytes)
{
  if (p == NULL || bytes == 0)
    return (int) hipErrorInvalidValue;
#if defined(HZK_CUDA)
  const int err = (int) cudaHostRegister (p, bytes, cudaHostRegisterDefault);
#else
  const int err = (int) hipHostRegister (p, bytes, hipHostRegisterDefault);
#endif
  if (err)
    (void) hipGetLastError ();      /* not sticky: clear it for the next launch's check */
  return err;
}

extern "C" int
hzk_train_host_unregister (void *p)
{
#if defined(HZK_CUDA)
  const int err = (int) cudaHostUnregister (p);
#else
  const int err = (int) hipHostUnregister (p);
#endif
  if (err)
    (void) hipGetLastError ();
  return err;
}

extern "C" int
hzk_train_mem_used (size_t *used)
{
  size_t free_b = 0, total = 0;
  const int err = (int) hipMemGetInfo (&free_b, &total);
  *used = err ? 0 : total - free_b;
  return err;
}
