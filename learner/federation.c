/* learner/federation.c — upload the promoted adapter as a DP release and apply the round's
 * aggregate as the shared base adapter (see federation.h). All network I/O is egress/'s
 * (hz_egress_*); this file contains no socket or HTTP code. */
#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>
#include "federation.h"
#include "hanzo/egress.h"
#include "hanzo-store-learner.h"
#include "hanzo/engine-train.h"

#define SHARED_WEIGHTS "adapter_model.safetensors"
#define SHARED_CONFIG "adapter_config.json"
#define SHARED_ROUND "round"
#define PENDING_ROUND "pending-round"

void
hz_fed_params_init (HzFedParams *p)
{
  *p = (HzFedParams) {
    .clip_norm = HZ_DP_RELEASE_DEFAULT_CLIP_NORM,
    .noise_multiplier = HZ_DP_RELEASE_DEFAULT_NOISE_MULTIPLIER,
    .budget_epsilon = HZ_DP_BUDGET_DEFAULT.epsilon, .budget_delta = HZ_DP_BUDGET_DEFAULT.delta,
    .max_attempts = HZ_EGRESS_RETRY_DEFAULT.max_attempts,
    .timeout_s = HZ_EGRESS_RETRY_DEFAULT.timeout_s,
    .initial_backoff_ms = HZ_EGRESS_RETRY_DEFAULT.initial_backoff_ms,
    .fetch_polls = 6, .fetch_interval_ms = 10000,
  };
}

void
hz_fed_params_clear (HzFedParams *p)
{
  g_clear_pointer (&p->endpoint, g_free);
  if (p->token)
    explicit_bzero (p->token, strlen (p->token));
  g_clear_pointer (&p->token, g_free);
}

void
hz_fed_outcome_clear (HzFedOutcome *o)
{
  g_clear_pointer (&o->release_id, g_free);
}

GSettings *
hz_learner_app_settings (const char *key)
{
  GSettingsSchemaSource *src = g_settings_schema_source_get_default ();
  if (src == NULL)
    return NULL;
  g_autoptr (GSettingsSchema) schema = g_settings_schema_source_lookup (src, "ai.hanzo.Desktop",
                                                                         TRUE);
  if (schema == NULL || !g_settings_schema_has_key (schema, key))
    return NULL;
  return g_settings_new_full (schema, NULL, NULL);
}

gboolean
hz_learner_federation_enabled (void)
{
  g_autoptr (GSettings) s = hz_learner_app_settings ("federation-enabled");
  return s != NULL && g_settings_get_boolean (s, "federation-enabled");
}

static HzSafetensors *
open_weights (const char *dir, GError **error)
{
  g_autofree char *path = g_build_filename (dir, SHARED_WEIGHTS, NULL);
  return hz_safetensors_open (path, error);
}

/* ------------------------------------------------------------------ shared adapter */

static gboolean
read_round_file (const char *path, guint64 *round)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, NULL))
    return FALSE;
  return g_ascii_string_to_unsigned (g_strstrip (text), 10, 1, G_MAXUINT64, round, NULL);
}

static gboolean
write_round_file (const char *path, guint64 round, GError **error)
{
  g_autofree char *text = g_strdup_printf ("%" G_GUINT64_FORMAT "\n", round);
  return g_file_set_contents_full (path, text, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0600, error);
}

/* Save the aggregate of `round` as the shared adapter (config from `adapter_dir`). */
static gboolean
save_shared (HzLoraDelta *agg, guint64 round, const char *adapter_dir, const char *shared_dir,
             GError **error)
{
  if (g_mkdir_with_parents (shared_dir, 0700) != 0)
    {
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errno), "cannot create %s",
                   shared_dir);
      return FALSE;
    }
  g_autoptr (GBytes) wire = hz_lora_delta_to_wire (agg, round, 0);
  g_autofree char *src_cfg = g_build_filename (adapter_dir, SHARED_CONFIG, NULL);
  g_autofree char *cfg_text = NULL;
  gsize cfg_len;
  if (!g_file_get_contents (src_cfg, &cfg_text, &cfg_len, error))
    return FALSE;
  g_autofree char *w = g_build_filename (shared_dir, SHARED_WEIGHTS, NULL);
  g_autofree char *c = g_build_filename (shared_dir, SHARED_CONFIG, NULL);
  g_autofree char *r = g_build_filename (shared_dir, SHARED_ROUND, NULL);
  /* the round file last: it marks a complete shared adapter */
  return g_file_set_contents_full (w, g_bytes_get_data (wire, NULL), g_bytes_get_size (wire),
                                   G_FILE_SET_CONTENTS_CONSISTENT, 0600, error)
         && g_file_set_contents_full (c, cfg_text, cfg_len, G_FILE_SET_CONTENTS_CONSISTENT,
                                      0600, error)
         && write_round_file (r, round, error);
}

