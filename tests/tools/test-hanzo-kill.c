/* tests/tools/test-hanzo-kill.c — `hanzo synth` and `hanzo quantize` killed while they write
 * the output model (SIGKILL, SIGTERM, SIGINT as from Ctrl-C), and `hanzo synth` on a full
 * disk: the output path keeps its previous contents byte for byte and no partial or
 * temporary file (OUT.PID.XXXXXXXX) is left; `hanzo synth` refuses up front a model its
 * disk has no room for, and says when the folder is read-only.
 *
 * The kill is sent once the child holds a file descriptor into the test directory that is
 * not its input, i.e. while the output is being written (the GGUF writer's unnamed
 * O_TMPFILE file shows as "DIR/#N (deleted)", the fallback's temporary file as
 * "OUT.PID.XXXXXXXX"). Needs /proc (Linux) and ../shared/models/stories260K.gguf for the
 * vocabulary; skips with a message otherwise. */
#include <gio/gio.h>
#include <sched.h>
#include <sys/mount.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <sys/resource.h>
#include <string.h>
#include <unistd.h>

#include "../hz-test-util.h"
#include "gguf.h"
#include "hanzo-cli-run.h"

static char *tmp_dir;

/* ~34 MB at F32: long enough to be caught while writing, a few seconds to make */
#define SHAPE "custom:dim=512,layers=2,heads=8,kv=8,ffn=2048"
static const char old_body[] = "the previous model, which must survive";

/* The vocabulary to synthesize with, or NULL after g_test_skip (no shared data, no /proc). */
static char *
vocab_or_skip (void)
{
  if (!g_file_test ("/proc/self/fd", G_FILE_TEST_IS_DIR))
    {
      g_test_skip ("no /proc/self/fd: cannot see when the child writes; skipping");
      return NULL;
    }
  return hz_test_shared_path ("models/stories260K.gguf");
}

/* TRUE once process `pid` has a descriptor open on a file in tmp_dir other than `input`. */
static gboolean
writes_into_dir (const char *pid, const char *input)
{
  g_autofree char *fds = g_build_filename ("/proc", pid, "fd", NULL);
  g_autoptr (GDir) d = g_dir_open (fds, 0, NULL);
  const char *e;
  while (d && (e = g_dir_read_name (d)))
    {
      g_autofree char *fd = g_build_filename (fds, e, NULL);
      g_autofree char *target = g_file_read_link (fd, NULL);
      if (target && g_str_has_prefix (target, tmp_dir) && target[strlen (tmp_dir)] == '/' &&
          g_strcmp0 (target, input) != 0)
        return TRUE;
    }
  return FALSE;
}

/* Asserts that tmp_dir holds exactly the names in `expect` (NULL-terminated). */
static void
assert_dir_holds (const char *const *expect)
{
  g_autoptr (GDir) d = g_dir_open (tmp_dir, 0, NULL);
  g_assert_nonnull (d);
  guint n = 0;
  const char *e;
  while ((e = g_dir_read_name (d)))
    {
      if (!g_strv_contains (expect, e))
        g_error ("a killed writer left %s behind", e);
      n++;
    }
  g_assert_cmpuint (n, ==, g_strv_length ((char **) expect));
}

/* Runs hanzo ARGS (whose output is `out`, holding old_body before), sends `sig` as soon
 * as the output is being written, and checks what is left. `input` (or NULL) is a file of
 * tmp_dir that the command reads. */
