/* tools/hanzo-chat.c — `hanzo chat`: interactive conversation on stdin/stdout.
 *
 *   hanzo chat -m MODEL [--system TEXT] [-n N] [--temp T ...] [--threads N] [--ctx-size N]
 *
 * Each line read from stdin is a user message. The whole conversation is rendered with the
 * model's chat template (hz_model_chat_template / hz_chat_template_apply) and generated
 * from; the KV cache keeps the common prefix, so only the new turn is evaluated. Models
 * without a template (base models such as stories260K) run as plain completion: the lines
 * and replies are concatenated. Lines "/reset" (forget the conversation) and "/exit" are
 * commands. The reply streams as it is generated; statistics go to stderr.
 * Exit status: 0 at end of input, 1 runtime error, 2 usage error.
 */
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "hanzo-cmd.h"
#include "hanzo-gen-common.h"

static gboolean
print_token (HzToken token, const char *text, gpointer user_data)
{
  fputs (text, stdout);
  fflush (stdout);
  return TRUE;
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

static char *
conv_render (const Conversation *c, HzChatTemplate tmpl)
{
  g_autofree HzChatMessage *msgs = g_new0 (HzChatMessage, c->roles->len + 1);
  for (guint i = 0; i < c->roles->len; i++)
    {
      msgs[i].role = c->roles->pdata[i];
      msgs[i].content = c->contents->pdata[i];
    }
  return hz_chat_template_apply (tmpl, msgs, c->roles->len, TRUE);
}

int
hz_cmd_chat (int argc, char **argv)
{
  HzGenOpts o;
  g_autofree char *system = NULL;
  g_autoptr (GError) error = NULL;

  hz_gen_opts_init (&o, 512);
  const GOptionEntry entries[] = {
    { "system", 0, 0, G_OPTION_ARG_FILENAME, &system, "System prompt (UTF-8)", "TEXT" },
    { NULL }
  };
  g_autoptr (GOptionContext) octx = g_option_context_new ("— chat with a model on stdin/stdout");
  g_option_context_add_main_entries (octx, entries, NULL);
  hz_gen_opts_add (octx, &o, HZ_GEN_OPT_SAMPLING);
  if (!g_option_context_parse (octx, &argc, &argv, &error))
    {
      fprintf (stderr, "hanzo chat: %s\n", error->message);
      hz_gen_opts_clear (&o);
      return 2;
    }
  if (o.model == NULL || argc != 1)
    {
      fprintf (stderr, "hanzo chat: need -m MODEL\nUsage: hanzo chat -m MODEL [--system TEXT] ...\n");
      hz_gen_opts_clear (&o);
      return 2;
    }
  if (!hz_cli_check_utf8 ("chat", "--system", system) ||
      !hz_gen_opts_check (&o, "chat", HZ_GEN_OPT_SAMPLING))
    {
      hz_gen_opts_clear (&o);
      return 2;
    }
  g_autoptr (HzModel) model = NULL;
  g_autoptr (HzContext) ctx = NULL;
  HzGenerateParams gp;
  if (!hz_gen_opts_open (&o, "chat", &model, &ctx, &gp))
    return 1;

  const HzChatTemplate tmpl = hz_model_chat_template (model);
  const gboolean interactive = isatty (STDIN_FILENO);
  Conversation conv = { g_ptr_array_new (), g_ptr_array_new_with_free_func (g_free) };
  if (system && tmpl != HZ_CHAT_TEMPLATE_NONE)
    conv_add (&conv, "system", system);
  if (interactive)
    fprintf (stderr, "hanzo chat: %s, template %s, context %u tokens. "
                     "/reset clears, /exit or Ctrl+D quits.\n",
             hz_model_name (model), hz_chat_template_name (tmpl), hz_context_n_ctx (ctx));

  int status = 0;
  char *line = NULL;
  size_t cap = 0;
  for (;;)
    {
      if (interactive)
        {
          fputs ("> ", stdout);
          fflush (stdout);
        }
      ssize_t len = getline (&line, &cap, stdin);
      if (len < 0)
        break;
      while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        line[--len] = '\0';
      if (strcmp (line, "/exit") == 0)
        break;
      if (strcmp (line, "/reset") == 0)
        {
          g_ptr_array_set_size (conv.roles, 0);
          g_ptr_array_set_size (conv.contents, 0);
          if (system && tmpl != HZ_CHAT_TEMPLATE_NONE)
            conv_add (&conv, "system", system);
          continue;
        }
      if (len == 0)
        continue;
      /* like `hanzo redact`: the line goes on with U+FFFD for bytes that are not UTF-8
       * (or NUL), which the templates and tokenizers expect */
      gsize valid_len = 0;
      g_autofree char *valid = hz_cli_utf8_repair ("chat", "the line", line, len, &valid_len);

      conv_add (&conv, "user", valid ? valid : line);
      g_autofree char *rendered = conv_render (&conv, tmpl);
      gsize n = 0;
      g_autofree HzToken *ids = hz_model_tokenize (model, rendered, -1, TRUE, TRUE, &n);
      HzGenerateStats st;
      g_autofree char *reply = hz_context_generate (ctx, ids, n, &gp, print_token, NULL, NULL,
                                                    NULL, &st, &error);
      fputc ('\n', stdout);
      if (reply == NULL)
        {
          fprintf (stderr, "hanzo chat: %s\n", error->message);
          if (!g_error_matches (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_CONTEXT_FULL))
            {
              status = 1;
              break;
            }
          /* the conversation outgrew the context: say so and start afresh */
          fprintf (stderr, "hanzo chat: the conversation was reset\n");
          g_clear_error (&error);
          g_ptr_array_set_size (conv.roles, 0);
          g_ptr_array_set_size (conv.contents, 0);
          if (system && tmpl != HZ_CHAT_TEMPLATE_NONE)
            conv_add (&conv, "system", system);
          continue;
        }
      conv_add (&conv, "assistant", reply);
      if (interactive)
        fprintf (stderr, "[%u tokens, %.1f t/s, stop: %s]\n", st.n_generated,
                 st.gen_seconds > 0 ? st.n_generated / st.gen_seconds : 0.0,
                 hz_stop_reason_name (st.stop_reason));
    }
  free (line);
  g_ptr_array_unref (conv.roles);
  g_ptr_array_unref (conv.contents);
  return status;
}
