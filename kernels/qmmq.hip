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
 * Tiling (integer formats). A block of 128 threads computes a tile of BM = 64 rows ×
 * BN = 32 tokens, walking K in tiles of KT = 256 elements (one K-quant block, eight
 * legacy blocks). Per K tile: the 64 rows' units of the tile are loaded and decoded once
 * (qdec<W>::decode: runs of 16 int8 values v with a scale d and offset m, w = d·v + m)
 * into shared memory — 16 runs per row, stored at their element position — and the 32
 * tokens' int8 activations and (d_a, s_a) per 16 are copied next to them; then each
 * thread computes 4 rows × 4 tokens:
 *   acc[r][t] += (d_r·d_a,t) · Σ_16 v·q_a   (four dp4a / sdot4)   (+ m_r · s_a,t)
 * i.e. the decode matvec's arithmetic (kernels/qmatvec.hip) on a tile. Rows of a thread
 * are tid%16 + 16i, tokens tid/16 + 8j; shared rows are padded by 16 bytes so that the
 * 16-byte loads of 8 consecutive rows hit distinct banks. K tails (legacy formats with
 * K % 256 != 0) run only the tile's valid runs; row and token tails load clamped indices
 * and do not store.
 * Tensor cores (CUDA, compute capability >= 8.0; HZ_GPU_MMQ=dp4a turns them off): the same
 * shared tiles, the int8 products by mma.sync .s8 — warp w takes rows 16w..16w+15 against
 * the 32 tokens as four 16×8 products, and scales each int32 result as above
 * (d·d_a·Σ + m·s_a). Formats whose scales cover 32 elements or more (all but Q6_K and
 * Q2_K) take two runs in one m16n8k32 product (the activations' d_a is per 32 or 256, so
 * it is shared too; the two runs' s_a add); Q6_K, Q2_K one m16n8k16 product per run. The
 * fragments are read straight from the padded rows (conflict-free). AMD (hipcc) and older
 * NVIDIA chips use the dp4a/sdot4 loop.
 * Float formats: the same tile over K tiles of 64 elements decoded to fp32 (decode_f),
 * x tiles in fp32, 4 × 4 FMA per thread and element.
 *
 * Tried and dropped: a register prefetch of tile kt + 1 during the compute of tile kt
 * (software pipeline) raised the register count to 130..220 and lost more to occupancy
 * than it hid (pp512 of a 7B Q4_0: 3,423 against 4,935 tokens/s on an H200).
 * Not yet: cp.async / TMA double buffering in shared memory, larger warp tiles, AMD matrix
 * cores. Reading reference (not
 * copied): ggml-cuda mmq.cuh, the PTX ISA's mma fragment layouts.
 */
#include "qmmq-core.h"
#include "hzk.h"

/* ---- launchers, dispatch ---------------------------------------------------------------- */

template <int W>
static int
hzk_matmul_launch (const void *w, int64_t n_rows, int64_t K, int n_tok, const int8_t *aq,
                   const void *am, const float *x, float *y, int64_t ldy, void *stream)
{
  if (n_tok < 1 || n_rows < 1 || ldy < n_rows)
    return (int) hipErrorInvalidValue;
  const dim3 grid ((unsigned) ((n_rows + HZK_MM_BM - 1) / HZK_MM_BM),
                   (unsigned) ((n_tok + HZK_MM_BN - 1) / HZK_MM_BN));
  if constexpr (qdw_traits<W>::is_float)
    qmmf_core<W><<<grid, HZK_MM_THREADS, 0, (hipStream_t) stream>>> (
        (const uint8_t *) w, n_rows, K, n_tok, x, y, ldy);
  else
    {
#if defined(HZK_CUDA)
      if (hzk_mm_use_mma ())
        qmmq_core<W, true><<<grid, HZK_MM_THREADS, 0, (hipStream_t) stream>>> (
            (const uint8_t *) w, n_rows, K, n_tok, aq, (const float2 *) am, y, ldy);
      else
#endif
        qmmq_core<W, false><<<grid, HZK_MM_THREADS, 0, (hipStream_t) stream>>> (
            (const uint8_t *) w, n_rows, K, n_tok, aq, (const float2 *) am, y, ldy);
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
