/* engine/model-context.c — public API glue of libhzengine (hanzo/engine.h): models, contexts,
 * evaluation and generation. The sampler and chat templates live in sampler.c and
 * chat-template.c; the forward pass in cpu/forward.c; weights in llm.c.
 */
#include "hanzo/engine.h"

#include <string.h>
#include "backend-hip/forward-gpu.h"
#include "cpu/forward.h"
#include "cpu/matmul.h"
#include "gguf.h"
#include "lora-adapter.h"
#include "model-private.h"
#include "quantize.h"
#include "sampler.h"
#include "stop-scan.h"
#include "tokenizer.h"
#include "prompt.h"
#include "jinja.h"

/* ------------------------------------------------------------------ model */

struct _HzModel {
  HzGguf      *gguf_owned;   /* the GGUF file (NULL when converted at load) */
  HzIsqModel  *isq;          /* folder or ISQ: converted metadata and tensors, else NULL */
  const HzGguf *gguf;        /* metadata: gguf_owned or the isq model's */
  char        *isq_type;     /* ISQ file type name, or NULL */
  gboolean     from_folder;
  HzTokenizer *tok;
  HzLlm       *llm;          /* NULL when vocab_only */
  char        *path;
  char        *name;
  guint        n_threads;
  GMutex       sha_lock;
  char        *sha256;
  /* tokenizer.chat_template, parsed once at load (immutable afterwards): the template, or
   * the parse error to report at each render; both NULL without a Jinja template */
  HzJinjaTemplate *chat_jinja;
  GError      *chat_error;
  HzChatTemplate chat_builtin;   /* the built-in renderer for a GGUF without a template */
  gint         told_builtin;     /* the fallback was announced (atomic) */
};

void
hz_model_params_init (HzModelParams *p)
{
  memset (p, 0, sizeof *p);
}

HzModel *
hz_model_load (const char *path, const HzModelParams *params, GError **error)
{
  HzModelParams defaults;

  g_return_val_if_fail (path != NULL, NULL);
  if (params == NULL)
    {
      hz_model_params_init (&defaults);
      params = &defaults;
    }

  const gboolean folder = g_file_test (path, G_FILE_TEST_IS_DIR);
  const char *isq_type = params->vocab_only ? NULL : params->isq;
  g_autoptr (HzGguf) g = NULL;
  g_autoptr (HzIsqModel) isq = NULL;
  const HzGguf *meta;
  GHashTable *tensors = NULL;
  if (folder || isq_type)
    {
      /* check the type and the metadata (architecture, hyperparameters, MoE) before
       * spending time on the conversion */
      if (isq_type && !hz_isq_check_type (isq_type, NULL, error))
        return NULL;
      isq = hz_isq_open (path, params->vocab_gguf, error);
      if (isq == NULL)
        return NULL;
      meta = hz_isq_model_gguf (isq);
      if (!params->vocab_only && !hz_llm_check_metadata (meta, error))
        return NULL;
      if (!hz_isq_convert (isq, isq_type, params->n_threads, error))
        return NULL;
      tensors = hz_isq_model_tensors (isq);
    }
  else
    {
      g = hz_gguf_open (path, error);
      if (g == NULL)
        return NULL;
      meta = g;
    }

  g_autoptr (HzLlm) llm = NULL;
  if (!params->vocab_only)
    {
      llm = hz_llm_load_tensors (meta, tensors, error);
      if (llm == NULL)
        return NULL;
    }
  g_autoptr (HzTokenizer) tok = hz_tokenizer_new_from_gguf (meta, error);
  if (tok == NULL)
    return NULL;
  /* one embedding row per token, as llama.cpp requires (its token_embd.weight must be
   * {n_embd, n_vocab}): more tokens than rows cannot be embedded, fewer would let the model
   * sample ids that have no text */
  if (llm && hz_tokenizer_n_vocab (tok) != llm->hp.n_vocab)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_BAD_MODEL,
                   "the vocabulary has %d tokens but 'token_embd.weight' has %d rows: there "
                   "must be one row per token", hz_tokenizer_n_vocab (tok), llm->hp.n_vocab);
      return NULL;
    }

  HzModel *m = g_new0 (HzModel, 1);
  m->gguf_owned = g_steal_pointer (&g);
  m->isq = g_steal_pointer (&isq);
  m->gguf = meta;
  m->from_folder = folder;
  if (isq_type)
    m->isq_type = g_strdup (hz_ftype_from_name (isq_type)->name);
  m->llm = g_steal_pointer (&llm);
  m->tok = g_steal_pointer (&tok);
  m->path = g_strdup (path);
  m->name = hz_gguf_get_str (m->gguf, "general.name");
  if (m->name == NULL || m->name[0] == '\0')
    {
      g_free (m->name);
      m->name = g_path_get_basename (path);
    }
  m->n_threads = params->n_threads ? params->n_threads : g_get_num_processors ();
  g_mutex_init (&m->sha_lock);
  /* The model's own Jinja template renders every prompt (chat-render.c); a value that is
   * one of the built-in names ("chatml", as llama.cpp accepts) selects that renderer. */
  g_autofree char *jinja = hz_gguf_get_str (m->gguf, "tokenizer.chat_template");
  m->chat_builtin = hz_chat_template_detect (jinja, m->name);
  gboolean named = FALSE;
  for (int t = HZ_CHAT_TEMPLATE_NONE; jinja && t <= HZ_CHAT_TEMPLATE_ZEPHYR; t++)
    named |= strcmp (jinja, hz_chat_template_name ((HzChatTemplate) t)) == 0;
  if (jinja && *jinja && !named)
    m->chat_jinja = hz_jinja_template_new (jinja, -1, &m->chat_error);
  return m;
}

