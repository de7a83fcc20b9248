/* hz-redact-private.h — the ground floor of libhzredact: the types every part shares (tokens,
 * word classes, candidates, the lexicon, the redactor, the scan) and the helpers below the
 * recognizers (tokens and context: hz-text.c; the lexicon: hz-gazetteer.c; the number
 * contexts: hz-numctx.c; validators: hz-validate.c).
 *
 * The floors above it, each with its own header: the scan (hz-scan.h: candidates and overlap
 * resolution), the recognizers (hz-recognizers.h; the names family also rec-names-*.h), the
 * tagger (hz-tagger.h), the pipeline (hz-redact.h). Every recognizer is a function
 * `void hz_rec_X (HzScan *scan)` that reads scan->text (valid UTF-8, byte offsets) and the
 * word tokens, and calls hz_scan_add() for each candidate; hz-scan.c resolves overlaps
 * afterwards. tools/check-layers.py checks that no file calls or includes upwards. */
#pragma once

#include "hanzo/redact.h"

#include <string.h>

/* Token flags. */
enum {
  HZ_TOK_ALPHA     = 1 << 0, /* only letters (apostrophes/hyphens inside allowed) */
  HZ_TOK_DIGIT     = 1 << 1, /* only ASCII digits */
  HZ_TOK_CAP       = 1 << 2, /* first letter upper case, rest not all upper */
  HZ_TOK_UPPER     = 1 << 3, /* every letter upper case (>= 1 letter) */
  HZ_TOK_LOWER     = 1 << 4, /* every letter lower case */
  HZ_TOK_SENT      = 1 << 5, /* first token of a sentence or line */
  HZ_TOK_NONASCII  = 1 << 6,
  HZ_TOK_ELONG     = 1 << 7, /* an ASCII letter three times in a row, any case ("Sooo") */
};

/* Word classes: one bit per built-in word list. Every token is looked up once (lower-cased,
 * one hash probe) in the redactor's lexicon, which maps a word to the OR of the lists that
 * contain it; recognizers then test bits instead of scanning lists. The lists themselves
 * live next to the recognizer that uses them (HzWordList tables, see below). */
enum {
  /* gazetteers (data/) */
  HZ_W_GIVEN = 0, HZ_W_SURNAME, HZ_W_COMMON, HZ_W_PLACE, HZ_W_PLACE_HEAD, HZ_W_CITY,
  HZ_W_GIVEN_FREQ, HZ_W_SURNAME_FREQ, /* the most frequent given names / surnames */
  /* rec-names.c */
  HZ_W_TITLE, HZ_W_NAME_CUE, HZ_W_STRONG_CUE, HZ_W_VERB_AFTER, HZ_W_ORG, HZ_W_CALENDAR,
  HZ_W_LOC_CUE, HZ_W_NAME_CONN, HZ_W_NOT_NAME, HZ_W_ORG_BEFORE, HZ_W_STAGE_PREFIX, HZ_W_LOC_CUE_WEAK, HZ_W_MODAL, HZ_W_DETERMINER,
  HZ_W_PLACE_SUFFIX, HZ_W_COPULA,
  /* rec-address.c */
  HZ_W_ST_SUFFIX, HZ_W_ST_STRONG, HZ_W_ST_PREFIX, HZ_W_UNIT, HZ_W_ADDR_CONN, HZ_W_ZIP_CUE,
  HZ_W_ADDR_CUE,
  /* rec-date.c */
  HZ_W_MONTH, HZ_W_WEEKDAY, HZ_W_WD_BEFORE, HZ_W_WD_AFTER, HZ_W_YEAR_CUE, HZ_W_VERSION_CUE,
  HZ_W_DOB_CUE,
  /* identifiers */
  HZ_W_PHONE_CUE, HZ_W_CARD_CUE, HZ_W_SSN_CUE, HZ_W_CRED_KEY,
  HZ_W_N_BITS
};
#define HZ_WB(x) (G_GUINT64_CONSTANT (1) << (x))

/** A built-in word list: lower-case words, NULL-terminated, and its class bit. */
typedef struct {
  int bit;
  const char *const *words;
} HzWordList;

