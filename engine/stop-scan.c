/* engine/stop-scan.c — see stop-scan.h. */
#include "stop-scan.h"

#include <string.h>

struct _HzStopScan {
  GStrv    stops;
  GString *pending;   /* generated text not yet released */
  GString *emit;      /* what the last call returned */
};

HzStopScan *
hz_stop_scan_new (const char *const *stops)
{
  HzStopScan *s = g_new0 (HzStopScan, 1);
  g_autoptr (GStrvBuilder) b = g_strv_builder_new ();
  for (gsize k = 0; stops && stops[k]; k++)
    if (stops[k][0] != '\0')
      g_strv_builder_add (b, stops[k]);
  s->stops = g_strv_builder_end (b);
  s->pending = g_string_new (NULL);
  s->emit = g_string_new (NULL);
  return s;
}

void
hz_stop_scan_free (HzStopScan *s)
{
  if (s == NULL)
    return;
  g_strfreev (s->stops);
  g_string_free (s->pending, TRUE);
  g_string_free (s->emit, TRUE);
  g_free (s);
}

/* Earliest occurrence of any stop string in pending, or -1. */
static gssize
stop_find (const HzStopScan *s)
{
  gssize best = -1;
  for (gsize k = 0; s->stops[k]; k++)
    {
      const char *hit = memmem (s->pending->str, s->pending->len, s->stops[k], strlen (s->stops[k]));
      if (hit && (best < 0 || hit - s->pending->str < best))
        best = hit - s->pending->str;
    }
  return best;
}

/* Length of the prefix of pending that cannot be the start of a stop string. */
static gsize
stop_safe_len (const HzStopScan *s)
{
  gsize safe = s->pending->len;
  for (gsize k = 0; s->stops[k]; k++)
    {
      const gsize len = strlen (s->stops[k]);
      /* longest proper prefix of the stop string that is a suffix of pending */
      for (gsize l = MIN (len - 1, s->pending->len); l > 0; l--)
        if (memcmp (s->pending->str + s->pending->len - l, s->stops[k], l) == 0)
          {
            safe = MIN (safe, s->pending->len - l);
            break;
          }
    }
  return safe;
}

const char *
hz_stop_scan_push (HzStopScan *s, const char *text, gboolean final, gboolean *hit)
{
  if (text)
    g_string_append (s->pending, text);
  g_string_truncate (s->emit, 0);
  const gssize at = stop_find (s);
  if (hit)
    *hit = at >= 0;
  if (at >= 0)
    {
      g_string_append_len (s->emit, s->pending->str, at);
      g_string_truncate (s->pending, 0);
      return s->emit->str;
    }
  const gsize safe = final ? s->pending->len : stop_safe_len (s);
  g_string_append_len (s->emit, s->pending->str, safe);
  g_string_erase (s->pending, 0, safe);
  return s->emit->str;
}

const char *
hz_stop_scan_flush (HzStopScan *s)
{
  g_string_truncate (s->emit, 0);
  g_string_append_len (s->emit, s->pending->str, s->pending->len);
  g_string_truncate (s->pending, 0);
  return s->emit->str;
}
