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
 */
#pragma once

#include "quant.h"

#include <glib.h>
#include <math.h>
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
