/* engine/quantize.c — model-level quantization (see quantize.h).
 *
 * Reference for the method (read, not copied): llama.cpp src/llama-quant.cpp at b4748
 * (llama_tensor_get_type, llama_model_quantize_impl) and llama-model-loader's tensor order.
 * Hugging Face folders are read by hf-import.c.
 */
#include "quantize.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hf-import.h"
#include "llm.h"
#include "quant.h"
#include "safetensors.h"

/* ------------------------------------------------------------ file types */

static const HzFtypeInfo ftypes[] = {
  { "F32",    HZ_FTYPE_ALL_F32, HZ_TYPE_F32,    "all tensors float32" },
  { "F16",    HZ_FTYPE_F16,     HZ_TYPE_F16,    "matrices float16" },
  { "BF16",   HZ_FTYPE_BF16,    HZ_TYPE_BF16,   "matrices bfloat16" },
  { "Q4_0",   HZ_FTYPE_Q4_0,    HZ_TYPE_Q4_0,   "4.5 bpw, 32-element blocks" },
  { "Q4_1",   HZ_FTYPE_Q4_1,    HZ_TYPE_Q4_1,   "5.0 bpw, with minimum" },
  { "Q5_0",   HZ_FTYPE_Q5_0,    HZ_TYPE_Q5_0,   "5.5 bpw" },
  { "Q5_1",   HZ_FTYPE_Q5_1,    HZ_TYPE_Q5_1,   "6.0 bpw, with minimum" },
  { "Q8_0",   HZ_FTYPE_Q8_0,    HZ_TYPE_Q8_0,   "8.5 bpw" },
  { "Q2_K",   HZ_FTYPE_Q2_K,    HZ_TYPE_Q2_K,   "K-quant mix around Q2_K" },
  { "Q3_K_S", HZ_FTYPE_Q3_K_S,  HZ_TYPE_Q3_K,   "K-quant mix, Q3_K everywhere" },
  { "Q3_K_M", HZ_FTYPE_Q3_K_M,  HZ_TYPE_Q3_K,   "K-quant mix, Q3_K with Q4_K/Q5_K where it matters" },
  { "Q3_K_L", HZ_FTYPE_Q3_K_L,  HZ_TYPE_Q3_K,   "K-quant mix, Q3_K with Q5_K attn_v/ffn_down" },
  { "Q4_K_S", HZ_FTYPE_Q4_K_S,  HZ_TYPE_Q4_K,   "K-quant mix, Q4_K with a few Q5_K" },
  { "Q4_K_M", HZ_FTYPE_Q4_K_M,  HZ_TYPE_Q4_K,   "K-quant mix, Q4_K with Q6_K half of attn_v/ffn_down" },
  { "Q5_K_S", HZ_FTYPE_Q5_K_S,  HZ_TYPE_Q5_K,   "K-quant mix, Q5_K everywhere" },
  { "Q5_K_M", HZ_FTYPE_Q5_K_M,  HZ_TYPE_Q5_K,   "K-quant mix, Q5_K with Q6_K half of attn_v/ffn_down" },
  { "Q6_K",   HZ_FTYPE_Q6_K,    HZ_TYPE_Q6_K,   "6.56 bpw" },
  { "IQ4_NL", HZ_FTYPE_IQ4_NL,  HZ_TYPE_IQ4_NL, "4.5 bpw non-linear, 32-element blocks" },
  { "IQ4_XS", HZ_FTYPE_IQ4_XS,  HZ_TYPE_IQ4_XS, "4.25 bpw non-linear" },
  { "IQ3_S",  HZ_FTYPE_IQ3_S,   HZ_TYPE_IQ3_S,  "3.44 bpw" },
  { "IQ3_M",  HZ_FTYPE_IQ3_M,   HZ_TYPE_IQ3_S,  "IQ3_S mix with Q4_K where it matters" },
  { "TQ1_0",  HZ_FTYPE_TQ1_0,   HZ_TYPE_TQ1_0,  "ternary 1.69 bpw (for ternary-trained models)" },
  { "TQ2_0",  HZ_FTYPE_TQ2_0,   HZ_TYPE_TQ2_0,  "ternary 2.06 bpw (for ternary-trained models)" },
};

const HzFtypeInfo *
hz_ftype_from_name (const char *name)
{
  static const struct { const char *alias, *name; } aliases[] = {
    { "Q3_K", "Q3_K_M" }, { "Q4_K", "Q4_K_M" }, { "Q5_K", "Q5_K_M" }, { "ALL_F32", "F32" },
  };
  if (!name)
    return NULL;
  for (gsize i = 0; i < G_N_ELEMENTS (aliases); i++)
    if (g_ascii_strcasecmp (name, aliases[i].alias) == 0)
      name = aliases[i].name;
  for (gsize i = 0; i < G_N_ELEMENTS (ftypes); i++)
    if (g_ascii_strcasecmp (name, ftypes[i].name) == 0)
      return &ftypes[i];
  return NULL;
}

const HzFtypeInfo *
hz_ftype_info (HzFtype ftype)
{
  for (gsize i = 0; i < G_N_ELEMENTS (ftypes); i++)
    if (ftypes[i].ftype == ftype)
      return &ftypes[i];
  return NULL;
}

gsize hz_ftype_count (void) { return G_N_ELEMENTS (ftypes); }

