/* tests/tools/test-hanzo-cli.c — bad input to the `hanzo` subcommands ($HZ_BUILD_DIR/tools/hanzo):
 * option ranges (--threads, sampling, context, --chunks), text options under LC_ALL=C,
 * NUL bytes on stdin of `hanzo redact`, --help output and the perplexity messages. Range
 * checks run before any model is loaded, so most runs need no model (a missing path). */
#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../hz-test-util.h"
#include "membw.h"

static char *tmp_dir;
static char *missing;   /* a model path that does not exist */

typedef struct {
  int   status;
  char *out, *err;
} Run;

static void
run_clear (Run *r)
{
  g_clear_pointer (&r->out, g_free);
  g_clear_pointer (&r->err, g_free);
}

static char *
bytes_to_string (GBytes *b)
{
  gsize n;
  const char *d = b ? g_bytes_get_data (b, &n) : NULL;
  char *s = d && n ? g_strndup (d, n) : g_strdup ("");
  if (b)
    g_bytes_unref (b);
  return s;
}

/* hanzo ARGV... with `input` (len bytes, may hold NULs; NULL: empty) on stdin and, when
 * c_locale, LC_ALL=C in the environment. */
static void
run_hanzo_full (Run *r, gboolean c_locale, const char *input, gsize len,
                const char *const *args)
{
  const char *build = g_getenv ("HZ_BUILD_DIR");
  g_autofree char *bin = NULL;
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autoptr (GError) error = NULL;
  g_autoptr (GSubprocessLauncher) l = NULL;
  g_autoptr (GSubprocess) p = NULL;
  g_autoptr (GBytes) in = NULL;
  GBytes *out = NULL, *err = NULL;

  g_assert_nonnull (build);
  bin = g_build_filename (build, "tools", "hanzo", NULL);
  g_ptr_array_add (argv, bin);
  for (int i = 0; args[i]; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);
  l = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                 G_SUBPROCESS_FLAGS_STDERR_PIPE);
  if (c_locale)
    {
      g_subprocess_launcher_setenv (l, "LC_ALL", "C", TRUE);
      g_subprocess_launcher_unsetenv (l, "LANG");
    }
  p = g_subprocess_launcher_spawnv (l, (const char *const *) argv->pdata, &error);
  g_assert_no_error (error);
  in = g_bytes_new (input ? input : "", input ? len : 0);
  g_assert_true (g_subprocess_communicate (p, in, NULL, &out, &err, &error));
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (p));
  r->status = g_subprocess_get_exit_status (p);
  r->out = bytes_to_string (out);
  r->err = bytes_to_string (err);
}

#define RUN(r, ...) run_hanzo_full ((r), FALSE, NULL, 0, (const char *const[]) { __VA_ARGS__, NULL })

/* Asserts a usage error (exit 2) whose message contains `needle`. */
static void
expect_usage (Run *r, const char *needle)
{
  if (r->status != 2 || (needle && !strstr (r->err, needle)))
    g_error ("expected exit 2 and \"%s\", got %d: %s", needle ? needle : "", r->status, r->err);
  g_assert_null (strstr (r->err, "GLib"));
  run_clear (r);
}

static void
test_threads (void)
{
  Run r = { 0 };

  RUN (&r, "generate", "-m", missing, "-p", "x", "--threads", "100000");
  expect_usage (&r, "--threads must be 0 (all cores) or 1..1024");
  RUN (&r, "generate", "-m", missing, "-p", "x", "-t", "-5");
  expect_usage (&r, "--threads");
  RUN (&r, "chat", "-m", missing, "--threads", "100000");
  expect_usage (&r, "--threads");
  RUN (&r, "perplexity", "-m", missing, "-f", missing, "--threads", "100000");
  expect_usage (&r, "--threads");
  RUN (&r, "perplexity", "-m", missing, "-f", missing, "-t", "-1");
  expect_usage (&r, "--threads");
  RUN (&r, "quantize", "--threads", "100000", missing, missing, "Q8_0");
  expect_usage (&r, "--threads");
  RUN (&r, "quantize", "-t", "-3", missing, missing, "Q8_0");
  expect_usage (&r, "--threads");
  RUN (&r, "synth", "--shape", "qwen3-0.6b", "--type", "Q8_0", "--vocab", missing, "-o", missing,
       "--threads", "100000");
  expect_usage (&r, "--threads");
  RUN (&r, "synth", "--shape", "qwen3-0.6b", "--type", "Q8_0", "--vocab", missing, "-o", missing,
       "-t", "-2");
  expect_usage (&r, "--threads");
  RUN (&r, "bench", "-m", missing, "-t", "100000");
  expect_usage (&r, "1..1024");

  /* in range: it gets as far as loading the (missing) model */
  RUN (&r, "generate", "-m", missing, "-p", "x", "--threads", "1024");
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "cannot load model"));
  run_clear (&r);
  RUN (&r, "generate", "-m", missing, "-p", "x", "--threads", "0");
  g_assert_cmpint (r.status, ==, 1);
  run_clear (&r);
}

static void
test_ranges (void)
{
  Run r = { 0 };

  RUN (&r, "generate", "-m", missing, "-p", "x", "-c", "0");
  expect_usage (&r, "--ctx-size must be >= 1");
  RUN (&r, "generate", "-m", missing, "-p", "x", "-c", "-1");
  expect_usage (&r, "--ctx-size");
  RUN (&r, "generate", "-m", missing, "-p", "x", "-b", "0");
  expect_usage (&r, "--batch-size must be >= 1");
  RUN (&r, "generate", "-m", missing, "-p", "x", "-b", "-1");
  expect_usage (&r, "--batch-size");
  RUN (&r, "generate", "-m", missing, "-p", "x", "--top-p", "5");
  expect_usage (&r, "--top-p must be in 0..1");
  RUN (&r, "generate", "-m", missing, "-p", "x", "--top-p", "-1");
  expect_usage (&r, "--top-p");
  RUN (&r, "generate", "-m", missing, "-p", "x", "--min-p", "2");
  expect_usage (&r, "--min-p");
  RUN (&r, "generate", "-m", missing, "-p", "x", "--top-k", "-1");
  expect_usage (&r, "--top-k must be >= 0");
  RUN (&r, "generate", "-m", missing, "-p", "x", "--repeat-last-n", "-5");
  expect_usage (&r, "--repeat-last-n");
  RUN (&r, "generate", "-m", missing, "-p", "x", "-n", "-2");
  expect_usage (&r, "--n-predict");
  RUN (&r, "chat", "-m", missing, "--top-p", "5");
  expect_usage (&r, "--top-p");
  RUN (&r, "bench", "-m", missing, "-p", "2147483647", "-n", "0");
  expect_usage (&r, "a benchmark context may hold");
  RUN (&r, "learn", "sft", "-m", missing, "--data", missing, "-o", missing, "--rank", "2147483647");
  expect_usage (&r, "--rank must be in 1..4096");
  RUN (&r, "learn", "sft", "-m", missing, "--data", missing, "-o", missing, "--lr", "nan");
  expect_usage (&r, "--lr must be in (0, 1]");
  RUN (&r, "learn", "sft", "-m", missing, "--data", missing, "-o", missing, "--batch", "2147483647");
  expect_usage (&r, "--batch must be in 1..65536");
  RUN (&r, "learn", "grpo", "-m", missing, "--prompts", missing, "-o", missing, "--lr", "-1");
  expect_usage (&r, "--lr must be in (0, 1]");
  RUN (&r, "learn", "sft", "-m", missing, "--data", missing, "-o", missing, "--heldout", "2");
  expect_usage (&r, "--heldout must be in [0, 1)");
  RUN (&r, "redact", "--model", missing, "--model-tokens", "-3", "x");
  expect_usage (&r, "--model-tokens must be in 1..65536");
  RUN (&r, "redact", "--model", missing, "--model-tokens", "0", "x");
  expect_usage (&r, "--model-tokens");
  RUN (&r, "perplexity", "-m", missing, "-f", missing, "--chunks", "-1");
  expect_usage (&r, "--chunks must be >= 1");
  RUN (&r, "perplexity", "-m", missing, "-f", missing, "--chunks", "0");
  expect_usage (&r, "--chunks");
  RUN (&r, "bench", "-m", missing, "-c", "64", "-p", "1000");
  expect_usage (&r, "--ctx-size 64 is smaller than -p + -n");
  RUN (&r, "bench", "-m", missing, "-c", "0");
  expect_usage (&r, "--ctx-size");

  /* the edges of the ranges are accepted: on to the model */
  RUN (&r, "generate", "-m", missing, "-p", "x", "--top-p", "1", "--min-p", "0", "--top-k", "0",
       "--repeat-last-n", "-1", "-n", "-1", "-c", "1", "-b", "1");
  g_assert_cmpint (r.status, ==, 1);
  run_clear (&r);
  RUN (&r, "bench", "-m", missing, "-c", "640", "-p", "512", "-n", "128");
  g_assert_cmpint (r.status, ==, 1);
  run_clear (&r);

  /* a missing vocabulary is named */
  g_autofree char *synth_out = g_build_filename (tmp_dir, "synth.gguf", NULL);
  RUN (&r, "synth", "--shape", "tiny-mixtral", "--type", "Q8_0", "--vocab", missing, "-o", synth_out);
  g_assert_cmpint (r.status, ==, 1);
  g_autofree char *named = g_strdup_printf ("vocabulary %s: cannot open", missing);
  g_assert_nonnull (strstr (r.err, named));
  g_assert_false (g_file_test (synth_out, G_FILE_TEST_EXISTS));
  run_clear (&r);

  /* the ranges are documented */
  RUN (&r, "generate", "--help");
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "0..1024"));
  g_assert_nonnull (strstr (r.out, "Top-p, 0..1"));
  run_clear (&r);
}

