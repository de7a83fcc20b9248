/* rec-names-judge.c — what a run of capitalised words is: a place, a street, a person's name
 * or nothing, decided by tables of named tests run in order (the whole run; no name at
 * all; places and firms; a person's score; single words that are no name), and the
 * lower-case words that are names. Called by the run finder (rec-names.c). */
#include "rec-names-judge.h"
#include "rec-names-lists.h"

typedef struct {
  gsize s, e;        /* byte range of the word without a possessive 's */
  gboolean given, sur, common, place, city, initial, conn, cap;
  gboolean city_only; /* in the city list only (not a country/region/large city, no name) */
  gboolean given_freq; /* one of the most frequent given names ("Nick", "Grace") */
  gboolean sur_freq;   /* one of the most frequent surnames ("Short", "Walker") */
} Word;

static void
word_info (const HzScan *scan, const HzToken *t, Word *w)
{
  const HzRedactor *r = scan->r;
  w->s = t->s;
  w->e = word_end (scan, t);
  gsize n = w->e - w->s;
  /* "A" and "I" without a period and not after a capitalised word are the article and the
   * pronoun ("A Storm to Come", "cause I Haite"), not initials ("John A Smith") */
  w->initial = t->nchars == 1 && (t->flags & HZ_TOK_UPPER)
               && !((scan->text[t->s] == 'A' || scan->text[t->s] == 'I') && (t->e >= scan->len || scan->text[t->e] != '.')
                    && ((t->flags & HZ_TOK_SENT) || t == scan->toks || !is_cap_word (t - 1) || !tight (scan, t - 1, t)));
  w->conn = hz_tok_in (t, HZ_W_NAME_CONN) && (t->flags & HZ_TOK_LOWER);
  w->cap = (t->flags & HZ_TOK_ALPHA) && (t->flags & (HZ_TOK_CAP | HZ_TOK_UPPER));
  guint64 cls = w->e == t->e ? t->cls : hz_lex_lookup (&r->lex, scan->text + w->s, n);
  w->given = n >= 2 && (cls & HZ_WB (HZ_W_GIVEN));
  w->sur = n >= 2 && (cls & HZ_WB (HZ_W_SURNAME));
  w->given_freq = n >= 2 && (cls & HZ_WB (HZ_W_GIVEN_FREQ));
  w->sur_freq = n >= 2 && (cls & HZ_WB (HZ_W_SURNAME_FREQ));
  /* a single capital letter is an initial ("John A. Leiva"), not the word "a" or "m" */
  w->common = !w->initial && ((cls & HZ_WB (HZ_W_COMMON)) != 0 || (t->flags & HZ_TOK_ELONG) || t->nchars == 1);
  /* a place or city that is also a person's name ("Casey", "Jordan", "Mason") counts as a
   * place only after a cue such as "in" (the place rules below) */
  w->city = (cls & (HZ_WB (HZ_W_CITY) | HZ_WB (HZ_W_PLACE))) != 0;
  w->place = (cls & HZ_WB (HZ_W_PLACE)) != 0 && !(scan->informal && w->given);
  w->city_only = w->city && !(cls & HZ_WB (HZ_W_PLACE));
  if (w->city && !w->given && !w->sur && !w->common)
    w->place = TRUE;
}

/* The lower-case surname after a given name that ends at token i - 1 ("kylie minogue",
 * "benjamin a seiler", "eric g. samoylova"): an optional one-letter initial, then a word of
 * three letters or more that is no English word or cue word and, unless `unknown_ok`, is in
 * the surname list. Returns the token index after the surname, or i if there is none. */
static guint
lower_surname_after (const HzScan *scan, guint i, gboolean unknown_ok)
{
  guint j = i;
  if (j == 0 || j >= scan->n_toks || !tight (scan, &scan->toks[j - 1], &scan->toks[j]))
    return i;
  const HzToken *u = &scan->toks[j];
  /* an initial that is also a word ("a", "i", chat's "u") only before a surname that is no
   * English word ("benjamin a seiler", not "mi a back") */
  gboolean word_initial = FALSE;
  if (u->nchars == 1 && (u->flags & HZ_TOK_LOWER) && (u->flags & HZ_TOK_ALPHA) && j + 1 < scan->n_toks)
    {
      word_initial = strchr ("aiu", scan->text[u->s]) != NULL;
      /* "m ross", "g. samoylova" */
      const HzToken *v = &scan->toks[j + 1];
      gsize g = v->s - u->e;
      if (!((g == 1 && scan->text[u->e] == ' ') || (g == 2 && scan->text[u->e] == '.' && scan->text[u->e + 1] == ' ')))
        return i;
      j++;
      u = v;
    }
  if (!(u->flags & HZ_TOK_LOWER) || !(u->flags & HZ_TOK_ALPHA) || u->nchars < 3 || (u->cls & HZ_NAMES_LOWER_STOP)
      || (u->cls & HZ_WB (HZ_W_PLACE)))
    return i;
  /* after a lower-case given name, a frequent surname that is also an English word counts
   * too ("paul walker", "martin short"; not "ima just", "rick roll"), unless it is a word of
   * the text's grammar (HZ_NAMES_LOWER_STOP); after a capitalised given name such a word is an
   * ordinary word ("Emma just has") */
  if ((u->cls & HZ_WB (HZ_W_COMMON))
      && (word_initial || !(scan->toks[i - 1].flags & HZ_TOK_LOWER) || !(u->cls & HZ_WB (HZ_W_SURNAME_FREQ))))
    return i;
  if (!unknown_ok && !(u->cls & HZ_WB (HZ_W_SURNAME)))
    return i;
  return j + 1;
}

/* ================================================================= the judging rules */

/* What the rules know of a capitalised run [a, b): its words, the name's words [a + lo,
 * a + hi) once ordinary words and titles are trimmed, and the cues around it. Filled step
 * by step by hz_names_judge_run(); each table's tests read the fields filled before it. */
