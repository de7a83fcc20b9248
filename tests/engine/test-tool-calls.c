/* test-tool-calls.c — tool calls (issue 25): rendering and parsing.
 *  - rendering: every fixture of ../shared/chat-templates/golden/ with tools
 *    (TEMPLATE.tools.txt), rendered through hz_model_render_chat_tools() from messages as an
 *    OpenAI client sends them (tool_calls with string arguments, tool messages with
 *    tool_call_id and name), equals transformers' rendering byte for byte; the .error ones
 *    raise;
 *  - the format each real template teaches (hz_tool_format_from_template);
 *  - parsing: each family's call as its template writes it (the assistant turns of the
 *    golden renderings, and the formats' documented shapes), with content around it,
 *    several calls, and broken calls kept as content;
 *  - streaming: for every cut of every reply, the bytes hz_tool_calls_content_prefix()
 *    releases are a prefix of the final content and hold no part of a call. */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "gguf.h"
#include "hanzo/engine.h"
#include "hanzo/tool-calls.h"
#include "../hz-test-util.h"

static char *tmpdir;

/* --------------------------------------------------------------- rendering */

/* stories260K's vocabulary (BOS "<s>", EOS "</s>", as the fixtures) with `tmpl`, loaded
 * vocab-only. */
static HzModel *
vocab_with_template (const char *stories, const char *tmpl)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (HzGguf) g = hz_gguf_open (stories, &error);
  g_assert_no_error (error);
  g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
  for (int64_t i = 0; i < hz_gguf_n_kv (g); i++)
    {
      HzGgufStr k = hz_gguf_key (g, i);
      if ((k.len > 10 && memcmp (k.ptr, "tokenizer.", 10) == 0 &&
           !(k.len == 23 && memcmp (k.ptr, "tokenizer.chat_template", 23) == 0)) ||
          (k.len == 20 && memcmp (k.ptr, "general.architecture", 20) == 0))
        hz_gguf_writer_copy_kv (w, g, i);
    }
  hz_gguf_writer_set_str (w, "tokenizer.chat_template", tmpl);
  g_autofree char *path = g_build_filename (tmpdir, "vocab.gguf", NULL);
  g_assert_true (hz_gguf_writer_write_file (w, path, &error));
  HzModelParams mp;
  hz_model_params_init (&mp);
  mp.vocab_only = TRUE;
  HzModel *m = hz_model_load (path, &mp, &error);
  g_assert_no_error (error);
  return m;
}

/* The fixture's messages as a client sends them: each call's arguments as a JSON string. */
static HzChatMessage *
client_messages (JsonArray *a, GPtrArray *owned)
{
  const guint n = json_array_get_length (a);
  HzChatMessage *msgs = g_new0 (HzChatMessage, n);
  g_ptr_array_add (owned, msgs);
  for (guint i = 0; i < n; i++)
    {
      JsonObject *o = json_array_get_object_element (a, i);
      msgs[i].role = json_object_get_string_member (o, "role");
      msgs[i].content = json_object_get_string_member (o, "content");
      if (json_object_has_member (o, "tool_call_id"))
        msgs[i].tool_call_id = json_object_get_string_member (o, "tool_call_id");
      if (json_object_has_member (o, "name"))
        msgs[i].name = json_object_get_string_member (o, "name");
      if (!json_object_has_member (o, "tool_calls"))
        continue;
      g_autoptr (JsonNode) calls = json_node_copy (json_object_get_member (o, "tool_calls"));
      JsonArray *ca = json_node_get_array (calls);
      for (guint k = 0; k < json_array_get_length (ca); k++)
        {
          JsonObject *f = json_object_get_object_member (json_array_get_object_element (ca, k),
                                                         "function");
          g_autofree char *args = json_to_string (json_object_get_member (f, "arguments"), FALSE);
          json_object_set_string_member (f, "arguments", args);
        }
      char *text = json_to_string (calls, FALSE);
      g_ptr_array_add (owned, text);
      msgs[i].tool_calls = text;
    }
  return msgs;
}

