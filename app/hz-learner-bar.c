/* hz-learner-bar.c — HzLearnerBar (see hz-learner-bar.h). */
#include "hz-learner-bar.h"

#include <glib/gi18n.h>

struct _HzLearnerBar {
  GtkBox          parent_instance;
  HzLearner      *learner;
  GtkLabel       *status;
  GtkProgressBar *progress;
  GtkButton      *learn_now;
  GtkSwitch      *never_learn;
  gulong          notify_id;
  gulong          switch_id;
};

G_DEFINE_FINAL_TYPE (HzLearnerBar, hz_learner_bar, GTK_TYPE_BOX)

static void
bar_sync (HzLearnerBar *self)
{
  gboolean present = hz_learner_is_present (self->learner);
  gboolean running = g_strcmp0 (hz_learner_get_state (self->learner), "running") == 0;
  gboolean never = hz_learner_get_never_learn (self->learner);
  g_autofree char *text = present ? hz_learner_describe (self->learner) : NULL;

  gtk_widget_set_visible (GTK_WIDGET (self), present);
  if (!present)
    return;
  gtk_label_set_text (self->status, text);
  gtk_widget_set_visible (GTK_WIDGET (self->progress), running);
  gtk_progress_bar_set_fraction (self->progress, hz_learner_get_progress (self->learner));
  gtk_widget_set_sensitive (GTK_WIDGET (self->learn_now), !never && !running);
  g_signal_handler_block (self->never_learn, self->switch_id);
  gtk_switch_set_active (self->never_learn, never);
  gtk_switch_set_state (self->never_learn, never);
  g_signal_handler_unblock (self->never_learn, self->switch_id);
}

static void
on_learner_notify (HzLearner *learner, GParamSpec *pspec, HzLearnerBar *self)
{
  bar_sync (self);
}

static gboolean
on_never_learn_state_set (GtkSwitch *sw, gboolean state, HzLearnerBar *self)
{
  /* The switch shows the daemon's value: it follows once the daemon has changed it. */
  hz_learner_set_never_learn (self->learner, state);
  return TRUE;
}

static void
on_learn_now (GtkButton *button, HzLearnerBar *self)
{
  hz_learner_learn_now (self->learner);
}

GtkWidget *
hz_learner_bar_new (HzLearner *learner)
{
  g_return_val_if_fail (HZ_IS_LEARNER (learner), NULL);
  HzLearnerBar *self = g_object_new (HZ_TYPE_LEARNER_BAR,
                                     "orientation", GTK_ORIENTATION_VERTICAL,
                                     "spacing", 6, NULL);
  self->learner = g_object_ref (learner);
  self->notify_id = g_signal_connect (learner, "notify", G_CALLBACK (on_learner_notify), self);
  bar_sync (self);
  return GTK_WIDGET (self);
}

GtkLabel *
hz_learner_bar_get_status_label (HzLearnerBar *self)
{
  return self->status;
}

GtkButton *
hz_learner_bar_get_learn_now_button (HzLearnerBar *self)
{
  return self->learn_now;
}

GtkSwitch *
hz_learner_bar_get_never_learn_switch (HzLearnerBar *self)
{
  return self->never_learn;
}

static void
hz_learner_bar_dispose (GObject *object)
{
  HzLearnerBar *self = HZ_LEARNER_BAR (object);

  if (self->learner != NULL)
    g_clear_signal_handler (&self->notify_id, self->learner);
  g_clear_object (&self->learner);
  G_OBJECT_CLASS (hz_learner_bar_parent_class)->dispose (object);
}

static void
hz_learner_bar_class_init (HzLearnerBarClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = hz_learner_bar_dispose;
}

static void
hz_learner_bar_init (HzLearnerBar *self)
{
  GtkWidget *row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *row2 = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *never_label;

  gtk_widget_add_css_class (GTK_WIDGET (self), "learner-bar");
  gtk_widget_set_margin_start (GTK_WIDGET (self), 12);
  gtk_widget_set_margin_end (GTK_WIDGET (self), 12);
  gtk_widget_set_margin_top (GTK_WIDGET (self), 6);
  gtk_widget_set_margin_bottom (GTK_WIDGET (self), 6);

  self->status = GTK_LABEL (gtk_label_new (""));
  gtk_label_set_xalign (self->status, 0);
  gtk_label_set_ellipsize (self->status, PANGO_ELLIPSIZE_END);
  gtk_widget_set_hexpand (GTK_WIDGET (self->status), TRUE);
  gtk_widget_add_css_class (GTK_WIDGET (self->status), "caption");
  self->learn_now = GTK_BUTTON (gtk_button_new_with_label (_("Learn Now")));
  gtk_widget_add_css_class (GTK_WIDGET (self->learn_now), "flat");
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->learn_now),
                               _("Improve the model from your rated replies now"));
  g_signal_connect (self->learn_now, "clicked", G_CALLBACK (on_learn_now), self);
  gtk_box_append (GTK_BOX (row), GTK_WIDGET (self->status));
  gtk_box_append (GTK_BOX (row), GTK_WIDGET (self->learn_now));

  self->progress = GTK_PROGRESS_BAR (gtk_progress_bar_new ());
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->progress),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL, _("Learning progress"), -1);

  never_label = gtk_label_new (_("Never learn"));
  gtk_label_set_xalign (GTK_LABEL (never_label), 0);
  gtk_widget_set_hexpand (never_label, TRUE);
  gtk_widget_add_css_class (never_label, "caption");
  self->never_learn = GTK_SWITCH (gtk_switch_new ());
  gtk_widget_set_valign (GTK_WIDGET (self->never_learn), GTK_ALIGN_CENTER);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->never_learn),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL, _("Never learn"), -1);
  self->switch_id = g_signal_connect (self->never_learn, "state-set",
                                      G_CALLBACK (on_never_learn_state_set), self);
  gtk_box_append (GTK_BOX (row2), never_label);
  gtk_box_append (GTK_BOX (row2), GTK_WIDGET (self->never_learn));

  gtk_box_append (GTK_BOX (self), gtk_separator_new (GTK_ORIENTATION_HORIZONTAL));
  gtk_box_append (GTK_BOX (self), row);
  gtk_box_append (GTK_BOX (self), GTK_WIDGET (self->progress));
  gtk_box_append (GTK_BOX (self), row2);
  gtk_widget_set_visible (GTK_WIDGET (self), FALSE);
}
