/* kernels/moe.hip — mixture-of-experts FFN on the device (issue 4: Mixtral-style llama,
 * qwen2moe, qwen3moe), the CPU's definition in engine/llm.h (llama.cpp build_moe_ffn,
 * softmax gating, SiLU):
 *
 *   p   = softmax(router logits) over the n_expert experts
 *   sel = the k experts of largest p (descending p, ties to the lower id)
 *   w_j = p_sel[j], divided by max(Σ_j p_sel[j], 2^-14) (sum in double) when norm
 *         (Mixtral, qwen3moe)
 *   y   = Σ_j w_j · down_e(silu(gate_e h) ⊙ up_e h)  (e = sel[j], summed in the order j)
 *         (+ sigmoid(g_sh) · shared expert, qwen2moe)
 *
 * Ops (C ABI in kernels/hzk.h):
 *   hzk_moe_route    softmax + top-k + (normalised) weights, one 32-lane block per token,
 *                    the ids and weights stay on the device.
 *   hzk_moe_router   decode: the router matvec and the routing in one launch (the grid's
 *                    last block routes, after a counter; one node fewer per layer).
 *   hzk_moe_matvec   decode: the k routed experts of one token through the decode matvec's
 *                    body (qmatvec_rows<W>, kernels/qmatvec-core.h), grid.y = slot; each
 *                    block reads its expert id from the device array of selected ids and the
 *                    expert's weights from a device array of per-expert base pointers — no
 *                    host round trip, so the decode step stays one captured graph.
 *   hzk_moe_plan     prefill: the (token, slot) pairs sorted by expert (a counting sort on
 *                    the device), each expert's pairs split into tiles of 32 tokens.
 *   hzk_moe_matmul   prefill: every expert's rows through the prefill matmul's tile body
 *                    (qmmq_mma_tile<W, hzk_mmq_small> on tensor cores, else qmmq_tile_dp4a<W>;
 *                    qmmf_tile<W> for float formats; kernels/qmmq-core.h) once per batch, one
 *                    launch for all experts (grid.y = tiles of the plan); gate|up read the
 *                    tokens' activation rows through the plan's row map, down reads the
 *                    sorted rows in place.
 *   hzk_moe_combine  the weighted sum of the k expert outputs per token (+ the shared
 *                    expert scaled by the sigmoid of its gate), in the CPU's order and
 *                    rounding (products and sums rounded separately, no fused multiply-add).
 */
#include "qmatvec-core.h"
#include "qmmq-core.h"
#include "hzk.h"

static_assert (HZK_MOE_MAX_EXPERT % 32 == 0, "experts per lane");

/* ---- routing -------------------------------------------------------------------------- */
/** Routing of one token (logits row l, read from L2: another block of the same launch may
 *  have written it) into out_id / out_w: p = softmax(l), then k rounds of a segment argmax
 *  (ties to the lower id) over the experts not taken yet. Lanes 0..31 work; every thread of
 *  the block must call it (it synchronises the block). p: shared, HZK_MOE_MAX_EXPERT. */
