/* tests/store/test-store-multiprocess.c — issue 20: other processes on hanzo.db lose nothing
 * of a running writer. A writer process (tests/store/store-writer.c: the store used as
 * the app uses it, a second and a third HzStore opening on the same file in the same
 * process) commits messages in a loop and reports each commit on stdout, while
 *   - /store/multiprocess/sqlite3-shell: the sqlite3 shell reads the database every few
 *     milliseconds (`sqlite3 DB "select count(*) from messages"`, the command);
 *   - /store/multiprocess/learner-job: the same, while the real hanzo-learner service
 *     (on the session bus; LearnNow) runs its job on the same file: the redaction gate
 *     writes a copy of every message, then a few training steps on stories260K
 *     (skipped without a session bus or ../shared);
 * and then SIGKILLs the writer. Between reads the test checks, from /proc, that the writer
 * still holds its POSIX locks (SQLite's shared lock on the database and its lock on the
 * -shm file: without them another process's last close checkpoints and deletes -wal and
 * -shm under the live connection, and resets the -shm it has mapped) and holds no
 * descriptor of a database file that is "(deleted)". After the kill every message the
 * writer reported committed is in the database, every reply it reported complete holds
 * its final text, and the message count the shell saw never went down.
 * Before the fix of issue 20 the locks were gone after the writer's second connection
 * opened (its check_sqlite_header() and secure_db_files() closed descriptors of the open
 * database), the first shell read deleted -wal and -shm, and the writer died of SIGBUS. */
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hanzo-store.h"
#include "hanzo-store-learner.h"
#include "hz-test-util.h"
#include "learner-test-store.h"
#include "store-test-util.h"

typedef struct {
  char        *root, *db, *out;  /* temporary folder, database, writer's stdout */
  GSubprocess *writer;
  char        *pid;              /* the writer's pid, as in /proc/locks */
  guint64      db_ino, shm_ino;
  guint        checks, no_db_lock, no_shm_lock, deleted_fds, reads, failed_reads, drops;
  gint64       last_count;
  char        *first_problem;
} Watch;

static char *
build_path (const char *rel)
{
  const char *build = g_getenv ("HZ_BUILD_DIR");
  return g_build_filename (build ? build : ".", rel, NULL);
}

/* Whether the writer's stdout holds `line`. */
static gboolean
output_has (Watch *w, const char *line)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents (w->out, &text, NULL, NULL))
    return FALSE;
  return strstr (text, line) != NULL;
}

/* Start the writer on a fresh or existing database; returns once its second connection
 * is open ("ready"). */
static void
watch_start (Watch *w, const char *root, guint pause_ms)
{
  w->root = g_strdup (root);
  w->db = g_build_filename (root, "data", "hanzo", "hanzo.db", NULL);
  w->out = g_build_filename (root, "writer.out", NULL);
  w->last_count = -1;
  g_autofree char *exe = build_path ("tests/store/store-writer");
  g_autofree char *pause = g_strdup_printf ("%u", pause_ms);
  g_autoptr (GSubprocessLauncher) l = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_NONE);
  g_subprocess_launcher_set_stdout_file_path (l, w->out);
  g_autoptr (GError) error = NULL;
  w->writer = g_subprocess_launcher_spawn (l, &error, exe, w->db, pause, NULL);
  g_assert_no_error (error);
  w->pid = g_strdup (g_subprocess_get_identifier (w->writer));
  const gint64 deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  while (!output_has (w, "ready\n") && g_get_monotonic_time () < deadline)
    g_usleep (5000);
  g_assert_true (output_has (w, "ready\n"));
  w->db_ino = st_inode (w->db);
  g_autofree char *shm = g_strconcat (w->db, "-shm", NULL);
  w->shm_ino = st_inode (shm);
}

static void
note_problem (Watch *w, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

static void
note_problem (Watch *w, const char *fmt, ...)
{
  if (w->first_problem)
    return;
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *what = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  w->first_problem = g_strdup_printf ("check %u: %s", w->checks, what);
}

/* How many of the writer's descriptors name a database file that is "(deleted)". */
static guint
writer_deleted_fds (Watch *w)
{
  g_autofree char *dir = g_strdup_printf ("/proc/%s/fd", w->pid);
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  guint n = 0;
  for (const char *name; d && (name = g_dir_read_name (d));)
    {
      g_autofree char *link = g_build_filename (dir, name, NULL);
      g_autofree char *target = g_file_read_link (link, NULL);
      if (target && g_str_has_prefix (target, w->db) && g_str_has_suffix (target, " (deleted)"))
        n++;
    }
  return n;
}

/* Run the sqlite3 shell on the database; returns its stdout (NULL when it failed). */
static char *
shell (Watch *w, const char *sql)
{
  const char *argv[] = { "sqlite3", w->db, sql, NULL };
  g_autofree char *out = NULL, *err = NULL;
  int status = 0;
  g_autoptr (GError) error = NULL;
  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &err,
                     &status, &error) || !g_spawn_check_wait_status (status, &error))
    {
      note_problem (w, "sqlite3 shell: %s %s", error->message, err ? err : "");
      return NULL;
    }
  return g_steal_pointer (&out);
}

