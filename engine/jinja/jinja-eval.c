/* engine/jinja/jinja-eval.c — the evaluator: statements, expressions, calls of macros
 * and recursive loops (see jinja-eval.h). Operators are in jinja-ops.c, lookups in
 * jinja-lookup.c, filters and tests in jinja-filters.c and jinja-tests.c, methods in
 * jinja-methods.c; scopes, macro and loop objects in jinja-scope.c, jinja-macro.c and
 * jinja-loop.c. */
#include "jinja-eval.h"
#include "jinja-filters.h"
#include "jinja-iter.h"
#include "jinja-lookup.h"
#include "jinja-loop.h"
#include "jinja-macro.h"
#include "jinja-ops.h"
#include "jinja-scope.h"
#include "jinja-tests.h"

#include <string.h>

/* nested evaluations (each a few hundred bytes of C stack) */
#define MAX_EVAL_DEPTH 2000

typedef enum { FLOW_OK, FLOW_BREAK, FLOW_CONTINUE, FLOW_ERROR } Flow;

/* ---- arguments ---- */

typedef struct {
  GPtrArray *pos, *vals, *names;
  HzjArgs args;
} Args;

static HzjValue *eval (HzjCtx *ctx, HzjScope *s, const HzjNode *n);
static Flow exec_body (HzjCtx *ctx, HzjScope *s, GPtrArray *body, HzjBuf *out);

static void
args_init (Args *a)
{
  a->pos = g_ptr_array_new_with_free_func ((GDestroyNotify) hzj_unref);
  a->vals = g_ptr_array_new_with_free_func ((GDestroyNotify) hzj_unref);
  a->names = g_ptr_array_new_with_free_func (g_free);
}

static void
args_clear (Args *a)
{
  g_ptr_array_unref (a->pos);
  g_ptr_array_unref (a->vals);
  g_ptr_array_unref (a->names);
}

static void
args_seal (Args *a)
{
  a->args.pos = (HzjValue **) a->pos->pdata;
  a->args.n_pos = a->pos->len;
  a->args.kw_names = (const char **) a->names->pdata;
  a->args.kw_vals = (HzjValue **) a->vals->pdata;
  a->args.n_kw = a->vals->len;
}

static void
args_add_kw (Args *a, const char *name, gsize len, HzjValue *v)
{
  g_ptr_array_add (a->names, g_strndup (name, len));
  g_ptr_array_add (a->vals, v);
}

/* the arguments of a CALL / FILTER / TEST node: list, list2 (KWARG), *c, **d */
static gboolean
eval_args (HzjCtx *ctx, HzjScope *s, const HzjNode *n, Args *a)
{
  args_init (a);
  for (guint i = 0; n->list && i < n->list->len; i++)
    {
      HzjValue *v = eval (ctx, s, n->list->pdata[i]);
      if (!v)
        return FALSE;
      g_ptr_array_add (a->pos, v);
    }
  if (n->c)
    {
      g_autoptr (HzjValue) star = eval (ctx, s, n->c);
      g_autoptr (GPtrArray) items = star ? hzj_iterate (ctx, star) : NULL;
      if (!items)
        return FALSE;
      for (guint i = 0; i < items->len; i++)
        g_ptr_array_add (a->pos, hzj_ref (items->pdata[i]));
    }
  for (guint i = 0; n->list2 && i < n->list2->len; i++)
    {
      const HzjNode *kw = n->list2->pdata[i];
      HzjValue *v = eval (ctx, s, kw->a);
      if (!v)
        return FALSE;
      args_add_kw (a, kw->name, strlen (kw->name), v);
    }
  if (n->d)
    {
      g_autoptr (HzjValue) dict = eval (ctx, s, n->d);
      if (!dict)
        return FALSE;
      if (dict->kind != HZJ_DICT)
        return hzj_type_error (ctx, "argument after ** must be a mapping, not %s", hzj_type_name (dict)) != NULL;
      for (guint i = 0; i < dict->dict->keys->len; i++)
        {
          HzjValue *k = dict->dict->keys->pdata[i];
          if (k->kind != HZJ_STR)
            return hzj_type_error (ctx, "keywords must be strings") != NULL;
          args_add_kw (a, k->str.s, k->str.len, hzj_ref (dict->dict->vals->pdata[i]));
        }
    }
  args_seal (a);
  return TRUE;
}

