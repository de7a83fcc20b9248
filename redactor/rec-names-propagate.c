/* rec-names-propagate.c — what the names found in a text add in the same text: names joined
 * to a found one by "and" / "&", and the other occurrences of a found name (any case, whole
 * words; a full name's surname on its own). Runs after the runs are judged. */
#include "rec-names-propagate.h"

#include <stdlib.h>
#include <string.h>

/* Token i can be a name joined to a found one by "and" or "&" ("emma and kaite", "Jay &
 * Trish"): a word of three letters or more that is no English word (a given name may be),
 * place, cue word, handle or camel-case compound, written like the found name (capitalised
 * or lower case). */
static gboolean
coordinate_name (const HzScan *scan, guint i, const HzToken *found)
{
  if (i >= scan->n_toks)
    return FALSE;
  const HzToken *t = &scan->toks[i];
  guint16 cf = (found->flags & HZ_TOK_LOWER) ? HZ_TOK_LOWER : HZ_TOK_CAP;
  if (!(t->flags & HZ_TOK_ALPHA) || !(t->flags & cf) || t->nchars < 3 || (t->cls & HZ_NAMES_LOWER_STOP)
      || (t->cls & (HZ_WB (HZ_W_PLACE) | HZ_WB (HZ_W_CITY))) || hz_names_handle_or_tag (scan, t) || camel_compound (scan, t))
    return FALSE;
  if ((t->cls & HZ_WB (HZ_W_COMMON)) && !(t->cls & HZ_WB (HZ_W_GIVEN_FREQ)))
    return FALSE;
  /* not the first word of something longer ("Atlantic City", "Williamson Orchestra",
   * "Király u. 15") */
  if (i + 1 < scan->n_toks && scan->toks[i + 1].s - t->e <= 2
      && ((scan->toks[i + 1].flags & (HZ_TOK_CAP | HZ_TOK_UPPER | HZ_TOK_DIGIT))
          || (scan->toks[i + 1].cls & (HZ_WB (HZ_W_ST_SUFFIX) | HZ_WB (HZ_W_PLACE_SUFFIX)))))
    return FALSE;
  return word_end (scan, t) == t->e;
}

/* Only " and " or " & " (one space each side) between tokens a and b. */
static gboolean
joined_by_and (const HzScan *scan, guint a, guint b)
{
  if (b != a + 1 && b != a + 2)
    return FALSE;
  if (b == a + 2)
    return hz_token_is (scan, &scan->toks[a + 1], "and") && tight (scan, &scan->toks[a], &scan->toks[a + 1])
           && tight (scan, &scan->toks[a + 1], &scan->toks[b]);
  const char *x = scan->text;
  return scan->toks[b].s - scan->toks[a].e == 3 && x[scan->toks[a].e] == ' ' && x[scan->toks[a].e + 1] == '&'
         && x[scan->toks[a].e + 2] == ' ';
}

/* Names joined by "and" / "&" to a name found with some confidence (one pass over the
 * candidates found so far in this text; each adds at most one name on each side). */
void
hz_names_add_coordinated (HzScan *scan, guint first_cand)
{
  guint end = scan->cands->len;
  for (guint c = first_cand; c < end; c++)
    {
      HzCand k = g_array_index (scan->cands, HzCand, c);
      if (k.type != HZ_ENTITY_PERSON || k.score < 0.4f)
        continue;
      guint a = hz_token_at_or_after (scan, k.s), b = hz_token_at_or_after (scan, k.e);
      if (a >= b || b > scan->n_toks)
        continue;
      const HzToken *found = &scan->toks[a];
      for (guint j = b; j <= b + 1 && j < scan->n_toks; j++)
        if (joined_by_and (scan, b - 1, j) && coordinate_name (scan, j, found))
          hz_scan_add (scan, scan->toks[j].s, scan->toks[j].e, HZ_ENTITY_PERSON, 0.4f, HZ_TIER_NAME, "name-coord");
      for (guint j = a >= 2 ? a - 2 : 0; j < a; j++)
        if (joined_by_and (scan, j, a) && coordinate_name (scan, j, found))
          hz_scan_add (scan, scan->toks[j].s, scan->toks[j].e, HZ_ENTITY_PERSON, 0.4f, HZ_TIER_NAME, "name-coord");
    }
}

/* A name to look for again: its first word's hash, where it was found, its byte length, and
 * whether it is a lone surname (then the whole token must match). */
typedef struct {
  guint64 h;
  gsize s, n;
  float score;
  gboolean word_only;
  /* a name that is also an English word or a month, found capitalised ("Dear May,",
   * "Thanks Will"): only its capitalised repeats inside a sentence and not after a place
   * or time preposition count ("you may leave", "Will you come?", "in May" are words) */
  gboolean cased;
} Repeat;

