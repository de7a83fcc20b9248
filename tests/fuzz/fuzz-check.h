/* tests/fuzz/fuzz-check.h — what fuzz-tool-calls.c and fuzz-server-request.c share
 * (header-only): CHECK, which aborts with the failed invariant and its place (define
 * FUZZ_NAME first), and fuzz_check_init(), which installs fuzz-glib.h's abort on GLib
 * criticals and warnings once per process. */
#pragma once

#include "fuzz-glib.h"

#define CHECK(cond)                                                                          \
  do {                                                                                       \
    if (!(cond))                                                                             \
      {                                                                                      \
        g_printerr ("%s: invariant failed: %s (%s:%d)\n", FUZZ_NAME, #cond, __FILE__,        \
                    __LINE__);                                                               \
        abort ();                                                                            \
      }                                                                                      \
  } while (0)

/** Once per process: GLib criticals and warnings abort (fuzz_abort_on_critical). */
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
