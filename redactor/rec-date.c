/* rec-date.c — DATE_TIME: numeric dates (ISO 8601 yyyy-mm-dd with optional time,
 * d/m/y and m/d/y with '/', '-' or '.'), dates with month names in English ("5 March 1990",
 * "March 5th, 1990", "March 1990"), clock times with am/pm, weekday names and four-digit
 * years after a whole-word cue ("in 1977", "born 1956"). Day and month ranges are checked.
 * Relative words ("today", "a moment") and version strings ("2.4.1") are not dates. */
#include "hz-recognizers.h"

#include <string.h>

static const char *const months[] = {
  "january", "february", "march", "april", "may", "june", "july", "august", "september",
  "october", "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep",
  "sept", "oct", "nov", "dec", NULL,
};

static const char *const weekdays[] = {
  "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", NULL,
};

static const char *const weekday_before[] = { "on", "meet", "meeting", "every", "next", "last",
                                               "this", "until", "till", "since", "from", NULL };
static const char *const weekday_after[] = { "morning", "afternoon", "evening", "night", "noon",
                                              "at", NULL };

static const char *const year_context[] = {
  "in", "since", "of", "during", "from", "until", "till", "by", "year", "born", "circa",
  "before", "after", "around", "early", "late", "mid", "a", "the", "between", "and", "to",
  "dob", "birth", "spring", "summer", "autumn", "fall", "winter", "on", "as", "class", NULL,
};

static const char *const version_context[] = { "version", "v", "build", "release", "rev",
                                               "revision", "ver", NULL };

static const char *const dob_context[] = { "born", "dob", "birth", "birthday", "birthdate", "b", NULL };

const HzWordList hz_date_lists[] = {
  { HZ_W_MONTH, months },
  { HZ_W_WEEKDAY, weekdays },
  { HZ_W_WD_BEFORE, weekday_before },
  { HZ_W_WD_AFTER, weekday_after },
  { HZ_W_YEAR_CUE, year_context },
  { HZ_W_VERSION_CUE, version_context },
  { HZ_W_DOB_CUE, dob_context },
  { 0, NULL },
};

static int
read_num (const char *s, gsize n, gsize *p, int maxd)
{
  gsize st = *p;
  int v = 0;
  while (*p < n && hz_is_digit (s[*p]) && (int) (*p - st) < maxd)
    v = v * 10 + (s[(*p)++] - '0');
  if (*p == st || (*p < n && hz_is_digit (s[*p])))
    return -1;
  return v;
}

/* hh:mm[:ss[.fff]] [Z|+hh:mm] after a date, starting at `p` (a 'T' or ' ' separator). */
static gsize
time_suffix (const char *s, gsize n, gsize p)
{
  if (p + 5 > n || (s[p] != 'T' && s[p] != ' '))
    return p;
  gsize q = p + 1;
  int h = read_num (s, n, &q, 2);
  if (h < 0 || h > 23 || q >= n || s[q] != ':')
    return p;
  q++;
  int m = read_num (s, n, &q, 2);
  if (m < 0 || m > 59)
    return p;
  if (q + 2 < n && s[q] == ':' && hz_is_digit (s[q + 1]))
    {
      q++;
      int sec = read_num (s, n, &q, 2);
      if (sec < 0 || sec > 60)
        return p;
      if (q + 1 < n && s[q] == '.' && hz_is_digit (s[q + 1]))
        {
          q++;
          while (q < n && hz_is_digit (s[q]))
            q++;
        }
    }
  if (q < n && s[q] == 'Z')
    q++;
  else if (q + 5 < n && (s[q] == '+' || s[q] == '-') && hz_is_digit (s[q + 1]) && hz_is_digit (s[q + 2]))
    {
      gsize r = q + 3;
      if (s[r] == ':')
        r++;
      if (r + 1 < n && hz_is_digit (s[r]) && hz_is_digit (s[r + 1]))
        q = r + 2;
    }
  return q;
}

static gboolean
valid_dm (int d, int m)
{
  static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
  return m >= 1 && m <= 12 && d >= 1 && d <= mdays[m - 1];
}

