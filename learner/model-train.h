/* learner/model-train.h — llama-family training forward/backward with LoRA adapters over
 * a frozen base in any quant format.
 *
 * The graph is the engine's serving forward (engine/cpu/forward.h: RMSNorm, q/k/v with
 * optional biases and q/k norms, RoPE NORM/NEOX with the engine's scaling tables, causal
 * GQA attention, output projection, SwiGLU FFN, final norm, output matrix) written with
 * the ops of train-ops.h, each with its hand-written backward; adapters sit on the projections
 * of the HzLora given at creation. Float (_f32) for training, double (_f64) for gradient
 * checks: one source (model-train-impl.c) compiled twice (see real.h).
 *
 * Threads: a graph runs its ops on its own HzOpsThreads (hz_train_graph_set_threads;
 * one thread unless set), with bit-identical results for every thread count.
 * Thread safety: a graph is used by one thread at a time; graphs over the same HzLlm may
 * run in parallel.
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include "hanzo/engine-train.h"
#include "lora.h"
#include "train-ops.h"   /* HzOpsThreads */

G_BEGIN_DECLS

#undef HZ_REAL_DOUBLE
#define HZ_REAL_DOUBLE 0
#include "model-train-decl.h"
#undef HZ_REAL_DOUBLE
#define HZ_REAL_DOUBLE 1
#include "model-train-decl.h"
#undef HZ_REAL_DOUBLE
#undef REAL
#undef HZ_R

/** A frozen base for training: the GGUF file and its bound weights. */
typedef struct {
  HzGguf *gguf;
  HzLlm  *llm;
} HzTrainBase;

/** Open a llama/qwen2/qwen3 GGUF (any quant formats) for training. Errors: those of
 *  hz_gguf_open and hz_llm_load. */
HzTrainBase *hz_train_base_open (const char *path, GError **error);
void         hz_train_base_free (HzTrainBase *b);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzTrainBase, hz_train_base_free)

/** RoPE tables of positions 0..T-1 for `llm`: float [T, n_rot] as hz_cpu_rope_cache
 *  (g_free). */
float *hz_train_rope_table (const HzLlm *llm, int64_t T);

G_END_DECLS
