/* kernels/qmmq.hip — prefill matrix multiplication for every format with a device decoder:
 * qmmq_core<W> (integer formats: int8 dot products, one body, the per-format decoder
 * qdec<W> of kernels/qdec.h) and qmmf_core<W> (float formats F32/F16/BF16 and the F16
 * fallback: fp32 FMA), both behind one launcher type HzkMatmulFn (kernels/hzk.h).
 *
 *   y[t·ldy + r] = Σ_k W[r][k] · x[t][k]     r < n_rows, t < n_tok
 *
 * W: n_rows × K in the split-block layout of kernels/qdec.h (the matvec's tensors, no
 * second copy). Integer formats read the activations quantized per token exactly as the
 * decode matvec reads them (hzk_quantize_act layout with batch = n_tok: aq[t][K] int8,
 * am[t][K/16] = {d_a, s_a}; the fused norm / SwiGLU kernels of decode.hip write it for
 * n_tok rows in the CPU's Q8_0 / Q8_1 / Q8_K schemes), so prefill and decode dot the same
 * int8 values. Float formats read x [n_tok][K] fp32.
 *
 * Decoding (integer formats, every tile kind). A block walks K in tiles of KT = 256
 * elements (one K-quant block, eight legacy blocks; 1024 for the small tensor-core tile).
 * Per K tile all its threads load and decode the block's rows' units once (qdec<W>::decode: runs of 16 int8 values v with a
 * scale d and offset m, w = d·v + m) into shared memory — 16 runs per row, stored at their
 * element position, rows padded by 16 bytes so that 8 consecutive rows hit distinct banks —
 * and copy the tokens' int8 activations and (d_a, s_a) next to them; then
 *   acc[r][t] += (d_r·d_a,t) · Σ v·q_a   (+ m_r · s_a,t)
 * i.e. the decode matvec's arithmetic (kernels/qmatvec.hip) on a tile. K tails (legacy
 * formats with K % 256 != 0) run only the tile's valid runs; row and token tails load
 * clamped indices and do not store.
 * Tensor cores (CUDA, compute capability >= 8.0; HZ_GPU_MMQ=dp4a turns them off):
 * qmmq_mma_core<W, C>, the Σ v·q_a by mma.sync .s8 with the fragments read by ldmatrix
 * from the padded rows. Formats whose scales cover 32 elements or more (all but Q6_K and
 * Q2_K) take two runs in one m16n8k32 product (the activations' d_a is per 32 or 256, so
 * it is shared too), with (d, m) and (d_a, s_a) stored once per 32-element slot (s_a of
 * the two runs added at the copy); Q6_K, Q2_K one m16n8k16 product per run. Two block
 * shapes (hzk_mmq_cfg):
 *   big    128 rows × 64 tokens, 8 warps of 32 rows × 32 tokens (2 × 4 products per k
 *          step: each A fragment used 4 times, each B fragment twice), 64–77 KB of
 *          dynamic shared memory, 2 blocks per SM — prefill passes, when the grid has at
 *          least one block per SM;
 *   small  32 rows × 32 tokens, 8 warps of 16 rows × 32 tokens, K tiles of 1024
 *          elements with one 256-element slice per warp (partial sums added in shared
 *          memory at the end, fixed order), n tiles past the last token skipped, 89–97 KB
 *          of dynamic shared memory, 2 blocks per SM — up to 32 tokens (the serving step's
 *          batched decode, speculative decoding, GRPO rollouts), small grids, and the MoE
 *          expert tiles: 4× the blocks of a 64-row tile, four 256-element tiles' loads in
 *          flight per synchronisation.
 * Both prefetch the weights of the next K tile into L2 while decoding the current one
 * (prefetch.global.L2: no registers), load their weight units in unrolled groups ahead of
 * decoding them (hzk_mmq_cfg::LA chunks per thread: all of a small tile's, two of a big
 * tile's) and copy the activations and their scales with cp.async while the weights
 * arrive, so a K tile costs about one memory round trip (the first version issued one or
 * two loads per loop trip and waited for each: ~5 µs per K tile of the small tile). The
 * int32 sums become floats by an integer add and a float subtract (hzk_i2f_small) instead
 * of the slower conversion instruction.
 * Split-K (opt-in, HZ_GPU_MMQ_SPLIT=N: slower on an H200 so far, see below at the
 * launchers; products of up to HZK_MM_SPLIT_TOK = 64 tokens whose row tiles do not give
 * HZK_MM_SPLIT_BLOCKS = 4 blocks per SM, with the workspace of hzk_matmul_ws_bytes): the
 * K tiles are dealt to n_split blocks per output tile (a 1-D grid, the token tiles of a
 * row tile and K range adjacent); each block writes its partial tile to the workspace and
 * the last of the n_split to finish (an atomic counter per tile) adds them in split
 * order and stores (hzk_splitk_sum in qmmq-core.h): deterministic, one launch, and
 * n_split depends on the rows and K only, so a token's output is the same whatever the
 * other tokens of the product (4096 × 4096 at 16 tokens: 128 row tiles × 4 splits).
 * Same for the dp4a tile (AMD: 64-row tiles). Up to 32 tokens the small tile is used
 * whatever the grid, so a product's per-token sums do not depend on the token count there
 * (the serving step's row-invariant mode); above, the big tile where its grid fills the
 * device. Rows of the activation tile past the last token are zero-filled, not copies of
 * the last token (fetching the same addresses up to 8 times per block cost 12 µs at 1..7
 * tokens on 4096 × 4096).
 * HZ_GPU_MMQ_TILE=big|small forces one (tests, benchmarks). Tried on an H200 at 512
 * tokens and dropped: 64 × 64 blocks of 4 warps (the big tile's warp tile, 4 blocks per
 * SM): 8–16 % slower than big; 128 × 128 blocks of 8 warps of 32 × 64 (half the decode
 * work per product, 1 block per SM): 20–32 % slower (pp512 of a 7B Q4_0 5,841 against
 * 8,028 tokens/s); big with K tiles of 512 (twice the loads per synchronisation, 1 block
 * per SM): 10–22 % slower (6,445 tokens/s). Occupancy (2 blocks per SM) matters more than
 * reuse here.
 * dp4a / sdot4 (AMD under hipcc, NVIDIA before sm_80): qmmq_core<W>, 128 threads on
 * BM = 64 rows × BN = 32 tokens, each thread 4 rows × 4 tokens (rows tid%16 + 16i,
 * tokens tid/16 + 8j), four dp4a per run.
 * Float formats: the same tile over K tiles of 64 elements decoded to fp32 (decode_f),
 * x tiles in fp32, 4 × 4 FMA per thread and element.
 *
 * Pipelined small tile (opt-in, HZ_GPU_MMQ_PIPE=1 every format, =2 where the small tile
 * needs more than one round trip of weight loads per K tile — Q8_0): hzk_mmq_pipe, the
 * small tile's warps on K tiles of 512 with a ring of up to 3 shared-memory stages, each
 * one K tile's raw weight blocks (payload chunks and meta bytes as stored, decoded from
 * shared memory by the same qdec<W>) and activations, filled by cp.async two tiles ahead
 * (qmmq_mma_tile, C::ST > 1). On an H200 Q8_0 1.1-1.5x, the 4-bit formats -7..+13 %: their
 * small tile is bound by instructions and shared-memory latency at 8 warps per SM (ncu:
 * IPC 1.4, 48 % excess shared wavefronts), not by loads in flight; a 16-warp variant and
 * split-K on top were slower (docs/PERFORMANCE.md). Not the default until the MoE grouped
 * products (moe.hip, hzk_mmq_small) follow the same rule: test-moe requires them to be
 * bit-identical to the dense products.
 * Tried and dropped: a register prefetch of tile kt + 1 during the compute of tile kt
 * (software pipeline, on the earlier 64 × 32 tensor-core tile) raised the register count
 * to 130..220 and lost more to occupancy than it hid (pp512 of a 7B Q4_0: 3,423 against
 * 4,935 tokens/s on an H200). (The dp4a tile does prefetch the next K tile's raw units
 * into registers: 4..32 registers there, AMD's portable twin of the ring.)
 * Pipelined prefill tiles (issue 22; qmmq_mma_tile with C::DB): the decoded weights and
 * the raw weight blocks double-buffered in shared memory — while the warps multiply K tile
 * k from decoded buffer k % 2 they decode tile k + 1 from its raw buffer into the other,
 * and cp.async brings the raw blocks of tile k + 2 (and the activations) — so every weight
 * load is a whole K tile ahead of its use. hzk_mmq_bigp128, the default above 127 tokens
 * (HZ_GPU_MMQ_BIG, hzk_mm_big_mode): 128 rows × 128 tokens, 16 warps of 32 × 32 (the big
 * tile's warp tile and slot order, so bit-identical sums), one activation buffer, one
 * block per SM, the token tiles of a row tile launched side by side (HZ_GPU_MMQ_ORDER);
 * on an H200 6–21 % faster per pass than the big tile. The same pipeline at 128 × 64 with
 * 8 warps (=1) or 16 warps with the K slots split (=2) was 13 % / 5 % slower: one block
 * of 8 warps per SM hides less than two blocks without a pipeline; 128 × 128 with two
 * activation buffers (=4, one barrier per K tile, 224 KB) within ±2 % of =3; 96 × 128 with
 * 12 warps (=5, even waves for 22016 rows) 2–3 % faster there, 35–60 % slower on 4096
 * rows. ncu: the default tile issues 1.64× the instructions of llama.cpp's mul_mat_q per
 * product at a similar IPC — the epilogue per mma, not memory, is what is left
 * (docs/PERFORMANCE.md). Formats whose decoder names a zero point (qdec<W>::zero_point:
 * Q4_0) store v − z in the tiles and take the symmetric arithmetic (no m·s_a term; Q4_0
 * 1.14–1.19× per product on an H200). The portable twin is
 * the dp4a tile's register prefetch (AMD); the cp.async helpers are plain copies there.
 * Not yet: TMA / wgmma, AMD matrix cores. Reading
 * reference (not copied): ggml-cuda mmq.cuh, the PTX ISA's mma and ldmatrix fragment
 * layouts.
 */
