/* engine/perplexity.h — perplexity of a model on a text, by llama.cpp's llama-perplexity
 * method (tools/perplexity/perplexity.cpp, `perplexity()`), so values compare with
 * llama.cpp's on the same file:
 *
 *   1. the whole text is tokenized with the model's special tokens (BOS first);
 *   2. it is cut into n_chunk = n_tokens / n_ctx chunks of n_ctx tokens (the tail is dropped;
 *      at least 2 * n_ctx tokens are required);
 *   3. each chunk is evaluated from an empty KV cache in batches of n_batch tokens, with its
 *      first token replaced by BOS (when the model adds one);
 *   4. only the second half is scored: for positions j in [n_ctx/2, n_ctx - 1) the negative
 *      log-likelihood of token j+1 under the logits of position j (log-softmax with a float
 *      maximum and a double sum of expf, as llama.cpp);
 *   5. PPL = exp(mean NLL) over all scored tokens; its error is PPL * sqrt((E[nll²] -
 *      E[nll]²) / (N - 1)) (llama.cpp's "+/-").
 *
 * Units: NLL in nats per token. Thread safety: uses one HzContext of `model` internally;
 * the model may be shared with other threads.
 */
#pragma once

#include "hanzo/engine.h"

G_BEGIN_DECLS

typedef struct {
  guint n_ctx;      /* tokens per chunk (llama-perplexity -c); 0 = 512 */
  guint n_batch;    /* tokens per forward pass; 0 = 512; capped at n_ctx */
  gint  n_chunks;   /* < 0: all chunks; else at most this many */
  guint n_threads;  /* 0 = the model's */
} HzPerplexityParams;

void hz_perplexity_params_init (HzPerplexityParams *p);

typedef struct {
  double ppl;         /* final estimate */
  double ppl_error;   /* the "+/-" of llama-perplexity */
  double mean_nll;    /* nats per scored token */
  guint  n_tokens;    /* tokens of the text (BOS included) */
  guint  n_chunks;
  guint  n_scored;    /* tokens scored in total: n_chunks * (n_ctx - n_ctx/2 - 1) */
  double seconds;
} HzPerplexityResult;

/** Called after each chunk with its 1-based index and the running estimate exp(mean NLL)
 *  (what llama-perplexity prints as "[i]value,"). Return FALSE to stop early (the result
 *  then covers the chunks done so far). */
typedef gboolean (*HzPerplexityChunkFunc) (guint chunk, guint n_chunks, double ppl,
                                           gpointer user_data);

/** Computes the perplexity of `model` on UTF-8 `text` (len < 0: NUL-terminated).
 *  Errors: HZ_ENGINE_ERROR_INVALID_ARGUMENT when the text has fewer than 2 * n_ctx tokens or
 *  n_ctx < 4 or n_ctx exceeds what a context can hold; evaluation errors;
 *  G_IO_ERROR_CANCELLED. */
gboolean hz_perplexity (HzModel *model, const char *text, gssize len,
                        const HzPerplexityParams *params, HzPerplexityChunkFunc func,
                        gpointer user_data, HzPerplexityResult *result,
                        GCancellable *cancellable, GError **error);

G_END_DECLS
