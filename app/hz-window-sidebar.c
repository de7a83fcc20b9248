/* hz-window-sidebar.c — HzWindow's conversation list: selection, search across all chats
 * (FTS5 in a worker thread, hz_chat_session_search_async()), rename, pin, delete with an
 * undo toast, export as Markdown or JSON, and the per-conversation system prompt. The
 * list and its store writes are the session's (hz-chat-session.h); this file shows them
 * and asks. The "conv" action group acts on the shown conversation (see
 * hz-window-private.h).
 */
#include "hz-window-private.h"

#include <glib/gi18n.h>

#include "hz-export.h"

#define SEARCH_LIMIT 50

/* ------------------------------------------------------------------ the list */

void
hz_window_select_conversation_silently (HzWindow *self, guint position)
{
  self->syncing_selection = TRUE;
  gtk_single_selection_set_selected (self->conversation_selection, position);
  self->syncing_selection = FALSE;
}

void
hz_window_sync_selection (HzWindow *self)
{
  guint position = GTK_INVALID_LIST_POSITION;
  hz_chat_session_find_conversation (self->session,
                                     hz_chat_session_get_conversation_id (self->session),
                                     &position);
  hz_window_select_conversation_silently (self, position);
}

/* The session changes its list (a new or bumped conversation, a deletion, the list read
 * again): the selection model follows it between these two handlers, then the shown
 * conversation is selected, without opening anything. */
static void
on_conversations_changing (GListModel *list, guint position, guint removed, guint added,
                           HzWindow *self)
{
  self->syncing_selection = TRUE;
}

static void
on_conversations_changed (GListModel *list, guint position, guint removed, guint added,
                          HzWindow *self)
{
  self->syncing_selection = FALSE;
  hz_window_sync_selection (self);
}

static void
on_conversation_selected (GtkSingleSelection *selection, GParamSpec *pspec, HzWindow *self)
{
  if (self->syncing_selection)
    return;
  HzConversationItem *item = gtk_single_selection_get_selected_item (selection);
  if (item == NULL)
    return;  /* unselected by "New Chat": already handled */
  gint64 id = hz_conversation_item_get_id (item);
  if (id == hz_chat_session_get_conversation_id (self->session))
    ;
  else if (self->select_blocking)
    hz_chat_session_show (self->session, id);
  else
    hz_chat_session_open (self->session, id, 0);
  hz_window_show_chat_pane (self);
}

/* Activating (click, Enter) the selected row shows it also when already selected
 * (narrow windows show one pane at a time). */
static void
on_conversation_activated (GtkListView *list, guint position, HzWindow *self)
{
  hz_window_show_chat_pane (self);
}

void
hz_window_select_conversation_now (HzWindow *self, guint position)
{
  self->select_blocking = TRUE;
  gtk_single_selection_set_selected (self->conversation_selection, position);
  self->select_blocking = FALSE;
}

void
hz_window_start_new_chat (HzWindow *self)
{
  hz_window_select_conversation_silently (self, GTK_INVALID_LIST_POSITION);
  hz_chat_session_show (self->session, 0);
  hz_window_show_chat_pane (self);
  gtk_widget_grab_focus (GTK_WIDGET (self->composer));
}

/* ------------------------------------------------------------------ rows */

typedef struct {
  GtkLabel  *title;
  GtkLabel  *snippet;
  GtkWidget *pin;
} RowWidgets;

static void
row_sync (HzConversationItem *item, GParamSpec *pspec, GtkListItem *li)
{
  RowWidgets *w = g_object_get_data (G_OBJECT (li), "hz-row");
  const char *snippet = hz_conversation_item_get_snippet (item);

  gtk_label_set_text (w->title, hz_conversation_item_get_title (item));
  gtk_widget_set_visible (w->pin, hz_conversation_item_get_pinned (item));
  gtk_label_set_markup (w->snippet, snippet ? snippet : "");
  gtk_widget_set_visible (GTK_WIDGET (w->snippet), snippet != NULL);
}