static void
test_utf8_options (void)
{
  Run r = { 0 };

  /* valid UTF-8 under the C locale: accepted (fails later, loading the missing model) */
  run_hanzo_full (&r, TRUE, NULL, 0, (const char *const[]) {
                    "generate", "-m", missing, "-p", "h\xc3\xa9llo \xe2\x96\x81", NULL });
  g_assert_cmpint (r.status, ==, 1);
  g_assert_null (strstr (r.err, "Invalid byte sequence"));
  g_assert_nonnull (strstr (r.err, "cannot load model"));
  run_clear (&r);
  run_hanzo_full (&r, TRUE, NULL, 0, (const char *const[]) {
                    "chat", "-m", missing, "--system", "\xc3\xa9t\xc3\xa9", NULL });
  g_assert_cmpint (r.status, ==, 1);
  g_assert_null (strstr (r.err, "Invalid byte sequence"));
  run_clear (&r);

  /* invalid UTF-8: a warning naming the option, whatever the locale, then on with U+FFFD
   * as every subcommand does (here to the missing model) */
  static const struct { const char *cmd, *opt, *value; gboolean c_locale; } bad[] = {
    { "generate", "-p", "a\xff" "b", TRUE },
    { "generate", "--prompt", "\xc3", FALSE },
    { "chat", "--system", "\xfe", TRUE },
  };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      run_hanzo_full (&r, bad[i].c_locale, NULL, 0, (const char *const[]) {
                        bad[i].cmd, "-m", missing, bad[i].opt, bad[i].value, NULL });
      g_assert_cmpint (r.status, ==, 1);
      g_assert_nonnull (strstr (r.err, "is not valid UTF-8 (first bad byte at offset "));
      g_assert_nonnull (strstr (r.err, "invalid bytes are replaced by U+FFFD"));
      g_assert_nonnull (strstr (r.err, "cannot load model"));
      run_clear (&r);
    }
}

static void
test_redact_nul (void)
{
  static const char with_nul[] = "call me\0 at bob@example.com";
  Run r = { 0 };

  /* a NUL byte on stdin: refused with a message, not a silent cut */
  run_hanzo_full (&r, FALSE, with_nul, sizeof with_nul - 1, (const char *const[]) { "redact", NULL });
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "NUL byte at offset 7"));
  g_assert_cmpstr (r.out, ==, "");
  run_clear (&r);

  /* invalid UTF-8: redacted as U+FFFD, with a warning that says where */
  run_hanzo_full (&r, FALSE, "mail bob@example.com \xff\xfe ok", 26,
                  (const char *const[]) { "redact", NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.err, "not valid UTF-8 (first bad byte at offset 21)"));
  g_assert_null (strstr (r.out, "bob@example.com"));
  g_assert_nonnull (strstr (r.out, "\xef\xbf\xbd"));
  run_clear (&r);

  /* text without NULs goes through as before */
  run_hanzo_full (&r, FALSE, "mail bob@example.com", 20, (const char *const[]) { "redact", NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_assert_null (strstr (r.out, "bob@example.com"));
  g_assert_nonnull (strstr (r.out, "mail "));
  run_clear (&r);

  /* --jsonl with a NUL inside a record */
  g_autofree char *path = g_build_filename (tmp_dir, "nul.jsonl", NULL);
  static const char rec[] = "{\"text\": \"a\0b\"}\n";
  g_assert_true (g_file_set_contents (path, rec, sizeof rec - 1, NULL));
  RUN (&r, "redact", "--jsonl", path);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "NUL byte"));
  run_clear (&r);
  g_unlink (path);
}

/* Peak resident set (KiB) of `hanzo redact [--json]` with `path` on stdin; its stdout is
 * written to `out_path`. wait4() gives the child's own peak. */
static glong
redact_peak_kib (const char *path, const char *out_path, gboolean json)
{
  g_autofree char *bin = g_build_filename (g_getenv ("HZ_BUILD_DIR"), "tools", "hanzo", NULL);
  pid_t pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      int in = open (path, O_RDONLY), out = open (out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (in < 0 || out < 0 || dup2 (in, 0) < 0 || dup2 (out, 1) < 0)
        _exit (127);
      execl (bin, bin, "redact", json ? "--json" : "--mode=mask", (char *) NULL);
      _exit (127);
    }
  int status;
  struct rusage ru;
  g_assert_cmpint (wait4 (pid, &status, 0, &ru), ==, pid);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
  return ru.ru_maxrss;
}

/* `redact --json` on a large stdin: the output is streamed, byte for byte what json-glib's
 * generator makes of the parsed output (escapes, slices cut inside multi-byte text), and
 * it costs about no memory beyond the redaction itself (plain `redact` on the same input:
 * the redactor's word tokens and tagger lattices); building the JSON tree and buffer took
 * 40-50 more bytes per input byte. */
