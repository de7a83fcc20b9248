/* learner/merge.c — bake a LoRA adapter into a GGUF (see merge.h). */
#include <stdio.h>
#include <string.h>
#include "merge.h"
#include "hanzo/engine-train.h"

/* Adapter slot of tensor name "blk.N.<stem>.weight", or NULL. */
static const HzLoraSlot *
slot_for (const HzLora *lora, const char *name)
{
  int layer;
  char stem[64];
  if (sscanf (name, "blk.%d.%63[^.].weight", &layer, stem) != 2 || layer < 0
      || layer >= lora->n_layer || !g_str_has_suffix (name, ".weight"))
    return NULL;
  g_autofree char *want = g_strdup_printf ("blk.%d.%s.weight", layer, stem);
  HzLoraTarget t;
  if (!g_str_equal (want, name) || !hz_lora_target_from_name (stem, &t))
    return NULL;
  return hz_lora_slot (lora, layer, t);
}

gboolean
hz_lora_merge_gguf (const char *base_path, const HzLora *lora, int type, const char *out_path,
                    GError **error)
{
  const HzQuantTraits *force = NULL;
  if (type >= 0 && ((force = hz_quant_traits ((uint32_t) type)) == NULL || !force->from_float))
    {
      g_set_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_INVALID,
                   "cannot quantize to type %d without an importance matrix", type);
      return FALSE;
    }
  g_autoptr (HzGguf) g = hz_gguf_open (base_path, error);
  if (g == NULL)
    return FALSE;
  g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
  for (int64_t i = 0; i < hz_gguf_n_kv (g); i++)
    hz_gguf_writer_copy_kv (w, g, i);
  g_autofree char *name = hz_gguf_get_str (g, "general.name");
  g_autofree char *merged_name = g_strdup_printf ("%s (merged)", name ? name : "model");
  hz_gguf_writer_set_str (w, "general.name", merged_name);
  hz_gguf_writer_set_f32 (w, "hanzo.merged_adapter.alpha", lora->config.alpha);
  hz_gguf_writer_set_u32 (w, "hanzo.merged_adapter.r", (uint32_t) lora->config.r);
  int n_merged = 0;
  for (int64_t i = 0; i < hz_gguf_n_tensors (g); i++)
    {
      const HzGgufTensor *t = hz_gguf_tensor (g, i);
      g_autofree char *tname = g_strndup (t->name.ptr, t->name.len);
      const HzLoraSlot *s = slot_for (lora, tname);
      if (s == NULL)
        {
          if (!hz_gguf_writer_copy_tensor (w, g, i, FALSE, error))
            return FALSE;
          continue;
        }
      const int64_t n_in = t->ne[0], n_out = t->ne[1];
      if (n_in != s->n_in || n_out != s->n_out)
        {
          g_set_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_MISMATCH,
                       "%s is [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "], the adapter expects"
                       " [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]", tname, n_in, n_out,
                       s->n_in, s->n_out);
          return FALSE;
        }
      const HzQuantTraits *src = hz_quant_traits (t->type);
      /* a forced type whose blocks do not tile the rows keeps the source type */
      const HzQuantTraits *dst = force && n_in % force->block_elems == 0 ? force : src;
      if (dst->from_float == NULL || n_in % dst->block_elems != 0)
        {
          g_set_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_INVALID,
                       "%s: cannot re-quantize to %s", tname, dst->name);
          return FALSE;
        }
      g_autofree float *W = g_new (float, n_in * n_out);
      src->to_float (t->data, W, n_in * n_out);
      const int r = lora->config.r;
      const float *A = lora->params + s->off_a, *B = lora->params + s->off_b;
      for (int64_t o = 0; o < n_out; o++)
        for (int k = 0; k < r; k++)
          {
            const float c = lora->scaling * B[o * r + k];
            if (c == 0)
              continue;
            float *row = W + o * n_in;
            const float *a = A + (int64_t) k * n_in;
            for (int64_t j = 0; j < n_in; j++)
              row[j] += c * a[j];
          }
      const gsize bytes = hz_quant_row_size (dst->type, n_in) * n_out;
      g_autofree guint8 *q = g_malloc (bytes);
      dst->from_float (W, q, n_in * n_out);
      if (!hz_gguf_writer_add_tensor (w, tname, dst->type, t->n_dims, t->ne, q, bytes, TRUE,
                                      error))
        return FALSE;
      n_merged++;
    }
  if (n_merged == 0 && lora->n_params > 0)
    {
      g_set_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_MISMATCH,
                   "no tensor of %s carries an adapter", base_path);
      return FALSE;
    }
  return hz_gguf_writer_write_file (w, out_path, error);
}
