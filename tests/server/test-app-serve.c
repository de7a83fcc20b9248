/* tests/server/test-app-serve.c — Preferences → "Serve to other apps on this computer"
 * (app/hz-app-server.c) in the real app, in-process under Xvfb with a private keyring
 * (tests/egress/with-keyring.sh), spoken to by libsoup's HTTP client on the same main loop:
 *
 *  - default: the switch is off and the process holds no listening TCP socket;
 *  - on: the switch of the preferences window turns it on; the copy buttons copy the
 *    address and the key; the header shows it; GET
 *    /v1/models names the app's model; without the key 401; a greedy chat completion
 *    equals the app's own greedy reply to the same message (one engine, one template), served
 *    while the model's file is renamed away (the app's loaded model itself, not a second
 *    load), and a streamed completion; the key is the keyring's (the item `hanzo serve` reads);
 *  - new key: the old key gets 401, the new one 200;
 *  - another model opened in the app: the server serves it, on the engine worker's own
 *    copy (loads counted by the worker's registry: one per model), within a memory budget
 *    that holds one model only;
 *  - port in use: the preferences row says so (the app serves on after the port changes);
 *  - off: the port is closed at once (connection refused, no listening socket left);
 *  - on at start without a model: nothing listens until a model is opened, then it is
 *    served; quitting the app closes the port.
 *
 * The model: ../shared/models/stories260K.gguf with a chat template (chat-model.h);
 * skipped when ../shared is absent. */
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <libsoup/soup.h>
#include <string.h>

#include "../ui/ui-test-util.h"
#include "chat-model.h"
#include "hanzo-server.h"
#include "hz-app-server.h"
#include "hz-preferences-window.h"

#define MESSAGE "Once upon a time"
#define MAX_TOKENS 24

/* ----------------------------------------------------------- listening sockets */

/* Ports of the listening TCP sockets this process holds (its socket fds matched against
 * /proc/net/tcp and tcp6 by inode). */
static GArray *
own_listening_ports (void)
{
  g_autoptr(GHashTable) inodes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GDir) fds = g_dir_open ("/proc/self/fd", 0, NULL);
  const char *name;
  g_assert_nonnull (fds);
  while ((name = g_dir_read_name (fds)) != NULL)
    {
      g_autofree char *fd = g_build_filename ("/proc/self/fd", name, NULL);
      g_autofree char *target = g_file_read_link (fd, NULL);
      if (target && g_str_has_prefix (target, "socket:["))
        g_hash_table_add (inodes, g_strndup (target + 8, strlen (target) - 9));
    }
  GArray *ports = g_array_new (FALSE, FALSE, sizeof (guint));
  const char *files[] = { "/proc/net/tcp", "/proc/net/tcp6" };
  for (guint f = 0; f < G_N_ELEMENTS (files); f++)
    {
      g_autofree char *text = NULL;
      if (!g_file_get_contents (files[f], &text, NULL, NULL))
        continue;
      g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
      for (guint i = 1; lines[i]; i++)
        {
          g_auto(GStrv) col = g_strsplit_set (g_strstrip (lines[i]), " ", -1);
          /* sl local rem st tx:rx tr:when retrnsmt uid timeout inode (empty fields skipped) */
          g_autoptr(GPtrArray) c = g_ptr_array_new ();
          for (guint k = 0; col[k]; k++)
            if (*col[k])
              g_ptr_array_add (c, col[k]);
          if (c->len < 10 || strcmp (c->pdata[3], "0A") != 0 ||
              !g_hash_table_contains (inodes, c->pdata[9]))
            continue;
          const char *colon = strrchr (c->pdata[1], ':');
          guint port = (guint) g_ascii_strtoull (colon + 1, NULL, 16);
          g_array_append_val (ports, port);
        }
    }
  return ports;
}

static guint
n_own_listening (void)
{
  g_autoptr(GArray) ports = own_listening_ports ();
  return ports->len;
}

/* ------------------------------------------------------------------- HTTP */

typedef struct {
  gboolean  done;
  guint     status;
  GError   *error;
  char     *body;
  JsonNode *json;
} Reply;

