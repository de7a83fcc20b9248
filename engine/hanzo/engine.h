/* hanzo/engine.h — public API of libhzengine, Hanzo Desktop's on-device inference engine.
 *
 * Objects
 *   HzModel    weights + tokenizer + chat template of one GGUF file. Immutable after
 *              hz_model_load(); may be shared by any number of threads and contexts.
 *   HzContext  KV cache, scratch buffers and the token history of one conversation.
 *              Use from one thread at a time (not internally locked).
 *   HzSampler  sampling state (RNG, penalty window). One thread at a time.
 *
 * Units: token counts are in tokens, times in seconds (double), sizes in bytes.
 * Logits are float32 [n_vocab] rows, unnormalised (before softmax).
 * Errors: GError in HZ_ENGINE_ERROR (below), or the domains of the layer that failed
 * (HZ_GGUF_ERROR for unreadable files, G_IO_ERROR_CANCELLED for cancellation).
 */
#pragma once

#include <gio/gio.h>
#include <stdint.h>
#include "hanzo/engine-error.h"

G_BEGIN_DECLS

typedef int32_t HzToken;

/* ------------------------------------------------------------------ model */

typedef struct _HzModel HzModel;

typedef struct {
  guint    n_threads;   /* CPU threads for compute (and ISQ conversion); 0 = number of cores */
  gboolean vocab_only;  /* load the tokenizer only (tensors not required; isq ignored) */
  /* Load-time quantization (ISQ): a file type name as `hanzo quantize` takes it ("Q8_0",
   * "Q4_K" = "Q4_K_M", "Q6_K", "IQ4_XS", ...; hz_model_isq_types()), or NULL to use the
   * weights as stored. The per-tensor types follow llama-quantize's mixes, so the weights
   * are byte-identical to the file `hanzo quantize IN OUT TYPE` writes. */
  const char *isq;
  /* Hugging Face folder only: take the tokenizer from this GGUF's tokenizer.* keys instead
   * of the folder's tokenizer.json (needed for SentencePiece models). NULL: tokenizer.json */
  const char *vocab_gguf;
} HzModelParams;

/** Fill `p` with defaults (n_threads 0, vocab_only FALSE, isq and vocab_gguf NULL). */
void hz_model_params_init (HzModelParams *p);

/** Load a model. `path` is a GGUF file (mmap'ed; weights used in place unless params->isq
 *  converts them) or a Hugging Face folder: config.json + *.safetensors (sharded through
 *  model.safetensors.index.json when present) + tokenizer.json (or params->vocab_gguf),
 *  which loads at its own dtype (F32/F16/BF16) or, with params->isq, quantized. ISQ and
 *  folders convert in memory, tensor by tensor, without writing a file. Supported
 *  architectures: llama (Llama 2/3, Mistral, TinyLlama, SmolLM), qwen2, qwen3; MoE models
 *  are refused (HZ_ENGINE_ERROR_UNSUPPORTED_ARCH). `params` may be NULL.
 *  Errors: HZ_GGUF_ERROR_* for unreadable/hostile files, unknown ISQ types and bad folders
 *  (the message names the file, tensor or key), HZ_ENGINE_ERROR_UNSUPPORTED_ARCH,
 *  HZ_ENGINE_ERROR_BAD_MODEL (message names the tensor or key). Thread-safe. */
HzModel *hz_model_load (const char *path, const HzModelParams *params, GError **error);
/** The names HzModelParams.isq accepts, NULL-terminated (static; the file types whose
 *  formats the quant table can encode, as `hanzo quantize --list` prints them). */
const char *const *hz_model_isq_types (void);
/** The ISQ file type the model was loaded with ("Q4_K_M"), or NULL when loaded as stored. */
const char *hz_model_isq (const HzModel *m);
void     hz_model_free (HzModel *model);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzModel, hz_model_free)