const char *const *
hz_model_isq_types (void)
{
  static gsize once = 0;
  static const char **names;
  if (g_once_init_enter (&once))
    {
      GPtrArray *a = g_ptr_array_new ();
      for (gsize i = 0; i < hz_ftype_count (); i++)
        if (hz_ftype_missing_format (hz_ftype_nth (i)->ftype) == NULL)
          g_ptr_array_add (a, (gpointer) hz_ftype_nth (i)->name);
      g_ptr_array_add (a, NULL);
      names = (const char **) g_ptr_array_free (a, FALSE);
      g_once_init_leave (&once, 1);
    }
  return names;
}

const char *hz_model_isq (const HzModel *m) { return m->isq_type; }

void
hz_model_free (HzModel *m)
{
  if (m == NULL)
    return;
  hz_llm_free (m->llm);
  hz_tokenizer_free (m->tok);
  hz_isq_model_free (m->isq);
  hz_gguf_free (m->gguf_owned);
  g_free (m->isq_type);
  g_mutex_clear (&m->sha_lock);
  g_free (m->sha256);
  hz_jinja_template_free (m->chat_jinja);
  g_clear_error (&m->chat_error);
  g_free (m->path);
  g_free (m->name);
  g_free (m);
}

const HzGguf *hz_model_get_gguf (const HzModel *m) { return m->gguf; }
const struct _HzTokenizer *hz_model_get_tokenizer (const HzModel *m) { return m->tok; }
const HzLlm *hz_model_get_llm (const HzModel *m) { return m->llm; }

HzAdapter *
hz_adapter_load (HzModel *model, const char *path, GError **error)
{
  g_return_val_if_fail (model != NULL && path != NULL, NULL);
  if (model->llm == NULL)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "model '%s' was loaded vocab-only: no adapter applies", model->name);
      return NULL;
    }
  return hz_adapter_new_for (&model->llm->hp, path, error);
}

const HzJinjaTemplate *
hz_model_get_chat_jinja (const HzModel *m, const GError **parse_error)
{
  *parse_error = m->chat_error;
  return m->chat_jinja;
}

gboolean
hz_model_first_builtin_render (const HzModel *m)
{
  return g_atomic_int_compare_and_exchange (&((HzModel *) m)->told_builtin, 0, 1);
}

const char *
hz_model_arch (const HzModel *m)
{
  return m->llm ? hz_arch_name (m->llm->hp.arch) : "vocab-only";
}

const char *hz_model_name (const HzModel *m) { return m->name; }
const char *hz_model_path (const HzModel *m) { return m->path; }
int32_t hz_model_n_vocab (const HzModel *m)
{
  return m->llm ? m->llm->hp.n_vocab : hz_tokenizer_n_vocab (m->tok);
}
int32_t hz_model_n_ctx_train (const HzModel *m) { return m->llm ? m->llm->hp.n_ctx_train : 0; }
int32_t hz_model_n_layer (const HzModel *m) { return m->llm ? m->llm->hp.n_layer : 0; }
int32_t hz_model_n_embd (const HzModel *m) { return m->llm ? m->llm->hp.n_embd : 0; }
uint64_t hz_model_n_params (const HzModel *m) { return m->llm ? m->llm->n_params : 0; }
uint64_t hz_model_weight_bytes (const HzModel *m) { return m->llm ? m->llm->weight_bytes : 0; }
const char *hz_model_type_name (const HzModel *m) { return m->llm ? m->llm->type_name : "none"; }

