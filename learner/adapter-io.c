/* learner/adapter-io.c — PEFT safetensors and GGUF LoRA adapter files (adapter-io.h). */
#include "adapter-io.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>
#include "gguf.h"

/* ------------------------------------------------------------ q/k row order */

void
hz_lora_permute_qk_rows (float *rows, int64_t n_rows, int64_t row_len, int32_t n_head,
                         gboolean to_gguf)
{
  g_return_if_fail (n_head > 0 && n_rows % n_head == 0 && (n_rows / n_head) % 2 == 0);
  const int64_t hd = n_rows / n_head, half = hd / 2;
  g_autofree float *tmp = g_new (float, hd * row_len);
  for (int32_t h = 0; h < n_head; h++)
    {
      float *head = rows + h * hd * row_len;
      for (int64_t i = 0; i < half; i++)
        for (int j = 0; j < 2; j++)
          {
            const int64_t gguf = 2 * i + j, hf = j * half + i;
            const int64_t dst = to_gguf ? gguf : hf, src = to_gguf ? hf : gguf;
            memcpy (tmp + dst * row_len, head + src * row_len, row_len * sizeof (float));
          }
      memcpy (head, tmp, hd * row_len * sizeof (float));
    }
}

gboolean
hz_lora_arch_permutes_qk (HzArch arch)
{
  return arch == HZ_ARCH_LLAMA;
}

/* heads of a target's rows when it is permuted, else 0 */
static int32_t
permute_heads (const HzLora *lora, HzLoraTarget t)
{
  if (!hz_lora_arch_permutes_qk (lora->arch))
    return 0;
  return t == HZ_LORA_Q ? lora->n_head : t == HZ_LORA_K ? lora->n_head_kv : 0;
}

static const char *
arch_name (HzArch arch)
{
  static const char *const names[] = { "llama", "qwen2", "qwen3" };
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    {
      HzArch a;
      if (hz_arch_from_name (names[i], &a) && a == arch)
        return names[i];
    }
  return NULL;
}

/* --------------------------------------------------------------- conversions */

static gboolean
st_to_float (const HzSafetensor *t, float *out, gsize n, GError **error)
{
  const guint8 *p = t->data;
  for (gsize i = 0; i < n; i++)
    switch (t->dtype)
      {
      case HZ_ST_F32: memcpy (&out[i], p + 4 * i, 4); break;
      case HZ_ST_BF16: { guint16 h; memcpy (&h, p + 2 * i, 2); out[i] = hz_bf16_to_fp32 (h); } break;
      case HZ_ST_F16: { guint16 h; memcpy (&h, p + 2 * i, 2); out[i] = hz_fp16_to_fp32 (h); } break;
      default:
        g_set_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_FORMAT,
                     "tensor '%s' has dtype %s; adapters must be F32, F16 or BF16",
                     t->name, hz_st_dtype_name (t->dtype));
        return FALSE;
      }
  return TRUE;
}

/* ---------------------------------------------------------------------- PEFT */

static char *
peft_key (int32_t il, HzLoraTarget t, char ab)
{
  return g_strdup_printf ("base_model.model.model.layers.%d.%s.%s.lora_%c.weight", il,
                          hz_lora_target_peft_parent (t), hz_lora_target_peft_name (t), ab);
}

