/* rec-names.h — what the names family (rec-names*.c) offers the tagger and the other
 * recognizers: tests of a token's context that decide whether a capitalised word is a
 * person, and the recognizer name of @-mentions. All pure: they read the scan only. */
#pragma once

#include "hz-recognizers.h"

/** The recognizer name of @-mentions' account names (PERSON candidates). */
#define HZ_REC_MENTION "mention"

/** TRUE when token i is one of the three names of "A, B and C" (single capitalised words)
 *  after a word taking a company ("from", "at", "for", "joined", ...): a firm named after
 *  its partners ("Hawkins, Richardson and Santana"), no person. */
gboolean hz_names_firm_of_partners (const HzScan *scan, guint i);
/** TRUE when token i is a copula whose complement names a kind of place or organisation
 *  within the next few words ("Aisby is a village"): its subject is no person. */
gboolean hz_names_describes_thing (const HzScan *scan, guint i);
/** Token i follows "to" after a lower-case word that takes a person there ("talked to |
 *  Jens Quenby", "a letter to | Tamsin Ode"): what follows is a person, not a place. */
gboolean hz_names_to_person (const HzScan *scan, guint i);
/** TRUE when token i is the label of a form field ("Phone:", "E-mail:", "Personal Info:"):
 *  a word of the English word list or the not-a-name list, not a given name or surname,
 *  right before a colon. It is no name and ends the name before it. */
gboolean hz_names_field_label (const HzScan *scan, guint i);
/** TRUE when tokens [i, j) are all words of identifier cues (rec-natid.c's, "Aadhaar",
 *  "Steuer-ID", "Codice Fiscale", "HETU") and so a label, not a name: one that is also in
 *  the name lists ("Sin", "Nie") only right before an identifier found by an earlier
 *  recognizer (validated or pattern tier, no name or place; past at most three spaces, ':'
 *  or '#': "Sin Lee" stays a name, "SIN: 046 454 286" is a label). */
gboolean hz_names_identifier_label (const HzScan *scan, guint i, guint j);
/** End byte of a person's name that ends at byte `e`: with the period of a generational
 *  suffix ("Clay Tice Jr.": "Jr", "Sr", "Jnr" or "Snr" as a word of its own right before a
 *  '.' at `e`; the abbreviation's period belongs to the name, as in CoNLL-style
 *  annotation), else `e`. */
gsize hz_names_person_end (const HzScan *scan, gsize e);
/** TRUE when token t comes right after an '@' ("@name", or "@ name" in tokenized text).
 *  Such tokens are the rules' to judge (recognizer "mention": an account name, or nothing
 *  where '@' is "at" or part of an e-mail address). */
gboolean hz_names_after_at (const HzScan *scan, const HzToken *t);
