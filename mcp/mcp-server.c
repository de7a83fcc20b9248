/* mcp-server.c — `hanzo mcp`'s protocol: the session's life (initialize, the version),
 * routing requests to ping / tools/list / tools/call, batches, and the stdio loop
 * (hanzo/mcp.h). Parsing and replies: mcp-message.c; the tools: mcp-tools.h. */
#include "hanzo/mcp.h"

#include <string.h>
#include "mcp-message.h"
#include "mcp-tools.h"

/* The protocol versions served, newest first (dates: they compare as strings). */
static const char *const versions[] = { "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05",
                                        NULL };

static const HzMcpTool *const all_tools[] = { &hz_mcp_tool_chat, &hz_mcp_tool_redact,
                                              &hz_mcp_tool_search };

struct _HzMcpServer {
  HzMcpEnv         env;
  gsize            max_message;
  char            *version;     /* serverInfo.version */
  char            *protocol;    /* negotiated; NULL before initialize */
  const HzMcpTool *tools[G_N_ELEMENTS (all_tools)];
  JsonNode        *input[G_N_ELEMENTS (all_tools)];    /* parsed schemas */
  JsonNode        *output[G_N_ELEMENTS (all_tools)];
  guint            n_tools;
  GOutputStream   *out;         /* while hz_mcp_server_run runs: notifications go there */
  JsonNode        *progress_token;   /* of the running tools/call, when it has one */
  gboolean         out_failed;
};

void
hz_mcp_options_init (HzMcpOptions *o)
{
  memset (o, 0, sizeof *o);
}

static JsonNode *
parse_schema (const char *text)
{
  g_autoptr (GError) error = NULL;
  JsonNode *n = json_from_string (text, &error);
  g_assert_no_error (error);   /* built in: a bad one is a programming error */
  return n;
}

HzMcpServer *
hz_mcp_server_new (const HzMcpOptions *o, GError **error)
{
  g_autoptr (HzMcpServer) srv = g_new0 (HzMcpServer, 1);
  srv->env.model_path = g_strdup (o->model_path);
  srv->env.store_path = g_strdup (o->store_path);
  srv->env.n_threads = o->n_threads;
  srv->max_message = o->max_message ? o->max_message : HZ_MCP_DEFAULT_MAX_MESSAGE;
  srv->version = g_strdup (o->version ? o->version : "0");
  if (o->model_path && !hz_mcp_env_load_model (&srv->env, error))
    return NULL;
  for (guint i = 0; i < G_N_ELEMENTS (all_tools); i++)
    {
      if (all_tools[i] == &hz_mcp_tool_chat && !o->model_path)
        continue;
      srv->tools[srv->n_tools] = all_tools[i];
      srv->input[srv->n_tools] = parse_schema (all_tools[i]->input_schema);
      srv->output[srv->n_tools] = parse_schema (all_tools[i]->output_schema);
      srv->n_tools++;
    }
  return g_steal_pointer (&srv);
}

void
hz_mcp_server_free (HzMcpServer *srv)
{
  if (!srv)
    return;
  for (guint i = 0; i < srv->n_tools; i++)
    {
      json_node_unref (srv->input[i]);
      json_node_unref (srv->output[i]);
    }
  hz_mcp_env_clear (&srv->env);
  g_free (srv->version);
  g_free (srv->protocol);
  g_free (srv);
}

/* The negotiated version is `v` or newer. */
static gboolean
since (HzMcpServer *srv, const char *v)
{
  return srv->protocol && strcmp (srv->protocol, v) >= 0;
}

/* Client text in a message: at most 80 characters, whole ones. */
static char *
shown (const char *s)
{
  if (g_utf8_strlen (s, -1) <= 80)
    return g_strdup (s);
  g_autofree char *cut = g_utf8_substring (s, 0, 80);
  return g_strconcat (cut, "…", NULL);
}

/* ------------------------------------------------------------------ methods */

/* {} (json_node_init_object would take a second reference of a new object) */
static JsonNode *
empty_object (void)
{
  JsonNode *n = json_node_new (JSON_NODE_OBJECT);
  json_node_take_object (n, json_object_new ());
  return n;
}

