/* engine/safetensors.c — safetensors reader/writer. Format notes in safetensors.h. */
#include "safetensors.h"
#include "hanzo/atomic-file.h"
#include "hanzo/json-out.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <string.h>

G_DEFINE_QUARK (hz-safetensors-error-quark, hz_safetensors_error)

static const struct { const char *name; gsize size; } dtypes[] = {
  [HZ_ST_F32] = { "F32", 4 },  [HZ_ST_F16] = { "F16", 2 }, [HZ_ST_BF16] = { "BF16", 2 },
  [HZ_ST_F64] = { "F64", 8 },  [HZ_ST_I64] = { "I64", 8 }, [HZ_ST_I32] = { "I32", 4 },
  [HZ_ST_I16] = { "I16", 2 },  [HZ_ST_I8] = { "I8", 1 },   [HZ_ST_U8] = { "U8", 1 },
  [HZ_ST_BOOL] = { "BOOL", 1 },
};

/* The largest header we accept (the reference implementation's limit is 100 MB). */
#define MAX_HEADER_BYTES (100u * 1024 * 1024)

const char *
hz_st_dtype_name (HzStDtype dtype)
{
  return (guint) dtype < G_N_ELEMENTS (dtypes) ? dtypes[dtype].name : "?";
}

gsize
hz_st_dtype_size (HzStDtype dtype)
{
  return (guint) dtype < G_N_ELEMENTS (dtypes) ? dtypes[dtype].size : 0;
}

static gboolean
dtype_from_name (const char *name, HzStDtype *out)
{
  for (guint i = 0; i < G_N_ELEMENTS (dtypes); i++)
    if (g_strcmp0 (dtypes[i].name, name) == 0)
      {
        *out = (HzStDtype) i;
        return TRUE;
      }
  return FALSE;
}

struct _HzSafetensors {
  GBytes     *bytes;
  GMappedFile *map;
  guint64     header_size;
  GPtrArray  *tensors;     /* HzSafetensor*, sorted by offset */
  GHashTable *by_name;     /* name -> HzSafetensor* */
  GHashTable *metadata;    /* char* -> char* */
};

static void
tensor_free (gpointer p)
{
  HzSafetensor *t = p;
  g_free (t->name);
  g_free (t);
}

void
hz_safetensors_free (HzSafetensors *st)
{
  if (!st)
    return;
  g_clear_pointer (&st->tensors, g_ptr_array_unref);
  g_clear_pointer (&st->by_name, g_hash_table_unref);
  g_clear_pointer (&st->metadata, g_hash_table_unref);
  g_clear_pointer (&st->bytes, g_bytes_unref);
  g_clear_pointer (&st->map, g_mapped_file_unref);
  g_free (st);
}

static gint
cmp_offset (gconstpointer a, gconstpointer b)
{
  const HzSafetensor *x = *(HzSafetensor *const *) a, *y = *(HzSafetensor *const *) b;
  const guint8 *px = x->data, *py = y->data;
  return px < py ? -1 : px > py ? 1 : 0;
}

