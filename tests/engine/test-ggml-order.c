/* tests/engine/test-ggml-order.c — the SIMD versions of the exact-order dot kernels
 * (engine/quant/ggml-order.h) give bit-identical floats to the plain C reference.
 *
 * For every kernel of ggml-order.c (chosen through hz_ggml_order_dots_at() with shapes
 * that select it, both the `one` and the `batch` entry point) and every SIMD level the CPU
 * has, random weight rows and activation rows are dotted by the level's kernel and by the
 * scalar one; the results must be equal bit for bit (memcmp). The rows include zero
 * blocks, extreme fp16 scales (±65504, subnormals, ±0), extreme activation scales,
 * activations saturated at ±127, and for F32 lengths with leftovers, huge and subnormal
 * values. Activations come from the engine's own activation quantizers, so they have the
 * value range and the bsums of real ones.
 *
 * The test is registered twice: as is, and with HZ_SIMD=scalar, where the default kernels
 * (hz_ggml_order_dots, hz_ggml_dot_f32) must be the scalar ones.
 *
 * The tiled kernels (rows × tokens, HzGgmlDots.tile) are compared with the scalar kernel
 * the same way, element by element, ragged tile edges included.
 *
 * Matrices repacked at load (repack.h) are multiplied by their kernels at every level,
 * the plain C one included, and compared element by element with the scalar one-row
 * kernel on the original rows.
 *
 * Test paths: /ggml-order/levels/<kernel>, /ggml-order/tile/<kernel>,
 * /ggml-order/repack/<kernel>, /ggml-order/default-level
 */
#include <glib.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "ggml-order.h"
#include "quant-impl.h"
#include "repack.h"

/* A kernel of ggml-order.c and a shape that selects it. */
typedef struct {
  const char *name;
  HzType      type;
  int64_t     n_out;            /* picks the AMX / repack / tinyBLAS variant or not */
  int         n_in[8];          /* lengths to test, 0-terminated */
  int         d_off[2];         /* byte offsets of the fp16 scales in a weight block, -1 */
} Case;

static const Case cases[] = {
  { "f32", HZ_TYPE_F32, 4, { 16, 64, 288, 1024, 4096, 0 }, { -1, -1 } },
  { "f32-leftovers", HZ_TYPE_F32, 3, { 1, 15, 63, 65, 127, 300, 1001, 4113 }, { -1, -1 } },
  { "q4_0-x8", HZ_TYPE_Q4_0, 8, { 32, 96, 128, 160, 288, 1024, 1184, 0 },
    { offsetof (HzBlockQ4_0, d), -1 } },
  { "q4_1-serial", HZ_TYPE_Q4_1, 32, { 32, 96, 128, 160, 288, 1024, 1184, 0 },
    { offsetof (HzBlockQ4_1, d), offsetof (HzBlockQ4_1, m) } },
  { "q8_0-serial", HZ_TYPE_Q8_0, 32, { 32, 96, 128, 160, 288, 1024, 1184, 0 },
    { offsetof (HzBlockQ8_0, d), -1 } },
  { "iq4_nl", HZ_TYPE_IQ4_NL, 1, { 32, 64, 96, 160, 288, 1024, 1184, 0 },
    { offsetof (HzBlockIQ4_NL, d), -1 } },
  { "q2_K", HZ_TYPE_Q2_K, 1, { 256, 512, 768, 2304, 0 },
    { offsetof (HzBlockQ2_K, d), offsetof (HzBlockQ2_K, dmin) } },
  { "q3_K", HZ_TYPE_Q3_K, 1, { 256, 512, 768, 2304, 0 }, { offsetof (HzBlockQ3_K, d), -1 } },
  { "q4_K-lanes", HZ_TYPE_Q4_K, 1, { 256, 512, 768, 2304, 0 },
    { offsetof (HzBlockQ4_K, d), offsetof (HzBlockQ4_K, dmin) } },
  { "q4_K-serial", HZ_TYPE_Q4_K, 32, { 256, 512, 768, 2304, 0 },
    { offsetof (HzBlockQ4_K, d), offsetof (HzBlockQ4_K, dmin) } },
  { "q5_K-serial", HZ_TYPE_Q5_K, 32, { 256, 512, 768, 2304, 0 },
    { offsetof (HzBlockQ5_K, d), offsetof (HzBlockQ5_K, dmin) } },
  { "q6_K-lanes", HZ_TYPE_Q6_K, 1, { 256, 512, 768, 2304, 0 }, { offsetof (HzBlockQ6_K, d), -1 } },
  { "q6_K-serial", HZ_TYPE_Q6_K, 32, { 256, 512, 768, 2304, 0 }, { offsetof (HzBlockQ6_K, d), -1 } },
  { "iq4_xs-lanes", HZ_TYPE_IQ4_XS, 1, { 256, 512, 768, 2304, 0 },
    { offsetof (HzBlockIQ4_XS, d), -1 } },
  { "iq4_xs-serial", HZ_TYPE_IQ4_XS, 32, { 256, 512, 768, 2304, 0 },
    { offsetof (HzBlockIQ4_XS, d), -1 } },
  /* the E8M0 scale byte: any value is a finite power of two */
  { "mxfp4-serial", HZ_TYPE_MXFP4, 8, { 32, 96, 128, 160, 288, 1024, 1184, 2880 }, { -1, -1 } },
};

