/* server/server-guard.c — request deadlines and hang-up detection (server-guard.h).
 *
 * The timer is a plain timeout source armed for the earliest deadline; a deadline that
 * moves later does not re-arm it (the timer fires, sees the new deadline and re-arms), so
 * a streaming reply costs one timer per io_timeout, not one per token. */
#include "server-guard.h"

#include "server-reply.h"

#define MIN_RATE 16384   /* bytes per second a request body must average */
#define KEY "hz-guard"

typedef struct {
  SoupServerMessage *msg;        /* not a reference: the guard is the message's data */
  HzGuardLimits      lim;
  GSource           *timer;
  gint64             timer_due;
  gint64             deadline;   /* monotonic µs; G_MAXINT64: none */
  gint64             idle;       /* progress needed by; G_MAXINT64: none */
  guint64            body_bytes, queued, written;
  GSource           *hup;        /* read watch while watched */
  HzGuardGoneFunc    gone;
  gpointer           gone_data;
} Guard;

static Guard *
guard_of (SoupServerMessage *msg)
{
  return g_object_get_data (G_OBJECT (msg), KEY);
}

static void
drop_source (GSource **s)
{
  if (*s)
    {
      g_source_destroy (*s);
      g_clear_pointer (s, g_source_unref);
    }
}

static void
stop_watch (Guard *g)
{
  drop_source (&g->hup);
  g->gone = NULL;
}

/* Tell the watcher once. */
static void
notify_gone (Guard *g)
{
  HzGuardGoneFunc gone = g->gone;
  gpointer data = g->gone_data;
  stop_watch (g);
  if (gone)
    gone (data);
}

static void arm (Guard *g);

static gboolean
on_timer (gpointer user_data)
{
  Guard *g = user_data;
  g_clear_pointer (&g->timer, g_source_unref);   /* this source ends: REMOVE below */
  const gint64 now = g_get_monotonic_time ();
  if (now < MIN (g->deadline, g->idle))
    {
      arm (g);   /* the deadline moved on since the timer was set */
      return G_SOURCE_REMOVE;
    }
  g->deadline = g->idle = G_MAXINT64;
  GSocket *sock = soup_server_message_get_socket (g->msg);
  if (sock)
    g_socket_shutdown (sock, TRUE, TRUE, NULL);
  notify_gone (g);
  return G_SOURCE_REMOVE;
}

static void
arm (Guard *g)
{
  const gint64 due = MIN (g->deadline, g->idle);
  if (g->timer && g->timer_due <= due)
    return;   /* fires early and re-arms */
  drop_source (&g->timer);
  if (due == G_MAXINT64)
    return;
  const gint64 now = g_get_monotonic_time ();
  g->timer = g_timeout_source_new ((guint) MIN (MAX (due - now, 0) / 1000 + 1, G_MAXUINT));
  g->timer_due = due;
  g_source_set_callback (g->timer, on_timer, g, NULL);
  g_source_set_static_name (g->timer, "hz-server-deadline");
  g_source_attach (g->timer, g_main_context_get_thread_default ());
}

static gint64
seconds_at_min_rate (guint64 bytes)
{
  return (gint64) MIN (bytes / MIN_RATE, (guint64) G_MAXINT32) * G_USEC_PER_SEC;
}

static void
on_got_headers (SoupServerMessage *msg, gpointer user_data)
{
  Guard *g = user_data;
  SoupMessageHeaders *h = soup_server_message_get_request_headers (msg);
  const guint64 len = soup_message_headers_get_encoding (h) == SOUP_ENCODING_CONTENT_LENGTH
                        ? (guint64) soup_message_headers_get_content_length (h)
                        : (guint64) g->lim.max_body;
  const gint64 now = g_get_monotonic_time ();
  g->deadline = now + g->lim.io_timeout_us + seconds_at_min_rate (MIN (len, g->lim.max_body));
  g->idle = now + g->lim.io_timeout_us;
  arm (g);
}

static void
on_got_chunk (SoupServerMessage *msg, GBytes *chunk, gpointer user_data)
{
  Guard *g = user_data;
  g->body_bytes += g_bytes_get_size (chunk);
  g->idle = g_get_monotonic_time () + g->lim.io_timeout_us;
  if (g->body_bytes > g->lim.max_body && soup_server_message_get_status (msg) == 0)
    {
      /* a chunked body (no Content-Length for the early check) past the limit: answered,
       * and the rest is read and dropped */
      g_autofree char *text = g_strdup_printf ("the request body is larger than %" G_GSIZE_FORMAT
                                               " bytes", g->lim.max_body);
      hz_reply_send_error (msg, SOUP_STATUS_REQUEST_ENTITY_TOO_LARGE, "request_too_large", NULL,
                           text);
    }
  if (soup_server_message_get_status (msg) != 0)
    {
      SoupMessageBody *b = soup_server_message_get_request_body (msg);
      soup_message_body_set_accumulate (b, FALSE);
      soup_message_body_truncate (b);
    }
  arm (g);
}