const char *hz_model_arch (const HzModel *m);          /* "llama", "qwen2", ... */
const char *hz_model_name (const HzModel *m);          /* general.name or file basename */
const char *hz_model_path (const HzModel *m);
int32_t     hz_model_n_vocab (const HzModel *m);
int32_t     hz_model_n_ctx_train (const HzModel *m);   /* <arch>.context_length */
int32_t     hz_model_n_layer (const HzModel *m);
int32_t     hz_model_n_embd (const HzModel *m);
uint64_t    hz_model_n_params (const HzModel *m);
uint64_t    hz_model_weight_bytes (const HzModel *m);  /* bytes of all tensors */
/** Lower-case hex sha256 of the file, computed on first call (reads the whole file). For
 *  a GGUF loaded with ISQ: of the source file (the ISQ type is hz_model_isq()); for a
 *  Hugging Face folder: of its converted metadata (a GGUF image of the keys) followed by
 *  every tensor's bytes as loaded, in name order. */
const char *hz_model_sha256 (HzModel *m);
/** One-line description of the dominant weight type ("Q4_0", "F32", ...). */
const char *hz_model_type_name (const HzModel *m);

HzToken  hz_model_bos (const HzModel *m);               /* -1 if none */
HzToken  hz_model_eos (const HzModel *m);               /* -1 if none */
gboolean hz_model_is_eog (const HzModel *m, HzToken t); /* end of generation (EOS/EOT/...) */

/** Tokenize UTF-8 text (len < 0: NUL-terminated). add_special adds BOS/EOS as the model's
 *  GGUF says; parse_special turns control-token texts such as "<|im_start|>" into their ids.
 *  Returns a newly allocated array (g_free), length in *n_tokens. Never fails: invalid
 *  UTF-8 bytes are tokenized via byte fallback or dropped as llama.cpp does. */
HzToken *hz_model_tokenize (const HzModel *m, const char *text, gssize len,
                            gboolean add_special, gboolean parse_special, gsize *n_tokens);
/** Concatenated pieces (special: render control tokens). May be invalid UTF-8. g_free. */
char *hz_model_detokenize (const HzModel *m, const HzToken *tokens, gsize n, gboolean special);

/* ----------------------------------------------------------- chat template */

/** One message of a conversation. Fields after `content` are optional (NULL): positional
 *  initialisers such as { "user", "hi" } leave them out. */
typedef struct {
  const char *role;          /* "system", "user", "assistant" or "tool" */
  const char *content;       /* UTF-8 */
  const char *tool_calls;    /* assistant: the calls it made, as the JSON text of an OpenAI
                              * "tool_calls" array ([{"id", "type": "function", "function":
                              * {"name", "arguments"}}]), or NULL */
  const char *tool_call_id;  /* tool: the id of the call this message answers, or NULL */
  const char *name;          /* tool: the name of the function that answered, or NULL */
} HzChatMessage;

typedef enum {
  HZ_CHAT_TEMPLATE_NONE = 0,  /* plain completion: messages' contents concatenated */
  HZ_CHAT_TEMPLATE_CHATML,    /* Qwen, SmolLM, ... <|im_start|>role\n...<|im_end|> */
  HZ_CHAT_TEMPLATE_LLAMA3,
  HZ_CHAT_TEMPLATE_LLAMA2,    /* Llama 2 / Mistral [INST] ... [/INST] */
  HZ_CHAT_TEMPLATE_GEMMA,
  HZ_CHAT_TEMPLATE_PHI3,
  HZ_CHAT_TEMPLATE_ZEPHYR,
} HzChatTemplate;

/** The built-in family recognised from tokenizer.chat_template (and the model name); NONE
 *  for base models without a template (e.g. stories260K). It renders prompts only for a
 *  GGUF without a Jinja template (hz_model_render_chat()); for display and tests. */
HzChatTemplate hz_model_chat_template (const HzModel *m);
/** TRUE when the model has a chat template (its own Jinja template, even one that fails
 *  to parse, or a recognised built-in family): it answers conversations, not plain text. */
gboolean       hz_model_is_chat (const HzModel *m);
const char    *hz_chat_template_name (HzChatTemplate t);
/** Detect from a Jinja template string (may be NULL) and a model name (may be NULL). */
HzChatTemplate hz_chat_template_detect (const char *jinja, const char *model_name);

/* ------------------------------------------------------------------ prompts */

