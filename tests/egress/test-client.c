/* The federation client against misbehaving loopback servers: down, hanging, closing
 * mid-upload, garbage, flaky; retries with the same round id, bounded, logged, never
 * blocking the caller's main loop (issue 8). */
#include <libsoup/soup.h>
#include <math.h>
#include "egress.h"
#include "egress-test-util.h"

/* Fast retry policy for tests: 3 attempts, 50..200 ms backoff, 1 s I/O timeout. */
static const HzEgressRetry fast = { 3, 50, 200, 1 };

typedef struct {
  HzStore      *store;
  HzDeltaConfig *cfg;
  HzDpRelease  *release;
} Fixture;

static void
fixture_init (Fixture *f)
{
  f->store = hzt_tmp_store ();
  f->cfg = hzt_config ();
  g_autoptr (HzLoraDelta) d = hz_lora_delta_new (f->cfg, HZT_BASE);
  for (gsize k = 0; k < hz_delta_config_n_elements (f->cfg); k++)
    hz_lora_delta_data (d)[k] = 0.01f * (float) (k % 7);
  g_autoptr (GError) error = NULL;
  f->release = hz_dp_release (d, 1.0, 2.0, 3, f->store, NULL, &error);
  g_assert_no_error (error);
}

static void
fixture_clear (Fixture *f)
{
  hzt_assert_uploads_ledgered (f->store);
  hz_dp_release_free (f->release);
  hz_delta_config_unref (f->cfg);
  hz_store_close (f->store);
}

static GPtrArray *
log_rows (HzStore *store)
{
  GPtrArray *rows = hz_store_list_egress_log (store, 0, 0, NULL);
  g_assert_nonnull (rows);
  return rows;
}

static HzEgress *
client (Fixture *f, guint port)
{
  g_autofree char *url = hzt_url (port);
  g_autoptr (GError) error = NULL;
  HzEgress *e = hz_egress_new (url, "tok-A", f->store, f->cfg, &error);
  g_assert_no_error (error);
  hz_egress_set_retry (e, &fast);
  return e;
}

/* ---------------------------------------------------------------- raw socket servers */

typedef enum { RAW_HANG, RAW_CLOSE_MID, RAW_GARBAGE } RawMode;

typedef struct {
  RawMode          mode;
  GSocketService  *service;
  GPtrArray       *held;      /* connections kept open (hang) */
  gint             accepted;  /* atomic */
} RawServer;

static gboolean
on_incoming (GSocketService *service, GSocketConnection *conn, GObject *source, gpointer p)
{
  RawServer *rs = p;
  g_atomic_int_inc (&rs->accepted);
  GInputStream *in = g_io_stream_get_input_stream (G_IO_STREAM (conn));
  GOutputStream *out = g_io_stream_get_output_stream (G_IO_STREAM (conn));
  char buf[1024];
  switch (rs->mode)
    {
    case RAW_HANG:
      g_ptr_array_add (rs->held, g_object_ref (conn));   /* never answer */
      break;
    case RAW_CLOSE_MID:
      /* read part of the request (headers and some body), then drop the connection */
      g_input_stream_read (in, buf, sizeof buf, NULL, NULL);
      g_io_stream_close (G_IO_STREAM (conn), NULL, NULL);
      break;
    case RAW_GARBAGE:
      g_input_stream_read (in, buf, sizeof buf, NULL, NULL);
      g_output_stream_write_all (out, "\x01\x02 NOT HTTP AT ALL\r\n\r\n", 22, NULL, NULL, NULL);
      g_io_stream_close (G_IO_STREAM (conn), NULL, NULL);
      break;
    }
  return TRUE;
}

static guint
raw_setup (gpointer p)
{
  RawServer *rs = p;
  rs->service = g_socket_service_new ();
  rs->held = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr (GError) error = NULL;
  g_autoptr (GInetAddress) lo = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr (GSocketAddress) sa = g_inet_socket_address_new (lo, 0);
  g_autoptr (GSocketAddress) got = NULL;
  g_socket_listener_add_address (G_SOCKET_LISTENER (rs->service), sa, G_SOCKET_TYPE_STREAM,
                                 G_SOCKET_PROTOCOL_TCP, NULL, &got, &error);
  g_assert_no_error (error);
  g_signal_connect (rs->service, "incoming", G_CALLBACK (on_incoming), rs);
  g_socket_service_start (rs->service);
  return g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (got));
}

