/* engine/jinja/jinja-format.c — Python's string formatting: str.format() with the format
 * specification mini-language, and the printf-style % operator (see jinja-format.h).
 * Sources: the Python Library Reference, "Format String Syntax" and "printf-style String
 * Formatting". */
#include "jinja-format.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  gunichar fill;
  char align;     /* '<' '>' '^' '=' or 0 (the type's default) */
  char sign;      /* '+' '-' ' ' */
  gboolean alt;   /* '#' */
  char grouping;  /* ',' '_' or 0 */
  gint64 width;   /* -1: none */
  gint64 precision;
  char type;      /* 0: none */
} Spec;

static gboolean
parse_spec (HzjCtx *ctx, const char *s, gsize len, Spec *sp)
{
  *sp = (Spec) { .fill = ' ', .sign = '-', .width = -1, .precision = -1 };
  gsize k = 0;
  if (len >= 2)
    {
      gsize n;
      const gunichar c = hzj_utf8_get (s, len, &n);
      if (n < len && s[n] && strchr ("<>^=", s[n]))
        {
          sp->fill = c;
          sp->align = s[n];
          k = n + 1;
        }
    }
  if (!sp->align && k < len && strchr ("<>^=", s[k]) && s[k])
    sp->align = s[k++];
  if (k < len && (s[k] == '+' || s[k] == '-' || s[k] == ' '))
    sp->sign = s[k++];
  if (k < len && s[k] == '#')
    sp->alt = TRUE, k++;
  if (k < len && s[k] == '0')
    {
      if (!sp->align)
        {
          sp->fill = '0';
          sp->align = '=';
        }
      k++;
    }
  if (k < len && g_ascii_isdigit (s[k]))
    {
      sp->width = 0;
      while (k < len && g_ascii_isdigit (s[k]) && sp->width < 1000000000)
        sp->width = sp->width * 10 + (s[k++] - '0');
    }
  if (k < len && (s[k] == ',' || s[k] == '_'))
    sp->grouping = s[k++];
  if (k < len && s[k] == '.')
    {
      k++;
      if (k >= len || !g_ascii_isdigit (s[k]))
        return hzj_value_error (ctx, "Format specifier missing precision") != NULL;
      sp->precision = 0;
      while (k < len && g_ascii_isdigit (s[k]) && sp->precision < 1000000000)
        sp->precision = sp->precision * 10 + (s[k++] - '0');
    }
  if (k < len)
    sp->type = s[k++];
  if (k < len || (sp->type && !strchr ("sbcdoxXneEfFgG%", sp->type)))
    return hzj_value_error (ctx, "Invalid format specifier") != NULL;
  return TRUE;
}

/* digits of |v| in base (with the alternate prefix), no sign */
static void
int_digits (GString *g, guint64 v, char type, gboolean alt)
{
  const int base = type == 'x' || type == 'X' ? 16 : type == 'o' ? 8 : type == 'b' ? 2 : 10;
  if (alt && base != 10)
    g_string_append (g, type == 'x' ? "0x" : type == 'X' ? "0X" : type == 'o' ? "0o" : "0b");
  char tmp[72];
  int n = 0;
  do
    {
      const int d = (int) (v % (guint64) base);
      tmp[n++] = (char) (d < 10 ? '0' + d : (type == 'X' ? 'A' : 'a') + d - 10);
      v /= (guint64) base;
    }
  while (v);
  while (n)
    g_string_append_c (g, tmp[--n]);
}

