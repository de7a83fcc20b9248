/* engine/json-schema.c — JSON schemas compiled for the JSON constraint
 * (hanzo/json-constrain.h documents the subset; the nodes are in json-schema.h).
 *
 * The schema is parsed with json-glib and walked once; every keyword is either used,
 * ignored as an annotation, or refused by name with its place as a JSON pointer. The
 * shortest text of every node is computed bottom-up (the constraint's closing budget). */
#include "json-schema.h"

#include <json-glib/json-glib.h>
#include <string.h>
#include "hanzo/json-out.h"

G_DEFINE_QUARK (hz-json-schema-error-quark, hz_json_schema_error)

static HzJsonNode any_node = {
  .types = HZ_JT_ALL, .any_keys = TRUE, .items = &any_node, .max_items = G_MAXUINT,
  .min_len = 1,
};
static HzJsonNode object_node = {
  .types = HZ_JT_OBJECT, .any_keys = TRUE, .items = &any_node, .max_items = G_MAXUINT,
  .min_len = 2,
};

HzJsonNode *
hz_json_node_any (void)
{
  return &any_node;
}

static void
node_free (HzJsonNode *n)
{
  g_strfreev (n->keys);
  g_free (n->key_len);
  g_free (n->props);
  g_free (n->required);
  g_free (n->req_rest);
  g_free (n->after_comma);
  g_strfreev (n->lits);
  g_free (n->lit_len);
  g_free (n);
}

static HzJsonSchema *
schema_new (HzJsonNode *root)
{
  HzJsonSchema *s = g_new0 (HzJsonSchema, 1);
  s->ref = 1;
  s->root = root;
  s->nodes = g_ptr_array_new_with_free_func ((GDestroyNotify) node_free);
  return s;
}

HzJsonSchema *
hz_json_schema_new_object (void)
{
  return schema_new (&object_node);
}

HzJsonSchema *
hz_json_schema_ref (HzJsonSchema *schema)
{
  g_atomic_int_inc (&schema->ref);
  return schema;
}

static void
frame_free (HzJsonFrame *f)
{
  if (f == NULL)
    return;
  g_strfreev (f->pre);
  g_strfreev (f->again);
  g_free (f->pre_len);
  g_free (f->again_len);
  for (guint i = 0; i < f->n; i++)
    hz_json_schema_unref (f->values[i]);
  g_free (f->values);
  g_free (f->roots);
  g_free (f->suffix);
  g_free (f);
}

void
hz_json_schema_unref (HzJsonSchema *schema)
{
  if (schema == NULL || !g_atomic_int_dec_and_test (&schema->ref))
    return;
  g_ptr_array_unref (schema->nodes);
  frame_free (schema->frame);
  g_free (schema);
}

guint
hz_json_schema_min_bytes (const HzJsonSchema *schema)
{
  return schema->frame ? schema->frame->min_first : schema->root->min_len;
}

