/* Evaluation data (../shared/redactor-eval, skipped without it): the hand-made cases must
 * be exactly right, structured identifiers on presidio_synth_v2 must reach F2 >= 0.95
 * (exact match), and on every record spans are in bounds, on character boundaries,
 * sorted, disjoint, with code-point offsets matching the byte offsets. */
#include <json-glib/json-glib.h>
#include <string.h>
#include "hanzo/redact.h"
#include "hz-test-util.h"

typedef void (*RecFn) (JsonObject *o, const HzRedaction *res, gpointer user);

static void
each_record (const char *rel, RecFn fn, gpointer user)
{
  g_autofree char *path = hz_test_shared_path (rel);
  if (!path)
    return;
  g_autofree char *data = NULL;
  g_assert_true (g_file_get_contents (path, &data, NULL, NULL));
  HzRedactor *r = hz_redactor_new (NULL);
  g_auto (GStrv) lines = g_strsplit (data, "\n", -1);
  for (char **l = lines; *l; l++)
    {
      if (!**l)
        continue;
      g_autoptr (JsonParser) p = json_parser_new ();
      g_assert_true (json_parser_load_from_data (p, *l, -1, NULL));
      JsonObject *o = json_node_get_object (json_parser_get_root (p));
      const char *text = json_object_get_string_member (o, "text");
      HzRedaction *res = hz_redactor_analyze (r, text, -1, 0, NULL);
      fn (o, res, user);
      hz_redaction_free (res);
    }
  hz_redactor_free (r);
}

static void
check_exact (JsonObject *o, const HzRedaction *res, gpointer user)
{
  JsonArray *spans = json_object_get_array_member (o, "spans");
  const char *id = json_object_get_string_member (o, "id");
  if (json_array_get_length (spans) != res->n_spans)
    g_error ("%s: %u gold spans, %u predicted", id, json_array_get_length (spans), res->n_spans);
  for (guint i = 0; i < res->n_spans; i++)
    {
      JsonObject *g = json_array_get_object_element (spans, i);
      g_assert_cmpint (json_object_get_int_member (g, "start"), ==, res->spans[i].start_cp);
      g_assert_cmpint (json_object_get_int_member (g, "end"), ==, res->spans[i].end_cp);
      g_assert_cmpint (json_object_get_int_member (g, "start_byte"), ==, res->spans[i].start_byte);
      g_assert_cmpint (json_object_get_int_member (g, "end_byte"), ==, res->spans[i].end_byte);
      g_assert_cmpstr (json_object_get_string_member (g, "label"), ==, hz_entity_type_name (res->spans[i].type));
    }
  (*(guint *) user)++;
}

static void
test_handmade (void)
{
  guint n = 0;
  each_record ("redactor-eval/handmade_cases.jsonl", check_exact, &n);
  if (!g_test_failed () && n > 0)
    g_assert_cmpuint (n, ==, 6);
}

typedef struct {
  guint gold[HZ_ENTITY_N_TYPES], pred[HZ_ENTITY_N_TYPES], tp[HZ_ENTITY_N_TYPES];
  guint records;
} Counts;

static void
count_exact (JsonObject *o, const HzRedaction *res, gpointer user)
{
  Counts *c = user;
  JsonArray *spans = json_object_get_array_member (o, "spans");
  c->records++;
  for (guint i = 0; i < res->n_spans; i++)
    c->pred[res->spans[i].type]++;
  for (guint j = 0; j < json_array_get_length (spans); j++)
    {
      JsonObject *g = json_array_get_object_element (spans, j);
      HzEntityType t = hz_entity_type_from_name (json_object_get_string_member (g, "label"));
      if (t == HZ_ENTITY_NONE)
        continue;
      c->gold[t]++;
      for (guint i = 0; i < res->n_spans; i++)
        if (res->spans[i].type == t && (gint64) res->spans[i].start_cp == json_object_get_int_member (g, "start")
            && (gint64) res->spans[i].end_cp == json_object_get_int_member (g, "end"))
          {
            c->tp[t]++;
            break;
          }
    }
}

static void
test_structured_f2 (void)
{
  Counts c = { 0 };
  each_record ("redactor-eval/presidio_synth_v2.jsonl", count_exact, &c);
  if (c.records == 0)
    return;
  const HzEntityType types[] = { HZ_ENTITY_EMAIL, HZ_ENTITY_PHONE, HZ_ENTITY_CREDIT_CARD, HZ_ENTITY_IBAN,
                                 HZ_ENTITY_IP_ADDRESS, HZ_ENTITY_US_SSN, HZ_ENTITY_URL };
  for (gsize k = 0; k < G_N_ELEMENTS (types); k++)
    {
      HzEntityType t = types[k];
      g_assert_cmpuint (c.gold[t], >=, 10);
      double p = c.pred[t] ? (double) c.tp[t] / c.pred[t] : 0, r = (double) c.tp[t] / c.gold[t];
      double f2 = p + r > 0 ? 5 * p * r / (4 * p + r) : 0;
      g_test_message ("%s: P %.3f R %.3f F2 %.3f", hz_entity_type_name (t), p, r, f2);
      g_assert_cmpfloat (f2, >=, 0.95);
    }
}

static void
check_bounds (JsonObject *o, const HzRedaction *res, gpointer user)
{
  gsize prev_end = 0;
  for (guint i = 0; i < res->n_spans; i++)
    {
      const HzSpan *s = &res->spans[i];
      g_assert_cmpuint (s->start_byte, <, s->end_byte);
      g_assert_cmpuint (s->end_byte, <=, res->len);
      g_assert_cmpuint (s->start_byte, >=, prev_end);
      g_assert_cmpuint (g_utf8_pointer_to_offset (res->text, res->text + s->start_byte), ==, s->start_cp);
      g_assert_cmpuint (g_utf8_pointer_to_offset (res->text, res->text + s->end_byte), ==, s->end_cp);
      g_assert_true (g_utf8_validate_len (res->text + s->start_byte, s->end_byte - s->start_byte, NULL));
      prev_end = s->end_byte;
    }
  (*(guint *) user)++;
}

static void
test_bounds_all_files (void)
{
  const char *files[] = { "redactor-eval/wnut17_dev.jsonl", "redactor-eval/wikigold_first60.jsonl",
                          "redactor-eval/presidio_synth_v2.jsonl" };
  guint n = 0;
  for (gsize i = 0; i < G_N_ELEMENTS (files); i++)
    each_record (files[i], check_bounds, &n);
  if (n > 0)
    g_assert_cmpuint (n, ==, 1009 + 1017 + 1500);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/redact/eval/handmade-exact", test_handmade);
  g_test_add_func ("/redact/eval/structured-f2", test_structured_f2);
  g_test_add_func ("/redact/eval/bounds", test_bounds_all_files);
  return g_test_run ();
}
