/* rec-names-context.h — the tests of a token's neighbours that decide whether capitalised
 * words are a person's name (rec-names-context.c), for the names family (rec-names*.c) and
 * the tagger, and the small token tests they share (static inline: they run for most
 * tokens). All pure: they read the scan only. */
#pragma once

#include "hz-recognizers.h"

#include <string.h>

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

/* Words that are never part of a lower-case name: the cue words of every recognizer. */
#define HZ_NAMES_LOWER_STOP (HZ_WB (HZ_W_NOT_NAME) | HZ_WB (HZ_W_TITLE) | HZ_WB (HZ_W_CALENDAR)          \
                             | HZ_WB (HZ_W_NAME_CUE) | HZ_WB (HZ_W_STRONG_CUE) | HZ_WB (HZ_W_VERB_AFTER) \
                             | HZ_WB (HZ_W_LOC_CUE) | HZ_WB (HZ_W_ORG) | HZ_WB (HZ_W_MONTH)              \
                             | HZ_WB (HZ_W_PHONE_CUE) | HZ_WB (HZ_W_ST_SUFFIX) | HZ_WB (HZ_W_UNIT)       \
                             | HZ_WB (HZ_W_COPULA))

/* End of the token without a trailing possessive ('s, ’s). */static inline gsize
word_end (const HzScan *scan, const HzToken *t)
{
  const char *s = scan->text;
  gsize e = t->e;
  if (e - t->s > 3 && (s[e - 1] == 's' || s[e - 1] == 'S'))
    {
      if (s[e - 2] == '\'')
        return e - 2;
      if (e - t->s > 5 && (guchar) s[e - 4] == 0xE2 && (guchar) s[e - 3] == 0x80 && (guchar) s[e - 2] == 0x99)
        return e - 4;
    }
  return e;
}

/* Only one space (or the dot and space of an initial, or of "St.", "Mt.", "Ft." opening a
 * place's name: "St. Louis") between tokens a and b. */
static inline gboolean
tight (const HzScan *scan, const HzToken *a, const HzToken *b)
{
  gsize g = b->s - a->e;
  const char *t = scan->text;
  if (g == 1)
    return t[a->e] == ' ';
  if (g == 2 && t[a->e] == '.' && t[a->e + 1] == ' ')
    return a->e - a->s == 1
           || (a->e - a->s == 2 && (t[a->s] == 'S' || t[a->s] == 'M' || t[a->s] == 'F') && t[a->s + 1] == 't');
  return FALSE;
}

static inline gboolean
is_cap_word (const HzToken *t)
{
  return (t->flags & HZ_TOK_ALPHA) && (t->flags & HZ_TOK_CAP);
}

/* Token i is a word of list `bit` (no token: FALSE). */
static inline gboolean
tok_in (const HzScan *scan, guint i, int bit)
{
  return i < scan->n_toks && hz_tok_in (&scan->toks[i], bit);
}

/* Token i is one of `words` (no token: FALSE). Compares strings: for rare checks only. */
static inline gboolean
tok_among (const HzScan *scan, guint i, const char *const *words)
{
  return i < scan->n_toks && hz_token_among (scan, &scan->toks[i], words);
}

/* Token i is a verb said of people and not of things too ("met", "said"; not "is"). */
static inline gboolean
verb_after (const HzScan *scan, guint i)
{
  return i < scan->n_toks && hz_tok_in (&scan->toks[i], HZ_W_VERB_AFTER) && !hz_tok_in (&scan->toks[i], HZ_W_COPULA);
}

/* Token i comes right after a strong cue, as a salutation's name does ("Dear | Grace", "hi
 * | Sunny"). */
static inline gboolean
salutation_before (const HzScan *scan, guint i)
{
  return i > 0 && hz_tok_in (&scan->toks[i - 1], HZ_W_STRONG_CUE);
}

/* A strong cue ("named", "hi", "dear", "Mr") among the two tokens before token i. */
static inline gboolean
strong_cue_before (const HzScan *scan, guint i)
{
  return hz_context_before (scan, i, 2, HZ_W_STRONG_CUE);
}

static inline gboolean
n_is_calendar (const HzScan *scan, guint a, guint b)
{
  return b - a == 1 && hz_tok_in (&scan->toks[a], HZ_W_CALENDAR);
}

/* Bytes s[0..n) end with the ASCII `suffix`. */
static inline gboolean
has_suffix_len (const char *s, gsize n, const char *suffix)
{
  gsize k = strlen (suffix);
  return n >= k && memcmp (s + n - k, suffix, k) == 0;
}

/* A possessive written apart, as tokenised text has it ("Belgrano 's army"): token i is
 * "'s" right after a space. */
static inline gboolean
possessive_after (const HzScan *scan, guint i)
{
  if (i >= scan->n_toks)
    return FALSE;
  const HzToken *t = &scan->toks[i];
  const char *x = scan->text;
  return t->s >= 2 && x[t->s - 1] == '\'' && x[t->s - 2] == ' ' && t->e - t->s == 1
         && (x[t->s] == 's' || x[t->s] == 'S');
}

