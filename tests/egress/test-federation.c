/* A federation round over loopback HTTP: 10 clients, 2 of them Byzantine (huge norms, NaN,
 * wrong shapes, wrong dtype, replays, bad tokens, oversize and garbage bodies). Bad uploads
 * get clear HTTP statuses, the server keeps running, and the aggregate is the trimmed mean
 * of what was accepted and stays inside the honest clients' range (issue 8). */
#include <glib/gstdio.h>
#include <libsoup/soup.h>
#include <math.h>
#include "aggregate.h"
#include "aggregator.h"
#include "egress.h"
#include "egress-test-util.h"
#include "quant.h"

#define N_CLIENTS 10
#define N_HONEST 8
#define MAX_NORM 25.0

typedef struct {
  HzDeltaConfig *cfg;
  HzAggregator *agg;
  char         *spool;
  HzAggregatorOptions opts;
} Server;

static guint
server_setup (gpointer p)
{
  Server *s = p;
  g_autoptr (GError) error = NULL;
  s->agg = hz_aggregator_new (s->cfg, &s->opts, &error);
  g_assert_no_error (error);
  return hzt_aggregator_start (s->agg, "client", N_CLIENTS);
}

static gboolean
server_close_round (gpointer p)
{
  g_assert_true (hz_aggregator_close_round (((Server *) p)->agg));
  return G_SOURCE_REMOVE;
}

static gboolean
server_teardown (gpointer p)
{
  hz_aggregator_free (((Server *) p)->agg);
  return G_SOURCE_REMOVE;
}

/* A raw request with client i's token (-1 = none); returns the HTTP status, *reply the body. */
static guint
raw_request (guint port, int client, const char *method, const char *path, GBytes *body,
             char **reply)
{
  g_autoptr (SoupSession) session = soup_session_new_with_options ("timeout", 5, NULL);
  g_autofree char *url = g_strdup_printf ("http://127.0.0.1:%u%s", port, path);
  g_autoptr (SoupMessage) msg = soup_message_new (method, url);
  if (client >= 0)
    {
      g_autofree char *auth = g_strdup_printf ("Bearer token-%d", client);
      soup_message_headers_replace (soup_message_get_request_headers (msg), "Authorization", auth);
    }
  if (body)
    soup_message_set_request_body_from_bytes (msg, "application/octet-stream", body);
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) out = soup_session_send_and_read (session, msg, NULL, &error);
  g_assert_no_error (error);
  if (reply)
    *reply = g_strndup (g_bytes_get_data (out, NULL), g_bytes_get_size (out));
  return soup_message_get_status (msg);
}

static void
expect_status (guint port, int client, const char *method, const char *path, GBytes *body,
               guint want, const char *what)
{
  g_autofree char *reply = NULL;
  guint got = raw_request (port, client, method, path, body, &reply);
  g_test_message ("%-28s -> HTTP %u %s", what, got, g_strstrip (reply));
  g_assert_cmpuint (got, ==, want);
}

/* A wire file with values v (or one NaN) for round r. */
static GBytes *
byzantine_payload (HzDeltaConfig *cfg, float v, gboolean nan, guint64 round)
{
  g_autoptr (HzLoraDelta) d = hz_lora_delta_new (cfg, HZT_BASE);
  for (gsize k = 0; k < hz_delta_config_n_elements (cfg); k++)
    hz_lora_delta_data (d)[k] = v;
  if (nan)
    hz_lora_delta_data (d)[7] = NAN;
  return hz_lora_delta_to_wire (d, round, 0.5);
}

