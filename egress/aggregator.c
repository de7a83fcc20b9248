/* egress/aggregator.c — hanzo-aggregator's rounds, validation and HTTP API (aggregator.h). */
#include "aggregator.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <libsoup/soup.h>
#include <math.h>
#include <string.h>
#include <unistd.h>
#include "aggregate.h"
#include "hanzo/atomic-file.h"
#include "hanzo/json-out.h"
#include "hanzo/engine-train.h"

G_DEFINE_QUARK (hz-aggregator-error-quark, hz_aggregator_error)

#define KEEP_AGGREGATES 16
#define BLOCK 4096          /* coordinates per trimmed-mean block */

typedef struct {
  char   *client_id;
  char   *sha256;
  GBytes *payload;
} Upload;

typedef struct {
  guint64 round;
  GBytes *wire;
} Aggregate;

/* The deadlines of one request (see "deadlines" below). */
typedef struct {
  HzAggregator      *agg;        /* NULL once the aggregator is freed (hz_aggregator_free) */
  SoupServerMessage *msg;        /* owns the guard (object data) */
  GSource           *timer;
  gint64             deadline;   /* monotonic us */
  gint64             idle;       /* monotonic us; G_MAXINT64 when not idle-checked */
  guint64            body_bytes;
  gboolean           discard;    /* refused: the body is read and dropped */
} Guard;

struct _HzAggregator {
  HzDeltaConfig        *cfg;
  HzAggregatorOptions  opts;
  char                *spool_dir;
  gsize                max_body;
  GHashTable          *client_by_hash;   /* token sha256 -> client id */
  GHashTable          *client_ids;       /* set */
  SoupServer          *server;
  GMainContext        *context;
  GSource             *timer;
  guint                port;
  gboolean             listening;
  GHashTable          *guards;           /* set of the live requests' Guard* */

  guint64              round;
  gint64               deadline_us;
  gboolean             aggregating;
  GHashTable          *uploads;          /* client id -> Upload* (open round) */
  char                *round_base;       /* base model sha256 of the open round */
  GHashTable          *seen;             /* sha256 of every accepted payload -> round */
  GQueue               aggregates;       /* Aggregate*, oldest first */

  GMutex               lock;             /* guards stats */
  HzAggregatorStats    stats;
};

static void
upload_free (gpointer p)
{
  Upload *u = p;
  g_free (u->client_id);
  g_free (u->sha256);
  g_bytes_unref (u->payload);
  g_free (u);
}

static void
aggregate_free (gpointer p)
{
  Aggregate *a = p;
  g_bytes_unref (a->wire);
  g_free (a);
}

static gboolean
valid_client_id (const char *id)
{
  if (!id || !*id || strlen (id) > 128)
    return FALSE;
  for (const char *p = id; *p; p++)
    if (!g_ascii_isalnum (*p) && *p != '-' && *p != '_' && *p != '.')
      return FALSE;
  return TRUE;
}

/* ================================================================= construction */

static gboolean
check_options (const HzAggregatorOptions *o, GError **error)
{
  const char *why = NULL;
  if (o->min_clients < 1)
    why = "min_clients must be >= 1";
  else if (o->round_duration_us <= 0)
    why = "the round duration must be > 0";
  else if (!(o->max_norm > 0) || !isfinite (o->max_norm))
    why = "max_norm must be finite and > 0";
  else if (o->first_round < 1)
    why = "the first round must be >= 1";
  else if (o->io_timeout_us <= 0)
    why = "the I/O timeout must be > 0";
  else if (o->rule == HZ_AGG_RULE_TRIMMED_MEAN &&
           (!(o->beta >= 0 && o->beta < 0.5) ||
            2 * (guint) floor (o->beta * o->min_clients) >= o->min_clients))
    why = "trimmed mean needs beta in [0, 0.5) and 2 floor(beta * min_clients) < min_clients";
  else if (o->rule == HZ_AGG_RULE_MULTI_KRUM &&
           (o->krum_m < 1 || o->krum_m > o->min_clients || o->min_clients < 2))
    why = "Multi-Krum needs 1 <= m <= min_clients and min_clients >= 2";
  else if (o->rule != HZ_AGG_RULE_TRIMMED_MEAN && o->rule != HZ_AGG_RULE_MULTI_KRUM)
    why = "unknown aggregation rule";
  if (why)
    g_set_error (error, HZ_AGGREGATOR_ERROR, HZ_AGGREGATOR_ERROR_INVALID, "%s", why);
  return why == NULL;
}

/* The spool directory exists (created 0700 with its parents when missing) and this process
 * can create files in it: a bad --spool fails at start, not at the first upload. */
static gboolean
prepare_spool (const char *dir, GError **error)
{
  const char *why = NULL;
  int e = 0;
  if (!*dir)
    why = "empty name";
  else if (g_mkdir_with_parents (dir, 0700) != 0)
    e = errno;
  else if (!g_file_test (dir, G_FILE_TEST_IS_DIR))
    e = ENOTDIR;
  else if (g_access (dir, W_OK | X_OK) != 0)
    e = errno;
  if (!why && !e)
    return TRUE;
  g_set_error (error, HZ_AGGREGATOR_ERROR, HZ_AGGREGATOR_ERROR_IO,
               "cannot use the spool directory '%s': %s", dir, why ? why : g_strerror (e));
  return FALSE;
}

