/* kernels/qdec.h — per-format device decoders `qdec<W>` and their traits `qdw_traits<W>`,
 * generated from the one format table (engine/quant/formats.def, X-macro).
 *
 * Device weight layout ("split blocks"). A ggml tensor of n_rows rows of K elements is
 * uploaded as raw ggml blocks and repacked on the device (kernels/qmatvec.hip,
 * hzk_repack) by a pure byte permutation — the device copy has exactly the same number
 * of bytes (plus alignment padding between the two regions), so "weight bytes read" is
 * the ggml size:
 *
 *   payload region  row r: nu = K / unit_elems units of unit_bytes each, stored as
 *                   unit_bytes/16 planes: chunk c (16 bytes) of unit u at
 *                   P + r·nu·unit_bytes + (c·nu + u)·16
 *                   -> every warp-wide load is 32 consecutive, 16-byte aligned uint4.
 *   meta region     M = P + align256(n_rows·nu·unit_bytes); block b of row r at
 *                   M + (r·nb + b)·meta_bytes, the block's non-payload bytes (scales,
 *                   mins, high bits) in their ggml order.
 *
 * A decoder describes how a ggml block splits into units (payload_src: which block byte
 * each unit byte comes from) and turns one unit into `runs` runs of 16 consecutive
 * elements: 4 ints of packed int8 values v (element order) with a float scale d and, for
 * asymmetric formats, an offset m, meaning   w[off + i] = d · v_i + m   (i < 16).
 * Integer formats are dotted against activations quantized to int8 per 32 elements
 * (q8_1-style: a = d_a · q_a, and the per-16 sum s_a = d_a · Σq_a):
 *   Σ w·a = d·d_a·Σ v·q_a  (+ m·s_a)       — the Σ v·q_a by dp4a / sdot4.
 * Float formats (F32, F16, BF16) decode a 16-byte unit to floats and dot in fp32.
 *
 * Formats whose decoder is not written yet (qdec<W>::available == false) are uploaded by
 * the host as F16 (CPU to_float, then fp16) and use the F16 path: see kernels/README.md.
 *
 * Block layouts: ggml-common.h (llama.cpp c392e509), as the structs of engine/quant/quant-types.h
 * (the payload ranges below are their offsetof/sizeof; the meta bytes keep their ggml order);
 * the CPU codecs engine/quant/codec-*.c are the references the tests compare against.
 * ggml-cuda's vecdotq.cuh was read as a reference for the nibble/dp4a tricks; no code is
 * taken from it.
 */
#pragma once

#include "gpu_compat.h"

#include <stddef.h>   /* offsetof: the payload ranges are read from the block structs */

/* The ground floor of the formats (HzType, the block structs): C with C99 `restrict` in its
 * function types, which C++ spells __restrict__. */
#ifndef restrict
#define restrict __restrict__
#define HZK_UNDEF_RESTRICT 1
#endif
#include "quant-types.h"
#ifdef HZK_UNDEF_RESTRICT
#undef restrict
#undef HZK_UNDEF_RESTRICT
#endif

#define HZK_HD __host__ __device__ __forceinline__

/* ---- table columns, generated ------------------------------------------------------- */
/** The formats.def row of type W (all rows, decoder or not). */
template <int W> struct hzk_fmt;
#define HZ_QUANT(NAME, id, elems, bytes, vdt, codec, ...)                                  \
  template <> struct hzk_fmt<HZ_TYPE_##NAME> {                                           \
    static constexpr int type = id, block_elems = elems, block_bytes = bytes;             \
    static constexpr int vec_dot_type = HZ_TYPE_##vdt;                                    \
    static constexpr const char *name = #codec;                                           \
  };
#include "formats.def"
#undef HZ_QUANT

/* ---- helpers ------------------------------------------------------------------------- */
/** x rounded up to a multiple of 256 (the meta region's alignment). */
static HZK_HD size_t hzk_align256 (size_t x) { return (x + 255u) & ~(size_t) 255u; }

static __device__ __forceinline__ uint16_t
hzk_rd16 (const uint8_t *p)   /* p 2-byte aligned */
{
  return *(const uint16_t *) p;
}

