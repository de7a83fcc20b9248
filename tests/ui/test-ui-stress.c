/* test-ui-stress.c — a benchmark, not a timed test: the real app under Xvfb opens a
 * conversation of 2,000 messages (Markdown replies) twice, first read on the main thread
 * (hz_window_select_conversation(), as every open was before) and then as a click opens it
 * (read on a thread, rows put in by chunks: the stalls before and after), checks that it
 * opens at its end and that leaving before the read is done drops it; then a reply of
 * 20,000 tokens streams into it, a few tokens every 2 ms (as the engine worker delivers them, without
 * the model's own cost). An idle-latency probe (a 4 ms timeout that measures how late it
 * runs) records main-loop stalls while the conversation opens, while idle and while the
 * reply streams; the 50th/99th percentile and the worst are printed for each (and the CPU
 * time the app used while the reply streamed: its work, whatever the load), and the
 * same for the work of each frame of the window's frame clock (before-paint to
 * after-paint: the once-per-frame Markdown render, layout, snapshot and drawing).
 * The goal is a 99th percentile under 16 ms. Rows are made lazily (hz-lazy.h): the test
 * prints how many of the list view's rows were built, and checks that scrolling back page
 * by page never shows a row that is not. Screenshots: stress-opened (the end of the
 * conversation), stress-scrolled (six pages up), stress (after the reply).
 */
#include <hanzo-store.h>
#include <sys/resource.h>

#include "hz-message-item.h"
#include "hz-message-row.h"
#include "ui-test-util.h"

#define N_MESSAGES     2000
#define REPLY_TOKENS   20000
#define PROBE_MS       4

typedef struct {
  GArray  *lateness_us;   /* gint64 */
  gint64   last_us;
  guint    probe_id;
  GArray  *frame_us;      /* gint64: before-paint to after-paint of each frame */
  gint64   frame_start_us;
} Probe;

/* Where the main loop's time goes: how long each frame of the window's frame clock takes
 * from before-paint to after-paint (tick callbacks such as the Markdown render, CSS,
 * measuring and allocating, snapshot and drawing). */
static void
on_before_paint (GdkFrameClock *clock, Probe *p)
{
  p->frame_start_us = g_get_monotonic_time ();
}

static void
on_after_paint (GdkFrameClock *clock, Probe *p)
{
  if (p->frame_start_us == 0)
    return;
  gint64 dt = g_get_monotonic_time () - p->frame_start_us;
  g_array_append_val (p->frame_us, dt);
  p->frame_start_us = 0;
}

static gboolean
probe_tick (gpointer data)
{
  Probe *p = data;
  gint64 now = g_get_monotonic_time ();
  if (p->last_us != 0)
    {
      gint64 late = now - p->last_us - PROBE_MS * 1000;
      g_array_append_val (p->lateness_us, late);
    }
  p->last_us = now;
  return G_SOURCE_CONTINUE;
}

static int
cmp_i64 (gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;
  return x < y ? -1 : x > y;
}

/* Drop what was recorded (a phase not to report). */
static void
probe_reset (Probe *p)
{
  g_array_set_size (p->lateness_us, 0);
  g_array_set_size (p->frame_us, 0);
  p->last_us = g_get_monotonic_time ();
}