#include "qmmq-core.h"
#include "hzk.h"

/* ---- launchers, dispatch ---------------------------------------------------------------- */

/* Split-K (few tokens; opt-in: HZ_GPU_MMQ_SPLIT=N, at most N splits). A product of at most
 * HZK_MM_SPLIT_TOK tokens whose row tiles are fewer than HZK_MM_SPLIT_BLOCKS blocks per
 * multiprocessor is split over K: n_split blocks per output tile, each a contiguous range of
 * K tiles, their partial sums added in split order by the tile's last block
 * (hzk_splitk_sum). n_split follows from the row tiles and K alone, never from the token
 * count, so a token's result is the same in a product of 1 or of 64 tokens. Off by default:
 * on an H200 it made the small tile slower (4096 x 4096 Q4_0: 29.6 µs instead of 15.2 at
 * 1..8 tokens with 4 splits; docs/PERFORMANCE.md): each block's life is one serial chain
 * of latencies (load, decode, product, reduction, hand-over) and at 2 blocks per SM
 * (registers and shared memory) more, shorter blocks hide none of it. */
#define HZK_MM_SPLIT_TOK 64
#define HZK_MM_SPLIT_BLOCKS 4

/** The HZ_GPU_MMQ_SPLIT cap on the splits (1: no split, the default), asked once. */
static int64_t
hzk_mm_split_cap (void)
{
  static int64_t cap = -1;
  if (cap < 0)
    {
      const char *e = getenv ("HZ_GPU_MMQ_SPLIT");
      cap = e && atoi (e) > 1 ? atoi (e) : 1;
    }
  return cap;
}

