/* kernels/qmmq-core.h — the prefill matmul's bodies qmmq_mma_tile<W, C> (integer formats,
 * tensor cores), qmmq_tile_dp4a<W> (integer formats, dp4a / sdot4) and qmmf_tile<W> (float
 * formats) with their kernels qmmq_mma_core / qmmq_core / qmmf_core, shared by
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
  asm ("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
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
  asm ("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                "{%8,%9}, {%10,%11,%12,%13};"
                : "=r"(c[0]), "=r"(c[1]), "=r"(c[2]), "=r"(c[3])
                : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "r"(0), "r"(0), "r"(0),
                  "r"(0));
#else
  c[0] = c[1] = c[2] = c[3] = 0;     /* never launched: hzk_mm_use_mma() is false there */
#endif
}

/** Stores one thread's accumulators of a tile of the SIMT kernels (qmmq_tile_dp4a,
 *  qmmf_tile): acc[i][c] is row row0 + tr + 16·i, token tok0 + tc + 8·c of y (token-major,
 *  ldy floats per token); rows >= n_rows and tokens >= n_tok are left out. */
static __device__ __forceinline__ void
hzk_mm_store_tile (const float (&acc)[HZK_MM_TM][HZK_MM_TN], float *HZK_RESTRICT y, int64_t ldy,
                   int64_t row0, int tok0, int tr, int tc, int64_t n_rows, int n_tok)
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

/** Split-K across the blocks of one launch (few tokens: the serving step, small matrices).
 *  The n_split blocks of output tile `tile` (of n_tile) each own a contiguous range of its
 *  K tiles (split 0 the first). hzk_splitk_sum: each block writes its partial sums (NV values
 *  held by each of NH holder threads; holder h of a block is the same output elements in
 *  every split) to part, then counts itself in cnt[tile]; the block that counts last adds
 *  the n_split partials in split order 0, 1, ... (the same order whichever block comes last,
 *  so the result does not depend on scheduling, and for a fixed n_split not on the other
 *  tokens of the product) into v, resets cnt[tile] to 0 for the next launch and returns
 *  true; the other blocks return false and store nothing. n_split 1: returns true at once.
 *  All threads of the block must call it. Memory: part [n_split][n_tile][NV][NH] floats,
 *  cnt [n_tile] ints, zero before the first launch (hzk_matmul_ws_bytes). */
struct hzk_splitk
{
  float *part;
  int *cnt;
  int n_split, split;
  int64_t tile, n_tile;
};

template <int NV, int NH>
static __device__ __forceinline__ bool
hzk_splitk_sum (float *v, bool holds, int h, const hzk_splitk &sk)
{
  if (sk.n_split <= 1)
    return true;
  __shared__ int last;
  const size_t stride = (size_t) sk.n_tile * NV * NH;    /* one split's partials */
  float *p = sk.part + (size_t) sk.tile * NV * NH + h;
  if (holds)
#pragma unroll
    for (int i = 0; i < NV; i++)
      hzk_st_l2 (p + sk.split * stride + (size_t) i * NH, v[i]);
  /* release: the block's stores, ordered by the barrier, then one thread's device-scope
   * fence before its counter update (cumulative: one fence per block); acquire: the
   * counting thread's fence after the update, then the barrier */
  __syncthreads ();
  if (threadIdx.x == 0)
    {
      __threadfence ();
      last = atomicAdd (sk.cnt + sk.tile, 1) == sk.n_split - 1;
      __threadfence ();
    }
  __syncthreads ();
  if (!last)
    return false;
  if (holds)
#pragma unroll
    for (int i = 0; i < NV; i++)
      {
        float s = hzk_ld_l2 (p + (size_t) i * NH);
        for (int k = 1; k < sk.n_split; k++)
          s += hzk_ld_l2 (p + k * stride + (size_t) i * NH);
        v[i] = s;
      }
  if (threadIdx.x == 0)
    sk.cnt[sk.tile] = 0;
  return true;
}

/** The dp4a / sdot4 tile (AMD, NVIDIA before sm_80, HZ_GPU_MMQ=dp4a): tile (bx, by) of
 *  the product, rows 64·bx.., tokens 32·by.. of n_tok; each thread 4 rows × 4 tokens.
 *  Token t's activations are row tok_row[t] of aq/am (tok_row NULL: row t), its output
 *  row t of y. kernels/moe.hip runs it on an expert's weights and the tokens routed to it.
 *  All HZK_MM_THREADS threads of the block must call it. */
