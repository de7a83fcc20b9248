/* engine/jinja/jinja-scope.c — scopes (see jinja-scope.h). */
#include "jinja-scope.h"

#include <string.h>

/* a scope's variables: a short array searched in order (a loop iteration binds two or
 * three), indexed by a hash table once it grows */
#define SCOPE_INDEX_MIN 12

#define SCOPE_INLINE 4

struct _HzjScope {
  int ref;
  gboolean captured; /* a macro holds it: in ctx->live_scopes */
  HzjCtx *ctx;
  HzjScope *parent;
  guint n, cap;
  const char **names; /* borrowed: names live as long as the render (AST, variables) */
  HzjValue **vals;
  GHashTable *index;  /* name -> position + 1 */
  const char *inline_names[SCOPE_INLINE];
  HzjValue *inline_vals[SCOPE_INLINE];
};

HzjScope *
hzj_scope_new (HzjCtx *ctx, HzjScope *parent)
{
  HzjScope *s = g_new0 (HzjScope, 1);
  s->ref = 1;
  s->ctx = ctx;
  s->parent = parent;
  if (parent)
    parent->ref++;
  s->names = s->inline_names;
  s->vals = s->inline_vals;
  s->cap = SCOPE_INLINE;
  return s;
}

void
hzj_scope_clear (HzjScope *s)
{
  /* detach first: a value's finalizer may come back to this scope */
  HzjValue *small[SCOPE_INLINE];
  HzjValue **vals = s->vals == s->inline_vals ? memcpy (small, s->vals, sizeof small) : s->vals;
  const char **names = s->names;
  const guint n = s->n;
  s->names = s->inline_names;
  s->vals = s->inline_vals;
  s->n = 0;
  s->cap = SCOPE_INLINE;
  g_clear_pointer (&s->index, g_hash_table_unref);
  for (guint i = 0; i < n; i++)
    hzj_unref (vals[i]);
  if (names != s->inline_names)
    {
      g_free (names);
      g_free (vals);
    }
}

static gssize
scope_find (HzjScope *s, const char *name)
{
  if (s->index)
    return (gssize) GPOINTER_TO_UINT (g_hash_table_lookup (s->index, name)) - 1;
  for (guint i = 0; i < s->n; i++)
    if (strcmp (s->names[i], name) == 0)
      return i;
  return -1;
}

void
hzj_scope_unref (HzjScope *s)
{
  while (s && --s->ref == 0)
    {
      HzjScope *parent = s->parent;
      if (s->captured)
        g_hash_table_remove (s->ctx->live_scopes, s);
      hzj_scope_clear (s);
      g_free (s);
      s = parent;
    }
}

void
hzj_scope_set (HzjScope *s, const char *name, HzjValue *v)
{
  const gssize at = scope_find (s, name);
  if (at >= 0)
    {
      HzjValue *old = s->vals[at];
      s->vals[at] = v;
      hzj_unref (old);
      return;
    }
  if (s->n == s->cap)
    {
      s->cap *= 2;
      if (s->names == s->inline_names)
        {
          s->names = g_memdup2 (s->inline_names, sizeof s->inline_names);
          s->vals = g_memdup2 (s->inline_vals, sizeof s->inline_vals);
        }
      s->names = g_renew (const char *, s->names, s->cap);
      s->vals = g_renew (HzjValue *, s->vals, s->cap);
    }
  s->names[s->n] = name;
  s->vals[s->n] = v;
  s->n++;
  if (s->index)
    g_hash_table_insert (s->index, (gpointer) s->names[s->n - 1], GUINT_TO_POINTER (s->n));
  else if (s->n > SCOPE_INDEX_MIN)
    {
      s->index = g_hash_table_new (g_str_hash, g_str_equal);
      for (guint i = 0; i < s->n; i++)
        g_hash_table_insert (s->index, (gpointer) s->names[i], GUINT_TO_POINTER (i + 1));
    }
}

HzjValue *
hzj_scope_lookup (HzjScope *s, const char *name)
{
  for (; s; s = s->parent)
    {
      const gssize at = scope_find (s, name);
      if (at >= 0)
        return s->vals[at];
    }
  return NULL;
}

void
hzj_scope_shadow (HzjScope *s, char **names)
{
  for (; names && *names; names++)
    hzj_scope_set (s, *names, hzj_undefined_new (g_strdup_printf ("'%s' is undefined", *names), FALSE));
}

gboolean
hzj_scope_in_use (HzjScope *s)
{
  return s->captured || s->ref > 1;
}

HzjScope *
hzj_scope_capture (HzjScope *s)
{
  s->ref++;
  if (!s->captured)
    {
      /* a macro and the scope it is bound in hold each other: hzj_scopes_release breaks that */
      s->captured = TRUE;
      g_hash_table_add (s->ctx->live_scopes, s);
    }
  return s;
}

void
hzj_scopes_release (HzjCtx *ctx)
{
  /* scopes that macros captured and namespaces still alive may be in reference cycles (a
   * macro and the scope it was defined in; a namespace that holds itself): empty them
   * all, then let go */
  g_autoptr (GPtrArray) scopes = g_ptr_array_new ();
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init (&it, ctx->live_scopes);
  while (g_hash_table_iter_next (&it, &key, NULL))
    g_ptr_array_add (scopes, key);
  for (guint i = 0; i < scopes->len; i++)
    ((HzjScope *) scopes->pdata[i])->ref++;
  for (guint i = 0; i < scopes->len; i++)
    hzj_scope_clear (scopes->pdata[i]);
  for (guint i = 0; i < ctx->namespaces->len; i++)
    hzj_dict_clear (((HzjValue *) ctx->namespaces->pdata[i])->dict);
  for (guint i = 0; i < scopes->len; i++)
    hzj_scope_unref (scopes->pdata[i]);
  g_ptr_array_set_size (ctx->namespaces, 0);
}
