/* engine/quant/repack.c — load-time repacking into interleaved row groups (repack.h): the
 * layouts, the plain C kernels on them (the reference of the SIMD ones and the scalar
 * level's kernels) and the per-level dispatch. */
#include "repack.h"
#include "ggml-order-impl.h"

#include <glib.h>
#include <math.h>
#include <string.h>

/* Byte offset of qs[j] (j < 16) of row m inside a repacked Q4_0 block of a group. */
static inline size_t
q4_0x8_qs_offset (int m, int j)
{
  return 16 + 32 * (size_t) (j / 4) + 4 * (size_t) m + (size_t) (j % 4);
}

static void
repack_q4_0x8 (int64_t n_out, int64_t n_in, const uint8_t *restrict src, uint8_t *restrict dst)
{
  const int64_t nb = n_in / 32;
  for (int64_t g = 0; g < n_out / HZ_REPACK_Q4_0X8_ROWS; g++)
    {
      const HzBlockQ4_0 *rows = (const HzBlockQ4_0 *) src + g * HZ_REPACK_Q4_0X8_ROWS * nb;
      uint8_t *out = dst + g * nb * HZ_REPACK_Q4_0X8_BLOCK;
      for (int64_t b = 0; b < nb; b++, out += HZ_REPACK_Q4_0X8_BLOCK)
        for (int m = 0; m < HZ_REPACK_Q4_0X8_ROWS; m++)
          {
            const HzBlockQ4_0 *blk = &rows[m * nb + b];
            memcpy (out + 2 * m, &blk->d, 2);
            for (int j = 0; j < 16; j++)
              out[q4_0x8_qs_offset (m, j)] = blk->qs[j];
          }
    }
}

/* q4_0_x8_dot (ggml-order.c) per output, reading the repacked layout. */
static void
q4_0x8_packed_tile (int n, int n_rows, int n_tok, float *restrict s, size_t ld,
                    const void *restrict vx, size_t row_bytes, const void *restrict vy,
                    size_t y_stride)
{
  const int nb = n / 32;
  for (int t = 0; t < n_tok; t++)
    {
      const HzBlockQ8_0 *y = (const HzBlockQ8_0 *) ((const uint8_t *) vy + (size_t) t * y_stride);
      for (int r = 0; r < n_rows; r++)
        {
          const int m = r % HZ_REPACK_Q4_0X8_ROWS;
          const uint8_t *grp = (const uint8_t *) vx + (size_t) (r - m) * row_bytes;
          float acc = 0.0f;
          for (int b = 0; b < nb; b++)
            {
              const uint8_t *pb = grp + (size_t) b * HZ_REPACK_Q4_0X8_BLOCK;
              int isum = 0;
              for (int j = 0; j < 16; j++)
                {
                  const uint8_t q = pb[q4_0x8_qs_offset (m, j)];
                  isum += ((q & 0xf) - 8) * y[b].qs[j] + ((q >> 4) - 8) * y[b].qs[j + 16];
                }
              uint16_t d;
              memcpy (&d, pb + 2 * m, 2);
              acc = fmaf ((float) isum, hzq_fp16_to_fp32 (d) * hzq_fp16_to_fp32 (y[b].d), acc);
            }
          s[(size_t) t * ld + r] = acc;
        }
    }
}

/* HZ_REPACK_X8_U32: of a B-byte block, byte k < 4·U (U = B / 4 whole units) of row m at
 * 32·(k/4) + 4m + k%4 of the group's block (8 · B bytes), the T = B % 4 tail bytes of row m
 * at 32·U + T·m + (k − 4·U). */
static inline size_t
x8_u32_offset (size_t bbytes, int m, size_t k)
{
  const size_t units = bbytes / 4, tail = bbytes % 4;
  return k < 4 * units ? 32 * (k / 4) + 4 * (size_t) m + k % 4
                       : 32 * units + tail * (size_t) m + (k - 4 * units);
}

static void
repack_x8_u32 (int64_t n_out, int64_t n_in, size_t bbytes, size_t belems, const uint8_t *src,
               uint8_t *dst)
{
  const int64_t nb = n_in / (int64_t) belems;
  const size_t rb = (size_t) nb * bbytes;
  for (int64_t g = 0; g < n_out / 8; g++)
    for (int64_t b = 0; b < nb; b++)
      {
        uint8_t *out = dst + (size_t) g * 8 * rb + (size_t) b * 8 * bbytes;
        for (int m = 0; m < 8; m++)
          {
            const uint8_t *in = src + ((size_t) g * 8 + m) * rb + (size_t) b * bbytes;
            const size_t units = bbytes / 4, tail = bbytes % 4;
            for (size_t u = 0; u < units; u++)
              memcpy (out + 32 * u + 4 * (size_t) m, in + 4 * u, 4);
            memcpy (out + x8_u32_offset (bbytes, m, 4 * units), in + 4 * units, tail);
          }
      }
}

/* Row m of a repacked group back in the original layout (nb blocks). */
static void
unpack_x8_u32_row (const uint8_t *grp, int m, int nb, size_t bbytes, uint8_t *row)
{
  for (int b = 0; b < nb; b++)
    for (size_t k = 0; k < bbytes; k++)
      row[(size_t) b * bbytes + k] = grp[(size_t) b * 8 * bbytes + x8_u32_offset (bbytes, m, k)];
}

/* The C kernel of an HZ_REPACK_X8_U32 format: each row taken back to the original layout
 * and dotted with the scalar serial kernel (the definition of the results). */
