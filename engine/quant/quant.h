/* engine/quant/quant.h — the quant-agnostic core: traits and codec dispatch for every ggml
 * tensor format, generated from engine/quant/formats.def (X-macro). No switch statements on
 * formats anywhere else in the engine: callers go through hz_quant_traits().
 *
 * Block layouts and reference algorithms: ggml's ggml-common.h and ggml-quants.c
 * (llama.cpp c392e509). Results are bit-exact with ggml (tests/engine/test-quant.c).
 *
 * Thread safety: all functions are pure and reentrant.
 */
#pragma once

#include "quant-types.h"

#include <stddef.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  const char   *name;          /* ggml_type_name(): "q4_0", "f32", ... */
  HzType        type;          /* == ggml id */
  uint32_t      block_elems;
  uint32_t      block_bytes;
  HzType        vec_dot_type;
  bool          is_quantized;  /* block_elems > 1 */
  HzToFloatFn   to_float;
  HzFromFloatFn from_float;    /* NULL when the format needs an importance matrix */
  HzVecDotFn    vec_dot;
} HzQuantTraits;

/** Traits for a ggml type id, or NULL if the id is not in the table. */
const HzQuantTraits *hz_quant_traits (uint32_t type);
/** Traits by ggml name (case-insensitive, "q4_k" or "Q4_K"), or NULL. */
const HzQuantTraits *hz_quant_traits_by_name (const char *name);
/** Number of rows in the table and the i-th row (for walking the table). */
size_t hz_quant_n_formats (void);
const HzQuantTraits *hz_quant_format (size_t i);
/** Bytes of a row of n elements; 0 if n is not a multiple of the block size or the type
 *  is unknown. */
size_t hz_quant_row_size (uint32_t type, int64_t n);

/** The level the dispatch tables were filled for (after CPUID and HZ_SIMD). */
HzSimdLevel hz_simd_level (void);
/** Whether this CPU can run kernels of `level` (scalar: always). */
bool hz_simd_supported (HzSimdLevel level);
/** "scalar", "avx2", "avx512"; "?" for an out-of-range value. */
const char *hz_simd_level_name (HzSimdLevel level);
/** The vec_dot kernel of `type` written for exactly `level`, or NULL when the format has no
 *  kernel at that level, has no vec_dot at all (activation-only formats) or the id is
 *  unknown. The caller must check hz_simd_supported(level) before calling a non-scalar
 *  kernel. Used by tests and benchmarks to compare paths. */
HzVecDotFn hz_quant_vec_dot_at (uint32_t type, HzSimdLevel level);

/** Quantizes `nrows` rows of `n_per_row` floats into `dst` as llama-quantize does without
 *  an importance matrix (ggml_quantize_chunk(type, ..., imatrix = NULL)): the reference
 *  quantizer of each row, except where ggml's file quantizer differs (IQ4_NL tries more
 *  scales). Returns the bytes written, or 0 (nothing written) when the type is unknown,
 *  needs an importance matrix, or n_per_row is not a multiple of its block size.
 *  Thread-safe; rows are independent, so callers may split them across threads. */
size_t hz_quant_quantize_rows (uint32_t type, const float *src, void *dst, int64_t nrows,
                               int64_t n_per_row);

/** The quantizer for activations of vec_dot_type `type`, bit-exact with what ggml's CPU
 *  backend uses in mul_mat (ggml_get_type_traits_cpu(type)->from_float): for Q8_0 and
 *  Q8_1 that is the x86 SIMD quantizer (scale 127/absmax, round half to even), which can
 *  differ from the reference from_float (1/(absmax/127), roundf) by one step in rare
 *  elements; for every other type it is from_float. Use it to reproduce llama.cpp's
 *  logits. NULL for unknown ids and imatrix-only types. Thread-safe. */
HzFromFloatFn hz_quant_act_from_float (uint32_t type);

/** fp16/bf16 <-> f32, bit-exact with ggml (ggml-impl.h). */
float    hz_fp16_to_fp32 (uint16_t h);
uint16_t hz_fp32_to_fp16 (float f);
float    hz_bf16_to_fp32 (uint16_t h);
uint16_t hz_fp32_to_bf16 (float f);   /* round to nearest even, NaN kept quiet */

#ifdef __cplusplus
}
#endif