/* the digits of a non-negative finite or special float for `type` */
static void
float_digits (GString *g, double x, char type, gint64 precision, gboolean alt)
{
  if (isinf (x) || isnan (x))
    {
      const gboolean up = type == 'E' || type == 'F' || type == 'G';
      g_string_append (g, isnan (x) ? (up ? "NAN" : "nan") : (up ? "INF" : "inf"));
      return;
    }
  char fmt[32], buf[512];
  if (type == 0 && precision < 0)
    {
      hzj_float_repr (x, buf);
      g_string_append (g, buf);
      return;
    }
  const gint64 p = precision < 0 ? 6 : MIN (precision, 300);
  const char t = type == 0 ? 'g' : type == '%' ? 'f' : type == 'n' ? 'g' : type;
  g_snprintf (fmt, sizeof fmt, "%%%s.%" G_GINT64_FORMAT "%c", alt ? "#" : "", p, t);
  if (fabs (x) >= 1e250 && (t == 'f' || t == 'F'))
    g_snprintf (buf, sizeof buf, "%.6e", x); /* would not fit: not a prompt's number */
  else
    g_ascii_formatd (buf, sizeof buf, fmt, type == '%' ? x * 100 : x);
  g_string_append (g, buf);
  if (type == 0 && !strpbrk (buf, ".eEn"))
    g_string_append (g, ".0");
  if (type == '%')
    g_string_append_c (g, '%');
}

static void
group (GString *g, gsize int_start, char sep)
{
  gsize end = int_start;
  while (end < g->len && g_ascii_isdigit (g->str[end]))
    end++;
  for (gssize k = (gssize) end - 3; k > (gssize) int_start; k -= 3)
    g_string_insert_c (g, k, sep);
}

static gboolean
pad_append (HzjCtx *ctx, HzjBuf *out, const Spec *sp, HzjBuf *body, gsize sign_len, char dflt_align)
{
  const gint64 len = (gint64) hzj_utf8_count (body->text->str, body->text->len);
  const gint64 pad = sp->width > len ? sp->width - len : 0;
  if ((guint64) pad > ctx->max_output)
    return hzj_fail_size (ctx) != NULL;
  const char align = sp->align ? sp->align : dflt_align;
  const gint64 left = align == '>' || align == '=' ? pad : align == '^' ? pad / 2 : 0;
  gsize from = 0;
  if (align == '=')
    {
      hzj_buf_append_slice (out, body->text->str, (HzjRun *) body->runs->data, body->runs->len, 0, sign_len);
      from = sign_len;
    }
  for (gint64 i = 0; i < left; i++)
    hzj_buf_append_unichar (out, sp->fill, FALSE);
  hzj_buf_append_slice (out, body->text->str, (HzjRun *) body->runs->data, body->runs->len, from,
                        body->text->len);
  for (gint64 i = left; i < pad; i++)
    hzj_buf_append_unichar (out, sp->fill, FALSE);
  return TRUE;
}