static void
x8_u32_tile (HzType type, HzgKernel kernel, int n, int n_rows, int n_tok, float *s, size_t ld,
             const uint8_t *x, size_t row_bytes, const uint8_t *y, size_t y_stride)
{
  const HzQuantTraits *t = hz_quant_traits (type);
  const int nb = n / (int) t->block_elems;
  uint8_t small[4096];
  uint8_t *row = row_bytes <= sizeof small ? small : g_malloc (row_bytes);
  for (int r = 0; r < n_rows; r++)
    {
      const int m = r % 8;
      unpack_x8_u32_row (x + (size_t) (r - m) * row_bytes, m, nb, t->block_bytes, row);
      for (int tok = 0; tok < n_tok; tok++)
        hzg_kernels_scalar[kernel] (n, &s[(size_t) tok * ld + r], row, y + (size_t) tok * y_stride);
    }
  if (row != small)
    g_free (row);
}

#define X8_U32(f, TYPE, KERNEL)                                                                 \
  static void                                                                                 \
  repack_##f (int64_t n_out, int64_t n_in, const uint8_t *src, uint8_t *dst)                  \
  {                                                                                           \
    const HzQuantTraits *t = hz_quant_traits (TYPE);                                          \
    repack_x8_u32 (n_out, n_in, t->block_bytes, t->block_elems, src, dst);                    \
  }                                                                                           \
  static void                                                                                 \
  f##_packed_tile (int n, int n_rows, int n_tok, float *restrict s, size_t ld,                \
                   const void *restrict x, size_t row_bytes, const void *restrict y,          \
                   size_t y_stride)                                                           \
  {                                                                                           \
    x8_u32_tile (TYPE, KERNEL, n, n_rows, n_tok, s, ld, x, row_bytes, y, y_stride);           \
  }

X8_U32 (q4_K, HZ_TYPE_Q4_K, HZG_Q4_K_SERIAL)
X8_U32 (q5_K, HZ_TYPE_Q5_K, HZG_Q5_K_SERIAL)
X8_U32 (q6_K, HZ_TYPE_Q6_K, HZG_Q6_K_SERIAL)
X8_U32 (iq4_xs, HZ_TYPE_IQ4_XS, HZG_IQ4_XS_SERIAL)
#undef X8_U32

/* The repacked formats: the exact-order kernel whose shapes they take over, the layout's
 * row group and its C kernel. */
typedef struct {
  HzType       type;
  HzgKernel    kernel;
  int          group_rows;
  void       (*repack) (int64_t n_out, int64_t n_in, const uint8_t *src, uint8_t *dst);
  HzGgmlTileFn tile_c;
} RepackRow;

static const RepackRow repack_rows[] = {
  { HZ_TYPE_Q4_0, HZG_Q4_0_SERIAL, HZ_REPACK_Q4_0X8_ROWS, repack_q4_0x8, q4_0x8_packed_tile },
  { HZ_TYPE_Q4_K, HZG_Q4_K_SERIAL, 8, repack_q4_K, q4_K_packed_tile },
  { HZ_TYPE_Q5_K, HZG_Q5_K_SERIAL, 8, repack_q5_K, q5_K_packed_tile },
  { HZ_TYPE_Q6_K, HZG_Q6_K_SERIAL, 8, repack_q6_K, q6_K_packed_tile },
  { HZ_TYPE_IQ4_XS, HZG_IQ4_XS_SERIAL, 8, repack_iq4_xs, iq4_xs_packed_tile },
};

static const RepackRow *
find_row (uint32_t type, int64_t n_out, int64_t n_in)
{
  const HzQuantTraits *t = hz_quant_traits (type);
  if (t == NULL || n_out <= 0 || n_in <= 0 || n_in % t->block_elems != 0)
    return NULL;
  for (size_t i = 0; i < sizeof repack_rows / sizeof repack_rows[0]; i++)
    if (repack_rows[i].type == type)
      {
        /* repacked only where the exact-order kernel is the serial one it reproduces */
        const HzGgmlDots d = hz_ggml_order_dots_at (type, n_out, n_in, HZ_SIMD_SCALAR);
        const HzVecDotFn serial = hzg_kernels_scalar[repack_rows[i].kernel];
        if (n_out % repack_rows[i].group_rows != 0 || d.one != serial || d.batch != serial)
          return NULL;
        return &repack_rows[i];
      }
  return NULL;
}

HzGgmlTileFn
hz_repack_tile_at (uint32_t type, int64_t n_out, int64_t n_in, HzSimdLevel level)
{
  const RepackRow *r = find_row (type, n_out, n_in);
  if (r == NULL || !hz_simd_supported (level))
    return NULL;
  switch (level)
    {
#if HZ_QUANT_X86
    case HZ_SIMD_AVX512:
      return hzg_kernels_packed_avx512[r->kernel];
    case HZ_SIMD_AVX2:
      return hzg_kernels_packed_avx2[r->kernel];
#endif
    case HZ_SIMD_SCALAR:
      return r->tile_c;
    default:
      return NULL;
    }
}

HzGgmlTileFn
hz_repack_tile (uint32_t type, int64_t n_out, int64_t n_in)
{
  return hz_repack_tile_at (type, n_out, n_in, hz_simd_level ());
}

bool
hz_repack_rows (uint32_t type, int64_t n_out, int64_t n_in, const void *restrict src,
                void *restrict dst)
{
  const RepackRow *r = find_row (type, n_out, n_in);
  if (r == NULL)
    return false;
  r->repack (n_out, n_in, src, dst);
  return true;
}
