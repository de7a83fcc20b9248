/* learner/daemon-app.c — hanzo-learner: the on-device learner as a D-Bus activatable
 * GApplication service (ai.hanzo.Desktop.Learner, object /ai/hanzo/Desktop/Learner,
 * interface learner/ai.hanzo.Desktop.Learner.xml).
 *
 *   hanzo-learner --gapplication-service      (as started by D-Bus activation)
 *
 * Configuration: $XDG_CONFIG_HOME/hanzo/learner.ini, group [learner]:
 *   model=PATH (base GGUF; default: GSettings ai.hanzo.Desktop model-path, the model the app
 *   opens at start; with neither the learner waits, and LearnNow says so), window=02:00-06:00,
 *   never_learn=false, steps=100, batch=4, lr=2e-4, rank=8, max_tokens=512,
 *   checkpoint_every=20, keep=3, heldout=0.2, include_unrated=false,
 *   idle_seconds=300 (session idle threshold), tick_seconds=60 (schedule re-check),
 *   store=PATH (default $XDG_DATA_HOME/hanzo/hanzo.db),
 *   guard_model=PATH (default: GSettings ai.hanzo.Desktop guard-model-path, the app's guard
 *   model slot; empty = rules only), guard_max_messages=200, guard_model_tokens=256,
 *   guard_model_ctx=0 (its training context, at most 4096).
 * Every job first runs the redaction gate (hz_learner_job_redact(): rule-based copies of all
 * new messages, then the guard model's pass), then trains on the redacted copies only.
 * NeverLearn set over D-Bus is written back to that file.
 *
 * Federation (issue 8; federation.h): on when the GSettings key ai.hanzo.Desktop
 * federation-enabled is true (read at every job start; off by default). Then the night's
 * job trains with DP-SGD (sample-level DP for an adapter that may be released; group
 * [dp_sgd] of learner.ini: noise_multiplier=1.0, clip_norm=1.0, sample_rate=0 (= batch/N),
 * delta=1e-6; each night is a "dp-sgd" ledger row), and after a promotion a federation
 * pass runs in its own thread (hz_learner_federate_async(); group [federation]:
 * clip_norm=10, noise_multiplier=4.5, budget_epsilon=8, budget_delta=1e-6,
 * max_attempts=5, timeout_s=30, fetch_polls=6, fetch_interval_ms=10000): DP release,
 * upload, aggregate saved as the shared base adapter. It never blocks the next job; the
 * application is held while it runs and it is cancelled at shutdown. Endpoint and token
 * come from the keyring only.
 *
 * Every tick (and on Resume/LearnNow) the scheduler (night-schedule.h) decides from the local
 * time, UPower's OnBattery (system bus; absent = on AC), the session idle time
 * (org.gnome.Mutter.IdleMonitor GetIdletime on the session bus, else logind's IdleHint;
 * both absent = unknown) and the Pause/NeverLearn switches. A job (daemon-job.h) runs on
 * a worker thread; Pause, NeverLearn or the window's end set its stop flag, it checkpoints
 * and the next run resumes it. The service holds the application while a job runs and
 * otherwise exits after GApplication's inactivity timeout (D-Bus activation restarts it).
 *
 * Thread safety: everything here runs on the main thread except the job, which talks back
 * through g_main_context_invoke.
 */
#include <gio/gio.h>
#include <glib/gi18n.h>
#include <locale.h>
#include <math.h>
#include "daemon-job.h"
#include "background-portal.h"
#include "federation.h"
#include "night-schedule.h"
#include "tray.h"

/* Under the app's id (ai.hanzo.Desktop): a Flatpak app may own only names under its id, and
 * Flatpak exports only D-Bus service files named so (data/ai.hanzo.Desktop.Learner.service). */
#define LEARNER_NAME "ai.hanzo.Desktop.Learner"
#define LEARNER_PATH "/ai/hanzo/Desktop/Learner"
#define LEARNER_IFACE LEARNER_NAME

GResource *hz_learner_get_resource (void);