const char *
hz_model_sha256 (HzModel *m)
{
  g_mutex_lock (&m->sha_lock);
  if (m->sha256 == NULL && !m->from_folder)
    m->sha256 = g_compute_checksum_for_data (G_CHECKSUM_SHA256, hz_gguf_file_data (m->gguf),
                                             hz_gguf_file_size (m->gguf));
  else if (m->sha256 == NULL)
    {
      /* the converted metadata, then the tensors as loaded in name order */
      g_autoptr (GChecksum) ck = g_checksum_new (G_CHECKSUM_SHA256);
      g_checksum_update (ck, hz_gguf_file_data (m->gguf), hz_gguf_file_size (m->gguf));
      GHashTable *tensors = hz_isq_model_tensors (m->isq);
      g_autofree gpointer *keys = g_hash_table_get_keys_as_array (tensors, NULL);
      guint n = g_hash_table_size (tensors);
      hz_quantize_sort_names ((const char **) keys, n);
      for (guint i = 0; i < n; i++)
        {
          const HzGgufTensor *t = g_hash_table_lookup (tensors, keys[i]);
          g_checksum_update (ck, t->data, t->n_bytes);
        }
      m->sha256 = g_strdup (g_checksum_get_string (ck));
    }
  g_mutex_unlock (&m->sha_lock);
  return m->sha256;
}

/* The built-in family is detected at load by chat-template.c from the GGUF's Jinja source
 * and the model name. */
HzChatTemplate
hz_model_chat_template (const HzModel *m)
{
  return m->chat_builtin;
}

HzToken hz_model_bos (const HzModel *m) { return hz_tokenizer_bos (m->tok); }
HzToken hz_model_eos (const HzModel *m) { return hz_tokenizer_eos (m->tok); }
gboolean hz_model_is_eog (const HzModel *m, HzToken t) { return hz_tokenizer_is_eog (m->tok, t); }

HzToken *
hz_model_tokenize (const HzModel *m, const char *text, gssize len, gboolean add_special,
                   gboolean parse_special, gsize *n_tokens)
{
  return hz_tokenizer_encode (m->tok, text, len, add_special, parse_special, n_tokens);
}

HzToken *
hz_model_tokenize_prompt (const HzModel *m, const HzPrompt *p, gboolean add_special,
                          gsize *n_tokens)
{
  g_return_val_if_fail (m != NULL, NULL);
  return hz_prompt_tokenize (m->tok, p, add_special, n_tokens);
}

char *
hz_model_detokenize (const HzModel *m, const HzToken *tokens, gsize n, gboolean special)
{
  return hz_tokenizer_decode (m->tok, tokens, n, special);
}

/* ---------------------------------------------------------------- context */

/* GPU decode (backend-hip/forward-gpu.h, issue 4): linked in by -Dcuda / -Dhip builds, a
 * NULL weak reference otherwise. A context runs on the GPU when one is present unless
 * HZ_DEVICE=cpu; it says on which and why. */
#pragma weak hz_gpu_forward_new
#pragma weak hz_gpu_forward_free
#pragma weak hz_gpu_forward_eval
#pragma weak hz_gpu_forward_describe
#pragma weak hz_gpu_forward_set_sampler
#pragma weak hz_gpu_forward_sample

static HzGpuForward *
context_gpu_open (const HzLlm *llm, guint n_ctx)
{
  g_autoptr (GError) error = NULL;
  if (hz_gpu_forward_new == NULL || g_strcmp0 (g_getenv ("HZ_DEVICE"), "cpu") == 0)
    return NULL;
  HzGpuForward *f = hz_gpu_forward_new (llm, n_ctx, &error);
  if (f)
    g_message ("decoding on the GPU: %s", hz_gpu_forward_describe (f));
  else
    g_message ("decoding on the CPU: %s", error->message);
  return f;
}

