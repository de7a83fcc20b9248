/* learner/train-ops.h — forward and hand-written backward ops of the llama-family training
 * graph, in float (_f32, the training path) and double (_f64, gradient checks).
 *
 * One source (train-ops-impl.c) is compiled twice with REAL = float and REAL = double (see
 * real.h); the declarations of one instantiation are in train-ops-decl.h, with the shapes,
 * formulas and accumulation conventions of every op. Example:
 *   hz_op_rmsnorm_fwd_f32 (y, rstd, x, w, T, d, eps);
 *   hz_op_rmsnorm_bwd_f64 (dx, NULL, dy, x, w, rstd, T, d);
 *
 * Thread safety: pure functions of their arguments (reentrant).
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include "hanzo/engine-train.h"

G_BEGIN_DECLS

/** Threads for the ops' *_mt variants: a pool of the engine's fork-join threads
 *  (engine/threadpool.h) plus per-thread scratch memory that grows to the largest call and
 *  is kept for the next (dequantized weight rows and packed panels of the matrix products,
 *  see train-ops-gemm.h). Results never depend on the number of threads: work is split by output
 *  rows or columns (or attention heads) and every output element is computed by the same
 *  code in the same order whichever thread takes it; no reduction crosses threads.
 *  Thread safety: one *_mt call at a time per HzOpsThreads (it owns the scratch). */
typedef struct _HzOpsThreads HzOpsThreads;

/** Threads for the ops: up to `n_threads` per call (the caller's thread counts as one;
 *  0 = g_get_num_processors ()). Never fails (thread creation failure aborts, as GLib). */
HzOpsThreads *hz_ops_threads_new (guint n_threads);
void          hz_ops_threads_free (HzOpsThreads *th);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzOpsThreads, hz_ops_threads_free)
/** The maximum threads per call (resolved: >= 1). */
guint         hz_ops_threads_n (const HzOpsThreads *th);
/** Multiply-adds per thread below which an op uses fewer threads (waking a thread costs
 *  microseconds, more on a busy machine; default 2^20). 0 splits every op over as many threads as it has pieces,
 *  however small (tests of the thread invariance on tiny shapes). */
void          hz_ops_threads_set_min_work (HzOpsThreads *th, double min_work);

#undef HZ_REAL_DOUBLE
#define HZ_REAL_DOUBLE 0
#include "train-ops-decl.h"
#undef HZ_REAL_DOUBLE
#define HZ_REAL_DOUBLE 1
#include "train-ops-decl.h"
#undef HZ_REAL_DOUBLE
#undef REAL
#undef HZ_R

G_END_DECLS
