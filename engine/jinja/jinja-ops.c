/* engine/jinja/jinja-ops.c — operators and slicing with Python's semantics (see
 * jinja-ops.h). */
#include "jinja-ops.h"
#include "jinja-format.h"

#include <math.h>
#include <string.h>

static const char *const binop_sym[] = { "+", "-", "*", "/", "//", "%", "** or pow()" };

static gpointer
unsupported (HzjCtx *ctx, HzjBinop op, HzjValue *a, HzjValue *b)
{
  return hzj_type_error (ctx, "unsupported operand type(s) for %s: '%s' and '%s'", binop_sym[op],
                         hzj_type_name (a), hzj_type_name (b));
}

static gpointer
overflow (HzjCtx *ctx)
{
  return hzj_fail (ctx, HZ_JINJA_ERROR_RUNTIME, "OverflowError",
                   "integer result does not fit in 64 bits");
}

/* Python's float % and // (floatobject.c float_divmod) */
static void
float_divmod (double vx, double wx, double *floordiv, double *mod)
{
  double m = fmod (vx, wx);
  double div = (vx - m) / wx;
  if (m != 0)
    {
      if ((wx < 0) != (m < 0))
        {
          m += wx;
          div -= 1.0;
        }
    }
  else
    m = copysign (0.0, wx);
  double fd;
  if (div != 0)
    {
      fd = floor (div);
      if (div - fd > 0.5)
        fd += 1.0;
    }
  else
    fd = copysign (0.0, vx / wx);
  *floordiv = fd;
  *mod = m;
}

static HzjValue *
repeat (HzjCtx *ctx, HzjValue *seq, gint64 n)
{
  if (n < 0)
    n = 0;
  if (seq->kind == HZJ_STR)
    {
      if (seq->str.len && (guint64) n > ctx->max_output / seq->str.len)
        return hzj_fail_size (ctx);
      HzjBuf b;
      hzj_buf_init (&b, ctx->max_output);
      for (gint64 k = 0; k < n; k++)
        hzj_buf_append_str (&b, seq);
      return hzj_str_from_buf (&b);
    }
  const guint len = seq->items->len;
  if (len && (guint64) n > ctx->max_output / 8 / len)
    return hzj_fail_size (ctx);
  if (!hzj_charge (ctx, (guint64) n * len))
    return NULL;
  HzjValue *out = hzj_list_new (seq->kind == HZJ_TUPLE);
  for (gint64 k = 0; k < n; k++)
    for (guint i = 0; i < len; i++)
      hzj_list_push (out, hzj_ref (seq->items->pdata[i]));
  return out;
}

static HzjValue *
concat (HzjCtx *ctx, HzjValue *a, HzjValue *b)
{
  if (a->kind == HZJ_STR)
    {
      HzjBuf buf;
      hzj_buf_init (&buf, ctx->max_output);
      hzj_buf_append_str (&buf, a);
      hzj_buf_append_str (&buf, b);
      return hzj_buf_finish (ctx, &buf);
    }
  if ((guint64) a->items->len + b->items->len > ctx->max_output / 8)
    return hzj_fail_size (ctx);
  if (!hzj_charge (ctx, (guint64) a->items->len + b->items->len))
    return NULL;
  HzjValue *out = hzj_list_new (a->kind == HZJ_TUPLE);
  for (guint i = 0; i < a->items->len; i++)
    hzj_list_push (out, hzj_ref (a->items->pdata[i]));
  for (guint i = 0; i < b->items->len; i++)
    hzj_list_push (out, hzj_ref (b->items->pdata[i]));
  return out;
}

static gboolean
int_pow (gint64 base, gint64 exp, gint64 *out)
{
  gint64 r = 1;
  while (exp > 0)
    {
      if ((exp & 1) && __builtin_mul_overflow (r, base, &r))
        return FALSE;
      exp >>= 1;
      if (exp && __builtin_mul_overflow (base, base, &base))
        return FALSE;
    }
  *out = r;
  return TRUE;
}

