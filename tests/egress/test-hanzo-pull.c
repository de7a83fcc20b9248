/* `hanzo pull` and `hanzo search` (tools/hanzo-pull.c, tools/hanzo-search.c; issue 27) as
 * a user runs them, against the loopback Hub of hub-server.c ($HF_ENDPOINT), each in a
 * throwaway $XDG_DATA_HOME: the search table; the default quantization and why, REPO:QUANT,
 * REPO/FILE (GGUF files only), a model already there, --list, bad names; the download
 * folder checked before any request and made only for a download; a pull killed with SIGKILL at 40 % of a slow download
 * resumes where it was (the server sees "Range: bytes=N-" for the N bytes of the .part)
 * and ends with the right SHA-256; Ctrl+C exits 130 leaving a .part that the next run
 * resumes; a full disk (a file-size limit in the child) leaves nothing in the folder; a
 * gated repository needs HF_TOKEN, or a token stored by `hanzo hub-login` (under
 * with-keyring.sh: a throwaway Secret Service); a corrupted file is never placed. After every run the
 * egress log in the store holds exactly the requests the server saw. The files served are
 * ../shared/models/stories260K.gguf (F32) and its Q8_0 quantization made by the engine. */
#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdlib.h>
#include <termios.h>
#include <unistd.h>
#include <string.h>
#include <sys/resource.h>
#include "credentials.h"
#include "hub-server.h"
#include "quantize.h"
#include "../hz-test-util.h"
#include "../tools/hanzo-cli-run.h"

#define REPO "hanzo-test/stories260K-GGUF"
#define GATED "hanzo-test/gated-GGUF"
#define BROKEN "hanzo-test/broken-GGUF"
#define F32 "stories260K-F32.gguf"
#define Q8 "stories260K-Q8_0.gguf"

static GBytes *f32_bytes, *q8_bytes;   /* made once */

typedef struct {
  HztHub  *srv;
  char    *home, *data, *models;   /* $HOME, $XDG_DATA_HOME, its hanzo/models */
  gboolean keyring;                /* the children reach the session bus's keyring */
} P;

/* The two models, or FALSE after g_test_skip (no shared data). */
static gboolean
models_or_skip (void)
{
  if (f32_bytes)
    return TRUE;
  g_autofree char *src = hz_test_shared_path ("models/stories260K.gguf");
  if (!src)
    return FALSE;
  g_autoptr (GError) error = NULL;
  g_autoptr (GMappedFile) mf = g_mapped_file_new (src, FALSE, &error);
  g_assert_no_error (error);
  f32_bytes = g_mapped_file_get_bytes (mf);
  g_autofree char *dir = g_dir_make_tmp ("hz-q8-XXXXXX", &error);
  g_autofree char *q8 = g_build_filename (dir, Q8, NULL);
  HzQuantizeParams qp;
  hz_quantize_params_init (&qp);   /* Q8_0 */
  qp.n_threads = 1;
  g_assert_true (hz_quantize_file (src, q8, &qp, NULL, &error));
  g_assert_no_error (error);
  char *data = NULL;
  gsize len = 0;
  g_assert_true (g_file_get_contents (q8, &data, &len, &error));
  q8_bytes = g_bytes_new_take (data, len);
  g_unlink (q8);
  g_rmdir (dir);
  return TRUE;
}

/* A server holding REPO (README, F32, Q8_0), GATED and BROKEN (a corrupted Q8_0); started
 * after `configure` (may be NULL) has set its throttle etc. FALSE: skipped. */
static gboolean
p_init (P *p, void (*configure) (HztHub *))
{
  memset (p, 0, sizeof *p);
  if (!models_or_skip ())
    return FALSE;
  p->srv = hzt_hub_new ();
  static const char readme[] = "# stories260K\n";
  g_autoptr (GBytes) rb = g_bytes_new_static (readme, sizeof readme - 1);
  hzt_hub_add_file (p->srv, REPO, "README.md", rb, 0, 0);
  hzt_hub_add_file (p->srv, REPO, F32, f32_bytes, HZT_LFS, 0);
  hzt_hub_add_file (p->srv, REPO, Q8, q8_bytes, HZT_LFS, 0);
  hzt_hub_add_file (p->srv, GATED, Q8, q8_bytes, HZT_LFS, 0);
  hzt_hub_set_gated (p->srv, GATED);
  hzt_hub_add_file (p->srv, BROKEN, Q8, q8_bytes, HZT_LFS | HZT_CORRUPT, 0);
  if (configure)
    configure (p->srv);
  hzt_hub_start (p->srv);
  g_autoptr (GError) error = NULL;
  p->home = g_dir_make_tmp ("hz-pull-XXXXXX", &error);
  g_assert_no_error (error);
  p->data = g_build_filename (p->home, "data", NULL);
  p->models = g_build_filename (p->data, "hanzo", "models", NULL);
  return TRUE;
}

