/* tools/hanzo-pull.c — `hanzo pull`: download a GGUF model from the Hugging Face Hub.
 *
 *   hanzo pull [--dir DIR] [--revision REV] [--endpoint URL] [--list] REPO[:QUANT|/FILE]
 *
 * REPO is "owner/name" (a leading "https://huggingface.co/" or "hf.co/" is dropped). With
 * :QUANT the model whose file name carries that quantization tag (Q4_K_M, Q8_0, ...); with
 * /FILE that GGUF file of the repository (other files are refused); with neither the first of Q4_K_M, Q4_K_S, Q5_K_M, ...
 * present (hub-select.h), and the command says which it took and why. A split model
 * (-00001-of-0000N.gguf) comes as a whole. --list prints the repository's GGUF models
 * instead.
 *
 * The files go to DIR (default: the app's model library, $XDG_DATA_HOME/hanzo/models),
 * checked before any request (a folder this process can write in, or one it can make);
 * a missing DIR is made only when the download starts, and removed again if the pull
 * fails leaving nothing in it. Each file is written to NAME.part, checked against the repository's SHA-256 and only then renamed
 * to NAME (egress/hub.h). A progress line (bytes, speed, time left) goes to stderr. Ctrl+C
 * (or SIGTERM) stops it with the .part kept: the same command later resumes where it
 * stopped; so does a run after a kill or a lost connection. The path of the model (its
 * first file) is printed on stdout, for `hanzo chat -m "$(hanzo pull ...)"`; a model already
 * in DIR is checked (size and SHA-256) and reported "already present" without a download.
 *
 * Gated or private repositories need an access token: $HF_TOKEN, else the one the keyring
 * holds for the endpoint (asked only after the Hub refused). $HF_ENDPOINT or --endpoint
 * names a mirror. Every request is written to the egress log shown on the app's privacy
 * page. Exit status: 0 ok, 1 error, 2 usage error, 130 interrupted.
 */
#include <glib.h>
#include <glib-unix.h>
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "hanzo-cli-util.h"
#include "hanzo-cmd.h"
#include "hanzo-hub-common.h"
#include "hanzo/egress.h"

typedef struct {
  /* the request */
  char         *repo, *quant, *file, *revision, *dir, *endpoint;
  gboolean      list;
  /* running */
  GCancellable *cancel;
  GMainLoop    *loop;
  int           status;
  /* progress (worker thread) */
  gboolean      tty;
  gint64        t0, last_line;
  guint64       first_done;   /* bytes already there when this run began */
  gboolean      have_first;
  gboolean      fetched;      /* a file was fetched (else all were in place already) */
  int           line_len;
  /* the folder: the first of its missing parents (NULL when it exists), made only when
   * the download starts and removed again if the pull fails leaving it empty */
  char         *missing_from;
} Pull;

/* REPO[:QUANT|/FILE] with an optional Hub URL prefix. Prints the usage error. */
static gboolean
parse_spec (Pull *p, const char *spec)
{
  static const char *const prefixes[] = { "https://huggingface.co/", "http://huggingface.co/",
                                          "huggingface.co/", "https://hf.co/", "hf.co/" };
  for (guint i = 0; i < G_N_ELEMENTS (prefixes); i++)
    if (g_str_has_prefix (spec, prefixes[i]))
      {
        spec += strlen (prefixes[i]);
        break;
      }
  const char *slash = strchr (spec, '/');
  const char *rest = slash ? strchr (slash + 1, '/') : NULL;
  const char *colon = slash ? strchr (slash + 1, ':') : NULL;
  if (rest && (!colon || colon > rest))
    {
      p->repo = g_strndup (spec, (gsize) (rest - spec));
      p->file = g_strdup (rest + 1);
    }
  else if (colon)
    {
      p->repo = g_strndup (spec, (gsize) (colon - spec));
      p->quant = g_strdup (colon + 1);
    }
  else
    p->repo = g_strdup (spec);
  if (!hz_hub_repo_id_is_valid (p->repo) || (p->file && !hz_hub_path_is_valid (p->file)) ||
      (p->quant && (!*p->quant || strpbrk (p->quant, "/:"))))
    {
      g_autofree char *shown = hz_cli_escape (spec);
      fprintf (stderr, "hanzo pull: '%s' is not REPO, REPO:QUANT or REPO/FILE (REPO is "
                       "owner/name, e.g. bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M)\n", shown);
      return FALSE;
    }
  g_autofree char *lower = p->file ? g_ascii_strdown (p->file, -1) : NULL;
  if (lower && !g_str_has_suffix (lower, ".gguf"))
    {
      fprintf (stderr, "hanzo pull: '%s' is not a GGUF model file (.gguf): hanzo pull "
                       "downloads models; `hanzo pull --list %s` lists them\n", p->file, p->repo);
      return FALSE;
    }
  return TRUE;
}

