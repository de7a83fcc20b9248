/* tests/fuzz/fuzz-redact-records.c — libFuzzer target for the JSONL records of `hanzo redact
 * --jsonl/--eval/--pred` (tools/hanzo-redact-records.c): the input is a JSONL file; each
 * record's "text", "id" and "spans" are read as the CLI reads them.
 *
 * Invariants: a refused file carries an error naming the input and line; every accepted
 * span has 0 <= start < end, ends within the record's text (in code points) when the record
 * has one, and a known label. Any violation aborts. */
#include <glib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../tools/hanzo-redact-records.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define CHECK(cond)                                                                          \
  do {                                                                                       \
    if (!(cond))                                                                             \
      {                                                                                      \
        g_printerr ("fuzz-redact-records: invariant failed: %s (%s:%d)\n", #cond, __FILE__,  \
                    __LINE__);                                                               \
        abort ();                                                                            \
      }                                                                                      \
  } while (0)

static gboolean
check_record (JsonObject *o, gpointer user, GError **error)
{
  guint *n = user;
  const char *text, *id;
  g_autoptr (GArray) spans = NULL;
  if (!hz_eval_record_string (o, "text", &text, error) ||
      !hz_eval_record_string (o, "id", &id, error) || !hz_eval_record_spans (o, &spans, error))
    {
      CHECK (spans == NULL);
      return FALSE;
    }
  CHECK (text != NULL && id != NULL);
  const gint64 n_cp = json_object_has_member (o, "text") ? g_utf8_strlen (text, -1) : G_MAXINT64;
  for (guint i = 0; i < spans->len; i++)
    {
      const HzEvalSpan *s = &g_array_index (spans, HzEvalSpan, i);
      CHECK (0 <= s->s && s->s < s->e && s->e <= n_cp);
      CHECK (s->label >= 0 && s->label < HZ_EVAL_N_LABELS);
    }
  (*n)++;
  return TRUE;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  guint n = 0;
  GError *error = NULL;
  if (!hz_eval_for_each_record_in_data ((const char *) data, size, "input", check_record, &n,
                                        &error))
    {
      CHECK (error != NULL && g_str_has_prefix (error->message, "input:"));
      g_error_free (error);
    }
  return 0;
}