static void
test_redact_json_stream (void)
{
  static const char *const lines[] = {
    "Mail bob@example.com or call +1 415 555 0100, said Mary Smith.\n",
    "Quote \" backslash \\ tab\t ctl \x01 caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 IBAN DE89 3704 0044 0532 0130 00\n",
    "Server 192.168.1.20 at https://example.org/a?b=c; card 4111 1111 1111 1111.\n",
  };
  GString *in = g_string_new (NULL);
  for (guint i = 0; in->len < 2 * 1024 * 1024; i++)
    g_string_append (in, lines[i % G_N_ELEMENTS (lines)]);
  g_autofree char *path = g_build_filename (tmp_dir, "big.txt", NULL);
  g_autofree char *out = g_build_filename (tmp_dir, "big.json", NULL);
  g_assert_true (g_file_set_contents (path, in->str, (gssize) in->len, NULL));

  const glong plain = redact_peak_kib (path, out, FALSE);
  const glong json = redact_peak_kib (path, out, TRUE);
  const double extra = (double) (json - plain) * 1024 / (double) in->len;
  g_test_message ("redact: %" G_GSIZE_FORMAT " bytes in, peak %ld KiB plain, %ld KiB --json: "
                  "%.1f more bytes per input byte", in->len, plain, json, extra);
  g_assert_cmpfloat (extra, <, 4);

  g_autofree char *json_text = NULL;
  gsize json_len;
  g_assert_true (g_file_get_contents (out, &json_text, &json_len, NULL));
  g_assert_true (json_len > 0 && json_text[json_len - 1] == '\n');
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (json_parser_load_from_data (parser, json_text, (gssize) json_len, &error));
  g_assert_no_error (error);
  JsonObject *o = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpstr (json_object_get_string_member (o, "text"), ==, in->str);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (o, "spans")), >, 1000);
  g_autofree char *again = json_to_string (json_parser_get_root (parser), FALSE);
  g_assert_cmpuint (strlen (again), ==, json_len - 1);
  g_assert_true (memcmp (again, json_text, json_len - 1) == 0);
  g_string_free (in, TRUE);
  g_unlink (path);
  g_unlink (out);
}

/* JSONL records of `redact --jsonl` / `--eval` / `--pred` with members of the wrong type or
 * spans outside their text: refused with the file, line and member (a number as "text"
 * used to crash the redactor), and --jsonl -o leaves no partial file. */
static void
test_redact_bad_records (void)
{
  static const struct { const char *line, *msg; } cases[] = {
    { "{\"text\": 5}", "bad.jsonl:1: \"text\" must be a string" },
    { "{\"text\": {\"a\": 1}}", "\"text\" must be a string" },
    { "{\"text\": \"abc\", \"id\": 3}", "\"id\" must be a string" },
    { "{\"text\": \"abc\", \"spans\": 5}", "\"spans\" must be an array" },
    { "{\"text\": \"abc\", \"spans\": [{\"start\": 2, \"end\": 1, \"label\": \"PERSON\"}]}",
      "span 0: needs integers 0 <= \"start\" < \"end\"" },
    { "{\"text\": \"abc\", \"spans\": [{\"start\": 0, \"end\": 9, \"label\": \"PERSON\"}]}",
      "the text's length in code points (3)" },
    { "{\"text\": \"abc\", \"spans\": [{\"start\": 0, \"end\": 2, \"label\": [1]}]}",
      "span 0: \"label\" must be a string" },
  };
  g_autofree char *path = g_build_filename (tmp_dir, "bad.jsonl", NULL);
  g_autofree char *good = g_build_filename (tmp_dir, "good.jsonl", NULL);
  g_autofree char *out = g_build_filename (tmp_dir, "out.jsonl", NULL);
  g_assert_true (g_file_set_contents (good, "{\"text\": \"abc\"}\n", -1, NULL));
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      Run r = { 0 };
      g_autofree char *body = g_strdup_printf ("%s\n", cases[i].line);
      g_assert_true (g_file_set_contents (path, body, -1, NULL));
      RUN (&r, "redact", "--eval", path);
      if (r.status != 1 || !strstr (r.err, cases[i].msg))
        g_error ("--eval %s: expected exit 1 and \"%s\", got %d: %s", cases[i].line,
                 cases[i].msg, r.status, r.err);
      run_clear (&r);
    }
  Run r = { 0 };
  /* a file without records: an error, not a perfect score; lines of white space (CRLF's
   * "\r") are blank lines, not a JSON error (they used to raise a Json-CRITICAL) */
  g_assert_true (g_file_set_contents (path, "\n  \n\r\n", -1, NULL));
  RUN (&r, "redact", "--eval", path);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "bad.jsonl: no records to score"));
  g_assert_cmpstr (r.out, ==, "");
  run_clear (&r);

  /* the same checks on a --pred file */
  g_assert_true (g_file_set_contents (path, cases[G_N_ELEMENTS (cases) - 1].line, -1, NULL));
  RUN (&r, "redact", "--eval", good, "--pred", path);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "span 0: \"label\" must be a string"));
  run_clear (&r);
  /* --jsonl with CRLF line ends: every record read */
  g_assert_true (g_file_set_contents (path, "{\"text\": \"a\"}\r\n\r\n{\"text\": \"b\"}\r\n", -1,
                                      NULL));
  RUN (&r, "redact", "--jsonl", path);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpstr (r.out, ==, "{\"text\":\"a\",\"spans\":[]}\n{\"text\":\"b\",\"spans\":[]}\n");
  run_clear (&r);
  /* --jsonl: a good record, then a bad one */
  g_assert_true (g_file_set_contents (path, "{\"text\": \"bob@example.com\"}\n{\"text\": 5}\n", -1,
                                      NULL));
  RUN (&r, "redact", "--jsonl", path, "-o", out);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "bad.jsonl:2: \"text\" must be a string"));
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  run_clear (&r);
  g_unlink (path);
  g_unlink (good);
}

/* `hanzo chat` with a line on stdin that is not UTF-8 (and one with a NUL): answered with
 * U+FFFD in place of the bad bytes and a warning, as `hanzo redact` does. */
static void
test_chat_utf8_stdin (void)
{
  g_autofree char *stories = hz_test_shared_path ("models/stories260K.gguf");
  if (stories == NULL)
    {
      g_test_skip ("../shared/models/stories260K.gguf is absent");
      return;
    }
  static const char input[] = "Once \xff\xfe upon\nthe\0 cat\n";
  Run r = { 0 };
  run_hanzo_full (&r, FALSE, input, sizeof input - 1,
                  (const char *const[]) { "chat", "-m", stories, "-n", "4", "--seed", "1", NULL });
  g_assert_cmpint (r.status, ==, 0);
  const char *w = strstr (r.err, "the line is not valid UTF-8");
  g_assert_nonnull (w);
  g_assert_nonnull (strstr (w + 1, "the line is not valid UTF-8"));   /* both lines */
  g_assert_cmpstr (r.out, !=, "");
  run_clear (&r);
}

/* `hanzo bench` on stories260K (about 1 MiB of weights): where the last-level cache is
 * known and larger, the tg row says "in cache" with a note instead of a share of the
 * memory roofline (which such a model exceeds); where it is unknown, a percentage. */
static void
test_bench_in_cache (void)
{
  g_autofree char *stories = hz_test_shared_path ("models/stories260K.gguf");
  if (stories == NULL)
    {
      g_test_skip ("../shared/models/stories260K.gguf is absent");
      return;
    }
  GStatBuf st;
  g_assert_cmpint (g_stat (stories, &st), ==, 0);
  const guint64 llc = hz_last_level_cache_bytes ();
  Run r = { 0 };
  RUN (&r, "bench", "-m", stories, "-p", "0", "-n", "4", "-r", "1", "-t", "1",
       "--bandwidth", "10");
  g_assert_cmpint (r.status, ==, 0);
  const char *row = strstr (r.out, " tg4 |");
  g_assert_nonnull (row);
  g_test_message ("last-level cache %" G_GUINT64_FORMAT " bytes; %s", llc, row);
  if (llc >= (guint64) st.st_size)   /* the file holds every weight a token reads */
    {
      g_assert_nonnull (strstr (row, "| in cache |"));
      g_assert_nonnull (strstr (r.out, "note: they fit in the last-level cache"));
      g_assert_null (strstr (row, "%"));
    }
  else if (llc == 0)
    {
      g_assert_nonnull (strstr (row, " % |"));
      g_assert_null (strstr (r.out, "in cache"));
    }
  run_clear (&r);
}

