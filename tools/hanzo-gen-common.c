/* tools/hanzo-gen-common.c — shared options of the generation commands (see the header). */
#include "hanzo-cli-util.h"
#include "hanzo-gen-common.h"

#include <stdio.h>
#include <math.h>
#include <string.h>

void
hz_gen_opts_init (HzGenOpts *o, int n_predict)
{
  HzSamplerParams sp;

  memset (o, 0, sizeof *o);
  o->ctx_size = HZ_GEN_UNSET;
  o->batch_size = HZ_GEN_UNSET;
  hz_sampler_params_init (&sp);
  o->temp = sp.temperature;
  o->top_k = sp.top_k;
  o->top_p = sp.top_p;
  o->min_p = sp.min_p;
  o->repeat_penalty = sp.repeat_penalty;
  o->repeat_last_n = sp.repeat_last_n;
  o->presence_penalty = sp.presence_penalty;
  o->frequency_penalty = sp.frequency_penalty;
  o->seed = (gint64) sp.seed;
  o->n_predict = n_predict;
}

void
hz_gen_opts_clear (HzGenOpts *o)
{
  g_clear_pointer (&o->model, g_free);
  g_clear_pointer (&o->isq, g_free);
  g_clear_pointer (&o->vocab, g_free);
  g_clear_pointer (&o->lora, g_strfreev);
}

void
hz_gen_opts_add (GOptionContext *ctx, HzGenOpts *o, HzGenOptFlags flags)
{
  /* -t last, so that HZ_GEN_OPT_NO_THREADS can cut it off */
  GOptionEntry base[] = {
    { "model", 'm', 0, G_OPTION_ARG_FILENAME, &o->model,
      "GGUF model file or Hugging Face folder (config.json + *.safetensors)", "MODEL" },
    { "isq", 0, 0, G_OPTION_ARG_STRING, &o->isq, HZ_CLI_ISQ_HELP, "TYPE" },
    { "vocab", 0, 0, G_OPTION_ARG_FILENAME, &o->vocab, HZ_CLI_VOCAB_HELP, "FILE" },
    { "ctx-size", 'c', 0, G_OPTION_ARG_INT, &o->ctx_size,
      "Context size in tokens, >= 1 (default: the model's, at most 4096)", "N" },
    { "batch-size", 'b', 0, G_OPTION_ARG_INT, &o->batch_size,
      "Prompt tokens per forward pass, >= 1 (default 512)", "N" },
    { "lora", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o->lora,
      "LoRA adapter (PEFT folder or GGUF LoRA) applied without merging, scaled by SCALE "
      "(default 1); repeat to add several", "PATH[:SCALE]" },
    { "threads", 't', 0, G_OPTION_ARG_INT, &o->threads, "CPU threads, 0..1024 (default 0: all cores)", "N" },
    { NULL }
  };
  const GOptionEntry samp[] = {
    { "n-predict", 'n', 0, G_OPTION_ARG_INT, &o->n_predict,
      "Tokens to generate, >= -1 (-1: until end of generation or a full context)", "N" },
    { "temp", 0, 0, G_OPTION_ARG_DOUBLE, &o->temp, "Temperature (<= 0: greedy)", "T" },
    { "top-k", 0, 0, G_OPTION_ARG_INT, &o->top_k, "Top-k, >= 0 (0: off)", "K" },
    { "top-p", 0, 0, G_OPTION_ARG_DOUBLE, &o->top_p, "Top-p, 0..1 (1: off)", "P" },
    { "min-p", 0, 0, G_OPTION_ARG_DOUBLE, &o->min_p, "Min-p, 0..1 (0: off)", "P" },
    { "repeat-penalty", 0, 0, G_OPTION_ARG_DOUBLE, &o->repeat_penalty,
      "Repetition penalty, > 0 (1: off)", "X" },
    { "repeat-last-n", 0, 0, G_OPTION_ARG_INT, &o->repeat_last_n,
      "Window of tokens for the penalties, >= -1 (-1: all, 0: off; default 64)", "N" },
    { "presence-penalty", 0, 0, G_OPTION_ARG_DOUBLE, &o->presence_penalty,
      "Presence penalty (0: off)", "X" },
    { "frequency-penalty", 0, 0, G_OPTION_ARG_DOUBLE, &o->frequency_penalty,
      "Frequency penalty (0: off)", "X" },
    { "seed", 's', 0, G_OPTION_ARG_INT64, &o->seed, "Random seed", "SEED" },
    { "ignore-eos", 0, 0, G_OPTION_ARG_NONE, &o->ignore_eos,
      "Keep generating past end-of-generation tokens", NULL },
    { NULL }
  };
  if (flags & HZ_GEN_OPT_NO_THREADS)
    base[G_N_ELEMENTS (base) - 2] = (GOptionEntry) { NULL };
  g_option_context_add_main_entries (ctx, base, NULL);
  if (flags & HZ_GEN_OPT_SAMPLING)
    g_option_context_add_main_entries (ctx, samp, NULL);
}

