/* tools/hanzo-cli-util.c — safe echoes and model-load messages (hanzo-cli-util.h). */
#include "hanzo-cli-util.h"

#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

char *
hz_cli_escape (const char *s)
{
  GString *out = g_string_new (NULL);
  const char *p = s ? s : "", *end = p + strlen (p);
  while (p < end)
    {
      gunichar c = g_utf8_get_char_validated (p, end - p);
      if (c == (gunichar) -1 || c == (gunichar) -2)
        {
          g_string_append_printf (out, "\\x%02x", (guchar) *p++);
          continue;
        }
      const char *next = g_utf8_next_char (p);
      if (c == '\n')
        g_string_append (out, "\\n");
      else if (c == '\t')
        g_string_append (out, "\\t");
      else if (c < 0x80 && g_unichar_iscntrl (c))
        g_string_append_printf (out, "\\x%02x", c);
      else if (g_unichar_iscntrl (c) || g_unichar_type (c) == G_UNICODE_FORMAT)
        g_string_append_printf (out, "\\u{%04x}", c);
      else
        g_string_append_len (out, p, next - p);
      p = next;
    }
  return g_string_free (out, FALSE);
}

void
hz_cli_print_error (const char *cmd, const char *message)
{
  g_autofree char *shown = hz_cli_escape (message);
  fprintf (stderr, "hanzo %s: %s\n", cmd, shown);
}

void
hz_cli_print_load_error (const char *cmd, const char *path, const GError *error)
{
  GStatBuf st;
  const char *reason = error ? error->message : "failed";
  gsize n = strlen (path);
  if (strncmp (reason, path, n) == 0 && reason[n] == ':' && reason[n + 1] == ' ')
    reason += n + 2;
  if (g_stat (path, &st) == 0 && S_ISREG (st.st_mode) && st.st_size == 0)
    reason = "the file is empty";
  g_autofree char *p = hz_cli_escape (path);
  g_autofree char *r = hz_cli_escape (reason);
  fprintf (stderr, "hanzo %s: cannot load model '%s': %s\n", cmd, p, r);
}
