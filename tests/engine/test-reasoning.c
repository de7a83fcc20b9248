/* test-reasoning.c — a thinking model's reply split into reasoning and answer
 * (engine/reasoning.c, issue 23 item 2):
 *  - the format of real templates (../shared/chat-templates and tests/engine/chat-templates:
 *    Qwen3, QwQ, gpt-oss, Seed-OSS, Ministral Reasoning) and of vocabularies;
 *  - replies as the real templates write them (an assistant turn with its reasoning,
 *    rendered by the Jinja interpreter, minus the prompt) split into exactly that reasoning
 *    and answer; generation prompts that open "<think>" (QwQ, DeepSeek-R1) recognised;
 *  - streaming: every reply fed in two and in three pieces cut at every byte boundary (and
 *    byte by byte) gives the whole split, byte for byte;
 *  - the prompt path: hz_model_render_chat() leaves earlier replies' reasoning out, also
 *    with a template that would keep it (Qwen2.5's on a Qwen3 vocabulary) or refuse it
 *    (gpt-oss raises on harmony markup in a content);
 *  - a scripted Qwen3 model (tests/thinking-model.h) writes "<think>…</think>" and its
 *    reply, streamed through hz_context_generate(), splits as the whole. */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "hanzo/engine.h"
#include "jinja.h"
#include "../thinking-model.h"

/* ------------------------------------------------------------------ helpers */

static char *tmpdir;

/* A template: a file of ../shared/chat-templates/templates (NULL after a skip without the
 * shared data) or of tests/engine/chat-templates. */
static char *
template_source (const char *name)
{
  g_autofree char *local = g_strdup_printf ("tests/engine/chat-templates/%s.jinja", name);
  g_autofree char *lpath = g_build_filename (g_getenv ("HZ_SOURCE_DIR"), local, NULL);
  if (g_file_test (lpath, G_FILE_TEST_EXISTS))
    return hz_test_source_file (local);
  g_autofree char *rel = g_strdup_printf ("chat-templates/templates/%s.jinja", name);
  g_autofree char *path = hz_test_shared_path (rel);
  char *text = NULL;
  if (path)
    g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  return text;
}

static JsonObject *
json_object_from (const char *json)
{
  g_autoptr (JsonParser) p = json_parser_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (json_parser_load_from_data (p, json, -1, &error));
  return json_object_ref (json_node_get_object (json_parser_get_root (p)));
}

/* Render `src` with the variables of the JSON text `vars`; NULL with *error when it raises. */
static char *
render_json (const char *src, const char *vars, GError **error)
{
  g_autoptr (HzJinjaTemplate) t = hz_jinja_template_new (src, -1, error);
  g_assert_nonnull (t);
  g_autoptr (JsonObject) v = json_object_from (vars);
  return hz_jinja_template_render (t, v, NULL, NULL, error);
}

static void
split (HzReasoningFormat f, gboolean opened, const char *text, char **r, char **a)
{
  hz_reasoning_split (f, opened, text, -1, r, a);
}

/* The reply fed to a stream in the pieces cut at `cuts` (ascending, n of them) gives
 * `want_r` and `want_a`; the answer never shrinks (what is handed out is final). */
static void
check_pieces (HzReasoningFormat f, gboolean opened, const char *text, const gsize *cuts, guint n,
              const char *want_r, const char *want_a)
{
  g_autoptr (HzReasoningStream) s = hz_reasoning_stream_new (f, opened);
  g_autoptr (GString) r = g_string_new (NULL), a = g_string_new (NULL);
  gsize from = 0;
  const gsize len = strlen (text);
  for (guint i = 0; i <= n; i++)
    {
      const gsize to = i < n ? cuts[i] : len;
      hz_reasoning_stream_push (s, text + from, (gssize) (to - from), r, a);
      g_assert_true (g_str_has_prefix (want_r, r->str));
      g_assert_true (g_str_has_prefix (want_a, a->str));
      from = to;
    }
  hz_reasoning_stream_finish (s, r, a);
  if (strcmp (r->str, want_r) != 0 || strcmp (a->str, want_a) != 0)
    g_error ("cut at %" G_GSIZE_FORMAT ",%" G_GSIZE_FORMAT " of \"%s\": reasoning \"%s\" "
             "answer \"%s\", whole: \"%s\" / \"%s\"", n > 0 ? cuts[0] : 0,
             n > 1 ? cuts[1] : 0, text, r->str, a->str, want_r, want_a);
}

