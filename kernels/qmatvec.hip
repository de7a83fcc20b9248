/* kernels/qmatvec.hip — decode matvec for every format with a device decoder:
 * qmatvec_core<W, B, C> (one body, templated on the format W, the batch B = 1..8 and the
 * launch geometry C), the activation quantizer, the generic split-block repack, the
 * embedding lookup through the same decoders, and the dispatch table generated from
 * engine/quant/formats.def.
 *
 * y[c][r] = Σ_k W[r][k] · x[c][k],  W: n_rows × K in format W (split-block layout,
 * kernels/qdec.h), x: [B][K] fp32, y: [B][n_rows] fp32.
 *
 * Work split. A block of 128 threads holds G = 128/TPR row groups of TPR threads; a group
 * computes ROWS adjacent rows. Thread t of a group walks the units u = t, t + TPR, ...
 * of its rows; it issues the 16-byte chunk loads of UNR units for all ROWS rows before
 * decoding anything (ROWS·UNR·unit_bytes in flight per thread). Chunk c of unit u sits at
 * plane offset (c·nu + u)·16: a warp's load instruction covers 512 consecutive bytes.
 * Every weight byte is read exactly once (streaming loads that do not pollute L1); the
 * int8 activations (K bytes per column) and their scales are re-read by every row group
 * and stay in L1/L2; one activation load serves the ROWS rows.
 *   The geometry (TPR, ROWS, UNR) is a template parameter (hzk_cfg); hzk_launch<W> picks
 *   each format's default from a sweep on an H200 (hzk_matvec_variant, bench-qmatvec
 *   --variants): TPR = 32 (one warp per group, warp-only reduction), ROWS 2 (4 for the
 *   16-byte-unit K-quants), UNR 2.
 * Integer formats: per 16-element run, Σ v·q_a through four dp4a (sdot4 on AMD), then
 *   acc += (d·d_a)·Σ + m·s_a in fp32. Float formats: fp32 FMA against x.
 * Reduction: segment shuffles (width min(TPR, 32)), then shared memory across the
 * segments of a group (a no-op for TPR = 32).
 *
 * Launch: grid = ceil(n_rows / (G·ROWS)), 128 threads, no dynamic shared memory.
 * Reading reference (not copied): ggml-cuda mmvq.cu / vecdotq.cuh.
 */
#include "qmatvec-core.h"
#include "hzk.h"

/** Byte i of unit ub of a repack block (float formats: the unit is the block). */
template <int W>
static __device__ __forceinline__ int
hzk_payload_src (int ub, int i)
{
  if constexpr (qdw_traits<W>::is_float)
    return i;
  else
    return qdec<W>::payload_src (ub, i);
}

