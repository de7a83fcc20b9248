/* tools/hanzo-learn.c — `hanzo learn`: train LoRA adapters on the CPU and merge them.
 *
 *   hanzo learn sft  -m BASE.gguf --data FILE.jsonl --out ADAPTER_DIR
 *                    [--rank 8] [--alpha 16] [--rslora] [--lr 2e-4] [--steps 100]
 *                    [--batch 4] [--max-tokens 512] [--targets q,k,v,o,gate,up,down]
 *                    [--heldout 0.1] [--init ADAPTER_DIR] [--checkpoint DIR]
 *                    [--dp-noise Z [--dp-clip 1.0] [--dp-rate batch/N] [--dp-delta 1e-6]]
 *                    (DP-SGD, learner/dp-sgd.h; prints the epsilon of the run)
 *   hanzo learn grpo -m BASE.gguf --prompts FILE.jsonl --reward SPEC --out ADAPTER_DIR
 *                    [--rank --alpha --lr 1e-5 --steps 50 --group 8 --prompts-per-step 2
 *                     --max-new 64 --temperature 1.0 --beta 0.04 --norm grpo|dapo
 *                     --targets ...]
 *   hanzo learn merge -m BASE.gguf --adapter ADAPTER_DIR --out MERGED.gguf [--type Q8_0]
 *   hanzo learn fed-config ADAPTER_DIR   (the adapter config JSON for hanzo-aggregator --config)
 *
 * Data formats: learner/dataset.h (JSONL). GRPO prompt files hold {"prompt", "answer"?}
 * lines; feedback lines (chosen/rejected, rating) in the same file are trained on as
 * groups with fixed rewards. Reward specs: learner/reward.h (hz_reward_parse), e.g.
 * "regex:\\bball\\b", "exact:####\\s*(\\S+)", "contains:Bye".
 * Adapters are written as PEFT (adapter_model.safetensors, BF16, + adapter_config.json)
 * and llama.cpp GGUF LoRA (adapter.gguf) in ADAPTER_DIR.
 * Exit status: 0 ok, 1 runtime error, 2 usage error.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <unistd.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hanzo-cli-util.h"
#include "hanzo-cmd.h"
#include "hanzo/engine.h"
#include "adapter-io.h"
#include "dataset.h"
#include "grpo-trainer.h"
#include "job.h"
#include "hanzo/egress-dp.h"
#include "merge.h"
#include "hanzo/engine-train.h"

static int
usage_error (GOptionContext *ctx, const char *msg)
{
  fprintf (stderr, "hanzo learn: %s\n\n", msg);
  g_autofree char *help = g_option_context_get_help (ctx, TRUE, NULL);
  fputs (help, stderr);
  return 2;
}

static int
fail (const char *what, const GError *error)
{
  g_autofree char *shown = hz_cli_escape (what);
  g_autofree char *why = hz_cli_escape (error ? error->message : "failed");
  if (g_str_has_prefix (why, shown))   /* the message names it already */
    fprintf (stderr, "hanzo learn: %s\n", why);
  else
    fprintf (stderr, "hanzo learn: %s: %s\n", shown, why);
  return 1;
}

/* "q,k,v,o,gate,up,down" (or PEFT/GGUF names) -> target mask; 0 on error. */
static guint32
parse_targets (const char *s)
{
  static const char *const short_names[HZ_LORA_N_TARGETS] = { "q", "k", "v", "o", "gate", "up", "down" };
  guint32 mask = 0;
  g_auto (GStrv) items = g_strsplit (s, ",", -1);
  for (guint i = 0; items[i]; i++)
    {
      g_strstrip (items[i]);
      if (g_str_equal (items[i], "all"))
        return HZ_LORA_TARGETS_ALL;
      HzLoraTarget t;
      gboolean found = hz_lora_target_from_name (items[i], &t);
      for (int k = 0; !found && k < HZ_LORA_N_TARGETS; k++)
        if (g_str_equal (items[i], short_names[k]))
          t = (HzLoraTarget) k, found = TRUE;
      if (!found)
        return 0;
      mask |= HZ_LORA_BIT (t);
    }
  return mask;
}

typedef struct {
  char   *model, *out, *targets;
  int     rank, steps;
  double  alpha, lr;
  gboolean rslora;
} CommonOpts;

