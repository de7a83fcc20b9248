/* tests/learner/test-federation.c — hanzo-learner's federation over real loopback HTTP
 * (issue 8 item 4; learner/federation.h). Three simulated users, each with their own store
 * and adapters, run the nightly job with federation on (GSettings federation-enabled, in a
 * memory backend): the job trains with DP-SGD and its ledger row's epsilon is the
 * accountant's for (q, z, steps); after the promotion the daemon's federation step makes a
 * DP release and uploads it to hanzo-aggregator's server (in a thread of this process,
 * 127.0.0.1, port 0) with user 0's endpoint and token from the Secret Service (run under
 * tests/egress/with-keyring.sh; explicit credentials when no keyring is reachable); the
 * round closes when all three uploaded, every client fetches the aggregate and saves it as
 * the shared base adapter, which loads as a PEFT adapter and becomes the next night's
 * starting point. Every upload is in the egress log with its ledger row, and the adapter's
 * config is the one `hanzo-aggregator --llama` builds. With federation off (or an adapter
 * not trained with DP-SGD) nothing is sent.
 * Needs ../shared/models/stories260K.gguf (skipped without it). */
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include "accountant.h"
#include "adapter-io.h"
#include "aggregator.h"
#include "credentials.h"
#include "daemon-job.h"
#include "egress-test-util.h"
#include "hanzo-store-learner.h"
#include "hz-test-util.h"
#include "learner-test-store.h"

#define N_USERS 3
#define DP_Z 0.1
#define DP_C 1.0
#define DP_Q 0.5
#define STEPS 30

typedef struct {
  HzDeltaConfig *cfg;
  HzAggregator  *agg;
} Server;

static guint
server_setup (gpointer p)
{
  Server *s = p;
  HzAggregatorOptions o = HZ_AGGREGATOR_OPTIONS_DEFAULT;
  o.min_clients = N_USERS;
  o.max_norm = 1e7;   /* the noised release's norm is about z_u C_u sqrt(n) */
  g_autoptr (GError) error = NULL;
  s->agg = hz_aggregator_new (s->cfg, &o, &error);
  g_assert_no_error (error);
  return hzt_aggregator_start (s->agg, "user", N_USERS);
}

static gboolean
server_teardown (gpointer p)
{
  hz_aggregator_free (((Server *) p)->agg);
  return G_SOURCE_REMOVE;
}

typedef struct {
  HzLearnerJobConfig cfg;
  char              *adapter;
  HzFedOutcome       out;
  gboolean           done, ok;
  char              *message;
} User;

static void
on_federated (GObject *src, GAsyncResult *res, gpointer data)
{
  (void) src;
  User *u = data;
  g_autoptr (GError) error = NULL;
  u->ok = hz_learner_federate_finish (res, &u->out, &error);
  u->message = error ? g_strdup (error->message) : NULL;
  u->done = TRUE;
}

static guint
count_egress (const char *store_path)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (HzStore) s = hz_store_open (store_path, &error);
  g_assert_no_error (error);
  g_autoptr (GPtrArray) log = hz_store_list_egress_log (s, 0, 1000, &error);
  g_assert_no_error (error);
  return log->len;
}

/* The job's DP-SGD ledger row: its epsilon is the accountant's for (q, z, steps). */
static void
check_training_ledger (const char *store_path)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (HzStore) s = hz_store_open (store_path, &error);
  g_autoptr (GPtrArray) rows = hz_store_list_privacy_ledger (s, 0, &error);
  g_assert_no_error (error);
  const HzPrivacyLedgerEntry *e = NULL;
  for (guint i = 0; i < rows->len; i++)
    if (((HzPrivacyLedgerEntry *) rows->pdata[i])->mechanism == HZ_PRIVACY_MECH_DP_SGD)
      e = rows->pdata[i];
  g_assert_nonnull (e);
  g_assert_cmpint (e->steps, ==, STEPS);
  g_assert_cmpfloat (e->q, ==, DP_Q);
  g_assert_cmpfloat (e->noise_multiplier, ==, DP_Z);
  g_assert_cmpfloat (e->clip_norm, ==, DP_C);
  gsize n;
  const double *orders = hz_rdp_default_orders (&n);
  g_autofree double *rdp = g_new (double, n);
  hz_rdp_compute (DP_Q, DP_Z, STEPS, orders, n, rdp);
  const double want = hz_rdp_to_epsilon (orders, rdp, n, e->delta, NULL);
  g_assert_cmpfloat (fabs (e->epsilon - want), <=, 1e-9 * want);
  g_assert_cmpfloat (fabs (hz_dp_sgd_epsilon (DP_Q, DP_Z, STEPS, e->delta, NULL) - want), <=,
                     1e-12 * want);
  HzDpSpent spent;
  g_assert_true (hz_dp_spent (s, NULL, HZ_PRIVACY_MECH_DP_SGD, &spent, &error));
  g_assert_cmpfloat (fabs (spent.epsilon - want), <=, 1e-9 * want);
  g_test_message ("DP-SGD night: q %.2f, z %.2f, %d steps -> epsilon %.4g at delta %g", DP_Q,
                  DP_Z, STEPS, e->epsilon, e->delta);
}

