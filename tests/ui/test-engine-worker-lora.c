/* tests/ui/test-engine-worker-lora.c — HzEngineWorker hot-loads LoRA adapters
 * (hz_engine_worker_set_adapters): replies after a swap are those of the engine with the
 * adapter set, swaps happen between replies, "none" gives the base back, the personal
 * adapter wins over the shared one, and a broken adapter keeps the base model and is
 * reported once; the worker follows the learner daemon (a fake ai.hanzo.Desktop.Learner on
 * the session bus: AdapterReady, SharedAdapterReady, Rollback). On a synthetic tiny model
 * (no shared data needed). */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include "adapter-io.h"
#include "engine-worker.h"
#include "hz-learner.h"
#include "tiny-model.h"
#include "ui-test-util.h"
#include "fake-learner.h"   /* after ui-test-util.h (hz_ui_wait_for) */

typedef struct {
  guint  n_loaded, n_finished, n_changed, n_adapter_errors;
  char  *text, *adapter;
  GError *adapter_error;
} Events;

static void
on_loaded (HzEngineWorker *w, const char *path, const char *name, Events *ev)
{
  ev->n_loaded++;
}

static void
on_finished (HzEngineWorker *w, guint request, const char *text, gpointer stats, Events *ev)
{
  g_free (ev->text);
  ev->text = g_strdup (text);
  ev->n_finished++;
}

static void
on_adapter_changed (HzEngineWorker *w, const char *path, Events *ev)
{
  g_free (ev->adapter);
  ev->adapter = g_strdup (path);
  ev->n_changed++;
}

static void
on_adapter_error (HzEngineWorker *w, const char *path, GError *error, Events *ev)
{
  g_clear_error (&ev->adapter_error);
  ev->adapter_error = g_error_copy (error);
  ev->n_adapter_errors++;
}

static void
wait_until (guint *counter, guint value)
{
  const gint64 deadline = g_get_monotonic_time () + 120 * G_USEC_PER_SEC;
  while (*counter < value)
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_main_context_iteration (NULL, TRUE);
    }
}

#define PROMPT "w5 w9 w13 w20"
#define N_PREDICT 16

static void
params_init (HzGenerateParams *p)
{
  hz_generate_params_init (p);
  p->n_predict = N_PREDICT;
  p->ignore_eog = TRUE;
}

/* The worker's reply to PROMPT. */
static char *
reply (HzEngineWorker *w, Events *ev)
{
  HzChatMessage msg = { "user", PROMPT };
  HzGenerateParams p;
  params_init (&p);
  const guint before = ev->n_finished;
  hz_engine_worker_generate (w, &msg, 1, &p);
  wait_until (&ev->n_finished, before + 1);
  return g_strdup (ev->text);
}

/* The engine's reply with `adapter` (NULL: the base), as the worker builds it (a base
 * model: plain completion of the message). */
static char *
engine_reply (HzModel *m, const char *adapter)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (HzContext) ctx = hz_context_new (m, NULL, &error);
  g_assert_no_error (error);
  if (adapter)
    {
      g_autoptr (HzAdapter) a = hz_adapter_load (m, adapter, &error);
      g_assert_no_error (error);
      g_assert_true (hz_context_set_adapters (ctx, &a, NULL, 1, &error));
    }
  gsize n = 0;
  g_autofree HzToken *toks = hz_model_tokenize (m, PROMPT, -1, TRUE, FALSE, &n);
  HzGenerateParams p;
  params_init (&p);
  char *text = hz_context_generate (ctx, toks, n, &p, NULL, NULL, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  return text;
}

