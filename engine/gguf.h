/* engine/gguf.h — GGUF v2/v3 reader (mmap'ed, validated) and writer.
 *
 * Format: ggml's docs/gguf.md (github.com/ggml-org/ggml). All integers little-endian.
 * Layout: magic "GGUF", u32 version (2 or 3), u64 n_tensors, u64 n_kv, then n_kv
 * key/value pairs (key: u64 len + bytes; u32 value type; value), then n_tensors tensor
 * infos (name; u32 n_dims (<= 4); u64 ne[n_dims]; u32 ggml type; u64 offset relative to
 * the data section), then padding to `general.alignment` (default 32), then the data.
 *
 * Thread safety: an HzGguf is immutable after hz_gguf_open() and may be read from any
 * number of threads. The writer is single-threaded.
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include <stddef.h>

G_BEGIN_DECLS

#define HZ_GGUF_ERROR (hz_gguf_error_quark ())
GQuark hz_gguf_error_quark (void);

/** Error codes of HZ_GGUF_ERROR. Every message names the offending key or tensor. */
typedef enum {
  HZ_GGUF_ERROR_IO,            /* open/mmap/write failed (errno text in the message) */
  HZ_GGUF_ERROR_TRUNCATED,     /* a read would go past the end of the file */
  HZ_GGUF_ERROR_BAD_MAGIC,     /* not "GGUF" */
  HZ_GGUF_ERROR_VERSION,       /* version other than 2 or 3 */
  HZ_GGUF_ERROR_OVERFLOW,      /* a count or size overflows or is absurd for the file size */
  HZ_GGUF_ERROR_OUT_OF_BOUNDS, /* tensor data outside the file / misaligned / overlapping header */
  HZ_GGUF_ERROR_UNKNOWN_TYPE,  /* unknown metadata value type or ggml tensor type */
  HZ_GGUF_ERROR_INVALID,       /* anything else malformed: duplicate key/tensor, bad dims, ... */
} HzGgufError;

/** Sets `error` to HZ_GGUF_ERROR_INVALID with the printf-style message and returns FALSE,
 *  for importers that turn other formats into GGUF metadata (a Hugging Face folder, its
 *  tokenizer). Thread-safe. */
gboolean hz_gguf_fail_invalid (GError **error, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

/** Metadata value types (gguf.md, `gguf_metadata_value_type`). */
typedef enum {
  HZ_GGUF_TYPE_UINT8 = 0, HZ_GGUF_TYPE_INT8 = 1, HZ_GGUF_TYPE_UINT16 = 2,
  HZ_GGUF_TYPE_INT16 = 3, HZ_GGUF_TYPE_UINT32 = 4, HZ_GGUF_TYPE_INT32 = 5,
  HZ_GGUF_TYPE_FLOAT32 = 6, HZ_GGUF_TYPE_BOOL = 7, HZ_GGUF_TYPE_STRING = 8,
  HZ_GGUF_TYPE_ARRAY = 9, HZ_GGUF_TYPE_UINT64 = 10, HZ_GGUF_TYPE_INT64 = 11,
  HZ_GGUF_TYPE_FLOAT64 = 12,
} HzGgufType;

/** Short name of a value type ("u8", "i32", "f32", "bool", "string", "array", "u64", ...),
 *  or "?" for a value outside the enum. Static string; thread-safe. */
const char *hz_gguf_type_name (HzGgufType type);

typedef struct _HzGguf HzGguf;

/** A string inside the mapped file: NOT NUL-terminated; valid while the HzGguf lives. */
typedef struct { const char *ptr; uint64_t len; } HzGgufStr;

/** Tensor info. `ne[0]` is the innermost (row) dimension as in ggml; unused dims are 1.
 *  `data` points into the mapping; `n_bytes` = row size(type, ne[0]) * ne[1]*ne[2]*ne[3]. */
typedef struct {
  HzGgufStr   name;
  uint32_t    n_dims;
  int64_t     ne[4];
  uint32_t    type;       /* ggml type id (see engine/quant/formats.def) */
  uint64_t    offset;     /* relative to the data section */
  const void *data;
  uint64_t    n_bytes;
} HzGgufTensor;

/** Open and validate a GGUF file (read-only mmap). Returns NULL with HZ_GGUF_ERROR set on
 *  any problem; never reads outside the file. Tensor types unknown to the quant table
 *  give HZ_GGUF_ERROR_UNKNOWN_TYPE naming the tensor. HZ_GGUF_ERROR_IO (cannot open or
 *  map), HZ_GGUF_ERROR_BAD_MAGIC (not a GGUF file; the first 4 bytes escaped and in
 *  hex) and a file too short for the magic give messages that begin with "PATH: "; the
 *  others name the header, key or tensor. */
HzGguf *hz_gguf_open (const char *path, GError **error);
/** Same, over a caller-owned buffer that must outlive the HzGguf (used by the fuzzer). */
HzGguf *hz_gguf_open_from_data (const void *data, size_t size, GError **error);
void    hz_gguf_free (HzGguf *gguf);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzGguf, hz_gguf_free)

uint32_t    hz_gguf_version (const HzGguf *g);
uint32_t    hz_gguf_alignment (const HzGguf *g);
size_t      hz_gguf_file_size (const HzGguf *g);
const void *hz_gguf_file_data (const HzGguf *g);
uint64_t    hz_gguf_data_offset (const HzGguf *g);  /* byte offset of the data section */

