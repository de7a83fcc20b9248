/* engine/llm.c — hyperparameters and tensor binding of llama-family models (llm.h).
 *
 * Key and tensor names follow llama.cpp's llama-arch.cpp (LLM_KV_* / LLM_TENSOR_*); the
 * defaults follow llama-model.cpp's load_hparams. Every tensor is checked for presence,
 * format and shape before use, so a bad file gives an error naming the tensor instead of
 * an out-of-bounds read during inference.
 */
#include "llm.h"
#include "ggml-order.h"

#include <math.h>
#include <string.h>
#include "hanzo/engine-error.h"

/* Sanity limits: far above any real model, low enough that products cannot overflow. */
#define HZ_MAX_DIM   (1 << 20)
/* llama.cpp's LLAMA_MAX_EXPERTS */
#define HZ_MAX_EXPERT 512

static const struct { const char *name; HzArch arch; HzRopeMode rope; } arch_table[] = {
  { "llama", HZ_ARCH_LLAMA, HZ_ROPE_NORM },
  { "qwen2", HZ_ARCH_QWEN2, HZ_ROPE_NEOX },
  { "qwen3", HZ_ARCH_QWEN3, HZ_ROPE_NEOX },
  { "qwen2moe", HZ_ARCH_QWEN2MOE, HZ_ROPE_NEOX },
  { "qwen3moe", HZ_ARCH_QWEN3MOE, HZ_ROPE_NEOX },
  { "gemma2", HZ_ARCH_GEMMA2, HZ_ROPE_NEOX },
  { "gemma3", HZ_ARCH_GEMMA3, HZ_ROPE_NEOX },
  { "gpt-oss", HZ_ARCH_GPT_OSS, HZ_ROPE_NEOX },
};

gboolean
hz_arch_from_name (const char *name, HzArch *out)
{
  for (gsize i = 0; name && i < G_N_ELEMENTS (arch_table); i++)
    if (strcmp (name, arch_table[i].name) == 0)
      {
        *out = arch_table[i].arch;
        return TRUE;
      }
  return FALSE;
}

char *
hz_arch_list (void)
{
  GString *s = g_string_new (NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (arch_table); i++)
    g_string_append_printf (s, "%s%s", i ? ", " : "", arch_table[i].name);
  return g_string_free (s, FALSE);
}

const char *
hz_arch_name (HzArch arch)
{
  for (gsize i = 0; i < G_N_ELEMENTS (arch_table); i++)
    if (arch_table[i].arch == arch)
      return arch_table[i].name;
  return "unknown";
}

/* ------------------------------------------------------------------ hparams */

typedef struct {
  const HzGguf *g;
  const char   *arch;
} KeyReader;

/* Read <arch>.<suffix> as a dimension in [lo, HZ_MAX_DIM]. Missing: *out = def, or an error
 * when def < 0 (required key). */
static gboolean
read_dim (const KeyReader *kr, const char *suffix, int32_t def, int32_t lo, int32_t *out,
          GError **error)
{
  g_autofree char *key = g_strdup_printf ("%s.%s", kr->arch, suffix);
  int64_t v;

  if (hz_gguf_find_key (kr->g, key) < 0)
    {
      if (def < 0)
        {
          g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_BAD_MODEL,
                       "model metadata lacks the required key '%s'", key);
          return FALSE;
        }
      *out = def;
      return TRUE;
    }
  if (!hz_gguf_get_i64 (kr->g, key, &v) || v < lo || v > HZ_MAX_DIM)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_BAD_MODEL,
                   "model metadata key '%s' is not an integer in [%d, %d]", key, lo, HZ_MAX_DIM);
      return FALSE;
    }
  *out = (int32_t) v;
  return TRUE;
}

/* Read <arch>.<suffix> as a finite float > 0 (or >= 0 when allow_zero), default def. */
static gboolean
read_float (const KeyReader *kr, const char *suffix, float def, gboolean allow_zero,
            float *out, GError **error)
{
  g_autofree char *key = g_strdup_printf ("%s.%s", kr->arch, suffix);
  float v;

  if (hz_gguf_find_key (kr->g, key) < 0)
    {
      *out = def;
      return TRUE;
    }
  if (!hz_gguf_get_f32 (kr->g, key, &v) || !isfinite (v) || v < 0 || (v == 0 && !allow_zero))
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_BAD_MODEL,
                   "model metadata key '%s' is not a valid positive number", key);
      return FALSE;
    }
  *out = v;
  return TRUE;
}

static gboolean
bad_hparam (GError **error, const char *what)
{
  g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_BAD_MODEL,
               "inconsistent model hyperparameters: %s", what);
  return FALSE;
}

static gboolean
arch_is_moe (HzArch arch)
{
  return arch == HZ_ARCH_QWEN2MOE || arch == HZ_ARCH_QWEN3MOE || arch == HZ_ARCH_GPT_OSS;
}

/* Mixture-of-experts hyperparameters (llama-model.cpp load_hparams / load_tensors):
 * expert_count, expert_used_count, the FFN widths (feed_forward_length is optional for the
 * MoE architectures when expert_feed_forward_length gives the expert width) and whether the
 * selected weights are renormalised. */
