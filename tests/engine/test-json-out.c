/* tests/engine/test-json-out.c — common/hanzo/json-out.h: JSON text with every byte below 0x20
 * escaped inside strings, as RFC 8259 §7 (and Python's json.loads) require; json-glib
 * 1.6.6 leaves U+001F raw. */
#include <glib.h>
#include <string.h>

#include "hanzo/json-out.h"

/* Strict check: no raw byte below 0x20 inside a string literal (outside, only the white
 * space of pretty printing), and json-glib reads the text back. */
static void
assert_strict_json (const char *text)
{
  gboolean in_string = FALSE;
  for (const char *p = text; *p; p++)
    {
      const guchar c = (guchar) *p;
      if (in_string && c < 0x20)
        g_error ("raw byte 0x%02x at offset %td in a string of %s", c, p - text, text);
      if (!in_string && c < 0x20 && c != '\n' && c != '\t' && c != '\r')
        g_error ("raw byte 0x%02x at offset %td outside strings", c, p - text);
      if (in_string && c == '\\')
        p++;
      else if (c == '"')
        in_string = !in_string;
    }
  g_assert_false (in_string);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (json_parser_load_from_data (parser, text, -1, &error));
  g_assert_no_error (error);
}

/* Every control character in a member name and a value, pretty and compact: escaped, and
 * read back as the same string. */
static void
test_controls (void)
{
  char all[0x20 + 8];
  for (int i = 1; i < 0x20; i++)
    all[i - 1] = (char) i;
  strcpy (all + 0x1f, "\"\\\x7f\xc3\xa9");   /* quote, backslash, DEL, é */
  for (int pretty = 0; pretty < 2; pretty++)
    {
      g_autoptr (JsonBuilder) b = json_builder_new ();
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "k\x1f");
      json_builder_add_string_value (b, all);
      json_builder_set_member_name (b, "n");
      json_builder_begin_array (b);
      json_builder_add_string_value (b, "a\x1f" "b");
      json_builder_add_int_value (b, 31);
      json_builder_end_array (b);
      json_builder_end_object (b);
      g_autoptr (JsonNode) root = json_builder_get_root (b);
      g_autofree char *text = hz_json_node_to_string (root, pretty);
      assert_strict_json (text);
      g_assert_nonnull (strstr (text, "a\\u001fb"));

      g_autoptr (JsonParser) parser = json_parser_new ();
      g_assert_true (json_parser_load_from_data (parser, text, -1, NULL));
      JsonObject *o = json_node_get_object (json_parser_get_root (parser));
      g_assert_cmpstr (json_object_get_string_member (o, "k\x1f"), ==, all);

      g_autoptr (JsonGenerator) gen = json_generator_new ();
      json_generator_set_root (gen, root);
      json_generator_set_pretty (gen, pretty);
      gsize len = 0;
      g_autofree char *data = hz_json_generator_to_data (gen, &len);
      g_assert_cmpuint (len, ==, strlen (data));
      g_assert_cmpstr (data, ==, text);
    }
}

/* Text without raw controls in strings is returned unchanged (escapes such as \" and \\
 * before a quote do not confuse the scanner); raw ones are rewritten. */
static void
test_escape_controls (void)
{
  static const char *const same[] = {
    "{}", "\"\"", "[\"a\\\"\", \"\\\\\"]\n", "{\n  \"a\" : \"\\u0001\\n\"\n}", "",
  };
  for (gsize i = 0; i < G_N_ELEMENTS (same); i++)
    {
      gsize n = 0;
      g_autofree char *out = hz_json_escape_controls (same[i], -1, &n);
      g_assert_cmpstr (out, ==, same[i]);
      g_assert_cmpuint (n, ==, strlen (same[i]));
    }
  g_autofree char *a = hz_json_escape_controls ("[\"\\\\\x1f\",\n\"\x01\\\"\x1f\"]", -1, NULL);
  g_assert_cmpstr (a, ==, "[\"\\\\\\u001f\",\n\"\\u0001\\\"\\u001f\"]");
  /* a length that stops before the NUL */
  g_autofree char *b = hz_json_escape_controls ("\"\x1f\"xyz", 3, NULL);
  g_assert_cmpstr (b, ==, "\"\\u001f\"");
  /* json-glib 1.6's "1e-35.0" (an exponent, then ".0"): JSON again; other numbers and
   * strings that look like it untouched */
  g_autofree char *c = hz_json_escape_controls ("[1e-35.0,-2E+20.0,1.5e3,3.0,\"1e5.0\",true]",
                                                -1, NULL);
  g_assert_cmpstr (c, ==, "[1e-35,-2E+20,1.5e3,3.0,\"1e5.0\",true]");
  g_autoptr (JsonNode) d = json_node_init_double (json_node_alloc (), 1e-35);
  g_autofree char *e = hz_json_node_to_string (d, FALSE);
  g_autoptr (JsonNode) back = json_from_string (e, NULL);
  g_assert_nonnull (back);
  g_assert_cmpfloat (json_node_get_double (back), ==, 1e-35);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/json-out/controls", test_controls);
  g_test_add_func ("/json-out/escape-controls", test_escape_controls);
  return g_test_run ();
}
