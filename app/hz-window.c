/* hz-window.c — HzWindow (see hz-window.h).
 *
 * Flow of one reply: send() saves the user's message and an empty, incomplete assistant
 * message to the store, shows both, and queues the generation on the engine worker.
 * "token" signals append to the assistant item; a timer writes the text to the store every
 * SAVE_INTERVAL_MS while it grows (a crash loses under a second of text); "finished"
 * writes the final text and stats and marks it complete; "error" keeps whatever text
 * arrived (or drops the empty reply) and shows a dialog. Everything here runs on the main
 * thread; the store calls are short single-row writes (WAL).
 */
#include "hz-window.h"

#include <glib/gi18n.h>
#include <math.h>

#include "hz-conversation-item.h"
#include "hz-message-item.h"
#include "hz-message-row.h"

#define SAVE_INTERVAL_MS 500  /* a streamed reply is saved at least this often */
#define TITLE_MAX_CHARS  48

typedef enum { MODEL_NONE, MODEL_LOADING, MODEL_READY, MODEL_FAILED } ModelState;

struct _HzWindow {
  AdwApplicationWindow parent_instance;

  /* template */
  GtkListView       *conversation_list;
  GtkListView       *message_list;
  GtkScrolledWindow *message_scroller;
  GtkTextView       *composer;
  GtkWidget         *composer_placeholder;
  GtkStack          *content_stack;
  GtkStack          *action_stack;
  AdwStatusPage     *status_page;
  GtkWidget         *status_spinner;
  GtkWidget         *status_open_button;
  AdwWindowTitle    *window_title;
  AdwToastOverlay   *toast_overlay;

  /* app objects (owned by the application) */
  HzApplication  *app;
  HzStore        *store;
  HzEngineWorker *worker;
  GSettings      *settings;
  gulong          worker_handlers[6];

  GListStore         *conversations;  /* HzConversationItem */
  GtkSingleSelection *conversation_selection;
  GListStore         *messages;       /* HzMessageItem */
  gint64              conversation_id;  /* shown conversation; 0 = a new chat */
  gboolean            syncing_selection;
  gboolean            stick_to_bottom;

  ModelState model_state;
  char      *model_error;

  /* the reply being generated */
  guint          request_id;      /* 0 = none */
  HzMessageItem *reply_item;
  gint64         reply_message_id;
  gboolean       reply_dirty;     /* text not yet saved */
  guint          save_timeout_id;
};

G_DEFINE_FINAL_TYPE (HzWindow, hz_window, ADW_TYPE_APPLICATION_WINDOW)

/* ------------------------------------------------------------------ helpers */

static char *
model_display_name (const char *path)
{
  g_autofree char *base = g_path_get_basename (path);
  if (g_str_has_suffix (base, ".gguf"))
    base[strlen (base) - 5] = '\0';
  return g_steal_pointer (&base);
}

static char *
title_from_text (const char *text)
{
  g_autofree char *line = g_strdup (text);
  char *nl = strchr (line, '\n');
  if (nl)
    *nl = '\0';
  g_strstrip (line);
  if (g_utf8_strlen (line, -1) <= TITLE_MAX_CHARS)
    return g_steal_pointer (&line);
  g_autofree char *cut = g_utf8_substring (line, 0, TITLE_MAX_CHARS - 1);
  g_strchomp (cut);
  return g_strconcat (cut, "…", NULL);
}

static char *
stats_details (gint64 n_tokens, double tokens_per_s)
{
  if (n_tokens <= 0)
    return NULL;
  int n = (int) MIN (n_tokens, G_MAXINT);
  if (tokens_per_s > 0 && isfinite (tokens_per_s))
    return g_strdup_printf (ngettext ("%d token · %.1f tokens/s", "%d tokens · %.1f tokens/s", n),
                            n, tokens_per_s);
  return g_strdup_printf (ngettext ("%d token", "%d tokens", n), n);
}

static void
report_store_error (HzWindow *self, GError *error)
{
  g_autofree char *msg = g_strdup_printf (_("Could not save: %s"), error->message);
  g_warning ("store: %s", error->message);
  adw_toast_overlay_add_toast (self->toast_overlay, adw_toast_new (msg));
}

/* ------------------------------------------------------------------ UI state */

static gboolean
generating (HzWindow *self)
{
  return self->request_id != 0;
}

static void
update_composer_placeholder (HzWindow *self)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (self->composer);
  gtk_widget_set_visible (self->composer_placeholder,
                          gtk_text_buffer_get_char_count (buffer) == 0);
}