/* One round: the shell read, then the writer's locks and descriptors. */
static void
watch_once (Watch *w)
{
  w->checks++;
  g_autofree char *count = shell (w, "select count(*) from messages");
  w->reads++;
  if (count == NULL)
    w->failed_reads++;
  else
    {
      const gint64 n = g_ascii_strtoll (count, NULL, 10);
      if (n < w->last_count)
        {
          w->drops++;
          note_problem (w, "the shell counted %" G_GINT64_FORMAT " messages after %"
                        G_GINT64_FORMAT, n, w->last_count);
        }
      w->last_count = MAX (n, w->last_count);
    }
  if (!st_pid_holds_lock (w->pid, w->db_ino))
    {
      w->no_db_lock++;
      note_problem (w, "the writer holds no lock on %s", w->db);
    }
  if (!st_pid_holds_lock (w->pid, w->shm_ino))
    {
      w->no_shm_lock++;
      note_problem (w, "the writer holds no lock on its -shm file");
    }
  const guint deleted = writer_deleted_fds (w);
  if (deleted)
    {
      w->deleted_fds++;
      note_problem (w, "%u of the writer's descriptors are (deleted) database files", deleted);
    }
}

/* Poll the writer: has it died (SIGBUS after its -shm was reset, ...)? */
static gboolean
writer_alive (Watch *w)
{
  g_autofree char *dir = g_strdup_printf ("/proc/%s", w->pid);
  g_autofree char *stat_path = g_build_filename (dir, "stat", NULL);
  g_autofree char *stat = NULL;
  if (!g_file_get_contents (stat_path, &stat, NULL, NULL))
    return FALSE;
  const char *close_paren = strrchr (stat, ')');
  return close_paren && close_paren[1] == ' ' && close_paren[2] != 'Z';
}

/* SIGKILL the writer, then check the database against what it reported. */
static void
watch_finish (Watch *w)
{
  const gboolean alive = writer_alive (w);
  g_subprocess_send_signal (w->writer, SIGKILL);
  g_autoptr (GError) error = NULL;
  g_assert_true (g_subprocess_wait (w->writer, NULL, &error));
  g_test_message ("%u checks, %u shell reads (%u failed; count never fell: %s), "
                  "%u without the database lock, %u without the -shm lock, %u with deleted "
                  "descriptors%s%s", w->checks, w->reads, w->failed_reads,
                  w->drops ? "no" : "yes", w->no_db_lock, w->no_shm_lock, w->deleted_fds,
                  w->first_problem ? "; first: " : "", w->first_problem ? w->first_problem : "");
  if (!alive)
    g_test_message ("the writer died before the kill (signal %d)",
                    g_subprocess_get_if_signaled (w->writer)
                      ? g_subprocess_get_term_sig (w->writer) : 0);

  /* every committed message is there; every completed reply has its final text */
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (w->out, &text, NULL, NULL));
  g_autoptr (HzStore) s = hz_store_open (w->db, &error);
  g_assert_no_error (error);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  guint committed = 0, completed = 0, missing = 0, wrong = 0, errors = 0;
  for (guint i = 0; lines[i]; i++)
    {
      gint64 id = 0;
      guint round = 0;
      if (sscanf (lines[i], "committed %" G_GINT64_FORMAT, &id) == 1)
        {
          committed++;
          g_autoptr (HzMessage) m = hz_store_get_message (s, id, NULL);
          missing += m == NULL;
        }
      else if (sscanf (lines[i], "completed %" G_GINT64_FORMAT " %u", &id, &round) == 2)
        {
          completed++;
          g_autoptr (HzMessage) m = hz_store_get_message (s, id, NULL);
          g_autofree char *want = g_strdup_printf (" Then, in round %u, the fox ran home.", round);
          wrong += m == NULL || !m->complete || m->n_tokens != 9 || g_strcmp0 (m->content, want);
        }
      else if (g_str_has_prefix (lines[i], "error "))
        {
          errors++;
          g_test_message ("writer: %s", lines[i]);
        }
    }
  g_test_message ("writer reported %u committed messages and %u completed replies; "
                  "%u missing, %u not as written, %u write errors", committed, completed,
                  missing, wrong, errors);
  g_assert_true (alive);
  g_assert_cmpuint (committed, >, 100);
  g_assert_cmpuint (missing, ==, 0);
  g_assert_cmpuint (wrong, ==, 0);
  g_assert_cmpuint (errors, ==, 0);
  g_assert_cmpuint (w->failed_reads, ==, 0);
  g_assert_cmpuint (w->drops, ==, 0);
  g_assert_cmpuint (w->no_db_lock, ==, 0);
  g_assert_cmpuint (w->no_shm_lock, ==, 0);
  g_assert_cmpuint (w->deleted_fds, ==, 0);
  g_assert_cmpint (w->last_count, >, 0);
}

