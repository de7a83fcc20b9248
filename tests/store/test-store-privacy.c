/* Privacy ledger and egress log (store/privacy.c, migration 3). */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include "hanzo-store-privacy.h"
#include "store-private.h"

static char *
tmp_db (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("hz-privacy-XXXXXX", &error);
  g_assert_no_error (error);
  return g_build_filename (dir, "hanzo.db", NULL);
}

static HzPrivacyLedgerEntry
release_entry (const char *release_id, double *orders, double *rdp)
{
  HzPrivacyLedgerEntry e = {
    .mechanism = HZ_PRIVACY_MECH_GAUSSIAN_RELEASE, .q = 1, .noise_multiplier = 1.5,
    .clip_norm = 0.1, .steps = 1, .n_orders = 3, .orders = orders, .rdp = rdp,
    .epsilon = 3.25, .delta = 1e-6, .release_id = (char *) release_id, .round_id = 4,
    .payload_sha256 = (char *) "ab12",
  };
  return e;
}

static void
test_ledger (void)
{
  g_autofree char *path = tmp_db ();
  g_autoptr (GError) error = NULL;
  g_autoptr (HzStore) store = hz_store_open (path, &error);
  g_assert_no_error (error);
  g_assert_cmpint (hz_store_get_schema_version (store), ==, HZ_STORE_SCHEMA_VERSION);
  g_assert_cmpint (HZ_STORE_SCHEMA_VERSION, >=, 3);

  double orders[3] = { 1.5, 2, 32 }, rdp[3] = { 0.1 / 3, 2.0 / 9, 32.0 / 9 };
  HzPrivacyLedgerEntry r = release_entry ("rel-1", orders, rdp);
  gint64 id1 = hz_store_add_privacy_ledger_entry (store, &r, &error);
  g_assert_no_error (error);
  g_assert_cmpint (id1, >, 0);
  HzPrivacyLedgerEntry t = {
    .mechanism = HZ_PRIVACY_MECH_DP_SGD, .q = 0.01, .noise_multiplier = 1.1, .clip_norm = 1,
    .steps = 1000, .n_orders = 3, .orders = orders, .rdp = rdp, .epsilon = 1.7,
    .delta = 1e-5, .time_us = 1000,
  };
  gint64 id2 = hz_store_add_privacy_ledger_entry (store, &t, &error);
  g_assert_no_error (error);
  g_assert_cmpint (id2, >, id1);

  /* duplicate release ids, and releases without id, are refused; nothing is written */
  g_assert_cmpint (hz_store_add_privacy_ledger_entry (store, &r, &error), ==, 0);
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID);
  g_clear_error (&error);
  HzPrivacyLedgerEntry bad = release_entry (NULL, orders, rdp);
  g_assert_cmpint (hz_store_add_privacy_ledger_entry (store, &bad, &error), ==, 0);
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID);
  g_clear_error (&error);
  bad = release_entry ("rel-x", orders, rdp);
  bad.noise_multiplier = 0;
  g_assert_cmpint (hz_store_add_privacy_ledger_entry (store, &bad, &error), ==, 0);
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID);
  g_clear_error (&error);

  g_autoptr (GPtrArray) all = hz_store_list_privacy_ledger (store, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (all->len, ==, 2);
  const HzPrivacyLedgerEntry *first = all->pdata[0];   /* time 1000 sorts first */
  g_assert_cmpint (first->id, ==, id2);
  g_assert_cmpint (first->mechanism, ==, HZ_PRIVACY_MECH_DP_SGD);
  g_assert_cmpint (first->steps, ==, 1000);
  g_assert_null (first->release_id);
  const HzPrivacyLedgerEntry *second = all->pdata[1];
  g_assert_cmpint (second->mechanism, ==, HZ_PRIVACY_MECH_GAUSSIAN_RELEASE);
  g_assert_cmpuint (second->n_orders, ==, 3);
  for (int i = 0; i < 3; i++)
    {
      g_assert_cmpfloat (second->orders[i], ==, orders[i]);
      g_assert_cmpfloat (second->rdp[i], ==, rdp[i]);   /* bit-exact round trip */
    }
  g_assert_cmpfloat (second->epsilon, ==, 3.25);
  g_assert_cmpfloat (second->delta, ==, 1e-6);
  g_assert_cmpint (second->round_id, ==, 4);
  g_assert_cmpstr (second->payload_sha256, ==, "ab12");
  g_assert_cmpint (second->time_us, >, g_get_real_time () - 60 * G_USEC_PER_SEC);

  g_autoptr (GPtrArray) recent = hz_store_list_privacy_ledger (store, 2000, &error);
  g_assert_cmpuint (recent->len, ==, 1);
  g_autoptr (HzPrivacyLedgerEntry) got = hz_store_get_privacy_release (store, "rel-1", &error);
  g_assert_no_error (error);
  g_assert_cmpint (got->id, ==, id1);
  g_assert_null (hz_store_get_privacy_release (store, "nope", &error));
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_NOT_FOUND);
}

