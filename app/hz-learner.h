/* hz-learner.h — HzLearner: the app's view of the hanzo-learner daemon (D-Bus name
 * ai.hanzo.Desktop.Learner, object /ai/hanzo/Desktop/Learner, interface
 * ai.hanzo.Desktop.Learner, see learner/ai.hanzo.Desktop.Learner.xml; the name is under the
 * app's id so that the Flatpak sandbox lets the daemon own it).
 *
 * Watches the name on the session bus (g_bus_watch_name, auto-starting the daemon through
 * its D-Bus service file when one is installed) and mirrors its State, Progress, NextRun,
 * Reason and NeverLearn properties as GObject properties; "present" is FALSE (and every
 * call a no-op) while the daemon is not on the bus. hz_learner_hold()/_release() bracket a
 * generation: the first hold calls Pause, the last release calls Resume, so the learner
 * never trains while the user waits for a reply. Calls are asynchronous; a failed call
 * emits "call-failed" (method name, message). Main thread only.
 *
 * Signals:
 *   call-failed (method, message)          a D-Bus call failed
 *   active-adapter-changed (path)          the daemon promoted a new personal adapter
 *                                          (D-Bus AdapterReady) or a Rollback made another
 *                                          one active ("" none); path is the adapter folder
 *                                          (PEFT files + adapter.gguf)
 *   shared-adapter-changed (path, round)   federation saved a round's aggregate as the
 *                                          shared base adapter (D-Bus SharedAdapterReady)
 * The engine worker follows both (hz_engine_worker_follow_learner()).
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define HZ_LEARNER_BUS_NAME    "ai.hanzo.Desktop.Learner"
#define HZ_LEARNER_OBJECT_PATH "/ai/hanzo/Desktop/Learner"
#define HZ_LEARNER_INTERFACE   "ai.hanzo.Desktop.Learner"

#define HZ_TYPE_LEARNER (hz_learner_get_type ())
G_DECLARE_FINAL_TYPE (HzLearner, hz_learner, HZ, LEARNER, GObject)

/** Start watching the session bus for the daemon. */
HzLearner  *hz_learner_new (void);

gboolean    hz_learner_is_present (HzLearner *self);
/** "idle", "waiting", "running", "paused", "disabled" ("" when absent). */
const char *hz_learner_get_state (HzLearner *self);
const char *hz_learner_get_reason (HzLearner *self);
double      hz_learner_get_progress (HzLearner *self);
/** Unix seconds of the next run window (0 unknown). */
gint64      hz_learner_get_next_run (HzLearner *self);
gboolean    hz_learner_get_never_learn (HzLearner *self);
/** Set the daemon's NeverLearn property (org.freedesktop.DBus.Properties.Set). */
void        hz_learner_set_never_learn (HzLearner *self, gboolean never);

/** A generation starts: Pause on the first hold (only when the daemon is present). */
void        hz_learner_hold (HzLearner *self);
/** A generation ended: Resume after the last hold is released. */
void        hz_learner_release (HzLearner *self);

void        hz_learner_learn_now (HzLearner *self);
/** Call Rollback; `callback` (may be NULL) gets the new active adapter path ("" none) or
 *  NULL and an error. */
void        hz_learner_rollback (HzLearner *self,
                                 void (*callback) (const char *path, const GError *error,
                                                   gpointer data),
                                 gpointer data);

/** A one-line, translated description of the state ("Learner idle · next run 02:00"). */
char       *hz_learner_describe (HzLearner *self);

G_END_DECLS
