/* engine/cpu/attention.h — one attention head over a contiguous float32 KV cache, in
 * llama.cpp's order of float operations (non-flash attention of llama.cpp c392e509:
 * kq = mul_mat(k, q), soft_max_ext(kq, mask, scale), kqv = mul_mat(v, kq)).
 *
 *   out[0..hdv) = sum_j p_j v_j,  p = softmax(scale * (q . k_j)),  j in [0, n_valid)
 *
 * q: [hdk]. Key j at k + j * k_stride ([hdk], as ggml's K cache). Values are stored
 * transposed, as ggml stores V without flash attention: element e of value j at
 * vt[e * vt_stride + j]. n_pad >= n_valid is llama.cpp's n_kv (the used cache cells rounded
 * up to 32): the masked cells j in [n_valid, n_pad) get probability 0 and decide, as in
 * ggml, which elements fall into the SIMD part of each dot; their values must be finite.
 *   scores  ggml_vec_dot_f32 per key (hz_ggml_dot_f32)
 *   softmax hz_cpu_softmax_ggml (ops.h)
 *   out     ggml_vec_dot_f32 over n_pad cells when the evaluation has one query row
 *           (`batch` FALSE); llamafile's tinyBLAS order (hz_ggml_dot_f32_tb16) when it has
 *           several and n_pad % 16 == 0 and hdv % 4 == 0 (llamafile_sgemm's conditions)
 * scores: scratch of n_pad floats. Pure function: thread-safe with distinct scratch.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

void hz_cpu_attn_head (const float *q, const float *k, int64_t k_stride, const float *vt,
                       int64_t vt_stride, int64_t n_valid, int64_t n_pad, int hdk, int hdv,
                       float scale, gboolean batch, float *scores, float *out);

/** As hz_cpu_attn_head with Gemma 2's soft-capping of the scores before the softmax
 *  (softcap > 0: s_j = softcap * tanh(s_j / softcap), as llama.cpp's non-flash path chains
 *  ggml_scale, ggml_tanh, ggml_scale; 0: none, identical to hz_cpu_attn_head) and gpt-oss's
 *  attention sink (the head's learned logit in the softmax's denominator,
 *  hz_cpu_softmax_ggml_sink; -INFINITY: none). A sliding
 *  window is the caller's: it passes the cells of the window only (k, vt and the counts
 *  starting at the window's first position). */
void hz_cpu_attn_head_ext (const float *q, const float *k, int64_t k_stride, const float *vt,
                           int64_t vt_stride, int64_t n_valid, int64_t n_pad, int hdk, int hdv,
                           float scale, float softcap, float sink, gboolean batch,
                           float *scores, float *out);

G_END_DECLS