static void
update_state (HzWindow *self)
{
  gboolean has_messages = g_list_model_get_n_items (G_LIST_MODEL (self->messages)) > 0;
  const char *model_path = hz_engine_worker_get_model_path (self->worker);
  g_autofree char *model_name = model_path ? model_display_name (model_path) : NULL;
  const char *title = _("Hanzo");
  g_autofree char *subtitle = NULL;

  /* Window title: the conversation; subtitle: the model. */
  HzConversationItem *conv = gtk_single_selection_get_selected_item (self->conversation_selection);
  if (conv != NULL && self->conversation_id != 0)
    title = hz_conversation_item_get_title (conv);
  else if (self->conversation_id == 0)
    title = _("New Chat");

  switch (self->model_state)
    {
    case MODEL_NONE:
      subtitle = g_strdup (_("No model"));
      break;
    case MODEL_LOADING:
      subtitle = g_strdup_printf (_("Loading %s…"), model_name);
      break;
    case MODEL_READY:
      subtitle = g_strdup (model_name);
      break;
    case MODEL_FAILED:
      subtitle = g_strdup_printf (_("%s could not be loaded"), model_name);
      break;
    }
  adw_window_title_set_title (self->window_title, title);
  adw_window_title_set_subtitle (self->window_title, subtitle);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->window_title), model_path);

  /* Content: the messages, or a status page saying what to do. */
  gtk_widget_set_visible (self->status_spinner, self->model_state == MODEL_LOADING);
  gtk_spinner_set_spinning (GTK_SPINNER (self->status_spinner),
                            self->model_state == MODEL_LOADING);
  gtk_widget_set_visible (self->status_open_button,
                          self->model_state == MODEL_NONE || self->model_state == MODEL_FAILED);
  switch (self->model_state)
    {
    case MODEL_NONE:
      adw_status_page_set_title (self->status_page, _("No Model"));
      adw_status_page_set_description (self->status_page,
        _("Open a language model file (GGUF) to start chatting. "
          "It runs on this computer: nothing you type leaves it."));
      break;
    case MODEL_LOADING:
      adw_status_page_set_title (self->status_page, _("Loading Model…"));
      adw_status_page_set_description (self->status_page, model_name);
      break;
    case MODEL_FAILED:
      adw_status_page_set_title (self->status_page, _("Model Could Not Be Loaded"));
      adw_status_page_set_description (self->status_page, self->model_error);
      break;
    case MODEL_READY:
      {
        g_autofree char *desc = g_strdup_printf (
          _("%s runs on this computer: nothing you type leaves it."), model_name);
        adw_status_page_set_title (self->status_page, _("Start a Conversation"));
        adw_status_page_set_description (self->status_page, desc);
      }
      break;
    }
  gtk_stack_set_visible_child_name (self->content_stack, has_messages ? "chat" : "status");

  /* Composer: Send while idle (needs a model), Stop while generating. */
  gtk_stack_set_visible_child_name (self->action_stack, generating (self) ? "stop" : "send");
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.send",
                                 !generating (self) && self->model_state == MODEL_READY);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.stop", generating (self));
}

/* ------------------------------------------------------------------ conversations */

static void
load_conversations (HzWindow *self)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) convs = NULL;

  g_list_store_remove_all (self->conversations);
  if (self->store == NULL)
    return;
  convs = hz_store_list_conversations (self->store, &error);
  if (convs == NULL)
    {
      report_store_error (self, error);
      return;
    }
  for (guint i = 0; i < convs->len; i++)
    {
      HzConversation *c = convs->pdata[i];
      g_autoptr(HzConversationItem) item = hz_conversation_item_new (c->id, c->title);
      g_list_store_append (self->conversations, item);
    }
}

static void
select_conversation_silently (HzWindow *self, guint position)
{
  self->syncing_selection = TRUE;
  gtk_single_selection_set_selected (self->conversation_selection, position);
  self->syncing_selection = FALSE;
}

static HzMessageItem *
item_for_message (HzWindow *self, HzMessage *m)
{
  if (self->reply_item != NULL && m->id == self->reply_message_id)
    return g_object_ref (self->reply_item);  /* still streaming: keep following it */

  HzMessageItem *item = hz_message_item_new (m->id, m->role, m->content);
  if (m->role == HZ_ROLE_ASSISTANT)
    {
      g_autofree char *details = stats_details (m->n_tokens, m->tokens_per_s);
      if (!m->complete)
        hz_message_item_set_details (item, _("Interrupted"));
      else
        hz_message_item_set_details (item, details);
    }
  return item;
}

