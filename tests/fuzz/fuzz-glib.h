/* tests/fuzz/fuzz-glib.h — what fuzz targets that call GLib APIs share (header-only). */
#pragma once

#include <glib.h>
#include <stdlib.h>

/* A GLib critical or warning is a crash that libFuzzer sees: G_DEBUG=fatal-criticals stops
 * the process with SIGTRAP, which libFuzzer does not catch (no artifact would be kept).
 * Install with g_log_set_writer_func (fuzz_abort_on_critical, NULL, NULL). */
static inline GLogWriterOutput
fuzz_abort_on_critical (GLogLevelFlags level, const GLogField *fields, gsize n_fields,
                        gpointer data)
{
  g_log_writer_default (level, fields, n_fields, data);
  if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING))
    abort ();
  return G_LOG_WRITER_HANDLED;
}
