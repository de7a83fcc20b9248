/* rec-names.c — PERSON and LOCATION from capitalisation, gazetteers and context cues.
 *
 * Runs of capitalised words (initials and particles such as "van" or "de" allowed inside)
 * are scored with: the given-name and surname gazetteers (US Census 1990 / SSA, see
 * data/SOURCE.md), a list of common English words (SCOWL) that marks ordinary capitalised
 * words, titles ("Dr", "Mrs"), cue phrases before the run ("my name is", "hi", "dear",
 * "ping", "thanks", "by"), organisation words after it ("Inc", "University") and the place
 * gazetteer (countries, regions, cities). Lower-case and ALL-CAPS text need gazetteer or cue
 * evidence. A name found once is also found at its other occurrences in the same text,
 * whatever their case. All cue matching is on whole words. */
#include "hz-redact-private.h"

#include <string.h>

static const char *const titles[] = {
  "mr", "mrs", "ms", "miss", "mister", "dr", "doctor", "prof", "professor", "sir", "madam",
  "mx", "lady", "lord", "rev", "reverend", "fr", "sr", "sra", "herr", "frau", "mme", "mlle",
  "dame", "captain", "capt", "sgt", "sergeant", "officer", "judge", "senator", "president",
  "nurse", "uncle", "aunt", "auntie", "grandma", "grandpa", NULL,
};

/* Words right before a name (checked on the 1-3 tokens before the run). */
static const char *const cues_before[] = {
  "name", "named", "called", "hi", "hello", "hey", "dear", "thanks", "thank", "regards",
  "cheers", "love", "sincerely", "signed", "by", "with", "meet", "met", "ask", "tell", "ping",
  "forward", "cc", "contact", "user", "customer", "patient", "client", "attn", "attention",
  "from", "wife", "husband", "son", "daughter", "brother", "sister", "friend", "mom", "dad",
  "mother", "father", "boss", "colleague", "manager", "congrats", "congratulations", "reach",
  "email", "text", "message", "call", "bye", "yo", "sorry", "am", "im", "i'm", "is", NULL,
};

/* Strong cues: a single following word (any case) is a name when not a common word. */
static const char *const strong_cues[] = { "name", "named", "called", "dear", "hi", "hey",
                                           "hello", "ping", "thanks", "regards", "cheers",
                                           "sincerely", "love", "attn", "mr", "mrs", "ms", "dr",
                                           NULL };

static const char *const verbs_after[] = { "said", "says", "wrote", "told", "asked", "replied",
                                           "born", "died", "married", "who", "whose", "and", NULL };

static const char *const org_words[] = {
  "inc", "corp", "corporation", "ltd", "llc", "plc", "gmbh", "ag", "sa", "co", "company",
  "group", "university", "college", "school", "bank", "records", "band", "club", "fc",
  "united", "association", "institute", "foundation", "society", "party", "church",
  "hospital", "airlines", "airways", "motors", "studios", "entertainment", "media", "news",
  "times", "press", "league", "council", "committee", "department", "ministry", "agency",
  "services", "systems", "technologies", "solutions", "international", "academy", "museum",
  "river", "mountains", "lake", "island", "islands", "street", "road", "avenue", "county",
  "city", "state", "province", "district", "river", "valley", "bay", "park", "festival",
  "award", "awards", "cup", "championship", "series", "album", "show", "magazine", "journal",
  "network", "channel", "radio", "tv", "games", "war", "act", "prize", "church", "orchestra",
  "team", "army", "navy", "force", "court", "station", "airport", "hotel", "centre", "center",
  NULL,
};

/* Calendar words are never names on their own ("before Friday"). */
static const char *const calendar[] = { "monday", "tuesday", "wednesday", "thursday", "friday",
                                        "saturday", "sunday", "january", "february", "march",
                                        "april", "june", "july", "august", "september",
                                        "october", "november", "december", NULL };

static const char *const loc_cues[] = { "in", "from", "to", "near", "visit", "visiting",
                                        "flew", "at", "across", "around", "toward", "towards",
                                        "outside", "into", NULL };

static const char *const connectors[] = { "van", "von", "de", "der", "den", "da", "di", "del",
                                          "della", "dos", "das", "du", "le", "la", "al", "el",
                                          "bin", "ibn", "ben", "af", "zu", "y", NULL };