static void
probe_report (Probe *p, const char *what)
{
  /* A stall still going on (on a busy machine the first layout of the long list can
   * outlast the whole phase): count it as far as it went. */
  gint64 pending = p->last_us ? g_get_monotonic_time () - p->last_us - PROBE_MS * 1000 : 0;
  if (pending > 0)
    g_array_append_val (p->lateness_us, pending);
  g_array_sort (p->lateness_us, cmp_i64);
  guint n = p->lateness_us->len;
  g_assert_cmpuint (n, >=, 1);
  g_test_message ("%s: %u samples, main-loop stall p50 %.2f ms, p99 %.2f ms, max %.2f ms",
                  what, n, g_array_index (p->lateness_us, gint64, n / 2) / 1000.0,
                  g_array_index (p->lateness_us, gint64, n * 99 / 100) / 1000.0,
                  g_array_index (p->lateness_us, gint64, n - 1) / 1000.0);
  g_array_sort (p->frame_us, cmp_i64);
  guint f = p->frame_us->len;
  if (f > 0)
    g_test_message ("%s: %u frames, frame work p50 %.2f ms, p99 %.2f ms, max %.2f ms",
                    what, f, g_array_index (p->frame_us, gint64, f / 2) / 1000.0,
                    g_array_index (p->frame_us, gint64, f * 99 / 100) / 1000.0,
                    g_array_index (p->frame_us, gint64, f - 1) / 1000.0);
  probe_reset (p);  /* the next phase starts now */
}

/* Rows made by the list view, and how many of them built their widgets (hz-lazy.h). */
static void
count_rows (GtkWidget *w, guint *rows, guint *built)
{
  if (HZ_IS_MESSAGE_ROW (w))
    {
      (*rows)++;
      *built += hz_message_row_get_built (HZ_MESSAGE_ROW (w));
      return;
    }
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    count_rows (c, rows, built);
}

/* Rows (under `w`) that show in `scroller`'s visible part without being built. */
static guint
count_unbuilt_visible (GtkWidget *w, GtkWidget *scroller)
{
  graphene_rect_t b;
  if (HZ_IS_MESSAGE_ROW (w))
    return !hz_message_row_get_built (HZ_MESSAGE_ROW (w)) && gtk_widget_get_mapped (w) &&
           gtk_widget_compute_bounds (w, scroller, &b) &&
           b.origin.y + b.size.height > 0 && b.origin.y < gtk_widget_get_height (scroller);
  guint n = 0;
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    n += count_unbuilt_visible (c, scroller);
  return n;
}

static gboolean
none_unbuilt_visible (gpointer list)
{
  return count_unbuilt_visible (list, gtk_widget_get_ancestor (list, GTK_TYPE_SCROLLED_WINDOW)) == 0;
}

static gboolean
at_end (gpointer window)
{
  GtkAdjustment *adj = gtk_scrollable_get_vadjustment (GTK_SCROLLABLE (hz_window_get_message_list (window)));
  return gtk_adjustment_get_value (adj) + gtk_adjustment_get_page_size (adj) >=
         gtk_adjustment_get_upper (adj) - 64;
}

static gboolean
all_listed (gpointer window)
{
  return g_list_model_get_n_items (hz_window_get_messages (window)) == N_MESSAGES;
}

/* CPU time this process has used (user + system, all threads), in seconds: the work
 * done, whatever the machine's load. */
