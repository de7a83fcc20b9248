/* engine/quant/repack.h — weight matrices repacked once at load into interleaved row groups
 * for the exact-order kernels (ggml-order.h), the role of ggml-cpu's "repack" buffer type
 * (ggml-cpu/repack.cpp, block_q4_0x8), in a layout of our own.
 *
 * Q4_0 (HZ_REPACK_Q4_0X8): the rows are taken in groups of 8 (n_out % 8 == 0, the shapes
 * where ggml-order.h's Q4_0 kernel is the serial one). For block b of a group, 144 bytes:
 *
 *   bytes 0..15            d of rows 0..7 (fp16, row m at 2m)
 *   bytes 16 + 32i + 4m + j, i < 4, m < 8, j < 4
 *                          qs[4i + j] of row m (low nibble: element 4i + j, high nibble:
 *                          element 4i + j + 16, as in HzBlockQ4_0)
 *
 * so one 32-byte load holds the 4-byte slice i of all 8 rows, each row in its own int32
 * lane: a token's block is then 8 byte dot products with its activation bytes broadcast,
 * which leave the 8 rows' integer sums in the 8 lanes. A group takes 8 · row_bytes bytes,
 * as before the repack, so row r0 (r0 % 8 == 0) still starts at byte r0 · row_bytes.
 *
 * Q4_K, Q5_K, Q6_K, IQ4_XS (HZ_REPACK_X8_U32; n_out % 32 == 0, the shapes of their serial
 * kernels): 8-row groups again; for super-block b of a group, 8 · B bytes (B the block
 * size): byte k < 4 · (B / 4) of row m at 32 · (k / 4) + 4m + k % 4, i.e. the blocks cut
 * into 4-byte units and the 8 rows' units interleaved, so that the row-lane kernels'
 * transposes (tile_rlk) are plain loads and the 8 rows are read as one stream; the
 * B % 4 bytes left (Q6_K: its 2-byte d, the last field of the 210-byte block) follow as the
 * 8 rows' tails in row order (row m's at 32 · (B / 4) + (B % 4) · m), so Q6_K's 8 d are one
 * 16-byte load. Q4_K and Q6_K decode (one token) with fused GEMVs that unpack and dot in
 * one pass (ggml-order-x86.inc).
 *
 * The kernels (HzGgmlTileFn on the repacked data) compute every output with the float
 * operations of the serial kernel (q4_0_x8_dot: acc = fma((float) isum, d_w·d_a, acc) per
 * block, in block order; k_serial for the K formats), so each is bit-identical to
 * hz_ggml_order_dots().one on the original row, for one token (decode) as for many (prompt
 * batches). Levels: plain C (the reference, repack.c; for HZ_REPACK_X8_U32 the rows taken
 * back and dotted by the scalar serial kernel), AVX2 (not IQ4_XS) and AVX-512 VNNI
 * (ggml-order-x86.inc), bit-identical
 * (tests/engine/test-ggml-order.c, /ggml-order/repack/<format>).
 *
 * Thread safety: pure functions.
 */
#pragma once

#include "ggml-order.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The rows × tokens kernel on repacked weights of a matrix of `n_out` rows of `n_in`
 *  elements of `type` at SIMD `level`, or NULL when that matrix is not repacked at that
 *  level (another format or shape, no kernel at that level, the CPU lacks `level`). Its arguments are those of
 *  HzGgmlTileFn with x = repacked data + r0 · row_bytes for a first row r0 % 8 == 0 and
 *  row_bytes the original row size; every 8-row group that the n_rows rows touch must be
 *  whole in the data (any n_rows, n_tok >= 0 otherwise). */
HzGgmlTileFn hz_repack_tile_at (uint32_t type, int64_t n_out, int64_t n_in, HzSimdLevel level);

/** hz_repack_tile_at() at hz_simd_level(). */
HzGgmlTileFn hz_repack_tile (uint32_t type, int64_t n_out, int64_t n_in);

/** Repack the n_out rows of `src` (rows contiguous, hz_quant_row_size() bytes each) into
 *  `dst`, of the same size, not overlapping src. Only for matrices that
 *  hz_repack_tile_at() gives a kernel for (at any level: the layout does not depend on it);
 *  FALSE (dst untouched) otherwise. */
bool hz_repack_rows (uint32_t type, int64_t n_out, int64_t n_in, const void *restrict src,
                     void *restrict dst);

#ifdef __cplusplus
}
#endif