HzjValue *
hzj_op_binary (HzjCtx *ctx, HzjBinop op, HzjValue *a, HzjValue *b)
{
  if (a->kind == HZJ_UNDEFINED)
    return hzj_fail_undefined (ctx, a);
  if (op == HZJ_OP_MOD && a->kind == HZJ_STR)
    return hzj_str_percent (ctx, a, b); /* str.__mod__ takes any right operand */
  if (b->kind == HZJ_UNDEFINED)
    return hzj_fail_undefined (ctx, b);
  double x = 0, y = 0;
  gint64 i = 0, j = 0, r;
  gboolean ai = FALSE, bi = FALSE;
  const gboolean an = hzj_number (a, &x, &i, &ai), bn = hzj_number (b, &y, &j, &bi);
  if (an && bn)
    {
      const gboolean ints = ai && bi;
      double fd, fm;
      switch (op)
        {
        case HZJ_OP_ADD:
          if (ints)
            return __builtin_add_overflow (i, j, &r) ? overflow (ctx) : hzj_int (r);
          return hzj_float (x + y);
        case HZJ_OP_SUB:
          if (ints)
            return __builtin_sub_overflow (i, j, &r) ? overflow (ctx) : hzj_int (r);
          return hzj_float (x - y);
        case HZJ_OP_MUL:
          if (ints)
            return __builtin_mul_overflow (i, j, &r) ? overflow (ctx) : hzj_int (r);
          return hzj_float (x * y);
        case HZJ_OP_DIV:
          if (y == 0)
            return hzj_fail (ctx, HZ_JINJA_ERROR_RUNTIME, "ZeroDivisionError", "division by zero");
          return hzj_float (x / y);
        case HZJ_OP_FLOORDIV:
        case HZJ_OP_MOD:
          if (y == 0)
            return hzj_fail (ctx, HZ_JINJA_ERROR_RUNTIME, "ZeroDivisionError",
                             ints ? "integer division or modulo by zero"
                                  : op == HZJ_OP_MOD ? "float modulo" : "float floor division by zero");
          if (ints)
            {
              if (i == G_MININT64 && j == -1)
                return op == HZJ_OP_MOD ? hzj_int (0) : overflow (ctx);
              gint64 q = i / j, m = i % j;
              if (m != 0 && ((m < 0) != (j < 0)))
                {
                  q--;
                  m += j;
                }
              return hzj_int (op == HZJ_OP_MOD ? m : q);
            }
          float_divmod (x, y, &fd, &fm);
          return hzj_float (op == HZJ_OP_MOD ? fm : fd);
        case HZJ_OP_POW:
          if (ints && j >= 0)
            return int_pow (i, j, &r) ? hzj_int (r) : overflow (ctx);
          if (x == 0 && y < 0)
            return hzj_fail (ctx, HZ_JINJA_ERROR_RUNTIME, "ZeroDivisionError",
                             "0.0 cannot be raised to a negative power");
          if (x < 0 && y != floor (y))
            return hzj_value_error (ctx, "math domain error (a negative number to a fractional power is complex)");
          return hzj_float (pow (x, y));
        }
    }
  switch (op)
    {
    case HZJ_OP_ADD:
      if (a->kind == HZJ_STR || a->kind == HZJ_LIST || a->kind == HZJ_TUPLE)
        {
          if (b->kind == a->kind)
            return concat (ctx, a, b);
          return hzj_type_error (ctx, "can only concatenate %s (not \"%s\") to %s", hzj_type_name (a),
                                 hzj_type_name (b), hzj_type_name (a));
        }
      break;
    case HZJ_OP_MUL:
      if ((a->kind == HZJ_STR || a->kind == HZJ_LIST || a->kind == HZJ_TUPLE) && bn && bi)
        return repeat (ctx, a, j);
      if ((b->kind == HZJ_STR || b->kind == HZJ_LIST || b->kind == HZJ_TUPLE) && an && ai)
        return repeat (ctx, b, i);
      if (a->kind == HZJ_STR || a->kind == HZJ_LIST || a->kind == HZJ_TUPLE)
        return hzj_type_error (ctx, "can't multiply sequence by non-int of type '%s'", hzj_type_name (b));
      if (b->kind == HZJ_STR || b->kind == HZJ_LIST || b->kind == HZJ_TUPLE)
        return hzj_type_error (ctx, "can't multiply sequence by non-int of type '%s'", hzj_type_name (a));
      break;
    case HZJ_OP_MOD:
      if (a->kind == HZJ_STR)
        return hzj_str_percent (ctx, a, b);
      break;
    default:
      break;
    }
  return unsupported (ctx, op, a, b);
}

