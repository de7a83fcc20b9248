/* hz-window.c — HzWindow: the chat (see hz-window.h; the conversation list is in
 * hz-window-sidebar.c, the shared struct in hz-window-private.h).
 *
 * A conversation is a tree of messages (hanzo-store-feedback.h): regenerating a reply or
 * editing a user message adds a sibling, and the chat view shows one branch, choosing the
 * newest sibling at each step unless the user paged to another (self->choices). `nodes`
 * and `children` index every message of the shown conversation; `messages` is the branch
 * on screen, updated by splicing only what changed so the GtkListView keeps its rows.
 *
 * Flow of one reply: start_reply() saves an empty, incomplete assistant message under the
 * user message it answers, shows it, and queues the generation on the engine worker.
 * "token" signals append to the item; a timer writes the text and the number of tokens
 * generated so far to the store every SAVE_INTERVAL_MS while it grows (a crash loses
 * under a second of text); closing the window mid-reply saves both too; "finished"
 * writes the final text and stats and marks it complete; "error" keeps whatever text
 * arrived (or drops the empty reply) and shows a dialog. Everything here runs on the main
 * thread; the store calls are short single-row writes (WAL).
 */
#include "hz-window-private.h"

#include <glib/gi18n.h>
#include <hanzo-store-feedback.h>
#include <hanzo-store-limits.h>
#include <math.h>
#include <string.h>

#include "hz-learner-bar.h"
#include "hz-markdown.h"
#include "hz-message-row.h"
#include "hz-model-settings.h"
#include "hz-redact-worker.h"

#define SAVE_INTERVAL_MS 500  /* a streamed reply is saved at least this often */
#define TITLE_MAX_CHARS  48

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

/* The line under a reply: its stats; "Interrupted" when it was never completed (the app
 * died mid-reply); marked as cut when it stopped at its token limit (issue 20). */
static char *
reply_details (gint64 n_tokens, double tokens_per_s, gboolean complete, gboolean cut)
{
  if (!complete)
    return g_strdup (_("Interrupted"));
  g_autofree char *stats = stats_details (n_tokens, tokens_per_s);
  if (!cut)
    return g_steal_pointer (&stats);
  if (stats == NULL)
    return g_strdup (_("Cut off at the reply length limit"));
  /* TRANSLATORS: appended to "12 tokens · 30.0 tokens/s" */
  return g_strdup_printf (_("%s · cut off at the reply length limit"), stats);
}

static gint64 *
id_key (gint64 id)
{
  return g_memdup2 (&id, sizeof id);
}

static void
on_notice_dismissed (AdwToast *toast, HzWindow *self)
{
  if (self->info_toast == toast)
    g_clear_weak_pointer (&self->info_toast);
}

/* A short notice ("Message copied"). While one is on screen, its text is replaced rather
 * than queueing another (libadwaita shows one toast at a time: an Undo toast would wait
 * behind a queue of notices). */
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
hz_window_report_store_error (HzWindow *self, GError *error)
{
  g_autofree char *msg = g_strdup_printf (_("Could not save: %s"), error->message);
  g_warning ("store: %s", error->message);
  hz_window_notify (self, msg);
}

static void
toast (HzWindow *self, const char *text)
{
  hz_window_notify (self, text);
}

gboolean
hz_window_generating (HzWindow *self)
{
  return self->request_id != 0;
}

/* ------------------------------------------------------------------ message tree */

static void
tree_clear (HzWindow *self)
{
  g_hash_table_remove_all (self->nodes);
  g_hash_table_remove_all (self->children);
  g_hash_table_remove_all (self->choices);
}

static void
tree_add (HzWindow *self, HzMessageItem *item)
{
  gint64 parent = hz_message_item_get_parent_id (item);
  GPtrArray *kids = g_hash_table_lookup (self->children, &parent);

  if (kids == NULL)
    {
      kids = g_ptr_array_new_with_free_func (g_object_unref);
      g_hash_table_insert (self->children, id_key (parent), kids);
    }
  g_ptr_array_add (kids, g_object_ref (item));
  g_hash_table_insert (self->nodes, id_key (hz_message_item_get_id (item)), g_object_ref (item));
}

static void
tree_choose (HzWindow *self, gint64 parent_id, gint64 child_id)
{
  g_hash_table_insert (self->choices, id_key (parent_id), id_key (child_id));
}

static HzMessageItem *
tree_get (HzWindow *self, gint64 id)
{
  return g_hash_table_lookup (self->nodes, &id);
}

/* The branch to show: from the first message, the chosen (else newest) child each step.
 * Sets each item's position among its alternatives. Borrowed items. */
