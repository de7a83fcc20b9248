/* hz-chat-session.h — HzChatSession: the chats of Hanzo Desktop without their window
 * (issue 26 item 5), as GNOME Text Editor keeps an EditorSession under its EditorWindow.
 *
 * One per application (HzApplication makes it at startup); HzWindow renders it and follows
 * its signals, the privacy page asks it to delete everything. It holds
 *  - the conversation list (HzConversationItem: pinned ones first, then the most recently
 *    used; conversations deleted with an Undo pending are left out) and the store writes
 *    that change it: create, rename, pin, system prompt, delete (with undo), delete all;
 *  - the shown conversation as a tree of messages (hanzo-store-feedback.h): regenerating a
 *    reply or editing a user message adds a sibling; the branch shown chooses the newest
 *    sibling at each step unless another was chosen (hz_chat_session_page_alternative(),
 *    hz_chat_session_reveal());
 *  - the reply being generated: start_reply saves an empty, incomplete assistant message
 *    under the user message it answers and queues the generation on the engine worker
 *    (hz-app-context.h: the model's settings for temperature, top-p, reply length; the
 *    app's seed); "token" and "reasoning" signals append to the reply's item; its text and
 *    the tokens generated so far are written to the store every 500 ms while it grows, and
 *    once more when it finishes, fails, is stopped or the session is closed (marked
 *    complete, or deleted when nothing came); the learner is held while it runs; the first
 *    exchange of a chat asks the model for a title (hz-title.h).
 * Messages and conversations not stored (no store, or a failed write) get negative ids and
 * live in memory only. Store errors are reported by "store-error" and leave the rest going.
 *
 * Signals:
 *  - "branch-changed" (): the branch shown (hz_chat_session_get_branch()) changed.
 *  - "showing" (gint64 conversation_id, gboolean reading): another conversation is shown
 *    (its tree is empty now); `reading`: its messages are being read in a thread.
 *  - "shown" (gint64 reveal_id, gboolean read_in_thread): its messages are in the tree
 *    (or could not be read: "store-error" came first); `reveal_id`: the message to show,
 *    0 = the end. After a read in a thread the branch is NOT announced by
 *    "branch-changed": the window puts it in at its own pace.
 *  - "title-changed" (gint64 conversation_id): a conversation was renamed.
 *  - "store-error" (GError *error): a store read or write failed.
 *  - "reply-done" (const char *text): the reply finished (also when stopped).
 *  - "reply-error" (GError *error): the reply could not be generated (its text so far is
 *    kept).
 * Property "generating" (gboolean, read-only): whether a reply is being generated.
 * Main thread only (the reads in a thread use their own store connection).
 */
#pragma once

#include <gio/gio.h>
#include "hz-app-context.h"
#include "hz-conversation-item.h"
#include "hz-message-item.h"

G_BEGIN_DECLS

#define HZ_TYPE_CHAT_SESSION (hz_chat_session_get_type ())
G_DECLARE_FINAL_TYPE (HzChatSession, hz_chat_session, HZ, CHAT_SESSION, GObject)

/** A session on `ctx`'s store and engine worker, showing a new chat, its conversation
 *  list read from the store. */
HzChatSession *hz_chat_session_new (HzAppContext *ctx);

/** Stop the reply being generated, keeping its text (saved, marked complete; dropped when
 *  empty), forget a conversation being read, and delete the conversations whose Undo is
 *  pending. The session stays usable. What closing the window does. */
void           hz_chat_session_close (HzChatSession *self);

/* ---- the conversation list */

/** The conversations (HzConversationItem), pinned first, then newest first. */
GListModel    *hz_chat_session_get_conversations (HzChatSession *self);
/** The conversation `id` of the list (borrowed) and its `position` (nullable), or NULL. */
HzConversationItem *hz_chat_session_find_conversation (HzChatSession *self, gint64 id,
                                                       guint *position);
/** Read the conversation list from the store again. */
void           hz_chat_session_load_conversations (HzChatSession *self);
/** Rename conversation `id` (store and list; "title-changed"). FALSE on a store error. */
gboolean       hz_chat_session_rename (HzChatSession *self, gint64 id, const char *title);
/** Pin or unpin conversation `id`; it moves to the top of its group. FALSE on an error. */
gboolean       hz_chat_session_set_pinned (HzChatSession *self, gint64 id, gboolean pinned);
/** The shown conversation's system prompt ("" or NULL: none). FALSE on a store error. */
gboolean       hz_chat_session_set_system_prompt (HzChatSession *self, const char *prompt);
/** Take conversation `id` off the list, to be deleted from the store by
 *  hz_chat_session_commit_delete() unless hz_chat_session_undo_delete() comes first.
 *  Returns the deletion's handle (> 0), or 0 when `id` is not listed or a reply is being
 *  generated. */
