/* engine/gguf.c — GGUF v2/v3 reader (read-only mmap, fully validated) and writer.
 *
 * Format: ggml's docs/gguf.md. See engine/gguf.h for the layout and the API contract.
 *
 * Validation strategy: the whole header (every key/value, recursively for nested arrays,
 * and every tensor info) is parsed once at open time through a bounds-checked cursor;
 * every count and length is compared with the bytes left before it is used and every
 * size is computed with overflow-checked arithmetic. Accessors afterwards only re-read
 * bytes that were validated then. Error-code rule for counts and lengths: a count whose
 * minimal encoding cannot even fit in the whole file (or overflows 64 bits) is
 * HZ_GGUF_ERROR_OVERFLOW ("absurd"); one that fits in the file but not in the bytes left
 * after the current position is HZ_GGUF_ERROR_TRUNCATED, as is tensor data that starts
 * inside the file but ends after it. Truncation messages start "The file is incomplete: it
 * ends after N bytes" (an interrupted download or copy is the usual cause), then say where.
 */
#include "gguf.h"
#include "hanzo/atomic-file.h"
#include "quant.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>

G_DEFINE_QUARK (hz-gguf-error-quark, hz_gguf_error)

gboolean
hz_gguf_fail_invalid (GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error_literal (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_INVALID, msg);
  return FALSE;
}

#define GGUF_MAGIC            "GGUF"
#define GGUF_DEFAULT_ALIGN    32u
#define GGUF_MAX_DIMS         4u
/** Deepest nesting of arrays accepted (an array of arrays is depth 2). */
#define GGUF_MAX_ARRAY_DEPTH  8u
#define GGUF_N_TYPES          13u
/** Smallest encoding of one key/value: key length (8) + value type (4) + 1-byte value. */
#define GGUF_MIN_KV_BYTES     13u
/** Smallest tensor info: name length (8) + n_dims (4) + one ne (8) + type (4) + offset (8). */
#define GGUF_MIN_TENSOR_BYTES 32u
/** Longest name shown in an error message before it is cut. */
#define GGUF_MAX_SHOWN_NAME   96u

/* Byte size of each fixed-size value type; 0 for STRING and ARRAY. */
static const uint8_t type_size[GGUF_N_TYPES] = {
  [HZ_GGUF_TYPE_UINT8] = 1, [HZ_GGUF_TYPE_INT8] = 1, [HZ_GGUF_TYPE_UINT16] = 2,
  [HZ_GGUF_TYPE_INT16] = 2, [HZ_GGUF_TYPE_UINT32] = 4, [HZ_GGUF_TYPE_INT32] = 4,
  [HZ_GGUF_TYPE_FLOAT32] = 4, [HZ_GGUF_TYPE_BOOL] = 1, [HZ_GGUF_TYPE_UINT64] = 8,
  [HZ_GGUF_TYPE_INT64] = 8, [HZ_GGUF_TYPE_FLOAT64] = 8,
};

static const char *const type_names[GGUF_N_TYPES] = {
  "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64",
  "f64",
};

const char *
hz_gguf_type_name (HzGgufType type)
{
  return (guint) type < GGUF_N_TYPES ? type_names[type] : "?";
}

/* Smallest number of bytes one element of `type` can occupy (strings: the length field;
 * arrays: element type + count). */
static uint64_t
type_min_size (HzGgufType type)
{
  if (type == HZ_GGUF_TYPE_STRING)
    return 8;
  if (type == HZ_GGUF_TYPE_ARRAY)
    return 12;
  return type_size[type];
}

static gboolean
type_is_integer (HzGgufType t)
{
  return t <= HZ_GGUF_TYPE_INT32 || t == HZ_GGUF_TYPE_UINT64 || t == HZ_GGUF_TYPE_INT64;
}

/* ------------------------------------------------------------------------------------ */
/* Data structures                                                                        */

typedef struct {
  HzGgufStr  key;
  HzGgufType type;
  uint64_t   val_off;   /* file offset of the value (just after the type field) */
  uint64_t   val_len;   /* encoded size of the value */
  HzGgufType arr_type;  /* arrays only */
  uint64_t   arr_n;     /* arrays only */
  uint64_t   arr_data;  /* arrays only: file offset of the first element */
  HzGgufStr *strs;      /* string arrays only: the arr_n strings, else NULL */
} Kv;

struct _HzGguf {
  GMappedFile  *mapped;      /* NULL for hz_gguf_open_from_data() */
  const guint8 *data;
  uint64_t      size;
  uint32_t      version;
  uint32_t      alignment;
  uint64_t      data_offset;
  Kv           *kvs;
  int64_t       n_kv;
  HzGgufTensor *tensors;
  int64_t       n_tensors;
  GHashTable   *kv_index;     /* HzGgufStr* (in kvs) -> index */
  GHashTable   *tensor_index; /* HzGgufStr* (in tensors) -> index */
};

/* Hash/equality of length-delimited strings (keys need not be NUL-terminated). */
static guint
gstr_hash (gconstpointer p)
{
  const HzGgufStr *s = p;
  guint32 h = 2166136261u; /* FNV-1a */
  for (uint64_t i = 0; i < s->len; i++)
    h = (h ^ (guchar) s->ptr[i]) * 16777619u;
  return h;
}

static gboolean
gstr_equal (gconstpointer a, gconstpointer b)
{
  const HzGgufStr *x = a, *y = b;
  return x->len == y->len && (x->len == 0 || memcmp (x->ptr, y->ptr, x->len) == 0);
}

/* Appends `len` bytes of `s` to `out` between `quote` characters: valid UTF-8 is kept;
 * control characters, the quote, backslashes and invalid bytes are escaped (\n, \t, \r,
 * \", \\, \xNN). At most `max_bytes` input bytes are shown (then "..."), 0 = all. */
static void
append_quoted (GString *out, const char *s, uint64_t len, uint64_t max_bytes, char quote)
{
  uint64_t shown = (max_bytes && len > max_bytes) ? max_bytes : len;
  const char *p = s, *end = s + shown;
  g_string_append_c (out, quote);
  while (p < end)
    {
      guchar c = (guchar) *p;
      if (c == (guchar) quote || c == '\\')
        {
          g_string_append_c (out, '\\');
          g_string_append_c (out, (char) c);
          p++;
        }
      else if (c == '\n')
        g_string_append (out, "\\n"), p++;
      else if (c == '\t')
        g_string_append (out, "\\t"), p++;
      else if (c == '\r')
        g_string_append (out, "\\r"), p++;
      else if (c < 0x20 || c == 0x7f)
        g_string_append_printf (out, "\\x%02x", c), p++;
      else if (c < 0x80)
        g_string_append_c (out, (char) c), p++;
      else
        {
          gunichar u = g_utf8_get_char_validated (p, end - p);
          if (u == (gunichar) -1 || u == (gunichar) -2)
            {
              g_string_append_printf (out, "\\x%02x", c);
              p++;
            }
          else
            {
              const char *next = g_utf8_next_char (p);
              g_string_append_len (out, p, next - p);
              p = next;
            }
        }
    }
  if (shown < len)
    g_string_append (out, "...");
  g_string_append_c (out, quote);
}

/* Where a parse error happened, rendered only when an error is reported. */
typedef struct {
  const char *kind;   /* "header", "key" or "tensor" */
  int64_t     index;
  HzGgufStr   name;   /* {NULL,0} until the name has been read */
} Where;

static char *
where_str (const Where *w)
{
  GString *s = g_string_new (w->kind);
  if (w->name.ptr)
    {
      g_string_append_c (s, ' ');
      append_quoted (s, w->name.ptr, w->name.len, GGUF_MAX_SHOWN_NAME, '\'');
    }
  else if (w->index >= 0)
    g_string_append_printf (s, " #%" G_GINT64_FORMAT, w->index);
  return g_string_free (s, FALSE);
}