static GPtrArray *
tree_path (HzWindow *self)
{
  GPtrArray *path = g_ptr_array_new ();
  guint n_nodes = g_hash_table_size (self->nodes);
  gint64 parent = 0;

  while (path->len < n_nodes)
    {
      GPtrArray *kids = g_hash_table_lookup (self->children, &parent);
      if (kids == NULL || kids->len == 0)
        break;
      gint64 *chosen = g_hash_table_lookup (self->choices, &parent);
      guint index = kids->len - 1;
      for (guint i = 0; chosen != NULL && i < kids->len; i++)
        if (hz_message_item_get_id (kids->pdata[i]) == *chosen)
          index = i;
      HzMessageItem *item = kids->pdata[index];
      hz_message_item_set_alternative (item, index, kids->len);
      g_ptr_array_add (path, item);
      parent = hz_message_item_get_id (item);
    }
  /* the conversation says once that earlier messages are beyond what the model sees:
   * above the branch's first reply written without them */
  gboolean said = FALSE;
  for (guint i = 0; i < path->len; i++)
    {
      gboolean here = !said && hz_message_item_get_n_unseen (path->pdata[i]) > 0;
      hz_message_item_set_context_notice (path->pdata[i], here);
      said |= here;
    }
  return path;
}

/* Show the current branch, replacing only the rows from the first that changed. */
static void
sync_messages (HzWindow *self)
{
  g_autoptr(GPtrArray) path = tree_path (self);
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

/* An id for a message that could not be stored (or with no store): negative, unique. */
static gint64
local_id (HzWindow *self)
{
  return --self->next_local_id;
}

/* Choose, at every step from the top, the branch that leads to `message_id`. */
void
hz_window_reveal_message (HzWindow *self, gint64 message_id)
{
  HzMessageItem *item = tree_get (self, message_id);
  guint guard = g_hash_table_size (self->nodes);

  while (item != NULL && guard-- > 0)
    {
      gint64 parent = hz_message_item_get_parent_id (item);
      tree_choose (self, parent, hz_message_item_get_id (item));
      item = parent != 0 ? tree_get (self, parent) : NULL;
    }
  sync_messages (self);

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

void
hz_window_update_state (HzWindow *self)
{
  gboolean has_messages = g_list_model_get_n_items (G_LIST_MODEL (self->messages)) > 0;
  gboolean loading = loading_messages (self);  /* the messages are on their way */
  const char *model_path = hz_engine_worker_get_model_path (self->worker);
  g_autofree char *model_name = model_path ? model_display_name (model_path) : NULL;
  const char *title = _("Hanzo");
  g_autofree char *subtitle = NULL;
  gboolean busy = hz_window_generating (self);
  gboolean ready = self->model_state == MODEL_READY;

  /* Window title: the conversation; subtitle: the model. */
  HzConversationItem *conv = hz_window_find_conversation (self, self->conversation_id, NULL);
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

/* `limits`: message id -> HzMessageLimits* (nullable). */
static HzMessageItem *
item_for_message (HzWindow *self, HzMessage *m, GHashTable *ratings, GHashTable *limits)
{
  if (self->reply_item != NULL && m->id == self->reply_message_id)
    return g_object_ref (self->reply_item);  /* still streaming: keep following it */

  HzMessageItem *item = hz_message_item_new (m->id, m->role, m->content);
  hz_message_item_set_reasoning (item, m->reasoning);
  hz_message_item_set_parent_id (item, m->parent_id);
  if (m->role == HZ_ROLE_ASSISTANT)
    {
      const HzMessageLimits *l = limits ? g_hash_table_lookup (limits, &m->id) : NULL;
      g_autofree char *details = reply_details (m->n_tokens, m->tokens_per_s, m->complete,
                                                l && l->cut);
      hz_message_item_set_stats (item, m->n_tokens, m->tokens_per_s);
      hz_message_item_set_cut (item, l && l->cut);
      hz_message_item_set_n_unseen (item, l ? l->n_unseen : 0);
      hz_message_item_set_details (item, details);
      if (ratings != NULL)
        hz_message_item_set_rating (item, GPOINTER_TO_INT (g_hash_table_lookup (ratings, &m->id)));
    }
  return item;
}

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

/* A conversation's messages and ratings as read from the store (any thread). */
typedef struct {
  GPtrArray *messages;   /* HzMessage* */
  GPtrArray *feedback;   /* HzMessageFeedback*, or NULL (ratings could not be read) */
  GPtrArray *limits;     /* HzMessageLimits*, or NULL (could not be read) */
} LoadedMessages;

static void
loaded_messages_free (LoadedMessages *loaded)
{
  g_clear_pointer (&loaded->messages, g_ptr_array_unref);
  g_clear_pointer (&loaded->feedback, g_ptr_array_unref);
  g_clear_pointer (&loaded->limits, g_ptr_array_unref);
  g_free (loaded);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LoadedMessages, loaded_messages_free)

static LoadedMessages *
read_messages (HzStore *store, gint64 conversation_id, GError **error)
{
  g_autoptr(LoadedMessages) loaded = g_new0 (LoadedMessages, 1);

  loaded->messages = hz_store_list_messages (store, conversation_id, error);
  if (loaded->messages == NULL)
    return NULL;
  loaded->feedback = hz_store_list_feedback (store, conversation_id, 0, NULL);
  loaded->limits = hz_store_list_message_limits (store, conversation_id, NULL);
  return g_steal_pointer (&loaded);
}

/* Index what was read (the tree; rows are put in by the caller). */
static void
tree_add_loaded (HzWindow *self, LoadedMessages *loaded)
{
  g_autoptr(GHashTable) ratings = g_hash_table_new_full (g_int64_hash, g_int64_equal,
                                                         g_free, NULL);
  for (guint i = 0; loaded->feedback && i < loaded->feedback->len; i++)
    {
      HzMessageFeedback *f = loaded->feedback->pdata[i];
      g_hash_table_insert (ratings, id_key (f->message_id), GINT_TO_POINTER (f->rating));
    }
  g_autoptr(GHashTable) limits = g_hash_table_new (g_int64_hash, g_int64_equal);
  for (guint i = 0; loaded->limits && i < loaded->limits->len; i++)
    {
      HzMessageLimits *l = loaded->limits->pdata[i];
      g_hash_table_insert (limits, &l->message_id, l);
    }
  for (guint i = 0; i < loaded->messages->len; i++)
    {
      g_autoptr(HzMessageItem) item = item_for_message (self, loaded->messages->pdata[i], ratings,
                                                        limits);
      tree_add (self, item);
    }
}

static gboolean
loading_messages (HzWindow *self)
{
  return self->load_cancellable != NULL || self->fill_id != 0;
}

/* Forget a conversation being read or filled in (its result will be dropped). */
static void
cancel_load (HzWindow *self)
{
  self->load_serial++;
  if (self->load_cancellable != NULL)
    g_cancellable_cancel (self->load_cancellable);
  g_clear_object (&self->load_cancellable);
  stop_fill (self);
}

/* Start showing `conversation_id`: the system prompt and an empty tree. */
static void
begin_show (HzWindow *self, gint64 conversation_id)
{
  cancel_load (self);
  reset_announcement (self);
  self->conversation_id = conversation_id;
  self->stick_to_bottom = TRUE;
  set_editing (self, 0);
  tree_clear (self);
  g_clear_pointer (&self->system_prompt, g_free);
  if (conversation_id > 0 && self->store != NULL)
    {
      /* one row by its key: short enough for the main thread, and never stale */
      g_autoptr(HzConversation) conv = hz_store_get_conversation (self->store, conversation_id,
                                                                 NULL);
      if (conv != NULL)
        self->system_prompt = g_strdup (conv->system_prompt);
    }
}

/* Read on the main thread: for hz_window_select_conversation() (scripts and tests expect
 * the messages when it returns) and conversations kept in memory only. */
void
hz_window_show_conversation (HzWindow *self, gint64 conversation_id)
{
  g_autoptr(GError) error = NULL;

  begin_show (self, conversation_id);
  if (conversation_id > 0 && self->store != NULL)
    {
      g_autoptr(LoadedMessages) loaded = read_messages (self->store, conversation_id, &error);
      if (loaded == NULL)
        hz_window_report_store_error (self, error);
      else
        tree_add_loaded (self, loaded);
    }
  else if (conversation_id != 0)
    {
      /* Kept in memory only (no store): nothing to reload; start over. */
      g_list_store_remove_all (self->messages);
    }
  sync_messages (self);
  scroll_to_end (self);
  hz_window_update_state (self);
}

/* ---- opening a conversation off the main thread
 *
 * Reading a long conversation happens on a GTask thread with the window's reader
 * connection (hz_window_reader_lock()). When it is read, the rows go into the list newest
 * first (inserted above the rows already shown, so the view stays at the end and the rows
 * on screen are built first), a batch at each frame of the list's frame clock (fill_tick()),
 * so that the row widgets GTK makes, measures and draws for them are spread over many
 * frames instead of one stall.
 * Every show bumps load_serial and cancels the read before: a result whose serial is not
 * the current one is dropped, so switching quickly never shows another conversation's
 * messages. */

#define FILL_BUDGET_US 6000  /* of one frame (16.7 ms at 60 Hz) */
#define FILL_BATCH_MIN 2
#define FILL_NEAR_ROWS 200   /* GTK 4.8's list view builds rows for up to 200 items */

typedef struct {
  struct _SearchConn *reader;
  gint64              conversation_id;
  gint64              reveal_id;     /* message to scroll to when shown, 0 = the end */
  guint               serial;
} LoadJob;

static void
load_job_free (LoadJob *job)
{
  g_clear_pointer (&job->reader, hz_window_reader_unref);
  g_free (job);
}

static void
load_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  LoadJob *job = data;
  GError *error = NULL;
  LoadedMessages *loaded = NULL;

  if (g_task_return_error_if_cancelled (task))
    return;
  HzStore *store = hz_window_reader_lock (job->reader, &error);
  if (store != NULL)
    loaded = read_messages (store, job->conversation_id, &error);
  hz_window_reader_unlock (job->reader);
  if (loaded == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, loaded, (GDestroyNotify) loaded_messages_free);
}

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
  g_autoptr(GPtrArray) path = tree_path (self);
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
  hz_window_update_state (self);
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

static void
load_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  HzWindow *self = HZ_WINDOW (source);
  LoadJob *job = g_task_get_task_data (G_TASK (result));
  g_autoptr(GError) error = NULL;
  g_autoptr(LoadedMessages) loaded = g_task_propagate_pointer (G_TASK (result), &error);

  if (job->serial != self->load_serial || self->messages == NULL)
    return;  /* another conversation was chosen since, or the window closed */
  g_clear_object (&self->load_cancellable);
  if (loaded == NULL)
    {
      hz_window_report_store_error (self, error);
      hz_window_update_state (self);
      return;
    }
  tree_add_loaded (self, loaded);
  if (job->reveal_id != 0)
    {
      hz_window_reveal_message (self, job->reveal_id);  /* puts in the whole branch */
      hz_window_update_state (self);
      return;
    }
  scroll_to_end (self);
  start_fill (self);
}

/* Show `conversation_id`, reading it on a thread; then scroll to `reveal_id` (0: to the
 * end). The list is empty until the messages are read. */
static void
open_conversation (HzWindow *self, gint64 conversation_id, gint64 reveal_id)
{
  struct _SearchConn *reader = conversation_id > 0 ? hz_window_reader_ref (self) : NULL;

  if (reader == NULL)
    {
      hz_window_show_conversation (self, conversation_id);
      if (reveal_id != 0)
        hz_window_reveal_message (self, reveal_id);
      return;
    }
  begin_show (self, conversation_id);
  g_list_store_remove_all (self->messages);

  LoadJob *job = g_new0 (LoadJob, 1);
  job->reader = reader;
  job->conversation_id = conversation_id;
  job->reveal_id = reveal_id;
  job->serial = self->load_serial;
  self->load_cancellable = g_cancellable_new ();
  g_autoptr(GTask) task = g_task_new (self, self->load_cancellable, load_done, NULL);
  g_task_set_source_tag (task, open_conversation);
  g_task_set_task_data (task, job, (GDestroyNotify) load_job_free);
  g_task_run_in_thread (task, load_thread);
  hz_window_update_state (self);
}

void
hz_window_open_conversation (HzWindow *self, gint64 conversation_id)
{
  open_conversation (self, conversation_id, 0);
}

void
hz_window_open_search_hit (HzWindow *self, gint64 conversation_id, gint64 message_id)
{
  open_conversation (self, conversation_id, message_id);
}

void
hz_window_start_new_chat (HzWindow *self)
{
  hz_window_select_conversation_silently (self, GTK_INVALID_LIST_POSITION);
  hz_window_show_conversation (self, 0);
  hz_window_show_chat_pane (self);
  gtk_widget_grab_focus (GTK_WIDGET (self->composer));
}

/* ------------------------------------------------------------------ generating */

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
fill_generate_params (HzWindow *self, HzGenerateParams *params)
{
  GSettings *model = hz_application_get_model_settings (self->app);

  hz_generate_params_init (params);
  params->sampler.temperature = (float) hz_model_settings_get_double (model, self->settings,
                                                                      "temperature");
  params->sampler.top_p = (float) hz_model_settings_get_double (model, self->settings, "top-p");
  params->n_predict = hz_model_settings_get_int (model, self->settings, "max-tokens");
  guint64 seed = g_settings_get_uint64 (self->settings, "seed");
  params->sampler.seed = seed != 0 ? seed : ((guint64) g_random_int () << 32 | g_random_int ());
}

static gboolean save_reply_timeout (gpointer data);
static void maybe_request_title (HzWindow *self, const char *reply, const HzGenerateStats *stats);

/* Answer the user message `parent_id`, the last message of the shown branch. */
static void
start_reply (HzWindow *self, gint64 parent_id)
{
  g_autoptr(GError) error = NULL;
  const char *sha = hz_application_get_model_sha256 (self->app);
  gint64 reply_id = 0;

  if (self->store != NULL && self->conversation_id > 0 && parent_id > 0)
    {
      reply_id = hz_store_append_message (self->store, self->conversation_id, parent_id,
                                          HZ_ROLE_ASSISTANT, "", sha, FALSE, &error);
      if (reply_id == 0)
        hz_window_report_store_error (self, error);
    }
  self->reply_message_id = reply_id;
  if (reply_id == 0)
    reply_id = local_id (self);

  g_autoptr(HzMessageItem) reply = hz_message_item_new (reply_id, HZ_ROLE_ASSISTANT, "");
  hz_message_item_set_parent_id (reply, parent_id);
  hz_message_item_set_streaming (reply, TRUE);

  /* The conversation so far (the shown branch up to `parent_id`), after the system prompt. */
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->messages));
  g_autoptr(GPtrArray) keep = g_ptr_array_new_with_free_func (g_object_unref);
  g_autofree HzChatMessage *msgs = g_new0 (HzChatMessage, n + 1);
  gsize n_msgs = 0;
  if (self->system_prompt != NULL && *self->system_prompt)
    {
      msgs[n_msgs].role = "system";
      msgs[n_msgs].content = self->system_prompt;
      n_msgs++;
    }
  for (guint i = 0; i < n; i++)
    {
      HzMessageItem *it = g_list_model_get_item (G_LIST_MODEL (self->messages), i);
      g_ptr_array_add (keep, it);
      if (*hz_message_item_get_text (it) != '\0')
        {
          msgs[n_msgs].role = hz_role_to_string (hz_message_item_get_role (it));
          msgs[n_msgs].content = hz_message_item_get_text (it);
          n_msgs++;
        }
      if (hz_message_item_get_id (it) == parent_id)
        break;
    }

  HzGenerateParams params;
  fill_generate_params (self, &params);
  self->request_id = hz_engine_worker_generate (self->worker, msgs, n_msgs, &params);
  if (!self->learner_held)
    {
      /* The learner (if running) pauses while a reply is generated. */
      self->learner_held = TRUE;
      hz_learner_hold (hz_application_get_learner (self->app));
    }

  tree_add (self, reply);
  tree_choose (self, parent_id, reply_id);
  self->reply_item = g_object_ref (reply);
  self->reply_dirty = FALSE;
  self->reply_n_tokens = 0;
  self->save_timeout_id = g_timeout_add (SAVE_INTERVAL_MS, save_reply_timeout, self);
  self->stick_to_bottom = TRUE;
  sync_messages (self);
  hz_window_update_state (self);
}

