/* hz-window-sidebar.c — HzWindow's conversation list: selection, search across all chats
 * (FTS5 in a worker thread on its own store connection), rename, pin, delete with an undo
 * toast, export as Markdown or JSON, and the per-conversation system prompt. The "conv"
 * action group acts on the shown conversation (see hz-window-private.h).
 */
#include "hz-window-private.h"

#include <glib/gi18n.h>

#include "hz-export.h"

#define SEARCH_LIMIT 50

/* ------------------------------------------------------------------ the list */

static guint
n_pinned (HzWindow *self, HzConversationItem *except)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->conversations)), pinned = 0;
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(HzConversationItem) item = g_list_model_get_item (G_LIST_MODEL (self->conversations), i);
      if (item != except && hz_conversation_item_get_pinned (item))
        pinned++;
    }
  return pinned;
}

HzConversationItem *
hz_window_find_conversation (HzWindow *self, gint64 id, guint *position)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->conversations));
  for (guint i = 0; id != 0 && i < n; i++)
    {
      g_autoptr(HzConversationItem) item = g_list_model_get_item (G_LIST_MODEL (self->conversations), i);
      if (hz_conversation_item_get_id (item) == id)
        {
          if (position)
            *position = i;
          return item;  /* the list keeps its reference */
        }
    }
  return NULL;
}

void
hz_window_select_conversation_silently (HzWindow *self, guint position)
{
  self->syncing_selection = TRUE;
  gtk_single_selection_set_selected (self->conversation_selection, position);
  self->syncing_selection = FALSE;
}

static gboolean
is_pending_delete (HzWindow *self, gint64 id);

void
hz_window_load_conversations (HzWindow *self)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) convs = NULL;
  g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func (g_object_unref);
  guint selected = GTK_INVALID_LIST_POSITION;

  if (self->store == NULL)
    return;
  convs = hz_store_list_conversations (self->store, &error);
  if (convs == NULL)
    {
      hz_window_report_store_error (self, error);
      return;
    }
  for (guint i = 0; i < convs->len; i++)
    {
      HzConversation *c = convs->pdata[i];
      if (is_pending_delete (self, c->id))
        continue;
      HzConversationItem *item = hz_conversation_item_new (c->id, c->title);
      hz_conversation_item_set_pinned (item, c->pinned);
      if (c->id == self->conversation_id)
        selected = items->len;
      g_ptr_array_add (items, item);
    }
  self->syncing_selection = TRUE;
  g_list_store_splice (self->conversations, 0,
                       g_list_model_get_n_items (G_LIST_MODEL (self->conversations)),
                       items->pdata, items->len);
  gtk_single_selection_set_selected (self->conversation_selection, selected);
  self->syncing_selection = FALSE;
}

/* Put `item` (not in the list) at the top of the unpinned (or pinned) ones. */
static void
insert_on_top (HzWindow *self, HzConversationItem *item, gboolean select)
{
  guint position = hz_conversation_item_get_pinned (item) ? 0 : n_pinned (self, item);
  self->syncing_selection = TRUE;
  g_list_store_insert (self->conversations, position, item);
  if (select)
    gtk_single_selection_set_selected (self->conversation_selection, position);
  self->syncing_selection = FALSE;
}

void
hz_window_add_conversation (HzWindow *self, HzConversationItem *item)
{
  insert_on_top (self, item, TRUE);
}

/* Move the conversation `id` to the top of its group (it was just updated). */
void
hz_window_bump_conversation (HzWindow *self, gint64 id)
{
  guint position;
  HzConversationItem *found = hz_window_find_conversation (self, id, &position);
  if (found == NULL)
    return;
  g_autoptr(HzConversationItem) item = g_object_ref (found);
  gboolean selected = gtk_single_selection_get_selected (self->conversation_selection) == position;
  self->syncing_selection = TRUE;
  g_list_store_remove (self->conversations, position);
  self->syncing_selection = FALSE;
  insert_on_top (self, item, selected);
}

static void
on_conversation_selected (GtkSingleSelection *selection, GParamSpec *pspec, HzWindow *self)
{
  if (self->syncing_selection)
    return;
  HzConversationItem *item = gtk_single_selection_get_selected_item (selection);
  if (item == NULL)
    return;  /* unselected by "New Chat": already handled */
  if (hz_conversation_item_get_id (item) == self->conversation_id)
    ;
  else if (self->select_blocking)
    hz_window_show_conversation (self, hz_conversation_item_get_id (item));
  else
    hz_window_open_conversation (self, hz_conversation_item_get_id (item));
  hz_window_show_chat_pane (self);
}

/* Activating (click, Enter) the selected row shows it also when already selected
 * (narrow windows show one pane at a time). */
