/* tests/tools/test-hanzo-info.c — runs `hanzo info` (from $HZ_BUILD_DIR/tools/hanzo) on a
 * small GGUF written here with the engine's writer, on truncated copies of it, on a missing
 * file and with bad usage, checking stdout/stderr and the exit codes (0 / 1 / 2); and the
 * KV cache bytes it prints for a Gemma 3 model with sliding-window layers (the window
 * rule, worked out here from the metadata). */
#include <gio/gio.h>
#include <string.h>

#include "gguf.h"
#include "quant.h"

static char *tmp_dir;

typedef struct {
  int   status;
  char *out, *err;
} RunResult;

static void
run_result_clear (RunResult *r)
{
  g_free (r->out);
  g_free (r->err);
}

static char *
hanzo_path (void)
{
  const char *build = g_getenv ("HZ_BUILD_DIR");
  g_assert_nonnull (build);  /* set by meson test (tests/meson.build) */
  return g_build_filename (build, "tools", "hanzo", NULL);
}

/* Runs hanzo with the NULL-terminated arguments after argv[0]. */
static void
run_hanzo (RunResult *r, const char *const *args)
{
  g_autofree char *bin = hanzo_path ();
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_ptr_array_add (argv, bin);
  for (guint i = 0; args[i]; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (GSubprocess) p = g_subprocess_newv ((const char *const *) argv->pdata,
                                                 G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                 G_SUBPROCESS_FLAGS_STDERR_PIPE, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_communicate_utf8 (p, NULL, NULL, &r->out, &r->err, &error));
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (p));
  r->status = g_subprocess_get_exit_status (p);
}

static void
assert_contains (const char *hay, const char *needle)
{
  if (!strstr (hay, needle))
    g_error ("output lacks \"%s\":\n%s", needle, hay);
}

