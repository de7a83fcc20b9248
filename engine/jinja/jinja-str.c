/* engine/jinja/jinja-str.c — Python's str operations that the methods and the filters
 * share (see jinja-str.h). */
#include "jinja-str.h"

#include <string.h>

HzjValue *
hzj_str_sub (HzjValue *s, gsize from, gsize to)
{
  HzjBuf b;
  hzj_buf_init (&b, G_MAXSIZE);
  hzj_buf_append_slice (&b, s->str.s, s->str.runs, s->str.n_runs, from, to);
  return hzj_str_from_buf (&b);
}

/* whether code point c is one to strip: in `chars`, or white space when chars is NULL */
static gboolean
strippable (gunichar c, HzjValue *chars)
{
  if (!chars)
    return hzj_unichar_is_py_space (c);
  for (gsize k = 0; k < chars->str.len;)
    {
      gsize n;
      if (hzj_utf8_get (chars->str.s + k, chars->str.len - k, &n) == c)
        return TRUE;
      k += n;
    }
  return FALSE;
}

HzjValue *
hzj_str_strip (HzjValue *s, HzjValue *chars, gboolean left, gboolean right)
{
  if (chars && chars->kind != HZJ_STR)
    chars = NULL;
  gsize from = 0, to = s->str.len;
  while (left && from < to)
    {
      gsize n;
      if (!strippable (hzj_utf8_get (s->str.s + from, to - from, &n), chars))
        break;
      from += n;
    }
  while (right && to > from)
    {
      gsize start = to - 1, n;
      while (start > from && ((guchar) s->str.s[start] & 0xc0) == 0x80)
        start--;
      if (!strippable (hzj_utf8_get (s->str.s + start, to - start, &n), chars))
        break;
      to = start;
    }
  if (from == 0 && to == s->str.len)
    return hzj_ref (s);
  return hzj_str_sub (s, from, to);
}

gboolean
hzj_unichar_is_cased (gunichar c)
{
  return g_unichar_isupper (c) || g_unichar_islower (c) || g_unichar_istitle (c);
}

/* appends c mapped by `upper` (full mapping: "ß" upper is "SS") */
static void
append_mapped (HzjBuf *b, gunichar c, int how, gboolean data)
{
  if (c < 0x80)
    {
      const char ch = how == 'u' ? g_ascii_toupper ((char) c) : how == 'l' ? g_ascii_tolower ((char) c)
                      : g_ascii_toupper ((char) c);
      hzj_buf_append (b, &ch, 1, data);
      return;
    }
  if (how == 't')
    {
      hzj_buf_append_unichar (b, g_unichar_totitle (c), data);
      return;
    }
  char u[8];
  const int n = g_unichar_to_utf8 (c, u);
  g_autofree char *m = how == 'u' ? g_utf8_strup (u, n) : g_utf8_strdown (u, n);
  hzj_buf_append (b, m, strlen (m), data);
}

HzjValue *
hzj_str_case (HzjValue *s, HzjCase mode)
{
  HzjBuf b;
  hzj_buf_init (&b, G_MAXSIZE);
  gboolean prev_cased = FALSE, first = TRUE;
  for (gsize k = 0; k < s->str.len;)
    {
      gsize n;
      const gunichar c = hzj_utf8_get (s->str.s + k, s->str.len - k, &n);
      const gboolean data = hzj_runs_is_data (s->str.runs, s->str.n_runs, k);
      int how;
      switch (mode)
        {
        case HZJ_CASE_UPPER: how = 'u'; break;
        case HZJ_CASE_LOWER: how = 'l'; break;
        case HZJ_CASE_TITLE: how = prev_cased ? 'l' : 't'; break;
        case HZJ_CASE_CAPITALIZE: how = first ? 't' : 'l'; break;
        default: how = g_unichar_isupper (c) ? 'l' : g_unichar_islower (c) ? 'u' : 0; break;
        }
      if (how)
        append_mapped (&b, c, how, data);
      else
        hzj_buf_append (&b, s->str.s + k, n, data);
      prev_cased = hzj_unichar_is_cased (c);
      first = FALSE;
      k += n;
    }
  return hzj_str_from_buf (&b);
}

const char *
hzj_bytes_find (const char *hay, gsize hay_len, const char *needle, gsize n_len)
{
  if (n_len == 0)
    return hay;
  for (gsize k = 0; k + n_len <= hay_len; k++)
    if (hay[k] == needle[0] && memcmp (hay + k, needle, n_len) == 0)
      return hay + k;
  return NULL;
}