typedef struct {
  HzScan *scan;
  guint a, b, m;            /* the run [a, b) of m tokens (m <= 6) */
  gboolean shouting;        /* the text is mostly in capitals */
  gboolean informal;        /* chat-style text */
  Word w[8];                /* its words */
  gboolean title;           /* a title or rank comes before the name ("Dr.", "General") */
  gboolean cue;             /* a name cue comes before it ("by", "my name is") */
  gboolean org;             /* an organisation word inside or right after it */
  gboolean the_before;      /* "the" before the run */
  gboolean subject;         /* one word opening a sentence as the subject of a person's verb */
  gboolean chat_given;      /* a frequent given name that is also a word, as a name */
  gboolean possessed;       /* a listed given name owning a lower-case thing */
  /* after trimming */
  guint lo, hi, n;          /* the name's words [a + lo, a + hi), n = hi - lo >= 1 */
  Word *f, *l;              /* its first and last word */
  gboolean sent;            /* its first word opens a sentence */
  gboolean addressed;       /* a given name after a salutation, then ',' or '!' */
  guint pm;                 /* words of the name matched by the place gazetteer */
  gboolean loc_cue;         /* right after "in", "from", ... (no person's "to") */
  gboolean weak_loc_cue;    /* ... or after "at", "via", "of" */
  int unknown, commons, givens, surs, initials; /* the name's words by kind */
} Run;

/* The rules are tables of named tests (X-macro lists: X (name, test)), run in order by the
 * steps of hz_names_judge_run(). A test of the run's kind returns TRUE when it has decided
 * what the run is (having added its candidate, if any); a score test returns the name's
 * score when it applies, else 0; a veto returns TRUE when a single word is no name. Each
 * table expands to direct calls, so the compiler inlines the tests as it did the one long
 * function they replace. */

static inline const HzToken *
tok (const Run *r, guint k)
{
  return &r->scan->toks[k];
}

/* The first word of the run that is no ordinary word or is a place (at most the last). */
static guint
first_proper_word (const Run *r)
{
  guint k0 = 0;
  while (k0 + 1 < r->m && r->w[k0].common && !r->w[k0].place)
    k0++;
  return k0;
}

/* ---- 1. the whole run, before trimming ----------------------------------------------- */

/* "New Zealand": the whole run is a (multi-word) place */
static gboolean
whole_run_place (Run *r)
{
  if (r->m < 2 || r->title || hz_names_place_match (r->scan, r->a, r->b) != r->m)
    return FALSE;
  names_add (r->scan, tok (r, r->a)->s, r->w[r->m - 1].e, HZ_ENTITY_LOCATION, 0.75f, "place-gazetteer");
  return TRUE;
}

/* "Mill Village", "BASHALL TOWN": unknown words ending in a word for a settlement */
static gboolean
settlement (Run *r)
{
  if (r->m < 2 || r->title || !hz_tok_in (tok (r, r->b - 1), HZ_W_PLACE_SUFFIX)
      || hz_tok_in (tok (r, r->a), HZ_W_NOT_NAME)
      || (r->w[0].given && r->m == 2 && !hz_context_before (r->scan, r->a, 1, HZ_W_LOC_CUE)))
    return FALSE;
  guint k0 = first_proper_word (r);
  if (k0 + 1 >= r->m)
    return FALSE;
  names_add (r->scan, r->w[k0].s, r->w[r->m - 1].e, HZ_ENTITY_LOCATION, 0.55f, "place-suffix");
  return TRUE;
}

/* "Hancock Brook", "Nagle Place", "Capitol Hill": a name ending in a word for a street or
 * landform is a place (a street word such as "Place" or "Loop" names a street), unless it
 * is a given name + surname ("Anna Hill") */
static gboolean
street_or_landform (Run *r)
{
  const HzToken *last = tok (r, r->b - 1);
  if (r->m < 2 || r->title || !(last->flags & HZ_TOK_CAP)
      || !(hz_tok_in (last, HZ_W_ST_SUFFIX) || hz_tok_in (last, HZ_W_PLACE_SUFFIX))
      || (r->w[0].given && r->w[r->m - 1].sur && !tok_among (r->scan, r->b - 1, hz_names_street_abbrevs))
      || hz_tok_in (tok (r, r->a), HZ_W_NOT_NAME))
    return FALSE;
  guint k0 = first_proper_word (r);
  if (k0 + 1 < r->m)
    names_add (r->scan, r->w[k0].s, r->w[r->m - 1].e,
               hz_tok_in (last, HZ_W_ST_SUFFIX) && !hz_tok_in (last, HZ_W_PLACE_SUFFIX)
                 ? HZ_ENTITY_STREET_ADDRESS : HZ_ENTITY_LOCATION,
               0.45f, "place-suffix");
  return TRUE;
}

/* "FC Basel", "Camp Howe": a team, facility or unit, no candidate */
static gboolean
team_or_facility (Run *r)
{
  return hz_tok_in (tok (r, r->a), HZ_W_ORG_BEFORE) && r->m >= 2 && !r->title;
}

/* The whole run, before trimming. */
#define WHOLE_RUN_RULES(X)                                \
  X ("the whole run is a place", whole_run_place)         \
  X ("a settlement's name", settlement)                   \
  X ("a street's or landform's name", street_or_landform) \
  X ("a team, facility or unit", team_or_facility)

/* ---- 2. the cues around the run --------------------------------------------------------- */