/* format(v, spec) into out */
static gboolean
format_value (HzjCtx *ctx, HzjValue *v, const Spec *sp, HzjBuf *out)
{
  HzjBuf body;
  hzj_buf_init (&body, ctx->max_output);
  gsize sign_len = 0;
  char dflt_align = '>';
  gboolean ok = TRUE;
  const gboolean numeric = v->kind == HZJ_INT || v->kind == HZJ_FLOAT ||
                           (v->kind == HZJ_BOOL && (sp->type || sp->width >= 0 || sp->sign != '-'));
  if (!numeric)
    {
      if (sp->type && sp->type != 's')
        ok = hzj_value_error (ctx, "Unknown format code '%c' for object of type '%s'", sp->type,
                              hzj_type_name (v)) != NULL;
      else if (v->kind != HZJ_STR && (sp->width >= 0 || sp->precision >= 0 || sp->align))
        ok = hzj_type_error (ctx, "unsupported format string passed to %s.__format__",
                             hzj_type_name (v)) != NULL;
      else
        {
          g_autoptr (HzjValue) s = hzj_to_str (v, ctx->max_output);
          if (!s)
            ok = hzj_fail_size (ctx) != NULL;
          else
            {
              const gsize end = sp->precision >= 0 ? hzj_utf8_offset (s->str.s, s->str.len, (gsize) sp->precision)
                                                    : s->str.len;
              hzj_buf_append_slice (&body, s->str.s, s->str.runs, s->str.n_runs, 0, end);
            }
          dflt_align = '<';
        }
    }
  else
    {
      GString *g = g_string_new (NULL);
      const gboolean as_int = (v->kind != HZJ_FLOAT) && (!sp->type || strchr ("bcdoxXn", sp->type));
      if (as_int)
        {
          const gint64 i = v->kind == HZJ_INT ? v->i : v->b;
          if (sp->type == 'c')
            {
              if (i < 0 || i > 0x10ffff)
                ok = hzj_fail (ctx, HZ_JINJA_ERROR_RUNTIME, "OverflowError", "%%c arg not in range(0x110000)") != NULL;
              else
                g_string_append_unichar (g, (gunichar) i);
            }
          else
            {
              if (i < 0 || sp->sign != '-')
                g_string_append_c (g, i < 0 ? '-' : sp->sign);
              sign_len = g->len;
              int_digits (g, i < 0 ? (guint64) 0 - (guint64) i : (guint64) i, sp->type ? sp->type : 'd', sp->alt);
              if (sp->grouping)
                group (g, sign_len, sp->grouping);
            }
        }
      else if (sp->type && !strchr ("eEfFgGn%", sp->type))
        ok = hzj_value_error (ctx, "Unknown format code '%c' for object of type 'float'", sp->type) != NULL;
      else
        {
          const double x = v->kind == HZJ_FLOAT ? v->f : v->kind == HZJ_INT ? (double) v->i : v->b;
          if (signbit (x) || sp->sign != '-')
            g_string_append_c (g, signbit (x) && !isnan (x) ? '-' : sp->sign);
          sign_len = g->len;
          float_digits (g, fabs (x), sp->type, sp->precision, sp->alt);
          if (sp->grouping)
            group (g, sign_len, sp->grouping);
        }
      hzj_buf_append (&body, g->str, g->len, FALSE);
      g_string_free (g, TRUE);
    }
  ok = ok && pad_append (ctx, out, sp, &body, sign_len, dflt_align);
  hzj_buf_clear (&body);
  return ok;
}

/* ---- str.format ---- */

static HzjValue *
field_value (HzjCtx *ctx, const char *name, gsize len, HzjArgs *args, int *auto_index)
{
  gsize k = 0;
  while (k < len && name[k] != '.' && name[k] != '[')
    k++;
  HzjValue *v = NULL;
  if (k == 0 || g_ascii_isdigit (name[0]))
    {
      /* as string.Formatter (Jinja2's sandboxed formatter): the manual / automatic
       * numbering check looks at whole-digit field names only */
      gboolean all_digits = TRUE;
      for (gsize i = 0; i < len; i++)
        all_digits &= g_ascii_isdigit (name[i]) != 0;
      gint64 idx;
      if (k == 0)
        {
          if (*auto_index < 0)
            return hzj_value_error (ctx, "cannot switch from manual field specification to automatic field numbering");
          idx = (*auto_index)++;
        }
      else
        {
          if (all_digits && *auto_index > 0)
            return hzj_value_error (ctx, "cannot switch from manual field specification to automatic field numbering");
          if (all_digits)
            *auto_index = -1;
          idx = g_ascii_strtoll (name, NULL, 10);
        }
      if (idx >= args->n_pos)
        return hzj_fail (ctx, HZ_JINJA_ERROR_RUNTIME, "IndexError",
                         "Replacement index %" G_GINT64_FORMAT " out of range for positional args tuple", idx);
      v = hzj_ref (args->pos[idx]);
    }
  else
    {
      for (guint i = 0; i < args->n_kw && !v; i++)
        if (strlen (args->kw_names[i]) == k && !memcmp (args->kw_names[i], name, k))
          v = hzj_ref (args->kw_vals[i]);
      if (!v)
        {
          g_autofree char *key = g_strndup (name, k);
          return hzj_fail (ctx, HZ_JINJA_ERROR_RUNTIME, "KeyError", "'%s'", key);
        }
    }
  /* .attr and [key] */
  while (v && k < len)
    {
      const gboolean item = name[k] == '[';
      gsize e = ++k;
      while (e < len && (item ? name[e] != ']' : name[e] != '.' && name[e] != '['))
        e++;
      g_autofree char *part = g_strndup (name + k, e - k);
      HzjValue *next;
      if (item)
        {
          gboolean digits = e > k;
          for (gsize i = k; i < e; i++)
            digits &= g_ascii_isdigit (name[i]);
          g_autoptr (HzjValue) key = digits ? hzj_int (g_ascii_strtoll (part, NULL, 10)) : hzj_cstr (part);
          next = ctx->env->getitem (ctx, v, key);
          e++;
        }
      else
        next = ctx->env->getattr (ctx, v, part);
      hzj_unref (v);
      v = next;
      k = e;
    }
  return v;
}

