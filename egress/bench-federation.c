/* egress/bench-federation.c — federation benchmark (run by tools/bench-federation.sh):
 *  1. one client: DP release (clip + exact discrete-Gaussian noise + bf16 + ledger) of a
 *     rank-R all-projection LoRA delta of a Llama-shaped model, upload over loopback HTTP
 *     to an in-process hanzo-aggregator, download and validation of the aggregate;
 *  2. aggregator throughput: N clients upload distinct bf16 updates (validated on arrival,
 *     spooled to disk), then one trimmed-mean aggregation; clients per second.
 * Prints a table. Defaults: TinyLlama 1.1B shapes (22 layers, hidden 2048, kv 256,
 * ffn 5632), rank 16, 100 clients. */
#include <glib/gstdio.h>
#include <libsoup/soup.h>
#include <stdio.h>
#include "aggregator.h"
#include "egress.h"

#define BASE "1111111111111111111111111111111111111111111111111111111111111111"

typedef struct {
  HzDeltaConfig        *cfg;
  HzAggregatorOptions  opts;
  int                  n_clients;
  HzAggregator        *agg;
  guint                port;
  GMainLoop           *loop;
  GMutex               m;
  GCond                c;
} Server;

static gpointer
server_thread (gpointer p)
{
  Server *s = p;
  GMainContext *ctx = g_main_context_new ();
  g_main_context_push_thread_default (ctx);
  s->loop = g_main_loop_new (ctx, FALSE);
  g_autoptr (GError) error = NULL;
  s->agg = hz_aggregator_new (s->cfg, &s->opts, &error);
  g_assert_no_error (error);
  for (int i = 0; i < s->n_clients; i++)
    {
      g_autofree char *id = g_strdup_printf ("c%d", i);
      g_autofree char *tok = g_strdup_printf ("bench-token-%d", i);
      g_autofree char *sha = g_compute_checksum_for_string (G_CHECKSUM_SHA256, tok, -1);
      hz_aggregator_add_client (s->agg, id, sha, NULL);
    }
  g_assert_true (hz_aggregator_listen (s->agg, "127.0.0.1", 0, NULL, &error));
  g_mutex_lock (&s->m);
  s->port = hz_aggregator_get_port (s->agg);
  g_cond_signal (&s->c);
  g_mutex_unlock (&s->m);
  g_main_loop_run (s->loop);
  hz_aggregator_free (s->agg);
  g_main_loop_unref (s->loop);
  g_main_context_pop_thread_default (ctx);
  g_main_context_unref (ctx);
  return NULL;
}

static GThread *
server_start (Server *s)
{
  g_mutex_init (&s->m);
  g_cond_init (&s->c);
  GThread *t = g_thread_new ("aggregator", server_thread, s);
  g_mutex_lock (&s->m);
  while (!s->port)
    g_cond_wait (&s->c, &s->m);
  g_mutex_unlock (&s->m);
  return t;
}

static gboolean
quit_cb (gpointer loop)
{
  g_main_loop_quit (loop);
  return G_SOURCE_REMOVE;
}

static void
server_stop (Server *s, GThread *t)
{
  g_main_context_invoke (g_main_loop_get_context (s->loop), quit_cb, s->loop);
  g_thread_join (t);
}

static void
wait_aggregated (Server *s, guint64 n)
{
  HzAggregatorStats st;
  for (;;)
    {
      hz_aggregator_get_stats (s->agg, &st);
      if (st.rounds_aggregated >= n)
        return;
      g_usleep (2000);
    }
}

static double
now_s (void)
{
  return g_get_monotonic_time () / 1e6;
}

static void
row (const char *what, const char *value)
{
  printf ("| %-58s | %24s |\n", what, value);
}

