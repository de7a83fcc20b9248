/* tests/tools/test-hanzo-cli-args.c — options of the `hanzo` subcommands that used to be
 * accepted or misreported (new-user pass): `learn sft --dp-*` that silently trained without
 * differential privacy, `learn grpo -G 1`, `learn sft -o NEW` interrupted by SIGINT/SIGTERM
 * (the folders it made are removed), text that is not UTF-8 in `tokenize`,
 * `perplexity`, `generate`, `chat` and `redact` (one behaviour: warning + U+FFFD), `--lora PATH:abc`, `generate -c 1` (nothing
 * on stdout), `tokenize -m FOLDER` (a Hugging Face folder) and the `hanzo info` messages.
 * Option checks run before any model is loaded (missing paths suffice); the rest needs
 * ../shared/models/stories260K.gguf and skips with a message without it. */
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>

#include "../hz-test-util.h"
#include "../engine/hf-folder.h"
#include "hanzo-cli-run.h"

static char *tmp_dir;

static char *
tmp_path (const char *name)
{
  return g_build_filename (tmp_dir, name, NULL);
}

/* Asserts exit status 2 and `msg` in stderr. */
static void
expect_usage (const HzCliRun *r, const char *msg)
{
  if (r->status != 2 || strstr (r->err, msg) == NULL)
    g_error ("expected exit 2 and \"%s\", got %d: %s", msg, r->status, r->err);
}

/* --dp-* values that would train without differential privacy, or be ignored, are usage
 * errors; nothing is created for -o. */
static void
test_learn_dp_options (void)
{
  g_autofree char *out = tmp_path ("dp-out");
  static const struct { const char *a[4]; const char *msg; } cases[] = {
    { { "--dp-noise", "-1", "--dp-rate", "5" }, "--dp-noise must be a positive finite number" },
    { { "--dp-noise", "nan" }, "--dp-noise must be a positive finite number" },
    { { "--dp-noise", "inf" }, "--dp-noise must be a positive finite number" },
    { { "--dp-noise", "0" }, "--dp-noise must be a positive finite number" },
    { { "--dp-noise", "1x" }, "--dp-noise: '1x' is not a number" },
    { { "--dp-rate", "0.2", "--dp-clip", "0.5" }, "needs --dp-noise Z" },
    { { "--dp-clip", "0.5" }, "--dp-clip needs --dp-noise Z" },
    { { "--dp-delta", "1e-5" }, "--dp-delta needs --dp-noise Z" },
    { { "--dp-noise", "1", "--dp-rate", "0" }, "--dp-rate must be in (0, 1]" },
    { { "--dp-noise", "1", "--dp-rate", "1.5" }, "--dp-rate must be in (0, 1]" },
    { { "--dp-noise", "1", "--dp-rate", "nan" }, "--dp-rate must be in (0, 1]" },
    { { "--dp-noise", "1", "--dp-clip", "0" }, "--dp-clip must be a positive finite number" },
    { { "--dp-noise", "1", "--dp-clip", "-inf" }, "--dp-clip must be a positive finite number" },
    { { "--dp-noise", "1", "--dp-delta", "1" }, "--dp-delta must be in (0, 1)" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const char *args[16] = { "learn", "sft", "-m", "/nonexistent/base.gguf", "--data",
                               "/nonexistent/d.jsonl", "-o", out };
      int n = 8;
      for (int k = 0; k < 4 && cases[i].a[k]; k++)
        args[n++] = cases[i].a[k];
      g_auto (HzCliRun) r = { 0 };
      hz_cli_run (&r, NULL, 0, args);
      expect_usage (&r, cases[i].msg);
      g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
    }
  /* valid DP options get past the checks (to the missing model: exit 1) */
  g_auto (HzCliRun) r = { 0 };
  hz_cli_run (&r, NULL, 0, (const char *const[]) {
    "learn", "sft", "-m", "/nonexistent/base.gguf", "--data", "/nonexistent/d.jsonl", "-o", out,
    "--dp-noise", "1.1", "--dp-clip", "0.5", "--dp-rate", "0.01", "--dp-delta", "1e-5", NULL });
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "/nonexistent/base.gguf"));
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));   /* removed again */
}