static inline gboolean
tok_is_copula (const HzScan *scan, guint i)
{
  return i < scan->n_toks && hz_tok_in (&scan->toks[i], HZ_W_COPULA) && !hz_token_is (scan, &scan->toks[i], "and");
}

/* Tokenized text (CoNLL tokens joined by spaces): the mark c ('@', '#') stands alone, as a
 * token of its own, right before byte s, with one space between ("RT @ name", "# Tag"). */
static inline gboolean
lone_mark_before (const HzScan *scan, gsize s, char c)
{
  const char *x = scan->text;
  return s >= 2 && x[s - 1] == ' ' && x[s - 2] == c && (s == 2 || g_ascii_isspace (x[s - 3]));
}

/* Token t is a camel-case compound whose first part is an English or function word of three
 * letters or more ("NextToBlow", "FakeNews", "RollerCoaster", "SpaceX"): a hashtag, channel
 * or product name written without its "#". Name prefixes stay names ("McDonald", "DeAndre",
 * "LeQueen"), and so does a lower-case start ("iDubbbz"). */
static inline gboolean
camel_compound (const HzScan *scan, const HzToken *t)
{
  /* mixed case: neither all lower nor all upper, and no word of the lists as a whole (most
   * tokens stop here) */
  const guint64 known = HZ_WB (HZ_W_GIVEN) | HZ_WB (HZ_W_SURNAME) | HZ_WB (HZ_W_COMMON) | HZ_WB (HZ_W_PLACE)
                        | HZ_WB (HZ_W_CITY);
  if ((t->flags & (HZ_TOK_UPPER | HZ_TOK_LOWER | HZ_TOK_NONASCII)) || !(t->flags & HZ_TOK_ALPHA) || t->nchars < 5
      || (t->cls & known))
    return FALSE;
  const char *x = scan->text + t->s;
  gsize n = t->e - t->s, k = 1;
  if (!g_ascii_isupper (x[0]))
    return FALSE;
  while (k < n && !g_ascii_isupper (x[k]))
    k++;
  if (k >= n || k < 3)
    return FALSE;
  guint64 cls = hz_lex_lookup (&scan->r->lex, x, k);
  return (cls & (HZ_WB (HZ_W_COMMON) | HZ_WB (HZ_W_NOT_NAME))) != 0;
}

/* Add a candidate of the names family (tier NAME); a person's name keeps the period of a
 * generational suffix ("Jr."). */
static inline void
names_add (HzScan *scan, gsize s, gsize e, HzEntityType type, float score, const char *rec)
{
  hz_scan_add (scan, s, type == HZ_ENTITY_PERSON ? hz_names_person_end (scan, e) : e, type, score, HZ_TIER_NAME, rec);
}

/* ---- tests of a run's neighbours for the names family ------------------------------------ */

/** Longest place-gazetteer match of words [a, b) starting at a (joined by single spaces);
 *  0 when none. */
guint hz_names_place_match (const HzScan *scan, guint a, guint b);
/** Token i is joined by "and" / "&" / "," to a capitalised word that is a known given name
 *  or surname ("Marrero and Murphy", "Kónya, Becker and Vasquez"). */
gboolean hz_names_coordinated (const HzScan *scan, guint i);
/** Token i is a dialogue speaker: "Ubul: What a wife." at the start of a line. */
gboolean hz_names_speaker_label (const HzScan *scan, guint i);
/** Token i follows the word `prep` after a lower-case word of `words` ("talked to | X",
 *  "the town of | X"). */
gboolean hz_names_after_prep_of (const HzScan *scan, guint i, const char *prep, const char *const *words);
/** The name that ends right before token i is addressed: a comma or "!" and then a word
 *  such as "you", "do" or "please" ("Loey , do you ..."). */
gboolean hz_names_vocative (const HzScan *scan, guint i);
/** Token t is the name of a handle or hashtag ("@FunnyVines", "#ShareTheLove", "# Tag"). */
gboolean hz_names_handle_or_tag (const HzScan *scan, const HzToken *t);
/** The run [i, j) is an item of a list of places ("Walsall , Melbourne , Luton and London"). */
gboolean hz_names_in_place_list (const HzScan *scan, guint i, guint j);
/** A comma and a state, province or country of the place list right after token j - 1,
 *  ending there ("Paxton , Illinois"). */
gboolean hz_names_region_after (const HzScan *scan, guint j);
/** The run starting at token a follows a noun of a thing or group after a determiner ("the
 *  band Deadsy", "their song Hunter"). */
gboolean hz_names_thing_noun_before (const HzScan *scan, guint a);
/** The run [a, b) lies inside a quotation that reads as a title ("Buddha for Mary"), unless
 *  the quotation is the run alone and `lone_name`. */
gboolean hz_names_in_quoted_title (const HzScan *scan, guint a, guint b, gboolean lone_name);
/** The token after the possessive that ends token j - 1 ("Macy's": j) or is token j ("Macy
 *  's": j + 1); 0 when there is none. */
guint hz_names_after_possessive (const HzScan *scan, guint j);
/** The possessive after token j - 1 stands without its noun ("Dillard 's was added"): a
 *  shop's or firm's name. */
gboolean hz_names_elliptical_possessive (const HzScan *scan, guint j);
