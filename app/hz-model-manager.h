/* hz-model-manager.h — HzModelManager: the window that manages the models, in two pages.
 * Library: import by file dialog or drag and drop, facts read from the GGUF header, memory
 * fit, predicted and measured speed per storage format, quantize, delete, default and guard
 * model, with the model in use at the top, whether it is in the library or was opened
 * from elsewhere. Find Models (HzModelFinder, hz-model-finder.h): search Hugging Face,
 * choose and download a GGUF file, which joins the library.
 *
 * Actions (group "models"): models.import (file dialog), models.cancel (the running import
 * or quantization), models.measure (memory read speed again), models.set-default (s: path;
 * also opens it for chatting), models.set-guard (s: path; "" clears the slot),
 * models.delete (s: path; asks first), models.quantize ((ss): path, file type),
 * models.import-path (s: path; imports the model in use when it was opened from elsewhere),
 * models.find (shows the Find Models page).
 * Settings (ai.hanzo.Desktop): model-path (default), guard-model-path, speed-target,
 * memory-bandwidth (measured once, when the window first opens), quantize-on-import,
 * import-as-link.
 * Main thread only.
 */
#pragma once

#include <adwaita.h>
#include "hz-app-context.h"
#include "hz-model-finder.h"
#include "hz-model-library.h"

G_BEGIN_DECLS

#define HZ_TYPE_MODEL_MANAGER (hz_model_manager_get_type ())
G_DECLARE_FINAL_TYPE (HzModelManager, hz_model_manager, HZ, MODEL_MANAGER, AdwWindow)

/** The manager of `ctx`'s model library, a window of `ctx`'s application, transient for
 *  `parent` (nullable). */
HzModelManager *hz_model_manager_new (HzAppContext *ctx, GtkWindow *parent);

/** Import `files` (GFile) as a drop or the file dialog does: one after the other, each
 *  reporting its error in a dialog (non-GGUF, damaged, unsupported architecture) or,
 *  when it does not fit in memory, offering the recommended quantization. */
void            hz_model_manager_import_files (HzModelManager *self, GSList *files);

/** Whether an import, quantization or bandwidth measurement is running. */
gboolean        hz_model_manager_is_busy (HzModelManager *self);

/** What the progress bar of the running import or quantization shows: returns the
 *  fraction (0 to 1; an import pulses and stays at 0), or -1 when none is running; `text`
 *  (nullable; transfer none, valid until the next change) gets the text on the bar
 *  ("42 %" while quantizing) or NULL. */
double          hz_model_manager_get_progress (HzModelManager *self, const char **text);

/** Show the Find Models page, its search entry focused. */
void            hz_model_manager_show_find (HzModelManager *self);

/** The Find Models page (for tests and accessibility). */
HzModelFinder  *hz_model_manager_get_finder (HzModelManager *self);

/** The list of models (one AdwExpanderRow per model, for tests and accessibility). */
GtkListBox     *hz_model_manager_get_list (HzModelManager *self);

/** The list above it that shows the model in use (one AdwExpanderRow, or none while no
 *  model is loaded); it comes first in the window, so it shows without scrolling. */
GtkListBox     *hz_model_manager_get_in_use_list (HzModelManager *self);

G_END_DECLS
