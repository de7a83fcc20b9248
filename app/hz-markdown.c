/* hz-markdown.c — Markdown to display blocks with md4c (see hz-markdown.h).
 *
 * md4c calls back for every block, span and run of text. Top-level blocks (children of
 * the document) become HzMdBlocks; everything nested inside them is flattened into the
 * block's markup (list items on their own lines, indented by depth). Text goes to one
 * "sink" at a time: the current table cell, the current top-level code block, or the
 * current text block's markup.
 */
#include "hz-markdown.h"

#include <md4c.h>
#include <pango/pango.h>
#include <string.h>

typedef struct {
  gboolean ordered;
  guint    next;       /* next number of an ordered list */
} ListState;

typedef struct {
  GPtrArray *blocks;
  int        depth;        /* nesting depth of blocks; the document is depth 0 */
  HzMdBlock *current;      /* top-level block being built */
  GString   *markup;       /* TEXT: its markup */
  GString   *code;         /* CODE (top-level): its text */
  GString   *cell;         /* TABLE: the cell being built */
  GArray    *lists;        /* ListState */
  int        quote_depth;
  gboolean   nested_code;  /* a code block inside a list or quote: inline <tt> */
  guint      cells_in_row;
  gboolean   fresh;        /* nothing shown yet since the last container opened */
} Parser;

void
hz_md_block_free (HzMdBlock *block)
{
  if (block == NULL)
    return;
  g_free (block->markup);
  g_free (block->text);
  g_free (block->lang);
  g_clear_pointer (&block->cells, g_ptr_array_unref);
  g_free (block);
}

gboolean
hz_md_block_equal (const HzMdBlock *a, const HzMdBlock *b)
{
  if (a->kind != b->kind)
    return FALSE;
  switch (a->kind)
    {
    case HZ_MD_BLOCK_TEXT:
      return g_strcmp0 (a->markup, b->markup) == 0;
    case HZ_MD_BLOCK_CODE:
      return g_strcmp0 (a->text, b->text) == 0 && g_strcmp0 (a->lang, b->lang) == 0;
    case HZ_MD_BLOCK_TABLE:
      if (a->n_columns != b->n_columns || a->cells->len != b->cells->len)
        return FALSE;
      for (guint i = 0; i < a->cells->len; i++)
        if (strcmp (a->cells->pdata[i], b->cells->pdata[i]) != 0)
          return FALSE;
      return TRUE;
    case HZ_MD_BLOCK_RULE:
    default:
      return TRUE;
    }
}

/* ------------------------------------------------------------------ text helpers */

static void
append_escaped (GString *s, const char *text, gsize len)
{
  for (gsize i = 0; i < len; i++)
    switch (text[i])
      {
      case '&': g_string_append (s, "&amp;"); break;
      case '<': g_string_append (s, "&lt;"); break;
      case '>': g_string_append (s, "&gt;"); break;
      case '"': g_string_append (s, "&quot;"); break;
      case '\'': g_string_append (s, "&#39;"); break;
      case '\0': g_string_append (s, "\xEF\xBF\xBD"); break;
      default: g_string_append_c (s, text[i]); break;
      }
}

static void
append_unichar_escaped (GString *s, gunichar c)
{
  char buf[6];
  int n;

  if (c == 0 || !g_unichar_validate (c))
    c = 0xFFFD;
  n = g_unichar_to_utf8 (c, buf);
  append_escaped (s, buf, n);
}

