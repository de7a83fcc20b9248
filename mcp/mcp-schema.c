/* mcp-schema.c — tools' arguments against their input schema (mcp-schema.h). */
#include "mcp-schema.h"

#include <math.h>
#include <string.h>

G_DEFINE_QUARK (hz-mcp-error-quark, hz_mcp_error)

static gboolean
fail (GError **error, const char *where, const char *fmt, ...) G_GNUC_PRINTF (3, 4);

static gboolean
fail (GError **error, const char *where, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *what = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (error, HZ_MCP_ERROR, HZ_MCP_ERROR_INVALID_ARGS, "%s: %s", where, what);
  return FALSE;
}

static gboolean
is_number (JsonNode *v)
{
  if (!JSON_NODE_HOLDS_VALUE (v))
    return FALSE;
  const GType t = json_node_get_value_type (v);
  return t == G_TYPE_INT64 || t == G_TYPE_DOUBLE;
}

static gboolean
type_ok (const char *type, JsonNode *v)
{
  if (strcmp (type, "object") == 0)
    return JSON_NODE_HOLDS_OBJECT (v);
  if (strcmp (type, "array") == 0)
    return JSON_NODE_HOLDS_ARRAY (v);
  if (strcmp (type, "string") == 0)
    return JSON_NODE_HOLDS_VALUE (v) && json_node_get_value_type (v) == G_TYPE_STRING;
  if (strcmp (type, "boolean") == 0)
    return JSON_NODE_HOLDS_VALUE (v) && json_node_get_value_type (v) == G_TYPE_BOOLEAN;
  if (strcmp (type, "number") == 0)
    return is_number (v);
  if (strcmp (type, "integer") == 0)
    {
      if (!is_number (v))
        return FALSE;
      const double d = json_node_get_double (v);
      return json_node_get_value_type (v) == G_TYPE_INT64 || (isfinite (d) && d == floor (d));
    }
  g_critical ("hz_mcp_schema_check: unknown type \"%s\"", type);
  return FALSE;
}

static gboolean check (JsonObject *s, JsonNode *v, const char *where, GError **error);