const HzFtypeInfo *
hz_ftype_nth (gsize i)
{
  return i < G_N_ELEMENTS (ftypes) ? &ftypes[i] : NULL;
}

const char *
hz_ftype_missing_format (HzFtype ftype)
{
  const HzFtypeInfo *fi = hz_ftype_info (ftype);
  if (!fi)
    return "?";
  /* the default type, and for quantized file types the output's Q6_K / Q8_0 */
  uint32_t need[3] = { fi->default_type, HZ_TYPE_Q6_K, HZ_TYPE_Q8_0 };
  gsize n = hz_quant_traits (fi->default_type) && hz_quant_traits (fi->default_type)->is_quantized ? 3 : 1;
  for (gsize i = 0; i < n; i++)
    {
      const HzQuantTraits *t = hz_quant_traits (need[i]);
      if (!t || !t->from_float)
        return t ? t->name : "?";
    }
  return NULL;
}

/* ------------------------------------------------------------ model info */

void
hz_quant_model_info_from_gguf (const HzGguf *g, HzQuantModelInfo *info, char **arch_out)
{
  char *arch = hz_gguf_get_str (g, "general.architecture");
  int64_t v;
  memset (info, 0, sizeof *info);
  *arch_out = arch;
  info->arch = arch ? arch : "";
  if (!arch)
    return;
#define RD(field, suffix, def)                                                  \
  do {                                                                          \
    g_autofree char *k = g_strdup_printf ("%s.%s", arch, suffix);               \
    info->field = hz_gguf_get_i64 (g, k, &v) && v >= 0 && v < (1 << 24) ? (int32_t) v : (def); \
  } while (0)
  RD (n_layer, "block_count", 0);
  RD (n_head, "attention.head_count", 0);
  RD (n_head_kv, "attention.head_count_kv", info->n_head);
  RD (n_expert, "expert_count", 0);
#undef RD
}

/* ------------------------------------------------------------ the chooser */

struct _HzQuantChooser {
  HzFtype          ftype;
  uint32_t         default_type;
  gboolean         pure;
  HzQuantModelInfo info;
  char            *arch;
  gboolean         has_output;
  int n_attention_wv, i_attention_wv;
  int n_ffn_down, i_ffn_down, n_ffn_gate, i_ffn_gate, n_ffn_up, i_ffn_up;
  int n_fallback;
};

HzQuantChooser *
hz_quant_chooser_new (HzFtype ftype, gboolean pure, const HzQuantModelInfo *info,
                      const char *const *names, gsize n_names)
{
  const HzFtypeInfo *fi = hz_ftype_info (ftype);
  HzQuantChooser *c = g_new0 (HzQuantChooser, 1);
  c->ftype = ftype;
  c->default_type = fi ? fi->default_type : HZ_TYPE_F32;
  c->pure = pure;
  c->info = *info;
  c->arch = g_strdup (info->arch ? info->arch : "");
  c->info.arch = c->arch;
  for (gsize i = 0; i < n_names; i++)
    {
      if (strstr (names[i], "attn_v.weight") || strstr (names[i], "attn_qkv.weight") ||
          strstr (names[i], "attn_kv_b.weight"))
        c->n_attention_wv++;
      else if (strcmp (names[i], "output.weight") == 0)
        c->has_output = TRUE;
    }
  c->n_ffn_down = c->n_ffn_gate = c->n_ffn_up = info->n_layer;
  return c;
}

void
hz_quant_chooser_free (HzQuantChooser *c)
{
  if (!c)
    return;
  g_free (c->arch);
  g_free (c);
}

int hz_quant_chooser_n_fallback (const HzQuantChooser *c) { return c->n_fallback; }

static gboolean
ends_with (const char *s, const char *suffix)
{
  gsize a = strlen (s), b = strlen (suffix);
  return a >= b && memcmp (s + a - b, suffix, b) == 0;
}

/* llama.cpp's "do we allow this tensor to be quantized" (b4748 list for the architectures
 * it knows; harmless for others). */
static gboolean
allows_quantization (const char *name, uint32_t n_dims)
{
  static const char *const never[] = {
    "_norm.weight", "ffn_gate_inp.weight", "ssm_conv1d", "attn_rel_b.weight",
    "time_mix_first.weight", "time_mix_w1.weight", "time_mix_w2.weight",
    "time_mix_decay_w1.weight", "time_mix_decay_w2.weight", "time_mix_lerp_fused.weight",
    "altup", "laurel", "per_layer_model_proj",
  };
  if (n_dims < 2 || !ends_with (name, "weight"))
    return FALSE;
  for (gsize i = 0; i < G_N_ELEMENTS (never); i++)
    if (strstr (name, never[i]))
      return FALSE;
  if (strcmp (name, "position_embd.weight") == 0 || strcmp (name, "token_types.weight") == 0)
    return FALSE;
  return TRUE;
}

static gboolean
use_more_bits (int i_layer, int n_layers)
{
  return i_layer < n_layers / 8 || i_layer >= 7 * n_layers / 8 || (i_layer - n_layers / 8) % 3 == 2;
}

gboolean
hz_quant_tensor_allows_quantization (const char *name, uint32_t n_dims)
{
  return allows_quantization (name, n_dims);
}

static uint32_t
blck (uint32_t type)
{
  const HzQuantTraits *t = hz_quant_traits (type);
  return t ? t->block_elems : 1;
}

/* Layer index of an ffn tensor: the running counter for dense models, the "blk.N." of the
 * name for MoE models (whose expert tensors are not consecutive). */