/* An entity such as "&amp;", "&#169;" or "&copy;" as escaped text. */
static void
append_entity (GString *s, const char *text, gsize len)
{
  static const struct { const char *name; gunichar c; } named[] = {
    { "amp", '&' }, { "lt", '<' }, { "gt", '>' }, { "quot", '"' }, { "apos", '\'' },
    { "nbsp", 0xA0 }, { "copy", 0xA9 }, { "reg", 0xAE }, { "trade", 0x2122 },
    { "mdash", 0x2014 }, { "ndash", 0x2013 }, { "hellip", 0x2026 }, { "laquo", 0xAB },
    { "raquo", 0xBB }, { "times", 0xD7 }, { "deg", 0xB0 }, { "middot", 0xB7 },
    { "euro", 0x20AC }, { "larr", 0x2190 }, { "rarr", 0x2192 },
  };

  if (len >= 4 && text[0] == '&' && text[1] == '#' && text[len - 1] == ';')
    {
      gboolean hex = text[2] == 'x' || text[2] == 'X';
      g_autofree char *num = g_strndup (text + (hex ? 3 : 2), len - (hex ? 4 : 3));
      append_unichar_escaped (s, (gunichar) g_ascii_strtoull (num, NULL, hex ? 16 : 10));
      return;
    }
  if (len >= 3 && text[0] == '&' && text[len - 1] == ';')
    for (gsize i = 0; i < G_N_ELEMENTS (named); i++)
      if (strlen (named[i].name) == len - 2 && memcmp (named[i].name, text + 1, len - 2) == 0)
        {
          append_unichar_escaped (s, named[i].c);
          return;
        }
  append_escaped (s, text, len);
}

static GString *
sink (Parser *p)
{
  if (p->cell != NULL)
    return p->cell;
  if (p->code != NULL)
    return p->code;
  return p->markup;
}

/* Start a new line in the text block's markup, unless it is empty or already ends one. */
static void
newline (Parser *p, gboolean blank_line)
{
  GString *m = p->markup;
  if (m == NULL || m->len == 0 || p->fresh)
    return;
  if (m->str[m->len - 1] != '\n')
    g_string_append_c (m, '\n');
  if (blank_line && (m->len < 2 || m->str[m->len - 2] != '\n'))
    g_string_append_c (m, '\n');
}

/* ------------------------------------------------------------------ md4c callbacks */

static void
begin_top_level (Parser *p, MD_BLOCKTYPE type, void *detail)
{
  p->current = g_new0 (HzMdBlock, 1);
  switch (type)
    {
    case MD_BLOCK_CODE:
      {
        MD_BLOCK_CODE_DETAIL *d = detail;
        p->current->kind = HZ_MD_BLOCK_CODE;
        if (d->lang.text != NULL && d->lang.size > 0)
          p->current->lang = g_strndup (d->lang.text, d->lang.size);
        p->code = g_string_new (NULL);
      }
      break;
    case MD_BLOCK_TABLE:
      p->current->kind = HZ_MD_BLOCK_TABLE;
      p->current->n_columns = ((MD_BLOCK_TABLE_DETAIL *) detail)->col_count;
      p->current->cells = g_ptr_array_new_with_free_func (g_free);
      break;
    case MD_BLOCK_HR:
      p->current->kind = HZ_MD_BLOCK_RULE;
      break;
    default:
      p->current->kind = HZ_MD_BLOCK_TEXT;
      p->markup = g_string_new (NULL);
      break;
    }
  p->fresh = TRUE;
}

static void
end_top_level (Parser *p)
{
  HzMdBlock *b = g_steal_pointer (&p->current);

  if (p->markup != NULL)
    {
      while (p->markup->len > 0 && p->markup->str[p->markup->len - 1] == '\n')
        g_string_truncate (p->markup, p->markup->len - 1);
      b->markup = g_string_free (g_steal_pointer (&p->markup), FALSE);
      if (*b->markup == '\0')
        {
          hz_md_block_free (b);
          return;
        }
    }
  if (p->code != NULL)
    {
      if (p->code->len > 0 && p->code->str[p->code->len - 1] == '\n')
        g_string_truncate (p->code, p->code->len - 1);
      b->text = g_string_free (g_steal_pointer (&p->code), FALSE);
    }
  g_ptr_array_add (p->blocks, b);
}

