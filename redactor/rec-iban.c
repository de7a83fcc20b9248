/* rec-iban.c — IBAN: country code, check digits and BBAN, contiguous or in groups of four
 * separated by single spaces, either case; validated by hz_validate_iban (ISO 13616
 * per-country length and ISO 7064 mod 97). */
#include "hz-redact-private.h"

void
hz_rec_iban (HzScan *scan)
{
  if (!scan->r->enabled[HZ_ENTITY_IBAN] || !hz_scan_has_digits (scan))
    return;
  const char *t = scan->text;
  gsize len = scan->len;
  for (gsize i = 0; i + 15 <= len; i++)
    {
      if (!hz_is_alpha_ascii (t[i]) || !hz_is_alpha_ascii (t[i + 1]) || !hz_is_digit (t[i + 2])
          || !hz_is_digit (t[i + 3]) || hz_alnum_before (t, i))
        continue;
      int want = hz_iban_country_length (t + i);
      if (want == 0)
        continue;
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
      if (n != want || hz_alnum_at (t, len, p))
        continue;
      if (hz_validate_iban (t + i, p - i))
        {
          hz_scan_add (scan, i, p, HZ_ENTITY_IBAN, 1.0f, HZ_TIER_VALIDATED, "iban-mod97");
          i = p - 1;
        }
    }
}
