/* test-store-robustness.c — libhzstore under bad files, newer schemas, old schemas, a
 * writer killed mid-transaction, concurrent handles, a full disk, and more connections in
 * one process keeping SQLite's locks. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "store-test-util.h"

/* ------------------------------------------------------------ files that are not ours */

/* Opening `path` fails with `code` and leaves it byte-for-byte as it was, with no
 * -wal/-shm/-journal files created next to it. */
static void
assert_refused_untouched (const char *path, int code, const char *msg_part)
{
  g_autofree char *before = NULL, *after = NULL;
  gsize n_before = 0, n_after = 0;
  g_autoptr (GError) error = NULL;

  g_assert_true (g_file_get_contents (path, &before, &n_before, NULL));
  HzStore *store = hz_store_open (path, &error);
  g_assert_null (store);
  g_assert_error (error, HZ_STORE_ERROR, code);
  g_assert_nonnull (strstr (error->message, path));
  g_assert_nonnull (strstr (error->message, msg_part));
  g_test_message ("refused as expected: %s", error->message);
  g_assert_true (g_file_get_contents (path, &after, &n_after, NULL));
  g_assert_cmpmem (before, n_before, after, n_after);
  for (const char *const *sfx = (const char *const[]) { "-wal", "-journal", NULL }; *sfx; sfx++)
    {
      g_autofree char *side = g_strconcat (path, *sfx, NULL);
      g_assert_false (g_file_test (side, G_FILE_TEST_EXISTS));
    }
}

static void
test_not_a_database (void)
{
  g_autofree char *text = st_tmp_path ("notes.db");
  g_assert_true (g_file_set_contents (text, "These are my notes, not a database.\n", -1, NULL));
  assert_refused_untouched (text, HZ_STORE_ERROR_CORRUPT, "not a Hanzo database");

  g_autofree char *tiny = st_tmp_path ("tiny.db");
  g_assert_true (g_file_set_contents (tiny, "SQLite", -1, NULL));
  assert_refused_untouched (tiny, HZ_STORE_ERROR_CORRUPT, "not a Hanzo database");

  /* The right magic followed by garbage (a damaged header/first page). */
  g_autofree char *damaged = st_tmp_path ("damaged.db");
  GRand *rand = g_rand_new_with_seed (42);
  GByteArray *bytes = g_byte_array_new ();
  g_byte_array_append (bytes, (const guint8 *) "SQLite format 3", 16);
  for (int i = 0; i < 8192; i++)
    {
      guint8 b = (guint8) g_rand_int (rand);
      g_byte_array_append (bytes, &b, 1);
    }
  g_assert_true (g_file_set_contents (damaged, (const char *) bytes->data, bytes->len, NULL));
  g_byte_array_unref (bytes);
  g_rand_free (rand);
  assert_refused_untouched (damaged, HZ_STORE_ERROR_CORRUPT, "not a Hanzo database");
}

/* Create an SQLite file directly with `sql`, checkpointed and closed (no -wal left). */
static void
make_raw_db (const char *path, const char *sql)
{
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, sql, NULL, NULL, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_close (db), ==, SQLITE_OK);
}

static void
test_foreign_database (void)
{
  g_autofree char *path = st_tmp_path ("other-app.db");
  make_raw_db (path, "CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('x');");
  assert_refused_untouched (path, HZ_STORE_ERROR_CORRUPT, "another application");
}

static void
test_newer_schema_refused (void)
{
  g_autofree char *path = st_tmp_path ("newer.db");
  {
    g_autoptr (HzStore) store = st_open (path);
    g_autoptr (GError) error = NULL;
    gint64 conv = hz_store_create_conversation (store, "from the future", NULL, NULL, &error);
    g_assert_cmpint (conv, >, 0);
  }
  g_autofree char *bump = g_strdup_printf ("PRAGMA journal_mode = DELETE; "
                                           "PRAGMA user_version = %d",
                                           HZ_STORE_SCHEMA_VERSION + 1);
  make_raw_db (path, bump);
  assert_refused_untouched (path, HZ_STORE_ERROR_TOO_NEW, "newer version");
}

/* A file at schema 1 (made by taking a v2 file back to v1) with messages migrates to the
 * current schema on open, and the new search index covers the old messages. */