static int
enter_block (MD_BLOCKTYPE type, void *detail, void *userdata)
{
  Parser *p = userdata;

  if (type == MD_BLOCK_DOC)
    return 0;
  p->depth++;
  if (p->depth == 1)
    {
      begin_top_level (p, type, detail);
      if (type == MD_BLOCK_QUOTE)
        {
          p->quote_depth++;
          g_string_append (p->markup, "<span fgalpha=\"70%\"><i>");
        }
      if (type == MD_BLOCK_UL || type == MD_BLOCK_OL)
        {
          ListState ls = { type == MD_BLOCK_OL,
                           type == MD_BLOCK_OL ? ((MD_BLOCK_OL_DETAIL *) detail)->start : 0 };
          g_array_append_val (p->lists, ls);
        }
      if (type == MD_BLOCK_H)
        {
          static const char *const sizes[] = { "x-large", "large", "medium" };
          unsigned level = ((MD_BLOCK_H_DETAIL *) detail)->level;
          g_string_append_printf (p->markup, "<span size=\"%s\" weight=\"bold\">",
                                  sizes[MIN (level, 3) - 1]);
        }
      return 0;
    }

  if (p->current == NULL)
    return 0;
  if (p->current->kind == HZ_MD_BLOCK_TABLE)
    {
      switch (type)
        {
        case MD_BLOCK_TR:
          p->cells_in_row = 0;
          break;
        case MD_BLOCK_TH:
        case MD_BLOCK_TD:
          p->cell = g_string_new (type == MD_BLOCK_TH ? "<b>" : NULL);
          break;
        default:
          break;
        }
      return 0;
    }
  if (p->markup == NULL)
    return 0;

  switch (type)
    {
    case MD_BLOCK_UL:
    case MD_BLOCK_OL:
      {
        ListState ls = { type == MD_BLOCK_OL,
                         type == MD_BLOCK_OL ? ((MD_BLOCK_OL_DETAIL *) detail)->start : 0 };
        g_array_append_val (p->lists, ls);
      }
      break;
    case MD_BLOCK_LI:
      {
        MD_BLOCK_LI_DETAIL *d = detail;
        ListState *ls = p->lists->len ? &g_array_index (p->lists, ListState, p->lists->len - 1) : NULL;
        newline (p, FALSE);
        for (guint i = 1; i < p->lists->len; i++)
          g_string_append (p->markup, "    ");
        if (d->is_task)
          g_string_append (p->markup, d->task_mark == ' ' ? "☐ " : "☑ ");
        else if (ls != NULL && ls->ordered)
          g_string_append_printf (p->markup, "%u. ", ls->next++);
        else
          g_string_append (p->markup, "• ");
        p->fresh = TRUE;  /* the item's first paragraph continues the bullet line */
      }
      break;
    case MD_BLOCK_P:
      newline (p, p->lists->len == 0);
      break;
    case MD_BLOCK_H:
      newline (p, TRUE);
      g_string_append (p->markup, "<b>");
      break;
    case MD_BLOCK_QUOTE:
      p->quote_depth++;
      newline (p, FALSE);
      g_string_append (p->markup, "<span fgalpha=\"70%\"><i>");
      p->fresh = TRUE;
      break;
    case MD_BLOCK_CODE:
      p->nested_code = TRUE;
      newline (p, FALSE);
      g_string_append (p->markup, "<tt>");
      break;
    case MD_BLOCK_HR:
      newline (p, FALSE);
      g_string_append (p->markup, "──────────");
      break;
    case MD_BLOCK_TR:
      newline (p, FALSE);
      p->cells_in_row = 0;
      break;
    case MD_BLOCK_TH:
    case MD_BLOCK_TD:
      if (p->cells_in_row++ > 0)
        g_string_append (p->markup, " │ ");
      break;
    default:
      break;
    }
  return 0;
}

