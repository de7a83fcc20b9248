/* rec-names.c — PERSON and LOCATION from capitalisation, gazetteers and context cues: the
 * names family's recognizer, which finds the runs of capitalised words and hands each to
 * the judging rules (rec-names-judge.c), then adds what the found names imply
 * (rec-names-propagate.c).
 *
 * Runs of capitalised words (initials and particles such as "van" or "de" allowed inside)
 * are scored with: the given-name and surname gazetteers (US Census 1990 / SSA, see
 * data/SOURCE.md), a list of common English words (SCOWL) that marks ordinary capitalised
 * words, titles ("Dr", "Mrs"), cue phrases before the run ("my name is", "hi", "dear",
 * "ping", "thanks", "by"), organisation words after it ("Inc", "University") and the place
 * gazetteer (countries, regions, cities). Lower-case and ALL-CAPS text need gazetteer or cue
 * evidence. A name found once is also found at its other occurrences in the same text,
 * whatever their case. All cue matching is on whole words. Here too: the genre of the text
 * (chat, shouting, unfinished), @-mentions, hashtags and stage names. */
#include "rec-names-judge.h"
#include "rec-names-propagate.h"

/* Chat-style text: a sentence that starts in lower case, a lower-case "i", an elongated
 * word or an emoji. Capitalisation is then a stronger name cue. Two signals are needed. */
enum { INFORMAL_SIGNALS = 2 };

static gboolean
is_informal (const HzScan *scan)
{
  /* one lower-case sentence start alone is often a fragment */
  int signals = 0;
  for (guint i = 0; i < scan->n_toks && signals < INFORMAL_SIGNALS; i++)
    {
      const HzToken *t = &scan->toks[i];
      const char *x = scan->text + t->s;
      if ((t->flags & HZ_TOK_SENT) && (t->flags & HZ_TOK_LOWER) && (t->flags & HZ_TOK_ALPHA))
        signals++;
      else if (t->e - t->s == 1 && x[0] == 'i')
        signals += 2;
      else if ((t->flags & HZ_TOK_ALPHA)
               && ((t->flags & HZ_TOK_ELONG)
                   || (hz_tok_in (t, HZ_W_NOT_NAME) && t->nchars >= 3 && !(t->cls & HZ_WB (HZ_W_COMMON)))))
        signals++;
    }
  for (int c = 0xF0; c <= 0xF4 && signals < INFORMAL_SIGNALS; c++)
    if (scan->has[c])
      signals += 2; /* lead byte of an astral-plane character: emoji */
  return signals >= INFORMAL_SIGNALS;
}

/* The text ends as written prose does: with a full stop, a closing parenthesis or a
 * quote. Chat messages often end without ("see you Tanvir", "ha! love it Ozzie!"). */
