/* rec-names-context.c — what the words around a capitalised run say about it: the tests of
 * the names family (rec-names*.c) that read the neighbouring tokens (places in the
 * gazetteers and in lists of places, possessives, quotations, firms, labels, handles), and
 * the ones the tagger reads too (rec-names-context.h). All pure: they read the scan only. */
#include "rec-names-context.h"
#include "rec-names-lists.h"

#include <stdlib.h>
#include <string.h>

/* Longest place-gazetteer match of words [a, b) starting at a (joined by single spaces). */
guint
hz_names_place_match (const HzScan *scan, guint a, guint b)
{
  /* multi-word look-ups only when the first word starts some multi-word place */
  guint top = hz_tok_in (&scan->toks[a], HZ_W_PLACE_HEAD) ? MIN (b, a + 4) : a + 1;
  for (guint k = top; k > a; k--)
    {
      gsize s = scan->toks[a].s, e = word_end (scan, &scan->toks[k - 1]);
      if (e - s > 60)
        continue;
      if (k == a + 1)
        {
          /* one word, also with a possessive ("Mary's" is no town of that name) */
          const HzToken *t = &scan->toks[a];
          guint64 cls = e == t->e ? t->cls : hz_lex_lookup (&scan->r->lex, scan->text + s, e - s);
          guint64 named = HZ_WB (HZ_W_GIVEN) | HZ_WB (HZ_W_SURNAME);
          if (((cls & HZ_WB (HZ_W_PLACE)) && !(scan->informal && (cls & HZ_WB (HZ_W_GIVEN))))
              || ((cls & HZ_WB (HZ_W_CITY)) && !(cls & (named | HZ_WB (HZ_W_COMMON)))))
            return 1;
          continue;
        }
      if (hz_lex_lookup (&scan->r->lex, scan->text + s, e - s) & (HZ_WB (HZ_W_PLACE) | HZ_WB (HZ_W_CITY)))
        return k - a;
    }
  return 0;
}

gsize
hz_names_person_end (const HzScan *scan, gsize e)
{
  static const char *const gen[] = { "jr", "sr", "jnr", "snr" };
  const char *t = scan->text;
  if (e >= scan->len || t[e] != '.')
    return e;
  for (gsize k = 0; k < G_N_ELEMENTS (gen); k++)
    {
      gsize n = strlen (gen[k]);
      if (e >= n + 1 && g_ascii_strncasecmp (t + e - n, gen[k], n) == 0 && t[e - n - 1] == ' ')
        return e + 1;
    }
  return e;
}

/* Token i is joined by "and" / "&" / "," to a capitalised word that is a known given name
 * or surname ("Marrero and Murphy", "Kónya, Becker and Vasquez"). */
gboolean
hz_names_coordinated (const HzScan *scan, guint i)
{
  const HzToken *t = &scan->toks[i];
  const guint64 nm = HZ_WB (HZ_W_GIVEN) | HZ_WB (HZ_W_SURNAME);
  if (i + 2 < scan->n_toks && (hz_token_is (scan, &scan->toks[i + 1], "and") || scan->text[t->e] == ',')
      && is_cap_word (&scan->toks[i + 2]) && (scan->toks[i + 2].cls & nm))
    return TRUE;
  if (i + 1 < scan->n_toks && scan->text[t->e] == ',' && is_cap_word (&scan->toks[i + 1])
      && (scan->toks[i + 1].cls & nm))
    return TRUE;
  if (i >= 2 && hz_token_is (scan, &scan->toks[i - 1], "and") && is_cap_word (&scan->toks[i - 2])
      && (scan->toks[i - 2].cls & nm) && !(scan->toks[i - 2].cls & HZ_WB (HZ_W_COMMON)))
    return TRUE;
  return FALSE;
}

/* Token i is one of the three names of "A, B and C" (single capitalised words) that follows
 * a preposition or verb taking a company ("from", "at", "for", "joined", "by") or "the", or
 * that an organisation word follows: a firm named after its partners ("from Hawkins,
 * Richardson and Santana", "The Clark, Romero and Hall Orchestra"). A list after ":" or
 * without such a word ("our founders: Kónya, Becker and Vasquez") stays a list of people. */