/* ---- assignment ---- */

static gboolean
assign (HzjCtx *ctx, HzjScope *s, const HzjNode *target, HzjValue *v)
{
  if (target->kind == HZJ_N_NAME)
    {
      hzj_scope_set (s, target->name, hzj_ref (v));
      return TRUE;
    }
  if (target->kind == HZJ_N_NSREF)
    {
      HzjValue *ns = hzj_scope_lookup (s, target->name);
      if (!ns || ns->kind != HZJ_NAMESPACE)
        return hzj_fail (ctx, HZ_JINJA_ERROR_RUNTIME, "TemplateRuntimeError",
                         "cannot assign attribute on non-namespace object") != NULL;
      hzj_dict_set (ns, hzj_cstr (target->name2), hzj_ref (v));
      return TRUE;
    }
  /* a tuple: unpack */
  const guint want = target->list ? target->list->len : 0;
  if (v->kind != HZJ_LIST && v->kind != HZJ_TUPLE && v->kind != HZJ_STR && v->kind != HZJ_DICT &&
      v->kind != HZJ_UNDEFINED)
    return hzj_type_error (ctx, "cannot unpack non-iterable %s object", hzj_type_name (v)) != NULL;
  g_autoptr (GPtrArray) items = hzj_iterate (ctx, v);
  if (!items)
    return FALSE;
  if (items->len < want)
    return hzj_value_error (ctx, "not enough values to unpack (expected %u, got %u)", want, items->len) != NULL;
  if (items->len > want)
    return hzj_value_error (ctx, "too many values to unpack (expected %u)", want) != NULL;
  for (guint i = 0; i < want; i++)
    if (!assign (ctx, s, target->list->pdata[i], items->pdata[i]))
      return FALSE;
  return TRUE;
}

/* ---- macros ---- */

static gboolean
render_to_str (HzjCtx *ctx, HzjScope *s, GPtrArray *body, HzjValue **out)
{
  HzjBuf b;
  hzj_buf_init (&b, ctx->max_output);
  const Flow f = exec_body (ctx, s, body, &b);
  if (f == FLOW_ERROR || b.overflow)
    {
      hzj_buf_clear (&b);
      if (!ctx->error)
        hzj_fail_size (ctx);
      return FALSE;
    }
  *out = hzj_str_from_buf (&b);
  return TRUE;
}

/* Jinja2's Macro.__call__ */
static HzjValue *
call_macro (HzjCtx *ctx, HzjValue *m, HzjArgs *args)
{
  const HzjNode *node = m->macro.node;
  const guint np = node->list2 ? node->list2->len : 0;
  const char *name = hzj_macro_name (m);
  if (ctx->depth >= ctx->max_depth)
    return hzj_limit_error (ctx, "macro calls nested more than %u deep (endless recursion?)", ctx->max_depth);
  if (args->n_pos > np && !(node->flags & HZJ_F_VARARGS))
    return hzj_type_error (ctx, "macro '%s' takes not more than %u argument(s)", name, np);
  g_autofree HzjValue **bound = g_new0 (HzjValue *, np + 1);
  for (guint i = 0; i < np && i < args->n_pos; i++)
    bound[i] = args->pos[i];
  g_autoptr (HzjValue) kwargs = (node->flags & HZJ_F_KWARGS) ? hzj_dict_new () : NULL;
  HzjValue *caller = NULL;
  for (guint k = 0; k < args->n_kw; k++)
    {
      guint i = 0;
      while (i < np && strcmp (((HzjNode *) node->list2->pdata[i])->name, args->kw_names[k]) != 0)
        i++;
      if (i < np)
        {
          if (bound[i])
            return hzj_type_error (ctx, "macro '%s' got multiple values for argument '%s'", name,
                                   args->kw_names[k]);
          bound[i] = args->kw_vals[k];
        }
      else if (!strcmp (args->kw_names[k], "caller") && (node->flags & HZJ_F_CALLER))
        caller = args->kw_vals[k];
      else if (kwargs)
        hzj_dict_set (kwargs, hzj_cstr (args->kw_names[k]), hzj_ref (args->kw_vals[k]));
      else
        return hzj_type_error (ctx, "macro '%s' takes no keyword argument '%s'", name, args->kw_names[k]);
    }
  HzjScope *s = hzj_scope_new (ctx, m->macro.scope);
  HzjValue *result = NULL;
  hzj_scope_shadow (s, node->shadow);
  for (guint i = 0; i < np; i++)
    {
      const HzjNode *param = node->list2->pdata[i];
      HzjValue *v;
      if (bound[i])
        v = hzj_ref (bound[i]);
      else if (param->a)
        {
          if (!(v = eval (ctx, s, param->a)))
            goto out;
        }
      else
        v = hzj_undefined_new (g_strdup_printf ("parameter '%s' was not provided", param->name), FALSE);
      hzj_scope_set (s, param->name, v);
    }
  if (node->flags & HZJ_F_VARARGS)
    {
      HzjValue *va = hzj_list_new (TRUE);
      for (guint i = np; i < args->n_pos; i++)
        hzj_list_push (va, hzj_ref (args->pos[i]));
      hzj_scope_set (s, "varargs", va);
    }
  if (kwargs)
    hzj_scope_set (s, "kwargs", hzj_ref (kwargs));
  if (node->flags & HZJ_F_CALLER)
    hzj_scope_set (s, "caller", caller ? hzj_ref (caller)
                                : hzj_undefined_new (g_strdup ("No caller defined"), FALSE));
  ctx->depth++;
  render_to_str (ctx, s, node->list, &result);
  ctx->depth--;
out:
  hzj_scope_unref (s);
  return result;
}

