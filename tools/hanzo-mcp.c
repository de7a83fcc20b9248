/* tools/hanzo-mcp.c — `hanzo mcp`: a Model Context Protocol server over stdio
 * (mcp/hanzo/mcp.h) for MCP clients on this computer: an editor or another assistant starts
 * it and talks JSON-RPC on its stdin/stdout.
 *
 *   hanzo mcp [-m MODEL] [--store PATH] [--threads N] [--max-message BYTES]
 *
 * Tools: chat (with -m), redact, search_conversations (the app's store, read-only, every
 * text redacted). Protocol messages only on stdout: everything else the process prints
 * (log lines of the engine included) goes to stderr, since fd 1 is pointed at stderr and
 * the protocol written to a duplicate of the original stdout. Serves until stdin ends
 * (exit 0). Exit status: 1 a model that cannot be loaded (as every command), stdout or
 * stdin failed; 2 usage error. Opens no socket: it listens on nothing and sends nothing. */
#include <gio/gunixinputstream.h>
#include <gio/gunixoutputstream.h>
#include <glib.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include "hanzo-cli-util.h"
#include "hanzo-cmd.h"
#include "hanzo/mcp.h"
#include "hanzo-store.h"

static int
usage_error (const char *message)
{
  hz_cli_print_error ("mcp", message);
  fprintf (stderr, "Usage: hanzo mcp [-m MODEL] [--store PATH] [--threads N] "
                   "[--max-message BYTES]\n");
  return 2;
}

int
hz_cmd_mcp (int argc, char **argv)
{
  g_autofree char *model = NULL, *store = NULL;
  int threads = 0;
  gint64 max_message = HZ_MCP_DEFAULT_MAX_MESSAGE;
  const GOptionEntry entries[] = {
    { "model", 'm', 0, G_OPTION_ARG_FILENAME, &model,
      "The model of the chat tool: a GGUF file or Hugging Face folder (without it: no chat "
      "tool)", "MODEL" },
    { "store", 0, 0, G_OPTION_ARG_FILENAME, &store,
      "The conversations searched, opened read-only (default: the app's, "
      "$XDG_DATA_HOME/hanzo/hanzo.db)", "PATH" },
    { "threads", 't', 0, G_OPTION_ARG_INT, &threads, "Compute threads (0: all cores)", "N" },
    { "max-message", 0, 0, G_OPTION_ARG_INT64, &max_message,
      "Largest message in bytes (default 8388608)", "BYTES" },
    { NULL }
  };
  g_autoptr (GOptionContext) octx = g_option_context_new (
    "— serve the local model, the redactor and conversation search to MCP clients over stdio");
  g_option_context_add_main_entries (octx, entries, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (octx, &argc, &argv, &error))
    return usage_error (error->message);
  if (argc != 1)
    return usage_error ("unexpected arguments");
  if (threads < 0 || threads > 1024 || max_message < 1024 || max_message > G_MAXINT32)
    return usage_error ("--threads is 0..1024, --max-message 1024..2147483647");

  /* the protocol on a duplicate of stdout; fd 1 to stderr for anything else */
  fflush (stdout);
  const int proto_fd = dup (STDOUT_FILENO);
  if (proto_fd < 0 || dup2 (STDERR_FILENO, STDOUT_FILENO) < 0)
    {
      perror ("hanzo mcp: stdout");
      return 1;
    }
  signal (SIGPIPE, SIG_IGN);   /* a client that went away: a write error, exit 1 */

  HzMcpOptions o;
  hz_mcp_options_init (&o);
  o.model_path = model;
  o.store_path = store;
  o.n_threads = (guint) threads;
  o.max_message = (gsize) max_message;
  o.version = HZ_VERSION;
  g_autoptr (HzMcpServer) srv = hz_mcp_server_new (&o, &error);
  if (!srv)
    {
      hz_cli_print_load_error ("mcp", model, error);
      return 1;
    }
  g_autofree char *store_path = store ? g_strdup (store) : hz_store_default_path ();
  g_autofree char *store_shown = hz_cli_escape (store_path);
  g_autofree char *model_shown = hz_cli_escape (model);
  fprintf (stderr, "hanzo mcp: Model Context Protocol on stdin/stdout; tools: %sredact, "
                   "search_conversations (%s, read-only)%s%s\n",
           model ? "chat, " : "", store_shown, model ? "; model " : "", model ? model_shown : "");
  g_autoptr (GInputStream) in = g_unix_input_stream_new (STDIN_FILENO, FALSE);
  g_autoptr (GOutputStream) out = g_unix_output_stream_new (proto_fd, TRUE);
  if (!hz_mcp_server_run (srv, in, out, &error))
    {
      hz_cli_print_error ("mcp", error->message);
      return 1;
    }
  return 0;
}
