/* engine/jinja/jinja-parser.c — recursive descent after jinja2/parser.py (see
 * jinja-parser.h). Each parse_* function mirrors the method of the same name there. */
#include "jinja-parser.h"
#include "jinja-error.h"
#include "jinja-filters.h"
#include "jinja-lexer.h"
#include "jinja-symbols.h"
#include "jinja-tests.h"

#include <string.h>

#define MAX_TREE_DEPTH (4 * HZJ_MAX_NESTING)

typedef struct {
  GArray *toks;
  guint pos;
  GError **error;
  gboolean failed;
  guint nesting;
  guint loops;                /* for loops around the current statement (break/continue) */
  GPtrArray *end_stack;       /* of const char *const * (the end tags looked for) */
  GPtrArray *tag_stack;       /* of const char * (the statements being parsed) */
} Parser;

static HzjToken *
cur (Parser *p)
{
  return &g_array_index (p->toks, HzjToken, p->pos);
}

static HzjToken *
look (Parser *p)
{
  return &g_array_index (p->toks, HzjToken, MIN (p->pos + 1, p->toks->len - 1));
}

static HzjToken *
next (Parser *p)
{
  HzjToken *t = cur (p);
  if (t->kind != HZJ_T_EOF)
    p->pos++;
  return t;
}

static gpointer
fail_at (Parser *p, int line, const char *fmt, ...) G_GNUC_PRINTF (3, 4);

static gpointer
fail_at (Parser *p, int line, const char *fmt, ...)
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

static gboolean
is_name (HzjToken *t, const char *name)
{
  return t->kind == HZJ_T_NAME && strcmp (t->text, name) == 0;
}

static gboolean
is_op (HzjToken *t, const char *op)
{
  return t->kind == HZJ_T_OP && strcmp (t->op, op) == 0;
}

/* TokenStream.skip_if: consumes the current token when it matches */
static gboolean
skip_if (Parser *p, gboolean match)
{
  if (match)
    next (p);
  return match;
}

#define skip_op(p, op) skip_if ((p), is_op (cur (p), (op)))
#define skip_name(p, name) skip_if ((p), is_name (cur (p), (name)))

/* TokenStream.expect: `what` is an operator, a name, or a token kind's description */
static gboolean
expect_tok (Parser *p, gboolean ok, const char *what)
{
  if (ok)
    {
      next (p);
      return TRUE;
    }
  if (cur (p)->kind == HZJ_T_EOF)
    fail_at (p, cur (p)->line, "unexpected end of template, expected '%s'.", what);
  else
    {
      g_autofree char *got = hzj_token_describe (cur (p));
      fail_at (p, cur (p)->line, "expected token '%s', got '%s'", what, got);
    }
  return FALSE;
}

static gboolean
expect_op (Parser *p, const char *op)
{
  return expect_tok (p, is_op (cur (p), op), op);
}

static gboolean
expect_kind (Parser *p, HzjTokKind kind)
{
  HzjToken t = { .kind = kind };
  g_autofree char *what = hzj_token_describe (&t);
  return expect_tok (p, cur (p)->kind == kind, what);
}

static char *
expect_name (Parser *p)
{
  if (cur (p)->kind != HZJ_T_NAME)
    {
      expect_kind (p, HZJ_T_NAME);
      return NULL;
    }
  return g_strdup (next (p)->text);
}

/* sets n's height from its children; FALSE (error set) past MAX_TREE_DEPTH */
static gboolean
measure (Parser *p, HzjNode *n)
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
      fail_at (p, n->line, "expression or block nested too deeply (more than %d levels)",
               MAX_TREE_DEPTH);
      return FALSE;
    }
  return TRUE;
}

/* n measured, or freed and NULL */
static HzjNode *
sealed (Parser *p, HzjNode *n)
{
  if (measure (p, n))
    return n;
  hzj_node_free (n);
  return NULL;
}

static HzjNode *
node2 (Parser *p, HzjNodeKind kind, int line, HzjNode *a, HzjNode *b)
{
  HzjNode *n = hzj_node_new (kind, line);
  n->a = a;
  n->b = b;
  return sealed (p, n);
}

static gboolean
enter (Parser *p)
{
  if (++p->nesting > HZJ_MAX_NESTING)
    {
      fail_at (p, cur (p)->line, "template nested too deeply (more than %d levels)", HZJ_MAX_NESTING);
      return FALSE;
    }
  return TRUE;
}

/* ---- expressions ---- */

static HzjNode *parse_expression (Parser *p, gboolean with_condexpr);
static HzjNode *parse_tuple (Parser *p, gboolean simplified, gboolean with_condexpr,
                             const char *extra_end, gboolean explicit_parens);
static HzjNode *parse_unary (Parser *p, gboolean with_filter);
static HzjNode *parse_trailers (Parser *p, HzjNode *node, gboolean filters);
static HzjNode *parse_primary (Parser *p);
static HzjNode *constant (HzjValue *v, int line);