/* Output errors: a command whose stdout cannot be written (a full disk: /dev/full) fails
 * instead of reporting success; `quantize` refuses to write over its own input (it used to
 * replace the source with the quantized file). */
static void
test_output_errors (void)
{
  const char *build = g_getenv ("HZ_BUILD_DIR");
  g_autofree char *bin = g_build_filename (build, "tools", "hanzo", NULL);
  g_autoptr (GError) error = NULL;
  if (g_file_test ("/dev/full", G_FILE_TEST_EXISTS))
    {
      g_autoptr (GSubprocessLauncher) l = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDERR_PIPE);
      g_subprocess_launcher_set_stdout_file_path (l, "/dev/full");
      g_autoptr (GSubprocess) p = g_subprocess_launcher_spawn (l, &error, bin, "quantize", "--list",
                                                               NULL);
      g_assert_no_error (error);
      GBytes *err = NULL;
      g_assert_true (g_subprocess_communicate (p, NULL, NULL, NULL, &err, &error));
      g_autofree char *msg = bytes_to_string (err);
      g_assert_cmpint (g_subprocess_get_exit_status (p), ==, 1);
      g_assert_nonnull (strstr (msg, "error writing the output"));
    }
  else
    g_test_message ("no /dev/full: the full-output case is not run");

  /* the same file, and a symbolic link to it, as output: refused, the input unchanged */
  g_autofree char *in = g_build_filename (tmp_dir, "same.gguf", NULL);
  g_autofree char *link = g_build_filename (tmp_dir, "same-link.gguf", NULL);
  static const char body[] = "not a model, but it must survive";
  g_assert_true (g_file_set_contents (in, body, -1, NULL));
  g_assert_cmpint (symlink (in, link), ==, 0);
  const char *outs[] = { in, link };
  for (gsize i = 0; i < G_N_ELEMENTS (outs); i++)
    {
      Run r = { 0 };
      RUN (&r, "quantize", in, outs[i], "--type", "Q8_0");
      g_assert_cmpint (r.status, ==, 1);
      g_assert_nonnull (strstr (r.err, "is the input file"));
      run_clear (&r);
      g_autofree char *now = NULL;
      g_assert_true (g_file_get_contents (in, &now, NULL, NULL));
      g_assert_cmpstr (now, ==, body);
    }
  g_unlink (link);
  g_unlink (in);
}

/* `hanzo learn` creates its --out folder before training (a wrong -o fails early); a run
 * that then fails (here: no model) removes the folders it created, and only those. */
static void
test_learn_out_dir (void)
{
  g_autofree char *top = g_build_filename (tmp_dir, "learn-new", NULL);
  g_autofree char *out = g_build_filename (top, "a", "b", NULL);
  g_autofree char *data = g_build_filename (tmp_dir, "learn.jsonl", NULL);
  g_assert_true (g_file_set_contents (data, "{\"prompt\": \"a\", \"response\": \"b\"}\n",
                                      -1, NULL));
  const char *cmds[][2] = { { "sft", "--data" }, { "grpo", "--prompts" } };
  for (gsize i = 0; i < G_N_ELEMENTS (cmds); i++)
    {
      Run r = { 0 };
      RUN (&r, "learn", cmds[i][0], "-m", missing, cmds[i][1], data, "-o", out);
      g_assert_cmpint (r.status, ==, 1);
      g_assert_nonnull (strstr (r.err, "missing.gguf"));
      g_assert_false (g_file_test (top, G_FILE_TEST_EXISTS));
      run_clear (&r);
    }
  /* an existing folder (with a file of the user's) is left as it was */
  g_assert_cmpint (g_mkdir (top, 0755), ==, 0);
  g_autofree char *mine = g_build_filename (top, "mine.txt", NULL);
  g_assert_true (g_file_set_contents (mine, "keep", -1, NULL));
  Run r = { 0 };
  RUN (&r, "learn", "sft", "-m", missing, "--data", data, "-o", top);
  g_assert_cmpint (r.status, ==, 1);
  run_clear (&r);
  g_assert_true (g_file_test (mine, G_FILE_TEST_IS_REGULAR));
  /* an --out that is a file: refused before the model is read */
  RUN (&r, "learn", "sft", "-m", missing, "--data", data, "-o", mine);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "is not a directory"));
  run_clear (&r);
  g_unlink (mine);
  g_rmdir (top);
  g_unlink (data);
}

static void
test_help (void)
{
  Run r = { 0 };

  RUN (&r, "learn", "--help");
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "Usage: hanzo learn"));
  g_assert_nonnull (strstr (r.out, "sft"));
  g_assert_nonnull (strstr (r.out, "grpo"));
  g_assert_nonnull (strstr (r.out, "merge"));
  run_clear (&r);
  RUN (&r, "learn");
  g_assert_cmpint (r.status, ==, 2);
  g_assert_nonnull (strstr (r.err, "sft"));
  run_clear (&r);
  RUN (&r, "learn", "bogus");
  g_assert_cmpint (r.status, ==, 2);
  g_assert_nonnull (strstr (r.err, "unknown command 'bogus'"));
  run_clear (&r);

  RUN (&r, "tokenize", "--help");
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "hanzo tokenize [OPTION"));
  run_clear (&r);
  RUN (&r, "generate", "--help");
  g_assert_nonnull (strstr (r.out, "hanzo generate [OPTION"));
  run_clear (&r);
  RUN (&r, "learn", "sft", "--help");
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "hanzo learn sft [OPTION"));
  run_clear (&r);

  RUN (&r, "synth", "--help");
  g_assert_cmpint (r.status, ==, 0);
  g_assert_null (strstr (r.out, "see above"));
  g_assert_nonnull (strstr (r.out, "Shapes:"));
  run_clear (&r);
}

static void
test_perplexity_messages (void)
{
  g_autofree char *stories = hz_test_shared_path ("models/stories260K.gguf");
  g_autofree char *empty = g_build_filename (tmp_dir, "empty.txt", NULL);
  g_autofree char *expect = NULL;
  Run r = { 0 };

  if (stories == NULL)
    {
      g_test_skip ("../shared/models/stories260K.gguf is absent");
      return;
    }
  g_assert_true (g_file_set_contents (empty, "", 0, NULL));
  RUN (&r, "perplexity", "-m", stories, "-f", empty);
  g_assert_cmpint (r.status, ==, 1);
  expect = g_strdup_printf ("hanzo perplexity: %s: the text has 1 tokens (BOS included); at "
                            "least 2 * n_ctx = 1024 are needed\n", empty);
  g_assert_nonnull (strstr (r.err, expect));
  g_assert_null (strstr (r.err, "perplexity: perplexity:"));
  g_assert_cmpstr (r.out, ==, "");          /* no stray blank line */
  /* the default n_ctx 512 is past stories260K's training context of 128: said so */
  g_assert_nonnull (strstr (r.err, "warning: n_ctx 512 is larger than the model's training "
                                   "context of 128 tokens (use -c 128)"));
  run_clear (&r);
  RUN (&r, "perplexity", "-m", stories, "-f", empty, "-c", "128");
  g_assert_cmpint (r.status, ==, 1);
  g_assert_null (strstr (r.err, "warning"));
  run_clear (&r);
  g_unlink (empty);
}