static gboolean format_into (HzjCtx *ctx, HzjValue *fmt, gsize from, gsize to, HzjArgs *args,
                             int *auto_index, HzjBuf *out, int depth);

static gboolean
format_field (HzjCtx *ctx, HzjValue *fmt, gsize from, gsize to, HzjArgs *args, int *auto_index,
              HzjBuf *out, int depth)
{
  const char *f = fmt->str.s;
  gsize name_end = from;
  while (name_end < to && f[name_end] != '!' && f[name_end] != ':')
    {
      if (f[name_end] == '[')
        while (name_end < to && f[name_end] != ']')
          name_end++;
      name_end++;
    }
  name_end = MIN (name_end, to);
  char conv = 0;
  gsize spec_from = to;
  if (name_end < to && f[name_end] == '!')
    {
      if (name_end + 1 >= to || (f[name_end + 1] != 'r' && f[name_end + 1] != 's' && f[name_end + 1] != 'a') ||
          (name_end + 2 < to && f[name_end + 2] != ':'))
        return hzj_value_error (ctx, "Unknown conversion specifier") != NULL;
      conv = f[name_end + 1];
      spec_from = MIN (name_end + 3, to);
    }
  else if (name_end < to)
    spec_from = name_end + 1;
  g_autoptr (HzjValue) v = field_value (ctx, f + from, name_end - from, args, auto_index);
  if (!v)
    return FALSE;
  if (conv)
    {
      HzjBuf r;
      hzj_buf_init (&r, ctx->max_output);
      if (conv == 's' ? !hzj_str_append (&r, v) : !hzj_repr_append (&r, v))
        {
          hzj_buf_clear (&r);
          return hzj_fail_size (ctx) != NULL;
        }
      hzj_unref (v);
      v = hzj_str_from_buf (&r);
    }
  /* the spec may hold {nested} fields */
  HzjBuf spec;
  hzj_buf_init (&spec, 4096);
  const gboolean ok = format_into (ctx, fmt, spec_from, to, args, auto_index, &spec, depth + 1);
  Spec sp;
  const gboolean done = ok && !spec.overflow && parse_spec (ctx, spec.text->str, spec.text->len, &sp) &&
                        format_value (ctx, v, &sp, out);
  hzj_buf_clear (&spec);
  return done;
}

static gboolean
format_into (HzjCtx *ctx, HzjValue *fmt, gsize from, gsize to, HzjArgs *args, int *auto_index,
             HzjBuf *out, int depth)
{
  const char *f = fmt->str.s;
  if (depth > 2)
    return hzj_value_error (ctx, "Max string recursion exceeded") != NULL;
  gsize lit = from;
  for (gsize k = from; k < to;)
    {
      if (f[k] == '}')
        {
          if (k + 1 >= to || f[k + 1] != '}')
            return hzj_value_error (ctx, "Single '}' encountered in format string") != NULL;
          hzj_buf_append_slice (out, f, fmt->str.runs, fmt->str.n_runs, lit, k + 1);
          k += 2;
          lit = k;
          continue;
        }
      if (f[k] != '{')
        {
          k++;
          continue;
        }
      if (k + 1 < to && f[k + 1] == '{')
        {
          hzj_buf_append_slice (out, f, fmt->str.runs, fmt->str.n_runs, lit, k + 1);
          k += 2;
          lit = k;
          continue;
        }
      hzj_buf_append_slice (out, f, fmt->str.runs, fmt->str.n_runs, lit, k);
      /* the matching close brace (one level of nesting in the spec) */
      gsize e = k + 1;
      int level = 1;
      while (e < to && level)
        {
          level += f[e] == '{' ? 1 : f[e] == '}' ? -1 : 0;
          e++;
        }
      if (level)
        return hzj_value_error (ctx, "expected '}' before end of string") != NULL;
      if (!format_field (ctx, fmt, k + 1, e - 1, args, auto_index, out, depth))
        return FALSE;
      k = lit = e;
    }
  hzj_buf_append_slice (out, f, fmt->str.runs, fmt->str.n_runs, lit, to);
  return TRUE;
}