static void
read_cues (Run *r)
{
  const HzScan *scan = r->scan;
  guint a = r->a, b = r->b, m = r->m;
  const Word *w = r->w;
  const HzToken *first = tok (r, a);
  r->cue = hz_context_before (scan, a, 2, HZ_W_NAME_CUE);
  /* an organisation word inside or right after the run: not a person */
  for (guint k = 0; k < m && !r->org; k++)
    r->org = hz_tok_in (tok (r, a + k), HZ_W_ORG) && k > 0;
  /* (not a lower-case word after a possessive: "Mary's house", "Belgrano's army") */
  if (b < scan->n_toks && hz_tok_in (tok (r, b), HZ_W_ORG) && tight (scan, tok (r, b - 1), tok (r, b))
      && !((tok (r, b)->flags & HZ_TOK_LOWER) && word_end (scan, tok (r, b - 1)) != tok (r, b - 1)->e))
    r->org = TRUE;
  /* ... except after a title ("Dr. Helen Lake"), and a given name + a surname that is such a
   * word ("James Park", "Oscar Street") where no place cue comes before ("on Grace Street")
   * and no organisation word after ("James Park Hotel") */
  else if (r->org && (r->title || (m == 2 && w[0].given && w[1].sur && !hz_context_before (scan, a, 1, HZ_W_LOC_CUE)
                                   && !hz_context_before (scan, a, 1, HZ_W_LOC_CUE_WEAK)
                                   && !(a > 0 && hz_token_is (scan, tok (r, a - 1), "on")))))
    r->org = FALSE;
  r->the_before = a > 0 && hz_token_is (scan, tok (r, a - 1), "the");
  /* a single word opening a sentence is followed by what follows the subject of a sentence
   * about a person: a verb of people, an auxiliary ("should"), a copula that does not
   * describe a place or firm, or a comma and "you" (addressed) */
  r->subject = m == 1 && (first->flags & HZ_TOK_SENT) && !r->shouting
               && ((w[0].given_freq && w[0].common) || (!w[0].common && !w[0].given && !w[0].place && !w[0].city))
               && (verb_after (scan, b) || tok_in (scan, b, HZ_W_MODAL) || hz_names_vocative (scan, b)
                   || (tok_is_copula (scan, b) && !hz_names_describes_thing (scan, b)));
  /* a frequent given name that is also a word, alone and capitalised: in chat text ("miss
   * Rusty"), or opening a sentence as its subject ("Bill is so right", "Harry got shot");
   * kept for scoring below */
  r->chat_given = m == 1 && w[0].given_freq && w[0].common && !r->shouting && (first->flags & HZ_TOK_CAP)
                  && ((r->informal || scan->unfinished) || ((first->flags & HZ_TOK_SENT) && r->subject));
  /* a listed given name owning something named by a lower-case word ("at Peter's house",
   * "Peter 's car"), even one that is also a word (not "Grant 's Overland Campaign", nor
   * "at Miller's, the bar") */
  guint owned = m == 1 ? hz_names_after_possessive (scan, b) : 0;
  r->possessed = m == 1 && w[0].given && !w[0].place && owned && owned < scan->n_toks
                 && (tok (r, owned)->flags & HZ_TOK_LOWER) && (tok (r, owned)->flags & HZ_TOK_ALPHA)
                 && tight (scan, tok (r, owned - 1), tok (r, owned))
                 && !(hz_lex_lookup (&scan->r->lex, scan->text + w[0].s, w[0].e - w[0].s)
                      & (HZ_WB (HZ_W_MONTH) | HZ_WB (HZ_W_WEEKDAY) | HZ_WB (HZ_W_CALENDAR)));
}

/* ---- 3. trimming: titles and ordinary words at the ends are no part of the name -------- */

/* Word lo opens the name [lo, hi) (else it is an ordinary capitalised word: "Hello",
 * "When", "Directed") */
static gboolean
opens_name (const Run *r, guint lo, guint hi)
{
  const Word *w = r->w, *x = &w[lo];
  guint a = r->a;
  if (x->conn || hz_tok_in (tok (r, a + lo), HZ_W_NOT_NAME))
    return FALSE;
  if (x->initial)
    return lo + 1 < hi;
  return !x->common || r->title
         || (x->given && lo + 1 < hi && (!w[lo + 1].common || (w[lo + 1].sur_freq && lo + 2 == hi))
             && !((tok (r, a + lo + 1)->flags & HZ_TOK_UPPER) && tok (r, a + lo + 1)->nchars <= 4
                  && !w[lo + 1].initial))
         || (x->given && lo + 1 == hi && hi == r->m && verb_after (r->scan, r->b))
         || (x->sur && r->m == 1 && !(tok (r, a)->flags & HZ_TOK_SENT))
         /* a salutation's name ("Dear Grace,", "Hi Mark", "hi Sunny,") */
         || (x->given && lo + 1 == hi && salutation_before (r->scan, a + lo))
         || r->chat_given || r->possessed;
}

/* Word hi - 1 ends the name [lo, hi) (else it is an ordinary word, a connector or a
 * trailing initial) */
static gboolean
closes_name (const Run *r, guint lo, guint hi)
{
  const Word *w = r->w;
  if (w[hi - 1].conn || (w[hi - 1].initial && hi - lo > 1 && hi == r->m))
    return FALSE;
  return !(w[hi - 1].common && !w[hi - 1].sur && !(hi - lo >= 2 && w[lo].given) && !r->chat_given
           && !(hi - lo == 1 && hi == r->m && w[lo].given && verb_after (r->scan, r->b))
           && !(hi - lo == 1 && w[lo].given && salutation_before (r->scan, r->a + lo))
           && !r->possessed);
}

/* Trim the run to the name's words [lo, hi); FALSE when nothing is left. Leading titles and
 * ranks are cues, not part of the name ("Brigadier General Ross Hoyt"). */
