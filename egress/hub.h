/* egress/hub.h — the model download channel: the Hugging Face Hub HTTP API (issue 27).
 *
 * The second typed channel of privacy invariant 1 (egress/ is the only code that connects
 * out). What it sends is built only from:
 *   - an HzHubFileRef: a public repository id, a revision and a file path, each checked
 *     by hz_hub_file_ref_new() against the Hub's rules (below) and percent-encoded;
 *   - a search text checked by hz_hub_search() (ASCII letters, digits, space and ._-+/ only,
 *     at most HZ_HUB_MAX_QUERY bytes);
 *   - the endpoint (https://, or http:// to loopback) and an optional access token, sent
 *     only to the endpoint's own origin, never to the host a download redirects to.
 * Nothing else (no text of the user's conversations, no file of theirs) can reach a URL or
 * a header. Requests:
 *   GET {endpoint}/api/models?search=Q&filter=gguf&sort=downloads&direction=-1&limit=N
 *       &expand=downloads&expand=likes&expand=lastModified&expand=gated
 *   GET {endpoint}/api/models/{repo}/tree/{revision}?recursive=true   (follows rel="next"
 *       Link headers of the same origin, at most HZ_HUB_MAX_TREE_PAGES pages)
 *   GET {endpoint}/{repo}/resolve/{revision}/{path}   with "Range: bytes=N-" to resume;
 *       redirects (302 to the CDN, 307 for renamed repositories) are followed by hand, at
 *       most 5, keeping the X-Linked-Etag (the LFS sha256), X-Linked-Size and
 *       X-Repo-Commit headers of the Hub's reply.
 * Every HTTP exchange (each redirect hop, each attempt) is one row of the store's egress
 * log (hanzo-store-privacy.h; direction "download"): the URL (query strings of other
 * origins, e.g. CDN signatures, left out), bytes received, the file's sha256 when
 * verified, status, HTTP status, attempt, message, and what it was for (HzEgressPurpose:
 * model-search with the search text, model-files with the repository, model-download
 * with "repo/path", on the resolve request and on each of its redirect hops). The row is written before the request
 * goes out (status "failed", "the process ended during this request") and completed when
 * the exchange ends, so a process killed mid-request still leaves its row. A row that
 * cannot be written stops the call (before the request) with HZ_HUB_ERROR_STORE.
 *
 * Downloads (hz_hub_download): each file goes to DIR/BASENAME.part, appended as it
 * arrives; a .part left by an earlier run (killed, cancelled, cut off) is resumed with
 * "Range: bytes=SIZE-" after hashing what it holds (a server that answers 200 instead of
 * 206 is read from the start). The SHA-256 (GChecksum, incremental) must equal the tree's
 * LFS oid or the X-Linked-Etag (for a file outside LFS: the git blob oid, the SHA-1 of
 * "blob SIZE\0" + bytes), and the size the tree's or X-Linked-Size; a file that fails is
 * deleted and never renamed into place (HZ_HUB_ERROR_CHECKSUM; if it was a resumed .part it
 * is first downloaded once more from the start, since the upstream file may have changed).
 * The files of a set (a split GGUF, -00001-of-0000N.gguf) are renamed into place together
 * only once every one is verified. Before anything is written the free space of DIR must
 * hold what is still missing (HZ_HUB_ERROR_NO_SPACE); a disk that fills anyway (ENOSPC,
 * EDQUOT, EFBIG from a size limit) removes the set's .part files: no partial model is
 * left. An existing DIR/BASENAME is never replaced: identical (size and sha256) it counts
 * as done without a request, different it is an error.
 *
 * Retries: at most retry.max_attempts attempts per file (HZ_EGRESS_RETRY_DEFAULT: 5), with
 * exponential backoff; retried are network errors, cut connections, a server silent for
 * retry.timeout_s (per read), HTTP 408/429/5xx. Final: 401/403 (HZ_HUB_ERROR_AUTH: gated
 * or private, X-Error-Code GatedRepo), 404 and the Hub's RepoNotFound / EntryNotFound /
 * RevisionNotFound codes (HZ_HUB_ERROR_NOT_FOUND), other 4xx (HZ_HUB_ERROR_REJECTED).
 *
 * Thread safety: an HzHub (and its HzStore) is used by one thread at a time; calls block
 * (run them in a worker thread); the progress callback runs on the calling thread. The
 * GCancellable may be cancelled from any thread: a download then stops within one read,
 * keeps its .part for a later resume and returns HZ_HUB_ERROR_CANCELLED.
 */
#pragma once

#include <gio/gio.h>
#include "egress-retry.h"
#include "hanzo-store-privacy.h"

G_BEGIN_DECLS

/** The Hub used when neither the caller nor $HF_ENDPOINT names one. */
#define HZ_HUB_DEFAULT_ENDPOINT "https://huggingface.co"
/** Longest search text (bytes). */
#define HZ_HUB_MAX_QUERY 96
/** Most tree pages followed for one repository (the Hub pages by 1000 entries). */
#define HZ_HUB_MAX_TREE_PAGES 50

