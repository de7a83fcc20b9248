/* tools/bench-json.c — benchmark of constrained JSON output (engine/json-constrain.c)
 * behind tools/bench-json.sh; not a test.
 *
 *   bench-json [-n TOKENS] [-g GEN] [-t THREADS] FILE.gguf...
 *
 * For each GGUF (a vocab-only file or a model): the vocabulary's precomputation time, then
 * constrained random generations (json_object and a person schema; each token drawn
 * uniformly from the mask, up to TOKENS masks in all) with the time of every mask by what
 * the state was reading, against the brute-force mask (every token fed to a copy of the
 * state) on every 64th step (percentiles, not means: on a busy machine a mask that the
 * scheduler interrupts takes milliseconds). For a model with weights, also the tokens/s of one greedy
 * HzServe request of GEN tokens without a constraint (end-of-generation ignored), with
 * response_format json_object (a random model may close it in a few tokens), and with a
 * schema whose shortest text is about GEN - 8 bytes (so that it runs about GEN tokens:
 * the constraint's cost per token; the same prompt each time; best of three runs each, alternating). Prints Markdown
 * tables. Exit: 0 ok, 1 error, 2 usage. */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "gguf.h"
#include "hanzo/engine.h"
#include "hanzo/serving.h"
#include "json-constrain.h"
#include "tokenizer.h"

static const char *const person_schema =
  "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},"
  "\"age\":{\"type\":\"integer\"},\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
  "\"pet\":{\"type\":\"object\",\"properties\":{\"kind\":{\"enum\":[\"cat\",\"dog\"]},"
  "\"legs\":{\"type\":\"number\"}},\"required\":[\"kind\"]},\"good\":{\"type\":\"boolean\"}},"
  "\"required\":[\"name\",\"age\",\"pet\"]}";

static const char *const wheres[] = { "value", "structure", "string", "number", "literal", "end" };

typedef struct {
  GArray *us[G_N_ELEMENTS (wheres)];   /* double: microseconds per mask */
  GArray *all;
  double  brute_us;
  guint   n_brute;
} Times;

