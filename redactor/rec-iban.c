/* rec-iban.c — IBAN: country code, check digits and BBAN, contiguous or in groups of four
 * separated by single spaces, either case; validated by hz_validate_iban (ISO 13616
 * per-country length and ISO 7064 mod 97). */
#include "hz-recognizers.h"

/* An IBAN starting at byte i (not after a letter or digit): add it when it validates and
 * return its end, else 0. */
static gsize
iban_at (HzScan *scan, gsize i)
{
  const char *t = scan->text;
  gsize len = scan->len;
  if (i + 15 > len || !hz_is_alpha_ascii (t[i]) || !hz_is_alpha_ascii (t[i + 1]) || !hz_is_digit (t[i + 2])
      || !hz_is_digit (t[i + 3]) || hz_alnum_before (t, i))
    return 0;
  int want = hz_iban_country_length (t + i);
  if (want == 0)
    return 0;
  gsize p = i;
  int n = 0;
  while (p < len && n < want)
    {
      if (hz_is_alnum_ascii (t[p]))
        {
          n++;
          p++;
        }
      else if (t[p] == ' ' && n % 4 == 0 && p + 1 < len && hz_is_alnum_ascii (t[p + 1]))
        p++;
      else
        break;
    }
  if (n != want || hz_alnum_at (t, len, p) || !hz_validate_iban (t + i, p - i))
    return 0;
  hz_scan_add (scan, i, p, HZ_ENTITY_IBAN, 1.0f, HZ_TIER_VALIDATED, "iban-mod97");
  return p;
}

void
hz_rec_iban (HzScan *scan)
{
  if (!scan->r->enabled[HZ_ENTITY_IBAN] || !hz_scan_has_digits (scan))
    return;
  const char *t = scan->text;
  /* an IBAN begins a word: at a token start, or after a hyphen or apostrophe inside one */
  gsize done = 0;
  for (guint k = 0; k < scan->n_toks; k++)
    {
      const HzToken *tk = &scan->toks[k];
      for (gsize i = tk->s; i < tk->e; i++)
        {
          if (i >= done)
            {
              gsize e = iban_at (scan, i);
              if (e)
                done = e;
            }
          while (i + 1 < tk->e && t[i] != '-' && t[i] != '\'')
            i++; /* to the next hyphen or apostrophe; the loop then tries the byte after it */
        }
    }
}