HzJsonSchema *
hz_json_schema_new_framed (const char *const *prefixes, HzJsonSchema *const *values, guint n,
                           const char *suffix, const char *separator, gint32 end_token,
                           GError **error)
{
  if (n == 0 || n > HZ_JSON_MAX_CHOICES)
    {
      g_set_error (error, HZ_JSON_SCHEMA_ERROR, HZ_JSON_SCHEMA_ERROR_INVALID,
                   "a framed text needs 1 to %d alternatives, not %u", HZ_JSON_MAX_CHOICES, n);
      return NULL;
    }
  for (guint i = 0; i < n; i++)
    {
      if (prefixes[i] == NULL || *prefixes[i] == '\0' || values[i] == NULL || values[i]->frame)
        {
          g_set_error (error, HZ_JSON_SCHEMA_ERROR, HZ_JSON_SCHEMA_ERROR_INVALID,
                       "alternative %u of a framed text needs a prefix and a plain schema", i);
          return NULL;
        }
      for (guint j = 0; j < n; j++)
        if (j != i && g_str_has_prefix (prefixes[j], prefixes[i]))
          {
            g_set_error (error, HZ_JSON_SCHEMA_ERROR, HZ_JSON_SCHEMA_ERROR_INVALID,
                         "the prefix of alternative %u of a framed text begins alternative "
                         "%u's", i, j);
            return NULL;
          }
    }
  HzJsonSchema *s = schema_new (NULL);
  HzJsonFrame *f = s->frame = g_new0 (HzJsonFrame, 1);
  f->n = n;
  f->pre = g_new0 (char *, n + 1);
  f->again = g_new0 (char *, n + 1);
  f->pre_len = g_new0 (guint, n);
  f->again_len = g_new0 (guint, n);
  f->values = g_new0 (HzJsonSchema *, n);
  f->roots = g_new0 (HzJsonNode *, n);
  f->suffix = g_strdup (suffix ? suffix : "");
  f->suffix_len = (guint) strlen (f->suffix);
  f->repeat = separator != NULL;
  f->end_token = end_token;
  f->min_first = G_MAXUINT;
  for (guint i = 0; i < n; i++)
    {
      f->pre[i] = g_strdup (prefixes[i]);
      f->pre_len[i] = (guint) strlen (prefixes[i]);
      f->again[i] = g_strconcat (separator ? separator : "", prefixes[i], NULL);
      f->again_len[i] = (guint) strlen (f->again[i]);
      f->values[i] = hz_json_schema_ref (values[i]);
      f->roots[i] = values[i]->root;
      f->min_first = MIN (f->min_first, f->pre_len[i] + f->roots[i]->min_len + f->suffix_len);
    }
  return s;
}

/* ------------------------------------------------------------------ compiling */

typedef struct {
  HzJsonSchema *schema;
  char        **keyword;
  GError      **error;
  JsonNode     *root;     /* the whole document, for "$ref" */
  GHashTable   *refs;     /* "$ref" text -> its compiled node, or NULL while compiling it */
} Compile;

static gboolean
refuse (Compile *c, const char *path, const char *keyword, const char *why)
{
  if (c->keyword)
    *c->keyword = g_strdup (keyword);
  g_set_error (c->error, HZ_JSON_SCHEMA_ERROR, HZ_JSON_SCHEMA_ERROR_UNSUPPORTED,
               "the schema keyword '%s' at %s is not supported%s%s (supported: type, "
               "properties, required, additionalProperties, items, minItems, maxItems, enum, "
               "const, $ref to $defs, anyOf/oneOf of different types)", keyword, *path ? path : "/", why ? ": " : "", why ? why : "");
  return FALSE;
}

static gboolean
invalid (Compile *c, const char *path, const char *fmt, ...) G_GNUC_PRINTF (3, 4);

static gboolean
invalid (Compile *c, const char *path, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (c->error, HZ_JSON_SCHEMA_ERROR, HZ_JSON_SCHEMA_ERROR_INVALID,
               "the schema is not valid at %s: %s", *path ? path : "/", msg);
  return FALSE;
}

/* A JSON pointer one step down (RFC 6901 escapes). */
static char *
path_child (const char *path, const char *name)
{
  g_autoptr (GString) s = g_string_new (path);
  g_string_append_c (s, '/');
  for (const char *p = name; *p; p++)
    if (*p == '~')
      g_string_append (s, "~0");
    else if (*p == '/')
      g_string_append (s, "~1");
    else
      g_string_append_c (s, *p);
  return g_string_free (g_steal_pointer (&s), FALSE);
}

static const char *const annotations[] = {
  "title", "description", "default", "examples", "$schema", "$id", "$comment",
  "deprecated", "readOnly", "writeOnly", NULL,
};
static const char *const used[] = {
  "type", "properties", "required", "additionalProperties", "items", "minItems",
  "maxItems", "enum", "const", "$ref", "$defs", "definitions", "anyOf", "oneOf", NULL,
};

static const struct { const char *name; guint bit; } type_names[] = {
  { "object", HZ_JT_OBJECT }, { "array", HZ_JT_ARRAY }, { "string", HZ_JT_STRING },
  { "number", HZ_JT_NUMBER }, { "integer", HZ_JT_INTEGER }, { "boolean", HZ_JT_BOOLEAN },
  { "null", HZ_JT_NULL },
};

