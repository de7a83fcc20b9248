/* egress/hub.c — the Hugging Face Hub download channel (hub.h): validated requests,
 * search and tree replies, resumable verified downloads, the egress log. */
#include "hub.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "hanzo/atomic-file.h"
#include "egress-private.h"

G_DEFINE_QUARK (hz-hub-error-quark, hz_hub_error)

#define MAX_TREE_REPLY (32 * 1024 * 1024)   /* one tree page (1000 entries) is ~300 KB */
#define MAX_ERROR_REPLY (64 * 1024)
#define MAX_REDIRECTS 5
#define CHUNK (256 * 1024)
#define PROGRESS_INTERVAL_US (100 * 1000)

/* ================================================================= validation */

static gboolean
repo_part_ok (const char *s, gsize n)
{
  if (n < 1 || n > 96)
    return FALSE;
  for (gsize i = 0; i < n; i++)
    if (!g_ascii_isalnum (s[i]) && s[i] != '.' && s[i] != '_' && s[i] != '-')
      return FALSE;
  /* huggingface_hub's \b...\b: the first and last characters are word characters */
  gboolean first = g_ascii_isalnum (s[0]) || s[0] == '_';
  gboolean last = g_ascii_isalnum (s[n - 1]) || s[n - 1] == '_';
  return first && last;
}

gboolean
hz_hub_repo_id_is_valid (const char *repo)
{
  const char *slash = repo ? strchr (repo, '/') : NULL;
  if (!slash || strchr (slash + 1, '/') || strstr (repo, "--") || strstr (repo, ".."))
    return FALSE;
  gsize len = strlen (repo);
  return repo_part_ok (repo, (gsize) (slash - repo)) &&
         repo_part_ok (slash + 1, len - (gsize) (slash - repo) - 1) &&
         !g_str_has_suffix (repo, ".git");
}

gboolean
hz_hub_revision_is_valid (const char *rev)
{
  gsize n = rev ? strlen (rev) : 0;
  if (n < 1 || n > 255 || rev[0] == '-' || rev[0] == '.' || rev[0] == '/' || rev[n - 1] == '/' ||
      strstr (rev, "..") || strstr (rev, "//"))
    return FALSE;
  for (gsize i = 0; i < n; i++)
    if (!g_ascii_isalnum (rev[i]) && !strchr ("._/-", rev[i]))
      return FALSE;
  return TRUE;
}

gboolean
hz_hub_path_is_valid (const char *path)
{
  gsize n = path ? strlen (path) : 0;
  if (n < 1 || n > 1024 || path[0] == '/' || path[n - 1] == '/' || strstr (path, "//"))
    return FALSE;
  for (gsize i = 0; i < n; i++)
    if (!g_ascii_isalnum (path[i]) && !strchr (" ._-+=,@()[]~/", path[i]))
      return FALSE;
  g_auto (GStrv) parts = g_strsplit (path, "/", -1);
  for (char **p = parts; *p; p++)
    if (strcmp (*p, ".") == 0 || strcmp (*p, "..") == 0)
      return FALSE;
  return TRUE;
}

static gboolean
query_chars_ok (const char *q)
{
  gsize n = q ? strlen (q) : 0;
  if (n < 1 || n > HZ_HUB_MAX_QUERY)
    return FALSE;
  for (gsize i = 0; i < n; i++)
    if (!g_ascii_isalnum (q[i]) && !strchr (" ._-+/", q[i]))
      return FALSE;
  return TRUE;
}

static gboolean
hex_digest_ok (const char *s, gsize len)
{
  if (!s || strlen (s) != len)
    return FALSE;
  for (gsize i = 0; i < len; i++)
    if (!g_ascii_isxdigit (s[i]))
      return FALSE;
  return TRUE;
}

/* ================================================================= file refs */

struct _HzHubFileRef {
  char    *repo, *revision, *path;
  guint64  size;
  char    *sha256, *git_oid;   /* lowercase hex or NULL */
};

HzHubFileRef *
hz_hub_file_ref_new (const char *repo, const char *revision, const char *path, GError **error)
{
  if (!revision)
    revision = "main";
  const char *bad = !hz_hub_repo_id_is_valid (repo) ? "repository id"
                    : !hz_hub_revision_is_valid (revision) ? "revision"
                    : !hz_hub_path_is_valid (path) ? "file path" : NULL;
  if (bad)
    {
      g_autofree char *shown = g_strescape (strcmp (bad, "repository id") == 0 ? (repo ? repo : "")
                                            : strcmp (bad, "revision") == 0 ? revision
                                            : (path ? path : ""), NULL);
      g_set_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_INVALID,
                   "invalid %s '%s' (a repository is \"owner/name\" of letters, digits and "
                   "._-; a path is relative, without \"..\", of letters, digits and "
                   "._-+=,@()[]~ and spaces)", bad, shown);
      return NULL;
    }
  HzHubFileRef *ref = g_new0 (HzHubFileRef, 1);
  ref->repo = g_strdup (repo);
  ref->revision = g_strdup (revision);
  ref->path = g_strdup (path);
  return ref;
}

void
hz_hub_file_ref_free (HzHubFileRef *ref)
{
  if (!ref)
    return;
  g_free (ref->repo);
  g_free (ref->revision);
  g_free (ref->path);
  g_free (ref->sha256);
  g_free (ref->git_oid);
  g_free (ref);
}

const char *hz_hub_file_ref_get_repo (const HzHubFileRef *ref) { return ref->repo; }
const char *hz_hub_file_ref_get_revision (const HzHubFileRef *ref) { return ref->revision; }
const char *hz_hub_file_ref_get_path (const HzHubFileRef *ref) { return ref->path; }

gboolean
hz_hub_file_ref_set_expected (HzHubFileRef *ref, guint64 size, const char *sha256,
                              const char *git_oid, GError **error)
{
  if ((sha256 && !hex_digest_ok (sha256, 64)) || (git_oid && !hex_digest_ok (git_oid, 40)))
    {
      g_set_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_INVALID,
                   "a sha256 is 64 hex digits and a git oid 40 (%s)", ref->path);
      return FALSE;
    }
  ref->size = size;
  g_free (ref->sha256);
  g_free (ref->git_oid);
  ref->sha256 = sha256 ? g_ascii_strdown (sha256, -1) : NULL;
  ref->git_oid = git_oid ? g_ascii_strdown (git_oid, -1) : NULL;
  return TRUE;
}

/* ================================================================= replies */

void
hz_hub_model_free (HzHubModel *m)
{
  if (!m)
    return;
  g_free (m->id);
  g_free (m->last_modified);
  g_free (m->gated);
  g_free (m);
}

void
hz_hub_file_free (HzHubFile *f)
{
  if (!f)
    return;
  g_free (f->path);
  g_free (f->sha256);
  g_free (f->git_oid);
  g_free (f);
}

