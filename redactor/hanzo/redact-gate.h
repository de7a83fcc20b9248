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

/** Version of the gate's output. A copy records hz_redact_gate_copy_version(): raising
 *  this makes hz_redact_gate_run() redo older copies. */
#define HZ_REDACT_GATE_VERSION 1

/** The redactor_version a copy made now is stored with: 2 * HZ_REDACT_GATE_VERSION - 1 for
 *  the rule-based redactor alone, one more when the model-based pass ran too
 *  (HZ_REDACT_MODEL). So a gate that runs the model pass redoes rule-only copies of the
 *  same gate version, a rule-only gate leaves copies with the model pass alone, and any
 *  copy of an older gate version is redone by both. */
static inline gint64
hz_redact_gate_copy_version (gboolean model_pass)
{
  return 2 * HZ_REDACT_GATE_VERSION - 1 + (model_pass ? 1 : 0);
}

/** Redact message `message_id` (any state; the copy records the message's updated_us) and
 *  store the copy, its spans and new vault entries with the rule-based redactor alone
 *  (hz_redact_gate_message_full() with flags 0). Placeholders already in the
 *  conversation's vault are reused. Errors: the store's (HZ_STORE_ERROR_*). */
gboolean hz_redact_gate_message (const HzRedactor *redactor, HzStore *store,
                                 gint64 message_id, GError **error);

/** As hz_redact_gate_message(), analysing with `flags` (HZ_REDACT_MODEL: also the
 *  model-based pass of `redactor`, whose spans hz_redactor_set_model() verifies against
 *  the text; the caller must have installed a model, e.g. hz_redactor_set_engine_model()).
 *  The copy is stored with hz_redact_gate_copy_version (flags & HZ_REDACT_MODEL).
 *  Another connection (the app's worker and the learner daemon) may redact messages of the
 *  same conversation at the same time: the vault is re-read inside the write transaction
 *  and the message is redone when it changed meanwhile (so two new names never get one
 *  placeholder). Errors: HZ_STORE_ERROR_* (NOT_FOUND: no such message; BUSY: another
 *  connection kept the write lock past the busy timeout). */
gboolean hz_redact_gate_message_full (const HzRedactor *redactor, HzStore *store,
                                      gint64 message_id, HzRedactFlags flags, GError **error);

/** Redact up to `max_messages` complete messages that have no current redacted copy
 *  (hz_store_list_messages_to_redact()), oldest first, with the rule-based redactor,
 *  stopping early when `cancellable` is cancelled (then -1 with G_IO_ERROR_CANCELLED).
 *  Returns the number redacted, or -1 with `error` set. */
gint hz_redact_gate_run (const HzRedactor *redactor, HzStore *store, guint max_messages,
                         GCancellable *cancellable, GError **error);

/** Progress of hz_redact_gate_run_full(): `done` of `total` messages redacted so far
 *  (called once with done = 0 before the first message, then after each). Return FALSE to
 *  stop after the current message (the run then returns what it did, without an error). */
typedef gboolean (*HzRedactGateProgress) (guint done, guint total, gpointer user_data);

/** Options of hz_redact_gate_run_full(); zero-initialised = rule-based, everything pending. */
typedef struct {
  HzRedactFlags        flags;         /* HZ_REDACT_MODEL: the model pass too (see _message_full) */
  guint                max_messages;  /* at most this many this run; 0 = all pending */
  GCancellable        *cancellable;   /* checked between messages */
  HzRedactGateProgress progress;      /* may be NULL */
  gpointer             user_data;
} HzRedactGateOptions;

/** Redact every complete message whose copy is missing, stale (edited or streamed on after
 *  it was made) or older than hz_redact_gate_copy_version (flags & HZ_REDACT_MODEL), oldest
 *  first, one write transaction per message (the write lock is never held during analysis,
 *  so other connections keep writing). Resumable: what was stored stays, and the next run
 *  continues with what is left. `options` NULL = defaults. Returns the number redacted, or
 *  -1 with `error` set (HZ_STORE_ERROR_*, or G_IO_ERROR_CANCELLED). Thread safety: `store`
 *  is used on the calling thread only; `redactor` may be shared (see hanzo/redact.h). */
gint hz_redact_gate_run_full (const HzRedactor *redactor, HzStore *store,
                              const HzRedactGateOptions *options, GError **error);

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
