/* hz-model-info.c — GGUF header facts and right-sizing (see hz-model-info.h). */
#include "hz-model-info.h"

#include <glib/gi18n.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gguf.h"
#include "llm.h"
#include "quant.h"
#include "quantize.h"

G_DEFINE_QUARK (hz-model-info-error-quark, hz_model_info_error)

typedef struct {
  char    *name;
  guint32  n_dims;
  gint64   ne[4];
  guint32  type;
  guint64  n_bytes;
} TensorShape;

static void
tensor_shape_free (gpointer p)
{
  TensorShape *t = p;
  g_free (t->name);
  g_free (t);
}

void
hz_model_info_free (HzModelInfo *info)
{
  if (info == NULL)
    return;
  g_free (info->path);
  g_free (info->name);
  g_free (info->arch);
  g_free (info->quant);
  g_free (info->file_type);
  g_clear_pointer (&info->tensors, g_ptr_array_unref);
  g_clear_pointer (&info->names, g_ptr_array_unref);
  g_free (info);
}

/* Whether tensor `name` is read in full for every token: the embedding table is read one
 * row at a time unless the output reuses it (no output.weight). Experts: a fraction. */
static double
active_fraction (const HzModelInfo *info, const char *name, gboolean has_output)
{
  if (g_str_equal (name, "token_embd.weight") && has_output)
    return 0.0;
  if (info->n_expert > 0 && strstr (name, "_exps") != NULL)
    return (double) MAX (info->n_expert_used, 1) / info->n_expert;
  return 1.0;
}

static guint64
elements (const TensorShape *t)
{
  return (guint64) t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3];
}

HzModelInfo *
hz_model_info_read (const char *path, GError **error)
{
  g_autoptr(GError) gerr = NULL;
  g_autofree char *base = g_path_get_basename (path);
  g_autoptr(HzGguf) g = hz_gguf_open (path, &gerr);

  if (g == NULL)
    {
      gboolean not_gguf = gerr->domain != HZ_GGUF_ERROR || gerr->code == HZ_GGUF_ERROR_IO ||
                          gerr->code == HZ_GGUF_ERROR_BAD_MAGIC;
      if (!not_gguf && gerr->code == HZ_GGUF_ERROR_TRUNCATED)
        {
          /* Too short to hold even the magic: not a GGUF at all. */
          char magic[4] = { 0 };
          FILE *f = fopen (path, "rb");
          not_gguf = f == NULL || fread (magic, 1, 4, f) != 4 || memcmp (magic, "GGUF", 4) != 0;
          if (f)
            fclose (f);
        }
      if (not_gguf)
        g_set_error (error, HZ_MODEL_INFO_ERROR, HZ_MODEL_INFO_ERROR_NOT_GGUF,
                     _("“%s” is not a GGUF model file. Hanzo runs models in the GGUF format "
                       "(files ending in .gguf, as published for llama.cpp)."), base);
      else if (gerr->code == HZ_GGUF_ERROR_TRUNCATED)
        /* TRANSLATORS: %s: a file name, then the engine's explanation, in English, which
         * starts "The file is incomplete: it ends after N bytes" */
        g_set_error (error, HZ_MODEL_INFO_ERROR, HZ_MODEL_INFO_ERROR_DAMAGED,
                     _("“%s” cannot be used. %s. Download or copy it again."), base,
                     gerr->message);
      else
        g_set_error (error, HZ_MODEL_INFO_ERROR, HZ_MODEL_INFO_ERROR_DAMAGED,
                     _("“%s” is a damaged GGUF file: %s"), base, gerr->message);
      return NULL;
    }

  g_autofree char *arch = hz_gguf_get_str (g, "general.architecture");
  if (arch == NULL || hz_gguf_n_tensors (g) == 0)
    {
      g_set_error (error, HZ_MODEL_INFO_ERROR, HZ_MODEL_INFO_ERROR_NOT_A_MODEL,
                   _("“%s” is a GGUF file without model weights (a vocabulary or adapter file?)."),
                   base);
      return NULL;
    }

  HzModelInfo *info = g_new0 (HzModelInfo, 1);
  info->path = g_strdup (path);
  info->arch = g_steal_pointer (&arch);
  info->name = hz_gguf_get_str (g, "general.name");
  if (info->name == NULL || *info->name == '\0')
    {
      g_free (info->name);
      if (g_str_has_suffix (base, ".gguf"))
        base[strlen (base) - 5] = '\0';
      info->name = g_strdup (base);
    }
  info->file_size = hz_gguf_file_size (g);

  HzQuantModelInfo qi;
  g_autofree char *qarch = NULL;
  hz_quant_model_info_from_gguf (g, &qi, &qarch);
  info->n_layer = MAX (qi.n_layer, 0);
  info->n_head = qi.n_head;
  info->n_head_kv = qi.n_head_kv;
  info->n_expert = MAX (qi.n_expert, 0);

  gint64 v;
  g_autofree char *k_ctx = g_strdup_printf ("%s.context_length", info->arch);
  g_autofree char *k_used = g_strdup_printf ("%s.expert_used_count", info->arch);
  if (hz_gguf_get_i64 (g, k_ctx, &v) && v > 0 && v <= G_MAXUINT32)
    info->n_ctx_train = (guint32) v;
  if (hz_gguf_get_i64 (g, k_used, &v) && v > 0 && v <= G_MAXUINT32)
    info->n_expert_used = (guint32) v;
  guint32 ftype;
  if (hz_gguf_get_u32 (g, "general.file_type", &ftype) && hz_ftype_info (ftype) != NULL)
    info->file_type = g_strdup (hz_ftype_info (ftype)->name);

  HzArch a;
  info->arch_supported = hz_arch_from_name (info->arch, &a) && info->n_expert == 0;

  info->tensors = g_ptr_array_new_with_free_func (tensor_shape_free);
  info->names = g_ptr_array_new ();
  guint64 type_bytes[HZ_TYPE_COUNT_] = { 0 };
  gboolean has_output = hz_gguf_find_tensor (g, "output.weight") != NULL;
  for (gint64 i = 0; i < hz_gguf_n_tensors (g); i++)
    {
      const HzGgufTensor *gt = hz_gguf_tensor (g, i);
      TensorShape *t = g_new0 (TensorShape, 1);
      t->name = g_strndup (gt->name.ptr, gt->name.len);
      t->n_dims = gt->n_dims;
      memcpy (t->ne, gt->ne, sizeof t->ne);
      t->type = gt->type;
      t->n_bytes = gt->n_bytes;
      g_ptr_array_add (info->tensors, t);
      g_ptr_array_add (info->names, t->name);

      double frac = active_fraction (info, t->name, has_output);
      info->weight_bytes += t->n_bytes;
      info->n_params += elements (t);
      info->active_bytes += (guint64) (t->n_bytes * frac);
      info->n_params_active += (guint64) (elements (t) * frac);
      if (t->n_dims >= 2 && t->type < HZ_TYPE_COUNT_)
        type_bytes[t->type] += t->n_bytes;
    }
  hz_quantize_sort_names ((const char **) info->names->pdata, info->names->len);

  guint best = 0;
  for (guint t = 1; t < HZ_TYPE_COUNT_; t++)
    if (type_bytes[t] > type_bytes[best])
      best = t;
  const HzQuantTraits *tr = hz_quant_traits (best);
  info->quant = g_ascii_strup (tr ? tr->name : "?", -1);
  return info;
}

