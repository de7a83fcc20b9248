/* hz-redact-private.h — internals shared by the recognizer modules of libhzredact.
 *
 * Every recognizer is a function `void hz_rec_X (HzScan *scan)` that reads scan->text (valid
 * UTF-8, byte offsets) and the word tokens, and calls hz_scan_add() for each candidate.
 * The core (hz-redact.c) resolves overlaps afterwards. */
#pragma once

#include "hanzo/redact.h"

/* Token flags. */
enum {
  HZ_TOK_ALPHA     = 1 << 0, /* only letters (apostrophes/hyphens inside allowed) */
  HZ_TOK_DIGIT     = 1 << 1, /* only ASCII digits */
  HZ_TOK_CAP       = 1 << 2, /* first letter upper case, rest not all upper */
  HZ_TOK_UPPER     = 1 << 3, /* every letter upper case (>= 1 letter) */
  HZ_TOK_LOWER     = 1 << 4, /* every letter lower case */
  HZ_TOK_SENT      = 1 << 5, /* first token of a sentence or line */
  HZ_TOK_NONASCII  = 1 << 6,
};

/** A word token: maximal run of letters/digits (apostrophe or hyphen inside a word kept). */
typedef struct {
  guint32 s, e;     /* byte offsets */
  guint16 flags;
  guint16 nchars;
} HzToken;

/** Candidate tiers: lower wins an overlap before length is compared. */
enum {
  HZ_TIER_VALIDATED = 0, /* checksum/structure validated identifiers */
  HZ_TIER_PATTERN   = 1, /* strong patterns (URL, phone, dates, secrets) */
  HZ_TIER_CONTEXT   = 2, /* addresses */
  HZ_TIER_NAME      = 3, /* gazetteer/capitalisation based names and places */
};

typedef struct {
  gsize s, e;
  HzEntityType type;
  float score;
  int tier;
  const char *rec;
} HzCand;

typedef struct _HzGazetteer HzGazetteer;

struct _HzRedactor {
  gboolean enabled[HZ_ENTITY_N_TYPES];
  float min_score;
  GHashTable *given;    /* lower-case UTF-8 -> GINT_TO_POINTER(1) */
  GHashTable *surname;
  GHashTable *words;    /* common English words */
  GHashTable *places;   /* lower-case place names (multi-word joined by single spaces) */
  char *bufs[4];        /* backing storage of the set keys */
};

typedef struct {
  const HzRedactor *r;
  const char *text;
  gsize len;
  HzToken *toks;
  guint n_toks;
  GArray *cands;   /* HzCand */
} HzScan;

/* hz-redact.c */
void hz_scan_add (HzScan *scan, gsize s, gsize e, HzEntityType type, float score, int tier,
                  const char *rec);

/* hz-text.c — tokens and context */
HzToken *hz_tokenize (const char *text, gsize len, guint *n_out);
/** Index of the first token whose start >= `pos` (n_toks if none). */
guint hz_token_at_or_after (const HzScan *scan, gsize pos);
/** TRUE if one of the whole words in `words` (lower-case ASCII, NULL-terminated) occurs
 *  case-insensitively among the `window` tokens before token `ti` (exclusive). */
gboolean hz_context_before (const HzScan *scan, guint ti, guint window, const char *const *words);
/** Same, for the `window` tokens starting at token `ti` (inclusive). */
gboolean hz_context_after (const HzScan *scan, guint ti, guint window, const char *const *words);
/** Whole-word, ASCII-case-insensitive comparison of token `t` with `w` (lower-case). */
gboolean hz_token_is (const HzScan *scan, const HzToken *t, const char *w);
/** Lower-cased copy of bytes [s, e). */
char *hz_lower_dup (const char *s, gsize n);
/** Look `s`[0..n) up case-insensitively in a lower-case set. */
gboolean hz_set_has (GHashTable *set, const char *s, gsize n);
static inline gboolean hz_is_digit (char c) { return c >= '0' && c <= '9'; }
static inline gboolean hz_is_alpha_ascii (char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
static inline gboolean hz_is_alnum_ascii (char c) { return hz_is_digit (c) || hz_is_alpha_ascii (c); }
/** TRUE if the character ending just before byte `pos` is a letter or digit (any script). */
gboolean hz_alnum_before (const char *text, gsize pos);
/** TRUE if the character starting at byte `pos` is a letter or digit (any script). */
gboolean hz_alnum_at (const char *text, gsize len, gsize pos);

/* recognizers, one file per family */
void hz_rec_email_url (HzScan *scan);   /* rec-email-url.c */
void hz_rec_card (HzScan *scan);        /* rec-card.c */
void hz_rec_iban (HzScan *scan);        /* rec-iban.c */
void hz_rec_net (HzScan *scan);         /* rec-net.c: IPv4, IPv6, MAC */
void hz_rec_ssn (HzScan *scan);         /* rec-ssn.c */
void hz_rec_phone (HzScan *scan);       /* rec-phone.c */
void hz_rec_secret (HzScan *scan);      /* rec-secret.c */
void hz_rec_date (HzScan *scan);        /* rec-date.c */
void hz_rec_address (HzScan *scan);     /* rec-address.c */
void hz_rec_names (HzScan *scan);       /* rec-names.c: PERSON, LOCATION */

/* rec-date.c: length of a numeric calendar date (optionally with a time) at the start of
 * s[0..n), 0 if there is none. Used by the phone recognizer to avoid dates. */
gsize hz_date_prefix_len (const char *s, gsize n);

/* hz-validate.c (internal helpers) */
int hz_iban_country_length (const char *cc);
gboolean hz_parse_ipv4 (const char *s, gsize n, guint8 out[4]);

/* hz-gazetteer.c */
gboolean hz_gazetteers_load (HzRedactor *r, GError **error);
void hz_gazetteers_free (HzRedactor *r);
/** Load built-in list `name` as a set of its lines; keys point into *buf_out. */
GHashTable *hz_load_set (const char *name, char **buf_out, GError **error);