typedef struct {
  GApplication    *app;
  GDBusConnection *conn;
  guint            reg_id;
  GDBusNodeInfo   *info;
  char            *config_path;
  GKeyFile        *config;
  HzNightWindow    window;
  guint            tick_id;
  int              idle_seconds;
  /* state */
  gboolean         paused, never_learn, learn_now;
  const char      *state;
  HzSchedDecision  reason;
  double           progress;
  gint64           next_run;
  /* the job */
  GThread         *worker;
  gint             stop;
  /* federation passes in flight (each holds the application) */
  GCancellable    *fed_cancel;
  guint            fed_running;
  /* presence: the tray icon (config tray=true, the default) keeps the service resident */
  HzTray          *tray;
  GCancellable    *portal_cancel;
} Learner;

/* ------------------------------------------------------------------ properties */

static void
emit_changed (Learner *l, const char *name, GVariant *value)
{
  if (l->conn == NULL)
    return;
  GVariantBuilder b;
  g_variant_builder_init (&b, G_VARIANT_TYPE ("a{sv}"));
  g_variant_builder_add (&b, "{sv}", name, value);
  g_dbus_connection_emit_signal (l->conn, NULL, LEARNER_PATH, "org.freedesktop.DBus.Properties",
                                 "PropertiesChanged",
                                 g_variant_new ("(sa{sv}as)", LEARNER_IFACE, &b, NULL), NULL);
}

static void
set_state (Learner *l, const char *state)
{
  if (l->state && g_str_equal (l->state, state))
    return;
  l->state = state;
  emit_changed (l, "State", g_variant_new_string (state));
  if (l->tray)
    hz_tray_update (l->tray, l->state, l->progress);
}

static void
set_progress (Learner *l, double p)
{
  if (fabs (p - l->progress) < 1e-9)
    return;
  l->progress = p;
  emit_changed (l, "Progress", g_variant_new_double (p));
  if (l->tray)
    hz_tray_update (l->tray, l->state, l->progress);
}

/* ------------------------------------------------------------------ configuration */

static void
load_config (Learner *l, HzLearnerJobConfig *c)
{
  GKeyFile *k = l->config;
  g_key_file_load_from_file (k, l->config_path, G_KEY_FILE_KEEP_COMMENTS, NULL);
  g_autofree char *win = g_key_file_get_string (k, "learner", "window", NULL);
  hz_night_window_init (&l->window);
  if (win && !hz_night_window_parse (win, &l->window))
    g_warning ("learner.ini: bad window \"%s\", using 02:00-06:00", win);
  l->never_learn = g_key_file_get_boolean (k, "learner", "never_learn", NULL);
  l->idle_seconds = g_key_file_has_key (k, "learner", "idle_seconds", NULL)
                    ? g_key_file_get_integer (k, "learner", "idle_seconds", NULL) : 300;
  if (c == NULL)
    return;
  hz_learner_job_config_init (c);
  /* the base model: learner.ini's, else the app's (whose replies the adapter serves) */
  c->model_path = g_key_file_get_string (k, "learner", "model", NULL);
  if (c->model_path != NULL && *c->model_path == '\0')
    g_clear_pointer (&c->model_path, g_free);
  if (c->model_path == NULL)
    c->model_path = hz_learner_model_from_settings ();
  c->store_path = g_key_file_get_string (k, "learner", "store", NULL);
#define INT_KEY(key, field) \
  if (g_key_file_has_key (k, "learner", key, NULL)) field = g_key_file_get_integer (k, "learner", key, NULL)
#define DBL_KEY(key, field) \
  if (g_key_file_has_key (k, "learner", key, NULL)) field = g_key_file_get_double (k, "learner", key, NULL)
  INT_KEY ("steps", c->job.steps);
  INT_KEY ("batch", c->job.batch);
  INT_KEY ("rank", c->job.lora.r);
  INT_KEY ("max_tokens", c->job.max_tokens);
  INT_KEY ("checkpoint_every", c->job.checkpoint_every);
  INT_KEY ("keep", c->keep);
  DBL_KEY ("lr", c->job.sft.adamw.lr);
  DBL_KEY ("heldout", c->heldout_fraction);
  c->include_unrated = g_key_file_get_boolean (k, "learner", "include_unrated", NULL);
  /* the redaction gate's guard model: the app's slot unless learner.ini names one */
  c->guard_model_path = g_key_file_has_key (k, "learner", "guard_model", NULL)
                        ? g_key_file_get_string (k, "learner", "guard_model", NULL)
                        : hz_learner_guard_model_from_settings ();
  INT_KEY ("guard_max_messages", c->guard_max_messages);
  INT_KEY ("guard_model_tokens", c->guard_model_tokens);
  INT_KEY ("guard_model_ctx", c->guard_model_ctx);
#undef INT_KEY
#undef DBL_KEY
  c->job.dp_sgd = hz_learner_federation_enabled ();
  if (c->job.dp_sgd)
    {
      c->job.dp.noise_multiplier = 1.0;
#define DP_KEY(key, field) \
  if (g_key_file_has_key (k, "dp_sgd", key, NULL)) field = g_key_file_get_double (k, "dp_sgd", key, NULL)
      DP_KEY ("noise_multiplier", c->job.dp.noise_multiplier);
      DP_KEY ("clip_norm", c->job.dp.clip_norm);
      DP_KEY ("sample_rate", c->job.dp.sample_rate);
      DP_KEY ("delta", c->job.dp.delta);
#undef DP_KEY
      if (!(c->job.dp.noise_multiplier > 0))
        {
          g_warning ("learner.ini: [dp_sgd] noise_multiplier must be > 0; using 1.0");
          c->job.dp.noise_multiplier = 1.0;
        }
    }
}