gsize
hz_date_prefix_len (const char *s, gsize n)
{
  gsize p = 0;
  int a = read_num (s, n, &p, 4);
  if (a < 0 || p >= n)
    return 0;
  char sep = s[p];
  if (sep != '-' && sep != '/' && sep != '.')
    return 0;
  gsize alen = p;
  p++;
  int b = read_num (s, n, &p, 2);
  if (b < 0 || p >= n || s[p] != sep)
    return 0;
  p++;
  gsize cs = p;
  int c = read_num (s, n, &p, 4);
  if (c < 0)
    return 0;
  gsize clen = p - cs;
  gboolean ok = FALSE;
  if (alen == 4)
    ok = a >= 1000 && a <= 2999 && clen <= 2 && valid_dm (c, b);
  else if (alen <= 2 && (clen == 4 || (clen == 2 && sep != '.')))
    ok = (valid_dm (a, b) || valid_dm (b, a)) && (clen == 2 || (c >= 1000 && c <= 2999));
  if (!ok)
    return 0;
  if (p < n && s[p] == sep && p + 1 < n && hz_is_digit (s[p + 1]))
    return 0; /* a fourth component: not a date */
  return time_suffix (s, n, p);
}

static int
month_index (const HzScan *scan, const HzToken *t)
{
  if (!hz_tok_in (t, HZ_W_MONTH))
    return -1;
  for (int k = 0; months[k]; k++)
    if (hz_token_is (scan, t, months[k]))
      return k;
  return -1;
}

static gboolean
day_token (const HzScan *scan, const HzToken *t, gsize *end)
{
  const char *s = scan->text + t->s;
  gsize n = t->e - t->s, p = 0;
  int d = read_num (s, n, &p, 2);
  if (d < 1 || d > 31)
    return FALSE;
  if (p == n)
    {
      *end = t->e;
      return TRUE;
    }
  if (n - p == 2 && (g_ascii_strncasecmp (s + p, "st", 2) == 0 || g_ascii_strncasecmp (s + p, "nd", 2) == 0
                     || g_ascii_strncasecmp (s + p, "rd", 2) == 0 || g_ascii_strncasecmp (s + p, "th", 2) == 0))
    {
      *end = t->e;
      return TRUE;
    }
  return FALSE;
}

static gboolean
year_token (const HzScan *scan, const HzToken *t)
{
  if (!(t->flags & HZ_TOK_DIGIT) || t->e - t->s != 4)
    return FALSE;
  int y = atoi (scan->text + t->s);
  return y >= 1800 && y <= 2099;
}

/* Only spaces, or ", " / "of " between two tokens. */
static gboolean
glue (const HzScan *scan, gsize a, gsize b)
{
  const char *s = scan->text;
  if (b - a > 5)
    return FALSE;
  for (gsize i = a; i < b; i++)
    if (s[i] != ' ' && s[i] != ',' && s[i] != '.')
      return FALSE;
  return b > a;
}


/* Length of "am", "pm", "a.m." or "p.m." (any case) at byte `i` of the text, not followed
 * by a letter or digit; 0 when there is none. */
static gsize
ampm_len (const HzScan *scan, gsize i)
{
  const char *t = scan->text;
  gsize n = scan->len;
  if (i + 2 > n || ((t[i] | 0x20) != 'a' && (t[i] | 0x20) != 'p'))
    return 0;
  gsize k = 0;
  if ((t[i + 1] | 0x20) == 'm')
    k = 2;
  else if (i + 4 <= n && t[i + 1] == '.' && (t[i + 2] | 0x20) == 'm' && t[i + 3] == '.')
    k = 4;
  return k && !hz_alnum_at (t, n, i + k) ? k : 0;
}

static void
add_date (HzScan *scan, gsize s, gsize e, float score, int tier, const char *rec)
{
  guint ti = hz_token_at_or_after (scan, s);
  if (hz_context_before (scan, ti, 4, HZ_W_DOB_CUE))
    score = MIN (1.0f, score + 0.2f);
  hz_scan_add (scan, s, e, HZ_ENTITY_DATE_TIME, score, tier, rec);
}

