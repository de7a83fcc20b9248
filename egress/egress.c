/* egress/egress.c — the libsoup federation client (protocol, retries, log: egress.h). */
#include "egress.h"

#include <string.h>
#include "credentials.h"
#include "egress-private.h"

G_DEFINE_QUARK (hz-egress-error-quark, hz_egress_error)


struct _HzEgress {
  char          *base;      /* endpoint without trailing '/' */
  char          *auth;      /* "Bearer <token>" (wiped on free) */
  HzStore       *store;
  HzDeltaConfig  *config;
  HzEgressRetry  retry;
};

/* ================================================================= construction */

HzEgress *
hz_egress_new (const char *endpoint, const char *token, HzStore *store, HzDeltaConfig *config,
               GError **error)
{
  g_return_val_if_fail (store && config, NULL);
  g_autofree char *base = hz_egress_check_endpoint (endpoint, "federation endpoint",
                                                    HZ_EGRESS_ERROR, HZ_EGRESS_ERROR_INVALID,
                                                    error);
  if (!base)
    return NULL;
  if (!hz_egress_token_ok (token))
    {
      g_set_error (error, HZ_EGRESS_ERROR, HZ_EGRESS_ERROR_INVALID,
                   "the federation token must be non-empty text without spaces");
      return NULL;
    }
  HzEgress *e = g_new0 (HzEgress, 1);
  e->base = g_steal_pointer (&base);
  e->auth = g_strdup_printf ("Bearer %s", token);
  e->store = store;
  e->config = hz_delta_config_ref (config);
  e->retry = HZ_EGRESS_RETRY_DEFAULT;
  return e;
}

HzEgress *
hz_egress_new_from_keyring (HzStore *store, HzDeltaConfig *config, GCancellable *cancellable,
                            GError **error)
{
  g_autofree char *endpoint = NULL;
  char *token = NULL;
  if (!hz_credentials_lookup (&endpoint, &token, cancellable, error))
    return NULL;
  HzEgress *e = hz_egress_new (endpoint, token, store, config, error);
  hz_credentials_free_token (token);
  return e;
}

void
hz_egress_free (HzEgress *e)
{
  if (!e)
    return;
  explicit_bzero (e->auth, strlen (e->auth));
  g_free (e->auth);
  g_free (e->base);
  hz_delta_config_unref (e->config);
  g_free (e);
}

void
hz_egress_set_retry (HzEgress *e, const HzEgressRetry *retry)
{
  e->retry = *retry;
  e->retry.max_attempts = MAX (e->retry.max_attempts, 1);
  e->retry.timeout_s = MAX (e->retry.timeout_s, 1);
}

/* ================================================================= one request, retried */

typedef enum { OUTCOME_OK, OUTCOME_RETRY, OUTCOME_FINAL } Outcome;

/* Judge a reply: return the outcome, set *msg (for RETRY/FINAL) and *code (the error code
 * a FINAL outcome, or a RETRY that exhausts the attempts, reports). */
typedef Outcome (*CheckFunc) (gpointer ud, guint status, GBytes *reply, char **msg, int *code);

typedef struct {
  const char        *method;
  char              *url;
  GBytes            *body;          /* NULL for GET */
  const char        *body_sha256;
  gsize              max_reply;
  HzEgressDirection  direction;
  const char        *release_id;
  double             epsilon;
  guint64            round_id;
  CheckFunc          check;
  gpointer           ud;
} Request;

static gboolean
log_attempt (HzEgress *e, const Request *rq, int attempt, HzEgressStatus status, guint http,
             GBytes *reply, const char *message, GError **error)
{
  g_autofree char *reply_sha = reply && rq->direction == HZ_EGRESS_DOWNLOAD
                               ? hz_sha256_hex (reply) : NULL;
  HzEgressLogEntry row = {
    .direction = rq->direction,
    .endpoint = rq->url,
    .bytes = (gint64) (rq->body ? g_bytes_get_size (rq->body) : reply ? g_bytes_get_size (reply) : 0),
    .payload_sha256 = (char *) (rq->body_sha256 ? rq->body_sha256 : reply_sha),
    .epsilon = rq->epsilon,
    .status = status,
    .http_status = (int) http,
    .release_id = (char *) rq->release_id,
    .round_id = (gint64) rq->round_id,
    .attempt = attempt,
    .message = (char *) message,
  };
  GError *local = NULL;
  if (hz_store_add_egress_log (e->store, &row, &local))
    return TRUE;
  g_set_error (error, HZ_EGRESS_ERROR, HZ_EGRESS_ERROR_STORE,
               "the egress log could not be written (%s); stopping", local->message);
  g_error_free (local);
  return FALSE;
}

