/* hz-chat-session.c — HzChatSession (see hz-chat-session.h): the shown conversation's
 * message tree, the reply being generated and the store writes of them, over the
 * conversation list (HzChatList, hz-chat-list.h). No GTK here: the window (hz-window.c)
 * renders what this holds.
 *
 * `nodes` and `children` index every message of the shown conversation; `choices` holds
 * the sibling chosen under a parent where the user paged to another. Everything here runs
 * on the main thread; the store calls are short single-row writes (WAL). Reading a
 * conversation (hz_chat_session_open()) and searching happen on threads with the
 * session's own reader connection (hz-chat-reader.h).
 */
#include "hz-chat-session.h"

#include "hz-chat-list.h"
#include "hz-chat-reader.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "hz-model-settings.h"
#include "hz-redact-worker.h"
#include "hz-title.h"

#define SAVE_INTERVAL_MS 500  /* a streamed reply is saved at least this often */

typedef struct {
  gint64  conversation_id;
  char   *expected;   /* the title it had when the request was made */
} TitleRequest;

struct _HzChatSession {
  GObject         parent_instance;

  HzAppContext   *ctx;
  HzEngineWorker *worker;
  gulong          worker_handlers[6];
  HzChatReader   *reader;            /* NULL without a store */

  HzChatList     *list;              /* the conversation list */

  /* the shown conversation */
  gint64          conversation_id;   /* 0 = a new chat (not stored yet) */
  char           *system_prompt;
  GHashTable     *nodes;             /* gint64* id -> HzMessageItem: every version */
  GHashTable     *children;          /* gint64* parent id -> GPtrArray of HzMessageItem */
  GHashTable     *choices;           /* gint64* parent id -> gint64* chosen child id */
  gint64          next_local_id;     /* ids of messages kept in memory only (< 0) */
  GCancellable   *load_cancellable;  /* the conversation being read off the main thread */
  guint           load_serial;       /* bumped by every show: older reads are dropped */

  /* the reply being generated */
  guint           request_id;        /* 0 = none */
  HzMessageItem  *reply_item;
  gint64          reply_message_id;
  gboolean        reply_dirty;       /* text not yet saved */
  gint64          reply_n_tokens;    /* tokens generated so far (the last "token" signal) */
  guint           save_timeout_id;
  gboolean        learner_held;      /* hz_learner_hold() called for this reply */
  GHashTable     *title_requests;    /* worker title request id -> TitleRequest */
};

G_DEFINE_FINAL_TYPE (HzChatSession, hz_chat_session, G_TYPE_OBJECT)

enum { PROP_0, PROP_GENERATING, N_PROPS };
static GParamSpec *props[N_PROPS];

enum {
  BRANCH_CHANGED, SHOWING, SHOWN, TITLE_CHANGED, STORE_ERROR, REPLY_DONE, REPLY_ERROR,
  N_SIGNALS
};
static guint signals[N_SIGNALS];

/* ------------------------------------------------------------------ helpers */

static HzStore *
store_of (HzChatSession *self)
{
  return hz_app_context_get_store (self->ctx);
}

static void
store_error (HzChatSession *self, GError *error)
{
  g_signal_emit (self, signals[STORE_ERROR], 0, error);
}

static gint64 *
id_key (gint64 id)
{
  return g_memdup2 (&id, sizeof id);
}