static gboolean
type_bit (const char *name, guint *bit)
{
  for (guint i = 0; i < G_N_ELEMENTS (type_names); i++)
    if (strcmp (name, type_names[i].name) == 0)
      {
        *bit = type_names[i].bit;
        return TRUE;
      }
  return FALSE;
}

static const char *
string_of (JsonNode *n)
{
  return n && JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING
           ? json_node_get_string (n) : NULL;
}

static gboolean
read_types (Compile *c, JsonNode *t, const char *path, guint *types)
{
  guint bit = 0;
  *types = 0;
  if (string_of (t))
    {
      if (!type_bit (string_of (t), &bit))
        return invalid (c, path, "'type' must name a JSON type, not '%s'", string_of (t));
      *types = bit;
      return TRUE;
    }
  if (!JSON_NODE_HOLDS_ARRAY (t) || json_array_get_length (json_node_get_array (t)) == 0)
    return invalid (c, path, "'type' must be a type name or a non-empty array of them");
  JsonArray *a = json_node_get_array (t);
  for (guint i = 0; i < json_array_get_length (a); i++)
    {
      const char *name = string_of (json_array_get_element (a, i));
      if (name == NULL || !type_bit (name, &bit))
        return invalid (c, path, "'type' must be a type name or a non-empty array of them");
      *types |= bit;
    }
  return TRUE;
}

/* A non-negative integer keyword (at most 1 << 20). */
static gboolean
read_count (Compile *c, JsonObject *o, const char *name, const char *path, guint *out)
{
  JsonNode *n = json_object_get_member (o, name);
  if (n == NULL)
    return TRUE;
  if (!JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_INT64 ||
      json_node_get_int (n) < 0 || json_node_get_int (n) > (1 << 20))
    return invalid (c, path, "'%s' must be an integer from 0 to %d", name, 1 << 20);
  *out = (guint) json_node_get_int (n);
  return TRUE;
}

/* enum / const: the values as compact JSON texts. */
static gboolean
read_literals (Compile *c, HzJsonNode *node, JsonNode *values, gboolean is_const,
               const char *path)
{
  g_autoptr (GPtrArray) texts = g_ptr_array_new_with_free_func (g_free);
  JsonArray *a = NULL;
  if (!is_const)
    {
      if (!JSON_NODE_HOLDS_ARRAY (values) || json_array_get_length (json_node_get_array (values)) == 0)
        return invalid (c, path, "'enum' must be a non-empty array");
      a = json_node_get_array (values);
      if (json_array_get_length (a) > HZ_JSON_MAX_CHOICES)
        return refuse (c, path, "enum", "more than 64 values");
    }
  const guint n = a ? json_array_get_length (a) : 1;
  for (guint i = 0; i < n; i++)
    {
      JsonNode *v = a ? json_array_get_element (a, i) : values;
      if (!JSON_NODE_HOLDS_VALUE (v) && !JSON_NODE_HOLDS_NULL (v))
        return refuse (c, path, is_const ? "const" : "enum",
                       "only strings, numbers, booleans and null can be listed");
      char *text = hz_json_node_to_string (v, FALSE);
      if (!g_utf8_validate (text, -1, NULL))
        {
          g_free (text);   /* json-glib decodes a broken \u escape into bytes that are not */
          return invalid (c, path, "'%s' has a string that is not UTF-8 (a broken \\u escape?)",
                          is_const ? "const" : "enum");
        }
      gboolean dup = FALSE;
      for (guint k = 0; k < texts->len; k++)
        dup |= strcmp (texts->pdata[k], text) == 0;
      if (dup)
        g_free (text);
      else
        g_ptr_array_add (texts, text);
    }
  node->n_lits = texts->len;
  node->lit_len = g_new (guint, texts->len);
  node->min_len = G_MAXUINT;
  for (guint i = 0; i < texts->len; i++)
    {
      node->lit_len[i] = (guint) strlen (texts->pdata[i]);
      node->min_len = MIN (node->min_len, node->lit_len[i]);
    }
  g_ptr_array_add (texts, NULL);
  node->lits = (char **) g_ptr_array_free (g_steal_pointer (&texts), FALSE);
  return TRUE;
}

