/* tests/hz-test-util.h — helpers shared by the test programs (header-only). */
#pragma once
#include <glib.h>

/** Absolute path of `rel` inside the shared test data (../shared or $HZ_SHARED_DIR), or
 *  NULL after calling g_test_skip() with a clear message when it is absent. Free with g_free. */
static inline char *
hz_test_shared_path (const char *rel)
{
  const char *dir = g_getenv ("HZ_SHARED_DIR");
  g_autofree char *path = g_build_filename (dir ? dir : "../shared", rel, NULL);
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_autofree char *msg = g_strdup_printf ("shared test data not found: %s "
                                              "(set HZ_SHARED_DIR); skipping", path);
      g_test_skip (msg);
      return NULL;
    }
  return g_steal_pointer (&path);
}
