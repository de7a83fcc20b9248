/* tools/hanzo-search.c — `hanzo search`: find GGUF models on the Hugging Face Hub.
 *
 *   hanzo search [--limit N] [--endpoint URL] QUERY...
 *
 * Asks the Hub (egress/hub.h: GET /api/models?search=QUERY&filter=gguf&sort=downloads) and
 * prints a table on stdout: repository, downloads (last 30 days), likes, last update, and
 * "gated" for repositories that need an access token. QUERY words are joined with spaces:
 * ASCII letters, digits and ._-+/ only (the search is sent to the Hub; nothing else is). The
 * request is written to the egress log. Exit status: 0 ok (also for no results), 1 error,
 * 2 usage error.
 */
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include "hanzo-cli-util.h"
#include "hanzo-cmd.h"
#include "hanzo-hub-common.h"

int
hz_cmd_search (int argc, char **argv)
{
  int limit = 20;
  g_autofree char *endpoint = NULL;
  GOptionEntry entries[] = {
    { "limit", 'n', 0, G_OPTION_ARG_INT, &limit, "At most N results (1-100, default 20)", "N" },
    { "endpoint", 0, 0, G_OPTION_ARG_STRING, &endpoint,
      "Hub to ask (default $HF_ENDPOINT or https://huggingface.co)", "URL" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("QUERY... — find GGUF models on the "
                                                         "Hugging Face Hub");
  g_autoptr (GError) error = NULL;
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      hz_cli_print_error ("search", error->message);
      return 2;
    }
  if (argc < 2 || limit < 1 || limit > 100)
    {
      fprintf (stderr, "hanzo search: %s\nUsage: hanzo search [--limit N] QUERY...\n",
               argc < 2 ? "what to search for?" : "--limit is 1 to 100");
      return 2;
    }
  g_autofree char *query = g_strjoinv (" ", argv + 1);
  if (!hz_hub_check_query (query, (guint) limit, &error))   /* before the store is opened */
    {
      hz_cli_hub_print_error ("search", error);
      return 2;
    }
  g_autoptr (HzStore) store = NULL;
  g_autoptr (HzHub) hub = hz_cli_hub_open ("search", endpoint, &store);
  if (!hub)
    return 1;
  g_autoptr (GPtrArray) models = hz_hub_search (hub, query, (guint) limit, NULL, &error);
  if (!models && hz_credentials_hub_token_after_refusal (hub, error))
    {
      g_clear_error (&error);
      models = hz_hub_search (hub, query, (guint) limit, NULL, &error);
    }
  if (!models)
    {
      hz_cli_hub_print_error ("search", error);
      return g_error_matches (error, HZ_HUB_ERROR, HZ_HUB_ERROR_INVALID) ? 2 : 1;
    }
  if (models->len == 0)
    {
      fprintf (stderr, "hanzo search: no GGUF model matches '%s'\n", query);
      return 0;
    }
  int w = 4;
  for (guint i = 0; i < models->len; i++)
    w = MAX (w, (int) strlen (((HzHubModel *) models->pdata[i])->id));
  printf ("%-*s  %10s  %6s  %-10s\n", w, "REPO", "DOWNLOADS", "LIKES", "UPDATED");
  for (guint i = 0; i < models->len; i++)
    {
      const HzHubModel *m = models->pdata[i];
      char dl[32] = "-", likes[32] = "-";
      if (m->downloads >= 0)
        g_snprintf (dl, sizeof dl, "%" G_GINT64_FORMAT, m->downloads);
      if (m->likes >= 0)
        g_snprintf (likes, sizeof likes, "%" G_GINT64_FORMAT, m->likes);
      g_autofree char *day = m->last_modified ? g_strndup (m->last_modified, 10) : g_strdup ("-");
      printf ("%-*s  %10s  %6s  %-10s%s\n", w, m->id, dl, likes, day, m->gated ? "  gated" : "");
    }
  fprintf (stderr, "Download one with: hanzo pull %s\n",
           ((HzHubModel *) models->pdata[0])->id);
  return 0;
}