/* An id for a message or conversation that could not be stored: negative, unique. */
static gint64
local_id (HzChatSession *self)
{
  return --self->next_local_id;
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

/* ------------------------------------------------------------------ the conversation list */

/* `ok` or else report `error` (taken). */
static gboolean
reported (HzChatSession *self, gboolean ok, GError *error)
{
  if (!ok)
    store_error (self, error);
  g_clear_error (&error);
  return ok;
}

HzConversationItem *
hz_chat_session_find_conversation (HzChatSession *self, gint64 id, guint *position)
{
  g_return_val_if_fail (HZ_IS_CHAT_SESSION (self), NULL);
  return hz_chat_list_find (self->list, id, position);
}

void
hz_chat_session_load_conversations (HzChatSession *self)
{
  GError *error = NULL;

  g_return_if_fail (HZ_IS_CHAT_SESSION (self));
  reported (self, hz_chat_list_load (self->list, &error), error);
}

gboolean
hz_chat_session_rename (HzChatSession *self, gint64 id, const char *title)
{
  GError *error = NULL;

  g_return_val_if_fail (HZ_IS_CHAT_SESSION (self), FALSE);
  if (hz_chat_list_find (self->list, id, NULL) == NULL)
    return FALSE;
  if (!reported (self, hz_chat_list_rename (self->list, id, title, &error), error))
    return FALSE;
  g_signal_emit (self, signals[TITLE_CHANGED], 0, id);
  return TRUE;
}

gboolean
hz_chat_session_set_pinned (HzChatSession *self, gint64 id, gboolean pinned)
{
  GError *error = NULL;

  g_return_val_if_fail (HZ_IS_CHAT_SESSION (self), FALSE);
  return hz_chat_list_find (self->list, id, NULL) != NULL &&
         reported (self, hz_chat_list_set_pinned (self->list, id, pinned, &error), error);
}

gboolean
hz_chat_session_set_system_prompt (HzChatSession *self, const char *prompt)
{
  g_autoptr(GError) error = NULL;

  g_return_val_if_fail (HZ_IS_CHAT_SESSION (self), FALSE);
  const char *value = prompt != NULL && *prompt ? prompt : NULL;
  if (store_of (self) != NULL && self->conversation_id > 0 &&
      !hz_store_set_conversation_system_prompt (store_of (self), self->conversation_id, value,
                                                &error))
    {
      store_error (self, error);
      return FALSE;
    }
  g_free (self->system_prompt);
  self->system_prompt = g_strdup (value);
  return TRUE;
}

guint
hz_chat_session_delete (HzChatSession *self, gint64 id)
{
  g_return_val_if_fail (HZ_IS_CHAT_SESSION (self), 0);
  return self->request_id != 0 ? 0 : hz_chat_list_delete (self->list, id);
}

gboolean
hz_chat_session_undo_delete (HzChatSession *self, gint64 id, guint *position)
{
  g_return_val_if_fail (HZ_IS_CHAT_SESSION (self), FALSE);
  return hz_chat_list_undo_delete (self->list, id, position);
}

void
hz_chat_session_commit_delete (HzChatSession *self, guint handle)
{
  GError *error = NULL;

  g_return_if_fail (HZ_IS_CHAT_SESSION (self));
  reported (self, hz_chat_list_commit_delete (self->list, handle, &error), error);
}

void
hz_chat_session_commit_deletes (HzChatSession *self)
{
  GError *error = NULL;

  g_return_if_fail (HZ_IS_CHAT_SESSION (self));
  reported (self, hz_chat_list_commit_deletes (self->list, &error), error);
}

gboolean
hz_chat_session_delete_everything (HzChatSession *self, GError **error)
{
  g_return_val_if_fail (HZ_IS_CHAT_SESSION (self), FALSE);
  HzStore *store = store_of (self);

  if (store == NULL)
    {
      g_set_error_literal (error, HZ_STORE_ERROR, HZ_STORE_ERROR_IO,
                           _("Conversations cannot be saved on this computer"));
      return FALSE;
    }
  /* the reply stops and conversations waiting for Undo go first */
  hz_chat_session_stop (self);
  hz_chat_session_commit_deletes (self);

  g_autoptr(GPtrArray) convs = hz_store_list_conversations (store, error);
  gboolean ok = convs != NULL && hz_store_begin (store, error);
  for (guint i = 0; ok && i < convs->len; i++)
    ok = hz_store_delete_conversation (store, ((HzConversation *) convs->pdata[i])->id, error);
  if (ok)
    ok = hz_store_commit (store, error);
  else if (convs != NULL)
    hz_store_rollback (store);

  hz_chat_session_show (self, 0);
  hz_chat_session_load_conversations (self);
  return ok;
}

void
hz_chat_session_search_async (HzChatSession *self, const char *query, guint limit,
                              GCancellable *cancellable, GAsyncReadyCallback callback,
                              gpointer data)
{
  g_return_if_fail (HZ_IS_CHAT_SESSION (self));
  if (self->reader == NULL)
    {
      g_task_report_new_error (self, callback, data, hz_chat_session_search_async,
                               HZ_STORE_ERROR, HZ_STORE_ERROR_IO, "%s",
                               _("Conversations cannot be saved on this computer"));
      return;
    }
  hz_chat_reader_search_async (self->reader, self, query, limit, cancellable, callback, data);
}

GPtrArray *
hz_chat_session_search_finish (HzChatSession *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  return hz_chat_reader_search_finish (result, error);
}

/* ------------------------------------------------------------------ message tree */

static void
tree_clear (HzChatSession *self)
{
  g_hash_table_remove_all (self->nodes);
  g_hash_table_remove_all (self->children);
  g_hash_table_remove_all (self->choices);
}

static void
tree_add (HzChatSession *self, HzMessageItem *item)
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
tree_choose (HzChatSession *self, gint64 parent_id, gint64 child_id)
{
  g_hash_table_insert (self->choices, id_key (parent_id), id_key (child_id));
}

static void
tree_remove (HzChatSession *self, HzMessageItem *item)
{
  gint64 id = hz_message_item_get_id (item);
  gint64 parent = hz_message_item_get_parent_id (item);
  GPtrArray *kids = g_hash_table_lookup (self->children, &parent);

  g_hash_table_remove (self->choices, &parent);
  if (kids != NULL)
    g_ptr_array_remove (kids, item);
  g_hash_table_remove (self->nodes, &id);
}

HzMessageItem *
hz_chat_session_get_message (HzChatSession *self, gint64 id)
{
  g_return_val_if_fail (HZ_IS_CHAT_SESSION (self), NULL);
  return g_hash_table_lookup (self->nodes, &id);
}

GPtrArray *
hz_chat_session_get_branch (HzChatSession *self)
{
  g_return_val_if_fail (HZ_IS_CHAT_SESSION (self), NULL);
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

static void
branch_changed (HzChatSession *self)
{
  g_signal_emit (self, signals[BRANCH_CHANGED], 0);
}

void
hz_chat_session_reveal (HzChatSession *self, gint64 message_id)
{
  g_return_if_fail (HZ_IS_CHAT_SESSION (self));
  HzMessageItem *item = hz_chat_session_get_message (self, message_id);
  guint guard = g_hash_table_size (self->nodes);

  while (item != NULL && guard-- > 0)
    {
      gint64 parent = hz_message_item_get_parent_id (item);
      tree_choose (self, parent, hz_message_item_get_id (item));
      item = parent != 0 ? hz_chat_session_get_message (self, parent) : NULL;
    }
  branch_changed (self);
}

gboolean
hz_chat_session_page_alternative (HzChatSession *self, gint64 message_id, int delta)
{
  g_return_val_if_fail (HZ_IS_CHAT_SESSION (self), FALSE);
  HzMessageItem *item = hz_chat_session_get_message (self, message_id);

  if (item == NULL || self->request_id != 0)
    return FALSE;
  gint64 parent = hz_message_item_get_parent_id (item);
  GPtrArray *kids = g_hash_table_lookup (self->children, &parent);
  guint index;
  if (kids == NULL || !g_ptr_array_find (kids, item, &index))
    return FALSE;
  if ((delta < 0 && index == 0) || (delta > 0 && index + 1 >= kids->len))
    return FALSE;
  tree_choose (self, parent, hz_message_item_get_id (kids->pdata[index + delta]));
  branch_changed (self);
  return TRUE;
}

gboolean
hz_chat_session_rate (HzChatSession *self, gint64 message_id, int want)
{
  g_autoptr(GError) error = NULL;

  g_return_val_if_fail (HZ_IS_CHAT_SESSION (self), FALSE);
  HzMessageItem *item = hz_chat_session_get_message (self, message_id);
  if (item == NULL || hz_message_item_get_role (item) != HZ_ROLE_ASSISTANT)
    return FALSE;
  int rating = hz_message_item_get_rating (item) == want ? 0 : want;
  if (store_of (self) != NULL && message_id > 0 &&
      !hz_store_set_feedback (store_of (self), message_id, rating, &error))
    {
      store_error (self, error);
      return FALSE;
    }
  hz_message_item_set_rating (item, rating);
  return TRUE;
}

/* ------------------------------------------------------------------ showing a conversation */

gint64
hz_chat_session_get_conversation_id (HzChatSession *self)
{
  g_return_val_if_fail (HZ_IS_CHAT_SESSION (self), 0);
  return self->conversation_id;
}

const char *
hz_chat_session_get_system_prompt (HzChatSession *self)
{
  g_return_val_if_fail (HZ_IS_CHAT_SESSION (self), NULL);
  return self->system_prompt;
}

gboolean
hz_chat_session_is_loading (HzChatSession *self)
{
  g_return_val_if_fail (HZ_IS_CHAT_SESSION (self), FALSE);
  return self->load_cancellable != NULL;
}

/* `limits`: message id -> HzMessageLimits* (nullable). */
static HzMessageItem *
item_for_message (HzChatSession *self, HzMessage *m, GHashTable *ratings, GHashTable *limits)
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

/* Index what was read. */
static void
tree_add_loaded (HzChatSession *self, HzChatMessages *loaded)
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
      g_autoptr(HzMessageItem) item = item_for_message (self, loaded->messages->pdata[i],
                                                        ratings, limits);
      tree_add (self, item);
    }
}