static void
row_setup (GtkSignalListItemFactory *f, GtkListItem *li, gpointer data)
{
  RowWidgets *w = g_new0 (RowWidgets, 1);
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
  GtkWidget *line = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);

  w->title = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_xalign (w->title, 0);
  gtk_label_set_ellipsize (w->title, PANGO_ELLIPSIZE_END);
  gtk_widget_set_hexpand (GTK_WIDGET (w->title), TRUE);
  w->pin = gtk_image_new_from_icon_name ("view-pin-symbolic");
  gtk_widget_set_tooltip_text (w->pin, _("Pinned"));
  gtk_accessible_update_property (GTK_ACCESSIBLE (w->pin), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Pinned"), -1);
  w->snippet = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_xalign (w->snippet, 0);
  gtk_label_set_wrap (w->snippet, TRUE);
  gtk_label_set_wrap_mode (w->snippet, PANGO_WRAP_WORD_CHAR);
  gtk_label_set_lines (w->snippet, 2);
  gtk_label_set_ellipsize (w->snippet, PANGO_ELLIPSIZE_END);
  gtk_widget_add_css_class (GTK_WIDGET (w->snippet), "caption");
  gtk_widget_add_css_class (GTK_WIDGET (w->snippet), "dim-label");

  gtk_box_append (GTK_BOX (line), GTK_WIDGET (w->title));
  gtk_box_append (GTK_BOX (line), w->pin);
  gtk_box_append (GTK_BOX (box), line);
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (w->snippet));
  gtk_widget_set_margin_top (box, 6);
  gtk_widget_set_margin_bottom (box, 6);
  gtk_list_item_set_child (li, box);
  g_object_set_data_full (G_OBJECT (li), "hz-row", w, g_free);
}

static void
row_bind (GtkSignalListItemFactory *f, GtkListItem *li, gpointer data)
{
  HzConversationItem *item = gtk_list_item_get_item (li);
  gulong id = g_signal_connect (item, "notify", G_CALLBACK (row_sync), li);
  g_object_set_data (G_OBJECT (li), "hz-notify", GSIZE_TO_POINTER (id));
  row_sync (item, NULL, li);
}

static void
row_unbind (GtkSignalListItemFactory *f, GtkListItem *li, gpointer data)
{
  gulong id = GPOINTER_TO_SIZE (g_object_get_data (G_OBJECT (li), "hz-notify"));
  if (id != 0)
    g_signal_handler_disconnect (gtk_list_item_get_item (li), id);
  g_object_set_data (G_OBJECT (li), "hz-notify", NULL);
}

static GtkListItemFactory *
row_factory_new (void)
{
  GtkListItemFactory *factory = gtk_signal_list_item_factory_new ();
  g_signal_connect (factory, "setup", G_CALLBACK (row_setup), NULL);
  g_signal_connect (factory, "bind", G_CALLBACK (row_bind), NULL);
  g_signal_connect (factory, "unbind", G_CALLBACK (row_unbind), NULL);
  return factory;
}

/* ------------------------------------------------------------------ search */

/* FTS5 snippet (matches between U+0002 and U+0003) as Pango markup on one line. */
static char *
snippet_markup (const char *snippet)
{
  GString *out = g_string_new (NULL);
  gboolean bold = FALSE;

  for (const char *p = snippet; *p; p++)
    switch (*p)
      {
      case '\x02':
        if (!bold)
          g_string_append (out, "<b>");
        bold = TRUE;
        break;
      case '\x03':
        if (bold)
          g_string_append (out, "</b>");
        bold = FALSE;
        break;
      case '\n':
      case '\r':
      case '\t':
        g_string_append_c (out, ' ');
        break;
      case '&': g_string_append (out, "&amp;"); break;
      case '<': g_string_append (out, "&lt;"); break;
      case '>': g_string_append (out, "&gt;"); break;
      default:
        if ((guchar) *p >= 0x20)
          g_string_append_c (out, *p);
        break;
      }
  if (bold)
    g_string_append (out, "</b>");
  return g_string_free (out, FALSE);
}

typedef struct {
  HzWindow *self;
  guint     serial;
} SearchJob;