/* Store a new conversation for the first message `text`; FALSE when kept in memory. */
static void
create_conversation (HzWindow *self, const char *text)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *title = title_from_text (text);
  const char *model_path = hz_engine_worker_get_model_path (self->worker);
  gint64 id = 0;

  if (self->store != NULL)
    {
      id = hz_store_create_conversation (self->store, title, self->system_prompt, model_path,
                                         &error);
      if (id == 0)
        hz_window_report_store_error (self, error);
    }
  if (id == 0)
    id = local_id (self);
  g_autoptr(HzConversationItem) conv = hz_conversation_item_new (id, title);
  hz_window_add_conversation (self, conv);
  self->conversation_id = id;
}

static void
send_message (HzWindow *self)
{
  g_autoptr(GError) error = NULL;

  if (hz_window_generating (self) || self->model_state != MODEL_READY)
    return;
  g_autofree char *text = composer_take_text (self);
  if (text == NULL)
    return;

  if (self->conversation_id == 0)
    create_conversation (self, text);
  else
    hz_window_bump_conversation (self, self->conversation_id);

  /* A new message follows the shown branch; an edit is a sibling of the original. */
  gint64 parent = 0;
  HzMessageItem *edited = self->edit_message_id ? tree_get (self, self->edit_message_id) : NULL;
  if (edited != NULL)
    parent = hz_message_item_get_parent_id (edited);
  else
    {
      guint n = g_list_model_get_n_items (G_LIST_MODEL (self->messages));
      g_autoptr(HzMessageItem) last = n ? g_list_model_get_item (G_LIST_MODEL (self->messages), n - 1) : NULL;
      parent = last ? hz_message_item_get_id (last) : 0;
    }
  set_editing (self, 0);

  gint64 user_id = 0;
  if (self->store != NULL && self->conversation_id > 0)
    {
      user_id = hz_store_append_message (self->store, self->conversation_id, MAX (parent, 0),
                                         HZ_ROLE_USER, text, NULL, TRUE, &error);
      if (user_id == 0)
        hz_window_report_store_error (self, error);
      hz_redact_worker_notify (G_APPLICATION (self->app), self->store);
    }
  if (user_id == 0)
    user_id = local_id (self);

  g_autoptr(HzMessageItem) user = hz_message_item_new (user_id, HZ_ROLE_USER, text);
  hz_message_item_set_parent_id (user, parent);
  tree_add (self, user);
  tree_choose (self, parent, user_id);
  sync_messages (self);
  start_reply (self, user_id);
}