HzAggregator *
hz_aggregator_new (HzDeltaConfig *cfg, const HzAggregatorOptions *opts, GError **error)
{
  HzAggregatorOptions o = opts ? *opts : HZ_AGGREGATOR_OPTIONS_DEFAULT;
  if (!check_options (&o, error) || (o.spool_dir && !prepare_spool (o.spool_dir, error)))
    return NULL;
  HzAggregator *agg = g_new0 (HzAggregator, 1);
  agg->cfg = hz_delta_config_ref (cfg);
  agg->opts = o;
  agg->spool_dir = g_strdup (o.spool_dir);
  agg->opts.spool_dir = agg->spool_dir;
  /* the wire size of this config plus room for the header (names, shapes, metadata) */
  agg->max_body = 2 * hz_delta_config_n_elements (cfg) + 256 * (gsize) hz_delta_config_n_tensors (cfg)
                  + 65536;
  agg->client_by_hash = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  agg->client_ids = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  agg->uploads = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, upload_free);
  agg->seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_queue_init (&agg->aggregates);
  agg->guards = g_hash_table_new (g_direct_hash, g_direct_equal);
  g_mutex_init (&agg->lock);
  agg->round = o.first_round;
  agg->deadline_us = g_get_real_time () + o.round_duration_us;
  agg->stats.current_round = agg->round;
  return agg;
}

void
hz_aggregator_free (HzAggregator *agg)
{
  if (!agg)
    return;
  /* let a running aggregation finish (its callback touches agg) */
  while (agg->aggregating && agg->context)
    g_main_context_iteration (agg->context, TRUE);
  if (agg->timer)
    {
      g_source_destroy (agg->timer);
      g_source_unref (agg->timer);
    }
  if (agg->server)
    {
      soup_server_disconnect (agg->server);
      g_object_unref (agg->server);
    }
  /* requests that libsoup still holds: their timers stop, their handlers see no aggregator */
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init (&it, agg->guards);
  while (g_hash_table_iter_next (&it, &key, NULL))
    {
      Guard *g = key;
      g_source_destroy (g->timer);
      g->agg = NULL;
    }
  g_hash_table_unref (agg->guards);
  g_clear_pointer (&agg->context, g_main_context_unref);
  g_hash_table_unref (agg->client_by_hash);
  g_hash_table_unref (agg->client_ids);
  g_hash_table_unref (agg->uploads);
  g_hash_table_unref (agg->seen);
  g_queue_clear_full (&agg->aggregates, aggregate_free);
  g_free (agg->round_base);
  g_free (agg->spool_dir);
  hz_delta_config_unref (agg->cfg);
  g_mutex_clear (&agg->lock);
  g_free (agg);
}

gboolean
hz_aggregator_add_client (HzAggregator *agg, const char *client_id, const char *token_sha256,
                          GError **error)
{
  if (!valid_client_id (client_id) || !hz_is_sha256_hex (token_sha256) ||
      g_hash_table_contains (agg->client_ids, client_id) ||
      g_hash_table_contains (agg->client_by_hash, token_sha256))
    {
      g_set_error (error, HZ_AGGREGATOR_ERROR, HZ_AGGREGATOR_ERROR_INVALID,
                   "client '%s': the id must be [A-Za-z0-9._-]+ and new, the token hash 64 "
                   "lowercase hex digits and not shared", client_id ? client_id : "(null)");
      return FALSE;
    }
  g_hash_table_add (agg->client_ids, g_strdup (client_id));
  g_hash_table_insert (agg->client_by_hash, g_strdup (token_sha256), g_strdup (client_id));
  return TRUE;
}

gboolean
hz_aggregator_load_clients (HzAggregator *agg, const char *path, GError **error)
{
  g_autofree char *text = NULL;
  GError *local = NULL;
  if (!g_file_get_contents (path, &text, NULL, &local))
    {
      g_set_error (error, HZ_AGGREGATOR_ERROR, HZ_AGGREGATOR_ERROR_IO, "%s", local->message);
      g_error_free (local);
      return FALSE;
    }
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    {
      char *line = g_strstrip (lines[i]);
      if (!*line || *line == '#')
        continue;
      g_auto (GStrv) f = g_strsplit_set (line, " \t", -1);
      guint n = 0;
      const char *fields[2] = { NULL, NULL };
      for (guint k = 0; f[k]; k++)
        if (*f[k] && n < 2)
          fields[n++] = f[k];
        else if (*f[k])
          n = 3;
      if (n != 2 || !hz_aggregator_add_client (agg, fields[0], fields[1], &local))
        {
          g_set_error (error, HZ_AGGREGATOR_ERROR, HZ_AGGREGATOR_ERROR_INVALID,
                       "%s line %u: expected \"client-id token-sha256\"%s%s", path, i + 1,
                       local ? ": " : "", local ? local->message : "");
          g_clear_error (&local);
          return FALSE;
        }
    }
  return TRUE;
}

