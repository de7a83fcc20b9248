/* tests/fuzz/fuzz-redact-model.c — libFuzzer target for the redactor's model pass
 * (redactor/rec-model.c): what a prompted local model answers is read as a JSON array of
 * spans ([{"label", "text", "start"}], possibly wrapped in prose) or as lines
 * "LABEL: text", and every span is verified against the text. The input is
 *   selector byte, answer
 * where the selector picks one of the fixed texts below (shapes of
 * text the verification must get right: repeated and differently cased names, word
 * boundaries, multi-byte characters, invalid UTF-8 and NUL bytes, no text), so that the
 * corpus grows with the answers the parser reads rather than with the rules' coverage of
 * texts, which fuzz-redact.c explores. The answer is what the model function installed
 * with hz_redactor_set_model() returns (up to its first NUL, as a C string; invalid UTF-8
 * included).
 *
 * Invariants: the model function is asked once per analysis, and the result's spans are
 * valid (redact-check.h: in bounds, on character boundaries, sorted, disjoint) whatever
 * the model said. Any violation aborts. */
#include <glib.h>
#include <stdint.h>
#include <string.h>

#include "hanzo/redact.h"
#include "redact-check.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* The texts (`len` bytes, NULs and invalid UTF-8 included); gen-fuzz-corpus.c's seeds
 * pick them by index. */
typedef struct {
  const char *text;
  gsize       len;
} FuzzText;
#define TEXT(s) { s, sizeof s - 1 }
static const FuzzText texts[] = {
  TEXT ("Ann Lee met Bo at 12 Elm Street, Springfield on 3 May 2021; mail ann@example.org, "
        "call +1 555 0100. Gr\xc3\xbc\xc3\x9f" "e von J\xc3\xbcrgen Gro\xc3\x9f aus M\xc3\xbcnchen."),
  TEXT ("Ann ann ANN Annabel Ann-Lee Lee,Ann (Ann) Ann's xAnn Ann"),
  TEXT ("Bo\xff Lee\0 met Bo at \xc3\x9cn\xc3\xaf" "code \xe6\x97\xa5\xe6\x9c\xac "
        "\xe6\x9d\xb1\xe4\xba\xac Bo \xf0\x9f\x98\x80 Bo\xc3"),
  TEXT (""),
};
#undef TEXT

typedef struct {
  const char *answer;   /* NUL-terminated */
  guint       calls;
} ModelAnswer;

static ModelAnswer current;

static char *
fixed_model (const char *prompt, gpointer user_data, GError **error)
{
  ModelAnswer *a = user_data;
  g_assert_nonnull (prompt);
  a->calls++;
  return g_strdup (a->answer);
}

/* The target's redactor answers its model pass with fixed_model (the input's answer). */
static void
install_model (HzRedactor *redactor)
{
  hz_redactor_set_model (redactor, fixed_model, &current, NULL);
}

REDACT_FUZZ_INITIALIZE (install_model)

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  HzRedactor *redactor = redact_fuzz_redactor (install_model);
  if (size == 0)
    return 0;
  const FuzzText *t = &texts[data[0] % G_N_ELEMENTS (texts)];
  g_autofree char *answer = g_strndup ((const char *) data + 1, size - 1);
  current.answer = answer;
  current.calls = 0;
  HzRedaction *res = hz_redactor_analyze (redactor, t->text, t->len,
                                          HZ_REDACT_UTF8_REPLACE | HZ_REDACT_MODEL, NULL);
  g_assert_nonnull (res);
  g_assert_cmpuint (current.calls, ==, 1);
  redact_check_spans (res);
  hz_redaction_free (res);
  return 0;
}
