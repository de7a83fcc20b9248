/* hanzo-aggregator against slow, stuck and oversized clients over loopback HTTP: a client
 * that connects and sends nothing, one that sends headers a byte at a time forever
 * (slowloris), a huge Content-Length, a stalled body and a chunked body past the size
 * limit. The server (I/O timeout 300 ms) must shut each connection down in time, free it
 * (no descriptor left behind) and keep serving others. */
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <string.h>

#include "egress-test-util.h"

#define IO_TIMEOUT_MS 300
#define SLACK_S 3.0       /* generous: the machine running the tests may be busy */

typedef struct {
  HzDeltaConfig *cfg;
  HzAggregator  *agg;
} Server;

static guint
server_setup (gpointer p)
{
  Server *s = p;
  HzAggregatorOptions o = HZ_AGGREGATOR_OPTIONS_DEFAULT;
  o.io_timeout_us = IO_TIMEOUT_MS * 1000;
  g_autoptr (GError) error = NULL;
  s->agg = hz_aggregator_new (s->cfg, &o, &error);
  g_assert_no_error (error);
  return hzt_aggregator_start (s->agg, "c", 2);
}

static gboolean
server_teardown (gpointer p)
{
  Server *s = p;
  hz_aggregator_free (s->agg);
  return G_SOURCE_REMOVE;
}

static GSocketConnection *
connect_to (guint port)
{
  g_autoptr (GSocketClient) c = g_socket_client_new ();
  g_socket_client_set_enable_proxy (c, FALSE);   /* no proxy resolver: loopback only */
  g_autoptr (GError) error = NULL;
  g_autofree char *host = g_strdup_printf ("127.0.0.1:%u", port);
  GSocketConnection *conn = g_socket_client_connect_to_host (c, host, port, NULL, &error);
  g_assert_no_error (error);
  g_socket_set_timeout (g_socket_connection_get_socket (conn), 10);
  return conn;
}

static gboolean
send_all (GSocket *s, const char *data, gsize len)
{
  while (len > 0)
    {
      gssize n = g_socket_send (s, data, len, NULL, NULL);
      if (n <= 0)
        return FALSE;
      data += n;
      len -= (gsize) n;
    }
  return TRUE;
}

/* Read (and keep in `got`, when not NULL) until the server closes; seconds it took from
 * `t0`. A reset counts as closed. Fails the test when the server keeps it open for 10 s. */
static double
wait_closed (GSocket *s, gint64 t0, GString *got)
{
  char buf[4096];
  for (;;)
    {
      g_autoptr (GError) error = NULL;
      gssize n = g_socket_receive (s, buf, sizeof buf, NULL, &error);
      if (n > 0 && got)
        g_string_append_len (got, buf, n);
      if (n > 0)
        continue;
      if (n < 0 && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT))
        g_error ("the server kept the connection open for 10 s (got %" G_GSIZE_FORMAT " bytes: %.*s)", got ? got->len : 0, got ? (int) MIN (got->len, 200) : 0, got ? got->str : "");
      return (g_get_monotonic_time () - t0) / 1e6;
    }
}

/* Is the connection closed by the server (EOF or reset), without blocking? */
static gboolean
is_closed (GSocket *s)
{
  if (!(g_socket_condition_check (s, G_IO_IN | G_IO_HUP | G_IO_ERR)))
    return FALSE;
  char buf[4096];
  g_autoptr (GError) error = NULL;
  gssize n = g_socket_receive_with_blocking (s, buf, sizeof buf, FALSE, NULL, &error);
  return n == 0 || (n < 0 && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK));
}

static void
list_fds (void)
{
  g_autoptr (GDir) d = g_dir_open ("/proc/self/fd", 0, NULL);
  const char *name;
  while ((name = g_dir_read_name (d)))
    {
      g_autofree char *p = g_strdup_printf ("/proc/self/fd/%s", name);
      g_autofree char *l = g_file_read_link (p, NULL);
      g_test_message ("fd %s -> %s", name, l ? l : "?");
    }
}

static guint
count_fds (void)
{
  g_autoptr (GDir) d = g_dir_open ("/proc/self/fd", 0, NULL);
  guint n = 0;
  while (d && g_dir_read_name (d))
    n++;
  return n;
}

typedef struct {
  Server           *srv;
  HzAggregatorStats st;
} StatsCall;

