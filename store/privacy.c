/* privacy.c — privacy ledger and egress log accessors (hanzo-store-privacy.h; tables in
 * schema.c migration 3, the purpose of the model channel's rows in migration 8). */
#include "hanzo-store-privacy.h"
#include "store-private.h"

#include <math.h>
#include <string.h>

static const char *const mechanisms[] = { "gaussian-release", "dp-sgd" };
static const char *const directions[] = { "upload", "download" };
static const char *const statuses[] = { "ok", "retry", "rejected", "failed", "cancelled" };
static const char *const purposes[] = { "federation", "model-search", "model-files",
                                        "model-download" };

HZ_STORE_DEFINE_ENUM_STRINGS (HzPrivacyMechanism, hz_privacy_mechanism_to_string,
                              hz_privacy_mechanism_from_string, mechanisms)

const char *
hz_egress_direction_to_string (HzEgressDirection dir)
{
  return hz_store_enum_to_string (directions, G_N_ELEMENTS (directions), dir);
}

const char *
hz_egress_status_to_string (HzEgressStatus status)
{
  return hz_store_enum_to_string (statuses, G_N_ELEMENTS (statuses), status);
}

const char *
hz_egress_purpose_to_string (HzEgressPurpose purpose)
{
  return hz_store_enum_to_string (purposes, G_N_ELEMENTS (purposes), purpose);
}

void
hz_privacy_ledger_entry_free (HzPrivacyLedgerEntry *e)
{
  if (e)
    hz_store_free_record (e, 4, (gpointer) e->orders, (gpointer) e->rdp, e->release_id,
                          e->payload_sha256);
}

void
hz_egress_log_entry_free (HzEgressLogEntry *e)
{
  if (e)
    hz_store_free_record (e, 5, e->endpoint, e->payload_sha256, e->release_id, e->message,
                          e->subject);
}

/* ================================================================= helpers */

/* Doubles are stored as BLOBs of little-endian IEEE-754 binary64. */
static void
bind_doubles (sqlite3_stmt *st, int idx, const double *v, gsize n)
{
  guint64 *le = g_new (guint64, n);
  for (gsize i = 0; i < n; i++)
    {
      guint64 u;
      memcpy (&u, &v[i], 8);
      le[i] = GUINT64_TO_LE (u);
    }
  sqlite3_bind_blob64 (st, idx, le, n * 8, g_free);
}

static double *
column_doubles (sqlite3_stmt *st, int col, gsize *n)
{
  const guint8 *p = sqlite3_column_blob (st, col);
  gsize bytes = (gsize) sqlite3_column_bytes (st, col);
  *n = bytes / 8;
  double *v = g_new (double, MAX (*n, 1));
  for (gsize i = 0; i < *n; i++)
    {
      guint64 u;
      memcpy (&u, p + 8 * i, 8);
      u = GUINT64_FROM_LE (u);
      memcpy (&v[i], &u, 8);
    }
  return v;
}

/* ================================================================= privacy ledger */

static gboolean
check_ledger_entry (const HzPrivacyLedgerEntry *e, GError **error)
{
  gboolean release = e->mechanism == HZ_PRIVACY_MECH_GAUSSIAN_RELEASE;
  if (!hz_privacy_mechanism_to_string (e->mechanism))
    return hz_store_set_invalid (error, "unknown privacy mechanism");
  if (!(e->q > 0 && e->q <= 1) || !(e->noise_multiplier > 0) || !isfinite (e->noise_multiplier)
      || !(e->clip_norm > 0) || !isfinite (e->clip_norm) || e->steps < 1)
    return hz_store_set_invalid (error, "ledger entry: q must be in (0,1], noise multiplier "
                                        "and clip norm finite and > 0, steps >= 1");
  if (e->n_orders < 1 || !e->orders || !e->rdp)
    return hz_store_set_invalid (error, "ledger entry: needs at least one RDP order");
  for (gsize i = 0; i < e->n_orders; i++)
    if (!(e->orders[i] > 1) || !(e->rdp[i] >= 0) || isnan (e->rdp[i]))
      return hz_store_set_invalid (error,
                                   "ledger entry: orders must be > 1 and RDP values >= 0");
  if (!(e->epsilon >= 0) || !(e->delta > 0 && e->delta < 1))
    return hz_store_set_invalid (error, "ledger entry: epsilon must be >= 0 and delta in (0,1)");
  if (release != (e->release_id != NULL) || release != (e->payload_sha256 != NULL))
    return hz_store_set_invalid (error, "ledger entry: a release (and only a release) has a "
                                        "release id and a payload sha256");
  if (!hz_store_utf8_or_null (e->release_id) || !hz_store_utf8_or_null (e->payload_sha256))
    return hz_store_set_invalid (error, "ledger entry: invalid UTF-8");
  return TRUE;
}