static void
reply_clear (Reply *r)
{
  g_clear_error (&r->error);
  g_free (r->body);
  if (r->json)
    json_node_unref (r->json);
  memset (r, 0, sizeof *r);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Reply, reply_clear)

static void
on_sent (GObject *source, GAsyncResult *res, gpointer data)
{
  Reply *r = data;
  g_autoptr(GBytes) got = soup_session_send_and_read_finish (SOUP_SESSION (source), res, &r->error);
  SoupMessage *msg = soup_session_get_async_result_message (SOUP_SESSION (source), res);
  r->status = msg ? soup_message_get_status (msg) : 0;
  if (got)
    {
      r->body = g_strndup (g_bytes_get_data (got, NULL), g_bytes_get_size (got));
      g_autoptr(JsonParser) p = json_parser_new ();
      r->json = json_parser_load_from_data (p, r->body, -1, NULL) ? json_parser_steal_root (p)
                                                                 : NULL;
    }
  r->done = TRUE;
}

static gboolean
reply_done (gpointer data)
{
  return ((Reply *) data)->done;
}

/* A request to `address` + `path` (body: POST JSON; NULL: GET) with `key` as the bearer
 * (NULL: none), answered while the app's main loop runs. */
static void
http (Reply *r, const char *address, const char *path, const char *key, const char *body)
{
  static SoupSession *session;
  if (session == NULL)
    session = soup_session_new_with_options ("timeout", 60, NULL);
  g_autofree char *uri = g_strconcat (address, path, NULL);
  g_autoptr(SoupMessage) msg = soup_message_new (body ? "POST" : "GET", uri);
  g_assert_nonnull (msg);
  if (body)
    {
      g_autoptr(GBytes) b = g_bytes_new (body, strlen (body));
      soup_message_set_request_body_from_bytes (msg, "application/json", b);
    }
  if (key)
    {
      g_autofree char *auth = g_strconcat ("Bearer ", key, NULL);
      soup_message_headers_replace (soup_message_get_request_headers (msg), "Authorization", auth);
    }
  reply_clear (r);
  soup_session_send_and_read_async (session, msg, G_PRIORITY_DEFAULT, NULL, on_sent, r);
  g_assert_true (hz_ui_wait_for (reply_done, r, 120));
}

static JsonObject *
obj (Reply *r)
{
  if (r->json == NULL || !JSON_NODE_HOLDS_OBJECT (r->json))
    g_test_message ("not a JSON object (status %u): %s", r->status, r->body);
  g_assert_true (r->json && JSON_NODE_HOLDS_OBJECT (r->json));
  return json_node_get_object (r->json);
}

/* ---------------------------------------------------------------- the app */

static char *chat_model, *chat_model2;   /* the same size: a budget of 1.5 holds one */

/* The preferences window on its Other Apps page (app.serve-settings, the header
 * indicator's action), shown. */
static HzPreferencesWindow *
open_preferences (HzApplication *app)
{
  g_action_group_activate_action (G_ACTION_GROUP (app), "serve-settings", NULL);
  GListModel *tops = gtk_window_get_toplevels ();   /* (transfer none) */
  for (guint i = 0; i < g_list_model_get_n_items (tops); i++)
    {
      g_autoptr(GObject) w = g_list_model_get_item (tops, i);
      if (HZ_IS_PREFERENCES_WINDOW (w))
        return HZ_PREFERENCES_WINDOW (w);
    }
  g_assert_not_reached ();
}

/* A button by its tooltip. */
static gboolean
is_button_with_tooltip (GtkWidget *w, gconstpointer tooltip)
{
  return GTK_IS_BUTTON (w) && g_strcmp0 (gtk_widget_get_tooltip_text (w), tooltip) == 0;
}

/* Click the button of `prefs` whose tooltip is `tooltip`; what it put on the clipboard. */
static char *
click_copy (HzPreferencesWindow *prefs, const char *tooltip)
{
  GtkWidget *button = hz_ui_find_widget (GTK_WIDGET (prefs), is_button_with_tooltip, tooltip);
  g_assert_nonnull (button);
  g_assert_true (gtk_widget_get_sensitive (button));
  g_signal_emit_by_name (button, "clicked");
  return hz_ui_clipboard_text (gtk_widget_get_clipboard (button));
}