struct _HzContext {
  HzModel      *model;
  HzCpuForward *fwd;
  HzGpuForward *gpu;           /* NULL: the CPU forward pass runs */
  guint         n_ctx, n_batch;
  GArray       *tokens;        /* HzToken: what the KV cache holds, position = index */
  float        *logits;        /* [logits_cap][n_vocab] */
  gsize         logits_cap;
  guint         n_logit_rows;  /* rows valid after the last eval */
  HzLoraBinding lora;          /* adapters applied (hz_context_set_adapters); cleared: none */
};

void
hz_context_params_init (HzContextParams *p)
{
  memset (p, 0, sizeof *p);
}

HzContext *
hz_context_new (HzModel *model, const HzContextParams *p, GError **error)
{
  HzContextParams defaults;

  g_return_val_if_fail (model != NULL, NULL);
  if (p == NULL)
    {
      hz_context_params_init (&defaults);
      p = &defaults;
    }
  if (model->llm == NULL)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "model '%s' was loaded vocab-only and cannot run", model->name);
      return NULL;
    }
  guint n_ctx = p->n_ctx ? p->n_ctx : (guint) MIN (model->llm->hp.n_ctx_train, 4096);
  guint n_batch = p->n_batch ? p->n_batch : 512;
  guint n_threads = p->n_threads ? p->n_threads : model->n_threads;

  HzCpuForward *fwd = hz_cpu_forward_new (model->llm, n_ctx, n_batch, n_threads, error);
  if (fwd == NULL)
    return NULL;
  HzContext *ctx = g_new0 (HzContext, 1);
  ctx->model = model;
  ctx->fwd = fwd;
  ctx->gpu = context_gpu_open (model->llm, n_ctx);
  if (ctx->gpu == NULL)
    hz_cpu_llm_prepare (model->llm);   /* CPU-only copies in the kernels' layouts */
  ctx->n_ctx = n_ctx;
  ctx->n_batch = MIN (n_batch, n_ctx);
  ctx->tokens = g_array_sized_new (FALSE, FALSE, sizeof (HzToken), n_ctx);
  ctx->logits_cap = 1;
  ctx->logits = g_new0 (float, model->llm->hp.n_vocab);
  return ctx;
}

void
hz_context_free (HzContext *ctx)
{
  if (ctx == NULL)
    return;
  hz_cpu_forward_free (ctx->fwd);
  hz_lora_binding_clear (&ctx->lora);
  if (ctx->gpu)
    hz_gpu_forward_free (ctx->gpu);
  g_array_unref (ctx->tokens);
  g_free (ctx->logits);
  g_free (ctx);
}

/* Whether evaluations run on the GPU: one is open and no adapters are set (the GPU decode
 * path has none: the CPU runs while they are). */
static gboolean
context_on_gpu (const HzContext *ctx)
{
  return ctx->gpu != NULL && ctx->lora.stack.n == 0;
}

HzModel *hz_context_model (HzContext *ctx) { return ctx->model; }
guint hz_context_n_ctx (HzContext *ctx) { return ctx->n_ctx; }
guint hz_context_n_past (HzContext *ctx) { return ctx->tokens->len; }

void
hz_context_truncate (HzContext *ctx, guint n)
{
  /* a sliding-window layer's ring may no longer hold the window before n (cpu/forward.h):
   * then nothing is kept */
  if (n < ctx->tokens->len && !hz_cpu_forward_can_resume (ctx->fwd, n))
    n = 0;
  if (n < ctx->tokens->len)
    g_array_set_size (ctx->tokens, n);
}

/* hz_context_eval; want_logits FALSE: no logits are computed or copied back (the rows of
 * hz_context_logits are invalid afterwards). */
