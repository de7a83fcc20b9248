/* tools/hanzo-chat.c — `hanzo chat`: interactive conversation on stdin/stdout.
 *
 *   hanzo chat -m MODEL [--system TEXT] [--stats] [-n N] [--temp T ...] [--threads N]
 *              [--ctx-size N]
 *
 * Each line read from stdin is a user message. The conversation is rendered with the
 * model's own chat template (hz_model_render_chat: its tokenizer.chat_template through the
 * Jinja2 interpreter, or a built-in format for a GGUF without one; what was typed is
 * content, never control tokens; a template that does not parse ends the session, one
 * that refuses a conversation leaves that line unanswered with its message) and generated from; the KV cache keeps the common prefix, so only the new turn is
 * evaluated. Models without a template (base models such as stories260K) run as plain
 * completion: the lines and replies are concatenated. When the conversation outgrows the
 * context, the system prompt and the newest whole turns that fit are kept, leaving room
 * for the reply (-n, at most half the context; hz_model_fit_chat), and stderr says once
 * that earlier messages are beyond what the model sees; every line is answered. Only a
 * line longer than the context on its own is refused (stderr says so; it is left out of the
 * conversation and the next line is answered). Lines "/reset" (forget the conversation)
 * and "/exit" are commands. The reply streams as it is generated (a thinking model's
 * reasoning too, with its markers; it stays out of the next prompts); statistics go to stderr
 * (at a terminal, or with --stats).
 *
 * Ctrl-C (SIGINT), as in llama.cpp's interactive mode: during a reply it stops the reply
 * (within one token, or during the prompt's evaluation) and the prompt comes back; what was
 * generated so far stays in the conversation. A second Ctrl-C before the reply has stopped,
 * or a Ctrl-C while waiting for a line, ends the session (exit status 130 = 128 + SIGINT,
 * as a shell reports a process interrupted by Ctrl-C).
 * Exit status: 0 at end of input (or /exit), 1 runtime error or a line too long for the
 * context (after the other lines were answered), 2 usage error, 130 Ctrl-C.
 */
#include <gio/gio.h>
#include <gio/gunixinputstream.h>
#include <glib-unix.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "hanzo-cli-util.h"
#include "hanzo-cmd.h"
#include "hanzo-gen-common.h"
#include "model-private.h"

/* exit status after Ctrl-C: 128 + SIGINT */
#define CHAT_EXIT_INTERRUPTED (128 + SIGINT)

static gboolean
print_token (HzToken token, const char *text, gpointer user_data)
{
  fputs (text, stdout);
  fflush (stdout);
  return TRUE;
}

/* ---- Ctrl-C ----
 * SIGINT is taken by a GLib unix signal source (g_unix_signal_source_new) on a main loop of
 * its own thread, since the main thread is blocked either in the stdin read or in
 * hz_context_generate. Its callback runs in that thread (not in a signal handler), so it may
 * cancel GCancellables: `reply` stops hz_context_generate, `session` wakes the line read
 * (a GUnixInputStream polls its descriptor together with the cancellable's). */
typedef struct {
  GMutex        lock;
  GCancellable *session;  /* cancelled: Ctrl-C at the prompt ends the session */
  GCancellable *reply;    /* the reply being generated; NULL while waiting for a line */
  GMainContext *context;
  GMainLoop    *loop;
  GSource      *source;
  GThread      *thread;
} ChatInterrupt;

static gboolean
on_sigint (gpointer user_data)
{
  ChatInterrupt *ci = user_data;
  g_mutex_lock (&ci->lock);
  if (ci->reply == NULL)
    g_cancellable_cancel (ci->session);
  else if (!g_cancellable_is_cancelled (ci->reply))
    {
      g_cancellable_cancel (ci->reply);
      fputs ("\nhanzo chat: stopping the reply (Ctrl+C again quits)\n", stderr);
    }
  else
    {
      /* the second Ctrl-C while the first has not stopped the reply yet: quit now (the
       * main thread is busy in the engine; _exit skips stdio and atexit, which that
       * thread may be using) */
      static const char msg[] = "\nhanzo chat: interrupted\n";
      if (write (STDERR_FILENO, msg, sizeof msg - 1) < 0)
        { /* nothing left to report to */ }
      _exit (CHAT_EXIT_INTERRUPTED);
    }
  g_mutex_unlock (&ci->lock);
  return G_SOURCE_CONTINUE;
}

