/* tests/learner/test-tray.c — the learner's tray icon (StatusNotifierItem + dbusmenu) and
 * the Background portal request, against fake hosts on a private bus (GTestDBus). */
#include <gio/gio.h>
#include <string.h>

#include "background-portal.h"
#include "tray.h"

static GDBusConnection *
new_connection (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *address = g_dbus_address_get_for_bus_sync (G_BUS_TYPE_SESSION, NULL, &error);
  g_assert_no_error (error);
  GDBusConnection *c = g_dbus_connection_new_for_address_sync (
    address, G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
    G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION, NULL, NULL, &error);
  g_assert_no_error (error);
  return c;
}

static void
own_name (GDBusConnection *c, const char *name)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) r = g_dbus_connection_call_sync (
    c, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "RequestName",
    g_variant_new ("(su)", name, 4 /* DO_NOT_QUEUE */), G_VARIANT_TYPE ("(u)"),
    G_DBUS_CALL_FLAGS_NONE, -1, NULL, &error);
  g_assert_no_error (error);
  guint32 code;
  g_variant_get (r, "(u)", &code);
  g_assert_cmpuint (code, ==, 1);  /* primary owner */
}

static void
spin_until (gboolean *flag)
{
  const gint64 end = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  while (!*flag && g_get_monotonic_time () < end)
    g_main_context_iteration (NULL, TRUE);
  g_assert_true (*flag);
}

/* ------------------------------------------------------------- fake watcher */

typedef struct {
  char    *registered;   /* the service name the item registered */
  gboolean got;
} Watcher;

static void
watcher_call (GDBusConnection *conn, const char *sender, const char *path, const char *iface,
              const char *method, GVariant *params, GDBusMethodInvocation *inv, gpointer data)
{
  Watcher *w = data;
  g_assert_cmpstr (method, ==, "RegisterStatusNotifierItem");
  g_variant_get (params, "(s)", &w->registered);
  w->got = TRUE;
  g_dbus_method_invocation_return_value (inv, NULL);
}

static const char watcher_xml[] =
  "<node><interface name='org.kde.StatusNotifierWatcher'>"
  "<method name='RegisterStatusNotifierItem'><arg type='s' direction='in'/></method>"
  "</interface></node>";

/* ------------------------------------------------------------- the tray */

static void
on_action (HzTrayAction action, gpointer data)
{
  g_array_append_val ((GArray *) data, action);
}

/* A method call whose reply we wait for by iterating the main context: the tray answers
 * on this thread's context, so a blocking call would deadlock. */
typedef struct {
  gboolean  done;
  GVariant *reply;
  GError   *error;
} Reply;

static void
on_reply (GObject *source, GAsyncResult *res, gpointer data)
{
  Reply *r = data;
  r->reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), res, &r->error);
  r->done = TRUE;
}

static GVariant *
call_full (GDBusConnection *c, const char *dest, const char *path, const char *iface,
           const char *method, GVariant *args, const char *reply_type, GError **error)
{
  Reply r = { 0 };
  g_dbus_connection_call (c, dest, path, iface, method, args,
                          reply_type ? G_VARIANT_TYPE (reply_type) : NULL,
                          G_DBUS_CALL_FLAGS_NONE, 5000, NULL, on_reply, &r);
  spin_until (&r.done);
  if (r.error)
    g_propagate_error (error, r.error);
  return r.reply;
}

static GVariant *
call (GDBusConnection *c, const char *dest, const char *path, const char *iface,
      const char *method, GVariant *args, const char *reply_type)
{
  g_autoptr (GError) error = NULL;
  GVariant *r = call_full (c, dest, path, iface, method, args, reply_type, &error);
  g_assert_no_error (error);
  return r;
}

/* The label of menu item `id` through GetProperty. */
static char *
menu_label (GDBusConnection *c, const char *dest, int id)
{
  g_autoptr (GVariant) r = call (c, dest, "/MenuBar", "com.canonical.dbusmenu", "GetProperty",
                                 g_variant_new ("(is)", id, "label"), "(v)");
  g_autoptr (GVariant) v = NULL;
  g_variant_get (r, "(v)", &v);
  return g_variant_dup_string (v, NULL);
}

typedef struct {
  gboolean got;
  char    *status;
} Signals;

