/* tests/engine/test-gguf.c — GGUF reader/writer: round trips of every value type and of
 * tensors, hostile inputs (truncation at every byte, absurd counts, bad tensors), and the
 * real files under ../shared (skipped when absent). */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "gguf.h"
#include "quant.h"
#include "../hz-test-util.h"

/* ---- a tiny GGUF byte builder for hand-made (and hostile) files ---- */

static void
b_u8 (GByteArray *b, guint8 v)
{
  g_byte_array_append (b, &v, 1);
}

static void
b_u16 (GByteArray *b, uint16_t v)
{
  v = GUINT16_TO_LE (v);
  g_byte_array_append (b, (guint8 *) &v, 2);
}

static void
b_u32 (GByteArray *b, uint32_t v)
{
  v = GUINT32_TO_LE (v);
  g_byte_array_append (b, (guint8 *) &v, 4);
}

static void
b_u64 (GByteArray *b, uint64_t v)
{
  v = GUINT64_TO_LE (v);
  g_byte_array_append (b, (guint8 *) &v, 8);
}

static void
b_str (GByteArray *b, const char *s)
{
  b_u64 (b, strlen (s));
  g_byte_array_append (b, (const guint8 *) s, strlen (s));
}

static GByteArray *
b_header (uint32_t version, uint64_t n_tensors, uint64_t n_kv)
{
  GByteArray *b = g_byte_array_new ();
  g_byte_array_append (b, (const guint8 *) "GGUF", 4);
  b_u32 (b, version);
  b_u64 (b, n_tensors);
  b_u64 (b, n_kv);
  return b;
}

/* key + value type (the caller appends the value) */
static void
b_kv (GByteArray *b, const char *key, HzGgufType type)
{
  b_str (b, key);
  b_u32 (b, type);
}

static void
b_tensor (GByteArray *b, const char *name, uint32_t n_dims, const int64_t *ne,
          uint32_t type, uint64_t offset)
{
  b_str (b, name);
  b_u32 (b, n_dims);
  for (uint32_t d = 0; d < n_dims; d++)
    b_u64 (b, (uint64_t) ne[d]);
  b_u32 (b, type);
  b_u64 (b, offset);
}

static void
b_pad (GByteArray *b, guint align)
{
  while (b->len % align)
    b_u8 (b, 0);
}

static void
b_zeros (GByteArray *b, guint n)
{
  for (guint i = 0; i < n; i++)
    b_u8 (b, 0);
}

/* Opens `data` from an exact-size heap copy, so that an over-read is visible to
 * sanitizers. The copies live until the test program exits (the HzGguf points into them). */
static HzGguf *
open_bytes (const guint8 *data, gsize len, GError **error)
{
  static GPtrArray *copies;
  if (!copies)
    copies = g_ptr_array_new_with_free_func (g_free);
  guint8 *copy = g_memdup2 (data, len ? len : 1);
  g_ptr_array_add (copies, copy);
  return hz_gguf_open_from_data (len ? copy : NULL, len, error);
}

/* Asserts that `b` is rejected with `code` and that the message contains `needle`. */
static void
expect_error (GByteArray *b, HzGgufError code, const char *needle)
{
  g_autoptr (GError) error = NULL;
  HzGguf *g = open_bytes (b->data, b->len, &error);
  g_assert_null (g);
  g_assert_error (error, HZ_GGUF_ERROR, code);
  if (needle && !strstr (error->message, needle))
    g_error ("message \"%s\" lacks \"%s\"", error->message, needle);
  g_test_message ("rejected as expected: %s", error->message);
  g_byte_array_unref (b);
}

static char *dir;  /* temporary directory of the files the tests write */

static char *
tmp_path (const char *name)
{
  if (!dir)
    {
      GError *error = NULL;
      dir = g_dir_make_tmp ("test-gguf-XXXXXX", &error);
      g_assert_no_error (error);
    }
  return g_build_filename (dir, name, NULL);
}

static HzGguf *
write_and_open (HzGgufWriter *w, const char *name)
{
  g_autofree char *path = tmp_path (name);
  g_autoptr (GError) error = NULL;
  g_assert_true (hz_gguf_writer_write_file (w, path, &error));
  g_assert_no_error (error);
  g_autofree char *tmp = g_strconcat (path, ".tmp", NULL);
  g_assert_false (g_file_test (tmp, G_FILE_TEST_EXISTS));
  /* no temporary file (NAME.XXXXXX) left next to it */
  {
    g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
    g_autofree char *prefix = g_strconcat (name, ".", NULL);
    const char *e;
    while (d && (e = g_dir_read_name (d)))
      g_assert_false (g_str_has_prefix (e, prefix));
  }
  HzGguf *g = hz_gguf_open (path, &error);
  g_assert_no_error (error);
  g_assert_nonnull (g);
  return g;
}

static void
assert_value_str (const HzGguf *g, const char *key, guint max, const char *expect)
{
  int64_t i = hz_gguf_find_key (g, key);
  g_assert_cmpint (i, >=, 0);
  g_autofree char *s = hz_gguf_value_to_string (g, i, max);
  g_assert_cmpstr (s, ==, expect);
}

/* ---- writer -> reader round trips ---- */

