/* rec-address.c — STREET_ADDRESS: street lines ("615 Benedum Drive", "Rue de la Gare 12",
 * "Koepenicker Str. 74", "ul. Jarzębinowa 5", "Laukaantie 80"), unit lines ("Apt. 460",
 * "Suite 321", "PO Box 12", "PSC 2581, Box 0041"), US military addresses, and the city /
 * region / country / postcode lines that follow a street line (one span for the whole block);
 * postcodes alone after a whole-word cue ("zip code is 880"). */
#include "hz-recognizers.h"

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
  "ut", "tér", "ter", "u", "körút", "krt",
  /* more USPS street suffixes (Publication 28, appendix C1), plural forms included */
  "streets", "roads", "avenues", "drives", "lanes", "ways", "courts", "places", "squares",
  "terraces", "parkways", "circles", "trails", "crescents", "alleys", "plazas", "routes",
  "groves", "points", "ridges", "loops", "crossings", "junctions", "views", "stations", "spurs",
  "meadow", "centers", "coves", "creeks", "ferries", "glens", "harbors", "havens", "islands",
  "knolls", "lakes", "manors", "mills", "mounts", "orchards", "ovals", "prairies", "ranches",
  "summits", "traces", "valleys", "villages", "wharves", "extension", "extensions", "rapids",
  "rapid", "parks", "crossroad", "crossroads", "gateway", "gateways", "pass", "passage",
  "ports", "port", "union", "unions", "vista", "vistas", "fort", "forks", "fork", "fields",
  "field", "flats", "fords", "ford", "forest", "forges", "gardens", "greens", "green",
  "hollow", "inlet", "isle", "keys", "landing", "lights", "locks", "lodge", "mall", "mission",
  "motorway", "mountain", "mountains", "neck", "overpass", "pines", "plains", "plain",
  "radial", "ramp", "rest", "shoal", "shoals", "skyway", "stream", "stravenue", "throughway",
  "track", "trafficway", "tunnel", "underpass", "viaduct", "ville", "walks", "well", "wells",
  "bypass", "bluff", "bluffs", "bottom", "branch", "brook", "brooks", "burg", "burgs",
  "canyon", "cape", "cliff", "cliffs", "common", "commons", "corner", "corners", "course",
  "crest", "curve", "dale", "dam", "divide", "estate", "expressways", "freeways", "heights",
  "hills", "spring", "squares",
  /* written in lower case after the name in Nordic, Dutch, Hungarian, Polish addresses */
  "gate", "vei", "veien", "veg", "vegen", "terrasse", "plass", "torg", "gata", "vej", "allé",
  "kapu", "rkp", "sor", "köz", "sétány", "straat", "laan", "plein", "weg", "gasse", "platz",
  "aleja", "rynek", "osiedle", NULL,
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

const HzWordList hz_address_lists[] = {
  { HZ_W_ST_SUFFIX, suffix_words },
  { HZ_W_ST_STRONG, strong_suffix },
  { HZ_W_ST_PREFIX, prefix_words },
  { HZ_W_UNIT, unit_words },
  { HZ_W_ADDR_CONN, connectors },
  { HZ_W_ZIP_CUE, zip_context },
  { HZ_W_ADDR_CUE, addr_context },
  { 0, NULL },
};