/* parse_call_args: fills n->list (args), n->list2 (KWARGs), n->c (*args), n->d (**kwargs) */
static gboolean
parse_call_args (Parser *p, HzjNode *n)
{
  const int line = cur (p)->line;
  if (!expect_op (p, "("))
    return FALSE;
  gboolean need_comma = FALSE;
  while (!is_op (cur (p), ")"))
    {
      if (need_comma)
        {
          if (!expect_op (p, ","))
            return FALSE;
          if (is_op (cur (p), ")"))
            break;
        }
      gboolean ok;
      if (is_op (cur (p), "*"))
        {
          ok = n->c == NULL && n->d == NULL;
          next (p);
          if (ok && !(n->c = parse_expression (p, TRUE)))
            return FALSE;
        }
      else if (is_op (cur (p), "**"))
        {
          ok = n->d == NULL;
          next (p);
          if (ok && !(n->d = parse_expression (p, TRUE)))
            return FALSE;
        }
      else if (cur (p)->kind == HZJ_T_NAME && is_op (look (p), "="))
        {
          ok = n->d == NULL;
          HzjNode *kw = hzj_node_new (HZJ_N_KWARG, cur (p)->line);
          kw->name = g_strdup (cur (p)->text);
          hzj_node_list_add (&n->list2, kw);
          next (p);
          next (p);
          if (ok && !(kw->a = parse_expression (p, TRUE)))
            return FALSE;
          if (kw->a)
            kw->depth = kw->a->depth + 1;
        }
      else
        {
          ok = n->c == NULL && n->d == NULL && n->list2 == NULL;
          HzjNode *arg = ok ? parse_expression (p, TRUE) : NULL;
          if (ok && !arg)
            return FALSE;
          if (arg)
            hzj_node_list_add (&n->list, arg);
        }
      if (!ok)
        {
          fail_at (p, line, "invalid syntax for function call expression");
          return FALSE;
        }
      need_comma = TRUE;
    }
  return expect_op (p, ")");
}

static HzjNode *
parse_call (Parser *p, HzjNode *callee)
{
  HzjNode *n = hzj_node_new (HZJ_N_CALL, cur (p)->line);
  n->a = callee;
  if (!parse_call_args (p, n))
    {
      hzj_node_free (n);
      return NULL;
    }
  return sealed (p, n);
}

/* filter or test name: name(.name)* */
static char *
parse_dotted_name (Parser *p)
{
  char *name = expect_name (p);
  while (name && is_op (cur (p), "."))
    {
      next (p);
      g_autofree char *more = expect_name (p);
      if (!more)
        {
          g_free (name);
          return NULL;
        }
      char *joined = g_strconcat (name, ".", more, NULL);
      g_free (name);
      name = joined;
    }
  return name;
}

static HzjNode *
parse_filter (Parser *p, HzjNode *node, gboolean start_inline)
{
  while (is_op (cur (p), "|") || start_inline)
    {
      if (!start_inline)
        next (p);
      start_inline = FALSE;
      HzjNode *f = hzj_node_new (HZJ_N_FILTER, cur (p)->line);
      f->a = node;
      if (!(f->name = parse_dotted_name (p)) ||
          (is_op (cur (p), "(") && !parse_call_args (p, f)))
        {
          hzj_node_free (f);
          return NULL;
        }
      if (!(node = sealed (p, f)))
        return NULL;
    }
  return node;
}

static HzjNode *
parse_test (Parser *p, HzjNode *node)
{
  HzjNode *t = hzj_node_new (HZJ_N_TEST, next (p)->line);
  t->a = node;
  if (skip_name (p, "not"))
    t->flags |= HZJ_F_NEGATED;
  if (!(t->name = parse_dotted_name (p)))
    goto fail;
  HzjToken *c = cur (p);
  if (is_op (c, "("))
    {
      if (!parse_call_args (p, t))
        goto fail;
    }
  else if ((c->kind == HZJ_T_NAME || c->kind == HZJ_T_STRING || c->kind == HZJ_T_INT ||
            c->kind == HZJ_T_FLOAT || is_op (c, "[") || is_op (c, "{")) &&
           !is_name (c, "else") && !is_name (c, "or") && !is_name (c, "and"))
    {
      if (is_name (c, "is"))
        {
          fail_at (p, c->line, "You cannot chain multiple tests with is");
          goto fail;
        }
      HzjNode *arg = parse_primary (p);
      if (!arg || !(arg = parse_trailers (p, arg, FALSE)))
        goto fail;
      hzj_node_list_add (&t->list, arg);
    }
  return sealed (p, t);
fail:
  hzj_node_free (t);
  return NULL;
}

static HzjNode *
parse_subscribed (Parser *p)
{
  const int line = cur (p)->line;
  HzjNode *parts[3] = { NULL, NULL, NULL };
  if (is_op (cur (p), ":"))
    next (p);
  else
    {
      HzjNode *e = parse_expression (p, TRUE);
      if (!e || !is_op (cur (p), ":"))
        return e;
      next (p);
      parts[0] = e;
    }
  if (!is_op (cur (p), ":") && !is_op (cur (p), "]") && !is_op (cur (p), ","))
    if (!(parts[1] = parse_expression (p, TRUE)))
      goto fail;
  if (is_op (cur (p), ":"))
    {
      next (p);
      if (!is_op (cur (p), "]") && !is_op (cur (p), ","))
        if (!(parts[2] = parse_expression (p, TRUE)))
          goto fail;
    }
  HzjNode *s = hzj_node_new (HZJ_N_SLICE, line);
  s->a = parts[0];
  s->b = parts[1];
  s->c = parts[2];
  return sealed (p, s);
fail:
  for (int i = 0; i < 3; i++)
    hzj_node_free (parts[i]);
  return NULL;
}