typedef struct {
  gsize s, e;        /* byte range of the word without a possessive 's */
  gboolean given, sur, common, place, initial, conn, cap;
} Word;

static gboolean
in_list (const HzScan *scan, const HzToken *t, const char *const *list)
{
  for (const char *const *w = list; *w; w++)
    if (hz_token_is (scan, t, *w))
      return TRUE;
  return FALSE;
}

/* End of the token without a trailing possessive ('s, ’s). */
static gsize
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

static void
word_info (const HzScan *scan, const HzToken *t, Word *w)
{
  const HzRedactor *r = scan->r;
  w->s = t->s;
  w->e = word_end (scan, t);
  gsize n = w->e - w->s;
  w->initial = t->nchars == 1 && (t->flags & HZ_TOK_UPPER);
  w->conn = in_list (scan, t, connectors) && (t->flags & HZ_TOK_LOWER);
  w->cap = (t->flags & HZ_TOK_ALPHA) && (t->flags & (HZ_TOK_CAP | HZ_TOK_UPPER));
  w->given = n >= 2 && hz_set_has (r->given, scan->text + w->s, n);
  w->sur = n >= 2 && hz_set_has (r->surname, scan->text + w->s, n);
  w->common = hz_set_has (r->words, scan->text + w->s, n);
  w->place = hz_set_has (r->places, scan->text + w->s, n);
}

/* Only one space (or an initial's dot and a space) between tokens a and b. */
static gboolean
tight (const HzScan *scan, const HzToken *a, const HzToken *b)
{
  gsize g = b->s - a->e;
  const char *t = scan->text;
  if (g == 1)
    return t[a->e] == ' ';
  if (g == 2)
    return t[a->e] == '.' && t[a->e + 1] == ' ' && a->e - a->s == 1;
  return FALSE;
}

static gboolean
is_shouting (const HzScan *scan)
{
  guint up = 0, alpha = 0;
  for (guint i = 0; i < scan->n_toks; i++)
    if (scan->toks[i].flags & HZ_TOK_ALPHA)
      {
        alpha++;
        if ((scan->toks[i].flags & HZ_TOK_UPPER) && scan->toks[i].nchars > 1)
          up++;
      }
  return alpha >= 4 && up * 10 >= alpha * 6;
}

/* Longest place-gazetteer match of words [a, b) starting at a (joined by single spaces). */
static guint
place_match (const HzScan *scan, guint a, guint b)
{
  for (guint k = MIN (b, a + 4); k > a; k--)
    {
      gsize s = scan->toks[a].s, e = word_end (scan, &scan->toks[k - 1]);
      if (e - s > 60)
        continue;
      if (hz_set_has (scan->r->places, scan->text + s, e - s))
        return k - a;
    }
  return 0;
}

static void
add (HzScan *scan, gsize s, gsize e, HzEntityType type, float score, const char *rec)
{
  hz_scan_add (scan, s, e, type, score, HZ_TIER_NAME, rec);
}

static gboolean
n_is_calendar (const HzScan *scan, guint a, guint b)
{
  return b - a == 1 && in_list (scan, &scan->toks[a], calendar);
}

