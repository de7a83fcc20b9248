/* server/server-request.c — parsing and checking request bodies (server-request.h). */
#include "server-request.h"

#include <math.h>
#include <string.h>
#include "hanzo/json-scan.h"
#include "server-format.h"

G_DEFINE_QUARK (hz-api-error-quark, hz_api_error)

#define MAX_DEPTH 64

/* Parsing state: the member being read, named in errors. */
typedef struct {
  HzApiRequest *r;
  const char   *param;
} Parse;

static gboolean
fail (Parse *ps, GError **error, HzApiError code, const char *param, const char *fmt, ...)
  G_GNUC_PRINTF (5, 6);

static gboolean
fail (Parse *ps, GError **error, HzApiError code, const char *param, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  ps->param = param;
  /* json-glib's messages quote the input, which may hold bytes that are not UTF-8 */
  g_autofree char *valid = g_utf8_make_valid (msg, -1);
  g_set_error_literal (error, HZ_API_ERROR, code, valid);
  return FALSE;
}

/* TRUE when every string and member name under `n` is UTF-8: json-glib decodes an unpaired
 * surrogate escape ("\ud83d") into bytes that are not. Depth is bounded by depth_ok(). */
static gboolean
strings_valid (JsonNode *n)
{
  if (JSON_NODE_HOLDS_OBJECT (n))
    {
      JsonObjectIter it;
      const char *name;
      JsonNode *v;
      json_object_iter_init (&it, json_node_get_object (n));
      while (json_object_iter_next (&it, &name, &v))
        if (!g_utf8_validate (name, -1, NULL) || !strings_valid (v))
          return FALSE;
    }
  else if (JSON_NODE_HOLDS_ARRAY (n))
    {
      JsonArray *a = json_node_get_array (n);
      for (guint i = 0; i < json_array_get_length (a); i++)
        if (!strings_valid (json_array_get_element (a, i)))
          return FALSE;
    }
  else if (JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING)
    return g_utf8_validate (json_node_get_string (n), -1, NULL);
  return TRUE;
}

/* TRUE when a string of the (parsed, so well-formed) JSON text holds the escape \u0000:
 * json-glib ends that string at the NUL, and the text after it would be lost. */
static gboolean
has_nul_escape (const char *s, gsize len)
{
  for (gsize i = 0; i + 1 < len; i++)
    if (s[i] == '\\')
      {
        if (s[i + 1] == 'u' && len - i >= 6 && memcmp (s + i + 2, "0000", 4) == 0)
          return TRUE;
        i++;   /* skip the escaped character (an escaped backslash too) */
      }
  return FALSE;
}

/* TRUE when the JSON text nests at most MAX_DEPTH arrays/objects (json-glib recurses once
 * per level). */
static gboolean
depth_ok (const char *s, gsize len)
{
  guint depth = 0;
  hz_json_bracket_scan (s, len, &depth);
  return depth <= MAX_DEPTH;
}

/* Member `name` of `o`, or NULL when absent or JSON null. */
static JsonNode *
member (JsonObject *o, const char *name)
{
  JsonNode *n = json_object_get_member (o, name);
  return n && !JSON_NODE_HOLDS_NULL (n) ? n : NULL;
}

static gboolean
is_number (JsonNode *n)
{
  if (!JSON_NODE_HOLDS_VALUE (n))
    return FALSE;
  const GType t = json_node_get_value_type (n);
  return t == G_TYPE_INT64 || t == G_TYPE_DOUBLE;
}

/* A number member in [lo, hi] (absent: *out unchanged). */
static gboolean
read_number (Parse *ps, JsonObject *o, const char *name, double lo, double hi, double *out,
             GError **error)
{
  JsonNode *n = member (o, name);
  if (n == NULL)
    return TRUE;
  const double v = is_number (n) ? json_node_get_double (n) : NAN;
  if (!(v >= lo && v <= hi))
    return fail (ps, error, HZ_API_ERROR_INVALID_VALUE, name,
                 "'%s' must be a number from %g to %g", name, lo, hi);
  *out = v;
  return TRUE;
}

/* An integer member in [lo, hi] (a number with no fraction; absent: *out unchanged). */
static gboolean
read_int (Parse *ps, JsonObject *o, const char *name, gint64 lo, gint64 hi, gint64 *out,
          GError **error)
{
  JsonNode *n = member (o, name);
  if (n == NULL)
    return TRUE;
  gboolean ok = FALSE;
  gint64 v = 0;
  if (is_number (n) && json_node_get_value_type (n) == G_TYPE_INT64)
    {
      v = json_node_get_int (n);
      ok = TRUE;
    }
  else if (is_number (n))
    {
      const double d = json_node_get_double (n);
      ok = d == floor (d) && fabs (d) < 9.0e15;
      v = ok ? (gint64) d : 0;
    }
  if (!ok || v < lo || v > hi)
    return fail (ps, error, HZ_API_ERROR_INVALID_VALUE, name,
                 "'%s' must be an integer from %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT,
                 name, lo, hi);
  *out = v;
  return TRUE;
}