static __device__ __forceinline__ float
hzk_rdh (const uint8_t *p)    /* fp16 at p (2-byte aligned) */
{
  return hzk_half_bits_to_float (hzk_rd16 (p));
}

/** Bits 0..3 of n -> bit 4 of bytes 0..3 (the 5th bit of four Q5 elements). */
static __device__ __forceinline__ int
hzk_spread4_bit4 (uint32_t n)
{
  return (int) (((n & 1u) << 4) | ((n & 2u) << 11) | ((n & 4u) << 18) | ((n & 8u) << 25));
}

/** Four nibbles (the low 4 bits of each byte of nib) -> four int8 values of a 16-entry
 *  table held in registers as four little-endian words t0..t3 (no memory lookups:
 *  divergent indices into __constant__ memory serialise). CUDA: two byte permutes picking
 *  from entries 0..7 and 8..15, merged by bit 3 of each index; elsewhere 64-bit shifts. */
static __device__ __forceinline__ int
hzk_lut16 (uint32_t nib, uint32_t t0, uint32_t t1, uint32_t t2, uint32_t t3)
{
#if defined(HZK_CUDA)
  const uint32_t sel = (nib & 7u) | (nib >> 4 & 0x70u) | (nib >> 8 & 0x700u) | (nib >> 12 & 0x7000u);
  const uint32_t lo = __byte_perm (t0, t1, sel), hi = __byte_perm (t2, t3, sel);
  const uint32_t m = ((nib >> 3) & 0x01010101u) * 0xffu;
  return (int) ((lo & ~m) | (hi & m));
#else
  const uint64_t lo = (uint64_t) t1 << 32 | t0, hi = (uint64_t) t3 << 32 | t2;
  uint32_t r = 0;
  for (int i = 0; i < 4; i++)
    {
      const uint32_t n = (nib >> (8 * i)) & 15u;
      r |= (uint32_t) (((n & 8u ? hi : lo) >> (8 * (n & 7u))) & 0xffu) << (8 * i);
    }
  return (int) r;
#endif
}

/** ggml kvalues_iq4nl {-127,-104,-83,-65,-49,-35,-22,-10,1,13,25,38,53,69,89,113} and
 *  kvalues_fp4 (doubled E2M1) {0,1,2,3,4,6,8,12,0,-1,-2,-3,-4,-6,-8,-12} (ggml-common.h)
 *  as little-endian int8 words. */
#define HZK_IQ4NL_WORDS 0xBFAD9881u, 0xF6EADDCFu, 0x26190D01u, 0x71594535u
#define HZK_FP4_WORDS   0x03020100u, 0x0C080604u, 0xFDFEFF00u, 0xF4F8FAFCu

#define HZK_LO4 0x0F0F0F0Fu

/** The 32 elements of a 16-byte unit of the legacy nibble formats: v[0] = low nibbles
 *  (elements 0..15), v[1] = high nibbles (16..31), each OR'ed with its 5th bit from qh
 *  (Q5_0/Q5_1; qh = 0 for Q4_0/Q4_1, which the compiler folds away). */
static __device__ __forceinline__ void
hzk_legacy_nibbles (const uint4 *q, uint32_t qh, int v[][4])
{
  const uint32_t w[4] = { q[0].x, q[0].y, q[0].z, q[0].w };
  for (int k = 0; k < 4; k++)
    {
      v[0][k] = (int) (w[k] & HZK_LO4) | hzk_spread4_bit4 (qh >> (4 * k));
      v[1][k] = (int) ((w[k] >> 4) & HZK_LO4) | hzk_spread4_bit4 (qh >> (16 + 4 * k));
    }
}