/* The JSON array of a reply, or NULL with BAD_REPLY (the parser owns the result). */
static JsonArray *
parse_array (const char *data, gsize len, JsonParser *parser, const char *what, GError **error)
{
  JsonNode *root = NULL;
  if (data && len <= G_MAXSSIZE && json_parser_load_from_data (parser, data, (gssize) len, NULL))
    root = json_parser_get_root (parser);
  if (!root || !JSON_NODE_HOLDS_ARRAY (root))
    {
      g_autoptr (GBytes) b = g_bytes_new (data ? data : "", data ? len : 0);
      g_autofree char *text = hz_egress_excerpt (b);
      g_set_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_BAD_REPLY,
                   "the Hub's %s reply is not a JSON array: %s", what, text);
      return NULL;
    }
  return json_node_get_array (root);
}

gboolean
hz_hub_parse_search_reply (const char *data, gsize len, GPtrArray **models, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonArray *arr = parse_array (data, len, parser, "search", error);
  if (!arr)
    return FALSE;
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) hz_hub_model_free);
  for (guint i = 0; i < json_array_get_length (arr); i++)
    {
      JsonNode *n = json_array_get_element (arr, i);
      JsonObject *o = JSON_NODE_HOLDS_OBJECT (n) ? json_node_get_object (n) : NULL;
      const char *id = hz_egress_member_string (o, "id");
      if (!id || !hz_hub_repo_id_is_valid (id))
        continue;
      HzHubModel *m = g_new0 (HzHubModel, 1);
      m->id = g_strdup (id);
      if (!hz_egress_member_int (o, "downloads", &m->downloads))
        m->downloads = -1;
      if (!hz_egress_member_int (o, "likes", &m->likes))
        m->likes = -1;
      const char *lm = hz_egress_member_string (o, "lastModified");
      m->last_modified = lm && g_utf8_validate (lm, -1, NULL) ? g_strndup (lm, 64) : NULL;
      /* "gated": false, or "auto"/"manual" */
      const char *gated = hz_egress_member_string (o, "gated");
      if (gated && (strcmp (gated, "auto") == 0 || strcmp (gated, "manual") == 0))
        m->gated = g_strdup (gated);
      g_ptr_array_add (out, m);
    }
  *models = out;
  return TRUE;
}

gboolean
hz_hub_parse_tree_reply (const char *data, gsize len, GPtrArray *files, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonArray *arr = parse_array (data, len, parser, "tree", error);
  if (!arr)
    return FALSE;
  for (guint i = 0; i < json_array_get_length (arr); i++)
    {
      JsonNode *n = json_array_get_element (arr, i);
      JsonObject *o = JSON_NODE_HOLDS_OBJECT (n) ? json_node_get_object (n) : NULL;
      const char *type = hz_egress_member_string (o, "type");
      const char *path = hz_egress_member_string (o, "path");
      if (!type || strcmp (type, "file") != 0 || !path || !hz_hub_path_is_valid (path))
        continue;   /* directories, and names this client cannot request */
      gint64 size = -1;
      hz_egress_member_int (o, "size", &size);
      JsonNode *ln = json_object_get_member (o, "lfs");
      JsonObject *lfs = ln && JSON_NODE_HOLDS_OBJECT (ln) ? json_node_get_object (ln) : NULL;
      const char *sha = hz_egress_member_string (lfs, "oid");
      const char *oid = hz_egress_member_string (o, "oid");
      gint64 lsize = -1;
      if (lfs)
        hz_egress_member_int (lfs, "size", &lsize);
      if (size < 0 || (lfs && (lsize < 0 || !hex_digest_ok (sha, 64))))
        {
          g_set_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_BAD_REPLY,
                       "the Hub's tree reply has no valid size or LFS oid for '%s'", path);
          return FALSE;
        }
      HzHubFile *f = g_new0 (HzHubFile, 1);
      f->path = g_strdup (path);
      f->size = (guint64) (lfs ? lsize : size);
      f->sha256 = lfs ? g_ascii_strdown (sha, -1) : NULL;
      f->git_oid = hex_digest_ok (oid, 40) ? g_ascii_strdown (oid, -1) : NULL;
      g_ptr_array_add (files, f);
    }
  return TRUE;
}

/* ================================================================= the client */

struct _HzHub {
  char          *base;    /* endpoint without trailing '/' */
  GUri          *base_uri;
  char          *auth;    /* "Bearer <token>" or NULL (wiped on free) */
  HzStore       *store;
  HzEgressRetry  retry;
};

char *
hz_hub_default_endpoint (void)
{
  const char *env = g_getenv ("HF_ENDPOINT");
  return g_strdup (env && *env ? env : HZ_HUB_DEFAULT_ENDPOINT);
}

static void
wipe_auth (HzHub *hub)
{
  if (hub->auth)
    explicit_bzero (hub->auth, strlen (hub->auth));
  g_clear_pointer (&hub->auth, g_free);
}

gboolean
hz_hub_set_token (HzHub *hub, const char *token, GError **error)
{
  if (token && *token && !hz_egress_token_ok (token))
    {
      g_set_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_INVALID,
                   "the Hub access token must be text without spaces or control characters");
      return FALSE;
    }
  wipe_auth (hub);
  if (token && *token)
    hub->auth = g_strdup_printf ("Bearer %s", token);
  return TRUE;
}

char *
hz_hub_endpoint_normalize (const char *endpoint, GError **error)
{
  g_autofree char *def = endpoint ? NULL : hz_hub_default_endpoint ();
  return hz_egress_check_endpoint (endpoint ? endpoint : def, "Hub endpoint", HZ_HUB_ERROR,
                                   HZ_HUB_ERROR_INVALID, error);
}

HzHub *
hz_hub_new (const char *endpoint, const char *token, HzStore *store, GError **error)
{
  g_return_val_if_fail (store, NULL);
  g_autofree char *base = hz_hub_endpoint_normalize (endpoint, error);
  if (!base)
    return NULL;
  HzHub *hub = g_new0 (HzHub, 1);
  hub->base_uri = g_uri_parse (base, G_URI_FLAGS_NONE, NULL);
  hub->base = g_steal_pointer (&base);
  hub->store = store;
  hub->retry = HZ_EGRESS_RETRY_DEFAULT;
  if (!hz_hub_set_token (hub, token, error))
    {
      hz_hub_free (hub);
      return NULL;
    }
  return hub;
}

void
hz_hub_free (HzHub *hub)
{
  if (!hub)
    return;
  wipe_auth (hub);
  g_free (hub->base);
  g_uri_unref (hub->base_uri);
  g_free (hub);
}

const char *hz_hub_get_endpoint (HzHub *hub) { return hub->base; }
gboolean hz_hub_has_token (HzHub *hub) { return hub->auth != NULL; }

void
hz_hub_set_retry (HzHub *hub, const HzEgressRetry *retry)
{
  hub->retry = *retry;
  hub->retry.max_attempts = MAX (hub->retry.max_attempts, 1);
  hub->retry.timeout_s = MAX (hub->retry.timeout_s, 1);
}

