/* server/server-log.h — one line to the server's log function (private to server/). */
#pragma once

#include "hanzo-server.h"

G_BEGIN_DECLS

/** Format a line and hand it to `log` (nothing when `log` is NULL). Main context. */
void hz_server_say (HzServerLogFunc log, gpointer log_data, const char *fmt, ...)
  G_GNUC_PRINTF (3, 4);

G_END_DECLS
