/* hanzo-store-privacy.h — the privacy ledger and the egress log (issue 8), part of
 * libhzstore (store/privacy.c, schema migration 3).
 *
 * privacy_ledger: one row per differentially private computation over the user's data —
 *   a release of an adapter delta (mechanism "gaussian-release": whole delta clipped to L2
 *   norm C and N(0, (zC)^2) noise added, q = 1, steps = 1) or one night of DP-SGD training
 *   (mechanism "dp-sgd": Poisson rate q, noise multiplier z, `steps` steps). Each row keeps
 *   its own Rényi-DP curve (orders, rdp) so later accounting can compose rows by summing
 *   curves (egress/dp.c), and its stand-alone epsilon at its delta.
 * egress_log: one row per network attempt of egress/ (upload or download): time, endpoint,
 *   bytes, sha256 of the payload, the epsilon of the release carried, status. An upload row
 *   must name a release present in privacy_ledger (foreign key + CHECK), so the log can
 *   never show an upload without its ledger row.
 *
 * Same conventions as hanzo-store.h: times in Unix microseconds (*_us), ids > 0, errors in
 * HZ_STORE_ERROR, one HzStore per thread. All accessors run in their own write
 * transaction, or inside hz_store_begin()/hz_store_commit() (egress/dp.c writes the ledger
 * row of a release in the transaction that checks the budget).
 */
#pragma once

#include "hanzo-store.h"

G_BEGIN_DECLS

/* ----------------------------------------------------------------- privacy ledger */

typedef enum {
  HZ_PRIVACY_MECH_GAUSSIAN_RELEASE,   /* "gaussian-release" */
  HZ_PRIVACY_MECH_DP_SGD,             /* "dp-sgd" */
} HzPrivacyMechanism;

/** The string stored for a mechanism; NULL when out of range. Thread-safe. */
const char *hz_privacy_mechanism_to_string (HzPrivacyMechanism mech);
/** Parse a mechanism string; FALSE (out untouched) for anything else. Thread-safe. */
gboolean    hz_privacy_mechanism_from_string (const char *str, HzPrivacyMechanism *out);

/** One ledger row. Free with hz_privacy_ledger_entry_free() (frees the strings and
 *  arrays). */
typedef struct {
  gint64              id;
  gint64              time_us;           /* Unix microseconds */
  HzPrivacyMechanism  mechanism;
  double              q;                 /* sampling rate in (0, 1]; 1 for a release */
  double              noise_multiplier;  /* z = sigma / sensitivity, > 0 */
  double              clip_norm;         /* sensitivity C (L2), > 0 */
  gint64              steps;             /* compositions, >= 1 */
  gsize               n_orders;          /* >= 1 */
  double             *orders;            /* RDP orders alpha > 1 */
  double             *rdp;               /* RDP in nats of the whole row at each order, >= 0 */
  double              epsilon;           /* this row alone, at `delta` */
  double              delta;             /* in (0, 1) */
  char               *release_id;        /* NULL for training; unique id of a release */
  gint64              round_id;          /* federation round, 0 = none */
  char               *payload_sha256;    /* lowercase hex of the released bytes; NULL for training */
} HzPrivacyLedgerEntry;

void hz_privacy_ledger_entry_free (HzPrivacyLedgerEntry *e);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzPrivacyLedgerEntry, hz_privacy_ledger_entry_free)

/** Append a ledger row (e->id is ignored; e->time_us <= 0 means now). Checks: the fields'
 *  ranges above, release_id/payload_sha256 set exactly for a release, a new release_id.
 *  Returns the new id (> 0) or 0: HZ_STORE_ERROR_INVALID (bad field or duplicate release),
 *  _FULL, _BUSY, _FAILED. */
gint64 hz_store_add_privacy_ledger_entry (HzStore *store, const HzPrivacyLedgerEntry *e,
                                          GError **error);

/** Ledger rows with time_us >= since_us, oldest first (ties by id). Element type
 *  HzPrivacyLedgerEntry*; the array frees its elements. NULL on error. */
GPtrArray *hz_store_list_privacy_ledger (HzStore *store, gint64 since_us, GError **error);

/** The ledger row of a release. NULL with HZ_STORE_ERROR_NOT_FOUND if there is none. */
HzPrivacyLedgerEntry *hz_store_get_privacy_release (HzStore *store, const char *release_id,
                                                    GError **error);

/* ----------------------------------------------------------------- egress log */