HzjValue *
hzj_op_unary (HzjCtx *ctx, gboolean neg, HzjValue *a)
{
  double x = 0;
  gint64 i = 0;
  gboolean is_int = FALSE;
  if (a->kind == HZJ_UNDEFINED)
    return hzj_fail_undefined (ctx, a);
  if (!hzj_number (a, &x, &i, &is_int))
    return hzj_type_error (ctx, "bad operand type for unary %c: '%s'", neg ? '-' : '+', hzj_type_name (a));
  if (!neg)
    return is_int ? hzj_int (i) : hzj_float (x);
  if (is_int)
    return i == G_MININT64 ? overflow (ctx) : hzj_int (-i);
  return hzj_float (-x);
}

/* a in b: 1, 0, -1 on error */
static int
contains (HzjCtx *ctx, HzjValue *a, HzjValue *b)
{
  switch (b->kind)
    {
    case HZJ_STR:
      if (a->kind == HZJ_UNDEFINED)
        return hzj_fail_undefined (ctx, a), -1;
      if (a->kind != HZJ_STR)
        return hzj_type_error (ctx, "'in <string>' requires string as left operand, not %s",
                               hzj_type_name (a)), -1;
      if (a->str.len == 0)
        return 1;
      for (gsize k = 0; k + a->str.len <= b->str.len; k++)
        if (memcmp (b->str.s + k, a->str.s, a->str.len) == 0)
          return 1;
      return 0;
    case HZJ_LIST:
    case HZJ_TUPLE:
      for (guint k = 0; k < b->items->len; k++)
        if (hzj_equal (a, b->items->pdata[k]))
          return 1;
      return 0;
    case HZJ_DICT:
      if (!hzj_hashable (a))
        return hzj_type_error (ctx, "unhashable type: '%s'", hzj_type_name (a)), -1;
      return hzj_dict_get (b->dict, a) != NULL;
    case HZJ_UNDEFINED:
      return 0;
    default:
      return hzj_type_error (ctx, "argument of type '%s' is not iterable", hzj_type_name (b)), -1;
    }
}

int
hzj_op_compare (HzjCtx *ctx, HzjCmpop op, HzjValue *a, HzjValue *b)
{
  static const char *const sym[] = { "==", "!=", "<", "<=", ">", ">=" };
  int c, r;
  switch (op)
    {
    case HZJ_CMP_EQ:
      return hzj_equal (a, b);
    case HZJ_CMP_NE:
      return !hzj_equal (a, b);
    case HZJ_CMP_IN:
      return contains (ctx, a, b);
    case HZJ_CMP_NOTIN:
      r = contains (ctx, a, b);
      return r < 0 ? -1 : !r;
    default:
      if (a->kind == HZJ_UNDEFINED || b->kind == HZJ_UNDEFINED)
        return hzj_fail_undefined (ctx, a->kind == HZJ_UNDEFINED ? a : b), -1;
      if (!hzj_compare (a, b, &c))
        return hzj_type_error (ctx, "'%s' not supported between instances of '%s' and '%s'",
                               sym[op], hzj_type_name (a), hzj_type_name (b)), -1;
      /* NaN compares false both ways: hzj_compare gives 0 and == is false */
      if (c == 0 && !hzj_equal (a, b))
        return 0;
      return op == HZJ_CMP_LT ? c < 0 : op == HZJ_CMP_LE ? c <= 0 : op == HZJ_CMP_GT ? c > 0 : c >= 0;
    }
}