static void
test_render_fixtures (void)
{
  g_autofree char *stories = hz_test_shared_path ("models/stories260K.gguf");
  g_autofree char *dir = stories ? hz_test_shared_path ("chat-templates") : NULL;
  if (dir == NULL)
    return;
  g_setenv ("SOURCE_DATE_EPOCH", "1796299200", TRUE);
  g_setenv ("TZ", "UTC", TRUE);
  g_autofree char *fixture_path = g_build_filename (dir, "fixtures", "tools.json", NULL);
  g_autoptr (JsonParser) fp = json_parser_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (json_parser_load_from_file (fp, fixture_path, &error));
  JsonObject *fx = json_node_get_object (json_parser_get_root (fp));
  g_autofree char *tools = json_to_string (json_object_get_member (fx, "tools"), FALSE);
  g_autoptr (GPtrArray) owned = g_ptr_array_new_with_free_func (g_free);
  JsonArray *ma = json_object_get_array_member (fx, "messages");
  HzChatMessage *msgs = client_messages (ma, owned);
  const guint n = json_array_get_length (ma);

  g_autofree char *tdir = g_build_filename (dir, "templates", NULL);
  g_autoptr (GDir) d = g_dir_open (tdir, 0, &error);
  g_assert_no_error (error);
  guint n_text = 0, n_error = 0;
  for (const char *name; (name = g_dir_read_name (d));)
    {
      if (!g_str_has_suffix (name, ".jinja"))
        continue;
      g_autofree char *stem = g_strndup (name, strlen (name) - 6);
      g_autofree char *golden = g_strdup_printf ("%s/golden/%s.tools.txt", dir, stem);
      g_autofree char *golden_err = g_strdup_printf ("%s/golden/%s.tools.error", dir, stem);
      g_autofree char *tpath = g_build_filename (tdir, name, NULL);
      g_autofree char *tmpl = NULL, *want = NULL;
      g_assert_true (g_file_get_contents (tpath, &tmpl, NULL, NULL));
      g_autoptr (HzModel) m = vocab_with_template (stories, tmpl);
      g_autoptr (GError) rerr = NULL;
      g_autoptr (HzPrompt) p = hz_model_render_chat_tools (m, msgs, n, tools, TRUE, &rerr);
      if (g_file_get_contents (golden, &want, NULL, NULL))
        {
          if (p == NULL)
            g_error ("%s: %s", stem, rerr->message);
          if (g_strcmp0 (hz_prompt_text (p, NULL), want) != 0)
            g_error ("%s: the rendering differs from transformers'\n--- got\n%s\n--- want\n%s",
                     stem, hz_prompt_text (p, NULL), want);
          n_text++;
        }
      else
        {
          g_assert_true (g_file_test (golden_err, G_FILE_TEST_EXISTS));
          if (p != NULL)
            g_error ("%s: rendered, but transformers raises", stem);
          n_error++;
        }
    }
  g_test_message ("%u tool renderings byte-exact, %u refusals", n_text, n_error);
  g_assert_cmpuint (n_text, >=, 28);
  g_assert_cmpuint (n_error, >=, 7);
}

/* A bad tools or tool_calls text is an error naming it. */
static void
test_render_bad_json (void)
{
  g_autofree char *stories = hz_test_shared_path ("models/stories260K.gguf");
  if (stories == NULL)
    return;
  g_autoptr (HzModel) m = vocab_with_template (
    stories, "{% for m in messages %}{{ m.content }}{% endfor %}{{ tools | tojson }}");
  const HzChatMessage ok[] = { { "user", "hi" } };
  const HzChatMessage bad[] = { { "user", "hi" }, { "assistant", "", "{\"id\": 1}" } };
  g_autoptr (GError) error = NULL;
  g_autoptr (HzPrompt) p = hz_model_render_chat_tools (m, ok, 1, "{\"type\": 1}", TRUE, &error);
  g_assert_null (p);
  g_assert_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "tools"));
  g_clear_error (&error);
  g_autoptr (HzPrompt) q = hz_model_render_chat_tools (m, bad, 2, NULL, TRUE, &error);
  g_assert_null (q);
  g_assert_nonnull (strstr (error->message, "tool_calls of message 2"));
  /* tools are content: typed markup in a description stays text */
  g_clear_error (&error);
  g_autoptr (HzPrompt) r = hz_model_render_chat_tools (m, ok, 1, "[{\"d\": \"</s>\"}]", TRUE,
                                                       &error);
  g_assert_no_error (error);
  for (guint i = 0; i < hz_prompt_n_pieces (r); i++)
    {
      const HzPromptPiece pc = hz_prompt_get_piece (r, i);
      if (g_strstr_len (pc.text, (gssize) pc.len, "</s>"))
        g_assert_false (pc.markup);
    }
}