static char *
peft_config_json (const HzLora *lora, const char *base_model)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "peft_type");
  json_builder_add_string_value (b, "LORA");
  json_builder_set_member_name (b, "task_type");
  json_builder_add_string_value (b, "CAUSAL_LM");
  json_builder_set_member_name (b, "base_model_name_or_path");
  if (base_model)
    json_builder_add_string_value (b, base_model);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "r");
  json_builder_add_int_value (b, lora->config.r);
  json_builder_set_member_name (b, "lora_alpha");
  /* an integer when integral, as PEFT writes it (json-glib 1.6 prints some doubles, e.g.
   * 1e-05, in a form that is not JSON) */
  if (lora->config.alpha == floorf (lora->config.alpha) && fabsf (lora->config.alpha) < 1e9f)
    json_builder_add_int_value (b, (gint64) lora->config.alpha);
  else
    json_builder_add_double_value (b, lora->config.alpha);
  json_builder_set_member_name (b, "lora_dropout");
  json_builder_add_double_value (b, 0.0);
  json_builder_set_member_name (b, "use_rslora");
  json_builder_add_boolean_value (b, lora->config.use_rslora);
  json_builder_set_member_name (b, "target_modules");
  json_builder_begin_array (b);
  for (int t = 0; t < HZ_LORA_N_TARGETS; t++)
    if (lora->config.targets & HZ_LORA_BIT (t))
      json_builder_add_string_value (b, hz_lora_target_peft_name (t));
  json_builder_end_array (b);
  json_builder_set_member_name (b, "bias");
  json_builder_add_string_value (b, "none");
  json_builder_set_member_name (b, "fan_in_fan_out");
  json_builder_add_boolean_value (b, FALSE);
  json_builder_set_member_name (b, "init_lora_weights");
  json_builder_add_boolean_value (b, TRUE);
  json_builder_set_member_name (b, "inference_mode");
  json_builder_add_boolean_value (b, TRUE);
  json_builder_set_member_name (b, "use_dora");
  json_builder_add_boolean_value (b, FALSE);
  json_builder_set_member_name (b, "modules_to_save");
  json_builder_add_null_value (b);
  json_builder_set_member_name (b, "layers_to_transform");
  json_builder_add_null_value (b);
  json_builder_end_object (b);

  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  return json_generator_to_data (gen, NULL);
}

gboolean
hz_lora_save_peft (const HzLora *lora, const char *dir, HzStDtype dtype, const char *base_model,
                   GError **error)
{
  if (dtype != HZ_ST_F32 && dtype != HZ_ST_BF16)
    {
      g_set_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_INVALID,
                   "PEFT adapters are written as F32 or BF16, not %s", hz_st_dtype_name (dtype));
      return FALSE;
    }
  if (g_mkdir_with_parents (dir, 0755) != 0)
    {
      int e = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e),
                   "cannot create '%s': %s", dir, g_strerror (e));
      return FALSE;
    }
  g_autoptr (HzSafetensorsWriter) w = hz_safetensors_writer_new ();
  hz_safetensors_writer_set_metadata (w, "format", "pt");
  const int32_t r = lora->config.r;
  for (int32_t il = 0; il < lora->n_layer; il++)
    for (int t = 0; t < HZ_LORA_N_TARGETS; t++)
      {
        const HzLoraSlot *s = hz_lora_slot (lora, il, t);
        if (s == NULL)
          continue;
        for (int m = 0; m < 2; m++)
          {
            const int64_t rows = m == 0 ? r : s->n_out, cols = m == 0 ? s->n_in : r;
            const gsize n = (gsize) rows * cols;
            g_autofree float *v = g_memdup2 (lora->params + (m == 0 ? s->off_a : s->off_b),
                                             n * sizeof (float));
            const int32_t heads = permute_heads (lora, t);
            if (m == 1 && heads > 0)
              hz_lora_permute_qk_rows (v, rows, cols, heads, FALSE);
            g_autofree guint16 *half = NULL;
            const void *data = v;
            if (dtype == HZ_ST_BF16)
              {
                half = g_new (guint16, n);
                for (gsize i = 0; i < n; i++)
                  half[i] = hz_fp32_to_bf16 (v[i]);
                data = half;
              }
            const int64_t shape[2] = { rows, cols };
            g_autofree char *key = peft_key (il, t, m == 0 ? 'A' : 'B');
            if (!hz_safetensors_writer_add (w, key, dtype, 2, shape, data,
                                            n * hz_st_dtype_size (dtype), error))
              return FALSE;
          }
      }
  g_autofree char *st_path = g_build_filename (dir, "adapter_model.safetensors", NULL);
  g_autofree char *cfg_path = g_build_filename (dir, "adapter_config.json", NULL);
  g_autofree char *cfg = peft_config_json (lora, base_model);
  return hz_safetensors_writer_write_file (w, st_path, error) &&
         g_file_set_contents (cfg_path, cfg, -1, error);
}

static gboolean
bad_config (GError **error, const char *path, const char *what)
{
  g_set_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_FORMAT, "%s: %s", path, what);
  return FALSE;
}

