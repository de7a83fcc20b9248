/* test-ui-privacy.c — the privacy page (app.privacy) in the real app under Xvfb on a store
 * seeded beforehand: counts and size of what is kept; a message's redaction spans
 * highlighted, and another that the app redacted in the background (hz-redact-worker.h)
 * when the window opened; a message written while the page is open goes from "Not
 * redacted yet" to its spans when the background redaction has run (no reopening); a learner run and adapters with Roll Back
 * (shown because a fake ai.hanzo.Desktop.Learner is on the session bus; the click calls Rollback);
 * the egress log row and the epsilon spent; the federation switch off by default, turning
 * it on shows what will be sent and is stored in GSettings; Delete Everything through its
 * confirmation dialog empties the store (conversations, messages, redactions, feedback)
 * and the sidebar, and keeps the privacy ledger. Screenshots: privacy-page,
 * privacy-redaction, privacy-redaction-late, privacy-federation-on, privacy-delete-confirm, privacy-deleted.
 */
#include <hanzo-store.h>
#include <hanzo-store-feedback.h>
#include <hanzo-store-learner.h>
#include <hanzo-store-privacy.h>
#include <hanzo-store-redactions.h>

#include "hz-privacy-window.h"
#include "hz-redact-worker.h"
#include "ui-test-util.h"
#include "fake-learner.h"

static const char redacted_text[] = "Call Ines Okafor at 555-1234 tomorrow";
/* written while the privacy page is open; the address starts at character 16 */
static const char late_text[] = "Please write to mara.quinley@example.org soon";
#define late_email_offset 16

typedef struct {
  gint64       redacted_id, plain_id, rated_id;
  FakeLearner *learner;
} Seed;

static void
fill_store (Seed *seed)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HzStore) store = hz_store_open (NULL, &error);
  g_assert_no_error (error);

  gint64 c1 = hz_store_create_conversation (store, "Phone call", NULL, NULL, &error);
  g_assert_no_error (error);
  seed->redacted_id = hz_store_append_message (store, c1, 0, HZ_ROLE_USER, redacted_text, NULL,
                                               TRUE, &error);
  g_assert_no_error (error);
  seed->rated_id = hz_store_append_message (store, c1, seed->redacted_id, HZ_ROLE_ASSISTANT,
                                            "I will remind you tomorrow.", NULL, TRUE, &error);
  g_assert_no_error (error);
  gint64 c2 = hz_store_create_conversation (store, "Pasta", NULL, NULL, &error);
  g_assert_no_error (error);
  seed->plain_id = hz_store_append_message (store, c2, 0, HZ_ROLE_USER,
                                            "How long do I boil pasta?", NULL, TRUE, &error);
  g_assert_no_error (error);
  hz_store_append_message (store, c2, seed->plain_id, HZ_ROLE_ASSISTANT, "9 to 11 minutes.",
                           NULL, TRUE, &error);
  g_assert_no_error (error);
  g_assert_true (hz_store_set_feedback (store, seed->rated_id, 1, &error));

  /* The redactor's copy: "Ines Okafor" (chars 5..16) and "555-1234" (20..28). */
  g_autoptr(HzMessage) m = hz_store_get_message (store, seed->redacted_id, &error);
  g_assert_no_error (error);
  HzMessageRedaction r = {
    .message_id = seed->redacted_id,
    .redacted = (char *) "Call [PERSON_1] at [PHONE_1] tomorrow",
    .spans_json = (char *) "[{\"start\":5,\"end\":16,\"start_byte\":5,\"end_byte\":16,\"label\":\"PERSON\"},"
                           "{\"start\":20,\"end\":28,\"start_byte\":20,\"end_byte\":28,\"label\":\"PHONE\"}]",
    .n_spans = 2,
    .redactor_version = 1,
    .source_updated_us = m->updated_us,
  };
  g_assert_true (hz_store_put_message_redaction (store, &r, &error));
  g_assert_true (hz_store_vault_add (store, c1, "[PERSON_1]", "PERSON", "Ines Okafor", &error));

  /* A promoted learner run and its adapter. */
  gint64 run = hz_store_learner_run_begin (store, "sft", "", &error);
  g_assert_no_error (error);
  gint64 adapter = hz_store_adapter_add (store, "/tmp/hz-adapter-1", "", run, 1.84, &error);
  g_assert_no_error (error);
  g_assert_true (hz_store_learner_run_update (store, run, HZ_LEARNER_RUN_PROMOTED, 40, 1.52,
                                              2.01, 1.84, adapter, "", &error));
  g_assert_true (hz_store_adapter_set_active (store, adapter, &error));

  /* One DP release in the ledger and its upload in the egress log. */
  double orders[] = { 2.0, 8.0, 32.0 };
  double rdp[] = { 0.5, 2.0, 8.0 };  /* alpha / (2 z^2) with z = 2 */
  HzPrivacyLedgerEntry e = {
    .mechanism = HZ_PRIVACY_MECH_GAUSSIAN_RELEASE, .q = 1, .noise_multiplier = 2,
    .clip_norm = 1, .steps = 1, .n_orders = 3, .orders = orders, .rdp = rdp,
    .epsilon = 2.6, .delta = 1e-6, .release_id = (char *) "release-1", .round_id = 1,
    .payload_sha256 = (char *) "5e2bf57d3f40c4b6df69daf1936cb766f832374b4fc0259a7cbff06e2f70f269",
  };
  g_assert_cmpint (hz_store_add_privacy_ledger_entry (store, &e, &error), >, 0);
  g_assert_no_error (error);
  HzEgressLogEntry log = {
    .direction = HZ_EGRESS_UPLOAD, .endpoint = (char *) "https://fed.example.org/v1/rounds/1/update",
    .bytes = 123456, .payload_sha256 = e.payload_sha256, .epsilon = 2.6,
    .status = HZ_EGRESS_STATUS_OK, .http_status = 200, .release_id = (char *) "release-1",
    .round_id = 1, .attempt = 1,
  };
  g_assert_cmpint (hz_store_add_egress_log (store, &log, &error), >, 0);
  g_assert_no_error (error);
}