static void
load_fed_params (Learner *l, HzFedParams *p)
{
  GKeyFile *k = l->config;
  hz_fed_params_init (p);
#define FED_DBL(key, field) \
  if (g_key_file_has_key (k, "federation", key, NULL)) field = g_key_file_get_double (k, "federation", key, NULL)
#define FED_UINT(key, field) \
  if (g_key_file_has_key (k, "federation", key, NULL)) field = (guint) MAX (0, g_key_file_get_integer (k, "federation", key, NULL))
  FED_DBL ("clip_norm", p->clip_norm);
  FED_DBL ("noise_multiplier", p->noise_multiplier);
  FED_DBL ("budget_epsilon", p->budget_epsilon);
  FED_DBL ("budget_delta", p->budget_delta);
  FED_UINT ("max_attempts", p->max_attempts);
  FED_UINT ("timeout_s", p->timeout_s);
  FED_UINT ("fetch_polls", p->fetch_polls);
  FED_UINT ("fetch_interval_ms", p->fetch_interval_ms);
#undef FED_DBL
#undef FED_UINT
}

static void
save_never_learn (Learner *l)
{
  g_key_file_set_boolean (l->config, "learner", "never_learn", l->never_learn);
  g_autofree char *dir = g_path_get_dirname (l->config_path);
  g_mkdir_with_parents (dir, 0700);
  g_autoptr (GError) error = NULL;
  if (!g_key_file_save_to_file (l->config, l->config_path, &error))
    g_warning ("saving %s: %s", l->config_path, error->message);
}

/* ------------------------------------------------------------------ probes */

/* UPower's OnBattery; FALSE (on AC) when UPower or the system bus is absent. */
static gboolean
probe_on_battery (void)
{
  g_autoptr (GDBusConnection) sys = g_bus_get_sync (G_BUS_TYPE_SYSTEM, NULL, NULL);
  if (sys == NULL)
    return FALSE;
  g_autoptr (GVariant) r = g_dbus_connection_call_sync (sys, "org.freedesktop.UPower",
    "/org/freedesktop/UPower", "org.freedesktop.DBus.Properties", "Get",
    g_variant_new ("(ss)", "org.freedesktop.UPower", "OnBattery"), G_VARIANT_TYPE ("(v)"),
    G_DBUS_CALL_FLAGS_NO_AUTO_START, 500, NULL, NULL);
  if (r == NULL)
    return FALSE;
  g_autoptr (GVariant) v = NULL;
  g_variant_get (r, "(v)", &v);
  return g_variant_is_of_type (v, G_VARIANT_TYPE_BOOLEAN) && g_variant_get_boolean (v);
}

