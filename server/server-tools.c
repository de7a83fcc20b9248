/* server/server-tools.c — tools and tool calls in the OpenAI API (server-tools.h). */
#include "server-tools.h"

#include <string.h>
#include "hanzo/json-out.h"

/* ------------------------------------------------------------------ checking */

/* Member `name` of `o` (nullable), or NULL when absent or JSON null. */
static JsonNode *
get (JsonObject *o, const char *name)
{
  JsonNode *n = o ? json_object_get_member (o, name) : NULL;
  return n && !JSON_NODE_HOLDS_NULL (n) ? n : NULL;
}

static JsonObject *
object_of (JsonNode *n)
{
  return n && JSON_NODE_HOLDS_OBJECT (n) ? json_node_get_object (n) : NULL;
}

static const char *
str_of (JsonNode *n)
{
  return n && JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING
           ? json_node_get_string (n) : NULL;
}

static gboolean
bad (GError **error, char **param, const char *member, const char *fmt, ...) G_GNUC_PRINTF (4, 5);

static gboolean
bad (GError **error, char **param, const char *member, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error_literal (error, HZ_API_ERROR, HZ_API_ERROR_INVALID_VALUE, msg);
  if (param)
    *param = g_strdup (member);
  return FALSE;
}

/* OpenAI's rule for function names: 1-64 of a-z, A-Z, 0-9, underscore and dash. */
static gboolean
name_ok (const char *name)
{
  const gsize n = name ? strlen (name) : 0;
  if (n == 0 || n > 64)
    return FALSE;
  for (gsize i = 0; i < n; i++)
    if (!g_ascii_isalnum (name[i]) && name[i] != '_' && name[i] != '-')
      return FALSE;
  return TRUE;
}

/* tools[i]: {"type": "function", "function": {"name", "description"?, "parameters"?}}; its
 * name, or NULL with `error`. */
static const char *
check_tool (JsonNode *t, guint i, GError **error, char **param)
{
  JsonObject *o = object_of (t);
  JsonObject *f = object_of (get (o, "function"));
  const char *name = str_of (get (f, "name"));
  JsonNode *desc = get (f, "description"), *params = get (f, "parameters");
  if (o == NULL || g_strcmp0 (str_of (get (o, "type")), "function") != 0 || f == NULL)
    bad (error, param, "tools", "'tools[%u]' must be {\"type\": \"function\", \"function\": "
         "{\"name\", \"description\", \"parameters\"}}", i);
  else if (!name_ok (name))
    bad (error, param, "tools", "'tools[%u].function.name' must be 1 to 64 letters, digits, "
         "underscores or dashes", i);
  else if (desc && !str_of (desc))
    bad (error, param, "tools", "'tools[%u].function.description' must be a string", i);
  else if (params && !object_of (params))
    bad (error, param, "tools", "'tools[%u].function.parameters' must be a JSON Schema object", i);
  else
    return name;
  return NULL;
}

/* An assistant message's tool_calls (JSON text made by the request parser). */
static gboolean
check_message_calls (const char *json, guint m, GError **error, char **param)
{
  g_autoptr (JsonParser) p = json_parser_new_immutable ();
  if (!json_parser_load_from_data (p, json, -1, NULL) ||
      !JSON_NODE_HOLDS_ARRAY (json_parser_get_root (p)))
    return bad (error, param, "messages", "'messages[%u].tool_calls' must be an array", m);
  JsonArray *a = json_node_get_array (json_parser_get_root (p));
  for (guint i = 0; i < json_array_get_length (a); i++)
    {
      JsonObject *c = object_of (json_array_get_element (a, i));
      JsonObject *f = object_of (get (c, "function"));
      JsonNode *args = get (f, "arguments"), *id = get (c, "id");
      JsonNode *type = get (c, "type");
      if (c == NULL || f == NULL || !str_of (get (f, "name")) ||
          (args && !str_of (args) && !object_of (args)) || (id && !str_of (id)) ||
          (type && g_strcmp0 (str_of (type), "function") != 0))
        return bad (error, param, "messages", "'messages[%u].tool_calls[%u]' must be {\"id\", "
                    "\"type\": \"function\", \"function\": {\"name\", \"arguments\"}}", m, i);
    }
  return TRUE;
}

