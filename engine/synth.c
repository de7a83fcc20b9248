/* engine/synth.c — random-weight models with real shapes (see synth.h). */
#include "synth.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hanzo/atomic-file.h"
#include "gguf.h"
#include "hanzo/engine-error.h"
#include "quant.h"

/* Most layers a custom shape may have (real models have a few hundred at most). */
#define SYNTH_MAX_LAYERS 4096

/* ---------------------------------------------------------------- shapes */

static const HzSynthShape shapes[] = {
  /* name              arch     embd  lyr head kv  hd   ffn    vocab   ctx    rope   eps  tied
   *                                                          experts used ffn_exp ffn_shexp */
  { "tinyllama-1.1b", "llama",  2048, 22, 32,  4,  64,  5632, 32000,  2048, 1e4f, 1e-5f, FALSE, 0, 0, 0, 0 },
  { "llama2-7b",      "llama",  4096, 32, 32, 32, 128, 11008, 32000,  4096, 1e4f, 1e-5f, FALSE, 0, 0, 0, 0 },
  { "llama3-8b",      "llama",  4096, 32, 32,  8, 128, 14336, 128256, 8192, 5e5f, 1e-5f, FALSE, 0, 0, 0, 0 },
  { "qwen2.5-0.5b",   "qwen2",   896, 24, 14,  2,  64,  4864, 151936, 32768, 1e6f, 1e-6f, TRUE, 0, 0, 0, 0 },
  { "qwen3-0.6b",     "qwen3",  1024, 28, 16,  8, 128,  3072, 151936, 40960, 1e6f, 1e-6f, TRUE, 0, 0, 0, 0 },
  /* Qwen3-30B-A3B (config.json: moe_intermediate_size 768, intermediate_size 6144) */
  { "moe-30b-a3b",    "qwen3moe", 2048, 48, 32, 4, 128,  6144, 151936, 40960, 1e6f, 1e-6f, FALSE, 128, 8, 768, 0 },
  /* small MoE models for tests: every width a multiple of 256 (K-quant rows) */
  { "tiny-qwen3moe",  "qwen3moe", 256, 2, 4, 2, 64, 1024, 512, 256, 1e6f, 1e-6f, FALSE, 8, 2, 256, 0 },
  { "tiny-mixtral",   "llama",     256, 2, 4, 2, 64,  256, 512, 256, 1e6f, 1e-5f, FALSE, 4, 2, 0, 0 },
  { "tiny-qwen2moe",  "qwen2moe",  256, 2, 4, 4, 64,  512, 512, 256, 1e6f, 1e-6f, FALSE, 8, 4, 256, 512 },
  /* Gemma (config.json of google/gemma-3-1b-it, gemma-3-12b-it, gemma-2-2b-it):
   *                                                             window base_swa linear */
  { "gemma3-1b",      "gemma3", 1152, 26,  4, 1, 256,  6912, 262144, 32768, 1e6f, 1e-6f, TRUE, 0, 0, 0, 0, 512, 1e4f, 0 },
  { "gemma3-12b",     "gemma3", 3840, 48, 16, 8, 256, 15360, 262208, 131072, 1e6f, 1e-6f, TRUE, 0, 0, 0, 0, 1024, 1e4f, 8.0f },
  { "gemma2-2b",      "gemma2", 2304, 26,  8, 4, 256,  9216, 256000, 8192, 1e4f, 1e-6f, TRUE, 0, 0, 0, 0, 4096, 0, 0 },
  /* small Gemma models for tests: a window of 32 tokens, so 64-token runs pass it;
   * tiny-gemma3 has gemma3's 5 window layers to 1 global and the 12B's RoPE scaling */
  { "tiny-gemma3",    "gemma3",  256, 6, 4, 2, 64,  512, 512, 256, 1e6f, 1e-6f, TRUE, 0, 0, 0, 0, 32, 1e4f, 8.0f },
  { "tiny-gemma2",    "gemma2",  256, 4, 4, 2, 64,  512, 512, 256, 1e4f, 1e-6f, TRUE, 0, 0, 0, 0, 32, 0, 0 },
  /* gpt-oss (config.json of openai/gpt-oss-20b, gpt-oss-120b: sliding_window 128, YaRN
   * factor 32 over 4096 positions):                                   window      yarn orig */
  { "gpt-oss-20b",  "gpt-oss", 2880, 24, 64, 8, 64, 2880, 201088, 131072, 150000.0f, 1e-5f, FALSE, 32, 4, 2880, 0, 128, 0, 0, 32.0f, 4096 },
  { "gpt-oss-120b", "gpt-oss", 2880, 36, 64, 8, 64, 2880, 201088, 131072, 150000.0f, 1e-5f, FALSE, 128, 4, 2880, 0, 128, 0, 0, 32.0f, 4096 },
  /* small gpt-oss models for tests: window 32, so that 64-token runs pass it; YaRN over 128
   * positions; mid-gpt-oss has the real head layout (64 heads of 64, 8 KV heads) */
  { "tiny-gpt-oss", "gpt-oss",  256, 4, 4, 2, 64,  256, 512, 4096, 150000.0f, 1e-5f, FALSE, 8, 4, 256, 0, 32, 0, 0, 32.0f, 128 },
  { "mid-gpt-oss",  "gpt-oss",  512, 4, 64, 8, 64, 512, 512, 4096, 150000.0f, 1e-5f, FALSE, 16, 4, 512, 0, 32, 0, 0, 32.0f, 128 },
};

