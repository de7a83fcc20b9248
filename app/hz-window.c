/* hz-window.c — HzWindow: the chat view of the application's HzChatSession (see
 * hz-window.h; the conversation list is in hz-window-sidebar.c, the model switcher in
 * hz-window-models.c, the frame in hz-window-layout.c, the shared struct in
 * hz-window-private.h).
 *
 * The session (hz-chat-session.h) holds the message tree, the reply being generated and
 * the store writes; this file shows its branch in `messages`, updated by splicing only
 * what changed so the GtkListView keeps its rows, and follows its signals: "showing" and
 * "shown" (another conversation; after a read in a thread its rows go in a batch per
 * frame), "branch-changed", notify::generating (Send or Stop, the actions that need a
 * model or no reply), "title-changed", "store-error" (a toast), "reply-done" (said to
 * screen readers) and "reply-error" (a dialog). The composer, the message actions, the
 * model state (from the engine worker's signals) and the scrolling are the window's own.
 * Everything here runs on the main thread.
 */
#include "hz-window.h"
#include "hz-window-private.h"

#include <glib/gi18n.h>
#include <string.h>

#include "hz-learner-bar.h"
#include "hz-markdown.h"
#include "hz-message-row.h"
#include "hz-redact-worker.h"

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

/* ------------------------------------------------------------------ the branch */

/* Show the session's branch, replacing only the rows from the first that changed. */
static void
sync_messages (HzWindow *self)
{
  g_autoptr(GPtrArray) path = hz_chat_session_get_branch (self->session);
  GListModel *model = G_LIST_MODEL (self->messages);
  guint n = g_list_model_get_n_items (model);
  guint same = 0;

  while (same < n && same < path->len)
    {
      g_autoptr(HzMessageItem) shown = g_list_model_get_item (model, same);
      if (shown != path->pdata[same])
        break;
      same++;
    }
  if (same < n || same < path->len)
    g_list_store_splice (self->messages, same, n - same, path->pdata + same, path->len - same);
}

/* Choose, at every step from the top, the branch that leads to `message_id`, and scroll to
 * it. */
static void
reveal_message (HzWindow *self, gint64 message_id)
{
  hz_chat_session_reveal (self->session, message_id);   /* "branch-changed": synced */

  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->messages));
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(HzMessageItem) it = g_list_model_get_item (G_LIST_MODEL (self->messages), i);
      if (hz_message_item_get_id (it) == message_id)
        {
          self->stick_to_bottom = FALSE;
#if GTK_CHECK_VERSION (4, 12, 0)
          gtk_list_view_scroll_to (self->message_list, i, GTK_LIST_SCROLL_FOCUS, NULL);
#endif
          break;
        }
    }
}

/* ------------------------------------------------------------------ UI state */

static void
update_composer_placeholder (HzWindow *self)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (self->composer);
  gtk_widget_set_visible (self->composer_placeholder,
                          gtk_text_buffer_get_char_count (buffer) == 0);
}

static gboolean loading_messages (HzWindow *self);
static void stop_fill (HzWindow *self);
static void reset_announcement (HzWindow *self);

static void
update_state (HzWindow *self)
{
  gboolean has_messages = g_list_model_get_n_items (G_LIST_MODEL (self->messages)) > 0;
  gboolean loading = loading_messages (self);  /* the messages are on their way */
  const char *model_path = hz_engine_worker_get_model_path (self->worker);
  g_autofree char *model_name = model_path ? model_display_name (model_path) : NULL;
  const char *title = _("Hanzo");
  g_autofree char *subtitle = NULL;
  gboolean busy = hz_chat_session_is_generating (self->session);
  gint64 conversation_id = hz_chat_session_get_conversation_id (self->session);
  gboolean ready = self->model_state == MODEL_READY;

  /* Window title: the conversation; subtitle: the model. */
  HzConversationItem *conv = hz_chat_session_find_conversation (self->session, conversation_id,
                                                                NULL);
  if (conv != NULL && conversation_id != 0)
    title = hz_conversation_item_get_title (conv);
  else if (conversation_id == 0)
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
  gtk_widget_set_visible (self->status_find_button,
                          self->model_state == MODEL_NONE || self->model_state == MODEL_FAILED);
  /* with no model: the models of the library, one click away */
  gboolean have_models = hz_window_models_offer (self, self->model_state == MODEL_NONE ||
                                                         self->model_state == MODEL_FAILED);
  switch (self->model_state)
    {
    case MODEL_NONE:
      adw_status_page_set_title (self->status_page, _("No Model"));
      adw_status_page_set_description (self->status_page, have_models
        ? _("Choose one of your models, find another on Hugging Face, or open a GGUF file "
            "you have. It runs on this computer: nothing you type leaves it.")
        : _("Find a language model on Hugging Face and download one that fits this computer, "
            "or open a GGUF file you have. It runs on this computer: nothing you type leaves "
            "it."));
      break;
    case MODEL_LOADING:
      adw_status_page_set_title (self->status_page, _("Loading Model…"));
      adw_status_page_set_description (self->status_page, model_name);
      break;
    case MODEL_FAILED:
      /* the reason is in the dialog on top (on_worker_model_error): said once */
      adw_status_page_set_title (self->status_page, _("Model Could Not Be Loaded"));
      adw_status_page_set_description (self->status_page, have_models
        ? _("Choose one of your models, find another, or open another model file (GGUF), to "
            "start chatting.")
        : _("Find another model, or open another model file (GGUF), to start chatting."));
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
  /* the messages appear at once: a cross-fade would draw the empty state's picture over
   * the first message and the first streamed tokens; back to the status page it may fade */
  if (has_messages || loading)
    gtk_stack_set_visible_child_full (self->content_stack, "chat", GTK_STACK_TRANSITION_TYPE_NONE);
  else
    gtk_stack_set_visible_child_name (self->content_stack, "status");

  /* Composer: Send while idle (needs a model), Stop while generating. */
  gtk_stack_set_visible_child_name (self->action_stack, busy ? "stop" : "send");
  /* (a message sent before the conversation is read would have no parent) */
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.send", !busy && ready && !loading);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.stop", busy);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.regenerate",
                                 !busy && ready && has_messages && !loading);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.regenerate-message", !busy && ready);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.edit-message", !busy);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.previous-alternative", !busy);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.next-alternative", !busy);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.cancel-edit",
                                 self->edit_message_id != 0);
  if (self->model_action != NULL)  /* no switching models under a reply */
    g_simple_action_set_enabled (self->model_action, !busy);
  hz_window_sync_conversation_actions (self);
}

