/* egress/noise.c — exact discrete Gaussian sampling (Canonne, Kamath, Steinke 2020). */
#include "noise.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/random.h>

G_DEFINE_QUARK (hz-noise-error-quark, hz_noise_error)

typedef unsigned __int128 u128;

struct _HzNoise {
  GRand  *insecure;        /* tests only */
  guint8  buf[4096];
  gsize   pos, len;
};

HzNoise *
hz_noise_new (void)
{
  return g_new0 (HzNoise, 1);
}

HzNoise *
hz_noise_new_insecure_for_tests (guint32 seed)
{
  HzNoise *n = g_new0 (HzNoise, 1);
  n->insecure = g_rand_new_with_seed (seed);
  return n;
}

void
hz_noise_free (HzNoise *n)
{
  if (!n)
    return;
  if (n->insecure)
    g_rand_free (n->insecure);
  explicit_bzero (n->buf, sizeof n->buf);
  g_free (n);
}

static gboolean
refill (HzNoise *n, GError **error)
{
  if (n->insecure)
    {
      for (gsize i = 0; i < sizeof n->buf; i += 4)
        {
          guint32 v = g_rand_int (n->insecure);
          memcpy (n->buf + i, &v, 4);
        }
    }
  else
    {
      gsize got = 0;
      while (got < sizeof n->buf)
        {
          ssize_t r = getrandom (n->buf + got, sizeof n->buf - got, 0);
          if (r < 0)
            {
              if (errno == EINTR)
                continue;
              g_set_error (error, HZ_NOISE_ERROR, HZ_NOISE_ERROR_ENTROPY,
                           "getrandom failed: %s", g_strerror (errno));
              return FALSE;
            }
          got += (gsize) r;
        }
    }
  n->pos = 0;
  n->len = sizeof n->buf;
  return TRUE;
}

static gboolean
random_bytes (HzNoise *n, void *dst, gsize k, GError **error)
{
  guint8 *d = dst;
  while (k > 0)
    {
      if (n->pos == n->len && !refill (n, error))
        return FALSE;
      gsize take = MIN (k, n->len - n->pos);
      memcpy (d, n->buf + n->pos, take);
      n->pos += take;
      d += take;
      k -= take;
    }
  return TRUE;
}

gboolean
hz_noise_uniform (HzNoise *n, u128 bound, u128 *out, GError **error)
{
  g_return_val_if_fail (bound >= 1, FALSE);
  if (bound == 1)
    {
      *out = 0;
      return TRUE;
    }
  /* smallest all-ones mask covering bound-1, then rejection */
  u128 mask = bound - 1;
  for (int s = 1; s < 128; s <<= 1)
    mask |= mask >> s;
  gsize nbytes = 0;
  for (u128 m = mask; m; m >>= 8)
    nbytes++;
  for (;;)
    {
      u128 v = 0;
      if (!random_bytes (n, &v, nbytes, error))
        return FALSE;
      v &= mask;
      if (v < bound)
        {
          *out = v;
          return TRUE;
        }
    }
}

/* Bernoulli(num/den) for num <= den */
static gboolean
bernoulli (HzNoise *n, u128 num, u128 den, gboolean *out, GError **error)
{
  u128 u;
  if (!hz_noise_uniform (n, den, &u, error))
    return FALSE;
  *out = u < num;
  return TRUE;
}

/* Bernoulli(exp(-num/den)) for 0 <= num <= den: K = 1; while Bernoulli(gamma / K): K++;
 * return K odd (CKS20 Algorithm 1, first case). */
static gboolean
bernoulli_exp_le1 (HzNoise *n, u128 num, u128 den, gboolean *out, GError **error)
{
  u128 k = 1;
  while (num > 0)
    {
      gboolean a;
      if (!bernoulli (n, num, den * k, &a, error))
        return FALSE;
      if (!a)
        break;
      k++;
    }
  *out = (k & 1) == 1;
  return TRUE;
}

