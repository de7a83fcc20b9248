/* tests/ui/test-redact-worker.c — the app's background redaction (app/hz-redact-worker.h)
 * on a real SQLite store file, without a window (plain GLib main loop):
 *   - completed messages get their redacted copies (placeholders, no originals), a reply
 *     still streaming does not;
 *   - a burst of queue calls coalesces into at most two passes;
 *   - the main thread is never blocked: while the main thread's own connection holds the
 *     write lock, queue() returns at once and the main loop keeps running; the worker (its
 *     own connection) writes once the lock is released;
 *   - stop() ends a long pass between two messages and a new worker resumes it;
 *   - the application hook: hz_redact_worker_notify() creates the worker of a GApplication
 *     and it is stopped at the application's shutdown. */
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <string.h>

#include "hz-redact-worker.h"
#include <hanzo-store-redactions.h>

static const char *const originals[] = {
  "Mara Quinley", "mara.quinley@example.org", "Ines Okafor", "+44 20 7946 0958",
};

typedef struct {
  char    *dir, *path;
  HzStore *store;    /* the "main thread's" connection */
  gint64   conv;
} Fixture;

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  (void) data;
  g_autoptr (GError) error = NULL;
  f->dir = g_dir_make_tmp ("hz-redact-worker-XXXXXX", &error);
  g_assert_no_error (error);
  f->path = g_build_filename (f->dir, "hanzo.db", NULL);
  f->store = hz_store_open (f->path, &error);
  g_assert_no_error (error);
  f->conv = hz_store_create_conversation (f->store, "t", NULL, NULL, &error);
  g_assert_no_error (error);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  (void) data;
  hz_store_close (f->store);
  g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", f->dir);
  g_assert_true (g_spawn_command_line_sync (cmd, NULL, NULL, NULL, NULL));
  g_free (f->path);
  g_free (f->dir);
}

static gint64
add (Fixture *f, HzRole role, const char *text, gboolean complete)
{
  g_autoptr (GError) error = NULL;
  const gint64 id = hz_store_append_message (f->store, f->conv, 0, role, text, NULL, complete, &error);
  g_assert_no_error (error);
  return id;
}

typedef struct {
  guint passes, redacted;
  char *last_error;
} Count;

static void
on_finished (HzRedactWorker *w, guint n, const char *error_message, Count *c)
{
  (void) w;
  c->passes++;
  c->redacted += n;
  g_free (c->last_error);
  c->last_error = g_strdup (error_message);
}

/* Iterate the main loop until the worker is idle and its last "finished" was delivered. */
static void
wait_idle (HzRedactWorker *w)
{
  const gint64 end = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
  while (hz_redact_worker_is_busy (w) && g_get_monotonic_time () < end)
    if (!g_main_context_iteration (NULL, FALSE))
      g_usleep (1000);
  g_assert_false (hz_redact_worker_is_busy (w));
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

static void
assert_redacted (Fixture *f, gint64 id)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (HzMessageRedaction) r = hz_store_get_message_redaction (f->store, id, &error);
  g_assert_no_error (error);
  for (gsize k = 0; k < G_N_ELEMENTS (originals); k++)
    g_assert_null (strstr (r->redacted, originals[k]));
  g_assert_nonnull (strstr (r->redacted, "[PERSON_1]"));
}

static gboolean
has_copy (Fixture *f, gint64 id)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (HzMessageRedaction) r = hz_store_get_message_redaction (f->store, id, &error);
  return r != NULL;
}

