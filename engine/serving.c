/* engine/serving.c — HzServe: requests, the serving loop, sampling and callbacks
 * (hanzo/serving.h). Memory and scheduling policy live in kv-paged.c, prefix-cache.c and
 * scheduler.c; the batched forward pass in cpu/forward-paged.c, or on the GPU in
 * backend-hip/forward-gpu-paged.c when a GPU build finds a device (HZ_DEVICE=cpu: never).
 *
 * Threads: submit / cancel / stats / wait_idle take `lock` (a pthread mutex: GLib's
 * futex-based GMutex is invisible to ThreadSanitizer); everything else — the scheduler,
 * the pool, samples — belongs to the stepping thread.
 */
#include "hanzo/serving.h"

#include <math.h>
#include <pthread.h>
#include <string.h>
#include "backend-hip/forward-gpu-paged.h"
#include "cpu/forward-paged.h"
#include "cpu/forward.h"
#include "cpu/matmul.h"
#include "json-constrain.h"
#include "kv-paged.h"
#include "lora-adapter.h"
#include "model-private.h"
#include "prefix-cache.h"
#include "sampler.h"
#include "scheduler.h"
#include "stop-scan.h"
#include "tokenizer.h"

G_DEFINE_QUARK (hz-serve-error-quark, hz_serve_error)

#define DEFAULT_KV_BYTES ((guint64) 256 << 20)
#define DEFAULT_GPU_KV_BYTES ((guint64) 4 << 30)   /* device memory: a 7B model's 4k tokens */

/* GPU serving step (issue 5): linked in by -Dcuda / -Dhip builds, NULL otherwise (as the
 * GPU decode of model-context.c). */
#pragma weak hz_gpu_paged_new
#pragma weak hz_gpu_paged_free
#pragma weak hz_gpu_paged_forward
#pragma weak hz_gpu_paged_describe

typedef struct _Request Request;

/* One continuation of a request: a sequence with its own sampler. */
typedef struct {
  Request       *req;
  guint          index;
  HzSchedSeq    *seq;        /* tokens (prompt + generated); in the scheduler if paged */
  HzSampler     *sampler;
  HzDetokenizer *detok;
  HzStopScan    *stop;       /* stop strings over the streamed text */
  HzJsonState   *json;       /* the JSON constraint's state, or NULL */
  guint          n_generated, n_prompt_evaluated;
  gint64         t_first;
  gboolean       finished;
} Sample;

struct _Request {
  guint64          id;
  HzRequestParams  p;
  HzServeTokenFunc on_token;
  HzServeDoneFunc  on_done;
  gpointer         user_data;
  gint64           t_submit;
  GPtrArray       *samples;        /* Sample (owned) */
  HzToken         *prompt;
  GStrv            stop_strings;   /* owned copy of p.stop_strings */
  guint            n_prompt, n_live;
  HzLoraBinding    lora;           /* the request's adapters (cleared: the base) */
  float           *adapter_scales; /* owned copy of p.adapter_scales, or NULL */
  guint64          cache_salt;     /* srv->salts id of lora.key; 0 for the base */
  gboolean         forked;
  gboolean         cancel;         /* under srv->lock */
};

struct _HzServe {
  HzModel        *model;
  const HzLlm    *llm;
  HzServeParams   p;
  guint           n_vocab;

  /* paged path: the forward pass on the GPU (gpu) or the CPU (fwd) */
  HzGpuPaged     *gpu;
  HzCpuForward   *fwd;
  HzKvPool       *pool;
  HzPrefixCache  *cache;
  HzScheduler    *sched;
  HzSchedBatch    batch;
  float          *logits;          /* [max_seqs...][n_vocab], grown on demand */
  gsize           logits_rows;
  GArray         *row_tokens, *row_pos, *row_tables, *out_rows, *out_items;
  GArray         *row_lora;        /* const HzLoraStack *: each row's adapters, or NULL */

  /* fcfs path */
  HzContext      *ctx;
  GArray         *ctx_tokens;      /* what ctx's KV cache holds */
  GQueue          fcfs_queue;      /* Sample, arrival order */
  Sample         *fcfs_cur;
  guint64         fcfs_salt;       /* cache salt of the adapters set on ctx */

  GPtrArray      *active;          /* Request, stepping thread only */
  HzJsonVocab    *json_vocab;      /* hz_serve_prepare_json (atomic), or at the first JSON
                                      request on the stepping thread */
  guint64        *json_mask;       /* stepping thread */

  pthread_mutex_t lock;
  pthread_cond_t  wake, idle;
  GPtrArray      *incoming;        /* Request submitted, not yet seen by the loop */
  GHashTable     *by_id;           /* id -> Request, until done */
  GHashTable     *salts;           /* adapter binding key -> guint64 cache salt (> 0) */
  guint64         next_id;
  guint           n_pending;       /* submitted and not done */
  HzServeStats    stats;
  pthread_t       thread;
  gboolean        thread_running, stop;
};

void
hz_serve_params_init (HzServeParams *p)
{
  memset (p, 0, sizeof *p);
  p->prefix_cache = TRUE;
}

