/* tools/hanzo-bench.c — `hanzo bench`: prompt-processing and generation speed.
 *
 *   hanzo bench -m MODEL [-p 512] [-n 128] [-r 5] [-t THREADS[,THREADS...]] [-b BATCH]
 *
 * Method (as llama.cpp's llama-bench): pp<P> evaluates P random tokens from an empty KV
 * cache in batches of -b (default 512) tokens; tg<N> decodes N random tokens one at a time
 * from an empty cache. Sampling is not timed. One warm-up run precedes the repeats. Prints
 * a Markdown table like llama-bench's; t/s is the median over the repeats ± the sample
 * standard deviation. The roofline columns: B, the memory read bandwidth (measured, or
 * --bandwidth), R = B / the weight bytes one token reads, and the share of R that tg
 * reaches. When those weights fit in the last-level cache (hz_last_level_cache_bytes) they
 * are read from the cache, R is no bound, and the share is shown as "in cache" with a note.
 * Exit status: 0 ok, 1 runtime error, 2 usage error.
 */
/* Largest -p + -n (one context holds both; 1 Mi tokens is far past any model here). */
#define HZ_BENCH_MAX_TOKENS (1 << 20)

#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hanzo-cli-util.h"
#include "hanzo-cmd.h"
#include "hanzo-gen-common.h"
#include "gguf.h"
#include "membw.h"

/* Bytes of the weights one decode step reads (see the header comment); FALSE when `path`
 * is not a GGUF file (e.g. a safetensors folder quantized at load). */
static gboolean
decode_weight_bytes (const char *path, guint64 *bytes)
{
  g_autoptr (HzGguf) g = hz_gguf_open (path, NULL);
  if (g == NULL)
    return FALSE;
  guint64 sum = 0;
  gboolean have_output = hz_gguf_find_tensor (g, "output.weight") != NULL;
  /* mixture of experts: a token reads expert_used_count of the ne[2] matrices of each
   * 3-D expert tensor */
  g_autofree char *arch = hz_gguf_get_str (g, "general.architecture");
  g_autofree char *used_key = g_strdup_printf ("%s.expert_used_count", arch ? arch : "");
  guint32 n_used = 0;
  if (!hz_gguf_get_u32 (g, used_key, &n_used))
    n_used = 0;
  for (int64_t i = 0; i < hz_gguf_n_tensors (g); i++)
    {
      const HzGgufTensor *t = hz_gguf_tensor (g, i);
      g_autofree char *name = g_strndup (t->name.ptr, t->name.len);
      if (g_str_has_prefix (name, "blk.") && n_used > 0 && t->ne[2] > n_used)
        sum += t->n_bytes / (guint64) t->ne[2] * n_used;
      else if (g_str_has_prefix (name, "blk.") || g_str_equal (name, "output.weight") ||
               g_str_equal (name, "output_norm.weight"))
        sum += t->n_bytes;
      else if (g_str_equal (name, "token_embd.weight"))
        {
          const guint64 rows = (guint64) t->ne[1] * t->ne[2] * t->ne[3];
          sum += have_output || rows == 0 ? t->n_bytes / MAX (rows, 1) : t->n_bytes;
        }
    }
  *bytes = sum;
  return TRUE;
}

