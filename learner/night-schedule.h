/* learner/night-schedule.h — when the nightly learner may run: a pure decision function over the
 * clock, power, session idleness and the user's switches, used by hanzo-learner
 * (daemon-app.c) and tested on a table of cases (tests/learner/test-daemon.c).
 *
 * Rules, first match wins:
 *   never learn (the user's off switch)       -> DISABLED
 *   paused (the app is generating; Pause)     -> PAUSED
 *   on battery (UPower OnBattery; no UPower = on AC)  -> WAIT_POWER
 *   "learn now" requested                     -> RUN (ignores window and idleness)
 *   outside the night window                  -> WAIT_WINDOW
 *   session busy (idle monitor says not idle) -> WAIT_IDLE
 *   otherwise                                 -> RUN
 * Unknown idleness (no org.gnome.Mutter.IdleMonitor, no logind IdleHint) counts as idle:
 * inside the night window is the only time a job starts then, which is the "assume idle
 * only at night" rule.
 *
 * The window is [start, end) in local minutes of the day and may wrap midnight
 * (e.g. 22:00-06:00); start == end means all day.
 *
 * Thread safety: pure functions.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  int start_minute;   /* default 120 (02:00) */
  int end_minute;     /* default 360 (06:00) */
} HzNightWindow;

typedef enum { HZ_IDLE_UNKNOWN, HZ_IDLE_YES, HZ_IDLE_NO } HzIdleState;

typedef struct {
  int         minute_of_day;   /* local time, 0..1439 */
  gboolean    on_battery;
  HzIdleState idle;
  gboolean    paused;
  gboolean    never_learn;
  gboolean    learn_now;
} HzSchedInput;

typedef enum {
  HZ_SCHED_RUN,
  HZ_SCHED_WAIT_WINDOW,
  HZ_SCHED_WAIT_POWER,
  HZ_SCHED_WAIT_IDLE,
  HZ_SCHED_PAUSED,
  HZ_SCHED_DISABLED,
} HzSchedDecision;

/** Default window 02:00-06:00. */
void hz_night_window_init (HzNightWindow *w);

/** Parse "HH:MM-HH:MM" (24 h). FALSE on a malformed string (w untouched). */
gboolean hz_night_window_parse (const char *s, HzNightWindow *w);

/** Whether minute_of_day lies in the window. */
gboolean hz_night_window_contains (const HzNightWindow *w, int minute_of_day);

/** The decision for `in` (rules above). */
HzSchedDecision hz_sched_decide (const HzNightWindow *w, const HzSchedInput *in);

/** "run", "wait-window", "wait-power", "wait-idle", "paused", "disabled". */
const char *hz_sched_decision_name (HzSchedDecision d);

/** Unix time (seconds) of the next window start strictly after `now` (local time zone of
 *  `now`), or now itself when inside the window. */
gint64 hz_night_window_next_start (const HzNightWindow *w, GDateTime *now);

G_END_DECLS