static void
test_egress_log (void)
{
  g_autofree char *path = tmp_db ();
  g_autoptr (GError) error = NULL;
  g_autoptr (HzStore) store = hz_store_open (path, &error);
  g_assert_no_error (error);
  double orders[1] = { 2 }, rdp[1] = { 0.5 };
  HzPrivacyLedgerEntry r = release_entry ("rel-7", orders, rdp);
  r.n_orders = 1;
  g_assert_cmpint (hz_store_add_privacy_ledger_entry (store, &r, &error), >, 0);

  HzEgressLogEntry up = {
    .direction = HZ_EGRESS_UPLOAD, .endpoint = (char *) "http://127.0.0.1:1/v1/rounds/4/update",
    .bytes = 1234, .payload_sha256 = (char *) "ab12", .epsilon = 3.25,
    .status = HZ_EGRESS_STATUS_RETRY, .http_status = 503, .release_id = (char *) "rel-7",
    .round_id = 4, .attempt = 1, .message = (char *) "server busy",
  };
  g_assert_cmpint (hz_store_add_egress_log (store, &up, &error), >, 0);
  g_assert_no_error (error);
  up.status = HZ_EGRESS_STATUS_OK;
  up.http_status = 200;
  up.attempt = 2;
  up.message = NULL;
  g_assert_cmpint (hz_store_add_egress_log (store, &up, &error), >, 0);
  HzEgressLogEntry down = {
    .direction = HZ_EGRESS_DOWNLOAD, .endpoint = (char *) "http://127.0.0.1:1/v1/rounds/4/aggregate",
    .bytes = 999, .status = HZ_EGRESS_STATUS_REJECTED, .http_status = 200, .round_id = 4,
    .attempt = 1, .message = (char *) "NaN in tensor x",
  };
  g_assert_cmpint (hz_store_add_egress_log (store, &down, &error), >, 0);

  /* an upload with no ledger row cannot be logged: neither without id nor with a foreign one */
  up.release_id = NULL;
  g_assert_cmpint (hz_store_add_egress_log (store, &up, &error), ==, 0);
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID);
  g_clear_error (&error);
  up.release_id = (char *) "never-released";
  g_assert_cmpint (hz_store_add_egress_log (store, &up, &error), ==, 0);
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID);
  g_clear_error (&error);
  /* ... not even by raw SQL (the schema enforces it) */
  g_assert_false (hz_store_exec (store,
    "INSERT INTO egress_log (time_us, direction, endpoint, bytes, status)"
    " VALUES (1, 'upload', 'x', 1, 'ok')", NULL));
  g_assert_false (hz_store_exec (store,
    "INSERT INTO egress_log (time_us, direction, endpoint, bytes, status, release_id)"
    " VALUES (1, 'upload', 'x', 1, 'ok', 'ghost')", NULL));

  g_autoptr (GPtrArray) log = hz_store_list_egress_log (store, 0, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (log->len, ==, 3);
  const HzEgressLogEntry *e0 = log->pdata[0], *e1 = log->pdata[1], *e2 = log->pdata[2];
  g_assert_cmpint (e0->status, ==, HZ_EGRESS_STATUS_RETRY);
  g_assert_cmpint (e0->http_status, ==, 503);
  g_assert_cmpstr (e0->message, ==, "server busy");
  g_assert_cmpint (e1->status, ==, HZ_EGRESS_STATUS_OK);
  g_assert_cmpint (e1->attempt, ==, 2);
  g_assert_cmpint (e1->bytes, ==, 1234);
  g_assert_cmpfloat (e1->epsilon, ==, 3.25);
  g_assert_cmpstr (e1->release_id, ==, "rel-7");
  g_assert_cmpint (e2->direction, ==, HZ_EGRESS_DOWNLOAD);
  g_assert_null (e2->payload_sha256);
  g_assert_null (e2->release_id);
  g_autoptr (GPtrArray) two = hz_store_list_egress_log (store, 0, 2, &error);
  g_assert_cmpuint (two->len, ==, 2);
  g_assert_cmpint (hz_store_count_unledgered_uploads (store, &error), ==, 0);
  g_assert_no_error (error);
  g_assert_cmpstr (hz_egress_status_to_string (HZ_EGRESS_STATUS_CANCELLED), ==, "cancelled");
  g_assert_null (hz_egress_status_to_string (99));
}

