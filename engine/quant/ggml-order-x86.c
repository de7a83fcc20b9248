/* engine/quant/ggml-order-x86.c — the AVX2 and AVX-512 VNNI levels of the exact-order
 * kernels (ggml-order.h): ggml-order-x86.inc instantiated once per level. Each function
 * carries its level's target attribute (no -m flags on this file); ggml-order.c only hands
 * out a level's table after hz_simd_supported() said yes. */
#include "ggml-order-impl.h"
#include "quant-kunpack.h"

#include <stdlib.h>

#if HZ_QUANT_X86

/* The packed 6-bit scales of Q3_K and Q4_K/Q5_K taken apart with 32-bit word operations
 * (x86 is little-endian: byte b of word w is s[4w + b]); the same values as
 * hzq_q3_scales / hzq_k4_scales of quant-kunpack.h (the tests compare the kernels). */

/* Q3_K: byte j = the 6-bit scale j (0..63, before the −32): low nibble from s[j] (j < 8)
 * or s[j−8] >> 4, high 2 bits from s[8 + j % 4] >> 2·(j / 4). */
static inline void
q3_scale_bytes (const uint8_t s[12], uint8_t out[16])
{
  const uint32_t m4 = 0x0f0f0f0fu, m2 = 0x03030303u;
  uint32_t w[3], r[4];
  memcpy (w, s, 12);
  r[0] = (w[0] & m4) | (w[2] & m2) << 4;
  r[1] = (w[1] & m4) | (w[2] >> 2 & m2) << 4;
  r[2] = (w[0] >> 4 & m4) | (w[2] >> 4 & m2) << 4;
  r[3] = (w[1] >> 4 & m4) | (w[2] >> 6 & m2) << 4;
  memcpy (out, r, 16);
}

/* Q4_K/Q5_K: the 8 scales and the 8 mins (get_scale_min_k4 for j = 0..7). */
static inline void
k4_scale_bytes (const uint8_t s[12], uint8_t sc[8], uint8_t mn[8])
{
  const uint32_t m6 = 0x3f3f3f3fu, m4 = 0x0f0f0f0fu, m2 = 0x03030303u;
  uint32_t w[3];
  memcpy (w, s, 12);
  const uint32_t a[2] = { w[0] & m6, (w[2] & m4) | (w[0] >> 6 & m2) << 4 };
  const uint32_t b[2] = { w[1] & m6, (w[2] >> 4 & m4) | (w[1] >> 6 & m2) << 4 };
  memcpy (sc, a, 8);
  memcpy (mn, b, 8);
}

#define HZG_TARGET HZ_TARGET_AVX2
#define HZG_VNNI   0
#define HZG_FN(f)  f##_avx2
#define HZG_TABLE  hzg_kernels_avx2
#define HZG_TABLE_X4 hzg_kernels_x4_avx2
#define HZG_TABLE_TILE hzg_kernels_tile_avx2
#define HZG_TABLE_PACKED hzg_kernels_packed_avx2
#include "ggml-order-x86.inc"
#undef HZG_TABLE_X4
#undef HZG_TABLE_TILE
#undef HZG_TABLE_PACKED
#undef HZG_TARGET
#undef HZG_VNNI
#undef HZG_FN
#undef HZG_TABLE

/* GCC would vectorize the scalar tails (F32 leftovers) with zmm registers, which lowers
 * the clock of some Intel cores for a while; every kernel here is 256-bit. (clang's
 * default vector width for these targets is 256 already.) */
#if defined(__GNUC__) && !defined(__clang__)
#define HZG_TARGET __attribute__ ((target ("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni," \
                                           "prefer-vector-width=256")))
#else
#define HZG_TARGET HZ_TARGET_AVX512
#endif
#define HZG_VNNI   1
#define HZG_FN(f)  f##_avx512
#define HZG_TABLE  hzg_kernels_avx512
#define HZG_TABLE_X4 hzg_kernels_x4_avx512
#define HZG_TABLE_TILE hzg_kernels_tile_avx512
#define HZG_TABLE_PACKED hzg_kernels_packed_avx512
#include "ggml-order-x86.inc"
#undef HZG_TABLE_X4
#undef HZG_TABLE_TILE
#undef HZG_TABLE_PACKED
#undef HZG_TARGET
#undef HZG_VNNI
#undef HZG_FN
#undef HZG_TABLE

#endif
