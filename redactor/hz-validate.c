/* hz-validate.c — checksum and structure validators: Luhn and card issuer ranges
 * (ISO/IEC 7812), IBAN (ISO 13616, ISO 7064 mod 97-10), SSA SSN rules, IANA TLDs and
 * IPv6 text forms (RFC 4291 section 2.2). */
#include "hz-redact-private.h"

#include <string.h>

gboolean
hz_validate_luhn (const char *digits, gsize n)
{
  int sum = 0, count = 0;
  for (gsize i = n; i-- > 0;)
    {
      if (!hz_is_digit (digits[i]))
        continue;
      int d = digits[i] - '0';
      if (count & 1)
        {
          d *= 2;
          if (d > 9)
            d -= 9;
        }
      sum += d;
      count++;
    }
  return count >= 2 && sum % 10 == 0;
}

static int
prefix_value (const char *d, int k)
{
  int v = 0;
  for (int i = 0; i < k; i++)
    v = v * 10 + (d[i] - '0');
  return v;
}

/* Issuer identification ranges: [lo, hi] on the first `plen` digits, allowed lengths. */
typedef struct {
  int plen, lo, hi;
  guint8 min_len, max_len;
} IinRange;

static const IinRange iin_ranges[] = {
  { 1, 4, 4, 13, 19 },              /* Visa (13, 16, 19; checked below) */
  { 2, 51, 55, 16, 16 },            /* Mastercard */
  { 4, 2221, 2720, 16, 16 },        /* Mastercard 2-series */
  { 2, 34, 34, 15, 15 },            /* American Express */
  { 2, 37, 37, 15, 15 },
  { 4, 6011, 6011, 16, 19 },        /* Discover */
  { 3, 644, 649, 16, 19 },
  { 2, 65, 65, 16, 19 },
  { 6, 622126, 622925, 16, 19 },
  { 3, 300, 305, 14, 19 },          /* Diners Club */
  { 4, 3095, 3095, 14, 19 },
  { 2, 36, 36, 14, 19 },
  { 2, 38, 39, 14, 19 },
  { 2, 35, 35, 16, 19 },            /* JCB (3528-3589 assigned; the 35 block is JCB's) */
  { 4, 1800, 1800, 15, 15 },        /* JCB (legacy 15-digit) */
  { 4, 2131, 2131, 15, 15 },
  { 2, 62, 62, 16, 19 },            /* UnionPay */
  { 2, 81, 81, 16, 19 },
  { 4, 2200, 2204, 16, 19 },        /* Mir */
  { 2, 50, 50, 12, 19 },            /* Maestro */
  { 4, 604, 604, 12, 19 },          /* Maestro (legacy 0604 block, leading zero) */
  { 2, 56, 69, 12, 19 },
  { 2, 60, 60, 16, 16 },            /* RuPay */
  { 3, 508, 508, 16, 16 },
  { 4, 9792, 9792, 16, 16 },        /* Troy */
};

gboolean
hz_validate_card_digits (const char *digits, gsize n)
{
  if (n < 12 || n > 19)
    return FALSE;
  for (gsize i = 0; i < n; i++)
    if (!hz_is_digit (digits[i]))
      return FALSE;
  gboolean issuer = FALSE;
  for (gsize i = 0; i < G_N_ELEMENTS (iin_ranges) && !issuer; i++)
    {
      const IinRange *r = &iin_ranges[i];
      int v = prefix_value (digits, r->plen);
      if (v < r->lo || v > r->hi || n < r->min_len || n > r->max_len)
        continue;
      if (r->lo == 4 && r->plen == 1 && n != 13 && n != 16 && n != 19)
        continue;
      issuer = TRUE;
    }
  return issuer && hz_validate_luhn (digits, n);
}