/* hanzo ARGV... started in the background with stdout to /dev/null and stderr to a pipe,
 * for writers into a FIFO that the test reads. */
static GSubprocess *
spawn_hanzo (const char *const *args)
{
  const char *build = g_getenv ("HZ_BUILD_DIR");
  g_autofree char *bin = g_build_filename (build, "tools", "hanzo", NULL);
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_ptr_array_add (argv, bin);
  for (int i = 0; args[i]; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);
  g_autoptr (GError) error = NULL;
  GSubprocess *p = g_subprocess_newv ((const char *const *) argv->pdata,
                                      G_SUBPROCESS_FLAGS_STDERR_PIPE, &error);
  g_assert_no_error (error);
  return p;
}

/* Reads a FIFO whole while `args` (which write into it) run; returns what came through
 * and sets *status. */
static char *
read_fifo_while (const char *fifo, const char *const *args, int *status)
{
  int fd = open (fifo, O_RDONLY | O_NONBLOCK);   /* opened first: the writer does not block */
  g_assert_cmpint (fd, >=, 0);
  g_autoptr (GSubprocess) p = spawn_hanzo (args);
  GString *got = g_string_new (NULL);
  char buf[4096];
  for (;;)
    {
      ssize_t n = read (fd, buf, sizeof buf);
      if (n > 0)
        {
          g_string_append_len (got, buf, n);
          continue;
        }
      g_assert_true (n == 0 || errno == EAGAIN);
      /* no writer (yet, or any more), or no data now: done once the writer has exited
       * (GLib's worker thread reaps it; the identifier is then NULL) */
      if (g_subprocess_get_identifier (p) == NULL)
        {
          while ((n = read (fd, buf, sizeof buf)) > 0)
            g_string_append_len (got, buf, n);
          break;
        }
      g_usleep (2000);
    }
  close (fd);
  g_autoptr (GError) error = NULL;
  g_assert_true (g_subprocess_wait (p, NULL, &error));
  *status = g_subprocess_get_exit_status (p);
  return g_string_free (got, FALSE);
}

/* `redact -o`: a regular file is replaced only when complete (a failure keeps the user's
 * file: it used to be truncated and then deleted); an existing FIFO or device is written
 * directly and never removed (`-o /dev/full` deleted /dev/full when run as root); -o
 * serves every mode; an empty name is an error, not a crash. */
static void
test_redact_output (void)
{
  g_autofree char *in = g_build_filename (tmp_dir, "in.jsonl", NULL);
  g_autofree char *bad = g_build_filename (tmp_dir, "in-bad.jsonl", NULL);
  g_autofree char *out = g_build_filename (tmp_dir, "kept.jsonl", NULL);
  g_assert_true (g_file_set_contents (in, "{\"id\":\"a\",\"text\":\"mail bob@example.com\"}\n", -1, NULL));
  g_assert_true (g_file_set_contents (bad, "{\"text\":\"x\"}\n{\"text\":5}\n", -1, NULL));
  Run r = { 0 };

  /* the user's existing file survives a failing run, whole */
  g_assert_true (g_file_set_contents (out, "precious\n", -1, NULL));
  RUN (&r, "redact", "--jsonl", bad, "-o", out);
  g_assert_cmpint (r.status, ==, 1);
  run_clear (&r);
  g_autofree char *now = NULL;
  g_assert_true (g_file_get_contents (out, &now, NULL, NULL));
  g_assert_cmpstr (now, ==, "precious\n");
  /* ... and is replaced by a successful one */
  RUN (&r, "redact", "--jsonl", in, "-o", out);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpstr (r.out, ==, "");
  run_clear (&r);
  g_clear_pointer (&now, g_free);
  g_assert_true (g_file_get_contents (out, &now, NULL, NULL));
  g_assert_nonnull (strstr (now, "\"label\":\"EMAIL\""));

  /* -o in the text mode (--json) and with --eval */
  RUN (&r, "redact", "--json", "-o", out, "mail", "bob@example.com");
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpstr (r.out, ==, "");
  run_clear (&r);
  g_clear_pointer (&now, g_free);
  g_assert_true (g_file_get_contents (out, &now, NULL, NULL));
  g_assert_true (g_str_has_prefix (now, "{\"text\":\"mail bob@example.com\""));
  g_autofree char *gold = g_build_filename (tmp_dir, "gold.jsonl", NULL);
  g_assert_true (g_file_set_contents (gold, "{\"id\":\"a\",\"text\":\"mail bob@example.com\","
                                      "\"spans\":[{\"start\":5,\"end\":20,\"label\":\"EMAIL\"}]}\n",
                                      -1, NULL));
  RUN (&r, "redact", "--eval", gold, "-o", out);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpstr (r.out, ==, "");
  run_clear (&r);
  g_clear_pointer (&now, g_free);
  g_assert_true (g_file_get_contents (out, &now, NULL, NULL));
  g_assert_true (g_str_has_prefix (now, "## gold.jsonl (1 records)"));

  /* a FIFO: written through, still a FIFO after a success and after a failure */
  g_autofree char *fifo = g_build_filename (tmp_dir, "out.fifo", NULL);
  g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
  int status = -1;
  g_autofree char *got = read_fifo_while (fifo, (const char *const[]) { "redact", "--jsonl", in,
                                                                        "-o", fifo, NULL }, &status);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (got, "\"label\":\"EMAIL\""));
  g_clear_pointer (&got, g_free);
  got = read_fifo_while (fifo, (const char *const[]) { "redact", "--jsonl", bad, "-o", fifo, NULL },
                         &status);
  g_assert_cmpint (status, ==, 1);
  GStatBuf st;
  g_assert_cmpint (g_lstat (fifo, &st), ==, 0);
  g_assert_true (S_ISFIFO (st.st_mode));
  g_unlink (fifo);

  /* the test's own full device (as root; /dev/full itself is never a target): the write
   * fails with the reason, and the device node stays */
  g_autofree char *full = g_build_filename (tmp_dir, "full", NULL);
  if (mknod (full, S_IFCHR | 0666, makedev (1, 7)) == 0)
    {
      RUN (&r, "redact", "--jsonl", in, "-o", full);
      g_assert_cmpint (r.status, ==, 1);
      g_assert_nonnull (strstr (r.err, "No space left"));
      run_clear (&r);
      /* a text longer than stdio's buffer fails inside a write: the reason is said too
       * (it was "write error") */
      g_autoptr (GString) long_text = g_string_new (NULL);
      while (long_text->len < 300000)
        g_string_append (long_text, "Call John Smith at john@example.com please.\n");
      run_hanzo_full (&r, FALSE, long_text->str, long_text->len,
                      (const char *const[]) { "redact", "-o", full, NULL });
      g_assert_cmpint (r.status, ==, 1);
      g_test_message ("%s", r.err);
      g_assert_nonnull (strstr (r.err, "No space left"));
      run_clear (&r);
      g_assert_cmpint (g_lstat (full, &st), ==, 0);
      g_assert_true (S_ISCHR (st.st_mode));
      g_unlink (full);
    }
  else
    g_test_message ("mknod is not permitted: the device case is not run");

  /* an empty name and a missing folder: errors naming the problem, nothing created */
  RUN (&r, "redact", "--jsonl", in, "-o", "");
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "empty name"));
  g_assert_null (strstr (r.err, "CRITICAL"));
  run_clear (&r);
  g_autofree char *nodir = g_build_filename (tmp_dir, "no-such-dir", "o.jsonl", NULL);
  RUN (&r, "redact", "-o", nodir, "x");
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, nodir));
  run_clear (&r);

  g_unlink (in);
  g_unlink (bad);
  g_unlink (out);
  g_unlink (gold);
}

