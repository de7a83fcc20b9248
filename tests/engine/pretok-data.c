/* tests/engine/pretok-data.c — the reference data of tests/engine/pretok; see
 * pretok-data.h. */
#include <glib.h>
#include "pretok-data.h"

char *
hz_pretok_data_path (const char *name)
{
  const char *src = g_getenv ("HZ_SOURCE_DIR");
  return g_build_filename (src ? src : ".", "tests", "engine", "pretok", name, NULL);
}

JsonNode *
hz_pretok_load_json (const char *name)
{
  g_autofree char *path = hz_pretok_data_path (name);
  g_autoptr(JsonParser) p = json_parser_new ();
  g_autoptr(GError) error = NULL;
  json_parser_load_from_file (p, path, &error);
  g_assert_no_error (error);
  return json_node_copy (json_parser_get_root (p));
}

char *
hz_pretok_make_folder (const char *base)
{
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp ("hz-pretok-XXXXXX", &error);
  const char *kinds[] = { "tokenizer.json", "tokenizer_config.json" };
  g_assert_no_error (error);
  for (gsize k = 0; k < G_N_ELEMENTS (kinds); k++)
    {
      g_autofree char *name = g_strdup_printf ("%s.%s", base, kinds[k]);
      g_autofree char *src = hz_pretok_data_path (name);
      g_autofree char *dst = g_build_filename (dir, kinds[k], NULL);
      g_autofree char *text = NULL;
      gsize len;
      if (!g_file_get_contents (src, &text, &len, NULL))
        {
          g_assert_cmpuint (k, >, 0);   /* tokenizer.json must exist */
          continue;
        }
      g_assert_true (g_file_set_contents (dst, text, (gssize) len, NULL));
    }
  return dir;
}

guint
hz_pretok_check_ids (const HzTokenizer *t, JsonArray *texts, JsonArray *ids, const char *label)
{
  guint ok = 0, n = json_array_get_length (texts);
  g_assert_cmpuint (json_array_get_length (ids), ==, n);
  for (guint i = 0; i < n; i++)
    {
      const char *text = json_array_get_string_element (texts, i);
      JsonArray *want = json_array_get_array_element (ids, i);
      gsize n_got;
      g_autofree HzToken *got = hz_tokenizer_encode (t, text, -1, FALSE, FALSE, &n_got);
      gboolean same = n_got == json_array_get_length (want);
      for (gsize k = 0; same && k < n_got; k++)
        same = got[k] == json_array_get_int_element (want, (guint) k);
      if (same)
        {
          ok++;
          continue;
        }
      g_autofree char *esc = g_strescape (text, NULL);
      GString *g = g_string_new (NULL), *w = g_string_new (NULL);
      for (gsize k = 0; k < n_got; k++)
        g_string_append_printf (g, " %d", got[k]);
      for (guint k = 0; k < json_array_get_length (want); k++)
        g_string_append_printf (w, " %" G_GINT64_FORMAT, json_array_get_int_element (want, k));
      g_test_message ("%s: \"%s\"\n  got: %s\n want: %s", label, esc, g->str, w->str);
      g_string_free (g, TRUE);
      g_string_free (w, TRUE);
    }
  return ok;
}