/** A prompt as the pieces it was written from: each piece is either the chat template's
 *  own markup (turn headers, separators, "<|im_start|>", "[INST]", ...) or content (what a
 *  user, a document or a tool wrote, and the model's earlier replies). Only markup may
 *  become control tokens (hz_model_tokenize_prompt()); content is always tokenized as
 *  text, so typed "<|im_end|>" cannot end a turn or forge another one. Every prompt
 *  builder makes one of these: the built-in templates (hz_chat_template_render()), and any
 *  other renderer appends its output with hz_prompt_append(), tagged the same way.
 *  Adjacent appends of the same kind form one piece. Plain data; one thread at a time. */
typedef struct _HzPrompt HzPrompt;

/** One piece: `len` bytes of UTF-8 at `text` (not NUL-terminated; points into the
 *  prompt, valid until it changes) and whether it is template markup. */
typedef struct {
  const char *text;
  gsize       len;
  gboolean    markup;
} HzPromptPiece;

/** A new, empty prompt. Free with hz_prompt_free(). */
HzPrompt *hz_prompt_new (void);
void      hz_prompt_free (HzPrompt *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzPrompt, hz_prompt_free)
/** Append `len` bytes of `text` (len < 0: NUL-terminated; NULL or empty: nothing) as
 *  markup (TRUE) or content (FALSE). */
void      hz_prompt_append (HzPrompt *p, const char *text, gssize len, gboolean markup);
/** Append every piece of `other`, as tagged there. */
void      hz_prompt_append_prompt (HzPrompt *p, const HzPrompt *other);
/** The whole text (the pieces concatenated; NUL-terminated, owned by `p`, valid until it
 *  changes) and its length in *len (nullable). */
const char *hz_prompt_text (const HzPrompt *p, gsize *len);
guint     hz_prompt_n_pieces (const HzPrompt *p);
/** Piece i (< hz_prompt_n_pieces()), in order. */
HzPromptPiece hz_prompt_get_piece (const HzPrompt *p, guint i);
/** A new prompt holding what follows byte `offset` of `p`'s text (a piece that straddles
 *  `offset` is cut there and keeps its kind); an offset past the end gives an empty one.
 *  Used to tokenize the reply part of a rendered conversation apart from its prompt. */
HzPrompt *hz_prompt_tail (const HzPrompt *p, gsize offset);

/** Tokenize a prompt: control-token texts (e.g. "<|im_end|>", "<|start_header_id|>",
 *  "[INST]" where the vocabulary has them as control tokens) become those tokens only
 *  inside markup pieces; content is tokenized as hz_model_tokenize(parse_special = FALSE)
 *  would (user-defined tokens included, except those whose text the markup uses, which
 *  become tokens only in the markup). Pieces are not tokenized apart: the text between two
 *  special tokens is one fragment, as in hz_model_tokenize(), so a prompt without
 *  control text in its content gets the ids hz_model_tokenize(text, parse_special = TRUE)
 *  gives. add_special adds BOS/EOS as the model's GGUF says; a BOS the markup spells out
 *  right after the added one is dropped (one BOS). Returns a newly allocated array
 *  (g_free), length in *n_tokens. Never fails. Thread-safe (the model is immutable). */
HzToken *hz_model_tokenize_prompt (const HzModel *m, const HzPrompt *p, gboolean add_special,
                                   gsize *n_tokens);

/** Render messages in a built-in format (the renderer of a GGUF without a Jinja template;
 *  a model's prompts come from hz_model_render_chat()); add_generation_prompt appends the
 *  assistant header. Returns the text only (hz_chat_template_render() keeps what is markup): do
 *  not tokenize it with parse_special = TRUE, which would turn control text inside the
 *  messages into control tokens. Returns a newly allocated string. */
char *hz_chat_template_apply (HzChatTemplate t, const HzChatMessage *msgs, gsize n,
                              gboolean add_generation_prompt);
/** As hz_chat_template_apply(), as a prompt whose pieces say what is markup: the
 *  template's own text and the role names (a role that is not a plain lower-case ASCII
 *  name is content) are markup, the messages' contents are content. Tokenize it with
 *  hz_model_tokenize_prompt(). Never fails; thread-safe. */
HzPrompt *hz_chat_template_render (HzChatTemplate t, const HzChatMessage *msgs, gsize n,
                                   gboolean add_generation_prompt);

