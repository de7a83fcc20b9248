/* egress/aggregator.h — hanzo-aggregator, the self-hostable federation server (libsoup).
 *
 * Rounds: round N is open until its deadline (round_duration_us after it opened) if at
 * least min_clients valid updates arrived — else the deadline is extended by another
 * round_duration_us — or until every registered client has uploaded. Then it is
 * aggregated (in a worker thread; uploads for N are refused meanwhile), the aggregate is
 * kept as bf16 safetensors (lora-delta.h wire format, round N, epsilon 0) and round N+1
 * opens. The last 16 aggregates are served.
 *
 * Clients: each has an id and a bearer token, of which only the sha256 is kept (in memory
 * and in the clients file, one "id sha256hex" per line).
 *
 * HTTP API (egress.h has the client side); every request needs "Authorization: Bearer":
 *   GET /v1/rounds/current     200 {"round","state","min_clients","accepted","deadline_us",
 *                                   "config_sha256"}
 *   PUT /v1/rounds/N/update    200 {"status":"accepted"|"duplicate","round":N,"sha256":..}
 *       400 malformed safetensors / metadata round id differs from N
 *       401 no or unknown token          409 N is not the open round (old round: replay),
 *       409 a different update from this client in N, or another client's payload replayed
 *       413 larger than this config's wire size            422 wrong adapter config,
 *       shapes, dtype, non-finite value, L2 norm above max_norm, other base model
 *   GET /v1/rounds/N/aggregate 200 bf16 safetensors | 425 round still open | 404 unknown
 * Error replies are text/plain with a one-line reason.
 *
 * One request per connection (every reply says "Connection: close": libsoup before 3.3 leaks
 * kept-alive connections that clients close while idle). Slow or stuck clients (slowloris):
 * every connection must send a request's headers within io_timeout_us of connecting, must
 * not pause a body for longer
 * than io_timeout_us, must deliver it within io_timeout_us + length / 16 KiB/s, and must take
 * a reply within io_timeout_us + reply length / 16 KiB/s; otherwise the connection is shut
 * down and freed (HzAggregatorStats.timed_out). A request refused on its headers (401, 413
 * by Content-Length) or a chunked body that grows past the size limit (413) is not kept:
 * its body is read and discarded for at most io_timeout_us before the reply is sent (the
 * connection is cut when it takes longer; "Expect: 100-continue" gets the refusal at once).
 * libsoup caps request headers at 64 KiB.
 *
 * Aggregation: coordinate-wise trimmed mean with beta (aggregate.h, streamed over blocks of
 * coordinates: memory O(clients * block)), or Multi-Krum(f, m) (needs every update as f32
 * at once: memory 4 * clients * n bytes).
 *
 * Uploads are kept in memory, or, with spool_dir set, written there and memory-mapped (so
 * large rounds live in the page cache).
 *
 * Thread safety: an HzAggregator lives on the thread-default GMainContext of the thread
 * that called hz_aggregator_listen(); call every other function from that thread, except
 * hz_aggregator_get_stats(), which is thread-safe.
 */
#pragma once

#include <gio/gio.h>
#include "lora-delta.h"

G_BEGIN_DECLS

#define HZ_AGGREGATOR_ERROR (hz_aggregator_error_quark ())
/** Error domain of this header. */
GQuark hz_aggregator_error_quark (void);
typedef enum {
  HZ_AGGREGATOR_ERROR_INVALID,   /* bad option, client id or token hash */
  HZ_AGGREGATOR_ERROR_IO,        /* clients file / spool directory / listening socket */
} HzAggregatorError;

typedef enum {
  HZ_AGG_RULE_TRIMMED_MEAN,
  HZ_AGG_RULE_MULTI_KRUM,
} HzAggRule;

typedef struct {
  HzAggRule   rule;
  double      beta;               /* trimmed mean: cut floor(beta * n) from each end */
  guint       krum_f, krum_m;     /* Multi-Krum: assumed Byzantine f, averaged m */
  guint       min_clients;        /* >= 1; trimmed mean needs 2 floor(beta n) < n */
  gint64      round_duration_us;  /* > 0 */
  double      max_norm;           /* L2 bound of an accepted update (> 0) */
  const char *spool_dir;          /* NULL = keep uploads in memory */
  guint64     first_round;        /* >= 1 */
  gint64      io_timeout_us;      /* > 0: the connection deadlines above */
} HzAggregatorOptions;