static int
cmp_double (gconstpointer a, gconstpointer b)
{
  const double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static double
pct (GArray *v, double p)
{
  if (v->len == 0)
    return NAN;
  g_array_sort (v, cmp_double);
  return g_array_index (v, double, (guint) MIN ((double) v->len - 1, p / 100.0 * v->len));
}

static double
now_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Brute force: every token's bytes fed to a copy of the state. */
static guint
brute (const HzTokenizer *t, const HzJsonState *s, guint budget)
{
  const guint n = (guint) hz_tokenizer_n_vocab (t);
  guint count = 0;
  char buf[1100];
  for (guint i = 0; i < n; i++)
    {
      if (hz_tokenizer_is_eog (t, (HzToken) i))
        {
          count += hz_json_state_complete (s);
          continue;
        }
      const gsize len = hz_tokenizer_piece (t, (HzToken) i, FALSE, buf, sizeof buf);
      if (len == 0 || len > sizeof buf)
        continue;
      HzJsonState *c = hz_json_state_copy (s);
      count += hz_json_state_feed (c, buf, len) && hz_json_state_close_bytes (c) <= budget - 1;
      hz_json_state_free (c);
    }
  return count;
}

static void
mask_runs (const HzTokenizer *t, const HzJsonVocab *v, HzJsonSchema *schema, guint n_masks,
           Times *tm)
{
  g_autofree guint64 *mask = g_new0 (guint64, hz_json_vocab_mask_words (v));
  g_autoptr (GRand) r = g_rand_new_with_seed (7);
  guint done = 0;
  while (done < n_masks)
    {
      g_autoptr (HzJsonState) st = hz_json_state_new (schema);
      const guint budget = 256;
      for (guint i = 0; i < budget && done < n_masks; i++, done++)
        {
          const char *where = hz_json_state_where (st);
          const double t0 = now_us ();
          guint n = hz_json_mask (v, st, budget - i, mask);
          const double us = now_us () - t0;
          for (guint k = 0; k < G_N_ELEMENTS (wheres); k++)
            if (strcmp (where, wheres[k]) == 0)
              g_array_append_val (tm->us[k], us);
          g_array_append_val (tm->all, us);
          if (done % 64 == 0)
            {
              const double b0 = now_us ();
              const guint nb = brute (t, st, budget - i);
              tm->brute_us += now_us () - b0;
              tm->n_brute++;
              if (nb != n)
                g_error ("the mask and brute force differ: %u and %u tokens", n, nb);
            }
          if (n == 0)
            break;
          /* a uniform draw among the allowed tokens: long strings, structure when forced */
          guint k = (guint) g_rand_int_range (r, 0, (gint32) n);
          HzToken tok = -1;
          for (gsize w = 0; tok < 0; w++)
            {
              const guint c = (guint) __builtin_popcountll (mask[w]);
              if (k >= c)
                {
                  k -= c;
                  continue;
                }
              guint64 b = mask[w];
              for (; k > 0; k--)
                b &= b - 1;
              tok = (HzToken) (w * 64 + (gsize) __builtin_ctzll (b));
            }
          hz_json_state_accept (st, v, tok);
          if (hz_tokenizer_is_eog (t, tok))
            break;
        }
    }
}

typedef struct {
  guint   n;
  gint64  t_first, t_last;
} Gen;

static gboolean
on_token (guint64 request, guint sample, HzToken token, const char *text, gpointer data)
{
  Gen *g = data;
  const gint64 now = g_get_monotonic_time ();
  if (g->n++ == 0)
    g->t_first = now;
  g->t_last = now;
  return TRUE;
}

/* Decode tokens/s of one greedy request (after its first token). */
static double
gen_rate (HzModel *model, HzJsonSchema *json, guint n_gen, guint threads, guint *n_out)
{
  HzServeParams sp;
  hz_serve_params_init (&sp);
  sp.n_threads = threads;
  sp.kv_bytes = (guint64) 64 << 20;
  sp.max_seq_len = MIN (n_gen + 64, 1024);
  g_autoptr (GError) error = NULL;
  g_autoptr (HzServe) srv = hz_serve_new (model, &sp, &error);
  if (srv == NULL)
    {
      g_printerr ("bench-json: %s\n", error->message);
      return 0;
    }
  gsize n_prompt = 0;
  g_autofree HzToken *prompt = hz_model_tokenize (model, "Once upon a time, a JSON object:", -1,
                                                  TRUE, FALSE, &n_prompt);
  HzRequestParams rp;
  hz_request_params_init (&rp);
  rp.n_predict = (int32_t) n_gen;
  rp.ignore_eog = TRUE;
  rp.json = json;
  Gen g = { 0 };
  if (!hz_serve_submit (srv, prompt, n_prompt, &rp, on_token, NULL, &g, &error) ||
      !hz_serve_run (srv, &error))
    {
      g_printerr ("bench-json: %s\n", error->message);
      return 0;
    }
  *n_out = g.n;
  return g.n > 1 ? (g.n - 1) / ((g.t_last - g.t_first) / 1e6) : 0;
}

int
main (int argc, char **argv)
{
  gint n_masks = 4000, n_gen = 128, threads = 0;
  GOptionEntry entries[] = {
    { "tokens", 'n', 0, G_OPTION_ARG_INT, &n_masks, "masks per vocabulary and schema", "N" },
    { "gen", 'g', 0, G_OPTION_ARG_INT, &n_gen, "tokens generated for the tokens/s rows", "N" },
    { "threads", 't', 0, G_OPTION_ARG_INT, &threads, "compute threads (0: all cores)", "N" },
    { NULL },
  };
  g_autoptr (GOptionContext) oc = g_option_context_new ("FILE.gguf... — JSON constraint benchmark");
  g_option_context_add_main_entries (oc, entries, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (oc, &argc, &argv, &error) || argc < 2 || n_masks < 1 || n_gen < 2)
    {
      g_printerr ("%s\n", error ? error->message : "usage: bench-json [-n N] [-g N] FILE.gguf...");
      return 2;
    }
  g_autoptr (HzJsonSchema) object = hz_json_schema_new_object ();
  g_autoptr (HzJsonSchema) person = hz_json_schema_compile (person_schema, -1, NULL, NULL);
  g_autoptr (GString) rates = g_string_new (NULL);
  printf ("| vocabulary | tokens | precompute ms | schema | masks | p50 µs | p90 µs | p99 µs "
          "| in string µs (p50) | structure µs (p50) | value µs (p50) | number/literal µs (p50) "
          "| brute force µs |\n|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int f = 1; f < argc; f++)
    {
      g_autoptr (HzGguf) g = hz_gguf_open (argv[f], &error);
      g_autoptr (HzTokenizer) t = g ? hz_tokenizer_new_from_gguf (g, &error) : NULL;
      if (t == NULL)
        {
          g_printerr ("bench-json: %s: %s\n", argv[f], error->message);
          return 1;
        }
      const double b0 = now_us ();
      g_autoptr (HzJsonVocab) v = hz_json_vocab_new_from_tokenizer (t);
      const double build_ms = (now_us () - b0) / 1000;
      g_autofree char *name = g_path_get_basename (argv[f]);
      for (int sc = 0; sc < 2; sc++)
        {
          Times tm = { .all = g_array_new (FALSE, FALSE, sizeof (double)) };
          for (guint k = 0; k < G_N_ELEMENTS (wheres); k++)
            tm.us[k] = g_array_new (FALSE, FALSE, sizeof (double));
          mask_runs (t, v, sc ? person : object, (guint) n_masks, &tm);
          g_autoptr (GArray) numlit = g_array_new (FALSE, FALSE, sizeof (double));
          g_array_append_vals (numlit, tm.us[3]->data, tm.us[3]->len);
          g_array_append_vals (numlit, tm.us[4]->data, tm.us[4]->len);
          printf ("| %s | %d | %.1f | %s | %u | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.0f |\n",
                  name, hz_tokenizer_n_vocab (t), build_ms, sc ? "person schema" : "json_object",
                  tm.all->len, pct (tm.all, 50), pct (tm.all, 90), pct (tm.all, 99),
                  pct (tm.us[2], 50), pct (tm.us[1], 50), pct (tm.us[0], 50), pct (numlit, 50),
                  tm.n_brute ? tm.brute_us / tm.n_brute : 0);
          for (guint k = 0; k < G_N_ELEMENTS (wheres); k++)
            g_array_unref (tm.us[k]);
          g_array_unref (tm.all);
        }
      if (hz_gguf_find_tensor (g, "token_embd.weight") == NULL)
        continue;
      g_autoptr (HzModel) model = hz_model_load (argv[f], NULL, &error);
      if (model == NULL)
        {
          g_printerr ("bench-json: %s: %s\n", argv[f], error->message);
          return 1;
        }
      /* a schema whose shortest text (an object holding an array of M empty strings) is
       * about GEN - 8 bytes: every run generates about GEN tokens, as the free one */
      const guint m = MAX (((guint) n_gen - 8 - 14) / 3, 1);
      g_autofree char *long_json = g_strdup_printf (
        "{\"properties\":{\"items\":{\"items\":{\"type\":\"string\"},\"minItems\":%u}},"
        "\"required\":[\"items\"]}", m);
      g_autoptr (HzJsonSchema) longer = hz_json_schema_compile (long_json, -1, NULL, NULL);
      /* alternately, best of three each (the first run also warms the caches) */
      guint n_free = 0, n_json = 0, n_long = 0;
      double free_rate = 0, json_rate = 0, long_rate = 0;
      for (int rep = 0; rep < 3; rep++)
        {
          free_rate = MAX (free_rate, gen_rate (model, NULL, (guint) n_gen, (guint) threads, &n_free));
          json_rate = MAX (json_rate, gen_rate (model, object, (guint) n_gen, (guint) threads, &n_json));
          long_rate = MAX (long_rate, gen_rate (model, longer, (guint) n_gen, (guint) threads, &n_long));
        }
      g_string_append_printf (rates, "| %s | %d | %u | %.1f | %u | %.1f | %u | %.1f | %.1f %% |\n",
                              name, hz_tokenizer_n_vocab (t), n_free, free_rate, n_json, json_rate,
                              n_long, long_rate,
                              free_rate > 0 ? 100.0 * (free_rate - long_rate) / free_rate : 0);
    }
  if (rates->len)
    printf ("\n| model | vocabulary | tokens (free) | tokens/s (free) | tokens (json_object) "
            "| tokens/s (json_object) | tokens (long schema) | tokens/s (long schema) "
            "| cost (long schema) |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n%s",
            rates->str);
  return 0;
}