static int
layer_of (const HzQuantChooser *c, int counter, const char *name)
{
  int i = counter;
  if (c->info.n_expert > 1 && sscanf (name, "blk.%d.", &i) != 1)
    i = counter;
  return i;
}

#define F(x) (c->ftype == HZ_FTYPE_##x)
#define T(x) HZ_TYPE_##x

/* llama_tensor_get_type's mix rules (b4748). */
static uint32_t
mix_type (HzQuantChooser *c, const char *name, const int64_t *ne, uint32_t t)
{
  const gboolean falcon = strcmp (c->arch, "falcon") == 0;
  const int n_gqa = c->info.n_head_kv > 0 ? c->info.n_head / c->info.n_head_kv : 1;
  const int n_expert = c->info.n_expert;
  const gboolean is_70b = strcmp (c->arch, "llama") == 0 && c->info.n_layer == 80 &&
                          c->info.n_head != c->info.n_head_kv;
  const gboolean iq12 = F (IQ2_XXS) || F (IQ2_XS) || F (IQ1_S) || F (IQ2_S) || F (IQ2_M) || F (IQ1_M);

  if (strcmp (name, "output.weight") == 0 ||
      (!c->has_output && strcmp (name, "token_embd.weight") == 0))
    {
      if (falcon || ne[0] % blck (t) != 0)
        t = T (Q8_0);
      else if (iq12 || F (IQ3_XXS))
        t = T (Q5_K);
      else if (t != T (Q8_0))
        t = T (Q6_K);
    }
  else if (strcmp (name, "token_embd.weight") == 0)
    {
      if (F (IQ2_XXS) || F (IQ2_XS) || F (IQ1_S) || F (IQ1_M))
        t = T (Q2_K);
      else if (F (IQ2_S) || F (IQ2_M) || F (IQ3_XXS))
        t = T (IQ3_S);
      else if (F (TQ1_0) || F (TQ2_0))
        t = T (Q4_K);
    }
  else if (iq12)
    {
      if (strstr (name, "attn_v.weight"))
        {
          if (n_gqa >= 4 || n_expert >= 4)
            t = T (Q4_K);
          else
            t = F (IQ2_S) || F (IQ2_M) ? T (IQ3_S) : T (Q2_K);
          c->i_attention_wv++;
        }
      else if (n_expert == 8 && strstr (name, "attn_k.weight"))
        t = T (Q4_K);
      else if (strstr (name, "ffn_down"))
        {
          if (c->i_ffn_down < c->n_ffn_down / 8)
            t = F (IQ2_S) || F (IQ2_M) ? T (IQ3_S) : T (Q2_K);
          c->i_ffn_down++;
        }
      else if (strstr (name, "attn_output.weight"))
        {
          if (n_expert == 8)
            t = T (Q5_K);
          else if (F (IQ1_S) || F (IQ1_M))
            t = T (IQ2_XXS);
          else if (F (IQ2_S) || F (IQ2_M))
            t = T (IQ3_S);
        }
    }
  else if (strstr (name, "attn_v.weight"))
    {
      if (F (Q2_K))
        t = n_gqa >= 4 ? T (Q4_K) : T (Q3_K);
      else if (F (Q2_K_S) && n_gqa >= 4)
        t = T (Q4_K);
      else if (F (IQ3_XXS))
        t = n_gqa >= 4 ? T (Q4_K) : T (IQ3_S);  /* no importance matrix */
      else if ((F (IQ3_XS) || F (IQ3_S)) && n_gqa >= 4)
        t = T (Q4_K);
      else if (F (IQ3_M))
        t = T (Q4_K);
      else if (F (Q3_K_M))
        t = c->i_attention_wv < 2 ? T (Q5_K) : T (Q4_K);
      else if (F (Q3_K_L))
        t = T (Q5_K);
      else if ((F (IQ4_NL) || F (IQ4_XS)) && n_gqa >= 4)
        t = T (Q5_K);
      else if ((F (Q4_K_M) || F (Q5_K_M)) && use_more_bits (c->i_attention_wv, c->n_attention_wv))
        t = T (Q6_K);
      else if (F (Q4_K_S) && c->i_attention_wv < 4)
        t = T (Q5_K);
      if (is_70b && (t == T (Q3_K) || t == T (Q4_K)))
        t = T (Q5_K);
      if (n_expert == 8)
        t = T (Q8_0);
      c->i_attention_wv++;
    }
  else if (strstr (name, "attn_k.weight"))
    {
      if (n_expert == 8)
        t = T (Q8_0);
      else if (F (IQ3_XS))
        t = T (IQ3_XXS);
      else if (F (IQ3_XXS))
        t = T (IQ2_S);
    }
  else if (strstr (name, "attn_q.weight"))
    {
      if (F (IQ3_XS))
        t = T (IQ3_XXS);
      else if (F (IQ3_XXS))
        t = T (IQ2_S);
    }
  else if (strstr (name, "ffn_down"))
    {
      const int i = layer_of (c, c->i_ffn_down, name), n = c->n_ffn_down;
      if (F (Q2_K))
        t = T (Q3_K);
      else if (F (Q2_K_S))
        {
          if (i < n / 8)
            t = T (Q4_K);
        }
      else if (F (IQ3_XXS))
        t = i < n / 8 ? T (Q4_K) : T (Q3_K);
      else if (F (Q3_K_M))
        t = i < n / 16 ? T (Q5_K) : (!falcon || use_more_bits (i, n)) ? T (Q4_K) : T (Q3_K);
      else if (F (IQ3_M) && (i < n / 8 || (n_expert == 8 && use_more_bits (i, n))))
        t = T (Q4_K);
      else if (F (Q3_K_L))
        t = falcon ? T (Q4_K) : T (Q5_K);
      else if (F (Q4_K_M))
        {
          if (falcon)
            t = i < n / 16 ? T (Q6_K) : use_more_bits (i, n) ? T (Q5_K) : T (Q4_K);
          else if (use_more_bits (i, n))
            t = T (Q6_K);
        }
      else if (i < n / 8 && (F (IQ4_NL) || F (IQ4_XS)))
        t = T (Q5_K);
      else if (F (Q5_K_M) && use_more_bits (i, n))
        t = T (Q6_K);
      else if (F (Q4_K_S) && !falcon && i < n / 8)
        t = T (Q5_K);
      c->i_ffn_down++;
    }
  else if (strstr (name, "attn_output.weight"))
    {
      if (!falcon)
        {
          if (n_expert == 8)
            {
              if (F (Q2_K) || F (IQ3_XS) || F (IQ3_XXS) || F (Q3_K_S) || F (Q3_K_M) ||
                  F (IQ4_NL) || F (Q4_K_S) || F (Q4_K_M) || F (IQ3_S) || F (IQ3_M) || F (IQ4_XS))
                t = T (Q5_K);
            }
          else if (F (Q2_K))
            t = T (Q3_K);
          else if (F (IQ3_XXS))
            t = T (IQ3_S);
          else if (F (Q3_K_M))
            t = T (Q4_K);
          else if (F (Q3_K_L))
            t = T (Q5_K);
          else if (F (IQ3_M))
            t = T (Q4_K);
        }
      else if (F (Q3_K_L))
        t = T (Q4_K);
    }
  else if (strstr (name, "attn_qkv.weight"))
    {
      if (F (Q3_K_M) || F (Q3_K_L) || F (IQ3_M))
        t = T (Q4_K);
      else if (F (Q4_K_M))
        t = T (Q5_K);
      else if (F (Q5_K_M))
        t = T (Q6_K);
    }
  else if (strstr (name, "ffn_gate"))
    {
      const int i = layer_of (c, c->i_ffn_gate, name), n = c->n_ffn_gate;
      if (F (IQ3_XS) && i >= n / 8 && i < 7 * n / 8)
        t = T (IQ3_XXS);
      c->i_ffn_gate++;
    }
  else if (strstr (name, "ffn_up"))
    {
      const int i = layer_of (c, c->i_ffn_up, name), n = c->n_ffn_up;
      if (F (IQ3_XS) && i >= n / 8 && i < 7 * n / 8)
        t = T (IQ3_XXS);
      c->i_ffn_up++;
    }
  return t;
}

