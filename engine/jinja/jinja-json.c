/* engine/jinja/jinja-json.c — JSON in (json-glib nodes) and out (Python's json.dumps),
 * see jinja-json.h. The output rules are those of Python's json module (encoder.py):
 * escapes, separators, indentation, key conversion, float repr. */
#include "jinja-json.h"
#include "jinja-error.h"

#include <math.h>
#include <string.h>

static HzjValue *
from_json (JsonNode *node, gboolean data, guint depth, GError **error)
{
  if (depth > HZJ_MAX_VALUE_DEPTH)
    {
      hzj_error_set (error, HZ_JINJA_ERROR_INPUT, "ValueError", 0,
                     "the variables nest more than %d arrays or objects deep", HZJ_MAX_VALUE_DEPTH);
      return NULL;
    }
  switch (JSON_NODE_TYPE (node))
    {
    case JSON_NODE_OBJECT:
      {
        JsonObject *o = json_node_get_object (node);
        HzjValue *d = hzj_dict_new ();
        g_autoptr (GList) members = json_object_get_members (o);
        for (GList *m = members; m; m = m->next)
          {
            HzjValue *v = from_json (json_object_get_member (o, m->data), data, depth + 1, error);
            if (!v)
              {
                hzj_unref (d);
                return NULL;
              }
            hzj_dict_set (d, hzj_str (m->data, strlen (m->data), data), v);
          }
        return d;
      }
    case JSON_NODE_ARRAY:
      {
        JsonArray *a = json_node_get_array (node);
        HzjValue *l = hzj_list_new (FALSE);
        for (guint i = 0; i < json_array_get_length (a); i++)
          {
            HzjValue *v = from_json (json_array_get_element (a, i), data, depth + 1, error);
            if (!v)
              {
                hzj_unref (l);
                return NULL;
              }
            hzj_list_push (l, v);
          }
        return l;
      }
    case JSON_NODE_NULL:
      return hzj_none ();
    case JSON_NODE_VALUE:
      switch (json_node_get_value_type (node))
        {
        case G_TYPE_BOOLEAN:
          return hzj_bool (json_node_get_boolean (node));
        case G_TYPE_INT64:
          return hzj_int (json_node_get_int (node));
        case G_TYPE_DOUBLE:
          return hzj_float (json_node_get_double (node));
        case G_TYPE_STRING:
          {
            const char *s = json_node_get_string (node);
            if (!g_utf8_validate (s, -1, NULL))
              {
                hzj_error_set (error, HZ_JINJA_ERROR_INPUT, "ValueError", 0, "a string of the variables is not UTF-8");
                return NULL;
              }
            return hzj_str (s, strlen (s), data);
          }
        default:
          break;
        }
      break;
    }
  hzj_error_set (error, HZ_JINJA_ERROR_INPUT, "ValueError", 0, "a value of the variables has no JSON type");
  return NULL;
}

HzjValue *
hzj_from_json (JsonNode *node, gboolean data, GError **error)
{
  return from_json (node, data, 0, error);
}

/* ---- json.dumps ---- */

typedef struct {
  HzjCtx *ctx;
  const char *indent, *item_sep, *key_sep;
  gboolean sort_keys, ensure_ascii;
  gboolean over; /* the text passed max_output */
  GString *out;
} Dumper;

static void
dump_string (Dumper *d, const char *s, gsize len)
{
  GString *o = d->out;
  g_string_append_c (o, '"');
  for (gsize k = 0; k < len;)
    {
      gsize n;
      const gunichar c = hzj_utf8_get (s + k, len - k, &n);
      switch (c)
        {
        case '"': g_string_append (o, "\\\""); break;
        case '\\': g_string_append (o, "\\\\"); break;
        case '\n': g_string_append (o, "\\n"); break;
        case '\r': g_string_append (o, "\\r"); break;
        case '\t': g_string_append (o, "\\t"); break;
        case '\b': g_string_append (o, "\\b"); break;
        case '\f': g_string_append (o, "\\f"); break;
        default:
          if (c < 0x20)
            g_string_append_printf (o, "\\u%04x", c);
          else if (c >= 0x7f && d->ensure_ascii)
            {
              if (c >= 0x10000)
                g_string_append_printf (o, "\\u%04x\\u%04x", 0xd800 + ((c - 0x10000) >> 10),
                                        0xdc00 + ((c - 0x10000) & 0x3ff));
              else
                g_string_append_printf (o, "\\u%04x", c);
            }
          else
            g_string_append_len (o, s + k, (gssize) n);
        }
      k += n;
    }
  g_string_append_c (o, '"');
}

static void
dump_float (Dumper *d, double x)
{
  char buf[32];
  if (isnan (x))
    g_string_append (d->out, "NaN");
  else if (isinf (x))
    g_string_append (d->out, x < 0 ? "-Infinity" : "Infinity");
  else
    {
      hzj_float_repr (x, buf);
      g_string_append (d->out, buf);
    }
}

static gboolean dump (Dumper *d, HzjValue *v, guint level);

static void
newline_indent (Dumper *d, guint level)
{
  const gsize ind = strlen (d->indent);
  if (ind && level > (d->ctx->max_output - d->out->len) / ind)
    {
      d->over = TRUE; /* reported by dump() */
      return;
    }
  g_string_append_c (d->out, '\n');
  for (guint i = 0; i < level; i++)
    g_string_append (d->out, d->indent);
}

