/* tests/engine/hf-folder.c — see hf-folder.h. */
#include "hf-folder.h"

#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

#include "gguf.h"
#include "quant.h"
#include "safetensors.h"

static uint32_t
key_u32 (const HzGguf *g, const char *key, uint32_t def)
{
  uint32_t v;
  return hz_gguf_get_u32 (g, key, &v) ? v : def;
}

/* GGUF name → HF name (convert_hf_to_gguf.py's mapping for Llama/Qwen2/Qwen3). */
static char *
hf_name (const char *name, int *layer)
{
  static const struct { const char *gguf, *hf; } map[] = {
    { "attn_q.weight", "self_attn.q_proj.weight" }, { "attn_k.weight", "self_attn.k_proj.weight" },
    { "attn_v.weight", "self_attn.v_proj.weight" }, { "attn_output.weight", "self_attn.o_proj.weight" },
    { "ffn_gate.weight", "mlp.gate_proj.weight" }, { "ffn_up.weight", "mlp.up_proj.weight" },
    { "ffn_down.weight", "mlp.down_proj.weight" }, { "attn_norm.weight", "input_layernorm.weight" },
    { "ffn_norm.weight", "post_attention_layernorm.weight" },
    { "attn_q.bias", "self_attn.q_proj.bias" }, { "attn_k.bias", "self_attn.k_proj.bias" },
    { "attn_v.bias", "self_attn.v_proj.bias" }, { "attn_output.bias", "self_attn.o_proj.bias" },
    { "attn_q_norm.weight", "self_attn.q_norm.weight" },
    { "attn_k_norm.weight", "self_attn.k_norm.weight" },
  };
  int off = 0;
  *layer = -1;
  if (strcmp (name, "token_embd.weight") == 0)
    return g_strdup ("model.embed_tokens.weight");
  if (strcmp (name, "output.weight") == 0)
    return g_strdup ("lm_head.weight");
  if (strcmp (name, "output_norm.weight") == 0)
    return g_strdup ("model.norm.weight");
  if (sscanf (name, "blk.%d.%n", layer, &off) == 1)
    for (gsize k = 0; k < G_N_ELEMENTS (map); k++)
      if (strcmp (name + off, map[k].gguf) == 0)
        return g_strdup_printf ("model.layers.%d.%s", *layer, map[k].hf);
  return NULL;
}