/* Same metadata (config hash) but one tensor with another shape, or dtype F32. */
static GBytes *
malformed_payload (HzDeltaConfig *cfg, gboolean wrong_dtype)
{
  g_autoptr (HzSafetensorsWriter) w = hz_safetensors_writer_new ();
  g_autofree float *zeros = g_new0 (float, 64);
  for (guint i = 0; i < hz_delta_config_n_tensors (cfg); i++)
    {
      const int64_t *shape = hz_delta_config_tensor_shape (cfg, i);
      int64_t swapped[2] = { shape[1], shape[0] };
      gboolean bad = i == 1;
      HzStDtype dt = bad && wrong_dtype ? HZ_ST_F32 : HZ_ST_BF16;
      gsize bytes = hz_delta_config_tensor_n_elements (cfg, i) * hz_st_dtype_size (dt);
      g_assert_true (hz_safetensors_writer_add (w, hz_delta_config_tensor_name (cfg, i), dt, 2,
                                                bad && !wrong_dtype ? swapped : shape, zeros,
                                                bytes, NULL));
    }
  hz_safetensors_writer_set_metadata (w, "hanzo.adapter_config_sha256", hz_delta_config_hash (cfg));
  hz_safetensors_writer_set_metadata (w, "hanzo.base_model_sha256", HZT_BASE);
  hz_safetensors_writer_set_metadata (w, "hanzo.round_id", "1");
  hz_safetensors_writer_set_metadata (w, "hanzo.client_epsilon", "1");
  return hz_safetensors_writer_to_bytes (w);
}

static void
wait_rounds (Server *s, guint64 n)
{
  HzAggregatorStats st;
  gint64 end = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  do
    {
      hz_aggregator_get_stats (s->agg, &st);
      if (st.rounds_aggregated >= n)
        return;
      g_usleep (10000);
    }
  while (g_get_monotonic_time () < end);
  g_assert_cmpuint (st.rounds_aggregated, >=, n);
}