static gboolean
slice_bound (HzjCtx *ctx, HzjValue *v, gboolean *given, gint64 *out)
{
  *given = v != NULL && v->kind != HZJ_NONE;
  if (!*given)
    return TRUE;
  if (v->kind == HZJ_INT || v->kind == HZJ_BOOL)
    {
      *out = v->kind == HZJ_INT ? v->i : v->b;
      return TRUE;
    }
  hzj_type_error (ctx, "slice indices must be integers or None or have an __index__ method");
  return FALSE;
}

/* PySlice_AdjustIndices */
static gint64
adjust (gint64 x, gint64 len, gint64 step)
{
  if (x < 0)
    {
      x += len;
      if (x < 0)
        x = step < 0 ? -1 : 0;
    }
  else if (x >= len)
    x = step < 0 ? len - 1 : len;
  return x;
}

HzjValue *
hzj_op_slice (HzjCtx *ctx, HzjValue *obj, HzjValue *start_v, HzjValue *stop_v, HzjValue *step_v)
{
  if (obj->kind == HZJ_UNDEFINED)
    return hzj_fail_undefined (ctx, obj);
  /* Jinja2 compiles a slice to Python's own subscription (not environment.getitem):
   * what cannot be sliced raises */
  if (obj->kind == HZJ_DICT)
    return hzj_type_error (ctx, "unhashable type: 'slice'");
  if (obj->kind != HZJ_STR && obj->kind != HZJ_LIST && obj->kind != HZJ_TUPLE)
    return hzj_type_error (ctx, "'%s' object is not subscriptable", hzj_type_name (obj));
  gboolean has_start, has_stop, has_step;
  gint64 start = 0, stop = 0, step = 1;
  if (!slice_bound (ctx, start_v, &has_start, &start) || !slice_bound (ctx, stop_v, &has_stop, &stop) ||
      !slice_bound (ctx, step_v, &has_step, &step))
    return NULL;
  if (!has_step)
    step = 1;
  if (step == 0)
    return hzj_value_error (ctx, "slice step cannot be zero");
  /* character offsets of a string */
  g_autoptr (GArray) offs = NULL;
  gint64 len;
  if (obj->kind == HZJ_STR)
    {
      offs = g_array_new (FALSE, FALSE, sizeof (gsize));
      for (gsize k = 0; k < obj->str.len; k++)
        if (((guchar) obj->str.s[k] & 0xc0) != 0x80)
          g_array_append_val (offs, k);
      g_array_append_val (offs, obj->str.len);
      len = offs->len - 1;
    }
  else
    len = obj->items->len;
  start = has_start ? adjust (start, len, step) : step < 0 ? len - 1 : 0;
  stop = has_stop ? adjust (stop, len, step) : step < 0 ? -1 : len;
  if (obj->kind == HZJ_STR)
    {
      HzjBuf b;
      hzj_buf_init (&b, ctx->max_output);
      for (gint64 k = start; step > 0 ? k < stop : k > stop; k += step)
        hzj_buf_append_slice (&b, obj->str.s, obj->str.runs, obj->str.n_runs,
                              g_array_index (offs, gsize, k), g_array_index (offs, gsize, k + 1));
      return hzj_str_from_buf (&b);
    }
  HzjValue *out = hzj_list_new (obj->kind == HZJ_TUPLE);
  for (gint64 k = start; step > 0 ? k < stop : k > stop; k += step)
    hzj_list_push (out, hzj_ref (obj->items->pdata[k]));
  return out;
}