static gboolean
load_moe_hparams (HzHparams *hp, const KeyReader *kr, int32_t n_expert, GError **error)
{
  const gboolean moe_arch = arch_is_moe (hp->arch);
  int32_t n_used = 0;

  if (n_expert > HZ_MAX_EXPERT)
    return bad_hparam (error, "expert_count is larger than 512 (llama.cpp's LLAMA_MAX_EXPERTS)");
  if (moe_arch && n_expert == 0)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_BAD_MODEL,
                   "%s model without experts: '%s.expert_count' must be > 0", kr->arch, kr->arch);
      return FALSE;
    }
  if (!read_dim (kr, "expert_used_count", n_expert > 0 ? -1 : 0, 0, &n_used, error))
    return FALSE;
  if (n_expert == 0 && n_used != 0)
    return bad_hparam (error, "expert_used_count is set but expert_count is 0");
  if (n_expert > 0 && (n_used < 1 || n_used > n_expert))
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_BAD_MODEL,
                   "inconsistent model hyperparameters: %s.expert_used_count = %d must be in "
                   "[1, expert_count = %d]", kr->arch, n_used, n_expert);
      return FALSE;
    }
  hp->n_expert = n_expert;
  hp->n_expert_used = n_used;

  /* dense width: required except for MoE architectures, which may give only the expert
   * width (llama.cpp reads feed_forward_length as optional) */
  if (!read_dim (kr, "feed_forward_length", moe_arch ? 0 : -1, moe_arch ? 0 : 1, &hp->n_ff, error))
    return FALSE;
  if (n_expert == 0)
    return TRUE;
  if (moe_arch)
    {
      /* gpt-oss: required (llama.cpp reads it without a default) */
      const int32_t def = hp->arch == HZ_ARCH_GPT_OSS ? -1 : hp->n_ff / n_used;
      if (!read_dim (kr, "expert_feed_forward_length", def, 0, &hp->n_ff_exp, error))
        return FALSE;
    }
  else
    hp->n_ff_exp = hp->n_ff;
  if (hp->n_ff_exp < 1)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_BAD_MODEL,
                   "model metadata gives no expert FFN width ('%s.expert_feed_forward_length' "
                   "or '%s.feed_forward_length' must be > 0)", kr->arch, kr->arch);
      return FALSE;
    }
  if (hp->arch == HZ_ARCH_QWEN2MOE &&
      !read_dim (kr, "expert_shared_feed_forward_length", hp->n_ff, 1, &hp->n_ff_shexp, error))
    return FALSE;
  if (hp->arch == HZ_ARCH_QWEN2MOE && hp->n_ff_shexp < 1)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_BAD_MODEL,
                   "model metadata gives no shared expert width ('%s.expert_shared_feed_forward_length' "
                   "or '%s.feed_forward_length' must be > 0)", kr->arch, kr->arch);
      return FALSE;
    }
  /* gpt-oss: the selected logits are softmaxed, no renormalisation (norm_w false) */
  hp->expert_weights_norm = hp->arch != HZ_ARCH_QWEN2MOE && hp->arch != HZ_ARCH_GPT_OSS;
  return TRUE;
}

/* The window layers from <arch>.attention.sliding_window_pattern: a per-layer bool (or
 * integer) array, else a period N (default `def`): layer il uses the window when
 * il % N < N - 1; N = 0 makes every layer a window layer (llama.cpp set_swa_pattern). */
static gboolean
load_swa_pattern (HzHparams *hp, const KeyReader *kr, int32_t def, GError **error)
{
  g_autofree char *key = g_strdup_printf ("%s.attention.sliding_window_pattern", kr->arch);
  const int64_t ki = hz_gguf_find_key (kr->g, key);
  memset (hp->swa_layers, 0, sizeof hp->swa_layers);
  if (ki >= 0 && hz_gguf_kv_type (kr->g, ki) == HZ_GGUF_TYPE_ARRAY)
    {
      const HzGgufType et = hz_gguf_arr_type (kr->g, ki);
      const gsize esz = et == HZ_GGUF_TYPE_BOOL || et == HZ_GGUF_TYPE_UINT8 || et == HZ_GGUF_TYPE_INT8 ? 1
                        : et == HZ_GGUF_TYPE_UINT32 || et == HZ_GGUF_TYPE_INT32 ? 4 : 0;
      const guint8 *data = hz_gguf_arr_data (kr->g, ki);
      if (esz == 0 || data == NULL || hz_gguf_arr_n (kr->g, ki) < (guint64) hp->n_layer)
        {
          g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_BAD_MODEL,
                       "model metadata key '%s' must be a bool array with one entry per "
                       "layer (%d)", key, hp->n_layer);
          return FALSE;
        }
      for (int il = 0; il < hp->n_layer; il++)
        {
          gboolean on = FALSE;
          for (gsize b = 0; b < esz; b++)
            on |= data[(gsize) il * esz + b] != 0;
          if (on)
            hp->swa_layers[il / 64] |= (uint64_t) 1 << (il % 64);
        }
      return TRUE;
    }
  int32_t period = def;
  if (!read_dim (kr, "attention.sliding_window_pattern", def, 0, &period, error))
    return FALSE;
  for (int il = 0; il < hp->n_layer; il++)
    if (period == 0 || il % period < period - 1)
      hp->swa_layers[il / 64] |= (uint64_t) 1 << (il % 64);
  return TRUE;
}