/** Trimmed mean beta 0.2, min 2 clients, 60 s rounds, max norm 1e3, in memory, round 1,
 *  30 s I/O timeout. */
#define HZ_AGGREGATOR_OPTIONS_DEFAULT \
  ((HzAggregatorOptions) { HZ_AGG_RULE_TRIMMED_MEAN, 0.2, 0, 0, 2, 60 * G_USEC_PER_SEC, \
                           1e3, NULL, 1, 30 * G_USEC_PER_SEC })

typedef struct {
  guint64 current_round;
  guint64 rounds_aggregated;
  guint64 accepted;       /* updates accepted, all rounds */
  guint64 duplicates;     /* idempotent repeats answered 200 */
  guint64 rejected;       /* requests answered 4xx */
  double  last_aggregate_s;  /* wall time of the last aggregation */
  guint64 timed_out;      /* connections shut down by a deadline (slow or stuck clients) */
} HzAggregatorStats;

typedef struct _HzAggregator HzAggregator;

/** A server for adapter config `cfg` (referenced). A `spool_dir` that does not exist is
 *  created (mode 0700, with its parents). Errors: HZ_AGGREGATOR_ERROR_INVALID (options),
 *  HZ_AGGREGATOR_ERROR_IO (the spool directory cannot be created or written; the message
 *  names it). */
HzAggregator *hz_aggregator_new (HzDeltaConfig *cfg, const HzAggregatorOptions *opts,
                                 GError **error);
/** Stop listening, wait for a running aggregation, free. NULL is ignored. */
void          hz_aggregator_free (HzAggregator *agg);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzAggregator, hz_aggregator_free)

/** Register a client by id (printable ASCII, no spaces) and lowercase hex sha256 of its
 *  token. Errors: HZ_AGGREGATOR_ERROR_INVALID (bad id/hash, duplicate id or hash). */
gboolean hz_aggregator_add_client (HzAggregator *agg, const char *client_id,
                                   const char *token_sha256, GError **error);
/** Register every "id sha256hex" line of a file ('#' comments and blank lines skipped).
 *  Errors: HZ_AGGREGATOR_ERROR_IO, _INVALID (naming the line). */
gboolean hz_aggregator_load_clients (HzAggregator *agg, const char *path, GError **error);

/** Listen on `address` ("127.0.0.1", "0.0.0.0", "::") and `port` (0 = any free port);
 *  with `tls` (may be NULL) serve HTTPS. Errors: HZ_AGGREGATOR_ERROR_IO. */
gboolean hz_aggregator_listen (HzAggregator *agg, const char *address, guint port,
                               GTlsCertificate *tls, GError **error);
/** Serve one already-connected client `stream` (socket activation, tests, the fuzz target
 *  tests/fuzz/fuzz-aggregator-http.c); the stream must be pollable (as socket, TLS and
 *  memory streams are), on the calling thread's default GMainContext (if the server does not
 *  also listen, libsoup closes the stream after one request). Without a GSocket under it the deadlines above cannot cut it: its
 *  owner has to. Errors: HZ_AGGREGATOR_ERROR_IO. */
gboolean hz_aggregator_serve_stream (HzAggregator *agg, GIOStream *stream, GError **error);
/** The port actually listened on (after hz_aggregator_listen()). */
guint    hz_aggregator_get_port (HzAggregator *agg);

/** Close the open round now if it has at least min_clients updates (an operator action;
 *  tests). Returns FALSE when it has too few or is already aggregating. The aggregation
 *  itself finishes asynchronously. */
gboolean hz_aggregator_close_round (HzAggregator *agg);

/** A snapshot of the counters. Thread-safe. */
void     hz_aggregator_get_stats (HzAggregator *agg, HzAggregatorStats *out);

G_END_DECLS
