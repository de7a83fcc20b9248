/* hanzo/redact-gate.h — the redaction gate: the pipeline step between the chat store and
 * everything that learns from it (issue 6). Part of libhzredactgate (redactor/hz-gate.c),
 * which links libhzredact and libhzstore.
 *
 * For each new or changed complete message the gate runs the redactor, replaces every span
 * with a numbered placeholder that is consistent across the whole conversation
 * ("[PERSON_1]" every time the same name appears, in any message), stores the placeholder
 * text and the spans (message_redactions) and records placeholder -> original in the
 * conversation's vault (redaction_vault), all in one transaction per message. The learner
 * reads only hz_store_list_message_redactions(); the vault is read only to show the user
 * their own text again (hz_redact_gate_restore()).
 *
 * Threads: an HzStore is per thread, so run the gate on the thread that owns its store
 * (the app runs it on a background worker with its own connection; the learner daemon
 * before building a dataset). The HzRedactor may be shared.
 */
#pragma once

#include "hanzo/redact.h"
#include "hanzo-store-redactions.h"

G_BEGIN_DECLS

/** Version of the gate's output, stored with every redacted copy; raising it makes
 *  hz_redact_gate_run() redo older copies. */
#define HZ_REDACT_GATE_VERSION 1

/** Redact message `message_id` (any state; the copy records the message's updated_us) and
 *  store the copy, its spans and new vault entries. Placeholders already in the
 *  conversation's vault are reused. Errors: the store's (HZ_STORE_ERROR_*). */
gboolean hz_redact_gate_message (const HzRedactor *redactor, HzStore *store,
                                 gint64 message_id, GError **error);

/** Redact up to `max_messages` complete messages that have no current redacted copy
 *  (hz_store_list_messages_to_redact()), oldest first, stopping early when `cancellable`
 *  is cancelled. Returns the number redacted, or -1 with `error` set. */
gint hz_redact_gate_run (const HzRedactor *redactor, HzStore *store, guint max_messages,
                         GCancellable *cancellable, GError **error);

/** The user's own view: `redacted` (text of one conversation with its placeholders) with
 *  every placeholder of that conversation's vault replaced by the original. Text that is
 *  not a known placeholder is copied unchanged. NULL with `error` on a store error. */
char *hz_redact_gate_restore (HzStore *store, gint64 conversation_id, const char *redacted,
                              GError **error);

/** Spans of `redaction` as a JSON array (the format stored in message_redactions.spans):
 *  start/end (code points), start_byte/end_byte, label, score, recognizer. No original
 *  text is included. */
char *hz_redaction_spans_to_json (const HzRedaction *redaction);

G_END_DECLS
