/* hz-model-hub.h — HzModelHub: the app's side of the model download channel (egress/hub.h,
 * issue 27): search the Hugging Face Hub for GGUF models, list a repository's files, and
 * download models into the model library's folder with pause, resume (also after a
 * restart) and cancel. The app calls egress' public API only.
 *
 * Every network call runs in a GTask thread with its own HzHub and store connection
 * (hz_hub_client_open): the egress log, which gets a row for every request, is the
 * app's database, shown on the privacy page. The main thread never waits on the network.
 * Endpoint: GSettings hub-endpoint when set, else $HF_ENDPOINT, else https://huggingface.co
 * (a mirror must be https://, or http:// to loopback). Gated or private repositories: after
 * the Hub refuses, the token the keyring holds for the endpoint is used
 * (hz_credentials_hub_token_after_refusal); there is none unless the user stored one.
 *
 * Downloads (HzModelDownload) are listed in hz_model_hub_get_downloads(), newest first.
 * Those not finished (running, paused, failed) are remembered in GSettings model-downloads
 * (repository, revision, each file's path, size and SHA-256) whenever one starts, stops
 * or ends; when the app starts again they come back paused, showing what their .part files
 * hold, and Resume continues from there. Nothing is sent before the user resumes them.
 * Cancelled downloads leave the list; finished ones stay until dismissed.
 *
 * Main thread only.
 */
#pragma once

#include <gio/gio.h>
#include <hanzo-store.h>
#include "hanzo/egress.h"
#include "hz-hub-client.h"
#include "hz-model-download.h"
#include "hz-model-library.h"

G_BEGIN_DECLS

/** Most search results asked for. */
#define HZ_MODEL_HUB_SEARCH_LIMIT 30

#define HZ_TYPE_MODEL_HUB (hz_model_hub_get_type ())
G_DECLARE_FINAL_TYPE (HzModelHub, hz_model_hub, HZ, MODEL_HUB, GObject)

/** The Hub side of the app: downloads go into `library`'s folder and are imported there;
 *  `settings` (ai.hanzo.Desktop) holds hub-endpoint and model-downloads; requests are
 *  logged into the database at `store_path`. Restores the remembered downloads, paused. */
HzModelHub *hz_model_hub_new (HzModelLibrary *library, GSettings *settings,
                              const char *store_path);

/** The endpoint requests go to (see above; g_free). */
char       *hz_model_hub_get_endpoint (HzModelHub *self);

/** Search GGUF models whose name contains `query` (egress' rules: letters, digits, space
 *  and ._-+/, at most HZ_HUB_MAX_QUERY bytes), most downloaded first. */
void        hz_model_hub_search_async (HzModelHub *self, const char *query,
                                       GCancellable *cancellable, GAsyncReadyCallback callback,
                                       gpointer data);
/** Returns: (transfer full): HzHubModel* (hub.h), or NULL with an HZ_HUB_ERROR. */
GPtrArray  *hz_model_hub_search_finish (HzModelHub *self, GAsyncResult *result, GError **error);

/** The files of `repo` ("owner/name") at main, recursively. */
void        hz_model_hub_list_files_async (HzModelHub *self, const char *repo,
                                           GCancellable *cancellable,
                                           GAsyncReadyCallback callback, gpointer data);
/** Returns: (transfer full): HzHubFile* (hub.h), or NULL with an HZ_HUB_ERROR. */
GPtrArray  *hz_model_hub_list_files_finish (HzModelHub *self, GAsyncResult *result,
                                            GError **error);

/** The downloads (HzModelDownload), newest first (live). */
GListModel *hz_model_hub_get_downloads (HzModelHub *self);

/** The download of `key` ("repo/path" of its first file), or NULL. */
HzModelDownload *hz_model_hub_find (HzModelHub *self, const char *key);

/** Download `files` (HzHubFile*: one model, a split set in shard order) of `repo` and start
 *  it; a download of the same model already listed is resumed instead (a finished one is
 *  returned as it is). Returns: (transfer none): the download, or NULL when a path or the
 *  repository is not valid. */
HzModelDownload *hz_model_hub_download (HzModelHub *self, const char *repo, GPtrArray *files);

/** Resume a paused or failed download (with the current endpoint). */
void        hz_model_hub_resume (HzModelHub *self, HzModelDownload *download);

/** Take a finished, failed or cancelled download off the list (a failed one's .part files
 *  are deleted). Running and paused ones are cancelled first. */
void        hz_model_hub_remove (HzModelHub *self, HzModelDownload *download);

G_END_DECLS
