/* learner/optim.h — AdamW, gradient accumulation helpers, global-norm clipping and
 * learning-rate schedules over flat float32 parameter vectors (HzLora's params/grads).
 *
 * AdamW: Loshchilov & Hutter, "Decoupled Weight Decay Regularization", arXiv 1711.05101,
 * with the bias-corrected moments of Adam (Kingma & Ba, arXiv 1412.6980), computed as
 * torch.optim.AdamW (foreach=False, amsgrad=False):
 *   p  <- p * (1 - lr * weight_decay)                         (decoupled decay)
 *   m  <- beta1 m + (1 - beta1) g,  v <- beta2 v + (1 - beta2) g^2
 *   p  <- p - (lr / (1 - beta1^t)) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
 * The moments are float32 like torch's; each element's update is evaluated in double.
 *
 * Thread safety: an HzAdamW is used by one thread at a time.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

typedef struct {
  double lr;            /* peak learning rate (default 1e-4) */
  double beta1, beta2;  /* default 0.9, 0.999 */
  double eps;           /* default 1e-8 */
  double weight_decay;  /* default 0.01 (torch's AdamW default) */
} HzAdamWParams;

/** Defaults of torch.optim.AdamW except lr (1e-4, a common LoRA choice). */
void hz_adamw_params_init (HzAdamWParams *p);

typedef struct {
  HzAdamWParams p;
  gsize   n;
  int64_t step;   /* number of updates done (t in the formula after the increment) */
  float  *m, *v;  /* first and second moments [n] */
} HzAdamW;

/** Optimiser state for n parameters (moments zero, step 0). */
HzAdamW *hz_adamw_new (gsize n, const HzAdamWParams *p);
void     hz_adamw_free (HzAdamW *opt);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzAdamW, hz_adamw_free)

/** One update of params [n] from grads [n] with learning rate `lr` (the schedule's value
 *  for this step; the params' lr is only the default for callers). Increments step. */
void hz_adamw_step (HzAdamW *opt, float *params, const float *grads, double lr);

/** Euclidean norm of g [n] (accumulated in double), as torch.nn.utils.clip_grad_norm_
 *  with norm_type 2. */
double hz_grad_global_norm (const float *g, gsize n);

/** Global-norm clipping as torch.nn.utils.clip_grad_norm_: with N the norm, multiplies g
 *  by min(1, max_norm / (N + 1e-6)). Returns N (before clipping). max_norm <= 0: no
 *  clipping (the norm is still returned). */
double hz_grad_clip (float *g, gsize n, double max_norm);

/** g *= s (e.g. 1 / accumulation steps when micro-batch losses are means). */
void hz_grad_scale (float *g, gsize n, double s);

typedef enum {
  HZ_SCHEDULE_CONSTANT,   /* warmup, then constant */
  HZ_SCHEDULE_LINEAR,     /* warmup, then linear decay to min_ratio at total_steps */
  HZ_SCHEDULE_COSINE,     /* warmup, then half-cosine decay to min_ratio at total_steps */
} HzScheduleKind;

typedef struct {
  HzScheduleKind kind;
  int64_t warmup_steps;   /* linear warmup from 0 */
  int64_t total_steps;    /* decay ends here */
  double  min_ratio;      /* floor of the decay as a fraction of the peak (default 0) */
} HzSchedule;

/** Learning-rate multiplier for 0-based `step`, as transformers' get_linear_schedule_with_warmup
 *  and get_cosine_schedule_with_warmup (num_cycles 0.5) when min_ratio = 0:
 *    step < warmup:  step / warmup
 *    else, progress p = (step - warmup) / max(1, total - warmup), clamped to [0, 1]:
 *      constant: 1;  linear: max(0, 1 - p);  cosine: 0.5 (1 + cos(pi p)),
 *    then mapped to min_ratio + (1 - min_ratio) * value. */
double hz_schedule_factor (const HzSchedule *s, int64_t step);

G_END_DECLS
