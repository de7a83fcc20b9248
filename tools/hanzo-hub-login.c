/* tools/hanzo-hub-login.c — `hanzo hub-login`: keep a Hugging Face access token in the
 * keyring, for gated or private repositories.
 *
 *   hanzo hub-login [--endpoint URL]            reads the token, stores it
 *   hanzo hub-login [--endpoint URL] --logout   removes it
 *
 * The token is read from the terminal without echo (a prompt on stderr), or as the first
 * line of stdin when that is not a terminal (`hanzo hub-login < token.txt`); it is never
 * printed nor given on the command line (where other users' `ps` would see it). It is
 * stored with egress' credentials API (credentials.h: the Secret Service, schema
 * ai.hanzo.Desktop.HubToken) for the endpoint: --endpoint, else $HF_ENDPOINT, else
 * https://huggingface.co. `hanzo pull`, `hanzo search` and the app's Find Models use it
 * when the Hub refuses a request for want of one ($HF_TOKEN, when set, goes first).
 * Nothing is sent over the network. Exit status: 0 ok, 1 keyring error, 2 usage error
 * (no token, a token with spaces, a bad endpoint), 130 interrupted at the prompt.
 */
#include <glib.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#include "hanzo/egress.h"
#include "hanzo-cli-util.h"
#include "hanzo-cmd.h"
#include "hanzo-hub-common.h"

#define MAX_TOKEN 4096

static struct termios saved_tty;
static volatile sig_atomic_t echo_off;

/* Ctrl+C at the prompt: the terminal gets its echo back before the process ends. */
static void
restore_and_exit (int sig)
{
  if (echo_off)
    tcsetattr (STDIN_FILENO, TCSAFLUSH, &saved_tty);
  signal (sig, SIG_DFL);
  raise (sig);
}

/* The token: a line from the terminal without echo, or the first line of stdin. Leading
 * and trailing blanks dropped. NULL with *eof set at end of input. g_free after wiping. */
static char *
read_token (const char *endpoint)
{
  char buf[MAX_TOKEN + 2];
  gboolean tty = isatty (STDIN_FILENO);
  if (tty && tcgetattr (STDIN_FILENO, &saved_tty) == 0)
    {
      struct termios quiet = saved_tty;
      quiet.c_lflag &= ~(tcflag_t) ECHO;
      quiet.c_lflag |= ICANON;
      signal (SIGINT, restore_and_exit);
      signal (SIGTERM, restore_and_exit);
      fprintf (stderr, "Access token for %s (it is not shown): ", endpoint);
      fflush (stderr);
      echo_off = tcsetattr (STDIN_FILENO, TCSAFLUSH, &quiet) == 0;
    }
  char *line = fgets (buf, sizeof buf, stdin);
  if (echo_off)
    {
      tcsetattr (STDIN_FILENO, TCSAFLUSH, &saved_tty);
      echo_off = 0;
      fputc ('\n', stderr);
    }
  char *token = line ? g_strstrip (g_strdup (line)) : NULL;
  explicit_bzero (buf, sizeof buf);
  return token;
}

static void
wipe_free (char *token)
{
  if (token)
    explicit_bzero (token, strlen (token));
  g_free (token);
}

int
hz_cmd_hub_login (int argc, char **argv)
{
  g_autofree char *endpoint_arg = NULL;
  gboolean logout = FALSE;
  GOptionEntry entries[] = {
    { "endpoint", 0, 0, G_OPTION_ARG_STRING, &endpoint_arg,
      "The Hub the token is for (default $HF_ENDPOINT or https://huggingface.co)", "URL" },
    { "logout", 0, 0, G_OPTION_ARG_NONE, &logout, "Remove the stored token instead", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "— keep a Hugging Face access token in the keyring (for gated repositories)");
  g_option_context_set_description (ctx,
    "The token is read without echo from the terminal, or as the first line of stdin;\n"
    "create one at https://huggingface.co/settings/tokens (\"Read\" is enough).\n"
    "hanzo pull, hanzo search and the app use it when the Hub asks for one; $HF_TOKEN,\n"
    "when set, goes first.\n");
  g_autoptr (GError) error = NULL;
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      hz_cli_print_error ("hub-login", error->message);
      return 2;
    }
  if (argc != 1)
    {
      fprintf (stderr, "hanzo hub-login: the token is read from stdin, not the command line\n"
                       "Usage: hanzo hub-login [--endpoint URL] [--logout]\n");
      return 2;
    }
  g_autofree char *endpoint = hz_hub_endpoint_normalize (endpoint_arg, &error);
  if (!endpoint)
    {
      hz_cli_print_error ("hub-login", error->message);
      return 2;
    }
  if (logout)
    {
      if (!hz_credentials_clear_hub_token (endpoint, NULL, &error))
        {
          hz_cli_print_error ("hub-login", error->message);
          return 1;
        }
      fprintf (stderr, "hanzo hub-login: no token is kept for %s now\n", endpoint);
      return 0;
    }
  char *token = read_token (endpoint);
  if (!token || !*token)
    {
      wipe_free (token);
      fprintf (stderr, "hanzo hub-login: no token given (create one at "
                       "https://huggingface.co/settings/tokens)\n");
      return 2;
    }
  gboolean ok = hz_credentials_store_hub_token (endpoint, token, NULL, &error);
  wipe_free (token);
  if (!ok)
    {
      hz_cli_print_error ("hub-login", error->message);
      return g_error_matches (error, HZ_CREDENTIALS_ERROR, HZ_CREDENTIALS_ERROR_INVALID) ? 2 : 1;
    }
  fprintf (stderr, "hanzo hub-login: the token for %s is in the keyring; hanzo pull and the "
                   "app use it for gated repositories (remove it with --logout)\n", endpoint);
  return 0;
}