static JsonNode *
initialize (HzMcpServer *srv, JsonObject *params)
{
  JsonBuilder *b = json_builder_new ();
  const char *asked = json_object_get_string_member_with_default (params, "protocolVersion", NULL);
  srv->protocol = g_strdup (g_strv_contains (versions, asked) ? asked : versions[0]);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "protocolVersion");
  json_builder_add_string_value (b, srv->protocol);
  json_builder_set_member_name (b, "capabilities");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "tools");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "listChanged");
  json_builder_add_boolean_value (b, FALSE);
  json_builder_end_object (b);
  json_builder_end_object (b);
  json_builder_set_member_name (b, "serverInfo");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "name");
  json_builder_add_string_value (b, "hanzo");
  if (since (srv, "2025-06-18"))
    {
      json_builder_set_member_name (b, "title");
      json_builder_add_string_value (b, "Hanzo Desktop");
    }
  json_builder_set_member_name (b, "version");
  json_builder_add_string_value (b, srv->version);
  json_builder_end_object (b);
  json_builder_set_member_name (b, "instructions");
  json_builder_add_string_value (b, srv->env.model_path
    ? "Tools of the private AI on this computer: chat asks its local model, redact replaces "
      "personal data in a text, search_conversations finds the user's conversations "
      "(redacted). Nothing leaves the computer."
    : "Tools of the private AI on this computer: redact replaces personal data in a text, "
      "search_conversations finds the user's conversations (redacted). No model was given "
      "(hanzo mcp -m MODEL), so there is no chat tool. Nothing leaves the computer.");
  json_builder_end_object (b);
  JsonNode *n = json_builder_get_root (b);
  g_object_unref (b);
  return n;
}

static JsonNode *
list_tools (HzMcpServer *srv)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "tools");
  json_builder_begin_array (b);
  for (guint i = 0; i < srv->n_tools; i++)
    {
      const HzMcpTool *t = srv->tools[i];
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "name");
      json_builder_add_string_value (b, t->name);
      if (since (srv, "2025-06-18"))
        {
          json_builder_set_member_name (b, "title");
          json_builder_add_string_value (b, t->title);
        }
      json_builder_set_member_name (b, "description");
      json_builder_add_string_value (b, t->description);
      json_builder_set_member_name (b, "inputSchema");
      json_builder_add_value (b, json_node_copy (srv->input[i]));
      if (since (srv, "2025-06-18"))
        {
          json_builder_set_member_name (b, "outputSchema");
          json_builder_add_value (b, json_node_copy (srv->output[i]));
        }
      if (since (srv, "2025-03-26"))
        {
          json_builder_set_member_name (b, "annotations");
          json_builder_begin_object (b);
          json_builder_set_member_name (b, "title");
          json_builder_add_string_value (b, t->title);
          json_builder_set_member_name (b, "readOnlyHint");
          json_builder_add_boolean_value (b, TRUE);
          json_builder_set_member_name (b, "destructiveHint");
          json_builder_add_boolean_value (b, FALSE);
          json_builder_set_member_name (b, "idempotentHint");
          json_builder_add_boolean_value (b, t->idempotent);
          json_builder_set_member_name (b, "openWorldHint");
          json_builder_add_boolean_value (b, FALSE);
          json_builder_end_object (b);
        }
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  return json_builder_get_root (b);
}

/* A CallToolResult: the structured result (taken) as JSON text and as structuredContent
 * (2025-06-18 on), or `failure` as text with isError. */
static JsonNode *
tool_result (HzMcpServer *srv, JsonNode *structured, const char *failure)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autofree char *text = structured ? hz_mcp_to_line (structured) : g_strdup (failure);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "content");
  json_builder_begin_array (b);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "type");
  json_builder_add_string_value (b, "text");
  json_builder_set_member_name (b, "text");
  json_builder_add_string_value (b, text);
  json_builder_end_object (b);
  json_builder_end_array (b);
  if (structured && since (srv, "2025-06-18"))
    {
      json_builder_set_member_name (b, "structuredContent");
      json_builder_add_value (b, structured);
      structured = NULL;
    }
  json_builder_set_member_name (b, "isError");
  json_builder_add_boolean_value (b, failure != NULL);
  json_builder_end_object (b);
  if (structured)
    json_node_unref (structured);
  return json_builder_get_root (b);
}

