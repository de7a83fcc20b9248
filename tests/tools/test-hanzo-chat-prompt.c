/* tests/tools/test-hanzo-chat-prompt.c — the prompts `hanzo chat` builds (issue 20):
 *  - control text typed on a line is text: for each chat family of tests/family-vocab.h
 *    (a random-weight model with the family's real vocabulary and template), the prompt
 *    token count --stats reports equals the family oracle's for the same turn, and is not
 *    what parsing the rendered text whole gives;
 *  - piped, with many more turns than the context holds (stories260K, -c 128), every
 *    line is answered, the notice about earlier messages comes once, nothing is reset;
 *  - a line longer than the context alone is refused with a message that says so, the
 *    next line is still answered, and the exit status is 1;
 *  - the model's own Jinja template renders the prompt: Qwen2.5's adds its default system
 *    turn ("hi": 30 prompt tokens, not the built-in ChatML's 9); a template that does not
 *    parse ends the session with its error (no fallback); a GGUF without a template says
 *    once that it runs as plain completion;
 *  - a thinking model (tests/thinking-model.h, with Qwen2.5's template, which would keep an
 *    earlier reply's reasoning): its replies stream with their reasoning, and the second
 *    prompt has the tokens of the conversation with the first reply's answer alone. */
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <string.h>

#include "../family-vocab.h"
#include "../thinking-model.h"
#include "hanzo-cli-run.h"

static char *tmp_dir;

/* Occurrences of `needle` in `s`. */
static guint
count (const char *s, const char *needle)
{
  guint n = 0;
  for (const char *p = strstr (s, needle); p; p = strstr (p + 1, needle))
    n++;
  return n;
}

/* The prompt sizes of the "[prompt N tokens" statistics lines, in order. */
static GArray *
prompt_sizes (const char *err)
{
  GArray *a = g_array_new (FALSE, FALSE, sizeof (guint));
  for (const char *p = strstr (err, "[prompt "); p; p = strstr (p + 1, "[prompt "))
    {
      guint v = (guint) g_ascii_strtoull (p + strlen ("[prompt "), NULL, 10);
      g_array_append_val (a, v);
    }
  return a;
}