void
hz_request_params_init (HzRequestParams *p)
{
  memset (p, 0, sizeof *p);
  p->priority = HZ_PRIORITY_INTERACTIVE;
  hz_sampler_params_init (&p->sampler);
  p->n_predict = -1;
  p->n_samples = 1;
}

/* The pool: n_blocks, or kv_bytes' worth (default: 256 MiB, 4 GiB on the GPU), at most
 * what max_seqs full sequences need; with storage on the host unless `gpu`. Sets
 * p->n_blocks and clamps p->max_seq_len to what the pool holds. */
static HzKvPool *
serve_pool_new (HzServeParams *p, const HzHparams *hp, gboolean gpu, GError **error)
{
  HzKvPoolParams pp = { .block_size = p->block_size, .n_layer = gpu ? 0 : (guint) hp->n_layer,
                        .kv_dim_k = (guint) (hp->n_head_kv * hp->head_dim_k),
                        .kv_dim_v = (guint) (hp->n_head_kv * hp->head_dim_v) };
  const guint64 seq_blocks = (p->max_seq_len + p->block_size - 1) / p->block_size;
  /* sliding-window layers (Gemma, kv-paged.h) keep only their window: their storage is
   * n_slots slots, enough for every running sequence's window and its largest step */
  g_autofree guint8 *layer_swa = g_new0 (guint8, MAX (hp->n_layer, 1));
  guint n_win = 0;
  for (int il = 0; !gpu && hp->n_swa > 0 && il < hp->n_layer; il++)
    {
      layer_swa[il] = hz_layer_swa (hp, il);
      n_win += layer_swa[il];
    }
  const guint64 slots_bound = n_win == 0 ? 0
      : (guint64) p->max_seqs * (((guint64) hp->n_swa + p->max_batch_tokens + p->block_size - 1)
                                 / p->block_size + 2);
  const guint64 layer_block_bytes = (guint64) p->block_size * (pp.kv_dim_k + pp.kv_dim_v)
                                    * sizeof (float);
  guint64 n_blocks = p->n_blocks, n_slots = 0;
  if (n_blocks == 0)
    {
      const guint64 budget = p->kv_bytes ? p->kv_bytes : gpu ? DEFAULT_GPU_KV_BYTES : DEFAULT_KV_BYTES;
      const guint64 full_bytes = layer_block_bytes * (hp->n_layer - n_win);
      const guint64 all_bytes = layer_block_bytes * hp->n_layer;
      /* the window's slots first, the rest in full blocks; a budget too small for that
       * gives every block its slot */
      n_slots = MIN (slots_bound, seq_blocks * p->max_seqs);
      const guint64 rest = budget > n_slots * layer_block_bytes * n_win
                           ? budget - n_slots * layer_block_bytes * n_win : 0;
      n_blocks = n_win ? rest / MAX (full_bytes, 1) : budget / MAX (all_bytes, 1);
      if (n_blocks < n_slots)
        n_blocks = n_slots = budget / MAX (all_bytes, 1);
      n_blocks = MIN (n_blocks, seq_blocks * p->max_seqs);
      n_blocks = MAX (n_blocks, 1);
    }
  else
    n_slots = MIN (slots_bound, n_blocks);
  pp.n_blocks = (guint) MIN (n_blocks, (guint64) G_MAXINT32 / 2);
  if (n_win)
    {
      pp.n_swa = (guint) hp->n_swa;
      pp.layer_swa = layer_swa;
      pp.n_slots = (guint) MIN (MAX (n_slots, 1), pp.n_blocks);
    }
  HzKvPool *pool = hz_kv_pool_new (&pp, error);
  if (!pool)
    return NULL;
  p->n_blocks = pp.n_blocks;
  /* a sequence must fit the pool alone, or it could never be admitted */
  p->max_seq_len = (guint) MIN ((guint64) p->max_seq_len, (guint64) pp.n_blocks * p->block_size);
  return pool;
}