gint64
hz_store_add_privacy_ledger_entry (HzStore *store, const HzPrivacyLedgerEntry *e,
                                   GError **error)
{
  if (!check_ledger_entry (e, error))
    return 0;
  sqlite3_stmt *st = hz_store_prepare_write (store,
    "INSERT INTO privacy_ledger (time_us, mechanism, q, noise_multiplier, clip_norm, steps,"
    " orders, rdp, epsilon, delta, release_id, round_id, payload_sha256)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", error);
  if (!st)
    return 0;
  sqlite3_bind_int64 (st, 1, e->time_us > 0 ? e->time_us : g_get_real_time ());
  sqlite3_bind_text (st, 2, hz_privacy_mechanism_to_string (e->mechanism), -1, SQLITE_STATIC);
  sqlite3_bind_double (st, 3, e->q);
  sqlite3_bind_double (st, 4, e->noise_multiplier);
  sqlite3_bind_double (st, 5, e->clip_norm);
  sqlite3_bind_int64 (st, 6, e->steps);
  bind_doubles (st, 7, e->orders, e->n_orders);
  bind_doubles (st, 8, e->rdp, e->n_orders);
  /* +inf: SQLite REAL cannot round-trip it portably */
  hz_store_bind_double_or_null (st, 9, isfinite (e->epsilon), e->epsilon);
  sqlite3_bind_double (st, 10, e->delta);
  hz_store_bind_text_or_null (st, 11, e->release_id);
  sqlite3_bind_int64 (st, 12, e->round_id);
  hz_store_bind_text_or_null (st, 13, e->payload_sha256);
  gint64 id;
  hz_store_step_insert (store, st, "adding a privacy ledger entry", &id, error);
  return hz_store_write_end (store, id > 0, error) ? id : 0;
}

#define LEDGER_COLUMNS \
  "id, time_us, mechanism, q, noise_multiplier, clip_norm, steps, orders, rdp, epsilon," \
  " delta, release_id, round_id, payload_sha256"

static gpointer
ledger_from_row (sqlite3_stmt *st)
{
  HzPrivacyLedgerEntry *e = g_new0 (HzPrivacyLedgerEntry, 1);
  gsize n_rdp;
  e->id = sqlite3_column_int64 (st, 0);
  e->time_us = sqlite3_column_int64 (st, 1);
  hz_privacy_mechanism_from_string ((const char *) sqlite3_column_text (st, 2), &e->mechanism);
  e->q = sqlite3_column_double (st, 3);
  e->noise_multiplier = sqlite3_column_double (st, 4);
  e->clip_norm = sqlite3_column_double (st, 5);
  e->steps = sqlite3_column_int64 (st, 6);
  e->orders = column_doubles (st, 7, &e->n_orders);
  e->rdp = column_doubles (st, 8, &n_rdp);
  e->n_orders = MIN (e->n_orders, n_rdp);
  e->epsilon = hz_store_column_double_or (st, 9, INFINITY);
  e->delta = sqlite3_column_double (st, 10);
  e->release_id = hz_store_column_text_or_null (st, 11);
  e->round_id = sqlite3_column_int64 (st, 12);
  e->payload_sha256 = hz_store_column_text_or_null (st, 13);
  return e;
}

GPtrArray *
hz_store_list_privacy_ledger (HzStore *store, gint64 since_us, GError **error)
{
  sqlite3_stmt *st = hz_store_prepare (store,
    "SELECT " LEDGER_COLUMNS " FROM privacy_ledger WHERE time_us >= ? ORDER BY time_us, id",
    error);
  if (!st)
    return NULL;
  sqlite3_bind_int64 (st, 1, since_us);
  return hz_store_collect (store, st, ledger_from_row,
                           (GDestroyNotify) hz_privacy_ledger_entry_free,
                           "reading the privacy ledger", error);
}