/* The header's "Serving to Other Apps" button. */
static gboolean
is_serve_indicator (GtkWidget *w, gconstpointer data)
{
  return GTK_IS_BUTTON (w) &&
         g_strcmp0 (gtk_button_get_icon_name (GTK_BUTTON (w)), "network-server-symbolic") == 0;
}

static gboolean
state_settled (gpointer data)
{
  HzAppServerState s = hz_app_server_get_state (data);
  return s != HZ_APP_SERVER_STARTING;
}

/* Turn the switch to `on` and wait for the server to settle. */
static void
flip (HzPreferencesWindow *prefs, HzAppServer *server, gboolean on)
{
  gtk_switch_set_active (hz_preferences_window_get_serve_switch (prefs), on);
  g_assert_true (hz_ui_wait_for (state_settled, server, 30));
}

typedef struct {
  char *text;
} Finished;

static void
on_finished (HzEngineWorker *worker, guint request, const char *text, gpointer stats,
             Finished *f)
{
  g_free (f->text);
  f->text = g_strdup (text);
}

static gboolean
finished (gpointer data)
{
  return ((Finished *) data)->text != NULL;
}

static char *
chat_body (const char *model_id)
{
  return g_strdup_printf ("{\"model\": \"%s\", \"messages\": [{\"role\": \"user\", \"content\": "
                          "\"" MESSAGE "\"}], \"max_tokens\": %d, \"temperature\": 0}",
                          model_id, MAX_TOKENS);
}