/* Rows that do not divide into the block: the nearest format that fits (b4748's table,
 * extended with F16 for the 32-element formats, where llama.cpp aborts). */
static uint32_t
fallback_type (HzQuantChooser *c, int64_t ncols, uint32_t t, gboolean *fell)
{
  if (ncols % blck (t) == 0)
    return t;
  uint32_t r;
  switch (t)
    {
    case T (TQ1_0): case T (TQ2_0):
      r = T (Q4_0); break;
    case T (IQ2_XXS): case T (IQ2_XS): case T (IQ2_S): case T (IQ3_XXS): case T (IQ3_S):
    case T (IQ1_S): case T (IQ1_M): case T (Q2_K): case T (Q3_K): case T (IQ4_XS):
      r = T (IQ4_NL); break;
    case T (Q4_K): r = T (Q5_0); break;
    case T (Q5_K): r = T (Q5_1); break;
    case T (Q6_K): r = T (Q8_0); break;
    default:       r = T (F16); break;
    }
  if (ncols % blck (r) != 0)
    r = T (F16);
  c->n_fallback++;
  if (fell)
    *fell = TRUE;
  return r;
}
#undef F
#undef T

uint32_t
hz_quant_chooser_type (HzQuantChooser *c, const char *name, uint32_t n_dims, const int64_t *ne,
                       uint32_t cur_type, gboolean *fallback)
{
  if (fallback)
    *fallback = FALSE;
  if (!allows_quantization (name, n_dims))
    return cur_type;
  uint32_t t = c->default_type;
  const HzQuantTraits *dt = hz_quant_traits (t);
  if (dt && dt->is_quantized)
    {
      if (!c->pure)
        t = mix_type (c, name, ne, t);
      t = fallback_type (c, ne[0], t, fallback);
    }
  return t;
}

static int
blk_index (const char *name)
{
  int i = -1;
  if (sscanf (name, "blk.%d.", &i) != 1)
    i = -1;
  return i;
}

static int
cmp_names (gconstpointer pa, gconstpointer pb)
{
  const char *a = *(const char *const *) pa, *b = *(const char *const *) pb;
  int la = blk_index (a), lb = blk_index (b);
  if (la != lb)
    return la < lb ? -1 : 1;
  return strcmp (a, b);
}

void
hz_quantize_sort_names (const char **names, gsize n)
{
  qsort (names, n, sizeof *names, cmp_names);
}

/* --------------------------------------------------------------- one tensor */