static void
test_learn_grpo_group (void)
{
  g_auto (HzCliRun) r = { 0 };
  hz_cli_run (&r, NULL, 0, (const char *const[]) {
    "learn", "grpo", "-m", "/nonexistent/base.gguf", "--prompts", "/nonexistent/p.jsonl",
    "--reward", "contains:x", "-o", "/nonexistent/out", "-G", "1", NULL });
  expect_usage (&r, "--group must be at least 2");
}

/* learn sft -o NEW/a/b killed by `sig` while it trains: the folders it made are gone (an
 * existing -o folder stays), and it died of the signal. */
static void
sft_interrupted (const char *model, int sig, gboolean existing)
{
  g_autofree char *data = tmp_path ("sft.jsonl");
  g_autoptr (GString) d = g_string_new (NULL);
  for (int i = 0; i < 20; i++)
    g_string_append_printf (d, "{\"prompt\": \"Once upon a time %d\", \"response\": "
                               "\" there was a little cat.\"}\n", i);
  g_assert_true (g_file_set_contents (data, d->str, -1, NULL));
  g_autofree char *top = tmp_path ("sft-new");
  g_autofree char *out = existing ? g_strdup (top) : g_build_filename (top, "a", "b", NULL);
  if (existing)
    g_assert_cmpint (g_mkdir (top, 0700), ==, 0);

  g_autoptr (GPtrArray) argv = hz_cli_argv ((const char *const[]) {
    "learn", "sft", "-m", model, "--data", data, "-o", out, "--steps", "10000000",
    "--batch", "1", "--max-tokens", "16", "--rank", "1", NULL });
  g_autoptr (GError) error = NULL;
  g_autoptr (GSubprocess) p = g_subprocess_newv ((const char *const *) argv->pdata,
                                                 G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                 G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error);
  g_free (argv->pdata[0]);
  g_assert_no_error (error);
  /* the first step's line: the folders exist and training runs */
  g_autoptr (GDataInputStream) in = g_data_input_stream_new (g_subprocess_get_stdout_pipe (p));
  gboolean training = FALSE;
  for (;;)
    {
      g_autofree char *line = g_data_input_stream_read_line (in, NULL, NULL, &error);
      g_assert_no_error (error);
      if (line == NULL)
        break;
      if (g_str_has_prefix (line, "step "))
        {
          training = TRUE;
          break;
        }
    }
  g_assert_true (training);
  g_assert_true (g_file_test (out, G_FILE_TEST_IS_DIR));
  g_subprocess_send_signal (p, sig);
  g_assert_true (g_subprocess_wait (p, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_signaled (p));
  g_assert_cmpint (g_subprocess_get_term_sig (p), ==, sig);
  if (existing)
    {
      g_assert_true (g_file_test (out, G_FILE_TEST_IS_DIR));
      g_assert_cmpint (g_rmdir (out), ==, 0);   /* and nothing was left in it */
    }
  else
    g_assert_false (g_file_test (top, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (tmp_dir, G_FILE_TEST_IS_DIR));
  g_unlink (data);
}

static void
test_learn_sft_signal (void)
{
  g_autofree char *model = hz_test_shared_path ("models/stories260K.gguf");
  if (!model)
    return;
  sft_interrupted (model, SIGINT, FALSE);
  sft_interrupted (model, SIGTERM, FALSE);
  sft_interrupted (model, SIGINT, TRUE);
}

/* tokenize: bytes that are not UTF-8 are tokenized as U+FFFD, with a warning */
static void
test_tokenize_utf8 (void)
{
  g_autofree char *model = hz_test_shared_path ("models/stories260K.gguf");
  if (!model)
    return;
  g_auto (HzCliRun) bad = { 0 }, good = { 0 }, file = { 0 };
  hz_cli_run (&bad, NULL, 0, (const char *const[]) { "tokenize", "-m", model,
                                                     "Once \xff upon", NULL });
  hz_cli_run (&good, NULL, 0, (const char *const[]) { "tokenize", "-m", model,
                                                      "Once \xef\xbf\xbd upon", NULL });
  g_assert_cmpint (bad.status, ==, 0);
  g_assert_cmpint (good.status, ==, 0);
  g_assert_cmpstr (bad.out, ==, good.out);
  g_assert_nonnull (strstr (bad.err, "warning: the text is not valid UTF-8 (first bad byte at "
                                     "offset 5); invalid bytes are replaced by U+FFFD"));
  g_assert_cmpstr (good.err, ==, "");
  /* --file - (stdin) with a NUL byte: the same, the file named */
  hz_cli_run (&file, "Once \0 upon", 11, (const char *const[]) { "tokenize", "-m", model,
                                                                 "--file", "-", NULL });
  g_assert_cmpint (file.status, ==, 0);
  g_assert_cmpstr (file.out, ==, good.out);
  g_assert_nonnull (strstr (file.err, "warning: stdin is not valid UTF-8"));
}

/* Runs `hanzo ARGS` with `bad_in` on stdin and again with the text as U+FFFD (`good_args`,
 * `good_in`): both succeed with the same output, only the first warns with `warning`. */
static void
expect_repaired (const char *const *bad_args, const char *bad_in,
                 const char *const *good_args, const char *good_in, const char *warning)
{
  g_auto (HzCliRun) rb = { 0 }, rg = { 0 };
  hz_cli_run (&rb, bad_in, bad_in ? strlen (bad_in) : 0, bad_args);
  hz_cli_run (&rg, good_in, good_in ? strlen (good_in) : 0, good_args);
  g_test_message ("hanzo %s: exit %d; %s", bad_args[0], rb.status, rb.err);
  g_assert_cmpint (rb.status, ==, 0);
  g_assert_cmpint (rg.status, ==, 0);
  g_autofree char *want = g_strdup_printf ("hanzo %s: warning: %s; invalid bytes are replaced "
                                           "by U+FFFD", bad_args[0], warning);
  if (!strstr (rb.err, want))
    g_error ("stderr lacks \"%s\": %s", want, rb.err);
  g_assert_null (strstr (rg.err, "not valid UTF-8"));
  g_assert_cmpstr (rb.out, ==, rg.out);   /* as if U+FFFD had been given */
}

/* One behaviour for text that is not UTF-8 (issue 20): `generate --prompt`, `chat --system`
 * and a chat line, `tokenize` and `redact` all go on with U+FFFD in place of the bad bytes,
 * after the same warning (`generate` used to refuse it). */
static void
test_utf8_everywhere (void)
{
  g_autofree char *m = hz_test_shared_path ("models/stories260K.gguf");
  if (!m)
    return;
#define BAD "Once \xff upon"
#define GOOD "Once \xef\xbf\xbd upon"
  expect_repaired ((const char *[]) { "generate", "-m", m, "-n", "8", "--temp", "0", "-p", BAD,
                                      NULL }, NULL,
                   (const char *[]) { "generate", "-m", m, "-n", "8", "--temp", "0", "-p", GOOD,
                                      NULL }, NULL,
                   "--prompt is not valid UTF-8 (first bad byte at offset 5)");
  expect_repaired ((const char *[]) { "chat", "-m", m, "-n", "4", "--temp", "0", "--system",
                                      "Be kind. \xff", NULL }, "hello\n",
                   (const char *[]) { "chat", "-m", m, "-n", "4", "--temp", "0", "--system",
                                      "Be kind. \xef\xbf\xbd", NULL }, "hello\n",
                   "--system is not valid UTF-8 (first bad byte at offset 9)");
  expect_repaired ((const char *[]) { "chat", "-m", m, "-n", "4", "--temp", "0", NULL },
                   BAD "\n",
                   (const char *[]) { "chat", "-m", m, "-n", "4", "--temp", "0", NULL },
                   GOOD "\n", "the line is not valid UTF-8 (first bad byte at offset 5)");
  expect_repaired ((const char *[]) { "tokenize", "-m", m, BAD, NULL }, NULL,
                   (const char *[]) { "tokenize", "-m", m, GOOD, NULL }, NULL,
                   "the text is not valid UTF-8 (first bad byte at offset 5)");
  expect_repaired ((const char *[]) { "redact", NULL }, BAD,
                   (const char *[]) { "redact", NULL }, GOOD,
                   "the input is not valid UTF-8 (first bad byte at offset 5)");
#undef BAD
#undef GOOD
}

/* The "Final estimate" line of a perplexity run (fails the test without one). */
static char *
final_estimate (const HzCliRun *r)
{
  if (r->status != 0)
    g_error ("perplexity failed (%d): %s", r->status, r->err);
  const char *f = strstr (r->out, "Final estimate: PPL = ");
  g_assert_nonnull (f);
  return g_strdup (f);
}

/* perplexity: the text is scored with U+FFFD for the bad bytes, after a warning */
static void
test_perplexity_utf8 (void)
{
  g_autofree char *model = hz_test_shared_path ("models/stories260K.gguf");
  if (!model)
    return;
  g_autofree char *bad_path = tmp_path ("bad.txt"), *good_path = tmp_path ("good.txt");
  g_autoptr (GString) bad = g_string_new (NULL), good = g_string_new (NULL);
  for (int i = 0; i < 30; i++)
    {
      g_string_append (bad, "Once upon a time \xff\xfe there was a cat. ");
      g_string_append (good, "Once upon a time \xef\xbf\xbd\xef\xbf\xbd there was a cat. ");
    }
  g_assert_true (g_file_set_contents (bad_path, bad->str, bad->len, NULL));
  g_assert_true (g_file_set_contents (good_path, good->str, good->len, NULL));
  g_auto (HzCliRun) rb = { 0 }, rg = { 0 };
  hz_cli_run (&rb, NULL, 0, (const char *const[]) { "perplexity", "-m", model, "-f", bad_path,
                                                    "-c", "128", "-t", "1", NULL });
  hz_cli_run (&rg, NULL, 0, (const char *const[]) { "perplexity", "-m", model, "-f", good_path,
                                                    "-c", "128", "-t", "1", NULL });
  g_autofree char *eb = final_estimate (&rb), *eg = final_estimate (&rg);
  g_assert_cmpstr (eb, ==, eg);
  g_autofree char *warn = g_strdup_printf ("warning: %s is not valid UTF-8 (first bad byte at "
                                           "offset 17)", bad_path);
  g_assert_nonnull (strstr (rb.err, warn));
  g_assert_null (strstr (rg.err, "not valid UTF-8"));
  g_unlink (bad_path);
  g_unlink (good_path);
}

/* generate: `--lora DIR:abc` names the bad scale; `-c 1` (prompt longer than the context)
 * fails with nothing on stdout */
static void
test_generate_messages (void)
{
  g_autofree char *model = hz_test_shared_path ("models/stories260K.gguf");
  if (!model)
    return;
  g_autofree char *lora = g_strconcat (tmp_dir, ":abc", NULL);
  g_auto (HzCliRun) r = { 0 }, c = { 0 };
  hz_cli_run (&r, NULL, 0, (const char *const[]) { "generate", "-m", model, "-p", "Once",
                                                   "-n", "2", "--lora", lora, NULL });
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "bad scale 'abc'"));
  hz_cli_run (&c, NULL, 0, (const char *const[]) { "generate", "-m", model, "-p",
                                                   "Once upon a time", "-n", "2", "-c", "1",
                                                   NULL });
  g_assert_cmpint (c.status, ==, 1);
  g_assert_cmpstr (c.out, ==, "");
  g_assert_nonnull (strstr (c.err, "context"));
}