void
hz_gen_opts_apply (const HzGenOpts *o, HzGenerateParams *gp, HzContextParams *cp)
{
  if (gp)
    {
      hz_generate_params_init (gp);
      gp->sampler.temperature = (float) o->temp;
      gp->sampler.top_k = o->top_k;
      gp->sampler.top_p = (float) o->top_p;
      gp->sampler.min_p = (float) o->min_p;
      gp->sampler.repeat_penalty = (float) o->repeat_penalty;
      gp->sampler.repeat_last_n = o->repeat_last_n;
      gp->sampler.presence_penalty = (float) o->presence_penalty;
      gp->sampler.frequency_penalty = (float) o->frequency_penalty;
      gp->sampler.seed = (guint64) o->seed;
      gp->n_predict = o->n_predict;
      gp->ignore_eog = o->ignore_eos;
    }
  if (cp)
    {
      hz_context_params_init (cp);
      cp->n_ctx = (guint) MAX (o->ctx_size, 0);     /* unset -> 0: the default */
      cp->n_batch = (guint) MAX (o->batch_size, 0);
      cp->n_threads = (guint) MAX (o->threads, 0);
    }
}

gboolean
hz_cli_check_threads (const char *cmd, const char *opt, gint64 threads)
{
  if (threads >= 0 && threads <= HZ_MAX_THREADS)
    return TRUE;
  fprintf (stderr, "hanzo %s: %s must be 0 (all cores) or 1..%d, not %" G_GINT64_FORMAT "\n",
           cmd, opt, HZ_MAX_THREADS, threads);
  return FALSE;
}

char *
hz_cli_utf8_repair (const char *cmd, const char *what, const char *s, gsize len,
                    gsize *out_len)
{
  const char *bad = NULL;
  if (g_utf8_validate_len (s, len, &bad))
    return NULL;
  fprintf (stderr, "hanzo %s: warning: %s is not valid UTF-8 (first bad byte at offset %"
           G_GSIZE_FORMAT "); invalid bytes are replaced by U+FFFD\n", cmd, what,
           (gsize) (bad - s));
  char *valid = g_utf8_make_valid (s, (gssize) len);
  *out_len = strlen (valid);   /* no NUL is left in it */
  return valid;
}

char *
hz_cli_read_all (const char *path, gsize *len, GError **error)
{
  char *data = NULL;
  gsize n = 0;

  if (g_strcmp0 (path, "-") != 0)
    {
      if (!g_file_get_contents (path, &data, &n, error))
        return NULL;
      *len = n;
      return data;
    }
  GIOChannel *ch = g_io_channel_unix_new (0);
  g_io_channel_set_close_on_unref (ch, FALSE);
  GIOStatus st = g_io_channel_set_encoding (ch, NULL, error);   /* raw bytes */
  if (st == G_IO_STATUS_NORMAL)
    st = g_io_channel_read_to_end (ch, &data, &n, error);
  g_io_channel_unref (ch);
  if (st != G_IO_STATUS_NORMAL)
    {
      g_free (data);
      g_prefix_error (error, "stdin: ");
      return NULL;
    }
  /* read_to_end does not NUL-terminate: copy with a terminator */
  char *out = g_malloc (n + 1);
  if (n)
    memcpy (out, data, n);
  out[n] = '\0';
  g_free (data);
  *len = n;
  return out;
}

static gboolean
range_error (const char *cmd, const char *opt, const char *range, double v)
{
  fprintf (stderr, "hanzo %s: %s must be %s, not %g\n", cmd, opt, range, v);
  return FALSE;
}