/* ---- decoders ------------------------------------------------------------------------
 * Integer decoder members:
 *   available, is_float      true, false
 *   symmetric                w = d·v (no m term)
 *   scale_slots              distinct (scale, min) slots per ggml block
 *   payload_off/_bytes       the payload byte range of the ggml block; everything else is
 *                            meta (meta_bytes = block_bytes − payload_bytes)
 *   unit_bytes               payload bytes per unit (a multiple of 16)
 *   units_per_block, runs    units per block; 16-element runs per unit
 *   payload_src(ub, i)       ggml block byte of byte i of unit ub
 *   decode(q, meta, ub, v, d, m, off)   (meta in global or shared memory: plain loads,
 *                            at its stored alignment modulo 16)
 *   zero_point (optional)    z where decode's m is exactly −z·d and v + 0x80 − z < 256
 *                            (Q4_0 8, Q5_0 16): the tensor-core tile stores v − z as int8
 *                            and drops the m term (w = d·(v − z), symmetric arithmetic)
 * Float decoder members: unit of 16 bytes -> unit_elems floats, decode_f(q, w).
 */
template <int W> struct qdec { static constexpr bool available = false; };

/** Q4_0: {d fp16; qs[16]}, w = d·(q − 8); low nibbles elements 0..15, high 16..31. */
template <> struct qdec<HZ_TYPE_Q4_0> {
  static constexpr bool available = true, is_float = false, symmetric = false;
  static constexpr int scale_slots = 1, payload_off = offsetof (HzBlockQ4_0, qs),
                              payload_bytes = sizeof (HzBlockQ4_0::qs);
  static constexpr int unit_bytes = 16, units_per_block = 1, runs = 2, zero_point = 8;
  static HZK_HD int payload_src (int ub, int i) { return payload_off + i; }
  static __device__ __forceinline__ void
  decode (const uint4 *q, const uint8_t *meta, int ub, int v[][4], float *d, float *m, int *off)
  {
    const float s = hzk_rdh (meta);
    hzk_legacy_nibbles (q, 0u, v);
    d[0] = d[1] = s;
    m[0] = m[1] = -8.0f * s;
    off[0] = 0;
    off[1] = 16;
  }
};

/** Q4_1: {d, m fp16; qs[16]}, w = d·q + m. */
template <> struct qdec<HZ_TYPE_Q4_1> {
  static constexpr bool available = true, is_float = false, symmetric = false;
  static constexpr int scale_slots = 1, payload_off = offsetof (HzBlockQ4_1, qs),
                              payload_bytes = sizeof (HzBlockQ4_1::qs);
  static constexpr int unit_bytes = 16, units_per_block = 1, runs = 2;
  static HZK_HD int payload_src (int ub, int i) { return payload_off + i; }
  static __device__ __forceinline__ void
  decode (const uint4 *q, const uint8_t *meta, int ub, int v[][4], float *d, float *m, int *off)
  {
    hzk_legacy_nibbles (q, 0u, v);
    d[0] = d[1] = hzk_rdh (meta);
    m[0] = m[1] = hzk_rdh (meta + 2);
    off[0] = 0;
    off[1] = 16;
  }
};

/** Q5_0: {d fp16; qh u32; qs[16]}, w = d·((nibble | bit_j(qh)<<4) − 16). Meta = d, qh. */
template <> struct qdec<HZ_TYPE_Q5_0> {
  static constexpr bool available = true, is_float = false, symmetric = false;
  static constexpr int scale_slots = 1, payload_off = offsetof (HzBlockQ5_0, qs),
                              payload_bytes = sizeof (HzBlockQ5_0::qs);
  static constexpr int unit_bytes = 16, units_per_block = 1, runs = 2;
  static HZK_HD int payload_src (int ub, int i) { return payload_off + i; }
  static __device__ __forceinline__ void
  decode (const uint4 *q, const uint8_t *meta, int ub, int v[][4], float *d, float *m, int *off)
  {
    const uint32_t qh = (uint32_t) hzk_rd16 (meta + 2) | (uint32_t) hzk_rd16 (meta + 4) << 16;
    const float s = hzk_rdh (meta);
    hzk_legacy_nibbles (q, qh, v);
    d[0] = d[1] = s;
    m[0] = m[1] = -16.0f * s;
    off[0] = 0;
    off[1] = 16;
  }
};