static void
show_conversation (HzWindow *self, gint64 conversation_id)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) msgs = NULL;
  g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func (g_object_unref);

  self->conversation_id = conversation_id;
  self->stick_to_bottom = TRUE;
  if (conversation_id != 0 && self->store != NULL)
    {
      msgs = hz_store_list_messages (self->store, conversation_id, &error);
      if (msgs == NULL)
        report_store_error (self, error);
      for (guint i = 0; msgs && i < msgs->len; i++)
        g_ptr_array_add (items, item_for_message (self, msgs->pdata[i]));
    }
  g_list_store_splice (self->messages, 0,
                       g_list_model_get_n_items (G_LIST_MODEL (self->messages)),
                       items->pdata, items->len);
  update_state (self);
}

static void
on_conversation_selected (GtkSingleSelection *selection, GParamSpec *pspec, HzWindow *self)
{
  if (self->syncing_selection)
    return;
  HzConversationItem *item = gtk_single_selection_get_selected_item (selection);
  if (item == NULL)
    return;  /* unselected by "New Chat": already handled */
  if (hz_conversation_item_get_id (item) != self->conversation_id)
    show_conversation (self, hz_conversation_item_get_id (item));
}

static void
new_chat (HzWindow *self)
{
  select_conversation_silently (self, GTK_INVALID_LIST_POSITION);
  show_conversation (self, 0);
  gtk_widget_grab_focus (GTK_WIDGET (self->composer));
}

/* Move the conversation `id` to the top of the sidebar (it was just updated). */
static void
bump_conversation (HzWindow *self, gint64 id)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->conversations));
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(HzConversationItem) item = g_list_model_get_item (G_LIST_MODEL (self->conversations), i);
      if (hz_conversation_item_get_id (item) != id)
        continue;
      if (i != 0)
        {
          gboolean selected = gtk_single_selection_get_selected (self->conversation_selection) == i;
          self->syncing_selection = TRUE;
          g_list_store_remove (self->conversations, i);
          g_list_store_insert (self->conversations, 0, item);
          if (selected)
            gtk_single_selection_set_selected (self->conversation_selection, 0);
          self->syncing_selection = FALSE;
        }
      return;
    }
}

/* ------------------------------------------------------------------ sending */

static char *
composer_take_text (HzWindow *self)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (self->composer);
  GtkTextIter start, end;

  gtk_text_buffer_get_bounds (buffer, &start, &end);
  g_autofree char *text = gtk_text_buffer_get_text (buffer, &start, &end, FALSE);
  g_strstrip (text);
  if (*text == '\0')
    return NULL;
  gtk_text_buffer_set_text (buffer, "", 0);
  return g_steal_pointer (&text);
}

static void
fill_generate_params (HzWindow *self, HzGenerateParams *params)
{
  hz_generate_params_init (params);
  params->sampler.temperature = (float) g_settings_get_double (self->settings, "temperature");
  params->sampler.top_p = (float) g_settings_get_double (self->settings, "top-p");
  params->n_predict = g_settings_get_int (self->settings, "max-tokens");
  guint64 seed = g_settings_get_uint64 (self->settings, "seed");
  params->sampler.seed = seed != 0 ? seed : ((guint64) g_random_int () << 32 | g_random_int ());
}

static gboolean save_reply_timeout (gpointer data);

