/* hz-model-settings.c — per-model reply settings (see hz-model-settings.h). */
#include "hz-model-settings.h"

#include "hz-config.h"

const char *const hz_model_settings_keys[] = {
  "temperature", "top-p", "max-tokens", "context-length", NULL
};

GSettings *
hz_model_settings_new (const char *model_path)
{
  if (model_path == NULL || *model_path == '\0')
    return NULL;
  g_autofree char *name = g_path_get_basename (model_path);
  g_autofree char *id = g_compute_checksum_for_string (G_CHECKSUM_SHA1, name, -1);
  g_autofree char *path = g_strdup_printf ("/ai/hanzo/Desktop/models/%s/", id);
  return g_settings_new_with_path (HZ_APP_ID ".Model", path);
}

gboolean
hz_model_settings_is_own (GSettings *model, const char *key)
{
  g_return_val_if_fail (model == NULL || G_IS_SETTINGS (model), FALSE);
  if (model == NULL)
    return FALSE;
  g_autoptr(GVariant) own = g_settings_get_user_value (model, key);
  return own != NULL;
}

GVariant *
hz_model_settings_get_value (GSettings *model, GSettings *defaults, const char *key)
{
  g_return_val_if_fail (G_IS_SETTINGS (defaults), NULL);
  g_return_val_if_fail (key != NULL, NULL);

  GVariant *own = model != NULL ? g_settings_get_user_value (model, key) : NULL;
  return own != NULL ? own : g_settings_get_value (defaults, key);
}

double
hz_model_settings_get_double (GSettings *model, GSettings *defaults, const char *key)
{
  g_autoptr(GVariant) v = hz_model_settings_get_value (model, defaults, key);
  return g_variant_get_double (v);
}

int
hz_model_settings_get_int (GSettings *model, GSettings *defaults, const char *key)
{
  g_autoptr(GVariant) v = hz_model_settings_get_value (model, defaults, key);
  return g_variant_get_int32 (v);
}