/* The name's token t is also a word or a month and is written capitalised. */
static gboolean
word_like_name (const HzToken *t)
{
  return (t->cls & (HZ_WB (HZ_W_COMMON) | HZ_WB (HZ_W_MONTH) | HZ_WB (HZ_W_WEEKDAY) | HZ_WB (HZ_W_CALENDAR)))
         && (t->flags & (HZ_TOK_CAP | HZ_TOK_UPPER));
}

static int
repeat_cmp (gconstpointer a, gconstpointer b)
{
  const Repeat *x = a, *y = b;
  return x->h < y->h ? -1 : x->h > y->h;
}

/* Hash of the lower-cased first word of bytes [s, s + n), as hz_tokenize computes it. */
static guint64
first_word_hash (const HzScan *scan, gsize s, gsize n)
{
  gsize w = 0;
  while (w < n && scan->text[s + w] != ' ')
    w++;
  char buf[64];
  gsize kn;
  return hz_lex_key (scan->text + s, w, buf, sizeof buf, &kn);
}

/* a LOCATION guessed from a cue alone ("to X", "in X"; recognizer "place-cue") */
static gboolean
is_cue_place (const HzCand *k)
{
  return k->type == HZ_ENTITY_LOCATION && k->rec && strcmp (k->rec, "place-cue") == 0;
}

enum { MAX_NAMES = 256 };

/* The names to look for again, from the PERSON candidates [first_cand, ..) found with a score
 * of 0.5 or more: each name once, and a full name's surname on its own unless it is an
 * English word or shorter than three bytes. Fills pats (room for 2 * MAX_NAMES: at most two
 * patterns per name, on the caller's stack) and returns how many. */
static guint
collect_repeats (const HzScan *scan, guint first_cand, Repeat *pats)
{
  guint end = scan->cands->len;
  guint n_pats = 0;
  guint64 seen[MAX_NAMES];
  guint n_seen = 0;
  for (guint c = first_cand; c < end && n_seen < MAX_NAMES; c++)
    {
      HzCand k = g_array_index (scan->cands, HzCand, c);
      if (k.type != HZ_ENTITY_PERSON || k.score < 0.5f || k.e - k.s > 80)
        continue;
      char buf[128];
      gsize kn;
      guint64 full = hz_lex_key (scan->text + k.s, k.e - k.s, buf, sizeof buf, &kn);
      gboolean dup = !full;
      for (guint q = 0; q < n_seen && !dup; q++)
        dup = seen[q] == full;
      if (dup)
        continue;
      seen[n_seen++] = full;
      guint a = hz_token_at_or_after (scan, k.s), b = hz_token_at_or_after (scan, k.e);
      Repeat r = { first_word_hash (scan, k.s, k.e - k.s), k.s, k.e - k.s, k.score * 0.9f, FALSE,
                   b == a + 1 && word_like_name (&scan->toks[a]) };
      if (r.h)
        pats[n_pats++] = r;
      if (b - a >= 2)
        {
          const HzToken *last = &scan->toks[b - 1];
          gsize ln = word_end (scan, last) - last->s;
          if (ln < 3 || (hz_lex_lookup (&scan->r->lex, scan->text + last->s, ln) & HZ_WB (HZ_W_COMMON)))
            continue;
          Repeat sr = { first_word_hash (scan, last->s, ln), last->s, ln, k.score * 0.8f, TRUE, FALSE };
          if (sr.h)
            pats[n_pats++] = sr;
        }
    }
  return n_pats;
}

/* Marks cov[ti] for the tokens inside a candidate already found (they are not searched
 * again: keeps the number of candidates linear in the text, a long text repeating a few
 * names), except inside a place guessed from its cue alone ("say hello to Quenby": a repeat
 * of a name found in the text is that person). TRUE when there is such a place guess. */
static gboolean
mark_found_tokens (const HzScan *scan, guint8 *cov)
{
  gboolean guessed_place = FALSE;
  for (guint c = 0; c < scan->cands->len; c++)
    {
      const HzCand *k = &g_array_index (scan->cands, HzCand, c);
      if (is_cue_place (k))
        {
          guessed_place = TRUE;
          continue;
        }
      for (guint ti = hz_token_at_or_after (scan, k->s); ti < scan->n_toks && scan->toks[ti].s < k->e; ti++)
        cov[ti] = 1;
    }
  return guessed_place;
}

/* The hash of token t's word without a possessive 's (which ends at we), as the names'
 * first words are hashed. */
