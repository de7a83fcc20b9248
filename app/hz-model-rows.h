/* hz-model-rows.h — small widgets and texts shared by the model manager's pages (the
 * library, hz-model-manager.c, and Find Models, hz-model-finder.c). Main thread only. */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

/** A decode rate for the user: "42 tokens/s" (one decimal below 100; g_free). */
char      *hz_model_rows_format_speed (double tokens_per_s);

/** A small accent label for a row's end ("Recommended", "In Use"). */
GtkWidget *hz_model_rows_tag (const char *text);

/** A button with the mnemonic `label` that activates `action` with `target` (floating
 *  GVariant, may be NULL), centred vertically for a row's end. */
GtkWidget *hz_model_rows_button (const char *label, const char *action, GVariant *target);

G_END_DECLS
