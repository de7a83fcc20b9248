/* engine/jinja/jinja.c — the public face of the chat-template interpreter (see jinja.h):
 * parsing, the render variables and their tagging, bounds, and the output pieces. */
#include "jinja.h"
#include "jinja-builtins.h"
#include "jinja-eval.h"
#include "jinja-json.h"
#include "jinja-parser.h"
#include "jinja-scope.h"

#include <string.h>

#define DEFAULT_MAX_OUTPUT (16 * 1024 * 1024)
#define DEFAULT_MAX_STEPS 20000000
#define DEFAULT_MAX_DEPTH 200

struct _HzJinjaTemplate {
  HzjNode *root;
};

void
hz_jinja_piece_free (HzJinjaPiece *piece)
{
  if (piece)
    {
      g_free (piece->text);
      g_free (piece);
    }
}

HzJinjaTemplate *
hz_jinja_template_new (const char *source, gssize len, GError **error)
{
  g_return_val_if_fail (source != NULL, NULL);
  const gsize n = len < 0 ? strlen (source) : (gsize) len;
  if (memchr (source, '\0', n) || !g_utf8_validate (source, (gssize) n, NULL))
    {
      g_set_error (error, HZ_JINJA_ERROR, HZ_JINJA_ERROR_INPUT,
                   "the chat template is not valid UTF-8 text (or holds a NUL byte)");
      return NULL;
    }
  HzjNode *root = hzj_parse (source, n, error);
  if (!root)
    return NULL;
  HzJinjaTemplate *t = g_new0 (HzJinjaTemplate, 1);
  t->root = root;
  return t;
}

void
hz_jinja_template_free (HzJinjaTemplate *t)
{
  if (t)
    {
      hzj_node_free (t->root);
      g_free (t);
    }
}

const char *const *
hz_jinja_default_markup_vars (void)
{
  static const char *const vars[] = { "bos_token", "eos_token", "unk_token", "pad_token",
                                      "sep_token", "cls_token", "mask_token", NULL };
  return vars;
}

/* messages: as any value, except that each message's "role" is markup */
static HzjValue *
messages_from_json (JsonNode *node, gboolean data, GError **error)
{
  if (!JSON_NODE_HOLDS_ARRAY (node))
    return hzj_from_json (node, data, error);
  JsonArray *a = json_node_get_array (node);
  HzjValue *list = hzj_list_new (FALSE);
  for (guint i = 0; i < json_array_get_length (a); i++)
    {
      JsonNode *m = json_array_get_element (a, i);
      HzjValue *v;
      if (JSON_NODE_HOLDS_OBJECT (m))
        {
          JsonObject *o = json_node_get_object (m);
          v = hzj_dict_new ();
          g_autoptr (GList) members = json_object_get_members (o);
          for (GList *l = members; l && v; l = l->next)
            {
              const char *name = l->data;
              HzjValue *mv = hzj_from_json (json_object_get_member (o, name), data && strcmp (name, "role") != 0, error);
              if (!mv)
                g_clear_pointer (&v, hzj_unref);
              else
                hzj_dict_set (v, hzj_str (name, strlen (name), data), mv);
            }
        }
      else
        v = hzj_from_json (m, data, error);
      if (!v)
        {
          hzj_unref (list);
          return NULL;
        }
      hzj_list_push (list, v);
    }
  return list;
}

static gint64
render_time (void)
{
  const char *epoch = g_getenv ("SOURCE_DATE_EPOCH");
  if (epoch && *epoch)
    {
      char *end = NULL;
      const gint64 t = g_ascii_strtoll (epoch, &end, 10);
      if (end && *end == '\0')
        return t;
    }
  return g_get_real_time () / G_USEC_PER_SEC;
}

static gboolean
is_markup_var (const char *name, const char *const *markup_vars)
{
  for (int i = 0; markup_vars[i]; i++)
    if (!strcmp (markup_vars[i], name))
      return TRUE;
  return FALSE;
}

