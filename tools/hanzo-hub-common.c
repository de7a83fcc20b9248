/* tools/hanzo-hub-common.c — the Hub client of the command line (hanzo-hub-common.h). */
#include "hanzo-hub-common.h"

#include <stdio.h>
#include "hanzo/egress.h"
#include "hanzo-cli-util.h"

HzHub *
hz_cli_hub_open (const char *cmd, const char *endpoint, HzStore **store)
{
  g_autoptr (GError) error = NULL;
  *store = hz_store_open (NULL, &error);
  if (!*store)
    {
      fprintf (stderr, "hanzo %s: the egress log (where every download is recorded) cannot "
                       "be opened: %s\n", cmd, error->message);
      return NULL;
    }
  const char *token = g_getenv ("HF_TOKEN");
  if (!token || !*token)
    token = g_getenv ("HUGGING_FACE_HUB_TOKEN");
  HzHub *hub = hz_hub_new (endpoint, token, *store, &error);
  if (!hub)
    {
      hz_cli_print_error (cmd, error->message);
      g_clear_pointer (store, hz_store_close);
    }
  return hub;
}

void
hz_cli_hub_print_error (const char *cmd, const GError *error)
{
  hz_cli_print_error (cmd, error->message);   /* may quote the server or the user */
  if (g_error_matches (error, HZ_HUB_ERROR, HZ_HUB_ERROR_AUTH))
    fprintf (stderr, "hanzo %s: the repository is gated or private: accept its terms on the "
                     "Hub's page, create an access token (huggingface.co/settings/tokens) "
                     "and store it with `hanzo hub-login` (or set HF_TOKEN)\n", cmd);
}
