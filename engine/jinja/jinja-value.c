/* engine/jinja/jinja-value.c — values with Python's semantics (see jinja-value.h). */
#include "jinja-value.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static HzjValue undefined_v = { .ref = -1, .kind = HZJ_UNDEFINED };
static HzjValue none_v = { .ref = -1, .kind = HZJ_NONE };
static HzjValue true_v = { .ref = -1, .kind = HZJ_BOOL, .b = TRUE };
static HzjValue false_v = { .ref = -1, .kind = HZJ_BOOL, .b = FALSE };

HzjValue *
hzj_ref (HzjValue *v)
{
  if (v && v->ref > 0)
    v->ref++;
  return v;
}

static void
value_free_contents (HzjValue *v)
{
  switch (v->kind)
    {
    case HZJ_STR:
      g_free (v->str.s);
      g_free (v->str.runs);
      break;
    case HZJ_LIST:
    case HZJ_TUPLE:
      g_ptr_array_unref (v->items);
      break;
    case HZJ_DICT:
    case HZJ_NAMESPACE:
      hzj_dict_clear (v->dict);
      g_ptr_array_unref (v->dict->keys);
      g_ptr_array_unref (v->dict->vals);
      g_free (v->dict);
      break;
    case HZJ_FUNC:
      hzj_unref (v->func.self);
      g_free (v->func.name);
      break;
    case HZJ_MACRO:
      v->macro.klass->finalize (v);
      break;
    case HZJ_LOOP:
      v->loop.klass->finalize (v);
      break;
    case HZJ_UNDEFINED:
      g_free (v->undef.hint);
      break;
    default:
      break;
    }
}

void
hzj_unref (HzjValue *v)
{
  if (v == NULL || v->ref < 0)
    return;
  if (--v->ref > 0)
    return;
  value_free_contents (v);
  g_free (v);
}

void
hzj_make_immortal (HzjValue *v)
{
  if (v->ref > 0) /* (the singletons and small ints are immortal already, and shared) */
    v->ref = -2;
}

void
hzj_free_immortal (HzjValue *v)
{
  if (v == NULL || v->ref != -2)
    return;
  value_free_contents (v);
  g_free (v);
}

static HzjValue *
value_new (HzjKind kind)
{
  HzjValue *v = g_new0 (HzjValue, 1);
  v->ref = 1;
  v->kind = kind;
  return v;
}

HzjValue *
hzj_undefined (void)
{
  return &undefined_v;
}

HzjValue *
hzj_undefined_new (char *hint, gboolean unsafe)
{
  HzjValue *v = value_new (HZJ_UNDEFINED);
  v->undef.hint = hint;
  v->undef.unsafe = unsafe;
  return v;
}

HzjValue *
hzj_none (void)
{
  return &none_v;
}

HzjValue *
hzj_bool (gboolean b)
{
  return b ? &true_v : &false_v;
}

/* the small integers (loop indices, range items, lengths) are shared immortal values */
#define SMALL_INTS 1024
static HzjValue small_ints[SMALL_INTS];

HzjValue *
hzj_int (gint64 i)
{
  static gsize ready = 0;
  if (i >= 0 && i < SMALL_INTS)
    {
      if (g_once_init_enter (&ready))
        {
          for (int k = 0; k < SMALL_INTS; k++)
            small_ints[k] = (HzjValue) { .ref = -1, .kind = HZJ_INT, .i = k };
          g_once_init_leave (&ready, 1);
        }
      return &small_ints[i];
    }
  HzjValue *v = value_new (HZJ_INT);
  v->i = i;
  return v;
}

HzjValue *
hzj_float (double f)
{
  HzjValue *v = value_new (HZJ_FLOAT);
  v->f = f;
  return v;
}