static gboolean
trim (Run *r)
{
  guint lo = 0, hi = r->m;
  while (lo + 1 < hi && hz_tok_in (tok (r, r->a + lo), HZ_W_TITLE))
    {
      lo++;
      r->title = TRUE;
    }
  while (lo < hi && !opens_name (r, lo, hi))
    {
      lo++;
      r->title = FALSE;
      r->cue = r->cue || (lo > 0 && hz_tok_in (tok (r, r->a + lo - 1), HZ_W_NAME_CUE));
    }
  while (hi > lo && !closes_name (r, lo, hi))
    hi--;
  if (lo >= hi)
    return FALSE;
  r->lo = lo;
  r->hi = hi;
  r->n = hi - lo;
  r->f = &r->w[lo];
  r->l = &r->w[hi - 1];
  r->sent = (tok (r, r->a + lo)->flags & HZ_TOK_SENT) != 0;
  /* a given name after a salutation, addressed ("Dear May,", "Hi June!") */
  const HzToken *t = tok (r, r->a + lo);
  r->addressed = r->n == 1 && salutation_before (r->scan, r->a + lo) && r->f->given && t->e < r->scan->len
                 && (r->scan->text[t->e] == ',' || r->scan->text[t->e] == '!');
  return TRUE;
}

/* ---- 4. no name at all ------------------------------------------------------------------ */

/* a month or weekday, unless it is addressed after a salutation ("Dear May,") */
static gboolean
calendar_word (Run *r)
{
  return n_is_calendar (r->scan, r->a + r->lo, r->a + r->hi) && !r->title && !r->addressed;
}

/* a lone title, nationality or interjection */
static gboolean
lone_title_or_not_name (Run *r)
{
  return r->n == 1 && (hz_tok_in (tok (r, r->a + r->lo), HZ_W_TITLE) || hz_tok_in (tok (r, r->a + r->lo), HZ_W_NOT_NAME));
}

/* a word of the not-a-name list in the name (nationalities, function words, legal forms) */
static gboolean
has_not_name_word (Run *r)
{
  for (guint k = r->lo; k < r->hi; k++)
    if (hz_tok_in (tok (r, r->a + k), HZ_W_NOT_NAME) && !r->title)
      return TRUE;
  return FALSE;
}

/* the label of an identifier ("Aadhaar: 2345 6789 0124", "Codice Fiscale RSSMRA...") */
static gboolean
identifier_label (Run *r)
{
  return !r->title && hz_names_identifier_label (r->scan, r->a + r->lo, r->a + r->hi);
}

/* the name of a work or a group: "the band Deadsy", "their song Hunter" (not before a verb
 * of people or a full name: "the group Ilse Marquardt founded"), a quoted title ("Fallen",
 * "Buddha for Mary"; a quoted given name or surname that is no English word stays a name:
 * "Kessler") */
static gboolean
work_or_group (Run *r)
{
  const Word *w = r->w;
  return !r->title
         && ((r->lo == 0 && hz_names_thing_noun_before (r->scan, r->a) && !verb_after (r->scan, r->b)
              && !(r->m >= 2 && w[0].given))
             || hz_names_in_quoted_title (r->scan, r->a, r->b, r->m == 1 && (w[0].given || w[0].sur) && !w[0].common));
}

/* No name at all. */
#define NO_NAME_RULES(X)                                                  \
  X ("a month or weekday", calendar_word)                                 \
  X ("a lone title, nationality or interjection", lone_title_or_not_name) \
  X ("a word that is never a name", has_not_name_word)                    \
  X ("the label of an identifier", identifier_label)                      \
  X ("the name of a work or a group", work_or_group)

/* ---- 5. places and firms ---------------------------------------------------------------- */

/* What the place tests read: a city-list word that is a surname by its verb, the place
 * gazetteer's match, and the place cues before the name. */
static void
read_place_cues (Run *r)
{
  const HzScan *scan = r->scan;
  guint a = r->a, lo = r->lo, hi = r->hi;
  Word *f = r->f;
  /* a word of the (small) city list followed by a verb of people ("Belgrano accepted",
   * "Castro attained"): a surname, not the town of that name; copulas ("Salem is") are
   * said of places too and do not decide */
  if (r->n == 1 && f->city_only && (verb_after (scan, a + hi) || (possessive_after (scan, a + hi) && a + hi + 1 < scan->n_toks
                                                                   && (tok (r, a + hi + 1)->flags & HZ_TOK_LOWER))))
    f->place = f->city = FALSE;
  r->pm = f->city || f->place || r->n > 1 ? hz_names_place_match (scan, a + lo, a + hi) : 0;
  /* a single unknown word right after "in", "near", ... is a place, not a person; after
   * "from", "to", "at" only a known place is */
  r->loc_cue = !r->sent && hz_context_before (scan, a + lo, 1, HZ_W_LOC_CUE) && !r->title
               && !hz_names_to_person (scan, a + lo);
  r->weak_loc_cue = !r->sent && !r->title && (r->loc_cue || hz_context_before (scan, a + lo, 1, HZ_W_LOC_CUE_WEAK));
}

/* The name is a place when `is_place`: add it as a LOCATION of `score` by recognizer `rec`.
 * Returns `is_place` (whether the test decided). */
static gboolean
place_if (Run *r, gboolean is_place, float score, const char *rec)
{
  if (is_place)
    names_add (r->scan, r->f->s, r->l->e, HZ_ENTITY_LOCATION, score, rec);
  return is_place;
}

/* the whole name is in the place gazetteer (not a given name after a name cue) */
static gboolean
gazetteer_place (Run *r)
{
  return place_if (r, r->pm == r->n && !r->title && !(r->cue && r->f->given && r->n == 1 && !r->f->place),
                   0.75f, "place-gazetteer");
}

/* a place by its context: "the town of Bridgton", "Paxton , Illinois" (one word that is no
 * given name: not "Rajesh Kumar, India"), "Walsall , Melbourne , Luton and London" */
