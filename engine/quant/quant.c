/* engine/quant/quant.c — the traits and dispatch tables, generated from formats.def, and the
 * run-time choice of SIMD kernels (CPUID). Nothing in here knows any particular format. */
#include "quant.h"
#include "quant-impl.h"

#include <pthread.h>
#include <stdlib.h>
#include <strings.h>

/* ---- per-row expansion helpers (kind column) ---------------------------------------- */
/* reference encoder (traits.from_float) */
#define HZQ_ENC_W(c)    c##_from_float
#define HZQ_ENC_WC(c)   c##_from_float
#define HZQ_ENC_WV(c)   c##_from_float
#define HZQ_ENC_WI(c)   NULL
#define HZQ_ENC_A(c)    c##_from_float
#define HZQ_ENC_AV(c)   c##_from_float
/* file quantizer (ggml_quantize_chunk without imatrix) */
#define HZQ_CHUNK_W(c)  c##_from_float
#define HZQ_CHUNK_WC(c) c##_from_float_chunk
#define HZQ_CHUNK_WV(c) c##_from_float
#define HZQ_CHUNK_WI(c) NULL
#define HZQ_CHUNK_A(c)  c##_from_float
#define HZQ_CHUNK_AV(c) c##_from_float
/* activation quantizer (ggml-cpu type traits from_float) */
#define HZQ_ACT_W(c)    c##_from_float
#define HZQ_ACT_WC(c)   c##_from_float
#define HZQ_ACT_WV(c)   c##_from_float_act
#define HZQ_ACT_WI(c)   NULL
#define HZQ_ACT_A(c)    c##_from_float
#define HZQ_ACT_AV(c)   c##_from_float_act
/* scalar dot */
#define HZQ_DOT_W(c)    c##_vec_dot
#define HZQ_DOT_WC(c)   c##_vec_dot
#define HZQ_DOT_WV(c)   c##_vec_dot
#define HZQ_DOT_WI(c)   c##_vec_dot
#define HZQ_DOT_A(c)    NULL
#define HZQ_DOT_AV(c)   NULL

/* ---- (simd column, level) -> kernel ------------------------------------------------- */
#if HZ_QUANT_X86
#define HZQ_AVX2_SCALAR(c)   NULL
#define HZQ_AVX2_AVX2(c)     c##_vec_dot_avx2
#define HZQ_AVX2_AVX512(c)   c##_vec_dot_avx2
#define HZQ_AVX512_SCALAR(c) NULL
#define HZQ_AVX512_AVX2(c)   NULL
#define HZQ_AVX512_AVX512(c) c##_vec_dot_avx512
#else
#define HZQ_AVX2_SCALAR(c)   NULL
#define HZQ_AVX2_AVX2(c)     NULL
#define HZQ_AVX2_AVX512(c)   NULL
#define HZQ_AVX512_SCALAR(c) NULL
#define HZQ_AVX512_AVX2(c)   NULL
#define HZQ_AVX512_AVX512(c) NULL
#endif