/* `redact --jsonl -o` interrupted (SIGINT) part-way: the target holds the old file or the
 * whole new one, never a cut one, and no temporary file is left in its folder. */
static void
test_redact_output_interrupt (void)
{
  g_autofree char *sub = g_build_filename (tmp_dir, "interrupt", NULL);
  g_assert_cmpint (g_mkdir (sub, 0700), ==, 0);
  g_autofree char *in = g_build_filename (tmp_dir, "many.jsonl", NULL);
  g_autofree char *out = g_build_filename (sub, "out.jsonl", NULL);
  GString *body = g_string_new (NULL);
  const guint n = 20000;
  for (guint i = 0; i < n; i++)
    g_string_append_printf (body, "{\"id\":\"%u\",\"text\":\"Mary Smith wrote to bob%u@example.com "
                            "from 192.168.1.%u\"}\n", i, i, i % 250);
  g_assert_true (g_file_set_contents (in, body->str, (gssize) body->len, NULL));
  g_string_free (body, TRUE);
  g_assert_true (g_file_set_contents (out, "precious\n", -1, NULL));
  g_autoptr (GSubprocess) p = spawn_hanzo ((const char *const[]) { "redact", "--jsonl", in, "-o", out,
                                                                   NULL });
  /* signalled once it writes its output (an fd into `sub`: the unnamed O_TMPFILE file or
   * the temporary name), or after 10 s */
  g_autofree char *fds = g_strdup_printf ("/proc/%s/fd", g_subprocess_get_identifier (p));
  gboolean writing = FALSE;
  for (int tries = 0; !writing && tries < 5000 && g_subprocess_get_identifier (p); tries++)
    {
      g_autoptr (GDir) fd_dir = g_dir_open (fds, 0, NULL);
      for (const char *e; fd_dir && !writing && (e = g_dir_read_name (fd_dir));)
        {
          g_autofree char *link = g_build_filename (fds, e, NULL);
          g_autofree char *target = g_file_read_link (link, NULL);
          writing = target && g_str_has_prefix (target, sub);
        }
      if (!writing)
        g_usleep (2000);
    }
  g_usleep (20 * 1000);
  g_subprocess_send_signal (p, SIGINT);
  g_autoptr (GError) error = NULL;
  g_assert_true (g_subprocess_wait (p, NULL, &error));
  const gboolean killed = g_subprocess_get_if_signaled (p);
  g_test_message ("redact --jsonl %s%s", killed ? "interrupted" : "finished before the signal",
                  writing ? " (it was writing)" : "");
  g_autofree char *now = NULL;
  g_assert_true (g_file_get_contents (out, &now, NULL, NULL));
  if (killed)
    g_assert_cmpstr (now, ==, "precious\n");
  else
    {
      g_assert_cmpint (g_subprocess_get_exit_status (p), ==, 0);
      guint lines = 0;
      for (const char *c = now; *c; c++)
        lines += *c == '\n';
      g_assert_cmpuint (lines, ==, n);
    }
  g_autoptr (GDir) d = g_dir_open (sub, 0, NULL);
  const char *e;
  while ((e = g_dir_read_name (d)))
    if (strcmp (e, "out.jsonl") != 0)
      g_error ("left behind: %s", e);
  g_unlink (out);
  g_rmdir (sub);
  g_unlink (in);
}

/* Options that the chosen mode of `redact` would ignore are usage errors. */
static void
test_redact_usage (void)
{
  Run r = { 0 };
  RUN (&r, "redact", "--pred", missing, "x");
  expect_usage (&r, "--pred needs --eval");
  RUN (&r, "redact", "--model-tokens", "64", "x");
  expect_usage (&r, "--model-tokens needs --model");
  RUN (&r, "redact", "--jsonl", missing, "--eval", missing);
  expect_usage (&r, "--jsonl and --eval");
  RUN (&r, "redact", "--json", "--jsonl", missing);
  expect_usage (&r, "--json is for TEXT");
  RUN (&r, "redact", "--json", "--eval", missing);
  expect_usage (&r, "--json is for TEXT");
  RUN (&r, "redact", "--mode", "numbered", "--eval", missing);
  expect_usage (&r, "--mode is for TEXT");
  RUN (&r, "redact", "--jsonl", missing, "some", "text");
  expect_usage (&r, "TEXT arguments");
  RUN (&r, "redact", "--seed", "7", "x");
  expect_usage (&r, "--seed is for -m pseudonym");
}

/* `redact -m pseudonym`: a random seed by default (fakes differ from run to run, so no table
 * from fakes back to originals can be built from the binary), the same fakes with --seed */
static void
test_redact_pseudonym_seed (void)
{
  static const char text[] = "Otto Brenner, NRIC S1234567D, card 4111 1111 1111 1111, born 1985-03-14";
  Run a = { 0 }, b = { 0 };
  RUN (&a, "redact", "-m", "pseudonym", "--seed", "7", text);
  RUN (&b, "redact", "-m", "pseudonym", "--seed", "7", text);
  g_assert_cmpint (a.status, ==, 0);
  g_assert_cmpstr (a.out, ==, b.out);
  g_assert_null (strstr (a.out, "S1234567D"));
  /* 8 runs without --seed: not all the same (equal by chance with probability ~0) */
  gboolean differ = FALSE;
  for (int k = 0; k < 8 && !differ; k++)
    {
      RUN (&b, "redact", "-m", "pseudonym", text);
      g_assert_cmpint (b.status, ==, 0);
      differ = strcmp (a.out, b.out) != 0;
    }
  g_assert_true (differ);
  run_clear (&a);
  run_clear (&b);
}

/* `redact --eval GOLD --pred PRED`: predictions are matched by "id" (any order), else by
 * position; a prediction set that is not the gold set is an error naming the --pred file
 * (a missing prediction used to count as "predicted nothing", silently). */
static void
test_redact_eval_pred (void)
{
  g_autofree char *gold = g_build_filename (tmp_dir, "g.jsonl", NULL);
  g_autofree char *pred = g_build_filename (tmp_dir, "p.jsonl", NULL);
  static const char rec_a[] = "{\"id\":\"a\",\"text\":\"mail bob@example.com\",\"spans\":"
                              "[{\"start\":5,\"end\":20,\"label\":\"EMAIL\"}]}\n";
  static const char rec_b[] = "{\"id\":\"b\",\"text\":\"call Ann\",\"spans\":"
                              "[{\"start\":5,\"end\":8,\"label\":\"PERSON\"}]}\n";
  static const char rec_c[] = "{\"id\":\"c\",\"text\":\"hi\",\"spans\":[]}\n";
  g_autofree char *ab = g_strconcat (rec_a, rec_b, NULL);
  g_autofree char *ba = g_strconcat (rec_b, rec_a, NULL);
  g_autofree char *abc = g_strconcat (rec_a, rec_b, rec_c, NULL);
  g_assert_true (g_file_set_contents (gold, ab, -1, NULL));
  Run r = { 0 };

  /* the same records in another order: matched by id, perfect scores */
  g_assert_true (g_file_set_contents (pred, ba, -1, NULL));
  RUN (&r, "redact", "--eval", gold, "--pred", pred);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "| label-agnostic         |     2 |     2 | 1.000 | 1.000 |"));
  run_clear (&r);
  /* a prediction missing */
  g_assert_true (g_file_set_contents (pred, rec_a, -1, NULL));
  RUN (&r, "redact", "--eval", gold, "--pred", pred);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "p.jsonl has no record with \"id\" \"b\""));
  g_assert_cmpstr (r.out, ==, "");
  run_clear (&r);
  /* one too many */
  g_assert_true (g_file_set_contents (pred, abc, -1, NULL));
  RUN (&r, "redact", "--eval", gold, "--pred", pred);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "p.jsonl: record 3 (\"id\" \"c\") matches no gold record"));
  g_assert_cmpstr (r.out, ==, "");
  run_clear (&r);
  /* an id twice */
  g_autofree char *aa = g_strconcat (rec_a, rec_a, NULL);
  g_assert_true (g_file_set_contents (pred, aa, -1, NULL));
  RUN (&r, "redact", "--eval", gold, "--pred", pred);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "p.jsonl:2: \"id\" \"a\" appears twice"));
  run_clear (&r);

  /* records without ids: by position; fewer predictions than gold records is an error */
  g_assert_true (g_file_set_contents (gold, "{\"text\":\"x\"}\n{\"text\":\"y\"}\n", -1, NULL));
  g_assert_true (g_file_set_contents (pred, "{\"text\":\"x\"}\n{\"text\":\"y\"}\n", -1, NULL));
  RUN (&r, "redact", "--eval", gold, "--pred", pred);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "(2 records)"));
  run_clear (&r);
  g_assert_true (g_file_set_contents (pred, "{\"text\":\"x\"}\n", -1, NULL));
  RUN (&r, "redact", "--eval", gold, "--pred", pred);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "p.jsonl has 1 records, fewer than the gold records"));
  run_clear (&r);
  g_unlink (gold);
  g_unlink (pred);
}

