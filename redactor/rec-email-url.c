/* rec-email-url.c — EMAIL and URL recognizers. Hosts must end in a top-level domain of the
 * IANA root zone (hz_validate_tld) or be an IP literal / localhost. An e-mail address is
 * reported as one span; the URL pass never starts inside the local part of an address. */
#include "hz-recognizers.h"

#include <string.h>

static inline gboolean
is_local_char (char c)
{
  return hz_is_alnum_ascii (c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-';
}

static inline gboolean
is_label_char (char c)
{
  return hz_is_alnum_ascii (c) || c == '-';
}

/* Parse a host name at `p`: labels separated by dots. Returns the end of the longest prefix
 * that has >= 2 labels and ends in a TLD (0 if none). `*tld_s` receives the TLD start. */
static gsize
host_end (const char *t, gsize len, gsize p, gsize *tld_s)
{
  gsize best = 0, i = p;
  int labels = 0;
  while (i < len)
    {
      gsize ls = i;
      while (i < len && is_label_char (t[i]))
        i++;
      if (i == ls || t[ls] == '-' || t[i - 1] == '-')
        break;
      labels++;
      if (labels >= 2 && hz_validate_tld (t + ls, i - ls) && !hz_is_digit (t[ls]))
        {
          best = i;
          if (tld_s)
            *tld_s = ls;
        }
      if (i + 1 < len && t[i] == '.' && is_label_char (t[i + 1]))
        i++;
      else
        break;
    }
  return best;
}

static void
find_emails (HzScan *scan)
{
  const char *t = scan->text;
  gsize len = scan->len;
  for (const char *at = memchr (t, '@', len); at; at = memchr (at + 1, '@', len - (at + 1 - t)))
    {
      gsize a = at - t, s = a;
      while (s > 0)
        {
          if (is_local_char (t[s - 1]))
            s--;
          else if ((guchar) t[s - 1] >= 0x80)
            {
              /* RFC 6531 (SMTPUTF8): letters and digits of any script in the local part
               * ("šárka@…"); other characters (quotes, dashes, spaces) end it */
              const char *prev = g_utf8_find_prev_char (t, t + s);
              const gunichar c = prev ? g_utf8_get_char_validated (prev, t + s - prev)
                                      : (gunichar) -1;
              if (!prev || c >= 0x110000 || !(g_unichar_isalnum (c) || g_unichar_ismark (c)))
                break;
              s = prev - t;
            }
          else
            break;
        }
      while (s < a && (t[s] == '.' || t[s] == '-'))
        s++;
      if (s == a || t[a - 1] == '.')
        continue;
      gsize e = host_end (t, len, a + 1, NULL);
      if (e == 0)
        continue;
      hz_scan_add (scan, s, e, HZ_ENTITY_EMAIL, 1.0f, HZ_TIER_VALIDATED, "email");
    }
}

static gboolean
url_stop (char c)
{
  return (guchar) c <= ' ' || c == '<' || c == '>' || c == '"' || c == '`' || c == '|'
         || c == '{' || c == '}' || c == '\\' || c == '^';
}

/* End of the URL whose host part ends at `he`: path/query/fragment up to a stop character,
 * without trailing punctuation or an unbalanced closing bracket. */
static gsize
url_tail (const char *t, gsize len, gsize he)
{
  gsize e = he;
  if (e < len && t[e] == ':')
    {
      gsize p = e + 1;
      while (p < len && hz_is_digit (t[p]))
        p++;
      if (p > e + 1)
        e = p;
    }
  if (e < len && (t[e] == '/' || t[e] == '?' || t[e] == '#'))
    while (e < len && !url_stop (t[e]) && (guchar) t[e] < 0x80)
      e++;
  for (;;)
    {
      char c = t[e - 1];
      if (e > he && strchr (".,;:!?'*", c))
        e--;
      else if (e > he && (c == ')' || c == ']'))
        {
          char open = c == ')' ? '(' : '[';
          int bal = 0;
          for (gsize k = he; k < e; k++)
            bal += (t[k] == open) - (t[k] == c);
          if (bal < 0)
            e--;
          else
            break;
        }
      else
        break;
    }
  return e;
}

/* Top-level domains accepted for bare host names ("example.com" without scheme or www):
 * only those unlikely to be file extensions. */
static const char *const bare_tlds[] = {
  "com", "net", "org", "edu", "gov", "mil", "int", "info", "biz", "io", "co", "app", "dev",
  "ai", "me", "tv", "uk", "de", "fr", "nl", "se", "dk", "no", "fi", "es", "it", "cz", "be",
  "ch", "at", "au", "ca", "br", "jp", "cn", "ru", "us", "eu", "nz", "ie", "pt", "gr", "hu",
  "ro", "sk", "si", "hr", "bg", "lt", "lv", "ee", "is", "lu", "mx", "ar", "cl", "za", "kr",
  "tw", "hk", "sg", "tr", "il", "ae", "online", "site", "shop", "store", "blog", "xyz",
  "cy", NULL,
};

static void
find_urls (HzScan *scan)
{
  const char *t = scan->text;
  gsize len = scan->len;
  gsize i = 0;
  while (i < len)
    {
      char c = t[i];
      if (!hz_is_alpha_ascii (c) || (i > 0 && (hz_is_alnum_ascii (t[i - 1]) || t[i - 1] == '@'
                                               || t[i - 1] == '.' || t[i - 1] == '-' || t[i - 1] == '_')))
        {
          i++;
          continue;
        }
      gsize s = i, p = i;
      while (p < len && (hz_is_alnum_ascii (t[p]) || t[p] == '+' || t[p] == '-' || t[p] == '.'))
        p++;
      float score = 0;
      gsize hs = 0;
      if (p + 3 <= len && t[p] == ':' && t[p + 1] == '/' && t[p + 2] == '/' && p - s <= 10)
        {
          hs = p + 3;
          /* optional user-info */
          gsize q = hs;
          while (q < len && !url_stop (t[q]) && t[q] != '/' && t[q] != '@')
            q++;
          if (q < len && t[q] == '@')
            hs = q + 1;
          score = 0.95f;
        }
      else if (p - s > 4 && g_ascii_strncasecmp (t + s, "www.", 4) == 0)
        {
          hs = s;
          score = 0.9f;
        }
      else
        {
          /* bare host name: label(.label)+ with a common TLD, not an e-mail domain; the
           * word must contain a dot followed by a letter */
          gboolean dot = FALSE;
          for (gsize q = s; q + 1 < p && !dot; q++)
            dot = t[q] == '.' && hz_is_alpha_ascii (t[q + 1]);
          if (!dot)
            {
              i = p > i ? p : i + 1;
              continue;
            }
          gsize tld_s = 0;
          gsize he = host_end (t, len, s, &tld_s);
          gboolean ok = FALSE;
          if (he > 0 && (he >= len || t[he] != '@') && !hz_alnum_at (t, len, he))
            for (const char *const *b = bare_tlds; *b && !ok; b++)
              if (he - tld_s == strlen (*b) && g_ascii_strncasecmp (t + tld_s, *b, he - tld_s) == 0)
                ok = TRUE;
          /* an all-lower-case first label of >= 2 letters, or a path after the host */
          if (ok && (tld_s - s) >= 3)
            {
              gsize e = url_tail (t, len, he);
              hz_scan_add (scan, s, e, HZ_ENTITY_URL, 0.6f, HZ_TIER_PATTERN, "url-bare");
              i = e;
              continue;
            }
          i = p > i ? p : i + 1;
          continue;
        }
      gsize he = 0;
      if (hs < len && t[hs] == '[')
        {
          gsize q = hs + 1;
          while (q < len && (hz_is_alnum_ascii (t[q]) || t[q] == ':' || t[q] == '.'))
            q++;
          if (q < len && t[q] == ']' && hz_parse_ipv6 (t + hs + 1, q - hs - 1, NULL))
            he = q + 1;
        }
      else
        {
          he = host_end (t, len, hs, NULL);
          gsize q = hs;
          while (q < len && (hz_is_digit (t[q]) || t[q] == '.'))
            q++;
          guint8 v4[4];
          if (q > hs && hz_parse_ipv4 (t + hs, q - hs, v4))
            he = MAX (he, q);
          if (he == 0 && len - hs >= 9 && g_ascii_strncasecmp (t + hs, "localhost", 9) == 0)
            he = hs + 9;
        }
      if (he == 0)
        {
          i = p + 1;
          continue;
        }
      gsize e = url_tail (t, len, he);
      hz_scan_add (scan, s, e, HZ_ENTITY_URL, score, HZ_TIER_PATTERN, "url");
      i = e;
    }
}

/* Every URL form has a "://" or a dot inside a word ("www.x", "example.com"): a text
 * whose dots all end sentences ("Hi. Bye.") has none, and most texts are such. */
static gboolean
may_have_url (const HzScan *scan)
{
  const char *t = scan->text, *end = t + scan->len;
  for (const char *p = t; p + 1 < end && (p = memchr (p, '.', (gsize) (end - p - 1))); p++)
    if (hz_is_alnum_ascii (p[1]) || p[1] == '-' || p[1] == '+' || p[1] == '.')
      return TRUE;
  if (scan->has[':'])
    for (const char *p = t; p + 1 < end && (p = memchr (p, ':', (gsize) (end - p - 1))); p++)
      if (p[1] == '/')
        return TRUE;
  return FALSE;
}

void
hz_rec_email_url (HzScan *scan)
{
  if (scan->r->enabled[HZ_ENTITY_EMAIL] && scan->has['@'])
    find_emails (scan);
  if (scan->r->enabled[HZ_ENTITY_URL] && (scan->has['.'] || scan->has[':']) && may_have_url (scan))
    find_urls (scan);
}
