/* engine/hf-import.c — a Hugging Face safetensors folder as a GGUF-to-be (see hf-import.h).
 *
 * Reference for the method (read, not copied): llama.cpp's convert_hf_to_gguf.py for the
 * Hugging Face name mapping, the Llama q/k row permutation and the llama3 rope_freqs
 * factors.
 */
#include "hf-import.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hf-tokenizer.h"
#include "json-in.h"
#include "quant.h"
#include "safetensors.h"

/* HF name → GGUF name (llama.cpp's tensor mapping for Llama/Qwen2/Qwen3); NULL to skip. */
static char *
hf_to_gguf_name (const char *hf)
{
  static const struct { const char *hf, *gguf; } top[] = {
    { "model.embed_tokens.weight", "token_embd.weight" },
    { "model.norm.weight", "output_norm.weight" },
    { "lm_head.weight", "output.weight" },
  };
  static const struct { const char *hf, *gguf; } per_layer[] = {
    { "self_attn.q_proj.weight", "attn_q.weight" }, { "self_attn.q_proj.bias", "attn_q.bias" },
    { "self_attn.k_proj.weight", "attn_k.weight" }, { "self_attn.k_proj.bias", "attn_k.bias" },
    { "self_attn.v_proj.weight", "attn_v.weight" }, { "self_attn.v_proj.bias", "attn_v.bias" },
    { "self_attn.o_proj.weight", "attn_output.weight" }, { "self_attn.o_proj.bias", "attn_output.bias" },
    { "self_attn.q_norm.weight", "attn_q_norm.weight" },
    { "self_attn.k_norm.weight", "attn_k_norm.weight" },
    { "mlp.gate_proj.weight", "ffn_gate.weight" },
    { "mlp.up_proj.weight", "ffn_up.weight" },
    { "mlp.down_proj.weight", "ffn_down.weight" },
    { "input_layernorm.weight", "attn_norm.weight" },
    { "post_attention_layernorm.weight", "ffn_norm.weight" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (top); i++)
    if (strcmp (hf, top[i].hf) == 0)
      return g_strdup (top[i].gguf);
  int layer, off = 0;
  if (sscanf (hf, "model.layers.%d.%n", &layer, &off) == 1 && off > 0 && layer >= 0)
    for (gsize i = 0; i < G_N_ELEMENTS (per_layer); i++)
      if (strcmp (hf + off, per_layer[i].hf) == 0)
        return g_strdup_printf ("blk.%d.%s", layer, per_layer[i].gguf);
  return NULL;
}

static int
cmp_str (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* Llama's q/k rows, HF order → GGUF order (convert_hf_to_gguf.py `permute`): within each
 * head the rows [first half | second half] are interleaved (row 2i ← i, 2i+1 ← half + i),
 * because GGUF llama uses adjacent-pair RoPE where HF rotates halves. `row` bytes each. */
static void
permute_rows (const uint8_t *src, uint8_t *dst, int64_t n_rows, int n_head, size_t row)
{
  const int64_t hd = n_rows / n_head, half = hd / 2;
  for (int h = 0; h < n_head; h++)
    for (int64_t i = 0; i < half; i++)
      for (int j = 0; j < 2; j++)
        memcpy (dst + (size_t) (h * hd + 2 * i + j) * row,
                src + (size_t) (h * hd + j * half + i) * row, row);
}

/* The weight files of a folder, in name order: the shards that
 * model.safetensors.index.json's "weight_map" names (each must exist), or without an index
 * every *.safetensors file. */
static GPtrArray *
hf_weight_files (const char *dir, GError **error)
{
  g_autoptr (GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *ipath = g_build_filename (dir, "model.safetensors.index.json", NULL);
  JsonParser *ip = NULL;
  JsonObject *index = hz_json_read_object (ipath, &ip, FALSE, error);
  if (!index && error && *error)
    return NULL;
  if (index)
    {
      g_autoptr (JsonParser) keep = ip;
      JsonNode *wm = json_object_get_member (index, "weight_map");
      if (!wm || !JSON_NODE_HOLDS_OBJECT (wm))
        {
          hz_gguf_fail_invalid (error, "%s: no \"weight_map\" object", ipath);
          return NULL;
        }
      g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
      JsonObject *map = json_node_get_object (wm);
      g_autoptr (GList) members = json_object_get_members (map);
      for (GList *l = members; l; l = l->next)
        {
          const char *f = hz_json_str (map, l->data);
          if (!f || strchr (f, G_DIR_SEPARATOR) || !g_str_has_suffix (f, ".safetensors"))
            {
              hz_gguf_fail_invalid (error, "%s: tensor '%s' maps to '%s', not a .safetensors file of the "
                        "folder", ipath, (const char *) l->data, f ? f : "(not a string)");
              return NULL;
            }
          if (g_hash_table_contains (seen, f))
            continue;
          g_hash_table_add (seen, (gpointer) f);
          g_autofree char *fp = g_build_filename (dir, f, NULL);
          if (!g_file_test (fp, G_FILE_TEST_IS_REGULAR))
            {
              hz_gguf_fail_invalid (error, "%s: shard '%s' (tensor '%s') is missing", ipath, f,
                        (const char *) l->data);
              return NULL;
            }
          g_ptr_array_add (files, g_strdup (f));
        }
    }
  else
    {
      GDir *d = g_dir_open (dir, 0, error);
      if (!d)
        return NULL;
      const char *e;
      while ((e = g_dir_read_name (d)))
        if (g_str_has_suffix (e, ".safetensors"))
          g_ptr_array_add (files, g_strdup (e));
      g_dir_close (d);
    }
  if (files->len == 0)
    {
      hz_gguf_fail_invalid (error, "%s: no *.safetensors files", dir);
      return NULL;
    }
  g_ptr_array_sort (files, cmp_str);
  return g_steal_pointer (&files);
}

/* llama3 rope scaling → rope_freqs.weight factors (convert_hf_to_gguf.py LlamaModel). */
static float *
llama3_rope_freqs (JsonObject *rs, double base, int head_dim, int64_t *n_out)
{
  const double factor = hz_json_dbl (rs, "factor", 8.0), lo = hz_json_dbl (rs, "low_freq_factor", 1.0),
               hi = hz_json_dbl (rs, "high_freq_factor", 4.0),
               old = hz_json_dbl (rs, "original_max_position_embeddings", 8192);
  const double lo_wl = old / lo, hi_wl = old / hi;
  int64_t n = head_dim / 2;
  float *f = g_new (float, n);
  for (int64_t i = 0; i < n; i++)
    {
      double freq = 1.0 / pow (base, (double) (2 * i) / head_dim);
      double wl = 2 * G_PI / freq;
      if (wl < hi_wl)
        f[i] = 1.0f;
      else if (wl > lo_wl)
        f[i] = (float) factor;
      else
        {
          double smooth = (old / wl - lo) / (hi - lo);
          f[i] = (float) (1.0 / ((1 - smooth) / factor + smooth));
        }
    }
  *n_out = n;
  return f;
}

gboolean
hz_hf_import_folder (HzModelSource *s, const char *dir, const char *vocab_gguf, GError **error)
{
  g_autofree char *cfg_path = g_build_filename (dir, "config.json", NULL);
  if (!g_file_test (cfg_path, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
                   "%s: a folder, but not a Hugging Face model folder (no config.json); "
                   "give a GGUF file or a folder with config.json and *.safetensors", dir);
      return FALSE;
    }
  JsonParser *cp = NULL;
  JsonObject *cfg = hz_json_read_object (cfg_path, &cp, TRUE, error);
  if (!cfg)
    return FALSE;
  hz_model_source_keep (s, cp, g_object_unref);

  const char *mt = hz_json_str (cfg, "model_type");
  const char *arch = NULL;
  if (mt && (strcmp (mt, "llama") == 0 || strcmp (mt, "mistral") == 0))
    arch = "llama";
  else if (mt && strcmp (mt, "qwen2") == 0)
    arch = "qwen2";
  else if (mt && strcmp (mt, "qwen3") == 0)
    arch = "qwen3";
  if (!arch)
    return hz_gguf_fail_invalid (error, "%s: model_type '%s' is not supported (llama, mistral, qwen2, qwen3)",
                     cfg_path, mt ? mt : "(missing)");
  const int64_t n_embd = hz_json_int (cfg, "hidden_size", -1), n_layer = hz_json_int (cfg, "num_hidden_layers", -1),
                n_head = hz_json_int (cfg, "num_attention_heads", -1), n_ff = hz_json_int (cfg, "intermediate_size", -1);
  const int64_t n_head_kv = hz_json_int (cfg, "num_key_value_heads", n_head);
  if (n_embd <= 0 || n_layer <= 0 || n_head <= 0 || n_ff <= 0 || n_head_kv <= 0 ||
      n_head % n_head_kv != 0)
    return hz_gguf_fail_invalid (error, "%s: hidden_size, num_hidden_layers, num_attention_heads, "
                     "num_key_value_heads or intermediate_size missing or inconsistent", cfg_path);
  const int64_t head_dim = hz_json_int (cfg, "head_dim", n_embd / n_head);
  const double theta = hz_json_dbl (cfg, "rope_theta", 10000.0);
  /* the GGUF keys are u32 and the RoPE tables are sized by head_dim: refuse absurd values
   * rather than truncate them or abort in an allocation (found by fuzz-hf-folder) */
  if (n_embd > G_MAXINT32 || n_layer > G_MAXINT32 || n_head > G_MAXINT32 || n_ff > G_MAXINT32 ||
      head_dim <= 0 || head_dim > 65536 || head_dim % 2 != 0)
    return hz_gguf_fail_invalid (error, "%s: hidden_size, num_hidden_layers, num_attention_heads, "
                     "intermediate_size or head_dim (%" G_GINT64_FORMAT ", even, at most "
                     "65536) out of range", cfg_path, head_dim);

  HzGgufWriter *w = s->w;
  g_autofree char *base = g_path_get_basename (dir);
  hz_gguf_writer_set_str (w, "general.architecture", arch);
  hz_gguf_writer_set_str (w, "general.name", base);
#define K(suffix) (g_snprintf (key, sizeof key, "%s.%s", arch, suffix), key)
  char key[128];
  hz_gguf_writer_set_u32 (w, K ("context_length"), (uint32_t) hz_json_int (cfg, "max_position_embeddings", 2048));
  hz_gguf_writer_set_u32 (w, K ("embedding_length"), (uint32_t) n_embd);
  hz_gguf_writer_set_u32 (w, K ("block_count"), (uint32_t) n_layer);
  hz_gguf_writer_set_u32 (w, K ("feed_forward_length"), (uint32_t) n_ff);
  hz_gguf_writer_set_u32 (w, K ("attention.head_count"), (uint32_t) n_head);
  hz_gguf_writer_set_u32 (w, K ("attention.head_count_kv"), (uint32_t) n_head_kv);
  hz_gguf_writer_set_f32 (w, K ("rope.freq_base"), (float) theta);
  hz_gguf_writer_set_f32 (w, K ("attention.layer_norm_rms_epsilon"),
                          (float) hz_json_dbl (cfg, "rms_norm_eps", 1e-6));
  if (head_dim != n_embd / n_head || strcmp (arch, "qwen3") == 0)
    {
      hz_gguf_writer_set_u32 (w, K ("attention.key_length"), (uint32_t) head_dim);
      hz_gguf_writer_set_u32 (w, K ("attention.value_length"), (uint32_t) head_dim);
    }
  hz_gguf_writer_set_u32 (w, K ("rope.dimension_count"), (uint32_t) head_dim);
  JsonNode *rsn = json_object_get_member (cfg, "rope_scaling");
  JsonObject *rs = rsn && JSON_NODE_HOLDS_OBJECT (rsn) ? json_node_get_object (rsn) : NULL;
  const char *rtype = rs ? (hz_json_str (rs, "rope_type") ? hz_json_str (rs, "rope_type") : hz_json_str (rs, "type")) : NULL;
  if (rtype && strcmp (rtype, "linear") == 0)
    {
      hz_gguf_writer_set_str (w, K ("rope.scaling.type"), "linear");
      hz_gguf_writer_set_f32 (w, K ("rope.scaling.factor"), (float) hz_json_dbl (rs, "factor", 1.0));
    }
  else if (rtype && strcmp (rtype, "yarn") == 0)
    {
      hz_gguf_writer_set_str (w, K ("rope.scaling.type"), "yarn");
      hz_gguf_writer_set_f32 (w, K ("rope.scaling.factor"), (float) hz_json_dbl (rs, "factor", 1.0));
      hz_gguf_writer_set_u32 (w, K ("rope.scaling.original_context_length"),
                              (uint32_t) hz_json_int (rs, "original_max_position_embeddings", 4096));
    }
  else if (rtype && strcmp (rtype, "llama3") == 0)
    {
      int64_t nf;
      float *f = llama3_rope_freqs (rs, theta, (int) head_dim, &nf);
      hz_model_source_keep (s, f, g_free);
      HzSrcTensor *t = g_new0 (HzSrcTensor, 1);
      t->name = g_strdup ("rope_freqs.weight");
      t->n_dims = 1;
      t->ne[0] = nf;
      t->ne[1] = t->ne[2] = t->ne[3] = 1;
      t->type = HZ_TYPE_F32;
      t->data = f;
      t->n_bytes = nf * sizeof (float);
      g_ptr_array_add (s->tensors, t);
    }
  else if (rtype && strcmp (rtype, "default") != 0)
    return hz_gguf_fail_invalid (error, "%s: rope_scaling type '%s' is not supported", cfg_path, rtype);
#undef K

  /* the weights */
  g_autoptr (GPtrArray) files = hf_weight_files (dir, error);
  if (!files)
    return FALSE;
  gboolean has_lm_head = FALSE;
  for (guint fi = 0; fi < files->len; fi++)
    {
      g_autofree char *p = g_build_filename (dir, files->pdata[fi], NULL);
      HzSafetensors *st = hz_safetensors_open (p, error);
      if (!st)
        return FALSE;
      hz_model_source_keep (s, st, (GDestroyNotify) hz_safetensors_free);
      for (guint i = 0; i < hz_safetensors_n_tensors (st); i++)
        {
          const HzSafetensor *t = hz_safetensors_tensor (st, i);
          char *gname = hf_to_gguf_name (t->name);
          if (!gname)
            {
              if (!g_str_has_suffix (t->name, "rotary_emb.inv_freq"))
                g_printerr ("hanzo: %s: skipping unknown tensor '%s'\n", p, t->name);
              continue;
            }
          if (strcmp (gname, "output.weight") == 0)
            has_lm_head = TRUE;
          uint32_t type;
          switch (t->dtype)
            {
            case HZ_ST_F32: type = HZ_TYPE_F32; break;
            case HZ_ST_F16: type = HZ_TYPE_F16; break;
            case HZ_ST_BF16: type = HZ_TYPE_BF16; break;
            default:
              g_free (gname);
              return hz_gguf_fail_invalid (error, "%s: tensor '%s' has dtype %s (F32, F16 or BF16 expected)",
                               p, t->name, hz_st_dtype_name (t->dtype));
            }
          if (t->n_dims < 1 || t->n_dims > 4)
            {
              g_free (gname);
              return hz_gguf_fail_invalid (error, "%s: tensor '%s' has %u dimensions", p, t->name, t->n_dims);
            }
          HzSrcTensor *o = g_new0 (HzSrcTensor, 1);
          o->name = gname;
          o->n_dims = t->n_dims;
          for (int k = 0; k < 4; k++)
            o->ne[k] = k < (int) t->n_dims ? t->shape[t->n_dims - 1 - k] : 1;
          o->type = type;
          o->data = t->data;
          o->n_bytes = t->n_bytes;
          g_ptr_array_add (s->tensors, o);
          const gboolean is_q = g_str_has_suffix (gname, "attn_q.weight") || g_str_has_suffix (gname, "attn_q.bias");
          const gboolean is_k = g_str_has_suffix (gname, "attn_k.weight") || g_str_has_suffix (gname, "attn_k.bias");
          const gboolean permute = strcmp (arch, "llama") == 0 && (is_q || is_k);
          const size_t esz = hz_st_dtype_size (t->dtype);
          /* a bias is permuted element by element (its "rows" are single values) */
          const int64_t nel = (int64_t) (o->n_bytes / esz),
                        rows = o->n_dims == 1 ? nel : nel / o->ne[0];
          if (permute && rows % (2 * (is_q ? n_head : n_head_kv)) != 0)
            return hz_gguf_fail_invalid (error, "%s: tensor '%s': %" G_GINT64_FORMAT " rows do not split "
                             "into %d heads", p, t->name, rows, (int) (is_q ? n_head : n_head_kv));
          if (o->n_dims == 1)
            {
              /* 1-D tensors become F32, as convert_hf_to_gguf writes them */
              float *f = g_try_new (float, nel);
              if (!f)
                return hz_gguf_fail_invalid (error, "%s: out of memory for tensor '%s'", p, t->name);
              hz_quant_traits (type)->to_float (t->data, f, nel);
              if (permute)
                {
                  float *g = g_new (float, nel);
                  permute_rows ((const uint8_t *) f, (uint8_t *) g, rows,
                                (int) (is_q ? n_head : n_head_kv), sizeof (float));
                  g_free (f);
                  f = g;
                }
              o->owned = f;
              o->type = HZ_TYPE_F32;
              o->data = f;
              o->n_bytes = nel * sizeof (float);
            }
          else if (permute || (type == HZ_TYPE_F32 && (guintptr) t->data % sizeof (float) != 0))
            {
              /* a copy: Llama q/k rows permuted (convert_hf_to_gguf.py `permute`) in the
               * source's format, or float32 data that the file does not align to 4 bytes
               * (others are used in place from the mapping) */
              uint8_t *b = g_try_malloc (o->n_bytes);
              if (!b)
                return hz_gguf_fail_invalid (error, "%s: out of memory for tensor '%s'", p, t->name);
              if (permute)
                permute_rows (t->data, b, rows, (int) (is_q ? n_head : n_head_kv), o->ne[0] * esz);
              else
                memcpy (b, t->data, o->n_bytes);
              o->owned = b;
              o->data = b;
            }
        }
    }
  (void) has_lm_head;  /* tied embeddings: no output.weight (the engine ties it) */

  if (vocab_gguf)
    {
      HzGguf *v = hz_gguf_open (vocab_gguf, error);
      if (!v)
        return FALSE;
      hz_model_source_keep (s, v, (GDestroyNotify) hz_gguf_free);
      for (int64_t i = 0; i < hz_gguf_n_kv (v); i++)
        {
          HzGgufStr k = hz_gguf_key (v, i);
          if (k.len > 10 && memcmp (k.ptr, "tokenizer.", 10) == 0)
            hz_gguf_writer_copy_kv (w, v, i);
        }
    }
  else if (!hz_hf_tokenizer_import (w, dir, hz_json_int (cfg, "vocab_size", 0), cfg, error))
    return FALSE;

  s->arch = g_strdup (arch);
  s->info.arch = s->arch;
  s->info.n_layer = (int32_t) n_layer;
  s->info.n_head = (int32_t) n_head;
  s->info.n_head_kv = (int32_t) n_head_kv;
  s->info.n_expert = 0;
  return TRUE;
}
