/* kernels/qmmq-core.h — the prefill matmul's bodies qmmq_tile<W, MMA> (integer formats) and
 * qmmf_tile<W> (float formats) with their kernels qmmq_core / qmmf_core, shared by
 * kernels/qmmq.hip (the dispatch table's matmul column) and kernels/moe.hip (grouped
 * expert products). The design is described at the top of kernels/qmmq.hip.
 */
#pragma once

#include "qdec.h"


#define HZK_MM_THREADS 128
#define HZK_MM_BM 64                      /* weight rows per block */
#define HZK_MM_BN 32                      /* tokens per block */
#define HZK_MM_TM 4                       /* rows per thread (tid % 16 + 16 i) */
#define HZK_MM_TN 4                       /* tokens per thread (tid / 16 + 8 j) */
#define HZK_MM_KT 256                     /* elements per K tile, integer formats */
#define HZK_MM_RUNS (HZK_MM_KT / 16)
#define HZK_MM_KTF 64                     /* elements per K tile, float formats */

static_assert (HZK_MM_BM == 16 * HZK_MM_TM && HZK_MM_BN == 8 * HZK_MM_TN
               && HZK_MM_THREADS == 128, "thread tile mapping");

/* ---- integer formats ------------------------------------------------------------------ */
/** One int8 tensor-core product C[16 rows][8 tokens] = A[16][16] · B[16][8] (PTX
 *  mma.sync m16n8k16 .s8, sm_80+): a0/a1 = A rows g and g+8, bytes 4·tig..+3; b = B
 *  column (token) g, k 4·tig..+3; c0,c1 = C[g][2·tig, +1], c2,c3 = C[g+8][2·tig, +1]
 *  (g = lane / 4, tig = lane % 4). */
static __device__ __forceinline__ void
hzk_mma_s8_16816 (int a0, int a1, int b, int c[4])
{
#if defined(HZK_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile ("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
                "{%7,%8,%9,%10};"
                : "=r"(c[0]), "=r"(c[1]), "=r"(c[2]), "=r"(c[3])
                : "r"(a0), "r"(a1), "r"(b), "r"(0), "r"(0), "r"(0), "r"(0));
#else
  c[0] = c[1] = c[2] = c[3] = 0;     /* never launched: hzk_mm_use_mma() is false there */
#endif
}

/** As hzk_mma_s8_16816 with k = 32 (mma.sync m16n8k32 .s8): a0/a1 = rows g, g+8 at bytes
 *  4·tig..+3 of k 0..15, a2/a3 the same of k 16..31; b0/b1 = token g at k 4·tig..+3 and
 *  16 + 4·tig..+3. */
static __device__ __forceinline__ void
hzk_mma_s8_16832 (int a0, int a1, int a2, int a3, int b0, int b1, int c[4])
{
#if defined(HZK_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile ("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                "{%8,%9}, {%10,%11,%12,%13};"
                : "=r"(c[0]), "=r"(c[1]), "=r"(c[2]), "=r"(c[3])
                : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "r"(0), "r"(0), "r"(0),
                  "r"(0));
#else
  c[0] = c[1] = c[2] = c[3] = 0;     /* never launched: hzk_mm_use_mma() is false there */
#endif
}

/** Tile (bx, by) of the product described above: rows 64·bx.., tokens 32·by.. of n_tok.
 *  Token t's activations are row tok_row[t] of aq/am (tok_row NULL: row t), its output
 *  row t of y. The body of qmmq_core; kernels/moe.hip runs it on an expert's weights and
 *  the tokens routed to it. All HZK_MM_THREADS threads of the block must call it. */