static gboolean
place_by_context (Run *r)
{
  const HzScan *scan = r->scan;
  const Word *f = r->f;
  guint a = r->a, lo = r->lo, hi = r->hi, n = r->n;
  return place_if (r, !r->title && n <= 4 && !(n >= 2 && f->given)
                      && ((lo == 0 && hz_names_after_prep_of (scan, a, "of", hz_names_place_of_nouns))
                          || (n == 1 && !f->given && hi == r->m && hz_names_region_after (scan, r->b))
                          || (n == 1 && (f->city || (!f->given && !f->sur && !f->common
                                                     && (tok (r, a + lo)->flags & HZ_TOK_CAP)))
                              && hz_names_in_place_list (scan, a + lo, a + hi))),
                   0.6f, "place-context");
}

/* an organisation word inside or after the run: a firm, no candidate */
static gboolean
organisation (Run *r)
{
  return r->org;
}

/* "from Hawkins, Richardson and Santana": a firm named after its partners, no candidate */
static gboolean
firm_of_partners (Run *r)
{
  return r->n == 1 && hz_names_firm_of_partners (r->scan, r->a + r->lo);
}

/* "in Florence", "from Salem": a city name after a place cue; but "to Logan", "at Gary": a
 * given name that is only a smaller city is a person after a preposition that also takes
 * people */
static gboolean
city_after_place_cue (Run *r)
{
  const HzScan *scan = r->scan;
  const Word *f = r->f;
  guint i = r->a + r->lo;
  gboolean person_prep = i > 0 && (hz_token_is (scan, tok (r, i - 1), "to") || hz_token_is (scan, tok (r, i - 1), "at"));
  return place_if (r, r->n == 1 && r->weak_loc_cue && (f->city || f->place) && !(f->given && f->city_only && person_prep),
                   0.6f, "place-cue");
}

/* "in SUND", "arrived at HART": an ALL-CAPS word in ordinary text after a place cue is a
 * place name written the way addresses write towns ("to MARA QUINLEY" is a person) */
static gboolean
capitals_after_place_cue (Run *r)
{
  const HzScan *scan = r->scan;
  guint i = r->a + r->lo;
  if (r->n > 3 || r->shouting
      || !(r->loc_cue || (!r->sent && !r->title && i > 0 && hz_token_is (scan, tok (r, i - 1), "at"))))
    return FALSE;
  gboolean caps = !r->f->given;
  for (guint k = r->lo; k < r->hi && caps; k++)
    caps = (tok (r, r->a + k)->flags & HZ_TOK_UPPER) && tok (r, r->a + k)->nchars >= 4;
  return place_if (r, caps, 0.5f, "place-cue");
}

/* Places and firms. */
#define PLACE_RULES(X)                                                 \
  X ("a place of the gazetteer", gazetteer_place)                      \
  X ("a place by its context", place_by_context)                       \
  X ("an organisation", organisation)                                  \
  X ("a firm named after its partners", firm_of_partners)              \
  X ("a city after a place cue", city_after_place_cue)                 \
  X ("a word in capitals after a place cue", capitals_after_place_cue)

/* ---- 6. a person's name: the first score that applies ----------------------------------- */

static float
after_title (const Run *r)
{
  return r->title ? 0.9f : 0;
}

/* "Anna Lopez", "J. Smith" */
static float
given_and_surname (const Run *r)
{
  return r->n >= 2 && (r->f->given || r->f->initial) && (r->l->sur || !r->l->common) && r->commons == 0 ? 0.85f : 0;
}

static float
named_words (const Run *r)
{
  return r->n >= 2 && r->commons == 0 && (r->l->sur || r->f->given) && !r->shouting ? 0.7f : 0;
}

/* several words, each a name, an unknown word or an initial ("Odile K. Varga") */
static float
unknown_words (const Run *r)
{
  if (r->n >= 2 && r->commons == 0 && !r->shouting && r->unknown + r->givens + r->surs + r->initials >= (int) r->n
      && r->unknown + r->givens + r->surs >= 2 && !(r->loc_cue && !r->f->given && r->initials == 0))
    return r->the_before ? 0.35f : 0.55f;
  return 0;
}

static float
lone_given_name (const Run *r)
{
  if (r->n == 1 && r->f->given && !r->f->common && !r->f->place)
    return r->sent ? 0.5f : 0.6f;
  return 0;
}

static float
after_name_cue (const Run *r)
{
  return r->n == 1 && r->cue && !r->f->common && !r->shouting && !(r->loc_cue && !r->f->given && !r->f->sur) ? 0.5f : 0;
}

/* "named him Frank", "Hi Will", "at Peter's house" */
static float
word_given_name_after_cue (const Run *r)
{
  return r->n == 1 && r->f->given && r->f->common && !r->f->place
         && (strong_cue_before (r->scan, r->a + r->lo) || r->possessed) ? 0.5f : 0;
}

/* "Lily met", "Mark said": a given name that is also a word, before a verb of people */
static float
word_given_name_before_verb (const Run *r)
{
  return r->n == 1 && r->f->given && r->f->common && !r->f->place && !r->shouting
         && verb_after (r->scan, r->a + r->hi) ? 0.5f : 0;
}

/* "Marrero and Murphy were", "Ubul: ...", "Enrico shouted" */
static float
person_by_context (const Run *r)
{
  const HzScan *scan = r->scan;
  guint i = r->a + r->lo, j = r->a + r->hi;
  return r->n == 1 && !r->f->common && !r->f->place && !r->shouting && (r->f->sur || r->unknown) && !r->loc_cue
         && (hz_names_coordinated (scan, i) || hz_names_speaker_label (scan, i) || possessive_after (scan, j)
             || (j < scan->n_toks && hz_tok_in (tok (r, j), HZ_W_VERB_AFTER) && !hz_token_is (scan, tok (r, j), "and")
                 && !hz_names_describes_thing (scan, j))) ? 0.5f : 0;
}