typedef struct {
  const float *src;
  uint8_t     *dst;
  int64_t      r0, r1, n_per_row;
  uint32_t     type;
  size_t       row_bytes;
  size_t       done;
} QJob;

static gpointer
quant_job (gpointer p)
{
  QJob *j = p;
  j->done = hz_quant_quantize_rows (j->type, j->src + j->r0 * j->n_per_row,
                                    j->dst + (size_t) j->r0 * j->row_bytes, j->r1 - j->r0,
                                    j->n_per_row);
  return NULL;
}

/* hz_quantize_tensor into `dst` (room for the converted tensor; NULL: g_malloc'ed here).
 * Returns the destination or NULL with `error` set. */
static void *
quantize_into (const char *name, uint32_t n_dims, const int64_t *ne, uint32_t src_type,
               const void *src, uint64_t src_bytes, uint32_t dst_type, guint n_threads,
               void *dst, uint64_t *out_bytes, GError **error)
{
  const HzQuantTraits *st = hz_quant_traits (src_type), *dt = hz_quant_traits (dst_type);
  int64_t nel = 1;
  if (n_dims < 1 || n_dims > 4)
    {
      g_set_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_INVALID,
                   "tensor '%s': %u dimensions (1 to 4 supported)", name, n_dims);
      return NULL;
    }
  for (uint32_t d = 0; d < n_dims; d++)
    {
      if (ne[d] <= 0 || nel > G_MAXINT64 / ne[d] / 4)
        {
          g_set_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_INVALID,
                       "tensor '%s': invalid dimension %u (%" G_GINT64_FORMAT ")", name, d, ne[d]);
          return NULL;
        }
      nel *= ne[d];
    }
  if (!st || !dt)
    {
      g_set_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_UNKNOWN_TYPE,
                   "tensor '%s': ggml type %u is not in the quant table", name, st ? dst_type : src_type);
      return NULL;
    }
  const int64_t n_per_row = ne[0], nrows = nel / ne[0];
  const size_t src_row = hz_quant_row_size (src_type, n_per_row);
  if (!src_row || src_row * (uint64_t) nrows != src_bytes)
    {
      g_set_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_INVALID,
                   "tensor '%s': %" G_GUINT64_FORMAT " bytes of %s do not match its shape "
                   "(%" G_GINT64_FORMAT " rows of %" G_GINT64_FORMAT ")",
                   name, src_bytes, st->name, nrows, n_per_row);
      return NULL;
    }
  if (src_type == dst_type)
    {
      *out_bytes = src_bytes;
      return dst ? memcpy (dst, src, src_bytes) : g_memdup2 (src, src_bytes);
    }
  const size_t dst_row = hz_quant_row_size (dst_type, n_per_row);
  if (!dst_row)
    {
      g_set_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_INVALID,
                   "tensor '%s': rows of %" G_GINT64_FORMAT " elements do not divide into %s "
                   "blocks of %u", name, n_per_row, dt->name, dt->block_elems);
      return NULL;
    }
  if (!dt->from_float)
    {
      g_set_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_INVALID,
                   "tensor '%s': the quant table has no encoder for %s (it needs an importance "
                   "matrix or is not written yet)", name, dt->name);
      return NULL;
    }
  if (!st->to_float)
    {
      g_set_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_INVALID,
                   "tensor '%s': the quant table has no decoder for %s", name, st->name);
      return NULL;
    }

  float *f32 = NULL;
  const float *x;
  if (src_type == HZ_TYPE_F32)
    x = src;  /* GGUF data is 32-byte aligned; folders' float32 data at least 4 (see above) */
  else
    {
      f32 = g_try_new (float, nel);
      if (!f32)
        {
          g_set_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_IO,
                       "tensor '%s': out of memory for %" G_GINT64_FORMAT " floats", name, nel);
          return NULL;
        }
      st->to_float (src, f32, nel);
      x = f32;
    }
  uint8_t *out = dst ? dst : g_try_malloc ((size_t) nrows * dst_row);
  if (!out)
    {
      g_free (f32);
      g_set_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_IO,
                   "tensor '%s': out of memory for %" G_GSIZE_FORMAT " bytes", name,
                   (gsize) nrows * dst_row);
      return NULL;
    }
  if (n_threads == 0)
    n_threads = g_get_num_processors ();
  /* at least 16k elements per thread, as llama.cpp's chunks */
  int64_t nt = MIN ((int64_t) n_threads, MAX (1, nel / (32 * 512)));
  nt = MIN (nt, nrows);
  QJob jobs[64];
  GThread *th[64];
  nt = MIN (nt, 64);
  for (int64_t k = 0; k < nt; k++)
    jobs[k] = (QJob) { x, out, nrows * k / nt, nrows * (k + 1) / nt, n_per_row, dst_type, dst_row, 0 };
  for (int64_t k = 1; k < nt; k++)
    th[k] = g_thread_new ("hz-quantize", quant_job, &jobs[k]);
  quant_job (&jobs[0]);
  for (int64_t k = 1; k < nt; k++)
    g_thread_join (th[k]);
  g_free (f32);
  *out_bytes = (uint64_t) nrows * dst_row;
  return out;
}

void *
hz_quantize_tensor (const char *name, uint32_t n_dims, const int64_t *ne, uint32_t src_type,
                    const void *src, uint64_t src_bytes, uint32_t dst_type, guint n_threads,
                    uint64_t *out_bytes, GError **error)
{
  return quantize_into (name, n_dims, ne, src_type, src, src_bytes, dst_type, n_threads, NULL,
                        out_bytes, error);
}