static void
on_conversation_activated (GtkListView *list, guint position, HzWindow *self)
{
  hz_window_show_chat_pane (self);
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

/* The window's reader connection (searches, conversations being opened): one HzStore,
 * used by one thread at a time. */
typedef struct _SearchConn {
  gatomicrefcount refcount;
  GMutex          lock;
  char           *path;
  HzStore        *store;   /* opened by the first search */
} SearchConn;

static SearchConn *
search_conn_ref (SearchConn *c)
{
  g_atomic_ref_count_inc (&c->refcount);
  return c;
}

static void
search_conn_unref (SearchConn *c)
{
  if (!g_atomic_ref_count_dec (&c->refcount))
    return;
  g_clear_pointer (&c->store, hz_store_close);
  g_mutex_clear (&c->lock);
  g_free (c->path);
  g_free (c);
}

SearchConn *
hz_window_reader_ref (HzWindow *self)
{
  return self->search_conn != NULL ? search_conn_ref (self->search_conn) : NULL;
}

void
hz_window_reader_unref (SearchConn *reader)
{
  search_conn_unref (reader);
}

HzStore *
hz_window_reader_lock (SearchConn *reader, GError **error)
{
  g_mutex_lock (&reader->lock);
  if (reader->store == NULL)
    reader->store = hz_store_open (reader->path, error);
  return reader->store;
}

void
hz_window_reader_unlock (SearchConn *reader)
{
  g_mutex_unlock (&reader->lock);
}

typedef struct {
  SearchConn *conn;
  char       *query;
  guint       serial;
} SearchJob;

static void
search_job_free (SearchJob *job)
{
  search_conn_unref (job->conn);
  g_free (job->query);
  g_free (job);
}

static void
search_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  SearchJob *job = data;
  GError *error = NULL;
  GPtrArray *hits = NULL;

  HzStore *store = hz_window_reader_lock (job->conn, &error);
  if (store != NULL)
    hits = hz_store_search_messages (store, job->query, SEARCH_LIMIT, &error);
  hz_window_reader_unlock (job->conn);

  if (hits == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, hits, (GDestroyNotify) g_ptr_array_unref);
}

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

static void
search_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(HzWindow) self = user_data;
  SearchJob *job = g_task_get_task_data (G_TASK (result));
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) hits = g_task_propagate_pointer (G_TASK (result), &error);
  g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func (g_object_unref);

  if (self->search_results == NULL || job->serial != self->search_serial)
    return;  /* window closed, or a newer search was started */
  if (hits == NULL)
    {
      g_warning ("search: %s", error->message);
      gtk_stack_set_visible_child_name (self->sidebar_stack, "no-results");
      return;
    }
  for (guint i = 0; i < hits->len; i++)
    {
      HzSearchHit *hit = hits->pdata[i];
      HzConversationItem *conv = hz_window_find_conversation (self, hit->conversation_id, NULL);
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
}

static void
start_search (HzWindow *self, const char *query)
{
  self->search_serial++;
  if (query == NULL || *query == '\0' || self->store == NULL)
    {
      g_list_store_remove_all (self->search_results);
      gtk_stack_set_visible_child_name (self->sidebar_stack, "conversations");
      return;
    }
  SearchJob *job = g_new0 (SearchJob, 1);
  job->conn = search_conn_ref (self->search_conn);
  job->query = g_strdup (query);
  job->serial = self->search_serial;
  g_autoptr(GTask) task = g_task_new (NULL, NULL, search_done, g_object_ref (self));
  g_task_set_source_tag (task, start_search);
  g_task_set_task_data (task, job, (GDestroyNotify) search_job_free);
  g_task_run_in_thread (task, search_thread);
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

  if (hit == NULL || hz_window_find_conversation (self, hz_conversation_item_get_id (hit),
                                                  &conv_position) == NULL)
    return;
  hz_window_select_conversation_silently (self, conv_position);
  hz_window_open_search_hit (self, hz_conversation_item_get_id (hit),
                             hz_conversation_item_get_message_id (hit));
  hz_window_show_chat_pane (self);
}

static void
action_search (GtkWidget *widget, const char *name, GVariant *param)
{
  HzWindow *self = HZ_WINDOW (widget);

  gtk_search_bar_set_search_mode (self->search_bar, TRUE);
#if ADW_CHECK_VERSION (1, 4, 0)
  adw_navigation_split_view_set_show_content (ADW_NAVIGATION_SPLIT_VIEW (self->layout), FALSE);
#else
  adw_leaflet_set_visible_child (ADW_LEAFLET (self->layout), self->sidebar_pane);
#endif
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
  return hz_window_find_conversation (self, self->conversation_id, NULL);
}