gboolean
hz_names_firm_of_partners (const HzScan *scan, guint i)
{
  static const char *const before[] = { "from", "at", "for", "joined", "by", "with", "of",
                                         "to", "join", "the", NULL };
  for (guint k0 = (i >= 4 ? i - 4 : 0); k0 <= i; k0++)
    {
      if (k0 + 3 >= scan->n_toks)
        continue;
      const HzToken *A = &scan->toks[k0], *B = &scan->toks[k0 + 1], *C = &scan->toks[k0 + 3];
      if (!is_cap_word (A) || !is_cap_word (B) || !is_cap_word (C)
          || !hz_token_is (scan, &scan->toks[k0 + 2], "and") || scan->text[A->e] != ','
          || (i != k0 && i != k0 + 1 && i != k0 + 3))
        continue;
      if (k0 + 4 < scan->n_toks && hz_tok_in (&scan->toks[k0 + 4], HZ_W_ORG)
          && (scan->toks[k0 + 4].flags & (HZ_TOK_CAP | HZ_TOK_UPPER)) && tight (scan, C, &scan->toks[k0 + 4]))
        return TRUE;
      if (k0 == 0)
        continue;
      if (hz_token_among (scan, &scan->toks[k0 - 1], before))
        return TRUE;
    }
  return FALSE;
}

/* A dialogue speaker: "Ubul: What a wife." at the start of a line. */
gboolean
hz_names_speaker_label (const HzScan *scan, guint i)
{
  const HzToken *t = &scan->toks[i];
  if (t->e + 1 >= scan->len || scan->text[t->e] != ':' || scan->text[t->e + 1] != ' ')
    return FALSE;
  return t->s == 0 || scan->text[t->s - 1] == '\n';
}

/* Token i follows the word `prep` after a lower-case word of `words`: "to" after a word that
 * takes a person there ("talked to | Jens Quenby"), "of" after a kind of place ("the town of
 * | Bridgton", "county seat of | Paxton") */
gboolean
hz_names_after_prep_of (const HzScan *scan, guint i, const char *prep, const char *const *words)
{
  return i >= 2 && hz_token_is (scan, &scan->toks[i - 1], prep) && (scan->toks[i - 2].flags & HZ_TOK_LOWER)
         && tok_among (scan, i - 2, words);
}

gboolean
hz_names_to_person (const HzScan *scan, guint i)
{
  return hz_names_after_prep_of (scan, i, "to", hz_names_to_person_words);
}

/* an identifier starts right after byte e, past at most three spaces, ':' or '#' (binary
 * search of scan->ident_starts) */
static gboolean
identifier_after (const HzScan *scan, gsize e)
{
  gsize p = e;
  while (p < scan->len && p < e + 3 && (scan->text[p] == ' ' || scan->text[p] == ':' || scan->text[p] == '#'))
    p++;
  if ((p == e && p < scan->len) || scan->n_ident_starts == 0)
    return FALSE;
  guint64 key = p;
  return bsearch (&key, scan->ident_starts, scan->n_ident_starts, sizeof (guint64), hz_u64_cmp) != NULL;
}

gboolean
hz_names_identifier_label (const HzScan *scan, guint i, guint j)
{
  static const char *const between[] = { "is", "was", "number", "no", "nr", "num", NULL };
  if (i >= j)
    return FALSE;
  gboolean listed = FALSE;
  for (guint k = i; k < j; k++)
    {
      if (!hz_natid_cue_word (scan, k))
        return FALSE;
      /* in capitals, as such labels are written ("HETU", "NINO"), even a word of the name
       * lists is the label */
      listed |= (scan->toks[k].cls & (HZ_WB (HZ_W_GIVEN) | HZ_WB (HZ_W_SURNAME))) != 0
                && !(scan->toks[k].flags & HZ_TOK_UPPER && scan->toks[k].nchars > 1);
    }
  if (!listed)
    return TRUE;
  /* "Sin: 046 454 286", "Nino number 12..." */
  guint k = j;
  while (k < scan->n_toks && k < j + 2 && tok_among (scan, k, between))
    k++;
  return identifier_after (scan, word_end (scan, &scan->toks[k - 1]));
}