static void
test_typed (gconstpointer data)
{
  const HzFamily *f = data;
  g_autofree char *model = hz_family_model_write (f, tmp_dir, 2048);
  if (model == NULL)
    return;
  g_autoptr (HzModel) vocab = hz_family_load_vocab (model);
  g_assert_cmpint (hz_model_chat_template (vocab), ==, f->tmpl);

  /* each line a conversation of its own (/reset), with a system prompt */
  g_autofree char *sixty = hz_family_sixty (f);
  g_autofree char *typed = g_strdelimit (g_strdup (f->typed), "\n", ' ');   /* one line */
  const char *lines[] = { "Hello there", typed, sixty };
  g_autoptr (GString) input = g_string_new (NULL);
  for (guint i = 0; i < G_N_ELEMENTS (lines); i++)
    g_string_append_printf (input, "%s%s\n", i ? "/reset\n" : "", lines[i]);
  g_auto (HzCliRun) r = { 0 };
  hz_cli_run (&r, input->str, input->len, (const char *const[]) {
                "chat", "-m", model, "--system", "Be brief.", "-n", "2", "--stats",
                "--threads", "1", NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_autoptr (GArray) got = prompt_sizes (r.err);
  g_assert_cmpuint (got->len, ==, G_N_ELEMENTS (lines));
  for (guint i = 0; i < G_N_ELEMENTS (lines); i++)
    {
      const HzChatMessage msgs[] = { { "system", "Be brief." }, { "user", lines[i] } };
      gsize n_whole = 0;
      const guint want = hz_family_prompt_count (vocab, f, msgs, 2, &n_whole);
      g_test_message ("%s line %u: %u prompt tokens (oracle %u); parsed whole %zu", f->name, i,
                      g_array_index (got, guint, i), want, n_whole);
      g_assert_cmpuint (g_array_index (got, guint, i), ==, want);
      if (i > 0)
        g_assert_cmpuint (n_whole, !=, want);   /* the old way was another prompt */
    }
  g_unlink (model);
}

static void
test_long_piped (void)
{
  g_autofree char *model = hz_test_shared_path ("models/stories260K.gguf");
  if (model == NULL)
    return;
  g_autoptr (GString) input = g_string_new (NULL);
  const guint n_lines = 30;
  for (guint i = 0; i < n_lines; i++)
    g_string_append_printf (input, "Question %u: where did the little cat go today?\n", i);
  g_auto (HzCliRun) r = { 0 };
  hz_cli_run (&r, input->str, input->len, (const char *const[]) {
                "chat", "-m", model, "-c", "128", "-n", "24", "--seed", "1", "--stats",
                "--threads", "1", NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_autoptr (GArray) sizes = prompt_sizes (r.err);
  g_assert_cmpuint (sizes->len, ==, n_lines);   /* every line answered */
  g_assert_cmpuint (count (r.err, "earlier messages are beyond what the model can see"), ==, 1);
  g_assert_cmpuint (count (r.err, "has no chat template (tokenizer.chat_template): plain "
                                  "completion"), ==, 1);
  g_assert_null (strstr (r.err, "reset"));
  g_assert_cmpuint (count (r.err, "stop: length]"), ==, n_lines);
  for (guint i = 0; i < sizes->len; i++)
    g_assert_cmpuint (g_array_index (sizes, guint, i), <=, 128 - 24);
  g_test_message ("%u lines of about 14 tokens, 24-token replies, context 128: %u answered, "
                  "last prompt %u tokens", n_lines, sizes->len,
                  g_array_index (sizes, guint, sizes->len - 1));
}

static void
test_line_too_long (void)
{
  g_autofree char *model = hz_test_shared_path ("models/stories260K.gguf");
  if (model == NULL)
    return;
  g_autoptr (GString) input = g_string_new ("Once upon a time\n");
  for (int i = 0; i < 100; i++)
    g_string_append (input, "the big dog ran ");
  g_string_append (input, "\nThe cat sat\n");
  g_auto (HzCliRun) r = { 0 };
  hz_cli_run (&r, input->str, input->len, (const char *const[]) {
                "chat", "-m", model, "-c", "128", "-n", "8", "--seed", "1", "--stats",
                "--threads", "1", NULL });
  g_test_message ("%s", r.err);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_cmpuint (count (r.err, "[prompt "), ==, 2);   /* the first and the last line */
  g_assert_cmpuint (count (r.err, "the message is too long"), ==, 1);
  g_assert_nonnull (strstr (r.err, "the model's context holds 128; the line was not answered"));
}

/* A random-weight model of the Qwen2 vocabulary with `jinja` as its template. */
static char *
qwen_model_with (const char *name, const char *jinja)
{
  const HzFamily f = { name, HZ_CHAT_TEMPLATE_CHATML, "golden/tokenizer/ggml-vocab-qwen2.gguf",
                       jinja, { NULL }, { NULL }, { NULL }, "" };
  return hz_family_model_write (&f, tmp_dir, 512);
}

static void
test_own_template (void)
{
  g_autofree char *tpath = hz_test_shared_path ("chat-templates/templates/"
                                                "Qwen-Qwen2.5-7B-Instruct.jinja");
  if (tpath == NULL)
    return;
  g_autofree char *source = NULL;
  g_assert_true (g_file_get_contents (tpath, &source, NULL, NULL));
  g_autofree char *model = qwen_model_with ("qwen25", source);
  if (model == NULL)
    return;
  g_auto (HzCliRun) r = { 0 };
  hz_cli_run (&r, "hi\n", 3, (const char *const[]) {
                "chat", "-m", model, "-n", "2", "--stats", "--threads", "1", NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_autoptr (GArray) got = prompt_sizes (r.err);
  g_assert_cmpuint (got->len, ==, 1);
  g_test_message ("\"hi\" on Qwen2.5's template: %u prompt tokens", g_array_index (got, guint, 0));
  g_assert_cmpuint (g_array_index (got, guint, 0), ==, 30);
  g_assert_null (strstr (r.err, "no chat template"));
  g_unlink (model);

  g_autofree char *broken = qwen_model_with ("broken", "{% for m in messages %}{{ m.content }");
  g_auto (HzCliRun) b = { 0 };
  hz_cli_run (&b, "hi\n", 3, (const char *const[]) {
                "chat", "-m", broken, "-n", "2", "--threads", "1", NULL });
  g_test_message ("%s", b.err);
  g_assert_cmpint (b.status, ==, 1);
  g_assert_nonnull (strstr (b.err, "does not parse: TemplateSyntaxError"));
  g_assert_cmpstr (b.out, ==, "");
  g_unlink (broken);
}

static void
test_thinking (void)
{
  static const char *const script[] = { "<think>", "Let", " me", " think", "</think>", "\n\n",
                                        "Hello", "!", NULL };
  g_autofree char *q25 = hz_test_shared_path ("chat-templates/templates/"
                                              "Qwen-Qwen2.5-7B-Instruct.jinja");
  if (q25 == NULL)
    return;
  g_autofree char *src = hz_test_source_file (q25);
  g_autofree char *model = hz_scripted_model_write (tmp_dir, "thinking", src, "\n", script);
  g_auto (HzCliRun) r = { 0 };
  static const char input[] = "Hi there\nAnd now?\n";
  hz_cli_run (&r, input, strlen (input), (const char *const[]) {
                "chat", "-m", model, "--stats", "--threads", "1", NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpuint (count (r.out, "<think>Let me think</think>\n\nHello!"), ==, 2);
  g_autoptr (GArray) got = prompt_sizes (r.err);
  g_assert_cmpuint (got->len, ==, 2);
  g_autoptr (HzModel) vocab = hz_family_load_vocab (model);
  const HzChatMessage answer[] = { { "user", "Hi there" }, { "assistant", "Hello!" },
                                   { "user", "And now?" } };
  HzChatFit fit;
  g_autoptr (GError) error = NULL;
  g_autofree HzToken *ids = hz_model_fit_chat (vocab, answer, 3, 4096, 0, &fit, &error);
  g_assert_no_error (error);
  g_test_message ("second prompt: %u tokens; the conversation with the answer alone: %"
                  G_GSIZE_FORMAT, g_array_index (got, guint, 1), fit.n_tokens);
  g_assert_cmpuint (g_array_index (got, guint, 1), ==, fit.n_tokens);
  g_unlink (model);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp ("hz-test-chat-prompt-XXXXXX", NULL);
  for (guint i = 0; i < G_N_ELEMENTS (hz_families); i++)
    {
      g_autofree char *name = g_strdup_printf ("/hanzo-chat-prompt/typed/%s", hz_families[i].name);
      g_test_add_data_func (name, &hz_families[i], test_typed);
    }
  g_test_add_func ("/hanzo-chat-prompt/long-piped", test_long_piped);
  g_test_add_func ("/hanzo-chat-prompt/line-too-long", test_line_too_long);
  g_test_add_func ("/hanzo-chat-prompt/own-template", test_own_template);
  g_test_add_func ("/hanzo-chat-prompt/thinking", test_thinking);
  int rc = g_test_run ();
  g_rmdir (tmp_dir);
  g_free (tmp_dir);
  return rc;
}