/* Largest accepted LoRA rank (PEFT has no limit; ranks above a few hundred only cost memory:
 * r must also not exceed the smaller side of every adapted matrix, checked by the learner). */
#define HZ_LEARN_MAX_RANK 4096

/* NULL when the options shared by sft and grpo are sane, else what is wrong. */
static const char *
common_problem (const CommonOpts *o)
{
  if (o->rank < 1 || o->rank > HZ_LEARN_MAX_RANK)
    return "--rank must be in 1..4096";
  if (!isfinite (o->alpha) || o->alpha <= 0)
    return "--alpha must be a positive number";
  if (!isfinite (o->lr) || o->lr <= 0 || o->lr > 1)
    return "--lr must be in (0, 1]";
  if (o->steps < 1 || o->steps > 10000000)
    return "--steps must be in 1..10000000";
  return NULL;
}

/* The DP-SGD options of `learn sft` as given (NULL: not given), parsed by dp_params_from(). */
typedef struct {
  char *noise, *clip, *rate, *delta;
} DpOpts;

static void
dp_opts_clear (DpOpts *d)
{
  g_clear_pointer (&d->noise, g_free);
  g_clear_pointer (&d->clip, g_free);
  g_clear_pointer (&d->rate, g_free);
  g_clear_pointer (&d->delta, g_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (DpOpts, dp_opts_clear)

/* `s` as a whole decimal number (C locale, as GOption's doubles); FALSE when it is not one */
static gboolean
parse_number (const char *s, double *v)
{
  char *end = NULL;
  errno = 0;
  *v = g_ascii_strtod (s, &end);
  return end != s && *end == '\0' && errno != ERANGE;
}

/* Fills p->dp_sgd and p->dp from the --dp-* options. DP-SGD is on only with --dp-noise,
 * which must be a positive finite number: a value that would silently train without
 * privacy (negative, NaN, infinite, 0) is refused, and so is any other --dp-* option without
 * --dp-noise. NULL when sane, else the message for the usage error (static or in *msg). */
static const char *
dp_params_from (const DpOpts *d, HzLearnJobParams *p, char **msg)
{
  const struct { const char *name, *text; double *dst; } opts[] = {
    { "--dp-noise", d->noise, &p->dp.noise_multiplier },
    { "--dp-clip", d->clip, &p->dp.clip_norm },
    { "--dp-rate", d->rate, &p->dp.sample_rate },
    { "--dp-delta", d->delta, &p->dp.delta },
  };
  p->dp_sgd = d->noise != NULL;
  for (guint i = 0; i < G_N_ELEMENTS (opts); i++)
    {
      if (opts[i].text == NULL)
        continue;
      if (!p->dp_sgd)
        return *msg = g_strdup_printf ("%s needs --dp-noise Z (DP-SGD is off without it, "
                                       "and %s would be ignored)", opts[i].name, opts[i].name);
      if (!parse_number (opts[i].text, opts[i].dst))
        return *msg = g_strdup_printf ("%s: '%s' is not a number", opts[i].name, opts[i].text);
    }
  if (!p->dp_sgd)
    return NULL;
  const HzDpSgdParams *dp = &p->dp;
  if (!isfinite (dp->noise_multiplier) || dp->noise_multiplier <= 0)
    return "--dp-noise must be a positive finite number (the noise multiplier z; 0 or less "
           "would train without differential privacy)";
  if (!isfinite (dp->clip_norm) || dp->clip_norm <= 0)
    return "--dp-clip must be a positive finite number (the per-example L2 clip norm)";
  if (d->rate && !(dp->sample_rate > 0 && dp->sample_rate <= 1))
    return "--dp-rate must be in (0, 1] (the Poisson sampling rate; leave it out for batch/N)";
  if (!(dp->delta > 0 && dp->delta < 1))
    return "--dp-delta must be in (0, 1)";
  return NULL;
}

static gboolean
lora_config_from (const CommonOpts *o, HzLoraConfig *cfg)
{
  hz_lora_config_init (cfg);
  cfg->r = o->rank;
  cfg->alpha = (float) o->alpha;
  cfg->use_rslora = o->rslora;
  cfg->targets = parse_targets (o->targets ? o->targets : "q,k,v,o,gate,up,down");
  return cfg->targets != 0;   /* rank and alpha: common_problem() */
}

static gboolean
print_progress (int64_t step, int64_t total, double loss, gpointer data)
{
  (void) data;
  if (step == 1 || step % 10 == 0 || step == total)
    printf ("step %4" G_GINT64_FORMAT "/%" G_GINT64_FORMAT "  loss %.4f\n", step, total, loss);
  fflush (stdout);
  return TRUE;
}

/* The adapter directory of a run: the folders that out_dir_writable() created, so that a
 * run that fails before writing its adapter removes them again (only while empty). */
typedef struct {
  char    *dir;       /* the --out directory */
  char    *created;   /* the topmost folder this run created (an ancestor of dir, or dir);
                       * NULL: dir existed before */
  gboolean keep;      /* the adapter was written */
} OutDir;

/* ---- the created folders on SIGINT/SIGTERM/SIGHUP ----
 * The folders of an OutDir that this run created (leaf first, up to OutDir.created) are
 * copied into fixed buffers before a handler is installed, so that the handler only calls
 * rmdir(2) (async-signal-safe; a folder that is no longer empty stays). It then hands the
 * signal on to the action that was there before, normally the one of
 * hz_atomic_file_install_signal_cleanup() (tools/hanzo.c), which removes pending temporary
 * files and dies of the signal: the chain reuses that handler instead of repeating it. */
#define OUT_DIR_MAX_DEPTH 32
static const int out_dir_signals[] = { SIGINT, SIGTERM, SIGHUP };
static char out_dir_sig_paths[OUT_DIR_MAX_DEPTH][PATH_MAX];
static volatile sig_atomic_t out_dir_sig_n;
static struct sigaction out_dir_prev[G_N_ELEMENTS (out_dir_signals)];
static gboolean out_dir_installed[G_N_ELEMENTS (out_dir_signals)];

static void
out_dir_on_signal (int sig)
{
  const int saved = errno;
  for (sig_atomic_t i = 0; i < out_dir_sig_n; i++)
    rmdir (out_dir_sig_paths[i]);
  out_dir_sig_n = 0;
  for (gsize i = 0; i < G_N_ELEMENTS (out_dir_signals); i++)
    if (out_dir_signals[i] == sig)
      {
        /* the previous action (SIG_DFL or the atomic-file clean-up) gets the signal once
         * this handler returns, as it is blocked until then */
        sigaction (sig, &out_dir_prev[i], NULL);
        raise (sig);
      }
  errno = saved;
}

/* Registers d's created folders for out_dir_on_signal() (nothing when it created none, or
 * when the chain does not fit the fixed buffers: only the clean-up on a signal is lost). */
static void
out_dir_watch_signals (const OutDir *d)
{
  if (d->created == NULL)
    return;
  int n = 0;
  g_autofree char *p = g_strdup (d->dir);
  for (;;)
    {
      if (n == OUT_DIR_MAX_DEPTH || strlen (p) >= PATH_MAX)
        return;
      strcpy (out_dir_sig_paths[n++], p);
      if (strcmp (p, d->created) == 0)
        break;
      char *up = g_path_get_dirname (p);
      if (strcmp (up, p) == 0)   /* d->created is not an ancestor: cannot happen */
        {
          g_free (up);
          return;
        }
      g_free (p);
      p = up;
    }
  out_dir_sig_n = n;
  for (gsize i = 0; i < G_N_ELEMENTS (out_dir_signals); i++)
    {
      struct sigaction sa = { 0 };
      if (sigaction (out_dir_signals[i], NULL, &out_dir_prev[i]) != 0
          || out_dir_prev[i].sa_handler == SIG_IGN)   /* nohup: stays ignored */
        continue;
      sa.sa_handler = out_dir_on_signal;
      sigemptyset (&sa.sa_mask);
      sa.sa_flags = SA_RESETHAND;
      out_dir_installed[i] = sigaction (out_dir_signals[i], &sa, NULL) == 0;
    }
}

/* Puts the previous signal actions back (before the folders are removed or kept). */
static void
out_dir_unwatch_signals (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (out_dir_signals); i++)
    if (out_dir_installed[i])
      {
        sigaction (out_dir_signals[i], &out_dir_prev[i], NULL);
        out_dir_installed[i] = FALSE;
      }
  out_dir_sig_n = 0;
}

static void
out_dir_clear (OutDir *d)
{
  out_dir_unwatch_signals ();
  if (d->created && !d->keep)
    {
      /* leaf first, up to the first folder created (a failed mkdir may have made only
       * parents: ENOENT goes on up); g_rmdir() leaves non-empty ones */
      g_autofree char *p = g_strdup (d->dir);
      while ((g_rmdir (p) == 0 || errno == ENOENT) && strcmp (p, d->created) != 0)
        {
          char *up = g_path_get_dirname (p);
          g_free (p);
          p = up;
        }
    }
  g_clear_pointer (&d->dir, g_free);
  g_clear_pointer (&d->created, g_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (OutDir, out_dir_clear)

/* Before any training: the adapter directory `d->dir` exists (created, with its missing
 * parents, recorded in d->created) and a file can be created in it, so that a run is not
 * lost to a wrong -o at the end. FALSE with the reason (G_FILE_ERROR). */
static gboolean
out_dir_writable (OutDir *d, GError **error)
{
  const char *dir = d->dir;
  if (!g_file_test (dir, G_FILE_TEST_EXISTS))
    {
      g_autofree char *top = g_strdup (dir);
      for (;;)
        {
          g_autofree char *up = g_path_get_dirname (top);
          if (strcmp (up, top) == 0 || g_file_test (up, G_FILE_TEST_EXISTS))
            break;
          g_free (top);
          top = g_steal_pointer (&up);
        }
      /* recorded (and watched for signals) before mkdir, so that no moment is left in
       * which a folder exists that neither a signal nor out_dir_clear() would remove; a
       * failed mkdir may have made parents */
      d->created = g_steal_pointer (&top);
      out_dir_watch_signals (d);
      if (g_mkdir_with_parents (dir, 0755) != 0)
        {
          int e = errno;
          g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e),
                       "cannot create '%s': %s", dir, g_strerror (e));
          return FALSE;
        }
    }
  else if (!g_file_test (dir, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOTDIR, "'%s' is not a directory", dir);
      return FALSE;
    }
  g_autofree char *probe = g_build_filename (dir, ".hanzo-write-test-XXXXXX", NULL);
  int fd = g_mkstemp (probe);
  if (fd < 0)
    {
      int e = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), "cannot write in '%s': %s",
                   dir, g_strerror (e));
      return FALSE;
    }
  close (fd);
  g_unlink (probe);
  return TRUE;
}