static gboolean
privacy_open (gpointer window)
{
  return hz_ui_find_toplevel (HZ_TYPE_PRIVACY_WINDOW, window) != NULL;
}

static gboolean
learner_present (gpointer app)
{
  return hz_learner_is_present (hz_application_get_learner (app));
}

/* The app's background redaction has caught up with the seeded messages. */
static gboolean
redaction_done (gpointer app)
{
  HzRedactWorker *w = hz_redact_worker_get_for_application (app);
  return w != NULL && !hz_redact_worker_is_busy (w);
}

/* The page shows a redaction of the chosen message (the worker's "finished" refreshed it). */
static gboolean
redaction_shown (gpointer privacy)
{
  return g_str_has_suffix (hz_privacy_window_get_redaction_status (privacy), "redacted");
}

static gboolean
rolled_back (gpointer fl)
{
  return fake_learner_count (fl, "Rollback") == 1;
}

static gboolean
dialog_open (gpointer parent)
{
  return hz_ui_find_message_dialog (parent) != NULL;
}

static GtkWidget *
find_first (GtkWidget *root, GType type)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (root, type))
    return root;
  for (GtkWidget *c = gtk_widget_get_first_child (root); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_first (c, type);
      if (found)
        return found;
    }
  return NULL;
}

static gboolean
tag_at (GtkTextBuffer *buffer, int offset)
{
  GtkTextIter it;
  GtkTextTag *tag = gtk_text_tag_table_lookup (gtk_text_buffer_get_tag_table (buffer), "redacted");
  gtk_text_buffer_get_iter_at_offset (buffer, &it, offset);
  return gtk_text_iter_has_tag (&it, tag);
}