/* a config member that must be absent, null, false, or an empty object/array */
static gboolean
unset_member (JsonObject *o, const char *name)
{
  JsonNode *n = json_object_get_member (o, name);
  if (n == NULL || JSON_NODE_HOLDS_NULL (n))
    return TRUE;
  if (JSON_NODE_HOLDS_OBJECT (n))
    return json_object_get_size (json_node_get_object (n)) == 0;
  if (JSON_NODE_HOLDS_ARRAY (n))
    return json_array_get_length (json_node_get_array (n)) == 0;
  if (JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_BOOLEAN)
    return !json_node_get_boolean (n);
  return FALSE;
}

static gboolean
parse_peft_config (const char *path, HzLoraConfig *cfg, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  if (!json_parser_load_from_file (parser, path, error))
    return FALSE;
  JsonNode *root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return bad_config (error, path, "not a JSON object");
  JsonObject *o = json_node_get_object (root);
  const char *type = json_object_get_string_member_with_default (o, "peft_type", "LORA");
  if (g_strcmp0 (type, "LORA") != 0)
    return bad_config (error, path, "peft_type is not LORA");
  hz_lora_config_init (cfg);
  cfg->r = (int32_t) json_object_get_int_member_with_default (o, "r", 8);
  cfg->alpha = (float) json_object_get_double_member_with_default (o, "lora_alpha", 8);
  cfg->use_rslora = json_object_get_boolean_member_with_default (o, "use_rslora", FALSE);
  static const char *const unsupported[] = {
    "layers_to_transform", "rank_pattern", "alpha_pattern", "use_dora", "modules_to_save",
    "fan_in_fan_out",
  };
  for (gsize i = 0; i < G_N_ELEMENTS (unsupported); i++)
    if (!unset_member (o, unsupported[i]))
      {
        g_autofree char *msg = g_strdup_printf ("unsupported option '%s'", unsupported[i]);
        return bad_config (error, path, msg);
      }
  JsonNode *tm = json_object_get_member (o, "target_modules");
  cfg->targets = 0;
  if (tm && JSON_NODE_HOLDS_VALUE (tm) && json_node_get_value_type (tm) == G_TYPE_STRING)
    {
      const char *s = json_node_get_string (tm);
      HzLoraTarget t;
      if (g_strcmp0 (s, "all-linear") == 0)
        cfg->targets = HZ_LORA_TARGETS_ALL;
      else if (hz_lora_target_from_name (s, &t))
        cfg->targets = HZ_LORA_BIT (t);
      else
        return bad_config (error, path, "target_modules regular expressions are not supported");
    }
  else if (tm && JSON_NODE_HOLDS_ARRAY (tm))
    {
      JsonArray *a = json_node_get_array (tm);
      for (guint i = 0; i < json_array_get_length (a); i++)
        {
          HzLoraTarget t;
          const char *s = json_array_get_string_element (a, i);
          if (s == NULL || !hz_lora_target_from_name (s, &t))
            return bad_config (error, path, "target_modules names an unknown module");
          cfg->targets |= HZ_LORA_BIT (t);
        }
    }
  else
    return bad_config (error, path, "target_modules missing");
  return TRUE;
}

/* Fill one parameter block (rows x cols) from a tensor, checking its shape. */
static gboolean
fill_block (float *dst, const HzSafetensor *t, const char *key, int64_t rows, int64_t cols,
            GError **error)
{
  if (t == NULL)
    {
      g_set_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_FORMAT, "adapter lacks '%s'", key);
      return FALSE;
    }
  if (t->n_dims != 2 || t->shape[0] != rows || t->shape[1] != cols)
    {
      g_set_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_MISMATCH,
                   "'%s' should be [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]", key, rows, cols);
      return FALSE;
    }
  return st_to_float (t, dst, (gsize) rows * cols, error);
}

