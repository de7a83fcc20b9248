/* learner/model-train-decl.h — the training graph for one REAL type. Included twice by
 * model-train.h (float: _f32, double: _f64); do not include directly. */
#include "real.h"

typedef struct HZ_R (_HzTrainGraph) HZ_R (HzTrainGraph);

/** A training graph for sequences of up to `max_tokens` tokens over the frozen base `llm`
 *  (weights in any quant format, borrowed: must outlive the graph) with the adapter
 *  layout of `lora` (borrowed; only its shapes, offsets and scaling are read: parameter
 *  values are passed to each call, so the f64 graph can run on double copies).
 *  recompute = TRUE keeps only each layer's input activations [n_layer + 1, T, n_embd]
 *  and recomputes a layer's forward during the backward (activation checkpointing per
 *  layer; the last layer's cache is still that of the forward, so it is not recomputed);
 *  FALSE keeps every layer's cache. Memory per cache: about
 *  T * (6 n_embd + 3 n_ff + 4 n_head hdk + n_head T) REALs. Never fails except for
 *  out-of-memory (abort, as GLib). */
HZ_R (HzTrainGraph) *HZ_R (hz_train_graph_new) (const HzLlm *llm, const HzLora *lora,
                                                int64_t max_tokens, gboolean recompute);
void HZ_R (hz_train_graph_free) (HZ_R (HzTrainGraph) *g);

/** Run the graph's ops on up to n_threads threads (0 = g_get_num_processors (); a new graph
 *  uses one): the engine's thread pool through HzOpsThreads (train-ops.h). Results are
 *  bit-identical for every thread count. Not while a forward or backward runs. */
void  HZ_R (hz_train_graph_set_threads) (HZ_R (HzTrainGraph) *g, guint n_threads);
/** The graph's thread count (resolved, >= 1). */
guint HZ_R (hz_train_graph_n_threads) (const HZ_R (HzTrainGraph) *g);
/** The graph's HzOpsThreads (owned by the graph, replaced by set_threads): for running loss
 *  heads' *_mt ops on the same threads, and for tests (hz_ops_threads_set_min_work). */
HzOpsThreads *HZ_R (hz_train_graph_threads) (HZ_R (HzTrainGraph) *g);

/** Forward pass over tokens[0..T) at positions 0..T-1 (1 <= T <= max_tokens; ids in
 *  [0, n_vocab), asserted): returns the logits [T, n_vocab], owned by the graph and valid
 *  until the next forward. `params` is the flat adapter vector in the layout of the
 *  graph's HzLora (REAL copy of lora->params), or NULL to run the plain base (adapters
 *  off: the GRPO reference policy). Also zeroes the graph's dlogits. Formulas: see
 *  engine/cpu/forward.h (the same llama/qwen2/qwen3 graph, biases and q/k norms
 *  included). */
const REAL *HZ_R (hz_train_forward) (HZ_R (HzTrainGraph) *g, const REAL *params,
                                     const int32_t *tokens, int64_t T);

/** The gradient of the loss with respect to the logits of the last forward, [T, n_vocab],
 *  zeroed by the forward; loss heads (cross-entropy, GRPO) add into it before
 *  hz_train_backward. */
REAL *HZ_R (hz_train_dlogits) (HZ_R (HzTrainGraph) *g);

/** Backward pass of the last forward (same `params`, not NULL): propagates dlogits
 *  through the model and ADDS d loss / d params into `grads` (flat, the layout of
 *  params). The base is frozen (no gradients for it). */
void HZ_R (hz_train_backward) (HZ_R (HzTrainGraph) *g, const REAL *params, REAL *grads);

/** One supervised micro-step: forward, cross-entropy summed over the tokens with
 *  targets[t] >= 0 (targets[t] is the token expected after tokens[t]; negative = masked,
 *  e.g. -100 for prompt tokens), backward of `weight` x that sum into grads
 *  (weight = 1 / number of counted tokens of the whole batch gives the batch-mean loss of
 *  torch's cross_entropy). Returns the summed loss (nats) and the count in *n_valid
 *  (nullable). With grads == NULL only the forward and the loss are computed. */
double HZ_R (hz_train_sft_step) (HZ_R (HzTrainGraph) *g, const REAL *params, REAL *grads,
                                 const int32_t *tokens, const int32_t *targets, int64_t T,
                                 double weight, int64_t *n_valid);
