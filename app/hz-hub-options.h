/* hz-hub-options.h — the GGUF models of a Hugging Face Hub repository as choices for this
 * computer (issue 27): per model (one file, or a split set downloaded as a whole), its
 * quantization, size, whether it fits in memory, its predicted decode speed, and which one
 * is recommended.
 *
 * Prediction. Before a file is downloaded only its size is known (the repository's
 * listing), not its header. The bytes read per token are taken as the file's size: a dense
 * model reads every weight once per token (hz-model-info.h's cost law t = t0 + bytes / B);
 * the header and the embedding table, of which a token reads one row, make the file a few
 * percent larger than what a token reads, so the figure errs low by that much. The
 * per-token overhead t0 depends on the model's shape and is unknown until a reply of that
 * shape has been measured, so it is taken as 0 and the predicted rate B / size is an upper
 * bound, shown as "at most". After the download the model manager predicts from the
 * header and the measured replies (hz_model_library_speed_model).
 *
 * Fits: hz_memory_needed (size) <= the memory available now (hz_memory_available): the
 * weights plus 10 % and 512 MiB for the KV cache, scratch buffers and the app.
 *
 * Recommended (the rule hz_hub_options_rule() states for the user): among the models that
 * fit and whose predicted speed reaches the speed target (GSettings speed-target; any
 * speed while the memory bandwidth is not measured), Q4_K_M when there is one (the usual
 * balance of size and quality: smaller formats lose quality quickly, larger ones cost
 * memory and speed for little gain; what llama.cpp and Ollama pick by default), else the
 * largest, i.e. the best quality. When none reaches the target, the smallest that fits (the
 * fastest); when none fits, none. Vision projectors ("mmproj") are not models here.
 *
 * Thread safety: reentrant; hz_hub_options_rule() is for the main thread (gettext).
 */
#pragma once

#include <gio/gio.h>
#include "hanzo/egress.h"

G_BEGIN_DECLS

/** One model of a repository. */
typedef struct {
  char      *quant;          /* quantization tag ("Q4_K_M", "F16"), NULL when the name has none */
  char      *path;           /* path of its (first) file in the repository */
  GPtrArray *files;          /* HzHubFile* borrowed from the listing: the file, or the split
                                set in shard order */
  guint64    size;           /* bytes of all its files */
  gboolean   fits;           /* fits in memory with the margin of hz_memory_needed() */
  double     tokens_per_s;   /* predicted decode rate, an upper bound; 0 = unknown (no
                                bandwidth) */
  gboolean   recommended;
} HzHubOption;

/** Frees an option (not the listing's files it points to); NULL is ignored. */
void       hz_hub_option_free (HzHubOption *option);

/** The models of `listing` (HzHubFile*, as hz_hub_list_files() returns it; must outlive
 *  the result) for a computer with `memory` bytes available (0: unknown, everything fits)
 *  and a memory read speed of `bandwidth` bytes/s (0: not measured), with the speed target
 *  `target` tokens/s, one recommended by the rule above. Ordered by quantization, the
 *  quantization of the largest model first, and by size (largest first) within one.
 *  Returns HzHubOption* (the array frees them); empty when the listing has no GGUF model.
 *  A split set whose shards are not all listed is left out. */
GPtrArray *hz_hub_options_new (GPtrArray *listing, guint64 memory, double bandwidth,
                               double target);

/** The recommendation rule in a sentence for the user (translated; static). */
const char *hz_hub_options_rule (void);

G_END_DECLS