static HzjNode *
parse_subscript (Parser *p, HzjNode *node)
{
  HzjToken *t = next (p);
  const int line = t->line;
  if (is_op (t, "."))
    {
      HzjToken *attr = next (p);
      if (attr->kind == HZJ_T_NAME)
        {
          HzjNode *n = hzj_node_new (HZJ_N_GETATTR, line);
          n->a = node;
          n->name = g_strdup (attr->text);
          return sealed (p, n);
        }
      if (attr->kind != HZJ_T_INT)
        {
          hzj_node_free (node);
          return fail_at (p, attr->line, "expected name or number");
        }
      return node2 (p, HZJ_N_GETITEM, line, node, constant (hzj_int (attr->i), attr->line));
    }
  /* "[" */
  HzjNode *tuple = hzj_node_new (HZJ_N_TUPLE, line);
  while (!is_op (cur (p), "]"))
    {
      HzjNode *arg;
      if ((tuple->list && !expect_op (p, ",")) || !(arg = parse_subscribed (p)))
        {
          hzj_node_free (tuple);
          hzj_node_free (node);
          return NULL;
        }
      hzj_node_list_add (&tuple->list, arg);
    }
  if (!expect_op (p, "]"))
    {
      hzj_node_free (tuple);
      hzj_node_free (node);
      return NULL;
    }
  HzjNode *key = tuple;
  if (tuple->list && tuple->list->len == 1)
    {
      key = g_ptr_array_steal_index (tuple->list, 0);
      hzj_node_free (tuple);
    }
  else if (!(key = sealed (p, tuple)))
    {
      hzj_node_free (node);
      return NULL;
    }
  return node2 (p, HZJ_N_GETITEM, line, node, key);
}

/* parse_postfix (without filters: ".name", "[...]", calls) and parse_filter_expr (with:
 * "|filter", "is test", calls) */
static HzjNode *
parse_trailers (Parser *p, HzjNode *node, gboolean filters)
{
  while (node)
    {
      if (!filters && (is_op (cur (p), ".") || is_op (cur (p), "[")))
        node = parse_subscript (p, node);
      else if (filters && is_op (cur (p), "|"))
        node = parse_filter (p, node, FALSE);
      else if (filters && is_name (cur (p), "is"))
        node = parse_test (p, node);
      else if (is_op (cur (p), "("))
        node = parse_call (p, node);
      else
        break;
    }
  return node;
}

static HzjNode *
constant (HzjValue *v, int line)
{
  HzjNode *n = hzj_node_new (HZJ_N_CONST, line);
  n->value = v;
  hzj_make_immortal (v);
  return n;
}

/* [a, b, ...] or {k: v, ...} */
static HzjNode *
parse_list_or_dict (Parser *p, gboolean dict)
{
  const char *close = dict ? "}" : "]";
  HzjNode *n = hzj_node_new (dict ? HZJ_N_DICT : HZJ_N_LIST, next (p)->line);
  guint count = 0;
  while (!is_op (cur (p), close))
    {
      if (count && !expect_op (p, ","))
        goto fail;
      if (is_op (cur (p), close))
        break;
      HzjNode *e = parse_expression (p, TRUE);
      if (!e)
        goto fail;
      hzj_node_list_add (&n->list, e);
      if (dict)
        {
          if (!expect_op (p, ":") || !(e = parse_expression (p, TRUE)))
            goto fail;
          hzj_node_list_add (&n->list2, e);
        }
      count++;
    }
  if (!expect_op (p, close))
    goto fail;
  return sealed (p, n);
fail:
  hzj_node_free (n);
  return NULL;
}

static HzjNode *
parse_primary (Parser *p)
{
  HzjToken *t = cur (p);
  switch (t->kind)
    {
    case HZJ_T_NAME:
      next (p);
      if (!strcmp (t->text, "true") || !strcmp (t->text, "True"))
        return constant (hzj_bool (TRUE), t->line);
      if (!strcmp (t->text, "false") || !strcmp (t->text, "False"))
        return constant (hzj_bool (FALSE), t->line);
      if (!strcmp (t->text, "none") || !strcmp (t->text, "None"))
        return constant (hzj_none (), t->line);
      {
        HzjNode *n = hzj_node_new (HZJ_N_NAME, t->line);
        n->name = g_strdup (t->text);
        return n;
      }
    case HZJ_T_STRING:
      {
        GString *s = g_string_new_len (t->text, (gssize) t->len);
        next (p);
        while (cur (p)->kind == HZJ_T_STRING)
          g_string_append_len (s, cur (p)->text, (gssize) cur (p)->len), next (p);
        HzjNode *n = constant (hzj_str (s->str, s->len, FALSE), t->line);
        g_string_free (s, TRUE);
        return n;
      }
    case HZJ_T_INT:
      next (p);
      return constant (hzj_int (t->i), t->line);
    case HZJ_T_FLOAT:
      next (p);
      return constant (hzj_float (t->f), t->line);
    default:
      break;
    }
  if (is_op (t, "("))
    {
      next (p);
      HzjNode *n = parse_tuple (p, FALSE, TRUE, NULL, TRUE);
      if (n && !expect_op (p, ")"))
        {
          hzj_node_free (n);
          return NULL;
        }
      return n;
    }
  if (is_op (t, "[") || is_op (t, "{"))
    return parse_list_or_dict (p, is_op (t, "{"));
  g_autofree char *desc = hzj_token_describe (t);
  if (t->kind == HZJ_T_EOF)
    return fail_at (p, t->line, "unexpected end of template");
  return fail_at (p, t->line, "unexpected '%s'", desc);
}

