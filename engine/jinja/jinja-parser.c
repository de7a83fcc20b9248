/* engine/jinja/jinja-parser.c — the statements of jinja2/parser.py by recursive descent,
 * over the expressions of jinja-parse-expr.c (see jinja-parser.h). Each parse_* function
 * mirrors the method of the same name there. */
#include "jinja-parser.h"
#include "jinja-error.h"
#include "jinja-filters.h"
#include "jinja-parse-expr.h"
#include "jinja-symbols.h"
#include "jinja-tests.h"

static HzjNode *subparse (HzjParser *p, const char *const *end_tokens);

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
parse_assign_target (HzjParser *p, gboolean name_only, const char *extra_end, gboolean with_ns)
{
  HzjNode *target;
  const int line = cur (p)->line;
  if (with_ns && cur (p)->kind == HZJ_T_NAME && is_op (look (p), "."))
    {
      target = hzj_node_new (HZJ_N_NSREF, line);
      target->name = hzj_parse_expect_name (p);
      next (p);
      if (!(target->name2 = hzj_parse_expect_name (p)))
        {
          hzj_node_free (target);
          return NULL;
        }
      return target;
    }
  if (name_only)
    {
      char *name = hzj_parse_expect_name (p);
      if (!name)
        return NULL;
      target = hzj_node_new (HZJ_N_NAME, line);
      target->name = name;
    }
  else if (!(target = hzj_parse_tuple (p, TRUE, TRUE, extra_end, FALSE)))
    return NULL;
  if (!can_assign (target))
    {
      const char *what = target->kind == HZJ_N_CONST ? "const" : target->kind == HZJ_N_CALL ? "call"
                         : target->kind == HZJ_N_LIST ? "list" : target->kind == HZJ_N_DICT ? "dict"
                         : "expression";
      hzj_parse_fail_at (p, target->line, "can't assign to '%s'", what);
      hzj_node_free (target);
      return NULL;
    }
  return target;
}

/* parse_statements: ":"? "%}" body, stopping before one of end_tokens (dropped when
 * drop_needle); *which gets the end tag seen */
static gboolean
parse_statements (HzjParser *p, const char *const *end_tokens, gboolean drop_needle,
                  GPtrArray **body, const char **which)
{
  skip_op (p, ":");
  if (!hzj_parse_expect_kind (p, HZJ_T_BLOCK_END))
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
parse_for (HzjParser *p, int line)
{
  HzjNode *n = hzj_node_new (HZJ_N_FOR, line);
  const char *which;
  if (!(n->a = parse_assign_target (p, FALSE, "in", FALSE)) ||
      !hzj_parse_expect (p, is_name (cur (p), "in"), "in") ||
      !(n->b = hzj_parse_tuple (p, FALSE, FALSE, "recursive", FALSE)))
    goto fail;
  if (skip_name (p, "if") && !(n->c = hzj_parse_expression (p, TRUE)))
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
  return hzj_parse_sealed (p, n);
fail:
  hzj_node_free (n);
  return NULL;
}

static HzjNode *
parse_if (HzjParser *p, int line)
{
  HzjNode *result = hzj_node_new (HZJ_N_IF, line), *node = result;
  for (;;)
    {
      const char *which;
      if (!(node->a = hzj_parse_tuple (p, FALSE, FALSE, NULL, FALSE)) ||
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
      if (!hzj_parse_measure (p, chain->pdata[i]))
        goto fail;
  }
  return result;
fail:
  hzj_node_free (result);
  return NULL;
}

static gboolean
parse_signature (HzjParser *p, HzjNode *n)
{
  if (!hzj_parse_expect_op (p, "("))
    return FALSE;
  gboolean defaults = FALSE;
  while (!is_op (cur (p), ")"))
    {
      if (n->list2 && !hzj_parse_expect_op (p, ","))
        return FALSE;
      HzjNode *arg = parse_assign_target (p, TRUE, NULL, FALSE);
      if (!arg)
        return FALSE;
      arg->kind = HZJ_N_KWARG;
      hzj_node_list_add (&n->list2, arg);
      if (skip_op (p, "="))
        {
          if (!(arg->a = hzj_parse_expression (p, TRUE)))
            return FALSE;
          arg->depth = arg->a->depth + 1;
          defaults = TRUE;
        }
      else if (defaults)
        {
          hzj_parse_fail_at (p, arg->line, "non-default argument follows default argument");
          return FALSE;
        }
    }
  return hzj_parse_expect_op (p, ")");
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
parse_function_body (HzjParser *p, const char *const *end, HzjNode *n)
{
  const guint loops = p->loops;
  p->loops = 0;
  const gboolean ok = parse_statements (p, end, TRUE, &n->list, NULL);
  p->loops = loops;
  n->flags |= macro_flags (n->list);
  return ok;
}

static HzjNode *
parse_statement (HzjParser *p);

static HzjNode *
parse_statement_body (HzjParser *p, const char *tag, int line)
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
          if (!(n->b = hzj_parse_tuple (p, FALSE, TRUE, NULL, FALSE)))
            goto fail;
          return hzj_parse_sealed (p, n);
        }
      n = hzj_node_new (HZJ_N_SET_BLOCK, line);
      n->a = target;
      if (p->failed || (is_op (cur (p), "|") && !(n->b = hzj_parse_filter (p, NULL, FALSE))) ||
          !parse_statements (p, END_SET, TRUE, &n->list, NULL))
        goto fail;
      return hzj_parse_sealed (p, n);
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
      return hzj_parse_sealed (p, n);
    }
  if (!strcmp (tag, "call"))
    {
      n = hzj_node_new (HZJ_N_CALL_BLOCK, line);
      if (is_op (cur (p), "(") && !parse_signature (p, n))
        goto fail;
      if (!(n->a = hzj_parse_expression (p, TRUE)))
        goto fail;
      if (n->a->kind != HZJ_N_CALL)
        {
          hzj_parse_fail_at (p, line, "expected call");
          goto fail;
        }
      if (!parse_function_body (p, END_CALL, n))
        goto fail;
      return hzj_parse_sealed (p, n);
    }
  if (!strcmp (tag, "filter"))
    {
      n = hzj_node_new (HZJ_N_FILTER_BLOCK, line);
      if (!(n->b = hzj_parse_filter (p, NULL, TRUE)) ||
          !parse_statements (p, END_FILTER, TRUE, &n->list, NULL))
        goto fail;
      return hzj_parse_sealed (p, n);
    }
  if (!strcmp (tag, "with"))
    {
      n = hzj_node_new (HZJ_N_WITH, line);
      while (cur (p)->kind != HZJ_T_BLOCK_END)
        {
          if (n->list2 && !hzj_parse_expect_op (p, ","))
            goto fail;
          HzjNode *set = hzj_node_new (HZJ_N_SET, cur (p)->line);
          hzj_node_list_add (&n->list2, set);
          if (!(set->a = parse_assign_target (p, FALSE, NULL, FALSE)) ||
              !hzj_parse_expect_op (p, "=") || !(set->b = hzj_parse_expression (p, TRUE)))
            goto fail;
          set->depth = MAX (set->a->depth, set->b->depth) + 1;
        }
      if (!parse_statements (p, END_WITH, TRUE, &n->list, NULL))
        goto fail;
      return hzj_parse_sealed (p, n);
    }
  if (!strcmp (tag, "print"))
    {
      /* {% print a, b %}: one output per expression */
      n = hzj_node_new (HZJ_N_BODY, line);
      while (cur (p)->kind != HZJ_T_BLOCK_END)
        {
          HzjNode *e;
          if ((n->list && !hzj_parse_expect_op (p, ",")) || !(e = hzj_parse_expression (p, TRUE)) ||
              !(e = hzj_parse_node2 (p, HZJ_N_OUTPUT, line, e, NULL)))
            goto fail;
          hzj_node_list_add (&n->list, e);
        }
      return hzj_parse_sealed (p, n);
    }
  if (!strcmp (tag, "break") || !strcmp (tag, "continue"))
    {
      if (p->loops == 0)
        return hzj_parse_fail_at (p, line, "'%s' outside loop", tag);
      return hzj_node_new (!strcmp (tag, "break") ? HZJ_N_BREAK : HZJ_N_CONTINUE, line);
    }
  return hzj_parse_fail_at (p, line, "tag '%s' is not supported in chat templates", tag);
fail:
  hzj_node_free (n);
  return NULL;
}

