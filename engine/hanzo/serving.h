/* hanzo/serving.h — multi-tenant serving on one engine: many concurrent requests over a
 * paged KV cache with continuous batching, prefix caching and preemption (HzServe), and
 * several models loaded on demand under a memory budget (HzRegistry).
 *
 * Design sources: PagedAttention (Kwon et al., SOSP 2023) for the KV memory — blocks of s
 * tokens in one pool, per-sequence block tables, copy-on-write sharing; Orca (Yu et al.,
 * OSDI 2022) for iteration-level scheduling — every step is one forward pass over the
 * decode tokens of all running sequences plus prompt chunks of new ones; vLLM's automatic
 * prefix caching — full blocks keyed by the hash of their whole token prefix, reused by
 * later requests. Internals: engine/kv-paged.h, prefix-cache.h, scheduler.h.
 *
 * Use (the app's engine worker, the learner's GRPO rollouts):
 *   HzServe *srv = hz_serve_new (model, &params, &error);
 *   hz_serve_submit (srv, prompt, n, &req, on_token, on_done, data, &error);  // any thread
 *   hz_serve_start (srv);          // a loop thread steps while there is work
 *   ...  or, single-threaded: while (hz_serve_step (srv, &error)) ;
 *
 * Results are deterministic: a request's tokens do not depend on what else runs, on
 * preemption or on prefix-cache hits (greedy is bit-identical; a seeded sampler draws the
 * same numbers), because every row of a batch is computed independently.
 *
 * Units: tokens; bytes; seconds (double). Errors: GError in HZ_SERVE_ERROR or
 * HZ_ENGINE_ERROR (hanzo/engine.h).
 */
#pragma once

#include "hanzo/engine.h"
#include "hanzo/json-constrain.h"

G_BEGIN_DECLS

#define HZ_SERVE_ERROR (hz_serve_error_quark ())
GQuark hz_serve_error_quark (void);
typedef enum {
  HZ_SERVE_ERROR_NOT_FOUND,  /* no model or request of that name / id */
  HZ_SERVE_ERROR_BUSY,       /* the model is in use (unload) */
  HZ_SERVE_ERROR_BUDGET,     /* the model does not fit the registry's memory budget */
  HZ_SERVE_ERROR_TOO_LONG,   /* the prompt does not fit a sequence (max_seq_len) */
  HZ_SERVE_ERROR_EXISTS,     /* a model or alias of that name is registered already */
} HzServeError;

/** Priority classes: interactive chat preempts background work under memory pressure and
 *  is admitted first. */
typedef enum {
  HZ_PRIORITY_INTERACTIVE = 0,
  HZ_PRIORITY_BACKGROUND = 1,
} HzPriority;

/* ------------------------------------------------------------------ HzServe */

typedef struct {
  guint    block_size;       /* tokens per KV block (s); 0 = 16 */
  guint    n_blocks;         /* KV blocks in the pool (P); 0 = from kv_bytes */
  guint64  kv_bytes;         /* KV memory when n_blocks is 0; 0 = 256 MiB, 4 GiB of device
                                memory when serving on the GPU (at most what
                                max_seqs sequences of max_seq_len tokens need) */
  guint    max_batch_tokens; /* tokens per step: decode tokens + prompt chunks; 0 = 256 */
  guint    max_seqs;         /* sequences running at once; 0 = 64 */
  guint    max_seq_len;      /* positions per sequence; 0 = the model's context length */
  gboolean prefix_cache;     /* reuse computed blocks of shared prefixes (default TRUE) */
  gboolean fcfs;             /* fallback: no paging, one request at a time, first come
                                first served, on an HzContext (default FALSE) */
  guint    n_threads;        /* compute threads; 0 = the model's */
} HzServeParams;

/** Defaults as documented above (prefix_cache TRUE). */
void hz_serve_params_init (HzServeParams *p);

/** A token and its log-probability: ln of its softmax probability over the model's raw
 *  logits (before penalties, temperature and truncation: the model's own distribution, as
 *  OpenAI's logprobs report it), computed in double precision. */
typedef struct {
  HzToken token;
  float   logprob;
} HzTokenLogprob;

#define HZ_SERVE_MAX_TOP_LOGPROBS 20

/** Called on the stepping thread for each new token of (request, sample) of a request with
 *  on_logprobs set, before its on_token: `chosen` is the sampled token, `top` the n_top
 *  most likely tokens, most likely first (equal ones: lower id first). Both are valid
 *  during the call only. */
typedef void (*HzServeLogprobsFunc) (guint64 request, guint sample, const HzTokenLogprob *chosen,
                                     const HzTokenLogprob *top, guint n_top,
                                     gpointer user_data);

