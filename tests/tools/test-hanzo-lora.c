/* tests/tools/test-hanzo-lora.c — `hanzo generate --lora PATH[:SCALE]`
 * ($HZ_BUILD_DIR/tools/hanzo) on a synthetic tiny model: the generated ids with a PEFT
 * folder or a GGUF LoRA equal those of the model with the adapter merged
 * (learner/merge.c); ":0" gives the base's ids; the PATH[:SCALE] split; a bad --lora
 * exits 1 with a message naming the option. */
#include <glib.h>
#include <math.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include "adapter-io.h"
#include "merge.h"
#include "tiny-model.h"
#include "../../tools/hanzo-gen-common.h"

typedef struct {
  int    status;
  char  *out, *err;
} Run;

static void
run_clear (Run *r)
{
  g_free (r->out);
  g_free (r->err);
}

/* hanzo generate -m MODEL -p PROMPT -n 12 --ignore-eos --json [extra...] */
static void
run_generate (Run *r, const char *model, const char *const *extra)
{
  const char *build = g_getenv ("HZ_BUILD_DIR");
  g_autofree char *hanzo = g_build_filename (build ? build : ".", "tools", "hanzo", NULL);
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  const char *base[] = { hanzo, "generate", "-m", model, "-p", "w5 w9 w13", "-n", "12",
                         "--ignore-eos", "--json", "-t", "1" };
  for (gsize i = 0; i < G_N_ELEMENTS (base); i++)
    g_ptr_array_add (argv, (gpointer) base[i]);
  for (gsize i = 0; extra && extra[i]; i++)
    g_ptr_array_add (argv, (gpointer) extra[i]);
  g_ptr_array_add (argv, NULL);
  g_autoptr (GError) error = NULL;
  int wait = 0;
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                               &r->out, &r->err, &wait, &error));
  g_assert_no_error (error);
  r->status = g_spawn_check_wait_status (wait, NULL) ? 0 : WEXITSTATUS (wait);
}

/* "generated_ids" of a --json output, as "1,2,3" (g_free) */
static char *
ids_of (const char *json)
{
  g_autoptr (JsonParser) p = json_parser_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (json_parser_load_from_data (p, json, -1, &error));
  JsonArray *a = json_object_get_array_member (json_node_get_object (json_parser_get_root (p)),
                                               "generated_ids");
  g_assert_nonnull (a);
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < json_array_get_length (a); i++)
    g_string_append_printf (s, "%s%" G_GINT64_FORMAT, i ? "," : "", json_array_get_int_element (a, i));
  return g_string_free (s, FALSE);
}

static char *
ids (const char *model, const char *const *extra)
{
  Run r = { 0 };
  run_generate (&r, model, extra);
  if (r.status != 0)
    g_error ("hanzo generate failed: %s", r.err);
  char *s = ids_of (r.out);
  run_clear (&r);
  return s;
}

static void
test_lora_matches_merged (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *model_path = tiny_model_write ("llama", 51, 64);
  g_autoptr (HzModel) m = tiny_model_load (model_path);
  g_autoptr (HzLora) lora = tiny_random_lora (m, HZ_LORA_TARGETS_ALL, 4, 32, FALSE, 5);
  g_autofree char *dir = g_dir_make_tmp ("hz-cli-lora-XXXXXX", &error);
  g_autofree char *peft = g_build_filename (dir, "peft", NULL);
  g_autofree char *gguf = g_build_filename (dir, "a.gguf", NULL);
  g_autofree char *merged = g_build_filename (dir, "merged.gguf", NULL);
  g_assert_true (hz_lora_save_peft (lora, peft, HZ_ST_F32, NULL, &error));
  g_assert_true (hz_lora_save_gguf (lora, gguf, HZ_TYPE_F32, &error));
  g_assert_true (hz_lora_merge_gguf (model_path, lora, -1, merged, &error));
  g_assert_no_error (error);

  g_autofree char *want = ids (merged, NULL);
  g_autofree char *plain = ids (model_path, NULL);
  g_assert_cmpstr (want, !=, plain);
  const char *a1[] = { "--lora", peft, NULL };
  g_autofree char *got1 = ids (model_path, a1);
  g_assert_cmpstr (got1, ==, want);
  g_autofree char *gguf1 = g_strdup_printf ("%s:1", gguf);
  const char *a2[] = { "--lora", gguf1, NULL };
  g_autofree char *got2 = ids (model_path, a2);
  g_assert_cmpstr (got2, ==, want);
  g_autofree char *peft0 = g_strdup_printf ("%s:0", peft);
  const char *a3[] = { "--lora", peft0, "--lora", gguf1, "--lora", peft0, NULL };
  g_autofree char *got3 = ids (model_path, a3);   /* scale-0 ones leave it as one adapter */
  g_assert_cmpstr (got3, ==, want);
  const char *a4[] = { "--lora", peft0, NULL };
  g_autofree char *got4 = ids (model_path, a4);
  g_assert_cmpstr (got4, ==, plain);

  /* errors name the option and the file */
  Run r = { 0 };
  const char *bad[] = { "--lora", model_path, NULL };
  run_generate (&r, model_path, bad);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "--lora"));
  g_assert_nonnull (strstr (r.err, "not a LoRA adapter"));
  run_clear (&r);
  /* an unusable scale is refused by name (it used to overflow the logits, or to be taken
   * for part of the path) */
  const char *scales[] = { "nan", "1e30", "-inf" };
  for (gsize i = 0; i < G_N_ELEMENTS (scales); i++)
    {
      g_autofree char *arg = g_strdup_printf ("%s:%s", peft, scales[i]);
      const char *bs[] = { "--lora", arg, NULL };
      run_generate (&r, model_path, bs);
      g_assert_cmpint (r.status, ==, 1);
      g_assert_nonnull (strstr (r.err, "the scale must be a number between"));
      run_clear (&r);
    }

  tiny_rm_rf (dir);
  g_unlink (model_path);
}

static void
test_parse (void)
{
  struct { const char *arg, *path; float scale; } cases[] = {
    { "a/b", "a/b", 1 }, { "a/b:0.5", "a/b", 0.5f }, { "a:b/c", "a:b/c", 1 },
    { "x:1e-1", "x", 0.1f }, { "x:", "x:", 1 }, { "x:nan", "x", NAN }, { "x:1e30", "x", 1e30f }, { "c:\\d:2", "c:\\d", 2 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = NULL;
      float scale;
      hz_cli_parse_lora (cases[i].arg, &path, &scale);
      g_assert_cmpstr (path, ==, cases[i].path);
      if (isnan (cases[i].scale))
        g_assert_true (isnan (scale));
      else
        g_assert_cmpfloat (scale, ==, cases[i].scale);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/hanzo/lora/matches-merged", test_lora_matches_merged);
  g_test_add_func ("/hanzo/lora/parse", test_parse);
  return g_test_run ();
}