/* ================================================================= the egress log */

/* The URL as logged: whole on the endpoint's origin, without query elsewhere (a CDN's
 * signed query is a short-lived capability, not something the user needs to see). */
static char *
log_url (HzHub *hub, GUri *uri)
{
  if (hz_egress_same_origin (uri, hub->base_uri))
    return g_uri_to_string (uri);
  g_autoptr (GUri) bare = soup_uri_copy (uri, SOUP_URI_QUERY, NULL, SOUP_URI_FRAGMENT, NULL,
                                         SOUP_URI_NONE);
  return g_uri_to_string (bare);
}

static gboolean
store_error (GError **error, GError *local)
{
  g_set_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_STORE,
               "the egress log could not be written (%s); stopping", local->message);
  g_error_free (local);
  return FALSE;
}

/* The row of a request about to be sent (0 on error): written first as "failed" with a
 * message saying the process ended during the request, which is what stays if it is
 * killed; log_row() completes it when the exchange ends. `purpose` and `subject` say what
 * it is for (the search text, the repository, "repo/path" of a download: also on a
 * redirect hop, whose CDN URL names neither). */
static gint64
log_begin (HzHub *hub, GUri *uri, int attempt, HzEgressPurpose purpose, const char *subject,
           GError **error)
{
  g_autofree char *url = log_url (hub, uri);
  HzEgressLogEntry row = {
    .direction = HZ_EGRESS_DOWNLOAD,
    .endpoint = url,
    .status = HZ_EGRESS_STATUS_FAILED,
    .attempt = attempt,
    .message = (char *) "the process ended during this request",
    .purpose = purpose,
    .subject = (char *) subject,
  };
  GError *local = NULL;
  gint64 id = hz_store_add_egress_log (hub->store, &row, &local);
  if (!id)
    store_error (error, local);
  return id;
}

static gboolean
log_row (HzHub *hub, gint64 id, GUri *uri, HzEgressStatus status, guint http, gint64 bytes,
         const char *sha256, const char *message, GError **error)
{
  g_autofree char *url = log_url (hub, uri);
  HzEgressLogEntry row = {
    .direction = HZ_EGRESS_DOWNLOAD,
    .endpoint = url,
    .bytes = bytes,
    .payload_sha256 = (char *) sha256,
    .status = status,
    .http_status = (int) http,
    .message = (char *) message,
  };
  GError *local = NULL;
  return hz_store_update_egress_log (hub->store, id, &row, &local) || store_error (error, local);
}

/* ================================================================= HTTP helpers */

/* The error code and message of a final or retried non-2xx reply. */
static int
status_error (guint status, SoupMessageHeaders *h, GBytes *body, char **msg)
{
  const char *code = h ? soup_message_headers_get_one (h, "X-Error-Code") : NULL;
  const char *text = h ? soup_message_headers_get_one (h, "X-Error-Message") : NULL;
  g_autofree char *ex = text ? g_utf8_make_valid (text, MIN (strlen (text), 300))
                             : hz_egress_excerpt (body);
  *msg = g_strdup_printf ("HTTP %u %s%s%s%s: %s", status, soup_status_get_phrase (status),
                          code ? " (" : "", code ? code : "", code ? ")" : "", ex);
  if (code && (strcmp (code, "RepoNotFound") == 0 || strcmp (code, "EntryNotFound") == 0 ||
               strcmp (code, "RevisionNotFound") == 0))
    return HZ_HUB_ERROR_NOT_FOUND;
  if ((code && strcmp (code, "GatedRepo") == 0) || status == 401 || status == 403)
    return HZ_HUB_ERROR_AUTH;
  if (status == 404 || status == 410)
    return HZ_HUB_ERROR_NOT_FOUND;
  return hz_egress_status_retryable (status) ? HZ_HUB_ERROR_NETWORK : HZ_HUB_ERROR_REJECTED;
}

static SoupMessage *
new_get (HzHub *hub, GUri *uri)
{
  SoupMessage *msg = soup_message_new_from_uri ("GET", uri);
  soup_message_add_flags (msg, SOUP_MESSAGE_NO_REDIRECT);
  if (hub->auth && hz_egress_same_origin (uri, hub->base_uri))
    soup_message_headers_replace (soup_message_get_request_headers (msg), "Authorization",
                                  hub->auth);
  return msg;
}

static gboolean
cancelled_error (GCancellable *cancellable, GError **error)
{
  if (!g_cancellable_is_cancelled (cancellable))
    return FALSE;
  g_set_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_CANCELLED, "cancelled");
  return TRUE;
}

/* The rel="next" target of a Link header (RFC 8288) when it is on the endpoint's origin. */
static GUri *
next_link (HzHub *hub, GUri *cur, SoupMessageHeaders *h)
{
  const char *link = soup_message_headers_get_list (h, "Link");
  if (!link)
    return NULL;
  g_auto (GStrv) items = g_strsplit (link, ",", -1);
  for (char **it = items; *it; it++)
    {
      const char *lt = strchr (*it, '<'), *gt = lt ? strchr (lt, '>') : NULL;
      if (!gt || (!strstr (gt, "rel=\"next\"") && !strstr (gt, "rel=next")))
        continue;
      g_autofree char *target = g_strndup (lt + 1, (gsize) (gt - lt - 1));
      GUri *u = g_uri_parse_relative (cur, target, G_URI_FLAGS_ENCODED, NULL);
      if (u && hz_egress_same_origin (u, hub->base_uri))
        return u;
      g_clear_pointer (&u, g_uri_unref);
    }
  return NULL;
}

/* GET a JSON API URL of the endpoint with retries (logged with `purpose` and `subject`);
 * the reply body, and in *next the next-page link (may be NULL). */
