/* test-ui-atspi.c — what a screen reader is told of a finished reply: the real app under
 * Xvfb with ../shared/models/stories260K.gguf and GTK's AT-SPI backend on the session's
 * accessibility bus, and a listener on that bus (GDBus, receiving the events Orca's
 * libatspi receives). A message is sent from the composer (which keeps the keyboard
 * focus); when the reply ends the app must emit the reply as plain text (its Markdown
 * rendered): with GTK 4.14 or later an Announcement event; with older GTK (no
 * announcements, and no events for widgets an assistive technology has not looked at yet,
 * such as a new reply's row) an accessible-description change of the focused composer.
 * Sending the next message clears it. Skips when there is no accessibility bus
 * (org.a11y.Bus, from at-spi2-core) or no model. Screenshot: atspi-reply.
 */
#include <hanzo-store.h>

#include "hz-markdown.h"
#include "hz-message-item.h"
#include "ui-test-util.h"

typedef struct {
  GPtrArray *said;   /* char*: the descriptions and announcements heard */
} Heard;

static Heard heard;

static void
on_event (GDBusConnection *c, const char *sender, const char *path, const char *iface,
          const char *member, GVariant *params, gpointer data)
{
  const char *kind = NULL;
  gint32 detail1 = 0, detail2 = 0;
  g_autoptr(GVariant) value = NULL;

  if (strcmp (member, "Announcement") == 0 &&
      g_variant_is_of_type (params, G_VARIANT_TYPE ("(siiva{sv})")))
    {
      g_variant_get (params, "(&siiv@a{sv})", &kind, &detail1, &detail2, &value, NULL);
      if (g_variant_is_of_type (value, G_VARIANT_TYPE_STRING))
        g_ptr_array_add (heard.said, g_variant_dup_string (value, NULL));
      return;
    }
  if (strcmp (member, "PropertyChange") != 0 ||
      !g_variant_is_of_type (params, G_VARIANT_TYPE ("(siiva{sv})")))
    return;
  g_variant_get (params, "(&siiv@a{sv})", &kind, &detail1, &detail2, &value, NULL);
  if (strcmp (kind, "accessible-description") == 0 &&
      g_variant_is_of_type (value, G_VARIANT_TYPE_STRING))
    g_ptr_array_add (heard.said, g_variant_dup_string (value, NULL));
}

static gboolean
was_said (gpointer text)
{
  for (guint i = 0; i < heard.said->len; i++)
    if (strcmp (heard.said->pdata[i], text) == 0)
      return TRUE;
  return FALSE;
}

static gboolean
reply_done (gpointer window)
{
  return !hz_window_is_generating (window) && hz_window_is_model_ready (window);
}

static void
send (HzWindow *window, const char *text)
{
  GtkWidget *composer = GTK_WIDGET (hz_window_get_composer (window));
  gtk_widget_grab_focus (composer);
  gtk_text_buffer_set_text (gtk_text_view_get_buffer (GTK_TEXT_VIEW (composer)), text, -1);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.send", NULL));
}

static void
script_atspi (HzApplication *app, HzWindow *window, gpointer data)
{
  g_assert_true (hz_ui_wait_for (reply_done, window, 60));
  send (window, "Tell me a story");
  hz_ui_spin (0.2);
  g_assert_true (hz_ui_wait_for (reply_done, window, 120));
  GListModel *messages = hz_window_get_messages (window);
  g_autoptr(HzMessageItem) reply = g_list_model_get_item (messages, 1);
  g_autoptr(GPtrArray) blocks = hz_markdown_parse (hz_message_item_get_text (reply), -1);
  g_autofree char *plain = hz_md_blocks_to_plain (blocks);
  g_assert_cmpstr (plain, !=, "");
  gboolean ok = hz_ui_wait_for (was_said, plain, 20);
  g_test_message ("reply: %s; %u descriptions/announcements heard, the reply among them: %d",
                  plain, heard.said->len, ok);
  g_assert_true (ok);
  g_autofree char *shot = hz_ui_screenshot (GTK_WIDGET (window), "atspi-reply");

#if !GTK_CHECK_VERSION (4, 14, 0)
  /* the next message clears the composer's description */
  g_ptr_array_set_size (heard.said, 0);
  send (window, "And then?");
  g_assert_true (hz_ui_wait_for (was_said, (gpointer) "", 20));
  g_assert_true (hz_ui_wait_for (reply_done, window, 120));
#endif
}