HzLora *
hz_lora_load_peft (const char *dir, const HzHparams *hp, GError **error)
{
  g_autofree char *cfg_path = g_build_filename (dir, "adapter_config.json", NULL);
  g_autofree char *st_path = g_build_filename (dir, "adapter_model.safetensors", NULL);
  HzLoraConfig cfg;
  if (!parse_peft_config (cfg_path, &cfg, error))
    return NULL;
  g_autoptr (HzSafetensors) st = hz_safetensors_open (st_path, error);
  if (st == NULL)
    return NULL;
  g_autoptr (HzLora) lora = hz_lora_new (hp, &cfg, error);
  if (lora == NULL)
    return NULL;

  guint used = 0;
  for (int32_t il = 0; il < lora->n_layer; il++)
    for (int t = 0; t < HZ_LORA_N_TARGETS; t++)
      {
        const HzLoraSlot *s = hz_lora_slot (lora, il, t);
        if (s == NULL)
          continue;
        g_autofree char *ka = peft_key (il, t, 'A');
        g_autofree char *kb = peft_key (il, t, 'B');
        float *B = lora->params + s->off_b;
        if (!fill_block (lora->params + s->off_a, hz_safetensors_find (st, ka), ka, cfg.r,
                         s->n_in, error) ||
            !fill_block (B, hz_safetensors_find (st, kb), kb, s->n_out, cfg.r, error))
          return NULL;
        const int32_t heads = permute_heads (lora, t);
        if (heads > 0)
          hz_lora_permute_qk_rows (B, s->n_out, cfg.r, heads, TRUE);
        used += 2;
      }
  if (used != hz_safetensors_n_tensors (st))
    {
      g_set_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_MISMATCH,
                   "%s holds %u tensors but the config and model account for %u "
                   "(more layers than the model?)", st_path, hz_safetensors_n_tensors (st), used);
      return NULL;
    }
  return g_steal_pointer (&lora);
}

/* ---------------------------------------------------------------------- GGUF */

static char *
gguf_key (int32_t il, HzLoraTarget t, char ab)
{
  return g_strdup_printf ("blk.%d.%s.weight.lora_%c", il, hz_lora_target_gguf_name (t), ab);
}

gboolean
hz_lora_save_gguf (const HzLora *lora, const char *path, HzType type, GError **error)
{
  if (type != HZ_TYPE_F32 && type != HZ_TYPE_F16 && type != HZ_TYPE_BF16)
    {
      g_set_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_INVALID,
                   "GGUF LoRA tensors are written as F32, F16 or BF16");
      return FALSE;
    }
  const HzQuantTraits *qt = hz_quant_traits (type);
  const int32_t r = lora->config.r;
  g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
  hz_gguf_writer_set_str (w, "general.architecture", arch_name (lora->arch));
  hz_gguf_writer_set_str (w, "general.type", "adapter");
  hz_gguf_writer_set_str (w, "adapter.type", "lora");
  const double eff_alpha = lora->config.use_rslora ? lora->config.alpha * sqrt ((double) r)
                                                   : lora->config.alpha;
  hz_gguf_writer_set_f32 (w, "adapter.lora.alpha", (float) eff_alpha);
  hz_gguf_writer_set_f32 (w, "hanzo.lora.alpha", lora->config.alpha);
  hz_gguf_writer_set_bool (w, "hanzo.lora.use_rslora", lora->config.use_rslora);

  for (int32_t il = 0; il < lora->n_layer; il++)
    for (int t = 0; t < HZ_LORA_N_TARGETS; t++)
      {
        const HzLoraSlot *s = hz_lora_slot (lora, il, t);
        if (s == NULL)
          continue;
        for (int m = 0; m < 2; m++)
          {
            const int64_t rows = m == 0 ? r : s->n_out, cols = m == 0 ? s->n_in : r;
            const gsize n = (gsize) rows * cols;
            const float *v = lora->params + (m == 0 ? s->off_a : s->off_b);
            const gsize bytes = n * qt->block_bytes;
            g_autofree guint8 *buf = g_malloc (bytes);
            qt->from_float (v, buf, (int64_t) n);
            const int64_t ne[2] = { cols, rows };
            g_autofree char *key = gguf_key (il, t, m == 0 ? 'a' : 'b');
            if (!hz_gguf_writer_add_tensor (w, key, type, 2, ne, buf, bytes, TRUE, error))
              return FALSE;
          }
      }
  return hz_gguf_writer_write_file (w, path, error);
}

static gboolean
gguf_fmt_error (GError **error, const char *path, const char *what)
{
  g_set_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_FORMAT, "%s: %s", path, what);
  return FALSE;
}