static GBytes *
api_get (HzHub *hub, GUri *uri, HzEgressPurpose purpose, const char *subject, gsize limit,
         GUri **next, GCancellable *cancellable, GError **error)
{
  g_autoptr (SoupSession) session = hz_egress_session_new (hub->retry.timeout_s, TRUE);
  g_autofree char *last = NULL;
  for (int attempt = 1; attempt <= (int) hub->retry.max_attempts; attempt++)
    {
      g_autoptr (SoupMessage) msg = new_get (hub, uri);
      soup_message_headers_replace (soup_message_get_request_headers (msg), "Accept",
                                    "application/json");
      gint64 row = log_begin (hub, uri, attempt, purpose, subject, error);
      if (!row)
        return NULL;
      GError *local = NULL;
      g_autoptr (GBytes) body = NULL;
      g_autoptr (GInputStream) in = soup_session_send (session, msg, cancellable, &local);
      if (in)
        {
          body = hz_egress_read_limited (in, limit, cancellable, &local);
          g_input_stream_close (in, NULL, NULL);
        }
      guint http = in ? soup_message_get_status (msg) : 0;
      gint64 n = body ? (gint64) g_bytes_get_size (body) : 0;
      if (g_cancellable_is_cancelled (cancellable))
        {
          g_clear_error (&local);
          log_row (hub, row, uri, HZ_EGRESS_STATUS_CANCELLED, http, n, NULL, "cancelled", NULL);
          return cancelled_error (cancellable, error), NULL;
        }
      int code = HZ_HUB_ERROR_NETWORK;
      g_clear_pointer (&last, g_free);   /* `last` is freed again on return */
      if (local)
        last = g_strdup_printf ("%s%s", http ? "reading the reply: " : "", local->message);
      else if (SOUP_STATUS_IS_SUCCESSFUL (http))
        {
          if (!log_row (hub, row, uri, HZ_EGRESS_STATUS_OK, http, n, NULL, NULL, error))
            return NULL;
          if (next)
            *next = next_link (hub, uri, soup_message_get_response_headers (msg));
          return g_steal_pointer (&body);
        }
      else
        code = status_error (http, soup_message_get_response_headers (msg), body, &last);
      g_clear_error (&local);
      gboolean final = code != HZ_HUB_ERROR_NETWORK || attempt == (int) hub->retry.max_attempts;
      HzEgressStatus st = code != HZ_HUB_ERROR_NETWORK ? HZ_EGRESS_STATUS_REJECTED
                          : final ? HZ_EGRESS_STATUS_FAILED : HZ_EGRESS_STATUS_RETRY;
      if (!log_row (hub, row, uri, st, http, n, NULL, last, error))
        return NULL;
      if (final)
        {
          g_autofree char *url = g_uri_to_string (uri);
          g_set_error (error, HZ_HUB_ERROR, code, "GET %s: %s%s", url,
                       code == HZ_HUB_ERROR_NETWORK ? "gave up: " : "", last);
          return NULL;
        }
      if (!hz_egress_backoff_sleep (hz_egress_backoff_ms (&hub->retry, attempt), cancellable))
        return cancelled_error (cancellable, error), NULL;
    }
  g_assert_not_reached ();
}

static GUri *
endpoint_uri (HzHub *hub, const char *path_and_query)
{
  g_autofree char *s = g_strconcat (hub->base, path_and_query, NULL);
  GUri *u = g_uri_parse (s, G_URI_FLAGS_ENCODED, NULL);
  g_assert (u);   /* the base was validated and the rest is escaped */
  return u;
}

/* ================================================================= search, tree */

gboolean
hz_hub_check_query (const char *query, guint limit, GError **error)
{
  if (!query_chars_ok (query) || limit < 1 || limit > 100)
    {
      g_set_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_INVALID,
                   "a search is 1 to %d ASCII letters and digits, spaces or ._-+/ (and 1 "
                   "to 100 results)", HZ_HUB_MAX_QUERY);
      return FALSE;
    }
  return TRUE;
}

GPtrArray *
hz_hub_search (HzHub *hub, const char *query, guint limit, GCancellable *cancellable,
               GError **error)
{
  if (!hz_hub_check_query (query, limit, error))
    return NULL;
  g_autofree char *q = g_uri_escape_string (query, NULL, FALSE);
  g_autofree char *pq = g_strdup_printf ("/api/models?search=%s&filter=gguf&sort=downloads"
                                         "&direction=-1&limit=%u&expand=downloads"
                                         "&expand=likes&expand=lastModified&expand=gated",
                                         q, limit);
  g_autoptr (GUri) uri = endpoint_uri (hub, pq);
  g_autoptr (GBytes) body = api_get (hub, uri, HZ_EGRESS_PURPOSE_MODEL_SEARCH, query,
                                     MAX_TREE_REPLY, NULL, cancellable, error);
  if (!body)
    return NULL;
  GPtrArray *models = NULL;
  gsize len;
  const char *data = g_bytes_get_data (body, &len);
  return hz_hub_parse_search_reply (data, len, &models, error) ? models : NULL;
}

GPtrArray *
hz_hub_list_files (HzHub *hub, const char *repo, const char *revision,
                   GCancellable *cancellable, GError **error)
{
  /* the same checks as a download's (the path part is a placeholder) */
  g_autoptr (HzHubFileRef) ref = hz_hub_file_ref_new (repo, revision, "x", error);
  if (!ref)
    return NULL;
  g_autofree char *rev = g_uri_escape_string (ref->revision, NULL, FALSE);
  g_autofree char *pq = g_strdup_printf ("/api/models/%s/tree/%s?recursive=true", ref->repo, rev);
  g_autoptr (GUri) uri = endpoint_uri (hub, pq);
  g_autoptr (GPtrArray) files = g_ptr_array_new_with_free_func ((GDestroyNotify) hz_hub_file_free);
  for (int page = 0; uri; page++)
    {
      if (page == HZ_HUB_MAX_TREE_PAGES)
        {
          g_set_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_BAD_REPLY,
                       "%s has more than %d pages of files", repo, HZ_HUB_MAX_TREE_PAGES);
          return NULL;
        }
      GUri *next = NULL;
      g_autoptr (GBytes) body = api_get (hub, uri, HZ_EGRESS_PURPOSE_MODEL_FILES, ref->repo,
                                         MAX_TREE_REPLY, &next, cancellable, error);
      g_clear_pointer (&uri, g_uri_unref);
      uri = next;
      gsize len;
      const char *data = body ? g_bytes_get_data (body, &len) : NULL;
      if (!body || !hz_hub_parse_tree_reply (data, len, files, error))
        return NULL;
    }
  return g_steal_pointer (&files);
}

/* ================================================================= downloads */

char *
hz_hub_part_path (const char *dest_dir, const char *path)
{
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *name = g_strconcat (base, ".part", NULL);
  return g_build_filename (dest_dir, name, NULL);
}

typedef struct {
  const HzHubFileRef *ref;
  char       *final, *part;
  guint64     size;         /* expected bytes, 0 = not known yet */
  char       *sha256;       /* expected, lowercase hex, or NULL */
  char       *git_oid;      /* expected git blob oid (files outside LFS) or NULL */
  int         fd;           /* the .part, -1 when closed */
  guint64     have;         /* bytes in the .part */
  GChecksum  *sum;          /* SHA-256 of those bytes */
  gboolean    resumed;      /* began from a .part made before this call */
  gboolean    done;
} Job;

typedef struct {
  HzHub             *hub;
  Job               *jobs;
  guint              n;
  guint64            set_total;     /* 0 while a size is unknown */
  guint64            done_before;   /* bytes of the jobs before the current one */
  HzHubProgressFunc  progress;
  gpointer           user_data;
  gint64             last_progress;
  char              *commit;
  GCancellable      *cancellable;
} Set;