const char *const *
hz_synth_shape_names (void)
{
  static const char *names[G_N_ELEMENTS (shapes) + 1];
  for (gsize i = 0; i < G_N_ELEMENTS (shapes); i++)
    names[i] = shapes[i].name;
  return names;
}

static gboolean
bad (GError **error, const char *fmt, const char *what)
{
  g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT, fmt, what);
  return FALSE;
}

gboolean
hz_synth_shape_parse (const char *spec, HzSynthShape *out, GError **error)
{
  for (gsize i = 0; i < G_N_ELEMENTS (shapes); i++)
    if (g_ascii_strcasecmp (spec, shapes[i].name) == 0)
      {
        *out = shapes[i];
        return TRUE;
      }
  if (!g_str_has_prefix (spec, "custom:"))
    return bad (error, "unknown shape '%s' (tinyllama-1.1b, llama2-7b, llama3-8b, qwen2.5-0.5b, "
                "qwen3-0.6b, moe-30b-a3b, tiny-qwen3moe, tiny-mixtral, tiny-qwen2moe, gemma3-1b, "
                "gemma3-12b, gemma2-2b, tiny-gemma3, tiny-gemma2, gpt-oss-20b, gpt-oss-120b, "
                "tiny-gpt-oss, mid-gpt-oss or "
                "custom:dim=..,layers=..,heads=..,kv=..,ffn=..)", spec);
  HzSynthShape s = { "custom", "llama", 0, 0, 0, 0, 0, 0, 0, 2048, 1e4f, 1e-5f, FALSE, 0, 0, 0, 0 };
  g_auto (GStrv) kv = g_strsplit (spec + 7, ",", -1);
  for (int i = 0; kv[i]; i++)
    {
      char *eq = strchr (kv[i], '=');
      if (!eq)
        return bad (error, "custom shape: '%s' is not key=value", kv[i]);
      *eq = 0;
      const char *k = kv[i], *v = eq + 1;
      char *end;
      double d = g_ascii_strtod (v, &end);
      if (*v == 0 || *end != 0 || !isfinite (d) || d < 0 || d > (1 << 24))
        return bad (error, "custom shape: bad value for '%s'", k);
      int32_t iv = (int32_t) d;
      if (strcmp (k, "dim") == 0) s.n_embd = iv;
      else if (strcmp (k, "layers") == 0) s.n_layer = iv;
      else if (strcmp (k, "heads") == 0) s.n_head = iv;
      else if (strcmp (k, "kv") == 0) s.n_head_kv = iv;
      else if (strcmp (k, "ffn") == 0) s.n_ff = iv;
      else if (strcmp (k, "head_dim") == 0) s.head_dim = iv;
      else if (strcmp (k, "ctx") == 0) s.n_ctx = iv;
      else if (strcmp (k, "tied") == 0) s.tied = iv != 0;
      else if (strcmp (k, "rope_base") == 0) s.rope_base = (float) d;
      else if (strcmp (k, "eps") == 0) s.norm_eps = (float) d;
      else if (strcmp (k, "experts") == 0) s.n_expert = iv;
      else if (strcmp (k, "experts_used") == 0) s.n_expert_used = iv;
      else if (strcmp (k, "ffn_exp") == 0) s.n_ff_exp = iv;
      else if (strcmp (k, "ffn_shexp") == 0) s.n_ff_shexp = iv;
      else if (strcmp (k, "window") == 0) s.n_swa = iv;
      else if (strcmp (k, "rope_base_swa") == 0) s.rope_base_swa = (float) d;
      else if (strcmp (k, "rope_linear") == 0) s.rope_linear = (float) d;
      else if (strcmp (k, "yarn") == 0) s.rope_yarn = (float) d;
      else if (strcmp (k, "yarn_ctx") == 0) s.yarn_orig_ctx = iv;
      else
        return bad (error, "custom shape: unknown key '%s' (dim, layers, heads, kv, ffn, head_dim, "
                    "ctx, tied, rope_base, eps, experts, experts_used, ffn_exp, ffn_shexp, window, "
                    "rope_base_swa, rope_linear, yarn, yarn_ctx)", k);
    }
  if (s.n_head_kv == 0)
    s.n_head_kv = s.n_head;
  if (s.n_embd <= 0 || s.n_layer <= 0 || s.n_head <= 0 || s.n_ff <= 0 || s.n_ctx <= 0)
    return bad (error, "custom shape '%s' needs dim, layers, heads and ffn > 0", spec);
  /* the tensor list is built in memory before the size check: 2^24 layers would take
   * ~20 GB of names and specs first (found by a new-user run) */
  if (s.n_layer > SYNTH_MAX_LAYERS)
    return bad (error, "custom shape '%s': at most " G_STRINGIFY (SYNTH_MAX_LAYERS) " layers", spec);
  if (s.n_head % s.n_head_kv != 0)
    return bad (error, "custom shape '%s': heads must be a multiple of kv", spec);
  if (s.head_dim == 0 && s.n_embd % s.n_head != 0)
    return bad (error, "custom shape '%s': dim must be a multiple of heads (or give head_dim)", spec);
  if ((s.head_dim ? s.head_dim : s.n_embd / s.n_head) % 2 != 0)
    return bad (error, "custom shape '%s': the head size must be even (RoPE)", spec);
  if (s.n_expert > 512 ||
      (s.n_expert > 0 && (s.n_expert_used < 1 || s.n_expert_used > s.n_expert)) ||
      (s.n_expert == 0 && (s.n_expert_used || s.n_ff_exp || s.n_ff_shexp)))
    return bad (error, "custom shape '%s': experts must be at most 512 and experts_used in "
                "[1, experts] (experts_used, ffn_exp and ffn_shexp need experts)", spec);
  if (s.rope_yarn > 0 && s.yarn_orig_ctx == 0)
    s.yarn_orig_ctx = s.n_ctx;
  if (s.n_expert > 0)
    strcpy (s.arch, "qwen3moe");
  *out = s;
  return TRUE;
}