static void
rm_rf (const char *path)
{
  if (g_file_test (path, G_FILE_TEST_IS_DIR) && !g_file_test (path, G_FILE_TEST_IS_SYMLINK))
    {
      g_autoptr (GDir) d = g_dir_open (path, 0, NULL);
      const char *e;
      while (d && (e = g_dir_read_name (d)))
        {
          g_autofree char *c = g_build_filename (path, e, NULL);
          rm_rf (c);
        }
      g_rmdir (path);
    }
  else
    g_unlink (path);
}

/* The egress log of the store the child processes wrote matches the server's requests. */
static void
assert_log (P *p)
{
  g_autofree char *db = g_build_filename (p->data, "hanzo", "hanzo.db", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (HzStore) store = hz_store_open (db, &error);
  g_assert_no_error (error);
  hzt_hub_assert_log (p->srv, store);
}

static void
p_free (P *p)
{
  hzt_hub_free (p->srv);
  rm_rf (p->home);
  g_free (p->home);
  g_free (p->data);
  g_free (p->models);
}

static void
p_clear (P *p)
{
  if (!p->srv)
    return;
  assert_log (p);
  p_free (p);
}

static GSubprocessLauncher *
launcher (P *p, GSubprocessFlags flags, const char *token)
{
  GSubprocessLauncher *l = g_subprocess_launcher_new (flags);
  g_autofree char *url = hzt_hub_url (p->srv);
  g_subprocess_launcher_setenv (l, "HF_ENDPOINT", url, TRUE);
  g_subprocess_launcher_setenv (l, "HOME", p->home, TRUE);
  g_subprocess_launcher_setenv (l, "XDG_DATA_HOME", p->data, TRUE);
  /* no token, and no keyring to ask (libsecret fails at once without a session bus) unless
   * the test is about the keyring */
  static const char *const unset[] = { "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN",
                                       "DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "WAYLAND_DISPLAY",
                                       NULL };
  for (int i = 0; unset[i]; i++)
    if (!p->keyring || strcmp (unset[i], "DBUS_SESSION_BUS_ADDRESS") != 0)
      g_subprocess_launcher_unsetenv (l, unset[i]);
  if (token)
    g_subprocess_launcher_setenv (l, "HF_TOKEN", token, TRUE);
  return l;
}

static GSubprocess *
spawn (GSubprocessLauncher *l, const char *const *args)
{
  g_autoptr (GPtrArray) argv = hz_cli_argv (args);
  g_autoptr (GError) error = NULL;
  GSubprocess *sp = g_subprocess_launcher_spawnv (l, (const char *const *) argv->pdata, &error);
  g_free (argv->pdata[0]);
  g_assert_no_error (error);
  return sp;
}

static void
finish (GSubprocess *sp, HzCliRun *r)
{
  g_autoptr (GError) error = NULL;
  g_assert_true (g_subprocess_communicate_utf8 (sp, NULL, NULL, &r->out, &r->err, &error));
  g_assert_no_error (error);
  r->status = g_subprocess_get_if_exited (sp) ? g_subprocess_get_exit_status (sp) : -1;
  g_test_message ("exit %d\nstdout: %s\nstderr: %s", r->status, r->out, r->err);
}

/* Runs `hanzo ARGS...` to the end with the test environment (and HF_TOKEN = token). */
static void
run (P *p, HzCliRun *r, const char *token, const char *const *args)
{
  g_autoptr (GSubprocessLauncher) l = launcher (p, G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                   G_SUBPROCESS_FLAGS_STDERR_PIPE, token);
  g_autoptr (GSubprocess) sp = spawn (l, args);
  finish (sp, r);
}

/* As run(), without HF_TOKEN, with `input` on stdin (a pipe, not a terminal). */
static void
run_input (P *p, HzCliRun *r, const char *input, const char *const *args)
{
  g_autoptr (GSubprocessLauncher) l = launcher (p, G_SUBPROCESS_FLAGS_STDIN_PIPE |
                                                   G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                   G_SUBPROCESS_FLAGS_STDERR_PIPE, NULL);
  g_autoptr (GSubprocess) sp = spawn (l, args);
  g_autoptr (GError) error = NULL;
  g_assert_true (g_subprocess_communicate_utf8 (sp, input, NULL, &r->out, &r->err, &error));
  g_assert_no_error (error);
  r->status = g_subprocess_get_if_exited (sp) ? g_subprocess_get_exit_status (sp) : -1;
  g_test_message ("exit %d\nstdout: %s\nstderr: %s", r->status, r->out, r->err);
}

static char *
sha_of_file (const char *path)
{
  g_autoptr (GMappedFile) mf = g_mapped_file_new (path, FALSE, NULL);
  g_assert_nonnull (mf);
  g_autoptr (GBytes) b = g_mapped_file_get_bytes (mf);
  return hzt_sha256 (b);
}

static void
assert_model (const char *path, GBytes *want)
{
  g_autofree char *got = sha_of_file (path);
  g_autofree char *exp = hzt_sha256 (want);
  g_assert_cmpstr (got, ==, exp);
}

/* The names in `dir`, sorted, joined with spaces ("" when empty or missing). */
static char *
listing (const char *dir)
{
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *e;
  while (d && (e = g_dir_read_name (d)))
    g_ptr_array_add (names, g_strdup (e));
  for (guint i = 1; i < names->len; i++)   /* a handful of names: insertion sort */
    for (guint k = i; k > 0 && strcmp (names->pdata[k - 1], names->pdata[k]) > 0; k--)
      {
        gpointer t = names->pdata[k];
        names->pdata[k] = names->pdata[k - 1];
        names->pdata[k - 1] = t;
      }
  g_ptr_array_add (names, NULL);
  return g_strjoinv (" ", (char **) names->pdata);
}

static HztRequest *
last_request (HztHub *srv)
{
  g_autoptr (GPtrArray) reqs = hzt_hub_requests (srv);
  g_assert_cmpuint (reqs->len, >, 0);
  return g_ptr_array_steal_index (reqs, reqs->len - 1);
}

static void
request_free (HztRequest *r)
{
  g_free (r->path);
  g_free (r->query);
  g_free (r->range);
  g_free (r);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HztRequest, request_free)

/* ---------------------------------------------------------------- tests */

static void
test_search (void)
{
  P p;
  if (!p_init (&p, NULL))
    return;
  g_auto (HzCliRun) r = { 0 };
  run (&p, &r, NULL, (const char *const[]) { "search", "--limit", "5", "llama", "3.2", NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_auto (GStrv) lines = g_strsplit (r.out, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 7);   /* header, 5 rows, "" */
  g_assert_true (g_str_has_prefix (lines[0], "REPO"));
  g_assert_nonnull (strstr (lines[0], "DOWNLOADS"));
  g_assert_true (g_str_has_prefix (lines[1], "bartowski/Llama-3.2-1B-Instruct-GGUF"));
  g_assert_nonnull (strstr (lines[1], "112873"));
  g_assert_nonnull (strstr (lines[1], "2024-10-07"));
  g_assert_true (g_str_has_suffix (lines[2], "gated"));
  g_assert_nonnull (strstr (r.err, "hanzo pull bartowski/Llama-3.2-1B-Instruct-GGUF"));
  g_autoptr (HztRequest) q = last_request (p.srv);
  g_assert_true (g_str_has_prefix (q->query, "search=llama%203.2&filter=gguf&sort=downloads"));
  /* what could carry more than a search is refused before anything is sent */
  g_auto (HzCliRun) bad = { 0 };
  run (&p, &bad, NULL, (const char *const[]) { "search", "my", "password=hunter2", NULL });
  g_assert_cmpint (bad.status, ==, 2);
  p_clear (&p);
}

static void
test_choose (void)
{
  P p;
  if (!p_init (&p, NULL))
    return;
  g_autofree char *dir = g_build_filename (p.home, "models", NULL);
  g_assert_cmpint (g_mkdir (dir, 0700), ==, 0);
  /* no quantization asked: Q8_0 (there is no Q4_K_M ...), with why */
  g_auto (HzCliRun) r = { 0 };
  run (&p, &r, NULL, (const char *const[]) { "pull", "--dir", dir, REPO, NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_autofree char *q8 = g_build_filename (dir, Q8, NULL);
  g_autofree char *line = g_strdup_printf ("%s\n", q8);
  g_assert_cmpstr (r.out, ==, line);
  g_assert_nonnull (strstr (r.err, "Q8_0: there is no Q4_K_M"));
  g_assert_nonnull (strstr (r.err, "(100%)"));
  g_assert_nonnull (strstr (r.err, "SHA-256 verified, commit " HZT_COMMIT));
  assert_model (q8, q8_bytes);
  /* REPO:QUANT (any case), a hf.co/ prefix; REPO/FILE */
  g_auto (HzCliRun) f = { 0 };
  run (&p, &f, NULL, (const char *const[]) { "pull", "-d", dir, "hf.co/" REPO ":f32", NULL });
  g_assert_cmpint (f.status, ==, 0);
  g_autofree char *f32 = g_build_filename (dir, F32, NULL);
  assert_model (f32, f32_bytes);
  g_auto (HzCliRun) fq = { 0 };
  run (&p, &fq, NULL, (const char *const[]) { "pull", "-d", dir, REPO "/" F32, NULL });
  g_assert_cmpint (fq.status, ==, 0);
  /* a file that is not a model: refused before any request */
  g_autoptr (GPtrArray) before_rd = hzt_hub_requests (p.srv);
  g_auto (HzCliRun) rd = { 0 };
  run (&p, &rd, NULL, (const char *const[]) { "pull", "-d", dir, REPO "/README.md", NULL });
  g_assert_cmpint (rd.status, ==, 2);
  g_assert_nonnull (strstr (rd.err, "'README.md' is not a GGUF model file"));
  g_autoptr (GPtrArray) after_rd = hzt_hub_requests (p.srv);
  g_assert_cmpuint (after_rd->len, ==, before_rd->len);
  g_autofree char *names = listing (dir);
  g_assert_cmpstr (names, ==, F32 " " Q8);
  /* pulling again: already there, verified, nothing downloaded, and said so */
  g_autoptr (GPtrArray) before = hzt_hub_requests (p.srv);
  g_auto (HzCliRun) again = { 0 };
  run (&p, &again, NULL, (const char *const[]) { "pull", "-d", dir, REPO ":Q8_0", NULL });
  g_assert_cmpint (again.status, ==, 0);
  g_autofree char *present = g_strdup_printf ("%s: already present, SHA-256 verified; nothing "
                                              "downloaded\n", q8);
  g_assert_true (g_str_has_suffix (again.err, present));
  g_assert_null (strstr (again.err, "bytes/s"));   /* no progress line of 0 bytes */
  g_assert_cmpstr (again.out, ==, line);
  g_autoptr (GPtrArray) after = hzt_hub_requests (p.srv);
  g_assert_cmpuint (after->len, ==, before->len + 1);   /* the tree only */
  /* a quantization the repository lacks: the ones it has */
  g_auto (HzCliRun) no = { 0 };
  run (&p, &no, NULL, (const char *const[]) { "pull", "-d", dir, REPO ":Q2_K", NULL });
  g_assert_cmpint (no.status, ==, 1);
  g_assert_nonnull (strstr (no.err, "no Q2_K file"));
  g_assert_nonnull (strstr (no.err, "F32, Q8_0"));
  /* --list */
  g_auto (HzCliRun) ls = { 0 };
  run (&p, &ls, NULL, (const char *const[]) { "pull", "--list", REPO, NULL });
  g_assert_cmpint (ls.status, ==, 0);
  g_assert_nonnull (strstr (ls.out, "Q8_0"));
  g_assert_nonnull (strstr (ls.out, F32));
  g_assert_null (strstr (ls.out, "README"));
  /* names that are not a repository: usage errors, nothing sent */
  static const char *const bad[] = { "nothing", "a/../b", "a/b:", "../../etc/passwd",
                                     "a/b/../../c", "a/b?x=1", NULL };
  g_autoptr (GPtrArray) before_bad = hzt_hub_requests (p.srv);
  for (int i = 0; bad[i]; i++)
    {
      g_auto (HzCliRun) b = { 0 };
      run (&p, &b, NULL, (const char *const[]) { "pull", "-d", dir, bad[i], NULL });
      g_assert_cmpint (b.status, ==, 2);
    }
  g_autoptr (GPtrArray) after_bad = hzt_hub_requests (p.srv);
  g_assert_cmpuint (after_bad->len, ==, before_bad->len);
  /* an unknown repository */
  g_auto (HzCliRun) nf = { 0 };
  run (&p, &nf, NULL, (const char *const[]) { "pull", "-d", dir, "nobody/nothing-GGUF", NULL });
  g_assert_cmpint (nf.status, ==, 1);
  g_assert_nonnull (strstr (nf.err, "RepoNotFound"));
  p_clear (&p);
}

/* 8 KiB every 10 ms: about 0.8 MB/s, 1.5 s for the 1.2 MB F32 model */
static void
slow (HztHub *srv)
{
  hzt_hub_set_throttle (srv, 8 * 1024, 10);
}

/* Starts `hanzo pull REPO:F32` into the default folder and sends `sig` once its .part holds
 * `percent` of the file. Returns the .part's size after the child ended; *r its result. */
static guint64
interrupt_at (P *p, int sig, guint percent, HzCliRun *r)
{
  g_autoptr (GSubprocessLauncher) l = launcher (p, G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                   G_SUBPROCESS_FLAGS_STDERR_PIPE, NULL);
  g_autoptr (GSubprocess) sp = spawn (l, (const char *const[]) { "pull", REPO ":F32", NULL });
  g_autofree char *part = g_build_filename (p->models, F32 ".part", NULL);
  const guint64 size = g_bytes_get_size (f32_bytes);
  gint64 deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  GStatBuf st;
  for (;;)
    {
      if (g_stat (part, &st) == 0 && (guint64) st.st_size * 100 >= size * percent)
        break;
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (1000);
    }
  g_test_message ("signal %d at %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " bytes", sig,
                  (guint64) st.st_size, size);
  g_subprocess_send_signal (sp, sig);
  finish (sp, r);
  if (sig == SIGKILL)
    {
      g_assert_true (g_subprocess_get_if_signaled (sp));
      g_assert_cmpint (g_subprocess_get_term_sig (sp), ==, SIGKILL);
    }
  g_assert_cmpint (g_stat (part, &st), ==, 0);
  g_assert_cmpuint ((guint64) st.st_size * 100, >=, size * percent);
  g_assert_cmpuint ((guint64) st.st_size, <, size);
  g_autofree char *final = g_build_filename (p->models, F32, NULL);
  g_assert_false (g_file_test (final, G_FILE_TEST_EXISTS));
  return (guint64) st.st_size;
}

/* The next run resumes from `have` bytes and ends with the right file and no .part. */
static void
assert_resumes (P *p, guint64 have)
{
  g_auto (HzCliRun) r = { 0 };
  run (p, &r, NULL, (const char *const[]) { "pull", REPO ":F32", NULL });
  g_assert_cmpint (r.status, ==, 0);
  g_autoptr (HztRequest) last = last_request (p->srv);
  g_autofree char *range = g_strdup_printf ("bytes=%" G_GUINT64_FORMAT "-", have);
  g_test_message ("resumed: the CDN got \"Range: %s\", answered %u", last->range, last->status);
  g_assert_true (last->cdn);
  g_assert_cmpstr (last->range, ==, range);
  g_assert_cmpuint (last->status, ==, 206);
  g_autofree char *final = g_build_filename (p->models, F32, NULL);
  assert_model (final, f32_bytes);
  g_autofree char *names = listing (p->models);
  g_assert_cmpstr (names, ==, F32);
}

static void
test_kill_resume (void)
{
  P p;
  if (!p_init (&p, slow))
    return;
  g_auto (HzCliRun) r = { 0 };
  guint64 have = interrupt_at (&p, SIGKILL, 40, &r);
  /* the killed run's last request is in the log, as cut short */
  {
    g_autofree char *db = g_build_filename (p.data, "hanzo", "hanzo.db", NULL);
    g_autoptr (HzStore) store = hz_store_open (db, NULL);
    g_autoptr (GPtrArray) rows = hz_store_list_egress_log (store, 0, 0, NULL);
    const HzEgressLogEntry *e = rows->pdata[rows->len - 1];
    g_assert_cmpint (e->status, ==, HZ_EGRESS_STATUS_FAILED);
    g_assert_cmpstr (e->message, ==, "the process ended during this request");
  }
  assert_resumes (&p, have);
  p_clear (&p);
}

static void
test_ctrl_c (void)
{
  P p;
  if (!p_init (&p, slow))
    return;
  g_auto (HzCliRun) r = { 0 };
  guint64 have = interrupt_at (&p, SIGINT, 20, &r);
  g_assert_cmpint (r.status, ==, 130);
  g_assert_nonnull (strstr (r.err, "interrupted"));
  g_assert_nonnull (strstr (r.err, "resume"));
  assert_resumes (&p, have);
  p_clear (&p);
}

/* A full disk: a 512 KiB file-size limit in the child (SIGXFSZ ignored, so write() fails
 * with EFBIG) and the 1.2 MB model: exit 1, a message, nothing left in the folder. */
static void
limit_file_size (gpointer data)
{
  struct rlimit lim;
  if (getrlimit (RLIMIT_FSIZE, &lim) == 0)
    {
      lim.rlim_cur = 512 * 1024;
      setrlimit (RLIMIT_FSIZE, &lim);
    }
  signal (SIGXFSZ, SIG_IGN);
}

static void
test_full_disk (void)
{
  P p;
  if (!p_init (&p, NULL))
    return;
  g_autoptr (GSubprocessLauncher) l = launcher (&p, G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                    G_SUBPROCESS_FLAGS_STDERR_PIPE, NULL);
  g_subprocess_launcher_set_child_setup (l, limit_file_size, NULL, NULL);
  g_autoptr (GSubprocess) sp = spawn (l, (const char *const[]) { "pull", REPO ":F32", NULL });
  g_auto (HzCliRun) r = { 0 };
  finish (sp, &r);
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "the disk is full"));
  g_autofree char *names = listing (p.models);
  g_assert_cmpstr (names, ==, "");   /* no model, no .part */
  p_clear (&p);
}

static void
test_gated (void)
{
  P p;
  if (!p_init (&p, NULL))
    return;
  g_auto (HzCliRun) r = { 0 };
  run (&p, &r, NULL, (const char *const[]) { "pull", GATED, NULL });
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "GatedRepo"));
  g_assert_nonnull (strstr (r.err, "HF_TOKEN"));
  /* the folder was made for the download and removed with nothing in it */
  g_assert_false (g_file_test (p.models, G_FILE_TEST_EXISTS));
  g_auto (HzCliRun) ok = { 0 };
  run (&p, &ok, HZT_TOKEN, (const char *const[]) { "pull", GATED, NULL });
  g_assert_cmpint (ok.status, ==, 0);
  g_autofree char *q8 = g_build_filename (p.models, Q8, NULL);
  assert_model (q8, q8_bytes);
  g_autoptr (HztRequest) last = last_request (p.srv);
  g_assert_false (last->auth);   /* the CDN never gets the token */
  p_clear (&p);
}

static void
test_corrupt (void)
{
  P p;
  if (!p_init (&p, NULL))
    return;
  g_auto (HzCliRun) r = { 0 };
  run (&p, &r, NULL, (const char *const[]) { "pull", BROKEN, NULL });
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "sha256 mismatch"));
  g_autofree char *names = listing (p.models);
  g_assert_cmpstr (names, ==, "");
  p_clear (&p);
}