/* Write the reply's text so far to the store, with `n_tokens` generated tokens (its count so
 * far while it streams or when it is cut short, so that a crash or a closed window leaves
 * the real count, not 0). */
static void
save_reply (HzWindow *self, gint64 n_tokens, double ttft_s, double tokens_per_s)
{
  g_autoptr(GError) error = NULL;

  self->reply_dirty = FALSE;
  if (self->store == NULL || self->reply_message_id == 0)
    return;
  if (!hz_store_update_reply (self->store, self->reply_message_id,
                              hz_message_item_get_text (self->reply_item),
                              hz_message_item_get_reasoning (self->reply_item),
                              n_tokens, ttft_s, tokens_per_s, &error))
    hz_window_report_store_error (self, error);
}

static gboolean
save_reply_timeout (gpointer data)
{
  HzWindow *self = data;

  if (self->reply_dirty)
    save_reply (self, self->reply_n_tokens, NAN, NAN);
  return G_SOURCE_CONTINUE;
}

static void
tree_remove (HzWindow *self, HzMessageItem *item)
{
  gint64 id = hz_message_item_get_id (item);
  gint64 parent = hz_message_item_get_parent_id (item);
  GPtrArray *kids = g_hash_table_lookup (self->children, &parent);

  g_hash_table_remove (self->choices, &parent);
  if (kids != NULL)
    g_ptr_array_remove (kids, item);
  g_hash_table_remove (self->nodes, &id);
}