/* ---------------------------------------------------------------- the folder */

/* Whether a file can be made in the folder `dir` (tried: a root process passes access(2)
 * checks that the file system then refuses, as in /proc). Prints why not. */
static gboolean
can_write_in (const char *dir, const char *target)
{
  g_autofree char *probe = g_build_filename (dir, ".hanzo-pull-XXXXXX", NULL);
  int fd = g_mkstemp_full (probe, O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0)
    {
      int e = errno;
      if (strcmp (dir, target) == 0)
        fprintf (stderr, "hanzo pull: cannot write to the folder %s: %s\n", dir, g_strerror (e));
      else
        fprintf (stderr, "hanzo pull: cannot create the folder %s: cannot write to %s: %s\n",
                 target, dir, g_strerror (e));
      return FALSE;
    }
  close (fd);
  g_unlink (probe);
  return TRUE;
}

/* Before any request: `p->dir` is a folder this process can write to, or can be made (its
 * nearest existing parent is one). Nothing is created here. Prints why not. */
static gboolean
check_dir (Pull *p)
{
  GStatBuf st;
  g_autofree char *dir = g_canonicalize_filename (p->dir, NULL);
  g_autofree char *first_missing = NULL;
  while (g_stat (dir, &st) != 0)
    {
      if (errno != ENOENT && errno != ENOTDIR)   /* ENOTDIR: a file on the way (said below) */
        {
          fprintf (stderr, "hanzo pull: cannot use the folder %s: %s: %s\n", p->dir, dir,
                   g_strerror (errno));
          return FALSE;
        }
      g_free (first_missing);
      first_missing = g_steal_pointer (&dir);
      dir = g_path_get_dirname (first_missing);
    }
  if (!S_ISDIR (st.st_mode))
    {
      if (first_missing)
        fprintf (stderr, "hanzo pull: cannot create the folder %s: %s is not a folder\n",
                 p->dir, dir);
      else
        fprintf (stderr, "hanzo pull: %s is not a folder\n", p->dir);
      return FALSE;
    }
  if (!can_write_in (dir, first_missing ? p->dir : dir))
    return FALSE;
  p->missing_from = g_steal_pointer (&first_missing);
  return TRUE;
}

/* Makes the missing part of the folder (check_dir), just before the first write. */
static gboolean
make_dir (Pull *p, GError **error)
{
  if (p->missing_from && g_mkdir_with_parents (p->dir, 0700) != 0)
    {
      int e = errno;
      g_set_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_IO, "cannot create the folder %s: %s",
                   p->dir, g_strerror (e));
      return FALSE;
    }
  return TRUE;
}

/* After a failed pull: the folders make_dir() made, when nothing was left in them (a .part
 * to resume from keeps them). */
static void
unmake_dir (Pull *p)
{
  if (!p->missing_from)
    return;
  g_autofree char *dir = g_canonicalize_filename (p->dir, NULL);
  for (;;)
    {
      if (g_rmdir (dir) != 0 || strcmp (dir, p->missing_from) == 0)
        break;
      char *up = g_path_get_dirname (dir);
      g_free (dir);
      dir = up;
    }
}

/* ---------------------------------------------------------------- progress */

static char *
clock_text (double s)
{
  if (s < 0 || s > 359999)
    return g_strdup ("--:--");
  guint t = (guint) (s + 0.5);
  return t >= 3600 ? g_strdup_printf ("%u:%02u:%02u", t / 3600, t / 60 % 60, t % 60)
                   : g_strdup_printf ("%u:%02u", t / 60, t % 60);
}

/* HzHubProgressFunc: "NAME  DONE / TOTAL (P%)  SPEED/s  M:SS left" on stderr, rewritten in
 * place on a terminal, else a line every 2 s. Called with file == NULL at the end. */
static void
on_progress (guint64 done, guint64 total, const char *file, gpointer user_data)
{
  Pull *p = user_data;
  gint64 now = g_get_monotonic_time ();
  if (file)
    p->fetched = TRUE;
  else if (!p->fetched)
    return;   /* every file was in place already (said after the download) */
  if (!p->have_first)
    {
      p->have_first = TRUE;
      p->first_done = done;
      p->t0 = now;
    }
  if (!p->tty && file && now - p->last_line < 2 * G_USEC_PER_SEC && p->last_line)
    return;
  p->last_line = now;
  double secs = (now - p->t0) / 1e6;
  double speed = secs > 0.2 ? (done - p->first_done) / secs : 0;
  g_autofree char *d = g_format_size (done);
  g_autofree char *t = total ? g_format_size (total) : g_strdup ("?");
  g_autofree char *v = g_format_size ((guint64) speed);
  g_autofree char *left = clock_text (speed > 0 && total ? (total - done) / speed : -1);
  g_autofree char *name = file ? g_path_get_basename (file) : g_strdup ("done");
  g_autofree char *line = g_strdup_printf ("%s  %s / %s (%d%%)  %s/s  %s left", name, d, t,
                                           total ? (int) (100.0 * done / total) : 0, v, left);
  if (p->tty)
    fprintf (stderr, "\r%-*s", p->line_len, line);
  else
    fprintf (stderr, "%s\n", line);
  p->line_len = (int) strlen (line);
  if (p->tty && !file)
    fputc ('\n', stderr);
}

