/* hz-scan.h — the scan of one text: its tokens and candidates, hz_scan_add() for the
 * recognizers, and overlap resolution (hz-scan.c). Below the recognizers: nothing here calls
 * a recognizer, the tagger or the pipeline. */
#pragma once

#include "hz-redact-private.h"

/** Add a candidate span [s, e) (byte offsets into scan->text) of `type` with `score`
 *  (clamped to 1), `tier` (HZ_TIER_*: a lower tier wins an overlap) and the recognizer name
 *  `rec` (a static string). Dropped when empty, past the text, of a type the redactor has
 *  disabled or scored below its minimum. Recognizers call it for every candidate. */
void hz_scan_add (HzScan *scan, gsize s, gsize e, HzEntityType type, float score, int tier,
                  const char *rec);

/** Start the scan of `text` (valid UTF-8, `len` bytes) for redactor `r`: set scan->r, text,
 *  len, tokenize and classify the text into scan->toks and give scan->cands an empty array,
 *  both per-thread scratch memory reused from one scan to the next (a nested scan on the
 *  same thread, from a model callback, gets its own). scan->has must be filled by the
 *  caller; the other fields must be zero. End with hz_scan_end(). */
void hz_scan_begin (HzScan *scan, const HzRedactor *r, const char *text, gsize len);

/** Fill scan->ident_starts with the sorted start bytes of the identifier candidates found so
 *  far (validated or pattern tier, no name or place), for hz_names_identifier_label(). */
void hz_scan_index_identifiers (HzScan *scan);

/** Resolve overlaps among scan->cands in place and return that array: greedy selection in
 *  priority order (lower tier, then longer, higher score, earlier start, lower type), then
 *  sorted by start; adjacent or space-separated PERSON pieces are merged (not when the later
 *  one is of recognizer `unmerged`, the tagger's, which finds whole names), also across a
 *  quoted nickname ("William \"Buckshot\" May"), and a name ending in an initial keeps the
 *  initial's period ("William L."). The result is sorted and disjoint. */
GArray *hz_scan_resolve (HzScan *scan, const char *unmerged);

/** End the scan: free scan->ident_starts and give the scratch memory back (memory above
 *  1 MiB is freed). scan->toks and scan->cands are invalid afterwards. */
void hz_scan_end (HzScan *scan);