/* Parse one tensor entry of the header. */
static gboolean
parse_tensor (const char *name, JsonNode *node, const guint8 *buf, guint64 buf_size,
              HzSafetensor **out, GError **error)
{
  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      g_set_error (error, HZ_SAFETENSORS_ERROR, HZ_SAFETENSORS_ERROR_HEADER,
                   "tensor '%s': entry is not an object", name);
      return FALSE;
    }
  JsonObject *o = json_node_get_object (node);
  JsonNode *dt = json_object_get_member (o, "dtype");
  JsonNode *sh = json_object_get_member (o, "shape");
  JsonNode *of = json_object_get_member (o, "data_offsets");
  if (!dt || json_node_get_value_type (dt) != G_TYPE_STRING || !sh || !JSON_NODE_HOLDS_ARRAY (sh)
      || !of || !JSON_NODE_HOLDS_ARRAY (of))
    {
      g_set_error (error, HZ_SAFETENSORS_ERROR, HZ_SAFETENSORS_ERROR_HEADER,
                   "tensor '%s': needs \"dtype\" (string), \"shape\" and \"data_offsets\" (arrays)",
                   name);
      return FALSE;
    }
  HzSafetensor *t = g_new0 (HzSafetensor, 1);
  t->name = g_strdup (name);
  if (!dtype_from_name (json_node_get_string (dt), &t->dtype))
    {
      g_set_error (error, HZ_SAFETENSORS_ERROR, HZ_SAFETENSORS_ERROR_DTYPE,
                   "tensor '%s': unsupported dtype '%s'", name, json_node_get_string (dt));
      tensor_free (t);
      return FALSE;
    }
  JsonArray *shape = json_node_get_array (sh), *offs = json_node_get_array (of);
  guint nd = json_array_get_length (shape);
  if (nd > HZ_ST_MAX_DIMS || json_array_get_length (offs) != 2)
    {
      g_set_error (error, HZ_SAFETENSORS_ERROR, HZ_SAFETENSORS_ERROR_LAYOUT,
                   "tensor '%s': %u dimensions (max %d) or data_offsets not [begin, end]",
                   name, nd, HZ_ST_MAX_DIMS);
      tensor_free (t);
      return FALSE;
    }
  guint64 n_elems = 1;
  t->n_dims = nd;
  for (guint i = 0; i < nd; i++)
    {
      JsonNode *d = json_array_get_element (shape, i);
      gint64 v = json_node_get_value_type (d) == G_TYPE_INT64 ? json_node_get_int (d) : -1;
      if (v < 0 || (v > 0 && n_elems > G_MAXUINT64 / (guint64) v / 8))
        {
          g_set_error (error, HZ_SAFETENSORS_ERROR, HZ_SAFETENSORS_ERROR_LAYOUT,
                       "tensor '%s': bad or overflowing shape", name);
          tensor_free (t);
          return FALSE;
        }
      t->shape[i] = v;
      n_elems *= (guint64) v;
    }
  gint64 begin = -1, end = -1;
  JsonNode *b = json_array_get_element (offs, 0), *e = json_array_get_element (offs, 1);
  if (json_node_get_value_type (b) == G_TYPE_INT64)
    begin = json_node_get_int (b);
  if (json_node_get_value_type (e) == G_TYPE_INT64)
    end = json_node_get_int (e);
  guint64 want = n_elems * hz_st_dtype_size (t->dtype);
  if (begin < 0 || end < begin || (guint64) end > buf_size || (guint64) (end - begin) != want)
    {
      g_set_error (error, HZ_SAFETENSORS_ERROR, HZ_SAFETENSORS_ERROR_LAYOUT,
                   "tensor '%s': data_offsets [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
                   ") do not hold %" G_GUINT64_FORMAT " bytes inside the %" G_GUINT64_FORMAT
                   "-byte buffer", name, begin, end, want, buf_size);
      tensor_free (t);
      return FALSE;
    }
  t->data = buf + begin;
  t->n_bytes = want;
  *out = t;
  return TRUE;
}