/* gemma2 / gemma3 (llama.cpp src/models/gemma2.cpp, gemma3.cpp load_arch_hparams): the
 * sliding window and its layers, the window layers' RoPE, soft-capping, the query scale. */
static gboolean
load_gemma_hparams (HzHparams *hp, const KeyReader *kr, GError **error)
{
  const gboolean g2 = hp->arch == HZ_ARCH_GEMMA2;
  hp->gemma = TRUE;
  if (!read_dim (kr, "attention.sliding_window", g2 ? 4096 : 0, 0, &hp->n_swa, error))
    return FALSE;
  if (hp->n_swa > 0 && !load_swa_pattern (hp, kr, g2 ? 2 : 6, error))
    return FALSE;
  /* gemma2: the window layers share the global RoPE unless freq_base_swa says; gemma3: their
   * own base (default 10000) and no scaling */
  if (!g2)
    {
      hp->rope_freq_base_swa = 10000.0f;
      hp->rope_freq_scale_swa = 1.0f;
    }
  if (!read_float (kr, "rope.freq_base_swa", hp->rope_freq_base_swa, FALSE,
                   &hp->rope_freq_base_swa, error) ||
      !read_float (kr, "attn_logit_softcapping", g2 ? 50.0f : 0.0f, TRUE, &hp->attn_softcap, error) ||
      !read_float (kr, "final_logit_softcapping", g2 ? 30.0f : 0.0f, TRUE, &hp->final_softcap, error))
    return FALSE;
  if (!g2)
    hp->attn_softcap = 0;   /* gemma3 has none (llama.cpp does not read the key) */
  if (g2 && (hp->attn_softcap == 0 || hp->final_softcap == 0))
    return bad_hparam (error, "gemma2's soft-capping values must be positive");
  /* Gemma's query_pre_attn_scalar: n_embd / n_head for the 27B models, which llama.cpp
   * recognises by their layer count, else the head size */
  const gboolean is_27b = hp->n_layer == (g2 ? 46 : 62);
  hp->attn_scale = is_27b ? 1.0f / sqrtf ((float) (hp->n_embd / hp->n_head))
                          : 1.0f / sqrtf ((float) hp->head_dim_k);
  return TRUE;
}

/* Read <arch>.<suffix> when the architecture requires it: a missing key is an error naming
 * it (llama.cpp's get_key without a default). */
static gboolean
require_key (const KeyReader *kr, const char *suffix, GError **error)
{
  g_autofree char *key = g_strdup_printf ("%s.%s", kr->arch, suffix);
  if (hz_gguf_find_key (kr->g, key) >= 0)
    return TRUE;
  g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_BAD_MODEL,
               "model metadata lacks the required key '%s'", key);
  return FALSE;
}

/* gpt-oss (llama.cpp src/models/openai-moe.cpp load_arch_hparams): the RMS epsilon and the
 * sliding window are required, the window layers follow sliding_window_pattern (default
 * period 2: even layers), their RoPE base is rope.freq_base_swa (default the global one)
 * with the global scaling; the experts' clamped SwiGLU constants of llama-graph.cpp
 * (LLM_FFN_SWIGLU_OAI_MOE: alpha 1.702, limit 7). Heads are n_rot wide (llama.cpp sizes
 * q/k/v by n_rot), so key_length, value_length and rope.dimension_count must agree. */
static gboolean
load_gpt_oss_hparams (HzHparams *hp, const KeyReader *kr, GError **error)
{
  if (!require_key (kr, "attention.layer_norm_rms_epsilon", error) ||
      !require_key (kr, "attention.sliding_window", error) ||
      !read_dim (kr, "attention.sliding_window", 0, 0, &hp->n_swa, error))
    return FALSE;
  if (hp->n_swa > 0 && !load_swa_pattern (hp, kr, 2, error))
    return FALSE;
  if (!read_float (kr, "rope.freq_base_swa", hp->rope_freq_base, FALSE,
                   &hp->rope_freq_base_swa, error))
    return FALSE;
  if (hp->head_dim_k != hp->n_rot || hp->head_dim_v != hp->n_rot)
    return bad_hparam (error, "gpt-oss needs attention.key_length = attention.value_length = "
                       "rope.dimension_count");
  hp->moe_softmax_selected = TRUE;
  hp->swiglu_alpha = 1.702f;
  hp->swiglu_limit = 7.0f;
  hp->ffn_all_rows = TRUE;
  return TRUE;
}

