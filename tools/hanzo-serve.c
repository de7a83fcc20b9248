/* tools/hanzo-serve.c — `hanzo serve`: the engine as a local OpenAI-compatible HTTP server
 * (server/hanzo-server.h) for other programs on this computer.
 *
 *   hanzo serve -m MODEL [-m MODEL2 | -m PATH:ALIAS ...] [--models-dir DIR] [--host 127.0.0.1]
 *               [--port 8080] [--api-key KEY] [--idle-unload S] [--threads N]
 *               [--max-seqs N] [--kv-mib MIB] [--timeout S] [--max-body BYTES]
 *
 * Prints "listening on http://HOST:PORT" on stdout once it accepts connections (with
 * --port 0: the port chosen), then one log line per request and per model load on stderr.
 * Serves until SIGINT or SIGTERM (exit 0). A host that is not a loopback address needs an
 * API key: --api-key, or the one kept in the keyring (hz_server_keyring_key()); it says so
 * at start. Exit status: 0 stopped by a signal, 1 cannot listen, 2 usage error (a missing
 * model file, a non-loopback host without a key). */
#include <glib.h>
#include <glib-unix.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include "hanzo-cli-util.h"
#include "hanzo-cmd.h"
#include "hanzo-server.h"

static void
print_log (const char *line, gpointer user_data)
{
  g_autoptr (GDateTime) now = g_date_time_new_now_local ();
  g_autofree char *t = g_date_time_format (now, "%H:%M:%S");
  g_autofree char *shown = hz_cli_escape (line);   /* model ids and messages are input */
  fprintf (stderr, "%s %s\n", t, shown);
}

static gboolean
on_signal (gpointer user_data)
{
  g_main_loop_quit (user_data);
  return G_SOURCE_CONTINUE;
}

static int
usage_error (const char *message)
{
  hz_cli_print_error ("serve", message);
  fprintf (stderr, "Usage: hanzo serve -m MODEL [-m PATH:ALIAS ...] [--models-dir DIR] "
                   "[--host ADDRESS] [--port N] [--api-key KEY] [--idle-unload S]\n");
  return 2;
}

/* Offer every -m and --models-dir model; the ids in `ids`. */
static gboolean
add_models (HzServer *srv, char **models, const char *dir, GString *ids)
{
  g_autoptr (GError) error = NULL;
  for (guint i = 0; models && models[i]; i++)
    {
      g_autofree char *path = NULL, *id = NULL;
      hz_server_parse_model_arg (models[i], &path, &id);
      if (!hz_server_add_model (srv, id, path, &error))
        {
          usage_error (error->message);
          return FALSE;
        }
      g_string_append_printf (ids, "%s%s", ids->len ? ", " : "", id);
    }
  if (dir)
    {
      const int n = hz_server_add_models_dir (srv, dir, &error);
      if (n < 0)
        {
          usage_error (error->message);
          return FALSE;
        }
      g_string_append_printf (ids, "%s%d from %s", ids->len ? ", " : "", n, dir);
    }
  return TRUE;
}

