/* tests/fuzz/run-corpus.c — runs a fuzz target's LLVMFuzzerTestOneInput over every file of
 * the corpus directories given as arguments, without libFuzzer (so `meson test` replays
 * the corpus with any compiler). Prints TAP: one "ok" line per input. A crash or abort
 * inside the target fails the test; an empty or missing corpus is an error too.
 *
 * Usage: fuzz-NAME-corpus DIR... */
#include <glib.h>
#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static int
cmp_str (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(char *const *) a, *(char *const *) b);
}

int
main (int argc, char **argv)
{
  g_autoptr (GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
  for (int a = 1; a < argc; a++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (GDir) dir = g_dir_open (argv[a], 0, &error);
      if (!dir)
        {
          printf ("Bail out! %s\n", error->message);
          return 1;
        }
      const char *name;
      while ((name = g_dir_read_name (dir)))
        {
          g_autofree char *path = g_build_filename (argv[a], name, NULL);
          if (g_file_test (path, G_FILE_TEST_IS_REGULAR))
            g_ptr_array_add (files, g_steal_pointer (&path));
        }
    }
  if (files->len == 0)
    {
      printf ("Bail out! no corpus files in the given directories\n");
      return 1;
    }
  g_ptr_array_sort (files, cmp_str);
  printf ("1..%u\n", files->len);
  for (guint i = 0; i < files->len; i++)
    {
      const char *path = files->pdata[i];
      g_autoptr (GError) error = NULL;
      g_autofree char *data = NULL;
      gsize len;
      if (!g_file_get_contents (path, &data, &len, &error))
        {
          printf ("not ok %u - %s: %s\n", i + 1, path, error->message);
          continue;
        }
      fflush (stdout);  /* the name is visible if the target crashes */
      LLVMFuzzerTestOneInput ((const uint8_t *) data, len);
      g_autofree char *base = g_path_get_basename (path);
      printf ("ok %u - %s (%" G_GSIZE_FORMAT " bytes)\n", i + 1, base, len);
    }
  return 0;
}