/* chat text capitalises little else than names */
static float
capitalised_in_chat (const Run *r)
{
  const HzToken *t = tok (r, r->a + r->lo);
  return r->n == 1 && r->informal && !r->sent && !r->f->common && !r->f->place && !r->f->city && !r->loc_cue
         && (t->flags & HZ_TOK_CAP) && t->nchars >= 3 ? 0.35f : 0;
}

/* a word outside every list opening a chat message before a verb ("Niskanen should have",
 * "Fedorova stated") or addressed ("Loey, do you") */
static float
chat_subject (const Run *r)
{
  const HzScan *scan = r->scan;
  const HzToken *t = tok (r, r->a + r->lo);
  const Word *f = r->f;
  gsize s = f->s, e = r->l->e;
  return r->m == 1 && r->sent && (r->informal || scan->unfinished) && !r->shouting && !f->common && !f->place
         && !f->city && !f->initial && (t->flags & HZ_TOK_CAP) && (t->flags & HZ_TOK_ALPHA) && t->nchars >= 3
         && !(t->flags & HZ_TOK_NONASCII) && !memchr (scan->text + s, '\'', e - s)
         && !memchr (scan->text + s, '-', e - s) && r->a + r->hi == r->b && r->subject ? 0.4f : 0;
}

/* a frequent given name that is also a word, capitalised in chat text ("miss Rusty",
 * "Harry got shot") */
static float
frequent_given_name_in_chat (const Run *r)
{
  return r->chat_given && !r->f->place && !r->weak_loc_cue && !r->the_before && (!r->sent || r->subject) ? 0.35f : 0;
}

/* a message without final punctuation is chat-like too ("thanks for it Ozzie") */
static float
capitalised_in_unfinished (const Run *r)
{
  const HzToken *t = tok (r, r->a + r->lo);
  const Word *f = r->f;
  return r->m == 1 && r->scan->unfinished && !r->sent && !f->common && !f->place && !f->city && !r->weak_loc_cue
         && !r->the_before && !f->given && !f->sur && (t->flags & HZ_TOK_CAP) && !(t->flags & HZ_TOK_NONASCII)
         && t->nchars >= 3 && !hz_tok_in (t, HZ_W_ORG) ? 0.35f : 0;
}

static float
surname_in_sentence (const Run *r)
{
  return r->n == 1 && r->f->sur && !r->f->common && !r->sent && !r->f->place && !r->shouting
         && (tok (r, r->a + r->lo)->flags & HZ_TOK_CAP) ? 0.4f : 0;
}

/* a surname that is also a word, capitalised inside a sentence ("said Baker"); not in chat
 * text, which capitalises words at will ("watched it all Day") */
static float
word_surname_in_prose (const Run *r)
{
  const Word *f = r->f;
  return r->m == 1 && f->sur && f->common && !r->sent && !f->place && !r->shouting && !r->the_before
         && !r->weak_loc_cue && (tok (r, r->a + r->lo)->flags & HZ_TOK_CAP) && !r->informal ? 0.35f : 0;
}

/* A person's name: the first score that applies. */
#define PERSON_SCORES(X)                                                                  \
  X ("after a title", after_title)                                                        \
  X ("a given name or initial and a surname", given_and_surname)                          \
  X ("words of the name lists", named_words)                                              \
  X ("names, unknown words and initials", unknown_words)                                  \
  X ("a lone given name", lone_given_name)                                                \
  X ("after a name cue", after_name_cue)                                                  \
  X ("a given name that is a word, after a strong cue", word_given_name_after_cue)        \
  X ("a given name that is a word, before a verb of people", word_given_name_before_verb) \
  X ("a surname or unknown word by its context", person_by_context)                       \
  X ("capitalised in chat text", capitalised_in_chat)                                     \
  X ("the subject of a chat message", chat_subject)                                       \
  X ("a frequent given name in chat text", frequent_given_name_in_chat)                   \
  X ("capitalised in a message without final punctuation", capitalised_in_unfinished)     \
  X ("a surname inside a sentence", surname_in_sentence)                                  \
  X ("a surname that is a word, inside a sentence of prose", word_surname_in_prose)

/* ---- 7. a single word that is no person's name, whatever its score --------------------- */

/* field labels and cue words of the other recognizers ("Fax", "SSN", "Zip", "Apt") */
static gboolean
cue_word_of_other_recognizer (const Run *r)
{
  const guint64 field = HZ_WB (HZ_W_PHONE_CUE) | HZ_WB (HZ_W_CARD_CUE) | HZ_WB (HZ_W_SSN_CUE)
                        | HZ_WB (HZ_W_CRED_KEY) | HZ_WB (HZ_W_ZIP_CUE) | HZ_WB (HZ_W_UNIT)
                        | HZ_WB (HZ_W_DOB_CUE) | HZ_WB (HZ_W_ADDR_CUE) | HZ_WB (HZ_W_MONTH)
                        | HZ_WB (HZ_W_WEEKDAY);
  return (tok (r, r->a + r->lo)->cls & field) && !r->addressed;
}

static gboolean
in_name_lists (const HzToken *t)
{
  return (t->cls & (HZ_WB (HZ_W_GIVEN) | HZ_WB (HZ_W_SURNAME))) != 0;
}

/* an acronym in ordinary text ("ACLU", "DJ"); one of three letters or fewer even where it
 * spells a name ("the MAC address", "SAM", "ED") */
static gboolean
acronym (const Run *r)
{
  const HzToken *t = tok (r, r->a + r->lo);
  return (t->flags & HZ_TOK_UPPER) && !r->shouting && (t->nchars <= 3 || (t->nchars <= 6 && !in_name_lists (t)));
}

