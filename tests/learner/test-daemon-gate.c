/* tests/learner/test-daemon-gate.c — the nightly job runs the redaction gate before it
 * builds its dataset (learner/daemon-job.h), on a real store file holding only raw
 * messages (names, e-mail addresses, phone numbers) and no redacted copies:
 *   - after the job every complete message has its copy (message_redactions), and the
 *     records the job trains and evaluates on (HzLearnerJobConfig.on_dataset) hold
 *     placeholders, never an original; progress covers the gate, then training;
 *   - the gate is cancellable and resumable over 1,200 messages (stop mid-gate: the job
 *     ends INTERRUPTED before any run is recorded; the next job continues);
 *   - a guard model that cannot be loaded: rule-based copies, and the job log (the run's
 *     message) says so;
 *   - the guard model's pass with stories260K (skipped without ../shared): the copies are
 *     marked as made with the model, every model span lies on whole words of the original,
 *     the rules' identifiers are still redacted, and guard_max_messages bounds a job;
 *   - the daemon reads the app's guard model slot (GSettings guard-model-path).
 * Training uses stories260K when present (a few steps); without it the job stops at
 * loading the base model, after the gate and the dataset, which are still checked. */
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "daemon-job.h"
#include "hanzo-store-feedback.h"
#include "hanzo-store-learner.h"
#include "hanzo-store-redactions.h"
#include "hanzo/redact-engine.h"
#include "hanzo/redact-gate.h"
#include "hz-test-util.h"

/* Personal data in the raw messages; none may reach a training record. */
static const char *const originals[] = {
  "Mara Quinley", "mara.quinley@example.org", "Ines Okafor", "ines.okafor@example.net",
  "+44 20 7946 0958", "Tobias Wendrik", "Okafor", "Quinley",
};

typedef struct {
  char *root, *db, *adapters;
} Fixture;

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  (void) data;
  f->root = g_dir_make_tmp ("hz-daemon-gate-XXXXXX", NULL);
  f->db = g_build_filename (f->root, "hanzo.db", NULL);
  f->adapters = g_build_filename (f->root, "adapters", NULL);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  (void) data;
  g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", f->root);
  g_assert_true (g_spawn_command_line_sync (cmd, NULL, NULL, NULL, NULL));
  g_free (f->root);
  g_free (f->db);
  g_free (f->adapters);
}

/* `n` conversations of a user message with personal data and a thumbs-up reply that
 * repeats some of it; returns the number of messages. */
static guint
fill_raw (const char *db, guint n)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (HzStore) s = hz_store_open (db, &error);
  g_assert_no_error (error);
  static const char *const asks[] = {
    "Hi, I am Mara Quinley, mail me at mara.quinley@example.org about the trip.",
    "Please tell Ines Okafor (ines.okafor@example.net) that the meeting moved.",
    "Call Tobias Wendrik on +44 20 7946 0958 and ask about the park.",
  };
  static const char *const replies[] = {
    " Sure, Mara Quinley, I will write to mara.quinley@example.org today.",
    " Done: Ines Okafor will get a note. Okafor said hi.",
    " I will call Tobias Wendrik on +44 20 7946 0958 tonight.",
  };
  g_assert_true (hz_store_begin (s, &error));
  for (guint i = 0; i < n; i++)
    {
      const gint64 c = hz_store_create_conversation (s, "t", NULL, NULL, &error);
      const gint64 u = hz_store_append_message (s, c, 0, HZ_ROLE_USER, asks[i % 3], NULL, TRUE, &error);
      const gint64 a = hz_store_append_message (s, c, u, HZ_ROLE_ASSISTANT, replies[i % 3], "ab",
                                                TRUE, &error);
      g_assert_true (hz_store_set_feedback (s, a, 1, &error));
      g_assert_no_error (error);
    }
  g_assert_true (hz_store_commit (s, &error));
  return 2 * n;
}

static guint
count_copies (const char *db)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (HzStore) s = hz_store_open (db, &error);
  g_autoptr (GPtrArray) copies = hz_store_list_message_redactions (s, 0, &error);
  g_assert_no_error (error);
  return copies->len;
}

static void
assert_no_original (const char *text)
{
  for (gsize k = 0; k < G_N_ELEMENTS (originals); k++)
    if (strstr (text, originals[k]))
      g_error ("\"%s\" reached a training record: %s", originals[k], text);
}

