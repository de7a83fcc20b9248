/* server/server.c — HzServer: listening, routing, authentication and the checks every
 * request passes before a job takes it (hanzo-server.h). */
#include "hanzo-server.h"

#include <libsecret/secret.h>
#include <string.h>
#include <errno.h>
#include <sys/random.h>
#include "server-guard.h"
#include "server-job.h"
#include "server-log.h"
#include "server-models.h"
#include "server-reply.h"
#include "server-request.h"
#include "server-tools.h"

G_DEFINE_QUARK (hz-server-error-quark, hz_server_error)

#define DEFAULT_MAX_BODY ((gsize) 8 << 20)
#define DEFAULT_IO_TIMEOUT 30
#define DEFAULT_MAX_REQUESTS 256
#define LISTEN_BACKLOG 256

struct _HzServer {
  HzServerOptions o;
  char           *host, *api_key;   /* owned copies of o.host / o.api_key */
  GInetAddress   *address;
  SoupServer     *soup;
  HzModels       *models;
  GMainContext   *context;
  HzGuardLimits   limits;
  HzJobEnv        env;
  guint           n_open;           /* generation requests open */
  guint           port;
};

void
hz_server_options_init (HzServerOptions *o)
{
  memset (o, 0, sizeof *o);
}

/* An error answer, logged. */
static void
refuse (HzServer *srv, SoupServerMessage *msg, guint status, const char *code, const char *param,
        const char *message)
{
  hz_server_say (srv->o.log, srv->o.log_data, "%s %s: %u %s",
                 soup_server_message_get_method (msg),
                 g_uri_get_path (soup_server_message_get_uri (msg)), status, message);
  hz_reply_send_error (msg, status, code, param, message);
}

/* Constant-time comparison of the presented and the expected key. */
static gboolean
key_matches (const char *given, const char *want)
{
  const gsize n = strlen (want);
  if (given == NULL || strlen (given) != n)
    return FALSE;
  guchar diff = 0;
  for (gsize i = 0; i < n; i++)
    diff |= (guchar) given[i] ^ (guchar) want[i];
  return diff == 0;
}

/* The host name of a Host header value ("127.0.0.1:8080", "[::1]:8080", "localhost"). */
static char *
host_of (const char *value)
{
  if (value[0] == '[')
    {
      const char *end = strchr (value, ']');
      return end ? g_strndup (value + 1, end - value - 1) : g_strdup (value);
    }
  const char *colon = strchr (value, ':');
  return colon && strchr (colon + 1, ':') == NULL ? g_strndup (value, colon - value)
                                                  : g_strdup (value);
}

/* Without a key, the server is reached only through a loopback name: a Host header naming
 * anything else is a browser page that made a name resolve to 127.0.0.1 (DNS rebinding). */
static gboolean
host_ok (const char *value)
{
  if (value == NULL)
    return TRUE;   /* HTTP/1.0 */
  g_autofree char *h = host_of (value);
  if (g_ascii_strcasecmp (h, "localhost") == 0)
    return TRUE;
  g_autoptr (GInetAddress) a = g_inet_address_new_from_string (h);
  return a && g_inet_address_get_is_loopback (a);
}

/* Before the body is read: where from, who, and how large. */
static void
on_early (SoupServer *soup, SoupServerMessage *msg, const char *path, GHashTable *query,
          gpointer user_data)
{
  HzServer *srv = user_data;
  SoupMessageHeaders *h = soup_server_message_get_request_headers (msg);
  if (srv->api_key == NULL && !host_ok (soup_message_headers_get_one (h, "Host")))
    {
      refuse (srv, msg, SOUP_STATUS_FORBIDDEN, "forbidden_host", NULL,
              "this server answers only requests addressed to a loopback name (Host)");
      return;
    }
  if (srv->api_key && g_str_has_prefix (path, "/v1/"))
    {
      const char *auth = soup_message_headers_get_one (h, "Authorization");
      const char *given = auth && g_ascii_strncasecmp (auth, "Bearer ", 7) == 0 ? auth + 7 : NULL;
      if (!key_matches (given, srv->api_key))
        {
          refuse (srv, msg, SOUP_STATUS_UNAUTHORIZED, "invalid_api_key", NULL,
                  given ? "the API key is not the server's"
                        : "this server needs an API key: \"Authorization: Bearer KEY\"");
          soup_message_headers_replace (soup_server_message_get_response_headers (msg),
                                        "WWW-Authenticate", "Bearer");
          return;
        }
    }
  if (soup_message_headers_get_encoding (h) == SOUP_ENCODING_CONTENT_LENGTH &&
      soup_message_headers_get_content_length (h) > (goffset) srv->limits.max_body)
    {
      g_autofree char *text = g_strdup_printf ("the request body is larger than %" G_GSIZE_FORMAT
                                               " bytes", srv->limits.max_body);
      refuse (srv, msg, SOUP_STATUS_REQUEST_ENTITY_TOO_LARGE, "request_too_large", NULL, text);
    }
}

