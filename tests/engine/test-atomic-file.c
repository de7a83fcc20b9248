/* tests/engine/test-atomic-file.c — common/hanzo/atomic-file.h: a file appears whole or not at
 * all. New file, replacement (readers of the old file keep it), refused non-regular
 * targets, an empty name (a user's `-o ""`: an error, not a crash), a missing directory, a full disk (a file-size limit, RLIMIT_FSIZE) and a
 * discarded write: no partial file and no temporary file is ever left in the directory. */
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hanzo/atomic-file.h"
#include "gguf.h"

static char *dir;

/* Asserts that the test directory holds exactly the names in `expect` (NULL-terminated). */
static void
assert_dir_holds (const char *const *expect)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  g_assert_nonnull (d);
  guint n = 0;
  const char *e;
  while ((e = g_dir_read_name (d)))
    {
      if (!g_strv_contains (expect, e))
        g_error ("unexpected file left in the directory: %s", e);
      n++;
    }
  g_assert_cmpuint (n, ==, g_strv_length ((char **) expect));
}

static void
assert_contents (const char *path, const char *want)
{
  g_autofree char *got = NULL;
  g_assert_true (g_file_get_contents (path, &got, NULL, NULL));
  g_assert_cmpstr (got, ==, want);
}

static void
test_create_replace (void)
{
  g_autofree char *path = g_build_filename (dir, "a.bin", NULL);
  g_autoptr (GError) error = NULL;

  g_assert_true (hz_atomic_file_set_contents (path, "first", 5, 0600, &error));
  g_assert_no_error (error);
  assert_contents (path, "first");
  GStatBuf st;
  g_assert_cmpint (g_stat (path, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0077, ==, 0);   /* the mode asked for (umask aside) */

  /* a reader that opened the old file keeps reading it after the replacement */
  FILE *old = fopen (path, "r");
  g_assert_nonnull (old);
  g_assert_true (hz_atomic_file_set_contents (path, "second!", 7, 0600, &error));
  g_assert_no_error (error);
  assert_contents (path, "second!");
  char buf[8] = { 0 };
  g_assert_cmpuint (fread (buf, 1, sizeof buf - 1, old), ==, 5);
  g_assert_cmpstr (buf, ==, "first");
  fclose (old);

  /* written in pieces */
  HzAtomicFile *f = hz_atomic_file_create (path, 0666, &error);
  g_assert_no_error (error);
  g_assert_cmpint (hz_atomic_file_fd (f), >=, 0);
  g_assert_true (hz_atomic_file_write (f, "thi", 3, &error));
  g_assert_true (hz_atomic_file_write (f, "", 0, &error));
  g_assert_true (hz_atomic_file_write (f, "rd", 2, &error));
  assert_contents (path, "second!");      /* nothing visible before the commit */
  g_assert_true (hz_atomic_file_commit (f, &error));
  g_assert_no_error (error);
  assert_contents (path, "third");
  assert_dir_holds ((const char *[]) { "a.bin", NULL });

  /* discarded: the previous file stays, nothing else appears */
  f = hz_atomic_file_create (path, 0666, &error);
  g_assert_true (hz_atomic_file_write (f, "lost", 4, &error));
  hz_atomic_file_discard (f);
  assert_contents (path, "third");
  assert_dir_holds ((const char *[]) { "a.bin", NULL });
  g_unlink (path);
}

static void
test_bad_targets (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *nodir = g_build_filename (dir, "no", "such", "file", NULL);
  g_assert_false (hz_atomic_file_set_contents (nodir, "x", 1, 0666, &error));
  g_assert_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT);
  g_assert_nonnull (strstr (error->message, nodir));
  g_clear_error (&error);

  g_autofree char *sub = g_build_filename (dir, "sub", NULL);
  g_assert_cmpint (g_mkdir (sub, 0700), ==, 0);
  g_assert_false (hz_atomic_file_set_contents (sub, "x", 1, 0666, &error));
  g_assert_error (error, G_FILE_ERROR, G_FILE_ERROR_EXIST);
  g_assert_nonnull (strstr (error->message, "not a regular file"));
  g_clear_error (&error);
  g_assert_true (g_file_test (sub, G_FILE_TEST_IS_DIR));
  assert_dir_holds ((const char *[]) { "sub", NULL });
  g_rmdir (sub);
}

/* An empty file name (`hanzo quantize M ""`, `-o ""`) is user input: G_FILE_ERROR_INVAL
 * with a message and no critical (the tests run with G_DEBUG=fatal-criticals), also
 * through the GGUF writer (it used to crash on the missing GError); nothing is written. */
