/* tests/tools/test-hanzo-chat.c — Ctrl-C (SIGINT) in `hanzo chat`, as a user at a terminal
 * sends it: during a reply it stops the reply and the prompt comes back (the session goes
 * on, and ends with status 0 at end of input); at the prompt, or twice during a reply, it
 * ends the session with status 130.
 *
 * The child's stdin is a pseudo-terminal (so that chat is interactive and prints its "> "
 * prompt; echo off), its stdout a pipe shrunk to one page (F_SETPIPE_SZ). A reply is
 * "under way" once that pipe is full: the child then waits in write() inside its token
 * callback, so the signal is sure to arrive mid-reply however fast the model is. Needs
 * ../shared/models/stories260K.gguf and Linux (F_SETPIPE_SZ, FIONREAD); skips otherwise. */
#include <gio/gio.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "../hz-test-util.h"
#include "hanzo-cli-run.h"

/* seconds any one wait may take before the test fails (the model answers in milliseconds) */
#define WAIT_S 60

typedef struct {
  GSubprocess *proc;
  int          master;   /* the terminal's master side: lines typed into the child */
  int          out, err; /* read ends of the child's stdout and stderr */
  GString     *out_text, *err_text;
} Chat;

/* Starts `hanzo chat` on stories260K with replies long enough to fill the pipe (up to 3000
 * tokens, end-of-text ignored), or returns FALSE after g_test_skip. */
static gboolean
chat_start (Chat *c)
{
  g_autofree char *model = hz_test_shared_path ("models/stories260K.gguf");
  if (model == NULL)
    {
      g_test_skip ("../shared/models/stories260K.gguf is absent");
      return FALSE;
    }
  c->master = posix_openpt (O_RDWR | O_NOCTTY | O_CLOEXEC);
  g_assert_cmpint (c->master, >=, 0);
  g_assert_cmpint (grantpt (c->master), ==, 0);
  g_assert_cmpint (unlockpt (c->master), ==, 0);
  int slave = open (ptsname (c->master), O_RDWR | O_NOCTTY | O_CLOEXEC);
  g_assert_cmpint (slave, >=, 0);
  struct termios t;
  g_assert_cmpint (tcgetattr (slave, &t), ==, 0);
  t.c_lflag &= ~(tcflag_t) ECHO;   /* keeps the master's read side empty */
  g_assert_cmpint (tcsetattr (slave, TCSANOW, &t), ==, 0);

  int out[2], err[2];
  g_assert_cmpint (pipe2 (out, O_CLOEXEC), ==, 0);
  g_assert_cmpint (pipe2 (err, O_CLOEXEC), ==, 0);
  if (fcntl (out[0], F_SETPIPE_SZ, 4096) < 0)
    {
      g_test_skip ("F_SETPIPE_SZ is not supported; skipping");
      for (int i = 0; i < 2; i++)
        {
          close (out[i]);
          close (err[i]);
        }
      close (slave);
      close (c->master);
      return FALSE;
    }
  g_autoptr (GSubprocessLauncher) l = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_NONE);
  g_subprocess_launcher_take_stdin_fd (l, slave);
  g_subprocess_launcher_take_stdout_fd (l, out[1]);
  g_subprocess_launcher_take_stderr_fd (l, err[1]);
  g_autofree char *bin = hz_cli_bin ();
  g_autoptr (GError) error = NULL;
  c->proc = g_subprocess_launcher_spawn (l, &error, bin, "chat", "-m", model, "--threads", "1",
                                         "-c", "4096", "-n", "3000", "--ignore-eos",
                                         "--seed", "1", NULL);
  g_assert_no_error (error);
  c->out = out[0];
  c->err = err[0];
  c->out_text = g_string_new (NULL);
  c->err_text = g_string_new (NULL);
  return TRUE;
}

/* Reads what `fd` has into `into`, waiting up to WAIT_S; FALSE at end of file. */
static gboolean
read_some (int fd, GString *into)
{
  struct pollfd p = { fd, POLLIN, 0 };
  int r;
  do
    r = poll (&p, 1, WAIT_S * 1000);
  while (r < 0 && errno == EINTR);
  if (r == 0)
    g_error ("hanzo chat: nothing written for %d s (so far: \"%s\")", WAIT_S, into->str);
  char buf[4096];
  ssize_t n = read (fd, buf, sizeof buf);
  g_assert_cmpint (n, >=, 0);
  g_string_append_len (into, buf, n);
  return n > 0;
}

