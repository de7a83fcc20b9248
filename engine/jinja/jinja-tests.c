/* engine/jinja/jinja-tests.c — Jinja2 3.1's tests (`x is defined`, `x is string`, ...; see
 * jinja-tests.h), each as the function of the same name in jinja2/tests.py. */
#include "jinja-tests.h"
#include "jinja-methods.h"
#include "jinja-ops.h"

#include <string.h>

typedef int (*TestFn) (HzjCtx *ctx, HzjValue *v, HzjValue *arg);

static int t_boolean (HzjCtx *c, HzjValue *v, HzjValue *x) { (void) c; (void) x; return v->kind == HZJ_BOOL; }
static int t_callable (HzjCtx *c, HzjValue *v, HzjValue *x) { (void) c; (void) x; return v->kind == HZJ_FUNC || v->kind == HZJ_MACRO || v->kind == HZJ_LOOP || v->kind == HZJ_UNDEFINED; }
static int t_defined (HzjCtx *c, HzjValue *v, HzjValue *x) { (void) c; (void) x; return v->kind != HZJ_UNDEFINED; }
static int t_undefined (HzjCtx *c, HzjValue *v, HzjValue *x) { (void) c; (void) x; return v->kind == HZJ_UNDEFINED; }
static int t_none (HzjCtx *c, HzjValue *v, HzjValue *x) { (void) c; (void) x; return v->kind == HZJ_NONE; }
static int t_false (HzjCtx *c, HzjValue *v, HzjValue *x) { (void) c; (void) x; return v->kind == HZJ_BOOL && !v->b; }
static int t_true (HzjCtx *c, HzjValue *v, HzjValue *x) { (void) c; (void) x; return v->kind == HZJ_BOOL && v->b; }
static int t_integer (HzjCtx *c, HzjValue *v, HzjValue *x) { (void) c; (void) x; return v->kind == HZJ_INT; }
static int t_float (HzjCtx *c, HzjValue *v, HzjValue *x) { (void) c; (void) x; return v->kind == HZJ_FLOAT; }
static int t_number (HzjCtx *c, HzjValue *v, HzjValue *x) { (void) c; (void) x; return v->kind == HZJ_INT || v->kind == HZJ_FLOAT || v->kind == HZJ_BOOL; }
static int t_string (HzjCtx *c, HzjValue *v, HzjValue *x) { (void) c; (void) x; return v->kind == HZJ_STR; }
static int t_mapping (HzjCtx *c, HzjValue *v, HzjValue *x) { (void) c; (void) x; return v->kind == HZJ_DICT; }
static int t_escaped (HzjCtx *c, HzjValue *v, HzjValue *x) { (void) c; (void) v; (void) x; return 0; }

static int
t_iterable (HzjCtx *c, HzjValue *v, HzjValue *x)
{
  (void) c;
  (void) x;
  return v->kind == HZJ_STR || v->kind == HZJ_LIST || v->kind == HZJ_TUPLE || v->kind == HZJ_DICT ||
         v->kind == HZJ_UNDEFINED || v->kind == HZJ_LOOP;
}

static int
t_sequence (HzjCtx *c, HzjValue *v, HzjValue *x)
{
  (void) c;
  (void) x;
  return v->kind == HZJ_STR || v->kind == HZJ_LIST || v->kind == HZJ_TUPLE || v->kind == HZJ_DICT ||
         v->kind == HZJ_UNDEFINED;
}

/* str(v).isupper() / islower() */
static int
t_case (HzjCtx *c, HzjValue *v, gboolean upper)
{
  g_autoptr (HzjValue) s = hzj_to_str (v, c->max_output);
  if (!s)
    return hzj_fail_size (c), -1;
  gboolean unsafe;
  g_autoptr (HzjValue) m = hzj_method_get (s, upper ? "isupper" : "islower", &unsafe);
  HzjArgs none = { 0 };
  g_autoptr (HzjValue) r = hzj_call (c, m, &none);
  return r ? hzj_truthy (r) : -1;
}

static int t_lower (HzjCtx *c, HzjValue *v, HzjValue *x) { (void) x; return t_case (c, v, FALSE); }
static int t_upper (HzjCtx *c, HzjValue *v, HzjValue *x) { (void) x; return t_case (c, v, TRUE); }

/* value % divisor == want */
static int
mod_is (HzjCtx *c, HzjValue *v, HzjValue *divisor, gint64 want)
{
  g_autoptr (HzjValue) m = hzj_op_binary (c, HZJ_OP_MOD, v, divisor);
  g_autoptr (HzjValue) w = hzj_int (want);
  return m ? hzj_equal (m, w) : -1;
}

static int t_odd (HzjCtx *c, HzjValue *v, HzjValue *x) { (void) x; g_autoptr (HzjValue) two = hzj_int (2); return mod_is (c, v, two, 1); }
static int t_even (HzjCtx *c, HzjValue *v, HzjValue *x) { (void) x; g_autoptr (HzjValue) two = hzj_int (2); return mod_is (c, v, two, 0); }
static int t_divisibleby (HzjCtx *c, HzjValue *v, HzjValue *x) { return mod_is (c, v, x, 0); }