/* ------------------------------------------------------------ model sources */

static gboolean
source_from_gguf (HzModelSource *s, const char *path, GError **error)
{
  HzGguf *g = hz_gguf_open (path, error);
  if (!g)
    return FALSE;
  hz_model_source_keep (s, g, (GDestroyNotify) hz_gguf_free);
  s->gguf = g;
  for (int64_t i = 0; i < hz_gguf_n_kv (g); i++)
    {
      HzGgufStr k = hz_gguf_key (g, i);
      g_autofree char *key = g_strndup (k.ptr, k.len);
      if (g_str_has_prefix (key, "split.") || strcmp (key, "general.quantization_version") == 0 ||
          strcmp (key, "general.file_type") == 0 || strcmp (key, "general.alignment") == 0)
        continue;
      hz_gguf_writer_copy_kv (s->w, g, i);
    }
  for (int64_t i = 0; i < hz_gguf_n_tensors (g); i++)
    {
      const HzGgufTensor *t = hz_gguf_tensor (g, i);
      HzSrcTensor *st = g_new0 (HzSrcTensor, 1);
      st->name = g_strndup (t->name.ptr, t->name.len);
      st->n_dims = t->n_dims;
      memcpy (st->ne, t->ne, sizeof st->ne);
      st->type = t->type;
      st->data = t->data;
      st->n_bytes = t->n_bytes;
      g_ptr_array_add (s->tensors, st);
    }
  hz_quant_model_info_from_gguf (g, &s->info, &s->arch);
  return TRUE;
}

/* A GGUF file, or a Hugging Face folder (a directory: hf-import.c). */
static gboolean
source_open (HzModelSource *s, const char *in, const char *vocab_gguf, GError **error)
{
  return g_file_test (in, G_FILE_TEST_IS_DIR) ? hz_hf_import_folder (s, in, vocab_gguf, error)
                                              : source_from_gguf (s, in, error);
}

/* --------------------------------------------------------------- whole files */

void
hz_quantize_params_init (HzQuantizeParams *p)
{
  memset (p, 0, sizeof *p);
  p->ftype = HZ_FTYPE_Q8_0;
}

static gboolean
quantize_source (HzModelSource *s, const char *out, const HzQuantizeParams *p, HzQuantizeStats *stats,
                 GError **error)
{
  HzQuantizeStats st = { 0 };
  const guint n = s->tensors->len;
  g_autofree const char **names = g_new (const char *, n + 1);
  GHashTable *by_name = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < n; i++)
    {
      HzSrcTensor *t = s->tensors->pdata[i];
      names[i] = t->name;
      g_hash_table_insert (by_name, t->name, t);
    }
  hz_quantize_sort_names (names, n);
  g_autoptr (HzQuantChooser) c = hz_quant_chooser_new (p->ftype, p->pure, &s->info, names, n);
  g_autoptr (GPtrArray) bufs = g_ptr_array_new_with_free_func (g_free);
  gboolean ok = TRUE;
  uint64_t total = 0, done = 0;
  for (guint i = 0; i < n; i++)
    total += ((HzSrcTensor *) s->tensors->pdata[i])->n_bytes;

  for (guint i = 0; i < n && ok; i++)
    {
      if (g_cancellable_set_error_if_cancelled (p->cancellable, error))
        {
          ok = FALSE;
          break;
        }
      HzSrcTensor *t = g_hash_table_lookup (by_name, names[i]);
      gboolean fell = FALSE;
      uint32_t nt = hz_quant_chooser_type (c, t->name, t->n_dims, t->ne, t->type, &fell);
      const void *data = t->data;
      uint64_t bytes = t->n_bytes;
      const HzQuantTraits *from = hz_quant_traits (t->type), *to = hz_quant_traits (nt);
      if (nt != t->type)
        {
          void *q = hz_quantize_tensor (t->name, t->n_dims, t->ne, t->type, t->data, t->n_bytes,
                                        nt, p->n_threads, &bytes, error);
          if (!q)
            {
              ok = FALSE;
              break;
            }
          g_ptr_array_add (bufs, q);
          data = q;
          st.n_quantized++;
        }
      if (fell)
        st.n_fallback++;
      st.n_tensors++;
      st.bytes_in += t->n_bytes;
      st.bytes_out += bytes;
      int64_t nel = t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3];
      st.n_elements += nel;
      if (p->verbose)
        g_printerr ("[%4u/%4u] %-36s - [%5" G_GINT64_FORMAT ", %5" G_GINT64_FORMAT "], type = %6s, "
                    "%s %6s, size = %8.3f MiB -> %8.3f MiB%s\n",
                    i + 1, n, t->name, t->ne[0], t->ne[1], from->name,
                    nt != t->type ? "->" : "  ", to->name, t->n_bytes / 1048576.0,
                    bytes / 1048576.0, fell ? " (fallback: rows do not divide into the block)" : "");
      if (!hz_gguf_writer_add_tensor (s->w, t->name, nt, t->n_dims, t->ne, data, bytes, FALSE, error))
        ok = FALSE;
      done += t->n_bytes;
      if (ok && p->progress)
        p->progress (total ? (double) done / (double) total : 1.0, p->progress_data);
    }
  g_hash_table_unref (by_name);
  if (!ok)
    return FALSE;
  hz_gguf_writer_set_u32 (s->w, "general.quantization_version", 2);
  hz_gguf_writer_set_u32 (s->w, "general.file_type", (uint32_t) p->ftype);
  if (g_cancellable_set_error_if_cancelled (p->cancellable, error) ||
      !hz_gguf_writer_write_file (s->w, out, error))
    return FALSE;
  if (stats)
    *stats = st;
  return TRUE;
}

