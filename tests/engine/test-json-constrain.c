/* tests/engine/test-json-constrain.c — the JSON constraint (engine/json-constrain.c,
 * engine/json-schema.c): schema compilation and refusals, the byte automaton on valid and
 * broken texts, random and mutated texts (whatever it calls complete parses with
 * json-glib), and constrained generations over synthetic and real vocabularies
 * (../shared: stories260K, stories-distill, llama-spm 32k, qwen2 152k) where every mask
 * equals the brute-force answer and every output parses and satisfies its schema;
 * hz_sampler_sample_masked; HzServe requests with HzRequestParams.json (forked samples,
 * budgets down to the schema's shortest text, ignore_eog) on stories260K. */
#include <math.h>
#include <string.h>
#include <json-glib/json-glib.h>
#include "gguf.h"
#include "hanzo/serving.h"
#include "json-constrain.h"
#include "sampler.h"
#include "hanzo/tool-calls.h"
#include "hanzo/json-out.h"
#include "tokenizer.h"
#include "../hz-test-util.h"

/* ------------------------------------------------------------------ helpers */

static HzJsonSchema *
compile_ok (const char *json)
{
  g_autoptr (GError) error = NULL;
  HzJsonSchema *s = hz_json_schema_compile (json, -1, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (s);
  return s;
}

/* TRUE when `text` is accepted as a whole and complete. */
static gboolean
accepts (HzJsonSchema *schema, const char *text, gsize len)
{
  g_autoptr (HzJsonState) st = hz_json_state_new (schema);
  return hz_json_state_feed (st, text, len) && hz_json_state_complete (st);
}

static gboolean
parses (const char *text, gsize len)
{
  g_autoptr (JsonParser) p = json_parser_new ();
  return json_parser_load_from_data (p, text, (gssize) len, NULL) && json_parser_get_root (p);
}

/* A small validator of the schema subset, on json-glib nodes. */
static gboolean
validates (JsonNode *schema, JsonNode *v)
{
  if (!JSON_NODE_HOLDS_OBJECT (schema))
    return TRUE;
  JsonObject *s = json_node_get_object (schema);
  JsonNode *lits = json_object_get_member (s, "enum");
  if (lits)
    {
      g_autofree char *text = hz_json_node_to_string (v, FALSE);
      JsonArray *a = json_node_get_array (lits);
      for (guint i = 0; i < json_array_get_length (a); i++)
        {
          g_autofree char *l = hz_json_node_to_string (json_array_get_element (a, i), FALSE);
          if (strcmp (l, text) == 0)
            return TRUE;
        }
      return FALSE;
    }
  JsonNode *type = json_object_get_member (s, "type");
  if (type)
    {
      const char *want[8] = { NULL };
      if (JSON_NODE_HOLDS_ARRAY (type))
        for (guint i = 0; i < json_array_get_length (json_node_get_array (type)) && i < 7; i++)
          want[i] = json_array_get_string_element (json_node_get_array (type), i);
      else
        want[0] = json_node_get_string (type);
      const char *have = JSON_NODE_HOLDS_OBJECT (v) ? "object" : JSON_NODE_HOLDS_ARRAY (v) ? "array"
                         : JSON_NODE_HOLDS_NULL (v) ? "null"
                         : json_node_get_value_type (v) == G_TYPE_STRING ? "string"
                         : json_node_get_value_type (v) == G_TYPE_BOOLEAN ? "boolean"
                         : json_node_get_value_type (v) == G_TYPE_INT64 ? "integer" : "number";
      gboolean ok = FALSE;
      for (guint i = 0; want[i]; i++)
        ok |= strcmp (want[i], have) == 0 || (strcmp (want[i], "number") == 0 && strcmp (have, "integer") == 0);
      if (!ok)
        return FALSE;
    }
  if (JSON_NODE_HOLDS_OBJECT (v) && json_object_has_member (s, "properties"))
    {
      JsonObject *o = json_node_get_object (v), *props = json_object_get_object_member (s, "properties");
      JsonArray *req = json_object_has_member (s, "required") ? json_object_get_array_member (s, "required") : NULL;
      for (guint i = 0; req && i < json_array_get_length (req); i++)
        if (!json_object_has_member (o, json_array_get_string_element (req, i)))
          return FALSE;
      g_autoptr (GList) names = json_object_get_members (o);
      for (GList *l = names; l; l = l->next)
        if (!json_object_has_member (props, l->data) ||
            !validates (json_object_get_member (props, l->data), json_object_get_member (o, l->data)))
          return FALSE;
    }
  if (JSON_NODE_HOLDS_ARRAY (v))
    {
      JsonArray *a = json_node_get_array (v);
      const guint n = json_array_get_length (a);
      if (json_object_has_member (s, "minItems") && n < json_object_get_int_member (s, "minItems"))
        return FALSE;
      if (json_object_has_member (s, "maxItems") && n > json_object_get_int_member (s, "maxItems"))
        return FALSE;
      for (guint i = 0; i < n && json_object_has_member (s, "items"); i++)
        if (!validates (json_object_get_member (s, "items"), json_array_get_element (a, i)))
          return FALSE;
    }
  return TRUE;
}

static const char *const union_schema;

/* ------------------------------------------------------------------ schemas */

static void
test_schema_compile (void)
{
  g_autoptr (HzJsonSchema) obj = hz_json_schema_new_object ();
  g_assert_cmpuint (hz_json_schema_min_bytes (obj), ==, 2);
  g_autoptr (HzJsonSchema) any = compile_ok ("{}");
  g_assert_cmpuint (hz_json_schema_min_bytes (any), ==, 1);
  g_autoptr (HzJsonSchema) s = compile_ok (
    "{\"type\":\"object\",\"title\":\"t\",\"properties\":{\"a\":{\"type\":\"string\"},"
    "\"b\":{\"type\":\"integer\",\"description\":\"d\"}},\"required\":[\"a\",\"b\"],"
    "\"additionalProperties\":false}");
  /* {"a":"","b":0} */
  g_assert_cmpuint (hz_json_schema_min_bytes (s), ==, 14);
  g_autoptr (HzJsonSchema) e = compile_ok ("{\"enum\":[\"red\",\"green\",7,null,true]}");
  g_assert_cmpuint (hz_json_schema_min_bytes (e), ==, 1);
  g_autoptr (HzJsonSchema) arr = compile_ok ("{\"items\":{\"type\":\"boolean\"},\"minItems\":2}");
  g_assert_cmpuint (hz_json_schema_min_bytes (arr), ==, 11);   /* [true,true] */

  static const struct { const char *schema, *keyword; } unsupported[] = {
    { "{\"type\":\"string\",\"pattern\":\"^a\"}", "pattern" },
    { "{\"anyOf\":[{\"type\":\"object\"},{\"type\":\"object\",\"properties\":{}}]}", "anyOf" },
    { "{\"oneOf\":[{\"type\":\"array\"},{\"items\":{}}]}", "oneOf" },
    { "{\"anyOf\":[{\"const\":1},{\"type\":\"string\"}]}", "anyOf" },
    { "{\"anyOf\":[{\"type\":\"string\"}],\"type\":\"string\"}", "type" },
    { "{\"allOf\":[{\"type\":\"string\"}]}", "allOf" },
    { "{\"$ref\":\"https://example.com/s.json\"}", "$ref" },
    { "{\"$defs\":{\"N\":{\"properties\":{\"next\":{\"$ref\":\"#/$defs/N\"}}}},\"$ref\":\"#/$defs/N\"}",
      "$ref" },
    { "{\"items\":{\"$ref\":\"#\"}}", "$ref" },
    { "{\"$defs\":{\"A\":{}},\"$ref\":\"#/$defs/A\",\"type\":\"string\"}", "type" },
    { "{\"type\":\"string\",\"format\":\"date-time\"}", "format" },
    { "{\"properties\":{\"a\":{\"type\":\"string\",\"minLength\":2}}}", "minLength" },
    { "{\"type\":\"number\",\"minimum\":0}", "minimum" },
    { "{\"enum\":[[1]]}", "enum" },
    { "{\"required\":[\"a\"]}", "required" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (unsupported); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autofree char *kw = NULL;
      g_assert_null (hz_json_schema_compile (unsupported[i].schema, -1, &kw, &error));
      g_assert_error (error, HZ_JSON_SCHEMA_ERROR, HZ_JSON_SCHEMA_ERROR_UNSUPPORTED);
      g_assert_cmpstr (kw, ==, unsupported[i].keyword);
      g_assert_nonnull (strstr (error->message, unsupported[i].keyword));
    }
  {
    g_autoptr (GError) error = NULL;
    g_autofree char *kw = NULL;
    g_assert_null (hz_json_schema_compile ("{\"properties\":{\"a\":{\"pattern\":\"x\"}}}", -1,
                                           &kw, &error));
    g_assert_nonnull (strstr (error->message, "'pattern' at /properties/a"));
  }
  static const char *const invalid[] = {
    "{\"type\":\"strin\"}", "{\"properties\":{},\"required\":[\"x\"]}",
    "{\"minItems\":3,\"maxItems\":2}", "not json", "[1]", "{\"type\":[]}", "{\"enum\":[]}",
    "{\"minItems\":-1}", "{\"properties\":[]}", "", "{\"$ref\":\"#/$defs/nope\"}",
    "{\"anyOf\":[]}", "{\"oneOf\":{}}",
  };
  for (guint i = 0; i < G_N_ELEMENTS (invalid); i++)
    {
      g_autoptr (GError) error = NULL;
      g_assert_null (hz_json_schema_compile (invalid[i], -1, NULL, &error));
      g_assert_error (error, HZ_JSON_SCHEMA_ERROR, HZ_JSON_SCHEMA_ERROR_INVALID);
    }
  /* $ref into $defs / definitions (Pydantic's and zod-to-json-schema's shapes) */
  g_autoptr (HzJsonSchema) refs = compile_ok (
    "{\"$defs\":{\"Pet\":{\"type\":\"object\",\"properties\":{\"kind\":{\"enum\":[\"cat\","
    "\"dog\"]}},\"required\":[\"kind\"]},\"unused\":{\"pattern\":\"x\"}},\"type\":\"object\","
    "\"properties\":{\"pet\":{\"$ref\":\"#/$defs/Pet\",\"description\":\"d\"},\"pets\":{\"type\":"
    "\"array\",\"items\":{\"$ref\":\"#/$defs/Pet\"}}},\"required\":[\"pet\"]}");
  const char *pets = "{\"pet\":{\"kind\":\"cat\"},\"pets\":[{\"kind\":\"dog\"}]}";
  g_assert_true (accepts (refs, pets, strlen (pets)));
  g_assert_false (accepts (refs, "{\"pet\":{\"kind\":\"cow\"}}", 24));
  g_assert_cmpuint (hz_json_schema_min_bytes (refs), ==, 22);   /* {"pet":{"kind":"cat"}} */
  g_autoptr (HzJsonSchema) zod = compile_ok (
    "{\"$ref\":\"#/definitions/A\",\"definitions\":{\"A\":{\"type\":\"integer\"}}}");
  g_assert_true (accepts (zod, "42", 2));
  g_assert_false (accepts (zod, "4.2", 3));
  /* anyOf / oneOf of branches told apart by their first byte (Pydantic's Optional) */
  g_autoptr (HzJsonSchema) opt = compile_ok (
    "{\"type\":\"object\",\"properties\":{\"nick\":{\"anyOf\":[{\"type\":\"string\"},"
    "{\"type\":\"null\"}],\"default\":null,\"title\":\"Nick\"}},\"required\":[\"nick\"]}");
  g_assert_true (accepts (opt, "{\"nick\":null}", 13));
  g_assert_true (accepts (opt, "{\"nick\":\"x\"}", 12));
  g_assert_false (accepts (opt, "{\"nick\":1}", 10));
  g_autoptr (HzJsonSchema) uni = compile_ok (union_schema);
  g_assert_true (accepts (uni, "{\"a\":1}", 7));
  g_assert_true (accepts (uni, "[true,false]", 12));
  g_assert_true (accepts (uni, "null", 4));
  g_assert_false (accepts (uni, "{\"b\":1}", 7));
  g_assert_false (accepts (uni, "[1]", 3));
  g_assert_cmpuint (hz_json_schema_min_bytes (uni), ==, 2);   /* [] */
  g_autoptr (HzJsonSchema) lits = compile_ok ("{\"oneOf\":[{\"const\":\"x\"},{\"enum\":[\"y\",1]}]}");
  g_assert_true (accepts (lits, "\"y\"", 3));
  g_assert_true (accepts (lits, "1", 1));
  g_assert_false (accepts (lits, "\"z\"", 3));
  /* nesting */
  g_autoptr (GString) deep = g_string_new (NULL);
  for (guint i = 0; i < HZ_JSON_MAX_DEPTH + 1; i++)
    g_string_append (deep, "{\"items\":");
  g_string_append (deep, "{}");
  for (guint i = 0; i < HZ_JSON_MAX_DEPTH + 1; i++)
    g_string_append_c (deep, '}');
  g_autoptr (GError) error = NULL;
  g_assert_null (hz_json_schema_compile (deep->str, -1, NULL, &error));
  g_assert_error (error, HZ_JSON_SCHEMA_ERROR, HZ_JSON_SCHEMA_ERROR_UNSUPPORTED);
  g_autoptr (GString) hostile = g_string_new (NULL);
  for (guint i = 0; i < 100000; i++)
    g_string_append_c (hostile, '[');
  g_clear_error (&error);
  g_assert_null (hz_json_schema_compile (hostile->str, -1, NULL, &error));
  g_assert_nonnull (error);
}

/* ------------------------------------------------------------------ texts */

static void
test_texts (void)
{
  g_autoptr (HzJsonSchema) obj = hz_json_schema_new_object ();
  g_autoptr (HzJsonSchema) any = compile_ok ("{}");
  static const char *const good[] = {
    "{}", " {\"a\": [1, -0.5e+10, 0, -0, 1E2, \"x\\u00e9\\ud83d\\ude00\\n\", true, false, null, {}]}",
    "{\"\":\"\"}", "{\"k\":\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"}", "{\n  \"a\": {\"b\": []}\n}\n",
    "{\"a\":\"\\\"\\\\\\/\\b\\f\\r\\t\"}",
  };
  for (guint i = 0; i < G_N_ELEMENTS (good); i++)
    {
      g_assert_true (accepts (obj, good[i], strlen (good[i])));
      g_assert_true (parses (good[i], strlen (good[i])));
    }
  static const char *const bad[] = {
    "[1]", "{\"a\" 1}", "{\"a\":01}", "{\"a\":\"\\ud800\"}", "{\"a\":\"\\udc00\"}",
    "{\"a\":\"x\x01\"}", "{,}", "{\"a\":1,}", "{\"a\":\"\xc3\x28\"}", "{\"a\":\"\xc0\xaf\"}",
    "{\"a\":\"\xed\xa0\x80\"}", "{} x", "{\"a\":tru}", "{\"a\":1.}", "{\"a\":1e}", "{\"a\":-}",
    "{\"a\":1234567890123456}", "{\"a\":\"\\x\"}", "{\"a\":\"\\u12g4\"}", "{'a':1}",
    "{\"a\":1}}", "{\"a\":[1,]}", "{\"a\":1e123}", "{\"a\":0.1234567890123456}",
  };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    g_assert_false (accepts (obj, bad[i], strlen (bad[i])));
  /* whitespace runs */
  g_autofree char *ws_ok = g_strdup_printf ("{%*s}", 24, "");
  g_autofree char *ws_bad = g_strdup_printf ("{%*s}", 25, "");
  g_assert_true (accepts (obj, ws_ok, strlen (ws_ok)));
  g_assert_false (accepts (obj, ws_bad, strlen (ws_bad)));
  /* any value: scalars at the top, complete as they stand */
  g_assert_true (accepts (any, "12", 2));
  g_assert_true (accepts (any, "\"s\"", 3));
  g_assert_true (accepts (any, "null", 4));
  g_assert_false (accepts (any, "nul", 3));
  /* nesting bound */
  g_autoptr (GString) deep = g_string_new (NULL);
  for (guint i = 0; i < HZ_JSON_MAX_DEPTH; i++)
    g_string_append_c (deep, '[');
  g_autoptr (HzJsonState) st = hz_json_state_new (any);
  g_assert_true (hz_json_state_feed (st, deep->str, deep->len));
  g_assert_false (hz_json_state_feed (st, "[", 1));
  g_assert_cmpuint (hz_json_state_close_bytes (st), ==, HZ_JSON_MAX_DEPTH);
  /* a schema: order, required, enum with a prefix literal */
  g_autoptr (HzJsonSchema) s = compile_ok (
    "{\"properties\":{\"a\":{\"type\":\"string\"},\"b\":{\"enum\":[1,12]},"
    "\"c\":{\"type\":\"boolean\"}},\"required\":[\"b\"]}");
  g_assert_true (accepts (s, "{\"a\":\"x\",\"b\":12}", 16));
  g_assert_true (accepts (s, "{\"b\":1, \"c\":true}", 17));
  g_assert_false (accepts (s, "{\"a\":\"x\"}", 9));       /* b is required */
  g_assert_false (accepts (s, "{\"b\":1,\"a\":\"x\"}", 15)); /* order */
  g_assert_false (accepts (s, "{\"b\":13}", 8));
  g_assert_false (accepts (s, "{\"c\":true}", 10));
  g_autoptr (HzJsonState) cs = hz_json_state_new (s);
  g_assert_cmpuint (hz_json_state_close_bytes (cs), ==, 7);   /* {"b":1} */
  g_assert_true (hz_json_state_feed (cs, "{\"a\":\"xy", 8));
  g_assert_cmpuint (hz_json_state_close_bytes (cs), ==, 8);   /* ","b":1} */
}

/* Random JSON values written by json-glib: accepted; mutated: whatever the automaton
 * calls complete, json-glib parses. */
static JsonNode *
random_value (GRand *r, guint depth)
{
  const guint kind = g_rand_int_range (r, 0, depth > 4 ? 5 : 7);
  JsonNode *n;
  switch (kind)
    {
    case 0:
      return json_node_new (JSON_NODE_NULL);
    case 1:
      n = json_node_new (JSON_NODE_VALUE);
      json_node_set_boolean (n, g_rand_boolean (r));
      return n;
    case 2:
      n = json_node_new (JSON_NODE_VALUE);
      json_node_set_int (n, g_rand_int_range (r, -100000, 100000));
      return n;
    case 3:
      n = json_node_new (JSON_NODE_VALUE);
      json_node_set_double (n, g_rand_int_range (r, -1000, 1000) / 4.0 + 0.25);
      return n;
    case 4:
      {
        static const char *const strs[] = { "", "a", "caf\xc3\xa9", "\"q\"", "back\\slash",
                                            "tab\tnl\n", "\xf0\x9f\x98\x80", "\x01\x1f", "/" };
        n = json_node_new (JSON_NODE_VALUE);
        json_node_set_string (n, strs[g_rand_int_range (r, 0, G_N_ELEMENTS (strs))]);
        return n;
      }
    case 5:
      {
        JsonArray *a = json_array_new ();
        for (gint i = g_rand_int_range (r, 0, 4); i > 0; i--)
          json_array_add_element (a, random_value (r, depth + 1));
        n = json_node_new (JSON_NODE_ARRAY);
        json_node_take_array (n, a);
        return n;
      }
    default:
      {
        JsonObject *o = json_object_new ();
        for (gint i = g_rand_int_range (r, 0, 4); i > 0; i--)
          {
            g_autofree char *k = g_strdup_printf ("k%d", g_rand_int_range (r, 0, 5));
            json_object_set_member (o, k, random_value (r, depth + 1));
          }
        n = json_node_new (JSON_NODE_OBJECT);
        json_node_take_object (n, o);
        return n;
      }
    }
}

static void
test_random_texts (void)
{
  g_autoptr (GRand) r = g_rand_new_with_seed (25);
  g_autoptr (HzJsonSchema) any = compile_ok ("{}");
  guint n_complete = 0, n_mutants = 0;
  static const char alphabet[] = "{}[],:\" \n\\u0123456789.eE+-tfnrlsaD8\xc3\xa9\xf0\x9f";
  for (guint i = 0; i < 3000; i++)
    {
      g_autoptr (JsonNode) v = random_value (r, 0);
      g_autofree char *text = hz_json_node_to_string (v, g_rand_boolean (r));
      g_assert_true (accepts (any, text, strlen (text)));
      /* mutants: a byte replaced, inserted or dropped */
      for (guint m = 0; m < 8; m++)
        {
          g_autoptr (GString) t = g_string_new (text);
          const gsize at = t->len ? (gsize) g_rand_int_range (r, 0, (gint32) t->len) : 0;
          const char c = alphabet[g_rand_int_range (r, 0, sizeof alphabet - 1)];
          switch (g_rand_int_range (r, 0, 3))
            {
            case 0: if (t->len) t->str[at] = c; break;
            case 1: g_string_insert_c (t, (gssize) at, c); break;
            default: if (t->len) g_string_erase (t, (gssize) at, 1); break;
            }
          n_mutants++;
          if (accepts (any, t->str, t->len))
            {
              n_complete++;
              if (!parses (t->str, t->len))
                g_error ("accepted but json-glib refuses: %s", t->str);
            }
        }
    }
  /* random strings over JSON's bytes */
  for (guint i = 0; i < 20000; i++)
    {
      char buf[24];
      const guint n = (guint) g_rand_int_range (r, 1, sizeof buf);
      for (guint k = 0; k < n; k++)
        buf[k] = alphabet[g_rand_int_range (r, 0, sizeof alphabet - 1)];
      if (accepts (any, buf, n) && !parses (buf, n))
        g_error ("accepted but json-glib refuses: %.*s", (int) n, buf);
    }
  g_test_message ("%u of %u mutants complete and parsed", n_complete, n_mutants);
  g_assert_cmpuint (n_complete, >, 100);
}

/* ------------------------------------------------------------------ generation */

typedef struct {
  guint      n;
  char     **pieces;
  gsize     *lens;
  gboolean  *eog;
} Vocab;

static void
vocab_clear (Vocab *v)
{
  for (guint i = 0; i < v->n; i++)
    g_free (v->pieces[i]);
  g_free (v->pieces);
  g_free (v->lens);
  g_free (v->eog);
}

/* Bytes, JSON punctuation pairs, words, escapes, UTF-8 pieces, whitespace runs, an EOS. */
static void
vocab_synthetic (Vocab *v)
{
  static const char *const extra[] = {
    "{\"", "\":", "\",", "\"}", "\"]", "\":\"", "\", \"", "},", "}]", "]}", "[{", "[]", "{}",
    " \"", "\n", "\n  ", "  ", "    ", "true", "false", "null", "tr", "ue", "12", "-3", "0.",
    ".5", "e+", "E-", "name", "age", "\\n", "\\\"", "\\u00", "e9", "\\ud83d", "\\ude00", "\\",
    "\xc3", "\xa9", "caf\xc3\xa9", "\xe2\x82", "\xac", "\xf0\x9f\x98\x80", "\"name\"", "\"age\"",
    "\"tags\"", "\"nested\"", "x\"", "\"x", "a\"}", "\": [\"", ", ", "1,", "\",\"", "\"\n}",
  };
  v->n = 256 + G_N_ELEMENTS (extra) + 2;
  v->pieces = g_new0 (char *, v->n);
  v->lens = g_new0 (gsize, v->n);
  v->eog = g_new0 (gboolean, v->n);
  for (guint i = 0; i < 256; i++)
    {
      v->pieces[i] = g_malloc (1);
      v->pieces[i][0] = (char) i;
      v->lens[i] = 1;
    }
  for (guint i = 0; i < G_N_ELEMENTS (extra); i++)
    {
      v->pieces[256 + i] = g_strdup (extra[i]);
      v->lens[256 + i] = strlen (extra[i]);
    }
  v->pieces[v->n - 2] = g_strdup ("");   /* a control token */
  v->pieces[v->n - 1] = g_strdup ("");   /* EOS */
  v->eog[v->n - 1] = TRUE;
}

static gboolean
vocab_from_gguf (Vocab *v, const char *rel)
{
  g_autofree char *path = hz_test_shared_path (rel);
  if (path == NULL)
    return FALSE;
  g_autoptr (GError) error = NULL;
  g_autoptr (HzGguf) g = hz_gguf_open (path, &error);
  g_assert_no_error (error);
  g_autoptr (HzTokenizer) t = hz_tokenizer_new_from_gguf (g, &error);
  g_assert_no_error (error);
  v->n = (guint) hz_tokenizer_n_vocab (t);
  v->pieces = g_new0 (char *, v->n);
  v->lens = g_new0 (gsize, v->n);
  v->eog = g_new0 (gboolean, v->n);
  for (guint i = 0; i < v->n; i++)
    {
      v->lens[i] = hz_tokenizer_piece (t, (HzToken) i, FALSE, NULL, 0);
      v->pieces[i] = g_malloc (v->lens[i] + 1);
      hz_tokenizer_piece (t, (HzToken) i, FALSE, v->pieces[i], v->lens[i] + 1);
      v->eog[i] = hz_tokenizer_is_eog (t, (HzToken) i);
    }
  return TRUE;
}

/* The mask by feeding every token to a copy of the state. */
static HzToken brute_end = -1;   /* a framed text's only end token (-1: any) */

static guint
brute_mask (const Vocab *v, const HzJsonState *s, guint budget, guint64 *mask)
{
  guint count = 0;
  const gboolean complete = hz_json_state_complete (s);
  memset (mask, 0, (v->n + 63) / 64 * 8);
  for (guint t = 0; t < v->n; t++)
    {
      gboolean ok;
      if (v->eog[t])
        ok = complete && (brute_end < 0 || (HzToken) t == brute_end);
      else if (v->lens[t] == 0)
        ok = FALSE;
      else
        {
          g_autoptr (HzJsonState) c = hz_json_state_copy (s);
          ok = hz_json_state_feed (c, v->pieces[t], v->lens[t]) &&
               (budget == G_MAXUINT || hz_json_state_close_bytes (c) <= budget - 1);
        }
      if (ok)
        {
          mask[t / 64] |= G_GUINT64_CONSTANT (1) << (t % 64);
          count++;
        }
    }
  return count;
}

/* Allowed token number k of the mask. */
static HzToken
nth_allowed (const guint64 *mask, guint n_words, guint k)
{
  for (guint w = 0; w < n_words; w++)
    {
      const guint c = (guint) __builtin_popcountll (mask[w]);
      if (k < c)
        {
          guint64 b = mask[w];
          for (; k > 0; k--)
            b &= b - 1;
          return (HzToken) (w * 64 + (guint) __builtin_ctzll (b));
        }
      k -= c;
    }
  g_assert_not_reached ();
}

/* Generations of up to `budget` tokens: masks against brute force (every `check`-th
 * step), picks random allowed tokens (structure first half of the time), checks the text. */
typedef void (*TextCheck) (const char *text, gsize len, gpointer data);

static void
generate_with (const Vocab *v, HzJsonSchema *schema, guint runs, guint budget, guint check,
               guint32 seed, TextCheck check_text, gpointer data)
{
  g_autoptr (HzJsonVocab) jv = hz_json_vocab_new ((const char *const *) v->pieces, v->lens, v->n, v->eog);
  const guint nw = (guint) hz_json_vocab_mask_words (jv);
  g_autofree guint64 *mask = g_new0 (guint64, nw), *ref = g_new0 (guint64, nw);
  g_autoptr (GRand) r = g_rand_new_with_seed (seed);
  for (guint run = 0; run < runs; run++)
    {
      g_autoptr (HzJsonState) st = hz_json_state_new (schema);
      g_autoptr (GString) text = g_string_new (NULL);
      const guint n_max = budget / 2 + (guint) g_rand_int_range (r, 0, (gint32) budget / 2 + 1);
      gboolean ended = FALSE;
      for (guint i = 0; i < n_max && !ended; i++)
        {
          guint left = n_max - i;
          guint n = hz_json_mask (jv, st, left, mask);
          if (i % check == 0)
            {
              g_assert_cmpuint (brute_mask (v, st, left, ref), ==, n);
              g_assert_cmpmem (mask, nw * 8, ref, nw * 8);
            }
          if (n == 0)
            {
              left = G_MAXUINT;
              n = hz_json_mask (jv, st, left, mask);
              g_assert_cmpuint (n, >, 0);
            }
          HzToken t = nth_allowed (mask, nw, (guint) g_rand_int_range (r, 0, (gint32) n));
          if (hz_json_state_complete (st) && g_rand_int_range (r, 0, 3) == 0)
            for (guint k = 0; k < v->n; k++)
              if (v->eog[k])
                t = (HzToken) k;
          g_assert_true (hz_json_state_accept (st, jv, t));
          if (v->eog[t])
            ended = TRUE;
          else
            g_string_append_len (text, v->pieces[t], (gssize) v->lens[t]);
        }
      /* closed within the budget when it is large enough (every vocabulary here has
       * every single byte) */
      if (n_max < hz_json_schema_min_bytes (schema))
        continue;
      if (!hz_json_state_complete (st))
        g_error ("not complete after %u tokens: [%s]", n_max, text->str);
      check_text (text->str, text->len, data);
      if (run < 2)
        g_test_message ("%s", text->str);
    }
}

/* The text parses with json-glib and has the schema's shape (NULL: an object). */
static void
check_json (const char *text, gsize len, gpointer schema_node)
{
  g_autoptr (JsonParser) p = json_parser_new ();
  g_autoptr (GError) error = NULL;
  if (!json_parser_load_from_data (p, text, (gssize) len, &error))
    g_error ("json-glib refuses %s: %s", text, error->message);
  JsonNode *root = json_parser_get_root (p);
  if (schema_node)
    g_assert_true (validates (schema_node, root));
  else
    g_assert_true (JSON_NODE_HOLDS_OBJECT (root));
}

static void
generate_runs (const Vocab *v, const char *schema_json, guint runs, guint budget, guint check,
               guint32 seed)
{
  g_autoptr (HzJsonSchema) schema = schema_json ? compile_ok (schema_json) : hz_json_schema_new_object ();
  g_autoptr (JsonNode) schema_node = schema_json ? json_from_string (schema_json, NULL) : NULL;
  generate_with (v, schema, runs, budget, check, seed, check_json, schema_node);
}

static const char *const person_schema =
  "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},"
  "\"age\":{\"type\":\"integer\"},\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},"
  "\"maxItems\":3},\"ok\":{\"type\":\"boolean\"},\"kind\":{\"enum\":[\"a\",\"b\",1,12,null]},"
  "\"nested\":{\"type\":\"object\",\"properties\":{\"x\":{\"type\":[\"number\",\"null\"]}},"
  "\"required\":[\"x\"]}},\"required\":[\"name\",\"age\",\"nested\"]}";

static const char *const union_schema =
  "{\"anyOf\":[{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"}},"
  "\"required\":[\"a\"]},{\"type\":\"array\",\"items\":{\"type\":\"boolean\"}},{\"type\":\"null\"}]}";