gboolean
hz_hparams_load (HzHparams *hp, const HzGguf *g, HzArch arch, GError **error)
{
  KeyReader kr = { g, hz_arch_name (arch) };
  int32_t n_expert = 0;

  memset (hp, 0, sizeof *hp);
  hp->arch = arch;
  for (gsize i = 0; i < G_N_ELEMENTS (arch_table); i++)
    if (arch_table[i].arch == arch)
      hp->rope_mode = arch_table[i].rope;

  if (!read_dim (&kr, "expert_count", 0, 0, &n_expert, error) ||
      !load_moe_hparams (hp, &kr, n_expert, error))
    return FALSE;

  if (!read_dim (&kr, "embedding_length", -1, 1, &hp->n_embd, error) ||
      !read_dim (&kr, "block_count", -1, 1, &hp->n_layer, error) ||
      !read_dim (&kr, "attention.head_count", -1, 1, &hp->n_head, error) ||
      !read_dim (&kr, "attention.head_count_kv", hp->n_head, 1, &hp->n_head_kv, error) ||
      !read_dim (&kr, "context_length", 2048, 1, &hp->n_ctx_train, error))
    return FALSE;
  if (hp->n_layer > HZ_MAX_LAYER)
    return bad_hparam (error, "block_count is absurdly large");
  if (hp->n_head % hp->n_head_kv != 0)
    return bad_hparam (error, "attention.head_count is not a multiple of head_count_kv");
  g_autofree char *key_length_key = g_strdup_printf ("%s.attention.key_length", kr.arch);
  if (hp->n_embd % hp->n_head != 0 && hz_gguf_find_key (g, key_length_key) < 0)
    return bad_hparam (error, "embedding_length is not a multiple of head_count");
  if (!read_dim (&kr, "attention.key_length", hp->n_embd / hp->n_head, 1, &hp->head_dim_k, error) ||
      !read_dim (&kr, "attention.value_length", hp->head_dim_k, 1, &hp->head_dim_v, error) ||
      !read_dim (&kr, "rope.dimension_count", hp->head_dim_k, 2, &hp->n_rot, error))
    return FALSE;
  if ((int64_t) hp->n_head * MAX (hp->head_dim_k, hp->head_dim_v) > HZ_MAX_DIM)
    return bad_hparam (error, "head_count x key_length is absurdly large");
  if (hp->n_rot > hp->head_dim_k || hp->n_rot % 2 != 0)
    return bad_hparam (error, "rope.dimension_count must be even and at most the head size");

  if (!read_float (&kr, "attention.layer_norm_rms_epsilon", 1e-5f, TRUE, &hp->norm_eps, error) ||
      !read_float (&kr, "rope.freq_base", 10000.0f, FALSE, &hp->rope_freq_base, error))
    return FALSE;

  /* RoPE scaling (llama.cpp: rope.scale_linear, then rope.scaling.factor; type by name) */
  float factor = 0;
  if (!read_float (&kr, "rope.scale_linear", 0.0f, TRUE, &factor, error))
    return FALSE;
  if (factor == 0 && !read_float (&kr, "rope.scaling.factor", 0.0f, TRUE, &factor, error))
    return FALSE;
  g_autofree char *type_key = g_strdup_printf ("%s.rope.scaling.type", kr.arch);
  g_autofree char *type = hz_gguf_get_str (g, type_key);
  hp->rope_scaling = HZ_ROPE_SCALING_NONE;
  if (type == NULL)
    hp->rope_scaling = factor > 0 && factor != 1 ? HZ_ROPE_SCALING_LINEAR : HZ_ROPE_SCALING_NONE;
  else if (strcmp (type, "linear") == 0)
    hp->rope_scaling = HZ_ROPE_SCALING_LINEAR;
  else if (strcmp (type, "yarn") == 0)
    hp->rope_scaling = HZ_ROPE_SCALING_YARN;
  else if (strcmp (type, "llama3") == 0)
    hp->rope_scaling = HZ_ROPE_SCALING_LLAMA3;
  else if (strcmp (type, "none") != 0)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_BAD_MODEL,
                   "unsupported RoPE scaling type '%s' in '%s'", type, type_key);
      return FALSE;
    }
  /* llama3 scaling acts through frequency factors, not freq_scale */
  hp->rope_freq_scale = (factor > 0 && hp->rope_scaling != HZ_ROPE_SCALING_LLAMA3 &&
                         hp->rope_scaling != HZ_ROPE_SCALING_NONE) ? 1.0f / factor : 1.0f;
  if (!read_dim (&kr, "rope.scaling.original_context_length", hp->n_ctx_train, 1,
                 &hp->rope_n_ctx_orig, error) ||
      !read_float (&kr, "rope.scaling.attn_factor", 1.0f, FALSE, &hp->yarn_attn_factor, error))
    return FALSE;
  hp->yarn_ext_factor = hp->rope_scaling == HZ_ROPE_SCALING_YARN ? 1.0f : 0.0f;
  if (hp->yarn_ext_factor != 0.0f)
    {
      /* llama.cpp (llama-context.cpp) sets YaRN's attention factor to get_mscale(factor) and
       * cancels ggml's own 1 + 0.1 ln(factor) (rope_yarn multiplies it back), in float */
      const float f = 1.0f / hp->rope_freq_scale;
      const float rope_attn_factor = hp->yarn_attn_factor;
      float af = f <= 1.0f ? 1.0f : 0.1f * logf (f) + 1.0f;
      af *= 1.0f / (1.0f + 0.1f * logf (f));
      hp->yarn_attn_factor = af * rope_attn_factor;
    }
  hp->yarn_beta_fast = 32.0f;
  hp->yarn_beta_slow = 1.0f;
  hp->rope_freq_base_swa = hp->rope_freq_base;
  hp->rope_freq_scale_swa = hp->rope_freq_scale;
  if (arch == HZ_ARCH_GEMMA2 || arch == HZ_ARCH_GEMMA3)
    return load_gemma_hparams (hp, &kr, error);
  if (arch == HZ_ARCH_GPT_OSS)
    return load_gpt_oss_hparams (hp, &kr, error);
  return TRUE;
}