static gboolean
read_bool (Parse *ps, JsonObject *o, const char *name, gboolean *out, GError **error)
{
  JsonNode *n = member (o, name);
  if (n == NULL)
    return TRUE;
  if (!JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_BOOLEAN)
    return fail (ps, error, HZ_API_ERROR_INVALID_VALUE, name, "'%s' must be true or false",
                 name);
  *out = json_node_get_boolean (n);
  return TRUE;
}

static const char *
string_of (JsonNode *n)
{
  return n && JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING
           ? json_node_get_string (n) : NULL;
}

/* A message's content: a string, or text parts concatenated; NULL (with error) otherwise. */
static char *
read_content (Parse *ps, JsonNode *n, const char *param, GError **error)
{
  if (n == NULL)
    return g_strdup ("");
  if (string_of (n))
    return g_strdup (string_of (n));
  if (!JSON_NODE_HOLDS_ARRAY (n))
    {
      fail (ps, error, HZ_API_ERROR_INVALID_VALUE, param,
            "'%s' must be a string or an array of content parts", param);
      return NULL;
    }
  JsonArray *a = json_node_get_array (n);
  g_autoptr (GString) s = g_string_new (NULL);
  for (guint i = 0; i < json_array_get_length (a); i++)
    {
      JsonNode *part = json_array_get_element (a, i);
      JsonObject *po = JSON_NODE_HOLDS_OBJECT (part) ? json_node_get_object (part) : NULL;
      const char *type = po ? string_of (member (po, "type")) : NULL;
      const char *text = po ? string_of (member (po, "text")) : NULL;
      if (type && strcmp (type, "text") != 0)
        {
          fail (ps, error, HZ_API_ERROR_UNSUPPORTED, param,
                "content parts of type '%s' are not supported: only text", type);
          return NULL;
        }
      if (type == NULL || text == NULL)
        {
          fail (ps, error, HZ_API_ERROR_INVALID_VALUE, param,
                "each part of '%s' must be {\"type\": \"text\", \"text\": \"...\"}", param);
          return NULL;
        }
      g_string_append (s, text);
    }
  return g_string_free (g_steal_pointer (&s), FALSE);
}

static gboolean
read_messages (Parse *ps, JsonObject *o, GError **error)
{
  HzApiRequest *r = ps->r;
  JsonNode *n = member (o, "messages");
  if (n == NULL || !JSON_NODE_HOLDS_ARRAY (n) || json_array_get_length (json_node_get_array (n)) == 0)
    return fail (ps, error, HZ_API_ERROR_INVALID_VALUE, "messages",
                 "'messages' must be a non-empty array of {\"role\", \"content\"} objects");
  JsonArray *a = json_node_get_array (n);
  r->n_messages = json_array_get_length (a);
  r->messages = g_new0 (HzChatMessage, r->n_messages);
  for (guint i = 0; i < r->n_messages; i++)
    {
      g_autofree char *param = g_strdup_printf ("messages[%u]", i);
      JsonNode *m = json_array_get_element (a, i);
      if (!JSON_NODE_HOLDS_OBJECT (m))
        return fail (ps, error, HZ_API_ERROR_INVALID_VALUE, "messages",
                     "'%s' must be an object with \"role\" and \"content\"", param);
      JsonObject *mo = json_node_get_object (m);
      const char *role = string_of (member (mo, "role"));
      static const char *const roles[] = { "system", "user", "assistant", "tool", NULL };
      if (role && strcmp (role, "developer") == 0)
        role = "system";
      if (role == NULL || !g_strv_contains (roles, role))
        return fail (ps, error, HZ_API_ERROR_INVALID_VALUE, "messages",
                     "'%s.role' must be one of system, developer, user, assistant, tool",
                     param);
      /* tool calls and answers: kept as sent, checked by server-tools.c */
      JsonNode *calls = member (mo, "tool_calls");
      if (calls && !(JSON_NODE_HOLDS_ARRAY (calls) &&
                     json_array_get_length (json_node_get_array (calls)) == 0))
        r->messages[i].tool_calls = json_to_string (calls, FALSE);
      r->messages[i].tool_call_id = g_strdup (string_of (member (mo, "tool_call_id")));
      r->messages[i].name = g_strdup (string_of (member (mo, "name")));
      g_autofree char *cparam = g_strdup_printf ("%s.content", param);
      char *content = read_content (ps, member (mo, "content"), cparam, error);
      if (content == NULL)
        {
          ps->param = "messages";
          return FALSE;
        }
      r->messages[i].role = g_strdup (role);
      r->messages[i].content = content;
    }
  return TRUE;
}