/* Mutter's idle monitor, else logind's IdleHint of our session; UNKNOWN without either. */
static HzIdleState
probe_idle (Learner *l)
{
  if (l->conn)
    {
      g_autoptr (GVariant) r = g_dbus_connection_call_sync (l->conn, "org.gnome.Mutter.IdleMonitor",
        "/org/gnome/Mutter/IdleMonitor/Core", "org.gnome.Mutter.IdleMonitor", "GetIdletime",
        NULL, G_VARIANT_TYPE ("(t)"), G_DBUS_CALL_FLAGS_NO_AUTO_START, 500, NULL, NULL);
      if (r)
        {
          guint64 ms;
          g_variant_get (r, "(t)", &ms);
          return ms >= (guint64) l->idle_seconds * 1000 ? HZ_IDLE_YES : HZ_IDLE_NO;
        }
    }
  g_autoptr (GDBusConnection) sys = g_bus_get_sync (G_BUS_TYPE_SYSTEM, NULL, NULL);
  if (sys == NULL)
    return HZ_IDLE_UNKNOWN;
  g_autoptr (GVariant) r = g_dbus_connection_call_sync (sys, "org.freedesktop.login1",
    "/org/freedesktop/login1/session/auto", "org.freedesktop.DBus.Properties", "Get",
    g_variant_new ("(ss)", "org.freedesktop.login1.Session", "IdleHint"), G_VARIANT_TYPE ("(v)"),
    G_DBUS_CALL_FLAGS_NO_AUTO_START, 500, NULL, NULL);
  if (r == NULL)
    return HZ_IDLE_UNKNOWN;
  g_autoptr (GVariant) v = NULL;
  g_variant_get (r, "(v)", &v);
  return g_variant_is_of_type (v, G_VARIANT_TYPE_BOOLEAN) && g_variant_get_boolean (v)
         ? HZ_IDLE_YES : HZ_IDLE_NO;
}

/* ------------------------------------------------------------------ the job */

typedef struct {
  Learner            *l;
  HzLearnerJobConfig  cfg;
  gboolean            ok;
  HzLearnerJobOutcome outcome;
  char               *adapter;
  char               *message;
  double              progress;
} JobRun;

static gboolean
job_progress_main (gpointer data)
{
  JobRun *j = data;
  set_progress (j->l, j->progress);
  return G_SOURCE_REMOVE;
}

static void
job_progress (double fraction, gpointer data)
{
  JobRun *j = data;
  JobRun *copy = g_new (JobRun, 1);
  *copy = (JobRun) { .l = j->l, .progress = fraction };
  g_main_context_invoke_full (NULL, G_PRIORITY_DEFAULT, job_progress_main, copy, g_free);
}

static void schedule_check (Learner *l);

typedef struct {
  Learner *l;
  char    *shared_dir;
} FedCall;

static void
federation_done (GObject *source, GAsyncResult *result, gpointer data)
{
  (void) source;
  FedCall *fc = data;
  Learner *l = fc->l;
  HzFedOutcome out;
  g_autoptr (GError) error = NULL;
  if (hz_learner_federate_finish (result, &out, &error))
    g_message ("federation: uploaded to round %" G_GUINT64_FORMAT " (%zu bytes, epsilon %.3g, "
               "%.3g spent this year)%s", out.round_id, out.upload_bytes, out.epsilon,
               out.total_epsilon, out.pending ? "; aggregate not ready yet" : "");
  else
    g_message ("federation: nothing uploaded: %s", error->message);
  if (out.aggregate_saved && l->conn)
    g_dbus_connection_emit_signal (l->conn, NULL, LEARNER_PATH, LEARNER_IFACE,
                                   "SharedAdapterReady",
                                   g_variant_new ("(st)", fc->shared_dir, out.aggregate_round),
                                   NULL);
  hz_fed_outcome_clear (&out);
  g_free (fc->shared_dir);
  g_free (fc);
  l->fed_running--;
  g_application_release (l->app);
}

static void
start_federation (Learner *l, const HzLearnerJobConfig *c, HzLearnerJobOutcome outcome,
                  const char *adapter)
{
  HzFedParams p;
  load_fed_params (l, &p);
  if (l->fed_cancel == NULL)
    l->fed_cancel = g_cancellable_new ();
  FedCall *fc = g_new (FedCall, 1);
  *fc = (FedCall) { l, g_strdup (c->shared_dir) };
  if (hz_learner_job_maybe_federate (c, outcome, adapter, &p, l->fed_cancel, federation_done, fc))
    {
      l->fed_running++;
      g_application_hold (l->app);
    }
  else
    {
      g_free (fc->shared_dir);
      g_free (fc);
    }
  hz_fed_params_clear (&p);
}