HzServe *
hz_serve_new (HzModel *model, const HzServeParams *params, GError **error)
{
  HzServeParams defaults;
  const HzLlm *llm = hz_model_get_llm (model);

  if (params == NULL)
    {
      hz_serve_params_init (&defaults);
      params = &defaults;
    }
  if (llm == NULL)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "model '%s' was loaded vocab-only and cannot run", hz_model_name (model));
      return NULL;
    }
  g_autoptr (HzServe) srv = g_new0 (HzServe, 1);
  srv->model = model;
  srv->llm = llm;
  srv->p = *params;
  srv->n_vocab = llm->hp.n_vocab;
  HzServeParams *p = &srv->p;
  p->block_size = p->block_size ? p->block_size : HZ_KV_DEFAULT_BLOCK_SIZE;
  p->max_batch_tokens = p->max_batch_tokens ? p->max_batch_tokens : 256;
  p->max_seqs = p->max_seqs ? p->max_seqs : 64;
  p->max_seq_len = p->max_seq_len ? p->max_seq_len : (guint) MAX (llm->hp.n_ctx_train, 1);
  const guint n_threads = p->n_threads ? p->n_threads : 0;
  pthread_mutex_init (&srv->lock, NULL);
  pthread_cond_init (&srv->wake, NULL);
  pthread_cond_init (&srv->idle, NULL);
  srv->incoming = g_ptr_array_new ();
  srv->by_id = g_hash_table_new (g_int64_hash, g_int64_equal);
  srv->salts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  srv->active = g_ptr_array_new ();
  srv->next_id = 1;
  g_queue_init (&srv->fcfs_queue);

  if (p->fcfs)
    {
      HzContextParams cp;
      hz_context_params_init (&cp);
      cp.n_ctx = p->max_seq_len;
      cp.n_batch = p->max_batch_tokens;
      cp.n_threads = n_threads;
      if (!(srv->ctx = hz_context_new (model, &cp, error)))
        return NULL;
      srv->ctx_tokens = g_array_new (FALSE, FALSE, sizeof (HzToken));
      return g_steal_pointer (&srv);
    }

  /* the GPU's pool keeps its storage on the device (a metadata-only host pool); the CPU's
   * is the fallback when no GPU opens */
  const gboolean want_gpu = hz_gpu_paged_new != NULL
                            && g_strcmp0 (g_getenv ("HZ_DEVICE"), "cpu") != 0;
  HzServeParams asked = *p;
  if (want_gpu && (srv->pool = serve_pool_new (p, &llm->hp, TRUE, error)))
    {
      g_autoptr (GError) local = NULL;
      srv->gpu = hz_gpu_paged_new (llm, srv->pool, p->max_batch_tokens, p->max_seq_len, &local);
      if (srv->gpu)
        g_message ("serving on the GPU: %s", hz_gpu_paged_describe (srv->gpu));
      else
        {
          g_message ("serving on the CPU: %s", local->message);
          g_clear_pointer (&srv->pool, hz_kv_pool_free);
          *p = asked;
        }
    }
  else if (want_gpu)
    return NULL;
  if (!srv->pool && !(srv->pool = serve_pool_new (p, &llm->hp, FALSE, error)))
    return NULL;
  if (p->prefix_cache)
    srv->cache = hz_prefix_cache_new (srv->pool);
  HzSchedulerParams sp = { p->max_batch_tokens, p->max_seqs };
  srv->sched = hz_scheduler_new (srv->pool, srv->cache, &sp);
  hz_sched_batch_init (&srv->batch);
  if (!srv->gpu)
    hz_cpu_llm_prepare (llm);
  if (!srv->gpu
      && !(srv->fwd = hz_cpu_forward_new (llm, p->max_batch_tokens, p->max_batch_tokens,
                                          n_threads ? n_threads : g_get_num_processors (),
                                          error)))
    return NULL;
  srv->row_tokens = g_array_new (FALSE, FALSE, sizeof (int32_t));
  srv->row_pos = g_array_new (FALSE, FALSE, sizeof (guint));
  srv->row_tables = g_array_new (FALSE, FALSE, sizeof (const gint32 *));
  srv->out_rows = g_array_new (FALSE, FALSE, sizeof (guint));
  srv->out_items = g_array_new (FALSE, FALSE, sizeof (guint));
  srv->row_lora = g_array_new (FALSE, FALSE, sizeof (const HzLoraStack *));
  srv->stats.n_blocks = p->n_blocks;
  return g_steal_pointer (&srv);
}

/* ----------------------------------------------------------------- requests */

static Sample *
sample_new (HzServe *srv, Request *req, guint index, const HzToken *tokens, guint n)
{
  Sample *s = g_new0 (Sample, 1);
  HzSamplerParams sp = req->p.sampler;
  s->req = req;
  s->index = index;
  s->seq = hz_sched_seq_new (req->id, req->p.priority, tokens, n);
  s->seq->user_data = s;
  s->seq->cache_salt = req->cache_salt;
  sp.seed += index;
  s->sampler = hz_sampler_new (&sp);
  for (guint i = 0; i < req->n_prompt; i++)
    hz_sampler_accept (s->sampler, req->prompt[i]);
  s->detok = hz_detokenizer_new (hz_model_get_tokenizer (srv->model), req->p.special);
  s->stop = hz_stop_scan_new ((const char *const *) req->stop_strings);
  if (req->p.json)
    s->json = hz_json_state_new (req->p.json);
  g_ptr_array_add (req->samples, s);
  req->n_live++;
  return s;
}

static void
sample_free (Sample *s)
{
  hz_sched_seq_free (s->seq);
  hz_sampler_free (s->sampler);
  hz_detokenizer_free (s->detok);
  hz_stop_scan_free (s->stop);
  hz_json_state_free (s->json);
  g_free (s);
}

static void
request_free (Request *req)
{
  g_ptr_array_unref (req->samples);
  g_free (req->prompt);
  g_strfreev (req->stop_strings);
  hz_lora_binding_clear (&req->lora);
  g_free (req->adapter_scales);
  g_clear_pointer (&req->p.json, hz_json_schema_unref);
  g_free (req);
}