/* True when no byte below 0x20 is left raw inside a JSON string literal of `text` (RFC
 * 8259 §7; Python's json.loads refuses them). */
static gboolean
strict_json_strings (const char *text)
{
  gboolean in_string = FALSE;
  for (const char *p = text; *p; p++)
    {
      const guchar c = (guchar) *p;
      if (in_string && c < 0x20)
        return FALSE;
      if (in_string && c == '\\')
        p++;
      else if (c == '"')
        in_string = !in_string;
    }
  return TRUE;
}

/* U+001F (which json-glib 1.6.6 leaves raw) and the other control characters in the
 * input of `redact --json` / `--jsonl` and in the prompt of `generate --json`: escaped. */
static void
test_json_controls (void)
{
  static const char input[] = "a\x1f" "b\x01 mail bob@example.com";
  Run r = { 0 };
  run_hanzo_full (&r, FALSE, input, sizeof input - 1,
                  (const char *const[]) { "redact", "--json", NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_assert_true (strict_json_strings (r.out));
  g_assert_nonnull (strstr (r.out, "a\\u001fb\\u0001"));
  run_clear (&r);

  g_autofree char *in = g_build_filename (tmp_dir, "ctl.jsonl", NULL);
  g_assert_true (g_file_set_contents (in, "{\"id\":\"x\\u001f\",\"text\":\"a\\u001fb\"}\n", -1, NULL));
  RUN (&r, "redact", "--jsonl", in);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpstr (r.out, ==, "{\"id\":\"x\\u001f\",\"text\":\"a\\u001fb\",\"spans\":[]}\n");
  run_clear (&r);
  g_unlink (in);

  g_autofree char *stories = hz_test_shared_path ("models/stories260K.gguf");
  if (stories == NULL)
    {
      g_test_message ("../shared/models/stories260K.gguf is absent: generate --json not run");
      return;
    }
  RUN (&r, "generate", "-m", stories, "-p", "Once\x1f upon", "-n", "4", "--seed", "1", "--json");
  g_assert_cmpint (r.status, ==, 0);
  g_assert_true (strict_json_strings (r.out));
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_data (parser, r.out, -1, NULL));
  run_clear (&r);
}

/* An empty output name is an error with a message, not a CRITICAL and a crash in the GGUF
 * writer; a missing or non-GGUF input is named, its magic shown escaped and in hex. */
static void
test_file_names (void)
{
  Run r = { 0 };
  RUN (&r, "quantize", missing, "x.gguf", "--type", "Q8_0");
  g_assert_cmpint (r.status, ==, 1);
  g_autofree char *msg = g_strdup_printf ("hanzo quantize: cannot load model '%s': cannot open: "
                                          "No such file", missing);
  g_assert_nonnull (strstr (r.err, msg));
  run_clear (&r);
  g_autofree char *text = g_build_filename (tmp_dir, "text.gguf", NULL);
  g_assert_true (g_file_set_contents (text, "\x1b[2Jhello", -1, NULL));
  RUN (&r, "quantize", text, "x.gguf", "--type", "Q8_0");
  g_assert_cmpint (r.status, ==, 1);
  g_clear_pointer (&msg, g_free);
  msg = g_strdup_printf ("hanzo quantize: cannot load model '%s': not a GGUF file: magic is "
                         "\"\\x1b[2J\" (bytes 1b 5b 32 4a)", text);
  g_assert_nonnull (strstr (r.err, msg));
  g_assert_null (strchr (r.err, '\x1b'));
  run_clear (&r);
  g_assert_true (g_file_set_contents (text, "GG", -1, NULL));   /* shorter than the magic */
  RUN (&r, "quantize", text, "x.gguf", "--type", "Q8_0");
  g_assert_cmpint (r.status, ==, 1);
  g_clear_pointer (&msg, g_free);
  msg = g_strdup_printf ("hanzo quantize: cannot load model '%s': The file is incomplete: it "
                         "ends after 2 bytes, in header: magic", text);
  g_assert_nonnull (strstr (r.err, msg));
  run_clear (&r);
  g_unlink (text);

  g_autofree char *stories = hz_test_shared_path ("models/stories260K.gguf");
  if (stories == NULL)
    {
      g_test_skip ("../shared/models/stories260K.gguf is absent: the empty -o cases are not run");
      return;
    }
  RUN (&r, "quantize", stories, "", "--type", "Q8_0");
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "empty name"));
  g_assert_null (strstr (r.err, "CRITICAL"));
  run_clear (&r);
  RUN (&r, "synth", "--shape", "tiny-qwen3moe", "--type", "Q8_0", "--vocab", stories, "-o", "");
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "empty name"));
  g_assert_null (strstr (r.err, "CRITICAL"));
  run_clear (&r);
  /* learn merge: an adapter from a one-step SFT run, merged to "" */
  g_autofree char *data = g_build_filename (tmp_dir, "sft.jsonl", NULL);
  g_autofree char *adapter = g_build_filename (tmp_dir, "adapter", NULL);
  g_assert_true (g_file_set_contents (data, "{\"prompt\": \"Once upon\", \"response\": \"a time\"}\n"
                                      "{\"prompt\": \"The cat\", \"response\": \"sat\"}\n", -1, NULL));
  RUN (&r, "learn", "sft", "-m", stories, "--data", data, "-o", adapter, "--steps", "1", "--batch", "1",
       "--heldout", "0");
  g_assert_cmpint (r.status, ==, 0);
  run_clear (&r);
  RUN (&r, "learn", "merge", "-m", stories, "-a", adapter, "-o", "");
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "empty name"));
  g_assert_null (strstr (r.err, "CRITICAL"));
  run_clear (&r);
  g_autoptr (GDir) d = g_dir_open (adapter, 0, NULL);
  for (const char *e; d && (e = g_dir_read_name (d));)
    {
      g_autofree char *f = g_build_filename (adapter, e, NULL);
      g_unlink (f);
    }
  g_rmdir (adapter);
  g_unlink (data);
}

