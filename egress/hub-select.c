/* egress/hub-select.c — choosing the GGUF file(s) of a repository (hub-select.h). */
#include "hub-select.h"

#include <string.h>

static const char *const default_quants[] = { HZ_HUB_DEFAULT_QUANTS };

/* ----------------------------------------------------------------- names */

static char *
last_tag (const char *s)
{
  static GRegex *re;   /* GRegex is immutable and thread-safe once built */
  if (g_once_init_enter (&re))
    g_once_init_leave (&re, g_regex_new (
      "(?:^|[-._])(I?Q[1-8](?:_[0-9A-Z]+)*|TQ[12]_0|MXFP4(?:_MOE)?|BF16|FP?16|FP?32)(?=[-._]|$)",
      G_REGEX_CASELESS | G_REGEX_OPTIMIZE, 0, NULL));
  g_autoptr (GMatchInfo) mi = NULL;
  char *tag = NULL;
  g_regex_match (re, s, 0, &mi);
  while (g_match_info_matches (mi))
    {
      g_free (tag);
      g_autofree char *t = g_match_info_fetch (mi, 1);
      tag = g_ascii_strup (t, -1);
      g_match_info_next (mi, NULL);
    }
  if (tag && (strcmp (tag, "FP16") == 0 || strcmp (tag, "FP32") == 0))
    memmove (tag + 1, tag + 2, strlen (tag + 2) + 1);   /* FP16 -> F16 */
  return tag;
}

char *
hz_hub_quant_tag (const char *path)
{
  g_autofree char *base = g_path_get_basename (path);
  char *tag = last_tag (base);
  if (tag)
    return tag;
  g_auto (GStrv) parts = g_strsplit (path, "/", -1);
  for (int i = (int) g_strv_length (parts) - 2; i >= 0 && !tag; i--)
    tag = last_tag (parts[i]);
  return tag;
}

gboolean
hz_hub_split_info (const char *path, guint *index, guint *count, char **stem)
{
  static GRegex *re;
  if (g_once_init_enter (&re))
    g_once_init_leave (&re, g_regex_new ("^(.*)-([0-9]{5})-of-([0-9]{5})\\.gguf$",
                                         G_REGEX_CASELESS | G_REGEX_OPTIMIZE, 0, NULL));
  g_autoptr (GMatchInfo) mi = NULL;
  if (!g_regex_match (re, path, 0, &mi))
    return FALSE;
  g_autofree char *i = g_match_info_fetch (mi, 2), *n = g_match_info_fetch (mi, 3);
  guint64 iv = g_ascii_strtoull (i, NULL, 10), nv = g_ascii_strtoull (n, NULL, 10);
  if (iv < 1 || iv > nv)
    return FALSE;
  *index = (guint) iv;
  *count = (guint) nv;
  if (stem)
    *stem = g_match_info_fetch (mi, 1);
  return TRUE;
}

static gboolean
is_model_file (const HzHubFile *f)
{
  g_autofree char *lower = g_ascii_strdown (f->path, -1);
  return g_str_has_suffix (lower, ".gguf") && !strstr (lower, "mmproj");
}

/* ----------------------------------------------------------------- models */

typedef struct {
  char      *key;      /* the path of a single file, or STEM + count of a set */
  GPtrArray *shards;   /* HzHubFile* (borrowed) by shard index - 1; NULL where missing */
  char      *quant;
  guint64    size;
} Model;

static void
model_free (gpointer p)
{
  Model *m = p;
  g_free (m->key);
  g_ptr_array_unref (m->shards);
  g_free (m->quant);
  g_free (m);
}

static gboolean
model_complete (const Model *m)
{
  for (guint i = 0; i < m->shards->len; i++)
    if (!m->shards->pdata[i])
      return FALSE;
  return TRUE;
}

static guint
model_present (const Model *m)
{
  guint n = 0;
  for (guint i = 0; i < m->shards->len; i++)
    n += m->shards->pdata[i] != NULL;
  return n;
}

