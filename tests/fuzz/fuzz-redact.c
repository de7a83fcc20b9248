/* tests/fuzz/fuzz-redact.c — libFuzzer target for libhzredact: arbitrary bytes (invalid
 * UTF-8, NULs, very long lines) through analysis and all three scrub modes. Checks that
 * every span is in bounds, on character boundaries, sorted and disjoint, that code-point
 * offsets match byte offsets, and that masking keeps the text outside spans. */
#include <glib.h>
#include <stdint.h>
#include <string.h>

#include "hanzo/redact.h"
#include "redact-check.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

REDACT_FUZZ_INITIALIZE (NULL)

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  HzRedactor *redactor = redact_fuzz_redactor (NULL);
  HzRedaction *res = hz_redactor_analyze (redactor, (const char *) data, size, HZ_REDACT_UTF8_REPLACE, NULL);
  g_assert_nonnull (res);
  redact_check_spans (res);
  /* carrying a "known" surface into the text (the gate does this with its vault) keeps
   * the invariants: use the first word of the text */
  {
    gsize a = 0, b;
    while (a < res->len && !g_ascii_isalnum (res->text[a]))
      a++;
    for (b = a; b < res->len && b - a < 16 && g_ascii_isalnum (res->text[b]); b++)
      ;
    if (b > a)
      {
        char *w = g_strndup (res->text + a, b - a);
        hz_redaction_mark_known (res, w, HZ_ENTITY_PERSON);
        g_free (w);
        redact_check_spans (res);
      }
  }
  for (int mode = HZ_SCRUB_MASK; mode <= HZ_SCRUB_PSEUDONYM; mode++)
    {
      HzScrubber *sc = hz_scrubber_new (mode, 7);
      char *out = hz_scrubber_scrub (sc, res);
      g_assert_nonnull (out);
      if (res->n_spans == 0)
        g_assert_cmpstr (out, ==, res->text);
      else if (mode == HZ_SCRUB_MASK)
        {
          /* the text before the first span and after the last is kept byte for byte */
          g_assert_cmpint (strncmp (out, res->text, res->spans[0].start_byte), ==, 0);
          gsize tail = res->len - res->spans[res->n_spans - 1].end_byte;
          g_assert_cmpint (strcmp (out + strlen (out) - tail, res->text + res->len - tail), ==, 0);
        }
      g_free (out);
      hz_scrubber_free (sc);
    }
  hz_redaction_free (res);
  return 0;
}
