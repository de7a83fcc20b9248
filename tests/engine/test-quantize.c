/* tests/engine/test-quantize.c — model-level quantization (engine/quantize.h).
 *
 * Core tests (no shared data): the per-tensor type rules of the mixes on a synthetic
 * 32-layer name list (use_more_bits layers of attn_v / ffn_down, output → Q6_K, fallbacks),
 * llama.cpp's tensor order, bad input naming the tensor, and the safetensors import
 * (a folder written here from a GGUF, with HF names and Llama's q/k row order, converts back
 * to the same tensors).
 *
 * Shared tests (../shared, skipped when absent): quantizing stories-distill-F32.gguf to each
 * of llama.cpp's 12 files gives the same tensors byte for byte (same per-tensor types) and the
 * same metadata; stories260K (64-wide rows, 172-wide ffn_down) quantizes with fallbacks.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gguf.h"
#include "hanzo/engine.h"
#include "quant.h"
#include "quantize.h"
#include "safetensors.h"
#include "../hz-test-util.h"
#include "hf-folder.h"
#include "pretok-data.h"
#include "tokenizer.h"

/* ------------------------------------------------------------------ rules */

static const char *
type_of (HzQuantChooser *c, const char *name, int64_t ne0, int64_t ne1)
{
  int64_t ne[4] = { ne0, ne1, 1, 1 };
  return hz_quant_traits (hz_quant_chooser_type (c, name, ne1 > 1 ? 2 : 1, ne, HZ_TYPE_F32, NULL))->name;
}

/* 32-layer llama (8 heads share 1 kv head: n_gqa 8) */
static GPtrArray *
llama_names (int n_layer, gboolean with_output)
{
  GPtrArray *a = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (a, g_strdup ("token_embd.weight"));
  g_ptr_array_add (a, g_strdup ("output_norm.weight"));
  if (with_output)
    g_ptr_array_add (a, g_strdup ("output.weight"));
  static const char *per[] = { "attn_norm.weight", "attn_q.weight", "attn_k.weight", "attn_v.weight",
                               "attn_output.weight", "ffn_norm.weight", "ffn_gate.weight",
                               "ffn_up.weight", "ffn_down.weight" };
  for (int l = 0; l < n_layer; l++)
    for (gsize i = 0; i < G_N_ELEMENTS (per); i++)
      g_ptr_array_add (a, g_strdup_printf ("blk.%d.%s", l, per[i]));
  return a;
}

static void
test_rules_q4_k_m (void)
{
  g_autoptr (GPtrArray) names = llama_names (32, TRUE);
  hz_quantize_sort_names ((const char **) names->pdata, names->len);
  HzQuantModelInfo info = { "llama", 32, 32, 8, 0 };
  g_autoptr (HzQuantChooser) c = hz_quant_chooser_new (HZ_FTYPE_Q4_K_M, FALSE, &info,
                                                       (const char *const *) names->pdata, names->len);
  /* order: non-block tensors by name, then blocks by index (not "blk.10" before "blk.2") */
  g_assert_cmpstr (names->pdata[0], ==, "output.weight");
  g_assert_cmpstr (names->pdata[3], ==, "blk.0.attn_k.weight");
  g_assert_cmpstr (names->pdata[3 + 9 * 2], ==, "blk.2.attn_k.weight");
  int n_q6_v = 0, n_q6_down = 0;
  for (guint i = 0; i < names->len; i++)
    {
      const char *n = names->pdata[i];
      gboolean vec = strstr (n, "norm") != NULL;
      const char *t = type_of (c, n, 4096, vec ? 1 : 4096);
      if (vec)
        g_assert_cmpstr (t, ==, "f32");
      else if (strcmp (n, "output.weight") == 0)
        g_assert_cmpstr (t, ==, "q6_K");
      else if (strstr (n, "attn_v") || strstr (n, "ffn_down"))
        {
          int l;
          g_assert_cmpint (sscanf (n, "blk.%d.", &l), ==, 1);
          /* use_more_bits: l < 4 || l >= 28 || (l - 4) % 3 == 2 */
          gboolean more = l < 4 || l >= 28 || (l - 4) % 3 == 2;
          g_assert_cmpstr (t, ==, more ? "q6_K" : "q4_K");
          if (more)
            (strstr (n, "attn_v") ? n_q6_v++ : n_q6_down++);
        }
      else
        g_assert_cmpstr (t, ==, "q4_K");
    }
  g_assert_cmpint (n_q6_v, ==, 16);
  g_assert_cmpint (n_q6_down, ==, 16);
  g_assert_cmpint (hz_quant_chooser_n_fallback (c), ==, 0);
}