static gboolean
parse_into (HzSafetensors *st, const guint8 *data, gsize size, GError **error)
{
  if (size < 8)
    {
      g_set_error (error, HZ_SAFETENSORS_ERROR, HZ_SAFETENSORS_ERROR_TRUNCATED,
                   "file of %" G_GSIZE_FORMAT " bytes is too short for a safetensors header", size);
      return FALSE;
    }
  guint64 n = 0;
  for (int i = 7; i >= 0; i--)
    n = (n << 8) | data[i];
  if (n > MAX_HEADER_BYTES || n > size - 8)
    {
      g_set_error (error, HZ_SAFETENSORS_ERROR, HZ_SAFETENSORS_ERROR_TRUNCATED,
                   "header length %" G_GUINT64_FORMAT " exceeds the file (%" G_GSIZE_FORMAT
                   " bytes) or the 100 MB limit", n, size);
      return FALSE;
    }
  st->header_size = n;
  const char *hdr = (const char *) data + 8;
  if (!g_utf8_validate (hdr, (gssize) n, NULL))
    {
      g_set_error (error, HZ_SAFETENSORS_ERROR, HZ_SAFETENSORS_ERROR_HEADER, "header is not UTF-8");
      return FALSE;
    }
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) jerr = NULL;
  if (!json_parser_load_from_data (parser, hdr, (gssize) n, &jerr))
    {
      g_set_error (error, HZ_SAFETENSORS_ERROR, HZ_SAFETENSORS_ERROR_HEADER,
                   "header is not valid JSON: %s", jerr->message);
      return FALSE;
    }
  JsonNode *root = json_parser_get_root (parser);
  if (!root || !JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error (error, HZ_SAFETENSORS_ERROR, HZ_SAFETENSORS_ERROR_HEADER,
                   "header is not a JSON object");
      return FALSE;
    }
  const guint8 *buf = data + 8 + n;
  guint64 buf_size = size - 8 - n;
  JsonObject *obj = json_node_get_object (root);
  g_autoptr (GList) members = json_object_get_members (obj);
  for (GList *l = members; l; l = l->next)
    {
      const char *name = l->data;
      JsonNode *node = json_object_get_member (obj, name);
      if (strcmp (name, "__metadata__") == 0)
        {
          if (!JSON_NODE_HOLDS_OBJECT (node))
            {
              g_set_error (error, HZ_SAFETENSORS_ERROR, HZ_SAFETENSORS_ERROR_HEADER,
                           "__metadata__ is not an object");
              return FALSE;
            }
          JsonObject *m = json_node_get_object (node);
          g_autoptr (GList) keys = json_object_get_members (m);
          for (GList *k = keys; k; k = k->next)
            {
              JsonNode *v = json_object_get_member (m, k->data);
              if (json_node_get_value_type (v) != G_TYPE_STRING)
                {
                  g_set_error (error, HZ_SAFETENSORS_ERROR, HZ_SAFETENSORS_ERROR_HEADER,
                               "__metadata__ value '%s' is not a string", (char *) k->data);
                  return FALSE;
                }
              g_hash_table_insert (st->metadata, g_strdup (k->data),
                                   g_strdup (json_node_get_string (v)));
            }
          continue;
        }
      HzSafetensor *t = NULL;
      if (!parse_tensor (name, node, buf, buf_size, &t, error))
        return FALSE;
      g_ptr_array_add (st->tensors, t);
      g_hash_table_insert (st->by_name, t->name, t);
    }
  /* Offsets must tile the buffer exactly: sorted, contiguous, no overlap, no holes. */
  g_ptr_array_sort (st->tensors, cmp_offset);
  const guint8 *pos = buf;
  for (guint i = 0; i < st->tensors->len; i++)
    {
      HzSafetensor *t = st->tensors->pdata[i];
      if ((const guint8 *) t->data != pos)
        {
          g_set_error (error, HZ_SAFETENSORS_ERROR, HZ_SAFETENSORS_ERROR_LAYOUT,
                       "tensor '%s': data starts at %" G_GSSIZE_FORMAT
                       ", expected %" G_GSSIZE_FORMAT " (overlap or hole)", t->name,
                       (gssize) ((const guint8 *) t->data - buf), (gssize) (pos - buf));
          return FALSE;
        }
      pos += t->n_bytes;
    }
  if ((guint64) (pos - buf) != buf_size)
    {
      g_set_error (error, HZ_SAFETENSORS_ERROR, HZ_SAFETENSORS_ERROR_LAYOUT,
                   "%" G_GUINT64_FORMAT " trailing bytes after the last tensor",
                   buf_size - (guint64) (pos - buf));
      return FALSE;
    }
  return TRUE;
}

/* Validate into `st`; on failure free it and return NULL. */
static HzSafetensors *
parse (HzSafetensors *st, const guint8 *data, gsize size, GError **error)
{
  if (!parse_into (st, data, size, error))
    {
      hz_safetensors_free (st);
      return NULL;
    }
  return st;
}

static HzSafetensors *
st_new (void)
{
  HzSafetensors *st = g_new0 (HzSafetensors, 1);
  st->tensors = g_ptr_array_new_with_free_func (tensor_free);
  st->by_name = g_hash_table_new (g_str_hash, g_str_equal);
  st->metadata = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  return st;
}

