/* tools/hanzo-bench-serving.c — serving benchmark behind tools/bench-serving.sh.
 *
 *   hanzo-bench-serving -m MODEL [-c 1,4,16,64] [-s 512] [-u 32] [-n 64] [-t THREADS]
 *                       [-b BATCH_TOKENS] [-k KV_MIB] [--no-prefix-cache]
 *
 * For each concurrency N: a fresh HzServe; N chat sessions arrive at once, each prompt
 * being the same system prompt (-s tokens) plus its own user turn (-u tokens); each
 * generates -n tokens (greedy, EOG ignored). Prints a Markdown table: wall time, generated
 * tokens/s (over the wall time), decode tokens/s (the tokens after each session's first,
 * over the time after the last session's first token: the aggregate decode rate once every
 * session is decoding), total throughput (prompt + generated tokens of all
 * requests / s), p50 / p99 time to first token (submit -> first token), prompt tokens
 * actually computed and taken from the prefix cache, preemptions. Exit: 0 ok, 1 error,
 * 2 usage.
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hanzo/engine.h"
#include "hanzo/serving.h"

typedef struct {
  GArray *ttft;  /* double */
  guint64 generated, prompt;
} Acc;

static void
on_done (const HzServeResult *r, gpointer data)
{
  Acc *a = data;
  g_array_append_val (a->ttft, r->ttft_seconds);
  a->generated += r->n_generated;
  a->prompt += r->n_prompt;
}

static int
cmp_double (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static double
percentile (GArray *v, double p)
{
  g_array_sort (v, cmp_double);
  guint i = (guint) MIN ((double) v->len - 1, p / 100.0 * v->len);
  return g_array_index (v, double, i);
}

int
main (int argc, char **argv)
{
  g_autofree char *model_path = NULL, *conc = NULL;
  gint sys_len = 512, user_len = 32, n_gen = 64, threads = 0, batch = 256, kv_mib = 0;
  gboolean no_cache = FALSE;
  GOptionEntry entries[] = {
    { "model", 'm', 0, G_OPTION_ARG_FILENAME, &model_path, "GGUF model", "FILE" },
    { "concurrency", 'c', 0, G_OPTION_ARG_STRING, &conc, "sessions (1,4,16,64)", "LIST" },
    { "system", 's', 0, G_OPTION_ARG_INT, &sys_len, "system prompt tokens (512)", "N" },
    { "user", 'u', 0, G_OPTION_ARG_INT, &user_len, "user turn tokens (32)", "N" },
    { "gen", 'n', 0, G_OPTION_ARG_INT, &n_gen, "generated tokens per session (64)", "N" },
    { "threads", 't', 0, G_OPTION_ARG_INT, &threads, "compute threads (cores)", "N" },
    { "batch", 'b', 0, G_OPTION_ARG_INT, &batch, "tokens per step (256)", "N" },
    { "kv-mib", 'k', 0, G_OPTION_ARG_INT, &kv_mib, "KV pool memory (0: the server's default)", "MIB" },
    { "no-prefix-cache", 0, 0, G_OPTION_ARG_NONE, &no_cache, "disable prefix caching", NULL },
    { NULL },
  };
  g_autoptr (GOptionContext) oc = g_option_context_new ("- serving throughput and TTFT");
  g_option_context_add_main_entries (oc, entries, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (oc, &argc, &argv, &error) || model_path == NULL ||
      sys_len < 1 || user_len < 1 || n_gen < 1 || batch < 1 || kv_mib < 0)
    {
      fprintf (stderr, "%s\n", error ? error->message : "usage: -m MODEL (see --help)");
      return 2;
    }
  HzModelParams mp;
  hz_model_params_init (&mp);
  mp.n_threads = threads;
  g_autoptr (HzModel) m = hz_model_load (model_path, &mp, &error);
  if (m == NULL)
    {
      fprintf (stderr, "%s\n", error->message);
      return 1;
    }
  g_auto (GStrv) levels = g_strsplit (conc ? conc : "1,4,16,64", ",", -1);
  const guint n_prompt = sys_len + user_len;
  g_autoptr (GRand) rng = g_rand_new_with_seed (1);
  g_autofree HzToken *prompt = g_new (HzToken, n_prompt);
  for (guint i = 0; i < n_prompt; i++)
    prompt[i] = i == 0 && hz_model_bos (m) >= 0 ? hz_model_bos (m)
                                                : g_rand_int_range (rng, 3, hz_model_n_vocab (m));

  printf ("model: %s (%s), system prompt %d + user %d tokens, %d generated per session, "
          "prefix cache %s, %d tokens per step\n\n", hz_model_name (m), hz_model_type_name (m),
          sys_len, user_len, n_gen, no_cache ? "off" : "on", batch);
  printf ("| sessions | wall s | gen tok/s | decode tok/s | total tok/s | TTFT p50 ms | "
          "TTFT p99 ms | prompt computed | prompt cached | preemptions |\n");
  printf ("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (guint l = 0; levels[l]; l++)
    {
      const guint n = (guint) g_ascii_strtoull (levels[l], NULL, 10);
      if (n == 0)
        continue;
      HzServeParams sp;
      hz_serve_params_init (&sp);
      sp.prefix_cache = !no_cache;
      sp.max_batch_tokens = batch;
      sp.max_seqs = MAX (n, 1);
      sp.max_seq_len = n_prompt + n_gen + 1;
      sp.n_threads = threads;
      sp.kv_bytes = (guint64) kv_mib << 20;
      g_autoptr (HzServe) srv = hz_serve_new (m, &sp, &error);
      if (srv == NULL)
        {
          fprintf (stderr, "%s\n", error->message);
          return 1;
        }
      Acc acc = { g_array_new (FALSE, FALSE, sizeof (double)), 0, 0 };
      HzRequestParams rp;
      hz_request_params_init (&rp);
      rp.n_predict = n_gen;
      rp.ignore_eog = TRUE;
      const gint64 t0 = g_get_monotonic_time ();
      for (guint i = 0; i < n; i++)
        {
          for (guint k = sys_len; k < n_prompt; k++)  /* this session's own user turn */
            prompt[k] = g_rand_int_range (rng, 3, hz_model_n_vocab (m));
          if (!hz_serve_submit (srv, prompt, n_prompt, &rp, NULL, on_done, &acc, &error) )
            {
              fprintf (stderr, "%s\n", error->message);
              return 1;
            }
        }
      if (!hz_serve_run (srv, &error))
        {
          fprintf (stderr, "%s\n", error->message);
          return 1;
        }
      const double wall = (g_get_monotonic_time () - t0) / 1e6;
      HzServeStats st;
      hz_serve_get_stats (srv, &st);
      const double decode_s = wall - percentile (acc.ttft, 100);
      printf ("| %u | %.2f | %.1f | %.1f | %.1f | %.1f | %.1f | %" G_GUINT64_FORMAT " | %"
              G_GUINT64_FORMAT " | %" G_GUINT64_FORMAT " |\n", n, wall, acc.generated / wall,
              decode_s > 0 ? (acc.generated - MIN (acc.generated, n)) / decode_s : 0.0,
              (acc.generated + acc.prompt) / wall, 1e3 * percentile (acc.ttft, 50),
              1e3 * percentile (acc.ttft, 99), st.n_prompt_evaluated, st.n_prompt_cached,
              st.n_preemptions);
      fflush (stdout);
      g_array_unref (acc.ttft);
    }
  return 0;
}