void
hz_rec_date (HzScan *scan)
{
  if (!scan->r->enabled[HZ_ENTITY_DATE_TIME])
    return;
  const char *t = scan->text;
  for (guint i = 0; i < scan->n_toks; i++)
    {
      const HzToken *tk = &scan->toks[i];
      if (hz_is_digit (t[tk->s]))
        {
          gsize n = hz_date_prefix_len (t + tk->s, scan->len - tk->s);
          if (n > 0 && !hz_alnum_at (t, scan->len, tk->s + n) && !hz_alnum_before (t, tk->s)
              && !hz_context_before (scan, i, 2, HZ_W_VERSION_CUE))
            {
              add_date (scan, tk->s, tk->s + n, 0.85f, HZ_TIER_PATTERN, "date-numeric");
              i = hz_token_at_or_after (scan, tk->s + n) - 1;
              continue;
            }
          /* clock time written as one token: "5pm", "11AM" */
          if (!(tk->flags & HZ_TOK_DIGIT))
            {
              gsize d = 0;
              while (d < 2 && tk->s + d < tk->e && hz_is_digit (t[tk->s + d]))
                d++;
              if (d > 0 && ampm_len (scan, tk->s + d) == tk->e - tk->s - d && !hz_alnum_before (t, tk->s))
                add_date (scan, tk->s, tk->e, 0.6f, HZ_TIER_PATTERN, "time");
              continue;
            }
          /* day [of] Month [year] */
          gsize de;
          if (day_token (scan, tk, &de) && i + 1 < scan->n_toks)
            {
              guint j = i + 1;
              if (hz_token_is (scan, &scan->toks[j], "of") && j + 1 < scan->n_toks)
                j++;
              if (month_index (scan, &scan->toks[j]) >= 0 && scan->toks[j].s - de <= 4)
                {
                  /* a '.' after the month is the sentence's ("before 14 May. His"), unless a
                   * year follows ("3 Jan. 2020" is one span through the year) */
                  gsize e = scan->toks[j].e;
                  if (j + 1 < scan->n_toks && year_token (scan, &scan->toks[j + 1])
                      && glue (scan, scan->toks[j].e, scan->toks[j + 1].s))
                    e = scan->toks[++j].e;
                  add_date (scan, tk->s, e, 0.8f, HZ_TIER_PATTERN, "date-text");
                  i = j;
                  continue;
                }
            }
          /* clock time with am/pm: "10:30 pm", "5:30pm", "5 p.m." */
          if (tk->e - tk->s <= 2 && !hz_alnum_before (t, tk->s))
            {
              gsize e = tk->e;
              if (e + 3 <= scan->len && t[e] == ':' && hz_is_digit (t[e + 1]) && hz_is_digit (t[e + 2]))
                e += 3;
              gsize a = e < scan->len && t[e] == ' ' ? e + 1 : e;
              gsize k = ampm_len (scan, a);
              if (k > 0)
                {
                  add_date (scan, tk->s, a + k, 0.6f, HZ_TIER_PATTERN, "time");
                  i = hz_token_at_or_after (scan, a + k) - 1;
                  continue;
                }
            }
          if (year_token (scan, tk) && !hz_alnum_before (t, tk->s) && !hz_alnum_at (t, scan->len, tk->e)
              && !(tk->e < scan->len && (t[tk->e] == '-' || t[tk->e] == '/' || t[tk->e] == ':'))
              && !(tk->s > 0 && (t[tk->s - 1] == '-' || t[tk->s - 1] == '/' || t[tk->s - 1] == '#'
                                 || t[tk->s - 1] == '$'))
              && hz_context_before (scan, i, 2, HZ_W_YEAR_CUE))
            add_date (scan, tk->s, tk->e, 0.55f, HZ_TIER_CONTEXT, "date-year");
          continue;
        }
      int mi = month_index (scan, tk);
      if (mi >= 0 && i + 1 < scan->n_toks)
        {
          /* Month day[, year] | Month year ("May" alone is never a date) */
          const HzToken *nx = &scan->toks[i + 1];
          gsize de;
          gsize gap_s = tk->e;
          if (gap_s < scan->len && t[gap_s] == '.')
            gap_s++;
          if (nx->s - gap_s > 2)
            continue;
          if (year_token (scan, nx) && (tk->flags & (HZ_TOK_CAP | HZ_TOK_UPPER)))
            {
              add_date (scan, tk->s, nx->e, 0.7f, HZ_TIER_PATTERN, "date-text");
              i++;
              continue;
            }
          if (day_token (scan, nx, &de) && !hz_alnum_at (t, scan->len, nx->e))
            {
              gsize e = nx->e;
              guint j = i + 1;
              if (j + 1 < scan->n_toks && year_token (scan, &scan->toks[j + 1])
                  && glue (scan, nx->e, scan->toks[j + 1].s))
                e = scan->toks[++j].e;
              add_date (scan, tk->s, e, 0.75f, HZ_TIER_PATTERN, "date-text");
              i = j;
              continue;
            }
          continue;
        }
      /* a weekday names a date when anchored: "on Monday", "meet Tuesday", "Monday morning" */
      if (hz_tok_in (tk, HZ_W_WEEKDAY)
          && (hz_context_before (scan, i, 1, HZ_W_WD_BEFORE) || hz_context_after (scan, i + 1, 1, HZ_W_WD_AFTER)))
        add_date (scan, tk->s, tk->e, 0.5f, HZ_TIER_CONTEXT, "weekday");
    }
}
