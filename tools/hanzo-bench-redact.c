/* tools/hanzo-bench-redact.c — the measuring program behind tools/bench-redact.sh: redactor
 * throughput over the "text" fields of redactor-eval JSONL files (repeated until at least
 * 2 s have passed) and the latency of one 500-word chat message (median and p99 of 2000
 * runs). Single-threaded. */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

#include "hanzo/redact.h"

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

int
main (int argc, char **argv)
{
  if (argc < 2)
    {
      fprintf (stderr, "usage: %s FILE.jsonl...\n", argv[0]);
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
  /* throughput */
  gint64 t0 = g_get_monotonic_time ();
  gsize done = 0;
  guint rounds = 0;
  while (g_get_monotonic_time () - t0 < 2000000 || rounds == 0)
    {
      for (guint i = 0; i < texts->len; i++)
        {
          HzRedaction *res = hz_redactor_analyze (r, texts->pdata[i], -1, 0, NULL);
          hz_redaction_free (res);
        }
      done += bytes;
      rounds++;
    }
  double secs = (g_get_monotonic_time () - t0) / 1e6;
  printf ("throughput: %.1f MB/s (%u texts, %.2f MB, %u rounds, one thread)\n",
          done / secs / 1e6, texts->len, bytes / 1e6, rounds);

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
  static double lat[N];
  for (int i = 0; i < N; i++)
    {
      gint64 s = g_get_monotonic_time ();
      HzRedaction *res = hz_redactor_analyze (r, msg->str, msg->len, 0, NULL);
      HzScrubber *sc = hz_scrubber_new (HZ_SCRUB_NUMBERED, 0);
      g_free (hz_scrubber_scrub (sc, res));
      hz_scrubber_free (sc);
      hz_redaction_free (res);
      lat[i] = (g_get_monotonic_time () - s) / 1000.0;
    }
  qsort (lat, N, sizeof lat[0], cmp_double);
  printf ("latency, 500-word message (%zu bytes), analyze + scrub: median %.3f ms, p99 %.3f ms\n",
          msg->len, lat[N / 2], lat[N * 99 / 100]);
  g_string_free (msg, TRUE);
  g_ptr_array_free (texts, TRUE);
  hz_redactor_free (r);
  return 0;
}