static void
send_message (HzWindow *self)
{
  g_autoptr(GError) error = NULL;

  if (generating (self) || self->model_state != MODEL_READY)
    return;
  g_autofree char *text = composer_take_text (self);
  if (text == NULL)
    return;

  const char *model_path = hz_engine_worker_get_model_path (self->worker);
  const char *sha = hz_application_get_model_sha256 (self->app);

  /* A new chat becomes a conversation with its first message. */
  if (self->conversation_id == 0)
    {
      g_autofree char *title = title_from_text (text);
      gint64 id = -1;  /* in-memory only when there is no store */
      if (self->store != NULL)
        {
          id = hz_store_create_conversation (self->store, title, NULL, model_path, &error);
          if (id == 0)
            {
              report_store_error (self, error);
              g_clear_error (&error);
              id = -1;
            }
        }
      g_autoptr(HzConversationItem) conv = hz_conversation_item_new (id, title);
      self->syncing_selection = TRUE;
      g_list_store_insert (self->conversations, 0, conv);
      gtk_single_selection_set_selected (self->conversation_selection, 0);
      self->syncing_selection = FALSE;
      self->conversation_id = id;
    }
  else
    {
      bump_conversation (self, self->conversation_id);
    }

  gint64 user_id = 0, reply_id = 0;
  if (self->store != NULL && self->conversation_id > 0)
    {
      user_id = hz_store_append_message (self->store, self->conversation_id, 0, HZ_ROLE_USER,
                                         text, NULL, TRUE, &error);
      if (user_id != 0)
        reply_id = hz_store_append_message (self->store, self->conversation_id, user_id,
                                            HZ_ROLE_ASSISTANT, "", sha, FALSE, &error);
      if (reply_id == 0)
        report_store_error (self, error);
    }

  g_autoptr(HzMessageItem) user_item = hz_message_item_new (user_id, HZ_ROLE_USER, text);
  g_list_store_append (self->messages, user_item);

  /* The conversation so far, for models with a chat template. */
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->messages));
  g_autofree HzChatMessage *msgs = g_new0 (HzChatMessage, n);
  gsize n_msgs = 0;
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(HzMessageItem) it = g_list_model_get_item (G_LIST_MODEL (self->messages), i);
      const char *t = hz_message_item_get_text (it);
      if (*t == '\0')
        continue;
      msgs[n_msgs].role = hz_role_to_string (hz_message_item_get_role (it));
      msgs[n_msgs].content = t;
      n_msgs++;
    }

  HzGenerateParams params;
  fill_generate_params (self, &params);
  self->request_id = hz_engine_worker_generate (self->worker, msgs, n_msgs, &params);

  self->reply_item = hz_message_item_new (reply_id, HZ_ROLE_ASSISTANT, "");
  hz_message_item_set_streaming (self->reply_item, TRUE);
  self->reply_message_id = reply_id;
  self->reply_dirty = FALSE;
  self->save_timeout_id = g_timeout_add (SAVE_INTERVAL_MS, save_reply_timeout, self);
  self->stick_to_bottom = TRUE;
  g_list_store_append (self->messages, self->reply_item);
  update_state (self);
}

/* Write the reply's text so far to the store. */
static void
save_reply (HzWindow *self, gint64 n_tokens, double ttft_s, double tokens_per_s)
{
  g_autoptr(GError) error = NULL;

  self->reply_dirty = FALSE;
  if (self->store == NULL || self->reply_message_id == 0)
    return;
  if (!hz_store_update_message (self->store, self->reply_message_id,
                                hz_message_item_get_text (self->reply_item),
                                n_tokens, ttft_s, tokens_per_s, &error))
    report_store_error (self, error);
}

static gboolean
save_reply_timeout (gpointer data)
{
  HzWindow *self = data;

  if (self->reply_dirty)
    save_reply (self, -1, NAN, NAN);
  return G_SOURCE_CONTINUE;
}

static void
end_reply (HzWindow *self, gboolean keep)
{
  g_autoptr(GError) error = NULL;

  if (self->store != NULL && self->reply_message_id != 0)
    {
      gboolean ok = keep ? hz_store_set_message_complete (self->store, self->reply_message_id, &error)
                         : hz_store_delete_message (self->store, self->reply_message_id, &error);
      if (!ok)
        report_store_error (self, error);
    }
  hz_message_item_set_streaming (self->reply_item, FALSE);
  if (!keep)
    {
      guint pos;
      if (g_list_store_find (self->messages, self->reply_item, &pos))
        g_list_store_remove (self->messages, pos);
    }
  g_clear_object (&self->reply_item);
  g_clear_handle_id (&self->save_timeout_id, g_source_remove);
  self->reply_message_id = 0;
  self->request_id = 0;
  update_state (self);
}

static void
on_worker_token (HzEngineWorker *worker, guint request, const char *text, HzWindow *self)
{
  if (request != self->request_id || self->reply_item == NULL)
    return;
  hz_message_item_append_text (self->reply_item, text);
  self->reply_dirty = TRUE;
}

static void
on_worker_finished (HzEngineWorker *worker, guint request, const char *text,
                    gpointer stats_ptr, HzWindow *self)
{
  const HzGenerateStats *stats = stats_ptr;

  if (request != self->request_id || self->reply_item == NULL)
    return;

  double tps = stats->gen_seconds > 0 ? stats->n_generated / stats->gen_seconds : -1;
  hz_message_item_set_text (self->reply_item, text);
  if (stats->stop_reason == HZ_STOP_CANCELLED)
    {
      hz_message_item_set_details (self->reply_item, _("Stopped"));
    }
  else
    {
      g_autofree char *details = stats_details (stats->n_generated, tps);
      if (stats->stop_reason == HZ_STOP_CONTEXT_FULL)
        {
          /* TRANSLATORS: appended to "12 tokens · 30.0 tokens/s" */
          g_autofree char *full = g_strdup_printf (_("%s · context full"), details ? details : "");
          hz_message_item_set_details (self->reply_item, full);
        }
      else
        hz_message_item_set_details (self->reply_item, details);
    }
  save_reply (self, stats->n_generated, stats->n_generated ? stats->ttft_seconds : -1, tps);
  end_reply (self, *text != '\0');  /* stopped before the first word: nothing to keep */
}