static void
rename_done (HzWindow *self, const char *title)
{
  g_autoptr(GError) error = NULL;
  HzConversationItem *item = shown_conversation (self);

  if (item == NULL)
    return;
  if (self->store != NULL && self->conversation_id > 0 &&
      !hz_store_rename_conversation (self->store, self->conversation_id, title, &error))
    {
      hz_window_report_store_error (self, error);
      return;
    }
  hz_conversation_item_set_title (item, title);
  hz_window_update_state (self);
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
  g_autoptr(GError) error = NULL;
  const char *value = *prompt ? prompt : NULL;

  if (self->store != NULL && self->conversation_id > 0 &&
      !hz_store_set_conversation_system_prompt (self->store, self->conversation_id, value,
                                                &error))
    {
      hz_window_report_store_error (self, error);
      return;
    }
  g_free (self->system_prompt);
  self->system_prompt = g_strdup (value);
}

static void
action_system_prompt (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  HzWindow *self = user_data;

  ask_text (self, _("System Prompt"),
            _("Instructions the model follows throughout this conversation, such as its "
              "role, tone or the language to answer in. Leave empty for the model's default."),
            self->system_prompt, TRUE, _("_Save"), system_prompt_done);
}

static void
action_pin (GSimpleAction *action, GVariant *state, gpointer user_data)
{
  HzWindow *self = user_data;
  g_autoptr(GError) error = NULL;
  HzConversationItem *item = shown_conversation (self);
  gboolean pinned = g_variant_get_boolean (state);

  if (item == NULL)
    return;
  if (self->store != NULL && self->conversation_id > 0 &&
      !hz_store_set_conversation_pinned (self->store, self->conversation_id, pinned, &error))
    {
      hz_window_report_store_error (self, error);
      return;
    }
  g_simple_action_set_state (action, state);
  hz_conversation_item_set_pinned (item, pinned);
  hz_window_bump_conversation (self, self->conversation_id);
}

/* ------------------------------------------------------------------ delete with undo */

typedef struct {
  HzWindow           *self;
  HzConversationItem *item;
  guint               position;
  AdwToast           *toast;
  gboolean            undone;     /* Undo: keep it */
  gboolean            committed;  /* deleted from the store already */
} PendingDelete;

static void
pending_delete_free (PendingDelete *pd)
{
  g_signal_handlers_disconnect_by_data (pd->toast, pd);
  g_object_unref (pd->item);
  g_clear_object (&pd->toast);
  g_free (pd);
}

static gboolean
is_pending_delete (HzWindow *self, gint64 id)
{
  for (guint i = 0; self->pending_deletes && i < self->pending_deletes->len; i++)
    {
      PendingDelete *pd = self->pending_deletes->pdata[i];
      if (hz_conversation_item_get_id (pd->item) == id && !pd->undone)
        return TRUE;
    }
  return FALSE;
}

/* Delete the conversation of `pd` from the store, once, unless it was undone. */
static void
commit_delete (HzWindow *self, PendingDelete *pd)
{
  g_autoptr(GError) error = NULL;
  gint64 id = hz_conversation_item_get_id (pd->item);

  if (pd->undone || pd->committed)
    return;
  pd->committed = TRUE;
  if (self->store != NULL && id > 0 && !hz_store_delete_conversation (self->store, id, &error))
    hz_window_report_store_error (self, error);
}

/* The toast is gone (timed out, closed, or its Undo button was pressed). */
static void
on_delete_toast_dismissed (AdwToast *toast, PendingDelete *pd)
{
  HzWindow *self = pd->self;

  commit_delete (self, pd);
  g_ptr_array_remove (self->pending_deletes, pd);
}

static void
action_delete (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  HzWindow *self = user_data;
  guint position;
  HzConversationItem *item = hz_window_find_conversation (self, self->conversation_id, &position);

  if (item == NULL || hz_window_generating (self))
    return;

  PendingDelete *pd = g_new0 (PendingDelete, 1);
  pd->self = self;
  pd->item = g_object_ref (item);
  pd->position = position;
  g_ptr_array_add (self->pending_deletes, pd);

  self->syncing_selection = TRUE;
  g_list_store_remove (self->conversations, position);
  self->syncing_selection = FALSE;
  hz_window_start_new_chat (self);

  g_autofree char *title = g_strdup_printf (_("“%s” deleted"), hz_conversation_item_get_title (item));
  pd->toast = adw_toast_new (title);
  adw_toast_set_button_label (pd->toast, _("_Undo"));
  adw_toast_set_action_name (pd->toast, "win.undo-delete");
  adw_toast_set_action_target_value (pd->toast,
                                     g_variant_new_int64 (hz_conversation_item_get_id (item)));
  g_signal_connect (pd->toast, "dismissed", G_CALLBACK (on_delete_toast_dismissed), pd);
  adw_toast_overlay_add_toast (self->toast_overlay, g_object_ref (pd->toast));
}