/* tokenize -m FOLDER: a Hugging Face folder (here without tokenizer.json: --vocab) gives
 * the GGUF's ids; errors read "hanzo CMD: cannot load model 'PATH': REASON", the path once */
static void
test_folder_tokenize_and_info (void)
{
  g_autofree char *model = hz_test_shared_path ("models/stories260K.gguf");
  if (!model)
    return;
  g_autofree char *dir = tmp_path ("hf");
  hz_test_write_hf_folder (model, dir, HZ_HF_F32, FALSE);
  g_auto (HzCliRun) f = { 0 }, g = { 0 }, none = { 0 }, info = { 0 };
  hz_cli_run (&g, NULL, 0, (const char *const[]) { "tokenize", "-m", model,
                                                   "Once upon a time", NULL });
  hz_cli_run (&f, NULL, 0, (const char *const[]) { "tokenize", "-m", dir, "--vocab", model,
                                                   "Once upon a time", NULL });
  g_assert_cmpint (g.status, ==, 0);
  g_assert_cmpint (f.status, ==, 0);
  g_assert_cmpstr (f.out, ==, g.out);
  /* without --vocab: why it cannot, naming the folder once */
  hz_cli_run (&none, NULL, 0, (const char *const[]) { "tokenize", "-m", dir, "x", NULL });
  g_assert_cmpint (none.status, ==, 1);
  g_autofree char *want = g_strdup_printf ("hanzo tokenize: cannot load model '%s': no "
                                           "tokenizer.json", dir);
  g_assert_true (g_str_has_prefix (none.err, want));
  hz_cli_run (&info, NULL, 0, (const char *const[]) { "info", dir, NULL });
  g_assert_cmpint (info.status, ==, 1);
  g_autofree char *want_info = g_strdup_printf ("hanzo info: cannot load model '%s': no "
                                                "tokenizer.json", dir);
  g_assert_true (g_str_has_prefix (info.err, want_info));
  hz_test_rm_dir (dir);

  g_auto (HzCliRun) missing = { 0 };
  hz_cli_run (&missing, NULL, 0, (const char *const[]) { "info", "/nonexistent/m.gguf", NULL });
  g_assert_cmpint (missing.status, ==, 1);
  g_assert_true (g_str_has_prefix (missing.err, "hanzo info: cannot load model "
                                                "'/nonexistent/m.gguf': cannot open"));
  g_assert_null (strstr (strstr (missing.err, "m.gguf") + 1, "/nonexistent/m.gguf"));   /* once */
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_autoptr (GError) error = NULL;
  tmp_dir = g_dir_make_tmp ("hanzo-cli-args-XXXXXX", &error);
  g_assert_no_error (error);
  g_test_add_func ("/hanzo-cli-args/learn-dp-options", test_learn_dp_options);
  g_test_add_func ("/hanzo-cli-args/learn-grpo-group", test_learn_grpo_group);
  g_test_add_func ("/hanzo-cli-args/learn-sft-signal", test_learn_sft_signal);
  g_test_add_func ("/hanzo-cli-args/tokenize-utf8", test_tokenize_utf8);
  g_test_add_func ("/hanzo-cli-args/utf8-everywhere", test_utf8_everywhere);
  g_test_add_func ("/hanzo-cli-args/perplexity-utf8", test_perplexity_utf8);
  g_test_add_func ("/hanzo-cli-args/generate-messages", test_generate_messages);
  g_test_add_func ("/hanzo-cli-args/folder-tokenize-and-info", test_folder_tokenize_and_info);
  int rc = g_test_run ();
  g_rmdir (tmp_dir);
  g_free (tmp_dir);
  return rc;
}
