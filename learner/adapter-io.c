/* learner/adapter-io.c — PEFT safetensors and GGUF LoRA adapter files (adapter-io.h). */
#include "adapter-io.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>
#include "hanzo/engine-train.h"
#include "hanzo/json-out.h"

/* ---------------------------------------------------------------------- PEFT */

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
  return hz_json_generator_to_data (gen, NULL);
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
            const int32_t heads = hz_lora_permute_heads (lora, t);
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
            g_autofree char *key = hz_lora_peft_key (il, t, m == 0 ? 'A' : 'B');
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

/* The engine's reader, with gradients and the learner's error domain. */
static HzLora *
with_grads (HzLora *lora, GError *local, GError **error)
{
  if (lora == NULL)
    {
      hz_learn_error_from_engine (local);
      g_propagate_error (error, local);
      return NULL;
    }
  lora->grads = g_new0 (float, lora->n_params);
  return lora;
}

HzLora *
hz_lora_load_peft (const char *dir, const HzHparams *hp, GError **error)
{
  GError *local = NULL;
  HzLora *lora = hz_lora_read_peft (dir, hp, &local);
  return with_grads (lora, local, error);
}

HzLora *
hz_lora_load_gguf (const char *path, const HzHparams *hp, GError **error)
{
  GError *local = NULL;
  HzLora *lora = hz_lora_read_gguf (path, hp, &local);
  return with_grads (lora, local, error);
}

/* ---------------------------------------------------------------------- GGUF */

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
  hz_gguf_writer_set_str (w, "general.architecture", hz_arch_name (lora->arch));
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
            g_autofree char *key = hz_lora_gguf_key (il, t, m == 0 ? 'a' : 'b');
            if (!hz_gguf_writer_add_tensor (w, key, type, 2, ne, buf, bytes, TRUE, error))
              return FALSE;
          }
      }
  return hz_gguf_writer_write_file (w, path, error);
}