/* The request is read: no deadline until reply bytes wait for the client. */
static void
on_got_body (SoupServerMessage *msg, gpointer user_data)
{
  Guard *g = user_data;
  g->deadline = g->idle = G_MAXINT64;
  drop_source (&g->timer);
}

static void
on_wrote_body_data (SoupServerMessage *msg, guint n, gpointer user_data)
{
  Guard *g = user_data;
  g->written += n;
  g->idle = g->written >= g->queued ? G_MAXINT64
                                    : g_get_monotonic_time () + g->lim.io_timeout_us;
  arm (g);
}

static void
on_finished (SoupServerMessage *msg, gpointer user_data)
{
  Guard *g = user_data;
  drop_source (&g->timer);
  g->deadline = g->idle = G_MAXINT64;
  /* the watch ends with the message: its watcher's own "finished" handler sees a request
   * that ended before its reply did (the message can no longer be written or unpaused) */
  stop_watch (g);
}

static void
guard_free (gpointer p)
{
  Guard *g = p;
  drop_source (&g->timer);
  drop_source (&g->hup);
  g_free (g);
}

void
hz_guard_attach (SoupServerMessage *msg, const HzGuardLimits *limits)
{
  Guard *g = g_new0 (Guard, 1);
  g->msg = msg;
  g->lim = *limits;
  g->deadline = g_get_monotonic_time () + limits->io_timeout_us;   /* the headers */
  g->idle = G_MAXINT64;
  g_object_set_data_full (G_OBJECT (msg), KEY, g, guard_free);
  soup_message_headers_replace (soup_server_message_get_response_headers (msg), "Connection",
                                "close");
  arm (g);
  g_signal_connect (msg, "got-headers", G_CALLBACK (on_got_headers), g);
  g_signal_connect (msg, "got-chunk", G_CALLBACK (on_got_chunk), g);
  g_signal_connect (msg, "got-body", G_CALLBACK (on_got_body), g);
  g_signal_connect (msg, "wrote-body-data", G_CALLBACK (on_wrote_body_data), g);
  g_signal_connect (msg, "finished", G_CALLBACK (on_finished), g);
}

/* The connection is readable while no request is expected: peek (nothing is consumed,
 * libsoup reads nothing meanwhile). 0 bytes: the client closed it. */
static gboolean
on_readable (GSocket *sock, GIOCondition cond, gpointer user_data)
{
  Guard *g = user_data;
  char c;
  GInputVector v = { &c, 1 };
  gint flags = G_SOCKET_MSG_PEEK;
  g_autoptr (GError) error = NULL;
  const gssize n = g_socket_receive_message (sock, NULL, &v, 1, NULL, NULL, &flags, NULL,
                                             &error);
  if (n < 0 && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
    return G_SOURCE_CONTINUE;
  if (n > 0)
    {
      /* the client sent more (a pipelined request): no longer visible this way */
      g_clear_pointer (&g->hup, g_source_unref);
      return G_SOURCE_REMOVE;
    }
  notify_gone (g);   /* destroys this source */
  return G_SOURCE_REMOVE;
}

void
hz_guard_watch (SoupServerMessage *msg, HzGuardGoneFunc gone, gpointer user_data)
{
  Guard *g = guard_of (msg);
  g_return_if_fail (g != NULL);
  stop_watch (g);
  g->gone = gone;
  g->gone_data = user_data;
  GSocket *sock = soup_server_message_get_socket (msg);
  if (sock == NULL)
    return;   /* a stream without a socket (the fuzz target's memory streams) */
  g->hup = g_socket_create_source (sock, G_IO_IN | G_IO_HUP | G_IO_ERR, NULL);
  g_source_set_callback (g->hup, G_SOURCE_FUNC (on_readable), g, NULL);
  g_source_set_static_name (g->hup, "hz-server-hangup");
  g_source_attach (g->hup, g_main_context_get_thread_default ());
}

void
hz_guard_unwatch (SoupServerMessage *msg)
{
  Guard *g = guard_of (msg);
  if (g)
    stop_watch (g);
}

void
hz_guard_queued (SoupServerMessage *msg, gsize n)
{
  Guard *g = guard_of (msg);
  if (g == NULL || n == 0)
    return;
  if (g->written >= g->queued)
    g->idle = g_get_monotonic_time () + g->lim.io_timeout_us;
  g->queued += n;
  arm (g);
}