#define TRIALS 48

static uint32_t
bits (float f)
{
  uint32_t u;
  memcpy (&u, &f, 4);
  return u;
}

/* fp16 scales: ordinary values and the extremes of the format. */
static uint16_t
random_fp16 (GRand *r)
{
  static const uint16_t extreme[] = { 0x7bff, 0xfbff, 0x0001, 0x8001, 0x03ff, 0x0400, 0x0000,
                                      0x8000, 0x3c00, 0x1400 };
  if (g_rand_int_range (r, 0, 4) == 0)
    return extreme[g_rand_int_range (r, 0, G_N_ELEMENTS (extreme))];
  return hz_fp32_to_fp16 ((float) g_rand_double_range (r, -2.0, 2.0));
}

/* n weights of `type`: random bytes (every code and scale pattern), fp16 scales from
 * random_fp16, some blocks all zero. F32: values over many magnitudes. */
static void
fill_weights (GRand *r, const Case *c, const HzQuantTraits *t, uint8_t *w, int n)
{
  if (c->type == HZ_TYPE_F32)
    {
      float *f = (float *) w;
      for (int i = 0; i < n; i++)
        {
          const int kind = g_rand_int_range (r, 0, 16);
          f[i] = kind == 0 ? 0.0f
                 : kind == 1 ? (float) g_rand_double_range (r, -1e30, 1e30)
                 : kind == 2 ? (float) g_rand_double_range (r, -1e-39, 1e-39)   /* subnormal */
                             : (float) g_rand_double_range (r, -4.0, 4.0);
        }
      return;
    }
  const int nb = n / (int) t->block_elems;
  for (int b = 0; b < nb; b++)
    {
      uint8_t *blk = w + (size_t) b * t->block_bytes;
      if (g_rand_int_range (r, 0, 8) == 0)
        {
          memset (blk, 0, t->block_bytes);
          continue;
        }
      for (uint32_t i = 0; i < t->block_bytes; i++)
        blk[i] = (uint8_t) g_rand_int_range (r, 0, 256);
      for (int k = 0; k < 2; k++)
        if (c->d_off[k] >= 0)
          {
            const uint16_t h = random_fp16 (r);
            memcpy (blk + c->d_off[k], &h, 2);
          }
    }
}

/* n activations in the format the kernels take: floats quantized with the engine's
 * activation quantizer; some rows zero, some saturated, some blocks with extreme scales. */
