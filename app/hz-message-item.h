/* hz-message-item.h — HzMessageItem: one chat message as a list-model item (main thread).
 *
 * The chat view's GListStore holds these; rows bind to the "text" property (and a thinking
 * model's "reasoning"), so a streamed reply shows up as it grows. The store row it mirrors is `id` (0 = not stored).
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
/** The translated name shown for `role`: "You", "Assistant" or "System" (also for any
 *  other value). The chat rows label messages with it and Markdown exports head them with
 *  it. Returns a static string; any thread (after the text domain is bound). */
const char *hz_role_get_display_name (HzRole role);
/** The text (never NULL). */
const char *hz_message_item_get_text (HzMessageItem *self);
/** Replace the text; notifies "text". */
void        hz_message_item_set_text (HzMessageItem *self, const char *text);
/** Append to the text; notifies "text". */
void        hz_message_item_append_text (HzMessageItem *self, const char *text);
/** A thinking model's reasoning before the answer ("reasoning" property; never NULL, ""
 *  when none): shown folded above the text, which is the answer. */
const char *hz_message_item_get_reasoning (HzMessageItem *self);
/** Replace the reasoning; notifies "reasoning". */
void        hz_message_item_set_reasoning (HzMessageItem *self, const char *reasoning);
/** Append to the reasoning; notifies "reasoning". */
void        hz_message_item_append_reasoning (HzMessageItem *self, const char *reasoning);
/** Whether the reply is still streaming in ("streaming" property). */
gboolean    hz_message_item_get_streaming (HzMessageItem *self);
/** Set "streaming"; notifies it. */
void        hz_message_item_set_streaming (HzMessageItem *self, gboolean streaming);
/** A short line under the message ("details" property), e.g. "42 tokens · 310 tokens/s";
 *  may be NULL. */
const char *hz_message_item_get_details (HzMessageItem *self);
/** Set "details" (NULL = none); notifies it. */
void        hz_message_item_set_details (HzMessageItem *self, const char *details);

/** The message this one follows (0 = the first of its conversation). */
gint64      hz_message_item_get_parent_id (HzMessageItem *self);
/** Set the parent id (not a property: fixed once the item is in the conversation tree). */
void        hz_message_item_set_parent_id (HzMessageItem *self, gint64 parent_id);
/** Which of its alternatives (siblings with the same parent) this is, 0-based, and how
 *  many there are ("alternatives" property, notified by the setter). */
guint       hz_message_item_get_alternative (HzMessageItem *self, guint *n_alternatives);
/** Set the index among the alternatives and their number; notifies "alternatives". */
void        hz_message_item_set_alternative (HzMessageItem *self, guint index, guint n);
/** The user's rating: +1, -1 or 0 (none) ("rating" property). */
int         hz_message_item_get_rating (HzMessageItem *self);
/** Set "rating"; notifies it. */
void        hz_message_item_set_rating (HzMessageItem *self, int rating);
/** Generation stats: tokens and decode speed (< 0: unknown). */
gint64      hz_message_item_get_n_tokens (HzMessageItem *self, double *tokens_per_s);
/** Set the generation stats (not notified; the details line shows them). */
void        hz_message_item_set_stats (HzMessageItem *self, gint64 n_tokens, double tokens_per_s);
/** Context use when the reply ended: tokens in the context and its size (0 = unknown)
 *  ("context" property). */
guint       hz_message_item_get_context (HzMessageItem *self, guint *n_ctx);
/** Set the context use; notifies "context". */
void        hz_message_item_set_context (HzMessageItem *self, guint used, guint n_ctx);

/** Earlier messages of the branch the model did not see when it wrote this reply (left
 *  out to fit its context; 0: it saw them all). Plain data, not notified. */
gint64      hz_message_item_get_n_unseen (HzMessageItem *self);
void        hz_message_item_set_n_unseen (HzMessageItem *self, gint64 n_unseen);
/** Whether the reply stopped at its token limit (shown as cut in "details"). Plain data. */
gboolean    hz_message_item_get_cut (HzMessageItem *self);
void        hz_message_item_set_cut (HzMessageItem *self, gboolean cut);
/** Whether the row says, above this message, that earlier messages are beyond what the
 *  model can see ("context-notice" property): set on the first reply of the shown branch
 *  written without them, so the conversation says it once. */
gboolean    hz_message_item_get_context_notice (HzMessageItem *self);
/** Set "context-notice"; notifies it. */
void        hz_message_item_set_context_notice (HzMessageItem *self, gboolean notice);

G_END_DECLS