void
hz_aggregator_get_stats (HzAggregator *agg, HzAggregatorStats *out)
{
  g_mutex_lock (&agg->lock);
  *out = agg->stats;
  g_mutex_unlock (&agg->lock);
}

#define STATS_ADD(agg, field, v) \
  G_STMT_START { g_mutex_lock (&(agg)->lock); (agg)->stats.field += (v); \
                 g_mutex_unlock (&(agg)->lock); } G_STMT_END

/* ================================================================= aggregation */

typedef struct {
  HzDeltaConfig        *cfg;
  HzAggregatorOptions  opts;
  GPtrArray           *payloads;   /* GBytes* */
  char                *base;
  guint64              round;
  gint64               started_us;
} Job;

static void
job_free (gpointer p)
{
  Job *j = p;
  hz_delta_config_unref (j->cfg);
  g_ptr_array_unref (j->payloads);
  g_free (j->base);
  g_free (j);
}

static inline float
bf16_at (const guint8 *p, gsize k)
{
  guint16 h;
  memcpy (&h, p + 2 * k, 2);
  return hz_bf16_to_fp32 (GUINT16_FROM_LE (h));
}

/* The aggregate of validated wire payloads as a delta (f32). */
static HzLoraDelta *
aggregate_payloads (const Job *j, GError **error)
{
  const guint n = j->payloads->len;
  g_autoptr (GPtrArray) files = g_ptr_array_new_with_free_func ((GDestroyNotify) hz_safetensors_free);
  for (guint c = 0; c < n; c++)
    {
      HzSafetensors *st = hz_safetensors_new_from_bytes (j->payloads->pdata[c], error);
      if (!st)
        return NULL;   /* cannot happen: every payload was validated on upload */
      g_ptr_array_add (files, st);
    }
  g_autoptr (HzLoraDelta) out = hz_lora_delta_new (j->cfg, j->base);
  float *dst = hz_lora_delta_data (out);
  const guint8 **src = g_new (const guint8 *, n);
  const float **ptrs = g_new (const float *, n);
  gboolean ok = TRUE;

  if (j->opts.rule == HZ_AGG_RULE_TRIMMED_MEAN)
    {
      float *scratch = g_new (float, (gsize) n * BLOCK);
      for (guint i = 0; ok && i < hz_delta_config_n_tensors (j->cfg); i++)
        {
          const char *name = hz_delta_config_tensor_name (j->cfg, i);
          gsize len = hz_delta_config_tensor_n_elements (j->cfg, i);
          for (guint c = 0; c < n; c++)
            src[c] = hz_safetensors_find (files->pdata[c], name)->data;
          for (gsize k0 = 0; ok && k0 < len; k0 += BLOCK)
            {
              gsize m = MIN ((gsize) BLOCK, len - k0);
              for (guint c = 0; c < n; c++)
                {
                  float *row = scratch + (gsize) c * BLOCK;
                  for (gsize k = 0; k < m; k++)
                    row[k] = bf16_at (src[c], k0 + k);
                  ptrs[c] = row;
                }
              ok = hz_agg_trimmed_mean (ptrs, n, m, j->opts.beta,
                                        dst + hz_delta_config_offset (j->cfg, i) + k0);
            }
        }
      g_free (scratch);
    }
  else
    {
      gsize total = hz_delta_config_n_elements (j->cfg);
      float **full = g_new0 (float *, n);
      for (guint c = 0; c < n; c++)
        {
          full[c] = g_new (float, total);
          for (guint i = 0; i < hz_delta_config_n_tensors (j->cfg); i++)
            {
              const guint8 *p = hz_safetensors_find (files->pdata[c],
                                                     hz_delta_config_tensor_name (j->cfg, i))->data;
              float *row = full[c] + hz_delta_config_offset (j->cfg, i);
              for (gsize k = 0; k < hz_delta_config_tensor_n_elements (j->cfg, i); k++)
                row[k] = bf16_at (p, k);
            }
          ptrs[c] = full[c];
        }
      ok = hz_agg_multi_krum (ptrs, n, total, j->opts.krum_f, MIN (j->opts.krum_m, n), dst);
      for (guint c = 0; c < n; c++)
        g_free (full[c]);
      g_free (full);
    }
  g_free (src);
  g_free (ptrs);
  if (!ok)
    {
      g_set_error (error, HZ_AGGREGATOR_ERROR, HZ_AGGREGATOR_ERROR_INVALID,
                   "too few updates (%u) for the aggregation rule", n);
      return NULL;
    }
  return g_steal_pointer (&out);
}

static void
aggregate_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  Job *j = data;
  GError *error = NULL;
  g_autoptr (HzLoraDelta) d = aggregate_payloads (j, &error);
  if (!d)
    {
      g_task_return_error (task, error);
      return;
    }
  g_task_return_pointer (task, hz_lora_delta_to_wire (d, j->round, 0.0),
                         (GDestroyNotify) g_bytes_unref);
}

