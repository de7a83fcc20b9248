/* The redaction gate (redactor/hz-gate.c): a store seeded with messages full of known
 * personal data; after the gate ran, none of it appears in any redacted copy (what the
 * learner reads), placeholders are consistent across a conversation, and the vault gives
 * the user their original text back. hz_redact_gate_run_full(): progress, stopping and
 * resuming, cancelling, the model pass (a stand-in model: verified spans only; copy
 * versions); two connections redacting one conversation at once. */
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


/* ------------------------------------------------------------------ run_full */

typedef struct {
  guint calls, last_done, total, stop_after;
} Progress;

static gboolean
on_progress (guint done, guint total, gpointer data)
{
  Progress *p = data;
  g_assert_cmpuint (done, >=, p->calls ? p->last_done : 0);
  g_assert_cmpuint (done, <=, total);
  p->calls++;
  p->last_done = done;
  p->total = total;
  return p->stop_after == 0 || done < p->stop_after;
}

/* A stand-in guard model: one real word the rules do not flag ("bluefinch", a codename the
 * user treats as a person) and one invented name that is not in the text. */
static char *
codename_model (const char *prompt, gpointer user_data, GError **error)
{
  (void) error;
  guint *calls = user_data;
  g_atomic_int_inc (calls);
  if (strstr (prompt, "bluefinch") == NULL)
    return g_strdup ("[]");
  return g_strdup ("[{\"label\": \"PERSON\", \"text\": \"bluefinch\"},"
                   " {\"label\": \"PERSON\", \"text\": \"Harriet Vossberg\"}]");
}

static void
test_run_full (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = NULL;
  HzStore *store = open_store (&path);
  HzRedactor *r = hz_redactor_new (&error);
  g_assert_no_error (error);
  gint64 a = seed (store, convo_a, G_N_ELEMENTS (convo_a));
  seed (store, convo_b, G_N_ELEMENTS (convo_b));
  const gint64 coded = hz_store_append_message (store, a, 0, HZ_ROLE_USER,
                                                "Tell bluefinch the meeting moved.", NULL, TRUE,
                                                &error);
  g_assert_no_error (error);
  const guint n_all = G_N_ELEMENTS (convo_a) + G_N_ELEMENTS (convo_b) + 1;

  /* the progress callback stops the run after 3 messages: what was stored stays and the
   * next run resumes with the rest */
  Progress p = { .stop_after = 3 };
  HzRedactGateOptions o = { .progress = on_progress, .user_data = &p };
  g_assert_cmpint (hz_redact_gate_run_full (r, store, &o, &error), ==, 3);
  g_assert_no_error (error);
  g_assert_cmpuint (p.total, ==, n_all);
  g_assert_cmpuint (p.calls, ==, 4);   /* 0, 1, 2, 3 */
  p = (Progress) { 0 };
  g_assert_cmpint (hz_redact_gate_run_full (r, store, &o, &error), ==, n_all - 3);
  g_assert_cmpuint (p.total, ==, n_all - 3);
  g_assert_cmpuint (p.last_done, ==, n_all - 3);
  g_assert_cmpint (hz_redact_gate_run_full (r, store, NULL, &error), ==, 0);

  /* a cancelled run stops with G_IO_ERROR_CANCELLED and stores nothing more */
  g_autoptr (GCancellable) cancel = g_cancellable_new ();
  g_cancellable_cancel (cancel);
  const HzRedactGateOptions oc = { .flags = HZ_REDACT_MODEL, .cancellable = cancel };
  g_assert_cmpint (hz_redact_gate_run_full (r, store, &oc, &error), ==, -1);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&error);

  /* rule-based copies: version 2V-1, and the codename is not personal data to the rules */
  g_autoptr (HzMessageRedaction) c1 = hz_store_get_message_redaction (store, coded, &error);
  g_assert_no_error (error);
  g_assert_cmpint (c1->redactor_version, ==, hz_redact_gate_copy_version (FALSE));
  g_assert_nonnull (strstr (c1->redacted, "bluefinch"));

  /* the model pass redoes the rule-based copies (at most max_messages per run), accepts the
   * span that is really in the text and drops the invented one */
  guint calls = 0;
  hz_redactor_set_model (r, codename_model, &calls, NULL);
  const HzRedactGateOptions om = { .flags = HZ_REDACT_MODEL, .max_messages = 2 };
  g_assert_cmpint (hz_redact_gate_run_full (r, store, &om, &error), ==, 2);
  g_assert_cmpuint (calls, ==, 2);
  const HzRedactGateOptions om_all = { .flags = HZ_REDACT_MODEL };
  g_assert_cmpint (hz_redact_gate_run_full (r, store, &om_all, &error), ==, n_all - 2);
  g_assert_no_error (error);
  g_autoptr (HzMessageRedaction) c2 = hz_store_get_message_redaction (store, coded, &error);
  g_assert_cmpint (c2->redactor_version, ==, hz_redact_gate_copy_version (TRUE));
  g_assert_null (strstr (c2->redacted, "bluefinch"));
  g_assert_nonnull (strstr (c2->redacted, "[PERSON_"));
  g_assert_nonnull (strstr (c2->spans_json, "\"recognizer\":\"model\""));
  g_autofree char *back = hz_redact_gate_restore (store, a, c2->redacted, &error);
  g_assert_cmpstr (back, ==, "Tell bluefinch the meeting moved.");
  g_autoptr (GPtrArray) vault = hz_store_vault_list (store, a, &error);
  for (guint i = 0; i < vault->len; i++)
    g_assert_cmpstr (((HzVaultEntry *) vault->pdata[i])->original, !=, "Harriet Vossberg");
  /* copies with the model pass are current for both kinds of gate */
  g_assert_cmpint (hz_redact_gate_run_full (r, store, NULL, &error), ==, 0);
  g_assert_cmpint (hz_redact_gate_run_full (r, store, &om_all, &error), ==, 0);
  g_autoptr (GPtrArray) samples = hz_store_list_message_redactions (store, 0, &error);
  g_assert_cmpuint (samples->len, ==, n_all);
  for (guint i = 0; i < samples->len; i++)
    assert_no_secret (((HzMessageRedaction *) samples->pdata[i])->redacted);

  hz_redactor_free (r);
  hz_store_close (store);
  g_unlink (path);
}

