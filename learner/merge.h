/* learner/merge.h — bake a LoRA adapter into a base model: a new GGUF whose adapted
 * matrices are W' = W + scaling * B A (`hanzo learn merge`).
 *
 * Every tensor and metadata key of the base is copied; each matrix that carries an adapter
 * is dequantized with the quant table's to_float, updated in float, and re-quantized with
 * the table's from_float to `type` (or to its own type when type < 0, or when `type`'s
 * blocks do not divide the row length, e.g. n_ff = 172 with 32-element blocks). Formats whose
 * from_float needs an importance matrix (some IQ formats) cannot be targets
 * (HZ_LEARN_ERROR_INVALID). The adapter's rows are already in the GGUF order (lora.h), so
 * q/k need no permutation. general.name gets a " (merged)" suffix and the key
 * hanzo.merged_adapter.alpha / .r record the adapter.
 *
 * Thread safety: reentrant. Memory: one float copy of the largest adapted matrix.
 */
#pragma once

#include <glib.h>
#include "lora.h"

G_BEGIN_DECLS

/** Write `out_path` = the GGUF at `base_path` with `lora` merged in (type: ggml type id of
 *  the merged matrices, or -1 to keep each one's). Errors: HZ_GGUF_ERROR (reading or
 *  writing), HZ_LEARN_ERROR_MISMATCH (adapter does not fit), HZ_LEARN_ERROR_INVALID (type). */
gboolean hz_lora_merge_gguf (const char *base_path, const HzLora *lora, int type,
                             const char *out_path, GError **error);

G_END_DECLS
