/* kernels/sample.hip — token selection on the device: greedy argmax and the CPU sampler's
 * chain (engine/sampler.c, llama.cpp's common sampler) for one row of logits, in one block
 * of 1024 threads, so that a decode graph can sample without a host round trip.
 *
 * Semantics (those of hz_sampler_sample without penalties):
 *   temperature <= 0  argmax, ties to the lowest id, NaN ignored (0 if no value);
 *   otherwise         candidates = the non-NaN logits above −inf (none: token 0), ordered
 *                     by logit descending, ties by lower id (the CPU's total order);
 *     top-k (0 < k < #candidates): the first k;
 *     temperature: w = exp((l − max)/T) (computed as the CPU does: (float)((double)(l −
 *                  max) · (1/T)), then expf); if some logit is +inf, w = 1 for the +inf
 *                  tokens and 0 for the others;
 *     top-p (< 1): the shortest prefix of the order whose mass reaches top_p · Σw (>= 1);
 *     min-p (> 0): w >= min(min_p, 1) (the largest w is 1);
 *     draw: token i with probability w_i / Σw over the survivors, from one uniform
 *           u = (xoshiro256** >> 11)·2^-53 of the device RNG state — the CPU sampler's
 *           generator and seeding (hzk_rng_seed), advanced once per draw as the CPU does.
 * How: no sort. The k-th element and the top-p cut are found by a radix select on the
 * order-preserving 32-bit keys of the logits (4 passes of 8 bits, 256-bin histograms in
 * shared memory, counted from the largest bin down), the ties at the cut by an ordered scan
 * (lower ids first). Masses are fixed point (w·2^40 as uint64, integer atomics), so every
 * sum is exact and the result does not depend on the order of the atomics; weights below
 * 2^-40 count as 0 (never drawn: they carry less than 1e-12 of the mass each). The draw
 * is an ordered prefix scan of the survivors' fixed-point weights in id order. The row is
 * read ~14 times (it stays in L2).
 * Reading reference (not copied): ggml-cuda argmax.cu; the radix select follows the usual
 * top-k-by-histogram scheme.
 */
#include "gpu_compat.h"
#include "hzk.h"

#include <limits.h>
#include <math.h>

#define HZK_SMP_THREADS 1024
#define HZK_SMP_SEG 32
#define HZK_FX_ONE 1099511627776.0       /* 2^40: fixed-point unit of the weights */

