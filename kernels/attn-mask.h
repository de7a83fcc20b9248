/* kernels/attn-mask.h — device helpers of a layer's attention mask (HzkAttnMask, hzk.h:
 * Gemma's sliding window and score soft-capping), shared by the contiguous attention
 * kernels (decode.hip) and the paged ones (attn-paged.hip). Include after gpu_compat.h. */
#pragma once

#include "hzk.h"

/** The first key position a query at position p attends to: p − window + 1 under a window
 *  (clamped to 0), else 0 (as the CPU's hz_cpu_attn_first). */
static __device__ __forceinline__ int
hzk_attn_lo (const HzkAttnMask &mk, int p)
{
  return mk.window > 0 && p + 1 > mk.window ? p + 1 - mk.window : 0;
}

/** A scaled score s, soft-capped when the mask says: c·tanh(s / c), computed as the CPU's
 *  hz_cpu_softcap (tanhf (s · (1/c)) · c). */
static __device__ __forceinline__ float
hzk_softcap_score (const HzkAttnMask &mk, float s)
{
  return mk.softcap > 0.0f ? tanhf (s * (1.0f / mk.softcap)) * mk.softcap : s;
}