/* The folder is checked before any request: one that cannot be written to, a file, a
 * missing folder under a file; a missing folder is made only when the download starts,
 * and removed again when the pull fails with nothing to resume. */
static void
test_folder (void)
{
  P p;
  if (!p_init (&p, NULL))
    return;
  g_autofree char *file = g_build_filename (p.home, "a-file", NULL);
  g_assert_true (g_file_set_contents (file, "x", 1, NULL));
  g_autofree char *under_file = g_build_filename (file, "models", NULL);
  static const struct { const char *dir; const char *says; } bad[] = {
    { "/proc", "cannot write to the folder /proc: " },
    { "/proc/hanzo-new", "cannot create the folder /proc/hanzo-new: cannot write to /proc: " },
    { NULL, "is not a folder" },   /* the file */
    { NULL, "is not a folder" },   /* under the file */
  };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      const char *dir = bad[i].dir ? bad[i].dir : i == 2 ? file : under_file;
      g_auto (HzCliRun) r = { 0 };
      run (&p, &r, NULL, (const char *const[]) { "pull", "-d", dir, REPO ":Q8_0", NULL });
      g_assert_cmpint (r.status, ==, 1);
      g_assert_nonnull (strstr (r.err, bad[i].says));
      g_autoptr (GPtrArray) reqs = hzt_hub_requests (p.srv);
      g_assert_cmpuint (reqs->len, ==, 0);   /* before any request */
    }
  g_assert_false (g_file_test ("/proc/hanzo-new", G_FILE_TEST_EXISTS));
  /* a missing folder: not made when the pull fails (an unknown repository; a gated one,
   * whose download is refused after the listing) */
  g_autofree char *top = g_build_filename (p.home, "new", NULL);
  g_autofree char *deep = g_build_filename (top, "deeper", "models", NULL);
  static const char *const failing[] = { "nobody/nothing-GGUF", GATED };
  for (guint i = 0; i < G_N_ELEMENTS (failing); i++)
    {
      g_auto (HzCliRun) r = { 0 };
      run (&p, &r, NULL, (const char *const[]) { "pull", "-d", deep, failing[i], NULL });
      g_assert_cmpint (r.status, ==, 1);
      g_assert_false (g_file_test (top, G_FILE_TEST_EXISTS));
    }
  /* and made for a download that succeeds */
  g_auto (HzCliRun) ok = { 0 };
  run (&p, &ok, NULL, (const char *const[]) { "pull", "-d", deep, REPO ":Q8_0", NULL });
  g_assert_cmpint (ok.status, ==, 0);
  g_autofree char *q8 = g_build_filename (deep, Q8, NULL);
  assert_model (q8, q8_bytes);
  p_clear (&p);
}