static gboolean
raw_teardown (gpointer p)
{
  RawServer *rs = p;
  g_socket_service_stop (rs->service);
  g_socket_listener_close (G_SOCKET_LISTENER (rs->service));
  g_object_unref (rs->service);
  g_ptr_array_unref (rs->held);
  return G_SOURCE_REMOVE;
}

static void
expect_gave_up (Fixture *f, HzEgress *e, const char *what)
{
  g_autoptr (GError) error = NULL;
  gint64 t0 = g_get_monotonic_time ();
  g_assert_false (hz_egress_upload_release (e, f->release, NULL, &error));
  double s = (g_get_monotonic_time () - t0) / 1e6;
  g_test_message ("%s: gave up after %.2f s: %s", what, s, error->message);
  g_assert_error (error, HZ_EGRESS_ERROR, HZ_EGRESS_ERROR_NETWORK);
  /* bounded: 3 attempts x (1 s timeout) + backoffs (<= 0.25 + 0.25 s) + slack */
  g_assert_cmpfloat (s, <, 6.0);
  g_autoptr (GPtrArray) rows = log_rows (f->store);
  g_assert_cmpuint (rows->len, ==, 3);
  for (guint i = 0; i < 3; i++)
    {
      const HzEgressLogEntry *r = rows->pdata[i];
      g_assert_cmpint (r->direction, ==, HZ_EGRESS_UPLOAD);
      g_assert_cmpint (r->attempt, ==, (int) i + 1);
      g_assert_cmpint (r->status, ==, i < 2 ? HZ_EGRESS_STATUS_RETRY : HZ_EGRESS_STATUS_FAILED);
      g_assert_cmpstr (r->release_id, ==, hz_dp_release_get_id (f->release));
      g_assert_cmpint (r->round_id, ==, 3);   /* same round id every attempt */
      g_assert_cmpstr (r->payload_sha256, ==, hz_dp_release_get_payload_sha256 (f->release));
      g_assert_cmpint (r->bytes, ==, (gint64) g_bytes_get_size (hz_dp_release_get_payload (f->release)));
      g_assert_nonnull (r->message);
    }
}

static void
test_server_down (void)
{
  Fixture f;
  fixture_init (&f);
  /* a port that nobody listens on: bind, note, close */
  g_autoptr (GSocket) sock = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM,
                                           G_SOCKET_PROTOCOL_TCP, NULL);
  g_autoptr (GInetAddress) lo = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr (GSocketAddress) sa = g_inet_socket_address_new (lo, 0);
  g_assert_true (g_socket_bind (sock, sa, FALSE, NULL));
  g_autoptr (GSocketAddress) local = g_socket_get_local_address (sock, NULL);
  guint port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (local));
  g_socket_close (sock, NULL);
  g_autoptr (HzEgress) e = client (&f, port);
  expect_gave_up (&f, e, "server down");
  fixture_clear (&f);
}

static void
run_raw (RawMode mode, const char *what)
{
  Fixture f;
  fixture_init (&f);
  RawServer rs = { mode };
  HztServer *s = hzt_server_start (raw_setup, &rs);
  g_autoptr (HzEgress) e = client (&f, s->port);
  expect_gave_up (&f, e, what);
  g_assert_cmpint (g_atomic_int_get (&rs.accepted), ==, 3);   /* one connection an attempt */
  hzt_server_stop (s, raw_teardown, &rs);
  fixture_clear (&f);
}

static void test_hanging (void) { run_raw (RAW_HANG, "hanging server"); }
static void test_close_mid_upload (void) { run_raw (RAW_CLOSE_MID, "closing mid-upload"); }
static void test_garbage (void) { run_raw (RAW_GARBAGE, "garbage reply"); }

/* ---------------------------------------------------------------- a scripted HTTP server */