static gboolean
ends_like_prose (const HzScan *scan)
{
  gsize e = scan->len;
  while (e > 0 && (scan->text[e - 1] == ' ' || scan->text[e - 1] == '\n' || scan->text[e - 1] == '\r'))
    e--;
  return e == 0 || scan->text[e - 1] == '.' || scan->text[e - 1] == ')' || scan->text[e - 1] == '"';
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

/* Token t starts the account name of an @-mention: "@name", or in tokenized text (CoNLL files
 * joined by spaces, as the WNUT-17 test split writes tweets) a lone "@" and one space before it
 * ("RT @ MissMcCleary :"). Returns the end byte of the account name (letters of any script,
 * digits and '_'), or 0. An account name identifies a person's account,
 * so it is personal data whatever the name looks like. Not a mention: '@' after a letter,
 * digit or dot (e-mail addresses, "x@y"; tokenized "jo @ gmail . com"), and where '@' is
 * "at": a number, time or ordinal ("@ 5", "@5pm", "@2nd"), a lower-case English word ("meet @
 * home", "@home", "@everyone"), and in the spaced form a place ("I live @ London"). */
static gsize
mention_end (const HzScan *scan, const HzToken *t)
{
  const char *x = scan->text;
  gsize s = t->s;
  if (s >= 1 && x[s - 1] == '@')
    {
      if (s >= 2 && (hz_is_alnum_ascii (x[s - 2]) || x[s - 2] == '.' || x[s - 2] == '_' || (guchar) x[s - 2] >= 0x80))
        return 0;
    }
  else if (lone_mark_before (scan, s, '@'))
    {
      if (g_ascii_isdigit (x[s]))
        return 0;
      /* "I live @ London": a place after a spaced '@' is the place recognizers' */
      if (t->cls & (HZ_WB (HZ_W_PLACE) | HZ_WB (HZ_W_CITY)))
        return 0;
    }
  else
    return 0;
  /* '@' as "at": a lower-case English word ("meet @home") and group mentions ("@everyone",
   * "@here", "@channel") */
  if ((t->flags & HZ_TOK_LOWER) && (t->cls & HZ_WB (HZ_W_COMMON)) && !(t->cls & HZ_WB (HZ_W_GIVEN))
      && (t->e >= scan->len || x[t->e] != '_'))
    return 0;
  /* the account name: ASCII letters, digits and '_', and letters of other scripts ("@José");
   * not an apostrophe, hyphen or emoji after it ("@Sam's", "@Sam😀") */
  gsize e = s;
  gboolean letter = FALSE;
  while (e < scan->len)
    {
      guchar c = (guchar) x[e];
      if (c < 0x80)
        {
          if (!hz_is_alnum_ascii ((char) c) && c != '_')
            break;
          letter |= g_ascii_isalpha (c) != 0;
          e++;
          continue;
        }
      gunichar u = g_utf8_get_char_validated (x + e, (gssize) (scan->len - e));
      if (u == (gunichar) -1 || u == (gunichar) -2 || !g_unichar_isalnum (u))
        break;
      letter |= g_unichar_isalpha (u);
      e = g_utf8_next_char (x + e) - x;
    }
  if (!letter)
    return 0;
  /* a time or an ordinal ("@5pm", "@2nd floor") */
  if (g_ascii_isdigit (x[s]))
    {
      gsize k = s;
      while (k < e && g_ascii_isdigit (x[k]))
        k++;
      if (e - k <= 2)
        return 0;
    }
  /* a tokenized e-mail address ("jo @ gmail . com"): a lower-case domain ending follows */
  gsize d = e + (e < scan->len && x[e] == ' ');
  if (d < scan->len && x[d] == '.')
    {
      d += 1 + (d + 1 < scan->len && x[d + 1] == ' ');
      gsize l = d;
      while (l < scan->len && g_ascii_islower (x[l]))
        l++;
      if (l - d >= 2 && l - d <= 6 && (l == scan->len || g_ascii_isspace (x[l])))
        return 0;
    }
  return e;
}

/* A stage name that starts at token i with a prefix such as "Lil" or "DJ" ("Lil Yachty",
 * "lil wayne", "DJ Switch"): the token index after it, or i when there is none. The words
 * after the prefix are capitalised ones, or one lower-case word that is no English word. */
static guint
stage_name_end (const HzScan *scan, guint i)
{
  if (!hz_tok_in (&scan->toks[i], HZ_W_STAGE_PREFIX))
    return i;
  guint j = i + 1;
  while (j < scan->n_toks && j < i + 4 && tight (scan, &scan->toks[j - 1], &scan->toks[j]))
    {
      const HzToken *u = &scan->toks[j];
      if (!(u->flags & HZ_TOK_ALPHA) || hz_names_handle_or_tag (scan, u) || hz_tok_in (u, HZ_W_ORG)
          || hz_tok_in (u, HZ_W_NOT_NAME))
        break;
      if (u->flags & HZ_TOK_LOWER)
        {
          if (j == i + 1 && u->nchars >= 3 && !(u->cls & (HZ_NAMES_LOWER_STOP | HZ_WB (HZ_W_COMMON))))
            j++;
          break;
        }
      /* past the first word only names continue it ("Lil Darth Vader", not "DJ Switch Now") */
      if (j > i + 1 && (u->cls & HZ_WB (HZ_W_COMMON)) && !(u->cls & (HZ_WB (HZ_W_GIVEN) | HZ_WB (HZ_W_SURNAME))))
        break;
      j++;
      if (word_end (scan, u) != u->e)
        break;
    }
  return j > i + 1 ? j : i;
}

void
hz_rec_names (HzScan *scan)
{
  if (!scan->r->enabled[HZ_ENTITY_PERSON] && !scan->r->enabled[HZ_ENTITY_LOCATION])
    return;
  gboolean shouting = is_shouting (scan);
  gboolean informal = is_informal (scan);
  scan->unfinished = !ends_like_prose (scan);
  scan->informal = informal;
  scan->all_lower = TRUE;
  for (guint k = 0; k < scan->n_toks && scan->all_lower; k++)
    scan->all_lower = !(scan->toks[k].flags & (HZ_TOK_CAP | HZ_TOK_UPPER));
  guint first_cand = scan->cands->len;
  guint i = 0, n = scan->n_toks;
  gboolean tags = scan->has['@'] || scan->has['#'];
  while (i < n)
    {
      const HzToken *t = &scan->toks[i];
      gsize me = scan->has['@'] && scan->r->enabled[HZ_ENTITY_PERSON] ? mention_end (scan, t) : 0;
      if (me)
        {
          names_add (scan, t->s, me, HZ_ENTITY_PERSON, 0.7f, HZ_REC_MENTION);
          while (i < n && scan->toks[i].s < me)
            i++;
          continue;
        }
      if ((tags && hz_names_handle_or_tag (scan, t)) || camel_compound (scan, t))
        {
          i++;
          continue;
        }
      guint se = (t->cls & HZ_WB (HZ_W_STAGE_PREFIX)) ? stage_name_end (scan, i) : i;
      if (se > i)
        {
          names_add (scan, t->s, word_end (scan, &scan->toks[se - 1]), HZ_ENTITY_PERSON, 0.6f, "stage-name");
          i = se;
          continue;
        }
      gboolean capish = (t->flags & HZ_TOK_ALPHA) && (t->flags & (HZ_TOK_CAP | HZ_TOK_UPPER));
      if (!capish)
        {
          if ((t->flags & HZ_TOK_ALPHA) && (t->flags & HZ_TOK_LOWER) && t->nchars >= 2)
            i = hz_names_judge_lower (scan, i);
          else
            i++;
          continue;
        }
      guint j = i + 1;
      while (j < n && j - i < 6 && tight (scan, &scan->toks[j - 1], &scan->toks[j]))
        {
          const HzToken *u = &scan->toks[j];
          gboolean ucap = (u->flags & HZ_TOK_ALPHA) && (u->flags & (HZ_TOK_CAP | HZ_TOK_UPPER));
          gboolean conn = (u->flags & HZ_TOK_LOWER) && hz_tok_in (u, HZ_W_NAME_CONN) && j + 1 < n
                          && (scan->toks[j + 1].flags & (HZ_TOK_CAP | HZ_TOK_UPPER));
          if ((!ucap && !conn) || (tags && hz_names_handle_or_tag (scan, u)) || camel_compound (scan, u)
              || hz_names_field_label (scan, j))
            break;
          /* a possessive ends the run */
          if (word_end (scan, &scan->toks[j - 1]) != scan->toks[j - 1].e)
            break;
          j++;
        }
      hz_names_judge_run (scan, i, j, shouting, informal);
      i = j;
    }
  if (scan->r->enabled[HZ_ENTITY_PERSON])
    {
      hz_names_add_coordinated (scan, first_cand);
      hz_names_propagate (scan, first_cand);
    }
}
