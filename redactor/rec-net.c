/* rec-net.c — IP_ADDRESS (IPv4 dotted quads with octets 0-255 and no leading zeros,
 * optional /prefix; IPv6 in the RFC 4291/5952 text forms) and MAC_ADDRESS (six hex pairs
 * with one consistent ':' or '-' separator, or the dotted xxxx.xxxx.xxxx form). */
#include "hz-recognizers.h"

static inline gboolean
is_hex (char c)
{
  return hz_is_digit (c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

static gsize
cidr_suffix (const char *t, gsize len, gsize e, int max)
{
  if (e + 1 < len && t[e] == '/' && hz_is_digit (t[e + 1]))
    {
      gsize p = e + 1;
      int v = 0;
      while (p < len && hz_is_digit (t[p]) && p - e <= 3)
        v = v * 10 + (t[p++] - '0');
      if (v <= max && !hz_alnum_at (t, len, p))
        return p;
    }
  return e;
}

static void
find_ipv4 (HzScan *scan)
{
  const char *t = scan->text;
  gsize len = scan->len;
  /* an address starts a word token ("10.0.0.1" is the tokens 10, 0, 0, 1) or follows a
   * hyphen inside one ("host-10.0.0.1"): visit those positions only */
  gsize i = 0;
  for (guint k = 0; k < scan->n_toks; k++)
    {
      const HzToken *tk = &scan->toks[k];
      if (tk->e <= i)
        continue;
      gsize q = MAX (i, (gsize) tk->s);
      if (q != tk->s || !hz_is_digit (t[q]))
        {
          while (q < tk->e && !(t[q] == '-' && q + 1 < tk->e && hz_is_digit (t[q + 1])))
            q++;
          if (q >= tk->e)
            continue;
          q++;
        }
      i = q;
      if (!hz_is_digit (t[i]) || hz_alnum_before (t, i) || (i > 0 && t[i - 1] == '.'))
        {
          k--; /* look for a later hyphen in the same token */
          i++;
          continue;
        }
      gsize p = i;
      int dots = 0;
      while (p < len && (hz_is_digit (t[p]) || (t[p] == '.' && p + 1 < len && hz_is_digit (t[p + 1]))))
        dots += t[p++] == '.';
      if (dots != 3 || hz_alnum_at (t, len, p))
        {
          i = p;
          continue;
        }
      guint8 v4[4];
      /* a version or section number ("kernel 6.1.0.21", "section 14.9.1.2") is no address */
      if (hz_parse_ipv4 (t + i, p - i, v4) && !(q == tk->s && hz_number_is_version (scan, i)))
        {
          gsize e = cidr_suffix (t, len, p, 32);
          hz_scan_add (scan, i, e, HZ_ENTITY_IP_ADDRESS, 0.95f, HZ_TIER_VALIDATED, "ipv4");
        }
      i = p;
      k = hz_token_at_or_after (scan, i) - 1; /* tokens of the address are done */
    }
}

/* A short compressed form in [s, e) that reads as code, not as an address: at most two
 * groups around "::" and either no decimal digit ("a::b", "dead::beef": a C++ or Rust
 * scope), a call or template after it ("add::bad(x)", "cafe::face<T>"), or a slice of an
 * indexed expression ("arr[::2]", "a[1::3]"). Real short addresses have a digit ("::1",
 * "fe80::1", "2001:db8::"), and after a word of networking ("IPv6 address dead::beef") any
 * form is one. */
static gboolean
code_not_ipv6 (const HzScan *scan, gsize s, gsize e)
{
  const char *t = scan->text;
  int groups = 0;
  gboolean digit = FALSE, gap = FALSE;
  for (gsize p = s; p < e; p++)
    {
      if (t[p] == ':')
        {
          gap = gap || (p + 1 < e && t[p + 1] == ':');
          continue;
        }
      if (t[p] == '.')
        return FALSE; /* embedded IPv4: an address */
      digit = digit || hz_is_digit (t[p]);
      groups += p == s || t[p - 1] == ':';
    }
  if (!gap || groups > 2)
    return FALSE;
  char before = s >= 2 ? t[s - 2] : ' ';
  gboolean slice = s >= 2 && t[s - 1] == '[' && e < scan->len && t[e] == ']'
                   && (hz_is_alnum_ascii (before) || before == '_' || before == ')' || before == ']');
  gboolean call = e < scan->len && (t[e] == '(' || t[e] == '<');
  return (!digit || slice || call) && !hz_number_after_net_word (scan, s);
}

static void
find_ipv6 (HzScan *scan)
{
  const char *t = scan->text;
  gsize len = scan->len;
  for (gsize i = 0; i + 2 < len; i++)
    {
      if (!(is_hex (t[i]) || t[i] == ':') || (i > 0 && (hz_is_alnum_ascii (t[i - 1]) || t[i - 1] == ':')))
        continue;
      gsize p = i;
      int colons = 0, hexdigits = 0;
      while (p < len && (is_hex (t[p]) || t[p] == ':' || t[p] == '.'))
        {
          colons += t[p] == ':';
          hexdigits += is_hex (t[p]);
          p++;
        }
      if (colons < 2 || hexdigits == 0 || hz_alnum_at (t, len, p))
        {
          i = p;
          continue;
        }
      gsize e = p;
      while (e > i && (t[e - 1] == '.' || (t[e - 1] == ':' && !(e - i >= 2 && t[e - 2] == ':'))))
        e--;
      if (hz_parse_ipv6 (t + i, e - i, NULL) && !code_not_ipv6 (scan, i, e))
        {
          gsize ce = cidr_suffix (t, len, e, 128);
          hz_scan_add (scan, i, ce, HZ_ENTITY_IP_ADDRESS, 0.95f, HZ_TIER_VALIDATED, "ipv6");
        }
      i = p;
    }
}

static void
find_mac (HzScan *scan)
{
  const char *t = scan->text;
  gsize len = scan->len;
  /* a MAC address starts a word token (hyphenated forms are one token, colon and dotted
   * forms several) */
  for (guint k = 0; k < scan->n_toks; k++)
    {
      gsize i = scan->toks[k].s;
      if (i + 14 > len)
        break;
      /* cheap shape test first: a separator at i+2 or i+4 */
      if (!is_hex (t[i]) || !(t[i + 2] == ':' || t[i + 2] == '-' || t[i + 4] == '.'))
        continue;
      if (hz_alnum_before (t, i) || (i > 0 && (t[i - 1] == ':' || t[i - 1] == '-')))
        continue;
      gsize e = 0;
      if (i + 17 <= len && (t[i + 2] == ':' || t[i + 2] == '-'))
        {
          char sep = t[i + 2];
          gboolean ok = TRUE;
          for (int k = 0; k < 6 && ok; k++)
            {
              ok = is_hex (t[i + 3 * k]) && is_hex (t[i + 3 * k + 1]);
              if (k < 5)
                ok = ok && t[i + 3 * k + 2] == sep;
            }
          if (ok)
            e = i + 17;
        }
      else if (t[i + 4] == '.' && t[i + 9] == '.')
        {
          gboolean ok = TRUE;
          for (int k = 0; k < 3 && ok; k++)
            for (int j = 0; j < 4 && ok; j++)
              ok = is_hex (t[i + 5 * k + j]);
          if (ok)
            e = i + 14;
        }
      /* and not part of a longer dotted number ("4111.1111.1111.1111" is a card) */
      if (e && !hz_alnum_at (t, len, e) && !(e < len && (t[e] == ':' || t[e] == '-'))
          && !(e + 1 < len && t[e] == '.' && hz_is_alnum_ascii (t[e + 1]))
          && !(i >= 2 && t[i - 1] == '.' && hz_is_alnum_ascii (t[i - 2])))
        {
          hz_scan_add (scan, i, e, HZ_ENTITY_MAC_ADDRESS, 0.9f, HZ_TIER_VALIDATED, "mac");
          k = hz_token_at_or_after (scan, e) - 1;
        }
    }
}

/* Some ':' has a hex digit or another ':' right after it, as every IPv6 address has; the
 * colons of "Name: value" do not, and most texts have no other. */
static gboolean
colon_in_word (const HzScan *scan)
{
  const char *t = scan->text, *end = t + scan->len;
  for (const char *p = t; p + 1 < end && (p = memchr (p, ':', (gsize) (end - p - 1))); p++)
    if (is_hex (p[1]) || p[1] == ':')
      return TRUE;
  return FALSE;
}

void
hz_rec_net (HzScan *scan)
{
  /* every form needs its separator somewhere in the text */
  if (scan->r->enabled[HZ_ENTITY_IP_ADDRESS])
    {
      if (scan->has['.'] && hz_scan_has_digits (scan))
        find_ipv4 (scan);
      if (scan->has[':'] && colon_in_word (scan))
        find_ipv6 (scan);
    }
  if (scan->r->enabled[HZ_ENTITY_MAC_ADDRESS] && (scan->has[':'] || scan->has['-'] || scan->has['.']))
    find_mac (scan);
}