/* ---------------------------------------------------------------- the work (a thread) */

static void
print_list (Pull *p, GPtrArray *files)
{
  fprintf (stderr, "GGUF models of %s:\n", p->repo);
  for (guint i = 0; i < files->len; i++)
    {
      const HzHubFile *f = files->pdata[i];
      guint idx, count;
      g_autofree char *lower = g_ascii_strdown (f->path, -1);
      if (!g_str_has_suffix (lower, ".gguf") ||
          (hz_hub_split_info (f->path, &idx, &count, NULL) && idx != 1))
        continue;
      g_autoptr (GError) e = NULL;
      g_autoptr (HzHubChoice) c = hz_hub_choose (files, NULL, f->path, &e);
      g_autofree char *tag = hz_hub_quant_tag (f->path);
      g_autofree char *size = g_format_size (c ? c->size : f->size);
      printf ("%-8s  %10s  %s%s\n", tag ? tag : "-", size, f->path,
              c && c->files->len > 1 ? " (split set)" : "");
    }
}

/* Reports a failed pull; the exit status. */
static int
pull_failed (Pull *p, const GError *error)
{
  if (p->tty && p->line_len)
    fputc ('\n', stderr);
  if (g_error_matches (error, HZ_HUB_ERROR, HZ_HUB_ERROR_CANCELLED))
    {
      fprintf (stderr, "hanzo pull: interrupted; the partial download stays in %s (NAME.part): "
                       "run the same command to resume\n", p->dir);
      return HZ_CLI_EXIT_INTERRUPTED;
    }
  hz_cli_hub_print_error ("pull", error);
  return g_error_matches (error, HZ_HUB_ERROR, HZ_HUB_ERROR_INVALID) ? 2 : 1;
}

static int
run_pull (Pull *p, HzHub *hub)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) files = hz_hub_list_files (hub, p->repo, p->revision, p->cancel, &error);
  if (!files && hz_credentials_hub_token_after_refusal (hub, error))
    {
      g_clear_error (&error);
      files = hz_hub_list_files (hub, p->repo, p->revision, p->cancel, &error);
    }
  if (!files)
    return pull_failed (p, error);
  if (p->list)
    {
      print_list (p, files);
      return 0;
    }
  g_autoptr (HzHubChoice) choice = hz_hub_choose (files, p->quant, p->file, &error);
  if (!choice)
    return pull_failed (p, error);
  g_autofree char *size = g_format_size (choice->size);
  g_autofree char *parts = choice->files->len > 1
                           ? g_strdup_printf (" in %u files", choice->files->len) : g_strdup ("");
  fprintf (stderr, "%s: %s (%s%s)\n", p->repo, choice->why, size, parts);
  long pages = sysconf (_SC_PHYS_PAGES), page = sysconf (_SC_PAGESIZE);
  if (pages > 0 && page > 0 && choice->size > (guint64) pages * (guint64) page)
    {
      g_autofree char *ram = g_format_size ((guint64) pages * (guint64) page);
      fprintf (stderr, "hanzo pull: warning: the model is larger than this machine's memory "
                       "(%s); a smaller quantization would run faster\n", ram);
    }
  g_autoptr (GPtrArray) refs = g_ptr_array_new_with_free_func ((GDestroyNotify) hz_hub_file_ref_free);
  for (guint i = 0; i < choice->files->len; i++)
    {
      const HzHubFile *f = choice->files->pdata[i];
      HzHubFileRef *ref = hz_hub_file_ref_new (p->repo, p->revision, f->path, &error);
      if (!ref || !hz_hub_file_ref_set_expected (ref, f->size, f->sha256, f->git_oid, &error))
        {
          hz_hub_file_ref_free (ref);
          return pull_failed (p, error);
        }
      g_ptr_array_add (refs, ref);
    }
  g_autofree char *commit = NULL;
  gboolean ok = make_dir (p, &error) &&
                hz_hub_download (hub, refs, p->dir, on_progress, p, &commit, p->cancel, &error);
  if (!ok && hz_credentials_hub_token_after_refusal (hub, error))
    {
      g_clear_error (&error);
      ok = hz_hub_download (hub, refs, p->dir, on_progress, p, &commit, p->cancel, &error);
    }
  if (!ok)
    {
      unmake_dir (p);
      return pull_failed (p, error);
    }
  const HzHubFile *first = choice->files->pdata[0];
  g_autofree char *base = g_path_get_basename (first->path);
  g_autofree char *path = g_build_filename (p->dir, base, NULL);
  if (!p->fetched)
    fprintf (stderr, "%s: already present, SHA-256 verified; nothing downloaded\n", path);
  else
    fprintf (stderr, "%s: SHA-256 verified%s%s\n", path, commit ? ", commit " : "",
             commit ? commit : "");
  printf ("%s\n", path);
  return 0;
}

