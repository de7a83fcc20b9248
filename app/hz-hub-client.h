/* hz-hub-client.h — the app's connection to the model download channel (egress/hub.h):
 * a Hub client whose every request is logged in the app's database, and what its errors
 * mean for the user. Below HzModelHub and HzModelDownload, which both use it. */
#pragma once

#include <gio/gio.h>
#include <hanzo-store.h>
#include "hanzo/egress.h"

G_BEGIN_DECLS

/** What an error of the Hub channel (HZ_HUB_ERROR; others: their message) means for the
 *  user, with the channel's message (translated; g_free). */
char  *hz_hub_client_error_text (const GError *error);

/** For worker threads: a Hub client for `endpoint` (NULL: $HF_ENDPOINT, else
 *  huggingface.co) logging every request into the database at `store_path`, opened into
 *  *store (free the client first, then close the store). NULL with the error (HZ_HUB_ERROR
 *  for the endpoint, HZ_STORE_ERROR for the database). Any thread. */
HzHub *hz_hub_client_open (const char *endpoint, const char *store_path,
                           HzStore **store, GError **error);

G_END_DECLS