/* "LEAD[WHERE: ]MESSAGE" as an HZ_GGUF_ERROR of `code`. */
static void G_GNUC_PRINTF (5, 0)
set_error_va (GError **error, HzGgufError code, const char *lead, const Where *w,
              const char *fmt, va_list ap)
{
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  g_autofree char *where = w ? where_str (w) : NULL;
  g_set_error (error, HZ_GGUF_ERROR, code, "%s%s%s%s", lead, where ? where : "",
               where ? ": " : "", msg);
}

static void G_GNUC_PRINTF (4, 5)
set_error (GError **error, HzGgufError code, const Where *w, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  set_error_va (error, code, "", w, fmt, ap);
  va_end (ap);
}

/* HZ_GGUF_ERROR_TRUNCATED: "The file is incomplete: it ends after SIZE bytes, in WHERE:
 * DETAIL" (without ", in WHERE" when w is NULL). */
static void G_GNUC_PRINTF (4, 5)
set_truncated (GError **error, uint64_t size, const Where *w, const char *fmt, ...)
{
  g_autofree char *lead = g_strdup_printf ("The file is incomplete: it ends after %"
                                           G_GUINT64_FORMAT " bytes%s", size,
                                           w ? ", in " : ": ");
  va_list ap;
  va_start (ap, fmt);
  set_error_va (error, HZ_GGUF_ERROR_TRUNCATED, lead, w, fmt, ap);
  va_end (ap);
}

/* ------------------------------------------------------------------------------------ */
/* Bounds-checked cursor                                                                  */

typedef struct {
  const guint8 *base;
  uint64_t      size;
  uint64_t      pos;
} Cursor;

static gboolean
cur_need (Cursor *c, uint64_t n, const char *what, const Where *w, GError **error)
{
  if (n <= c->size - c->pos)
    return TRUE;
  set_truncated (error, c->size, w,
                 "%s (%" G_GUINT64_FORMAT " bytes at offset %" G_GUINT64_FORMAT ")",
                 what, n, c->pos);
  return FALSE;
}

/* Checks that `n` items of at least `min_each` bytes fit in what is left (see the
 * error-code rule at the top of the file). `field` is the offset of the count itself,
 * named in the messages (the items start at c->pos, which may be further on). */
static gboolean
cur_check_count_at (Cursor *c, uint64_t n, uint64_t min_each, const char *what,
                    uint64_t field, const Where *w, GError **error)
{
  uint64_t need;
  gboolean ok = g_uint64_checked_mul (&need, n, min_each);
  if (ok && need <= c->size - c->pos)
    return TRUE;
  if (!ok)
    set_error (error, HZ_GGUF_ERROR_OVERFLOW, w,
               "%s %" G_GUINT64_FORMAT " at offset %" G_GUINT64_FORMAT
               " is absurd: it needs more than 2^64 bytes (corrupt file of %" G_GUINT64_FORMAT
               " bytes)", what, n, field, c->size);
  else if (need > c->size)
    set_error (error, HZ_GGUF_ERROR_OVERFLOW, w,
               "%s %" G_GUINT64_FORMAT " at offset %" G_GUINT64_FORMAT
               " is absurd: it needs at least %" G_GUINT64_FORMAT " bytes but the whole file"
               " has only %" G_GUINT64_FORMAT " (corrupt or truncated)",
               what, n, field, need, c->size);
  else
    set_truncated (error, c->size, w,
                   "%s %" G_GUINT64_FORMAT " at offset %" G_GUINT64_FORMAT " needs at least %"
                   G_GUINT64_FORMAT " bytes but only %" G_GUINT64_FORMAT
                   " are left after offset %" G_GUINT64_FORMAT,
                   what, n, field, need, c->size - c->pos, c->pos);
  return FALSE;
}

/* cur_check_count_at() for a u64 count just read (it ends at c->pos). */
static gboolean
cur_check_count (Cursor *c, uint64_t n, uint64_t min_each, const char *what,
                 const Where *w, GError **error)
{
  return cur_check_count_at (c, n, min_each, what, c->pos - 8, w, error);
}

static gboolean
cur_u32 (Cursor *c, uint32_t *out, const char *what, const Where *w, GError **error)
{
  if (!cur_need (c, 4, what, w, error))
    return FALSE;
  uint32_t v;
  memcpy (&v, c->base + c->pos, 4);
  *out = GUINT32_FROM_LE (v);
  c->pos += 4;
  return TRUE;
}

static gboolean
cur_u64 (Cursor *c, uint64_t *out, const char *what, const Where *w, GError **error)
{
  if (!cur_need (c, 8, what, w, error))
    return FALSE;
  uint64_t v;
  memcpy (&v, c->base + c->pos, 8);
  *out = GUINT64_FROM_LE (v);
  c->pos += 8;
  return TRUE;
}

/* A string: u64 length then the bytes. */
static gboolean
cur_str (Cursor *c, HzGgufStr *out, const char *what, const Where *w, GError **error)
{
  uint64_t len;
  g_autofree char *lwhat = g_strconcat (what, " length", NULL);
  if (!cur_u64 (c, &len, lwhat, w, error) ||
      !cur_check_count (c, len, 1, lwhat, w, error))
    return FALSE;
  out->ptr = (const char *) c->base + c->pos;
  out->len = len;
  c->pos += len;
  return TRUE;
}

static gboolean
cur_value_type (Cursor *c, HzGgufType *out, const char *what, const Where *w,
                GError **error)
{
  uint64_t at = c->pos;
  uint32_t t;
  if (!cur_u32 (c, &t, what, w, error))
    return FALSE;
  if (t >= GGUF_N_TYPES)
    {
      set_error (error, HZ_GGUF_ERROR_UNKNOWN_TYPE, w,
                 "unknown %s %" G_GUINT32_FORMAT " at offset %" G_GUINT64_FORMAT
                 " (known: 0..%u)", what, t, at, GGUF_N_TYPES - 1);
      return FALSE;
    }
  *out = (HzGgufType) t;
  return TRUE;
}

/* Validates (and skips) one value of `type`. For a top-level array, `kv` receives the
 * element type, count, first-element offset and, for string arrays, the strings. */
static gboolean
parse_value (Cursor *c, HzGgufType type, guint depth, Kv *kv, const Where *w,
             GError **error)
{
  if (type == HZ_GGUF_TYPE_STRING)
    {
      HzGgufStr s;
      return cur_str (c, &s, "string", w, error);
    }
  if (type != HZ_GGUF_TYPE_ARRAY)
    {
      if (!cur_need (c, type_size[type], type_names[type], w, error))
        return FALSE;
      if (type == HZ_GGUF_TYPE_BOOL && c->base[c->pos] > 1)
        {
          set_error (error, HZ_GGUF_ERROR_INVALID, w,
                     "bool value %u at offset %" G_GUINT64_FORMAT " is neither 0 nor 1",
                     c->base[c->pos], c->pos);
          return FALSE;
        }
      c->pos += type_size[type];
      return TRUE;
    }

  if (depth > GGUF_MAX_ARRAY_DEPTH)
    {
      set_error (error, HZ_GGUF_ERROR_INVALID, w,
                 "arrays nested deeper than %u levels at offset %" G_GUINT64_FORMAT,
                 GGUF_MAX_ARRAY_DEPTH, c->pos);
      return FALSE;
    }
  HzGgufType et;
  uint64_t n;
  if (!cur_value_type (c, &et, "array element type", w, error) ||
      !cur_u64 (c, &n, "array length", w, error) ||
      !cur_check_count (c, n, type_min_size (et), "array length", w, error))
    return FALSE;
  if (kv)
    {
      kv->arr_type = et;
      kv->arr_n = n;
      kv->arr_data = c->pos;
    }

  if (et == HZ_GGUF_TYPE_STRING)
    {
      /* n <= bytes left / 8, so this allocation is bounded by twice the file size. */
      HzGgufStr *strs = kv ? g_new (HzGgufStr, n ? n : 1) : NULL;
      for (uint64_t j = 0; j < n; j++)
        {
          HzGgufStr s;
          if (!cur_str (c, &s, "array string", w, error))
            {
              g_free (strs);
              return FALSE;
            }
          if (strs)
            strs[j] = s;
        }
      if (kv)
        kv->strs = strs;
      return TRUE;
    }
  if (et == HZ_GGUF_TYPE_ARRAY)
    {
      for (uint64_t j = 0; j < n; j++)
        if (!parse_value (c, HZ_GGUF_TYPE_ARRAY, depth + 1, NULL, w, error))
          return FALSE;
      return TRUE;
    }
  if (et == HZ_GGUF_TYPE_BOOL)
    for (uint64_t j = 0; j < n; j++)
      if (c->base[c->pos + j] > 1)
        {
          set_error (error, HZ_GGUF_ERROR_INVALID, w,
                     "bool array element %" G_GUINT64_FORMAT " at offset %" G_GUINT64_FORMAT
                     " is %u, neither 0 nor 1", j, c->pos + j, c->base[c->pos + j]);
          return FALSE;
        }
  c->pos += n * type_size[et]; /* checked by cur_check_count */
  return TRUE;
}

