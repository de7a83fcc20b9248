/* hz-text.c — word tokens and whole-word context matching for the recognizers. */
#include "hz-redact-private.h"

#include <string.h>

const guint8 hz_ctype[256] = {
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 4, 4, 4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0,
  0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 4,
  0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 0,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

static inline gboolean
is_word_char (gunichar c)
{
  if (c < 0x80)
    return hz_is_alnum_ascii ((char) c);
  return g_unichar_isalnum (c) || g_unichar_ismark (c);
}

static inline gunichar
char_at (const char *p, const char *end)
{
  if ((guchar) *p < 0x80)
    return (guchar) *p;
  return g_utf8_get_char_validated (p, end - p);
}

gboolean
hz_alnum_before (const char *text, gsize pos)
{
  if (pos == 0)
    return FALSE;
  if ((guchar) text[pos - 1] < 0x80)
    return hz_is_alnum_ascii (text[pos - 1]);
  const char *p = g_utf8_find_prev_char (text, text + pos);
  if (!p)
    return FALSE;
  return is_word_char (g_utf8_get_char (p));
}

gboolean
hz_alnum_at (const char *text, gsize len, gsize pos)
{
  if (pos >= len)
    return FALSE;
  return is_word_char (char_at (text + pos, text + len));
}

/* The case/class flags of a token from its character counts (both tokenizer paths). */
static inline guint16
class_flags (gsize n, gsize digits, gsize letters, gsize upper, gsize lower, gboolean first_upper)
{
  guint16 f = 0;
  if (digits == n)
    f |= HZ_TOK_DIGIT;
  if (letters > 0 && digits == 0)
    f |= HZ_TOK_ALPHA;
  if (letters > 0 && upper == letters)
    f |= HZ_TOK_UPPER;
  else if (first_upper)
    f |= HZ_TOK_CAP;
  if (letters > 0 && lower == letters)
    f |= HZ_TOK_LOWER;
  return f;
}

static guint16
classify (const char *s, const char *e, guint16 *nchars)
{
  guint n = 0, letters = 0, upper = 0, lower = 0, digits = 0, other = 0;
  gboolean first_upper = FALSE, nonascii = FALSE;
  for (const char *p = s; p < e; p = g_utf8_next_char (p))
    {
      gunichar c = char_at (p, e);
      if (c >= 0x80)
        nonascii = TRUE;
      if (c >= '0' && c <= '9')
        digits++;
      else if (g_unichar_isalpha (c))
        {
          letters++;
          if (g_unichar_isupper (c) || g_unichar_istitle (c))
            {
              upper++;
              if (letters == 1)
                first_upper = TRUE;
            }
          else if (g_unichar_islower (c))
            lower++;
        }
      else if (!g_unichar_ismark (c))
        other++;
      n++;
    }
  guint16 f = class_flags (n, digits, letters, upper, lower, first_upper);
  if (nonascii)
    f |= HZ_TOK_NONASCII;
  *nchars = (guint16) MIN (n, G_MAXUINT16);
  (void) other;
  return f;
}

static gboolean
sentence_start (const char *text, gsize pos)
{
  while (pos > 0)
    {
      char c = text[pos - 1];
      if (c == ' ' || c == '\t' || c == '"' || c == '\'' || c == '(' || c == '[' || c == '*' || c == '-')
        {
          pos--;
          continue;
        }
      return c == '.' || c == '!' || c == '?' || c == '\n' || c == '\r' || c == ':';
    }
  return TRUE;
}

guint
hz_tokenize (const HzLexicon *lex, const char *text, gsize len, HzToken **toks, gsize *cap_io)
{
  gsize cap = *cap_io, n = 0;
  HzToken *a = *toks;
  if (cap < len / 4 + 8 || !a)
    {
      cap = MAX (cap, len / 4 + 8);
      a = g_renew (HzToken, a, cap);
    }
  const char *end = text + len;
  const char *p = text;
  while (p < end)
    {
      if ((guchar) *p < 0x80 && !hz_is_alnum_ascii (*p))
        {
          p++;
          continue;
        }
      gunichar c = char_at (p, end);
      if (!is_word_char (c))
        {
          p = ((guchar) *p < 0x80) ? p + 1 : g_utf8_next_char (p);
          continue;
        }
      const char *s = p;
      gboolean ascii = TRUE;
      /* ASCII letters and digits are classified and lower-cased (into buf) in this same
       * pass; a token with other characters is classified afterwards */
      char buf[64];
      guint letters = 0, upper = 0, lower = 0, digits = 0, run = 0;
      gboolean first_upper = FALSE, elong = FALSE;
      guchar prev = 0;
      while (p < end)
        {
          guchar b = (guchar) *p;
          guint8 ct = hz_ctype[b] & 3;
          if (ct)
            {
              if (ct & 1)
                digits++;
              else if (b <= 'Z')
                {
                  upper++;
                  first_upper |= letters == 0;
                  letters++;
                  b += 32;
                }
              else
                {
                  letters++;
                  lower++;
                }
              /* runs of one letter (digits never repeat as letters: ct & 2) */
              run = (ct & 2) && b == prev ? run + 1 : 1;
              elong |= run >= 3;
              prev = (ct & 2) ? b : 0;
              if (p - s < 64)
                buf[p - s] = (char) b;
              p++;
              continue;
            }
          c = char_at (p, end);
          const char *nx = ((guchar) *p < 0x80) ? p + 1 : g_utf8_next_char (p);
          prev = 0; /* a run of one ASCII letter ends at any other character */
          if (c >= 0x80)
            ascii = FALSE;
          if (is_word_char (c))
            {
              p = nx;
              continue;
            }
          /* apostrophe or hyphen between two word characters stays inside the word */
          if ((c == '\'' || c == 0x2019 || c == '-') && nx < end && is_word_char (char_at (nx, end))
              && p > s)
            {
              if (p - s < 64)
                buf[p - s] = *p;
              p = nx;
              continue;
            }
          break;
        }
      if (p - text > G_MAXUINT32)
        break;
      if (n == cap)
        {
          cap *= 2;
          a = g_renew (HzToken, a, cap);
        }
      HzToken *t = &a[n++];
      t->s = (guint32) (s - text);
      t->e = (guint32) (p - text);
      t->pad_ = 0;
      gsize kn = 0;
      if (ascii)
        {
          gsize n_bytes = (gsize) (p - s);
          t->flags = class_flags (n_bytes, digits, letters, upper, lower, first_upper);
          t->nchars = (guint16) MIN (n_bytes, G_MAXUINT16);
        }
      else
        t->flags = classify (s, p, &t->nchars);
      if (elong)
        t->flags |= HZ_TOK_ELONG;
      if (sentence_start (text, t->s))
        t->flags |= HZ_TOK_SENT;
      /* one lexicon probe per token (digits-only tokens are in no list) */
      t->cls = 0;
      t->hash = 0;
      if (!(t->flags & HZ_TOK_DIGIT) && p - s <= 60)
        {
          if (ascii)
            t->hash = hz_key_hash (buf, p - s);
          else
            t->hash = hz_lex_key (s, p - s, buf, sizeof buf, &kn);
          if (t->hash)
            t->cls = hz_lex_get (lex, t->hash, buf, kn);
        }
    }
  *toks = a;
  *cap_io = cap;
  return (guint) n;
}

guint
hz_token_at_or_after (const HzScan *scan, gsize pos)
{
  guint lo = 0, hi = scan->n_toks;
  while (lo < hi)
    {
      guint mid = (lo + hi) / 2;
      if (scan->toks[mid].s < pos)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

gboolean
hz_token_is (const HzScan *scan, const HzToken *t, const char *w)
{
  const char *p = scan->text + t->s;
  gsize n = t->e - t->s;
  for (gsize i = 0; i < n; i++)
    {
      char c = p[i];
      if (c >= 'A' && c <= 'Z')
        c += 32;
      if (w[i] == 0 || c != w[i])
        return FALSE;
    }
  return w[n] == 0;
}

gboolean
hz_token_among (const HzScan *scan, const HzToken *t, const char *const *words)
{
  for (const char *const *w = words; *w; w++)
    if (hz_token_is (scan, t, *w))
      return TRUE;
  return FALSE;
}

gsize
hz_quote_at (const char *t, gsize len, gsize a, gboolean singles)
{
  if (a < len && (t[a] == '"' || (singles && t[a] == '\'')))
    return 1;
  if (a + 2 < len && (guchar) t[a] == 0xE2 && (guchar) t[a + 1] == 0x80)
    {
      guchar c = (guchar) t[a + 2];
      if (c == 0x9C || c == 0x9D || (singles && c >= 0x98 && c <= 0x9D))
        return 3;
    }
  return 0;
}

gboolean
hz_context_before (const HzScan *scan, guint ti, guint window, int bit)
{
  guint64 m = HZ_WB (bit);
  for (guint k = 1; k <= window && k <= ti; k++)
    if (scan->toks[ti - k].cls & m)
      return TRUE;
  return FALSE;
}

gboolean
hz_context_after (const HzScan *scan, guint ti, guint window, int bit)
{
  guint64 m = HZ_WB (bit);
  for (guint k = 0; k < window && ti + k < scan->n_toks; k++)
    if (scan->toks[ti + k].cls & m)
      return TRUE;
  return FALSE;
}

char *
hz_lower_dup (const char *s, gsize n)
{
  for (gsize i = 0; i < n; i++)
    if ((guchar) s[i] >= 0x80)
      return g_utf8_strdown (s, n);
  return g_ascii_strdown (s, n);
}

gboolean
hz_set_has (GHashTable *set, const char *s, gsize n)
{
  char buf[64];
  if (n == 0)
    return FALSE;
  gboolean ascii = TRUE;
  for (gsize i = 0; i < n; i++)
    if ((guchar) s[i] >= 0x80)
      ascii = FALSE;
  if (ascii && n < sizeof buf)
    {
      for (gsize i = 0; i < n; i++)
        buf[i] = g_ascii_tolower (s[i]);
      buf[n] = 0;
      return g_hash_table_contains (set, buf);
    }
  g_autofree char *l = hz_lower_dup (s, n);
  return g_hash_table_contains (set, l);
}