/* The traits rows; vec_dot is upgraded to the best supported kernel by hzq_init(). */
static HzQuantTraits hzq_rows[] = {
#define HZ_QUANT(NAME, id, elems, bytes, vdt, codec, kind, simd)                           \
  { .name = NULL, .type = (HzType) id, .block_elems = elems, .block_bytes = bytes,         \
    .vec_dot_type = (HzType) HZ_TYPE_##vdt, .is_quantized = (elems) > 1,                  \
    .to_float = codec##_to_float, .from_float = HZQ_ENC_##kind (codec),                   \
    .vec_dot = HZQ_DOT_##kind (codec) },
#include "formats.def"
#undef HZ_QUANT
};

#define HZQ_N_ROWS (sizeof hzq_rows / sizeof hzq_rows[0])

/* Kernels per level: [row][level]. Scalar entry == the kind's vec_dot (NULL for "A"). */
static const HzVecDotFn hzq_dot_at[][HZ_SIMD_LEVELS] = {
#define HZ_QUANT(NAME, id, elems, bytes, vdt, codec, kind, simd)                           \
  { HZQ_DOT_##kind (codec), HZQ_AVX2_##simd (codec), HZQ_AVX512_##simd (codec) },
#include "formats.def"
#undef HZ_QUANT
};

/* The quantizer of ggml_quantize_chunk (imatrix = NULL) per row. */
static const HzFromFloatFn hzq_chunk[] = {
#define HZ_QUANT(NAME, id, elems, bytes, vdt, codec, kind, simd) HZQ_CHUNK_##kind (codec),
#include "formats.def"
#undef HZ_QUANT
};

/* The activation quantizer per row (what ggml-cpu's type traits use in mul_mat). */
static const HzFromFloatFn hzq_act[] = {
#define HZ_QUANT(NAME, id, elems, bytes, vdt, codec, kind, simd) HZQ_ACT_##kind (codec),
#include "formats.def"
#undef HZ_QUANT
};

/* ggml_type_name(): lower case except the K suffix ("q4_K"); computed at init. */
static const char *const hzq_upper_names[] = {
#define HZ_QUANT(NAME, ...) #NAME,
#include "formats.def"
#undef HZ_QUANT
};
static char hzq_names[HZQ_N_ROWS][16];

static int8_t hzq_index[HZ_TYPE_COUNT_];   /* id -> row, -1 when absent */
static HzSimdLevel hzq_level = HZ_SIMD_SCALAR;
static pthread_once_t hzq_once = PTHREAD_ONCE_INIT;

#if HZ_QUANT_X86
#include <cpuid.h>
/* F16C (CPUID leaf 1, ECX bit 29): read directly because clang's __builtin_cpu_supports
 * does not know the "f16c" feature name. */
static bool
cpu_has_f16c (void)
{
  unsigned a, b, c, d;
  return __get_cpuid (1, &a, &b, &c, &d) && (c & bit_F16C);
}
#endif

bool
hz_simd_supported (HzSimdLevel level)
{
#if HZ_QUANT_X86
  __builtin_cpu_init ();
  switch (level)
    {
    case HZ_SIMD_SCALAR:
      return true;
    case HZ_SIMD_AVX2:
      return __builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("fma")
             && cpu_has_f16c ();
    case HZ_SIMD_AVX512:
      return hz_simd_supported (HZ_SIMD_AVX2) && __builtin_cpu_supports ("avx512f")
             && __builtin_cpu_supports ("avx512bw") && __builtin_cpu_supports ("avx512vl")
             && __builtin_cpu_supports ("avx512vnni");
    default:
      return false;
    }
#else
  return level == HZ_SIMD_SCALAR;
#endif
}

const char *
hz_simd_level_name (HzSimdLevel level)
{
  static const char *const names[HZ_SIMD_LEVELS] = { "scalar", "avx2", "avx512" };
  return (unsigned) level < HZ_SIMD_LEVELS ? names[level] : "?";
}

static void
hzq_init (void)
{
  HzSimdLevel cap = HZ_SIMD_LEVELS - 1;
  const char *env = getenv ("HZ_SIMD");
  for (int l = 0; env && l < HZ_SIMD_LEVELS; l++)
    if (strcasecmp (env, hz_simd_level_name ((HzSimdLevel) l)) == 0)
      cap = (HzSimdLevel) l;
  while (cap > HZ_SIMD_SCALAR && !hz_simd_supported (cap))
    cap--;
  hzq_level = cap;

  memset (hzq_index, -1, sizeof hzq_index);
  for (size_t i = 0; i < HZQ_N_ROWS; i++)
    {
      HzQuantTraits *t = &hzq_rows[i];
      hzq_index[t->type] = (int8_t) i;
      /* name: lower-case, but ggml keeps the K of the K-quants upper case */
      size_t k = 0;
      for (const char *p = hzq_upper_names[i]; *p && k + 1 < sizeof hzq_names[i]; p++, k++)
        hzq_names[i][k] = (*p == 'K' && p > hzq_upper_names[i] && p[-1] == '_')
                            ? 'K' : (char) (*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
      t->name = hzq_names[i];
      for (int l = cap; l > HZ_SIMD_SCALAR; l--)
        if (hzq_dot_at[i][l])
          {
            t->vec_dot = hzq_dot_at[i][l];
            break;
          }
    }
}

static inline void hzq_ensure (void) { pthread_once (&hzq_once, hzq_init); }

HzSimdLevel
hz_simd_level (void)
{
  hzq_ensure ();
  return hzq_level;
}

const HzQuantTraits *
hz_quant_traits (uint32_t type)
{
  hzq_ensure ();
  if (type >= HZ_TYPE_COUNT_ || hzq_index[type] < 0)
    return NULL;
  return &hzq_rows[hzq_index[type]];
}

const HzQuantTraits *
hz_quant_traits_by_name (const char *name)
{
  hzq_ensure ();
  if (!name)
    return NULL;
  for (size_t i = 0; i < HZQ_N_ROWS; i++)
    if (strcasecmp (name, hzq_rows[i].name) == 0)
      return &hzq_rows[i];
  return NULL;
}

size_t
hz_quant_n_formats (void)
{
  return HZQ_N_ROWS;
}

const HzQuantTraits *
hz_quant_format (size_t i)
{
  hzq_ensure ();
  return i < HZQ_N_ROWS ? &hzq_rows[i] : NULL;
}

size_t
hz_quant_row_size (uint32_t type, int64_t n)
{
  const HzQuantTraits *t = hz_quant_traits (type);
  if (!t || n < 0 || n % t->block_elems != 0)
    return 0;
  return (size_t) (n / t->block_elems) * t->block_bytes;
}

HzVecDotFn
hz_quant_vec_dot_at (uint32_t type, HzSimdLevel level)
{
  hzq_ensure ();
  if (type >= HZ_TYPE_COUNT_ || hzq_index[type] < 0 || (unsigned) level >= HZ_SIMD_LEVELS)
    return NULL;
  return hzq_dot_at[hzq_index[type]][level];
}

float    hz_fp16_to_fp32 (uint16_t h) { return hzq_fp16_to_fp32 (h); }
uint16_t hz_fp32_to_fp16 (float f)    { return hzq_fp32_to_fp16 (f); }
float    hz_bf16_to_fp32 (uint16_t h) { return hzq_bf16_to_fp32 (h); }
uint16_t hz_fp32_to_bf16 (float f)    { return hzq_fp32_to_bf16 (f); }

size_t
hz_quant_quantize_rows (uint32_t type, const float *src, void *dst, int64_t nrows,
                        int64_t n_per_row)
{
  const size_t row = hz_quant_row_size (type, n_per_row);
  if (!row || n_per_row <= 0 || nrows < 0 || !hzq_chunk[hzq_index[type]])
    return 0;
  for (int64_t r = 0; r < nrows; r++)
    hzq_chunk[hzq_index[type]] (src + r * n_per_row, (uint8_t *) dst + (size_t) r * row, n_per_row);
  return (size_t) nrows * row;
}

HzFromFloatFn
hz_quant_act_from_float (uint32_t type)
{
  hzq_ensure ();
  if (type >= HZ_TYPE_COUNT_ || hzq_index[type] < 0)
    return NULL;
  return hzq_act[hzq_index[type]];
}