/** Order-preserving key: a < b (floats, no NaN) iff key(a) < key(b) (unsigned). */
static __device__ __forceinline__ uint32_t
hzk_key (float l)
{
  const uint32_t b = __float_as_uint (l);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

static __device__ __forceinline__ float
hzk_unkey (uint32_t k)
{
  return __uint_as_float ((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}

/** Block argmax of x[0..n): largest value, ties to the lowest index, NaN never wins;
 *  INT_MAX when there is no non-NaN value. All threads get it. sv/si: blockDim/32 each. */
static __device__ int
hzk_block_argmax (const float *HZK_RESTRICT x, int64_t n, float *sv, int *si, int *res)
{
  float best = -INFINITY;
  int idx = INT_MAX;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
    {
      const float v = x[i];
      if (v == v && (idx == INT_MAX || v > best))
        {
          best = v;
          idx = (int) i;
        }
    }
  for (int o = HZK_SMP_SEG / 2; o > 0; o >>= 1)
    {
      const float ov = hzk_shfl_xor (best, o, HZK_SMP_SEG);
      const int oi = hzk_shfl_xor (idx, o, HZK_SMP_SEG);
      if (oi != INT_MAX && (idx == INT_MAX || ov > best || (ov == best && oi < idx)))
        {
          best = ov;
          idx = oi;
        }
    }
  if (threadIdx.x % HZK_SMP_SEG == 0)
    {
      sv[threadIdx.x / HZK_SMP_SEG] = best;
      si[threadIdx.x / HZK_SMP_SEG] = idx;
    }
  __syncthreads ();
  if (threadIdx.x == 0)
    {
      float b = sv[0];
      int k = si[0];
      for (int s = 1; s < (int) (blockDim.x / HZK_SMP_SEG); s++)
        if (si[s] != INT_MAX && (k == INT_MAX || sv[s] > b || (sv[s] == b && si[s] < k)))
          {
            b = sv[s];
            k = si[s];
          }
      *res = k;
    }
  __syncthreads ();
  return *res;
}

/** Exclusive prefix sum of v over the threads in thread order; *total = the sum. sh:
 *  blockDim uint64s. Every thread must call it. */
static __device__ uint64_t
hzk_block_scan (uint64_t v, uint64_t *sh, uint64_t *total)
{
  const int t = threadIdx.x, nt = blockDim.x;
  sh[t] = v;
  __syncthreads ();
  for (int o = 1; o < nt; o <<= 1)
    {
      const uint64_t add = t >= o ? sh[t - o] : 0;
      __syncthreads ();
      sh[t] += add;
      __syncthreads ();
    }
  const uint64_t incl = sh[t];
  *total = sh[nt - 1];
  __syncthreads ();
  return incl - v;
}

struct HzkSmpShared {
  uint64_t hist[256];
  uint64_t scan[HZK_SMP_THREADS];
  float sv[HZK_SMP_THREADS / HZK_SMP_SEG];
  int si[HZK_SMP_THREADS / HZK_SMP_SEG];
  uint32_t prefix;
  uint64_t above;
  int res;
  double u;
};

/** Radix select from the top: over the elements with in(i, l), weights wt(l), find the key
 *  T such that the weight of keys > T (*above) is < target <= that of keys >= T. */
template <class IN, class WT>
static __device__ uint32_t
hzk_radix_top (const float *HZK_RESTRICT x, int64_t n, IN in, WT wt, uint64_t target,
               HzkSmpShared *sh, uint64_t *above_out)
{
  uint32_t prefix = 0, mask = 0;
  uint64_t above = 0;
  for (int shift = 24; shift >= 0; shift -= 8)
    {
      for (int i = threadIdx.x; i < 256; i += blockDim.x)
        sh->hist[i] = 0;
      __syncthreads ();
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
        {
          const float l = x[i];
          if (!in (i, l))
            continue;
          const uint32_t k = hzk_key (l);
          if ((k & mask) != prefix)
            continue;
          const uint64_t w = wt (l);
          if (w)
            atomicAdd ((unsigned long long *) &sh->hist[(k >> shift) & 255u], (unsigned long long) w);
        }
      __syncthreads ();
      if (threadIdx.x == 0)
        {
          uint64_t a = above;
          int b = 255;
          for (; b > 0; b--)
            {
              if (a + sh->hist[b] >= target)
                break;
              a += sh->hist[b];
            }
          sh->prefix = prefix | (uint32_t) b << shift;
          sh->above = a;
        }
      __syncthreads ();
      prefix = sh->prefix;
      above = sh->above;
      mask |= 255u << shift;
    }
  *above_out = above;
  return prefix;
}

/** The index of the need-th element (1-based, lowest index first) among those with
 *  in(i, l) and key(l) == T; −1 if there are fewer. Ordered: thread t scans the contiguous
 *  chunk t of the row. */
template <class IN>
static __device__ int64_t
hzk_tie_cut (const float *HZK_RESTRICT x, int64_t n, IN in, uint32_t T, uint64_t need,
             HzkSmpShared *sh)
{
  const int64_t chunk = (n + blockDim.x - 1) / blockDim.x;
  const int64_t i0 = min (n, (int64_t) threadIdx.x * chunk), i1 = min (n, i0 + chunk);
  uint64_t c = 0;
  for (int64_t i = i0; i < i1; i++)
    c += in (i, x[i]) && hzk_key (x[i]) == T;
  uint64_t total;
  const uint64_t base = hzk_block_scan (c, sh->scan, &total);
  if (threadIdx.x == 0)
    sh->res = -1;
  __syncthreads ();
  if (base < need && base + c >= need)
    {
      uint64_t k = base;
      for (int64_t i = i0; i < i1; i++)
        if (in (i, x[i]) && hzk_key (x[i]) == T && ++k == need)
          {
            sh->res = (int) i;
            break;
          }
    }
  __syncthreads ();
  return sh->res;
}

/** xoshiro256** 1.0 (Blackman, Vigna), as engine/sampler.c. */
static __device__ uint64_t
hzk_xoshiro_next (uint64_t *s)
{
  const uint64_t r = ((s[1] * 5) << 7 | (s[1] * 5) >> 57) * 9;
  const uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = s[3] << 45 | s[3] >> 19;
  return r;
}

__global__ void __launch_bounds__ (HZK_SMP_THREADS)
hzk_sample_kernel (const float *HZK_RESTRICT x, int64_t n, const HzkSampleParams *HZK_RESTRICT pp,
                   uint64_t *HZK_RESTRICT rng, int *HZK_RESTRICT out)
{
  hzk_dep_begin ();
  __shared__ HzkSmpShared sh;
  const HzkSampleParams p = *pp;
  const int tid = threadIdx.x;
  if (!(p.temperature > 0.0f))
    {
      const int k = hzk_block_argmax (x, n, sh.sv, sh.si, &sh.res);
      if (tid == 0)
        *out = k == INT_MAX ? 0 : k;
      return;
    }
  /* candidates: non-NaN above −inf; their maximum (the argmax's value) and count */
  const int top = hzk_block_argmax (x, n, sh.sv, sh.si, &sh.res);
  const float mx = top == INT_MAX ? -INFINITY : x[top];
  if (!(mx > -INFINITY))
    {
      if (tid == 0)
        *out = 0;             /* nothing above −inf: every token ties, lowest id */
      return;
    }
  auto valid = [] (int64_t, float l) { return l > -INFINITY; };
  uint64_t n_valid;
  {
    uint64_t c = 0;
    for (int64_t i = tid; i < n; i += blockDim.x)
      c += x[i] > -INFINITY;
    hzk_block_scan (c, sh.scan, &n_valid);
  }
  /* top-k */
  uint32_t tk = 0;
  int64_t cut_k = n;
  if (p.top_k > 0 && (uint64_t) p.top_k < n_valid)
    {
      uint64_t above;
      tk = hzk_radix_top (x, n, valid, [] (float) { return (uint64_t) 1; }, (uint64_t) p.top_k,
                          &sh, &above);
      cut_k = hzk_tie_cut (x, n, valid, tk, (uint64_t) p.top_k - above, &sh);
    }
  auto kept_k = [=] (int64_t i, float l) {
    if (!(l > -INFINITY))
      return false;
    const uint32_t k = hzk_key (l);
    return k > tk || (k == tk && i <= cut_k);
  };
  /* temperature: fixed-point weights */
  const double inv_t = 1.0 / (double) p.temperature;
  auto wf = [=] (float l) -> float {
    if (mx == INFINITY)
      return l == INFINITY ? 1.0f : 0.0f;
    return expf ((float) ((double) (l - mx) * inv_t));
  };
  auto wt = [=] (float l) -> uint64_t { return (uint64_t) ((double) wf (l) * HZK_FX_ONE + 0.5); };
  /* top-p */
  uint32_t tp = 0;
  int64_t cut_p = n;
  if (p.top_p < 1.0f)
    {
      uint64_t c = 0, total;
      for (int64_t i = tid; i < n; i += blockDim.x)
        if (kept_k (i, x[i]))
          c += wt (x[i]);
      hzk_block_scan (c, sh.scan, &total);
      uint64_t target = (uint64_t) ceil ((double) fmaxf (p.top_p, 0.0f) * (double) total);
      target = target < 1 ? 1 : target > total ? total : target;
      uint64_t above;
      tp = hzk_radix_top (x, n, kept_k, wt, target, &sh, &above);
      const uint64_t wtp = wt (hzk_unkey (tp));
      const uint64_t need = wtp ? (target - above + wtp - 1) / wtp : 1;
      cut_p = hzk_tie_cut (x, n, kept_k, tp, need, &sh);
    }
  const float min_w = p.min_p > 0.0f ? fminf (p.min_p, 1.0f) : 0.0f;
  auto kept = [=] (int64_t i, float l) {
    if (!kept_k (i, l))
      return false;
    const uint32_t k = hzk_key (l);
    if (!(k > tp || (k == tp && i <= cut_p)))
      return false;
    return min_w <= 0.0f || wf (l) >= min_w;
  };
  /* draw: ordered prefix scan of the survivors' weights in id order */
  const int64_t chunk = (n + blockDim.x - 1) / blockDim.x;
  const int64_t i0 = min (n, (int64_t) tid * chunk), i1 = min (n, i0 + chunk);
  uint64_t c = 0, total;
  for (int64_t i = i0; i < i1; i++)
    if (kept (i, x[i]))
      c += wt (x[i]);
  const uint64_t base = hzk_block_scan (c, sh.scan, &total);
  if (tid == 0)
    {
      uint64_t s[4] = { rng[0], rng[1], rng[2], rng[3] };
      sh.u = (double) (hzk_xoshiro_next (s) >> 11) * 0x1.0p-53;
      for (int j = 0; j < 4; j++)
        rng[j] = s[j];
      sh.res = top;            /* total == 0 cannot happen (the max has w = 1); safe value */
    }
  __syncthreads ();
  if (total > 0)
    {
      uint64_t r = (uint64_t) (sh.u * (double) total);
      r = r >= total ? total - 1 : r;
      if (base <= r && r < base + c)
        {
          uint64_t cum = base;
          for (int64_t i = i0; i < i1; i++)
            if (kept (i, x[i]))
              {
                cum += wt (x[i]);
                if (r < cum)
                  {
                    sh.res = (int) i;
                    break;
                  }
              }
        }
    }
  __syncthreads ();
  if (tid == 0)
    *out = sh.res;
}

/** Greedy only: the argmax kernel of the decode graph. */
__global__ void __launch_bounds__ (HZK_SMP_THREADS)
hzk_argmax_kernel (const float *HZK_RESTRICT x, int64_t n, int *HZK_RESTRICT out)
{
  hzk_dep_begin ();
  __shared__ float sv[HZK_SMP_THREADS / HZK_SMP_SEG];
  __shared__ int si[HZK_SMP_THREADS / HZK_SMP_SEG];
  __shared__ int res;
  const int k = hzk_block_argmax (x, n, sv, si, &res);
  if (threadIdx.x == 0)
    *out = k == INT_MAX ? 0 : k;
}

extern "C" int
hzk_argmax (const float *x, int64_t n, int *out, void *stream)
{
  (void) hzk_launch_dep (hzk_argmax_kernel, 1, HZK_SMP_THREADS, 0, (hipStream_t) stream, x, n, out);
  return (int) hipGetLastError ();
}

extern "C" int
hzk_sample (const float *logits, int64_t n, const HzkSampleParams *params, uint64_t *rng,
            int *out, void *stream)
{
  if (n < 1 || n > INT_MAX)
    return (int) hipErrorInvalidValue;
  (void) hzk_launch_dep (hzk_sample_kernel, 1, HZK_SMP_THREADS, 0, (hipStream_t) stream, logits, n, params, rng, out);
  return (int) hipGetLastError ();
}

/* splitmix64 (Vigna), the CPU sampler's seeding of xoshiro256** */
extern "C" void
hzk_rng_seed (uint64_t seed, uint64_t state[4])
{
  uint64_t sm = seed;
  for (int i = 0; i < 4; i++)
    {
      uint64_t z = (sm += 0x9E3779B97F4A7C15ull);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      state[i] = z ^ (z >> 31);
    }
}