static gboolean
job_done_main (gpointer data)
{
  JobRun *j = data;
  Learner *l = j->l;
  g_thread_join (l->worker);
  l->worker = NULL;
  if (!j->ok)
    g_warning ("learner job failed: %s", j->message);
  else if (j->outcome == HZ_LEARNER_JOB_PROMOTED)
    {
      if (l->conn)
        g_dbus_connection_emit_signal (l->conn, NULL, LEARNER_PATH, LEARNER_IFACE,
                                       "AdapterReady", g_variant_new ("(s)", j->adapter), NULL);
      start_federation (l, &j->cfg, j->outcome, j->adapter);
    }
  if (j->ok && j->outcome != HZ_LEARNER_JOB_INTERRUPTED)
    l->learn_now = FALSE;
  set_progress (l, 0);
  g_application_release (l->app);
  hz_learner_job_config_clear (&j->cfg);
  g_free (j->adapter);
  g_free (j->message);
  g_free (j);
  schedule_check (l);
  return G_SOURCE_REMOVE;
}

static gpointer
job_thread (gpointer data)
{
  JobRun *j = data;
  g_autoptr (GError) error = NULL;
  gint64 run_id;
  j->ok = hz_learner_job_run (&j->cfg, &j->l->stop, job_progress, j, &j->outcome, &j->adapter,
                              &run_id, &error);
  if (!j->ok)
    j->message = g_strdup (error ? error->message : "failed");
  g_main_context_invoke (NULL, job_done_main, j);
  return NULL;
}

static void
start_job (Learner *l)
{
  JobRun *j = g_new0 (JobRun, 1);
  j->l = l;
  load_config (l, &j->cfg);
  if (j->cfg.model_path == NULL)
    {
      g_message ("no model to train: the app has none (GSettings model-path) and %s has no "
                 "model=", l->config_path);
      hz_learner_job_config_clear (&j->cfg);
      g_free (j);
      l->learn_now = FALSE;
      set_state (l, "idle");
      return;
    }
  g_atomic_int_set (&l->stop, 0);
  g_application_hold (l->app);
  set_state (l, "running");
  l->worker = g_thread_new ("hz-learner-job", job_thread, j);
}

/* ------------------------------------------------------------------ scheduling */

static void
schedule_check (Learner *l)
{
  g_autoptr (GDateTime) now = g_date_time_new_now_local ();
  const gint64 next = hz_night_window_next_start (&l->window, now);
  if (next != l->next_run)
    {
      l->next_run = next;
      emit_changed (l, "NextRun", g_variant_new_int64 (next));
    }
  HzSchedInput in = {
    .minute_of_day = g_date_time_get_hour (now) * 60 + g_date_time_get_minute (now),
    .paused = l->paused, .never_learn = l->never_learn, .learn_now = l->learn_now,
  };
  /* probes only when they can matter */
  if (!in.never_learn && !in.paused)
    in.on_battery = probe_on_battery ();
  if (!in.learn_now && hz_night_window_contains (&l->window, in.minute_of_day))
    in.idle = probe_idle (l);
  const HzSchedDecision d = hz_sched_decide (&l->window, &in);
  if (d != l->reason)
    {
      l->reason = d;
      emit_changed (l, "Reason", g_variant_new_string (hz_sched_decision_name (d)));
    }
  if (l->worker)
    {
      if (d != HZ_SCHED_RUN)
        g_atomic_int_set (&l->stop, 1);   /* checkpoint and stop; job_done re-checks */
      return;
    }
  switch (d)
    {
    case HZ_SCHED_RUN:      start_job (l); break;
    case HZ_SCHED_PAUSED:   set_state (l, "paused"); break;
    case HZ_SCHED_DISABLED: set_state (l, "disabled"); break;
    default:                set_state (l, "waiting"); break;
    }
}

static gboolean
on_tick (gpointer data)
{
  schedule_check (data);
  return G_SOURCE_CONTINUE;
}

/* ------------------------------------------------------------------ D-Bus */

/* Why no job can start for lack of a base model (g_free), or NULL when there is one. */
static char *
no_model_reason (Learner *l)
{
  HzLearnerJobConfig c;
  load_config (l, &c);
  char *why = NULL;
  if (c.model_path == NULL)
    why = g_strdup ("no model is chosen for learning: open a model in Hanzo (the learner "
                    "trains the one Hanzo opens at start), or name one with model= in "
                    "learner.ini");
  else if (!g_file_test (c.model_path, G_FILE_TEST_IS_REGULAR))
    why = g_strdup_printf ("the model chosen for learning, %s, is not there", c.model_path);
  hz_learner_job_config_clear (&c);
  return why;
}