/* ------------------------------------------------------------------ two connections */

typedef struct {
  const char       *path;
  const HzRedactor *redactor;
  GArray           *reverse;   /* NULL: the gate's order (oldest first); else these ids */
  gint              done;
} Racer;

static gpointer
racer (gpointer data)
{
  Racer *rc = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (HzStore) store = hz_store_open (rc->path, &error);
  g_assert_no_error (error);
  if (rc->reverse)
    {
      /* newest first, so the two connections number different new names at once */
      for (guint i = rc->reverse->len; i-- > 0;)
        {
          g_assert_true (hz_redact_gate_message (rc->redactor, store,
                                                 g_array_index (rc->reverse, gint64, i), &error));
          g_assert_no_error (error);
          rc->done++;
        }
      return NULL;
    }
  /* one message at a time, so both connections interleave on the same conversation */
  gint n;
  while ((n = hz_redact_gate_run (rc->redactor, store, 1, NULL, &error)) > 0)
    rc->done += n;
  g_assert_no_error (error);
  g_assert_cmpint (n, ==, 0);
  return NULL;
}

/* The app's worker and the learner daemon may redact one conversation at the same time:
 * every name still gets one placeholder of its own and every copy restores exactly. */
static void
test_two_connections (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = NULL;
  HzStore *store = open_store (&path);
  HzRedactor *r = hz_redactor_new (&error);
  static const char *const given[] = { "Mara", "Ines", "Tobias", "Odile", "Kevin", "Priya",
                                       "Lars", "Amara", "Jonas", "Elena" };
  static const char *const family[] = { "Quinley", "Okafor", "Wendrik", "Varga", "Tarrow",
                                        "Raman", "Holmqvist", "Nwosu", "Becker", "Rossi" };
  const gint64 c = hz_store_create_conversation (store, "race", NULL, NULL, &error);
  const guint n = 40;
  g_autoptr (GArray) ids = g_array_new (FALSE, FALSE, sizeof (gint64));
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *g = g_ascii_strdown (given[i % 10], -1);
      g_autofree char *f = g_ascii_strdown (family[(i * 3) % 10], -1);
      g_autofree char *text = g_strdup_printf ("Please ask %s %s to write to %s.%s@example.org.",
                                               given[i % 10], family[(i * 3) % 10], g, f);
      const gint64 id = hz_store_append_message (store, c, 0, HZ_ROLE_USER, text, NULL, TRUE, &error);
      g_assert_no_error (error);
      g_array_append_val (ids, id);
    }
  Racer r1 = { path, r, NULL, 0 }, r2 = { path, r, ids, 0 };
  GThread *t1 = g_thread_new ("gate-1", racer, &r1);
  GThread *t2 = g_thread_new ("gate-2", racer, &r2);
  g_thread_join (t1);
  g_thread_join (t2);
  g_assert_cmpint (r1.done + r2.done, >=, n);   /* a message may be done twice, never lost */
  g_autoptr (GPtrArray) vault = hz_store_vault_list (store, c, &error);
  g_autoptr (GHashTable) originals = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < vault->len; i++)
    {
      HzVaultEntry *e = vault->pdata[i];
      g_assert_false (g_hash_table_contains (originals, e->original));
      g_hash_table_add (originals, e->original);
    }
  g_autoptr (GPtrArray) copies = hz_store_list_message_redactions (store, c, &error);
  g_assert_cmpuint (copies->len, ==, n);
  for (guint i = 0; i < copies->len; i++)
    {
      HzMessageRedaction *s = copies->pdata[i];
      g_autoptr (HzMessage) m = hz_store_get_message (store, s->message_id, &error);
      g_assert_null (strstr (s->redacted, "@example.org"));
      g_autofree char *back = hz_redact_gate_restore (store, c, s->redacted, &error);
      g_assert_cmpstr (back, ==, m->content);
    }
  hz_redactor_free (r);
  hz_store_close (store);
  g_unlink (path);
}