static void
test_roundtrip_scalars_and_arrays (void)
{
  g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
  hz_gguf_writer_set_u32 (w, "a.u32", 4000000000u);
  hz_gguf_writer_set_i32 (w, "a.i32", -123456);
  hz_gguf_writer_set_u64 (w, "a.u64", G_GUINT64_CONSTANT (18446744073709551615));
  hz_gguf_writer_set_f32 (w, "a.f32", 1e-5f);
  hz_gguf_writer_set_bool (w, "a.bool", TRUE);
  hz_gguf_writer_set_str (w, "a.str", "h\xc3\xa9llo \"w\"\n");
  hz_gguf_writer_set_str (w, "a.empty", "");
  hz_gguf_writer_set_u32 (w, "a.replaced", 1);

  const guint8 u8[] = { 0, 7, 255 };
  const gint8 i8[] = { -128, 0, 127 };
  const guint16 u16[] = { 0, 65535 };
  const gint16 i16[] = { -32768, 32767 };
  const guint32 u32[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
  const gint32 i32[] = { -1, G_MININT32 };
  const float f32[] = { 0.5f, -2.25f, 1e-5f };
  const guint8 bools[] = { 1, 0, 1 };
  const guint64 u64[] = { G_MAXUINT64 };
  const gint64 i64[] = { G_MININT64, 42 };
  const double f64[] = { 0.1, -1e300 };
  hz_gguf_writer_set_arr (w, "arr.u8", HZ_GGUF_TYPE_UINT8, u8, G_N_ELEMENTS (u8));
  hz_gguf_writer_set_arr (w, "arr.i8", HZ_GGUF_TYPE_INT8, i8, G_N_ELEMENTS (i8));
  hz_gguf_writer_set_arr (w, "arr.u16", HZ_GGUF_TYPE_UINT16, u16, G_N_ELEMENTS (u16));
  hz_gguf_writer_set_arr (w, "arr.i16", HZ_GGUF_TYPE_INT16, i16, G_N_ELEMENTS (i16));
  hz_gguf_writer_set_arr (w, "arr.u32", HZ_GGUF_TYPE_UINT32, u32, G_N_ELEMENTS (u32));
  hz_gguf_writer_set_arr (w, "arr.i32", HZ_GGUF_TYPE_INT32, i32, G_N_ELEMENTS (i32));
  hz_gguf_writer_set_arr (w, "arr.f32", HZ_GGUF_TYPE_FLOAT32, f32, G_N_ELEMENTS (f32));
  hz_gguf_writer_set_arr (w, "arr.bool", HZ_GGUF_TYPE_BOOL, bools, G_N_ELEMENTS (bools));
  hz_gguf_writer_set_arr (w, "arr.u64", HZ_GGUF_TYPE_UINT64, u64, G_N_ELEMENTS (u64));
  hz_gguf_writer_set_arr (w, "arr.i64", HZ_GGUF_TYPE_INT64, i64, G_N_ELEMENTS (i64));
  hz_gguf_writer_set_arr (w, "arr.f64", HZ_GGUF_TYPE_FLOAT64, f64, G_N_ELEMENTS (f64));
  hz_gguf_writer_set_arr (w, "arr.empty", HZ_GGUF_TYPE_FLOAT32, NULL, 0);
  const char *strs[] = { "<unk>", "", "\xe2\x96\x81the", "tab\there" };
  hz_gguf_writer_set_str_arr (w, "arr.str", strs, G_N_ELEMENTS (strs));
  hz_gguf_writer_set_str_arr (w, "arr.str_empty", NULL, 0);
  hz_gguf_writer_set_str (w, "a.replaced", "second");  /* replaces, keeps position */

  g_autoptr (HzGguf) g = write_and_open (w, "values.gguf");
  g_assert_cmpuint (hz_gguf_version (g), ==, 3);
  g_assert_cmpuint (hz_gguf_alignment (g), ==, 32);
  g_assert_cmpint (hz_gguf_n_tensors (g), ==, 0);
  g_assert_cmpint (hz_gguf_n_kv (g), ==, 22);
  const char *order[] = { "a.u32", "a.i32", "a.u64", "a.f32", "a.bool", "a.str", "a.empty",
                          "a.replaced", "arr.u8" };
  for (guint i = 0; i < G_N_ELEMENTS (order); i++)
    {
      HzGgufStr k = hz_gguf_key (g, i);
      g_assert_cmpuint (k.len, ==, strlen (order[i]));
      g_assert_true (memcmp (k.ptr, order[i], k.len) == 0);
      g_assert_cmpint (hz_gguf_find_key (g, order[i]), ==, i);
    }
  g_assert_cmpint (hz_gguf_find_key (g, "a.u3"), ==, -1);
  g_assert_cmpint (hz_gguf_find_key (g, "missing"), ==, -1);

  uint32_t u;
  int64_t i;
  float f;
  gboolean b;
  g_assert_true (hz_gguf_get_u32 (g, "a.u32", &u));
  g_assert_cmpuint (u, ==, 4000000000u);
  g_assert_true (hz_gguf_get_i64 (g, "a.u32", &i));
  g_assert_cmpint (i, ==, 4000000000);
  g_assert_true (hz_gguf_get_i64 (g, "a.i32", &i));
  g_assert_cmpint (i, ==, -123456);
  g_assert_false (hz_gguf_get_u32 (g, "a.i32", &u));      /* negative */
  g_assert_false (hz_gguf_get_u32 (g, "a.u64", &u));      /* out of range */
  g_assert_false (hz_gguf_get_i64 (g, "a.u64", &i));      /* out of range */
  g_assert_true (hz_gguf_get_f32 (g, "a.f32", &f));
  g_assert_cmpfloat (f, ==, 1e-5f);
  g_assert_true (hz_gguf_get_f32 (g, "a.i32", &f));       /* int -> float */
  g_assert_cmpfloat (f, ==, -123456.0f);
  g_assert_false (hz_gguf_get_u32 (g, "a.f32", &u));      /* float -> int refused */
  g_assert_true (hz_gguf_get_bool (g, "a.bool", &b));
  g_assert_true (b);
  g_assert_false (hz_gguf_get_bool (g, "a.str", &b));
  g_assert_false (hz_gguf_get_u32 (g, "missing", &u));
  g_autofree char *s = hz_gguf_get_str (g, "a.str");
  g_assert_cmpstr (s, ==, "h\xc3\xa9llo \"w\"\n");
  g_autofree char *e = hz_gguf_get_str (g, "a.empty");
  g_assert_cmpstr (e, ==, "");
  g_autofree char *r = hz_gguf_get_str (g, "a.replaced");
  g_assert_cmpstr (r, ==, "second");
  g_assert_null (hz_gguf_get_str (g, "a.u32"));

  struct { const char *key; HzGgufType t; const void *data; gsize n, size; } arrs[] = {
    { "arr.u8", HZ_GGUF_TYPE_UINT8, u8, 3, 1 },     { "arr.i8", HZ_GGUF_TYPE_INT8, i8, 3, 1 },
    { "arr.u16", HZ_GGUF_TYPE_UINT16, u16, 2, 2 },  { "arr.i16", HZ_GGUF_TYPE_INT16, i16, 2, 2 },
    { "arr.u32", HZ_GGUF_TYPE_UINT32, u32, 10, 4 }, { "arr.i32", HZ_GGUF_TYPE_INT32, i32, 2, 4 },
    { "arr.f32", HZ_GGUF_TYPE_FLOAT32, f32, 3, 4 }, { "arr.bool", HZ_GGUF_TYPE_BOOL, bools, 3, 1 },
    { "arr.u64", HZ_GGUF_TYPE_UINT64, u64, 1, 8 },  { "arr.i64", HZ_GGUF_TYPE_INT64, i64, 2, 8 },
    { "arr.f64", HZ_GGUF_TYPE_FLOAT64, f64, 2, 8 },
  };
  for (guint k = 0; k < G_N_ELEMENTS (arrs); k++)
    {
      int64_t idx = hz_gguf_find_key (g, arrs[k].key);
      g_assert_cmpint (hz_gguf_kv_type (g, idx), ==, HZ_GGUF_TYPE_ARRAY);
      g_assert_cmpint (hz_gguf_arr_type (g, idx), ==, arrs[k].t);
      g_assert_cmpuint (hz_gguf_arr_n (g, idx), ==, arrs[k].n);
      g_assert_true (memcmp (hz_gguf_arr_data (g, idx), arrs[k].data,
                             arrs[k].n * arrs[k].size) == 0);
    }
  int64_t idx = hz_gguf_find_key (g, "arr.empty");
  g_assert_cmpuint (hz_gguf_arr_n (g, idx), ==, 0);
  g_assert_cmpint (hz_gguf_arr_type (g, idx), ==, HZ_GGUF_TYPE_FLOAT32);
  idx = hz_gguf_find_key (g, "arr.str");
  g_assert_cmpint (hz_gguf_arr_type (g, idx), ==, HZ_GGUF_TYPE_STRING);
  g_assert_null (hz_gguf_arr_data (g, idx));
  for (guint k = 0; k < G_N_ELEMENTS (strs); k++)
    {
      HzGgufStr st = hz_gguf_arr_str (g, idx, k);
      g_assert_cmpuint (st.len, ==, strlen (strs[k]));
      g_assert_true (memcmp (st.ptr, strs[k], st.len) == 0);
    }
  g_assert_null (hz_gguf_arr_str (g, idx, G_N_ELEMENTS (strs)).ptr);
  g_assert_cmpuint (hz_gguf_arr_n (g, hz_gguf_find_key (g, "arr.str_empty")), ==, 0);

  assert_value_str (g, "a.u32", 8, "4000000000");
  assert_value_str (g, "a.i32", 8, "-123456");
  assert_value_str (g, "a.f32", 8, "1e-05");
  assert_value_str (g, "a.bool", 8, "true");
  assert_value_str (g, "a.str", 8, "\"h\xc3\xa9llo \\\"w\\\"\\n\"");
  assert_value_str (g, "a.empty", 8, "\"\"");
  assert_value_str (g, "arr.u32", 3, "[1, 2, 3, ... 7 more]");
  assert_value_str (g, "arr.u32", 0, "[... 10 more]");
  assert_value_str (g, "arr.i8", 8, "[-128, 0, 127]");
  assert_value_str (g, "arr.f32", 8, "[0.5, -2.25, 1e-05]");
  assert_value_str (g, "arr.bool", 8, "[true, false, true]");
  assert_value_str (g, "arr.i64", 8, "[-9223372036854775808, 42]");
  assert_value_str (g, "arr.f64", 8, "[0.1, -1e+300]");
  assert_value_str (g, "arr.empty", 8, "[]");
  assert_value_str (g, "arr.str", 2, "[\"<unk>\", \"\", ... 2 more]");
  assert_value_str (g, "arr.str", 9, "[\"<unk>\", \"\", \"\xe2\x96\x81the\", \"tab\\there\"]");
}

/* A hand-made file with every scalar type and nested arrays (the writer has no setter
 * for those), copied key by key through hz_gguf_writer_copy_kv. */
static GByteArray *
make_nested_file (void)
{
  GByteArray *b = b_header (3, 0, 8);
  b_kv (b, "s.i8", HZ_GGUF_TYPE_INT8); b_u8 (b, 0xfe);
  b_kv (b, "s.i16", HZ_GGUF_TYPE_INT16); b_u16 (b, 0);
  b_kv (b, "s.f64", HZ_GGUF_TYPE_FLOAT64);
  double d = 2.5; uint64_t dv; memcpy (&dv, &d, 8); b_u64 (b, dv);
  b_kv (b, "s.i64", HZ_GGUF_TYPE_INT64); b_u64 (b, (uint64_t) -5);
  /* [[1, 2], [], [3]] of u32 */
  b_kv (b, "n.u32", HZ_GGUF_TYPE_ARRAY);
  b_u32 (b, HZ_GGUF_TYPE_ARRAY); b_u64 (b, 3);
  b_u32 (b, HZ_GGUF_TYPE_UINT32); b_u64 (b, 2); b_u32 (b, 1); b_u32 (b, 2);
  b_u32 (b, HZ_GGUF_TYPE_UINT32); b_u64 (b, 0);
  b_u32 (b, HZ_GGUF_TYPE_UINT32); b_u64 (b, 1); b_u32 (b, 3);
  /* [["a", ""], [[true]]] : an array of arrays of different element types */
  b_kv (b, "n.mixed", HZ_GGUF_TYPE_ARRAY);
  b_u32 (b, HZ_GGUF_TYPE_ARRAY); b_u64 (b, 2);
  b_u32 (b, HZ_GGUF_TYPE_STRING); b_u64 (b, 2); b_str (b, "a"); b_str (b, "");
  b_u32 (b, HZ_GGUF_TYPE_ARRAY); b_u64 (b, 1);
  b_u32 (b, HZ_GGUF_TYPE_BOOL); b_u64 (b, 1); b_u8 (b, 1);
  /* an empty array of arrays */
  b_kv (b, "n.empty", HZ_GGUF_TYPE_ARRAY); b_u32 (b, HZ_GGUF_TYPE_ARRAY); b_u64 (b, 0);
  b_kv (b, "", HZ_GGUF_TYPE_STRING); b_str (b, "empty key");
  return b;
}

static void
check_nested (const HzGguf *g)
{
  g_assert_cmpint (hz_gguf_n_kv (g), ==, 8);
  int64_t i;
  g_assert_true (hz_gguf_get_i64 (g, "s.i8", &i));
  g_assert_cmpint (i, ==, -2);
  g_assert_true (hz_gguf_get_i64 (g, "s.i16", &i));
  g_assert_cmpint (i, ==, 0);
  g_assert_true (hz_gguf_get_i64 (g, "s.i64", &i));
  g_assert_cmpint (i, ==, -5);
  float f;
  g_assert_true (hz_gguf_get_f32 (g, "s.f64", &f));
  g_assert_cmpfloat (f, ==, 2.5f);
  int64_t n = hz_gguf_find_key (g, "n.u32");
  g_assert_cmpint (hz_gguf_arr_type (g, n), ==, HZ_GGUF_TYPE_ARRAY);
  g_assert_cmpuint (hz_gguf_arr_n (g, n), ==, 3);
  g_assert_null (hz_gguf_arr_data (g, n));
  g_assert_null (hz_gguf_arr_str (g, n, 0).ptr);
  assert_value_str (g, "n.u32", 8, "[[1, 2], [], [3]]");
  assert_value_str (g, "n.u32", 1, "[[1, ... 1 more], ... 2 more]");
  assert_value_str (g, "n.mixed", 8, "[[\"a\", \"\"], [[true]]]");
  assert_value_str (g, "n.empty", 8, "[]");
  assert_value_str (g, "s.f64", 8, "2.5");
  assert_value_str (g, "", 8, "\"empty key\"");
}

static void
test_roundtrip_nested (void)
{
  g_autoptr (GByteArray) b = make_nested_file ();
  g_autoptr (GError) error = NULL;
  g_autoptr (HzGguf) src = hz_gguf_open_from_data (b->data, b->len, &error);
  g_assert_no_error (error);
  check_nested (src);
  g_assert_cmpuint (hz_gguf_version (src), ==, 3);
  g_assert_cmpuint (hz_gguf_data_offset (src) % 32, ==, 0);

  g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
  for (int64_t i = 0; i < hz_gguf_n_kv (src); i++)
    hz_gguf_writer_copy_kv (w, src, i);
  g_autoptr (HzGguf) g = write_and_open (w, "nested.gguf");
  check_nested (g);
  /* The copy is byte-identical up to the data section (same header, same values). */
  g_assert_cmpuint (hz_gguf_file_size (g), >=, b->len);
  g_assert_true (memcmp (hz_gguf_file_data (g), b->data, b->len) == 0);
}

/* Several tensor types and ranks at alignment `align`; returns the raw data for checks. */
static void
roundtrip_tensors (guint align)
{
  struct { const char *name; uint32_t type; uint32_t n_dims; int64_t ne[4]; } ts[] = {
    { "f32.vec", HZ_TYPE_F32, 1, { 7 } },
    { "f16.mat", HZ_TYPE_F16, 2, { 5, 3 } },
    { "q4_0.mat", HZ_TYPE_Q4_0, 2, { 64, 3 } },
    { "q8_0.t3", HZ_TYPE_Q8_0, 3, { 32, 2, 2 } },
    { "bf16.t4", HZ_TYPE_BF16, 4, { 3, 1, 2, 2 } },
  };
  g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
  if (align != 32)
    hz_gguf_writer_set_u32 (w, "general.alignment", align);
  hz_gguf_writer_set_str (w, "general.architecture", "test");
  GRand *rand = g_rand_new_with_seed (align);
  guint8 *datas[G_N_ELEMENTS (ts)];
  for (guint k = 0; k < G_N_ELEMENTS (ts); k++)
    {
      int64_t rows = ts[k].ne[1] ? ts[k].ne[1] : 1;
      for (guint d = 2; d < ts[k].n_dims; d++)
        rows *= ts[k].ne[d];
      gsize n = hz_quant_row_size (ts[k].type, ts[k].ne[0]) * rows;
      g_assert_cmpuint (n, >, 0);
      datas[k] = g_malloc (n);
      for (gsize j = 0; j < n; j++)
        datas[k][j] = g_rand_int (rand) & 0xff;
      g_autoptr (GError) error = NULL;
      /* copy the first tensor, borrow the others (they outlive the write) */
      g_assert_true (hz_gguf_writer_add_tensor (w, ts[k].name, ts[k].type, ts[k].n_dims,
                                                ts[k].ne, datas[k], n, k == 0, &error));
      g_assert_no_error (error);
    }
  g_rand_free (rand);

  g_autofree char *name = g_strdup_printf ("tensors-%u.gguf", align);
  g_autoptr (HzGguf) g = write_and_open (w, name);
  g_assert_cmpuint (hz_gguf_alignment (g), ==, align);
  g_assert_cmpuint (hz_gguf_data_offset (g) % align, ==, 0);
  g_assert_cmpint (hz_gguf_n_tensors (g), ==, G_N_ELEMENTS (ts));
  uint64_t expect_off = 0;
  for (guint k = 0; k < G_N_ELEMENTS (ts); k++)
    {
      const HzGgufTensor *t = hz_gguf_find_tensor (g, ts[k].name);
      g_assert_nonnull (t);
      g_assert_true (t == hz_gguf_tensor (g, k));
      g_assert_cmpuint (t->name.len, ==, strlen (ts[k].name));
      g_assert_cmpuint (t->type, ==, ts[k].type);
      g_assert_cmpuint (t->n_dims, ==, ts[k].n_dims);
      for (guint d = 0; d < 4; d++)
        g_assert_cmpint (t->ne[d], ==, d < ts[k].n_dims ? ts[k].ne[d] : 1);
      g_assert_cmpuint (t->offset % align, ==, 0);
      g_assert_cmpuint (t->offset, ==, expect_off);
      expect_off = t->offset + t->n_bytes + (align - t->n_bytes % align) % align;
      g_assert_true ((const guint8 *) t->data ==
                     (const guint8 *) hz_gguf_file_data (g) + hz_gguf_data_offset (g) + t->offset);
      g_assert_true (memcmp (t->data, datas[k], t->n_bytes) == 0);
      g_free (datas[k]);
    }
  /* the last tensor is padded like ggml does */
  g_assert_cmpuint (hz_gguf_file_size (g), ==, hz_gguf_data_offset (g) + expect_off);
  g_assert_null (hz_gguf_find_tensor (g, "f32"));
}

static void
test_roundtrip_tensors (void)
{
  roundtrip_tensors (32);
  roundtrip_tensors (64);
  roundtrip_tensors (8);
}

static void
test_writer_rejects (void)
{
  g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
  float data[64] = { 0 };
  int64_t ne[2] = { 16, 2 };
  struct { uint32_t type, n_dims; int64_t ne0; uint64_t bytes; HzGgufError code; } bad[] = {
    { HZ_TYPE_F32, 2, 16, 64, HZ_GGUF_ERROR_INVALID },       /* wrong byte count */
    { HZ_TYPE_Q8_0, 2, 16, 34, HZ_GGUF_ERROR_INVALID },      /* ne0 not a block multiple */
    { 63, 2, 16, 128, HZ_GGUF_ERROR_UNKNOWN_TYPE },          /* unknown type */
    { HZ_TYPE_F32, 0, 16, 128, HZ_GGUF_ERROR_INVALID },      /* n_dims */
    { HZ_TYPE_F32, 5, 16, 128, HZ_GGUF_ERROR_INVALID },
    { HZ_TYPE_F32, 2, -16, 128, HZ_GGUF_ERROR_INVALID },     /* negative */
  };
  for (guint k = 0; k < G_N_ELEMENTS (bad); k++)
    {
      g_autoptr (GError) error = NULL;
      ne[0] = bad[k].ne0;
      g_assert_false (hz_gguf_writer_add_tensor (w, "t", bad[k].type, bad[k].n_dims, ne,
                                                 data, bad[k].bytes, FALSE, &error));
      g_assert_error (error, HZ_GGUF_ERROR, bad[k].code);
      g_assert_nonnull (strstr (error->message, "tensor 't'"));
    }
  g_autoptr (GError) error = NULL;
  ne[0] = 16;
  g_assert_true (hz_gguf_writer_add_tensor (w, "t", HZ_TYPE_F32, 2, ne, data, 128, TRUE, &error));
  g_assert_false (hz_gguf_writer_add_tensor (w, "t", HZ_TYPE_F32, 2, ne, data, 128, TRUE, &error));
  g_assert_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_INVALID);
  g_clear_error (&error);

  hz_gguf_writer_set_u32 (w, "general.alignment", 48);
  g_autofree char *path = tmp_path ("bad-align.gguf");
  g_assert_false (hz_gguf_writer_write_file (w, path, &error));
  g_assert_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_INVALID);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  g_clear_error (&error);

  hz_gguf_writer_set_u32 (w, "general.alignment", 32);
  g_autofree char *nodir = tmp_path ("no/such/dir.gguf");
  g_assert_false (hz_gguf_writer_write_file (w, nodir, &error));
  g_assert_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_IO);
}

