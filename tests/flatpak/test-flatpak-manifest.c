/* test-flatpak-manifest.c — flatpak/ai.hanzo.Desktop.json keeps what issue 9 asks for:
 * GNOME runtime 48 or newer, the app built by meson with -Dhip=disabled, an optional ROCm
 * extension point, the finish-args (dri, ipc, wayland, fallback-x11, the
 * StatusNotifierWatcher name) and network only with its reason documented in
 * flatpak/README.md, which also carries the /dev/kfd note. Parsed with json-glib.
 */
#include <json-glib/json-glib.h>

static JsonObject *manifest;
static char *readme;

static gboolean
array_has (JsonArray *array, const char *value)
{
  for (guint i = 0; array && i < json_array_get_length (array); i++)
    if (g_strcmp0 (json_array_get_string_element (array, i), value) == 0)
      return TRUE;
  return FALSE;
}

static void
test_runtime (void)
{
  g_assert_cmpstr (json_object_get_string_member (manifest, "id"), ==, "ai.hanzo.Desktop");
  g_assert_cmpstr (json_object_get_string_member (manifest, "runtime"), ==, "org.gnome.Platform");
  g_assert_cmpstr (json_object_get_string_member (manifest, "sdk"), ==, "org.gnome.Sdk");
  const char *version = json_object_get_string_member (manifest, "runtime-version");
  g_assert_cmpint (g_ascii_strtoll (version, NULL, 10), >=, 48);
  g_assert_cmpstr (json_object_get_string_member (manifest, "command"), ==, "hanzo-desktop");
}

static void
test_finish_args (void)
{
  JsonArray *args = json_object_get_array_member (manifest, "finish-args");
  const char *required[] = { "--device=dri", "--share=ipc", "--socket=wayland",
                             "--socket=fallback-x11",
                             "--talk-name=org.kde.StatusNotifierWatcher" };
  for (guint i = 0; i < G_N_ELEMENTS (required); i++)
    if (!array_has (args, required[i]))
      g_error ("finish-args lacks %s", required[i]);
  /* No broad access: no home or host file system, no --device=all. */
  for (guint i = 0; i < json_array_get_length (args); i++)
    {
      const char *a = json_array_get_string_element (args, i);
      g_assert_false (g_str_has_prefix (a, "--filesystem=home"));
      g_assert_false (g_str_has_prefix (a, "--filesystem=host"));
      g_assert_cmpstr (a, !=, "--device=all");
    }
  /* Network only for the egress, and the README says why. */
  if (array_has (args, "--share=network"))
    {
      g_assert_nonnull (strstr (readme, "`--share=network`"));
      g_assert_nonnull (strstr (readme, "egress"));
    }
}

static void
test_modules (void)
{
  JsonArray *modules = json_object_get_array_member (manifest, "modules");
  JsonObject *app = json_array_get_object_element (modules, json_array_get_length (modules) - 1);

  g_assert_cmpstr (json_object_get_string_member (app, "name"), ==, "hanzo-desktop");
  g_assert_cmpstr (json_object_get_string_member (app, "buildsystem"), ==, "meson");
  g_assert_true (array_has (json_object_get_array_member (app, "config-opts"), "-Dhip=disabled"));
}

static void
test_rocm (void)
{
  JsonObject *exts = json_object_get_object_member (manifest, "add-extensions");
  g_assert_nonnull (exts);
  JsonObject *rocm = json_object_get_object_member (exts, "ai.hanzo.Desktop.Rocm");
  g_assert_nonnull (rocm);
  g_assert_cmpstr (json_object_get_string_member (rocm, "directory"), ==, "extensions/rocm");
  g_assert_true (json_object_get_boolean_member (rocm, "no-autodownload"));
  g_assert_nonnull (strstr (readme, "/dev/kfd"));
  g_assert_nonnull (strstr (readme, "1.17.8"));
  g_assert_nonnull (strstr (readme, "--device=all"));
}

int
main (int argc, char *argv[])
{
  g_autoptr(GError) error = NULL;
  const char *src = g_getenv ("HZ_SOURCE_DIR");
  g_autofree char *path = g_build_filename (src ? src : ".", "flatpak", "ai.hanzo.Desktop.json", NULL);
  g_autofree char *readme_path = g_build_filename (src ? src : ".", "flatpak", "README.md", NULL);
  g_autoptr(JsonParser) parser = json_parser_new ();

  g_test_init (&argc, &argv, NULL);
  if (!json_parser_load_from_file (parser, path, &error))
    g_error ("%s: %s", path, error->message);
  manifest = json_node_get_object (json_parser_get_root (parser));
  g_assert_true (g_file_get_contents (readme_path, &readme, NULL, &error));

  g_test_add_func ("/flatpak/runtime", test_runtime);
  g_test_add_func ("/flatpak/finish-args", test_finish_args);
  g_test_add_func ("/flatpak/modules", test_modules);
  g_test_add_func ("/flatpak/rocm", test_rocm);
  int ret = g_test_run ();
  g_free (readme);
  return ret;
}
