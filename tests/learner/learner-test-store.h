/* tests/learner/learner-test-store.h — a store with 24 rated, redacted conversations in
 * one user's style, and a home for the hanzo-learner service around it (header-only;
 * shared by test-daemon, test-federation and tests/store/test-store-multiprocess). */
#pragma once

#include <gio/gio.h>
#include "hanzo-store.h"
#include "hanzo-store-feedback.h"
#include "hanzo-store-redactions.h"
#include "hz-test-util.h"

/** Fill the store at `path` (created if needed): prompts "One day <Name> went to the park
 *  with Alice." (redacted to [PERSON_1]) and thumbs-up replies " <Name> said hi. Bye for
 *  now, <sign>." — `sign` makes one simulated user's style differ from another's. */
static inline void
learner_test_fill_store (const char *path, const char *sign)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (HzStore) s = hz_store_open (path, &error);
  g_assert_no_error (error);
  static const char *const names[] = { "Tom", "Lily", "Ben", "Mia", "Sam", "Anna", "Max", "Sue" };
  for (int i = 0; i < 24; i++)
    {
      const gint64 c = hz_store_create_conversation (s, "t", NULL, NULL, &error);
      g_autofree char *raw_q = g_strdup_printf ("One day %s went to the park with Alice.", names[i % 8]);
      g_autofree char *red_q = g_strdup_printf ("One day %s went to the park with [PERSON_1].", names[i % 8]);
      g_autofree char *reply = g_strdup_printf (" %s said hi. Bye for now, %s.", names[(i * 3) % 8],
                                                sign);
      const gint64 u = hz_store_append_message (s, c, 0, HZ_ROLE_USER, raw_q, NULL, TRUE, &error);
      const gint64 a = hz_store_append_message (s, c, u, HZ_ROLE_ASSISTANT, reply, "ab", TRUE, &error);
      g_assert_no_error (error);
      const gint64 ids[2] = { u, a };
      const char *texts[2] = { red_q, reply };
      for (int k = 0; k < 2; k++)
        {
          g_autoptr (HzMessage) m = hz_store_get_message (s, ids[k], &error);
          HzMessageRedaction r = { .message_id = ids[k], .redacted = (char *) texts[k],
                                   .redactor_version = 1, .source_updated_us = m->updated_us };
          g_assert_true (hz_store_put_message_redaction (s, &r, &error));
        }
      g_assert_true (hz_store_set_feedback (s, a, 1, &error));
      g_assert_no_error (error);
    }
}

/** What the service tests need: a session bus (run under dbus-run-session) and
 *  stories260K from ../shared. Returns the model's path (g_free), or NULL after marking
 *  the test skipped with the reason. */
static inline char *
learner_test_service_model (void)
{
  if (g_getenv ("DBUS_SESSION_BUS_ADDRESS") == NULL)
    {
      g_test_skip ("no session bus (run under dbus-run-session)");
      return NULL;
    }
  return hz_test_shared_path ("models/stories260K.gguf");
}

/** A home for hanzo-learner under `root`: `root`/data/hanzo/hanzo.db filled by
 *  learner_test_fill_store() ("Bob"), and `root`/config/hanzo/learner.ini for `model` (NULL:
 *  no model= line, the learner then takes the app's model-path setting) with
 *  `steps` training steps, a checkpoint every `checkpoint_every`, and a night window that
 *  excludes now (starts in two hours), so that only LearnNow starts a job. */
static inline void
learner_test_home (const char *root, const char *model, guint steps, guint checkpoint_every)
{
  g_autofree char *cfgdir = g_build_filename (root, "config", "hanzo", NULL);
  g_autofree char *dbdir = g_build_filename (root, "data", "hanzo", NULL);
  g_assert_cmpint (g_mkdir_with_parents (cfgdir, 0700), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (dbdir, 0700), ==, 0);
  g_autofree char *db = g_build_filename (dbdir, "hanzo.db", NULL);
  learner_test_fill_store (db, "Bob");
  g_autoptr (GDateTime) now = g_date_time_new_now_local ();
  const int m = g_date_time_get_hour (now) * 60 + g_date_time_get_minute (now);
  const int ws = (m + 120) % 1440, we = (m + 180) % 1440;
  g_autofree char *ini = g_strdup_printf (
    "[learner]\n%s%s%swindow=%02d:%02d-%02d:%02d\nsteps=%u\nbatch=4\nlr=5e-3\n"
    "max_tokens=64\ncheckpoint_every=%u\ntick_seconds=1\nheldout=0.25\nkeep=2\n",
    model ? "model=" : "", model ? model : "", model ? "\n" : "",
    ws / 60, ws % 60, we / 60, we % 60, steps, checkpoint_every);
  g_autofree char *ini_path = g_build_filename (cfgdir, "learner.ini", NULL);
  g_assert_true (g_file_set_contents (ini_path, ini, -1, NULL));
}

/** Start hanzo-learner (`exe`) as a D-Bus service on the session bus with the home of
 *  learner_test_home (`root`), and wait up to 10 s for its name ai.hanzo.Desktop.Learner (asserts
 *  that it came). `c`: the session bus. The app's settings it reads are the build's schema
 *  with the keyfile backend: `root`/config/glib-2.0/settings/keyfile. */
static inline GSubprocess *
learner_test_spawn_service (const char *root, const char *exe, GDBusConnection *c)
{
  g_autofree char *data = g_build_filename (root, "data", NULL);
  g_autofree char *config = g_build_filename (root, "config", NULL);
  g_autoptr (GSubprocessLauncher) l = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_NONE);
  g_subprocess_launcher_setenv (l, "XDG_DATA_HOME", data, TRUE);
  g_subprocess_launcher_setenv (l, "XDG_CONFIG_HOME", config, TRUE);
  g_subprocess_launcher_setenv (l, "GSETTINGS_BACKEND", "keyfile", TRUE);
  const char *build = g_getenv ("HZ_BUILD_DIR");
  g_autofree char *schemas = g_build_filename (build ? build : ".", "data", NULL);
  g_subprocess_launcher_setenv (l, "GSETTINGS_SCHEMA_DIR", schemas, TRUE);
  g_autoptr (GError) error = NULL;
  GSubprocess *proc = g_subprocess_launcher_spawn (l, &error, exe, "--gapplication-service",
                                                   NULL);
  g_assert_no_error (error);
  gboolean up = FALSE;
  for (int i = 0; i < 200 && !up; i++)
    {
      g_autoptr (GVariant) r = g_dbus_connection_call_sync (c, "org.freedesktop.DBus",
        "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
        g_variant_new ("(s)", "ai.hanzo.Desktop.Learner"), G_VARIANT_TYPE ("(b)"), 0, 1000, NULL, NULL);
      if (r)
        g_variant_get (r, "(b)", &up);
      if (!up)
        g_usleep (50000);
    }
  g_assert_true (up);
  return proc;
}