/* Forget a conversation being read (its result will be dropped). */
static void
cancel_load (HzChatSession *self)
{
  self->load_serial++;
  if (self->load_cancellable != NULL)
    g_cancellable_cancel (self->load_cancellable);
  g_clear_object (&self->load_cancellable);
}

/* Start showing `conversation_id`: the system prompt and an empty tree ("showing" is the
 * caller's to emit). */
static void
begin_show (HzChatSession *self, gint64 conversation_id)
{
  cancel_load (self);
  self->conversation_id = conversation_id;
  tree_clear (self);
  g_clear_pointer (&self->system_prompt, g_free);
  if (conversation_id > 0 && store_of (self) != NULL)
    {
      /* one row by its key: short enough for the main thread, and never stale */
      g_autoptr(HzConversation) conv = hz_store_get_conversation (store_of (self),
                                                                 conversation_id, NULL);
      if (conv != NULL)
        self->system_prompt = g_strdup (conv->system_prompt);
    }
}

/* Show `conversation_id` read on this thread, then `reveal_id` (0: the end). */
static void
show (HzChatSession *self, gint64 conversation_id, gint64 reveal_id)
{
  g_autoptr(GError) error = NULL;

  begin_show (self, conversation_id);
  g_signal_emit (self, signals[SHOWING], 0, conversation_id, FALSE);
  if (conversation_id > 0 && store_of (self) != NULL)
    {
      g_autoptr(HzChatMessages) loaded = hz_chat_messages_read (store_of (self), conversation_id,
                                                                &error);
      if (loaded == NULL)
        store_error (self, error);
      else
        tree_add_loaded (self, loaded);
    }
  /* (kept in memory only, no store: nothing to read; it starts over) */
  g_signal_emit (self, signals[SHOWN], 0, reveal_id, FALSE);
}

