/* engine/jinja/jinja-lexer.c — Jinja2 3.1's lexer (see jinja-lexer.h and jinja2/lexer.py). */
#include "jinja-lexer.h"
#include "jinja-buf.h"
#include "jinja-error.h"

#include <string.h>

typedef struct {
  const char *s;
  gsize len, pos;
  int line;
  GArray *toks;
  GError **error;
  char stack[256]; /* open brackets inside a tag */
  guint depth;
} Lexer;

static gboolean
fail (Lexer *lx, const char *fmt, const char *arg)
{
  hzj_error_set (lx->error, HZ_JINJA_ERROR_SYNTAX, "TemplateSyntaxError", lx->line, fmt, arg);
  return FALSE;
}

static void
push (Lexer *lx, HzjTokKind kind, int line)
{
  HzjToken t = { .kind = kind, .line = line };
  g_array_append_val (lx->toks, t);
}

static void
push_text (Lexer *lx, HzjTokKind kind, int line, const char *s, gsize len)
{
  HzjToken t = { .kind = kind, .line = line, .text = g_malloc (len + 1), .len = len };
  memcpy (t.text, s, len);
  t.text[len] = '\0';
  g_array_append_val (lx->toks, t);
}

static int
count_nl (const char *s, gsize len)
{
  int n = 0;
  for (gsize i = 0; i < len; i++)
    n += s[i] == '\n';
  return n;
}

static gboolean
at (Lexer *lx, gsize p, const char *lit)
{
  const gsize n = strlen (lit);
  return p + n <= lx->len && memcmp (lx->s + p, lit, n) == 0;
}

/* end of Python white space (\s) from p */
static gsize
skip_space (Lexer *lx, gsize p)
{
  while (p < lx->len)
    {
      gsize n;
      if (!hzj_unichar_is_py_space (hzj_utf8_get (lx->s + p, lx->len - p, &n)))
        break;
      p += n;
    }
  return p;
}

/* length of `text` without its trailing Python white space (str.rstrip()) */
static gsize
rstrip_len (const char *text, gsize len)
{
  gsize end = len;
  while (end > 0)
    {
      gsize start = end - 1;
      while (start > 0 && ((guchar) text[start] & 0xc0) == 0x80)
        start--;
      gsize n;
      if (!hzj_unichar_is_py_space (hzj_utf8_get (text + start, end - start, &n)))
        break;
      end = start;
    }
  return end;
}

/* Python's unicode-escape decoding of a string literal's body (after
 * encode("ascii", "backslashreplace"), as jinja2 does) */