static void
on_request_started (SoupServer *soup, SoupServerMessage *msg, gpointer user_data)
{
  HzServer *srv = user_data;
  hz_guard_attach (msg, &srv->limits);
}

static void
reply_json (SoupServerMessage *msg, char *body)
{
  soup_server_message_set_status (msg, SOUP_STATUS_OK, NULL);
  soup_server_message_set_response (msg, "application/json", SOUP_MEMORY_TAKE, body,
                                    strlen (body));
}

static void
handle_health (HzServer *srv, SoupServerMessage *msg)
{
  char *body = g_strdup_printf ("{\"status\":\"ok\",\"models_loaded\":%u,\"requests\":%u}",
                                hz_models_n_loaded (srv->models), srv->n_open);
  reply_json (msg, body);
}

static void
handle_models (HzServer *srv, SoupServerMessage *msg, const char *id)
{
  g_autofree gint64 *created = NULL;
  g_auto (GStrv) ids = hz_models_ids (srv->models, &created);
  if (id == NULL)
    {
      reply_json (msg, hz_reply_models ((const char *const *) ids, created));
      return;
    }
  for (guint i = 0; ids[i]; i++)
    if (strcmp (ids[i], id) == 0)
      {
        reply_json (msg, hz_reply_model (id, created[i]));
        return;
      }
  g_autofree char *text = g_strdup_printf ("the model '%s' does not exist", id);
  refuse (srv, msg, SOUP_STATUS_NOT_FOUND, "model_not_found", "model", text);
}

static void
handle_generate (HzServer *srv, SoupServerMessage *msg, HzApiKind kind)
{
  SoupMessageHeaders *h = soup_server_message_get_request_headers (msg);
  const char *ct = soup_message_headers_get_content_type (h, NULL);
  if (ct == NULL || g_ascii_strcasecmp (ct, "application/json") != 0)
    {
      refuse (srv, msg, SOUP_STATUS_UNSUPPORTED_MEDIA_TYPE, "invalid_content_type", NULL,
              "the body must be JSON with \"Content-Type: application/json\"");
      return;
    }
  if (srv->n_open >= srv->o.max_requests)
    {
      refuse (srv, msg, 429, "too_many_requests", NULL,
              "too many requests are open; try again when some have finished");
      return;
    }
  g_autoptr (GBytes) body = soup_message_body_flatten (soup_server_message_get_request_body (msg));
  gsize len = 0;
  const char *data = g_bytes_get_data (body, &len);
  g_autoptr (GError) error = NULL;
  g_autofree char *param = NULL;
  g_autoptr (HzApiRequest) req = hz_api_request_parse (kind, data ? data : "", len, &param, &error);
  if (req && !hz_api_request_check_served (req, &param, &error))
    g_clear_pointer (&req, hz_api_request_free);
  HzApiTools tools = { 0 };
  if (req && !hz_api_tools_check (req, &tools, &param, &error))   /* server-tools.h */
    g_clear_pointer (&req, hz_api_request_free);
  hz_api_tools_clear (&tools);
  if (req == NULL)
    {
      const char *code = error->code == HZ_API_ERROR_INVALID_JSON    ? "invalid_json"
                         : error->code == HZ_API_ERROR_UNSUPPORTED ? "unsupported_parameter"
                                                                   : "invalid_value";
      refuse (srv, msg, SOUP_STATUS_BAD_REQUEST, code, param, error->message);
      return;
    }
  HzModelSlot *slot = hz_models_lookup (srv->models, req->model);
  if (slot == NULL)
    {
      g_autofree char *text = g_strdup_printf ("the model '%s' does not exist (GET /v1/models "
                                               "lists the models of this server)", req->model);
      refuse (srv, msg, SOUP_STATUS_NOT_FOUND, "model_not_found", "model", text);
      return;
    }
  hz_job_start (msg, g_steal_pointer (&req), slot, &srv->env);
}