HzjValue *
hzj_str_format (HzjCtx *ctx, HzjValue *fmt, HzjArgs *args)
{
  HzjBuf out;
  hzj_buf_init (&out, ctx->max_output);
  int auto_index = 0;
  if (!format_into (ctx, fmt, 0, fmt->str.len, args, &auto_index, &out, 0) || out.overflow)
    {
      hzj_buf_clear (&out);
      return ctx->error ? NULL : hzj_fail_size (ctx);
    }
  return hzj_str_from_buf (&out);
}

/* ---- printf-style % ---- */

/* one %-conversion of v into out */
static gboolean
percent_one (HzjCtx *ctx, HzjValue *v, Spec *sp, char conv, HzjBuf *out)
{
  switch (conv)
    {
    case 's':
    case 'r':
    case 'a':
      {
        HzjBuf r;
        hzj_buf_init (&r, ctx->max_output);
        const gboolean ok = conv == 's' ? hzj_str_append (&r, v) : hzj_repr_append (&r, v);
        g_autoptr (HzjValue) s = ok ? hzj_str_from_buf (&r) : (hzj_buf_clear (&r), NULL);
        if (!s)
          return hzj_fail_size (ctx) != NULL;
        sp->type = 0;
        if (!sp->align)
          sp->align = '>';
        return format_value (ctx, s, sp, out);
      }
    case 'c':
      if (v->kind == HZJ_STR && hzj_utf8_count (v->str.s, v->str.len) == 1)
        return format_value (ctx, v, &(Spec) { .fill = ' ', .align = sp->align ? sp->align : '>', .width = sp->width,
                                               .precision = -1, .sign = '-' }, out);
      break;
    default:
      break;
    }
  if (v->kind != HZJ_INT && v->kind != HZJ_FLOAT && v->kind != HZJ_BOOL)
    return hzj_type_error (ctx, "%%%c format: a real number is required, not %s", conv,
                           hzj_type_name (v)) != NULL;
  g_autoptr (HzjValue) num = NULL;
  if (strchr ("diuxXoc", conv) && v->kind == HZJ_FLOAT)
    {
      if (conv == 'c' || !isfinite (v->f) || fabs (v->f) >= 9.2e18)
        return hzj_type_error (ctx, "%%%c format: an integer is required, not float", conv) != NULL;
      num = hzj_int ((gint64) v->f);
    }
  sp->type = conv == 'i' || conv == 'u' ? 'd' : conv;
  if (sp->precision >= 0 && strchr ("dxXo", sp->type))
    sp->precision = -1; /* (Python pads the digits with zeros; not needed by chat templates) */
  return format_value (ctx, num ? num : v, sp, out);
}