static gboolean
context_eval (HzContext *ctx, const HzToken *tokens, gsize n, gboolean all_logits,
              gboolean want_logits, GCancellable *cancellable, GError **error)
{
  const gsize n_vocab = ctx->model->llm->hp.n_vocab;
  const guint n_past = ctx->tokens->len;

  if (n == 0)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "nothing to evaluate (0 tokens)");
      return FALSE;
    }
  if (n > ctx->n_ctx - n_past)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_CONTEXT_FULL,
                   "%" G_GSIZE_FORMAT " tokens do not fit in the context: %u of %u "
                   "positions are used", n, n_past, ctx->n_ctx);
      return FALSE;
    }
  const gsize rows = all_logits ? n : 1;
  if (rows > ctx->logits_cap)
    {
      g_free (ctx->logits);
      ctx->logits = g_new0 (float, rows * n_vocab);
      ctx->logits_cap = rows;
    }
  ctx->n_logit_rows = 0;

  for (gsize i = 0; i < n; i += ctx->n_batch)
    {
      const guint nb = (guint) MIN (ctx->n_batch, n - i);
      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return FALSE;
      float *out = !want_logits ? NULL : all_logits ? ctx->logits + i * n_vocab : ctx->logits;
      if (!(context_on_gpu (ctx) ? hz_gpu_forward_eval (ctx->gpu, tokens + i, nb, ctx->tokens->len,
                                                        all_logits, out, error)
                                 : hz_cpu_forward_eval (ctx->fwd, tokens + i, nb, ctx->tokens->len,
                                                        all_logits, out, error)))
        return FALSE;
      g_array_append_vals (ctx->tokens, tokens + i, nb);
    }
  ctx->n_logit_rows = want_logits ? rows : 0;
  return TRUE;
}

gboolean
hz_context_eval (HzContext *ctx, const HzToken *tokens, gsize n, gboolean all_logits,
                 GCancellable *cancellable, GError **error)
{
  return context_eval (ctx, tokens, n, all_logits, TRUE, cancellable, error);
}

const float *
hz_context_logits (HzContext *ctx, gint i)
{
  if (ctx->n_logit_rows == 0)
    return NULL;
  if (i < 0)
    i = (gint) ctx->n_logit_rows + i;
  if (i < 0 || (guint) i >= ctx->n_logit_rows)
    return NULL;
  return ctx->logits + (gsize) i * ctx->model->llm->hp.n_vocab;
}

gboolean
hz_context_set_adapters (HzContext *ctx, HzAdapter *const *adapters, const float *scales,
                         guint n, GError **error)
{
  HzLoraBinding nb;
  if (!hz_lora_binding_init (&nb, &ctx->model->llm->hp, adapters, scales, n, error))
    return FALSE;
  /* K/V computed with other weights cannot be reused */
  if (g_strcmp0 (nb.key, ctx->lora.key ? ctx->lora.key : "") != 0)
    hz_context_truncate (ctx, 0);
  hz_lora_binding_clear (&ctx->lora);
  ctx->lora = nb;
  hz_cpu_forward_set_lora (ctx->fwd, &ctx->lora.stack);
  if (ctx->gpu && ctx->lora.stack.n > 0)
    {
      static gsize warned = 0;
      if (g_once_init_enter (&warned))
        {
          g_message ("LoRA adapters are applied on the CPU: the GPU decode path does not "
                     "support them, so contexts with adapters decode on the CPU");
          g_once_init_leave (&warned, 1);
        }
    }
  return TRUE;
}

guint
hz_context_n_adapters (HzContext *ctx)
{
  return ctx->lora.stack.n;
}

/* ------------------------------------------------------------- generation */

void
hz_generate_params_init (HzGenerateParams *p)
{
  memset (p, 0, sizeof *p);
  hz_sampler_params_init (&p->sampler);
  p->n_predict = -1;
}

/* Generation with the sampler on the GPU (kernels/sample.hip through
 * hz_gpu_forward_sample): when the context runs on the GPU and the sampler applies no
 * penalties, each decode step's graph ends in the draw and only the token id (4 bytes)
 * comes back instead of the logits row. The device generator is seeded as the CPU's
 * (same seed, same xoshiro256** stream); greedy choices equal the host's argmax of the
 * same logits (tests/gpu/test-forward.c check 3, H200 2026-11-29: 12/12 models).
 * On by default; HZ_GPU_SAMPLE=0 keeps the sampling on the host. Returns whether it is
 * on, with the device sampler set from `sampler`'s parameters. */
static gboolean
generate_on_device (HzContext *ctx, const HzSampler *sampler)
{
  if (!context_on_gpu (ctx) || hz_gpu_forward_sample == NULL
      || hz_sampler_has_penalties (sampler) || g_strcmp0 (g_getenv ("HZ_GPU_SAMPLE"), "0") == 0)
    return FALSE;
  /* penalties without a window change nothing: hand them over as off */
  HzSamplerParams p = *hz_sampler_get_params (sampler);
  p.repeat_penalty = 1.0f;
  p.frequency_penalty = 0.0f;
  p.presence_penalty = 0.0f;
  g_autoptr (GError) local = NULL;
  if (hz_gpu_forward_set_sampler (ctx->gpu, &p, &local))
    return TRUE;
  g_message ("sampling on the CPU: %s", local->message);
  return FALSE;
}