template <int W, bool MMA>
static __device__ __forceinline__ void
qmmq_tile (const uint8_t *HZK_RESTRICT w, int64_t n_rows, int64_t K, int n_tok,
           const int *HZK_RESTRICT tok_row, const int8_t *HZK_RESTRICT aq,
           const float2 *HZK_RESTRICT am, float *HZK_RESTRICT y, int64_t ldy, int64_t bx, int by)
{
  using T = qdw_traits<W>;
  using D = qdec<W>;
  constexpr int CH = T::chunks, RUNS = D::runs;
  constexpr int UT = HZK_MM_KT / T::unit_elems;        /* units per K tile */
  constexpr int BPT = HZK_MM_KT / T::blk_elems;        /* blocks per K tile */
  static_assert (HZK_MM_KT % T::blk_elems == 0, "a K tile holds whole blocks");
  /* scales per 32 elements or coarser: two runs share (d, m), the tensor-core path takes
   * them in one k32 product (Q6_K, Q2_K: per 16, k16 products) */
  constexpr bool K32 = hzk_fmt<W>::block_elems / D::scale_slots >= 32;

  __shared__ int4 sw[HZK_MM_BM][HZK_MM_RUNS + 1];       /* v of run j of row r */
  __shared__ float2 sdm[HZK_MM_BM][HZK_MM_RUNS + 1];    /* (d, m) of run j of row r */
  __shared__ int4 sa[HZK_MM_BN][HZK_MM_RUNS + 1];       /* q_a of run j of token t */
  __shared__ float2 sam[HZK_MM_BN][HZK_MM_RUNS + 1];    /* (d_a, s_a) */

  const int tid = threadIdx.x, tr = tid % 16, tc = tid / 16;
  const int64_t row0 = bx * HZK_MM_BM;
  const int tok0 = by * HZK_MM_BN;
  const int64_t nu = K / T::unit_elems, nb = K / T::blk_elems;
  const size_t row_bytes = (size_t) nu * T::unit_bytes;
  const uint8_t *M = w + hzk_align256 ((size_t) n_rows * row_bytes);
  const int64_t n_tiles = (K + HZK_MM_KT - 1) / HZK_MM_KT;

  float acc[HZK_MM_TM][HZK_MM_TN];
  for (int i = 0; i < HZK_MM_TM; i++)
    for (int j = 0; j < HZK_MM_TN; j++)
      acc[i][j] = 0.0f;

  for (int64_t kt = 0; kt < n_tiles; kt++)
    {
      const int64_t e0 = kt * HZK_MM_KT;
      const int nr = (int) min ((int64_t) HZK_MM_RUNS, (K - e0) / 16);   /* valid runs */
      __syncthreads ();          /* the previous tile is consumed */
      /* weights: (row, unit) pairs, consecutive threads on consecutive units of a row */
      for (int p = tid; p < HZK_MM_BM * UT; p += HZK_MM_THREADS)
        {
          const int rl = p / UT, ul = p % UT;
          const int64_t u = kt * UT + ul;
          if (u >= nu)
            continue;
          int64_t r = row0 + rl;
          r = r < n_rows ? r : n_rows - 1;
          const uint8_t *P = w + (size_t) r * row_bytes;
          uint4 q[CH];
          for (int c = 0; c < CH; c++)
            q[c] = *(const uint4 *) (P + ((size_t) c * nu + u) * 16);
          const int64_t b = u / T::units_per_block;
          const int ub = (int) (u % T::units_per_block);
          int v[RUNS][4], off[RUNS];
          float d[RUNS], m[RUNS];
          D::decode (q, M + (size_t) (r * nb + b) * T::meta_bytes, ub, v, d, m, off);
          const int eb = (int) (b - kt * BPT) * T::blk_elems;   /* block start in the tile */
          for (int j = 0; j < RUNS; j++)
            {
              const int run = (eb + off[j]) / 16;
              sw[rl][run] = make_int4 (v[j][0], v[j][1], v[j][2], v[j][3]);
              sdm[rl][run] = make_float2 (d[j], T::symmetric ? 0.0f : m[j]);
            }
        }
      /* activations: (token, run) pairs */
      for (int p = tid; p < HZK_MM_BN * HZK_MM_RUNS; p += HZK_MM_THREADS)
        {
          const int t = p / HZK_MM_RUNS, j = p % HZK_MM_RUNS;
          if (j >= nr)
            continue;
          const int tg = min (tok0 + t, n_tok - 1);
          const int64_t e = (int64_t) (tok_row ? tok_row[tg] : tg) * K + e0 + 16 * j;
          sa[t][j] = hzk_ld_cached ((const int4 *) (aq + e));
          sam[t][j] = hzk_ld_cached (am + e / 16);
        }
      __syncthreads ();
      if constexpr (MMA)
        {
          /* warp wp: rows 16·wp.. of the tile against the 32 tokens as 4 blocks of 8;
           * thread (g, tig) holds rows g, g + 8 × tokens 2·tig, +1 of each block */
          const int lane = tid % 32, wp = tid / 32, g = lane / 4, tig = lane % 4;
          const int r0 = 16 * wp + g, r1 = r0 + 8;
          if constexpr (K32)
            {
              /* runs 2i, 2i + 1 share (d, m) and d_a: one k32 product per pair */
#pragma unroll 2
              for (int j = 0; j < nr; j += 2)
                {
                  const int a0 = ((const int *) &sw[r0][j])[tig], a1 = ((const int *) &sw[r1][j])[tig];
                  const int a2 = ((const int *) &sw[r0][j + 1])[tig];
                  const int a3 = ((const int *) &sw[r1][j + 1])[tig];
                  const float2 w0 = sdm[r0][j], w1 = sdm[r1][j];
#pragma unroll
                  for (int nb = 0; nb < 4; nb++)
                    {
                      const int t0 = 8 * nb + 2 * tig;
                      const int b0 = ((const int *) &sa[8 * nb + g][j])[tig];
                      const int b1 = ((const int *) &sa[8 * nb + g][j + 1])[tig];
                      const float2 s0 = sam[t0][j], s1 = sam[t0 + 1][j];
                      int c[4];
                      hzk_mma_s8_16832 (a0, a1, a2, a3, b0, b1, c);
                      float *a = acc[nb];
                      a[0] = fmaf (w0.x * s0.x, (float) c[0], a[0]);
                      a[1] = fmaf (w0.x * s1.x, (float) c[1], a[1]);
                      a[2] = fmaf (w1.x * s0.x, (float) c[2], a[2]);
                      a[3] = fmaf (w1.x * s1.x, (float) c[3], a[3]);
                      if constexpr (!T::symmetric)
                        {
                          const float u0 = s0.y + sam[t0][j + 1].y, u1 = s1.y + sam[t0 + 1][j + 1].y;
                          a[0] = fmaf (w0.y, u0, a[0]);
                          a[1] = fmaf (w0.y, u1, a[1]);
                          a[2] = fmaf (w1.y, u0, a[2]);
                          a[3] = fmaf (w1.y, u1, a[3]);
                        }
                    }
                }
            }
          else
            {
#pragma unroll 2
              for (int j = 0; j < nr; j++)
                {
                  const int a0 = ((const int *) &sw[r0][j])[tig], a1 = ((const int *) &sw[r1][j])[tig];
                  const float2 w0 = sdm[r0][j], w1 = sdm[r1][j];
#pragma unroll
                  for (int nb = 0; nb < 4; nb++)
                    {
                      const int t0 = 8 * nb + 2 * tig;
                      const int b = ((const int *) &sa[8 * nb + g][j])[tig];
                      const float2 s0 = sam[t0][j], s1 = sam[t0 + 1][j];
                      int c[4];
                      hzk_mma_s8_16816 (a0, a1, b, c);
                      float *a = acc[nb];
                      a[0] = fmaf (w0.x * s0.x, (float) c[0], a[0]);
                      a[1] = fmaf (w0.x * s1.x, (float) c[1], a[1]);
                      a[2] = fmaf (w1.x * s0.x, (float) c[2], a[2]);
                      a[3] = fmaf (w1.x * s1.x, (float) c[3], a[3]);
                      if constexpr (!T::symmetric)
                        {
                          a[0] = fmaf (w0.y, s0.y, a[0]);
                          a[1] = fmaf (w0.y, s1.y, a[1]);
                          a[2] = fmaf (w1.y, s0.y, a[2]);
                          a[3] = fmaf (w1.y, s1.y, a[3]);
                        }
                    }
                }
            }
        }
      else
        {
#pragma unroll 4
          for (int j = 0; j < nr; j++)
            {
              int4 wv[HZK_MM_TM];
              float2 wdm[HZK_MM_TM];
              for (int i = 0; i < HZK_MM_TM; i++)
                {
                  wv[i] = sw[tr + 16 * i][j];
                  wdm[i] = sdm[tr + 16 * i][j];
                }
              for (int c = 0; c < HZK_MM_TN; c++)
                {
                  const int4 a = sa[tc + 8 * c][j];
                  const float2 s = sam[tc + 8 * c][j];
                  for (int i = 0; i < HZK_MM_TM; i++)
                    {
                      int sumi = hzk_dp4a (wv[i].x, a.x, 0);
                      sumi = hzk_dp4a (wv[i].y, a.y, sumi);
                      sumi = hzk_dp4a (wv[i].z, a.z, sumi);
                      sumi = hzk_dp4a (wv[i].w, a.w, sumi);
                      acc[i][c] = fmaf (wdm[i].x * s.x, (float) sumi, acc[i][c]);
                      if constexpr (!T::symmetric)
                        acc[i][c] = fmaf (wdm[i].y, s.y, acc[i][c]);
                    }
                }
            }
        }
    }
  if constexpr (MMA)
    {
      const int lane = tid % 32, wp = tid / 32, g = lane / 4, tig = lane % 4;
      for (int nb = 0; nb < 4; nb++)
        for (int i = 0; i < 4; i++)
          {
            const int t = tok0 + 8 * nb + 2 * tig + (i & 1);
            const int64_t r = row0 + 16 * wp + g + 8 * (i >> 1);
            if (t < n_tok && r < n_rows)
              y[(size_t) t * ldy + r] = acc[nb][i];
          }
    }
  else
    {
      for (int c = 0; c < HZK_MM_TN; c++)
        {
          const int t = tok0 + tc + 8 * c;
          if (t >= n_tok)
            continue;
          for (int i = 0; i < HZK_MM_TM; i++)
            {
              const int64_t r = row0 + tr + 16 * i;
              if (r < n_rows)
                y[(size_t) t * ldy + r] = acc[i][c];
            }
        }
    }
}