static int
cmd_sft (int argc, char **argv)
{
  CommonOpts o = { .rank = 8, .steps = 100, .alpha = 16, .lr = 2e-4 };
  g_autofree char *data = NULL, *init = NULL, *ckpt = NULL;
  int batch = 4, max_tokens = 512;
  double heldout = 0.1;
  g_auto (DpOpts) dpo = { 0 };
  GOptionEntry entries[] = {
    { "model", 'm', 0, G_OPTION_ARG_FILENAME, &o.model, "Base model (GGUF)", "BASE.gguf" },
    { "data", 0, 0, G_OPTION_ARG_FILENAME, &data, "Training data (JSONL, learner/dataset.h)", "FILE" },
    { "dp-noise", 0, 0, G_OPTION_ARG_STRING, &dpo.noise, "DP-SGD with noise multiplier Z > 0 (off)", "Z" },
    { "dp-clip", 0, 0, G_OPTION_ARG_STRING, &dpo.clip, "DP-SGD per-example clip norm C > 0 (1.0)", "C" },
    { "dp-rate", 0, 0, G_OPTION_ARG_STRING, &dpo.rate, "DP-SGD Poisson rate in (0, 1] (batch/N)", "Q" },
    { "dp-delta", 0, 0, G_OPTION_ARG_STRING, &dpo.delta, "Delta of the reported epsilon (1e-6)", "D" },
    { "out", 'o', 0, G_OPTION_ARG_FILENAME, &o.out, "Adapter directory to write", "DIR" },
    { "rank", 'r', 0, G_OPTION_ARG_INT, &o.rank, "LoRA rank (8)", "R" },
    { "alpha", 0, 0, G_OPTION_ARG_DOUBLE, &o.alpha, "LoRA alpha (16)", "A" },
    { "rslora", 0, 0, G_OPTION_ARG_NONE, &o.rslora, "Scale by alpha/sqrt(r)", NULL },
    { "lr", 0, 0, G_OPTION_ARG_DOUBLE, &o.lr, "Peak learning rate (2e-4)", "LR" },
    { "steps", 0, 0, G_OPTION_ARG_INT, &o.steps, "Optimiser steps (100)", "N" },
    { "batch", 0, 0, G_OPTION_ARG_INT, &batch, "Examples per step (4)", "N" },
    { "max-tokens", 0, 0, G_OPTION_ARG_INT, &max_tokens, "Tokens per example (512)", "N" },
    { "targets", 0, 0, G_OPTION_ARG_STRING, &o.targets, "Projections (q,k,v,o,gate,up,down)", "LIST" },
    { "heldout", 0, 0, G_OPTION_ARG_DOUBLE, &heldout, "Held-out fraction (0.1)", "F" },
    { "init", 0, 0, G_OPTION_ARG_FILENAME, &init, "Start from this PEFT adapter", "DIR" },
    { "checkpoint", 0, 0, G_OPTION_ARG_FILENAME, &ckpt, "Checkpoint/resume directory", "DIR" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("— supervised LoRA fine-tuning");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    return usage_error (ctx, error->message);
  HzLearnJobParams p;
  hz_learn_job_params_init (&p);
  const char *bad = common_problem (&o);
  if (bad == NULL && (batch < 1 || batch > 65536))
    bad = "--batch must be in 1..65536";
  if (bad == NULL && (max_tokens < 2 || max_tokens > 1048576))
    bad = "--max-tokens must be in 2..1048576";
  g_autofree char *bad_msg = NULL;
  if (bad == NULL)
    bad = dp_params_from (&dpo, &p, &bad_msg);
  if (bad)
    return usage_error (ctx, bad);
  if (!(heldout >= 0 && heldout < 1))
    return usage_error (ctx, "--heldout must be in [0, 1)");
  if (!o.model || !data || !o.out || !lora_config_from (&o, &p.lora))
    return usage_error (ctx, "need -m, --data, --out and valid numbers/targets");
  p.sft.adamw.lr = o.lr;
  p.steps = o.steps;
  p.batch = batch;
  p.max_tokens = max_tokens;
  g_auto (OutDir) out = { .dir = g_strdup (o.out) };
  if (!out_dir_writable (&out, &error))
    return fail ("--out", error);
  g_autoptr (HzModel) model = hz_model_load (o.model, NULL, &error);
  if (!model)
    {
      hz_cli_print_load_error ("learn", o.model, error);
      return 1;
    }
  g_autoptr (HzLearnDataset) d = hz_learn_dataset_new ();
  if (!hz_learn_dataset_load_jsonl (d, data, &error))
    return fail (data, error);
  HzLearnDataset *tr = NULL, *ho = NULL;
  hz_learn_dataset_split (d, heldout, 1, &tr, &ho);
  g_autoptr (HzLearnDataset) train = tr, held = heldout > 0 ? ho : NULL;
  if (heldout <= 0)
    hz_learn_dataset_free (ho);
  g_autoptr (HzLearnDataset) empty = hz_learn_dataset_new ();
  printf ("%u training and %u held-out examples\n", train->records->len,
          held ? held->records->len : 0);
  HzLearnJobResult res;
  const gint64 t0 = g_get_monotonic_time ();
  if (!hz_learn_job_run_sft (model, train, held ? held : empty, &p, init, ckpt, print_progress,
                             NULL, &res, &error))
    return fail ("training", error);
  const double secs = (g_get_monotonic_time () - t0) / 1e6;
  printf ("held-out loss %.4f -> %.4f (%s); %" G_GINT64_FORMAT " steps in %.1f s%s\n",
          res.heldout_before, res.heldout_after,
          hz_learn_job_improved (&res) ? "improved" : "not improved", res.steps, secs,
          res.resumed ? " (resumed)" : "");
  if (p.dp_sgd)
    printf ("DP-SGD: q %.4g, z %g, C %g, %" G_GINT64_FORMAT " steps -> epsilon %.4g at "
            "delta %g (RDP accountant)\n", res.dp_q, p.dp.noise_multiplier, p.dp.clip_norm,
            res.steps, res.dp_epsilon, p.dp.delta);
  gboolean ok = hz_learn_save_adapter (res.lora, o.out, hz_model_name (model), &error);
  hz_learn_job_result_clear (&res);
  if (!ok)
    return fail (o.out, error);
  out.keep = TRUE;
  printf ("adapter written to %s\n", o.out);
  return 0;
}

static int
cmd_grpo (int argc, char **argv)
{
  CommonOpts o = { .rank = 8, .steps = 50, .alpha = 16, .lr = 1e-5 };
  g_autofree char *prompts = NULL, *reward_spec = NULL, *norm = NULL;
  int group = 8, per_step = 2, max_new = 64;
  double temperature = 1.0, beta = 0.04;
  GOptionEntry entries[] = {
    { "model", 'm', 0, G_OPTION_ARG_FILENAME, &o.model, "Base model (GGUF)", "BASE.gguf" },
    { "prompts", 0, 0, G_OPTION_ARG_FILENAME, &prompts, "Prompts (JSONL: prompt, answer)", "FILE" },
    { "reward", 0, 0, G_OPTION_ARG_STRING, &reward_spec, "Reward spec (learner/reward.h)", "SPEC" },
    { "out", 'o', 0, G_OPTION_ARG_FILENAME, &o.out, "Adapter directory to write", "DIR" },
    { "rank", 'r', 0, G_OPTION_ARG_INT, &o.rank, "LoRA rank (8)", "R" },
    { "alpha", 0, 0, G_OPTION_ARG_DOUBLE, &o.alpha, "LoRA alpha (16)", "A" },
    { "rslora", 0, 0, G_OPTION_ARG_NONE, &o.rslora, "Scale by alpha/sqrt(r)", NULL },
    { "lr", 0, 0, G_OPTION_ARG_DOUBLE, &o.lr, "Learning rate (1e-5)", "LR" },
    { "steps", 0, 0, G_OPTION_ARG_INT, &o.steps, "Optimiser steps (50)", "N" },
    { "group", 'G', 0, G_OPTION_ARG_INT, &group, "Completions per prompt, >= 2 (8)", "G" },
    { "prompts-per-step", 0, 0, G_OPTION_ARG_INT, &per_step, "Prompts per step (2)", "N" },
    { "max-new", 0, 0, G_OPTION_ARG_INT, &max_new, "Max completion tokens (64)", "N" },
    { "temperature", 't', 0, G_OPTION_ARG_DOUBLE, &temperature, "Sampling temperature (1.0)", "T" },
    { "beta", 0, 0, G_OPTION_ARG_DOUBLE, &beta, "KL coefficient (0.04)", "B" },
    { "norm", 0, 0, G_OPTION_ARG_STRING, &norm, "Loss normalisation: grpo or dapo", "NAME" },
    { "targets", 0, 0, G_OPTION_ARG_STRING, &o.targets, "Projections (q,k,v,o,gate,up,down)", "LIST" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("— GRPO with verifiable rewards");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    return usage_error (ctx, error->message);
  HzLoraConfig cfg;
  HzGrpoTrainerParams p;
  hz_grpo_trainer_params_init (&p);
  const char *bad = common_problem (&o);
  if (bad)
    return usage_error (ctx, bad);
  if (group < 2)   /* a group's advantages are rewards minus the group mean: all 0 for 1 */
    return usage_error (ctx, "--group must be at least 2 (GRPO compares completions within "
                             "a group; with one, every advantage is 0 and nothing is learned)");
  if (!o.model || !prompts || !o.out || !lora_config_from (&o, &cfg)
      || per_step < 1 || max_new < 1 || temperature <= 0 || beta < 0
      || (norm && !hz_grpo_norm_from_name (norm, &p.grpo.norm)))
    return usage_error (ctx, "need -m, --prompts, --out and valid numbers/targets/norm");
  p.group_size = group;
  p.max_new_tokens = max_new;
  p.sampler.temperature = (float) temperature;
  p.grpo.beta = beta;
  p.adamw.lr = o.lr;
  g_auto (OutDir) out = { .dir = g_strdup (o.out) };
  if (!out_dir_writable (&out, &error))
    return fail ("--out", error);
  g_autoptr (HzModel) model = hz_model_load (o.model, NULL, &error);
  if (!model)
    {
      hz_cli_print_load_error ("learn", o.model, error);
      return 1;
    }
  const HzLlm *llm = hz_model_get_llm (model);
  g_autoptr (HzReward) reward = NULL;
  if (reward_spec && !(reward = hz_reward_parse (reward_spec, hz_model_eos (model), &error)))
    return fail ("--reward", error);
  g_autoptr (HzLearnDataset) d = hz_learn_dataset_new ();
  if (!hz_learn_dataset_load_jsonl (d, prompts, &error))
    return fail (prompts, error);
  /* prompts to sample (groups without replies) and fixed-reward feedback groups */
  g_autoptr (GPtrArray) sampled = g_ptr_array_new ();
  for (guint i = 0; i < d->groups->len; i++)
    if (((HzLearnGroup *) d->groups->pdata[i])->replies->len == 0)
      g_ptr_array_add (sampled, d->groups->pdata[i]);
  const int64_t max_tokens = MIN ((int64_t) llm->hp.n_ctx_train, 1024);
  g_autoptr (GPtrArray) feedback = hz_learn_dataset_feedback_groups (d, model, max_tokens, &error);
  if (feedback == NULL)
    return fail (prompts, error);
  if (sampled->len > 0 && reward == NULL)
    return usage_error (ctx, "prompts without replies need --reward");
  if (sampled->len == 0 && feedback->len == 0)
    {
      fprintf (stderr, "hanzo learn: %s: no prompts and no feedback groups to train on\n",
               prompts);
      return 1;
    }
  g_autoptr (HzLora) lora = hz_lora_new (&llm->hp, &cfg, &error);
  if (!lora)
    return fail ("adapter", error);
  hz_lora_init_peft (lora, 1);
  g_autoptr (HzGrpoTrainer) t = hz_grpo_trainer_new (llm, model, lora, &p, max_tokens);
  for (int s = 0; s < o.steps; s++)
    {
      g_autoptr (GPtrArray) batch = g_ptr_array_new_with_free_func ((GDestroyNotify) hz_grpo_group_free);
      g_autoptr (GPtrArray) fixed = g_ptr_array_new ();
      for (int j = 0; j < per_step && sampled->len > 0; j++)
        {
          const HzLearnGroup *g = sampled->pdata[(s * per_step + j) % sampled->len];
          int64_t np;
          g_autofree char *text = NULL;
          g_autofree int32_t *ptok = hz_learn_context_tokens (model, g->context, &np, &text,
                                                              &error);
          if (ptok == NULL)
            return fail (prompts, error);
          if (np >= max_tokens)
            continue;
          const char *user = ((HzChatMessage *) g->context->pdata[g->context->len - 1])->content;
          g_ptr_array_add (batch, hz_grpo_trainer_sample (t, ptok, np, user, g->reference, reward));
        }
      for (int j = 0; j < per_step && feedback->len > 0; j++)
        g_ptr_array_add (fixed, feedback->pdata[(s * per_step + j) % feedback->len]);
      for (guint j = 0; j < fixed->len; j++)
        g_ptr_array_add (batch, fixed->pdata[j]);
      HzGrpoStepStats st;
      hz_grpo_trainer_step (t, (HzGrpoGroup *const *) batch->pdata, (int) batch->len, &st);
      g_ptr_array_set_size (batch, batch->len - fixed->len);   /* feedback groups are reused */
      if (s == 0 || (s + 1) % 5 == 0 || s + 1 == o.steps)
        printf ("step %4d/%d  reward %.3f  kl %.4f  loss %+.4f  len %.1f\n", s + 1, o.steps,
                st.mean_reward, st.mean_kl, st.loss, st.mean_length);
      fflush (stdout);
    }
  if (!hz_learn_save_adapter (lora, o.out, hz_model_name (model), &error))
    return fail (o.out, error);
  out.keep = TRUE;
  printf ("adapter written to %s\n", o.out);
  return 0;
}

static int
cmd_merge (int argc, char **argv)
{
  g_autofree char *model_path = NULL, *adapter = NULL, *out = NULL, *type_name = NULL;
  GOptionEntry entries[] = {
    { "model", 'm', 0, G_OPTION_ARG_FILENAME, &model_path, "Base model (GGUF)", "BASE.gguf" },
    { "adapter", 'a', 0, G_OPTION_ARG_FILENAME, &adapter, "PEFT adapter directory (or a GGUF LoRA)", "DIR" },
    { "out", 'o', 0, G_OPTION_ARG_FILENAME, &out, "Merged model to write", "MERGED.gguf" },
    { "type", 0, 0, G_OPTION_ARG_STRING, &type_name, "Type of the merged matrices (default: keep)", "TYPE" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("— bake an adapter into a GGUF");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    return usage_error (ctx, error->message);
  const HzQuantTraits *qt = type_name ? hz_quant_traits_by_name (type_name) : NULL;
  if (!model_path || !adapter || !out || (type_name && !qt))
    return usage_error (ctx, "need -m, --adapter, --out (and a known --type)");
  g_autoptr (HzGguf) g = hz_gguf_open (model_path, &error);
  g_autoptr (HzLlm) llm = g ? hz_llm_load (g, &error) : NULL;
  if (!llm)
    return fail (model_path, error);
  g_autoptr (HzLora) lora = g_file_test (adapter, G_FILE_TEST_IS_DIR)
                            ? hz_lora_load_peft (adapter, &llm->hp, &error)
                            : hz_lora_load_gguf (adapter, &llm->hp, &error);
  if (!lora)
    return fail (adapter, error);
  if (!hz_lora_merge_gguf (model_path, lora, qt ? (int) qt->type : -1, out, &error))
    return fail (out, error);
  printf ("merged %s into %s\n", adapter, out);
  return 0;
}

/* The adapter config JSON of a PEFT adapter directory, for `hanzo-aggregator --config`
 * (egress/lora-delta.h: the order and hash the learner's uploads carry). */
static int
cmd_fed_config (int argc, char **argv)
{
  g_autoptr (GOptionContext) ctx = g_option_context_new ("ADAPTER_DIR — print the federation "
                                                         "config of an adapter");
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    return usage_error (ctx, error->message);
  if (argc != 2)
    return usage_error (ctx, "need one adapter directory");
  g_autoptr (HzDeltaConfig) cfg = hz_delta_config_new_from_peft (argv[1], &error);
  if (cfg == NULL)
    return fail (argv[1], error);
  g_autofree char *json = hz_delta_config_to_json (cfg);
  printf ("%s\n", json);
  return 0;
}

int
hz_cmd_learn (int argc, char **argv)
{
  static const struct { const char *name; int (*fn) (int, char **); const char *summary; } subs[] = {
    { "sft", cmd_sft, "supervised LoRA fine-tuning on a JSONL dataset" },
    { "grpo", cmd_grpo, "GRPO with verifiable rewards / feedback groups" },
    { "merge", cmd_merge, "bake an adapter into a new GGUF" },
    { "fed-config", cmd_fed_config, "print an adapter's config for hanzo-aggregator --config" },
  };
  if (argc >= 2)
    for (guint i = 0; i < G_N_ELEMENTS (subs); i++)
      if (g_str_equal (argv[1], subs[i].name))
        {
          g_autofree char *prg = g_strdup_printf ("hanzo learn %s", subs[i].name);
          g_set_prgname (prg);   /* GOption's "Usage: hanzo learn NAME [OPTION…]" */
          return subs[i].fn (argc - 1, argv + 1);
        }
  /* --help (or help, -h): usage on stdout, exit 0; anything else is a usage error */
  const gboolean help = argc >= 2 && (g_str_equal (argv[1], "--help") ||
                                      g_str_equal (argv[1], "-h") || g_str_equal (argv[1], "help"));
  FILE *out = help ? stdout : stderr;
  if (argc >= 2 && !help)
    {
      g_autofree char *shown = hz_cli_escape (argv[1]);
      fprintf (stderr, "hanzo learn: unknown command '%s'\n\n", shown);
    }
  fprintf (out, "Usage: hanzo learn COMMAND [OPTION…]\n\nCommands:\n");
  int w = 0;
  for (guint i = 0; i < G_N_ELEMENTS (subs); i++)
    w = MAX (w, (int) strlen (subs[i].name));
  for (guint i = 0; i < G_N_ELEMENTS (subs); i++)
    fprintf (out, "  %-*s  %s\n", w, subs[i].name, subs[i].summary);
  fprintf (out, "\nRun 'hanzo learn COMMAND --help' for the options of a command.\n");
  return help ? 0 : 2;
}
