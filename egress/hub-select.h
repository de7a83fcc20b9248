/* egress/hub-select.h — which GGUF file(s) of a Hub repository to download (issue 27).
 *
 * Pure functions over a repository listing (HzHubFile*, hub.h): no network, no I/O.
 * A "model" of a repository is one .gguf file or one split set (llama.cpp's gguf-split
 * names: STEM-00001-of-00003.gguf ... STEM-00003-of-00003.gguf), which is downloaded and
 * placed as a whole. Vision projectors (names containing "mmproj") are not models here
 * unless named explicitly.
 *
 * Quantization tags come from the file name, as the GGUF ecosystem writes them
 * (llama.cpp's llama-quantize type names: "Q4_K_M", "IQ4_XS", "Q8_0", "BF16", ...; Ollama
 * and llama.cpp's -hf REPO:QUANT pick files the same way).
 *
 * Thread safety: reentrant.
 */
#pragma once

#include "hub.h"

G_BEGIN_DECLS

/** The default preference when no quantization is asked for, best first: Q4_K_M is the
 *  usual balance of size and quality (what llama.cpp's -hf and Ollama pick by default). */
#define HZ_HUB_DEFAULT_QUANTS \
  "Q4_K_M", "Q4_K_S", "Q5_K_M", "IQ4_XS", "IQ4_NL", "Q4_0", "Q5_K_S", "Q5_0", "Q6_K", \
  "Q8_0", "Q3_K_L", "Q3_K_M", "BF16", "F16", "F32"

/** The quantization tag in `path` (upper case, "FP16" as "F16"), from the last tag in the
 *  file name, else in the folder names; NULL when there is none. g_free. */
char *hz_hub_quant_tag (const char *path);

/** Whether `path` is a shard of a split GGUF: TRUE with *index (1-based), *count and
 *  *stem (the path before "-0000I-of-0000N.gguf"; g_free; may be NULL) set. */
gboolean hz_hub_split_info (const char *path, guint *index, guint *count, char **stem);

/** The files to download and why. */
typedef struct {
  GPtrArray *files;   /* HzHubFile* borrowed from the listing: one file, or a whole split set
                         in shard order */
  char      *quant;   /* its quantization tag, or NULL */
  guint64    size;    /* bytes of all files */
  char      *why;     /* one sentence for the user: what was picked and why */
} HzHubChoice;

/** Frees a choice (not the listing's files it points to); NULL is ignored. */
void hz_hub_choice_free (HzHubChoice *choice);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzHubChoice, hz_hub_choice_free)

/** Picks from `listing` (HzHubFile*): the file `file` when given (a path in the repository
 *  or a unique base name; a shard brings its whole set), else the model tagged `quant`
 *  when given (case-insensitive), else the first of HZ_HUB_DEFAULT_QUANTS present, else the
 *  smallest model. Errors: HZ_HUB_ERROR_NOT_FOUND (no GGUF model at all, no such file or
 *  quantization: the message lists what there is), HZ_HUB_ERROR_INVALID (several files
 *  match: the message lists them), HZ_HUB_ERROR_BAD_REPLY (a split set is incomplete). */
HzHubChoice *hz_hub_choose (GPtrArray *listing, const char *quant, const char *file,
                            GError **error);

/** The quantization tags of the listing's models, distinct, in listing order, joined with
 *  ", " ("" for none). g_free. */
char *hz_hub_list_quants (GPtrArray *listing);

G_END_DECLS
