/* hanzo-store-feedback.h — the user's thumbs up/down on replies (issue 9), part of
 * libhzstore (store/feedback.c, schema migration "feedback").
 *
 * message_feedback: at most one rating per message, +1 (good) or -1 (bad), kept with the
 *   message (ON DELETE CASCADE). The learner reads it to weight or pick training samples
 *   (with the message's redacted copy, never the raw text).
 *
 * Alternatives. A conversation is a tree through messages.parent_id: a user message's
 * parent is the message it follows (0 for the first), an assistant message's parent is
 * the user message it answers. Regenerating a reply adds an assistant message with the
 * same parent as the old one; editing a user message adds a user message with the same
 * parent as the original. Siblings (same parent) are alternatives; the app shows one of
 * them (the newest unless the user pages to another). The same migration gives messages
 * written before this rule (user messages with no parent after the first) the previous
 * message of their conversation as parent, so old conversations read as one chain.
 *
 * Same conventions as hanzo-store.h: times in Unix microseconds, ids > 0, errors in
 * HZ_STORE_ERROR, one HzStore per thread.
 */
#pragma once

#include "hanzo-store.h"

G_BEGIN_DECLS

/** The schema version (PRAGMA user_version) that added message_feedback and chained old
 *  messages (store/schema.c, migration 5). */
#define HZ_STORE_SCHEMA_VERSION_FEEDBACK 5

/** One rating. Plain struct; free with g_free(). */
typedef struct {
  gint64 message_id;
  gint64 conversation_id;  /* filled in by the store from the message */
  int    rating;           /* +1 or -1 */
  gint64 created_us;       /* first rated */
  gint64 updated_us;       /* last changed */
} HzMessageFeedback;

/**
 * hz_store_set_feedback:
 * @store: the store
 * @message_id: the rated message
 * @rating: +1 (good), -1 (bad) or 0 (remove the rating)
 * @error: return location for an error
 *
 * Rate a message, replacing its previous rating. Errors: HZ_STORE_ERROR_NOT_FOUND (no
 * such message; also for rating 0 when none was stored is fine and returns TRUE),
 * _INVALID (rating not -1, 0 or 1), _FULL, _BUSY, _FAILED.
 *
 * Returns: whether it was stored
 */
gboolean hz_store_set_feedback (HzStore *store,
                                gint64   message_id,
                                int      rating,
                                GError **error);

/**
 * hz_store_get_feedback:
 * @store: the store
 * @message_id: a message
 * @out_rating: (out): +1, -1, or 0 when the message is not rated (or does not exist)
 * @error: return location for an error
 *
 * Returns: FALSE on an SQLite error (HZ_STORE_ERROR_FAILED, _BUSY)
 */
gboolean hz_store_get_feedback (HzStore *store,
                                gint64   message_id,
                                int     *out_rating,
                                GError **error);

/**
 * hz_store_list_feedback:
 * @store: the store
 * @conversation_id: a conversation, or 0 for all
 * @since_us: only ratings changed at or after this time (0: all)
 * @error: return location for an error
 *
 * Returns: (transfer full) (element-type HzMessageFeedback): ratings, oldest change
 *   first (the array frees its elements), or NULL on error
 */
GPtrArray *hz_store_list_feedback (HzStore *store,
                                   gint64   conversation_id,
                                   gint64   since_us,
                                   GError **error);

G_END_DECLS