/* ---- hostile input ---- */

/* A small valid file: several value types, a nested array, two tensors (alignment 32). */
static GByteArray *
make_small_valid (uint64_t *data_end)
{
  GByteArray *b = b_header (3, 2, 5);
  b_kv (b, "general.architecture", HZ_GGUF_TYPE_STRING); b_str (b, "llama");
  b_kv (b, "general.alignment", HZ_GGUF_TYPE_UINT32); b_u32 (b, 32);
  b_kv (b, "tok", HZ_GGUF_TYPE_ARRAY); b_u32 (b, HZ_GGUF_TYPE_STRING); b_u64 (b, 2);
  b_str (b, "ab"); b_str (b, "c");
  b_kv (b, "nest", HZ_GGUF_TYPE_ARRAY); b_u32 (b, HZ_GGUF_TYPE_ARRAY); b_u64 (b, 1);
  b_u32 (b, HZ_GGUF_TYPE_INT16); b_u64 (b, 1); b_u16 (b, 7);
  b_kv (b, "flag", HZ_GGUF_TYPE_BOOL); b_u8 (b, 1);
  int64_t ne1[1] = { 4 }, ne2[2] = { 32, 1 };
  b_tensor (b, "a", 1, ne1, HZ_TYPE_F32, 0);
  b_tensor (b, "b", 2, ne2, HZ_TYPE_Q8_0, 32);
  b_pad (b, 32);
  for (int k = 0; k < 16; k++)
    b_u8 (b, k);
  b_pad (b, 32);
  b_zeros (b, 34);
  *data_end = b->len;
  b_pad (b, 32);
  return b;
}