static void
report (Set *s, Job *j, gboolean force)
{
  gint64 now = g_get_monotonic_time ();
  if (!s->progress || (!force && now - s->last_progress < PROGRESS_INTERVAL_US))
    return;
  s->last_progress = now;
  s->progress (s->done_before + j->have, s->set_total, j->ref->path, s->user_data);
}

static void
update_total (Set *s)
{
  s->set_total = 0;
  for (guint i = 0; i < s->n; i++)
    {
      if (s->jobs[i].size == 0)
        {
          s->set_total = 0;
          return;
        }
      s->set_total += s->jobs[i].size;
    }
}

static gboolean
disk_full_errno (int e)
{
  return e == ENOSPC || e == EDQUOT || e == EFBIG;
}

static gboolean
io_error (GError **error, int e, const char *what, const char *path)
{
  g_set_error (error, HZ_HUB_ERROR, disk_full_errno (e) ? HZ_HUB_ERROR_NO_SPACE : HZ_HUB_ERROR_IO,
               "%s %s: %s", what, path, g_strerror (e));
  return FALSE;
}

/* Start the .part over. */
static gboolean
job_truncate (Job *j, GError **error)
{
  if (ftruncate (j->fd, 0) != 0)
    return io_error (error, errno, "truncating", j->part);
  j->have = 0;
  j->resumed = FALSE;
  g_checksum_reset (j->sum);
  return TRUE;
}

/* Open the .part and hash what it already holds. */
static gboolean
job_open (Job *j, GError **error)
{
  j->fd = open (j->part, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (j->fd < 0)
    return io_error (error, errno, "opening", j->part);
  struct stat st;
  if (fstat (j->fd, &st) != 0)
    return io_error (error, errno, "reading", j->part);
  j->sum = g_checksum_new (G_CHECKSUM_SHA256);
  j->have = 0;
  if (j->size && (guint64) st.st_size > j->size)
    return job_truncate (j, error);
  g_autofree guint8 *buf = g_malloc (CHUNK);
  while (j->have < (guint64) st.st_size)
    {
      ssize_t r = pread (j->fd, buf, CHUNK, (off_t) j->have);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        return r < 0 ? io_error (error, errno, "reading", j->part) : job_truncate (j, error);
      g_checksum_update (j->sum, buf, r);
      j->have += (guint64) r;
    }
  j->resumed = j->have > 0;
  return TRUE;
}

static void
job_close (Job *j)
{
  if (j->fd >= 0)
    close (j->fd);
  j->fd = -1;
}

static gboolean
write_all (Job *j, const guint8 *buf, gsize n, GError **error)
{
  while (n > 0)
    {
      ssize_t w = pwrite (j->fd, buf, n, (off_t) j->have);
      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0)
        return io_error (error, errno, "writing", j->part);
      g_checksum_update (j->sum, buf, w);
      j->have += (guint64) w;
      buf += w;
      n -= (gsize) w;
    }
  return TRUE;
}

/* The git blob oid of the .part: SHA-1 of "blob SIZE\0" + bytes (files outside LFS). */
static char *
git_oid_of (Job *j, GError **error)
{
  g_autoptr (GChecksum) sha1 = g_checksum_new (G_CHECKSUM_SHA1);
  g_autofree char *hdr = g_strdup_printf ("blob %" G_GUINT64_FORMAT, j->have);
  g_checksum_update (sha1, (const guchar *) hdr, (gssize) strlen (hdr) + 1);
  g_autofree guint8 *buf = g_malloc (CHUNK);
  for (guint64 off = 0; off < j->have;)
    {
      ssize_t r = pread (j->fd, buf, CHUNK, (off_t) off);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        return io_error (error, r < 0 ? errno : EIO, "reading", j->part), NULL;
      g_checksum_update (sha1, buf, r);
      off += (guint64) r;
    }
  return g_strdup (g_checksum_get_string (sha1));
}

typedef enum { STEP_OK, STEP_RETRY, STEP_RESTART, STEP_FINAL } Step;

/* The .part is complete (j->have == j->size): check it. STEP_OK (fsynced; *sha = its
 * sha256, g_free), STEP_RESTART (a resumed .part that does not match: emptied, download
 * again) or STEP_FINAL with the error (the .part deleted). */
static Step
job_verify (Job *j, char **sha, char **detail, GError **error)
{
  g_autofree char *sum = g_strdup (g_checksum_get_string (j->sum));
  g_autofree char *oid = NULL;
  const char *want = j->sha256;
  const char *got = sum;
  if (!want && j->git_oid)
    {
      if (!(oid = git_oid_of (j, error)))
        return STEP_FINAL;
      want = j->git_oid;
      got = oid;
    }
  if (!want)
    {
      *detail = g_strdup ("the Hub gave no checksum (LFS oid, X-Linked-Etag or git oid)");
      g_set_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_BAD_REPLY, "%s: %s; not kept",
                   j->ref->path, *detail);
      g_unlink (j->part);
      return STEP_FINAL;
    }
  if (strcmp (want, got) == 0)
    {
      if (fsync (j->fd) != 0)
        return io_error (error, errno, "writing", j->part), STEP_FINAL;
      *sha = g_steal_pointer (&sum);
      return STEP_OK;
    }
  *detail = g_strdup_printf ("%s mismatch: got %s, expected %s", oid ? "git oid" : "sha256",
                             got, want);
  if (j->resumed)
    {
      /* the bytes of an earlier run may be of an older version of the file */
      GError *local = NULL;
      if (!job_truncate (j, &local))
        {
          g_propagate_error (error, local);
          return STEP_FINAL;
        }
      return STEP_RESTART;
    }
  g_set_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_CHECKSUM, "%s: %s; the file was deleted",
               j->ref->path, *detail);
  g_unlink (j->part);
  return STEP_FINAL;
}

static char *
strip_etag (const char *etag)
{
  if (!etag)
    return NULL;
  if (g_str_has_prefix (etag, "W/"))
    etag += 2;
  g_autofree char *s = g_strdup (etag);
  g_strstrip (s);
  gsize n = strlen (s);
  if (n >= 2 && s[0] == '"' && s[n - 1] == '"')
    {
      s[n - 1] = 0;
      memmove (s, s + 1, n - 1);
    }
  return g_ascii_strdown (s, -1);
}

/* Take the Hub's metadata headers of a reply: X-Repo-Commit, X-Linked-Size, X-Linked-Etag
 * (or a non-LFS file's ETag). FALSE (final, with error) when they contradict the tree. */