/* ---------------------------------------------------------------- RNG */

static inline uint64_t
splitmix64 (uint64_t *x)
{
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

typedef struct { uint64_t s[4]; } Rng;

static inline uint64_t rotl (uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t
rng_next (Rng *r)
{
  uint64_t *s = r->s, res = rotl (s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t; s[3] = rotl (s[3], 45);
  return res;
}

static void
rng_seed (Rng *r, uint64_t seed)
{
  for (int i = 0; i < 4; i++)
    r->s[i] = splitmix64 (&seed);
}

/* Fill x[n] with N(0, sigma) (Box-Muller, both outputs used). */
static void
fill_normal (Rng *r, float *x, int64_t n, double sigma)
{
  for (int64_t i = 0; i < n; i += 2)
    {
      double u1 = ((rng_next (r) >> 11) + 1) * 0x1.0p-53;  /* (0, 1] */
      double u2 = (rng_next (r) >> 11) * 0x1.0p-53;
      double rad = sqrt (-2.0 * log (u1)) * sigma;
      x[i] = (float) (rad * cos (2 * G_PI * u2));
      if (i + 1 < n)
        x[i + 1] = (float) (rad * sin (2 * G_PI * u2));
    }
}

/* ---------------------------------------------------------------- tensors */

typedef enum { INIT_NORMAL, INIT_ONES, INIT_SHIFTED /* mean + N(0, sigma) */ } Init;

typedef struct {
  char    *name;
  uint32_t n_dims;
  int64_t  ne[4];
  Init     init;
  double   sigma;
  double   mean;     /* INIT_SHIFTED */
} Spec;

static void
add_spec_v (GArray *a, Init init, double sigma, int64_t ne0, int64_t ne1, int64_t ne2,
            const char *fmt, va_list ap)
{
  Spec s = { g_strdup_vprintf (fmt, ap), ne2 > 1 ? 3 : ne1 > 1 ? 2 : 1, { ne0, ne1, ne2, 1 },
             init, sigma };
  g_array_append_val (a, s);
}

/* A 1-D (ne1 = 1) or 2-D tensor of ne0 x ne1 elements. */
static void
add_spec (GArray *a, Init init, double sigma, int64_t ne0, int64_t ne1, const char *fmt, ...)
  G_GNUC_PRINTF (6, 7);
static void
add_spec (GArray *a, Init init, double sigma, int64_t ne0, int64_t ne1, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  add_spec_v (a, init, sigma, ne0, ne1, 1, fmt, ap);
  va_end (ap);
}

/* Gemma's norm weight vector [n]: mean + N(0, 0.1) (the stored 1 + w of its RMSNorm). */
static void
add_gemma_norm (GArray *a, double mean, int64_t n, const char *fmt, ...) G_GNUC_PRINTF (4, 5);
static void
add_gemma_norm (GArray *a, double mean, int64_t n, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  add_spec_v (a, INIT_SHIFTED, 0.1, n, 1, 1, fmt, ap);
  va_end (ap);
  g_array_index (a, Spec, a->len - 1).mean = mean;
}

/* The 3-D tensor of n_expert matrices [n_in] -> [n_out], N(0, 1/sqrt(n_in)). */
static void
add_experts (GArray *a, int64_t n_in, int64_t n_out, int64_t n_expert, const char *fmt, ...)
  G_GNUC_PRINTF (5, 6);
static void
add_experts (GArray *a, int64_t n_in, int64_t n_out, int64_t n_expert, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  add_spec_v (a, INIT_NORMAL, 1.0 / sqrt ((double) n_in), n_in, n_out, n_expert, fmt, ap);
  va_end (ap);
}

/* One chunk of rows of one tensor: generate and quantize. */
typedef struct {
  const Spec *spec;
  uint32_t    type;
  uint64_t    seed;
  uint8_t    *out;
  size_t      row_bytes;
  int64_t     r0, r1;
  const uint8_t *src;       /* HzSynthParams.fast: copy rows of these src_rows rows instead */
  int64_t     src_rows;
} Chunk;

#define CHUNK_ROWS_ELEMS (1 << 20)  /* about 1M elements per chunk (fixed: thread-independent) */

/* Formats whose ggml quantizer needs an importance matrix (the table has no encoder):
 * IQ2_XXS, IQ2_XS and IQ1_S. Their blocks (ggml-common.h block_iq2_xxs / block_iq2_xs /
 * block_iq1_s) start with the float16 super-block scale d, and every decoded value is d
 * times a function of the other bytes; any bytes are a valid block (grid indices, signs
 * and scales use every bit pattern). */
static const uint32_t random_block_types[] = { HZ_TYPE_IQ2_XXS, HZ_TYPE_IQ2_XS, HZ_TYPE_IQ1_S };

gboolean
hz_synth_random_blocks (uint32_t type)
{
  for (gsize i = 0; i < G_N_ELEMENTS (random_block_types); i++)
    if (random_block_types[i] == type)
      return TRUE;
  return FALSE;
}

/* Random blocks for rows r0..r1 of a tensor: bytes from the RNG, then d chosen per block
 * so that the block's decoded values have RMS `sigma` (d = 0 when they are all zero). */
static void
fill_random_blocks (Rng *r, const HzQuantTraits *tr, uint8_t *out, int64_t n_blocks, double sigma)
{
  float *y = g_new (float, tr->block_elems);
  for (int64_t b = 0; b < n_blocks; b++)
    {
      uint8_t *blk = out + (size_t) b * tr->block_bytes;
      for (size_t k = 0; k < tr->block_bytes; k += 8)
        {
          uint64_t v = rng_next (r);
          memcpy (blk + k, &v, MIN (8, tr->block_bytes - k));
        }
      uint16_t d = hz_fp32_to_fp16 (1.0f);
      memcpy (blk, &d, 2);
      tr->to_float (blk, y, tr->block_elems);
      double ss = 0;
      for (uint32_t i = 0; i < tr->block_elems; i++)
        ss += (double) y[i] * y[i];
      const double rms = sqrt (ss / tr->block_elems);
      d = hz_fp32_to_fp16 (rms > 0 ? (float) (sigma / rms) : 0.0f);
      memcpy (blk, &d, 2);
    }
  g_free (y);
}

static void
run_chunk (gpointer data, gpointer user_data)
{
  Chunk *c = data;
  (void) user_data;
  if (c->src)
    {
      Rng r;
      rng_seed (&r, c->seed);
      for (int64_t row = c->r0; row < c->r1; row++)
        memcpy (c->out + (size_t) row * c->row_bytes,
                c->src + (size_t) (rng_next (&r) % (uint64_t) c->src_rows) * c->row_bytes,
                c->row_bytes);
      return;
    }
  if (hz_synth_random_blocks (c->type) && c->spec->init == INIT_NORMAL)
    {
      const HzQuantTraits *tr = hz_quant_traits (c->type);
      Rng r;
      rng_seed (&r, c->seed);
      fill_random_blocks (&r, tr, c->out + (size_t) c->r0 * c->row_bytes,
                          (c->r1 - c->r0) * c->spec->ne[0] / tr->block_elems, c->spec->sigma);
      return;
    }
  const int64_t n = (c->r1 - c->r0) * c->spec->ne[0];
  float *x = g_new (float, n);
  if (c->spec->init == INIT_ONES)
    for (int64_t i = 0; i < n; i++)
      x[i] = 1.0f;
  else
    {
      Rng r;
      rng_seed (&r, c->seed);
      fill_normal (&r, x, n, c->spec->sigma);
      for (int64_t i = 0; c->spec->init == INIT_SHIFTED && i < n; i++)
        x[i] += (float) c->spec->mean;
    }
  hz_quant_quantize_rows (c->type, x, c->out + (size_t) c->r0 * c->row_bytes, c->r1 - c->r0,
                          c->spec->ne[0]);
  g_free (x);
}

static void
spec_clear (gpointer p)
{
  g_free (((Spec *) p)->name);
}

/* GGUF tensor data is aligned to 32 bytes (general.alignment, the writer's default) */
static guint64
synth_pad (guint64 n)
{
  return (n + 31) & ~(guint64) 31;
}

/* The format of tensor `s` (the file type's mix, or p->matrix_type) and its row size in
 * bytes. FALSE with HZ_ENGINE_ERROR_INVALID_ARGUMENT when the quant table cannot encode it. */
static gboolean
tensor_format (const HzSynthParams *p, HzQuantChooser *ch, const Spec *s, uint32_t *type_out,
               size_t *row_out, GError **error)
{
  uint32_t type = hz_quant_chooser_type (ch, s->name, s->n_dims, s->ne, HZ_TYPE_F32, NULL);
  if (p->matrix_type >= 0 && hz_quant_tensor_allows_quantization (s->name, s->n_dims))
    type = (uint32_t) p->matrix_type;
  if (p->expert_type > 0 && s->n_dims == 3 && hz_quant_tensor_allows_quantization (s->name, s->n_dims))
    type = (uint32_t) p->expert_type;
  const HzQuantTraits *tr = hz_quant_traits (type);
  const size_t row = hz_quant_row_size (type, s->ne[0]);
  if (!tr || !row || (!tr->from_float && !(hz_synth_random_blocks (type) && s->init == INIT_NORMAL)))
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "synth: tensor '%s' needs format %s, which the quant table cannot encode",
                   s->name, tr ? tr->name : "?");
      return FALSE;
    }
  *type_out = type;
  *row_out = row;
  return TRUE;
}

gboolean
hz_synth_write (const HzSynthParams *p, const char *out, GError **error)
{
  const HzSynthShape *sh = &p->shape;
  const char *arch = p->arch ? p->arch : sh->arch;
  const gboolean qwen2 = strcmp (arch, "qwen2") == 0 || strcmp (arch, "qwen2moe") == 0;
  const gboolean qwen3 = strcmp (arch, "qwen3") == 0 || strcmp (arch, "qwen3moe") == 0;
  const gboolean gpt_oss = strcmp (arch, "gpt-oss") == 0;
  const gboolean moe_arch = g_str_has_suffix (arch, "moe") || gpt_oss;
  const gboolean gemma2 = strcmp (arch, "gemma2") == 0, gemma3 = strcmp (arch, "gemma3") == 0;
  const gboolean gemma = gemma2 || gemma3;
  if (strcmp (arch, "llama") != 0 && !qwen2 && !qwen3 && !gemma && !gpt_oss)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_UNSUPPORTED_ARCH,
                   "synth: architecture '%s' is not supported (llama, qwen2, qwen3, qwen2moe, "
                   "qwen3moe, gemma2, gemma3, gpt-oss)", arch);
      return FALSE;
    }
  if ((sh->n_expert > 0 && (strcmp (arch, "llama") != 0 && !moe_arch)) ||
      (sh->n_expert == 0 && moe_arch) ||
      (sh->n_expert > 0 && (sh->n_expert_used < 1 || sh->n_expert_used > sh->n_expert)))
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "synth: shape '%s' (%d experts, %d used) does not fit architecture '%s' "
                   "(mixture-of-experts shapes need llama, qwen2moe, qwen3moe or gpt-oss, and "
                   "those need 1 <= experts used <= experts)", sh->name, sh->n_expert,
                   sh->n_expert_used, arch);
      return FALSE;
    }
  const HzFtypeInfo *fi = hz_ftype_info (p->ftype);
  if (!fi)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "synth: unsupported file type %d", (int) p->ftype);
      return FALSE;
    }
  if (!p->vocab_gguf)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "synth: a vocabulary GGUF is required (--vocab FILE.gguf)");
      return FALSE;
    }
  g_autoptr (HzGguf) vg = hz_gguf_open (p->vocab_gguf, error);
  if (!vg)
    {
      if (error && *error && g_str_has_prefix ((*error)->message, p->vocab_gguf))
        g_prefix_error (error, "vocabulary ");   /* the message names the file already */
      else
        g_prefix_error (error, "vocabulary %s: ", p->vocab_gguf);
      return FALSE;
    }
  int64_t ti = hz_gguf_find_key (vg, "tokenizer.ggml.tokens");
  if (ti < 0 || hz_gguf_kv_type (vg, ti) != HZ_GGUF_TYPE_ARRAY || hz_gguf_arr_n (vg, ti) == 0)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_BAD_MODEL,
                   "synth: %s has no tokenizer.ggml.tokens array", p->vocab_gguf);
      return FALSE;
    }
  const int64_t n_vocab = (int64_t) hz_gguf_arr_n (vg, ti);
  const int64_t E = sh->n_embd, hd = sh->head_dim ? sh->head_dim : sh->n_embd / sh->n_head;
  const int64_t nq = sh->n_head * hd, nkv = sh->n_head_kv * hd, F = sh->n_ff;
  const int64_t NE = sh->n_expert;
  /* expert widths as llama-model.cpp derives them when the keys are absent */
  const int64_t FE = NE == 0 ? 0 : sh->n_ff_exp ? sh->n_ff_exp
                                 : moe_arch ? F / sh->n_expert_used : F;
  const int64_t FS = NE > 0 && qwen2 ? (sh->n_ff_shexp ? sh->n_ff_shexp : F) : 0;
  if (NE > 0 && (FE < 1 || (qwen2 && FS < 1)))
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "synth: shape '%s' gives no expert FFN width", sh->name);
      return FALSE;
    }

  /* tensors */
  g_autoptr (GArray) specs = g_array_new (FALSE, FALSE, sizeof (Spec));
  g_array_set_clear_func (specs, spec_clear);
  const double se = 1.0 / sqrt ((double) E);
  add_spec (specs, INIT_NORMAL, se, E, n_vocab, "token_embd.weight");
  if (gemma || gpt_oss)
    add_gemma_norm (specs, 1.0, E, "output_norm.weight");
  else
    add_spec (specs, INIT_ONES, 0, E, 1, "output_norm.weight");
  if (!sh->tied && !gemma)
    add_spec (specs, INIT_NORMAL, se, E, n_vocab, "output.weight");
  for (int l = 0; l < sh->n_layer; l++)
    {
      if (gemma || gpt_oss)
        add_gemma_norm (specs, 1.0, E, "blk.%d.attn_norm.weight", l);
      else
        add_spec (specs, INIT_ONES, 0, E, 1, "blk.%d.attn_norm.weight", l);
      add_spec (specs, INIT_NORMAL, se, E, nq, "blk.%d.attn_q.weight", l);
      add_spec (specs, INIT_NORMAL, se, E, nkv, "blk.%d.attn_k.weight", l);
      add_spec (specs, INIT_NORMAL, se, E, nkv, "blk.%d.attn_v.weight", l);
      add_spec (specs, INIT_NORMAL, 1.0 / sqrt ((double) nq), nq, E, "blk.%d.attn_output.weight", l);
      if (qwen2)
        {
          add_spec (specs, INIT_NORMAL, 0.02, nq, 1, "blk.%d.attn_q.bias", l);
          add_spec (specs, INIT_NORMAL, 0.02, nkv, 1, "blk.%d.attn_k.bias", l);
          add_spec (specs, INIT_NORMAL, 0.02, nkv, 1, "blk.%d.attn_v.bias", l);
        }
      if (gpt_oss)
        {
          add_spec (specs, INIT_NORMAL, 0.1, nq, 1, "blk.%d.attn_q.bias", l);
          add_spec (specs, INIT_NORMAL, 0.1, nkv, 1, "blk.%d.attn_k.bias", l);
          add_spec (specs, INIT_NORMAL, 0.1, nkv, 1, "blk.%d.attn_v.bias", l);
          add_spec (specs, INIT_NORMAL, 0.1, E, 1, "blk.%d.attn_output.bias", l);
          add_spec (specs, INIT_NORMAL, 1.0, sh->n_head, 1, "blk.%d.attn_sinks.weight", l);
        }
      if (qwen3)
        {
          add_spec (specs, INIT_ONES, 0, hd, 1, "blk.%d.attn_q_norm.weight", l);
          add_spec (specs, INIT_ONES, 0, hd, 1, "blk.%d.attn_k_norm.weight", l);
        }
      if (gemma3)
        {
          add_gemma_norm (specs, 1.0, hd, "blk.%d.attn_q_norm.weight", l);
          add_gemma_norm (specs, 1.0, hd, "blk.%d.attn_k_norm.weight", l);
        }
      if (gemma)
        {
          /* the blocks' outputs at RMS ~4, so that the embedding (RMS ~1 after the
           * sqrt(n_embd) scale) does not dominate the residual: with the tied output it
           * would make every greedy step repeat the input token */
          add_gemma_norm (specs, 4.0, E, "blk.%d.post_attention_norm.weight", l);
          add_gemma_norm (specs, 4.0, E, "blk.%d.post_ffw_norm.weight", l);
          add_gemma_norm (specs, 1.0, E, "blk.%d.ffn_norm.weight", l);
        }
      else if (gpt_oss)   /* the FFN's norm goes by this name in gpt-oss */
        add_gemma_norm (specs, 1.0, E, "blk.%d.post_attention_norm.weight", l);
      else
        add_spec (specs, INIT_ONES, 0, E, 1, "blk.%d.ffn_norm.weight", l);
      if (NE > 0)
        {
          add_spec (specs, INIT_NORMAL, se, E, NE, "blk.%d.ffn_gate_inp.weight", l);
          add_experts (specs, E, FE, NE, "blk.%d.ffn_gate_exps.weight", l);
          add_experts (specs, E, FE, NE, "blk.%d.ffn_up_exps.weight", l);
          add_experts (specs, FE, E, NE, "blk.%d.ffn_down_exps.weight", l);
          if (gpt_oss)
            {
              add_spec (specs, INIT_NORMAL, 0.1, NE, 1, "blk.%d.ffn_gate_inp.bias", l);
              add_spec (specs, INIT_NORMAL, 0.1, FE, NE, "blk.%d.ffn_gate_exps.bias", l);
              add_spec (specs, INIT_NORMAL, 0.1, FE, NE, "blk.%d.ffn_up_exps.bias", l);
              add_spec (specs, INIT_NORMAL, 0.1, E, NE, "blk.%d.ffn_down_exps.bias", l);
            }
          if (FS > 0)
            {
              add_spec (specs, INIT_NORMAL, se, E, 1, "blk.%d.ffn_gate_inp_shexp.weight", l);
              add_spec (specs, INIT_NORMAL, se, E, FS, "blk.%d.ffn_gate_shexp.weight", l);
              add_spec (specs, INIT_NORMAL, se, E, FS, "blk.%d.ffn_up_shexp.weight", l);
              add_spec (specs, INIT_NORMAL, 1.0 / sqrt ((double) FS), FS, E,
                        "blk.%d.ffn_down_shexp.weight", l);
            }
          continue;
        }
      add_spec (specs, INIT_NORMAL, se, E, F, "blk.%d.ffn_gate.weight", l);
      add_spec (specs, INIT_NORMAL, se, E, F, "blk.%d.ffn_up.weight", l);
      add_spec (specs, INIT_NORMAL, 1.0 / sqrt ((double) F), F, E, "blk.%d.ffn_down.weight", l);
    }

  /* metadata */
  g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
  char key[128];