static __device__ void
hzk_route_row (const float *l, float *p, int n_expert, int k, int norm, int *out_id,
               float *out_w)
{
  const int lane = threadIdx.x;
  const bool on = lane < 32;
  if (on)
    {
      float mx = -INFINITY;
      for (int e = lane; e < n_expert; e += 32)
        {
          const float v = hzk_ld_l2 (l + e);
          p[e] = v;
          mx = fmaxf (mx, v);              /* NaN logits are skipped by fmaxf */
        }
      for (int o = 16; o > 0; o >>= 1)
        mx = fmaxf (mx, hzk_shfl_xor (mx, o, 32));
      double s = 0.0;                      /* ggml_vec_soft_max_f32 sums in double */
      for (int e = lane; e < n_expert; e += 32)
        {
          const float v = expf (p[e] - mx);
          p[e] = v;
          s += v;
        }
      for (int o = 16; o > 0; o >>= 1)
        s += hzk_shfl_xor (s, o, 32);
      const float inv = (float) (1.0 / s);
      for (int e = lane; e < n_expert; e += 32)
        p[e] = p[e] * inv;
    }
  __syncthreads ();
  double sum = 0.0;                        /* ggml_sum_rows accumulates in double */
  for (int j = 0; j < k; j++)
    {
      float bv = -0.5f;                    /* below every probability, above the taken */
      int bi = n_expert;
      if (on)
        {
          for (int e = lane; e < n_expert; e += 32)
            if (p[e] > bv)                 /* ascending e per lane: ties keep the lower id */
              {
                bv = p[e];
                bi = e;
              }
          for (int o = 16; o > 0; o >>= 1)
            {
              const float ov = hzk_shfl_xor (bv, o, 32);
              const int oi = hzk_shfl_xor (bi, o, 32);
              if (ov > bv || (ov == bv && oi < bi))
                {
                  bv = ov;
                  bi = oi;
                }
            }
          if (bi >= n_expert)              /* all remaining NaN: take the lowest free id */
            {
              bv = 0.0f;
              bi = 0;
              for (int e = 0; e < n_expert; e++)
                if (!(p[e] < 0.0f))
                  {
                    bi = e;
                    break;
                  }
            }
          sum += (double) bv;
        }
      __syncthreads ();                    /* every lane has read p before it is marked */
      if (lane == 0)
        {
          out_id[j] = bi;
          out_w[j] = bv;
          p[bi] = -1.0f;                   /* taken (probabilities are >= 0) */
        }
      __syncthreads ();
    }
  if (norm && lane < k)
    out_w[lane] = out_w[lane] / (float) fmax (sum, 6.103515625e-5);
}

/** One 32-thread block per token. */
__global__ void __launch_bounds__ (32)
hzk_moe_route_kernel (const float *HZK_RESTRICT logits, int64_t ld, int n_expert, int k,
                      int norm, int *HZK_RESTRICT ids, float *HZK_RESTRICT weights)
{
  hzk_dep_begin ();
  __shared__ float p[HZK_MOE_MAX_EXPERT];
  hzk_route_row (logits + (size_t) blockIdx.x * ld, p, n_expert, k, norm,
                 ids + (size_t) blockIdx.x * k, weights + (size_t) blockIdx.x * k);
}

/** Decode router of one token in one launch: the router matvec's rows (qmatvec_rows<W>, as
 *  the dispatch table's matvec computes them) into logits, then the grid's last block to
 *  finish (a counter: each block fences its rows, then counts itself) routes the token
 *  (hzk_route_row) and sets the counter back to 0. */
template <int W>
__global__ void __launch_bounds__ (HZK_THREADS)
hzk_moe_router_kernel (const uint8_t *HZK_RESTRICT w, int n_expert, int64_t K,
                       const int8_t *aq, const float2 *am, const float *x, float *logits,
                       int k, int norm, int *HZK_RESTRICT ids, float *HZK_RESTRICT weights,
                       int *counter)
{
  using C = typename hzk_launch<W>::type;
  hzk_dep_begin ();
  __shared__ float p[HZK_MOE_MAX_EXPERT];
  __shared__ int last;
  qmatvec_rows<W, 1, C> (w, n_expert, K, aq, am, x, logits, blockIdx.x);
  __threadfence ();
  __syncthreads ();
  if (threadIdx.x == 0)
    last = atomicAdd (counter, 1) == (int) gridDim.x - 1;
  __syncthreads ();
  if (!last)
    return;
  __threadfence ();
  hzk_route_row (logits, p, n_expert, k, norm, ids, weights);
  if (threadIdx.x == 0)
    *counter = 0;
}