static void
search_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  SearchJob *job = user_data;
  HzWindow *self = job->self;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) hits = hz_chat_session_search_finish (HZ_CHAT_SESSION (source), result,
                                                             &error);
  g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func (g_object_unref);

  if (self->search_results == NULL || job->serial != self->search_serial)
    goto out;  /* window closed, or a newer search was started */
  if (hits == NULL)
    {
      g_warning ("search: %s", error->message);
      gtk_stack_set_visible_child_name (self->sidebar_stack, "no-results");
      goto out;
    }
  for (guint i = 0; i < hits->len; i++)
    {
      HzSearchHit *hit = hits->pdata[i];
      HzConversationItem *conv = hz_chat_session_find_conversation (self->session,
                                                                    hit->conversation_id, NULL);
      if (conv == NULL)
        continue;  /* being deleted */
      g_autofree char *markup = snippet_markup (hit->snippet);
      HzConversationItem *item = hz_conversation_item_new (hit->conversation_id,
                                                           hz_conversation_item_get_title (conv));
      hz_conversation_item_set_match (item, markup, hit->message_id);
      g_ptr_array_add (items, item);
    }
  g_list_store_splice (self->search_results, 0,
                       g_list_model_get_n_items (G_LIST_MODEL (self->search_results)),
                       items->pdata, items->len);
  gtk_stack_set_visible_child_name (self->sidebar_stack, items->len ? "results" : "no-results");
out:
  g_object_unref (self);
  g_free (job);
}

static void
start_search (HzWindow *self, const char *query)
{
  self->search_serial++;
  if (query == NULL || *query == '\0' || hz_app_context_get_store (self->ctx) == NULL)
    {
      g_list_store_remove_all (self->search_results);
      gtk_stack_set_visible_child_name (self->sidebar_stack, "conversations");
      return;
    }
  SearchJob *job = g_new0 (SearchJob, 1);
  job->self = g_object_ref (self);
  job->serial = self->search_serial;
  hz_chat_session_search_async (self->session, query, SEARCH_LIMIT, NULL, search_done, job);
}

static void
on_search_changed (GtkSearchEntry *entry, HzWindow *self)
{
  start_search (self, gtk_editable_get_text (GTK_EDITABLE (entry)));
}

static void
on_search_mode (GtkSearchBar *bar, GParamSpec *pspec, HzWindow *self)
{
  if (!gtk_search_bar_get_search_mode (bar))
    gtk_editable_set_text (GTK_EDITABLE (self->search_entry), "");
}

static void
on_search_result_activated (GtkListView *list, guint position, HzWindow *self)
{
  g_autoptr(HzConversationItem) hit = g_list_model_get_item (G_LIST_MODEL (self->search_results),
                                                             position);
  guint conv_position;

  if (hit == NULL ||
      hz_chat_session_find_conversation (self->session, hz_conversation_item_get_id (hit),
                                         &conv_position) == NULL)
    return;
  hz_window_select_conversation_silently (self, conv_position);
  hz_chat_session_open (self->session, hz_conversation_item_get_id (hit),
                        hz_conversation_item_get_message_id (hit));
  hz_window_show_chat_pane (self);
}

static void
action_search (GtkWidget *widget, const char *name, GVariant *param)
{
  HzWindow *self = (HzWindow *) widget;

  gtk_search_bar_set_search_mode (self->search_bar, TRUE);
  hz_window_show_sidebar_pane (self);
  gtk_widget_grab_focus (GTK_WIDGET (self->search_entry));
}

/* ------------------------------------------------------------------ text dialogs */

typedef void (*TextDialogDone) (HzWindow *self, const char *text);

static char *
dialog_text (GtkWidget *child)
{
  if (GTK_IS_EDITABLE (child))
    return g_strdup (gtk_editable_get_text (GTK_EDITABLE (child)));
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (
    GTK_TEXT_VIEW (gtk_scrolled_window_get_child (GTK_SCROLLED_WINDOW (child))));
  GtkTextIter start, end;
  gtk_text_buffer_get_bounds (buffer, &start, &end);
  return gtk_text_buffer_get_text (buffer, &start, &end, FALSE);
}

