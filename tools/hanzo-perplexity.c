/* tools/hanzo-perplexity.c — `hanzo perplexity`: llama-perplexity's method.
 *
 *   hanzo perplexity -m MODEL -f TEXT [-c N_CTX] [-b N_BATCH] [--chunks N] [-t THREADS]
 *                    [--isq TYPE] [--vocab FILE]
 *
 * MODEL is a GGUF file or a Hugging Face folder; --isq quantizes it at load (so the
 * perplexity of a quantization can be measured without writing the file).
 * Prints the running estimate after each chunk as llama-perplexity does
 * ("[1]12.3456,[2]...") and a final line "Final estimate: PPL = <value> +/- <error>".
 * Text that is not valid UTF-8 is scored with U+FFFD for the bad bytes, after a warning.
 * Method: engine/perplexity.h. Exit status: 0 ok, 1 error, 2 usage error.
 */
#include <glib.h>
#include <math.h>
#include <stdio.h>

#include "hanzo-cli-util.h"
#include "hanzo-cmd.h"
#include "hanzo-gen-common.h"
#include "perplexity.h"

static gboolean
on_chunk (guint chunk, guint n_chunks, double ppl, gpointer user_data)
{
  (void) n_chunks;
  *(gboolean *) user_data = TRUE;   /* a line is open on stdout */
  printf ("[%u]%.4f,", chunk, ppl);
  fflush (stdout);
  return TRUE;
}

int
hz_cmd_perplexity (int argc, char **argv)
{
  g_autofree char *model_path = NULL, *text_path = NULL, *isq = NULL, *vocab = NULL;
  gint n_ctx = 512, n_batch = 512, chunks = G_MININT /* unset: all */, threads = 0;
  gboolean printed = FALSE;
  GOptionEntry entries[] = {
    { "model", 'm', 0, G_OPTION_ARG_FILENAME, &model_path,
      "GGUF model file or Hugging Face folder", "MODEL" },
    { "isq", 0, 0, G_OPTION_ARG_STRING, &isq, HZ_CLI_ISQ_HELP, "TYPE" },
    { "vocab", 0, 0, G_OPTION_ARG_FILENAME, &vocab, HZ_CLI_VOCAB_HELP, "FILE" },
    { "file", 'f', 0, G_OPTION_ARG_FILENAME, &text_path, "Text file (UTF-8)", "FILE" },
    { "ctx-size", 'c', 0, G_OPTION_ARG_INT, &n_ctx, "Tokens per chunk, >= 4 (default 512)", "N" },
    { "batch-size", 'b', 0, G_OPTION_ARG_INT, &n_batch, "Tokens per forward pass, >= 1 (default 512)", "N" },
    { "chunks", 0, 0, G_OPTION_ARG_INT, &chunks, "Process at most N chunks, >= 1 (default: all)", "N" },
    { "threads", 't', 0, G_OPTION_ARG_INT, &threads, "CPU threads, 0..1024 (default 0: all cores)", "N" },
    { NULL }
  };
  g_autoptr (GOptionContext) oc = g_option_context_new ("— perplexity of a model on a text");
  g_option_context_add_main_entries (oc, entries, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (oc, &argc, &argv, &error))
    {
      hz_cli_print_error ("perplexity", error->message);
      return 2;
    }
  if (!model_path || !text_path || argc != 1 || n_ctx < 4 || n_batch < 1)
    {
      fprintf (stderr, "hanzo perplexity: need -m MODEL -f TEXT (and -c >= 4, -b >= 1)\n");
      return 2;
    }
  if (!hz_cli_check_threads ("perplexity", "--threads", threads))
    return 2;
  /* chunks stays G_MININT (all) unless given; a given value must be >= 1 */
  if (chunks != G_MININT && chunks < 1)
    {
      fprintf (stderr, "hanzo perplexity: --chunks must be >= 1 (leave it out for all), not %d\n",
               chunks);
      return 2;
    }
  g_autofree char *text = NULL;
  gsize len = 0;
  if (!g_file_get_contents (text_path, &text, &len, &error))
    {
      hz_cli_print_error ("perplexity", error->message);
      return 1;
    }
  /* like `hanzo chat`: bytes that are not UTF-8 (or NUL) are scored as U+FFFD */
  g_autofree char *valid = hz_cli_utf8_repair ("perplexity", text_path, text, len, &len);
  if (valid)
    {
      g_free (text);
      text = g_steal_pointer (&valid);
    }
  g_autoptr (HzModel) model = hz_cli_load_model ("perplexity", model_path, (guint) threads,
                                                 isq, vocab);
  if (!model)
    return 1;
  HzPerplexityParams pp;
  hz_perplexity_params_init (&pp);
  pp.n_ctx = (guint) n_ctx;
  pp.n_batch = (guint) n_batch;
  pp.n_chunks = chunks == G_MININT ? -1 : chunks;
  pp.n_threads = (guint) threads;
  HzPerplexityResult r;
  fprintf (stderr, "perplexity: %s (%s), n_ctx %d, n_batch %d\n", model_path,
           hz_model_type_name (model), n_ctx, MIN (n_batch, n_ctx));
  /* like llama.cpp's "n_ctx_train < n_ctx" warning: past its training context a model's
   * positions were never trained, and its perplexity there says little */
  const int32_t n_train = hz_model_n_ctx_train (model);
  if (n_train > 0 && n_ctx > n_train)
    fprintf (stderr, "hanzo perplexity: warning: n_ctx %d is larger than the model's training "
                     "context of %d tokens (use -c %d)\n", n_ctx, n_train, n_train);
  if (!hz_perplexity (model, text, (gssize) len, &pp, on_chunk, &printed, &r, NULL, &error))
    {
      if (printed)
        printf ("\n");
      fflush (stdout);
      fprintf (stderr, "hanzo perplexity: %s: %s\n", text_path, error->message);
      return 1;
    }
  if (r.n_scored == 0 || !isfinite (r.ppl))
    {
      if (printed)
        printf ("\n");
      fflush (stdout);
      fprintf (stderr, "hanzo perplexity: %s: no token was scored\n", text_path);
      return 1;
    }
  printf ("\n");
  fprintf (stderr, "perplexity: %u tokens, %u chunks, %u scored, %.2f s (%.1f tokens/s)\n",
           r.n_tokens, r.n_chunks, r.n_scored, r.seconds,
           r.n_chunks * (double) n_ctx / MAX (r.seconds, 1e-9));
  printf ("Final estimate: PPL = %.4f +/- %.5f\n", r.ppl, r.ppl_error);
  return 0;
}
