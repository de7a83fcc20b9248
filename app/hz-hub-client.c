/* hz-hub-client.c — the app's connection to the model download channel (hz-hub-client.h). */
#include "hz-hub-client.h"

#include <glib/gi18n.h>

HzHub *
hz_hub_client_open (const char *endpoint, const char *store_path, HzStore **store,
                          GError **error)
{
  *store = hz_store_open (store_path, error);
  if (*store == NULL)
    return NULL;
  HzHub *hub = hz_hub_new (endpoint, NULL, *store, error);
  if (hub == NULL)
    g_clear_pointer (store, hz_store_close);
  return hub;
}

char *
hz_hub_client_error_text (const GError *error)
{
  g_return_val_if_fail (error != NULL, NULL);
  if (error->domain != HZ_HUB_ERROR)
    return g_strdup (error->message);
  switch ((HzHubError) error->code)
    {
    case HZ_HUB_ERROR_AUTH:
      return g_strdup_printf (_("The repository is gated or private: accept its terms on its "
                                "Hugging Face page and keep an access token for this Hub in "
                                "your keyring (in a terminal: hanzo hub-login). (%s)"),
                              error->message);
    case HZ_HUB_ERROR_NOT_FOUND:
      return g_strdup_printf (_("Not found on the Hub: %s"), error->message);
    case HZ_HUB_ERROR_INVALID:
      return g_strdup_printf (_("Not sent: %s"), error->message);
    case HZ_HUB_ERROR_NO_SPACE:
      return g_strdup_printf (_("Not enough disk space: %s"), error->message);
    case HZ_HUB_ERROR_CHECKSUM:
      return g_strdup_printf (_("The file did not match its checksum and was deleted: %s"),
                              error->message);
    case HZ_HUB_ERROR_REJECTED:
      return g_strdup_printf (_("The Hub refused the request: %s"), error->message);
    case HZ_HUB_ERROR_NETWORK:
    case HZ_HUB_ERROR_BAD_REPLY:
      return g_strdup_printf (_("The Hub could not be reached: %s"), error->message);
    case HZ_HUB_ERROR_IO:
    case HZ_HUB_ERROR_CANCELLED:
    case HZ_HUB_ERROR_STORE:
    default:
      return g_strdup (error->message);
    }
}