/* ---- activation quantization ------------------------------------------------------- */
/** One 32-lane segment per 32-element block; see hzk_quantize_act in hzk.h. */
__global__ void __launch_bounds__ (HZK_THREADS)
hzk_quantize_act_kernel (const float *HZK_RESTRICT x, int64_t nblk, int8_t *HZK_RESTRICT aq,
                         float2 *HZK_RESTRICT am)
{
  hzk_dep_begin ();
  const int lane = threadIdx.x & 31;
  const int64_t blk = ((int64_t) blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  if (blk >= nblk)
    return;                      /* whole 32-lane segments leave together */
  const float v = x[blk * 32 + lane];
  float amax = fabsf (v);
  for (int o = 16; o > 0; o >>= 1)
    amax = fmaxf (amax, hzk_shfl_xor (amax, o, 32));
  const float d = amax / 127.0f;
  const int q = amax == 0.0f ? 0 : (int) roundf (v / d);
  aq[blk * 32 + lane] = (int8_t) q;
  int s = q;
  for (int o = 8; o > 0; o >>= 1)
    s += hzk_shfl_xor (s, o, 32);            /* offsets < 16: sums of each 16-lane half */
  if ((lane & 15) == 0)
    am[blk * 2 + lane / 16] = make_float2 (d, d * (float) s);
}

/* ---- repack ------------------------------------------------------------------------ */
/** One thread per 16-byte payload chunk, then one per block's meta. */
template <int W>
__global__ void __launch_bounds__ (HZK_THREADS)
hzk_repack_kernel (const uint8_t *HZK_RESTRICT src, uint8_t *HZK_RESTRICT dst, int64_t n_rows,
                   int64_t K)
{
  using T = qdw_traits<W>;
  const int64_t nu = K / T::unit_elems, nb = K / T::blk_elems;
  const int64_t n_chunks = n_rows * nu * T::chunks;
  const int64_t idx = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < n_chunks)
    {
      const int64_t per_row = nu * T::chunks;
      const int64_t r = idx / per_row, rem = idx % per_row;
      const int c = (int) (rem / nu);
      const int64_t u = rem % nu;
      const int64_t b = u / T::units_per_block;
      const int ub = (int) (u % T::units_per_block);
      const uint8_t *blk = src + (size_t) (r * nb + b) * T::blk_bytes;
      uint32_t wd[4] = { 0, 0, 0, 0 };
      for (int i = 0; i < 16; i++)
        wd[i / 4] |= (uint32_t) blk[hzk_payload_src<W> (ub, c * 16 + i)] << (8 * (i % 4));
      uint4 o;
      o.x = wd[0];
      o.y = wd[1];
      o.z = wd[2];
      o.w = wd[3];
      *(uint4 *) (dst + (size_t) r * nu * T::unit_bytes + ((size_t) c * nu + u) * 16) = o;
      return;
    }
  if constexpr (!T::is_float)
    {
      const int64_t j = idx - n_chunks;        /* block index over the whole tensor */
      if (j >= n_rows * nb)
        return;
      const uint8_t *blk = src + (size_t) j * T::blk_bytes;
      uint8_t *m = dst + hzk_align256 ((size_t) n_rows * nu * T::unit_bytes) + (size_t) j * T::meta_bytes;
      constexpr int po = qdec<W>::payload_off, pb = qdec<W>::payload_bytes;
      for (int i = 0; i < T::meta_bytes; i++)
        m[i] = blk[i < po ? i : i + pb];
    }
}

/* ---- embedding lookup ---------------------------------------------------------------- */
/** out[i][0..K) = row row_p[i] of W (i = blockIdx.y), decoded unit by unit (one thread
 *  per unit) with the same decoders as the matvec: w = d·v + m per run (integer formats),
 *  decode_f (float). */
template <int W>
__global__ void __launch_bounds__ (HZK_THREADS)
hzk_embed_kernel (const uint8_t *HZK_RESTRICT w, int64_t n_rows, int64_t K,
                  const int *HZK_RESTRICT row_p, float *HZK_RESTRICT out)
{
  hzk_dep_begin ();
  using T = qdw_traits<W>;
  const int64_t nu = K / T::unit_elems;
  const int64_t u = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
  if (u >= nu)
    return;
  int64_t r = row_p[blockIdx.y];
  out += (size_t) blockIdx.y * K;
  r = r < 0 ? 0 : r >= n_rows ? n_rows - 1 : r;
  const size_t row_bytes = (size_t) nu * T::unit_bytes;
  const uint8_t *P = w + (size_t) r * row_bytes;
  uint4 q[T::chunks];
  qdw_load_unit<W> (P, nu, u, q);
  if constexpr (T::is_float)
    {
      float wv[T::unit_elems];
      qdec<W>::decode_f (q, wv);
      for (int i = 0; i < T::unit_elems; i++)
        out[u * T::unit_elems + i] = wv[i];
    }
  else
    {
      constexpr int RUNS = qdec<W>::runs;
      const int64_t nb = K / T::blk_elems, b = u / T::units_per_block;
      const int ub = (int) (u % T::units_per_block);
      const uint8_t *M = w + hzk_align256 ((size_t) n_rows * row_bytes);
      int v[RUNS][4], off[RUNS];
      float d[RUNS], m[RUNS];
      qdec<W>::decode (q, M + (size_t) (r * nb + b) * T::meta_bytes, ub, v, d, m, off);
      for (int j = 0; j < RUNS; j++)
        for (int i = 0; i < 16; i++)
          {
            const int vi = (int) (int8_t) ((uint32_t) v[j][i / 4] >> (8 * (i % 4)));
            out[b * T::blk_elems + off[j] + i] = T::symmetric ? d[j] * (float) vi
                                                              : fmaf (d[j], (float) vi, m[j]);
          }
    }
}

