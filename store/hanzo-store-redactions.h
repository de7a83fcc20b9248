/* hanzo-store-redactions.h — redacted copies of messages and the redaction vault (issue 6),
 * part of libhzstore (store/redactions.c, schema migration 4).
 *
 * message_redactions: one row per message that the redaction gate (redactor/hz-gate.c) has
 *   processed: the message text with every personal-data span replaced by a placeholder
 *   ("[PERSON_1]"), the spans found in the original (JSON), the version of the redactor
 *   and the message's updated_us at the time (a message edited or streamed on afterwards
 *   is redacted again). This is the only form of a message the learner may read.
 * redaction_vault: per conversation, placeholder -> original text, so that the user's own
 *   window can show the original again. Never read by the learner; deleted with its
 *   conversation (ON DELETE CASCADE), as are the redacted copies.
 *
 * Same conventions as hanzo-store.h: times in Unix microseconds, ids > 0, errors in
 * HZ_STORE_ERROR, one HzStore per thread; every writer runs in its own write transaction
 * or inside hz_store_begin()/hz_store_commit().
 */
#pragma once

#include "hanzo-store.h"

G_BEGIN_DECLS

/** A redacted copy of one message. Free with hz_message_redaction_free(). */
typedef struct {
  gint64  message_id;
  gint64  conversation_id;    /* filled in by the store from the message */
  HzRole  role;               /* of the message (read-only; filled in by the store) */
  char   *redacted;           /* UTF-8 text with placeholders instead of personal data */
  char   *spans_json;         /* JSON array of the spans found in the original text */
  gint64  n_spans;
  gint64  redactor_version;   /* >= 1 */
  gint64  source_updated_us;  /* the message's updated_us that was redacted */
  gint64  created_us;
} HzMessageRedaction;

void hz_message_redaction_free (HzMessageRedaction *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzMessageRedaction, hz_message_redaction_free)

/** One vault entry: inside conversation `conversation_id`, `placeholder` stands for
 *  `original` (of type `entity_type`, a redactor label such as "PERSON"). */
typedef struct {
  gint64  conversation_id;
  char   *placeholder;
  char   *entity_type;
  char   *original;
  gint64  created_us;
} HzVaultEntry;

void hz_vault_entry_free (HzVaultEntry *e);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzVaultEntry, hz_vault_entry_free)

/** Insert or replace the redacted copy of message r->message_id (r->conversation_id and
 *  r->role are ignored: they come from the message). created_us <= 0 means now.
 *  Errors: HZ_STORE_ERROR_NOT_FOUND (no such message), _INVALID (bad UTF-8, version < 1,
 *  n_spans < 0), _FULL, _BUSY, _FAILED. */
gboolean hz_store_put_message_redaction (HzStore                  *store,
                                         const HzMessageRedaction *r,
                                         GError                  **error);

/** The redacted copy of a message, or NULL: with HZ_STORE_ERROR_NOT_FOUND when the message
 *  has none (yet). */
HzMessageRedaction *hz_store_get_message_redaction (HzStore *store, gint64 message_id,
                                                    GError **error);

/** Ids (GArray of gint64, ascending) of up to `limit` complete messages that need the gate:
 *  no redacted copy, a copy made by a redactor_version older than `redactor_version`, or a
 *  copy older than the message's last update. NULL on error. */
GArray *hz_store_list_messages_to_redact (HzStore *store, gint64 redactor_version, guint limit,
                                          GError **error);

/** The redacted copies (HzMessageRedaction*, by message id) of one conversation, or of all
 *  conversations when `conversation_id` is 0 — what the learner reads. Copies that are stale
 *  (the message changed after redaction) are left out. NULL on error. */
GPtrArray *hz_store_list_message_redactions (HzStore *store, gint64 conversation_id,
                                             GError **error);

/** Add a vault entry (no-op when this placeholder already exists in the conversation with
 *  the same original; HZ_STORE_ERROR_INVALID when it exists with another one, or for bad
 *  UTF-8/empty strings; HZ_STORE_ERROR_NOT_FOUND when the conversation does not exist). */
gboolean hz_store_vault_add (HzStore    *store,
                             gint64      conversation_id,
                             const char *placeholder,
                             const char *entity_type,
                             const char *original,
                             GError    **error);

/** All vault entries (HzVaultEntry*) of a conversation, oldest first. NULL on error. */
GPtrArray *hz_store_vault_list (HzStore *store, gint64 conversation_id, GError **error);

G_END_DECLS