static void
end_reply (HzWindow *self, gboolean keep)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HzMessageItem) reply = g_steal_pointer (&self->reply_item);

  if (self->store != NULL && self->reply_message_id != 0)
    {
      gboolean ok = keep ? hz_store_set_message_complete (self->store, self->reply_message_id, &error)
                         : hz_store_delete_message (self->store, self->reply_message_id, &error);
      if (!ok)
        hz_window_report_store_error (self, error);
      hz_redact_worker_notify (G_APPLICATION (self->app), self->store);
    }
  hz_message_item_set_streaming (reply, FALSE);
  if (!keep && tree_get (self, hz_message_item_get_id (reply)) == reply)
    {
      tree_remove (self, reply);
      sync_messages (self);
    }
  g_clear_handle_id (&self->save_timeout_id, g_source_remove);
  self->reply_message_id = 0;
  self->request_id = 0;
  if (self->learner_held)
    {
      self->learner_held = FALSE;
      hz_learner_release (hz_application_get_learner (self->app));
    }
  hz_window_update_state (self);
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

/* Store how the reply was limited (cut, earlier messages unseen), when it was. */
static void
save_reply_limits (HzWindow *self)
{
  g_autoptr(GError) error = NULL;
  const gboolean cut = hz_message_item_get_cut (self->reply_item);
  const gint64 n_unseen = hz_message_item_get_n_unseen (self->reply_item);

  if (self->store == NULL || self->reply_message_id == 0 || (!cut && n_unseen == 0))
    return;
  if (!hz_store_set_message_limits (self->store, self->reply_message_id, cut, n_unseen, &error))
    hz_window_report_store_error (self, error);
}

