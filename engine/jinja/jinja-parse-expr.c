/* engine/jinja/jinja-parse-expr.c — the expressions of jinja2/parser.py by recursive
 * descent (see jinja-parse-expr.h): each parse_* function mirrors the method of the same
 * name there. */
#include "jinja-parse-expr.h"

static HzjNode *parse_unary (HzjParser *p, gboolean with_filter);
static HzjNode *parse_trailers (HzjParser *p, HzjNode *node, gboolean filters);
static HzjNode *parse_primary (HzjParser *p);
static HzjNode *constant (HzjValue *v, int line);

/* parse_call_args: fills n->list (args), n->list2 (KWARGs), n->c (*args), n->d (**kwargs) */
static gboolean
parse_call_args (HzjParser *p, HzjNode *n)
{
  const int line = cur (p)->line;
  if (!hzj_parse_expect_op (p, "("))
    return FALSE;
  gboolean need_comma = FALSE;
  while (!is_op (cur (p), ")"))
    {
      if (need_comma)
        {
          if (!hzj_parse_expect_op (p, ","))
            return FALSE;
          if (is_op (cur (p), ")"))
            break;
        }
      gboolean ok;
      if (is_op (cur (p), "*"))
        {
          ok = n->c == NULL && n->d == NULL;
          next (p);
          if (ok && !(n->c = hzj_parse_expression (p, TRUE)))
            return FALSE;
        }
      else if (is_op (cur (p), "**"))
        {
          ok = n->d == NULL;
          next (p);
          if (ok && !(n->d = hzj_parse_expression (p, TRUE)))
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
          if (ok && !(kw->a = hzj_parse_expression (p, TRUE)))
            return FALSE;
          if (kw->a)
            kw->depth = kw->a->depth + 1;
        }
      else
        {
          ok = n->c == NULL && n->d == NULL && n->list2 == NULL;
          HzjNode *arg = ok ? hzj_parse_expression (p, TRUE) : NULL;
          if (ok && !arg)
            return FALSE;
          if (arg)
            hzj_node_list_add (&n->list, arg);
        }
      if (!ok)
        {
          hzj_parse_fail_at (p, line, "invalid syntax for function call expression");
          return FALSE;
        }
      need_comma = TRUE;
    }
  return hzj_parse_expect_op (p, ")");
}

static HzjNode *
parse_call (HzjParser *p, HzjNode *callee)
{
  HzjNode *n = hzj_node_new (HZJ_N_CALL, cur (p)->line);
  n->a = callee;
  if (!parse_call_args (p, n))
    {
      hzj_node_free (n);
      return NULL;
    }
  return hzj_parse_sealed (p, n);
}

/* filter or test name: name(.name)* */
static char *
parse_dotted_name (HzjParser *p)
{
  char *name = hzj_parse_expect_name (p);
  while (name && is_op (cur (p), "."))
    {
      next (p);
      g_autofree char *more = hzj_parse_expect_name (p);
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

HzjNode *
hzj_parse_filter (HzjParser *p, HzjNode *node, gboolean start_inline)
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
      if (!(node = hzj_parse_sealed (p, f)))
        return NULL;
    }
  return node;
}

static HzjNode *
parse_test (HzjParser *p, HzjNode *node)
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
          hzj_parse_fail_at (p, c->line, "You cannot chain multiple tests with is");
          goto fail;
        }
      HzjNode *arg = parse_primary (p);
      if (!arg || !(arg = parse_trailers (p, arg, FALSE)))
        goto fail;
      hzj_node_list_add (&t->list, arg);
    }
  return hzj_parse_sealed (p, t);
fail:
  hzj_node_free (t);
  return NULL;
}

static HzjNode *
parse_subscribed (HzjParser *p)
{
  const int line = cur (p)->line;
  HzjNode *parts[3] = { NULL, NULL, NULL };
  if (is_op (cur (p), ":"))
    next (p);
  else
    {
      HzjNode *e = hzj_parse_expression (p, TRUE);
      if (!e || !is_op (cur (p), ":"))
        return e;
      next (p);
      parts[0] = e;
    }
  if (!is_op (cur (p), ":") && !is_op (cur (p), "]") && !is_op (cur (p), ","))
    if (!(parts[1] = hzj_parse_expression (p, TRUE)))
      goto fail;
  if (is_op (cur (p), ":"))
    {
      next (p);
      if (!is_op (cur (p), "]") && !is_op (cur (p), ","))
        if (!(parts[2] = hzj_parse_expression (p, TRUE)))
          goto fail;
    }
  HzjNode *s = hzj_node_new (HZJ_N_SLICE, line);
  s->a = parts[0];
  s->b = parts[1];
  s->c = parts[2];
  return hzj_parse_sealed (p, s);
fail:
  for (int i = 0; i < 3; i++)
    hzj_node_free (parts[i]);
  return NULL;
}

static HzjNode *
parse_subscript (HzjParser *p, HzjNode *node)
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
          return hzj_parse_sealed (p, n);
        }
      if (attr->kind != HZJ_T_INT)
        {
          hzj_node_free (node);
          return hzj_parse_fail_at (p, attr->line, "expected name or number");
        }
      return hzj_parse_node2 (p, HZJ_N_GETITEM, line, node, constant (hzj_int (attr->i), attr->line));
    }
  /* "[" */
  HzjNode *tuple = hzj_node_new (HZJ_N_TUPLE, line);
  while (!is_op (cur (p), "]"))
    {
      HzjNode *arg;
      if ((tuple->list && !hzj_parse_expect_op (p, ",")) || !(arg = parse_subscribed (p)))
        {
          hzj_node_free (tuple);
          hzj_node_free (node);
          return NULL;
        }
      hzj_node_list_add (&tuple->list, arg);
    }
  if (!hzj_parse_expect_op (p, "]"))
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
  else if (!(key = hzj_parse_sealed (p, tuple)))
    {
      hzj_node_free (node);
      return NULL;
    }
  return hzj_parse_node2 (p, HZJ_N_GETITEM, line, node, key);
}