/* What the command line says about itself and about bad input (the new user's report of
 * session 11): --version, `help COMMAND`, the options the usage lines name, one form of
 * "cannot load model 'PATH': REASON" in every command (a folder, an empty file, a cut one),
 * user input echoed with its control bytes escaped, ASCII named where only ASCII goes. */
static void
test_messages (void)
{
  Run r = { 0 };
  RUN (&r, "--version");
  g_assert_cmpint (r.status, ==, 0);
  g_assert_true (g_str_has_prefix (r.out, "hanzo ") && g_str_has_suffix (r.out, "\n"));
  g_assert_true (g_ascii_isdigit (r.out[6]));
  run_clear (&r);
  Run h = { 0 };
  RUN (&r, "help", "pull");
  RUN (&h, "pull", "--help");
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpstr (r.out, ==, h.out);
  for (const char *const *w = (const char *const[]) { "Q4_K_M", "HF_TOKEN", "hub-login", "130",
                                                      "Ctrl+C", NULL }; *w; w++)
    g_assert_nonnull (strstr (r.out, *w));
  run_clear (&r);
  run_clear (&h);
  RUN (&r, "tokenize");
  expect_usage (&r, "[--vocab V.gguf] [--no-bos] [--special] [--raw-bytes] [--pieces] "
                    "{TEXT | -f FILE | -f -}");
  RUN (&r, "learn", "--help");
  g_assert_cmpint (r.status, ==, 0);
  /* the summaries in one column */
  g_auto (GStrv) lines = g_strsplit (r.out, "\n", -1);
  int col = -1;
  for (char **l = lines; *l; l++)
    if (g_str_has_prefix (*l, "  ") && (strstr (*l, "sft ") || strstr (*l, "fed-config ")))
      {
        const char *name_end = strchr (*l + 2, ' ');
        int c = (int) (name_end - *l);
        while ((*l)[c] == ' ')
          c++;
        if (col < 0)
          col = c;
        g_assert_cmpint (c, ==, col);
      }
  g_assert_cmpint (col, >, 0);
  run_clear (&r);

  /* cannot load model 'PATH': REASON */
  g_autofree char *empty = g_build_filename (tmp_dir, "empty.gguf", NULL);
  g_assert_true (g_file_set_contents (empty, "", 0, NULL));
  g_autofree char *text = g_build_filename (tmp_dir, "text.txt", NULL);
  g_assert_true (g_file_set_contents (text, "Once upon a time", -1, NULL));
  static const char *const cmds[][6] = {
    { "generate", "-p", "x", "-m", NULL }, { "chat", "-m", NULL }, { "info", NULL },
    { "tokenize", "-m", NULL }, { "redact", "--model", NULL }, { "bench", "-m", NULL },
    { "mcp", "-m", NULL }, { "perplexity", "-m", NULL }, { "quantize", NULL },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cmds); i++)
    for (int k = 0; k < 2; k++)
      {
        const char *path = k == 0 ? empty : tmp_dir;
        const char *argv[10];
        int n = 0;
        for (; cmds[i][n]; n++)
          argv[n] = cmds[i][n];
        argv[n++] = path;
        if (g_str_equal (cmds[i][0], "tokenize"))
          argv[n++] = "hello";
        g_autofree char *out = g_build_filename (tmp_dir, "quantized.gguf", NULL);
        if (g_str_equal (cmds[i][0], "perplexity"))   /* the text is read first */
          {
            argv[n++] = "-f";
            argv[n++] = text;
          }
        if (g_str_equal (cmds[i][0], "quantize"))
          {
            argv[n++] = out;
            argv[n++] = "--type";
            argv[n++] = "Q8_0";
          }
        argv[n] = NULL;
        run_hanzo_full (&r, FALSE, "", 0, argv);
        g_autofree char *want = g_strdup_printf ("hanzo %s: cannot load model '%s': %s",
                                                 cmds[i][0], path,
                                                 k == 0 ? "the file is empty\n" : "a folder, but "
                                                 "not a Hugging Face model folder");
        g_test_message ("%s", r.err);
        g_assert_cmpint (r.status, ==, 1);
        g_assert_true (g_str_has_prefix (r.err, want));
        run_clear (&r);
      }

  /* control bytes in what the user typed come back escaped */
  RUN (&r, "pull", "a/b\x01");
  expect_usage (&r, "'a/b\\x01' is not REPO");
  RUN (&r, "pull", "--revision", "\x1b[31mred", "a/b");
  g_assert_null (strchr (r.err, '\x1b'));
  expect_usage (&r, "invalid revision '\\x1b[31mred'");
  RUN (&r, "\x1b]0;title\x07");
  g_assert_null (strchr (r.err, '\x1b'));
  expect_usage (&r, "unknown command '\\x1b]0;title\\x07'");
  RUN (&r, "generate", "--bogus\x1b[2J");
  g_assert_null (strchr (r.err, '\x1b'));
  expect_usage (&r, "--bogus\\x1b[2J");
  g_autofree char *odd = g_build_filename (tmp_dir, "odd\x1b[2J\xe2\x80\xae.gguf", NULL);
  RUN (&r, "info", odd);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_null (strchr (r.err, '\x1b'));
  g_assert_nonnull (strstr (r.err, "odd\\x1b[2J\\u{202e}.gguf"));   /* bidi override too */
  run_clear (&r);
  /* only ASCII goes into a search, and the message says so */
  RUN (&r, "search", "\xc3\xbc");
  expect_usage (&r, "1 to 96 ASCII letters and digits");
  g_unlink (empty);
  g_unlink (text);
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  int rc;

  g_test_init (&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp ("hz-cli-XXXXXX", &error);
  g_assert_no_error (error);
  missing = g_build_filename (tmp_dir, "missing.gguf", NULL);
  g_test_add_func ("/hanzo-cli/threads", test_threads);
  g_test_add_func ("/hanzo-cli/ranges", test_ranges);
  g_test_add_func ("/hanzo-cli/utf8-options", test_utf8_options);
  g_test_add_func ("/hanzo-cli/redact-nul", test_redact_nul);
  g_test_add_func ("/hanzo-cli/redact-bad-records", test_redact_bad_records);
  g_test_add_func ("/hanzo-cli/redact-json-stream", test_redact_json_stream);
  g_test_add_func ("/hanzo-cli/chat-utf8-stdin", test_chat_utf8_stdin);
  g_test_add_func ("/hanzo-cli/bench-in-cache", test_bench_in_cache);
  g_test_add_func ("/hanzo-cli/help", test_help);
  g_test_add_func ("/hanzo-cli/output-errors", test_output_errors);
  g_test_add_func ("/hanzo-cli/learn-out-dir", test_learn_out_dir);
  g_test_add_func ("/hanzo-cli/perplexity-messages", test_perplexity_messages);
  g_test_add_func ("/hanzo-cli/redact-output", test_redact_output);
  g_test_add_func ("/hanzo-cli/redact-output-interrupt", test_redact_output_interrupt);
  g_test_add_func ("/hanzo-cli/redact-usage", test_redact_usage);
  g_test_add_func ("/hanzo-cli/redact-pseudonym-seed", test_redact_pseudonym_seed);
  g_test_add_func ("/hanzo-cli/redact-eval-pred", test_redact_eval_pred);
  g_test_add_func ("/hanzo-cli/json-controls", test_json_controls);
  g_test_add_func ("/hanzo-cli/file-names", test_file_names);
  g_test_add_func ("/hanzo-cli/messages", test_messages);
  rc = g_test_run ();
  g_rmdir (tmp_dir);
  g_free (missing);
  g_free (tmp_dir);
  return rc;
}
