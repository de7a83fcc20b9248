/* egress/egress-private.h — helpers shared by egress/'s two HTTP clients, the federation
 * client (egress.c) and the Hugging Face Hub download channel (hub.c). Not installed, not
 * for code outside egress/.
 *
 * Thread safety: every function is reentrant (no shared state); g_random_* is thread-safe.
 */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include <libsoup/soup.h>
#include "egress-retry.h"

G_BEGIN_DECLS

/* Largest JSON reply read for small API answers (round info, upload confirmation). */
#define HZ_EGRESS_MAX_JSON_REPLY (64 * 1024)

/** Whether `host` (a GUri host: a name or an address, IPv6 without brackets or with) is
 *  "localhost" or a loopback address (127.0.0.0/8, ::1). */
gboolean hz_egress_loopback_host (const char *host);

/** Whether `uri` may be contacted: https://, or plain http:// to a loopback host, with a
 *  host and no user info. */
gboolean hz_egress_uri_allowed (GUri *uri);

/** Checks a base URL given by the user or the environment: allowed as above and without
 *  query or fragment. Returns it without trailing '/' (g_free), or NULL with
 *  HZ_EGRESS_ERROR_INVALID in `domain`/`code` naming `what` ("federation endpoint", ...). */
char *hz_egress_check_endpoint (const char *endpoint, const char *what, GQuark domain,
                                int code, GError **error);

/** Whether two URIs have the same origin (scheme, host and port, RFC 6454; a missing port
 *  is the scheme's default). Credentials are only ever sent to the endpoint's origin. */
gboolean hz_egress_same_origin (GUri *a, GUri *b);

/** A short printable excerpt of a server's reply (first 200 bytes, made valid UTF-8,
 *  control characters as spaces) for messages; "(empty reply)" for none. g_free. */
char *hz_egress_excerpt (GBytes *reply);

/** The whole of `in`, at most `limit` bytes (G_IO_ERROR_MESSAGE_TOO_LARGE beyond). */
GBytes *hz_egress_read_limited (GInputStream *in, gsize limit, GCancellable *cancellable,
                                GError **error);

/** Sleeps `ms`, waking within 20 ms of a cancellation (then returns FALSE). */
gboolean hz_egress_backoff_sleep (guint ms, GCancellable *cancellable);

/** The wait before attempt `attempt` + 1: initial_backoff_ms * 2^(attempt-1), capped at
 *  max_backoff_ms, times a uniform jitter in [0.75, 1.25). */
guint hz_egress_backoff_ms (const HzEgressRetry *retry, int attempt);

/** Whether `token` can be sent as a bearer token: non-empty valid UTF-8 without spaces or
 *  control characters (so it cannot split or extend an HTTP header). NULL: FALSE. */
gboolean hz_egress_token_ok (const char *token);

/** Whether an HTTP status is worth retrying: no status (< 100), 408, 429, 5xx. */
gboolean hz_egress_status_retryable (guint status);

/** A session with `timeout_s` per I/O operation (connect, each read or write) and the same
 *  idle timeout, the user agent "hanzo-desktop/VERSION". `decode`: keep libsoup's content
 *  decoder (gzip); FALSE for byte-range downloads, whose ranges count the raw bytes. */
SoupSession *hz_egress_session_new (guint timeout_s, gboolean decode);

/** The JSON object of `len` bytes (any bytes), or NULL; `parser` owns the result. */
JsonObject *hz_egress_parse_json_object (const char *data, gsize len, JsonParser *parser);

/** Member `name` of `o` when it is a string, else NULL (never a GLib critical for members
 *  of another kind, which json-glib's _with_default getters would emit). */
const char *hz_egress_member_string (JsonObject *o, const char *name);

/** Member `name` of `o` when it is an integer: TRUE with *out set. */
gboolean hz_egress_member_int (JsonObject *o, const char *name, gint64 *out);

G_END_DECLS
