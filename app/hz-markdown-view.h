/* hz-markdown-view.h — HzMarkdownView: shows Markdown text as GTK widgets.
 *
 * Text blocks are selectable, wrapping labels (Pango markup, links open in the browser),
 * code blocks a monospace label under a header with the language and a Copy button,
 * tables a grid. Setting new text re-renders incrementally: blocks that did not change
 * keep their widgets and a changed block updates its widget in place.
 *
 * While the view is streaming (hz_markdown_view_set_streaming(), a reply growing token by
 * token), text that extends the current text is only appended, and one render at a frame
 * of the widget's frame clock, at most one per HZ_MARKDOWN_VIEW_INTERVAL_MS, shows
 * everything that arrived since the last one (relayout and redraw cost the same for one
 * token or fifty). Such a
 * render re-parses only the unfinished end of the text (from the last cut found by
 * hz_markdown_find_cut()); the blocks before it are final and their widgets are never
 * looked at again, so the cost of a frame does not grow with the length of the reply.
 * When streaming ends the whole text is parsed once more (finished blocks keep their
 * widgets). Inside a GtkScrolledWindow only the blocks near its visible part are drawn
 * (a long reply's other blocks cost nothing per frame). Main thread only.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/** Minimum time between two renders of a streaming view (20 a second). */
#define HZ_MARKDOWN_VIEW_INTERVAL_MS 50

/** Minimum width of a text block with long lines, in average character widths (see
 *  text_label_set_markup() in hz-markdown-view.c). */
#define HZ_MARKDOWN_VIEW_MIN_CHARS 20

#define HZ_TYPE_MARKDOWN_VIEW (hz_markdown_view_get_type ())
G_DECLARE_FINAL_TYPE (HzMarkdownView, hz_markdown_view, HZ, MARKDOWN_VIEW, GtkWidget)

/** A new, empty view. */
GtkWidget  *hz_markdown_view_new (void);

/** Show `markdown` (copied; NULL = ""). Not streaming, or text that does not extend the
 *  current text: renders now. Streaming: renders at a later frame (see above). */
void        hz_markdown_view_set_text (HzMarkdownView *self, const char *markdown);

/** The text last set (never NULL). */
const char *hz_markdown_view_get_text (HzMarkdownView *self);

/** Whether the text is a reply still streaming in (see above). Turning it off renders
 *  the whole text now. */
void        hz_markdown_view_set_streaming (HzMarkdownView *self, gboolean streaming);

/** The text as a screen reader should read it (hz_md_blocks_to_plain() of the current
 *  text's blocks; g_free). */
char       *hz_markdown_view_get_plain_text (HzMarkdownView *self);

/**
 * hz_markdown_estimate_size:
 * @blocks: (element-type HzMdBlock): blocks of hz_markdown_parse()
 * @char_width: average character width of the font (pixels)
 * @line_height: line height of the font (pixels)
 * @for_width: width to lay the text out at (pixels), or -1 for unwrapped
 * @min_width: (out): about the minimum width a view of @blocks would ask for
 * @nat_width: (out): about its natural width
 * @height: (out): about its height at @for_width
 *
 * The size a view showing @blocks would take, without making it (for rows not built yet,
 * see hz-lazy.h): text wrapped at the average character width, code blocks and tables
 * unwrapped plus their header and padding (style.css), blocks 8 pixels apart. Any thread.
 */
void        hz_markdown_estimate_size (GPtrArray *blocks, int char_width, int line_height,
                                       int for_width, int *min_width, int *nat_width,
                                       int *height);

/** Render now if a render is pending (tests; a view without a frame clock). */
void        hz_markdown_view_flush (HzMarkdownView *self);

/** How many blocks of the text are final (parsed once, widgets kept while streaming). */
guint       hz_markdown_view_get_n_final_blocks (HzMarkdownView *self);

/** How many top-level blocks are shown. */
guint       hz_markdown_view_get_n_blocks (HzMarkdownView *self);

/** The widget showing block `i` (for tests and accessibility tooling), or NULL. */
GtkWidget  *hz_markdown_view_get_block_widget (HzMarkdownView *self, guint i);

G_END_DECLS
