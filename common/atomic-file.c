/* common/atomic-file.c — files that appear whole or not at all (see atomic-file.h).
 *
 * Linux: open(dir, O_TMPFILE) gives an unnamed inode in the target's file system; it is
 * given a name with linkat("/proc/self/fd/N", AT_SYMLINK_FOLLOW) (open(2), "O_TMPFILE").
 * linkat() never replaces a name, so an existing target is replaced by linking to a unique
 * name next to it and rename(2)-ing that over the target. Elsewhere, and where the file
 * system refuses O_TMPFILE, a named temporary file (O_EXCL) is written and renamed. */
#include "hanzo/atomic-file.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <gio/gio.h>

struct _HzAtomicFile {
  char *path;
  char *tmp;   /* the named temporary file (fallback), else NULL */
  int fd;
  int slot;    /* registry slot of `tmp` (see below), or -1 */
};

/* ---- registry of named temporary files, for the signal handler ----
 * A fixed table (no allocation, no locks) so that hz_atomic_file_remove_pending() is
 * async-signal-safe. A slot is FREE, BUSY (being filled or emptied: the handler skips it)
 * or LIVE (the handler unlinks its path). A write whose name does not fit, or that finds
 * no free slot, still works; only the clean-up on a signal is lost for it. */
enum { SLOT_FREE, SLOT_BUSY, SLOT_LIVE };
#define N_SLOTS   32
#define SLOT_PATH 4096
static struct {
  gint state;
  char path[SLOT_PATH];
} slots[N_SLOTS];

static int
slot_register (const char *path)
{
  if (strlen (path) >= SLOT_PATH)
    return -1;
  for (int i = 0; i < N_SLOTS; i++)
    if (g_atomic_int_compare_and_exchange (&slots[i].state, SLOT_FREE, SLOT_BUSY))
      {
        strcpy (slots[i].path, path);
        g_atomic_int_set (&slots[i].state, SLOT_LIVE);
        return i;
      }
  return -1;
}

static void
slot_release (int i)
{
  if (i < 0)
    return;
  g_atomic_int_set (&slots[i].state, SLOT_BUSY);
  slots[i].path[0] = '\0';
  g_atomic_int_set (&slots[i].state, SLOT_FREE);
}

void
hz_atomic_file_remove_pending (void)
{
  for (int i = 0; i < N_SLOTS; i++)
    if (g_atomic_int_get (&slots[i].state) == SLOT_LIVE)
      unlink (slots[i].path);
}

static void
on_fatal_signal (int sig)
{
  const int saved = errno;
  hz_atomic_file_remove_pending ();
  raise (sig);  /* SA_RESETHAND restored the default action: the process dies of `sig` */
  errno = saved;
}

void
hz_atomic_file_install_signal_cleanup (void)
{
  static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
  for (gsize i = 0; i < G_N_ELEMENTS (sigs); i++)
    {
      struct sigaction old, sa = { 0 };
      if (sigaction (sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
        continue;
      sa.sa_handler = on_fatal_signal;
      sigemptyset (&sa.sa_mask);
      sa.sa_flags = SA_RESETHAND;
      sigaction (sigs[i], &sa, NULL);
    }
}

/* ---- files ---- */

/* A temporary name next to `path`: PATH.PID.XXXXXXXX (hex random). */
static char *
temp_name (const char *path)
{
  return g_strdup_printf ("%s.%d.%08x", path, (int) getpid (), g_random_int ());
}

static gboolean
set_errno_error (GError **error, int e, const char *what, const char *path)
{
  g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), "%s %s: %s", what, path,
               g_strerror (e));
  return FALSE;
}

HzAtomicFile *
hz_atomic_file_create (const char *path, int mode, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  if (!*path)
    {
      /* a user's `-o ""`: an error to report, not a programming error */
      g_set_error_literal (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
                           "cannot write a file with an empty name");
      return NULL;
    }
  /* Never replace something that is not a regular file (a device such as /dev/full, a
   * FIFO, a directory): the rename would put a regular file in its place. */
  GStatBuf st;
  if (g_stat (path, &st) == 0 && !S_ISREG (st.st_mode))
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_EXIST,
                   "cannot write %s: it exists and is not a regular file", path);
      return NULL;
    }
  HzAtomicFile *f = g_new0 (HzAtomicFile, 1);
  f->path = g_strdup (path);
  f->fd = -1;
  f->slot = -1;