/** Q5_1: {d, m fp16; qh u32; qs[16]}, w = d·(nibble | bit_j(qh)<<4) + m. */
template <> struct qdec<HZ_TYPE_Q5_1> {
  static constexpr bool available = true, is_float = false, symmetric = false;
  static constexpr int scale_slots = 1, payload_off = offsetof (HzBlockQ5_1, qs),
                              payload_bytes = sizeof (HzBlockQ5_1::qs);
  static constexpr int unit_bytes = 16, units_per_block = 1, runs = 2;
  static HZK_HD int payload_src (int ub, int i) { return payload_off + i; }
  static __device__ __forceinline__ void
  decode (const uint4 *q, const uint8_t *meta, int ub, int v[][4], float *d, float *m, int *off)
  {
    const uint32_t qh = (uint32_t) hzk_rd16 (meta + 4) | (uint32_t) hzk_rd16 (meta + 6) << 16;
    hzk_legacy_nibbles (q, qh, v);
    d[0] = d[1] = hzk_rdh (meta);
    m[0] = m[1] = hzk_rdh (meta + 2);
    off[0] = 0;
    off[1] = 16;
  }
};

/** Q8_0: {d fp16; qs[32] int8}, w = d·q. Two 16-byte units per block. */
template <> struct qdec<HZ_TYPE_Q8_0> {
  static constexpr bool available = true, is_float = false, symmetric = true;
  static constexpr int scale_slots = 1, payload_off = offsetof (HzBlockQ8_0, qs),
                              payload_bytes = sizeof (HzBlockQ8_0::qs);
  static constexpr int unit_bytes = 16, units_per_block = 2, runs = 1;
  static HZK_HD int payload_src (int ub, int i) { return payload_off + 16 * ub + i; }
  static __device__ __forceinline__ void
  decode (const uint4 *q, const uint8_t *meta, int ub, int v[][4], float *d, float *m, int *off)
  {
    v[0][0] = (int) q[0].x;
    v[0][1] = (int) q[0].y;
    v[0][2] = (int) q[0].z;
    v[0][3] = (int) q[0].w;
    d[0] = hzk_rdh (meta);
    m[0] = 0.0f;
    off[0] = 16 * ub;
  }
};

/** IQ4_NL: {d fp16; qs[16]}, w = d·kvalues_iq4nl[nibble]; nibble order as Q4_0. */
template <> struct qdec<HZ_TYPE_IQ4_NL> {
  static constexpr bool available = true, is_float = false, symmetric = true;
  static constexpr int scale_slots = 1, payload_off = offsetof (HzBlockIQ4_NL, qs),
                              payload_bytes = sizeof (HzBlockIQ4_NL::qs);
  static constexpr int unit_bytes = 16, units_per_block = 1, runs = 2;
  static HZK_HD int payload_src (int ub, int i) { return payload_off + i; }
  static __device__ __forceinline__ void
  decode (const uint4 *q, const uint8_t *meta, int ub, int v[][4], float *d, float *m, int *off)
  {
    const uint32_t w[4] = { q[0].x, q[0].y, q[0].z, q[0].w };
    for (int k = 0; k < 4; k++)
      {
        v[0][k] = hzk_lut16 (w[k] & HZK_LO4, HZK_IQ4NL_WORDS);
        v[1][k] = hzk_lut16 ((w[k] >> 4) & HZK_LO4, HZK_IQ4NL_WORDS);
      }
    d[0] = d[1] = hzk_rdh (meta);
    m[0] = m[1] = 0.0f;
    off[0] = 0;
    off[1] = 16;
  }
};

/** MXFP4: {e E8M0; qs[16]}, w = 2^(e−128)·kvalues_fp4[nibble] (the table is doubled E2M1,
 *  ggml_e8m0_to_fp32_half); e < 2 gives the subnormal scales 2^-128, 2^-127. */
