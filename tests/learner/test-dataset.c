/* tests/learner/test-dataset.c — the learner's datasets: JSONL shapes, the store selection
 * (rated and user-written replies, contexts through parent chains, feedback groups),
 * privacy invariant 2 (raw message text is never read: an SQLite authorizer denies
 * messages.content while the learner reads), the held-out split, and tokenization with
 * the loss on reply tokens only (stories260K from ../shared; skipped when absent); control
 * text typed into a context or a reply is trained on as text, for the chat families of
 * tests/family-vocab.h (issue 20). */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <json-glib/json-glib.h>
#include "dataset.h"
#include "hanzo-store-feedback.h"
#include "hanzo-store-learner.h"
#include "hanzo-store-redactions.h"
#include "store-private.h"
#include "hz-test-util.h"
#include "family-vocab.h"
#include "jinja.h"
#include "thinking-model.h"

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
  g_autoptr (HzLearnTokenized) t = hz_learn_dataset_tokenize (d, model, 64, &error);
  g_assert_no_error (error);
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
  g_autoptr (HzLearnTokenized) cut = hz_learn_dataset_tokenize (d, model, (int64_t) nr + 2,
                                                                 &error);
  g_assert_no_error (error);
  const HzSftExample *c = &g_array_index (cut->examples, HzSftExample, 0);
  g_assert_cmpint (c->n, <=, (int64_t) nr + 2);
  g_assert_cmpint (cut->n_target_tokens, ==, (int64_t) nr + 1);
}


/* A record whose user turn and reply type the family's control texts (a user who wrote
 * or edited the reply): the example's input holds only the markup's control tokens, the
 * prompt and the reply are the oracle's tokens (tests/family-vocab.h) of the context's
 * rendering and of the rest of the full rendering, and the loss covers exactly the
 * reply's tokens. The same in a feedback group (GRPO). */
