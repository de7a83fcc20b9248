/* engine/jinja/jinja-parse-stream.c — the parser's token stream, errors and bounds (see
 * jinja-parse-stream.h). */
#include "jinja-parse-stream.h"
#include "jinja-error.h"

#include <stdarg.h>

#define MAX_TREE_DEPTH (4 * HZJ_MAX_NESTING)

gpointer
hzj_parse_fail_at (HzjParser *p, int line, const char *fmt, ...)
{
  if (!p->failed)
    {
      va_list ap;
      va_start (ap, fmt);
      g_autofree char *msg = g_strdup_vprintf (fmt, ap);
      va_end (ap);
      hzj_error_set (p->error, HZ_JINJA_ERROR_SYNTAX, "TemplateSyntaxError", line, "%s", msg);
      p->failed = TRUE;
    }
  return NULL;
}

/* TokenStream.expect: `what` is an operator, a name, or a token kind's description */
gboolean
hzj_parse_expect (HzjParser *p, gboolean ok, const char *what)
{
  if (ok)
    {
      next (p);
      return TRUE;
    }
  if (cur (p)->kind == HZJ_T_EOF)
    hzj_parse_fail_at (p, cur (p)->line, "unexpected end of template, expected '%s'.", what);
  else
    {
      g_autofree char *got = hzj_token_describe (cur (p));
      hzj_parse_fail_at (p, cur (p)->line, "expected token '%s', got '%s'", what, got);
    }
  return FALSE;
}

gboolean
hzj_parse_expect_op (HzjParser *p, const char *op)
{
  return hzj_parse_expect (p, is_op (cur (p), op), op);
}

gboolean
hzj_parse_expect_kind (HzjParser *p, HzjTokKind kind)
{
  HzjToken t = { .kind = kind };
  g_autofree char *what = hzj_token_describe (&t);
  return hzj_parse_expect (p, cur (p)->kind == kind, what);
}

char *
hzj_parse_expect_name (HzjParser *p)
{
  if (cur (p)->kind != HZJ_T_NAME)
    {
      hzj_parse_expect_kind (p, HZJ_T_NAME);
      return NULL;
    }
  return g_strdup (next (p)->text);
}

/* sets n's height from its children; FALSE (error set) past MAX_TREE_DEPTH */
gboolean
hzj_parse_measure (HzjParser *p, HzjNode *n)
{
  guint d = 0;
  HzjNode *kids[] = { n->a, n->b, n->c, n->d };
  for (guint i = 0; i < G_N_ELEMENTS (kids); i++)
    if (kids[i])
      d = MAX (d, kids[i]->depth);
  GPtrArray *lists[] = { n->list, n->list2 };
  for (guint l = 0; l < 2; l++)
    for (guint i = 0; lists[l] && i < lists[l]->len; i++)
      d = MAX (d, ((HzjNode *) lists[l]->pdata[i])->depth);
  n->depth = d + 1;
  if (n->depth > MAX_TREE_DEPTH)
    {
      hzj_parse_fail_at (p, n->line, "expression or block nested too deeply (more than %d levels)",
                         MAX_TREE_DEPTH);
      return FALSE;
    }
  return TRUE;
}

/* n measured, or freed and NULL */
HzjNode *
hzj_parse_sealed (HzjParser *p, HzjNode *n)
{
  if (hzj_parse_measure (p, n))
    return n;
  hzj_node_free (n);
  return NULL;
}

HzjNode *
hzj_parse_node2 (HzjParser *p, HzjNodeKind kind, int line, HzjNode *a, HzjNode *b)
{
  HzjNode *n = hzj_node_new (kind, line);
  n->a = a;
  n->b = b;
  return hzj_parse_sealed (p, n);
}

gboolean
hzj_parse_enter (HzjParser *p)
{
  if (++p->nesting > HZJ_MAX_NESTING)
    {
      hzj_parse_fail_at (p, cur (p)->line, "template nested too deeply (more than %d levels)",
                         HZJ_MAX_NESTING);
      return FALSE;
    }
  return TRUE;
}
