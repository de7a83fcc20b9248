/* rec-names-propagate.h — what the names found in a text add in the same text
 * (rec-names-propagate.c), called by the run finder (rec-names.c). */
#pragma once

#include "rec-names-context.h"

/** Add the names joined by "and" / "&" to a PERSON candidate at index >= first_cand. */
void hz_names_add_coordinated (HzScan *scan, guint first_cand);
/** Add the other occurrences of the PERSON candidates at index >= first_cand (any case,
 *  whole words) and a full name's surname on its own; drop place guesses they cover. */
void hz_names_propagate (HzScan *scan, guint first_cand);
