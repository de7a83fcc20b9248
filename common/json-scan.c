/* common/json-scan.c — the brackets of JSON text found without parsing it (json-scan.h). */
#include "hanzo/json-scan.h"

/* Documented in json-scan.h. */
gsize
hz_json_bracket_scan (const char *s, gsize len, guint *max_depth)
{
  const gboolean opens = len > 0 && (s[0] == '{' || s[0] == '[');
  guint depth = 0, deepest = 0;
  gsize end = 0;
  gboolean in_str = FALSE;
  for (gsize i = 0; i < len; i++)
    {
      const char c = s[i];
      if (in_str)
        {
          if (c == '\\')
            i++;
          else if (c == '"')
            in_str = FALSE;
        }
      else if (c == '"')
        in_str = TRUE;
      else if (c == '{' || c == '[')
        {
          depth++;
          deepest = MAX (deepest, depth);
        }
      else if ((c == '}' || c == ']') && depth > 0 && --depth == 0 && opens && end == 0)
        {
          end = i + 1;
          if (max_depth == NULL)
            break;
        }
    }
  if (max_depth)
    *max_depth = deepest;
  return end;
}
