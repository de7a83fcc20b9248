/* tests/learner/learner-test-store.h — a store with 24 rated, redacted conversations in
 * one user's style (header-only; shared by test-daemon and test-federation). */
#pragma once

#include <glib.h>
#include "hanzo-store.h"
#include "hanzo-store-feedback.h"
#include "hanzo-store-redactions.h"

/** Fill the store at `path` (created if needed): prompts "One day <Name> went to the park
 *  with Alice." (redacted to [PERSON_1]) and thumbs-up replies " <Name> said hi. Bye for
 *  now, <sign>." — `sign` makes one simulated user's style differ from another's. */
static inline void
learner_test_fill_store (const char *path, const char *sign)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (HzStore) s = hz_store_open (path, &error);
  g_assert_no_error (error);
  static const char *const names[] = { "Tom", "Lily", "Ben", "Mia", "Sam", "Anna", "Max", "Sue" };
  for (int i = 0; i < 24; i++)
    {
      const gint64 c = hz_store_create_conversation (s, "t", NULL, NULL, &error);
      g_autofree char *raw_q = g_strdup_printf ("One day %s went to the park with Alice.", names[i % 8]);
      g_autofree char *red_q = g_strdup_printf ("One day %s went to the park with [PERSON_1].", names[i % 8]);
      g_autofree char *reply = g_strdup_printf (" %s said hi. Bye for now, %s.", names[(i * 3) % 8],
                                                sign);
      const gint64 u = hz_store_append_message (s, c, 0, HZ_ROLE_USER, raw_q, NULL, TRUE, &error);
      const gint64 a = hz_store_append_message (s, c, u, HZ_ROLE_ASSISTANT, reply, "ab", TRUE, &error);
      g_assert_no_error (error);
      const gint64 ids[2] = { u, a };
      const char *texts[2] = { red_q, reply };
      for (int k = 0; k < 2; k++)
        {
          g_autoptr (HzMessage) m = hz_store_get_message (s, ids[k], &error);
          HzMessageRedaction r = { .message_id = ids[k], .redacted = (char *) texts[k],
                                   .redactor_version = 1, .source_updated_us = m->updated_us };
          g_assert_true (hz_store_put_message_redaction (s, &r, &error));
        }
      g_assert_true (hz_store_set_feedback (s, a, 1, &error));
      g_assert_no_error (error);
    }
}
