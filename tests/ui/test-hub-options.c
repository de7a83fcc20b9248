/* test-hub-options.c — a Hub repository's GGUF models as choices for this computer
 * (app/hz-hub-options.h): which files are models (split sets as one, no vision projector,
 * no incomplete set), the grouping by quantization, fit, the upper-bound speed, and the
 * recommendation rule in each of its branches. No display, no network. */
#include "hz-hub-options.h"
#include "hz-model-info.h"

#define MB 1000000ull

static void
add (GPtrArray *listing, const char *path, guint64 size)
{
  HzHubFile *f = g_new0 (HzHubFile, 1);
  f->path = g_strdup (path);
  f->size = size;
  g_ptr_array_add (listing, f);
}

/* A repository as bartowski's and unsloth's look: one model in several quantizations, one
 * of them split, plus a projector, an incomplete split set and non-model files. */
static GPtrArray *
listing_new (gboolean with_q4)
{
  GPtrArray *l = g_ptr_array_new_with_free_func ((GDestroyNotify) hz_hub_file_free);
  add (l, ".gitattributes", 1570);
  add (l, "README.md", 12000);
  add (l, "M-F16.gguf", 2500 * MB);
  add (l, "M-Q8_0.gguf", 1300 * MB);
  if (with_q4)
    add (l, "M-Q4_K_M.gguf", 800 * MB);
  add (l, "Q5_K_M/M-Q5_K_M-00001-of-00002.gguf", 450 * MB);
  add (l, "Q5_K_M/M-Q5_K_M-00002-of-00002.gguf", 450 * MB);
  add (l, "M-Q2_K.gguf", 500 * MB);
  add (l, "mmproj-M-f16.gguf", 600 * MB);
  add (l, "Q3_K_M/M-Q3_K_M-00001-of-00003.gguf", 300 * MB);   /* shards 2, 3 missing */
  return l;
}

static const HzHubOption *
recommended (GPtrArray *options)
{
  const HzHubOption *rec = NULL;
  for (guint i = 0; i < options->len; i++)
    if (((HzHubOption *) options->pdata[i])->recommended)
      {
        g_assert_null (rec);   /* at most one */
        rec = options->pdata[i];
      }
  return rec;
}

/* What is a model, the order, the sizes, fit and speed. */
static void
test_models (void)
{
  g_autoptr(GPtrArray) l = listing_new (TRUE);
  guint64 memory = hz_memory_needed (1300 * MB);   /* Q8_0 fits just, F16 does not */
  g_autoptr(GPtrArray) o = hz_hub_options_new (l, memory, 50e9, 10);
  const char *order[] = { "F16", "Q8_0", "Q5_K_M", "Q4_K_M", "Q2_K" };

  g_assert_cmpuint (o->len, ==, G_N_ELEMENTS (order));
  for (guint i = 0; i < o->len; i++)
    {
      const HzHubOption *opt = o->pdata[i];
      g_assert_cmpstr (opt->quant, ==, order[i]);
      g_assert_cmpfloat_with_epsilon (opt->tokens_per_s, 50e9 / (double) opt->size, 1e-9);
      g_assert_true (opt->fits == (opt->size <= 1300 * MB));
    }
  const HzHubOption *q5 = o->pdata[2];
  g_assert_cmpstr (q5->path, ==, "Q5_K_M/M-Q5_K_M-00001-of-00002.gguf");
  g_assert_cmpuint (q5->files->len, ==, 2);
  g_assert_cmpuint (q5->size, ==, 900 * MB);
  g_assert_cmpstr (recommended (o)->quant, ==, "Q4_K_M");   /* fits, 62 tokens/s */

  /* bandwidth not measured: no speed, every fitting file is usable; memory unknown: all fit */
  g_autoptr(GPtrArray) u = hz_hub_options_new (l, 0, 0, 10);
  for (guint i = 0; i < u->len; i++)
    {
      g_assert_cmpfloat (((HzHubOption *) u->pdata[i])->tokens_per_s, ==, 0);
      g_assert_true (((HzHubOption *) u->pdata[i])->fits);
    }
  g_assert_cmpstr (recommended (u)->quant, ==, "Q4_K_M");

  /* no GGUF model at all */
  g_autoptr(GPtrArray) none = g_ptr_array_new_with_free_func ((GDestroyNotify) hz_hub_file_free);
  add (none, "README.md", 10);
  add (none, "mmproj-x.gguf", 10);
  g_autoptr(GPtrArray) empty = hz_hub_options_new (none, 0, 0, 10);
  g_assert_cmpuint (empty->len, ==, 0);
}

/* The rule: Q4_K_M when it fits and reaches the target; else the largest that does; else
 * the smallest that fits; else none. */
static void
test_rule (void)
{
  g_autoptr(GPtrArray) l = listing_new (TRUE);
  g_autoptr(GPtrArray) no_q4 = listing_new (FALSE);
  guint64 big = hz_memory_needed (4000 * MB);

  /* Q4_K_M (800 MB) does not reach 40 tokens/s at 24 GB/s (30), Q2_K (500 MB) does (48) */
  g_autoptr(GPtrArray) slow = hz_hub_options_new (l, big, 24e9, 40);
  g_assert_cmpstr (recommended (slow)->quant, ==, "Q2_K");
  /* without Q4_K_M, the largest usable one: Q8_0 reaches 25 tokens/s at 50 GB/s (38),
   * F16 not (20) */
  g_autoptr(GPtrArray) largest = hz_hub_options_new (no_q4, big, 50e9, 25);
  g_assert_cmpstr (recommended (largest)->quant, ==, "Q8_0");
  /* with the bandwidth unknown, the largest that fits: F16 */
  g_autoptr(GPtrArray) unknown = hz_hub_options_new (no_q4, big, 0, 10);
  g_assert_cmpstr (recommended (unknown)->quant, ==, "F16");
  /* none reaches 1000 tokens/s: the smallest that fits */
  g_autoptr(GPtrArray) fastest = hz_hub_options_new (l, big, 50e9, 1000);
  g_assert_cmpstr (recommended (fastest)->quant, ==, "Q2_K");
  /* memory for Q2_K only: it, although slow */
  g_autoptr(GPtrArray) tight = hz_hub_options_new (l, hz_memory_needed (500 * MB), 1e9, 10);
  g_assert_cmpstr (recommended (tight)->quant, ==, "Q2_K");
  /* nothing fits: none */
  g_autoptr(GPtrArray) nothing = hz_hub_options_new (l, 400 * MB, 50e9, 10);
  g_assert_null (recommended (nothing));
  for (guint i = 0; i < nothing->len; i++)
    g_assert_false (((HzHubOption *) nothing->pdata[i])->fits);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/app/hub-options/models", test_models);
  g_test_add_func ("/app/hub-options/rule", test_rule);
  return g_test_run ();
}