G_GNUC_BEGIN_IGNORE_DEPRECATIONS
static void
on_text_dialog_response (AdwMessageDialog *dialog, const char *response, HzWindow *self)
{
  TextDialogDone done = g_object_get_data (G_OBJECT (dialog), "hz-done");

  if (g_strcmp0 (response, "apply") != 0)
    return;
  g_autofree char *text = dialog_text (adw_message_dialog_get_extra_child (dialog));
  g_strstrip (text);
  done (self, text);
}

/* Ask for a line (multiline FALSE: an entry) or a text (a text view), starting with
 * `initial`; `done` gets the stripped text when the user applies it. */
static void
ask_text (HzWindow *self, const char *heading, const char *body, const char *initial,
          gboolean multiline, const char *apply_label, TextDialogDone done)
{
  GtkWidget *dialog = adw_message_dialog_new (GTK_WINDOW (self), heading, body);
  GtkWidget *child;

  if (multiline)
    {
      GtkWidget *view = gtk_text_view_new ();
      gtk_text_view_set_wrap_mode (GTK_TEXT_VIEW (view), GTK_WRAP_WORD_CHAR);
      gtk_text_view_set_top_margin (GTK_TEXT_VIEW (view), 6);
      gtk_text_view_set_bottom_margin (GTK_TEXT_VIEW (view), 6);
      gtk_text_view_set_left_margin (GTK_TEXT_VIEW (view), 6);
      gtk_text_view_set_right_margin (GTK_TEXT_VIEW (view), 6);
      gtk_text_buffer_set_text (gtk_text_view_get_buffer (GTK_TEXT_VIEW (view)),
                                initial ? initial : "", -1);
      gtk_accessible_update_property (GTK_ACCESSIBLE (view), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                      heading, -1);
      child = gtk_scrolled_window_new ();
      gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (child), view);
      gtk_scrolled_window_set_min_content_height (GTK_SCROLLED_WINDOW (child), 120);
      gtk_widget_add_css_class (child, "card");
    }
  else
    {
      child = gtk_entry_new ();
      gtk_editable_set_text (GTK_EDITABLE (child), initial ? initial : "");
      gtk_entry_set_activates_default (GTK_ENTRY (child), TRUE);
      gtk_accessible_update_property (GTK_ACCESSIBLE (child), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                      heading, -1);
    }
  adw_message_dialog_set_extra_child (ADW_MESSAGE_DIALOG (dialog), child);
  adw_message_dialog_add_responses (ADW_MESSAGE_DIALOG (dialog),
                                    "cancel", _("_Cancel"), "apply", apply_label, NULL);
  adw_message_dialog_set_response_appearance (ADW_MESSAGE_DIALOG (dialog), "apply",
                                              ADW_RESPONSE_SUGGESTED);
  adw_message_dialog_set_default_response (ADW_MESSAGE_DIALOG (dialog), "apply");
  adw_message_dialog_set_close_response (ADW_MESSAGE_DIALOG (dialog), "cancel");
  g_object_set_data (G_OBJECT (dialog), "hz-done", done);
  g_signal_connect_object (dialog, "response", G_CALLBACK (on_text_dialog_response), self, 0);
  gtk_window_present (GTK_WINDOW (dialog));
  gtk_widget_grab_focus (multiline ? gtk_scrolled_window_get_child (GTK_SCROLLED_WINDOW (child))
                                   : child);
}
G_GNUC_END_IGNORE_DEPRECATIONS

/* ------------------------------------------------------------------ rename, prompt, pin */

static HzConversationItem *
shown_conversation (HzWindow *self)
{
  return hz_chat_session_find_conversation (self->session,
                                            hz_chat_session_get_conversation_id (self->session),
                                            NULL);
}

static void
rename_done (HzWindow *self, const char *title)
{
  hz_chat_session_rename (self->session, hz_chat_session_get_conversation_id (self->session),
                          title);
}

static void
action_rename (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  HzWindow *self = user_data;
  HzConversationItem *item = shown_conversation (self);

  if (item != NULL)
    ask_text (self, _("Rename Conversation"), NULL, hz_conversation_item_get_title (item),
              FALSE, _("_Rename"), rename_done);
}