static void
kill_while_writing (int sig, const char *out, const char *input, GSpawnChildSetupFunc setup,
                    const char *const *args)
{
  g_autofree char *bin = hz_cli_bin ();
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autoptr (GError) error = NULL;
  g_ptr_array_add (argv, bin);
  for (int i = 0; args[i]; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_file_set_contents (out, old_body, -1, NULL));

  g_autoptr (GSubprocessLauncher) l = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE |
                                                                 G_SUBPROCESS_FLAGS_STDERR_SILENCE);
  if (setup)
    g_subprocess_launcher_set_child_setup (l, setup, NULL, NULL);
  g_autoptr (GSubprocess) p = g_subprocess_launcher_spawnv (l, (const char *const *) argv->pdata,
                                                            &error);
  g_assert_no_error (error);
  const char *pid = g_subprocess_get_identifier (p);
  g_assert_nonnull (pid);
  const gint64 give_up = g_get_monotonic_time () + 120 * G_USEC_PER_SEC;
  gboolean caught = FALSE;
  while (!caught && g_get_monotonic_time () < give_up)
    {
      g_autofree char *stat = g_build_filename ("/proc", pid, "stat", NULL);
      if (!g_file_test (stat, G_FILE_TEST_EXISTS))
        break;
      /* a zombie (exited) has no descriptors left */
      caught = writes_into_dir (pid, input);
      if (!caught)
        g_usleep (500);
    }
  if (!caught)
    {
      g_subprocess_force_exit (p);
      g_subprocess_wait (p, NULL, NULL);
      g_error ("%s %s: never seen writing the output (it finished or failed first)",
               args[0], g_strsignal (sig));
    }
  g_subprocess_send_signal (p, sig);
  g_assert_true (g_subprocess_wait (p, NULL, &error));
  g_assert_no_error (error);
  /* it died of the signal (the SIGINT/SIGTERM handler re-raises it after its clean-up) */
  g_assert_true (g_subprocess_get_if_signaled (p));
  g_assert_cmpint (g_subprocess_get_term_sig (p), ==, sig);

  g_autofree char *now = NULL;
  g_assert_true (g_file_get_contents (out, &now, NULL, NULL));
  g_assert_cmpstr (now, ==, old_body);
  g_test_message ("%s killed by %s while writing: %s intact, nothing left behind", args[0],
                  g_strsignal (sig), out);
}

static void
test_synth_killed (void)
{
  g_autofree char *vocab = vocab_or_skip ();
  if (!vocab)
    return;
  g_autofree char *out = g_build_filename (tmp_dir, "out.gguf", NULL);
  static const int sigs[] = { SIGKILL, SIGTERM, SIGINT };
  for (gsize i = 0; i < G_N_ELEMENTS (sigs); i++)
    {
      kill_while_writing (sigs[i], out, NULL, NULL, (const char *const[]) {
        "synth", "--shape", SHAPE, "--type", "F32", "--vocab", vocab, "-o", out, "-t", "1",
        NULL });
      assert_dir_holds ((const char *[]) { "out.gguf", NULL });
    }
  g_unlink (out);
}

static void
test_quantize_killed (void)
{
  g_autofree char *vocab = vocab_or_skip ();
  if (!vocab)
    return;
  g_autofree char *in = g_build_filename (tmp_dir, "in.gguf", NULL);
  g_autofree char *out = g_build_filename (tmp_dir, "out.gguf", NULL);
  g_autofree char *bin = hz_cli_bin ();
  g_autoptr (GError) error = NULL;
  int status = -1;
  g_assert_true (g_spawn_sync (NULL, (char *[]) { bin, "synth", "--shape", SHAPE, "--type",
                                                  "F32", "--vocab", vocab, "-o", in, "-t", "1",
                                                  NULL },
                               NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, NULL,
                               &status, &error));
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  static const int sigs[] = { SIGKILL, SIGINT };
  for (gsize i = 0; i < G_N_ELEMENTS (sigs); i++)
    {
      kill_while_writing (sigs[i], out, in, NULL, (const char *const[]) {
        "quantize", in, out, "--type", "F16", "-t", "1", NULL });
      assert_dir_holds ((const char *[]) { "in.gguf", "out.gguf", NULL });
    }
  g_unlink (in);
  g_unlink (out);
}

/* Child setup for the fallback without O_TMPFILE: a private mount namespace whose /proc is
 * an empty tmpfs, so the writer finds no /proc/self/fd and uses a named temporary file.
 * Exits 77 when that needs privileges the test does not have. */
static void
hide_proc (gpointer data)
{
  if (unshare (CLONE_NEWNS) != 0 || mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
      mount ("none", "/proc", "tmpfs", 0, NULL) != 0)
    _exit (77);
}

/* The fallback (named temporary file OUT.PID.XXXXXXXX): SIGTERM and SIGINT still leave
 * nothing, as the tool's signal handler removes the temporary file before dying. */