static gboolean send_line (GOutputStream *out, char *line, GError **error);

/* notifications/progress for the running tools/call (HzMcpProgressFunc). A write that fails
 * is noticed by the response's. */
static void
send_progress (double done, double total, gpointer user_data)
{
  HzMcpServer *srv = user_data;
  if (!srv->out || srv->out_failed)
    return;
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "jsonrpc");
  json_builder_add_string_value (b, "2.0");
  json_builder_set_member_name (b, "method");
  json_builder_add_string_value (b, "notifications/progress");
  json_builder_set_member_name (b, "params");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "progressToken");
  json_builder_add_value (b, json_node_copy (srv->progress_token));
  json_builder_set_member_name (b, "progress");
  json_builder_add_double_value (b, done);
  if (total > 0)
    {
      json_builder_set_member_name (b, "total");
      json_builder_add_double_value (b, total);
    }
  json_builder_end_object (b);
  json_builder_end_object (b);
  g_autoptr (JsonNode) n = json_builder_get_root (b);
  if (!send_line (srv->out, hz_mcp_to_line (n), NULL))
    srv->out_failed = TRUE;
}

/* The progress token of a request's params._meta (a string or an integer), or NULL. */
static JsonNode *
progress_token (JsonObject *params)
{
  JsonNode *meta = params ? json_object_get_member (params, "_meta") : NULL;
  JsonNode *t = meta && JSON_NODE_HOLDS_OBJECT (meta)
                  ? json_object_get_member (json_node_get_object (meta), "progressToken") : NULL;
  if (!t || !JSON_NODE_HOLDS_VALUE (t))
    return NULL;
  const GType type = json_node_get_value_type (t);
  return type == G_TYPE_STRING || type == G_TYPE_INT64 ? t : NULL;
}

/* tools/call: the result, or NULL with *code and *message for an error response. */
static JsonNode *
call_tool (HzMcpServer *srv, JsonObject *params, int *code, char **message)
{
  *code = HZ_MCP_INVALID_PARAMS;
  const char *name = params ? json_object_get_string_member_with_default (params, "name", NULL)
                            : NULL;
  JsonNode *args = params ? json_object_get_member (params, "arguments") : NULL;
  if (!name)
    {
      *message = g_strdup ("tools/call needs the tool's \"name\" (a string)");
      return NULL;
    }
  guint i = 0;
  while (i < srv->n_tools && strcmp (srv->tools[i]->name, name) != 0)
    i++;
  if (i == srv->n_tools)
    {
      g_autofree char *s = shown (name);
      *message = g_strdup_printf ("unknown tool \"%s\"%s", s,
                                  strcmp (name, "chat") == 0
                                    ? " (hanzo mcp was started without a model: -m MODEL)" : "");
      return NULL;
    }
  g_autoptr (JsonNode) empty = NULL;
  if (!args || JSON_NODE_HOLDS_NULL (args))
    args = empty = empty_object ();
  g_autoptr (GError) error = NULL;
  JsonNode *result = NULL;
  if (hz_mcp_schema_check (srv->input[i], args, "arguments", &error))
    {
      srv->progress_token = progress_token (params);
      srv->env.progress = srv->progress_token ? send_progress : NULL;
      srv->env.progress_data = srv;
      result = srv->tools[i]->call (&srv->env, json_node_get_object (args), &error);
      srv->env.progress = NULL;
      srv->progress_token = NULL;
    }
  if (result)
    return tool_result (srv, result, NULL);
  if (g_error_matches (error, HZ_MCP_ERROR, HZ_MCP_ERROR_INVALID_ARGS) &&
      !since (srv, "2025-11-25"))
    {
      *message = g_strdup_printf ("invalid arguments for %s: %s", name, error->message);
      return NULL;
    }
  /* a failure, or (2025-11-25: "input validation errors" are tool execution errors, which
   * the model can read and correct) bad arguments */
  return tool_result (srv, NULL, error->message);
}

/* ------------------------------------------------------------------ routing */