static void
system_prompt_done (HzWindow *self, const char *prompt)
{
  hz_chat_session_set_system_prompt (self->session, prompt);
}

static void
action_system_prompt (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  HzWindow *self = user_data;

  ask_text (self, _("System Prompt"),
            _("Instructions the model follows throughout this conversation, such as its "
              "role, tone or the language to answer in. Leave empty for the model's default."),
            hz_chat_session_get_system_prompt (self->session), TRUE, _("_Save"),
            system_prompt_done);
}

static void
action_pin (GSimpleAction *action, GVariant *state, gpointer user_data)
{
  HzWindow *self = user_data;

  if (shown_conversation (self) != NULL &&
      hz_chat_session_set_pinned (self->session,
                                  hz_chat_session_get_conversation_id (self->session),
                                  g_variant_get_boolean (state)))
    g_simple_action_set_state (action, state);
}

/* ------------------------------------------------------------------ delete with undo */

typedef struct {
  HzChatSession *session;
  guint          handle;   /* the session's deletion */
} DeleteToast;

static void
delete_toast_free (gpointer data, GClosure *closure)
{
  DeleteToast *dt = data;
  g_object_unref (dt->session);
  g_free (dt);
}

/* The toast is gone (timed out, closed, or its Undo button was pressed; also when the
 * window closes, after the session has deleted it already). */
static void
on_delete_toast_dismissed (AdwToast *toast, DeleteToast *dt)
{
  hz_chat_session_commit_delete (dt->session, dt->handle);
}

static void
action_delete (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  HzWindow *self = user_data;
  HzConversationItem *item = shown_conversation (self);

  if (item == NULL || hz_chat_session_is_generating (self->session))
    return;
  g_autofree char *title = g_strdup_printf (_("“%s” deleted"), hz_conversation_item_get_title (item));
  gint64 id = hz_conversation_item_get_id (item);
  guint handle = hz_chat_session_delete (self->session, id);
  if (handle == 0)
    return;
  hz_window_start_new_chat (self);

  DeleteToast *dt = g_new0 (DeleteToast, 1);
  dt->session = g_object_ref (self->session);
  dt->handle = handle;
  AdwToast *toast = adw_toast_new (title);
  adw_toast_set_button_label (toast, _("_Undo"));
  adw_toast_set_action_name (toast, "win.undo-delete");
  adw_toast_set_action_target_value (toast, g_variant_new_int64 (id));
  g_signal_connect_data (toast, "dismissed", G_CALLBACK (on_delete_toast_dismissed), dt,
                         delete_toast_free, 0);
  adw_toast_overlay_add_toast (self->toast_overlay, toast);
}

/* The toast's Undo button: put the conversation back (the toast closes itself). */
static void
action_undo_delete (GtkWidget *widget, const char *name, GVariant *param)
{
  HzWindow *self = (HzWindow *) widget;
  guint position;

  if (hz_chat_session_undo_delete (self->session, g_variant_get_int64 (param), &position))
    hz_window_select_conversation_now (self, position);
}

/* ------------------------------------------------------------------ export */

typedef struct {
  HzWindow *self;
  GFile    *file;
} ExportJob;

static void
export_written (GObject *source, GAsyncResult *result, gpointer user_data)
{
  ExportJob *job = user_data;
  g_autoptr(GError) error = NULL;

  if (!g_file_replace_contents_finish (G_FILE (source), result, NULL, &error))
    hz_window_alert (job->self, _("Could Not Export"), error->message);
  else
    {
      g_autofree char *name = g_file_get_basename (job->file);
      g_autofree char *msg = g_strdup_printf (_("Exported to %s"), name);
      hz_window_notify (job->self, msg);
    }
  g_object_unref (job->self);
  g_object_unref (job->file);
  g_free (job);
}

