/* egress/credentials.h — the federation endpoint and bearer token, and Hugging Face Hub
 * access tokens, kept in the user's Secret Service keyring (libsecret), never in the
 * database or GSettings.
 *
 * One item, schema "ai.hanzo.Desktop.Federation", attributes { "service": "federation",
 * "endpoint": <URL> }, secret = the bearer token (UTF-8 text). Storing replaces any
 * previous item.
 *
 * These calls are synchronous D-Bus round trips to the Secret Service (which may prompt to
 * unlock the keyring): call them from a worker thread, not the UI thread. Thread-safe.
 */
#pragma once

#include <gio/gio.h>
#include "hub.h"

G_BEGIN_DECLS

#define HZ_CREDENTIALS_ERROR (hz_credentials_error_quark ())
/** Error domain of this header. */
GQuark hz_credentials_error_quark (void);
typedef enum {
  HZ_CREDENTIALS_ERROR_UNAVAILABLE,  /* no Secret Service reachable / keyring locked */
  HZ_CREDENTIALS_ERROR_NOT_FOUND,    /* nothing stored */
  HZ_CREDENTIALS_ERROR_INVALID,      /* empty token, endpoint not an http(s) URL */
} HzCredentialsError;

/** Store (replace) the federation endpoint and token. The endpoint must be an absolute
 *  http:// or https:// URL; the token non-empty without whitespace.
 *  Errors: HZ_CREDENTIALS_ERROR_INVALID, _UNAVAILABLE (with libsecret's message). */
gboolean hz_credentials_store (const char *endpoint, const char *token,
                               GCancellable *cancellable, GError **error);

/** Read the stored endpoint and token (newly allocated; free the token with
 *  hz_credentials_free_token(), which wipes it). Errors: _NOT_FOUND, _UNAVAILABLE. */
gboolean hz_credentials_lookup (char **endpoint, char **token, GCancellable *cancellable,
                                GError **error);

/** Remove the stored credentials (turning federation off). TRUE also when there were
 *  none. Errors: _UNAVAILABLE. */
gboolean hz_credentials_clear (GCancellable *cancellable, GError **error);

/** Wipe and free a token returned by hz_credentials_lookup() or
 *  hz_credentials_lookup_hub_token(). NULL is ignored. */
void hz_credentials_free_token (char *token);

/* Hugging Face Hub access tokens (issue 27; egress/hub.h), one per Hub endpoint: schema
 * "ai.hanzo.Desktop.HubToken", attributes { "service": "huggingface", "endpoint": <URL> },
 * secret = the token. Only needed for gated or private repositories. */

/** Store (replace) the token for `endpoint` (an http(s) URL, e.g. "https://huggingface.co").
 *  Errors: HZ_CREDENTIALS_ERROR_INVALID, _UNAVAILABLE. */
gboolean hz_credentials_store_hub_token (const char *endpoint, const char *token,
                                         GCancellable *cancellable, GError **error);

/** The token stored for `endpoint` (free with hz_credentials_free_token()). Errors:
 *  HZ_CREDENTIALS_ERROR_NOT_FOUND, _UNAVAILABLE. */
char *hz_credentials_lookup_hub_token (const char *endpoint, GCancellable *cancellable,
                                       GError **error);

/** Remove the token of `endpoint`; TRUE also when there was none. Errors: _UNAVAILABLE. */
gboolean hz_credentials_clear_hub_token (const char *endpoint, GCancellable *cancellable,
                                         GError **error);

/** After a Hub call failed with `error`: when that is HZ_HUB_ERROR_AUTH (a gated or private
 *  repository) and `hub` sent no token, give it the token the keyring holds for its
 *  endpoint. TRUE when one was found and set, so the call is worth repeating once; FALSE
 *  for any other error, a client that had a token, or no stored token. Blocks (a D-Bus
 *  round trip): call it where the Hub call ran, in a worker thread. */
gboolean hz_credentials_hub_token_after_refusal (HzHub *hub, const GError *error);

G_END_DECLS