/* IBAN lengths of the ISO 13616 registry (SWIFT IBAN registry, release 2024). */
static const struct { char cc[3]; guint8 len; } iban_lengths[] = {
  { "AD", 24 }, { "AE", 23 }, { "AL", 28 }, { "AT", 20 }, { "AZ", 28 }, { "BA", 20 },
  { "BE", 16 }, { "BG", 22 }, { "BH", 22 }, { "BI", 27 }, { "BR", 29 }, { "BY", 28 },
  { "CH", 21 }, { "CR", 22 }, { "CY", 28 }, { "CZ", 24 }, { "DE", 22 }, { "DJ", 27 },
  { "DK", 18 }, { "DO", 28 }, { "EE", 20 }, { "EG", 29 }, { "ES", 24 }, { "FI", 18 },
  { "FK", 18 }, { "FO", 18 }, { "FR", 27 }, { "GB", 22 }, { "GE", 22 }, { "GI", 23 },
  { "GL", 18 }, { "GR", 27 }, { "GT", 28 }, { "HR", 21 }, { "HU", 28 }, { "IE", 22 },
  { "IL", 23 }, { "IQ", 23 }, { "IS", 26 }, { "IT", 27 }, { "JO", 30 }, { "KW", 30 },
  { "KZ", 20 }, { "LB", 28 }, { "LC", 32 }, { "LI", 21 }, { "LT", 20 }, { "LU", 20 },
  { "LV", 21 }, { "LY", 25 }, { "MC", 27 }, { "MD", 24 }, { "ME", 22 }, { "MK", 19 },
  { "MN", 20 }, { "MR", 27 }, { "MT", 31 }, { "MU", 30 }, { "NI", 28 }, { "NL", 18 },
  { "NO", 15 }, { "OM", 23 }, { "PK", 24 }, { "PL", 28 }, { "PS", 29 }, { "PT", 25 },
  { "QA", 29 }, { "RO", 24 }, { "RS", 22 }, { "RU", 33 }, { "SA", 24 }, { "SC", 31 },
  { "SD", 18 }, { "SE", 24 }, { "SI", 19 }, { "SK", 24 }, { "SM", 27 }, { "SO", 23 },
  { "ST", 25 }, { "SV", 28 }, { "TL", 23 }, { "TN", 24 }, { "TR", 26 }, { "UA", 29 },
  { "VA", 22 }, { "VG", 24 }, { "XK", 20 }, { "YE", 30 },
};

int
hz_iban_country_length (const char *cc)
{
  for (gsize i = 0; i < G_N_ELEMENTS (iban_lengths); i++)
    if (g_ascii_toupper (cc[0]) == iban_lengths[i].cc[0]
        && g_ascii_toupper (cc[1]) == iban_lengths[i].cc[1])
      return iban_lengths[i].len;
  return 0;
}

gboolean
hz_validate_iban (const char *s, gsize n)
{
  char buf[40];
  gsize m = 0;
  for (gsize i = 0; i < n; i++)
    {
      if (s[i] == ' ')
        continue;
      if (!hz_is_alnum_ascii (s[i]) || m >= sizeof buf)
        return FALSE;
      buf[m++] = g_ascii_toupper (s[i]);
    }
  if (m < 15 || !hz_is_alpha_ascii (buf[0]) || !hz_is_alpha_ascii (buf[1])
      || !hz_is_digit (buf[2]) || !hz_is_digit (buf[3]))
    return FALSE;
  if ((gsize) hz_iban_country_length (buf) != m)
    return FALSE;
  /* ISO 7064 mod 97-10 over BBAN + country + check digits, letters as 10..35 */
  unsigned rem = 0;
  for (gsize k = 0; k < m; k++)
    {
      char c = buf[(k + 4) % m];
      if (hz_is_digit (c))
        rem = (rem * 10 + (unsigned) (c - '0')) % 97;
      else
        rem = (rem * 100 + (unsigned) (c - 'A' + 10)) % 97;
    }
  return rem == 1;
}

gboolean
hz_validate_us_ssn (int area, int group, int serial)
{
  if (area <= 0 || area == 666 || area >= 900 || area > 999)
    return FALSE;
  if (group <= 0 || group > 99 || serial <= 0 || serial > 9999)
    return FALSE;
  /* numbers voided by the SSA after appearing in advertising */
  if ((area == 78 && group == 5 && serial == 1120) || (area == 219 && group == 9 && serial == 9999)
      || (area == 123 && group == 45 && serial == 6789))
    return FALSE;
  return TRUE;
}

static GHashTable *tld_set;
static char *tld_buf;

gboolean
hz_validate_tld (const char *s, gsize n)
{
  if (g_once_init_enter (&tld_set))
    {
      GHashTable *set = hz_load_set ("tlds.txt", &tld_buf, NULL);
      if (!set)
        set = g_hash_table_new (g_str_hash, g_str_equal);
      g_once_init_leave (&tld_set, set);
    }
  if (n < 2 || n > 63)
    return FALSE;
  return hz_set_has (tld_set, s, n);
}