static void
method_call (GDBusConnection *conn, const char *sender, const char *path, const char *iface,
             const char *method, GVariant *params, GDBusMethodInvocation *inv, gpointer data)
{
  (void) conn; (void) sender; (void) path; (void) iface; (void) params;
  Learner *l = data;
  if (g_str_equal (method, "Pause"))
    {
      l->paused = TRUE;
      schedule_check (l);
      g_dbus_method_invocation_return_value (inv, NULL);
    }
  else if (g_str_equal (method, "Resume"))
    {
      l->paused = FALSE;
      schedule_check (l);
      g_dbus_method_invocation_return_value (inv, NULL);
    }
  else if (g_str_equal (method, "LearnNow"))
    {
      if (l->never_learn || l->paused)
        {
          g_dbus_method_invocation_return_dbus_error (inv, LEARNER_IFACE ".Error.NotAllowed",
            l->never_learn ? "learning is switched off (NeverLearn)" : "the learner is paused");
          return;
        }
      g_autofree char *why = no_model_reason (l);
      if (why != NULL)
        {
          g_dbus_method_invocation_return_dbus_error (inv, LEARNER_IFACE ".Error.NoModel", why);
          return;
        }
      l->learn_now = TRUE;
      schedule_check (l);
      if (l->worker == NULL && l->reason == HZ_SCHED_WAIT_POWER)
        {
          l->learn_now = FALSE;
          g_dbus_method_invocation_return_dbus_error (inv, LEARNER_IFACE ".Error.NotAllowed",
                                                      "on battery power");
          return;
        }
      g_dbus_method_invocation_return_value (inv, NULL);
    }
  else if (g_str_equal (method, "Rollback"))
    {
      HzLearnerJobConfig c;
      load_config (l, &c);
      g_autoptr (GError) error = NULL;
      g_autofree char *active = hz_learner_job_rollback (c.store_path, &error);
      hz_learner_job_config_clear (&c);
      if (active == NULL)
        g_dbus_method_invocation_return_gerror (inv, error);
      else
        {
          g_dbus_method_invocation_return_value (inv, g_variant_new ("(s)", active));
          if (*active && l->conn)
            g_dbus_connection_emit_signal (l->conn, NULL, LEARNER_PATH, LEARNER_IFACE,
                                           "AdapterReady", g_variant_new ("(s)", active), NULL);
        }
    }
  else
    g_dbus_method_invocation_return_error (inv, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_METHOD,
                                           "no method %s", method);
}

static GVariant *
get_property (GDBusConnection *conn, const char *sender, const char *path, const char *iface,
              const char *name, GError **error, gpointer data)
{
  (void) conn; (void) sender; (void) path; (void) iface;
  Learner *l = data;
  if (g_str_equal (name, "State"))
    return g_variant_new_string (l->state);
  if (g_str_equal (name, "Progress"))
    return g_variant_new_double (l->progress);
  if (g_str_equal (name, "NextRun"))
    return g_variant_new_int64 (l->next_run);
  if (g_str_equal (name, "Reason"))
    return g_variant_new_string (hz_sched_decision_name (l->reason));
  if (g_str_equal (name, "NeverLearn"))
    return g_variant_new_boolean (l->never_learn);
  g_set_error (error, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_PROPERTY, "no property %s", name);
  return NULL;
}

static gboolean
set_property (GDBusConnection *conn, const char *sender, const char *path, const char *iface,
              const char *name, GVariant *value, GError **error, gpointer data)
{
  (void) conn; (void) sender; (void) path; (void) iface;
  Learner *l = data;
  if (!g_str_equal (name, "NeverLearn"))
    {
      g_set_error (error, G_DBUS_ERROR, G_DBUS_ERROR_PROPERTY_READ_ONLY, "%s is read-only", name);
      return FALSE;
    }
  l->never_learn = g_variant_get_boolean (value);
  save_never_learn (l);
  emit_changed (l, "NeverLearn", g_variant_new_boolean (l->never_learn));
  schedule_check (l);
  return TRUE;
}