/** A word token: maximal run of letters/digits (apostrophe or hyphen inside a word kept). */
typedef struct {
  guint32 s, e;     /* byte offsets */
  guint16 flags;
  guint16 nchars;
  guint32 pad_;
  guint64 cls;      /* HZ_WB() bits of the lexicon lists containing the lower-cased word */
  guint64 hash;     /* hash of the lower-cased word (hz_lex_hash), 0 if not computed */
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

/** Word -> class bits for every built-in list (gazetteers and cue lists): open addressing,
 *  linear probing, load <= 1/2, one guint64 per slot = a 22-bit fingerprint of the word's
 *  hash (high bits, never 0) and its HZ_W_N_BITS class bits (low bits), so that the table
 *  of ~110 000 words is 2 MiB. Words are identified by their 64-bit hash (the loader warns
 *  if two list words share one); a word outside the lists is misread as a list word only if
 *  its fingerprint matches within its probe run (about 1 in 2 x 10^6 look-ups). Immutable after
 *  hz_gazetteers_load(), so look-ups need no lock. */
typedef struct {
  guint64 *slots;
  guint32 mask;        /* capacity - 1 (capacity a power of two) */
  guint32 n;
  GHashTable *build;   /* load time only: guint64 hash -> guint64 bits */
  GHashTable *check;   /* load time only: hash -> first key, to detect collisions */
} HzLexicon;

#define HZ_LEX_CLS_BITS 42
G_STATIC_ASSERT (HZ_W_N_BITS <= HZ_LEX_CLS_BITS);

struct _HzRedactor {
  gboolean enabled[HZ_ENTITY_N_TYPES];
  float min_score;
  HzLexicon lex;
  HzModelFunc model;            /* optional model-based pass (rec-model.c) */
  struct _HzTagger *tagger;     /* learned PERSON tagger (hz-tagger.c), NULL: rules only */
  struct _HzTagger *tagger_prose; /* the tagger of encyclopedic prose, NULL: `tagger` for every text */
  gpointer model_data;
  gint model_failed_said;        /* atomic: a failed model pass was reported once */
  GDestroyNotify model_destroy;
};

typedef struct {
  const HzRedactor *r;
  const char *text;
  gsize len;
  guint8 has[256];  /* has[c] != 0 when byte c occurs in text: recognizers skip early */
  gboolean informal; /* chat-style text (rec-names.c sets it) */
  gboolean all_lower; /* no capitalised or upper-case word at all (rec-names.c sets it) */
  gboolean unfinished; /* no final full stop, parenthesis or quote (rec-names.c sets it) */
  HzToken *toks;
  guint n_toks;
  GArray *cands;   /* HzCand */
  guint64 *ident_starts;  /* sorted start bytes of the identifier candidates (validated or
                         * pattern tier, no name or place) found before rec-names.c runs;
                         * owned by the scan (hz_scan_index_identifiers()) */
  guint n_ident_starts;
  struct _HzScanScratch *scratch; /* hz-scan.c's per-thread memory, given back by hz_scan_end() */
} HzScan;

/** Orders two guint64 (qsort(), bsearch(), g_array_sort() comparator). */
static inline int
hz_u64_cmp (gconstpointer a, gconstpointer b)
{
  guint64 x = *(const guint64 *) a, y = *(const guint64 *) b;
  return x < y ? -1 : x > y;
}

/** TRUE when the text contains an ASCII digit (recognizers of numbers skip texts without). */
static inline gboolean
hz_scan_has_digits (const HzScan *scan)
{
  for (int c = '0'; c <= '9'; c++)
    if (scan->has[c])
      return TRUE;
  return FALSE;
}

/* hz-text.c — tokens and context */
/** Tokenize `text` and classify every token (flags, lexicon class bits, hash) into the
 *  array *toks of *cap elements, which is grown with g_renew() as needed (*toks may be NULL
 *  with *cap 0). Returns the number of tokens. Reusing one array across calls saves an
 *  allocation per text. */
guint hz_tokenize (const HzLexicon *lex, const char *text, gsize len, HzToken **toks, gsize *cap);
/** Index of the first token whose start >= `pos` (n_toks if none). */
guint hz_token_at_or_after (const HzScan *scan, gsize pos);
/** TRUE if a token of word class `bit` (HZ_W_*) is among the `window` tokens before token
 *  `ti` (exclusive). Whole words only, by construction. */
gboolean hz_context_before (const HzScan *scan, guint ti, guint window, int bit);
/** Same, for the `window` tokens starting at token `ti` (inclusive). */
gboolean hz_context_after (const HzScan *scan, guint ti, guint window, int bit);
/** Token `t` belongs to word class `bit`. */
static inline gboolean hz_tok_in (const HzToken *t, int bit) { return (t->cls & HZ_WB (bit)) != 0; }
/** Whole-word, ASCII-case-insensitive comparison of token `t` with `w` (lower-case). */
gboolean hz_token_is (const HzScan *scan, const HzToken *t, const char *w);
/** Token t is one of the NULL-terminated `words` (lower-case ASCII; hz_token_is() each).
 *  Compares strings: for rare checks only. */
gboolean hz_token_among (const HzScan *scan, const HzToken *t, const char *const *words);
/** Length in bytes of the quotation mark at byte `a` of text[0..len): '"' and the
 *  typographic double quotes U+201C/U+201D always, and with `singles` also '\'' and
 *  U+2018..U+201B; 0 if none. */
gsize hz_quote_at (const char *text, gsize len, gsize a, gboolean singles);
/** Lower-cased copy of bytes [s, e). */
char *hz_lower_dup (const char *s, gsize n);
/** Look `s`[0..n) up case-insensitively in a lower-case set. */
gboolean hz_set_has (GHashTable *set, const char *s, gsize n);
/** Hash of an already lower-cased key: 8 bytes at a time (zero-padded tail), each chunk
 *  mixed in with a multiply and a shift; never 0 (0 marks "no hash"). */
static inline guint64
hz_key_hash (const char *k, gsize n)
{
  guint64 h = G_GUINT64_CONSTANT (0x9e3779b97f4a7c15) ^ (n * G_GUINT64_CONSTANT (0xff51afd7ed558ccd));
  gsize i = 0;
  for (; i + 8 <= n; i += 8)
    {
      guint64 c;
      memcpy (&c, k + i, 8);
      h = (h ^ c) * G_GUINT64_CONSTANT (0x100000001b3);
      h ^= h >> 29;
    }
  if (i < n)
    {
      guint64 c = 0;
      memcpy (&c, k + i, n - i);
      h = (h ^ c) * G_GUINT64_CONSTANT (0x100000001b3);
      h ^= h >> 29;
    }
  return h ? h : 1;
}

/** Lower-case `s`[0..n) into `buf` (`cap` bytes) and hash it; returns the hash and sets
 *  *out_n, or returns 0 when the lower-cased word does not fit. No allocation. */
guint64 hz_lex_key (const char *s, gsize n, char *buf, gsize cap, gsize *out_n);
/** Class bits of the word `s`[0..n) (any case; may contain spaces for multi-word places). */
guint64 hz_lex_lookup (const HzLexicon *lex, const char *s, gsize n);
/** Class bits of an already lower-cased key with hash `h` (from hz_lex_key). */
guint64 hz_lex_get (const HzLexicon *lex, guint64 h, const char *key, gsize n);
/** ASCII character classes (bit 1: digit, bit 2: letter, bit 4: the other characters of
 *  key-like tokens "_-+/."), one load per test (hz-text.c). */
extern const guint8 hz_ctype[256];
static inline gboolean hz_is_digit (char c) { return (hz_ctype[(guchar) c] & 1) != 0; }
static inline gboolean hz_is_alpha_ascii (char c) { return (hz_ctype[(guchar) c] & 2) != 0; }
static inline gboolean hz_is_alnum_ascii (char c) { return (hz_ctype[(guchar) c] & 3) != 0; }
/** A character of a key-like token: ASCII letter, digit or one of "_-+/." (rec-secret.c). */
static inline gboolean hz_is_key_char (char c) { return hz_ctype[(guchar) c] != 0; }
/** TRUE if the character ending just before byte `pos` is a letter or digit (any script). */
gboolean hz_alnum_before (const char *text, gsize pos);
/** TRUE if the character starting at byte `pos` is a letter or digit (any script). */
gboolean hz_alnum_at (const char *text, gsize len, gsize pos);

/* hz-numctx.c — contexts that make a number no personal data (all pure; thread-safe) */
/** TRUE when the number starting at byte `s` is a version, release or section number by its
 *  context: right after a version or section word or a software name, past blanks and at
 *  most one of ':', '=', '.', '#', '(' ("version 10.7.31.9", "kernel: 6.1.0.21", "ver.
 *  1.2.3.4", "Chrome 120.0.6099.109"; one filler between: "version number 1.2.3.4"), after
 *  '§', or after a product token's '/' ("Chrome/120.0.6099.109"; not a path or URL, not
 *  "ip/10.0.0.1"). Same line only. */
gboolean hz_number_is_version (const HzScan *scan, gsize s);
/** TRUE when one of the two tokens before byte `s` (within 32 bytes) is a word of networking
 *  ("ip", "ipv6", "address", "host", "gateway", "dns", "ping6", ...). */
gboolean hz_number_after_net_word (const HzScan *scan, gsize s);
/** TRUE when token `ti` is digits-hyphen-digits and follows "No."/"Nr."/"Number" (past at
 *  most 3 bytes of ' ', '.', ':', '#') after the name of a form or product ("Form",
 *  "Control", "Model", "Part") or of an agency that numbers forms ("OMB", "IRS", "FCC",
 *  "ISO", ...; a fixed list: other acronyms before "No." often label a person's identifier,
 *  "NHS No.", "ID No."): "OMB No. 1545-0008", "OMB Control No. 1545-0074" are form numbers. */
gboolean hz_form_number_before (const HzScan *scan, guint ti);
/** TRUE when token `ti` comes right after "ISBN", "ISBN-10", "ISBN13", ... (past at most 3
 *  bytes on the same line, or one filler: "ISBN no.", "ISBN is"). */
gboolean hz_isbn_cue_before (const HzScan *scan, guint ti);

/* hz-validate.c (internal helpers) */
int hz_iban_country_length (const char *cc);
gboolean hz_parse_ipv4 (const char *s, gsize n, guint8 out[4]);

/* hz-gazetteer.c */
/** Build r->lex from the built-in gazetteers (GResource) and the recognizers' word lists:
 *  `lists` is a NULL-terminated array of {0, NULL}-terminated HzWordList tables (each
 *  family's, see hz-recognizers.h), added in that order. FALSE with `error` set when a
 *  built-in list cannot be read or is not UTF-8. */
gboolean hz_gazetteers_load (HzRedactor *r, const HzWordList *const *lists, GError **error);
/** Free r->lex (idempotent). */
void hz_gazetteers_free (HzRedactor *r);
/** Load built-in list `name` as a set of its lines; keys point into *buf_out. */
GHashTable *hz_load_set (const char *name, char **buf_out, GError **error);
