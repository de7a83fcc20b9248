/* engine/jinja/jinja-symbols.c — Jinja2's frame symbols (see jinja-symbols.h): the
 * Symbols and FrameSymbolVisitor / RootVisitor of jinja2/idtracking.py, reduced to what
 * decides a name's start value. */
#include "jinja-symbols.h"

#include <string.h>

typedef enum { REF_RESOLVE = 1, REF_UNDEFINED, REF_ALIAS, REF_PARAM } RefKind;

typedef struct Sym {
  struct Sym *parent;
  GHashTable *refs;   /* name -> RefKind */
  GHashTable *stores; /* set of names */
} Sym;

static Sym *
sym_new (Sym *parent)
{
  Sym *s = g_new0 (Sym, 1);
  s->parent = parent;
  s->refs = g_hash_table_new (g_str_hash, g_str_equal);
  s->stores = g_hash_table_new (g_str_hash, g_str_equal);
  return s;
}

static void
sym_free (Sym *s)
{
  g_hash_table_unref (s->refs);
  g_hash_table_unref (s->stores);
  g_free (s);
}

static Sym *
sym_copy (Sym *s)
{
  Sym *c = sym_new (s->parent);
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init (&it, s->refs);
  while (g_hash_table_iter_next (&it, &k, &v))
    g_hash_table_insert (c->refs, k, v);
  g_hash_table_iter_init (&it, s->stores);
  while (g_hash_table_iter_next (&it, &k, NULL))
    g_hash_table_add (c->stores, k);
  return c;
}

static RefKind
find_ref (Sym *s, const char *name)
{
  for (; s; s = s->parent)
    {
      const RefKind k = GPOINTER_TO_INT (g_hash_table_lookup (s->refs, name));
      if (k)
        return k;
    }
  return 0;
}

static void
load (Sym *s, char *name)
{
  if (!find_ref (s, name))
    g_hash_table_insert (s->refs, name, GINT_TO_POINTER (REF_RESOLVE));
}

static void
store (Sym *s, char *name)
{
  g_hash_table_add (s->stores, name);
  if (g_hash_table_contains (s->refs, name))
    return;
  const RefKind k = s->parent && find_ref (s->parent, name) ? REF_ALIAS : REF_UNDEFINED;
  g_hash_table_insert (s->refs, name, GINT_TO_POINTER (k));
}

static void
param (Sym *s, char *name)
{
  g_hash_table_add (s->stores, name);
  g_hash_table_insert (s->refs, name, GINT_TO_POINTER (REF_PARAM));
}

/* Symbols.branch_update: a name stored in some branches only is read from outside */
static void
branch_update (Sym *s, Sym **br, guint n)
{
  g_autoptr (GHashTable) counts = g_hash_table_new (g_str_hash, g_str_equal);
  GHashTableIter it;
  gpointer k, v;
  for (guint i = 0; i < n; i++)
    {
      g_hash_table_iter_init (&it, br[i]->stores);
      while (g_hash_table_iter_next (&it, &k, NULL))
        if (!g_hash_table_contains (s->stores, k))
          g_hash_table_insert (counts, k, GINT_TO_POINTER (GPOINTER_TO_INT (g_hash_table_lookup (counts, k)) + 1));
    }
  for (guint i = 0; i < n; i++)
    {
      g_hash_table_iter_init (&it, br[i]->refs);
      while (g_hash_table_iter_next (&it, &k, &v))
        g_hash_table_insert (s->refs, k, v);
      g_hash_table_iter_init (&it, br[i]->stores);
      while (g_hash_table_iter_next (&it, &k, NULL))
        g_hash_table_add (s->stores, k);
    }
  g_hash_table_iter_init (&it, counts);
  while (g_hash_table_iter_next (&it, &k, &v))
    if ((guint) GPOINTER_TO_INT (v) != n)
      g_hash_table_insert (s->refs, k, GINT_TO_POINTER (s->parent && find_ref (s->parent, k) ? REF_ALIAS
                                                                                              : REF_RESOLVE));
}

static void visit (Sym *s, HzjNode *n);

static void
visit_list (Sym *s, GPtrArray *l)
{
  for (guint i = 0; l && i < l->len; i++)
    visit (s, l->pdata[i]);
}

static void
visit_target (Sym *s, HzjNode *t, gboolean as_param)
{
  if (t->kind == HZJ_N_NAME)
    (as_param ? param : store) (s, t->name);
  else if (t->kind == HZJ_N_NSREF)
    load (s, t->name);
  else
    for (guint i = 0; t->list && i < t->list->len; i++)
      visit_target (s, t->list->pdata[i], as_param);
}

static gboolean
is_elif (GPtrArray *l)
{
  return l && l->len == 1 && (((HzjNode *) l->pdata[0])->flags & HZJ_F_ELIF);
}