/* Reads stdout until `needle` occurs at or after byte `from`; returns its offset. */
static gsize
out_wait_for (Chat *c, const char *needle, gsize from)
{
  for (;;)
    {
      const char *hit = from <= c->out_text->len ? strstr (c->out_text->str + from, needle) : NULL;
      if (hit)
        return (gsize) (hit - c->out_text->str);
      if (!read_some (c->out, c->out_text))
        g_error ("hanzo chat: stdout ended before \"%s\"; it was \"%s\", stderr \"%s\"", needle,
                 c->out_text->str, c->err_text->str);
    }
}

static void
err_wait_for (Chat *c, const char *needle)
{
  while (strstr (c->err_text->str, needle) == NULL)
    if (!read_some (c->err, c->err_text))
      g_error ("hanzo chat: stderr ended before \"%s\"; it was \"%s\"", needle, c->err_text->str);
}

static void
type_line (Chat *c, const char *text)
{
  g_assert_cmpint (write (c->master, text, strlen (text)), ==, (ssize_t) strlen (text));
}

/* Waits until the child has filled its stdout pipe: it is then blocked in the middle of a
 * reply. */
static void
wait_reply_blocked (Chat *c)
{
  const gint64 deadline = g_get_monotonic_time () + WAIT_S * G_USEC_PER_SEC;
  for (;;)
    {
      int queued = 0;
      g_assert_cmpint (ioctl (c->out, FIONREAD, &queued), ==, 0);
      /* a token is written whole (pipe writes of <= PIPE_BUF bytes are atomic), so the
       * pipe may stop a token short of full */
      if (queued >= 4096 - 64)
        return;
      if (g_get_monotonic_time () > deadline)
        g_error ("hanzo chat: the reply stopped at %d bytes before filling the pipe", queued);
      g_usleep (10000);
    }
}

/* Drains stdout and stderr to the end and returns the exit status (asserting a normal exit). */
static int
chat_wait_exit (Chat *c)
{
  while (read_some (c->out, c->out_text))
    ;
  while (read_some (c->err, c->err_text))
    ;
  g_autoptr (GError) error = NULL;
  g_assert_true (g_subprocess_wait (c->proc, NULL, &error));
  g_assert_no_error (error);
  if (!g_subprocess_get_if_exited (c->proc))
    g_error ("hanzo chat died of signal %d; stderr \"%s\"", g_subprocess_get_term_sig (c->proc),
             c->err_text->str);
  return g_subprocess_get_exit_status (c->proc);
}

/* Types `line` and waits until the reply to it is blocked in the middle (wait_reply_blocked). */
static void
reply_blocked (Chat *c, const char *line)
{
  type_line (c, line);
  wait_reply_blocked (c);
}

/* Sends SIGINT to the child, as Ctrl-C at its terminal does. */
static void
interrupt (Chat *c)
{
  g_assert_cmpint (kill (atoi (g_subprocess_get_identifier (c->proc)), SIGINT), ==, 0);
}

/* Test fixture: a `hanzo chat` session at its first prompt, or c->proc NULL after g_test_skip
 * (chat_start). */
static void
chat_setup (Chat *c, gconstpointer data)
{
  if (chat_start (c))
    out_wait_for (c, "> ", 0);
}

static void
chat_teardown (Chat *c, gconstpointer data)
{
  if (c->proc == NULL)
    return;
  close (c->master);
  close (c->out);
  close (c->err);
  g_string_free (c->out_text, TRUE);
  g_string_free (c->err_text, TRUE);
  g_clear_object (&c->proc);
}

/* Ctrl-C mid-reply: the reply stops ("stop: cancelled"), the prompt comes back, the next
 * line is answered, and end of input ends the session with status 0. */