static gboolean
quit_loop (gpointer loop)
{
  g_main_loop_quit (loop);
  return G_SOURCE_REMOVE;
}

static gpointer
pull_thread (gpointer data)
{
  Pull *p = data;
  g_autoptr (HzStore) store = NULL;
  g_autoptr (HzHub) hub = hz_cli_hub_open ("pull", p->endpoint, &store);
  p->status = hub ? run_pull (p, hub) : 1;
  g_clear_pointer (&hub, hz_hub_free);
  g_main_context_invoke (NULL, quit_loop, p->loop);
  return NULL;
}

static gboolean
on_signal (gpointer data)
{
  g_cancellable_cancel (data);   /* the download stops within one read */
  return G_SOURCE_CONTINUE;
}

int
hz_cmd_pull (int argc, char **argv)
{
  Pull p = { .revision = NULL };
  gboolean list = FALSE;
  GOptionEntry entries[] = {
    { "dir", 'd', 0, G_OPTION_ARG_FILENAME, &p.dir,
      "Folder to put the model in (default: the app's models, $XDG_DATA_HOME/hanzo/models)", "DIR" },
    { "revision", 'r', 0, G_OPTION_ARG_STRING, &p.revision,
      "Branch, tag or commit (default main)", "REV" },
    { "endpoint", 0, 0, G_OPTION_ARG_STRING, &p.endpoint,
      "Hub or mirror to use (default $HF_ENDPOINT or https://huggingface.co)", "URL" },
    { "list", 'l', 0, G_OPTION_ARG_NONE, &list,
      "List the repository's GGUF models (quantization, size) instead", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "REPO[:QUANT|/FILE] — download a GGUF model from the Hugging Face Hub");
  g_option_context_set_description (ctx,
    "Without :QUANT or /FILE the first of Q4_K_M, Q4_K_S, Q5_K_M, ... the repository has is\n"
    "taken (it says which, and why). Only .gguf files are downloaded; each is checked\n"
    "against the repository's SHA-256 before it gets its name.\n"
    "Gated or private repositories need an access token: $HF_TOKEN, or one stored with\n"
    "`hanzo hub-login`. $HF_ENDPOINT (or --endpoint) names a mirror.\n"
    "Ctrl+C (or SIGTERM) stops with exit status 130 and keeps NAME.part: the same command\n"
    "resumes it. Exit status: 0 ok, 1 error, 2 usage error, 130 interrupted.\n");
  g_autoptr (GError) error = NULL;
  g_option_context_add_main_entries (ctx, entries, NULL);
  int rc = 2;
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    hz_cli_print_error ("pull", error->message);
  else if (argc != 2)
    fprintf (stderr, "hanzo pull: name one repository\nUsage: hanzo pull [--dir DIR] "
                     "REPO[:QUANT|/FILE]   e.g. hanzo pull bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M\n");
  else if (p.revision && !hz_hub_revision_is_valid (p.revision))
    {
      g_autofree char *shown = hz_cli_escape (p.revision);
      fprintf (stderr, "hanzo pull: invalid revision '%s'\n", shown);
    }
  else if (parse_spec (&p, argv[1]))
    rc = 0;
  if (rc == 0 && !p.dir)
    p.dir = g_build_filename (g_get_user_data_dir (), "hanzo", "models", NULL);
  if (rc == 0 && !list && !check_dir (&p))
    rc = 1;
  if (rc == 0)
    {
      p.list = list;
      p.tty = isatty (STDERR_FILENO);
      p.cancel = g_cancellable_new ();
      p.loop = g_main_loop_new (NULL, FALSE);
      guint sigint = g_unix_signal_add (SIGINT, on_signal, p.cancel);
      guint sigterm = g_unix_signal_add (SIGTERM, on_signal, p.cancel);
      GThread *t = g_thread_new ("hanzo-pull", pull_thread, &p);
      g_main_loop_run (p.loop);
      g_thread_join (t);
      g_source_remove (sigint);
      g_source_remove (sigterm);
      g_main_loop_unref (p.loop);
      g_object_unref (p.cancel);
      rc = p.status;
    }
  g_free (p.repo);
  g_free (p.quant);
  g_free (p.file);
  g_free (p.revision);
  g_free (p.dir);
  g_free (p.endpoint);
  g_free (p.missing_from);
  return rc;
}