/* Every cut into two and three pieces, and byte by byte, gives the whole split. Returns
 * the number of splits checked. */
static guint
check_every_cut (HzReasoningFormat f, gboolean opened, const char *text)
{
  g_autofree char *want_r = NULL, *want_a = NULL;
  split (f, opened, text, &want_r, &want_a);
  const gsize len = strlen (text);
  guint n = 0;
  for (gsize i = 0; i <= len; i++)
    {
      check_pieces (f, opened, text, &i, 1, want_r, want_a);
      n++;
      for (gsize j = i; j <= len; j++)
        {
          const gsize cuts[2] = { i, j };
          check_pieces (f, opened, text, cuts, 2, want_r, want_a);
          n++;
        }
    }
  g_autofree gsize *bytes = g_new (gsize, MAX (len, 1));
  for (gsize i = 0; i < len; i++)
    bytes[i] = i + 1;
  check_pieces (f, opened, text, bytes, (guint) len, want_r, want_a);
  return n + 1;
}

static guint
expect_split (HzReasoningFormat f, gboolean opened, const char *text, const char *want_r,
              const char *want_a)
{
  g_autofree char *r = NULL, *a = NULL;
  split (f, opened, text, &r, &a);
  if (strcmp (r, want_r) != 0 || strcmp (a, want_a) != 0)
    g_error ("%s%s \"%s\": reasoning \"%s\" answer \"%s\", want \"%s\" / \"%s\"",
             hz_reasoning_format_name (f), opened ? " (opened)" : "", text, r, a, want_r,
             want_a);
  return check_every_cut (f, opened, text);
}

/* ------------------------------------------------------------------ formats */

static void
test_format_of_templates (void)
{
  static const struct { const char *name; HzReasoningFormat f; } cases[] = {
    { "Qwen-Qwen3-0.6B", HZ_REASONING_THINK },
    { "Qwen-QwQ-32B", HZ_REASONING_THINK },
    { "openai-gpt-oss-120b", HZ_REASONING_HARMONY },
    { "ByteDance-Seed-OSS", HZ_REASONING_SEED_THINK },
    { "mistralai-Ministral-3-14B-Reasoning-2512", HZ_REASONING_BRACKET_THINK },
    { "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B", HZ_REASONING_THINK },
    { "deepseek-ai-DeepSeek-V3.2", HZ_REASONING_THINK },
    { "GLM-4.7-Flash", HZ_REASONING_THINK },
    { "MiniMax-M2", HZ_REASONING_THINK },
    { "Qwen-Qwen2.5-7B-Instruct", HZ_REASONING_NONE },
    { "Qwen3-Coder", HZ_REASONING_NONE },
    { "meta-llama-Llama-3.2-3B-Instruct", HZ_REASONING_NONE },
    { "mistralai-Mistral-Nemo-Instruct-2407", HZ_REASONING_NONE },
    { "google-gemma-2-2b-it", HZ_REASONING_NONE },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *src = template_source (cases[i].name);
      if (src == NULL)
        return;
      g_assert_cmpstr (hz_reasoning_format_name (hz_reasoning_format_from_template (src)), ==,
                       hz_reasoning_format_name (cases[i].f));
    }
  g_assert_cmpint (hz_reasoning_format_from_template (NULL), ==, HZ_REASONING_NONE);
}