/* HzjParser._fail_ut_eof */
static gpointer
fail_unknown_tag (HzjParser *p, const char *name, int line)
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
  hzj_parse_fail_at (p, line, "%s", msg->str);
  g_string_free (msg, TRUE);
  return NULL;
}

static const char *const statement_tags[] = {
  "for", "if", "set", "macro", "call", "filter", "with", "print", "break", "continue",
  "block", "extends", "include", "from", "import", "autoescape", NULL
};

static HzjNode *
parse_statement (HzjParser *p)
{
  HzjToken *t = cur (p);
  if (t->kind != HZJ_T_NAME)
    return hzj_parse_fail_at (p, t->line, "tag name expected");
  gboolean known = FALSE;
  for (int i = 0; statement_tags[i]; i++)
    known |= !strcmp (statement_tags[i], t->text);
  if (!known)
    return fail_unknown_tag (p, t->text, t->line);
  if (!hzj_parse_enter (p))
    return NULL;
  g_ptr_array_add (p->tag_stack, t->text);
  next (p);
  HzjNode *n = parse_statement_body (p, t->text, t->line);
  g_ptr_array_set_size (p->tag_stack, p->tag_stack->len - 1);
  p->nesting--;
  return n;
}

static HzjNode *
subparse (HzjParser *p, const char *const *end_tokens)
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
          HzjNode *e = hzj_parse_tuple (p, FALSE, TRUE, NULL, FALSE);
          if (!e)
            break;
          hzj_node_list_add (&body->list, hzj_parse_node2 (p, HZJ_N_OUTPUT, t->line, e, NULL));
          if (p->failed || !hzj_parse_expect_kind (p, HZJ_T_VAR_END))
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
          if (!hzj_parse_expect_kind (p, HZJ_T_BLOCK_END))
            break;
          continue;
        }
      g_autofree char *desc = hzj_token_describe (t);
      hzj_parse_fail_at (p, t->line, "unexpected '%s'", desc);
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
check_names (HzjParser *p, HzjNode *n, gboolean soft)
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
  HzjParser p = { .toks = toks, .error = error };
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
