/* hz-redact.h — the pipeline's entry points for the tagger's trainer and the tests
 * (hz-redact.c; the public API is hanzo/redact.h). */
#pragma once

#include "hz-redact-private.h"

struct _HzTagger;

/** Callback of hz_redactor_scan_rules(). */
typedef void (*HzScanHook) (HzScan *scan, gpointer user_data);
/** Run the tokenizer and every rule recognizer (not the tagger, not the model pass) over
 *  `text` (valid UTF-8, `len` bytes) and call `hook` with the scan before overlaps are
 *  resolved (scan->cands holds every candidate). Used by the tagger's trainer. */
void hz_redactor_scan_rules (const HzRedactor *self, const char *text, gsize len,
                             HzScanHook hook, gpointer user_data);
/** Give the redactor `tagger` (owned; NULL: rules only), replacing any previous one. */
void hz_redactor_take_tagger (HzRedactor *self, struct _HzTagger *tagger);
/** Give the redactor the tagger of encyclopedic prose (owned; NULL: none), replacing any
 *  previous one. */
void hz_redactor_take_prose_tagger (HzRedactor *self, struct _HzTagger *tagger);