gboolean
hz_quantize_file (const char *in, const char *out, const HzQuantizeParams *p,
                  HzQuantizeStats *stats, GError **error)
{
  HzQuantizeParams def;
  if (!p)
    {
      hz_quantize_params_init (&def);
      p = &def;
    }
  if (!hz_ftype_info (p->ftype))
    {
      g_set_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_INVALID,
                   "file type %d is not supported by the quantizer", (int) p->ftype);
      return FALSE;
    }
  /* writing over the input would replace the only copy of the source weights (the output
   * is renamed over OUT at the end, so this "works" and loses the original) */
  GStatBuf si, so;
  if (g_stat (in, &si) == 0 && g_stat (out, &so) == 0 && si.st_dev == so.st_dev &&
      si.st_ino == so.st_ino)
    {
      g_set_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_IO,
                   "the output %s is the input file: give another name", out);
      return FALSE;
    }
  HzModelSource s;
  hz_model_source_init (&s);
  gboolean ok = source_open (&s, in, p->vocab_gguf, error);
  if (ok)
    ok = quantize_source (&s, out, p, stats, error);
  /* the writer references source data: free it before the mappings */
  hz_gguf_writer_free (s.w);
  s.w = NULL;
  hz_model_source_release (&s);
  hz_model_source_clear (&s);
  /* a folder's metadata is ours to write: check that it makes a loadable model (a folder
   * missing tensors would otherwise give a file that fails only at load) */
  if (ok && g_file_test (in, G_FILE_TEST_IS_DIR))
    {
      g_autoptr (GError) local = NULL;
      g_autoptr (HzGguf) g = hz_gguf_open (out, &local);
      HzLlm *llm = g ? hz_llm_load (g, &local) : NULL;
      if (llm == NULL)
        {
          g_unlink (out);
          g_set_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_INVALID,
                       "%s does not hold a complete model: %s (nothing written)", in,
                       local->message);
          ok = FALSE;
        }
      hz_llm_free (llm);
    }
  return ok;
}

/* ------------------------------------------------------------ ISQ at load */

struct _HzIsqModel {
  HzModelSource      src;
  char       *in;           /* source path (for messages) */
  GBytes     *meta_bytes;   /* safetensors folder: the converted metadata as a GGUF image */
  HzGguf     *meta_owned;   /* ... opened over meta_bytes */
  const HzGguf *meta;       /* src.gguf or meta_owned */
  GHashTable *tensors;      /* GGUF name → HzGgufTensor* (values owned by `infos`) */
  HzGgufTensor *infos;
  guint8     *arena;        /* converted tensors, 64-byte aligned (posix_memalign) */
  HzIsqStats  stats;
};

#define ISQ_ALIGN 64

void
hz_isq_model_free (HzIsqModel *m)
{
  if (!m)
    return;
  if (m->tensors)
    g_hash_table_unref (m->tensors);
  g_free (m->infos);
  g_free (m->in);
  free (m->arena);
  hz_gguf_free (m->meta_owned);
  if (m->meta_bytes)
    g_bytes_unref (m->meta_bytes);
  hz_gguf_writer_free (m->src.w);
  m->src.w = NULL;
  hz_model_source_release (&m->src);
  hz_model_source_clear (&m->src);
  g_free (m);
}

const HzGguf *hz_isq_model_gguf (const HzIsqModel *m) { return m->meta; }
GHashTable *hz_isq_model_tensors (const HzIsqModel *m) { return m->tensors; }
const HzIsqStats *hz_isq_model_stats (const HzIsqModel *m) { return &m->stats; }

gboolean
hz_isq_check_type (const char *type_name, const HzFtypeInfo **out, GError **error)
{
  const HzFtypeInfo *fi = hz_ftype_from_name (type_name);
  if (!fi)
    {
      g_set_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_INVALID,
                   "unknown quantization type '%s' (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, "
                   "Q3_K_M, Q4_K (= Q4_K_M), Q5_K_M, Q6_K, IQ4_NL, IQ4_XS, F16, BF16, F32, "
                   "...: see `hanzo quantize --list`)", type_name ? type_name : "(null)");
      return FALSE;
    }
  const char *miss = hz_ftype_missing_format (fi->ftype);
  if (miss)
    {
      g_set_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_INVALID,
                   "quantization type %s needs the format %s, which the quant table "
                   "cannot encode", fi->name, miss);
      return FALSE;
    }
  if (out)
    *out = fi;
  return TRUE;
}

HzIsqModel *
hz_isq_open (const char *in, const char *vocab_gguf, GError **error)
{
  g_return_val_if_fail (in != NULL, NULL);
  g_autoptr (HzIsqModel) m = g_new0 (HzIsqModel, 1);
  HzModelSource *s = &m->src;
  hz_model_source_init (s);
  if (!source_open (s, in, vocab_gguf, error))
    return NULL;
  m->in = g_strdup (in);
  if (s->gguf)
    m->meta = s->gguf;
  else
    {
      m->meta_bytes = hz_gguf_writer_to_bytes (s->w, error);
      if (!m->meta_bytes)
        return NULL;
      gsize len;
      const void *data = g_bytes_get_data (m->meta_bytes, &len);
      m->meta_owned = hz_gguf_open_from_data (data, len, error);
      if (!m->meta_owned)
        return NULL;
      m->meta = m->meta_owned;
    }
  return g_steal_pointer (&m);
}

