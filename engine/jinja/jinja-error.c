/* engine/jinja/jinja-error.c — the error domain and hzj_error_set (see jinja-error.h). */
#include "jinja-error.h"

#include <stdarg.h>

G_DEFINE_QUARK (hz-jinja-error-quark, hz_jinja_error)

void
hzj_error_set (GError **error, int code, const char *pyclass, int line, const char *fmt, ...)
{
  if (error == NULL || *error != NULL)
    return;
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  if (line > 0)
    g_set_error (error, HZ_JINJA_ERROR, code, "%s: %s (template line %d)", pyclass, msg, line);
  else
    g_set_error (error, HZ_JINJA_ERROR, code, "%s: %s", pyclass, msg);
}
