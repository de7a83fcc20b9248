/* tests/fuzz/fuzz-check.h — what the newer fuzz targets share (header-only): CHECK, which
 * aborts with the failed invariant and its place (define FUZZ_NAME first), and
 * fuzz_check_init(), which makes GLib's criticals and warnings abort too: under
 * G_DEBUG=fatal-criticals GLib stops the process with SIGTRAP, which libFuzzer does not
 * catch (no artifact would be kept). */
#pragma once

#include <glib.h>
#include <stdlib.h>

#define CHECK(cond)                                                                          \
  do {                                                                                       \
    if (!(cond))                                                                             \
      {                                                                                      \
        g_printerr ("%s: invariant failed: %s (%s:%d)\n", FUZZ_NAME, #cond, __FILE__,        \
                    __LINE__);                                                               \
        abort ();                                                                            \
      }                                                                                      \
  } while (0)

static GLogWriterOutput
fuzz_abort_on_critical (GLogLevelFlags level, const GLogField *fields, gsize n_fields,
                        gpointer data)
{
  g_log_writer_default (level, fields, n_fields, data);
  if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING))
    abort ();
  return G_LOG_WRITER_HANDLED;
}

/** Once per process: GLib criticals and warnings abort. */
static inline void
fuzz_check_init (void)
{
  static gboolean done;
  if (!done)
    {
      g_log_set_writer_func (fuzz_abort_on_critical, NULL, NULL);
      done = TRUE;
    }
}