static JsonNode *
on_request (HzMcpServer *srv, HzMcpMessage *m, gboolean in_batch)
{
  g_autofree char *method = shown (m->method);
  if (m->params_invalid)
    return hz_mcp_response_error (m->id, HZ_MCP_INVALID_PARAMS, "\"params\" must be an object");
  if (strcmp (m->method, "initialize") == 0)
    {
      if (in_batch)
        return hz_mcp_response_error (m->id, HZ_MCP_INVALID_REQUEST,
                                      "initialize must not be part of a batch");
      if (srv->protocol)
        return hz_mcp_response_error (m->id, HZ_MCP_INVALID_REQUEST,
                                      "the session is initialized already");
      if (!m->params || !json_object_get_string_member_with_default (m->params, "protocolVersion", NULL))
        return hz_mcp_response_error (m->id, HZ_MCP_INVALID_PARAMS,
                                      "initialize needs \"protocolVersion\" (a string)");
      return hz_mcp_response_result (m->id, initialize (srv, m->params));
    }
  if (strcmp (m->method, "ping") == 0)
    return hz_mcp_response_result (m->id, empty_object ());
  if (!srv->protocol)
    {
      g_autofree char *msg = g_strdup_printf ("%s before initialize: the session starts with "
                                              "an initialize request", method);
      return hz_mcp_response_error (m->id, HZ_MCP_INVALID_REQUEST, msg);
    }
  if (strcmp (m->method, "tools/list") == 0)
    {
      if (m->params && json_object_has_member (m->params, "cursor"))
        return hz_mcp_response_error (m->id, HZ_MCP_INVALID_PARAMS,
                                      "unknown cursor (the list has one page)");
      return hz_mcp_response_result (m->id, list_tools (srv));
    }
  if (strcmp (m->method, "tools/call") == 0)
    {
      int code = 0;
      g_autofree char *message = NULL;
      JsonNode *result = call_tool (srv, m->params, &code, &message);
      return result ? hz_mcp_response_result (m->id, result)
                    : hz_mcp_response_error (m->id, code, message);
    }
  g_autofree char *msg = g_strdup_printf ("method not found: %s", method);
  return hz_mcp_response_error (m->id, HZ_MCP_METHOD_NOT_FOUND, msg);
}

static void
on_notification (HzMcpServer *srv, HzMcpMessage *m)
{
  /* notifications/initialized ends the handshake; notifications/cancelled was acted on when
   * it was read (serve(): the reader thread cancels the call it names); any other
   * notification is ignored, as JSON-RPC asks */
}

/* The response to one message (NULL: none). */
static JsonNode *
handle (HzMcpServer *srv, HzMcpMessage *m, gboolean in_batch)
{
  switch (m->kind)
    {
    case HZ_MCP_MSG_INVALID:
      return hz_mcp_response_error (m->id, m->error_code, m->error_message);
    case HZ_MCP_MSG_REQUEST:
      return on_request (srv, m, in_batch);
    case HZ_MCP_MSG_NOTIFICATION:
      on_notification (srv, m);
      return NULL;
    case HZ_MCP_MSG_BATCH:
      break;
    case HZ_MCP_MSG_RESPONSE:
    case HZ_MCP_MSG_EMPTY:
      return NULL;
    }
  if (in_batch || g_strcmp0 (srv->protocol, "2025-03-26") != 0)
    {
      g_autofree char *msg = g_strdup_printf ("batches are not part of protocol version %s",
                                              srv->protocol ? srv->protocol : versions[0]);
      return hz_mcp_response_error (NULL, HZ_MCP_INVALID_REQUEST, msg);
    }
  JsonArray *replies = json_array_new ();
  for (guint i = 0; i < m->batch->len; i++)
    {
      g_autoptr (HzMcpMessage) one = hz_mcp_message_from_node (m->batch->pdata[i]);
      JsonNode *r = handle (srv, one, TRUE);
      if (r)
        json_array_add_element (replies, r);
    }
  if (json_array_get_length (replies) == 0)
    {
      json_array_unref (replies);
      return NULL;
    }
  JsonNode *array = json_node_new (JSON_NODE_ARRAY);
  json_node_take_array (array, replies);
  return array;
}