guint64
hz_serve_submit (HzServe *srv, const HzToken *prompt, gsize n_prompt,
                 const HzRequestParams *params, HzServeTokenFunc on_token,
                 HzServeDoneFunc on_done, gpointer user_data, GError **error)
{
  HzRequestParams defaults;
  if (params == NULL)
    {
      hz_request_params_init (&defaults);
      params = &defaults;
    }
  if (n_prompt == 0)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "the prompt is empty (it needs at least one token, e.g. BOS)");
      return 0;
    }
  if (n_prompt > srv->p.max_seq_len)
    {
      g_set_error (error, HZ_SERVE_ERROR, HZ_SERVE_ERROR_TOO_LONG,
                   "the prompt has %" G_GSIZE_FORMAT " tokens but a sequence holds at most %u",
                   n_prompt, srv->p.max_seq_len);
      return 0;
    }
  for (gsize i = 0; i < n_prompt; i++)
    if (prompt[i] < 0 || (guint) prompt[i] >= srv->n_vocab)
      {
        g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                     "token id %d is outside the vocabulary [0, %u)", prompt[i], srv->n_vocab);
        return 0;
      }
  if (srv->gpu && params->n_adapters > 0)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "LoRA adapters are not applied by the GPU serving step (HZ_DEVICE=cpu "
                   "serves them on the CPU)");
      return 0;
    }
  HzLoraBinding lora;
  if (!hz_lora_binding_init (&lora, &srv->llm->hp, params->adapters, params->adapter_scales,
                             params->n_adapters, error))
    return 0;
  Request *req = g_new0 (Request, 1);
  req->p = *params;
  req->lora = lora;
  if (params->adapter_scales && params->n_adapters > 0)
    req->adapter_scales = g_memdup2 (params->adapter_scales,
                                     params->n_adapters * sizeof (float));
  req->p.adapters = (HzAdapter *const *) req->lora.refs;
  req->p.adapter_scales = req->adapter_scales;
  req->stop_strings = g_strdupv ((char **) params->stop_strings);
  req->p.stop_strings = (const char *const *) req->stop_strings;
  req->p.n_samples = MAX (req->p.n_samples, 1);
  if (params->json)
    req->p.json = hz_json_schema_ref (params->json);
  req->p.priority = req->p.priority == HZ_PRIORITY_BACKGROUND ? HZ_PRIORITY_BACKGROUND
                                                              : HZ_PRIORITY_INTERACTIVE;
  req->on_token = on_token;
  req->on_done = on_done;
  req->user_data = user_data;
  req->prompt = g_memdup2 (prompt, n_prompt * sizeof (HzToken));
  req->n_prompt = (guint) n_prompt;
  req->samples = g_ptr_array_new_with_free_func ((GDestroyNotify) sample_free);
  req->t_submit = g_get_monotonic_time ();

  pthread_mutex_lock (&srv->lock);
  if (req->lora.key[0] != '\0')
    {
      /* one salt per distinct adapter stack, for the server's lifetime */
      guint64 *salt = g_hash_table_lookup (srv->salts, req->lora.key);
      if (salt == NULL)
        {
          salt = g_new (guint64, 1);
          *salt = g_hash_table_size (srv->salts) + 1;
          g_hash_table_insert (srv->salts, g_strdup (req->lora.key), salt);
        }
      req->cache_salt = *salt;
    }
  req->id = srv->next_id++;
  g_ptr_array_add (srv->incoming, req);
  g_hash_table_insert (srv->by_id, &req->id, req);
  srv->n_pending++;
  pthread_cond_signal (&srv->wake);
  const guint64 id = req->id;
  pthread_mutex_unlock (&srv->lock);
  return id;
}

void
hz_serve_cancel (HzServe *srv, guint64 request)
{
  pthread_mutex_lock (&srv->lock);
  Request *req = g_hash_table_lookup (srv->by_id, &request);
  if (req)
    req->cancel = TRUE;
  pthread_cond_signal (&srv->wake);
  pthread_mutex_unlock (&srv->lock);
}

/* End a sample: out of the scheduler, result to the callback. */
static void
sample_finish (HzServe *srv, Sample *s, HzStopReason reason)
{
  Request *req = s->req;
  if (s->finished)
    return;
  s->finished = TRUE;
  if (srv->sched && s->seq->state != HZ_SEQ_NEW)
    hz_scheduler_remove (srv->sched, s->seq);
  const gint64 now = g_get_monotonic_time ();
  HzServeResult r = {
    .request = req->id, .sample = s->index, .n_prompt = req->n_prompt,
    .n_prompt_cached = s->index == 0 ? s->seq->n_cached : 0,
    .n_prompt_evaluated = s->n_prompt_evaluated, .n_generated = s->n_generated,
    .n_preemptions = s->seq->n_preemptions,
    .ttft_seconds = s->t_first ? (s->t_first - req->t_submit) / 1e6 : 0,
    .total_seconds = (now - req->t_submit) / 1e6, .stop_reason = reason,
    .tokens = (const HzToken *) (void *) s->seq->tokens->data + req->n_prompt,
  };
  if (req->on_done)
    req->on_done (&r, req->user_data);
  req->n_live--;
}

/* The log-probability of `chosen` and the n_top most likely tokens under softmax(logits),
 * for HzRequestParams.on_logprobs (n_top <= HZ_SERVE_MAX_TOP_LOGPROBS). */