static void
test_reply_spoken (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *model = hz_test_shared_path ("models/stories260K.gguf");
  if (model == NULL)
    return;
  g_autoptr(GDBusConnection) session = g_bus_get_sync (G_BUS_TYPE_SESSION, NULL, &error);
  g_autoptr(GVariant) reply = NULL;
  if (session != NULL)
    reply = g_dbus_connection_call_sync (session, "org.a11y.Bus", "/org/a11y/bus",
                                         "org.a11y.Bus", "GetAddress", NULL,
                                         G_VARIANT_TYPE ("(s)"), G_DBUS_CALL_FLAGS_NONE, 10000,
                                         NULL, &error);
  if (reply == NULL)
    {
      g_autofree char *why = g_strdup_printf ("no accessibility bus (org.a11y.Bus): %s",
                                              error ? error->message : "no session bus");
      g_test_skip (why);
      return;
    }
  /* the bus launcher can hand out the address of a bus that is still starting or has just
   * gone (seen once on a loaded machine: "Could not connect: No such file or directory"):
   * ask again a few times before giving up */
  g_autoptr(GDBusConnection) a11y = NULL;
  for (int attempt = 0; a11y == NULL; attempt++)
    {
      const char *address = NULL;
      g_variant_get (reply, "(&s)", &address);
      g_clear_error (&error);
      a11y = g_dbus_connection_new_for_address_sync (
        address, G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
                 G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION, NULL, NULL, &error);
      if (a11y != NULL)
        break;
      if (attempt == 4)
        {
          g_autofree char *why = g_strdup_printf ("accessibility bus not reachable at %s: %s",
                                                  address, error->message);
          g_test_skip (why);
          return;
        }
      g_usleep (500 * 1000);
      g_clear_pointer (&reply, g_variant_unref);
      g_clear_error (&error);
      reply = g_dbus_connection_call_sync (session, "org.a11y.Bus", "/org/a11y/bus",
                                           "org.a11y.Bus", "GetAddress", NULL,
                                           G_VARIANT_TYPE ("(s)"), G_DBUS_CALL_FLAGS_NONE, 10000,
                                           NULL, &error);
      g_assert_no_error (error);
    }
  heard.said = g_ptr_array_new_with_free_func (g_free);
  guint sub = g_dbus_connection_signal_subscribe (a11y, NULL, "org.a11y.atspi.Event.Object",
                                                  NULL, NULL, NULL, G_DBUS_SIGNAL_FLAGS_NONE,
                                                  on_event, NULL, NULL);
  g_autoptr(GSettings) settings = g_settings_new ("ai.hanzo.Desktop");
  g_settings_set_int (settings, "max-tokens", 24);
  g_settings_sync ();
  g_autofree char *path = g_canonicalize_filename (model, NULL);
  const char *args[] = { "--model", path, NULL };
  hz_ui_run_app (args, script_atspi, NULL);
  g_dbus_connection_signal_unsubscribe (a11y, sub);
  g_clear_pointer (&heard.said, g_ptr_array_unref);
}

int
main (int argc, char *argv[])
{
  hz_ui_test_init ();
  /* GTK's AT-SPI backend (hz_ui_test_init() turns accessibility off for the other tests) */
  g_setenv ("GTK_A11Y", "atspi", TRUE);
  g_unsetenv ("NO_AT_BRIDGE");
  gtk_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ui/atspi/reply-spoken", test_reply_spoken);
  int ret = g_test_run ();
  hz_ui_test_cleanup ();
  return ret;
}
