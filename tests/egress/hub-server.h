/* tests/egress/hub-server.h — a loopback stand-in for the Hugging Face Hub and its CDN
 * (libsoup SoupServer on 127.0.0.1, its own thread), replaying the reply shapes of
 * tests/egress/hub-fixtures/ (see its README) for the files a test gives it, with the
 * failures a download must survive: cut connections, a stalled or slow server, ignored
 * ranges, 5xx, wrong bytes, gated and unknown repositories.
 *
 * Two ports, so that the CDN is another origin as on the real Hub (where it is another
 * host): the Hub's (search, tree, resolve) and the CDN's (the LFS bytes, reached only
 * through the resolve redirect). Every request on either port is recorded (HztRequest) so
 * that a test can compare them with the client's egress log and check what was sent where.
 *
 * Use: hzt_hub_new(), hzt_hub_add_file()... (configuration before hzt_hub_start(), from the
 * test's thread), hzt_hub_start(), then run the client, then hzt_hub_requests(),
 * hzt_hub_free(). Only for tests (asserts on misuse).
 */
#pragma once

#include <gio/gio.h>
#include "hanzo-store-privacy.h"

/** The access token a gated repository accepts ("Authorization: Bearer " HZT_TOKEN). */
#define HZT_TOKEN "hf_testtoken0123456789"
/** The commit every reply names in X-Repo-Commit. */
#define HZT_COMMIT "067b946cf014b7c697f3654f621d577a3e3afd1c"

typedef enum {
  HZT_LFS        = 1 << 0,  /* in LFS: resolve redirects to the CDN port (else served inline) */
  HZT_CUT_ONCE   = 1 << 1,  /* the first body reply is cut (socket shut down) at cut_at */
  HZT_STALL_ONCE = 1 << 2,  /* the first body reply stops sending at cut_at and hangs */
  HZT_NO_RANGES  = 1 << 3,  /* Range is ignored: always 200 with the whole file */
  HZT_CORRUPT    = 1 << 4,  /* the served bytes have one byte flipped (digests are of the true file) */
  HZT_503_ONCE   = 1 << 5,  /* the first resolve request is answered 503 */
  HZT_503_ALWAYS = 1 << 6,  /* every resolve request is answered 503 */
} HztFlags;

/** How hzt_hub_fail_first() fails a request. */
typedef enum {
  HZT_FAIL_NONE,
  HZT_FAIL_503,     /* answered 503 Service Unavailable */
  HZT_FAIL_CUT,     /* the connection is shut down before any reply */
  HZT_FAIL_STALL,   /* no reply is ever sent: the client's read times out */
} HztFail;

/** One request the server saw. */
typedef struct {
  gboolean  cdn;      /* on the CDN port (else the Hub's) */
  char     *path;     /* as libsoup gives it: percent-decoded */
  char     *query;    /* or NULL */
  char     *range;    /* the Range header or NULL */
  gboolean  auth;     /* an Authorization header was sent */
  guint     status;   /* what the server answered */
} HztRequest;

typedef struct _HztHub HztHub;

HztHub *hzt_hub_new (void);
/** Serves `data` as `path` of `repo` (created on first use). `cut_at`: byte offset for
 *  HZT_CUT_ONCE / HZT_STALL_ONCE. */
void    hzt_hub_add_file (HztHub *hub, const char *repo, const char *path, GBytes *data,
                          guint flags, gsize cut_at);
/** The repository answers resolve requests without HZT_TOKEN with the gated 401. */
void    hzt_hub_set_gated (HztHub *hub, const char *repo);
/** Tree replies carry at most `n` entries a page, with a rel="next" Link (0: all). */
void    hzt_hub_set_tree_page (HztHub *hub, guint n);
/** Bodies are sent `chunk` bytes every `interval_ms` ms (default: 256 KiB every 1 ms). */
void    hzt_hub_set_throttle (HztHub *hub, gsize chunk, guint interval_ms);
/** The first request on the Hub's port (a search, a tree page or a resolve, whichever comes
 *  first) fails as `how`; the ones after it are served as usual. */
void    hzt_hub_fail_first (HztHub *hub, HztFail how);
void    hzt_hub_start (HztHub *hub);
/** The Hub's base URL "http://127.0.0.1:PORT" (g_free). */
char   *hzt_hub_url (HztHub *hub);
/** The requests seen so far, in order (a copy; the array frees its HztRequest*). */
GPtrArray *hzt_hub_requests (HztHub *hub);
/** Stops the server (disconnecting hanging clients) and frees everything. */
void    hzt_hub_free (HztHub *hub);

/** Asserts that every request the server saw is one row of `store`'s egress log, in order,
 *  with its path and query (the CDN's URL logged without query) and HTTP status, all rows
 *  downloads without release or epsilon, with their purpose and subject (the file
 *  "owner/name/path" of a resolve request and of the CDN hop after it, the repository of a
 *  tree page), and nothing else in the log. */
void    hzt_hub_assert_log (HztHub *hub, HzStore *store);

/** The SHA-256 (lowercase hex) of `data` (g_free). */
char   *hzt_sha256 (GBytes *data);