static void
report_logprobs (HzServe *srv, Sample *s, const float *logits, HzToken chosen)
{
  Request *req = s->req;
  const guint n_top = MIN (req->p.n_top_logprobs, HZ_SERVE_MAX_TOP_LOGPROBS);
  HzTokenLogprob top[HZ_SERVE_MAX_TOP_LOGPROBS];
  guint n = 0;
  float max = logits[0];
  for (guint v = 1; v < srv->n_vocab; v++)
    max = MAX (max, logits[v]);
  double sum = 0;
  for (guint v = 0; v < srv->n_vocab; v++)
    {
      sum += exp ((double) logits[v] - max);
      /* insertion into the sorted top list: a later (higher) id goes after equal ones */
      if (n_top == 0 || (n == n_top && !(logits[v] > top[n - 1].logprob)))
        continue;
      guint at = n < n_top ? n++ : n - 1;
      while (at > 0 && logits[v] > top[at - 1].logprob)
        {
          top[at] = top[at - 1];
          at--;
        }
      top[at] = (HzTokenLogprob) { (HzToken) v, logits[v] };
    }
  const double log_z = max + log (sum);
  for (guint i = 0; i < n; i++)
    top[i].logprob = (float) (top[i].logprob - log_z);
  const HzTokenLogprob c = { chosen, (float) (logits[chosen] - log_z) };
  req->p.on_logprobs (req->id, s->index, &c, top, n, req->user_data);
}

void
hz_serve_prepare_json (HzServe *srv)
{
  if (g_atomic_pointer_get (&srv->json_vocab))
    return;
  HzJsonVocab *v = hz_json_vocab_new_from_tokenizer (hz_model_get_tokenizer (srv->model));
  if (!g_atomic_pointer_compare_and_exchange (&srv->json_vocab, NULL, v))
    hz_json_vocab_free (v);   /* another thread's came first */
}

/* The next token of a sample with a JSON constraint: sampled among the tokens its mask
 * allows within the budget (the tokens it may still generate), else among those that
 * continue the text at all; when none does, an end-of-generation token. */
static HzToken
sample_json (HzServe *srv, Sample *s, const float *logits)
{
  hz_serve_prepare_json (srv);
  const HzJsonVocab *v = g_atomic_pointer_get (&srv->json_vocab);
  if (srv->json_mask == NULL)
    srv->json_mask = g_new0 (guint64, MAX (hz_json_vocab_mask_words (v), (srv->n_vocab + 63) / 64));
  guint budget = srv->p.max_seq_len - s->seq->tokens->len;
  if (s->req->p.n_predict >= 0)
    budget = MIN (budget, (guint) s->req->p.n_predict - s->n_generated);
  if (hz_json_mask (v, s->json, budget, srv->json_mask) == 0 &&
      hz_json_mask (v, s->json, G_MAXUINT, srv->json_mask) == 0)
    return hz_json_vocab_any_eog (v) >= 0 ? hz_json_vocab_any_eog (v)
                                          : hz_sampler_sample (s->sampler, logits, (int32_t) srv->n_vocab);
  const HzToken tok = hz_sampler_sample_masked (s->sampler, logits, (int32_t) srv->n_vocab,
                                                srv->json_mask);
  hz_json_state_accept (s->json, v, tok);
  return tok;
}

/* Sample the next token of `s` from `logits`, append it, stream it, maybe finish. */
static void
sample_token (HzServe *srv, Sample *s, const float *logits)
{
  Request *req = s->req;
  const HzToken tok = s->json ? sample_json (srv, s, logits)
                              : hz_sampler_sample (s->sampler, logits, (int32_t) srv->n_vocab);
  hz_sampler_accept (s->sampler, tok);
  if (req->p.on_logprobs)
    report_logprobs (srv, s, logits, tok);
  g_array_append_val (s->seq->tokens, tok);
  s->n_generated++;
  if (s->n_generated == 1)
    s->t_first = g_get_monotonic_time ();

  HzStopReason reason = HZ_STOP_NONE;
  if ((!req->p.ignore_eog || s->json) && hz_model_is_eog (srv->model, tok))
    reason = HZ_STOP_EOG;
  else if (req->p.n_predict >= 0 && s->n_generated >= (guint) req->p.n_predict)
    reason = HZ_STOP_LENGTH;
  else if (s->seq->tokens->len >= srv->p.max_seq_len)
    reason = HZ_STOP_CONTEXT_FULL;  /* the new token would not have a position */
  const char *piece = hz_detokenizer_push_final (s->detok, tok, reason != HZ_STOP_NONE);
  gboolean hit = FALSE;
  const char *text = hz_stop_scan_push (s->stop, piece, reason != HZ_STOP_NONE, &hit);
  if (hit)
    reason = HZ_STOP_STRING;
  if (req->on_token && !req->on_token (req->id, s->index, tok, text, req->user_data))
    reason = HZ_STOP_CALLBACK;
  if (reason != HZ_STOP_NONE)
    sample_finish (srv, s, reason);
}

