/* hz-markdown.h — Markdown (CommonMark + GitHub tables, strikethrough, task lists) to
 * display blocks, with md4c.
 *
 * hz_markdown_parse() turns a message into a list of top-level blocks: text blocks
 * (paragraphs, headings, lists, quotes) as Pango markup, code blocks as raw text with their
 * language, tables as a grid of Pango-markup cells, and rules. The markup is always valid
 * (every piece of text is escaped, every tag closed), also for incomplete input such as a
 * reply that is still streaming in (an unclosed ``` fence is a code block to the end).
 * LaTeX ($…$, $$…$$) is kept as source, in a monospace span. Pure functions, any thread.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
  HZ_MD_BLOCK_TEXT,   /* markup: Pango markup of a paragraph, heading, list or quote */
  HZ_MD_BLOCK_CODE,   /* text: the code (no trailing newline); lang: info word or NULL */
  HZ_MD_BLOCK_TABLE,  /* cells: n_rows x n_columns Pango markup strings, row 0 = header */
  HZ_MD_BLOCK_RULE,   /* a thematic break (---) */
} HzMdBlockKind;

/** One top-level block. Free with hz_md_block_free(). */
typedef struct {
  HzMdBlockKind kind;
  char         *markup;     /* TEXT */
  char         *text;       /* CODE */
  char         *lang;       /* CODE, may be NULL */
  guint         n_columns;  /* TABLE */
  GPtrArray    *cells;      /* TABLE: char*, row-major */
} HzMdBlock;

void hz_md_block_free (HzMdBlock *block);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzMdBlock, hz_md_block_free)

/** Whether two blocks would display the same. */
gboolean hz_md_block_equal (const HzMdBlock *a, const HzMdBlock *b);

/**
 * hz_markdown_parse:
 * @text: UTF-8 Markdown
 * @len: length in bytes, or -1 when NUL-terminated
 *
 * Returns: (transfer full) (element-type HzMdBlock): the top-level blocks, in order
 */
GPtrArray *hz_markdown_parse (const char *text, gssize len);

/**
 * hz_md_blocks_to_plain:
 * @blocks: (element-type HzMdBlock): blocks of hz_markdown_parse()
 *
 * The text of @blocks as a screen reader should read it: the text of text blocks
 * (markup removed: no `**`, `#` or list syntax beyond the bullets and numbers shown),
 * code as is, table cells separated by tabs and rows by newlines, blocks by a blank line;
 * rules give nothing.
 *
 * Returns: (transfer full): UTF-8 text
 */
char      *hz_md_blocks_to_plain (GPtrArray *blocks);

/**
 * hz_markdown_find_cut:
 * @text: UTF-8 Markdown (need not be terminated at @len)
 * @start: byte offset where the scan starts: 0 or an earlier result for the same text
 *   (a line start outside any fenced code block)
 * @len: length of @text in bytes
 *
 * Finds where a growing text (a streamed reply) can be cut so that the blocks before the
 * cut are final: the largest line start c in (@start, @len) that follows a blank line,
 * lies outside a fenced code block, and begins (at column 0) with a character that starts
 * a new top-level block and cannot continue an earlier one (not a space, tab or list
 * marker: `-`, `+`, `*` or a digit). Text appended after @len cannot change how
 * @text[0, c) parses, so hz_markdown_parse (@text, c) followed by hz_markdown_parse
 * (@text + c, …) gives the blocks of the whole text. (One CommonMark exception: a link
 * reference definition later in the text can still turn an earlier `[label]` into a link;
 * parse the whole text once when it is complete.) Works in O(@len - @start).
 *
 * Returns: the cut offset, or @start when there is none after it
 */
gsize      hz_markdown_find_cut (const char *text, gsize start, gsize len);

G_END_DECLS