HzSafetensors *
hz_safetensors_open (const char *path, GError **error)
{
  g_autoptr (GError) err = NULL;
  /* O_NONBLOCK: opening a FIFO must not wait for a writer; only regular files are mapped */
  int fd = g_open (path, O_RDONLY | O_CLOEXEC | O_NONBLOCK, 0);
  if (fd < 0)
    {
      int e = errno;
      g_set_error (error, HZ_SAFETENSORS_ERROR, HZ_SAFETENSORS_ERROR_IO, "%s: cannot open: %s",
                   path, g_strerror (e));
      return NULL;
    }
  struct stat sb;
  if (fstat (fd, &sb) != 0 || !S_ISREG (sb.st_mode))
    {
      g_set_error (error, HZ_SAFETENSORS_ERROR, HZ_SAFETENSORS_ERROR_IO,
                   "%s: not a regular file", path);
      close (fd);
      return NULL;
    }
  GMappedFile *map = g_mapped_file_new_from_fd (fd, FALSE, &err);
  close (fd);   /* the mapping stays valid without the descriptor */
  if (!map)
    {
      g_set_error (error, HZ_SAFETENSORS_ERROR, HZ_SAFETENSORS_ERROR_IO, "%s: %s", path,
                   err->message);
      return NULL;
    }
  HzSafetensors *st = st_new ();
  st->map = map;
  st = parse (st, (const guint8 *) g_mapped_file_get_contents (map),
              g_mapped_file_get_length (map), error);
  if (!st)
    g_prefix_error (error, "%s: ", path);   /* every error names the file */
  return st;
}

HzSafetensors *
hz_safetensors_new_from_bytes (GBytes *bytes, GError **error)
{
  HzSafetensors *st = st_new ();
  st->bytes = g_bytes_ref (bytes);
  gsize size;
  const guint8 *data = g_bytes_get_data (bytes, &size);
  return parse (st, data, size, error);
}

guint
hz_safetensors_n_tensors (const HzSafetensors *st)
{
  return st->tensors->len;
}

const HzSafetensor *
hz_safetensors_tensor (const HzSafetensors *st, guint i)
{
  return i < st->tensors->len ? st->tensors->pdata[i] : NULL;
}

const HzSafetensor *
hz_safetensors_find (const HzSafetensors *st, const char *name)
{
  return g_hash_table_lookup (st->by_name, name);
}

const char *
hz_safetensors_metadata (const HzSafetensors *st, const char *key)
{
  return g_hash_table_lookup (st->metadata, key);
}

guint64
hz_safetensors_header_size (const HzSafetensors *st)
{
  return st->header_size;
}

/* ------------------------------------------------------------------ writer */

typedef struct {
  char     *name;
  HzStDtype dtype;
  guint     n_dims;
  int64_t   shape[HZ_ST_MAX_DIMS];
  GBytes   *data;
} WTensor;

struct _HzSafetensorsWriter {
  GPtrArray  *tensors;   /* WTensor*, insertion order */
  GHashTable *names;
  GPtrArray  *meta_keys; /* insertion order */
  GHashTable *meta;
};

static void
wtensor_free (gpointer p)
{
  WTensor *t = p;
  g_free (t->name);
  g_bytes_unref (t->data);
  g_free (t);
}

HzSafetensorsWriter *
hz_safetensors_writer_new (void)
{
  HzSafetensorsWriter *w = g_new0 (HzSafetensorsWriter, 1);
  w->tensors = g_ptr_array_new_with_free_func (wtensor_free);
  w->names = g_hash_table_new (g_str_hash, g_str_equal);
  w->meta_keys = g_ptr_array_new_with_free_func (g_free);
  w->meta = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  return w;
}

void
hz_safetensors_writer_free (HzSafetensorsWriter *w)
{
  if (!w)
    return;
  g_ptr_array_unref (w->tensors);
  g_hash_table_unref (w->names);
  g_ptr_array_unref (w->meta_keys);
  g_hash_table_unref (w->meta);
  g_free (w);
}