static void
test_byzantine_round (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (HzDeltaConfig) cfg = hzt_config ();
  const gsize n = hz_delta_config_n_elements (cfg);
  Server srv = { .cfg = cfg };
  srv.spool = g_dir_make_tmp ("hz-agg-spool-XXXXXX", &error);
  srv.opts = HZ_AGGREGATOR_OPTIONS_DEFAULT;
  srv.opts.beta = 0.2;
  srv.opts.min_clients = N_HONEST;
  srv.opts.max_norm = MAX_NORM;
  srv.opts.spool_dir = srv.spool;
  HztServer *hs = hzt_server_start (server_setup, &srv);
  const guint port = hs->port;
  g_autofree char *url = hzt_url (port);

  /* honest clients: their own store, DP release, upload through HzEgress */
  HzStore *stores[N_HONEST];
  HzDpRelease *releases[N_HONEST];
  HzEgress *clients[N_HONEST];
  for (int i = 0; i < N_HONEST; i++)
    {
      stores[i] = hzt_tmp_store ();
      g_autoptr (HzLoraDelta) d = hz_lora_delta_new (cfg, HZT_BASE);
      for (gsize k = 0; k < n; k++)
        hz_lora_delta_data (d)[k] = 0.05f * sinf ((float) k) + 0.002f * (float) i;
      releases[i] = hz_dp_release (d, 1.0, 1.0, 1, stores[i], NULL, &error);
      g_assert_no_error (error);
      g_autofree char *tok = g_strdup_printf ("token-%d", i);
      clients[i] = hz_egress_new (url, tok, stores[i], cfg, &error);
      g_assert_no_error (error);
      guint64 round = 0;
      g_assert_true (hz_egress_get_round (clients[i], &round, NULL, &error));
      g_assert_cmpuint (round, ==, 1);
      g_assert_true (hz_egress_upload_release (clients[i], releases[i], NULL, &error));
      g_assert_no_error (error);
    }
  /* an idempotent repeat is answered "duplicate" and not counted twice */
  g_assert_true (hz_egress_upload_release (clients[0], releases[0], NULL, &error));

  /* Byzantine client 8 */
  g_autoptr (GBytes) huge = byzantine_payload (cfg, 100.0f, FALSE, 1);
  expect_status (port, 8, "PUT", "/v1/rounds/1/update", huge, 422, "huge norm");
  g_autoptr (GBytes) nan = byzantine_payload (cfg, 0.01f, TRUE, 1);
  expect_status (port, 8, "PUT", "/v1/rounds/1/update", nan, 422, "NaN");
  g_autoptr (GBytes) shape = malformed_payload (cfg, FALSE);
  expect_status (port, 8, "PUT", "/v1/rounds/1/update", shape, 422, "wrong shape");
  g_autoptr (GBytes) f32 = malformed_payload (cfg, TRUE);
  expect_status (port, 8, "PUT", "/v1/rounds/1/update", f32, 422, "F32 dtype");
  g_autoptr (GBytes) wrong_round = byzantine_payload (cfg, 0.01f, FALSE, 7);
  expect_status (port, 8, "PUT", "/v1/rounds/1/update", wrong_round, 400, "metadata round 7");
  expect_status (port, 8, "PUT", "/v1/rounds/7/update", wrong_round, 409, "future round");
  /* a stealthy attack inside the norm bound: every coordinate at the bound / sqrt(n) */
  const float evil = (float) (0.99 * MAX_NORM / sqrt ((double) n));
  g_autoptr (GBytes) stealth = byzantine_payload (cfg, evil, FALSE, 1);
  expect_status (port, 8, "PUT", "/v1/rounds/1/update", stealth, 200, "stealthy (accepted)");
  g_autoptr (GBytes) stealth2 = byzantine_payload (cfg, -evil, FALSE, 1);
  expect_status (port, 8, "PUT", "/v1/rounds/1/update", stealth2, 409, "second update same round");

  /* Byzantine client 9 */
  GBytes *stolen = hz_dp_release_get_payload (releases[3]);
  expect_status (port, 9, "PUT", "/v1/rounds/1/update", stolen, 409, "replayed payload");
  expect_status (port, -1, "PUT", "/v1/rounds/1/update", huge, 401, "no token");
  expect_status (port, 42, "GET", "/v1/rounds/current", NULL, 401, "unknown token");
  g_autoptr (GBytes) junk = g_bytes_new_static ("this is not safetensors", 23);
  expect_status (port, 9, "PUT", "/v1/rounds/1/update", junk, 400, "garbage body");
  g_autoptr (GBytes) big = g_bytes_new_take (g_malloc0 (2 * n + 256 * 8 + 65536 + 1),
                                             2 * n + 256 * 8 + 65536 + 1);
  expect_status (port, 9, "PUT", "/v1/rounds/1/update", big, 413, "oversize body");
  expect_status (port, 9, "GET", "/v1/rounds/1/aggregate", NULL, 425, "aggregate too early");
  expect_status (port, 9, "DELETE", "/v1/rounds/1/update", NULL, 404, "unknown endpoint");

  HzAggregatorStats st;
  hz_aggregator_get_stats (srv.agg, &st);
  g_assert_cmpuint (st.accepted, ==, N_HONEST + 1);
  g_assert_cmpuint (st.duplicates, ==, 1);
  g_assert_cmpuint (st.rejected, ==, 12);   /* 4xx refusals of updates and tokens */

  /* close and aggregate */
  hzt_server_call (hs, server_close_round, &srv);
  wait_rounds (&srv, 1);

  /* replays of the closed round are refused; the server keeps serving */
  expect_status (port, 9, "PUT", "/v1/rounds/1/update", stolen, 409, "replay of old round");
  expect_status (port, 9, "PUT", "/v1/rounds/2/update", hz_dp_release_get_payload (releases[5]),
                 409, "accepted payload, new round");
  g_autoptr (GBytes) old_meta = byzantine_payload (cfg, 0.02f, FALSE, 1);
  expect_status (port, 9, "PUT", "/v1/rounds/2/update", old_meta, 400, "round-1 payload to 2");
  expect_status (port, 9, "GET", "/v1/rounds/9/aggregate", NULL, 404, "unknown aggregate");

  /* what the aggregate must be: trimmed mean (beta 0.2 over 9 -> cut 1) of the accepted */
  const float **ups = g_new (const float *, N_HONEST + 1);
  g_autofree float *evil_vec = g_new (float, n);
  for (gsize k = 0; k < n; k++)
    evil_vec[k] = hz_bf16_to_fp32 (hz_fp32_to_bf16 (evil));
  for (int i = 0; i < N_HONEST; i++)
    ups[i] = hz_lora_delta_const_data (hz_dp_release_get_values (releases[i]));
  ups[N_HONEST] = evil_vec;
  g_autofree float *want = g_new (float, n), *honest_tm = g_new (float, n);
  g_assert_true (hz_agg_trimmed_mean (ups, N_HONEST + 1, n, 0.2, want));
  g_assert_true (hz_agg_trimmed_mean (ups, N_HONEST, n, 0.2, honest_tm));

  for (int i = 0; i < N_HONEST; i++)
    {
      g_autoptr (HzLoraDelta) got = hz_egress_fetch_aggregate (clients[i], 1, NULL, &error);
      g_assert_no_error (error);
      const float *a = hz_lora_delta_const_data (got);
      double dist = 0, honest_spread = 0;
      for (gsize k = 0; k < n; k++)
        {
          g_assert_cmpfloat (fabsf (a[k] - want[k]), <=, fabsf (want[k]) / 128 + 1e-6);
          float lo = INFINITY, hi = -INFINITY;
          for (int c = 0; c < N_HONEST; c++)
            {
              lo = fminf (lo, ups[c][k]);
              hi = fmaxf (hi, ups[c][k]);
            }
          /* robustness: every coordinate stays inside the honest clients' range */
          g_assert_cmpfloat (a[k], >=, lo - fabsf (lo) / 128);
          g_assert_cmpfloat (a[k], <=, hi + fabsf (hi) / 128);
          dist += (a[k] - honest_tm[k]) * (double) (a[k] - honest_tm[k]);
          honest_spread += (hi - lo) * (double) (hi - lo);
        }
      if (i == 0)
        g_test_message ("|aggregate - honest trimmed mean| = %.4f, honest spread %.4f, "
                        "attack norm %.2f", sqrt (dist), sqrt (honest_spread), 0.99 * MAX_NORM);
      g_assert_cmpfloat (sqrt (dist), <, 0.25 * sqrt (honest_spread));
    }

  /* the server is still alive and round 2 is open and works */
  g_autofree char *reply = NULL;
  g_assert_cmpuint (raw_request (port, 0, "GET", "/v1/rounds/current", NULL, &reply), ==, 200);
  g_assert_nonnull (strstr (reply, "\"round\":2"));
  g_autoptr (HzLoraDelta) d2 = hz_lora_delta_new (cfg, HZT_BASE);
  g_autoptr (HzDpRelease) r2 = hz_dp_release (d2, 1.0, 1.0, 2, stores[1], NULL, &error);
  g_assert_no_error (error);
  g_assert_true (hz_egress_upload_release (clients[1], r2, NULL, &error));
  g_assert_no_error (error);

  /* every client's log: uploads ok, each with its ledger row */
  for (int i = 0; i < N_HONEST; i++)
    {
      hzt_assert_uploads_ledgered (stores[i]);
      g_autoptr (GPtrArray) log = hz_store_list_egress_log (stores[i], 0, 0, &error);
      guint uploads = 0;
      for (guint r = 0; r < log->len; r++)
        {
          const HzEgressLogEntry *e = log->pdata[r];
          g_assert_cmpint (e->status, ==, HZ_EGRESS_STATUS_OK);
          uploads += e->direction == HZ_EGRESS_UPLOAD;
        }
      g_assert_cmpuint (uploads, ==, i == 0 ? 2 : i == 1 ? 2 : 1);
    }

  hzt_server_stop (hs, server_teardown, &srv);
  for (int i = 0; i < N_HONEST; i++)
    {
      hz_egress_free (clients[i]);
      hz_dp_release_free (releases[i]);
      hz_store_close (stores[i]);
    }
  g_free (ups);
  g_free (srv.spool);
}