static void
fill_acts (GRand *r, const HzQuantTraits *vt, float *tmp, uint8_t *a, int n)
{
  const int kind = g_rand_int_range (r, 0, 8);
  for (int i = 0; i < n; i++)
    tmp[i] = kind == 0 ? 0.0f
             : kind == 1 ? (g_rand_boolean (r) ? 1.0f : -1.0f)   /* q at ±127 */
                         : (float) g_rand_double_range (r, -3.0, 3.0);
  if (vt->type == HZ_TYPE_F32)
    {
      memcpy (a, tmp, (size_t) n * 4);
      return;
    }
  hz_quant_act_from_float (vt->type) (tmp, a, n);
  const int nb = n / (int) vt->block_elems;
  for (int b = 0; b < nb; b++)
    {
      uint8_t *blk = a + (size_t) b * vt->block_bytes;
      if (g_rand_int_range (r, 0, 4) != 0)
        continue;
      if (vt->type == HZ_TYPE_Q8_K)
        {
          static const float extreme[] = { 1e-30f, 1e-40f, 3e4f, 1e35f, -0.0f };
          const float d = extreme[g_rand_int_range (r, 0, G_N_ELEMENTS (extreme))];
          memcpy (blk, &d, 4);
        }
      else   /* Q8_0 / Q8_1: d (and s) fp16 at the start */
        {
          const uint16_t d = random_fp16 (r);
          memcpy (blk, &d, 2);
          if (vt->type == HZ_TYPE_Q8_1)
            {
              const uint16_t s = random_fp16 (r);
              memcpy (blk + 2, &s, 2);
            }
        }
    }
}

static void
test_levels (gconstpointer data)
{
  const Case *c = data;
  const HzQuantTraits *t = hz_quant_traits (c->type);
  const HzQuantTraits *vt = hz_quant_traits (t->vec_dot_type);
  g_assert_nonnull (vt);
  g_autoptr (GRand) r = g_rand_new_with_seed (0x6a11 + c->type);
  unsigned n_checked = 0, n_levels = 0;
  for (int level = HZ_SIMD_AVX2; level < HZ_SIMD_LEVELS; level++)
    {
      if (!hz_simd_supported (level))
        continue;
      n_levels++;
      for (int k = 0; k < 8 && c->n_in[k] > 0; k++)
        {
          const int n = c->n_in[k];
          const HzGgmlDots ref = hz_ggml_order_dots_at (c->type, c->n_out, n, HZ_SIMD_SCALAR);
          const HzGgmlDots simd = hz_ggml_order_dots_at (c->type, c->n_out, n, level);
          g_assert_true (ref.exact && simd.exact);
          /* the level really has its own kernels (not the scalar ones again) */
          g_assert_true (simd.one != ref.one && simd.batch != ref.batch);
          const size_t wbytes = c->type == HZ_TYPE_F32 ? (size_t) n * 4
                                                       : hz_quant_row_size (c->type, n);
          const size_t abytes = vt->type == HZ_TYPE_F32 ? (size_t) n * 4
                                                        : hz_quant_row_size (vt->type, n);
          g_autofree uint8_t *w = g_malloc (wbytes + 64);
          g_autofree uint8_t *a = g_malloc (abytes + 64);
          g_autofree float *tmp = g_new (float, n);
          g_autofree uint8_t *w4 = g_malloc (4 * wbytes + 64);
          for (int trial = 0; trial < TRIALS; trial++)
            {
              /* the four-row kernel: each row bit-identical to the scalar `one` */
              if (simd.one_x4)
                {
                  for (int row = 0; row < 4; row++)
                    fill_weights (r, c, t, w4 + row * wbytes, n);
                  fill_acts (r, vt, tmp, a, n);
                  float got4[4];
                  simd.one_x4 (n, got4, w4, wbytes, a);
                  for (int row = 0; row < 4; row++)
                    {
                      float want;
                      ref.one (n, &want, w4 + row * wbytes, a);
                      if (memcmp (&want, &got4[row], sizeof want) != 0)
                        g_error ("%s one_x4 row %d, n = %d, trial %d: scalar %.9g, %s %.9g",
                                 c->name, row, n, trial, want, hz_simd_level_name (level),
                                 got4[row]);
                      n_checked++;
                    }
                }
              fill_weights (r, c, t, w, n);
              fill_acts (r, vt, tmp, a, n);
              const HzVecDotFn fns[2][2] = { { ref.one, simd.one }, { ref.batch, simd.batch } };
              for (int e = 0; e < 2; e++)
                {
                  float want, got;
                  fns[e][0] (n, &want, w, a);
                  fns[e][1] (n, &got, w, a);
                  if (memcmp (&want, &got, sizeof want) != 0)
                    g_error ("%s %s, n = %d, trial %d: scalar %.9g (0x%08x), %s %.9g (0x%08x)",
                             c->name, e ? "batch" : "one", n, trial, want, bits (want),
                             hz_simd_level_name (level), got, bits (got));
                  n_checked++;
                }
            }
        }
    }
  if (n_levels == 0)
    {
      g_test_skip ("this CPU has no SIMD level above scalar");
      return;
    }
  g_test_message ("%s: %u dots bit-identical to the scalar kernel on %u level(s)", c->name,
                  n_checked, n_levels);
}