/* ------------------------------------------------------------------ showing a conversation */

static void stick_to_end_later (HzWindow *self);

/* Show the newest message (a long conversation opens at its end). */
static void
scroll_to_end (HzWindow *self)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->messages));

  self->stick_to_bottom = TRUE;
  if (n == 0)
    return;
#if GTK_CHECK_VERSION (4, 12, 0)
  gtk_list_view_scroll_to (self->message_list, n - 1, GTK_LIST_SCROLL_NONE, NULL);
#else
  /* (not "list.scroll-to-item": in GTK 4.8 it moves the list's anchor to a far item
   * without its rows being allocated: a blank list) */
  stick_to_end_later (self);
#endif
}

static void
set_editing (HzWindow *self, gint64 message_id)
{
  self->edit_message_id = message_id;
  gtk_revealer_set_reveal_child (self->edit_revealer, message_id != 0);
}

static gboolean
loading_messages (HzWindow *self)
{
  return hz_chat_session_is_loading (self->session) || self->fill_id != 0;
}

/* ---- the rows of a conversation read off the main thread
 *
 * When the session has read a long conversation on a thread, the rows go into the list
 * newest first (inserted above the rows already shown, so the view stays at the end and
 * the rows on screen are built first), a batch at each frame of the list's frame clock
 * (fill_tick()), so that the row widgets GTK makes, measures and draws for them are
 * spread over many frames instead of one stall. Another conversation shown stops it. */

#define FILL_BUDGET_US 6000  /* of one frame (16.7 ms at 60 Hz) */
#define FILL_BATCH_MIN 2
#define FILL_NEAR_ROWS 200   /* GTK 4.8's list view builds rows for up to 200 items */

/* The frame with the last batch is drawn: its whole cost (the rows put in, their widgets
 * made, measured, allocated and drawn) sizes the next batch to take about FILL_BUDGET_US,
 * at least FILL_BATCH_MIN rows. */
static void
on_fill_painted (GdkFrameClock *clock, HzWindow *self)
{
  if (self->fill_taken == 0)
    return;
  gint64 per_row = MAX ((g_get_monotonic_time () - self->fill_start_us) / self->fill_taken, 1);
  self->fill_batch = CLAMP (FILL_BUDGET_US / per_row, FILL_BATCH_MIN, FILL_NEAR_ROWS);
  self->fill_taken = 0;
}

static void
stop_fill (HzWindow *self)
{
  if (self->fill_id != 0 && self->message_list != NULL)
    gtk_widget_remove_tick_callback (GTK_WIDGET (self->message_list), self->fill_id);
  self->fill_id = 0;
  if (self->fill_paint_id != 0)
    g_clear_signal_handler (&self->fill_paint_id, self->fill_clock);
  g_clear_object (&self->fill_clock);
}

/* Put in one batch of rows, newest first, above those shown. Past the FILL_NEAR_ROWS
 * newest, the older messages get no widget (GTK 4.8's list view makes widgets for up to
 * that many items around the one shown): they go in at once. Returns whether rows are
 * left. */