static HzjNode *
parse_unary (Parser *p, gboolean with_filter)
{
  if (!enter (p))
    return NULL;
  HzjNode *node;
  const int line = cur (p)->line;
  if (is_op (cur (p), "-") || is_op (cur (p), "+"))
    {
      const HzjNodeKind k = is_op (next (p), "-") ? HZJ_N_NEG : HZJ_N_POS;
      HzjNode *operand = parse_unary (p, FALSE);
      node = operand ? node2 (p, k, line, operand, NULL) : NULL;
    }
  else
    node = parse_primary (p);
  node = parse_trailers (p, node, FALSE);
  if (with_filter)
    node = parse_trailers (p, node, TRUE);
  p->nesting--;
  return node;
}

static HzjNode *
parse_binary_chain (Parser *p, int level);

/* operator levels below `not`: compare, math1 (+ -), concat (~), math2 (* / // %), pow */
enum { LV_MATH1, LV_CONCAT, LV_MATH2, LV_POW };

static HzjNode *
parse_binary_chain (Parser *p, int level)
{
  if (level > LV_POW)
    return parse_unary (p, TRUE);
  HzjNode *left = parse_binary_chain (p, level + 1);
  if (level == LV_CONCAT && left && is_op (cur (p), "~"))
    {
      HzjNode *n = hzj_node_new (HZJ_N_CONCAT, cur (p)->line);
      hzj_node_list_add (&n->list, left);
      while (is_op (cur (p), "~"))
        {
          next (p);
          HzjNode *r = parse_binary_chain (p, level + 1);
          if (!r)
            {
              hzj_node_free (n);
              return NULL;
            }
          hzj_node_list_add (&n->list, r);
        }
      return sealed (p, n);
    }
  static const struct { int level; const char *op; HzjBinop binop; } ops[] = {
    { LV_MATH1, "+", HZJ_OP_ADD }, { LV_MATH1, "-", HZJ_OP_SUB },
    { LV_MATH2, "*", HZJ_OP_MUL }, { LV_MATH2, "/", HZJ_OP_DIV },
    { LV_MATH2, "//", HZJ_OP_FLOORDIV }, { LV_MATH2, "%", HZJ_OP_MOD },
    { LV_POW, "**", HZJ_OP_POW },
  };
  while (left)
    {
      int found = -1;
      for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
        if (ops[i].level == level && is_op (cur (p), ops[i].op))
          found = (int) i;
      if (found < 0)
        break;
      const int line = next (p)->line;
      HzjNode *right = parse_binary_chain (p, level + 1);
      if (!right)
        {
          hzj_node_free (left);
          return NULL;
        }
      left = node2 (p, HZJ_N_BINOP, line, left, right);
      if (left)
        left->op = ops[found].binop;
    }
  return left;
}

static HzjNode *
parse_compare (Parser *p)
{
  const int line = cur (p)->line;
  HzjNode *expr = parse_binary_chain (p, LV_MATH1);
  if (!expr)
    return NULL;
  HzjNode *cmp = NULL;
  static const struct { const char *op; HzjCmpop cmp; } ops[] = {
    { "==", HZJ_CMP_EQ }, { "!=", HZJ_CMP_NE }, { "<", HZJ_CMP_LT }, { "<=", HZJ_CMP_LE },
    { ">", HZJ_CMP_GT }, { ">=", HZJ_CMP_GE },
  };
  for (;;)
    {
      int op = -1;
      for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
        if (is_op (cur (p), ops[i].op))
          op = (int) ops[i].cmp;
      if (op >= 0)
        next (p);
      else if (skip_name (p, "in"))
        op = HZJ_CMP_IN;
      else if (is_name (cur (p), "not") && is_name (look (p), "in"))
        {
          next (p);
          next (p);
          op = HZJ_CMP_NOTIN;
        }
      else
        break;
      HzjNode *operand = hzj_node_new (HZJ_N_OPERAND, cur (p)->line);
      operand->op = op;
      if (!cmp)
        {
          cmp = hzj_node_new (HZJ_N_COMPARE, line);
          cmp->a = expr;
        }
      hzj_node_list_add (&cmp->list, operand);
      if (!(operand->a = parse_binary_chain (p, LV_MATH1)))
        {
          hzj_node_free (cmp);
          return NULL;
        }
      operand->depth = operand->a->depth + 1;
    }
  return cmp ? sealed (p, cmp) : expr;
}

static HzjNode *
parse_not (Parser *p)
{
  if (is_name (cur (p), "not"))
    {
      const int line = next (p)->line;
      if (!enter (p))
        return NULL;
      HzjNode *operand = parse_not (p);
      p->nesting--;
      return operand ? node2 (p, HZJ_N_NOT, line, operand, NULL) : NULL;
    }
  return parse_compare (p);
}

static HzjNode *
parse_and_or (Parser *p, gboolean is_or)
{
  HzjNode *left = is_or ? parse_and_or (p, FALSE) : parse_not (p);
  while (left && skip_name (p, is_or ? "or" : "and"))
    {
      const int line = cur (p)->line;
      HzjNode *right = is_or ? parse_and_or (p, FALSE) : parse_not (p);
      if (!right)
        {
          hzj_node_free (left);
          return NULL;
        }
      left = node2 (p, is_or ? HZJ_N_OR : HZJ_N_AND, line, left, right);
    }
  return left;
}