#define HZ_HUB_ERROR (hz_hub_error_quark ())
/** Error domain of this header. */
GQuark hz_hub_error_quark (void);
typedef enum {
  HZ_HUB_ERROR_INVALID,    /* bad repo id, revision, path, query, endpoint or token */
  HZ_HUB_ERROR_NOT_FOUND,  /* no such repository, revision or file */
  HZ_HUB_ERROR_AUTH,       /* 401/403: a gated or private repository (token missing/refused) */
  HZ_HUB_ERROR_REJECTED,   /* any other final 4xx */
  HZ_HUB_ERROR_NETWORK,    /* gave up after max_attempts (message has the last error) */
  HZ_HUB_ERROR_BAD_REPLY,  /* a reply that is not what the API promises (JSON, sizes, no checksum) */
  HZ_HUB_ERROR_CHECKSUM,   /* the bytes do not match the sha256/size; the file was deleted */
  HZ_HUB_ERROR_NO_SPACE,   /* not enough free space, or the disk filled; .part files removed */
  HZ_HUB_ERROR_IO,         /* a local file could not be read or written; or the target exists */
  HZ_HUB_ERROR_CANCELLED,  /* the GCancellable fired; the .part stays for a resume */
  HZ_HUB_ERROR_STORE,      /* the egress log could not be written */
} HzHubError;

/* ----------------------------------------------------------------- validated requests */

/** Whether `repo` is a model repository id as the Hub allows: "owner/name", each part 1..96
 *  characters of [A-Za-z0-9._-], beginning and ending with a letter, digit or '_', no
 *  "--" or "..", the name not ending in ".git" (huggingface_hub's validate_repo_id). */
gboolean hz_hub_repo_id_is_valid (const char *repo);
/** Whether `revision` is a branch, tag or commit: 1..255 characters of [A-Za-z0-9._/-],
 *  not beginning with '-', '.' or '/', no "..", "//" or trailing '/'. */
gboolean hz_hub_revision_is_valid (const char *revision);
/** Whether `path` is a relative file path in a repository: 1..1024 bytes of letters,
 *  digits and " ._-+=,@()[]~", components separated by single '/', none "." or "..". */
gboolean hz_hub_path_is_valid (const char *path);

/** A file of a repository at a revision: the only thing a download request carries. */
typedef struct _HzHubFileRef HzHubFileRef;

/** A reference to `path` in `repo` at `revision` (NULL: "main"), each checked as above.
 *  Errors: HZ_HUB_ERROR_INVALID naming the part at fault. */
HzHubFileRef *hz_hub_file_ref_new (const char *repo, const char *revision, const char *path,
                                   GError **error);
/** Frees `ref` (NULL is ignored). */
void          hz_hub_file_ref_free (HzHubFileRef *ref);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzHubFileRef, hz_hub_file_ref_free)
/** The validated parts (owned by `ref`). */
const char   *hz_hub_file_ref_get_repo (const HzHubFileRef *ref);
const char   *hz_hub_file_ref_get_revision (const HzHubFileRef *ref);
const char   *hz_hub_file_ref_get_path (const HzHubFileRef *ref);
/** What the file must be (from hz_hub_list_files()): `size` in bytes (0 = unknown, taken
 *  from the download's X-Linked-Size/Content-Length), `sha256` (64 hex digits; NULL = take
 *  the X-Linked-Etag), `git_oid` (40 hex digits, files outside LFS; may be NULL). Only
 *  checked locally, never sent. Errors: HZ_HUB_ERROR_INVALID for malformed digests. */
gboolean      hz_hub_file_ref_set_expected (HzHubFileRef *ref, guint64 size, const char *sha256,
                                            const char *git_oid, GError **error);

/* ----------------------------------------------------------------- replies */

/** One search result (GET /api/models). */
typedef struct {
  char   *id;             /* "owner/name" */
  gint64  downloads;      /* last 30 days, as the Hub counts them; -1 = not given */
  gint64  likes;          /* -1 = not given */
  char   *last_modified;  /* ISO 8601 ("2024-09-25T14:43:20.000Z") or NULL */
  char   *gated;          /* NULL = open; "auto" or "manual" = the Hub asks for a login/consent */
} HzHubModel;
/** Frees a search result and its strings (NULL is ignored). */
void hz_hub_model_free (HzHubModel *m);

/** One file of a repository tree (GET /api/models/{repo}/tree/{revision}). */
typedef struct {
  char    *path;     /* relative path in the repository */
  guint64  size;     /* bytes of the file (for LFS files: of the LFS object) */
  char    *sha256;   /* LFS oid (64 lowercase hex digits), NULL for files outside LFS */
  char    *git_oid;  /* git blob oid (40 hex digits) or NULL */
} HzHubFile;
/** Frees a tree entry and its strings (NULL is ignored). */
void hz_hub_file_free (HzHubFile *f);

/** Parses a search reply (a JSON array of model objects; entries without a valid "id" are
 *  skipped). Any bytes are accepted: FALSE with HZ_HUB_ERROR_BAD_REPLY for what is not a
 *  JSON array. On success *models holds HzHubModel* (freed by the array). Reentrant. */