void
hz_chat_session_show (HzChatSession *self, gint64 conversation_id)
{
  g_return_if_fail (HZ_IS_CHAT_SESSION (self));
  show (self, conversation_id, 0);
}

typedef struct {
  gint64 reveal_id;     /* message to show when read, 0 = the end */
  guint  serial;
} LoadJob;

static void
load_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  HzChatSession *self = HZ_CHAT_SESSION (source);
  g_autofree LoadJob *job = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(HzChatMessages) loaded = hz_chat_reader_read_finish (result, &error);

  if (job->serial != self->load_serial)
    return;  /* another conversation was chosen since */
  g_clear_object (&self->load_cancellable);
  if (loaded == NULL)
    store_error (self, error);
  else
    tree_add_loaded (self, loaded);
  g_signal_emit (self, signals[SHOWN], 0, job->reveal_id, TRUE);
}

void
hz_chat_session_open (HzChatSession *self, gint64 conversation_id, gint64 reveal_id)
{
  g_return_if_fail (HZ_IS_CHAT_SESSION (self));

  if (conversation_id <= 0 || self->reader == NULL)
    {
      show (self, conversation_id, reveal_id);
      return;
    }
  begin_show (self, conversation_id);   /* (cancels the read before) */

  LoadJob *job = g_new0 (LoadJob, 1);
  job->reveal_id = reveal_id;
  job->serial = self->load_serial;
  self->load_cancellable = g_cancellable_new ();
  hz_chat_reader_read_async (self->reader, self, conversation_id, self->load_cancellable,
                             load_done, job);
  g_signal_emit (self, signals[SHOWING], 0, conversation_id, TRUE);
}

/* ------------------------------------------------------------------ generating */

gboolean
hz_chat_session_is_generating (HzChatSession *self)
{
  g_return_val_if_fail (HZ_IS_CHAT_SESSION (self), FALSE);
  return self->request_id != 0;
}

static void
fill_generate_params (HzChatSession *self, HzGenerateParams *params)
{
  GSettings *model = hz_app_context_get_model_settings (self->ctx);
  GSettings *settings = hz_app_context_get_settings (self->ctx);

  hz_generate_params_init (params);
  params->sampler.temperature = (float) hz_model_settings_get_double (model, settings,
                                                                      "temperature");
  params->sampler.top_p = (float) hz_model_settings_get_double (model, settings, "top-p");
  params->n_predict = hz_model_settings_get_int (model, settings, "max-tokens");
  guint64 seed = g_settings_get_uint64 (settings, "seed");
  params->sampler.seed = seed != 0 ? seed : ((guint64) g_random_int () << 32 | g_random_int ());
}

static gboolean save_reply_timeout (gpointer data);

