/* hz-message-item.h — HzMessageItem: one chat message as a list-model item (main thread).
 *
 * The chat view's GListStore holds these; rows bind to the "text" property, so a streamed
 * reply shows up as it grows. The store row it mirrors is `id` (0 = not stored).
 */
#pragma once

#include <glib-object.h>
#include <hanzo-store.h>

G_BEGIN_DECLS

#define HZ_TYPE_MESSAGE_ITEM (hz_message_item_get_type ())
G_DECLARE_FINAL_TYPE (HzMessageItem, hz_message_item, HZ, MESSAGE_ITEM, GObject)

/** New item for a message with store id `id` (0 = none), `role` and `text` (copied).
 *  Main thread (like every function here). */
HzMessageItem *hz_message_item_new (gint64 id, HzRole role, const char *text);

/** The store id (0 = none). */
gint64      hz_message_item_get_id (HzMessageItem *self);
/** The role. */
HzRole      hz_message_item_get_role (HzMessageItem *self);
/** The text (never NULL). */
const char *hz_message_item_get_text (HzMessageItem *self);
/** Replace the text; notifies "text". */
void        hz_message_item_set_text (HzMessageItem *self, const char *text);
/** Append to the text; notifies "text". */
void        hz_message_item_append_text (HzMessageItem *self, const char *text);
/** Whether the reply is still streaming in ("streaming" property). */
gboolean    hz_message_item_get_streaming (HzMessageItem *self);
/** Set "streaming"; notifies it. */
void        hz_message_item_set_streaming (HzMessageItem *self, gboolean streaming);
/** A short line under the message ("details" property), e.g. "42 tokens · 310 tokens/s";
 *  may be NULL. */
const char *hz_message_item_get_details (HzMessageItem *self);
/** Set "details" (NULL = none); notifies it. */
void        hz_message_item_set_details (HzMessageItem *self, const char *details);

G_END_DECLS
