/* tests/fuzz/redact-check.h — the invariants of an HzRedaction that the redactor fuzz
 * targets (fuzz-redact.c, fuzz-redact-model.c) check, and the redactor they share the
 * building of (header-only). */
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

/** The redactor of a redactor fuzz target: built with hz_redactor_new (NULL) on the first
 *  call, then `setup` (may be NULL) run on it, e.g. to install a model function; later
 *  calls return the same one (never freed). One per target program; not thread-safe. */
static inline HzRedactor *
redact_fuzz_redactor (void (*setup) (HzRedactor *redactor))
{
  static HzRedactor *redactor;
  if (!redactor)
    {
      redactor = hz_redactor_new (NULL);
      g_assert_nonnull (redactor);
      if (setup)
        setup (redactor);
    }
  return redactor;
}

/* Defines libFuzzer's LLVMFuzzerInitialize to build the target's redactor
 * (redact_fuzz_redactor (setup)) before libFuzzer starts its per-input timeout: under ASan
 * on a loaded machine the load alone (gazetteers, rules) took over the 10 s limit and was
 * reported as a timeout of the first input. LLVMFuzzerTestOneInput calls
 * redact_fuzz_redactor (setup) again, as run-corpus.c does not call LLVMFuzzerInitialize. */
#define REDACT_FUZZ_INITIALIZE(setup)                                                    \
  int LLVMFuzzerInitialize (int *argc, char ***argv);                                    \
  int                                                                                    \
  LLVMFuzzerInitialize (int *argc, char ***argv)                                         \
  {                                                                                      \
    redact_fuzz_redactor (setup);                                                        \
    return 0;                                                                            \
  }