/* ---- loops ---- */

static Flow run_for (HzjCtx *ctx, HzjScope *s, const HzjNode *n, HzjValue *iterable,
                     guint depth0, HzjBuf *out);

static HzjValue *
call_loop (HzjCtx *ctx, HzjValue *loop, HzjArgs *args)
{
  HzjLoop *l = loop->loop.state;
  if (!(l->node->flags & HZJ_F_RECURSIVE))
    return hzj_type_error (ctx, "Tried to call non recursive loop. Maybe you forgot the 'recursive' modifier.");
  if (l->scope == NULL)
    return hzj_fail (ctx, HZ_JINJA_ERROR_RUNTIME, "TemplateRuntimeError",
                     "a recursive loop was called after it ended");
  if (args->n_pos != 1 || args->n_kw != 0)
    return hzj_type_error (ctx, "loop() takes exactly 1 argument");
  if (ctx->depth >= ctx->max_depth)
    return hzj_limit_error (ctx, "recursive loop nested more than %u deep", ctx->max_depth);
  HzjBuf b;
  hzj_buf_init (&b, ctx->max_output);
  ctx->depth++;
  const Flow f = run_for (ctx, l->scope, l->node, args->pos[0], l->depth0 + 1, &b);
  ctx->depth--;
  if (f == FLOW_ERROR || b.overflow)
    {
      hzj_buf_clear (&b);
      return ctx->error ? NULL : hzj_fail_size (ctx);
    }
  return hzj_str_from_buf (&b);
}

