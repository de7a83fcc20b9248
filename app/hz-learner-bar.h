/* hz-learner-bar.h — HzLearnerBar: the learner's status in the sidebar footer (state, next
 * run, progress, "Learn Now" and a "Never learn" switch bound to the daemon's NeverLearn).
 * Hidden while the daemon is not on the session bus. Main thread only.
 */
#pragma once

#include <gtk/gtk.h>
#include "hz-learner.h"

G_BEGIN_DECLS

#define HZ_TYPE_LEARNER_BAR (hz_learner_bar_get_type ())
G_DECLARE_FINAL_TYPE (HzLearnerBar, hz_learner_bar, HZ, LEARNER_BAR, GtkBox)

GtkWidget *hz_learner_bar_new (HzLearner *learner);

/* For tests and accessibility tooling. */
GtkLabel  *hz_learner_bar_get_status_label (HzLearnerBar *self);
GtkButton *hz_learner_bar_get_learn_now_button (HzLearnerBar *self);
GtkSwitch *hz_learner_bar_get_never_learn_switch (HzLearnerBar *self);

G_END_DECLS