static void
test_migrate_from_v1 (void)
{
  g_autofree char *path = st_tmp_path ("v1.db");
  gint64 conv, ids[3];
  g_autoptr (GError) error = NULL;
  {
    g_autoptr (HzStore) store = st_open (path);
    conv = hz_store_create_conversation (store, "old", NULL, NULL, &error);
    const char *texts[] = { "an old walrus", "old penguins", "walrus again" };
    for (int i = 0; i < 3; i++)
      ids[i] = hz_store_append_message (store, conv, 0, HZ_ROLE_USER, texts[i], NULL, TRUE,
                                        &error);
    g_assert_no_error (error);
    g_assert_true (hz_store_exec (store,
      "BEGIN;"
      "DROP TRIGGER messages_fts_insert; DROP TRIGGER messages_fts_delete;"
      "DROP TRIGGER messages_fts_update; DROP TABLE messages_fts;"
      "PRAGMA user_version = 1; COMMIT;", &error));
    g_assert_no_error (error);
  }
  g_autoptr (HzStore) store = st_open (path);
  g_assert_cmpint (hz_store_get_schema_version (store), ==, HZ_STORE_SCHEMA_VERSION);
  g_assert_cmpint (st_query_int (store, "PRAGMA user_version"), ==, HZ_STORE_SCHEMA_VERSION);
  g_autoptr (GPtrArray) hits = hz_store_search_messages (store, "walrus", 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hits->len, ==, 2);
  for (guint i = 0; i < hits->len; i++)
    {
      gint64 id = ((HzSearchHit *) hits->pdata[i])->message_id;
      g_assert_true (id == ids[0] || id == ids[2]);
    }
  g_autoptr (GPtrArray) msgs = hz_store_list_messages (store, conv, &error);
  g_assert_cmpuint (msgs->len, ==, 3);
  st_assert_integrity (store);
}

/* ------------------------------------------------------------ writer killed mid-transaction */

#define CRASH_COMMITTED 40

typedef struct {
  char   kind;  /* 'C' committed message id, 'T' inside the big transaction, 'E' error */
  gint64 id;
} CrashReport;

static char *
committed_text (int i)
{
  /* Long enough to span pages; distinct per message. */
  GString *s = g_string_new (NULL);
  g_string_append_printf (s, "committed %d:", i);
  for (int k = 0; k < 50 + i * 7; k++)
    g_string_append_printf (s, " w%d-%d", i, k);
  return g_string_free (s, FALSE);
}

static void
report (int fd, char kind, gint64 id)
{
  CrashReport r = { kind, id };
  if (write (fd, &r, sizeof r) != sizeof r)
    _exit (3);
}

G_NORETURN static void
child_fail (int fd)
{
  report (fd, 'E', 0);
  _exit (1);
}

/* The child: commits CRASH_COMMITTED messages (streamed as the app does), then writes
 * forever inside one transaction until the parent kills it. Never returns. */
G_NORETURN static void
crash_child (const char *path, int fd, int report_after)
{
  GError *error = NULL;
  HzStore *store = hz_store_open (path, &error);
  if (!store)
    child_fail (fd);
  /* A small page cache makes the uncommitted transaction spill into the WAL file. */
  sqlite3_exec (hz_store_get_db (store), "PRAGMA cache_size = 20", NULL, NULL, NULL);
  gint64 conv = hz_store_create_conversation (store, "crash", NULL, NULL, &error);
  if (!conv)
    child_fail (fd);
  gint64 first_id = 0;
  for (int i = 0; i < CRASH_COMMITTED; i++)
    {
      g_autofree char *text = committed_text (i);
      gint64 id = hz_store_append_message (store, conv, 0, HZ_ROLE_ASSISTANT, "", NULL,
                                           FALSE, &error);
      if (!id ||
          !hz_store_update_message (store, id, text, i, 0.1, 10.0, &error) ||
          !hz_store_set_message_complete (store, id, &error))
        child_fail (fd);
      first_id = first_id ? first_id : id;
      report (fd, 'C', id);
    }
  /* Empty the WAL: from here on every frame in it belongs to the uncommitted transaction. */
  if (sqlite3_exec (hz_store_get_db (store), "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL,
                    NULL) != SQLITE_OK ||
      !hz_store_begin (store, &error))
    child_fail (fd);
  g_autofree char *filler = g_strnfill (6000, 'u');
  for (int j = 0;; j++)
    {
      g_autofree char *text = g_strdup_printf ("uncommitted %d %s", j, filler);
      gint64 id = hz_store_append_message (store, conv, 0, HZ_ROLE_USER, text, NULL, TRUE,
                                           &error);
      if (!id)
        child_fail (fd);
      if (j % 50 == 0 && j > 0)
        hz_store_update_message (store, first_id, "uncommitted overwrite", -1, -1, -1, NULL);
      if (j == report_after)
        report (fd, 'T', id);
    }
}

