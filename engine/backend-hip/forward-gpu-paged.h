/* engine/backend-hip/forward-gpu-paged.h — the serving step on the GPU (issue 5): the
 * forward pass over a mixed batch of rows from many sequences whose K/V live in a paged
 * pool, the device twin of engine/cpu/forward-paged.h with the same rows (HzPagedRows).
 *
 * Memory: the block allocator, reference counts, copy-on-write and the prefix cache stay
 * the host's HzKvPool (engine/kv-paged.h; usually created metadata-only, n_layer 0, for
 * this use). The device holds the storage of every block id of that pool: per layer
 * K [P][s][n_head_kv·hdk] and V [P][s][n_head_kv·hdv] fp32 (kernels/hzk.h, attn-paged),
 * i.e. n_layer·P·s·(dk + dv)·4 bytes. Copy-on-write reaches the device through the pool's
 * copy hook (hz_kv_pool_set_copy_func), which copies the block on the device stream.
 *
 * Step: the block tables of the batch's sequences, the rows' positions and sequence
 * indices are uploaded; then hz_gpu_forward_rows (forward-gpu.h) runs the n rows through
 * the layers with the weights streamed once per step for all rows (batched matvec up to 8
 * rows, qmmq above; HZ_GPU_SERVE_MV), and per layer this file's hook: q/k bias, norms and RoPE of every row
 * at its own position (hzk_qkv_rope on a per-row gathered RoPE table), the rows' K/V into
 * their slots (hzk_paged_kv_store), split-K flash attention per (row, head) through the
 * block table over positions 0..pos[t] (hzk_attn_paged). Logits only of the rows asked.
 * Decode steps (every row with logits) replay a graph captured per row count (launch
 * overhead: ~400 kernels per pass of a 7B model).
 * More rows than max_rows run as consecutive passes (rows of one sequence stay in order,
 * so a later pass sees the K/V of an earlier one).
 *
 * Numerics: as the GPU prefill (forward-gpu.h): int8 activations quantized as the CPU
 * quantizes them, fp32 attention; results agree with the CPU's paged forward to rounding,
 * not bit for bit. A row's result does not depend on the other rows of the step except
 * through the choice of kernel for the matrices (batched matvec for 1..8 rows, qmmq above),
 * which reduce in different orders (HZ_GPU_SERVE_MV=0 below).
 * Environment: HZ_GPU_SERVE_MV=N: passes of up to N rows run the matrices as the decode
 * matvec in batches of 8 (default 8: one batch), larger ones through qmmq; 0: always qmmq
 * and 32 attention splits per row, so that a row's logits do not depend on the rest of the
 * step (row-invariant mode).
 * Not supported: LoRA adapters (rows->lora: HZ_GPU_ERROR_UNSUPPORTED), fp16 K/V.
 * Thread safety: one thread at a time (the serving loop), like the pool.
 */
#pragma once

#include <glib.h>
#include "cpu/forward-paged.h"
#include "kv-paged.h"
#include "llm.h"

G_BEGIN_DECLS

typedef struct _HzGpuPaged HzGpuPaged;

/** Open GPU 0, upload `llm` (must outlive the result) and allocate the device storage of
 *  every block of `pool` (must outlive the result; its kv dims must match the model; its
 *  own storage, if any, is not used). The copy hook of `pool` is taken. max_rows: rows per
 *  device pass (the serving step's token budget); max_seq_len: the longest sequence
 *  (positions of the RoPE table). Errors as hz_gpu_forward_new, and
 *  HZ_ENGINE_ERROR_INVALID_ARGUMENT for a pool of another shape. */
HzGpuPaged *hz_gpu_paged_new (const HzLlm *llm, HzKvPool *pool, guint max_rows,
                              guint max_seq_len, GError **error);
/** Free everything and release the pool's copy hook. NULL is ignored. */
void hz_gpu_paged_free (HzGpuPaged *g);
/** "NVIDIA H200 (…), 3.83 GB of weights…, paged KV 4096 blocks of 16 (2.1 GB)". */
const char *hz_gpu_paged_describe (const HzGpuPaged *g);

/** Same contract as hz_cpu_forward_paged (cpu/forward-paged.h) without LoRA: rows->n
 *  rows, each stored into its slot and attending through its block table; logits of
 *  rows->out_rows[i] at logits[i·n_vocab] (host). Synchronous. Errors:
 *  HZ_ENGINE_ERROR_INVALID_ARGUMENT (bad token id, a position beyond max_seq_len or a
 *  block id outside the pool), HZ_GPU_ERROR_UNSUPPORTED (LoRA rows),
 *  HZ_GPU_ERROR_RUNTIME. */
gboolean hz_gpu_paged_forward (HzGpuPaged *g, const HzPagedRows *rows, float *logits,
                               GError **error);

G_END_DECLS