static HzJsonNode *compile_node (Compile *c, JsonNode *j, const char *path, guint depth);

/* properties / required: the member list and its closing costs. */
static gboolean
read_properties (Compile *c, HzJsonNode *node, JsonObject *o, const char *path, guint depth)
{
  JsonNode *props = json_object_get_member (o, "properties");
  JsonNode *req = json_object_get_member (o, "required");
  g_autofree char *ppath = path_child (path, "properties");
  if (props == NULL)
    {
      node->any_keys = TRUE;
      if (req && JSON_NODE_HOLDS_ARRAY (req) && json_array_get_length (json_node_get_array (req)) > 0)
        return refuse (c, path, "required", "'required' needs 'properties' listing them");
      return TRUE;
    }
  if (!JSON_NODE_HOLDS_OBJECT (props))
    return invalid (c, path, "'properties' must be an object");
  JsonObject *po = json_node_get_object (props);
  g_autoptr (GList) names = json_object_get_members (po);
  const guint n = g_list_length (names);
  if (n > HZ_JSON_MAX_CHOICES)
    return refuse (c, path, "properties", "more than 64 properties");
  if (depth + 1 > HZ_JSON_MAX_DEPTH)
    return refuse (c, path, "properties", "nested more than 32 deep");
  node->n_props = n;
  node->keys = g_new0 (char *, n + 1);
  node->key_len = g_new0 (guint, n);
  node->props = g_new0 (HzJsonNode *, n);
  node->required = g_new0 (gboolean, n);
  node->req_rest = g_new0 (guint, n + 1);
  node->after_comma = g_new0 (guint, n + 1);
  guint i = 0;
  for (GList *l = names; l; l = l->next, i++)
    {
      g_autoptr (JsonNode) key = json_node_new (JSON_NODE_VALUE);
      json_node_set_string (key, l->data);
      node->keys[i] = hz_json_node_to_string (key, FALSE);
      node->key_len[i] = (guint) strlen (node->keys[i]);
      if (!g_utf8_validate (node->keys[i], -1, NULL))
        return invalid (c, path, "a property name is not UTF-8 (a broken \\u escape?)");
      g_autofree char *sub = path_child (ppath, l->data);
      if (!(node->props[i] = compile_node (c, json_object_get_member (po, l->data), sub, depth + 1)))
        return FALSE;
    }
  if (req)
    {
      if (!JSON_NODE_HOLDS_ARRAY (req))
        return invalid (c, path, "'required' must be an array of property names");
      JsonArray *ra = json_node_get_array (req);
      for (guint k = 0; k < json_array_get_length (ra); k++)
        {
          const char *name = string_of (json_array_get_element (ra, k));
          if (name == NULL)
            return invalid (c, path, "'required' must be an array of property names");
          i = 0;
          for (GList *l = names; l; l = l->next, i++)
            if (strcmp (l->data, name) == 0)
              break;
          if (i == n)
            return invalid (c, path, "'required' names '%s', which is not in 'properties'", name);
          node->required[i] = TRUE;
        }
    }
  /* closing costs, from the last property back */
  for (guint k = n; k-- > 0;)
    node->req_rest[k] = node->req_rest[k + 1] +
                        (node->required[k] ? 1 + node->key_len[k] + 1 + node->props[k]->min_len : 0);
  node->after_comma[n] = G_MAXUINT / 4;
  for (guint k = n; k-- > 0;)
    {
      /* the next member is property k (then the rest), or a later one if k is optional */
      const guint here = node->key_len[k] + 1 + node->props[k]->min_len + node->req_rest[k + 1] + 1;
      node->after_comma[k] = node->required[k] ? here : MIN (here, node->after_comma[k + 1]);
    }
  return TRUE;
}

static guint
node_min_len (const HzJsonNode *n)
{
  if (n->n_lits)
    return n->min_len;
  guint m = G_MAXUINT;
  if (n->types & HZ_JT_OBJECT)
    m = MIN (m, n->any_keys || n->req_rest[0] == 0 ? 2 : n->req_rest[0] + 1);
  if (n->types & HZ_JT_ARRAY)
    m = MIN (m, n->min_items == 0 ? 2 : 2 + n->min_items * n->items->min_len + n->min_items - 1);
  if (n->types & HZ_JT_STRING)
    m = MIN (m, 2);
  if (n->types & (HZ_JT_NUMBER | HZ_JT_INTEGER))
    m = MIN (m, 1);
  if (n->types & (HZ_JT_BOOLEAN | HZ_JT_NULL))
    m = MIN (m, 4);
  return m;
}