static gboolean
fill_batch (HzWindow *self)
{
  g_autoptr(GPtrArray) path = hz_chat_session_get_branch (self->session);
  guint shown = g_list_model_get_n_items (G_LIST_MODEL (self->messages));

  /* the rows shown are the end of the branch (sync_messages() would have put in the whole
   * branch, had anything changed it) */
  if (shown >= path->len)
    return FALSE;
  guint missing = path->len - shown;
  guint take = shown >= FILL_NEAR_ROWS ? missing : MIN (missing, self->fill_batch);
  self->fill_start_us = g_get_monotonic_time ();
  self->fill_taken = take;
  g_list_store_splice (self->messages, 0, 0, path->pdata + missing - take, take);
  return take < missing;
}

static gboolean
fill_tick (GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
  HzWindow *self = data;

  if (self->fill_taken != 0)
    return G_SOURCE_CONTINUE;  /* the last batch is not drawn yet */
  if (fill_batch (self))
    return G_SOURCE_CONTINUE;
  self->fill_id = 0;  /* (removed by returning G_SOURCE_REMOVE) */
  stop_fill (self);
  update_state (self);
  return G_SOURCE_REMOVE;
}

/* Put the read rows in: the first batch now (the end: what the view shows first), the
 * rest at the next frames. */
static void
start_fill (HzWindow *self)
{
  GtkWidget *list = GTK_WIDGET (self->message_list);

  self->fill_batch = FILL_BATCH_MIN * 4;
  self->fill_taken = 0;
  if (!fill_batch (self))
    {
      self->fill_taken = 0;
      return;
    }
  self->fill_clock = gtk_widget_get_frame_clock (list);
  if (self->fill_clock == NULL)
    {
      /* not shown: no frames to spread the rows over */
      while (fill_batch (self))
        ;
      self->fill_taken = 0;
      return;
    }
  g_object_ref (self->fill_clock);
  self->fill_paint_id = g_signal_connect (self->fill_clock, "after-paint",
                                          G_CALLBACK (on_fill_painted), self);
  self->fill_id = gtk_widget_add_tick_callback (list, fill_tick, self, NULL);
}

/* The session shows another conversation (its tree is empty now). */
static void
on_session_showing (HzChatSession *session, gint64 conversation_id, gboolean reading,
                    HzWindow *self)
{
  stop_fill (self);
  reset_announcement (self);
  self->stick_to_bottom = TRUE;
  set_editing (self, 0);
  if (reading)
    {
      /* the list is empty until the messages are read */
      g_list_store_remove_all (self->messages);
      update_state (self);
    }
}

/* Its messages are in the tree: all at once when read on this thread (scripts and tests
 * expect them when hz_window_select_conversation() returns), else a batch per frame. */
static void
on_session_shown (HzChatSession *session, gint64 reveal_id, gboolean read_in_thread,
                  HzWindow *self)
{
  if (!read_in_thread)
    {
      sync_messages (self);
      scroll_to_end (self);
      update_state (self);
      if (reveal_id != 0)
        reveal_message (self, reveal_id);
      return;
    }
  if (reveal_id != 0)
    {
      reveal_message (self, reveal_id);  /* puts in the whole branch */
      update_state (self);
      return;
    }
  scroll_to_end (self);
  start_fill (self);
  if (self->fill_id == 0)
    update_state (self);
}

static void
on_session_branch_changed (HzChatSession *session, HzWindow *self)
{
  sync_messages (self);
}

/* ------------------------------------------------------------------ sending */

/* `text` without its leading blank lines and its trailing white space, in place; the first
 * line keeps its indentation (a pasted code block keeps its shape). Returns `text`. */
static char *
trim_message (char *text)
{
  char *line = text;
  for (char *p = text; *p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'; p++)
    if (*p == '\n')
      line = p + 1;
  memmove (text, line, strlen (line) + 1);
  return g_strchomp (text);
}

static char *
composer_take_text (HzWindow *self)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (self->composer);
  GtkTextIter start, end;

  gtk_text_buffer_get_bounds (buffer, &start, &end);
  g_autofree char *text = gtk_text_buffer_get_text (buffer, &start, &end, FALSE);
  trim_message (text);
  if (*text == '\0')
    return NULL;
  reset_announcement (self);
  gtk_text_buffer_set_text (buffer, "", 0);
  return g_steal_pointer (&text);
}

static void
send_message (HzWindow *self)
{
  if (hz_chat_session_is_generating (self->session) || self->model_state != MODEL_READY)
    return;
  g_autofree char *text = composer_take_text (self);
  if (text == NULL)
    return;

  gint64 edit_of = self->edit_message_id;
  set_editing (self, 0);
  self->stick_to_bottom = TRUE;
  hz_chat_session_send (self->session, text, edit_of);
}

/* Screen readers: say the finished reply, as plain text (its Markdown rendered). GTK 4.14
 * and later announce it. Older GTK has no announcements and tells assistive technologies
 * only about widgets they have already looked at, which a new reply's row is not; the
 * composer, where the keyboard focus is after sending, is: its accessible description
 * becomes the reply (AT-SPI reports an accessible-description change on the focused
 * object, which Orca speaks), until the next message is sent or another conversation is
 * shown (reset_announcement()). */