/* ------------------------------------------------------------------------------------ */
/* Open                                                                                   */

void
hz_gguf_free (HzGguf *g)
{
  if (!g)
    return;
  for (int64_t i = 0; g->kvs && i < g->n_kv; i++)
    g_free (g->kvs[i].strs);
  g_free (g->kvs);
  g_free (g->tensors);
  if (g->kv_index)
    g_hash_table_unref (g->kv_index);
  if (g->tensor_index)
    g_hash_table_unref (g->tensor_index);
  if (g->mapped)
    g_mapped_file_unref (g->mapped);
  g_free (g);
}

static gboolean
parse_header (HzGguf *g, Cursor *c, uint64_t *n_tensors, uint64_t *n_kv, GError **error)
{
  Where w = { "header", -1, { NULL, 0 } };
  if (!cur_need (c, 4, "magic", &w, error))
    return FALSE;
  if (memcmp (c->base, GGUF_MAGIC, 4) != 0)
    {
      /* the first 4 bytes escaped (they may be anything: binary, a BOM, a terminal escape)
       * and in hex */
      GString *got = g_string_new (NULL);
      append_quoted (got, (const char *) c->base, 4, 0, '"');
      g_string_append (got, " (bytes");
      for (int i = 0; i < 4; i++)
        g_string_append_printf (got, " %02x", ((const guchar *) c->base)[i]);
      g_string_append_c (got, ')');
      set_error (error, HZ_GGUF_ERROR_BAD_MAGIC, NULL,
                 "not a GGUF file: magic is %s, expected \"GGUF\" (bytes 47 47 55 46)",
                 got->str);
      g_string_free (got, TRUE);
      return FALSE;
    }
  c->pos = 4;
  if (!cur_u32 (c, &g->version, "version", &w, error))
    return FALSE;
  if (g->version != 2 && g->version != 3)
    {
      uint32_t swapped = GUINT32_SWAP_LE_BE (g->version);
      set_error (error, HZ_GGUF_ERROR_VERSION, NULL,
                 "GGUF version %" G_GUINT32_FORMAT " is not supported (only 2 and 3%s)",
                 g->version,
                 (swapped == 2 || swapped == 3) ? "; this looks like a big-endian file" : "");
      return FALSE;
    }
  if (!cur_u64 (c, n_tensors, "tensor count", &w, error) ||
      !cur_u64 (c, n_kv, "key/value count", &w, error))
    return FALSE;
  /* Reject absurd counts before allocating anything for them (each alone must fit in
   * the bytes left; the tensor count is checked again after the key/values). */
  /* the tensor count is the u64 at offset 8, the key/value count the one at 16 */
  return cur_check_count_at (c, *n_tensors, GGUF_MIN_TENSOR_BYTES, "tensor count", 8, &w,
                             error) &&
         cur_check_count_at (c, *n_kv, GGUF_MIN_KV_BYTES, "key/value count", 16, &w, error);
}

static gboolean
parse_kvs (HzGguf *g, Cursor *c, GError **error)
{
  g->kvs = g_new0 (Kv, g->n_kv ? g->n_kv : 1);
  g->kv_index = g_hash_table_new (gstr_hash, gstr_equal);
  for (int64_t i = 0; i < g->n_kv; i++)
    {
      Kv *kv = &g->kvs[i];
      Where w = { "key", i, { NULL, 0 } };
      if (!cur_str (c, &kv->key, "name", &w, error))
        return FALSE;
      w.name = kv->key;
      gpointer prev;
      if (g_hash_table_lookup_extended (g->kv_index, &kv->key, NULL, &prev))
        {
          set_error (error, HZ_GGUF_ERROR_INVALID, &w,
                     "duplicate key (keys #%" G_GSIZE_FORMAT " and #%" G_GINT64_FORMAT ")",
                     GPOINTER_TO_SIZE (prev), i);
          return FALSE;
        }
      g_hash_table_insert (g->kv_index, &kv->key, GSIZE_TO_POINTER ((gsize) i));
      if (!cur_value_type (c, &kv->type, "value type", &w, error))
        return FALSE;
      kv->val_off = c->pos;
      if (!parse_value (c, kv->type, 1, kv, &w, error))
        return FALSE;
      kv->val_len = c->pos - kv->val_off;
    }
  return TRUE;
}

static gboolean
read_alignment (HzGguf *g, GError **error)
{
  g->alignment = GGUF_DEFAULT_ALIGN;
  int64_t i = hz_gguf_find_key (g, "general.alignment");
  if (i < 0)
    return TRUE;
  Where w = { "key", i, g->kvs[i].key };
  int64_t v;
  if (!type_is_integer (g->kvs[i].type) || !hz_gguf_get_i64 (g, "general.alignment", &v))
    {
      set_error (error, HZ_GGUF_ERROR_INVALID, &w, "must be an integer (u32), not %s",
                 g->kvs[i].type == HZ_GGUF_TYPE_UINT64 ? "a u64 beyond 2^63"
                 : type_names[g->kvs[i].type]);
      return FALSE;
    }
  if (v <= 0 || v > (int64_t) 1 << 30 || (v & (v - 1)) != 0)
    {
      set_error (error, HZ_GGUF_ERROR_INVALID, &w,
                 "alignment %" G_GINT64_FORMAT " is not a power of two in 1..2^30", v);
      return FALSE;
    }
  g->alignment = (uint32_t) v;
  return TRUE;
}

/* Validates a tensor shape for ggml type `type` and computes its byte size:
 * ne[0..3] > 0 (unused dims 1), the element count fits in int64, `type` is in the quant
 * table, ne[0] is a multiple of the block size and the byte size does not overflow. */