/* ------------------------------------------------------------------ formats */

static void
test_formats (void)
{
  static const struct { const char *tmpl; HzToolFormat f; } cases[] = {
    { "NousResearch-Hermes-3-Llama-3.1-8B-tool_use", HZ_TOOL_FORMAT_HERMES },
    { "Qwen-Qwen2.5-7B-Instruct", HZ_TOOL_FORMAT_HERMES },
    { "MiMo-VL", HZ_TOOL_FORMAT_HERMES },
    { "ibm-granite-granite-4.0", HZ_TOOL_FORMAT_HERMES },
    { "Bielik-11B-v3.0-Instruct", HZ_TOOL_FORMAT_HERMES },
    { "Reka-Edge", HZ_TOOL_FORMAT_HERMES },
    { "Qwen3-Coder", HZ_TOOL_FORMAT_QWEN3_CODER },
    { "StepFun3.5-Flash", HZ_TOOL_FORMAT_QWEN3_CODER },
    { "GLM-4.7-Flash", HZ_TOOL_FORMAT_GLM },
    { "inclusionai-ling-3.0-flash", HZ_TOOL_FORMAT_GLM },
    { "meta-llama-Llama-3.2-3B-Instruct", HZ_TOOL_FORMAT_LLAMA3 },
    { "mistralai-Mistral-Nemo-Instruct-2407", HZ_TOOL_FORMAT_MISTRAL },
    { "unsloth-mistral-Devstral-Small-2507", HZ_TOOL_FORMAT_MISTRAL },
    { "Mistral-Small-3.2-24B-Instruct-2506", HZ_TOOL_FORMAT_MISTRAL },
    { "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B", HZ_TOOL_FORMAT_DEEPSEEK_R1 },
    { "Kimi-K2-Instruct", HZ_TOOL_FORMAT_KIMI_K2 },
    { "CohereForAI-c4ai-command-r7b-12-2024-tool_use", HZ_TOOL_FORMAT_COMMAND_R },
    { "Cohere2MoE", HZ_TOOL_FORMAT_COMMAND_R },
    { "NVIDIA-Nemotron-Nano-v2", HZ_TOOL_FORMAT_NEMOTRON },
    { "MiniMax-M2", HZ_TOOL_FORMAT_MINIMAX_M2 },
    { "GigaChat3.1-10B-A1.8B", HZ_TOOL_FORMAT_GIGACHAT },
    { "microsoft-Phi-3.5-mini-instruct", HZ_TOOL_FORMAT_NONE },
    { "google-gemma-2-2b-it", HZ_TOOL_FORMAT_NONE },
  };
  g_autofree char *dir = hz_test_shared_path ("chat-templates/templates");
  if (dir == NULL)
    return;
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("%s/%s.jinja", dir, cases[i].tmpl);
      g_autofree char *text = NULL;
      g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
      const HzToolFormat f = hz_tool_format_from_template (text);
      if (f != cases[i].f)
        g_error ("%s: format %s, not %s", cases[i].tmpl, hz_tool_format_name (f),
                 hz_tool_format_name (cases[i].f));
    }
  /* gpt-oss (in the source tree) */
  g_autofree char *oss = g_build_filename (g_getenv ("HZ_SOURCE_DIR"),
                                           "tests/engine/chat-templates/openai-gpt-oss-120b.jinja",
                                           NULL);
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (oss, &text, NULL, NULL));
  g_assert_cmpint (hz_tool_format_from_template (text), ==, HZ_TOOL_FORMAT_HARMONY);
  g_assert_cmpint (hz_tool_format_from_template (NULL), ==, HZ_TOOL_FORMAT_NONE);
}

/* ------------------------------------------------------------------ parsing */

#define W "{\"city\":\"Paris\"}"

typedef struct {
  HzToolFormat f;
  const char  *text;
  const char  *content;   /* after the split */
  const char  *calls;     /* "id|name|arguments;..." (id empty when none) */
} Case;