/* Writing over something that is not a regular file (here a FIFO; /dev/full as root was
 * replaced by a regular file) fails cleanly and leaves it as it was. */
static void
test_writer_not_regular (void)
{
  g_autofree char *fifo = tmp_path ("fifo.gguf");
  g_autofree char *sub = tmp_path ("a-directory.gguf");
  g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
  g_autoptr (GError) error = NULL;
  GStatBuf st;

  hz_gguf_writer_set_str (w, "general.architecture", "llama");
  g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
  g_assert_false (hz_gguf_writer_write_file (w, fifo, &error));
  g_assert_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_IO);
  g_assert_nonnull (strstr (error->message, "not a regular file"));
  g_clear_error (&error);
  g_assert_cmpint (g_lstat (fifo, &st), ==, 0);
  g_assert_true (S_ISFIFO (st.st_mode));

  g_assert_cmpint (g_mkdir (sub, 0700), ==, 0);
  g_assert_false (hz_gguf_writer_write_file (w, sub, &error));
  g_assert_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_IO);
  g_clear_error (&error);
  g_assert_true (g_file_test (sub, G_FILE_TEST_IS_DIR));

  /* nothing else was left in the directory */
  {
    g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
    const char *e;
    while (d && (e = g_dir_read_name (d)))
      g_assert_false (g_str_has_prefix (e, "fifo.gguf.") || g_str_has_prefix (e, "a-directory.gguf."));
  }
  g_unlink (fifo);
  g_rmdir (sub);

  /* a regular file is replaced as before */
  g_autofree char *reg = tmp_path ("regular.gguf");
  g_assert_true (g_file_set_contents (reg, "old", 3, NULL));
  g_assert_true (hz_gguf_writer_write_file (w, reg, &error));
  g_assert_no_error (error);
  g_autoptr (HzGguf) g = hz_gguf_open (reg, &error);
  g_assert_no_error (error);
  g_assert_nonnull (g);
  g_unlink (reg);
}