static void
announce_reply (HzWindow *self, const char *markdown)
{
  if (*markdown == '\0')
    return;
  g_autoptr(GPtrArray) blocks = hz_markdown_parse (markdown, -1);
  g_autofree char *plain = hz_md_blocks_to_plain (blocks);
#if GTK_CHECK_VERSION (4, 14, 0)
  gtk_accessible_announce (GTK_ACCESSIBLE (self), plain,
                           GTK_ACCESSIBLE_ANNOUNCEMENT_PRIORITY_MEDIUM);
#else
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->composer),
                                  GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, plain, -1);
#endif
}

static void
reset_announcement (HzWindow *self)
{
#if !GTK_CHECK_VERSION (4, 14, 0)
  gtk_accessible_reset_property (GTK_ACCESSIBLE (self->composer),
                                 GTK_ACCESSIBLE_PROPERTY_DESCRIPTION);
#endif
}

static void
on_session_generating (HzChatSession *session, GParamSpec *pspec, HzWindow *self)
{
  if (hz_chat_session_is_generating (session))
    self->stick_to_bottom = TRUE;
  update_state (self);
}

static void
on_session_reply_done (HzChatSession *session, const char *text, HzWindow *self)
{
  announce_reply (self, text);
}

static void
on_session_reply_error (HzChatSession *session, GError *error, HzWindow *self)
{
  if (g_error_matches (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_CONTEXT_FULL))
    {
      /* only a single message longer than the context gets here: earlier messages are
       * left out as needed (hz_engine_worker_generate) */
      g_autofree char *body = g_strdup_printf (
        _("This message alone is longer than the model can read at once (its context). "
          "Shorten it or split it into several messages.\n\n%s"),
        error->message);
      hz_window_alert (self, _("Message Too Long"), body);
    }
  else
    {
      hz_window_alert (self, _("The Reply Could Not Be Generated"), error->message);
    }
}

static void
on_session_title_changed (HzChatSession *session, gint64 conversation_id, HzWindow *self)
{
  update_state (self);
}

static void
on_session_store_error (HzChatSession *session, GError *error, HzWindow *self)
{
  hz_window_report_store_error (self, error);
}

/* ------------------------------------------------------------------ message actions */

static HzMessageItem *
target_item (HzWindow *self, GVariant *param)
{
  return param ? hz_chat_session_get_message (self->session, g_variant_get_int64 (param)) : NULL;
}

static void
action_send (GtkWidget *widget, const char *name, GVariant *param)
{
  send_message (HZ_WINDOW (widget));
}

static void
action_stop (GtkWidget *widget, const char *name, GVariant *param)
{
  hz_chat_session_stop (HZ_WINDOW (widget)->session);
}

/* Regenerate the reply `item` (an assistant message): a new sibling answers its parent. */
static void
regenerate (HzWindow *self, HzMessageItem *item)
{
  if (self->model_state != MODEL_READY || item == NULL)
    return;
  hz_chat_session_regenerate (self->session, hz_message_item_get_id (item));
}

static void
action_regenerate (GtkWidget *widget, const char *name, GVariant *param)
{
  HzWindow *self = HZ_WINDOW (widget);
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->messages));
  g_autoptr(HzMessageItem) last = n ? g_list_model_get_item (G_LIST_MODEL (self->messages), n - 1) : NULL;
  regenerate (self, last);
}

static void
action_regenerate_message (GtkWidget *widget, const char *name, GVariant *param)
{
  HzWindow *self = HZ_WINDOW (widget);
  regenerate (self, target_item (self, param));
}

static void
action_edit_message (GtkWidget *widget, const char *name, GVariant *param)
{
  HzWindow *self = HZ_WINDOW (widget);
  HzMessageItem *item = target_item (self, param);

  if (item == NULL || hz_message_item_get_role (item) != HZ_ROLE_USER ||
      hz_chat_session_is_generating (self->session))
    return;
  gtk_text_buffer_set_text (gtk_text_view_get_buffer (self->composer),
                            hz_message_item_get_text (item), -1);
  set_editing (self, hz_message_item_get_id (item));
  update_state (self);
  gtk_widget_grab_focus (GTK_WIDGET (self->composer));
}

static void
action_cancel_edit (GtkWidget *widget, const char *name, GVariant *param)
{
  HzWindow *self = HZ_WINDOW (widget);

  if (self->edit_message_id == 0)
    return;
  gtk_text_buffer_set_text (gtk_text_view_get_buffer (self->composer), "", 0);
  set_editing (self, 0);
  update_state (self);
}