#ifdef O_TMPFILE
  /* linkat() needs /proc/self/fd (AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH) */
  if (g_file_test ("/proc/self/fd", G_FILE_TEST_IS_DIR))
    {
      g_autofree char *dir = g_path_get_dirname (path);
      f->fd = open (dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
      if (f->fd < 0 && errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
        {
          set_errno_error (error, errno, "cannot create", path);
          hz_atomic_file_discard (f);
          return NULL;
        }
    }
#endif
  for (int tries = 0; f->fd < 0 && tries < 100; tries++)
    {
      /* registered before it exists, so that a signal between open() and the registration
       * cannot leave it behind; the process id in the name makes any file of that name ours */
      f->tmp = temp_name (path);
      f->slot = slot_register (f->tmp);
      f->fd = open (f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
      if (f->fd >= 0)
        break;
      const int e = errno;
      slot_release (f->slot);
      f->slot = -1;
      if (e != EEXIST)
        {
          set_errno_error (error, e, "cannot create", f->tmp);
          g_clear_pointer (&f->tmp, g_free);
          hz_atomic_file_discard (f);
          return NULL;
        }
      g_clear_pointer (&f->tmp, g_free);
    }
  if (f->fd < 0)
    {
      set_errno_error (error, EEXIST, "cannot create a temporary file for", path);
      hz_atomic_file_discard (f);
      return NULL;
    }
  return f;
}

int
hz_atomic_file_fd (const HzAtomicFile *f)
{
  g_return_val_if_fail (f != NULL, -1);
  return f->fd;
}

gboolean
hz_atomic_file_write (HzAtomicFile *f, const void *data, gsize n, GError **error)
{
  g_return_val_if_fail (f != NULL && (data != NULL || n == 0), FALSE);
  const char *p = data;
  while (n)
    {
      ssize_t w = write (f->fd, p, MIN (n, (gsize) 1 << 30));
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        return set_errno_error (error, w < 0 ? errno : ENOSPC, "cannot write", f->path);
      p += w;
      n -= (gsize) w;
    }
  return TRUE;
}

void
hz_atomic_file_discard (HzAtomicFile *f)
{
  if (!f)
    return;
  if (f->fd >= 0)
    close (f->fd);  /* an O_TMPFILE inode without a name is freed here */
  if (f->tmp)
    g_unlink (f->tmp);
  slot_release (f->slot);
  g_free (f->tmp);
  g_free (f->path);
  g_free (f);
}

#ifdef O_TMPFILE
/* Gives the unnamed file f->fd the name f->path. */
static gboolean
link_tmpfile (HzAtomicFile *f, GError **error)
{
  char proc[64];
  g_snprintf (proc, sizeof proc, "/proc/self/fd/%d", f->fd);
  if (linkat (AT_FDCWD, proc, AT_FDCWD, f->path, AT_SYMLINK_FOLLOW) == 0)
    return TRUE;
  if (errno != EEXIST)
    return set_errno_error (error, errno, "cannot create", f->path);
  /* an existing file: a unique name next to it, then rename over it */
  for (int tries = 0; tries < 100; tries++)
    {
      g_autofree char *tmp = temp_name (f->path);
      int slot = slot_register (tmp);   /* before it exists (see hz_atomic_file_create) */
      if (linkat (AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) != 0)
        {
          const int e = errno;
          slot_release (slot);
          if (e == EEXIST)
            continue;
          return set_errno_error (error, e, "cannot create", tmp);
        }
      const gboolean ok = g_rename (tmp, f->path) == 0;
      const int e = errno;
      if (!ok)
        g_unlink (tmp);
      slot_release (slot);
      return ok || set_errno_error (error, e, "cannot replace", f->path);
    }
  return set_errno_error (error, EEXIST, "cannot create a temporary name for", f->path);
}
#endif

gboolean
hz_atomic_file_commit (HzAtomicFile *f, GError **error)
{
  g_return_val_if_fail (f != NULL, FALSE);
  gboolean ok = TRUE;
  if (fsync (f->fd) != 0)
    ok = set_errno_error (error, errno, "cannot write", f->path);
  if (ok && f->tmp)
    {
      if (close (f->fd) != 0)
        ok = set_errno_error (error, errno, "cannot write", f->path);
      f->fd = -1;
      if (ok && g_rename (f->tmp, f->path) != 0)
        ok = set_errno_error (error, errno, "cannot replace", f->path);
      if (ok)
        g_clear_pointer (&f->tmp, g_free);  /* renamed: nothing to remove */
    }
#ifdef O_TMPFILE
  else if (ok)
    ok = link_tmpfile (f, error);
#endif
  hz_atomic_file_discard (f);
  return ok;
}

gboolean
hz_atomic_file_set_contents (const char *path, const void *data, gsize len, int mode,
                             GError **error)
{
  HzAtomicFile *f = hz_atomic_file_create (path, mode, error);
  if (!f)
    return FALSE;
  if (!hz_atomic_file_write (f, data, len, error))
    {
      hz_atomic_file_discard (f);
      return FALSE;
    }
  return hz_atomic_file_commit (f, error);
}

gboolean
hz_atomic_file_check_space (const char *path, guint64 n_bytes, GError **error)
{
  g_return_val_if_fail (path != NULL, FALSE);
  g_autofree char *dir = g_path_get_dirname (path);
  /* a folder that cannot be written (read-only file system, no permission) says so; its
   * file system may well report no free space, which would be the wrong reason */
  if (access (dir, W_OK) != 0 && errno != ENOENT)
    return set_errno_error (error, errno, "cannot create", path);
  g_autoptr (GFile) f = g_file_new_for_path (dir);
  g_autoptr (GFileInfo) info = g_file_query_filesystem_info (f, G_FILE_ATTRIBUTE_FILESYSTEM_FREE ","
                                                             G_FILE_ATTRIBUTE_FILESYSTEM_SIZE,
                                                             NULL, NULL);
  /* pseudo file systems (/proc, /sys) report a size of 0: nothing to compare with, the
   * write itself gives the real error */
  if (info == NULL || !g_file_info_has_attribute (info, G_FILE_ATTRIBUTE_FILESYSTEM_FREE)
      || (g_file_info_has_attribute (info, G_FILE_ATTRIBUTE_FILESYSTEM_SIZE)
          && g_file_info_get_attribute_uint64 (info, G_FILE_ATTRIBUTE_FILESYSTEM_SIZE) == 0))
    return TRUE;
  const guint64 free_bytes = g_file_info_get_attribute_uint64 (info,
                                                               G_FILE_ATTRIBUTE_FILESYSTEM_FREE);
  if (free_bytes >= n_bytes)
    return TRUE;
  g_autofree char *need = g_format_size_full (n_bytes, G_FORMAT_SIZE_IEC_UNITS);
  g_autofree char *have = g_format_size_full (free_bytes, G_FORMAT_SIZE_IEC_UNITS);
  g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOSPC,
               "%s: not enough free disk space: the file needs at least %s (%" G_GUINT64_FORMAT
               " bytes) but %s has %s free", path, need, n_bytes, dir, have);
  return FALSE;
}