typedef struct {
  SoupServer *server;
  guint       script[8];     /* status of the nth reply; 1 = 200 with junk JSON, 2 = 200 ok */
  guint       n_script;
  gint        n;             /* requests seen (atomic) */
  GPtrArray  *bodies;        /* sha256 of every received body (server thread only) */
  GPtrArray  *paths;
  GBytes     *aggregate;     /* body for GET .../aggregate */
} Scripted;

static void
scripted_handler (SoupServer *server, SoupServerMessage *msg, const char *path,
                  GHashTable *query, gpointer p)
{
  Scripted *sc = p;
  guint i = (guint) g_atomic_int_add (&sc->n, 1);
  guint what = sc->script[MIN (i, sc->n_script - 1)];
  g_ptr_array_add (sc->paths, g_strdup (path));
  g_autoptr (GBytes) body = soup_message_body_flatten (soup_server_message_get_request_body (msg));
  g_ptr_array_add (sc->bodies, hz_sha256_hex (body));
  if (g_str_has_suffix (path, "/aggregate") && what == 2)
    {
      soup_server_message_set_status (msg, 200, NULL);
      soup_message_body_append_bytes (soup_server_message_get_response_body (msg), sc->aggregate);
      return;
    }
  if (what == 1)
    {
      soup_server_message_set_status (msg, 200, NULL);
      soup_server_message_set_response (msg, "application/json", SOUP_MEMORY_COPY, "{\"ok\":1}", 8);
      return;
    }
  if (what == 2)
    {
      g_autofree char *sha = hz_sha256_hex (body);
      g_autofree char *json = g_strdup_printf ("{\"status\":\"duplicate\",\"round\":3,\"sha256\":\"%s\"}", sha);
      soup_server_message_set_status (msg, 200, NULL);
      soup_server_message_set_response (msg, "application/json", SOUP_MEMORY_COPY, json, strlen (json));
      return;
    }
  soup_server_message_set_status (msg, what, NULL);
  soup_server_message_set_response (msg, "text/plain", SOUP_MEMORY_COPY, "scripted failure", 16);
}

static guint
scripted_setup (gpointer p)
{
  Scripted *sc = p;
  sc->server = soup_server_new (NULL, NULL);
  sc->bodies = g_ptr_array_new_with_free_func (g_free);
  sc->paths = g_ptr_array_new_with_free_func (g_free);
  soup_server_add_handler (sc->server, NULL, scripted_handler, sc, NULL);
  g_autoptr (GError) error = NULL;
  g_assert_true (soup_server_listen_local (sc->server, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error));
  GSList *uris = soup_server_get_uris (sc->server);
  guint port = (guint) g_uri_get_port (uris->data);
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);
  return port;
}

static gboolean
scripted_teardown (gpointer p)
{
  Scripted *sc = p;
  soup_server_disconnect (sc->server);
  g_object_unref (sc->server);
  g_ptr_array_unref (sc->bodies);
  g_ptr_array_unref (sc->paths);
  return G_SOURCE_REMOVE;
}

/* 503, then a 200 that does not confirm the payload, then a confirmation: the client
 * succeeds on attempt 3 having sent the identical bytes for round 3 every time. */