static const GDBusInterfaceVTable vtable = { method_call, get_property, set_property, { 0 } };

/* ------------------------------------------------------------------ presence */

/* "Open Hanzo": activate the chat app through D-Bus (it is D-Bus activatable). */
static void
open_app (Learner *l)
{
  g_dbus_connection_call (l->conn, "ai.hanzo.Desktop", "/ai/hanzo/Desktop",
                          "org.freedesktop.Application", "Activate",
                          g_variant_new ("(@a{sv})", g_variant_new_array (G_VARIANT_TYPE ("{sv}"),
                                                                          NULL, 0)),
                          NULL, G_DBUS_CALL_FLAGS_NONE, 30000, NULL, NULL, NULL);
}

static void
on_tray_action (HzTrayAction action, gpointer data)
{
  Learner *l = data;
  switch (action)
    {
    case HZ_TRAY_ACTION_PAUSE:
    case HZ_TRAY_ACTION_RESUME:
      l->paused = action == HZ_TRAY_ACTION_PAUSE;
      schedule_check (l);
      break;
    case HZ_TRAY_ACTION_OPEN:
      open_app (l);
      break;
    case HZ_TRAY_ACTION_QUIT:
      g_application_quit (l->app);   /* shutdown checkpoints a running job */
      break;
    }
}

static void
on_portal_answer (GObject *source, GAsyncResult *res, gpointer data)
{
  g_autoptr (GError) error = NULL;
  gboolean autostart = FALSE;
  if (hz_background_request_finish (res, &autostart, &error))
    g_message ("background portal: allowed%s", autostart ? ", autostart at login" : "");
  else if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    g_message ("background portal: %s", error->message);
}

/* The tray icon (unless tray=false) and, in a sandbox, the Background portal request. */
static void
start_presence (Learner *l)
{
  g_autoptr (GError) error = NULL;
  if (l->conn == NULL)
    return;
  if (!g_key_file_has_key (l->config, "learner", "tray", NULL) ||
      g_key_file_get_boolean (l->config, "learner", "tray", NULL))
    {
      l->tray = hz_tray_new (l->conn, "ai.hanzo.Desktop", on_tray_action, l, &error);
      if (l->tray == NULL)
        g_message ("no tray icon: %s", error->message);
      else
        {
          hz_tray_update (l->tray, l->state, l->progress);
          g_application_hold (l->app);   /* tray-resident: released by Quit */
        }
    }
  if (hz_background_is_sandboxed ())
    {
      /* libexecdir is not on the sandbox's PATH: the autostart entry needs the full path */
      const char *const argv[] = { HZ_LIBEXECDIR "/hanzo-learner", "--gapplication-service",
                                   NULL };
      l->portal_cancel = g_cancellable_new ();
      hz_background_request_async (l->conn, "Hanzo learns from your rated chats at night, "
                                   "on this computer only", argv, TRUE, l->portal_cancel,
                                   on_portal_answer, NULL);
    }
}

static void
stop_presence (Learner *l)
{
  if (l->portal_cancel)
    g_cancellable_cancel (l->portal_cancel);
  g_clear_object (&l->portal_cancel);
  if (l->tray)
    g_application_release (l->app);
  g_clear_pointer (&l->tray, hz_tray_free);
}

static void
on_startup (GApplication *app, gpointer data)
{
  Learner *l = data;
  l->conn = g_application_get_dbus_connection (app);
  load_config (l, NULL);
  const int tick = g_key_file_has_key (l->config, "learner", "tick_seconds", NULL)
                   ? MAX (1, g_key_file_get_integer (l->config, "learner", "tick_seconds", NULL)) : 60;
  l->tick_id = g_timeout_add_seconds ((guint) tick, on_tick, l);
  schedule_check (l);
  start_presence (l);
}

static void
on_shutdown (GApplication *app, gpointer data)
{
  (void) app;
  Learner *l = data;
  if (l->worker)
    {
      g_atomic_int_set (&l->stop, 1);
      g_thread_join (l->worker);   /* checkpoints before returning */
      l->worker = NULL;
    }
  if (l->fed_cancel)
    {
      g_cancellable_cancel (l->fed_cancel);
      while (l->fed_running > 0)   /* bounded: every network wait is cancellable */
        g_main_context_iteration (NULL, TRUE);
      g_clear_object (&l->fed_cancel);
    }
  stop_presence (l);
  g_clear_handle_id (&l->tick_id, g_source_remove);
}

