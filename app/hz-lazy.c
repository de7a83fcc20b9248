/* hz-lazy.c — HzLazy (see hz-lazy.h). */
#include "hz-lazy.h"

struct _HzLazy {
  GtkWidget      *widget;
  HzLazyBuildFunc build;
  GdkFrameClock  *clock;      /* watched ("layout") */
  GtkWidget      *scroller;   /* the scrolled window the widget is in, while watched */
  gulong          layout_id;
  guint           tick_id;    /* the build, at the next frame */
};

HzLazy *
hz_lazy_new (GtkWidget *widget, HzLazyBuildFunc build)
{
  HzLazy *lazy = g_new0 (HzLazy, 1);

  g_return_val_if_fail (GTK_IS_WIDGET (widget) && build != NULL, lazy);
  lazy->widget = widget;
  lazy->build = build;
  return lazy;
}

void
hz_lazy_free (HzLazy *lazy)
{
  if (lazy == NULL)
    return;
  hz_lazy_unwatch (lazy);
  g_free (lazy);
}

/* Our offset from the scrolled window is summed from the allocations on the way up (its
 * child, a list view, scrolls by moving its rows): this runs for every watched widget at
 * every frame, so no transforms. */
static gboolean
is_near_in (GtkWidget *widget, GtkWidget *scroller)
{
  double y = 0;

  if (!gtk_widget_get_mapped (widget) || gtk_widget_get_width (widget) == 0)
    return FALSE;
  if (scroller == NULL)
    return TRUE;
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS  /* gtk_widget_get_allocation(): deprecated in 4.12 */
  for (GtkWidget *w = widget; w != NULL && w != scroller; w = gtk_widget_get_parent (w))
    {
      GtkAllocation a;
      gtk_widget_get_allocation (w, &a);
      y += a.y;
    }
  G_GNUC_END_IGNORE_DEPRECATIONS
  double page = gtk_widget_get_height (scroller);
  return y + gtk_widget_get_height (widget) >= -page && y <= 2 * page;
}

gboolean
hz_lazy_is_near (GtkWidget *widget)
{
  return is_near_in (widget, gtk_widget_get_ancestor (widget, GTK_TYPE_SCROLLED_WINDOW));
}

static gboolean
build_tick (GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
  HzLazy *lazy = data;
  static gint64 frame = -1, spent_us = 0;  /* main thread only */
  gint64 now = gdk_frame_clock_get_frame_counter (clock);

  if (now != frame)
    {
      frame = now;
      spent_us = 0;
    }
  else if (spent_us >= HZ_LAZY_BUDGET_US)
    return G_SOURCE_CONTINUE;  /* at the next frame */
  gint64 t0 = g_get_monotonic_time ();
  lazy->tick_id = 0;  /* (removed by returning G_SOURCE_REMOVE) */
  hz_lazy_unwatch (lazy);
  lazy->build (lazy->widget);
  spent_us += 2 * (g_get_monotonic_time () - t0);
  return G_SOURCE_REMOVE;
}

static void
on_clock_layout (GdkFrameClock *clock, HzLazy *lazy)
{
  if (lazy->tick_id == 0 && is_near_in (lazy->widget, lazy->scroller))
    lazy->tick_id = gtk_widget_add_tick_callback (lazy->widget, build_tick, lazy, NULL);
}

void
hz_lazy_watch (HzLazy *lazy)
{
  g_return_if_fail (lazy != NULL);
  if (lazy->layout_id != 0 || !gtk_widget_get_mapped (lazy->widget))
    return;
  lazy->clock = gtk_widget_get_frame_clock (lazy->widget);
  if (lazy->clock == NULL)
    return;
  g_object_ref (lazy->clock);
  lazy->scroller = gtk_widget_get_ancestor (lazy->widget, GTK_TYPE_SCROLLED_WINDOW);
  /* after GTK's own layout handler: the allocations are those of this frame */
  lazy->layout_id = g_signal_connect_after (lazy->clock, "layout",
                                            G_CALLBACK (on_clock_layout), lazy);
  gtk_widget_queue_allocate (lazy->widget);  /* a layout to look after */
}

void
hz_lazy_unwatch (HzLazy *lazy)
{
  g_return_if_fail (lazy != NULL);
  if (lazy->layout_id != 0)
    g_clear_signal_handler (&lazy->layout_id, lazy->clock);
  g_clear_object (&lazy->clock);
  lazy->scroller = NULL;
  if (lazy->tick_id != 0)
    {
      gtk_widget_remove_tick_callback (lazy->widget, lazy->tick_id);
      lazy->tick_id = 0;
    }
}

void
hz_lazy_font_metrics (GtkWidget *widget, int *char_width, int *line_height)
{
  static int cw, lh;  /* main thread only */

  if (cw == 0)
    {
      PangoFontMetrics *m = pango_context_get_metrics (gtk_widget_get_pango_context (widget),
                                                       NULL, NULL);
      cw = MAX (1, pango_font_metrics_get_approximate_char_width (m) / PANGO_SCALE);
      lh = pango_font_metrics_get_height (m) / PANGO_SCALE;
      if (lh <= 0)
        lh = (pango_font_metrics_get_ascent (m) + pango_font_metrics_get_descent (m)) / PANGO_SCALE;
      lh = MAX (lh, 1);
      pango_font_metrics_unref (m);
    }
  *char_width = cw;
  *line_height = lh;
}