char *
hz_mcp_server_handle_line (HzMcpServer *srv, const char *line, gsize len)
{
  g_autoptr (HzMcpMessage) m = hz_mcp_message_parse (line, len);
  g_autoptr (JsonNode) reply = handle (srv, m, FALSE);
  return reply ? hz_mcp_to_line (reply) : NULL;
}

/* ---------------------------------------------------------------- the loop */

static gboolean
send_line (GOutputStream *out, char *line, GError **error)
{
  g_autofree char *owned = line;
  if (!line)
    return TRUE;
  return g_output_stream_write_all (out, line, strlen (line), NULL, NULL, error) &&
         g_output_stream_write_all (out, "\n", 1, NULL, NULL, error) &&
         g_output_stream_flush (out, NULL, error);
}

static char *
too_long (HzMcpServer *srv)
{
  g_autofree char *msg = g_strdup_printf ("the message is longer than %" G_GSIZE_FORMAT
                                          " bytes", srv->max_message);
  g_autoptr (JsonNode) r = hz_mcp_response_error (NULL, HZ_MCP_INVALID_REQUEST, msg);
  return hz_mcp_to_line (r);
}

/* The loop reads stdin on a thread of its own, so that a notifications/cancelled that
 * comes while a tools/call runs is seen at once: the reader registers every tools/call
 * request it reads (its id's key -> a GCancellable) and cancels the one a
 * notifications/cancelled names; the main thread answers the lines in order, runs each
 * call with its cancellable (the chat tool stops within one token) and sends no response
 * for a cancelled request (the specification: the receiver SHOULD NOT answer it). */
typedef struct {
  GByteArray   *line;       /* NULL: the end of the input (`error` when reading failed) */
  gboolean      overlong;
  GCancellable *cancel;     /* a tools/call request's */
  char         *key;
  GError       *error;
} Item;

static void
item_free (Item *it)
{
  if (it->line)
    g_byte_array_unref (it->line);
  g_clear_object (&it->cancel);
  g_free (it->key);
  g_clear_error (&it->error);
  g_free (it);
}

typedef struct {
  GInputStream *in;
  gsize         max_message;
  GAsyncQueue  *queue;      /* Item* */
  GCancellable *stop;       /* the main loop ended: stop reading */
  GMutex        lock;
  GHashTable   *pending;    /* id key -> GCancellable of a tools/call not answered yet */
} Reader;

/* A request id as a key: "s" + a string id, "i" + an integer one. */
static char *
id_key (JsonNode *id)
{
  if (id == NULL || !JSON_NODE_HOLDS_VALUE (id))
    return NULL;
  if (json_node_get_value_type (id) == G_TYPE_STRING)
    return g_strconcat ("s", json_node_get_string (id), NULL);
  if (json_node_get_value_type (id) == G_TYPE_INT64)
    return g_strdup_printf ("i%" G_GINT64_FORMAT, json_node_get_int (id));
  return NULL;
}

/* Reader thread: one line read (its bytes, or an overlong one's place). */
static void
reader_line (Reader *r, GByteArray *bytes, gboolean overlong)
{
  Item *it = g_new0 (Item, 1);
  it->overlong = overlong;
  it->line = g_byte_array_new ();
  if (!overlong)
    {
      g_byte_array_append (it->line, bytes->data, bytes->len);
      g_autoptr (HzMcpMessage) m = hz_mcp_message_parse ((const char *) bytes->data, bytes->len);
      if (m->kind == HZ_MCP_MSG_REQUEST && strcmp (m->method, "tools/call") == 0 &&
          (it->key = id_key (m->id)))
        {
          it->cancel = g_cancellable_new ();
          g_mutex_lock (&r->lock);
          g_hash_table_replace (r->pending, g_strdup (it->key), g_object_ref (it->cancel));
          g_mutex_unlock (&r->lock);
        }
      else if (m->kind == HZ_MCP_MSG_NOTIFICATION && m->params &&
               strcmp (m->method, "notifications/cancelled") == 0)
        {
          g_autofree char *key = id_key (json_object_get_member (m->params, "requestId"));
          g_mutex_lock (&r->lock);
          GCancellable *c = key ? g_hash_table_lookup (r->pending, key) : NULL;
          if (c)
            g_cancellable_cancel (c);
          g_mutex_unlock (&r->lock);
        }
    }
  g_async_queue_push (r->queue, it);
}