static void
on_item_signal (GDBusConnection *conn, const char *sender, const char *path, const char *iface,
                const char *signal, GVariant *params, gpointer data)
{
  Signals *s = data;
  if (g_strcmp0 (signal, "NewStatus") == 0)
    {
      g_free (s->status);
      g_variant_get (params, "(s)", &s->status);
      s->got = TRUE;
    }
}

static void
test_tray (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GDBusConnection) host = new_connection ();
  g_autoptr (GDBusConnection) daemon = new_connection ();
  g_autoptr (GArray) actions = g_array_new (FALSE, FALSE, sizeof (HzTrayAction));

  /* the tray starts before any watcher: no icon, no error */
  g_autoptr (HzTray) tray = hz_tray_new (daemon, "ai.hanzo.Desktop", on_action, actions, &error);
  g_assert_no_error (error);
  g_assert_false (hz_tray_is_registered (tray));

  /* a watcher appears: the item registers with its bus name */
  Watcher w = { 0 };
  g_autoptr (GDBusNodeInfo) info = g_dbus_node_info_new_for_xml (watcher_xml, &error);
  g_assert_no_error (error);
  const GDBusInterfaceVTable vt = { watcher_call, NULL, NULL, { 0 } };
  guint reg = g_dbus_connection_register_object (host, "/StatusNotifierWatcher",
                                                 info->interfaces[0], &vt, &w, NULL, &error);
  g_assert_no_error (error);
  own_name (host, "org.kde.StatusNotifierWatcher");
  spin_until (&w.got);
  const char *item = g_dbus_connection_get_unique_name (daemon);
  g_assert_cmpstr (w.registered, ==, item);
  while (!hz_tray_is_registered (tray))
    g_main_context_iteration (NULL, TRUE);

  /* what a host reads: the item's properties */
  g_autoptr (GVariant) props = call (host, item, "/StatusNotifierItem",
                                     "org.freedesktop.DBus.Properties", "GetAll",
                                     g_variant_new ("(s)", "org.kde.StatusNotifierItem"),
                                     "(a{sv})");
  g_autoptr (GVariant) dict = g_variant_get_child_value (props, 0);
  const char *s;
  g_assert_true (g_variant_lookup (dict, "Id", "&s", &s));
  g_assert_cmpstr (s, ==, "hanzo-learner");
  g_assert_true (g_variant_lookup (dict, "IconName", "&s", &s));
  g_assert_cmpstr (s, ==, "ai.hanzo.Desktop");
  g_assert_true (g_variant_lookup (dict, "Status", "&s", &s));
  g_assert_cmpstr (s, ==, "Passive");
  g_assert_true (g_variant_lookup (dict, "Menu", "&o", &s));
  g_assert_cmpstr (s, ==, "/MenuBar");

  /* the menu's layout: root with six children, labels and a separator */
  g_autoptr (GVariant) layout = call (host, item, "/MenuBar", "com.canonical.dbusmenu",
                                      "GetLayout", g_variant_new ("(ii@as)", 0, -1,
                                                                  g_variant_new_strv (NULL, 0)),
                                      "(u(ia{sv}av))");
  g_autoptr (GVariant) root = g_variant_get_child_value (layout, 1);
  g_autoptr (GVariant) kids = g_variant_get_child_value (root, 2);
  g_assert_cmpuint (g_variant_n_children (kids), ==, 6);
  g_autoptr (GVariant) sep_v = g_variant_get_child_value (kids, 1);
  g_autoptr (GVariant) sep = g_variant_get_variant (sep_v);
  g_autoptr (GVariant) sep_props = g_variant_get_child_value (sep, 1);
  g_assert_true (g_variant_lookup (sep_props, "type", "&s", &s));
  g_assert_cmpstr (s, ==, "separator");
  g_autofree char *l1 = menu_label (host, item, 1);
  g_assert_cmpstr (l1, ==, "Waiting for tonight");
  g_autofree char *l3 = menu_label (host, item, 3);
  g_assert_cmpstr (l3, ==, "_Pause Learning");

  /* progress and state reach the host: labels, NewStatus */
  Signals sig = { 0 };
  guint sub = g_dbus_connection_signal_subscribe (host, item, "org.kde.StatusNotifierItem", NULL,
                                                  "/StatusNotifierItem", NULL,
                                                  G_DBUS_SIGNAL_FLAGS_NONE, on_item_signal, &sig,
                                                  NULL);
  hz_tray_update (tray, "running", 0.424);
  spin_until (&sig.got);
  g_assert_cmpstr (sig.status, ==, "Active");
  g_autofree char *l1b = menu_label (host, item, 1);
  g_assert_cmpstr (l1b, ==, "Learning: 42 %");
  hz_tray_update (tray, "paused", 0.424);
  g_autofree char *l3b = menu_label (host, item, 3);
  g_assert_cmpstr (l3b, ==, "_Resume Learning");

  /* clicks come back as actions, in order; unknown ids are reported by EventGroup */
  g_autoptr (GVariant) ev = call (host, item, "/MenuBar", "com.canonical.dbusmenu", "Event",
                                  g_variant_new ("(isvu)", 3, "clicked",
                                                 g_variant_new_int32 (0), 0), NULL);
  GVariantBuilder group;
  g_variant_builder_init (&group, G_VARIANT_TYPE ("a(isvu)"));
  g_variant_builder_add (&group, "(isvu)", 4, "clicked", g_variant_new_int32 (0), 0);
  g_variant_builder_add (&group, "(isvu)", 99, "clicked", g_variant_new_int32 (0), 0);
  g_variant_builder_add (&group, "(isvu)", 6, "clicked", g_variant_new_int32 (0), 0);
  g_variant_builder_add (&group, "(isvu)", 6, "hovered", g_variant_new_int32 (0), 0);
  g_autoptr (GVariant) errs = call (host, item, "/MenuBar", "com.canonical.dbusmenu",
                                    "EventGroup", g_variant_new ("(a(isvu))", &group), "(ai)");
  gsize n_err;
  g_autoptr (GVariant) err_arr = g_variant_get_child_value (errs, 0);
  const gint32 *err_ids = g_variant_get_fixed_array (err_arr, &n_err, sizeof (gint32));
  g_assert_cmpuint (n_err, ==, 1);
  g_assert_cmpint (err_ids[0], ==, 99);
  g_autoptr (GVariant) act = call (host, item, "/StatusNotifierItem",
                                   "org.kde.StatusNotifierItem", "Activate",
                                   g_variant_new ("(ii)", 0, 0), NULL);
  g_assert_cmpuint (actions->len, ==, 4);
  g_assert_cmpint (g_array_index (actions, HzTrayAction, 0), ==, HZ_TRAY_ACTION_RESUME);
  g_assert_cmpint (g_array_index (actions, HzTrayAction, 1), ==, HZ_TRAY_ACTION_OPEN);
  g_assert_cmpint (g_array_index (actions, HzTrayAction, 2), ==, HZ_TRAY_ACTION_QUIT);
  g_assert_cmpint (g_array_index (actions, HzTrayAction, 3), ==, HZ_TRAY_ACTION_OPEN);

  /* a bad GetLayout parent is an error, not a crash */
  g_autoptr (GVariant) bad = call_full (host, item, "/MenuBar", "com.canonical.dbusmenu",
                                       "GetLayout", g_variant_new ("(ii@as)", 42, -1,
                                                                   g_variant_new_strv (NULL, 0)),
                                       NULL, &error);
  g_assert_error (error, G_DBUS_ERROR, G_DBUS_ERROR_INVALID_ARGS);
  g_clear_error (&error);

  g_dbus_connection_signal_unsubscribe (host, sub);
  g_dbus_connection_unregister_object (host, reg);
  g_free (sig.status);
  g_free (w.registered);
}