template <> struct qdec<HZ_TYPE_MXFP4> {
  static constexpr bool available = true, is_float = false, symmetric = true;
  static constexpr int scale_slots = 1, payload_off = offsetof (HzBlockMXFP4, qs),
                              payload_bytes = sizeof (HzBlockMXFP4::qs);
  static constexpr int unit_bytes = 16, units_per_block = 1, runs = 2;
  static HZK_HD int payload_src (int ub, int i) { return payload_off + i; }
  static __device__ __forceinline__ void
  decode (const uint4 *q, const uint8_t *meta, int ub, int v[][4], float *d, float *m, int *off)
  {
    const uint32_t w[4] = { q[0].x, q[0].y, q[0].z, q[0].w };
    for (int k = 0; k < 4; k++)
      {
        v[0][k] = hzk_lut16 (w[k] & HZK_LO4, HZK_FP4_WORDS);
        v[1][k] = hzk_lut16 ((w[k] >> 4) & HZK_LO4, HZK_FP4_WORDS);
      }
    const uint32_t e = meta[0];
    d[0] = d[1] = __uint_as_float (e < 2 ? 0x00200000u << e : (e - 1u) << 23);
    m[0] = m[1] = 0.0f;
    off[0] = 0;
    off[1] = 16;
  }
};

/** Q2_K: {scales[16] (lo nibble scale, hi nibble min); qs[64]; d, dmin fp16}; element e:
 *  2 bits (qs[32·(e/128) + e%32] >> 2·((e%128)/32)) & 3, group g = e/16:
 *  w = d·sc_g·q − dmin·min_g. Unit (h = e/128, l0 ∈ {0,16}) = qs[32h + l0 .. +16]: four runs
 *  k = 0..3 at 128h + 32k + l0. Meta = scales, d, dmin (20 bytes). */
template <> struct qdec<HZ_TYPE_Q2_K> {
  static constexpr bool available = true, is_float = false, symmetric = false;
  static constexpr int scale_slots = 16, payload_off = offsetof (HzBlockQ2_K, qs),
                              payload_bytes = sizeof (HzBlockQ2_K::qs);
  static constexpr int unit_bytes = 16, units_per_block = 4, runs = 4;
  static HZK_HD int payload_src (int ub, int i) { return payload_off + 16 * ub + i; }
  static __device__ __forceinline__ void
  decode (const uint4 *q, const uint8_t *meta, int ub, int v[][4], float *d, float *m, int *off)
  {
    const uint32_t w[4] = { q[0].x, q[0].y, q[0].z, q[0].w };
    const int h = ub >> 1, l0 = (ub & 1) * 16;
    const float dd = hzk_rdh (meta + 16), dmin = hzk_rdh (meta + 18);
    for (int k = 0; k < 4; k++)
      {
        for (int j = 0; j < 4; j++)
          v[k][j] = (int) ((w[j] >> (2 * k)) & 0x03030303u);
        const uint8_t sc = meta[8 * h + 2 * k + l0 / 16];
        d[k] = dd * (float) (sc & 15);
        m[k] = -dmin * (float) (sc >> 4);
        off[k] = 128 * h + 32 * k + l0;
      }
  }
};

/** 6-bit scale and min of sub-block j (ggml get_scale_min_k4) from the 12 scale bytes held
 *  in three little-endian words s0 = bytes 0..3, s1 = 4..7, s2 = 8..11 (register shifts,
 *  no byte loads; j may be a run-time value). */
static __device__ __forceinline__ void
hzk_scale_min_k4 (int j, uint32_t s0, uint32_t s1, uint32_t s2, int *sc, int *mn)
{
  const int sh = 8 * (j & 3);
  const uint32_t a = s0 >> sh, b = s1 >> sh, c = s2 >> sh;
  if (j < 4)
    {
      *sc = (int) (a & 63u);
      *mn = (int) (b & 63u);
    }
  else
    {
      *sc = (int) ((c & 0xfu) | (a >> 6 & 3u) << 4);
      *mn = (int) ((c >> 4 & 0xfu) | (b >> 6 & 3u) << 4);
    }
}

/** The 16 meta bytes {d, dmin fp16; scales[12]} of Q4_K/Q5_K as one 16-byte cached load:
 *  d, dmin as floats and the scale words for hzk_scale_min_k4. */
static __device__ __forceinline__ void
hzk_k4_meta (const uint8_t *meta, float *d, float *dmin, uint32_t *s0, uint32_t *s1, uint32_t *s2)
{
  const uint4 m = *(const uint4 *) meta;   /* global or shared (the pipelined tile) */
  *d = hzk_half_bits_to_float ((uint16_t) (m.x & 0xffffu));
  *dmin = hzk_half_bits_to_float ((uint16_t) (m.x >> 16));
  *s0 = m.y;
  *s1 = m.z;
  *s2 = m.w;
}