/* ---- float formats --------------------------------------------------------------------- */
/** Tile (bx, by) of the float-format product; tok_row as qmmq_tile's (rows of x). */
template <int W>
static __device__ __forceinline__ void
qmmf_tile (const uint8_t *HZK_RESTRICT w, int64_t n_rows, int64_t K, int n_tok,
           const int *HZK_RESTRICT tok_row, const float *HZK_RESTRICT x, float *HZK_RESTRICT y,
           int64_t ldy, int64_t bx, int by)
{
  using T = qdw_traits<W>;
  constexpr int UE = T::unit_elems, UT = HZK_MM_KTF / UE;
  __shared__ float sw[HZK_MM_BM][HZK_MM_KTF + 1];
  __shared__ float sx[HZK_MM_BN][HZK_MM_KTF + 1];

  const int tid = threadIdx.x, tr = tid % 16, tc = tid / 16;
  const int64_t row0 = bx * HZK_MM_BM;
  const int tok0 = by * HZK_MM_BN;
  const int64_t nu = K / UE;
  const size_t row_bytes = (size_t) nu * T::unit_bytes;

  float acc[HZK_MM_TM][HZK_MM_TN];
  for (int i = 0; i < HZK_MM_TM; i++)
    for (int j = 0; j < HZK_MM_TN; j++)
      acc[i][j] = 0.0f;

  for (int64_t e0 = 0; e0 < K; e0 += HZK_MM_KTF)
    {
      const int ne = (int) min ((int64_t) HZK_MM_KTF, K - e0);
      __syncthreads ();
      for (int p = tid; p < HZK_MM_BM * UT; p += HZK_MM_THREADS)
        {
          const int rl = p / UT, ul = p % UT;
          const int64_t u = e0 / UE + ul;
          if (u >= nu)
            continue;
          int64_t r = row0 + rl;
          r = r < n_rows ? r : n_rows - 1;
          const uint4 q = *(const uint4 *) (w + (size_t) r * row_bytes + (size_t) u * 16);
          float wv[UE];
          qdec<W>::decode_f (&q, wv);
          for (int i = 0; i < UE; i++)
            sw[rl][ul * UE + i] = wv[i];
        }
      for (int p = tid; p < HZK_MM_BN * HZK_MM_KTF; p += HZK_MM_THREADS)
        {
          const int t = p / HZK_MM_KTF, k = p % HZK_MM_KTF;
          if (k < ne)
            {
              const int tg = min (tok0 + t, n_tok - 1);
              sx[t][k] = x[(size_t) (tok_row ? tok_row[tg] : tg) * K + e0 + k];
            }
        }
      __syncthreads ();
      for (int k = 0; k < ne; k++)
        {
          float wv[HZK_MM_TM], xv[HZK_MM_TN];
          for (int i = 0; i < HZK_MM_TM; i++)
            wv[i] = sw[tr + 16 * i][k];
          for (int c = 0; c < HZK_MM_TN; c++)
            xv[c] = sx[tc + 8 * c][k];
          for (int i = 0; i < HZK_MM_TM; i++)
            for (int c = 0; c < HZK_MM_TN; c++)
              acc[i][c] = fmaf (wv[i], xv[c], acc[i][c]);
        }
    }
  for (int c = 0; c < HZK_MM_TN; c++)
    {
      const int t = tok0 + tc + 8 * c;
      if (t >= n_tok)
        continue;
      for (int i = 0; i < HZK_MM_TM; i++)
        {
          const int64_t r = row0 + tr + 16 * i;
          if (r < n_rows)
            y[(size_t) t * ldy + r] = acc[i][c];
        }
    }
}