static void
test_truncation_every_byte (void)
{
  uint64_t data_end;
  g_autoptr (GByteArray) b = make_small_valid (&data_end);
  g_autoptr (GError) error = NULL;
  g_autoptr (HzGguf) full = open_bytes (b->data, b->len, &error);
  g_assert_no_error (error);
  g_assert_cmpint (hz_gguf_n_tensors (full), ==, 2);
  g_assert_cmpint (hz_gguf_n_kv (full), ==, 5);
  guint n_errors = 0;
  for (gsize len = 0; len < b->len; len++)
    {
      g_autoptr (GError) e = NULL;
      g_autoptr (HzGguf) g = open_bytes (b->data, len, &e);
      if (len < data_end)
        {
          g_assert_null (g);
          g_assert_nonnull (e);
          g_assert_true (e->domain == HZ_GGUF_ERROR);
          g_assert_true (e->code == HZ_GGUF_ERROR_TRUNCATED || e->code == HZ_GGUF_ERROR_OVERFLOW ||
                         e->code == HZ_GGUF_ERROR_OUT_OF_BOUNDS);
          n_errors++;
        }
      else /* only the padding after the last tensor is missing */
        {
          g_assert_no_error (e);
          g_assert_nonnull (g);
        }
    }
  g_assert_cmpuint (n_errors, ==, data_end);
  /* The precise message for data cut short: as a person would say it, with what is
   * missing (issue 20) */
  g_autoptr (GByteArray) cut = g_byte_array_new ();
  g_byte_array_append (cut, b->data, data_end - 1);
  g_autofree char *want = g_strdup_printf (
    "The file is incomplete: it ends after %u bytes, in tensor 'b': its data [offset 32, 34 "
    "bytes) runs to byte %u; the tensors need %u bytes (1 are missing)",
    (guint) data_end - 1, (guint) data_end, (guint) data_end);
  expect_error (g_steal_pointer (&cut), HZ_GGUF_ERROR_TRUNCATED, want);
}

static void
test_bad_magic_version (void)
{
  GByteArray *b = b_header (3, 0, 0);
  memcpy (b->data, "GGML", 4);
  expect_error (b, HZ_GGUF_ERROR_BAD_MAGIC, "not a GGUF file");
  expect_error (b_header (1, 0, 0), HZ_GGUF_ERROR_VERSION, "version 1");
  expect_error (b_header (4, 0, 0), HZ_GGUF_ERROR_VERSION, "version 4");
  expect_error (b_header (GUINT32_SWAP_LE_BE (3), 0, 0), HZ_GGUF_ERROR_VERSION, "big-endian");
  GByteArray *tiny = g_byte_array_new ();
  g_byte_array_append (tiny, (const guint8 *) "GG", 2);
  expect_error (tiny, HZ_GGUF_ERROR_TRUNCATED, "magic");
  expect_error (g_byte_array_new (), HZ_GGUF_ERROR_TRUNCATED,
                "The file is incomplete: it ends after 0 bytes, in header: magic");
  /* v2 has the same layout for little-endian files */
  g_autoptr (GByteArray) v2 = b_header (2, 0, 0);
  g_autoptr (GError) error = NULL;
  g_autoptr (HzGguf) g = open_bytes (v2->data, v2->len, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hz_gguf_version (g), ==, 2);
}

