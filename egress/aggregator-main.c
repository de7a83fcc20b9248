/* egress/aggregator-main.c — the hanzo-aggregator command (see aggregator.h and
 * egress/README.md). */
#include <glib-unix.h>
#include <stdio.h>
#include <string.h>
#include <locale.h>
#include <math.h>
#include "aggregator.h"
#include "dp.h"

static gboolean
on_signal (gpointer loop)
{
  g_main_loop_quit (loop);
  return G_SOURCE_REMOVE;
}

/* Read one token from stdin and print its sha256 (for the clients file). */
static int
hash_token (void)
{
  char buf[4096];
  if (!fgets (buf, sizeof buf, stdin))
    return 1;
  g_strchomp (buf);
  g_autofree char *sha = g_compute_checksum_for_string (G_CHECKSUM_SHA256, buf, -1);
  printf ("%s\n", sha);
  return 0;
}

/* Parse "L,H,KV,F,R" (decimal, nothing else) into v[5], each in 1..max[i]. */
static gboolean
parse_llama_shape (const char *text, guint v[5])
{
  static const guint64 max[5] = { 1024, 1u << 20, 1u << 20, 1u << 22, 4096 };
  g_auto (GStrv) parts = g_strsplit (text, ",", -1);
  if (g_strv_length (parts) != 5)
    return FALSE;
  for (guint i = 0; i < 5; i++)
    {
      guint64 x;
      if (!g_ascii_string_to_unsigned (parts[i], 10, 1, max[i], &x, NULL))
        return FALSE;
      v[i] = (guint) x;
    }
  return TRUE;
}