static gboolean
take_metadata (Set *s, Job *j, SoupMessageHeaders *h, GError **error)
{
  const char *commit = soup_message_headers_get_one (h, "X-Repo-Commit");
  if (!s->commit && commit && hex_digest_ok (commit, 40))
    s->commit = g_ascii_strdown (commit, -1);
  const char *ls = soup_message_headers_get_one (h, "X-Linked-Size");
  const char *le = soup_message_headers_get_one (h, "X-Linked-Etag");
  g_autofree char *etag = strip_etag (le);
  if (ls)
    {
      guint64 size = 0;
      if (!g_ascii_string_to_unsigned (ls, 10, 1, G_MAXINT64, &size, NULL) ||
          (j->size && size != j->size))
        {
          g_set_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_BAD_REPLY,
                       "%s: the Hub says %s bytes, its file list %" G_GUINT64_FORMAT " (the "
                       "file changed? list the repository again)", j->ref->path, ls, j->size);
          return FALSE;
        }
      j->size = size;
    }
  if (etag && hex_digest_ok (etag, 64))
    {
      if (j->sha256 && strcmp (j->sha256, etag) != 0)
        {
          g_set_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_BAD_REPLY,
                       "%s: the Hub's X-Linked-Etag %s is not the file list's sha256 %s (the "
                       "file changed? list the repository again)", j->ref->path, etag, j->sha256);
          return FALSE;
        }
      g_free (j->sha256);
      j->sha256 = g_steal_pointer (&etag);
    }
  /* a file outside LFS: the Hub's ETag is its git blob oid */
  g_autofree char *plain = strip_etag (soup_message_headers_get_one (h, "ETag"));
  if (!le && !j->git_oid && plain && hex_digest_ok (plain, 40))
    j->git_oid = g_steal_pointer (&plain);
  return TRUE;
}

/* Having learned the size: is there room for the rest? */
static gboolean
room_for (Job *j, GError **error)
{
  GError *local = NULL;
  if (!j->size || j->have >= j->size ||
      hz_atomic_file_check_space (j->part, j->size - j->have, &local))
    return TRUE;
  g_set_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_NO_SPACE, "%s", local->message);
  g_error_free (local);
  return FALSE;
}

/* Stream a 200/206 body into the .part. */
static Step
stream_body (Set *s, Job *j, GInputStream *in, guint64 *received, char **detail, GError **error)
{
  g_autofree guint8 *buf = g_malloc (CHUNK);
  for (;;)
    {
      GError *local = NULL;
      gssize r = g_input_stream_read (in, buf, CHUNK, s->cancellable, &local);
      if (r < 0)
        {
          if (g_cancellable_is_cancelled (s->cancellable))
            {
              g_clear_error (&local);
              cancelled_error (s->cancellable, error);
              return STEP_FINAL;
            }
          *detail = g_strdup_printf ("connection lost after %" G_GUINT64_FORMAT " bytes: %s",
                                     *received, local->message);
          g_error_free (local);
          return STEP_RETRY;
        }
      if (r == 0)
        break;
      if (j->size && j->have + (guint64) r > j->size)
        {
          *detail = g_strdup_printf ("more bytes than the %" G_GUINT64_FORMAT " announced",
                                     j->size);
          g_set_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_CHECKSUM, "%s: %s; the file was "
                       "deleted", j->ref->path, *detail);
          g_unlink (j->part);
          return STEP_FINAL;
        }
      if (!write_all (j, buf, (gsize) r, error))
        {
          *detail = g_strdup ((*error)->message);
          return STEP_FINAL;
        }
      *received += (guint64) r;
      report (s, j, FALSE);
    }
  if (j->size && j->have < j->size)
    {
      *detail = g_strdup_printf ("the reply ended at %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
                                 " bytes", j->have, j->size);
      return STEP_RETRY;
    }
  if (!j->size)
    j->size = j->have;   /* no length was announced: the body is the file */
  return STEP_OK;
}

/* Check a 200/206 reply's range against the .part and prepare it. */
static Step
accept_range (Job *j, guint http, SoupMessageHeaders *h, char **detail, GError **error)
{
  if (http == 206)
    {
      goffset start = -1, end = -1, total = -1;
      const char *range = soup_message_headers_get_one (h, "Content-Range");
      if (!soup_message_headers_get_content_range (h, &start, &end, &total) ||
          start != (goffset) j->have || (j->size && total >= 0 && (guint64) total != j->size))
        {
          *detail = g_strdup_printf ("a 206 reply for another range (%s); starting over",
                                     range ? range : "none");
          return job_truncate (j, error) ? STEP_RESTART : STEP_FINAL;
        }
      if (!j->size && total > 0)
        j->size = (guint64) total;
      return STEP_OK;
    }
  if (j->have > 0 && !job_truncate (j, error))   /* a 200: the server ignored the range */
    return STEP_FINAL;
  goffset len = soup_message_headers_get_content_length (h);
  if (!j->size && len > 0 && soup_message_headers_get_encoding (h) == SOUP_ENCODING_CONTENT_LENGTH)
    j->size = (guint64) len;
  return STEP_OK;
}

/* The outcome of one HTTP exchange of a download. */
typedef struct {
  Step     step;
  GError  *final;      /* the error of a STEP_FINAL */
  char    *detail;     /* why (for the log and a retry's message), or NULL */
  guint64  received;   /* body bytes of this exchange */
  char    *sha;        /* the verified file's sha256 (STEP_OK of the last exchange) */
  GUri    *next;       /* a redirect to follow (step STEP_OK) */
} Exchange;

static void
exchange_clear (Exchange *x)
{
  g_clear_error (&x->final);
  g_clear_pointer (&x->detail, g_free);
  g_clear_pointer (&x->sha, g_free);
  g_clear_pointer (&x->next, g_uri_unref);
}

/* A 3xx: the Hub's metadata, then where to go (x->next), or a final error. */
static void
on_redirect (Set *s, Job *j, GUri *uri, SoupMessageHeaders *h, GInputStream *in, int hop,
             Exchange *x)
{
  g_autoptr (GBytes) drained = hz_egress_read_limited (in, MAX_ERROR_REPLY, NULL, NULL);
  x->received = drained ? g_bytes_get_size (drained) : 0;
  const char *loc = soup_message_headers_get_one (h, "Location");
  g_autoptr (GUri) next = loc ? g_uri_parse_relative (uri, loc, G_URI_FLAGS_ENCODED, NULL) : NULL;
  gboolean downgrade = next && g_ascii_strcasecmp (g_uri_get_scheme (uri), "https") == 0 &&
                       g_ascii_strcasecmp (g_uri_get_scheme (next), "https") != 0;
  x->step = STEP_FINAL;
  if (!take_metadata (s, j, h, &x->final) || !room_for (j, &x->final))
    return;
  if (!next || !hz_egress_uri_allowed (next) || downgrade || hop == MAX_REDIRECTS)
    {
      g_set_error (&x->final, HZ_HUB_ERROR, HZ_HUB_ERROR_BAD_REPLY, "%s: %s redirect to '%s'",
                   j->ref->path, hop == MAX_REDIRECTS ? "too many redirects; the last a" : "refused a",
                   loc ? loc : "(no Location)");
      return;
    }
  x->detail = g_strdup_printf ("redirect to %s://%s", g_uri_get_scheme (next),
                               g_uri_get_host (next));
  x->next = g_steal_pointer (&next);
  x->step = STEP_OK;
}