/** Splits of a product of nbx row tiles over n_kt K tiles: about HZK_MM_SPLIT_BLOCKS
 *  blocks per multiprocessor, at most n_kt and the cap, no empty split; *kps = K tiles
 *  per split. */
static int
hzk_mm_n_split (int64_t nbx, int64_t n_kt, int *kps)
{
  const int64_t target = (int64_t) HZK_MM_SPLIT_BLOCKS * hzk_mm_sm_count ();
  const int64_t cap = hzk_mm_split_cap ();
  int64_t s = nbx >= target ? 1 : (target + nbx - 1) / nbx;
  s = s > n_kt ? n_kt : s;
  s = s > cap ? cap : s < 1 ? 1 : s;
  const int64_t per = (n_kt + s - 1) / s;
  *kps = (int) per;
  return (int) ((n_kt + per - 1) / per);
}

/* Workspace layout: counters [HZK_MM_WS_TILES] ints, then partial sums. Tiles of a split
 * launch: nbx < target row tiles, at most HZK_MM_SPLIT_TOK / 32 token tiles; partials:
 * n_split·nbx < 2·target row tiles of hzk_mm_tile_floats () each per token tile (64 × 32
 * for the dp4a tile, 32 × 32 for the small tensor-core tile). */
static size_t
hzk_mm_ws_tiles (void)
{
  return (size_t) HZK_MM_SPLIT_BLOCKS * hzk_mm_sm_count () * (HZK_MM_SPLIT_TOK / HZK_MM_BN);
}

