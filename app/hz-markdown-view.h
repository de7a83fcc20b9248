/* hz-markdown-view.h — HzMarkdownView: shows Markdown text as GTK widgets.
 *
 * Text blocks are selectable, wrapping labels (Pango markup, links open in the browser),
 * code blocks a monospace label under a header with the language and a Copy button,
 * tables a grid. Setting new text re-renders incrementally: blocks that did not change
 * keep their widgets, a changed block updates its widget in place, and renders are at most
 * one per HZ_MARKDOWN_VIEW_INTERVAL_MS (plus 1 ms per 2 KB of text) while text keeps
 * arriving (a streamed reply), so a growing message does not keep the main loop busy.
 * Main thread only.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/** Minimum time between two renders of a view whose text keeps changing. */
#define HZ_MARKDOWN_VIEW_INTERVAL_MS 50

#define HZ_TYPE_MARKDOWN_VIEW (hz_markdown_view_get_type ())
G_DECLARE_FINAL_TYPE (HzMarkdownView, hz_markdown_view, HZ, MARKDOWN_VIEW, GtkWidget)

/** A new, empty view. */
GtkWidget  *hz_markdown_view_new (void);

/** Show `markdown` (copied; NULL = ""). Renders at once when the last render is older
 *  than the interval (see above), else schedules one for then. */
void        hz_markdown_view_set_text (HzMarkdownView *self, const char *markdown);

/** The text last set (never NULL). */
const char *hz_markdown_view_get_text (HzMarkdownView *self);

/** Render now if a render is pending (tests; the end of a streamed reply). */
void        hz_markdown_view_flush (HzMarkdownView *self);

/** How many top-level blocks are shown. */
guint       hz_markdown_view_get_n_blocks (HzMarkdownView *self);

/** The widget showing block `i` (for tests and accessibility tooling), or NULL. */
GtkWidget  *hz_markdown_view_get_block_widget (HzMarkdownView *self, guint i);

G_END_DECLS