/* ------------------------------------------------------------------ real replies */

typedef struct {
  const char       *tmpl;
  const char       *conversation;   /* messages before the reply (JSON array items) */
  const char       *reply;          /* the assistant message with its reasoning (JSON) */
  const char       *extra;          /* more variables (JSON members), or "" */
  const char       *eot;            /* the end of the turn: EOG, not in a reply's text */
  const char       *want_r, *want_a;
} RealCase;

#define USER_Q "{\"role\": \"user\", \"content\": \"What is 2+2? Answer briefly.\"}"
#define REASONING "The user asks for 2+2.\\nTwo plus two is four; no trick here."
#define REASONING_TEXT "The user asks for 2+2.\nTwo plus two is four; no trick here."

static const RealCase real_cases[] = {
  { "Qwen-Qwen3-0.6B", USER_Q,
    "{\"role\": \"assistant\", \"content\": \"**4**\", \"reasoning_content\": \"" REASONING "\"}",
    "", "<|im_end|>", REASONING_TEXT, "**4**" },
  /* the reasoning inside the content, as the model wrote it */
  { "Qwen-Qwen3-0.6B", USER_Q,
    "{\"role\": \"assistant\", \"content\": \"<think>\\n" REASONING "\\n</think>\\n\\n4 — "
    "vier, четыре.\"}", "", "<|im_end|>", REASONING_TEXT, "4 — vier, четыре." },
  { "openai-gpt-oss-120b", USER_Q,
    "{\"role\": \"assistant\", \"content\": \"4\", \"thinking\": \"" REASONING "\"}",
    "", NULL, REASONING_TEXT, "4" },
  { "ByteDance-Seed-OSS", USER_Q,
    "{\"role\": \"assistant\", \"content\": \"4\", \"reasoning_content\": \"" REASONING "\"}",
    "", "<seed:eos>", REASONING_TEXT, "4" },
  { "mistralai-Ministral-3-14B-Reasoning-2512", USER_Q,
    "{\"role\": \"assistant\", \"content\": [{\"type\": \"thinking\", \"thinking\": \""
    REASONING "\"}, {\"type\": \"text\", \"text\": \"4\"}]}", "", "</s>", REASONING_TEXT,
    "4" },
};

/* The reply the model writes in `c`: the full rendering minus the prompt's, up to the end
 * of the turn; *opened: whether the prompt opened the reasoning. */
static char *
real_reply (const RealCase *c, HzReasoningFormat f, gboolean *opened)
{
  g_autofree char *src = template_source (c->tmpl);
  if (src == NULL)
    return NULL;
  const char *sep = *c->extra ? ", " : "";
  g_autofree char *pvars = g_strdup_printf ("{\"messages\": [%s], \"add_generation_prompt\": "
                                            "true, \"bos_token\": \"<s>\", \"eos_token\": "
                                            "\"</s>\"%s%s}", c->conversation, sep, c->extra);
  g_autofree char *fvars = g_strdup_printf ("{\"messages\": [%s, %s], \"add_generation_prompt\""
                                            ": false, \"bos_token\": \"<s>\", \"eos_token\": "
                                            "\"</s>\"%s%s}", c->conversation, c->reply, sep,
                                            c->extra);
  g_autoptr (GError) error = NULL;
  g_autofree char *prompt = render_json (src, pvars, &error);
  g_assert_no_error (error);
  g_autofree char *full = render_json (src, fvars, &error);
  g_assert_no_error (error);
  if (!g_str_has_prefix (full, prompt))
    g_error ("%s: the prompt is not a prefix of the conversation:\n%s\n---\n%s", c->tmpl,
             prompt, full);
  *opened = hz_reasoning_prompt_opens (f, prompt, -1);
  const char *reply = full + strlen (prompt);
  const char *end = c->eot ? strstr (reply, c->eot) : NULL;
  return g_strndup (reply, end ? (gsize) (end - reply) : strlen (reply));
}