static void
script_privacy (HzApplication *app, HzWindow *window, gpointer data)
{
  Seed *seed = data;
  HzStore *store = hz_application_get_store (app);
  g_autoptr(GError) error = NULL;

  g_assert_cmpuint (g_list_model_get_n_items (hz_window_get_conversations (window)), ==, 2);
  g_assert_true (hz_ui_wait_for (learner_present, app, 10));

  g_action_group_activate_action (G_ACTION_GROUP (app), "privacy", NULL);
  g_assert_true (hz_ui_wait_for (privacy_open, window, 5));
  HzPrivacyWindow *privacy = HZ_PRIVACY_WINDOW (hz_ui_find_toplevel (HZ_TYPE_PRIVACY_WINDOW,
                                                                     GTK_WINDOW (window)));

  /* What is kept. */
  guint n_conv = 0, n_msg = 0;
  guint64 bytes = 0;
  hz_privacy_window_get_counts (privacy, &n_conv, &n_msg, &bytes);
  g_assert_cmpuint (n_conv, ==, 2);
  g_assert_cmpuint (n_msg, ==, 4);
  g_assert_cmpuint (bytes, >, 0);

  /* Learner runs, Roll Back (the daemon is there), egress log, epsilon. */
  g_assert_cmpuint (hz_privacy_window_get_n_learner_runs (privacy), ==, 1);
  g_assert_true (hz_privacy_window_get_rollback_visible (privacy));
  g_assert_cmpuint (hz_privacy_window_get_n_egress_rows (privacy), ==, 1);
  g_assert_nonnull (strstr (hz_privacy_window_get_epsilon_text (privacy), "1 release"));

  /* The federation switch is off by default and hides the details. */
  GtkSwitch *fed = hz_privacy_window_get_federation_switch (privacy);
  g_autoptr(GSettings) settings = g_settings_new ("ai.hanzo.Desktop");
  g_assert_false (gtk_switch_get_active (fed));
  g_assert_false (g_settings_get_boolean (settings, "federation-enabled"));
  g_assert_false (hz_privacy_window_get_federation_details_visible (privacy));
  hz_ui_spin (0.3);
  g_autofree char *s1 = hz_ui_screenshot (GTK_WIDGET (privacy), "privacy-page");

  /* Redactions of a chosen message: both spans highlighted, the rest not. */
  g_assert_true (hz_privacy_window_show_message (privacy, seed->redacted_id));
  GtkTextBuffer *buf = hz_privacy_window_get_redaction_buffer (privacy);
  g_assert_true (tag_at (buf, 5));
  g_assert_true (tag_at (buf, 15));
  g_assert_false (tag_at (buf, 16));
  g_assert_true (tag_at (buf, 20));
  g_assert_false (tag_at (buf, 0));
  g_assert_cmpstr (hz_privacy_window_get_redaction_status (privacy), ==, "2 spans redacted");
  hz_ui_spin (0.3);
  g_autofree char *s2 = hz_ui_screenshot (GTK_WIDGET (privacy), "privacy-redaction");
  g_assert_true (hz_ui_wait_for (redaction_done, app, 20));
  g_assert_true (hz_privacy_window_show_message (privacy, seed->plain_id));
  g_assert_cmpstr (hz_privacy_window_get_redaction_status (privacy), ==,
                   "Redacted: nothing personal found");

  /* A message written while the page is open: "Not redacted yet" until the background
   * redaction has run, then its spans, without reopening the page. */
  g_autoptr(HzMessage) plain = hz_store_get_message (store, seed->plain_id, &error);
  g_assert_no_error (error);
  gint64 late_id = hz_store_append_message (store, plain->conversation_id, seed->plain_id, HZ_ROLE_USER,
                                            late_text, NULL, TRUE, &error);
  g_assert_no_error (error);
  hz_privacy_window_reload (privacy);   /* (lists the new message) */
  g_assert_true (hz_privacy_window_show_message (privacy, late_id));
  g_assert_cmpstr (hz_privacy_window_get_redaction_status (privacy), ==, "Not redacted yet");
  g_assert_false (tag_at (buf, late_email_offset));
  hz_redact_worker_notify (G_APPLICATION (app), store);
  g_assert_true (hz_ui_wait_for (redaction_shown, privacy, 20));
  g_assert_true (tag_at (buf, late_email_offset));
  g_assert_false (tag_at (buf, 0));
  g_assert_true (g_str_has_suffix (hz_privacy_window_get_redaction_status (privacy), "redacted"));
  hz_ui_spin (0.3);
  g_autofree char *s2b = hz_ui_screenshot (GTK_WIDGET (privacy), "privacy-redaction-late");

  /* Roll Back calls the daemon. */
  GtkWidget *rollback = NULL;
  {
    /* The button is the group's header suffix: find it by its label. */
    GtkWidget *stack[256];
    int top = 0;
    stack[top++] = GTK_WIDGET (privacy);
    while (top > 0 && rollback == NULL)
      {
        GtkWidget *w = stack[--top];
        if (GTK_IS_BUTTON (w) && g_strcmp0 (gtk_button_get_label (GTK_BUTTON (w)), "_Roll Back") == 0)
          rollback = w;
        for (GtkWidget *c = gtk_widget_get_first_child (w); c && top < 256; c = gtk_widget_get_next_sibling (c))
          stack[top++] = c;
      }
  }
  g_assert_nonnull (rollback);
  g_signal_emit_by_name (rollback, "clicked");
  g_assert_true (hz_ui_wait_for (rolled_back, seed->learner, 5));

  /* Turning federation on stores the choice and explains what will be sent. */
  gtk_switch_set_active (fed, TRUE);
  hz_ui_spin (0.1);
  g_assert_true (g_settings_get_boolean (settings, "federation-enabled"));
  g_assert_true (hz_privacy_window_get_federation_details_visible (privacy));
  g_assert_nonnull (strstr (hz_privacy_window_get_release_epsilon_text (privacy), "noise multiplier 4.5"));
  g_assert_cmpstr (hz_privacy_window_get_credentials_status (privacy), !=, "");
  /* Scroll down to the federation section for the screenshot. */
  GtkWidget *scroller = find_first (GTK_WIDGET (privacy), GTK_TYPE_SCROLLED_WINDOW);
  g_assert_nonnull (scroller);
  GtkAdjustment *adj = gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (scroller));
  hz_ui_spin (0.3);
  gtk_adjustment_set_value (adj, gtk_adjustment_get_upper (adj));
  hz_ui_spin (0.3);
  g_autofree char *s3 = hz_ui_screenshot (GTK_WIDGET (privacy), "privacy-federation-on");
  gtk_adjustment_set_value (adj, 0);
  gtk_switch_set_active (fed, FALSE);
  hz_ui_spin (0.1);
  g_assert_false (g_settings_get_boolean (settings, "federation-enabled"));

  /* Delete everything, through the confirmation dialog. */
  hz_privacy_window_ask_delete_everything (privacy);
  g_assert_true (hz_ui_wait_for (dialog_open, privacy, 5));
  GtkWidget *dialog = hz_ui_find_message_dialog (GTK_WINDOW (privacy));
  hz_ui_spin (0.3);
  g_autofree char *s4 = hz_ui_screenshot (dialog, "privacy-delete-confirm");
  adw_message_dialog_response (ADW_MESSAGE_DIALOG (dialog), "delete");
  hz_ui_spin (0.2);

  hz_privacy_window_get_counts (privacy, &n_conv, &n_msg, &bytes);
  g_assert_cmpuint (n_conv, ==, 0);
  g_assert_cmpuint (n_msg, ==, 0);
  g_autoptr(GPtrArray) convs = hz_store_list_conversations (store, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (convs->len, ==, 0);
  g_autoptr(HzMessageRedaction) red = hz_store_get_message_redaction (store, seed->redacted_id, &error);
  g_assert_null (red);
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_autoptr(GPtrArray) fb = hz_store_list_feedback (store, 0, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (fb->len, ==, 0);
  g_autoptr(GPtrArray) redactions = hz_store_list_message_redactions (store, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (redactions->len, ==, 0);
  g_autoptr(GPtrArray) ledger = hz_store_list_privacy_ledger (store, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (ledger->len, ==, 1);   /* the budget already spent still counts */
  g_assert_cmpuint (g_list_model_get_n_items (hz_window_get_conversations (window)), ==, 0);
  g_autofree char *s5 = hz_ui_screenshot (GTK_WIDGET (privacy), "privacy-deleted");

  gtk_window_destroy (GTK_WINDOW (privacy));
}

static void
test_privacy (void)
{
  Seed seed = { 0 };
  fill_store (&seed);
  seed.learner = fake_learner_start ();
  hz_ui_run_app (NULL, script_privacy, &seed);
  fake_learner_stop (seed.learner);
}

int
main (int argc, char *argv[])
{
  hz_ui_test_init ();
  gtk_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ui/privacy/page-federation-delete-everything", test_privacy);
  int ret = g_test_run ();
  hz_ui_test_cleanup ();
  return ret;
}