/* ------------------------------------------------------------------ tensors */

typedef struct {
  const HzGguf *g;
  GHashTable   *tensors;      /* name -> HzGgufTensor* replacing g's tensors, or NULL */
  HzLlm        *llm;
  GHashTable   *type_bytes;   /* matrix type -> bytes, for type_name */
} Binder;

static const HzGgufTensor *
lookup_tensor (const Binder *b, const char *name)
{
  return b->tensors ? g_hash_table_lookup (b->tensors, name) : hz_gguf_find_tensor (b->g, name);
}

static char *
shape_str (const int64_t *ne, int n)
{
  GString *s = g_string_new ("[");
  for (int i = 0; i < n; i++)
    g_string_append_printf (s, "%s%" G_GINT64_FORMAT, i ? ", " : "", ne[i]);
  g_string_append_c (s, ']');
  return g_string_free (s, FALSE);
}

/* Find `name` and check it has exactly the dims `want` (n_want of them; the rest must be
 * 1). Returns NULL without error when absent and optional. */
static const HzGgufTensor *
find_tensor (Binder *b, const char *name, const int64_t *want, int n_want, gboolean required,
             GError **error)
{
  const HzGgufTensor *t = lookup_tensor (b, name);
  if (t == NULL)
    {
      if (required)
        g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_BAD_MODEL,
                     "model lacks the tensor '%s'", name);
      return NULL;
    }
  gboolean ok = TRUE;
  for (int i = 0; i < 4; i++)
    ok = ok && t->ne[i] == (i < n_want ? want[i] : 1);
  if (!ok)
    {
      g_autofree char *exp = shape_str (want, n_want);
      g_autofree char *got = shape_str (t->ne, MAX ((int) t->n_dims, 1));
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_BAD_MODEL,
                   "tensor '%s' has shape %s, expected %s", name, got, exp);
      return NULL;
    }
  if (hz_quant_traits (t->type) == NULL || hz_quant_row_size (t->type, t->ne[0]) == 0)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_BAD_MODEL,
                   "tensor '%s' has format %u, unknown or not a whole number of blocks per "
                   "row of %" G_GINT64_FORMAT, name, t->type, t->ne[0]);
      return NULL;
    }
  return t;
}

/* Bind a matrix [n_in] -> [n_out], or with n_expert > 0 the first of the n_expert matrices
 * of a 3-D tensor [n_in, n_out, n_expert]. Also checks that the format can be multiplied by
 * the CPU backend (vec_dot present, activation format encodable, rows whole blocks of it). */
static gboolean
bind_matrix_nd (Binder *b, HzMatrix *m, const char *name, int64_t n_in, int64_t n_out,
                int64_t n_expert, gboolean required, GError **error)
{
  const int64_t want[3] = { n_in, n_out, n_expert };
  GError *local = NULL;
  const HzGgufTensor *t = find_tensor (b, name, want, n_expert > 0 ? 3 : 2, required, &local);

  memset (m, 0, sizeof *m);
  if (t == NULL)
    {
      if (local)
        g_propagate_error (error, local);
      return local == NULL;
    }
  const HzQuantTraits *qt = hz_quant_traits (t->type);
  const HzQuantTraits *vt = hz_quant_traits (qt->vec_dot_type);
  if (qt->vec_dot == NULL || qt->to_float == NULL || vt == NULL || vt->from_float == NULL ||
      n_in % vt->block_elems != 0)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_BAD_MODEL,
                   "tensor '%s' is stored as %s, which the CPU backend cannot multiply "
                   "(no dot product for rows of %" G_GINT64_FORMAT ")", name, qt->name, n_in);
      return FALSE;
    }
  char *owned_name = g_strdup (name);
  g_ptr_array_add (b->llm->owned, owned_name);
  m->name = owned_name;
  m->data = t->data;
  m->qt = qt;
  m->n_in = n_in;
  m->n_out = n_out;
  m->row_bytes = hz_quant_row_size (t->type, n_in);
  const HzGgmlDots dots = hz_ggml_order_dots (t->type, n_out, n_in);
  m->dot_one = dots.one;
  m->dot_batch = dots.batch;
  m->dot_one_x4 = dots.one_x4;
  guint64 *acc = g_hash_table_lookup (b->type_bytes, GUINT_TO_POINTER (t->type + 1));
  if (acc == NULL)
    {
      acc = g_new0 (guint64, 1);
      g_hash_table_insert (b->type_bytes, GUINT_TO_POINTER (t->type + 1), acc);
    }
  *acc += t->n_bytes;
  return TRUE;
}

static gboolean
bind_matrix (Binder *b, HzMatrix *m, const char *name, int64_t n_in, int64_t n_out,
             gboolean required, GError **error)
{
  return bind_matrix_nd (b, m, name, n_in, n_out, 0, required, error);
}

/* Bind the required 3-D expert tensor `name` [n_in, n_out, n_expert]. */
static gboolean
bind_experts (Binder *b, HzExpertMatrix *x, const char *name, int64_t n_in, int64_t n_out,
              int32_t n_expert, GError **error)
{
  memset (x, 0, sizeof *x);
  if (!bind_matrix_nd (b, &x->mat, name, n_in, n_out, n_expert, TRUE, error))
    return FALSE;
  x->expert_bytes = (size_t) n_out * x->mat.row_bytes;
  x->n_expert = n_expert;
  return TRUE;
}

