/* hz-preferences-window.h — HzPreferencesWindow: the reply settings (temperature, top-p,
 * maximum reply length, context length) of the model in use (hz-model-settings.h: a value
 * changed here becomes the model's own, the others show the defaults) or, without a
 * model, the defaults of every model (the app's GSettings). Changes apply to the next
 * reply (the context length remakes the model's context). A second page, "Other Apps",
 * turns serving to other programs on and off (hz_preferences_window_set_app_server()).
 * Main thread.
 */
#pragma once

#include <adwaita.h>

#include "hz-app-server.h"

G_BEGIN_DECLS

#define HZ_TYPE_PREFERENCES_WINDOW (hz_preferences_window_get_type ())
G_DECLARE_FINAL_TYPE (HzPreferencesWindow, hz_preferences_window, HZ, PREFERENCES_WINDOW,
                      AdwPreferencesWindow)

/** A preferences window on the defaults `settings` (schema ai.hanzo.Desktop), transient
 *  for `parent` (nullable). */
GtkWidget *hz_preferences_window_new (GSettings *settings, GtkWindow *parent);

/** A preferences window on the settings of one model: `model` (hz_model_settings_new();
 *  NULL: as hz_preferences_window_new()) over the defaults `settings`; `model_name`
 *  (nullable) is shown. "Reset to Defaults" clears the model's own values. */
GtkWidget *hz_preferences_window_new_for_model (GSettings *settings, GSettings *model,
                                                const char *model_name, GtkWindow *parent);

/** Show the "Other Apps" page for `server` (hz-app-server.h): the switch and port (the
 *  GSettings keys serve-enabled and serve-port of the window's `settings`), the state, the
 *  address and the API key with copy buttons, and a new-key button. Without it the page is
 *  hidden. Once per window. */
void hz_preferences_window_set_app_server (HzPreferencesWindow *self, HzAppServer *server);

/** Show the "Other Apps" page (after hz_preferences_window_set_app_server()). */
void hz_preferences_window_show_other_apps (HzPreferencesWindow *self);

/** The page's switch (for tests). */
GtkSwitch *hz_preferences_window_get_serve_switch (HzPreferencesWindow *self);

G_END_DECLS