static void
test_rules_misc (void)
{
  HzQuantModelInfo info = { "llama", 8, 8, 4, 0 };
  g_autoptr (GPtrArray) tied = llama_names (8, FALSE);
  hz_quantize_sort_names ((const char **) tied->pdata, tied->len);
  /* tied output: token_embd is quantized as the output (Q6_K), Q8_0 when rows don't fit */
  {
    g_autoptr (HzQuantChooser) c = hz_quant_chooser_new (HZ_FTYPE_Q4_0, FALSE, &info,
                                                         (const char *const *) tied->pdata, tied->len);
    g_assert_cmpstr (type_of (c, "token_embd.weight", 256, 512), ==, "q6_K");
    g_assert_cmpstr (type_of (c, "blk.0.attn_q.weight", 256, 256), ==, "q4_0");
  }
  {
    g_autoptr (HzQuantChooser) c = hz_quant_chooser_new (HZ_FTYPE_Q4_0, FALSE, &info,
                                                         (const char *const *) tied->pdata, tied->len);
    g_assert_cmpstr (type_of (c, "token_embd.weight", 64, 512), ==, "q8_0");
    /* 172-wide rows: no 32-element block fits → F16 (llama.cpp aborts here) */
    gboolean fell = FALSE;
    int64_t ne[4] = { 172, 64, 1, 1 };
    g_assert_cmpuint (hz_quant_chooser_type (c, "blk.0.ffn_down.weight", 2, ne, HZ_TYPE_F32, &fell),
                      ==, HZ_TYPE_F16);
    g_assert_true (fell);
    /* 1-D tensors and biases keep their type */
    g_assert_cmpstr (type_of (c, "blk.0.attn_norm.weight", 64, 1), ==, "f32");
  }
  {
    /* K fallbacks: Q4_K → Q5_0, Q6_K → Q8_0, Q2_K/Q3_K/IQ4_XS → IQ4_NL */
    g_autoptr (HzQuantChooser) c = hz_quant_chooser_new (HZ_FTYPE_Q4_K_S, FALSE, &info,
                                                         (const char *const *) tied->pdata, tied->len);
    g_assert_cmpstr (type_of (c, "blk.0.attn_q.weight", 64, 64), ==, "q5_0");
    g_autoptr (HzQuantChooser) c2 = hz_quant_chooser_new (HZ_FTYPE_Q2_K, FALSE, &info,
                                                          (const char *const *) tied->pdata, tied->len);
    g_assert_cmpstr (type_of (c2, "blk.0.attn_q.weight", 64, 64), ==, "iq4_nl");
    g_autoptr (HzQuantChooser) c3 = hz_quant_chooser_new (HZ_FTYPE_Q6_K, FALSE, &info,
                                                          (const char *const *) tied->pdata, tied->len);
    g_assert_cmpstr (type_of (c3, "blk.0.attn_q.weight", 64, 64), ==, "q8_0");
  }
  {
    /* --pure: no mix rules, but output/token_embd still at the default */
    g_autoptr (HzQuantChooser) c = hz_quant_chooser_new (HZ_FTYPE_Q4_K_M, TRUE, &info,
                                                         (const char *const *) tied->pdata, tied->len);
    g_assert_cmpstr (type_of (c, "token_embd.weight", 256, 512), ==, "q4_K");
    g_assert_cmpstr (type_of (c, "blk.0.attn_v.weight", 256, 128), ==, "q4_K");
  }
  g_assert_nonnull (hz_ftype_from_name ("q4_k"));
  g_assert_cmpint (hz_ftype_from_name ("Q4_K")->ftype, ==, HZ_FTYPE_Q4_K_M);
  g_assert_null (hz_ftype_from_name ("IQ2_XXS"));  /* needs an importance matrix */
  g_assert_null (hz_ftype_from_name ("Q9_9"));
}