static gboolean
run_request (HzEgress *e, Request *rq, GCancellable *cancellable, GError **error)
{
  g_autoptr (SoupSession) session = hz_egress_session_new (e->retry.timeout_s, TRUE);
  g_autofree char *last = NULL;
  int last_code = HZ_EGRESS_ERROR_NETWORK;

  for (int attempt = 1; attempt <= (int) e->retry.max_attempts; attempt++)
    {
      g_autoptr (SoupMessage) msg = soup_message_new (rq->method, rq->url);
      g_assert (msg);  /* the URL was validated at construction */
      SoupMessageHeaders *h = soup_message_get_request_headers (msg);
      soup_message_headers_replace (h, "Authorization", e->auth);
      if (rq->body)
        {
          soup_message_set_request_body_from_bytes (msg, "application/octet-stream", rq->body);
          soup_message_headers_replace (h, "X-Hanzo-Release-Id", rq->release_id);
          soup_message_headers_replace (h, "X-Hanzo-Payload-Sha256", rq->body_sha256);
        }
      GError *local = NULL;
      g_autoptr (GBytes) reply = NULL;
      g_autoptr (GInputStream) in = soup_session_send (session, msg, cancellable, &local);
      if (in)
        {
          reply = hz_egress_read_limited (in, rq->max_reply, cancellable, &local);
          g_input_stream_close (in, NULL, NULL);
        }
      guint http = in ? soup_message_get_status (msg) : 0;
      Outcome outcome;
      g_free (last);
      last = NULL;
      if (g_cancellable_is_cancelled (cancellable))
        {
          g_clear_error (&local);
          log_attempt (e, rq, attempt, HZ_EGRESS_STATUS_CANCELLED, http, reply, "cancelled", NULL);
          g_set_error (error, HZ_EGRESS_ERROR, HZ_EGRESS_ERROR_CANCELLED, "%s %s cancelled",
                       rq->method, rq->url);
          return FALSE;
        }
      if (local)
        {
          last = g_strdup_printf ("%s%s", http ? "reading the reply: " : "", local->message);
          last_code = HZ_EGRESS_ERROR_NETWORK;
          outcome = OUTCOME_RETRY;
          g_error_free (local);
        }
      else
        {
          int code = HZ_EGRESS_ERROR_NETWORK;
          outcome = rq->check (rq->ud, http, reply, &last, &code);
          last_code = code;
        }

      if (outcome == OUTCOME_OK)
        return log_attempt (e, rq, attempt, HZ_EGRESS_STATUS_OK, http, reply, NULL, error);
      if (outcome == OUTCOME_FINAL)
        {
          if (!log_attempt (e, rq, attempt, HZ_EGRESS_STATUS_REJECTED, http, reply, last, error))
            return FALSE;
          g_set_error (error, HZ_EGRESS_ERROR, last_code, "%s %s: %s", rq->method, rq->url, last);
          return FALSE;
        }
      gboolean final = attempt == (int) e->retry.max_attempts;
      if (!log_attempt (e, rq, attempt, final ? HZ_EGRESS_STATUS_FAILED : HZ_EGRESS_STATUS_RETRY,
                        http, reply, last, error))
        return FALSE;
      if (!final && !hz_egress_backoff_sleep (hz_egress_backoff_ms (&e->retry, attempt), cancellable))
        {
          log_attempt (e, rq, attempt, HZ_EGRESS_STATUS_CANCELLED, 0, NULL, "cancelled", NULL);
          g_set_error (error, HZ_EGRESS_ERROR, HZ_EGRESS_ERROR_CANCELLED, "%s %s cancelled",
                       rq->method, rq->url);
          return FALSE;
        }
    }
  g_set_error (error, HZ_EGRESS_ERROR, last_code, "%s %s: gave up after %u attempts: %s",
               rq->method, rq->url, e->retry.max_attempts, last ? last : "?");
  return FALSE;
}