HzjValue *
hzj_str (const char *s, gsize len, gboolean data)
{
  HzjValue *v = value_new (HZJ_STR);
  v->str.s = g_malloc (len + 1);
  if (len)
    memcpy (v->str.s, s, len);
  v->str.s[len] = '\0';
  v->str.len = len;
  if (data && len > 0)
    {
      v->str.runs = g_new (HzjRun, 1);
      v->str.runs[0] = (HzjRun) { 0, len };
      v->str.n_runs = 1;
    }
  return v;
}

HzjValue *
hzj_cstr (const char *s)
{
  return hzj_str (s, strlen (s), FALSE);
}

HzjValue *
hzj_str_from_buf (HzjBuf *b)
{
  HzjValue *v = value_new (HZJ_STR);
  v->str.len = b->text->len;
  v->str.s = g_string_free (b->text, FALSE);
  v->str.n_runs = b->runs->len;
  v->str.runs = v->str.n_runs ? (HzjRun *) g_array_free (b->runs, FALSE) : NULL;
  if (!v->str.n_runs)
    g_array_unref (b->runs);
  b->text = NULL;
  b->runs = NULL;
  return v;
}

gboolean
hzj_buf_append_str (HzjBuf *b, HzjValue *s)
{
  return hzj_buf_append_slice (b, s->str.s, s->str.runs, s->str.n_runs, 0, s->str.len);
}

HzjValue *
hzj_list_new (gboolean tuple)
{
  HzjValue *v = value_new (tuple ? HZJ_TUPLE : HZJ_LIST);
  v->depth = 1;
  v->items = g_ptr_array_new_with_free_func ((GDestroyNotify) hzj_unref);
  return v;
}

static guint
nest (HzjValue *v)
{
  return v->kind == HZJ_LIST || v->kind == HZJ_TUPLE || v->kind == HZJ_DICT ? v->depth : 0;
}

void
hzj_list_push (HzjValue *list, HzjValue *item)
{
  g_ptr_array_add (list->items, item);
  list->depth = MAX (list->depth, nest (item) + 1);
}

static HzjDict *
dict_new (void)
{
  HzjDict *d = g_new0 (HzjDict, 1);
  d->keys = g_ptr_array_new_with_free_func ((GDestroyNotify) hzj_unref);
  d->vals = g_ptr_array_new_with_free_func ((GDestroyNotify) hzj_unref);
  return d;
}

HzjValue *
hzj_dict_new (void)
{
  HzjValue *v = value_new (HZJ_DICT);
  v->depth = 1;
  v->dict = dict_new ();
  return v;
}

HzjValue *
hzj_namespace_new (void)
{
  HzjValue *v = value_new (HZJ_NAMESPACE);
  v->dict = dict_new ();
  return v;
}

HzjValue *
hzj_func_new (HzjFn fn, HzjValue *self, const char *name)
{
  HzjValue *v = value_new (HZJ_FUNC);
  v->func.fn = fn;
  v->func.self = hzj_ref (self);
  v->func.name = g_strdup (name);
  return v;
}

/* ---- hashing and equality ---- */

static guint
hash_bytes (const char *s, gsize len)
{
  guint32 h = 2166136261u;
  for (gsize i = 0; i < len; i++)
    h = (h ^ (guchar) s[i]) * 16777619u;
  return h;
}

static guint
hash_int (gint64 i)
{
  return (guint) ((guint64) i ^ ((guint64) i >> 32));
}

static guint
value_hash (gconstpointer p)
{
  const HzjValue *v = p;
  switch (v->kind)
    {
    case HZJ_STR:
      return hash_bytes (v->str.s, v->str.len);
    case HZJ_BOOL:
      return hash_int (v->b ? 1 : 0);
    case HZJ_INT:
      return hash_int (v->i);
    case HZJ_FLOAT:
      if (v->f == floor (v->f) && fabs (v->f) < 9.2e18)
        return hash_int ((gint64) v->f);
      return hash_bytes ((const char *) &v->f, sizeof v->f);
    case HZJ_TUPLE:
      {
        guint h = 0x345678;
        for (guint i = 0; i < v->items->len; i++)
          h = h * 1000003u ^ value_hash (v->items->pdata[i]);
        return h;
      }
    default:
      return 0x9e37;
    }
}