static void
on_worker_error (HzEngineWorker *worker, guint request, GError *error, HzWindow *self)
{
  if (request != self->request_id || self->reply_item == NULL)
    return;

  gboolean has_text = *hz_message_item_get_text (self->reply_item) != '\0';
  if (has_text)
    save_reply (self, -1, NAN, NAN);
  end_reply (self, has_text);

  if (g_error_matches (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_CONTEXT_FULL))
    {
      g_autofree char *body = g_strdup_printf (
        _("This model cannot read that much text at once (its context is too short).\n\n%s"),
        error->message);
      hz_window_show_error (self, _("Message Too Long"), body);
    }
  else
    {
      hz_window_show_error (self, _("The Reply Could Not Be Generated"), error->message);
    }
}

/* ------------------------------------------------------------------ model */

static void
on_worker_model_loaded (HzEngineWorker *worker, const char *path, const char *name,
                        HzWindow *self)
{
  if (g_strcmp0 (path, hz_engine_worker_get_model_path (worker)) != 0)
    return;  /* superseded by a later request */
  self->model_state = MODEL_READY;
  g_clear_pointer (&self->model_error, g_free);
  update_state (self);
}

static void
on_worker_model_error (HzEngineWorker *worker, const char *path, GError *error,
                       HzWindow *self)
{
  if (g_strcmp0 (path, hz_engine_worker_get_model_path (worker)) != 0)
    return;
  self->model_state = MODEL_FAILED;
  g_free (self->model_error);
  self->model_error = g_strdup (error->message);
  update_state (self);

  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *body = g_strdup_printf (_("“%s” could not be loaded as a language model.\n\n%s"),
                                           base, error->message);
  hz_window_show_error (self, _("Cannot Open Model"), body);
}

/* The worker was asked to load a model (or we are starting up): follow its state. */
static void
on_model_requested (HzWindow *self)
{
  self->model_state = hz_engine_worker_get_model_path (self->worker) ? MODEL_LOADING : MODEL_NONE;
  if (hz_engine_worker_is_model_loaded (self->worker))
    self->model_state = MODEL_READY;
  update_state (self);
}

static void
on_worker_model_loading (HzEngineWorker *worker, const char *path, HzWindow *self)
{
  on_model_requested (self);
}

#if GTK_CHECK_VERSION (4, 10, 0)
static void
on_file_dialog_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(HzWindow) self = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GFile) file = gtk_file_dialog_open_finish (GTK_FILE_DIALOG (source), result, &error);

  if (file == NULL)
    return;  /* dismissed */
  g_autofree char *path = g_file_get_path (file);
  if (path != NULL)
    {
      hz_application_open_model (self->app, path, TRUE);
    }
}
#else
static void
on_file_chooser_response (GtkNativeDialog *dialog, int response, gpointer user_data)
{
  HzWindow *self = user_data;

  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr(GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autofree char *path = file ? g_file_get_path (file) : NULL;
      if (path != NULL)
        {
          hz_application_open_model (self->app, path, TRUE);
        }
    }
  g_object_unref (dialog);
}
#endif

static void
open_model (HzWindow *self)
{
  g_autoptr(GtkFileFilter) filter = gtk_file_filter_new ();
  gtk_file_filter_set_name (filter, _("GGUF Models"));
  gtk_file_filter_add_suffix (filter, "gguf");

#if GTK_CHECK_VERSION (4, 10, 0)
  g_autoptr(GtkFileDialog) dialog = gtk_file_dialog_new ();
  g_autoptr(GListStore) filters = g_list_store_new (GTK_TYPE_FILE_FILTER);
  g_list_store_append (filters, filter);
  gtk_file_dialog_set_title (dialog, _("Open Model"));
  gtk_file_dialog_set_filters (dialog, G_LIST_MODEL (filters));
  gtk_file_dialog_set_default_filter (dialog, filter);
  gtk_file_dialog_open (dialog, GTK_WINDOW (self), NULL, on_file_dialog_done, g_object_ref (self));
#else
  GtkFileChooserNative *native =
    gtk_file_chooser_native_new (_("Open Model"), GTK_WINDOW (self),
                                 GTK_FILE_CHOOSER_ACTION_OPEN, _("_Open"), _("_Cancel"));
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (native), filter);
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (native), TRUE);
  g_signal_connect (native, "response", G_CALLBACK (on_file_chooser_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (native));
#endif
}

