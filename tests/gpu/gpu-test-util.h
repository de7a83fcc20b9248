/* tests/gpu/gpu-test-util.h — random weight matrices of any format of the table, for the
 * GPU matvec test and benchmark.
 *
 * A pool of P distinct blocks is made once per format: random normal values with a
 * per-block scale in [e^-2, e^2], quantized by the CPU table's reference from_float; for
 * formats whose quantizer needs an importance matrix (from_float NULL) random bytes are
 * drawn until the block decodes (CPU to_float) to finite values below 1e4 in magnitude.
 * A matrix is then filled block by block from the pool through a multiplicative hash of
 * the block index, so every row is a different sequence of blocks (a kernel reading the
 * wrong row or block gets different data) without quantizing 10^8 values per format.
 *
 * Also the TAP reporting, random vectors and device upload/download shared by the GPU
 * op tests (test-ops, test-moe, test-train).
 */
#pragma once

#include "hz-gpu.h"
#include "hzk.h"
#include "quant.h"

#include <glib.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GPU_TEST_POOL 4099   /* prime */

static inline double
gtu_normal (GRand *r)
{
  double u = g_rand_double_range (r, 1e-12, 1.0), v = g_rand_double (r);
  return sqrt (-2.0 * log (u)) * cos (2.0 * G_PI * v);
}

/** P blocks of `qt` (block_bytes each) in one allocation. */
static inline uint8_t *
gtu_block_pool (const HzQuantTraits *qt, GRand *r)
{
  const uint32_t be = qt->block_elems, bb = qt->block_bytes;
  uint8_t *pool = g_malloc ((size_t) GPU_TEST_POOL * bb);
  float *f = g_malloc (sizeof (float) * be);
  for (int i = 0; i < GPU_TEST_POOL; i++)
    {
      uint8_t *blk = pool + (size_t) i * bb;
      if (qt->from_float)
        {
          const double s = exp (g_rand_double_range (r, -2.0, 2.0));
          for (uint32_t j = 0; j < be; j++)
            f[j] = (float) (s * gtu_normal (r));
          qt->from_float (f, blk, be);
          continue;
        }
      for (int attempt = 0;; attempt++)
        {
          for (uint32_t j = 0; j < bb; j++)
            blk[j] = (uint8_t) g_rand_int_range (r, 0, 256);
          qt->to_float (blk, f, be);
          gboolean good = TRUE;
          for (uint32_t j = 0; j < be && good; j++)
            good = isfinite (f[j]) && fabsf (f[j]) < 1e4f;
          if (good)
            break;
          if (attempt > 10000)
            {
              memset (blk, 0, bb);
              break;
            }
        }
    }
  g_free (f);
  return pool;
}

/** An n_rows × k matrix (ggml layout) of pool blocks. */
static inline uint8_t *
gtu_matrix (const HzQuantTraits *qt, const uint8_t *pool, int64_t n_rows, int64_t k)
{
  const size_t bb = qt->block_bytes, nblk = (size_t) n_rows * (k / qt->block_elems);
  uint8_t *m = g_malloc (nblk * bb);
  for (size_t j = 0; j < nblk; j++)
    {
      const size_t p = (size_t) ((j * 2654435761u + (j >> 7)) % GPU_TEST_POOL);
      memcpy (m + j * bb, pool + p * bb, bb);
    }
  return m;
}

/* ---- shared by the GPU op tests ------------------------------------------------------- */

/** TAP counters of one test program. */
typedef struct {
  int n_test, n_fail;
} GtuTap;

/** Print "ok N - MSG" or "not ok N - MSG" (TAP) and count a failure. */
static inline void gtu_report (GtuTap *tap, gboolean pass, const char *fmt, ...) G_GNUC_PRINTF (3, 4);
static inline void
gtu_report (GtuTap *tap, gboolean pass, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  printf ("%s %d - %s\n", pass ? "ok" : "not ok", ++tap->n_test, msg);
  fflush (stdout);
  tap->n_fail += !pass;
}

/** n floats drawn from N(0, scale^2) (g_free). */
static inline float *
gtu_randn (GRand *r, int64_t n, double scale)
{
  float *v = g_new (float, n);
  for (int64_t i = 0; i < n; i++)
    v[i] = (float) (scale * gtu_normal (r));
  return v;
}

/** A device buffer of `bytes` holding `host` (zeros when host is NULL); asserts success. */
static inline void *
gtu_up (HzGpu *gpu, const void *host, size_t bytes)
{
  GError *error = NULL;
  void *d = hz_gpu_alloc (gpu, bytes, &error);
  g_assert_no_error (error);
  if (host)
    g_assert_true (hz_gpu_upload (gpu, d, host, bytes, &error));
  else
    g_assert_cmpint (hzk_memset (d, 0, bytes, hz_gpu_stream (gpu)), ==, 0);
  return d;
}

/** Copy `bytes` of device memory `dev` to `host`; asserts success. */
static inline void
gtu_down (HzGpu *gpu, void *host, const void *dev, size_t bytes)
{
  GError *error = NULL;
  g_assert_true (hz_gpu_download (gpu, host, dev, bytes, &error));
}

/* The first GPU, described on stdout as a TAP comment; without one, prints the TAP skip line
 * with the reason and exits with 77 (meson's skip code). */
static inline HzGpu *
gtu_open_or_skip (void)
{
  GError *error = NULL;
  HzGpu *gpu = hz_gpu_open (0, &error);
  if (!gpu)
    {
      printf ("1..0 # SKIP %s\n", error->message);
      exit (77);
    }
  printf ("# %s\n", hz_gpu_describe (gpu));
  return gpu;
}