char *
hz_model_info_unsupported_reason (const HzModelInfo *info)
{
  HzArch a;

  if (!hz_arch_from_name (info->arch, &a))
    {
      g_autofree char *names = hz_arch_list ();
      /* TRANSLATORS: %s: the file's architecture, then the list of those the engine runs
       * ("llama, qwen2, qwen3, …": names, not to be translated) */
      return g_strdup_printf (_("Its architecture “%s” is not supported yet (supported: %s)."),
                              info->arch, names);
    }
  if (info->n_expert > 0)
    return g_strdup (_("Mixture-of-experts models are not supported yet."));
  return NULL;
}

gboolean
hz_model_info_same_shape (const HzModelInfo *a, const HzModelInfo *b)
{
  return g_strcmp0 (a->arch, b->arch) == 0 && a->n_layer == b->n_layer &&
         a->n_head == b->n_head && a->n_head_kv == b->n_head_kv &&
         a->n_expert == b->n_expert && a->n_params == b->n_params;
}

guint64
hz_memory_needed (guint64 weight_bytes)
{
  return weight_bytes + weight_bytes / 10 + (512ull << 20);
}

static const char *const candidates[] = { "Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "Q4_0", "IQ4_XS" };

/* Bytes (all, and read per token) of `info` quantized to `ft`, with llama-quantize's
 * per-tensor choices. */
static void
mix_bytes (const HzModelInfo *info, const HzFtypeInfo *ft, guint64 *weights, guint64 *active)
{
  HzQuantModelInfo qi = { info->arch, (int32_t) info->n_layer, info->n_head, info->n_head_kv,
                          (int32_t) info->n_expert };
  g_autoptr(HzQuantChooser) c =
    hz_quant_chooser_new (ft->ftype, FALSE, &qi, (const char *const *) info->names->pdata,
                          info->names->len);
  g_autoptr(GHashTable) by_name = g_hash_table_new (g_str_hash, g_str_equal);
  gboolean has_output = FALSE;

  for (guint i = 0; i < info->tensors->len; i++)
    {
      TensorShape *t = info->tensors->pdata[i];
      g_hash_table_insert (by_name, t->name, t);
      has_output |= g_str_equal (t->name, "output.weight");
    }
  *weights = *active = 0;
  for (guint i = 0; i < info->names->len; i++)
    {
      TensorShape *t = g_hash_table_lookup (by_name, info->names->pdata[i]);
      guint32 type = hz_quant_chooser_type (c, t->name, t->n_dims, t->ne, t->type, NULL);
      guint64 row = hz_quant_row_size (type, t->ne[0]);
      guint64 bytes = row > 0 ? row * (guint64) (t->ne[1] * t->ne[2] * t->ne[3]) : t->n_bytes;
      *weights += bytes;
      *active += (guint64) (bytes * active_fraction (info, t->name, has_output));
    }
}

double
hz_speed_predict (const HzSpeedModel *speed, guint64 active_bytes)
{
  if (!(speed->bandwidth > 0) || active_bytes == 0)
    return 0;
  return 1.0 / (MAX (speed->overhead_s, 0.0) + (double) active_bytes / speed->bandwidth);
}

double
hz_speed_overhead_from_measurement (guint64 active_bytes, double bandwidth,
                                    double measured_tokens_per_s)
{
  if (!(measured_tokens_per_s > 0) || !(bandwidth > 0))
    return 0;
  return MAX (1.0 / measured_tokens_per_s - (double) active_bytes / bandwidth, 0.0);
}

GArray *
hz_model_info_quant_options (const HzModelInfo *info, const HzSpeedModel *speed,
                             guint64 memory, double target_tokens_per_s)
{
  const double bandwidth = speed->bandwidth;
  GArray *opts = g_array_new (FALSE, TRUE, sizeof (HzQuantOption));
  HzQuantOption cur = { "", info->weight_bytes, info->active_bytes, 0, FALSE, FALSE, TRUE };

  g_array_append_val (opts, cur);
  for (guint i = 0; i < G_N_ELEMENTS (candidates); i++)
    {
      const HzFtypeInfo *ft = hz_ftype_from_name (candidates[i]);
      if (ft == NULL || hz_ftype_missing_format (ft->ftype) != NULL)
        continue;
      HzQuantOption o = { ft->name, 0, 0, 0, FALSE, FALSE, FALSE };
      mix_bytes (info, ft, &o.weight_bytes, &o.active_bytes);
      if (o.weight_bytes >= info->weight_bytes)
        continue;  /* no smaller than the file: nothing to gain */
      g_array_append_val (opts, o);
    }

  gint best_fast = -1, best_any = -1;
  for (guint i = 0; i < opts->len; i++)
    {
      HzQuantOption *o = &g_array_index (opts, HzQuantOption, i);
      o->tokens_per_s = hz_speed_predict (speed, o->active_bytes);
      o->fits = memory == 0 || hz_memory_needed (o->weight_bytes) <= memory;
      if (!o->fits)
        continue;
      /* largest that reaches the target; the file itself wins ties (index 0) */
      if ((bandwidth <= 0 || o->tokens_per_s >= target_tokens_per_s) &&
          (best_fast < 0 ||
           o->weight_bytes > g_array_index (opts, HzQuantOption, best_fast).weight_bytes))
        best_fast = i;
      /* else the fastest that fits */
      if (best_any < 0 ||
          o->active_bytes < g_array_index (opts, HzQuantOption, best_any).active_bytes)
        best_any = i;
    }
  gint rec = best_fast >= 0 ? best_fast : best_any;
  if (rec >= 0)
    g_array_index (opts, HzQuantOption, rec).recommended = TRUE;
  return opts;
}

guint64
hz_memory_available (void)
{
  g_autofree char *text = NULL;
  const char *fixed = g_getenv ("HZ_MEMORY_AVAILABLE");

  if (fixed != NULL && *fixed != '\0')
    return g_ascii_strtoull (fixed, NULL, 10);

  if (g_file_get_contents ("/proc/meminfo", &text, NULL, NULL))
    {
      const char *p = strstr (text, "MemAvailable:");
      if (p != NULL)
        return g_ascii_strtoull (p + strlen ("MemAvailable:"), NULL, 10) * 1024;
    }
  long pages = sysconf (_SC_AVPHYS_PAGES), size = sysconf (_SC_PAGESIZE);
  return pages > 0 && size > 0 ? (guint64) pages * (guint64) size : 0;
}

guint64
hz_memory_total (void)
{
  long pages = sysconf (_SC_PHYS_PAGES), size = sysconf (_SC_PAGESIZE);
  return pages > 0 && size > 0 ? (guint64) pages * (guint64) size : 0;
}