template <int W>
static int
hzk_moe_router_launch (const void *w, int n_expert, int64_t K, const int8_t *aq, const void *am,
                       const float *x, float *logits, int k, int norm, int *ids, float *weights,
                       int *counter, void *stream)
{
  using C = typename hzk_launch<W>::type;
  if (n_expert < 1 || n_expert > HZK_MOE_MAX_EXPERT || k < 1 || k > HZK_MOE_MAX_USED
      || k > n_expert || !counter)
    return (int) hipErrorInvalidValue;
  const int64_t per_block = (int64_t) C::G * C::ROWS;
  (void) hzk_launch_dep (hzk_moe_router_kernel<W>, (unsigned) ((n_expert + per_block - 1) / per_block),
                         HZK_THREADS, 0, (hipStream_t) stream, (const uint8_t *) w, n_expert, K, aq,
                         (const float2 *) am, x, logits, k, norm, ids, weights, counter);
  return (int) hipGetLastError ();
}

/* ---- decode: routed experts through the matvec body ------------------------------------- */
/** Block (bx, s): rows of block bx of expert ids[s]'s matrix against slot s's activations
 *  (aq/am/x + s·a_stride elements; a_stride 0: all slots read the same row) into
 *  y + s·ldy. */
template <int W>
__global__ void __launch_bounds__ (HZK_THREADS)
hzk_moe_matvec_kernel (const void *const *HZK_RESTRICT wp, int n_expert, int64_t n_rows,
                       int64_t K, const int *HZK_RESTRICT ids, const int8_t *aq,
                       const float2 *am, const float *x, int64_t a_stride, float *y,
                       int64_t ldy)
{
  hzk_dep_begin ();
  using C = typename hzk_launch<W>::type;
  const int s = blockIdx.y;
  int e = ids[s];
  e = e < 0 ? 0 : e >= n_expert ? n_expert - 1 : e;
  const int64_t as = a_stride * s;
  qmatvec_rows<W, 1, C> ((const uint8_t *) wp[e], n_rows, K, aq ? aq + as : nullptr,
                         am ? am + as / 16 : nullptr, x ? x + as : nullptr,
                         y + (size_t) s * ldy, blockIdx.x);
}

template <int W>
static int
hzk_moe_matvec_launch (const void *const *w, int n_expert, int64_t n_rows, int64_t K,
                       const int *ids, int n_slot, const int8_t *aq, const void *am,
                       const float *x, int per_slot, float *y, int64_t ldy, void *stream)
{
  using C = typename hzk_launch<W>::type;
  if (n_slot < 1 || n_expert < 1 || n_rows < 1 || ldy < n_rows)
    return (int) hipErrorInvalidValue;
  const int64_t per_block = (int64_t) C::G * C::ROWS;
  const dim3 grid ((unsigned) ((n_rows + per_block - 1) / per_block), (unsigned) n_slot);
  (void) hzk_launch_dep (hzk_moe_matvec_kernel<W>, grid, HZK_THREADS, 0, (hipStream_t) stream,
      w, n_expert, n_rows, K, ids, aq, (const float2 *) am, x, per_slot ? K : 0, y, ldy);
  return (int) hipGetLastError ();
}

/* ---- prefill: sort by expert, grouped tiles ------------------------------------------- */
/* Plan layout (int32s from the start of the buffer):
 *   [0]            number of tiles
 *   [4 ..]         tiles, int4 {expert, first sorted pair of the expert, its pair count,
 *                  first pair of the tile within the expert}, max_tiles of them
 *   rows[n_pairs]  sorted position -> token (pair / k)
 *   pos[n_pairs]   pair (token·k + slot) -> sorted position */
static __host__ __device__ __forceinline__ int
hzk_moe_max_tiles (int n_pairs, int n_expert)
{
  return n_pairs / HZK_MM_BN + (n_expert < n_pairs ? n_expert : n_pairs) + 1;
}

static __host__ __device__ __forceinline__ size_t
hzk_moe_rows_off (int n_pairs, int n_expert)
{
  return 4 + 4 * (size_t) hzk_moe_max_tiles (n_pairs, n_expert);
}