static const char *const schemas[] = {
  NULL,   /* json_object */
  "{}",
  "{\"type\":\"array\",\"items\":{\"type\":\"integer\"},\"minItems\":2,\"maxItems\":4}",
  "{\"type\":[\"string\",\"null\"]}",
};

static void
test_generate_synthetic (void)
{
  Vocab v = { 0 };
  vocab_synthetic (&v);
  for (guint i = 0; i < G_N_ELEMENTS (schemas); i++)
    for (guint budget = 8; budget <= 128; budget *= 4)
      generate_runs (&v, schemas[i], 40, budget, 1, 7 + i + budget);
  generate_runs (&v, person_schema, 60, 64, 1, 11);
  generate_runs (&v, union_schema, 40, 32, 1, 13);
  generate_runs (&v, person_schema, 20, 400, 1, 12);
  vocab_clear (&v);
}

/* ---------------------------------------------------------- framed texts */

static const char *const frame_names[] = { "get_weather", "get_time", "search" };
static const char *const frame_schemas[] = {
  NULL,   /* person_schema */
  "{\"type\":\"object\"}",
  "{\"type\":\"object\",\"properties\":{\"q\":{\"type\":\"string\"}},\"required\":[\"q\"]}",
};

typedef struct {
  HzToolFormat format;
  guint        max_calls;
  guint        n_alts;
  JsonNode    *schemas[3];
} FrameCheck;

