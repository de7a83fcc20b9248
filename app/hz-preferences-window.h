/* hz-preferences-window.h — HzPreferencesWindow: the reply settings (temperature, top-p,
 * maximum reply length, context length), bound to the app's GSettings; changes apply to
 * the next reply (the context length remakes the model's context). Main thread.
 */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define HZ_TYPE_PREFERENCES_WINDOW (hz_preferences_window_get_type ())
G_DECLARE_FINAL_TYPE (HzPreferencesWindow, hz_preferences_window, HZ, PREFERENCES_WINDOW,
                      AdwPreferencesWindow)

/** A preferences window on `settings` (schema ai.hanzo.Desktop), transient for `parent`. */
GtkWidget *hz_preferences_window_new (GSettings *settings, GtkWindow *parent);

G_END_DECLS
