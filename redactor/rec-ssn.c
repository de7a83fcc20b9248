/* rec-ssn.c — US_SSN: AAA-GG-SSSS or AAA GG SSSS (one separator used twice), or nine
 * contiguous digits after a whole-word context cue ("ssn", "social security"); the SSA
 * area/group/serial rules are checked by hz_validate_us_ssn. */
#include "hz-recognizers.h"


static int
num (const char *s, int n)
{
  int v = 0;
  for (int i = 0; i < n; i++)
    v = v * 10 + (s[i] - '0');
  return v;
}

static gboolean
digits_at (const char *t, gsize len, gsize p, int n)
{
  if (p + n > len)
    return FALSE;
  for (int i = 0; i < n; i++)
    if (!hz_is_digit (t[p + i]))
      return FALSE;
  return TRUE;
}

void
hz_rec_ssn (HzScan *scan)
{
  if (!scan->r->enabled[HZ_ENTITY_US_SSN] || !hz_scan_has_digits (scan))
    return;
  const char *t = scan->text;
  gsize len = scan->len;
  for (gsize i = 0; i + 9 <= len; i++)
    {
      if (!hz_is_digit (t[i]) || hz_alnum_before (t, i) || (i > 0 && (t[i - 1] == '-' || t[i - 1] == '.')))
        continue;
      gsize e = 0;
      int a = 0, g = 0, s = 0;
      gboolean sep = FALSE;
      if (digits_at (t, len, i, 3) && i + 11 <= len && (t[i + 3] == '-' || t[i + 3] == ' ')
          && t[i + 6] == t[i + 3] && digits_at (t, len, i + 4, 2) && digits_at (t, len, i + 7, 4))
        {
          e = i + 11;
          sep = TRUE;
          a = num (t + i, 3), g = num (t + i + 4, 2), s = num (t + i + 7, 4);
        }
      else if (digits_at (t, len, i, 9))
        {
          e = i + 9;
          a = num (t + i, 3), g = num (t + i + 3, 2), s = num (t + i + 5, 4);
        }
      else
        continue;
      if (hz_alnum_at (t, len, e) || (e + 1 < len && (t[e] == '-' || t[e] == '.') && hz_is_digit (t[e + 1])))
        continue;
      if (!hz_validate_us_ssn (a, g, s))
        continue;
      guint ti = hz_token_at_or_after (scan, i);
      gboolean ctx = hz_context_before (scan, ti, 5, HZ_W_SSN_CUE);
      if (!sep && !ctx)
        continue;
      hz_scan_add (scan, i, e, HZ_ENTITY_US_SSN, ctx ? 1.0f : 0.85f,
                   sep ? HZ_TIER_VALIDATED : HZ_TIER_PATTERN, "ssn");
      i = e - 1;
    }
}
