/* tools/hanzo-gen-common.h — options and helpers shared by `hanzo generate`, `hanzo chat`
 * and `hanzo bench`: model/context/sampling options as GOptionEntry tables, loading a
 * model with a clear message, and names of stop reasons. */
#pragma once

#include <glib.h>
#include "hanzo/engine.h"

G_BEGIN_DECLS

/** ctx_size/batch_size when the option was not given. */
#define HZ_GEN_UNSET G_MININT

typedef struct {
  char    *model;          /* -m: GGUF file or Hugging Face folder */
  char    *isq;            /* --isq TYPE: quantize at load (NULL: as stored) */
  char    *vocab;          /* --vocab FILE: tokenizer GGUF for a folder */
  int      threads;        /* -t, 0 = all cores */
  int      ctx_size;       /* -c, HZ_GEN_UNSET = model default (<= 4096); given: >= 1 */
  int      batch_size;     /* -b, HZ_GEN_UNSET = 512; given: >= 1 */
  /* sampling: initialised from hz_sampler_params_init(), overwritten by given options */
  double   temp, top_p, min_p, repeat_penalty, presence_penalty, frequency_penalty;
  int      top_k, repeat_last_n;
  gint64   seed;
  int      n_predict;      /* -n */
  gboolean ignore_eos;
  char   **lora;           /* --lora PATH[:SCALE], repeatable (NULL-terminated or NULL) */
} HzGenOpts;

/** Defaults: sampler defaults (greedy), n_predict as given. */
void hz_gen_opts_init (HzGenOpts *o, int n_predict);
void hz_gen_opts_clear (HzGenOpts *o);

typedef enum {
  HZ_GEN_OPT_SAMPLING   = 1 << 0,  /* -n and the sampling options */
  HZ_GEN_OPT_NO_THREADS = 1 << 1,  /* leave -t to the command */
} HzGenOptFlags;

/** Add the model/context options (-m, --isq, --vocab, --lora, -t unless
 *  HZ_GEN_OPT_NO_THREADS, -c, -b) and, with
 *  HZ_GEN_OPT_SAMPLING, the sampling and length options (-n, --temp, --top-k, --top-p,
 *  --min-p, --repeat-penalty, --repeat-last-n, --presence-penalty, --frequency-penalty,
 *  --seed, --ignore-eos) to a GOptionContext's main group. `o` must outlive the context. */
void hz_gen_opts_add (GOptionContext *ctx, HzGenOpts *o, HzGenOptFlags flags);

/** Largest accepted --threads value (0 = all cores). */
#define HZ_MAX_THREADS 1024

/** TRUE when 0 <= threads <= HZ_MAX_THREADS; else prints "hanzo CMD: OPT must be 0 (all
 *  cores) or 1..1024, not N" on stderr and returns FALSE (callers exit 2). */
gboolean hz_cli_check_threads (const char *cmd, const char *opt, gint64 threads);

/** When the `len` bytes at `s` are not valid UTF-8 (NUL bytes count as invalid, as in
 *  g_utf8_validate_len), prints "hanzo CMD: warning: WHAT is not valid UTF-8 (first bad
 *  byte at offset N); invalid bytes are replaced by U+FFFD" on stderr and returns the text
 *  repaired by g_utf8_make_valid (each invalid byte, and each NUL, becomes U+FFFD), its
 *  length in *out_len. NULL (nothing printed) when the text is valid. The one behaviour of
 *  every subcommand for text that is not UTF-8 (options such as `generate --prompt` and
 *  `chat --system`, which are parsed as G_OPTION_ARG_FILENAME: bytes as given, whatever
 *  the locale; lines, files and stdin of `chat`, `tokenize`, `perplexity`; `redact` says
 *  the same in its own words). */
char *hz_cli_utf8_repair (const char *cmd, const char *what, const char *s, gsize len,
                          gsize *out_len);

/** All bytes of PATH, or of stdin when PATH is "-", NUL bytes included (a NUL is
 *  appended after *len bytes). NULL with error on failure. */
char *hz_cli_read_all (const char *path, gsize *len, GError **error);

/** Validate the ranges of the options added by hz_gen_opts_add (-t, -c, -b and, with
 *  HZ_GEN_OPT_SAMPLING, -n, --top-k, --top-p, --min-p, --repeat-last-n, penalties).
 *  Prints a message naming the option on stderr and returns FALSE (exit 2) when one is
 *  out of range. */
gboolean hz_gen_opts_check (const HzGenOpts *o, const char *cmd, HzGenOptFlags flags);

/** Fill generation and context parameters from the options. */
void hz_gen_opts_apply (const HzGenOpts *o, HzGenerateParams *gp, HzContextParams *cp);

/** Load o->model (with o->isq / o->vocab); on failure print "hanzo CMD: cannot load model
 *  'PATH': reason" on stderr and return NULL. With --isq, prints one line on stderr with
 *  the type and the conversion time. */
HzModel *hz_gen_opts_load (const HzGenOpts *o, const char *cmd);

/** Largest |scale| hz_gen_opts_set_lora accepts for an adapter (a larger one only makes
 *  the logits overflow). */
#define HZ_CLI_LORA_MAX_SCALE 100.0

/** Split a --lora argument "PATH[:SCALE]" (as llama.cpp's --lora / --lora-scaled): the
 *  text after the last ':' is the scale when it parses whole as a number (which may be
 *  nan, inf or out of range: the caller checks), else the whole argument is the path and
 *  the scale 1. *path is newly allocated (g_free). */
void hz_cli_parse_lora (const char *arg, char **path, float *scale);

/** Load o->lora's adapters for `model` and set them on `ctx` (hz_context_set_adapters, in
 *  the order given). No --lora: nothing to do, TRUE. On failure prints "hanzo CMD: --lora
 *  PATH: reason" on stderr and returns FALSE (callers exit 1). */
gboolean hz_gen_opts_set_lora (const HzGenOpts *o, const char *cmd, HzModel *model,
                               HzContext *ctx);

/** Load `path` as hz_gen_opts_load does, for commands with their own option tables
 *  (`hanzo perplexity`): n_threads 0 = all cores, isq and vocab nullable. */
HzModel *hz_cli_load_model (const char *cmd, const char *path, guint n_threads,
                            const char *isq, const char *vocab);

/** GOptionEntry help texts of --isq and --vocab, shared by every command that loads. */
#define HZ_CLI_ISQ_HELP \
  "Quantize the weights at load: Q8_0, Q4_K (= Q4_K_M), Q6_K, IQ4_XS, ... (hanzo quantize --list)"
#define HZ_CLI_VOCAB_HELP \
  "Model given as a Hugging Face folder: the tokenizer from this GGUF (else tokenizer.json)"

/** Load o->model, fill `gp` from the options and create a context (n_ctx/n_batch/threads
 *  from the options) with the --lora adapters set. `o` is cleared in every case. Returns TRUE with *model and *ctx set
 *  (the caller frees them), or FALSE after printing "hanzo CMD: reason" on stderr (exit 1). */
gboolean hz_gen_opts_open (HzGenOpts *o, const char *cmd, HzModel **model, HzContext **ctx,
                           HzGenerateParams *gp);

/** "eog", "length", "stop-string", "cancelled", "callback", "context-full" or "none". */
const char *hz_stop_reason_name (HzStopReason r);

G_END_DECLS