/** Render a conversation as the model expects, as a prompt of markup and content pieces
 *  (tokenize it with hz_model_tokenize_prompt()). The renderer is the model's own
 *  tokenizer.chat_template (GGUF metadata, or a Hugging Face folder's
 *  tokenizer_config.json), parsed once at load and rendered by the Jinja2 interpreter
 *  (engine/jinja/jinja.h) exactly as transformers' apply_chat_template(messages,
 *  add_generation_prompt=...) would, with bos_token and eos_token the vocabulary's texts:
 *  what the template writes, the roles and those token texts are markup, every byte of the
 *  messages' contents is content. A template that writes "{{ bos_token }}" keeps it; the
 *  BOS the tokenizer adds before it is then dropped (hz_model_tokenize_prompt()). A GGUF
 *  without a template uses the built-in renderer of hz_model_chat_template()
 *  (hz_chat_template_render()), said once per model with g_message().
 *  An assistant message's content goes to the template without its reasoning part
 *  (hz_reasoning_strip() in hz_model_reasoning_format()), so no turn carries an earlier
 *  reply's reasoning, whichever template renders it.
 *  Roles: NULL ("user") or one of "system", "user", "assistant", "tool" (roles are markup,
 *  so no other text may be one). Errors: HZ_ENGINE_ERROR_INVALID_ARGUMENT (another role);
 *  HZ_JINJA_ERROR (jinja.h) when the template does not parse or raises (e.g. "TemplateError:
 *  System role not supported"; the message names the model). Never a silent fallback.
 *  Returns a new prompt (hz_prompt_free), or NULL. Thread-safe (the parsed template is
 *  immutable). */
HzPrompt *hz_model_render_chat (const HzModel *m, const HzChatMessage *msgs, gsize n,
                                gboolean add_generation_prompt, GError **error);

/** hz_model_render_chat() with the functions the model may call: `tools_json` (nullable)
 *  is the JSON text of an OpenAI "tools" array ([{"type": "function", "function": {"name",
 *  "description", "parameters"}}]), passed to the template as `tools`, as transformers'
 *  apply_chat_template(messages, tools=...) does. A message's `tool_calls` becomes its
 *  "tool_calls" list, each call's "arguments" given as a JSON object when it is the text
 *  of one (OpenAI sends a string; the templates write `arguments | tojson` or iterate its
 *  items, as llama.cpp passes them), else as sent; a tool message's `tool_call_id` and
 *  `name` become its members. The tools' and calls' text is content, never markup.
 *  Errors: those of hz_model_render_chat(); HZ_ENGINE_ERROR_INVALID_ARGUMENT when
 *  `tools_json` is not a JSON array or a message's `tool_calls` not a JSON array (the
 *  message says which). A GGUF without a Jinja template ignores tools (the built-in
 *  formats have none). Returns a new prompt, or NULL. Thread-safe. */
HzPrompt *hz_model_render_chat_tools (const HzModel *m, const HzChatMessage *msgs, gsize n,
                                      const char *tools_json, gboolean add_generation_prompt,
                                      GError **error);

/** What hz_model_fit_chat() kept. */
typedef struct {
  gsize n_tokens;    /* length of the prompt returned */
  gsize n_dropped;   /* messages left out: the oldest ones after the leading system
                      * messages; 0 when the whole conversation fits */
  guint n_budget;    /* tokens the kept messages could use: n_ctx minus the reserve */
} HzChatFit;

/** The prompt for answering a conversation in a context of n_ctx tokens: the leading
 *  system messages and the newest whole turns (a turn starts at a user message) that fit,
 *  rendered with the model's template (hz_model_render_chat()) and the generation prompt
 *  and tokenized with
 *  hz_model_tokenize_prompt() (BOS added). The kept part must leave n_reserve tokens for
 *  the reply, a reserve capped at n_ctx / 2 (pass the reply's token limit; G_MAXUINT
 *  when it has none). The last message (the one to answer) is always kept: when it
 *  and the system messages need more than n_ctx - reserve, it is kept alone with them, and
 *  the reply gets what room is left. Each candidate is rendered and tokenized whole (no
 *  estimates): the search tries 1, 2, 4, ... newest turns, then halves the interval, so a
 *  long history costs about twice the tokenization of what fits, times log2 of the turns.
 *  Returns the tokens (g_free) and fills *fit (nullable), or NULL with
 *  HZ_ENGINE_ERROR_CONTEXT_FULL when even the last message with the system messages does
 *  not fit n_ctx; the message then says how many tokens it has and how many the context
 *  holds; or with hz_model_render_chat()'s errors. With prefix reuse (hz_context_generate()): a conversation that fits keeps its
 *  prefix from turn to turn; once turns are dropped, the prefix up to the first kept turn
 *  changes and that turn onwards is evaluated again. Thread-safe. */