/* The tiled kernels (HzGgmlDots.tile) against the scalar `batch` kernel, per output element
 * bit for bit: ragged tiles (rows and tokens not multiples of the kernel's 8, several row
 * groups, more tokens than one pass of 32), a length of 257 blocks (the token-lane tile's
 * second pass of activation scales, the row-lane tile's scratch on the heap), and an output
 * stride wider than the rows (the elements outside the tile must stay untouched). */
static void
test_tile (gconstpointer data)
{
  const Case *c = data;
  const HzQuantTraits *t = hz_quant_traits (c->type);
  const HzQuantTraits *vt = hz_quant_traits (t->vec_dot_type);
  g_autoptr (GRand) r = g_rand_new_with_seed (0x711e + c->type);
  /* {rows, tokens}: the kernels' tiles are 8 rows or 8 tokens, and passes of 32 tokens */
  static const int shapes[][2] = { { 1, 1 }, { 1, 8 }, { 3, 5 }, { 9, 9 }, { 7, 16 },
                                   { 2, 17 }, { 13, 35 }, { 16, 33 } };
  unsigned n_checked = 0, n_levels = 0;
  for (int level = HZ_SIMD_AVX2; level < HZ_SIMD_LEVELS; level++)
    {
      if (!hz_simd_supported (level))
        continue;
      const HzGgmlDots probe = hz_ggml_order_dots_at (c->type, c->n_out, c->n_in[0], level);
      if (probe.tile == NULL)
        continue;
      n_levels++;
      int lens[9];
      int nl = 0;
      for (; nl < 8 && c->n_in[nl] > 0; nl++)
        lens[nl] = c->n_in[nl];
      lens[nl++] = 257 * (int) t->block_elems;
      for (int k = 0; k < nl; k++)
        {
          const int n = lens[k];
          const HzGgmlDots ref = hz_ggml_order_dots_at (c->type, c->n_out, n, HZ_SIMD_SCALAR);
          const HzGgmlDots simd = hz_ggml_order_dots_at (c->type, c->n_out, n, level);
          g_assert_nonnull (simd.tile);
          g_assert_true (simd.one == simd.batch);
          const size_t wbytes = hz_quant_row_size (c->type, n);
          const size_t abytes = hz_quant_row_size (vt->type, n);
          g_autofree float *tmp = g_new (float, n);
          for (size_t sh = 0; sh < G_N_ELEMENTS (shapes); sh++)
            {
              /* the long length only with the small shapes (the scalar reference is slow) */
              if (k == nl - 1 && sh > 3)
                break;
              const int rows = shapes[sh][0], toks = shapes[sh][1];
              const size_t ld = (size_t) rows + 3;
              g_autofree uint8_t *w = g_malloc (rows * wbytes + 64);
              g_autofree uint8_t *a = g_malloc (toks * abytes + 64);
              g_autofree float *got = g_new (float, toks * ld);
              for (int row = 0; row < rows; row++)
                fill_weights (r, c, t, w + row * wbytes, n);
              for (int tok = 0; tok < toks; tok++)
                fill_acts (r, vt, tmp, a + tok * abytes, n);
              for (size_t i = 0; i < toks * ld; i++)
                got[i] = (float) i + 0.5f;   /* sentinels */
              simd.tile (n, rows, toks, got, ld, w, wbytes, a, abytes);
              for (int tok = 0; tok < toks; tok++)
                for (size_t row = 0; row < ld; row++)
                  {
                    const float g = got[tok * ld + row];
                    if (row >= (size_t) rows)
                      {
                        if (g != (float) (tok * ld + row) + 0.5f)
                          g_error ("%s tile %dx%d, n = %d: element (%zu, %d) outside the tile "
                                   "written", c->name, rows, toks, n, row, tok);
                        continue;
                      }
                    float want;
                    ref.batch (n, &want, w + row * wbytes, a + tok * abytes);
                    if (memcmp (&want, &g, sizeof want) != 0)
                      g_error ("%s tile %dx%d, n = %d, row %zu, token %d: scalar %.9g (0x%08x), "
                               "%s tile %.9g (0x%08x)", c->name, rows, toks, n, row, tok, want,
                               bits (want), hz_simd_level_name (level), g, bits (g));
                    n_checked++;
                  }
            }
        }
    }
  if (n_levels == 0)
    {
      g_test_skip ("no tiled kernel for this case on this CPU");
      return;
    }
  g_test_message ("%s: %u tiled outputs bit-identical to the scalar kernel on %u level(s)",
                  c->name, n_checked, n_levels);
}