/* The name that ends right before token i is addressed: a comma or "!" (spaces around
 * allowed) and then a word such as "you", "do" or "please" ("Loey , do you ..."). */
gboolean
hz_names_vocative (const HzScan *scan, guint i)
{
  if (i == 0 || i >= scan->n_toks)
    return FALSE;
  gboolean mark = FALSE;
  for (gsize p = scan->toks[i - 1].e; p < scan->toks[i].s; p++)
    {
      char c = scan->text[p];
      if (c == ',' || c == '!')
        {
          if (mark)
            return FALSE;
          mark = TRUE;
        }
      else if (c != ' ')
        return FALSE;
    }
  return mark && tok_among (scan, i, hz_names_vocative_after);
}

/* Token i is a copula ("is", "was") whose complement names a kind of place or organisation
 * within the next few words ("Aisby is a village", "Bilka is a Danish chain"): the subject
 * is no person. */
gboolean
hz_names_describes_thing (const HzScan *scan, guint i)
{
  if (i >= scan->n_toks || !hz_tok_in (&scan->toks[i], HZ_W_COPULA))
    return FALSE;
  /* "Caloi was founded", "Bilka is headquartered": said of firms and buildings */
  if (i + 1 < scan->n_toks && (scan->toks[i + 1].flags & HZ_TOK_LOWER) && tok_among (scan, i + 1, hz_names_thing_participles))
    return TRUE;
  for (guint k = i + 1; k < scan->n_toks && k <= i + 6; k++)
    {
      const HzToken *t = &scan->toks[k];
      if (hz_tok_in (t, HZ_W_PLACE_SUFFIX) || hz_tok_in (t, HZ_W_ORG))
        return TRUE;
      /* "Okafor is from Orlek Systems": past a preposition the words describe something else */
      if (hz_tok_in (t, HZ_W_LOC_CUE) || hz_tok_in (t, HZ_W_LOC_CUE_WEAK))
        break;
      if (scan->text[t->e] == ',' || scan->text[t->e] == '.' || (k > i + 1 && (t->flags & HZ_TOK_SENT)))
        break;
    }
  return FALSE;
}

/* Token t is the name of a handle or hashtag ("@FunnyVines", "#ShareTheLove"): an account or
 * topic name, not a person's name in running text. */
gboolean
hz_names_handle_or_tag (const HzScan *scan, const HzToken *t)
{
  if (!scan->has['@'] && !scan->has['#'])
    return FALSE;
  gsize p = t->s;
  /* the name may continue an earlier part of the handle ("@P_Rezzphere") */
  while (p > 0 && (hz_is_alnum_ascii (scan->text[p - 1]) || scan->text[p - 1] == '_'))
    p--;
  if (p > 0 && (scan->text[p - 1] == '@' || scan->text[p - 1] == '#'))
    return TRUE;
  /* tokenized text: a lone "#" and one space before the name ("# StayTuned") */
  return p == t->s && lone_mark_before (scan, p, '#');
}

gboolean
hz_names_field_label (const HzScan *scan, guint i)
{
  const HzToken *t = &scan->toks[i];
  return t->e < scan->len && scan->text[t->e] == ':' && !(t->cls & (HZ_WB (HZ_W_GIVEN) | HZ_WB (HZ_W_SURNAME)))
         && (t->cls & (HZ_WB (HZ_W_COMMON) | HZ_WB (HZ_W_NOT_NAME)));
}

gboolean
hz_names_after_at (const HzScan *scan, const HzToken *t)
{
  const char *x = scan->text;
  gsize s = t->s;
  return (s >= 1 && x[s - 1] == '@') || (s >= 2 && x[s - 1] == ' ' && x[s - 2] == '@');
}

/* Between tokens i and i + 1 there are only spaces and one character of `marks` (a list's
 * separator: "Walsall , Melbourne", "Salem, New Jersey"). */