template <int W, bool MMA>
__global__ void __launch_bounds__ (HZK_MM_THREADS)
qmmq_core (const uint8_t *HZK_RESTRICT w, int64_t n_rows, int64_t K, int n_tok,
           const int8_t *HZK_RESTRICT aq, const float2 *HZK_RESTRICT am, float *HZK_RESTRICT y,
           int64_t ldy)
{
  qmmq_tile<W, MMA> (w, n_rows, K, n_tok, nullptr, aq, am, y, ldy, blockIdx.x, blockIdx.y);
}

template <int W>
__global__ void __launch_bounds__ (HZK_MM_THREADS)
qmmf_core (const uint8_t *HZK_RESTRICT w, int64_t n_rows, int64_t K, int n_tok,
           const float *HZK_RESTRICT x, float *HZK_RESTRICT y, int64_t ldy)
{
  qmmf_tile<W> (w, n_rows, K, n_tok, nullptr, x, y, ldy, blockIdx.x, blockIdx.y);
}

#if defined(HZK_CUDA)
#include <stdlib.h>
#include <string.h>
/** Tensor cores for the int8 products: on a device of compute capability 8.0 or newer,
 *  unless HZ_GPU_MMQ=dp4a (asked once per translation unit). */
static bool
hzk_mm_use_mma (void)
{
  static int use = -1;
  if (use < 0)
    {
      int dev = 0, major = 0;
      const char *e = getenv ("HZ_GPU_MMQ");
      use = cudaGetDevice (&dev) == cudaSuccess
            && cudaDeviceGetAttribute (&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess
            && major >= 8 && !(e && strcmp (e, "dp4a") == 0);
    }
  return use > 0;
}
#endif