/* Multi-Krum picks the honest cluster and ignores an outlier inside the norm bound. */
static void
test_multi_krum_round (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (HzDeltaConfig) cfg = hzt_config ();
  const gsize n = hz_delta_config_n_elements (cfg);
  Server srv = { .cfg = cfg };
  srv.opts = HZ_AGGREGATOR_OPTIONS_DEFAULT;
  srv.opts.rule = HZ_AGG_RULE_MULTI_KRUM;
  srv.opts.krum_f = 1;
  srv.opts.krum_m = 3;
  srv.opts.min_clients = 4;
  srv.opts.max_norm = MAX_NORM;
  HztServer *hs = hzt_server_start (server_setup, &srv);
  for (int i = 0; i < 4; i++)
    {
      g_autoptr (GBytes) p = byzantine_payload (cfg, i == 3 ? 1.5f : 0.1f + 0.01f * i, FALSE, 1);
      expect_status (hs->port, i, "PUT", "/v1/rounds/1/update", p, 200, "multi-krum upload");
    }
  hzt_server_call (hs, server_close_round, &srv);
  wait_rounds (&srv, 1);
  g_autofree char *url = hzt_url (hs->port);
  g_autoptr (HzStore) store = hzt_tmp_store ();
  g_autoptr (HzEgress) e = hz_egress_new (url, "token-0", store, cfg, &error);
  g_autoptr (HzLoraDelta) got = hz_egress_fetch_aggregate (e, 1, NULL, &error);
  g_assert_no_error (error);
  float want = (hz_bf16_to_fp32 (hz_fp32_to_bf16 (0.1f)) + hz_bf16_to_fp32 (hz_fp32_to_bf16 (0.11f)) +
                hz_bf16_to_fp32 (hz_fp32_to_bf16 (0.12f))) / 3;
  for (gsize k = 0; k < n; k++)
    g_assert_cmpfloat (fabsf (hz_lora_delta_const_data (got)[k] - want), <=, want / 128);
  hzt_server_stop (hs, server_teardown, &srv);
}