static void
run_crash_round (int round, int report_after, guint kill_delay_us, gboolean expect_spill)
{
  g_autofree char *name = g_strdup_printf ("crash-%d.db", round);
  g_autofree char *path = st_tmp_path (name);
  int fds[2];
  g_assert_cmpint (pipe (fds), ==, 0);

  pid_t pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      close (fds[0]);
      crash_child (path, fds[1], report_after);
    }
  close (fds[1]);

  GArray *committed = g_array_new (FALSE, FALSE, sizeof (gint64));
  gboolean in_txn = FALSE;
  CrashReport r;
  while (!in_txn && read (fds[0], &r, sizeof r) == sizeof r)
    {
      g_assert_cmpint (r.kind, !=, 'E');
      if (r.kind == 'C')
        g_array_append_val (committed, r.id);
      in_txn = r.kind == 'T';
    }
  g_assert_true (in_txn);
  if (kill_delay_us)
    g_usleep (kill_delay_us);
  g_assert_cmpint (kill (pid, SIGKILL), ==, 0);
  int status = 0;
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_true (WIFSIGNALED (status));
  g_assert_cmpint (WTERMSIG (status), ==, SIGKILL);
  close (fds[0]);
  g_assert_cmpuint (committed->len, ==, CRASH_COMMITTED);

  /* When the transaction outgrew the page cache, its uncommitted pages were already in
   * the WAL file (emptied just before it began) when the writer died. */
  g_autofree char *wal = g_strconcat (path, "-wal", NULL);
  GStatBuf sb;
  g_assert_cmpint (g_stat (wal, &sb), ==, 0);
  g_test_message ("round %d: killed with %" G_GINT64_FORMAT " bytes of uncommitted WAL",
                  round, (gint64) sb.st_size);
  if (expect_spill)
    g_assert_cmpint (sb.st_size, >, 100 * 1024);

  g_autoptr (HzStore) store = st_open (path);
  st_assert_integrity (store);
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) list = hz_store_list_conversations (store, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (list->len, ==, 1);
  g_autoptr (GPtrArray) msgs = hz_store_list_messages (
    store, ((HzConversation *) list->pdata[0])->id, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (msgs->len, ==, CRASH_COMMITTED);
  for (guint i = 0; i < msgs->len; i++)
    {
      HzMessage *m = msgs->pdata[i];
      g_autofree char *text = committed_text ((int) i);
      g_assert_cmpint (m->id, ==, g_array_index (committed, gint64, i));
      g_assert_cmpstr (m->content, ==, text);
      g_assert_cmpint (m->n_tokens, ==, (gint64) i);
      g_assert_true (m->complete);
    }
  g_assert_cmpint (st_query_int (store, "SELECT count(*) FROM messages "
                                        "WHERE content LIKE 'uncommitted%'"), ==, 0);
  g_autoptr (GPtrArray) hits = hz_store_search_messages (store, "uncommitted", 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hits->len, ==, 0);

  /* The store keeps working after recovery. */
  gint64 id = hz_store_append_message (store, ((HzConversation *) list->pdata[0])->id, 0,
                                       HZ_ROLE_USER, "after the crash", NULL, TRUE, &error);
  g_assert_no_error (error);
  g_assert_cmpint (id, >, g_array_index (committed, gint64, CRASH_COMMITTED - 1));
  g_array_unref (committed);
}

static void
test_crash_mid_transaction (void)
{
  /* Killed right after the report, a little later, and after the cache spilled a lot. */
  run_crash_round (0, 5, 0, FALSE);
  run_crash_round (1, 30, g_test_rand_int_range (1000, 20000), FALSE);
  run_crash_round (2, 200, 0, TRUE);
}

/* ------------------------------------------------------------ concurrent handles */

#define CONC_WRITES 150

typedef struct ConcJob ConcJob;
struct ConcJob {
  const char    *path;
  gint64         conv;
  volatile gint *writers_left;
  ConcJob       *reader;         /* writers: the reader of the same conversation */
  GError        *error;
  gint           n_read_passes;  /* readers: atomic */
};

/* Writers call this now and then so that reads really interleave with writes even on a
 * loaded machine: wait (up to 5 s) until the reader finishes another pass. */
static void
wait_for_reader_pass (ConcJob *reader)
{
  gint seen = g_atomic_int_get (&reader->n_read_passes);
  for (int k = 0; k < 5000 && g_atomic_int_get (&reader->n_read_passes) == seen; k++)
    g_usleep (1000);
}

static gpointer
opener_thread (gpointer data)
{
  ConcJob *job = data;
  HzStore *store = hz_store_open (job->path, &job->error);
  if (store && hz_store_get_schema_version (store) != HZ_STORE_SCHEMA_VERSION)
    g_set_error (&job->error, HZ_STORE_ERROR, HZ_STORE_ERROR_FAILED, "wrong version");
  hz_store_close (store);
  return NULL;
}

static gpointer
writer_thread (gpointer data)
{
  ConcJob *job = data;
  HzStore *store = hz_store_open (job->path, &job->error);
  for (int i = 0; store && i < CONC_WRITES && !job->error; i++)
    {
      if (i % 30 == 0)
        wait_for_reader_pass (job->reader);
      g_autofree char *text = g_strdup_printf ("conv %" G_GINT64_FORMAT " msg %d", job->conv, i);
      gint64 id = hz_store_append_message (store, job->conv, 0, HZ_ROLE_ASSISTANT, "", NULL,
                                           FALSE, &job->error);
      if (id)
        hz_store_update_message (store, id, text, i, -1, -1, &job->error);
      if (!job->error)
        hz_store_set_message_complete (store, id, &job->error);
    }
  hz_store_close (store);
  g_atomic_int_dec_and_test (job->writers_left);
  return NULL;
}

/* Reads while the writers write: every listed message is a fully committed one (complete,
 * in order, with its final text), and counts never go down. */
static gpointer
reader_thread (gpointer data)
{
  ConcJob *job = data;
  HzStore *store = hz_store_open (job->path, &job->error);
  guint last = 0;
  while (store && !job->error)
    {
      gboolean writers_done = g_atomic_int_get (job->writers_left) == 0;
      g_autoptr (GPtrArray) msgs = hz_store_list_messages (store, job->conv, &job->error);
      if (!msgs)
        break;
      guint n_complete = 0;
      for (guint i = 0; i < msgs->len; i++)
        {
          HzMessage *m = msgs->pdata[i];
          if (!m->complete)
            {
              if (i != msgs->len - 1)
                g_set_error (&job->error, HZ_STORE_ERROR, HZ_STORE_ERROR_FAILED,
                             "incomplete message %u is not the last", i);
              continue;
            }
          g_autofree char *want = g_strdup_printf ("conv %" G_GINT64_FORMAT " msg %u",
                                                   job->conv, i);
          if (strcmp (m->content, want) != 0 || m->n_tokens != (gint64) i)
            g_set_error (&job->error, HZ_STORE_ERROR, HZ_STORE_ERROR_FAILED,
                         "message %u reads \"%s\"", i, m->content);
          n_complete++;
        }
      if (n_complete < last)
        g_set_error (&job->error, HZ_STORE_ERROR, HZ_STORE_ERROR_FAILED, "count went down");
      last = n_complete;
      g_atomic_int_inc (&job->n_read_passes);
      if (writers_done)
        break;
    }
  hz_store_close (store);
  return NULL;
}

/* The first run: the app and the learner open (and create) the same new file at once. Many
 * rounds of 4 handles racing on a brand-new file: every one opens it at the current schema
 * (a handle that read the identity between another's commits took the new file for a
 * foreign one; switching to WAL while another handle read it failed with "locked"). */
static void
test_first_open_race (void)
{
  for (int round = 0; round < 25; round++)
    {
      g_autofree char *name = g_strdup_printf ("first-open-%d.db", round);
      g_autofree char *path = st_tmp_path (name);
      ConcJob openers[4] = { 0 };
      GThread *threads[4];
      for (int i = 0; i < 4; i++)
        {
          openers[i].path = path;
          threads[i] = g_thread_new ("opener", opener_thread, &openers[i]);
        }
      for (int i = 0; i < 4; i++)
        {
          g_thread_join (threads[i]);
          g_assert_no_error (openers[i].error);
        }
    }
}

static void
test_concurrent_handles (void)
{
  g_autofree char *path = st_tmp_path ("concurrent.db");

  /* Several handles opening (and migrating) a brand-new file at the same time. */
  ConcJob openers[4] = { 0 };
  GThread *threads[4];
  for (int i = 0; i < 4; i++)
    {
      openers[i].path = path;
      threads[i] = g_thread_new ("opener", opener_thread, &openers[i]);
    }
  for (int i = 0; i < 4; i++)
    {
      g_thread_join (threads[i]);
      g_assert_no_error (openers[i].error);
    }

  g_autoptr (HzStore) main_store = st_open (path);
  g_autoptr (GError) error = NULL;
  gint64 conv_a = hz_store_create_conversation (main_store, "a", NULL, NULL, &error);
  gint64 conv_b = hz_store_create_conversation (main_store, "b", NULL, NULL, &error);
  g_assert_no_error (error);

  volatile gint writers_left = 2;
#define JOB(c, r) { .path = path, .conv = (c), .writers_left = &writers_left, .reader = (r) }
  ConcJob ra = JOB (conv_a, NULL), rb = JOB (conv_b, NULL);
  ConcJob wa = JOB (conv_a, &ra), wb = JOB (conv_b, &rb);
#undef JOB
  GThread *t[4] = {
    g_thread_new ("writer-a", writer_thread, &wa),
    g_thread_new ("writer-b", writer_thread, &wb),
    g_thread_new ("reader-a", reader_thread, &ra),
    g_thread_new ("reader-b", reader_thread, &rb),
  };
  for (int i = 0; i < 4; i++)
    g_thread_join (t[i]);
  g_assert_no_error (wa.error);
  g_assert_no_error (wb.error);
  g_assert_no_error (ra.error);
  g_assert_no_error (rb.error);
  g_assert_cmpint (ra.n_read_passes, >=, CONC_WRITES / 30);
  g_assert_cmpint (rb.n_read_passes, >=, CONC_WRITES / 30);
  g_test_message ("reader passes while writing: %d and %d", ra.n_read_passes, rb.n_read_passes);

  for (gint64 conv = conv_a; conv <= conv_b; conv++)
    {
      g_autoptr (GPtrArray) msgs = hz_store_list_messages (main_store, conv, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (msgs->len, ==, CONC_WRITES);
    }
  st_assert_integrity (main_store);
}

/* ------------------------------------------------------------ full disk */

/* SQLite's max_page_count stands in for a full file system (SQLITE_FULL either way; a
 * tmpfs needs root). */
static void
test_disk_full (void)
{
  g_autofree char *path = st_tmp_path ("full.db");
  g_autoptr (HzStore) store = st_open (path);
  g_autoptr (GError) error = NULL;
  gint64 conv = hz_store_create_conversation (store, "full", NULL, NULL, &error);
  gint64 ids[10];
  for (int i = 0; i < 10; i++)
    {
      g_autofree char *text = g_strdup_printf ("precious %d", i);
      ids[i] = hz_store_append_message (store, conv, 0, HZ_ROLE_USER, text, NULL, TRUE,
                                        &error);
      g_assert_no_error (error);
    }
  gint64 pages = st_query_int (store, "PRAGMA page_count");
  g_autofree char *limit = g_strdup_printf ("PRAGMA max_page_count = %" G_GINT64_FORMAT,
                                            pages + 16);
  g_assert_true (hz_store_exec (store, limit, &error));

  /* Autocommit writes: one fails with FULL, nothing partial remains. */
  g_autofree char *big = g_strnfill (20000, 'x');
  int n_ok = 0;
  while (hz_store_append_message (store, conv, 0, HZ_ROLE_USER, big, NULL, TRUE, &error))
    g_assert_cmpint (++n_ok, <, 100);
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_FULL);
  g_assert_nonnull (strstr (error->message, "disk is full"));
  g_test_message ("full after %d big messages: %s", n_ok, error->message);
  g_clear_error (&error);
  g_assert_false (hz_store_update_message (store, ids[0], big, -1, -1, -1, &error));
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_FULL);
  g_clear_error (&error);

  /* Inside an explicit transaction: the commit reports the failure, nothing is kept. */
  gint64 before = st_query_int (store, "SELECT count(*) FROM messages");
  g_assert_true (hz_store_begin (store, &error));
  g_assert_cmpint (hz_store_append_message (store, conv, 0, HZ_ROLE_USER, "small", NULL,
                                            TRUE, &error), >, 0);
  g_assert_cmpint (hz_store_append_message (store, conv, 0, HZ_ROLE_USER, big, NULL, TRUE,
                                            &error), ==, 0);
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_FULL);
  g_clear_error (&error);
  hz_store_rollback (store);
  g_assert_cmpint (st_query_int (store, "SELECT count(*) FROM messages"), ==, before);

  /* Earlier data intact, file sound, and writing works again once there is room. */
  for (int i = 0; i < 10; i++)
    {
      g_autofree char *text = g_strdup_printf ("precious %d", i);
      g_autoptr (HzMessage) m = hz_store_get_message (store, ids[i], &error);
      g_assert_no_error (error);
      g_assert_cmpstr (m->content, ==, text);
    }
  st_assert_integrity (store);
  g_assert_true (hz_store_exec (store, "PRAGMA max_page_count = 1073741823", &error));
  g_assert_cmpint (hz_store_append_message (store, conv, 0, HZ_ROLE_USER, big, NULL, TRUE,
                                            &error), >, 0);
  g_assert_no_error (error);
  g_clear_pointer (&store, hz_store_close);
  store = st_open (path);
  g_assert_cmpint (st_query_int (store, "SELECT count(*) FROM messages"), ==, before + 1);
  st_assert_integrity (store);
}