static void
on_activate (GApplication *app, gpointer data)
{
  (void) app;
  schedule_check (data);
}

/* The service's GApplication: its object is exported in dbus_register, which GApplication
 * runs before it asks for the bus name, so a caller that sees the name (or a D-Bus
 * activation message queued for it) always finds the interface (registering it in "startup"
 * left a window in which calls got "No such interface"). */
#define HZ_TYPE_LEARNER_APP (hz_learner_app_get_type ())
G_DECLARE_FINAL_TYPE (HzLearnerApp, hz_learner_app, HZ, LEARNER_APP, GApplication)

struct _HzLearnerApp
{
  GApplication parent_instance;
  Learner *learner;
};

G_DEFINE_FINAL_TYPE (HzLearnerApp, hz_learner_app, G_TYPE_APPLICATION)

static gboolean
hz_learner_app_dbus_register (GApplication *app, GDBusConnection *conn, const char *path,
                              GError **error)
{
  Learner *l = HZ_LEARNER_APP (app)->learner;
  if (!G_APPLICATION_CLASS (hz_learner_app_parent_class)->dbus_register (app, conn, path, error))
    return FALSE;
  if (l->info == NULL)
    {
      g_autoptr (GBytes) xml = g_resource_lookup_data (hz_learner_get_resource (),
                                                       LEARNER_PATH "/" LEARNER_IFACE ".xml",
                                                       0, error);
      if (xml == NULL)
        return FALSE;
      l->info = g_dbus_node_info_new_for_xml (g_bytes_get_data (xml, NULL), error);
      if (l->info == NULL)
        return FALSE;
    }
  l->reg_id = g_dbus_connection_register_object (conn, LEARNER_PATH, l->info->interfaces[0],
                                                 &vtable, l, NULL, error);
  return l->reg_id != 0;
}

static void
hz_learner_app_dbus_unregister (GApplication *app, GDBusConnection *conn, const char *path)
{
  Learner *l = HZ_LEARNER_APP (app)->learner;
  if (l->reg_id != 0)
    g_dbus_connection_unregister_object (conn, l->reg_id);
  l->reg_id = 0;
  G_APPLICATION_CLASS (hz_learner_app_parent_class)->dbus_unregister (app, conn, path);
}

static void
hz_learner_app_class_init (HzLearnerAppClass *klass)
{
  GApplicationClass *app_class = G_APPLICATION_CLASS (klass);
  app_class->dbus_register = hz_learner_app_dbus_register;
  app_class->dbus_unregister = hz_learner_app_dbus_unregister;
}

static void
hz_learner_app_init (HzLearnerApp *self)
{
  (void) self;
}

int
main (int argc, char **argv)
{
  Learner l = { .state = "idle", .reason = HZ_SCHED_WAIT_WINDOW };
  /* the tray menu speaks the app's language (one gettext domain for the product) */
  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, HZ_LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);
  l.config = g_key_file_new ();
  l.config_path = g_build_filename (g_get_user_config_dir (), "hanzo", "learner.ini", NULL);
  /* the --gapplication-service switch (D-Bus activation) makes it the service; without it
   * an invocation activates the running service (or starts it through D-Bus) */
  HzLearnerApp *learner_app = g_object_new (HZ_TYPE_LEARNER_APP, "application-id", LEARNER_NAME,
                                            "flags", G_APPLICATION_DEFAULT_FLAGS, NULL);
  learner_app->learner = &l;
  l.app = G_APPLICATION (learner_app);
  g_application_set_inactivity_timeout (l.app, 10 * 60 * 1000);
  g_signal_connect (l.app, "startup", G_CALLBACK (on_startup), &l);
  g_signal_connect (l.app, "shutdown", G_CALLBACK (on_shutdown), &l);
  g_signal_connect (l.app, "activate", G_CALLBACK (on_activate), &l);
  const int status = g_application_run (l.app, argc, argv);
  g_object_unref (l.app);
  g_clear_pointer (&l.info, g_dbus_node_info_unref);
  g_key_file_free (l.config);
  g_free (l.config_path);
  return status;
}
