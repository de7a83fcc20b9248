/* learner/checkpoint.h — resumable training state: the adapters (PEFT safetensors, F32) and
 * the AdamW state in one directory, so a job interrupted by a pause, the end of the night
 * window, a crash or a reboot continues where it stopped.
 *
 * Layout of `dir`: adapter_model.safetensors + adapter_config.json (adapter-io.h, F32: the
 * adapter for inspection or PEFT) and optimizer.bin, the state that is restored: magic
 * "HZCKPT01", int64 step, int64 n, then params[n], m[n] and v[n] as little-endian float32,
 * then the job's tag (a UTF-8 string identifying the job and its data, compared on load). Files are replaced atomically (temporary + rename);
 * optimizer.bin is written last, so a checkpoint is valid iff it exists and parses.
 *
 * Thread safety: reentrant; one writer per directory.
 */
#pragma once

#include <glib.h>
#include "lora.h"
#include "optim.h"

G_BEGIN_DECLS

/** Save `lora` and `opt` into `dir` (created) with `tag`. Errors: G_FILE_ERROR, those of
 *  hz_lora_save_peft(). */
gboolean hz_checkpoint_save (const char *dir, const HzLora *lora, const HzAdamW *opt,
                             const char *tag, GError **error);

/** Restore a checkpoint written for the same job: returns FALSE without error when `dir`
 *  holds none or one with another tag or parameter count, or one that
 *  hz_checkpoint_load_from_data() refuses (start afresh), FALSE with
 *  an error when the file cannot be read. On TRUE, lora->params and opt (moments, step) are set. */
gboolean hz_checkpoint_load (const char *dir, HzLora *lora, HzAdamW *opt, const char *tag,
                             GError **error);

/** The restoring part of hz_checkpoint_load(): `len` bytes of an optimizer.bin (any
 *  bytes; no alignment needed). TRUE when they are a checkpoint of this job: magic, step
 *  >= 0, n equal to opt->n and lora->n_params, exactly 3 n floats then `tag`, every value
 *  finite and every second moment >= 0; lora->params, opt->m, opt->v and opt->step are
 *  then set. FALSE otherwise, with `lora` and `opt` untouched. Reentrant. Public for
 *  tests/fuzz/fuzz-checkpoint.c. */
gboolean hz_checkpoint_load_from_data (const void *data, gsize len, HzLora *lora,
                                       HzAdamW *opt, const char *tag);

/** Remove a checkpoint directory's files (after the job finished). */
void hz_checkpoint_clear (const char *dir);

G_END_DECLS