static const Case cases[] = {
  /* Hermes 3, Qwen2.5, MiMo, Granite 4, Bielik (their golden assistant turns) */
  { HZ_TOOL_FORMAT_HERMES,
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
    "", "|get_weather|" W },
  { HZ_TOOL_FORMAT_HERMES,
    "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
    "</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>",
    "Let me check.", "|get_weather|" W ";|get_time|{}" },
  /* arguments as a JSON string (some fine-tunes write that) */
  { HZ_TOOL_FORMAT_HERMES,
    "<tool_call>{\"name\": \"get_weather\", \"arguments\": \"{\\\"city\\\": \\\"Paris\\\"}\"}</tool_call>",
    "", "|get_weather|" W },
  /* broken: not JSON, no name, not closed, arguments not an object: content as written */
  { HZ_TOOL_FORMAT_HERMES, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": }\n</tool_call>",
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": }\n</tool_call>", "" },
  { HZ_TOOL_FORMAT_HERMES, "<tool_call>{\"arguments\": {}}</tool_call>",
    "<tool_call>{\"arguments\": {}}</tool_call>", "" },
  { HZ_TOOL_FORMAT_HERMES, "<tool_call>{\"name\": \"f\", \"arguments\": {}}",
    "<tool_call>{\"name\": \"f\", \"arguments\": {}}", "" },
  { HZ_TOOL_FORMAT_HERMES, "<tool_call>{\"name\": \"f\", \"arguments\": [1]}</tool_call>",
    "<tool_call>{\"name\": \"f\", \"arguments\": [1]}</tool_call>", "" },
  { HZ_TOOL_FORMAT_HERMES, "No tools needed: it is sunny.", "No tools needed: it is sunny.", "" },
  /* Qwen3-Coder, Step 3.5 */
  { HZ_TOOL_FORMAT_QWEN3_CODER,
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
    "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
    "", "|get_weather|{\"city\":\"Paris\",\"days\":3}" },
  /* GLM 4.7, Ling */
  { HZ_TOOL_FORMAT_GLM, "</think><tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>",
    "</think>", "|get_weather|" W },
  { HZ_TOOL_FORMAT_GLM, "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>",
    "", "|get_weather|" W },
  /* Llama 3.2 (its golden turn), the python tag, two calls */
  { HZ_TOOL_FORMAT_LLAMA3, "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}",
    "", "|get_weather|" W },
  { HZ_TOOL_FORMAT_LLAMA3, "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}",
    "", "|get_weather|" W },
  { HZ_TOOL_FORMAT_LLAMA3, "{\"name\": \"a\", \"parameters\": {}}; {\"name\": \"b\", \"parameters\": {\"x\": 1}}",
    "", "|a|{};|b|{\"x\":1}" },
  { HZ_TOOL_FORMAT_LLAMA3, "{\"city\": \"Paris\"} is JSON.", "{\"city\": \"Paris\"} is JSON.", "" },
  /* Mistral Nemo (v3) and the newer shape (Devstral, Mistral Small 3.2) */
  { HZ_TOOL_FORMAT_MISTRAL,
    "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}, \"id\": \"abcDEF123\"}]",
    "", "abcDEF123|get_weather|" W },
  { HZ_TOOL_FORMAT_MISTRAL, "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"}", "", "|get_weather|" W },
  { HZ_TOOL_FORMAT_MISTRAL,
    "Sure.[TOOL_CALLS]get_weather[CALL_ID]x1y2z3a4b[ARGS]{\"city\": \"Paris\"}[TOOL_CALLS]get_time[ARGS]{}",
    "Sure.", "x1y2z3a4b|get_weather|" W ";|get_time|{}" },
  { HZ_TOOL_FORMAT_MISTRAL, "[TOOL_CALLS]get_weather[ARGS]{\"city\": Paris}",
    "[TOOL_CALLS]get_weather[ARGS]{\"city\": Paris}", "" },
  /* gpt-oss (harmony), with its analysis before the call */
  { HZ_TOOL_FORMAT_HARMONY,
    "<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant<|channel|>commentary "
    "to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Paris\"}<|call|>",
    "<|channel|>analysis<|message|>Need the weather.<|end|>", "|get_weather|" W },
  { HZ_TOOL_FORMAT_HARMONY,
    "<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{\"city\": \"Paris\"}<|call|>",
    "", "|get_weather|" W },
  /* DeepSeek R1 (its golden turn) */
  { HZ_TOOL_FORMAT_DEEPSEEK_R1,
    "<\xef\xbd\x9ctool\xe2\x96\x81" "calls\xe2\x96\x81" "begin\xef\xbd\x9c><\xef\xbd\x9ctool\xe2\x96\x81"
    "call\xe2\x96\x81" "begin\xef\xbd\x9c>function<\xef\xbd\x9ctool\xe2\x96\x81sep\xef\xbd\x9c>get_weather\n"
    "```json\n{\"city\": \"Paris\"}\n```<\xef\xbd\x9ctool\xe2\x96\x81" "call\xe2\x96\x81" "end\xef\xbd\x9c>"
    "<\xef\xbd\x9ctool\xe2\x96\x81" "calls\xe2\x96\x81" "end\xef\xbd\x9c>",
    "", "|get_weather|" W },
  /* Kimi K2 */
  { HZ_TOOL_FORMAT_KIMI_K2,
    "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
    "{\"city\": \"Paris\"}<|tool_call_end|><|tool_calls_section_end|>",
    "", "functions.get_weather:0|get_weather|" W },
  /* Command R7B, Cohere 2 (golden turns) */
  { HZ_TOOL_FORMAT_COMMAND_R,
    "<|START_THINKING|><|END_THINKING|><|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": "
    "\"get_weather\", \"parameters\": {\"city\": \"Paris\"}}\n]<|END_ACTION|>",
    "<|START_THINKING|><|END_THINKING|>", "0|get_weather|" W },
  /* Nemotron Nano v2 (golden turn) */
  { HZ_TOOL_FORMAT_NEMOTRON,
    "<TOOLCALL>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]</TOOLCALL>",
    "", "|get_weather|" W },
  /* MiniMax M2 */
  { HZ_TOOL_FORMAT_MINIMAX_M2,
    "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n"
    "</invoke>\n</minimax:tool_call>",
    "", "|get_weather|" W },
  /* GigaChat 3.1 (golden turn) */
  { HZ_TOOL_FORMAT_GIGACHAT, "<|function_call|>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}",
    "", "|get_weather|" W },
  /* no format: everything is content */
  { HZ_TOOL_FORMAT_NONE, "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>",
    "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>", "" },
};

