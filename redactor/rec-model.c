/* rec-model.c — the optional model-based pass: a prompted local model (hz_redactor_set_model)
 * answers with a JSON array of spans, [{"label": "PERSON", "text": "Ann Lee", "start": 12}]
 * (`start` in code points, optional); answers in the older line form "LABEL: exact text" are
 * read too. Each span is verified against the text before it becomes a candidate: the label
 * must be known and enabled, and the text must occur in the input as whole words — at
 * `start` when that offset is right, else wherever it occurs (exact case first, then
 * ASCII-case-insensitive). A model can add recall (names the gazetteers miss) but never
 * invent spans: what is not in the text is dropped, and junk is ignored. */
#include "hz-recognizers.h"

#include <json-glib/json-glib.h>
#include <string.h>

static const HzEntityType model_types[] = {
  HZ_ENTITY_PERSON, HZ_ENTITY_LOCATION, HZ_ENTITY_STREET_ADDRESS, HZ_ENTITY_EMAIL,
  HZ_ENTITY_PHONE, HZ_ENTITY_DATE_TIME, HZ_ENTITY_US_SSN, HZ_ENTITY_CREDIT_CARD,
  HZ_ENTITY_IBAN, HZ_ENTITY_IP_ADDRESS, HZ_ENTITY_URL, HZ_ENTITY_SECRET,
  HZ_ENTITY_NATIONAL_ID,
};

enum { MAX_SURFACE = 200, MAX_ITEMS = 256 };

char *
hz_redactor_model_prompt (const char *text)
{
  GString *p = g_string_new (
    "List every piece of personal data in the text between <text> and </text>: names of "
    "people, places, street addresses, e-mail addresses, phone numbers, dates of birth, "
    "identity numbers, card and bank numbers, IP addresses, URLs and secrets. Answer with a "
    "JSON array only, one object per item: {\"label\": LABEL, \"text\": the exact text as it "
    "appears, \"start\": the character offset where it starts}. Labels: ");
  for (gsize i = 0; i < G_N_ELEMENTS (model_types); i++)
    g_string_append_printf (p, "%s%s", i ? ", " : "", hz_entity_type_name (model_types[i]));
  g_string_append (p, ". Answer [] if there is none.\n<text>\n");
  g_string_append (p, text);
  g_string_append (p, "\n</text>\n");
  return g_string_free (p, FALSE);
}

/* Bytes [p, p + n) of the text are whole words: no letter or digit right before or after. */
static gboolean
whole_words_at (const HzScan *scan, gsize p, gsize n)
{
  return p + n <= scan->len && !hz_alnum_before (scan->text, p) && !hz_alnum_at (scan->text, scan->len, p + n);
}

static void
add_model_cand (HzScan *scan, gsize p, gsize n, HzEntityType type)
{
  hz_scan_add (scan, p, p + n, type, 0.6f, HZ_TIER_NAME, "model");
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
        if (!eq || !whole_words_at (scan, p, n))
          continue;
        add_model_cand (scan, p, n, type);
        added++;
        p += n - 1;
      }
  return added;
}

/* Verify one span the model returned and add it. `start_cp` is the model's code-point
 * offset, or -1 when it gave none. Returns TRUE when the span was found in the text. */
static gboolean
accept_span (HzScan *scan, const char *label, const char *surface, gint64 start_cp, glong n_cp)
{
  HzEntityType type = label ? hz_entity_type_from_name (label) : HZ_ENTITY_NONE;
  if (type == HZ_ENTITY_NONE || !scan->r->enabled[type] || !surface)
    return FALSE;
  /* strip quotes and spaces the model may add */
  while (*surface == ' ' || *surface == '"' || *surface == '\'')
    surface++;
  gsize n = strlen (surface);
  while (n > 0 && (surface[n - 1] == ' ' || surface[n - 1] == '"' || surface[n - 1] == '\''))
    n--;
  if (n == 0 || n > MAX_SURFACE)
    return FALSE;
  if (start_cp >= 0 && start_cp < n_cp)
    {
      gsize p = (gsize) (g_utf8_offset_to_pointer (scan->text, (glong) start_cp) - scan->text);
      if (p + n <= scan->len && memcmp (scan->text + p, surface, n) == 0 && whole_words_at (scan, p, n))
        {
          add_model_cand (scan, p, n, type);
          return TRUE;
        }
    }
  /* a wrong or missing offset: locate the text itself */
  char *copy = g_strndup (surface, n);
  gboolean found = add_occurrences (scan, copy, n, type) > 0;
  g_free (copy);
  return found;
}