/* Reader thread: split the input into lines; a line over the limit is dropped up to its
 * newline (its place answered -32600). */
static gpointer
reader_run (gpointer data)
{
  Reader *r = data;
  g_autoptr (GByteArray) line = g_byte_array_new ();
  g_autofree guint8 *buf = g_malloc (64 * 1024);
  gboolean overlong = FALSE;
  Item *end = g_new0 (Item, 1);
  for (;;)
    {
      const gssize n = g_input_stream_read (r->in, buf, 64 * 1024, r->stop, &end->error);
      if (n <= 0)
        break;
      gsize at = 0;
      while (at < (gsize) n)
        {
          const guint8 *nl = memchr (buf + at, '\n', (gsize) n - at);
          const gsize seg = (nl ? (gsize) (nl - buf) : (gsize) n) - at;
          if (!overlong && line->len + seg > r->max_message)
            {
              overlong = TRUE;
              g_byte_array_set_size (line, 0);
            }
          if (!overlong)
            g_byte_array_append (line, buf + at, (guint) seg);
          at += seg;
          if (!nl)
            break;
          at++;   /* the newline */
          reader_line (r, line, overlong);
          overlong = FALSE;
          g_byte_array_set_size (line, 0);
        }
    }
  /* a last message without its newline */
  if (end->error == NULL && (overlong || line->len))
    reader_line (r, line, overlong);
  g_async_queue_push (r->queue, end);
  return NULL;
}

/* Main thread: answer one line read. */
static gboolean
answer (HzMcpServer *srv, Reader *r, Item *it, GOutputStream *out, GError **error)
{
  char *reply = NULL;
  if (it->overlong)
    reply = too_long (srv);
  else if (!g_cancellable_is_cancelled (it->cancel))   /* NULL: FALSE */
    {
      srv->env.cancellable = it->cancel;
      reply = hz_mcp_server_handle_line (srv, (const char *) it->line->data, it->line->len);
      srv->env.cancellable = NULL;
    }
  if (it->cancel)
    {
      g_mutex_lock (&r->lock);
      if (g_hash_table_lookup (r->pending, it->key) == it->cancel)
        g_hash_table_remove (r->pending, it->key);
      g_mutex_unlock (&r->lock);
      if (g_cancellable_is_cancelled (it->cancel))
        g_clear_pointer (&reply, g_free);   /* cancelled: no response */
    }
  return send_line (out, reply, error);
}

static gboolean
serve (HzMcpServer *srv, GInputStream *in, GOutputStream *out, GError **error)
{
  Reader r = { in, srv->max_message, g_async_queue_new_full ((GDestroyNotify) item_free),
               g_cancellable_new () };
  g_mutex_init (&r.lock);
  r.pending = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  GThread *thread = g_thread_new ("hz-mcp-reader", reader_run, &r);
  gboolean ok = TRUE;
  for (;;)
    {
      Item *it = g_async_queue_pop (r.queue);
      if (it->line == NULL)
        {
          if (it->error)
            {
              ok = FALSE;
              g_propagate_error (error, g_steal_pointer (&it->error));
            }
          item_free (it);
          break;
        }
      ok = answer (srv, &r, it, out, error);
      item_free (it);
      if (!ok)
        break;
    }
  g_cancellable_cancel (r.stop);   /* a failed write: the reader stops at its next read */
  g_thread_join (thread);
  g_async_queue_unref (r.queue);
  g_hash_table_unref (r.pending);
  g_mutex_clear (&r.lock);
  g_object_unref (r.stop);
  return ok;
}

gboolean
hz_mcp_server_run (HzMcpServer *srv, GInputStream *in, GOutputStream *out, GError **error)
{
  srv->out = out;   /* for notifications during a call */
  srv->out_failed = FALSE;
  const gboolean ok = serve (srv, in, out, error);
  srv->out = NULL;
  return ok;
}
