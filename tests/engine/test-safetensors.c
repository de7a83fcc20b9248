/* safetensors reader/writer: the wire-format vector of issue 8, round trips, and hostile
 * files (truncated, overlapping, holes, bad dtype, absurd header length). */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include "safetensors.h"

static GBytes *
make_attn0 (void)
{
  g_autoptr (HzSafetensorsWriter) w = hz_safetensors_writer_new ();
  float v[6] = { 0, 1, 2, 3, 4, 5 };
  int64_t shape[3] = { 1, 2, 3 };
  g_assert_true (hz_safetensors_writer_add (w, "attn.0", HZ_ST_F32, 3, shape, v, sizeof v, NULL));
  return hz_safetensors_writer_to_bytes (w);
}

static void
test_vector (void)
{
  g_autoptr (GBytes) b = make_attn0 ();
  gsize n;
  const guint8 *d = g_bytes_get_data (b, &n);
  const char *want = "{\"attn.0\":{\"dtype\":\"F32\",\"shape\":[1,2,3],\"data_offsets\":[0,24]}}";
  g_assert_cmpuint (d[0], ==, 64);
  for (int i = 1; i < 8; i++)
    g_assert_cmpuint (d[i], ==, 0);
  g_assert_cmpuint (n, ==, 8 + 64 + 24);
  g_assert_cmpint (memcmp (d + 8, want, strlen (want)), ==, 0);
  for (gsize i = 8 + strlen (want); i < 8 + 64; i++)
    g_assert_cmpuint (d[i], ==, ' ');
  float f[6];
  memcpy (f, d + 72, 24);
  for (int i = 0; i < 6; i++)
    g_assert_cmpfloat (f[i], ==, (float) i);
}

