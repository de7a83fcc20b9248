/* engine/tool-calls.c — tool calls in a model's reply (hanzo/tool-calls.h).
 *
 * A reply is scanned for the format's start markers; the text between calls is content.
 * At each marker a parser of the family reads one call (or one group of calls) and says
 * how many bytes it took; when it cannot (not JSON, no name, not closed), the marker stays
 * in the content and the scan goes on after it. JSON is delimited by a bracket scanner
 * that skips strings (hz_json_bracket_scan) and then parsed by json-glib, so arguments are
 * always checked JSON; nothing here allocates in proportion to more than the reply. */
#include "hanzo/tool-calls.h"

#include <json-glib/json-glib.h>
#include <string.h>
#include "hanzo/json-scan.h"
#include "hanzo/json-out.h"
#include "model-private.h"
#include "gguf.h"

void
hz_tool_call_free (HzToolCall *c)
{
  if (c == NULL)
    return;
  g_free (c->id);
  g_free (c->name);
  g_free (c->arguments);
  g_free (c);
}

/* ------------------------------------------------------------------ formats */

typedef struct {
  HzToolFormat format;
  const char  *name;
  const char  *detect[2];   /* every one must be in the template */
  const char  *start[2];    /* where a call begins in a reply */
} Format;

/* Detection order matters: more specific markers first (Qwen3-Coder's and GLM's calls
 * also start with <tool_call>). */
static const Format formats[] = {
  { HZ_TOOL_FORMAT_HARMONY, "harmony", { "<|call|>", "<|channel|>" }, { "to=functions.", NULL } },
  { HZ_TOOL_FORMAT_MISTRAL, "mistral", { "[TOOL_CALLS]", NULL }, { "[TOOL_CALLS]", NULL } },
  { HZ_TOOL_FORMAT_QWEN3_CODER, "qwen3-coder", { "<function=", "<parameter=" }, { "<tool_call>", NULL } },
  { HZ_TOOL_FORMAT_GLM, "glm", { "<arg_key>", "<tool_call>" }, { "<tool_call>", NULL } },
  { HZ_TOOL_FORMAT_MINIMAX_M2, "minimax-m2", { "<minimax:tool_call>", NULL }, { "<minimax:tool_call>", NULL } },
  { HZ_TOOL_FORMAT_DEEPSEEK_R1, "deepseek-r1", { "tool\xe2\x96\x81" "calls\xe2\x96\x81" "begin", NULL },
    { "<\xef\xbd\x9c" "tool\xe2\x96\x81" "calls\xe2\x96\x81" "begin\xef\xbd\x9c>", NULL } },
  { HZ_TOOL_FORMAT_KIMI_K2, "kimi-k2", { "<|tool_calls_section_begin|>", NULL },
    { "<|tool_calls_section_begin|>", NULL } },
  { HZ_TOOL_FORMAT_COMMAND_R, "command-r", { "<|START_ACTION|>", NULL }, { "<|START_ACTION|>", NULL } },
  { HZ_TOOL_FORMAT_NEMOTRON, "nemotron", { "<TOOLCALL>", NULL }, { "<TOOLCALL>", NULL } },
  { HZ_TOOL_FORMAT_GIGACHAT, "gigachat", { "<|function_call|>", NULL }, { "<|function_call|>", NULL } },
  { HZ_TOOL_FORMAT_HERMES, "hermes", { "<tool_call>", NULL }, { "<tool_call>", NULL } },
  { HZ_TOOL_FORMAT_LLAMA3, "llama3", { "<|start_header_id|>", "\"parameters\"" }, { "<|python_tag|>", NULL } },
};

static const Format *
format_get (HzToolFormat f)
{
  for (gsize i = 0; i < G_N_ELEMENTS (formats); i++)
    if (formats[i].format == f)
      return &formats[i];
  return NULL;
}