static void
remove_spool_round (HzAggregator *agg, guint64 round)
{
  if (!agg->spool_dir)
    return;
  g_autofree char *dir = g_strdup_printf ("%s/round-%" G_GUINT64_FORMAT, agg->spool_dir, round);
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name (d)))
    {
      g_autofree char *p = g_build_filename (dir, name, NULL);
      g_unlink (p);
    }
  g_rmdir (dir);
}

static void
open_next_round (HzAggregator *agg)
{
  remove_spool_round (agg, agg->round);
  g_hash_table_remove_all (agg->uploads);
  g_clear_pointer (&agg->round_base, g_free);
  agg->round++;
  agg->deadline_us = g_get_real_time () + agg->opts.round_duration_us;
  agg->aggregating = FALSE;
  g_mutex_lock (&agg->lock);
  agg->stats.current_round = agg->round;
  g_mutex_unlock (&agg->lock);
}

static void
aggregate_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  HzAggregator *agg = user_data;
  Job *j = g_task_get_task_data (G_TASK (result));
  GError *error = NULL;
  GBytes *wire = g_task_propagate_pointer (G_TASK (result), &error);
  if (!wire)
    {
      g_warning ("aggregating round %" G_GUINT64_FORMAT " failed: %s", j->round, error->message);
      g_error_free (error);
      agg->aggregating = FALSE;   /* keep the round open; the timer retries */
      return;
    }
  Aggregate *a = g_new (Aggregate, 1);
  a->round = j->round;
  a->wire = wire;
  g_queue_push_tail (&agg->aggregates, a);
  while (g_queue_get_length (&agg->aggregates) > KEEP_AGGREGATES)
    aggregate_free (g_queue_pop_head (&agg->aggregates));
  g_mutex_lock (&agg->lock);
  agg->stats.rounds_aggregated++;
  agg->stats.last_aggregate_s = (g_get_real_time () - j->started_us) / 1e6;
  g_mutex_unlock (&agg->lock);
  g_message ("round %" G_GUINT64_FORMAT " aggregated from %u updates in %.3f s", j->round,
             j->payloads->len, (g_get_real_time () - j->started_us) / 1e6);
  open_next_round (agg);
}

static void
start_aggregation (HzAggregator *agg)
{
  Job *j = g_new0 (Job, 1);
  j->cfg = hz_delta_config_ref (agg->cfg);
  j->opts = agg->opts;
  j->payloads = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  j->base = g_strdup (agg->round_base);
  j->round = agg->round;
  j->started_us = g_get_real_time ();
  GHashTableIter it;
  gpointer v;
  g_hash_table_iter_init (&it, agg->uploads);
  while (g_hash_table_iter_next (&it, NULL, &v))
    g_ptr_array_add (j->payloads, g_bytes_ref (((Upload *) v)->payload));
  agg->aggregating = TRUE;
  g_autoptr (GTask) task = g_task_new (NULL, NULL, aggregate_done, agg);
  g_task_set_task_data (task, j, job_free);
  g_task_run_in_thread (task, aggregate_thread);
}

gboolean
hz_aggregator_close_round (HzAggregator *agg)
{
  if (agg->aggregating || g_hash_table_size (agg->uploads) < agg->opts.min_clients)
    return FALSE;
  start_aggregation (agg);
  return TRUE;
}

static gboolean
on_timer (gpointer user_data)
{
  HzAggregator *agg = user_data;
  if (!agg->aggregating && g_get_real_time () >= agg->deadline_us)
    {
      if (g_hash_table_size (agg->uploads) >= agg->opts.min_clients)
        start_aggregation (agg);
      else
        agg->deadline_us += agg->opts.round_duration_us;   /* too few: extend */
    }
  return G_SOURCE_CONTINUE;
}

/* ================================================================= HTTP */

static void
reply_text (SoupServerMessage *msg, guint status, const char *fmt, ...) G_GNUC_PRINTF (3, 4);

static void
reply_text (SoupServerMessage *msg, guint status, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *text = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_autofree char *line = g_strconcat (text, "\n", NULL);
  soup_server_message_set_status (msg, status, NULL);
  soup_server_message_set_response (msg, "text/plain; charset=utf-8", SOUP_MEMORY_COPY, line,
                                    strlen (line));
}

static void
reply_json (SoupServerMessage *msg, JsonBuilder *b)
{
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  g_autofree char *text = hz_json_node_to_string (root, FALSE);
  soup_server_message_set_status (msg, 200, NULL);
  soup_server_message_set_response (msg, "application/json", SOUP_MEMORY_COPY, text,
                                    strlen (text));
}