static HzjNode *
parse_condexpr (Parser *p)
{
  const int line = cur (p)->line;
  HzjNode *expr1 = parse_and_or (p, TRUE);
  while (expr1 && skip_name (p, "if"))
    {
      HzjNode *n = hzj_node_new (HZJ_N_COND, line);
      n->b = expr1;
      if (!(n->a = parse_and_or (p, TRUE)) ||
          (skip_name (p, "else") && !(n->c = parse_condexpr (p))))
        {
          hzj_node_free (n);
          return NULL;
        }
      expr1 = sealed (p, n);
    }
  return expr1;
}

static HzjNode *
parse_expression (Parser *p, gboolean with_condexpr)
{
  if (!enter (p))
    return NULL;
  HzjNode *n = with_condexpr ? parse_condexpr (p) : parse_and_or (p, TRUE);
  p->nesting--;
  return n;
}

static gboolean
is_tuple_end (Parser *p, const char *extra_end)
{
  HzjToken *t = cur (p);
  return t->kind == HZJ_T_VAR_END || t->kind == HZJ_T_BLOCK_END || is_op (t, ")") ||
         (extra_end && is_name (t, extra_end));
}

static HzjNode *
parse_tuple (Parser *p, gboolean simplified, gboolean with_condexpr, const char *extra_end,
             gboolean explicit_parens)
{
  const int line = cur (p)->line;
  HzjNode *tuple = hzj_node_new (HZJ_N_TUPLE, line);
  gboolean is_tuple = FALSE;
  for (;;)
    {
      if (tuple->list && !expect_op (p, ","))
        goto fail;
      if (is_tuple_end (p, extra_end))
        break;
      HzjNode *e = simplified ? parse_primary (p) : parse_expression (p, with_condexpr);
      if (!e)
        goto fail;
      hzj_node_list_add (&tuple->list, e);
      if (is_op (cur (p), ","))
        is_tuple = TRUE;
      else
        break;
    }
  if (!is_tuple)
    {
      if (tuple->list)
        {
          HzjNode *only = g_ptr_array_steal_index (tuple->list, 0);
          hzj_node_free (tuple);
          return only;
        }
      if (!explicit_parens)
        {
          g_autofree char *desc = hzj_token_describe (cur (p));
          fail_at (p, cur (p)->line, "Expected an expression, got '%s'", desc);
          goto fail;
        }
    }
  return sealed (p, tuple);
fail:
  hzj_node_free (tuple);
  return NULL;
}

/* ---- statements ---- */

static HzjNode *subparse (Parser *p, const char *const *end_tokens);

static gboolean
can_assign (HzjNode *n)
{
  if (n->kind == HZJ_N_NAME || n->kind == HZJ_N_NSREF)
    return TRUE;
  if (n->kind != HZJ_N_TUPLE)
    return FALSE;
  for (guint i = 0; n->list && i < n->list->len; i++)
    if (!can_assign (n->list->pdata[i]))
      return FALSE;
  return TRUE;
}

static HzjNode *
parse_assign_target (Parser *p, gboolean name_only, const char *extra_end, gboolean with_ns)
{
  HzjNode *target;
  const int line = cur (p)->line;
  if (with_ns && cur (p)->kind == HZJ_T_NAME && is_op (look (p), "."))
    {
      target = hzj_node_new (HZJ_N_NSREF, line);
      target->name = expect_name (p);
      next (p);
      if (!(target->name2 = expect_name (p)))
        {
          hzj_node_free (target);
          return NULL;
        }
      return target;
    }
  if (name_only)
    {
      char *name = expect_name (p);
      if (!name)
        return NULL;
      target = hzj_node_new (HZJ_N_NAME, line);
      target->name = name;
    }
  else if (!(target = parse_tuple (p, TRUE, TRUE, extra_end, FALSE)))
    return NULL;
  if (!can_assign (target))
    {
      const char *what = target->kind == HZJ_N_CONST ? "const" : target->kind == HZJ_N_CALL ? "call"
                         : target->kind == HZJ_N_LIST ? "list" : target->kind == HZJ_N_DICT ? "dict"
                         : "expression";
      fail_at (p, target->line, "can't assign to '%s'", what);
      hzj_node_free (target);
      return NULL;
    }
  return target;
}

/* parse_statements: ":"? "%}" body, stopping before one of end_tokens (dropped when
 * drop_needle); *which gets the end tag seen */
static gboolean
parse_statements (Parser *p, const char *const *end_tokens, gboolean drop_needle,
                  GPtrArray **body, const char **which)
{
  skip_op (p, ":");
  if (!expect_kind (p, HZJ_T_BLOCK_END))
    return FALSE;
  HzjNode *b = subparse (p, end_tokens);
  if (!b)
    return FALSE;
  *body = g_steal_pointer (&b->list);
  hzj_node_free (b);
  if (which)
    *which = NULL;
  for (int i = 0; end_tokens[i]; i++)
    if (is_name (cur (p), end_tokens[i]) && which)
      *which = end_tokens[i];
  if (drop_needle)
    next (p);
  return TRUE;
}

static const char *const END_FOR[] = { "endfor", "else", NULL };
static const char *const END_FOR_ELSE[] = { "endfor", NULL };
static const char *const END_IF[] = { "elif", "else", "endif", NULL };
static const char *const END_IF_ELSE[] = { "endif", NULL };
static const char *const END_SET[] = { "endset", NULL };
static const char *const END_MACRO[] = { "endmacro", NULL };
static const char *const END_CALL[] = { "endcall", NULL };
static const char *const END_FILTER[] = { "endfilter", NULL };
static const char *const END_WITH[] = { "endwith", NULL };