/* "$ref": a JSON pointer into the same document ("#/$defs/Name"), compiled once; a
 * reference that leads back to itself is refused (the automaton's schemas are trees). */
static HzJsonNode *
compile_ref (Compile *c, JsonObject *o, const char *path, guint depth)
{
  const char *ref = string_of (json_object_get_member (o, "$ref"));
  if (ref == NULL || !g_str_has_prefix (ref, "#"))
    {
      refuse (c, path, "$ref", "only references inside the schema (\"#/...\")");
      return NULL;
    }
  g_autoptr (GList) members = json_object_get_members (o);
  for (GList *l = members; l; l = l->next)
    if (strcmp (l->data, "$ref") != 0 && strcmp (l->data, "$defs") != 0 &&
        strcmp (l->data, "definitions") != 0 && !g_strv_contains (annotations, l->data))
      {
        refuse (c, path, l->data, "beside '$ref'");
        return NULL;
      }
  gpointer done = NULL;
  if (g_hash_table_lookup_extended (c->refs, ref, NULL, &done))
    {
      if (done == NULL)
        refuse (c, path, "$ref", "a recursive reference (a schema that contains itself)");
      return done;
    }
  /* the pointer, RFC 6901: /-separated names, ~1 for '/', ~0 for '~' */
  JsonNode *at = c->root;
  g_auto (GStrv) steps = g_strsplit (ref + 1, "/", -1);
  for (guint i = 1; steps[0] && steps[i] && at; i++)
    {
      g_autoptr (GString) name = g_string_new (NULL);
      for (const char *p = steps[i]; *p; p++)
        if (p[0] == '~' && (p[1] == '0' || p[1] == '1'))
          g_string_append_c (name, *++p == '0' ? '~' : '/');
        else
          g_string_append_c (name, *p);
      at = JSON_NODE_HOLDS_OBJECT (at) ? json_object_get_member (json_node_get_object (at), name->str)
                                       : NULL;
    }
  if (at == NULL || (steps[0] && *steps[0]))
    {
      invalid (c, path, "'$ref' \"%s\" names nothing in the schema", ref);
      return NULL;
    }
  g_hash_table_insert (c->refs, g_strdup (ref), NULL);
  /* errors inside name the place in the document: the pointer itself */
  HzJsonNode *node = compile_node (c, at, ref + 1, depth);
  if (node)
    g_hash_table_insert (c->refs, g_strdup (ref), node);
  return node;
}

/* anyOf / oneOf whose branches the first byte of a value tells apart (Pydantic's
 * Optional: a type or null): the union of their types, the object and the array branch
 * (at most one each) kept for their keywords; or, when every branch is an enum or const,
 * the union of their values. Either way at most one branch matches, so oneOf is anyOf. */