static void
test_empty_name (void)
{
  g_autoptr (GError) error = NULL;
  g_assert_null (hz_atomic_file_create ("", 0666, &error));
  g_assert_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL);
  g_assert_nonnull (strstr (error->message, "empty name"));
  g_clear_error (&error);
  g_assert_false (hz_atomic_file_set_contents ("", "x", 1, 0666, &error));
  g_assert_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL);
  g_clear_error (&error);

  g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
  g_assert_false (hz_gguf_writer_write_file (w, "", &error));
  g_assert_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_IO);
  g_assert_nonnull (strstr (error->message, "empty name"));
  assert_dir_holds ((const char *[]) { NULL });
}

/* A full disk, simulated with a file-size limit: the write fails with an error naming the
 * file, the old file is byte-identical, and no partial or temporary file is left. */
static void
test_full_disk (void)
{
  g_autofree char *path = g_build_filename (dir, "full.bin", NULL);
  g_autoptr (GError) error = NULL;
  g_assert_true (hz_atomic_file_set_contents (path, "old contents", 12, 0666, &error));

  const gsize n = 1 << 20;
  g_autofree char *big = g_malloc (n);
  memset (big, 'x', n);
  struct rlimit old, lim;
  g_assert_cmpint (getrlimit (RLIMIT_FSIZE, &old), ==, 0);
  lim = old;
  lim.rlim_cur = 4096;
  void (*prev) (int) = signal (SIGXFSZ, SIG_IGN);
  g_assert_cmpint (setrlimit (RLIMIT_FSIZE, &lim), ==, 0);
  gboolean ok = hz_atomic_file_set_contents (path, big, n, 0666, &error);
  g_assert_cmpint (setrlimit (RLIMIT_FSIZE, &old), ==, 0);
  signal (SIGXFSZ, prev);

  g_assert_false (ok);
  g_assert_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED);  /* EFBIG */
  g_assert_nonnull (strstr (error->message, path));
  g_test_message ("full disk: %s", error->message);
  assert_contents (path, "old contents");
  assert_dir_holds ((const char *[]) { "full.bin", NULL });
  g_unlink (path);
}

/* The clean-up for signals has nothing to remove when O_TMPFILE is used, and never
 * touches the committed file. */
static void
test_remove_pending (void)
{
  g_autofree char *path = g_build_filename (dir, "p.bin", NULL);
  g_autoptr (GError) error = NULL;
  HzAtomicFile *f = hz_atomic_file_create (path, 0666, &error);
  g_assert_no_error (error);
  g_assert_true (hz_atomic_file_write (f, "data", 4, &error));
  hz_atomic_file_remove_pending ();
  assert_dir_holds ((const char *[]) { NULL });
  /* the fallback's temporary name was removed (if there was one): the commit then fails
   * cleanly; with O_TMPFILE it succeeds */
  if (hz_atomic_file_commit (f, &error))
    assert_contents (path, "data");
  else
    g_assert_nonnull (error);
  hz_atomic_file_remove_pending ();
  g_clear_error (&error);
  g_unlink (path);
  assert_dir_holds ((const char *[]) { NULL });
}

/* The up-front free-space check: a size no file system has free (16 EiB) is refused with
 * G_FILE_ERROR_NOSPC naming the path, a byte fits, and a directory that does not exist
 * gives no figure (the check passes; the write reports the error). */
static void
test_check_space (void)
{
  g_autofree char *path = g_build_filename (dir, "big.bin", NULL);
  g_autoptr (GError) error = NULL;
  g_assert_true (hz_atomic_file_check_space (path, 1, &error));
  g_assert_no_error (error);
  g_assert_false (hz_atomic_file_check_space (path, G_MAXUINT64, &error));
  g_assert_error (error, G_FILE_ERROR, G_FILE_ERROR_NOSPC);
  g_assert_nonnull (strstr (error->message, path));
  g_assert_nonnull (strstr (error->message, "18446744073709551615 bytes"));
  g_test_message ("%s", error->message);
  g_clear_error (&error);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  g_autofree char *nowhere = g_build_filename (dir, "no-such-dir", "x.bin", NULL);
  g_assert_true (hz_atomic_file_check_space (nowhere, G_MAXUINT64, &error));
  g_assert_no_error (error);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  dir = g_dir_make_tmp ("hz-atomic-XXXXXX", NULL);
  g_assert_nonnull (dir);
  g_test_add_func ("/atomic-file/create-replace", test_create_replace);
  g_test_add_func ("/atomic-file/bad-targets", test_bad_targets);
  g_test_add_func ("/atomic-file/empty-name", test_empty_name);
  g_test_add_func ("/atomic-file/full-disk", test_full_disk);
  g_test_add_func ("/atomic-file/remove-pending", test_remove_pending);
  g_test_add_func ("/atomic-file/check-space", test_check_space);
  int rc = g_test_run ();
  g_rmdir (dir);
  g_free (dir);
  return rc;
}