gboolean
hz_gen_opts_check (const HzGenOpts *o, const char *cmd, HzGenOptFlags flags)
{
  if (!(flags & HZ_GEN_OPT_NO_THREADS) && !hz_cli_check_threads (cmd, "--threads", o->threads))
    return FALSE;
  if (o->ctx_size != HZ_GEN_UNSET && o->ctx_size < 1)
    return range_error (cmd, "--ctx-size", ">= 1", o->ctx_size);
  if (o->batch_size != HZ_GEN_UNSET && o->batch_size < 1)
    return range_error (cmd, "--batch-size", ">= 1", o->batch_size);
  if (!(flags & HZ_GEN_OPT_SAMPLING))
    return TRUE;
  if (o->n_predict < -1)
    return range_error (cmd, "--n-predict", ">= -1", o->n_predict);
  if (o->top_k < 0)
    return range_error (cmd, "--top-k", ">= 0", o->top_k);
  if (!(o->top_p >= 0 && o->top_p <= 1))
    return range_error (cmd, "--top-p", "in 0..1", o->top_p);
  if (!(o->min_p >= 0 && o->min_p <= 1))
    return range_error (cmd, "--min-p", "in 0..1", o->min_p);
  if (!(o->repeat_penalty > 0))
    return range_error (cmd, "--repeat-penalty", "> 0", o->repeat_penalty);
  if (o->repeat_last_n < -1)
    return range_error (cmd, "--repeat-last-n", ">= -1", o->repeat_last_n);
  if (!isfinite (o->temp))
    return range_error (cmd, "--temp", "a number", o->temp);
  if (!isfinite (o->presence_penalty))
    return range_error (cmd, "--presence-penalty", "a number", o->presence_penalty);
  if (!isfinite (o->frequency_penalty))
    return range_error (cmd, "--frequency-penalty", "a number", o->frequency_penalty);
  return TRUE;
}

HzModel *
hz_cli_load_model (const char *cmd, const char *path, guint n_threads, const char *isq,
                   const char *vocab)
{
  g_autoptr (GError) error = NULL;
  HzModelParams mp;

  hz_model_params_init (&mp);
  mp.n_threads = n_threads;
  mp.isq = isq;
  mp.vocab_gguf = vocab;
  const gint64 t0 = g_get_monotonic_time ();
  HzModel *m = hz_model_load (path, &mp, &error);
  if (m == NULL)
    hz_cli_print_load_error (cmd, path, error);
  else if (isq)
    fprintf (stderr, "hanzo %s: --isq %s: weights quantized at load in %.2f s (%.1f MiB)\n",
             cmd, hz_model_isq (m), (g_get_monotonic_time () - t0) / 1e6,
             hz_model_weight_bytes (m) / 1048576.0);
  return m;
}

HzModel *
hz_gen_opts_load (const HzGenOpts *o, const char *cmd)
{
  return hz_cli_load_model (cmd, o->model, (guint) MAX (o->threads, 0), o->isq, o->vocab);
}

void
hz_cli_parse_lora (const char *arg, char **path, float *scale)
{
  const char *colon = strrchr (arg, ':');
  *scale = 1.0f;
  if (colon != NULL && colon[1] != '\0')
    {
      char *end = NULL;
      const double v = g_ascii_strtod (colon + 1, &end);
      /* a number after the last ':' is the scale, also when it is not a usable one
       * (nan, inf, 1e30): hz_gen_opts_set_lora refuses those by name */
      if (end != NULL && end != colon + 1 && *end == '\0')
        {
          *path = g_strndup (arg, (gsize) (colon - arg));
          *scale = (float) v;
          return;
        }
    }
  *path = g_strdup (arg);
}