HzToken *hz_model_fit_chat (const HzModel *m, const HzChatMessage *msgs, gsize n, guint n_ctx,
                            guint n_reserve, HzChatFit *fit, GError **error);

/* ---------------------------------------------------------------- sampler */

typedef struct {
  float   temperature;       /* <= 0: greedy (argmax; ties -> lowest id) */
  int32_t top_k;             /* <= 0: off */
  float   top_p;             /* >= 1: off */
  float   min_p;             /* <= 0: off */
  float   repeat_penalty;    /* 1: off (llama.cpp semantics: divide positive logits) */
  int32_t repeat_last_n;     /* window of previous tokens for the penalties */
  float   presence_penalty;  /* 0: off */
  float   frequency_penalty; /* 0: off */
  guint64 seed;              /* RNG seed; same seed + inputs = same tokens */
} HzSamplerParams;

void hz_sampler_params_init (HzSamplerParams *p);  /* greedy defaults: temp 0 */

typedef struct _HzSampler HzSampler;
HzSampler *hz_sampler_new (const HzSamplerParams *p);
void       hz_sampler_free (HzSampler *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzSampler, hz_sampler_free)
/** Pick a token from `logits` [n_vocab] (not modified). Order: penalties, top-k, temperature,
 *  top-p, min-p, then a draw (llama.cpp's common sampler chain). */
HzToken hz_sampler_sample (HzSampler *s, const float *logits, int32_t n_vocab);
/** Record a token (prompt or generated) in the penalty window. */
void    hz_sampler_accept (HzSampler *s, HzToken t);
void    hz_sampler_reset (HzSampler *s);

/* ---------------------------------------------------------------- context */

typedef struct _HzContext HzContext;

typedef struct {
  guint n_ctx;      /* KV cache size in tokens; 0 = min(model context length, 4096) */
  guint n_batch;    /* max tokens per forward pass during prompt processing; 0 = 512 */
  guint n_threads;  /* 0 = the model's */
} HzContextParams;

void hz_context_params_init (HzContextParams *p);

HzContext *hz_context_new (HzModel *model, const HzContextParams *p, GError **error);
void       hz_context_free (HzContext *ctx);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzContext, hz_context_free)

HzModel *hz_context_model (HzContext *ctx);
guint    hz_context_n_ctx (HzContext *ctx);
/** Tokens currently in the KV cache. */
guint    hz_context_n_past (HzContext *ctx);
/** Drop the KV cache from position `n` on (0 clears it). On the CPU, a model with
 *  sliding-window layers (Gemma) keeps only the newest n_swa + n_batch - 1 positions of
 *  those layers: a cut more than n_batch positions back from the newest keeps nothing
 *  (hz_context_n_past says what was kept). */
void     hz_context_truncate (HzContext *ctx, guint n);

/** Run the forward pass over `n` tokens at positions n_past..n_past+n-1, appending them to
 *  the KV cache. With all_logits, logits of every position are kept (row i of
 *  hz_context_logits); otherwise only the last. Errors: HZ_ENGINE_ERROR_CONTEXT_FULL,
 *  G_IO_ERROR_CANCELLED (checked between batches). */
gboolean hz_context_eval (HzContext *ctx, const HzToken *tokens, gsize n,
                          gboolean all_logits, GCancellable *cancellable, GError **error);
/** Logits row i of the last eval (i = -1: last row). [n_vocab] floats, valid until the
 *  next eval. */
const float *hz_context_logits (HzContext *ctx, gint i);

/* --------------------------------------------------------- LoRA adapters */

