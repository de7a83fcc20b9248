/* engine/model-source.h — a model on its way to a GGUF file: the metadata writer, the
 * tensors (name, shape, type, bytes) and the objects their bytes live in. Filled by the
 * readers of quantize.c (a GGUF file) and hf-import.c (a Hugging Face folder), consumed by
 * the quantizer and the load-time conversion (ISQ). Internal to libhzengine.
 *
 * Thread safety: an HzModelSource is used by one thread at a time.
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include "gguf.h"

G_BEGIN_DECLS

/** Model facts the mixes depend on (llama.cpp's quantize_state_impl + hparams). */
typedef struct {
  const char *arch;       /* general.architecture ("llama", "falcon", ...) */
  int32_t     n_layer;    /* <arch>.block_count */
  int32_t     n_head;     /* <arch>.attention.head_count */
  int32_t     n_head_kv;  /* <arch>.attention.head_count_kv (default n_head) */
  int32_t     n_expert;   /* <arch>.expert_count (0 = dense) */
} HzQuantModelInfo;

/** One tensor of a source: its GGUF name, shape (ne[0] the row length, as ggml), table
 *  type and bytes. `data` is used in place (a mapping the source keeps) or points into
 *  `owned`, a converted copy freed with the tensor. */
typedef struct {
  char       *name;
  uint32_t    n_dims;
  int64_t     ne[4];
  uint32_t    type;
  const void *data;
  uint64_t    n_bytes;
  void       *owned;   /* a converted copy `data` points into (g_free), or NULL */
} HzSrcTensor;

/** A model to be written as GGUF: the output's metadata so far (`w`, tensors added later),
 *  the tensors in the source's order, what the quant chooser needs to know (`info`, `arch`),
 *  and the objects the tensors' data lives in (`keep`, freed last-in first-out by
 *  hz_model_source_release). Filled by a reader: quantize.c's GGUF reader or
 *  hz_hf_import_folder (hf-import.h). */
typedef struct {
  HzGgufWriter *w;        /* metadata of the output, tensors added later */
  GPtrArray    *tensors;  /* HzSrcTensor* */
  GPtrArray    *keep;     /* owned objects: buffers, HzGguf, HzSafetensors */
  HzQuantModelInfo info;
  char         *arch;
  const HzGguf *gguf;     /* the source file when it is a GGUF (in `keep`), else NULL */
} HzModelSource;

/** Empty source: a new metadata writer, no tensors, nothing kept. Never fails. */
void hz_model_source_init (HzModelSource *s);
/** Keeps `p` alive until hz_model_source_release, which calls f (p) (in reverse order of
 *  keeping: a tensor's buffer before the file it was read from). */
void hz_model_source_keep (HzModelSource *s, gpointer p, GDestroyNotify f);
/** Frees the kept objects (the tensors' `data` then dangles unless `owned`). */
void hz_model_source_release (HzModelSource *s);
/** Frees the writer, the tensors and `arch`, and zeroes `s` (call after
 *  hz_model_source_release). */
void hz_model_source_clear (HzModelSource *s);

G_END_DECLS