gboolean
hz_noise_bernoulli_exp (HzNoise *n, u128 num, u128 den, gboolean *out, GError **error)
{
  g_return_val_if_fail (den >= 1, FALSE);
  if (num <= den)
    return bernoulli_exp_le1 (n, num, den, out, error);
  /* gamma > 1: exp(-gamma) = exp(-1)^floor(gamma) * exp(-(gamma - floor(gamma))) */
  u128 whole = num / den;
  for (u128 k = 0; k < whole; k++)
    {
      gboolean b;
      if (!bernoulli_exp_le1 (n, 1, 1, &b, error))
        return FALSE;
      if (!b)
        {
          *out = FALSE;
          return TRUE;
        }
    }
  return bernoulli_exp_le1 (n, num - whole * den, den, out, error);
}

gboolean
hz_noise_discrete_laplace (HzNoise *n, uint64_t t, int64_t *out, GError **error)
{
  g_return_val_if_fail (t >= 1, FALSE);
  for (;;)
    {
      u128 u;
      gboolean d, b, y;
      if (!hz_noise_uniform (n, t, &u, error) || !hz_noise_bernoulli_exp (n, u, t, &d, error))
        return FALSE;
      if (!d)
        continue;
      uint64_t v = 0;
      for (;;)
        {
          if (!hz_noise_bernoulli_exp (n, 1, 1, &b, error))
            return FALSE;
          if (!b)
            break;
          v++;
        }
      uint64_t x = (uint64_t) u + t * v;
      if (!bernoulli (n, 1, 2, &y, error))
        return FALSE;
      if (y && x == 0)
        continue;
      *out = y ? -(int64_t) x : (int64_t) x;
      return TRUE;
    }
}

gboolean
hz_noise_discrete_gaussian (HzNoise *n, uint64_t sigma2_num, uint64_t sigma2_den, int64_t *out,
                            GError **error)
{
  double sigma = sqrt ((double) sigma2_num / (double) sigma2_den);
  if (!(sigma >= 1.0 && sigma <= 1099511627776.0) || sigma2_den == 0)
    {
      g_set_error (error, HZ_NOISE_ERROR, HZ_NOISE_ERROR_RANGE,
                   "discrete Gaussian sigma %g outside [1, 2^40]", sigma);
      return FALSE;
    }
  uint64_t t = (uint64_t) floor (sigma) + 1;
  for (;;)
    {
      int64_t y;
      if (!hz_noise_discrete_laplace (n, t, &y, error))
        return FALSE;
      /* gamma = (|y| - s2/t)^2 / (2 s2) with s2 = num/den:
       *       = (|y| t den - num)^2 / (2 num t^2 den) */
      u128 ay = (u128) (y < 0 ? -(u128) y : (u128) y);
      __int128 diff = (__int128) (ay * t * sigma2_den) - (__int128) sigma2_num;
      u128 ad = diff < 0 ? (u128) -diff : (u128) diff;
      u128 den = (u128) 2 * sigma2_num * t * t * sigma2_den;
      /* ad^2 must fit in 128 bits; an |y| that large (beyond 2^63 / t) is so far in the
       * tail that its acceptance probability is exactly 0 in double precision: reject. */
      if (ad >> 63)
        continue;
      u128 num = ad * ad;
      gboolean c;
      if (!hz_noise_bernoulli_exp (n, num, den, &c, error))
        return FALSE;
      if (c)
        {
          *out = y;
          return TRUE;
        }
    }
}

gboolean
hz_noise_gaussian_grid (HzNoise *n, double sigma, float *out, gsize count, GError **error)
{
  if (!(sigma > 0.0) || !isfinite (sigma))
    {
      g_set_error (error, HZ_NOISE_ERROR, HZ_NOISE_ERROR_RANGE, "noise sigma %g is not > 0", sigma);
      return FALSE;
    }
  const double ratio = 65536.0;           /* sigma / g */
  const double g = sigma / ratio;
  for (gsize i = 0; i < count; i++)
    {
      int64_t z;
      /* sigma_grid^2 = 2^32 exactly */
      if (!hz_noise_discrete_gaussian (n, (uint64_t) 1 << 32, 1, &z, error))
        return FALSE;
      out[i] = (float) ((double) z * g);
    }
  return TRUE;
}