static void
watch_clear (Watch *w)
{
  g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", w->root);
  g_assert_true (g_spawn_command_line_sync (cmd, NULL, NULL, NULL, NULL));
  g_clear_object (&w->writer);
  g_free (w->root);
  g_free (w->db);
  g_free (w->out);
  g_free (w->pid);
  g_free (w->first_problem);
}

static gboolean
have_shell (void)
{
  g_autofree char *sqlite3 = g_find_program_in_path ("sqlite3");
  if (sqlite3 == NULL)
    g_test_skip ("the sqlite3 shell is not installed");
  return sqlite3 != NULL;
}

/* ------------------------------------------------------------------ sqlite3 shell */

static void
test_sqlite3_shell (void)
{
  if (!have_shell ())
    return;
  Watch w = { 0 };
  g_autofree char *root = g_dir_make_tmp ("hz-multiprocess-XXXXXX", NULL);
  watch_start (&w, root, 2);
  const gint64 end = g_get_monotonic_time () + 3 * G_USEC_PER_SEC;
  while (g_get_monotonic_time () < end && writer_alive (&w))
    {
      watch_once (&w);
      g_usleep (10000);
    }
  watch_finish (&w);
  watch_clear (&w);
}

/* ------------------------------------------------------------------ hanzo-learner */

/* Finished learner runs, read with the shell (-1 when the read failed). */
static gint64
finished_runs (Watch *w)
{
  g_autofree char *n = shell (w, "select count(*) from learner_runs where finished_us > 0");
  return n ? g_ascii_strtoll (n, NULL, 10) : -1;
}

static void
test_learner_job (void)
{
  if (!have_shell ())
    return;
  g_autofree char *model = learner_test_service_model ();
  if (model == NULL)
    return;
  g_autofree char *root = g_dir_make_tmp ("hz-multiprocess-XXXXXX", NULL);
  learner_test_home (root, model, 8, 4);   /* rated replies to train on, LearnNow only */
  Watch w = { 0 };
  watch_start (&w, root, 10);

  g_autofree char *exe = build_path ("learner/hanzo-learner");
  g_autoptr (GError) error = NULL;
  g_autoptr (GDBusConnection) c = g_bus_get_sync (G_BUS_TYPE_SESSION, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (GSubprocess) learner = learner_test_spawn_service (root, exe, c);
  g_autoptr (GVariant) r = g_dbus_connection_call_sync (c, "ai.hanzo.Desktop.Learner",
    "/ai/hanzo/Desktop/Learner", "ai.hanzo.Desktop.Learner", "LearnNow", NULL, NULL, G_DBUS_CALL_FLAGS_NONE,
    20000, NULL, &error);
  g_assert_no_error (error);

  /* until the job has recorded its run and closed its connection, and a while after */
  const gint64 deadline = g_get_monotonic_time () + 150 * G_USEC_PER_SEC;
  gint64 done_at = 0;
  for (guint round = 0; writer_alive (&w) && g_get_monotonic_time () < deadline; round++)
    {
      watch_once (&w);
      if (done_at == 0 && round % 10 == 0 && finished_runs (&w) > 0)
        done_at = g_get_monotonic_time ();
      if (done_at && g_get_monotonic_time () - done_at > 2 * G_USEC_PER_SEC)
        break;
      g_usleep (10000);
    }
  g_assert_cmpint (done_at, >, 0);
  watch_finish (&w);

  /* the job did its work on the shared file: a run recorded, every message it saw copied */
  g_autoptr (HzStore) s = hz_store_open (w.db, &error);
  g_assert_no_error (error);
  g_autoptr (GPtrArray) runs = hz_store_learner_run_list (s, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (runs->len, ==, 1);
  const HzLearnerRun *run = runs->pdata[0];
  g_test_message ("learner run: %s, %" G_GINT64_FORMAT " steps, %s",
                  hz_learner_run_status_to_string (run->status), run->steps, run->message);
  g_assert_cmpint (run->status, !=, HZ_LEARNER_RUN_FAILED);
  g_assert_cmpint (run->steps, >, 0);
  g_autofree char *copies = shell (&w, "select count(*) from message_redactions");
  g_assert_nonnull (copies);
  g_test_message ("the gate wrote %" G_GINT64_FORMAT " redacted copies",
                  g_ascii_strtoll (copies, NULL, 10));
  g_assert_cmpint (g_ascii_strtoll (copies, NULL, 10), >, 48);

  g_subprocess_send_signal (learner, SIGTERM);
  g_assert_true (g_subprocess_wait (learner, NULL, NULL));
  watch_clear (&w);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/store/multiprocess/sqlite3-shell", test_sqlite3_shell);
  g_test_add_func ("/store/multiprocess/learner-job", test_learner_job);
  return g_test_run ();
}
