/* engine/safetensors.h — safetensors reader and writer (the LoRA adapter files of the
 * learner and the wire format of the federation egress).
 *
 * Format (huggingface/safetensors, docs "Format"): u64 little-endian N, then N bytes of a
 * UTF-8 JSON object { "<name>": {"dtype": "F32"|"F16"|"BF16"|..., "shape": [d0, ...],
 * "data_offsets": [begin, end]}, ..., "__metadata__": {"key": "string", ...} }, then the
 * byte buffer; offsets are relative to the buffer start. Tensors are row-major (C order),
 * little-endian. We write the header padded with spaces to a multiple of 8 bytes, tensors
 * in insertion order with contiguous offsets (no gaps), and refuse on read any file whose
 * offsets overlap, leave holes, fall outside the buffer, or disagree with shape x dtype.
 *
 * Thread safety: an opened HzSafetensors is immutable and may be shared between threads.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

#define HZ_SAFETENSORS_ERROR (hz_safetensors_error_quark ())
GQuark hz_safetensors_error_quark (void);
typedef enum {
  HZ_SAFETENSORS_ERROR_IO,
  HZ_SAFETENSORS_ERROR_TRUNCATED,  /* header or data shorter than declared */
  HZ_SAFETENSORS_ERROR_HEADER,     /* header not valid JSON / wrong structure */
  HZ_SAFETENSORS_ERROR_DTYPE,      /* unknown dtype */
  HZ_SAFETENSORS_ERROR_LAYOUT,     /* bad shape, offsets, overlap, holes, size mismatch */
} HzSafetensorsError;

typedef enum {
  HZ_ST_F32, HZ_ST_F16, HZ_ST_BF16, HZ_ST_F64, HZ_ST_I64, HZ_ST_I32, HZ_ST_I16, HZ_ST_I8,
  HZ_ST_U8, HZ_ST_BOOL,
} HzStDtype;

#define HZ_ST_MAX_DIMS 8

typedef struct {
  char       *name;
  HzStDtype   dtype;
  guint       n_dims;
  int64_t     shape[HZ_ST_MAX_DIMS];
  const void *data;      /* inside the file mapping / buffer; may be unaligned */
  gsize       n_bytes;
} HzSafetensor;

/** Name of a dtype as written in headers ("F32", "BF16", ...). */
const char *hz_st_dtype_name (HzStDtype dtype);
/** Bytes per element. */
gsize       hz_st_dtype_size (HzStDtype dtype);

typedef struct _HzSafetensors HzSafetensors;

/** Map and validate a file. Errors in HZ_SAFETENSORS_ERROR; every message starts with
 *  `path` ("PATH: ...") and names the tensor at fault where there is one. */
HzSafetensors *hz_safetensors_open (const char *path, GError **error);
/** Validate an in-memory file image; `bytes` is referenced, not copied. Errors as
 *  hz_safetensors_open() without the path (the caller knows where the bytes came from). */
HzSafetensors *hz_safetensors_new_from_bytes (GBytes *bytes, GError **error);
void           hz_safetensors_free (HzSafetensors *st);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzSafetensors, hz_safetensors_free)

guint               hz_safetensors_n_tensors (const HzSafetensors *st);
/** Tensors in file (offset) order. */
const HzSafetensor *hz_safetensors_tensor (const HzSafetensors *st, guint i);
const HzSafetensor *hz_safetensors_find (const HzSafetensors *st, const char *name);
/** A "__metadata__" value, or NULL. */
const char         *hz_safetensors_metadata (const HzSafetensors *st, const char *key);
/** Header length N in bytes (as stored, padding included). */
guint64             hz_safetensors_header_size (const HzSafetensors *st);

typedef struct _HzSafetensorsWriter HzSafetensorsWriter;
HzSafetensorsWriter *hz_safetensors_writer_new (void);
void hz_safetensors_writer_free (HzSafetensorsWriter *w);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzSafetensorsWriter, hz_safetensors_writer_free)
/** Add a tensor (data copied). n_bytes must equal prod(shape) * dtype size and the name
 *  must be new and not "__metadata__"; otherwise FALSE with HZ_SAFETENSORS_ERROR_LAYOUT. */
gboolean hz_safetensors_writer_add (HzSafetensorsWriter *w, const char *name, HzStDtype dtype,
                                    guint n_dims, const int64_t *shape,
                                    const void *data, gsize n_bytes, GError **error);
void     hz_safetensors_writer_set_metadata (HzSafetensorsWriter *w, const char *key,
                                             const char *value);
/** The complete file image. */
GBytes  *hz_safetensors_writer_to_bytes (HzSafetensorsWriter *w);
/** Write atomically (common/hanzo/atomic-file.h: a kill or a full disk leaves the previous file
 *  or none, and no temporary file). Errors: HZ_SAFETENSORS_ERROR_IO naming the path. */
gboolean hz_safetensors_writer_write_file (HzSafetensorsWriter *w, const char *path,
                                           GError **error);

G_END_DECLS
