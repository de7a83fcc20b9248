/* rec-address.c — STREET_ADDRESS: street lines ("615 Benedum Drive", "Rue de la Gare 12",
 * "Koepenicker Str. 74", "ul. Jarzębinowa 5", "Laukaantie 80"), unit lines ("Apt. 460",
 * "Suite 321", "PO Box 12", "PSC 2581, Box 0041"), US military addresses, and the city /
 * region / country / postcode lines that follow a street line (one span for the whole block);
 * postcodes alone after a whole-word cue ("zip code is 880"). */
#include "hz-redact-private.h"

#include <string.h>

static const char *const suffix_words[] = {
  "street", "st", "road", "rd", "avenue", "ave", "av", "drive", "dr", "lane", "ln", "boulevard",
  "blvd", "way", "court", "ct", "place", "pl", "square", "sq", "terrace", "parkway", "pkwy",
  "highway", "hwy", "turnpike", "bridge", "circle", "cir", "trail", "crescent", "close", "row",
  "walk", "alley", "expressway", "freeway", "plaza", "pike", "route", "grove", "gardens", "mews",
  "heights", "park", "path", "point", "ridge", "loop", "crossing", "junction", "view", "estates",
  "station", "spur", "hill", "hills", "meadows", "causeway", "center", "centre", "cove", "creek",
  "falls", "ferry", "glen", "harbor", "haven", "island", "knoll", "lake", "manor", "mill",
  "mount", "orchard", "oval", "prairie", "ranch", "ridge", "shore", "shores", "springs", "summit",
  "trace", "valley", "village", "wharf", "woods", "str", "straße", "strasse", "út", "utca",
  "ut", "tér", "ter", NULL,
};

static const char *const strong_suffix[] = {
  "street", "st", "road", "rd", "avenue", "ave", "drive", "lane", "boulevard", "blvd", "str",
  "straße", "strasse", "út", "utca", "turnpike", "parkway", "highway", NULL,
};

static const char *const prefix_words[] = {
  "rue", "via", "viale", "vicolo", "avenida", "avda", "calle", "carrer", "ul", "ulica", "aleja",
  "piazza", "piazzale", "plaza", "praça", "praca", "rua", "strada", "chemin", "allée", "allee",
  "boulevard", "bd", "quai", "cours", "travessa", "largo", "paseo", "camino", "ulitsa", "odos",
  "leoforos", "jalan", "jl", "avenue", "rambla", "corso", "estrada", NULL,
};

static const char *const word_suffixes[] = {
  "straße", "strasse", "str", "straat", "weg", "laan", "gasse", "gatan", "gata", "gade", "vej",
  "vegen", "veien", "vägen", "väg", "katu", "tie", "polku", "kuja", "tee", "utca", "ulica",
  "ulice", "platz", "plein", "dreef", "singel", "steeg", "kade", "allee", "damm", "ufer",
  "gracht", "stræde", "stradă", "sokak", "sokağı", "caddesi", "vägen", "gränd", NULL,
};

static const char *const unit_words[] = {
  "apt", "apartment", "suite", "ste", "unit", "flat", "room", "rm", "floor", "fl", "box",
  "psc", "bldg", "building", "no", "nr", "lot", NULL,
};

static const char *const connectors[] = {
  "de", "la", "del", "di", "da", "van", "von", "der", "den", "du", "le", "al", "el", "y", "dos",
  "das", "do", "des", "of", "the", "los", "las", "st", "san", "santa", "ul", NULL,
};

static const char *const zip_context[] = { "zip", "zipcode", "postcode", "postal", "post", NULL };

static const char *const addr_context[] = { "address", "live", "lives", "living", "located",
                                            "reside", "resides", "moved", "move", "on", "at",
                                            "station", "ship", "deliver", "send", NULL };

static gboolean
in_list (const HzScan *scan, const HzToken *t, const char *const *list)
{
  for (const char *const *w = list; *w; w++)
    if (hz_token_is (scan, t, *w))
      return TRUE;
  return FALSE;
}