/* Bind a float array of exactly the dims `ne` (n of them), stored F32 (converted into an
 * owned buffer otherwise): vectors, and the experts' bias tables [n_out, n_expert] of
 * gpt-oss. */
static gboolean
bind_floats_nd (Binder *b, const float **out, const char *name, const int64_t *ne, int n,
                gboolean required, GError **error)
{
  GError *local = NULL;
  const HzGgufTensor *t = find_tensor (b, name, ne, n, required, &local);
  int64_t count = 1;
  for (int i = 0; i < n; i++)
    count *= ne[i];
  *out = NULL;
  if (t == NULL)
    {
      if (local)
        g_propagate_error (error, local);
      return local == NULL;
    }
  if (t->type == HZ_TYPE_F32 && ((guintptr) t->data % sizeof (float)) == 0)
    {
      *out = t->data;
      return TRUE;
    }
  const HzQuantTraits *qt = hz_quant_traits (t->type);
  if (qt->to_float == NULL)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_BAD_MODEL,
                   "tensor '%s' is stored as %s, which cannot be decoded", name, qt->name);
      return FALSE;
    }
  float *buf = g_new (float, count);
  qt->to_float (t->data, buf, count);
  g_ptr_array_add (b->llm->owned, buf);
  *out = buf;
  return TRUE;
}

/* Bind a float vector [n]; non-F32 storage is converted into an owned buffer. */
static gboolean
bind_vector (Binder *b, const float **out, const char *name, int64_t n, gboolean required,
             GError **error)
{
  return bind_floats_nd (b, out, name, &n, 1, required, error);
}

/* gpt-oss's own tensors (llama.cpp openai-moe.cpp load_arch_tensors): the output bias
 * (required), the sinks, the router's and experts' biases. */
static gboolean
bind_gpt_oss (Binder *b, HzLayer *L, int il, GError **error)
{
  const HzHparams *hp = &b->llm->hp;
  const int64_t ne = hp->n_expert;
  const int64_t heads[1] = { hp->n_head }, gi[1] = { ne };
  const int64_t fe[2] = { hp->n_ff_exp, ne }, de[2] = { hp->n_embd, ne }, d[1] = { hp->n_embd };
  char n[96];
#define NAME(suffix) (g_snprintf (n, sizeof n, "blk.%d.%s", il, suffix), n)
  return bind_floats_nd (b, &L->bo, NAME ("attn_output.bias"), d, 1, TRUE, error) &&
         bind_floats_nd (b, &L->attn_sinks, NAME ("attn_sinks.weight"), heads, 1, TRUE, error) &&
         bind_floats_nd (b, &L->ffn_gate_inp_b, NAME ("ffn_gate_inp.bias"), gi, 1, TRUE, error) &&
         bind_floats_nd (b, &L->ffn_gate_exps_b, NAME ("ffn_gate_exps.bias"), fe, 2, TRUE, error) &&
         bind_floats_nd (b, &L->ffn_up_exps_b, NAME ("ffn_up_exps.bias"), fe, 2, TRUE, error) &&
         bind_floats_nd (b, &L->ffn_down_exps_b, NAME ("ffn_down_exps.bias"), de, 2, TRUE, error);
#undef NAME
}

/* Llama 3.1 frequency divisors (Meta's apply_scaling in the reference model code), used
 * when the metadata asks for llama3 scaling but the file carries no rope_freqs.weight. */
static float *
llama3_freq_factors (const HzHparams *hp, float factor)
{
  const float low_freq_factor = 1.0f, high_freq_factor = 4.0f;
  const float old_ctx = (float) hp->rope_n_ctx_orig;
  const float low_wavelen = old_ctx / low_freq_factor;
  const float high_wavelen = old_ctx / high_freq_factor;
  int n = hp->n_rot / 2;
  float *ff = g_new (float, n);

  for (int i = 0; i < n; i++)
    {
      float freq = powf (hp->rope_freq_base, -2.0f * i / hp->n_rot);
      float wavelen = 2.0f * (float) G_PI / freq;
      if (wavelen < high_wavelen)
        ff[i] = 1.0f;
      else if (wavelen > low_wavelen)
        ff[i] = factor;
      else
        {
          float smooth = (old_ctx / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor);
          ff[i] = 1.0f / ((1.0f - smooth) / factor + smooth);
        }
    }
  return ff;
}

