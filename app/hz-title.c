/* hz-title.c — model-written conversation titles (see hz-title.h). */
#include "hz-title.h"

#include <string.h>

#define PROMPT_EXCERPT_CHARS 400  /* the prompt fits the worker's 512-token title context */

static char *
excerpt (const char *text)
{
  if (text == NULL)
    return g_strdup ("");
  if (!g_utf8_validate (text, -1, NULL))
    return g_utf8_make_valid (text, -1);
  if (g_utf8_strlen (text, -1) <= PROMPT_EXCERPT_CHARS)
    return g_strdup (text);
  g_autofree char *cut = g_utf8_substring (text, 0, PROMPT_EXCERPT_CHARS);
  return g_strconcat (cut, "…", NULL);
}

char *
hz_title_prompt (const char *user, const char *assistant)
{
  g_autofree char *u = excerpt (user);
  g_autofree char *a = excerpt (assistant);

  /* The instruction stays in English: it is read by the model, not shown to the user, and
   * the model answers in the conversation's language when told so. */
  return g_strdup_printf ("Write a short title (at most six words) for the conversation "
                          "below, in the language of the conversation. Reply with the "
                          "title only, no quotes, no explanation.\n\n"
                          "User: %s\n\nAssistant: %s", u, a);
}

/* Characters stripped from both ends of the line. */
static gboolean
is_trim_char (gunichar c)
{
  return g_unichar_isspace (c) || strchr ("\"'`*_#>.:;,!-", c) != NULL ||
         c == 0x201C || c == 0x201D || c == 0x2018 || c == 0x2019 ||  /* “ ” ‘ ’ */
         c == 0x00AB || c == 0x00BB || c == 0x201E || c == 0x2026;    /* « » „ … */
}

static const char *const refusals[] = {
  "title only", "as an ai", "i cannot", "i can't", "i'm sorry", "conversation below",
  "user:", "assistant:",
};

char *
hz_title_sanitize (const char *raw)
{
  if (raw == NULL || !g_utf8_validate (raw, -1, NULL))
    return NULL;

  /* first line with text */
  g_auto(GStrv) lines = g_strsplit (raw, "\n", -1);
  const char *line = NULL;
  for (guint i = 0; lines[i] != NULL && line == NULL; i++)
    {
      g_strstrip (lines[i]);
      if (*lines[i] != '\0')
        line = lines[i];
    }
  if (line == NULL)
    return NULL;

  /* drop a "Title:" label */
  if (g_ascii_strncasecmp (line, "title:", 6) == 0)
    line += 6;
  else if (g_ascii_strncasecmp (line, "**title:**", 10) == 0)
    line += 10;

  /* collapse whitespace, refuse control characters, count letters */
  GString *s = g_string_new (NULL);
  guint letters = 0;
  gboolean space = FALSE;
  for (const char *p = line; *p; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);
      if (g_unichar_isspace (c))
        {
          space = s->len > 0;
          continue;
        }
      if (g_unichar_iscntrl (c) || g_unichar_type (c) == G_UNICODE_FORMAT)
        {
          g_string_free (s, TRUE);
          return NULL;
        }
      if (space)
        g_string_append_c (s, ' ');
      space = FALSE;
      g_string_append_unichar (s, c);
      letters += g_unichar_isalpha (c);
    }
  g_autofree char *text = g_string_free (s, FALSE);

  /* trim quotes, emphasis, heading marks and punctuation at both ends */
  char *start = text;
  while (*start && is_trim_char (g_utf8_get_char (start)))
    start = g_utf8_next_char (start);
  char *end = start + strlen (start);
  while (end > start)
    {
      char *prev = g_utf8_find_prev_char (start, end);
      if (prev == NULL || !is_trim_char (g_utf8_get_char (prev)))
        break;
      end = prev;
    }
  *end = '\0';
  if (letters < 2 || g_utf8_strlen (start, -1) < 2)
    return NULL;

  g_autofree char *lower = g_utf8_strdown (start, -1);
  for (guint i = 0; i < G_N_ELEMENTS (refusals); i++)
    if (strstr (lower, refusals[i]) != NULL)
      return NULL;

  if (g_utf8_strlen (start, -1) <= HZ_TITLE_MAX_CHARS)
    return g_strdup (start);
  /* cut at the last space within the limit (leaving room for the ellipsis) */
  g_autofree char *cut = g_utf8_substring (start, 0, HZ_TITLE_MAX_CHARS - 1);
  char *sp = strrchr (cut, ' ');
  if (sp != NULL && g_utf8_strlen (cut, sp - cut) >= HZ_TITLE_MAX_CHARS / 2)
    *sp = '\0';
  g_strchomp (cut);
  return g_strconcat (cut, "…", NULL);
}

char *
hz_title_from_text (const char *text)
{
  g_autofree char *line = g_strdup (text);
  char *nl = strchr (line, '\n');
  if (nl)
    *nl = '\0';
  g_strstrip (line);
  if (g_utf8_strlen (line, -1) <= HZ_TITLE_FIRST_LINE_CHARS)
    return g_steal_pointer (&line);
  g_autofree char *cut = g_utf8_substring (line, 0, HZ_TITLE_FIRST_LINE_CHARS - 1);
  g_strchomp (cut);
  return g_strconcat (cut, "…", NULL);
}