static char *
calls_string (GPtrArray *calls)
{
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < calls->len; i++)
    {
      const HzToolCall *c = calls->pdata[i];
      g_string_append_printf (s, "%s%s|%s|%s", i ? ";" : "", c->id ? c->id : "", c->name,
                              c->arguments);
    }
  return g_string_free (s, FALSE);
}

static void
test_parse (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const Case *c = &cases[i];
      g_autofree char *content = NULL;
      g_autoptr (GPtrArray) calls = hz_tool_calls_parse (c->f, c->text, -1, &content);
      g_autofree char *got = calls_string (calls);
      if (strcmp (got, c->calls) != 0 || strcmp (content, c->content) != 0)
        g_error ("case %" G_GSIZE_FORMAT " (%s): calls '%s' content '%s'; want '%s' and '%s'",
                 i, hz_tool_format_name (c->f), got, content, c->calls, c->content);
    }
}

/* Every cut of every reply: what the stream releases is a prefix of the final content,
 * and before the end it never releases bytes of a call. */
static void
test_stream_prefix (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const Case *c = &cases[i];
      const gsize n = strlen (c->text);
      g_autofree char *content = NULL;
      g_autoptr (GPtrArray) calls = hz_tool_calls_parse (c->f, c->text, -1, &content);
      gsize released = 0;
      for (gsize cut = 0; cut <= n; cut++)
        {
          const gsize k = hz_tool_calls_content_prefix (c->f, c->text, cut);
          g_assert_cmpuint (k, <=, cut);
          released = MAX (released, k);
          /* released text, trimmed as the content is when there are calls */
          g_autofree char *r = g_strndup (c->text, released);
          const char *cmp = calls->len > 0 ? g_strchug (r) : r;
          if (!g_str_has_prefix (content, calls->len > 0 ? g_strchomp ((char *) cmp) : cmp))
            g_error ("case %" G_GSIZE_FORMAT " cut %" G_GSIZE_FORMAT ": released '%.*s', content "
                     "'%s'", i, cut, (int) released, c->text, content);
        }
    }
}

/* Hostile input: long, unbalanced, NUL-free garbage around markers never crashes and gives
 * back every byte as content or calls. */
