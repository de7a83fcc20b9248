/* kernels/qmatvec-core.h — the decode matvec's body, qmatvec_core<W, B, C>, and its launch
 * geometry (hzk_cfg, hzk_launch), shared by kernels/qmatvec.hip (the dispatch table) and
 * kernels/moe.hip (routed experts: the same body on an expert's weights). The design is
 * described at the top of kernels/qmatvec.hip.
 */
#pragma once

#include "qdec.h"

#include <type_traits>

#define HZK_THREADS 128

/** Launch geometry of qmatvec_core: TPR threads per row group (a power of two, at most
 *  HZK_THREADS), ROWS rows per group, UNR units loaded per thread before any is decoded. */
template <int TPR_, int ROWS_, int UNR_> struct hzk_cfg {
  static constexpr int TPR = TPR_, ROWS = ROWS_, UNR = UNR_, G = HZK_THREADS / TPR_;
};

/** The default geometry of format W, from the variant sweep on an H200
 *  (bench-qmatvec --variants, docs/PERFORMANCE.md): one 32-lane row group per warp (a
 *  warp-only reduction), 2 rows, 2 units in flight per row — except the 16-byte-unit
 *  K-quants (Q2_K, Q4_K: 4+ units share one block's scales), which do best with 4 rows
 *  sharing each activation load; Q5_K (80-byte units) one unit; float formats as the first
 *  slice (at the wall already). */
template <int W> struct hzk_launch {
  using T = qdw_traits<W>;
  using type = typename std::conditional<
      T::is_float, hzk_cfg<(T::unit_bytes >= 64 ? 32 : 128), 2, 2>,
      typename std::conditional<
          T::chunks == 1 && T::units_per_block >= 4, hzk_cfg<32, 4, 2>,
          typename std::conditional<T::chunks <= 3, hzk_cfg<32, 2, 2>, hzk_cfg<32, 2, 1>>::type>::type>::type;
};

/* ---- the core ---------------------------------------------------------------------- */
/** The rows of block `blk` of the launch described above (the body of qmatvec_core; the
 *  MoE kernels of kernels/moe.hip call it with an expert's weights). All HZK_THREADS
 *  threads of the block must call it (it synchronises them). */
template <int W, int B, class C>
static __device__ __forceinline__ void
qmatvec_rows (const uint8_t *HZK_RESTRICT w, int64_t n_rows, int64_t K,
              const int8_t *HZK_RESTRICT aq, const float2 *HZK_RESTRICT am,
              const float *HZK_RESTRICT x, float *HZK_RESTRICT y, int64_t blk)
{
  using T = qdw_traits<W>;
  constexpr int TPR = C::TPR, G = C::G, ROWS = C::ROWS, UNR = C::UNR, CH = T::chunks;

  const int tid = threadIdx.x, grp = tid / TPR, t = tid % TPR;
  const int64_t row0 = (blk * G + grp) * ROWS;
  const int64_t nu = K / T::unit_elems;
  const size_t row_bytes = (size_t) nu * T::unit_bytes;

  const uint8_t *P[ROWS];
  int64_t rr[ROWS];
  for (int r = 0; r < ROWS; r++)
    {
      rr[r] = row0 + r < n_rows ? row0 + r : n_rows - 1;   /* tail: recompute, not stored */
      P[r] = w + (size_t) rr[r] * row_bytes;
    }

  float acc[ROWS][B];
  for (int r = 0; r < ROWS; r++)
    for (int c = 0; c < B; c++)
      acc[r][c] = 0.0f;

  for (int64_t u0 = t; u0 < nu; u0 += (int64_t) TPR * UNR)
    {
      uint4 q[UNR][ROWS][CH];
#pragma unroll
      for (int k = 0; k < UNR; k++)
        {
          const int64_t u = u0 + (int64_t) k * TPR;
          if (u < nu)
            for (int r = 0; r < ROWS; r++)
              {
                for (int c = 0; c < CH; c++)
                  q[k][r][c] = hzk_ld_stream ((const uint4 *) (P[r] + ((size_t) c * nu + u) * 16));
                if constexpr (!T::is_float && T::meta_bytes >= 16)
                  hzk_prefetch (w + hzk_align256 ((size_t) n_rows * row_bytes)
                                + (size_t) (rr[r] * (K / T::blk_elems) + u / T::units_per_block)
                                      * T::meta_bytes);
              }
        }
#pragma unroll
      for (int k = 0; k < UNR; k++)
        {
          const int64_t u = u0 + (int64_t) k * TPR;
          if (u >= nu)
            break;
          if constexpr (T::is_float)
            {
              constexpr int UE = T::unit_elems;
              float wv[ROWS][UE];
              for (int r = 0; r < ROWS; r++)
                qdec<W>::decode_f (q[k][r], wv[r]);
              const int64_t e = u * UE;
              for (int c = 0; c < B; c++)
                {
                  const float4 *xp = (const float4 *) (x + (size_t) c * K + e);
                  for (int j = 0; j < UE / 4; j++)
                    {
                      const float4 xv = hzk_ld_cached (xp + j);
                      for (int r = 0; r < ROWS; r++)
                        {
                          acc[r][c] = fmaf (wv[r][4 * j + 0], xv.x, acc[r][c]);
                          acc[r][c] = fmaf (wv[r][4 * j + 1], xv.y, acc[r][c]);
                          acc[r][c] = fmaf (wv[r][4 * j + 2], xv.z, acc[r][c]);
                          acc[r][c] = fmaf (wv[r][4 * j + 3], xv.w, acc[r][c]);
                        }
                    }
                }
            }
          else
            {
              constexpr int RUNS = qdec<W>::runs;
              const int64_t nb = K / T::blk_elems;
              const int64_t b = u / T::units_per_block;
              const int ub = (int) (u % T::units_per_block);
              const uint8_t *M = w + hzk_align256 ((size_t) n_rows * row_bytes);
              int v[ROWS][RUNS][4];
              float d[ROWS][RUNS], m[ROWS][RUNS];
              int off[RUNS];
              for (int r = 0; r < ROWS; r++)
                qdec<W>::decode (q[k][r], M + (size_t) (rr[r] * nb + b) * T::meta_bytes, ub, v[r],
                                 d[r], m[r], off);
              const int64_t e0 = b * T::blk_elems;
              for (int c = 0; c < B; c++)
                for (int j = 0; j < RUNS; j++)
                  {
                    const int64_t e = (int64_t) c * K + e0 + off[j];
                    const int4 a = hzk_ld_cached ((const int4 *) (aq + e));
                    const float2 s = hzk_ld_cached (am + e / 16);
                    for (int r = 0; r < ROWS; r++)
                      {
                        int sumi = hzk_dp4a (v[r][j][0], a.x, 0);
                        sumi = hzk_dp4a (v[r][j][1], a.y, sumi);
                        sumi = hzk_dp4a (v[r][j][2], a.z, sumi);
                        sumi = hzk_dp4a (v[r][j][3], a.w, sumi);
                        acc[r][c] = fmaf (d[r][j] * s.x, (float) sumi, acc[r][c]);
                        if constexpr (!T::symmetric)
                          acc[r][c] = fmaf (m[r][j], s.y, acc[r][c]);
                      }
                  }
            }
        }
    }

  /* reduction: segments of min(TPR, warp) lanes, then across the segments of a group */
  constexpr int NSEG_MAX = HZK_THREADS / 32;
  __shared__ float red[NSEG_MAX][ROWS * B];
  const int seg = TPR < warpSize ? TPR : warpSize;
  for (int r = 0; r < ROWS; r++)
    for (int c = 0; c < B; c++)
      {
        const float s = hzk_segment_sum (acc[r][c], seg);
        if (tid % seg == 0)
          red[tid / seg][r * B + c] = s;
      }
  __syncthreads ();
  if (tid < G * ROWS * B)
    {
      const int g = tid / (ROWS * B), i = tid % (ROWS * B), r = i / B, c = i % B;
      const int spg = TPR / seg;
      float s = 0.0f;
      for (int j = 0; j < spg; j++)
        s += red[g * spg + j][i];
      const int64_t row = (blk * G + g) * ROWS + r;
      if (row < n_rows)
        y[(size_t) c * n_rows + row] = s;
    }
}