static HzjNode *
parse_for (Parser *p, int line)
{
  HzjNode *n = hzj_node_new (HZJ_N_FOR, line);
  const char *which;
  if (!(n->a = parse_assign_target (p, FALSE, "in", FALSE)) || !expect_tok (p, is_name (cur (p), "in"), "in") ||
      !(n->b = parse_tuple (p, FALSE, FALSE, "recursive", FALSE)))
    goto fail;
  if (skip_name (p, "if") && !(n->c = parse_expression (p, TRUE)))
    goto fail;
  if (skip_name (p, "recursive"))
    n->flags |= HZJ_F_RECURSIVE;
  p->loops++;
  const gboolean ok = parse_statements (p, END_FOR, TRUE, &n->list, &which);
  p->loops--;
  if (!ok)
    goto fail;
  if (!strcmp (which, "else") && !parse_statements (p, END_FOR_ELSE, TRUE, &n->list2, NULL))
    goto fail;
  return sealed (p, n);
fail:
  hzj_node_free (n);
  return NULL;
}

static HzjNode *
parse_if (Parser *p, int line)
{
  HzjNode *result = hzj_node_new (HZJ_N_IF, line), *node = result;
  for (;;)
    {
      const char *which;
      if (!(node->a = parse_tuple (p, FALSE, FALSE, NULL, FALSE)) ||
          !parse_statements (p, END_IF, TRUE, &node->list, &which))
        goto fail;
      if (!strcmp (which, "elif"))
        {
          HzjNode *elif = hzj_node_new (HZJ_N_IF, cur (p)->line);
          elif->flags |= HZJ_F_ELIF;
          hzj_node_list_add (&node->list2, elif);
          node = elif;
          continue;
        }
      if (!strcmp (which, "else") && !parse_statements (p, END_IF_ELSE, TRUE, &node->list2, NULL))
        goto fail;
      break;
    }
  /* heights, innermost elif first */
  {
    g_autoptr (GPtrArray) chain = g_ptr_array_new ();
    for (HzjNode *n = result; n; n = n->list2 && n->list2->len == 1 &&
                                    ((HzjNode *) n->list2->pdata[0])->kind == HZJ_N_IF &&
                                    ((HzjNode *) n->list2->pdata[0])->a
                                      ? n->list2->pdata[0] : NULL)
      g_ptr_array_add (chain, n);
    for (guint i = chain->len; i-- > 0;)
      if (!measure (p, chain->pdata[i]))
        goto fail;
  }
  return result;
fail:
  hzj_node_free (result);
  return NULL;
}

static gboolean
parse_signature (Parser *p, HzjNode *n)
{
  if (!expect_op (p, "("))
    return FALSE;
  gboolean defaults = FALSE;
  while (!is_op (cur (p), ")"))
    {
      if (n->list2 && !expect_op (p, ","))
        return FALSE;
      HzjNode *arg = parse_assign_target (p, TRUE, NULL, FALSE);
      if (!arg)
        return FALSE;
      arg->kind = HZJ_N_KWARG;
      hzj_node_list_add (&n->list2, arg);
      if (skip_op (p, "="))
        {
          if (!(arg->a = parse_expression (p, TRUE)))
            return FALSE;
          arg->depth = arg->a->depth + 1;
          defaults = TRUE;
        }
      else if (defaults)
        {
          fail_at (p, arg->line, "non-default argument follows default argument");
          return FALSE;
        }
    }
  return expect_op (p, ")");
}

/* whether the body reads `name` (not counting nested macros) */
static gboolean
reads_name (HzjNode *n, const char *name)
{
  if (n == NULL || n->kind == HZJ_N_MACRO)
    return FALSE;
  if (n->kind == HZJ_N_NAME && !strcmp (n->name, name))
    return TRUE;
  HzjNode *kids[] = { n->a, n->b, n->c, n->d };
  for (guint i = 0; i < G_N_ELEMENTS (kids); i++)
    if (reads_name (kids[i], name))
      return TRUE;
  GPtrArray *lists[] = { n->list, n->list2 };
  for (guint l = 0; l < 2; l++)
    for (guint i = 0; lists[l] && i < lists[l]->len; i++)
      if (reads_name (lists[l]->pdata[i], name))
        return TRUE;
  return FALSE;
}

static guint
macro_flags (GPtrArray *body)
{
  guint flags = 0;
  for (guint i = 0; body && i < body->len; i++)
    {
      HzjNode *s = body->pdata[i];
      flags |= reads_name (s, "varargs") ? HZJ_F_VARARGS : 0;
      flags |= reads_name (s, "kwargs") ? HZJ_F_KWARGS : 0;
      flags |= reads_name (s, "caller") ? HZJ_F_CALLER : 0;
    }
  return flags;
}

/* a macro or call-block body: loop controls of an outer loop do not reach into it */
static gboolean
parse_function_body (Parser *p, const char *const *end, HzjNode *n)
{
  const guint loops = p->loops;
  p->loops = 0;
  const gboolean ok = parse_statements (p, end, TRUE, &n->list, NULL);
  p->loops = loops;
  n->flags |= macro_flags (n->list);
  return ok;
}

static HzjNode *
parse_statement (Parser *p);

