/* common/json-out.c — json-glib output with every control character escaped and numbers
 * with exponents written as JSON (json-out.h). */
#include "hanzo/json-out.h"

#include <string.h>

char *
hz_json_escape_controls (const char *json, gssize len, gsize *out_len)
{
  g_return_val_if_fail (json != NULL || len == 0, NULL);
  const gsize n = len < 0 ? strlen (json) : (gsize) len;
  GString *out = NULL;   /* made at the first byte to escape */
  gsize copied = 0;      /* bytes of `json` already in `out` */
  gboolean in_string = FALSE;
  for (gsize i = 0; i < n; i++)
    {
      const guchar c = (guchar) json[i];
      if (!in_string && (c == '-' || g_ascii_isdigit (c)))
        {
          /* a number: json-glib 1.6 writes a double without a '.' (1e-35) with ".0" after
           * it, also after an exponent ("1e-35.0", not JSON): that ".0" is dropped */
          gsize end = i, exp = 0;
          while (end < n && strchr ("0123456789.eE+-", json[end]) && json[end] != '\0')
            {
              if ((json[end] == 'e' || json[end] == 'E') && exp == 0)
                exp = end;
              end++;
            }
          if (exp && end - exp > 2 && json[end - 2] == '.' && json[end - 1] == '0'
              && memchr (json + exp, '.', end - 2 - exp) == NULL)
            {
              if (!out)
                out = g_string_sized_new (n + 16);
              g_string_append_len (out, json + copied, (gssize) (end - 2 - copied));
              copied = end;
            }
          i = end - 1;
        }
      else if (!in_string)
        in_string = c == '"';
      else if (c == '\\')
        i++;   /* an escape: its next byte cannot end the string */
      else if (c == '"')
        in_string = FALSE;
      else if (c < 0x20)
        {
          if (!out)
            out = g_string_sized_new (n + 16);
          g_string_append_len (out, json + copied, (gssize) (i - copied));
          g_string_append_printf (out, "\\u%04x", c);
          copied = i + 1;
        }
    }
  if (!out)
    {
      if (out_len)
        *out_len = n;
      return g_strndup (json ? json : "", n);
    }
  g_string_append_len (out, json + copied, (gssize) (n - copied));
  if (out_len)
    *out_len = out->len;
  return g_string_free (out, FALSE);
}

char *
hz_json_generator_to_data (JsonGenerator *gen, gsize *length)
{
  g_return_val_if_fail (JSON_IS_GENERATOR (gen), NULL);
  gsize n = 0;
  g_autofree char *raw = json_generator_to_data (gen, &n);
  return hz_json_escape_controls (raw, (gssize) n, length);
}

char *
hz_json_node_to_string (JsonNode *node, gboolean pretty)
{
  g_return_val_if_fail (node != NULL, NULL);
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  json_generator_set_root (gen, node);
  json_generator_set_pretty (gen, pretty);
  return hz_json_generator_to_data (gen, NULL);
}