/* FrameSymbolVisitor.visit_If; `simple`: an elif alone (its own else is empty) */
static void
visit_if (Sym *s, HzjNode *n, gboolean simple)
{
  visit (s, n->a);
  Sym *br[3] = { sym_copy (s), sym_copy (s), sym_copy (s) };
  visit_list (br[0], n->list);
  if (!simple)
    {
      /* Jinja2's elif_ list and else_ are branches of the first if */
      HzjNode *last = n;
      while (is_elif (last->list2))
        {
          last = last->list2->pdata[0];
          visit_if (br[1], last, TRUE);
        }
      visit_list (br[2], last->list2);
    }
  branch_update (s, br, 3);
  for (int i = 0; i < 3; i++)
    sym_free (br[i]);
}

static void
visit (Sym *s, HzjNode *n)
{
  if (n == NULL)
    return;
  switch (n->kind)
    {
    case HZJ_N_NAME:
      load (s, n->name);
      return;
    case HZJ_N_NSREF:
      load (s, n->name);
      return;
    case HZJ_N_SET:
      visit (s, n->b);
      visit_target (s, n->a, FALSE);
      return;
    case HZJ_N_SET_BLOCK:
      visit_target (s, n->a, FALSE);
      return;
    case HZJ_N_FOR:
      visit (s, n->b);
      return;
    case HZJ_N_IF:
      visit_if (s, n, FALSE);
      return;
    case HZJ_N_MACRO:
      store (s, n->name);
      return;
    case HZJ_N_CALL_BLOCK:
      visit (s, n->a);
      return;
    case HZJ_N_FILTER_BLOCK:
      visit (s, n->b);
      return;
    case HZJ_N_WITH:
      for (guint i = 0; n->list2 && i < n->list2->len; i++)
        visit (s, ((HzjNode *) n->list2->pdata[i])->b);
      return;
    default:
      visit (s, n->a);
      visit (s, n->b);
      visit (s, n->c);
      visit (s, n->d);
      visit_list (s, n->list);
      visit_list (s, n->list2);
      return;
    }
}

static char **
undefined_names (Sym *s)
{
  GPtrArray *names = g_ptr_array_new ();
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init (&it, s->refs);
  while (g_hash_table_iter_next (&it, &k, &v))
    if (GPOINTER_TO_INT (v) == REF_UNDEFINED)
      g_ptr_array_add (names, g_strdup (k));
  if (names->len == 0)
    {
      g_ptr_array_unref (names);
      return NULL;
    }
  g_ptr_array_add (names, NULL);
  return (char **) g_ptr_array_free (names, FALSE);
}

static void children (Sym *frame, HzjNode *n);

static void
children_list (Sym *frame, GPtrArray *l)
{
  for (guint i = 0; l && i < l->len; i++)
    children (frame, l->pdata[i]);
}

/* a frame: its symbols from `body` (after `setup` declared its parameters), then the
 * frames inside it */
static char **
frame (Sym *parent, HzjNode *n, GPtrArray *body)
{
  Sym *s = sym_new (parent);
  switch (n->kind)
    {
    case HZJ_N_FOR:
      if (body == n->list)
        visit_target (s, n->a, TRUE);
      break;
    case HZJ_N_MACRO:
    case HZJ_N_CALL_BLOCK:
      for (guint i = 0; n->list2 && i < n->list2->len; i++)
        param (s, ((HzjNode *) n->list2->pdata[i])->name);
      for (guint i = 0; n->list2 && i < n->list2->len; i++)
        visit (s, ((HzjNode *) n->list2->pdata[i])->a);
      break;
    case HZJ_N_WITH:
      for (guint i = 0; n->list2 && i < n->list2->len; i++)
        visit_target (s, ((HzjNode *) n->list2->pdata[i])->a, TRUE);
      break;
    default:
      break;
    }
  visit_list (s, body);
  char **names = undefined_names (s);
  children_list (s, body);
  sym_free (s);
  return names;
}

static void
children (Sym *f, HzjNode *n)
{
  switch (n->kind)
    {
    case HZJ_N_FOR:
      n->shadow = frame (f, n, n->list);
      n->shadow2 = frame (f, n, n->list2);
      return;
    case HZJ_N_MACRO:
    case HZJ_N_CALL_BLOCK:
    case HZJ_N_SET_BLOCK:
    case HZJ_N_FILTER_BLOCK:
    case HZJ_N_WITH:
      n->shadow = frame (f, n, n->list);
      return;
    case HZJ_N_IF:
    case HZJ_N_BODY:
      children_list (f, n->list);
      children_list (f, n->list2);
      return;
    default:
      return;
    }
}

void
hzj_symbols_analyze (HzjNode *root)
{
  root->shadow = frame (NULL, root, root->list);
}