static Flow
run_for (HzjCtx *ctx, HzjScope *s, const HzjNode *n, HzjValue *iterable, guint depth0, HzjBuf *out)
{
  GPtrArray *items = hzj_iterate (ctx, iterable);
  if (!items)
    return FLOW_ERROR;
  if (n->c)
    {
      /* the inline filter sees the loop variable, not `loop` */
      GPtrArray *kept = g_ptr_array_new_with_free_func ((GDestroyNotify) hzj_unref);
      for (guint i = 0; i < items->len; i++)
        {
          if (!hzj_step (ctx))
            {
              g_ptr_array_unref (kept);
              g_ptr_array_unref (items);
              return FLOW_ERROR;
            }
          HzjScope *fs = hzj_scope_new (ctx, s);
          HzjValue *t = assign (ctx, fs, n->a, items->pdata[i]) ? eval (ctx, fs, n->c) : NULL;
          hzj_scope_unref (fs);
          if (!t)
            {
              g_ptr_array_unref (kept);
              g_ptr_array_unref (items);
              return FLOW_ERROR;
            }
          if (hzj_truthy (t))
            g_ptr_array_add (kept, hzj_ref (items->pdata[i]));
          hzj_unref (t);
        }
      g_ptr_array_unref (items);
      items = kept;
    }
  if (items->len == 0)
    {
      g_ptr_array_unref (items);
      HzjScope *es = hzj_scope_new (ctx, s);
      hzj_scope_shadow (es, n->shadow2);
      const Flow f = exec_body (ctx, es, n->list2, out);
      hzj_scope_unref (es);
      return f;
    }
  HzjValue *loop = hzj_loop_new (items, depth0, n, s);
  HzjLoop *l = loop->loop.state;
  Flow result = FLOW_OK;
  HzjScope *is = NULL;
  for (guint i = 0; i < items->len; i++)
    {
      if (!hzj_step (ctx)) /* an iteration is a step, even with an empty body */
        {
          result = FLOW_ERROR;
          break;
        }
      l->index0 = i;
      /* each iteration starts a fresh scope; the last one is reused when nothing kept it */
      if (is && hzj_scope_in_use (is))
        g_clear_pointer (&is, hzj_scope_unref);
      if (is)
        hzj_scope_clear (is);
      else
        is = hzj_scope_new (ctx, s);
      hzj_scope_shadow (is, n->shadow);
      Flow f = assign (ctx, is, n->a, items->pdata[i]) ? FLOW_OK : FLOW_ERROR;
      if (f == FLOW_OK)
        {
          hzj_scope_set (is, "loop", hzj_ref (loop));
          f = exec_body (ctx, is, n->list, out);
        }
      if (f == FLOW_ERROR)
        {
          result = FLOW_ERROR;
          break;
        }
      if (f == FLOW_BREAK)
        break;
    }
  if (is)
    hzj_scope_unref (is);
  l->scope = NULL;
  hzj_unref (loop);
  return result;
}

/* ---- calls ---- */

/* what hzj_call passes on: a macro or a recursive loop (ctx->env->call) */
static HzjValue *
call_macro_or_loop (HzjCtx *ctx, HzjValue *callee, HzjArgs *args)
{
  return callee->kind == HZJ_MACRO ? call_macro (ctx, callee, args) : call_loop (ctx, callee, args);
}

/* ---- expressions ---- */

/* a FILTER chain applied to `input` where the innermost node has no operand (filter
 * blocks, set blocks), or an ordinary filter expression when input is NULL */
static HzjValue *
eval_filter (HzjCtx *ctx, HzjScope *s, const HzjNode *n, HzjValue *input)
{
  HzjValue *in;
  if (n->a == NULL)
    in = hzj_ref (input);
  else if (n->a->kind == HZJ_N_FILTER && input)
    in = eval_filter (ctx, s, n->a, input);
  else
    in = eval (ctx, s, n->a);
  if (!in)
    return NULL;
  Args a;
  HzjValue *r = NULL;
  if (eval_args (ctx, s, n, &a))
    r = hzj_filter_apply (ctx, n->name, in, &a.args);
  args_clear (&a);
  hzj_unref (in);
  return r;
}

static HzjValue *
eval_slice (HzjCtx *ctx, HzjScope *s, HzjValue *obj, const HzjNode *sl)
{
  HzjValue *b[3] = { NULL, NULL, NULL };
  const HzjNode *parts[3] = { sl->a, sl->b, sl->c };
  HzjValue *r = NULL;
  for (int i = 0; i < 3; i++)
    if (parts[i] && !(b[i] = eval (ctx, s, parts[i])))
      goto out;
  r = hzj_op_slice (ctx, obj, b[0], b[1], b[2]);
out:
  for (int i = 0; i < 3; i++)
    hzj_unref (b[i]);
  return r;
}

static HzjValue *
eval_collection (HzjCtx *ctx, HzjScope *s, const HzjNode *n)
{
  const guint len = n->list ? n->list->len : 0;
  if (n->kind != HZJ_N_DICT)
    {
      HzjValue *out = hzj_list_new (n->kind == HZJ_N_TUPLE);
      for (guint i = 0; i < len; i++)
        {
          HzjValue *v = eval (ctx, s, n->list->pdata[i]);
          if (!v)
            {
              hzj_unref (out);
              return NULL;
            }
          hzj_list_push (out, v);
        }
      return out;
    }
  HzjValue *out = hzj_dict_new ();
  for (guint i = 0; i < len; i++)
    {
      HzjValue *k = eval (ctx, s, n->list->pdata[i]);
      HzjValue *v = k ? eval (ctx, s, n->list2->pdata[i]) : NULL;
      if (v && !hzj_hashable (k))
        {
          hzj_type_error (ctx, "unhashable type: '%s'", hzj_type_name (k));
          g_clear_pointer (&v, hzj_unref);
        }
      if (!v)
        {
          hzj_unref (k);
          hzj_unref (out);
          return NULL;
        }
      hzj_dict_set (out, k, v);
    }
  return out;
}