/* A 200/206: the bytes into the .part, then the check. */
static void
on_body (Set *s, Job *j, guint http, SoupMessageHeaders *h, GInputStream *in, Exchange *x)
{
  x->step = STEP_FINAL;
  if (!take_metadata (s, j, h, &x->final))
    return;
  x->step = accept_range (j, http, h, &x->detail, &x->final);
  if (x->step == STEP_OK && !room_for (j, &x->final))
    x->step = STEP_FINAL;
  if (x->step != STEP_OK)
    return;
  update_total (s);
  x->step = stream_body (s, j, in, &x->received, &x->detail, &x->final);
  if (x->step == STEP_OK)
    x->step = job_verify (j, &x->sha, &x->detail, &x->final);
}

/* Any other status: retried (408/429/5xx) or final. */
static void
on_error_status (HzHub *hub, Job *j, GUri *uri, guint http, SoupMessageHeaders *h,
                 GInputStream *in, Exchange *x)
{
  g_autoptr (GBytes) body = hz_egress_read_limited (in, MAX_ERROR_REPLY, NULL, NULL);
  x->received = body ? g_bytes_get_size (body) : 0;
  int code = status_error (http, h, body, &x->detail);
  x->step = code == HZ_HUB_ERROR_NETWORK ? STEP_RETRY : STEP_FINAL;
  if (x->step == STEP_FINAL)
    {
      g_autofree char *url = log_url (hub, uri);
      g_set_error (&x->final, HZ_HUB_ERROR, code, "%s: GET %s: %s", j->ref->path, url, x->detail);
    }
}

/* The log status of an exchange's outcome (a retryable failure of the `last` attempt is
 * "failed"). */
static HzEgressStatus
log_status (const Exchange *x, gboolean last)
{
  switch (x->step)
    {
    case STEP_OK:
      return HZ_EGRESS_STATUS_OK;
    case STEP_FINAL:
      if (g_error_matches (x->final, HZ_HUB_ERROR, HZ_HUB_ERROR_CANCELLED))
        return HZ_EGRESS_STATUS_CANCELLED;
      return g_error_matches (x->final, HZ_HUB_ERROR, HZ_HUB_ERROR_IO) ||
             g_error_matches (x->final, HZ_HUB_ERROR, HZ_HUB_ERROR_NO_SPACE)
               ? HZ_EGRESS_STATUS_FAILED : HZ_EGRESS_STATUS_REJECTED;
    case STEP_RETRY:
      return last ? HZ_EGRESS_STATUS_FAILED : HZ_EGRESS_STATUS_RETRY;
    case STEP_RESTART:
    default:
      return HZ_EGRESS_STATUS_RETRY;
    }
}

/* One attempt: the resolve URL and its redirects, then the body. Every exchange is one
 * log row (a retryable failure of the `last` attempt as "failed"). On STEP_RETRY and
 * STEP_RESTART `error` holds the reason (for the caller's "gave up" message). */
static Step
fetch_once (Set *s, Job *j, SoupSession *session, int attempt, gboolean last, GError **error)
{
  HzHub *hub = s->hub;
  g_autofree char *rev = g_uri_escape_string (j->ref->revision, NULL, FALSE);
  g_autofree char *path = g_uri_escape_string (j->ref->path, "/", FALSE);
  g_autofree char *pq = g_strdup_printf ("/%s/resolve/%s/%s", j->ref->repo, rev, path);
  g_autoptr (GUri) uri = endpoint_uri (hub, pq);
  g_autofree char *subject = g_strconcat (j->ref->repo, "/", j->ref->path, NULL);

  for (int hop = 0;; hop++)
    {
      g_autoptr (SoupMessage) msg = new_get (hub, uri);
      SoupMessageHeaders *rh = soup_message_get_request_headers (msg);
      soup_message_headers_replace (rh, "Accept-Encoding", "identity");
      if (j->have > 0)
        {
          g_autofree char *range = g_strdup_printf ("bytes=%" G_GUINT64_FORMAT "-", j->have);
          soup_message_headers_replace (rh, "Range", range);
        }
      gint64 row = log_begin (hub, uri, attempt, HZ_EGRESS_PURPOSE_MODEL_DOWNLOAD, subject,
                              error);
      if (!row)
        return STEP_FINAL;
      GError *local = NULL;
      g_autoptr (GInputStream) in = soup_session_send (session, msg, s->cancellable, &local);
      guint http = in ? soup_message_get_status (msg) : 0;
      SoupMessageHeaders *h = soup_message_get_response_headers (msg);
      Exchange x = { STEP_FINAL };
      if (!in && g_cancellable_is_cancelled (s->cancellable))
        cancelled_error (s->cancellable, &x.final);
      else if (!in)
        {
          x.detail = g_strdup (local->message);
          x.step = STEP_RETRY;
        }
      else if (SOUP_STATUS_IS_REDIRECTION (http) && http != 304)
        on_redirect (s, j, uri, h, in, hop, &x);
      else if (http == 200 || http == 206)
        on_body (s, j, http, h, in, &x);
      else if (http == 416)
        {
          /* the .part is at or past the end of the file as the server has it */
          x.detail = g_strdup ("the server has no bytes past the .part; starting over");
          x.step = job_truncate (j, &x.final) ? STEP_RESTART : STEP_FINAL;
        }
      else
        on_error_status (hub, j, uri, http, h, in, &x);
      g_clear_error (&local);
      if (in)
        g_input_stream_close (in, NULL, NULL);

      const char *text = x.detail ? x.detail : x.final ? x.final->message : NULL;
      if (!log_row (hub, row, uri, log_status (&x, last), http, (gint64) x.received, x.sha,
                    text, error))
        {
          exchange_clear (&x);
          return STEP_FINAL;
        }
      Step step = x.step;
      if (x.next)
        {
          g_uri_unref (uri);
          uri = g_steal_pointer (&x.next);
          exchange_clear (&x);
          continue;
        }
      if (x.final)
        g_propagate_error (error, g_steal_pointer (&x.final));
      else if (step == STEP_RETRY || step == STEP_RESTART)
        g_set_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_NETWORK, "%s",
                     x.detail ? x.detail : "retry");
      exchange_clear (&x);
      return step;
    }
}