static void
action_copy_message (GtkWidget *widget, const char *name, GVariant *param)
{
  HzWindow *self = HZ_WINDOW (widget);
  HzMessageItem *item = target_item (self, param);

  if (item == NULL)
    return;
  gdk_clipboard_set_text (gtk_widget_get_clipboard (widget), hz_message_item_get_text (item));
  hz_window_notify (self, _("Message copied"));
}

static void
rate (HzWindow *self, GVariant *param, int want)
{
  if (param != NULL)
    hz_chat_session_rate (self->session, g_variant_get_int64 (param), want);
}

static void
action_rate_good (GtkWidget *widget, const char *name, GVariant *param)
{
  rate (HZ_WINDOW (widget), param, +1);
}

static void
action_rate_bad (GtkWidget *widget, const char *name, GVariant *param)
{
  rate (HZ_WINDOW (widget), param, -1);
}

static void
page_alternatives (HzWindow *self, GVariant *param, int delta)
{
  if (param == NULL ||
      !hz_chat_session_page_alternative (self->session, g_variant_get_int64 (param), delta))
    return;
  if (self->edit_message_id != 0)
    action_cancel_edit (GTK_WIDGET (self), NULL, NULL);
  update_state (self);
}

static void
action_previous_alternative (GtkWidget *widget, const char *name, GVariant *param)
{
  page_alternatives (HZ_WINDOW (widget), param, -1);
}

static void
action_next_alternative (GtkWidget *widget, const char *name, GVariant *param)
{
  page_alternatives (HZ_WINDOW (widget), param, +1);
}

/* ------------------------------------------------------------------ model */

static void
on_worker_model_loaded (HzEngineWorker *worker, const char *path, const char *name,
                        HzWindow *self)
{
  if (g_strcmp0 (path, hz_engine_worker_get_model_path (worker)) != 0)
    return;  /* superseded by a later request */
  self->model_state = MODEL_READY;
  hz_window_models_sync (self);
  update_state (self);
}

static void
on_worker_model_error (HzEngineWorker *worker, const char *path, GError *error,
                       HzWindow *self)
{
  if (g_strcmp0 (path, hz_engine_worker_get_model_path (worker)) != 0)
    return;
  self->model_state = MODEL_FAILED;
  update_state (self);

  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *body = g_strdup_printf (_("“%s” could not be loaded as a language model.\n\n%s"),
                                           base, error->message);
  hz_window_alert (self, _("Cannot Open Model"), body);
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
  hz_window_models_sync (self);
  on_model_requested (self);
}

static void
on_worker_context_changed (HzEngineWorker *worker, guint n_ctx, HzWindow *self)
{
  g_autofree char *msg = g_strdup_printf (_("Context length: %u tokens"), n_ctx);
  hz_window_notify (self, msg);
}

/* The learner's adapter could not be used: the base model answers. Told once per adapter
 * (the worker reports a path again when the adapters are set again; the details are in
 * the worker's log). */
static void
on_worker_adapter_error (HzEngineWorker *worker, const char *path, GError *error,
                         HzWindow *self)
{
  if (g_strcmp0 (path, self->adapter_error_path) == 0)
    return;
  g_free (self->adapter_error_path);
  self->adapter_error_path = g_strdup (path);
  hz_window_notify (self, _("The personal adapter could not be loaded; the base model answers"));
}

#if GTK_CHECK_VERSION (4, 10, 0)
static void
on_file_dialog_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  HzWindow *self = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GFile) file = gtk_file_dialog_open_finish (GTK_FILE_DIALOG (source), result, &error);

  g_autofree char *path = file != NULL ? g_file_get_path (file) : NULL;  /* NULL: dismissed */
  if (path != NULL)
    hz_app_context_open_model (self->ctx, path, TRUE);
  g_object_unref (self);
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
        hz_app_context_open_model (self->ctx, path, TRUE);
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

static void
action_new_chat (GtkWidget *widget, const char *name, GVariant *param)
{
  hz_window_start_new_chat (HZ_WINDOW (widget));
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
  double value = gtk_adjustment_get_value (adj);

  /* At the end: follow the text. Moved up (the user scrolls back): stop following. The
   * end moving away (rows measured, a reply growing) is no reason to stop. */
  if (value >= bottom - 32)
    self->stick_to_bottom = TRUE;
  else if (value < self->last_scroll - 1)
    self->stick_to_bottom = FALSE;
  self->last_scroll = value;
}

static gboolean
stick_idle (gpointer data)
{
  HzWindow *self = data;
  GtkAdjustment *adj = gtk_scrolled_window_get_vadjustment (self->message_scroller);

  self->stick_id = 0;
  if (self->stick_to_bottom)
    gtk_adjustment_set_value (adj, gtk_adjustment_get_upper (adj) -
                                   gtk_adjustment_get_page_size (adj));
  return G_SOURCE_REMOVE;
}

