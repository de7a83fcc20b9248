/* tests/ui/test-chat-session.c — HzChatSession (app/hz-chat-session.h) without a window:
 * a real SQLite store in a throwaway XDG_DATA_HOME, the real engine worker and the shared
 * stories260K model (skipped with a message when ../shared lacks it), a plain GLib main
 * loop (no window, no display needed; GSettings in a throwaway keyfile).
 *   - send: a conversation is created and listed, the user message and the reply are
 *     stored under it, the reply complete with the text shown and its token count;
 *     "branch-changed", "reply-done" and notify::generating come in order;
 *   - partial replies: while a long reply streams its text and token count reach the store
 *     (incomplete); hz_chat_session_close() mid-reply keeps exactly the text shown, marked
 *     complete, with the tokens streamed;
 *   - alternatives: regenerating adds a sibling reply; paging shows either;
 *   - rename, pin (moves to the top) and rating reach the store;
 *   - delete with undo (nothing deleted), then for good; a conversation read on a thread
 *     ("showing"/"shown" with read_in_thread) fills the tree; delete everything empties
 *     the store and shows a new chat. */
#include <string.h>

#include <hanzo-store-feedback.h>
#include "hz-app-context.h"
#include "hz-chat-session.h"
#include "ui-test-util.h"   /* (its throwaway environment and main-loop waits; no window) */

#define PROMPT "Once upon a time"

typedef struct {
  guint    branch_changed, showing, shown, titles, store_errors, done, generating_changes;
  gboolean last_shown_in_thread;
  char    *last_done;
  guint    tokens;            /* worker "token" signals */
} Events;

static void
on_branch_changed (HzChatSession *s, Events *ev)
{
  ev->branch_changed++;
}

static void
on_showing (HzChatSession *s, gint64 id, gboolean reading, Events *ev)
{
  ev->showing++;
}

static void
on_shown (HzChatSession *s, gint64 reveal, gboolean in_thread, Events *ev)
{
  ev->shown++;
  ev->last_shown_in_thread = in_thread;
}

static void
on_title_changed (HzChatSession *s, gint64 id, Events *ev)
{
  ev->titles++;
}

static void
on_store_error (HzChatSession *s, GError *error, Events *ev)
{
  g_test_message ("store error: %s", error->message);
  ev->store_errors++;
}

static void
on_reply_done (HzChatSession *s, const char *text, Events *ev)
{
  ev->done++;
  g_free (ev->last_done);
  ev->last_done = g_strdup (text);
}

static void
on_generating (HzChatSession *s, GParamSpec *pspec, Events *ev)
{
  ev->generating_changes++;
}

static void
on_token (HzEngineWorker *w, guint request, const char *text, guint n, Events *ev)
{
  ev->tokens++;
}

static gboolean
model_loaded (gpointer ctx)
{
  return hz_engine_worker_is_model_loaded (hz_app_context_get_worker (ctx));
}

static gboolean
idle (gpointer session)
{
  return !hz_chat_session_is_generating (session);
}

static gboolean
not_loading (gpointer session)
{
  return !hz_chat_session_is_loading (session);
}

typedef struct {
  Events        *ev;
  HzChatSession *session;
} Streaming;

static gboolean
streamed_a_while (gpointer data)
{
  Streaming *st = data;
  return st->ev->tokens >= 12 || !hz_chat_session_is_generating (st->session);
}

static HzMessageItem *
branch_at (HzChatSession *session, guint i)
{
  g_autoptr(GPtrArray) branch = hz_chat_session_get_branch (session);
  g_assert_cmpuint (i, <, branch->len);
  return branch->pdata[i];
}

static guint
branch_len (HzChatSession *session)
{
  g_autoptr(GPtrArray) branch = hz_chat_session_get_branch (session);
  return branch->len;
}