/* ------------------------------------------------------------------ actions, keys */

static void
action_send (GtkWidget *widget, const char *name, GVariant *param)
{
  send_message (HZ_WINDOW (widget));
}

static void
action_stop (GtkWidget *widget, const char *name, GVariant *param)
{
  HzWindow *self = HZ_WINDOW (widget);
  if (generating (self))
    hz_engine_worker_cancel (self->worker);
}

static void
action_new_chat (GtkWidget *widget, const char *name, GVariant *param)
{
  new_chat (HZ_WINDOW (widget));
}

static void
action_open_model (GtkWidget *widget, const char *name, GVariant *param)
{
  open_model (HZ_WINDOW (widget));
}

/* Enter sends, Shift+Enter (or Ctrl+Enter) inserts a newline. */
static gboolean
on_composer_key (GtkEventControllerKey *controller, guint keyval, guint keycode,
                 GdkModifierType state, HzWindow *self)
{
  if (keyval != GDK_KEY_Return && keyval != GDK_KEY_KP_Enter && keyval != GDK_KEY_ISO_Enter)
    return FALSE;
  if (state & (GDK_SHIFT_MASK | GDK_CONTROL_MASK))
    return FALSE;
  gtk_widget_activate_action (GTK_WIDGET (self), "win.send", NULL);
  return TRUE;
}

/* Keep the newest text in view while the user has not scrolled up. */
static void
on_scroll_value_changed (GtkAdjustment *adj, HzWindow *self)
{
  double bottom = gtk_adjustment_get_upper (adj) - gtk_adjustment_get_page_size (adj);
  self->stick_to_bottom = gtk_adjustment_get_value (adj) >= bottom - 32;
}

static void
on_scroll_upper_changed (GtkAdjustment *adj, GParamSpec *pspec, HzWindow *self)
{
  if (self->stick_to_bottom)
    gtk_adjustment_set_value (adj, gtk_adjustment_get_upper (adj) -
                                   gtk_adjustment_get_page_size (adj));
}

/* ------------------------------------------------------------------ list factories */

static void
message_setup (GtkSignalListItemFactory *f, GtkListItem *li, gpointer data)
{
  gtk_list_item_set_activatable (li, FALSE);
  gtk_list_item_set_selectable (li, FALSE);
  gtk_list_item_set_child (li, hz_message_row_new ());
}

static void
message_bind (GtkSignalListItemFactory *f, GtkListItem *li, gpointer data)
{
  hz_message_row_set_item (HZ_MESSAGE_ROW (gtk_list_item_get_child (li)),
                           gtk_list_item_get_item (li));
}

static void
message_unbind (GtkSignalListItemFactory *f, GtkListItem *li, gpointer data)
{
  hz_message_row_set_item (HZ_MESSAGE_ROW (gtk_list_item_get_child (li)), NULL);
}

static void
conversation_setup (GtkSignalListItemFactory *f, GtkListItem *li, gpointer data)
{
  GtkWidget *label = gtk_label_new (NULL);
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_END);
  gtk_widget_set_margin_top (label, 6);
  gtk_widget_set_margin_bottom (label, 6);
  gtk_list_item_set_child (li, label);
}

static void
conversation_bind (GtkSignalListItemFactory *f, GtkListItem *li, gpointer data)
{
  HzConversationItem *item = gtk_list_item_get_item (li);
  gtk_label_set_text (GTK_LABEL (gtk_list_item_get_child (li)),
                      hz_conversation_item_get_title (item));
}