/* Take new requests and cancellations (under the lock), then act on them. */
static void
intake (HzServe *srv)
{
  g_autoptr (GPtrArray) fresh = g_ptr_array_new ();
  g_autoptr (GPtrArray) cancelled = g_ptr_array_new ();
  pthread_mutex_lock (&srv->lock);
  g_ptr_array_extend_and_steal (fresh, g_steal_pointer (&srv->incoming));
  srv->incoming = g_ptr_array_new ();
  for (guint i = 0; i < srv->active->len; i++)
    if (((Request *) srv->active->pdata[i])->cancel)
      g_ptr_array_add (cancelled, srv->active->pdata[i]);
  for (guint i = 0; i < fresh->len; i++)
    if (((Request *) fresh->pdata[i])->cancel)
      g_ptr_array_add (cancelled, fresh->pdata[i]);
  pthread_mutex_unlock (&srv->lock);

  for (guint i = 0; i < fresh->len; i++)
    {
      Request *req = fresh->pdata[i];
      g_ptr_array_add (srv->active, req);
      /* paged: one sequence, forked into n_samples after the prompt; fcfs: n in a row */
      const guint n = srv->sched ? 1 : req->p.n_samples;
      for (guint k = 0; k < n; k++)
        {
          Sample *s = sample_new (srv, req, k, req->prompt, req->n_prompt);
          if (srv->sched)
            hz_scheduler_add (srv->sched, s->seq);
          else
            g_queue_push_tail (&srv->fcfs_queue, s);
        }
      req->forked = srv->sched == NULL || req->p.n_samples == 1;
    }
  for (guint i = 0; i < cancelled->len; i++)
    {
      Request *req = cancelled->pdata[i];
      for (guint k = 0; k < req->samples->len; k++)
        {
          Sample *s = req->samples->pdata[k];
          if (!s->finished)
            {
              if (srv->fcfs_cur == s)
                srv->fcfs_cur = NULL;
              g_queue_remove (&srv->fcfs_queue, s);
              sample_finish (srv, s, HZ_STOP_CANCELLED);
            }
        }
    }
}

/* Drop finished requests; publish counters. */
static void
reap (HzServe *srv)
{
  guint n_done = 0;
  g_autoptr (GPtrArray) done = g_ptr_array_new_with_free_func ((GDestroyNotify) request_free);
  for (guint i = 0; i < srv->active->len;)
    {
      Request *req = srv->active->pdata[i];
      if (req->n_live == 0)
        {
          g_ptr_array_add (done, g_ptr_array_steal_index (srv->active, i));
          n_done++;
        }
      else
        i++;
    }
  pthread_mutex_lock (&srv->lock);
  for (guint i = 0; i < done->len; i++)
    g_hash_table_remove (srv->by_id, &((Request *) done->pdata[i])->id);
  srv->n_pending -= n_done;
  if (srv->sched)
    {
      srv->stats.n_blocks_free = hz_kv_pool_n_available (srv->pool);
      srv->stats.n_running = hz_scheduler_n_running (srv->sched);
      srv->stats.n_waiting = hz_scheduler_n_waiting (srv->sched);
      srv->stats.n_preemptions = hz_scheduler_n_preemptions (srv->sched);
    }
  else
    {
      srv->stats.n_running = srv->fcfs_cur != NULL;
      srv->stats.n_waiting = g_queue_get_length (&srv->fcfs_queue);
    }
  if (srv->n_pending == 0)
    pthread_cond_broadcast (&srv->idle);
  pthread_mutex_unlock (&srv->lock);
}

static void
count (HzServe *srv, guint64 evaluated, guint64 prompt, guint64 cached, guint64 generated)
{
  pthread_mutex_lock (&srv->lock);
  srv->stats.n_steps++;
  srv->stats.n_tokens_evaluated += evaluated;
  srv->stats.n_prompt_evaluated += prompt;
  srv->stats.n_prompt_cached += cached;
  srv->stats.n_generated += generated;
  pthread_mutex_unlock (&srv->lock);
}

/* ------------------------------------------------------------ paged step */

