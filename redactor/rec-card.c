/* rec-card.c — CREDIT_CARD: 12-19 digits, contiguous or in groups separated by one space or
 * hyphen (or a dot between groups of four), accepted only with a known issuer range and a valid Luhn digit
 * (hz_validate_card_digits). Epoch timestamps and other Luhn-valid numbers outside the
 * issuer ranges are therefore rejected. */
#include "hz-recognizers.h"


void
hz_rec_card (HzScan *scan)
{
  if (!scan->r->enabled[HZ_ENTITY_CREDIT_CARD] || !hz_scan_has_digits (scan))
    return;
  const char *t = scan->text;
  gsize len = scan->len, i = 0;
  while (i < len)
    {
      if (!hz_is_digit (t[i]) || hz_alnum_before (t, i))
        {
          i++;
          continue;
        }
      char digits[20];
      gsize nd = 0, p = i, best_e = 0;
      char sep = 0;
      while (p < len)
        {
          gsize gs = p;
          while (p < len && hz_is_digit (t[p]) && nd < 20)
            digits[nd++] = t[p++];
          if (p < len && hz_is_digit (t[p]))
            break; /* more than 19 digits */
          gsize gl = p - gs;
          if (gl == 0)
            break;
          if (nd >= 12 && !hz_alnum_at (t, len, p) && hz_validate_card_digits (digits, nd))
            best_e = p;
          /* one separator throughout: a space or hyphen, or a dot between groups of four
           * ("4111.1111.1111.1111") */
          if (p + 1 < len && (t[p] == ' ' || t[p] == '-' || (t[p] == '.' && gl == 4)) && hz_is_digit (t[p + 1])
              && (sep == 0 || sep == t[p]) && gl >= 3)
            {
              sep = t[p];
              p++;
            }
          else
            break;
        }
      if (best_e)
        {
          guint ti = hz_token_at_or_after (scan, i);
          float score = hz_context_before (scan, ti, 4, HZ_W_CARD_CUE) ? 1.0f : 0.9f;
          hz_scan_add (scan, i, best_e, HZ_ENTITY_CREDIT_CARD, score, HZ_TIER_VALIDATED, "card-luhn");
          i = best_e;
        }
      else
        {
          while (i < len && hz_is_digit (t[i]))
            i++;
        }
    }
}
