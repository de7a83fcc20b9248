/* tests/tools/test-hanzo-tokenize.c — runs `hanzo tokenize` ($HZ_BUILD_DIR/tools/hanzo) on a
 * small SentencePiece vocab written here, on the shared golden vocabularies (skipped when
 * ../shared is absent), and with bad input, checking stdout, stderr and the exit codes. */
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <string.h>

#include "gguf.h"
#include "../hz-test-util.h"

static char *tmp_dir;
static char *vocab_path;

typedef struct {
  int   status;
  char *out, *err;
} Run;

static void
run_clear (Run *r)
{
  g_free (r->out);
  g_free (r->err);
}

/* NUL-terminated copy of a pipe's output (never NULL); takes `b`. */
static char *
bytes_to_string (GBytes *b)
{
  gsize n;
  const char *d = g_bytes_get_data (b, &n);
  char *s = n ? g_strndup (d, n) : g_strdup ("");
  g_bytes_unref (b);
  return s;
}

/* hanzo tokenize ARGS... (NULL-terminated) with `input` (len bytes) on stdin */
static void
run_tokenize_va (Run *r, const char *input, gsize len, va_list ap)
{
  const char *build = g_getenv ("HZ_BUILD_DIR");
  g_autofree char *bin = NULL;
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) p = NULL;
  GBytes *out = NULL, *err = NULL;
  const char *a;
  g_autoptr(GBytes) in = g_bytes_new (input ? input : "", input ? len : 0);

  g_assert_nonnull (build);   /* set by meson test (tests/meson.build) */
  bin = g_build_filename (build, "tools", "hanzo", NULL);
  g_ptr_array_add (argv, bin);
  g_ptr_array_add (argv, (gpointer) "tokenize");
  while ((a = va_arg (ap, const char *)) != NULL)
    g_ptr_array_add (argv, (gpointer) a);
  g_ptr_array_add (argv, NULL);
  p = g_subprocess_newv ((const char *const *) argv->pdata,
                         G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                         G_SUBPROCESS_FLAGS_STDERR_PIPE, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_communicate (p, in, NULL, &out, &err, &error));
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (p));
  r->status = g_subprocess_get_exit_status (p);
  r->out = bytes_to_string (out);
  r->err = bytes_to_string (err);
}

static void
run_tokenize (Run *r, ...)
{
  va_list ap;
  va_start (ap, r);
  run_tokenize_va (r, NULL, 0, ap);
  va_end (ap);
}

static void
run_tokenize_stdin (Run *r, const char *input, gsize len, ...)
{
  va_list ap;
  va_start (ap, len);
  run_tokenize_va (r, input, len, ap);
  va_end (ap);
}

/* A vocab-only SPM GGUF: <unk> <s> </s>, bytes <0x00>..<0xFF>, "▁", "a", "b", "▁a", "▁ab". */
static void
write_vocab (void)
{
  g_autoptr(HzGgufWriter) w = hz_gguf_writer_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) toks = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GArray) scores = g_array_new (FALSE, TRUE, sizeof (float));
  g_autoptr(GArray) types = g_array_new (FALSE, TRUE, sizeof (int32_t));
  static const char *const extra[] = { "\xe2\x96\x81", "a", "b", "\xe2\x96\x81" "a",
                                       "\xe2\x96\x81" "ab" };
  static const char *const special[] = { "<unk>", "<s>", "</s>" };
  static const int32_t special_type[] = { 2, 3, 3 };

  for (int i = 0; i < 3; i++)
    {
      float s = 0;
      g_ptr_array_add (toks, g_strdup (special[i]));
      g_array_append_val (scores, s);
      g_array_append_val (types, special_type[i]);
    }
  for (int b = 0; b < 256; b++)
    {
      float s = 0;
      int32_t ty = 6;
      g_ptr_array_add (toks, g_strdup_printf ("<0x%02X>", b));
      g_array_append_val (scores, s);
      g_array_append_val (types, ty);
    }
  for (int i = 0; i < 5; i++)
    {
      float s = -1.0f - i;
      int32_t ty = 1;
      g_ptr_array_add (toks, g_strdup (extra[i]));
      g_array_append_val (scores, s);
      g_array_append_val (types, ty);
    }
  hz_gguf_writer_set_str (w, "general.architecture", "llama");
  hz_gguf_writer_set_str (w, "tokenizer.ggml.model", "llama");
  hz_gguf_writer_set_str_arr (w, "tokenizer.ggml.tokens", (const char *const *) toks->pdata,
                              toks->len);
  hz_gguf_writer_set_arr (w, "tokenizer.ggml.scores", HZ_GGUF_TYPE_FLOAT32, scores->data,
                          scores->len);
  hz_gguf_writer_set_arr (w, "tokenizer.ggml.token_type", HZ_GGUF_TYPE_INT32, types->data,
                          types->len);
  vocab_path = g_build_filename (tmp_dir, "vocab.gguf", NULL);
  g_assert_true (hz_gguf_writer_write_file (w, vocab_path, &error));
  g_assert_no_error (error);
}