static gpointer
interrupt_thread (gpointer user_data)
{
  ChatInterrupt *ci = user_data;
  g_main_context_push_thread_default (ci->context);
  g_main_loop_run (ci->loop);
  g_main_context_pop_thread_default (ci->context);
  return NULL;
}

/* Takes SIGINT from now on (until interrupt_stop). */
static void
interrupt_start (ChatInterrupt *ci)
{
  g_mutex_init (&ci->lock);
  ci->session = g_cancellable_new ();
  ci->reply = NULL;
  ci->context = g_main_context_new ();
  ci->loop = g_main_loop_new (ci->context, FALSE);
  ci->source = g_unix_signal_source_new (SIGINT);
  g_source_set_callback (ci->source, on_sigint, ci, NULL);
  g_source_attach (ci->source, ci->context);
  ci->thread = g_thread_new ("chat-sigint", interrupt_thread, ci);
}

/* A reply begins (`reply`: the cancellable it is generated with) or ends (NULL). */
static void
interrupt_set_reply (ChatInterrupt *ci, GCancellable *reply)
{
  g_mutex_lock (&ci->lock);
  g_set_object (&ci->reply, reply);
  g_mutex_unlock (&ci->lock);
}

static gboolean
quit_loop (gpointer loop)
{
  g_main_loop_quit (loop);
  return G_SOURCE_REMOVE;
}

static void
interrupt_stop (ChatInterrupt *ci)
{
  /* quit from inside the loop: a g_main_loop_quit() before the thread has entered
   * g_main_loop_run() would be lost */
  GSource *idle = g_idle_source_new ();
  g_source_set_callback (idle, quit_loop, ci->loop, NULL);
  g_source_attach (idle, ci->context);
  g_source_unref (idle);
  g_thread_join (ci->thread);
  g_source_destroy (ci->source);   /* SIGINT gets its default action back */
  g_source_unref (ci->source);
  g_main_loop_unref (ci->loop);
  g_main_context_unref (ci->context);
  g_clear_object (&ci->reply);
  g_clear_object (&ci->session);
  g_mutex_clear (&ci->lock);
}

typedef struct {
  GPtrArray *roles;     /* static strings */
  GPtrArray *contents;  /* owned */
} Conversation;

static void
conv_add (Conversation *c, const char *role, const char *content)
{
  g_ptr_array_add (c->roles, (gpointer) role);
  g_ptr_array_add (c->contents, g_strdup (content));
}

/* Drops the last message (a user turn whose reply was stopped before its first token). */
static void
conv_pop (Conversation *c)
{
  g_ptr_array_set_size (c->roles, c->roles->len - 1);
  g_ptr_array_set_size (c->contents, c->contents->len - 1);
}

/* Forget the conversation (keeping the system prompt). */
static void
conv_reset (Conversation *c, const char *system, gboolean chat)
{
  g_ptr_array_set_size (c->roles, 0);
  g_ptr_array_set_size (c->contents, 0);
  if (system && chat)
    conv_add (c, "system", system);
}

/* The prompt for the conversation's last line: the newest turns that fit the context with
 * room for the reply (hz_model_fit_chat). */
static HzToken *
conv_fit (const Conversation *c, HzModel *model, HzContext *ctx,
          const HzGenerateParams *gp, HzChatFit *fit, GError **error)
{
  g_autofree HzChatMessage *msgs = g_new0 (HzChatMessage, c->roles->len + 1);
  for (guint i = 0; i < c->roles->len; i++)
    {
      msgs[i].role = c->roles->pdata[i];
      msgs[i].content = c->contents->pdata[i];
    }
  const guint reserve = gp->n_predict >= 0 ? (guint) gp->n_predict : G_MAXUINT;
  return hz_model_fit_chat (model, msgs, c->roles->len, hz_context_n_ctx (ctx), reserve, fit,
                            error);
}