static void
test_synth_killed_fallback (void)
{
  g_autofree char *vocab = vocab_or_skip ();
  if (!vocab)
    return;
  /* can this process make a mount namespace? (root, or CAP_SYS_ADMIN) */
  int status = 0;
  g_autoptr (GError) error = NULL;
  if (!g_spawn_sync (NULL, (char *[]) { "/bin/true", NULL }, NULL, 0, hide_proc, NULL, NULL,
                     NULL, &status, &error) ||
      !g_spawn_check_wait_status (status, NULL))
    {
      g_test_skip ("cannot hide /proc in a mount namespace (needs CAP_SYS_ADMIN); skipping");
      return;
    }
  g_autofree char *out = g_build_filename (tmp_dir, "out.gguf", NULL);
  static const int sigs[] = { SIGTERM, SIGINT };
  for (gsize i = 0; i < G_N_ELEMENTS (sigs); i++)
    {
      kill_while_writing (sigs[i], out, NULL, hide_proc, (const char *const[]) {
        "synth", "--shape", SHAPE, "--type", "F32", "--vocab", vocab, "-o", out, "-t", "1",
        NULL });
      assert_dir_holds ((const char *[]) { "out.gguf", NULL });
    }
  g_unlink (out);
}

/* `hanzo synth` of a ~8 MB F32 model to `out`, with `setup(setup_data)` in the child before
 * it runs; returns its exit status (the test fails when it did not exit) and its stderr in
 * *err. */
static int
synth_small (const char *vocab, const char *out, GSpawnChildSetupFunc setup,
             gpointer setup_data, char **err)
{
  g_autofree char *bin = hz_cli_bin ();
  g_autoptr (GError) error = NULL;
  g_autoptr (GSubprocessLauncher) l = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE |
                                                                 G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_set_child_setup (l, setup, setup_data, NULL);
  g_autoptr (GSubprocess) p = g_subprocess_launcher_spawn (l, &error, bin, "synth", "--shape",
                                                           "custom:dim=256,layers=2,heads=4,kv=4,ffn=1024",
                                                           "--type", "F32", "--vocab", vocab,
                                                           "-o", out, "-t", "1", NULL);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_communicate_utf8 (p, NULL, NULL, NULL, err, &error));
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (p));
  return g_subprocess_get_exit_status (p);
}

/* A full disk (a file-size limit in the child, SIGXFSZ ignored so that write() fails with
 * EFBIG): exit status 1 with a message naming the output, the old output intact and
 * nothing else left. */
static void
limit_file_size (gpointer data)
{
  struct rlimit lim;
  if (getrlimit (RLIMIT_FSIZE, &lim) == 0)
    {
      lim.rlim_cur = 1 << 20;   /* 1 MiB; the model is ~8 MB */
      setrlimit (RLIMIT_FSIZE, &lim);
    }
  signal (SIGXFSZ, SIG_IGN);    /* inherited through exec: write() fails with EFBIG */
}

static void
test_synth_full_disk (void)
{
  g_autofree char *vocab = vocab_or_skip ();
  if (!vocab)
    return;
  g_autofree char *out = g_build_filename (tmp_dir, "out.gguf", NULL);
  g_assert_true (g_file_set_contents (out, old_body, -1, NULL));
  g_autofree char *err = NULL;
  g_assert_cmpint (synth_small (vocab, out, limit_file_size, NULL, &err), ==, 1);
  g_assert_nonnull (strstr (err, out));
  g_test_message ("full disk: %s", err);
  g_autofree char *now = NULL;
  g_assert_true (g_file_get_contents (out, &now, NULL, NULL));
  g_assert_cmpstr (now, ==, old_body);
  assert_dir_holds ((const char *[]) { "out.gguf", NULL });
  g_unlink (out);
}

/* Not enough free space for the model (a custom shape of about 1 PB at F32): refused up
 * front (within seconds, before any weight is generated) with the size it needs, exit
 * status 1, the old output intact and nothing else left. */