static void
test_round_trip (void)
{
  g_autoptr (HzSafetensorsWriter) w = hz_safetensors_writer_new ();
  guint16 a[8];
  for (int i = 0; i < 8; i++)
    a[i] = (guint16) (0x3f80 + i);
  int64_t sa[2] = { 2, 4 }, sb[1] = { 3 }, s0[1] = { 0 };
  gint64 bv[3] = { -1, 0, G_MAXINT64 };
  g_assert_true (hz_safetensors_writer_add (w, "lora_A", HZ_ST_BF16, 2, sa, a, sizeof a, NULL));
  g_assert_true (hz_safetensors_writer_add (w, "ids", HZ_ST_I64, 1, sb, bv, sizeof bv, NULL));
  g_assert_true (hz_safetensors_writer_add (w, "empty", HZ_ST_F32, 1, s0, NULL, 0, NULL));
  hz_safetensors_writer_set_metadata (w, "round", "7");
  hz_safetensors_writer_set_metadata (w, "base_sha256", "abc");
  hz_safetensors_writer_set_metadata (w, "round", "8");
  g_autoptr (GError) err = NULL;
  /* duplicate names and size mismatches are refused */
  g_assert_false (hz_safetensors_writer_add (w, "ids", HZ_ST_I64, 1, sb, bv, sizeof bv, &err));
  g_assert_error (err, HZ_SAFETENSORS_ERROR, HZ_SAFETENSORS_ERROR_LAYOUT);
  g_clear_error (&err);
  g_assert_false (hz_safetensors_writer_add (w, "x", HZ_ST_F32, 1, sb, bv, 8, &err));
  g_clear_error (&err);

  g_autofree char *dir = g_dir_make_tmp ("hz-st-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "a.safetensors", NULL);
  g_assert_true (hz_safetensors_writer_write_file (w, path, &err));
  g_assert_no_error (err);
  g_autoptr (HzSafetensors) st = hz_safetensors_open (path, &err);
  g_assert_no_error (err);
  g_assert_cmpuint (hz_safetensors_n_tensors (st), ==, 3);
  g_assert_cmpuint (hz_safetensors_header_size (st) % 8, ==, 0);
  const HzSafetensor *t = hz_safetensors_find (st, "lora_A");
  g_assert_nonnull (t);
  g_assert_cmpint (t->dtype, ==, HZ_ST_BF16);
  g_assert_cmpuint (t->n_dims, ==, 2);
  g_assert_cmpint (t->shape[1], ==, 4);
  g_assert_cmpmem (t->data, t->n_bytes, a, sizeof a);
  t = hz_safetensors_find (st, "ids");
  g_assert_cmpmem (t->data, t->n_bytes, bv, sizeof bv);
  g_assert_cmpstr (hz_safetensors_metadata (st, "round"), ==, "8");
  g_assert_cmpstr (hz_safetensors_metadata (st, "base_sha256"), ==, "abc");
  g_assert_null (hz_safetensors_metadata (st, "nope"));
  g_unlink (path);
  g_rmdir (dir);
}

static GBytes *
image (const char *header, gsize data_bytes)
{
  gsize h = strlen (header);
  GByteArray *a = g_byte_array_new ();
  guint8 len8[8] = { 0 };
  for (int i = 0; i < 8; i++)
    len8[i] = (guint8) ((guint64) h >> (8 * i));
  g_byte_array_append (a, len8, 8);
  g_byte_array_append (a, (const guint8 *) header, h);
  for (gsize i = 0; i < data_bytes; i++)
    g_byte_array_append (a, (const guint8 *) "\x01", 1);
  return g_byte_array_free_to_bytes (a);
}

static void
expect_error (const char *header, gsize data_bytes, int code)
{
  g_autoptr (GBytes) b = image (header, data_bytes);
  g_autoptr (GError) err = NULL;
  HzSafetensors *st = hz_safetensors_new_from_bytes (b, &err);
  if (st)
    g_error ("accepted hostile header %s", header);
  g_assert_error (err, HZ_SAFETENSORS_ERROR, code);
  /* hostile headers may hold invalid UTF-8: escape them for the TAP log */
  g_autofree char *shown = g_strescape (header, NULL);
  g_test_message ("%s -> %s", shown, err->message);
}

static void
test_hostile (void)
{
  expect_error ("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 4,
                HZ_SAFETENSORS_ERROR_LAYOUT);                   /* data past the end */
  expect_error ("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8,
                HZ_SAFETENSORS_ERROR_LAYOUT);                   /* overlap */
  expect_error ("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8,
                HZ_SAFETENSORS_ERROR_LAYOUT);                   /* hole */
  expect_error ("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 8,
                HZ_SAFETENSORS_ERROR_LAYOUT);                   /* trailing bytes */
  expect_error ("{\"a\":{\"dtype\":\"F33\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
                HZ_SAFETENSORS_ERROR_DTYPE);
  expect_error ("{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4,
                HZ_SAFETENSORS_ERROR_LAYOUT);
  expect_error ("{\"a\":{\"dtype\":\"F32\",\"shape\":[4611686018427387904,8],"
                "\"data_offsets\":[0,4]}}", 4, HZ_SAFETENSORS_ERROR_LAYOUT);  /* overflow */
  expect_error ("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", 4,
                HZ_SAFETENSORS_ERROR_LAYOUT);
  expect_error ("{\"a\":[1,2]}", 0, HZ_SAFETENSORS_ERROR_HEADER);
  expect_error ("[1,2]", 0, HZ_SAFETENSORS_ERROR_HEADER);
  expect_error ("{\"a\":", 0, HZ_SAFETENSORS_ERROR_HEADER);
  expect_error ("{\"__metadata__\":{\"k\":1}}", 0, HZ_SAFETENSORS_ERROR_HEADER);
  expect_error ("{\"\xff\":1}", 0, HZ_SAFETENSORS_ERROR_HEADER);

  /* truncation at every byte of a valid file */
  g_autoptr (GBytes) good = make_attn0 ();
  gsize n;
  const guint8 *d = g_bytes_get_data (good, &n);
  for (gsize cut = 0; cut < n; cut++)
    {
      g_autoptr (GBytes) b = g_bytes_new (d, cut);
      g_autoptr (GError) err = NULL;
      HzSafetensors *st = hz_safetensors_new_from_bytes (b, &err);
      g_assert_null (st);
      g_assert_nonnull (err);
    }
  /* a header length that claims more than the file */
  guint8 big[16] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, '{', '}' };
  g_autoptr (GBytes) b = g_bytes_new (big, sizeof big);
  g_autoptr (GError) err = NULL;
  g_assert_null (hz_safetensors_new_from_bytes (b, &err));
  g_assert_error (err, HZ_SAFETENSORS_ERROR, HZ_SAFETENSORS_ERROR_TRUNCATED);
}

