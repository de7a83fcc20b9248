/* egress/egress.h — the federation client: the only code in Hanzo that sends bytes off the
 * machine (libsoup-3.0). Typed channels only:
 *   - hz_egress_upload_release(): uploads an HzDpRelease (which only hz_dp_release() can
 *     build: clip + noise + ledger). There is no function that uploads anything else.
 *   - hz_egress_fetch_aggregate(): downloads a round's aggregate and returns it only if it
 *     is a valid bf16 delta of the expected adapter config (lora-delta.h's reader).
 *   - hz_egress_get_round(): the server's current round id (no user data is sent).
 *
 * Protocol (served by hanzo-aggregator, egress/aggregator.h), all with
 * "Authorization: Bearer <token>":
 *   GET  <endpoint>/v1/rounds/current          -> 200 JSON {"round": N, "state": ...}
 *   PUT  <endpoint>/v1/rounds/N/update         body = the release's wire bytes
 *        -> 200 JSON {"status": "accepted"|"duplicate", "round": N, "sha256": <payload sha>}
 *   GET  <endpoint>/v1/rounds/N/aggregate      -> 200 bf16 safetensors | 425 not yet | 404
 *
 * Reliability: each call makes at most retry.max_attempts attempts. Network errors,
 * timeouts (retry.timeout_s per I/O operation, so a hanging server cannot block), HTTP
 * 408/425/429/5xx and replies that do not confirm the payload's sha256 ("garbage") are
 * retried after exponential backoff (initial_backoff_ms * 2^k, capped at max_backoff_ms,
 * with ±25 % jitter); other 4xx are final (REJECTED). Uploads are idempotent: every
 * attempt sends the same bytes for the same round id, and the server answers a repeat
 * with "duplicate", so nothing is lost or counted twice. Worst-case duration of a call:
 * max_attempts * (timeout_s + per-request connect time) + sum of the backoffs.
 *
 * Every attempt is recorded in the store's egress log (hanzo-store-privacy.h): time, URL,
 * bytes, sha256 of the payload, the release's epsilon, status, HTTP status. The log row is
 * written after the attempt; if it cannot be written the call stops with
 * HZ_EGRESS_ERROR_STORE and makes no further attempt.
 *
 * Endpoints: https:// always; plain http:// only to a loopback host (127.0.0.0/8, ::1,
 * localhost) for tests and local aggregators.
 *
 * Thread safety: an HzEgress (and its HzStore) is used from one thread at a time; calls
 * block, so run them on a worker thread (or use the _async variants, which run the call in
 * a GTask thread and complete on the caller's thread-default main context).
 */
#pragma once

#include <gio/gio.h>
#include "dp.h"
#include "lora-delta.h"
#include "egress-retry.h"

G_BEGIN_DECLS

#define HZ_EGRESS_ERROR (hz_egress_error_quark ())
/** Error domain of this header. */
GQuark hz_egress_error_quark (void);
typedef enum {
  HZ_EGRESS_ERROR_INVALID,     /* bad endpoint (not https / non-loopback http), token, round */
  HZ_EGRESS_ERROR_NETWORK,     /* gave up after max_attempts (message has the last error) */
  HZ_EGRESS_ERROR_REJECTED,    /* the server refused the request (final 4xx; its message) */
  HZ_EGRESS_ERROR_NOT_READY,   /* the aggregate of that round does not exist yet */
  HZ_EGRESS_ERROR_BAD_PAYLOAD, /* the downloaded aggregate failed validation every time */
  HZ_EGRESS_ERROR_CANCELLED,   /* the GCancellable fired */
  HZ_EGRESS_ERROR_STORE,       /* the egress log could not be written */
} HzEgressError;

typedef struct _HzEgress HzEgress;

/** A client for `endpoint` (base URL, e.g. "https://fed.example.org") with bearer `token`,
 *  logging into `store` (borrowed; must outlive the client) and validating aggregates
 *  against `config` (referenced). Errors: HZ_EGRESS_ERROR_INVALID. */
HzEgress *hz_egress_new (const char *endpoint, const char *token, HzStore *store,
                         HzDeltaConfig *config, GError **error);

/** The same with endpoint and token from the keyring (credentials.h). Errors:
 *  HZ_CREDENTIALS_ERROR_* (NOT_FOUND when federation is off), HZ_EGRESS_ERROR_INVALID. */
HzEgress *hz_egress_new_from_keyring (HzStore *store, HzDeltaConfig *config,
                                      GCancellable *cancellable, GError **error);

void hz_egress_free (HzEgress *egress);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzEgress, hz_egress_free)

/** Replace the retry policy (values are clamped to max_attempts >= 1, timeout_s >= 1). */
void hz_egress_set_retry (HzEgress *egress, const HzEgressRetry *retry);

/** Upload a release for its round (hz_dp_release_get_round_id()). TRUE once the server
 *  confirmed the payload's sha256 (accepted now or earlier). Errors: HZ_EGRESS_ERROR_REJECTED
 *  (e.g. round closed, invalid update), _NETWORK, _CANCELLED, _STORE. */
gboolean hz_egress_upload_release (HzEgress *egress, const HzDpRelease *release,
                                   GCancellable *cancellable, GError **error);

/** Download and validate the aggregate of `round_id` (shapes, dtype BF16, finite values,
 *  adapter config hash, metadata round id). Errors: HZ_EGRESS_ERROR_NOT_READY, _REJECTED,
 *  _BAD_PAYLOAD, _NETWORK, _CANCELLED, _STORE. */
HzLoraDelta *hz_egress_fetch_aggregate (HzEgress *egress, guint64 round_id,
                                        GCancellable *cancellable, GError **error);

/** The server's open round. Logged as a download of the JSON reply. Errors as above. */
gboolean hz_egress_get_round (HzEgress *egress, guint64 *round_id, GCancellable *cancellable,
                              GError **error);

/** The server's answer to GET /v1/rounds/current, `len` bytes of JSON {"round": N, ...}
 *  (not NUL-terminated; any bytes, e.g. a hostile or broken server's): TRUE with
 *  *round_id = N when "round" is an integer >= 1, FALSE for anything else (not JSON, not an
 *  object, no such member, another type, N < 1), never a GLib critical. Reentrant. Used by
 *  hz_egress_get_round(); public for tests/fuzz/fuzz-egress-round.c. */
gboolean hz_egress_parse_round_reply (const char *data, gsize len, guint64 *round_id);

/** Whether the server's answer to PUT /v1/rounds/N/update (`len` bytes of JSON, any bytes
 *  accepted as above) confirms the upload: {"status": "accepted" or "duplicate",
 *  "round": round_id, "sha256": payload_sha256} with those member types. Reentrant. Used by
 *  hz_egress_upload_release(); public for tests/fuzz/fuzz-egress-round.c. */
gboolean hz_egress_reply_confirms_upload (const char *data, gsize len, guint64 round_id,
                                          const char *payload_sha256);

/** hz_egress_upload_release() in a GTask thread. `release` is borrowed and must stay alive
 *  until the callback; the HzEgress must not be used concurrently. */
void     hz_egress_upload_release_async (HzEgress *egress, const HzDpRelease *release,
                                         GCancellable *cancellable, GAsyncReadyCallback callback,
                                         gpointer user_data);
gboolean hz_egress_upload_release_finish (HzEgress *egress, GAsyncResult *result,
                                          GError **error);

G_END_DECLS