#define K(suffix) (g_snprintf (key, sizeof key, "%s.%s", arch, suffix), key)
  hz_gguf_writer_set_str (w, "general.architecture", arch);
  g_autofree char *gname = g_strdup_printf ("synth-%s-%s", sh->name, fi->name);
  hz_gguf_writer_set_str (w, "general.name", gname);
  g_autofree char *desc = g_strdup_printf ("random weights (seed %" G_GUINT64_FORMAT ") with the "
                                           "shape of %s, written by hanzo synth", p->seed, sh->name);
  hz_gguf_writer_set_str (w, "general.description", desc);
  hz_gguf_writer_set_u32 (w, K ("context_length"), (uint32_t) sh->n_ctx);
  hz_gguf_writer_set_u32 (w, K ("embedding_length"), (uint32_t) E);
  hz_gguf_writer_set_u32 (w, K ("block_count"), (uint32_t) sh->n_layer);
  hz_gguf_writer_set_u32 (w, K ("feed_forward_length"), (uint32_t) F);
  hz_gguf_writer_set_u32 (w, K ("attention.head_count"), (uint32_t) sh->n_head);
  hz_gguf_writer_set_u32 (w, K ("attention.head_count_kv"), (uint32_t) sh->n_head_kv);
  hz_gguf_writer_set_f32 (w, K ("rope.freq_base"), sh->rope_base);
  hz_gguf_writer_set_f32 (w, K ("attention.layer_norm_rms_epsilon"), sh->norm_eps);
  hz_gguf_writer_set_u32 (w, K ("rope.dimension_count"), (uint32_t) hd);
  if (hd * sh->n_head != E || gemma || gpt_oss)
    {
      hz_gguf_writer_set_u32 (w, K ("attention.key_length"), (uint32_t) hd);
      hz_gguf_writer_set_u32 (w, K ("attention.value_length"), (uint32_t) hd);
    }
  hz_gguf_writer_set_u32 (w, K ("vocab_size"), (uint32_t) n_vocab);
  if ((gemma || gpt_oss) && sh->n_swa > 0)
    hz_gguf_writer_set_u32 (w, K ("attention.sliding_window"), (uint32_t) sh->n_swa);
  if (gemma3 && sh->rope_base_swa > 0)
    hz_gguf_writer_set_f32 (w, K ("rope.freq_base_swa"), sh->rope_base_swa);
  if (gemma3 && sh->rope_linear > 0)
    {
      hz_gguf_writer_set_str (w, K ("rope.scaling.type"), "linear");
      hz_gguf_writer_set_f32 (w, K ("rope.scaling.factor"), sh->rope_linear);
    }
  if (sh->rope_yarn > 0)
    {
      hz_gguf_writer_set_str (w, K ("rope.scaling.type"), "yarn");
      hz_gguf_writer_set_f32 (w, K ("rope.scaling.factor"), sh->rope_yarn);
      hz_gguf_writer_set_u32 (w, K ("rope.scaling.original_context_length"),
                              (uint32_t) sh->yarn_orig_ctx);
    }
  if (gemma2)
    {
      hz_gguf_writer_set_f32 (w, K ("attn_logit_softcapping"), 50.0f);
      hz_gguf_writer_set_f32 (w, K ("final_logit_softcapping"), 30.0f);
    }
  if (NE > 0)
    {
      hz_gguf_writer_set_u32 (w, K ("expert_count"), (uint32_t) NE);
      hz_gguf_writer_set_u32 (w, K ("expert_used_count"), (uint32_t) sh->n_expert_used);
      if (moe_arch)
        hz_gguf_writer_set_u32 (w, K ("expert_feed_forward_length"), (uint32_t) FE);
      if (FS > 0)
        hz_gguf_writer_set_u32 (w, K ("expert_shared_feed_forward_length"), (uint32_t) FS);
    }