static int t_eq (HzjCtx *c, HzjValue *v, HzjValue *x) { return hzj_op_compare (c, HZJ_CMP_EQ, v, x); }
static int t_ne (HzjCtx *c, HzjValue *v, HzjValue *x) { return hzj_op_compare (c, HZJ_CMP_NE, v, x); }
static int t_lt (HzjCtx *c, HzjValue *v, HzjValue *x) { return hzj_op_compare (c, HZJ_CMP_LT, v, x); }
static int t_le (HzjCtx *c, HzjValue *v, HzjValue *x) { return hzj_op_compare (c, HZJ_CMP_LE, v, x); }
static int t_gt (HzjCtx *c, HzjValue *v, HzjValue *x) { return hzj_op_compare (c, HZJ_CMP_GT, v, x); }
static int t_ge (HzjCtx *c, HzjValue *v, HzjValue *x) { return hzj_op_compare (c, HZJ_CMP_GE, v, x); }
static int t_in (HzjCtx *c, HzjValue *v, HzjValue *x) { return hzj_op_compare (c, HZJ_CMP_IN, v, x); }

static int
t_sameas (HzjCtx *c, HzjValue *v, HzjValue *x)
{
  (void) c;
  /* CPython's singletons and small cached ints (-5..256) are "the same object" */
  if (v->kind == HZJ_INT && x->kind == HZJ_INT)
    return v->i == x->i && v->i >= -5 && v->i <= 256;
  if (v == x)
    return 1;
  if (v->kind != x->kind)
    return 0;
  return (v->kind == HZJ_NONE) || (v->kind == HZJ_BOOL && v->b == x->b) ||
         (v->kind == HZJ_INT && v->i == x->i && v->i >= -5 && v->i <= 256) ||
         (v->kind == HZJ_STR && hzj_equal (v, x)); /* (constants and interned strings) */
}

static int
t_filter (HzjCtx *c, HzjValue *v, HzjValue *x)
{
  (void) x;
  return v->kind == HZJ_STR && c->env->filter_exists (v->str.s);
}

static int
t_test (HzjCtx *c, HzjValue *v, HzjValue *x)
{
  (void) c;
  (void) x;
  return v->kind == HZJ_STR && hzj_test_exists (v->str.s);
}

typedef struct {
  const char *name;
  TestFn fn;
  gboolean takes_arg;
} Test;

static const Test tests[] = {
  { "boolean", t_boolean, FALSE }, { "callable", t_callable, FALSE }, { "defined", t_defined, FALSE },
  { "divisibleby", t_divisibleby, TRUE }, { "eq", t_eq, TRUE }, { "equalto", t_eq, TRUE },
  { "==", t_eq, TRUE }, { "escaped", t_escaped, FALSE }, { "even", t_even, FALSE },
  { "false", t_false, FALSE }, { "filter", t_filter, FALSE }, { "float", t_float, FALSE },
  { "ge", t_ge, TRUE }, { ">=", t_ge, TRUE }, { "greaterthan", t_gt, TRUE }, { "gt", t_gt, TRUE },
  { ">", t_gt, TRUE }, { "in", t_in, TRUE }, { "integer", t_integer, FALSE },
  { "iterable", t_iterable, FALSE }, { "le", t_le, TRUE }, { "<=", t_le, TRUE },
  { "lessthan", t_lt, TRUE }, { "lt", t_lt, TRUE }, { "<", t_lt, TRUE }, { "lower", t_lower, FALSE },
  { "mapping", t_mapping, FALSE }, { "ne", t_ne, TRUE }, { "!=", t_ne, TRUE }, { "none", t_none, FALSE },
  { "number", t_number, FALSE }, { "odd", t_odd, FALSE }, { "sameas", t_sameas, TRUE },
  { "sequence", t_sequence, FALSE }, { "string", t_string, FALSE }, { "test", t_test, FALSE },
  { "true", t_true, FALSE }, { "undefined", t_undefined, FALSE }, { "upper", t_upper, FALSE },
};

static const Test *
test_lookup (const char *name)
{
  for (guint i = 0; i < G_N_ELEMENTS (tests); i++)
    if (!strcmp (tests[i].name, name))
      return &tests[i];
  return NULL;
}

gboolean
hzj_test_exists (const char *name)
{
  return test_lookup (name) != NULL;
}

int
hzj_test_apply (HzjCtx *ctx, const char *name, HzjValue *value, HzjArgs *args)
{
  if (!hzj_step (ctx))
    return -1;
  const Test *t = test_lookup (name);
  if (!t)
    return hzj_fail (ctx, HZ_JINJA_ERROR_RUNTIME, "TemplateRuntimeError", "No test named '%s' found.", name), -1;
  const guint want = t->takes_arg ? 1 : 0;
  if (args->n_pos + args->n_kw != want || (args->n_kw && args->n_pos))
    return hzj_type_error (ctx, "test '%s' takes %u argument%s (%u given)", name, want, want == 1 ? "" : "s",
                           args->n_pos + args->n_kw), -1;
  return t->fn (ctx, value, want ? (args->n_pos ? args->pos[0] : args->kw_vals[0]) : NULL);
}