/* Decide what the capitalised run of tokens [a, b) is. */
static void
judge_run (HzScan *scan, guint a, guint b, gboolean shouting)
{
  Word w[8];
  guint m = b - a;
  for (guint k = 0; k < m; k++)
    word_info (scan, &scan->toks[a + k], &w[k]);
  const HzToken *first = &scan->toks[a];

  gboolean title = a > 0 && in_list (scan, &scan->toks[a - 1], titles)
                   && scan->toks[a].s - scan->toks[a - 1].e <= 2;
  gboolean cue = hz_context_before (scan, a, 2, cues_before);
  /* an organisation word inside or right after the run: not a person */
  gboolean org = FALSE;
  for (guint k = 0; k < m && !org; k++)
    org = in_list (scan, &scan->toks[a + k], org_words) && k > 0;
  if (b < scan->n_toks && in_list (scan, &scan->toks[b], org_words) && tight (scan, &scan->toks[b - 1], &scan->toks[b]))
    org = TRUE;
  gboolean the_before = a > 0 && hz_token_is (scan, &scan->toks[a - 1], "the");

  /* trim ordinary capitalised words at the start ("Hello", "When", "Directed") */
  guint lo = 0, hi = m;
  while (lo < hi)
    {
      Word *x = &w[lo];
      gboolean keep = x->initial ? (lo + 1 < hi) : (!x->common || (x->given && lo + 1 < hi && !w[lo + 1].common) || title);
      if (x->conn)
        keep = FALSE;
      if (keep)
        break;
      lo++;
      title = FALSE;
      cue = cue || (lo > 0 && in_list (scan, &scan->toks[a + lo - 1], cues_before));
    }
  while (hi > lo && ((w[hi - 1].common && !w[hi - 1].sur && !(hi - lo >= 2 && w[lo].given)) || w[hi - 1].conn
                     || (w[hi - 1].initial && hi - lo > 1 && hi == m)))
    hi--;
  if (lo >= hi)
    return;
  guint n = hi - lo;
  if (n_is_calendar (scan, a + lo, a + hi) && !title)
    return;
  Word *f = &w[lo], *l = &w[hi - 1];
  gsize s = f->s, e = l->e;
  gboolean sent = (scan->toks[a + lo].flags & HZ_TOK_SENT) != 0;
  (void) first;

  /* places first: whole run in the place gazetteer */
  guint pm = place_match (scan, a + lo, a + hi);
  if (pm == n && !title && !(cue && f->given && n == 1 && !f->place))
    {
      add (scan, s, e, HZ_ENTITY_LOCATION, 0.75f, "place-gazetteer");
      return;
    }
  if (org && !title)
    return;

  int unknown = 0, commons = 0, givens = 0, surs = 0, initials = 0;
  for (guint k = lo; k < hi; k++)
    {
      unknown += !w[k].given && !w[k].sur && !w[k].common && !w[k].place && !w[k].initial && !w[k].conn;
      commons += w[k].common && !w[k].given && !w[k].sur;
      givens += w[k].given;
      surs += w[k].sur;
      initials += w[k].initial || w[k].conn;
    }
  float score = 0;
  if (title)
    score = 0.9f;
  else if (n >= 2 && (f->given || f->initial) && (l->sur || !l->common) && commons == 0)
    score = 0.85f;
  else if (n >= 2 && commons == 0 && (l->sur || f->given) && !shouting)
    score = 0.7f;
  else if (n >= 2 && commons == 0 && !shouting && unknown + givens + surs + initials >= (int) n && unknown + givens + surs >= 2)
    score = the_before ? 0.35f : 0.55f;
  else if (n == 1 && f->given && !f->common && !f->place)
    score = sent ? 0.5f : 0.6f;
  else if (n == 1 && cue && !f->common && !shouting)
    score = 0.5f;
  else if (n == 1 && f->sur && !f->common && !sent && !f->place && !shouting
           && (scan->toks[a + lo].flags & HZ_TOK_CAP))
    score = 0.4f;
  if (cue && score > 0)
    score = MIN (1.0f, score + 0.15f);
  if (score > 0 && hi + a < scan->n_toks && in_list (scan, &scan->toks[a + hi], verbs_after))
    score = MIN (1.0f, score + 0.1f);
  if (score > 0)
    {
      add (scan, s, e, HZ_ENTITY_PERSON, score, "name");
      return;
    }
  /* a single unknown capitalised word after "in", "from", "to": a place */
  if (n <= 3 && unknown == (int) n && !sent && !shouting && hz_context_before (scan, a + lo, 1, loc_cues))
    add (scan, s, e, HZ_ENTITY_LOCATION, 0.4f, "place-cue");
  else if (pm > 0)
    add (scan, s, w[lo + pm - 1].e, HZ_ENTITY_LOCATION, 0.6f, "place-gazetteer");
}

/* Lower-case (or otherwise uncapitalised) names: given+surname pairs, or a word after a
 * strong cue. */
static guint
judge_lower (HzScan *scan, guint i)
{
  const HzToken *t = &scan->toks[i];
  Word a, b;
  word_info (scan, t, &a);
  if (a.common && !a.given)
    return i + 1;
  if (i + 1 < scan->n_toks && tight (scan, t, &scan->toks[i + 1]) && (scan->toks[i + 1].flags & HZ_TOK_LOWER))
    {
      word_info (scan, &scan->toks[i + 1], &b);
      if (a.given && b.sur && !a.common && !b.common)
        {
          add (scan, a.s, b.e, HZ_ENTITY_PERSON, 0.55f, "name-lower");
          return i + 2;
        }
    }
  if (i > 0 && in_list (scan, &scan->toks[i - 1], strong_cues) && a.given && !a.common)
    add (scan, a.s, a.e, HZ_ENTITY_PERSON, 0.55f, "name-cue");
  return i + 1;
}