/* the variables' scope (globals in its parent) */
static HzjScope *
bind_vars (HzjCtx *ctx, JsonObject *vars, const char *const *markup_vars, GError **error)
{
  HzjScope *globals = hzj_scope_new (ctx, NULL);
  hzj_globals_install (globals);
  HzjScope *s = hzj_scope_new (ctx, globals);
  hzj_scope_unref (globals);
  g_autoptr (GList) members = vars ? json_object_get_members (vars) : NULL;
  for (GList *l = members; l; l = l->next)
    {
      const char *name = l->data;
      JsonNode *node = json_object_get_member (vars, name);
      const gboolean data = !is_markup_var (name, markup_vars);
      HzjValue *v = !strcmp (name, "messages") ? messages_from_json (node, data, error)
                                               : hzj_from_json (node, data, error);
      if (!v)
        {
          hzj_scope_unref (s);
          return NULL;
        }
      hzj_scope_set (s, name, v);
    }
  return s;
}

static void
add_piece (GPtrArray *pieces, const char *s, gsize len, gboolean markup)
{
  if (len == 0)
    return;
  HzJinjaPiece *p = g_new0 (HzJinjaPiece, 1);
  p->text = g_malloc (len + 1);
  memcpy (p->text, s, len);
  p->text[len] = '\0';
  p->len = len;
  p->markup = markup;
  g_ptr_array_add (pieces, p);
}

GPtrArray *
hz_jinja_template_render_pieces (const HzJinjaTemplate *t, JsonObject *vars,
                                 const char *const *markup_vars, const HzJinjaLimits *limits,
                                 GError **error)
{
  g_return_val_if_fail (t != NULL, NULL);
  HzjCtx ctx = {
    .max_output = limits && limits->max_output ? limits->max_output : DEFAULT_MAX_OUTPUT,
    .max_steps = limits && limits->max_steps ? limits->max_steps : DEFAULT_MAX_STEPS,
    .max_depth = limits && limits->max_depth ? limits->max_depth : DEFAULT_MAX_DEPTH,
    .now = render_time (),
    .live_scopes = g_hash_table_new (NULL, NULL),
    .namespaces = g_ptr_array_new_with_free_func ((GDestroyNotify) hzj_unref),
  };
  GPtrArray *pieces = NULL;
  HzjScope *scope = bind_vars (&ctx, vars, markup_vars ? markup_vars : hz_jinja_default_markup_vars (), error);
  if (scope)
    {
      HzjBuf out;
      hzj_buf_init (&out, ctx.max_output);
      if (hzj_render (&ctx, t->root, scope, &out))
        {
          pieces = g_ptr_array_new_with_free_func ((GDestroyNotify) hz_jinja_piece_free);
          gsize at = 0;
          for (guint i = 0; i < out.runs->len; i++)
            {
              const HzjRun *r = &g_array_index (out.runs, HzjRun, i);
              add_piece (pieces, out.text->str + at, r->start - at, TRUE);
              add_piece (pieces, out.text->str + r->start, r->end - r->start, FALSE);
              at = r->end;
            }
          add_piece (pieces, out.text->str + at, out.text->len - at, TRUE);
        }
      else if (ctx.error)
        g_propagate_error (error, g_steal_pointer (&ctx.error));
      else
        g_set_error (error, HZ_JINJA_ERROR, HZ_JINJA_ERROR_RUNTIME, "the template could not be rendered");
      hzj_buf_clear (&out);
      hzj_scope_unref (scope);
    }
  hzj_scopes_release (&ctx);
  g_clear_error (&ctx.error);
  g_hash_table_unref (ctx.live_scopes);
  g_ptr_array_unref (ctx.namespaces);
  return pieces;
}

char *
hz_jinja_template_render (const HzJinjaTemplate *t, JsonObject *vars,
                          const HzJinjaLimits *limits, gsize *len, GError **error)
{
  g_autoptr (GPtrArray) pieces = hz_jinja_template_render_pieces (t, vars, NULL, limits, error);
  if (!pieces)
    return NULL;
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < pieces->len; i++)
    {
      const HzJinjaPiece *p = pieces->pdata[i];
      g_string_append_len (s, p->text, (gssize) p->len);
    }
  if (len)
    *len = s->len;
  return g_string_free (s, FALSE);
}