typedef struct {
  GString *text;     /* every context turn and target the job was given */
  guint    records;
} Seen;

static void
append_records (Seen *seen, const HzLearnDataset *d)
{
  for (guint i = 0; i < d->records->len; i++)
    {
      const HzLearnRecord *r = d->records->pdata[i];
      for (guint k = 0; k < r->context->len; k++)
        {
          const HzChatMessage *m = r->context->pdata[k];
          g_string_append_printf (seen->text, "%s: %s\n", m->role, m->content);
        }
      g_string_append_printf (seen->text, "target: %s\n", r->target);
      seen->records++;
    }
}

static void
on_dataset (const HzLearnDataset *train, const HzLearnDataset *heldout, gpointer data)
{
  Seen *seen = data;
  append_records (seen, train);
  append_records (seen, heldout);
}

typedef struct {
  double last, max_gate;
  guint  calls;
  double stop_at;    /* set the stop flag once progress reaches this (0: never) */
  gint  *stop;
} Prog;

static void
on_progress (double fraction, gpointer data)
{
  Prog *p = data;
  g_assert_cmpfloat (fraction, >=, p->last - 1e-12);
  g_assert_cmpfloat (fraction, <=, 1.0 + 1e-12);
  p->last = fraction;
  p->calls++;
  if (fraction <= HZ_LEARNER_JOB_REDACT_SHARE)
    p->max_gate = MAX (p->max_gate, fraction);
  if (p->stop_at > 0 && fraction >= p->stop_at)
    g_atomic_int_set (p->stop, 1);
}

static void
config_init (HzLearnerJobConfig *c, const Fixture *f)
{
  hz_learner_job_config_init (c);
  c->store_path = g_strdup (f->db);
  g_free (c->adapters_dir);
  c->adapters_dir = g_strdup (f->adapters);
  g_free (c->shared_dir);
  c->shared_dir = g_build_filename (f->adapters, "shared", NULL);
  const char *dir = g_getenv ("HZ_SHARED_DIR");
  c->model_path = g_build_filename (dir ? dir : "../shared", "models", "stories260K.gguf", NULL);
  c->job.steps = 2;
  c->job.batch = 2;
  c->job.max_tokens = 64;
  c->job.checkpoint_every = 0;
}

/* ------------------------------------------------------------------ the night's job */

static void
test_job_redacts (Fixture *f, gconstpointer data)
{
  (void) data;
  const guint n_msgs = fill_raw (f->db, 12);
  g_assert_cmpuint (count_copies (f->db), ==, 0);
  HzLearnerJobConfig c;
  config_init (&c, f);
  Seen seen = { g_string_new (NULL), 0 };
  c.on_dataset = on_dataset;
  c.on_dataset_data = &seen;
  const gboolean have_model = g_file_test (c.model_path, G_FILE_TEST_EXISTS);
  gint stop = 0;
  Prog prog = { 0 };
  HzLearnerJobOutcome outcome;
  g_autofree char *adapter = NULL;
  gint64 run_id = 0;
  g_autoptr (GError) error = NULL;
  const gboolean ok = hz_learner_job_run (&c, &stop, on_progress, &prog, &outcome, &adapter,
                                          &run_id, &error);
  if (have_model)
    {
      g_assert_no_error (error);
      g_assert_true (ok);
      g_assert_true (outcome == HZ_LEARNER_JOB_PROMOTED || outcome == HZ_LEARNER_JOB_REJECTED);
      g_assert_cmpint (run_id, >, 0);
      g_assert_cmpfloat (prog.last, ==, 1.0);   /* training's last step */
    }
  else
    {
      g_test_message ("stories260K not in ../shared: the job stops at loading the base model "
                      "(gate and dataset checked, training skipped)");
      g_assert_false (ok);
      g_assert_nonnull (error);
    }
  /* the gate ran first: its share of the progress, then every message has its copy */
  g_assert_cmpfloat (prog.max_gate, ==, HZ_LEARNER_JOB_REDACT_SHARE);
  g_assert_cmpuint (count_copies (f->db), ==, n_msgs);
  /* what the job was given: placeholders, never the originals */
  g_assert_cmpuint (seen.records, ==, n_msgs / 2);
  g_test_message ("first records:\n%.*s", 400, seen.text->str);
  assert_no_original (seen.text->str);
  g_assert_nonnull (strstr (seen.text->str, "[PERSON_1]"));
  g_assert_nonnull (strstr (seen.text->str, "[EMAIL_1]"));
  g_assert_nonnull (strstr (seen.text->str, "[PHONE_1]"));
  /* one conversation's numbering: the reply reuses the user message's placeholders */
  g_assert_nonnull (strstr (seen.text->str, "target:  Sure, [PERSON_1], I will write to [EMAIL_1] today."));
  /* a second job finds nothing left to redact */
  HzLearnerGateReport rep;
  g_autoptr (HzStore) s = hz_store_open (f->db, &error);
  g_assert_true (hz_learner_job_redact (&c, s, NULL, NULL, NULL, &rep, &error));
  g_assert_cmpuint (rep.redacted, ==, 0);
  g_assert_false (rep.model_used);
  hz_learner_gate_report_clear (&rep);
  g_string_free (seen.text, TRUE);
  hz_learner_job_config_clear (&c);
}