static gboolean
has_word_suffix (const HzScan *scan, const HzToken *t)
{
  gsize n = t->e - t->s;
  for (const char *const *w = word_suffixes; *w; w++)
    {
      gsize k = strlen (*w);
      if (n > k + 2 && g_ascii_strncasecmp (scan->text + t->e - k, *w, k) == 0)
        return TRUE;
    }
  return FALSE;
}

static gboolean
is_num (const HzScan *scan, const HzToken *t)
{
  if (t->flags & HZ_TOK_DIGIT)
    return t->nchars <= 6;
  /* 12B, 7a */
  gsize n = t->e - t->s;
  const char *s = scan->text + t->s;
  return n >= 2 && n <= 5 && hz_is_digit (s[0]) && hz_is_alpha_ascii (s[n - 1])
         && (n < 3 || hz_is_digit (s[n - 2]));
}

static gboolean
is_name (const HzToken *t)
{
  return (t->flags & HZ_TOK_ALPHA) && (t->flags & (HZ_TOK_CAP | HZ_TOK_UPPER));
}

/* bytes between two tokens are only spaces/tabs (and an optional '.' right after the first) */
static gboolean
same_line_gap (const HzScan *scan, gsize a, gsize b, gboolean allow_comma)
{
  if (b < a || b - a > 4)
    return FALSE;
  for (gsize i = a; i < b; i++)
    {
      char c = scan->text[i];
      if (c == ' ' || c == '\t' || (c == '.' && i == a) || (allow_comma && c == ','))
        continue;
      return FALSE;
    }
  return TRUE;
}

/* A unit part at token k: unit word ['.'] number [, Box number]. Returns the token after it. */
static guint
unit_part (const HzScan *scan, guint k)
{
  guint n = scan->n_toks;
  if (k + 1 >= n || !in_list (scan, &scan->toks[k], unit_words))
    return k;
  guint j = k + 1;
  if (hz_token_is (scan, &scan->toks[k], "po") || hz_token_is (scan, &scan->toks[k], "p"))
    j = k + 1;
  if (!is_num (scan, &scan->toks[j]) || !same_line_gap (scan, scan->toks[k].e, scan->toks[j].s, FALSE))
    return k;
  j++;
  if (j + 1 < n && hz_token_is (scan, &scan->toks[j], "box") && is_num (scan, &scan->toks[j + 1])
      && same_line_gap (scan, scan->toks[j - 1].e, scan->toks[j].s, TRUE))
    j += 2;
  return j;
}

/* Lines after a street: ", City", "\n, ST", "\n Country 12345", "(Region)", unit parts. */
static gsize
extend_block (const HzScan *scan, guint k, gsize e)
{
  const char *t = scan->text;
  guint n = scan->n_toks;
  for (int seg = 0; seg < 7 && k < n; seg++)
    {
      gsize g = e;
      int newlines = 0, commas = 0;
      while (g < scan->len && (t[g] == ' ' || t[g] == '\n' || t[g] == ',' || t[g] == '\t' || t[g] == '\r'))
        {
          newlines += t[g] == '\n';
          commas += t[g] == ',';
          g++;
        }
      if (g != scan->toks[k].s && !(g < scan->len && t[g] == '(' && g + 1 == scan->toks[k].s))
        break;
      if (newlines > 2 || commas > 1)
        break;
      gboolean sep = newlines > 0 || commas > 0;
      guint j = unit_part (scan, k);
      if (j > k)
        {
          k = j;
          e = scan->toks[j - 1].e;
          continue;
        }
      const HzToken *tk = &scan->toks[k];
      if (is_num (scan, tk) && (tk->flags & HZ_TOK_DIGIT) && tk->nchars >= 3)
        {
          e = tk->e;
          k++;
          continue;
        }
      if (!sep)
        break;
      if (hz_token_is (scan, tk, "nan"))
        {
          e = tk->e;
          k++;
          continue;
        }
      /* a run of capitalised words (a city, region or country), maybe ending in a postcode */
      guint j2 = k, names = 0;
      gsize re = e;
      while (j2 < n && names < 5)
        {
          const HzToken *w = &scan->toks[j2];
          if (j2 > k && !same_line_gap (scan, scan->toks[j2 - 1].e, w->s, FALSE)
              && !(w->s >= 2 && t[w->s - 1] == '(' && same_line_gap (scan, scan->toks[j2 - 1].e, w->s - 1, FALSE)))
            break;
          if (is_name (w) || (names > 0 && in_list (scan, w, connectors)))
            {
              names++;
              re = w->e;
              if (re < scan->len && t[re] == ')')
                re++;
              j2++;
              continue;
            }
          break;
        }
      if (names == 0)
        break;
      if (re < scan->len && t[re] == ':')
        break; /* "Mobile:" is a field label, not a city */
      if (j2 < n && is_num (scan, &scan->toks[j2]) && same_line_gap (scan, re, scan->toks[j2].s, FALSE))
        re = scan->toks[j2++].e;
      /* don't swallow the next sentence */
      if (j2 < n && (scan->toks[j2].flags & HZ_TOK_LOWER) && same_line_gap (scan, re, scan->toks[j2].s, FALSE)
          && !(scan->toks[j2].s > re && t[re] == ','))
        break;
      e = re;
      k = j2;
    }
  return e;
}

