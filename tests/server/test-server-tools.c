/* tests/server/test-server-tools.c — the streaming split of server/server-tools.c: replies of
 * several tool-call families, with content before, between and after their calls, fed to an
 * HzToolStream in two pieces cut at every byte and byte by byte, give exactly what the
 * whole reply parses to: the content sent as it came plus the rest at the end equals the
 * parsed content, and the calls (with ids) are the parsed calls; content is never sent
 * after a call has begun. Also the tools check of requests: tool_choice forms and the
 * tools the template gets. */
#include <string.h>
#include "server-tools.h"

static const struct { HzToolFormat f; const char *text; } replies[] = {
  { HZ_TOOL_FORMAT_HERMES, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>" },
  { HZ_TOOL_FORMAT_HERMES, "  Let me check.\n<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>\n"
                           "and <tool_call>{\"name\": \"b\", \"arguments\": {\"x\": [1, \"]\"]}}</tool_call> done \n" },
  { HZ_TOOL_FORMAT_HERMES, "No call, just <tool text and a < sign." },
  { HZ_TOOL_FORMAT_HERMES, "Broken: <tool_call>{\"name\": \"a\", \"arguments\": {</tool_call> end" },
  { HZ_TOOL_FORMAT_LLAMA3, "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}" },
  { HZ_TOOL_FORMAT_LLAMA3, "Paris is sunny {mostly}." },
  { HZ_TOOL_FORMAT_MISTRAL, "Sure.[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"}" },
  { HZ_TOOL_FORMAT_QWEN3_CODER, "Checking.\n<tool_call>\n<function=f>\n<parameter=k>\nv\n</parameter>\n</function>\n</tool_call>" },
};

typedef struct {
  GString   *sent;
  GPtrArray *calls;
  char      *rest;
} Fed;

static void
fed_clear (Fed *f)
{
  g_string_free (f->sent, TRUE);
  g_ptr_array_unref (f->calls);
  g_free (f->rest);
}

/* Feed `text` cut at the offsets `cuts` (ascending, -1 ended). */
static Fed
feed (HzToolFormat format, const char *text, const gssize *cuts)
{
  g_autoptr (HzToolStream) s = hz_tool_stream_new (format, 0);
  Fed f = { g_string_new (NULL), NULL, NULL };
  gsize from = 0;
  const gsize n = strlen (text);
  for (int i = 0;; i++)
    {
      const gsize to = cuts[i] < 0 ? n : (gsize) cuts[i];
      g_autofree char *out = hz_tool_stream_push (s, text + from, to - from);
      g_string_append (f.sent, out);
      from = to;
      if (cuts[i] < 0)
        break;
    }
  f.calls = hz_tool_stream_finish (s, &f.rest);
  return f;
}

static void
check (HzToolFormat format, const char *text, const Fed *f)
{
  g_autofree char *content = NULL;
  g_autoptr (GPtrArray) calls = hz_tool_calls_parse (format, text, -1, &content);
  g_autofree char *got = g_strconcat (f->sent->str, f->rest, NULL);
  /* what was sent may keep white space at its start that the parsed content trims */
  const char *g = got;
  if (calls->len > 0)
    while (g_ascii_isspace (*g))
      g++;
  if (strcmp (g, content) != 0)
    g_error ("'%s': sent '%s' + rest '%s', want '%s'", text, f->sent->str, f->rest, content);
  g_assert_cmpuint (f->calls->len, ==, calls->len);
  for (guint i = 0; i < calls->len; i++)
    {
      const HzToolCall *a = f->calls->pdata[i], *b = calls->pdata[i];
      g_assert_cmpstr (a->name, ==, b->name);
      g_assert_cmpstr (a->arguments, ==, b->arguments);
      g_assert_true (a->id && *a->id);
    }
}

static void
test_stream (void)
{
  guint n_feeds = 0;
  for (gsize r = 0; r < G_N_ELEMENTS (replies); r++)
    {
      const char *text = replies[r].text;
      const gsize n = strlen (text);
      for (gsize cut = 0; cut <= n; cut++)
        {
          const gssize cuts[] = { (gssize) cut, -1 };
          Fed f = feed (replies[r].f, text, cuts);
          check (replies[r].f, text, &f);
          fed_clear (&f);
          n_feeds++;
        }
      g_autofree gssize *bytes = g_new (gssize, n + 1);
      for (gsize i = 0; i < n; i++)
        bytes[i] = (gssize) i + 1;
      bytes[n] = -1;
      Fed f = feed (replies[r].f, text, bytes);
      check (replies[r].f, text, &f);
      fed_clear (&f);
    }
  g_test_message ("%u replies fed in two pieces at every cut, and byte by byte", n_feeds);
}

static HzApiRequest *
request (const char *body, GError **error)
{
  return hz_api_request_parse (HZ_API_CHAT, body, strlen (body), NULL, error);
}

static void
test_choice (void)
{
  static const char tools[] =
    "[{\"type\":\"function\",\"function\":{\"name\":\"a\"}},"
    "{\"type\":\"function\",\"function\":{\"name\":\"b\",\"parameters\":{\"type\":\"object\"}}}]";
  static const struct { const char *choice; HzApiToolChoice want; guint n_tools; } cases[] = {
    { NULL, HZ_API_TOOL_CHOICE_AUTO, 2 },
    { "\"auto\"", HZ_API_TOOL_CHOICE_AUTO, 2 },
    { "\"none\"", HZ_API_TOOL_CHOICE_NONE, 0 },
    { "\"required\"", HZ_API_TOOL_CHOICE_REQUIRED, 2 },
    { "{\"type\":\"function\",\"function\":{\"name\":\"b\"}}", HZ_API_TOOL_CHOICE_NAMED, 1 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *body = g_strdup_printf (
        "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"tools\":%s%s%s}",
        tools, cases[i].choice ? ",\"tool_choice\":" : "", cases[i].choice ? cases[i].choice : "");
      g_autoptr (GError) error = NULL;
      g_autoptr (HzApiRequest) r = request (body, &error);
      g_assert_no_error (error);
      HzApiTools t;
      g_assert_true (hz_api_tools_check (r, &t, NULL, &error));
      g_assert_cmpint (t.choice, ==, cases[i].want);
      if (cases[i].n_tools == 0)
        g_assert_null (t.tools_json);
      else
        {
          g_autoptr (JsonParser) p = json_parser_new ();
          g_assert_true (json_parser_load_from_data (p, t.tools_json, -1, NULL));
          g_assert_cmpuint (json_array_get_length (json_node_get_array (json_parser_get_root (p))),
                            ==, cases[i].n_tools);
        }
      if (cases[i].want == HZ_API_TOOL_CHOICE_NAMED)
        {
          g_assert_cmpstr (t.named, ==, "b");
          g_assert_nonnull (strstr (t.tools_json, "\"b\""));
        }
      hz_api_tools_clear (&t);
    }
  /* no tools: none; a tool message and an assistant call are kept on the messages */
  g_autoptr (GError) error = NULL;
  g_autoptr (HzApiRequest) r = request (
    "{\"model\":\"m\",\"messages\":[{\"role\":\"assistant\",\"content\":null,\"tool_calls\":"
    "[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"a\",\"arguments\":\"{}\"}}]},"
    "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"name\":\"a\",\"content\":\"ok\"}]}", &error);
  g_assert_no_error (error);
  HzApiTools t;
  g_assert_true (hz_api_tools_check (r, &t, NULL, &error));
  g_assert_cmpint (t.choice, ==, HZ_API_TOOL_CHOICE_NONE);
  g_assert_null (t.tools_json);
  g_assert_nonnull (strstr (r->messages[0].tool_calls, "\"c1\""));
  g_assert_cmpstr (r->messages[0].content, ==, "");
  g_assert_cmpstr (r->messages[1].tool_call_id, ==, "c1");
  g_assert_cmpstr (r->messages[1].name, ==, "a");
  /* a call that is not OpenAI's shape is refused, naming messages */
  g_autoptr (HzApiRequest) bad = request (
    "{\"model\":\"m\",\"messages\":[{\"role\":\"assistant\",\"tool_calls\":[{\"function\":{}}]}]}",
    &error);
  g_assert_no_error (error);
  g_autofree char *param = NULL;
  g_assert_false (hz_api_tools_check (bad, &t, &param, &error));
  g_assert_error (error, HZ_API_ERROR, HZ_API_ERROR_INVALID_VALUE);
  g_assert_cmpstr (param, ==, "messages");
}

/* parallel_tool_calls false: the first call kept, the later ones dropped; the forced
 * choices' constraints: none for "auto", one frame per tool for "required" (too many
 * tools and an XML-argument format refused), a forced choice with response_format
 * refused. */
static void
test_single_and_forced (void)
{
  g_autoptr (HzToolStream) s = hz_tool_stream_new (HZ_TOOL_FORMAT_HERMES, 1);
  static const char two[] = "<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>\n"
                            "<tool_call>\n{\"name\": \"b\", \"arguments\": {}}\n</tool_call>";
  g_free (hz_tool_stream_push (s, two, strlen (two)));
  g_autofree char *rest = NULL;
  g_autoptr (GPtrArray) calls = hz_tool_stream_finish (s, &rest);
  g_assert_cmpuint (calls->len, ==, 1);
  g_assert_cmpstr (((HzToolCall *) calls->pdata[0])->name, ==, "a");
  g_assert_cmpstr (rest, ==, "");

  g_autoptr (GString) many = g_string_new ("[");
  for (int i = 0; i < HZ_API_MAX_FORCED_TOOLS + 1; i++)
    g_string_append_printf (many, "%s{\"type\":\"function\",\"function\":{\"name\":\"f%d\","
                            "\"parameters\":{\"type\":\"object\",\"properties\":{\"x\":"
                            "{\"type\":\"integer\"}}}}}", i ? "," : "", i);
  g_string_append (many, "]");
  static const struct {
    const char *choice, *extra;
    HzToolFormat format;
    gboolean schema, refused;
  } cases[] = {
    { "\"auto\"", "", HZ_TOOL_FORMAT_HERMES, FALSE, FALSE },
    { "\"required\"", "", HZ_TOOL_FORMAT_HERMES, TRUE, FALSE },
    { "\"required\"", "", HZ_TOOL_FORMAT_LLAMA3, TRUE, FALSE },
    { "{\"type\":\"function\",\"function\":{\"name\":\"f3\"}}", "", HZ_TOOL_FORMAT_HARMONY, TRUE,
      FALSE },
    { "\"required\"", "", HZ_TOOL_FORMAT_GLM, FALSE, TRUE },
    { "\"required\"", "many", HZ_TOOL_FORMAT_HERMES, FALSE, TRUE },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const gboolean all = strcmp (cases[i].extra, "many") == 0;
      g_autofree char *body = g_strdup_printf (
        "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"tools\":%s,"
        "\"tool_choice\":%s}", all ? many->str : "[{\"type\":\"function\",\"function\":{\"name\":"
        "\"f3\"}},{\"type\":\"function\",\"function\":{\"name\":\"g\",\"parameters\":{\"type\":"
        "\"object\",\"properties\":{\"q\":{\"type\":\"string\",\"pattern\":\"x\"}}}}}]",
        cases[i].choice);
      g_autoptr (GError) error = NULL;
      g_autoptr (HzApiRequest) r = request (body, &error);
      g_assert_no_error (error);
      HzApiTools t;
      g_assert_true (hz_api_tools_check (r, &t, NULL, &error));
      /* no model: only harmony's end token is looked up in one, and it is not found */
      g_autoptr (HzJsonSchema) schema = hz_api_tools_forced (r, &t, cases[i].format, NULL, NULL, &error);
      if (cases[i].refused)
        g_assert_error (error, HZ_API_ERROR, HZ_API_ERROR_UNSUPPORTED);
      else
        g_assert_no_error (error);
      g_assert_true ((schema != NULL) == cases[i].schema);
      hz_api_tools_clear (&t);
    }
  g_autoptr (GError) error = NULL;
  g_autoptr (HzApiRequest) r = request (
    "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"tools\":"
    "[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}],\"tool_choice\":\"required\","
    "\"response_format\":{\"type\":\"json_object\"},\"parallel_tool_calls\":false}", &error);
  g_assert_no_error (error);
  g_assert_true (r->single_tool_call);
  HzApiTools t;
  g_autofree char *param = NULL;
  g_assert_false (hz_api_tools_check (r, &t, &param, &error));
  g_assert_error (error, HZ_API_ERROR, HZ_API_ERROR_INVALID_VALUE);
  g_assert_cmpstr (param, ==, "response_format");
}

/* A forced reply streamed: fed in every cut into two pieces (and byte by byte), its calls
 * come as pieces (the first with id and name, then argument fragments) whose joined
 * arguments are JSON of the same value as the final parse's, and no content. */
static void
test_forced_pieces (void)
{
  static const char *const names[] = { "get_weather", "get_time" };
  char *prefixes[2], *suffix = NULL;
  const char *sep = NULL, *end = NULL;
  for (int i = 0; i < 2; i++)
    {
      g_free (suffix);
      g_assert_true (hz_tool_call_frame (HZ_TOOL_FORMAT_HERMES, names[i], &prefixes[i], &suffix,
                                         &sep, &end));
    }
  g_autofree char *text = g_strconcat (prefixes[1], "{\"zone\": \"U T\\\"C\"}", suffix, sep,
                                       prefixes[0], "{ \"city\" : \"Par is\", \"n\": [1, {}] }",
                                       suffix, NULL);
  const gsize n = strlen (text);
  for (gsize cut = 0; cut <= n; cut++)
    for (int bytewise = 0; bytewise < (cut == 0 ? 2 : 1); bytewise++)
      {
        g_autoptr (HzToolStream) s = hz_tool_stream_new (HZ_TOOL_FORMAT_HERMES, 0);
        hz_tool_stream_set_forced (s, names, (const char *const *) prefixes, 2, suffix, sep);
        GString *args[2] = { g_string_new (NULL), g_string_new (NULL) };
        const char *got_name[2] = { NULL, NULL };
        g_autoptr (GPtrArray) keep = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);
        for (gsize at = 0; at < n;)
          {
            const gsize len = bytewise ? 1 : at == 0 && cut > 0 ? cut : n - at;
            g_autofree char *content = hz_tool_stream_push (s, text + at, MIN (len, n - at));
            g_assert_cmpstr (content, ==, "");
            at += MIN (len, n - at);
            GPtrArray *d = hz_tool_stream_take_deltas (s);
            g_ptr_array_add (keep, d);
            for (guint k = 0; k < d->len; k++)
              {
                const HzToolDelta *p = d->pdata[k];
                g_assert_cmpuint (p->index, <, 2);
                g_assert_true ((p->id != NULL) == (p->name != NULL));
                if (p->name)
                  {
                    g_assert_null (got_name[p->index]);
                    g_assert_true (g_str_has_prefix (p->id, "call_"));
                    got_name[p->index] = p->name;
                  }
                g_assert_nonnull (got_name[p->index]);
                g_string_append (args[p->index], p->arguments);
              }
          }
        g_assert_cmpuint (hz_tool_stream_n_streamed (s), ==, 2);
        g_autofree char *rest = NULL;
        g_autoptr (GPtrArray) calls = hz_tool_stream_finish (s, &rest);
        g_assert_cmpuint (calls->len, ==, 2);
        for (int i = 0; i < 2; i++)
          {
            const HzToolCall *c = calls->pdata[i];
            g_assert_cmpstr (got_name[i], ==, c->name);
            g_autoptr (JsonNode) a = json_from_string (args[i]->str, NULL);
            g_autoptr (JsonNode) b = json_from_string (c->arguments, NULL);
            g_assert_nonnull (a);
            g_assert_true (json_node_equal (a, b));
            g_string_free (args[i], TRUE);
          }
        g_assert_cmpstr (got_name[0], ==, "get_time");
      }
  for (int i = 0; i < 2; i++)
    g_free (prefixes[i]);
  g_free (suffix);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/server-tools/stream", test_stream);
  g_test_add_func ("/server-tools/choice", test_choice);
  g_test_add_func ("/server-tools/single-and-forced", test_single_and_forced);
  g_test_add_func ("/server-tools/forced-pieces", test_forced_pieces);
  return g_test_run ();
}
