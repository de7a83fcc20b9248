/* hz-model-library.h — HzModelLibrary: the models Hanzo manages, in one folder
 * ($XDG_DATA_HOME/hanzo/models by default), and HzModelEntry, one GGUF file there.
 *
 * Importing validates the file's header first (hz_model_info_read: not GGUF, damaged, no
 * weights, unsupported architecture are errors with a message for the user), then copies
 * it into the folder (or makes a symbolic link to it, to save disk space) under a free
 * name. Quantizing writes a smaller GGUF into the folder with the engine's file quantizer
 * (hz_quantize_file: the same per-tensor choices and bytes as load-time ISQ and
 * llama-quantize). Both run in a GTask worker thread and
 * add the new entry on the main thread when they finish. Measured decode speeds (tokens/s
 * of the replies, see hz_model_library_record_speed) are kept in `measurements.ini` in the
 * folder: per file name, and for a model opened from elsewhere (`--model`, the remembered
 * model) per SHA-1 of its path. Such a model also gets an HzModelEntry, outside the list
 * (hz_model_library_lookup_async), so that the model manager can show the model in use.
 *
 * Errors: HZ_MODEL_INFO_ERROR (hz-model-info.h) for unusable files, HZ_MODEL_LIBRARY_ERROR
 * below, G_IO_ERROR for the file system (G_IO_ERROR_CANCELLED when cancelled).
 * All functions are for the main thread, except where said.
 */
#pragma once

#include <gio/gio.h>
#include "hz-model-info.h"

G_BEGIN_DECLS

#define HZ_MODEL_LIBRARY_ERROR (hz_model_library_error_quark ())
GQuark hz_model_library_error_quark (void);
typedef enum {
  HZ_MODEL_LIBRARY_ERROR_UNSUPPORTED,  /* the engine cannot run the file's architecture */
  HZ_MODEL_LIBRARY_ERROR_NOT_FOUND,    /* not a model of the library */
} HzModelLibraryError;

#define HZ_TYPE_MODEL_ENTRY (hz_model_entry_get_type ())
G_DECLARE_FINAL_TYPE (HzModelEntry, hz_model_entry, HZ, MODEL_ENTRY, GObject)

/** Properties: "name" (string, general.name or file name), "path" (string),
 *  "measured-tokens-per-s" (double, 0 = never measured; notifies). */
const HzModelInfo *hz_model_entry_get_info (HzModelEntry *self);
const char        *hz_model_entry_get_name (HzModelEntry *self);
const char        *hz_model_entry_get_path (HzModelEntry *self);
/** Average decode tokens/s measured with this model (0 = none yet). */
double             hz_model_entry_get_measured_tokens_per_s (HzModelEntry *self);

#define HZ_TYPE_MODEL_LIBRARY (hz_model_library_get_type ())
G_DECLARE_FINAL_TYPE (HzModelLibrary, hz_model_library, HZ, MODEL_LIBRARY, GObject)

/** A library over `dir` (NULL: $XDG_DATA_HOME/hanzo/models, created when first needed).
 *  Starts reading the folder at once (in a thread; "loaded" is set when done). */
HzModelLibrary *hz_model_library_new (const char *dir);
const char     *hz_model_library_get_dir (HzModelLibrary *self);
/** HzModelEntry items sorted by name (live). */
GListModel     *hz_model_library_get_models (HzModelLibrary *self);
/** Whether the first read of the folder has finished (property "loaded"). */
gboolean        hz_model_library_is_loaded (HzModelLibrary *self);
/** Read the folder again (in a thread). */
void            hz_model_library_reload (HzModelLibrary *self);
/** The entry for `path` (compared after resolving both), or NULL. */
HzModelEntry   *hz_model_library_find (HzModelLibrary *self, const char *path);

/** Import the GGUF `file`: check it, then copy it into the folder (`link`: make a
 *  symbolic link to it instead). A file already in the folder is only added. */
void            hz_model_library_import_async (HzModelLibrary *self, GFile *file,
                                               gboolean link, GCancellable *cancellable,
                                               GAsyncReadyCallback callback, gpointer data);
/** Returns: (transfer full): the new entry, or NULL with the error. */
HzModelEntry   *hz_model_library_import_finish (HzModelLibrary *self, GAsyncResult *result,
                                                GError **error);

/** Progress of a quantization: `fraction` (0 < fraction <= 1) of the source's tensor bytes
 *  done, `detail` what is being worked on or NULL (the engine's quantizer names nothing
 *  yet). Called on the main context of the thread that started the work, coalesced (at
 *  most one call waiting at a time, with the latest fraction), never after the work's
 *  GAsyncReadyCallback ran. */
typedef void (*HzModelProgressFunc) (double fraction, const char *detail, gpointer user_data);

/** Quantize `entry` to the file type `type_name` ("Q4_K_M", ...) into the folder as
 *  "<name>-<TYPE>.gguf", reporting `progress` (may be NULL; `progress_data` is not freed)
 *  after each tensor. Cancelling stops the engine at the next tensor (it writes to a
 *  temporary file, removed then); the task returns G_IO_ERROR_CANCELLED as soon as it is
 *  asked, and a file the engine finished meanwhile is deleted: nothing is left. */
void            hz_model_library_quantize_async (HzModelLibrary *self, HzModelEntry *entry,
                                                 const char *type_name,
                                                 GCancellable *cancellable,
                                                 HzModelProgressFunc progress,
                                                 gpointer progress_data,
                                                 GAsyncReadyCallback callback, gpointer data);
HzModelEntry   *hz_model_library_quantize_finish (HzModelLibrary *self, GAsyncResult *result,
                                                  GError **error);

/** Delete the entry's file (a link: only the link) and remove it. */
gboolean        hz_model_library_delete (HzModelLibrary *self, HzModelEntry *entry,
                                         GError **error);

/** Add a decode speed measured with the model at `path` (a reply of n_tokens tokens);
 *  replies shorter than 8 tokens are ignored. Models outside the folder are measured too
 *  (their entry, when looked up, shows it). The stored value is the mean over the last
 *  measurements (weight 1/8 for a new one). */
void            hz_model_library_record_speed (HzModelLibrary *self, const char *path,
                                               double tokens_per_s, gint64 n_tokens);

/** The entry for the GGUF file at `path`: the library's when it is in the list, else one
 *  made for it (its header read in a thread, then kept, with its measured speed) and not
 *  added to the list. Errors: those of hz_model_info_read(). */
void            hz_model_library_lookup_async (HzModelLibrary *self, const char *path,
                                               GCancellable *cancellable,
                                               GAsyncReadyCallback callback, gpointer data);
/** Returns: (transfer full): the entry, or NULL with the error. */
HzModelEntry   *hz_model_library_lookup_finish (HzModelLibrary *self, GAsyncResult *result,
                                                GError **error);

/** The speed model (hz-model-info.h) for predicting `entry`'s formats at `bandwidth`
 *  bytes/s: its per-token overhead comes from `entry`'s own measured speed, else from the
 *  measured file of the same shape (hz_model_info_same_shape: in the list or looked up)
 *  whose measurement implies the median overhead. Returns TRUE and sets `*from` (transfer
 *  none; may be NULL) to that file when a measurement was used; FALSE (overhead 0: an
 *  upper bound) when none exists or the bandwidth is not positive. */
gboolean        hz_model_library_speed_model (HzModelLibrary *self, HzModelEntry *entry,
                                              double bandwidth, HzSpeedModel *speed,
                                              HzModelEntry **from);

G_END_DECLS