/* One route: a path, its method, its handler. */
static void
on_request (SoupServer *soup, SoupServerMessage *msg, const char *path, GHashTable *query,
            gpointer user_data)
{
  HzServer *srv = user_data;
  if (soup_server_message_get_status (msg) != 0)
    return;   /* answered early (on_early) or by the guard */
  const char *method = soup_server_message_get_method (msg);
  const char *want = NULL;   /* the method of a known path */
  const gboolean get = strcmp (method, "GET") == 0, post = strcmp (method, "POST") == 0;
  gboolean handled = FALSE;
  if (strcmp (path, "/health") == 0 || strcmp (path, "/v1/health") == 0)
    {
      want = "GET";
      if ((handled = get))
        handle_health (srv, msg);
    }
  else if (strcmp (path, "/v1/models") == 0 || g_str_has_prefix (path, "/v1/models/"))
    {
      want = "GET";
      if ((handled = get))
        handle_models (srv, msg, path[strlen ("/v1/models")] == '/' ? path + strlen ("/v1/models/")
                                                                      : NULL);
    }
  else if (strcmp (path, "/v1/chat/completions") == 0 || strcmp (path, "/v1/completions") == 0)
    {
      want = "POST";
      if ((handled = post))
        handle_generate (srv, msg, strcmp (path, "/v1/completions") == 0 ? HZ_API_COMPLETION
                                                                        : HZ_API_CHAT);
    }
  if (handled)
    return;
  if (want)
    {
      g_autofree char *text = g_strdup_printf ("%s takes %s, not %s", path, want, method);
      refuse (srv, msg, SOUP_STATUS_METHOD_NOT_ALLOWED, "method_not_allowed", NULL, text);
      soup_message_headers_replace (soup_server_message_get_response_headers (msg), "Allow", want);
      return;
    }
  g_autofree char *text = g_strdup_printf ("no such endpoint: %s %s", method, path);
  refuse (srv, msg, SOUP_STATUS_NOT_FOUND, "not_found", NULL, text);
}

HzServer *
hz_server_new (const HzServerOptions *o, GError **error)
{
  const char *host = o->host && *o->host ? o->host : "127.0.0.1";
  g_autoptr (GInetAddress) address = g_inet_address_new_from_string (
    g_ascii_strcasecmp (host, "localhost") == 0 ? "127.0.0.1" : host);
  if (address == NULL)
    {
      g_set_error (error, HZ_SERVER_ERROR, HZ_SERVER_ERROR_ADDRESS,
                   "'%s' is not an IP address (give e.g. 127.0.0.1, ::1 or 0.0.0.0)", host);
      return NULL;
    }
  const gboolean keyed = o->api_key && *o->api_key;
  if (!g_inet_address_get_is_loopback (address) && !keyed)
    {
      g_set_error (error, HZ_SERVER_ERROR, HZ_SERVER_ERROR_NEEDS_KEY,
                   "%s is reachable from other computers: it needs an API key (--api-key KEY, "
                   "or one in the keyring); without one only a loopback address (127.0.0.1, "
                   "::1) is served", host);
      return NULL;
    }
  HzServer *srv = g_new0 (HzServer, 1);
  srv->o = *o;
  srv->host = g_strdup (host);
  srv->api_key = keyed ? g_strdup (o->api_key) : NULL;
  srv->o.host = srv->host;
  srv->o.api_key = srv->api_key;
  srv->o.max_body = o->max_body ? o->max_body : DEFAULT_MAX_BODY;
  srv->o.io_timeout = o->io_timeout ? o->io_timeout : DEFAULT_IO_TIMEOUT;
  srv->o.max_requests = o->max_requests ? o->max_requests : DEFAULT_MAX_REQUESTS;
  srv->address = g_steal_pointer (&address);
  srv->limits = (HzGuardLimits) { (gint64) srv->o.io_timeout * G_USEC_PER_SEC, srv->o.max_body };
  srv->context = g_main_context_ref_thread_default ();
  HzServeParams sp;
  hz_serve_params_init (&sp);
  sp.max_seqs = o->max_seqs;
  sp.kv_bytes = (guint64) o->kv_mib << 20;
  srv->models = hz_models_new (&sp, o->n_threads, o->idle_unload, o->log, o->log_data);
  srv->env = (HzJobEnv) { srv->models, o->log, o->log_data, &srv->n_open };
  srv->soup = soup_server_new ("server-header", "hanzo-serve", NULL);
  soup_server_add_early_handler (srv->soup, NULL, on_early, srv, NULL);
  soup_server_add_handler (srv->soup, NULL, on_request, srv, NULL);
  g_signal_connect (srv->soup, "request-started", G_CALLBACK (on_request_started), srv);
  return srv;
}

