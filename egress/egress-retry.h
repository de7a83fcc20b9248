/* egress/egress-retry.h — the retry policy of egress/'s two HTTP clients (the federation
 * client, egress.h, and the Hub download channel, hub.h): a header of its own so that both
 * and their shared helpers (egress-private.h) can name it without including each other
 * (issue 26: no include loop inside egress/). Plain data; no functions.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/** Retry policy: what each field bounds is said in egress.h's opening comment ("Reliability"). */
typedef struct {
  guint max_attempts;        /* >= 1 */
  guint initial_backoff_ms;
  guint max_backoff_ms;
  guint timeout_s;           /* per I/O operation, >= 1 */
} HzEgressRetry;

/** 5 attempts, 500 ms .. 30 s backoff, 30 s I/O timeout. */
#define HZ_EGRESS_RETRY_DEFAULT ((HzEgressRetry) { 5, 500, 30000, 30 })

G_END_DECLS