static HzjValue *
eval_compare (HzjCtx *ctx, HzjScope *s, const HzjNode *n)
{
  HzjValue *left = eval (ctx, s, n->a);
  for (guint i = 0; left && i < n->list->len; i++)
    {
      const HzjNode *operand = n->list->pdata[i];
      HzjValue *right = eval (ctx, s, operand->a);
      const int r = right ? hzj_op_compare (ctx, operand->op, left, right) : -1;
      hzj_unref (left);
      left = right;
      if (r <= 0)
        {
          hzj_unref (right);
          return r < 0 ? NULL : hzj_bool (FALSE);
        }
    }
  if (!left)
    return NULL;
  hzj_unref (left);
  return hzj_bool (TRUE);
}

static HzjValue *
eval_inner (HzjCtx *ctx, HzjScope *s, const HzjNode *n)
{
  HzjValue *a = NULL, *b = NULL, *r = NULL;
  Args args;
  switch (n->kind)
    {
    case HZJ_N_CONST:
      return hzj_ref (n->value);
    case HZJ_N_NAME:
      if ((r = hzj_scope_lookup (s, n->name)))
        return hzj_ref (r);
      return hzj_undefined_new (g_strdup_printf ("'%s' is undefined", n->name), FALSE);
    case HZJ_N_GETATTR:
      if (!(a = eval (ctx, s, n->a)))
        return NULL;
      r = hzj_getattr (ctx, a, n->name);
      break;
    case HZJ_N_GETITEM:
      if (!(a = eval (ctx, s, n->a)))
        return NULL;
      if (n->b->kind == HZJ_N_SLICE)
        r = eval_slice (ctx, s, a, n->b);
      else if ((b = eval (ctx, s, n->b)))
        r = hzj_getitem (ctx, a, b);
      break;
    case HZJ_N_LIST:
    case HZJ_N_TUPLE:
    case HZJ_N_DICT:
      return eval_collection (ctx, s, n);
    case HZJ_N_NEG:
    case HZJ_N_POS:
      if ((a = eval (ctx, s, n->a)))
        r = hzj_op_unary (ctx, n->kind == HZJ_N_NEG, a);
      break;
    case HZJ_N_NOT:
      if ((a = eval (ctx, s, n->a)))
        r = hzj_bool (!hzj_truthy (a));
      break;
    case HZJ_N_AND:
    case HZJ_N_OR:
      if (!(a = eval (ctx, s, n->a)))
        return NULL;
      if (hzj_truthy (a) == (n->kind == HZJ_N_OR))
        return a;
      hzj_unref (a);
      return eval (ctx, s, n->b);
    case HZJ_N_BINOP:
      if ((a = eval (ctx, s, n->a)) && (b = eval (ctx, s, n->b)))
        r = hzj_op_binary (ctx, n->op, a, b);
      break;
    case HZJ_N_COMPARE:
      return eval_compare (ctx, s, n);
    case HZJ_N_CONCAT:
      {
        HzjBuf buf;
        hzj_buf_init (&buf, ctx->max_output);
        for (guint i = 0; i < n->list->len; i++)
          {
            g_autoptr (HzjValue) v = eval (ctx, s, n->list->pdata[i]);
            if (!v || !hzj_str_append (&buf, v))
              {
                hzj_buf_clear (&buf);
                return v ? hzj_fail_size (ctx) : NULL;
              }
          }
        return hzj_str_from_buf (&buf);
      }
    case HZJ_N_COND:
      if (!(a = eval (ctx, s, n->a)))
        return NULL;
      if (hzj_truthy (a))
        r = eval (ctx, s, n->b);
      else if (n->c)
        r = eval (ctx, s, n->c);
      else
        r = hzj_undefined_new (g_strdup_printf ("the inline if-expression on line %d evaluated to "
                                                "false and no else section was defined.", n->line), FALSE);
      break;
    case HZJ_N_CALL:
      if (!(a = eval (ctx, s, n->a)))
        return NULL;
      if (eval_args (ctx, s, n, &args))
        r = hzj_call (ctx, a, &args.args);
      args_clear (&args);
      break;
    case HZJ_N_FILTER:
      return eval_filter (ctx, s, n, NULL);
    case HZJ_N_TEST:
      if (!(a = eval (ctx, s, n->a)))
        return NULL;
      if (eval_args (ctx, s, n, &args))
        {
          const int t = hzj_test_apply (ctx, n->name, a, &args.args);
          r = t < 0 ? NULL : hzj_bool ((t > 0) != ((n->flags & HZJ_F_NEGATED) != 0));
        }
      args_clear (&args);
      break;
    default:
      hzj_fail (ctx, HZ_JINJA_ERROR_RUNTIME, "TemplateRuntimeError", "not an expression");
      break;
    }
  hzj_unref (a);
  hzj_unref (b);
  return r;
}