static gboolean
check_object (JsonObject *s, JsonObject *o, const char *where, GError **error)
{
  JsonObject *props = json_object_has_member (s, "properties")
                        ? json_object_get_object_member (s, "properties") : NULL;
  if (json_object_has_member (s, "required"))
    {
      JsonArray *req = json_object_get_array_member (s, "required");
      for (guint i = 0; i < json_array_get_length (req); i++)
        {
          const char *name = json_array_get_string_element (req, i);
          if (!json_object_has_member (o, name))
            return fail (error, where, "\"%s\" is required", name);
        }
    }
  const gboolean closed = json_object_has_member (s, "additionalProperties") &&
                          !json_object_get_boolean_member (s, "additionalProperties");
  g_autoptr (GList) members = json_object_get_members (o);
  for (GList *l = members; l; l = l->next)
    {
      const char *name = l->data;
      JsonObject *ps = props && json_object_has_member (props, name)
                         ? json_object_get_object_member (props, name) : NULL;
      if (ps == NULL)
        {
          if (closed)
            {
              g_autofree char *shown = g_strescape (name, NULL);
              return fail (error, where, "unknown member \"%.64s\"", shown);
            }
          continue;
        }
      g_autofree char *sub = g_strdup_printf ("%s.%s", where, name);
      if (!check (ps, json_object_get_member (o, name), sub, error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
check (JsonObject *s, JsonNode *v, const char *where, GError **error)
{
  static const char *const known[] = { "type", "properties", "required", "additionalProperties",
                                       "items", "enum", "minimum", "maximum", "minLength",
                                       "maxLength", "minItems", "maxItems", "description",
                                       "default", "title", NULL };
  g_autoptr (GList) keys = json_object_get_members (s);
  for (GList *l = keys; l; l = l->next)
    if (!g_strv_contains (known, l->data))
      g_critical ("hz_mcp_schema_check: unsupported keyword \"%s\"", (const char *) l->data);
  const char *type = json_object_get_string_member_with_default (s, "type", NULL);
  if (type && !type_ok (type, v))
    return fail (error, where, "must be %s %s", strchr ("aeiou", type[0]) ? "an" : "a", type);
  if (json_object_has_member (s, "enum"))
    {
      JsonArray *e = json_object_get_array_member (s, "enum");
      const char *str = JSON_NODE_HOLDS_VALUE (v) && json_node_get_value_type (v) == G_TYPE_STRING
                          ? json_node_get_string (v) : NULL;
      g_autoptr (GString) list = g_string_new (NULL);
      for (guint i = 0; i < json_array_get_length (e); i++)
        {
          const char *x = json_array_get_string_element (e, i);
          if (str && strcmp (str, x) == 0)
            return TRUE;
          g_string_append_printf (list, "%s%s", i ? ", " : "", x);
        }
      return fail (error, where, "must be one of %s", list->str);
    }
  if (is_number (v))
    {
      const double d = json_node_get_double (v);
      if (json_object_has_member (s, "minimum") &&
          !(d >= json_object_get_double_member (s, "minimum")))
        return fail (error, where, "must be at least %g",
                     json_object_get_double_member (s, "minimum"));
      if (json_object_has_member (s, "maximum") &&
          !(d <= json_object_get_double_member (s, "maximum")))
        return fail (error, where, "must be at most %g",
                     json_object_get_double_member (s, "maximum"));
    }
  if (JSON_NODE_HOLDS_VALUE (v) && json_node_get_value_type (v) == G_TYPE_STRING)
    {
      const glong n = g_utf8_strlen (json_node_get_string (v), -1);
      if (json_object_has_member (s, "minLength") &&
          n < json_object_get_int_member (s, "minLength"))
        return fail (error, where, "must have at least %" G_GINT64_FORMAT " characters",
                     json_object_get_int_member (s, "minLength"));
      if (json_object_has_member (s, "maxLength") &&
          n > json_object_get_int_member (s, "maxLength"))
        return fail (error, where, "must have at most %" G_GINT64_FORMAT " characters",
                     json_object_get_int_member (s, "maxLength"));
    }
  if (JSON_NODE_HOLDS_ARRAY (v))
    {
      JsonArray *a = json_node_get_array (v);
      const guint n = json_array_get_length (a);
      if (json_object_has_member (s, "minItems") && n < json_object_get_int_member (s, "minItems"))
        return fail (error, where, "needs at least %" G_GINT64_FORMAT " items",
                     json_object_get_int_member (s, "minItems"));
      if (json_object_has_member (s, "maxItems") && n > json_object_get_int_member (s, "maxItems"))
        return fail (error, where, "takes at most %" G_GINT64_FORMAT " items",
                     json_object_get_int_member (s, "maxItems"));
      JsonObject *items = json_object_has_member (s, "items")
                            ? json_object_get_object_member (s, "items") : NULL;
      for (guint i = 0; items && i < n; i++)
        {
          g_autofree char *sub = g_strdup_printf ("%s[%u]", where, i);
          if (!check (items, json_array_get_element (a, i), sub, error))
            return FALSE;
        }
    }
  if (JSON_NODE_HOLDS_OBJECT (v))
    return check_object (s, json_node_get_object (v), where, error);
  return TRUE;
}

gboolean
hz_mcp_schema_check (JsonNode *schema, JsonNode *value, const char *where, GError **error)
{
  g_return_val_if_fail (JSON_NODE_HOLDS_OBJECT (schema), FALSE);
  return check (json_node_get_object (schema), value, where, error);
}

const char *
hz_mcp_arg_string (JsonObject *args, const char *name, const char *fallback)
{
  return json_object_get_string_member_with_default (args, name, fallback);
}

gint64
hz_mcp_arg_int (JsonObject *args, const char *name, gint64 fallback)
{
  if (!json_object_has_member (args, name))
    return fallback;
  JsonNode *v = json_object_get_member (args, name);
  if (json_node_get_value_type (v) == G_TYPE_INT64)
    return json_node_get_int (v);
  return (gint64) json_node_get_double (v);   /* an integral double, checked */
}

double
hz_mcp_arg_double (JsonObject *args, const char *name, double fallback)
{
  if (!json_object_has_member (args, name))
    return fallback;
  return json_node_get_double (json_object_get_member (args, name));
}