/* Scroll to the end once the current layout is done. Moving the adjustment from inside
 * the list's size-allocate (where notify::upper comes from) left GTK 4.8's GtkListView
 * showing its first row over a blank list while the scrollbar said "at the end" (a
 * 2,000-message conversation opened blank); after the layout it follows. */
static void
stick_to_end_later (HzWindow *self)
{
  if (self->stick_id == 0)
    self->stick_id = g_idle_add_full (G_PRIORITY_HIGH_IDLE + 30, stick_idle, self, NULL);
}

static void
on_scroll_upper_changed (GtkAdjustment *adj, GParamSpec *pspec, HzWindow *self)
{
  if (self->stick_to_bottom)
    stick_to_end_later (self);
}

/* ------------------------------------------------------------------ message list */

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
setup_message_list (HzWindow *self)
{
  self->messages = g_list_store_new (HZ_TYPE_MESSAGE_ITEM);

  GtkNoSelection *nosel = gtk_no_selection_new (G_LIST_MODEL (g_object_ref (self->messages)));
  GtkListItemFactory *factory = gtk_signal_list_item_factory_new ();
  g_signal_connect (factory, "setup", G_CALLBACK (message_setup), NULL);
  g_signal_connect (factory, "bind", G_CALLBACK (message_bind), NULL);
  g_signal_connect (factory, "unbind", G_CALLBACK (message_unbind), NULL);
  gtk_list_view_set_model (self->message_list, GTK_SELECTION_MODEL (nosel));
  gtk_list_view_set_factory (self->message_list, factory);
  g_object_unref (factory);
  g_object_unref (nosel);
}

/* ------------------------------------------------------------------ attaching */

static void
on_learner_call_failed (HzLearner *learner, const char *method, const char *message,
                        HzWindow *self)
{
  /* Pause/Resume failing is not worth a notice; the user's own requests are. Learn Now's
   * reason (no model to learn on, battery, paused) may be long: a dialog, not a toast. */
  if (g_strcmp0 (method, "LearnNow") == 0)
    {
      g_autofree char *body = g_strdup_printf (_("The learner cannot start now: %s."), message);
      hz_window_alert (self, _("Cannot Learn Now"), body);
    }
  else if (g_strcmp0 (method, "NeverLearn") == 0)
    {
      g_autofree char *text = g_strdup_printf (_("Learner: %s"), message);
      hz_window_notify (self, text);
    }
}

/* While other apps are served (or it fails), a header button says so, with the address;
 * it opens the preferences. */
static void
on_app_server_changed (HzAppServer *server, HzWindow *self)
{
  const HzAppServerState state = hz_app_server_get_state (server);
  const gboolean shown = state == HZ_APP_SERVER_ON || state == HZ_APP_SERVER_FAILED;

  gtk_widget_set_visible (self->serve_indicator, shown);
  gtk_widget_set_tooltip_text (self->serve_indicator, hz_app_server_get_message (server));
  if (state == HZ_APP_SERVER_FAILED)
    gtk_widget_add_css_class (self->serve_indicator, "error");
  else
    gtk_widget_remove_css_class (self->serve_indicator, "error");
}

/* Follow the session (see the top of this file). */
static void
connect_session (HzWindow *self)
{
  const struct { const char *signal; GCallback callback; } handlers[] = {
    { "showing", G_CALLBACK (on_session_showing) },
    { "shown", G_CALLBACK (on_session_shown) },
    { "branch-changed", G_CALLBACK (on_session_branch_changed) },
    { "notify::generating", G_CALLBACK (on_session_generating) },
    { "reply-done", G_CALLBACK (on_session_reply_done) },
    { "reply-error", G_CALLBACK (on_session_reply_error) },
    { "title-changed", G_CALLBACK (on_session_title_changed) },
  };
  G_STATIC_ASSERT (G_N_ELEMENTS (handlers) == G_N_ELEMENTS (((HzWindow *) NULL)->session_handlers));
  for (guint i = 0; i < G_N_ELEMENTS (handlers); i++)
    self->session_handlers[i] = g_signal_connect (self->session, handlers[i].signal,
                                                  handlers[i].callback, self);
  g_signal_connect_object (self->session, "store-error", G_CALLBACK (on_session_store_error),
                           self, 0);
}

