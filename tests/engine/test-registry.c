/* tests/engine/test-registry.c — HzRegistry (hanzo/serving.h) on stories260K
 * (../shared; skipped when absent): aliases, load on first acquire, unload and reload,
 * busy models, the memory budget with least-recently-used unloading, and concurrent
 * acquirers of a cold model (one load). */
#include <glib.h>
#include <glib/gstdio.h>

#include "hanzo/engine.h"
#include "hanzo/serving.h"
#include "../hz-test-util.h"

static void
test_registry (void)
{
  g_autofree char *path = hz_test_shared_path ("models/stories260K.gguf");
  if (path == NULL)
    return;
  GStatBuf st;
  g_assert_cmpint (g_stat (path, &st), ==, 0);
  const guint64 size = (guint64) st.st_size;
  g_autoptr (GError) error = NULL;
  /* room for two of the three models */
  g_autoptr (HzRegistry) reg = hz_registry_new (2 * size + size / 2);
  g_assert_true (hz_registry_add (reg, "chat", path, NULL, &error));
  g_assert_true (hz_registry_add (reg, "guard", path, NULL, &error));
  g_assert_true (hz_registry_add (reg, "learner", path, NULL, &error));
  g_assert_false (hz_registry_add (reg, "chat", path, NULL, &error));
  g_assert_error (error, HZ_SERVE_ERROR, HZ_SERVE_ERROR_EXISTS);
  g_clear_error (&error);
  g_assert_true (hz_registry_alias (reg, "default", "chat", &error));
  g_assert_false (hz_registry_alias (reg, "x", "nope", &error));
  g_assert_error (error, HZ_SERVE_ERROR, HZ_SERVE_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_auto (GStrv) names = hz_registry_list (reg);
  g_assert_cmpuint (g_strv_length (names), ==, 3);
  g_assert_cmpstr (names[0], ==, "chat");

  /* cold start through the alias; a second acquire shares the model */
  g_assert_false (hz_registry_is_loaded (reg, "chat"));
  HzModel *chat = hz_registry_acquire (reg, "default", &error);
  g_assert_no_error (error);
  g_assert_true (hz_registry_acquire (reg, "chat", NULL) == chat);
  g_assert_cmpuint (hz_registry_n_loads (reg), ==, 1);
  g_assert_cmpuint (hz_registry_loaded_bytes (reg), ==, size);
  g_assert_false (hz_registry_unload (reg, "chat", &error));
  g_assert_error (error, HZ_SERVE_ERROR, HZ_SERVE_ERROR_BUSY);
  g_clear_error (&error);

  /* budget: chat in use + guard fit; learner needs room -> guard (idle, LRU) goes */
  HzModel *guard = hz_registry_acquire (reg, "guard", &error);
  g_assert_no_error (error);
  hz_registry_release (reg, guard);
  HzModel *learner = hz_registry_acquire (reg, "learner", &error);
  g_assert_no_error (error);
  g_assert_false (hz_registry_is_loaded (reg, "guard"));
  g_assert_true (hz_registry_is_loaded (reg, "chat"));
  g_assert_cmpuint (hz_registry_loaded_bytes (reg), ==, 2 * size);
  /* both loaded models in use: a third does not fit */
  g_assert_null (hz_registry_acquire (reg, "guard", &error));
  g_assert_error (error, HZ_SERVE_ERROR, HZ_SERVE_ERROR_BUDGET);
  g_clear_error (&error);
  /* release the chat model twice: now it is the LRU idle one */
  hz_registry_release (reg, chat);
  hz_registry_release (reg, chat);
  guard = hz_registry_acquire (reg, "guard", &error);  /* reload on demand */
  g_assert_no_error (error);
  g_assert_false (hz_registry_is_loaded (reg, "chat"));
  g_assert_cmpuint (hz_registry_n_loads (reg), ==, 4);
  /* the reloaded model works */
  g_autoptr (HzContext) ctx = hz_context_new (guard, NULL, &error);
  g_assert_no_error (error);
  HzToken bos = hz_model_bos (guard);
  g_assert_true (hz_context_eval (ctx, &bos, 1, FALSE, NULL, &error));
  g_clear_pointer (&ctx, hz_context_free);
  hz_registry_release (reg, guard);
  hz_registry_release (reg, learner);
  g_assert_true (hz_registry_unload (reg, "guard", &error));
  g_assert_true (hz_registry_remove (reg, "chat", &error));
  g_assert_false (hz_registry_is_loaded (reg, "default"));
  g_assert_null (hz_registry_acquire (reg, "default", &error));
  g_assert_error (error, HZ_SERVE_ERROR, HZ_SERVE_ERROR_NOT_FOUND);
  g_clear_error (&error);
}

static gpointer
acquirer (gpointer data)
{
  HzRegistry *reg = data;
  for (int i = 0; i < 20; i++)
    {
      HzModel *m = hz_registry_acquire (reg, i % 2 ? "a" : "b", NULL);
      g_assert_nonnull (m);
      g_assert_cmpint (hz_model_n_vocab (m), >, 0);
      hz_registry_release (reg, m);
    }
  return NULL;
}

static void
test_concurrent (void)
{
  g_autofree char *path = hz_test_shared_path ("models/stories260K.gguf");
  if (path == NULL)
    return;
  g_autoptr (HzRegistry) reg = hz_registry_new (0);
  HzModelParams mp;
  hz_model_params_init (&mp);
  mp.n_threads = 1;
  g_assert_true (hz_registry_add (reg, "a", path, &mp, NULL));
  g_assert_true (hz_registry_add (reg, "b", path, &mp, NULL));
  GThread *th[4];
  for (int i = 0; i < 4; i++)
    th[i] = g_thread_new ("acquirer", acquirer, reg);
  for (int i = 0; i < 4; i++)
    g_thread_join (th[i]);
  g_assert_cmpuint (hz_registry_n_loads (reg), ==, 2);  /* each loaded once, unlimited budget */
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/registry/basic", test_registry);
  g_test_add_func ("/registry/concurrent", test_concurrent);
  return g_test_run ();
}