/* a dict key as json.dumps converts it */
static gboolean
dump_key (Dumper *d, HzjValue *k)
{
  char num[32];
  switch (k->kind)
    {
    case HZJ_STR:
      dump_string (d, k->str.s, k->str.len);
      return TRUE;
    case HZJ_INT:
      g_snprintf (num, sizeof num, "\"%" G_GINT64_FORMAT "\"", k->i);
      g_string_append (d->out, num);
      return TRUE;
    case HZJ_FLOAT:
      g_string_append_c (d->out, '"');
      dump_float (d, k->f);
      g_string_append_c (d->out, '"');
      return TRUE;
    case HZJ_BOOL:
      g_string_append (d->out, k->b ? "\"true\"" : "\"false\"");
      return TRUE;
    case HZJ_NONE:
      g_string_append (d->out, "\"null\"");
      return TRUE;
    default:
      hzj_type_error (d->ctx, "keys must be str, int, float, bool or None, not %s", hzj_type_name (k));
      return FALSE;
    }
}

static int
cmp_keys (gconstpointer a, gconstpointer b, gpointer user)
{
  HzjValue *x = *(HzjValue *const *) a, *y = *(HzjValue *const *) b;
  gboolean *bad = user;
  int c = 0;
  if (!hzj_compare (x, y, &c))
    *bad = TRUE;
  return c;
}

static gboolean
dump_dict (Dumper *d, HzjValue *v, guint level)
{
  HzjDict *dict = v->dict;
  const guint n = dict->keys->len;
  if (n == 0)
    {
      g_string_append (d->out, "{}");
      return TRUE;
    }
  g_autofree guint *order = g_new (guint, n);
  for (guint i = 0; i < n; i++)
    order[i] = i;
  if (d->sort_keys)
    {
      g_autoptr (GPtrArray) keys = g_ptr_array_new ();
      for (guint i = 0; i < n; i++)
        g_ptr_array_add (keys, dict->keys->pdata[i]);
      gboolean bad = FALSE;
      g_ptr_array_sort_with_data (keys, cmp_keys, &bad);
      if (bad)
        {
          hzj_type_error (d->ctx, "'<' not supported between dict keys of different types (sort_keys)");
          return FALSE;
        }
      for (guint i = 0; i < n; i++)
        for (guint j = 0; j < n; j++)
          if (dict->keys->pdata[j] == keys->pdata[i])
            order[i] = j;
    }
  g_string_append_c (d->out, '{');
  if (d->indent)
    newline_indent (d, level + 1);
  for (guint i = 0; i < n; i++)
    {
      if (i)
        {
          g_string_append (d->out, d->item_sep);
          if (d->indent)
            newline_indent (d, level + 1);
        }
      if (!dump_key (d, dict->keys->pdata[order[i]]))
        return FALSE;
      g_string_append (d->out, d->key_sep);
      if (!dump (d, dict->vals->pdata[order[i]], level + 1))
        return FALSE;
    }
  if (d->indent)
    newline_indent (d, level);
  g_string_append_c (d->out, '}');
  return TRUE;
}

static gboolean
dump (Dumper *d, HzjValue *v, guint level)
{
  char num[32];
  if (d->over || d->out->len > d->ctx->max_output)
    return hzj_fail_size (d->ctx) != NULL;
  switch (v->kind)
    {
    case HZJ_NONE:
      g_string_append (d->out, "null");
      return TRUE;
    case HZJ_BOOL:
      g_string_append (d->out, v->b ? "true" : "false");
      return TRUE;
    case HZJ_INT:
      g_snprintf (num, sizeof num, "%" G_GINT64_FORMAT, v->i);
      g_string_append (d->out, num);
      return TRUE;
    case HZJ_FLOAT:
      dump_float (d, v->f);
      return TRUE;
    case HZJ_STR:
      dump_string (d, v->str.s, v->str.len);
      return TRUE;
    case HZJ_LIST:
    case HZJ_TUPLE:
      if (v->items->len == 0)
        {
          g_string_append (d->out, "[]");
          return TRUE;
        }
      g_string_append_c (d->out, '[');
      if (d->indent)
        newline_indent (d, level + 1);
      for (guint i = 0; i < v->items->len; i++)
        {
          if (i)
            {
              g_string_append (d->out, d->item_sep);
              if (d->indent)
                newline_indent (d, level + 1);
            }
          if (!dump (d, v->items->pdata[i], level + 1))
            return FALSE;
        }
      if (d->indent)
        newline_indent (d, level);
      g_string_append_c (d->out, ']');
      return TRUE;
    case HZJ_DICT:
      return dump_dict (d, v, level);
    default:
      hzj_type_error (d->ctx, "Object of type %s is not JSON serializable", hzj_type_name (v));
      return FALSE;
    }
}

gboolean
hzj_tojson (HzjCtx *ctx, HzjValue *v, const char *indent, const char *item_sep,
            const char *key_sep, gboolean sort_keys, gboolean ensure_ascii, HzjBuf *out)
{
  Dumper d = {
    .ctx = ctx, .indent = indent,
    .item_sep = item_sep ? item_sep : indent ? "," : ", ",
    .key_sep = key_sep ? key_sep : ": ",
    .sort_keys = sort_keys, .ensure_ascii = ensure_ascii,
    .out = g_string_new (NULL),
  };
  gboolean ok = dump (&d, v, 0);
  if (ok && (d.over || d.out->len > ctx->max_output))
    ok = hzj_fail_size (ctx) != NULL;
  if (ok && !hzj_buf_append (out, d.out->str, d.out->len, hzj_has_data (v)))
    ok = hzj_fail_size (ctx) != NULL;
  g_string_free (d.out, TRUE);
  return ok;
}