/** Floats of one output tile of the split-K kernel this device runs. */
static size_t
hzk_mm_tile_floats (void)
{
#if defined(HZK_CUDA)
  if (hzk_mm_use_mma ())
    return (size_t) hzk_mmq_small::BM * hzk_mmq_small::BN;
#endif
  return (size_t) HZK_MM_BM * HZK_MM_BN;
}

extern "C" size_t
hzk_matmul_ws_bytes (void)
{
  if (hzk_mm_split_cap () <= 1)
    return 0;
  return hzk_align256 (sizeof (int) * hzk_mm_ws_tiles ())
         + sizeof (float) * 2 * hzk_mm_ws_tiles () * hzk_mm_tile_floats ();
}

/** Split-K geometry of a launch of BM × BN tiles over K tiles of KT elements: n_split
 *  (1: the plain 2-D grid), kps, and the grid. ws NULL, more than HZK_MM_SPLIT_TOK tokens
 *  or a grid that fills the device: no split. */
struct hzk_mm_grid
{
  dim3 grid;
  int nby, n_split, kps;
  float *part;
  int *cnt;
};

static hzk_mm_grid
hzk_mm_make_grid (int64_t n_rows, int64_t K, int n_tok, int BM, int BN, int KT, void *ws)
{
  hzk_mm_grid g;
  const int64_t nbx = (n_rows + BM - 1) / BM;
  g.nby = (n_tok + BN - 1) / BN;
  g.n_split = 1;
  g.kps = 0;
  g.part = NULL;
  g.cnt = NULL;
  if (ws && n_tok <= HZK_MM_SPLIT_TOK)
    g.n_split = hzk_mm_n_split (nbx, (K + KT - 1) / KT, &g.kps);
  if (g.n_split > 1 && (size_t) (nbx * g.nby) <= hzk_mm_ws_tiles ()
      && (size_t) (g.n_split * nbx * g.nby) * BM * BN <= 2 * hzk_mm_ws_tiles () * hzk_mm_tile_floats ())
    {
      g.grid = dim3 ((unsigned) (nbx * g.n_split * g.nby), 1);
      g.cnt = (int *) ws;
      g.part = (float *) ((uint8_t *) ws + hzk_align256 (sizeof (int) * hzk_mm_ws_tiles ()));
      return g;
    }
  g.n_split = 1;
  g.grid = dim3 ((unsigned) nbx, (unsigned) g.nby);
  return g;
}

#if defined(HZK_CUDA)
/** Opts qmmq_mma_core<W, C> in to its dynamic shared memory (once). */
template <int W, class C>
static int
hzk_mma_prepare (void)
{
  static bool ready = false;
  return hzk_mm_prepare (qmmq_mma_core<W, C>, qmmq_mma_smem_bytes<W, C> (), &ready);
}

/** HZ_GPU_MMQ_STAGES=N caps the pipelined tile's ring at N stages (2 or more; tuning and
 *  benchmarks; default: no cap), asked once. */
static int
hzk_mm_stage_cap (void)
{
  static int cap = -1;
  if (cap < 0)
    {
      const char *e = getenv ("HZ_GPU_MMQ_STAGES");
      cap = e && atoi (e) >= 2 ? atoi (e) : 1 << 20;
    }
  return cap;
}

/** Ring stages of the pipelined tile C (C::ST > 1) for a grid of n_blocks blocks with ta
 *  activation rows per stage: C::ST (or the HZ_GPU_MMQ_STAGES cap), one fewer (down to 2)
 *  while two blocks per multiprocessor would not fit in shared memory, the tile's
 *  registers allow two (min_blocks) and the grid has more blocks than multiprocessors (there a second resident block hides more than a
 *  deeper ring: 11008 rows at 32 tokens); 1 for the other tiles. */
template <int W, class C>
static int
hzk_mma_stages (int64_t n_blocks, int ta)
{
  if (C::ST == 1)
    return 1;
  int st = C::ST < hzk_mm_stage_cap () ? C::ST : hzk_mm_stage_cap ();
  if (C::min_blocks >= 2 && n_blocks > hzk_mm_sm_count ())
    while (st > 2 && 2 * (qmmq_mma_smem_bytes<W, C> (ta, st) + 1024) > hzk_mm_smem_per_sm ())
      st--;
  return st;
}