static void
test_tokenize_typed_controls (gconstpointer data)
{
  const HzFamily *f = data;
  g_autoptr (HzModel) model = hz_family_vocab_load (f);
  if (model == NULL)
    return;
  g_autoptr (GError) error = NULL;

  /* {"messages": [system, user, assistant]} and {"prompt", "chosen", "rejected"} */
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "messages");
  json_builder_begin_array (b);
  const char *roles[] = { "system", "user", "assistant" };
  const char *texts[] = { "Be brief.", f->typed, f->typed };
  for (int i = 0; i < 3; i++)
    {
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "role");
      json_builder_add_string_value (b, roles[i]);
      json_builder_set_member_name (b, "content");
      json_builder_add_string_value (b, texts[i]);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  g_autoptr (JsonNode) messages = json_builder_get_root (b);
  json_builder_reset (b);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "prompt");
  json_builder_add_string_value (b, "Pick");
  json_builder_set_member_name (b, "chosen");
  json_builder_add_string_value (b, f->typed);
  json_builder_set_member_name (b, "rejected");
  json_builder_add_string_value (b, "no");
  json_builder_end_object (b);
  g_autoptr (JsonNode) pair = json_builder_get_root (b);
  g_autofree char *l1 = json_to_string (messages, FALSE), *l2 = json_to_string (pair, FALSE);
  g_autofree char *all = g_strdup_printf ("%s\n%s\n", l1, l2);
  g_autofree char *path = write_tmp ("typed.jsonl", all);
  g_autoptr (HzLearnDataset) d = hz_learn_dataset_new ();
  g_assert_true (hz_learn_dataset_load_jsonl (d, path, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (d->records->len, >=, 1);
  const HzLearnRecord *rec = d->records->pdata[0];

  /* the oracle's prompt and reply */
  const HzChatMessage ctx[] = { { "system", "Be brief." }, { "user", f->typed } };
  const HzChatMessage full[] = { ctx[0], ctx[1], { "assistant", f->typed } };
  g_autoptr (HzPrompt) pp = hz_family_render (model, ctx, 2, TRUE);
  g_autoptr (HzPrompt) fp = hz_family_render (model, full, 3, FALSE);
  gsize plen = 0;
  const char *ptext = hz_prompt_text (pp, &plen);
  g_assert_true (g_str_has_prefix (hz_prompt_text (fp, NULL), ptext));
  g_autoptr (HzPrompt) rest = hz_prompt_tail (fp, plen);
  guint pc = 0, rc = 0;
  g_autoptr (GArray) want_p = hz_family_oracle (model, f, pp, TRUE, &pc);
  g_autoptr (GArray) want_r = hz_family_oracle (model, f, rest, FALSE, &rc);

  g_autoptr (HzLearnTokenized) t = hz_learn_dataset_tokenize (d, model, 4096, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (t->examples->len, ==, 1);
  const HzSftExample *e = &g_array_index (t->examples, HzSftExample, 0);
  const int64_t np = want_p->len, nr = want_r->len;
  g_assert_cmpint (e->n, ==, np + nr - 1);
  g_assert_cmpint (t->n_target_tokens, ==, nr);
  g_assert_cmpmem (e->tokens, np * sizeof (int32_t), want_p->data, np * sizeof (int32_t));
  for (int64_t k = 0; k < e->n; k++)
    {
      g_assert_cmpint (e->targets[k] >= 0, ==, k >= np - 1);   /* the loss mask */
      if (k >= np - 1)
        g_assert_cmpint (e->targets[k], ==, g_array_index (want_r, int32_t, k - (np - 1)));
      if (k >= np)
        g_assert_cmpint (e->tokens[k], ==, g_array_index (want_r, int32_t, k - np));
    }
  /* control tokens: the markup's only (the reply's last one, its end of turn, is a
   * target and not an input) */
  const guint in_controls = hz_family_count_controls (model, f, e->tokens, e->n);
  const guint last_is_control = hz_family_is_control (model, f, g_array_index (want_r, int32_t, nr - 1));
  g_assert_cmpuint (in_controls, ==, pc + rc - last_is_control);
  g_test_message ("%s: %" G_GINT64_FORMAT " prompt + %" G_GINT64_FORMAT " reply tokens, %u "
                  "control tokens in the prompt, %u in the reply (the template's)", f->name,
                  np, nr, pc, rc);

  /* the context of a feedback group is the same prompt */
  g_autoptr (GPtrArray) groups = hz_learn_dataset_feedback_groups (d, model, 4096, &error);
  g_assert_no_error (error);
  int64_t ngp = 0;
  g_autofree int32_t *gprompt = hz_learn_context_tokens (model, rec->context, &ngp, NULL,
                                                         &error);
  g_assert_no_error (error);
  g_assert_cmpint (ngp, ==, np);
  g_assert_cmpmem (gprompt, ngp * sizeof (int32_t), want_p->data, np * sizeof (int32_t));
  g_assert_cmpuint (groups->len, ==, 1);
}

/* A template that refuses a record (Gemma's "System role not supported"): the
 * tokenization fails with the template's message, naming the record; nothing is trained
 * on a prompt in another format. */
static void
test_tokenize_template_refuses (void)
{
  const HzFamily refusing = {
    "refusing", HZ_CHAT_TEMPLATE_GEMMA, "golden/tokenizer/ggml-vocab-llama-spm.gguf",
    "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}"
    "{% endif %}{% for m in messages %}<start_of_turn>{{ m['role'] }}\n{{ m['content'] }}"
    "<end_of_turn>\n{% endfor %}", { NULL }, { NULL }, { NULL }, "" };
  g_autoptr (HzModel) model = hz_family_vocab_load (&refusing);
  if (model == NULL)
    return;
  g_autoptr (GError) error = NULL;
  g_autofree char *path = write_tmp ("refused.jsonl",
    "{\"prompt\": \"hi\", \"response\": \"hello\"}\n"
    "{\"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"}, "
    "{\"role\": \"user\", \"content\": \"hi\"}, "
    "{\"role\": \"assistant\", \"content\": \"hello\"}]}\n");
  g_autoptr (HzLearnDataset) d = hz_learn_dataset_new ();
  g_assert_true (hz_learn_dataset_load_jsonl (d, path, &error));
  g_assert_no_error (error);
  g_autoptr (HzLearnTokenized) t = hz_learn_dataset_tokenize (d, model, 4096, &error);
  g_assert_null (t);
  g_assert_error (error, HZ_JINJA_ERROR, HZ_JINJA_ERROR_RAISED);
  g_assert_true (g_str_has_prefix (error->message, "record 2: "));
  g_assert_nonnull (strstr (error->message, "TemplateError: System role not supported"));
  g_test_message ("%s", error->message);
}

/* The reply tokens of example `e` (those with a target) as text, control tokens included. */
static char *
target_text (HzModel *model, const HzSftExample *e)
{
  g_autoptr (GArray) ids = g_array_new (FALSE, FALSE, sizeof (int32_t));
  for (int64_t k = 0; k < e->n; k++)
    if (e->targets[k] >= 0)
      g_array_append_val (ids, e->targets[k]);
  return hz_model_detokenize (model, (const HzToken *) (void *) ids->data, ids->len, TRUE);
}

/* A thinking model's reasoning is never trained on (issue 23): with Qwen3's vocabulary and
 * template, replies written with "<think>…</think>" give targets that are their answers
 * as the template writes an answer (its empty "<think>\n\n</think>\n\n" for thinking
 * off, then the answer and the end of turn), and no example's input holds an earlier
 * reply's reasoning; the same for a preference pair (GRPO). The template alone would have
 * put the reasoning into the reply's part. */
static void
test_tokenize_no_reasoning (void)
{
  g_autofree char *src = hz_test_source_file (QWEN3_TEMPLATE);
  g_autoptr (HzModel) model = hz_qwen3_vocab_load (src);
  if (model == NULL)
    return;
  g_autoptr (GError) error = NULL;
  g_assert_cmpint (hz_model_reasoning_format (model), ==, HZ_REASONING_THINK);

  static const char conversation[] =
    "{\"messages\": [{\"role\": \"user\", \"content\": \"What is 2+2?\"}, "
    "{\"role\": \"assistant\", \"content\": \"<think>\\nSECRET one\\n</think>\\n\\n4\"}, "
    "{\"role\": \"user\", \"content\": \"And 3+3?\"}, "
    "{\"role\": \"assistant\", \"content\": \"<think>\\nSECRET two\\n</think>\\n\\n6\"}]}";
  g_autofree char *all = g_strdup_printf ("%s\n{\"prompt\": \"Pick\", \"chosen\": "
                                          "\"<think>SECRET three</think>good\", "
                                          "\"rejected\": \"bad\"}\n", conversation);
  g_autofree char *path = write_tmp ("thinking.jsonl", all);
  g_autoptr (HzLearnDataset) d = hz_learn_dataset_new ();
  g_assert_true (hz_learn_dataset_load_jsonl (d, path, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (d->records->len, ==, 2);

  /* before: Qwen3's template itself writes the last reply's reasoning into it */
  g_autoptr (HzJinjaTemplate) t = hz_jinja_template_new (src, -1, &error);
  g_autoptr (JsonParser) jp = json_parser_new ();
  g_assert_true (json_parser_load_from_data (jp, conversation, -1, &error));
  g_autofree char *raw = hz_jinja_template_render (t, json_node_get_object (
                                                     json_parser_get_root (jp)), NULL, NULL,
                                                   &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (raw, "SECRET two"));

  g_autoptr (HzLearnTokenized) tok = hz_learn_dataset_tokenize (d, model, 4096, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (tok->examples->len, ==, 2);
  const char *const want[] = { "<think>\n\n</think>\n\n4<|im_end|>\n",
                               "<think>\n\n</think>\n\n6<|im_end|>\n" };
  for (guint i = 0; i < 2; i++)
    {
      const HzSftExample *e = &g_array_index (tok->examples, HzSftExample, i);
      g_autofree char *target = target_text (model, e);
      g_autofree char *input = hz_model_detokenize (model, e->tokens, e->n, TRUE);
      g_test_message ("example %u: target %s", i + 1, target);
      g_assert_cmpstr (target, ==, want[i]);
      g_assert_null (strstr (input, "SECRET"));
    }
  g_autoptr (GPtrArray) groups = hz_learn_dataset_feedback_groups (d, model, 4096, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (groups->len, ==, 1);
  const HzGrpoGroup *g = groups->pdata[0];
  for (int i = 0; i < g->n; i++)
    {
      g_autofree char *text = hz_model_detokenize (model, g->tokens + g->offsets[i],
                                                   g->offsets[i + 1] - g->offsets[i], TRUE);
      g_assert_null (strstr (text, "SECRET"));
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/learner/dataset/jsonl", test_jsonl);
  g_test_add_func ("/learner/dataset/template-refuses", test_tokenize_template_refuses);
  g_test_add_func ("/learner/dataset/store-privacy", test_store_privacy);
  g_test_add_func ("/learner/dataset/split", test_split);
  g_test_add_func ("/learner/dataset/tokenize-masks-prompt", test_tokenize_masks_prompt);
  g_test_add_func ("/learner/dataset/no-reasoning-in-targets", test_tokenize_no_reasoning);
  for (guint i = 0; i < G_N_ELEMENTS (hz_families); i++)
    {
      g_autofree char *name = g_strdup_printf ("/learner/dataset/typed-controls/%s",
                                               hz_families[i].name);
      g_test_add_data_func (name, &hz_families[i], test_tokenize_typed_controls);
    }
  return g_test_run ();
}
