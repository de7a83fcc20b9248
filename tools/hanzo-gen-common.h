/* tools/hanzo-gen-common.h — options and helpers shared by `hanzo generate`, `hanzo chat`
 * and `hanzo bench`: model/context/sampling options as GOptionEntry tables, loading a
 * model with a clear message, and names of stop reasons. */
#pragma once

#include <glib.h>
#include "hanzo/engine.h"

G_BEGIN_DECLS

typedef struct {
  char    *model;          /* -m */
  int      threads;        /* -t, 0 = all cores */
  int      ctx_size;       /* -c, 0 = model default (<= 4096) */
  int      batch_size;     /* -b, 0 = 512 */
  /* sampling: initialised from hz_sampler_params_init(), overwritten by given options */
  double   temp, top_p, min_p, repeat_penalty, presence_penalty, frequency_penalty;
  int      top_k, repeat_last_n;
  gint64   seed;
  int      n_predict;      /* -n */
  gboolean ignore_eos;
} HzGenOpts;

/** Defaults: sampler defaults (greedy), n_predict as given. */
void hz_gen_opts_init (HzGenOpts *o, int n_predict);
void hz_gen_opts_clear (HzGenOpts *o);

typedef enum {
  HZ_GEN_OPT_SAMPLING   = 1 << 0,  /* -n and the sampling options */
  HZ_GEN_OPT_NO_THREADS = 1 << 1,  /* leave -t to the command */
} HzGenOptFlags;

/** Add the model/context options (-m, -t unless HZ_GEN_OPT_NO_THREADS, -c, -b) and, with
 *  HZ_GEN_OPT_SAMPLING, the sampling and length options (-n, --temp, --top-k, --top-p,
 *  --min-p, --repeat-penalty, --repeat-last-n, --presence-penalty, --frequency-penalty,
 *  --seed, --ignore-eos) to a GOptionContext's main group. `o` must outlive the context. */
void hz_gen_opts_add (GOptionContext *ctx, HzGenOpts *o, HzGenOptFlags flags);

/** Fill generation and context parameters from the options. */
void hz_gen_opts_apply (const HzGenOpts *o, HzGenerateParams *gp, HzContextParams *cp);

/** Load o->model; on failure print "hanzo CMD: cannot load model 'PATH': reason" on
 *  stderr and return NULL. */
HzModel *hz_gen_opts_load (const HzGenOpts *o, const char *cmd);

/** "eog", "length", "stop-string", "cancelled", "callback", "context-full" or "none". */
const char *hz_stop_reason_name (HzStopReason r);

G_END_DECLS