static gboolean
read_stats (gpointer p)
{
  StatsCall *c = p;
  hz_aggregator_get_stats (c->srv->agg, &c->st);
  return G_SOURCE_REMOVE;
}

static void
test_slow_clients (void)
{
  g_autoptr (HzDeltaConfig) cfg = hzt_config ();
  Server srv = { .cfg = cfg };
  HztServer *hs = hzt_server_start (server_setup, &srv);
  const guint port = hs->port;
  const double t = IO_TIMEOUT_MS / 1000.0;

  /* a request that works, so a descriptor count taken now includes libsoup's own */
  {
    g_autoptr (GSocketConnection) c = connect_to (port);
    GSocket *s = g_socket_connection_get_socket (c);
    const char req[] = "GET /v1/rounds/current HTTP/1.1\r\nHost: x\r\n"
                       "Authorization: Bearer token-0\r\nConnection: close\r\n\r\n";
    g_assert_true (send_all (s, req, sizeof req - 1));
    g_autoptr (GString) got = g_string_new (NULL);
    wait_closed (s, g_get_monotonic_time (), got);
    g_assert_true (g_str_has_prefix (got->str, "HTTP/1.1 200"));
  }
  g_usleep (50000);
  const guint fds0 = count_fds ();

  /* 1. connects and sends nothing */
  {
    g_autoptr (GSocketConnection) c = connect_to (port);
    const gint64 t0 = g_get_monotonic_time ();
    const double s = wait_closed (g_socket_connection_get_socket (c), t0, NULL);
    g_test_message ("silent client closed after %.3f s", s);
    g_assert_cmpfloat (s, >=, t * 0.9);
    g_assert_cmpfloat (s, <, t + SLACK_S);
  }

  /* 2. slowloris: header bytes every 20 ms forever; the header deadline is not reset */
  {
    g_autoptr (GSocketConnection) c = connect_to (port);
    GSocket *s = g_socket_connection_get_socket (c);
    const gint64 t0 = g_get_monotonic_time ();
    const char start[] = "GET /v1/rounds/current HTTP/1.1\r\nHost: x\r\nX-Slow: ";
    g_assert_true (send_all (s, start, sizeof start - 1));
    guint sent = 0;
    while (!is_closed (s))
      {
        if (!send_all (s, "a", 1))
          break;
        sent++;
        g_usleep (20000);
        if (g_get_monotonic_time () - t0 > (gint64) ((t + SLACK_S) * G_USEC_PER_SEC))
          g_error ("slowloris client still connected after %u bytes", sent);
      }
    const double el = (g_get_monotonic_time () - t0) / 1e6;
    g_test_message ("slowloris client cut after %.3f s and %u header bytes", el, sent);
    g_assert_cmpfloat (el, >=, t * 0.9);
  }

  /* 3. a huge Content-Length: refused by its headers (413); with "Expect: 100-continue"
   * at once, otherwise the body is dropped as it comes and the connection is cut when it
   * has not ended within the timeout (here: the client keeps sending, 64 KiB every 2 ms;
   * flat out over loopback libsoup would read in one loop and see the deadline late) */
  {
    g_autoptr (GSocketConnection) c = connect_to (port);
    GSocket *s = g_socket_connection_get_socket (c);
    const char req[] = "PUT /v1/rounds/1/update HTTP/1.1\r\nHost: x\r\n"
                       "Authorization: Bearer token-0\r\nContent-Length: 1000000000000\r\n"
                       "Expect: 100-continue\r\n\r\n";
    g_assert_true (send_all (s, req, sizeof req - 1));
    char buf[512];
    gssize n = g_socket_receive (s, buf, sizeof buf - 1, NULL, NULL);
    g_assert_cmpint (n, >, 0);
    buf[n] = '\0';
    g_assert_true (g_str_has_prefix (buf, "HTTP/1.1 413"));
  }
  {
    g_autoptr (GSocketConnection) c = connect_to (port);
    GSocket *s = g_socket_connection_get_socket (c);
    const gint64 t0 = g_get_monotonic_time ();
    const char req[] = "PUT /v1/rounds/1/update HTTP/1.1\r\nHost: x\r\n"
                       "Authorization: Bearer token-0\r\nContent-Length: 1000000000000\r\n\r\n";
    g_assert_true (send_all (s, req, sizeof req - 1));
    static char block[65536];
    guint64 sent = 0;
    while (send_all (s, block, sizeof block))
      {
        sent += sizeof block;
        g_usleep (2000);
        if (g_get_monotonic_time () - t0 > (gint64) ((t + SLACK_S) * G_USEC_PER_SEC))
          g_error ("huge upload still accepted after %" G_GUINT64_FORMAT " bytes", sent);
      }
    const double el = (g_get_monotonic_time () - t0) / 1e6;
    g_test_message ("huge Content-Length cut after %.3f s and %" G_GUINT64_FORMAT
                    " bytes (dropped, not kept)", el, sent);
    g_assert_cmpfloat (el, >=, t * 0.9);
  }

  /* 4. an authorized body that stalls half-way */
  {
    g_autoptr (GSocketConnection) c = connect_to (port);
    GSocket *s = g_socket_connection_get_socket (c);
    const char req[] = "PUT /v1/rounds/1/update HTTP/1.1\r\nHost: x\r\n"
                       "Authorization: Bearer token-0\r\nContent-Length: 1000\r\n\r\n0123456789";
    g_assert_true (send_all (s, req, sizeof req - 1));
    const gint64 t0 = g_get_monotonic_time ();
    const double el = wait_closed (s, t0, NULL);
    g_test_message ("stalled body cut after %.3f s", el);
    g_assert_cmpfloat (el, >=, t * 0.9);
    g_assert_cmpfloat (el, <, t + SLACK_S);
  }

  /* 5. a chunked body past the size limit: 413, the rest dropped */
  {
    g_autoptr (GSocketConnection) c = connect_to (port);
    GSocket *s = g_socket_connection_get_socket (c);
    const char req[] = "PUT /v1/rounds/1/update HTTP/1.1\r\nHost: x\r\n"
                       "Authorization: Bearer token-0\r\nTransfer-Encoding: chunked\r\n\r\n";
    g_assert_true (send_all (s, req, sizeof req - 1));
    static char chunk[8192 + 16];
    const int hdr = g_snprintf (chunk, sizeof chunk, "%x\r\n", 8192);
    memset (chunk + hdr, 'x', 8192);
    memcpy (chunk + hdr + 8192, "\r\n", 2);
    for (int i = 0; i < 64; i++)   /* 512 KiB: past this config's 66 KiB limit */
      g_assert_true (send_all (s, chunk, hdr + 8192 + 2));
    g_assert_true (send_all (s, "0\r\n\r\n", 5));
    g_autoptr (GString) got = g_string_new (NULL);
    wait_closed (s, g_get_monotonic_time (), got);
    g_test_message ("chunked upload: %.*s", (int) MIN (got->len, 60), got->str);
    g_assert_true (g_str_has_prefix (got->str, "HTTP/1.1 413"));
    g_assert_nonnull (strstr (got->str, "update larger than"));
  }

  /* the server still serves, counted the cut connections and holds no descriptor for them;
   * a client asking for keep-alive gets its reply and the connection closed (libsoup 3.2
   * would never free it once the client closed it idle) */
  {
    g_autoptr (GSocketConnection) c = connect_to (port);
    GSocket *s = g_socket_connection_get_socket (c);
    const char req[] = "GET /v1/rounds/current HTTP/1.1\r\nHost: x\r\n"
                       "Authorization: Bearer token-1\r\nConnection: keep-alive\r\n\r\n";
    g_assert_true (send_all (s, req, sizeof req - 1));
    g_autoptr (GString) got = g_string_new (NULL);
    wait_closed (s, g_get_monotonic_time (), got);
    g_assert_true (g_str_has_prefix (got->str, "HTTP/1.1 200"));
  }
  StatsCall sc = { &srv };
  hzt_server_call (hs, read_stats, &sc);
  g_assert_cmpuint (sc.st.timed_out, >=, 4);
  guint fds = 0;
  for (int i = 0; i < 100 && (fds = count_fds ()) > fds0; i++)
    g_usleep (20000);
  if (fds > fds0)
    list_fds ();
  g_assert_cmpuint (fds, <=, fds0);
  hzt_server_stop (hs, server_teardown, &srv);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/egress/aggregator/slow-clients", test_slow_clients);
  return g_test_run ();
}