static void
test_hot_load (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *model_path = tiny_model_write ("llama", 41, 64);
  g_autoptr (HzModel) m = tiny_model_load (model_path);
  g_autofree char *dir = g_dir_make_tmp ("hz-worker-lora-XXXXXX", &error);
  g_assert_no_error (error);
  /* personal and shared adapters (strong: they change the greedy reply), a broken one */
  g_autoptr (HzLora) lp = tiny_random_lora (m, HZ_LORA_TARGETS_ALL, 4, 32, FALSE, 1);
  g_autoptr (HzLora) ls = tiny_random_lora (m, HZ_LORA_TARGETS_ALL, 4, 32, FALSE, 2);
  g_autoptr (HzLora) lb = tiny_random_lora (m, HZ_LORA_TARGETS_ALL, 4, 32, FALSE, 3);
  lb->params[7] = NAN;
  g_autofree char *personal = g_build_filename (dir, "run-1", NULL);
  g_autofree char *shared = g_build_filename (dir, "shared", NULL);
  g_autofree char *broken = g_build_filename (dir, "broken", NULL);
  g_assert_true (hz_lora_save_peft (lp, personal, HZ_ST_BF16, NULL, &error));
  g_assert_true (hz_lora_save_peft (ls, shared, HZ_ST_BF16, NULL, &error));
  g_assert_true (hz_lora_save_peft (lb, broken, HZ_ST_F32, NULL, &error));
  g_assert_no_error (error);
  g_autofree char *want_base = engine_reply (m, NULL);
  g_autofree char *want_personal = engine_reply (m, personal);
  g_autofree char *want_shared = engine_reply (m, shared);
  g_assert_cmpstr (want_base, !=, want_personal);
  g_assert_cmpstr (want_base, !=, want_shared);

  Events ev = { 0 };
  g_autoptr (HzEngineWorker) w = hz_engine_worker_new ();
  g_signal_connect (w, "model-loaded", G_CALLBACK (on_loaded), &ev);
  g_signal_connect (w, "finished", G_CALLBACK (on_finished), &ev);
  g_signal_connect (w, "adapter-changed", G_CALLBACK (on_adapter_changed), &ev);
  g_signal_connect (w, "adapter-error", G_CALLBACK (on_adapter_error), &ev);
  hz_engine_worker_load_model (w, model_path);
  wait_until (&ev.n_loaded, 1);

  g_autofree char *r0 = reply (w, &ev);
  g_assert_cmpstr (r0, ==, want_base);
  g_assert_null (hz_engine_worker_get_adapter (w));

  /* shared only: served */
  hz_engine_worker_set_adapters (w, NULL, NULL, shared);
  wait_until (&ev.n_changed, 1);
  g_assert_cmpstr (ev.adapter, ==, shared);
  g_autofree char *r1 = reply (w, &ev);
  g_assert_cmpstr (r1, ==, want_shared);

  /* a personal adapter arrives: it wins; queued behind a reply, it waits for its end */
  HzChatMessage msg = { "user", PROMPT };
  HzGenerateParams p;
  params_init (&p);
  const guint finished = ev.n_finished;
  hz_engine_worker_generate (w, &msg, 1, &p);
  hz_engine_worker_set_adapters (w, personal, NULL, shared);
  wait_until (&ev.n_finished, finished + 1);
  g_assert_cmpstr (ev.text, ==, want_shared);   /* the reply that was running: unchanged */
  wait_until (&ev.n_changed, 2);
  g_assert_cmpstr (hz_engine_worker_get_adapter (w), ==, personal);
  g_autofree char *r2 = reply (w, &ev);
  g_assert_cmpstr (r2, ==, want_personal);

  /* rollback to none: the shared adapter again; none at all: the base */
  hz_engine_worker_set_adapters (w, "", NULL, shared);
  g_autofree char *r3 = reply (w, &ev);
  g_assert_cmpstr (r3, ==, want_shared);
  hz_engine_worker_set_adapters (w, NULL, NULL, NULL);
  g_autofree char *r4 = reply (w, &ev);
  g_assert_cmpstr (r4, ==, want_base);
  g_assert_null (hz_engine_worker_get_adapter (w));

  /* an adapter trained on another base model (sha256) is not used */
  hz_engine_worker_set_adapters (w, personal, "0123456789abcdef", NULL);
  g_autofree char *r5 = reply (w, &ev);
  g_assert_cmpstr (r5, ==, want_base);
  g_assert_cmpuint (ev.n_adapter_errors, ==, 0);

  /* a broken adapter: the base serves, reported once, also across replies and reloads */
  hz_engine_worker_set_adapters (w, broken, NULL, NULL);
  g_autofree char *r6 = reply (w, &ev);
  g_assert_cmpstr (r6, ==, want_base);
  g_assert_cmpuint (ev.n_adapter_errors, ==, 1);
  g_assert_error (ev.adapter_error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_BAD_ADAPTER);
  g_assert_nonnull (strstr (ev.adapter_error->message, "non-finite"));
  g_autofree char *r7 = reply (w, &ev);
  g_assert_cmpstr (r7, ==, want_base);
  hz_engine_worker_load_model (w, model_path);
  wait_until (&ev.n_loaded, 2);
  g_autofree char *r8 = reply (w, &ev);
  g_assert_cmpstr (r8, ==, want_base);
  g_assert_cmpuint (ev.n_adapter_errors, ==, 1);

  hz_engine_worker_shutdown (w);
  g_free (ev.text);
  g_free (ev.adapter);
  g_clear_error (&ev.adapter_error);
  tiny_rm_rf (dir);
  g_unlink (model_path);
}

static gboolean
learner_present (gpointer learner)
{
  return hz_learner_is_present (learner);
}

typedef struct {
  Events *ev;
  guint   n;
} ChangedAt;

static gboolean
changed_to (gpointer data)
{
  const ChangedAt *c = data;
  return c->ev->n_changed >= c->n;
}

