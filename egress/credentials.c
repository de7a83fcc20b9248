/* egress/credentials.c — federation endpoint + bearer token, Hub tokens, in libsecret
 * (credentials.h). */
#include "credentials.h"
#include "egress-private.h"

#include <libsecret/secret.h>
#include <string.h>

G_DEFINE_QUARK (hz-credentials-error-quark, hz_credentials_error)

static const SecretSchema *
federation_schema (void)
{
  static const SecretSchema schema = {
    "ai.hanzo.Desktop.Federation", SECRET_SCHEMA_NONE,
    {
      { "service", SECRET_SCHEMA_ATTRIBUTE_STRING },
      { "endpoint", SECRET_SCHEMA_ATTRIBUTE_STRING },
      { NULL, 0 },
    },
  };
  return &schema;
}

static gboolean
unavailable (GError **error, GError *local, const char *what)
{
  if (g_error_matches (local, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    g_propagate_error (error, local);
  else
    {
      g_set_error (error, HZ_CREDENTIALS_ERROR, HZ_CREDENTIALS_ERROR_UNAVAILABLE,
                   "%s: the Secret Service (keyring) is not available: %s", what,
                   local ? local->message : "unknown error");
      g_clear_error (&local);
    }
  return FALSE;
}

static gboolean
valid_endpoint (const char *endpoint)
{
  g_autoptr (GUri) uri = endpoint ? g_uri_parse (endpoint, G_URI_FLAGS_NONE, NULL) : NULL;
  return uri && g_uri_get_host (uri) && *g_uri_get_host (uri) &&
         (g_ascii_strcasecmp (g_uri_get_scheme (uri), "https") == 0 ||
          g_ascii_strcasecmp (g_uri_get_scheme (uri), "http") == 0);
}

gboolean
hz_credentials_clear (GCancellable *cancellable, GError **error)
{
  GError *local = NULL;
  secret_password_clear_sync (federation_schema (), cancellable, &local,
                              "service", "federation", NULL);
  if (local)
    return unavailable (error, local, "removing the federation token");
  return TRUE;
}

static gboolean
check_pair (const char *endpoint, const char *token, const char *what, GError **error)
{
  if (valid_endpoint (endpoint) && hz_egress_token_ok (token))
    return TRUE;
  g_set_error (error, HZ_CREDENTIALS_ERROR, HZ_CREDENTIALS_ERROR_INVALID,
               "the %s endpoint must be an http(s) URL and the token non-empty text without "
               "spaces", what);
  return FALSE;
}

gboolean
hz_credentials_store (const char *endpoint, const char *token, GCancellable *cancellable,
                      GError **error)
{
  if (!check_pair (endpoint, token, "federation", error))
    return FALSE;
  if (!hz_credentials_clear (cancellable, error))
    return FALSE;
  GError *local = NULL;
  if (!secret_password_store_sync (federation_schema (), SECRET_COLLECTION_DEFAULT,
                                   "Hanzo federation token", token, cancellable, &local,
                                   "service", "federation", "endpoint", endpoint, NULL))
    return unavailable (error, local, "storing the federation token");
  return TRUE;
}

gboolean
hz_credentials_lookup (char **endpoint, char **token, GCancellable *cancellable,
                       GError **error)
{
  GError *local = NULL;
  g_autoptr (GHashTable) query = secret_attributes_build (federation_schema (),
                                                          "service", "federation", NULL);
  GList *items = secret_password_searchv_sync (federation_schema (), query,
                                               SECRET_SEARCH_UNLOCK | SECRET_SEARCH_LOAD_SECRETS,
                                               cancellable, &local);
  if (local)
    return unavailable (error, local, "reading the federation token");
  gboolean found = FALSE;
  if (items)
    {
      SecretRetrievable *item = items->data;
      g_autoptr (GHashTable) attrs = secret_retrievable_get_attributes (item);
      SecretValue *value = secret_retrievable_retrieve_secret_sync (item, cancellable, &local);
      if (local)
        {
          g_list_free_full (items, g_object_unref);
          return unavailable (error, local, "reading the federation token");
        }
      const char *ep = g_hash_table_lookup (attrs, "endpoint");
      const char *text = value ? secret_value_get_text (value) : NULL;
      if (ep && text)
        {
          *endpoint = g_strdup (ep);
          *token = g_strdup (text);
          found = TRUE;
        }
      if (value)
        secret_value_unref (value);
    }
  g_list_free_full (items, g_object_unref);
  if (!found)
    g_set_error (error, HZ_CREDENTIALS_ERROR, HZ_CREDENTIALS_ERROR_NOT_FOUND,
                 "no federation endpoint and token are stored (federation is off)");
  return found;
}

void
hz_credentials_free_token (char *token)
{
  if (!token)
    return;
  explicit_bzero (token, strlen (token));
  g_free (token);
}

/* ----------------------------------------------------------------- Hub tokens */

static const SecretSchema *
hub_schema (void)
{
  static const SecretSchema schema = {
    "ai.hanzo.Desktop.HubToken", SECRET_SCHEMA_NONE,
    {
      { "service", SECRET_SCHEMA_ATTRIBUTE_STRING },
      { "endpoint", SECRET_SCHEMA_ATTRIBUTE_STRING },
      { NULL, 0 },
    },
  };
  return &schema;
}

gboolean
hz_credentials_store_hub_token (const char *endpoint, const char *token,
                                GCancellable *cancellable, GError **error)
{
  if (!check_pair (endpoint, token, "Hub", error))
    return FALSE;
  GError *local = NULL;
  g_autofree char *label = g_strdup_printf ("Hanzo access token for %s", endpoint);
  if (!secret_password_store_sync (hub_schema (), SECRET_COLLECTION_DEFAULT, label, token,
                                   cancellable, &local, "service", "huggingface",
                                   "endpoint", endpoint, NULL))
    return unavailable (error, local, "storing the Hub token");
  return TRUE;
}

char *
hz_credentials_lookup_hub_token (const char *endpoint, GCancellable *cancellable,
                                 GError **error)
{
  GError *local = NULL;
  char *secret = secret_password_lookup_sync (hub_schema (), cancellable, &local,
                                              "service", "huggingface", "endpoint", endpoint,
                                              NULL);
  if (local)
    return unavailable (error, local, "reading the Hub token"), NULL;
  if (!secret)
    {
      g_set_error (error, HZ_CREDENTIALS_ERROR, HZ_CREDENTIALS_ERROR_NOT_FOUND,
                   "no Hub access token is stored for %s", endpoint);
      return NULL;
    }
  char *token = g_strdup (secret);
  secret_password_free (secret);   /* wipes */
  return token;
}

gboolean
hz_credentials_clear_hub_token (const char *endpoint, GCancellable *cancellable,
                                GError **error)
{
  GError *local = NULL;
  secret_password_clear_sync (hub_schema (), cancellable, &local, "service", "huggingface",
                              "endpoint", endpoint, NULL);
  if (local)
    return unavailable (error, local, "removing the Hub token");
  return TRUE;
}

gboolean
hz_credentials_hub_token_after_refusal (HzHub *hub, const GError *error)
{
  if (!g_error_matches (error, HZ_HUB_ERROR, HZ_HUB_ERROR_AUTH) || hz_hub_has_token (hub))
    return FALSE;
  char *token = hz_credentials_lookup_hub_token (hz_hub_get_endpoint (hub), NULL, NULL);
  gboolean ok = token && hz_hub_set_token (hub, token, NULL);
  hz_credentials_free_token (token);
  return ok;
}