void
hz_window_export (HzWindow *self, HzExportFormat format, GFile *file)
{
  HzConversationItem *conv = shown_conversation (self);
  g_autoptr(GBytes) bytes = hz_export_conversation (
    format, conv ? hz_conversation_item_get_title (conv) : NULL,
    hz_chat_session_get_system_prompt (self->session),
    hz_engine_worker_get_model_path (self->worker), G_LIST_MODEL (self->messages));
  ExportJob *job = g_new0 (ExportJob, 1);
  job->self = g_object_ref (self);
  job->file = g_object_ref (file);
  g_file_replace_contents_bytes_async (file, bytes, NULL, FALSE, G_FILE_CREATE_REPLACE_DESTINATION,
                                       NULL, export_written, job);
}

#if GTK_CHECK_VERSION (4, 10, 0)
static void
on_export_dialog_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  HzWindow *self = user_data;
  g_autoptr(GFile) file = gtk_file_dialog_save_finish (GTK_FILE_DIALOG (source), result, NULL);
  HzExportFormat format = GPOINTER_TO_INT (g_object_get_data (source, "hz-format"));

  if (file != NULL)
    hz_window_export (self, format, file);
  g_object_unref (self);
}
#else
static void
on_export_chooser_response (GtkNativeDialog *dialog, int response, gpointer user_data)
{
  HzWindow *self = user_data;
  HzExportFormat format = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (dialog), "hz-format"));

  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr(GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      if (file != NULL)
        hz_window_export (self, format, file);
    }
  g_object_unref (dialog);
}
#endif

static void
action_export (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  HzWindow *self = user_data;
  HzExportFormat format;
  HzConversationItem *conv = shown_conversation (self);

  if (conv == NULL || !hz_export_format_from_string (g_variant_get_string (param, NULL), &format))
    return;
  g_autofree char *name = hz_export_file_name (format, hz_conversation_item_get_title (conv));
  g_autoptr(GtkFileFilter) filter = gtk_file_filter_new ();
  gtk_file_filter_set_name (filter, format == HZ_EXPORT_JSON ? _("JSON") : _("Markdown"));
  gtk_file_filter_add_suffix (filter, hz_export_format_suffix (format));

#if GTK_CHECK_VERSION (4, 10, 0)
  g_autoptr(GtkFileDialog) dialog = gtk_file_dialog_new ();
  g_autoptr(GListStore) filters = g_list_store_new (GTK_TYPE_FILE_FILTER);
  g_list_store_append (filters, filter);
  gtk_file_dialog_set_title (dialog, _("Export Conversation"));
  gtk_file_dialog_set_initial_name (dialog, name);
  gtk_file_dialog_set_filters (dialog, G_LIST_MODEL (filters));
  g_object_set_data (G_OBJECT (dialog), "hz-format", GINT_TO_POINTER (format));
  gtk_file_dialog_save (dialog, GTK_WINDOW (self), NULL, on_export_dialog_done, g_object_ref (self));
#else
  GtkFileChooserNative *native =
    gtk_file_chooser_native_new (_("Export Conversation"), GTK_WINDOW (self),
                                 GTK_FILE_CHOOSER_ACTION_SAVE, _("_Export"), _("_Cancel"));
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (native), name);
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (native), filter);
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (native), TRUE);
  g_object_set_data (G_OBJECT (native), "hz-format", GINT_TO_POINTER (format));
  g_signal_connect (native, "response", G_CALLBACK (on_export_chooser_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (native));
#endif
}

/* ------------------------------------------------------------------ setup */

void
hz_window_sync_conversation_actions (HzWindow *self)
{
  HzConversationItem *conv = shown_conversation (self);
  gboolean busy = hz_chat_session_is_generating (self->session);
  const char *need_conv[] = { "rename", "pin", "export", "delete" };

  for (guint i = 0; i < G_N_ELEMENTS (need_conv); i++)
    {
      GAction *a = g_action_map_lookup_action (G_ACTION_MAP (self->conv_actions), need_conv[i]);
      g_simple_action_set_enabled (G_SIMPLE_ACTION (a), conv != NULL &&
                                   (!busy || g_strcmp0 (need_conv[i], "delete") != 0));
    }
  GAction *pin = g_action_map_lookup_action (G_ACTION_MAP (self->conv_actions), "pin");
  g_simple_action_set_state (G_SIMPLE_ACTION (pin), g_variant_new_boolean (
    conv != NULL && hz_conversation_item_get_pinned (conv)));
}