static void
emit (FakeLearner *fl, const char *signal, GVariant *params)
{
  g_autoptr (GError) error = NULL;
  g_assert_true (g_dbus_connection_emit_signal (fl->conn, NULL, HZ_LEARNER_OBJECT_PATH,
                                                HZ_LEARNER_INTERFACE, signal, params, &error));
  g_assert_no_error (error);
}

static void
test_follow_learner (void)
{
  if (g_getenv ("DBUS_SESSION_BUS_ADDRESS") == NULL)
    {
      g_test_skip ("no session bus: run under dbus-run-session");
      return;
    }
  g_autoptr (GError) error = NULL;
  g_autofree char *model_path = tiny_model_write ("llama", 43, 64);
  g_autoptr (HzModel) m = tiny_model_load (model_path);
  g_autofree char *dir = g_dir_make_tmp ("hz-worker-follow-XXXXXX", &error);
  g_autoptr (HzLora) lp = tiny_random_lora (m, HZ_LORA_TARGETS_ALL, 4, 32, FALSE, 6);
  g_autoptr (HzLora) ls = tiny_random_lora (m, HZ_LORA_TARGETS_ALL, 4, 32, FALSE, 7);
  g_autofree char *personal = g_build_filename (dir, "run-7", NULL);
  g_autofree char *shared = g_build_filename (dir, "shared", NULL);
  g_assert_true (hz_lora_save_peft (lp, personal, HZ_ST_BF16, NULL, &error));
  g_assert_true (hz_lora_save_peft (ls, shared, HZ_ST_BF16, NULL, &error));
  g_autofree char *want_base = engine_reply (m, NULL);
  g_autofree char *want_personal = engine_reply (m, personal);
  g_autofree char *want_shared = engine_reply (m, shared);

  FakeLearner *fl = fake_learner_start ();
  g_autoptr (HzLearner) learner = hz_learner_new ();
  g_assert_true (hz_ui_wait_for (learner_present, learner, 10));
  Events ev = { 0 };
  g_autoptr (HzEngineWorker) w = hz_engine_worker_new ();
  g_signal_connect (w, "model-loaded", G_CALLBACK (on_loaded), &ev);
  g_signal_connect (w, "finished", G_CALLBACK (on_finished), &ev);
  g_signal_connect (w, "adapter-changed", G_CALLBACK (on_adapter_changed), &ev);
  g_signal_connect (w, "adapter-error", G_CALLBACK (on_adapter_error), &ev);
  hz_engine_worker_load_model (w, model_path);
  wait_until (&ev.n_loaded, 1);
  /* no store, no shared adapter in (the throwaway) $XDG_DATA_HOME: the base */
  hz_engine_worker_follow_learner (w, learner, NULL);
  g_autofree char *r0 = reply (w, &ev);
  g_assert_cmpstr (r0, ==, want_base);

  emit (fl, "SharedAdapterReady", g_variant_new ("(st)", shared, (guint64) 3));
  ChangedAt c = { &ev, 1 };
  g_assert_true (hz_ui_wait_for (changed_to, &c, 30));
  g_assert_cmpstr (ev.adapter, ==, shared);
  g_autofree char *r1 = reply (w, &ev);
  g_assert_cmpstr (r1, ==, want_shared);

  emit (fl, "AdapterReady", g_variant_new ("(s)", personal));
  c.n = 2;
  g_assert_true (hz_ui_wait_for (changed_to, &c, 30));
  g_assert_cmpstr (ev.adapter, ==, personal);
  g_autofree char *r2 = reply (w, &ev);
  g_assert_cmpstr (r2, ==, want_personal);

  /* Rollback: the fake daemon answers a folder that does not exist: the base model
   * serves and the failure is reported once */
  hz_learner_rollback (learner, NULL, NULL);
  c.n = 3;
  g_assert_true (hz_ui_wait_for (changed_to, &c, 30));
  g_assert_null (ev.adapter);
  g_autofree char *r3 = reply (w, &ev);
  g_assert_cmpstr (r3, ==, want_base);
  g_assert_cmpuint (ev.n_adapter_errors, ==, 1);
  g_assert_cmpuint (fake_learner_count (fl, "Rollback"), ==, 1);

  hz_engine_worker_shutdown (w);
  g_clear_object (&learner);
  fake_learner_stop (fl);
  g_free (ev.text);
  g_free (ev.adapter);
  g_clear_error (&ev.adapter_error);
  tiny_rm_rf (dir);
  g_unlink (model_path);
}

int
main (int argc, char **argv)
{
  hz_ui_test_init ();
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/engine-worker/lora-hot-load", test_hot_load);
  g_test_add_func ("/engine-worker/lora-follow-learner", test_follow_learner);
  return g_test_run ();
}