static gboolean
check_shape (uint32_t type, const int64_t ne[4], uint64_t *n_bytes, const Where *w,
             GError **error)
{
  const HzQuantTraits *tr = hz_quant_traits (type);
  if (!tr)
    {
      set_error (error, HZ_GGUF_ERROR_UNKNOWN_TYPE, w,
                 "unknown ggml type %" G_GUINT32_FORMAT, type);
      return FALSE;
    }
  uint64_t n_elems = 1;
  for (uint32_t d = 0; d < GGUF_MAX_DIMS; d++)
    {
      if (ne[d] <= 0)
        {
          set_error (error, HZ_GGUF_ERROR_INVALID, w,
                     "dimension ne[%u] = %" G_GINT64_FORMAT " is not positive", d, ne[d]);
          return FALSE;
        }
      if (!g_uint64_checked_mul (&n_elems, n_elems, (uint64_t) ne[d]) ||
          n_elems > (uint64_t) INT64_MAX)
        {
          set_error (error, HZ_GGUF_ERROR_OVERFLOW, w,
                     "element count of shape [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %"
                     G_GINT64_FORMAT ", %" G_GINT64_FORMAT "] overflows",
                     ne[0], ne[1], ne[2], ne[3]);
          return FALSE;
        }
    }
  if (ne[0] % tr->block_elems != 0)
    {
      set_error (error, HZ_GGUF_ERROR_INVALID, w,
                 "row length ne[0] = %" G_GINT64_FORMAT " is not a multiple of %s's block "
                 "size %" G_GUINT32_FORMAT, ne[0], tr->name, tr->block_elems);
      return FALSE;
    }
  if (!g_uint64_checked_mul (n_bytes, n_elems / tr->block_elems, tr->block_bytes))
    {
      set_error (error, HZ_GGUF_ERROR_OVERFLOW, w,
                 "byte size of %" G_GUINT64_FORMAT " %s elements overflows",
                 n_elems, tr->name);
      return FALSE;
    }
  return TRUE;
}

static gboolean
parse_tensor_info (HzGguf *g, Cursor *c, int64_t i, GError **error)
{
  HzGgufTensor *t = &g->tensors[i];
  Where w = { "tensor", i, { NULL, 0 } };
  if (!cur_str (c, &t->name, "name", &w, error))
    return FALSE;
  w.name = t->name;
  gpointer prev;
  if (g_hash_table_lookup_extended (g->tensor_index, &t->name, NULL, &prev))
    {
      set_error (error, HZ_GGUF_ERROR_INVALID, &w,
                 "duplicate tensor name (tensors #%" G_GSIZE_FORMAT " and #%" G_GINT64_FORMAT ")",
                 GPOINTER_TO_SIZE (prev), i);
      return FALSE;
    }
  g_hash_table_insert (g->tensor_index, &t->name, GSIZE_TO_POINTER ((gsize) i));

  if (!cur_u32 (c, &t->n_dims, "n_dims", &w, error))
    return FALSE;
  if (t->n_dims < 1 || t->n_dims > GGUF_MAX_DIMS)
    {
      set_error (error, HZ_GGUF_ERROR_INVALID, &w, "n_dims %" G_GUINT32_FORMAT
                 " at offset %" G_GUINT64_FORMAT " is not in 1..%u",
                 t->n_dims, c->pos - 4, GGUF_MAX_DIMS);
      return FALSE;
    }
  for (uint32_t d = 0; d < GGUF_MAX_DIMS; d++)
    {
      uint64_t ne = 1;
      if (d < t->n_dims && !cur_u64 (c, &ne, "dimension", &w, error))
        return FALSE;
      t->ne[d] = (int64_t) ne;
    }
  return cur_u32 (c, &t->type, "type", &w, error) &&
         cur_u64 (c, &t->offset, "data offset", &w, error) &&
         check_shape (t->type, t->ne, &t->n_bytes, &w, error);
}

static int
cmp_by_offset (gconstpointer a, gconstpointer b, gpointer user_data)
{
  const HzGgufTensor *ts = user_data;
  uint64_t x = ts[*(const int64_t *) a].offset, y = ts[*(const int64_t *) b].offset;
  return x < y ? -1 : x > y;
}

/* Places every tensor in the data section: aligned, inside the file, no overlaps. */
static gboolean
place_tensors (HzGguf *g, GError **error)
{
  for (int64_t i = 0; i < g->n_tensors; i++)
    {
      HzGgufTensor *t = &g->tensors[i];
      Where w = { "tensor", i, t->name };
      if (t->offset % g->alignment != 0)
        {
          set_error (error, HZ_GGUF_ERROR_OUT_OF_BOUNDS, &w,
                     "data offset %" G_GUINT64_FORMAT " is not a multiple of the alignment %"
                     G_GUINT32_FORMAT, t->offset, g->alignment);
          return FALSE;
        }
      uint64_t start, end;
      if (g_uint64_checked_add (&start, g->data_offset, t->offset) &&
          g_uint64_checked_add (&end, start, t->n_bytes) && start <= g->size && end > g->size)
        {
          /* cut short: say how long the whole file should be */
          uint64_t want = end;
          for (int64_t j = i + 1; j < g->n_tensors; j++)
            {
              uint64_t s_j, e_j;
              if (g_uint64_checked_add (&s_j, g->data_offset, g->tensors[j].offset) &&
                  g_uint64_checked_add (&e_j, s_j, g->tensors[j].n_bytes))
                want = MAX (want, e_j);
            }
          set_truncated (error, g->size, &w,
                         "its data [offset %" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT
                         " bytes) runs to byte %" G_GUINT64_FORMAT "; the tensors need %"
                         G_GUINT64_FORMAT " bytes (%" G_GUINT64_FORMAT " are missing)",
                         t->offset, t->n_bytes, end, want, want - g->size);
          return FALSE;
        }
      if (!g_uint64_checked_add (&start, g->data_offset, t->offset) ||
          !g_uint64_checked_add (&end, start, t->n_bytes) || end > g->size)
        {
          set_error (error, HZ_GGUF_ERROR_OUT_OF_BOUNDS, &w,
                     "data [offset %" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT
                     " bytes) extends past end of file (%" G_GUINT64_FORMAT " bytes)",
                     t->offset, t->n_bytes, g->size);
          return FALSE;
        }
      t->data = g->data + start;
    }
  if (g->n_tensors < 2)
    return TRUE;
  g_autofree int64_t *order = g_new (int64_t, g->n_tensors);
  for (int64_t i = 0; i < g->n_tensors; i++)
    order[i] = i;
  g_qsort_with_data (order, (gint) g->n_tensors, sizeof *order, cmp_by_offset, g->tensors);
  for (int64_t k = 1; k < g->n_tensors; k++)
    {
      const HzGgufTensor *a = &g->tensors[order[k - 1]], *b = &g->tensors[order[k]];
      if (a->offset + a->n_bytes > b->offset)
        {
          Where w = { "tensor", order[k], b->name };
          GString *other = g_string_new (NULL);
          append_quoted (other, a->name.ptr, a->name.len, GGUF_MAX_SHOWN_NAME, '\'');
          set_error (error, HZ_GGUF_ERROR_OUT_OF_BOUNDS, &w,
                     "data [offset %" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT
                     " bytes) overlaps tensor %s [offset %" G_GUINT64_FORMAT ", %"
                     G_GUINT64_FORMAT " bytes)", b->offset, b->n_bytes, other->str,
                     a->offset, a->n_bytes);
          g_string_free (other, TRUE);
          return FALSE;
        }
    }
  return TRUE;
}

static HzGguf *
parse (HzGguf *g, GError **error)
{
  Cursor c = { g->data, g->size, 0 };
  uint64_t n_tensors, n_kv;
  if (!parse_header (g, &c, &n_tensors, &n_kv, error))
    goto fail;
  g->n_kv = (int64_t) n_kv;  /* both bounded by the file size by now */
  if (!parse_kvs (g, &c, error) || !read_alignment (g, error))
    goto fail;
  g->n_tensors = (int64_t) n_tensors;
  Where w = { "header", -1, { NULL, 0 } };
  if (!cur_check_count_at (&c, n_tensors, GGUF_MIN_TENSOR_BYTES, "tensor count", 8, &w, error))
    goto fail;
  if (n_tensors > G_MAXINT)  /* g_qsort_with_data() takes a gint count */
    {
      set_error (error, HZ_GGUF_ERROR_OVERFLOW, &w, "tensor count %" G_GUINT64_FORMAT
                 " exceeds the supported maximum %d", n_tensors, G_MAXINT);
      goto fail;
    }
  g->tensors = g_new0 (HzGgufTensor, n_tensors ? n_tensors : 1);
  g->tensor_index = g_hash_table_new (gstr_hash, gstr_equal);
  for (int64_t i = 0; i < g->n_tensors; i++)
    if (!parse_tensor_info (g, &c, i, error))
      goto fail;
  /* The data section starts at the next multiple of the alignment. It may lie past the
   * end of a file that holds no tensors (ggml omits the padding then). */
  g->data_offset = c.pos + (g->alignment - c.pos % g->alignment) % g->alignment;
  if (!place_tensors (g, error))
    goto fail;
  return g;

fail:
  hz_gguf_free (g);
  return NULL;
}