typedef struct {
  HzPriority      priority;
  HzSamplerParams sampler;     /* sample i of n_samples uses seed sampler.seed + i */
  int32_t         n_predict;   /* max new tokens; < 0: until EOG or max_seq_len */
  gboolean        ignore_eog;
  guint           n_samples;   /* 0 or 1: one continuation; k: k continuations of the
                                  prompt sharing its KV blocks (forked after the prompt) */
  const char *const *stop_strings; /* NULL-terminated, may be NULL; copied at submit. A
                                      sample ends (HZ_STOP_STRING) at the first occurrence;
                                      neither the stop string nor text after it reaches
                                      on_token (text that could begin one is held back) */
  /* LoRA adapters of this request (hanzo/engine.h HzAdapter), applied in order without
   * merging: y = W x + sum_i adapter_scales[i] * scaling_i * B_i (A_i x). Requests with
   * different adapters run in the same batch (each row uses its own); the prefix cache
   * shares blocks only between requests with the same adapters and scales. Referenced at
   * submit (the caller may unref after). adapter_scales NULL: 1 each; 0 leaves an adapter
   * out. Always on the CPU. */
  HzAdapter *const *adapters;        /* [n_adapters], may be NULL when n_adapters is 0 */
  const float      *adapter_scales;  /* [n_adapters] or NULL */
  guint             n_adapters;
  /* Log-probabilities (OpenAI's logprobs / top_logprobs): when on_logprobs is set it is
   * called for each new token, on the stepping thread, just before on_token, with the
   * token's log-probability and the n_top_logprobs most likely tokens (at most
   * HZ_SERVE_MAX_TOP_LOGPROBS). */
  HzServeLogprobsFunc on_logprobs;
  guint               n_top_logprobs;
  /* TRUE: on_token's text also has the control tokens' texts (e.g. gpt-oss's harmony
   * markers, for a reply parsed for tool calls), as hz_model_detokenize(special = TRUE) */
  gboolean            special;
  /* Constrained JSON output (hanzo/json-constrain.h; referenced at submit; NULL: free
   * text): each sample's text is a JSON value of this schema — only tokens that continue
   * it are sampled, end-of-generation only once it is complete (then it ends the sample
   * even with ignore_eog), and it closes within n_predict tokens (and the sequence's
   * positions) where the vocabulary allows. Stop strings still apply. */
  HzJsonSchema       *json;
} HzRequestParams;

void hz_request_params_init (HzRequestParams *p);  /* interactive, greedy, n_predict -1 */

typedef struct {
  guint64      request;
  guint        sample;              /* 0 .. n_samples-1 */
  guint        n_prompt;
  guint        n_prompt_cached;     /* prompt tokens found in the prefix cache at admission */
  guint        n_prompt_evaluated;  /* prompt positions computed (with recomputation after
                                       preemption; 0 for a fork's shared prompt) */
  guint        n_generated;
  guint        n_preemptions;
  double       ttft_seconds;        /* submit -> first token */
  double       total_seconds;       /* submit -> done */
  HzStopReason stop_reason;         /* EOG, LENGTH, STRING, CONTEXT_FULL, CANCELLED, CALLBACK */
  const HzToken *tokens;            /* the generated tokens (valid during the callback) */
} HzServeResult;

/** Called on the stepping thread for each new token of (request, sample); `text` is the
 *  newly completed UTF-8 text (may be ""). Return FALSE to stop that sample
 *  (HZ_STOP_CALLBACK). */
typedef gboolean (*HzServeTokenFunc) (guint64 request, guint sample, HzToken token,
                                      const char *text, gpointer user_data);
/** Called once per sample when it ends, on the stepping thread (or in hz_serve_free for
 *  requests still queued: HZ_STOP_CANCELLED). */
typedef void (*HzServeDoneFunc) (const HzServeResult *result, gpointer user_data);

typedef struct _HzServe HzServe;

/** Create a server for `model` (which must outlive it): KV pool, prefix cache, scheduler
 *  and a CPU forward pass sized for max_batch_tokens rows. Errors:
 *  HZ_ENGINE_ERROR_INVALID_ARGUMENT (vocab-only model, pool too large). */
HzServe *hz_serve_new (HzModel *model, const HzServeParams *params, GError **error);
/** Stops the loop thread if started; requests still queued end as HZ_STOP_CANCELLED. */
void     hz_serve_free (HzServe *srv);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzServe, hz_serve_free)

/** Queue a request (copied). Thread-safe. Returns its id (> 0), or 0 with an error:
 *  HZ_ENGINE_ERROR_INVALID_ARGUMENT (empty prompt, token outside the vocabulary, NULL
 *  adapter, scale not finite, adapters on a server stepping on the GPU — it applies no
 *  LoRA yet; HZ_DEVICE=cpu serves on the CPU), HZ_ENGINE_ERROR_ADAPTER_MISMATCH (an adapter does not fit
 *  the model),
 *  HZ_SERVE_ERROR_TOO_LONG (n_prompt > max_seq_len). `params` may be NULL. */
guint64  hz_serve_submit (HzServe *srv, const HzToken *prompt, gsize n_prompt,
                          const HzRequestParams *params, HzServeTokenFunc on_token,
                          HzServeDoneFunc on_done, gpointer user_data, GError **error);
