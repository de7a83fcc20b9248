/* main.c — hanzo-desktop: start the Hanzo Desktop application (all code is in libhzapp). */
#include <glib/gi18n.h>
#include <locale.h>

#include "hz-application.h"
#include "hz-config.h"

int
main (int argc, char *argv[])
{
  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, HZ_LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);

  /* g_settings_new() aborts on a missing schema: say what to do instead. */
  GSettingsSchemaSource *source = g_settings_schema_source_get_default ();  /* NULL: none */
  g_autoptr(GSettingsSchema) schema =
    source ? g_settings_schema_source_lookup (source, HZ_APP_ID, TRUE) : NULL;
  if (schema == NULL)
    {
      g_printerr (_("The GSettings schema %s is not installed. Install Hanzo Desktop, or run "
                    "it from the build tree with tools/run-app.sh "
                    "(GSETTINGS_SCHEMA_DIR=build/data).\n"), HZ_APP_ID);
      return 1;
    }

  g_set_application_name (_("Hanzo"));
  g_autoptr(HzApplication) app = hz_application_new ();
  return g_application_run (G_APPLICATION (app), argc, argv);
}