/* The client id of the request's bearer token, or NULL (after replying 401). */
static const char *
authenticate (HzAggregator *agg, SoupServerMessage *msg)
{
  const char *h = soup_message_headers_get_one (soup_server_message_get_request_headers (msg),
                                                "Authorization");
  const char *id = NULL;
  if (h && g_ascii_strncasecmp (h, "Bearer ", 7) == 0 && h[7])
    {
      g_autofree char *sha = g_compute_checksum_for_string (G_CHECKSUM_SHA256, h + 7, -1);
      id = g_hash_table_lookup (agg->client_by_hash, sha);
    }
  if (!id)
    {
      reply_text (msg, 401, "missing or unknown bearer token");
      soup_message_headers_replace (soup_server_message_get_response_headers (msg),
                                    "WWW-Authenticate", "Bearer");
      STATS_ADD (agg, rejected, 1);
    }
  return id;
}

/* Parse "/v1/rounds/<N>/<what>". */
static gboolean
parse_round_path (const char *path, guint64 *round, const char **what)
{
  if (!g_str_has_prefix (path, "/v1/rounds/"))
    return FALSE;
  const char *p = path + strlen ("/v1/rounds/");
  const char *slash = strchr (p, '/');
  if (!slash)
    return FALSE;
  g_autofree char *num = g_strndup (p, (gsize) (slash - p));
  *what = slash + 1;
  return g_ascii_string_to_unsigned (num, 10, 1, G_MAXINT64, round, NULL);
}

static void
handle_current (HzAggregator *agg, SoupServerMessage *msg)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "round");
  json_builder_add_int_value (b, (gint64) agg->round);
  json_builder_set_member_name (b, "state");
  json_builder_add_string_value (b, agg->aggregating ? "aggregating" : "open");
  json_builder_set_member_name (b, "min_clients");
  json_builder_add_int_value (b, agg->opts.min_clients);
  json_builder_set_member_name (b, "accepted");
  json_builder_add_int_value (b, g_hash_table_size (agg->uploads));
  json_builder_set_member_name (b, "deadline_us");
  json_builder_add_int_value (b, agg->deadline_us);
  json_builder_set_member_name (b, "config_sha256");
  json_builder_add_string_value (b, hz_delta_config_hash (agg->cfg));
  json_builder_end_object (b);
  reply_json (msg, b);
}

static void
reply_upload_ok (SoupServerMessage *msg, const char *status, guint64 round, const char *sha)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "status");
  json_builder_add_string_value (b, status);
  json_builder_set_member_name (b, "round");
  json_builder_add_int_value (b, (gint64) round);
  json_builder_set_member_name (b, "sha256");
  json_builder_add_string_value (b, sha);
  json_builder_end_object (b);
  reply_json (msg, b);
}

static GBytes *
spool (HzAggregator *agg, const char *client, GBytes *body, GError **error)
{
  if (!agg->spool_dir)
    return g_bytes_ref (body);
  g_autofree char *dir = g_strdup_printf ("%s/round-%" G_GUINT64_FORMAT, agg->spool_dir, agg->round);
  g_autofree char *path = g_strdup_printf ("%s/%s.safetensors", dir, client);
  /* whole or not at all (atomic-file.h): a full disk or a kill leaves no partial upload */
  if (g_mkdir_with_parents (dir, 0700) != 0 ||
      !hz_atomic_file_set_contents (path, g_bytes_get_data (body, NULL), g_bytes_get_size (body),
                                    0600, error))
    {
      if (error && !*error)
        g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errno), "%s: %s", dir,
                     g_strerror (errno));
      return NULL;
    }
  g_autoptr (GMappedFile) map = g_mapped_file_new (path, FALSE, error);
  return map ? g_mapped_file_get_bytes (map) : NULL;
}

/* 0 when the update is acceptable, else the HTTP status to refuse it with (and *why). */
static guint
validate_update (HzAggregator *agg, GBytes *body, guint64 round, char **why, char **base)
{
  GError *error = NULL;
  guint64 meta_round = 0;
  g_autoptr (HzLoraDelta) d = hz_lora_delta_from_wire (body, agg->cfg, &meta_round, NULL, &error);
  if (!d)
    {
      guint status = error->code == HZ_LORA_ERROR_FORMAT ? 400 : 422;
      *why = g_strdup_printf ("invalid update: %s", error->message);
      g_error_free (error);
      return status;
    }
  if (meta_round != round)
    {
      *why = g_strdup_printf ("the update's metadata is for round %" G_GUINT64_FORMAT
                              ", not %" G_GUINT64_FORMAT " (replay?)", meta_round, round);
      return 400;
    }
  double norm = hz_lora_delta_l2_norm (d);
  if (!(norm <= agg->opts.max_norm))
    {
      *why = g_strdup_printf ("the update's L2 norm %g exceeds the bound %g", norm,
                              agg->opts.max_norm);
      return 422;
    }
  const char *b = hz_lora_delta_get_base_sha256 (d);
  if (agg->round_base && strcmp (agg->round_base, b) != 0)
    {
      *why = g_strdup_printf ("the update is for base model %s; this round trains %s", b,
                              agg->round_base);
      return 422;
    }
  *base = g_strdup (b);
  return 0;
}