static void
test_bad_input (void)
{
  g_autoptr (GError) error = NULL;
  float x[64] = { 0 };
  int64_t ne[4] = { 64, 1, 1, 1 };
  uint64_t bytes;
  /* data shorter than the shape */
  void *q = hz_quantize_tensor ("blk.3.attn_q.weight", 2, ne, HZ_TYPE_F32, x, 100, HZ_TYPE_Q4_0, 1,
                                &bytes, &error);
  g_assert_null (q);
  g_assert_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "blk.3.attn_q.weight"));
  g_clear_error (&error);
  /* rows that do not divide into the block */
  int64_t ne2[4] = { 48, 1, 1, 1 };
  q = hz_quantize_tensor ("blk.0.ffn_down.weight", 2, ne2, HZ_TYPE_F32, x, 48 * 4, HZ_TYPE_Q4_K, 1,
                          &bytes, &error);
  g_assert_null (q);
  g_assert_nonnull (strstr (error->message, "blk.0.ffn_down.weight"));
  g_clear_error (&error);
  /* unknown type id */
  q = hz_quantize_tensor ("t", 1, ne, 63, x, 256, HZ_TYPE_Q8_0, 1, &bytes, &error);
  g_assert_null (q);
  g_assert_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_UNKNOWN_TYPE);
  g_clear_error (&error);
  /* a missing input file */
  HzQuantizeParams p;
  hz_quantize_params_init (&p);
  g_assert_false (hz_quantize_file ("/nonexistent/x.gguf", "/tmp/never.gguf", &p, NULL, &error));
  g_assert_nonnull (error);
}

/* ------------------------------------------------------- shared: stories-distill */

static const char *const distill_types[] = {
  "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K_M", "Q4_K_M", "Q5_K_M", "Q6_K",
  "IQ4_NL", "IQ4_XS",
};

static void
test_distill (gconstpointer data)
{
  const char *type = data;
  g_autofree char *src = hz_test_shared_path ("models/stories-distill/stories-distill-F32.gguf");
  if (!src)
    return;
  g_autofree char *rel = g_strdup_printf ("models/stories-distill/stories-distill-%s.gguf", type);
  g_autofree char *ref_path = hz_test_shared_path (rel);
  if (!ref_path)
    return;
  const HzFtypeInfo *fi = hz_ftype_from_name (type);
  g_assert_nonnull (fi);
  const char *miss = hz_ftype_missing_format (fi->ftype);
  if (miss)
    {
      g_autofree char *msg = g_strdup_printf ("%s: the quant table cannot encode %s yet; skipping", type, miss);
      g_test_skip (msg);
      return;
    }
  g_autoptr (GError) error = NULL;
  g_autoptr (HzGguf) ref = hz_gguf_open (ref_path, &error);
  g_assert_no_error (error);
  g_autofree char *out = g_strdup_printf ("%s/hz-test-quantize-%d-%s.gguf", g_get_tmp_dir (), (int) getpid (), type);
  HzQuantizeParams p;
  hz_quantize_params_init (&p);
  p.ftype = fi->ftype;
  p.n_threads = 2;
  HzQuantizeStats st;
  g_assert_true (hz_quantize_file (src, out, &p, &st, &error));
  g_assert_no_error (error);
  g_autoptr (HzGguf) got = hz_gguf_open (out, &error);
  g_assert_no_error (error);

  /* tensors: same names in the same order, same types and shapes, same bytes */
  g_assert_cmpint (hz_gguf_n_tensors (got), ==, hz_gguf_n_tensors (ref));
  int identical = 0;
  for (int64_t i = 0; i < hz_gguf_n_tensors (ref); i++)
    {
      const HzGgufTensor *r = hz_gguf_tensor (ref, i), *g = hz_gguf_tensor (got, i);
      g_autofree char *rn = g_strndup (r->name.ptr, r->name.len);
      g_autofree char *gn = g_strndup (g->name.ptr, g->name.len);
      g_assert_cmpstr (gn, ==, rn);
      if (g->type != r->type)
        g_error ("%s %s: type %s, llama.cpp chose %s", type, rn, hz_quant_traits (g->type)->name,
                 hz_quant_traits (r->type)->name);
      g_assert_cmpuint (g->n_dims, ==, r->n_dims);
      for (int d = 0; d < 4; d++)
        g_assert_cmpint (g->ne[d], ==, r->ne[d]);
      g_assert_cmpuint (g->n_bytes, ==, r->n_bytes);
      if (memcmp (g->data, r->data, r->n_bytes) != 0)
        {
          gsize bad = 0;
          for (gsize b = 0; b < r->n_bytes; b++)
            bad += ((const uint8_t *) g->data)[b] != ((const uint8_t *) r->data)[b];
          g_error ("%s %s (%s): %" G_GSIZE_FORMAT " of %" G_GUINT64_FORMAT " bytes differ from llama.cpp's",
                   type, rn, hz_quant_traits (r->type)->name, bad, r->n_bytes);
        }
      identical++;
    }
  /* metadata: same keys in the same order with the same values (file_type included) */
  g_assert_cmpint (hz_gguf_n_kv (got), ==, hz_gguf_n_kv (ref));
  for (int64_t i = 0; i < hz_gguf_n_kv (ref); i++)
    {
      HzGgufStr rk = hz_gguf_key (ref, i), gk = hz_gguf_key (got, i);
      g_assert_cmpmem (gk.ptr, gk.len, rk.ptr, rk.len);
      g_autofree char *rv = hz_gguf_value_to_string (ref, i, 1000);
      g_autofree char *gv = hz_gguf_value_to_string (got, i, 1000);
      g_assert_cmpstr (gv, ==, rv);
    }
  /* the whole file, while we are at it */
  g_autofree char *a = NULL, *b = NULL;
  gsize la, lb;
  g_assert_true (g_file_get_contents (out, &a, &la, NULL));
  g_assert_true (g_file_get_contents (ref_path, &b, &lb, NULL));
  g_test_message ("%s: %d/%" G_GINT64_FORMAT " tensors byte-identical to llama.cpp's; whole file %s "
                  "(%" G_GSIZE_FORMAT " bytes)", type, identical, hz_gguf_n_tensors (ref),
                  la == lb && memcmp (a, b, la) == 0 ? "identical" : "differs", la);
  g_unlink (out);
}