int
main (int argc, char **argv)
{
  setlocale (LC_ALL, "");
  g_autofree char *address = g_strdup ("127.0.0.1"), *config = NULL, *llama = NULL;
  g_autofree char *clients = NULL, *rule = g_strdup ("trimmed-mean"), *spool_dir = NULL;
  g_autofree char *cert = NULL, *key = NULL;
  int port = 0, min_clients = 2, krum_f = 1, krum_m = 1, first_round = 1;
  double beta = 0.2, round_s = 60, max_norm = 0, release_clip = 0, release_noise = 0;
  double io_timeout_s = 30;
  gboolean hash = FALSE;
  const GOptionEntry entries[] = {
    { "listen", 0, 0, G_OPTION_ARG_STRING, &address, "Address to listen on (127.0.0.1)", "ADDR" },
    { "port", 'p', 0, G_OPTION_ARG_INT, &port, "Port (0 = any free one, printed)", "N" },
    { "config", 'c', 0, G_OPTION_ARG_FILENAME, &config, "Adapter config JSON (lora-delta.h)", "FILE" },
    { "llama", 0, 0, G_OPTION_ARG_STRING, &llama, "Adapter config of a Llama shape instead: LAYERS,HIDDEN,KV,FFN,RANK", "L,H,KV,F,R" },
    { "clients", 0, 0, G_OPTION_ARG_FILENAME, &clients, "Clients file: 'id token-sha256' lines", "FILE" },
    { "min-clients", 0, 0, G_OPTION_ARG_INT, &min_clients, "Minimum updates per round (2)", "N" },
    { "round-seconds", 0, 0, G_OPTION_ARG_DOUBLE, &round_s, "Round deadline in seconds (60)", "S" },
    { "io-timeout", 0, 0, G_OPTION_ARG_DOUBLE, &io_timeout_s, "Seconds a client may take to send request headers or stall a body (30)", "S" },
    { "rule", 0, 0, G_OPTION_ARG_STRING, &rule, "trimmed-mean or multi-krum", "RULE" },
    { "beta", 0, 0, G_OPTION_ARG_DOUBLE, &beta, "Trimmed-mean beta (0.2)", "B" },
    { "krum-f", 0, 0, G_OPTION_ARG_INT, &krum_f, "Multi-Krum f (1)", "F" },
    { "krum-m", 0, 0, G_OPTION_ARG_INT, &krum_m, "Multi-Krum m (1)", "M" },
    { "max-norm", 0, 0, G_OPTION_ARG_DOUBLE, &max_norm, "L2 bound of an update (1000, or from --release-clip/--release-noise)", "X" },
    { "release-clip", 0, 0, G_OPTION_ARG_DOUBLE, &release_clip, "Clients' release clip norm C: derive --max-norm", "C" },
    { "release-noise", 0, 0, G_OPTION_ARG_DOUBLE, &release_noise, "Clients' release noise multiplier z: derive --max-norm", "Z" },
    { "spool", 0, 0, G_OPTION_ARG_FILENAME, &spool_dir, "Directory for uploads (default: memory)", "DIR" },
    { "first-round", 0, 0, G_OPTION_ARG_INT, &first_round, "Id of the first round (1)", "N" },
    { "tls-cert", 0, 0, G_OPTION_ARG_FILENAME, &cert, "PEM certificate: serve HTTPS", "FILE" },
    { "tls-key", 0, 0, G_OPTION_ARG_FILENAME, &key, "PEM private key", "FILE" },
    { "hash-token", 0, 0, G_OPTION_ARG_NONE, &hash, "Print the sha256 of a token read from stdin", NULL },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- Hanzo federation aggregator");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      g_printerr ("hanzo-aggregator: %s\n", error->message);
      return 2;
    }
  if (hash)
    return hash_token ();

  g_autoptr (HzDeltaConfig) cfg = NULL;
  if (config)
    {
      g_autofree char *json = NULL;
      if (g_file_get_contents (config, &json, NULL, &error))
        cfg = hz_delta_config_new_from_json (json, &error);
    }
  else if (llama)
    {
      guint v[5];
      if (!parse_llama_shape (llama, v))
        {
          g_printerr ("hanzo-aggregator: --llama needs LAYERS,HIDDEN,KV,FFN,RANK: five whole "
                      "numbers >= 1 (at most 1024 layers, rank 4096), not '%s'\n", llama);
          return 2;
        }
      cfg = hz_delta_config_new_llama (v[0], v[1], v[2], v[3], v[4], 2.0 * v[4]);
    }
  if (port < 0 || port > 65535)
    {
      g_printerr ("hanzo-aggregator: --port must be 0..65535 (0: any free port), not %d\n", port);
      return 2;
    }
  if (!cfg)
    {
      g_printerr ("hanzo-aggregator: need --config FILE or --llama L,H,KV,F,R%s%s\n",
                  error ? ": " : "", error ? error->message : "");
      return 2;
    }
  HzAggregatorOptions o = HZ_AGGREGATOR_OPTIONS_DEFAULT;
  o.rule = strcmp (rule, "multi-krum") == 0 ? HZ_AGG_RULE_MULTI_KRUM : HZ_AGG_RULE_TRIMMED_MEAN;
  if (strcmp (rule, "multi-krum") != 0 && strcmp (rule, "trimmed-mean") != 0)
    {
      g_printerr ("hanzo-aggregator: unknown rule '%s'\n", rule);
      return 2;
    }
  o.beta = beta;
  o.krum_f = (guint) MAX (krum_f, 0);
  o.krum_m = (guint) MAX (krum_m, 0);
  o.min_clients = (guint) MAX (min_clients, 0);
  o.round_duration_us = (gint64) (round_s * G_USEC_PER_SEC);
  if (!(io_timeout_s >= 0.001 && io_timeout_s <= 86400))
    {
      g_printerr ("hanzo-aggregator: --io-timeout must be 0.001..86400 seconds, not %g\n",
                  io_timeout_s);
      return 2;
    }
  o.io_timeout_us = (gint64) (io_timeout_s * G_USEC_PER_SEC);
  if (release_clip != 0 || release_noise != 0)
    {
      /* the largest norm an honest DP release of this config can have (dp.h) */
      double bound = hz_dp_release_norm_bound (hz_delta_config_n_elements (cfg), release_clip,
                                               release_noise);
      if (!isfinite (bound))
        {
          g_printerr ("hanzo-aggregator: --release-clip and --release-noise must both be "
                      "finite and > 0\n");
          return 2;
        }
      if (max_norm == 0)
        max_norm = bound;
      else if (max_norm < bound)
        g_printerr ("hanzo-aggregator: warning: --max-norm %g is below the norm an honest "
                    "release can have (%g): honest clients will be refused\n", max_norm, bound);
      g_print ("hanzo-aggregator: honest releases (C %g, z %g, %zu values) have L2 norm <= %g;"
               " max norm %g\n", release_clip, release_noise, hz_delta_config_n_elements (cfg),
               bound, max_norm);
    }
  o.max_norm = max_norm == 0 ? 1e3 : max_norm;
  o.spool_dir = spool_dir;
  o.first_round = (guint64) MAX (first_round, 0);
  g_autoptr (HzAggregator) agg = hz_aggregator_new (cfg, &o, &error);
  if (!agg || (clients && !hz_aggregator_load_clients (agg, clients, &error)))
    {
      g_printerr ("hanzo-aggregator: %s\n", error->message);
      /* a spool directory that cannot be created is a runtime error, not a usage one */
      return g_error_matches (error, HZ_AGGREGATOR_ERROR, HZ_AGGREGATOR_ERROR_IO) && !agg ? 1 : 2;
    }
  g_autoptr (GTlsCertificate) tls = NULL;
  if (cert && !(tls = g_tls_certificate_new_from_files (cert, key ? key : cert, &error)))
    {
      g_printerr ("hanzo-aggregator: %s\n", error->message);
      return 2;
    }
  if (!hz_aggregator_listen (agg, address, (guint) port, tls, &error))
    {
      g_printerr ("hanzo-aggregator: %s\n", error->message);
      return 1;
    }
  printf ("listening on %s://%s:%u (adapter config %s)\n", tls ? "https" : "http", address,
          hz_aggregator_get_port (agg), hz_delta_config_hash (cfg));
  fflush (stdout);
  g_autoptr (GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  g_unix_signal_add (SIGINT, on_signal, loop);
  g_unix_signal_add (SIGTERM, on_signal, loop);
  g_main_loop_run (loop);
  return 0;
}