static gboolean
value_equal_cb (gconstpointer a, gconstpointer b)
{
  return hzj_equal ((HzjValue *) a, (HzjValue *) b);
}

gboolean
hzj_hashable (HzjValue *v)
{
  switch (v->kind)
    {
    case HZJ_NONE:
    case HZJ_BOOL:
    case HZJ_INT:
    case HZJ_FLOAT:
    case HZJ_STR:
      return TRUE;
    case HZJ_TUPLE:
      for (guint i = 0; i < v->items->len; i++)
        if (!hzj_hashable (v->items->pdata[i]))
          return FALSE;
      return TRUE;
    default:
      return FALSE;
    }
}

gboolean
hzj_number (HzjValue *v, double *f, gint64 *i, gboolean *is_int)
{
  switch (v->kind)
    {
    case HZJ_BOOL:
    case HZJ_INT:
      *i = v->kind == HZJ_INT ? v->i : v->b;
      *f = (double) *i;
      *is_int = TRUE;
      return TRUE;
    case HZJ_FLOAT:
      *f = v->f;
      *i = 0;
      *is_int = FALSE;
      return TRUE;
    default:
      return FALSE;
    }
}

/* an int-like value (bool or int) */
static gboolean
is_intlike (HzjValue *v, gint64 *i)
{
  double f;
  gboolean is_int;
  return hzj_number (v, &f, i, &is_int) && is_int;
}

static gboolean
is_number (HzjValue *v, double *f)
{
  gint64 i;
  gboolean is_int;
  return hzj_number (v, f, &i, &is_int);
}

gboolean
hzj_equal (HzjValue *v, HzjValue *w)
{
  if (v == w)
    return TRUE;
  gint64 a, b;
  if (is_intlike (v, &a) && is_intlike (w, &b))
    return a == b;
  double x, y;
  if (is_number (v, &x) && is_number (w, &y))
    return x == y;
  if (v->kind != w->kind)
    return FALSE;
  switch (v->kind)
    {
    case HZJ_UNDEFINED:
    case HZJ_NONE:
      return TRUE;
    case HZJ_STR:
      return v->str.len == w->str.len && memcmp (v->str.s, w->str.s, v->str.len) == 0;
    case HZJ_LIST:
    case HZJ_TUPLE:
      if (v->items->len != w->items->len)
        return FALSE;
      for (guint i = 0; i < v->items->len; i++)
        if (!hzj_equal (v->items->pdata[i], w->items->pdata[i]))
          return FALSE;
      return TRUE;
    case HZJ_DICT:
      if (v->dict->keys->len != w->dict->keys->len)
        return FALSE;
      for (guint i = 0; i < v->dict->keys->len; i++)
        {
          HzjValue *o = hzj_dict_get (w->dict, v->dict->keys->pdata[i]);
          if (o == NULL || !hzj_equal (v->dict->vals->pdata[i], o))
            return FALSE;
        }
      return TRUE;
    default:
      return FALSE;
    }
}

/* ---- dicts ---- */

#define DICT_INDEX_MIN 8

static void
dict_build_index (HzjDict *d)
{
  d->index = g_hash_table_new (value_hash, value_equal_cb);
  for (guint i = 0; i < d->keys->len; i++)
    g_hash_table_insert (d->index, d->keys->pdata[i], GUINT_TO_POINTER (i + 1));
}

static gssize
dict_find (HzjDict *d, HzjValue *key)
{
  if (d->index)
    {
      const guint at = GPOINTER_TO_UINT (g_hash_table_lookup (d->index, key));
      return at ? (gssize) at - 1 : -1;
    }
  for (guint i = 0; i < d->keys->len; i++)
    if (hzj_equal (d->keys->pdata[i], key))
      return i;
  return -1;
}