/* The spool directory is checked when the server is made (hanzo-aggregator --spool): a
 * missing one is created 0700 with its parents; one that cannot be a directory is refused
 * with an I/O error naming it, before anything listens. */
static void
test_spool_dir (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (HzDeltaConfig) cfg = hzt_config ();
  g_autofree char *base = g_dir_make_tmp ("hz-agg-spool-XXXXXX", &error);
  g_assert_no_error (error);
  HzAggregatorOptions o = HZ_AGGREGATOR_OPTIONS_DEFAULT;

  g_autofree char *fresh = g_build_filename (base, "new", "spool", NULL);
  o.spool_dir = fresh;
  HzAggregator *agg = hz_aggregator_new (cfg, &o, &error);
  g_assert_no_error (error);
  g_assert_nonnull (agg);
  hz_aggregator_free (agg);
  GStatBuf st;
  g_assert_cmpint (g_stat (fresh, &st), ==, 0);
  g_assert_true (S_ISDIR (st.st_mode));
  g_assert_cmpint (st.st_mode & 0777, ==, 0700);

  g_autofree char *file = g_build_filename (base, "a-file", NULL);
  g_autofree char *under = g_build_filename (file, "spool", NULL);
  g_assert_true (g_file_set_contents (file, "x", 1, NULL));
  const char *bad[] = { file, under, "" };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      o.spool_dir = bad[i];
      g_assert_null (hz_aggregator_new (cfg, &o, &error));
      g_assert_error (error, HZ_AGGREGATOR_ERROR, HZ_AGGREGATOR_ERROR_IO);
      g_assert_nonnull (strstr (error->message, "spool directory"));
      g_assert_nonnull (strstr (error->message, bad[i]));
      g_test_message ("refused: %s", error->message);
      g_clear_error (&error);
    }
  g_unlink (file);
  g_rmdir (fresh);
  g_autofree char *parent = g_path_get_dirname (fresh);
  g_rmdir (parent);
  g_rmdir (base);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/egress/federation/spool-dir", test_spool_dir);
  g_test_add_func ("/egress/federation/byzantine-round", test_byzantine_round);
  g_test_add_func ("/egress/federation/multi-krum-round", test_multi_krum_round);
  return g_test_run ();
}
