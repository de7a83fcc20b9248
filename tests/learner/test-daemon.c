/* tests/learner/test-daemon.c — hanzo-learner: the scheduler's decision on a table of
 * (time, power, idle, paused, never-learn, learn-now) cases, window parsing and the next
 * start; and a D-Bus round trip with the real service as a subprocess on the session bus
 * (run under dbus-run-session; skipped without a session bus or without stories260K in
 * ../shared): Pause/Resume change State; LearnNow trains on the store's redacted, rated
 * replies; a Pause mid-job checkpoints and records an interrupted run; Resume continues
 * from the checkpoint; the adapter is promoted (held-out loss improved), written to
 * $XDG_DATA_HOME/hanzo/adapters/, recorded in the store, and Rollback and NeverLearn work.
 * Without model= in learner.ini: LearnNow answers Error.NoModel while the app has no model
 * (GSettings model-path), and then trains the app's model. */
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <math.h>
#include "night-schedule.h"
#include "hanzo-store-feedback.h"
#include "hanzo-store-learner.h"
#include "hanzo-store-redactions.h"
#include "hz-test-util.h"
#include "learner-test-store.h"

/* the daemon's bus name, object path and interface (learner/ai.hanzo.Desktop.Learner.xml) */
#define LEARNER_NAME "ai.hanzo.Desktop.Learner"
#define LEARNER_PATH "/ai/hanzo/Desktop/Learner"

static void
test_schedule_table (void)
{
  HzNightWindow w;
  hz_night_window_init (&w);
  const int t0130 = 90, t0200 = 120, t0400 = 240, t0559 = 359, t0600 = 360, t1400 = 840;
  static const struct {
    int minute; gboolean battery; HzIdleState idle; gboolean paused, never, now;
    HzSchedDecision want;
  } cases[] = {
    { 240, FALSE, HZ_IDLE_YES,     FALSE, FALSE, FALSE, HZ_SCHED_RUN },
    { 240, FALSE, HZ_IDLE_UNKNOWN, FALSE, FALSE, FALSE, HZ_SCHED_RUN },   /* unknown: idle at night */
    { 240, FALSE, HZ_IDLE_NO,      FALSE, FALSE, FALSE, HZ_SCHED_WAIT_IDLE },
    { 240, TRUE,  HZ_IDLE_YES,     FALSE, FALSE, FALSE, HZ_SCHED_WAIT_POWER },
    { 240, FALSE, HZ_IDLE_YES,     TRUE,  FALSE, FALSE, HZ_SCHED_PAUSED },
    { 240, FALSE, HZ_IDLE_YES,     FALSE, TRUE,  FALSE, HZ_SCHED_DISABLED },
    { 240, FALSE, HZ_IDLE_YES,     TRUE,  TRUE,  TRUE,  HZ_SCHED_DISABLED },
    { 120, FALSE, HZ_IDLE_UNKNOWN, FALSE, FALSE, FALSE, HZ_SCHED_RUN },   /* start inclusive */
    { 359, FALSE, HZ_IDLE_YES,     FALSE, FALSE, FALSE, HZ_SCHED_RUN },
    { 360, FALSE, HZ_IDLE_YES,     FALSE, FALSE, FALSE, HZ_SCHED_WAIT_WINDOW },  /* end exclusive */
    { 90,  FALSE, HZ_IDLE_YES,     FALSE, FALSE, FALSE, HZ_SCHED_WAIT_WINDOW },
    { 840, FALSE, HZ_IDLE_UNKNOWN, FALSE, FALSE, FALSE, HZ_SCHED_WAIT_WINDOW },
    { 840, FALSE, HZ_IDLE_NO,      FALSE, FALSE, TRUE,  HZ_SCHED_RUN },   /* learn now: any time */
    { 840, TRUE,  HZ_IDLE_YES,     FALSE, FALSE, TRUE,  HZ_SCHED_WAIT_POWER },
    { 840, FALSE, HZ_IDLE_YES,     TRUE,  FALSE, TRUE,  HZ_SCHED_PAUSED },
  };
  (void) t0130; (void) t0200; (void) t0400; (void) t0559; (void) t0600; (void) t1400;
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const HzSchedInput in = { cases[i].minute, cases[i].battery, cases[i].idle,
                                cases[i].paused, cases[i].never, cases[i].now };
      g_test_message ("case %u: %s", i, hz_sched_decision_name (hz_sched_decide (&w, &in)));
      g_assert_cmpint (hz_sched_decide (&w, &in), ==, cases[i].want);
    }
  /* a window across midnight */
  HzNightWindow late;
  g_assert_true (hz_night_window_parse ("22:30-05:00", &late));
  g_assert_true (hz_night_window_contains (&late, 23 * 60));
  g_assert_true (hz_night_window_contains (&late, 60));
  g_assert_false (hz_night_window_contains (&late, 5 * 60));
  g_assert_false (hz_night_window_contains (&late, 12 * 60));
  g_assert_false (hz_night_window_parse ("25:00-01:00", &late));
  g_assert_false (hz_night_window_parse ("2-6", &late));
  g_assert_false (hz_night_window_parse ("02:00-06:00x", &late));
}

