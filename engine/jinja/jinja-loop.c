/* engine/jinja/jinja-loop.c — loop objects (see jinja-loop.h). */
#include "jinja-loop.h"

#include <string.h>

static void
loop_finalize (HzjValue *v)
{
  HzjLoop *loop = v->loop.state;
  g_ptr_array_unref (loop->items);
  hzj_unref (loop->changed_last);
  g_free (loop);
}

static gboolean
loop_repr (HzjBuf *out, HzjValue *v)
{
  (void) v;
  return hzj_buf_printf (out, "<LoopContext>");
}

static const HzjObjectClass loop_class = { loop_finalize, loop_repr };

HzjValue *
hzj_loop_new (GPtrArray *items, guint depth0, const HzjNode *node, HzjScope *scope)
{
  HzjLoop *l = g_new0 (HzjLoop, 1);
  l->items = items;
  l->depth0 = depth0;
  l->node = node;
  l->scope = scope;
  HzjValue *loop = g_new0 (HzjValue, 1);
  loop->ref = 1;
  loop->kind = HZJ_LOOP;
  loop->loop.klass = &loop_class;
  loop->loop.state = l;
  return loop;
}

static HzjValue *
loop_cycle (HzjCtx *ctx, HzjValue *self, HzjArgs *args)
{
  if (args->n_pos == 0)
    return hzj_type_error (ctx, "no items for cycling given");
  return hzj_ref (args->pos[self->loop.state->index0 % args->n_pos]);
}

static HzjValue *
loop_changed (HzjCtx *ctx, HzjValue *self, HzjArgs *args)
{
  (void) ctx;
  HzjValue *now = hzj_list_new (TRUE);
  for (guint i = 0; i < args->n_pos; i++)
    hzj_list_push (now, hzj_ref (args->pos[i]));
  HzjLoop *l = self->loop.state;
  if (l->changed_last && hzj_equal (l->changed_last, now))
    {
      hzj_unref (now);
      return hzj_bool (FALSE);
    }
  hzj_unref (l->changed_last);
  l->changed_last = now;
  return hzj_bool (TRUE);
}

HzjValue *
hzj_loop_attr (HzjCtx *ctx, HzjValue *loop, const char *name)
{
  (void) ctx;
  const HzjLoop *l = loop->loop.state;
  const gint64 n = l->items->len, i = l->index0;
  if (!strcmp (name, "index"))
    return hzj_int (i + 1);
  if (!strcmp (name, "index0"))
    return hzj_int (i);
  if (!strcmp (name, "revindex"))
    return hzj_int (n - i);
  if (!strcmp (name, "revindex0"))
    return hzj_int (n - i - 1);
  if (!strcmp (name, "first"))
    return hzj_bool (i == 0);
  if (!strcmp (name, "last"))
    return hzj_bool (i == n - 1);
  if (!strcmp (name, "length"))
    return hzj_int (n);
  if (!strcmp (name, "depth"))
    return hzj_int (l->depth0 + 1);
  if (!strcmp (name, "depth0"))
    return hzj_int (l->depth0);
  if (!strcmp (name, "previtem"))
    return i > 0 ? hzj_ref (l->items->pdata[i - 1])
                 : hzj_undefined_new (g_strdup ("there is no previous item"), FALSE);
  if (!strcmp (name, "nextitem"))
    return i + 1 < n ? hzj_ref (l->items->pdata[i + 1])
                     : hzj_undefined_new (g_strdup ("there is no next item"), FALSE);
  if (!strcmp (name, "cycle"))
    return hzj_func_new (loop_cycle, loop, "cycle");
  if (!strcmp (name, "changed"))
    return hzj_func_new (loop_changed, loop, "changed");
  return NULL;
}
