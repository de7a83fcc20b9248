/* server/server-guard.h — one guard per HTTP request (private to server/): the limits on
 * how a client sends and takes data, and noticing a client that went away.
 *
 * Deadlines (the aggregator's scheme, egress/aggregator.c, for a server whose replies can
 * stream for minutes): the request headers within io_timeout of the connection; the body
 * at an average of at least 16 KiB/s after io_timeout, with no pause longer than
 * io_timeout, and at most max_body bytes (a chunked body past it is answered 413 and
 * dropped); while the reply waits for the model there is no deadline; reply bytes that
 * were queued must be taken with no pause longer than io_timeout. A deadline that passes
 * shuts the connection's socket down (libsoup then ends the request), and the request's
 * hang-up function is called.
 *
 * Hang-up: while a reply is being produced, the connection is watched (a read-readiness
 * source, peeking without consuming); the client closing it calls the hang-up function
 * once, within the main loop's next iteration, so that the generation stops at the next
 * token.
 *
 * Everything runs on the main context the server's SoupServer runs on. */
#pragma once

#include <libsoup/soup.h>

G_BEGIN_DECLS

typedef struct {
  gint64 io_timeout_us;   /* > 0 */
  gsize  max_body;        /* bytes */
} HzGuardLimits;

/** Called once when the client of a watched request is gone (closed the connection or
 *  missed a deadline). */
typedef void (*HzGuardGoneFunc) (gpointer user_data);

/** Attach a guard to a new request (SoupServer::request-started); it lives as long as the
 *  message. `limits` is copied. Adds "Connection: close": one request per connection
 *  (libsoup before 3.3 leaks kept-alive connections closed by the client while idle,
 *  libsoup commit d20c6601). */
void hz_guard_attach (SoupServerMessage *msg, const HzGuardLimits *limits);

/** Watch the request's connection from now on; `gone` (with `user_data`) is called at most
 *  once. hz_guard_unwatch() (or the end of the message) stops it. */
void hz_guard_watch (SoupServerMessage *msg, HzGuardGoneFunc gone, gpointer user_data);
void hz_guard_unwatch (SoupServerMessage *msg);

/** `n` more reply bytes were appended to the message's body: the client must take them
 *  within the idle timeout. */
void hz_guard_queued (SoupServerMessage *msg, gsize n);

G_END_DECLS