/* The conversation outgrew the context: the reply is written without the oldest messages
 * (the first such reply of the branch gets the notice). */
static void
on_worker_trimmed (HzEngineWorker *worker, guint request, guint n_dropped, HzWindow *self)
{
  if (request != self->request_id || self->reply_item == NULL)
    return;
  hz_message_item_set_n_unseen (self->reply_item, n_dropped);
  g_ptr_array_unref (tree_path (self));   /* places the notice */
}

static void
on_worker_token (HzEngineWorker *worker, guint request, const char *text, guint n_generated,
                 HzWindow *self)
{
  if (request != self->request_id || self->reply_item == NULL)
    return;
  hz_message_item_append_text (self->reply_item, text);
  self->reply_n_tokens = n_generated;
  self->reply_dirty = TRUE;
}

/* A thinking model's reasoning streams into the reply's folded section (and the store). */
static void
on_worker_reasoning (HzEngineWorker *worker, guint request, const char *text,
                     guint n_generated, HzWindow *self)
{
  if (request != self->request_id || self->reply_item == NULL)
    return;
  hz_message_item_append_reasoning (self->reply_item, text);
  self->reply_n_tokens = n_generated;
  self->reply_dirty = TRUE;
}

/* Whether the reply has anything to keep: an answer, or reasoning (stopped while the model
 * was thinking). */
static gboolean
reply_has_text (HzMessageItem *reply)
{
  return *hz_message_item_get_text (reply) != '\0' ||
         *hz_message_item_get_reasoning (reply) != '\0';
}