static gboolean
bind_layer (Binder *b, int il, GError **error)
{
  const HzHparams *hp = &b->llm->hp;
  HzLayer *L = &b->llm->layers[il];
  const int64_t d = hp->n_embd, dq = (int64_t) hp->n_head * hp->head_dim_k,
                dk = (int64_t) hp->n_head_kv * hp->head_dim_k,
                dv = (int64_t) hp->n_head_kv * hp->head_dim_v,
                dov = (int64_t) hp->n_head * hp->head_dim_v, ff = hp->n_ff;
  const gboolean qkv_bias = hp->arch == HZ_ARCH_QWEN2 || hp->arch == HZ_ARCH_QWEN2MOE;
  const gboolean qk_norm = hp->arch == HZ_ARCH_QWEN3 || hp->arch == HZ_ARCH_QWEN3MOE ||
                           hp->arch == HZ_ARCH_GEMMA3;
  const int64_t fe = hp->n_ff_exp, fs = hp->n_ff_shexp;
  const int32_t ne = hp->n_expert;
  const gboolean gpt_oss = hp->arch == HZ_ARCH_GPT_OSS;
  char n[96];

#define NAME(suffix) (g_snprintf (n, sizeof n, "blk.%d.%s", il, suffix), n)
  if (!(bind_vector (b, &L->attn_norm, NAME ("attn_norm.weight"), d, TRUE, error) &&
         bind_matrix (b, &L->wq, NAME ("attn_q.weight"), d, dq, TRUE, error) &&
         bind_matrix (b, &L->wk, NAME ("attn_k.weight"), d, dk, TRUE, error) &&
         bind_matrix (b, &L->wv, NAME ("attn_v.weight"), d, dv, TRUE, error) &&
         bind_matrix (b, &L->wo, NAME ("attn_output.weight"), dov, d, TRUE, error) &&
         bind_vector (b, &L->bq, NAME ("attn_q.bias"), dq, qkv_bias, error) &&
         bind_vector (b, &L->bk, NAME ("attn_k.bias"), dk, qkv_bias, error) &&
         bind_vector (b, &L->bv, NAME ("attn_v.bias"), dv, qkv_bias, error) &&
         bind_vector (b, &L->bo, NAME ("attn_output.bias"), d, FALSE, error) &&
         bind_vector (b, &L->q_norm, NAME ("attn_q_norm.weight"), hp->head_dim_k, qk_norm, error) &&
         bind_vector (b, &L->k_norm, NAME ("attn_k_norm.weight"), hp->head_dim_k, qk_norm, error) &&
         /* gpt-oss: the FFN's norm is named post_attention_norm */
         bind_vector (b, &L->ffn_norm, NAME (gpt_oss ? "post_attention_norm.weight" : "ffn_norm.weight"),
                      d, TRUE, error) &&
         (!gpt_oss || bind_gpt_oss (b, L, il, error)) &&
         /* Gemma's post-norms (gpt-oss's post_attention_norm is its FFN norm, above) */
         (!hp->gemma ||
          (bind_vector (b, &L->attn_post_norm, NAME ("post_attention_norm.weight"), d, TRUE, error) &&
           bind_vector (b, &L->ffn_post_norm, NAME ("post_ffw_norm.weight"), d, TRUE, error)))))
    return FALSE;
  if (ne > 0)
    return bind_matrix (b, &L->ffn_gate_inp, NAME ("ffn_gate_inp.weight"), d, ne, TRUE, error) &&
             bind_experts (b, &L->ffn_gate_exps, NAME ("ffn_gate_exps.weight"), d, fe, ne, error) &&
             bind_experts (b, &L->ffn_up_exps, NAME ("ffn_up_exps.weight"), d, fe, ne, error) &&
             bind_experts (b, &L->ffn_down_exps, NAME ("ffn_down_exps.weight"), fe, d, ne, error) &&
             (fs == 0 ||
              (bind_vector (b, &L->ffn_gate_inp_shexp, NAME ("ffn_gate_inp_shexp.weight"), d, TRUE, error) &&
               bind_matrix (b, &L->ffn_gate_shexp, NAME ("ffn_gate_shexp.weight"), d, fs, TRUE, error) &&
               bind_matrix (b, &L->ffn_up_shexp, NAME ("ffn_up_shexp.weight"), d, fs, TRUE, error) &&
               bind_matrix (b, &L->ffn_down_shexp, NAME ("ffn_down_shexp.weight"), fs, d, TRUE, error)));
  else
    return bind_matrix (b, &L->w_gate, NAME ("ffn_gate.weight"), d, ff, TRUE, error) &&
             bind_matrix (b, &L->w_up, NAME ("ffn_up.weight"), d, ff, TRUE, error) &&
             bind_matrix (b, &L->w_down, NAME ("ffn_down.weight"), ff, d, TRUE, error);
#undef NAME
}

HzLlm *
hz_llm_load (const HzGguf *g, GError **error)
{
  return hz_llm_load_tensors (g, NULL, error);
}

static void
add_totals (HzLlm *llm, const HzGgufTensor *t)
{
  llm->n_params += (uint64_t) (t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3]);
  llm->weight_bytes += t->n_bytes;
}

/* general.architecture → HzArch; *arch_str (nullable) receives the string (g_free). */
static gboolean
arch_of (const HzGguf *g, HzArch *arch, char **arch_str, GError **error)
{
  g_autofree char *s = hz_gguf_get_str (g, "general.architecture");
  if (s == NULL)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_BAD_MODEL,
                   "model metadata lacks 'general.architecture'");
      return FALSE;
    }
  if (!hz_arch_from_name (s, arch))
    {
      g_autofree char *names = hz_arch_list ();
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_UNSUPPORTED_ARCH,
                   "unsupported model architecture '%s' (supported: %s)", s, names);
      return FALSE;
    }
  if (arch_str)
    *arch_str = g_steal_pointer (&s);
  return TRUE;
}