/** One block of 1024 threads: counts per expert, exclusive scan (offsets and tile offsets),
 *  tiles, then each pair's sorted position (an atomic cursor per expert: the order within
 *  an expert is free, every row of the products is computed independently of the others). */
__global__ void __launch_bounds__ (1024)
hzk_moe_plan_kernel (const int *HZK_RESTRICT ids, int n_pairs, int k, int n_expert,
                     int *HZK_RESTRICT plan)
{
  __shared__ int cnt[HZK_MOE_MAX_EXPERT], off[HZK_MOE_MAX_EXPERT], toff[HZK_MOE_MAX_EXPERT];
  __shared__ int cur[HZK_MOE_MAX_EXPERT];
  const int tid = threadIdx.x;
  for (int e = tid; e < n_expert; e += blockDim.x)
    {
      cnt[e] = 0;
      cur[e] = 0;
    }
  __syncthreads ();
  for (int i = tid; i < n_pairs; i += blockDim.x)
    {
      int e = ids[i];
      e = e < 0 ? 0 : e >= n_expert ? n_expert - 1 : e;
      atomicAdd (&cnt[e], 1);
    }
  __syncthreads ();
  if (tid == 0)
    {
      int o = 0, to = 0;
      for (int e = 0; e < n_expert; e++)
        {
          off[e] = o;
          toff[e] = to;
          o += cnt[e];
          to += (cnt[e] + HZK_MM_BN - 1) / HZK_MM_BN;
        }
      plan[0] = to;
    }
  __syncthreads ();
  int4 *tiles = (int4 *) (plan + 4);
  for (int e = tid; e < n_expert; e += blockDim.x)
    for (int t = 0; t < cnt[e]; t += HZK_MM_BN)
      tiles[toff[e] + t / HZK_MM_BN] = make_int4 (e, off[e], cnt[e], t);
  int *rows = plan + hzk_moe_rows_off (n_pairs, n_expert), *pos = rows + n_pairs;
  for (int i = tid; i < n_pairs; i += blockDim.x)
    {
      int e = ids[i];
      e = e < 0 ? 0 : e >= n_expert ? n_expert - 1 : e;
      const int p = off[e] + atomicAdd (&cur[e], 1);
      rows[p] = i / k;
      pos[i] = p;
    }
}

/** Block (bx, tile): rows BM·bx.. of the tile's expert against its tokens (BM = 32 on
 *  tensor cores, the hzk_mmq_small tile; 64 for dp4a and float formats). gather: token t
 *  of the expert reads activation row rows[first + t] (the tokens' own rows: gate|up), else
 *  row first + t (rows already in sorted order: down). Output row first + t of y. */
template <int W, bool MMA>
__global__ void __launch_bounds__ (MMA ? hzk_mmq_small::threads : HZK_MM_THREADS,
                                   MMA ? hzk_mmq_small::min_blocks : 1)
hzk_moe_mm_kernel (const void *const *HZK_RESTRICT wp, int64_t n_rows, int64_t K,
                   const int *HZK_RESTRICT plan, const int *HZK_RESTRICT rows, int gather,
                   const int8_t *aq, const float2 *am, const float *x, float *y, int64_t ldy)
{
  static_assert (hzk_mmq_small::BN == HZK_MM_BN, "plan tiles are the tiles' token count");
  if ((int) blockIdx.y >= plan[0])
    return;                                /* the grid is sized for the worst case */
  const int4 ti = ((const int4 *) (plan + 4))[blockIdx.y];
  const uint8_t *w = (const uint8_t *) wp[ti.x];
  const int *tr = gather ? rows + ti.y : nullptr;
  const int64_t a0 = gather ? 0 : (int64_t) ti.y * K;
  y += (size_t) ti.y * ldy;
  if constexpr (qdw_traits<W>::is_float)
    qmmf_tile<W> (w, n_rows, K, ti.z, tr, x + a0, y, ldy, blockIdx.x, ti.w / HZK_MM_BN);
  else if constexpr (MMA)
    {
      extern __shared__ int4 hzk_mm_smem[];
      qmmq_mma_tile<W, hzk_mmq_small> (w, n_rows, K, ti.z, tr, aq + a0, am + a0 / 16, y, ldy,
                                       blockIdx.x, ti.w / HZK_MM_BN, (uint8_t *) hzk_mm_smem);
    }
  else
    qmmq_tile_dp4a<W> (w, n_rows, K, ti.z, tr, aq + a0, am + a0 / 16, y, ldy, blockIdx.x,
                       ti.w / HZK_MM_BN);
}

