/* hz-model-download.h — HzModelDownload: one model (a GGUF file, or a split set as a whole)
 * being downloaded from the Hugging Face Hub into the model library's folder (issue 27).
 *
 * The transfer is egress' (hz_hub_download, egress/hub.h): each file is written to
 * NAME.part, resumed from there, checked against the repository's SHA-256 and only then
 * renamed to NAME; every request is a row of the egress log. It runs in a GTask thread with
 * its own HzHub and store connection; progress comes back to the main context coalesced
 * (at most one update waiting). When the files are in place the model is imported into the
 * library (hz_model_library_import_async: its header is checked, it is listed) and the
 * download is done, with the library's entry, ready to be opened.
 *
 * States: RUNNING → (pause) PAUSED, (error) FAILED, (files verified) IMPORTING → DONE, or
 * FAILED when the library cannot use the file (it stays in the folder); resume takes PAUSED
 * and FAILED back to RUNNING from what the .part files hold; cancel stops it, deletes the
 * .part files and ends in CANCELLED. Pausing takes effect when the thread has stopped
 * (within one read); until then hz_model_download_is_stopping() is TRUE and resume waits.
 *
 * Properties (all notify on the main thread): "state" (HzDownloadState), "done", "total"
 * (guint64 bytes of the whole set; total 0 while unknown), "speed" (double, bytes/s, 0 when
 * not running), "message" (string: why it failed, or NULL). Main thread only.
 */
#pragma once

#include <gio/gio.h>
#include "hanzo/egress.h"
#include "hz-model-library.h"

G_BEGIN_DECLS

typedef enum {
  HZ_DOWNLOAD_RUNNING,
  HZ_DOWNLOAD_PAUSED,     /* stopped with its .part files kept; resume continues */
  HZ_DOWNLOAD_FAILED,     /* stopped by an error ("message"); resume tries again */
  HZ_DOWNLOAD_IMPORTING,  /* the files are verified and in place; the library reads it */
  HZ_DOWNLOAD_DONE,       /* in the library (hz_model_download_get_entry) */
  HZ_DOWNLOAD_CANCELLED,  /* stopped, its .part files deleted */
} HzDownloadState;

/** Where a transfer goes: copied (referenced) by hz_model_download_resume(), so a change
 *  affects the next transfer only. */
typedef struct {
  const char     *endpoint;     /* the Hub (NULL: $HF_ENDPOINT, else huggingface.co) */
  const char     *store_path;   /* the database whose egress log records every request */
  HzModelLibrary *library;      /* imports the model when its files are in place */
} HzDownloadTarget;

#define HZ_TYPE_MODEL_DOWNLOAD (hz_model_download_get_type ())
G_DECLARE_FINAL_TYPE (HzModelDownload, hz_model_download, HZ, MODEL_DOWNLOAD, GObject)

/** A download of `files` (HzHubFile*, copied: one model, a split set in shard order) of
 *  `repo` at `revision` (NULL: "main") into the folder `dir`, PAUSED until
 *  hz_model_download_resume(). NULL when the repository or a path is not valid
 *  (hz_hub_file_ref_new's rules). */
HzModelDownload *hz_model_download_new (const char *repo, const char *revision,
                                        GPtrArray *files, const char *dir);

/** The download remembered as `v` (hz_model_download_serialize's format) into `dir`,
 *  PAUSED, with what its .part files already hold (counted in a thread: "done" follows);
 *  NULL when `v` is malformed or names an invalid repository or path. */
HzModelDownload *hz_model_download_new_from_variant (GVariant *v, const char *dir);

/** The download as a GVariant "(ssa(stss))": repository, revision, and per file its path,
 *  size, SHA-256 and git blob oid ("" when unknown). Floating. */
GVariant        *hz_model_download_serialize (HzModelDownload *self);

/** Start or continue (PAUSED, FAILED) the transfer with `target`; ignored in other states.
 *  When a pause is still stopping, the transfer starts once it has stopped. */
void             hz_model_download_resume (HzModelDownload *self, const HzDownloadTarget *target);
/** Stop the transfer keeping the .part files (RUNNING → PAUSED once stopped). */
void             hz_model_download_pause (HzModelDownload *self);
/** Stop the transfer (if running) and delete the .part files (in a thread); → CANCELLED.
 *  Ignored when DONE or IMPORTING. */
void             hz_model_download_cancel (HzModelDownload *self);

HzDownloadState  hz_model_download_get_state (HzModelDownload *self);
/** Whether a pause or cancel was asked and the thread has not stopped yet. */
gboolean         hz_model_download_is_stopping (HzModelDownload *self);
guint64          hz_model_download_get_done (HzModelDownload *self);
guint64          hz_model_download_get_total (HzModelDownload *self);
/** Bytes per second over the last seconds (0 when not running). */
double           hz_model_download_get_speed (HzModelDownload *self);
/** Why it failed (FAILED), else NULL. */
const char      *hz_model_download_get_message (HzModelDownload *self);
const char      *hz_model_download_get_repo (HzModelDownload *self);
/** The repository path of its (first) file: with the repository, what identifies it. */
const char      *hz_model_download_get_path (HzModelDownload *self);
/** "repo/path" (the egress log's subject of its requests). */
const char      *hz_model_download_get_key (HzModelDownload *self);
/** Its quantization tag, or NULL. */
const char      *hz_model_download_get_quant (HzModelDownload *self);
/** The file name the model gets in the folder (its first file's). */
const char      *hz_model_download_get_file_name (HzModelDownload *self);
/** The library's entry once DONE (transfer none), else NULL. */
HzModelEntry    *hz_model_download_get_entry (HzModelDownload *self);

G_END_DECLS