static void
test_synth_no_space (void)
{
  g_autofree char *vocab = vocab_or_skip ();
  if (!vocab)
    return;
  g_autoptr (GError) error = NULL;
  g_autoptr (HzGguf) vg = hz_gguf_open (vocab, &error);
  g_assert_no_error (error);
  const int64_t ti = hz_gguf_find_key (vg, "tokenizer.ggml.tokens");
  g_assert_cmpint (ti, >=, 0);
  /* F32 tensor data of the shape below (every size a multiple of the 32-byte alignment):
   * token_embd and output (V x E), output_norm (E), and per layer two norms (E), q/k/v/o
   * (E x E: 64 heads of 1024) and gate/up/down (E x F) */
  const guint64 V = hz_gguf_arr_n (vg, ti), E = 65536, F = 262144, L = 4096;
  const guint64 need = 4 * (2 * V * E + E + L * (2 * E + 4 * E * E + 3 * E * F));
  g_autofree char *need_s = g_strdup_printf ("(%" G_GUINT64_FORMAT " bytes)", need);

  g_autofree char *out = g_build_filename (tmp_dir, "out.gguf", NULL);
  g_autofree char *bin = hz_cli_bin ();
  g_assert_true (g_file_set_contents (out, old_body, -1, NULL));
  g_autoptr (GSubprocess) p = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE |
                                                G_SUBPROCESS_FLAGS_STDERR_PIPE, &error, bin,
                                                "synth", "--shape",
                                                "custom:dim=65536,layers=4096,heads=64,kv=64,ffn=262144",
                                                "--type", "F32", "--vocab", vocab, "-o", out,
                                                "-t", "1", NULL);
  g_assert_no_error (error);
  g_autofree char *err = NULL;
  g_assert_true (g_subprocess_communicate_utf8 (p, NULL, NULL, NULL, &err, &error));
  g_assert_no_error (error);
  g_test_message ("no space: %s", err);
  g_assert_true (g_subprocess_get_if_exited (p));
  g_assert_cmpint (g_subprocess_get_exit_status (p), ==, 1);
  g_assert_nonnull (strstr (err, "not enough free disk space"));
  g_assert_nonnull (strstr (err, need_s));
  g_autofree char *now = NULL;
  g_assert_true (g_file_get_contents (out, &now, NULL, NULL));
  g_assert_cmpstr (now, ==, old_body);
  assert_dir_holds ((const char *[]) { "out.gguf", NULL });
  g_unlink (out);
}

/* Child setup for a read-only folder: a private mount namespace with a read-only tmpfs of
 * 1 MiB on `data` (the folder). Exits 77 when that needs privileges the test lacks. */
static void
mount_read_only (gpointer data)
{
  if (unshare (CLONE_NEWNS) != 0 || mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
      mount ("none", data, "tmpfs", MS_RDONLY, "size=1m") != 0)
    _exit (77);
}

/* A read-only folder (issue 20): the error says so and names the file, instead of "not
 * enough free disk space" (a read-only file system reports little or no free space). */
static void
test_synth_read_only (void)
{
  g_autofree char *vocab = vocab_or_skip ();
  if (!vocab)
    return;
  g_autofree char *dir = g_build_filename (tmp_dir, "read-only", NULL);
  g_assert_cmpint (g_mkdir (dir, 0755), ==, 0);
  int status = 0;
  g_autoptr (GError) error = NULL;
  if (!g_spawn_sync (NULL, (char *[]) { "/bin/true", NULL }, NULL, 0, mount_read_only, dir,
                     NULL, NULL, &status, &error) ||
      !g_spawn_check_wait_status (status, NULL))
    {
      g_test_skip ("cannot mount a read-only tmpfs in a mount namespace (needs "
                   "CAP_SYS_ADMIN); skipping");
      g_rmdir (dir);
      return;
    }
  g_autofree char *out = g_build_filename (dir, "out.gguf", NULL);
  g_autofree char *err = NULL;
  /* ~8 MB at F32: more than the 1 MiB the file system reports */
  const int exit_status = synth_small (vocab, out, mount_read_only, dir, &err);
  g_test_message ("read-only folder: %s", err);
  g_assert_cmpint (exit_status, ==, 1);
  g_autofree char *want = g_strdup_printf ("hanzo synth: cannot create %s: Read-only file system",
                                           out);
  g_assert_nonnull (strstr (err, want));
  g_assert_null (strstr (err, "free disk space"));
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/hanzo-kill/synth", test_synth_killed);
  g_test_add_func ("/hanzo-kill/quantize", test_quantize_killed);
  g_test_add_func ("/hanzo-kill/synth-fallback", test_synth_killed_fallback);
  g_test_add_func ("/hanzo-kill/full-disk", test_synth_full_disk);
  g_test_add_func ("/hanzo-kill/no-space", test_synth_no_space);
  g_test_add_func ("/hanzo-kill/read-only", test_synth_read_only);
  tmp_dir = g_dir_make_tmp ("hz-kill-XXXXXX", NULL);
  g_assert_nonnull (tmp_dir);
  int rc = g_test_run ();
  g_rmdir (tmp_dir);
  g_free (tmp_dir);
  return rc;
}
