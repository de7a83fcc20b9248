/* test-ui-thinking.c — a thinking model in the real app, under Xvfb (issue 23 item 2).
 * The model (tests/thinking-model.h) has Qwen3's vocabulary and Qwen3's own template, and
 * answers every message with "<think>Let me think</think>\n\nHello!" (a scripted model,
 * token by token, slowed down by HZ_WORKER_TOKEN_DELAY_US so the thinking can be seen):
 *  - while it thinks, the reply shows an open "Thinking…" section streaming the
 *    reasoning, and no answer yet;
 *  - once the answer starts the section folds, titled "Reasoning", above the answer
 *    "Hello!"; the store holds the answer as the message's content and the reasoning
 *    apart (HzMessage.reasoning);
 *  - the next prompt leaves the reasoning out: the second reply's prompt has exactly the
 *    tokens of the conversation rendered with the answer alone;
 *  - after a restart the reply comes back with its reasoning folded.
 * Again with Qwen2.5's template on the same vocabulary (a template that would keep the
 * reasoning of an earlier turn in the prompt: its tokens would be more).
 * Screenshots go to <build>/tests/ui/artifacts/.
 */
#include <hanzo/engine.h>
#include <hanzo-store.h>
#include <string.h>

#include "hz-message-item.h"
#include "hz-message-row.h"
#include "jinja.h"
#include "thinking-model.h"
#include "ui-test-util.h"

#define QUESTION   "Hi there"
#define FOLLOW_UP  "And now?"
#define REASONING  "Let me think"
#define ANSWER     "Hello!"
#define RAW_REPLY  "<think>" REASONING "</think>\n\n" ANSWER

static const char *const script[] = { "<think>", "Let", " me", " think", "</think>", "\n\n",
                                      "Hello", "!", NULL };

typedef struct {
  const char *name;        /* of the case: screenshots, model file */
  const char *tmpl;        /* template file under the source tree or the shared data */
  char       *model;       /* path of the scripted model */
  GArray     *n_prompt;    /* guint: the prompt tokens of each finished reply */
  HzWindow   *window;
} Case;

/* ------------------------------------------------------------------ the reply's row */

static HzMessageItem *
reply_item (HzWindow *window, guint index)
{
  GListModel *msgs = hz_window_get_messages (window);
  return index < g_list_model_get_n_items (msgs) ? g_list_model_get_item (msgs, index) : NULL;
}

static gboolean
is_row_of (GtkWidget *w, gconstpointer item)
{
  return HZ_IS_MESSAGE_ROW (w) && hz_message_row_get_item (HZ_MESSAGE_ROW (w)) == item &&
         hz_message_row_get_built (HZ_MESSAGE_ROW (w));
}

static gboolean
is_expander (GtkWidget *w, gconstpointer data)
{
  return GTK_IS_EXPANDER (w);
}

/* The reasoning section of message `index`'s row, or NULL while it is not built. */
static GtkExpander *
reasoning_section (HzWindow *window, guint index)
{
  g_autoptr(HzMessageItem) item = reply_item (window, index);
  GtkWidget *row = item ? hz_ui_find_widget (GTK_WIDGET (hz_window_get_message_list (window)),
                                             is_row_of, item) : NULL;
  return row ? GTK_EXPANDER (hz_ui_find_widget (row, is_expander, NULL)) : NULL;
}

static const char *
section_text (GtkExpander *e)
{
  return gtk_label_get_text (GTK_LABEL (gtk_expander_get_child (e)));
}

/* The model is thinking: the reply has reasoning and no answer yet, and its row shows it. */
static gboolean
thinking_shown (gpointer data)
{
  HzWindow *window = data;
  g_autoptr(HzMessageItem) item = reply_item (window, 1);
  GtkExpander *e = reasoning_section (window, 1);
  return item && *hz_message_item_get_reasoning (item) && !*hz_message_item_get_text (item) &&
         e && gtk_widget_get_visible (GTK_WIDGET (e));
}

/* A finished reply at `index`: its reasoning folded above its answer. */
static void
check_folded (HzWindow *window, guint index)
{
  g_autoptr(HzMessageItem) item = reply_item (window, index);
  g_assert_nonnull (item);
  g_assert_false (hz_message_item_get_streaming (item));
  g_assert_cmpstr (hz_message_item_get_text (item), ==, ANSWER);
  g_assert_cmpstr (hz_message_item_get_reasoning (item), ==, REASONING);
  GtkExpander *e = reasoning_section (window, index);
  g_assert_nonnull (e);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (e)));
  g_assert_false (gtk_expander_get_expanded (e));
  g_assert_cmpstr (gtk_expander_get_label (e), ==, "Reasoning");
  g_assert_cmpstr (section_text (e), ==, REASONING);
}