static gboolean
read_prompt (Parse *ps, JsonObject *o, GError **error)
{
  JsonNode *n = member (o, "prompt");
  if (n && JSON_NODE_HOLDS_ARRAY (n) && json_array_get_length (json_node_get_array (n)) == 1)
    n = json_array_get_element (json_node_get_array (n), 0);
  const char *p = string_of (n);
  if (p == NULL)
    return fail (ps, error, HZ_API_ERROR_INVALID_VALUE, "prompt",
                 "'prompt' must be a string (or an array of one string)");
  ps->r->prompt = g_strdup (p);
  return TRUE;
}

static gboolean
read_stop (Parse *ps, JsonObject *o, GError **error)
{
  JsonNode *n = member (o, "stop");
  if (n == NULL)
    return TRUE;
  g_autoptr (GPtrArray) v = g_ptr_array_new_with_free_func (g_free);
  if (string_of (n))
    g_ptr_array_add (v, g_strdup (string_of (n)));
  else if (JSON_NODE_HOLDS_ARRAY (n))
    for (guint i = 0; i < json_array_get_length (json_node_get_array (n)); i++)
      {
        const char *s = string_of (json_array_get_element (json_node_get_array (n), i));
        if (s == NULL || v->len == HZ_API_MAX_STOP)
          return fail (ps, error, HZ_API_ERROR_INVALID_VALUE, "stop",
                       "'stop' must be a string or an array of at most %d strings",
                       HZ_API_MAX_STOP);
        g_ptr_array_add (v, g_strdup (s));
      }
  else
    return fail (ps, error, HZ_API_ERROR_INVALID_VALUE, "stop",
                 "'stop' must be a string or an array of at most %d strings", HZ_API_MAX_STOP);
  for (guint i = 0; i < v->len; i++)
    if (((char *) v->pdata[i])[0] == '\0')
      return fail (ps, error, HZ_API_ERROR_INVALID_VALUE, "stop", "a stop string is empty");
  if (v->len == 0)
    return TRUE;
  g_ptr_array_add (v, NULL);
  ps->r->stop = (char **) g_ptr_array_free (g_steal_pointer (&v), FALSE);
  return TRUE;
}

/* logprobs / top_logprobs: a boolean and a count on chat, a count on completions. */
static gboolean
read_logprobs (Parse *ps, JsonObject *o, GError **error)
{
  HzApiRequest *r = ps->r;
  gint64 top = 0;
  if (r->kind == HZ_API_COMPLETION)
    {
      top = -1;
      if (!read_int (ps, o, "logprobs", 0, HZ_API_MAX_TOP_LOGPROBS, &top, error))
        return FALSE;
      r->logprobs = top >= 0;
      r->top_logprobs = (guint) MAX (top, 0);
      return TRUE;
    }
  if (!read_bool (ps, o, "logprobs", &r->logprobs, error) ||
      !read_int (ps, o, "top_logprobs", 0, HZ_API_MAX_TOP_LOGPROBS, &top, error))
    return FALSE;
  if (member (o, "top_logprobs") && !r->logprobs)
    return fail (ps, error, HZ_API_ERROR_INVALID_VALUE, "top_logprobs",
                 "'top_logprobs' needs 'logprobs': true");
  r->top_logprobs = (guint) top;
  return TRUE;
}

