/* tests/reference/pretok-table.c — print the engine's pre-tokenizer table
 * (engine/tokenizer-pretypes.c) as JSON on stdout, for tests/reference/pretok_reference.js:
 *
 *   [{"name": "qwen2", "regexes": ["..."], "nfc": true, "ignore_merges": false,
 *     "refused": null}, ...]
 *
 * so the reference builds its tokenizer.json files from the very regexes the engine runs. */
#include <stdio.h>
#include <json-glib/json-glib.h>
#include "hanzo/json-out.h"
#include "tokenizer-private.h"

int
main (void)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  gsize n;
  const HzPreInfo *t = hz_pre_infos (&n);

  json_builder_begin_array (b);
  for (gsize i = 0; i < n; i++)
    {
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "name");
      json_builder_add_string_value (b, t[i].name);
      json_builder_set_member_name (b, "regexes");
      json_builder_begin_array (b);
      for (gsize k = 0; t[i].regexes && t[i].regexes[k]; k++)
        json_builder_add_string_value (b, t[i].regexes[k]);
      json_builder_end_array (b);
      json_builder_set_member_name (b, "nfc");
      json_builder_add_boolean_value (b, (t[i].flags & HZ_PRE_NFC) != 0);
      json_builder_set_member_name (b, "ignore_merges");
      json_builder_add_boolean_value (b, (t[i].flags & HZ_PRE_IGNORE_MERGES) != 0);
      json_builder_set_member_name (b, "refused");
      if (t[i].refused)
        json_builder_add_string_value (b, t[i].refused);
      else
        json_builder_add_null_value (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  g_autoptr(JsonNode) root = json_builder_get_root (b);
  g_autofree char *text = hz_json_node_to_string (root, TRUE);
  fputs (text, stdout);
  fputc ('\n', stdout);
  return 0;
}
