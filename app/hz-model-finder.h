/* hz-model-finder.h — HzModelFinder: the model manager's "Find Models" page (issue 27).
 *
 * Search the Hugging Face Hub for GGUF models (the search runs when asked: Enter or the
 * Search button, so that only what the user chose to send is sent), open a repository to
 * see its GGUF files grouped by quantization, each with its size, whether it fits in this
 * computer's memory and its predicted decode speed, and the recommended one
 * (hz-hub-options.h: the rule is in the group's tooltip); download one. Downloads (the
 * application's HzModelHub) are listed on top with their progress, speed and time left,
 * and Pause, Resume, Cancel; a finished one is in the model library and offers Open, which
 * loads it for chatting. All network work runs in threads (hz-model-hub.h).
 *
 * Actions (group "finder"): finder.search (the entry's text), finder.open-repo (s: repo),
 * finder.back (to the results), finder.download (s: the repository path of a model of
 * the open repository), and per download (s: its key, "repo/path"): finder.pause,
 * finder.resume, finder.cancel, finder.open, finder.dismiss.
 * Main thread only.
 */
#pragma once

#include <adwaita.h>
#include "hz-app-context.h"

G_BEGIN_DECLS

#define HZ_TYPE_MODEL_FINDER (hz_model_finder_get_type ())
G_DECLARE_FINAL_TYPE (HzModelFinder, hz_model_finder, HZ, MODEL_FINDER, AdwBin)

/** The Find Models page for `ctx`'s model hub, library and settings. */
GtkWidget   *hz_model_finder_new (HzAppContext *ctx);

/** Move the keyboard focus to the search entry. */
void         hz_model_finder_focus_search (HzModelFinder *self);

/** Whether a search or a repository listing is running. */
gboolean     hz_model_finder_is_busy (HzModelFinder *self);

/** The repository shown (its files page), or NULL while the search page shows. */
const char  *hz_model_finder_get_repo (HzModelFinder *self);

/** For tests and accessibility: the search entry; the result rows (one AdwActionRow per
 *  repository); the file rows (one row per quantization: an AdwActionRow, or an
 *  AdwExpanderRow holding one AdwActionRow per model when several share it; the model
 *  rows are named "hub-file"); the download rows (one AdwActionRow each, named
 *  "download"). */
GtkEditable *hz_model_finder_get_search_entry (HzModelFinder *self);
GtkListBox  *hz_model_finder_get_results (HzModelFinder *self);
GtkListBox  *hz_model_finder_get_files (HzModelFinder *self);
GtkListBox  *hz_model_finder_get_downloads (HzModelFinder *self);

G_END_DECLS
