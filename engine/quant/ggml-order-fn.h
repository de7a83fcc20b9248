/* engine/quant/ggml-order-fn.h — the function types of the exact-order kernels
 * (ggml-order.h) that work on more than one row at a time: four rows against one activation
 * row, and tiles of rows × activation rows. A header of its own so that the kernel files
 * (ggml-order-impl.h, ggml-order-x86.c, repack.c) and the public ggml-order.h share them
 * without including each other.
 */
#pragma once

#include "quant-types.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Four consecutive weight rows, `row_bytes` apart starting at x, against one activation
 *  row y: s[0..3], each bit-identical to `one` on its row (the four rows' serial float
 *  chains are interleaved, which hides the FMA latency that bounds a single chain). */
typedef void (*HzGgmlDot4Fn) (int n, float *restrict s, const void *restrict x,
                              size_t row_bytes, const void *restrict y);

/** A tile of `n_rows` consecutive weight rows (`row_bytes` apart from x) against `n_tok`
 *  activation rows (`y_stride` bytes apart from y), all of `n` elements:
 *  s[t * ld + r] = dot(row r, activation t) for r < n_rows, t < n_tok (other elements of s
 *  untouched), each bit-identical to `batch` on that pair (for the kernels that have a tile,
 *  `batch` and `one` are the same kernel, so also to `one`). Each weight block is unpacked
 *  once per 8 activation rows; any n_rows, n_tok >= 0 (ragged edges included). s must not
 *  alias x or y. */
typedef void (*HzGgmlTileFn) (int n, int n_rows, int n_tok, float *restrict s, size_t ld,
                              const void *restrict x, size_t row_bytes,
                              const void *restrict y, size_t y_stride);

#ifdef __cplusplus
}
#endif