gboolean
hz_safetensors_writer_add (HzSafetensorsWriter *w, const char *name, HzStDtype dtype,
                           guint n_dims, const int64_t *shape, const void *data,
                           gsize n_bytes, GError **error)
{
  guint64 n = hz_st_dtype_size (dtype);
  gboolean ok = n > 0 && n_dims <= HZ_ST_MAX_DIMS && name && *name
                && strcmp (name, "__metadata__") != 0 && g_utf8_validate (name, -1, NULL)
                && !g_hash_table_contains (w->names, name);
  for (guint i = 0; ok && i < n_dims; i++)
    ok = shape[i] >= 0;
  for (guint i = 0; ok && i < n_dims; i++)
    n *= (guint64) shape[i];
  if (!ok || n != n_bytes)
    {
      g_set_error (error, HZ_SAFETENSORS_ERROR, HZ_SAFETENSORS_ERROR_LAYOUT,
                   "cannot add tensor '%s': bad/duplicate name, dtype or shape, or %"
                   G_GSIZE_FORMAT " bytes given for %" G_GUINT64_FORMAT,
                   name ? name : "(null)", n_bytes, n);
      return FALSE;
    }
  WTensor *t = g_new0 (WTensor, 1);
  t->name = g_strdup (name);
  t->dtype = dtype;
  t->n_dims = n_dims;
  memcpy (t->shape, shape, n_dims * sizeof (int64_t));
  t->data = g_bytes_new (data, n_bytes);
  g_ptr_array_add (w->tensors, t);
  g_hash_table_add (w->names, t->name);
  return TRUE;
}

void
hz_safetensors_writer_set_metadata (HzSafetensorsWriter *w, const char *key, const char *value)
{
  if (!g_hash_table_contains (w->meta, key))
    g_ptr_array_add (w->meta_keys, g_strdup (key));
  g_hash_table_replace (w->meta, g_strdup (key), g_strdup (value));
}

GBytes *
hz_safetensors_writer_to_bytes (HzSafetensorsWriter *w)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  if (w->meta_keys->len > 0)
    {
      json_builder_set_member_name (b, "__metadata__");
      json_builder_begin_object (b);
      for (guint i = 0; i < w->meta_keys->len; i++)
        {
          const char *k = w->meta_keys->pdata[i];
          json_builder_set_member_name (b, k);
          json_builder_add_string_value (b, g_hash_table_lookup (w->meta, k));
        }
      json_builder_end_object (b);
    }
  guint64 off = 0;
  for (guint i = 0; i < w->tensors->len; i++)
    {
      WTensor *t = w->tensors->pdata[i];
      json_builder_set_member_name (b, t->name);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "dtype");
      json_builder_add_string_value (b, hz_st_dtype_name (t->dtype));
      json_builder_set_member_name (b, "shape");
      json_builder_begin_array (b);
      for (guint d = 0; d < t->n_dims; d++)
        json_builder_add_int_value (b, t->shape[d]);
      json_builder_end_array (b);
      json_builder_set_member_name (b, "data_offsets");
      json_builder_begin_array (b);
      json_builder_add_int_value (b, (gint64) off);
      off += g_bytes_get_size (t->data);
      json_builder_add_int_value (b, (gint64) off);
      json_builder_end_array (b);
      json_builder_end_object (b);
    }
  json_builder_end_object (b);
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  json_generator_set_root (gen, root);
  gsize hlen = 0;
  g_autofree char *hdr = hz_json_generator_to_data (gen, &hlen);
  gsize padded = (hlen + 7) & ~(gsize) 7;

  GByteArray *out = g_byte_array_sized_new (8 + padded + off);
  guint8 len8[8];
  for (int i = 0; i < 8; i++)
    len8[i] = (guint8) ((guint64) padded >> (8 * i));
  g_byte_array_append (out, len8, 8);
  g_byte_array_append (out, (const guint8 *) hdr, hlen);
  for (gsize i = hlen; i < padded; i++)
    g_byte_array_append (out, (const guint8 *) " ", 1);
  for (guint i = 0; i < w->tensors->len; i++)
    {
      WTensor *t = w->tensors->pdata[i];
      gsize n;
      const guint8 *d = g_bytes_get_data (t->data, &n);
      g_byte_array_append (out, d, n);
    }
  return g_byte_array_free_to_bytes (out);
}

gboolean
hz_safetensors_writer_write_file (HzSafetensorsWriter *w, const char *path, GError **error)
{
  g_autoptr (GBytes) bytes = hz_safetensors_writer_to_bytes (w);
  gsize n;
  const char *d = g_bytes_get_data (bytes, &n);
  g_autoptr (GError) err = NULL;
  if (!hz_atomic_file_set_contents (path, d, n, 0666, &err))
    {
      g_set_error (error, HZ_SAFETENSORS_ERROR, HZ_SAFETENSORS_ERROR_IO, "%s", err->message);
      return FALSE;
    }
  return TRUE;
}