static HzjNode *
parse_statement_body (Parser *p, const char *tag, int line)
{
  HzjNode *n = NULL;
  if (!strcmp (tag, "for"))
    return parse_for (p, line);
  if (!strcmp (tag, "if"))
    return parse_if (p, line);
  if (!strcmp (tag, "set"))
    {
      HzjNode *target = parse_assign_target (p, FALSE, NULL, TRUE);
      if (!target)
        return NULL;
      if (skip_op (p, "="))
        {
          n = hzj_node_new (HZJ_N_SET, line);
          n->a = target;
          if (!(n->b = parse_tuple (p, FALSE, TRUE, NULL, FALSE)))
            goto fail;
          return sealed (p, n);
        }
      n = hzj_node_new (HZJ_N_SET_BLOCK, line);
      n->a = target;
      if (p->failed || (is_op (cur (p), "|") && !(n->b = parse_filter (p, NULL, FALSE))) ||
          !parse_statements (p, END_SET, TRUE, &n->list, NULL))
        goto fail;
      return sealed (p, n);
    }
  if (!strcmp (tag, "macro"))
    {
      n = hzj_node_new (HZJ_N_MACRO, line);
      HzjNode *name = parse_assign_target (p, TRUE, NULL, FALSE);
      if (!name)
        goto fail;
      n->name = g_steal_pointer (&name->name);
      hzj_node_free (name);
      if (!parse_signature (p, n) || !parse_function_body (p, END_MACRO, n))
        goto fail;
      return sealed (p, n);
    }
  if (!strcmp (tag, "call"))
    {
      n = hzj_node_new (HZJ_N_CALL_BLOCK, line);
      if (is_op (cur (p), "(") && !parse_signature (p, n))
        goto fail;
      if (!(n->a = parse_expression (p, TRUE)))
        goto fail;
      if (n->a->kind != HZJ_N_CALL)
        {
          fail_at (p, line, "expected call");
          goto fail;
        }
      if (!parse_function_body (p, END_CALL, n))
        goto fail;
      return sealed (p, n);
    }
  if (!strcmp (tag, "filter"))
    {
      n = hzj_node_new (HZJ_N_FILTER_BLOCK, line);
      if (!(n->b = parse_filter (p, NULL, TRUE)) || !parse_statements (p, END_FILTER, TRUE, &n->list, NULL))
        goto fail;
      return sealed (p, n);
    }
  if (!strcmp (tag, "with"))
    {
      n = hzj_node_new (HZJ_N_WITH, line);
      while (cur (p)->kind != HZJ_T_BLOCK_END)
        {
          if (n->list2 && !expect_op (p, ","))
            goto fail;
          HzjNode *set = hzj_node_new (HZJ_N_SET, cur (p)->line);
          hzj_node_list_add (&n->list2, set);
          if (!(set->a = parse_assign_target (p, FALSE, NULL, FALSE)) || !expect_op (p, "=") ||
              !(set->b = parse_expression (p, TRUE)))
            goto fail;
          set->depth = MAX (set->a->depth, set->b->depth) + 1;
        }
      if (!parse_statements (p, END_WITH, TRUE, &n->list, NULL))
        goto fail;
      return sealed (p, n);
    }
  if (!strcmp (tag, "print"))
    {
      /* {% print a, b %}: one output per expression */
      n = hzj_node_new (HZJ_N_BODY, line);
      while (cur (p)->kind != HZJ_T_BLOCK_END)
        {
          HzjNode *e;
          if ((n->list && !expect_op (p, ",")) || !(e = parse_expression (p, TRUE)) ||
              !(e = node2 (p, HZJ_N_OUTPUT, line, e, NULL)))
            goto fail;
          hzj_node_list_add (&n->list, e);
        }
      return sealed (p, n);
    }
  if (!strcmp (tag, "break") || !strcmp (tag, "continue"))
    {
      if (p->loops == 0)
        return fail_at (p, line, "'%s' outside loop", tag);
      return hzj_node_new (!strcmp (tag, "break") ? HZJ_N_BREAK : HZJ_N_CONTINUE, line);
    }
  return fail_at (p, line, "tag '%s' is not supported in chat templates", tag);
fail:
  hzj_node_free (n);
  return NULL;
}

/* Parser._fail_ut_eof */
static gpointer
fail_unknown_tag (Parser *p, const char *name, int line)
{
  GString *msg = g_string_new (NULL);
  if (name)
    g_string_append_printf (msg, "Encountered unknown tag '%s'.", name);
  else
    g_string_append (msg, "Unexpected end of template.");
  gboolean expected = FALSE;
  for (guint i = 0; name && i < p->end_stack->len; i++)
    for (const char *const *e = p->end_stack->pdata[i]; *e; e++)
      expected |= !strcmp (*e, name);
  if (p->end_stack->len)
    {
      GString *looking = g_string_new (NULL);
      for (const char *const *e = p->end_stack->pdata[p->end_stack->len - 1]; *e; e++)
        g_string_append_printf (looking, "%s'%s'", looking->len ? " or " : "", *e);
      if (expected)
        g_string_append_printf (msg, " You probably made a nesting mistake. Jinja is expecting "
                                     "this tag, but currently looking for %s.", looking->str);
      else
        g_string_append_printf (msg, " Jinja was looking for the following tags: %s.", looking->str);
      g_string_free (looking, TRUE);
    }
  if (p->tag_stack->len)
    g_string_append_printf (msg, " The innermost block that needs to be closed is '%s'.",
                            (const char *) p->tag_stack->pdata[p->tag_stack->len - 1]);
  fail_at (p, line, "%s", msg->str);
  g_string_free (msg, TRUE);
  return NULL;
}

static const char *const statement_tags[] = {
  "for", "if", "set", "macro", "call", "filter", "with", "print", "break", "continue",
  "block", "extends", "include", "from", "import", "autoescape", NULL
};