int
main (int argc, char **argv)
{
  int layers = 22, hidden = 2048, kv = 256, ffn = 5632, rank = 16, clients = 100;
  g_autofree char *spool_parent = NULL;
  const GOptionEntry entries[] = {
    { "layers", 0, 0, G_OPTION_ARG_INT, &layers, "Layers (22)", "N" },
    { "hidden", 0, 0, G_OPTION_ARG_INT, &hidden, "Hidden size (2048)", "N" },
    { "kv", 0, 0, G_OPTION_ARG_INT, &kv, "KV dim (256)", "N" },
    { "ffn", 0, 0, G_OPTION_ARG_INT, &ffn, "FFN size (5632)", "N" },
    { "rank", 0, 0, G_OPTION_ARG_INT, &rank, "LoRA rank (16)", "N" },
    { "clients", 0, 0, G_OPTION_ARG_INT, &clients, "Clients for the throughput run (100)", "N" },
    { "spool", 0, 0, G_OPTION_ARG_FILENAME, &spool_parent, "Where to spool uploads (TMPDIR)", "DIR" },
    { NULL },
  };
  g_autoptr (GOptionContext) octx = g_option_context_new ("- federation benchmark");
  g_option_context_add_main_entries (octx, entries, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (octx, &argc, &argv, &error) || clients < 2)
    {
      g_printerr ("bench-federation: %s\n", error ? error->message : "need >= 2 clients");
      return 2;
    }
  g_log_set_handler (NULL, G_LOG_LEVEL_MESSAGE, g_log_default_handler, NULL);
  g_autoptr (HzDeltaConfig) cfg = hz_delta_config_new_llama (layers, hidden, kv, ffn, rank, 2.0 * rank);
  const gsize n = hz_delta_config_n_elements (cfg);
  g_autofree char *tmp = g_dir_make_tmp ("hz-bench-XXXXXX", &error);
  g_assert_no_error (error);
  char buf[64];

  printf ("\nFederation benchmark: rank-%d all-projection LoRA delta of a %d-layer model "
          "(hidden %d, kv %d, ffn %d)\n\n", rank, layers, hidden, kv, ffn);
  printf ("| %-58s | %24s |\n|%s|%s|\n", "measure", "value",
          "------------------------------------------------------------", "--------------------------");
  g_snprintf (buf, sizeof buf, "%zu (%u tensors)", n, hz_delta_config_n_tensors (cfg));
  row ("parameters in the delta", buf);

  /* ---- 1. one client end to end */
  g_autofree char *db = g_build_filename (tmp, "client.db", NULL);
  g_autoptr (HzStore) store = hz_store_open (db, &error);
  g_assert_no_error (error);
  g_autoptr (HzLoraDelta) delta = hz_lora_delta_new (cfg, BASE);
  GRand *rng = g_rand_new_with_seed (7);
  for (gsize k = 0; k < n; k++)
    hz_lora_delta_data (delta)[k] = (float) g_rand_double_range (rng, -1e-3, 1e-3);
  double t0 = now_s ();
  g_autoptr (HzDpRelease) rel = hz_dp_release (delta, 1.0, 1.0, 1, store, NULL, &error);
  double t_release = now_s () - t0;
  g_assert_no_error (error);
  g_snprintf (buf, sizeof buf, "%.2f s (%.0f ns/param)", t_release, t_release * 1e9 / n);
  row ("DP release: clip + discrete-Gaussian noise + bf16 + ledger", buf);
  g_snprintf (buf, sizeof buf, "%.3f at delta 1e-6", hz_dp_release_get_epsilon (rel));
  row ("epsilon of the release (C=1, z=1)", buf);
  gsize up_bytes = g_bytes_get_size (hz_dp_release_get_payload (rel));
  g_snprintf (buf, sizeof buf, "%.2f MB", up_bytes / 1e6);
  row ("upload size (bf16 safetensors)", buf);

  Server one = { .cfg = cfg, .n_clients = 1 };
  one.opts = HZ_AGGREGATOR_OPTIONS_DEFAULT;
  one.opts.min_clients = 1;
  one.opts.beta = 0;
  one.opts.max_norm = 1e4;
  GThread *th = server_start (&one);
  g_autofree char *url = g_strdup_printf ("http://127.0.0.1:%u", one.port);
  g_autoptr (HzEgress) eg = hz_egress_new (url, "bench-token-0", store, cfg, &error);
  g_assert_no_error (error);
  t0 = now_s ();
  g_assert_true (hz_egress_upload_release (eg, rel, NULL, &error));
  double t_up = now_s () - t0;
  g_assert_no_error (error);
  g_snprintf (buf, sizeof buf, "%.3f s (%.0f MB/s)", t_up, up_bytes / 1e6 / t_up);
  row ("upload time, loopback HTTP (incl. server validation)", buf);
  wait_aggregated (&one, 1);
  t0 = now_s ();
  g_autoptr (HzLoraDelta) agg = hz_egress_fetch_aggregate (eg, 1, NULL, &error);
  double t_down = now_s () - t0;
  g_assert_no_error (error);
  g_snprintf (buf, sizeof buf, "%.2f MB", (2.0 * n) / 1e6);
  row ("download size (aggregate, bf16)", buf);
  g_snprintf (buf, sizeof buf, "%.3f s", t_down);
  row ("download + validation time", buf);
  server_stop (&one, th);

  /* ---- 2. aggregator throughput */
  Server many = { .cfg = cfg, .n_clients = clients };
  many.opts = HZ_AGGREGATOR_OPTIONS_DEFAULT;
  many.opts.min_clients = (guint) clients;
  many.opts.beta = 0.1;
  many.opts.max_norm = 1e4;
  many.opts.round_duration_us = G_GINT64_CONSTANT (3600) * G_USEC_PER_SEC;
  g_autofree char *spool = g_build_filename (spool_parent ? spool_parent : tmp, "spool", NULL);
  many.opts.spool_dir = spool;
  th = server_start (&many);
  g_autoptr (SoupSession) session = soup_session_new_with_options ("timeout", 120, NULL);
  g_autoptr (HzLoraDelta) u = hz_lora_delta_new (cfg, BASE);
  double t_gen = 0, t_send = 0;
  for (int c = 0; c < clients; c++)
    {
      double g0 = now_s ();
      float *x = hz_lora_delta_data (u);
      for (gsize k = 0; k < n; k += 97)  /* cheap per-client variation (distinct payloads) */
        x[k] = (float) g_rand_double_range (rng, -1e-2, 1e-2);
      g_autoptr (GBytes) body = hz_lora_delta_to_wire (u, 1, 1.0);
      double s0 = now_s ();
      t_gen += s0 - g0;
      g_autofree char *put = g_strdup_printf ("http://127.0.0.1:%u/v1/rounds/1/update", many.port);
      g_autofree char *auth = g_strdup_printf ("Bearer bench-token-%d", c);
      g_autoptr (SoupMessage) msg = soup_message_new ("PUT", put);
      soup_message_headers_replace (soup_message_get_request_headers (msg), "Authorization", auth);
      soup_message_set_request_body_from_bytes (msg, "application/octet-stream", body);
      g_autoptr (GBytes) reply = soup_session_send_and_read (session, msg, NULL, &error);
      g_assert_no_error (error);
      if (soup_message_get_status (msg) != 200)
        {
          g_printerr ("upload %d: HTTP %u %.*s\n", c, soup_message_get_status (msg),
                      (int) g_bytes_get_size (reply), (const char *) g_bytes_get_data (reply, NULL));
          return 1;
        }
      t_send += now_s () - s0;
    }
  double a0 = now_s ();
  wait_aggregated (&many, 1);   /* the last upload closed the round (all clients in) */
  double t_agg = now_s () - a0;
  HzAggregatorStats st;
  hz_aggregator_get_stats (many.agg, &st);
  server_stop (&many, th);
  g_snprintf (buf, sizeof buf, "%d", clients);
  row ("throughput run: clients (distinct bf16 updates)", buf);
  g_snprintf (buf, sizeof buf, "%.2f s (%.1f clients/s)", t_send, clients / t_send);
  row ("  uploads received + validated + spooled", buf);
  g_snprintf (buf, sizeof buf, "%.2f s (%.1f clients/s)", st.last_aggregate_s,
              clients / st.last_aggregate_s);
  row ("  trimmed mean (beta 0.1) over all clients", buf);
  g_snprintf (buf, sizeof buf, "%.1f clients/s", clients / (t_send + st.last_aggregate_s));
  row ("  aggregator throughput (receive + aggregate)", buf);
  g_snprintf (buf, sizeof buf, "%.2f s", t_gen);
  row ("  (client-side payload generation, not counted)", buf);
  (void) t_agg;
  printf ("\n");
  g_rand_free (rng);
  /* clean up: the aggregator already removed the round's spooled uploads */
  g_clear_pointer (&eg, hz_egress_free);
  g_clear_pointer (&store, hz_store_close);
  const char *suffixes[] = { "", "-wal", "-shm" };
  for (guint i = 0; i < G_N_ELEMENTS (suffixes); i++)
    {
      g_autofree char *p = g_strconcat (db, suffixes[i], NULL);
      g_unlink (p);
    }
  g_rmdir (spool);
  g_rmdir (tmp);
  return 0;
}