static void
test_session (void)
{
  g_autofree char *model = hz_test_shared_path ("models/stories260K.gguf");
  if (model == NULL)
    return;
  g_autoptr(GError) error = NULL;
  Events ev = { 0 };

  g_autoptr(GApplication) app = g_application_new ("ai.hanzo.Desktop", G_APPLICATION_NON_UNIQUE);
  g_autoptr(HzAppContext) ctx = hz_app_context_new (app);
  HzStore *store = hz_app_context_get_store (ctx);
  g_assert_nonnull (store);
  GSettings *settings = hz_app_context_get_settings (ctx);
  g_settings_set_double (settings, "temperature", 0.0);
  g_settings_set_uint64 (settings, "seed", 1234);
  g_settings_set_int (settings, "max-tokens", 24);
  g_settings_set_int (settings, "context-length", 32768);   /* a long reply below */

  g_autoptr(HzChatSession) session = hz_chat_session_new (ctx);
  g_signal_connect (session, "branch-changed", G_CALLBACK (on_branch_changed), &ev);
  g_signal_connect (session, "showing", G_CALLBACK (on_showing), &ev);
  g_signal_connect (session, "shown", G_CALLBACK (on_shown), &ev);
  g_signal_connect (session, "title-changed", G_CALLBACK (on_title_changed), &ev);
  g_signal_connect (session, "store-error", G_CALLBACK (on_store_error), &ev);
  g_signal_connect (session, "reply-done", G_CALLBACK (on_reply_done), &ev);
  g_signal_connect (session, "notify::generating", G_CALLBACK (on_generating), &ev);
  g_signal_connect (hz_app_context_get_worker (ctx), "token", G_CALLBACK (on_token), &ev);
  GListModel *convs = hz_chat_session_get_conversations (session);
  g_assert_cmpuint (g_list_model_get_n_items (convs), ==, 0);
  g_assert_cmpint (hz_chat_session_get_conversation_id (session), ==, 0);

  hz_app_context_open_model (ctx, model, FALSE);
  g_assert_true (hz_ui_wait_for (model_loaded, ctx, 60));

  /* ---- send: a new conversation, the user message and a complete reply */
  hz_chat_session_send (session, PROMPT, 0);
  g_assert_true (hz_chat_session_is_generating (session));
  g_assert_cmpuint (ev.generating_changes, ==, 1);
  g_assert_cmpuint (ev.branch_changed, >=, 2);
  const gint64 conv = hz_chat_session_get_conversation_id (session);
  g_assert_cmpint (conv, >, 0);
  g_assert_cmpuint (g_list_model_get_n_items (convs), ==, 1);
  g_assert_true (hz_ui_wait_for (idle, session, 60));
  g_assert_cmpuint (ev.generating_changes, ==, 2);
  g_assert_cmpuint (ev.done, ==, 1);
  g_assert_cmpuint (ev.store_errors, ==, 0);
  g_assert_cmpuint (branch_len (session), ==, 2);
  HzMessageItem *user = branch_at (session, 0), *reply = branch_at (session, 1);
  g_assert_cmpstr (hz_message_item_get_text (user), ==, PROMPT);
  g_assert_cmpstr (hz_message_item_get_text (reply), ==, ev.last_done);
  g_assert_cmpstr (ev.last_done, !=, "");
  {
    g_autoptr(GPtrArray) msgs = hz_store_list_messages (store, conv, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (msgs->len, ==, 2);
    HzMessage *u = msgs->pdata[0], *a = msgs->pdata[1];
    g_assert_cmpint (u->id, ==, hz_message_item_get_id (user));
    g_assert_cmpint (u->role, ==, HZ_ROLE_USER);
    g_assert_cmpint (a->id, ==, hz_message_item_get_id (reply));
    g_assert_cmpint (a->parent_id, ==, u->id);
    g_assert_true (a->complete);
    g_assert_cmpstr (a->content, ==, ev.last_done);
    g_assert_cmpint (a->n_tokens, >, 0);
    g_assert_cmpint (a->n_tokens, <=, 24);
  }
  const gint64 first_reply = hz_message_item_get_id (reply);

  /* ---- alternatives: a second reply to the same message; page between them */
  g_assert_true (hz_chat_session_regenerate (session, first_reply));
  g_assert_true (hz_ui_wait_for (idle, session, 60));
  g_assert_cmpuint (branch_len (session), ==, 2);
  const gint64 second_reply = hz_message_item_get_id (branch_at (session, 1));
  g_assert_cmpint (second_reply, !=, first_reply);
  g_assert_true (hz_chat_session_page_alternative (session, second_reply, -1));
  g_assert_cmpint (hz_message_item_get_id (branch_at (session, 1)), ==, first_reply);
  g_assert_false (hz_chat_session_page_alternative (session, first_reply, -1));
  hz_chat_session_reveal (session, second_reply);
  g_assert_cmpint (hz_message_item_get_id (branch_at (session, 1)), ==, second_reply);

  /* ---- rating, rename, pin */
  g_assert_true (hz_chat_session_rate (session, second_reply, +1));
  {
    g_autoptr(GPtrArray) fb = hz_store_list_feedback (store, conv, 0, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (fb->len, ==, 1);
    g_assert_cmpint (((HzMessageFeedback *) fb->pdata[0])->rating, ==, 1);
  }
  g_assert_false (hz_chat_session_rate (session, hz_message_item_get_id (user), +1));
  guint titles = ev.titles;
  g_assert_true (hz_chat_session_rename (session, conv, "Stories"));
  g_assert_cmpuint (ev.titles, ==, titles + 1);
  {
    g_autoptr(HzConversation) c = hz_store_get_conversation (store, conv, &error);
    g_assert_no_error (error);
    g_assert_cmpstr (c->title, ==, "Stories");
  }

  /* ---- partial replies: a long reply is saved while it streams, and closing keeps it */
  g_settings_set_int (settings, "max-tokens", 30000);
  hz_chat_session_show (session, 0);
  g_assert_cmpuint (branch_len (session), ==, 0);
  ev.tokens = 0;
  hz_chat_session_send (session, PROMPT, 0);
  const gint64 conv2 = hz_chat_session_get_conversation_id (session);
  g_assert_cmpint (conv2, >, conv);
  g_assert_cmpuint (g_list_model_get_n_items (convs), ==, 2);
  {
    g_autoptr(HzConversationItem) top = g_list_model_get_item (convs, 0);
    g_assert_cmpint (hz_conversation_item_get_id (top), ==, conv2);   /* newest first */
  }
  Streaming st = { &ev, session };
  g_assert_true (hz_ui_wait_for (streamed_a_while, &st, 60));
  hz_ui_spin (0.7);   /* past the periodic save (500 ms) */
  g_assert_true (hz_chat_session_is_generating (session));
  HzMessageItem *long_reply = branch_at (session, 1);
  const gint64 long_id = hz_message_item_get_id (long_reply);
  {
    g_autoptr(HzMessage) partial = hz_store_get_message (store, long_id, &error);
    g_assert_no_error (error);
    g_assert_false (partial->complete);
    g_assert_cmpstr (partial->content, !=, "");
    g_assert_true (g_str_has_prefix (hz_message_item_get_text (long_reply), partial->content));
    g_assert_cmpint (partial->n_tokens, >, 0);
  }
  g_autofree char *shown = g_strdup (hz_message_item_get_text (long_reply));
  hz_chat_session_close (session);   /* what closing the window does */
  g_assert_false (hz_chat_session_is_generating (session));
  {
    g_autoptr(HzMessage) kept = hz_store_get_message (store, long_id, &error);
    g_assert_no_error (error);
    g_assert_true (kept->complete);
    g_assert_cmpstr (kept->content, ==, shown);
    g_assert_cmpint (kept->n_tokens, >, 0);
    g_test_message ("closed mid-reply: %" G_GINT64_FORMAT " tokens saved, %zu bytes",
                    kept->n_tokens, strlen (kept->content));
  }
  hz_ui_spin (0.3);   /* the cancelled request's "finished" is ignored */
  g_settings_set_int (settings, "max-tokens", 24);

  /* ---- pin moves the older conversation to the top */
  g_assert_true (hz_chat_session_set_pinned (session, conv, TRUE));
  {
    g_autoptr(HzConversationItem) top = g_list_model_get_item (convs, 0);
    g_assert_cmpint (hz_conversation_item_get_id (top), ==, conv);
    g_autoptr(HzConversation) c = hz_store_get_conversation (store, conv, &error);
    g_assert_true (c->pinned);
  }

  /* ---- a conversation read on a thread */
  guint shown_before = ev.shown;
  hz_chat_session_open (session, conv, 0);
  g_assert_true (hz_chat_session_is_loading (session));
  g_assert_true (hz_ui_wait_for (not_loading, session, 10));
  g_assert_cmpuint (ev.shown, ==, shown_before + 1);
  g_assert_true (ev.last_shown_in_thread);
  g_assert_cmpint (hz_chat_session_get_conversation_id (session), ==, conv);
  g_assert_cmpuint (branch_len (session), ==, 2);
  g_assert_cmpint (hz_message_item_get_id (branch_at (session, 1)), ==, second_reply);  /* newest */
  g_assert_nonnull (hz_chat_session_get_message (session, first_reply));
  g_assert_cmpint (hz_message_item_get_rating (branch_at (session, 1)), ==, 1);

  /* ---- delete with undo, then for good */
  guint handle = hz_chat_session_delete (session, conv2);
  g_assert_cmpuint (handle, >, 0);
  g_assert_null (hz_chat_session_find_conversation (session, conv2, NULL));
  guint position = 99;
  g_assert_true (hz_chat_session_undo_delete (session, conv2, &position));
  g_assert_cmpuint (position, ==, 1);
  hz_chat_session_commit_delete (session, handle);   /* (its toast goes away) */
  {
    g_autoptr(HzConversation) c = hz_store_get_conversation (store, conv2, &error);
    g_assert_no_error (error);
    g_assert_nonnull (c);
  }
  handle = hz_chat_session_delete (session, conv2);
  hz_chat_session_load_conversations (session);   /* a pending deletion stays hidden */
  g_assert_null (hz_chat_session_find_conversation (session, conv2, NULL));
  hz_chat_session_commit_delete (session, handle);
  {
    g_autoptr(HzConversation) c = hz_store_get_conversation (store, conv2, &error);
    g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_NOT_FOUND);
    g_assert_null (c);
    g_clear_error (&error);
  }
  g_assert_false (hz_chat_session_undo_delete (session, conv2, NULL));

  /* ---- delete everything */
  g_assert_true (hz_chat_session_delete_everything (session, &error));
  g_assert_no_error (error);
  g_assert_cmpint (hz_chat_session_get_conversation_id (session), ==, 0);
  g_assert_cmpuint (g_list_model_get_n_items (convs), ==, 0);
  g_assert_cmpuint (branch_len (session), ==, 0);
  {
    g_autoptr(GPtrArray) all = hz_store_list_conversations (store, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (all->len, ==, 0);
  }
  g_assert_cmpuint (ev.store_errors, ==, 0);

  g_signal_handlers_disconnect_by_data (hz_app_context_get_worker (ctx), &ev);
  g_object_run_dispose (G_OBJECT (session));
  hz_app_context_shutdown (ctx);
  g_free (ev.last_done);
}

int
main (int argc, char **argv)
{
  hz_ui_test_init ();
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/chat-session/send-save-delete", test_session);
  int ret = g_test_run ();
  hz_ui_test_cleanup ();
  return ret;
}