/* parse_postfix (without filters: ".name", "[...]", calls) and parse_filter_expr (with:
 * "|filter", "is test", calls) */
static HzjNode *
parse_trailers (HzjParser *p, HzjNode *node, gboolean filters)
{
  while (node)
    {
      if (!filters && (is_op (cur (p), ".") || is_op (cur (p), "[")))
        node = parse_subscript (p, node);
      else if (filters && is_op (cur (p), "|"))
        node = hzj_parse_filter (p, node, FALSE);
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
parse_list_or_dict (HzjParser *p, gboolean dict)
{
  const char *close = dict ? "}" : "]";
  HzjNode *n = hzj_node_new (dict ? HZJ_N_DICT : HZJ_N_LIST, next (p)->line);
  guint count = 0;
  while (!is_op (cur (p), close))
    {
      if (count && !hzj_parse_expect_op (p, ","))
        goto fail;
      if (is_op (cur (p), close))
        break;
      HzjNode *e = hzj_parse_expression (p, TRUE);
      if (!e)
        goto fail;
      hzj_node_list_add (&n->list, e);
      if (dict)
        {
          if (!hzj_parse_expect_op (p, ":") || !(e = hzj_parse_expression (p, TRUE)))
            goto fail;
          hzj_node_list_add (&n->list2, e);
        }
      count++;
    }
  if (!hzj_parse_expect_op (p, close))
    goto fail;
  return hzj_parse_sealed (p, n);
fail:
  hzj_node_free (n);
  return NULL;
}

static HzjNode *
parse_primary (HzjParser *p)
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
      HzjNode *n = hzj_parse_tuple (p, FALSE, TRUE, NULL, TRUE);
      if (n && !hzj_parse_expect_op (p, ")"))
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
    return hzj_parse_fail_at (p, t->line, "unexpected end of template");
  return hzj_parse_fail_at (p, t->line, "unexpected '%s'", desc);
}

static HzjNode *
parse_unary (HzjParser *p, gboolean with_filter)
{
  if (!hzj_parse_enter (p))
    return NULL;
  HzjNode *node;
  const int line = cur (p)->line;
  if (is_op (cur (p), "-") || is_op (cur (p), "+"))
    {
      const HzjNodeKind k = is_op (next (p), "-") ? HZJ_N_NEG : HZJ_N_POS;
      HzjNode *operand = parse_unary (p, FALSE);
      node = operand ? hzj_parse_node2 (p, k, line, operand, NULL) : NULL;
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
parse_binary_chain (HzjParser *p, int level);

/* operator levels below `not`: compare, math1 (+ -), concat (~), math2 (* / // %), pow */
enum { LV_MATH1, LV_CONCAT, LV_MATH2, LV_POW };

static HzjNode *
parse_binary_chain (HzjParser *p, int level)
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
      return hzj_parse_sealed (p, n);
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
      left = hzj_parse_node2 (p, HZJ_N_BINOP, line, left, right);
      if (left)
        left->op = ops[found].binop;
    }
  return left;
}

static HzjNode *
parse_compare (HzjParser *p)
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
  return cmp ? hzj_parse_sealed (p, cmp) : expr;
}

static HzjNode *
parse_not (HzjParser *p)
{
  if (is_name (cur (p), "not"))
    {
      const int line = next (p)->line;
      if (!hzj_parse_enter (p))
        return NULL;
      HzjNode *operand = parse_not (p);
      p->nesting--;
      return operand ? hzj_parse_node2 (p, HZJ_N_NOT, line, operand, NULL) : NULL;
    }
  return parse_compare (p);
}

static HzjNode *
parse_and_or (HzjParser *p, gboolean is_or)
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
      left = hzj_parse_node2 (p, is_or ? HZJ_N_OR : HZJ_N_AND, line, left, right);
    }
  return left;
}

static HzjNode *
parse_condexpr (HzjParser *p)
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
      expr1 = hzj_parse_sealed (p, n);
    }
  return expr1;
}

HzjNode *
hzj_parse_expression (HzjParser *p, gboolean with_condexpr)
{
  if (!hzj_parse_enter (p))
    return NULL;
  HzjNode *n = with_condexpr ? parse_condexpr (p) : parse_and_or (p, TRUE);
  p->nesting--;
  return n;
}

static gboolean
is_tuple_end (HzjParser *p, const char *extra_end)
{
  HzjToken *t = cur (p);
  return t->kind == HZJ_T_VAR_END || t->kind == HZJ_T_BLOCK_END || is_op (t, ")") ||
         (extra_end && is_name (t, extra_end));
}

HzjNode *
hzj_parse_tuple (HzjParser *p, gboolean simplified, gboolean with_condexpr, const char *extra_end,
                 gboolean explicit_parens)
{
  const int line = cur (p)->line;
  HzjNode *tuple = hzj_node_new (HZJ_N_TUPLE, line);
  gboolean is_tuple = FALSE;
  for (;;)
    {
      if (tuple->list && !hzj_parse_expect_op (p, ","))
        goto fail;
      if (is_tuple_end (p, extra_end))
        break;
      HzjNode *e = simplified ? parse_primary (p) : hzj_parse_expression (p, with_condexpr);
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
          hzj_parse_fail_at (p, cur (p)->line, "Expected an expression, got '%s'", desc);
          goto fail;
        }
    }
  return hzj_parse_sealed (p, tuple);
fail:
  hzj_node_free (tuple);
  return NULL;
}