template <int W>
static int
hzk_moe_matmul_launch (const void *const *w, int n_expert, int64_t n_rows, int64_t K,
                       const void *plan, int n_pairs, int gather, const int8_t *aq,
                       const void *am, const float *x, float *y, int64_t ldy, void *stream)
{
  if (n_pairs < 1 || n_expert < 1 || n_rows < 1 || ldy < n_rows)
    return (int) hipErrorInvalidValue;
  const int *pl = (const int *) plan;
  const int *rows = pl + hzk_moe_rows_off (n_pairs, n_expert);
  const unsigned n_tiles = (unsigned) hzk_moe_max_tiles (n_pairs, n_expert);
  const float2 *m = (const float2 *) am;
#if defined(HZK_CUDA)
  if constexpr (!qdw_traits<W>::is_float)
    if (hzk_mm_use_mma ())
      {
        using S = hzk_mmq_small;
        constexpr int bytes = qmmq_mma_smem_bytes<W, S> ();
        static bool ready = false;
        const int e = hzk_mm_prepare (hzk_moe_mm_kernel<W, true>, bytes, &ready);
        if (e)
          return e;
        hzk_moe_mm_kernel<W, true><<<dim3 ((unsigned) ((n_rows + S::BM - 1) / S::BM), n_tiles),
                                     S::threads, bytes, (hipStream_t) stream>>> (
            w, n_rows, K, pl, rows, gather, aq, m, x, y, ldy);
        return (int) hipGetLastError ();
      }
#endif
  hzk_moe_mm_kernel<W, false><<<dim3 ((unsigned) ((n_rows + HZK_MM_BM - 1) / HZK_MM_BM), n_tiles),
                                HZK_MM_THREADS, 0, (hipStream_t) stream>>> (
      w, n_rows, K, pl, rows, gather, aq, m, x, y, ldy);
  return (int) hipGetLastError ();
}

/* ---- weighted sum ---------------------------------------------------------------------- */
__global__ void __launch_bounds__ (256)
hzk_moe_combine_kernel (const float *HZK_RESTRICT ys, int64_t ldys,
                        const float *HZK_RESTRICT weights, const int *HZK_RESTRICT pos, int k,
                        int64_t n, const float *HZK_RESTRICT shared,
                        const float *HZK_RESTRICT shared_gate, float *HZK_RESTRICT out)
{
  hzk_dep_begin ();
  const int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
  const int t = blockIdx.y;
  if (i >= n)
    return;
  float acc = 0.0f;
  for (int j = 0; j < k; j++)
    {
      const int pr = t * k + j, p = pos ? pos[pr] : pr;
      const float v = __fmul_rn (weights[pr], ys[(size_t) p * ldys + i]);
      acc = j == 0 ? v : __fadd_rn (acc, v);
    }
  if (shared)
    {
      const float g = 1.0f / (1.0f + expf (-shared_gate[t]));
      acc = __fadd_rn (acc, __fmul_rn (shared[(size_t) t * n + i], g));
    }
  out[(size_t) t * n + i] = acc;
}

/* ---- dispatch -------------------------------------------------------------------------- */
template <int W>
static HzkMoeMatvecFn
hzk_moe_matvec_entry (void)
{
  if constexpr (qdw_traits<W>::available)
    return hzk_moe_matvec_launch<W>;
  else
    return NULL;
}