/** Q4_K: {d, dmin fp16; scales[12]; qs[128]}; 64-element pair j = e/64: low nibbles of
 *  qs[32j..32j+32) are elements 64j.., high nibbles 64j+32..; sub-block s = e/32 has
 *  w = d·sc_s·q − dmin·min_s. Unit ub = (j, half l0) = qs[32j + l0 .. +16]: runs at
 *  64j + l0 (low) and 64j + 32 + l0 (high). Meta = d, dmin, scales (16 bytes). */
template <> struct qdec<HZ_TYPE_Q4_K> {
  static constexpr bool available = true, is_float = false, symmetric = false;
  static constexpr int scale_slots = 8, payload_off = offsetof (HzBlockQ4_K, qs),
                              payload_bytes = sizeof (HzBlockQ4_K::qs);
  static constexpr int unit_bytes = 16, units_per_block = 8, runs = 2;
  static HZK_HD int payload_src (int ub, int i) { return payload_off + 16 * ub + i; }
  static __device__ __forceinline__ void
  decode (const uint4 *q, const uint8_t *meta, int ub, int v[][4], float *d, float *m, int *off)
  {
    const uint32_t w[4] = { q[0].x, q[0].y, q[0].z, q[0].w };
    const int j = ub >> 1, l0 = (ub & 1) * 16;
    for (int k = 0; k < 4; k++)
      {
        v[0][k] = (int) (w[k] & HZK_LO4);
        v[1][k] = (int) ((w[k] >> 4) & HZK_LO4);
      }
    float dd, dmin;
    uint32_t s0, s1, s2;
    hzk_k4_meta (meta, &dd, &dmin, &s0, &s1, &s2);
    int sc, mn;
    hzk_scale_min_k4 (2 * j, s0, s1, s2, &sc, &mn);
    d[0] = dd * (float) sc;
    m[0] = -dmin * (float) mn;
    hzk_scale_min_k4 (2 * j + 1, s0, s1, s2, &sc, &mn);
    d[1] = dd * (float) sc;
    m[1] = -dmin * (float) mn;
    off[0] = 64 * j + l0;
    off[1] = 64 * j + 32 + l0;
  }
};

/** Q5_K: {d, dmin fp16; scales[12]; qh[32]; qs[128]}: as Q4_K with a 5th bit, bit s of
 *  qh[e%32] for sub-block s = e/32. qh is shared by all four pairs, so a unit is one half
 *  l0 of the whole block: qs[32j + l0 .. +16] for j = 0..3, then qh[l0 .. +16] (80 bytes,
 *  8 runs at 64j + l0 and 64j + 32 + l0). Meta = d, dmin, scales (16 bytes). */
template <> struct qdec<HZ_TYPE_Q5_K> {
  static constexpr bool available = true, is_float = false, symmetric = false;
  static constexpr int scale_slots = 8, payload_off = offsetof (HzBlockQ5_K, qh),
                              payload_bytes = sizeof (HzBlockQ5_K::qh) + sizeof (HzBlockQ5_K::qs);
  static constexpr int unit_bytes = 80, units_per_block = 2, runs = 8;
  static HZK_HD int payload_src (int ub, int i)
  {
    const int c = i / 16, b = i % 16, l0 = 16 * ub;
    return c < 4 ? 48 + 32 * c + l0 + b : 16 + l0 + b;
  }
  static __device__ __forceinline__ void
  decode (const uint4 *q, const uint8_t *meta, int ub, int v[][4], float *d, float *m, int *off)
  {
    const uint32_t hb[4] = { q[4].x, q[4].y, q[4].z, q[4].w };
    const int l0 = 16 * ub;
    float dd, dmin;
    uint32_t s0, s1, s2;
    hzk_k4_meta (meta, &dd, &dmin, &s0, &s1, &s2);
    for (int j = 0; j < 4; j++)
      {
        const uint32_t w[4] = { q[j].x, q[j].y, q[j].z, q[j].w };
        for (int k = 0; k < 4; k++)
          {
            v[2 * j][k] = (int) ((w[k] & HZK_LO4) | ((hb[k] >> (2 * j)) & 0x01010101u) << 4);
            v[2 * j + 1][k] = (int) (((w[k] >> 4) & HZK_LO4) | ((hb[k] >> (2 * j + 1)) & 0x01010101u) << 4);
          }
        int sc, mn;
        hzk_scale_min_k4 (2 * j, s0, s1, s2, &sc, &mn);
        d[2 * j] = dd * (float) sc;
        m[2 * j] = -dmin * (float) mn;
        hzk_scale_min_k4 (2 * j + 1, s0, s1, s2, &sc, &mn);
        d[2 * j + 1] = dd * (float) sc;
        m[2 * j + 1] = -dmin * (float) mn;
        off[2 * j] = 64 * j + l0;
        off[2 * j + 1] = 64 * j + 32 + l0;
      }
  }
};

