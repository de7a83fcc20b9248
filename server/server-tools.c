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
                     HzToolStream *stream, GError **error)
{
  if (t->choice != HZ_API_TOOL_CHOICE_REQUIRED && t->choice != HZ_API_TOOL_CHOICE_NAMED)
    return NULL;
  JsonArray *tools = json_node_get_array (r->tools);
  g_autoptr (GPtrArray) prefixes = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) values = g_ptr_array_new_with_free_func ((GDestroyNotify) hz_json_schema_unref);
  g_autoptr (GPtrArray) names = g_ptr_array_new ();
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
      g_ptr_array_add (names, (gpointer) name);
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
  if (r->single_tool_call || t->choice == HZ_API_TOOL_CHOICE_NAMED)
    sep = NULL;
  HzJsonSchema *schema = hz_json_schema_new_framed ((const char *const *) prefixes->pdata,
                                                    (HzJsonSchema *const *) values->pdata,
                                                    prefixes->len, suffix, sep, end_token, error);
  if (schema && stream)
    hz_tool_stream_set_forced (stream, (const char *const *) names->pdata,
                               (const char *const *) prefixes->pdata, prefixes->len, suffix, sep);
  return schema;
}

void
hz_api_tools_clear (HzApiTools *t)
{
  g_clear_pointer (&t->tools_json, g_free);
  g_clear_pointer (&t->named, g_free);
}

/* ------------------------------------------------------------------ replies */