/* ---- metadata: keys are indexed 0..n_kv-1 in file order ---- */
int64_t     hz_gguf_n_kv (const HzGguf *g);
/** Index of `key`, or -1. O(1) (hash table). */
int64_t     hz_gguf_find_key (const HzGguf *g, const char *key);
HzGgufStr   hz_gguf_key (const HzGguf *g, int64_t i);
HzGgufType  hz_gguf_kv_type (const HzGguf *g, int64_t i);
/** For arrays: element type and count (nested arrays: HZ_GGUF_TYPE_ARRAY). */
HzGgufType  hz_gguf_arr_type (const HzGguf *g, int64_t i);
uint64_t    hz_gguf_arr_n (const HzGguf *g, int64_t i);
/** Pointer to the packed little-endian elements of a numeric/bool array (NULL for
 *  string or nested arrays). May be unaligned: read with memcpy. */
const void *hz_gguf_arr_data (const HzGguf *g, int64_t i);
/** j-th string of a string array (index checked: returns {NULL,0} when out of range). */
HzGgufStr   hz_gguf_arr_str (const HzGguf *g, int64_t i, uint64_t j);

/* Typed scalar getters with conversion between integer widths (range-checked), bools and
 * floats. Return FALSE if the key is missing or of an incompatible type. */
gboolean hz_gguf_get_u32  (const HzGguf *g, const char *key, uint32_t *out);
gboolean hz_gguf_get_i64  (const HzGguf *g, const char *key, int64_t *out);
gboolean hz_gguf_get_f32  (const HzGguf *g, const char *key, float *out);
gboolean hz_gguf_get_bool (const HzGguf *g, const char *key, gboolean *out);
/** Newly allocated NUL-terminated copy of a string value, or NULL. */
char    *hz_gguf_get_str  (const HzGguf *g, const char *key);
/** Human-readable rendering of value i (arrays abbreviated after `max_elems`). */
char    *hz_gguf_value_to_string (const HzGguf *g, int64_t i, guint max_elems);

/* ---- tensors ---- */
int64_t             hz_gguf_n_tensors (const HzGguf *g);
const HzGgufTensor *hz_gguf_tensor (const HzGguf *g, int64_t i);
/** Tensor by name, or NULL. O(1). */
const HzGgufTensor *hz_gguf_find_tensor (const HzGguf *g, const char *name);

/* ---- writer ----
 * Usage: w = hz_gguf_writer_new (); set_* ...; add_tensor ...; hz_gguf_writer_write_file.
 * Keys keep insertion order; setting a key twice replaces the value. Tensor data is
 * copied at add time only when `copy` is TRUE, else the pointer must stay valid until
 * written. Writes GGUF v3 with general.alignment (default 32). */
typedef struct _HzGgufWriter HzGgufWriter;
HzGgufWriter *hz_gguf_writer_new (void);
void hz_gguf_writer_free (HzGgufWriter *w);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzGgufWriter, hz_gguf_writer_free)
void hz_gguf_writer_set_u32  (HzGgufWriter *w, const char *key, uint32_t v);
void hz_gguf_writer_set_i32  (HzGgufWriter *w, const char *key, int32_t v);
void hz_gguf_writer_set_u64  (HzGgufWriter *w, const char *key, uint64_t v);
void hz_gguf_writer_set_f32  (HzGgufWriter *w, const char *key, float v);
void hz_gguf_writer_set_bool (HzGgufWriter *w, const char *key, gboolean v);
void hz_gguf_writer_set_str  (HzGgufWriter *w, const char *key, const char *v);
/** Numeric/bool array: `data` holds n packed little-endian elements of `elem_type`. */
void hz_gguf_writer_set_arr  (HzGgufWriter *w, const char *key, HzGgufType elem_type,
                              const void *data, uint64_t n);
void hz_gguf_writer_set_str_arr (HzGgufWriter *w, const char *key,
                                 const char *const *strs, uint64_t n);
/** Copy key i of `src` (any type, nested arrays included). */
void hz_gguf_writer_copy_kv (HzGgufWriter *w, const HzGguf *src, int64_t i);
/** Add tensor i of `src` under its own name, type, shape and data
 *  (hz_gguf_writer_add_tensor with `copy`: FALSE keeps pointers into `src`, which must then
 *  stay open until the write). Errors: those of hz_gguf_writer_add_tensor. */
gboolean hz_gguf_writer_copy_tensor (HzGgufWriter *w, const HzGguf *src, int64_t i,
                                     gboolean copy, GError **error);
gboolean hz_gguf_writer_add_tensor (HzGgufWriter *w, const char *name, uint32_t type,
                                    uint32_t n_dims, const int64_t *ne,
                                    const void *data, uint64_t n_bytes, gboolean copy,
                                    GError **error);
/** Write the file to `path` through common/hanzo/atomic-file.h: the data goes to an unnamed
 *  O_TMPFILE file (or `path.XXXXXX` where that is unsupported) put in place only when
 *  complete, so a kill, a crash or a full disk leaves the previous file (or none) and no
 *  partial or temporary file. An existing `path` that is not a regular file is refused.
 *  Errors: HZ_GGUF_ERROR_INVALID (bad general.alignment), HZ_GGUF_ERROR_IO (the message
 *  names the path and the system error). */
gboolean hz_gguf_writer_write_file (HzGgufWriter *w, const char *path, GError **error);
/** The same file image in memory (for images up to G_MAXUINT bytes; larger ones give
 *  HZ_GGUF_ERROR_OVERFLOW): open it with hz_gguf_open_from_data() while the GBytes lives.
 *  Used for the metadata of models converted at load time (engine/quantize.h). */
GBytes  *hz_gguf_writer_to_bytes (HzGgufWriter *w, GError **error);

G_END_DECLS