static void
script_serve (HzApplication *app, HzWindow *window, gpointer data)
{
  HzAppServer *server = hz_application_get_app_server (app);
  GSettings *settings = hz_application_get_settings (app);
  g_assert_true (hz_ui_wait_for (hz_ui_model_ready, window, 60));

  /* off by default: nothing listens */
  g_assert_false (g_settings_get_boolean (settings, "serve-enabled"));
  g_assert_cmpint (hz_app_server_get_state (server), ==, HZ_APP_SERVER_OFF);
  g_assert_cmpuint (n_own_listening (), ==, 0);
  g_assert_null (hz_app_server_get_address (server));

  /* the app's own greedy reply to MESSAGE */
  Finished f = { NULL };
  gulong h = g_signal_connect (hz_application_get_worker (app), "finished",
                               G_CALLBACK (on_finished), &f);
  hz_ui_type_and_send (window, MESSAGE);
  g_assert_true (hz_ui_wait_for (finished, &f, 120));
  g_signal_handler_disconnect (hz_application_get_worker (app), h);
  g_assert_true (hz_ui_wait_for (hz_ui_reply_done, window, 30));
  g_test_message ("the app's reply: %s", f.text);
  g_assert_cmpstr (f.text, !=, "");

  /* the file goes away: the server can only use the model the app has loaded */
  g_autofree char *moved = g_strconcat (chat_model, ".moved", NULL);
  g_assert_cmpint (g_rename (chat_model, moved), ==, 0);

  /* on, through the preferences' switch, on any free port */
  g_settings_set_int (settings, "serve-port", 0);
  HzPreferencesWindow *prefs = open_preferences (app);
  flip (prefs, server, TRUE);
  g_assert_true (g_settings_get_boolean (settings, "serve-enabled"));
  g_test_message ("%s", hz_app_server_get_message (server));
  g_assert_cmpint (hz_app_server_get_state (server), ==, HZ_APP_SERVER_ON);
  const char *address = hz_app_server_get_address (server);
  g_assert_true (g_str_has_prefix (address, "http://127.0.0.1:"));
  g_assert_true (g_str_has_suffix (address, "/v1"));
  g_autofree char *base = g_strndup (address, strlen (address) - 3);
  g_autoptr(GArray) ports = own_listening_ports ();
  g_assert_cmpuint (ports->len, ==, 1);
  g_autofree char *port_text = g_strdup_printf (":%u/v1", g_array_index (ports, guint, 0));
  g_assert_true (g_str_has_suffix (address, port_text));
  g_assert_true (strstr (hz_app_server_get_message (server), address) != NULL);
  hz_ui_spin (0.3);
  g_autofree char *shot = hz_ui_screenshot (GTK_WIDGET (prefs), "serve-preferences");

  /* the key is the keyring's, the one `hanzo serve` reads */
  g_autofree char *key = g_strdup (hz_app_server_get_key (server));
  g_assert_true (g_str_has_prefix (key, "hz-"));
  g_autoptr(GError) error = NULL;
  g_autofree char *kept = hz_server_keyring_key (&error);
  if (error != NULL)
    g_test_message ("no keyring here (%s): %s", error->message,
                    hz_app_server_get_key_note (server));
  else
    g_assert_cmpstr (kept, ==, key);

  /* the copy buttons */
  g_autofree char *copied_address = click_copy (prefs, "Copy Address");
  g_assert_cmpstr (copied_address, ==, address);
  g_autofree char *copied_key = click_copy (prefs, "Copy API Key");
  g_assert_cmpstr (copied_key, ==, key);

  /* the header shows it, with the address */
  GtkWidget *indicator = hz_ui_find_widget (GTK_WIDGET (window), is_serve_indicator, NULL);
  g_assert_nonnull (indicator);
  g_assert_true (gtk_widget_get_visible (indicator));
  g_assert_true (strstr (gtk_widget_get_tooltip_text (indicator), address) != NULL);

  /* /v1/models: the app's model; without the key 401 */
  g_auto(Reply) r = { 0 };
  http (&r, base, "/v1/models", NULL, NULL);
  g_assert_cmpuint (r.status, ==, 401);
  http (&r, base, "/v1/models", key, NULL);
  g_assert_cmpuint (r.status, ==, 200);
  JsonArray *data_arr = json_object_get_array_member (obj (&r), "data");
  g_assert_cmpuint (json_array_get_length (data_arr), ==, 1);
  g_autofree char *id = g_strdup (json_object_get_string_member (
    json_array_get_object_element (data_arr, 0), "id"));   /* (r is reused) */
  g_assert_cmpstr (id, ==, "stories-chat");
  g_assert_cmpstr (id, ==, hz_app_server_get_model_id (server));

  /* a greedy chat completion: the app's own reply */
  g_autofree char *body = chat_body (id);
  http (&r, base, "/v1/chat/completions", key, body);
  if (r.status != 200)
    g_test_message ("%u %s", r.status, r.body);
  g_assert_cmpuint (r.status, ==, 200);
  JsonObject *choice = json_array_get_object_element (
    json_object_get_array_member (obj (&r), "choices"), 0);
  const char *content = json_object_get_string_member (
    json_object_get_object_member (choice, "message"), "content");
  g_test_message ("the API's reply: %s", content);
  g_assert_cmpstr (content, ==, f.text);
  g_assert_nonnull (json_object_get_string_member (choice, "finish_reason"));
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (obj (&r), "usage"),
                                               "completion_tokens"), >, 0);
  /* streamed: server-sent events ending in [DONE] */
  g_autofree char *streamed = g_strdup_printf ("{\"model\": \"%s\", \"prompt\": \"" MESSAGE "\", "
                                               "\"max_tokens\": 8, \"stream\": true}", id);
  http (&r, base, "/v1/completions", key, streamed);
  g_assert_cmpuint (r.status, ==, 200);
  g_assert_true (g_str_has_prefix (r.body, "data: {"));
  g_assert_true (g_str_has_suffix (r.body, "data: [DONE]\n\n"));

  /* a new key: the old one is refused, the new one served */
  hz_app_server_regenerate_key (server);
  g_assert_true (hz_ui_wait_for (state_settled, server, 30));
  g_assert_cmpint (hz_app_server_get_state (server), ==, HZ_APP_SERVER_ON);
  g_autofree char *key2 = g_strdup (hz_app_server_get_key (server));
  g_assert_cmpstr (key2, !=, key);
  g_autofree char *base2 = g_strndup (hz_app_server_get_address (server),
                                      strlen (hz_app_server_get_address (server)) - 3);
  http (&r, base2, "/v1/models", key, NULL);
  g_assert_cmpuint (r.status, ==, 401);
  http (&r, base2, "/v1/models", key2, NULL);
  g_assert_cmpuint (r.status, ==, 200);
  if (error == NULL)
    {
      g_autofree char *kept2 = hz_server_keyring_key (NULL);
      g_assert_cmpstr (kept2, ==, key2);
    }

  g_assert_cmpint (g_rename (moved, chat_model), ==, 0);

  /* another model in the app: the server follows it, on the worker's own copy (no second
   * load), within a memory budget that holds one model only (so the model served must be
   * given back before the switch) */
  g_assert_cmpuint (hz_engine_worker_get_n_loads (hz_application_get_worker (app)), ==, 1);
  hz_application_open_model (app, chat_model2, FALSE);
  g_assert_true (hz_ui_wait_for (hz_ui_model_ready, window, 60));
  g_assert_true (hz_ui_wait_for (state_settled, server, 30));
  g_test_message ("%s", hz_app_server_get_message (server));
  g_assert_cmpint (hz_app_server_get_state (server), ==, HZ_APP_SERVER_ON);
  g_assert_cmpstr (hz_app_server_get_model_id (server), ==, "stories-chat-2");
  g_free (base2);
  base2 = g_strndup (hz_app_server_get_address (server),
                     strlen (hz_app_server_get_address (server)) - 3);
  http (&r, base2, "/v1/models", key2, NULL);
  g_assert_cmpuint (r.status, ==, 200);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (
                     json_object_get_array_member (obj (&r), "data"), 0), "id"), ==,
                   "stories-chat-2");
  g_autofree char *body2 = chat_body ("stories-chat-2");
  http (&r, base2, "/v1/chat/completions", key2, body2);
  g_assert_cmpuint (r.status, ==, 200);
  g_assert_cmpuint (hz_engine_worker_get_n_loads (hz_application_get_worker (app)), ==, 2);
  GStatBuf st;
  g_assert_cmpint (g_stat (chat_model2, &st), ==, 0);
  g_assert_cmpuint (hz_engine_worker_get_loaded_bytes (hz_application_get_worker (app)), ==,
                    (guint64) st.st_size);

  /* off: the port closes at once */
  flip (prefs, server, FALSE);
  g_assert_cmpint (hz_app_server_get_state (server), ==, HZ_APP_SERVER_OFF);
  g_assert_false (g_settings_get_boolean (settings, "serve-enabled"));
  g_assert_cmpuint (n_own_listening (), ==, 0);
  g_assert_false (gtk_widget_get_visible (indicator));
  http (&r, base2, "/v1/models", key2, NULL);
  g_assert_cmpuint (r.status, ==, 0);
  g_assert_error (r.error, G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED);
  gtk_window_destroy (GTK_WINDOW (prefs));
  g_free (f.text);
}