static int
leave_block (MD_BLOCKTYPE type, void *detail, void *userdata)
{
  Parser *p = userdata;

  if (type == MD_BLOCK_DOC)
    return 0;
  p->depth--;

  if (p->current != NULL && p->current->kind == HZ_MD_BLOCK_TABLE && p->depth > 0)
    {
      if ((type == MD_BLOCK_TH || type == MD_BLOCK_TD) && p->cell != NULL)
        {
          if (type == MD_BLOCK_TH)
            g_string_append (p->cell, "</b>");
          /* Rows shorter than the header are padded by md4c; longer ones are cut. */
          if (p->cells_in_row++ < p->current->n_columns)
            g_ptr_array_add (p->current->cells, g_string_free (g_steal_pointer (&p->cell), FALSE));
          else
            g_string_free (g_steal_pointer (&p->cell), TRUE);
        }
      return 0;
    }

  if (p->markup != NULL)
    switch (type)
      {
      case MD_BLOCK_UL:
      case MD_BLOCK_OL:
        g_array_set_size (p->lists, p->lists->len - 1);
        break;
      case MD_BLOCK_H:
        g_string_append (p->markup, p->depth == 0 ? "</span>" : "</b>");
        break;
      case MD_BLOCK_QUOTE:
        p->quote_depth--;
        g_string_append (p->markup, "</i></span>");
        break;
      case MD_BLOCK_CODE:
        if (p->nested_code)
          {
            while (p->markup->len > 0 && p->markup->str[p->markup->len - 1] == '\n')
              g_string_truncate (p->markup, p->markup->len - 1);
            g_string_append (p->markup, "</tt>");
            p->nested_code = FALSE;
          }
        break;
      default:
        break;
      }

  if (p->depth == 0 && p->current != NULL)
    end_top_level (p);
  return 0;
}

static int
enter_span (MD_SPANTYPE type, void *detail, void *userdata)
{
  Parser *p = userdata;
  GString *s = sink (p);

  if (s == NULL || s == p->code)
    return 0;
  switch (type)
    {
    case MD_SPAN_EM:
      g_string_append (s, "<i>");
      break;
    case MD_SPAN_STRONG:
      g_string_append (s, "<b>");
      break;
    case MD_SPAN_DEL:
      g_string_append (s, "<s>");
      break;
    case MD_SPAN_U:
      g_string_append (s, "<u>");
      break;
    case MD_SPAN_CODE:
      g_string_append (s, "<tt>");
      break;
    case MD_SPAN_LATEXMATH:
      g_string_append (s, "<tt>$");
      break;
    case MD_SPAN_LATEXMATH_DISPLAY:
      g_string_append (s, "<tt>$$");
      break;
    case MD_SPAN_A:
      {
        MD_SPAN_A_DETAIL *d = detail;
        g_string_append (s, "<a href=\"");
        append_escaped (s, d->href.text, d->href.size);
        g_string_append (s, "\">");
      }
      break;
    case MD_SPAN_IMG:
      g_string_append (s, "<i>");
      break;
    case MD_SPAN_WIKILINK:
    default:
      break;
    }
  return 0;
}

static int
leave_span (MD_SPANTYPE type, void *detail, void *userdata)
{
  Parser *p = userdata;
  GString *s = sink (p);

  if (s == NULL || s == p->code)
    return 0;
  switch (type)
    {
    case MD_SPAN_EM:
    case MD_SPAN_IMG:
      g_string_append (s, "</i>");
      break;
    case MD_SPAN_STRONG:
      g_string_append (s, "</b>");
      break;
    case MD_SPAN_DEL:
      g_string_append (s, "</s>");
      break;
    case MD_SPAN_U:
      g_string_append (s, "</u>");
      break;
    case MD_SPAN_CODE:
      g_string_append (s, "</tt>");
      break;
    case MD_SPAN_LATEXMATH:
      g_string_append (s, "$</tt>");
      break;
    case MD_SPAN_LATEXMATH_DISPLAY:
      g_string_append (s, "$$</tt>");
      break;
    case MD_SPAN_A:
      g_string_append (s, "</a>");
      break;
    case MD_SPAN_WIKILINK:
    default:
      break;
    }
  return 0;
}