/** Pull the weight rows of block `blk` (contiguous payload, then their meta bytes) into L2:
 *  weights need no earlier kernel, so a dependent launch (gpu_compat.h) may do this before
 *  hzk_dep_wait, while the kernels before it still run (qmatvec_core with PF, opt-in:
 *  HZ_GPU_PREFETCH=1; measured slower for the dense 7B shapes, docs/PERFORMANCE.md).
 *  NVIDIA sm_90+ only (elsewhere a no-op: no dependent launches there). */
template <int W, class C>
static __device__ __forceinline__ void
hzk_prefetch_rows (const uint8_t *w, int64_t n_rows, int64_t K, int64_t blk)
{
#if defined(HZK_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using T = qdw_traits<W>;
  const int64_t r0 = blk * C::G * C::ROWS;
  const int64_t nr = n_rows - r0 < C::G * C::ROWS ? n_rows - r0 : C::G * C::ROWS;
  const size_t row_bytes = (size_t) (K / T::unit_elems) * T::unit_bytes;
  const uint8_t *p = w + (size_t) r0 * row_bytes;
  for (size_t o = (size_t) threadIdx.x * 128; o < (size_t) nr * row_bytes; o += HZK_THREADS * 128)
    hzk_prefetch_l2 (p + o);
  if constexpr (!T::is_float)
    {
      const size_t mrow = (size_t) (K / T::blk_elems) * T::meta_bytes;
      const uint8_t *m = w + hzk_align256 ((size_t) n_rows * row_bytes) + (size_t) r0 * mrow;
      for (size_t o = (size_t) threadIdx.x * 128; o < (size_t) nr * mrow; o += HZK_THREADS * 128)
        hzk_prefetch_l2 (m + o);
    }
#else
  (void) w, (void) n_rows, (void) K, (void) blk;
#endif
}

/** PF: prefetch the block's weight rows into L2 before hzk_dep_wait (hzk_prefetch_rows;
 *  the launcher's choice, hzk_weight_prefetch). */
template <int W, int B, class C, bool PF = false>
__global__ void __launch_bounds__ (HZK_THREADS)
qmatvec_core (const uint8_t *HZK_RESTRICT w, int64_t n_rows, int64_t K,
              const int8_t *HZK_RESTRICT aq, const float2 *HZK_RESTRICT am,
              const float *HZK_RESTRICT x, float *HZK_RESTRICT y)
{
  if constexpr (PF)
    hzk_prefetch_rows<W, C> (w, n_rows, K, blockIdx.x);
  hzk_dep_begin ();
  qmatvec_rows<W, B, C> (w, n_rows, K, aq, am, x, y, blockIdx.x);
}