void
hz_window_sidebar_class_init (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "win.search", NULL, action_search);
  gtk_widget_class_install_action (widget_class, "win.undo-delete", "x", action_undo_delete);
}

void
hz_window_sidebar_init (HzWindow *self)
{
  static const GActionEntry conv_entries[] = {
    { .name = "rename", .activate = action_rename },
    { .name = "pin", .state = "false", .change_state = action_pin },
    { .name = "system-prompt", .activate = action_system_prompt },
    { .name = "export", .parameter_type = "s", .activate = action_export },
    { .name = "delete", .activate = action_delete },
  };
  GtkListItemFactory *factory;

  factory = row_factory_new ();
  gtk_list_view_set_factory (self->conversation_list, factory);
  g_object_unref (factory);
  g_signal_connect (self->conversation_list, "activate",
                    G_CALLBACK (on_conversation_activated), self);

  self->search_results = g_list_store_new (HZ_TYPE_CONVERSATION_ITEM);
  GtkNoSelection *nosel = gtk_no_selection_new (G_LIST_MODEL (g_object_ref (self->search_results)));
  factory = row_factory_new ();
  gtk_list_view_set_model (self->search_list, GTK_SELECTION_MODEL (nosel));
  gtk_list_view_set_factory (self->search_list, factory);
  g_object_unref (factory);
  g_object_unref (nosel);
  g_signal_connect (self->search_list, "activate", G_CALLBACK (on_search_result_activated), self);

  gtk_search_bar_connect_entry (self->search_bar, GTK_EDITABLE (self->search_entry));
  g_object_bind_property (self->search_button, "active", self->search_bar, "search-mode-enabled",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  g_signal_connect (self->search_entry, "search-changed", G_CALLBACK (on_search_changed), self);
  g_signal_connect (self->search_bar, "notify::search-mode-enabled",
                    G_CALLBACK (on_search_mode), self);

  self->conv_actions = g_simple_action_group_new ();
  g_action_map_add_action_entries (G_ACTION_MAP (self->conv_actions), conv_entries,
                                   G_N_ELEMENTS (conv_entries), self);
  gtk_widget_insert_action_group (GTK_WIDGET (self), "conv", G_ACTION_GROUP (self->conv_actions));
}

void
hz_window_sidebar_attach (HzWindow *self)
{
  GListModel *conversations = hz_chat_session_get_conversations (self->session);

  /* before the selection model's own handler, and after it (see on_conversations_changing) */
  self->conversations_changed[0] = g_signal_connect (conversations, "items-changed",
                                                     G_CALLBACK (on_conversations_changing), self);
  self->conversation_selection = gtk_single_selection_new (g_object_ref (conversations));
  gtk_single_selection_set_autoselect (self->conversation_selection, FALSE);
  gtk_single_selection_set_can_unselect (self->conversation_selection, TRUE);
  gtk_single_selection_set_selected (self->conversation_selection, GTK_INVALID_LIST_POSITION);
  self->conversations_changed[1] = g_signal_connect_after (conversations, "items-changed",
                                                           G_CALLBACK (on_conversations_changed),
                                                           self);
  g_signal_connect (self->conversation_selection, "notify::selected",
                    G_CALLBACK (on_conversation_selected), self);
  gtk_list_view_set_model (self->conversation_list,
                           GTK_SELECTION_MODEL (self->conversation_selection));
  hz_chat_session_load_conversations (self->session);
}

void
hz_window_sidebar_dispose (HzWindow *self)
{
  if (self->session != NULL)
    for (guint i = 0; i < G_N_ELEMENTS (self->conversations_changed); i++)
      g_clear_signal_handler (&self->conversations_changed[i],
                              hz_chat_session_get_conversations (self->session));
  if (self->conv_actions != NULL)
    gtk_widget_insert_action_group (GTK_WIDGET (self), "conv", NULL);
  g_clear_object (&self->conv_actions);
  if (self->conversation_selection != NULL)
    g_signal_handlers_disconnect_by_data (self->conversation_selection, self);
  g_clear_object (&self->conversation_selection);
  g_clear_object (&self->search_results);
}