gboolean
hz_api_tools_check (const HzApiRequest *r, HzApiTools *out, char **param, GError **error)
{
  memset (out, 0, sizeof *out);
  if (param)
    *param = NULL;
  for (guint i = 0; i < r->n_messages; i++)
    if (r->messages[i].tool_calls && !check_message_calls (r->messages[i].tool_calls, i, error, param))
      return FALSE;
  JsonArray *tools = r->tools && JSON_NODE_HOLDS_ARRAY (r->tools) ? json_node_get_array (r->tools)
                                                                   : NULL;
  const guint n = tools ? json_array_get_length (tools) : 0;
  if (n > HZ_API_MAX_TOOLS)
    return bad (error, param, "tools", "'tools' may list at most %d functions", HZ_API_MAX_TOOLS);
  g_autoptr (GHashTable) names = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < n; i++)
    {
      const char *name = check_tool (json_array_get_element (tools, i), i, error, param);
      if (name == NULL)
        return FALSE;
      if (!g_hash_table_add (names, (gpointer) name))
        return bad (error, param, "tools", "'tools' names the function '%s' twice", name);
    }
  out->choice = n > 0 ? HZ_API_TOOL_CHOICE_AUTO : HZ_API_TOOL_CHOICE_NONE;
  const char *choice = str_of (r->tool_choice);
  JsonObject *named = object_of (r->tool_choice);
  if (choice && strcmp (choice, "none") == 0)
    out->choice = HZ_API_TOOL_CHOICE_NONE;
  else if (choice && strcmp (choice, "required") == 0)
    out->choice = HZ_API_TOOL_CHOICE_REQUIRED;
  else if (named)
    {
      const char *name = str_of (get (object_of (get (named, "function")), "name"));
      if (g_strcmp0 (str_of (get (named, "type")), "function") != 0 || name == NULL)
        return bad (error, param, "tool_choice", "'tool_choice' as an object must be "
                    "{\"type\": \"function\", \"function\": {\"name\": \"...\"}}");
      if (!g_hash_table_contains (names, name))
        return bad (error, param, "tool_choice", "'tool_choice' names the function '%s', "
                    "which 'tools' does not list", name);
      out->choice = HZ_API_TOOL_CHOICE_NAMED;
      out->named = g_strdup (name);
    }
  else if (choice && strcmp (choice, "auto") != 0)
    return bad (error, param, "tool_choice", "'tool_choice' must be \"none\", \"auto\", "
                "\"required\" or {\"type\": \"function\", \"function\": {\"name\"}}");
  if (out->choice == HZ_API_TOOL_CHOICE_REQUIRED && n == 0)
    return bad (error, param, "tool_choice", "'tool_choice' \"required\" needs 'tools'");
  if ((out->choice == HZ_API_TOOL_CHOICE_REQUIRED || out->choice == HZ_API_TOOL_CHOICE_NAMED)
      && r->json)
    return bad (error, param, "response_format", "'response_format' cannot be combined with "
                "a 'tool_choice' that forces a call (the reply is the call)");
  if (out->choice == HZ_API_TOOL_CHOICE_NONE || n == 0)
    return TRUE;
  if (out->choice != HZ_API_TOOL_CHOICE_NAMED)
    {
      out->tools_json = hz_json_node_to_string (r->tools, FALSE);
      return TRUE;
    }
  g_autoptr (JsonArray) one = json_array_new ();
  for (guint i = 0; i < n; i++)
    if (g_strcmp0 (str_of (get (object_of (get (object_of (json_array_get_element (tools, i)),
                                                     "function")), "name")), out->named) == 0)
      json_array_add_element (one, json_node_copy (json_array_get_element (tools, i)));
  g_autoptr (JsonNode) node = json_node_init_array (json_node_alloc (), one);
  out->tools_json = hz_json_node_to_string (node, FALSE);
  return TRUE;
}