HzPrivacyLedgerEntry *
hz_store_get_privacy_release (HzStore *store, const char *release_id, GError **error)
{
  sqlite3_stmt *st = hz_store_prepare (store,
    "SELECT " LEDGER_COLUMNS " FROM privacy_ledger WHERE release_id = ?", error);
  if (!st)
    return NULL;
  sqlite3_bind_text (st, 1, release_id, -1, SQLITE_TRANSIENT);
  return hz_store_collect_one (store, st, ledger_from_row,
                               (GDestroyNotify) hz_privacy_ledger_entry_free,
                               "reading the privacy ledger", error,
                               "no release '%s' in the privacy ledger", release_id);
}

/* ================================================================= egress log */

/* The checks of a row to add or update (FALSE with HZ_STORE_ERROR_INVALID). */
static gboolean
egress_entry_valid (const HzEgressLogEntry *e, GError **error)
{
  if (!hz_egress_direction_to_string (e->direction) || !hz_egress_status_to_string (e->status) ||
      !hz_egress_purpose_to_string (e->purpose))
    return hz_store_set_invalid (error, "egress log: unknown direction, status or purpose");
  if (!e->endpoint || !g_utf8_validate (e->endpoint, -1, NULL) ||
      !hz_store_utf8_or_null (e->payload_sha256) || !hz_store_utf8_or_null (e->release_id) ||
      !hz_store_utf8_or_null (e->message))
    return hz_store_set_invalid (error, "egress log: endpoint missing or invalid UTF-8");
  if (e->direction == HZ_EGRESS_UPLOAD && !e->release_id)
    return hz_store_set_invalid (error, "egress log: an upload must name its release in the "
                                        "privacy ledger");
  if (e->bytes < 0 || !(e->epsilon >= 0))
    return hz_store_set_invalid (error, "egress log: bytes and epsilon must be >= 0");
  if (e->purpose == HZ_EGRESS_PURPOSE_FEDERATION ? e->subject != NULL
      : e->direction != HZ_EGRESS_DOWNLOAD || !hz_store_nonempty_utf8 (e->subject))
    return hz_store_set_invalid (error, "egress log: a model download row needs its subject, "
                                        "a federation row has none");
  return TRUE;
}

gboolean
hz_store_update_egress_log (HzStore *store, gint64 id, const HzEgressLogEntry *e,
                            GError **error)
{
  if (!egress_entry_valid (e, error))
    return FALSE;
  sqlite3_stmt *st = hz_store_prepare_write (store,
    "UPDATE egress_log SET bytes = ?, payload_sha256 = ?, status = ?, http_status = ?,"
    " message = ? WHERE id = ?", error);
  if (!st)
    return FALSE;
  sqlite3_bind_int64 (st, 1, e->bytes);
  hz_store_bind_text_or_null (st, 2, e->payload_sha256);
  sqlite3_bind_text (st, 3, hz_egress_status_to_string (e->status), -1, SQLITE_STATIC);
  sqlite3_bind_int (st, 4, e->http_status);
  hz_store_bind_text_or_null (st, 5, e->message);
  sqlite3_bind_int64 (st, 6, id);
  gboolean ok = hz_store_step_write_found (store, st, "updating an egress log entry",
                                           "egress log entry", id, error);
  return hz_store_write_end (store, ok, error);
}