/* One decode step of `tok` at the next position on the GPU ending in the device sampler's
 * draw of the following token (*next). The logits stay on the device (hz_context_logits:
 * none afterwards). */
static gboolean
context_step_sample (HzContext *ctx, HzToken tok, HzToken *next, GError **error)
{
  int32_t id = -1;
  guint done = 0;
  if (ctx->tokens->len >= ctx->n_ctx)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_CONTEXT_FULL,
                   "no position left in the context (%u)", ctx->n_ctx);
      return FALSE;
    }
  if (!hz_gpu_forward_sample (ctx->gpu, tok, ctx->tokens->len, 1, &id, &done, error))
    return FALSE;
  g_array_append_val (ctx->tokens, tok);
  ctx->n_logit_rows = 0;
  *next = id;
  return TRUE;
}

/* Evaluate the part of the prompt the KV cache does not hold. On the host path the last
 * row's logits are left in ctx->logits; on the device path (`device`) the prompt but its
 * last token is evaluated without logits, then the last token as a decode step whose
 * device draw is the first generated token (*next).
 *
 * The host path never ends a prompt of two or more tokens with a forward pass of one
 * token: a pass of one token runs the decode kernels (llama.cpp's vec_dot for one row,
 * its gemm kernels for more: hz_cpu_matmul), whose sums are ordered otherwise, so the last
 * row's logits would differ in the last bits from a fresh context's, and a seeded sample
 * (whose draw order follows the candidates' heap order) then differs too. Rows of passes
 * of two or more tokens do not depend on how the prompt is cut into passes, so a prompt
 * found whole in the cache (its last two tokens evaluated again) or partly gives the
 * logits, and with a seed the tokens, of a fresh context. */
static gboolean
eval_prompt_suffix (HzContext *ctx, const HzToken *prompt, gsize n_prompt, gboolean device,
                    HzToken *next, GCancellable *cancellable, guint *n_evaluated, GError **error)
{
  /* longest common prefix with what the cache holds; at least the last prompt token (on
   * the host path two, when the prompt has them) is evaluated again so that its logits
   * are fresh */
  gsize common = 0;
  const HzToken *cached = (const HzToken *) (void *) ctx->tokens->data;
  while (common < ctx->tokens->len && common < n_prompt && cached[common] == prompt[common])
    common++;
  const gsize min_eval = device ? 1 : MIN (n_prompt, 2);
  common = MIN (common, n_prompt - min_eval);
  hz_context_truncate (ctx, (guint) common);
  common = MIN (common, ctx->tokens->len);    /* (less was kept: a window's ring) */
  *n_evaluated = (guint) (n_prompt - common);
  if (!device)
    {
      /* no last pass of one token: ..., n_batch - 1, 2 rather than ..., n_batch, 1 */
      const gsize m = n_prompt - common;
      const gsize last = m > 2 && ctx->n_batch > 2 && m % ctx->n_batch == 1 ? 2 : m;
      if (last < m && !hz_context_eval (ctx, prompt + common, m - last, FALSE, cancellable, error))
        return FALSE;
      return hz_context_eval (ctx, prompt + n_prompt - last, last, FALSE, cancellable, error);
    }
  if (common + 1 < n_prompt
      && !context_eval (ctx, prompt + common, n_prompt - 1 - common, FALSE, FALSE, cancellable,
                        error))
    return FALSE;
  return !g_cancellable_set_error_if_cancelled (cancellable, error)
         && context_step_sample (ctx, prompt[n_prompt - 1], next, error);
}