/** A LoRA adapter loaded for a model, applied at serving time without merging
 *  (y = W x + scale * (alpha / r) * B (A x) on every projection it has; alpha / sqrt(r)
 *  with rsLoRA). Reference-counted and immutable after loading: one adapter may be used by
 *  any number of contexts and serving requests on any threads at once; each holds a
 *  reference while it uses it. An adapter fits every model of the same architecture and
 *  shapes (checked when it is set), e.g. the same file loaded again by a registry. */
typedef struct _HzAdapter HzAdapter;

/** Load a LoRA adapter for `model`: `path` is a PEFT folder (adapter_config.json with
 *  r, lora_alpha, use_rslora, target_modules + adapter_model.safetensors, F32/F16/BF16
 *  tensors base_model.model.model.layers.N.{self_attn,mlp}.X_proj.lora_{A,B}.weight) or a
 *  llama.cpp GGUF LoRA file (general.type "adapter", adapter.type "lora",
 *  adapter.lora.alpha, tensors blk.N.X.weight.lora_{a,b}). For llama models the q/k
 *  lora_B rows of PEFT files are permuted to llama.cpp's RoPE row order (as
 *  convert_lora_to_gguf.py does). Every targeted projection of every layer must be present
 *  with the model's shape and the file's rank, every value finite, nothing left over.
 *  Errors (the message names the file and tensor): HZ_ENGINE_ERROR_BAD_ADAPTER (malformed
 *  file or config, missing tensor, NaN/Inf, unsupported PEFT option),
 *  HZ_ENGINE_ERROR_ADAPTER_MISMATCH (architecture, layer count or shapes),
 *  HZ_ENGINE_ERROR_INVALID_ARGUMENT (vocab-only model, rank < 1, alpha <= 0),
 *  HZ_GGUF_ERROR / HZ_SAFETENSORS_ERROR (truncated or unreadable files), G_FILE_ERROR,
 *  JSON_PARSER_ERROR. Thread-safe. Returns a new reference. */
HzAdapter  *hz_adapter_load (HzModel *model, const char *path, GError **error);
HzAdapter  *hz_adapter_ref (HzAdapter *adapter);
void        hz_adapter_unref (HzAdapter *adapter);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzAdapter, hz_adapter_unref)
const char *hz_adapter_path (const HzAdapter *adapter);
int32_t     hz_adapter_rank (const HzAdapter *adapter);
/** alpha / r, or alpha / sqrt(r) with rsLoRA (the factor at scale 1). */
double      hz_adapter_scaling (const HzAdapter *adapter);

/** Apply a stack of n adapters (n = 0: none, the base model) to every following
 *  evaluation of `ctx`: y = W x + sum_i scales[i] * scaling_i * B_i (A_i x), adapters in
 *  order (e.g. the shared federation adapter, then the personal one). scales NULL: 1 each;
 *  a scale of 0 leaves that adapter out (bit-identical to not giving it). The context
 *  takes references. When the effective stack changes, the KV cache is cleared (its
 *  positions were computed with other weights; the next hz_context_generate evaluates the
 *  whole prompt). Adapters run on the CPU path: a context that decodes on the GPU falls
 *  back to the CPU while adapters are set (logged once). Errors (nothing changed then):
 *  HZ_ENGINE_ERROR_ADAPTER_MISMATCH (an adapter does not fit this model),
 *  HZ_ENGINE_ERROR_INVALID_ARGUMENT (NULL adapter, scale not finite). One thread at a
 *  time, like every HzContext call. */
gboolean hz_context_set_adapters (HzContext *ctx, HzAdapter *const *adapters,
                                  const float *scales, guint n, GError **error);
/** Number of adapters with a non-zero scale applied by `ctx` now. */
guint    hz_context_n_adapters (HzContext *ctx);

/* ------------------------------------------------------------- generation */

typedef enum {
  HZ_STOP_NONE = 0, HZ_STOP_EOG, HZ_STOP_LENGTH, HZ_STOP_STRING, HZ_STOP_CANCELLED,
  HZ_STOP_CALLBACK, HZ_STOP_CONTEXT_FULL,
} HzStopReason;

