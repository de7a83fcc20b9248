/* hanzo-store-limits.h — how a reply was limited (issue 20), part of libhzstore
 * (store/reply-limits.c, schema migration 7).
 *
 * message_limits: at most one row per message, kept with it (ON DELETE CASCADE):
 *   cut       1 when the reply stopped at its token limit (the reply length setting), so
 *             the app marks it as cut, as it marks an interrupted one;
 *   n_unseen  how many earlier messages of its branch the model did not see when it wrote
 *             the reply: the conversation was longer than the context and the oldest turns
 *             were left out (0: it saw them all).
 * A message without a row has cut 0 and n_unseen 0.
 *
 * Same conventions as hanzo-store.h: ids > 0, errors in HZ_STORE_ERROR, one HzStore per
 * thread.
 */
#pragma once

#include "hanzo-store.h"

G_BEGIN_DECLS

/** The schema version (PRAGMA user_version) that added message_limits (store/schema.c). */
#define HZ_STORE_SCHEMA_VERSION_LIMITS 7

/** A reply's limits. Plain struct; free with g_free(). */
typedef struct {
  gint64   message_id;
  gint64   conversation_id;  /* filled in by the store from the message */
  gboolean cut;
  gint64   n_unseen;
} HzMessageLimits;

/**
 * hz_store_set_message_limits:
 * @store: the store
 * @message_id: a reply
 * @cut: it stopped at its token limit
 * @n_unseen: earlier messages of its branch left out of the model's context, >= 0
 * @error: return location for an error
 *
 * Record how a reply was limited, replacing what was recorded (cut FALSE and n_unseen 0
 * remove the row). Errors: HZ_STORE_ERROR_NOT_FOUND (no such message), _INVALID
 * (n_unseen < 0), _FULL, _BUSY, _FAILED.
 *
 * Returns: whether it was stored
 */
gboolean hz_store_set_message_limits (HzStore *store, gint64 message_id, gboolean cut,
                                      gint64 n_unseen, GError **error);

/**
 * hz_store_list_message_limits:
 * @store: the store
 * @conversation_id: a conversation, or 0 for all
 * @error: return location for an error
 *
 * Returns: (transfer full) (element-type HzMessageLimits): the recorded limits by message
 *   id (the array frees its elements), or NULL on error
 */
GPtrArray *hz_store_list_message_limits (HzStore *store, gint64 conversation_id,
                                         GError **error);

G_END_DECLS