gboolean
hz_llm_check_tokens (const HzLlm *llm, const int32_t *tokens, gsize n, GError **error)
{
  for (gsize t = 0; t < n; t++)
    if (tokens[t] < 0 || tokens[t] >= llm->hp.n_vocab)
      {
        g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                     "token id %d is outside the vocabulary [0, %d)", tokens[t], llm->hp.n_vocab);
        return FALSE;
      }
  return TRUE;
}

gboolean
hz_hparams_read (HzHparams *hp, const HzGguf *g, GError **error)
{
  HzArch arch;
  return arch_of (g, &arch, NULL, error) && hz_hparams_load (hp, g, arch, error);
}

gboolean
hz_llm_check_metadata (const HzGguf *g, GError **error)
{
  HzHparams hp;
  return hz_hparams_read (&hp, g, error);
}

uint64_t
hz_hparams_kv_bytes (const HzHparams *hp, int64_t n_ctx, guint elem_bytes)
{
  const uint64_t per_cell = (uint64_t) hp->n_head_kv * (hp->head_dim_k + hp->head_dim_v) * elem_bytes;
  uint64_t cells = 0;
  for (int il = 0; il < hp->n_layer; il++)
    cells += (uint64_t) hz_layer_kv_cells (hp, il, n_ctx);
  return cells * per_cell;
}

HzLlm *
hz_llm_load_tensors (const HzGguf *g, GHashTable *tensors, GError **error)
{
  g_autofree char *arch_str = NULL;
  HzArch arch;

  if (!arch_of (g, &arch, &arch_str, error))
    return NULL;

  g_autoptr (HzLlm) llm = g_new0 (HzLlm, 1);
  llm->owned = g_ptr_array_new_with_free_func (g_free);
  if (!hz_hparams_load (&llm->hp, g, arch, error))
    return NULL;
  HzHparams *hp = &llm->hp;

  g_autoptr (GHashTable) type_bytes = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  Binder b = { g, tensors, llm, type_bytes };

  /* vocabulary size comes from the embedding matrix */
  const HzGgufTensor *te = lookup_tensor (&b, "token_embd.weight");
  if (te == NULL)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_BAD_MODEL,
                   "model lacks the tensor 'token_embd.weight'");
      return NULL;
    }
  if (te->ne[1] < 1 || te->ne[1] > INT32_MAX)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_BAD_MODEL,
                   "tensor 'token_embd.weight' has an invalid vocabulary size");
      return NULL;
    }
  hp->n_vocab = (int32_t) te->ne[1];

  if (!bind_matrix (&b, &llm->tok_embd, "token_embd.weight", hp->n_embd, hp->n_vocab, TRUE, error) ||
      !bind_vector (&b, &llm->output_norm, "output_norm.weight", hp->n_embd, TRUE, error) ||
      /* gemma2 always reuses token_embd (llama.cpp ignores an output.weight) */
      (hp->arch != HZ_ARCH_GEMMA2 &&
       !bind_matrix (&b, &llm->output, "output.weight", hp->n_embd, hp->n_vocab,
                     hp->arch == HZ_ARCH_GPT_OSS /* llama.cpp: required */, error)) ||
      !bind_vector (&b, &llm->rope_freqs, "rope_freqs.weight", hp->n_rot / 2, FALSE, error))
    return NULL;
  if (llm->output.data == NULL)
    {
      llm->output = llm->tok_embd;
      llm->tied_output = TRUE;
    }
  if (llm->rope_freqs == NULL && hp->rope_scaling == HZ_ROPE_SCALING_LLAMA3)
    {
      g_autofree char *key = g_strdup_printf ("%s.rope.scaling.factor", arch_str);
      float factor = 8.0f;
      hz_gguf_get_f32 (g, key, &factor);
      float *ff = llama3_freq_factors (hp, factor > 0 ? factor : 8.0f);
      g_ptr_array_add (llm->owned, ff);
      llm->rope_freqs = ff;
    }

  llm->layers = g_new0 (HzLayer, hp->n_layer);
  for (int il = 0; il < hp->n_layer; il++)
    if (!bind_layer (&b, il, error))
      return NULL;

  /* totals over every tensor of the model, and the dominant matrix format */
  if (tensors)
    {
      GHashTableIter ti;
      gpointer tv;
      g_hash_table_iter_init (&ti, tensors);
      while (g_hash_table_iter_next (&ti, NULL, &tv))
        add_totals (llm, tv);
    }
  else
    for (int64_t i = 0; i < hz_gguf_n_tensors (g); i++)
      add_totals (llm, hz_gguf_tensor (g, i));
  GHashTableIter it;
  gpointer key, value;
  guint64 best = 0;
  llm->type_name = "?";
  g_hash_table_iter_init (&it, type_bytes);
  while (g_hash_table_iter_next (&it, &key, &value))
    if (*(guint64 *) value > best)
      {
        const HzQuantTraits *qt = hz_quant_traits (GPOINTER_TO_UINT (key) - 1);
        char *up = g_ascii_strup (qt->name, -1);
        g_ptr_array_add (llm->owned, up);
        llm->type_name = up;
        best = *(guint64 *) value;
      }
  return g_steal_pointer (&llm);
}

void
hz_llm_free (HzLlm *llm)
{
  if (llm == NULL)
    return;
  g_free (llm->layers);
  if (llm->owned)
    g_ptr_array_unref (llm->owned);
  g_free (llm);
}
