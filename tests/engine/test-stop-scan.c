/* tests/engine/test-stop-scan.c — stop strings over streamed text (engine/stop-scan.c). */
#include <string.h>

#include "stop-scan.h"

/* Feed `pieces` one by one; return everything emitted and whether a stop string hit. */
static char *
stream (const char *const *stops, const char *const *pieces, gboolean *hit_out)
{
  g_autoptr (HzStopScan) s = hz_stop_scan_new (stops);
  GString *out = g_string_new (NULL);
  gboolean hit = FALSE;
  for (gsize i = 0; pieces[i] && !hit; i++)
    {
      const gboolean last = pieces[i + 1] == NULL;
      g_string_append (out, hz_stop_scan_push (s, pieces[i], last, &hit));
    }
  *hit_out = hit;
  return g_string_free (out, FALSE);
}

static void
test_basic (void)
{
  const char *stops[] = { "</s>", "\nUser:", NULL };
  gboolean hit;
  /* the stop string split over three pieces: nothing of it is emitted */
  const char *p1[] = { "Hello <", "/", "s> world", NULL };
  g_autofree char *a = stream (stops, p1, &hit);
  g_assert_true (hit);
  g_assert_cmpstr (a, ==, "Hello ");
  /* a partial match that turns out not to be one is released unchanged */
  const char *p2[] = { "a <", "/b> c\nUs", "ed", NULL };
  g_autofree char *b = stream (stops, p2, &hit);
  g_assert_false (hit);
  g_assert_cmpstr (b, ==, "a </b> c\nUsed");
  /* the earliest of several stop strings wins */
  const char *p3[] = { "x\nUser: y </s>", NULL };
  g_autofree char *c = stream (stops, p3, &hit);
  g_assert_true (hit);
  g_assert_cmpstr (c, ==, "x");
}

static void
test_hold_back_and_flush (void)
{
  const char *stops[] = { "STOP", NULL };
  g_autoptr (HzStopScan) s = hz_stop_scan_new (stops);
  gboolean hit = TRUE;
  g_assert_cmpstr (hz_stop_scan_push (s, "abcST", FALSE, &hit), ==, "abc");
  g_assert_false (hit);
  g_assert_cmpstr (hz_stop_scan_push (s, "O", FALSE, &hit), ==, "");
  /* cut off (cancellation): the held-back text is still the reply's */
  g_assert_cmpstr (hz_stop_scan_flush (s), ==, "STO");
  g_assert_cmpstr (hz_stop_scan_flush (s), ==, "");
  /* final push releases everything pending */
  g_assert_cmpstr (hz_stop_scan_push (s, "xS", TRUE, &hit), ==, "xS");
}

static void
test_no_stops (void)
{
  const char *empty[] = { "", NULL };
  g_autoptr (HzStopScan) a = hz_stop_scan_new (NULL);
  g_autoptr (HzStopScan) b = hz_stop_scan_new (empty);
  gboolean hit = TRUE;
  g_assert_cmpstr (hz_stop_scan_push (a, "text", FALSE, &hit), ==, "text");
  g_assert_false (hit);
  g_assert_cmpstr (hz_stop_scan_push (b, "text", FALSE, NULL), ==, "text");
  g_assert_cmpstr (hz_stop_scan_push (b, NULL, FALSE, NULL), ==, "");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/stop-scan/basic", test_basic);
  g_test_add_func ("/stop-scan/hold-back-and-flush", test_hold_back_and_flush);
  g_test_add_func ("/stop-scan/no-stops", test_no_stops);
  return g_test_run ();
}