/** Q6_K: {ql[128]; qh[64]; scales[16] int8; d fp16}; element e, h = e/128, l = e%32,
 *  k = (e%128)/32: low 4 bits = nibble k/2 of ql[64h + l + 32·(k&1)], high 2 bits =
 *  (qh[32h + l] >> 2k) & 3; w = d·scales[e/16]·(q − 32). Unit (h, l0) = ql[64h + l0 ..+16],
 *  ql[64h + 32 + l0 ..+16], qh[32h + l0 ..+16] (48 bytes): runs k = 0..3 at
 *  128h + 32k + l0. Meta = scales, d (18 bytes). */
template <> struct qdec<HZ_TYPE_Q6_K> {
  static constexpr bool available = true, is_float = false, symmetric = false;
  static constexpr int scale_slots = 16, payload_off = offsetof (HzBlockQ6_K, ql),
                              payload_bytes = sizeof (HzBlockQ6_K::ql) + sizeof (HzBlockQ6_K::qh);
  static constexpr int unit_bytes = 48, units_per_block = 4, runs = 4;
  static HZK_HD int payload_src (int ub, int i)
  {
    const int c = i / 16, b = i % 16, h = ub >> 1, l0 = (ub & 1) * 16;
    return c == 0 ? 64 * h + l0 + b : c == 1 ? 64 * h + 32 + l0 + b : 128 + 32 * h + l0 + b;
  }
  static __device__ __forceinline__ void
  decode (const uint4 *q, const uint8_t *meta, int ub, int v[][4], float *d, float *m, int *off)
  {
    const uint32_t a[4] = { q[0].x, q[0].y, q[0].z, q[0].w };
    const uint32_t b[4] = { q[1].x, q[1].y, q[1].z, q[1].w };
    const uint32_t hb[4] = { q[2].x, q[2].y, q[2].z, q[2].w };
    const int h = ub >> 1, l0 = (ub & 1) * 16;
    const float dd = hzk_rdh (meta + 16);
    for (int k = 0; k < 4; k++)
      {
        for (int j = 0; j < 4; j++)
          {
            const uint32_t lo = k & 1 ? b[j] : a[j];
            v[k][j] = (int) (((lo >> (4 * (k >> 1))) & HZK_LO4) | ((hb[j] >> (2 * k)) & 0x03030303u) << 4);
          }
        d[k] = dd * (float) (int8_t) meta[8 * h + 2 * k + l0 / 16];
        m[k] = -32.0f * d[k];
        off[k] = 128 * h + 32 * k + l0;
      }
  }
};

/** F32: 16-byte unit = 4 floats. */
template <> struct qdec<HZ_TYPE_F32> {
  static constexpr bool available = true, is_float = true, symmetric = true;
  static constexpr int scale_slots = 0, unit_bytes = 16, unit_elems = 4;
  static __device__ __forceinline__ void
  decode_f (const uint4 *q, float *w)
  {
    w[0] = __uint_as_float (q[0].x);
    w[1] = __uint_as_float (q[0].y);
    w[2] = __uint_as_float (q[0].z);
    w[3] = __uint_as_float (q[0].w);
  }
};