/* The models (single files and split sets) of a listing, in order of first appearance. */
static GPtrArray *
group_models (GPtrArray *listing)
{
  GPtrArray *models = g_ptr_array_new_with_free_func (model_free);
  g_autoptr (GHashTable) by_key = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < listing->len; i++)
    {
      HzHubFile *f = listing->pdata[i];
      if (!is_model_file (f))
        continue;
      guint index = 1, count = 1;
      g_autofree char *stem = NULL;
      gboolean split = hz_hub_split_info (f->path, &index, &count, &stem);
      g_autofree char *key = split ? g_strdup_printf ("%s\n%u", stem, count) : g_strdup (f->path);
      Model *m = g_hash_table_lookup (by_key, key);
      if (!m)
        {
          m = g_new0 (Model, 1);
          m->key = g_steal_pointer (&key);
          m->shards = g_ptr_array_new ();
          g_ptr_array_set_size (m->shards, count);
          m->quant = hz_hub_quant_tag (f->path);
          g_hash_table_insert (by_key, m->key, m);
          g_ptr_array_add (models, m);
        }
      if (!m->shards->pdata[index - 1])
        {
          m->shards->pdata[index - 1] = f;
          m->size += f->size;
        }
    }
  return models;
}

static const char *
first_path (const Model *m)
{
  for (guint i = 0; i < m->shards->len; i++)
    if (m->shards->pdata[i])
      return ((HzHubFile *) m->shards->pdata[i])->path;
  return "";
}

static char *
join_quants (GPtrArray *models)
{
  g_autoptr (GPtrArray) seen = g_ptr_array_new ();
  for (guint i = 0; i < models->len; i++)
    {
      const char *q = ((Model *) models->pdata[i])->quant;
      gboolean dup = FALSE;
      for (guint k = 0; q && k < seen->len && !dup; k++)
        dup = strcmp (seen->pdata[k], q) == 0;
      if (q && !dup)
        g_ptr_array_add (seen, (gpointer) q);
    }
  g_ptr_array_add (seen, NULL);
  return g_strjoinv (", ", (char **) seen->pdata);
}

char *
hz_hub_list_quants (GPtrArray *listing)
{
  g_autoptr (GPtrArray) models = group_models (listing);
  return join_quants (models);
}

static char *
join_paths (GPtrArray *models)
{
  g_autoptr (GPtrArray) names = g_ptr_array_new ();
  for (guint i = 0; i < models->len; i++)
    g_ptr_array_add (names, (gpointer) first_path (models->pdata[i]));
  g_ptr_array_add (names, NULL);
  return g_strjoinv (", ", (char **) names->pdata);
}

void
hz_hub_choice_free (HzHubChoice *c)
{
  if (!c)
    return;
  g_ptr_array_unref (c->files);
  g_free (c->quant);
  g_free (c->why);
  g_free (c);
}

/* The choice of model `m` (complete), or NULL with BAD_REPLY. Takes `why`. */
static HzHubChoice *
choice_of (const Model *m, char *why, GError **error)
{
  if (!model_complete (m))
    {
      g_set_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_BAD_REPLY,
                   "the split model %s is incomplete in the repository: %u of its %u files",
                   first_path (m), model_present (m), m->shards->len);
      g_free (why);
      return NULL;
    }
  HzHubChoice *c = g_new0 (HzHubChoice, 1);
  c->files = g_ptr_array_copy (m->shards, NULL, NULL);
  c->quant = g_strdup (m->quant);
  c->size = m->size;
  c->why = why;
  return c;
}

static const Model *
smallest (GPtrArray *models, const char *quant)
{
  const Model *best = NULL;
  for (guint i = 0; i < models->len; i++)
    {
      const Model *m = models->pdata[i];
      if ((!quant || (m->quant && g_ascii_strcasecmp (m->quant, quant) == 0)) &&
          model_complete (m) && (!best || m->size < best->size))
        best = m;
    }
  return best;
}