/* tools[i].function.parameters as a constraint: compiled when it is an object schema of
 * the engine's subset, else any JSON object (the call is forced all the same). */
static HzJsonSchema *
parameters_schema (JsonObject *function)
{
  JsonNode *params = get (function, "parameters");
  if (params && g_strcmp0 (str_of (get (object_of (params), "type")), "object") == 0)
    {
      g_autofree char *text = hz_json_node_to_string (params, FALSE);
      HzJsonSchema *s = hz_json_schema_compile (text, -1, NULL, NULL);
      if (s)
        return s;
    }
  return hz_json_schema_new_object ();
}

HzJsonSchema *
hz_api_tools_forced (const HzApiRequest *r, const HzApiTools *t, HzToolFormat f, HzModel *model,
                     GError **error)
{
  if (t->choice != HZ_API_TOOL_CHOICE_REQUIRED && t->choice != HZ_API_TOOL_CHOICE_NAMED)
    return NULL;
  JsonArray *tools = json_node_get_array (r->tools);
  g_autoptr (GPtrArray) prefixes = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) values = g_ptr_array_new_with_free_func ((GDestroyNotify) hz_json_schema_unref);
  g_autofree char *suffix = NULL;
  const char *sep = NULL, *end = NULL;
  for (guint i = 0; i < json_array_get_length (tools); i++)
    {
      JsonObject *fn = object_of (get (object_of (json_array_get_element (tools, i)), "function"));
      const char *name = str_of (get (fn, "name"));
      if (t->choice == HZ_API_TOOL_CHOICE_NAMED && g_strcmp0 (name, t->named) != 0)
        continue;
      char *prefix = NULL;
      g_clear_pointer (&suffix, g_free);
      if (!hz_tool_call_frame (f, name, &prefix, &suffix, &sep, &end))
        {
          g_set_error (error, HZ_API_ERROR, HZ_API_ERROR_UNSUPPORTED,
                       "'tool_choice' cannot force a call in the %s format of this model's "
                       "template (its arguments are not one JSON object): use \"auto\"",
                       hz_tool_format_name (f));
          return NULL;
        }
      g_ptr_array_add (prefixes, prefix);
      g_ptr_array_add (values, parameters_schema (fn));
    }
  if (prefixes->len > HZ_API_MAX_FORCED_TOOLS)
    {
      g_set_error (error, HZ_API_ERROR, HZ_API_ERROR_UNSUPPORTED, "'tool_choice' \"required\" "
                   "forces a call among at most %d tools (%u given): name one, or use "
                   "\"auto\"", HZ_API_MAX_FORCED_TOOLS, prefixes->len);
      return NULL;
    }
  /* the end token (harmony's <|call|>): one control token of the vocabulary */
  gint32 end_token = -1;
  if (end && model)
    {
      gsize n = 0;
      g_autofree HzToken *ids = hz_model_tokenize (model, end, -1, FALSE, TRUE, &n);
      if (n == 1 && hz_model_is_eog (model, ids[0]))
        end_token = ids[0];
    }
  return hz_json_schema_new_framed ((const char *const *) prefixes->pdata,
                                    (HzJsonSchema *const *) values->pdata, prefixes->len, suffix,
                                    r->single_tool_call || t->choice == HZ_API_TOOL_CHOICE_NAMED
                                      ? NULL : sep, end_token, error);
}

void
hz_api_tools_clear (HzApiTools *t)
{
  g_clear_pointer (&t->tools_json, g_free);
  g_clear_pointer (&t->named, g_free);
}

/* ------------------------------------------------------------------ replies */