/* Opening: a real file maps; a FIFO (it used to block until a writer came), a directory
 * and a missing path are refused with HZ_SAFETENSORS_ERROR_IO naming the path. */
static void
test_open_kinds (void)
{
  g_autofree char *dir = g_dir_make_tmp ("hz-st-XXXXXX", NULL);
  g_autofree char *file = g_build_filename (dir, "a.safetensors", NULL);
  g_autofree char *fifo = g_build_filename (dir, "fifo.safetensors", NULL);
  g_autofree char *missing = g_build_filename (dir, "missing.safetensors", NULL);
  g_autoptr (GBytes) good = make_attn0 ();
  gsize n;
  const char *d = g_bytes_get_data (good, &n);
  g_assert_true (g_file_set_contents (file, d, (gssize) n, NULL));
  g_autoptr (GError) err = NULL;
  HzSafetensors *st = hz_safetensors_open (file, &err);
  g_assert_no_error (err);
  g_assert_nonnull (st);
  hz_safetensors_free (st);
  g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
  const char *bad[] = { fifo, dir, missing };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_assert_null (hz_safetensors_open (bad[i], &err));
      g_assert_error (err, HZ_SAFETENSORS_ERROR, HZ_SAFETENSORS_ERROR_IO);
      g_assert_nonnull (strstr (err->message, bad[i]));
      g_test_message ("%s", err->message);
      g_clear_error (&err);
    }
  g_unlink (fifo);
  g_unlink (file);
  g_rmdir (dir);
}

/* Every error of hz_safetensors_open() starts with the file's path, and names the tensor
 * at fault where there is one. */
static void
test_open_names_file (void)
{
  g_autofree char *dir = g_dir_make_tmp ("hz-st-XXXXXX", NULL);
  g_autofree char *file = g_build_filename (dir, "bad.safetensors", NULL);
  g_autofree char *prefix = g_strdup_printf ("%s: ", file);
  g_autoptr (GBytes) good = make_attn0 ();
  gsize n;
  const char *d = g_bytes_get_data (good, &n);
  g_autofree char *copy = g_memdup2 (d, n);
  char *dt = memmem (copy, n, "F32", 3);   /* (the header length before it has NULs) */
  g_assert_nonnull (dt);
  dt[2] = '3';   /* "F33": unknown dtype of tensor attn.0 */
  struct { const char *data; gsize len; const char *needle; } cases[] = {
    { d, 0, "too short" },              /* empty */
    { d, n - 1, "attn.0" },             /* data cut: the tensor does not fit */
    { d, 20, "header length" },         /* header cut */
    { copy, n, "tensor 'attn.0': unsupported dtype 'F33'" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) err = NULL;
      g_assert_true (g_file_set_contents (file, cases[i].data, (gssize) cases[i].len, NULL));
      g_assert_null (hz_safetensors_open (file, &err));
      g_assert_nonnull (err);
      g_test_message ("%s", err->message);
      g_assert_true (g_str_has_prefix (err->message, prefix));
      g_assert_nonnull (strstr (err->message, cases[i].needle));
    }
  g_unlink (file);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/safetensors/issue8-vector", test_vector);
  g_test_add_func ("/safetensors/round-trip", test_round_trip);
  g_test_add_func ("/safetensors/hostile", test_hostile);
  g_test_add_func ("/safetensors/open-kinds", test_open_kinds);
  g_test_add_func ("/safetensors/open-names-file", test_open_names_file);
  return g_test_run ();
}