static HzHubChoice *
choose_file (GPtrArray *listing, GPtrArray *models, const char *file, GError **error)
{
  const HzHubFile *hit = NULL;
  guint n_base = 0;
  for (guint i = 0; i < listing->len && !hit; i++)
    if (strcmp (((HzHubFile *) listing->pdata[i])->path, file) == 0)
      hit = listing->pdata[i];
  for (guint i = 0; i < listing->len && !hit; i++)
    {
      g_autofree char *base = g_path_get_basename (((HzHubFile *) listing->pdata[i])->path);
      n_base += strcmp (base, file) == 0;
    }
  for (guint i = 0; i < listing->len && !hit && n_base == 1; i++)
    {
      g_autofree char *base = g_path_get_basename (((HzHubFile *) listing->pdata[i])->path);
      if (strcmp (base, file) == 0)
        hit = listing->pdata[i];
    }
  if (!hit)
    {
      g_autofree char *have = join_paths (models);
      g_set_error (error, HZ_HUB_ERROR, n_base > 1 ? HZ_HUB_ERROR_INVALID : HZ_HUB_ERROR_NOT_FOUND,
                   n_base > 1 ? "several files are named %s: give its path in the repository"
                              : "the repository has no file %s (GGUF models there: %s)",
                   file, n_base > 1 ? "" : *have ? have : "none");
      return NULL;
    }
  g_autofree char *why = g_strdup_printf ("%s, as asked", hit->path);
  for (guint i = 0; i < models->len; i++)
    {
      const Model *m = models->pdata[i];
      for (guint k = 0; k < m->shards->len; k++)
        if (m->shards->pdata[k] == hit)
          {
            if (m->shards->len > 1)
              {
                g_free (why);
                why = g_strdup_printf ("%s and the other %u files of its split set, as asked",
                                       hit->path, m->shards->len - 1);
              }
            return choice_of (m, g_steal_pointer (&why), error);
          }
    }
  HzHubChoice *c = g_new0 (HzHubChoice, 1);   /* a file that is not a model (mmproj, ...) */
  c->files = g_ptr_array_new ();
  g_ptr_array_add (c->files, (gpointer) hit);
  c->quant = hz_hub_quant_tag (hit->path);
  c->size = hit->size;
  c->why = g_steal_pointer (&why);
  return c;
}

HzHubChoice *
hz_hub_choose (GPtrArray *listing, const char *quant, const char *file, GError **error)
{
  g_autoptr (GPtrArray) models = group_models (listing);
  if (file)
    return choose_file (listing, models, file, error);
  g_autofree char *quants = join_quants (models);
  if (models->len == 0)
    {
      g_set_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_NOT_FOUND,
                   "the repository has no GGUF model file");
      return NULL;
    }
  if (quant)
    {
      g_autoptr (GPtrArray) hits = g_ptr_array_new ();
      for (guint i = 0; i < models->len; i++)
        {
          Model *m = models->pdata[i];
          if (m->quant && g_ascii_strcasecmp (m->quant, quant) == 0)
            g_ptr_array_add (hits, m);
        }
      if (hits->len == 0)
        {
          g_set_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_NOT_FOUND,
                       "the repository has no %s file (quantizations there: %s)", quant,
                       *quants ? quants : "none named");
          return NULL;
        }
      if (hits->len > 1)
        {
          g_autofree char *names = join_paths (hits);
          g_set_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_INVALID,
                       "several %s models: %s; name one with REPO/FILE", quant, names);
          return NULL;
        }
      return choice_of (hits->pdata[0], g_strdup_printf ("%s, as asked", quant), error);
    }
  for (guint p = 0; p < G_N_ELEMENTS (default_quants); p++)
    {
      const Model *m = smallest (models, default_quants[p]);
      if (!m)
        continue;
      char *why = p == 0
        ? g_strdup_printf ("%s, the usual balance of size and quality (here: %s; choose with "
                           "REPO:QUANT)", m->quant, quants)
        : g_strdup_printf ("%s: there is no %s, and %s comes next in the order %s, %s, %s, ... "
                           "(here: %s; choose with REPO:QUANT)", m->quant, default_quants[0],
                           m->quant, default_quants[0], default_quants[1], default_quants[2],
                           quants);
      return choice_of (m, why, error);
    }
  const Model *m = smallest (models, NULL);
  if (!m)
    return choice_of (models->pdata[0], NULL, error);   /* every one incomplete: the error */
  return choice_of (m, g_strdup_printf ("%s, the smallest model (none has a usual "
                                        "quantization name; here: %s)", first_path (m),
                                        *quants ? quants : "none named"), error);
}
