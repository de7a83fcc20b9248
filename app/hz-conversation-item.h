/* hz-conversation-item.h — HzConversationItem: one conversation in the sidebar's list
 * model (main thread). Mirrors a row of the store's `conversations` table; a search result
 * is an item with a snippet and the id of the message that matched.
 */
#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

#define HZ_TYPE_CONVERSATION_ITEM (hz_conversation_item_get_type ())
G_DECLARE_FINAL_TYPE (HzConversationItem, hz_conversation_item, HZ, CONVERSATION_ITEM, GObject)

/** New item for conversation `id` with `title` (copied; NULL or "" shows "New Chat").
 *  Main thread (like every function here). */
HzConversationItem *hz_conversation_item_new (gint64 id, const char *title);

/** The store id. */
gint64      hz_conversation_item_get_id (HzConversationItem *self);
/** The title as shown (never NULL or empty: untitled conversations read "New Chat"). */
const char *hz_conversation_item_get_title (HzConversationItem *self);
/** Set the title ("title" property; NULL or "" shows "New Chat"); notifies it. */
void        hz_conversation_item_set_title (HzConversationItem *self, const char *title);
/** Whether the conversation is pinned ("pinned" property). */
gboolean    hz_conversation_item_get_pinned (HzConversationItem *self);
/** Set "pinned"; notifies it. */
void        hz_conversation_item_set_pinned (HzConversationItem *self, gboolean pinned);
/** Search results: Pango markup of the matching excerpt ("snippet"), or NULL. */
const char *hz_conversation_item_get_snippet (HzConversationItem *self);
/** Search results: the message that matched (0 = none). */
gint64      hz_conversation_item_get_message_id (HzConversationItem *self);
/** Make the item a search result: `snippet_markup` (copied) and the matching message. */
void        hz_conversation_item_set_match (HzConversationItem *self,
                                            const char         *snippet_markup,
                                            gint64              message_id);

G_END_DECLS