/* Answer the user message `parent_id`, the last message of the branch up to it. */
static void
start_reply (HzChatSession *self, gint64 parent_id)
{
  g_autoptr(GError) error = NULL;
  const char *sha = hz_app_context_get_model_sha256 (self->ctx);
  gint64 reply_id = 0;

  if (store_of (self) != NULL && self->conversation_id > 0 && parent_id > 0)
    {
      reply_id = hz_store_append_message (store_of (self), self->conversation_id, parent_id,
                                          HZ_ROLE_ASSISTANT, "", sha, FALSE, &error);
      if (reply_id == 0)
        store_error (self, error);
    }
  self->reply_message_id = reply_id;
  if (reply_id == 0)
    reply_id = local_id (self);

  g_autoptr(HzMessageItem) reply = hz_message_item_new (reply_id, HZ_ROLE_ASSISTANT, "");
  hz_message_item_set_parent_id (reply, parent_id);
  hz_message_item_set_streaming (reply, TRUE);

  /* The conversation so far (the branch up to `parent_id`), after the system prompt. */
  g_autoptr(GPtrArray) branch = hz_chat_session_get_branch (self);
  g_autofree HzChatMessage *msgs = g_new0 (HzChatMessage, branch->len + 1);
  gsize n_msgs = 0;
  if (self->system_prompt != NULL && *self->system_prompt)
    {
      msgs[n_msgs].role = "system";
      msgs[n_msgs].content = self->system_prompt;
      n_msgs++;
    }
  for (guint i = 0; i < branch->len; i++)
    {
      HzMessageItem *it = branch->pdata[i];
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
      hz_learner_hold (hz_app_context_get_learner (self->ctx));
    }

  tree_add (self, reply);
  tree_choose (self, parent_id, reply_id);
  self->reply_item = g_object_ref (reply);
  self->reply_dirty = FALSE;
  self->reply_n_tokens = 0;
  self->save_timeout_id = g_timeout_add (SAVE_INTERVAL_MS, save_reply_timeout, self);
  branch_changed (self);
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_GENERATING]);
}

/* Store a new conversation for the first message `text` (in memory when it cannot be). */
static void
create_conversation (HzChatSession *self, const char *text)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *title = hz_title_from_text (text);
  const char *model_path = hz_engine_worker_get_model_path (self->worker);
  gint64 id = 0;

  if (store_of (self) != NULL)
    {
      id = hz_store_create_conversation (store_of (self), title, self->system_prompt,
                                         model_path, &error);
      if (id == 0)
        store_error (self, error);
    }
  if (id == 0)
    id = local_id (self);
  g_autoptr(HzConversationItem) conv = hz_conversation_item_new (id, title);
  self->conversation_id = id;
  hz_chat_list_add (self->list, conv);
}

void
hz_chat_session_send (HzChatSession *self, const char *text, gint64 edit_of)
{
  g_autoptr(GError) error = NULL;

  g_return_if_fail (HZ_IS_CHAT_SESSION (self));
  g_return_if_fail (text != NULL);
  if (self->request_id != 0)
    return;

  if (self->conversation_id == 0)
    create_conversation (self, text);
  else
    hz_chat_list_bump (self->list, self->conversation_id);

  /* A new message follows the shown branch; an edit is a sibling of the original. */
  gint64 parent = 0;
  HzMessageItem *edited = edit_of ? hz_chat_session_get_message (self, edit_of) : NULL;
  if (edited != NULL)
    parent = hz_message_item_get_parent_id (edited);
  else
    {
      g_autoptr(GPtrArray) branch = hz_chat_session_get_branch (self);
      parent = branch->len ? hz_message_item_get_id (branch->pdata[branch->len - 1]) : 0;
    }

  gint64 user_id = 0;
  if (store_of (self) != NULL && self->conversation_id > 0)
    {
      user_id = hz_store_append_message (store_of (self), self->conversation_id, MAX (parent, 0),
                                         HZ_ROLE_USER, text, NULL, TRUE, &error);
      if (user_id == 0)
        store_error (self, error);
      hz_redact_worker_notify (hz_app_context_get_application (self->ctx), store_of (self));
    }
  if (user_id == 0)
    user_id = local_id (self);

  g_autoptr(HzMessageItem) user = hz_message_item_new (user_id, HZ_ROLE_USER, text);
  hz_message_item_set_parent_id (user, parent);
  tree_add (self, user);
  tree_choose (self, parent, user_id);
  branch_changed (self);
  start_reply (self, user_id);
}