static void
test_sigint_stops_reply (Chat *c, gconstpointer data)
{
  if (c->proc == NULL)
    return;
  reply_blocked (c, "Once upon a time\n");
  const gsize reply_start = 2;
  interrupt (c);
  /* the prompt again, after the stopped reply */
  const gsize prompt2 = out_wait_for (c, "\n> ", reply_start);
  err_wait_for (c, "stop: cancelled]");
  g_assert_nonnull (strstr (c->err_text->str, "stopping the reply"));
  /* a reply of 3000 tokens is far longer than what came before the prompt: it was cut */
  g_test_message ("stopped reply: %" G_GSIZE_FORMAT " bytes", prompt2 - reply_start);
  g_assert_cmpuint (prompt2 - reply_start, >=, 4096 - 64);

  /* the session goes on: the next line gets a reply, then the prompt */
  type_line (c, "The cat\n");
  out_wait_for (c, "\n> ", prompt2 + 3);
  type_line (c, "\x04");   /* Ctrl-D: end of input */
  g_assert_cmpint (chat_wait_exit (c), ==, 0);
  /* only the first reply was stopped */
  const char *first = strstr (c->err_text->str, "stop: cancelled]");
  g_assert_null (strstr (first + 1, "stop: cancelled]"));
}

/* Ctrl-C at the prompt ends the session: status 130, the process exits (not killed). */
static void
test_sigint_at_prompt (Chat *c, gconstpointer data)
{
  if (c->proc == NULL)
    return;
  interrupt (c);
  g_assert_cmpint (chat_wait_exit (c), ==, 130);
  g_assert_true (g_str_has_suffix (c->out_text->str, "> \n"));
}

/* Two Ctrl-C during one reply end the session with status 130: the second one quits at
 * once while the reply has not stopped yet ("interrupted", no prompt again), or, when the
 * reply already stopped in between (a race the test cannot exclude: seen once in a full
 * run on a loaded machine), it is a Ctrl-C at the prompt (the prompt, then the end). */
static void
test_sigint_twice (Chat *c, gconstpointer data)
{
  if (c->proc == NULL)
    return;
  reply_blocked (c, "Once upon a time\n");
  interrupt (c);
  err_wait_for (c, "stopping the reply");
  interrupt (c);
  g_assert_cmpint (chat_wait_exit (c), ==, 130);
  if (strstr (c->err_text->str, "hanzo chat: interrupted") != NULL)
    g_assert_null (strstr (c->out_text->str, "\n> "));   /* quit inside the reply */
  else
    g_assert_true (g_str_has_suffix (c->out_text->str, "> \n"));   /* quit at the prompt */
}

static void
close_stdin (gpointer user_data)
{
  close (STDIN_FILENO);
}

/* `hanzo chat <&-`: a closed stdin is end of input (exit 0 at once), not a wait on whatever
 * descriptor took number 0 (GLib's wakeup eventfd did: it hung until killed). */
static void
test_stdin_closed (void)
{
  g_autofree char *model = hz_test_shared_path ("models/stories260K.gguf");
  if (model == NULL)
    {
      g_test_skip ("../shared/models/stories260K.gguf is absent");
      return;
    }
  g_autofree char *bin = hz_cli_bin ();
  g_autoptr (GSubprocessLauncher) l = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE
                                                                 | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_set_child_setup (l, close_stdin, NULL, NULL);
  GError *error = NULL;
  g_autoptr (GSubprocess) p = g_subprocess_launcher_spawn (l, &error, bin, "chat", "-m", model,
                                                           "-n", "8", NULL);
  g_assert_no_error (error);
  /* a hang fails by the test's meson timeout */
  g_autofree char *out = NULL, *err = NULL;
  g_assert_true (g_subprocess_communicate_utf8 (p, NULL, NULL, &out, &err, &error));
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (p));
  g_assert_cmpint (g_subprocess_get_exit_status (p), ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/hanzo-chat/stdin-closed", test_stdin_closed);
  g_test_add ("/hanzo-chat/sigint-stops-reply", Chat, NULL, chat_setup, test_sigint_stops_reply,
              chat_teardown);
  g_test_add ("/hanzo-chat/sigint-at-prompt", Chat, NULL, chat_setup, test_sigint_at_prompt,
              chat_teardown);
  g_test_add ("/hanzo-chat/sigint-twice", Chat, NULL, chat_setup, test_sigint_twice,
              chat_teardown);
  return g_test_run ();
}
