/* hz-hub-options.c — a repository's GGUF models as choices for this computer
 * (hz-hub-options.h). */
#include "hz-hub-options.h"

#include <glib/gi18n.h>
#include <string.h>

#include "hanzo/egress.h"
#include "hz-model-info.h"

#define PREFERRED_QUANT "Q4_K_M"

void
hz_hub_option_free (HzHubOption *option)
{
  if (option == NULL)
    return;
  g_free (option->quant);
  g_free (option->path);
  g_clear_pointer (&option->files, g_ptr_array_unref);
  g_free (option);
}

/* Whether `f` is the file that names a model: a GGUF that is not a vision projector and,
 * for a split set, its first shard. */
static gboolean
names_a_model (const HzHubFile *f)
{
  g_autofree char *lower = g_ascii_strdown (f->path, -1);
  const char *base = strrchr (lower, '/') ? strrchr (lower, '/') + 1 : lower;
  guint index, count;

  if (!g_str_has_suffix (lower, ".gguf") || strstr (base, "mmproj") != NULL)
    return FALSE;
  return !hz_hub_split_info (f->path, &index, &count, NULL) || index == 1;
}

/* Options are grouped by quantization, the group of the largest model first (`data`: the
 * largest size of each quantization, "" for none). */
static int
compare_options (gconstpointer pa, gconstpointer pb, gpointer data)
{
  const HzHubOption *a = *(HzHubOption *const *) pa, *b = *(HzHubOption *const *) pb;
  GHashTable *groups = data;
  guint64 ga = *(guint64 *) g_hash_table_lookup (groups, a->quant ? a->quant : "");
  guint64 gb = *(guint64 *) g_hash_table_lookup (groups, b->quant ? b->quant : "");

  if (ga != gb)
    return ga > gb ? -1 : 1;
  int c = g_strcmp0 (a->quant, b->quant);
  if (c != 0)
    return c;
  if (a->size != b->size)
    return a->size > b->size ? -1 : 1;
  return g_strcmp0 (a->path, b->path);
}

/* The rule of the header: the index of the recommended option, or -1. */
static int
recommend (GPtrArray *options, double bandwidth, double target)
{
  int preferred = -1, largest = -1, smallest = -1;

  for (guint i = 0; i < options->len; i++)
    {
      const HzHubOption *o = options->pdata[i];
      if (!o->fits)
        continue;
      if (smallest < 0 || o->size < ((HzHubOption *) options->pdata[smallest])->size)
        smallest = (int) i;
      if (bandwidth > 0 && o->tokens_per_s < target)
        continue;
      if (preferred < 0 && g_strcmp0 (o->quant, PREFERRED_QUANT) == 0)
        preferred = (int) i;
      if (largest < 0 || o->size > ((HzHubOption *) options->pdata[largest])->size)
        largest = (int) i;
    }
  return preferred >= 0 ? preferred : largest >= 0 ? largest : smallest;
}

GPtrArray *
hz_hub_options_new (GPtrArray *listing, guint64 memory, double bandwidth, double target)
{
  GPtrArray *options = g_ptr_array_new_with_free_func ((GDestroyNotify) hz_hub_option_free);
  HzSpeedModel speed = { bandwidth, 0 };   /* t0 unknown before a reply: an upper bound */
  g_autoptr(GHashTable) groups = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);

  for (guint i = 0; i < listing->len; i++)
    {
      const HzHubFile *f = listing->pdata[i];
      if (!names_a_model (f))
        continue;
      g_autoptr(HzHubChoice) choice = hz_hub_choose (listing, NULL, f->path, NULL);
      if (choice == NULL)
        continue;  /* an incomplete split set */
      HzHubOption *o = g_new0 (HzHubOption, 1);
      o->quant = g_strdup (choice->quant);
      o->path = g_strdup (f->path);
      o->files = g_ptr_array_ref (choice->files);
      o->size = choice->size;
      o->fits = memory == 0 || hz_memory_needed (o->size) <= memory;
      o->tokens_per_s = hz_speed_predict (&speed, o->size);
      g_ptr_array_add (options, o);

      const char *key = o->quant ? o->quant : "";
      guint64 *max = g_hash_table_lookup (groups, key);
      if (max == NULL)
        g_hash_table_insert (groups, g_strdup (key), max = g_new0 (guint64, 1));
      *max = MAX (*max, o->size);
    }
  g_ptr_array_sort_with_data (options, compare_options, groups);
  int rec = recommend (options, bandwidth, target);
  if (rec >= 0)
    ((HzHubOption *) options->pdata[rec])->recommended = TRUE;
  return options;
}

const char *
hz_hub_options_rule (void)
{
  return _("Recommended: the file that fits in memory with room to spare (a tenth more and "
           "512 MB, for the conversation and the app) and reaches your speed target: Q4_K_M "
           "when the repository has it, the usual balance of size and quality, else the "
           "largest such file. When none reaches the target, the smallest that fits.");
}