/* The chat model (written once); FALSE (skipped) without ../shared. */
static gboolean
have_model (void)
{
  g_autofree char *stories = hz_test_shared_path ("models/stories260K.gguf");
  if (stories == NULL)
    return FALSE;
  if (chat_model == NULL)
    {
      chat_model = g_build_filename (hz_ui_tmpdir, "stories-chat.gguf", NULL);
      chat_model2 = g_build_filename (hz_ui_tmpdir, "stories-chat-2.gguf", NULL);
      g_autoptr(GError) error = NULL;
      g_assert_true (hz_test_write_chat_model (stories, chat_model, &error));
      g_assert_true (hz_test_write_chat_model (stories, chat_model2, &error));
      g_assert_no_error (error);
    }
  return TRUE;
}

static void
test_serve (void)
{
  if (!have_model ())
    return;
  g_autoptr(GSettings) settings = g_settings_new ("ai.hanzo.Desktop");
  g_settings_reset (settings, "serve-enabled");
  g_settings_set_double (settings, "temperature", 0);
  g_settings_set_int (settings, "max-tokens", MAX_TOKENS);
  GStatBuf st;
  g_assert_cmpint (g_stat (chat_model, &st), ==, 0);
  g_settings_set_uint64 (settings, "model-memory-budget", (guint64) st.st_size * 3 / 2);
  const char *args[] = { "--model", chat_model, NULL };
  hz_ui_run_app (args, script_serve, NULL);
}