/* "call_" and 24 random letters and digits. */
static char *
new_call_id (void)
{
  static const char alnum[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  char id[5 + 24 + 1] = "call_";
  for (int k = 0; k < 24; k++)
    id[5 + k] = alnum[g_random_int_range (0, (gint32) sizeof alnum - 1)];
  id[29] = '\0';
  return g_strdup (id);
}

void
hz_api_tool_calls_set_ids (GPtrArray *calls)
{
  for (guint i = 0; i < calls->len; i++)
    {
      HzToolCall *c = calls->pdata[i];
      if (c->id && *c->id)
        continue;
      g_free (c->id);
      c->id = new_call_id ();
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

/* A forced reply's state (hz_tool_stream_set_forced()). */
enum { F_PREFIX, F_ARGS, F_SUFFIX, F_DONE };

typedef struct {
  char     **names, **prefixes;
  guint      n;
  char      *suffix, *separator;
  guint      phase;      /* F_* */
  gsize      at;         /* bytes of the text read */
  guint      depth;      /* F_ARGS: open objects and arrays */
  gboolean   in_str, esc;
  guint      n_calls;    /* calls begun */
  GPtrArray *deltas;     /* HzToolDelta* not taken yet */
} Forced;

struct _HzToolStream {
  HzToolFormat format;
  guint        max_calls;  /* 0: all */
  GString     *text;       /* the whole reply so far */
  gsize        released;   /* bytes of it sent as content */
  Forced      *forced;     /* NULL: not forced */
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
hz_tool_delta_free (HzToolDelta *d)
{
  if (d == NULL)
    return;
  g_free (d->id);
  g_free (d->name);
  g_free (d->arguments);
  g_free (d);
}

void
hz_tool_stream_set_forced (HzToolStream *s, const char *const *names, const char *const *prefixes,
                           guint n, const char *suffix, const char *separator)
{
  Forced *f = s->forced = g_new0 (Forced, 1);
  f->names = g_new0 (char *, n + 1);
  f->prefixes = g_new0 (char *, n + 1);
  for (guint i = 0; i < n; i++)
    {
      f->names[i] = g_strdup (names[i]);
      f->prefixes[i] = g_strdup (prefixes[i]);
    }
  f->n = n;
  f->suffix = g_strdup (suffix);
  f->separator = g_strdup (separator);
  f->deltas = g_ptr_array_new_with_free_func ((GDestroyNotify) hz_tool_delta_free);
}

static void
forced_free (Forced *f)
{
  if (f == NULL)
    return;
  g_strfreev (f->names);
  g_strfreev (f->prefixes);
  g_free (f->suffix);
  g_free (f->separator);
  g_ptr_array_unref (f->deltas);
  g_free (f);
}

/* The arguments' bytes [from, to) of the current call as a piece `d` (NULL: a new one
 * when there is something to send), whitespace outside strings left out (the text is
 * whole UTF-8 characters: the detokenizer's). Stops after the object's last byte. */
static void
forced_piece (Forced *f, HzToolDelta *d, const char *text, gsize from, gsize to)
{
  g_autoptr (GString) frag = g_string_new (NULL);
  f->at = to;
  for (gsize i = from; i < to; i++)
    {
      const char c = text[i];
      if (f->in_str)
        {
          if (f->esc)
            f->esc = FALSE;
          else if (c == '\\')
            f->esc = TRUE;
          else if (c == '"')
            f->in_str = FALSE;
        }
      else if (c == ' ' || c == '\n' || c == '\t' || c == '\r')
        continue;
      else if (c == '"')
        f->in_str = TRUE;
      else if (c == '{' || c == '[')
        f->depth++;
      else if ((c == '}' || c == ']') && f->depth > 0 && --f->depth == 0)
        {
          g_string_append_c (frag, c);
          f->phase = F_SUFFIX;
          f->at = i + 1;
          break;
        }
      g_string_append_c (frag, c);
    }
  if (d == NULL && frag->len == 0)
    return;
  if (d == NULL)
    {
      d = g_new0 (HzToolDelta, 1);
      d->index = f->n_calls - 1;
    }
  g_free (d->arguments);
  d->arguments = g_string_free (g_steal_pointer (&frag), FALSE);
  g_ptr_array_add (f->deltas, d);
}

/* Read what came of a forced reply: a call begins when its prefix is whole (its first
 * piece: id and name), its arguments go out as they come, then the suffix and (with a
 * separator) the next call. Text that is not the frame (a reply cut short) ends it. */
static void
forced_read (Forced *f, const GString *text)
{
  while (f->phase != F_DONE && f->at < text->len)
    {
      const char *t = text->str + f->at;
      const gsize left = text->len - f->at;
      if (f->phase == F_PREFIX)
        {
          const char *sep = f->n_calls > 0 && f->separator ? f->separator : "";
          gboolean maybe = FALSE;
          guint hit = f->n;
          gsize hit_len = 0;
          for (guint i = 0; i < f->n && hit == f->n; i++)
            {
              g_autofree char *want = g_strconcat (sep, f->prefixes[i], NULL);
              const gsize lw = strlen (want);
              if (memcmp (t, want, MIN (left, lw)) != 0)
                continue;
              maybe = TRUE;
              if (left >= lw)
                {
                  hit = i;
                  hit_len = lw;
                }
            }
          if (hit == f->n)
            {
              if (!maybe)
                f->phase = F_DONE;
              return;   /* (what came fits a prefix so far: wait for the rest) */
            }
          f->at += hit_len;
          f->phase = F_ARGS;
          f->depth = 0;
          f->in_str = f->esc = FALSE;
          HzToolDelta *d = g_new0 (HzToolDelta, 1);
          d->index = f->n_calls++;
          d->id = new_call_id ();
          d->name = g_strdup (f->names[hit]);
          forced_piece (f, d, text->str, f->at, text->len);
        }
      else if (f->phase == F_ARGS)
        forced_piece (f, NULL, text->str, f->at, text->len);
      else   /* F_SUFFIX */
        {
          const gsize ls = strlen (f->suffix);
          if (left < ls)
            return;
          f->at += ls;
          f->phase = f->separator ? F_PREFIX : F_DONE;
        }
    }
}

GPtrArray *
hz_tool_stream_take_deltas (HzToolStream *s)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) hz_tool_delta_free);
  if (s->forced)
    {
      GPtrArray *d = s->forced->deltas;
      for (guint i = 0; i < d->len; i++)
        g_ptr_array_add (out, d->pdata[i]);
      g_ptr_array_set_free_func (d, NULL);
      g_ptr_array_set_size (d, 0);
      g_ptr_array_set_free_func (d, (GDestroyNotify) hz_tool_delta_free);
    }
  return out;
}

guint
hz_tool_stream_n_streamed (const HzToolStream *s)
{
  return s->forced ? s->forced->n_calls : 0;
}

void
hz_api_tool_deltas_add_json (JsonBuilder *b, const GPtrArray *deltas)
{
  json_builder_set_member_name (b, "tool_calls");
  json_builder_begin_array (b);
  for (guint i = 0; i < deltas->len; i++)
    {
      const HzToolDelta *d = deltas->pdata[i];
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "index");
      json_builder_add_int_value (b, d->index);
      if (d->id)
        {
          json_builder_set_member_name (b, "id");
          json_builder_add_string_value (b, d->id);
          json_builder_set_member_name (b, "type");
          json_builder_add_string_value (b, "function");
        }
      json_builder_set_member_name (b, "function");
      json_builder_begin_object (b);
      if (d->name)
        {
          json_builder_set_member_name (b, "name");
          json_builder_add_string_value (b, d->name);
        }
      json_builder_set_member_name (b, "arguments");
      json_builder_add_string_value (b, d->arguments ? d->arguments : "");
      json_builder_end_object (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

void
hz_tool_stream_free (HzToolStream *s)
{
  if (s == NULL)
    return;
  forced_free (s->forced);
  g_string_free (s->text, TRUE);
  g_free (s);
}

char *
hz_tool_stream_push (HzToolStream *s, const char *text, gsize len)
{
  g_string_append_len (s->text, text, (gssize) len);
  if (s->forced)
    {
      forced_read (s->forced, s->text);
      return g_strdup ("");   /* a forced reply is its calls */
    }
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