static void
handle_update (HzAggregator *agg, SoupServerMessage *msg, const char *client, guint64 round)
{
  if (round != agg->round || agg->aggregating)
    {
      reply_text (msg, 409, "round %" G_GUINT64_FORMAT " is not open (the open round is %"
                  G_GUINT64_FORMAT "%s)%s", round, agg->round,
                  agg->aggregating ? ", being aggregated" : "",
                  round < agg->round ? ": replay of an old round refused" : "");
      STATS_ADD (agg, rejected, 1);
      return;
    }
  g_autoptr (GBytes) body = soup_message_body_flatten (soup_server_message_get_request_body (msg));
  if (g_bytes_get_size (body) > agg->max_body)
    {
      reply_text (msg, 413, "update larger than %" G_GSIZE_FORMAT " bytes", agg->max_body);
      STATS_ADD (agg, rejected, 1);
      return;
    }
  g_autofree char *sha = hz_sha256_hex (body);
  Upload *prev = g_hash_table_lookup (agg->uploads, client);
  if (prev)
    {
      if (strcmp (prev->sha256, sha) == 0)
        {
          reply_upload_ok (msg, "duplicate", round, sha);   /* idempotent retry */
          STATS_ADD (agg, duplicates, 1);
        }
      else
        {
          reply_text (msg, 409, "client %s already sent a different update in round %"
                      G_GUINT64_FORMAT, client, round);
          STATS_ADD (agg, rejected, 1);
        }
      return;
    }
  if (g_hash_table_contains (agg->seen, sha))
    {
      reply_text (msg, 409, "this exact payload was already accepted (replay refused)");
      STATS_ADD (agg, rejected, 1);
      return;
    }
  g_autofree char *why = NULL, *base = NULL;
  guint status = validate_update (agg, body, round, &why, &base);
  if (status)
    {
      reply_text (msg, status, "%s", why);
      STATS_ADD (agg, rejected, 1);
      return;
    }
  GError *error = NULL;
  GBytes *kept = spool (agg, client, body, &error);
  if (!kept)
    {
      reply_text (msg, 503, "cannot store the update: %s", error->message);
      g_error_free (error);
      return;
    }
  Upload *u = g_new (Upload, 1);
  u->client_id = g_strdup (client);
  u->sha256 = g_strdup (sha);
  u->payload = kept;
  g_hash_table_insert (agg->uploads, u->client_id, u);
  g_hash_table_insert (agg->seen, g_strdup (sha), GUINT_TO_POINTER (1));
  if (!agg->round_base)
    agg->round_base = g_steal_pointer (&base);
  STATS_ADD (agg, accepted, 1);
  reply_upload_ok (msg, "accepted", round, sha);
  if (g_hash_table_size (agg->uploads) == g_hash_table_size (agg->client_ids) &&
      g_hash_table_size (agg->uploads) >= agg->opts.min_clients)
    start_aggregation (agg);
}

static void
handle_aggregate (HzAggregator *agg, SoupServerMessage *msg, guint64 round)
{
  for (GList *l = agg->aggregates.tail; l; l = l->prev)
    {
      Aggregate *a = l->data;
      if (a->round == round)
        {
          soup_server_message_set_status (msg, 200, NULL);
          soup_message_headers_set_content_type (soup_server_message_get_response_headers (msg),
                                                 "application/octet-stream", NULL);
          soup_message_body_append_bytes (soup_server_message_get_response_body (msg), a->wire);
          return;
        }
    }
  if (round == agg->round)
    reply_text (msg, 425, "round %" G_GUINT64_FORMAT " is still open", round);
  else
    reply_text (msg, 404, "no aggregate for round %" G_GUINT64_FORMAT, round);
}

static void
on_request (SoupServer *server, SoupServerMessage *msg, const char *path, GHashTable *query,
            gpointer user_data)
{
  HzAggregator *agg = user_data;
  const char *method = soup_server_message_get_method (msg);
  const char *client = authenticate (agg, msg);
  if (!client)
    return;
  guint64 round;
  const char *what;
  if (strcmp (path, "/v1/rounds/current") == 0 && strcmp (method, "GET") == 0)
    handle_current (agg, msg);
  else if (parse_round_path (path, &round, &what) && strcmp (what, "update") == 0 &&
           strcmp (method, "PUT") == 0)
    handle_update (agg, msg, client, round);
  else if (parse_round_path (path, &round, &what) && strcmp (what, "aggregate") == 0 &&
           strcmp (method, "GET") == 0)
    handle_aggregate (agg, msg, round);
  else
    reply_text (msg, 404, "no such endpoint: %s %s", method, path);
}

/* ================================================================= deadlines
 *
 * One Guard per request (SoupServerMessage; libsoup makes it when the connection is
 * accepted, before any byte arrives; there is one request per connection, see
 * on_request_started). Its timer is a GSource with a ready time: the earlier of the
 * request's overall deadline and its idle deadline. When it fires, the connection's socket
 * is shut down; libsoup then sees the end of the stream, aborts the request and frees the
 * connection. */

#define MIN_RATE 16384   /* bytes per second a body or a reply must average */


