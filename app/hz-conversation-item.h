/* hz-conversation-item.h — HzConversationItem: one conversation in the sidebar's list
 * model (main thread). Mirrors a row of the store's `conversations` table.
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

G_END_DECLS