char *
hz_context_generate (HzContext *ctx, const HzToken *prompt, gsize n_prompt,
                     const HzGenerateParams *params, HzTokenFunc func, gpointer user_data,
                     GCancellable *cancellable, GArray *out_tokens, HzGenerateStats *stats,
                     GError **error)
{
  const gint64 t_start = g_get_monotonic_time ();
  const HzModel *model = ctx->model;
  const int32_t n_vocab = model->llm->hp.n_vocab;
  HzGenerateParams defaults;
  HzGenerateStats st = { 0 };

  if (params == NULL)
    {
      hz_generate_params_init (&defaults);
      params = &defaults;
    }
  if (n_prompt == 0)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "the prompt is empty (it needs at least one token, e.g. BOS)");
      return NULL;
    }
  if (n_prompt > ctx->n_ctx)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_CONTEXT_FULL,
                   "the prompt has %" G_GSIZE_FORMAT " tokens but the context holds only %u; "
                   "shorten the prompt or use a larger context size", n_prompt, ctx->n_ctx);
      return NULL;
    }
  st.n_prompt = (guint) n_prompt;

  g_autoptr (HzSampler) sampler = hz_sampler_new (&params->sampler);
  const gboolean device = generate_on_device (ctx, sampler);
  HzToken next = -1;           /* device path: the token drawn by the last step */

  /* prompt */
  GError *local = NULL;
  if (!eval_prompt_suffix (ctx, prompt, n_prompt, device, &next, cancellable,
                           &st.n_prompt_evaluated, &local))
    {
      if (!g_error_matches (local, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          g_propagate_error (error, local);
          return NULL;
        }
      g_clear_error (&local);
      st.stop_reason = HZ_STOP_CANCELLED;
      if (stats)
        *stats = st;
      return g_strdup ("");
    }
  const gint64 t_prompt = g_get_monotonic_time ();
  st.prompt_seconds = (t_prompt - t_start) / 1e6;

  for (gsize i = 0; i < n_prompt; i++)
    hz_sampler_accept (sampler, prompt[i]);
  g_autoptr (HzDetokenizer) detok = hz_detokenizer_new (model->tok, params->special);
  g_autoptr (GString) out = g_string_new (NULL);
  g_autoptr (HzStopScan) scan = hz_stop_scan_new (params->stop_strings);

  for (;;)
    {
      if (g_cancellable_is_cancelled (cancellable))
        {
          st.stop_reason = HZ_STOP_CANCELLED;
          break;
        }
      if (params->n_predict >= 0 && st.n_generated >= (guint) params->n_predict)
        {
          st.stop_reason = HZ_STOP_LENGTH;
          break;
        }

      const HzToken tok = device ? next
                                 : hz_sampler_sample (sampler, hz_context_logits (ctx, -1), n_vocab);
      hz_sampler_accept (sampler, tok);
      st.n_generated++;

      HzStopReason reason = HZ_STOP_NONE;
      if (hz_model_is_eog (model, tok) && !params->ignore_eog)
        reason = HZ_STOP_EOG;
      else if (params->n_predict >= 0 && st.n_generated >= (guint) params->n_predict)
        reason = HZ_STOP_LENGTH;
      else if (ctx->tokens->len >= ctx->n_ctx)
        reason = HZ_STOP_CONTEXT_FULL;

      /* (an end-of-generation token's text is never part of the reply) */
      const char *piece = reason == HZ_STOP_EOG && params->special
                            ? hz_detokenizer_flush (detok)
                            : hz_detokenizer_push_final (detok, tok, reason != HZ_STOP_NONE);
      gboolean hit = FALSE;
      const char *emit = hz_stop_scan_push (scan, piece, reason != HZ_STOP_NONE, &hit);
      if (hit)
        reason = HZ_STOP_STRING;
      g_string_append (out, emit);
      if (out_tokens)
        g_array_append_val (out_tokens, tok);
      if (st.n_generated == 1)
        st.ttft_seconds = (g_get_monotonic_time () - t_start) / 1e6;
      if (func && !func (tok, emit, user_data))
        {
          st.stop_reason = HZ_STOP_CALLBACK;
          break;
        }
      if (reason != HZ_STOP_NONE)
        {
          st.stop_reason = reason;
          break;
        }
      if (!(device ? context_step_sample (ctx, tok, &next, error)
                   : hz_context_eval (ctx, &tok, 1, FALSE, NULL, error)))
        return NULL;
    }
  /* text still held back (cancellation, callback stop) belongs to the partial reply */
  if (st.stop_reason == HZ_STOP_CANCELLED || st.stop_reason == HZ_STOP_CALLBACK ||
      st.stop_reason == HZ_STOP_LENGTH)
    {
      g_string_append (out, hz_stop_scan_push (scan, hz_detokenizer_flush (detok), TRUE, NULL));
    }
  st.gen_seconds = (g_get_monotonic_time () - t_prompt) / 1e6;
  if (stats)
    *stats = st;
  return g_string_free (g_steal_pointer (&out), FALSE);
}