static HzJsonNode *
compile_union (Compile *c, JsonObject *o, const char *kw, const char *path, guint depth)
{
  JsonNode *list = json_object_get_member (o, kw);
  g_autoptr (GList) members = json_object_get_members (o);
  for (GList *l = members; l; l = l->next)
    if (strcmp (l->data, kw) != 0 && strcmp (l->data, "$defs") != 0 &&
        strcmp (l->data, "definitions") != 0 && !g_strv_contains (annotations, l->data))
      {
        g_autofree char *why = g_strdup_printf ("beside '%s'", kw);
        refuse (c, path, l->data, why);
        return NULL;
      }
  if (!JSON_NODE_HOLDS_ARRAY (list) || json_array_get_length (json_node_get_array (list)) == 0)
    {
      invalid (c, path, "'%s' must be a non-empty array of schemas", kw);
      return NULL;
    }
  JsonArray *a = json_node_get_array (list);
  HzJsonNode *node = g_new0 (HzJsonNode, 1);
  g_ptr_array_add (c->schema->nodes, node);
  node->items = &any_node;
  node->max_items = G_MAXUINT;
  node->min_len = G_MAXUINT;
  g_autoptr (GPtrArray) lits = g_ptr_array_new_with_free_func (g_free);
  guint n_enum = 0;
  g_autofree char *kpath = path_child (path, kw);
  for (guint i = 0; i < json_array_get_length (a); i++)
    {
      g_autofree char *index = g_strdup_printf ("%u", i);
      g_autofree char *sub = path_child (kpath, index);
      HzJsonNode *b = compile_node (c, json_array_get_element (a, i), sub, depth);
      if (b == NULL)
        return NULL;
      node->min_len = MIN (node->min_len, b->min_len);
      if (b->n_lits)
        {
          n_enum++;
          for (guint k = 0; k < b->n_lits; k++)
            if (!g_ptr_array_find_with_equal_func (lits, b->lits[k], g_str_equal, NULL))
              g_ptr_array_add (lits, g_strdup (b->lits[k]));
          continue;
        }
      const guint clash = node->types & b->types & (HZ_JT_OBJECT | HZ_JT_ARRAY);
      if (clash)
        {
          refuse (c, path, kw, clash & HZ_JT_OBJECT ? "two branches that both allow objects"
                                                    : "two branches that both allow arrays");
          return NULL;
        }
      node->types |= b->types;
      if (b->types & HZ_JT_OBJECT)
        node->as_object = b->as_object ? b->as_object : b;
      if (b->types & HZ_JT_ARRAY)
        node->as_array = b->as_array ? b->as_array : b;
    }
  if (n_enum > 0 && n_enum < json_array_get_length (a))
    {
      refuse (c, path, kw, "enum or const branches beside other schemas");
      return NULL;
    }
  if (lits->len > HZ_JSON_MAX_CHOICES)
    {
      refuse (c, path, kw, "more than 64 values");
      return NULL;
    }
  if (node->types & HZ_JT_NUMBER)
    node->types &= ~HZ_JT_INTEGER;
  if (lits->len)
    {
      node->n_lits = lits->len;
      node->lit_len = g_new (guint, lits->len);
      for (guint i = 0; i < lits->len; i++)
        node->lit_len[i] = (guint) strlen (lits->pdata[i]);
      g_ptr_array_add (lits, NULL);
      node->lits = (char **) g_ptr_array_free (g_steal_pointer (&lits), FALSE);
    }
  return node;
}