#undef K
  for (int64_t i = 0; i < hz_gguf_n_kv (vg); i++)
    {
      HzGgufStr k = hz_gguf_key (vg, i);
      if (k.len > 10 && memcmp (k.ptr, "tokenizer.", 10) == 0)
        hz_gguf_writer_copy_kv (w, vg, i);
    }
  if (p->chat_template)
    hz_gguf_writer_set_str (w, "tokenizer.chat_template", p->chat_template);
  hz_gguf_writer_set_u32 (w, "general.quantization_version", 2);
  hz_gguf_writer_set_u32 (w, "general.file_type", (uint32_t) p->ftype);

  /* types, in llama.cpp's tensor order */
  const guint n = specs->len;
  g_autofree const char **names = g_new (const char *, n);
  GHashTable *idx = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < n; i++)
    {
      names[i] = g_array_index (specs, Spec, i).name;
      g_hash_table_insert (idx, (gpointer) names[i], GUINT_TO_POINTER (i));
    }
  hz_quantize_sort_names (names, n);
  HzQuantModelInfo info = { arch, sh->n_layer, sh->n_head, sh->n_head_kv, sh->n_expert };
  g_autoptr (HzQuantChooser) ch = hz_quant_chooser_new (p->ftype, p->pure, &info, names, n);
  g_autoptr (GPtrArray) bufs = g_ptr_array_new_with_free_func (g_free);
  guint n_threads = p->n_threads ? p->n_threads : g_get_num_processors ();
  gboolean ok = TRUE;

  /* every tensor's format first: refused formats and a disk too small for the file are
   * reported before minutes of generating weights */
  g_autofree uint32_t *types = g_new (uint32_t, n);
  g_autofree size_t *rows = g_new (size_t, n);
  guint64 data_bytes = 0;
  for (guint i = 0; i < n; i++)
    {
      const Spec *s = &g_array_index (specs, Spec, GPOINTER_TO_UINT (g_hash_table_lookup (idx, names[i])));
      if (!tensor_format (p, ch, s, &types[i], &rows[i], error))
        {
          g_hash_table_unref (idx);
          return FALSE;
        }
      /* saturating: absurd custom shapes (2^24 layers of 2^24 x 2^24) overflow 64 bits */
      const guint64 nrows = (guint64) (s->ne[1] * s->ne[2]);
      const guint64 bytes = nrows > (G_MAXUINT64 - 31) / rows[i] ? G_MAXUINT64
                                                                 : synth_pad (nrows * rows[i]);
      data_bytes = data_bytes > G_MAXUINT64 - bytes ? G_MAXUINT64 : data_bytes + bytes;
    }
  if (!hz_atomic_file_check_space (out, data_bytes, error))
    {
      g_hash_table_unref (idx);
      return FALSE;
    }

  for (guint i = 0; i < n && ok; i++)
    {
      const Spec *s = &g_array_index (specs, Spec, GPOINTER_TO_UINT (g_hash_table_lookup (idx, names[i])));
      const uint32_t type = types[i];
      const size_t row = rows[i];
      const int64_t nrows = s->ne[1] * s->ne[2];
      uint8_t *buf = g_try_malloc ((size_t) nrows * row);
      if (!buf)
        {
          g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_FAILED,
                       "out of memory for tensor '%s'", s->name);
          ok = FALSE;
          break;
        }
      g_ptr_array_add (bufs, buf);
      const int64_t rows_per_chunk = MAX (1, CHUNK_ROWS_ELEMS / s->ne[0]);
      const int64_t n_chunks = (nrows + rows_per_chunk - 1) / rows_per_chunk;
      Chunk *chunks = g_new (Chunk, n_chunks);
      uint64_t name_hash = g_str_hash (s->name) * 0x100000001b3ull ^ p->seed;
      for (int64_t c = 0; c < n_chunks; c++)
        {
          uint64_t sm = name_hash + (uint64_t) c * 0x9e3779b97f4a7c15ull;
          chunks[c] = (Chunk) { s, type, splitmix64 (&sm), buf, row, c * rows_per_chunk,
                                MIN (nrows, (c + 1) * rows_per_chunk), NULL, 0 };
        }
      int64_t c0 = 0;
      if (p->fast && n_chunks > 1)
        {
          /* the first chunk for real, then every other chunk copies its rows */
          run_chunk (&chunks[0], NULL);
          for (int64_t c = 1; c < n_chunks; c++)
            {
              chunks[c].src = buf;
              chunks[c].src_rows = chunks[0].r1;
            }
          c0 = 1;
        }
      if (n_chunks - c0 > 1 && n_threads > 1)
        {
          GThreadPool *pool = g_thread_pool_new (run_chunk, NULL, (gint) n_threads, TRUE, NULL);
          for (int64_t c = c0; c < n_chunks; c++)
            g_thread_pool_push (pool, &chunks[c], NULL);
          g_thread_pool_free (pool, FALSE, TRUE);
        }
      else
        for (int64_t c = c0; c < n_chunks; c++)
          run_chunk (&chunks[c], NULL);
      g_free (chunks);
      ok = hz_gguf_writer_add_tensor (w, s->name, type, s->n_dims, s->ne, buf, (uint64_t) nrows * row,
                                      FALSE, error);
    }
  g_hash_table_unref (idx);
  if (ok)
    ok = hz_gguf_writer_write_file (w, out, error);
  return ok;
}