HzGguf *
hz_gguf_open_from_data (const void *data, size_t size, GError **error)
{
  g_return_val_if_fail (data != NULL || size == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  HzGguf *g = g_new0 (HzGguf, 1);
  g->data = data ? data : (const guint8 *) "";
  g->size = size;
  return parse (g, error);
}

HzGguf *
hz_gguf_open (const char *path, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  int fd = g_open (path, O_RDONLY | O_CLOEXEC | O_NONBLOCK, 0); /* a FIFO would block */
  if (fd < 0)
    {
      int e = errno;
      g_set_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_IO, "%s: cannot open: %s", path,
                   g_strerror (e));
      return NULL;
    }
  struct stat st;
  const char *why = NULL;
  if (fstat (fd, &st) != 0)
    why = g_strerror (errno);
  else if (S_ISDIR (st.st_mode))
    why = "is a directory";
  else if (!S_ISREG (st.st_mode))
    why = "not a regular file";
  if (why)
    {
      g_set_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_IO, "%s: cannot open: %s", path, why);
      close (fd);
      return NULL;
    }
  GError *local = NULL;
  GMappedFile *mf = g_mapped_file_new_from_fd (fd, FALSE, &local);
  close (fd); /* the mapping keeps its own reference to the file */
  if (!mf)
    {
      g_set_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_IO, "%s: cannot map: %s", path,
                   local->message);
      g_error_free (local);
      return NULL;
    }
  HzGguf *g = g_new0 (HzGguf, 1);
  g->mapped = mf;
  g->size = g_mapped_file_get_length (mf);
  g->data = g->size ? (const guint8 *) g_mapped_file_get_contents (mf) : (const guint8 *) "";
  /* a wrong file (not GGUF, or too short to hold the magic): say which */
  const size_t size = g->size;
  GError *local_parse = NULL;
  g = parse (g, &local_parse);
  if (local_parse && local_parse->domain == HZ_GGUF_ERROR
      && (local_parse->code == HZ_GGUF_ERROR_BAD_MAGIC || size < 4))
    g_prefix_error (&local_parse, "%s: ", path);
  if (local_parse)
    g_propagate_error (error, local_parse);
  return g;
}

/* ------------------------------------------------------------------------------------ */
/* Accessors                                                                              */

uint32_t hz_gguf_version (const HzGguf *g) { return g->version; }
uint32_t hz_gguf_alignment (const HzGguf *g) { return g->alignment; }
size_t hz_gguf_file_size (const HzGguf *g) { return g->size; }
const void *hz_gguf_file_data (const HzGguf *g) { return g->data; }
uint64_t hz_gguf_data_offset (const HzGguf *g) { return g->data_offset; }
int64_t hz_gguf_n_kv (const HzGguf *g) { return g->n_kv; }
int64_t hz_gguf_n_tensors (const HzGguf *g) { return g->n_tensors; }

int64_t
hz_gguf_find_key (const HzGguf *g, const char *key)
{
  g_return_val_if_fail (g != NULL && key != NULL, -1);
  HzGgufStr k = { key, strlen (key) };
  gpointer v;
  if (!g_hash_table_lookup_extended (g->kv_index, &k, NULL, &v))
    return -1;
  return (int64_t) GPOINTER_TO_SIZE (v);
}

#define CHECK_KV(g, i, ret) g_return_val_if_fail ((g) != NULL && (i) >= 0 && (i) < (g)->n_kv, ret)

HzGgufStr
hz_gguf_key (const HzGguf *g, int64_t i)
{
  HzGgufStr none = { NULL, 0 };
  CHECK_KV (g, i, none);
  return g->kvs[i].key;
}

HzGgufType
hz_gguf_kv_type (const HzGguf *g, int64_t i)
{
  CHECK_KV (g, i, HZ_GGUF_TYPE_UINT8);
  return g->kvs[i].type;
}

HzGgufType
hz_gguf_arr_type (const HzGguf *g, int64_t i)
{
  CHECK_KV (g, i, HZ_GGUF_TYPE_UINT8);
  g_return_val_if_fail (g->kvs[i].type == HZ_GGUF_TYPE_ARRAY, HZ_GGUF_TYPE_UINT8);
  return g->kvs[i].arr_type;
}

uint64_t
hz_gguf_arr_n (const HzGguf *g, int64_t i)
{
  CHECK_KV (g, i, 0);
  return g->kvs[i].type == HZ_GGUF_TYPE_ARRAY ? g->kvs[i].arr_n : 0;
}

const void *
hz_gguf_arr_data (const HzGguf *g, int64_t i)
{
  CHECK_KV (g, i, NULL);
  const Kv *kv = &g->kvs[i];
  if (kv->type != HZ_GGUF_TYPE_ARRAY || kv->arr_type == HZ_GGUF_TYPE_STRING ||
      kv->arr_type == HZ_GGUF_TYPE_ARRAY)
    return NULL;
  return g->data + kv->arr_data;
}

HzGgufStr
hz_gguf_arr_str (const HzGguf *g, int64_t i, uint64_t j)
{
  HzGgufStr none = { NULL, 0 };
  CHECK_KV (g, i, none);
  const Kv *kv = &g->kvs[i];
  if (!kv->strs || j >= kv->arr_n)
    return none;
  return kv->strs[j];
}

/* A scalar value widened: integers and bools to i64/u64 (is_neg tells the sign), floats
 * to double. Returns FALSE for strings and arrays. */
typedef struct {
  gboolean is_float, is_neg, is_bool;
  uint64_t u;   /* magnitude for integers (two's complement value when !is_neg) */
  int64_t  i;
  double   f;
} Scalar;

static gboolean
get_scalar (const HzGguf *g, const char *key, Scalar *s)
{
  int64_t idx = hz_gguf_find_key (g, key);
  if (idx < 0)
    return FALSE;
  const Kv *kv = &g->kvs[idx];
  const guint8 *p = g->data + kv->val_off;
  memset (s, 0, sizeof *s);
  switch (kv->type)
    {
    case HZ_GGUF_TYPE_UINT8: s->u = p[0]; s->i = p[0]; return TRUE;
    case HZ_GGUF_TYPE_BOOL: s->u = p[0]; s->i = p[0]; s->is_bool = TRUE; return TRUE;
    case HZ_GGUF_TYPE_INT8: s->i = (int8_t) p[0]; break;
    case HZ_GGUF_TYPE_UINT16: { uint16_t v; memcpy (&v, p, 2); s->u = s->i = GUINT16_FROM_LE (v); return TRUE; }
    case HZ_GGUF_TYPE_INT16: { uint16_t v; memcpy (&v, p, 2); s->i = (int16_t) GUINT16_FROM_LE (v); break; }
    case HZ_GGUF_TYPE_UINT32: { uint32_t v; memcpy (&v, p, 4); s->u = s->i = GUINT32_FROM_LE (v); return TRUE; }
    case HZ_GGUF_TYPE_INT32: { uint32_t v; memcpy (&v, p, 4); s->i = (int32_t) GUINT32_FROM_LE (v); break; }
    case HZ_GGUF_TYPE_UINT64:
      {
        uint64_t v; memcpy (&v, p, 8); s->u = GUINT64_FROM_LE (v);
        s->i = s->u > (uint64_t) INT64_MAX ? INT64_MAX : (int64_t) s->u;
        s->is_neg = FALSE;
        return TRUE;
      }
    case HZ_GGUF_TYPE_INT64: { uint64_t v; memcpy (&v, p, 8); s->i = (int64_t) GUINT64_FROM_LE (v); break; }
    case HZ_GGUF_TYPE_FLOAT32:
      { uint32_t v; float f; memcpy (&v, p, 4); v = GUINT32_FROM_LE (v); memcpy (&f, &v, 4);
        s->f = f; s->is_float = TRUE; return TRUE; }
    case HZ_GGUF_TYPE_FLOAT64:
      { uint64_t v; double f; memcpy (&v, p, 8); v = GUINT64_FROM_LE (v); memcpy (&f, &v, 8);
        s->f = f; s->is_float = TRUE; return TRUE; }
    default:
      return FALSE;
    }
  /* signed types */
  s->is_neg = s->i < 0;
  s->u = s->is_neg ? 0 : (uint64_t) s->i;
  return TRUE;
}