HzjValue *
hzj_dict_get (HzjDict *d, HzjValue *key)
{
  const gssize i = dict_find (d, key);
  return i < 0 ? NULL : d->vals->pdata[i];
}

HzjValue *
hzj_dict_get_str (HzjDict *d, const char *name, gsize len)
{
  HzjValue key = { .ref = -1, .kind = HZJ_STR };
  key.str.s = (char *) name;
  key.str.len = len;
  return hzj_dict_get (d, &key);
}

void
hzj_dict_set (HzjValue *dict, HzjValue *key, HzjValue *val)
{
  HzjDict *d = dict->dict;
  if (dict->kind == HZJ_DICT)
    dict->depth = MAX (dict->depth, MAX (nest (key), nest (val)) + 1);
  const gssize i = dict_find (d, key);
  if (i >= 0)
    {
      hzj_unref (key);
      hzj_unref (d->vals->pdata[i]);
      d->vals->pdata[i] = val;
      return;
    }
  g_ptr_array_add (d->keys, key);
  g_ptr_array_add (d->vals, val);
  if (d->index)
    g_hash_table_insert (d->index, key, GUINT_TO_POINTER (d->keys->len));
  else if (d->keys->len > DICT_INDEX_MIN)
    dict_build_index (d);
}

guint
hzj_dict_len (HzjDict *d)
{
  return d->keys->len;
}

void
hzj_dict_clear (HzjDict *d)
{
  g_clear_pointer (&d->index, g_hash_table_unref);
  /* unref after detaching: a value's finalizer may reach this dict again */
  GPtrArray *keys = d->keys, *vals = d->vals;
  d->keys = g_ptr_array_new_with_free_func ((GDestroyNotify) hzj_unref);
  d->vals = g_ptr_array_new_with_free_func ((GDestroyNotify) hzj_unref);
  g_ptr_array_unref (keys);
  g_ptr_array_unref (vals);
}

/* ---- Python semantics ---- */

const char *
hzj_type_name (HzjValue *v)
{
  static const char *const names[] = {
    [HZJ_UNDEFINED] = "Undefined", [HZJ_NONE] = "NoneType", [HZJ_BOOL] = "bool",
    [HZJ_INT] = "int", [HZJ_FLOAT] = "float", [HZJ_STR] = "str", [HZJ_LIST] = "list",
    [HZJ_TUPLE] = "tuple", [HZJ_DICT] = "dict", [HZJ_NAMESPACE] = "Namespace",
    [HZJ_FUNC] = "builtin_function_or_method", [HZJ_MACRO] = "Macro",
    [HZJ_LOOP] = "LoopContext",
  };
  return names[v->kind];
}

char *
hzj_object_type_repr (HzjValue *v)
{
  if (v->kind == HZJ_NONE)
    return g_strdup ("None");
  if (v->kind == HZJ_NAMESPACE)
    return g_strdup ("jinja2.utils.Namespace object");
  if (v->kind == HZJ_MACRO)
    return g_strdup ("jinja2.runtime.Macro object");
  if (v->kind == HZJ_LOOP)
    return g_strdup ("jinja2.runtime.LoopContext object");
  return g_strdup_printf ("%s object", hzj_type_name (v));
}

gboolean
hzj_truthy (HzjValue *v)
{
  switch (v->kind)
    {
    case HZJ_UNDEFINED:
    case HZJ_NONE:
      return FALSE;
    case HZJ_BOOL:
      return v->b;
    case HZJ_INT:
      return v->i != 0;
    case HZJ_FLOAT:
      return v->f != 0;
    case HZJ_STR:
      return v->str.len > 0;
    case HZJ_LIST:
    case HZJ_TUPLE:
      return v->items->len > 0;
    case HZJ_DICT:
      return v->dict->keys->len > 0;
    default:
      return TRUE;
    }
}