template <int W>
static HzkMoeRouterFn
hzk_moe_router_entry (void)
{
  if constexpr (qdw_traits<W>::available)
    return hzk_moe_router_launch<W>;
  else
    return NULL;
}

extern "C" HzkMoeRouterFn
hzk_moe_router_fn (uint32_t type)
{
  switch (type)
    {
#define HZ_QUANT(NAME, ...) case HZ_TYPE_##NAME: return hzk_moe_router_entry<HZ_TYPE_##NAME> ();
#include "formats.def"
#undef HZ_QUANT
    default: return NULL;
    }
}

template <int W>
static HzkMoeMatmulFn
hzk_moe_matmul_entry (void)
{
  if constexpr (qdw_traits<W>::available)
    return hzk_moe_matmul_launch<W>;
  else
    return NULL;
}

extern "C" HzkMoeMatvecFn
hzk_moe_matvec_fn (uint32_t type)
{
  switch (type)
    {
#define HZ_QUANT(NAME, ...) case HZ_TYPE_##NAME: return hzk_moe_matvec_entry<HZ_TYPE_##NAME> ();
#include "formats.def"
#undef HZ_QUANT
    default: return NULL;
    }
}

extern "C" HzkMoeMatmulFn
hzk_moe_matmul_fn (uint32_t type)
{
  switch (type)
    {
#define HZ_QUANT(NAME, ...) case HZ_TYPE_##NAME: return hzk_moe_matmul_entry<HZ_TYPE_##NAME> ();
#include "formats.def"
#undef HZ_QUANT
    default: return NULL;
    }
}

extern "C" int
hzk_moe_route (const float *logits, int64_t ld, int n_expert, int n_tok, int k, int norm,
               int *ids, float *weights, void *stream)
{
  if (n_tok < 1 || n_expert < 1 || n_expert > HZK_MOE_MAX_EXPERT || k < 1
      || k > HZK_MOE_MAX_USED || k > n_expert || ld < n_expert)
    return (int) hipErrorInvalidValue;
  (void) hzk_launch_dep (hzk_moe_route_kernel, n_tok, 32, 0, (hipStream_t) stream, logits, ld, n_expert, k, norm,
                                                                 ids, weights);
  return (int) hipGetLastError ();
}

extern "C" size_t
hzk_moe_plan_bytes (int n_pairs, int n_expert)
{
  return sizeof (int) * (hzk_moe_rows_off (n_pairs, n_expert) + 2 * (size_t) n_pairs);
}

extern "C" const int *
hzk_moe_plan_pos (const void *plan, int n_pairs, int n_expert)
{
  return (const int *) plan + hzk_moe_rows_off (n_pairs, n_expert) + n_pairs;
}

extern "C" int
hzk_moe_plan (const int *ids, int n_pairs, int k, int n_expert, void *plan, void *stream)
{
  if (n_pairs < 1 || k < 1 || n_pairs % k || n_expert < 1 || n_expert > HZK_MOE_MAX_EXPERT)
    return (int) hipErrorInvalidValue;
  hzk_moe_plan_kernel<<<1, 1024, 0, (hipStream_t) stream>>> (ids, n_pairs, k, n_expert,
                                                              (int *) plan);
  return (int) hipGetLastError ();
}

extern "C" int
hzk_moe_combine (const float *ys, int64_t ldys, const float *weights, const int *pos, int n_tok,
                 int k, int64_t n, const float *shared, const float *shared_gate, float *out,
                 void *stream)
{
  if (n_tok < 1 || k < 1 || n < 1 || ldys < n || (shared && !shared_gate))
    return (int) hipErrorInvalidValue;
  const dim3 grid ((unsigned) ((n + 255) / 256), (unsigned) n_tok);
  (void) hzk_launch_dep (hzk_moe_combine_kernel, grid, 256, 0, (hipStream_t) stream, ys, ldys, weights, pos, k, n,
                                                                  shared, shared_gate, out);
  return (int) hipGetLastError ();
}
