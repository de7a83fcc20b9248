/* engine/cpu/forward-paged.h — the forward pass over a mixed batch of rows from many
 * sequences whose K/V live in a paged pool (kv-paged.h): the serving loop's one call per
 * step (hanzo/serving.h).
 *
 * Rows: row t is token tokens[t] at position pos[t] of the sequence whose block table is
 * tables[t] (slots up to pos[t] reserved; slot pos[t] private to the sequence). Rows of one
 * sequence are consecutive and in position order (a prompt chunk or one decode token).
 * Layer by layer, cpu/forward.c computes q/k/v of all rows at once (weights read once per
 * step, Orca's batching); this file's hook stores each row's k/v into its block and runs
 * attention through the block table (cpu/attention-paged.h) over positions <= pos[t].
 *
 * Batch invariance: matmuls run in forward.c's row-invariant mode and attention is
 * row-invariant, so a row's logits do not depend on the other rows of the step.
 * Thread safety: as HzCpuForward (one thread at a time); parallel regions inside.
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include "cpu/forward.h"
#include "kv-paged.h"

G_BEGIN_DECLS

typedef struct {
  const int32_t       *tokens;   /* [n] */
  const guint         *pos;      /* [n] */
  const gint32 *const *tables;   /* [n] block table of each row's sequence */
  guint                n;        /* 1 .. the forward's n_batch */
  const guint         *out_rows; /* [n_out] rows whose logits are wanted, increasing */
  guint                n_out;
  /* [n] LoRA adapters of each row (NULL entry: the base), or NULL for none at all; rows of
   * one sequence carry the same stack (lora-adapter.h HzLoraStack) */
  const HzLoraStack *const *lora;
} HzPagedRows;

/** One forward pass of `f` (created for `llm`); logits of out_rows[i] at logits[i * n_vocab]. The pool's storage
 *  must match the model (n_layer, n_head_kv * head_dim). Errors as hz_cpu_forward_eval
 *  (HZ_ENGINE_ERROR_INVALID_ARGUMENT: bad token id or row count; nothing is written). */
gboolean hz_cpu_forward_paged (HzCpuForward *f, const HzLlm *llm, HzKvPool *pool,
                               const HzPagedRows *rows, float *logits, GError **error);

G_END_DECLS