typedef struct {
  HzSamplerParams sampler;
  int32_t n_predict;                 /* max new tokens; <0: until EOG or context full */
  const char *const *stop_strings;   /* NULL-terminated, may be NULL */
  gboolean ignore_eog;               /* keep going past EOS (benchmarks, golden tests) */
  gboolean special;                  /* control tokens are in the text as their texts (as
                                      * llama_token_to_piece(special = true)), except an
                                      * end-of-generation token that stops the reply: for
                                      * replies whose reasoning markers are control tokens
                                      * (hz_model_reasoning_special()) */
} HzGenerateParams;

void hz_generate_params_init (HzGenerateParams *p);

typedef struct {
  guint  n_prompt;          /* prompt tokens */
  guint  n_prompt_evaluated;/* prompt tokens actually computed (rest reused from cache) */
  guint  n_generated;
  double prompt_seconds;    /* prompt processing */
  double ttft_seconds;      /* call start -> first token sent to the callback */
  double gen_seconds;       /* decode time of the generated tokens */
  HzStopReason stop_reason;
} HzGenerateStats;

/** Called on the generating thread for every token. `text` is the newly completed UTF-8
 *  text (may be "" while a multi-byte character is incomplete or a stop string is
 *  pending). Return FALSE to stop (HZ_STOP_CALLBACK). */
typedef gboolean (*HzTokenFunc) (HzToken token, const char *text, gpointer user_data);

/** Generate a continuation of `prompt`. Reuses the longest common prefix between `prompt`
 *  and the tokens already in the KV cache (only the rest is evaluated, at least the last
 *  two prompt tokens on the CPU, so that a prompt found in the cache gives bit for bit the
 *  logits, and with a seed the tokens, of a fresh context), then decodes until
 *  EOG, n_predict, a stop string (not included in the output), cancellation (within one
 *  token) or a full context. Returns the generated text (g_free) — also on cancellation,
 *  when it is the partial text — or NULL with `error` set when the prompt does not fit
 *  (HZ_ENGINE_ERROR_CONTEXT_FULL) or evaluation fails. `out_tokens` (nullable) receives the
 *  generated ids (g_array of HzToken). */
char *hz_context_generate (HzContext *ctx, const HzToken *prompt, gsize n_prompt,
                           const HzGenerateParams *params, HzTokenFunc func,
                           gpointer user_data, GCancellable *cancellable,
                           GArray *out_tokens, HzGenerateStats *stats, GError **error);

/* -------------------------------------------------------------- reasoning */

/** How a thinking model writes a reply's reasoning apart from its answer (engine/reasoning.c). */
typedef enum {
  HZ_REASONING_NONE = 0,       /* no reasoning part: the reply is the answer */
  HZ_REASONING_THINK,          /* "<think>…</think>" before the answer: Qwen3, QwQ,
                                * DeepSeek-R1 and V3.1+, GLM-4.5+, MiniMax-M2, Kimi-K2
                                * Thinking, SmolLM3, Nemotron, Granite 3.3, ... */
  HZ_REASONING_SEED_THINK,     /* "<seed:think>…</seed:think>": ByteDance Seed-OSS */
  HZ_REASONING_BRACKET_THINK,  /* "[THINK]…[/THINK]": Mistral's Magistral and Ministral
                                * Reasoning */
  HZ_REASONING_HARMONY,        /* OpenAI harmony (gpt-oss): messages "<|channel|>analysis
                                * <|message|>…<|end|>" are reasoning, the text of
                                * "<|start|>assistant<|channel|>final<|message|>…" (and
                                * of any channel but analysis) is the answer */
} HzReasoningFormat;

/** A short name of `f` ("none", "think", "seed-think", "bracket-think", "harmony"), static. */
const char *hz_reasoning_format_name (HzReasoningFormat f);
/** The format a Jinja chat template (NULL: none) writes: HARMONY when it mentions
 *  "<|channel|>"; else the tag format whose closing tag it mentions ("</think>", ...: a
 *  template that renders or parses earlier turns' reasoning names it); else NONE.
 *  Thread-safe. */
HzReasoningFormat hz_reasoning_format_from_template (const char *chat_template);
/** The format of the model's replies: its tokenizer.chat_template's
 *  (hz_reasoning_format_from_template()), or, when that says NONE, the format whose
 *  markers are all tokens of the vocabulary ("<|channel|>" and "<|message|>"; an opening
 *  and a closing tag). Thread-safe. */
