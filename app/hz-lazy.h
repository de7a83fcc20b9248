/* hz-lazy.h — HzLazy: makes a widget's expensive contents only once the widget comes
 * near the visible part of the scrolled window it is in.
 *
 * GTK 4.8's GtkListView makes row widgets for up to 200 items around the one shown, and
 * measures, allocates and draws all of them; a row that builds its contents (a template
 * of a few dozen widgets, Markdown laid out) only when it comes within a page of the
 * visible part, and until then reports an estimated size, makes opening a long
 * conversation cost the rows on screen only.
 *
 * While watched (hz_lazy_watch(): the widget is mapped and not built), the widget is
 * looked at after each layout of its frame clock; once near, the build function runs at
 * the next frame, the builds of one frame sharing a few milliseconds (HZ_LAZY_BUDGET_US;
 * the first is always run). Main thread only.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/** Main-loop time the builds of one frame may take together (microseconds; a build's
 *  time counts twice: laying its widgets out in the same frame costs about as much). */
#define HZ_LAZY_BUDGET_US 4000

typedef struct _HzLazy HzLazy;

/** Makes `widget`'s contents (called once per watch, at a frame, when near). */
typedef void (*HzLazyBuildFunc) (GtkWidget *widget);

/** A watcher for `widget` (not referenced: free it in the widget's dispose). */
HzLazy  *hz_lazy_new (GtkWidget *widget, HzLazyBuildFunc build);
void     hz_lazy_free (HzLazy *lazy);

/** Start looking for the visible part (the widget is mapped and not built: call from
 *  map and whenever the contents are dropped); does nothing while unmapped. */
void     hz_lazy_watch (HzLazy *lazy);

/** Stop looking (unmap, dispose, or built some other way). */
void     hz_lazy_unwatch (HzLazy *lazy);

/** Whether `widget` is mapped, was allocated and lies within a page of the visible part
 *  of its scrolled window (any widget outside a scrolled window: TRUE). */
gboolean hz_lazy_is_near (GtkWidget *widget);

/** The average character width and line height (pixels) of `widget`'s font, measured
 *  once for the process: for size estimates only. */
void     hz_lazy_font_metrics (GtkWidget *widget, int *char_width, int *line_height);

G_END_DECLS
