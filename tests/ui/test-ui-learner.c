/* test-ui-learner.c — the learner's presence in the real app under Xvfb, against a fake
 * ai.hanzo.Desktop.Learner exported in this process on the session bus (fake-learner.h, the real
 * learner/ai.hanzo.Desktop.Learner.xml): the sidebar's status row shows State/NextRun and hides
 * when the daemon leaves the bus; "Learn Now" calls LearnNow (progress shown; its error, no
 * model to learn on, in a dialog); the "Never
 * learn" switch sets the NeverLearn property and follows it; a generation (with
 * ../shared/models/stories260K.gguf) is bracketed by Pause and Resume. Screenshots:
 * learner-bar, learner-learning, learner-generating.
 */
#include "hz-learner-bar.h"
#include "hz-message-item.h"
#include "ui-test-util.h"
#include "fake-learner.h"

typedef struct {
  FakeLearner *learner;
  char        *model;     /* NULL: no model, the generation part is skipped */
  HzWindow    *window;
} Ctx;

static gboolean
bar_visible (gpointer window)
{
  return gtk_widget_get_visible (hz_window_get_learner_bar (window));
}

static gboolean
bar_hidden (gpointer window)
{
  return !bar_visible (window);
}

static gboolean
learning (gpointer ctx)
{
  Ctx *c = ctx;
  HzLearnerBar *bar = HZ_LEARNER_BAR (hz_window_get_learner_bar (c->window));
  return fake_learner_count (c->learner, "LearnNow") == 1 &&
         strstr (gtk_label_get_text (hz_learner_bar_get_status_label (bar)), "Learning") != NULL;
}

static gboolean
dialog_up (gpointer window)
{
  return hz_ui_find_message_dialog (GTK_WINDOW (window)) != NULL;
}

static gboolean
never_on (gpointer ctx)
{
  Ctx *c = ctx;
  HzLearnerBar *bar = HZ_LEARNER_BAR (hz_window_get_learner_bar (c->window));
  return c->learner->never_learn && gtk_switch_get_state (hz_learner_bar_get_never_learn_switch (bar));
}

static gboolean
never_off (gpointer ctx)
{
  Ctx *c = ctx;
  HzLearnerBar *bar = HZ_LEARNER_BAR (hz_window_get_learner_bar (c->window));
  return !c->learner->never_learn && !gtk_switch_get_state (hz_learner_bar_get_never_learn_switch (bar));
}

static gboolean
paused (gpointer ctx)
{
  return fake_learner_count (((Ctx *) ctx)->learner, "Pause") == 1;
}

static gboolean
resumed (gpointer ctx)
{
  Ctx *c = ctx;
  return !hz_window_is_generating (c->window) && fake_learner_count (c->learner, "Resume") == 1;
}

