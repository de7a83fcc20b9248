/* engine/cpu/attention.h — one attention head over a contiguous float32 KV cache.
 *
 *   out[0..hdv) = sum_j p_j v_j,  p = softmax(scale * (q . k_j)),  j in [0, n_kv)
 *
 * q: [hdk]. Keys are stored transposed: element e of key j at kt[e * kt_stride + j], so
 * that the scores of all positions are computed as hdk vectorised axpys (no horizontal
 * sums, whatever the head size). Value j at v + j * v_stride ([hdv]);
 * scores: scratch of n_kv floats. The caller applies the causal mask by choosing n_kv.
 * Softmax as hz_cpu_softmax (ops.h). Pure function: thread-safe with distinct scratch.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

void hz_cpu_attn_head (const float *q, const float *kt, int64_t kt_stride, const float *v,
                       int64_t v_stride, int64_t n_kv, int hdk, int hdv, float scale,
                       float *scores, float *out);

G_END_DECLS