static gboolean
read_sampling (Parse *ps, JsonObject *o, GError **error)
{
  HzApiRequest *r = ps->r;
  HzSamplerParams *sp = &r->sampler;
  double temp = 1.0, top_p = 1.0, min_p = 0.0, pres = 0.0, freq = 0.0;
  gint64 top_k = 0, seed = 0, n = 1;
  if (!read_number (ps, o, "temperature", 0, 2, &temp, error) ||
      !read_number (ps, o, "top_p", 0, 1, &top_p, error) ||
      !read_number (ps, o, "min_p", 0, 1, &min_p, error) ||
      !read_number (ps, o, "presence_penalty", -2, 2, &pres, error) ||
      !read_number (ps, o, "frequency_penalty", -2, 2, &freq, error) ||
      !read_int (ps, o, "top_k", 0, G_MAXINT32, &top_k, error) ||
      !read_int (ps, o, "seed", G_MININT64, G_MAXINT64, &seed, error) ||
      !read_int (ps, o, "n", 1, G_MAXINT32, &n, error))
    return FALSE;
  if (top_p <= 0)
    return fail (ps, error, HZ_API_ERROR_INVALID_VALUE, "top_p",
                 "'top_p' must be greater than 0 and at most 1");
  if (n != 1)
    return fail (ps, error, HZ_API_ERROR_UNSUPPORTED, "n",
                 "'n' must be 1: one choice per request is served");
  sp->temperature = (float) temp;
  sp->top_p = (float) top_p;
  sp->min_p = (float) min_p;
  sp->presence_penalty = (float) pres;
  sp->frequency_penalty = (float) freq;
  sp->top_k = (int32_t) top_k;
  sp->seed = (guint64) seed;
  r->seeded = member (o, "seed") != NULL;
  return TRUE;
}

/* Members this server cannot honour: refused, so that a client never gets silently less
 * than it asked for. */
static gboolean
refuse_unserved (Parse *ps, JsonObject *o, GError **error)
{
  gint64 best_of = 1;
  gboolean echo = FALSE;
  if (!read_int (ps, o, "best_of", 1, G_MAXINT32, &best_of, error) ||
      !read_bool (ps, o, "echo", &echo, error))
    return FALSE;
  if (best_of != 1)
    return fail (ps, error, HZ_API_ERROR_UNSUPPORTED, "best_of", "'best_of' must be 1");
  if (echo)
    return fail (ps, error, HZ_API_ERROR_UNSUPPORTED, "echo", "'echo' is not supported");
  JsonNode *suffix = member (o, "suffix");
  if (suffix && !(string_of (suffix) && *string_of (suffix) == '\0'))
    return fail (ps, error, HZ_API_ERROR_UNSUPPORTED, "suffix", "'suffix' is not supported");
  JsonNode *bias = member (o, "logit_bias");
  if (bias && !(JSON_NODE_HOLDS_OBJECT (bias) && json_object_get_size (json_node_get_object (bias)) == 0))
    return fail (ps, error, HZ_API_ERROR_UNSUPPORTED, "logit_bias",
                 "'logit_bias' is not supported");
  return TRUE;
}

/* tools / tool_choice / response_format: their shape only (the features that read them
 * check the rest); kept as sent. */
static gboolean
read_feature_members (Parse *ps, JsonObject *o, GError **error)
{
  HzApiRequest *r = ps->r;
  JsonNode *tools = member (o, "tools"), *choice = member (o, "tool_choice");
  JsonNode *format = member (o, "response_format");
  if (tools && !JSON_NODE_HOLDS_ARRAY (tools))
    return fail (ps, error, HZ_API_ERROR_INVALID_VALUE, "tools", "'tools' must be an array");
  if (choice && !string_of (choice) && !JSON_NODE_HOLDS_OBJECT (choice))
    return fail (ps, error, HZ_API_ERROR_INVALID_VALUE, "tool_choice",
                 "'tool_choice' must be \"none\", \"auto\", \"required\" or an object");
  if (format && !(JSON_NODE_HOLDS_OBJECT (format) &&
                  string_of (member (json_node_get_object (format), "type"))))
    return fail (ps, error, HZ_API_ERROR_INVALID_VALUE, "response_format",
                 "'response_format' must be an object with a \"type\"");
  r->tools = tools ? json_node_copy (tools) : NULL;
  r->tool_choice = choice ? json_node_copy (choice) : NULL;
  r->response_format = format ? json_node_copy (format) : NULL;
  g_autoptr (GError) local = NULL;
  if (!hz_server_response_format (format, &r->json, &local))
    return fail (ps, error, local->code == HZ_JSON_SCHEMA_ERROR_UNSUPPORTED
                              ? HZ_API_ERROR_UNSUPPORTED : HZ_API_ERROR_INVALID_VALUE,
                 "response_format", "%s", local->message);
  return TRUE;
}

