/* hz-recognizers.h — the rule recognizers of libhzredact, one file per family (rec-*.c), the
 * helpers one recognizer offers another, and each family's word lists. Called by the
 * pipeline (hz-redact.c); each recognizer reads the scan and calls hz_scan_add() (hz-scan.h).
 * The names family's helpers for the tagger are in rec-names-context.h. */
#pragma once

#include "hz-scan.h"

/* Each recognizer adds its candidates to `scan` (hz_scan_add()) and allocates nothing that
 * outlives the call; it skips types the redactor has disabled. Run in this order by the
 * pipeline: the names recognizer reads what the others found (scan->ident_starts). */
void hz_rec_email_url (HzScan *scan);   /* rec-email-url.c: EMAIL, URL */
void hz_rec_card (HzScan *scan);        /* rec-card.c: CREDIT_CARD */
void hz_rec_iban (HzScan *scan);        /* rec-iban.c: IBAN */
void hz_rec_net (HzScan *scan);         /* rec-net.c: IPv4, IPv6, MAC */
void hz_rec_ssn (HzScan *scan);         /* rec-ssn.c: US_SSN */
void hz_rec_natid (HzScan *scan);       /* rec-natid.c: NATIONAL_ID (validated national ids) */
void hz_rec_phone (HzScan *scan);       /* rec-phone.c: PHONE */
void hz_rec_secret (HzScan *scan);      /* rec-secret.c: SECRET */
void hz_rec_date (HzScan *scan);        /* rec-date.c: DATE_TIME */
void hz_rec_address (HzScan *scan);     /* rec-address.c: STREET_ADDRESS, LOCATION */
void hz_rec_names (HzScan *scan);       /* rec-names.c: PERSON, LOCATION */
void hz_rec_model (HzScan *scan);       /* rec-model.c: verified spans of a local model */

/** TRUE when token i is a word of one of rec-natid.c's cues ("aadhaar", "codice", "hetu"),
 *  in any case. Pure. (rec-natid.c; the names recognizer reads such words as labels) */
gboolean hz_natid_cue_word (const HzScan *scan, guint i);

/** Length of a numeric calendar date (optionally with a time) at the start of s[0..n), 0 if
 *  there is none. Pure. (rec-date.c; the phone recognizer uses it to avoid dates) */
gsize hz_date_prefix_len (const char *s, gsize n);

/* The word lists of each recognizer family, {0, NULL}-terminated; the pipeline registers
 * them in the lexicon (hz_gazetteers_load()). */
extern const HzWordList hz_names_lists[];    /* rec-names.c */
extern const HzWordList hz_address_lists[];  /* rec-address.c */
extern const HzWordList hz_date_lists[];     /* rec-date.c */
extern const HzWordList hz_ident_lists[];    /* rec-phone.c (phone, card, ssn, secret cues) */