static void
test_next_start (void)
{
  HzNightWindow w;
  hz_night_window_init (&w);
  g_autoptr (GTimeZone) utc = g_time_zone_new_utc ();
  g_autoptr (GDateTime) noon = g_date_time_new (utc, 2025, 3, 10, 12, 0, 0);
  g_autoptr (GDateTime) want = g_date_time_new (utc, 2025, 3, 11, 2, 0, 0);
  g_assert_cmpint (hz_night_window_next_start (&w, noon), ==, g_date_time_to_unix (want));
  g_autoptr (GDateTime) early = g_date_time_new (utc, 2025, 3, 10, 1, 0, 0);
  g_autoptr (GDateTime) want2 = g_date_time_new (utc, 2025, 3, 10, 2, 0, 0);
  g_assert_cmpint (hz_night_window_next_start (&w, early), ==, g_date_time_to_unix (want2));
  g_autoptr (GDateTime) inside = g_date_time_new (utc, 2025, 3, 10, 3, 0, 0);
  g_assert_cmpint (hz_night_window_next_start (&w, inside), ==, g_date_time_to_unix (inside));
}

/* ------------------------------------------------------------------ D-Bus round trip */

static GVariant *
call (GDBusConnection *c, const char *method, GError **error)
{
  return g_dbus_connection_call_sync (c, LEARNER_NAME, LEARNER_PATH,
                                      LEARNER_NAME, method, NULL, NULL,
                                      G_DBUS_CALL_FLAGS_NONE, 20000, NULL, error);
}

static GVariant *
get_prop (GDBusConnection *c, const char *name)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) r = g_dbus_connection_call_sync (c, LEARNER_NAME, LEARNER_PATH,
    "org.freedesktop.DBus.Properties", "Get", g_variant_new ("(ss)", LEARNER_NAME, name),
    G_VARIANT_TYPE ("(v)"), G_DBUS_CALL_FLAGS_NONE, 5000, NULL, &error);
  g_assert_no_error (error);
  GVariant *v;
  g_variant_get (r, "(v)", &v);
  return v;
}

static char *
get_state (GDBusConnection *c)
{
  g_autoptr (GVariant) v = get_prop (c, "State");
  return g_variant_dup_string (v, NULL);
}

/* Poll until State is `want` (TRUE) or `timeout_s` passes (FALSE). */
static gboolean
wait_state (GDBusConnection *c, const char *want, double timeout_s)
{
  const gint64 end = g_get_monotonic_time () + (gint64) (timeout_s * 1e6);
  while (g_get_monotonic_time () < end)
    {
      g_autofree char *s = get_state (c);
      if (g_str_equal (s, want))
        return TRUE;
      g_usleep (50000);
    }
  return FALSE;
}