static void
setup_lists (HzWindow *self)
{
  GtkListItemFactory *factory;

  self->conversations = g_list_store_new (HZ_TYPE_CONVERSATION_ITEM);
  self->conversation_selection =
    gtk_single_selection_new (G_LIST_MODEL (g_object_ref (self->conversations)));
  gtk_single_selection_set_autoselect (self->conversation_selection, FALSE);
  gtk_single_selection_set_can_unselect (self->conversation_selection, TRUE);
  gtk_single_selection_set_selected (self->conversation_selection, GTK_INVALID_LIST_POSITION);
  g_signal_connect (self->conversation_selection, "notify::selected",
                    G_CALLBACK (on_conversation_selected), self);
  factory = gtk_signal_list_item_factory_new ();
  g_signal_connect (factory, "setup", G_CALLBACK (conversation_setup), NULL);
  g_signal_connect (factory, "bind", G_CALLBACK (conversation_bind), NULL);
  gtk_list_view_set_model (self->conversation_list,
                           GTK_SELECTION_MODEL (self->conversation_selection));
  gtk_list_view_set_factory (self->conversation_list, factory);
  g_object_unref (factory);

  self->messages = g_list_store_new (HZ_TYPE_MESSAGE_ITEM);
  GtkNoSelection *nosel = gtk_no_selection_new (G_LIST_MODEL (g_object_ref (self->messages)));
  factory = gtk_signal_list_item_factory_new ();
  g_signal_connect (factory, "setup", G_CALLBACK (message_setup), NULL);
  g_signal_connect (factory, "bind", G_CALLBACK (message_bind), NULL);
  g_signal_connect (factory, "unbind", G_CALLBACK (message_unbind), NULL);
  gtk_list_view_set_model (self->message_list, GTK_SELECTION_MODEL (nosel));
  gtk_list_view_set_factory (self->message_list, factory);
  g_object_unref (factory);
  g_object_unref (nosel);
}