gboolean
hzj_compare (HzjValue *v, HzjValue *w, int *cmp)
{
  gint64 a, b;
  if (is_intlike (v, &a) && is_intlike (w, &b))
    {
      *cmp = a < b ? -1 : a > b;
      return TRUE;
    }
  double x, y;
  if (is_number (v, &x) && is_number (w, &y))
    {
      *cmp = x < y ? -1 : x > y;   /* NaN: neither (Python: every comparison False) */
      return TRUE;
    }
  if (v->kind == HZJ_STR && w->kind == HZJ_STR)
    {
      const int c = memcmp (v->str.s, w->str.s, MIN (v->str.len, w->str.len));
      *cmp = c ? (c < 0 ? -1 : 1) : v->str.len < w->str.len ? -1 : v->str.len > w->str.len;
      return TRUE;
    }
  if ((v->kind == HZJ_LIST || v->kind == HZJ_TUPLE) && v->kind == w->kind)
    {
      for (guint i = 0; i < v->items->len && i < w->items->len; i++)
        if (!hzj_equal (v->items->pdata[i], w->items->pdata[i]))
          return hzj_compare (v->items->pdata[i], w->items->pdata[i], cmp);
      *cmp = v->items->len < w->items->len ? -1 : v->items->len > w->items->len;
      return TRUE;
    }
  return FALSE;
}

gssize
hzj_length (HzjValue *v)
{
  switch (v->kind)
    {
    case HZJ_UNDEFINED:
      return 0;
    case HZJ_STR:
      return (gssize) hzj_utf8_count (v->str.s, v->str.len);
    case HZJ_LIST:
    case HZJ_TUPLE:
      return v->items->len;
    case HZJ_DICT:
      return v->dict->keys->len;
    default:
      return -1;
    }
}

/* depth: namespaces may hold themselves; past the bound, count as data (the safe side) */
static gboolean
has_data (HzjValue *v, guint depth)
{
  if (depth > 2 * HZJ_MAX_VALUE_DEPTH)
    return TRUE;
  switch (v->kind)
    {
    case HZJ_STR:
      return v->str.n_runs > 0;
    case HZJ_LIST:
    case HZJ_TUPLE:
      for (guint i = 0; i < v->items->len; i++)
        if (has_data (v->items->pdata[i], depth + 1))
          return TRUE;
      return FALSE;
    case HZJ_DICT:
    case HZJ_NAMESPACE:
      for (guint i = 0; i < v->dict->keys->len; i++)
        if (has_data (v->dict->keys->pdata[i], depth + 1) || has_data (v->dict->vals->pdata[i], depth + 1))
          return TRUE;
      return FALSE;
    default:
      return FALSE;
    }
}

gboolean
hzj_has_data (HzjValue *v)
{
  return has_data (v, 0);
}

void
hzj_float_repr (double x, char *out)
{
  if (isnan (x))
    {
      strcpy (out, "nan");
      return;
    }
  if (isinf (x))
    {
      strcpy (out, x < 0 ? "-inf" : "inf");
      return;
    }
  /* shortest "%.{p}e" that reads back as x (Python's repr is the shortest round trip) */
  char sci[40], fmt[16];
  for (int p = 0; p <= 16; p++)
    {
      g_snprintf (fmt, sizeof fmt, "%%.%de", p);
      g_ascii_formatd (sci, sizeof sci, fmt, x);
      if (g_ascii_strtod (sci, NULL) == x)
        break;
    }
  /* split sci = [-]D[.DDD]e[+-]XX into digits and exponent */
  const char *p = sci;
  gboolean neg = FALSE;
  if (*p == '-')
    {
      neg = TRUE;
      p++;
    }
  char digits[24];
  int nd = 0;
  for (; *p && *p != 'e'; p++)
    if (*p >= '0' && *p <= '9')
      digits[nd++] = *p;
  const int exp = atoi (p + 1);
  while (nd > 1 && digits[nd - 1] == '0')
    nd--;
  digits[nd] = '\0';
  GString *s = g_string_new (neg ? "-" : "");
  if (exp >= -4 && exp < 16)
    {
      if (exp >= 0)
        {
          for (int i = 0; i <= exp; i++)
            g_string_append_c (s, i < nd ? digits[i] : '0');
          g_string_append_c (s, '.');
          if (nd > exp + 1)
            g_string_append (s, digits + exp + 1);
          else
            g_string_append_c (s, '0');
        }
      else
        {
          g_string_append (s, "0.");
          for (int i = 0; i < -exp - 1; i++)
            g_string_append_c (s, '0');
          g_string_append (s, digits);
        }
    }
  else
    {
      g_string_append_c (s, digits[0]);
      if (nd > 1)
        {
          g_string_append_c (s, '.');
          g_string_append (s, digits + 1);
        }
      g_string_append_printf (s, "e%c%02d", exp < 0 ? '-' : '+', ABS (exp));
    }
  g_strlcpy (out, s->str, 32);
  g_string_free (s, TRUE);
}

