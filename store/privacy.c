/* privacy.c — privacy ledger and egress log accessors (hanzo-store-privacy.h; tables in
 * schema.c migration 3). */
#include "hanzo-store-privacy.h"
#include "store-private.h"

#include <math.h>
#include <string.h>

static const char *const mechanisms[] = { "gaussian-release", "dp-sgd" };
static const char *const directions[] = { "upload", "download" };
static const char *const statuses[] = { "ok", "retry", "rejected", "failed", "cancelled" };

static const char *
enum_to_string (const char *const *names, gsize n, int v)
{
  return v >= 0 && (gsize) v < n ? names[v] : NULL;
}

static gboolean
enum_from_string (const char *const *names, gsize n, const char *s, int *out)
{
  for (gsize i = 0; s && i < n; i++)
    if (strcmp (names[i], s) == 0)
      {
        *out = (int) i;
        return TRUE;
      }
  return FALSE;
}

const char *
hz_privacy_mechanism_to_string (HzPrivacyMechanism mech)
{
  return enum_to_string (mechanisms, G_N_ELEMENTS (mechanisms), mech);
}

gboolean
hz_privacy_mechanism_from_string (const char *str, HzPrivacyMechanism *out)
{
  int v;
  if (!enum_from_string (mechanisms, G_N_ELEMENTS (mechanisms), str, &v))
    return FALSE;
  *out = (HzPrivacyMechanism) v;
  return TRUE;
}

const char *
hz_egress_direction_to_string (HzEgressDirection dir)
{
  return enum_to_string (directions, G_N_ELEMENTS (directions), dir);
}

const char *
hz_egress_status_to_string (HzEgressStatus status)
{
  return enum_to_string (statuses, G_N_ELEMENTS (statuses), status);
}

void
hz_privacy_ledger_entry_free (HzPrivacyLedgerEntry *e)
{
  if (!e)
    return;
  g_free (e->orders);
  g_free (e->rdp);
  g_free (e->release_id);
  g_free (e->payload_sha256);
  g_free (e);
}

void
hz_egress_log_entry_free (HzEgressLogEntry *e)
{
  if (!e)
    return;
  g_free (e->endpoint);
  g_free (e->payload_sha256);
  g_free (e->release_id);
  g_free (e->message);
  g_free (e);
}

/* ================================================================= helpers */

static gboolean
invalid (GError **error, const char *what)
{
  g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID, "%s", what);
  return FALSE;
}

static gboolean
utf8_or_null (const char *s)
{
  return !s || g_utf8_validate (s, -1, NULL);
}

static void
bind_text_or_null (sqlite3_stmt *st, int idx, const char *s)
{
  if (s)
    sqlite3_bind_text (st, idx, s, -1, SQLITE_TRANSIENT);
  else
    sqlite3_bind_null (st, idx);
}

static char *
column_text_or_null (sqlite3_stmt *st, int col)
{
  if (sqlite3_column_type (st, col) == SQLITE_NULL)
    return NULL;
  return g_strdup ((const char *) sqlite3_column_text (st, col));
}

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

/* Step an INSERT inside hz_store_write_begin/end; returns the row id or 0. */
static gint64
insert_row (HzStore *store, sqlite3_stmt *st, const char *what, GError **error)
{
  int rc = sqlite3_step (st);
  hz_store_stmt_done (st);
  if (rc != SQLITE_DONE)
    {
      GError *local = NULL;
      hz_store_set_sqlite_error (&local, store->db, rc, what);
      if ((rc & 0xff) == SQLITE_CONSTRAINT)   /* duplicate release, unknown release, CHECK */
        local->code = HZ_STORE_ERROR_INVALID;
      g_propagate_error (error, local);
      return 0;
    }
  return sqlite3_last_insert_rowid (store->db);
}

typedef gpointer (*RowFunc) (sqlite3_stmt *st);

static GPtrArray *
collect (HzStore *store, sqlite3_stmt *st, RowFunc from_row, GDestroyNotify free_fn,
         const char *what, GError **error)
{
  GPtrArray *rows = g_ptr_array_new_with_free_func (free_fn);
  int rc;
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    g_ptr_array_add (rows, from_row (st));
  hz_store_stmt_done (st);
  if (rc != SQLITE_DONE)
    {
      g_ptr_array_unref (rows);
      hz_store_set_sqlite_error (error, store->db, rc, what);
      return NULL;
    }
  return rows;
}