static int
on_text (MD_TEXTTYPE type, const MD_CHAR *text, MD_SIZE size, void *userdata)
{
  Parser *p = userdata;
  GString *s = sink (p);

  if (s == NULL)
    return 0;
  if (s == p->markup)
    p->fresh = FALSE;
  if (s == p->code)
    {
      /* A top-level code block: raw text. */
      if (type == MD_TEXT_NULLCHAR)
        g_string_append (s, "\xEF\xBF\xBD");
      else
        g_string_append_len (s, text, size);
      return 0;
    }
  switch (type)
    {
    case MD_TEXT_NULLCHAR:
      g_string_append (s, "\xEF\xBF\xBD");
      break;
    case MD_TEXT_BR:
      g_string_append_c (s, '\n');
      break;
    case MD_TEXT_SOFTBR:
      g_string_append_c (s, p->nested_code ? '\n' : ' ');
      break;
    case MD_TEXT_ENTITY:
      append_entity (s, text, size);
      break;
    case MD_TEXT_NORMAL:
    case MD_TEXT_CODE:
    case MD_TEXT_HTML:
    case MD_TEXT_LATEXMATH:
    default:
      append_escaped (s, text, size);
      break;
    }
  return 0;
}

GPtrArray *
hz_markdown_parse (const char *text, gssize len)
{
  Parser p = { 0 };
  MD_PARSER parser = {
    .abi_version = 0,
    .flags = MD_DIALECT_GITHUB | MD_FLAG_LATEXMATHSPANS | MD_FLAG_NOHTML,
    .enter_block = enter_block,
    .leave_block = leave_block,
    .enter_span = enter_span,
    .leave_span = leave_span,
    .text = on_text,
  };

  g_return_val_if_fail (text != NULL || len == 0, NULL);
  if (len < 0)
    len = strlen (text);
  /* md4c 0.4.8 reads past `size` in link destinations when the text goes on after it
   * (it crashed on prefixes of a streamed reply): always give it a terminated string. */
  g_autofree char *copy = NULL;
  if (text != NULL && text[len] != '\0')
    text = copy = g_strndup (text, len);
  p.blocks = g_ptr_array_new_with_free_func ((GDestroyNotify) hz_md_block_free);
  p.lists = g_array_new (FALSE, TRUE, sizeof (ListState));

  if (md_parse (text ? text : "", (MD_SIZE) len, &parser, &p) != 0)
    {
      /* md4c only fails on out-of-memory: show the text as it is. */
      g_ptr_array_set_size (p.blocks, 0);
      HzMdBlock *b = g_new0 (HzMdBlock, 1);
      GString *m = g_string_new (NULL);
      append_escaped (m, text, len);
      b->kind = HZ_MD_BLOCK_TEXT;
      b->markup = g_string_free (m, FALSE);
      g_ptr_array_add (p.blocks, b);
    }

  /* Anything left open (md4c closes all blocks, but be safe). */
  if (p.cell)
    g_string_free (p.cell, TRUE);
  if (p.markup)
    g_string_free (p.markup, TRUE);
  if (p.code)
    g_string_free (p.code, TRUE);
  hz_md_block_free (p.current);
  g_array_unref (p.lists);
  return p.blocks;
}

/* ------------------------------------------------------------------ streaming cuts */

/* Whether the line text[0, len) is empty or only spaces and tabs (and a CR). */
static gboolean
line_is_blank (const char *line, gsize len)
{
  for (gsize i = 0; i < len; i++)
    if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
      return FALSE;
  return TRUE;
}

/* A fence line (CommonMark 4.5): up to 3 spaces, then 3 or more ` or ~. Sets the fence
 * character and length; `closing` also needs nothing but spaces after the run. */