static void
test_hostile (void)
{
  static const char *const bits[] = { "<tool_call>", "{", "[", "\"", "\\", "}", "]",
                                      "[TOOL_CALLS]", "[ARGS]", "to=functions.", "<|message|>",
                                      "<function=", "<parameter=", "</tool_call>", "x" };
  GRand *r = g_rand_new_with_seed (7);
  for (int t = 0; t < 2000; t++)
    {
      g_autoptr (GString) s = g_string_new (NULL);
      const int n = g_rand_int_range (r, 0, 40);
      for (int k = 0; k < n; k++)
        g_string_append (s, bits[g_rand_int_range (r, 0, G_N_ELEMENTS (bits))]);
      for (int f = HZ_TOOL_FORMAT_NONE; f <= HZ_TOOL_FORMAT_GIGACHAT; f++)
        {
          g_autofree char *content = NULL;
          g_autoptr (GPtrArray) calls = hz_tool_calls_parse (f, s->str, (gssize) s->len, &content);
          g_assert_nonnull (content);
          g_assert_cmpuint (hz_tool_calls_content_prefix (f, s->str, s->len), <=, s->len);
        }
    }
  g_rand_free (r);
}

/* The forced call of every format with JSON arguments (hz_tool_call_frame()), one and
 * (with a separator) two, reads back as those calls with no content: what tool_choice
 * "required" / a named function makes the model write is a call for the parser. */
static void
test_frames (void)
{
  guint n_framed = 0;
  for (int f = HZ_TOOL_FORMAT_NONE; f <= HZ_TOOL_FORMAT_GIGACHAT; f++)
    {
      g_autofree char *pre = NULL, *post = NULL, *pre2 = NULL, *post2 = NULL;
      const char *sep = NULL, *end = NULL;
      const gboolean ok = hz_tool_call_frame (f, "get_weather", &pre, &post, &sep, &end);
      g_assert_cmpint (ok, ==, f != HZ_TOOL_FORMAT_NONE && f != HZ_TOOL_FORMAT_QWEN3_CODER &&
                               f != HZ_TOOL_FORMAT_GLM && f != HZ_TOOL_FORMAT_MINIMAX_M2);
      if (!ok)
        {
          g_assert_null (pre);
          continue;
        }
      n_framed++;
      g_assert_true (hz_tool_call_frame (f, "get-time_2", &pre2, &post2, &sep, &end));
      /* the end token's text is in the reply (harmony's replies are detokenized with it) */
      g_autofree char *one = g_strconcat (pre, "{\"city\": \"Paris\"}", post, end, NULL);
      g_autofree char *content = NULL;
      g_autoptr (GPtrArray) calls = hz_tool_calls_parse (f, one, -1, &content);
      if (calls->len != 1)
        g_error ("%s: %u calls in %s", hz_tool_format_name (f), calls->len, one);
      HzToolCall *c = calls->pdata[0];
      g_assert_cmpstr (c->name, ==, "get_weather");
      g_assert_cmpstr (c->arguments, ==, W);
      g_assert_cmpstr (content, ==, "");
      if (sep == NULL)
        continue;
      g_autofree char *two = g_strconcat (pre, "{}", post, sep, pre2, "{\"city\": \"Oslo\"}",
                                          post2, end, NULL);
      g_autofree char *content2 = NULL;
      g_autoptr (GPtrArray) calls2 = hz_tool_calls_parse (f, two, -1, &content2);
      g_assert_cmpuint (calls2->len, ==, 2);
      g_assert_cmpstr (((HzToolCall *) calls2->pdata[0])->arguments, ==, "{}");
      g_assert_cmpstr (((HzToolCall *) calls2->pdata[1])->name, ==, "get-time_2");
      g_assert_cmpstr (content2, ==, "");
    }
  g_test_message ("%u formats have a forced-call frame that parses back", n_framed);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  tmpdir = g_dir_make_tmp ("hz-tool-calls-XXXXXX", NULL);
  g_test_add_func ("/tool-calls/render-fixtures", test_render_fixtures);
  g_test_add_func ("/tool-calls/render-bad-json", test_render_bad_json);
  g_test_add_func ("/tool-calls/formats", test_formats);
  g_test_add_func ("/tool-calls/parse", test_parse);
  g_test_add_func ("/tool-calls/stream-prefix", test_stream_prefix);
  g_test_add_func ("/tool-calls/hostile", test_hostile);
  g_test_add_func ("/tool-calls/frames", test_frames);
  const int rc = g_test_run ();
  g_autofree char *v = g_build_filename (tmpdir, "vocab.gguf", NULL);
  g_unlink (v);
  g_rmdir (tmpdir);
  return rc;
}