/* Python's repr of a str: quotes chosen as Python does, escapes for the unprintable */
static gboolean
repr_string (HzjBuf *out, HzjValue *v)
{
  const char *s = v->str.s;
  const gsize len = v->str.len;
  const gboolean has_sq = memchr (s, '\'', len) != NULL, has_dq = memchr (s, '"', len) != NULL;
  const char q = has_sq && !has_dq ? '"' : '\'';
  gboolean ok = hzj_buf_append (out, &q, 1, FALSE);
  for (gsize i = 0; i < len && ok;)
    {
      gsize n;
      const gunichar c = hzj_utf8_get (s + i, len - i, &n);
      char esc[16];
      const char *e = NULL;
      if (c == (gunichar) q || c == '\\')
        g_snprintf (esc, sizeof esc, "\\%c", (char) c), e = esc;
      else if (c == '\t')
        e = "\\t";
      else if (c == '\n')
        e = "\\n";
      else if (c == '\r')
        e = "\\r";
      else if (c < 0x20 || c == 0x7f)
        g_snprintf (esc, sizeof esc, "\\x%02x", c), e = esc;
      else if (c >= 0x80)
        {
          const GUnicodeType t = g_unichar_type (c);
          if (t == G_UNICODE_CONTROL || t == G_UNICODE_FORMAT || t == G_UNICODE_SURROGATE ||
              t == G_UNICODE_PRIVATE_USE || t == G_UNICODE_UNASSIGNED ||
              t == G_UNICODE_LINE_SEPARATOR || t == G_UNICODE_PARAGRAPH_SEPARATOR ||
              t == G_UNICODE_SPACE_SEPARATOR)
            {
              if (c < 0x100)
                g_snprintf (esc, sizeof esc, "\\x%02x", c);
              else if (c < 0x10000)
                g_snprintf (esc, sizeof esc, "\\u%04x", c);
              else
                g_snprintf (esc, sizeof esc, "\\U%08x", c);
              e = esc;
            }
        }
      const gboolean data = hzj_runs_is_data (v->str.runs, v->str.n_runs, i);
      ok = e ? hzj_buf_append (out, e, strlen (e), data)
             : hzj_buf_append_slice (out, s, v->str.runs, v->str.n_runs, i, i + n);
      i += n;
    }
  return ok && hzj_buf_append (out, &q, 1, FALSE);
}