static void
test_completed_messages (Fixture *f, gconstpointer data)
{
  (void) data;
  const gint64 u = add (f, HZ_ROLE_USER, "Hi, I am Mara Quinley, mail mara.quinley@example.org.", TRUE);
  const gint64 a = add (f, HZ_ROLE_ASSISTANT, "Hello Mara Quinley! Noted.", TRUE);
  const gint64 streaming = add (f, HZ_ROLE_ASSISTANT, "Let me ask Ines Okafor", FALSE);
  g_autoptr (HzRedactWorker) w = hz_redact_worker_new (f->path);
  Count c = { 0 };
  g_signal_connect (w, "finished", G_CALLBACK (on_finished), &c);
  /* a burst (a user message and its reply completing, a window catching up, ...) */
  for (int i = 0; i < 50; i++)
    hz_redact_worker_queue (w);
  wait_idle (w);
  g_assert_cmpuint (c.passes, >=, 1);
  g_assert_cmpuint (c.passes, <=, 2);
  g_assert_cmpuint (c.redacted, ==, 2);
  g_assert_null (c.last_error);
  assert_redacted (f, u);
  assert_redacted (f, a);
  g_assert_false (has_copy (f, streaming));
  /* the reply completes: the next pass redacts it, with the conversation's numbering */
  g_autoptr (GError) error = NULL;
  g_assert_true (hz_store_update_message (f->store, streaming,
                                          "Let me ask Ines Okafor to call +44 20 7946 0958.",
                                          -1, -1, -1, &error));
  g_assert_true (hz_store_set_message_complete (f->store, streaming, &error));
  hz_redact_worker_queue (w);
  wait_idle (w);
  g_assert_cmpuint (c.redacted, ==, 3);
  g_autoptr (HzMessageRedaction) r = hz_store_get_message_redaction (f->store, streaming, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (r->redacted, ==, "Let me ask [PERSON_2] to call [PHONE_1].");
  g_free (c.last_error);
}

static gboolean
count_tick (gpointer data)
{
  (*(guint *) data)++;
  return G_SOURCE_CONTINUE;
}

static void
test_main_thread_never_waits (Fixture *f, gconstpointer data)
{
  (void) data;
  const gint64 u = add (f, HZ_ROLE_USER, "My name is Mara Quinley.", TRUE);
  g_autoptr (HzRedactWorker) w = hz_redact_worker_new (f->path);
  Count c = { 0 };
  g_signal_connect (w, "finished", G_CALLBACK (on_finished), &c);
  /* the main thread's connection holds the write lock (as a long write would) */
  g_autoptr (GError) error = NULL;
  g_assert_true (hz_store_begin (f->store, &error));
  const gint64 t0 = g_get_monotonic_time ();
  hz_redact_worker_queue (w);
  const gint64 queued_us = g_get_monotonic_time () - t0;
  g_test_message ("queue() returned after %" G_GINT64_FORMAT " us", queued_us);
  /* the main loop keeps turning while the worker waits for the lock */
  guint ticks = 0;
  const guint tick_id = g_timeout_add (5, count_tick, &ticks);
  const gint64 end = g_get_monotonic_time () + 400 * 1000;
  while (g_get_monotonic_time () < end)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (tick_id);
  g_test_message ("%u main-loop ticks of 5 ms in 400 ms while the worker was blocked", ticks);
  g_assert_cmpuint (ticks, >=, 10);
  g_assert_true (hz_redact_worker_is_busy (w));   /* waiting on the lock, in its own thread */
  g_assert_cmpuint (c.passes, ==, 0);
  g_assert_true (hz_store_commit (f->store, &error));
  wait_idle (w);
  g_assert_cmpuint (c.passes, ==, 1);
  g_assert_null (c.last_error);
  assert_redacted (f, u);
  g_free (c.last_error);
}

static void
test_stop_resume (Fixture *f, gconstpointer data)
{
  (void) data;
  g_autoptr (GError) error = NULL;
  g_assert_true (hz_store_begin (f->store, &error));
  const guint n = 1500;
  for (guint i = 0; i < n; i++)
    add (f, i % 2 ? HZ_ROLE_ASSISTANT : HZ_ROLE_USER,
         i % 2 ? "Noted, Mara Quinley." : "Mail Mara Quinley at mara.quinley@example.org.", TRUE);
  g_assert_true (hz_store_commit (f->store, &error));
  HzRedactWorker *w = hz_redact_worker_new (f->path);
  Count c = { 0 };
  g_signal_connect (w, "finished", G_CALLBACK (on_finished), &c);
  hz_redact_worker_queue (w);
  /* stop in the middle of the pass: once the first copies are there */
  const gint64 end = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
  for (;;)
    {
      g_autoptr (GPtrArray) some = hz_store_list_message_redactions (f->store, 0, &error);
      g_assert_no_error (error);
      if (some->len > 0 || g_get_monotonic_time () > end)
        break;
      g_usleep (1000);
    }
  const gint64 t0 = g_get_monotonic_time ();
  hz_redact_worker_stop (w);
  g_test_message ("stop() took %.1f ms", (g_get_monotonic_time () - t0) / 1000.0);
  g_assert_false (hz_redact_worker_is_busy (w));
  hz_redact_worker_queue (w);   /* a no-op once stopped */
  g_assert_false (hz_redact_worker_is_busy (w));
  g_object_unref (w);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_cmpuint (c.passes, ==, 0);   /* nothing is reported after stop() */
  g_autoptr (GPtrArray) done = hz_store_list_message_redactions (f->store, 0, &error);
  g_test_message ("%u of %u messages redacted before stop()", done->len, n);
  g_assert_cmpuint (done->len, >, 0);
  g_assert_cmpuint (done->len, <, n);
  /* a new worker (the next start of the app) continues */
  g_autoptr (HzRedactWorker) w2 = hz_redact_worker_new (f->path);
  Count c2 = { 0 };
  g_signal_connect (w2, "finished", G_CALLBACK (on_finished), &c2);
  hz_redact_worker_queue (w2);
  wait_idle (w2);
  g_assert_cmpuint (c2.redacted, ==, n - done->len);
  g_autoptr (GPtrArray) all = hz_store_list_message_redactions (f->store, 0, &error);
  g_assert_cmpuint (all->len, ==, n);
  g_free (c2.last_error);
}

/* ------------------------------------------------------------------ GApplication hook */

typedef struct {
  Fixture      *f;
  gint64        msg;
  Count         c;
  GApplication *app;
} AppRun;

static void
app_finished (HzRedactWorker *w, guint n, const char *error_message, AppRun *run)
{
  on_finished (w, n, error_message, &run->c);
  if (!hz_redact_worker_is_busy (w))
    g_application_release (run->app);
}

static void
app_activate (GApplication *app, AppRun *run)
{
  g_application_hold (app);
  g_assert_null (hz_redact_worker_get_for_application (app));
  hz_redact_worker_notify (app, NULL);   /* no store: nothing */
  g_assert_null (hz_redact_worker_get_for_application (app));
  hz_redact_worker_notify (app, run->f->store);
  HzRedactWorker *w = hz_redact_worker_get_for_application (app);
  g_assert_nonnull (w);
  g_signal_connect (w, "finished", G_CALLBACK (app_finished), run);
  hz_redact_worker_notify (app, run->f->store);   /* the same worker */
  g_assert_true (hz_redact_worker_get_for_application (app) == w);
}

static void
test_application (Fixture *f, gconstpointer data)
{
  (void) data;
  g_autoptr (GApplication) app = g_application_new ("ai.hanzo.Test.RedactWorker",
                                                     G_APPLICATION_NON_UNIQUE);
  AppRun run = { f, add (f, HZ_ROLE_USER, "I am Mara Quinley.", TRUE), { 0 }, app };
  g_signal_connect (app, "activate", G_CALLBACK (app_activate), &run);
  g_assert_cmpint (g_application_run (app, 0, NULL), ==, 0);
  assert_redacted (f, run.msg);
  /* stopped at shutdown: a later notification does not start anything */
  HzRedactWorker *w = hz_redact_worker_get_for_application (app);
  hz_redact_worker_queue (w);
  g_assert_false (hz_redact_worker_is_busy (w));
  g_free (run.c.last_error);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/redact-worker/completed-messages", Fixture, NULL, fixture_set_up,
              test_completed_messages, fixture_tear_down);
  g_test_add ("/redact-worker/main-thread-never-waits", Fixture, NULL, fixture_set_up,
              test_main_thread_never_waits, fixture_tear_down);
  g_test_add ("/redact-worker/stop-resume", Fixture, NULL, fixture_set_up, test_stop_resume,
              fixture_tear_down);
  g_test_add ("/redact-worker/application", Fixture, NULL, fixture_set_up, test_application,
              fixture_tear_down);
  return g_test_run ();
}