/* The text reads back (hz_tool_calls_parse()) as 1 to max_calls calls of the
 * alternatives' names with arguments of their schemas, and nothing else. */
static void
check_calls (const char *text, gsize len, gpointer data)
{
  const FrameCheck *fc = data;
  g_autofree char *content = NULL;
  g_autoptr (GPtrArray) calls = hz_tool_calls_parse (fc->format, text, (gssize) len, &content);
  if (calls->len < 1 || calls->len > fc->max_calls || *content)
    g_error ("%u calls (1 to %u wanted), content '%s' in [%.*s]", calls->len, fc->max_calls,
             content, (int) len, text);
  for (guint i = 0; i < calls->len; i++)
    {
      const HzToolCall *c = calls->pdata[i];
      guint k = 0;
      while (k < fc->n_alts && strcmp (c->name, frame_names[k]) != 0)
        k++;
      g_assert_cmpuint (k, <, fc->n_alts);
      g_autoptr (GError) error = NULL;
      g_autoptr (JsonNode) args = json_from_string (c->arguments, &error);
      if (args == NULL)
        g_error ("arguments [%s]: %s", c->arguments, error->message);
      g_assert_true (JSON_NODE_HOLDS_OBJECT (args));
      g_assert_true (validates (fc->schemas[k], args));
    }
}