/* Common HTTP status handling for non-2xx replies. */
static Outcome
http_failure (guint status, GBytes *reply, char **msg, int *code, int final_code)
{
  g_autofree char *text = hz_egress_excerpt (reply);
  *msg = g_strdup_printf ("HTTP %u %s: %s", status, soup_status_get_phrase (status), text);
  if (hz_egress_status_retryable (status))
    {
      *code = HZ_EGRESS_ERROR_NETWORK;
      return OUTCOME_RETRY;
    }
  *code = final_code;
  return OUTCOME_FINAL;
}

gboolean
hz_egress_parse_round_reply (const char *data, gsize len, guint64 *round_id)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  gint64 round = 0;
  if (!hz_egress_member_int (hz_egress_parse_json_object (data, len, parser), "round", &round) || round < 1)
    return FALSE;
  *round_id = (guint64) round;
  return TRUE;
}

gboolean
hz_egress_reply_confirms_upload (const char *data, gsize len, guint64 round_id,
                                 const char *payload_sha256)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonObject *o = hz_egress_parse_json_object (data, len, parser);
  const char *st = hz_egress_member_string (o, "status");
  const char *sha = hz_egress_member_string (o, "sha256");
  gint64 round = -1;
  return st && (strcmp (st, "accepted") == 0 || strcmp (st, "duplicate") == 0) && sha &&
         payload_sha256 && strcmp (sha, payload_sha256) == 0 &&
         hz_egress_member_int (o, "round", &round) && round >= 0 && (guint64) round == round_id;
}

/* ================================================================= upload */

typedef struct {
  const HzDpRelease *release;
} UploadCheck;

static Outcome
check_upload (gpointer ud, guint status, GBytes *reply, char **msg, int *code)
{
  const HzDpRelease *r = ((UploadCheck *) ud)->release;
  if (status < 200 || status >= 300)
    return http_failure (status, reply, msg, code, HZ_EGRESS_ERROR_REJECTED);
  gsize len = 0;
  const char *data = reply ? g_bytes_get_data (reply, &len) : NULL;
  if (hz_egress_reply_confirms_upload (data, len, hz_dp_release_get_round_id (r),
                                       hz_dp_release_get_payload_sha256 (r)))
    return OUTCOME_OK;
  g_autofree char *text = hz_egress_excerpt (reply);
  *msg = g_strdup_printf ("HTTP %u but the reply does not confirm this payload: %s", status, text);
  *code = HZ_EGRESS_ERROR_NETWORK;
  return OUTCOME_RETRY;
}

gboolean
hz_egress_upload_release (HzEgress *e, const HzDpRelease *release, GCancellable *cancellable,
                          GError **error)
{
  UploadCheck uc = { release };
  Request rq = {
    .method = "PUT",
    .url = g_strdup_printf ("%s/v1/rounds/%" G_GUINT64_FORMAT "/update", e->base,
                            hz_dp_release_get_round_id (release)),
    .body = hz_dp_release_get_payload (release),
    .body_sha256 = hz_dp_release_get_payload_sha256 (release),
    .max_reply = HZ_EGRESS_MAX_JSON_REPLY,
    .direction = HZ_EGRESS_UPLOAD,
    .release_id = hz_dp_release_get_id (release),
    .epsilon = hz_dp_release_get_epsilon (release),
    .round_id = hz_dp_release_get_round_id (release),
    .check = check_upload,
    .ud = &uc,
  };
  gboolean ok = run_request (e, &rq, cancellable, error);
  g_free (rq.url);
  return ok;
}

typedef struct {
  HzEgress          *egress;
  const HzDpRelease *release;
} UploadJob;