gboolean
hz_gguf_get_u32 (const HzGguf *g, const char *key, uint32_t *out)
{
  Scalar s;
  if (!get_scalar (g, key, &s) || s.is_float || s.is_neg || s.u > G_MAXUINT32)
    return FALSE;
  *out = (uint32_t) s.u;
  return TRUE;
}

gboolean
hz_gguf_get_i64 (const HzGguf *g, const char *key, int64_t *out)
{
  Scalar s;
  if (!get_scalar (g, key, &s) || s.is_float || (!s.is_neg && s.u > (uint64_t) INT64_MAX))
    return FALSE;
  *out = s.i;
  return TRUE;
}

gboolean
hz_gguf_get_f32 (const HzGguf *g, const char *key, float *out)
{
  Scalar s;
  if (!get_scalar (g, key, &s) || s.is_bool)
    return FALSE;
  *out = s.is_float ? (float) s.f : s.is_neg ? (float) s.i : (float) s.u;
  return TRUE;
}

gboolean
hz_gguf_get_bool (const HzGguf *g, const char *key, gboolean *out)
{
  Scalar s;
  if (!get_scalar (g, key, &s) || s.is_float)
    return FALSE;
  *out = s.is_neg || s.u != 0;
  return TRUE;
}

char *
hz_gguf_get_str (const HzGguf *g, const char *key)
{
  int64_t i = hz_gguf_find_key (g, key);
  if (i < 0 || g->kvs[i].type != HZ_GGUF_TYPE_STRING)
    return NULL;
  uint64_t len;
  memcpy (&len, g->data + g->kvs[i].val_off, 8);
  return g_strndup ((const char *) g->data + g->kvs[i].val_off + 8, GUINT64_FROM_LE (len));
}

/* Shortest decimal (%.6g up to %.17g) that reads back as the same value; `as_f32` compares
 * after rounding to float. Locale-independent. */
static void
append_float (GString *out, double v, gboolean as_f32)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  for (int prec = 6; prec <= 17; prec++)
    {
      char fmt[8];
      g_snprintf (fmt, sizeof fmt, "%%.%dg", prec);
      g_ascii_formatd (buf, sizeof buf, fmt, v);
      double back = g_ascii_strtod (buf, NULL);
      if (v != v || (as_f32 ? (float) back == (float) v : back == v))
        break;
    }
  g_string_append (out, buf);
}

/* Renders one validated value at c->pos and advances past it. */
static void
render_value (GString *out, Cursor *c, HzGgufType type, guint max_elems)
{
  const guint8 *p = c->base + c->pos;
  uint64_t u64; uint32_t u32; uint16_t u16; double f64; float f32;
  switch (type)
    {
    case HZ_GGUF_TYPE_UINT8: g_string_append_printf (out, "%u", p[0]); break;
    case HZ_GGUF_TYPE_INT8: g_string_append_printf (out, "%d", (int8_t) p[0]); break;
    case HZ_GGUF_TYPE_BOOL: g_string_append (out, p[0] ? "true" : "false"); break;
    case HZ_GGUF_TYPE_UINT16: memcpy (&u16, p, 2); g_string_append_printf (out, "%u", GUINT16_FROM_LE (u16)); break;
    case HZ_GGUF_TYPE_INT16: memcpy (&u16, p, 2); g_string_append_printf (out, "%d", (int16_t) GUINT16_FROM_LE (u16)); break;
    case HZ_GGUF_TYPE_UINT32: memcpy (&u32, p, 4); g_string_append_printf (out, "%" G_GUINT32_FORMAT, GUINT32_FROM_LE (u32)); break;
    case HZ_GGUF_TYPE_INT32: memcpy (&u32, p, 4); g_string_append_printf (out, "%" G_GINT32_FORMAT, (int32_t) GUINT32_FROM_LE (u32)); break;
    case HZ_GGUF_TYPE_UINT64: memcpy (&u64, p, 8); g_string_append_printf (out, "%" G_GUINT64_FORMAT, GUINT64_FROM_LE (u64)); break;
    case HZ_GGUF_TYPE_INT64: memcpy (&u64, p, 8); g_string_append_printf (out, "%" G_GINT64_FORMAT, (int64_t) GUINT64_FROM_LE (u64)); break;
    case HZ_GGUF_TYPE_FLOAT32:
      memcpy (&u32, p, 4); u32 = GUINT32_FROM_LE (u32); memcpy (&f32, &u32, 4);
      append_float (out, f32, TRUE);
      break;
    case HZ_GGUF_TYPE_FLOAT64:
      memcpy (&u64, p, 8); u64 = GUINT64_FROM_LE (u64); memcpy (&f64, &u64, 8);
      append_float (out, f64, FALSE);
      break;
    case HZ_GGUF_TYPE_STRING:
      memcpy (&u64, p, 8); u64 = GUINT64_FROM_LE (u64);
      append_quoted (out, (const char *) p + 8, u64, 0, '"');
      c->pos += 8 + u64;
      return;
    case HZ_GGUF_TYPE_ARRAY:
      {
        HzGgufType et;
        memcpy (&u32, p, 4); et = (HzGgufType) GUINT32_FROM_LE (u32);
        memcpy (&u64, p + 4, 8); u64 = GUINT64_FROM_LE (u64);
        c->pos += 12;
        g_string_append_c (out, '[');
        for (uint64_t j = 0; j < u64; j++)
          {
            if (j == max_elems)
              {
                g_string_append_printf (out, "%s... %" G_GUINT64_FORMAT " more",
                                        j ? ", " : "", u64 - j);
                /* Skip the rest; it was validated at open time, so this cannot fail. */
                for (; j < u64; j++)
                  parse_value (c, et, 1, NULL, NULL, NULL);
                break;
              }
            if (j)
              g_string_append (out, ", ");
            render_value (out, c, et, max_elems);
          }
        g_string_append_c (out, ']');
        return;
      }
    }
  c->pos += type_size[type];
}

char *
hz_gguf_value_to_string (const HzGguf *g, int64_t i, guint max_elems)
{
  CHECK_KV (g, i, NULL);
  GString *out = g_string_new (NULL);
  Cursor c = { g->data, g->size, g->kvs[i].val_off };
  render_value (out, &c, g->kvs[i].type, max_elems);
  return g_string_free (out, FALSE);
}

const HzGgufTensor *
hz_gguf_tensor (const HzGguf *g, int64_t i)
{
  g_return_val_if_fail (g != NULL && i >= 0 && i < g->n_tensors, NULL);
  return &g->tensors[i];
}

const HzGgufTensor *
hz_gguf_find_tensor (const HzGguf *g, const char *name)
{
  g_return_val_if_fail (g != NULL && name != NULL, NULL);
  HzGgufStr k = { name, strlen (name) };
  gpointer v;
  if (!g_hash_table_lookup_extended (g->tensor_index, &k, NULL, &v))
    return NULL;
  return &g->tensors[GPOINTER_TO_SIZE (v)];
}

/* ------------------------------------------------------------------------------------ */
/* Writer                                                                                 */