static HzJsonNode *
compile_node (Compile *c, JsonNode *j, const char *path, guint depth)
{
  if (JSON_NODE_HOLDS_VALUE (j) && json_node_get_value_type (j) == G_TYPE_BOOLEAN &&
      json_node_get_boolean (j))
    return &any_node;   /* the schema `true` */
  if (!JSON_NODE_HOLDS_OBJECT (j))
    {
      invalid (c, path, "a schema must be an object");
      return NULL;
    }
  JsonObject *o = json_node_get_object (j);
  if (json_object_has_member (o, "$ref"))
    return compile_ref (c, o, path, depth);
  if (json_object_has_member (o, "anyOf") || json_object_has_member (o, "oneOf"))
    return compile_union (c, o, json_object_has_member (o, "anyOf") ? "anyOf" : "oneOf", path,
                          depth);
  g_autoptr (GList) members = json_object_get_members (o);
  for (GList *l = members; l; l = l->next)
    if (!g_strv_contains (annotations, l->data) && !g_strv_contains (used, l->data))
      {
        refuse (c, path, l->data, NULL);
        return NULL;
      }
  HzJsonNode *node = g_new0 (HzJsonNode, 1);
  g_ptr_array_add (c->schema->nodes, node);
  node->items = &any_node;
  node->max_items = G_MAXUINT;
  JsonNode *t = json_object_get_member (o, "type");
  JsonNode *e = json_object_get_member (o, "enum"), *k = json_object_get_member (o, "const");
  if (t && !read_types (c, t, path, &node->types))
    return NULL;
  if (t == NULL)
    node->types = json_object_has_member (o, "properties") ? HZ_JT_OBJECT
                  : json_object_has_member (o, "items")    ? HZ_JT_ARRAY
                                                           : HZ_JT_ALL;
  if ((node->types & HZ_JT_NUMBER))
    node->types &= ~HZ_JT_INTEGER;   /* every integer is a number */
  if (e && k)
    {
      refuse (c, path, "const", "with 'enum' as well");
      return NULL;
    }
  if ((e || k) && !read_literals (c, node, e ? e : k, e == NULL, path))
    return NULL;
  if (node->n_lits > 0)
    return node;
  if (!read_count (c, o, "minItems", path, &node->min_items) ||
      !read_count (c, o, "maxItems", path, &node->max_items))
    return NULL;
  if (node->min_items > node->max_items)
    {
      invalid (c, path, "'minItems' is greater than 'maxItems'");
      return NULL;
    }
  JsonNode *items = json_object_get_member (o, "items");
  if (items)
    {
      if (depth + 1 > HZ_JSON_MAX_DEPTH)
        {
          refuse (c, path, "items", "nested more than 32 deep");
          return NULL;
        }
      g_autofree char *sub = path_child (path, "items");
      if (!(node->items = compile_node (c, items, sub, depth + 1)))
        return NULL;
    }
  JsonNode *extra = json_object_get_member (o, "additionalProperties");
  if (extra && !JSON_NODE_HOLDS_OBJECT (extra) &&
      !(JSON_NODE_HOLDS_VALUE (extra) && json_node_get_value_type (extra) == G_TYPE_BOOLEAN))
    {
      invalid (c, path, "'additionalProperties' must be a boolean or a schema");
      return NULL;
    }
  if (!read_properties (c, node, o, path, depth))
    return NULL;
  /* members not in 'properties' are never generated, whatever additionalProperties says */
  node->min_len = node_min_len (node);
  return node;
}

/* The deepest bracket nesting of a JSON text, strings skipped (json-glib's parser
 * recurses once per level: a hostile text must not reach it). */
static guint
text_depth (const char *s, gsize n)
{
  guint depth = 0, deepest = 0;
  for (gsize i = 0; i < n; i++)
    switch (s[i])
      {
      case '"':
        for (i++; i < n && s[i] != '"'; i++)
          i += s[i] == '\\';
        break;
      case '[': case '{':
        deepest = MAX (deepest, ++depth);
        break;
      case ']': case '}':
        depth -= depth > 0;
        break;
      default:
        break;
      }
  return deepest;
}

HzJsonSchema *
hz_json_schema_compile (const char *json, gssize len, char **keyword, GError **error)
{
  if (keyword)
    *keyword = NULL;
  const gsize n = len < 0 ? strlen (json) : (gsize) len;
  if (!g_utf8_validate_len (json, n, NULL))
    {
      g_set_error_literal (error, HZ_JSON_SCHEMA_ERROR, HZ_JSON_SCHEMA_ERROR_INVALID,
                           "the schema is not UTF-8 text");
      return NULL;
    }
  if (text_depth (json, n) > 4 * HZ_JSON_MAX_DEPTH)
    {
      g_set_error (error, HZ_JSON_SCHEMA_ERROR, HZ_JSON_SCHEMA_ERROR_UNSUPPORTED,
                   "the schema nests arrays and objects more than %d deep",
                   4 * HZ_JSON_MAX_DEPTH);
      return NULL;
    }
  g_autoptr (JsonParser) parser = json_parser_new_immutable ();
  g_autoptr (GError) local = NULL;
  if (!json_parser_load_from_data (parser, json, (gssize) n, &local) ||
      json_parser_get_root (parser) == NULL)
    {
      g_set_error (error, HZ_JSON_SCHEMA_ERROR, HZ_JSON_SCHEMA_ERROR_INVALID,
                   "the schema is not JSON: %s", local ? local->message : "it is empty");
      return NULL;
    }
  g_autoptr (HzJsonSchema) schema = schema_new (NULL);
  g_autoptr (GHashTable) refs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  Compile c = { schema, keyword, error, json_parser_get_root (parser), refs };
  schema->root = compile_node (&c, c.root, "", 0);
  return schema->root ? g_steal_pointer (&schema) : NULL;
}