static void
test_absurd_counts (void)
{
  expect_error (b_header (3, 0, G_MAXUINT64), HZ_GGUF_ERROR_OVERFLOW, "key/value count");
  expect_error (b_header (3, G_MAXUINT64 / 2, 0), HZ_GGUF_ERROR_OVERFLOW, "tensor count");
  expect_error (b_header (3, 1000000, 0), HZ_GGUF_ERROR_OVERFLOW, "tensor count 1000000");
  /* the offsets named are those of the count fields: tensor count at 8, n_kv at 16 */
  expect_error (b_header (3, 48, 0), HZ_GGUF_ERROR_OVERFLOW, "tensor count 48 at offset 8 ");
  expect_error (b_header (3, 0, 1000), HZ_GGUF_ERROR_OVERFLOW, "key/value count 1000 at offset 16 ");
  {
    GByteArray *t = b_header (3, 0, 2);   /* 2 * 13 bytes needed, 20 left after the header */
    b_zeros (t, 20);
    expect_error (t, HZ_GGUF_ERROR_TRUNCATED,
                  "key/value count 2 at offset 16 needs at least 26 bytes but only 20 are left "
                  "after offset 24");
  }

  GByteArray *b = b_header (3, 0, 1);
  b_u64 (b, G_MAXUINT64);  /* key length */
  b_zeros (b, 16);
  expect_error (b, HZ_GGUF_ERROR_OVERFLOW, "key #0: name length");

  b = b_header (3, 0, 1);
  b_kv (b, "s", HZ_GGUF_TYPE_STRING); b_u64 (b, G_MAXUINT64 - 3);
  expect_error (b, HZ_GGUF_ERROR_OVERFLOW, "key 's': string length");

  b = b_header (3, 0, 1);
  b_kv (b, "s", HZ_GGUF_TYPE_STRING); b_u64 (b, 5); b_zeros (b, 4);
  expect_error (b, HZ_GGUF_ERROR_TRUNCATED, "key 's': string length 5");

  b = b_header (3, 0, 1);  /* n * 8 overflows 64 bits */
  b_kv (b, "a", HZ_GGUF_TYPE_ARRAY); b_u32 (b, HZ_GGUF_TYPE_UINT64);
  b_u64 (b, G_GUINT64_CONSTANT (1) << 61); b_zeros (b, 8);
  expect_error (b, HZ_GGUF_ERROR_OVERFLOW, "key 'a': array length 2305843009213693952");

  b = b_header (3, 0, 1);  /* strings: at least 8 bytes each */
  b_kv (b, "a", HZ_GGUF_TYPE_ARRAY); b_u32 (b, HZ_GGUF_TYPE_STRING); b_u64 (b, 1u << 30);
  expect_error (b, HZ_GGUF_ERROR_OVERFLOW, "array length");

  b = b_header (3, 0, 1);  /* nested arrays: at least 12 bytes each */
  b_kv (b, "a", HZ_GGUF_TYPE_ARRAY); b_u32 (b, HZ_GGUF_TYPE_ARRAY); b_u64 (b, 4);
  b_zeros (b, 40);
  expect_error (b, HZ_GGUF_ERROR_TRUNCATED, "array length 4");
}

static void
test_bad_values (void)
{
  GByteArray *b = b_header (3, 0, 1);
  b_kv (b, "x", 13); b_u32 (b, 0);
  expect_error (b, HZ_GGUF_ERROR_UNKNOWN_TYPE, "key 'x': unknown value type 13");

  b = b_header (3, 0, 1);
  b_kv (b, "x", HZ_GGUF_TYPE_ARRAY); b_u32 (b, 99); b_u64 (b, 0);
  expect_error (b, HZ_GGUF_ERROR_UNKNOWN_TYPE, "unknown array element type 99");

  b = b_header (3, 0, 1);
  b_kv (b, "x", HZ_GGUF_TYPE_BOOL); b_u8 (b, 2);
  expect_error (b, HZ_GGUF_ERROR_INVALID, "neither 0 nor 1");

  b = b_header (3, 0, 1);  /* nested 9 levels deep */
  b_kv (b, "deep", HZ_GGUF_TYPE_ARRAY);
  for (int k = 0; k < 9; k++)
    {
      b_u32 (b, HZ_GGUF_TYPE_ARRAY);
      b_u64 (b, 1);
    }
  b_zeros (b, 24);
  expect_error (b, HZ_GGUF_ERROR_INVALID, "nested deeper than 8");

  b = b_header (3, 0, 2);
  b_kv (b, "dup", HZ_GGUF_TYPE_UINT8); b_u8 (b, 1);
  b_kv (b, "dup", HZ_GGUF_TYPE_UINT8); b_u8 (b, 1);
  expect_error (b, HZ_GGUF_ERROR_INVALID, "key 'dup': duplicate key (keys #0 and #1)");

  b = b_header (3, 0, 1);
  b_kv (b, "general.alignment", HZ_GGUF_TYPE_UINT32); b_u32 (b, 48);
  expect_error (b, HZ_GGUF_ERROR_INVALID, "not a power of two");
  b = b_header (3, 0, 1);
  b_kv (b, "general.alignment", HZ_GGUF_TYPE_UINT32); b_u32 (b, 0);
  expect_error (b, HZ_GGUF_ERROR_INVALID, "not a power of two");
  b = b_header (3, 0, 1);
  b_kv (b, "general.alignment", HZ_GGUF_TYPE_STRING); b_str (b, "32");
  expect_error (b, HZ_GGUF_ERROR_INVALID, "must be an integer");
}

/* One tensor `t` with the given info, followed by `data_len` bytes of data. */
static GByteArray *
one_tensor (uint32_t n_dims, const int64_t *ne, uint32_t type, uint64_t offset,
            guint data_len)
{
  GByteArray *b = b_header (3, 1, 0);
  b_tensor (b, "blk.0.ffn_down.weight", n_dims, ne, type, offset);
  b_pad (b, 32);
  b_zeros (b, data_len);
  return b;
}

