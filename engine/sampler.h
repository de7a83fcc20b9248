/* engine/sampler.h — internal (non-public) entry points of engine/sampler.c.
 * The public sampler API is in hanzo/engine.h. */
#pragma once

#include "hanzo/engine.h"

G_BEGIN_DECLS

/* Apply the penalty stage of hz_sampler_sample() (repeat / frequency / presence over the
 * current window) to `logits` in place. Documented in sampler.c. */
void hz_sampler_apply_penalties (HzSampler *s, float *logits, int32_t n_vocab);

/* Whether the penalty stage can change logits (a repeat, frequency or presence penalty
 * set and a window that is not off). Documented in sampler.c. */
gboolean hz_sampler_has_penalties (const HzSampler *s);

/* hz_sampler_sample() over the tokens of the bitmap `allow` only (the JSON constraint's
 * mask). Documented in sampler.c. */
HzToken hz_sampler_sample_masked (HzSampler *s, const float *logits, int32_t n_vocab,
                                  const guint64 *allow);

/* The parameters the sampler runs with (after sanitizing). Documented in sampler.c. */
const HzSamplerParams *hz_sampler_get_params (const HzSampler *s);

G_END_DECLS