static void
upload_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  UploadJob *job = data;
  GError *error = NULL;
  if (hz_egress_upload_release (job->egress, job->release, cancellable, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

void
hz_egress_upload_release_async (HzEgress *e, const HzDpRelease *release,
                                GCancellable *cancellable, GAsyncReadyCallback callback,
                                gpointer user_data)
{
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  UploadJob *job = g_new (UploadJob, 1);
  job->egress = e;
  job->release = release;
  g_task_set_source_tag (task, hz_egress_upload_release_async);
  g_task_set_check_cancellable (task, FALSE);   /* report our own CANCELLED error */
  g_task_set_task_data (task, job, g_free);
  g_task_run_in_thread (task, upload_thread);
}

gboolean
hz_egress_upload_release_finish (HzEgress *e, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

/* ================================================================= downloads */

typedef struct {
  HzDeltaConfig *config;
  guint64       round_id;
  HzLoraDelta  *delta;    /* out */
} AggregateCheck;

static Outcome
check_aggregate (gpointer ud, guint status, GBytes *reply, char **msg, int *code)
{
  AggregateCheck *ac = ud;
  if (status == 404 || status == 425)
    {
      g_autofree char *text = hz_egress_excerpt (reply);
      *msg = g_strdup_printf ("the aggregate of round %" G_GUINT64_FORMAT " is not ready "
                              "(HTTP %u: %s)", ac->round_id, status, text);
      *code = HZ_EGRESS_ERROR_NOT_READY;
      return OUTCOME_FINAL;
    }
  if (status < 200 || status >= 300)
    return http_failure (status, reply, msg, code, HZ_EGRESS_ERROR_REJECTED);
  GError *local = NULL;
  guint64 round = 0;
  g_autoptr (HzLoraDelta) d = hz_lora_delta_from_wire (reply, ac->config, &round, NULL, &local);
  if (d && round == ac->round_id)
    {
      ac->delta = g_steal_pointer (&d);
      return OUTCOME_OK;
    }
  *msg = local ? g_strdup_printf ("invalid aggregate: %s", local->message)
               : g_strdup_printf ("invalid aggregate: it is for round %" G_GUINT64_FORMAT, round);
  g_clear_error (&local);
  *code = HZ_EGRESS_ERROR_BAD_PAYLOAD;
  return OUTCOME_RETRY;
}

HzLoraDelta *
hz_egress_fetch_aggregate (HzEgress *e, guint64 round_id, GCancellable *cancellable,
                           GError **error)
{
  AggregateCheck ac = { e->config, round_id, NULL };
  Request rq = {
    .method = "GET",
    .url = g_strdup_printf ("%s/v1/rounds/%" G_GUINT64_FORMAT "/aggregate", e->base, round_id),
    /* the wire size of this config: 2 bytes a value plus a generous header allowance */
    .max_reply = 2 * hz_delta_config_n_elements (e->config) +
                 256 * (gsize) hz_delta_config_n_tensors (e->config) + 65536,
    .direction = HZ_EGRESS_DOWNLOAD,
    .round_id = round_id,
    .check = check_aggregate,
    .ud = &ac,
  };
  gboolean ok = run_request (e, &rq, cancellable, error);
  g_free (rq.url);
  if (!ok)
    {
      hz_lora_delta_free (ac.delta);
      return NULL;
    }
  return ac.delta;
}

typedef struct {
  guint64 round_id;
} RoundCheck;

static Outcome
check_round (gpointer ud, guint status, GBytes *reply, char **msg, int *code)
{
  if (status < 200 || status >= 300)
    return http_failure (status, reply, msg, code, HZ_EGRESS_ERROR_REJECTED);
  gsize len = 0;
  const char *data = reply ? g_bytes_get_data (reply, &len) : NULL;
  if (hz_egress_parse_round_reply (data, len, &((RoundCheck *) ud)->round_id))
    return OUTCOME_OK;
  g_autofree char *text = hz_egress_excerpt (reply);
  *msg = g_strdup_printf ("HTTP %u but no round in the reply: %s", status, text);
  *code = HZ_EGRESS_ERROR_NETWORK;
  return OUTCOME_RETRY;
}

gboolean
hz_egress_get_round (HzEgress *e, guint64 *round_id, GCancellable *cancellable, GError **error)
{
  RoundCheck rc = { 0 };
  Request rq = {
    .method = "GET",
    .url = g_strdup_printf ("%s/v1/rounds/current", e->base),
    .max_reply = HZ_EGRESS_MAX_JSON_REPLY,
    .direction = HZ_EGRESS_DOWNLOAD,
    .check = check_round,
    .ud = &rc,
  };
  gboolean ok = run_request (e, &rq, cancellable, error);
  g_free (rq.url);
  if (ok)
    *round_id = rc.round_id;
  return ok;
}