/* requantizing: a quantized source is dequantized first (Q8_0 file → Q4_0 equals
 * quantize(dequantize(Q8_0 tensor))) */
static void
test_requantize (void)
{
  g_autofree char *src = hz_test_shared_path ("models/stories-distill/stories-distill-Q8_0.gguf");
  if (!src)
    return;
  g_autoptr (GError) error = NULL;
  g_autofree char *out = g_strdup_printf ("%s/hz-test-requant-%d.gguf", g_get_tmp_dir (), (int) getpid ());
  HzQuantizeParams p;
  hz_quantize_params_init (&p);
  p.ftype = HZ_FTYPE_Q4_0;
  g_assert_true (hz_quantize_file (src, out, &p, NULL, &error));
  g_assert_no_error (error);
  g_autoptr (HzGguf) in = hz_gguf_open (src, &error);
  g_autoptr (HzGguf) got = hz_gguf_open (out, &error);
  g_assert_no_error (error);
  const HzGgufTensor *a = hz_gguf_find_tensor (in, "blk.1.attn_q.weight");
  const HzGgufTensor *b = hz_gguf_find_tensor (got, "blk.1.attn_q.weight");
  g_assert_cmpuint (b->type, ==, HZ_TYPE_Q4_0);
  int64_t n = a->ne[0] * a->ne[1];
  g_autofree float *f = g_new (float, n);
  hz_quant_traits (a->type)->to_float (a->data, f, n);
  g_autofree uint8_t *q = g_malloc (b->n_bytes);
  hz_quant_quantize_rows (HZ_TYPE_Q4_0, f, q, a->ne[1], a->ne[0]);
  g_assert_cmpmem (q, b->n_bytes, b->data, b->n_bytes);
  /* output.weight was Q8_0 and stays Q8_0? No: Q4_0's output is Q6_K (from the dequantized Q8_0) */
  g_assert_cmpuint (hz_gguf_find_tensor (got, "output.weight")->type, ==, HZ_TYPE_Q6_K);
  g_unlink (out);
}

