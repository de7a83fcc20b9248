/* engine/jinja/jinja-buf.c — tagged text builder and UTF-8 helpers (see jinja-buf.h). */
#include "jinja-buf.h"

#include <stdarg.h>
#include <string.h>

void
hzj_buf_init (HzjBuf *b, gsize limit)
{
  b->text = g_string_new (NULL);
  b->runs = g_array_new (FALSE, FALSE, sizeof (HzjRun));
  b->limit = limit;
  b->overflow = FALSE;
}

void
hzj_buf_clear (HzjBuf *b)
{
  if (b->text)
    g_string_free (b->text, TRUE);
  if (b->runs)
    g_array_unref (b->runs);
  b->text = NULL;
  b->runs = NULL;
}

/* marks [start, end) of the buffer's text as data, merging with the last run */
static void
add_run (HzjBuf *b, gsize start, gsize end)
{
  if (start >= end)
    return;
  if (b->runs->len > 0)
    {
      HzjRun *last = &g_array_index (b->runs, HzjRun, b->runs->len - 1);
      if (last->end == start)
        {
          last->end = end;
          return;
        }
    }
  HzjRun r = { start, end };
  g_array_append_val (b->runs, r);
}

static gboolean
fits (HzjBuf *b, gsize len)
{
  if (b->overflow || len > b->limit || b->text->len > b->limit - len)
    {
      b->overflow = TRUE;
      return FALSE;
    }
  return TRUE;
}

gboolean
hzj_buf_append (HzjBuf *b, const char *s, gsize len, gboolean data)
{
  if (!fits (b, len))
    return FALSE;
  const gsize at = b->text->len;
  g_string_append_len (b->text, s, (gssize) len);
  if (data)
    add_run (b, at, at + len);
  return TRUE;
}

gboolean
hzj_buf_append_slice (HzjBuf *b, const char *s, const HzjRun *runs, guint n_runs,
                      gsize from, gsize to)
{
  if (to <= from)
    return TRUE;
  if (!fits (b, to - from))
    return FALSE;
  const gsize at = b->text->len;
  g_string_append_len (b->text, s + from, (gssize) (to - from));
  /* first run that ends after `from` */
  guint lo = 0, hi = n_runs;
  while (lo < hi)
    {
      const guint mid = (lo + hi) / 2;
      if (runs[mid].end <= from)
        lo = mid + 1;
      else
        hi = mid;
    }
  for (guint i = lo; i < n_runs && runs[i].start < to; i++)
    add_run (b, at + MAX (runs[i].start, from) - from, at + MIN (runs[i].end, to) - from);
  return TRUE;
}

gboolean
hzj_buf_append_unichar (HzjBuf *b, gunichar c, gboolean data)
{
  char u[8];
  const int n = g_unichar_to_utf8 (c, u);
  return hzj_buf_append (b, u, (gsize) n, data);
}

gboolean
hzj_buf_printf (HzjBuf *b, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *s = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  return hzj_buf_append (b, s, strlen (s), FALSE);
}

gboolean
hzj_runs_is_data (const HzjRun *runs, guint n_runs, gsize off)
{
  guint lo = 0, hi = n_runs;
  while (lo < hi)
    {
      const guint mid = (lo + hi) / 2;
      if (runs[mid].end <= off)
        lo = mid + 1;
      else if (runs[mid].start > off)
        hi = mid;
      else
        return TRUE;
    }
  return FALSE;
}

gboolean
hzj_runs_any_data (const HzjRun *runs, guint n_runs, gsize from, gsize to)
{
  for (guint i = 0; i < n_runs; i++)
    if (runs[i].start < to && runs[i].end > from)
      return TRUE;
  return FALSE;
}

gunichar
hzj_utf8_get (const char *s, gsize len, gsize *n)
{
  const guchar c = (guchar) s[0];
  gsize k = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
  if (k > len)
    k = len;
  *n = k;
  if (k == 1)
    return c;
  gunichar u = c & (0x3f >> (k - 1));
  for (gsize i = 1; i < k; i++)
    u = (u << 6) | ((guchar) s[i] & 0x3f);
  return u;
}

gsize
hzj_utf8_count (const char *s, gsize len)
{
  gsize n = 0;
  for (gsize i = 0; i < len; i++)
    if (((guchar) s[i] & 0xc0) != 0x80)
      n++;
  return n;
}

gsize
hzj_utf8_offset (const char *s, gsize len, gsize index)
{
  gsize i = 0, k = 0;
  for (; i < len; i++)
    if (((guchar) s[i] & 0xc0) != 0x80)
      {
        if (k == index)
          return i;
        k++;
      }
  return len;
}

gboolean
hzj_unichar_is_py_space (gunichar c)
{
  /* Python's _PyUnicode_IsWhitespace: Unicode's White_Space less the separators Python
   * leaves out, plus the ASCII information separators 0x1c..0x1f */
  if (c < 0x80)
    return c == ' ' || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f);
  return c == 0x85 || c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) ||
         c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

gboolean
hzj_utf8_valid (const char *s, gsize len)
{
  const char *p = s, *end = s + len;
  while (p < end)
    {
      const char *nul = memchr (p, '\0', (gsize) (end - p));
      const char *seg_end = nul ? nul : end;
      if (!g_utf8_validate (p, seg_end - p, NULL))
        return FALSE;
      p = nul ? nul + 1 : end;
    }
  return TRUE;
}
