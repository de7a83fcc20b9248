/* server/server-log.c — log lines (server-log.h). */
#include "server-log.h"

void
hz_server_say (HzServerLogFunc log, gpointer log_data, const char *fmt, ...)
{
  if (log == NULL)
    return;
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *line = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  log (line, log_data);
}