static void
check_calls_harmony (const char *text, gsize len, gpointer data)
{
  g_autofree char *with_end = g_strdup_printf ("%.*s<|call|>", (int) len, text);
  check_calls (with_end, strlen (with_end), data);
}

/* tool_choice's forced calls (hz_json_schema_new_framed() over hz_tool_call_frame()):
 * masks equal brute force, and every generation, cut by any budget, reads back as calls of
 * the tools given — Hermes (three tools, several calls) and harmony (one named tool, one
 * call ended by one token). Bad frames are refused. */
static void
test_framed (void)
{
  Vocab v = { 0 };
  vocab_synthetic (&v);
  g_autoptr (GError) error = NULL;
  HzJsonSchema *values[3];
  FrameCheck fc = { HZ_TOOL_FORMAT_HERMES, 8, 3, { NULL } };
  char *pre[3];
  g_autofree char *suffix = NULL;
  const char *sep = NULL, *end = NULL;
  for (guint i = 0; i < 3; i++)
    {
      const char *js = frame_schemas[i] ? frame_schemas[i] : person_schema;
      values[i] = compile_ok (js);
      fc.schemas[i] = json_from_string (js, NULL);
      g_free (suffix);
      g_assert_true (hz_tool_call_frame (HZ_TOOL_FORMAT_HERMES, frame_names[i], &pre[i], &suffix,
                                         &sep, &end));
    }
  g_assert_nonnull (sep);
  g_autoptr (HzJsonSchema) hermes = hz_json_schema_new_framed ((const char *const *) pre, values,
                                                               3, suffix, sep, -1, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hz_json_schema_min_bytes (hermes), ==, strlen (pre[1]) + 2 + strlen (suffix));
  g_assert_true (accepts (hermes, "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n"
                                  "</tool_call>", strlen ("<tool_call>\n{\"name\": \"get_time\", "
                                                          "\"arguments\": {}}\n</tool_call>")));
  static const char *const refused[] = {
    "", "{}", "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}",
    " <tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>",
    "<tool_call>\n{\"name\": \"nope\", \"arguments\": {}}\n</tool_call>",
    "<tool_call>\n{\"name\": \"search\", \"arguments\": {}}\n</tool_call>",   /* q required */
  };
  for (gsize i = 0; i < G_N_ELEMENTS (refused); i++)
    g_assert_false (accepts (hermes, refused[i], strlen (refused[i])));
  for (guint budget = 16; budget <= 256; budget *= 4)
    generate_with (&v, hermes, 30, budget, 1, 21 + budget, check_calls, &fc);

  /* harmony: one tool (a named choice), no separator, only the last token may end it */
  g_autofree char *hpre = NULL, *hsuf = NULL;
  g_assert_true (hz_tool_call_frame (HZ_TOOL_FORMAT_HARMONY, "get_time", &hpre, &hsuf, &sep, &end));
  g_assert_null (sep);
  g_assert_cmpstr (end, ==, "<|call|>");
  const char *hp[] = { hpre };
  g_autoptr (HzJsonSchema) harmony = hz_json_schema_new_framed (hp, &values[1], 1, hsuf, NULL,
                                                                (gint32) v.n - 1, &error);
  g_assert_no_error (error);
  /* the reply as the server sees it: <|call|>'s text after the arguments */
  FrameCheck hc = { HZ_TOOL_FORMAT_HARMONY, 1, 2, { fc.schemas[0], fc.schemas[1] } };
  brute_end = (HzToken) v.n - 1;
  for (guint budget = 32; budget <= 128; budget *= 2)
    generate_with (&v, harmony, 20, budget, 1, 5 + budget, check_calls_harmony, &hc);
  brute_end = -1;

  /* bad frames */
  const char *dup[] = { "<a>", "<a>b" }, *empty[] = { "" };
  g_assert_null (hz_json_schema_new_framed (dup, values, 2, "", NULL, -1, &error));
  g_assert_error (error, HZ_JSON_SCHEMA_ERROR, HZ_JSON_SCHEMA_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_null (hz_json_schema_new_framed (empty, values, 1, "", NULL, -1, &error));
  g_assert_error (error, HZ_JSON_SCHEMA_ERROR, HZ_JSON_SCHEMA_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_null (hz_json_schema_new_framed (dup, values, 0, "", NULL, -1, &error));
  g_clear_error (&error);
  g_assert_null (hz_json_schema_new_framed (hp, &hermes, 1, "", NULL, -1, &error));
  g_clear_error (&error);

  for (guint i = 0; i < 3; i++)
    {
      hz_json_schema_unref (values[i]);
      json_node_unref (fc.schemas[i]);
      g_free (pre[i]);
    }
  vocab_clear (&v);
}

static void
test_generate_real (gconstpointer data)
{
  const char *rel = data;
  Vocab v = { 0 };
  if (!vocab_from_gguf (&v, rel))
    return;
  const guint check = v.n > 100000 ? 16 : v.n > 10000 ? 4 : 1;
  generate_runs (&v, NULL, 12, 96, check, 1);
  generate_runs (&v, person_schema, 12, 128, check, 2);
  generate_runs (&v, "{}", 8, 48, check, 3);
  vocab_clear (&v);
}

/* ------------------------------------------------------------------ sampling */

static void
test_sampler_masked (void)
{
  enum { N = 200 };
  float logits[N];
  guint64 allow[(N + 63) / 64] = { 0 };
  g_autoptr (GRand) r = g_rand_new_with_seed (5);
  for (guint i = 0; i < N; i++)
    logits[i] = (float) g_rand_double_range (r, -4, 4);
  logits[7] = 10;   /* the argmax, not allowed */
  for (guint i = 20; i < N; i += 3)
    allow[i / 64] |= G_GUINT64_CONSTANT (1) << (i % 64);
  HzSamplerParams p;
  hz_sampler_params_init (&p);
  g_autoptr (HzSampler) greedy = hz_sampler_new (&p);
  HzToken want = -1;
  for (guint i = 20; i < N; i += 3)
    if (want < 0 || logits[i] > logits[want])
      want = (HzToken) i;
  g_assert_cmpint (hz_sampler_sample_masked (greedy, logits, N, allow), ==, want);
  g_assert_cmpint (hz_sampler_sample_masked (greedy, logits, N, NULL), ==, 7);
  /* sampled: only allowed tokens, and the same ones for the same seed */
  p.temperature = 1.5f;
  p.top_k = 10;
  p.top_p = 0.95f;
  p.seed = 9;
  g_autoptr (HzSampler) a = hz_sampler_new (&p), b = hz_sampler_new (&p);
  guint seen = 0;
  for (guint k = 0; k < 500; k++)
    {
      const HzToken t = hz_sampler_sample_masked (a, logits, N, allow);
      g_assert_cmpint (t, ==, hz_sampler_sample_masked (b, logits, N, allow));
      g_assert_true (t >= 20 && (t - 20) % 3 == 0);
      seen |= 1u << MIN ((guint) (t - 20) / 3, 31u);
    }
  g_assert_cmpuint (__builtin_popcount (seen), >, 3);
  /* every allowed logit -inf or NaN: the lowest allowed id; nothing allowed: -1 */
  for (guint i = 20; i < N; i += 3)
    logits[i] = i % 2 ? -INFINITY : NAN;
  g_assert_cmpint (hz_sampler_sample_masked (a, logits, N, allow), ==, 20);
  g_assert_cmpint (hz_sampler_sample_masked (greedy, logits, N, allow), ==, 20);
  memset (allow, 0, sizeof allow);
  g_assert_cmpint (hz_sampler_sample_masked (a, logits, N, allow), ==, -1);
}

typedef struct {
  GString     *text[2];
  HzStopReason stop[2];
  guint        n[2];
} Out;

static gboolean
on_token (guint64 request, guint sample, HzToken token, const char *text, gpointer data)
{
  Out *o = data;
  g_string_append (o->text[sample], text);
  return TRUE;
}

static void
on_done (const HzServeResult *r, gpointer data)
{
  Out *o = data;
  o->stop[r->sample] = r->stop_reason;
  o->n[r->sample] = r->n_generated;
}

static gpointer
prepare_json (gpointer srv)
{
  hz_serve_prepare_json (srv);
  return NULL;
}

/* HzServe with HzRequestParams.json on stories260K: two samples forked after the prompt,
 * greedy and sampled, budgets from the schema's shortest text up, ignore_eog, the JSON
 * tables made ahead by two threads at once (hz_serve_prepare_json): every text
 * parses, and the sample ends at its end-of-generation token, its budget or the end of the
 * model's context. */
static void
test_serving (void)
{
  g_autofree char *path = hz_test_shared_path ("models/stories260K.gguf");
  if (path == NULL)
    return;
  g_autoptr (GError) error = NULL;
  g_autoptr (HzModel) model = hz_model_load (path, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (HzServe) srv = hz_serve_new (model, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (HzJsonSchema) person = compile_ok (person_schema);
  g_autoptr (HzJsonSchema) object = hz_json_schema_new_object ();
  /* the tables made ahead by two threads at once (one is kept) */
  GThread *a = g_thread_new ("prepare-a", prepare_json, srv);
  GThread *b = g_thread_new ("prepare-b", prepare_json, srv);
  g_thread_join (a);
  g_thread_join (b);
  gsize n_prompt = 0;
  g_autofree HzToken *prompt = hz_model_tokenize (model, "Once upon a time", -1, TRUE, FALSE,
                                                  &n_prompt);
  for (guint i = 0; i < 8; i++)
    {
      HzJsonSchema *schema = i % 2 ? person : object;
      HzRequestParams rp;
      hz_request_params_init (&rp);
      rp.json = schema;
      rp.n_samples = 2;
      rp.n_predict = (int32_t) (hz_json_schema_min_bytes (schema) + (guint[]) { 0, 5, 40, 200 }[i / 2]);
      rp.sampler.temperature = i % 3 ? 0.9f : 0.0f;
      rp.sampler.seed = i;
      rp.ignore_eog = i % 4 == 3;
      Out o = { { g_string_new (NULL), g_string_new (NULL) } };
      g_assert_cmpuint (hz_serve_submit (srv, prompt, n_prompt, &rp, on_token, on_done, &o, &error),
                        >, 0);
      g_assert_true (hz_serve_run (srv, &error));
      g_assert_no_error (error);
      for (guint k = 0; k < 2; k++)
        {
          g_test_message ("%u tokens (stop %d): %s", o.n[k], (int) o.stop[k],
                          o.text[k]->str);
          g_autoptr (JsonParser) p = json_parser_new ();
          if (!json_parser_load_from_data (p, o.text[k]->str, -1, &error))
            g_error ("not JSON: %s (%s)", o.text[k]->str, error->message);
          /* stories260K holds 128 positions: the longest budgets close at its end */
          g_assert_true (o.stop[k] == HZ_STOP_EOG || o.stop[k] == HZ_STOP_LENGTH ||
                         o.stop[k] == HZ_STOP_CONTEXT_FULL);
          g_assert_cmpuint (o.n[k], <=, (guint) rp.n_predict);
          g_string_free (o.text[k], TRUE);
        }
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/json-constrain/schema-compile", test_schema_compile);
  g_test_add_func ("/json-constrain/texts", test_texts);
  g_test_add_func ("/json-constrain/random-texts", test_random_texts);
  g_test_add_func ("/json-constrain/generate-synthetic", test_generate_synthetic);
  g_test_add_func ("/json-constrain/sampler-masked", test_sampler_masked);
  g_test_add_func ("/json-constrain/framed", test_framed);
  g_test_add_func ("/json-constrain/serving", test_serving);
  g_test_add_data_func ("/json-constrain/generate/stories260K", "models/stories260K.gguf",
                        test_generate_real);
  g_test_add_data_func ("/json-constrain/generate/stories-distill",
                        "models/stories-distill/stories-distill-Q8_0.gguf", test_generate_real);
  g_test_add_data_func ("/json-constrain/generate/llama-spm-32k",
                        "golden/tokenizer/ggml-vocab-llama-spm.gguf", test_generate_real);
  g_test_add_data_func ("/json-constrain/generate/qwen2-152k",
                        "golden/tokenizer/ggml-vocab-qwen2.gguf", test_generate_real);
  return g_test_run ();
}