void
hz_server_free (HzServer *srv)
{
  if (srv == NULL)
    return;
  soup_server_disconnect (srv->soup);
  /* end the generations, let their jobs answer and end, then drop the connections */
  hz_models_shutdown (srv->models);
  while (g_main_context_iteration (srv->context, FALSE))
    ;
  g_clear_object (&srv->soup);
  while (g_main_context_iteration (srv->context, FALSE))
    ;
  hz_models_free (srv->models);
  g_object_unref (srv->address);
  g_main_context_unref (srv->context);
  g_free (srv->host);
  g_free (srv->api_key);
  g_free (srv);
}

gboolean
hz_server_add_model (HzServer *srv, const char *id, const char *path, GError **error)
{
  g_autofree char *base = g_path_get_basename (path);
  if (g_str_has_suffix (base, ".gguf"))
    base[strlen (base) - 5] = '\0';
  if (id == NULL)
    id = base;
  g_autoptr (GError) local = NULL;
  if (*id == '\0' || !g_utf8_validate (id, -1, NULL))
    g_set_error (&local, G_FILE_ERROR, G_FILE_ERROR_INVAL, "the model id is empty or not UTF-8");
  else
    hz_models_add (srv->models, id, path, &local);
  if (local == NULL)
    return TRUE;
  g_set_error (error, HZ_SERVER_ERROR, HZ_SERVER_ERROR_MODEL, "%s", local->message);
  return FALSE;
}

gboolean
hz_server_add_loaded_model (HzServer *srv, const char *id, const char *path, HzModel *model,
                            GDestroyNotify release, gpointer release_data, GError **error)
{
  g_return_val_if_fail (id != NULL && path != NULL && model != NULL, FALSE);
  g_autoptr (GError) local = NULL;
  if (*id == '\0' || !g_utf8_validate (id, -1, NULL))
    g_set_error (&local, G_FILE_ERROR, G_FILE_ERROR_INVAL, "the model id is empty or not UTF-8");
  else
    hz_models_add_loaded (srv->models, id, path, model, release, release_data, &local);
  if (local == NULL)
    return TRUE;
  if (release)
    release (release_data);
  g_set_error (error, HZ_SERVER_ERROR, HZ_SERVER_ERROR_MODEL, "%s", local->message);
  return FALSE;
}

static gint
cmp_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

int
hz_server_add_models_dir (HzServer *srv, const char *dir, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autoptr (GDir) d = g_dir_open (dir, 0, &local);
  if (d == NULL)
    {
      g_set_error (error, HZ_SERVER_ERROR, HZ_SERVER_ERROR_MODEL, "--models-dir %s: %s", dir,
                   local->message);
      return -1;
    }
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;
  while ((name = g_dir_read_name (d)))
    if (g_str_has_suffix (name, ".gguf"))
      g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, cmp_names);
  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *path = g_build_filename (dir, names->pdata[i], NULL);
      if (!hz_server_add_model (srv, NULL, path, error))
        return -1;
    }
  return (int) names->len;
}