static gboolean
line_is_fence (const char *line, gsize len, char *fence_ch, gsize *fence_len, gboolean closing)
{
  gsize i = 0;
  while (i < len && i < 3 && line[i] == ' ')
    i++;
  if (i >= len || (line[i] != '`' && line[i] != '~'))
    return FALSE;
  if (closing && line[i] != *fence_ch)
    return FALSE;
  char ch = line[i];
  gsize run = 0;
  while (i < len && line[i] == ch)
    i++, run++;
  if (run < 3 || (closing && run < *fence_len))
    return FALSE;
  if (closing)
    return line_is_blank (line + i, len - i);
  if (ch == '`' && memchr (line + i, '`', len - i) != NULL)
    return FALSE;  /* a backtick fence's info string has no backtick (a code span) */
  *fence_ch = ch;
  *fence_len = run;
  return TRUE;
}

gsize
hz_markdown_find_cut (const char *text, gsize start, gsize len)
{
  gsize cut = start, pos = start;
  gboolean in_fence = FALSE, prev_blank = FALSE;
  char fence_ch = 0;
  gsize fence_len = 0;

  g_return_val_if_fail (text != NULL || len == 0, start);
  g_return_val_if_fail (start <= len, len);

  while (pos < len)
    {
      const char *line = text + pos;
      const char *nl = memchr (line, '\n', len - pos);
      gsize line_len = nl ? (gsize) (nl - line) : len - pos;
      char c = line[0];

      if (!in_fence && prev_blank && pos > start &&
          c != ' ' && c != '\t' && c != '\r' && c != '\n' &&
          c != '-' && c != '+' && c != '*' && !g_ascii_isdigit (c))
        cut = pos;
      if (nl == NULL)
        break;  /* the last line is still growing */
      if (in_fence)
        {
          if (line_is_fence (line, line_len, &fence_ch, &fence_len, TRUE))
            in_fence = FALSE;
          prev_blank = FALSE;
        }
      else
        {
          in_fence = line_is_fence (line, line_len, &fence_ch, &fence_len, FALSE);
          prev_blank = !in_fence && line_is_blank (line, line_len);
        }
      pos += line_len + 1;
    }
  return cut;
}

/* The text of a block's Pango markup (always valid, see hz_markdown_parse()); links are
 * GtkLabel's <a href> tags, which Pango's parser does not know: dropped first. */
static void
append_markup_text (GString *out, const char *markup)
{
  g_autoptr(GString) pango = g_string_new (NULL);
  g_autofree char *text = NULL;

  for (const char *p = markup; *p != '\0'; p++)
    {
      if (g_str_has_prefix (p, "<a ") || g_str_has_prefix (p, "</a>"))
        {
          const char *end = strchr (p, '>');  /* (attribute values escape '>') */
          if (end != NULL)
            {
              p = end;
              continue;
            }
        }
      g_string_append_c (pango, *p);
    }
  if (pango_parse_markup (pango->str, -1, 0, NULL, &text, NULL, NULL))
    g_string_append (out, text);
  else
    g_string_append (out, markup);  /* (not reached: the parser escapes everything) */
}

char *
hz_md_blocks_to_plain (GPtrArray *blocks)
{
  GString *out = g_string_new (NULL);

  g_return_val_if_fail (blocks != NULL, g_string_free (out, FALSE));
  for (guint i = 0; i < blocks->len; i++)
    {
      const HzMdBlock *b = blocks->pdata[i];
      if (out->len > 0 && b->kind != HZ_MD_BLOCK_RULE)
        g_string_append (out, "\n\n");
      switch (b->kind)
        {
        case HZ_MD_BLOCK_TEXT:
          append_markup_text (out, b->markup);
          break;
        case HZ_MD_BLOCK_CODE:
          g_string_append (out, b->text);
          break;
        case HZ_MD_BLOCK_TABLE:
          for (guint k = 0; k < b->cells->len; k++)
            {
              guint cols = MAX (b->n_columns, 1);
              if (k > 0)
                g_string_append (out, k % cols == 0 ? "\n" : "\t");
              append_markup_text (out, b->cells->pdata[k]);
            }
          break;
        case HZ_MD_BLOCK_RULE:
        default:
          break;
        }
    }
  return g_string_free (out, FALSE);
}
