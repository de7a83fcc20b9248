/* engine/sampler.c — HzSampler: token selection from a row of logits.
 *
 * The chain follows llama.cpp's common sampler (src/llama-sampling.cpp, common/sampling.cpp)
 * in the order documented in hanzo/engine.h:
 *
 *   penalties -> top-k -> temperature -> top-p -> min-p -> draw
 *
 * with temperature <= 0 short-circuiting to greedy (argmax after the penalties).
 *
 * Candidates are (logit, id) pairs ordered by a total order: larger logit first, equal
 * logits by lower id. Every selection step (partial selection, sort) uses that order, so
 * the result is a pure function of (logits, history, params, RNG state): no step depends on
 * the platform's qsort stability or on memory addresses.
 *
 * Non-finite logits (documented in hz_sampler_sample below): NaN is treated as -inf, -inf
 * tokens are never drawn, and +inf tokens win outright (greedy: the lowest +inf id;
 * sampling: uniform among the +inf tokens). A row with no finite or +inf value yields the
 * lowest id 0 (all tokens tie at -inf).
 *
 * Efficiency (vocab ~150k): the row is copied only when penalties apply (which then touch
 * only the tokens in the window); top-k up to 1024 is one pass with a k-element heap, larger
 * k an O(n) introselect; top-p is a weighted quickselect (O(n) expected, no full sort);
 * min-p and the draw are linear; exp() is evaluated once per candidate. All buffers live
 * in the sampler and are only reallocated when n_vocab grows.
 */
#include "hanzo/engine-error.h"
#include "sampler.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------ RNG */

/* xoshiro256** 1.0 (D. Blackman, S. Vigna, "Scrambled linear pseudorandom number
 * generators", ACM TOMS 2021; prng.di.unimi.it), seeded through splitmix64 as its authors
 * recommend. Deterministic across platforms: only 64-bit integer arithmetic. */
typedef struct { guint64 s[4]; } HzRng;

static inline guint64
rotl64 (guint64 x, int k)
{
  return (x << k) | (x >> (64 - k));
}