static guint64
word_hash (const HzScan *scan, const HzToken *t, gsize we)
{
  if (we == t->e)
    return t->hash;
  char buf[64];
  gsize kn;
  return hz_lex_key (scan->text + t->s, we - t->s, buf, sizeof buf, &kn);
}

/* The first of the n patterns (sorted by hash) with hash h, or n. */
static guint
first_with_hash (const Repeat *pats, guint n, guint64 h)
{
  guint lo = 0, hi = n;
  while (lo < hi)
    {
      guint mid = (lo + hi) / 2;
      if (pats[mid].h < h)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

/* Token ti (its word ending at we) starts another occurrence of the name r: the same bytes
 * in any case, a whole word (for a lone surname the whole token), and for a name that is
 * also a word capitalised inside a sentence and not after "in", "on", "at" and the like. */
static gboolean
repeats_name (const HzScan *scan, guint ti, gsize we, const Repeat *r)
{
  const HzToken *t = &scan->toks[ti];
  gsize n = r->n;
  if (t->s == r->s || t->s + n > scan->len)
    return FALSE;
  if (g_ascii_strncasecmp (scan->text + t->s, scan->text + r->s, n) != 0)
    return FALSE;
  if (r->word_only ? we - t->s != n
                   : (hz_alnum_at (scan->text, scan->len, t->s + n) && scan->text[t->s + n] != '\''))
    return FALSE;
  if (r->cased && (!(t->flags & (HZ_TOK_CAP | HZ_TOK_UPPER)) || (t->flags & HZ_TOK_SENT)
                   || (ti > 0 && (hz_tok_in (&scan->toks[ti - 1], HZ_W_LOC_CUE)
                                  || hz_tok_in (&scan->toks[ti - 1], HZ_W_LOC_CUE_WEAK)
                                  || hz_token_is (scan, &scan->toks[ti - 1], "on")))))
    return FALSE;
  return TRUE;
}

/* Adds a "name-repeat" candidate for each occurrence of one of the n_pats patterns (sorted
 * by hash) at a token that cov does not mark. One pass over the tokens: each token's hash
 * is looked up (binary search) among the hashes of the names' first words. */
static void
add_repeats (HzScan *scan, const Repeat *pats, guint n_pats, const guint8 *cov)
{
  for (guint ti = 0; ti < scan->n_toks; ti++)
    {
      const HzToken *t = &scan->toks[ti];
      if (!(t->flags & HZ_TOK_ALPHA) || cov[ti])
        continue;
      gsize we = word_end (scan, t);
      guint64 h = word_hash (scan, t, we);
      if (!h)
        continue;
      for (guint p = first_with_hash (pats, n_pats, h); p < n_pats && pats[p].h == h; p++)
        if (repeats_name (scan, ti, we, &pats[p]))
          hz_scan_add (scan, t->s, t->s + pats[p].n, HZ_ENTITY_PERSON, pats[p].score, HZ_TIER_NAME, "name-repeat");
    }
}

/* Drops the place guesses ("place-cue") that a repeat added from candidate n_before on
 * covers: the repeat of a found name is that person. */
static void
drop_covered_place_guesses (HzScan *scan, guint n_before)
{
  guint w = 0;
  for (guint c = 0; c < scan->cands->len; c++)
    {
      HzCand k = g_array_index (scan->cands, HzCand, c);
      gboolean covered = FALSE;
      for (guint q = n_before; q < scan->cands->len && is_cue_place (&k) && !covered; q++)
        {
          const HzCand *r = &g_array_index (scan->cands, HzCand, q);
          covered = r->s <= k.s && k.e <= r->e;
        }
      if (!covered)
        g_array_index (scan->cands, HzCand, w++) = k;
    }
  g_array_set_size (scan->cands, w);
}

/* Other occurrences, in any case, of the names found so far (whole words only), and the
 * surname of a full name on its own. */
void
hz_names_propagate (HzScan *scan, guint first_cand)
{
  if (scan->cands->len == first_cand)
    return;
  Repeat pats[2 * MAX_NAMES];
  guint n_pats = collect_repeats (scan, first_cand, pats);
  if (n_pats == 0)
    return;
  qsort (pats, n_pats, sizeof pats[0], repeat_cmp);
  guint8 cov_stack[1024];
  guint8 *cov = scan->n_toks + 1 <= sizeof cov_stack ? cov_stack : g_malloc (scan->n_toks + 1);
  memset (cov, 0, scan->n_toks + 1);
  gboolean guessed_place = mark_found_tokens (scan, cov);
  guint n_before = scan->cands->len;
  add_repeats (scan, pats, n_pats, cov);
  if (cov != cov_stack)
    g_free (cov);
  if (guessed_place && scan->cands->len > n_before)
    drop_covered_place_guesses (scan, n_before);
}