/* Every upload in the log has its ledger row; the round's aggregate was downloaded. */
static void
check_egress_log (const char *store_path, const HzFedOutcome *out)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (HzStore) s = hz_store_open (store_path, &error);
  g_autoptr (GPtrArray) log = hz_store_list_egress_log (s, 0, 1000, &error);
  g_assert_no_error (error);
  guint uploads_ok = 0, downloads_ok = 0;
  for (guint i = 0; i < log->len; i++)
    {
      const HzEgressLogEntry *e = log->pdata[i];
      if (e->direction == HZ_EGRESS_UPLOAD)
        {
          g_assert_nonnull (e->release_id);
          g_autoptr (HzPrivacyLedgerEntry) row = hz_store_get_privacy_release (s, e->release_id,
                                                                               &error);
          g_assert_no_error (error);
          g_assert_nonnull (row);
          g_assert_cmpstr (row->payload_sha256, ==, e->payload_sha256);
          uploads_ok += e->status == HZ_EGRESS_STATUS_OK;
          g_assert_cmpstr (e->release_id, ==, out->release_id);
          g_assert_cmpint (e->bytes, ==, (gint64) out->upload_bytes);
        }
      else if (e->status == HZ_EGRESS_STATUS_OK && e->round_id == (gint64) out->round_id
               && e->payload_sha256 != NULL && e->bytes > 1000)
        downloads_ok++;
    }
  g_assert_cmpuint (uploads_ok, ==, 1);
  g_assert_cmpuint (downloads_ok, >=, 1);
  g_assert_cmpint (hz_store_count_unledgered_uploads (s, &error), ==, 0);
}