static HzjNode *
parse_statement (Parser *p)
{
  HzjToken *t = cur (p);
  if (t->kind != HZJ_T_NAME)
    return fail_at (p, t->line, "tag name expected");
  gboolean known = FALSE;
  for (int i = 0; statement_tags[i]; i++)
    known |= !strcmp (statement_tags[i], t->text);
  if (!known)
    return fail_unknown_tag (p, t->text, t->line);
  if (!enter (p))
    return NULL;
  g_ptr_array_add (p->tag_stack, t->text);
  next (p);
  HzjNode *n = parse_statement_body (p, t->text, t->line);
  g_ptr_array_set_size (p->tag_stack, p->tag_stack->len - 1);
  p->nesting--;
  return n;
}

static HzjNode *
subparse (Parser *p, const char *const *end_tokens)
{
  HzjNode *body = hzj_node_new (HZJ_N_BODY, cur (p)->line);
  if (end_tokens)
    g_ptr_array_add (p->end_stack, (gpointer) end_tokens);
  for (;;)
    {
      HzjToken *t = cur (p);
      if (t->kind == HZJ_T_EOF)
        {
          if (end_tokens)
            fail_unknown_tag (p, NULL, t->line);
          break;
        }
      if (t->kind == HZJ_T_DATA)
        {
          HzjNode *d = hzj_node_new (HZJ_N_DATA, t->line);
          d->value = hzj_str (t->text, t->len, FALSE);
          hzj_make_immortal (d->value);
          hzj_node_list_add (&body->list, d);
          next (p);
          continue;
        }
      if (t->kind == HZJ_T_VAR_BEGIN)
        {
          next (p);
          HzjNode *e = parse_tuple (p, FALSE, TRUE, NULL, FALSE);
          if (!e)
            break;
          hzj_node_list_add (&body->list, node2 (p, HZJ_N_OUTPUT, t->line, e, NULL));
          if (p->failed || !expect_kind (p, HZJ_T_VAR_END))
            break;
          continue;
        }
      if (t->kind == HZJ_T_BLOCK_BEGIN)
        {
          next (p);
          gboolean at_end = FALSE;
          for (int i = 0; end_tokens && end_tokens[i]; i++)
            at_end |= is_name (cur (p), end_tokens[i]);
          if (at_end)
            {
              if (end_tokens)
                g_ptr_array_set_size (p->end_stack, p->end_stack->len - 1);
              return p->failed ? (hzj_node_free (body), NULL) : body;
            }
          HzjNode *s = parse_statement (p);
          if (!s)
            break;
          hzj_node_list_add (&body->list, s);
          if (!expect_kind (p, HZJ_T_BLOCK_END))
            break;
          continue;
        }
      g_autofree char *desc = hzj_token_describe (t);
      fail_at (p, t->line, "unexpected '%s'", desc);
      break;
    }
  if (end_tokens)
    g_ptr_array_set_size (p->end_stack, p->end_stack->len - 1);
  if (p->failed)
    {
      hzj_node_free (body);
      return NULL;
    }
  return body;
}

/* Jinja2 refuses a filter or test it does not know at compile time, except inside an
 * {% if %} or an inline if ("soft" frames: the error waits until the branch runs) */
static gboolean
check_names (Parser *p, HzjNode *n, gboolean soft)
{
  if (n == NULL)
    return TRUE;
  if (!soft && (n->kind == HZJ_N_FILTER || n->kind == HZJ_N_TEST))
    {
      const gboolean filter = n->kind == HZJ_N_FILTER;
      if (filter ? !hzj_filter_exists (n->name) : !hzj_test_exists (n->name))
        {
          hzj_error_set (p->error, HZ_JINJA_ERROR_SYNTAX, "TemplateAssertionError", n->line,
                         "No %s named '%s'.", filter ? "filter" : "test", n->name);
          return FALSE;
        }
    }
  if (n->kind == HZJ_N_IF || n->kind == HZJ_N_COND)
    soft = TRUE;
  else if (n->kind == HZJ_N_FOR || n->kind == HZJ_N_MACRO || n->kind == HZJ_N_CALL_BLOCK ||
           n->kind == HZJ_N_FILTER_BLOCK || n->kind == HZJ_N_WITH || n->kind == HZJ_N_SET_BLOCK)
    soft = FALSE;
  HzjNode *kids[] = { n->a, n->b, n->c, n->d };
  for (guint i = 0; i < G_N_ELEMENTS (kids); i++)
    if (!check_names (p, kids[i], soft))
      return FALSE;
  GPtrArray *lists[] = { n->list, n->list2 };
  for (guint l = 0; l < 2; l++)
    for (guint i = 0; lists[l] && i < lists[l]->len; i++)
      if (!check_names (p, lists[l]->pdata[i], soft))
        return FALSE;
  return TRUE;
}

HzjNode *
hzj_parse (const char *src, gsize len, GError **error)
{
  GArray *toks = hzj_lex (src, len, error);
  if (!toks)
    return NULL;
  Parser p = { .toks = toks, .error = error };
  p.end_stack = g_ptr_array_new ();
  p.tag_stack = g_ptr_array_new ();
  HzjNode *body = subparse (&p, NULL);
  if (body && !check_names (&p, body, FALSE))
    g_clear_pointer (&body, hzj_node_free);
  if (body)
    hzj_symbols_analyze (body);
  g_ptr_array_unref (p.end_stack);
  g_ptr_array_unref (p.tag_stack);
  hzj_tokens_free (toks);
  return body;
}
