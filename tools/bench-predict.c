/* tools/bench-predict.c — the model manager's speed prediction against measured replies.
 *
 *   bench-predict [-n TOKENS] [-r RUNS] [-t THREADS] [--bandwidth B] CALIBRATION.gguf
 *                 MODEL.gguf...
 *
 * Measures the memory read speed B (hz_measure_read_bandwidth, as the model manager does;
 * or --bandwidth, bytes/s), then generates TOKENS tokens (default 128) with each model
 * from the prompt "Once upon a time", sampled as the app's defaults do (temperature 0.7,
 * top-p 0.9) through hz_context_generate with a token callback, as the app's engine worker
 * does: the median over RUNS runs (default 3) of the decode rate is "measured". The first
 * model calibrates: its measured rate gives the per-token overhead t0
 * (hz_speed_overhead_from_measurement). For every model the table shows the bytes read per
 * token (HzModelInfo.active_bytes), the memory bound B / bytes (what the manager predicted
 * before issue 20), the prediction 1 / (t0 + bytes / B) (hz_speed_predict, what it
 * predicts now for a file of the calibration model's shape; for another shape it shows
 * the bound, as the manager does) and the measured rate, with the ratio prediction /
 * measured. Not a test:
 * timings depend on the machine and its load. tools/bench-predict.sh runs it on the
 * stories-distill files.
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>

#include "hanzo/engine.h"
#include "hz-model-info.h"
#include "membw.h"

static gboolean
count_token (HzToken token, const char *text, gpointer data)
{
  (*(guint *) data)++;
  return TRUE;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

/* Median decode tokens/s of `runs` generations of `n` tokens; 0 with `error` set. */
static double
measure (const char *path, guint n, guint runs, guint threads, GError **error)
{
  HzModelParams mp;
  hz_model_params_init (&mp);
  mp.n_threads = threads;
  g_autoptr (HzModel) model = hz_model_load (path, &mp, error);
  if (model == NULL)
    return 0;
  HzContextParams cp;
  hz_context_params_init (&cp);
  g_autoptr (HzContext) ctx = hz_context_new (model, &cp, error);
  if (ctx == NULL)
    return 0;
  gsize n_prompt = 0;
  g_autofree HzToken *ids = hz_model_tokenize (model, "Once upon a time", -1, TRUE, FALSE,
                                               &n_prompt);
  HzGenerateParams gp;
  hz_generate_params_init (&gp);
  gp.sampler.temperature = 0.7f;
  gp.sampler.top_p = 0.9f;
  gp.n_predict = (int32_t) n;
  gp.ignore_eog = TRUE;
  g_autofree double *rates = g_new0 (double, runs);
  for (guint r = 0; r < runs; r++)
    {
      HzGenerateStats st;
      guint seen = 0;
      gp.sampler.seed = 42 + r;
      hz_context_truncate (ctx, 0);
      g_autofree char *text = hz_context_generate (ctx, ids, n_prompt, &gp, count_token, &seen,
                                                   NULL, NULL, &st, error);
      if (text == NULL)
        return 0;
      rates[r] = st.gen_seconds > 0 ? st.n_generated / st.gen_seconds : 0;
    }
  qsort (rates, runs, sizeof *rates, cmp_double);
  return rates[runs / 2];
}

int
main (int argc, char **argv)
{
  gint n = 128, runs = 3, threads = 0;
  double bandwidth = 0;
  g_autoptr (GError) error = NULL;
  const GOptionEntry entries[] = {
    { "n-predict", 'n', 0, G_OPTION_ARG_INT, &n, "Tokens per run (default 128)", "N" },
    { "runs", 'r', 0, G_OPTION_ARG_INT, &runs, "Runs per model; the median counts (default 3)",
      "R" },
    { "threads", 't', 0, G_OPTION_ARG_INT, &threads, "CPU threads (default 0: all cores)", "N" },
    { "bandwidth", 0, 0, G_OPTION_ARG_DOUBLE, &bandwidth,
      "Memory read speed in bytes/s (default: measured)", "B" },
    { NULL }
  };
  g_autoptr (GOptionContext) octx =
    g_option_context_new ("CALIBRATION.gguf MODEL.gguf... — predicted vs measured reply speed");
  g_option_context_add_main_entries (octx, entries, NULL);
  if (!g_option_context_parse (octx, &argc, &argv, &error) || argc < 2 || n < 8 || runs < 1 ||
      threads < 0)
    {
      fprintf (stderr, "bench-predict: %s\n",
               error ? error->message : "need a calibration model, -n >= 8, -r >= 1");
      return 2;
    }
  if (bandwidth <= 0 && (bandwidth = hz_measure_read_bandwidth (0, 0, 1.0, &error)) <= 0)
    {
      fprintf (stderr, "bench-predict: %s\n", error->message);
      return 1;
    }
  printf ("memory read speed B = %.1f GB/s; %d tokens per run, median of %d runs\n\n",
          bandwidth / 1e9, n, runs);
  printf ("| model | bytes/token | B / bytes (before) | 1 / (t0 + bytes / B) (now) | measured "
          "| now / measured |\n|---|---:|---:|---:|---:|---:|\n");
  HzSpeedModel speed = { bandwidth, 0 };
  g_autoptr (HzModelInfo) calibration = NULL;
  for (int i = 1; i < argc; i++)
    {
      g_autoptr (HzModelInfo) info = hz_model_info_read (argv[i], &error);
      double measured = info ? measure (argv[i], n, runs, threads, &error) : 0;
      if (measured <= 0)
        {
          fprintf (stderr, "bench-predict: %s: %s\n", argv[i], error->message);
          return 1;
        }
      if (i == 1)
        speed.overhead_s = hz_speed_overhead_from_measurement (info->active_bytes, bandwidth,
                                                               measured);
      const HzSpeedModel bound = { bandwidth, 0 };
      const gboolean same = i == 1 || hz_model_info_same_shape (info, calibration);
      double now = hz_speed_predict (same ? &speed : &bound, info->active_bytes);
      g_autofree char *base = g_path_get_basename (argv[i]);
      printf ("| %s%s | %" G_GUINT64_FORMAT " | %.0f | %.0f%s | %.0f | %.2f |\n", base,
              i == 1 ? " (calibration)" : "", info->active_bytes,
              hz_speed_predict (&bound, info->active_bytes), now,
              same ? "" : " (other shape: the bound)", measured, now / measured);
      if (i == 1)
        calibration = g_steal_pointer (&info);
      fflush (stdout);
    }
  printf ("\nt0 = %.3f ms per token besides reading the weights (from the first model)\n",
          speed.overhead_s * 1e3);
  return 0;
}