static gboolean
sep_between (const HzScan *scan, guint i, const char *marks)
{
  if (i + 1 >= scan->n_toks)
    return FALSE;
  guint n = 0;
  for (gsize p = scan->toks[i].e; p < scan->toks[i + 1].s; p++)
    {
      char c = scan->text[p];
      if (c == ' ')
        continue;
      if (c == '\0' || !strchr (marks, c) || ++n > 1)
        return FALSE;
    }
  return n == 1;
}

/* Token i is a capitalised known place: in the place list, or in the city list and no
 * person's name. */
static gboolean
known_place_tok (const HzScan *scan, guint i)
{
  const HzToken *t = &scan->toks[i];
  const guint64 nm = HZ_WB (HZ_W_GIVEN) | HZ_WB (HZ_W_SURNAME);
  return is_cap_word (t)
         && ((t->cls & HZ_WB (HZ_W_PLACE)) || ((t->cls & HZ_WB (HZ_W_CITY)) && !(t->cls & nm)));
}

/* Token i is "and" or "or". */
static gboolean
tok_and_or (const HzScan *scan, guint i)
{
  return i < scan->n_toks && (hz_token_is (scan, &scan->toks[i], "and") || hz_token_is (scan, &scan->toks[i], "or"));
}

/* The run [i, j) is an item of a list of places: the item before or after it, joined by a
 * comma, '&', '/', "and" or "or", is a known place ("Walsall , Melbourne , Luton and
 * London"). */
gboolean
hz_names_in_place_list (const HzScan *scan, guint i, guint j)
{
  return (i >= 1 && sep_between (scan, i - 1, ",&/") && known_place_tok (scan, i - 1))
         || (i >= 2 && tok_and_or (scan, i - 1) && known_place_tok (scan, i - 2))
         || (j < scan->n_toks && sep_between (scan, j - 1, ",&/") && known_place_tok (scan, j))
         || (j + 1 < scan->n_toks && tok_and_or (scan, j) && known_place_tok (scan, j + 1));
}

/* A comma and a state, province or country of the place list right after token j - 1,
 * ending there: the run before it is a place ("Paxton , Illinois", "Hesse, Germany"; not
 * "Paxton, Illinois State University"). */
gboolean
hz_names_region_after (const HzScan *scan, guint j)
{
  if (j == 0 || j >= scan->n_toks || !sep_between (scan, j - 1, ",") || !is_cap_word (&scan->toks[j]))
    return FALSE;
  guint k = hz_names_place_match (scan, j, MIN (scan->n_toks, j + 4));
  if (k == 0)
    return FALSE;
  gsize s = scan->toks[j].s, e = word_end (scan, &scan->toks[j + k - 1]);
  if (!(hz_lex_lookup (&scan->r->lex, scan->text + s, e - s) & HZ_WB (HZ_W_PLACE)))
    return FALSE;
  guint z = j + k;
  return z >= scan->n_toks || !tight (scan, &scan->toks[z - 1], &scan->toks[z])
         || !(scan->toks[z].flags & (HZ_TOK_CAP | HZ_TOK_UPPER));
}

/* The run starting at token a follows a noun of a thing or group after a determiner, with
 * at most one word between ("the band Deadsy", "the rock band Korn", "their song Hunter"). */
gboolean
hz_names_thing_noun_before (const HzScan *scan, guint a)
{
  if (a < 2 || !(scan->toks[a - 1].flags & HZ_TOK_LOWER) || !tight (scan, &scan->toks[a - 1], &scan->toks[a]))
    return FALSE;
  return (tok_in (scan, a - 2, HZ_W_DETERMINER)
          || (a >= 3 && (scan->toks[a - 2].flags & HZ_TOK_LOWER) && tok_in (scan, a - 3, HZ_W_DETERMINER)))
         && tok_among (scan, a - 1, hz_names_thing_nouns);
}

/* Bytes [p, q) hold spaces and one quotation mark ('"', U+201C or U+201D) as their last
 * (`last`) or first (!`last`) character that is no space. */