gboolean
hz_isq_convert (HzIsqModel *m, const char *type_name, guint n_threads, GError **error)
{
  const HzFtypeInfo *fi = NULL;
  g_return_val_if_fail (m != NULL && m->tensors == NULL, FALSE);
  if (type_name && !hz_isq_check_type (type_name, &fi, error))
    return FALSE;
  const gint64 t0 = g_get_monotonic_time ();
  HzModelSource *s = &m->src;
  const char *in = m->in;

  /* per-tensor types in llama.cpp's order (the mix rules count tensors as they go), then
   * one arena for every tensor that changes type */
  const guint n = s->tensors->len;
  g_autofree const char **names = g_new (const char *, n + 1);
  g_autoptr (GHashTable) by_name = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < n; i++)
    {
      HzSrcTensor *t = s->tensors->pdata[i];
      names[i] = t->name;
      if (!g_hash_table_insert (by_name, t->name, t))
        {
          g_set_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_INVALID,
                       "%s: tensor '%s' appears twice", in, t->name);
          return FALSE;
        }
    }
  hz_quantize_sort_names (names, n);
  g_autoptr (HzQuantChooser) c = fi ? hz_quant_chooser_new (fi->ftype, FALSE, &s->info, names, n)
                                    : NULL;
  g_autofree uint32_t *types = g_new (uint32_t, n);
  g_autofree uint64_t *offs = g_new (uint64_t, n);
  uint64_t arena_bytes = 0;
  for (guint i = 0; i < n; i++)
    {
      HzSrcTensor *t = g_hash_table_lookup (by_name, names[i]);
      gboolean fell = FALSE;
      types[i] = c ? hz_quant_chooser_type (c, t->name, t->n_dims, t->ne, t->type, &fell) : t->type;
      offs[i] = G_MAXUINT64;
      m->stats.n_tensors++;
      m->stats.bytes_in += t->n_bytes;
      m->stats.n_fallback += fell;
      if (types[i] == t->type)
        {
          m->stats.bytes_out += t->n_bytes;
          continue;
        }
      const size_t row = hz_quant_row_size (types[i], t->ne[0]);
      if (!row)  /* the chooser only picks fitting formats: a table inconsistency */
        {
          g_set_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_INVALID,
                       "tensor '%s': rows of %" G_GINT64_FORMAT " do not fit %s", t->name,
                       t->ne[0], hz_quant_traits (types[i])->name);
          return FALSE;
        }
      const uint64_t bytes = (uint64_t) row * (uint64_t) (t->ne[1] * t->ne[2] * t->ne[3]);
      offs[i] = arena_bytes;
      arena_bytes += (bytes + ISQ_ALIGN - 1) / ISQ_ALIGN * ISQ_ALIGN;
      m->stats.n_quantized++;
      m->stats.bytes_out += bytes;
    }
  if (arena_bytes > 0)
    {
      /* posix_memalign rather than g_aligned_alloc, which aborts when memory runs out */
      void *arena = NULL;
      if (arena_bytes <= G_MAXSIZE && posix_memalign (&arena, ISQ_ALIGN, (size_t) arena_bytes) == 0)
        m->arena = arena;
      if (!m->arena)
        {
          g_set_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_IO,
                       "%s: out of memory for %" G_GUINT64_FORMAT " bytes of converted weights",
                       in, arena_bytes);
          return FALSE;
        }
    }
  m->infos = g_new0 (HzGgufTensor, n);
  m->tensors = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < n; i++)
    {
      HzSrcTensor *t = g_hash_table_lookup (by_name, names[i]);
      HzGgufTensor *o = &m->infos[i];
      o->name.ptr = t->name;
      o->name.len = strlen (t->name);
      o->n_dims = t->n_dims;
      memcpy (o->ne, t->ne, sizeof o->ne);
      o->type = types[i];
      o->data = t->data;
      o->n_bytes = t->n_bytes;
      if (offs[i] != G_MAXUINT64)
        {
          o->offset = offs[i];
          o->data = quantize_into (t->name, t->n_dims, t->ne, t->type, t->data, t->n_bytes,
                                   types[i], n_threads, m->arena + offs[i], &o->n_bytes, error);
          if (!o->data)
            return FALSE;
          /* the folder's converted copy is not needed any more (keeps peak memory at the
           * converted model plus one tensor) */
          g_clear_pointer (&t->owned, g_free);
          t->data = NULL;
        }
      g_hash_table_insert (m->tensors, t->name, o);
    }
  m->stats.seconds = (g_get_monotonic_time () - t0) / 1e6;
  return TRUE;
}

HzIsqModel *
hz_isq_load (const char *in, const char *type_name, const char *vocab_gguf, guint n_threads,
             GError **error)
{
  g_autoptr (HzIsqModel) m = hz_isq_open (in, vocab_gguf, error);
  if (!m || !hz_isq_convert (m, type_name, n_threads, error))
    return NULL;
  return g_steal_pointer (&m);
}
