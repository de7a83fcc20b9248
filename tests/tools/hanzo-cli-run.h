/* tests/tools/hanzo-cli-run.h — run $HZ_BUILD_DIR/tools/hanzo from a test (header-only),
 * for the test programs of tests/tools/. */
#pragma once
#include <gio/gio.h>

/** What one run of `hanzo` gave: exit status (-1 when it died of a signal), stdout, stderr. */
typedef struct {
  int   status;
  char *out, *err;
} HzCliRun;

static inline void
hz_cli_run_clear (HzCliRun *r)
{
  g_clear_pointer (&r->out, g_free);
  g_clear_pointer (&r->err, g_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (HzCliRun, hz_cli_run_clear)

/** Path of the `hanzo` binary under test (g_free). Fails the test without HZ_BUILD_DIR. */
static inline char *
hz_cli_bin (void)
{
  const char *build = g_getenv ("HZ_BUILD_DIR");
  g_assert_nonnull (build);
  return g_build_filename (build, "tools", "hanzo", NULL);
}

/** argv for `hanzo ARGS...` (args NULL-terminated); the array owns only its first entry. */
static inline GPtrArray *
hz_cli_argv (const char *const *args)
{
  GPtrArray *argv = g_ptr_array_new ();
  g_ptr_array_add (argv, hz_cli_bin ());
  for (int i = 0; args[i]; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);
  return argv;
}

/** Runs `hanzo ARGS...` (NULL-terminated) to completion with `len` bytes of `input` (may
 *  hold NULs; NULL: nothing) on stdin; fills *r. */
static inline void
hz_cli_run (HzCliRun *r, const char *input, gsize len, const char *const *args)
{
  g_autoptr (GPtrArray) argv = hz_cli_argv (args);
  g_autoptr (GError) error = NULL;
  g_autoptr (GSubprocess) p = g_subprocess_newv ((const char *const *) argv->pdata,
                                                 G_SUBPROCESS_FLAGS_STDIN_PIPE |
                                                 G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                 G_SUBPROCESS_FLAGS_STDERR_PIPE, &error);
  g_free (argv->pdata[0]);
  g_assert_no_error (error);
  g_autoptr (GBytes) in = g_bytes_new (input ? input : "", input ? len : 0);
  g_autofree char *out = NULL, *err = NULL;
  GBytes *bout = NULL, *berr = NULL;
  g_assert_true (g_subprocess_communicate (p, in, NULL, &bout, &berr, &error));
  g_assert_no_error (error);
  gsize n;
  const char *d = g_bytes_get_data (bout, &n);
  r->out = g_strndup (d ? d : "", n);
  d = g_bytes_get_data (berr, &n);
  r->err = g_strndup (d ? d : "", n);
  g_bytes_unref (bout);
  g_bytes_unref (berr);
  r->status = g_subprocess_get_if_exited (p) ? g_subprocess_get_exit_status (p) : -1;
}