/* The toast's Undo button: put the conversation back (the toast closes itself). */
static void
action_undo_delete (GtkWidget *widget, const char *name, GVariant *param)
{
  HzWindow *self = HZ_WINDOW (widget);
  gint64 id = g_variant_get_int64 (param);

  for (guint i = 0; i < self->pending_deletes->len; i++)
    {
      PendingDelete *pd = self->pending_deletes->pdata[i];
      if (hz_conversation_item_get_id (pd->item) != id || pd->undone || pd->committed)
        continue;
      pd->undone = TRUE;
      guint n = g_list_model_get_n_items (G_LIST_MODEL (self->conversations));
      g_list_store_insert (self->conversations, MIN (pd->position, n), pd->item);
      hz_window_select_conversation (self, MIN (pd->position, n));
      return;
    }
}

void
hz_window_commit_deletes (HzWindow *self)
{
  g_return_if_fail (HZ_IS_WINDOW (self));
  for (guint i = 0; self->pending_deletes != NULL && i < self->pending_deletes->len; i++)
    commit_delete (self, self->pending_deletes->pdata[i]);
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
    hz_window_show_error (job->self, _("Could Not Export"), error->message);
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
hz_window_export_to_file (HzWindow *self, HzExportFormat format, GFile *file)
{
  g_return_if_fail (HZ_IS_WINDOW (self));
  g_return_if_fail (G_IS_FILE (file));

  HzConversationItem *conv = shown_conversation (self);
  g_autoptr(GBytes) bytes = hz_export_conversation (
    format, conv ? hz_conversation_item_get_title (conv) : NULL, self->system_prompt,
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
  g_autoptr(HzWindow) self = user_data;
  g_autoptr(GFile) file = gtk_file_dialog_save_finish (GTK_FILE_DIALOG (source), result, NULL);
  HzExportFormat format = GPOINTER_TO_INT (g_object_get_data (source, "hz-format"));

  if (file != NULL)
    hz_window_export_to_file (self, format, file);
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
        hz_window_export_to_file (self, format, file);
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

GListModel *
hz_window_get_search_results (HzWindow *self)
{
  g_return_val_if_fail (HZ_IS_WINDOW (self), NULL);
  return G_LIST_MODEL (self->search_results);
}

/* ------------------------------------------------------------------ setup */

void
hz_window_sync_conversation_actions (HzWindow *self)
{
  HzConversationItem *conv = shown_conversation (self);
  gboolean busy = hz_window_generating (self);
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

  self->conversations = g_list_store_new (HZ_TYPE_CONVERSATION_ITEM);
  self->conversation_selection =
    gtk_single_selection_new (G_LIST_MODEL (g_object_ref (self->conversations)));
  gtk_single_selection_set_autoselect (self->conversation_selection, FALSE);
  gtk_single_selection_set_can_unselect (self->conversation_selection, TRUE);
  gtk_single_selection_set_selected (self->conversation_selection, GTK_INVALID_LIST_POSITION);
  g_signal_connect (self->conversation_selection, "notify::selected",
                    G_CALLBACK (on_conversation_selected), self);
  factory = row_factory_new ();
  gtk_list_view_set_model (self->conversation_list,
                           GTK_SELECTION_MODEL (self->conversation_selection));
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

  self->pending_deletes = g_ptr_array_new_with_free_func ((GDestroyNotify) pending_delete_free);
}

void
hz_window_sidebar_attach (HzWindow *self)
{
  if (self->store != NULL)
    {
      self->search_conn = g_new0 (SearchConn, 1);
      g_atomic_ref_count_init (&self->search_conn->refcount);
      g_mutex_init (&self->search_conn->lock);
      self->search_conn->path = g_strdup (hz_store_get_path (self->store));
    }
  hz_window_load_conversations (self);
}

void
hz_window_sidebar_dispose (HzWindow *self)
{
  hz_window_commit_deletes (self);
  g_clear_pointer (&self->pending_deletes, g_ptr_array_unref);
  g_clear_pointer (&self->search_conn, search_conn_unref);
  if (self->conv_actions != NULL)
    gtk_widget_insert_action_group (GTK_WIDGET (self), "conv", NULL);
  g_clear_object (&self->conv_actions);
  g_clear_object (&self->conversation_selection);
  g_clear_object (&self->conversations);
  g_clear_object (&self->search_results);
}