static gboolean
has_word_suffix (const HzScan *scan, const HzToken *t)
{
  static guint8 last_ok[256];
  static gsize lens[G_N_ELEMENTS (word_suffixes)];
  static gsize inited = 0;
  if (g_once_init_enter (&inited))
    {
      for (gsize i = 0; word_suffixes[i]; i++)
        {
          lens[i] = strlen (word_suffixes[i]);
          guchar c = (guchar) word_suffixes[i][lens[i] - 1];
          last_ok[c] = last_ok[(guchar) g_ascii_toupper ((char) c)] = 1;
        }
      g_once_init_leave (&inited, 1);
    }
  gsize n = t->e - t->s;
  if (!last_ok[(guchar) scan->text[t->e - 1]])
    return FALSE;
  for (gsize i = 0; word_suffixes[i]; i++)
    {
      const char *const *w = &word_suffixes[i];
      gsize k = lens[i];
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
  /* 12B, 7a; not a decade ("70s", "1990s") */
  gsize n = t->e - t->s;
  const char *s = scan->text + t->s;
  if (n >= 3 && (s[n - 1] == 's' || s[n - 1] == 'S') && s[n - 2] == '0')
    return FALSE;
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
  if (k + 1 >= n || !hz_tok_in (&scan->toks[k], HZ_W_UNIT))
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

/* The token's bytes match `pat`: 'A' an upper-case ASCII letter, '9' a digit, '?' either,
 * any other character itself. */
static gboolean
tok_shape (const HzScan *scan, const HzToken *t, const char *pat)
{
  gsize n = strlen (pat);
  if (t->e - t->s != n)
    return FALSE;
  for (gsize q = 0; q < n; q++)
    {
      char c = scan->text[t->s + q];
      gboolean up = c >= 'A' && c <= 'Z', dig = hz_is_digit (c);
      if ((pat[q] == 'A' && !up) || (pat[q] == '9' && !dig) || (pat[q] == '?' && !up && !dig)
          || (pat[q] != 'A' && pat[q] != '9' && pat[q] != '?' && c != pat[q]))
        return FALSE;
    }
  return TRUE;
}

/* Postcode formats written with letters, starting at token k: the UK's (outward code A9, A99,
 * AA9, AA99, A9A or AA9A, a space, inward code 9AA: "LS6 2QT", "SW1A 2AA"), Canada's (A9A
 * 9A9, the letters D, F, I, O, Q, U never used: "K1A 0B6") and, with `dutch`, the
 * Netherlands' (9999 AA, the first digit not 0, the letters not SA, SD or SS: "1012 PH").
 * Formats: Royal Mail "Postcode Address File" programmers' guide; Canada Post "Addressing
 * Guidelines"; PostNL. Returns the token after the postcode, or k when there is none. */
static guint
postcode_alnum (const HzScan *scan, guint k, gboolean dutch)
{
  if (k + 1 >= scan->n_toks)
    return k;
  const HzToken *a = &scan->toks[k], *b = &scan->toks[k + 1];
  /* cheap rejects first: two tokens of 2-4 and 2-3 bytes, one space apart */
  gsize an = a->e - a->s, bn = b->e - b->s;
  if (an < 2 || an > 4 || bn < 2 || bn > 3 || b->s != a->e + 1 || scan->text[a->e] != ' ')
    return k;
  const char *t = scan->text;
  if (tok_shape (scan, b, "9AA")
      && (tok_shape (scan, a, "A9") || tok_shape (scan, a, "A99") || tok_shape (scan, a, "AA9")
          || tok_shape (scan, a, "AA99") || tok_shape (scan, a, "A9A") || tok_shape (scan, a, "AA9A")))
    return k + 2;
  if (tok_shape (scan, a, "A9A") && tok_shape (scan, b, "9A9"))
    {
      const char *no = "DFIOQU";
      if (!strchr (no, t[a->s]) && !strchr (no, t[a->s + 2]) && !strchr (no, t[b->s + 1])
          && t[a->s] != 'W' && t[a->s] != 'Z')
        return k + 2;
    }
  if (dutch && tok_shape (scan, a, "9999") && t[a->s] != '0' && tok_shape (scan, b, "AA")
      && !(t[b->s] == 'S' && (t[b->s + 1] == 'A' || t[b->s + 1] == 'D' || t[b->s + 1] == 'S')))
    return k + 2;
  return k;
}

/* One component of an address block after the street line. */
typedef enum { PART_UNIT, PART_NUM, PART_NAN, PART_NAMES } PartKind;

typedef struct {
  gsize s, e;
  PartKind kind;
  gboolean newline, comma;  /* separators before it */
} Part;

enum { MAX_PARTS = 12 };

/* Lines after a street: ", City", "\n, ST", "\n Country 12345", "(Region)", unit parts.
 * Each component is recorded in parts[] (a trailing postcode after a name gets its own
 * part). Returns the end of the block. */
static gsize
extend_block (const HzScan *scan, guint k, gsize e, Part *parts, guint *n_parts)
{
  const char *t = scan->text;
  guint n = scan->n_toks;
  *n_parts = 0;
  for (int seg = 0; seg < 7 && k < n && *n_parts + 2 <= MAX_PARTS; seg++)
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
      Part *pt = &parts[*n_parts];
      pt->newline = newlines > 0;
      pt->comma = commas > 0;
      guint j = unit_part (scan, k);
      if (j > k)
        {
          pt->s = scan->toks[k].s;
          pt->e = scan->toks[j - 1].e;
          pt->kind = PART_UNIT;
          (*n_parts)++;
          k = j;
          e = scan->toks[j - 1].e;
          continue;
        }
      const HzToken *tk = &scan->toks[k];
      /* military post line after a unit: "APO AA 61487" */
      if (sep && k + 2 < n && (hz_token_is (scan, tk, "apo") || hz_token_is (scan, tk, "fpo") || hz_token_is (scan, tk, "dpo"))
          && (scan->toks[k + 1].flags & HZ_TOK_ALPHA) && scan->toks[k + 1].nchars == 2
          && (scan->toks[k + 2].flags & HZ_TOK_DIGIT) && scan->toks[k + 2].nchars == 5)
        {
          pt->s = tk->s;
          pt->e = scan->toks[k + 2].e;
          pt->kind = PART_UNIT;
          (*n_parts)++;
          e = pt->e;
          k += 3;
          continue;
        }
      guint pz = postcode_alnum (scan, k, TRUE);
      if (pz > k)
        {
          pt->s = tk->s;
          pt->e = scan->toks[pz - 1].e;
          pt->kind = PART_NUM;
          (*n_parts)++;
          e = pt->e;
          k = pz;
          continue;
        }
      if (is_num (scan, tk) && (tk->flags & HZ_TOK_DIGIT) && (tk->nchars >= 3 || (sep && tk->nchars == 2)))
        {
          pt->s = tk->s;
          pt->e = tk->e;
          pt->kind = PART_NUM;
          (*n_parts)++;
          e = tk->e;
          k++;
          continue;
        }
      /* without a separator, only a place name that ends the line or sentence right after a
       * unit or postcode ("Apt. 678 Velenje", "Suite 019 CHARLEROI Victoria?", "1012 PH
       * Amsterdam.") */
      gboolean after_unit_or_code = *n_parts > 0 && (parts[*n_parts - 1].kind == PART_UNIT || parts[*n_parts - 1].kind == PART_NUM);
      if (!sep && !after_unit_or_code)
        break;
      if (hz_token_is (scan, tk, "nan"))
        {
          pt->s = tk->s;
          pt->e = tk->e;
          pt->kind = PART_NAN;
          (*n_parts)++;
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
          if (is_name (w) || (names > 0 && hz_tok_in (w, HZ_W_ADDR_CONN)))
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
      if (!sep)
        {
          gsize q = re;
          while (q < scan->len && t[q] == ' ')
            q++;
          gboolean ends = q >= scan->len || t[q] == '\n' || t[q] == '?' || t[q] == '!'
                          || (t[q] == '.' && (q + 1 >= scan->len || t[q + 1] == ' ' || t[q + 1] == '\n'))
                          || hz_token_is (scan, &scan->toks[MIN (j2, n - 1)], "nan");
          if (!ends)
            break;
        }
      gsize ne = re;
      gsize zs = 0, ze = 0;
      guint pz2 = j2 < n && same_line_gap (scan, re, scan->toks[j2].s, FALSE) ? postcode_alnum (scan, j2, FALSE) : j2;
      if (pz2 > j2)
        {
          zs = scan->toks[j2].s; /* "Leeds LS6 2QT" */
          re = ze = scan->toks[pz2 - 1].e;
          j2 = pz2;
        }
      else if (j2 < n && is_num (scan, &scan->toks[j2]) && same_line_gap (scan, re, scan->toks[j2].s, FALSE))
        {
          zs = scan->toks[j2].s;
          re = ze = scan->toks[j2++].e;
        }
      /* don't swallow the next sentence (a postcode ends the part: "NY 10118 please") */
      if (!ze && j2 < n && (scan->toks[j2].flags & HZ_TOK_LOWER) && same_line_gap (scan, re, scan->toks[j2].s, FALSE)
          && !(scan->toks[j2].s > re && t[re] == ','))
        break;
      pt->s = tk->s;
      pt->e = ne;
      pt->kind = PART_NAMES;
      (*n_parts)++;
      if (ze)
        {
          Part *z = &parts[(*n_parts)++];
          z->s = zs;
          z->e = ze;
          z->kind = PART_NUM;
          z->newline = z->comma = FALSE;
        }
      e = re;
      k = j2;
    }
  return e;
}

/* Street core starting at token i. Returns the end byte (0 if none) and the next token. */
/* End of the token that starts at byte s. */
static gsize
first_token_end (const HzScan *scan, gsize s)
{
  guint k = hz_token_at_or_after (scan, s);
  return k < scan->n_toks ? scan->toks[k].e : s + 1;
}

/* a USPS directional abbreviation in capitals: N, S, E, W, NE, NW, SE, SW (USPS
 * Publication 28, appendix B) */
static gboolean
is_directional (const HzScan *scan, const HzToken *t)
{
  static const char *const dirs[] = { "N", "S", "E", "W", "NE", "NW", "SE", "SW", NULL };
  if (!(t->flags & HZ_TOK_UPPER) || t->nchars > 2)
    return FALSE;
  for (const char *const *d = dirs; *d; d++)
    if (t->e - t->s == strlen (*d) && memcmp (scan->text + t->s, *d, t->e - t->s) == 0)
      return TRUE;
  return FALSE;
}

/* A US state's USPS code and a ZIP code (5 digits, or ZIP+4 "62704-1234") at token k, after
 * a capitalised word and a comma on the same line ("Springfield, IL 62704"). Returns the
 * token after the ZIP code, or k when there is none. Codes: USPS Publication 28, appendix B. */
static guint
us_state_zip (const HzScan *scan, guint k)
{
  static const char states[] = "AL AK AZ AR CA CO CT DE DC FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS "
                               "MO MT NE NV NH NJ NM NY NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI "
                               "WY PR GU VI AS MP";
  const HzToken *st = &scan->toks[k];
  if (k == 0 || k + 1 >= scan->n_toks || !tok_shape (scan, st, "AA") || !is_name (&scan->toks[k - 1]))
    return k;
  const char *t = scan->text;
  gboolean listed = FALSE;
  for (const char *p = states; *p; p += p[2] ? 3 : 2)
    listed |= p[0] == t[st->s] && p[1] == t[st->s + 1];
  /* ", " before the code, one space after it */
  gsize a = scan->toks[k - 1].e;
  if (!listed || st->s != a + 2 || t[a] != ',' || t[a + 1] != ' ')
    return k;
  const HzToken *z = &scan->toks[k + 1];
  if (z->s != st->e + 1 || t[st->e] != ' ')
    return k;
  if (!tok_shape (scan, z, "99999") && !tok_shape (scan, z, "99999-9999"))
    return k;
  /* "IL 62704" ends there ("IL 62704.5" is no ZIP code) */
  if (z->e < scan->len && (hz_is_alnum_ascii (t[z->e]) || (t[z->e] == '.' && z->e + 1 < scan->len && hz_is_digit (t[z->e + 1]))))
    return k;
  return k + 2;
}

/* Shape of a street line found by street_core(). */
typedef struct {
  int lead_nums;      /* house numbers before the name (0-2) */
  gboolean trail_num; /* a number after the name ("Harjukuja 54") */
  gsize second_s;     /* start of what follows the first leading number */
} StreetShape;

static gsize
street_core (const HzScan *scan, guint i, guint *next, float *score, StreetShape *shape)
{
  guint n = scan->n_toks, k = i;
  const char *t = scan->text;
  int lead_nums = 0;
  /* a part of a decimal or dotted number ("Mozilla/5.0 Chrome 120", "Python 3.11.4 Main
   * Street") is no house number (here, nor as the second of two below) */
  gsize s0 = scan->toks[i].s;
  if (s0 >= 2 && t[s0 - 1] == '.' && hz_is_digit (t[s0 - 2]) && is_num (scan, &scan->toks[i]))
    return 0;
  while (k < n && lead_nums < 2 && is_num (scan, &scan->toks[k])
         && (k == i || (same_line_gap (scan, scan->toks[k - 1].e, scan->toks[k].s, FALSE)
                        && !(scan->toks[k].s == scan->toks[k - 1].e + 1 && t[scan->toks[k - 1].e] == '.'))))
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
  if (hz_tok_in (&scan->toks[j], HZ_W_ST_PREFIX))
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
      if (is_name (w) || ((w->flags & HZ_TOK_ALPHA) && hz_tok_in (w, HZ_W_ST_SUFFIX))
          || (names > 0 && hz_tok_in (w, HZ_W_ADDR_CONN)) || (prefix && (w->flags & HZ_TOK_ALPHA)))
        {
          names++;
          last_name = j;
          if (has_word_suffix (scan, w))
            wsuffix = TRUE;
          if (hz_tok_in (w, HZ_W_ST_SUFFIX) && j > k)
            {
              suffix = TRUE;
              strong = strong || hz_tok_in (w, HZ_W_ST_STRONG);
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
  /* a second name + suffix after the first suffix ("Crown Street Kishiev Squares") */
  if (suffix)
    {
      guint q = j;
      for (guint cnt = 0; q < n && cnt < 3; q++, cnt++)
        {
          const HzToken *w = &scan->toks[q];
          if (!same_line_gap (scan, scan->toks[q - 1].e, w->s, FALSE) || !is_name (w))
            break;
          if (cnt >= 1 && hz_tok_in (w, HZ_W_ST_SUFFIX))
            {
              last_name = q;
              j = q + 1;
              break;
            }
        }
    }
  /* Hungarian house numbers keep their dot ("Király u. 15.") */
  gboolean hu = scan->toks[last_name].nchars <= 5
                && (hz_token_is (scan, &scan->toks[last_name], "u") || hz_token_is (scan, &scan->toks[last_name], "út")
                    || hz_token_is (scan, &scan->toks[last_name], "utca") || hz_token_is (scan, &scan->toks[last_name], "tér")
                    || hz_token_is (scan, &scan->toks[last_name], "körút"));
  gsize e = scan->toks[last_name].e;
  if (suffix && e < scan->len && t[e] == '.')
    e++;
  /* a post-directional after the suffix, in USPS abbreviation ("1600 Pennsylvania Avenue NW") */
  if (suffix && lead_nums && j < n && is_directional (scan, &scan->toks[j])
      && e < scan->len && t[e] == ' ' && scan->toks[j].s == e + 1)
    {
      last_name = j++;
      e = scan->toks[last_name].e;
      if (e < scan->len && t[e] == '.')
        e++;
    }
  int trail_num = 0;
  if (j < n && is_num (scan, &scan->toks[j]) && same_line_gap (scan, scan->toks[last_name].e, scan->toks[j].s, FALSE))
    {
      e = scan->toks[j].e;
      j++;
      trail_num = 1;
      if (hu && e < scan->len && t[e] == '.')
        e++;
      else if (e < scan->len && t[e] == '.' && !(e + 1 >= scan->len || t[e + 1] == '\n'))
        {
          /* "Rákóczi út 66." keeps its dot when the line goes on */
          if (e + 1 < scan->len && t[e + 1] == ' ' && j < n && !(scan->toks[j].flags & HZ_TOK_SENT))
            e++;
        }
    }
  /* "Tungata 11 Rott Crossroad": a second street name with its suffix after the number */
  gboolean cont_suffix = FALSE;
  if (trail_num && !lead_nums)
    {
      guint q = j;
      for (guint cnt = 0; q < n && cnt < 3; q++, cnt++)
        {
          const HzToken *w = &scan->toks[q];
          if (!same_line_gap (scan, scan->toks[q - 1].e, w->s, FALSE) || !is_name (w))
            break;
          if (cnt >= 1 && hz_tok_in (w, HZ_W_ST_SUFFIX))
            {
              e = w->e;
              j = q + 1;
              cont_suffix = TRUE;
              break;
            }
        }
    }
  if (!lead_nums && !trail_num)
    return 0;
  float s = 0;
  if (lead_nums && (suffix || prefix || wsuffix))
    s = 0.85f;
  else if (trail_num && (prefix || wsuffix || strong || cont_suffix))
    s = 0.8f;
  else if (lead_nums && trail_num && names <= 4)
    s = 0.6f;
  else if (lead_nums && names <= 4 && hz_context_before (scan, i, 3, HZ_W_ADDR_CUE))
    s = 0.5f;
  else if (trail_num && names <= 3 && hz_context_before (scan, i, 2, HZ_W_ADDR_CUE))
    s = 0.5f;
  else if ((lead_nums || trail_num) && names <= 4 && i >= 2 && hz_token_is (scan, &scan->toks[i - 1], "of")
           && hz_token_is (scan, &scan->toks[i - 2], "corner"))
    s = 0.7f; /* "the corner of Kuusiku 7 and ..." */
  if (s == 0)
    return 0;
  *next = j;
  *score = s;
  shape->lead_nums = lead_nums;
  shape->trail_num = trail_num;
  shape->second_s = lead_nums ? scan->toks[i + 1].s : scan->toks[i].s;
  return e;
}

/* Presidio-style component spans. A block whose street line carries an extra leading house
 * number ("28245 Puruntie 82", "17151 2450 Crown St") is written as building number + street
 * + unit + city/region/country + postcode; those are reported as separate spans (the
 * numbers, street and unit as STREET_ADDRESS, the place names as LOCATION), which hides the
 * same text. A unit on the street line itself ("... 71 Suite 838"), two or more comma parts
 * on the line ("..., City, Country"), or a two-number street followed by more lines keep the
 * block as one span (the caller does that when this returns FALSE). */
static gboolean
emit_components (HzScan *scan, gsize s, gsize core_e, const StreetShape *shape, const Part *parts,
                 guint np, float score)
{
  gboolean extra_lead = shape->lead_nums == 2 || (shape->lead_nums == 1 && shape->trail_num);
  if (!extra_lead)
    return FALSE;
  guint commas = 0, newlines = 0;
  for (guint k = 0; k < np; k++)
    {
      if (k == 0 && parts[k].kind == PART_UNIT && !parts[k].newline && !parts[k].comma)
        return FALSE; /* unit on the street line */
      commas += parts[k].comma && !parts[k].newline;
      newlines += parts[k].newline;
    }
  if (commas >= 2 || (shape->lead_nums == 2 && newlines > 0))
    return FALSE;
  for (guint k = 1; k < np; k++)
    if (parts[k].comma && parts[k - 1].kind == PART_NAMES && parts[k - 1].newline)
      return FALSE; /* US-style "City, ST 12345" line: one address */
  if (newlines > 0 && parts[np - 1].kind != PART_NUM)
    return FALSE; /* a multi-line block written as components ends with its postcode */
  hz_scan_add (scan, s, first_token_end (scan, s),
               HZ_ENTITY_STREET_ADDRESS, score, HZ_TIER_CONTEXT, "street-number");
  hz_scan_add (scan, shape->second_s, core_e, HZ_ENTITY_STREET_ADDRESS, score, HZ_TIER_CONTEXT, "street");
  for (guint k = 0; k < np; k++)
    {
      const Part *p = &parts[k];
      HzEntityType type = (p->kind == PART_NAMES || p->kind == PART_NAN) ? HZ_ENTITY_LOCATION
                                                                          : HZ_ENTITY_STREET_ADDRESS;
      hz_scan_add (scan, p->s, p->e, type, score, HZ_TIER_CONTEXT,
                   p->kind == PART_UNIT ? "street-unit" : p->kind == PART_NUM ? "postcode" : "address-place");
    }
  return TRUE;
}

void
hz_rec_address (HzScan *scan)
{
  /* every form (house number, unit number, postcode, military box) needs a digit */
  if (!scan->r->enabled[HZ_ENTITY_STREET_ADDRESS] || !hz_scan_has_digits (scan))
    return;
  const char *t = scan->text;
  guint n = scan->n_toks;
  guint next_digit = 0; /* index of the next token that starts with a digit (n if none) */
  for (guint i = 0; i < n; i++)
    {
      const HzToken *tk = &scan->toks[i];
      if (next_digit < i)
        next_digit = i;
      while (next_digit < n && !hz_is_digit (t[scan->toks[next_digit].s]))
        next_digit++;
      /* a street, unit or box has its number within the next 7 tokens ("Rue de la Gare 12") */
      if (next_digit >= n || next_digit > i + 7)
        {
          if (next_digit >= n)
            break;
          i = next_digit - 8;
          continue;
        }
      guint next = i;
      float score = 0;
      gsize e = 0;
      StreetShape shape = { 0 };
      gboolean is_street = FALSE;
      if ((tk->flags & (HZ_TOK_CAP | HZ_TOK_UPPER | HZ_TOK_DIGIT)) || hz_tok_in (tk, HZ_W_ST_PREFIX))
        e = street_core (scan, i, &next, &score, &shape);
      is_street = e > 0;
      if (e == 0)
        {
          guint j = unit_part (scan, i);
          /* PO Box */
          if (j == i && i + 2 < n && tk->nchars == 2 && hz_token_is (scan, tk, "po")
              && hz_token_is (scan, &scan->toks[i + 1], "box"))
            j = unit_part (scan, i + 1);
          if (j > i && !hz_token_is (scan, tk, "no") && !hz_token_is (scan, tk, "nr")
              && !hz_token_is (scan, tk, "room") && !hz_token_is (scan, tk, "floor"))
            {
              next = j;
              e = scan->toks[j - 1].e;
              score = 0.6f;
            }
        }
      /* a ship's name before its fleet post line: "USNS Møller\nFPO AA 85844" */
      guint mil = i;
      if (e == 0 && i + 4 < n && tk->nchars >= 3 && tk->nchars <= 5 && (scan->text[tk->s] | 0x20) == 'u'
          && (hz_token_is (scan, tk, "uss") || hz_token_is (scan, tk, "usns") || hz_token_is (scan, tk, "usnv")
              || hz_token_is (scan, tk, "uscgc"))
          && (scan->toks[i + 1].flags & HZ_TOK_ALPHA))
        mil = i + 2;
      if (e == 0 && mil + 2 < n && scan->toks[mil].nchars == 3
          && (hz_token_is (scan, &scan->toks[mil], "apo") || hz_token_is (scan, &scan->toks[mil], "fpo")
              || hz_token_is (scan, &scan->toks[mil], "dpo"))
          && (scan->toks[mil + 1].flags & HZ_TOK_ALPHA) && scan->toks[mil + 1].nchars == 2
          && (scan->toks[mil + 2].flags & HZ_TOK_DIGIT) && scan->toks[mil + 2].nchars == 5)
        {
          next = mil + 3;
          e = scan->toks[mil + 2].e;
          score = 0.8f;
        }
      if (e == 0)
        {
          /* a UK or Canadian postcode anywhere (their letter-digit pattern is specific); a
           * Dutch one after a cue ("Postcode: SW1A 2AA", "postcode 1012 PH") */
          guint pz = postcode_alnum (scan, i, FALSE);
          if (pz == i && tok_shape (scan, tk, "9999") && hz_context_before (scan, i, 4, HZ_W_ZIP_CUE))
            pz = postcode_alnum (scan, i, TRUE);
          if (pz > i)
            {
              hz_scan_add (scan, tk->s, scan->toks[pz - 1].e, HZ_ENTITY_STREET_ADDRESS, 0.6f, HZ_TIER_CONTEXT,
                           "postcode");
              i = pz - 1;
              continue;
            }
          /* a US state and ZIP code after a city: "Springfield, IL 62704(-1234)" */
          guint zk = us_state_zip (scan, i);
          if (zk > i)
            {
              guint c0 = i - 1;
              while (c0 > 0 && i - c0 < 3 && same_line_gap (scan, scan->toks[c0 - 1].e, scan->toks[c0].s, FALSE)
                     && is_name (&scan->toks[c0 - 1]) && !(scan->toks[c0].flags & HZ_TOK_SENT))
                c0--;
              hz_scan_add (scan, scan->toks[c0].s, scan->toks[i - 1].e, HZ_ENTITY_LOCATION, 0.7f, HZ_TIER_CONTEXT,
                           "address-place");
              hz_scan_add (scan, tk->s, tk->e, HZ_ENTITY_LOCATION, 0.7f, HZ_TIER_CONTEXT, "address-place");
              /* the pattern tier: "49503-1234" is no phone number here */
              hz_scan_add (scan, scan->toks[zk - 1].s, scan->toks[zk - 1].e, HZ_ENTITY_STREET_ADDRESS, 0.85f,
                           HZ_TIER_PATTERN, "postcode");
              i = zk - 1;
              continue;
            }
          /* postcode after a cue: "my zip code is 880"; not a form's number after it ("ZIP
           * code OMB No. 1545-0008") */
          gboolean hyphened = FALSE; /* "75534-030" is one token */
          if (!(tk->flags & HZ_TOK_DIGIT) && tk->nchars >= 5 && tk->nchars <= 11 && hz_is_digit (t[tk->s]))
            {
              guint hy = 0, other = 0;
              for (gsize q = tk->s; q < tk->e; q++)
                hy += t[q] == '-', other += !hz_is_digit (t[q]) && t[q] != '-';
              hyphened = hy == 1 && other == 0 && t[tk->e - 1] != '-';
            }
          if (((tk->flags & HZ_TOK_DIGIT) || hyphened) && tk->nchars >= 3 && tk->nchars <= 11
              && hz_context_before (scan, i, 4, HZ_W_ZIP_CUE) && !hz_form_number_before (scan, i))
            {
              /* "75534-030", "394 13": a second digit group joined by a hyphen or space */
              gsize ze = tk->e;
              if (i + 1 < n && (scan->toks[i + 1].flags & HZ_TOK_DIGIT) && scan->toks[i + 1].nchars <= 5
                  && scan->toks[i + 1].s == tk->e + 1 && (t[tk->e] == '-' || t[tk->e] == ' '))
                ze = scan->toks[++i].e;
              hz_scan_add (scan, tk->s, ze, HZ_ENTITY_STREET_ADDRESS, 0.7f, HZ_TIER_CONTEXT, "postcode");
            }
          continue;
        }
      gsize s = tk->s;
      gboolean corner = FALSE;
      /* "the corner of X and Y" is one address */
      if (i >= 3 && hz_token_is (scan, &scan->toks[i - 1], "of") && hz_token_is (scan, &scan->toks[i - 2], "corner")
          && hz_token_is (scan, &scan->toks[i - 3], "the"))
        {
          s = scan->toks[i - 3].s;
          corner = TRUE;
          if (next + 1 < n && hz_token_is (scan, &scan->toks[next], "and"))
            {
              guint k = next + 1, names = 0;
              while (k < n && names < 5 && (scan->toks[k].flags & (HZ_TOK_ALPHA | HZ_TOK_DIGIT))
                     && same_line_gap (scan, scan->toks[k - 1].e, scan->toks[k].s, FALSE)
                     && !(scan->toks[k].flags & HZ_TOK_SENT))
                {
                  e = scan->toks[k].e;
                  k++;
                  names++;
                }
              next = k;
            }
        }
      gsize core_e = e;
      Part parts[MAX_PARTS];
      guint np = 0;
      e = extend_block (scan, next, e, parts, &np);
      (void) t;
      if (is_street && !corner && emit_components (scan, tk->s, core_e, &shape, parts, np, score))
        {
          i = hz_token_at_or_after (scan, e) - 1;
          continue;
        }
      hz_scan_add (scan, s, e, HZ_ENTITY_STREET_ADDRESS, score, HZ_TIER_CONTEXT, "street");
      i = hz_token_at_or_after (scan, e) - 1;
    }
}
