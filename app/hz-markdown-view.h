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

/** Render now if a render is pending (tests; a view without a frame clock). */
void        hz_markdown_view_flush (HzMarkdownView *self);

/** How many blocks of the text are final (parsed once, widgets kept while streaming). */
guint       hz_markdown_view_get_n_final_blocks (HzMarkdownView *self);

/** How many top-level blocks are shown. */
guint       hz_markdown_view_get_n_blocks (HzMarkdownView *self);

/** The widget showing block `i` (for tests and accessibility tooling), or NULL. */
GtkWidget  *hz_markdown_view_get_block_widget (HzMarkdownView *self, guint i);

G_END_DECLS
