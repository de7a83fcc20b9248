/* engine/jinja/jinja-ast.c — syntax tree nodes (see jinja-ast.h). */
#include "jinja-ast.h"

HzjNode *
hzj_node_new (HzjNodeKind kind, int line)
{
  HzjNode *n = g_new0 (HzjNode, 1);
  n->kind = kind;
  n->line = line;
  n->depth = 1;
  return n;
}

void
hzj_node_free (HzjNode *n)
{
  if (n == NULL)
    return;
  g_free (n->name);
  g_free (n->name2);
  g_strfreev (n->shadow);
  g_strfreev (n->shadow2);
  hzj_free_immortal (n->value);
  hzj_node_free (n->a);
  hzj_node_free (n->b);
  hzj_node_free (n->c);
  hzj_node_free (n->d);
  if (n->list)
    g_ptr_array_unref (n->list);
  if (n->list2)
    g_ptr_array_unref (n->list2);
  g_free (n);
}

void
hzj_node_list_add (GPtrArray **list, HzjNode *child)
{
  if (*list == NULL)
    *list = g_ptr_array_new_with_free_func ((GDestroyNotify) hzj_node_free);
  g_ptr_array_add (*list, child);
}