static double
cpu_seconds (void)
{
  struct rusage ru;
  getrusage (RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
         (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* The machine's load, to read the numbers with. */
static void
print_load (void)
{
  g_autofree char *load = NULL;
  if (g_file_get_contents ("/proc/loadavg", &load, NULL, NULL))
    g_test_message ("load average: %s (%u CPUs)", g_strstrip (load), g_get_num_processors ());
}

static void
fill_store (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HzStore) store = hz_store_open (NULL, &error);
  g_assert_no_error (error);
  g_assert_true (hz_store_begin (store, &error));
  gint64 conv = hz_store_create_conversation (store, "Long conversation", NULL, NULL, &error);
  gint64 parent = 0;
  for (guint i = 0; i < N_MESSAGES; i++)
    {
      g_autofree char *text = (i % 2)
        ? g_strdup_printf ("Answer %u with **bold**, a list:\n\n- one\n- two\n\n```\ncode %u\n```", i, i)
        : g_strdup_printf ("Question number %u?", i);
      parent = hz_store_append_message (store, conv, parent,
                                        (i % 2) ? HZ_ROLE_ASSISTANT : HZ_ROLE_USER,
                                        text, NULL, TRUE, &error);
      g_assert_no_error (error);
    }
  g_assert_true (hz_store_commit (store, &error));
}

typedef struct {
  HzMessageItem *reply;
  guint          tokens;
} Stream;

static gboolean
stream_tick (gpointer data)
{
  Stream *s = data;
  g_autoptr(GString) chunk = g_string_new (NULL);
  for (guint k = 0; k < 5 && s->tokens < REPLY_TOKENS; k++, s->tokens++)
    switch (s->tokens % 500)
      {
      case 0: g_string_append (chunk, "\n\n## Section\n\n"); break;
      case 200: g_string_append (chunk, "\n\n```python\nprint('hi')"); break;
      case 260: g_string_append (chunk, "\n```\n\n"); break;
      default: g_string_append (chunk, (s->tokens % 13) ? " token" : " *word*"); break;
      }
  hz_message_item_append_text (s->reply, chunk->str);
  return s->tokens < REPLY_TOKENS ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

static gboolean
stream_done (gpointer data)
{
  return ((Stream *) data)->tokens >= REPLY_TOKENS;
}

static void
script_stress (HzApplication *app, HzWindow *window, gpointer data)
{
  Probe probe = { g_array_new (FALSE, FALSE, sizeof (gint64)), 0, 0,
                  g_array_new (FALSE, FALSE, sizeof (gint64)), 0 };
  GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (window));
  g_assert_nonnull (clock);
  gulong before_id = g_signal_connect (clock, "before-paint", G_CALLBACK (on_before_paint), &probe);
  gulong after_id = g_signal_connect_after (clock, "after-paint", G_CALLBACK (on_after_paint),
                                            &probe);

  g_assert_cmpuint (g_list_model_get_n_items (hz_window_get_conversations (window)), ==, 1);
  probe.probe_id = g_timeout_add (PROBE_MS, probe_tick, &probe);
  hz_ui_spin (0.2);
  probe_reset (&probe);

  /* Before: read on the main thread (hz_window_select_conversation() still does this). */
  gint64 t0 = g_get_monotonic_time ();
  hz_window_select_conversation (window, 0);
  g_test_message ("opening %u messages on the main thread: %.1f ms", N_MESSAGES,
                  (g_get_monotonic_time () - t0) / 1000.0);
  g_assert_cmpuint (g_list_model_get_n_items (hz_window_get_messages (window)), ==, N_MESSAGES);
  hz_ui_spin (2.0);
  probe_report (&probe, "first 2 s after opening on the main thread (before)");

  /* Away to a new chat, then after: a click, read on a thread, rows put in by chunks. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.new-chat", NULL));
  g_assert_cmpuint (g_list_model_get_n_items (hz_window_get_messages (window)), ==, 0);
  hz_ui_spin (0.5);
  probe_reset (&probe);
  t0 = g_get_monotonic_time ();
  hz_ui_click_conversation (window, 0);
  g_test_message ("click returned after %.1f ms", (g_get_monotonic_time () - t0) / 1000.0);
  g_assert_true (hz_ui_wait_for (all_listed, window, 120));
  g_test_message ("opening %u messages in the background: all listed after %.1f ms",
                  N_MESSAGES, (g_get_monotonic_time () - t0) / 1000.0);
  hz_ui_spin (2.0 - (g_get_monotonic_time () - t0) / 1e6);
  probe_report (&probe, "first 2 s after opening in the background (after)");
  GtkAdjustment *adj = gtk_scrollable_get_vadjustment (GTK_SCROLLABLE (hz_window_get_message_list (window)));
  g_test_message ("scrolled to %.0f of %.0f (page %.0f)", gtk_adjustment_get_value (adj),
                  gtk_adjustment_get_upper (adj), gtk_adjustment_get_page_size (adj));
  /* it opened at its end (and stays there while the rows near it replace their estimated
   * sizes with their real ones) */
  g_assert_true (hz_ui_wait_for (at_end, window, 10));
  guint n_rows = 0, n_built = 0;
  count_rows (GTK_WIDGET (window), &n_rows, &n_built);
  g_test_message ("%u rows made by the list view, %u of them built (near the visible part)",
                  n_rows, n_built);
  g_assert_cmpuint (n_built, >=, 1);

  /* Opening and leaving at once: the read still under way is dropped. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.new-chat", NULL));
  hz_ui_click_conversation (window, 0);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.new-chat", NULL));
  hz_ui_spin (1.0);
  g_assert_cmpint (hz_window_get_conversation_id (window), ==, 0);
  g_assert_cmpuint (g_list_model_get_n_items (hz_window_get_messages (window)), ==, 0);
  hz_ui_click_conversation (window, 0);
  g_assert_true (hz_ui_wait_for (all_listed, window, 120));
  hz_ui_spin (1.0);
  probe_reset (&probe);
  hz_ui_spin (1.0);
  probe_report (&probe, "idle with 2,000 messages");
  g_autofree char *opened = hz_ui_screenshot (GTK_WIDGET (window), "stress-opened");

  /* Scrolling back a page at a time: the rows that come into view are built within a few
   * frames (a page ahead: usually before), then back to the end. */
  GtkWidget *list = GTK_WIDGET (hz_window_get_message_list (window));
  GtkWidget *scroller = gtk_widget_get_ancestor (list, GTK_TYPE_SCROLLED_WINDOW);
  guint seen_unbuilt = 0;
  for (guint page = 0; page < 6; page++)
    {
      gtk_adjustment_set_value (adj, gtk_adjustment_get_value (adj) -
                                     gtk_adjustment_get_page_size (adj));
      hz_ui_spin (0.05);
      seen_unbuilt += count_unbuilt_visible (list, scroller);
      g_assert_true (hz_ui_wait_for (none_unbuilt_visible, list, 10));
    }
  g_test_message ("scrolling back 6 pages: %u rows seen unbuilt 50 ms after a page moved",
                  seen_unbuilt);
  g_autofree char *scrolled = hz_ui_screenshot (GTK_WIDGET (window), "stress-scrolled");
  gtk_adjustment_set_value (adj, gtk_adjustment_get_upper (adj));
  g_assert_true (hz_ui_wait_for (at_end, window, 10));

  /* A reply streaming in, shown as the app shows one (streaming item at the end). */
  GListModel *messages = hz_window_get_messages (window);
  g_autoptr(HzMessageItem) reply = g_list_model_get_item (messages, N_MESSAGES - 1);
  hz_message_item_set_text (reply, "");
  hz_message_item_set_streaming (reply, TRUE);
  Stream stream = { reply, 0 };
  t0 = g_get_monotonic_time ();
  double cpu0 = cpu_seconds ();
  guint stream_id = g_timeout_add (2, stream_tick, &stream);
  g_assert_true (hz_ui_wait_for (stream_done, &stream, 50));
  g_test_message ("streamed %u tokens (%zu bytes) in %.1f s, %.1f s of CPU time",
                  stream.tokens, strlen (hz_message_item_get_text (reply)),
                  (g_get_monotonic_time () - t0) / 1e6, cpu_seconds () - cpu0);
  probe_report (&probe, "streaming a 20,000-token reply");
  hz_message_item_set_streaming (reply, FALSE);
  hz_ui_spin (0.5);
  g_source_remove (probe.probe_id);
  g_signal_handler_disconnect (clock, before_id);
  g_signal_handler_disconnect (clock, after_id);
  (void) stream_id;
  print_load ();
  g_autofree char *shot = hz_ui_screenshot (GTK_WIDGET (window), "stress");
  g_array_unref (probe.lateness_us);
  g_array_unref (probe.frame_us);
}

static void
test_stress (void)
{
  fill_store ();
  hz_ui_run_app (NULL, script_stress, NULL);
}

int
main (int argc, char *argv[])
{
  hz_ui_test_init ();
  gtk_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ui/stress/2000-messages-20000-token-reply", test_stress);
  int ret = g_test_run ();
  hz_ui_test_cleanup ();
  return ret;
}
