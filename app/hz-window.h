/* hz-window.h — HzWindow: the main window (conversation sidebar, chat view, composer).
 *
 * Actions: win.send, win.stop (Esc), win.new-chat, win.open-model, win.search,
 * win.regenerate (the last reply), and per message (target: its store id, "x")
 * win.regenerate-message, win.edit-message, win.copy-message, win.rate-good, win.rate-bad,
 * win.previous-alternative, win.next-alternative; win.cancel-edit (Esc while editing),
 * win.undo-delete (x: conversation id). The "conv" group acts on the shown conversation:
 * conv.rename, conv.pin (boolean state), conv.system-prompt, conv.export ("markdown" or
 * "json"), conv.delete (with an Undo toast).
 *
 * Shows the application's HzChatSession (hz-chat-session.h), which streams the replies
 * from the engine worker and saves conversations and messages to the store (the streamed
 * reply at least once a second). All functions are for the main thread.
 */
#pragma once

#include <adwaita.h>
#include "hz-app-context.h"
#include "hz-chat-session.h"
#include "hz-export.h"

G_BEGIN_DECLS

#define HZ_TYPE_WINDOW (hz_window_get_type ())
G_DECLARE_FINAL_TYPE (HzWindow, hz_window, HZ, WINDOW, AdwApplicationWindow)

/** A new window of `app` (after its startup) on the app-wide objects `ctx`, showing
 *  `session` (both referenced; closing the window closes the session's reply,
 *  hz_chat_session_close()). */
HzWindow   *hz_window_new (GtkApplication *app, HzAppContext *ctx, HzChatSession *session);

/** The session the window shows. */
HzChatSession *hz_window_get_session (HzWindow *self);

/** The composer's text view (for tests and accessibility tooling). */
GtkTextView *hz_window_get_composer (HzWindow *self);

/** The conversations shown in the sidebar (HzConversationItem), newest first. */
GListModel *hz_window_get_conversations (HzWindow *self);

/** The messages of the shown conversation (HzMessageItem), oldest first. */
GListModel *hz_window_get_messages (HzWindow *self);

/** Show conversation number `position` of hz_window_get_conversations(), its messages
 *  read before this returns (a click in the list reads them on a thread instead). */
void        hz_window_select_conversation (HzWindow *self, guint position);

/** Whether a reply is being generated. */
gboolean    hz_window_is_generating (HzWindow *self);

/** Whether a model is loaded and ready to answer. */
gboolean    hz_window_is_model_ready (HzWindow *self);

/** Show an error dialog with `heading` and `body` (transient for the window). */
void        hz_window_show_error (HzWindow *self, const char *heading, const char *body);

/** The results of the search across all chats (HzConversationItem with a snippet and a
 *  message id), best first; empty when not searching. */
GListModel *hz_window_get_search_results (HzWindow *self);

/** The chat view's list (for tests and accessibility tooling). */
GtkListView *hz_window_get_message_list (HzWindow *self);

/** The store id of the shown conversation (0 = a new chat not stored yet; < 0 = kept in
 *  memory only). */
gint64      hz_window_get_conversation_id (HzWindow *self);

/** The shown conversation's system prompt, or NULL. */
const char *hz_window_get_system_prompt (HzWindow *self);

/** The user message being edited (win.edit-message), 0 when none. */
gint64      hz_window_get_editing (HzWindow *self);

/** Whether the window is narrow enough to show one pane (sidebar or chat) at a time. */
gboolean    hz_window_is_folded (HzWindow *self);

/** Write the shown conversation to `file` as `format` (asynchronously; a toast says when
 *  it is done, a dialog if it failed). What conv.export does after its file dialog. */
void        hz_window_export_to_file (HzWindow *self, HzExportFormat format, GFile *file);

/** Delete from the store now the conversations whose "deleted" toast is still offering
 *  Undo (as when their toast times out; the toast's Undo does nothing afterwards). Called
 *  when the window closes. */
void        hz_window_commit_deletes (HzWindow *self);

/** The learner status row in the sidebar footer (HzLearnerBar). */
GtkWidget  *hz_window_get_learner_bar (HzWindow *self);

G_END_DECLS