HzReasoningFormat hz_model_reasoning_format (const HzModel *m);
/** TRUE when a marker of the model's format is a control token of its vocabulary (all of
 *  harmony's are; "<think>" is a user-defined token in Qwen3's and shows as text): its
 *  replies must then be generated with HzGenerateParams.special for the markers to be in
 *  the text the splitter reads. Thread-safe. */
gboolean hz_model_reasoning_special (const HzModel *m);
/** TRUE when the prompt text (len < 0: NUL-terminated) ends with the opening tag of `f`,
 *  white space aside: the template's generation prompt opened the reasoning (QwQ's and
 *  DeepSeek-R1's "<think>\n"), so the reply starts inside it. Qwen3's "<think>\n\n
 *  </think>\n\n" (thinking off) does not. Always FALSE for NONE and HARMONY. */
gboolean hz_reasoning_prompt_opens (HzReasoningFormat f, const char *prompt, gssize len);
/** hz_reasoning_prompt_opens() for the model's format and the last tokens of a prompt
 *  (detokenized with their control tokens). Thread-safe. */
gboolean hz_model_reasoning_opened (const HzModel *m, const HzToken *prompt, gsize n);

/** A streaming splitter: fed a reply in pieces (token texts as they come, cut anywhere,
 *  even inside a tag or a UTF-8 character), it appends to `reasoning` and `answer` the
 *  bytes it has decided, holding back only what could still begin a marker and the white
 *  space around the reasoning. The reasoning is the text inside the tags (or of the
 *  analysis messages) without the white space at its ends; the answer is what follows,
 *  without the white space before it. Tags count only at the start of the reply (white
 *  space aside) — an answer that mentions "<think>" keeps it — unless the prompt `opened`
 *  them (hz_model_reasoning_opened()): then the reply is reasoning up to the closing tag
 *  (an opening tag written again is dropped), and a reply cut off before it is all
 *  reasoning. Harmony: every message's header is markup and dropped; a reply that does not
 *  start with "<|" is all answer. The parts fed piecewise are the same, byte for byte, as
 *  those of the whole text (hz_reasoning_split()); the answer of pieces that are whole
 *  UTF-8 characters comes out in whole characters. Plain data, one thread at a time. */
typedef struct _HzReasoningStream HzReasoningStream;
HzReasoningStream *hz_reasoning_stream_new (HzReasoningFormat format, gboolean opened);
void     hz_reasoning_stream_free (HzReasoningStream *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzReasoningStream, hz_reasoning_stream_free)
/** Feed `len` bytes of `piece` (len < 0: NUL-terminated; NULL: nothing); the bytes decided
 *  now are appended to `reasoning` and `answer`. */
void     hz_reasoning_stream_push (HzReasoningStream *s, const char *piece, gssize len,
                                   GString *reasoning, GString *answer);
/** The reply is complete (or was cut off): append what was held back. Held white space
 *  and an unfinished closing tag at the end of the reasoning are dropped. */
void     hz_reasoning_stream_finish (HzReasoningStream *s, GString *reasoning, GString *answer);
/** TRUE while the text fed so far ends inside the reasoning (what a UI shows as
 *  "Thinking…"). */
gboolean hz_reasoning_stream_in_reasoning (const HzReasoningStream *s);

/** Split a whole reply (len < 0: NUL-terminated) as the stream does: the reasoning and the
 *  answer as new strings (either pointer nullable; g_free). */
void  hz_reasoning_split (HzReasoningFormat format, gboolean opened, const char *text,
                          gssize len, char **reasoning, char **answer);
/** The answer of a stored reply (g_free): its reasoning left out, as the templates that do
 *  it read earlier turns: a leading tagged part, or — for a text with a closing tag and no
 *  opening tag before it (its prompt had opened the tag) — what precedes the closing tag;
 *  harmony markup and analysis messages. A text without markers is returned as it is.
 *  hz_model_render_chat() applies this to every assistant message, so the next prompt
 *  never carries an earlier reply's reasoning, whatever the template does. */
char *hz_reasoning_strip (HzReasoningFormat format, const char *text, gssize len);

G_END_DECLS