gint64
hz_store_add_egress_log (HzStore *store, const HzEgressLogEntry *e, GError **error)
{
  if (!egress_entry_valid (e, error))
    return 0;
  sqlite3_stmt *st = hz_store_prepare_write (store,
    "INSERT INTO egress_log (time_us, direction, endpoint, bytes, payload_sha256, epsilon,"
    " status, http_status, release_id, round_id, attempt, message)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", error);
  if (!st)
    return 0;
  sqlite3_bind_int64 (st, 1, e->time_us > 0 ? e->time_us : g_get_real_time ());
  sqlite3_bind_text (st, 2, hz_egress_direction_to_string (e->direction), -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 3, e->endpoint, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64 (st, 4, e->bytes);
  hz_store_bind_text_or_null (st, 5, e->payload_sha256);
  hz_store_bind_double_or_null (st, 6, isfinite (e->epsilon), e->epsilon);
  sqlite3_bind_text (st, 7, hz_egress_status_to_string (e->status), -1, SQLITE_STATIC);
  sqlite3_bind_int (st, 8, e->http_status);
  hz_store_bind_text_or_null (st, 9, e->release_id);
  sqlite3_bind_int64 (st, 10, e->round_id);
  sqlite3_bind_int (st, 11, e->attempt);
  hz_store_bind_text_or_null (st, 12, e->message);
  gint64 id;
  gboolean ok = hz_store_step_insert (store, st, "adding an egress log entry", &id, error);
  if (ok && e->purpose != HZ_EGRESS_PURPOSE_FEDERATION)
    {
      sqlite3_stmt *p = hz_store_prepare (store,
        "INSERT INTO egress_purpose (log_id, purpose, subject) VALUES (?, ?, ?)", error);
      ok = p != NULL;
      if (ok)
        {
          sqlite3_bind_int64 (p, 1, id);
          sqlite3_bind_text (p, 2, hz_egress_purpose_to_string (e->purpose), -1, SQLITE_STATIC);
          sqlite3_bind_text (p, 3, e->subject, -1, SQLITE_TRANSIENT);
          ok = hz_store_step_write (store, p, "adding an egress log entry's purpose", error);
        }
    }
  return hz_store_write_end (store, ok, error) ? id : 0;
}

static gpointer
egress_from_row (sqlite3_stmt *st)
{
  HzEgressLogEntry *e = g_new0 (HzEgressLogEntry, 1);
  int v = 0;
  e->id = sqlite3_column_int64 (st, 0);
  e->time_us = sqlite3_column_int64 (st, 1);
  if (hz_store_enum_from_string (directions, G_N_ELEMENTS (directions),
                        (const char *) sqlite3_column_text (st, 2), &v))
    e->direction = (HzEgressDirection) v;
  e->endpoint = g_strdup ((const char *) sqlite3_column_text (st, 3));
  e->bytes = sqlite3_column_int64 (st, 4);
  e->payload_sha256 = hz_store_column_text_or_null (st, 5);
  e->epsilon = hz_store_column_double_or (st, 6, INFINITY);
  if (hz_store_enum_from_string (statuses, G_N_ELEMENTS (statuses),
                        (const char *) sqlite3_column_text (st, 7), &v))
    e->status = (HzEgressStatus) v;
  e->http_status = sqlite3_column_int (st, 8);
  e->release_id = hz_store_column_text_or_null (st, 9);
  e->round_id = sqlite3_column_int64 (st, 10);
  e->attempt = sqlite3_column_int (st, 11);
  e->message = hz_store_column_text_or_null (st, 12);
  if (hz_store_enum_from_string (purposes, G_N_ELEMENTS (purposes),
                                 (const char *) sqlite3_column_text (st, 13), &v))
    e->purpose = (HzEgressPurpose) v;
  e->subject = hz_store_column_text_or_null (st, 14);
  return e;
}

GPtrArray *
hz_store_list_egress_log (HzStore *store, gint64 since_us, int limit, GError **error)
{
  sqlite3_stmt *st = hz_store_prepare (store,
    "SELECT g.id, g.time_us, g.direction, g.endpoint, g.bytes, g.payload_sha256, g.epsilon,"
    " g.status, g.http_status, g.release_id, g.round_id, g.attempt, g.message, p.purpose,"
    " p.subject FROM egress_log AS g LEFT JOIN egress_purpose AS p ON p.log_id = g.id"
    " WHERE g.time_us >= ? ORDER BY g.time_us, g.id LIMIT ?", error);
  if (!st)
    return NULL;
  sqlite3_bind_int64 (st, 1, since_us);
  sqlite3_bind_int64 (st, 2, limit > 0 ? limit : -1);
  return hz_store_collect (store, st, egress_from_row, (GDestroyNotify) hz_egress_log_entry_free,
                           "reading the egress log", error);
}

gint64
hz_store_count_unledgered_uploads (HzStore *store, GError **error)
{
  gint64 n = -1;
  if (!hz_store_query_int (store->db,
                           "SELECT count(*) FROM egress_log AS g WHERE g.direction = 'upload'"
                           " AND NOT EXISTS (SELECT 1 FROM privacy_ledger AS p"
                           " WHERE p.release_id = g.release_id)", &n, error))
    return -1;
  return n;
}