static void
test_bad_tensors (void)
{
  int64_t ne[5] = { 32, 2, 1, 1, 1 };
  /* valid baseline */
  g_autoptr (GByteArray) ok = one_tensor (2, ne, HZ_TYPE_F32, 0, 256);
  g_autoptr (GError) error = NULL;
  g_autoptr (HzGguf) g = open_bytes (ok->data, ok->len, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hz_gguf_find_tensor (g, "blk.0.ffn_down.weight")->n_bytes, ==, 256);

  expect_error (one_tensor (2, ne, HZ_TYPE_F32, 0, 255), HZ_GGUF_ERROR_TRUNCATED,
                "The file is incomplete: it ends after ");
  expect_error (one_tensor (2, ne, HZ_TYPE_F32, 0, 255), HZ_GGUF_ERROR_TRUNCATED,
                ", in tensor 'blk.0.ffn_down.weight': its data [offset 0, 256 bytes) runs to "
                "byte ");
  expect_error (one_tensor (2, ne, HZ_TYPE_F32, G_MAXUINT64 - 31, 256),
                HZ_GGUF_ERROR_OUT_OF_BOUNDS, "extends past end of file");
  expect_error (one_tensor (2, ne, HZ_TYPE_F32, 16, 512), HZ_GGUF_ERROR_OUT_OF_BOUNDS,
                "data offset 16 is not a multiple of the alignment 32");
  expect_error (one_tensor (2, ne, 63, 0, 256), HZ_GGUF_ERROR_UNKNOWN_TYPE,
                "tensor 'blk.0.ffn_down.weight': unknown ggml type 63");
  expect_error (one_tensor (2, ne, G_MAXUINT32, 0, 256), HZ_GGUF_ERROR_UNKNOWN_TYPE,
                "unknown ggml type");
  expect_error (one_tensor (0, ne, HZ_TYPE_F32, 0, 256), HZ_GGUF_ERROR_INVALID,
                "n_dims 0 at offset");
  expect_error (one_tensor (5, ne, HZ_TYPE_F32, 0, 256), HZ_GGUF_ERROR_INVALID, "n_dims 5");
  int64_t odd[2] = { 33, 2 };
  g_autofree char *odd_msg =
    g_strdup_printf ("tensor 'blk.0.ffn_down.weight': row length ne[0] = 33 is not a multiple "
                     "of %s's block size 32", hz_quant_traits (HZ_TYPE_Q4_0)->name);
  expect_error (one_tensor (2, odd, HZ_TYPE_Q4_0, 0, 256), HZ_GGUF_ERROR_INVALID, odd_msg);
  int64_t neg[2] = { 32, -1 };
  expect_error (one_tensor (2, neg, HZ_TYPE_F32, 0, 256), HZ_GGUF_ERROR_INVALID,
                "ne[1] = -1 is not positive");
  int64_t zero[2] = { 0, 2 };
  expect_error (one_tensor (2, zero, HZ_TYPE_F32, 0, 256), HZ_GGUF_ERROR_INVALID,
                "ne[0] = 0 is not positive");
  int64_t huge[4] = { G_MAXINT64 / 2, 4, 1, 1 };
  expect_error (one_tensor (4, huge, HZ_TYPE_F32, 0, 256), HZ_GGUF_ERROR_OVERFLOW,
                "overflows");
  int64_t big[1] = { G_MAXINT64 };  /* elements fit, bytes (x4) do not */
  expect_error (one_tensor (1, big, HZ_TYPE_F32, 0, 256), HZ_GGUF_ERROR_OVERFLOW,
                "byte size");

  /* duplicate names and overlapping data */
  int64_t ne1[1] = { 8 };
  GByteArray *b = b_header (3, 2, 0);
  b_tensor (b, "t", 1, ne1, HZ_TYPE_F32, 0);
  b_tensor (b, "t", 1, ne1, HZ_TYPE_F32, 32);
  b_pad (b, 32); b_zeros (b, 64);
  expect_error (b, HZ_GGUF_ERROR_INVALID, "tensor 't': duplicate tensor name");
  b = b_header (3, 2, 0);
  b_tensor (b, "first", 1, ne1, HZ_TYPE_F32, 0);
  int64_t ne16[1] = { 16 };
  b_tensor (b, "second", 1, ne16, HZ_TYPE_F32, 0);
  b_pad (b, 32); b_zeros (b, 64);
  expect_error (b, HZ_GGUF_ERROR_OUT_OF_BOUNDS, "overlaps tensor");

  /* alignment 64 makes offset 32 misaligned */
  b = b_header (3, 1, 1);
  b_kv (b, "general.alignment", HZ_GGUF_TYPE_UINT32); b_u32 (b, 64);
  b_tensor (b, "t", 1, ne1, HZ_TYPE_F32, 32);
  b_pad (b, 64); b_zeros (b, 128);
  expect_error (b, HZ_GGUF_ERROR_OUT_OF_BOUNDS, "not a multiple of the alignment 64");
}

static void
test_open_errors (void)
{
  g_autoptr (GError) error = NULL;
  g_assert_null (hz_gguf_open ("/nonexistent/model.gguf", &error));
  g_assert_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_IO);
  g_assert_nonnull (strstr (error->message, "No such file"));
  g_clear_error (&error);
  g_assert_null (hz_gguf_open ("/", &error));
  g_assert_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_IO);
  g_clear_error (&error);
  g_autofree char *empty = tmp_path ("empty.gguf");
  g_assert_true (g_file_set_contents (empty, "", 0, NULL));
  g_assert_null (hz_gguf_open (empty, &error));
  g_assert_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_TRUNCATED);
}

/* ---- real files ---- */

static void
test_shared_stories260k (void)
{
  g_autofree char *path = hz_test_shared_path ("models/stories260K.gguf");
  if (!path)
    return;
  g_autoptr (GError) error = NULL;
  g_autoptr (HzGguf) g = hz_gguf_open (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hz_gguf_version (g), ==, 3);
  g_assert_cmpint (hz_gguf_n_tensors (g), ==, 48);
  g_autofree char *arch = hz_gguf_get_str (g, "general.architecture");
  g_assert_cmpstr (arch, ==, "llama");
  g_autofree char *model = hz_gguf_get_str (g, "tokenizer.ggml.model");
  g_assert_cmpstr (model, ==, "llama");
  uint32_t u;
  g_assert_true (hz_gguf_get_u32 (g, "tokenizer.ggml.bos_token_id", &u));
  g_assert_cmpuint (u, ==, 1);
  g_assert_true (hz_gguf_get_u32 (g, "llama.context_length", &u));
  g_assert_cmpuint (u, ==, 128);
  int64_t tok = hz_gguf_find_key (g, "tokenizer.ggml.tokens");
  g_assert_cmpuint (hz_gguf_arr_n (g, tok), ==, 512);
  HzGgufStr s0 = hz_gguf_arr_str (g, tok, 0);
  g_assert_cmpuint (s0.len, ==, 5);
  g_assert_true (memcmp (s0.ptr, "<unk>", 5) == 0);
  uint64_t total = 0;
  for (int64_t i = 0; i < hz_gguf_n_tensors (g); i++)
    {
      const HzGgufTensor *t = hz_gguf_tensor (g, i);
      g_assert_cmpuint (t->type, ==, HZ_TYPE_F32);
      total += t->n_bytes;
    }
  g_assert_cmpuint (total, <=, hz_gguf_file_size (g) - hz_gguf_data_offset (g));
  const HzGgufTensor *emb = hz_gguf_find_tensor (g, "token_embd.weight");
  g_assert_nonnull (emb);
  g_assert_cmpuint (emb->n_dims, ==, 2);
  g_assert_cmpint (emb->ne[0], ==, 64);
  g_assert_cmpint (emb->ne[1], ==, 512);
  g_assert_cmpuint (emb->n_bytes, ==, 64 * 512 * 4);
  /* output.weight is a copy of token_embd.weight (models/README.md) */
  const HzGgufTensor *out = hz_gguf_find_tensor (g, "output.weight");
  g_assert_nonnull (out);
  g_assert_true (memcmp (out->data, emb->data, emb->n_bytes) == 0);
  const HzGgufTensor *down = hz_gguf_find_tensor (g, "blk.0.ffn_down.weight");
  g_assert_nonnull (down);
  g_assert_cmpint (down->ne[0], ==, 172);
  g_assert_cmpint (down->ne[1], ==, 64);
}

