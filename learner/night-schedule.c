/* learner/night-schedule.c — nightly schedule decisions (see night-schedule.h). */
#include <stdio.h>
#include "night-schedule.h"

void
hz_night_window_init (HzNightWindow *w)
{
  w->start_minute = 2 * 60;
  w->end_minute = 6 * 60;
}

gboolean
hz_night_window_parse (const char *s, HzNightWindow *w)
{
  int h1, m1, h2, m2;
  char tail;
  if (s == NULL || sscanf (s, "%d:%d-%d:%d%c", &h1, &m1, &h2, &m2, &tail) != 4
      || h1 < 0 || h1 > 23 || h2 < 0 || h2 > 24 || m1 < 0 || m1 > 59 || m2 < 0 || m2 > 59
      || (h2 == 24 && m2 != 0))
    return FALSE;
  w->start_minute = h1 * 60 + m1;
  w->end_minute = (h2 * 60 + m2) % 1440;
  return TRUE;
}

gboolean
hz_night_window_contains (const HzNightWindow *w, int m)
{
  if (w->start_minute == w->end_minute)
    return TRUE;
  if (w->start_minute < w->end_minute)
    return m >= w->start_minute && m < w->end_minute;
  return m >= w->start_minute || m < w->end_minute;
}

HzSchedDecision
hz_sched_decide (const HzNightWindow *w, const HzSchedInput *in)
{
  if (in->never_learn)
    return HZ_SCHED_DISABLED;
  if (in->paused)
    return HZ_SCHED_PAUSED;
  if (in->on_battery)
    return HZ_SCHED_WAIT_POWER;
  if (in->learn_now)
    return HZ_SCHED_RUN;
  if (!hz_night_window_contains (w, in->minute_of_day))
    return HZ_SCHED_WAIT_WINDOW;
  if (in->idle == HZ_IDLE_NO)
    return HZ_SCHED_WAIT_IDLE;
  return HZ_SCHED_RUN;
}

const char *
hz_sched_decision_name (HzSchedDecision d)
{
  static const char *const names[] = {
    "run", "wait-window", "wait-power", "wait-idle", "paused", "disabled",
  };
  return (guint) d < G_N_ELEMENTS (names) ? names[d] : "unknown";
}

gint64
hz_night_window_next_start (const HzNightWindow *w, GDateTime *now)
{
  const int m = g_date_time_get_hour (now) * 60 + g_date_time_get_minute (now);
  if (hz_night_window_contains (w, m))
    return g_date_time_to_unix (now);
  g_autoptr (GDateTime) day = g_date_time_new (g_date_time_get_timezone (now),
                                               g_date_time_get_year (now),
                                               g_date_time_get_month (now),
                                               g_date_time_get_day_of_month (now),
                                               w->start_minute / 60, w->start_minute % 60, 0);
  g_autoptr (GDateTime) next = g_date_time_compare (day, now) > 0
                               ? g_date_time_ref (day) : g_date_time_add_days (day, 1);
  return g_date_time_to_unix (next);
}