/* A repacked matrix (repack.h) against the scalar `one` kernel on its original rows, per
 * output bit for bit, at every level including the C kernel of the layout: one token (the
 * decode GEMV) and batches over a pass of 32, all rows or a ragged part of the groups (the
 * tile starting at a later group), 16-row pairs of groups plus a last single group with
 * 16 + 5 tokens (Q4_0's 512-bit tile and its remainders), an output stride wider than the
 * rows; also the shapes that must not be repacked. */
static void
test_repack (gconstpointer data)
{
  const Case *c = data;
  const HzQuantTraits *t = hz_quant_traits (c->type);
  const HzQuantTraits *vt = hz_quant_traits (t->vec_dot_type);
  g_autoptr (GRand) r = g_rand_new_with_seed (0x4e9a + c->type);
  /* {matrix rows, first row, tile rows, tokens} */
  static const int shapes[][4] = { { 8, 0, 8, 1 }, { 24, 0, 24, 1 }, { 16, 8, 5, 1 },
                                   { 8, 0, 8, 3 }, { 16, 0, 13, 9 }, { 24, 8, 16, 33 },
                                   { 40, 0, 40, 21 } };
  unsigned n_checked = 0;

  g_assert_null (hz_repack_tile_at (c->type, c->n_out + 4, c->n_in[0], HZ_SIMD_SCALAR));
  g_assert_null (hz_repack_tile_at (HZ_TYPE_Q8_0, 32, 256, HZ_SIMD_SCALAR));
  g_assert_null (hz_repack_tile_at (HZ_TYPE_Q4_1, 32, 256, HZ_SIMD_SCALAR));
  g_assert_false (hz_repack_rows (c->type, c->n_out + 4, c->n_in[0], "", (uint8_t[1]) { 0 }));
  for (int k = 0; k < 8 && c->n_in[k] > 0; k++)
    {
      const int n = c->n_in[k];
      const HzGgmlDots ref = hz_ggml_order_dots_at (c->type, c->n_out, n, HZ_SIMD_SCALAR);
      const size_t wbytes = hz_quant_row_size (c->type, n);
      const size_t abytes = hz_quant_row_size (vt->type, n);
      g_autofree float *tmp = g_new (float, n);
      for (size_t sh = 0; sh < G_N_ELEMENTS (shapes); sh++)
        {
          /* the matrix a multiple of the case's rows (the shapes of the serial kernel) */
          const int n_out = (shapes[sh][0] + (int) c->n_out - 1) / (int) c->n_out * (int) c->n_out;
          const int r0 = shapes[sh][1], rows = shapes[sh][2];
          const int toks = shapes[sh][3];
          const size_t ld = (size_t) rows + 3;
          g_autofree uint8_t *w = g_malloc (n_out * wbytes);
          g_autofree uint8_t *p = g_malloc (n_out * wbytes);
          g_autofree uint8_t *a = g_malloc (toks * abytes);
          g_autofree float *got = g_new (float, toks * ld);
          for (int row = 0; row < n_out; row++)
            fill_weights (r, c, t, w + row * wbytes, n);
          for (int tok = 0; tok < toks; tok++)
            fill_acts (r, vt, tmp, a + tok * abytes, n);
          g_assert_true (hz_repack_rows (c->type, n_out, n, w, p));
          for (int level = HZ_SIMD_SCALAR; level < HZ_SIMD_LEVELS; level++)
            {
              if (!hz_simd_supported (level))
                continue;
              const HzGgmlTileFn tile = hz_repack_tile_at (c->type, n_out, n, level);
              if (level == HZ_SIMD_SCALAR)
                g_assert_nonnull (tile);
              if (tile == NULL)   /* no kernel at this level: the matrix stays unpacked */
                continue;
              for (size_t i = 0; i < toks * ld; i++)
                got[i] = (float) i + 0.5f;   /* sentinels */
              tile (n, rows, toks, got, ld, p + (size_t) r0 * wbytes, wbytes, a, abytes);
              for (int tok = 0; tok < toks; tok++)
                for (size_t row = 0; row < ld; row++)
                  {
                    const float g = got[tok * ld + row];
                    if (row >= (size_t) rows)
                      {
                        if (g != (float) (tok * ld + row) + 0.5f)
                          g_error ("%s repacked %d rows from %d x %d tokens, n = %d: element "
                                   "(%zu, %d) outside the tile written", c->name, rows, r0,
                                   toks, n, row, tok);
                        continue;
                      }
                    float want;
                    ref.one (n, &want, w + (r0 + row) * wbytes, a + tok * abytes);
                    if (memcmp (&want, &g, sizeof want) != 0)
                      g_error ("%s repacked, n = %d, row %zu, token %d: scalar %.9g (0x%08x), "
                               "%s repacked %.9g (0x%08x)", c->name, n, r0 + row, tok, want,
                               bits (want), hz_simd_level_name (level), g, bits (g));
                    n_checked++;
                  }
            }
        }
    }
  g_test_message ("%s: %u repacked outputs bit-identical to the scalar kernel", c->name,
                  n_checked);
}