/** qmmq_mma_core<W, C> over the whole product (grid of C's tiles, split over K where
 *  ws allows and the product is small: hzk_mm_make_grid; the pipelined tile's shared
 *  memory sized by the token count and stages). */
template <int W, class C>
static int
hzk_mma_launch (const void *w, int64_t n_rows, int64_t K, int n_tok, const int8_t *aq,
                const void *am, float *y, int64_t ldy, void *ws, void *stream)
{
  const int e = hzk_mma_prepare<W, C> ();
  if (e)
    return e;
  const hzk_mm_grid g = hzk_mm_make_grid (n_rows, K, n_tok, C::BM, C::BN, C::KT, ws);
  const int ta = C::ST > 1 ? qmmq_pipe_rows<W, C> (n_tok) : C::BN;
  const int n_st = hzk_mma_stages<W, C> ((int64_t) g.grid.x * g.grid.y, ta);
  const int bytes = qmmq_mma_smem_bytes<W, C> (ta, n_st);
  /* the pipelined prefill tiles: token tiles fastest (hzk_mm_tok_fast) */
  const int tf = C::DB && g.n_split == 1 && hzk_mm_tok_fast ();
  const dim3 grid = tf ? dim3 (g.grid.y, g.grid.x) : g.grid;
  qmmq_mma_core<W, C><<<grid, C::threads, bytes, (hipStream_t) stream>>> (
      (const uint8_t *) w, n_rows, K, n_tok, aq, (const float2 *) am, y, ldy, g.nby, g.n_split,
      g.kps, g.part, g.cnt, n_st, tf);
  return (int) hipGetLastError ();
}
#endif