/* Street core starting at token i. Returns the end byte (0 if none) and the next token. */
static gsize
street_core (const HzScan *scan, guint i, guint *next, float *score)
{
  guint n = scan->n_toks, k = i;
  const char *t = scan->text;
  int lead_nums = 0;
  while (k < n && lead_nums < 2 && is_num (scan, &scan->toks[k])
         && (k == i || same_line_gap (scan, scan->toks[k - 1].e, scan->toks[k].s, FALSE)))
    {
      lead_nums++;
      k++;
    }
  if (k >= n)
    return 0;
  if (lead_nums)
    {
      /* only spaces between the house number and the street name */
      gsize a = scan->toks[k - 1].e, b = scan->toks[k].s;
      if (b - a > 2 || b == a)
        return 0;
      for (gsize q = a; q < b; q++)
        if (t[q] != ' ')
          return 0;
    }
  gboolean prefix = FALSE, suffix = FALSE, strong = FALSE, wsuffix = FALSE;
  guint names = 0, j = k;
  if (in_list (scan, &scan->toks[j], prefix_words))
    {
      prefix = TRUE;
      j++;
    }
  guint last_name = 0;
  while (j < n && names < 5)
    {
      const HzToken *w = &scan->toks[j];
      if (j > k && !same_line_gap (scan, scan->toks[j - 1].e, w->s, FALSE))
        break;
      if (is_name (w) || ((w->flags & HZ_TOK_ALPHA) && in_list (scan, w, suffix_words))
          || (names > 0 && in_list (scan, w, connectors)) || (prefix && (w->flags & HZ_TOK_ALPHA)))
        {
          names++;
          last_name = j;
          if (has_word_suffix (scan, w))
            wsuffix = TRUE;
          if (in_list (scan, w, suffix_words) && j > k)
            {
              suffix = TRUE;
              strong = strong || in_list (scan, w, strong_suffix);
              j++;
              break; /* the suffix ends the street name */
            }
          j++;
          continue;
        }
      break;
    }
  if (names == 0 || (prefix && names == 0))
    return 0;
  gsize e = scan->toks[last_name].e;
  if (suffix && e < scan->len && t[e] == '.')
    e++;
  int trail_num = 0;
  if (j < n && is_num (scan, &scan->toks[j]) && same_line_gap (scan, scan->toks[last_name].e, scan->toks[j].s, FALSE))
    {
      e = scan->toks[j].e;
      j++;
      trail_num = 1;
      if (e < scan->len && t[e] == '.' && !(e + 1 >= scan->len || t[e + 1] == '\n'))
        {
          /* "Rákóczi út 66." keeps its dot when the line goes on */
          if (e + 1 < scan->len && t[e + 1] == ' ' && j < n && !(scan->toks[j].flags & HZ_TOK_SENT))
            e++;
        }
    }
  if (!lead_nums && !trail_num)
    return 0;
  float s = 0;
  if (lead_nums && (suffix || prefix || wsuffix))
    s = 0.85f;
  else if (trail_num && (prefix || wsuffix || strong))
    s = 0.8f;
  else if (lead_nums && trail_num && names <= 4)
    s = 0.6f;
  else if (lead_nums && names <= 4 && hz_context_before (scan, i, 3, addr_context))
    s = 0.5f;
  else if (trail_num && names <= 3 && hz_context_before (scan, i, 2, addr_context))
    s = 0.5f;
  if (s == 0)
    return 0;
  *next = j;
  *score = s;
  return e;
}