int
hz_cmd_serve (int argc, char **argv)
{
  g_auto (GStrv) models = NULL;
  g_autofree char *dir = NULL, *host = NULL, *key = NULL;
  int port = 8080, idle = 300, threads = 0, max_seqs = 0, timeout = 30, kv_mib = 0;
  gint64 max_body = 8 << 20;
  const GOptionEntry entries[] = {
    { "model", 'm', 0, G_OPTION_ARG_FILENAME_ARRAY, &models,
      "A GGUF file (or Hugging Face folder) to serve, as its file name without .gguf, or "
      "PATH:ALIAS as ALIAS; repeatable", "MODEL" },
    { "models-dir", 0, 0, G_OPTION_ARG_FILENAME, &dir, "Also serve every .gguf file of DIR",
      "DIR" },
    { "host", 0, 0, G_OPTION_ARG_STRING, &host,
      "Address to listen on (default 127.0.0.1; another than loopback needs an API key)",
      "ADDRESS" },
    { "port", 0, 0, G_OPTION_ARG_INT, &port, "Port (default 8080; 0: any free one)", "N" },
    { "api-key", 0, 0, G_OPTION_ARG_STRING, &key,
      "Require \"Authorization: Bearer KEY\" (default: the keyring's key for a non-loopback "
      "host, none on loopback)", "KEY" },
    { "idle-unload", 0, 0, G_OPTION_ARG_INT, &idle,
      "Unload a model unused for S seconds (default 300; 0: never)", "S" },
    { "threads", 't', 0, G_OPTION_ARG_INT, &threads, "Compute threads per model (0: all cores)",
      "N" },
    { "max-seqs", 0, 0, G_OPTION_ARG_INT, &max_seqs,
      "Sequences one model generates at once (default 64)", "N" },
    { "kv-mib", 0, 0, G_OPTION_ARG_INT, &kv_mib,
      "KV cache memory per model in MiB (default 256, 4096 on a GPU): the longest prompt and "
      "reply one model can hold", "MIB" },
    { "timeout", 0, 0, G_OPTION_ARG_INT, &timeout,
      "Seconds a client may stall sending or taking data (default 30)", "S" },
    { "max-body", 0, 0, G_OPTION_ARG_INT64, &max_body,
      "Largest request body in bytes (default 8388608)", "BYTES" },
    { NULL }
  };
  g_autoptr (GOptionContext) octx = g_option_context_new (
    "— serve models to other programs over an OpenAI-compatible HTTP API");
  g_option_context_add_main_entries (octx, entries, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (octx, &argc, &argv, &error))
    return usage_error (error->message);
  if (argc != 1)
    return usage_error ("unexpected arguments (models are given with -m)");
  if (models == NULL && dir == NULL)
    return usage_error ("need -m MODEL or --models-dir DIR");
  if (key && !*key)   /* the server would take it for no key at all */
    return usage_error ("--api-key is empty: give a key, or leave --api-key out");
  if (port < 0 || port > 65535 || idle < 0 || threads < 0 || threads > 1024 || max_seqs < 0 ||
      timeout < 1 || max_body < 1024 || kv_mib < 0 || kv_mib > 1 << 20)
    return usage_error ("--port is 0..65535, --threads 0..1024, --timeout >= 1, --max-body "
                        ">= 1024, --kv-mib 0..1048576, --idle-unload and --max-seqs >= 0");

  HzServerOptions o;
  hz_server_options_init (&o);
  o.host = host;
  o.port = (guint) port;
  o.idle_unload = (guint) idle;
  o.n_threads = (guint) threads;
  o.max_seqs = (guint) max_seqs;
  o.kv_mib = (guint) kv_mib;
  o.io_timeout = (guint) timeout;
  o.max_body = (gsize) max_body;
  o.log = print_log;
  const char *key_from = "--api-key";
  g_autofree char *stored = NULL;
  if (key == NULL && host)
    {
      /* off loopback only: a key from the keyring */
      g_autoptr (GInetAddress) a = g_inet_address_new_from_string (host);
      g_autoptr (GError) kerr = NULL;
      if (a && !g_inet_address_get_is_loopback (a) && (stored = hz_server_keyring_key (&kerr)))
        key_from = "the keyring";
      else if (kerr)
        fprintf (stderr, "hanzo serve: no key from the keyring: %s\n", kerr->message);
    }
  o.api_key = key ? key : stored;
  g_autoptr (HzServer) srv = hz_server_new (&o, &error);
  if (srv == NULL)
    return usage_error (error->message);
  g_autoptr (GString) ids = g_string_new (NULL);
  if (!add_models (srv, models, dir, ids))
    return 2;
  /* SIGINT / SIGTERM stop the server cleanly from the moment it can be reached */
  g_autoptr (GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  const guint sig_int = g_unix_signal_add (SIGINT, on_signal, loop);
  const guint sig_term = g_unix_signal_add (SIGTERM, on_signal, loop);
  if (!hz_server_listen (srv, &error))
    {
      hz_cli_print_error ("serve", error->message);
      g_source_remove (sig_int);
      g_source_remove (sig_term);
      return 1;
    }
  g_autofree char *shown_host = hz_cli_escape (host ? host : "127.0.0.1");
  const gboolean v6 = strchr (shown_host, ':') != NULL;
  fprintf (stderr, "hanzo serve: models: %s\n", ids->str);
  if (hz_server_is_public (srv))
    fprintf (stderr, "hanzo serve: %s is reachable from other computers: every request needs "
                     "the API key (from %s) as \"Authorization: Bearer KEY\"\n",
             shown_host, key_from);
  else
    fprintf (stderr, "hanzo serve: loopback only (this computer)%s\n",
             o.api_key ? "; every request needs the API key" : "");
  printf ("listening on http://%s%s%s:%u\n", v6 ? "[" : "", shown_host, v6 ? "]" : "",
          hz_server_get_port (srv));
  fflush (stdout);

  g_main_loop_run (loop);
  g_source_remove (sig_int);
  g_source_remove (sig_term);
  fprintf (stderr, "hanzo serve: stopping\n");
  return 0;
}