static void
test_flaky_then_ok (void)
{
  Fixture f;
  fixture_init (&f);
  Scripted sc = { .script = { 503, 1, 2 }, .n_script = 3 };
  HztServer *s = hzt_server_start (scripted_setup, &sc);
  g_autoptr (HzEgress) e = client (&f, s->port);
  g_autoptr (GError) error = NULL;
  g_assert_true (hz_egress_upload_release (e, f.release, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (g_atomic_int_get (&sc.n), ==, 3);
  for (guint i = 0; i < 3; i++)
    {
      g_assert_cmpstr (sc.bodies->pdata[i], ==, hz_dp_release_get_payload_sha256 (f.release));
      g_assert_cmpstr (sc.paths->pdata[i], ==, "/v1/rounds/3/update");
    }
  g_autoptr (GPtrArray) rows = log_rows (f.store);
  g_assert_cmpuint (rows->len, ==, 3);
  const HzEgressLogEntry *r0 = rows->pdata[0], *r1 = rows->pdata[1], *r2 = rows->pdata[2];
  g_assert_cmpint (r0->status, ==, HZ_EGRESS_STATUS_RETRY);
  g_assert_cmpint (r0->http_status, ==, 503);
  g_assert_cmpint (r1->status, ==, HZ_EGRESS_STATUS_RETRY);
  g_assert_nonnull (strstr (r1->message, "does not confirm"));
  g_assert_cmpint (r2->status, ==, HZ_EGRESS_STATUS_OK);
  g_assert_cmpint (r2->attempt, ==, 3);

  /* a final 4xx is not retried */
  hzt_server_stop (s, scripted_teardown, &sc);
  Scripted sc2 = { .script = { 422 }, .n_script = 1 };
  s = hzt_server_start (scripted_setup, &sc2);
  g_autoptr (HzEgress) e2 = client (&f, s->port);
  g_assert_false (hz_egress_upload_release (e2, f.release, NULL, &error));
  g_assert_error (error, HZ_EGRESS_ERROR, HZ_EGRESS_ERROR_REJECTED);
  g_assert_nonnull (strstr (error->message, "scripted failure"));
  g_assert_cmpint (g_atomic_int_get (&sc2.n), ==, 1);
  hzt_server_stop (s, scripted_teardown, &sc2);
  fixture_clear (&f);
}

/* Downloads: garbage and NaN aggregates are retried and then refused; 425 is "not ready". */
static void
test_fetch_validation (void)
{
  Fixture f;
  fixture_init (&f);
  g_autoptr (GError) error = NULL;

  Scripted junk = { .script = { 2 }, .n_script = 1 };
  junk.aggregate = g_bytes_new_static ("\x10\0\0\0\0\0\0\0{\"a\":1}         ", 24);
  HztServer *s = hzt_server_start (scripted_setup, &junk);
  g_autoptr (HzEgress) e = client (&f, s->port);
  g_assert_null (hz_egress_fetch_aggregate (e, 3, NULL, &error));
  g_assert_error (error, HZ_EGRESS_ERROR, HZ_EGRESS_ERROR_BAD_PAYLOAD);
  g_test_message ("garbage aggregate: %s", error->message);
  g_clear_error (&error);
  g_assert_cmpint (g_atomic_int_get (&junk.n), ==, 3);
  hzt_server_stop (s, scripted_teardown, &junk);
  g_bytes_unref (junk.aggregate);

  /* a well-formed file with a NaN, and one of another round */
  g_autoptr (HzLoraDelta) bad = hz_lora_delta_new (f.cfg, HZT_BASE);
  hz_lora_delta_data (bad)[5] = NAN;
  Scripted nan = { .script = { 2 }, .n_script = 1 };
  nan.aggregate = hz_lora_delta_to_wire (bad, 3, 0);
  s = hzt_server_start (scripted_setup, &nan);
  g_autoptr (HzEgress) e2 = client (&f, s->port);
  g_assert_null (hz_egress_fetch_aggregate (e2, 3, NULL, &error));
  g_assert_error (error, HZ_EGRESS_ERROR, HZ_EGRESS_ERROR_BAD_PAYLOAD);
  g_assert_nonnull (strstr (error->message, "not finite"));
  g_clear_error (&error);
  hzt_server_stop (s, scripted_teardown, &nan);
  g_bytes_unref (nan.aggregate);

  g_autoptr (HzLoraDelta) good = hz_lora_delta_new (f.cfg, HZT_BASE);
  hz_lora_delta_data (good)[1] = 0.5f;
  Scripted other = { .script = { 2 }, .n_script = 1 };
  other.aggregate = hz_lora_delta_to_wire (good, 2, 0);
  s = hzt_server_start (scripted_setup, &other);
  g_autoptr (HzEgress) e3 = client (&f, s->port);
  g_assert_null (hz_egress_fetch_aggregate (e3, 3, NULL, &error));
  g_assert_error (error, HZ_EGRESS_ERROR, HZ_EGRESS_ERROR_BAD_PAYLOAD);
  g_clear_error (&error);
  /* ... while the right round is accepted */
  g_autoptr (HzLoraDelta) got = hz_egress_fetch_aggregate (e3, 2, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (hz_lora_delta_data (got)[1], ==, 0.5f);
  hzt_server_stop (s, scripted_teardown, &other);
  g_bytes_unref (other.aggregate);

  Scripted early = { .script = { 425 }, .n_script = 1 };
  s = hzt_server_start (scripted_setup, &early);
  g_autoptr (HzEgress) e4 = client (&f, s->port);
  g_assert_null (hz_egress_fetch_aggregate (e4, 3, NULL, &error));
  g_assert_error (error, HZ_EGRESS_ERROR, HZ_EGRESS_ERROR_NOT_READY);
  g_assert_cmpint (g_atomic_int_get (&early.n), ==, 1);
  hzt_server_stop (s, scripted_teardown, &early);

  /* downloads are logged too, with the sha256 of what arrived */
  g_autoptr (GPtrArray) rows = log_rows (f.store);
  guint downloads = 0, ok = 0;
  for (guint i = 0; i < rows->len; i++)
    {
      const HzEgressLogEntry *r = rows->pdata[i];
      downloads += r->direction == HZ_EGRESS_DOWNLOAD;
      ok += r->status == HZ_EGRESS_STATUS_OK;
      g_assert_cmpfloat (r->epsilon, ==, 0);
    }
  g_assert_cmpuint (downloads, ==, rows->len);
  g_assert_cmpuint (ok, ==, 1);
  fixture_clear (&f);
}

/* The async upload leaves the caller's main loop running while a server hangs, and a
 * cancellation stops it promptly. */
typedef struct {
  GMainLoop *loop;
  gboolean   done;
  GError    *error;
  HzEgress  *egress;
  guint      ticks;
} AsyncState;

static void
upload_done (GObject *src, GAsyncResult *res, gpointer p)
{
  AsyncState *st = p;
  hz_egress_upload_release_finish (st->egress, res, &st->error);
  st->done = TRUE;
  g_main_loop_quit (st->loop);
}

static gboolean
tick (gpointer p)
{
  ((AsyncState *) p)->ticks++;
  return G_SOURCE_CONTINUE;
}

static gboolean
cancel_later (gpointer c)
{
  g_cancellable_cancel (c);
  return G_SOURCE_REMOVE;
}

static void
test_async_never_blocks (void)
{
  Fixture f;
  fixture_init (&f);
  RawServer rs = { RAW_HANG };
  HztServer *s = hzt_server_start (raw_setup, &rs);
  g_autoptr (HzEgress) e = client (&f, s->port);
  HzEgressRetry slow = { 5, 1000, 1000, 10 };
  hz_egress_set_retry (e, &slow);
  AsyncState st = { g_main_loop_new (NULL, FALSE), FALSE, NULL, e, 0 };
  g_autoptr (GCancellable) cancel = g_cancellable_new ();
  guint t = g_timeout_add (10, tick, &st);
  g_timeout_add (800, cancel_later, cancel);
  gint64 t0 = g_get_monotonic_time ();
  hz_egress_upload_release_async (e, f.release, cancel, upload_done, &st);
  g_main_loop_run (st.loop);
  double secs = (g_get_monotonic_time () - t0) / 1e6;
  g_source_remove (t);
  g_test_message ("cancelled after %.2f s; the caller's loop ticked %u times meanwhile", secs, st.ticks);
  g_assert_true (st.done);
  g_assert_error (st.error, HZ_EGRESS_ERROR, HZ_EGRESS_ERROR_CANCELLED);
  g_assert_cmpfloat (secs, <, 3.0);
  g_assert_cmpuint (st.ticks, >=, 40);   /* ~80 expected in 0.8 s */
  g_clear_error (&st.error);
  g_main_loop_unref (st.loop);
  g_autoptr (GPtrArray) rows = log_rows (f.store);
  g_assert_cmpuint (rows->len, ==, 1);
  g_assert_cmpint (((HzEgressLogEntry *) rows->pdata[0])->status, ==, HZ_EGRESS_STATUS_CANCELLED);
  hzt_server_stop (s, raw_teardown, &rs);
  fixture_clear (&f);
}

static void
test_endpoints (void)
{
  Fixture f;
  fixture_init (&f);
  const char *bad[] = { "http://example.org", "ftp://127.0.0.1", "https://", "not a url",
                        "https://user:pw@example.org", "https://example.org/?q=1", NULL };
  for (guint i = 0; bad[i]; i++)
    {
      g_autoptr (GError) error = NULL;
      g_assert_null (hz_egress_new (bad[i], "t", f.store, f.cfg, &error));
      g_assert_error (error, HZ_EGRESS_ERROR, HZ_EGRESS_ERROR_INVALID);
    }
  const char *good[] = { "https://fed.example.org", "https://fed.example.org/base/",
                         "http://127.0.0.1:8080", "http://localhost:1", "http://[::1]:9", NULL };
  for (guint i = 0; good[i]; i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (HzEgress) e = hz_egress_new (good[i], "t", f.store, f.cfg, &error);
      g_assert_no_error (error);
    }
  g_autoptr (GError) error = NULL;
  g_assert_null (hz_egress_new ("https://fed.example.org", "has space", f.store, f.cfg, &error));
  g_assert_error (error, HZ_EGRESS_ERROR, HZ_EGRESS_ERROR_INVALID);
  fixture_clear (&f);
}

/* The JSON replies read without a server: a round only as an integer >= 1, an upload
 * receipt only for the right status, round and sha256; members of another kind (an
 * object, an array, a string, a float) are refused without a GLib critical (json-glib's
 * _with_default getters emitted one; the test runs with G_DEBUG=fatal-criticals). */
static void
test_round_replies (void)
{
  guint64 r = 0;
#define ROUND(json) hz_egress_parse_round_reply (json, strlen (json), &r)
  g_assert_true (ROUND ("{\"round\": 3, \"state\": \"open\"}"));
  g_assert_cmpuint (r, ==, 3);
  static const char *const bad[] = {
    "{\"round\": {\"n\": 3}}", "{\"round\": [3]}", "{\"round\": \"3\"}", "{\"round\": 3.5}",
    "{\"round\": 0}", "{\"round\": -2}", "{\"round\": null}", "[3]", "", "{\"round\": 3",
  };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    g_assert_false (ROUND (bad[i]));
  g_assert_false (hz_egress_parse_round_reply (NULL, 0, &r));
#undef ROUND
  static const char sha[] = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
  g_autofree char *ok = g_strdup_printf ("{\"status\": \"duplicate\", \"round\": 4, "
                                         "\"sha256\": \"%s\"}", sha);
  g_assert_true (hz_egress_reply_confirms_upload (ok, strlen (ok), 4, sha));
  g_assert_false (hz_egress_reply_confirms_upload (ok, strlen (ok), 5, sha));
  g_assert_false (hz_egress_reply_confirms_upload (ok, strlen (ok), 4, "00"));
  g_autofree char *kinds = g_strdup_printf ("{\"status\": [\"accepted\"], \"round\": {}, "
                                            "\"sha256\": {\"v\": \"%s\"}}", sha);
  g_assert_false (hz_egress_reply_confirms_upload (kinds, strlen (kinds), 4, sha));
  g_autofree char *refused = g_strdup_printf ("{\"status\": \"refused\", \"round\": 4, "
                                              "\"sha256\": \"%s\"}", sha);
  g_assert_false (hz_egress_reply_confirms_upload (refused, strlen (refused), 4, sha));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/egress/client/endpoints", test_endpoints);
  g_test_add_func ("/egress/client/round-replies", test_round_replies);
  g_test_add_func ("/egress/client/server-down", test_server_down);
  g_test_add_func ("/egress/client/hanging", test_hanging);
  g_test_add_func ("/egress/client/close-mid-upload", test_close_mid_upload);
  g_test_add_func ("/egress/client/garbage", test_garbage);
  g_test_add_func ("/egress/client/flaky-then-ok", test_flaky_then_ok);
  g_test_add_func ("/egress/client/fetch-validation", test_fetch_validation);
  g_test_add_func ("/egress/client/async-never-blocks", test_async_never_blocks);
  return g_test_run ();
}