typedef struct {
  char      *key;
  HzGgufType type;
  GBytes    *payload;  /* the encoded value (after the type field) */
} WKv;

typedef struct {
  char       *name;
  uint32_t    type, n_dims;
  int64_t     ne[4];
  const void *data;
  void       *owned;
  uint64_t    n_bytes;
  uint64_t    offset;
} WTensor;

struct _HzGgufWriter {
  GPtrArray  *kvs;        /* WKv*, insertion order */
  GHashTable *kv_index;   /* key -> WKv* */
  GPtrArray  *tensors;    /* WTensor* */
  GHashTable *tensor_names;
};

static void
wkv_free (gpointer p)
{
  WKv *kv = p;
  g_free (kv->key);
  g_bytes_unref (kv->payload);
  g_free (kv);
}

static void
wtensor_free (gpointer p)
{
  WTensor *t = p;
  g_free (t->name);
  g_free (t->owned);
  g_free (t);
}

HzGgufWriter *
hz_gguf_writer_new (void)
{
  HzGgufWriter *w = g_new0 (HzGgufWriter, 1);
  w->kvs = g_ptr_array_new_with_free_func (wkv_free);
  w->kv_index = g_hash_table_new (g_str_hash, g_str_equal);
  w->tensors = g_ptr_array_new_with_free_func (wtensor_free);
  w->tensor_names = g_hash_table_new (g_str_hash, g_str_equal);
  return w;
}

void
hz_gguf_writer_free (HzGgufWriter *w)
{
  if (!w)
    return;
  g_hash_table_unref (w->kv_index);
  g_hash_table_unref (w->tensor_names);
  g_ptr_array_unref (w->kvs);
  g_ptr_array_unref (w->tensors);
  g_free (w);
}

static void
put_u32 (GByteArray *b, uint32_t v)
{
  v = GUINT32_TO_LE (v);
  g_byte_array_append (b, (const guint8 *) &v, 4);
}

static void
put_u64 (GByteArray *b, uint64_t v)
{
  v = GUINT64_TO_LE (v);
  g_byte_array_append (b, (const guint8 *) &v, 8);
}

static void
put_str (GByteArray *b, const char *s, uint64_t len)
{
  put_u64 (b, len);
  g_byte_array_append (b, (const guint8 *) s, len);
}

/* Takes ownership of `payload`; replaces an existing key in place. */
static void
writer_set (HzGgufWriter *w, const char *key, HzGgufType type, GBytes *payload)
{
  WKv *kv = g_hash_table_lookup (w->kv_index, key);
  if (!kv)
    {
      kv = g_new0 (WKv, 1);
      kv->key = g_strdup (key);
      g_ptr_array_add (w->kvs, kv);
      g_hash_table_insert (w->kv_index, kv->key, kv);
    }
  else
    g_bytes_unref (kv->payload);
  kv->type = type;
  kv->payload = payload;
}

static void
writer_set_fixed (HzGgufWriter *w, const char *key, HzGgufType type, const void *le_bytes)
{
  g_return_if_fail (w != NULL && key != NULL);
  writer_set (w, key, type, g_bytes_new (le_bytes, type_size[type]));
}

void
hz_gguf_writer_set_u32 (HzGgufWriter *w, const char *key, uint32_t v)
{
  v = GUINT32_TO_LE (v);
  writer_set_fixed (w, key, HZ_GGUF_TYPE_UINT32, &v);
}

void
hz_gguf_writer_set_i32 (HzGgufWriter *w, const char *key, int32_t v)
{
  uint32_t u = GUINT32_TO_LE ((uint32_t) v);
  writer_set_fixed (w, key, HZ_GGUF_TYPE_INT32, &u);
}

void
hz_gguf_writer_set_u64 (HzGgufWriter *w, const char *key, uint64_t v)
{
  v = GUINT64_TO_LE (v);
  writer_set_fixed (w, key, HZ_GGUF_TYPE_UINT64, &v);
}

void
hz_gguf_writer_set_f32 (HzGgufWriter *w, const char *key, float v)
{
  uint32_t u;
  memcpy (&u, &v, 4);
  u = GUINT32_TO_LE (u);
  writer_set_fixed (w, key, HZ_GGUF_TYPE_FLOAT32, &u);
}

void
hz_gguf_writer_set_bool (HzGgufWriter *w, const char *key, gboolean v)
{
  guint8 b = v ? 1 : 0;
  writer_set_fixed (w, key, HZ_GGUF_TYPE_BOOL, &b);
}

void
hz_gguf_writer_set_str (HzGgufWriter *w, const char *key, const char *v)
{
  g_return_if_fail (w != NULL && key != NULL && v != NULL);
  GByteArray *b = g_byte_array_new ();
  put_str (b, v, strlen (v));
  writer_set (w, key, HZ_GGUF_TYPE_STRING, g_byte_array_free_to_bytes (b));
}

void
hz_gguf_writer_set_arr (HzGgufWriter *w, const char *key, HzGgufType elem_type,
                        const void *data, uint64_t n)
{
  g_return_if_fail (w != NULL && key != NULL);
  g_return_if_fail ((guint) elem_type < GGUF_N_TYPES && type_size[elem_type] != 0);
  g_return_if_fail (data != NULL || n == 0);
  g_return_if_fail (n <= G_MAXSIZE / 8);
  GByteArray *b = g_byte_array_new ();
  put_u32 (b, elem_type);
  put_u64 (b, n);
  if (n)
    g_byte_array_append (b, data, n * type_size[elem_type]);
  writer_set (w, key, HZ_GGUF_TYPE_ARRAY, g_byte_array_free_to_bytes (b));
}

void
hz_gguf_writer_set_str_arr (HzGgufWriter *w, const char *key, const char *const *strs,
                            uint64_t n)
{
  g_return_if_fail (w != NULL && key != NULL && (strs != NULL || n == 0));
  GByteArray *b = g_byte_array_new ();
  put_u32 (b, HZ_GGUF_TYPE_STRING);
  put_u64 (b, n);
  for (uint64_t j = 0; j < n; j++)
    put_str (b, strs[j], strlen (strs[j]));
  writer_set (w, key, HZ_GGUF_TYPE_ARRAY, g_byte_array_free_to_bytes (b));
}

void
hz_gguf_writer_copy_kv (HzGgufWriter *w, const HzGguf *src, int64_t i)
{
  g_return_if_fail (w != NULL);
  g_return_if_fail (src != NULL && i >= 0 && i < src->n_kv);
  const Kv *kv = &src->kvs[i];
  g_autofree char *key = g_strndup (kv->key.ptr, kv->key.len);
  writer_set (w, key, kv->type, g_bytes_new (src->data + kv->val_off, kv->val_len));
}

gboolean
hz_gguf_writer_copy_tensor (HzGgufWriter *w, const HzGguf *src, int64_t i, gboolean copy,
                            GError **error)
{
  g_return_val_if_fail (src != NULL && i >= 0 && i < hz_gguf_n_tensors (src), FALSE);
  const HzGgufTensor *t = hz_gguf_tensor (src, i);
  g_autofree char *name = g_strndup (t->name.ptr, t->name.len);
  return hz_gguf_writer_add_tensor (w, name, t->type, t->n_dims, t->ne, t->data, t->n_bytes,
                                    copy, error);
}

