/* tests/fuzz/fuzz-json-schema.c — libFuzzer target for the JSON schema compiler of
 * constrained output (engine/json-schema.c, hz_json_schema_compile(): what a client of
 * `hanzo serve` sends as response_format's schema) and the automaton it drives
 * (engine/json-constrain.c). The input is the schema text, any bytes.
 *
 * Invariants: a refused schema has an HZ_JSON_SCHEMA_ERROR with a message (and for
 * UNSUPPORTED the keyword named in it, when one is returned); an accepted one has a
 * shortest text of at least one byte, and a constrained generation over a vocabulary of
 * the 256 single bytes, a few multi-byte pieces and an end token, choosing tokens from the
 * input's bytes with a budget of the shortest text plus up to 63 tokens, always ends with
 * a complete text that json-glib parses. Any violation aborts; GLib criticals abort too
 * (tools/fuzz.sh). */
#include <json-glib/json-glib.h>
#include <stdlib.h>
#include <string.h>

#include "json-constrain.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define CHECK(cond)                                                                          \
  do {                                                                                       \
    if (!(cond))                                                                             \
      {                                                                                      \
        g_printerr ("fuzz-json-schema: invariant failed: %s (%s:%d)\n", #cond, __FILE__,      \
                    __LINE__);                                                               \
        abort ();                                                                            \
      }                                                                                      \
  } while (0)

static const char *const pieces_extra[] = {
  "{\"", "\":", "\",", "\"}", "true", "null", "12", "\\u00e9", "caf\xc3\xa9", "  ", "\n",
};
enum { N_EXTRA = G_N_ELEMENTS (pieces_extra), N_TOKENS = 256 + N_EXTRA + 1 };

static HzJsonVocab *
vocab (void)
{
  static HzJsonVocab *v;
  if (v == NULL)
    {
      char bytes[256];
      const char *pieces[N_TOKENS];
      gsize lens[N_TOKENS];
      gboolean eog[N_TOKENS] = { 0 };
      for (guint i = 0; i < 256; i++)
        {
          bytes[i] = (char) i;
          pieces[i] = bytes + i;
          lens[i] = 1;
        }
      for (guint i = 0; i < N_EXTRA; i++)
        {
          pieces[256 + i] = pieces_extra[i];
          lens[256 + i] = strlen (pieces_extra[i]);
        }
      pieces[N_TOKENS - 1] = "";
      lens[N_TOKENS - 1] = 0;
      eog[N_TOKENS - 1] = TRUE;
      v = hz_json_vocab_new (pieces, lens, N_TOKENS, eog);
    }
  return v;
}

/* Allowed token number k % count of the mask. */
static guint
pick (const guint64 *mask, guint count, guint k)
{
  k %= count;
  for (guint t = 0; t < N_TOKENS; t++)
    if ((mask[t / 64] >> (t % 64) & 1) && k-- == 0)
      return t;
  CHECK (FALSE);
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *keyword = NULL;
  g_autoptr (HzJsonSchema) schema = hz_json_schema_compile ((const char *) data, (gssize) size,
                                                           &keyword, &error);
  if (schema == NULL)
    {
      CHECK (error != NULL && error->domain == HZ_JSON_SCHEMA_ERROR && *error->message);
      CHECK (keyword == NULL || strstr (error->message, keyword) != NULL);
      CHECK (keyword == NULL || error->code == HZ_JSON_SCHEMA_ERROR_UNSUPPORTED);
      return 0;
    }
  CHECK (error == NULL && keyword == NULL);
  const guint min = hz_json_schema_min_bytes (schema);
  CHECK (min >= 1);
  if (min > 4096)
    return 0;
  HzJsonVocab *v = vocab ();
  g_autoptr (HzJsonState) st = hz_json_state_new (schema);
  CHECK (hz_json_state_close_bytes (st) == min);
  guint64 mask[(N_TOKENS + 63) / 64];
  const guint budget = min + (size ? data[0] % 64 : 0);
  g_autoptr (GString) text = g_string_new (NULL);
  for (guint i = 0; i < budget; i++)
    {
      const guint count = hz_json_mask (v, st, budget - i, mask);
      CHECK (count > 0);   /* every byte is a token: the text can always close in time */
      const guint t = pick (mask, count, size ? data[(i * 7 + 1) % size] * 131u + i : i);
      CHECK (hz_json_state_accept (st, v, (HzToken) t));
      if (t == N_TOKENS - 1)
        break;
      g_string_append (text, t < 256 ? (char[]) { (char) t, 0 } : pieces_extra[t - 256]);
      if (t == 0)
        g_string_append_c (text, '\0');   /* NUL is never allowed: caught below */
    }
  CHECK (hz_json_state_complete (st));
  CHECK (strlen (text->str) == text->len);
  g_autoptr (JsonParser) p = json_parser_new ();
  CHECK (json_parser_load_from_data (p, text->str, (gssize) text->len, NULL));
  return 0;
}