static void
test_stories260k (void)
{
  g_autofree char *src = hz_test_shared_path ("models/stories260K.gguf");
  if (!src)
    return;
  static const struct { HzFtype ft; uint32_t matrix, down, out; } cases[] = {
    { HZ_FTYPE_Q8_0, HZ_TYPE_Q8_0, HZ_TYPE_F16, HZ_TYPE_Q8_0 },
    { HZ_FTYPE_Q4_0, HZ_TYPE_Q4_0, HZ_TYPE_F16, HZ_TYPE_Q8_0 },
    { HZ_FTYPE_Q4_K_M, HZ_TYPE_Q5_0, HZ_TYPE_F16, HZ_TYPE_Q8_0 },
    { HZ_FTYPE_IQ4_XS, HZ_TYPE_IQ4_NL, HZ_TYPE_F16, HZ_TYPE_Q8_0 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autofree char *out = g_strdup_printf ("%s/hz-test-s260-%d.gguf", g_get_tmp_dir (), (int) getpid ());
      HzQuantizeParams p;
      hz_quantize_params_init (&p);
      p.ftype = cases[i].ft;
      HzQuantizeStats st;
      g_assert_true (hz_quantize_file (src, out, &p, &st, &error));
      g_assert_no_error (error);
      g_autoptr (HzGguf) g = hz_gguf_open (out, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (hz_gguf_find_tensor (g, "blk.0.attn_q.weight")->type, ==, cases[i].matrix);
      g_assert_cmpuint (hz_gguf_find_tensor (g, "blk.4.ffn_down.weight")->type, ==, cases[i].down);
      g_assert_cmpuint (hz_gguf_find_tensor (g, "output.weight")->type, ==, cases[i].out);
      g_assert_cmpuint (hz_gguf_find_tensor (g, "blk.0.attn_norm.weight")->type, ==, HZ_TYPE_F32);
      g_assert_cmpuint (st.n_fallback, >=, 5);
      g_test_message ("stories260K %s: %u tensors, %u fallback, %.1f KiB", hz_ftype_info (cases[i].ft)->name,
                      st.n_tensors, st.n_fallback, st.bytes_out / 1024.0);
      g_unlink (out);
    }
}

/* ---------------------------------------------------------- safetensors folder */

static void
test_safetensors_folder (void)
{
  g_autofree char *src = hz_test_shared_path ("models/stories-distill/stories-distill-F32.gguf");
  if (!src)
    return;
  g_autoptr (GError) error = NULL;
  g_autoptr (HzGguf) orig = hz_gguf_open (src, &error);
  g_assert_no_error (error);
  for (int bf16 = 0; bf16 <= 1; bf16++)
    {
      g_autofree char *dir = g_strdup_printf ("%s/hz-test-hf-%d", g_get_tmp_dir (), (int) getpid ());
      hz_test_write_hf_folder (src, dir, bf16 ? HZ_HF_BF16 : HZ_HF_F32, bf16);
      g_autofree char *out = g_strdup_printf ("%s/hz-test-hf-%d.gguf", g_get_tmp_dir (), (int) getpid ());
      HzQuantizeParams p;
      hz_quantize_params_init (&p);
      p.ftype = bf16 ? HZ_FTYPE_Q8_0 : HZ_FTYPE_ALL_F32;
      p.vocab_gguf = src;
      g_assert_true (hz_quantize_file (dir, out, &p, NULL, &error));
      g_assert_no_error (error);
      g_autoptr (HzGguf) got = hz_gguf_open (out, &error);
      g_assert_no_error (error);
      g_assert_cmpint (hz_gguf_n_tensors (got), ==, hz_gguf_n_tensors (orig));
      for (int64_t i = 0; i < hz_gguf_n_tensors (orig); i++)
        {
          const HzGgufTensor *a = hz_gguf_tensor (orig, i);
          g_autofree char *name = g_strndup (a->name.ptr, a->name.len);
          const HzGgufTensor *b = hz_gguf_find_tensor (got, name);
          g_assert_nonnull (b);
          for (int d = 0; d < 4; d++)
            g_assert_cmpint (a->ne[d], ==, b->ne[d]);
          if (!bf16)
            {
              g_assert_cmpuint (b->type, ==, HZ_TYPE_F32);
              if (memcmp (a->data, b->data, a->n_bytes) != 0)
                g_error ("safetensors import: %s differs from the GGUF original", name);
            }
          else if (a->n_dims == 2)
            {
              /* Q8_0 of the bf16-rounded weights */
              int64_t n = a->ne[0] * a->ne[1];
              g_autofree float *f = g_memdup2 (a->data, a->n_bytes);
              for (int64_t e = 0; e < n; e++)
                f[e] = hz_bf16_to_fp32 (hz_fp32_to_bf16 (f[e]));
              g_autofree uint8_t *q = g_malloc (b->n_bytes);
              g_assert_cmpuint (hz_quant_quantize_rows (b->type, f, q, a->ne[1], a->ne[0]), ==, b->n_bytes);
              if (memcmp (q, b->data, b->n_bytes) != 0)
                g_error ("safetensors import (bf16 → %s): %s differs", hz_quant_traits (b->type)->name, name);
            }
        }
      g_autofree char *arch = hz_gguf_get_str (got, "general.architecture");
      g_assert_cmpstr (arch, ==, "llama");
      g_assert_cmpint (hz_gguf_find_key (got, "tokenizer.ggml.tokens"), >=, 0);
      g_unlink (out);
      hz_test_rm_dir (dir);
    }
}

/* DIR/model.safetensors: the bf16 weights of a one-layer Qwen2 (hidden 64, 4 heads, 2 KV
 * heads, FFN 128) with an `n_vocab`-row embedding (tied output). */
static void
write_tiny_qwen2_weights (const char *dir, int64_t n_vocab)
{
  static const struct { const char *name; int64_t d0, d1; } t[] = {
    { "model.embed_tokens.weight", 0, 64 }, { "model.norm.weight", 64, 0 },
    { "model.layers.0.self_attn.q_proj.weight", 64, 64 }, { "model.layers.0.self_attn.q_proj.bias", 64, 0 },
    { "model.layers.0.self_attn.k_proj.weight", 32, 64 }, { "model.layers.0.self_attn.k_proj.bias", 32, 0 },
    { "model.layers.0.self_attn.v_proj.weight", 32, 64 }, { "model.layers.0.self_attn.v_proj.bias", 32, 0 },
    { "model.layers.0.self_attn.o_proj.weight", 64, 64 },
    { "model.layers.0.mlp.gate_proj.weight", 128, 64 }, { "model.layers.0.mlp.up_proj.weight", 128, 64 },
    { "model.layers.0.mlp.down_proj.weight", 64, 128 },
    { "model.layers.0.input_layernorm.weight", 64, 0 },
    { "model.layers.0.post_attention_layernorm.weight", 64, 0 },
    { "model.rotary_emb.inv_freq", 8, 0 },  /* skipped silently */
  };
  g_autoptr (HzSafetensorsWriter) w = hz_safetensors_writer_new ();
  for (gsize i = 0; i < G_N_ELEMENTS (t); i++)
    {
      int64_t d0 = t[i].d0 ? t[i].d0 : n_vocab;
      int64_t shape[2] = { d0, t[i].d1 };
      guint nd = t[i].d1 ? 2 : 1;
      gsize n = d0 * (t[i].d1 ? t[i].d1 : 1);
      g_autofree uint16_t *h = g_new (uint16_t, n);
      for (gsize e = 0; e < n; e++)
        h[e] = hz_fp32_to_bf16 (nd == 1 ? 1.0f : (float) (((e * 2654435761u + i) % 1000) / 5000.0 - 0.1));
      g_assert_true (hz_safetensors_writer_add (w, t[i].name, HZ_ST_BF16, nd, shape, h, n * 2, NULL));
    }
  g_autofree char *st = g_build_filename (dir, "model.safetensors", NULL);
  g_assert_true (hz_safetensors_writer_write_file (w, st, NULL));
}

/* a Qwen2 folder with a byte-level BPE tokenizer.json (no --vocab): converted keys and
 * tensors load in the engine and tokenize with the imported merges */
static void
test_safetensors_qwen2_bpe (void)
{
  g_autofree char *dir = g_strdup_printf ("%s/hz-test-hfq-%d", g_get_tmp_dir (), (int) getpid ());
  g_mkdir_with_parents (dir, 0700);
  static const char *files[][2] = {
    { "config.json", "{\"model_type\":\"qwen2\",\"hidden_size\":64,\"num_hidden_layers\":1,"
      "\"num_attention_heads\":4,\"num_key_value_heads\":2,\"intermediate_size\":128,"
      "\"max_position_embeddings\":256,\"rms_norm_eps\":1e-6,\"rope_theta\":1000000.0,"
      "\"tie_word_embeddings\":true,\"eos_token_id\":7}" },
    { "tokenizer.json", "{\"pre_tokenizer\":{\"type\":\"ByteLevel\",\"add_prefix_space\":false},"
      "\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1,\"c\":2,\"ab\":3,"
      "\"\u0120\":4,\"\u0120a\":5,\"abc\":6},\"merges\":[\"a b\",\"\u0120 a\",[\"ab\",\"c\"]]},"
      "\"added_tokens\":[{\"id\":7,\"content\":\"<|endoftext|>\",\"special\":true}]}" },
    { "tokenizer_config.json", "{\"add_bos_token\":false,\"eos_token\":\"<|endoftext|>\"}" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *p = g_build_filename (dir, files[i][0], NULL);
      g_assert_true (g_file_set_contents (p, files[i][1], -1, NULL));
    }
  write_tiny_qwen2_weights (dir, 8);

  g_autoptr (GError) error = NULL;
  /* in memory, at load: the folder quantized to Q8_0 */
  g_autoptr (HzIsqModel) isq = hz_isq_load (dir, "Q8_0", NULL, 1, &error);
  g_assert_no_error (error);
  GHashTable *tensors = hz_isq_model_tensors (isq);
  const HzGguf *g = hz_isq_model_gguf (isq);
#define TYPE_OF(n) (((const HzGgufTensor *) g_hash_table_lookup (tensors, n))->type)
  g_assert_cmpuint (TYPE_OF ("blk.0.attn_q.weight"), ==, HZ_TYPE_Q8_0);
  g_assert_cmpuint (TYPE_OF ("blk.0.attn_q.bias"), ==, HZ_TYPE_F32);
  g_assert_cmpuint (TYPE_OF ("output_norm.weight"), ==, HZ_TYPE_F32);
#undef TYPE_OF
  g_assert_null (g_hash_table_lookup (tensors, "output.weight"));  /* tied */
  g_autofree char *model = hz_gguf_get_str (g, "tokenizer.ggml.model");
  g_assert_cmpstr (model, ==, "gpt2");

  HzModelParams mp;
  hz_model_params_init (&mp);
  mp.isq = "Q8_0";
  g_autoptr (HzModel) m = hz_model_load (dir, &mp, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (hz_model_isq (m), ==, "Q8_0");
  g_assert_cmpstr (hz_model_type_name (m), ==, "Q8_0");
  gsize n = 0;
  g_autofree HzToken *ids = hz_model_tokenize (m, "ab abc", -1, TRUE, FALSE, &n);
  g_assert_cmpuint (n, ==, 3);
  g_assert_cmpint (ids[0], ==, 3);
  g_assert_cmpint (ids[1], ==, 4);
  g_assert_cmpint (ids[2], ==, 6);
  g_assert_cmpint (hz_model_eos (m), ==, 7);
  HzContextParams cp;
  hz_context_params_init (&cp);
  cp.n_ctx = 16;
  g_autoptr (HzContext) ctx = hz_context_new (m, &cp, &error);
  g_assert_no_error (error);
  g_assert_true (hz_context_eval (ctx, ids, n, FALSE, NULL, &error));
  g_assert_true (isfinite (hz_context_logits (ctx, -1)[0]));
  hz_test_rm_dir (dir);

  /* bad input: an unsupported model_type names the file */
  g_autofree char *dir2 = g_strdup_printf ("%s/hz-test-hfbad-%d", g_get_tmp_dir (), (int) getpid ());
  g_mkdir_with_parents (dir2, 0700);
  g_autofree char *cfg = g_build_filename (dir2, "config.json", NULL);
  g_assert_true (g_file_set_contents (cfg, "{\"model_type\":\"gpt_neox\"}", -1, NULL));
  HzQuantizeParams p;
  hz_quantize_params_init (&p);
  g_assert_false (hz_quantize_file (dir2, "/tmp/never.gguf", &p, NULL, &error));
  g_assert_nonnull (strstr (error->message, "gpt_neox"));
  hz_test_rm_dir (dir2);
}


/* Hugging Face folders with a GPT-2-style tokenizer.json (ByteLevel with its regex) and a
 * digits-split one (SmolLM's Digits + ByteLevel), weights of a tiny Qwen2: the folder
 * (as `hanzo tokenize -m DIR` reads it) and the GGUF `hanzo quantize DIR` writes give the
 * ids of Hugging Face's tokenizer for the 88 strings of tests/engine/pretok, and the GGUF
 * names the matching pre-tokenizer. */
static void
test_hf_folder_tokenizers (void)
{
  static const struct { const char *base, *pre; } cases[] = {
    { "hf-gpt2", "gpt-2" }, { "hf-smollm", "smollm" },
  };
  g_autoptr (JsonNode) texts_node = hz_pretok_load_json ("texts.json");
  g_autoptr (JsonNode) exp_node = hz_pretok_load_json ("expected.json");
  JsonArray *texts = json_node_get_array (texts_node);
  JsonObject *hf = json_object_get_object_member (json_node_get_object (exp_node), "hf");

  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      JsonArray *ids = json_object_get_array_member (
        json_object_get_object_member (hf, cases[c].base), "ids");
      g_autofree char *dir = hz_pretok_make_folder (cases[c].base);
      g_autofree char *tpath = g_build_filename (dir, "tokenizer.json", NULL);
      g_autofree char *cpath = g_build_filename (dir, "config.json", NULL);
      g_autofree char *out = g_strdup_printf ("%s.gguf", dir);
      g_autoptr (JsonParser) tp = json_parser_new ();
      g_autoptr (GError) error = NULL;
      g_assert_true (json_parser_load_from_file (tp, tpath, &error));
      JsonObject *vocab = json_object_get_object_member (
        json_object_get_object_member (json_node_get_object (json_parser_get_root (tp)), "model"),
        "vocab");
      int64_t n_vocab = json_object_get_size (vocab);
      g_autofree char *config = g_strdup_printf (
        "{\"model_type\":\"qwen2\",\"vocab_size\":%" G_GINT64_FORMAT ",\"hidden_size\":64,"
        "\"num_hidden_layers\":1,\"num_attention_heads\":4,\"num_key_value_heads\":2,"
        "\"intermediate_size\":128,\"max_position_embeddings\":256,\"rms_norm_eps\":1e-6,"
        "\"tie_word_embeddings\":true}", n_vocab);
      g_assert_true (g_file_set_contents (cpath, config, -1, NULL));
      write_tiny_qwen2_weights (dir, n_vocab);

      /* the folder itself */
      {
        g_autoptr (HzIsqModel) m = hz_isq_open (dir, NULL, &error);
        g_assert_no_error (error);
        g_autoptr (HzTokenizer) t = hz_tokenizer_new_from_gguf (hz_isq_model_gguf (m), &error);
        g_assert_no_error (error);
        guint ok = hz_pretok_check_ids (t, texts, ids, cases[c].base);
        g_test_message ("%s folder: %u/%u strings give Hugging Face's ids", cases[c].base, ok,
                        json_array_get_length (texts));
        g_assert_cmpuint (ok, ==, json_array_get_length (texts));
      }
      /* after quantizing it */
      {
        HzQuantizeParams p;
        hz_quantize_params_init (&p);
        g_assert_true (hz_quantize_file (dir, out, &p, NULL, &error));
        g_assert_no_error (error);
        g_autoptr (HzGguf) g = hz_gguf_open (out, &error);
        g_assert_no_error (error);
        g_autofree char *pre = hz_gguf_get_str (g, "tokenizer.ggml.pre");
        g_assert_cmpstr (pre, ==, cases[c].pre);
        g_autoptr (HzTokenizer) t = hz_tokenizer_new_from_gguf (g, &error);
        g_assert_no_error (error);
        guint ok = hz_pretok_check_ids (t, texts, ids, cases[c].base);
        g_test_message ("%s quantized (Q8_0, tokenizer.ggml.pre '%s'): %u/%u strings exact",
                        cases[c].base, pre, ok, json_array_get_length (texts));
        g_assert_cmpuint (ok, ==, json_array_get_length (texts));
      }
      g_unlink (out);
      hz_test_rm_dir (dir);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/quantize/rules/q4_k_m", test_rules_q4_k_m);
  g_test_add_func ("/quantize/rules/misc", test_rules_misc);
  g_test_add_func ("/quantize/bad-input", test_bad_input);
  for (gsize i = 0; i < G_N_ELEMENTS (distill_types); i++)
    {
      g_autofree char *path = g_strdup_printf ("/quantize/stories-distill/%s", distill_types[i]);
      g_test_add_data_func (path, distill_types[i], test_distill);
    }
  g_test_add_func ("/quantize/requantize", test_requantize);
  g_test_add_func ("/quantize/stories260K-fallback", test_stories260k);
  g_test_add_func ("/quantize/safetensors-folder", test_safetensors_folder);
  g_test_add_func ("/quantize/safetensors-qwen2-bpe", test_safetensors_qwen2_bpe);
  g_test_add_func ("/quantize/hf-folder-tokenizers", test_hf_folder_tokenizers);
  return g_test_run ();
}