/* Other occurrences, in any case, of the names found so far (whole words only). */
static void
propagate (HzScan *scan, guint first_cand)
{
  guint end = scan->cands->len;
  GHashTable *seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint c = first_cand; c < end; c++)
    {
      HzCand k = g_array_index (scan->cands, HzCand, c);
      if (k.type != HZ_ENTITY_PERSON || k.score < 0.5f || k.e - k.s > 80)
        continue;
      char *low = hz_lower_dup (scan->text + k.s, k.e - k.s);
      if (!g_hash_table_add (seen, low))
        continue;
      /* each distinct name costs one pass over the tokens: bound it for huge inputs */
      if (g_hash_table_size (seen) > 64)
        break;
      gsize n = k.e - k.s;
      guint ti = hz_token_at_or_after (scan, 0);
      for (; ti < scan->n_toks; ti++)
        {
          const HzToken *t = &scan->toks[ti];
          if (t->s == k.s || t->s + n > scan->len)
            continue;
          if (g_ascii_strncasecmp (scan->text + t->s, scan->text + k.s, n) != 0)
            continue;
          if (hz_alnum_at (scan->text, scan->len, t->s + n) && !(scan->text[t->s + n] == '\''))
            continue;
          hz_scan_add (scan, t->s, t->s + n, HZ_ENTITY_PERSON, k.score * 0.9f, HZ_TIER_NAME, "name-repeat");
        }
      /* the surname of a full name, alone */
      guint a = hz_token_at_or_after (scan, k.s), b = hz_token_at_or_after (scan, k.e);
      if (b - a >= 2)
        {
          const HzToken *last = &scan->toks[b - 1];
          gsize ln = word_end (scan, last) - last->s;
          if (ln < 3 || hz_set_has (scan->r->words, scan->text + last->s, ln))
            continue;
          for (guint tj = 0; tj < scan->n_toks; tj++)
            {
              const HzToken *t = &scan->toks[tj];
              if (t->s >= k.s && t->s < k.e)
                continue;
              gsize we = word_end (scan, t);
              if (we - t->s == ln && g_ascii_strncasecmp (scan->text + t->s, scan->text + last->s, ln) == 0)
                hz_scan_add (scan, t->s, we, HZ_ENTITY_PERSON, k.score * 0.8f, HZ_TIER_NAME, "name-repeat");
            }
        }
    }
  g_hash_table_destroy (seen);
}

void
hz_rec_names (HzScan *scan)
{
  if (!scan->r->enabled[HZ_ENTITY_PERSON] && !scan->r->enabled[HZ_ENTITY_LOCATION])
    return;
  gboolean shouting = is_shouting (scan);
  guint first_cand = scan->cands->len;
  guint i = 0, n = scan->n_toks;
  while (i < n)
    {
      const HzToken *t = &scan->toks[i];
      gboolean capish = (t->flags & HZ_TOK_ALPHA) && (t->flags & (HZ_TOK_CAP | HZ_TOK_UPPER));
      if (!capish)
        {
          if ((t->flags & HZ_TOK_ALPHA) && (t->flags & HZ_TOK_LOWER) && t->nchars >= 2)
            i = judge_lower (scan, i);
          else
            i++;
          continue;
        }
      guint j = i + 1;
      while (j < n && j - i < 6 && tight (scan, &scan->toks[j - 1], &scan->toks[j]))
        {
          const HzToken *u = &scan->toks[j];
          gboolean ucap = (u->flags & HZ_TOK_ALPHA) && (u->flags & (HZ_TOK_CAP | HZ_TOK_UPPER));
          gboolean conn = (u->flags & HZ_TOK_LOWER) && in_list (scan, u, connectors) && j + 1 < n
                          && (scan->toks[j + 1].flags & (HZ_TOK_CAP | HZ_TOK_UPPER));
          if (!ucap && !conn)
            break;
          /* a possessive ends the run */
          if (word_end (scan, &scan->toks[j - 1]) != scan->toks[j - 1].e)
            break;
          j++;
        }
      judge_run (scan, i, j, shouting);
      i = j;
    }
  if (scan->r->enabled[HZ_ENTITY_PERSON])
    propagate (scan, first_cand);
}