gboolean
hz_gguf_writer_add_tensor (HzGgufWriter *w, const char *name, uint32_t type,
                           uint32_t n_dims, const int64_t *ne, const void *data,
                           uint64_t n_bytes, gboolean copy, GError **error)
{
  g_return_val_if_fail (w != NULL && name != NULL && ne != NULL, FALSE);
  g_return_val_if_fail (data != NULL || n_bytes == 0, FALSE);
  Where where = { "tensor", -1, { name, strlen (name) } };
  if (g_hash_table_contains (w->tensor_names, name))
    {
      set_error (error, HZ_GGUF_ERROR_INVALID, &where, "duplicate tensor name");
      return FALSE;
    }
  if (n_dims < 1 || n_dims > GGUF_MAX_DIMS)
    {
      set_error (error, HZ_GGUF_ERROR_INVALID, &where, "n_dims %" G_GUINT32_FORMAT
                 " is not in 1..%u", n_dims, GGUF_MAX_DIMS);
      return FALSE;
    }
  int64_t shape[GGUF_MAX_DIMS];
  for (uint32_t d = 0; d < GGUF_MAX_DIMS; d++)
    shape[d] = d < n_dims ? ne[d] : 1;
  uint64_t expect;
  if (!check_shape (type, shape, &expect, &where, error))
    return FALSE;
  if (expect != n_bytes)
    {
      set_error (error, HZ_GGUF_ERROR_INVALID, &where,
                 "%" G_GUINT64_FORMAT " bytes given, the %s shape needs %" G_GUINT64_FORMAT,
                 n_bytes, hz_quant_traits (type)->name, expect);
      return FALSE;
    }
  WTensor *t = g_new0 (WTensor, 1);
  memcpy (t->ne, shape, sizeof shape);
  t->name = g_strdup (name);
  t->type = type;
  t->n_dims = n_dims;
  t->n_bytes = n_bytes;
  if (copy && n_bytes)
    t->data = t->owned = g_memdup2 (data, n_bytes);
  else
    t->data = data;
  g_ptr_array_add (w->tensors, t);
  g_hash_table_add (w->tensor_names, t->name);
  return TRUE;
}

static uint64_t
pad_to (uint64_t x, uint32_t align)
{
  return (align - x % align) % align;
}

/* The alignment the writer will use: general.alignment if set (must be a power-of-two
 * integer), else 32. */
static gboolean
writer_alignment (HzGgufWriter *w, uint32_t *align, GError **error)
{
  *align = GGUF_DEFAULT_ALIGN;
  WKv *kv = g_hash_table_lookup (w->kv_index, "general.alignment");
  if (!kv)
    return TRUE;
  /* Reuse the reader's rule by decoding the encoded value. */
  uint64_t v = 0;
  gsize len;
  const guint8 *p = g_bytes_get_data (kv->payload, &len);
  if (kv->type == HZ_GGUF_TYPE_UINT32 || kv->type == HZ_GGUF_TYPE_UINT64 ||
      kv->type == HZ_GGUF_TYPE_UINT16 || kv->type == HZ_GGUF_TYPE_UINT8)
    {
      uint64_t le = 0;
      memcpy (&le, p, len);  /* little-endian prefix of a u64 */
      v = GUINT64_FROM_LE (le);
    }
  if (v == 0 || v > (1u << 30) || (v & (v - 1)) != 0)
    {
      g_set_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_INVALID,
                   "key 'general.alignment': must be an unsigned power of two in 1..2^30");
      return FALSE;
    }
  *align = (uint32_t) v;
  return TRUE;
}

/* The atomic-file layer reports G_FILE_ERROR; GGUF callers expect HZ_GGUF_ERROR_IO.
 * `e` NULL (a callee that failed without an error) still gives a message. */
static gboolean
io_error (GError **error, GError *e)
{
  g_set_error_literal (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_IO, e ? e->message : "write failed");
  g_clear_error (&e);
  return FALSE;
}

/* The header (magic, counts, key/values, tensor infos) padded to `align`; sets each
 * tensor's data offset (tensors at aligned offsets, each padded after with zeros). */
static GByteArray *
writer_header (HzGgufWriter *w, uint32_t align)
{
  uint64_t off = 0;
  for (guint i = 0; i < w->tensors->len; i++)
    {
      WTensor *t = w->tensors->pdata[i];
      t->offset = off;
      off += t->n_bytes;
      off += pad_to (off, align);
    }

  GByteArray *hdr = g_byte_array_new ();
  g_byte_array_append (hdr, (const guint8 *) GGUF_MAGIC, 4);
  put_u32 (hdr, 3);
  put_u64 (hdr, w->tensors->len);
  put_u64 (hdr, w->kvs->len);
  for (guint i = 0; i < w->kvs->len; i++)
    {
      WKv *kv = w->kvs->pdata[i];
      gsize len;
      const guint8 *p = g_bytes_get_data (kv->payload, &len);
      put_str (hdr, kv->key, strlen (kv->key));
      put_u32 (hdr, kv->type);
      g_byte_array_append (hdr, p, len);
    }
  for (guint i = 0; i < w->tensors->len; i++)
    {
      WTensor *t = w->tensors->pdata[i];
      put_str (hdr, t->name, strlen (t->name));
      put_u32 (hdr, t->n_dims);
      for (uint32_t d = 0; d < t->n_dims; d++)
        put_u64 (hdr, (uint64_t) t->ne[d]);
      put_u32 (hdr, t->type);
      put_u64 (hdr, t->offset);
    }
  static const guint8 zeros[64];
  for (uint64_t hpad = pad_to (hdr->len, align); hpad;)
    {
      guint n = MIN (hpad, sizeof zeros);
      g_byte_array_append (hdr, zeros, n);
      hpad -= n;
    }
  return hdr;
}

GBytes *
hz_gguf_writer_to_bytes (HzGgufWriter *w, GError **error)
{
  g_return_val_if_fail (w != NULL, NULL);
  uint32_t align;
  if (!writer_alignment (w, &align, error))
    return NULL;
  GByteArray *b = writer_header (w, align);
  uint64_t total = b->len;
  for (guint i = 0; i < w->tensors->len; i++)
    {
      WTensor *t = w->tensors->pdata[i];
      total += t->n_bytes + pad_to (t->n_bytes, align);
    }
  if (total > G_MAXUINT)
    {
      g_byte_array_unref (b);
      g_set_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_OVERFLOW,
                   "a GGUF image of %" G_GUINT64_FORMAT " bytes is too large for memory "
                   "(write it to a file)", total);
      return NULL;
    }
  for (guint i = 0; i < w->tensors->len; i++)
    {
      WTensor *t = w->tensors->pdata[i];
      const guint at = b->len, pad = (guint) pad_to (t->n_bytes, align);
      g_byte_array_set_size (b, at + t->n_bytes + pad);
      memcpy (b->data + at, t->data, t->n_bytes);
      memset (b->data + at + t->n_bytes, 0, pad);
    }
  return g_byte_array_free_to_bytes (b);
}

gboolean
hz_gguf_writer_write_file (HzGgufWriter *w, const char *path, GError **error)
{
  g_return_val_if_fail (w != NULL && path != NULL, FALSE);
  uint32_t align;
  if (!writer_alignment (w, &align, error))
    return FALSE;
  g_autoptr (GByteArray) hdr = writer_header (w, align);
  static const guint8 zeros[1u << 12];

  /* written unnamed (O_TMPFILE) or under a temporary name, and put in place only when
   * complete: a kill or a full disk leaves the previous file or nothing (atomic-file.h) */
  GError *e = NULL;
  g_autoptr (HzAtomicFile) f = hz_atomic_file_create (path, 0666, &e);
  if (!f)
    return io_error (error, e);
  gboolean ok = hz_atomic_file_write (f, hdr->data, hdr->len, &e);
  for (guint i = 0; ok && i < w->tensors->len; i++)
    {
      WTensor *t = w->tensors->pdata[i];
      ok = hz_atomic_file_write (f, t->data, t->n_bytes, &e);
      for (uint64_t pad = pad_to (t->n_bytes, align); ok && pad;)
        {
          uint64_t n = MIN (pad, sizeof zeros);
          ok = hz_atomic_file_write (f, zeros, n, &e);
          pad -= n;
        }
    }
  ok = ok && hz_atomic_file_commit (g_steal_pointer (&f), &e);  /* else discarded */
  return ok || io_error (error, e);
}
