/* tests/learner/test-dataset.c — the learner's datasets: JSONL shapes, the store selection
 * (rated and user-written replies, contexts through parent chains, feedback groups),
 * privacy invariant 2 (raw message text is never read: an SQLite authorizer denies
 * messages.content while the learner reads), the held-out split, and tokenization with
 * the loss on reply tokens only (stories260K from ../shared; skipped when absent). */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include "dataset.h"
#include "hanzo-store-feedback.h"
#include "hanzo-store-learner.h"
#include "hanzo-store-redactions.h"
#include "store-private.h"
#include "hz-test-util.h"

static char *
write_tmp (const char *name, const char *text)
{
  g_autofree char *dir = g_dir_make_tmp ("hz-dataset-XXXXXX", NULL);
  char *path = g_build_filename (dir, name, NULL);
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  return path;
}

static void
test_jsonl (void)
{
  g_autofree char *path = write_tmp ("d.jsonl",
    "{\"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"},"
    " {\"role\": \"user\", \"content\": \"Hi\"}, {\"role\": \"assistant\", \"content\": \"Hello.\"},"
    " {\"role\": \"user\", \"content\": \"Bye\"}, {\"role\": \"assistant\", \"content\": \"Ciao.\"}]}\n"
    "\n"
    "{\"prompt\": \"2+2?\", \"response\": \"4\"}\n"
    "{\"prompt\": \"Pick\", \"chosen\": \"good\", \"rejected\": \"bad\"}\n"
    "{\"prompt\": \"Rate\", \"completion\": \"a\", \"rating\": 1}\n"
    "{\"prompt\": \"Rate\", \"completion\": \"b\", \"rating\": -1}\n"
    "{\"prompt\": \"3+4?\", \"answer\": \"7\"}\n");
  g_autoptr (GError) error = NULL;
  g_autoptr (HzLearnDataset) d = hz_learn_dataset_new ();
  g_assert_true (hz_learn_dataset_load_jsonl (d, path, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (d->records->len, ==, 3);
  const HzLearnRecord *r1 = d->records->pdata[1];
  g_assert_cmpstr (r1->target, ==, "Ciao.");
  g_assert_cmpuint (r1->context->len, ==, 4);
  g_assert_cmpstr (((HzChatMessage *) r1->context->pdata[2])->content, ==, "Hello.");
  g_assert_cmpuint (d->groups->len, ==, 3);
  const HzLearnGroup *pref = d->groups->pdata[0], *rated = d->groups->pdata[1];
  g_assert_cmpuint (pref->replies->len, ==, 2);
  g_assert_cmpfloat (g_array_index (pref->rewards, double, 0), ==, 1.0);
  g_assert_cmpuint (rated->replies->len, ==, 2);
  g_assert_cmpfloat (g_array_index (rated->rewards, double, 1), ==, -1.0);
  g_assert_cmpstr (((HzLearnGroup *) d->groups->pdata[2])->reference, ==, "7");

  g_autofree char *bad = write_tmp ("b.jsonl", "{\"prompt\": \"x\"}\n{\"messages\": [{\"role\": \"bot\", \"content\": \"x\"}]}\n");
  g_assert_false (hz_learn_dataset_load_jsonl (d, bad, &error));
  g_assert_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_FORMAT);
  g_assert_nonnull (strstr (error->message, "line 2"));
}

/* Append a message and its redacted copy (redacted = NULL: none). */
static gint64
add_msg (HzStore *s, gint64 conv, gint64 parent, HzRole role, const char *raw,
         const char *redacted, const char *sha)
{
  g_autoptr (GError) error = NULL;
  const gint64 id = hz_store_append_message (s, conv, parent, role, raw, sha, TRUE, &error);
  g_assert_no_error (error);
  if (redacted)
    {
      g_autoptr (HzMessage) m = hz_store_get_message (s, id, &error);
      HzMessageRedaction r = { .message_id = id, .redacted = (char *) redacted,
                               .redactor_version = 1, .source_updated_us = m->updated_us };
      g_assert_true (hz_store_put_message_redaction (s, &r, &error));
      g_assert_no_error (error);
    }
  return id;
}

static int
deny_raw_content (void *data, int action, const char *a, const char *b, const char *db,
                  const char *trigger)
{
  (void) db; (void) trigger;
  if (action == SQLITE_READ && a && b && g_str_equal (a, "messages") && g_str_equal (b, "content"))
    {
      (*(int *) data)++;
      return SQLITE_DENY;
    }
  return SQLITE_OK;
}