/* ------------------------------------------------------------ one descriptor per file */

/* Issue 20: opening more HzStores on a file this process already has open (the app's
 * redact worker and search reader do) keeps the POSIX locks SQLite holds on the database
 * and its -shm file. Closing any descriptor of a file drops all of the process's locks
 * on it, and without them another process's last close checkpoints and deletes -wal and
 * -shm under the live connection (tests/store/test-store-multiprocess.c shows the data
 * loss). The second opens also check the header and set the mode of files with group and
 * other bits (made 0644 here, as by an older version) while the first is open. */
static void
test_second_connection_keeps_locks (void)
{
  g_autofree char *path = st_tmp_path ("locks.db");
  g_autofree char *wal = g_strconcat (path, "-wal", NULL);
  g_autofree char *shm = g_strconcat (path, "-shm", NULL);
  g_autofree char *pid = g_strdup_printf ("%d", (int) getpid ());
  g_autoptr (GError) error = NULL;
  g_autoptr (HzStore) first = st_open (path);
  g_assert_cmpint (hz_store_create_conversation (first, "first", NULL, NULL, &error), >, 0);
  const guint64 db_ino = st_inode (path), shm_ino = st_inode (shm);
  g_assert_true (st_pid_holds_lock (pid, db_ino));
  g_assert_true (st_pid_holds_lock (pid, shm_ino));
  for (const char *const *f = (const char *const[]) { path, wal, shm, NULL }; *f; f++)
    g_assert_cmpint (g_chmod (*f, 0644), ==, 0);

  for (int i = 0; i < 3; i++)
    {
      g_autoptr (HzStore) other = st_open (path);
      g_assert_true (st_pid_holds_lock (pid, db_ino));
      g_assert_true (st_pid_holds_lock (pid, shm_ino));
      g_assert_cmpint (hz_store_create_conversation (other, "other", NULL, NULL, &error), >, 0);
      g_assert_no_error (error);
    }
  g_assert_true (st_pid_holds_lock (pid, db_ino));
  g_assert_true (st_pid_holds_lock (pid, shm_ino));
  for (const char *const *f = (const char *const[]) { path, wal, shm, NULL }; *f; f++)
    {
      GStatBuf sb;
      g_assert_cmpint (g_stat (*f, &sb), ==, 0);
      g_assert_cmpint (sb.st_mode & 0777, ==, 0600);
    }
  /* a file that is not SQLite, refused while the first store is open */
  g_autofree char *junk = st_tmp_path ("junk.db");
  g_assert_true (g_file_set_contents (junk, "not a database at all, longer than 16 bytes",
                                      -1, NULL));
  g_assert_null (hz_store_open (junk, &error));
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_CORRUPT);
  g_clear_error (&error);
  g_assert_true (st_pid_holds_lock (pid, db_ino));
  g_assert_cmpint (st_query_int (first, "SELECT count(*) FROM conversations"), ==, 4);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/store/robust/not-a-database", test_not_a_database);
  g_test_add_func ("/store/robust/foreign-database", test_foreign_database);
  g_test_add_func ("/store/robust/newer-schema-refused", test_newer_schema_refused);
  g_test_add_func ("/store/robust/migrate-from-v1", test_migrate_from_v1);
  g_test_add_func ("/store/robust/crash-mid-transaction", test_crash_mid_transaction);
  g_test_add_func ("/store/robust/first-open-race", test_first_open_race);
  g_test_add_func ("/store/robust/concurrent-handles", test_concurrent_handles);
  g_test_add_func ("/store/robust/disk-full", test_disk_full);
  g_test_add_func ("/store/robust/second-connection-keeps-locks",
                   test_second_connection_keeps_locks);
  return g_test_run ();
}