/* Connect the window to the application's objects (from hz_window_new()). */
static void
attach_to_app (HzWindow *self, HzApplication *app)
{
  self->app = app;
  self->store = hz_application_get_store (self->app);
  self->worker = g_object_ref (hz_application_get_worker (self->app));
  self->settings = g_object_ref (hz_application_get_settings (self->app));

  self->worker_handlers[0] = g_signal_connect (self->worker, "model-loaded",
                                               G_CALLBACK (on_worker_model_loaded), self);
  self->worker_handlers[1] = g_signal_connect (self->worker, "model-error",
                                               G_CALLBACK (on_worker_model_error), self);
  self->worker_handlers[2] = g_signal_connect (self->worker, "token",
                                               G_CALLBACK (on_worker_token), self);
  self->worker_handlers[3] = g_signal_connect (self->worker, "finished",
                                               G_CALLBACK (on_worker_finished), self);
  self->worker_handlers[4] = g_signal_connect (self->worker, "error",
                                               G_CALLBACK (on_worker_error), self);
  self->worker_handlers[5] = g_signal_connect (self->worker, "model-loading",
                                               G_CALLBACK (on_worker_model_loading), self);

  g_settings_bind (self->settings, "window-width", self, "default-width", G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (self->settings, "window-height", self, "default-height", G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (self->settings, "window-maximized", self, "maximized", G_SETTINGS_BIND_DEFAULT);

  load_conversations (self);
  show_conversation (self, 0);
  on_model_requested (self);
  if (self->store == NULL)
    adw_toast_overlay_add_toast (self->toast_overlay,
                                 adw_toast_new (_("Conversations cannot be saved on this computer")));
}

/* ------------------------------------------------------------------ public API */

HzWindow *
hz_window_new (HzApplication *app)
{
  g_return_val_if_fail (HZ_IS_APPLICATION (app), NULL);
  HzWindow *self = g_object_new (HZ_TYPE_WINDOW, "application", app, NULL);
  attach_to_app (self, app);
  return self;
}

GtkTextView *
hz_window_get_composer (HzWindow *self)
{
  g_return_val_if_fail (HZ_IS_WINDOW (self), NULL);
  return self->composer;
}

GListModel *
hz_window_get_conversations (HzWindow *self)
{
  g_return_val_if_fail (HZ_IS_WINDOW (self), NULL);
  return G_LIST_MODEL (self->conversations);
}

GListModel *
hz_window_get_messages (HzWindow *self)
{
  g_return_val_if_fail (HZ_IS_WINDOW (self), NULL);
  return G_LIST_MODEL (self->messages);
}

void
hz_window_select_conversation (HzWindow *self, guint position)
{
  g_return_if_fail (HZ_IS_WINDOW (self));
  gtk_single_selection_set_selected (self->conversation_selection, position);
}

gboolean
hz_window_is_generating (HzWindow *self)
{
  g_return_val_if_fail (HZ_IS_WINDOW (self), FALSE);
  return generating (self);
}

gboolean
hz_window_is_model_ready (HzWindow *self)
{
  g_return_val_if_fail (HZ_IS_WINDOW (self), FALSE);
  return self->model_state == MODEL_READY;
}

void
hz_window_show_error (HzWindow *self, const char *heading, const char *body)
{
  g_return_if_fail (HZ_IS_WINDOW (self));

  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  GtkWidget *dialog = adw_message_dialog_new (GTK_WINDOW (self), heading, body);
  adw_message_dialog_add_response (ADW_MESSAGE_DIALOG (dialog), "close", _("_Close"));
  adw_message_dialog_set_default_response (ADW_MESSAGE_DIALOG (dialog), "close");
  adw_message_dialog_set_close_response (ADW_MESSAGE_DIALOG (dialog), "close");
  G_GNUC_END_IGNORE_DEPRECATIONS
  gtk_window_present (GTK_WINDOW (dialog));
}

/* ------------------------------------------------------------------ GObject */

static void
hz_window_dispose (GObject *object)
{
  HzWindow *self = HZ_WINDOW (object);

  if (self->worker != NULL)
    {
      if (generating (self))
        hz_engine_worker_cancel (self->worker);
      for (guint i = 0; i < G_N_ELEMENTS (self->worker_handlers); i++)
        g_clear_signal_handler (&self->worker_handlers[i], self->worker);
    }
  /* A reply cut short by closing the window keeps its text (saved, marked complete). */
  if (self->reply_item != NULL)
    {
      save_reply (self, -1, NAN, NAN);
      end_reply (self, *hz_message_item_get_text (self->reply_item) != '\0');
    }
  g_clear_object (&self->worker);
  g_clear_object (&self->settings);
  g_clear_object (&self->conversation_selection);
  g_clear_object (&self->conversations);
  g_clear_object (&self->messages);
  gtk_widget_dispose_template (GTK_WIDGET (self), HZ_TYPE_WINDOW);
  G_OBJECT_CLASS (hz_window_parent_class)->dispose (object);
}

static void
hz_window_finalize (GObject *object)
{
  g_free (HZ_WINDOW (object)->model_error);
  G_OBJECT_CLASS (hz_window_parent_class)->finalize (object);
}

static void
hz_window_class_init (HzWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = hz_window_dispose;
  object_class->finalize = hz_window_finalize;

  gtk_widget_class_set_template_from_resource (widget_class, "/ai/hanzo/Desktop/hz-window.ui");
  gtk_widget_class_bind_template_child (widget_class, HzWindow, conversation_list);
  gtk_widget_class_bind_template_child (widget_class, HzWindow, message_list);
  gtk_widget_class_bind_template_child (widget_class, HzWindow, message_scroller);
  gtk_widget_class_bind_template_child (widget_class, HzWindow, composer);
  gtk_widget_class_bind_template_child (widget_class, HzWindow, composer_placeholder);
  gtk_widget_class_bind_template_child (widget_class, HzWindow, content_stack);
  gtk_widget_class_bind_template_child (widget_class, HzWindow, action_stack);
  gtk_widget_class_bind_template_child (widget_class, HzWindow, status_page);
  gtk_widget_class_bind_template_child (widget_class, HzWindow, status_spinner);
  gtk_widget_class_bind_template_child (widget_class, HzWindow, status_open_button);
  gtk_widget_class_bind_template_child (widget_class, HzWindow, window_title);
  gtk_widget_class_bind_template_child (widget_class, HzWindow, toast_overlay);

  gtk_widget_class_install_action (widget_class, "win.send", NULL, action_send);
  gtk_widget_class_install_action (widget_class, "win.stop", NULL, action_stop);
  gtk_widget_class_install_action (widget_class, "win.new-chat", NULL, action_new_chat);
  gtk_widget_class_install_action (widget_class, "win.open-model", NULL, action_open_model);

  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "win.stop", NULL);
}

static void
hz_window_init (HzWindow *self)
{
  g_type_ensure (HZ_TYPE_MESSAGE_ROW);
  gtk_widget_init_template (GTK_WIDGET (self));

  setup_lists (self);

  GtkEventController *keys = gtk_event_controller_key_new ();
  gtk_event_controller_set_propagation_phase (keys, GTK_PHASE_CAPTURE);
  g_signal_connect (keys, "key-pressed", G_CALLBACK (on_composer_key), self);
  gtk_widget_add_controller (GTK_WIDGET (self->composer), keys);

  g_signal_connect_swapped (gtk_text_view_get_buffer (self->composer), "changed",
                            G_CALLBACK (update_composer_placeholder), self);

  GtkAdjustment *vadj = gtk_scrolled_window_get_vadjustment (self->message_scroller);
  g_signal_connect (vadj, "value-changed", G_CALLBACK (on_scroll_value_changed), self);
  g_signal_connect (vadj, "notify::upper", G_CALLBACK (on_scroll_upper_changed), self);
  self->stick_to_bottom = TRUE;
}