gboolean hz_hub_parse_search_reply (const char *data, gsize len, GPtrArray **models,
                                    GError **error);

/** Parses one tree page (a JSON array of {"type": "file"|"directory", "path", "size",
 *  "oid", "lfs": {"oid", "size", "pointerSize"}}), appending HzHubFile* for the files to
 *  `files`. Directories, and files whose path this client could not request
 *  (hz_hub_path_is_valid), are skipped; a file without a size >= 0, or with an "lfs"
 *  member lacking a size or a 64-hex-digit oid, is an error (HZ_HUB_ERROR_BAD_REPLY), as is
 *  anything that is not a JSON array. Reentrant. */
gboolean hz_hub_parse_tree_reply (const char *data, gsize len, GPtrArray *files,
                                  GError **error);

/* ----------------------------------------------------------------- the client */

typedef struct _HzHub HzHub;

/** The endpoint to use: $HF_ENDPOINT when set and not empty, else HZ_HUB_DEFAULT_ENDPOINT
 *  (g_free). Not checked here (hz_hub_new does). */
char  *hz_hub_default_endpoint (void);

/** `endpoint` (NULL: hz_hub_default_endpoint()) as a client uses it, and as its token is
 *  kept in the keyring (credentials.h): checked (https://, or http:// to loopback), without
 *  trailing '/' (g_free). Errors: HZ_HUB_ERROR_INVALID. */
char  *hz_hub_endpoint_normalize (const char *endpoint, GError **error);

/** A client for `endpoint` (NULL: hz_hub_default_endpoint()) with an optional access token
 *  (NULL or "": anonymous), logging into `store` (borrowed, must outlive the client).
 *  Errors: HZ_HUB_ERROR_INVALID (endpoint not https:// nor loopback http://; a token with
 *  spaces or control characters). */
HzHub *hz_hub_new (const char *endpoint, const char *token, HzStore *store, GError **error);
/** Frees the client, wiping its token (NULL is ignored). */
void   hz_hub_free (HzHub *hub);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzHub, hz_hub_free)
/** The endpoint in use, without trailing '/'. */
const char *hz_hub_get_endpoint (HzHub *hub);
/** Whether the client sends a token. */
gboolean    hz_hub_has_token (HzHub *hub);
/** Replace (or with NULL/"" remove) the token. Errors: HZ_HUB_ERROR_INVALID. */
gboolean    hz_hub_set_token (HzHub *hub, const char *token, GError **error);
/** Replace the retry policy (clamped: max_attempts >= 1, timeout_s >= 1). */
void        hz_hub_set_retry (HzHub *hub, const HzEgressRetry *retry);

/** The check hz_hub_search() makes, for callers that want it before anything else: `query`
 *  is 1 to HZ_HUB_MAX_QUERY ASCII letters, digits, spaces and ._-+/, and `limit` 1..100.
 *  Errors: HZ_HUB_ERROR_INVALID (its message names the rule). */
gboolean   hz_hub_check_query (const char *query, guint limit, GError **error);

/** Search GGUF models whose name contains `query` (checked: HZ_HUB_MAX_QUERY bytes of
 *  ASCII letters, digits, space and ._-+/), sorted by downloads, at most `limit` (1..100).
 *  Returns HzHubModel* (the array frees them). Errors: as above, HZ_HUB_ERROR_INVALID. */
GPtrArray *hz_hub_search (HzHub *hub, const char *query, guint limit,
                          GCancellable *cancellable, GError **error);

/** All files of `repo` at `revision` (NULL: "main"), recursively, in the Hub's order.
 *  Returns HzHubFile* (the array frees them). Errors: as above. */
GPtrArray *hz_hub_list_files (HzHub *hub, const char *repo, const char *revision,
                              GCancellable *cancellable, GError **error);

/** Progress of hz_hub_download(): `done` bytes of the set on disk (resumed .part files
 *  included) of `total` (0 while a size is still unknown), `file` the path being fetched. */
typedef void (*HzHubProgressFunc) (guint64 done, guint64 total, const char *file,
                                   gpointer user_data);

/** Downloads the files `refs` (HzHubFileRef*, one set: all or none placed) into `dest_dir`
 *  (must exist) as DIR/BASENAME, as described at the top. `progress` (may be NULL) is
 *  called on this thread at most every 100 ms and once at the end. `commit` (may be NULL)
 *  receives the X-Repo-Commit of the first reply that had one (g_free).
 *  Errors: HZ_HUB_ERROR_*; on every error the target names are untouched. */
gboolean hz_hub_download (HzHub *hub, GPtrArray *refs, const char *dest_dir,
                          HzHubProgressFunc progress, gpointer user_data, char **commit,
                          GCancellable *cancellable, GError **error);

/** The name of the .part file for `path` in `dest_dir` (BASENAME.part; g_free). */
char *hz_hub_part_path (const char *dest_dir, const char *path);

G_END_DECLS