static void
test_round (void)
{
  g_autofree char *model = hz_test_shared_path ("models/stories260K.gguf");
  if (model == NULL)
    return;
  g_autoptr (GError) error = NULL;
  g_autoptr (GSettings) settings = g_settings_new ("ai.hanzo.Desktop");
  g_settings_set_boolean (settings, "federation-enabled", TRUE);
  g_assert_true (hz_learner_federation_enabled ());
  g_autofree char *root = g_dir_make_tmp ("hz-fed-XXXXXX", &error);
  g_assert_no_error (error);
  static const char *const signs[N_USERS] = { "Bob", "Zed", "Kim" };
  User users[N_USERS] = { 0 };

  /* each user's night: DP-SGD training, promotion */
  for (int i = 0; i < N_USERS; i++)
    {
      User *u = &users[i];
      g_autofree char *dir = g_strdup_printf ("%s/user-%d", root, i);
      g_mkdir_with_parents (dir, 0700);
      hz_learner_job_config_init (&u->cfg);
      u->cfg.store_path = g_build_filename (dir, "hanzo.db", NULL);
      u->cfg.model_path = g_strdup (model);
      g_free (u->cfg.adapters_dir);
      g_free (u->cfg.shared_dir);
      u->cfg.adapters_dir = g_build_filename (dir, "adapters", NULL);
      u->cfg.shared_dir = g_build_filename (u->cfg.adapters_dir, "shared", NULL);
      u->cfg.job.steps = STEPS;
      u->cfg.job.checkpoint_every = 0;
      u->cfg.job.sft.adamw.lr = 5e-3;
      u->cfg.job.dp_sgd = hz_learner_federation_enabled ();   /* as the daemon does */
      u->cfg.job.dp.sample_rate = DP_Q;
      u->cfg.job.dp.noise_multiplier = DP_Z;
      u->cfg.job.dp.clip_norm = DP_C;
      u->cfg.job.dp.test_seed = 100 + i;
      learner_test_fill_store (u->cfg.store_path, signs[i]);
      gint stop = 0;
      HzLearnerJobOutcome outcome;
      gint64 run_id;
      g_assert_true (hz_learner_job_run (&u->cfg, &stop, NULL, NULL, &outcome, &u->adapter,
                                         &run_id, &error));
      g_assert_no_error (error);
      g_assert_cmpint (outcome, ==, HZ_LEARNER_JOB_PROMOTED);
      check_training_ledger (u->cfg.store_path);
      g_assert_cmpuint (count_egress (u->cfg.store_path), ==, 0);   /* training sends nothing */
    }

  /* the aggregator, for the adapters' config */
  g_autoptr (HzDeltaConfig) cfg = hz_delta_config_new_from_peft (users[0].adapter, &error);
  g_assert_no_error (error);
  g_test_message ("adapter config: %u tensors, %zu values", hz_delta_config_n_tensors (cfg),
                  hz_delta_config_n_elements (cfg));
  {
    /* the order is hz_delta_config_new_llama()'s: `hanzo-aggregator --llama` would match */
    g_autoptr (HzTrainBase) b = hz_train_base_open (model, &error);
    g_assert_no_error (error);
    const HzHparams *hp = &b->llm->hp;
    g_autoptr (HzDeltaConfig) llama = hz_delta_config_new_llama (
      hp->n_layer, hp->n_embd, hp->n_head_kv * hp->head_dim_k, hp->n_ff,
      hz_delta_config_rank (cfg), hz_delta_config_alpha (cfg));
    g_assert_cmpstr (hz_delta_config_hash (cfg), ==, hz_delta_config_hash (llama));
  }
  Server srv = { cfg, NULL };
  HztServer *server = hzt_server_start (server_setup, &srv);
  g_autofree char *url = hzt_url (server->port);

  /* user 0's credentials in the keyring (as the privacy window stores them) — only in
   * with-keyring.sh's throwaway keyring (its HOME), never in a developer's own */
  const gboolean private_keyring = strstr (g_get_home_dir (), "hz-keyring-") != NULL;
  const gboolean keyring = private_keyring && hz_credentials_store (url, "token-0", NULL, &error);
  if (!keyring)
    {
      g_test_message ("%s: user 0 gets explicit credentials",
                      error ? error->message : "not under tests/egress/with-keyring.sh");
      g_clear_error (&error);
    }
  for (int i = 0; i < N_USERS; i++)
    {
      HzFedParams p;
      hz_fed_params_init (&p);
      p.clip_norm = 10;
      p.noise_multiplier = 2.0;
      p.max_attempts = 3;
      p.initial_backoff_ms = 50;
      p.timeout_s = 10;
      p.fetch_polls = 300;
      p.fetch_interval_ms = 100;
      if (i > 0 || !keyring)
        {
          p.endpoint = g_strdup (url);
          p.token = g_strdup_printf ("token-%d", i);
        }
      g_assert_true (hz_learner_job_maybe_federate (&users[i].cfg, HZ_LEARNER_JOB_PROMOTED,
                                                    users[i].adapter, &p, NULL, on_federated,
                                                    &users[i]));
      hz_fed_params_clear (&p);
    }
  for (int i = 0; i < N_USERS; i++)
    while (!users[i].done)
      g_main_context_iteration (NULL, TRUE);

  g_autoptr (HzTrainBase) base = hz_train_base_open (model, &error);
  g_assert_no_error (error);
  for (int i = 0; i < N_USERS; i++)
    {
      User *u = &users[i];
      g_assert_cmpstr (u->message, ==, NULL);
      g_assert_true (u->ok);
      g_assert_cmpuint (u->out.round_id, ==, 1);
      g_assert_true (u->out.aggregate_saved);
      g_assert_false (u->out.pending);
      g_assert_cmpuint (u->out.aggregate_round, ==, 1);
      g_assert_cmpfloat (u->out.epsilon, >, 0);
      g_test_message ("user %d: release of %zu bytes, epsilon %.3f (year %.3f), aggregate of "
                      "round %" G_GUINT64_FORMAT " saved", i, u->out.upload_bytes,
                      u->out.epsilon, u->out.total_epsilon, u->out.aggregate_round);
      check_egress_log (u->cfg.store_path, &u->out);
      /* the shared adapter: a PEFT adapter of this base, the next night's start */
      g_autoptr (HzLora) shared = hz_lora_load_peft (u->cfg.shared_dir, &base->llm->hp, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (shared->n_params, ==, hz_delta_config_n_elements (cfg));
      g_autofree char *start = hz_learner_pick_start_adapter (u->adapter, u->cfg.shared_dir,
                                                              NULL);
      g_assert_cmpstr (start, ==, u->adapter);   /* another base: the shared one is ignored */
      g_autoptr (HzStore) s = hz_store_open (u->cfg.store_path, &error);
      g_autoptr (HzLearnerAdapter) a = hz_store_adapter_get_active (s, &error);
      g_assert_no_error (error);
      g_autofree char *start2 = hz_learner_pick_start_adapter (u->adapter, u->cfg.shared_dir,
                                                               a->base_sha256);
      g_assert_cmpstr (start2, ==, u->cfg.shared_dir);
    }
  /* all three saved the same aggregate */
  g_autoptr (HzLoraDelta) d0 = hz_lora_delta_new_from_peft (users[0].cfg.shared_dir, HZT_BASE,
                                                           &error);
  g_assert_no_error (error);
  for (int i = 1; i < N_USERS; i++)
    {
      g_autoptr (HzLoraDelta) di = hz_lora_delta_new_from_peft (users[i].cfg.shared_dir,
                                                               HZT_BASE, &error);
      g_assert_no_error (error);
      g_assert_cmpmem (hz_lora_delta_const_data (d0), hz_delta_config_n_elements (cfg) * 4,
                       hz_lora_delta_const_data (di), hz_delta_config_n_elements (cfg) * 4);
    }
  HzAggregatorStats st;
  hz_aggregator_get_stats (srv.agg, &st);
  g_assert_cmpuint (st.accepted, ==, N_USERS);
  g_assert_cmpuint (st.rounds_aggregated, ==, 1);

  /* federation off, or an adapter not trained with DP-SGD: nothing is sent */
  const guint before = count_egress (users[0].cfg.store_path);
  HzFedParams p;
  hz_fed_params_init (&p);
  p.endpoint = g_strdup (url);
  p.token = g_strdup ("token-0");
  users[0].cfg.job.dp_sgd = FALSE;
  g_assert_false (hz_learner_job_maybe_federate (&users[0].cfg, HZ_LEARNER_JOB_PROMOTED,
                                                 users[0].adapter, &p, NULL, on_federated, NULL));
  g_settings_set_boolean (settings, "federation-enabled", FALSE);
  users[0].cfg.job.dp_sgd = TRUE;
  g_assert_false (hz_learner_job_maybe_federate (&users[0].cfg, HZ_LEARNER_JOB_PROMOTED,
                                                 users[0].adapter, &p, NULL, on_federated, NULL));
  g_assert_false (hz_learner_job_maybe_federate (&users[0].cfg, HZ_LEARNER_JOB_REJECTED,
                                                 users[0].adapter, &p, NULL, on_federated, NULL));
  hz_fed_params_clear (&p);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_cmpuint (count_egress (users[0].cfg.store_path), ==, before);
  hz_aggregator_get_stats (srv.agg, &st);
  g_assert_cmpuint (st.accepted + st.rejected + st.duplicates, ==, N_USERS);

  if (keyring)
    g_assert_true (hz_credentials_clear (NULL, NULL));
  hzt_server_stop (server, server_teardown, &srv);
  for (int i = 0; i < N_USERS; i++)
    {
      hz_learner_job_config_clear (&users[i].cfg);
      g_free (users[i].adapter);
      g_free (users[i].message);
      hz_fed_outcome_clear (&users[i].out);
    }
  g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", root);
  g_assert_true (g_spawn_command_line_sync (cmd, NULL, NULL, NULL, NULL));
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
  g_test_add_func ("/learner/federation/round", test_round);
  return g_test_run ();
}