HzjValue *
hzj_str_percent (HzjCtx *ctx, HzjValue *fmt, HzjValue *args)
{
  const char *f = fmt->str.s;
  const gsize len = fmt->str.len;
  /* as CPython: a dict is a mapping for %(name)s; any object with __getitem__ (a list,
   * Undefined) counts as one for the "not all arguments converted" check */
  const gboolean mapping = args->kind == HZJ_DICT;
  const gboolean subscriptable = mapping || args->kind == HZJ_LIST || args->kind == HZJ_UNDEFINED;
  GPtrArray one = { .pdata = (gpointer *) &args, .len = 1 };
  GPtrArray *items = args->kind == HZJ_TUPLE ? args->items : &one;
  guint next = 0;
  HzjBuf out;
  hzj_buf_init (&out, ctx->max_output);
  gsize lit = 0;
  gboolean ok = TRUE, used_mapping = FALSE;
  for (gsize k = 0; ok && k < len;)
    {
      if (f[k] != '%')
        {
          k++;
          continue;
        }
      hzj_buf_append_slice (&out, f, fmt->str.runs, fmt->str.n_runs, lit, k);
      k++;
      HzjValue *v = NULL;
      g_autoptr (HzjValue) keyed = NULL;
      if (k < len && f[k] == '(')
        {
          gsize e = k + 1;
          while (e < len && f[e] != ')')
            e++;
          if (!mapping)
            {
              ok = hzj_type_error (ctx, "format requires a mapping") != NULL;
              break;
            }
          keyed = hzj_str (f + k + 1, e - k - 1, FALSE);
          v = hzj_dict_get (args->dict, keyed);
          if (!v)
            {
              ok = hzj_fail (ctx, HZ_JINJA_ERROR_RUNTIME, "KeyError", "'%s'", keyed->str.s) != NULL;
              break;
            }
          used_mapping = TRUE;
          k = MIN (e + 1, len);
        }
      Spec sp = { .fill = ' ', .sign = '-', .width = -1, .precision = -1 };
      for (; k < len && strchr ("-+ #0", f[k]) && f[k]; k++)
        {
          if (f[k] == '-')
            sp.align = '<';
          else if (f[k] == '+')
            sp.sign = '+';
          else if (f[k] == ' ' && sp.sign != '+')
            sp.sign = ' ';
          else if (f[k] == '#')
            sp.alt = TRUE;
          else if (f[k] == '0' && sp.align != '<')
            sp.fill = '0', sp.align = '=';
        }
      if (sp.align == '<')
        sp.fill = ' ';
      for (; k < len && g_ascii_isdigit (f[k]); k++)
        sp.width = MIN ((sp.width < 0 ? 0 : sp.width) * 10 + (f[k] - '0'), 1000000000);
      if (k < len && f[k] == '.')
        for (sp.precision = 0, k++; k < len && g_ascii_isdigit (f[k]); k++)
          sp.precision = MIN (sp.precision * 10 + (f[k] - '0'), 1000000000);
      if (k >= len)
        {
          ok = hzj_value_error (ctx, "incomplete format") != NULL;
          break;
        }
      const char conv = f[k++];
      lit = k;
      if (conv == '%')
        {
          hzj_buf_append (&out, "%", 1, FALSE);
          continue;
        }
      if (!strchr ("sradiuoxXeEfFgGc", conv))
        {
          ok = hzj_value_error (ctx, "unsupported format character '%c' (0x%x)", conv, (guint) (guchar) conv) != NULL;
          break;
        }
      if (!v)
        {
          if (subscriptable && items == &one)
            v = args; /* "%s" % {...}: the object itself */
          else if (next >= items->len)
            {
              ok = hzj_type_error (ctx, "not enough arguments for format string") != NULL;
              break;
            }
          else
            v = items->pdata[next++];
        }
      ok = percent_one (ctx, v, &sp, conv, &out);
    }
  if (ok && !used_mapping && !subscriptable && next < items->len)
    ok = hzj_type_error (ctx, "not all arguments converted during string formatting") != NULL;
  if (ok)
    hzj_buf_append_slice (&out, f, fmt->str.runs, fmt->str.n_runs, lit, len);
  if (!ok || out.overflow)
    {
      hzj_buf_clear (&out);
      return ok ? hzj_fail_size (ctx) : NULL;
    }
  return hzj_str_from_buf (&out);
}