HzjValue *
hzj_str_replace (HzjCtx *ctx, HzjValue *s, HzjValue *old, HzjValue *new_, gint64 count)
{
  HzjBuf b;
  hzj_buf_init (&b, ctx->max_output);
  gsize at = 0;
  gint64 done = 0;
  if (old->str.len == 0)
    {
      /* Python: the replacement goes before every character and at the end */
      for (gsize k = 0; k <= s->str.len && (count < 0 || done < count);)
        {
          hzj_buf_append_str (&b, new_);
          done++;
          if (k == s->str.len)
            {
              at = k;
              break;
            }
          gsize n;
          hzj_utf8_get (s->str.s + k, s->str.len - k, &n);
          hzj_buf_append_slice (&b, s->str.s, s->str.runs, s->str.n_runs, k, k + n);
          k += n;
          at = k;
        }
    }
  else
    for (const char *hit; (count < 0 || done < count) &&
                          (hit = hzj_bytes_find (s->str.s + at, s->str.len - at, old->str.s, old->str.len));)
      {
        const gsize pos = (gsize) (hit - s->str.s);
        hzj_buf_append_slice (&b, s->str.s, s->str.runs, s->str.n_runs, at, pos);
        hzj_buf_append_str (&b, new_);
        at = pos + old->str.len;
        done++;
      }
  hzj_buf_append_slice (&b, s->str.s, s->str.runs, s->str.n_runs, at, s->str.len);
  return hzj_buf_finish (ctx, &b);
}

/* start of the character that ends at byte e (> 0) */
static gsize
prev_start (const char *t, gsize e)
{
  gsize st = e - 1;
  while (st > 0 && ((guchar) t[st] & 0xc0) == 0x80)
    st--;
  return st;
}

static gunichar
prev_char (const char *t, gsize e)
{
  gsize n;
  const gsize st = prev_start (t, e);
  return hzj_utf8_get (t + st, e - st, &n);
}

HzjValue *
hzj_str_split (HzjCtx *ctx, HzjValue *s, HzjValue *sep, gint64 maxsplit, gboolean from_right)
{
  if (sep && sep->kind == HZJ_NONE)
    sep = NULL;
  if (sep && sep->str.len == 0)
    return hzj_value_error (ctx, "empty separator");
  /* pieces as byte ranges, found left to right or right to left */
  g_autoptr (GArray) cuts = g_array_new (FALSE, FALSE, sizeof (gsize) * 2);
  const char *t = s->str.s;
  const gsize len = s->str.len;
  gint64 splits = 0;
  if (sep)
    {
      if (!from_right)
        {
          gsize at = 0;
          const char *hit;
          while ((maxsplit < 0 || splits < maxsplit) &&
                 (hit = hzj_bytes_find (t + at, len - at, sep->str.s, sep->str.len)))
            {
              gsize r[2] = { at, (gsize) (hit - t) };
              g_array_append_val (cuts, r);
              at = r[1] + sep->str.len;
              splits++;
            }
          gsize r[2] = { at, len };
          g_array_append_val (cuts, r);
        }
      else
        {
          gsize end = len;
          while ((maxsplit < 0 || splits < maxsplit) && end >= sep->str.len)
            {
              gssize k = (gssize) (end - sep->str.len);
              while (k >= 0 && memcmp (t + k, sep->str.s, sep->str.len) != 0)
                k--;
              if (k < 0)
                break;
              gsize r[2] = { (gsize) k + sep->str.len, end };
              g_array_prepend_val (cuts, r);
              end = (gsize) k;
              splits++;
            }
          gsize r[2] = { 0, end };
          g_array_prepend_val (cuts, r);
        }
    }
  else if (!from_right)
    {
      /* runs of white space; after maxsplit splits the rest, left-stripped, is one piece */
      gsize k = 0, n;
      for (;;)
        {
          while (k < len && hzj_unichar_is_py_space (hzj_utf8_get (t + k, len - k, &n)))
            k += n;
          if (k >= len)
            break;
          gsize r[2] = { k, len };
          if (maxsplit < 0 || splits < maxsplit)
            while (k < len && !hzj_unichar_is_py_space (hzj_utf8_get (t + k, len - k, &n)))
              k += n;
          else
            k = len;
          r[1] = k;
          g_array_append_val (cuts, r);
          splits++;
        }
    }
  else
    {
      gsize e = len;
      for (;;)
        {
          while (e > 0 && hzj_unichar_is_py_space (prev_char (t, e)))
            e = prev_start (t, e);
          if (e == 0)
            break;
          gsize r[2] = { 0, e };
          if (maxsplit < 0 || splits < maxsplit)
            while (e > 0 && !hzj_unichar_is_py_space (prev_char (t, e)))
              e = prev_start (t, e);
          else
            e = 0;
          r[0] = e;
          g_array_prepend_val (cuts, r);
          splits++;
        }
    }
  HzjValue *out = hzj_list_new (FALSE);
  for (guint i = 0; i < cuts->len; i++)
    {
      const gsize *r = &g_array_index (cuts, gsize, 0) + 2 * i;
      hzj_list_push (out, hzj_str_sub (s, r[0], r[1]));
    }
  return out;
}

HzjValue *
hzj_str_join (HzjCtx *ctx, HzjValue *sep, GPtrArray *items, gboolean convert)
{
  HzjBuf b;
  hzj_buf_init (&b, ctx->max_output);
  for (guint i = 0; i < items->len; i++)
    {
      HzjValue *it = items->pdata[i];
      if (!convert && it->kind != HZJ_STR)
        {
          hzj_type_error (ctx, "sequence item %u: expected str instance, %s found", i, hzj_type_name (it));
          hzj_buf_clear (&b);
          return NULL;
        }
      if (i)
        hzj_buf_append_str (&b, sep);
      hzj_str_append (&b, it);
    }
  return hzj_buf_finish (ctx, &b);
}