gboolean
hz_chat_session_regenerate (HzChatSession *self, gint64 message_id)
{
  g_return_val_if_fail (HZ_IS_CHAT_SESSION (self), FALSE);
  HzMessageItem *item = hz_chat_session_get_message (self, message_id);

  if (self->request_id != 0 || item == NULL)
    return FALSE;
  if (hz_message_item_get_role (item) == HZ_ROLE_ASSISTANT)
    {
      gint64 parent = hz_message_item_get_parent_id (item);
      if (hz_chat_session_get_message (self, parent) == NULL)
        return FALSE;
      start_reply (self, parent);  /* answers the user message again */
      return TRUE;
    }
  if (hz_message_item_get_role (item) == HZ_ROLE_USER)
    {
      start_reply (self, message_id);  /* its reply was lost */
      return TRUE;
    }
  return FALSE;
}

void
hz_chat_session_stop (HzChatSession *self)
{
  g_return_if_fail (HZ_IS_CHAT_SESSION (self));
  if (self->request_id != 0)
    hz_engine_worker_cancel (self->worker);
}

/* Write the reply's text so far to the store, with `n_tokens` generated tokens (its count so
 * far while it streams or when it is cut short, so that a crash or a closed window leaves
 * the real count, not 0). */
static void
save_reply (HzChatSession *self, gint64 n_tokens, double ttft_s, double tokens_per_s)
{
  g_autoptr(GError) error = NULL;

  self->reply_dirty = FALSE;
  if (store_of (self) == NULL || self->reply_message_id == 0)
    return;
  if (!hz_store_update_reply (store_of (self), self->reply_message_id,
                              hz_message_item_get_text (self->reply_item),
                              hz_message_item_get_reasoning (self->reply_item),
                              n_tokens, ttft_s, tokens_per_s, &error))
    store_error (self, error);
}

static gboolean
save_reply_timeout (gpointer data)
{
  HzChatSession *self = data;

  if (self->reply_dirty)
    save_reply (self, self->reply_n_tokens, NAN, NAN);
  return G_SOURCE_CONTINUE;
}

static void
end_reply (HzChatSession *self, gboolean keep)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HzMessageItem) reply = g_steal_pointer (&self->reply_item);

  if (store_of (self) != NULL && self->reply_message_id != 0)
    {
      gboolean ok = keep
        ? hz_store_set_message_complete (store_of (self), self->reply_message_id, &error)
        : hz_store_delete_message (store_of (self), self->reply_message_id, &error);
      if (!ok)
        store_error (self, error);
      hz_redact_worker_notify (hz_app_context_get_application (self->ctx), store_of (self));
    }
  hz_message_item_set_streaming (reply, FALSE);
  if (!keep && hz_chat_session_get_message (self, hz_message_item_get_id (reply)) == reply)
    {
      tree_remove (self, reply);
      branch_changed (self);
    }
  g_clear_handle_id (&self->save_timeout_id, g_source_remove);
  self->reply_message_id = 0;
  self->request_id = 0;
  if (self->learner_held)
    {
      self->learner_held = FALSE;
      hz_learner_release (hz_app_context_get_learner (self->ctx));
    }
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_GENERATING]);
}

/* Store how the reply was limited (cut, earlier messages unseen), when it was. */
static void
save_reply_limits (HzChatSession *self)
{
  g_autoptr(GError) error = NULL;
  const gboolean cut = hz_message_item_get_cut (self->reply_item);
  const gint64 n_unseen = hz_message_item_get_n_unseen (self->reply_item);

  if (store_of (self) == NULL || self->reply_message_id == 0 || (!cut && n_unseen == 0))
    return;
  if (!hz_store_set_message_limits (store_of (self), self->reply_message_id, cut, n_unseen,
                                    &error))
    store_error (self, error);
}

/* Whether the reply has anything to keep: an answer, or reasoning (stopped while the model
 * was thinking). */
static gboolean
reply_has_text (HzMessageItem *reply)
{
  return *hz_message_item_get_text (reply) != '\0' ||
         *hz_message_item_get_reasoning (reply) != '\0';
}

/* The conversation outgrew the context: the reply is written without the oldest messages
 * (the first such reply of the branch gets the notice). */
static void
on_worker_trimmed (HzEngineWorker *worker, guint request, guint n_dropped, HzChatSession *self)
{
  if (request != self->request_id || self->reply_item == NULL)
    return;
  hz_message_item_set_n_unseen (self->reply_item, n_dropped);
  g_ptr_array_unref (hz_chat_session_get_branch (self));   /* places the notice */
}

static void
on_worker_token (HzEngineWorker *worker, guint request, const char *text, guint n_generated,
                 HzChatSession *self)
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
                     guint n_generated, HzChatSession *self)
{
  if (request != self->request_id || self->reply_item == NULL)
    return;
  hz_message_item_append_reasoning (self->reply_item, text);
  self->reply_n_tokens = n_generated;
  self->reply_dirty = TRUE;
}