static void
test_real_replies (void)
{
  g_setenv ("SOURCE_DATE_EPOCH", "1796299200", TRUE);   /* gpt-oss writes today's date */
  guint n_cuts = 0;
  for (guint i = 0; i < G_N_ELEMENTS (real_cases); i++)
    {
      const RealCase *c = &real_cases[i];
      g_autofree char *src = template_source (c->tmpl);
      const HzReasoningFormat f = hz_reasoning_format_from_template (src);
      gboolean opened = FALSE;
      g_autofree char *reply = real_reply (c, f, &opened);
      g_assert_false (opened);
      g_test_message ("%s writes: %s", c->tmpl, reply);
      n_cuts += expect_split (f, FALSE, reply, c->want_r, c->want_a);
      /* what the next prompt keeps of it */
      g_autofree char *answer = hz_reasoning_strip (f, reply, -1);
      g_assert_cmpstr (answer, ==, c->want_a);
    }
  g_test_message ("%u ways of cutting the %u replies into pieces give their whole split",
                  n_cuts, (guint) G_N_ELEMENTS (real_cases));
}

/* QwQ's and DeepSeek-R1's generation prompts open "<think>" (when thinking is on); Qwen3's
 * "enable_thinking": false closes it again. The reply then starts inside the reasoning. */
static void
test_opened_by_prompt (void)
{
  static const struct { const char *tmpl, *extra; gboolean opens; } cases[] = {
    { "Qwen-QwQ-32B", "\"enable_thinking\": true", TRUE },
    { "Qwen-QwQ-32B", "\"enable_thinking\": false", FALSE },
    { "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B", "\"enable_thinking\": true", TRUE },
    { "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B", "\"enable_thinking\": false", FALSE },
    { "Qwen-Qwen3-0.6B", "\"enable_thinking\": true", FALSE },
    { "Qwen-Qwen3-0.6B", "\"enable_thinking\": false", FALSE },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *src = template_source (cases[i].tmpl);
      if (src == NULL)
        return;
      g_autofree char *vars = g_strdup_printf ("{\"messages\": [" USER_Q "], "
                                               "\"add_generation_prompt\": true, "
                                               "\"bos_token\": \"<s>\", \"eos_token\": "
                                               "\"</s>\", %s}", cases[i].extra);
      g_autoptr (GError) error = NULL;
      g_autofree char *prompt = render_json (src, vars, &error);
      g_assert_no_error (error);
      const HzReasoningFormat f = hz_reasoning_format_from_template (src);
      if (hz_reasoning_prompt_opens (f, prompt, -1) != cases[i].opens)
        g_error ("%s with %s: the prompt %s the reasoning:\n%s", cases[i].tmpl, cases[i].extra,
                 cases[i].opens ? "does not open" : "opens", prompt);
    }
  /* what the model writes then: the reasoning, "</think>", the answer */
  expect_split (HZ_REASONING_THINK, TRUE, REASONING_TEXT "\n</think>\n\n4", REASONING_TEXT, "4");
}