static gboolean
shared_fits (const char *shared_dir, const char *base_sha256)
{
  g_autoptr (HzSafetensors) st = open_weights (shared_dir, NULL);
  const char *base = st ? hz_safetensors_metadata (st, "hanzo.base_model_sha256") : NULL;
  return base && base_sha256 && g_str_equal (base, base_sha256);
}

char *
hz_learner_pick_start_adapter (const char *active_dir, const char *shared_dir,
                               const char *base_sha256)
{
  GStatBuf sr, sa;
  g_autofree char *round = shared_dir ? g_build_filename (shared_dir, SHARED_ROUND, NULL) : NULL;
  const gboolean have_shared = round && g_stat (round, &sr) == 0
                               && shared_fits (shared_dir, base_sha256);
  if (active_dir == NULL)
    return have_shared ? g_strdup (shared_dir) : NULL;
  g_autofree char *w = g_build_filename (active_dir, SHARED_WEIGHTS, NULL);
  if (have_shared && (g_stat (w, &sa) != 0 || sr.st_mtime > sa.st_mtime
                      || (sr.st_mtime == sa.st_mtime
                          && sr.st_mtim.tv_nsec > sa.st_mtim.tv_nsec)))
    return g_strdup (shared_dir);
  return g_strdup (active_dir);
}

/* ------------------------------------------------------------------ the pass */

static const char *
base_of (HzStore *store, const char *adapter_dir, GPtrArray **keep, GError **error)
{
  *keep = hz_store_adapter_list (store, error);
  if (*keep == NULL)
    return NULL;
  for (guint i = 0; i < (*keep)->len; i++)
    {
      const HzLearnerAdapter *a = (*keep)->pdata[i];
      if (g_str_equal (a->path, adapter_dir))
        return a->base_sha256;
    }
  g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_NOT_FOUND,
               "adapter %s is not recorded in the store", adapter_dir);
  return NULL;
}

/* Fetch `round`'s aggregate, polling while it is not ready. Returns NULL with *pending set
 * (no error) when it stayed not ready, NULL with an error on failure. */
static HzLoraDelta *
fetch_polling (HzEgress *eg, guint64 round, const HzFedParams *p, GCancellable *cancellable,
               gboolean *pending, GError **error)
{
  *pending = FALSE;
  for (guint poll = 0;; poll++)
    {
      GError *local = NULL;
      HzLoraDelta *agg = hz_egress_fetch_aggregate (eg, round, cancellable, &local);
      if (agg)
        return agg;
      if (!g_error_matches (local, HZ_EGRESS_ERROR, HZ_EGRESS_ERROR_NOT_READY))
        {
          g_propagate_error (error, local);
          return NULL;
        }
      g_error_free (local);
      if (poll + 1 >= p->fetch_polls)
        {
          *pending = TRUE;
          return NULL;
        }
      /* a cancellable wait, in slices of at most 50 ms */
      const gint64 until = g_get_monotonic_time () + (gint64) p->fetch_interval_ms * 1000;
      for (gint64 now = g_get_monotonic_time ();
           now < until && !g_cancellable_is_cancelled (cancellable);
           now = g_get_monotonic_time ())
        g_usleep (MIN (until - now, 50000));
      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return NULL;
    }
}

/* Try the round left pending by an earlier pass; clears the marker when done. */
static gboolean
fetch_pending (HzEgress *eg, const HzFedParams *p, const char *adapter_dir,
               const char *shared_dir, GCancellable *cancellable, HzFedOutcome *out,
               GError **error)
{
  g_autofree char *marker = g_build_filename (shared_dir, PENDING_ROUND, NULL);
  guint64 round;
  if (!read_round_file (marker, &round))
    return TRUE;
  HzFedParams once = *p;
  once.fetch_polls = 1;
  gboolean pending;
  g_autoptr (GError) local = NULL;
  g_autoptr (HzLoraDelta) agg = fetch_polling (eg, round, &once, cancellable, &pending, &local);
  if (agg)
    {
      if (!save_shared (agg, round, adapter_dir, shared_dir, error))
        return FALSE;
      out->aggregate_saved = TRUE;
      out->aggregate_round = round;
      g_unlink (marker);
    }
  else if (g_error_matches (local, HZ_EGRESS_ERROR, HZ_EGRESS_ERROR_CANCELLED)
           || g_error_matches (local, HZ_EGRESS_ERROR, HZ_EGRESS_ERROR_STORE))
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  else if (local)   /* gone (404) or invalid: give that round up */
    {
      g_message ("federation: giving up the aggregate of round %" G_GUINT64_FORMAT ": %s",
                 round, local->message);
      g_unlink (marker);
    }
  return TRUE;
}