HzToolFormat
hz_tool_format_from_template (const char *tmpl)
{
  for (gsize i = 0; tmpl && i < G_N_ELEMENTS (formats); i++)
    if (strstr (tmpl, formats[i].detect[0]) &&
        (formats[i].detect[1] == NULL || strstr (tmpl, formats[i].detect[1])))
      return formats[i].format;
  return HZ_TOOL_FORMAT_NONE;
}

HzToolFormat
hz_model_tool_format (const HzModel *m)
{
  g_return_val_if_fail (m != NULL, HZ_TOOL_FORMAT_NONE);
  g_autofree char *tmpl = hz_gguf_get_str (hz_model_get_gguf (m), "tokenizer.chat_template");
  return hz_tool_format_from_template (tmpl);
}

const char *
hz_tool_format_name (HzToolFormat f)
{
  const Format *fm = format_get (f);
  return fm ? fm->name : "none";
}

/* ------------------------------------------------------------------ scanning */

/* A cursor over the reply. */
typedef struct {
  const char *s;
  gsize       len, i;
} Scan;

static gboolean
is_space (char c)
{
  return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

static void
skip_space (Scan *sc)
{
  while (sc->i < sc->len && is_space (sc->s[sc->i]))
    sc->i++;
}

/* The offset of `needle` at or after the cursor, or -1. */
static gssize
find (const Scan *sc, const char *needle)
{
  const gsize n = strlen (needle);
  if (n == 0 || sc->len - sc->i < n)
    return -1;
  const char *hit = g_strstr_len (sc->s + sc->i, (gssize) (sc->len - sc->i), needle);
  /* g_strstr_len stops at a NUL; a reply holds none that matter */
  return hit ? hit - sc->s : -1;
}

/* Take `lit` at the cursor (after white space when `space`). */
static gboolean
take (Scan *sc, const char *lit, gboolean space)
{
  const gsize save = sc->i;
  if (space)
    skip_space (sc);
  const gsize n = strlen (lit);
  if (sc->len - sc->i >= n && memcmp (sc->s + sc->i, lit, n) == 0)
    {
      sc->i += n;
      return TRUE;
    }
  sc->i = save;
  return FALSE;
}

/* The text up to `end` (not taken), trimmed; NULL when `end` is not found. */
static char *
take_until (Scan *sc, const char *end)
{
  const gssize at = find (sc, end);
  if (at < 0)
    return NULL;
  char *t = g_strndup (sc->s + sc->i, (gsize) at - sc->i);
  sc->i = (gsize) at;
  return g_strstrip (t);
}

/* Parse `len` bytes as JSON (NULL when they are not exactly one value). */
static JsonNode *
parse_json (const char *s, gsize len)
{
  g_autoptr (JsonParser) p = json_parser_new_immutable ();
  if (!g_utf8_validate_len (s, len, NULL) ||
      !json_parser_load_from_data (p, s, (gssize) len, NULL) || json_parser_get_root (p) == NULL)
    return NULL;
  return json_node_copy (json_parser_get_root (p));
}

/* The JSON object or array at the cursor (after white space), taken; NULL otherwise. */
static JsonNode *
take_json (Scan *sc)
{
  const gsize save = sc->i;
  skip_space (sc);
  const gsize n = hz_json_bracket_scan (sc->s + sc->i, sc->len - sc->i, NULL);
  JsonNode *v = n ? parse_json (sc->s + sc->i, n) : NULL;
  sc->i = v ? sc->i + n : save;
  return v;
}

static const char *
string_member (JsonObject *o, const char *name)
{
  JsonNode *n = o && json_object_has_member (o, name) ? json_object_get_member (o, name) : NULL;
  return n && JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING
           ? json_node_get_string (n) : NULL;
}

/* A call of `name` with `args` (an object, or a string holding one; NULL: {}); NULL when
 * the arguments are something else. */
static HzToolCall *
make_call (const char *id, const char *name, JsonNode *args)
{
  if (name == NULL || *name == '\0')
    return NULL;
  g_autoptr (JsonNode) parsed = NULL;
  if (args && JSON_NODE_HOLDS_VALUE (args) && json_node_get_value_type (args) == G_TYPE_STRING)
    {
      const char *t = json_node_get_string (args);
      args = parsed = parse_json (t, strlen (t));
    }
  if (args && !JSON_NODE_HOLDS_OBJECT (args))
    return NULL;
  HzToolCall *c = g_new0 (HzToolCall, 1);
  /* names from the reply's text, which need not be UTF-8 (fuzz-tool-calls) */
  c->id = id ? g_utf8_make_valid (id, -1) : NULL;
  c->name = g_utf8_make_valid (name, -1);
  c->arguments = args ? hz_json_node_to_string (args, FALSE) : g_strdup ("{}");
  return c;
}

/* make_call() appended to `out`; FALSE when it is not a call. */
static gboolean
add_call (GPtrArray *out, const char *id, const char *name, JsonNode *args)
{
  HzToolCall *c = make_call (id, name, args);
  if (c)
    g_ptr_array_add (out, c);
  return c != NULL;
}

/* An empty arguments object, for the parameters of the XML-style families. */
static JsonNode *
new_args (void)
{
  return json_node_init_object (json_node_alloc (), json_object_new ());
}

/* A call from a JSON object {NAME_KEY: name, ARGS_KEY: {...}} (the keys each family uses). */
static HzToolCall *
call_from_object (JsonNode *n)
{
  JsonObject *o = JSON_NODE_HOLDS_OBJECT (n) ? json_node_get_object (n) : NULL;
  if (o == NULL)
    return NULL;
  if (json_object_has_member (o, "function") &&
      JSON_NODE_HOLDS_OBJECT (json_object_get_member (o, "function")))
    o = json_object_get_object_member (o, "function");   /* the OpenAI shape */
  const char *name = string_member (o, "name");
  if (name == NULL)
    name = string_member (o, "tool_name");
  static const char *const args_keys[] = { "arguments", "parameters", NULL };
  JsonNode *args = NULL;
  for (int k = 0; args_keys[k] && args == NULL; k++)
    if (json_object_has_member (o, args_keys[k]))
      args = json_object_get_member (o, args_keys[k]);
  const char *id = string_member (o, "id");
  return make_call (id ? id : string_member (o, "tool_call_id"), name, args);
}

/* Calls from a JSON object (one) or array (each element); FALSE when one is not a call. */
static gboolean
calls_from_json (JsonNode *n, GPtrArray *out)
{
  if (JSON_NODE_HOLDS_OBJECT (n))
    {
      HzToolCall *c = call_from_object (n);
      if (c)
        g_ptr_array_add (out, c);
      return c != NULL;
    }
  if (!JSON_NODE_HOLDS_ARRAY (n) || json_array_get_length (json_node_get_array (n)) == 0)
    return FALSE;
  JsonArray *a = json_node_get_array (n);
  for (guint i = 0; i < json_array_get_length (a); i++)
    {
      HzToolCall *c = call_from_object (json_array_get_element (a, i));
      if (c == NULL)
        return FALSE;
      g_ptr_array_add (out, c);
    }
  return TRUE;
}

/* An XML-style parameter value: JSON when it is JSON (numbers, booleans, objects), else a
 * string; one newline at each end dropped (the templates write "\nVALUE\n"). */
static void
set_param (JsonObject *args, const char *key, const char *v, gsize n)
{
  if (n > 0 && v[0] == '\n')
    v++, n--;
  if (n > 0 && v[n - 1] == '\n')
    n--;
  JsonNode *j = parse_json (v, n);
  if (j == NULL || (JSON_NODE_HOLDS_VALUE (j) && json_node_get_value_type (j) == G_TYPE_STRING &&
                    !(n > 0 && v[0] == '"')))
    {
      g_clear_pointer (&j, json_node_unref);
      j = json_node_new (JSON_NODE_VALUE);
      g_autofree char *s = g_utf8_make_valid (v, (gssize) n);
      json_node_set_string (j, s);
    }
  g_autofree char *valid_key = g_utf8_make_valid (key, -1);
  json_object_set_member (args, valid_key, j);
}

/* Parameters KEY/VALUE until `end`: open_key KEY close_key VALUE close_value, repeated
 * (open_value NULL: the value follows the key's close directly). */
static gboolean
take_params (Scan *sc, JsonObject *args, const char *open_key, const char *close_key,
             const char *open_value, const char *close_value)
{
  while (take (sc, open_key, TRUE))
    {
      g_autofree char *key = take_until (sc, close_key);
      if (key == NULL || *key == '\0' || !take (sc, close_key, FALSE) ||
          (open_value && !take (sc, open_value, TRUE)))
        return FALSE;
      const gssize end = find (sc, close_value);
      if (end < 0)
        return FALSE;
      set_param (args, key, sc->s + sc->i, (gsize) end - sc->i);
      sc->i = (gsize) end + strlen (close_value);
    }
  return TRUE;
}

/* ------------------------------------------------------------- the families */

/* MARKER JSON [CLOSE]: Hermes, Nemotron, Command R, GigaChat, Llama 3's python tag. */
static gboolean
parse_json_call (Scan *sc, const char *marker, const char *close, GPtrArray *out)
{
  if (!take (sc, marker, FALSE))
    return FALSE;
  g_autoptr (JsonNode) v = take_json (sc);
  if (v == NULL || !calls_from_json (v, out))
    return FALSE;
  return close == NULL || take (sc, close, TRUE);
}

/* {"name", "parameters"} objects as the whole reply, separated by ';' (Llama 3). */
static gboolean
parse_llama3 (Scan *sc, GPtrArray *out)
{
  take (sc, "<|python_tag|>", FALSE);
  do
    {
      g_autoptr (JsonNode) v = take_json (sc);
      if (v == NULL || !JSON_NODE_HOLDS_OBJECT (v) || !calls_from_json (v, out))
        return FALSE;
    }
  while (take (sc, ";", TRUE));
  return TRUE;
}

/* [TOOL_CALLS][...] or [TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{...} (Mistral). */
static gboolean
parse_mistral (Scan *sc, GPtrArray *out)
{
  if (!take (sc, "[TOOL_CALLS]", FALSE))
    return FALSE;
  skip_space (sc);
  if (sc->i < sc->len && sc->s[sc->i] == '[')
    {
      g_autoptr (JsonNode) v = take_json (sc);
      return v && JSON_NODE_HOLDS_ARRAY (v) && calls_from_json (v, out);
    }
  const gssize args = find (sc, "[ARGS]");
  const gssize cid = find (sc, "[CALL_ID]");
  const gsize name_end = (gsize) (cid >= 0 && (args < 0 || cid < args) ? cid : args);
  if (args < 0)
    return FALSE;
  g_autofree char *name = g_strstrip (g_strndup (sc->s + sc->i, name_end - sc->i));
  sc->i = name_end;
  g_autofree char *id = NULL;
  if (take (sc, "[CALL_ID]", FALSE) && (id = take_until (sc, "[ARGS]")) == NULL)
    return FALSE;
  if (!take (sc, "[ARGS]", FALSE))
    return FALSE;
  g_autoptr (JsonNode) v = take_json (sc);
  return v && add_call (out, id, name, v);
}

/* <tool_call><function=NAME><parameter=K>V</parameter>...</function></tool_call>. */
static gboolean
parse_qwen3_coder (Scan *sc, GPtrArray *out)
{
  if (!take (sc, "<tool_call>", FALSE) || !take (sc, "<function=", TRUE))
    return FALSE;
  g_autofree char *name = take_until (sc, ">");
  if (name == NULL || !take (sc, ">", FALSE))
    return FALSE;
  g_autoptr (JsonNode) args = new_args ();
  if (!take_params (sc, json_node_get_object (args), "<parameter=", ">", NULL, "</parameter>") ||
      !take (sc, "</function>", TRUE) || !take (sc, "</tool_call>", TRUE))
    return FALSE;
  return add_call (out, NULL, name, args);
}

/* <tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>...</tool_call> (GLM). */
static gboolean
parse_glm (Scan *sc, GPtrArray *out)
{
  if (!take (sc, "<tool_call>", FALSE))
    return FALSE;
  const gssize k = find (sc, "<arg_key>"), e = find (sc, "</tool_call>");
  if (e < 0)
    return FALSE;
  const gsize name_end = (gsize) (k >= 0 && k < e ? k : e);
  g_autofree char *name = g_strstrip (g_strndup (sc->s + sc->i, name_end - sc->i));
  sc->i = name_end;
  g_autoptr (JsonNode) args = new_args ();
  if (!take_params (sc, json_node_get_object (args), "<arg_key>", "</arg_key>", "<arg_value>",
                    "</arg_value>") ||
      !take (sc, "</tool_call>", TRUE))
    return FALSE;
  return add_call (out, NULL, name, args);
}

/* <minimax:tool_call><invoke name="N"><parameter name="K">V</parameter></invoke>...
 * </minimax:tool_call>. */
static gboolean
parse_minimax (Scan *sc, GPtrArray *out)
{
  if (!take (sc, "<minimax:tool_call>", FALSE))
    return FALSE;
  gboolean any = FALSE;
  while (take (sc, "<invoke name=\"", TRUE))
    {
      g_autofree char *name = take_until (sc, "\">");
      if (name == NULL || !take (sc, "\">", FALSE))
        return FALSE;
      g_autoptr (JsonNode) args = new_args ();
      if (!take_params (sc, json_node_get_object (args), "<parameter name=\"", "\">", NULL,
                        "</parameter>") ||
          !take (sc, "</invoke>", TRUE))
        return FALSE;
      if (!add_call (out, NULL, name, args))
        return FALSE;
      any = TRUE;
    }
  return any && take (sc, "</minimax:tool_call>", TRUE);
}

#define FW_BAR "\xef\xbd\x9c"      /* ｜ */
#define SP_LOW "\xe2\x96\x81"      /* ▁ */

/* DeepSeek R1: <｜tool▁calls▁begin｜> (<｜tool▁call▁begin｜>TYPE<｜tool▁sep｜>NAME
 * ```json\n{...}\n```<｜tool▁call▁end｜>)+ <｜tool▁calls▁end｜>. */
static gboolean
parse_deepseek (Scan *sc, GPtrArray *out)
{
  if (!take (sc, "<" FW_BAR "tool" SP_LOW "calls" SP_LOW "begin" FW_BAR ">", FALSE))
    return FALSE;
  gboolean any = FALSE;
  while (take (sc, "<" FW_BAR "tool" SP_LOW "call" SP_LOW "begin" FW_BAR ">", TRUE))
    {
      const gssize sep = find (sc, "<" FW_BAR "tool" SP_LOW "sep" FW_BAR ">");
      if (sep < 0)
        return FALSE;
      sc->i = (gsize) sep + strlen ("<" FW_BAR "tool" SP_LOW "sep" FW_BAR ">");
      const gssize nl = find (sc, "\n");
      if (nl < 0)
        return FALSE;
      g_autofree char *name = g_strstrip (g_strndup (sc->s + sc->i, (gsize) nl - sc->i));
      sc->i = (gsize) nl;
      const gboolean fenced = take (sc, "```json", TRUE);
      g_autoptr (JsonNode) v = take_json (sc);
      if (v == NULL || !add_call (out, NULL, name, v))
        return FALSE;
      any = TRUE;
      if ((fenced && !take (sc, "```", TRUE)) ||
          !take (sc, "<" FW_BAR "tool" SP_LOW "call" SP_LOW "end" FW_BAR ">", TRUE))
        return FALSE;
    }
  take (sc, "<" FW_BAR "tool" SP_LOW "calls" SP_LOW "end" FW_BAR ">", TRUE);
  return any;
}

/* Kimi K2: <|tool_calls_section_begin|> (<|tool_call_begin|>functions.NAME:I
 * <|tool_call_argument_begin|>{...}<|tool_call_end|>)+ <|tool_calls_section_end|>. */
static gboolean
parse_kimi (Scan *sc, GPtrArray *out)
{
  if (!take (sc, "<|tool_calls_section_begin|>", FALSE))
    return FALSE;
  gboolean any = FALSE;
  while (take (sc, "<|tool_call_begin|>", TRUE))
    {
      g_autofree char *id = take_until (sc, "<|tool_call_argument_begin|>");
      if (id == NULL || !take (sc, "<|tool_call_argument_begin|>", FALSE))
        return FALSE;
      const char *dot = strrchr (id, '.');
      g_autofree char *name = g_strdup (dot ? dot + 1 : id);
      char *colon = strrchr (name, ':');
      if (colon)
        *colon = '\0';
      g_autoptr (JsonNode) v = take_json (sc);
      if (v == NULL || !add_call (out, id, name, v))
        return FALSE;
      any = TRUE;
      if (!take (sc, "<|tool_call_end|>", TRUE))
        return FALSE;
    }
  take (sc, "<|tool_calls_section_end|>", TRUE);
  return any;
}

/* gpt-oss (harmony): [<|start|>assistant][<|channel|>commentary] to=functions.NAME
 * [<|channel|>commentary] [<|constrain|>json]<|message|>{...}<|call|>; the scan starts at
 * the message's header (harmony_start). */
static gboolean
parse_harmony (Scan *sc, GPtrArray *out)
{
  const gssize to = find (sc, "to=functions.");
  if (to < 0)
    return FALSE;
  sc->i = (gsize) to + strlen ("to=functions.");
  gsize e = sc->i;
  while (e < sc->len && !is_space (sc->s[e]) && sc->s[e] != '<')
    e++;
  g_autofree char *name = g_strndup (sc->s + sc->i, e - sc->i);
  sc->i = e;
  const gssize msg = find (sc, "<|message|>");
  if (msg < 0)
    return FALSE;
  /* between the name and the message only the channel and the constraint */
  g_autofree char *between = g_strndup (sc->s + sc->i, (gsize) msg - sc->i);
  if (strstr (between, "<|end|>") || strstr (between, "<|start|>"))
    return FALSE;
  sc->i = (gsize) msg + strlen ("<|message|>");
  g_autoptr (JsonNode) v = take_json (sc);
  if (v == NULL || !add_call (out, NULL, name, v))
    return FALSE;
  take (sc, "<|call|>", TRUE);
  return TRUE;
}

/* Harmony: a call's message begins at the <|start|> or <|channel|> header before `to`
 * (its "to=functions.") with no <|message|> or <|end|> between them (the earliest such),
 * else at `to` itself. */
static gsize
harmony_start (const char *s, gsize len, gsize to)
{
  gsize best = to;
  static const char *const heads[] = { "<|start|>", "<|channel|>" };
  for (int h = 0; h < 2; h++)
    {
      const gsize n = strlen (heads[h]);
      for (gsize i = to; i-- > 0;)
        if (i + n <= len && memcmp (s + i, heads[h], n) == 0)
          {
            g_autofree char *mid = g_strndup (s + i, to - i);
            if (strstr (mid + 1, "<|message|>") == NULL && strstr (mid + 1, "<|end|>") == NULL)
              best = MIN (best, i);
            break;
          }
    }
  return best;
}

/* Where the next call may begin at or after `from`: its offset and the family's parser
 * input; -1 when none. */
static gssize
next_start (HzToolFormat f, const char *s, gsize len, gsize from)
{
  const Format *fm = format_get (f);
  gssize best = -1;
  for (int k = 0; fm && k < 2 && fm->start[k]; k++)
    {
      Scan sc = { s, len, from };
      const gssize at = find (&sc, fm->start[k]);
      if (at >= 0 && (best < 0 || at < best))
        best = at;
    }
  if (f == HZ_TOOL_FORMAT_HARMONY && best >= 0)
    best = (gssize) MAX (from, harmony_start (s, len, (gsize) best));
  if (f == HZ_TOOL_FORMAT_LLAMA3 && from == 0)
    {
      Scan sc = { s, len, 0 };
      skip_space (&sc);
      if (sc.i < len && s[sc.i] == '{')
        best = (gssize) sc.i;
    }
  return best;
}

static gboolean
parse_at (HzToolFormat f, Scan *sc, GPtrArray *out)
{
  switch (f)
    {
    case HZ_TOOL_FORMAT_HERMES: return parse_json_call (sc, "<tool_call>", "</tool_call>", out);
    case HZ_TOOL_FORMAT_NEMOTRON: return parse_json_call (sc, "<TOOLCALL>", "</TOOLCALL>", out);
    case HZ_TOOL_FORMAT_COMMAND_R:
      return parse_json_call (sc, "<|START_ACTION|>", "<|END_ACTION|>", out);
    case HZ_TOOL_FORMAT_GIGACHAT: return parse_json_call (sc, "<|function_call|>", NULL, out);
    case HZ_TOOL_FORMAT_LLAMA3: return parse_llama3 (sc, out);
    case HZ_TOOL_FORMAT_MISTRAL: return parse_mistral (sc, out);
    case HZ_TOOL_FORMAT_QWEN3_CODER: return parse_qwen3_coder (sc, out);
    case HZ_TOOL_FORMAT_GLM: return parse_glm (sc, out);
    case HZ_TOOL_FORMAT_MINIMAX_M2: return parse_minimax (sc, out);
    case HZ_TOOL_FORMAT_DEEPSEEK_R1: return parse_deepseek (sc, out);
    case HZ_TOOL_FORMAT_KIMI_K2: return parse_kimi (sc, out);
    case HZ_TOOL_FORMAT_HARMONY: return parse_harmony (sc, out);
    case HZ_TOOL_FORMAT_NONE: break;
    }
  return FALSE;
}

GPtrArray *
hz_tool_calls_parse (HzToolFormat f, const char *text, gssize len, char **content)
{
  GPtrArray *calls = g_ptr_array_new_with_free_func ((GDestroyNotify) hz_tool_call_free);
  const gsize n = text == NULL ? 0 : len < 0 ? strlen (text) : (gsize) len;
  g_autoptr (GString) rest = g_string_sized_new (n);
  gsize i = 0;
  while (i < n)
    {
      const gssize at = next_start (f, text, n, i);
      if (at < 0)
        break;
      g_string_append_len (rest, text + i, at - (gssize) i);
      Scan sc = { text, n, (gsize) at };
      const guint before = calls->len;
      if (parse_at (f, &sc, calls) && sc.i > (gsize) at)
        {
          i = sc.i;
          continue;
        }
      /* not a call: it stays content, and the scan goes on after its first byte */
      g_ptr_array_remove_range (calls, before, calls->len - before);
      g_string_append_c (rest, text[at]);
      i = (gsize) at + 1;
    }
  if (i < n)
    g_string_append_len (rest, text + i, (gssize) (n - i));
  if (content)
    {
      *content = g_string_free (g_steal_pointer (&rest), FALSE);
      if (calls->len > 0)
        g_strstrip (*content);
    }
  return calls;
}

gsize
hz_tool_calls_content_prefix (HzToolFormat f, const char *text, gsize len)
{
  const Format *fm = format_get (f);
  if (fm == NULL)
    return len;
  const gssize at = next_start (f, text, len, 0);
  if (at >= 0)
    return (gsize) at;
  if (f == HZ_TOOL_FORMAT_LLAMA3)
    {
      gsize i = 0;
      while (i < len && is_space (text[i]))
        i++;
      if (i == len)
        return 0;   /* only white space so far: a JSON call may still come */
    }
  /* a start marker (or harmony's header) may be cut at the end */
  gsize keep = len;
  const char *partial[] = { fm->start[0], fm->start[1],
                            f == HZ_TOOL_FORMAT_HARMONY ? "<|start|>" : NULL,
                            f == HZ_TOOL_FORMAT_HARMONY ? "<|channel|>" : NULL };
  for (gsize k = 0; k < G_N_ELEMENTS (partial); k++)
    {
      if (partial[k] == NULL)
        continue;
      const gsize m = strlen (partial[k]);
      for (gsize l = MIN (m - 1, len); l > 0; l--)
        if (memcmp (text + len - l, partial[k], l) == 0)
          {
            keep = MIN (keep, len - l);
            break;
          }
    }
  if (f == HZ_TOOL_FORMAT_HARMONY)
    {
      /* an open header (no <|message|> after it) may still get its "to=functions." */
      const gsize h = harmony_start (text, len, len);
      if (h < len)
        keep = MIN (keep, h);
    }
  return keep;
}

/* ------------------------------------------------------------- forced calls */

gboolean
hz_tool_call_frame (HzToolFormat f, const char *name, char **prefix, char **suffix,
                    const char **separator, const char **end)
{
  /* the prefix up to the name, after it, the suffix, the separator */
  static const struct {
    HzToolFormat f;
    const char *pre, *post, *suffix, *sep, *end;
  } frames[] = {
    { HZ_TOOL_FORMAT_HERMES, "<tool_call>\n{\"name\": \"", "\", \"arguments\": ",
      "}\n</tool_call>", "\n", NULL },
    { HZ_TOOL_FORMAT_NEMOTRON, "<TOOLCALL>[{\"name\": \"", "\", \"arguments\": ", "}]</TOOLCALL>",
      NULL, NULL },
    { HZ_TOOL_FORMAT_LLAMA3, "{\"name\": \"", "\", \"parameters\": ", "}", NULL, NULL },
    { HZ_TOOL_FORMAT_MISTRAL, "[TOOL_CALLS][{\"name\": \"", "\", \"arguments\": ", "}]", NULL,
      NULL },
    { HZ_TOOL_FORMAT_GIGACHAT, "<|function_call|>{\"name\": \"", "\", \"arguments\": ", "}",
      NULL, NULL },
    { HZ_TOOL_FORMAT_COMMAND_R, "<|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"",
      "\", \"parameters\": ", "}]<|END_ACTION|>", NULL, NULL },
    { HZ_TOOL_FORMAT_HARMONY, "<|channel|>commentary to=functions.", " json<|message|>", "", NULL,
      "<|call|>" },
    { HZ_TOOL_FORMAT_DEEPSEEK_R1,
      "<\xef\xbd\x9ctool\xe2\x96\x81" "calls\xe2\x96\x81" "begin\xef\xbd\x9c>"
      "<\xef\xbd\x9ctool\xe2\x96\x81" "call\xe2\x96\x81" "begin\xef\xbd\x9c>function"
      "<\xef\xbd\x9ctool\xe2\x96\x81" "sep\xef\xbd\x9c>", "\n```json\n",
      "\n```<\xef\xbd\x9ctool\xe2\x96\x81" "call\xe2\x96\x81" "end\xef\xbd\x9c>"
      "<\xef\xbd\x9ctool\xe2\x96\x81" "calls\xe2\x96\x81" "end\xef\xbd\x9c>", NULL, NULL },
    { HZ_TOOL_FORMAT_KIMI_K2, "<|tool_calls_section_begin|><|tool_call_begin|>functions.",
      ":0<|tool_call_argument_begin|>", "<|tool_call_end|><|tool_calls_section_end|>", NULL,
      NULL },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (frames); i++)
    if (frames[i].f == f)
      {
        *prefix = g_strconcat (frames[i].pre, name, frames[i].post, NULL);
        *suffix = g_strdup (frames[i].suffix);
        *separator = frames[i].sep;
        *end = frames[i].end;
        return TRUE;
      }
  *prefix = *suffix = NULL;
  *separator = *end = NULL;
  return FALSE;
}