static gboolean
step_paged (HzServe *srv, GError **error)
{
  HzSchedBatch *b = &srv->batch;
  if (!hz_scheduler_schedule (srv->sched, b))
    return FALSE;

  /* rows of the forward pass, and which rows give logits */
  g_array_set_size (srv->row_tokens, 0);
  g_array_set_size (srv->row_pos, 0);
  g_array_set_size (srv->row_tables, 0);
  g_array_set_size (srv->out_rows, 0);
  g_array_set_size (srv->out_items, 0);
  g_array_set_size (srv->row_lora, 0);
  gboolean any_lora = FALSE;
  guint64 n_prompt_rows = 0, n_cached = 0;
  for (guint i = 0; i < b->items->len; i++)
    {
      const HzSchedItem *it = &g_array_index (b->items, HzSchedItem, i);
      Sample *s = it->seq->user_data;
      const gint32 *table = hz_kv_seq_table (it->seq->kv);
      const HzLoraStack *lora = s->req->lora.stack.n > 0 ? &s->req->lora.stack : NULL;
      any_lora |= lora != NULL;
      for (guint p = it->pos0; p < it->pos0 + it->n; p++)
        {
          g_array_append_val (srv->row_tokens, g_array_index (it->seq->tokens, HzToken, p));
          g_array_append_val (srv->row_pos, p);
          g_array_append_val (srv->row_tables, table);
          g_array_append_val (srv->row_lora, lora);
        }
      const guint np = s->req->n_prompt;
      const guint prompt_rows = MIN (it->pos0 + it->n, np) - MIN (it->pos0, np);
      s->n_prompt_evaluated += prompt_rows;
      n_prompt_rows += prompt_rows;
      if (it->pos0 == it->seq->n_cached && it->seq->n_preemptions == 0 && s->index == 0)
        n_cached += it->seq->n_cached;  /* first chunk after the first admission */
      if (it->logits)
        {
          const guint row = srv->row_tokens->len - 1;
          g_array_append_val (srv->out_rows, row);
          g_array_append_val (srv->out_items, i);
        }
    }
  if (srv->out_rows->len > srv->logits_rows)
    {
      srv->logits_rows = MAX (srv->out_rows->len, 2 * srv->logits_rows);
      g_free (srv->logits);
      srv->logits = g_new (float, srv->logits_rows * srv->n_vocab);
    }
  const HzPagedRows rows = {
    .tokens = (const int32_t *) (void *) srv->row_tokens->data,
    .pos = (const guint *) (void *) srv->row_pos->data,
    .tables = (const gint32 *const *) (void *) srv->row_tables->data,
    .n = srv->row_tokens->len,
    .out_rows = (const guint *) (void *) srv->out_rows->data,
    .n_out = srv->out_rows->len,
    .lora = any_lora ? (const HzLoraStack *const *) (void *) srv->row_lora->data : NULL,
  };
  if (!(srv->gpu ? hz_gpu_paged_forward (srv->gpu, &rows, srv->logits, error)
                 : hz_cpu_forward_paged (srv->fwd, srv->llm, srv->pool, &rows, srv->logits, error)))
    {
      for (guint i = 0; i < b->items->len; i++)
        sample_finish (srv, g_array_index (b->items, HzSchedItem, i).seq->user_data,
                       HZ_STOP_CANCELLED);
      return FALSE;
    }
  hz_scheduler_commit (srv->sched, b);

  guint64 generated = 0;
  for (guint k = 0; k < srv->out_items->len; k++)
    {
      const HzSchedItem *it = &g_array_index (b->items, HzSchedItem,
                                              g_array_index (srv->out_items, guint, k));
      Sample *s = it->seq->user_data;
      Request *req = s->req;
      const float *logits = srv->logits + (gsize) k * srv->n_vocab;
      if (!req->forked)
        {
          /* the prompt is computed: n_samples - 1 more sequences share its blocks */
          req->forked = TRUE;
          for (guint c = 1; c < req->p.n_samples; c++)
            {
              Sample *child = sample_new (srv, req, c, (const HzToken *) (void *) s->seq->tokens->data,
                                          s->seq->tokens->len);
              hz_scheduler_fork (srv->sched, s->seq, child->seq);
              sample_token (srv, child, logits);
              generated++;
            }
        }
      sample_token (srv, s, logits);
      generated++;
    }
  count (srv, rows.n, n_prompt_rows, n_cached, generated);
  return TRUE;
}

/* ------------------------------------------------------------- fcfs step */

static gboolean
step_fcfs (HzServe *srv, GError **error)
{
  if (srv->fcfs_cur == NULL)
    srv->fcfs_cur = g_queue_pop_head (&srv->fcfs_queue);
  Sample *s = srv->fcfs_cur;
  if (s == NULL)
    return FALSE;
  GArray *toks = s->seq->tokens;
  guint from, n_prompt_rows = 0;
  if (s->n_generated == 0 && s->req->cache_salt != srv->fcfs_salt)
    {
      /* other adapters: the context clears its KV cache */
      Request *req = s->req;
      if (!hz_context_set_adapters (srv->ctx, req->lora.refs, req->adapter_scales,
                                    req->lora.n_refs, error))
        {
          srv->fcfs_cur = NULL;
          sample_finish (srv, s, HZ_STOP_CANCELLED);
          return FALSE;
        }
      srv->fcfs_salt = req->cache_salt;
      g_array_set_size (srv->ctx_tokens, hz_context_n_past (srv->ctx));
    }
  if (s->n_generated == 0)
    {
      /* the prompt: reuse the longest common prefix with what the context holds (at least
       * the last prompt token is evaluated again for its logits) */
      guint common = 0;
      while (common < srv->ctx_tokens->len && common < toks->len &&
             g_array_index (srv->ctx_tokens, HzToken, common) == g_array_index (toks, HzToken, common))
        common++;
      from = MIN (common, toks->len - 1);
      hz_context_truncate (srv->ctx, from);
      from = MIN (from, hz_context_n_past (srv->ctx));   /* (less kept: a window's ring) */
      g_array_set_size (srv->ctx_tokens, from);
      n_prompt_rows = toks->len - from;
      s->n_prompt_evaluated = n_prompt_rows;
      s->seq->n_cached = from;
    }
  else
    from = toks->len - 1;
  const HzToken *rest = (const HzToken *) (void *) toks->data + from;
  if (!hz_context_eval (srv->ctx, rest, toks->len - from, FALSE, NULL, error))
    {
      srv->fcfs_cur = NULL;
      g_array_set_size (srv->ctx_tokens, hz_context_n_past (srv->ctx));
      sample_finish (srv, s, HZ_STOP_CANCELLED);
      return FALSE;
    }
  g_array_append_vals (srv->ctx_tokens, rest, toks->len - from);
  sample_token (srv, s, hz_context_logits (srv->ctx, -1));
  if (s->finished)
    srv->fcfs_cur = NULL;
  count (srv, toks->len - from, n_prompt_rows, n_prompt_rows ? from : 0, 1);
  return TRUE;
}