/* ---- host launchers ------------------------------------------------------------------ */
template <int W, int B, class C = typename hzk_launch<W>::type>
static int
hzk_matvec_launch (const void *w, int64_t n_rows, int64_t K, const int8_t *aq, const void *am,
                   const float *x, float *y, void *stream)
{
  const int64_t per_block = (int64_t) C::G * C::ROWS;
  const unsigned grid = (unsigned) ((n_rows + per_block - 1) / per_block);
  if (B == 1 && hzk_dep_enabled && hzk_weight_prefetch)
    (void) hzk_launch_dep (qmatvec_core<W, B, C, true>, grid, HZK_THREADS, 0,
                           (hipStream_t) stream, (const uint8_t *) w, n_rows, K, aq,
                           (const float2 *) am, x, y);
  else
    (void) hzk_launch_dep (qmatvec_core<W, B, C>, grid, HZK_THREADS, 0, (hipStream_t) stream,
                           (const uint8_t *) w, n_rows, K, aq, (const float2 *) am, x, y);
  return (int) hipGetLastError ();
}

template <int W>
static int
hzk_repack_launch (const void *src, void *dst, int64_t n_rows, int64_t K, void *stream)
{
  using T = qdw_traits<W>;
  const int64_t nu = K / T::unit_elems, nb = K / T::blk_elems;
  const int64_t n = n_rows * nu * T::chunks + (T::is_float ? 0 : n_rows * nb);
  const unsigned grid = (unsigned) ((n + HZK_THREADS - 1) / HZK_THREADS);
  hzk_repack_kernel<W><<<grid, HZK_THREADS, 0, (hipStream_t) stream>>> (
      (const uint8_t *) src, (uint8_t *) dst, n_rows, K);
  return (int) hipGetLastError ();
}

template <int W>
static int
hzk_embed_launch (const void *w, int64_t n_rows, int64_t K, const int *row, int n,
                  float *out, void *stream)
{
  using T = qdw_traits<W>;
  const int64_t nu = K / T::unit_elems;
  if (n < 1)
    return (int) hipErrorInvalidValue;
  const dim3 grid ((unsigned) ((nu + HZK_THREADS - 1) / HZK_THREADS), (unsigned) n);
  (void) hzk_launch_dep (hzk_embed_kernel<W>, grid, HZK_THREADS, 0, (hipStream_t) stream,
      (const uint8_t *) w, n_rows, K, row, out);
  return (int) hipGetLastError ();
}

template <int W>
static HzkOps
hzk_make_ops (void)
{
  using F = hzk_fmt<W>;
  HzkOps o = {};
  o.type = (uint32_t) W;
  o.name = F::name;
  o.block_elems = F::block_elems;
  o.block_bytes = F::block_bytes;
  if constexpr (qdw_traits<W>::available)
    {
      using T = qdw_traits<W>;
      o.available = true;
      o.is_float = T::is_float;
      o.symmetric = T::symmetric;
      o.unit_bytes = T::unit_bytes;
      o.unit_elems = T::unit_elems;
      o.units_per_block = T::units_per_block;
      o.meta_bytes = T::meta_bytes;
      o.scale_slots = T::scale_slots;
      o.k_multiple = T::is_float ? T::unit_elems : (T::blk_elems > 32 ? T::blk_elems : 32);
      o.repack = hzk_repack_launch<W>;
      o.embed = hzk_embed_launch<W>;
      o.matvec[0] = hzk_matvec_launch<W, 1>;
      o.matvec[1] = hzk_matvec_launch<W, 2>;
      o.matvec[2] = hzk_matvec_launch<W, 3>;
      o.matvec[3] = hzk_matvec_launch<W, 4>;
      o.matvec[4] = hzk_matvec_launch<W, 5>;
      o.matvec[5] = hzk_matvec_launch<W, 6>;
      o.matvec[6] = hzk_matvec_launch<W, 7>;
      o.matvec[7] = hzk_matvec_launch<W, 8>;
      o.matmul = hzk_matmul_fn (W);
    }
  return o;
}