static gboolean
str_or_repr (HzjBuf *out, HzjValue *v, gboolean repr, guint depth)
{
  char num[32];
  if (depth > 2 * HZJ_MAX_VALUE_DEPTH)
    return hzj_buf_append (out, "...", 3, FALSE); /* a namespace that holds itself */
  switch (v->kind)
    {
    case HZJ_UNDEFINED:
      return repr ? hzj_buf_append (out, "Undefined", 9, FALSE) : TRUE;
    case HZJ_NONE:
      return hzj_buf_append (out, "None", 4, FALSE);
    case HZJ_BOOL:
      return v->b ? hzj_buf_append (out, "True", 4, FALSE) : hzj_buf_append (out, "False", 5, FALSE);
    case HZJ_INT:
      g_snprintf (num, sizeof num, "%" G_GINT64_FORMAT, v->i);
      return hzj_buf_append (out, num, strlen (num), FALSE);
    case HZJ_FLOAT:
      hzj_float_repr (v->f, num);
      return hzj_buf_append (out, num, strlen (num), FALSE);
    case HZJ_STR:
      if (repr)
        return repr_string (out, v);
      return hzj_buf_append_str (out, v);
    case HZJ_LIST:
    case HZJ_TUPLE:
      {
        const gboolean tuple = v->kind == HZJ_TUPLE;
        gboolean ok = hzj_buf_append (out, tuple ? "(" : "[", 1, FALSE);
        for (guint i = 0; i < v->items->len && ok; i++)
          ok = (i == 0 || hzj_buf_append (out, ", ", 2, FALSE)) &&
               str_or_repr (out, v->items->pdata[i], TRUE, depth + 1);
        if (tuple && v->items->len == 1)
          ok = ok && hzj_buf_append (out, ",", 1, FALSE);
        return ok && hzj_buf_append (out, tuple ? ")" : "]", 1, FALSE);
      }
    case HZJ_DICT:
    case HZJ_NAMESPACE:
      {
        const gboolean ns = v->kind == HZJ_NAMESPACE;
        gboolean ok = hzj_buf_append (out, ns ? "<Namespace {" : "{", ns ? 12 : 1, FALSE);
        for (guint i = 0; i < v->dict->keys->len && ok; i++)
          ok = (i == 0 || hzj_buf_append (out, ", ", 2, FALSE)) &&
               str_or_repr (out, v->dict->keys->pdata[i], TRUE, depth + 1) &&
               hzj_buf_append (out, ": ", 2, FALSE) &&
               str_or_repr (out, v->dict->vals->pdata[i], TRUE, depth + 1);
        return ok && hzj_buf_append (out, ns ? "}>" : "}", ns ? 2 : 1, FALSE);
      }
    case HZJ_FUNC:
      return hzj_buf_printf (out, "<built-in function %s>", v->func.name);
    case HZJ_MACRO:
      return v->macro.klass->repr (out, v);
    case HZJ_LOOP:
      return v->loop.klass->repr (out, v);
    }
  return TRUE;
}

/* containers: the whole text is data when any string inside is */
static gboolean
append_tagged (HzjBuf *out, HzjValue *v, gboolean repr)
{
  if (v->kind == HZJ_STR || (v->kind != HZJ_LIST && v->kind != HZJ_TUPLE &&
                             v->kind != HZJ_DICT && v->kind != HZJ_NAMESPACE))
    return str_or_repr (out, v, repr, 0);
  HzjBuf tmp;
  hzj_buf_init (&tmp, out->limit);
  gboolean ok = str_or_repr (&tmp, v, repr, 0);
  ok = ok && hzj_buf_append (out, tmp.text->str, tmp.text->len, tmp.runs->len > 0);
  hzj_buf_clear (&tmp);
  if (!ok)
    out->overflow = TRUE;
  return ok;
}

gboolean
hzj_str_append (HzjBuf *out, HzjValue *v)
{
  return append_tagged (out, v, FALSE);
}

gboolean
hzj_repr_append (HzjBuf *out, HzjValue *v)
{
  return append_tagged (out, v, TRUE);
}

HzjValue *
hzj_to_str (HzjValue *v, gsize limit)
{
  if (v->kind == HZJ_STR)
    return hzj_ref (v);
  HzjBuf b;
  hzj_buf_init (&b, limit);
  if (!hzj_str_append (&b, v))
    {
      hzj_buf_clear (&b);
      return NULL;
    }
  return hzj_str_from_buf (&b);
}