gboolean
hz_gen_opts_set_lora (const HzGenOpts *o, const char *cmd, HzModel *model, HzContext *ctx)
{
  const guint n = o->lora ? g_strv_length (o->lora) : 0;
  if (n == 0)
    return TRUE;
  g_autoptr (GPtrArray) adapters = g_ptr_array_new_with_free_func ((GDestroyNotify) hz_adapter_unref);
  g_autofree float *scales = g_new (float, n);
  for (guint i = 0; i < n; i++)
    {
      g_autoptr (GError) error = NULL;
      g_autofree char *path = NULL;
      hz_cli_parse_lora (o->lora[i], &path, &scales[i]);
      if (!isfinite (scales[i]) || fabsf (scales[i]) > HZ_CLI_LORA_MAX_SCALE)
        {
          fprintf (stderr, "hanzo %s: --lora %s: the scale must be a number between %g and %g\n",
                   cmd, o->lora[i], -HZ_CLI_LORA_MAX_SCALE, HZ_CLI_LORA_MAX_SCALE);
          return FALSE;
        }
      /* "PATH:abc": the text after the ':' was not a number, so the whole argument was
       * taken as the path; when only PATH exists, the scale is what is wrong */
      const char *colon = strrchr (o->lora[i], ':');
      if (colon && !g_file_test (path, G_FILE_TEST_EXISTS))
        {
          g_autofree char *before = g_strndup (o->lora[i], (gsize) (colon - o->lora[i]));
          if (g_file_test (before, G_FILE_TEST_EXISTS))
            {
              fprintf (stderr, "hanzo %s: --lora %s: bad scale '%s' (PATH:SCALE takes a number "
                       "between %g and %g)\n", cmd, o->lora[i], colon + 1,
                       -HZ_CLI_LORA_MAX_SCALE, HZ_CLI_LORA_MAX_SCALE);
              return FALSE;
            }
        }
      HzAdapter *a = hz_adapter_load (model, path, &error);
      if (a == NULL)
        {
          g_autofree char *shown = hz_cli_escape (path);
          g_autofree char *why = hz_cli_escape (error->message);
          if (g_str_has_prefix (why, shown))   /* the message names it already */
            fprintf (stderr, "hanzo %s: --lora %s\n", cmd, why);
          else
            fprintf (stderr, "hanzo %s: --lora %s: %s\n", cmd, shown, why);
          return FALSE;
        }
      g_ptr_array_add (adapters, a);
    }
  g_autoptr (GError) error = NULL;
  if (!hz_context_set_adapters (ctx, (HzAdapter *const *) adapters->pdata, scales, n, &error))
    {
      fprintf (stderr, "hanzo %s: --lora: %s\n", cmd, error->message);
      return FALSE;
    }
  return TRUE;
}

gboolean
hz_gen_opts_open (HzGenOpts *o, const char *cmd, HzModel **model, HzContext **ctx,
                  HzGenerateParams *gp)
{
  g_autoptr (GError) error = NULL;
  HzContextParams cp;

  *model = hz_gen_opts_load (o, cmd);
  if (*model == NULL)
    {
      hz_gen_opts_clear (o);
      return FALSE;
    }
  hz_gen_opts_apply (o, gp, &cp);
  /* as llama.cpp does: a context longer than the model was trained on runs, with a warning */
  const int32_t n_train = hz_model_n_ctx_train (*model);
  if (n_train > 0 && cp.n_ctx > (guint) n_train)
    fprintf (stderr, "hanzo %s: warning: --ctx-size %u is longer than the model's training "
             "context (%d tokens); output past it degrades\n", cmd, cp.n_ctx, n_train);
  *ctx = hz_context_new (*model, &cp, &error);
  if (*ctx == NULL || !hz_gen_opts_set_lora (o, cmd, *model, *ctx))
    {
      if (*ctx == NULL)
        fprintf (stderr, "hanzo %s: %s\n", cmd, error->message);
      g_clear_pointer (ctx, hz_context_free);
      g_clear_pointer (model, hz_model_free);
      hz_gen_opts_clear (o);
      return FALSE;
    }
  hz_gen_opts_clear (o);
  return TRUE;
}

const char *
hz_stop_reason_name (HzStopReason r)
{
  static const char *const names[] = {
    [HZ_STOP_NONE] = "none", [HZ_STOP_EOG] = "eog", [HZ_STOP_LENGTH] = "length",
    [HZ_STOP_STRING] = "stop-string", [HZ_STOP_CANCELLED] = "cancelled",
    [HZ_STOP_CALLBACK] = "callback", [HZ_STOP_CONTEXT_FULL] = "context-full",
  };
  return (guint) r < G_N_ELEMENTS (names) && names[r] ? names[r] : "unknown";
}