template <int W>
static int
hzk_matmul_launch (const void *w, int64_t n_rows, int64_t K, int n_tok, const int8_t *aq,
                   const void *am, const float *x, float *y, int64_t ldy, void *ws, void *stream)
{
  if (n_tok < 1 || n_rows < 1 || ldy < n_rows)
    return (int) hipErrorInvalidValue;
  if constexpr (qdw_traits<W>::is_float)
    {
      const dim3 grid ((unsigned) ((n_rows + HZK_MM_BM - 1) / HZK_MM_BM),
                       (unsigned) ((n_tok + HZK_MM_BN - 1) / HZK_MM_BN));
      qmmf_core<W><<<grid, HZK_MM_THREADS, 0, (hipStream_t) stream>>> (
          (const uint8_t *) w, n_rows, K, n_tok, x, y, ldy);
    }
  else
    {
#if defined(HZK_CUDA)
      if (hzk_mm_use_mma ())
        {
          /* the 128 × 64 tile for more than 32 tokens where it fills the device, else
           * 32 × 32 tiles (split over K up to HZK_MM_SPLIT_TOK tokens) */
          using B = hzk_mmq_big;
          using S = hzk_mmq_small;
          using P = hzk_mmq_pipe;
          using BP = hzk_mmq_bigp;
          using BP16 = hzk_mmq_bigp16;
          using BP128 = hzk_mmq_bigp128;
          using BP128A = hzk_mmq_bigp128a;
          using BP96 = hzk_mmq_bigp96;
          constexpr bool a_fits = qmmq_mma_smem_bytes<W, BP128A> () <= 227 * 1024;
          const int64_t bx = (n_rows + B::BM - 1) / B::BM, by = (n_tok + B::BN - 1) / B::BN;
          const int pref = hzk_mm_tile_pref ();
          /* every tile's opt-in at the first product of W (a prefill, not a captured
           * decode step: the attribute call is no stream operation) */
          static bool first = true;
          if (first)
            {
              first = false;
              hzk_mma_prepare<W, B> ();
              hzk_mma_prepare<W, S> ();
              hzk_mma_prepare<W, P> ();
              if (qmmq_mma_smem_bytes<W, BP> () <= hzk_mm_smem_optin ())
                hzk_mma_prepare<W, BP> ();
              if (qmmq_mma_smem_bytes<W, BP16> () <= hzk_mm_smem_optin ())
                hzk_mma_prepare<W, BP16> ();
              if (qmmq_mma_smem_bytes<W, BP128> () <= hzk_mm_smem_optin ())
                hzk_mma_prepare<W, BP128> ();
              if constexpr (a_fits)
                if (qmmq_mma_smem_bytes<W, BP128A> () <= hzk_mm_smem_optin ())
                  hzk_mma_prepare<W, BP128A> ();
              if (qmmq_mma_smem_bytes<W, BP96> () <= hzk_mm_smem_optin ())
                hzk_mma_prepare<W, BP96> ();
            }
          if (pref == 1 || (pref == 0 && n_tok > HZK_MM_BN && bx * by >= hzk_mm_sm_count ()))
            {
              /* hzk_mm_big_mode: the software-pipelined prefill tiles (default: 128 × 128
               * from 128 tokens) */
              const int bm = hzk_mm_big_mode ();
              if (bm == 1 && qmmq_mma_smem_bytes<W, BP> () <= hzk_mm_smem_optin ())
                return hzk_mma_launch<W, BP> (w, n_rows, K, n_tok, aq, am, y, ldy, NULL, stream);
              if (bm == 2 && qmmq_mma_smem_bytes<W, BP16> () <= hzk_mm_smem_optin ())
                return hzk_mma_launch<W, BP16> (w, n_rows, K, n_tok, aq, am, y, ldy, NULL, stream);
              if constexpr (a_fits)
                if (bm == 4 && n_tok >= BP128A::BN
                    && qmmq_mma_smem_bytes<W, BP128A> () <= hzk_mm_smem_optin ())
                  return hzk_mma_launch<W, BP128A> (w, n_rows, K, n_tok, aq, am, y, ldy, NULL, stream);
              if (bm == 5 && n_tok >= BP96::BN
                  && qmmq_mma_smem_bytes<W, BP96> () <= hzk_mm_smem_optin ())
                return hzk_mma_launch<W, BP96> (w, n_rows, K, n_tok, aq, am, y, ldy, NULL, stream);
              if (bm >= 3 && n_tok >= BP128::BN
                  && qmmq_mma_smem_bytes<W, BP128> () <= hzk_mm_smem_optin ())
                return hzk_mma_launch<W, BP128> (w, n_rows, K, n_tok, aq, am, y, ldy, NULL, stream);
              return hzk_mma_launch<W, B> (w, n_rows, K, n_tok, aq, am, y, ldy, NULL, stream);
            }
          /* opt-in (hzk_mm_pipe_mode): the pipelined tile, or with 2 only where the small
           * one waits for more than one round trip of weight loads per K tile (Q8_0:
           * 1.3-1.5x on an H200; where it waits for one — 4-bit formats — the pipelined
           * tile was no faster, docs/PERFORMANCE.md) */
          const int pm = hzk_mm_pipe_mode ();
          if (pm == 1 || (pm == 2 && hzk_mmq_load_groups<W, S> () > 1))
            return hzk_mma_launch<W, P> (w, n_rows, K, n_tok, aq, am, y, ldy, ws, stream);
          return hzk_mma_launch<W, S> (w, n_rows, K, n_tok, aq, am, y, ldy, ws, stream);
        }
#endif
      const hzk_mm_grid g = hzk_mm_make_grid (n_rows, K, n_tok, HZK_MM_BM, HZK_MM_BN, HZK_MM_KT, ws);
      qmmq_core<W><<<g.grid, HZK_MM_THREADS, 0, (hipStream_t) stream>>> (
          (const uint8_t *) w, n_rows, K, n_tok, aq, (const float2 *) am, y, ldy, g.nby,
          g.n_split, g.kps, g.part, g.cnt);
    }
  return (int) hipGetLastError ();
}

template <int W>
static HzkMatmulFn
hzk_matmul_entry (void)
{
  if constexpr (qdw_traits<W>::available)
    return hzk_matmul_launch<W>;
  else
    return NULL;
}

/* A switch rather than a table: hzk_ops_table (qmatvec.hip) calls this from its static
 * initialisers, so it must not depend on another translation unit's static data. */
extern "C" HzkMatmulFn
hzk_matmul_fn (uint32_t type)
{
  switch (type)
    {
#define HZ_QUANT(NAME, ...) case HZ_TYPE_##NAME: return hzk_matmul_entry<HZ_TYPE_##NAME> ();
#include "formats.def"
#undef HZ_QUANT
    default: return NULL;
    }
}