/* After the first exchange of a chat whose title is still the one made from its first
 * message: ask the model for a better one (in the background, at low priority). */
static void
maybe_request_title (HzChatSession *self, const char *reply, const HzGenerateStats *stats)
{
  if (*reply == '\0' || stats->stop_reason == HZ_STOP_CANCELLED || self->conversation_id == 0)
    return;
  g_autoptr(GPtrArray) branch = hz_chat_session_get_branch (self);
  if (branch->len != 2)
    return;
  HzMessageItem *first = branch->pdata[0];
  HzConversationItem *conv = hz_chat_session_find_conversation (self, self->conversation_id,
                                                                NULL);
  g_autofree char *heuristic = hz_title_from_text (hz_message_item_get_text (first));
  if (conv == NULL || g_strcmp0 (hz_conversation_item_get_title (conv), heuristic) != 0)
    return;

  g_autofree char *prompt = hz_title_prompt (hz_message_item_get_text (first), reply);
  guint id = hz_engine_worker_generate_title (self->worker, prompt);
  TitleRequest *t = g_new0 (TitleRequest, 1);
  t->conversation_id = self->conversation_id;
  t->expected = g_steal_pointer (&heuristic);
  g_hash_table_insert (self->title_requests, GUINT_TO_POINTER (id), t);
}

/* The model's title: used only when usable and the title is still the one made from the
 * first message (the user may have renamed it meanwhile). */
static void
on_worker_title (HzEngineWorker *worker, guint request, const char *text, HzChatSession *self)
{
  TitleRequest *t = g_hash_table_lookup (self->title_requests, GUINT_TO_POINTER (request));

  if (t == NULL)
    return;
  g_autofree char *title = hz_title_sanitize (text);
  HzConversationItem *item = hz_chat_session_find_conversation (self, t->conversation_id, NULL);
  if (title != NULL && item != NULL &&
      g_strcmp0 (hz_conversation_item_get_title (item), t->expected) == 0)
    hz_chat_session_rename (self, t->conversation_id, title);
  g_hash_table_remove (self->title_requests, GUINT_TO_POINTER (request));
}