static void
on_worker_finished (HzEngineWorker *worker, guint request, const char *text,
                    gpointer stats_ptr, HzWindow *self)
{
  const HzGenerateStats *stats = stats_ptr;

  if (request != self->request_id || self->reply_item == NULL)
    return;

  double tps = stats->gen_seconds > 0 ? stats->n_generated / stats->gen_seconds : -1;
  hz_model_library_record_speed (hz_application_get_model_library (self->app),
                                 hz_engine_worker_get_model_path (worker), tps,
                                 stats->n_generated);
  maybe_request_title (self, text, stats);
  hz_message_item_set_text (self->reply_item, text);
  hz_message_item_set_stats (self->reply_item, stats->n_generated, tps);
  hz_message_item_set_context (self->reply_item, stats->n_prompt + stats->n_generated,
                               hz_engine_worker_get_context_length (worker));
  const gboolean cut = stats->stop_reason == HZ_STOP_LENGTH;
  hz_message_item_set_cut (self->reply_item, cut);
  if (stats->stop_reason == HZ_STOP_CANCELLED)
    {
      hz_message_item_set_details (self->reply_item, _("Stopped"));
    }
  else
    {
      g_autofree char *details = reply_details (stats->n_generated, tps, TRUE, cut);
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
  save_reply_limits (self);
  /* stopped before the first word: nothing to keep */
  end_reply (self, reply_has_text (self->reply_item));

  announce_reply (self, text);
}

static void
on_worker_error (HzEngineWorker *worker, guint request, GError *error, HzWindow *self)
{
  if (request != self->request_id || self->reply_item == NULL)
    return;

  gboolean has_text = reply_has_text (self->reply_item);
  if (has_text)
    save_reply (self, self->reply_n_tokens, NAN, NAN);
  end_reply (self, has_text);

  if (g_error_matches (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_CONTEXT_FULL))
    {
      /* only a single message longer than the context gets here: earlier messages are
       * left out as needed (hz_engine_worker_generate) */
      g_autofree char *body = g_strdup_printf (
        _("This message alone is longer than the model can read at once (its context). "
          "Shorten it or split it into several messages.\n\n%s"),
        error->message);
      hz_window_show_error (self, _("Message Too Long"), body);
    }
  else
    {
      hz_window_show_error (self, _("The Reply Could Not Be Generated"), error->message);
    }
}

/* After the first exchange of a chat whose title is still the one made from its first
 * message: ask the model for a better one (in the background). */
static void
maybe_request_title (HzWindow *self, const char *reply, const HzGenerateStats *stats)
{
  GListModel *msgs = G_LIST_MODEL (self->messages);

  if (*reply == '\0' || stats->stop_reason == HZ_STOP_CANCELLED || self->conversation_id == 0 ||
      g_list_model_get_n_items (msgs) != 2)
    return;
  g_autoptr(HzMessageItem) first = g_list_model_get_item (msgs, 0);
  HzConversationItem *conv = hz_window_find_conversation (self, self->conversation_id, NULL);
  g_autofree char *heuristic = title_from_text (hz_message_item_get_text (first));
  if (conv == NULL || g_strcmp0 (hz_conversation_item_get_title (conv), heuristic) != 0)
    return;
  hz_window_request_title (self, self->conversation_id, heuristic,
                           hz_message_item_get_text (first), reply);
}

/* ------------------------------------------------------------------ message actions */

static HzMessageItem *
target_item (HzWindow *self, GVariant *param)
{
  return param ? tree_get (self, g_variant_get_int64 (param)) : NULL;
}

static void
action_send (GtkWidget *widget, const char *name, GVariant *param)
{
  send_message (HZ_WINDOW (widget));
}

static void
action_stop (GtkWidget *widget, const char *name, GVariant *param)
{
  HzWindow *self = HZ_WINDOW (widget);
  if (hz_window_generating (self))
    hz_engine_worker_cancel (self->worker);
}

/* Regenerate the reply `item` (an assistant message): a new sibling answers its parent. */
static void
regenerate (HzWindow *self, HzMessageItem *item)
{
  if (hz_window_generating (self) || self->model_state != MODEL_READY || item == NULL)
    return;
  if (hz_message_item_get_role (item) == HZ_ROLE_ASSISTANT)
    {
      gint64 parent = hz_message_item_get_parent_id (item);
      if (tree_get (self, parent) == NULL)
        return;
      start_reply (self, parent);  /* answers the user message again */
    }
  else if (hz_message_item_get_role (item) == HZ_ROLE_USER)
    {
      start_reply (self, hz_message_item_get_id (item));  /* its reply was lost */
    }
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

  if (item == NULL || hz_message_item_get_role (item) != HZ_ROLE_USER || hz_window_generating (self))
    return;
  gtk_text_buffer_set_text (gtk_text_view_get_buffer (self->composer),
                            hz_message_item_get_text (item), -1);
  set_editing (self, hz_message_item_get_id (item));
  hz_window_update_state (self);
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
  hz_window_update_state (self);
}

static void
action_copy_message (GtkWidget *widget, const char *name, GVariant *param)
{
  HzWindow *self = HZ_WINDOW (widget);
  HzMessageItem *item = target_item (self, param);

  if (item == NULL)
    return;
  gdk_clipboard_set_text (gtk_widget_get_clipboard (widget), hz_message_item_get_text (item));
  toast (self, _("Message copied"));
}

static void
rate (HzWindow *self, GVariant *param, int want)
{
  g_autoptr(GError) error = NULL;
  HzMessageItem *item = target_item (self, param);

  if (item == NULL || hz_message_item_get_role (item) != HZ_ROLE_ASSISTANT)
    return;
  int rating = hz_message_item_get_rating (item) == want ? 0 : want;
  gint64 id = hz_message_item_get_id (item);
  if (self->store != NULL && id > 0 &&
      !hz_store_set_feedback (self->store, id, rating, &error))
    {
      hz_window_report_store_error (self, error);
      return;
    }
  hz_message_item_set_rating (item, rating);
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
  HzMessageItem *item = target_item (self, param);

  if (item == NULL || hz_window_generating (self))
    return;
  gint64 parent = hz_message_item_get_parent_id (item);
  GPtrArray *kids = g_hash_table_lookup (self->children, &parent);
  guint index;
  if (kids == NULL || !g_ptr_array_find (kids, item, &index))
    return;
  if ((delta < 0 && index == 0) || (delta > 0 && index + 1 >= kids->len))
    return;
  tree_choose (self, parent, hz_message_item_get_id (kids->pdata[index + delta]));
  if (self->edit_message_id != 0)
    action_cancel_edit (GTK_WIDGET (self), NULL, NULL);
  sync_messages (self);
  hz_window_update_state (self);
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
  hz_window_update_state (self);
}

static void
on_worker_model_error (HzEngineWorker *worker, const char *path, GError *error,
                       HzWindow *self)
{
  if (g_strcmp0 (path, hz_engine_worker_get_model_path (worker)) != 0)
    return;
  self->model_state = MODEL_FAILED;
  hz_window_update_state (self);

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
  hz_window_update_state (self);
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
  toast (self, msg);
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
  toast (self, _("The personal adapter could not be loaded; the base model answers"));
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
    hz_application_open_model (self->app, path, TRUE);
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
        hz_application_open_model (self->app, path, TRUE);
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
  self->nodes = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_object_unref);
  self->children = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                          (GDestroyNotify) g_ptr_array_unref);
  self->choices = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);

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

/* ------------------------------------------------------------------ adaptive layout */

#if !ADW_CHECK_VERSION (1, 4, 0)
static void
on_back_clicked (GtkButton *button, HzWindow *self)
{
  adw_leaflet_navigate (ADW_LEAFLET (self->layout), ADW_NAVIGATION_DIRECTION_BACK);
}
#endif