static HzjValue *
eval (HzjCtx *ctx, HzjScope *s, const HzjNode *n)
{
  if (!hzj_step (ctx))
    return NULL;
  if (ctx->eval_depth >= MAX_EVAL_DEPTH)
    return hzj_limit_error (ctx, "evaluation nested more than %d deep", MAX_EVAL_DEPTH);
  const int line = ctx->line;
  ctx->line = n->line;
  ctx->eval_depth++;
  HzjValue *r = eval_inner (ctx, s, n);
  ctx->eval_depth--;
  if (r && (r->kind == HZJ_LIST || r->kind == HZJ_TUPLE || r->kind == HZJ_DICT) &&
      r->depth > HZJ_MAX_VALUE_DEPTH)
    hzj_limit_error (ctx, "a value nested more than %d lists or dicts deep", HZJ_MAX_VALUE_DEPTH);
  /* a value made here (not one looked up) costs its size: a step per item or 8 bytes, so
   * that the step bound also bounds the memory a template can fill */
  if (r && r->ref == 1)
    hzj_charge (ctx, r->kind == HZJ_STR ? r->str.len / 8
                     : r->kind == HZJ_LIST || r->kind == HZJ_TUPLE ? r->items->len
                     : r->kind == HZJ_DICT ? hzj_dict_len (r->dict) : 0);
  if (r && ctx->error)
    g_clear_pointer (&r, hzj_unref);
  if (r)
    ctx->line = line;
  return r;
}

/* ---- statements ---- */

static Flow
emit (HzjCtx *ctx, HzjBuf *out, HzjValue *v)
{
  if (!hzj_str_append (out, v))
    {
      hzj_fail_size (ctx);
      return FLOW_ERROR;
    }
  return FLOW_OK;
}

/* {% call(params) m(args) %}body{% endcall %}: m called with caller= a macro of the body */
static Flow
exec_call_block (HzjCtx *ctx, HzjScope *s, const HzjNode *n, HzjBuf *out)
{
  const HzjNode *call = n->a;
  g_autoptr (HzjValue) callee = eval (ctx, s, call->a);
  if (!callee)
    return FLOW_ERROR;
  Args a;
  Flow f = FLOW_ERROR;
  if (eval_args (ctx, s, call, &a))
    {
      args_add_kw (&a, "caller", 6, hzj_macro_new (n, s));
      args_seal (&a);
      g_autoptr (HzjValue) r = hzj_call (ctx, callee, &a.args);
      if (r)
        f = emit (ctx, out, r);
    }
  args_clear (&a);
  return f;
}

static Flow
exec_block_value (HzjCtx *ctx, HzjScope *s, const HzjNode *n, HzjValue **value)
{
  HzjScope *bs = hzj_scope_new (ctx, s);
  HzjValue *body = NULL;
  hzj_scope_shadow (bs, n->shadow);
  const gboolean ok = render_to_str (ctx, bs, n->list, &body);
  hzj_scope_unref (bs);
  if (!ok)
    return FLOW_ERROR;
  if (n->b)
    {
      *value = eval_filter (ctx, s, n->b, body);
      hzj_unref (body);
      return *value ? FLOW_OK : FLOW_ERROR;
    }
  *value = body;
  return FLOW_OK;
}