static gboolean
decode_string (Lexer *lx, const char *s, gsize len, GString *out)
{
  for (gsize i = 0; i < len;)
    {
      if (s[i] != '\\' || i + 1 >= len)
        {
          g_string_append_c (out, s[i++]);
          continue;
        }
      const char c = s[i + 1];
      i += 2;
      int hex = 0;
      switch (c)
        {
        case '\n': break;
        case '\\': g_string_append_c (out, '\\'); break;
        case '\'': g_string_append_c (out, '\''); break;
        case '"': g_string_append_c (out, '"'); break;
        case 'a': g_string_append_c (out, '\a'); break;
        case 'b': g_string_append_c (out, '\b'); break;
        case 'f': g_string_append_c (out, '\f'); break;
        case 'n': g_string_append_c (out, '\n'); break;
        case 'r': g_string_append_c (out, '\r'); break;
        case 't': g_string_append_c (out, '\t'); break;
        case 'v': g_string_append_c (out, '\v'); break;
        case 'x': hex = 2; break;
        case 'u': hex = 4; break;
        case 'U': hex = 8; break;
        case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7':
          {
            guint v = (guint) (c - '0');
            for (int k = 0; k < 2 && i < len && s[i] >= '0' && s[i] <= '7'; k++)
              v = v * 8 + (guint) (s[i++] - '0');
            g_string_append_unichar (out, v);
            break;
          }
        default:
          if ((guchar) c >= 0x80)
            {
              /* the backslash escapes backslashreplace's "\xNN" / "\uNNNN" of this
               * character: the result is that escape's text */
              gsize n;
              const gunichar u = hzj_utf8_get (s + i - 1, len - i + 1, &n);
              g_string_append_printf (out, u < 0x100 ? "\\x%02x" : u < 0x10000 ? "\\u%04x" : "\\U%08x", u);
              i += n - 1;
            }
          else
            {
              g_string_append_c (out, '\\');
              g_string_append_c (out, c);
            }
        }
      if (hex)
        {
          guint32 v = 0;
          for (int k = 0; k < hex; k++, i++)
            {
              if (i >= len || !g_ascii_isxdigit (s[i]))
                return fail (lx, "invalid escape in string literal (\\%s)",
                             c == 'x' ? "xXX" : c == 'u' ? "uXXXX" : "UXXXXXXXX");
              v = v * 16 + (guint32) g_ascii_xdigit_value (s[i]);
            }
          if (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
            return fail (lx, "%s", "invalid code point in string literal escape");
          g_string_append_unichar (out, v);
        }
    }
  return TRUE;
}

static const char *const ops2[] = { "//", "**", "==", "!=", ">=", "<=", NULL };
static const char ops1[] = "+-/*%~[](){}<>=.:|,;";

/* digits with single underscores between them, from p; returns the end */
static gsize
scan_digits (Lexer *lx, gsize p, gboolean (*is_digit) (char))
{
  const gsize start = p;
  while (p < lx->len)
    {
      if (is_digit (lx->s[p]))
        p++;
      else if (lx->s[p] == '_' && p > start && p + 1 < lx->len && is_digit (lx->s[p + 1]))
        p++;
      else
        break;
    }
  return p;
}

static gboolean is_dec (char c) { return c >= '0' && c <= '9'; }
static gboolean is_bin (char c) { return c == '0' || c == '1'; }
static gboolean is_oct (char c) { return c >= '0' && c <= '7'; }
static gboolean is_hex (char c) { return g_ascii_isxdigit (c); }

/* copy of [a, b) without underscores */
static char *
strip_underscores (const char *s, gsize a, gsize b)
{
  GString *g = g_string_new (NULL);
  for (gsize i = a; i < b; i++)
    if (s[i] != '_')
      g_string_append_c (g, s[i]);
  return g_string_free (g, FALSE);
}

static gboolean
lex_number (Lexer *lx)
{
  const gsize start = lx->pos;
  const char *s = lx->s;
  /* float: digits ((.digits)? e[+-]?digits | .digits) */
  gsize p = scan_digits (lx, start, is_dec), end = 0;
  const gboolean after_dot = start > 0 && s[start - 1] == '.'; /* (?<!\.) */
  if (after_dot)
    ;
  else if (p < lx->len && s[p] == '.' && p + 1 < lx->len && is_dec (s[p + 1]))
    {
      gsize q = scan_digits (lx, p + 1, is_dec);
      end = q;
      if (q < lx->len && (s[q] == 'e' || s[q] == 'E'))
        {
          gsize r = q + 1;
          if (r < lx->len && (s[r] == '+' || s[r] == '-'))
            r++;
          if (r < lx->len && is_dec (s[r]))
            end = scan_digits (lx, r, is_dec);
        }
    }
  else if (p < lx->len && (s[p] == 'e' || s[p] == 'E'))
    {
      gsize r = p + 1;
      if (r < lx->len && (s[r] == '+' || s[r] == '-'))
        r++;
      if (r < lx->len && is_dec (s[r]))
        end = scan_digits (lx, r, is_dec);
    }
  if (end)
    {
      g_autofree char *txt = strip_underscores (s, start, end);
      HzjToken t = { .kind = HZJ_T_FLOAT, .line = lx->line, .f = g_ascii_strtod (txt, NULL) };
      g_array_append_val (lx->toks, t);
      lx->pos = end;
      return TRUE;
    }
  /* integer: 0b / 0o / 0x / [1-9](_?\d)* / 0(_?0)* */
  int base = 10;
  gsize digits_at = start;
  if (s[start] == '0' && start + 2 < lx->len)
    {
      const char k = g_ascii_tolower (s[start + 1]);
      gboolean (*isd) (char) = k == 'b' ? is_bin : k == 'o' ? is_oct : k == 'x' ? is_hex : NULL;
      gsize q = start + 2;
      if (isd && q < lx->len && s[q] == '_')
        q++;
      if (isd && q < lx->len && isd (s[q]))
        {
          base = k == 'b' ? 2 : k == 'o' ? 8 : 16;
          digits_at = start + 2;
          p = scan_digits (lx, q, isd);
        }
    }
  if (base == 10)
    {
      if (s[start] == '0')
        {
          p = start + 1;
          while (p < lx->len && (s[p] == '0' || (s[p] == '_' && p + 1 < lx->len && s[p + 1] == '0')))
            p++;
        }
      else
        p = scan_digits (lx, start, is_dec);
    }
  g_autofree char *txt = strip_underscores (s, digits_at, p);
  guint64 v = 0;
  for (const char *c = txt; *c; c++)
    {
      const guint d = (guint) g_ascii_xdigit_value (*c);
      if (v > (G_MAXINT64 - d) / (guint64) base)
        return fail (lx, "%s", "integer literal too large (more than 64 bits)");
      v = v * (guint64) base + d;
    }
  HzjToken t = { .kind = HZJ_T_INT, .line = lx->line, .i = (gint64) v };
  g_array_append_val (lx->toks, t);
  lx->pos = p;
  return TRUE;
}

static gboolean
is_name_start (guchar c)
{
  return g_ascii_isalpha (c) || c == '_' || c >= 0x80;
}

static gboolean
is_name_char (guchar c)
{
  return is_name_start (c) || g_ascii_isdigit (c);
}

/* the tokens inside a {{ }} or {% %} tag, up to and including its end */
static gboolean
lex_tag (Lexer *lx, gboolean block, gboolean *line_starting)
{
  const char *s = lx->s;
  lx->depth = 0;
  for (;;)
    {
      const gsize p = lx->pos;
      if (p >= lx->len)
        return TRUE; /* the parser reports the missing end */
      if (lx->depth == 0)
        {
          gsize end = 0;
          if (block)
            {
              if (at (lx, p, "+%}"))
                end = p + 3;
              else if (at (lx, p, "-%}"))
                end = skip_space (lx, p + 3);
              else if (at (lx, p, "%}"))
                end = p + 2 + (at (lx, p + 2, "\n") ? 1 : 0); /* trim_blocks */
            }
          else if (at (lx, p, "-}}"))
            end = skip_space (lx, p + 3);
          else if (at (lx, p, "}}"))
            end = p + 2;
          if (end)
            {
              push (lx, block ? HZJ_T_BLOCK_END : HZJ_T_VAR_END, lx->line);
              lx->line += count_nl (s + p, end - p);
              lx->pos = end;
              *line_starting = s[end - 1] == '\n';
              return TRUE;
            }
        }
      gsize n;
      const gunichar c = hzj_utf8_get (s + p, lx->len - p, &n);
      if (hzj_unichar_is_py_space (c))
        {
          const gsize e = skip_space (lx, p);
          lx->line += count_nl (s + p, e - p);
          lx->pos = e;
        }
      else if (is_dec (s[p]))
        {
          if (!lex_number (lx))
            return FALSE;
        }
      else if (is_name_start ((guchar) s[p]))
        {
          gsize e = p;
          while (e < lx->len && is_name_char ((guchar) s[e]))
            e++;
          push_text (lx, HZJ_T_NAME, lx->line, s + p, e - p);
          lx->pos = e;
        }
      else if (s[p] == '\'' || s[p] == '"')
        {
          const char q = s[p];
          gsize e = p + 1;
          while (e < lx->len && s[e] != q)
            e += s[e] == '\\' ? 2 : 1;
          if (e >= lx->len)
            return fail (lx, "unexpected char %s", q == '\'' ? "\"'\"" : "'\"'");
          GString *out = g_string_new (NULL);
          const int line = lx->line;
          if (!decode_string (lx, s + p + 1, e - p - 1, out))
            {
              g_string_free (out, TRUE);
              return FALSE;
            }
          push_text (lx, HZJ_T_STRING, line, out->str, out->len);
          g_string_free (out, TRUE);
          lx->line += count_nl (s + p, e + 1 - p);
          lx->pos = e + 1;
        }
      else
        {
          HzjToken t = { .kind = HZJ_T_OP, .line = lx->line };
          for (int k = 0; ops2[k]; k++)
            if (at (lx, p, ops2[k]))
              memcpy (t.op, ops2[k], 2);
          if (!t.op[0])
            {
              if (!s[p] || !strchr (ops1, s[p]))
                {
                  g_autofree char *ch = g_strndup (s + p, n);
                  return fail (lx, "unexpected char '%s'", ch);
                }
              t.op[0] = s[p];
            }
          const char o = t.op[1] ? 0 : t.op[0];
          if (o == '(' || o == '[' || o == '{')
            {
              if (lx->depth >= sizeof lx->stack)
                return fail (lx, "%s", "brackets nested too deeply");
              lx->stack[lx->depth++] = o;
            }
          else if (o == ')' || o == ']' || o == '}')
            {
              if (lx->depth == 0)
                return fail (lx, "unexpected '%s'", t.op);
              const char open = lx->stack[--lx->depth];
              const char want = open == '(' ? ')' : open == '[' ? ']' : '}';
              if (o != want)
                {
                  hzj_error_set (lx->error, HZ_JINJA_ERROR_SYNTAX, "TemplateSyntaxError", lx->line,
                                 "unexpected '%c', expected '%c'", o, want);
                  return FALSE;
                }
            }
          g_array_append_val (lx->toks, t);
          lx->pos = p + strlen (t.op);
        }
    }
}

/* {% raw %} ... {% endraw %}: p is at "{%"; returns FALSE when this is no raw block */
static gboolean
lex_raw (Lexer *lx, gsize p, gboolean *handled, gboolean *line_starting)
{
  gsize q = p + 2;
  if (q < lx->len && (lx->s[q] == '-' || lx->s[q] == '+'))
    q++;
  q = skip_space (lx, q);
  if (!at (lx, q, "raw"))
    return TRUE;
  q = skip_space (lx, q + 3);
  if (at (lx, q, "-%}"))
    q = skip_space (lx, q + 3);
  else if (at (lx, q, "%}"))
    q += 2;
  else
    return TRUE;
  *handled = TRUE;
  lx->line += count_nl (lx->s + p, q - p);
  /* the first {%[-+]? endraw [-+]?%} */
  for (gsize e = q; e + 1 < lx->len; e++)
    {
      if (!at (lx, e, "{%"))
        continue;
      gsize r = e + 2;
      char sign = 0;
      if (r < lx->len && (lx->s[r] == '-' || lx->s[r] == '+'))
        sign = lx->s[r++];
      r = skip_space (lx, r);
      if (!at (lx, r, "endraw"))
        continue;
      r = skip_space (lx, r + 6);
      gsize end;
      if (at (lx, r, "+%}"))
        end = r + 3;
      else if (at (lx, r, "-%}"))
        end = skip_space (lx, r + 3);
      else if (at (lx, r, "%}"))
        end = r + 2 + (at (lx, r + 2, "\n") ? 1 : 0);
      else
        continue;
      const gsize tlen = sign == '-' ? rstrip_len (lx->s + q, e - q) : e - q;
      if (tlen)
        push_text (lx, HZJ_T_DATA, lx->line, lx->s + q, tlen);
      lx->line += count_nl (lx->s + q, end - q);
      lx->pos = end;
      *line_starting = lx->s[end - 1] == '\n';
      return TRUE;
    }
  return fail (lx, "%s", "Missing end of raw directive");
}

static gboolean
lex_comment (Lexer *lx, gboolean *line_starting)
{
  for (gsize p = lx->pos; p < lx->len; p++)
    {
      gsize end = 0;
      if (at (lx, p, "+#}"))
        end = p + 3;
      else if (at (lx, p, "-#}"))
        end = skip_space (lx, p + 3);
      else if (at (lx, p, "#}"))
        end = p + 2 + (at (lx, p + 2, "\n") ? 1 : 0);
      if (end)
        {
          lx->line += count_nl (lx->s + lx->pos, end - lx->pos);
          lx->pos = end;
          *line_starting = lx->s[end - 1] == '\n';
          return TRUE;
        }
    }
  return fail (lx, "%s", "Missing end of comment tag");
}

static gboolean
lex_all (Lexer *lx)
{
  gboolean line_starting = TRUE;
  while (lx->pos < lx->len)
    {
      /* the next tag start */
      const char *s = lx->s;
      gsize p = lx->pos;
      char kind = 0;
      for (; p + 1 < lx->len; p++)
        if (s[p] == '{' && (s[p + 1] == '{' || s[p + 1] == '%' || s[p + 1] == '#'))
          {
            kind = s[p + 1];
            break;
          }
      if (!kind)
        {
          push_text (lx, HZJ_T_DATA, lx->line, s + lx->pos, lx->len - lx->pos);
          lx->pos = lx->len;
          break;
        }
      const char sign = p + 2 < lx->len && (s[p + 2] == '-' || s[p + 2] == '+') ? s[p + 2] : 0;
      const char *text = s + lx->pos;
      gsize tlen = p - lx->pos;
      if (sign == '-')
        tlen = rstrip_len (text, tlen);
      else if (sign != '+' && kind != '{')
        {
          /* lstrip_blocks: white space alone between a line start and the tag */
          gsize l_pos = tlen;
          while (l_pos > 0 && text[l_pos - 1] != '\n')
            l_pos--;
          if ((l_pos > 0 || line_starting) && l_pos < tlen && rstrip_len (text + l_pos, tlen - l_pos) == 0)
            tlen = l_pos;
        }
      if (tlen)
        push_text (lx, HZJ_T_DATA, lx->line, text, tlen);
      lx->line += count_nl (text, p - lx->pos);
      if (kind == '%')
        {
          gboolean handled = FALSE;
          if (!lex_raw (lx, p, &handled, &line_starting))
            return FALSE;
          if (handled)
            continue;
        }
      lx->pos = p + 2 + (sign ? 1 : 0);
      if (kind == '#')
        {
          if (!lex_comment (lx, &line_starting))
            return FALSE;
          continue;
        }
      push (lx, kind == '%' ? HZJ_T_BLOCK_BEGIN : HZJ_T_VAR_BEGIN, lx->line);
      line_starting = FALSE;
      if (!lex_tag (lx, kind == '%', &line_starting))
        return FALSE;
    }
  push (lx, HZJ_T_EOF, lx->line);
  return TRUE;
}

GArray *
hzj_lex (const char *src, gsize len, GError **error)
{
  /* newlines normalised to "\n"; one trailing newline dropped (keep_trailing_newline off) */
  GString *norm = g_string_sized_new (len);
  for (gsize i = 0; i < len; i++)
    {
      if (src[i] == '\r')
        {
          g_string_append_c (norm, '\n');
          if (i + 1 < len && src[i + 1] == '\n')
            i++;
        }
      else
        g_string_append_c (norm, src[i]);
    }
  if (norm->len && norm->str[norm->len - 1] == '\n')
    g_string_truncate (norm, norm->len - 1);
  Lexer lx = { .s = norm->str, .len = norm->len, .line = 1, .error = error };
  lx.toks = g_array_new (FALSE, TRUE, sizeof (HzjToken));
  const gboolean ok = lex_all (&lx);
  g_string_free (norm, TRUE);
  if (!ok)
    {
      hzj_tokens_free (lx.toks);
      return NULL;
    }
  return lx.toks;
}

void
hzj_tokens_free (GArray *tokens)
{
  if (!tokens)
    return;
  for (guint i = 0; i < tokens->len; i++)
    g_free (g_array_index (tokens, HzjToken, i).text);
  g_array_unref (tokens);
}

char *
hzj_token_describe (const HzjToken *t)
{
  switch (t->kind)
    {
    case HZJ_T_DATA: return g_strdup ("template data / text");
    case HZJ_T_VAR_BEGIN: return g_strdup ("begin of print statement");
    case HZJ_T_VAR_END: return g_strdup ("end of print statement");
    case HZJ_T_BLOCK_BEGIN: return g_strdup ("begin of statement block");
    case HZJ_T_BLOCK_END: return g_strdup ("end of statement block");
    case HZJ_T_NAME: return g_strdup (t->text);
    case HZJ_T_STRING: return g_strdup ("string");
    case HZJ_T_INT: return g_strdup ("integer");
    case HZJ_T_FLOAT: return g_strdup ("float");
    case HZJ_T_OP: return g_strdup (t->op);
    case HZJ_T_EOF: return g_strdup ("end of template");
    }
  return g_strdup ("?");
}