static void
test_shared_tokenizer_vocabs (void)
{
  g_autofree char *dir = hz_test_shared_path ("golden/tokenizer");
  if (!dir)
    return;
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  g_assert_nonnull (d);
  guint n = 0;
  const char *name;
  while ((name = g_dir_read_name (d)))
    {
      if (!g_str_has_suffix (name, ".gguf"))
        continue;
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_autoptr (GError) error = NULL;
      g_autoptr (HzGguf) g = hz_gguf_open (path, &error);
      if (!g)
        g_error ("%s: %s", name, error->message);
      g_assert_cmpint (hz_gguf_n_tensors (g), ==, 0);
      int64_t tok = hz_gguf_find_key (g, "tokenizer.ggml.tokens");
      g_assert_cmpint (tok, >=, 0);
      g_assert_cmpint (hz_gguf_arr_type (g, tok), ==, HZ_GGUF_TYPE_STRING);
      uint64_t n_vocab = hz_gguf_arr_n (g, tok);
      g_assert_cmpuint (n_vocab, >=, 30000);
      HzGgufStr last = hz_gguf_arr_str (g, tok, n_vocab - 1);
      g_assert_nonnull (last.ptr);
      g_autofree char *model = hz_gguf_get_str (g, "tokenizer.ggml.model");
      g_assert_nonnull (model);
      g_test_message ("%s: GGUF v%u, %" G_GINT64_FORMAT " keys, %" G_GUINT64_FORMAT
                      " tokens, model %s", name, hz_gguf_version (g), hz_gguf_n_kv (g),
                      n_vocab, model);
      n++;
    }
  g_assert_cmpuint (n, >=, 6);
}

static void
test_shared_stories_distill (void)
{
  g_autofree char *dir = hz_test_shared_path ("models/stories-distill");
  if (!dir)
    return;
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  g_assert_nonnull (d);
  guint n_ok = 0, n_unknown = 0;
  gboolean f32_ok = FALSE, q8_0_ok = FALSE;
  const char *name;
  while ((name = g_dir_read_name (d)))
    {
      if (!g_str_has_suffix (name, ".gguf"))
        continue;
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_autoptr (GError) error = NULL;
      g_autoptr (HzGguf) g = hz_gguf_open (path, &error);
      if (!g)
        {
          /* Only a format that the quant table lacks (yet) is an acceptable failure. */
          g_assert_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_UNKNOWN_TYPE);
          const char *at = strstr (error->message, "unknown ggml type ");
          g_assert_nonnull (at);
          guint64 type = g_ascii_strtoull (at + strlen ("unknown ggml type "), NULL, 10);
          g_assert_null (hz_quant_traits ((uint32_t) type));
          g_test_message ("%s: %s (format not in the quant table)", name, error->message);
          n_unknown++;
          continue;
        }
      g_assert_cmpint (hz_gguf_n_tensors (g), >, 0);
      const HzGgufTensor *emb = hz_gguf_find_tensor (g, "token_embd.weight");
      g_assert_nonnull (emb);
      g_assert_cmpint (emb->ne[0], ==, 256);
      g_assert_cmpint (emb->ne[1], ==, 512);
      uint64_t total = 0;
      for (int64_t i = 0; i < hz_gguf_n_tensors (g); i++)
        {
          const HzGgufTensor *t = hz_gguf_tensor (g, i);
          g_assert_nonnull (hz_quant_traits (t->type));
          total += t->n_bytes;
        }
      g_assert_cmpuint (total, <=, hz_gguf_file_size (g) - hz_gguf_data_offset (g));
      f32_ok |= strcmp (name, "stories-distill-F32.gguf") == 0;
      q8_0_ok |= strcmp (name, "stories-distill-Q8_0.gguf") == 0;
      n_ok++;
    }
  g_test_message ("stories-distill: %u files open, %u use formats not in the table",
                  n_ok, n_unknown);
  /* F32 and Q8_0 use only base formats (F32, Q8_0); the quantized mixes may add others. */
  g_assert_true (f32_ok);
  g_assert_true (q8_0_ok);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/gguf/roundtrip/values", test_roundtrip_scalars_and_arrays);
  g_test_add_func ("/gguf/roundtrip/nested", test_roundtrip_nested);
  g_test_add_func ("/gguf/roundtrip/tensors", test_roundtrip_tensors);
  g_test_add_func ("/gguf/writer/rejects", test_writer_rejects);
  g_test_add_func ("/gguf/writer/not-regular", test_writer_not_regular);
  g_test_add_func ("/gguf/bad/truncation", test_truncation_every_byte);
  g_test_add_func ("/gguf/bad/magic-version", test_bad_magic_version);
  g_test_add_func ("/gguf/bad/absurd-counts", test_absurd_counts);
  g_test_add_func ("/gguf/bad/values", test_bad_values);
  g_test_add_func ("/gguf/bad/tensors", test_bad_tensors);
  g_test_add_func ("/gguf/bad/open", test_open_errors);
  g_test_add_func ("/gguf/shared/stories260K", test_shared_stories260k);
  g_test_add_func ("/gguf/shared/tokenizer-vocabs", test_shared_tokenizer_vocabs);
  g_test_add_func ("/gguf/shared/stories-distill", test_shared_stories_distill);
  int status = g_test_run ();
  if (dir)
    {
      g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
      const char *name;
      while (d && (name = g_dir_read_name (d)))
        {
          g_autofree char *path = g_build_filename (dir, name, NULL);
          g_unlink (path);
        }
      g_rmdir (dir);
      g_free (dir);
    }
  return status;
}