/* ------------------------------------------------------------- fake portal */

typedef struct {
  guint32  response;
  gboolean answer;       /* emit Response at all */
  char    *reason;
  gboolean autostart;
  char   **commandline;
} Portal;

static void
portal_call (GDBusConnection *conn, const char *sender, const char *path, const char *iface,
             const char *method, GVariant *params, GDBusMethodInvocation *inv, gpointer data)
{
  Portal *p = data;
  g_autoptr (GVariant) opts = NULL;
  const char *parent, *token;
  g_variant_get (params, "(&s@a{sv})", &parent, &opts);
  g_clear_pointer (&p->reason, g_free);
  g_clear_pointer (&p->commandline, g_strfreev);
  g_assert_true (g_variant_lookup (opts, "handle_token", "&s", &token));
  g_variant_lookup (opts, "reason", "s", &p->reason);
  g_variant_lookup (opts, "autostart", "b", &p->autostart);
  g_variant_lookup (opts, "commandline", "^as", &p->commandline);
  g_autofree char *who = g_strdup (sender + 1);
  g_strdelimit (who, ".", '_');
  g_autofree char *handle = g_strdup_printf ("/org/freedesktop/portal/desktop/request/%s/%s",
                                             who, token);
  g_dbus_method_invocation_return_value (inv, g_variant_new ("(o)", handle));
  if (!p->answer)
    return;
  GVariantBuilder res;
  g_variant_builder_init (&res, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&res, "{sv}", "background", g_variant_new_boolean (p->response == 0));
  g_variant_builder_add (&res, "{sv}", "autostart", g_variant_new_boolean (p->autostart));
  g_dbus_connection_emit_signal (conn, sender, handle, "org.freedesktop.portal.Request",
                                 "Response", g_variant_new ("(ua{sv})", p->response, &res), NULL);
}