/* Deterministic interleaving: the stand-in model runs while the message is being analysed
 * (after the gate read the vault, before it writes) and lets a second connection redact
 * another message of the conversation first, numbering its new name [PERSON_1] too. */
typedef struct {
  HzStore          *other;
  const HzRedactor *plain;
  gint64            other_message;
  guint             calls;
} Interloper;

static char *
interloper_model (const char *prompt, gpointer user_data, GError **error)
{
  (void) prompt;
  Interloper *it = user_data;
  if (it->calls++ == 0 && !hz_redact_gate_message (it->plain, it->other, it->other_message, error))
    return NULL;
  return g_strdup ("[]");
}

static void
test_interleaved (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = NULL;
  HzStore *store = open_store (&path);
  HzStore *other = hz_store_open (path, &error);
  g_assert_no_error (error);
  HzRedactor *plain = hz_redactor_new (&error);
  HzRedactor *with_model = hz_redactor_new (&error);
  const gint64 c = hz_store_create_conversation (store, "interleaved", NULL, NULL, &error);
  const gint64 m1 = hz_store_append_message (store, c, 0, HZ_ROLE_USER,
                                             "Please ask Mara Quinley to call me.", NULL, TRUE, &error);
  const gint64 m2 = hz_store_append_message (store, c, 0, HZ_ROLE_USER,
                                             "Please ask Ines Okafor to call me.", NULL, TRUE, &error);
  g_assert_no_error (error);
  Interloper it = { other, plain, m2, 0 };
  hz_redactor_set_model (with_model, interloper_model, &it, NULL);
  g_assert_true (hz_redact_gate_message_full (with_model, store, m1, HZ_REDACT_MODEL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (it.calls, ==, 2);   /* the first analysis was redone */
  g_autoptr (HzMessageRedaction) r1 = hz_store_get_message_redaction (store, m1, &error);
  g_autoptr (HzMessageRedaction) r2 = hz_store_get_message_redaction (store, m2, &error);
  g_assert_cmpstr (r2->redacted, ==, "Please ask [PERSON_1] to call me.");
  g_assert_cmpstr (r1->redacted, ==, "Please ask [PERSON_2] to call me.");
  g_autofree char *back = hz_redact_gate_restore (store, c, r1->redacted, &error);
  g_assert_cmpstr (back, ==, "Please ask Mara Quinley to call me.");
  hz_redactor_free (with_model);
  hz_redactor_free (plain);
  hz_store_close (other);
  hz_store_close (store);
  g_unlink (path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/redact/gate/seeded-store", test_gate);
  g_test_add_func ("/redact/gate/run-full", test_run_full);
  g_test_add_func ("/redact/gate/two-connections", test_two_connections);
  g_test_add_func ("/redact/gate/interleaved", test_interleaved);
  return g_test_run ();
}
