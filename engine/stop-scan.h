/* engine/stop-scan.h — stop strings over streamed text (shared by hz_generate and HzServe).
 *
 * Text is held back while its tail could still begin a stop string, so a stop string never
 * reaches the caller, not even in part (llama.cpp's server does the same: "partial stop
 * string" hold-back in server.cpp). Matching is on bytes of UTF-8 text; stop strings are
 * matched anywhere in the generated text, the earliest occurrence wins.
 *
 * Thread safety: an HzStopScan belongs to one stream; use it from one thread at a time.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _HzStopScan HzStopScan;

/** A scanner for the NULL-terminated list `stops` (copied; NULL or empty strings are
 *  ignored; an empty list is valid and never matches). Never returns NULL. */
HzStopScan *hz_stop_scan_new (const char *const *stops);
void        hz_stop_scan_free (HzStopScan *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzStopScan, hz_stop_scan_free)

/** Append `text` (may be NULL or "") to the pending text and return what may be emitted
 *  now, as a NUL-terminated string owned by `s` and valid until the next call.
 *  When a stop string is found, *hit is set TRUE and the returned text ends just before
 *  it (the stop string and anything after it are dropped). With `final` TRUE (the stream
 *  ends for another reason) everything pending is returned. `hit` may be NULL. */
const char *hz_stop_scan_push (HzStopScan *s, const char *text, gboolean final, gboolean *hit);

/** Everything still held back (for a stream cut off by cancellation); empties it. Owned
 *  by `s`, valid until the next call. */
const char *hz_stop_scan_flush (HzStopScan *s);

G_END_DECLS