/* "Rankin 's Mill", "Occam 's Razor": the possessive belongs to a longer name */
static gboolean
possessive_of_longer_name (const Run *r)
{
  guint i = r->a + r->lo;
  return possessive_after (r->scan, i + 1) && i + 2 < r->scan->n_toks && (tok (r, i + 2)->flags & HZ_TOK_CAP);
}

/* "with Ivey 's and Hudson Belk", "became Macy 's in 2006": a shop or firm */
static gboolean
shop_by_possessive (const Run *r)
{
  return !r->w[r->lo].given && r->a + r->lo + 1 == r->b && hz_names_elliptical_possessive (r->scan, r->b);
}

/* "Battle of Fredericksburg", "Hall of Fame", "Best of 2007": an English word before "of"
 * and a name or number opens a longer proper name */
static gboolean
word_before_of (const Run *r)
{
  guint i = r->a + r->lo, b = r->b;
  return r->w[r->lo].common && i + 2 < r->scan->n_toks && i + 1 == b && hz_token_is (r->scan, tok (r, b), "of")
         && (is_cap_word (tok (r, b + 1)) || (tok (r, b + 1)->flags & HZ_TOK_DIGIT));
}

/* "the Longhorns", "the Triffids": a plural after "the" names a team or group */
static gboolean
plural_after_the (const Run *r)
{
  const HzToken *t = tok (r, r->a + r->lo);
  gsize tl = t->e - t->s;
  return r->a + r->lo > 0 && hz_token_is (r->scan, tok (r, r->a + r->lo - 1), "the") && tl > 3
         && r->scan->text[t->s + tl - 1] == 's';
}

/* "a Lamborghini", "your Tesla videos", "my Casio": a word outside the name lists right
 * after an article or possessive names a thing (people's names there are in the lists: "a
 * Trump supporter") */
static gboolean
thing_after_determiner (const Run *r)
{
  guint i = r->a + r->lo;
  return !in_name_lists (tok (r, i)) && !r->title && i > 0 && tok_in (r->scan, i - 1, HZ_W_DETERMINER);
}

/* adjectives of peoples and places ("Victorian", "Slavic", "Queenslander") */
static gboolean
adjective_of_people (const Run *r)
{
  const HzToken *t = tok (r, r->a + r->lo);
  gsize tl = t->e - t->s;
  const char *ts = r->scan->text + t->s;
  return !in_name_lists (t) && tl > 5
         && (has_suffix_len (ts, tl, "ian") || has_suffix_len (ts, tl, "ean")
             || has_suffix_len (ts, tl, "ese") || has_suffix_len (ts, tl, "ish")
             || has_suffix_len (ts, tl, "ic") || has_suffix_len (ts, tl, "ander")
             || has_suffix_len (ts, tl, "ians"));
}

/* A single word that is no person's name, whatever its score. */
#define LONE_WORD_VETOES(X)                                            \
  X ("a cue word of another recognizer", cue_word_of_other_recognizer) \
  X ("an acronym", acronym)                                            \
  X ("the possessive of a longer name", possessive_of_longer_name)     \
  X ("a shop's or firm's possessive", shop_by_possessive)              \
  X ("an English word before \"of\"", word_before_of)                  \
  X ("a plural after \"the\"", plural_after_the)                       \
  X ("a thing after an article or possessive", thing_after_determiner) \
  X ("an adjective of a people or place", adjective_of_people)

/* ---- the judge -------------------------------------------------------------------------- */

/* The steps that run a table: TRUE (or the score) when one of its tests decided. */
#define DECIDES(name, test) if (test (r)) return TRUE;

static gboolean
whole_run_decided (Run *r)
{
  WHOLE_RUN_RULES (DECIDES)
  return FALSE;
}

static gboolean
no_name_decided (Run *r)
{
  NO_NAME_RULES (DECIDES)
  return FALSE;
}

static gboolean
place_decided (Run *r)
{
  PLACE_RULES (DECIDES)
  return FALSE;
}

static gboolean
lone_word_vetoed (const Run *r)
{
  if (r->n != 1 || r->title)
    return FALSE;
  LONE_WORD_VETOES (DECIDES)
  return FALSE;
}

#undef DECIDES

static float
person_score (const Run *r)
{
  float score;
#define SCORES(name, test) if ((score = test (r)) > 0) return score;
  PERSON_SCORES (SCORES)
#undef SCORES
  return 0;
}

void
hz_names_judge_run (HzScan *scan, guint a, guint b, gboolean shouting, gboolean informal)
{
  Run run; /* not zeroed as a whole: each step sets what it fills */
  Run *r = &run;
  r->scan = scan;
  r->a = a;
  r->b = b;
  r->m = b - a;
  r->shouting = shouting;
  r->informal = informal;
  r->org = FALSE;
  r->unknown = r->commons = r->givens = r->surs = r->initials = 0;
  for (guint k = 0; k < r->m; k++)
    word_info (scan, &scan->toks[a + k], &r->w[k]);
  r->title = a > 0 && hz_tok_in (&scan->toks[a - 1], HZ_W_TITLE) && scan->toks[a].s - scan->toks[a - 1].e <= 2;

  if (whole_run_decided (r))
    return;
  read_cues (r);
  if (!trim (r) || no_name_decided (r))
    return;
  read_place_cues (r);
  if (place_decided (r))
    return;

  for (guint k = r->lo; k < r->hi; k++)
    {
      const Word *x = &r->w[k];
      r->unknown += !x->given && !x->sur && !x->common && !x->place && !x->initial && !x->conn;
      r->commons += x->common && !x->given && !x->sur;
      r->givens += x->given;
      r->surs += x->sur;
      r->initials += x->initial || x->conn;
    }
  float score = person_score (r);
  if (r->cue && score > 0)
    score = MIN (1.0f, score + 0.15f);
  if (score > 0 && r->a + r->hi < scan->n_toks && hz_tok_in (&scan->toks[r->a + r->hi], HZ_W_VERB_AFTER))
    score = MIN (1.0f, score + 0.1f);
  if (score > 0 && lone_word_vetoed (r))
    score = 0;
  gsize s = r->f->s, e = r->l->e;
  if (score > 0)
    {
      /* a given name followed by a lower-case surname ("Kylie minogue"; in chat text any
       * word that is no English word: "Mauro renallo") */
      if (r->l->given && r->n == 1 && a + r->hi == b && e == scan->toks[b - 1].e)
        {
          guint j = lower_surname_after (scan, b, informal);
          if (j > b)
            e = word_end (scan, &scan->toks[j - 1]);
        }
      names_add (scan, s, e, HZ_ENTITY_PERSON, score, "name");
      return;
    }
  /* a single unknown capitalised word after "in", "from", "to": a place */
  if (r->n <= 4 && r->unknown + r->initials >= (int) r->n && r->unknown >= 1 && !shouting && r->loc_cue)
    names_add (scan, s, e, HZ_ENTITY_LOCATION, 0.45f, "place-cue");
  else if (r->pm > 0)
    names_add (scan, s, r->w[r->lo + r->pm - 1].e, HZ_ENTITY_LOCATION, 0.6f, "place-gazetteer");
}