static gboolean
quote_in_gap (const char *x, gsize p, gsize q, gboolean last)
{
  while (p < q && x[p] == ' ')
    p++;
  while (q > p && x[q - 1] == ' ')
    q--;
  if (p == q)
    return FALSE;
  if (last)
    return hz_quote_at (x, q, q - 1, FALSE) == 1 || (q - p >= 3 && hz_quote_at (x, q, q - 3, FALSE) == 3);
  return hz_quote_at (x, q, p, FALSE) != 0;
}

/* Token k can be a word of a title: capitalised, a number, or a lower-case function word. */
static gboolean
title_word (const HzScan *scan, guint k)
{
  const HzToken *t = &scan->toks[k];
  return (t->flags & (HZ_TOK_CAP | HZ_TOK_UPPER)) || !(t->flags & HZ_TOK_ALPHA)
         || ((t->flags & HZ_TOK_LOWER) && tok_among (scan, k, hz_names_title_function_words));
}

/* The gap between tokens k and k + 1 stays inside a title: spaces, apostrophes, hyphens
 * ("Occam 's Razor", "Pac- Man"). */
static gboolean
title_gap (const HzScan *scan, guint k)
{
  for (gsize p = scan->toks[k].e; p < scan->toks[k + 1].s; p++)
    if (!strchr (" '-", scan->text[p]) || scan->text[p] == '\0')
      return FALSE;
  return TRUE;
}

/* The run [a, b) lies inside a quotation that reads as a title ("Fallen", "Buddha for
 * Mary", "O Hymno da Carta", “Tube Snake Boogie”): at most 8 words, the first capitalised
 * and each other one capitalised, a number or a lower-case function word. It names a work,
 * not a person, unless the quotation is the run alone and `lone_name` (a quoted given name
 * or surname that is no English word: "Anna", "Kessler"). */
gboolean
hz_names_in_quoted_title (const HzScan *scan, guint a, guint b, gboolean lone_name)
{
  enum { MAX_TITLE_WORDS = 8 };
  if (!scan->has['"'] && !scan->has[0xE2])
    return FALSE; /* no quotation mark in the text */
  const char *x = scan->text;
  guint i = a;
  while (!quote_in_gap (x, i > 0 ? scan->toks[i - 1].e : 0, scan->toks[i].s, TRUE))
    {
      if (i == 0 || b - i >= MAX_TITLE_WORDS || !title_gap (scan, i - 1) || !title_word (scan, i - 1))
        return FALSE;
      i--;
    }
  guint j = b;
  while (!quote_in_gap (x, scan->toks[j - 1].e, j < scan->n_toks ? scan->toks[j].s : scan->len, FALSE))
    {
      if (j >= scan->n_toks || j - i >= MAX_TITLE_WORDS || !title_gap (scan, j - 1) || !title_word (scan, j))
        return FALSE;
      j++;
    }
  return (scan->toks[i].flags & (HZ_TOK_CAP | HZ_TOK_UPPER)) != 0 && !(lone_name && i == a && j == b);
}

/* The token after the possessive that ends token j - 1 ("Macy's": j) or is token j ("Macy
 * 's", tokenised text: j + 1); 0 when there is none. */
guint
hz_names_after_possessive (const HzScan *scan, guint j)
{
  if (word_end (scan, &scan->toks[j - 1]) != scan->toks[j - 1].e)
    return j;
  return possessive_after (scan, j) ? j + 1 : 0;
}

/* The possessive that ends token j - 1 ("Macy's") or is token j ("Macy 's", tokenised
 * text) stands without its noun: punctuation, the end of the text or a function word
 * follows ("with Ivey 's and Hudson Belk", "Dillard 's was added"). Such a name is a shop's
 * or firm's. */
gboolean
hz_names_elliptical_possessive (const HzScan *scan, guint j)
{
  guint k = hz_names_after_possessive (scan, j);
  if (!k)
    return FALSE;
  gsize p = scan->toks[k - 1].e;
  while (p < scan->len && scan->text[p] == ' ')
    p++;
  if (p >= scan->len || strchr (",.;:!?)", scan->text[p]))
    return scan->text[p] != '\0';
  return k < scan->n_toks && scan->toks[k].s == p && (scan->toks[k].flags & HZ_TOK_LOWER)
         && tok_among (scan, k, hz_names_after_elliptical_possessive);
}