/* The JSON array in `answer` (the model may wrap it in prose or a code fence), or NULL. */
static JsonArray *
find_json_array (const char *answer, JsonParser *parser)
{
  const char *a = strchr (answer, '[');
  const char *b = strrchr (answer, ']');
  if (!a || !b || b < a)
    return NULL;
  if (!json_parser_load_from_data (parser, a, (gssize) (b - a + 1), NULL))
    return NULL;
  JsonNode *root = json_parser_get_root (parser);
  return root && JSON_NODE_HOLDS_ARRAY (root) ? json_node_get_array (root) : NULL;
}

static const char *
member_string (JsonObject *o, const char *name)
{
  JsonNode *n = json_object_get_member (o, name);
  return n && JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING
           ? json_node_get_string (n) : NULL;
}

/* Spans of a JSON answer; returns FALSE when the answer holds no JSON array. */
static gboolean
read_json (HzScan *scan, const char *answer, glong n_cp)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonArray *arr = find_json_array (answer, parser);
  if (!arr)
    return FALSE;
  guint n = MIN (json_array_get_length (arr), MAX_ITEMS);
  for (guint i = 0; i < n; i++)
    {
      JsonNode *el = json_array_get_element (arr, i);
      if (!JSON_NODE_HOLDS_OBJECT (el))
        continue;
      JsonObject *o = json_node_get_object (el);
      const char *label = member_string (o, "label");
      if (!label)
        label = member_string (o, "type");
      gint64 start = -1;
      JsonNode *sn = json_object_get_member (o, "start");
      if (sn && JSON_NODE_HOLDS_VALUE (sn) && json_node_get_value_type (sn) == G_TYPE_INT64)
        start = json_node_get_int (sn);
      accept_span (scan, label, member_string (o, "text"), start, n_cp);
    }
  return TRUE;
}

/* Spans of a line answer: "LABEL: exact text", list markers tolerated. */
static void
read_lines (HzScan *scan, char *answer, glong n_cp)
{
  g_auto (GStrv) lines = g_strsplit (answer, "\n", MAX_ITEMS);
  for (char **l = lines; *l; l++)
    {
      char *line = g_strstrip (*l);
      /* "- PERSON: x", "1. PERSON: x" */
      while (*line == '-' || *line == '*' || g_ascii_isdigit (*line) || *line == '.' || *line == ' ')
        line++;
      char *colon = strchr (line, ':');
      if (!colon)
        continue;
      *colon = 0;
      accept_span (scan, g_strstrip (line), g_strstrip (colon + 1), -1, n_cp);
    }
}

void
hz_rec_model (HzScan *scan)
{
  const HzRedactor *r = scan->r;
  g_autofree char *prompt = hz_redactor_model_prompt (scan->text);
  g_autoptr (GError) error = NULL;
  g_autofree char *answer = r->model (prompt, r->model_data, &error);
  if (!answer || !g_utf8_validate (answer, -1, NULL))
    {
      /* the rule-based result stands; say so once per redactor (e.g. a model whose context
       * cannot hold the prompt), not for every message */
      if (g_atomic_int_compare_and_exchange ((gint *) &r->model_failed_said, 0, 1))
        g_message ("redactor: the model pass gave no usable answer (%s); using the rules' "
                   "spans only", error ? error->message : "not UTF-8");
      return;
    }
  glong n_cp = g_utf8_strlen (scan->text, (gssize) scan->len);
  if (!read_json (scan, answer, n_cp))
    read_lines (scan, answer, n_cp);
}
