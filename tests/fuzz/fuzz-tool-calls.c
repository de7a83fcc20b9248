/* tests/fuzz/fuzz-tool-calls.c — libFuzzer target for the tool-call parsers
 * (engine/tool-calls.c): the first byte picks the format (mod the number of formats), the
 * second a cut, the rest is a model's reply, any bytes.
 *
 * Invariants: parsing never fails and gives content and calls, each call with a non-empty
 * name and arguments that json-glib reads as an object; without calls the content is the
 * reply byte for byte; for the cut, hz_tool_calls_content_prefix() releases at most the cut
 * and only text that the whole reply's content begins with (white space at its ends aside,
 * which the split trims when there are calls). Any violation aborts; GLib criticals abort
 * too (tools/fuzz.sh). */
#define FUZZ_NAME "fuzz-tool-calls"
#include <json-glib/json-glib.h>
#include <stdlib.h>
#include <string.h>

#include "hanzo/tool-calls.h"

#include "fuzz-check.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_check_init ();
  if (size < 2)
    return 0;
  const HzToolFormat f = (HzToolFormat) (data[0] % (HZ_TOOL_FORMAT_GIGACHAT + 1));
  /* the reply as the server has it: text without NUL bytes */
  g_autofree char *text = g_strndup ((const char *) data + 2, size - 2);
  const gsize n = strlen (text);
  const gsize cut = n == 0 ? 0 : data[1] % (n + 1);
  g_autofree char *content = NULL;
  g_autoptr (GPtrArray) calls = hz_tool_calls_parse (f, text, (gssize) n, &content);
  CHECK (calls != NULL && content != NULL);
  for (guint i = 0; i < calls->len; i++)
    {
      const HzToolCall *c = calls->pdata[i];
      CHECK (c->name && *c->name && c->arguments);
      g_autoptr (JsonParser) p = json_parser_new ();
      CHECK (json_parser_load_from_data (p, c->arguments, -1, NULL));
      CHECK (JSON_NODE_HOLDS_OBJECT (json_parser_get_root (p)));
    }
  if (calls->len == 0)
    CHECK (strcmp (content, text) == 0);
  const gsize k = hz_tool_calls_content_prefix (f, text, cut);
  CHECK (k <= cut);
  g_autofree char *released = g_strndup (text, k);
  const char *want = calls->len > 0 ? g_strstrip (released) : released;
  CHECK (g_str_has_prefix (content, want));
  return 0;
}