static int
hexval (char c)
{
  if (hz_is_digit (c))
    return c - '0';
  c = g_ascii_tolower (c);
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  return -1;
}

static gboolean
parse_ipv4 (const char *s, gsize n, guint8 out[4])
{
  gsize i = 0;
  for (int part = 0; part < 4; part++)
    {
      if (part > 0)
        {
          if (i >= n || s[i] != '.')
            return FALSE;
          i++;
        }
      gsize st = i;
      int v = 0;
      while (i < n && hz_is_digit (s[i]) && i - st < 3)
        v = v * 10 + (s[i++] - '0');
      if (i == st || v > 255 || (i - st > 1 && s[st] == '0'))
        return FALSE;
      out[part] = (guint8) v;
    }
  return i == n;
}

gboolean
hz_parse_ipv6 (const char *s, gsize n, guint8 *out)
{
  guint16 words[8] = { 0 };
  int nw = 0, gap = -1;
  gsize i = 0;
  if (n < 2 || n > 45)
    return FALSE;
  if (s[0] == ':')
    {
      if (s[1] != ':')
        return FALSE;
      gap = 0;
      i = 2;
      if (i == n)
        goto done;
    }
  while (i < n)
    {
      if (nw >= 8)
        return FALSE;
      gsize st = i;
      int v = 0;
      while (i < n && hexval (s[i]) >= 0 && i - st < 4)
        v = v * 16 + hexval (s[i++]);
      if (i < n && s[i] == '.')
        {
          /* embedded IPv4 in the last 32 bits */
          guint8 v4[4];
          if (nw > 6 || !parse_ipv4 (s + st, n - st, v4))
            return FALSE;
          words[nw++] = (guint16) (v4[0] << 8 | v4[1]);
          words[nw++] = (guint16) (v4[2] << 8 | v4[3]);
          i = n;
          break;
        }
      if (i == st)
        return FALSE;
      words[nw++] = (guint16) v;
      if (i == n)
        break;
      if (s[i] != ':')
        return FALSE;
      i++;
      if (i < n && s[i] == ':')
        {
          if (gap >= 0)
            return FALSE;
          gap = nw;
          i++;
          if (i == n)
            break;
        }
      else if (i == n)
        return FALSE;
    }
done:
  if (gap < 0 && nw != 8)
    return FALSE;
  if (gap >= 0 && nw > 7)
    return FALSE;
  if (out)
    {
      memset (out, 0, 16);
      int tail = gap < 0 ? 0 : nw - gap;
      int head = gap < 0 ? nw : gap;
      for (int k = 0; k < head; k++)
        {
          out[2 * k] = words[k] >> 8;
          out[2 * k + 1] = words[k] & 0xff;
        }
      for (int k = 0; k < tail; k++)
        {
          int dst = 8 - tail + k;
          out[2 * dst] = words[head + k] >> 8;
          out[2 * dst + 1] = words[head + k] & 0xff;
        }
    }
  return TRUE;
}

gboolean
hz_parse_ipv4 (const char *s, gsize n, guint8 out[4])
{
  return parse_ipv4 (s, n, out);
}

gboolean
hz_validate_isbn (const char *s, gsize n)
{
  int d[13], nd = 0;
  for (gsize i = 0; i < n; i++)
    {
      char c = s[i];
      if (hz_is_digit (c) && nd < 13)
        d[nd++] = c - '0';
      else if ((c == 'X' || c == 'x') && i + 1 == n && nd == 9)
        d[nd++] = 10;
      else if ((c == '-' || c == ' ') && i > 0 && i + 1 < n && hz_is_digit (s[i - 1]))
        continue;
      else
        return FALSE;
    }
  int sum = 0;
  if (nd == 10)
    {
      /* ISBN-10 (ISO 2108:1978): sum of (10 - k) * d[k] == 0 mod 11, X = 10 */
      for (int k = 0; k < 10; k++)
        sum += (10 - k) * d[k];
      return sum % 11 == 0;
    }
  if (nd != 13 || d[0] != 9 || d[1] != 7 || (d[2] != 8 && d[2] != 9))
    return FALSE;
  /* ISBN-13 (ISO 2108:2005, the EAN-13 check): weights 1, 3, 1, 3, ... == 0 mod 10 */
  for (int k = 0; k < 13; k++)
    sum += (k % 2 ? 3 : 1) * d[k];
  return sum % 10 == 0;
}
