/* common/hanzo/atomic-file.h — write a file so that it appears under its name whole or not at all.
 *
 * A writer is killed (Ctrl-C, SIGKILL, power loss) or fails (full disk) part-way: the name
 * must then still hold the previous file (or nothing), and no partial file may be left
 * behind. On Linux the data goes to an unnamed file made with O_TMPFILE in the target's
 * directory and is linked into place with linkat() only when complete, so a process that
 * dies mid-write leaves nothing at all. Where O_TMPFILE is not supported (file systems
 * without it, no /proc) a named temporary file `PATH.PID.XXXXXXXX` next to the target is
 * used and renamed over it; its name is registered (before the file exists) so that hz_atomic_file_remove_pending() — an
 * async-signal-safe function the command-line tools call from their SIGINT/SIGTERM/SIGHUP
 * handler — can remove it.
 *
 * Replacing an existing file: the complete file is linked to a unique name next to the
 * target and renamed over it (rename(2) is atomic), so readers see the old or the new
 * file. Existing targets that are not regular files (devices such as /dev/full, FIFOs,
 * directories) are refused, never replaced.
 *
 * Thread safety: one HzAtomicFile is used by one thread at a time; distinct ones (also for
 * the same path) may be used concurrently. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _HzAtomicFile HzAtomicFile;

/**
 * hz_atomic_file_create:
 * @path: the file to (re)place; its directory must exist
 * @mode: permission bits of a new file (before the umask), e.g. 0666 or 0600
 * @error: G_FILE_ERROR (from errno) when the directory cannot take a file,
 *   G_FILE_ERROR_EXIST when @path exists and is not a regular file (the message names
 *   @path), or G_FILE_ERROR_INVAL when @path is "" (user input such as `-o ""`)
 *
 * Opens an unnamed (or temporary) file for writing next to @path. Write to
 * hz_atomic_file_fd(), then hz_atomic_file_commit() or hz_atomic_file_discard().
 * Returns: (transfer full) (nullable): the pending file, NULL on error.
 */
HzAtomicFile *hz_atomic_file_create (const char *path, int mode, GError **error);

/** The file descriptor open for writing (owned by @f; do not close it). */
int hz_atomic_file_fd (const HzAtomicFile *f);

/** Write all @n bytes at the current position, retrying short writes and EINTR.
 *  Errors: G_FILE_ERROR from errno (G_FILE_ERROR_NOSPC, G_FILE_ERROR_FAILED for EFBIG
 *  from a file-size limit, …), the message naming the target path. */
gboolean hz_atomic_file_write (HzAtomicFile *f, const void *data, gsize n, GError **error);

/**
 * hz_atomic_file_commit:
 * @f: (transfer full): the pending file; freed in all cases
 *
 * fsync()s the data and puts the file under its path (replacing an existing regular file
 * atomically). On error nothing is left behind and an existing file is untouched.
 * Errors: G_FILE_ERROR from errno, the message naming the path.
 */
gboolean hz_atomic_file_commit (HzAtomicFile *f, GError **error);

/** Drop a pending file (@f is freed; NULL is a no-op): nothing is left behind. */
void hz_atomic_file_discard (HzAtomicFile *f);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzAtomicFile, hz_atomic_file_discard)

/**
 * hz_atomic_file_set_contents:
 * Writes @len bytes of @data as the whole of @path (create + write + commit); the drop-in
 * for g_file_set_contents_full() whose temporary file survives a kill. Errors: as above.
 */
gboolean hz_atomic_file_set_contents (const char *path, const void *data, gsize len,
                                      int mode, GError **error);

/**
 * hz_atomic_file_check_space:
 * @path: the file about to be written (it need not exist; its directory is looked at)
 * @n_bytes: how many bytes the whole file will take
 * @error: the G_FILE_ERROR of access(2) when @path's directory cannot be written (e.g.
 *   G_FILE_ERROR_ROFS "cannot create PATH: Read-only file system", G_FILE_ERROR_ACCES);
 *   G_FILE_ERROR_NOSPC when its file system has fewer than @n_bytes free for this user
 *   (G_FILE_ATTRIBUTE_FILESYSTEM_FREE of g_file_query_filesystem_info(), i.e. statvfs
 *   f_bavail x f_frsize); the message names the directory and both sizes
 *
 * Checks up front that a file of @n_bytes can be written next to @path, before a long
 * computation produces it (`hanzo synth`). The whole size is needed even when @path is
 * replaced: the new file is complete before the old one goes (hz_atomic_file_commit()).
 * When the free space cannot be known (a missing directory, a file system that does not
 * report it) the check passes: the write itself then reports the error. The result is a
 * snapshot; a write may still fail if others fill the disk meanwhile.
 * Returns: TRUE when there is room (or no figure), FALSE with @error set otherwise.
 */
gboolean hz_atomic_file_check_space (const char *path, guint64 n_bytes, GError **error);

/**
 * hz_atomic_file_remove_pending:
 *
 * unlink()s the named temporary files of pending writes (only the fallback without
 * O_TMPFILE has any). Async-signal-safe: meant for a SIGINT/SIGTERM handler that then
 * restores the default action and re-raises the signal (see hz_atomic_file_install_signal_cleanup).
 */
void hz_atomic_file_remove_pending (void);

/**
 * hz_atomic_file_install_signal_cleanup:
 *
 * For command-line programs: installs handlers for SIGINT, SIGTERM and SIGHUP that call
 * hz_atomic_file_remove_pending() and then die of the same signal (default action, so the
 * exit status still reports the signal). Signals already ignored (nohup) stay ignored.
 * Call once at start-up, before threads are created. Not for GUI programs (GLib's
 * g_unix_signal_add() owns the signals there).
 */
void hz_atomic_file_install_signal_cleanup (void);

G_END_DECLS