static gboolean
download_job (Set *s, Job *j, GError **error)
{
  if (!job_open (j, error))
    return FALSE;
  report (s, j, TRUE);
  if (j->size && j->have == j->size)
    {
      /* a .part finished earlier (a set interrupted before its renames): check it */
      g_autofree char *sha = NULL;
      g_autofree char *detail = NULL;
      Step st = job_verify (j, &sha, &detail, error);
      if (st == STEP_OK)
        return TRUE;
      if (st == STEP_FINAL)
        return FALSE;
    }
  g_autoptr (SoupSession) session = hz_egress_session_new (s->hub->retry.timeout_s, FALSE);
  gboolean restarted = FALSE;
  for (int attempt = 1;; attempt++)
    {
      if (cancelled_error (s->cancellable, error))
        return FALSE;
      GError *local = NULL;
      Step st = fetch_once (s, j, session, attempt,
                            attempt >= (int) s->hub->retry.max_attempts, &local);
      if (st == STEP_OK)
        return TRUE;
      if (st == STEP_FINAL)
        {
          g_propagate_error (error, local);
          return FALSE;
        }
      if (st == STEP_RESTART && !restarted)
        {
          /* once, at once, and not counted as a failed attempt */
          restarted = TRUE;
          attempt--;
          g_clear_error (&local);
          continue;
        }
      if (attempt >= (int) s->hub->retry.max_attempts)
        {
          g_set_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_NETWORK,
                       "%s: gave up after %d attempts: %s%s", j->ref->path, attempt,
                       local->message, j->have > 0 ? " (the .part is kept: run again to "
                                                     "resume)" : "");
          g_error_free (local);
          return FALSE;
        }
      g_clear_error (&local);
      if (!hz_egress_backoff_sleep (hz_egress_backoff_ms (&s->hub->retry, attempt), s->cancellable))
        return cancelled_error (s->cancellable, error), FALSE;
    }
}

/* An existing target: identical to what is expected (TRUE, nothing to do) or an error. */
static gboolean
target_matches (Job *j, GError **error)
{
  GStatBuf st;
  if (g_stat (j->final, &st) != 0 || !S_ISREG (st.st_mode) || !j->sha256 ||
      (guint64) st.st_size != j->size)
    {
      g_set_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_IO, "%s already exists and is not this "
                   "file; remove it or choose another folder", j->final);
      return FALSE;
    }
  g_autoptr (GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  g_autoptr (GMappedFile) mf = g_mapped_file_new (j->final, FALSE, NULL);
  if (mf)
    g_checksum_update (sum, (const guchar *) g_mapped_file_get_contents (mf),
                       (gssize) g_mapped_file_get_length (mf));
  if (!mf || strcmp (g_checksum_get_string (sum), j->sha256) != 0)
    {
      g_set_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_IO, "%s already exists and differs from "
                   "%s of %s; remove it or choose another folder", j->final, j->ref->path,
                   j->ref->repo);
      return FALSE;
    }
  return TRUE;
}

/* Rename every verified .part of the set to its name, never over an existing file. */
static gboolean
place_all (Set *s, const char *dest_dir, GError **error)
{
  for (guint i = 0; i < s->n; i++)
    {
      Job *j = &s->jobs[i];
      if (j->done)
        continue;
      if (renameat2 (AT_FDCWD, j->part, AT_FDCWD, j->final, RENAME_NOREPLACE) == 0)
        continue;
      int e = errno;
      /* file systems without RENAME_NOREPLACE: check, then rename */
      if (e == EINVAL || e == ENOSYS)
        e = g_file_test (j->final, G_FILE_TEST_EXISTS) ? EEXIST
            : g_rename (j->part, j->final) == 0 ? 0 : errno;
      if (e != 0)
        return io_error (error, e, "placing", j->final);
    }
  int dfd = open (dest_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0)
    {
      fsync (dfd);
      close (dfd);
    }
  return TRUE;
}

gboolean
hz_hub_download (HzHub *hub, GPtrArray *refs, const char *dest_dir, HzHubProgressFunc progress,
                 gpointer user_data, char **commit, GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (hub && refs && dest_dir, FALSE);
  if (refs->len == 0)
    {
      g_set_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_INVALID, "no file to download");
      return FALSE;
    }
  if (!g_file_test (dest_dir, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_IO, "%s is not a folder", dest_dir);
      return FALSE;
    }
  Set s = {
    .hub = hub, .jobs = g_new0 (Job, refs->len), .n = refs->len, .progress = progress,
    .user_data = user_data, .cancellable = cancellable,
  };
  gboolean ok = FALSE;
  guint64 need = 0;
  for (guint i = 0; i < s.n; i++)
    {
      Job *j = &s.jobs[i];
      j->ref = refs->pdata[i];
      j->fd = -1;
      g_autofree char *base = g_path_get_basename (j->ref->path);
      j->final = g_build_filename (dest_dir, base, NULL);
      j->part = hz_hub_part_path (dest_dir, j->ref->path);
      j->size = j->ref->size;
      j->sha256 = g_strdup (j->ref->sha256);
      j->git_oid = g_strdup (j->ref->git_oid);
      for (guint k = 0; k < i; k++)
        if (strcmp (s.jobs[k].final, j->final) == 0)
          {
            g_set_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_INVALID,
                         "two files of the set are named %s", base);
            goto out;
          }
      if (g_file_test (j->final, G_FILE_TEST_EXISTS))
        {
          if (!target_matches (j, error))
            goto out;
          j->done = TRUE;
          continue;
        }
      GStatBuf st;
      guint64 have = g_stat (j->part, &st) == 0 ? (guint64) st.st_size : 0;
      if (j->size > have)
        need += j->size - have;
    }
  update_total (&s);
  if (need > 0)
    {
      GError *local = NULL;
      if (!hz_atomic_file_check_space (s.jobs[0].part, need, &local))
        {
          g_set_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_NO_SPACE, "%s", local->message);
          g_error_free (local);
          goto out;
        }
    }
  for (guint i = 0; i < s.n; i++)
    {
      Job *j = &s.jobs[i];
      if (!j->done)
        {
          gboolean got = download_job (&s, j, error);
          if (got)
            report (&s, j, TRUE);
          job_close (j);
          if (!got)
            {
              if (g_error_matches (*error, HZ_HUB_ERROR, HZ_HUB_ERROR_NO_SPACE))
                {
                  /* no partial model on a full disk */
                  for (guint k = 0; k < s.n; k++)
                    if (!s.jobs[k].done)
                      g_unlink (s.jobs[k].part);
                  g_prefix_error (error, "the disk is full (the partial download was "
                                  "removed; free some space and run again): ");
                }
              else if (j->have == 0)
                g_unlink (j->part);   /* nothing to resume */
              goto out;
            }
        }
      s.done_before += j->done ? j->size : j->have;
    }
  ok = place_all (&s, dest_dir, error);
  if (ok && progress)
    progress (s.done_before, s.done_before, NULL, user_data);
out:
  for (guint i = 0; i < s.n; i++)
    {
      job_close (&s.jobs[i]);
      g_free (s.jobs[i].final);
      g_free (s.jobs[i].part);
      g_free (s.jobs[i].sha256);
      g_free (s.jobs[i].git_oid);
      if (s.jobs[i].sum)
        g_checksum_free (s.jobs[i].sum);
    }
  g_free (s.jobs);
  if (ok && commit)
    *commit = g_steal_pointer (&s.commit);
  g_free (s.commit);
  return ok;
}