/* Writes the test model; returns its path and, in *data_end, where its last tensor ends. */
static char *
write_model (gsize *data_end)
{
  g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
  hz_gguf_writer_set_str (w, "general.architecture", "llama");
  hz_gguf_writer_set_u32 (w, "llama.context_length", 256);
  hz_gguf_writer_set_f32 (w, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
  hz_gguf_writer_set_bool (w, "tokenizer.ggml.add_bos_token", TRUE);
  const char *toks[12] = { "<unk>", "<s>", "</s>", "a", "b", "c", "d", "e", "f", "g", "h", "i" };
  hz_gguf_writer_set_str_arr (w, "tokenizer.ggml.tokens", toks, 12);
  float w32[64 * 2];
  for (guint i = 0; i < G_N_ELEMENTS (w32); i++)
    w32[i] = i * 0.5f;
  guint8 q8[2 * 34] = { 0 };
  int64_t ne_f[2] = { 64, 2 }, ne_q[2] = { 32, 2 };
  g_autoptr (GError) error = NULL;
  g_assert_true (hz_gguf_writer_add_tensor (w, "token_embd.weight", HZ_TYPE_F32, 2, ne_f, w32,
                                            sizeof w32, FALSE, &error));
  g_assert_true (hz_gguf_writer_add_tensor (w, "blk.0.attn_q.weight", HZ_TYPE_Q8_0, 2, ne_q,
                                            q8, sizeof q8, FALSE, &error));
  g_assert_no_error (error);
  char *path = g_build_filename (tmp_dir, "small.gguf", NULL);
  g_assert_true (hz_gguf_writer_write_file (w, path, &error));
  g_assert_no_error (error);
  g_autoptr (HzGguf) g = hz_gguf_open (path, &error);
  g_assert_no_error (error);
  const HzGgufTensor *last = hz_gguf_tensor (g, 1);
  *data_end = hz_gguf_data_offset (g) + last->offset + last->n_bytes;
  return path;
}

static void
test_info_ok (void)
{
  gsize data_end;
  g_autofree char *path = write_model (&data_end);
  RunResult r = { 0 };
  run_hanzo (&r, (const char *[]) { "info", path, NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpstr (r.err, ==, "");
  assert_contains (r.out, "GGUF version 3");
  assert_contains (r.out, "alignment 32");
  assert_contains (r.out, "Metadata: 5 keys");
  assert_contains (r.out, "general.architecture");
  assert_contains (r.out, "\"llama\"");
  assert_contains (r.out, "llama.attention.layer_norm_rms_epsilon");
  assert_contains (r.out, "1e-05");
  assert_contains (r.out, "string[12]");
  /* 8 elements by default, then the count of the rest */
  assert_contains (r.out, "[\"<unk>\", \"<s>\", \"</s>\", \"a\", \"b\", \"c\", \"d\", \"e\", ... 4 more]");
  assert_contains (r.out, "Tensors: 2");
  g_assert_true (g_regex_match_simple ("token_embd\\.weight +f32 +\\[64, 2\\] +512 +0\n",
                                       r.out, 0, 0));
  g_assert_true (g_regex_match_simple ("blk\\.0\\.attn_q\\.weight +q8_0 +\\[32, 2\\] +68 +512\n",
                                       r.out, 0, 0));
  assert_contains (r.out, "Total: 2 tensors, 192 elements, 580 bytes");
  run_result_clear (&r);

  run_hanzo (&r, (const char *[]) { "info", "--max-elems", "2", path, NULL });
  g_assert_cmpint (r.status, ==, 0);
  assert_contains (r.out, "[\"<unk>\", \"<s>\", ... 10 more]");
  run_result_clear (&r);
}

static void
test_info_bad_files (void)
{
  gsize data_end;
  g_autofree char *path = write_model (&data_end);
  g_autofree char *contents = NULL;
  gsize len;
  g_assert_true (g_file_get_contents (path, &contents, &len, NULL));

  /* Cut inside the last tensor's data, inside the header, and to nothing. */
  const gsize cuts[] = { data_end - 1, 40, 0 };
  const char *expect[] = { "The file is incomplete: it ends after ",
                           "tensor count 2 at offset 8 is absurd: it needs at least 64 bytes "
                           "but the whole file has only 40 (corrupt or truncated)",
                           "the file is empty" };
  for (guint k = 0; k < G_N_ELEMENTS (cuts); k++)
    {
      g_autofree char *name = g_strdup_printf ("cut-%u.gguf", k);
      g_autofree char *cut = g_build_filename (tmp_dir, name, NULL);
      g_assert_true (g_file_set_contents (cut, contents, cuts[k], NULL));
      RunResult r = { 0 };
      run_hanzo (&r, (const char *[]) { "info", cut, NULL });
      g_assert_cmpint (r.status, ==, 1);
      g_autofree char *prefix = g_strdup_printf ("hanzo info: cannot load model '%s': ", cut);
      g_assert_true (g_str_has_prefix (r.err, prefix));
      assert_contains (r.err, expect[k]);
      if (k == 0)   /* where, and how much is missing */
        assert_contains (r.err, ", in tensor 'blk.0.attn_q.weight': its data [offset 512, 68 "
                                "bytes) runs to byte ");
      g_assert_cmpstr (r.out, ==, "");
      run_result_clear (&r);
    }

  RunResult r = { 0 };
  run_hanzo (&r, (const char *[]) { "info", "/nonexistent/x.gguf", NULL });
  g_assert_cmpint (r.status, ==, 1);
  assert_contains (r.err, "hanzo info: cannot load model '/nonexistent/x.gguf': cannot open: No "
                          "such file");
  run_result_clear (&r);

  run_hanzo (&r, (const char *[]) { "info", NULL });
  g_assert_cmpint (r.status, ==, 2);
  assert_contains (r.err, "Usage: hanzo info");
  run_result_clear (&r);

  run_hanzo (&r, (const char *[]) { "info", "--bogus", path, NULL });
  g_assert_cmpint (r.status, ==, 2);
  run_result_clear (&r);
}

/* Gemma 3 metadata (no tensors): 12 layers, layers 5 and 11 global, the others a window of
 * 1024; 2 KV heads of 256 + 256 elements: 2 * 512 * 4 = 4096 bytes per layer and token. */
static void
test_info_kv_window (void)
{
  g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
  hz_gguf_writer_set_str (w, "general.architecture", "gemma3");
  hz_gguf_writer_set_u32 (w, "gemma3.context_length", 131072);
  hz_gguf_writer_set_u32 (w, "gemma3.embedding_length", 1024);
  hz_gguf_writer_set_u32 (w, "gemma3.block_count", 12);
  hz_gguf_writer_set_u32 (w, "gemma3.feed_forward_length", 4096);
  hz_gguf_writer_set_u32 (w, "gemma3.attention.head_count", 4);
  hz_gguf_writer_set_u32 (w, "gemma3.attention.head_count_kv", 2);
  hz_gguf_writer_set_u32 (w, "gemma3.attention.key_length", 256);
  hz_gguf_writer_set_u32 (w, "gemma3.attention.value_length", 256);
  hz_gguf_writer_set_u32 (w, "gemma3.attention.sliding_window", 1024);
  g_autofree char *path = g_build_filename (tmp_dir, "gemma3-meta.gguf", NULL);
  g_autoptr (GError) error = NULL;
  g_assert_true (hz_gguf_writer_write_file (w, path, &error));
  g_assert_no_error (error);

  RunResult r = { 0 };
  run_hanzo (&r, (const char *[]) { "info", path, NULL });
  g_assert_cmpint (r.status, ==, 0);
  const guint64 cell = 2 * (256 + 256) * 4;
  g_autofree char *line = g_strdup_printf (
    "KV cache (float32): %" G_GUINT64_FORMAT " bytes per token of context in the 2 global "
    "layers, %" G_GUINT64_FORMAT " bytes per token of the last 1024 in the 10 sliding-window "
    "layers", 2 * cell, 10 * cell);
  assert_contains (r.out, line);
  /* totals: 2 layers x n_ctx + 10 layers x min(n_ctx, 1024) cells */
  const gint64 sizes[] = { 1024, 4096, 32768, 131072 };
  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
    {
      const guint64 b = (2 * sizes[i] + 10 * MIN (sizes[i], 1024)) * cell;
      g_autofree char *pat = g_strdup_printf ("\n +%" G_GINT64_FORMAT " +%" G_GUINT64_FORMAT
                                              " +%.1f", sizes[i], b, (double) b / sizes[i]);
      if (!g_regex_match_simple (pat, r.out, 0, 0))
        g_error ("output lacks /%s/:\n%s", pat, r.out);
    }
  assert_contains (r.out, "(training context)");
  run_result_clear (&r);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_autoptr (GError) error = NULL;
  tmp_dir = g_dir_make_tmp ("test-hanzo-info-XXXXXX", &error);
  g_assert_no_error (error);
  g_test_add_func ("/hanzo/info/ok", test_info_ok);
  g_test_add_func ("/hanzo/info/bad-files", test_info_bad_files);
  g_test_add_func ("/hanzo/info/kv-window", test_info_kv_window);
  int status = g_test_run ();
  g_autoptr (GFile) dir = g_file_new_for_path (tmp_dir);
  g_autoptr (GFileEnumerator) en = g_file_enumerate_children (dir, G_FILE_ATTRIBUTE_STANDARD_NAME,
                                                              0, NULL, NULL);
  GFileInfo *info;
  while (en && (info = g_file_enumerator_next_file (en, NULL, NULL)))
    {
      g_autoptr (GFile) child = g_file_get_child (dir, g_file_info_get_name (info));
      g_file_delete (child, NULL, NULL);
      g_object_unref (info);
    }
  g_file_delete (dir, NULL, NULL);
  g_free (tmp_dir);
  return status;
}
