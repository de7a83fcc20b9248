/* hz-window-layout.c — HzWindow's frame (see hz-window-private.h): the sidebar and the
 * chat side by side, or one at a time on a narrow window with a back button
 * (AdwNavigationSplitView with libadwaita 1.4, else AdwLeaflet); the short notices
 * (toasts) and error dialogs. The bottom of the window's files: it calls none of them.
 */
#include "hz-window-private.h"

#include <glib/gi18n.h>


#if !ADW_CHECK_VERSION (1, 4, 0)
static void
on_back_clicked (GtkButton *button, HzWindow *self)
{
  adw_leaflet_navigate (ADW_LEAFLET (self->layout), ADW_NAVIGATION_DIRECTION_BACK);
}
#endif

/* Sidebar and chat side by side; on a narrow window one at a time, with a back button.
 * `folded_changed` is called (swapped: with `self`) when that changes. */
void
hz_window_setup_layout (HzWindow *self, GCallback folded_changed)
{
#if ADW_CHECK_VERSION (1, 4, 0)
  AdwNavigationSplitView *split = ADW_NAVIGATION_SPLIT_VIEW (adw_navigation_split_view_new ());
  AdwBreakpoint *bp = adw_breakpoint_new (adw_breakpoint_condition_parse ("max-width: 600sp"));
  GValue collapsed = G_VALUE_INIT;

  adw_navigation_split_view_set_sidebar (split,
    adw_navigation_page_new (self->sidebar_pane, _("Conversations")));
  adw_navigation_split_view_set_content (split,
    adw_navigation_page_new (self->chat_pane, _("Chat")));
  /* Header bars in a split view show the right window buttons and back button by
   * themselves. */
  adw_header_bar_set_show_end_title_buttons (ADW_HEADER_BAR (self->sidebar_header), TRUE);
  adw_header_bar_set_show_start_title_buttons (ADW_HEADER_BAR (self->chat_header), TRUE);
  g_value_init (&collapsed, G_TYPE_BOOLEAN);
  g_value_set_boolean (&collapsed, TRUE);
  adw_breakpoint_add_setter (bp, G_OBJECT (split), "collapsed", &collapsed);
  adw_application_window_add_breakpoint (ADW_APPLICATION_WINDOW (self), bp);
  g_signal_connect_swapped (split, "notify::collapsed", folded_changed, self);
  self->layout = GTK_WIDGET (split);
#else
  AdwLeaflet *leaflet = ADW_LEAFLET (adw_leaflet_new ());
  GtkWidget *separator = gtk_separator_new (GTK_ORIENTATION_VERTICAL);

  adw_leaflet_set_can_navigate_back (leaflet, TRUE);
  adw_leaflet_set_transition_type (leaflet, ADW_LEAFLET_TRANSITION_TYPE_SLIDE);
  adw_leaflet_append (leaflet, self->sidebar_pane);
  adw_leaflet_page_set_navigatable (adw_leaflet_append (leaflet, separator), FALSE);
  adw_leaflet_append (leaflet, self->chat_pane);
  adw_leaflet_set_visible_child (leaflet, self->chat_pane);
  g_object_bind_property (leaflet, "folded", self->back_button, "visible", G_BINDING_SYNC_CREATE);
  g_object_bind_property (leaflet, "folded", self->sidebar_header, "show-end-title-buttons",
                          G_BINDING_SYNC_CREATE);
  g_object_bind_property (leaflet, "folded", self->chat_header, "show-start-title-buttons",
                          G_BINDING_SYNC_CREATE);
  g_signal_connect (self->back_button, "clicked", G_CALLBACK (on_back_clicked), self);
  g_signal_connect_swapped (leaflet, "notify::folded", folded_changed, self);
  self->layout = GTK_WIDGET (leaflet);
#endif
  adw_toast_overlay_set_child (self->toast_overlay, self->layout);
}

gboolean
hz_window_folded (HzWindow *self)
{
#if ADW_CHECK_VERSION (1, 4, 0)
  return adw_navigation_split_view_get_collapsed (ADW_NAVIGATION_SPLIT_VIEW (self->layout));
#else
  return adw_leaflet_get_folded (ADW_LEAFLET (self->layout));
#endif
}

void
hz_window_show_chat_pane (HzWindow *self)
{
#if ADW_CHECK_VERSION (1, 4, 0)
  adw_navigation_split_view_set_show_content (ADW_NAVIGATION_SPLIT_VIEW (self->layout), TRUE);
#else
  adw_leaflet_set_visible_child (ADW_LEAFLET (self->layout), self->chat_pane);
#endif
}

void
hz_window_show_sidebar_pane (HzWindow *self)
{
#if ADW_CHECK_VERSION (1, 4, 0)
  adw_navigation_split_view_set_show_content (ADW_NAVIGATION_SPLIT_VIEW (self->layout), FALSE);
#else
  adw_leaflet_set_visible_child (ADW_LEAFLET (self->layout), self->sidebar_pane);
#endif
}

/* ------------------------------------------------------------------ telling the user */

static void
on_notice_dismissed (AdwToast *toast, HzWindow *self)
{
  if (self->info_toast == toast)
    g_clear_weak_pointer (&self->info_toast);
}

/* While a notice is on screen, its text is replaced rather than queueing another
 * (libadwaita shows one toast at a time: an Undo toast would wait behind a queue of
 * notices). */
void
hz_window_notify (HzWindow *self, const char *text)
{
  if (self->info_toast != NULL)
    {
      adw_toast_set_title (self->info_toast, text);
      return;
    }
  AdwToast *t = adw_toast_new (text);
  adw_toast_set_timeout (t, 2);
  g_set_weak_pointer (&self->info_toast, t);
  g_signal_connect_object (t, "dismissed", G_CALLBACK (on_notice_dismissed), self, 0);
  adw_toast_overlay_add_toast (self->toast_overlay, t);
}

void
hz_window_report_store_error (HzWindow *self, const GError *error)
{
  g_autofree char *msg = g_strdup_printf (_("Could not save: %s"), error->message);
  g_warning ("store: %s", error->message);
  hz_window_notify (self, msg);
}

void
hz_window_alert (HzWindow *self, const char *heading, const char *body)
{
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  GtkWidget *dialog = adw_message_dialog_new (GTK_WINDOW (self), heading, body);
  adw_message_dialog_add_response (ADW_MESSAGE_DIALOG (dialog), "close", _("_Close"));
  adw_message_dialog_set_default_response (ADW_MESSAGE_DIALOG (dialog), "close");
  adw_message_dialog_set_close_response (ADW_MESSAGE_DIALOG (dialog), "close");
  G_GNUC_END_IGNORE_DEPRECATIONS
  gtk_window_present (GTK_WINDOW (dialog));
}