static void
script_learner (HzApplication *app, HzWindow *window, gpointer data)
{
  Ctx *c = data;
  c->window = window;
  g_assert_true (hz_ui_wait_for (bar_visible, window, 10));
  HzLearnerBar *bar = HZ_LEARNER_BAR (hz_window_get_learner_bar (window));
  g_assert_nonnull (strstr (gtk_label_get_text (hz_learner_bar_get_status_label (bar)), "next run"));
  hz_ui_spin (0.3);
  g_autofree char *s1 = hz_ui_screenshot (GTK_WIDGET (window), "learner-bar");

  /* Learn Now with no model to learn on: the daemon's reason, in a dialog */
  c->learner->no_model = "no model is chosen for learning: open a model in Hanzo (the learner "
                         "trains the one Hanzo opens at start), or name one with model= in "
                         "learner.ini";
  g_signal_emit_by_name (hz_learner_bar_get_learn_now_button (bar), "clicked");
  g_assert_true (hz_ui_wait_for (dialog_up, window, 5));
  GtkWidget *dialog = hz_ui_find_message_dialog (GTK_WINDOW (window));
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  const char *heading = adw_message_dialog_get_heading (ADW_MESSAGE_DIALOG (dialog));
  const char *body = adw_message_dialog_get_body (ADW_MESSAGE_DIALOG (dialog));
  G_GNUC_END_IGNORE_DEPRECATIONS
  g_test_message ("dialog: %s — %s", heading, body);
  g_assert_cmpstr (heading, ==, "Cannot Learn Now");
  g_assert_nonnull (strstr (body, "no model is chosen for learning"));
  hz_ui_spin (0.3);   /* laid out */
  g_autofree char *s0 = hz_ui_screenshot (dialog, "learner-no-model");
  gtk_window_close (GTK_WINDOW (dialog));
  hz_ui_spin (0.2);
  c->learner->no_model = NULL;
  g_ptr_array_set_size (c->learner->calls, 0);

  /* Learn Now. */
  g_signal_emit_by_name (hz_learner_bar_get_learn_now_button (bar), "clicked");
  g_assert_true (hz_ui_wait_for (learning, c, 5));
  hz_ui_spin (0.3);
  g_autofree char *s2 = hz_ui_screenshot (GTK_WIDGET (window), "learner-learning");
  fake_learner_set_state (c->learner, "idle");

  /* Never learn: the switch sets the daemon's property and shows it. */
  gtk_switch_set_active (hz_learner_bar_get_never_learn_switch (bar), TRUE);
  g_assert_true (hz_ui_wait_for (never_on, c, 5));
  g_assert_true (hz_learner_get_never_learn (hz_application_get_learner (app)));
  gtk_switch_set_active (hz_learner_bar_get_never_learn_switch (bar), FALSE);
  g_assert_true (hz_ui_wait_for (never_off, c, 5));
  g_assert_cmpuint (fake_learner_count (c->learner, "Pause"), ==, 0);

  /* A generation is bracketed by Pause and Resume. */
  if (c->model != NULL)
    {
      g_assert_true (hz_ui_wait_for (hz_ui_model_ready, window, 60));
      GtkTextBuffer *buffer = gtk_text_view_get_buffer (hz_window_get_composer (window));
      gtk_text_buffer_set_text (buffer, "Once upon a time", -1);
      g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.send", NULL));
      g_assert_true (hz_window_is_generating (window));
      g_assert_true (hz_ui_wait_for (paused, c, 5));
      g_assert_cmpuint (fake_learner_count (c->learner, "Resume"), ==, 0);
      hz_ui_spin (0.3);
      if (hz_window_is_generating (window))
        {
          g_autofree char *s3 = hz_ui_screenshot (GTK_WIDGET (window), "learner-generating");
        }
      g_assert_true (hz_ui_wait_for (resumed, c, 120));
      g_assert_cmpstr (c->learner->calls->pdata[c->learner->calls->len - 2], ==, "Pause");
      g_assert_cmpstr (c->learner->calls->pdata[c->learner->calls->len - 1], ==, "Resume");
    }
  else
    g_test_message ("no stories260K.gguf: Pause/Resume around a generation not checked");

  /* The daemon leaves the bus: the row hides. */
  g_bus_unown_name (c->learner->own_id);
  c->learner->own_id = 0;
  g_assert_true (hz_ui_wait_for (bar_hidden, window, 10));
}

static void
test_learner (void)
{
  Ctx c = { 0 };
  g_autofree char *path = hz_test_shared_path ("models/stories260K.gguf");
  const char *args[] = { "--model", NULL, NULL };

  if (path != NULL)
    {
      c.model = g_canonicalize_filename (path, NULL);
      args[1] = c.model;
      g_autoptr(GSettings) settings = g_settings_new ("ai.hanzo.Desktop");
      g_settings_set_int (settings, "max-tokens", 24);
      g_settings_sync ();
    }
  c.learner = fake_learner_start ();
  hz_ui_run_app (c.model ? args : NULL, script_learner, &c);
  fake_learner_stop (c.learner);
  g_free (c.model);
}

int
main (int argc, char *argv[])
{
  hz_ui_test_init ();
  g_setenv ("HZ_WORKER_TOKEN_DELAY_US", "20000", TRUE);
  gtk_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ui/learner/status-learn-now-never-learn-pause-resume", test_learner);
  int ret = g_test_run ();
  hz_ui_test_cleanup ();
  return ret;
}