/** F16: 16-byte unit = 8 IEEE halves (little-endian pairs per word). */
template <> struct qdec<HZ_TYPE_F16> {
  static constexpr bool available = true, is_float = true, symmetric = true;
  static constexpr int scale_slots = 0, unit_bytes = 16, unit_elems = 8;
  static __device__ __forceinline__ void
  decode_f (const uint4 *q, float *w)
  {
    const uint32_t u[4] = { q[0].x, q[0].y, q[0].z, q[0].w };
    for (int k = 0; k < 4; k++)
      {
        w[2 * k] = hzk_half_bits_to_float ((uint16_t) (u[k] & 0xffffu));
        w[2 * k + 1] = hzk_half_bits_to_float ((uint16_t) (u[k] >> 16));
      }
  }
};

/** BF16: 16-byte unit = 8 bfloat16. */
template <> struct qdec<HZ_TYPE_BF16> {
  static constexpr bool available = true, is_float = true, symmetric = true;
  static constexpr int scale_slots = 0, unit_bytes = 16, unit_elems = 8;
  static __device__ __forceinline__ void
  decode_f (const uint4 *q, float *w)
  {
    const uint32_t u[4] = { q[0].x, q[0].y, q[0].z, q[0].w };
    for (int k = 0; k < 4; k++)
      {
        w[2 * k] = __uint_as_float (u[k] << 16);
        w[2 * k + 1] = __uint_as_float (u[k] & 0xffff0000u);
      }
  }
};

/* ---- traits, generated: table row + decoder geometry --------------------------------- */
template <int W, bool F = qdec<W>::is_float> struct hzk_geom;
template <int W> struct hzk_geom<W, false> {
  using D = qdec<W>;
  static constexpr int blk_elems = hzk_fmt<W>::block_elems;   /* repack block */
  static constexpr int blk_bytes = hzk_fmt<W>::block_bytes;
  static constexpr int unit_elems = blk_elems / D::units_per_block;
  static constexpr int meta_bytes = blk_bytes - D::payload_bytes;
  static_assert (D::unit_bytes * D::units_per_block == D::payload_bytes, "units tile the payload");
  static_assert (D::runs * 16 == unit_elems, "runs tile the unit");
  static_assert (D::unit_bytes % 16 == 0, "units are whole 16-byte chunks");
  static_assert (D::payload_off + D::payload_bytes <= blk_bytes, "payload inside the block");
};
template <int W> struct hzk_geom<W, true> {
  /* float formats: the repack "block" is one 16-byte unit, no meta */
  static constexpr int blk_elems = qdec<W>::unit_elems, blk_bytes = 16;
  static constexpr int unit_elems = qdec<W>::unit_elems, meta_bytes = 0;
  static_assert (hzk_fmt<W>::block_bytes * qdec<W>::unit_elems == 16, "16-byte float unit");
};

/** qdw_traits<W>: everything the generic kernels need about format W. For formats
 *  without a decoder only the table columns are meaningful (available == false). */
template <int W, bool A = qdec<W>::available> struct qdw_traits : hzk_fmt<W> {
  static constexpr bool available = false;
};
template <int W> struct qdw_traits<W, true> : hzk_fmt<W>, hzk_geom<W> {
  using dec = qdec<W>;
  static constexpr bool available = true, is_float = dec::is_float, symmetric = dec::symmetric;
  static constexpr int scale_slots = dec::scale_slots;
  static constexpr int unit_bytes = dec::unit_bytes, chunks = dec::unit_bytes / 16;
  static constexpr int units_per_block = hzk_geom<W>::blk_elems / hzk_geom<W>::unit_elems;
};

/** Loads unit u of one repacked weight row of format W into q. The device layout stores a
 *  row of nu units chunk-major: 16-byte chunk c of unit u at row + (c·nu + u)·16, so that
 *  consecutive threads reading consecutive units read consecutive addresses. */
template <int W>
static __device__ __forceinline__ void
qdw_load_unit (const uint8_t *row, int64_t nu, int64_t u, uint4 (&q)[qdw_traits<W>::chunks])
{
#pragma unroll
  for (int c = 0; c < qdw_traits<W>::chunks; c++)
    q[c] = *(const uint4 *) (row + ((size_t) c * nu + u) * 16);
}