static gboolean
read_request (Parse *ps, JsonObject *o, GError **error)
{
  HzApiRequest *r = ps->r;
  const char *model = string_of (member (o, "model"));
  if (model == NULL || *model == '\0')
    return fail (ps, error, HZ_API_ERROR_INVALID_VALUE, "model",
                 "'model' must name a model (GET /v1/models lists them)");
  r->model = g_strdup (model);
  if (!(r->kind == HZ_API_CHAT ? read_messages (ps, o, error) : read_prompt (ps, o, error)))
    return FALSE;
  gint64 max_tokens = -1;
  if (!read_int (ps, o, "max_tokens", 1, G_MAXINT32, &max_tokens, error) ||
      !read_int (ps, o, "max_completion_tokens", 1, G_MAXINT32, &max_tokens, error))
    return FALSE;
  r->max_tokens = max_tokens;
  if (!read_sampling (ps, o, error) || !read_stop (ps, o, error) ||
      !read_logprobs (ps, o, error) || !read_bool (ps, o, "stream", &r->stream, error) ||
      !read_bool (ps, o, "ignore_eos", &r->ignore_eos, error) ||
      !refuse_unserved (ps, o, error) || !read_feature_members (ps, o, error))
    return FALSE;
  gboolean parallel = TRUE;   /* OpenAI's default */
  if (!read_bool (ps, o, "parallel_tool_calls", &parallel, error))
    return FALSE;
  r->single_tool_call = !parallel;
  JsonNode *so = member (o, "stream_options");
  if (so && !JSON_NODE_HOLDS_OBJECT (so))
    return fail (ps, error, HZ_API_ERROR_INVALID_VALUE, "stream_options",
                 "'stream_options' must be an object");
  if (so && !read_bool (ps, json_node_get_object (so), "include_usage", &r->include_usage, error))
    {
      ps->param = "stream_options";
      return FALSE;
    }
  return TRUE;
}

HzApiRequest *
hz_api_request_parse (HzApiKind kind, const char *body, gsize len, char **param, GError **error)
{
  g_autoptr (HzApiRequest) r = g_new0 (HzApiRequest, 1);
  Parse ps = { r, NULL };
  r->kind = kind;
  hz_sampler_params_init (&r->sampler);
  if (param)
    *param = NULL;
  g_autoptr (JsonParser) parser = json_parser_new_immutable ();
  g_autoptr (GError) local = NULL;
  if (!g_utf8_validate_len (body, len, NULL))
    fail (&ps, error, HZ_API_ERROR_INVALID_JSON, NULL, "the body is not UTF-8 text");
  else if (!depth_ok (body, len))
    fail (&ps, error, HZ_API_ERROR_INVALID_JSON, NULL,
          "the body nests arrays or objects more than %d deep", MAX_DEPTH);
  else if (!json_parser_load_from_data (parser, body, (gssize) len, &local))
    fail (&ps, error, HZ_API_ERROR_INVALID_JSON, NULL, "the body is not valid JSON: %s",
          local->message);
  else if (json_parser_get_root (parser) == NULL ||   /* an empty body parses to nothing */
           !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    fail (&ps, error, HZ_API_ERROR_INVALID_JSON, NULL, "the body must be a JSON object");
  else if (has_nul_escape (body, len))
    fail (&ps, error, HZ_API_ERROR_INVALID_JSON, NULL,
          "the body has a string with \\u0000 (U+0000), which this server cannot take: the "
          "text after it would be lost");
  else if (!strings_valid (json_parser_get_root (parser)))
    fail (&ps, error, HZ_API_ERROR_INVALID_JSON, NULL,
          "the body has a string that is not UTF-8 (an unpaired surrogate escape such as "
          "\\ud800?)");
  else if (read_request (&ps, json_node_get_object (json_parser_get_root (parser)), error))
    return g_steal_pointer (&r);
  if (param)
    *param = g_strdup (ps.param);
  return NULL;
}

gboolean
hz_api_request_check_served (const HzApiRequest *r, char **param, GError **error)
{
  const char *what = NULL, *name = NULL;
  if (r->kind == HZ_API_COMPLETION && r->tools)
    name = "tools", what = "tools on /v1/completions are";
  if (param)
    *param = g_strdup (name);
  if (name == NULL)
    return TRUE;
  g_set_error (error, HZ_API_ERROR, HZ_API_ERROR_UNSUPPORTED, "%s not supported yet", what);
  return FALSE;
}

void
hz_api_request_free (HzApiRequest *r)
{
  if (r == NULL)
    return;
  g_free (r->model);
  for (guint i = 0; i < r->n_messages; i++)
    {
      g_free ((char *) r->messages[i].role);
      g_free ((char *) r->messages[i].content);
      g_free ((char *) r->messages[i].tool_calls);
      g_free ((char *) r->messages[i].tool_call_id);
      g_free ((char *) r->messages[i].name);
    }
  g_free (r->messages);
  g_free (r->prompt);
  g_strfreev (r->stop);
  g_clear_pointer (&r->tools, json_node_unref);
  g_clear_pointer (&r->tool_choice, json_node_unref);
  g_clear_pointer (&r->response_format, json_node_unref);
  hz_json_schema_unref (r->json);
  g_free (r);
}
