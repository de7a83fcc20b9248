/* tests/redactor/bench-redact-gate.c — not a test: throughput of the redaction gate
 * (hz_redact_gate_run_full(), rule-based) over a store of N chat messages, and how long a
 * second connection (the app's main thread appending messages) waits for its writes while
 * the gate runs on its own thread and connection. Prints a table.
 *
 *   bench-redact-gate [N ...]        (default: 1000 5000)
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>

#include "hanzo/redact-gate.h"

static const char *const texts[] = {
  "Hi, I am Mara Quinley, mail me at mara.quinley@example.org about the trip to Lisbon.",
  "Sure! Here is a plan for the trip. Day one: the old town, then dinner near the river.",
  "Please tell Ines Okafor (ines.okafor@example.net) that the meeting moved to 3pm.",
  "Call Tobias Wendrik on +44 20 7946 0958 and ask about the invoice 2024-117.",
  "The function returns a list of tuples; sort them by the second element with key=.",
};

typedef struct {
  const char       *path;
  const HzRedactor *redactor;
  gint              n;
  double            seconds;
  gint              done;   /* atomic */
} GateRun;

static gpointer
gate_thread (gpointer data)
{
  GateRun *g = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (HzStore) store = hz_store_open (g->path, &error);
  g_assert_no_error (error);
  const gint64 t0 = g_get_monotonic_time ();
  g->n = hz_redact_gate_run_full (g->redactor, store, NULL, &error);
  g->seconds = (g_get_monotonic_time () - t0) / 1e6;
  g_assert_no_error (error);
  g_atomic_int_set (&g->done, 1);
  return NULL;
}

static int
cmp_double (const void *a, const void *b)
{
  const double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  HzRedactor *r = hz_redactor_new (&error);
  g_assert_no_error (error);
  const char *def[] = { "1000", "5000" };
  const int nn = argc > 1 ? argc - 1 : 2;
  printf ("| messages | gate s | messages/s | ms/message | writes during gate | write wait p50 ms | p99 ms | max ms |\n");
  printf ("|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int k = 0; k < nn; k++)
    {
      const int n = atoi (argc > 1 ? argv[k + 1] : def[k]);
      g_autofree char *dir = g_dir_make_tmp ("hz-bench-gate-XXXXXX", &error);
      g_autofree char *path = g_build_filename (dir, "hanzo.db", NULL);
      HzStore *main_conn = hz_store_open (path, &error);
      g_assert_no_error (error);
      g_assert_true (hz_store_begin (main_conn, &error));
      gint64 conv = 0;
      for (int i = 0; i < n; i++)
        {
          if (i % 20 == 0)   /* conversations of 20 messages */
            conv = hz_store_create_conversation (main_conn, "b", NULL, NULL, &error);
          hz_store_append_message (main_conn, conv, 0, i % 2 ? HZ_ROLE_ASSISTANT : HZ_ROLE_USER,
                                   texts[i % G_N_ELEMENTS (texts)], NULL, TRUE, &error);
          g_assert_no_error (error);
        }
      g_assert_true (hz_store_commit (main_conn, &error));
      GateRun g = { path, r, 0, 0, 0 };
      GThread *t = g_thread_new ("gate", gate_thread, &g);
      /* the "main thread": one short write every 20 ms while the gate runs */
      g_autoptr (GArray) waits = g_array_new (FALSE, FALSE, sizeof (double));
      const gint64 extra = hz_store_create_conversation (main_conn, "live", NULL, NULL, &error);
      while (!g_atomic_int_get (&g.done))
        {
          const gint64 t0 = g_get_monotonic_time ();
          hz_store_append_message (main_conn, extra, 0, HZ_ROLE_USER, "typing", NULL, FALSE, &error);
          g_assert_no_error (error);
          const double ms = (g_get_monotonic_time () - t0) / 1e3;
          g_array_append_val (waits, ms);
          g_usleep (20000);
        }
      g_thread_join (t);
      g_assert_cmpint (g.n, ==, n);
      double p50 = 0, p99 = 0, mx = 0;
      if (waits->len)
        {
          qsort (waits->data, waits->len, sizeof (double), cmp_double);
          p50 = g_array_index (waits, double, waits->len / 2);
          p99 = g_array_index (waits, double, MIN (waits->len - 1, waits->len * 99 / 100));
          mx = g_array_index (waits, double, waits->len - 1);
        }
      printf ("| %d | %.2f | %.0f | %.3f | %u | %.2f | %.2f | %.2f |\n", n, g.seconds,
              n / g.seconds, 1e3 * g.seconds / n, waits->len, p50, p99, mx);
      fflush (stdout);
      hz_store_close (main_conn);
      g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", dir);
      if (system (cmd) != 0)
        g_printerr ("could not remove %s\n", dir);
    }
  hz_redactor_free (r);
  return 0;
}
