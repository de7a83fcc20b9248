/* tools/hanzo-bench-redact.c — the measuring program behind tools/bench-redact.sh: redactor
 * throughput over the "text" fields of redactor-eval JSONL files (TRIALS trials, each
 * repeating the texts until at least 0.5 s have passed; best and median trial) and the
 * latency of one 500-word chat message (median and p99 of 2000 runs), printed as a table
 * with the goals of issue 6. Single-threaded. Both wall-clock and thread CPU time are
 * reported: on a shared, loaded machine the CPU-time figure is the one that measures "one
 * core", and the best trial the one least disturbed by other processes (as timeit does). */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "hanzo/redact.h"

/* CPU time of the calling thread in microseconds. */
static gint64
cpu_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return (gint64) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

int
main (int argc, char **argv)
{
  /* --rounds N: exactly N throughput rounds and no latency part (for perf stat) */
  guint fixed_rounds = 0;
  if (argc > 2 && strcmp (argv[1], "--rounds") == 0)
    {
      fixed_rounds = (guint) g_ascii_strtoull (argv[2], NULL, 10);
      argv += 2;
      argc -= 2;
    }
  if (argc < 2)
    {
      fprintf (stderr, "usage: %s [--rounds N] FILE.jsonl...\n", argv[0]);
      return 2;
    }
  g_autoptr (GError) err = NULL;
  HzRedactor *r = hz_redactor_new (&err);
  if (!r)
    {
      fprintf (stderr, "%s\n", err->message);
      return 1;
    }
  GPtrArray *texts = g_ptr_array_new_with_free_func (g_free);
  gsize bytes = 0;
  for (int a = 1; a < argc; a++)
    {
      g_autofree char *data = NULL;
      if (!g_file_get_contents (argv[a], &data, NULL, &err))
        {
          fprintf (stderr, "%s\n", err->message);
          return 1;
        }
      g_auto (GStrv) lines = g_strsplit (data, "\n", -1);
      for (char **l = lines; *l; l++)
        {
          if (!**l)
            continue;
          g_autoptr (JsonParser) p = json_parser_new ();
          if (!json_parser_load_from_data (p, *l, -1, NULL))
            continue;
          const char *t = json_object_get_string_member_with_default (json_node_get_object (json_parser_get_root (p)), "text", "");
          bytes += strlen (t);
          g_ptr_array_add (texts, g_strdup (t));
        }
    }
  /* throughput: MB/s of CPU time and of wall time per trial */
  enum { TRIALS = 5 };
  double cpu_rate[TRIALS], wall_rate[TRIALS];
  guint rounds = 0;
  for (int trial = 0; trial < (fixed_rounds ? 1 : TRIALS); trial++)
    {
      gint64 t0 = g_get_monotonic_time (), c0 = cpu_us ();
      gsize done = 0;
      guint n = 0;
      while (fixed_rounds ? n < fixed_rounds : (g_get_monotonic_time () - t0 < 500000 || n == 0))
        {
          for (guint i = 0; i < texts->len; i++)
            {
              HzRedaction *res = hz_redactor_analyze (r, texts->pdata[i], -1, 0, NULL);
              hz_redaction_free (res);
            }
          done += bytes;
          n++;
        }
      rounds += n;
      cpu_rate[trial] = done / ((cpu_us () - c0) / 1e6) / 1e6;
      wall_rate[trial] = done / ((g_get_monotonic_time () - t0) / 1e6) / 1e6;
    }
  if (fixed_rounds)
    {
      printf ("throughput: %.1f MB/s of CPU time, %.1f MB/s wall (%u texts, %.2f MB, %u rounds, one thread)\n",
              cpu_rate[0], wall_rate[0], texts->len, bytes / 1e6, rounds);
      return 0;
    }
  qsort (cpu_rate, TRIALS, sizeof cpu_rate[0], cmp_double);
  qsort (wall_rate, TRIALS, sizeof wall_rate[0], cmp_double);

  /* latency of a 500-word message built from the evaluation texts */
  GString *msg = g_string_new (NULL);
  guint words = 0;
  for (guint i = 0; words < 500; i = (i + 1) % texts->len)
    {
      g_auto (GStrv) w = g_strsplit (texts->pdata[i], " ", -1);
      for (char **p = w; *p && words < 500; p++, words++)
        {
          g_string_append (msg, *p);
          g_string_append_c (msg, ' ');
        }
    }
  enum { N = 2000 };
  static double lat[N], clat[N];
  for (int i = 0; i < N; i++)
    {
      gint64 s = g_get_monotonic_time (), cs = cpu_us ();
      HzRedaction *res = hz_redactor_analyze (r, msg->str, msg->len, 0, NULL);
      HzScrubber *sc = hz_scrubber_new (HZ_SCRUB_NUMBERED, 0);
      g_free (hz_scrubber_scrub (sc, res));
      hz_scrubber_free (sc);
      hz_redaction_free (res);
      lat[i] = (g_get_monotonic_time () - s) / 1000.0;
      clat[i] = (cpu_us () - cs) / 1000.0;
    }
  qsort (lat, N, sizeof lat[0], cmp_double);
  qsort (clat, N, sizeof clat[0], cmp_double);
  printf ("| measure (one thread) | value | goal | met |\n|---|---:|---|---|\n");
  printf ("| throughput, CPU time, best of %d trials | %.1f MB/s | >= 20 MB/s | %s |\n", TRIALS,
          cpu_rate[TRIALS - 1], cpu_rate[TRIALS - 1] >= 20 ? "yes" : "no");
  printf ("| throughput, CPU time, median trial | %.1f MB/s | | |\n", cpu_rate[TRIALS / 2]);
  printf ("| throughput, wall time, best / median trial | %.1f / %.1f MB/s | | |\n",
          wall_rate[TRIALS - 1], wall_rate[TRIALS / 2]);
  printf ("| latency, 500-word message (%zu bytes), analyze + scrub, median wall | %.3f ms | < 5 ms | %s |\n",
          msg->len, lat[N / 2], lat[N / 2] < 5 ? "yes" : "no");
  printf ("| latency, p99 wall | %.3f ms | | |\n", lat[N * 99 / 100]);
  printf ("| latency, median / p99 CPU time | %.3f / %.3f ms | | |\n", clat[N / 2], clat[N * 99 / 100]);
  printf ("\n%u texts, %.2f MB per round, %u rounds\n", texts->len, bytes / 1e6, rounds);
  g_string_free (msg, TRUE);
  g_ptr_array_free (texts, TRUE);
  hz_redactor_free (r);
  return 0;
}