/* The built hanzo-learner (g_free). */
static char *
learner_exe (void)
{
  const char *build = g_getenv ("HZ_BUILD_DIR");
  char *exe = g_build_filename (build ? build : ".", "learner", "hanzo-learner", NULL);
  g_assert_true (g_file_test (exe, G_FILE_TEST_IS_EXECUTABLE));
  return exe;
}

static void
test_dbus_round_trip (void)
{
  g_autofree char *model = learner_test_service_model ();
  if (model == NULL)
    return;
  g_autofree char *exe = learner_exe ();
  g_autofree char *root = g_dir_make_tmp ("hz-learnerd-XXXXXX", NULL);
  learner_test_home (root, model, 150, 10);
  g_autofree char *dbdir = g_build_filename (root, "data", "hanzo", NULL);
  g_autofree char *db = g_build_filename (dbdir, "hanzo.db", NULL);
  g_autofree char *ini_path = g_build_filename (root, "config", "hanzo", "learner.ini", NULL);
  g_autoptr (GDateTime) now = g_date_time_new_now_local ();

  g_autoptr (GError) error = NULL;
  g_autoptr (GDBusConnection) c = g_bus_get_sync (G_BUS_TYPE_SESSION, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (GSubprocess) proc = learner_test_spawn_service (root, exe, c);
  g_assert_true (wait_state (c, "waiting", 5));
  g_autoptr (GVariant) next = get_prop (c, "NextRun");
  g_assert_cmpint (g_variant_get_int64 (next), >, g_date_time_to_unix (now));

  g_autoptr (GVariant) r1 = call (c, "Pause", &error);
  g_assert_no_error (error);
  g_assert_true (wait_state (c, "paused", 5));
  /* the tray icon follows the state: its menu offers Resume while paused */
  g_autoptr (GVariant) label = g_dbus_connection_call_sync (c, LEARNER_NAME, "/MenuBar",
    "com.canonical.dbusmenu", "GetProperty", g_variant_new ("(is)", 3, "label"),
    G_VARIANT_TYPE ("(v)"), 0, 5000, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (GVariant) label_v = g_variant_get_child_value (label, 0);
  g_autoptr (GVariant) label_s = g_variant_get_variant (label_v);
  g_assert_cmpstr (g_variant_get_string (label_s, NULL), ==, "_Resume Learning");
  g_autoptr (GVariant) r2 = call (c, "LearnNow", &error);
  g_assert_null (r2);
  g_assert_nonnull (error);
  g_assert_true (g_dbus_error_is_remote_error (error));
  g_clear_error (&error);
  g_autoptr (GVariant) r3 = call (c, "Resume", &error);
  g_assert_no_error (error);
  g_assert_true (wait_state (c, "waiting", 5));

  /* LearnNow, then pause mid-job: checkpoint + interrupted run */
  g_autoptr (GVariant) r4 = call (c, "LearnNow", &error);
  g_assert_no_error (error);
  g_assert_true (wait_state (c, "running", 10));
  double progress = 0;
  for (int i = 0; i < 600 && progress < 0.2; i++)
    {
      g_autoptr (GVariant) p = get_prop (c, "Progress");
      progress = g_variant_get_double (p);
      g_usleep (20000);
    }
  g_assert_cmpfloat (progress, >=, 0.2);
  g_autoptr (GVariant) r5 = call (c, "Pause", &error);
  g_assert_no_error (error);
  g_assert_true (wait_state (c, "paused", 30));
  g_autofree char *ckpt = g_build_filename (dbdir, "adapters", "checkpoint", "optimizer.bin", NULL);
  g_assert_true (g_file_test (ckpt, G_FILE_TEST_EXISTS));
  {
    g_autoptr (HzStore) s = hz_store_open (db, &error);
    g_autoptr (GPtrArray) runs = hz_store_learner_run_list (s, 0, &error);
    g_assert_cmpuint (runs->len, ==, 1);
    const HzLearnerRun *run = runs->pdata[0];
    g_assert_cmpint (run->status, ==, HZ_LEARNER_RUN_INTERRUPTED);
    g_assert_cmpint (run->steps, >, 0);
    g_assert_cmpint (run->steps, <, 150);
  }
  /* Resume: the pending "learn now" continues from the checkpoint and promotes */
  g_autoptr (GVariant) r6 = call (c, "Resume", &error);
  g_assert_no_error (error);
  g_assert_true (wait_state (c, "waiting", 90));
  g_assert_false (g_file_test (ckpt, G_FILE_TEST_EXISTS));
  g_autofree char *active_path = NULL;
  {
    g_autoptr (HzStore) s = hz_store_open (db, &error);
    g_autoptr (GPtrArray) runs = hz_store_learner_run_list (s, 0, &error);
    g_assert_cmpuint (runs->len, ==, 2);
    const HzLearnerRun *run = runs->pdata[0];
    g_test_message ("run %" G_GINT64_FORMAT ": %s, %" G_GINT64_FORMAT " steps, held-out %.3f -> %.3f",
                    run->id, hz_learner_run_status_to_string (run->status), run->steps,
                    run->heldout_before, run->heldout_after);
    g_assert_cmpint (run->status, ==, HZ_LEARNER_RUN_PROMOTED);
    g_assert_cmpint (run->steps, ==, 150);
    g_assert_cmpfloat (run->heldout_after, <, run->heldout_before);
    g_autoptr (HzLearnerAdapter) a = hz_store_adapter_get_active (s, &error);
    g_assert_no_error (error);
    g_assert_cmpint (a->id, ==, run->adapter_id);
    g_assert_true (g_str_has_prefix (a->path, dbdir));
    g_autofree char *gguf = g_build_filename (a->path, "adapter.gguf", NULL);
    g_autofree char *st = g_build_filename (a->path, "adapter_model.safetensors", NULL);
    g_assert_true (g_file_test (gguf, G_FILE_TEST_EXISTS));
    g_assert_true (g_file_test (st, G_FILE_TEST_EXISTS));
    active_path = g_strdup (a->path);
  }
  /* Rollback: no older adapter, so none is active */
  g_autoptr (GVariant) r7 = call (c, "Rollback", &error);
  g_assert_no_error (error);
  const char *rolled;
  g_variant_get (r7, "(&s)", &rolled);
  g_assert_cmpstr (rolled, ==, "");
  /* the off switch */
  g_autoptr (GVariant) r8 = g_dbus_connection_call_sync (c, LEARNER_NAME, LEARNER_PATH,
    "org.freedesktop.DBus.Properties", "Set",
    g_variant_new ("(ssv)", LEARNER_NAME, "NeverLearn", g_variant_new_boolean (TRUE)),
    NULL, 0, 5000, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (wait_state (c, "disabled", 5));
  g_autoptr (GVariant) r9 = call (c, "LearnNow", &error);
  g_assert_null (r9);
  g_clear_error (&error);
  g_autofree char *saved = NULL;
  g_assert_true (g_file_get_contents (ini_path, &saved, NULL, NULL));
  g_assert_nonnull (strstr (saved, "never_learn=true"));

  g_subprocess_send_signal (proc, SIGTERM);
  g_subprocess_wait (proc, NULL, NULL);
  g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", root);
  g_assert_cmpint (system (cmd), ==, 0);
}

/* Calls LearnNow until its answer is no longer an error containing `old` (10 s at most);
 * the last error, if any, in *error. */
static void
learn_now_until (GDBusConnection *c, const char *old, GError **error)
{
  const gint64 end = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  for (;;)
    {
      g_clear_error (error);
      g_autoptr (GVariant) r = call (c, "LearnNow", error);
      if (r || !strstr ((*error)->message, old) || g_get_monotonic_time () > end)
        return;
      g_usleep (50000);
    }
}

/* No model= in learner.ini: LearnNow says why nothing can run while the app has no model
 * (and its model is gone); then it trains the app's model (GSettings model-path). */
static void
test_app_model (void)
{
  g_autofree char *model = learner_test_service_model ();
  if (model == NULL)
    return;
  g_autofree char *exe = learner_exe ();
  g_autofree char *root = g_dir_make_tmp ("hz-learnerd-XXXXXX", NULL);
  learner_test_home (root, NULL, 4, 2);
  g_autofree char *db = g_build_filename (root, "data", "hanzo", "hanzo.db", NULL);
  g_autofree char *kfdir = g_build_filename (root, "config", "glib-2.0", "settings", NULL);
  g_autofree char *keyfile = g_build_filename (kfdir, "keyfile", NULL);
  g_assert_cmpint (g_mkdir_with_parents (kfdir, 0700), ==, 0);

  g_autoptr (GError) error = NULL;
  g_autoptr (GDBusConnection) c = g_bus_get_sync (G_BUS_TYPE_SESSION, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (GSubprocess) proc = learner_test_spawn_service (root, exe, c);
  g_assert_true (wait_state (c, "waiting", 5));
  g_autoptr (GVariant) r1 = call (c, "LearnNow", &error);
  g_assert_null (r1);
  g_autofree char *name = g_dbus_error_get_remote_error (error);
  g_assert_cmpstr (name, ==, LEARNER_NAME ".Error.NoModel");
  g_dbus_error_strip_remote_error (error);
  g_test_message ("LearnNow without a model: %s", error->message);
  g_assert_nonnull (strstr (error->message, "no model is chosen for learning"));
  g_clear_error (&error);

  /* the app's model, but the file is gone (the daemon sees a changed setting once its file
   * monitor has: asked until the answer changes) */
  g_autofree char *gone = g_build_filename (root, "gone.gguf", NULL);
  g_autofree char *kf_gone = g_strdup_printf ("[ai/hanzo/Desktop]\nmodel-path='%s'\n", gone);
  g_assert_true (g_file_set_contents (keyfile, kf_gone, -1, NULL));
  learn_now_until (c, "no model is chosen", &error);
  g_assert_nonnull (error);
  g_dbus_error_strip_remote_error (error);
  g_test_message ("LearnNow with a missing model: %s", error->message);
  g_assert_nonnull (strstr (error->message, "gone.gguf, is not there"));
  g_clear_error (&error);

  /* the app's model: trained, its adapter made for that model */
  g_autofree char *kf = g_strdup_printf ("[ai/hanzo/Desktop]\nmodel-path='%s'\n", model);
  g_assert_true (g_file_set_contents (keyfile, kf, -1, NULL));
  learn_now_until (c, "gone.gguf", &error);
  g_assert_no_error (error);
  g_assert_true (wait_state (c, "running", 10));
  g_assert_true (wait_state (c, "waiting", 90));
  {
    g_autoptr (HzStore) s = hz_store_open (db, &error);
    g_assert_no_error (error);
    g_autoptr (GPtrArray) runs = hz_store_learner_run_list (s, 0, &error);
    g_assert_cmpuint (runs->len, ==, 1);
    const HzLearnerRun *run = runs->pdata[0];
    g_test_message ("run: %s, %" G_GINT64_FORMAT " steps", hz_learner_run_status_to_string (run->status),
                    run->steps);
    g_assert_cmpint (run->steps, ==, 4);
    g_autoptr (GMappedFile) mf = g_mapped_file_new (model, FALSE, NULL);
    g_autoptr (GBytes) bytes = g_mapped_file_get_bytes (mf);
    g_autofree char *sha = g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, bytes);
    g_assert_cmpstr (run->base_sha256, ==, sha);
  }
  g_subprocess_send_signal (proc, SIGTERM);
  g_subprocess_wait (proc, NULL, NULL);
  g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", root);
  g_assert_cmpint (system (cmd), ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/learner/daemon/schedule-table", test_schedule_table);
  g_test_add_func ("/learner/daemon/next-start", test_next_start);
  g_test_add_func ("/learner/daemon/dbus-round-trip", test_dbus_round_trip);
  g_test_add_func ("/learner/daemon/app-model", test_app_model);
  return g_test_run ();
}