void
hz_test_write_hf_folder (const char *gguf_path, const char *dir, HzHfDtype dtype, gboolean index)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (HzGguf) g = hz_gguf_open (gguf_path, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  g_autofree char *arch = hz_gguf_get_str (g, "general.architecture");
  g_assert_nonnull (arch);
  const gboolean llama = strcmp (arch, "llama") == 0;
  char key[128];
#define K(suffix) (g_snprintf (key, sizeof key, "%s.%s", arch, suffix), key)
  const uint32_t n_embd = key_u32 (g, K ("embedding_length"), 0),
                 n_layer = key_u32 (g, K ("block_count"), 0),
                 n_ff = key_u32 (g, K ("feed_forward_length"), 0),
                 n_head = key_u32 (g, K ("attention.head_count"), 0),
                 n_kv = key_u32 (g, K ("attention.head_count_kv"), n_head),
                 ctx = key_u32 (g, K ("context_length"), 2048);
  g_assert_true (n_embd && n_layer && n_ff && n_head);
  const uint32_t head_dim = key_u32 (g, K ("attention.key_length"), n_embd / n_head);
  float eps = 1e-5f, base = 10000.0f;
  hz_gguf_get_f32 (g, K ("attention.layer_norm_rms_epsilon"), &eps);
  hz_gguf_get_f32 (g, K ("rope.freq_base"), &base);
#undef K
  const gboolean tied = hz_gguf_find_tensor (g, "output.weight") == NULL;
  const HzGgufTensor *te = hz_gguf_find_tensor (g, "token_embd.weight");
  g_assert_nonnull (te);
  g_autofree char *cfg = g_strdup_printf (
    "{\"model_type\":\"%s\",\"hidden_size\":%u,\"head_dim\":%u,"
    "\"num_hidden_layers\":%u,\"intermediate_size\":%u,\"num_attention_heads\":%u,"
    "\"num_key_value_heads\":%u,\"max_position_embeddings\":%u,\"rms_norm_eps\":%.9g,"
    "\"rope_theta\":%.9g,\"tie_word_embeddings\":%s,\"vocab_size\":%" G_GINT64_FORMAT ","
    "\"torch_dtype\":\"%s\"}",
    arch, n_embd, head_dim, n_layer, n_ff, n_head, n_kv, ctx, eps, base, tied ? "true" : "false",
    te->ne[1], dtype == HZ_HF_BF16 ? "bfloat16" : dtype == HZ_HF_F16 ? "float16" : "float32");
  g_autofree char *cfg_path = g_build_filename (dir, "config.json", NULL);
  g_assert_true (g_file_set_contents (cfg_path, cfg, -1, NULL));

  static const char *const shard[2] = { "model-00001-of-00002.safetensors",
                                        "model-00002-of-00002.safetensors" };
  g_autoptr (HzSafetensorsWriter) w1 = hz_safetensors_writer_new ();
  g_autoptr (HzSafetensorsWriter) w2 = hz_safetensors_writer_new ();
  g_autoptr (GString) wmap = g_string_new ("{\"metadata\":{},\"weight_map\":{");
  for (int64_t i = 0; i < hz_gguf_n_tensors (g); i++)
    {
      const HzGgufTensor *t = hz_gguf_tensor (g, i);
      g_autofree char *name = g_strndup (t->name.ptr, t->name.len);
      int l;
      g_autofree char *hf = hf_name (name, &l);
      if (!hf)
        g_error ("hf-folder: no HF name for tensor '%s'", name);
      g_assert_cmpuint (t->type, ==, HZ_TYPE_F32);
      g_autofree float *f = g_memdup2 (t->data, t->n_bytes);
      const gboolean q = llama && (g_str_has_suffix (name, "attn_q.weight") ||
                                   g_str_has_suffix (name, "attn_q.bias")),
                     k = llama && (g_str_has_suffix (name, "attn_k.weight") ||
                                   g_str_has_suffix (name, "attn_k.bias"));
      /* a bias is permuted as a column: one element per row */
      const int64_t rows = t->n_dims == 1 ? t->ne[0] : t->ne[1], cols = t->n_dims == 1 ? 1 : t->ne[0];
      if (q || k)
        {
          /* GGUF row (h, 2i + j) came from HF row (h, j * half + i) */
          const int heads = (int) (q ? n_head : n_kv);
          const int64_t hd = rows / heads, half = hd / 2;
          g_autofree float *u = g_new (float, rows * cols);
          for (int h = 0; h < heads; h++)
            for (int64_t i2 = 0; i2 < half; i2++)
              for (int j = 0; j < 2; j++)
                memcpy (u + (h * hd + j * half + i2) * cols, f + (h * hd + 2 * i2 + j) * cols,
                        cols * sizeof (float));
          memcpy (f, u, rows * cols * sizeof (float));
        }
      const guint nd = t->n_dims;
      int64_t shape[2] = { rows, cols };
      const int s = l >= (int) n_layer / 2 ? 1 : 0;
      HzSafetensorsWriter *w = s ? w2 : w1;
      g_string_append_printf (wmap, "%s\"%s\":\"%s\"", wmap->str[wmap->len - 1] == '{' ? "" : ",",
                              hf, shard[s]);
      if (dtype != HZ_HF_F32 && nd == 2)
        {
          const int64_t n = rows * cols;
          g_autofree uint16_t *h = g_new (uint16_t, n);
          for (int64_t e = 0; e < n; e++)
            h[e] = dtype == HZ_HF_BF16 ? hz_fp32_to_bf16 (f[e]) : hz_fp32_to_fp16 (f[e]);
          g_assert_true (hz_safetensors_writer_add (w, hf, dtype == HZ_HF_BF16 ? HZ_ST_BF16 : HZ_ST_F16,
                                                    nd, shape, h, n * 2, NULL));
        }
      else
        g_assert_true (hz_safetensors_writer_add (w, hf, HZ_ST_F32, nd, shape, f, t->n_bytes, NULL));
    }
  g_string_append (wmap, "}}");
  for (int s = 0; s < 2; s++)
    {
      g_autofree char *p = g_build_filename (dir, shard[s], NULL);
      g_assert_true (hz_safetensors_writer_write_file (s ? w2 : w1, p, NULL));
    }
  if (index)
    {
      g_autofree char *p = g_build_filename (dir, "model.safetensors.index.json", NULL);
      g_assert_true (g_file_set_contents (p, wmap->str, -1, NULL));
    }
}

void
hz_test_rm_dir (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *e;
  while (d && (e = g_dir_read_name (d)))
    {
      g_autofree char *p = g_build_filename (dir, e, NULL);
      g_unlink (p);
    }
  g_rmdir (dir);
}