/* hz_ggml_order_dots() and hz_ggml_dot_f32*() use hz_simd_level()'s kernels (HZ_SIMD caps
 * it: with HZ_SIMD=scalar they must be the plain C ones). */
static void
test_default_level (void)
{
  const HzSimdLevel level = hz_simd_level ();
  const char *env = g_getenv ("HZ_SIMD");
  if (env && g_ascii_strcasecmp (env, "scalar") == 0)
    g_assert_cmpint (level, ==, HZ_SIMD_SCALAR);
  for (size_t i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const Case *c = &cases[i];
      const HzGgmlDots d = hz_ggml_order_dots (c->type, c->n_out, c->n_in[0]);
      const HzGgmlDots at = hz_ggml_order_dots_at (c->type, c->n_out, c->n_in[0], level);
      g_assert_true (d.one == at.one && d.batch == at.batch && d.exact);
    }
  /* the F32 entry points: same bits as the level's kernels */
  g_autoptr (GRand) r = g_rand_new_with_seed (42);
  float x[1040], y[1040];
  for (int i = 0; i < 1040; i++)
    {
      x[i] = (float) g_rand_double_range (r, -1, 1);
      y[i] = (float) g_rand_double_range (r, -1, 1);
    }
  const HzGgmlDots f = hz_ggml_order_dots_at (HZ_TYPE_F32, 4, 1040, level);
  float a, b;
  f.one (1037, &a, x, y);
  hz_ggml_dot_f32 (1037, &b, x, y);
  g_assert_true (memcmp (&a, &b, 4) == 0);
  f.batch (1040, &a, x, y);
  hz_ggml_dot_f32_tb16 (1040, &b, x, y);
  g_assert_true (memcmp (&a, &b, 4) == 0);
  g_test_message ("default level: %s", hz_simd_level_name (level));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (size_t i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/ggml-order/levels/%s", cases[i].name);
      g_test_add_data_func (path, &cases[i], test_levels);
      const HzGgmlDots d = hz_ggml_order_dots_at (cases[i].type, cases[i].n_out,
                                                  cases[i].n_in[0], HZ_SIMD_AVX2);
      if (d.tile != NULL || !hz_simd_supported (HZ_SIMD_AVX2))
        {
          g_autofree char *tpath = g_strdup_printf ("/ggml-order/tile/%s", cases[i].name);
          g_test_add_data_func (tpath, &cases[i], test_tile);
        }
      if (hz_repack_tile_at (cases[i].type, cases[i].n_out, cases[i].n_in[0], HZ_SIMD_SCALAR))
        {
          g_autofree char *rpath = g_strdup_printf ("/ggml-order/repack/%s", cases[i].name);
          g_test_add_data_func (rpath, &cases[i], test_repack);
        }
    }
  g_test_add_func ("/ggml-order/default-level", test_default_level);
  return g_test_run ();
}