/* Stop in the middle of the gate, then resume: thousands of messages, one commit each. */
static void
test_stop_resume (Fixture *f, gconstpointer data)
{
  (void) data;
  const guint n_msgs = fill_raw (f->db, 600);
  HzLearnerJobConfig c;
  config_init (&c, f);
  Seen seen = { g_string_new (NULL), 0 };
  c.on_dataset = on_dataset;
  c.on_dataset_data = &seen;
  gint stop = 0;
  Prog prog = { .stop_at = 0.3 * HZ_LEARNER_JOB_REDACT_SHARE, .stop = &stop };
  HzLearnerJobOutcome outcome;
  g_autofree char *adapter = NULL;
  gint64 run_id = 0;
  g_autoptr (GError) error = NULL;
  g_assert_true (hz_learner_job_run (&c, &stop, on_progress, &prog, &outcome, &adapter, &run_id,
                                     &error));
  g_assert_no_error (error);
  g_assert_cmpint (outcome, ==, HZ_LEARNER_JOB_INTERRUPTED);
  g_assert_cmpint (run_id, ==, 0);
  g_assert_cmpuint (seen.records, ==, 0);   /* no dataset from a half-redacted store */
  const guint first = count_copies (f->db);
  g_test_message ("stopped after %u of %u messages (%u progress reports)", first, n_msgs, prog.calls);
  g_assert_cmpuint (first, >, 0);
  g_assert_cmpuint (first, <, n_msgs);
  /* the next job continues where the gate stopped (training not needed for that) */
  g_autoptr (HzStore) s = hz_store_open (f->db, &error);
  HzLearnerGateReport rep;
  g_atomic_int_set (&stop, 0);
  g_assert_true (hz_learner_job_redact (&c, s, &stop, NULL, NULL, &rep, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (rep.redacted, ==, n_msgs - first);
  g_assert_false (rep.stopped);
  hz_learner_gate_report_clear (&rep);
  g_assert_cmpuint (count_copies (f->db), ==, n_msgs);
  g_string_free (seen.text, TRUE);
  hz_learner_job_config_clear (&c);
}

/* ------------------------------------------------------------------ guard model */

/* A guard model that cannot be loaded: rule-based copies all the same, and the log says so. */
static void
test_guard_fallback (Fixture *f, gconstpointer data)
{
  (void) data;
  const guint n_msgs = fill_raw (f->db, 6);
  HzLearnerJobConfig c;
  config_init (&c, f);
  c.guard_model_path = g_build_filename (f->root, "not-a-model.gguf", NULL);
  g_assert_true (g_file_set_contents (c.guard_model_path, "this is not a GGUF file", -1, NULL));
  Seen seen = { g_string_new (NULL), 0 };
  c.on_dataset = on_dataset;
  c.on_dataset_data = &seen;
  gint stop = 0;
  HzLearnerJobOutcome outcome;
  g_autofree char *adapter = NULL;
  gint64 run_id = 0;
  g_autoptr (GError) error = NULL;
  const gboolean ok = hz_learner_job_run (&c, &stop, NULL, NULL, &outcome, &adapter, &run_id,
                                          &error);
  g_assert_cmpuint (count_copies (f->db), ==, n_msgs);
  g_assert_cmpuint (seen.records, ==, n_msgs / 2);
  assert_no_original (seen.text->str);
  g_autoptr (HzStore) s = hz_store_open (f->db, &error);
  g_autoptr (GPtrArray) copies = hz_store_list_message_redactions (s, 0, NULL);
  for (guint i = 0; i < copies->len; i++)
    g_assert_cmpint (((HzMessageRedaction *) copies->pdata[i])->redactor_version, ==,
                     hz_redact_gate_copy_version (FALSE));
  if (ok)
    {
      /* the job log: the run's message */
      g_autoptr (HzLearnerRun) run = hz_store_learner_run_get (s, run_id, &error);
      g_assert_no_error (error);
      g_test_message ("run message: %s", run->message);
      g_assert_nonnull (strstr (run->message, "not-a-model.gguf"));
      g_assert_nonnull (strstr (run->message, "rule-based redactor only"));
    }
  else
    g_test_message ("stories260K not in ../shared: run record not checked (%s)", error->message);
  /* the gate itself reports it too, and the copies are current for a rules-only gate */
  g_clear_error (&error);
  HzLearnerGateReport rep;
  g_assert_true (hz_learner_job_redact (&c, s, NULL, NULL, NULL, &rep, &error));
  g_assert_false (rep.model_used);
  g_assert_nonnull (rep.note);
  g_assert_nonnull (strstr (rep.note, "rule-based redactor only"));
  g_assert_cmpuint (rep.redacted, ==, 0);
  hz_learner_gate_report_clear (&rep);
  g_string_free (seen.text, TRUE);
  hz_learner_job_config_clear (&c);
}

static gboolean
is_word_byte (char ch)
{
  return g_ascii_isalnum (ch) || ch == '_' || (guchar) ch >= 0x80;
}

/* The guard model's pass with a real (tiny, junk-answering) model. */
static void
test_guard_model (Fixture *f, gconstpointer data)
{
  (void) data;
  g_autofree char *guard = hz_test_shared_path ("models/stories260K.gguf");
  if (guard == NULL)
    return;
  const guint n_msgs = fill_raw (f->db, 4);
  HzLearnerJobConfig c;
  config_init (&c, f);
  c.guard_model_path = g_strdup (guard);
  c.guard_max_messages = 5;
  /* the redactor's prompt (~440 tokens) does not fit stories260K's training context of 128
   * tokens: give it a larger one (beyond its training length it answers junk, which is
   * what this test wants to see rejected) */
  c.guard_model_tokens = 32;
  c.guard_model_ctx = 640;
  g_autoptr (GError) error = NULL;
  g_autoptr (HzStore) s = hz_store_open (f->db, &error);
  HzLearnerGateReport rep;
  Prog prog = { 0 };
  g_assert_true (hz_learner_job_redact (&c, s, NULL, on_progress, &prog, &rep, &error));
  g_assert_no_error (error);
  g_assert_true (rep.model_used);
  g_assert_null (rep.note);
  g_assert_cmpuint (rep.redacted, ==, n_msgs);          /* rules first, for every message */
  g_assert_cmpuint (rep.redacted_model, ==, 5);         /* then the model, bounded per job */
  g_assert_cmpfloat (prog.last, ==, 1.0);
  hz_learner_gate_report_clear (&rep);
  /* the model is really asked: its answer for one message (junk from a story model) */
  {
    g_autoptr (HzModel) model = hz_model_load (guard, NULL, &error);
    g_assert_no_error (error);
    HzContextParams cp;
    hz_context_params_init (&cp);
    cp.n_ctx = c.guard_model_ctx;
    g_autoptr (HzContext) ctx = hz_context_new (model, &cp, &error);
    g_autofree char *prompt = hz_redactor_model_prompt ("Call Tobias Wendrik on +44 20 7946 0958.");
    g_autofree char *answer = hz_redact_engine_ask (ctx, prompt, 32, &error);
    g_assert_no_error (error);
    g_test_message ("guard model answers: %s", answer);
  }
  /* the next job does the rest with the model, and then nothing is left */
  g_assert_true (hz_learner_job_redact (&c, s, NULL, NULL, NULL, &rep, &error));
  g_assert_cmpuint (rep.redacted, ==, 0);
  g_assert_cmpuint (rep.redacted_model, ==, n_msgs - 5);
  hz_learner_gate_report_clear (&rep);
  g_assert_true (hz_learner_job_redact (&c, s, NULL, NULL, NULL, &rep, &error));
  g_assert_cmpuint (rep.redacted + rep.redacted_model, ==, 0);
  hz_learner_gate_report_clear (&rep);

  g_autoptr (GPtrArray) copies = hz_store_list_message_redactions (s, 0, &error);
  g_assert_cmpuint (copies->len, ==, n_msgs);
  guint model_spans = 0;
  for (guint i = 0; i < copies->len; i++)
    {
      const HzMessageRedaction *r = copies->pdata[i];
      g_assert_cmpint (r->redactor_version, ==, hz_redact_gate_copy_version (TRUE));
      /* the rules' identifiers are redacted whatever the model said */
      assert_no_original (r->redacted);
      g_autoptr (HzMessage) m = hz_store_get_message (s, r->message_id, &error);
      const gsize len = strlen (m->content);
      g_autoptr (JsonParser) p = json_parser_new ();
      g_assert_true (json_parser_load_from_data (p, r->spans_json, -1, &error));
      JsonArray *spans = json_node_get_array (json_parser_get_root (p));
      for (guint k = 0; k < json_array_get_length (spans); k++)
        {
          JsonObject *o = json_array_get_object_element (spans, k);
          const gint64 b0 = json_object_get_int_member (o, "start_byte");
          const gint64 b1 = json_object_get_int_member (o, "end_byte");
          g_assert_cmpint (b0, >=, 0);
          g_assert_cmpint (b0, <, b1);
          g_assert_cmpint (b1, <=, (gint64) len);
          if (!g_str_equal (json_object_get_string_member (o, "recognizer"), "model"))
            continue;
          /* a span the model proposed was verified: whole words of the original text */
          model_spans++;
          g_test_message ("model span kept: \"%.*s\"", (int) (b1 - b0), m->content + b0);
          g_assert_true (b0 == 0 || !is_word_byte (m->content[b0 - 1]));
          g_assert_true ((gsize) b1 == len || !is_word_byte (m->content[b1]));
        }
    }
  g_test_message ("%u spans of the guard model kept in %u copies", model_spans, copies->len);
  hz_learner_job_config_clear (&c);
}

/* The daemon's guard model is the app's slot (GSettings). */
static void
test_guard_setting (void)
{
  g_autoptr (GSettingsSchema) schema = g_settings_schema_source_get_default ()
    ? g_settings_schema_source_lookup (g_settings_schema_source_get_default (), "ai.hanzo.Desktop", TRUE)
    : NULL;
  if (schema == NULL)
    {
      g_test_skip ("the ai.hanzo.Desktop schema is not compiled (set HZ_BUILD_DIR)");
      return;
    }
  g_autoptr (GSettings) settings = g_settings_new ("ai.hanzo.Desktop");
  g_settings_set_string (settings, "guard-model-path", "");
  g_assert_null (hz_learner_guard_model_from_settings ());
  g_settings_set_string (settings, "guard-model-path", "/models/guard.gguf");
  g_autofree char *path = hz_learner_guard_model_from_settings ();
  g_assert_cmpstr (path, ==, "/models/guard.gguf");
  g_settings_reset (settings, "guard-model-path");
}

int
main (int argc, char **argv)
{
  /* GSettings in memory, with the schema compiled in the build tree */
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);
  if (g_getenv ("HZ_BUILD_DIR"))
    {
      g_autofree char *schemas = g_build_filename (g_getenv ("HZ_BUILD_DIR"), "data", NULL);
      g_setenv ("GSETTINGS_SCHEMA_DIR", schemas, TRUE);
    }
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/learner/daemon-gate/job-redacts", Fixture, NULL, fixture_set_up, test_job_redacts,
              fixture_tear_down);
  g_test_add ("/learner/daemon-gate/stop-resume", Fixture, NULL, fixture_set_up, test_stop_resume,
              fixture_tear_down);
  g_test_add ("/learner/daemon-gate/guard-fallback", Fixture, NULL, fixture_set_up,
              test_guard_fallback, fixture_tear_down);
  g_test_add ("/learner/daemon-gate/guard-model", Fixture, NULL, fixture_set_up,
              test_guard_model, fixture_tear_down);
  g_test_add_func ("/learner/daemon-gate/guard-setting", test_guard_setting);
  return g_test_run ();
}