gboolean
hz_learner_federate (const HzFedParams *p, const char *store_path, const char *adapter_dir,
                     const char *shared_dir, GCancellable *cancellable, HzFedOutcome *out,
                     GError **error)
{
  *out = (HzFedOutcome) { 0 };
  g_autoptr (HzStore) store = hz_store_open (store_path, error);
  if (store == NULL)
    return FALSE;
  g_autoptr (GPtrArray) adapters = NULL;
  const char *base = base_of (store, adapter_dir, &adapters, error);
  if (base == NULL)
    return FALSE;
  g_autoptr (HzLoraDelta) delta = hz_lora_delta_new_from_peft (adapter_dir, base, error);
  if (delta == NULL)
    return FALSE;
  HzDeltaConfig *cfg = hz_lora_delta_get_config (delta);
  g_autoptr (HzEgress) eg = p->endpoint
    ? hz_egress_new (p->endpoint, p->token, store, cfg, error)
    : hz_egress_new_from_keyring (store, cfg, cancellable, error);
  if (eg == NULL)
    return FALSE;
  const HzEgressRetry retry = { MAX (p->max_attempts, 1), p->initial_backoff_ms,
                                MAX (p->initial_backoff_ms, HZ_EGRESS_RETRY_DEFAULT.max_backoff_ms),
                                MAX (p->timeout_s, 1) };
  hz_egress_set_retry (eg, &retry);
  if (!fetch_pending (eg, p, adapter_dir, shared_dir, cancellable, out, error))
    return FALSE;
  guint64 round;
  if (!hz_egress_get_round (eg, &round, cancellable, error))
    return FALSE;
  HzDpBudget budget = HZ_DP_BUDGET_DEFAULT;
  budget.epsilon = p->budget_epsilon;
  budget.delta = p->budget_delta;
  g_autoptr (HzDpRelease) rel = hz_dp_release (delta, p->clip_norm, p->noise_multiplier, round,
                                               store, &budget, error);
  if (rel == NULL)
    return FALSE;
  out->epsilon = hz_dp_release_get_epsilon (rel);
  out->total_epsilon = hz_dp_release_get_total_epsilon (rel);
  out->upload_bytes = g_bytes_get_size (hz_dp_release_get_payload (rel));
  out->release_id = g_strdup (hz_dp_release_get_id (rel));
  if (!hz_egress_upload_release (eg, rel, cancellable, error))
    return FALSE;
  out->round_id = round;
  gboolean pending;
  g_autoptr (GError) local = NULL;
  g_autoptr (HzLoraDelta) agg = fetch_polling (eg, round, p, cancellable, &pending, &local);
  g_autofree char *marker = g_build_filename (shared_dir, PENDING_ROUND, NULL);
  if (agg)
    {
      if (!save_shared (agg, round, adapter_dir, shared_dir, error))
        return FALSE;
      out->aggregate_saved = TRUE;
      out->aggregate_round = round;
      return TRUE;
    }
  if (local)
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  out->pending = TRUE;
  if (g_mkdir_with_parents (shared_dir, 0700) != 0)
    {
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errno), "cannot create %s",
                   shared_dir);
      return FALSE;
    }
  return write_round_file (marker, round, error);
}

/* ------------------------------------------------------------------ async */

typedef struct {
  HzFedParams  p;
  char        *store_path, *adapter_dir, *shared_dir;
  HzFedOutcome out;
} FedTask;

static void
fed_task_free (gpointer data)
{
  FedTask *t = data;
  hz_fed_params_clear (&t->p);
  g_free (t->store_path);
  g_free (t->adapter_dir);
  g_free (t->shared_dir);
  hz_fed_outcome_clear (&t->out);
  g_free (t);
}

static void
fed_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  (void) source;
  FedTask *t = data;
  GError *error = NULL;
  if (hz_learner_federate (&t->p, t->store_path, t->adapter_dir, t->shared_dir, cancellable,
                           &t->out, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

void
hz_learner_federate_async (const HzFedParams *params, const char *store_path,
                           const char *adapter_dir, const char *shared_dir,
                           GCancellable *cancellable, GAsyncReadyCallback callback,
                           gpointer user_data)
{
  FedTask *t = g_new0 (FedTask, 1);
  t->p = *params;
  t->p.endpoint = g_strdup (params->endpoint);
  t->p.token = g_strdup (params->token);
  t->store_path = g_strdup (store_path);
  t->adapter_dir = g_strdup (adapter_dir);
  t->shared_dir = g_strdup (shared_dir);
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, hz_learner_federate_async);
  g_task_set_task_data (task, t, fed_task_free);
  g_task_run_in_thread (task, fed_thread);
}

gboolean
hz_learner_federate_finish (GAsyncResult *result, HzFedOutcome *out, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), FALSE);
  FedTask *t = g_task_get_task_data (G_TASK (result));
  if (out)
    {
      *out = t->out;
      t->out.release_id = NULL;   /* moved */
    }
  return g_task_propagate_boolean (G_TASK (result), error);
}