gboolean
hz_serve_step (HzServe *srv, GError **error)
{
  intake (srv);
  const gboolean did = srv->sched ? step_paged (srv, error) : step_fcfs (srv, error);
  reap (srv);
  return did;
}

gboolean
hz_serve_run (HzServe *srv, GError **error)
{
  GError *local = NULL;
  for (;;)
    {
      if (!hz_serve_step (srv, &local) && local == NULL)
        {
          pthread_mutex_lock (&srv->lock);
          const gboolean idle = srv->n_pending == 0 && srv->incoming->len == 0;
          pthread_mutex_unlock (&srv->lock);
          if (idle)
            return TRUE;
        }
      if (local)
        {
          g_propagate_error (error, local);
          return FALSE;
        }
    }
}

/* ------------------------------------------------------------ loop thread */

static void *
loop_main (void *data)
{
  HzServe *srv = data;
  pthread_mutex_lock (&srv->lock);
  while (!srv->stop)
    {
      if (srv->n_pending == 0)
        {
          pthread_cond_wait (&srv->wake, &srv->lock);
          continue;
        }
      pthread_mutex_unlock (&srv->lock);
      g_autoptr (GError) error = NULL;
      if (!hz_serve_step (srv, &error) && error)
        g_warning ("serving step failed: %s", error->message);
      pthread_mutex_lock (&srv->lock);
    }
  pthread_mutex_unlock (&srv->lock);
  return NULL;
}

void
hz_serve_start (HzServe *srv)
{
  if (srv->thread_running)
    return;
  srv->stop = FALSE;
  if (pthread_create (&srv->thread, NULL, loop_main, srv) != 0)
    g_error ("cannot start the serving thread");
  srv->thread_running = TRUE;
}

void
hz_serve_stop (HzServe *srv)
{
  if (!srv->thread_running)
    return;
  pthread_mutex_lock (&srv->lock);
  srv->stop = TRUE;
  pthread_cond_signal (&srv->wake);
  pthread_mutex_unlock (&srv->lock);
  pthread_join (srv->thread, NULL);
  srv->thread_running = FALSE;
}

void
hz_serve_wait_idle (HzServe *srv)
{
  pthread_mutex_lock (&srv->lock);
  while (srv->n_pending > 0)
    pthread_cond_wait (&srv->idle, &srv->lock);
  pthread_mutex_unlock (&srv->lock);
}

void
hz_serve_get_stats (HzServe *srv, HzServeStats *stats)
{
  pthread_mutex_lock (&srv->lock);
  *stats = srv->stats;
  pthread_mutex_unlock (&srv->lock);
}

void
hz_serve_free (HzServe *srv)
{
  if (srv == NULL)
    return;
  hz_serve_stop (srv);
  if (srv->incoming)
    {
      /* everything still queued ends as cancelled */
      pthread_mutex_lock (&srv->lock);
      for (guint i = 0; i < srv->incoming->len; i++)
        ((Request *) srv->incoming->pdata[i])->cancel = TRUE;
      pthread_mutex_unlock (&srv->lock);
      intake (srv);
      for (guint i = 0; i < srv->active->len; i++)
        {
          Request *req = srv->active->pdata[i];
          for (guint k = 0; k < req->samples->len; k++)
            sample_finish (srv, req->samples->pdata[k], HZ_STOP_CANCELLED);
        }
      srv->fcfs_cur = NULL;
      g_queue_clear (&srv->fcfs_queue);
      reap (srv);
    }
  if (srv->sched)
    {
      hz_sched_batch_clear (&srv->batch);
      hz_scheduler_free (srv->sched);
    }
  hz_prefix_cache_free (srv->cache);
  if (srv->gpu)
    hz_gpu_paged_free (srv->gpu);
  hz_kv_pool_free (srv->pool);
  hz_cpu_forward_free (srv->fwd);
  hz_context_free (srv->ctx);
  g_clear_pointer (&srv->ctx_tokens, g_array_unref);
  g_free (srv->logits);
  hz_json_vocab_free (srv->json_vocab);
  g_free (srv->json_mask);
  g_clear_pointer (&srv->row_tokens, g_array_unref);
  g_clear_pointer (&srv->row_pos, g_array_unref);
  g_clear_pointer (&srv->row_tables, g_array_unref);
  g_clear_pointer (&srv->out_rows, g_array_unref);
  g_clear_pointer (&srv->out_items, g_array_unref);
  g_clear_pointer (&srv->row_lora, g_array_unref);
  g_clear_pointer (&srv->salts, g_hash_table_unref);
  g_clear_pointer (&srv->active, g_ptr_array_unref);
  g_clear_pointer (&srv->incoming, g_ptr_array_unref);
  g_clear_pointer (&srv->by_id, g_hash_table_unref);
  pthread_mutex_destroy (&srv->lock);
  pthread_cond_destroy (&srv->wake);
  pthread_cond_destroy (&srv->idle);
  g_free (srv);
}