static void
on_worker_finished (HzEngineWorker *worker, guint request, const char *text,
                    gpointer stats_ptr, HzChatSession *self)
{
  const HzGenerateStats *stats = stats_ptr;

  if (request != self->request_id || self->reply_item == NULL)
    return;

  double tps = stats->gen_seconds > 0 ? stats->n_generated / stats->gen_seconds : -1;
  hz_model_library_record_speed (hz_app_context_get_model_library (self->ctx),
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
  g_signal_emit (self, signals[REPLY_DONE], 0, text);
}

static void
on_worker_error (HzEngineWorker *worker, guint request, GError *error, HzChatSession *self)
{
  if (request != self->request_id || self->reply_item == NULL)
    return;

  gboolean has_text = reply_has_text (self->reply_item);
  if (has_text)
    save_reply (self, self->reply_n_tokens, NAN, NAN);
  end_reply (self, has_text);
  g_signal_emit (self, signals[REPLY_ERROR], 0, error);
}

void
hz_chat_session_close (HzChatSession *self)
{
  g_return_if_fail (HZ_IS_CHAT_SESSION (self));
  cancel_load (self);
  if (self->request_id != 0)
    hz_engine_worker_cancel (self->worker);
  /* A reply cut short keeps its text (saved, marked complete). */
  if (self->reply_item != NULL)
    {
      save_reply (self, self->reply_n_tokens, NAN, NAN);
      end_reply (self, reply_has_text (self->reply_item));
    }
  hz_chat_session_commit_deletes (self);
}

/* ------------------------------------------------------------------ public API */

HzChatSession *
hz_chat_session_new (HzAppContext *ctx)
{
  g_return_val_if_fail (HZ_IS_APP_CONTEXT (ctx), NULL);
  HzChatSession *self = g_object_new (HZ_TYPE_CHAT_SESSION, NULL);

  self->ctx = g_object_ref (ctx);
  self->list = hz_chat_list_new (ctx);
  self->worker = g_object_ref (hz_app_context_get_worker (ctx));
  self->worker_handlers[0] = g_signal_connect (self->worker, "token",
                                               G_CALLBACK (on_worker_token), self);
  self->worker_handlers[1] = g_signal_connect (self->worker, "finished",
                                               G_CALLBACK (on_worker_finished), self);
  self->worker_handlers[2] = g_signal_connect (self->worker, "error",
                                               G_CALLBACK (on_worker_error), self);
  self->worker_handlers[3] = g_signal_connect (self->worker, "title",
                                               G_CALLBACK (on_worker_title), self);
  self->worker_handlers[4] = g_signal_connect (self->worker, "trimmed",
                                               G_CALLBACK (on_worker_trimmed), self);
  self->worker_handlers[5] = g_signal_connect (self->worker, "reasoning",
                                               G_CALLBACK (on_worker_reasoning), self);
  HzStore *store = hz_app_context_get_store (ctx);
  if (store != NULL)
    self->reader = hz_chat_reader_new (hz_store_get_path (store));
  hz_chat_session_load_conversations (self);
  return self;
}

GListModel *
hz_chat_session_get_conversations (HzChatSession *self)
{
  g_return_val_if_fail (HZ_IS_CHAT_SESSION (self), NULL);
  return hz_chat_list_get_model (self->list);
}

/* ------------------------------------------------------------------ GObject */

static void
hz_chat_session_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  HzChatSession *self = HZ_CHAT_SESSION (object);

  switch (prop_id)
    {
    case PROP_GENERATING:
      g_value_set_boolean (value, self->request_id != 0);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hz_chat_session_dispose (GObject *object)
{
  HzChatSession *self = HZ_CHAT_SESSION (object);

  if (self->worker != NULL)
    {
      hz_chat_session_close (self);
      for (guint i = 0; i < G_N_ELEMENTS (self->worker_handlers); i++)
        g_clear_signal_handler (&self->worker_handlers[i], self->worker);
    }
  g_clear_object (&self->worker);
  g_clear_pointer (&self->reader, hz_chat_reader_unref);
  G_OBJECT_CLASS (hz_chat_session_parent_class)->dispose (object);
}

static void
hz_chat_session_finalize (GObject *object)
{
  HzChatSession *self = HZ_CHAT_SESSION (object);

  g_clear_object (&self->ctx);
  g_clear_object (&self->list);
  g_clear_pointer (&self->nodes, g_hash_table_unref);
  g_clear_pointer (&self->children, g_hash_table_unref);
  g_clear_pointer (&self->choices, g_hash_table_unref);
  g_clear_pointer (&self->title_requests, g_hash_table_unref);
  g_free (self->system_prompt);
  G_OBJECT_CLASS (hz_chat_session_parent_class)->finalize (object);
}

static void
title_request_free (gpointer p)
{
  TitleRequest *t = p;
  g_free (t->expected);
  g_free (t);
}

static void
hz_chat_session_class_init (HzChatSessionClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = hz_chat_session_get_property;
  object_class->dispose = hz_chat_session_dispose;
  object_class->finalize = hz_chat_session_finalize;

  props[PROP_GENERATING] = g_param_spec_boolean ("generating", NULL, NULL, FALSE,
                                                 G_PARAM_READABLE | G_PARAM_STATIC_STRINGS |
                                                 G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, N_PROPS, props);

  signals[BRANCH_CHANGED] = g_signal_new ("branch-changed", G_TYPE_FROM_CLASS (klass),
                                          G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                          G_TYPE_NONE, 0);
  signals[SHOWING] = g_signal_new ("showing", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                   0, NULL, NULL, NULL, G_TYPE_NONE, 2,
                                   G_TYPE_INT64, G_TYPE_BOOLEAN);
  signals[SHOWN] = g_signal_new ("shown", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                 0, NULL, NULL, NULL, G_TYPE_NONE, 2,
                                 G_TYPE_INT64, G_TYPE_BOOLEAN);
  signals[TITLE_CHANGED] = g_signal_new ("title-changed", G_TYPE_FROM_CLASS (klass),
                                         G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                         G_TYPE_NONE, 1, G_TYPE_INT64);
  signals[STORE_ERROR] = g_signal_new ("store-error", G_TYPE_FROM_CLASS (klass),
                                       G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                       G_TYPE_NONE, 1, G_TYPE_ERROR);
  signals[REPLY_DONE] = g_signal_new ("reply-done", G_TYPE_FROM_CLASS (klass),
                                      G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                      G_TYPE_NONE, 1, G_TYPE_STRING);
  signals[REPLY_ERROR] = g_signal_new ("reply-error", G_TYPE_FROM_CLASS (klass),
                                       G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                       G_TYPE_NONE, 1, G_TYPE_ERROR);
}

static void
hz_chat_session_init (HzChatSession *self)
{
  self->nodes = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_object_unref);
  self->children = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                          (GDestroyNotify) g_ptr_array_unref);
  self->choices = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  self->title_requests = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL,
                                                title_request_free);
}