/* ---- geometry variants for the benchmark (bench-qmatvec --variants) ----------------- */
template <int W> static HzkMatvecFn
hzk_variant_fn (int v)
{
  if constexpr (!qdw_traits<W>::available || qdw_traits<W>::is_float)
    return v == 0 ? hzk_matvec_launch<W, 1> : NULL;
  else
    switch (v)
      {
      case 0: return hzk_matvec_launch<W, 1>;
      case 1: return hzk_matvec_launch<W, 1, hzk_cfg<128, 2, 2>>;   /* the first slice's */
      case 2: return hzk_matvec_launch<W, 1, hzk_cfg<32, 2, 2>>;
      case 3: return hzk_matvec_launch<W, 1, hzk_cfg<32, 4, 2>>;
      case 4: return hzk_matvec_launch<W, 1, hzk_cfg<32, 4, 4>>;
      case 5: return hzk_matvec_launch<W, 1, hzk_cfg<32, 8, 2>>;
      case 6: return hzk_matvec_launch<W, 1, hzk_cfg<64, 4, 2>>;
      case 7: return hzk_matvec_launch<W, 1, hzk_cfg<32, 2, 4>>;
      default: return NULL;
      }
}

static const char *const hzk_variant_names[] = {
  "default", "tpr128 r2 u2", "tpr32 r2 u2", "tpr32 r4 u2", "tpr32 r4 u4", "tpr32 r8 u2",
  "tpr64 r4 u2", "tpr32 r2 u4",
};

extern "C" HzkMatvecFn
hzk_matvec_variant (uint32_t type, int v, const char **name)
{
  if (v < 0 || v >= (int) (sizeof hzk_variant_names / sizeof *hzk_variant_names))
    return NULL;
  if (name)
    *name = hzk_variant_names[v];
  switch (type)
    {
    case HZ_TYPE_Q4_0: return hzk_variant_fn<HZ_TYPE_Q4_0> (v);
    case HZ_TYPE_Q8_0: return hzk_variant_fn<HZ_TYPE_Q8_0> (v);
    case HZ_TYPE_Q4_K: return hzk_variant_fn<HZ_TYPE_Q4_K> (v);
    case HZ_TYPE_Q6_K: return hzk_variant_fn<HZ_TYPE_Q6_K> (v);
    default: return v == 0 && hzk_ops (type) ? hzk_ops (type)->matvec[0] : NULL;
    }
}

/** The dispatch table: one row per formats.def row, in table order. */
static const HzkOps hzk_ops_table[] = {
#define HZ_QUANT(NAME, ...) hzk_make_ops<HZ_TYPE_##NAME> (),
#include "formats.def"
#undef HZ_QUANT
};

extern "C" const HzkOps *
hzk_ops (uint32_t type)
{
  for (size_t i = 0; i < sizeof hzk_ops_table / sizeof hzk_ops_table[0]; i++)
    if (hzk_ops_table[i].type == type)
      return &hzk_ops_table[i];
  return NULL;
}

extern "C" size_t
hzk_device_bytes (const HzkOps *o, int64_t n_rows, int64_t K)
{
  if (!o || !o->available || n_rows <= 0 || K <= 0 || K % o->k_multiple)
    return 0;
  const size_t nu = (size_t) (K / o->unit_elems), nb = nu / o->units_per_block;
  return hzk_align256 ((size_t) n_rows * nu * o->unit_bytes) + (size_t) n_rows * nb * o->meta_bytes;
}

extern "C" size_t
hzk_act_bytes (int64_t K, int batch)
{
  return hzk_align256 ((size_t) batch * K) + (size_t) batch * (K / 16) * sizeof (float2);
}

extern "C" const int8_t *hzk_act_q (const void *scratch, int64_t K, int batch) { return (const int8_t *) scratch; }

extern "C" const void *
hzk_act_m (const void *scratch, int64_t K, int batch)
{
  return (const uint8_t *) scratch + hzk_align256 ((size_t) batch * K);
}

extern "C" int
hzk_quantize_act (const float *x, int64_t K, int batch, void *scratch, void *stream)
{
  const int64_t nblk = (int64_t) batch * K / 32;
  const unsigned grid = (unsigned) ((nblk * 32 + HZK_THREADS - 1) / HZK_THREADS);
  (void) hzk_launch_dep (hzk_quantize_act_kernel, grid, HZK_THREADS, 0, (hipStream_t) stream,
      x, nblk, (int8_t *) scratch, (float2 *) hzk_act_m (scratch, K, batch));
  return (int) hipGetLastError ();
}