static void
test_text_and_flags (void)
{
  Run r = { 0 };

  /* "ab" -> <s> ▁ab (263 = 3 specials + 256 bytes + 4) */
  run_tokenize (&r, "-m", vocab_path, "ab", NULL);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpstr (r.out, ==, "1 263\n");
  run_clear (&r);

  run_tokenize (&r, "-m", vocab_path, "--no-bos", "ab", NULL);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpstr (r.out, ==, "263\n");
  run_clear (&r);

  /* </s> is text (bytes) without --special, one control token with it */
  run_tokenize (&r, "-m", vocab_path, "--no-bos", "a</s>", NULL);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpstr (r.out, ==, "262 63 50 118 65\n");   /* ▁a < / s > */
  run_clear (&r);
  run_tokenize (&r, "-m", vocab_path, "--no-bos", "--special", "a</s>", NULL);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpstr (r.out, ==, "262 2\n");
  run_clear (&r);
}

static void
test_file_bytes (void)
{
  g_autofree char *path = g_build_filename (tmp_dir, "text.bin", NULL);
  g_autoptr(GError) error = NULL;
  Run r = { 0 };

  /* "a\nb\xff" read byte for byte (--raw-bytes): ▁a <0x0A> b <0xFF> */
  g_assert_true (g_file_set_contents (path, "a\nb\xff", 4, &error));
  run_tokenize (&r, "-m", vocab_path, "--no-bos", "--raw-bytes", "--file", path, NULL);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpstr (r.out, ==, "262 13 261 258\n");
  run_clear (&r);
  g_unlink (path);

  /* -f - reads stdin, bytes as they are (NUL included): ▁a <0x00> b */
  run_tokenize_stdin (&r, "a\0b", 3, "-m", vocab_path, "--no-bos", "--raw-bytes", "-f", "-", NULL);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpstr (r.out, ==, "262 3 261\n");
  run_clear (&r);
}

/* --pieces prints the NUL byte token escaped, not as '' */
static void
test_pieces_nul (void)
{
  Run r = { 0 };

  run_tokenize_stdin (&r, "a\0b", 3, "-m", vocab_path, "--no-bos", "--raw-bytes", "--pieces",
                      "-f", "-", NULL);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "\n3\t'\\x00'\n"));
  g_assert_null (strstr (r.out, "''"));
  run_clear (&r);
}

static void
test_errors (void)
{
  g_autofree char *missing = g_build_filename (tmp_dir, "missing.gguf", NULL);
  g_autofree char *bad = g_build_filename (tmp_dir, "bad.gguf", NULL);
  g_autoptr(GError) error = NULL;
  Run r = { 0 };

  run_tokenize (&r, "ab", NULL);                             /* no -m */
  g_assert_cmpint (r.status, ==, 2);
  g_assert_nonnull (strstr (r.err, "Usage"));
  run_clear (&r);
  run_tokenize (&r, "-m", vocab_path, NULL);                 /* no text */
  g_assert_cmpint (r.status, ==, 2);
  run_clear (&r);
  run_tokenize (&r, "-m", vocab_path, "--bogus", "x", NULL);
  g_assert_cmpint (r.status, ==, 2);
  run_clear (&r);

  run_tokenize (&r, "-m", missing, "ab", NULL);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "missing.gguf"));
  g_assert_cmpstr (r.out, ==, "");
  run_clear (&r);

  run_tokenize (&r, "-m", vocab_path, "--file", missing, NULL);
  g_assert_cmpint (r.status, ==, 1);
  run_clear (&r);

  /* a GGUF without tokenizer metadata */
  {
    g_autoptr(HzGgufWriter) w = hz_gguf_writer_new ();
    hz_gguf_writer_set_str (w, "general.architecture", "llama");
    g_assert_true (hz_gguf_writer_write_file (w, bad, &error));
  }
  run_tokenize (&r, "-m", bad, "ab", NULL);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "tokenizer.ggml"));
  run_clear (&r);
  g_unlink (bad);
}

/* Real vocabularies: the ids llama.cpp gives (../shared golden data). */
static void
test_shared_vocabs (void)
{
  g_autofree char *stories = hz_test_shared_path ("models/stories260K.gguf");
  g_autofree char *qwen = NULL;
  Run r = { 0 };

  if (stories == NULL)
    return;
  /* ../shared/golden/stories260K/tokenize.json, "Once upon a time", ids_add_special */
  run_tokenize (&r, "-m", stories, "Once upon a time", NULL);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpstr (r.out, ==, "1 403 407 261 378\n");
  run_clear (&r);

  qwen = hz_test_shared_path ("golden/tokenizer/ggml-vocab-qwen2.gguf");
  if (qwen == NULL)
    return;
  run_tokenize (&r, "-m", qwen, "--special", "<|im_start|>user\nHello<|im_end|>", NULL);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpstr (r.out, ==, "151644 872 198 9707 151645\n");
  run_clear (&r);
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  int rc;

  g_test_init (&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp ("hz-tokenize-XXXXXX", &error);
  g_assert_no_error (error);
  write_vocab ();
  g_test_add_func ("/hanzo-tokenize/text-and-flags", test_text_and_flags);
  g_test_add_func ("/hanzo-tokenize/file-bytes", test_file_bytes);
  g_test_add_func ("/hanzo-tokenize/errors", test_errors);
  g_test_add_func ("/hanzo-tokenize/pieces-nul", test_pieces_nul);
  g_test_add_func ("/hanzo-tokenize/shared-vocabs", test_shared_vocabs);
  rc = g_test_run ();
  g_unlink (vocab_path);
  g_rmdir (tmp_dir);
  g_free (vocab_path);
  g_free (tmp_dir);
  return rc;
}
