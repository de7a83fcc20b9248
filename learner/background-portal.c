/* learner/background-portal.c — see background-portal.h. */
#include "background-portal.h"

#define PORTAL_NAME "org.freedesktop.portal.Desktop"
#define PORTAL_PATH "/org/freedesktop/portal/desktop"

typedef struct {
  GDBusConnection *conn;
  guint            sub_id;
  GSource         *cancel_source;  /* fires on the task's context when cancelled */
} Request;

static void
request_free (Request *r)
{
  if (r->cancel_source)
    {
      g_source_destroy (r->cancel_source);
      g_source_unref (r->cancel_source);
    }
  if (r->sub_id)
    g_dbus_connection_signal_unsubscribe (r->conn, r->sub_id);
  g_clear_object (&r->conn);
  g_free (r);
}

gboolean
hz_background_is_sandboxed (void)
{
  return g_file_test ("/.flatpak-info", G_FILE_TEST_EXISTS);
}

static void
on_response (GDBusConnection *conn, const char *sender, const char *path, const char *iface,
             const char *signal, GVariant *params, gpointer data)
{
  GTask *task = data;
  Request *r = g_task_get_task_data (task);
  guint32 response;
  g_autoptr (GVariant) results = NULL;
  if (r->sub_id == 0)
    return;  /* already answered */
  g_dbus_connection_signal_unsubscribe (r->conn, r->sub_id);
  r->sub_id = 0;
  if (!g_variant_is_of_type (params, G_VARIANT_TYPE ("(ua{sv})")))
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_FAILED,
                               "the Background portal answered with %s",
                               g_variant_get_type_string (params));
      g_object_unref (task);
      return;
    }
  g_variant_get (params, "(u@a{sv})", &response, &results);
  if (response == 1)
    g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                             "running in the background was not allowed");
  else if (response != 0)
    g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_FAILED,
                             "the Background portal request failed (response %u)", response);
  else
    {
      gboolean background = FALSE, autostart = FALSE;
      g_variant_lookup (results, "background", "b", &background);
      g_variant_lookup (results, "autostart", "b", &autostart);
      if (!background)
        g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                                 "running in the background was not allowed");
      else
        {
          g_object_set_data (G_OBJECT (task), "autostart", GINT_TO_POINTER (autostart));
          g_task_return_boolean (task, TRUE);
        }
    }
  g_object_unref (task);  /* the reference held for the signal */
}

/* Cancelled while waiting for the Response (a GCancellableSource on the task's context):
 * end the subscription and the task. */
static gboolean
on_cancelled (GCancellable *cancellable, gpointer data)
{
  GTask *task = data;
  Request *r = g_task_get_task_data (task);
  if (r->sub_id != 0)
    {
      g_dbus_connection_signal_unsubscribe (r->conn, r->sub_id);
      r->sub_id = 0;
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_CANCELLED, "the request was cancelled");
      g_object_unref (task);
    }
  return G_SOURCE_REMOVE;
}

static void
call_done (GObject *source, GAsyncResult *res, gpointer data)
{
  g_autoptr (GTask) task = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) v = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), res, &error);
  Request *r = g_task_get_task_data (task);
  if (v == NULL && r->sub_id)
    {
      /* no answer will come: drop the subscription and its task reference */
      g_dbus_connection_signal_unsubscribe (r->conn, r->sub_id);
      r->sub_id = 0;
      g_task_return_error (task, g_steal_pointer (&error));
      g_object_unref (task);
    }
  /* on success the Response signal finishes the task (its path is the one we derived;
   * portals older than 0.9 returned another handle, which we do not support) */
}

void
hz_background_request_async (GDBusConnection *conn, const char *reason,
                             const char *const *commandline, gboolean autostart,
                             GCancellable *cancellable, GAsyncReadyCallback callback,
                             gpointer user_data)
{
  GTask *task = g_task_new (conn, cancellable, callback, user_data);
  g_task_set_source_tag (task, hz_background_request_async);
  Request *r = g_new0 (Request, 1);
  r->conn = g_object_ref (conn);
  g_task_set_task_data (task, r, (GDestroyNotify) request_free);

  g_autofree char *token = g_strdup_printf ("hanzo%u", g_random_int ());
  g_autofree char *sender = g_strdup (g_dbus_connection_get_unique_name (conn) + 1);
  g_strdelimit (sender, ".", '_');
  g_autofree char *handle = g_strdup_printf (PORTAL_PATH "/request/%s/%s", sender, token);
  /* the signal's reference to the task is dropped by whoever ends the subscription */
  r->sub_id = g_dbus_connection_signal_subscribe (conn, PORTAL_NAME,
                                                  "org.freedesktop.portal.Request", "Response",
                                                  handle, NULL, G_DBUS_SIGNAL_FLAGS_NONE,
                                                  on_response, g_object_ref (task), NULL);
  if (cancellable)
    {
      r->cancel_source = g_cancellable_source_new (cancellable);
      g_source_set_callback (r->cancel_source, G_SOURCE_FUNC (on_cancelled), task, NULL);
      g_source_attach (r->cancel_source, g_main_context_get_thread_default ());
    }
  GVariantBuilder opts;
  g_variant_builder_init (&opts, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&opts, "{sv}", "handle_token", g_variant_new_string (token));
  g_variant_builder_add (&opts, "{sv}", "reason", g_variant_new_string (reason ? reason : ""));
  g_variant_builder_add (&opts, "{sv}", "autostart", g_variant_new_boolean (autostart));
  if (commandline && commandline[0])
    g_variant_builder_add (&opts, "{sv}", "commandline", g_variant_new_strv (commandline, -1));
  g_variant_builder_add (&opts, "{sv}", "dbus-activatable", g_variant_new_boolean (FALSE));
  g_dbus_connection_call (conn, PORTAL_NAME, PORTAL_PATH, "org.freedesktop.portal.Background",
                          "RequestBackground", g_variant_new ("(sa{sv})", "", &opts),
                          G_VARIANT_TYPE ("(o)"), G_DBUS_CALL_FLAGS_NONE, -1, cancellable,
                          call_done, task);
}

gboolean
hz_background_request_finish (GAsyncResult *result, gboolean *autostart_out, GError **error)
{
  g_return_val_if_fail (G_IS_TASK (result), FALSE);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == hz_background_request_async, FALSE);
  if (autostart_out)
    *autostart_out = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (result), "autostart"));
  return g_task_propagate_boolean (G_TASK (result), error);
}