/* Connect the window to the application's objects (from hz_window_new()). */
static void
attach (HzWindow *self, HzAppContext *ctx, HzChatSession *session)
{
  self->ctx = g_object_ref (ctx);
  self->session = g_object_ref (session);
  self->worker = g_object_ref (hz_app_context_get_worker (ctx));
  self->settings = g_object_ref (hz_app_context_get_settings (ctx));

  const struct { const char *signal; GCallback callback; } worker_handlers[] = {
    { "model-loaded", G_CALLBACK (on_worker_model_loaded) },
    { "model-error", G_CALLBACK (on_worker_model_error) },
    { "model-loading", G_CALLBACK (on_worker_model_loading) },
    { "context-changed", G_CALLBACK (on_worker_context_changed) },
    { "adapter-error", G_CALLBACK (on_worker_adapter_error) },
  };
  for (guint i = 0; i < G_N_ELEMENTS (worker_handlers); i++)
    self->worker_handlers[i] = g_signal_connect (self->worker, worker_handlers[i].signal,
                                                 worker_handlers[i].callback, self);

  g_settings_bind (self->settings, "window-width", self, "default-width", G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (self->settings, "window-height", self, "default-height", G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (self->settings, "window-maximized", self, "maximized", G_SETTINGS_BIND_DEFAULT);

  HzAppServer *server = hz_app_context_get_app_server (ctx);
  g_signal_connect_object (server, "changed", G_CALLBACK (on_app_server_changed), self, 0);
  on_app_server_changed (server, self);
  connect_session (self);
  hz_window_sidebar_attach (self);
  hz_window_models_attach (self);
  /* the empty page's offer of models (after the switcher's own handler) */
  g_signal_connect_object (hz_model_library_get_models (hz_app_context_get_model_library (ctx)),
                           "items-changed", G_CALLBACK (update_state), self, G_CONNECT_SWAPPED);
  HzLearner *learner = hz_app_context_get_learner (ctx);
  self->learner_bar = hz_learner_bar_new (learner);
  gtk_box_append (GTK_BOX (self->sidebar_pane), self->learner_bar);
  self->learner_failed_id = g_signal_connect (learner, "call-failed",
                                              G_CALLBACK (on_learner_call_failed), self);
  hz_chat_session_show (self->session, 0);
  on_model_requested (self);
  HzStore *store = hz_app_context_get_store (ctx);
  /* catch up with earlier runs */
  hz_redact_worker_notify (hz_app_context_get_application (ctx), store);
  if (store == NULL)
    adw_toast_overlay_add_toast (self->toast_overlay,
                                 adw_toast_new (_("Conversations cannot be saved on this computer")));
}

/* ------------------------------------------------------------------ public API */

HzWindow *
hz_window_new (GtkApplication *app, HzAppContext *ctx, HzChatSession *session)
{
  g_return_val_if_fail (GTK_IS_APPLICATION (app), NULL);
  g_return_val_if_fail (HZ_IS_APP_CONTEXT (ctx), NULL);
  g_return_val_if_fail (HZ_IS_CHAT_SESSION (session), NULL);
  HzWindow *self = g_object_new (HZ_TYPE_WINDOW, "application", app, NULL);
  attach (self, ctx, session);
  return self;
}

HzChatSession *
hz_window_get_session (HzWindow *self)
{
  g_return_val_if_fail (HZ_IS_WINDOW (self), NULL);
  return self->session;
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
  return hz_chat_session_get_conversations (self->session);
}

GListModel *
hz_window_get_messages (HzWindow *self)
{
  g_return_val_if_fail (HZ_IS_WINDOW (self), NULL);
  return G_LIST_MODEL (self->messages);
}

GtkListView *
hz_window_get_message_list (HzWindow *self)
{
  g_return_val_if_fail (HZ_IS_WINDOW (self), NULL);
  return self->message_list;
}

gint64
hz_window_get_conversation_id (HzWindow *self)
{
  g_return_val_if_fail (HZ_IS_WINDOW (self), 0);
  return hz_chat_session_get_conversation_id (self->session);
}

const char *
hz_window_get_system_prompt (HzWindow *self)
{
  g_return_val_if_fail (HZ_IS_WINDOW (self), NULL);
  return hz_chat_session_get_system_prompt (self->session);
}

gint64
hz_window_get_editing (HzWindow *self)
{
  g_return_val_if_fail (HZ_IS_WINDOW (self), 0);
  return self->edit_message_id;
}

gboolean
hz_window_is_folded (HzWindow *self)
{
  g_return_val_if_fail (HZ_IS_WINDOW (self), FALSE);
  return hz_window_folded (self);
}

void
hz_window_select_conversation (HzWindow *self, guint position)
{
  g_return_if_fail (HZ_IS_WINDOW (self));
  hz_window_select_conversation_now (self, position);
}

gboolean
hz_window_is_generating (HzWindow *self)
{
  g_return_val_if_fail (HZ_IS_WINDOW (self), FALSE);
  return hz_chat_session_is_generating (self->session);
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
  hz_window_alert (self, heading, body);
}

GListModel *
hz_window_get_search_results (HzWindow *self)
{
  g_return_val_if_fail (HZ_IS_WINDOW (self), NULL);
  return G_LIST_MODEL (self->search_results);
}

void
hz_window_export_to_file (HzWindow *self, HzExportFormat format, GFile *file)
{
  g_return_if_fail (HZ_IS_WINDOW (self));
  g_return_if_fail (G_IS_FILE (file));
  hz_window_export (self, format, file);
}

void
hz_window_commit_deletes (HzWindow *self)
{
  g_return_if_fail (HZ_IS_WINDOW (self));
  hz_chat_session_commit_deletes (self->session);
}

GtkWidget *
hz_window_get_learner_bar (HzWindow *self)
{
  g_return_val_if_fail (HZ_IS_WINDOW (self), NULL);
  return self->learner_bar;
}

/* ------------------------------------------------------------------ GObject */

static void
hz_window_dispose (GObject *object)
{
  HzWindow *self = HZ_WINDOW (object);

  g_clear_handle_id (&self->stick_id, g_source_remove);
  stop_fill (self);
  if (self->worker != NULL)
    for (guint i = 0; i < G_N_ELEMENTS (self->worker_handlers); i++)
      g_clear_signal_handler (&self->worker_handlers[i], self->worker);
  if (self->session != NULL)
    {
      for (guint i = 0; i < G_N_ELEMENTS (self->session_handlers); i++)
        g_clear_signal_handler (&self->session_handlers[i], self->session);
      g_signal_handlers_disconnect_by_data (self->session, self);
      /* a reply cut short by closing the window keeps its text (saved, marked complete);
       * conversations waiting for Undo are deleted */
      hz_chat_session_close (self->session);
    }
  if (self->ctx != NULL && self->learner_failed_id != 0)
    g_clear_signal_handler (&self->learner_failed_id, hz_app_context_get_learner (self->ctx));
  hz_window_sidebar_dispose (self);
  hz_window_models_dispose (self);
  g_clear_weak_pointer (&self->info_toast);
  g_clear_object (&self->worker);
  g_clear_object (&self->settings);
  g_clear_object (&self->messages);
  g_clear_object (&self->session);
  g_clear_object (&self->ctx);
  gtk_widget_dispose_template (GTK_WIDGET (self), HZ_TYPE_WINDOW);
  G_OBJECT_CLASS (hz_window_parent_class)->dispose (object);
}

static void
hz_window_finalize (GObject *object)
{
  HzWindow *self = HZ_WINDOW (object);

  g_free (self->adapter_error_path);
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
#define CHILD(name) gtk_widget_class_bind_template_child (widget_class, HzWindow, name)
  CHILD (sidebar_pane);
  CHILD (sidebar_header);
  CHILD (conversation_list);
  CHILD (search_list);
  CHILD (search_bar);
  CHILD (search_entry);
  CHILD (search_button);
  CHILD (sidebar_stack);
  CHILD (chat_pane);
  CHILD (chat_header);
  CHILD (back_button);
  CHILD (conversation_menu_button);
  CHILD (message_list);
  CHILD (message_scroller);
  CHILD (composer);
  CHILD (composer_placeholder);
  CHILD (content_stack);
  CHILD (action_stack);
  CHILD (status_page);
  CHILD (status_spinner);
  CHILD (status_open_button);
  CHILD (status_find_button);
  CHILD (status_models);
  CHILD (window_title);
  CHILD (toast_overlay);
  CHILD (edit_revealer);
  CHILD (model_button);
  CHILD (model_label);
  CHILD (open_model_button);
  CHILD (serve_indicator);
#undef CHILD
  hz_window_sidebar_class_init (widget_class);

  gtk_widget_class_install_action (widget_class, "win.send", NULL, action_send);
  gtk_widget_class_install_action (widget_class, "win.stop", NULL, action_stop);
  gtk_widget_class_install_action (widget_class, "win.new-chat", NULL, action_new_chat);
  gtk_widget_class_install_action (widget_class, "win.open-model", NULL, action_open_model);
  gtk_widget_class_install_action (widget_class, "win.regenerate", NULL, action_regenerate);
  gtk_widget_class_install_action (widget_class, "win.regenerate-message", "x",
                                   action_regenerate_message);
  gtk_widget_class_install_action (widget_class, "win.edit-message", "x", action_edit_message);
  gtk_widget_class_install_action (widget_class, "win.cancel-edit", NULL, action_cancel_edit);
  gtk_widget_class_install_action (widget_class, "win.copy-message", "x", action_copy_message);
  gtk_widget_class_install_action (widget_class, "win.rate-good", "x", action_rate_good);
  gtk_widget_class_install_action (widget_class, "win.rate-bad", "x", action_rate_bad);
  gtk_widget_class_install_action (widget_class, "win.previous-alternative", "x",
                                   action_previous_alternative);
  gtk_widget_class_install_action (widget_class, "win.next-alternative", "x",
                                   action_next_alternative);

  /* Esc stops a reply, or else leaves editing a message. */
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "win.stop", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "win.cancel-edit", NULL);
}

static void
hz_window_init (HzWindow *self)
{
  g_type_ensure (HZ_TYPE_MESSAGE_ROW);
  gtk_widget_init_template (GTK_WIDGET (self));

  hz_window_setup_layout (self, G_CALLBACK (hz_window_models_update_header));
  setup_message_list (self);
  hz_window_sidebar_init (self);

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