static gboolean
guard_dispatch (GSource *source, GSourceFunc callback, gpointer user_data)
{
  return callback (user_data);
}

static GSourceFuncs guard_funcs = { NULL, NULL, guard_dispatch, NULL, NULL, NULL };

static void
guard_arm (Guard *g)
{
  g_source_set_ready_time (g->timer, MIN (g->deadline, g->idle));
}

static void
guard_free (gpointer p)
{
  Guard *g = p;
  if (g->agg)
    g_hash_table_remove (g->agg->guards, g);
  g_source_destroy (g->timer);
  g_source_unref (g->timer);
  g_free (g);
}

static gint64
seconds_at_min_rate (guint64 bytes)
{
  return (gint64) MIN (bytes / MIN_RATE, (guint64) G_MAXINT32) * G_USEC_PER_SEC;
}

static gboolean
guard_expired (gpointer user_data)
{
  Guard *g = user_data;
  const gint64 now = g_get_monotonic_time ();
  if (!g->agg)
    return G_SOURCE_REMOVE;
  if (now < MIN (g->deadline, g->idle))
    {
      guard_arm (g);   /* woken early */
      return G_SOURCE_CONTINUE;
    }
  g_source_set_ready_time (g->timer, -1);
  GSocket *sock = soup_server_message_get_socket (g->msg);
  if (sock)
    {
      g_socket_shutdown (sock, TRUE, TRUE, NULL);
      STATS_ADD (g->agg, timed_out, 1);
    }
  return G_SOURCE_CONTINUE;
}

/* A refused request: its body is dropped as it arrives, and it has io_timeout to end. */
static void
guard_discard (Guard *g)
{
  SoupMessageBody *body = soup_server_message_get_request_body (g->msg);
  soup_message_body_set_accumulate (body, FALSE);
  soup_message_body_truncate (body);
  g->discard = TRUE;
  g->deadline = MIN (g->deadline, g_get_monotonic_time () + g->agg->opts.io_timeout_us);
  guard_arm (g);
}

static void
on_got_headers (SoupServerMessage *msg, gpointer user_data)
{
  Guard *g = user_data;
  if (!g->agg)
    return;
  const gint64 now = g_get_monotonic_time (), t = g->agg->opts.io_timeout_us;
  if (soup_server_message_get_status (msg) != 0)   /* refused by on_early or by libsoup */
    {
      g->deadline = now + t;
      guard_discard (g);
      return;
    }
  SoupMessageHeaders *h = soup_server_message_get_request_headers (msg);
  const guint64 len = soup_message_headers_get_encoding (h) == SOUP_ENCODING_CONTENT_LENGTH
                        ? (guint64) soup_message_headers_get_content_length (h)
                        : (guint64) g->agg->max_body;
  g->deadline = now + t + seconds_at_min_rate (len);
  g->idle = now + t;
  guard_arm (g);
}

static void
on_got_chunk (SoupServerMessage *msg, GBytes *chunk, gpointer user_data)
{
  Guard *g = user_data;
  if (!g->agg)
    return;
  g->body_bytes += g_bytes_get_size (chunk);
  g->idle = g_get_monotonic_time () + g->agg->opts.io_timeout_us;
  if (!g->discard && g->body_bytes > g->agg->max_body)
    {
      /* a chunked body (no Content-Length for on_early to check) past the limit */
      reply_text (msg, 413, "update larger than %" G_GSIZE_FORMAT " bytes", g->agg->max_body);
      STATS_ADD (g->agg, rejected, 1);
      guard_discard (g);
    }
  else
    guard_arm (g);
}

/* The request is read and answered (the handler ran): the reply must be taken in time. */
static void
on_got_body (SoupServerMessage *msg, gpointer user_data)
{
  Guard *g = user_data;
  if (!g->agg)
    return;
  const gint64 now = g_get_monotonic_time ();
  SoupMessageBody *reply = soup_server_message_get_response_body (msg);
  g->deadline = now + g->agg->opts.io_timeout_us + seconds_at_min_rate ((guint64) reply->length);
  g->idle = G_MAXINT64;
  guard_arm (g);
}

static void
on_finished (SoupServerMessage *msg, gpointer user_data)
{
  Guard *g = user_data;
  g_source_set_ready_time (g->timer, -1);
}