static int
cmp_double (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

/* Median and sample standard deviation of n values (sorted in place). */
static void
summarize (double *v, int n, double *median, double *stddev)
{
  double mean = 0, ss = 0;
  qsort (v, n, sizeof *v, (int (*) (const void *, const void *)) cmp_double);
  *median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  for (int i = 0; i < n; i++)
    mean += v[i] / n;
  for (int i = 0; i < n; i++)
    ss += (v[i] - mean) * (v[i] - mean);
  *stddev = n > 1 ? sqrt (ss / (n - 1)) : 0.0;
}

/* Seconds to evaluate `n` tokens as one prompt (batch) or one by one (decode). */
static gboolean
run_once (HzContext *ctx, const HzToken *toks, int n, gboolean decode, double *seconds,
          GError **error)
{
  hz_context_truncate (ctx, 0);
  gint64 t0 = g_get_monotonic_time ();
  if (decode)
    {
      for (int i = 0; i < n; i++)
        if (!hz_context_eval (ctx, &toks[i], 1, FALSE, NULL, error))
          return FALSE;
    }
  else if (!hz_context_eval (ctx, toks, n, FALSE, NULL, error))
    return FALSE;
  *seconds = (g_get_monotonic_time () - t0) / 1e6;
  return TRUE;
}

static char *
human (double v, const char *const *units, double step)
{
  int u = 0;
  while (v >= step && units[u + 1])
    {
      v /= step;
      u++;
    }
  return g_strdup_printf ("%.2f %s", v, units[u]);
}

static gboolean
parse_list (const char *s, int min, GArray *out)
{
  g_auto (GStrv) parts = g_strsplit (s, ",", -1);
  for (int i = 0; parts[i]; i++)
    {
      gint64 v;
      if (!g_ascii_string_to_signed (parts[i], 10, min, HZ_MAX_THREADS, &v, NULL))
        return FALSE;
      int iv = (int) v;
      g_array_append_val (out, iv);
    }
  return out->len > 0;
}

int
hz_cmd_bench (int argc, char **argv)
{
  HzGenOpts o;
  g_autofree char *threads_s = NULL;
  int n_prompt = 512, n_gen = 128, reps = 5;
  double bandwidth_gbps = 0;
  g_autoptr (GError) error = NULL;

  hz_gen_opts_init (&o, 0);
  const GOptionEntry entries[] = {
    { "n-prompt", 'p', 0, G_OPTION_ARG_INT, &n_prompt, "Prompt tokens (0: skip pp)", "N" },
    { "n-gen", 'n', 0, G_OPTION_ARG_INT, &n_gen, "Generated tokens (0: skip tg)", "N" },
    { "repetitions", 'r', 0, G_OPTION_ARG_INT, &reps, "Repeats of each test (default 5)", "N" },
    { "threads-list", 't', 0, G_OPTION_ARG_STRING, &threads_s,
      "Thread counts 1..1024, comma-separated (default: all cores)", "N[,N...]" },
    { "bandwidth", 0, 0, G_OPTION_ARG_DOUBLE, &bandwidth_gbps,
      "Memory read bandwidth in GB/s for the roofline (default: measured)", "GBPS" },
    { NULL }
  };
  g_autoptr (GOptionContext) octx = g_option_context_new ("— measure prompt and generation speed");
  g_option_context_add_main_entries (octx, entries, NULL);
  hz_gen_opts_add (octx, &o, HZ_GEN_OPT_NO_THREADS);   /* -m, -c, -b */
  if (!g_option_context_parse (octx, &argc, &argv, &error))
    {
      hz_cli_print_error ("bench", error->message);
      hz_gen_opts_clear (&o);
      return 2;
    }
  g_autoptr (GArray) threads = g_array_new (FALSE, FALSE, sizeof (int));
  if (o.model == NULL || argc != 1 || n_prompt < 0 || n_gen < 0 || reps < 1 ||
      (n_prompt == 0 && n_gen == 0) || !(bandwidth_gbps >= 0 && bandwidth_gbps < 1e6) ||
      (threads_s && !parse_list (threads_s, 1, threads)))
    {
      fprintf (stderr, "hanzo bench: need -m MODEL, -p >= 0, -n >= 0 (not both 0), -r >= 1, "
                       "-t N[,N...] (1..1024) and --bandwidth >= 0\nUsage: hanzo bench -m MODEL [-p 512] "
                       "[-n 128] [-r 5] [-t THREADS] [--bandwidth GBPS]\n");
      hz_gen_opts_clear (&o);
      return 2;
    }
  if (!hz_gen_opts_check (&o, "bench", HZ_GEN_OPT_NO_THREADS))
    {
      hz_gen_opts_clear (&o);
      return 2;
    }
  /* the context holds the prompt and the generated tokens: -c must leave room for them
   * (unset: the context grows to -p + -n) */
  if (o.ctx_size != HZ_GEN_UNSET && (gint64) o.ctx_size < (gint64) n_prompt + n_gen)
    {
      fprintf (stderr, "hanzo bench: --ctx-size %d is smaller than -p + -n = %" G_GINT64_FORMAT
               "; raise -c or leave it out\n", o.ctx_size, (gint64) n_prompt + n_gen);
      hz_gen_opts_clear (&o);
      return 2;
    }
  /* the test runs in one context of -p + -n tokens (like llama-bench, not limited to the
   * model's training context); refuse absurd sizes before allocating anything */
  if ((gint64) n_prompt + n_gen > HZ_BENCH_MAX_TOKENS)
    {
      fprintf (stderr, "hanzo bench: -p + -n = %" G_GINT64_FORMAT " tokens is more than the "
               "%d a benchmark context may hold\n", (gint64) n_prompt + n_gen,
               HZ_BENCH_MAX_TOKENS);
      hz_gen_opts_clear (&o);
      return 2;
    }
  if (threads->len == 0)
    {
      int all = (int) g_get_num_processors ();
      g_array_append_val (threads, all);
    }

  int max_threads = 1;
  for (guint i = 0; i < threads->len; i++)
    max_threads = MAX (max_threads, g_array_index (threads, int, i));
  o.threads = max_threads;
  g_autoptr (HzModel) model = hz_gen_opts_load (&o, "bench");
  if (model == NULL)
    {
      hz_gen_opts_clear (&o);
      return 1;
    }

  const int n_vocab = hz_model_n_vocab (model);
  const int n_tok = MAX (n_prompt, n_gen);
  g_autofree HzToken *toks = g_new (HzToken, n_tok);
  g_autoptr (GRand) rng = g_rand_new_with_seed (42);
  for (int i = 0; i < n_tok; i++)
    toks[i] = g_rand_int_range (rng, 0, n_vocab);

  static const char *const size_units[] = { "B", "KiB", "MiB", "GiB", "TiB", NULL };
  static const char *const count_units[] = { "", "K", "M", "B", "T", NULL };
  g_autofree char *size = human ((double) hz_model_weight_bytes (model), size_units, 1024);
  g_autofree char *params = human ((double) hz_model_n_params (model), count_units, 1000);
  g_autofree char *name = g_strdup_printf ("%s %s", hz_model_arch (model), hz_model_type_name (model));

  guint64 tok_bytes = 0;
  const gboolean have_bytes = decode_weight_bytes (hz_model_path (model), &tok_bytes);
  if (have_bytes)
    {
      g_autofree char *tb = human ((double) tok_bytes, size_units, 1024);
      printf ("weight bytes read per token: %" G_GUINT64_FORMAT " (%s)\n", tok_bytes, tb);
    }
  else
    printf ("weight bytes read per token: unknown (not a GGUF file)\n");
  /* weights that fit in the last-level cache are read from it, not from memory, after
   * the first token: the memory roofline is no bound for them (> 100 % of it is common) */
  const guint64 llc = hz_last_level_cache_bytes ();
  const gboolean in_cache = have_bytes && llc > 0 && tok_bytes <= llc;
  if (in_cache)
    {
      g_autofree char *ls = human ((double) llc, size_units, 1024);
      printf ("note: they fit in the last-level cache (%s), so decoding is not bound by memory "
              "bandwidth; \"of roof\" says \"in cache\" instead of a percentage\n", ls);
    }
  printf ("\n| %-30s | %10s | %10s | %-7s | %7s | %10s | %20s | %9s | %12s | %8s |\n", "model",
          "size", "params", "backend", "threads", "test", "t/s", "B GB/s", "roofline t/s",
          "of roof");
  printf ("| ------------------------------ | ---------: | ---------: | ------- | ------: | "
          "---------: | -------------------: | --------: | -----------: | -------: |\n");
  fflush (stdout);

  for (guint ti = 0; ti < threads->len; ti++)
    {
      HzContextParams cp;
      hz_gen_opts_apply (&o, NULL, &cp);
      cp.n_threads = (guint) g_array_index (threads, int, ti);
      cp.n_ctx = MAX ((guint) ((gint64) n_prompt + n_gen), cp.n_ctx);
      g_autoptr (HzContext) ctx = hz_context_new (model, &cp, &error);
      if (ctx == NULL || !hz_gen_opts_set_lora (&o, "bench", model, ctx))
        {
          if (ctx == NULL)
            hz_cli_print_error ("bench", error->message);
          hz_gen_opts_clear (&o);
          return 1;
        }
      /* memory read bandwidth with this many threads (bytes/s) and R = B / bytes */
      double bw = bandwidth_gbps * 1e9;
      if (bw == 0 && have_bytes && n_gen > 0)
        {
          bw = hz_measure_read_bandwidth (cp.n_threads, 0, 0.5, &error);
          if (bw == 0)
            {
              fprintf (stderr, "hanzo bench: warning: %s; no roofline\n", error->message);
              g_clear_error (&error);
            }
        }
      const double roof = bw > 0 && have_bytes && tok_bytes > 0 ? bw / (double) tok_bytes : 0;
      for (int test = 0; test < 2; test++)
        {
          const gboolean decode = test == 1;
          const int n = decode ? n_gen : n_prompt;
          if (n == 0)
            continue;
          g_autofree double *tps = g_new (double, reps);
          double secs;
          /* warm-up: caches, page faults, thread start */
          if (!run_once (ctx, toks, decode ? 1 : n, decode, &secs, &error))
            goto fail;
          for (int r = 0; r < reps; r++)
            {
              if (!run_once (ctx, toks, n, decode, &secs, &error))
                goto fail;
              tps[r] = n / secs;
            }
          double med, sd;
          summarize (tps, reps, &med, &sd);
          g_autofree char *label = g_strdup_printf ("%s%d", decode ? "tg" : "pp", n);
          g_autofree char *val = g_strdup_printf ("%.2f ± %.2f", med, sd);
          g_autofree char *bw_s = bw > 0 ? g_strdup_printf ("%.1f", bw / 1e9) : g_strdup ("-");
          g_autofree char *roof_s = decode && roof > 0 ? g_strdup_printf ("%.2f", roof) : g_strdup ("-");
          g_autofree char *frac_s = !decode || roof <= 0 ? g_strdup ("-")
                                    : in_cache ? g_strdup ("in cache")
                                    : g_strdup_printf ("%.0f %%", 100 * med / roof);
          printf ("| %-30s | %10s | %10s | %-7s | %7d | %10s | %20s | %9s | %12s | %8s |\n", name,
                  size, params, "CPU", cp.n_threads, label, val, bw_s, roof_s, frac_s);
          fflush (stdout);
        }
    }
  hz_gen_opts_clear (&o);
  return 0;

fail:
  hz_cli_print_error ("bench", error->message);
  hz_gen_opts_clear (&o);
  return 1;
}