/* A download row written before its request and completed after (egress/hub.c): the
 * update sets the outcome and keeps the rest; unknown rows and bad values are refused. */
static void
test_egress_log_update (void)
{
  g_autofree char *path = tmp_db ();
  g_autoptr (GError) error = NULL;
  g_autoptr (HzStore) store = hz_store_open (path, &error);
  g_assert_no_error (error);
  HzEgressLogEntry begin = {
    .direction = HZ_EGRESS_DOWNLOAD, .endpoint = (char *) "https://huggingface.co/a/b/resolve/main/m.gguf",
    .status = HZ_EGRESS_STATUS_FAILED, .attempt = 2,
    .message = (char *) "the process ended during this request",
  };
  gint64 id = hz_store_add_egress_log (store, &begin, &error);
  g_assert_cmpint (id, >, 0);
  HzEgressLogEntry end = begin;
  end.status = HZ_EGRESS_STATUS_OK;
  end.http_status = 206;
  end.bytes = 711226;
  end.payload_sha256 = (char *) "047bf46455a544931cff6fef14d7910154c56afbc23ab1c5e56a72e69912c04b";
  end.message = NULL;
  end.attempt = 9;   /* not updated */
  g_assert_true (hz_store_update_egress_log (store, id, &end, &error));
  g_assert_no_error (error);
  g_autoptr (GPtrArray) log = hz_store_list_egress_log (store, 0, 0, &error);
  g_assert_cmpuint (log->len, ==, 1);
  const HzEgressLogEntry *e = log->pdata[0];
  g_assert_cmpint (e->status, ==, HZ_EGRESS_STATUS_OK);
  g_assert_cmpint (e->http_status, ==, 206);
  g_assert_cmpint (e->bytes, ==, 711226);
  g_assert_cmpstr (e->payload_sha256, ==, end.payload_sha256);
  g_assert_null (e->message);
  g_assert_cmpint (e->attempt, ==, 2);
  g_assert_cmpstr (e->endpoint, ==, begin.endpoint);
  g_assert_false (hz_store_update_egress_log (store, id + 1, &end, &error));
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);
  end.bytes = -1;
  g_assert_false (hz_store_update_egress_log (store, id, &end, &error));
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID);
}

/* The model channel's rows (egress/hub.h) carry their purpose and subject (schema 8): read
 * back with the row, kept by the update; a model row without subject, an upload with a
 * model purpose and a federation row with a subject are refused; a file at schema 7 with
 * rows migrates, its rows reading as federation rows. */
