/* The redaction gate (redactor/hz-gate.c): a store seeded with messages full of known
 * personal data; after the gate ran, none of it appears in any redacted copy (what the
 * learner reads), placeholders are consistent across a conversation, and the vault gives
 * the user their original text back. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "hanzo/redact-gate.h"

/* Personal data planted in the messages, each of which must never reach a sample. */
static const char *const secrets[] = {
  "Mara Quinley", "mara.quinley@example.org", "+44 20 7946 0958", "4111 1111 1111 1111",
  "GB82 WEST 1234 5698 7654 32", "078-05-1121", "192.168.17.42", "615 Benedum Drive",
  "Dr. Ines Okafor", "Okafor", "ghp_R2d2C3po4Bb8Ee1Ff5Gg6Hh7Ii9Jj0Kk1Ll2", "1984-03-07",
};

static const char *const convo_a[] = {
  "Hi, my name is Mara Quinley and my email is mara.quinley@example.org.",
  "Call me on +44 20 7946 0958 after 6pm, or write to Mara Quinley again.",
  "My card 4111 1111 1111 1111 was charged twice; refund to GB82 WEST 1234 5698 7654 32 please.",
  "SSN 078-05-1121, born 1984-03-07, I live at 615 Benedum Drive.",
};
static const char *const convo_b[] = {
  "Dr. Ines Okafor said the server 192.168.17.42 is down.",
  "Okafor also pasted her token ghp_R2d2C3po4Bb8Ee1Ff5Gg6Hh7Ii9Jj0Kk1Ll2 by mistake.",
};

static HzStore *
open_store (char **path_out)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("hz-gate-XXXXXX", &error);
  g_assert_no_error (error);
  *path_out = g_build_filename (dir, "hanzo.db", NULL);
  HzStore *store = hz_store_open (*path_out, &error);
  g_assert_no_error (error);
  return store;
}

static gint64
seed (HzStore *store, const char *const *texts, gsize n)
{
  g_autoptr (GError) error = NULL;
  gint64 conv = hz_store_create_conversation (store, "seeded", NULL, NULL, &error);
  g_assert_no_error (error);
  for (gsize i = 0; i < n; i++)
    {
      hz_store_append_message (store, conv, 0, i % 2 ? HZ_ROLE_ASSISTANT : HZ_ROLE_USER, texts[i],
                               NULL, TRUE, &error);
      g_assert_no_error (error);
    }
  return conv;
}

static void
assert_no_secret (const char *sample)
{
  g_autofree char *low = g_utf8_strdown (sample, -1);
  for (gsize k = 0; k < G_N_ELEMENTS (secrets); k++)
    {
      g_autofree char *s = g_utf8_strdown (secrets[k], -1);
      if (strstr (low, s))
        g_error ("personal data \"%s\" leaked into a sample: %s", secrets[k], sample);
    }
}

static void
test_gate (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = NULL;
  HzStore *store = open_store (&path);
  HzRedactor *r = hz_redactor_new (&error);
  g_assert_no_error (error);
  gint64 a = seed (store, convo_a, G_N_ELEMENTS (convo_a));
  gint64 b = seed (store, convo_b, G_N_ELEMENTS (convo_b));
  /* a reply still streaming is not redacted (nor read by the learner) yet */
  gint64 streaming = hz_store_append_message (store, a, 0, HZ_ROLE_ASSISTANT, "Sure, Mara", NULL, FALSE, &error);
  g_assert_no_error (error);

  gint n = hz_redact_gate_run (r, store, 2, NULL, &error);   /* in batches */
  g_assert_no_error (error);
  g_assert_cmpint (n, ==, 2);
  n = hz_redact_gate_run (r, store, 100, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (n, ==, 4);
  g_assert_cmpint (hz_redact_gate_run (r, store, 100, NULL, &error), ==, 0);

  g_autoptr (GPtrArray) samples = hz_store_list_message_redactions (store, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (samples->len, ==, G_N_ELEMENTS (convo_a) + G_N_ELEMENTS (convo_b));
  for (guint i = 0; i < samples->len; i++)
    {
      HzMessageRedaction *s = samples->pdata[i];
      assert_no_secret (s->redacted);
      g_assert_cmpint (s->n_spans, >, 0);
      g_assert_true (s->spans_json[0] == '[');
    }
  /* the same name gets the same placeholder in another message of the conversation */
  HzMessageRedaction *s0 = samples->pdata[0], *s1 = samples->pdata[1];
  g_assert_nonnull (strstr (s0->redacted, "[PERSON_1]"));
  g_assert_nonnull (strstr (s1->redacted, "[PERSON_1]"));

  /* the user's own view: the vault restores the original text exactly */
  for (guint i = 0; i < samples->len; i++)
    {
      HzMessageRedaction *s = samples->pdata[i];
      g_autoptr (HzMessage) m = hz_store_get_message (store, s->message_id, &error);
      g_autofree char *back = hz_redact_gate_restore (store, s->conversation_id, s->redacted, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (back, ==, m->content);
    }
  /* vaults are per conversation */
  g_autoptr (GPtrArray) vb = hz_store_vault_list (store, b, &error);
  for (guint i = 0; i < vb->len; i++)
    g_assert_cmpstr (((HzVaultEntry *) vb->pdata[i])->original, !=, "Mara Quinley");

  /* the streamed reply completes with more personal data: the gate picks it up, and the
   * new copy reuses the conversation's numbering */
  g_assert_true (hz_store_update_message (store, streaming, "Sure, Mara Quinley, I will call +44 20 7946 0958.", -1, -1, -1, &error));
  g_assert_true (hz_store_set_message_complete (store, streaming, &error));
  g_assert_cmpint (hz_redact_gate_run (r, store, 100, NULL, &error), ==, 1);
  g_autoptr (HzMessageRedaction) sr = hz_store_get_message_redaction (store, streaming, &error);
  g_assert_no_error (error);
  assert_no_secret (sr->redacted);
  g_assert_nonnull (strstr (sr->redacted, "[PERSON_1]"));
  g_assert_nonnull (strstr (sr->redacted, "[PHONE_1]"));

  /* deleting the conversation deletes its vault and copies */
  g_assert_true (hz_store_delete_conversation (store, a, &error));
  g_autoptr (GPtrArray) va = hz_store_vault_list (store, a, &error);
  g_assert_cmpuint (va->len, ==, 0);

  hz_redactor_free (r);
  hz_store_close (store);
  g_unlink (path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/redact/gate/seeded-store", test_gate);
  return g_test_run ();
}
