/* hz-chat-list.h — HzChatList: the conversations of the store as a list model
 * (HzConversationItem: pinned ones first, then the most recently used), and the store
 * writes that change the list: rename, pin, and delete with undo (a deletion is pending,
 * the conversation off the list, until it is committed or undone; pending ones stay off the
 * list when it is read again). HzChatSession (hz-chat-session.h) keeps one. Conversations
 * with ids <= 0 (not stored) change in the list only. No GTK; main thread only.
 */
#pragma once

#include <gio/gio.h>
#include "hz-app-context.h"
#include "hz-conversation-item.h"

G_BEGIN_DECLS

#define HZ_TYPE_CHAT_LIST (hz_chat_list_get_type ())
G_DECLARE_FINAL_TYPE (HzChatList, hz_chat_list, HZ, CHAT_LIST, GObject)

/** An empty list over `ctx`'s store (read at hz_chat_list_load()). */
HzChatList         *hz_chat_list_new (HzAppContext *ctx);

/** The conversations (HzConversationItem). */
GListModel         *hz_chat_list_get_model (HzChatList *self);

/** The conversation `id` (borrowed) and its `position` (nullable), or NULL. */
HzConversationItem *hz_chat_list_find (HzChatList *self, gint64 id, guint *position);

/** Read the list from the store again (nothing without a store). FALSE with `error` (the
 *  list unchanged) when it cannot be read. */
gboolean            hz_chat_list_load (HzChatList *self, GError **error);

/** Put `item` (not listed) at the top of the unpinned (or pinned) ones. */
void                hz_chat_list_add (HzChatList *self, HzConversationItem *item);

/** Move conversation `id` to the top of its group (it was just used). */
void                hz_chat_list_bump (HzChatList *self, gint64 id);

/** Rename conversation `id` in the store and the list. FALSE with `error` (nothing
 *  changed) on a store error or when it is not listed. */
gboolean            hz_chat_list_rename (HzChatList *self, gint64 id, const char *title,
                                         GError **error);

/** Pin or unpin conversation `id` (store and list); it moves to the top of its group.
 *  FALSE with `error` as hz_chat_list_rename(). */
gboolean            hz_chat_list_set_pinned (HzChatList *self, gint64 id, gboolean pinned,
                                             GError **error);

/** Take conversation `id` off the list, pending; the deletion's handle (> 0), 0 when it is
 *  not listed. */
guint               hz_chat_list_delete (HzChatList *self, gint64 id);

/** Put conversation `id` (pending, neither undone nor committed) back where it was; its
 *  `position` (nullable). FALSE when there is nothing to undo. */
gboolean            hz_chat_list_undo_delete (HzChatList *self, gint64 id, guint *position);

/** End deletion `handle`: the conversation is deleted from the store unless it was undone
 *  or committed already. FALSE with `error` when the store failed. Unknown handles are
 *  ignored (TRUE). */
gboolean            hz_chat_list_commit_delete (HzChatList *self, guint handle, GError **error);

/** Delete every pending conversation from the store now (their handles end). FALSE with
 *  the first `error` when the store failed for any (the others are still deleted). */
gboolean            hz_chat_list_commit_deletes (HzChatList *self, GError **error);

G_END_DECLS