/* ------------------------------------------------------------------ the prompts */

static void
on_finished (HzEngineWorker *worker, guint request, const char *text, gpointer stats,
             Case *c)
{
  guint n = ((const HzGenerateStats *) stats)->n_prompt;
  g_array_append_val (c->n_prompt, n);
}

/* Tokens of the conversation [question, reply, follow-up] with the generation prompt, as
 * the engine renders it (hz_model_fit_chat, the model's template). */
static gsize
engine_prompt_tokens (HzModel *m, const char *reply)
{
  const HzChatMessage msgs[] = { { "user", QUESTION }, { "assistant", reply },
                                 { "user", FOLLOW_UP } };
  HzChatFit fit;
  g_autoptr(GError) error = NULL;
  g_autofree HzToken *t = hz_model_fit_chat (m, msgs, 3, 4096, 0, &fit, &error);
  g_assert_no_error (error);
  return fit.n_tokens;
}

/* Tokens of the same conversation rendered by the template alone, the reply as the model
 * wrote it (what a prompt that kept the reasoning would hold). */
static gsize
template_prompt_tokens (HzModel *m, const char *tmpl_src)
{
  g_autoptr(HzJinjaTemplate) t = hz_jinja_template_new (tmpl_src, -1, NULL);
  g_autoptr(JsonParser) p = json_parser_new ();
  g_assert_true (json_parser_load_from_data (p,
    "{\"messages\": [{\"role\": \"user\", \"content\": \"" QUESTION "\"}, {\"role\": "
    "\"assistant\", \"content\": \"<think>" REASONING "</think>\\n\\n" ANSWER "\"}, {\"role\": "
    "\"user\", \"content\": \"" FOLLOW_UP "\"}], \"add_generation_prompt\": true}", -1, NULL));
  g_autofree char *text = hz_jinja_template_render (t, json_node_get_object (
                                                      json_parser_get_root (p)), NULL, NULL,
                                                    NULL);
  g_assert_nonnull (text);
  gsize n = 0;
  g_autofree HzToken *ids = hz_model_tokenize (m, text, -1, TRUE, TRUE, &n);
  return n;
}

/* ------------------------------------------------------------------ the scripts */

