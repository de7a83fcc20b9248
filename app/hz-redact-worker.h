/* hz-redact-worker.h — HzRedactWorker: the app's redaction gate, in the background.
 *
 * After a message is complete (the user's as it is sent, a reply when it ends) the app
 * calls hz_redact_worker_queue(); the worker then runs the redaction gate
 * (redactor/hanzo/redact-gate.h, hz_redact_gate_run_full(), rule-based redactor) over every
 * complete message without a current redacted copy, so the copies (message_redactions,
 * what the learner reads and the privacy page shows) and the vault entries exist seconds
 * after a message is written rather than only at the learner's next night. The guard
 * model's pass is left to the learner daemon (learner/daemon-job.h), which redoes these
 * rule-based copies with it at night; the app's CPU belongs to the chat.
 *
 * Threads: the gate runs on a GThreadPool of one thread with the worker's own HzStore
 * connection (opened on that thread from the store's path; never the main thread's
 * connection) and its own HzRedactor (loaded there too). The main thread only flips an
 * atomic flag and pushes a job: it never waits on the disk or the redactor. Bursts
 * coalesce: while a pass runs, any number of hz_redact_worker_queue() calls cause exactly
 * one more pass (each pass takes everything pending, so nothing is missed), and calls
 * while a pass is only queued cost nothing. Writes commit one message at a time, so the
 * main thread's own writes wait at most for one message's transaction (WAL: its reads
 * never wait). A pass that fails because another connection held the write lock past the
 * busy timeout is retried a second later; other errors are logged (g_message) and the
 * messages stay pending for the next pass. Signals are emitted on the thread-default main
 * context of the thread that created the worker. All functions are for that thread.
 */
#pragma once

#include <gio/gio.h>
#include <hanzo-store.h>

G_BEGIN_DECLS

#define HZ_TYPE_REDACT_WORKER (hz_redact_worker_get_type ())
G_DECLARE_FINAL_TYPE (HzRedactWorker, hz_redact_worker, HZ, REDACT_WORKER, GObject)

/** A worker for the store file at `store_path` (opened lazily by the worker thread; the
 *  file need not exist yet). Nothing runs until hz_redact_worker_queue().
 *
 *  Signal "finished" (guint n_redacted, const char *error_message): a pass ended, having
 *  stored `n_redacted` copies; `error_message` is NULL unless it failed (the messages it
 *  did not reach stay pending). Not emitted after hz_redact_worker_stop(). */
HzRedactWorker *hz_redact_worker_new (const char *store_path);

/** Ask for a pass over every complete message without a current redacted copy. Returns at
 *  once; coalesced as described above. A no-op after hz_redact_worker_stop(). */
void            hz_redact_worker_queue (HzRedactWorker *self);

/** TRUE while a pass runs or is queued (for tests and for a "redacting" indicator). */
gboolean        hz_redact_worker_is_busy (HzRedactWorker *self);

/** Stop: cancel the running pass between two messages (what was stored stays; the next
 *  worker or the learner continues), drop a queued one, wait for the thread and close the
 *  worker's connection. Blocks for at most one message's analysis and commit (a commit
 *  waits at most HZ_STORE_BUSY_TIMEOUT_MS for another connection's write lock), or, when
 *  the first pass has just started, for the redactor's word lists to load (once).
 *  Idempotent; also done when the worker is disposed. */
void            hz_redact_worker_stop (HzRedactWorker *self);

/** The app's hook: the worker of `app` (created on the first call, on the path of `store`,
 *  and stopped at the application's "shutdown") queues a pass. Call it when a message has
 *  been completed in `store`, and once at start-up to catch up with what an earlier run
 *  left. A no-op when `store` is NULL (no database: nothing to redact). */
void            hz_redact_worker_notify (GApplication *app, HzStore *store);

/** The worker hz_redact_worker_notify() created for `app`, or NULL. (transfer none) */
HzRedactWorker *hz_redact_worker_get_for_application (GApplication *app);

G_END_DECLS