static const char portal_xml[] =
  "<node><interface name='org.freedesktop.portal.Background'>"
  "<method name='RequestBackground'><arg type='s' direction='in'/>"
  "<arg type='a{sv}' direction='in'/><arg type='o' direction='out'/></method>"
  "</interface></node>";

typedef struct {
  gboolean done, ok, autostart;
  GError  *error;
} Result;

static void
on_result (GObject *source, GAsyncResult *res, gpointer data)
{
  Result *r = data;
  r->ok = hz_background_request_finish (res, &r->autostart, &r->error);
  r->done = TRUE;
}

static void
request (GDBusConnection *c, Result *r, GCancellable *cancellable)
{
  const char *argv[] = { "hanzo-learner", "--gapplication-service", NULL };
  memset (r, 0, sizeof *r);
  hz_background_request_async (c, "Learn from your chats at night", argv, TRUE, cancellable,
                               on_result, r);
}

static void
test_portal (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GDBusConnection) host = new_connection ();
  g_autoptr (GDBusConnection) daemon = new_connection ();
  Result r;

  /* no portal on the bus: a D-Bus error, no hang */
  request (daemon, &r, NULL);
  spin_until (&r.done);
  g_assert_false (r.ok);
  g_assert_true (r.error->domain == G_DBUS_ERROR);
  g_clear_error (&r.error);

  Portal p = { .response = 0, .answer = TRUE };
  g_autoptr (GDBusNodeInfo) info = g_dbus_node_info_new_for_xml (portal_xml, &error);
  g_assert_no_error (error);
  const GDBusInterfaceVTable vt = { portal_call, NULL, NULL, { 0 } };
  guint reg = g_dbus_connection_register_object (host, "/org/freedesktop/portal/desktop",
                                                 info->interfaces[0], &vt, &p, NULL, &error);
  g_assert_no_error (error);
  own_name (host, "org.freedesktop.portal.Desktop");

  /* granted, with the options the portal needs */
  request (daemon, &r, NULL);
  spin_until (&r.done);
  g_assert_no_error (r.error);
  g_assert_true (r.ok);
  g_assert_true (r.autostart);
  g_assert_cmpstr (p.reason, ==, "Learn from your chats at night");
  g_assert_cmpstr (p.commandline[1], ==, "--gapplication-service");

  /* the user says no */
  p.response = 1;
  request (daemon, &r, NULL);
  spin_until (&r.done);
  g_assert_false (r.ok);
  g_assert_error (r.error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED);
  g_clear_error (&r.error);

  /* no answer ever comes: cancelling ends the request */
  p.answer = FALSE;
  g_autoptr (GCancellable) cancel = g_cancellable_new ();
  request (daemon, &r, cancel);
  for (int i = 0; i < 20; i++)
    g_main_context_iteration (NULL, FALSE);
  g_assert_false (r.done);
  g_cancellable_cancel (cancel);
  spin_until (&r.done);
  g_assert_error (r.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&r.error);

  g_dbus_connection_unregister_object (host, reg);
  g_free (p.reason);
  g_strfreev (p.commandline);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  /* a private bus so that no real shell, watcher or portal takes part */
  g_autoptr (GTestDBus) bus = g_test_dbus_new (G_TEST_DBUS_NONE);
  g_test_dbus_up (bus);
  g_test_add_func ("/learner/tray", test_tray);
  g_test_add_func ("/learner/background-portal", test_portal);
  int rc = g_test_run ();
  g_test_dbus_down (bus);
  return rc;
}