/* Hand-written edges of each format, each also cut everywhere. */
static void
test_edges (void)
{
  const HzReasoningFormat T = HZ_REASONING_THINK, H = HZ_REASONING_HARMONY;
  /* tags count only at the start */
  expect_split (T, FALSE, "Use <think> tags </think> like this.", "",
                "Use <think> tags </think> like this.");
  expect_split (T, FALSE, "  \n<think>\n\nR r\n\n</think>\n\nA a  ", "R r", "A a  ");
  expect_split (T, FALSE, " plain answer ", "", " plain answer ");
  expect_split (T, FALSE, "", "", "");
  expect_split (T, FALSE, "<thi", "", "<thi");
  /* cut off while thinking: all reasoning, an unfinished closing tag dropped */
  expect_split (T, FALSE, "<think>partial < reasoning", "partial < reasoning", "");
  expect_split (T, FALSE, "<think>R</thi", "R", "");
  expect_split (T, FALSE, "<think></think>A", "", "A");
  /* the prompt opened the tag */
  expect_split (T, TRUE, "R</think>A", "R", "A");
  expect_split (T, TRUE, "<think>\nR\n</think>\nA", "R", "A");
  expect_split (T, TRUE, "only reasoning, cut off", "only reasoning, cut off", "");
  expect_split (T, TRUE, "</think>A", "", "A");
  expect_split (T, TRUE, "R <", "R", "");   /* the closing tag, cut off: dropped */
  expect_split (HZ_REASONING_BRACKET_THINK, FALSE, "[THINK]R[/THINK]A", "R", "A");
  expect_split (HZ_REASONING_SEED_THINK, FALSE, "<seed:think>R</seed:think>A", "R", "A");
  expect_split (HZ_REASONING_NONE, FALSE, "<think>R</think>A", "", "<think>R</think>A");
  /* harmony */
  expect_split (H, FALSE, "<|channel|>analysis<|message|>R<|end|><|start|>assistant"
                "<|channel|>final<|message|>A<|return|>", "R", "A");
  expect_split (H, FALSE, "<|channel|>final<|message|>A", "", "A");
  expect_split (H, FALSE, "<|channel|>analysis<|message|>R cut<|en", "R cut", "");
  expect_split (H, FALSE, "<|channel|>analysis<|message|>R<|end|><|start|>assistant<|chan",
                "R", "");
  expect_split (H, FALSE, "<|channel|>commentary<|message|>C<|end|><|start|>assistant"
                "<|channel|>final<|message|>A", "", "CA");
  expect_split (H, FALSE, "Plain text, no markup.", "", "Plain text, no markup.");
  expect_split (H, FALSE, "<|channel|>final<|message|>A<|end|>tail", "", "Atail");
  /* the next prompt's view */
  static const struct { HzReasoningFormat f; const char *in, *out; } strips[] = {
    { HZ_REASONING_THINK, "<think>\nR\n</think>\n\nA", "A" },
    { HZ_REASONING_THINK, "R\n</think>\n\nA", "A" },
    { HZ_REASONING_THINK, "A without tags", "A without tags" },
    /* a closing tag without an opening one: read as Qwen3's template reads it */
    { HZ_REASONING_THINK, "A, then </think> and <think> in prose", "and <think> in prose" },
    { HZ_REASONING_THINK, "A, then <think> and </think> in prose",
      "A, then <think> and </think> in prose" },
    { HZ_REASONING_HARMONY, "<|channel|>analysis<|message|>R<|end|><|start|>assistant"
                            "<|channel|>final<|message|>A", "A" },
    { HZ_REASONING_NONE, "<think>R</think>A", "<think>R</think>A" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (strips); i++)
    {
      g_autofree char *a = hz_reasoning_strip (strips[i].f, strips[i].in, -1);
      g_assert_cmpstr (a, ==, strips[i].out);
    }
}

/* Random replies made of marker fragments, cut at random places, in every format: the
 * streamed parts are the whole split's (and nothing loops or reads out of bounds). */
static void
test_random_cuts (void)
{
  static const char *const bits[] = {
    "<think>", "</think>", "<", "/", "think", ">", " ", "\n", "a", "é", "[THINK]", "[/THINK]",
    "<seed:think>", "</seed:think>", "<|channel|>", "analysis", "final", "<|message|>",
    "<|end|>", "<|start|>", "assistant", "<|return|>", "<|call|>", "<|",
  };
  static const HzReasoningFormat fs[] = { HZ_REASONING_NONE, HZ_REASONING_THINK,
                                          HZ_REASONING_SEED_THINK, HZ_REASONING_BRACKET_THINK,
                                          HZ_REASONING_HARMONY };
  guint n_checked = 0;
  for (guint round = 0; round < 3000; round++)
    {
      g_autoptr (GString) text = g_string_new (NULL);
      const gint32 n_bits = g_test_rand_int_range (0, 24);
      for (gint32 i = 0; i < n_bits; i++)
        g_string_append (text, bits[g_test_rand_int_range (0, G_N_ELEMENTS (bits))]);
      const HzReasoningFormat f = fs[round % G_N_ELEMENTS (fs)];
      const gboolean opened = g_test_rand_bit ();
      g_autofree char *want_r = NULL, *want_a = NULL;
      split (f, opened, text->str, &want_r, &want_a);
      g_autofree gsize *cuts = g_new (gsize, text->len + 1);
      guint n = 0;
      for (gsize i = 1; i < text->len; i++)
        if (g_test_rand_int_range (0, 4) == 0)
          cuts[n++] = i;
      check_pieces (f, opened, text->str, cuts, n, want_r, want_a);
      n_checked++;
    }
  g_test_message ("%u random replies cut at random places give their whole split", n_checked);
}

/* A stream says when the text so far ends inside the reasoning. */
static void
test_in_reasoning (void)
{
  g_autoptr (HzReasoningStream) s = hz_reasoning_stream_new (HZ_REASONING_THINK, FALSE);
  g_autoptr (GString) r = g_string_new (NULL), a = g_string_new (NULL);
  g_assert_false (hz_reasoning_stream_in_reasoning (s));
  hz_reasoning_stream_push (s, "<think>", -1, r, a);
  g_assert_true (hz_reasoning_stream_in_reasoning (s));
  hz_reasoning_stream_push (s, "Hmm</think>", -1, r, a);
  g_assert_false (hz_reasoning_stream_in_reasoning (s));
  hz_reasoning_stream_push (s, "Hi", -1, r, a);
  g_assert_cmpstr (r->str, ==, "Hmm");
  g_assert_cmpstr (a->str, ==, "Hi");
  g_autoptr (HzReasoningStream) o = hz_reasoning_stream_new (HZ_REASONING_THINK, TRUE);
  g_assert_true (hz_reasoning_stream_in_reasoning (o));
}

/* ------------------------------------------------------------------ models */

/* Qwen3's vocabulary with template `tmpl` (a template's name), loaded. */
static HzModel *
qwen3_with (const char *tmpl)
{
  g_autofree char *src = template_source (tmpl);
  return src ? hz_qwen3_vocab_load (src) : NULL;
}

static void
test_format_of_models (void)
{
  g_autoptr (HzModel) qwen3 = qwen3_with ("Qwen-Qwen3-0.6B");
  if (qwen3 == NULL)
    return;
  g_assert_cmpint (hz_model_reasoning_format (qwen3), ==, HZ_REASONING_THINK);
  /* "<think>" is a user-defined token: it shows in a reply's text as it is */
  g_assert_false (hz_model_reasoning_special (qwen3));
  /* a template that never mentions it: the vocabulary says */
  g_autoptr (HzModel) chatml = qwen3_with ("Qwen-Qwen2.5-7B-Instruct");
  g_assert_cmpint (hz_model_reasoning_format (chatml), ==, HZ_REASONING_THINK);
  g_autoptr (HzModel) gptoss = qwen3_with ("openai-gpt-oss-120b");
  g_assert_cmpint (hz_model_reasoning_format (gptoss), ==, HZ_REASONING_HARMONY);
  /* Qwen2's vocabulary and template: no reasoning */
  g_autofree char *qwen2 = hz_test_shared_path ("golden/tokenizer/ggml-vocab-qwen2.gguf");
  g_autoptr (HzModel) q2 = hz_family_load_vocab (qwen2);
  g_assert_cmpint (hz_model_reasoning_format (q2), ==, HZ_REASONING_NONE);

  /* the prompt of QwQ's template, as tokens, opens the reasoning */
  g_autoptr (HzModel) qwq = qwen3_with ("Qwen-QwQ-32B");
  g_autofree char *src = template_source ("Qwen-QwQ-32B");
  for (int on = 0; on <= 1; on++)
    {
      g_autofree char *vars = g_strdup_printf ("{\"messages\": [" USER_Q "], "
                                               "\"add_generation_prompt\": true, "
                                               "\"enable_thinking\": %s}", on ? "true" : "false");
      g_autofree char *prompt = render_json (src, vars, NULL);
      gsize n = 0;
      g_autofree HzToken *ids = hz_model_tokenize (qwq, prompt, -1, TRUE, TRUE, &n);
      g_assert_cmpint (hz_model_reasoning_opened (qwq, ids, n), ==, on);
    }
}

/* The conversation [question, reply, follow-up] rendered by `m` (hz_model_render_chat). */
static char *
render_turns (HzModel *m, const char *reply, GError **error)
{
  const HzChatMessage msgs[] = {
    { "user", "What is 2+2?" }, { "assistant", reply }, { "user", "And 3+3?" },
  };
  g_autoptr (HzPrompt) p = hz_model_render_chat (m, msgs, G_N_ELEMENTS (msgs), TRUE, error);
  return p ? g_strdup (hz_prompt_text (p, NULL)) : NULL;
}

/* Earlier replies reach the template without their reasoning, whatever the template. */
static void
test_render_strips (void)
{
  static const struct { const char *tmpl, *reply; } cases[] = {
    /* Qwen3's own template strips it too */
    { "Qwen-Qwen3-0.6B", "<think>\nSECRET thoughts\n</think>\n\n4" },
    /* Qwen2.5's would keep it: a fine-tune of Qwen3 with an older template */
    { "Qwen-Qwen2.5-7B-Instruct", "<think>\nSECRET thoughts\n</think>\n\n4" },
    /* the reply of a prompt that opened the tag */
    { "Qwen-QwQ-32B", "SECRET thoughts\n</think>\n\n4" },
    /* gpt-oss raises on harmony markup in a content */
    { "openai-gpt-oss-120b", "<|channel|>analysis<|message|>SECRET thoughts<|end|>"
                             "<|start|>assistant<|channel|>final<|message|>4" },
  };
  g_setenv ("SOURCE_DATE_EPOCH", "1796299200", TRUE);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (HzModel) m = qwen3_with (cases[i].tmpl);
      if (m == NULL)
        return;
      g_autoptr (GError) error = NULL;
      g_autofree char *with = render_turns (m, cases[i].reply, &error);
      g_assert_no_error (error);
      g_autofree char *plain = render_turns (m, "4", &error);
      g_assert_no_error (error);
      g_test_message ("%s: %s", cases[i].tmpl, with);
      g_assert_null (strstr (with, "SECRET"));
      g_assert_cmpstr (with, ==, plain);
    }
  /* without the engine's strip, Qwen2.5's template keeps the reasoning in the prompt ... */
  g_autofree char *q25 = template_source ("Qwen-Qwen2.5-7B-Instruct");
  g_autofree char *kept = render_json (q25, "{\"messages\": [{\"role\": \"user\", \"content\""
                                       ": \"hi\"}, {\"role\": \"assistant\", \"content\": "
                                       "\"<think>SECRET</think>4\"}]}", NULL);
  g_assert_nonnull (strstr (kept, "SECRET"));
  /* ... and gpt-oss's refuses such a turn */
  g_autofree char *src = template_source ("openai-gpt-oss-120b");
  g_autoptr (GError) error = NULL;
  g_autofree char *raw = render_json (src, "{\"messages\": [{\"role\": \"user\", \"content\": "
                                      "\"hi\"}, {\"role\": \"assistant\", \"content\": "
                                      "\"<|channel|>analysis<|message|>x<|end|>\"}]}", &error);
  g_assert_null (raw);
  g_assert_error (error, HZ_JINJA_ERROR, HZ_JINJA_ERROR_RAISED);
}

