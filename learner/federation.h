/* learner/federation.h — hanzo-learner's side of federated learning (issue 8, item 4).
 *
 * After a night's adapter is promoted and federation is on (GSettings key
 * ai.hanzo.Desktop federation-enabled, off by default; hz_learner_federation_enabled()),
 * the daemon calls hz_learner_federate_async(), which on a worker thread:
 *   1. reads the promoted adapter (PEFT directory: adapter_model.safetensors +
 *      adapter_config.json) as an HzLoraDelta: every lora_A / lora_B tensor by layer,
 *      projection and A before B, widened to f32 (hz_lora_delta_new_from_peft();
 *      hz_delta_config_new_from_peft() gives the matching adapter config: for all seven
 *      projections that of `hanzo-aggregator --llama L,H,KV,F,R`, else print it for
 *      `--config` with `hanzo learn fed-config DIR`);
 *   2. asks the server for its open round (hz_egress_get_round());
 *   3. makes the DP release (hz_dp_release(): whole-delta clip to C_u, N(0, (z_u C_u)^2)
 *      noise from getrandom, bf16, the ledger row, refused over the budget);
 *   4. uploads it (hz_egress_upload_release(): bounded retries, idempotent per round,
 *      every attempt in the egress log);
 *   5. fetches that round's aggregate, polling a bounded number of times while the server
 *      answers "not yet" (425); when it is still not ready the round is remembered in
 *      <shared_dir>/pending-round and fetched first by the next call;
 *   6. saves the aggregate as the SHARED BASE ADAPTER: <shared_dir>/adapter_model.safetensors
 *      (the validated bf16 aggregate, PEFT names) + adapter_config.json (the personal
 *      adapter's, same r/alpha/targets) + round (the round id), written atomically.
 * Endpoint and bearer token come from the Secret Service (egress/credentials.h), never
 * from the database or GSettings; without stored credentials nothing is sent.
 *
 * Precedence of the shared and personal adapters (hz_learner_pick_start_adapter()): the
 * shared adapter sits UNDER the personal ones. When a shared adapter newer than the active
 * personal adapter exists, the next night's training starts from it (FedAvg: local
 * training starts from the global model), so the personal adapter promoted that night is
 * the shared one refined on this user's data and replaces it for serving; otherwise
 * training continues from the active personal adapter. The shared adapter is never
 * uploaded, pruned or rolled back by the personal-adapter logic; rolling back all personal
 * adapters leaves the shared one as the fallback.
 *
 * Nothing here blocks the learner: the work runs in a GTask thread with its own HzStore,
 * every network call is bounded (retry policy and fetch polls below) and cancellable, and
 * the next night's job does not wait for it.
 *
 * Thread safety: hz_learner_federate() blocks and is meant for a worker thread; the async
 * variant completes on the caller's thread-default main context. Params are copied.
 */
#pragma once

#include <gio/gio.h>
#include "hanzo/egress-dp.h"

G_BEGIN_DECLS

typedef struct {
  double  clip_norm;          /* C_u, L2 bound of the whole released adapter (default 10) */
  double  noise_multiplier;   /* z_u (default 4.5: about eps 1 per release at delta 1e-6) */
  double  budget_epsilon;     /* privacy budget per year at budget_delta (default 8) */
  double  budget_delta;       /* (default 1e-6) */
  guint   max_attempts;       /* per upload / fetch call (default 5) */
  guint   timeout_s;          /* per I/O operation (default 30) */
  guint   initial_backoff_ms; /* (default 500) */
  guint   fetch_polls;        /* "not ready" polls of the aggregate (default 6) */
  guint   fetch_interval_ms;  /* between polls (default 10000) */
  char   *endpoint;           /* NULL (default): endpoint and token from the keyring; set */
  char   *token;              /*   only by tests and tools that manage their own secrets */
} HzFedParams;

void hz_fed_params_init (HzFedParams *p);
void hz_fed_params_clear (HzFedParams *p);

/** What one federation pass did. */
typedef struct {
  guint64  round_id;        /* the round uploaded to (0: nothing uploaded) */
  double   epsilon;         /* of this release alone at budget_delta */
  double   total_epsilon;   /* composed over the budget year, this release included */
  gsize    upload_bytes;    /* payload size */
  char    *release_id;      /* the ledger's release id (g_free) */
  gboolean aggregate_saved; /* a shared adapter was written (this round or a pending one) */
  guint64  aggregate_round; /* its round */
  gboolean pending;         /* the round's aggregate was not ready: left for next time */
} HzFedOutcome;

void hz_fed_outcome_clear (HzFedOutcome *o);

/** Whether the user turned federation on: the boolean GSettings key "federation-enabled"
 *  of schema "ai.hanzo.Desktop"; FALSE when the schema is not installed. */
gboolean hz_learner_federation_enabled (void);

/** The app's settings (GSettings schema ai.hanzo.Desktop) when that schema is installed and
 *  has `key`, else NULL (the daemon also runs where the app is not installed). Unref with
 *  g_object_unref. Call from any thread (GSettings is thread-safe). */
GSettings *hz_learner_app_settings (const char *key);

/** One federation pass (steps 1-6 above) for the promoted adapter in `adapter_dir`
 *  (recorded in the store at `store_path`, NULL = default, which gives its base model),
 *  saving aggregates under `shared_dir`. Returns TRUE when the release was uploaded (the
 *  aggregate may still be pending: see out->pending). Errors: HZ_DP_ERROR_BUDGET (nothing
 *  sent), HZ_CREDENTIALS_ERROR_NOT_FOUND (no endpoint/token stored: nothing sent),
 *  HZ_EGRESS_ERROR_* (gave up after the bounded retries), store and file errors. */
gboolean hz_learner_federate (const HzFedParams *params, const char *store_path,
                              const char *adapter_dir, const char *shared_dir,
                              GCancellable *cancellable, HzFedOutcome *out, GError **error);

/** hz_learner_federate() in a GTask thread. */
void     hz_learner_federate_async (const HzFedParams *params, const char *store_path,
                                    const char *adapter_dir, const char *shared_dir,
                                    GCancellable *cancellable, GAsyncReadyCallback callback,
                                    gpointer user_data);
/** Finish; `out` is filled also on failure (what was done before the error). */
gboolean hz_learner_federate_finish (GAsyncResult *result, HzFedOutcome *out, GError **error);

/** The adapter the next job starts from (see the precedence above): the shared adapter in
 *  `shared_dir` when it is complete (has its round file), was trained on the base model
 *  `base_sha256` (its hanzo.base_model_sha256 metadata) and is newer (file time of its
 *  round file) than `active_dir`'s adapter_model.safetensors (or there is no active
 *  adapter); else `active_dir` (may be NULL: a fresh adapter). Returns a new string or
 *  NULL. */
char *hz_learner_pick_start_adapter (const char *active_dir, const char *shared_dir,
                                     const char *base_sha256);

G_END_DECLS
