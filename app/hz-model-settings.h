/* hz-model-settings.h — the reply settings of one model (temperature, top-p, maximum reply
 * length, context length).
 *
 * Each model has its own GSettings object of the relocatable schema ai.hanzo.Desktop.Model
 * at /ai/hanzo/Desktop/models/<id>/, where <id> is the SHA-1 (hex) of the model file's
 * name: the same file keeps its settings wherever it is opened from (the model library
 * keys its measured speeds by file name too). A key the user never set for the model
 * (g_settings_get_user_value() is NULL) takes the value of the same key in the app's
 * settings (schema ai.hanzo.Desktop): those are the defaults for every model, so a model
 * never configured replies as before. Main thread (GSettings objects are not shared
 * between threads).
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/** The keys a model has its own value of (NULL-terminated): "temperature", "top-p"
 *  (doubles), "max-tokens", "context-length" (ints, tokens). */
extern const char *const hz_model_settings_keys[];

/**
 * hz_model_settings_new:
 * @model_path: (nullable): the model file (only its name is used)
 *
 * Returns: (transfer full) (nullable): the settings of that model, NULL for a NULL path
 */
GSettings *hz_model_settings_new (const char *model_path);

/** Whether `model` (nullable) has its own value of `key`. */
gboolean   hz_model_settings_is_own (GSettings *model, const char *key);

/**
 * hz_model_settings_get_value:
 * @model: (nullable): a model's settings (hz_model_settings_new())
 * @defaults: the app's settings (schema ai.hanzo.Desktop)
 * @key: one of hz_model_settings_keys
 *
 * Returns: (transfer full): the model's own value of @key, or else the app's
 */
GVariant  *hz_model_settings_get_value (GSettings *model, GSettings *defaults, const char *key);

/** hz_model_settings_get_value() of a double key. */
double     hz_model_settings_get_double (GSettings *model, GSettings *defaults, const char *key);
/** hz_model_settings_get_value() of an int key. */
int        hz_model_settings_get_int (GSettings *model, GSettings *defaults, const char *key);

G_END_DECLS