/* Sidebar and chat side by side; on a narrow window one at a time, with a back button. */
static void
setup_layout (HzWindow *self)
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
  g_signal_connect_swapped (split, "notify::collapsed",
                            G_CALLBACK (hz_window_models_update_header), self);
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
  g_signal_connect_swapped (leaflet, "notify::folded",
                            G_CALLBACK (hz_window_models_update_header), self);
  self->layout = GTK_WIDGET (leaflet);
#endif
  adw_toast_overlay_set_child (self->toast_overlay, self->layout);
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
      hz_window_show_error (self, _("Cannot Learn Now"), body);
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
  self->worker_handlers[6] = g_signal_connect (self->worker, "context-changed",
                                               G_CALLBACK (on_worker_context_changed), self);
  self->worker_handlers[7] = g_signal_connect (self->worker, "title",
                                               G_CALLBACK (hz_window_on_worker_title), self);
  self->worker_handlers[8] = g_signal_connect (self->worker, "adapter-error",
                                               G_CALLBACK (on_worker_adapter_error), self);
  self->worker_handlers[9] = g_signal_connect (self->worker, "trimmed",
                                               G_CALLBACK (on_worker_trimmed), self);
  self->worker_handlers[10] = g_signal_connect (self->worker, "reasoning",
                                                G_CALLBACK (on_worker_reasoning), self);

  g_settings_bind (self->settings, "window-width", self, "default-width", G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (self->settings, "window-height", self, "default-height", G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (self->settings, "window-maximized", self, "maximized", G_SETTINGS_BIND_DEFAULT);

  g_signal_connect_object (hz_application_get_app_server (self->app), "changed",
                           G_CALLBACK (on_app_server_changed), self, 0);
  on_app_server_changed (hz_application_get_app_server (self->app), self);
  hz_window_sidebar_attach (self);
  hz_window_models_attach (self);
  self->learner_bar = hz_learner_bar_new (hz_application_get_learner (self->app));
  gtk_box_append (GTK_BOX (self->sidebar_pane), self->learner_bar);
  self->learner_failed_id = g_signal_connect (hz_application_get_learner (self->app), "call-failed",
                                              G_CALLBACK (on_learner_call_failed), self);
  hz_window_show_conversation (self, 0);
  on_model_requested (self);
  hz_redact_worker_notify (G_APPLICATION (app), self->store);   /* catch up with earlier runs */
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
  return self->conversation_id;
}

const char *
hz_window_get_system_prompt (HzWindow *self)
{
  g_return_val_if_fail (HZ_IS_WINDOW (self), NULL);
  return self->system_prompt;
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
#if ADW_CHECK_VERSION (1, 4, 0)
  return adw_navigation_split_view_get_collapsed (ADW_NAVIGATION_SPLIT_VIEW (self->layout));
#else
  return adw_leaflet_get_folded (ADW_LEAFLET (self->layout));
#endif
}

void
hz_window_select_conversation (HzWindow *self, guint position)
{
  g_return_if_fail (HZ_IS_WINDOW (self));
  self->select_blocking = TRUE;
  gtk_single_selection_set_selected (self->conversation_selection, position);
  self->select_blocking = FALSE;
}

gboolean
hz_window_is_generating (HzWindow *self)
{
  g_return_val_if_fail (HZ_IS_WINDOW (self), FALSE);
  return hz_window_generating (self);
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

void
hz_window_reload (HzWindow *self)
{
  g_return_if_fail (HZ_IS_WINDOW (self));
  hz_window_show_conversation (self, 0);
  hz_window_load_conversations (self);
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
  cancel_load (self);
  if (self->worker != NULL)
    {
      if (hz_window_generating (self))
        hz_engine_worker_cancel (self->worker);
      for (guint i = 0; i < G_N_ELEMENTS (self->worker_handlers); i++)
        g_clear_signal_handler (&self->worker_handlers[i], self->worker);
    }
  /* A reply cut short by closing the window keeps its text (saved, marked complete). */
  if (self->reply_item != NULL)
    {
      save_reply (self, self->reply_n_tokens, NAN, NAN);
      end_reply (self, reply_has_text (self->reply_item));
    }
  if (self->app != NULL && self->learner_failed_id != 0)
    g_clear_signal_handler (&self->learner_failed_id, hz_application_get_learner (self->app));
  hz_window_sidebar_dispose (self);
  hz_window_models_dispose (self);
  g_clear_weak_pointer (&self->info_toast);
  g_clear_object (&self->worker);
  g_clear_object (&self->settings);
  g_clear_object (&self->messages);
  g_clear_pointer (&self->nodes, g_hash_table_unref);
  g_clear_pointer (&self->children, g_hash_table_unref);
  g_clear_pointer (&self->choices, g_hash_table_unref);
  gtk_widget_dispose_template (GTK_WIDGET (self), HZ_TYPE_WINDOW);
  G_OBJECT_CLASS (hz_window_parent_class)->dispose (object);
}

static void
hz_window_finalize (GObject *object)
{
  HzWindow *self = HZ_WINDOW (object);

  g_free (self->system_prompt);
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

  setup_layout (self);
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