/* `hanzo hub-login` stores a token for the endpoint in the keyring (read from stdin, never
 * echoed), `hanzo pull` of a gated repository then uses it, --logout removes it. Under
 * with-keyring.sh (a throwaway Secret Service); skipped without one. */
static void
test_hub_login (void)
{
  P p;
  if (!p_init (&p, NULL))
    return;
  g_autofree char *url = hzt_hub_url (p.srv);
  g_autoptr (GError) error = NULL;
  char *probe = hz_credentials_lookup_hub_token (url, NULL, &error);
  hz_credentials_free_token (probe);
  if (g_error_matches (error, HZ_CREDENTIALS_ERROR, HZ_CREDENTIALS_ERROR_UNAVAILABLE))
    {
      g_autofree char *why = g_strdup_printf ("no Secret Service (run under with-keyring.sh): %s",
                                              error->message);
      g_test_skip (why);
      p_free (&p);
      return;
    }
  g_clear_error (&error);
  p.keyring = TRUE;
  /* no token yet: the gated repository is refused */
  g_auto (HzCliRun) no = { 0 };
  run (&p, &no, NULL, (const char *const[]) { "pull", GATED, NULL });
  g_assert_cmpint (no.status, ==, 1);
  g_assert_nonnull (strstr (no.err, "GatedRepo"));
  g_assert_nonnull (strstr (no.err, "hanzo hub-login"));   /* the way out is named */
  /* typed at a terminal (a pty): echo is off while it is read, and on again after */
  int master = posix_openpt (O_RDWR | O_NOCTTY | O_CLOEXEC);
  g_assert_cmpint (master, >=, 0);
  g_assert_cmpint (grantpt (master), ==, 0);
  g_assert_cmpint (unlockpt (master), ==, 0);
  int tty = open (ptsname (master), O_RDWR | O_NOCTTY | O_CLOEXEC);
  g_assert_cmpint (tty, >=, 0);
  struct termios t;
  g_assert_cmpint (tcgetattr (tty, &t), ==, 0);
  g_assert_true (t.c_lflag & ECHO);
  {
    g_autoptr (GSubprocessLauncher) l = launcher (&p, G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                      G_SUBPROCESS_FLAGS_STDERR_PIPE, NULL);
    g_subprocess_launcher_take_stdin_fd (l, dup (tty));
    g_autoptr (GSubprocess) sp = spawn (l, (const char *const[]) { "hub-login", NULL });
    gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
    while (tcgetattr (tty, &t) == 0 && (t.c_lflag & ECHO))
      {
        g_assert_cmpint (g_get_monotonic_time (), <, deadline);
        g_usleep (2000);
      }
    static const char typed[] = "hf_typed_at_the_prompt\n";
    g_assert_cmpint (write (master, typed, strlen (typed)), ==, (gssize) strlen (typed));
    g_auto (HzCliRun) pty = { 0 };
    finish (sp, &pty);
    g_assert_cmpint (pty.status, ==, 0);
    g_assert_nonnull (strstr (pty.err, "Access token for"));
    g_assert_null (strstr (pty.err, "hf_typed"));
    /* what the terminal showed: not the token */
    g_assert_cmpint (fcntl (master, F_SETFL, O_NONBLOCK), ==, 0);
    char shown[256];
    gssize n = read (master, shown, sizeof shown - 1);
    shown[MAX (n, 0)] = 0;
    g_assert_null (strstr (shown, "hf_typed"));
    g_assert_cmpint (tcgetattr (tty, &t), ==, 0);
    g_assert_true (t.c_lflag & ECHO);   /* restored */
  }
  close (tty);
  close (master);
  char *typed_stored = hz_credentials_lookup_hub_token (url, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (typed_stored, ==, "hf_typed_at_the_prompt");
  hz_credentials_free_token (typed_stored);
  /* the token on stdin (blanks around it dropped), for $HF_ENDPOINT: replaces that one */
  g_auto (HzCliRun) in = { 0 };
  run_input (&p, &in, "  " HZT_TOKEN "  \n", (const char *const[]) { "hub-login", NULL });
  g_assert_cmpint (in.status, ==, 0);
  g_assert_null (strstr (in.out, HZT_TOKEN));
  g_assert_null (strstr (in.err, HZT_TOKEN));
  g_assert_nonnull (strstr (in.err, url));
  char *stored = hz_credentials_lookup_hub_token (url, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (stored, ==, HZT_TOKEN);
  hz_credentials_free_token (stored);
  /* pull asks the keyring after the refusal, and gets the file */
  g_auto (HzCliRun) ok = { 0 };
  run (&p, &ok, NULL, (const char *const[]) { "pull", GATED, NULL });
  g_assert_cmpint (ok.status, ==, 0);
  g_autofree char *q8 = g_build_filename (p.models, Q8, NULL);
  assert_model (q8, q8_bytes);
  /* bad input: nothing, a token with a space, a token on the command line, a bad endpoint */
  static const struct { const char *input; const char *arg; const char *says; } bad[] = {
    { "", NULL, "no token given" },
    { "hf_a b\n", NULL, "token" },
    { "", HZT_TOKEN, "not the command line" },
    { "x\n", "--endpoint=ftp://example.org", "must be an https:// URL" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_auto (HzCliRun) b = { 0 };
      run_input (&p, &b, bad[i].input, (const char *const[]) { "hub-login", bad[i].arg, NULL });
      g_assert_cmpint (b.status, ==, 2);
      g_assert_nonnull (strstr (b.err, bad[i].says));
    }
  /* the stored token is still the good one; --logout removes it */
  g_auto (HzCliRun) out = { 0 };
  run_input (&p, &out, "", (const char *const[]) { "hub-login", "--logout", NULL });
  g_assert_cmpint (out.status, ==, 0);
  g_assert_null (hz_credentials_lookup_hub_token (url, NULL, &error));
  g_assert_error (error, HZ_CREDENTIALS_ERROR, HZ_CREDENTIALS_ERROR_NOT_FOUND);
  p_clear (&p);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/egress/hanzo-pull/search", test_search);
  g_test_add_func ("/egress/hanzo-pull/choose", test_choose);
  g_test_add_func ("/egress/hanzo-pull/kill-resume", test_kill_resume);
  g_test_add_func ("/egress/hanzo-pull/ctrl-c", test_ctrl_c);
  g_test_add_func ("/egress/hanzo-pull/full-disk", test_full_disk);
  g_test_add_func ("/egress/hanzo-pull/gated", test_gated);
  g_test_add_func ("/egress/hanzo-pull/corrupt", test_corrupt);
  g_test_add_func ("/egress/hanzo-pull/folder", test_folder);
  g_test_add_func ("/egress/hanzo-pull/hub-login", test_hub_login);
  int rc = g_test_run ();
  g_clear_pointer (&f32_bytes, g_bytes_unref);
  g_clear_pointer (&q8_bytes, g_bytes_unref);
  return rc;
}
