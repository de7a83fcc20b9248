/* engine/cpu/attention-paged.h — attention over K/V read through a block table
 * (PagedAttention, Kwon et al. SOSP 2023), and the store of new K/V rows into blocks.
 *
 * Batch-invariant: the output of a (token, head) depends only on q and the sequence's
 * K/V, never on the other rows of the batch or on how positions were split into steps —
 * what lets preempted, prefix-cached and co-scheduled sequences reproduce a solo run bit
 * for bit. Order of operations: scores by key-dimension-major multiply-adds per block
 * (K is stored transposed inside a block), hz_cpu_softmax_ggml over exactly n_kv cells
 * (no padding), values summed in position order. (It does not reproduce llama.cpp's
 * padded, batch-dependent order of cpu/attention.h; nor does llama.cpp's own server.)
 *
 * Layout (kv-paged.h): position p of a sequence is slot p % s of block table[p / s]; K of
 * a block [kv_dim_k][s], V [s][kv_dim_v]; head kvh uses K rows / V columns
 * [kvh * hd, (kvh + 1) * hd).
 * Thread safety: pure functions of their arguments; distinct scratch per thread.
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include "kv-paged.h"

G_BEGIN_DECLS

/** out[0..hdv) = sum_j softmax(scale * q . k_j)_j v_j over positions j < n_kv of the
 *  sequence whose blocks are `table`, head kvh of layer `layer`. q: [hdk];
 *  scores: scratch of n_kv floats. */
void hz_cpu_attn_head_paged (const float *q, HzKvPool *pool, guint layer,
                             const gint32 *table, int kvh, int64_t n_kv, int hdk, int hdv,
                             float scale, float *scores, float *out);

/** As hz_cpu_attn_head_paged over the positions lo <= j < n_kv only (a sliding window;
 *  lo = 0: all), with the scores soft-capped before the softmax when softcap > 0
 *  (s_j = softcap * tanh(s_j / softcap), Gemma 2), and gpt-oss's attention sink `sink` in
 *  the denominator (-INFINITY: none). scores: scratch of n_kv - lo floats. */
void hz_cpu_attn_head_paged_ext (const float *q, HzKvPool *pool, guint layer,
                                 const gint32 *table, int kvh, int64_t lo, int64_t n_kv,
                                 int hdk, int hdv, float scale, float softcap, float sink,
                                 float *scores, float *out);

/** Write one token's k [kv_dim_k] and v [kv_dim_v] of layer `layer` at position `pos` of
 *  the sequence whose blocks are `table` (the slot must be reserved and private). */
void hz_cpu_kv_store_paged (HzKvPool *pool, guint layer, const gint32 *table, guint pos,
                            const float *k, const float *v);

G_END_DECLS