/* A port another program holds: the row says so, the app serves on another port. */
static void
script_port_in_use (HzApplication *app, HzWindow *window, gpointer data)
{
  HzAppServer *server = hz_application_get_app_server (app);
  GSettings *settings = hz_application_get_settings (app);
  g_assert_true (hz_ui_wait_for (hz_ui_model_ready, window, 60));

  g_autoptr(GSocketListener) other = g_socket_listener_new ();
  g_autoptr(GError) error = NULL;
  guint16 taken = g_socket_listener_add_any_inet_port (other, NULL, &error);
  g_assert_no_error (error);
  g_settings_set_int (settings, "serve-port", taken);
  HzPreferencesWindow *prefs = open_preferences (app);
  flip (prefs, server, TRUE);
  g_test_message ("%s", hz_app_server_get_message (server));
  g_assert_cmpint (hz_app_server_get_state (server), ==, HZ_APP_SERVER_FAILED);
  g_assert_true (strstr (hz_app_server_get_message (server), "in use") != NULL);
  g_assert_true (gtk_switch_get_active (hz_preferences_window_get_serve_switch (prefs)));
  hz_ui_spin (0.3);
  g_autofree char *shot = hz_ui_screenshot (GTK_WIDGET (prefs), "serve-port-in-use");

  /* another port: served */
  g_settings_set_int (settings, "serve-port", 0);
  g_assert_true (hz_ui_wait_for (state_settled, server, 30));
  g_assert_cmpint (hz_app_server_get_state (server), ==, HZ_APP_SERVER_ON);
  g_assert_cmpuint (n_own_listening (), ==, 1 + 1);   /* ours and `other` */
  gtk_window_destroy (GTK_WINDOW (prefs));
  /* left on: quitting the app stops it (checked after the run) */
}

static void
test_port_in_use (void)
{
  if (!have_model ())
    return;
  const char *args[] = { "--model", chat_model, NULL };
  hz_ui_run_app (args, script_port_in_use, NULL);
  g_assert_cmpuint (n_own_listening (), ==, 0);
}

/* Switched on before the app starts, with no model: nothing listens until one is opened,
 * then the app serves it; quitting stops it. */
static void
script_no_model (HzApplication *app, HzWindow *window, gpointer data)
{
  HzAppServer *server = hz_application_get_app_server (app);
  g_assert_true (hz_ui_wait_for (state_settled, server, 30));
  g_test_message ("%s", hz_app_server_get_message (server));
  g_assert_cmpint (hz_app_server_get_state (server), ==, HZ_APP_SERVER_NO_MODEL);
  g_assert_cmpuint (n_own_listening (), ==, 0);

  hz_application_open_model (app, chat_model, FALSE);
  g_assert_true (hz_ui_wait_for (hz_ui_model_ready, window, 60));
  g_assert_true (hz_ui_wait_for (state_settled, server, 30));
  g_assert_cmpint (hz_app_server_get_state (server), ==, HZ_APP_SERVER_ON);
  g_autofree char *base = g_strndup (hz_app_server_get_address (server),
                                     strlen (hz_app_server_get_address (server)) - 3);
  g_auto(Reply) r = { 0 };
  http (&r, base, "/v1/models", hz_app_server_get_key (server), NULL);
  g_assert_cmpuint (r.status, ==, 200);
  g_assert_cmpuint (n_own_listening (), ==, 1);
}

static void
test_no_model (void)
{
  if (!have_model ())
    return;
  g_autoptr(GSettings) settings = g_settings_new ("ai.hanzo.Desktop");
  g_settings_reset (settings, "model-path");   /* remembered by the runs before */
  g_settings_set_int (settings, "serve-port", 0);
  g_settings_set_boolean (settings, "serve-enabled", TRUE);
  g_settings_sync ();
  hz_ui_run_app (NULL, script_no_model, NULL);
  g_assert_cmpuint (n_own_listening (), ==, 0);
}

int
main (int argc, char **argv)
{
  hz_ui_test_init ();
  gtk_test_init (&argc, &argv, NULL);
  g_test_add_func ("/app-serve/on-off", test_serve);
  g_test_add_func ("/app-serve/port-in-use", test_port_in_use);
  g_test_add_func ("/app-serve/no-model", test_no_model);
  int status = g_test_run ();
  hz_ui_test_cleanup ();
  g_free (chat_model);
  g_free (chat_model2);
  return status;
}
