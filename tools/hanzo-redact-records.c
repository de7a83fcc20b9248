/* tools/hanzo-redact-records.c — JSONL records of `hanzo redact` (hanzo-redact-records.h). */
#include "hanzo-redact-records.h"

#include <gio/gio.h>
#include <string.h>

const char *const hz_eval_labels[HZ_EVAL_N_LABELS] = {
  "PERSON", "EMAIL", "PHONE", "CREDIT_CARD", "IBAN", "IP_ADDRESS", "URL", "STREET_ADDRESS",
  "LOCATION", "DATE_TIME", "US_SSN", "MAC_ADDRESS", "SECRET", "NATIONAL_ID",
  "ORGANIZATION", "OTHER",
};

gboolean
hz_eval_label_is_pii (int l)
{
  return strcmp (hz_eval_labels[l], "ORGANIZATION") != 0 && strcmp (hz_eval_labels[l], "OTHER") != 0;
}

int
hz_eval_label_index (const char *name)
{
  for (gsize i = 0; i < HZ_EVAL_N_LABELS; i++)
    if (g_strcmp0 (name, hz_eval_labels[i]) == 0)
      return (int) i;
  return -1;
}

gboolean
hz_eval_record_string (JsonObject *o, const char *name, const char **out, GError **error)
{
  JsonNode *n = json_object_get_member (o, name);
  *out = "";
  if (n == NULL || JSON_NODE_HOLDS_NULL (n))
    return TRUE;
  if (JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING)
    {
      *out = json_node_get_string (n);
      return TRUE;
    }
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "\"%s\" must be a string", name);
  return FALSE;
}

static gboolean
int_member (JsonObject *o, const char *name, gint64 *out)
{
  JsonNode *n = json_object_get_member (o, name);
  if (n == NULL || !JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_INT64)
    return FALSE;
  *out = json_node_get_int (n);
  return TRUE;
}

gboolean
hz_eval_record_spans (JsonObject *o, GArray **out, GError **error)
{
  *out = NULL;
  const char *text;
  if (!hz_eval_record_string (o, "text", &text, error))
    return FALSE;
  const gint64 n_cp = json_object_has_member (o, "text") ? g_utf8_strlen (text, -1) : G_MAXINT64;
  JsonNode *spans = json_object_get_member (o, "spans");
  g_autoptr (GArray) a = g_array_new (FALSE, FALSE, sizeof (HzEvalSpan));
  if (spans && !JSON_NODE_HOLDS_NULL (spans))
    {
      if (!JSON_NODE_HOLDS_ARRAY (spans))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "\"spans\" must be an array");
          return FALSE;
        }
      JsonArray *arr = json_node_get_array (spans);
      for (guint i = 0; i < json_array_get_length (arr); i++)
        {
          JsonNode *sn = json_array_get_element (arr, i);
          JsonObject *so = JSON_NODE_HOLDS_OBJECT (sn) ? json_node_get_object (sn) : NULL;
          HzEvalSpan e = { 0 };
          const char *label = "";
          if (!so || !int_member (so, "start", &e.s) || !int_member (so, "end", &e.e)
              || e.s < 0 || e.e <= e.s || e.e > n_cp)
            {
              if (n_cp == G_MAXINT64)
                g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                             "span %u: needs integers 0 <= \"start\" < \"end\"", i);
              else
                g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                             "span %u: needs integers 0 <= \"start\" < \"end\" <= the text's "
                             "length in code points (%" G_GINT64_FORMAT ")", i, n_cp);
              return FALSE;
            }
          if (!hz_eval_record_string (so, "label", &label, error))
            {
              g_prefix_error (error, "span %u: ", i);
              return FALSE;
            }
          e.label = hz_eval_label_index (label);
          if (e.label < 0)
            e.label = hz_eval_label_index ("OTHER");
          g_array_append_val (a, e);
        }
    }
  *out = g_steal_pointer (&a);
  return TRUE;
}


gboolean
hz_eval_for_each_record_in_data (const char *data, gsize len, const char *name,
                                 HzEvalRecordFn fn, gpointer user, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  const char *line = data, *end = data + len;
  guint lineno = 0;
  while (line < end)
    {
      const char *nl = memchr (line, '\n', end - line);
      gsize n = nl ? (gsize) (nl - line) : (gsize) (end - line);
      lineno++;
      if (memchr (line, '\0', n))
        {
          g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s:%u: NUL byte in the line",
                       name, lineno);
          return FALSE;
        }
      if (n > 0)
        {
          GError *err = NULL;
          if (!json_parser_load_from_data (parser, line, n, &err))
            {
              g_set_error (error, err->domain, err->code, "%s:%u: %s", name, lineno, err->message);
              g_error_free (err);
              return FALSE;
            }
          JsonNode *root = json_parser_get_root (parser);
          if (!root)   /* only white space (a "\r" of CRLF): a blank line */
            {
              line += n + 1;
              continue;
            }
          if (!JSON_NODE_HOLDS_OBJECT (root))
            {
              g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "%s:%u: not a JSON object", name, lineno);
              return FALSE;
            }
          if (!fn (json_node_get_object (root), user, error))
            {
              g_prefix_error (error, "%s:%u: ", name, lineno);
              return FALSE;
            }
        }
      line += n + 1;
    }
  return TRUE;
}

gboolean
hz_eval_for_each_record (const char *path, HzEvalRecordFn fn, gpointer user, GError **error)
{
  g_autofree char *data = NULL;
  gsize len = 0;
  if (!g_file_get_contents (path, &data, &len, error))
    return FALSE;
  return hz_eval_for_each_record_in_data (data, len, path, fn, user, error);
}