guint          hz_chat_session_delete (HzChatSession *self, gint64 id);
/** Put conversation `id` (deleted, neither undone nor committed) back where it was and give
 *  its `position` (nullable). FALSE when there is nothing to undo. */
gboolean       hz_chat_session_undo_delete (HzChatSession *self, gint64 id, guint *position);
/** End the deletion `handle`: the conversation is deleted from the store unless it was
 *  undone or committed already. Unknown handles are ignored. */
void           hz_chat_session_commit_delete (HzChatSession *self, guint handle);
/** hz_chat_session_commit_delete() for every deletion still pending. */
void           hz_chat_session_commit_deletes (HzChatSession *self);
/** Stop the reply, commit pending deletions, then delete every conversation of the store
 *  in one transaction (their messages, redacted copies, vault entries and feedback go with
 *  them) and show a new chat with the list read again. FALSE with `error` (nothing
 *  deleted) on a store error or with no store. */
gboolean       hz_chat_session_delete_everything (HzChatSession *self, GError **error);

/** Search all messages (the store's FTS5 index, best `limit` first) on a thread with the
 *  session's reader connection. Finish gives a GPtrArray of HzSearchHit
 *  (hanzo-store.h), or NULL with `error`. */
void           hz_chat_session_search_async (HzChatSession *self, const char *query,
                                             guint limit, GCancellable *cancellable,
                                             GAsyncReadyCallback callback, gpointer data);
GPtrArray     *hz_chat_session_search_finish (HzChatSession *self, GAsyncResult *result,
                                              GError **error);

/* ---- the shown conversation */

/** The shown conversation's id: 0 = a new chat (not stored yet), < 0 = in memory only. */
gint64         hz_chat_session_get_conversation_id (HzChatSession *self);
const char    *hz_chat_session_get_system_prompt (HzChatSession *self);
/** Show conversation `id` (0: a new chat), its messages read on this thread ("showing",
 *  then "shown"). */
void           hz_chat_session_show (HzChatSession *self, gint64 conversation_id);
/** Show conversation `id`, its messages read on a thread ("showing", then "shown" when
 *  read); then `reveal_id` (0: the end). A later show drops this one's result. */
void           hz_chat_session_open (HzChatSession *self, gint64 conversation_id,
                                     gint64 reveal_id);
/** Whether the shown conversation's messages are being read. */
gboolean       hz_chat_session_is_loading (HzChatSession *self);
/** The branch to show, first message first (borrowed HzMessageItems); sets each item's
 *  place among its alternatives and the "earlier messages unseen" notice. */
GPtrArray     *hz_chat_session_get_branch (HzChatSession *self);
/** A message of the shown conversation (any branch; borrowed), or NULL. */
HzMessageItem *hz_chat_session_get_message (HzChatSession *self, gint64 id);
/** Choose, at every step from the top, the branch that leads to `message_id`. */
void           hz_chat_session_reveal (HzChatSession *self, gint64 message_id);
/** Show the previous (`delta` -1) or next (+1) alternative of `message_id`; FALSE when
 *  there is none or a reply is being generated. */
gboolean       hz_chat_session_page_alternative (HzChatSession *self, gint64 message_id,
                                                 int delta);
/** Rate reply `message_id` +1 or -1 (the same again clears it); FALSE when it is not a
 *  reply or the store failed. */
gboolean       hz_chat_session_rate (HzChatSession *self, gint64 message_id, int want);

/* ---- generating */

gboolean       hz_chat_session_is_generating (HzChatSession *self);
/** Send the user message `text` (a new conversation when a new chat is shown) under the
 *  last message of the branch, or as an alternative of the user message `edit_of` (0:
 *  none), and start the reply. The caller checks that a model is ready and no reply is
 *  being generated. */
void           hz_chat_session_send (HzChatSession *self, const char *text, gint64 edit_of);
/** Write reply `message_id` again (an alternative answers its user message), or answer
 *  the user message `message_id` whose reply was lost. FALSE when nothing was started. */
gboolean       hz_chat_session_regenerate (HzChatSession *self, gint64 message_id);
/** Stop the reply being generated ("reply-done" follows from the worker). */
void           hz_chat_session_stop (HzChatSession *self);

G_END_DECLS
