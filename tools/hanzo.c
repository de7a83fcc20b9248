/* tools/hanzo.c — the `hanzo` command line: dispatches to one subcommand per file
 * (tools/hanzo-<name>.c, each defining `int hz_cmd_<name> (int argc, char **argv)`,
 * argv[0] being the subcommand name; a name's '_' is typed '-', as in hub-login).
 * `hanzo help COMMAND` is `hanzo COMMAND --help`; `hanzo --version` prints the version.
 * Exit status: 0 success, 1 runtime error (message on stderr), 2 usage error. */
#include <glib.h>
#include <glib/gi18n.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "hanzo/atomic-file.h"
#include "hanzo-cli-util.h"
#include "hanzo-cmd.h"

typedef struct {
  const char *name;
  int (*fn) (int argc, char **argv);
  const char *summary;
} HzCommand;

static const HzCommand commands[] = {
#define HZ_CMD(name, summary) { #name, hz_cmd_##name, summary },
#include "hanzo-cmds.def"
#undef HZ_CMD
};

/* A command's name as typed: the C name with '-' for '_' (hub_login: hub-login). g_free. */
static char *
typed_name (const HzCommand *c)
{
  return g_strdelimit (g_strdup (c->name), "_", '-');
}

static void
usage (FILE *out)
{
  fprintf (out, "Usage: hanzo COMMAND [OPTIONS...]\n\nCommands:\n");
  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    {
      g_autofree char *name = typed_name (&commands[i]);
      fprintf (out, "  %-12s %s\n", name, commands[i].summary);
    }
  fprintf (out, "\nRun 'hanzo COMMAND --help' (or 'hanzo help COMMAND') for the options of a "
                "command; 'hanzo --version' for the version.\n");
}

int
main (int argc, char **argv)
{
  setlocale (LC_ALL, "");
  /* a closed standard descriptor would be taken by the next open (GLib's wakeup eventfd:
   * `hanzo chat <&-` then waited on it forever): give each closed one /dev/null */
  for (int fd = 0; fd <= 2; fd++)
    if (fcntl (fd, F_GETFD) < 0 && errno == EBADF)
      {
        const int nfd = open ("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
        if (nfd >= 0 && nfd != fd)
          {
            dup2 (nfd, fd);
            close (nfd);
          }
      }
  /* Ctrl-C or a kill while a model is written leaves no temporary file (atomic-file.h) */
  hz_atomic_file_install_signal_cleanup ();
  if (argc < 2)
    {
      usage (stderr);
      return 2;
    }
  if (strcmp (argv[1], "--version") == 0 || strcmp (argv[1], "-V") == 0)
    {
      printf ("hanzo %s\n", HZ_VERSION);
      return 0;
    }
  /* `hanzo help COMMAND` is `hanzo COMMAND --help` */
  char *help_argv[] = { NULL, NULL, (char *) "--help", NULL };
  if (strcmp (argv[1], "help") == 0 && argc == 3)
    {
      help_argv[1] = argv[2];
      argv = help_argv;
      argc = 3;
    }
  else if (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0 ||
           strcmp (argv[1], "help") == 0)
    {
      usage (stdout);
      return 0;
    }
  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    {
      g_autofree char *name = typed_name (&commands[i]);
      if (strcmp (argv[1], name) != 0)
        continue;
      /* GOptionContext prints "Usage: PRGNAME [OPTION…] PARAMETERS" */
      g_autofree char *prg = g_strdup_printf ("hanzo %s", name);
      g_set_prgname (prg);
      int rc = commands[i].fn (argc - 1, argv + 1);
        /* as coreutils' close_stdout: output lost to a full disk or a closed pipe is an
         * error, not a success */
      if (fflush (stdout) != 0 || ferror (stdout))
        {
          fprintf (stderr, "hanzo %s: error writing the output: %s\n", name,
                   g_strerror (errno));
          return rc != 0 ? rc : 1;
        }
      return rc;
    }
  g_autofree char *shown = hz_cli_escape (argv[1]);
  fprintf (stderr, "hanzo: unknown command '%s'\n\n", shown);
  usage (stderr);
  return 2;
}
