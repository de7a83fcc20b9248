/* tests/fuzz/fuzz-config-files.c — libFuzzer target for the project's own (GSettings-free)
 * configuration text: hanzo-aggregator's clients file ("client-id token-sha256" lines, '#'
 * comments; hz_aggregator_load_clients()) and the learner's night window of learner.ini
 * ("HH:MM-HH:MM", hz_night_window_parse(); the rest of learner.ini is read with GLib's
 * GKeyFile). The input is the clients file, then NUL and the window string.
 *
 * Invariants: a refused clients file carries an error naming the file and its line; a
 * parsed window has minutes in 0..1439, a refused one leaves the window untouched. Any
 * violation aborts. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aggregator.h"
#include "../../learner/night-schedule.h"
#include "shapes.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define CHECK(cond)                                                                       \
  do {                                                                                    \
    if (!(cond))                                                                          \
      {                                                                                   \
        g_printerr ("fuzz-config-files: invariant failed: %s (%s:%d)\n", #cond, __FILE__, \
                    __LINE__);                                                            \
        abort ();                                                                         \
      }                                                                                   \
  } while (0)

static HzDeltaConfig *cfg;
static char *path;

static void
remove_file (void)
{
  g_unlink (path);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (!cfg)
    {
      cfg = fuzz_lora_delta_config ();
      const char *base = g_file_test ("/dev/shm", G_FILE_TEST_IS_DIR) ? "/dev/shm" : g_get_tmp_dir ();
      path = g_strdup_printf ("%s/hz-fuzz-clients-%d.txt", base, (int) getpid ());
      atexit (remove_file);
    }
  const char *nul = memchr (data, '\0', size);
  const gsize clients_len = nul ? (gsize) (nul - (const char *) data) : size;
  CHECK (g_file_set_contents (path, (const char *) data, (gssize) clients_len, NULL));

  HzAggregator *agg = hz_aggregator_new (cfg, NULL, NULL);
  CHECK (agg != NULL);
  GError *error = NULL;
  if (!hz_aggregator_load_clients (agg, path, &error))
    {
      CHECK (error != NULL && g_str_has_prefix (error->message, path) &&
             strstr (error->message, " line ") != NULL);
      g_error_free (error);
    }
  hz_aggregator_free (agg);

  g_autofree char *window = nul ? g_strndup (nul + 1, size - clients_len - 1) : g_strdup ("");
  HzNightWindow w;
  hz_night_window_init (&w);
  const HzNightWindow before = w;
  if (hz_night_window_parse (window, &w))
    CHECK (w.start_minute >= 0 && w.start_minute < 1440 && w.end_minute >= 0 &&
           w.end_minute < 1440);
  else
    CHECK (w.start_minute == before.start_minute && w.end_minute == before.end_minute);
  return 0;
}