static void
script_chat (HzApplication *app, HzWindow *window, gpointer data)
{
  Case *c = data;
  g_assert_true (hz_ui_wait_for (hz_ui_model_ready, window, 60));
  gulong h = g_signal_connect (hz_application_get_worker (app), "finished",
                               G_CALLBACK (on_finished), c);

  hz_ui_type_and_send (window, QUESTION);
  /* thinking: an open "Thinking…" section streams the reasoning; no answer yet */
  g_assert_true (hz_ui_wait_for (thinking_shown, window, 60));
  GtkExpander *e = reasoning_section (window, 1);
  g_assert_true (gtk_expander_get_expanded (e));
  g_assert_cmpstr (gtk_expander_get_label (e), ==, "Thinking…");
  g_assert_true (g_str_has_prefix (REASONING, section_text (e)));
  g_autofree char *name1 = g_strdup_printf ("thinking-%s-streaming", c->name);
  g_autofree char *shot1 = hz_ui_screenshot (GTK_WIDGET (window), name1);

  /* answered: the section folded above the answer */
  g_assert_true (hz_ui_wait_for (hz_ui_reply_done, window, 60));
  hz_ui_spin (0.2);
  check_folded (window, 1);
  g_autofree char *name2 = g_strdup_printf ("thinking-%s-folded", c->name);
  g_autofree char *shot2 = hz_ui_screenshot (GTK_WIDGET (window), name2);

  /* the store: the answer as the content, the reasoning apart */
  g_autoptr(GError) error = NULL;
  HzStore *store = hz_application_get_store (app);
  g_autoptr(GPtrArray) convs = hz_store_list_conversations (store, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (convs->len, ==, 1);
  g_autoptr(GPtrArray) msgs = hz_store_list_messages (store,
                                                      ((HzConversation *) convs->pdata[0])->id,
                                                      &error);
  g_assert_cmpuint (msgs->len, ==, 2);
  g_assert_cmpstr (((HzMessage *) msgs->pdata[1])->content, ==, ANSWER);
  g_assert_cmpstr (((HzMessage *) msgs->pdata[1])->reasoning, ==, REASONING);

  /* the next prompt: the earlier reply without its reasoning */
  hz_ui_type_and_send (window, FOLLOW_UP);
  g_assert_true (hz_ui_wait_for (hz_ui_reply_done, window, 60));
  check_folded (window, 3);
  g_signal_handler_disconnect (hz_application_get_worker (app), h);
  g_assert_cmpuint (c->n_prompt->len, ==, 2);
  c->window = window;
}

static void
script_restart (HzApplication *app, HzWindow *window, gpointer data)
{
  g_assert_true (hz_ui_wait_for (hz_ui_model_ready, window, 60));
  hz_ui_click_conversation (window, 0);
  GListModel *msgs = hz_window_get_messages (window);
  gboolean loaded = FALSE;
  for (gint64 end = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
       !loaded && g_get_monotonic_time () < end; hz_ui_spin (0.05))
    loaded = g_list_model_get_n_items (msgs) == 4 && reasoning_section (window, 1) != NULL &&
             reasoning_section (window, 3) != NULL;
  g_assert_true (loaded);
  check_folded (window, 1);
  check_folded (window, 3);
  g_autofree char *shot = hz_ui_screenshot (GTK_WIDGET (window), "thinking-restarted");
}

/* ------------------------------------------------------------------ the cases */

static void
test_thinking (gconstpointer data)
{
  Case c = *(const Case *) data;
  g_autofree char *src = hz_test_source_file (c.tmpl);
  c.model = hz_scripted_model_write (hz_ui_tmpdir, c.name, src, "\n", script);
  if (c.model == NULL)
    return;
  c.n_prompt = g_array_new (FALSE, FALSE, sizeof (guint));
  /* a fresh store for each case */
  g_autofree char *db = hz_store_default_path ();
  g_autofree char *wal = g_strconcat (db, "-wal", NULL), *shm = g_strconcat (db, "-shm", NULL);
  g_unlink (db);
  g_unlink (wal);
  g_unlink (shm);

  const char *args[] = { "--model", c.model, NULL };
  hz_ui_run_app (args, script_chat, &c);

  HzModelParams mp;
  hz_model_params_init (&mp);
  mp.vocab_only = TRUE;
  g_autoptr(GError) error = NULL;
  g_autoptr(HzModel) m = hz_model_load (c.model, &mp, &error);
  g_assert_no_error (error);
  const gsize want = engine_prompt_tokens (m, ANSWER);
  const gsize kept = template_prompt_tokens (m, src);
  const guint got = g_array_index (c.n_prompt, guint, 1);
  g_test_message ("%s: the second prompt has %u tokens; the conversation with the answer "
                  "alone %" G_GSIZE_FORMAT "; the template's own rendering of the reply as "
                  "written %" G_GSIZE_FORMAT, c.name, got, want, kept);
  g_assert_cmpuint (got, ==, want);
  /* the engine's rendering of the raw reply is the same: the reasoning is left out */
  g_assert_cmpuint (engine_prompt_tokens (m, RAW_REPLY), ==, want);
  if (strstr (c.tmpl, "Qwen2.5"))
    g_assert_cmpuint (kept, >, want);   /* this template would have kept it */
  else
    g_assert_cmpuint (kept, ==, want);  /* Qwen3's leaves it out too */

  if (strstr (c.tmpl, "Qwen3"))
    hz_ui_run_app (args, script_restart, NULL);
  g_array_unref (c.n_prompt);
  g_unlink (c.model);
  g_free (c.model);
}

int
main (int argc, char **argv)
{
  hz_ui_test_init ();
  /* slow enough to see the model think (9 tokens a reply) */
  g_setenv ("HZ_WORKER_TOKEN_DELAY_US", "150000", TRUE);
  gtk_test_init (&argc, &argv, NULL);
  static const Case qwen3 = { "qwen3", QWEN3_TEMPLATE };
  g_test_add_data_func ("/ui/thinking/qwen3", &qwen3, test_thinking);
  g_autofree char *q25 = NULL;
  const char *shared = g_getenv ("HZ_SHARED_DIR");
  /* Qwen2.5's template (shared data) on Qwen3's vocabulary: a fine-tune's older template */
  static Case chatml = { "qwen25-template", NULL };
  if (shared)
    {
      q25 = g_build_filename (shared, "chat-templates", "templates",
                              "Qwen-Qwen2.5-7B-Instruct.jinja", NULL);
      chatml.tmpl = q25;
      g_test_add_data_func ("/ui/thinking/qwen25-template", &chatml, test_thinking);
    }
  int rc = g_test_run ();
  hz_ui_test_cleanup ();
  return rc;
}