static Flow
exec_with (HzjCtx *ctx, HzjScope *s, const HzjNode *n, HzjBuf *out)
{
  const guint len = n->list2 ? n->list2->len : 0;
  g_autoptr (GPtrArray) vals = g_ptr_array_new_with_free_func ((GDestroyNotify) hzj_unref);
  for (guint i = 0; i < len; i++)
    {
      HzjValue *v = eval (ctx, s, ((HzjNode *) n->list2->pdata[i])->b);
      if (!v)
        return FLOW_ERROR;
      g_ptr_array_add (vals, v);
    }
  HzjScope *ws = hzj_scope_new (ctx, s);
  hzj_scope_shadow (ws, n->shadow);
  Flow f = FLOW_OK;
  for (guint i = 0; i < len && f == FLOW_OK; i++)
    if (!assign (ctx, ws, ((HzjNode *) n->list2->pdata[i])->a, vals->pdata[i]))
      f = FLOW_ERROR;
  if (f == FLOW_OK)
    f = exec_body (ctx, ws, n->list, out);
  hzj_scope_unref (ws);
  return f;
}

static Flow
exec (HzjCtx *ctx, HzjScope *s, const HzjNode *n, HzjBuf *out)
{
  if (!hzj_step (ctx))
    return FLOW_ERROR;
  ctx->line = n->line;
  g_autoptr (HzjValue) v = NULL;
  switch (n->kind)
    {
    case HZJ_N_DATA:
      return emit (ctx, out, n->value);
    case HZJ_N_OUTPUT:
      if (!(v = eval (ctx, s, n->a)))
        return FLOW_ERROR;
      return emit (ctx, out, v);
    case HZJ_N_IF:
      if (!(v = eval (ctx, s, n->a)))
        return FLOW_ERROR;
      return exec_body (ctx, s, hzj_truthy (v) ? n->list : n->list2, out);
    case HZJ_N_FOR:
      if (!(v = eval (ctx, s, n->b)))
        return FLOW_ERROR;
      /* the body's break and continue end there; the else block's belong to an outer loop */
      return run_for (ctx, s, n, v, 0, out);
    case HZJ_N_SET:
      if (!(v = eval (ctx, s, n->b)))
        return FLOW_ERROR;
      return assign (ctx, s, n->a, v) ? FLOW_OK : FLOW_ERROR;
    case HZJ_N_SET_BLOCK:
      if (exec_block_value (ctx, s, n, &v) == FLOW_ERROR)
        return FLOW_ERROR;
      return assign (ctx, s, n->a, v) ? FLOW_OK : FLOW_ERROR;
    case HZJ_N_FILTER_BLOCK:
      if (exec_block_value (ctx, s, n, &v) == FLOW_ERROR)
        return FLOW_ERROR;
      return emit (ctx, out, v);
    case HZJ_N_MACRO:
      hzj_scope_set (s, n->name, hzj_macro_new (n, s));
      return FLOW_OK;
    case HZJ_N_CALL_BLOCK:
      return exec_call_block (ctx, s, n, out);
    case HZJ_N_WITH:
      return exec_with (ctx, s, n, out);
    case HZJ_N_BODY:
      return exec_body (ctx, s, n->list, out);
    case HZJ_N_BREAK:
      return FLOW_BREAK;
    case HZJ_N_CONTINUE:
      return FLOW_CONTINUE;
    default:
      hzj_fail (ctx, HZ_JINJA_ERROR_RUNTIME, "TemplateRuntimeError", "not a statement");
      return FLOW_ERROR;
    }
}

static Flow
exec_body (HzjCtx *ctx, HzjScope *s, GPtrArray *body, HzjBuf *out)
{
  if (ctx->eval_depth >= MAX_EVAL_DEPTH)
    {
      hzj_limit_error (ctx, "evaluation nested more than %d deep", MAX_EVAL_DEPTH);
      return FLOW_ERROR;
    }
  ctx->eval_depth++;
  Flow f = FLOW_OK;
  for (guint i = 0; body && i < body->len && f == FLOW_OK; i++)
    f = exec (ctx, s, body->pdata[i], out);
  ctx->eval_depth--;
  return f;
}

gboolean
hzj_render (HzjCtx *ctx, const HzjNode *root, HzjScope *vars, HzjBuf *out)
{
  static const HzjEnv env = { call_macro_or_loop, hzj_getattr, hzj_getitem, hzj_filter_exists };
  ctx->env = &env;
  hzj_scope_shadow (vars, root->shadow);
  return exec_body (ctx, vars, root->list, out) != FLOW_ERROR && !ctx->error;
}