static void
test_egress_purpose (void)
{
  g_autofree char *path = tmp_db ();
  g_autoptr (GError) error = NULL;
  {
    g_autoptr (HzStore) old = hz_store_open (path, &error);
    g_assert_no_error (error);
    HzEgressLogEntry fed = {
      .direction = HZ_EGRESS_DOWNLOAD, .endpoint = (char *) "https://fed.example.org/v1/rounds/3/aggregate",
      .status = HZ_EGRESS_STATUS_OK, .http_status = 200, .round_id = 3, .attempt = 1,
    };
    g_assert_cmpint (hz_store_add_egress_log (old, &fed, &error), >, 0);
    /* back to schema 7: the table migration 8 adds is gone */
    g_assert_true (hz_store_exec (old, "BEGIN; DROP TABLE egress_purpose;"
                                       " PRAGMA user_version = 7; COMMIT;", &error));
    g_assert_no_error (error);
  }
  g_autoptr (HzStore) store = hz_store_open (path, &error);
  g_assert_no_error (error);
  g_assert_cmpint (hz_store_get_schema_version (store), ==, HZ_STORE_SCHEMA_VERSION);
  g_assert_cmpint (HZ_STORE_SCHEMA_VERSION, >=, 8);

  HzEgressLogEntry search = {
    .direction = HZ_EGRESS_DOWNLOAD,
    .endpoint = (char *) "https://huggingface.co/api/models?search=llama&filter=gguf",
    .status = HZ_EGRESS_STATUS_OK, .http_status = 200, .bytes = 822, .attempt = 1,
    .purpose = HZ_EGRESS_PURPOSE_MODEL_SEARCH, .subject = (char *) "llama",
  };
  g_assert_cmpint (hz_store_add_egress_log (store, &search, &error), >, 0);
  HzEgressLogEntry file = {
    .direction = HZ_EGRESS_DOWNLOAD, .endpoint = (char *) "https://cdn-lfs.hf.co/repos/ab/cd/0123",
    .status = HZ_EGRESS_STATUS_FAILED, .attempt = 1,
    .message = (char *) "the process ended during this request",
    .purpose = HZ_EGRESS_PURPOSE_MODEL_DOWNLOAD, .subject = (char *) "owner/name/m-Q4_K_M.gguf",
  };
  gint64 id = hz_store_add_egress_log (store, &file, &error);
  g_assert_no_error (error);
  HzEgressLogEntry done = file;
  done.status = HZ_EGRESS_STATUS_OK;
  done.message = NULL;
  done.bytes = 4096;
  done.purpose = HZ_EGRESS_PURPOSE_FEDERATION;   /* not updated */
  done.subject = NULL;
  g_assert_true (hz_store_update_egress_log (store, id, &done, &error));
  g_assert_no_error (error);

  /* refused: a model row without subject, an upload or a federation row with one */
  HzEgressLogEntry bad = search;
  bad.subject = NULL;
  g_assert_cmpint (hz_store_add_egress_log (store, &bad, &error), ==, 0);
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID);
  g_clear_error (&error);
  bad.subject = (char *) "";
  g_assert_cmpint (hz_store_add_egress_log (store, &bad, &error), ==, 0);
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID);
  g_clear_error (&error);
  bad = search;
  bad.purpose = HZ_EGRESS_PURPOSE_FEDERATION;
  g_assert_cmpint (hz_store_add_egress_log (store, &bad, &error), ==, 0);
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID);
  g_clear_error (&error);
  bad = search;
  bad.purpose = 42;
  g_assert_cmpint (hz_store_add_egress_log (store, &bad, &error), ==, 0);
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID);
  g_clear_error (&error);

  g_autoptr (GPtrArray) log = hz_store_list_egress_log (store, 0, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (log->len, ==, 3);
  const HzEgressLogEntry *e0 = log->pdata[0], *e1 = log->pdata[1], *e2 = log->pdata[2];
  g_assert_cmpint (e0->purpose, ==, HZ_EGRESS_PURPOSE_FEDERATION);   /* from schema 7 */
  g_assert_null (e0->subject);
  g_assert_cmpint (e0->round_id, ==, 3);
  g_assert_cmpint (e1->purpose, ==, HZ_EGRESS_PURPOSE_MODEL_SEARCH);
  g_assert_cmpstr (e1->subject, ==, "llama");
  g_assert_cmpint (e2->purpose, ==, HZ_EGRESS_PURPOSE_MODEL_DOWNLOAD);
  g_assert_cmpstr (e2->subject, ==, "owner/name/m-Q4_K_M.gguf");
  g_assert_cmpint (e2->status, ==, HZ_EGRESS_STATUS_OK);
  g_assert_cmpint (e2->bytes, ==, 4096);
  g_assert_cmpstr (hz_egress_purpose_to_string (HZ_EGRESS_PURPOSE_MODEL_FILES), ==, "model-files");
  g_assert_null (hz_egress_purpose_to_string (7));
}

/* Inside hz_store_begin(), a failed ledger insert rolls back with the transaction. */
static void
test_transaction (void)
{
  g_autofree char *path = tmp_db ();
  g_autoptr (GError) error = NULL;
  g_autoptr (HzStore) store = hz_store_open (path, &error);
  double orders[1] = { 2 }, rdp[1] = { 0.5 };
  HzPrivacyLedgerEntry r = release_entry ("rel-t", orders, rdp);
  r.n_orders = 1;
  g_assert_true (hz_store_begin (store, &error));
  g_assert_cmpint (hz_store_add_privacy_ledger_entry (store, &r, &error), >, 0);
  hz_store_rollback (store);
  g_autoptr (GPtrArray) none = hz_store_list_privacy_ledger (store, 0, &error);
  g_assert_cmpuint (none->len, ==, 0);
  g_assert_true (hz_store_begin (store, &error));
  g_assert_cmpint (hz_store_add_privacy_ledger_entry (store, &r, &error), >, 0);
  g_assert_true (hz_store_commit (store, &error));
  g_autoptr (GPtrArray) one = hz_store_list_privacy_ledger (store, 0, &error);
  g_assert_cmpuint (one->len, ==, 1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/store/privacy/ledger", test_ledger);
  g_test_add_func ("/store/privacy/egress-log", test_egress_log);
  g_test_add_func ("/store/privacy/egress-log-update", test_egress_log_update);
  g_test_add_func ("/store/privacy/egress-purpose", test_egress_purpose);
  g_test_add_func ("/store/privacy/transaction", test_transaction);
  return g_test_run ();
}