typedef enum {
  HZ_EGRESS_UPLOAD,     /* "upload" */
  HZ_EGRESS_DOWNLOAD,   /* "download" */
} HzEgressDirection;

typedef enum {
  HZ_EGRESS_STATUS_OK,         /* "ok": the server accepted / returned the payload */
  HZ_EGRESS_STATUS_RETRY,      /* "retry": transient failure, the client tries again */
  HZ_EGRESS_STATUS_REJECTED,   /* "rejected": the server or the validator refused it */
  HZ_EGRESS_STATUS_FAILED,     /* "failed": gave up after the retry bound */
  HZ_EGRESS_STATUS_CANCELLED,  /* "cancelled": stopped by the caller */
} HzEgressStatus;

/** What a request was for. Federation rows (uploads of releases, fetches of aggregates)
 *  carry a round_id; the model channel's rows (egress/hub.h) carry a subject instead. */
typedef enum {
  HZ_EGRESS_PURPOSE_FEDERATION,      /* "federation": no subject */
  HZ_EGRESS_PURPOSE_MODEL_SEARCH,    /* "model-search": subject = the search text */
  HZ_EGRESS_PURPOSE_MODEL_FILES,     /* "model-files": subject = the repository "owner/name" */
  HZ_EGRESS_PURPOSE_MODEL_DOWNLOAD,  /* "model-download": subject = "owner/name/path" of the
                                        file (also on the rows of its redirects) */
} HzEgressPurpose;

const char *hz_egress_direction_to_string (HzEgressDirection dir);
const char *hz_egress_status_to_string (HzEgressStatus status);
const char *hz_egress_purpose_to_string (HzEgressPurpose purpose);

/** One egress log row. Free with hz_egress_log_entry_free(). */
typedef struct {
  gint64             id;
  gint64             time_us;        /* Unix microseconds */
  HzEgressDirection  direction;
  char              *endpoint;       /* full URL of the request, never NULL */
  gint64             bytes;          /* payload bytes sent (upload) or received (download) */
  char              *payload_sha256; /* lowercase hex; NULL when nothing was received */
  double             epsilon;        /* epsilon of the release carried; 0 for downloads */
  HzEgressStatus     status;
  int                http_status;    /* 0 = no HTTP response (network error, timeout) */
  char              *release_id;     /* uploads: the ledger's release id; NULL for downloads */
  gint64             round_id;
  int                attempt;        /* 1-based attempt number of this call */
  char              *message;        /* error text, NULL when ok */
  HzEgressPurpose    purpose;        /* schema 8; rows written before it read as federation */
  char              *subject;        /* what a model-channel request was about (see
                                        HzEgressPurpose), NULL for federation rows */
} HzEgressLogEntry;

void hz_egress_log_entry_free (HzEgressLogEntry *e);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzEgressLogEntry, hz_egress_log_entry_free)

/** Append a log row (e->id ignored; time_us <= 0 means now). An upload must carry the
 *  release_id of an existing ledger row; a model-channel row (purpose other than
 *  federation) is a download with a non-empty subject, a federation row has none.
 *  Returns the new id or 0: HZ_STORE_ERROR_INVALID
 *  (bad UTF-8, no such release, upload without release), _FULL, _BUSY, _FAILED. */
gint64 hz_store_add_egress_log (HzStore *store, const HzEgressLogEntry *e, GError **error);

/** Completes row `id` (written before its request went out, so that a process killed
 *  during the request still leaves it): sets its bytes, payload_sha256, status,
 *  http_status and message from `e` (other fields, purpose and subject included, are
 *  kept; `e` is checked as by
 *  hz_store_add_egress_log). Errors: HZ_STORE_ERROR_NOT_FOUND (no such row), _INVALID,
 *  _FULL, _BUSY, _FAILED. */
gboolean hz_store_update_egress_log (HzStore *store, gint64 id, const HzEgressLogEntry *e,
                                     GError **error);

/** Log rows with time_us >= since_us, oldest first; at most `limit` (<= 0: all). Element
 *  type HzEgressLogEntry*. NULL on error. */
GPtrArray *hz_store_list_egress_log (HzStore *store, gint64 since_us, int limit,
                                     GError **error);

/** Number of upload rows in the log whose release has no ledger row (the privacy
 *  invariant says 0; the schema enforces it, this lets a test and the privacy page check
 *  it). -1 on error. */
gint64 hz_store_count_unledgered_uploads (HzStore *store, GError **error);

G_END_DECLS