static void
test_store_privacy (void)
{
  g_autofree char *dir = g_dir_make_tmp ("hz-dataset-store-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "hanzo.db", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (HzStore) s = hz_store_open (path, &error);
  g_assert_no_error (error);
  const gint64 c = hz_store_create_conversation (s, "t", "SYSTEM-RAW secret", NULL, &error);
  const char *sha = "ab12";
  const gint64 u1 = add_msg (s, c, 0, HZ_ROLE_USER, "Call Alice at 555-0100", "Call [PERSON_1] at [PHONE_1]", NULL);
  const gint64 a1 = add_msg (s, c, u1, HZ_ROLE_ASSISTANT, "Sure, Alice!", "Sure, [PERSON_1]!", sha);
  const gint64 a1b = add_msg (s, c, u1, HZ_ROLE_ASSISTANT, "No. Alice is busy", "No. [PERSON_1] is busy", sha);
  const gint64 u2 = add_msg (s, c, a1, HZ_ROLE_USER, "Thanks Alice", "Thanks [PERSON_1]", NULL);
  /* a reply the user wrote (no model): a target even unrated */
  add_msg (s, c, u2, HZ_ROLE_ASSISTANT, "You're welcome, Alice", "You're welcome, [PERSON_1]", NULL);
  /* no redacted copy: never used, nor anything below it */
  const gint64 u3 = add_msg (s, c, a1, HZ_ROLE_USER, "Alice RAW-ONLY", NULL, NULL);
  const gint64 a3 = add_msg (s, c, u3, HZ_ROLE_ASSISTANT, "RAW reply", "[redacted reply]", sha);
  g_assert_true (hz_store_set_feedback (s, a1, 1, &error));
  g_assert_true (hz_store_set_feedback (s, a1b, -1, &error));
  g_assert_true (hz_store_set_feedback (s, a3, 1, &error));
  g_assert_no_error (error);

  int denied = 0;
  sqlite3_set_authorizer (hz_store_get_db (s), deny_raw_content, &denied);
  /* the authorizer works: a raw read fails */
  g_autoptr (GPtrArray) raw = hz_store_list_messages (s, c, &error);
  g_assert_null (raw);
  g_clear_error (&error);
  g_assert_cmpint (denied, >, 0);
  denied = 0;

  g_autoptr (HzLearnDataset) d = hz_learn_dataset_new ();
  g_assert_true (hz_learn_dataset_add_from_store (d, s, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (denied, ==, 0);
  sqlite3_set_authorizer (hz_store_get_db (s), NULL, NULL);

  /* records: a1 (rated +1) and the user-written reply; not a1b (-1), not a3 (raw parent) */
  g_assert_cmpuint (d->records->len, ==, 2);
  const HzLearnRecord *r0 = d->records->pdata[0], *r1 = d->records->pdata[1];
  g_assert_cmpint (r0->source_id, ==, a1);
  g_assert_cmpstr (r0->target, ==, "Sure, [PERSON_1]!");
  g_assert_cmpuint (r0->context->len, ==, 1);
  g_assert_cmpstr (((HzChatMessage *) r0->context->pdata[0])->content, ==, "Call [PERSON_1] at [PHONE_1]");
  g_assert_cmpstr (r1->target, ==, "You're welcome, [PERSON_1]");
  g_assert_cmpuint (r1->context->len, ==, 3);
  /* feedback group: the two rated siblings (a preference), a3 left out */
  g_assert_cmpuint (d->groups->len, ==, 1);
  const HzLearnGroup *g = d->groups->pdata[0];
  g_assert_cmpuint (g->replies->len, ==, 2);
  g_assert_cmpfloat (g_array_index (g->rewards, double, 0), ==, 1.0);
  g_assert_cmpfloat (g_array_index (g->rewards, double, 1), ==, -1.0);
  /* nothing raw anywhere */
  for (guint i = 0; i < d->records->len; i++)
    {
      const HzLearnRecord *r = d->records->pdata[i];
      g_assert_null (strstr (r->target, "Alice"));
      for (guint k = 0; k < r->context->len; k++)
        {
          const char *t = ((HzChatMessage *) r->context->pdata[k])->content;
          g_assert_null (strstr (t, "Alice"));
          g_assert_null (strstr (t, "RAW"));
          g_assert_null (strstr (t, "SYSTEM-RAW"));
        }
    }
  /* unrated model replies on request */
  g_autoptr (HzLearnDataset) all = hz_learn_dataset_new ();
  HzLearnStoreOptions opt = { .include_unrated = TRUE };
  g_assert_true (hz_learn_dataset_add_from_store (all, s, &opt, &error));
  g_assert_cmpuint (all->records->len, ==, 2);   /* every model reply here is rated or raw-parented */
  hz_store_close (g_steal_pointer (&s));
  g_autofree char *wal = g_strconcat (path, "-wal", NULL), *shm = g_strconcat (path, "-shm", NULL);
  g_unlink (path); g_unlink (wal); g_unlink (shm); g_rmdir (dir);
}

static void
test_split (void)
{
  g_autoptr (HzLearnDataset) d = hz_learn_dataset_new ();
  GString *text = g_string_new (NULL);
  for (int i = 0; i < 40; i++)
    g_string_append_printf (text, "{\"prompt\": \"p%d\", \"response\": \"r%d\"}\n", i, i);
  g_autofree char *path = write_tmp ("s.jsonl", text->str);
  g_string_free (text, TRUE);
  g_assert_true (hz_learn_dataset_load_jsonl (d, path, NULL));
  HzLearnDataset *tr, *ho, *tr2, *ho2;
  hz_learn_dataset_split (d, 0.2, 7, &tr, &ho);
  hz_learn_dataset_split (d, 0.2, 7, &tr2, &ho2);
  g_assert_cmpuint (tr->records->len + ho->records->len, ==, 40);
  g_assert_cmpuint (ho->records->len, >=, 3);
  g_assert_cmpuint (ho->records->len, <=, 16);
  g_assert_cmpuint (ho->records->len, ==, ho2->records->len);
  for (guint i = 0; i < ho->records->len; i++)
    g_assert_true (ho->records->pdata[i] == ho2->records->pdata[i]);
  hz_learn_dataset_free (tr2);
  hz_learn_dataset_free (ho2);
  hz_learn_dataset_free (tr);   /* records are shared: the held-out set stays valid */
  g_assert_nonnull (((HzLearnRecord *) ho->records->pdata[0])->target);
  hz_learn_dataset_free (ho);
  /* two records: one each side */
  g_autoptr (HzLearnDataset) two = hz_learn_dataset_new ();
  g_autofree char *p2 = write_tmp ("t.jsonl", "{\"prompt\": \"a\", \"response\": \"b\"}\n"
                                             "{\"prompt\": \"c\", \"response\": \"d\"}\n");
  g_assert_true (hz_learn_dataset_load_jsonl (two, p2, NULL));
  hz_learn_dataset_split (two, 0.0, 1, &tr, &ho);
  g_assert_cmpuint (tr->records->len, ==, 1);
  g_assert_cmpuint (ho->records->len, ==, 1);
  hz_learn_dataset_free (tr);
  hz_learn_dataset_free (ho);
}

static void
test_tokenize_masks_prompt (void)
{
  g_autofree char *mpath = hz_test_shared_path ("models/stories260K.gguf");
  if (mpath == NULL)
    return;
  g_autoptr (GError) error = NULL;
  g_autoptr (HzModel) model = hz_model_load (mpath, NULL, &error);
  g_assert_no_error (error);
  g_autofree char *path = write_tmp ("k.jsonl",
    "{\"prompt\": \"Once upon a time\", \"response\": \" there was a cat.\"}\n");
  g_autoptr (HzLearnDataset) d = hz_learn_dataset_new ();
  g_assert_true (hz_learn_dataset_load_jsonl (d, path, &error));
  g_autoptr (HzLearnTokenized) t = hz_learn_dataset_tokenize (d, model, 64);
  g_assert_cmpuint (t->examples->len, ==, 1);
  const HzSftExample *e = &g_array_index (t->examples, HzSftExample, 0);
  gsize np = 0, nr = 0;
  g_autofree int32_t *p = hz_model_tokenize (model, "Once upon a time", -1, TRUE, TRUE, &np);
  g_autofree int32_t *r = hz_model_tokenize (model, " there was a cat.", -1, FALSE, TRUE, &nr);
  /* reply + EOS (no template) are the only targets, right after the prompt */
  g_assert_cmpint (e->n, ==, (int64_t) (np + nr + 1 - 1));
  g_assert_cmpint (t->n_target_tokens, ==, (int64_t) nr + 1);
  for (int64_t k = 0; k < e->n; k++)
    g_assert_cmpint (e->targets[k] >= 0, ==, k >= (int64_t) np - 1);
  g_assert_cmpint (e->targets[e->n - 1], ==, hz_model_eos (model));
  g_assert_cmpmem (e->tokens, np * sizeof (int32_t), p, np * sizeof (int32_t));
  /* an over-long example keeps its reply and loses the start of the prompt */
  g_autoptr (HzLearnTokenized) cut = hz_learn_dataset_tokenize (d, model, (int64_t) nr + 2);
  const HzSftExample *c = &g_array_index (cut->examples, HzSftExample, 0);
  g_assert_cmpint (c->n, <=, (int64_t) nr + 2);
  g_assert_cmpint (cut->n_target_tokens, ==, (int64_t) nr + 1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/learner/dataset/jsonl", test_jsonl);
  g_test_add_func ("/learner/dataset/store-privacy", test_store_privacy);
  g_test_add_func ("/learner/dataset/split", test_split);
  g_test_add_func ("/learner/dataset/tokenize-masks-prompt", test_tokenize_masks_prompt);
  return g_test_run ();
}