static guint64
splitmix64_next (guint64 *state)
{
  guint64 z = (*state += G_GUINT64_CONSTANT (0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT (0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT (0x94D049BB133111EB);
  return z ^ (z >> 31);
}

static void
rng_seed (HzRng *r, guint64 seed)
{
  guint64 sm = seed;
  for (int i = 0; i < 4; i++)
    r->s[i] = splitmix64_next (&sm);
}

static guint64
rng_next (HzRng *r)
{
  guint64 *s = r->s;
  const guint64 result = rotl64 (s[1] * 5, 7) * 9;
  const guint64 t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl64 (s[3], 45);
  return result;
}

/* Uniform double in [0, 1) with 53 random bits. */
static double
rng_uniform (HzRng *r)
{
  return (double) (rng_next (r) >> 11) * 0x1.0p-53;
}

/* ------------------------------------------------------------ candidates */

/* A candidate token. `w` is its unnormalised probability exp(logit - max), filled in once
 * the temperature is applied; before that it is unused. */
typedef struct {
  float   logit;
  float   w;
  int32_t id;
} HzCand;

/* Total order: a before b when a's logit is larger, or equal and a's id lower. */
static inline gboolean
cand_before (const HzCand *a, const HzCand *b)
{
  return a->logit > b->logit || (a->logit == b->logit && a->id < b->id);
}

static int
cand_cmp (const void *pa, const void *pb)
{
  const HzCand *a = pa, *b = pb;
  if (cand_before (a, b))
    return -1;
  if (cand_before (b, a))
    return 1;
  return 0;
}

static inline void
cand_swap (HzCand *a, HzCand *b)
{
  HzCand t = *a;
  *a = *b;
  *b = t;
}

/* Hoare partition of c[lo..hi) (hi - lo >= 3) around a median-of-three pivot. Returns j with
 * lo <= j < hi - 1 such that every element of c[lo..j] comes before-or-is every element of
 * c[j+1..hi) in the total order. Both scans stop at the pivot (the order is total over
 * distinct ids, so nothing else compares equal to it). */
static gsize
cand_partition (HzCand *c, gsize lo, gsize hi)
{
  gsize mid = lo + (hi - lo) / 2;
  if (cand_before (&c[mid], &c[lo]))
    cand_swap (&c[mid], &c[lo]);
  if (cand_before (&c[hi - 1], &c[lo]))
    cand_swap (&c[hi - 1], &c[lo]);
  if (cand_before (&c[hi - 1], &c[mid]))
    cand_swap (&c[hi - 1], &c[mid]);
  const HzCand pivot = c[mid];
  gsize i = lo, j = hi;
  for (;;)
    {
      while (cand_before (&c[i], &pivot))
        i++;
      do
        j--;
      while (cand_before (&pivot, &c[j]));
      if (i >= j)
        return j;
      cand_swap (&c[i], &c[j]);
      i++;
    }
}

/* Rearrange c[0..n) so that c[0..m) holds the first m elements of the total order (in no
 * particular order): introselect — quickselect over cand_partition() with a depth limit
 * after which the remaining range is sorted, so O(n) expected and O(n log n) worst case. */
static void
cand_select (HzCand *c, gsize n, gsize m)
{
  if (m == 0 || m >= n)
    return;
  gsize lo = 0, hi = n;  /* invariant: c[0..lo) < c[lo..hi) < c[hi..n), lo <= m < hi */
  int depth = 2 * g_bit_storage (n);
  while (hi - lo > 16 && depth-- > 0)
    {
      gsize j = cand_partition (c, lo, hi);
      if (m <= j)
        hi = j + 1;
      else
        lo = j + 1;
      if (lo == m)
        return;
    }
  qsort (c + lo, hi - lo, sizeof *c, cand_cmp);
}

/* Top-k of a raw row for small k: one pass with a k-element min-heap (root = the last of the
 * kept elements in the total order). Ids arrive in increasing order, so a newcomer with the
 * root's logit never displaces it: ties go to the lower id. NaN and -inf are skipped.
 * Writes up to k candidates to `heap` and returns their number. O(n + r log k), r the
 * number of replacements (small for any non-adversarial row). */
static gsize
top_k_heap (const float *v, gsize n, gsize k, HzCand *heap)
{
  gsize len = 0;
  for (gsize i = 0; i < n; i++)
    {
      const float l = v[i];
      if (!(l > -INFINITY))
        continue;
      HzCand x = { l, 0.0f, (int32_t) i };
      gsize pos;
      if (len < k)
        {
          /* Sift up. */
          pos = len++;
          while (pos > 0)
            {
              gsize parent = (pos - 1) / 2;
              if (!cand_before (&heap[parent], &x))
                break;
              heap[pos] = heap[parent];
              pos = parent;
            }
          heap[pos] = x;
          continue;
        }
      if (!(l > heap[0].logit))
        continue;  /* not before the root (equal logit: higher id) */
      /* Replace the root and sift down. */
      pos = 0;
      for (;;)
        {
          gsize child = 2 * pos + 1;
          if (child >= len)
            break;
          if (child + 1 < len && cand_before (&heap[child], &heap[child + 1]))
            child++;  /* the later of the two children */
          if (!cand_before (&x, &heap[child]))
            break;
          heap[pos] = heap[child];
          pos = child;
        }
      heap[pos] = x;
    }
  return len;
}

/* ---------------------------------------------------------------- sampler */

struct _HzSampler {
  HzSamplerParams p;
  HzRng rng;

  /* Penalty window: ring buffer of accepted tokens. cap == repeat_last_n when > 0; for
   * repeat_last_n < 0 (unbounded) the ring grows by doubling and never evicts. */
  HzToken *ring;
  gsize    ring_cap;
  gsize    ring_len;
  gsize    ring_head;  /* index of the oldest token */

  /* Per-call buffers sized to the largest n_vocab seen (never shrunk). */
  gsize    vocab_cap;
  float   *work;       /* penalised copy of the row */
  HzCand  *cand;       /* candidate list */
  int32_t *count;      /* occurrences in the window; all zero between calls */
};

void
hz_sampler_params_init (HzSamplerParams *p)
{
  g_return_if_fail (p != NULL);
  /* llama.cpp's common_params_sampling defaults, except temperature (greedy here). */
  p->temperature = 0.0f;
  p->top_k = 40;
  p->top_p = 0.95f;
  p->min_p = 0.05f;
  p->repeat_penalty = 1.0f;
  p->repeat_last_n = 64;
  p->presence_penalty = 0.0f;
  p->frequency_penalty = 0.0f;
  p->seed = 0;
}

/* Replace values that would poison the arithmetic by the value that turns the stage off. */
static void
params_sanitize (HzSamplerParams *p)
{
  if (isnan (p->temperature))
    p->temperature = 0.0f;
  if (p->temperature > FLT_MAX)
    p->temperature = FLT_MAX;  /* +inf: as flat as a float temperature gets */
  if (isnan (p->top_p))
    p->top_p = 1.0f;
  if (isnan (p->min_p))
    p->min_p = 0.0f;
  if (!isfinite (p->repeat_penalty) || p->repeat_penalty <= 0.0f)
    p->repeat_penalty = 1.0f;
  if (!isfinite (p->presence_penalty))
    p->presence_penalty = 0.0f;
  if (!isfinite (p->frequency_penalty))
    p->frequency_penalty = 0.0f;
}

/**
 * hz_sampler_new:
 * @p: (nullable): parameters (copied); NULL means hz_sampler_params_init() defaults.
 *
 * Create a sampler. Parameters that would make the arithmetic meaningless are turned off
 * instead of rejected: a NaN temperature means greedy, NaN top_p/min_p mean off, a
 * repeat_penalty that is not finite or <= 0 means 1 (off), non-finite presence/frequency
 * penalties mean 0. The RNG is xoshiro256** seeded from p->seed via splitmix64.
 *
 * Returns: (transfer full): a new sampler; free with hz_sampler_free(). Never NULL.
 * Thread safety: the new object is used from one thread at a time.
 */
HzSampler *
hz_sampler_new (const HzSamplerParams *p)
{
  HzSampler *s = g_new0 (HzSampler, 1);
  if (p)
    s->p = *p;
  else
    hz_sampler_params_init (&s->p);
  params_sanitize (&s->p);
  if (s->p.repeat_last_n > 0)
    {
      s->ring_cap = (gsize) s->p.repeat_last_n;
      s->ring = g_new (HzToken, s->ring_cap);
    }
  rng_seed (&s->rng, s->p.seed);
  return s;
}

/** Free a sampler and its buffers. NULL is allowed. */
void
hz_sampler_free (HzSampler *s)
{
  if (!s)
    return;
  g_free (s->ring);
  g_free (s->work);
  g_free (s->cand);
  g_free (s->count);
  g_free (s);
}

/**
 * hz_sampler_reset:
 * @s: a sampler
 *
 * Forget the penalty window and re-seed the RNG with the original seed, so that the same
 * sequence of hz_sampler_accept()/hz_sampler_sample() calls after a reset yields the same
 * tokens as on a fresh sampler. Buffers are kept. One thread at a time.
 */
void
hz_sampler_reset (HzSampler *s)
{
  g_return_if_fail (s != NULL);
  s->ring_len = 0;
  s->ring_head = 0;
  rng_seed (&s->rng, s->p.seed);
}

/**
 * hz_sampler_accept:
 * @s: a sampler
 * @t: a token id (prompt or generated)
 *
 * Append @t to the penalty window (the last repeat_last_n accepted tokens; all tokens since
 * the last reset when repeat_last_n < 0; nothing when repeat_last_n == 0). Ids outside
 * [0, n_vocab) of a later hz_sampler_sample() call are kept but ignored there. O(1)
 * amortised. One thread at a time.
 */
void
hz_sampler_accept (HzSampler *s, HzToken t)
{
  g_return_if_fail (s != NULL);
  if (s->p.repeat_last_n == 0)
    return;
  if (s->p.repeat_last_n < 0 && s->ring_len == s->ring_cap)
    {
      /* Unbounded window: grow (the ring is contiguous from head 0 in this mode). */
      s->ring_cap = s->ring_cap ? s->ring_cap * 2 : 256;
      s->ring = g_renew (HzToken, s->ring, s->ring_cap);
    }
  if (s->ring_len < s->ring_cap)
    {
      s->ring[(s->ring_head + s->ring_len) % s->ring_cap] = t;
      s->ring_len++;
    }
  else
    {
      /* Full bounded window: overwrite the oldest. */
      s->ring[s->ring_head] = t;
      s->ring_head = (s->ring_head + 1) % s->ring_cap;
    }
}

static void
ensure_buffers (HzSampler *s, gsize n_vocab)
{
  if (n_vocab <= s->vocab_cap)
    return;
  g_free (s->work);
  g_free (s->cand);
  g_free (s->count);
  s->work = g_new (float, n_vocab);
  s->cand = g_new (HzCand, n_vocab);
  s->count = g_new0 (int32_t, n_vocab);
  s->vocab_cap = n_vocab;
}

static gboolean
penalties_active (const HzSampler *s)
{
  const HzSamplerParams *p = &s->p;
  return s->ring_len > 0 && (p->repeat_penalty != 1.0f || p->frequency_penalty != 0.0f ||
                             p->presence_penalty != 0.0f);
}

/* Penalties (llama.cpp llama_sampler_penalties_apply): for every token that occurs c > 0
 * times in the window,
 *   logit = logit > 0 ? logit / repeat_penalty : logit * repeat_penalty
 *   logit -= c * frequency_penalty + presence_penalty
 * Each distinct token is penalised once. `v` is indexed by id; needs s->count (zeroed). */
static void
apply_penalties (HzSampler *s, float *v, gsize n_vocab)
{
  const HzSamplerParams *p = &s->p;
  if (!penalties_active (s))
    return;
  for (gsize i = 0; i < s->ring_len; i++)
    {
      HzToken t = s->ring[(s->ring_head + i) % s->ring_cap];
      if (t >= 0 && (gsize) t < n_vocab)
        s->count[t]++;
    }
  for (gsize i = 0; i < s->ring_len; i++)
    {
      HzToken t = s->ring[(s->ring_head + i) % s->ring_cap];
      if (t < 0 || (gsize) t >= n_vocab || s->count[t] == 0)
        continue;
      float l = v[t];
      l = l > 0.0f ? l / p->repeat_penalty : l * p->repeat_penalty;
      l -= (float) s->count[t] * p->frequency_penalty + p->presence_penalty;
      v[t] = l;
      s->count[t] = 0;  /* penalised once; also restores the all-zero invariant */
    }
}

/* Argmax with NaN treated as -inf; ties go to the lowest id. */
static HzToken
argmax (const float *v, gsize n)
{
  gsize best = 0;
  float best_v = -INFINITY;
  for (gsize i = 0; i < n; i++)
    if (v[i] > best_v)  /* false for NaN */
      {
        best_v = v[i];
        best = i;
      }
  return (HzToken) best;
}

/* All tokens of the row with a probability above zero (NaN and -inf dropped). */
static gsize
all_candidates (const float *v, gsize n_vocab, HzCand *c)
{
  gsize n = 0;
  for (gsize i = 0; i < n_vocab; i++)
    if (v[i] > -INFINITY)  /* false for NaN and -inf */
      {
        c[n].logit = v[i];
        c[n].id = (int32_t) i;
        n++;
      }
  return n;
}

/* Largest k at which top_k_heap() is used; above it, all_candidates() + cand_select(). */
#define HZ_TOP_K_HEAP_MAX 1024

/* The candidate list after top-k (k <= 0: every token). */
static gsize
top_k_candidates (const float *v, gsize n_vocab, int32_t k, HzCand *c)
{
  if (k > 0 && k <= HZ_TOP_K_HEAP_MAX)
    return top_k_heap (v, n_vocab, (gsize) k, c);
  gsize n = all_candidates (v, n_vocab, c);
  if (k > 0 && (gsize) k < n)
    {
      cand_select (c, n, (gsize) k);
      n = (gsize) k;
    }
  return n;
}

/* Temperature, then the weights w = exp(l / T - max(l) / T). The shift by the maximum keeps
 * the largest weight at exactly 1, so no finite logit can overflow at a small temperature
 * (very negative ones underflow to weight 0). If some logit is +inf, only the +inf tokens
 * are kept, with equal weights (the limit of the softmax). The stored logit becomes the
 * shifted, scaled one. Returns the new count (>= 1 when n >= 1). */
static gsize
apply_temperature (HzCand *c, gsize n, float temperature)
{
  float max = -INFINITY;
  for (gsize i = 0; i < n; i++)
    if (c[i].logit > max)
      max = c[i].logit;
  if (max == INFINITY)
    {
      gsize k = 0;
      for (gsize i = 0; i < n; i++)
        if (c[i].logit == INFINITY)
          c[k++] = (HzCand) { 0.0f, 1.0f, c[i].id };
      return k;
    }
  const double inv_t = 1.0 / (double) temperature;
  for (gsize i = 0; i < n; i++)
    {
      const float l = (float) ((double) (c[i].logit - max) * inv_t);
      c[i].logit = l;
      c[i].w = expf (l);
    }
  return n;
}

static double
weight_sum (const HzCand *c, gsize n)
{
  double z = 0.0;
  for (gsize i = 0; i < n; i++)
    z += c[i].w;
  return z;
}

/* Top-p (nucleus, Holtzman et al. 2019; llama.cpp llama_sampler_top_p_apply): keep the
 * smallest set of first candidates in the total order whose probability reaches top_p (at
 * least one). Found without sorting by a weighted quickselect: partition, and descend into
 * the part that contains the point where the running mass crosses top_p * sum(w). The kept
 * candidates end up in c[0..result), unordered. O(n) expected. */
static gsize
apply_top_p (HzCand *c, gsize n, float top_p)
{
  const double target = (double) top_p * weight_sum (c, n);
  double acc = 0.0;          /* mass of c[0..lo), all in the nucleus */
  gsize lo = 0, hi = n;      /* invariant: c[0..lo) < c[lo..hi) < c[hi..n) */
  int depth = 2 * g_bit_storage (n);
  while (hi - lo > 16 && depth-- > 0)
    {
      gsize j = cand_partition (c, lo, hi);
      double left = 0.0;
      for (gsize i = lo; i <= j; i++)
        left += c[i].w;
      if (acc + left >= target)
        hi = j + 1;
      else
        {
          acc += left;
          lo = j + 1;
        }
    }
  qsort (c + lo, hi - lo, sizeof *c, cand_cmp);
  for (gsize i = lo; i < hi; i++)
    {
      acc += c[i].w;
      if (acc >= target)
        return i + 1;
    }
  return hi > 0 ? hi : 1;  /* rounding: the whole mass fell short of target by an ulp */
}

/* Min-p (llama.cpp llama_sampler_min_p_apply): keep candidates whose probability is at least
 * min_p times the largest. The largest weight is 1 (see apply_temperature()), so the test
 * is w >= min_p; for min_p > 1 only the most probable tokens stay. Order preserved. */
static gsize
apply_min_p (HzCand *c, gsize n, float min_p)
{
  const float thresh = min_p < 1.0f ? min_p : 1.0f;
  gsize k = 0;
  for (gsize i = 0; i < n; i++)
    if (c[i].w >= thresh)
      c[k++] = c[i];
  return k;  /* >= 1: a weight of 1 always passes */
}

/* One draw from the distribution w / sum(w). */
static HzToken
draw (HzRng *rng, const HzCand *c, gsize n)
{
  const double u = rng_uniform (rng) * weight_sum (c, n);
  double cum = 0.0;
  for (gsize i = 0; i < n; i++)
    {
      cum += c[i].w;
      if (u < cum)
        return c[i].id;
    }
  return c[n - 1].id;  /* u within rounding of the sum */
}

/**
 * hz_sampler_sample:
 * @s: a sampler
 * @logits: [n_vocab] unnormalised float32 logits (read only)
 * @n_vocab: row length, > 0
 *
 * Pick the next token. Stages (each skipped when off, see HzSamplerParams):
 *  1. penalties over the window (repeat: llama.cpp's divide-positive/multiply-negative
 *     rule; then frequency * count + presence subtracted);
 *  2. temperature <= 0: return the argmax (ties -> lowest id), no RNG draw;
 *  3. top-k (k largest; ties broken by lower id);
 *  4. temperature: logits / temperature;
 *  5. top-p over the softmax of what is left (smallest set reaching the mass, >= 1 token);
 *  6. min-p: drop tokens with p < min_p * p_max;
 *  7. one draw from the softmax of the survivors (one RNG step).
 *
 * Non-finite logits never crash: NaN counts as -inf; -inf tokens are never drawn; if any
 * token is +inf, the choice is uniform among the +inf tokens (greedy: the lowest such id);
 * a row with no token above -inf returns 0. Temperature is applied to logits shifted by
 * their maximum, so even a tiny temperature cannot overflow (it tends to the argmax).
 *
 * Returns: the token id in [0, n_vocab), or -1 when @logits is NULL or @n_vocab <= 0.
 * Cost: O(n_vocab + window) expected; no allocation unless n_vocab exceeds every earlier
 * call's. The sampled token is not added to the window: call hz_sampler_accept().
 * Thread safety: one thread at a time per sampler.
 */
HzToken
hz_sampler_sample (HzSampler *s, const float *logits, int32_t n_vocab)
{
  g_return_val_if_fail (s != NULL, -1);
  if (logits == NULL || n_vocab <= 0)
    return -1;
  const gsize nv = (gsize) n_vocab;
  const HzSamplerParams *p = &s->p;

  ensure_buffers (s, nv);
  const float *row = logits;
  if (penalties_active (s))
    {
      memcpy (s->work, logits, nv * sizeof (float));
      apply_penalties (s, s->work, nv);
      row = s->work;
    }

  if (p->temperature <= 0.0f)
    return argmax (row, nv);

  HzCand *c = s->cand;
  gsize n = top_k_candidates (row, nv, p->top_k, c);
  if (n == 0)
    return 0;  /* nothing above -inf: every token ties, lowest id */
  n = apply_temperature (c, n, p->temperature);
  if (p->top_p < 1.0f)
    n = apply_top_p (c, n, p->top_p);
  if (p->min_p > 0.0f)
    n = apply_min_p (c, n, p->min_p);
  return draw (&s->rng, c, n);
}

/**
 * hz_sampler_apply_penalties:
 * @s: a sampler
 * @logits: [n_vocab] logits, modified in place
 * @n_vocab: row length
 *
 * Stage 1 of hz_sampler_sample() on its own: apply the repeat, frequency and presence
 * penalties of the current window to @logits, exactly as hz_sampler_sample() does before
 * choosing. Does nothing for a NULL row or n_vocab <= 0. For tests and diagnostics.
 * Thread safety: one thread at a time per sampler.
 */
void
hz_sampler_apply_penalties (HzSampler *s, float *logits, int32_t n_vocab)
{
  g_return_if_fail (s != NULL);
  if (logits == NULL || n_vocab <= 0)
    return;
  ensure_buffers (s, (gsize) n_vocab);
  apply_penalties (s, logits, (gsize) n_vocab);
}

/**
 * hz_sampler_has_penalties:
 * @s: a sampler
 *
 * Whether hz_sampler_sample() can apply a penalty: a repeat penalty other than 1 or a
 * non-zero frequency or presence penalty (after the sanitizing of hz_sampler_new()), with
 * a window that is not off (repeat_last_n != 0). A sampler without penalties samples from
 * the logits alone, which is what the device sampler (engine/backend-hip, hzk_sample)
 * reproduces. Thread safety: reads only.
 */
gboolean
hz_sampler_has_penalties (const HzSampler *s)
{
  g_return_val_if_fail (s != NULL, FALSE);
  const HzSamplerParams *p = &s->p;
  return p->repeat_last_n != 0 && (p->repeat_penalty != 1.0f || p->frequency_penalty != 0.0f ||
                                   p->presence_penalty != 0.0f);
}

/**
 * hz_sampler_get_params:
 * @s: a sampler
 *
 * Returns: (transfer none): the sampler's parameters as it applies them (NaN and
 * out-of-range values already replaced, see hz_sampler_new()); valid while @s lives.
 */
const HzSamplerParams *
hz_sampler_get_params (const HzSampler *s)
{
  g_return_val_if_fail (s != NULL, NULL);
  return &s->p;
}
