/* egress/credentials.h — the federation endpoint and bearer token, kept in the user's
 * Secret Service keyring (libsecret), never in the database or GSettings.
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

/** Wipe and free a token returned by hz_credentials_lookup(). NULL is ignored. */
void hz_credentials_free_token (char *token);

G_END_DECLS
