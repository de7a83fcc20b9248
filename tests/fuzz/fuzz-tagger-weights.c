/* tests/fuzz/fuzz-tagger-weights.c — libFuzzer target for the PERSON tagger's weights file
 * (redactor/hz-tagger.c, hz_tagger_new_from_bytes(); layout in redactor/hz-tagger.h), the
 * file `HZ_REDACT_PERSON_TAGGER=FILE` and hz_redactor_load_person_tagger() read. The input is
 *   flags byte, file bytes
 * With bit 0 of the flags set, the target first writes the correct SHA-256 into a file long
 * enough for a header (the checksum covers the header fields before it and the payload), so
 * that mutations reach the field checks, the bitmap and tagging; without it, the checksum
 * must refuse every change of a valid file.
 *
 * Invariants: a refused file gives G_IO_ERROR_INVALID_DATA with a message naming the
 * weights; an accepted file gives a tagger whose header fields are in range and finite, that
 * serialises nothing (it has no float weights) and whose every bucket maps to a row within
 * the table; installed in a redactor, it tags fixed texts (names, places, chat style, ALL
 * CAPS, '@', invalid UTF-8) with spans that keep redact-check.h's invariants. Any violation
 * aborts. */
#include <glib.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "hz-redact.h"
#include "hz-tagger.h"
#include "redact-check.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static const char *const texts[] = {
  "Jens Quenby met Maria Lopez in Hesse, Germany, and played for the Boston Bruins.",
  "RT @ MissVarlow : thanks @Jos\xc3\xa9_M , see you @5pm lol",
  "WHY DID KENDRA LEAVE THE SHOW , SO SAD",
  "marisol quenby arrived late. Everyone waited for Quenby, and Quenby said sorry.",
  "Bo\xff Lee met Dr. Kyle Kuefer \xf0\x9f\x98\x80 and Clay Tice Jr. in Salem, Oregon",
};

REDACT_FUZZ_INITIALIZE (NULL)

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  HzRedactor *redactor = redact_fuzz_redactor (NULL);
  if (size == 0)
    return 0;
  gsize n = size - 1;
  guint8 *file = g_memdup2 (data + 1, n);
  if ((data[0] & 1) && n >= HZ_TAGGER_HEADER)
    hz_tagger_checksum (file, n, file + HZ_TAGGER_OFF_SHA);
  GBytes *bytes = g_bytes_new_take (file, n);
  GError *error = NULL;
  HzTagger *t = hz_tagger_new_from_bytes (bytes, &error);
  g_bytes_unref (bytes);
  if (!t)
    {
      g_assert_true (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA));
      g_assert_nonnull (strstr (error->message, "person tagger weights"));
      g_error_free (error);
      return 0;
    }
  g_assert_no_error (error);
  g_assert_true (t->bucket_bits >= 8 && t->bucket_bits <= 22);
  g_assert_true (t->scope <= HZ_TAGGER_SCOPE_SOCIAL && t->veto <= HZ_TAGGER_VETO_X);
  g_assert_true (isfinite (t->o_bias) && isfinite (t->prose_bias) && isfinite (t->veto_margin));
  g_assert_true (isfinite (t->scale) && t->scale > 0);
  for (int k = 0; k < (HZ_TAG_N + 1) * HZ_TAG_N; k++)
    g_assert_true (isfinite (t->trans[k]));
  g_assert_null (t->w);
  for (guint32 b = 0; b < (1u << t->bucket_bits); b++)
    g_assert_cmpuint (hz_tagger_row (t, b), <=, t->n_rows);
  hz_redactor_take_tagger (redactor, t);
  for (gsize i = 0; i < G_N_ELEMENTS (texts); i++)
    {
      HzRedaction *res = hz_redactor_analyze (redactor, texts[i], -1, HZ_REDACT_UTF8_REPLACE, NULL);
      g_assert_nonnull (res);
      redact_check_spans (res);
      hz_redaction_free (res);
    }
  hz_redactor_take_tagger (redactor, NULL);
  return 0;
}
