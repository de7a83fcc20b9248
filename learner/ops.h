/* learner/ops.h — forward and hand-written backward ops of the llama-family training
 * graph, in float (_f32, the training path) and double (_f64, gradient checks).
 *
 * One source (ops-impl.c) is compiled twice with REAL = float and REAL = double (see
 * real.h); the declarations of one instantiation are in ops-decl.h, with the shapes,
 * formulas and accumulation conventions of every op. Example:
 *   hz_op_rmsnorm_fwd_f32 (y, rstd, x, w, T, d, eps);
 *   hz_op_rmsnorm_bwd_f64 (dx, NULL, dy, x, w, rstd, T, d);
 *
 * Thread safety: pure functions of their arguments (reentrant).
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include "model.h"   /* engine: HzMatrix, HzRopeMode */

G_BEGIN_DECLS

#undef HZ_REAL_DOUBLE
#define HZ_REAL_DOUBLE 0
#include "ops-decl.h"
#undef HZ_REAL_DOUBLE
#define HZ_REAL_DOUBLE 1
#include "ops-decl.h"
#undef HZ_REAL_DOUBLE
#undef REAL
#undef HZ_R

G_END_DECLS