/* ================================================================= privacy ledger */

static gboolean
check_ledger_entry (const HzPrivacyLedgerEntry *e, GError **error)
{
  gboolean release = e->mechanism == HZ_PRIVACY_MECH_GAUSSIAN_RELEASE;
  if (!hz_privacy_mechanism_to_string (e->mechanism))
    return invalid (error, "unknown privacy mechanism");
  if (!(e->q > 0 && e->q <= 1) || !(e->noise_multiplier > 0) || !isfinite (e->noise_multiplier)
      || !(e->clip_norm > 0) || !isfinite (e->clip_norm) || e->steps < 1)
    return invalid (error, "ledger entry: q must be in (0,1], noise multiplier and clip norm "
                           "finite and > 0, steps >= 1");
  if (e->n_orders < 1 || !e->orders || !e->rdp)
    return invalid (error, "ledger entry: needs at least one RDP order");
  for (gsize i = 0; i < e->n_orders; i++)
    if (!(e->orders[i] > 1) || !(e->rdp[i] >= 0) || isnan (e->rdp[i]))
      return invalid (error, "ledger entry: orders must be > 1 and RDP values >= 0");
  if (!(e->epsilon >= 0) || !(e->delta > 0 && e->delta < 1))
    return invalid (error, "ledger entry: epsilon must be >= 0 and delta in (0,1)");
  if (release != (e->release_id != NULL) || release != (e->payload_sha256 != NULL))
    return invalid (error, "ledger entry: a release (and only a release) has a release id "
                           "and a payload sha256");
  if (!utf8_or_null (e->release_id) || !utf8_or_null (e->payload_sha256))
    return invalid (error, "ledger entry: invalid UTF-8");
  return TRUE;
}

gint64
hz_store_add_privacy_ledger_entry (HzStore *store, const HzPrivacyLedgerEntry *e,
                                   GError **error)
{
  if (!check_ledger_entry (e, error))
    return 0;
  sqlite3_stmt *st = hz_store_prepare (store,
    "INSERT INTO privacy_ledger (time_us, mechanism, q, noise_multiplier, clip_norm, steps,"
    " orders, rdp, epsilon, delta, release_id, round_id, payload_sha256)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", error);
  if (!st || !hz_store_write_begin (store, error))
    return 0;
  sqlite3_bind_int64 (st, 1, e->time_us > 0 ? e->time_us : g_get_real_time ());
  sqlite3_bind_text (st, 2, hz_privacy_mechanism_to_string (e->mechanism), -1, SQLITE_STATIC);
  sqlite3_bind_double (st, 3, e->q);
  sqlite3_bind_double (st, 4, e->noise_multiplier);
  sqlite3_bind_double (st, 5, e->clip_norm);
  sqlite3_bind_int64 (st, 6, e->steps);
  bind_doubles (st, 7, e->orders, e->n_orders);
  bind_doubles (st, 8, e->rdp, e->n_orders);
  if (isfinite (e->epsilon))
    sqlite3_bind_double (st, 9, e->epsilon);
  else
    sqlite3_bind_null (st, 9);   /* +inf: SQLite REAL cannot round-trip it portably */
  sqlite3_bind_double (st, 10, e->delta);
  bind_text_or_null (st, 11, e->release_id);
  sqlite3_bind_int64 (st, 12, e->round_id);
  bind_text_or_null (st, 13, e->payload_sha256);
  gint64 id = insert_row (store, st, "adding a privacy ledger entry", error);
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
  e->epsilon = sqlite3_column_type (st, 9) == SQLITE_NULL ? INFINITY
                                                          : sqlite3_column_double (st, 9);
  e->delta = sqlite3_column_double (st, 10);
  e->release_id = column_text_or_null (st, 11);
  e->round_id = sqlite3_column_int64 (st, 12);
  e->payload_sha256 = column_text_or_null (st, 13);
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
  return collect (store, st, ledger_from_row, (GDestroyNotify) hz_privacy_ledger_entry_free,
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
  g_autoptr (GPtrArray) rows = collect (store, st, ledger_from_row,
                                        (GDestroyNotify) hz_privacy_ledger_entry_free,
                                        "reading the privacy ledger", error);
  if (!rows)
    return NULL;
  if (rows->len == 0)
    {
      g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_NOT_FOUND,
                   "no release '%s' in the privacy ledger", release_id);
      return NULL;
    }
  return g_ptr_array_steal_index (rows, 0);
}