/** Make the vocabulary tables of constrained JSON output (HzRequestParams.json) now, on
 *  the calling thread, unless they are made: about 0.1-0.5 s for a 150k-token vocabulary,
 *  which the first JSON request would otherwise spend on the stepping thread, holding up
 *  every running request. Thread-safe (two callers may both build; one table is kept). */
void     hz_serve_prepare_json (HzServe *srv);
/** Ask a request to stop; its samples end (HZ_STOP_CANCELLED) at the next step. Unknown
 *  or finished ids are ignored. Thread-safe. */
void     hz_serve_cancel (HzServe *srv, guint64 request);

/** One scheduling step: admit, run one forward pass over the batch, sample, call back.
 *  Returns FALSE when there was nothing to do (or on error, with `error` set: a failed
 *  forward pass ends the batch's requests with HZ_STOP_CANCELLED). Not thread-safe: call
 *  from one thread, and not while the loop thread runs. */
gboolean hz_serve_step (HzServe *srv, GError **error);
/** Step until no request is queued or running. */
gboolean hz_serve_run (HzServe *srv, GError **error);

/** Start / stop a loop thread that steps while there is work and sleeps otherwise;
 *  callbacks then run on it. hz_serve_stop waits for the current step. */
void     hz_serve_start (HzServe *srv);
void     hz_serve_stop (HzServe *srv);
/** Block until every submitted request has finished (loop thread mode). Thread-safe. */
void     hz_serve_wait_idle (HzServe *srv);

typedef struct {
  guint64 n_steps;
  guint64 n_tokens_evaluated;   /* rows of all forward passes */
  guint64 n_prompt_evaluated;   /* of which prompt positions */
  guint64 n_prompt_cached;      /* prompt tokens taken from the prefix cache */
  guint64 n_generated;
  guint64 n_preemptions;
  guint   n_blocks, n_blocks_free;  /* pool; free includes evictable cached blocks */
  guint   n_running, n_waiting;
} HzServeStats;

/** A snapshot of the counters. Thread-safe. */
void hz_serve_get_stats (HzServe *srv, HzServeStats *stats);

/* --------------------------------------------------------------- HzRegistry */

/** Models by name (and aliases), loaded on first use, unloaded explicitly or when the
 *  memory budget needs room (least recently used first, never one in use). A model's size
 *  is its file size (the weights are mmap'ed). Thread-safe (one internal lock; loading
 *  happens outside it, concurrent acquirers of a loading model wait for it). */
typedef struct _HzRegistry HzRegistry;

/** budget_bytes: most bytes of loaded models; 0 = unlimited. */
HzRegistry *hz_registry_new (guint64 budget_bytes);
/** Unloads everything; models must have been released. */
void        hz_registry_free (HzRegistry *reg);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzRegistry, hz_registry_free)

/** Register `path` under `name` (not loaded yet). `params` may be NULL (copied).
 *  Errors: HZ_SERVE_ERROR_EXISTS. */
gboolean hz_registry_add (HzRegistry *reg, const char *name, const char *path,
                          const HzModelParams *params, GError **error);
/** Another name for a registered model ("chat" -> "qwen2.5-1.5b-q4"). Re-pointing an
 *  existing alias is allowed. Errors: HZ_SERVE_ERROR_NOT_FOUND (target),
 *  HZ_SERVE_ERROR_EXISTS (a model of that name). */
gboolean hz_registry_alias (HzRegistry *reg, const char *alias, const char *name,
                            GError **error);
/** The model (loading it first if needed; LRU idle models are unloaded to respect the
 *  budget), with a use count + 1: release it with hz_registry_release. Errors:
 *  HZ_SERVE_ERROR_NOT_FOUND, HZ_SERVE_ERROR_BUDGET, hz_model_load's errors. */
HzModel    *hz_registry_acquire (HzRegistry *reg, const char *name, GError **error);
void        hz_registry_release (HzRegistry *reg, HzModel *model);
/** Unload now (it reloads on the next acquire). Errors: HZ_SERVE_ERROR_NOT_FOUND,
 *  HZ_SERVE_ERROR_BUSY (in use). Unloading a model that is not loaded succeeds. */
gboolean    hz_registry_unload (HzRegistry *reg, const char *name, GError **error);
/** Remove a model (unloaded, not in use) and its aliases. Errors as hz_registry_unload. */
gboolean    hz_registry_remove (HzRegistry *reg, const char *name, GError **error);
gboolean    hz_registry_is_loaded (HzRegistry *reg, const char *name);
/** Bytes of the loaded models. */
guint64     hz_registry_loaded_bytes (HzRegistry *reg);
/** Registered model names (not aliases), sorted; g_strfreev. */
char      **hz_registry_list (HzRegistry *reg);
/** Loads performed so far (cold starts, reloads included). */
guint       hz_registry_n_loads (HzRegistry *reg);

G_END_DECLS