template <int W>
static __device__ __forceinline__ void
qmmq_tile_dp4a (const uint8_t *HZK_RESTRICT w, int64_t n_rows, int64_t K, int n_tok,
                const int *HZK_RESTRICT tok_row, const int8_t *HZK_RESTRICT aq,
                const float2 *HZK_RESTRICT am, float *HZK_RESTRICT y, int64_t ldy, int64_t bx,
                int by, int64_t kt0 = 0, int64_t kt1 = -1, const hzk_splitk &sk = {})
{
  using T = qdw_traits<W>;
  using D = qdec<W>;
  constexpr int CH = T::chunks, RUNS = D::runs;
  constexpr int UT = HZK_MM_KT / T::unit_elems;        /* units per K tile */
  constexpr int BPT = HZK_MM_KT / T::blk_elems;        /* blocks per K tile */
  static_assert (HZK_MM_KT % T::blk_elems == 0, "a K tile holds whole blocks");

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

  /* Weights: (row, unit) pairs, consecutive threads on consecutive units of a row, UPT
   * per thread. The raw units of K tile kt + 1 are loaded into registers (q) while tile kt
   * is multiplied — the portable twin of the tensor-core tile's shared-memory ring: every
   * load of a tile is in flight at once, and behind the previous tile's products. */
  constexpr int UPT = (HZK_MM_BM * UT + HZK_MM_THREADS - 1) / HZK_MM_THREADS;
  const int64_t kte = kt1 < 0 ? n_tiles : kt1;
  uint4 q[UPT][CH];
  auto load_tile = [&] (int64_t kt) {
#pragma unroll
    for (int i = 0; i < UPT; i++)
      {
        const int p = tid + i * HZK_MM_THREADS, rl = p / UT, ul = p % UT;
        const int64_t u = kt * UT + ul, r = min (row0 + rl, n_rows - 1);
        if ((HZK_MM_BM * UT % HZK_MM_THREADS == 0 || p < HZK_MM_BM * UT) && u < nu)
          qdw_load_unit<W> (w + (size_t) r * row_bytes, nu, u, q[i]);
      }
  };
  if (kt0 < kte)
    load_tile (kt0);
  for (int64_t kt = kt0; kt < kte; kt++)
    {
      const int64_t e0 = kt * HZK_MM_KT;
      const int nr = (int) min ((int64_t) HZK_MM_RUNS, (K - e0) / 16);   /* valid runs */
      __syncthreads ();          /* the previous tile is consumed */
#pragma unroll
      for (int i = 0; i < UPT; i++)
        {
          const int p = tid + i * HZK_MM_THREADS, rl = p / UT, ul = p % UT;
          const int64_t u = kt * UT + ul;
          if (!(HZK_MM_BM * UT % HZK_MM_THREADS == 0 || p < HZK_MM_BM * UT) || u >= nu)
            continue;
          const int64_t r = min (row0 + rl, n_rows - 1);
          const int64_t b = u / T::units_per_block;
          const int ub = (int) (u % T::units_per_block);
          int v[RUNS][4], off[RUNS];
          float d[RUNS], m[RUNS];
          D::decode (q[i], M + (size_t) (r * nb + b) * T::meta_bytes, ub, v, d, m, off);
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
      if (kt + 1 < kte)
        load_tile (kt + 1);      /* in flight during this tile's products */
      __syncthreads ();
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
  if (hzk_splitk_sum<HZK_MM_TM * HZK_MM_TN, HZK_MM_THREADS> (&acc[0][0], true, tid, sk))
    hzk_mm_store_tile (acc, y, ldy, row0, tok0, tr, tc, n_rows, n_tok);
}


/* ---- integer formats, tensor cores (CUDA sm_80+) --------------------------------------- */
/** The decoder's zero_point member (kernels/qdec.h), 0 where it has none. */
template <class D, class = void>
struct hzk_zero_point
{
  static constexpr int value = 0;
};
template <class D>
struct hzk_zero_point<D, decltype ((void) D::zero_point, void ())>
{
  static constexpr int value = D::zero_point;
};

/** ldmatrix .x4 (sm_80+): lane l gives the address of row l % 8 of 8×16-byte matrix l / 8;
 *  r[i] receives, in lane l, bytes 4·(l % 4)..+3 of row l / 4 of matrix i. */
static __device__ __forceinline__ void
hzk_ldsm_x4 (const void *p, int r[4])
{
#if defined(HZK_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned a = (unsigned) __cvta_generic_to_shared (p);
  asm volatile ("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                : "r"(a));
#else
  r[0] = r[1] = r[2] = r[3] = 0;     /* never launched: hzk_mm_use_mma() is false there */
#endif
}

/** As hzk_ldsm_x4 with two matrices (the addresses of lanes 0..15 are used). */
static __device__ __forceinline__ void
hzk_ldsm_x2 (const void *p, int r[2])
{
#if defined(HZK_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned a = (unsigned) __cvta_generic_to_shared (p);
  asm volatile ("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];"
                : "=r"(r[0]), "=r"(r[1])
                : "r"(a));
#else
  r[0] = r[1] = 0;
#endif
}

/** Prefetch of the line holding p into L2 (no register holds the data). */
static __device__ __forceinline__ void
hzk_mm_prefetch_l2 (const void *p)
{
#if defined(HZK_CUDA) && defined(__CUDA_ARCH__)
  asm volatile ("prefetch.global.L2 [%0];" ::"l"(p));
#else
  (void) p;
#endif
}

/** float(c) for |c| < 2^22 (an int8 product sum: |Σ_32 v·q_a| <= 32·128·127) by one
 *  integer add and one float subtract: 0x4B400000 is 1.5·2^23, whose ulp is 1, so c lands
 *  in the mantissa. The int-to-float conversion runs at 16 per clock and SM on sm_80 and
 *  sm_90 (CUDA C++ Programming Guide, arithmetic instruction throughput) against 128 fp32
 *  adds; the tile converts four sums per product. */
static __device__ __forceinline__ float
hzk_i2f_small (int c)
{
  return __int_as_float (0x4B400000 + c) - 12582912.0f;
}

/** Block geometry of the tensor-core tile: BM rows × BN tokens per block, its warps laid
 *  out WR (rows) × WC (tokens) × WK (K split: warp wk takes the wk-th slice of each K
 *  tile's scale slots; the WK partial sums are added in shared memory at the end, in a
 *  fixed order). Each warp holds (BM/WR) × (BN/WC) outputs as MT × NT mma tiles. K tiles
 *  of KTM × 256 elements (more loads in flight per synchronisation). MINB
 *  blocks per SM (launch bounds); PF: prefetch distance in K tiles (weights into L2, so
 *  that a block has several tiles' loads in flight without holding them in registers);
 *  LA: 16-byte weight chunks each thread loads into registers before decoding them (at
 *  least one unit; the registers that the 2 blocks per SM leave decide it). ST: K-tile
 *  stages in shared memory — 1: the weights of a tile are loaded into registers and
 *  decoded, nothing of the next tile in flight (PF, LA apply); ST > 1 (the pipelined
 *  tile, sm_80+): a ring of up to ST stages, each holding one K tile's raw weight blocks
 *  (payload and meta bytes as stored) and its activations, filled by cp.async ST − 1
 *  tiles ahead of the tile being decoded and multiplied (PF, LA unused). */
template <int BM_, int BN_, int WR_, int WC_, int WK_, int KTM_, int MINB_, int PF_, int LA_,
          int ST_ = 1, int DB_ = 0>
struct hzk_mmq_cfg
{
  static constexpr int BM = BM_, BN = BN_, WR = WR_, WC = WC_, WK = WK_;
  static constexpr int DB = DB_;     /* double-buffered decode (see hzk_mmq_bigp): 1 two
                                        activation buffers, 2 one */
  static constexpr int KT = KTM_ * HZK_MM_KT;   /* elements per K tile of the block */
  static constexpr int PF = PF_;     /* the weights of K tile kt + PF are prefetched to L2 */
  static constexpr int LA = LA_;     /* 16-byte weight chunks a thread loads before decoding */
  static constexpr int ST = ST_;     /* stages of the shared-memory ring (1: none) */
  static constexpr int warps = WR * WC * WK, threads = 32 * warps, min_blocks = MINB_;
  static constexpr int WM = BM / WR, WN = BN / WC, MT = WM / 16, NT = WN / 8;
  static_assert (WM % 16 == 0 && WN % 32 == 0, "warp tile: 16-row m tiles, 4 n tiles of 8");
  static_assert (ST >= 1, "at least one stage");
  static_assert (!DB || ST == 2, "the double-buffered tile has two of everything");
};
/** Prefill shapes: 128 rows × 64 tokens, 8 warps of 32 rows × 32 tokens (2 × 4 products
 *  per k step, each A fragment used 4 times, each B fragment twice from registers). */
using hzk_mmq_big = hzk_mmq_cfg<128, 64, 4, 2, 1, 1, 2, 1, 2>;
/** Few tokens (the MoE expert tiles; the serving step with HZ_GPU_MMQ_PIPE=0): 32 rows ×
 *  32 tokens, 8 warps of 16 rows × 32 tokens, K tiles of 1024 elements split four ways
 *  (one 256-element slice per warp) — 4 times the blocks of a 64-row tile, four slices'
 *  loads in flight per synchronisation, and n tiles past the last token skipped. */
using hzk_mmq_small = hzk_mmq_cfg<32, 32, 2, 1, 4, 4, 2, 1, 6>;
/** Few tokens, pipelined (the serving step's 9–64 rows, speculative decoding, GRPO
 *  rollouts): the small tile's warps (2 × 4 of 16 rows × 32 tokens, K split four ways) on
 *  K tiles of 512 elements, a ring of up to 3 stages (two K tiles' raw weights and
 *  activations in flight while one is decoded and multiplied). */
using hzk_mmq_pipe = hzk_mmq_cfg<32, 32, 2, 1, 4, 2, 2, 0, 1, 3>;
/** Prefill shapes, software-pipelined (HZ_GPU_MMQ_BIG=1): the big tile's warps and K tiles
 *  of 256 with two of everything in shared memory (DB): while the warps multiply K tile
 *  k from decoded buffer k % 2, they decode the raw blocks of tile k + 1 (landed in raw
 *  buffer (k + 1) % 2) into the other decoded buffer, and cp.async brings the raw blocks of
 *  tile k + 2 and the activations of tile k + 1 — one barrier per K tile, every load a
 *  whole K tile ahead of its use. 177–214 KB of shared memory: one block of 8 warps per
 *  SM. Same per-warp arithmetic and order as hzk_mmq_big (bit-identical results). */
using hzk_mmq_bigp = hzk_mmq_cfg<128, 64, 4, 2, 1, 1, 1, 0, 1, 2, 1>;
/** As hzk_mmq_bigp with 16 warps (HZ_GPU_MMQ_BIG=2): each K tile's scale slots split two
 *  ways between warp pairs (partial sums added in shared memory at the end): twice the
 *  warps to hide shared-memory latency, half the products per warp and K tile. */
using hzk_mmq_bigp16 = hzk_mmq_cfg<128, 64, 4, 2, 2, 1, 1, 0, 1, 2, 1>;
/** 128 rows × 128 tokens, 16 warps of 32 rows × 32 tokens (HZ_GPU_MMQ_BIG=3, 128 tokens or
 *  more): the decode of a weight tile serves twice the tokens; decoded and raw weights
 *  double-buffered as hzk_mmq_bigp, one activation buffer (DB 2: copied at the start of
 *  a step while the warps decode, waited for before the products; two barriers per K
 *  tile). 178–211 KB of shared memory, one block per SM. */
using hzk_mmq_bigp128 = hzk_mmq_cfg<128, 128, 4, 4, 1, 1, 1, 0, 1, 2, 2>;
/** As hzk_mmq_bigp128 with two activation buffers (one barrier per K tile; HZ_GPU_MMQ_BIG=4,
 *  where its 224 KB fit: the 4-bit formats with K tiles of 256 elements in 144 bytes or
 *  less per row). */
using hzk_mmq_bigp128a = hzk_mmq_cfg<128, 128, 4, 4, 1, 1, 1, 0, 1, 2, 1>;
/** As hzk_mmq_bigp128 with 96 rows and 12 warps (HZ_GPU_MMQ_BIG=5): another grid size for
 *  the shapes whose 128-row grid leaves a last wave mostly empty (22016 rows at 512 tokens:
 *  688 blocks = 5.2 waves of 132). */
using hzk_mmq_bigp96 = hzk_mmq_cfg<96, 128, 3, 4, 1, 1, 1, 0, 1, 2, 2>;

/** Shared-memory geometry of format W in a tile of K tiles of KT elements. Scales of
 *  32 elements or more (K32): two runs share (d, m) and the activations' d_a, and one
 *  m16n8k32 product takes both (Q6_K, Q2_K: per 16, m16n8k16). Ring stages (hzk_mmq_cfg
 *  ST > 1) of a BM-row tile: RAWP(BM) payload bytes (unit (row rl, ul), chunk c at
 *  ((rl·CH + c)·UT + ul)·16, the device layout's 16-byte chunks), then per row MCH 16-byte
 *  chunks of the meta region covering the tile's blocks (copied from the 16-byte boundary
 *  below them, so a meta byte keeps its address modulo 16). */
template <int W, int KT>
struct hzk_mmq_fmt
{
  using T = qdw_traits<W>;
  static constexpr bool K32 = hzk_fmt<W>::block_elems / qdec<W>::scale_slots >= 32;
  static constexpr int SE = K32 ? 32 : 16;           /* elements per scale slot */
  static constexpr int RUNS = KT / 16;               /* 16-element runs per K tile */
  static constexpr int NS = KT / SE;                 /* scale slots per K tile */
  static constexpr int LD = (RUNS + 1) * 16;         /* bytes per shared row (padded: an
                                                        odd number of 16-byte units) */
  static constexpr int SAW = K32 ? 2 : 1;            /* activation runs per scale slot */
  static constexpr int UT = KT / T::unit_elems;      /* units per K tile and row */
  static constexpr int BPT = KT / T::blk_elems;      /* blocks per K tile and row */
  static constexpr int MCH = (BPT * T::meta_bytes + 30) / 16;   /* 15 bytes of offset */
  static constexpr int RAWP (int bm) { return bm * UT * T::chunks * 16; }
};

/** Memory round trips per K tile of the single-buffered tile C (ST 1) for format W: each
 *  thread loads its UPT weight units in groups of LU (hzk_mmq_cfg::LA chunks), one round
 *  trip per group. */
template <int W, class C>
static constexpr int
hzk_mmq_load_groups (void)
{
  using T = qdw_traits<W>;
  constexpr int upt = (C::BM * (C::KT / T::unit_elems) + C::threads - 1) / C::threads;
  constexpr int lu = C::LA / T::chunks < 1 ? 1 : C::LA / T::chunks;
  return (upt + lu - 1) / lu;
}

/** Token rows of one stage's activation buffer of the pipelined tile C for a product of
 *  n_tok tokens: every row that the warps' ldmatrix reads (K32: pairs of n tiles, so
 *  n_tok rounded up to 16; Q6_K / Q2_K: all BN). Host and device compute it alike. */
template <int W, class C>
static __host__ __device__ constexpr int
qmmq_pipe_rows (int n_tok)
{
  return !hzk_mmq_fmt<W, C::KT>::K32 || n_tok >= C::BN ? C::BN : (n_tok + 15) / 16 * 16;
}

/** Bytes of one ring stage of the pipelined tile C (ta activation rows). */
template <int W, class C>
static __host__ __device__ constexpr int
qmmq_pipe_stage_bytes (int ta)
{
  using F = hzk_mmq_fmt<W, C::KT>;
  return F::RAWP (C::BM) + C::BM * F::MCH * 16 + ta * F::LD + F::NS * ta * F::SAW * 8;
}

/** Dynamic shared memory of qmmq_mma_tile<W, C>. ST 1: the decoded weights [BM][LD], the
 *  activations [BN][LD], (d, m) [NS][BM] and the activations' (d_a, s_a) as copied,
 *  [NS][BN] of the slot's runs (two per slot for K32). ST > 1: the decoded weights and
 *  (d, m), then n_st ring stages (qmmq_pipe_stage_bytes) of ta activation rows
 *  (defaults: C::ST stages of C::BN rows, the most the tile takes). DB: two decoded
 *  buffers (weights and (d, m)), then two stages (n_st is ignored). */
template <int W, class C>
static __host__ __device__ constexpr int
qmmq_mma_smem_bytes (int ta = C::BN, int n_st = C::ST)
{
  using F = hzk_mmq_fmt<W, C::KT>;
  if (C::DB)
    return 2 * (C::BM * F::LD + F::NS * C::BM * 8) + 2 * qmmq_pipe_stage_bytes<W, C> (ta)
           - (C::DB == 2 ? qmmq_pipe_stage_bytes<W, C> (ta) - F::RAWP (C::BM) - C::BM * F::MCH * 16 : 0);
  if (C::ST == 1)
    return (C::BM + C::BN) * F::LD + F::NS * C::BM * 8 + F::NS * C::BN * 8 * F::SAW;
  return C::BM * F::LD + F::NS * C::BM * 8 + n_st * qmmq_pipe_stage_bytes<W, C> (ta);
}

/** Tensor-core tile (bx, by): rows BM·bx.., tokens BN·by.. of n_tok; tok_row, aq, am, y as
 *  qmmq_tile_dp4a. smem: qmmq_mma_smem_bytes<W, C>(…) bytes (16-byte aligned). Per K tile
 *  of C::KT elements all threads decode the block's rows with qdec<W> into shared memory
 *  (runs of 16 int8 at their element position, rows padded by 16 bytes so that the
 *  8 rows of an ldmatrix hit distinct banks; (d, m) once per scale slot) and copy the
 *  tokens' int8 activations and (d_a, s_a) (s_a of a slot = the sum of its runs'); then
 *  each warp, per scale slot of its K slice: A fragments of its MT m tiles and B fragments
 *  of its NT n tiles by ldmatrix, MT × NT mma.sync, and
 *      acc[r][t] += (d_r·d_a,t)·Σ v·q_a  (+ m_r·s_a,t).
 *  C::ST > 1 (pipelined): n_st (2..C::ST) ring stages; the raw weight blocks and the
 *  activations of K tile k + n_st − 1 are copied by cp.async while tile k is decoded from
 *  its stage and multiplied; the arithmetic per K tile is the same as with ST 1.
 *  All C::threads threads of the block must call it. */
template <int W, class C>
static __device__ __forceinline__ void
qmmq_mma_tile (const uint8_t *HZK_RESTRICT w, int64_t n_rows, int64_t K, int n_tok,
               const int *HZK_RESTRICT tok_row, const int8_t *HZK_RESTRICT aq,
               const float2 *HZK_RESTRICT am, float *HZK_RESTRICT y, int64_t ldy, int64_t bx,
               int by, uint8_t *smem, int64_t kt0 = 0, int64_t kt1 = -1,
               const hzk_splitk &sk = {}, int n_st = C::ST)
{
  using T = qdw_traits<W>;
  using D = qdec<W>;
  using F = hzk_mmq_fmt<W, C::KT>;
  constexpr int CH = T::chunks, RUNS = D::runs, KT = C::KT, KR = F::RUNS;
  constexpr int UT = F::UT;                             /* units per K tile */
  constexpr int BPT = F::BPT;                           /* blocks per K tile */
  constexpr int BM = C::BM, BN = C::BN, MT = C::MT, NT = C::NT, NTH = C::threads;
  constexpr int NS = F::NS, LD = F::LD, SPW = NS / C::WK;   /* slots per warp */
  constexpr bool K32 = F::K32;
  /* a zero point (Q4_0): v − z stored as int8, no m term — w = d·(v − z), the symmetric
   * formats' arithmetic (4 fewer FMAs per product) */
  constexpr int ZP = hzk_zero_point<D>::value;
  constexpr bool SYM = T::symmetric || ZP != 0;
  static_assert (KT % T::blk_elems == 0, "a K tile holds whole blocks");
  static_assert (NS % C::WK == 0, "the K split divides the scale slots");
  constexpr int UPT = (BM * UT + NTH - 1) / NTH;        /* weight units per thread */
  constexpr int APT = (BN * KR + NTH - 1) / NTH;        /* activation runs per thread */
  constexpr int SPT = (BN * NS + NTH - 1) / NTH;        /* activation slots per thread */
  constexpr int SAW = F::SAW;                           /* runs per scale slot */
  constexpr int LU = C::LA / CH < 1 ? 1 : C::LA / CH;   /* units per load group */

  /* ST 1: sw [BM][LD] decoded runs | sa [BN][LD] activations | sdm [NS][BM] (d, m) |
   * sam [NS][BN][SAW] (d_a, s_a) of the slot's SAW runs. ST > 1: sw | sdm | ring. */
  uint8_t *sw = smem;
  uint8_t *sa = sw + BM * LD;
  float2 *sdm = (float2 *) (C::ST == 1 ? sa + BN * LD : sa);
  float2 *sam = sdm + NS * BM;
  uint8_t *ring = (uint8_t *) sam;

  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int wk = warp % C::WK, wc = (warp / C::WK) % C::WC, wr = warp / (C::WK * C::WC);
  const int g = lane / 4, tig = lane % 4;
  const int64_t row0 = bx * BM;
  const int tok0 = by * BN;
  const int64_t nu = K / T::unit_elems, nb = K / T::blk_elems;
  const size_t row_bytes = (size_t) nu * T::unit_bytes;
  const uint8_t *M = w + hzk_align256 ((size_t) n_rows * row_bytes);
  const int64_t n_tiles = (K + KT - 1) / KT;
  const int wrow = wr * C::WM, wtok = wc * C::WN;
  /* n tiles of this warp holding a token < n_tok (the rest are skipped) */
  const int ntv = min (NT, max (0, (n_tok - tok0 - wtok + 7) / 8));

  /* ldmatrix lane addresses (byte offsets of slot 0). A (K32): matrices rows 0..7 and
   * 8..15 of runs 2s, 2s + 1 -> a0..a3; (k16): rows 0..7, 8..15 of run s. B (K32): tokens
   * 0..7 runs 2s, 2s + 1 then tokens 8..15 -> b of two n tiles; (k16): tokens 0..31 of
   * run s -> b of four n tiles. */
  const int a_off = (wrow + lane % 8 + 8 * ((lane / 8) & 1)) * LD + (K32 ? 16 * (lane / 16) : 0);
  const int b_off = K32 ? (wtok + lane % 8 + 8 * (lane / 16)) * LD + 16 * ((lane / 8) & 1)
                        : (wtok + lane) * LD;

  float acc[MT][NT][4];
#pragma unroll
  for (int i = 0; i < MT; i++)
#pragma unroll
    for (int j = 0; j < NT; j++)
#pragma unroll
      for (int c = 0; c < 4; c++)
        acc[i][j][c] = 0.0f;

  /* token rows of the activation tile that the warps' n tiles read: up to the last token,
   * rounded up to whole n tiles; rows past the last token are zero-filled (cp.async of
   * source size 0: no global read; on an H200 copies of the last token's row instead, the
   * same addresses fetched up to 8 times per block, cost 12 µs at 1 token) */
  const int tpad = min (BN, (n_tok - tok0 + 7) / 8 * 8);
  const int64_t kte = kt1 < 0 ? n_tiles : kt1;

  /* the activations of the K tile at e0 (nr valid runs, nsv valid slots) into xa [..][LD]
   * and xam [NS][ldt][SAW]: (token, run) pairs, then (token, slot) scales, by cp.async */
  auto copy_acts = [&] (uint8_t *xa, float2 *xam, int ldt, int64_t e0, int nr, int nsv) {
#pragma unroll
    for (int i = 0; i < APT; i++)
      {
        const int p = tid + i * NTH, t = p / KR, j = p % KR;
        if ((BN * KR % NTH == 0 || p < BN * KR) && j < nr && t < tpad)
          {
            const int tg = min (tok0 + t, n_tok - 1);
            hzk_cp_async16 (xa + t * LD + j * 16,
                            aq + (int64_t) (tok_row ? tok_row[tg] : tg) * K + e0 + 16 * j,
                            tok0 + t < n_tok, true);
          }
      }
#pragma unroll
    for (int i = 0; i < SPT; i++)
      {
        const int p = tid + i * NTH, t = p / NS, s = p % NS;
        if ((BN * NS % NTH == 0 || p < BN * NS) && s < nsv && t < tpad)
          {
            const int tg = min (tok0 + t, n_tok - 1);
            const int64_t e = ((int64_t) (tok_row ? tok_row[tg] : tg) * K + e0) / 16
                              + (K32 ? 2 : 1) * s;
            if constexpr (K32)   /* both runs' */
              hzk_cp_async16 (xam + (s * ldt + t) * SAW, am + e, tok0 + t < n_tok, true);
            else
              hzk_cp_async8 (xam + s * ldt + t, am + e, tok0 + t < n_tok);
          }
      }
  };

  /* unit ub of block b (row rl of the tile, K tile kt), payload q and meta bytes at meta,
   * decoded into sw (runs at their element position in the tile) and sdm */
  auto put_unit = [&] (const uint4 *q, const uint8_t *meta, int rl, int64_t b, int ub, int64_t kt) {
    int v[RUNS][4], off[RUNS];
    float d[RUNS], m[RUNS];
    D::decode (q, meta, ub, v, d, m, off);
    if constexpr (ZP != 0)    /* per byte v − z: (v + 0x80 − z) ^ 0x80, no carry between bytes */
#pragma unroll
      for (int j = 0; j < RUNS; j++)
#pragma unroll
        for (int k = 0; k < 4; k++)
          v[j][k] = (int) (((uint32_t) v[j][k] + (0x80u - ZP) * 0x01010101u) ^ 0x80808080u);
    const int eb = (int) (b - kt * BPT) * T::blk_elems;   /* block start in the tile */
#pragma unroll
    for (int j = 0; j < RUNS; j++)
      {
        const int run = (eb + off[j]) / 16;
        *(int4 *) (sw + rl * LD + run * 16) = make_int4 (v[j][0], v[j][1], v[j][2], v[j][3]);
        if (!K32 || (run & 1) == 0)
          sdm[(K32 ? run / 2 : run) * BM + rl] = make_float2 (d[j], SYM ? 0.0f : m[j]);
      }
  };

  /* this warp's products over its K slice of a decoded tile (nsv valid slots), the
   * activations in xa / xam (token stride ldt) */
  auto mma_slots = [&] (const uint8_t *xa, const float2 *xam, int ldt, int nsv) {
    const int s1 = min ((wk + 1) * SPW, nsv);
#pragma unroll 2
    for (int s = wk * SPW; s < s1; s++)
      {
        int a[MT][4], b[NT][2];
#pragma unroll
        for (int i = 0; i < MT; i++)
          {
            if constexpr (K32)
              hzk_ldsm_x4 (sw + a_off + 16 * i * LD + 32 * s, a[i]);
            else
              hzk_ldsm_x2 (sw + a_off + 16 * i * LD + 16 * s, a[i]);
          }
        if constexpr (K32)
          {
#pragma unroll
            for (int j = 0; j < NT; j += 2)
              if (j < ntv)
                {
                  int r[4];
                  hzk_ldsm_x4 (xa + b_off + 8 * j * LD + 32 * s, r);
                  b[j][0] = r[0], b[j][1] = r[1], b[j + 1][0] = r[2], b[j + 1][1] = r[3];
                }
          }
        else
          {
#pragma unroll
            for (int j = 0; j < NT; j += 4)
              if (j < ntv)
                {
                  int r[4];
                  hzk_ldsm_x4 (xa + b_off + 8 * j * LD + 16 * s, r);
                  b[j][0] = r[0], b[j + 1][0] = r[1], b[j + 2][0] = r[2], b[j + 3][0] = r[3];
                }
          }
        float2 wdm[MT][2];
#pragma unroll
        for (int i = 0; i < MT; i++)
          {
            wdm[i][0] = sdm[s * BM + wrow + 16 * i + g];
            wdm[i][1] = sdm[s * BM + wrow + 16 * i + g + 8];
          }
#pragma unroll
        for (int j = 0; j < NT; j++)
          {
            if (j >= ntv)
              break;
            float4 ds;     /* (d_a, s_a) of tokens 2·tig and 2·tig + 1 */
            if constexpr (K32)
              {
                /* per token the two runs' (d_a, s_a): d_a is the slot's, s_a their sum */
                const float4 f0 = *(const float4 *) (xam + (s * ldt + wtok + 8 * j + 2 * tig) * SAW);
                const float4 f1 = *(const float4 *) (xam + (s * ldt + wtok + 8 * j + 2 * tig + 1) * SAW);
                ds = make_float4 (f0.x, f0.y + f0.w, f1.x, f1.y + f1.w);
              }
            else
              ds = *(const float4 *) (xam + s * ldt + wtok + 8 * j + 2 * tig);
#pragma unroll
            for (int i = 0; i < MT; i++)
              {
                int c[4];
                if constexpr (K32)
                  hzk_mma_s8_16832 (a[i][0], a[i][1], a[i][2], a[i][3], b[j][0], b[j][1], c);
                else
                  hzk_mma_s8_16816 (a[i][0], a[i][1], b[j][0], c);
                float *o = acc[i][j];
                o[0] = fmaf (wdm[i][0].x * ds.x, hzk_i2f_small (c[0]), o[0]);
                o[1] = fmaf (wdm[i][0].x * ds.z, hzk_i2f_small (c[1]), o[1]);
                o[2] = fmaf (wdm[i][1].x * ds.x, hzk_i2f_small (c[2]), o[2]);
                o[3] = fmaf (wdm[i][1].x * ds.z, hzk_i2f_small (c[3]), o[3]);
                if constexpr (!SYM)
                  {
                    o[0] = fmaf (wdm[i][0].y, ds.y, o[0]);
                    o[1] = fmaf (wdm[i][0].y, ds.w, o[1]);
                    o[2] = fmaf (wdm[i][1].y, ds.y, o[2]);
                    o[3] = fmaf (wdm[i][1].y, ds.w, o[3]);
                  }
              }
          }
      }
  };

  if constexpr (C::ST == 1)
    for (int64_t kt = kt0; kt < kte; kt++)
      {
        const int64_t e0 = kt * KT;
        const int nr = (int) min ((int64_t) KR, (K - e0) / 16);   /* valid runs */
        const int nsv = K32 ? nr / 2 : nr;                         /* valid slots */
        const bool pf = kt + C::PF < kte;      /* prefetch tile kt + PF into L2 */
        __syncthreads ();          /* the previous tile is consumed */
        /* Global loads are issued ahead of their use, in fixed, unrolled counts: each
         * thread loads a group of LU weight units into registers, then decodes them into
         * shared memory; the activations and their scales go to shared memory by cp.async,
         * started after the first group's loads and waited for at the end. A tile costs
         * one or two memory round trips instead of one per loop trip. Weights: (row, unit)
         * pairs, consecutive threads on consecutive units of a row. */
#pragma unroll 1
        for (int i0 = 0; i0 < UPT; i0 += LU)
          {
            uint4 q[LU][CH];
#pragma unroll
            for (int k = 0; k < LU; k++)
              {
                const int i = i0 + k, p = tid + i * NTH, rl = p / UT, ul = p % UT;
                const int64_t u = kt * UT + ul, r = min (row0 + rl, n_rows - 1);
                if (i < UPT && (BM * UT % NTH == 0 || p < BM * UT) && u < nu)
                  {
                    const uint8_t *P = w + (size_t) r * row_bytes;
                    qdw_load_unit<W> (P, nu, u, q[k]);
                    if (pf && u + C::PF * UT < nu)         /* within the row */
                      {
#pragma unroll
                        for (int c = 0; c < CH; c++)
                          hzk_mm_prefetch_l2 (P + ((size_t) c * nu + u + C::PF * UT) * 16);
                        if (u % T::units_per_block == 0)
                          hzk_mm_prefetch_l2 (M + (size_t) (r * nb + u / T::units_per_block + C::PF * BPT)
                                                      * T::meta_bytes);
                      }
                  }
              }
            if (i0 == 0)
              copy_acts (sa, sam, BN, e0, nr, nsv);
#pragma unroll
            for (int k = 0; k < LU; k++)
              {
                const int i = i0 + k, p = tid + i * NTH, rl = p / UT, ul = p % UT;
                const int64_t u = kt * UT + ul, r = min (row0 + rl, n_rows - 1);
                if (i < UPT && (BM * UT % NTH == 0 || p < BM * UT) && u < nu)
                  {
                    const int64_t b = u / T::units_per_block;
                    put_unit (q[k], M + (size_t) (r * nb + b) * T::meta_bytes, rl, b,
                              (int) (u % T::units_per_block), kt);
                  }
              }
          }
        hzk_cp_async_wait_all ();
        __syncthreads ();
        if (ntv == 0)
          continue;
        mma_slots (sa, sam, BN, nsv);
      }
  else
    {
      constexpr int PB = F::RAWP (BM), MCH = F::MCH, MB = BM * MCH * 16;
      constexpr int PC = BM * CH * UT, PPT = (PC + NTH - 1) / NTH;   /* payload chunks */
      constexpr int MC = BM * MCH, MPT = (MC + NTH - 1) / NTH;      /* meta chunks */
      const int ta = qmmq_pipe_rows<W, C> (n_tok);
      const int sbytes = qmmq_pipe_stage_bytes<W, C> (ta);
      const size_t meta_end = (size_t) n_rows * nb * T::meta_bytes;
      const int64_t nk = kte - kt0;

      /* copies of K tile kt's raw weights into base: payload chunks (row, chunk, unit),
       * consecutive threads on consecutive 16 bytes, then the rows' meta spans */
      auto issue_raw = [&] (int64_t kt, uint8_t *base) {
#pragma unroll
        for (int i = 0; i < PPT; i++)
          {
            const int p = tid + i * NTH;
            if (PC % NTH == 0 || p < PC)
              {
                const int rl = p / (CH * UT), c = (p / UT) % CH, ul = p % UT;
                const int64_t u = kt * UT + ul, r = min (row0 + rl, n_rows - 1);
                hzk_cp_async16 (base + p * 16,
                                w + (size_t) r * row_bytes + ((size_t) c * nu + min (u, nu - 1)) * 16,
                                u < nu);
              }
          }
        const int64_t b0 = kt * BPT;
        const int nbt = (int) min ((int64_t) BPT, nb - b0);      /* blocks of the tile */
#pragma unroll
        for (int i = 0; i < MPT; i++)
          {
            const int p = tid + i * NTH;
            if (MC % NTH == 0 || p < MC)
              {
                const int rl = p / MCH, j = p % MCH;
                const int64_t r = min (row0 + rl, n_rows - 1);
                const size_t s0 = (size_t) (r * nb + b0) * T::meta_bytes;
                const size_t c0 = (s0 & ~(size_t) 15) + 16 * (size_t) j;
                const size_t s1 = s0 + (size_t) nbt * T::meta_bytes;
                const int n = c0 >= s1 || c0 >= meta_end ? 0 : (int) min ((size_t) 16, meta_end - c0);
                hzk_cp_async16n (base + PB + p * 16, n ? M + c0 : M, n);
              }
          }
      };
      /* the activations of K tile kt into an activation buffer (ta rows, then scales) */
      auto issue_acts = [&] (int64_t kt, uint8_t *xa) {
        const int64_t e0 = kt * KT;
        const int nr = (int) min ((int64_t) KR, (K - e0) / 16);
        copy_acts (xa, (float2 *) (xa + ta * LD), ta, e0, nr, K32 ? nr / 2 : nr);
      };
      /* K tile kt's raw weights at base decoded into sw / sdm (qdec<W> from shared memory) */
      auto decode_raw = [&] (int64_t kt, const uint8_t *base) {
        const int64_t b0 = kt * BPT;
#pragma unroll
        for (int k = 0; k < UPT; k++)
          {
            const int p = tid + k * NTH, rl = p / UT, ul = p % UT;
            const int64_t u = kt * UT + ul;
            if ((BM * UT % NTH == 0 || p < BM * UT) && u < nu)
              {
                const int64_t r = min (row0 + rl, n_rows - 1);
                uint4 q[CH];
#pragma unroll
                for (int c = 0; c < CH; c++)
                  q[c] = *(const uint4 *) (base + ((rl * CH + c) * UT + ul) * 16);
                const int64_t b = u / T::units_per_block;
                const size_t s0 = (size_t) (r * nb + b0) * T::meta_bytes;
                put_unit (q, base + PB + rl * MCH * 16 + (int) (s0 & 15) + (int) (b - b0) * T::meta_bytes,
                          rl, b, (int) (u % T::units_per_block), kt);
              }
          }
      };
      auto nsv_of = [&] (int64_t kt) {
        const int nr = (int) min ((int64_t) KR, (K - kt * KT) / 16);
        return K32 ? nr / 2 : nr;
      };

      if constexpr (C::DB)
        {
          /* Two decoded buffers D0/D1 (weights [BM][LD], (d, m) [NS][BM]), two raw buffers
           * R0/R1 (PB + MB bytes), two activation buffers A0/A1. Step i (K tile kt0 + i):
           * wait for this thread's copies (raw i + 1, activations i), barrier (everyone's
           * copies visible; step i − 1's reads of D, R, A done), copy raw i + 2 into
           * R[i % 2] and activations i + 1 into A[(i + 1) % 2], decode raw i + 1 from
           * R[(i + 1) % 2] into D[(i + 1) % 2], multiply tile i from D[i % 2] and
           * A[i % 2]. One barrier per K tile; a copy has a whole step to land. */
          constexpr int DBY = BM * LD + NS * BM * 8, RBY = PB + MB;
          constexpr bool A2 = C::DB == 1;    /* two activation buffers (else one) */
          const int aby = sbytes - RBY;
          uint8_t *const rawb = smem + 2 * DBY, *const actb = rawb + 2 * RBY;
          auto use_dec = [&] (int k) {
            sw = smem + k * DBY;
            sdm = (float2 *) (sw + BM * LD);
          };
          if (nk > 0)
            {
              issue_raw (kt0, rawb);
              if (A2)
                issue_acts (kt0, actb);
              hzk_cp_async_commit ();
              if (nk > 1)
                issue_raw (kt0 + 1, rawb + RBY);
              hzk_cp_async_wait_all ();
              __syncthreads ();
              use_dec (0);
              decode_raw (kt0, rawb);
            }
#pragma unroll 1
          for (int64_t i = 0; i < nk; i++)
            {
              const int64_t kt = kt0 + i;
              const int cur = (int) (i & 1), nxt = cur ^ 1;
              hzk_cp_async_wait_all ();
              __syncthreads ();
              if (!A2)          /* one buffer: this step's activations, waited for below */
                {
                  issue_acts (kt, actb);
                  hzk_cp_async_commit ();
                }
              if (i + 2 < nk)
                issue_raw (kt + 2, rawb + cur * RBY);
              if (A2 && i + 1 < nk)
                issue_acts (kt + 1, actb + nxt * aby);
              hzk_cp_async_commit ();
              if (i + 1 < nk)
                {
                  use_dec (nxt);
                  decode_raw (kt + 1, rawb + nxt * RBY);
                }
              if (!A2)
                {
                  hzk_cp_async_wait<1> ();
                  __syncthreads ();
                }
              if (ntv != 0)
                {
                  use_dec (cur);
                  const uint8_t *xa = actb + (A2 ? cur * aby : 0);
                  mma_slots (xa, (const float2 *) (xa + ta * LD), ta, nsv_of (kt));
                }
            }
        }
      else
        {
      /* The ring: stage st holds K tile kt0 + i for i ≡ st (mod n_st). Per K tile: copies
       * of tile i + n_st − 1 are issued into the stage that tile i − 1 left, tile i's are
       * waited for, it is decoded from its stage into sw / sdm and multiplied. Each
       * thread commits one cp.async group per tile (empty past the last), so "all but
       * the newest n_st − 1 groups have landed" is tile i. */
      auto issue = [&] (int64_t kt, int st) {
        uint8_t *base = ring + st * sbytes;
        issue_raw (kt, base);
        issue_acts (kt, base + PB + MB);
      };

#pragma unroll 1
      for (int i = 0; i < n_st - 1; i++)
        {
          if (i < nk)
            issue (kt0 + i, i);
          hzk_cp_async_commit ();
        }
      int st = 0;                     /* stage of tile i */
#pragma unroll 1
      for (int64_t i = 0; i < nk; i++)
        {
          const int64_t kt = kt0 + i;
          __syncthreads ();           /* tile i − 1's stage and sw / sdm are consumed */
          if (i + n_st - 1 < nk)
            issue (kt + n_st - 1, st == 0 ? n_st - 1 : st - 1);
          hzk_cp_async_commit ();
          if (n_st >= 3)
            hzk_cp_async_wait<2> ();  /* n_st is 2 or 3 (the host's choice) */
          else
            hzk_cp_async_wait<1> ();
          __syncthreads ();
          const uint8_t *base = ring + st * sbytes;
          decode_raw (kt, base);
          __syncthreads ();
          if (ntv != 0)
            mma_slots (base + PB + MB, (const float2 *) (base + PB + MB + ta * LD), ta, nsv_of (kt));
          st = st + 1 == n_st ? 0 : st + 1;
        }
        }
    }
  if constexpr (C::WK > 1)
    {
      /* the K slices' partial sums: slice k adds into slice 0 in the order k = 1, 2, ... */
      static_assert (C::WR * C::WC * MT * NT * 4 * 32 * 4 <= BM * LD,
                     "the reduction fits the decoded weights' shared memory");
      float *red = (float *) smem + ((wr * C::WC + wc) * MT * NT * 4) * 32 + lane;
      for (int k = 1; k < C::WK; k++)
        {
          __syncthreads ();
          if (wk == k)
#pragma unroll
            for (int i = 0; i < MT * NT * 4; i++)
              red[32 * i] = (&acc[0][0][0])[i];
          __syncthreads ();
          if (wk == 0)
#pragma unroll
            for (int i = 0; i < MT * NT * 4; i++)
              (&acc[0][0][0])[i] += red[32 * i];
        }
    }
  /* split-K: the warps of K slice 0 hold the tile's sums (holder = their place in it) */
  if (!hzk_splitk_sum<MT * NT * 4, C::WR * C::WC * 32> (&acc[0][0][0], wk == 0,
                                                       (wr * C::WC + wc) * 32 + lane, sk)
      || wk != 0)
    return;
#pragma unroll
  for (int i = 0; i < MT; i++)
#pragma unroll
    for (int j = 0; j < NT; j++)
#pragma unroll
      for (int c = 0; c < 4; c++)
        {
          const int t = tok0 + wtok + 8 * j + 2 * tig + (c & 1);
          const int64_t r = row0 + wrow + 16 * i + g + 8 * (c >> 1);
          if (t < n_tok && r < n_rows)
            y[(size_t) t * ldy + r] = acc[i][j][c];
        }
}

/* ---- float formats --------------------------------------------------------------------- */
/** Tile (bx, by) of the float-format product; tok_row as qmmq_tile_dp4a's (rows of x). */
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
  hzk_mm_store_tile (acc, y, ldy, row0, tok0, tr, tc, n_rows, n_tok);
}

/** Where a block of a (possibly split-K) launch works. Two grids:
 *  2-D (gridDim.y > 1, or n_split 1 with gridDim.y = token tiles): block (bx, by), all K
 *  tiles; 1-D split-K (hzk_mm_splitk_grid): block id = (bx·n_split + split)·nby + by — the
 *  token tiles of the same rows and K range next to each other (their weights come from L2
 *  the second time) — K tiles [split·kps, min((split + 1)·kps, n_kt)). */
struct hzk_mm_place
{
  int64_t bx, kt0, kt1;
  int by;
  hzk_splitk sk;
};

static __device__ __forceinline__ hzk_mm_place
hzk_mm_block_place (int nby, int n_split, int kps, float *part, int *cnt)
{
  hzk_mm_place pl;
  if (n_split <= 1)
    {
      pl.bx = blockIdx.x, pl.by = blockIdx.y, pl.kt0 = 0, pl.kt1 = -1;
      pl.sk = hzk_splitk{};
      return pl;
    }
  int64_t id = blockIdx.x;
  pl.by = (int) (id % nby);
  id /= nby;
  const int split = (int) (id % n_split);
  pl.bx = id / n_split;
  pl.kt0 = (int64_t) split * kps;
  pl.kt1 = pl.kt0 + kps;
  pl.sk = hzk_splitk{ part, cnt, n_split, split, pl.bx * nby + pl.by,
                      (int64_t) gridDim.x / n_split };
  return pl;
}

/** The dp4a tile kernel: grid of (row tiles of 64, token tiles of 32), or the split-K grid
 *  of hzk_mm_block_place (n_split > 1; kps K tiles of 256 per split; part/cnt the
 *  workspace of hzk_splitk_sum). */
template <int W>
__global__ void __launch_bounds__ (HZK_MM_THREADS)
qmmq_core (const uint8_t *HZK_RESTRICT w, int64_t n_rows, int64_t K, int n_tok,
           const int8_t *HZK_RESTRICT aq, const float2 *HZK_RESTRICT am, float *HZK_RESTRICT y,
           int64_t ldy, int nby, int n_split, int kps, float *part, int *cnt)
{
  const hzk_mm_place pl = hzk_mm_block_place (nby, n_split, kps, part, cnt);
  const int64_t n_kt = (K + HZK_MM_KT - 1) / HZK_MM_KT;
  qmmq_tile_dp4a<W> (w, n_rows, K, n_tok, nullptr, aq, am, y, ldy, pl.bx, pl.by, pl.kt0,
                     pl.kt1 < 0 ? -1 : min (pl.kt1, n_kt), pl.sk);
}

/** The tensor-core kernel: grid of C's tiles (row tiles, token tiles; tok_fast: (token
 *  tiles, row tiles), so that the blocks of one row tile run side by side and its weights
 *  come from DRAM once) or the split-K grid as qmmq_core (kps K tiles of C::KT per split),
 *  qmmq_mma_smem_bytes<W, C>(ta, n_st) bytes of dynamic shared memory (hzk_mm_prepare;
 *  ta = qmmq_pipe_rows<W, C>(n_tok) and n_st ring stages for the pipelined tile, C::ST > 1;
 *  else the defaults). */
template <int W, class C>
__global__ void __launch_bounds__ (C::threads, C::min_blocks)
qmmq_mma_core (const uint8_t *HZK_RESTRICT w, int64_t n_rows, int64_t K, int n_tok,
               const int8_t *HZK_RESTRICT aq, const float2 *HZK_RESTRICT am,
               float *HZK_RESTRICT y, int64_t ldy, int nby, int n_split, int kps, float *part,
               int *cnt, int n_st, int tok_fast)
{
  extern __shared__ int4 hzk_mm_smem[];
  hzk_mm_place pl = hzk_mm_block_place (nby, n_split, kps, part, cnt);
  if (tok_fast && n_split <= 1)
    {
      pl.by = (int) blockIdx.x;
      pl.bx = blockIdx.y;
    }
  const int64_t n_kt = (K + C::KT - 1) / C::KT;
  qmmq_mma_tile<W, C> (w, n_rows, K, n_tok, nullptr, aq, am, y, ldy, pl.bx, pl.by,
                       (uint8_t *) hzk_mm_smem, pl.kt0, pl.kt1 < 0 ? -1 : min (pl.kt1, n_kt),
                       pl.sk, n_st);
}

template <int W>
__global__ void __launch_bounds__ (HZK_MM_THREADS)
qmmf_core (const uint8_t *HZK_RESTRICT w, int64_t n_rows, int64_t K, int n_tok,
           const float *HZK_RESTRICT x, float *HZK_RESTRICT y, int64_t ldy)
{
  qmmf_tile<W> (w, n_rows, K, n_tok, nullptr, x, y, ldy, blockIdx.x, blockIdx.y);
}

#include <stdlib.h>
#include <string.h>
/** The device's multiprocessor count (asked once per translation unit; 1 on failure). */
static int
hzk_mm_sm_count (void)
{
  static int n = 0;
  if (n < 1)
    {
      int dev = 0, c = 0;
      n = hipGetDevice (&dev) == hipSuccess
              && hipDeviceGetAttribute (&c, hipDeviceAttributeMultiprocessorCount, dev) == hipSuccess
              && c > 0 ? c : 1;
    }
  return n;
}

#if defined(HZK_CUDA)
/** Attribute a of the current device, or fallback when it cannot be read or is not
 *  positive. */
static int
hzk_mm_dev_attr (cudaDeviceAttr a, int fallback)
{
  int dev = 0, c = 0;
  return cudaGetDevice (&dev) == cudaSuccess && cudaDeviceGetAttribute (&c, a, dev) == cudaSuccess
             && c > 0 ? c : fallback;
}

/** Shared memory per multiprocessor in bytes (asked once per translation unit; 64 KiB on
 *  failure). */
static int
hzk_mm_smem_per_sm (void)
{
  static int n = 0;
  if (n < 1)
    n = hzk_mm_dev_attr (cudaDevAttrMaxSharedMemoryPerMultiprocessor, 64 * 1024);
  return n;
}

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

/** Which small tile serves products of up to 32 tokens (and up to 64 where the big tile's
 *  grid would not fill the device), from HZ_GPU_MMQ_PIPE (asked once per translation
 *  unit): unset or 0 hzk_mmq_small (the default), 1 hzk_mmq_pipe for every format, 2 by
 *  format — hzk_mmq_pipe where hzk_mmq_small waits for more than one round trip of weight
 *  loads per K tile (hzk_mmq_load_groups: Q8_0), else hzk_mmq_small. Never by the token
 *  count, so a token's sums do not depend on it. With 1 or 2 the MoE grouped products
 *  (kernels/moe.hip, always hzk_mmq_small) are no longer bit-identical to the dense
 *  products of those formats (test-moe checks that equality): MoE must follow the same
 *  rule before 2 can become the default. */
static int
hzk_mm_pipe_mode (void)
{
  static int mode = -1;
  if (mode < 0)
    {
      const char *e = getenv ("HZ_GPU_MMQ_PIPE");
      mode = e && (strcmp (e, "1") == 0 || strcmp (e, "2") == 0) ? atoi (e) : 0;
    }
  return mode;
}

/** Which prefill tile serves the products that take the big tile, from HZ_GPU_MMQ_BIG
 *  (asked once per translation unit): 0 hzk_mmq_big, 1 hzk_mmq_bigp (pipelined, 8 warps),
 *  2 hzk_mmq_bigp16 (pipelined, 16 warps), unset or 3 hzk_mmq_bigp128 (pipelined, 128
 *  tokens, 16 warps; products of 128 tokens or more, hzk_mmq_big below), 4
 *  hzk_mmq_bigp128a where it fits (else as 3), 5 hzk_mmq_bigp96. A pipelined tile
 *  whose shared memory does not fit the device (hzk_mm_smem_optin) falls back to
 *  hzk_mmq_big. All four give bit-identical sums (the same warp tiles and order). On an
 *  H200 (docs/PERFORMANCE.md) 1 and 2 were slower than 0, 3 faster. */
static int
hzk_mm_big_mode (void)
{
  static int mode = -1;
  if (mode < 0)
    {
      const char *e = getenv ("HZ_GPU_MMQ_BIG");
      mode = e && *e >= '0' && *e <= '5' && !e[1] ? *e - '0' : 3;
    }
  return mode;
}

/** The most dynamic shared memory one block may opt in to, in bytes (asked once per
 *  translation unit; 48 KiB on failure). */
static int
hzk_mm_smem_optin (void)
{
  static int n = 0;
  if (n < 1)
    n = hzk_mm_dev_attr (cudaDevAttrMaxSharedMemoryPerBlockOptin, 48 * 1024);
  return n;
}

/** Grid order of the pipelined prefill tiles, from HZ_GPU_MMQ_ORDER (asked once per
 *  translation unit): unset or 1 token tiles fastest (a row tile's blocks side by side),
 *  0 row tiles fastest (the other tiles' order). */
static int
hzk_mm_tok_fast (void)
{
  static int mode = -1;
  if (mode < 0)
    {
      const char *e = getenv ("HZ_GPU_MMQ_ORDER");
      mode = !(e && strcmp (e, "0") == 0);
    }
  return mode;
}

/** HZ_GPU_MMQ_TILE=big / small forces the tensor-core tile of hzk_matmul (tests and
 *  benchmarks; default: chosen by shape): 1 big, 2 small, 0 by shape (asked once per
 *  translation unit). */
static int
hzk_mm_tile_pref (void)
{
  static int pref = -1;
  if (pref < 0)
    {
      const char *e = getenv ("HZ_GPU_MMQ_TILE");
      pref = !e ? 0 : strcmp (e, "big") == 0 ? 1 : strcmp (e, "small") == 0 ? 2 : 0;
    }
  return pref;
}

/** Allows kernel k its `bytes` of dynamic shared memory (above the 48 KiB default; once
 *  per kernel: call it from a function template instantiated per kernel). Returns the
 *  runtime's status. */
template <typename K>
static int
hzk_mm_prepare (K kernel, int bytes, bool *done)
{
  if (*done || bytes <= 48 * 1024)
    return 0;
  const cudaError_t e = cudaFuncSetAttribute (kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  *done = e == cudaSuccess;
  return (int) e;
}
#endif