void
hz_server_parse_model_arg (const char *arg, char **path, char **id)
{
  const char *colon = strrchr (arg, ':');
  if (colon && colon[1] != '\0' && strchr (colon + 1, '/') == NULL &&
      !g_file_test (arg, G_FILE_TEST_EXISTS))
    {
      g_autofree char *p = g_strndup (arg, colon - arg);
      if (g_file_test (p, G_FILE_TEST_EXISTS))
        {
          *path = g_steal_pointer (&p);
          *id = g_strdup (colon + 1);
          return;
        }
    }
  *path = g_strdup (arg);
  g_autofree char *base = g_path_get_basename (arg);
  if (g_str_has_suffix (base, ".gguf"))
    base[strlen (base) - 5] = '\0';
  *id = g_steal_pointer (&base);
}

/* The listening socket, bound and listening with a backlog for bursts of clients: GSocket's
 * default of 10 drops the 11th simultaneous connection's SYN, which the client resends only
 * after a second. */
static GSocket *
listening_socket (HzServer *srv, GError **error)
{
  g_autoptr (GSocket) sock = g_socket_new (g_inet_address_get_family (srv->address),
                                           G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, error);
  if (sock == NULL)
    return NULL;
  g_socket_set_listen_backlog (sock, LISTEN_BACKLOG);
  g_autoptr (GSocketAddress) sa = g_inet_socket_address_new (srv->address, srv->o.port);
  if (!g_socket_bind (sock, sa, TRUE, error) || !g_socket_listen (sock, error))
    return NULL;
  return g_steal_pointer (&sock);
}

gboolean
hz_server_listen (HzServer *srv, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autoptr (GSocket) sock = listening_socket (srv, &local);
  if (sock == NULL || !soup_server_listen_socket (srv->soup, sock, 0, &local))
    {
      g_autofree char *a = g_inet_address_to_string (srv->address);
      g_set_error (error, HZ_SERVER_ERROR, HZ_SERVER_ERROR_LISTEN, "cannot listen on %s port %u: %s",
                   a, srv->o.port, local->message);
      return FALSE;
    }
  g_autoptr (GSocketAddress) bound = g_socket_get_local_address (sock, NULL);
  srv->port = bound ? g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound)) : srv->o.port;
  return TRUE;
}

guint
hz_server_get_port (HzServer *srv)
{
  return srv->port;
}

gboolean
hz_server_is_public (HzServer *srv)
{
  return !g_inet_address_get_is_loopback (srv->address);
}

/* ------------------------------------------------------------------ keyring */

static const SecretSchema *
key_schema (void)
{
  static const SecretSchema schema = {
    "ai.hanzo.Desktop.ServerKey", SECRET_SCHEMA_DONT_MATCH_NAME,
    { { "purpose", SECRET_SCHEMA_ATTRIBUTE_STRING }, { NULL, 0 } },
  };
  return &schema;
}

char *
hz_server_keyring_key (GError **error)
{
  g_autoptr (GError) local = NULL;
  char *key = secret_password_lookup_sync (key_schema (), NULL, &local, "purpose", "api-key",
                                           NULL);
  if (local)
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  if (key && *key == '\0')
    {
      secret_password_free (key);
      return NULL;
    }
  char *copy = g_strdup (key);
  secret_password_free (key);
  return copy;
}

gboolean
hz_server_keyring_store_key (const char *key, GError **error)
{
  g_return_val_if_fail (key != NULL && *key != '\0', FALSE);
  return secret_password_store_sync (key_schema (), SECRET_COLLECTION_DEFAULT,
                                     "Hanzo server API key", key, NULL, error, "purpose",
                                     "api-key", NULL);
}

char *
hz_server_new_key (void)
{
  guint8 raw[24];
  gsize got = 0;
  while (got < sizeof raw)
    {
      const ssize_t r = getrandom (raw + got, sizeof raw - got, 0);
      if (r > 0)
        got += (gsize) r;
      else
        g_assert (errno == EINTR);   /* getrandom(2) fails only when interrupted */
    }
  GString *key = g_string_new ("hz-");
  for (gsize i = 0; i < sizeof raw; i++)
    g_string_append_printf (key, "%02x", raw[i]);
  return g_string_free (key, FALSE);
}