HzLora *
hz_lora_load_gguf (const char *path, const HzHparams *hp, GError **error)
{
  g_autoptr (HzGguf) g = hz_gguf_open (path, error);
  if (g == NULL)
    return NULL;
  g_autofree char *gtype = hz_gguf_get_str (g, "general.type");
  g_autofree char *atype = hz_gguf_get_str (g, "adapter.type");
  g_autofree char *arch = hz_gguf_get_str (g, "general.architecture");
  if (g_strcmp0 (gtype, "adapter") != 0 || g_strcmp0 (atype, "lora") != 0)
    return gguf_fmt_error (error, path, "not a LoRA adapter (general.type / adapter.type)"), NULL;
  HzArch a;
  if (arch == NULL || !hz_arch_from_name (arch, &a) || a != hp->arch)
    {
      g_set_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_MISMATCH,
                   "%s: adapter architecture '%s' does not match the model's '%s'", path,
                   arch ? arch : "(none)", arch_name (hp->arch));
      return NULL;
    }

  /* targets and rank from the tensors of layer 0 */
  HzLoraConfig cfg;
  hz_lora_config_init (&cfg);
  cfg.targets = 0;
  cfg.r = 0;
  for (int t = 0; t < HZ_LORA_N_TARGETS; t++)
    {
      g_autofree char *ka = gguf_key (0, t, 'a');
      const HzGgufTensor *ta = hz_gguf_find_tensor (g, ka);
      if (ta == NULL)
        continue;
      cfg.targets |= HZ_LORA_BIT (t);
      if (cfg.r != 0 && ta->ne[1] != cfg.r)
        return gguf_fmt_error (error, path, "adapters of different ranks"), NULL;
      cfg.r = (int32_t) ta->ne[1];
    }
  if (cfg.targets == 0)
    return gguf_fmt_error (error, path, "no lora_a tensor in layer 0"), NULL;
  float alpha = 0;
  gboolean rs = FALSE;
  if (hz_gguf_get_f32 (g, "hanzo.lora.alpha", &alpha))
    hz_gguf_get_bool (g, "hanzo.lora.use_rslora", &rs);
  else if (!hz_gguf_get_f32 (g, "adapter.lora.alpha", &alpha) || alpha == 0)
    alpha = (float) cfg.r;   /* llama.cpp: no alpha means scale 1 */
  cfg.alpha = alpha;
  cfg.use_rslora = rs;
  g_autoptr (HzLora) lora = hz_lora_new (hp, &cfg, error);
  if (lora == NULL)
    return NULL;

  int64_t used = 0;
  for (int32_t il = 0; il < lora->n_layer; il++)
    for (int t = 0; t < HZ_LORA_N_TARGETS; t++)
      {
        const HzLoraSlot *s = hz_lora_slot (lora, il, t);
        if (s == NULL)
          continue;
        for (int m = 0; m < 2; m++)
          {
            g_autofree char *key = gguf_key (il, t, m == 0 ? 'a' : 'b');
            const HzGgufTensor *ti = hz_gguf_find_tensor (g, key);
            const int64_t rows = m == 0 ? cfg.r : s->n_out, cols = m == 0 ? s->n_in : cfg.r;
            if (ti == NULL)
              {
                g_set_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_FORMAT,
                             "%s: adapter lacks '%s'", path, key);
                return NULL;
              }
            if (ti->ne[0] != cols || ti->ne[1] != rows || ti->ne[2] != 1 || ti->ne[3] != 1)
              {
                g_set_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_MISMATCH,
                             "%s: '%s' should have ne [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]",
                             path, key, cols, rows);
                return NULL;
              }
            const HzQuantTraits *qt = hz_quant_traits (ti->type);
            if (qt == NULL || qt->to_float == NULL || cols % qt->block_elems != 0)
              {
                g_set_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_FORMAT,
                             "%s: '%s' has an unusable tensor type", path, key);
                return NULL;
              }
            qt->to_float (ti->data, lora->params + (m == 0 ? s->off_a : s->off_b), rows * cols);
            used++;
          }
      }
  /* every other tensor must be a LoRA tensor we did not expect: refuse silently-ignored
   * layers or targets */
  if (used != hz_gguf_n_tensors (g))
    {
      g_set_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_MISMATCH,
                   "%s holds %" G_GINT64_FORMAT " tensors, the model accounts for %" G_GINT64_FORMAT,
                   path, hz_gguf_n_tensors (g), used);
      return NULL;
    }
  return g_steal_pointer (&lora);
}