/* Lower-case (or otherwise uncapitalised) names: given+surname pairs, or a word after a
 * strong cue. */
guint
hz_names_judge_lower_word (HzScan *scan, guint i)
{
  const HzToken *t = &scan->toks[i];
  Word a, b;
  /* text without any capital letter: places from the place gazetteer ("from switzerland",
   * "barra de carrasco"); an ordinary word or a city that is also a name needs a cue */
  if (scan->all_lower && (t->cls & (HZ_WB (HZ_W_PLACE) | HZ_WB (HZ_W_CITY) | HZ_WB (HZ_W_PLACE_HEAD))))
    {
      guint end = i + 1;
      while (end < scan->n_toks && end < i + 4 && tight (scan, &scan->toks[end - 1], &scan->toks[end]))
        end++;
      guint pm = hz_names_place_match (scan, i, end);
      gboolean cue = i > 0 && (hz_tok_in (&scan->toks[i - 1], HZ_W_LOC_CUE) || hz_tok_in (&scan->toks[i - 1], HZ_W_LOC_CUE_WEAK));
      if (pm == 0 && cue && hz_tok_in (t, HZ_W_CITY) && !(t->cls & HZ_WB (HZ_W_COMMON)))
        pm = 1; /* "to kiel": a city that is also a surname, after a cue */
      if (pm > 0 && (pm > 1 || cue || !(t->cls & HZ_WB (HZ_W_COMMON))))
        {
          names_add (scan, t->s, word_end (scan, &scan->toks[i + pm - 1]), HZ_ENTITY_LOCATION, 0.5f, "place-lower");
          return i + pm;
        }
    }
  /* cue words of any recognizer are never lower-case names ("ping mara" is a cue + name) */
  if (t->cls & HZ_NAMES_LOWER_STOP)
    return i + 1;
  word_info (scan, t, &a);
  if (a.common && !a.given)
    return i + 1;
  if (a.given && !a.common && a.e == t->e)
    {
      /* given name + surname ("olga krylova", "benjamin a seiler"); a word outside every
       * list counts as a surname in chat text or when the text has no capitals at all */
      guint j = lower_surname_after (scan, i + 1, scan->informal || scan->all_lower);
      if (j > i + 1)
        {
          word_info (scan, &scan->toks[j - 1], &b);
          names_add (scan, a.s, b.e, HZ_ENTITY_PERSON, 0.55f, "name-lower");
          return j;
        }
    }
  /* after a strong cue: a given name; after a greeting or thanks ("thanks obama", "hey
   * tanner") also a frequent given name that is also a word, or a word outside the lists
   * ("love", "called" take things too: "love dis") */
  static const char *const takes_things[] = { "love", "called", "named", "name", NULL };
  if (i > 0 && hz_tok_in (&scan->toks[i - 1], HZ_W_STRONG_CUE) && a.e == t->e && t->nchars >= 3
      && ((a.given && !a.common)
          || (!tok_among (scan, i - 1, takes_things)
              && ((a.given_freq && !a.place) || (!a.given && !a.common && !a.place && !a.sur)))))
    {
      names_add (scan, a.s, a.e, HZ_ENTITY_PERSON, 0.55f, "name-cue");
      return i + 1;
    }
  /* informal text: a lower-case given name that is no English word, place or interjection */
  gboolean det = i > 0 && (hz_token_is (scan, &scan->toks[i - 1], "the") || hz_token_is (scan, &scan->toks[i - 1], "a")
                           || hz_token_is (scan, &scan->toks[i - 1], "an") || hz_token_is (scan, &scan->toks[i - 1], "my")
                           || hz_token_is (scan, &scan->toks[i - 1], "this") || hz_token_is (scan, &scan->toks[i - 1], "your"));
  if (a.given && !a.common && !a.place && t->nchars >= 4 && !det)
    names_add (scan, a.s, a.e, HZ_ENTITY_PERSON, 0.4f, "name-lower");
  /* chat text: a word outside every list opening a sentence as the subject of a verb of
   * people, an auxiliary or a copula ("momo is the best", "hangwani is slaying") */
  else if ((scan->informal || scan->all_lower) && (t->flags & HZ_TOK_SENT) && !a.given && !a.common && !a.place && !a.city
           && t->nchars >= 4 && a.e == t->e
           && (verb_after (scan, i + 1) || tok_in (scan, i + 1, HZ_W_MODAL)
               || (tok_is_copula (scan, i + 1) && !hz_names_describes_thing (scan, i + 1))))
    names_add (scan, a.s, a.e, HZ_ENTITY_PERSON, 0.35f, "name-lower");
  return i + 1;
}
