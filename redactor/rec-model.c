/* rec-model.c — the optional model-based pass: a prompted local model (hz_redactor_set_model)
 * lists the personal data it sees as "LABEL: exact text" lines; each line is verified
 * against the text (known, enabled label; the text occurs as whole words) before its
 * occurrences become candidates. A model can add recall (names the gazetteers miss) but
 * never invent spans: what is not in the text is dropped. */
#include "hz-redact-private.h"

#include <string.h>

static const HzEntityType model_types[] = {
  HZ_ENTITY_PERSON, HZ_ENTITY_LOCATION, HZ_ENTITY_STREET_ADDRESS, HZ_ENTITY_EMAIL,
  HZ_ENTITY_PHONE, HZ_ENTITY_DATE_TIME, HZ_ENTITY_US_SSN, HZ_ENTITY_CREDIT_CARD,
  HZ_ENTITY_IBAN, HZ_ENTITY_IP_ADDRESS, HZ_ENTITY_URL, HZ_ENTITY_SECRET,
};

char *
hz_redactor_model_prompt (const char *text)
{
  GString *p = g_string_new (
    "List every piece of personal data in the text between <text> and </text>: names of "
    "people, places, street addresses, e-mail addresses, phone numbers, dates of birth, "
    "identity numbers, card and bank numbers, IP addresses, URLs and secrets. Answer with one "
    "line per item, written as LABEL: exact text, copying the text exactly as it appears. "
    "Labels: ");
  for (gsize i = 0; i < G_N_ELEMENTS (model_types); i++)
    g_string_append_printf (p, "%s%s", i ? ", " : "", hz_entity_type_name (model_types[i]));
  g_string_append (p, ". Answer NONE if there is none.\n<text>\n");
  g_string_append (p, text);
  g_string_append (p, "\n</text>\n");
  return g_string_free (p, FALSE);
}

/* Add every whole-word occurrence of surface (n bytes) as a candidate; exact case first,
 * ASCII-case-insensitive when there is no exact one. Returns the number added. */
static guint
add_occurrences (HzScan *scan, const char *surface, gsize n, HzEntityType type)
{
  guint added = 0;
  for (int pass = 0; pass < 2 && added == 0; pass++)
    for (gsize p = 0; p + n <= scan->len; p++)
      {
        const char *t = scan->text + p;
        gboolean eq = pass == 0 ? memcmp (t, surface, n) == 0 : g_ascii_strncasecmp (t, surface, n) == 0;
        if (!eq || hz_alnum_before (scan->text, p) || hz_alnum_at (scan->text, scan->len, p + n))
          continue;
        hz_scan_add (scan, p, p + n, type, 0.6f, HZ_TIER_NAME, "model");
        added++;
        p += n - 1;
      }
  return added;
}

void
hz_rec_model (HzScan *scan)
{
  const HzRedactor *r = scan->r;
  g_autofree char *prompt = hz_redactor_model_prompt (scan->text);
  g_autoptr (GError) error = NULL;
  g_autofree char *answer = r->model (prompt, r->model_data, &error);
  if (!answer || !g_utf8_validate (answer, -1, NULL))
    return; /* the rule-based result stands */
  g_auto (GStrv) lines = g_strsplit (answer, "\n", 256);
  for (char **l = lines; *l; l++)
    {
      char *line = g_strstrip (*l);
      /* tolerate list markers: "- PERSON: x", "1. PERSON: x" */
      while (*line == '-' || *line == '*' || g_ascii_isdigit (*line) || *line == '.' || *line == ' ')
        line++;
      char *colon = strchr (line, ':');
      if (!colon)
        continue;
      *colon = 0;
      HzEntityType type = hz_entity_type_from_name (g_strstrip (line));
      char *surface = g_strstrip (colon + 1);
      gsize n = strlen (surface);
      /* strip quotes the model may add */
      if (n >= 2 && ((surface[0] == '"' && surface[n - 1] == '"') || (surface[0] == '\'' && surface[n - 1] == '\'')))
        {
          surface[n - 1] = 0;
          surface++;
          n -= 2;
        }
      if (type == HZ_ENTITY_NONE || !r->enabled[type] || n == 0 || n > 200)
        continue;
      add_occurrences (scan, surface, n, type);
    }
}
