/* tests/fuzz/redact-check.h — the invariants of an HzRedaction that the redactor fuzz
 * targets (fuzz-redact.c, fuzz-redact-model.c) check (header-only). */
#pragma once

#include <glib.h>

#include "hanzo/redact.h"

/** Asserts that `res` is valid UTF-8 and its spans are in bounds, on character boundaries,
 *  sorted, disjoint, with code-point offsets that match the byte offsets and scores in
 *  (0, 1]. */
static inline void
redact_check_spans (const HzRedaction *res)
{
  g_assert_true (g_utf8_validate_len (res->text, res->len, NULL));
  gsize prev = 0, cp = 0;
  for (guint i = 0; i < res->n_spans; i++)
    {
      const HzSpan *s = &res->spans[i];
      g_assert_true (s->start_byte >= prev && s->start_byte < s->end_byte && s->end_byte <= res->len);
      /* on character boundaries: a boundary byte is never a UTF-8 continuation byte */
      g_assert_true ((((guchar) res->text[s->start_byte]) & 0xC0) != 0x80);
      g_assert_true (s->end_byte == res->len || (((guchar) res->text[s->end_byte]) & 0xC0) != 0x80);
      cp += g_utf8_strlen (res->text + prev, s->start_byte - prev);
      g_assert_cmpuint (cp, ==, s->start_cp);
      cp += g_utf8_strlen (res->text + s->start_byte, s->end_byte - s->start_byte);
      g_assert_cmpuint (cp, ==, s->end_cp);
      g_assert_true (s->score > 0 && s->score <= 1);
      prev = s->end_byte;
    }
}