/* The scripted Qwen3 model thinks, then answers; the streamed split is the whole one. */
typedef struct {
  HzReasoningStream *stream;
  GString           *r, *a;
  GString           *text;
  guint              n_pieces;
} Streamed;

static gboolean
on_piece (HzToken token, const char *text, gpointer data)
{
  Streamed *st = data;
  g_string_append (st->text, text);
  hz_reasoning_stream_push (st->stream, text, -1, st->r, st->a);
  st->n_pieces++;
  return TRUE;
}

static void
test_scripted_model (void)
{
  static const char *const script[] = { "<think>", "Let", " me", " think", "</think>", "\n\n",
                                        "Hello", "!", NULL };
  g_autofree char *src = template_source ("Qwen-Qwen3-0.6B");
  g_autofree char *path = hz_scripted_model_write (tmpdir, "scripted", src, "\n", script);
  if (path == NULL)
    return;
  g_autoptr (GError) error = NULL;
  g_autoptr (HzModel) m = hz_model_load (path, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (hz_model_reasoning_format (m), ==, HZ_REASONING_THINK);
  const HzChatMessage msgs[] = { { "user", "Hi there" } };
  HzChatFit fit;
  g_autofree HzToken *prompt = hz_model_fit_chat (m, msgs, 1, 512, 64, &fit, &error);
  g_assert_no_error (error);
  const gsize n = fit.n_tokens;
  g_assert_false (hz_model_reasoning_opened (m, prompt, n));
  g_autoptr (HzContext) ctx = hz_context_new (m, NULL, &error);
  g_assert_no_error (error);
  HzGenerateParams gp;
  hz_generate_params_init (&gp);
  gp.n_predict = 32;
  gp.special = hz_model_reasoning_special (m);
  Streamed st = { hz_reasoning_stream_new (hz_model_reasoning_format (m), FALSE),
                  g_string_new (NULL), g_string_new (NULL), g_string_new (NULL), 0 };
  HzGenerateStats stats;
  g_autofree char *text = hz_context_generate (ctx, prompt, n, &gp, on_piece, &st, NULL, NULL,
                                               &stats, &error);
  g_assert_no_error (error);
  hz_reasoning_stream_finish (st.stream, st.r, st.a);
  g_assert_cmpstr (text, ==, "<think>Let me think</think>\n\nHello!");
  g_assert_cmpint (stats.stop_reason, ==, HZ_STOP_EOG);
  g_assert_cmpuint (st.n_pieces, ==, 9);
  g_assert_cmpstr (st.r->str, ==, "Let me think");
  g_assert_cmpstr (st.a->str, ==, "Hello!");
  hz_reasoning_stream_free (st.stream);
  g_string_free (st.r, TRUE);
  g_string_free (st.a, TRUE);
  g_string_free (st.text, TRUE);
  g_unlink (path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  tmpdir = g_dir_make_tmp ("hz-reasoning-XXXXXX", NULL);
  g_test_add_func ("/reasoning/format/templates", test_format_of_templates);
  g_test_add_func ("/reasoning/format/models", test_format_of_models);
  g_test_add_func ("/reasoning/split/real-replies", test_real_replies);
  g_test_add_func ("/reasoning/split/opened-by-prompt", test_opened_by_prompt);
  g_test_add_func ("/reasoning/split/edges", test_edges);
  g_test_add_func ("/reasoning/stream/in-reasoning", test_in_reasoning);
  g_test_add_func ("/reasoning/stream/random-cuts", test_random_cuts);
  g_test_add_func ("/reasoning/render/strips-earlier-reasoning", test_render_strips);
  g_test_add_func ("/reasoning/generate/scripted-model", test_scripted_model);
  int rc = g_test_run ();
  g_rmdir (tmpdir);
  g_free (tmpdir);
  return rc;
}