void
hz_api_tool_calls_set_ids (GPtrArray *calls)
{
  static const char alnum[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  for (guint i = 0; i < calls->len; i++)
    {
      HzToolCall *c = calls->pdata[i];
      if (c->id && *c->id)
        continue;
      g_free (c->id);
      char id[5 + 24 + 1] = "call_";
      for (int k = 0; k < 24; k++)
        id[5 + k] = alnum[g_random_int_range (0, (gint32) sizeof alnum - 1)];
      id[29] = '\0';
      c->id = g_strdup (id);
    }
}

void
hz_api_tool_calls_add_json (JsonBuilder *b, const GPtrArray *calls, gboolean delta)
{
  json_builder_set_member_name (b, "tool_calls");
  json_builder_begin_array (b);
  for (guint i = 0; i < calls->len; i++)
    {
      const HzToolCall *c = calls->pdata[i];
      json_builder_begin_object (b);
      if (delta)
        {
          json_builder_set_member_name (b, "index");
          json_builder_add_int_value (b, i);
        }
      json_builder_set_member_name (b, "id");
      json_builder_add_string_value (b, c->id);
      json_builder_set_member_name (b, "type");
      json_builder_add_string_value (b, "function");
      json_builder_set_member_name (b, "function");
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "name");
      json_builder_add_string_value (b, c->name);
      json_builder_set_member_name (b, "arguments");
      json_builder_add_string_value (b, c->arguments);
      json_builder_end_object (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

struct _HzToolStream {
  HzToolFormat format;
  guint        max_calls;  /* 0: all */
  GString     *text;       /* the whole reply so far */
  gsize        released;   /* bytes of it sent as content */
};

HzToolStream *
hz_tool_stream_new (HzToolFormat format, guint max_calls)
{
  HzToolStream *s = g_new0 (HzToolStream, 1);
  s->format = format;
  s->max_calls = max_calls;
  s->text = g_string_new (NULL);
  return s;
}

void
hz_tool_stream_free (HzToolStream *s)
{
  if (s == NULL)
    return;
  g_string_free (s->text, TRUE);
  g_free (s);
}

char *
hz_tool_stream_push (HzToolStream *s, const char *text, gsize len)
{
  g_string_append_len (s->text, text, (gssize) len);
  if (s->format == HZ_TOOL_FORMAT_HARMONY)
    return g_strdup ("");   /* markup throughout: the answer is taken out at the end */
  gsize k = hz_tool_calls_content_prefix (s->format, s->text->str, s->text->len);
  /* white space before a call is trimmed from the content: it waits for what follows */
  while (k > s->released && g_ascii_isspace (s->text->str[k - 1]))
    k--;
  if (k <= s->released)
    return g_strdup ("");
  char *out = g_strndup (s->text->str + s->released, k - s->released);
  s->released = k;
  return out;
}

GPtrArray *
hz_tool_stream_finish (HzToolStream *s, char **content)
{
  g_autofree char *all = NULL;
  GPtrArray *calls = hz_tool_calls_parse (s->format, s->text->str, (gssize) s->text->len, &all);
  if (s->max_calls > 0 && calls->len > s->max_calls)   /* parallel_tool_calls: false */
    g_ptr_array_remove_range (calls, s->max_calls, calls->len - s->max_calls);
  hz_api_tool_calls_set_ids (calls);
  if (s->format == HZ_TOOL_FORMAT_HARMONY)
    {
      /* the final channel's message; analysis messages and markers left out */
      hz_reasoning_split (HZ_REASONING_HARMONY, FALSE, all, -1, NULL, content);
      return calls;
    }
  /* the content sent is a prefix of `all`, except for white space that the split trims
   * when there are calls (at its start, or the end of what was sent) */
  const char *sent = s->text->str, *rest = all;
  gsize n_sent = s->released;
  if (calls->len > 0)
    while (n_sent > 0 && g_ascii_isspace (*sent))
      sent++, n_sent--;
  if (strncmp (rest, sent, n_sent) == 0)
    rest += n_sent;
  else
    {
      /* what was sent ended in white space that the trim removed */
      while (n_sent > 0 && g_ascii_isspace (sent[n_sent - 1]))
        n_sent--;
      rest += strncmp (rest, sent, n_sent) == 0 ? n_sent : strlen (rest);
    }
  *content = g_strdup (rest);
  return calls;
}