/* ================================================================= egress log */

gint64
hz_store_add_egress_log (HzStore *store, const HzEgressLogEntry *e, GError **error)
{
  if (!hz_egress_direction_to_string (e->direction) || !hz_egress_status_to_string (e->status))
    return invalid (error, "egress log: unknown direction or status");
  if (!e->endpoint || !g_utf8_validate (e->endpoint, -1, NULL) ||
      !utf8_or_null (e->payload_sha256) || !utf8_or_null (e->release_id) ||
      !utf8_or_null (e->message))
    return invalid (error, "egress log: endpoint missing or invalid UTF-8");
  if (e->direction == HZ_EGRESS_UPLOAD && !e->release_id)
    return invalid (error, "egress log: an upload must name its release in the privacy ledger");
  if (e->bytes < 0 || !(e->epsilon >= 0))
    return invalid (error, "egress log: bytes and epsilon must be >= 0");
  sqlite3_stmt *st = hz_store_prepare (store,
    "INSERT INTO egress_log (time_us, direction, endpoint, bytes, payload_sha256, epsilon,"
    " status, http_status, release_id, round_id, attempt, message)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", error);
  if (!st || !hz_store_write_begin (store, error))
    return 0;
  sqlite3_bind_int64 (st, 1, e->time_us > 0 ? e->time_us : g_get_real_time ());
  sqlite3_bind_text (st, 2, hz_egress_direction_to_string (e->direction), -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 3, e->endpoint, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64 (st, 4, e->bytes);
  bind_text_or_null (st, 5, e->payload_sha256);
  if (isfinite (e->epsilon))
    sqlite3_bind_double (st, 6, e->epsilon);
  else
    sqlite3_bind_null (st, 6);
  sqlite3_bind_text (st, 7, hz_egress_status_to_string (e->status), -1, SQLITE_STATIC);
  sqlite3_bind_int (st, 8, e->http_status);
  bind_text_or_null (st, 9, e->release_id);
  sqlite3_bind_int64 (st, 10, e->round_id);
  sqlite3_bind_int (st, 11, e->attempt);
  bind_text_or_null (st, 12, e->message);
  gint64 id = insert_row (store, st, "adding an egress log entry", error);
  return hz_store_write_end (store, id > 0, error) ? id : 0;
}

static gpointer
egress_from_row (sqlite3_stmt *st)
{
  HzEgressLogEntry *e = g_new0 (HzEgressLogEntry, 1);
  int v = 0;
  e->id = sqlite3_column_int64 (st, 0);
  e->time_us = sqlite3_column_int64 (st, 1);
  if (enum_from_string (directions, G_N_ELEMENTS (directions),
                        (const char *) sqlite3_column_text (st, 2), &v))
    e->direction = (HzEgressDirection) v;
  e->endpoint = g_strdup ((const char *) sqlite3_column_text (st, 3));
  e->bytes = sqlite3_column_int64 (st, 4);
  e->payload_sha256 = column_text_or_null (st, 5);
  e->epsilon = sqlite3_column_type (st, 6) == SQLITE_NULL ? INFINITY
                                                          : sqlite3_column_double (st, 6);
  if (enum_from_string (statuses, G_N_ELEMENTS (statuses),
                        (const char *) sqlite3_column_text (st, 7), &v))
    e->status = (HzEgressStatus) v;
  e->http_status = sqlite3_column_int (st, 8);
  e->release_id = column_text_or_null (st, 9);
  e->round_id = sqlite3_column_int64 (st, 10);
  e->attempt = sqlite3_column_int (st, 11);
  e->message = column_text_or_null (st, 12);
  return e;
}

GPtrArray *
hz_store_list_egress_log (HzStore *store, gint64 since_us, int limit, GError **error)
{
  sqlite3_stmt *st = hz_store_prepare (store,
    "SELECT id, time_us, direction, endpoint, bytes, payload_sha256, epsilon, status,"
    " http_status, release_id, round_id, attempt, message FROM egress_log"
    " WHERE time_us >= ? ORDER BY time_us, id LIMIT ?", error);
  if (!st)
    return NULL;
  sqlite3_bind_int64 (st, 1, since_us);
  sqlite3_bind_int64 (st, 2, limit > 0 ? limit : -1);
  return collect (store, st, egress_from_row, (GDestroyNotify) hz_egress_log_entry_free,
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
