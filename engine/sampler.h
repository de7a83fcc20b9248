/* engine/sampler.h — internal (non-public) entry points of engine/sampler.c.
 * The public sampler API is in hanzo/engine.h. */
#pragma once

#include "hanzo/engine.h"

G_BEGIN_DECLS

/* Apply the penalty stage of hz_sampler_sample() (repeat / frequency / presence over the
 * current window) to `logits` in place. Documented in sampler.c. */
void hz_sampler_apply_penalties (HzSampler *s, float *logits, int32_t n_vocab);

G_END_DECLS