void
hz_rec_address (HzScan *scan)
{
  if (!scan->r->enabled[HZ_ENTITY_STREET_ADDRESS])
    return;
  const char *t = scan->text;
  guint n = scan->n_toks;
  for (guint i = 0; i < n; i++)
    {
      const HzToken *tk = &scan->toks[i];
      guint next = i;
      float score = 0;
      gsize e = 0;
      /* "the corner of X and Y" is one address */
      if ((tk->flags & (HZ_TOK_CAP | HZ_TOK_UPPER | HZ_TOK_DIGIT)) || in_list (scan, tk, prefix_words))
        e = street_core (scan, i, &next, &score);
      if (e == 0)
        {
          guint j = unit_part (scan, i);
          /* PO Box */
          if (j == i && i + 2 < n && hz_token_is (scan, tk, "po") && hz_token_is (scan, &scan->toks[i + 1], "box"))
            j = unit_part (scan, i + 1);
          if (j > i && !hz_token_is (scan, tk, "no") && !hz_token_is (scan, tk, "nr")
              && !hz_token_is (scan, tk, "room") && !hz_token_is (scan, tk, "floor"))
            {
              next = j;
              e = scan->toks[j - 1].e;
              score = 0.6f;
            }
        }
      if (e == 0 && i + 2 < n && (hz_token_is (scan, tk, "apo") || hz_token_is (scan, tk, "fpo") || hz_token_is (scan, tk, "dpo"))
          && (scan->toks[i + 1].flags & HZ_TOK_UPPER) && scan->toks[i + 1].nchars == 2
          && (scan->toks[i + 2].flags & HZ_TOK_DIGIT) && scan->toks[i + 2].nchars == 5)
        {
          next = i + 3;
          e = scan->toks[i + 2].e;
          score = 0.8f;
        }
      if (e == 0)
        {
          /* postcode after a cue: "my zip code is 880" */
          if ((tk->flags & HZ_TOK_DIGIT) && tk->nchars >= 3 && tk->nchars <= 10
              && hz_context_before (scan, i, 4, zip_context))
            hz_scan_add (scan, tk->s, tk->e, HZ_ENTITY_STREET_ADDRESS, 0.7f, HZ_TIER_CONTEXT, "postcode");
          continue;
        }
      gsize s = tk->s;
      /* include "the corner of" and a second street joined by "and" */
      if (i >= 3 && hz_token_is (scan, &scan->toks[i - 1], "of") && hz_token_is (scan, &scan->toks[i - 2], "corner")
          && hz_token_is (scan, &scan->toks[i - 3], "the"))
        {
          s = scan->toks[i - 3].s;
          if (next + 1 < n && hz_token_is (scan, &scan->toks[next], "and"))
            {
              guint k = next + 1, names = 0;
              while (k < n && is_name (&scan->toks[k]) && names < 4)
                {
                  e = scan->toks[k].e;
                  k++;
                  names++;
                }
              next = k;
            }
        }
      e = extend_block (scan, next, e);
      (void) t;
      hz_scan_add (scan, s, e, HZ_ENTITY_STREET_ADDRESS, score, HZ_TIER_CONTEXT, "street");
      i = hz_token_at_or_after (scan, e) - 1;
    }
}