static void
on_request_started (SoupServer *server, SoupServerMessage *msg, gpointer user_data)
{
  HzAggregator *agg = user_data;
  /* One request per connection. libsoup before 3.3 never frees a kept-alive connection that
   * is closed while it waits for the next request (libsoup commit d20c6601, "server: do not
   * leak idle connections closed by the client"): every such client would leak a socket.
   * The federation client makes a few requests per round; reconnecting costs it nothing. */
  soup_message_headers_replace (soup_server_message_get_response_headers (msg), "Connection",
                                "close");
  Guard *g = g_new0 (Guard, 1);
  g->agg = agg;
  g->msg = msg;
  g->deadline = g_get_monotonic_time () + agg->opts.io_timeout_us;   /* the headers */
  g->idle = G_MAXINT64;
  g->timer = g_source_new (&guard_funcs, sizeof (GSource));
  g_source_set_callback (g->timer, guard_expired, g, NULL);
  g_source_set_static_name (g->timer, "hz-aggregator-deadline");
  guard_arm (g);
  g_source_attach (g->timer, agg->context);
  g_hash_table_add (agg->guards, g);
  g_object_set_data_full (G_OBJECT (msg), "hz-aggregator-guard", g, guard_free);
  /* after libsoup's own got-headers handler, which runs on_early */
  g_signal_connect (msg, "got-headers", G_CALLBACK (on_got_headers), g);
  g_signal_connect (msg, "got-chunk", G_CALLBACK (on_got_chunk), g);
  g_signal_connect_after (msg, "got-body", G_CALLBACK (on_got_body), g);
  g_signal_connect (msg, "finished", G_CALLBACK (on_finished), g);
}

/* Before the body is read: refuse unauthenticated or oversized uploads early. */
static void
on_early (SoupServer *server, SoupServerMessage *msg, const char *path, GHashTable *query,
          gpointer user_data)
{
  HzAggregator *agg = user_data;
  if (!authenticate (agg, msg))
    return;
  goffset len = soup_message_headers_get_content_length (
    soup_server_message_get_request_headers (msg));
  if (len > (goffset) agg->max_body)
    {
      reply_text (msg, 413, "update larger than %" G_GSIZE_FORMAT " bytes", agg->max_body);
      STATS_ADD (agg, rejected, 1);
    }
}

/* The server, on the calling thread's default context, with the round timer. */
static void
ensure_server (HzAggregator *agg)
{
  if (agg->server)
    return;
  agg->server = soup_server_new ("server-header", "hanzo-aggregator", NULL);
  soup_server_add_early_handler (agg->server, "/v1/", on_early, agg, NULL);
  soup_server_add_handler (agg->server, "/v1/", on_request, agg, NULL);
  g_signal_connect (agg->server, "request-started", G_CALLBACK (on_request_started), agg);
  agg->context = g_main_context_ref_thread_default ();
  agg->timer = g_timeout_source_new (100);
  g_source_set_callback (agg->timer, on_timer, agg, NULL);
  g_source_attach (agg->timer, agg->context);
}

gboolean
hz_aggregator_serve_stream (HzAggregator *agg, GIOStream *stream, GError **error)
{
  g_return_val_if_fail (agg != NULL && G_IS_IO_STREAM (stream), FALSE);
  ensure_server (agg);
  /* libsoup needs both addresses: the socket's, or the unspecified IPv4 address port 0 for a
   * stream without one */
  g_autoptr (GSocketAddress) local_addr = NULL, remote_addr = NULL;
  if (G_IS_SOCKET_CONNECTION (stream))
    {
      local_addr = g_socket_connection_get_local_address (G_SOCKET_CONNECTION (stream), NULL);
      remote_addr = g_socket_connection_get_remote_address (G_SOCKET_CONNECTION (stream), NULL);
    }
  g_autoptr (GInetAddress) any = g_inet_address_new_any (G_SOCKET_FAMILY_IPV4);
  if (!local_addr)
    local_addr = g_inet_socket_address_new (any, 0);
  if (!remote_addr)
    remote_addr = g_inet_socket_address_new (any, 0);
  GError *local = NULL;
  if (!soup_server_accept_iostream (agg->server, stream, local_addr, remote_addr, &local))
    {
      g_set_error (error, HZ_AGGREGATOR_ERROR, HZ_AGGREGATOR_ERROR_IO, "accepting a stream: %s",
                   local->message);
      g_error_free (local);
      return FALSE;
    }
  return TRUE;
}

gboolean
hz_aggregator_listen (HzAggregator *agg, const char *address, guint port, GTlsCertificate *tls,
                      GError **error)
{
  g_return_val_if_fail (!agg->listening, FALSE);
  ensure_server (agg);
  if (tls)
    soup_server_set_tls_certificate (agg->server, tls);
  g_autoptr (GInetAddress) inet = g_inet_address_new_from_string (address ? address : "127.0.0.1");
  GError *local = NULL;
  if (!inet)
    g_set_error (&local, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "bad address '%s'", address);
  else
    {
      g_autoptr (GSocketAddress) sa = g_inet_socket_address_new (inet, port);
      soup_server_listen (agg->server, sa, tls ? SOUP_SERVER_LISTEN_HTTPS : 0, &local);
    }
  if (local)
    {
      g_set_error (error, HZ_AGGREGATOR_ERROR, HZ_AGGREGATOR_ERROR_IO, "listening: %s",
                   local->message);
      g_error_free (local);
      return FALSE;
    }
  GSList *uris = soup_server_get_uris (agg->server);
  agg->port = uris ? (guint) g_uri_get_port (uris->data) : port;
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);
  agg->listening = TRUE;
  return TRUE;
}

guint
hz_aggregator_get_port (HzAggregator *agg)
{
  return agg->port;
}