int
hz_cmd_chat (int argc, char **argv)
{
  HzGenOpts o;
  g_autofree char *system = NULL;
  gboolean stats = FALSE;
  g_autoptr (GError) error = NULL;

  hz_gen_opts_init (&o, 512);
  const GOptionEntry entries[] = {
    { "system", 0, 0, G_OPTION_ARG_FILENAME, &system, "System prompt (UTF-8)", "TEXT" },
    { "stats", 0, 0, G_OPTION_ARG_NONE, &stats,
      "After every reply, its statistics on stderr (also when stdin is not a terminal)", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) octx = g_option_context_new ("— chat with a model on stdin/stdout");
  g_option_context_add_main_entries (octx, entries, NULL);
  hz_gen_opts_add (octx, &o, HZ_GEN_OPT_SAMPLING);
  if (!g_option_context_parse (octx, &argc, &argv, &error))
    {
      hz_cli_print_error ("chat", error->message);
      hz_gen_opts_clear (&o);
      return 2;
    }
  if (o.model == NULL || argc != 1)
    {
      fprintf (stderr, "hanzo chat: need -m MODEL\nUsage: hanzo chat -m MODEL [--system TEXT] ...\n");
      hz_gen_opts_clear (&o);
      return 2;
    }
  gsize system_len = system ? strlen (system) : 0;
  char *valid_system = system ? hz_cli_utf8_repair ("chat", "--system", system, system_len,
                                                    &system_len) : NULL;
  if (valid_system)
    {
      g_free (system);
      system = valid_system;
    }
  if (!hz_gen_opts_check (&o, "chat", HZ_GEN_OPT_SAMPLING))
    {
      hz_gen_opts_clear (&o);
      return 2;
    }
  g_autoptr (HzModel) model = NULL;
  g_autoptr (HzContext) ctx = NULL;
  HzGenerateParams gp;
  if (!hz_gen_opts_open (&o, "chat", &model, &ctx, &gp))
    return 1;
  /* a thinking model's reasoning markers are in the reply as written (harmony's are
   * control tokens); the next prompt leaves the reasoning out (hz_model_render_chat) */
  gp.special = hz_model_reasoning_special (model);

  const GError *parse_error = NULL;
  const gboolean own = hz_model_get_chat_jinja (model, &parse_error) != NULL;
  if (parse_error)
    {
      fprintf (stderr, "hanzo chat: the chat template of %s does not parse: %s\n",
               hz_model_name (model), parse_error->message);
      return 1;
    }
  const gboolean chat = hz_model_is_chat (model);
  const gboolean interactive = isatty (STDIN_FILENO);
  Conversation conv = { g_ptr_array_new (), g_ptr_array_new_with_free_func (g_free) };
  conv_reset (&conv, system, chat);
  gboolean told_dropped = FALSE;   /* the notice about earlier messages, once */
  gboolean refused = FALSE;        /* a line was too long for the context */
  if (interactive)
    fprintf (stderr, "hanzo chat: %s, template %s, context %u tokens. "
                     "/reset clears, Ctrl+C stops a reply, /exit or Ctrl+D quits.\n",
             hz_model_name (model),
             own ? "its own" : hz_chat_template_name (hz_model_chat_template (model)),
             hz_context_n_ctx (ctx));

  int status = 0;
  /* stdin through GIO, so that Ctrl-C at the prompt can cancel the read (NUL bytes are
   * kept: a line is all bytes up to "\n") */
  g_autoptr (GInputStream) in_raw = g_unix_input_stream_new (STDIN_FILENO, FALSE);
  g_autoptr (GDataInputStream) in = g_data_input_stream_new (in_raw);
  g_data_input_stream_set_newline_type (in, G_DATA_STREAM_NEWLINE_TYPE_LF);
  ChatInterrupt ci;
  interrupt_start (&ci);
  for (;;)
    {
      if (interactive)
        {
          fputs ("> ", stdout);
          fflush (stdout);
        }
      gsize len = 0;
      g_autofree char *line = g_data_input_stream_read_line (in, &len, ci.session, &error);
      if (line == NULL)
        {
          if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
            {
              fputc ('\n', stdout);   /* the shell's prompt on a line of its own */
              status = CHAT_EXIT_INTERRUPTED;
            }
          else if (error)
            {
              fprintf (stderr, "hanzo chat: reading stdin: %s\n", error->message);
              status = 1;
            }
          break;   /* no error: end of input */
        }
      while (len > 0 && line[len - 1] == '\r')
        line[--len] = '\0';
      if (strcmp (line, "/exit") == 0)
        break;
      if (strcmp (line, "/reset") == 0)
        {
          conv_reset (&conv, system, chat);
          told_dropped = FALSE;
          continue;
        }
      if (len == 0)
        continue;
      /* like `hanzo redact`: the line goes on with U+FFFD for bytes that are not UTF-8
       * (or NUL), which the templates and tokenizers expect */
      gsize valid_len = 0;
      g_autofree char *valid = hz_cli_utf8_repair ("chat", "the line", line, len, &valid_len);

      conv_add (&conv, "user", valid ? valid : line);
      HzChatFit fit;
      g_autofree HzToken *ids = conv_fit (&conv, model, ctx, &gp, &fit, &error);
      if (ids == NULL)
        {
          /* this line alone does not fit: say so, leave it out, answer the next one */
          fprintf (stderr, "hanzo chat: %s; the line was not answered\n", error->message);
          g_clear_error (&error);
          conv_pop (&conv);
          refused = TRUE;
          continue;
        }
      if (fit.n_dropped > 0 && !told_dropped)
        {
          fprintf (stderr, "hanzo chat: earlier messages are beyond what the model can see "
                           "(its context holds %u tokens); the newest turns that fit are kept\n",
                   hz_context_n_ctx (ctx));
          told_dropped = TRUE;
        }
      const gsize n = fit.n_tokens;
      HzGenerateStats st;
      g_autoptr (GCancellable) stop = g_cancellable_new ();
      interrupt_set_reply (&ci, stop);
      if (g_cancellable_is_cancelled (ci.session))
        {
          /* Ctrl-C came after the line was read but before the reply began: as at the
           * prompt */
          interrupt_set_reply (&ci, NULL);
          fputc ('\n', stdout);
          status = CHAT_EXIT_INTERRUPTED;
          break;
        }
      g_autofree char *reply = hz_context_generate (ctx, ids, n, &gp, print_token, NULL, stop,
                                                    NULL, &st, &error);
      interrupt_set_reply (&ci, NULL);
      fputc ('\n', stdout);
      if (reply == NULL)
        {
          hz_cli_print_error ("chat", error->message);
          status = 1;
          break;
        }
      /* a reply stopped by Ctrl-C keeps what was shown; one stopped before any text
       * takes its question back with it */
      if (st.stop_reason == HZ_STOP_CANCELLED && reply[0] == '\0')
        conv_pop (&conv);
      else
        conv_add (&conv, "assistant", reply);
      if (interactive || stats || st.stop_reason == HZ_STOP_CANCELLED)
        fprintf (stderr, "[prompt %u tokens, %" G_GSIZE_FORMAT " earlier messages left out; "
                         "%u tokens, %.1f t/s, stop: %s]\n", st.n_prompt, fit.n_dropped,
                 st.n_generated, st.gen_seconds > 0 ? st.n_generated / st.gen_seconds : 0.0,
                 hz_stop_reason_name (st.stop_reason));
    }
  interrupt_stop (&ci);
  g_ptr_array_unref (conv.roles);
  g_ptr_array_unref (conv.contents);
  return status == 0 && refused ? 1 : status;
}
