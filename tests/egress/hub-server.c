/* tests/egress/hub-server.c — the loopback Hub and CDN (hub-server.h). */
#include "hub-server.h"

#include <json-glib/json-glib.h>
#include <libsoup/soup.h>
#include <stdio.h>
#include <string.h>
#include "egress-test-util.h"

typedef struct {
  char    *path;
  GBytes  *data;      /* the true file */
  GBytes  *served;    /* what is sent (data, or data with a byte flipped) */
  char    *sha256, *git_oid, *pointer_oid;
  gsize    pointer_size;
  guint    flags;
  gsize    cut_at;
  gboolean cut_done, fail_done;
} HztFile;

typedef struct {
  char      *id;
  gboolean   gated;
  GPtrArray *files;   /* HztFile* */
} HztRepo;

struct _HztHub {
  HztServer  *thread;
  SoupServer *hub, *cdn;
  guint       hub_port, cdn_port;
  GPtrArray  *repos;
  guint       tree_page;
  gsize       chunk;
  guint       interval_ms;
  HztFail     fail_first;      /* HZT_FAIL_NONE once done */
  char       *fixtures;
  JsonObject *tree_template;   /* an LFS entry of the recorded tree */
  GMutex      lock;
  GPtrArray  *requests;        /* HztRequest*, under lock */
};

char *
hzt_sha256 (GBytes *data)
{
  return g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, data);
}

static char *
git_blob_oid (const void *data, gsize len)
{
  g_autoptr (GChecksum) c = g_checksum_new (G_CHECKSUM_SHA1);
  g_autofree char *hdr = g_strdup_printf ("blob %" G_GSIZE_FORMAT, len);
  g_checksum_update (c, (const guchar *) hdr, (gssize) strlen (hdr) + 1);
  g_checksum_update (c, data, (gssize) len);
  return g_strdup (g_checksum_get_string (c));
}

static void
request_free (gpointer p)
{
  HztRequest *r = p;
  g_free (r->path);
  g_free (r->query);
  g_free (r->range);
  g_free (r);
}

static void
file_free (gpointer p)
{
  HztFile *f = p;
  g_free (f->path);
  g_bytes_unref (f->data);
  g_bytes_unref (f->served);
  g_free (f->sha256);
  g_free (f->git_oid);
  g_free (f->pointer_oid);
  g_free (f);
}

static void
repo_free (gpointer p)
{
  HztRepo *r = p;
  g_free (r->id);
  g_ptr_array_unref (r->files);
  g_free (r);
}

static char *
fixture_path (HztHub *hub, const char *name)
{
  return g_build_filename (hub->fixtures, name, NULL);
}

HztHub *
hzt_hub_new (void)
{
  HztHub *hub = g_new0 (HztHub, 1);
  const char *src = g_getenv ("HZ_SOURCE_DIR");
  g_assert_nonnull (src);
  hub->fixtures = g_build_filename (src, "tests", "egress", "hub-fixtures", NULL);
  hub->repos = g_ptr_array_new_with_free_func (repo_free);
  hub->requests = g_ptr_array_new_with_free_func (request_free);
  hub->chunk = 256 * 1024;
  hub->interval_ms = 1;
  g_mutex_init (&hub->lock);
  /* the shape of a tree entry: the recorded LFS entry of a GGUF */
  g_autofree char *tree = fixture_path (hub, "tree-llama-3.2-1b-instruct-gguf.json");
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (json_parser_load_from_file (parser, tree, &error));
  JsonArray *arr = json_node_get_array (json_parser_get_root (parser));
  for (guint i = 0; i < json_array_get_length (arr) && !hub->tree_template; i++)
    {
      JsonObject *o = json_array_get_object_element (arr, i);
      if (json_object_has_member (o, "lfs"))
        hub->tree_template = json_object_ref (o);
    }
  g_assert_nonnull (hub->tree_template);
  return hub;
}

static HztRepo *
find_repo (HztHub *hub, const char *id, gboolean create)
{
  for (guint i = 0; i < hub->repos->len; i++)
    if (strcmp (((HztRepo *) hub->repos->pdata[i])->id, id) == 0)
      return hub->repos->pdata[i];
  if (!create)
    return NULL;
  HztRepo *r = g_new0 (HztRepo, 1);
  r->id = g_strdup (id);
  r->files = g_ptr_array_new_with_free_func (file_free);
  g_ptr_array_add (hub->repos, r);
  return r;
}

void
hzt_hub_add_file (HztHub *hub, const char *repo, const char *path, GBytes *data, guint flags,
                  gsize cut_at)
{
  g_assert_null (hub->thread);
  HztFile *f = g_new0 (HztFile, 1);
  f->path = g_strdup (path);
  f->data = g_bytes_ref (data);
  f->flags = flags;
  f->cut_at = cut_at;
  f->sha256 = hzt_sha256 (data);
  gsize n;
  const guint8 *d = g_bytes_get_data (data, &n);
  f->git_oid = git_blob_oid (d, n);
  /* the git blob the repository holds for an LFS file is its pointer */
  g_autofree char *pointer = g_strdup_printf ("version https://git-lfs.github.com/spec/v1\n"
                                              "oid sha256:%s\nsize %" G_GSIZE_FORMAT "\n",
                                              f->sha256, n);
  f->pointer_size = strlen (pointer);
  f->pointer_oid = git_blob_oid (pointer, f->pointer_size);
  if (flags & HZT_CORRUPT)
    {
      guint8 *bad = g_memdup2 (d, n);
      bad[n / 2] ^= 0x5a;
      f->served = g_bytes_new_take (bad, n);
    }
  else
    f->served = g_bytes_ref (data);
  g_ptr_array_add (find_repo (hub, repo, TRUE)->files, f);
}

void
hzt_hub_set_gated (HztHub *hub, const char *repo)
{
  find_repo (hub, repo, TRUE)->gated = TRUE;
}

void
hzt_hub_set_tree_page (HztHub *hub, guint n)
{
  hub->tree_page = n;
}

void
hzt_hub_set_throttle (HztHub *hub, gsize chunk, guint interval_ms)
{
  hub->chunk = chunk;
  hub->interval_ms = interval_ms;
}

void
hzt_hub_fail_first (HztHub *hub, HztFail how)
{
  g_assert_null (hub->thread);
  hub->fail_first = how;
}

/* ----------------------------------------------------------------- replies */

static HztRequest *
record (HztHub *hub, SoupServerMessage *msg, gboolean cdn)
{
  GUri *uri = soup_server_message_get_uri (msg);
  SoupMessageHeaders *h = soup_server_message_get_request_headers (msg);
  HztRequest *r = g_new0 (HztRequest, 1);
  r->cdn = cdn;
  r->path = g_strdup (g_uri_get_path (uri));
  r->query = g_strdup (g_uri_get_query (uri));
  r->range = g_strdup (soup_message_headers_get_one (h, "Range"));
  r->auth = soup_message_headers_get_one (h, "Authorization") != NULL;
  g_mutex_lock (&hub->lock);
  g_ptr_array_add (hub->requests, r);
  g_mutex_unlock (&hub->lock);
  return r;
}

static void
set_status (SoupServerMessage *msg, HztRequest *r, guint status)
{
  soup_server_message_set_status (msg, status, NULL);
  r->status = status;   /* read by the test only after the client finished */
}

/* Replays fixture `name` (an HTTP/1.1 response): its status, its headers except the ones
 * the caller fills and Connection/Content-Length, and its body when `with_body`. */
static void
replay (HztHub *hub, SoupServerMessage *msg, HztRequest *r, const char *name, gboolean with_body)
{
  g_autofree char *path = fixture_path (hub, name);
  g_autofree char *text = NULL;
  gsize len;
  g_assert_true (g_file_get_contents (path, &text, &len, NULL));
  const char *end = strstr (text, "\r\n\r\n");
  g_assert_nonnull (end);
  SoupMessageHeaders *fh = soup_message_headers_new (SOUP_MESSAGE_HEADERS_RESPONSE);
  guint status = 0;
  g_assert_true (soup_headers_parse_response (text, (int) (end - text) + 4, fh, NULL, &status, NULL));
  SoupMessageHeaders *out = soup_server_message_get_response_headers (msg);
  static const char *const skip[] = { "Location", "X-Linked-Size", "X-Linked-ETag", "ETag",
                                      "X-Repo-Commit", "Content-Length", "Connection", NULL };
  SoupMessageHeadersIter it;
  const char *k, *v;
  soup_message_headers_iter_init (&it, fh);
  while (soup_message_headers_iter_next (&it, &k, &v))
    {
      gboolean skipped = FALSE;
      for (int i = 0; skip[i] && !skipped; i++)
        skipped = g_ascii_strcasecmp (k, skip[i]) == 0;
      if (!skipped)
        soup_message_headers_append (out, k, v);
    }
  soup_message_headers_unref (fh);
  set_status (msg, r, status);
  const char *body = end + 4;
  /* a copy: set_response replaces the header that the pointer would point into */
  g_autofree char *ctype = g_strdup (soup_message_headers_get_one (out, "Content-Type"));
  if (with_body)
    soup_server_message_set_response (msg, ctype ? ctype : "text/plain", SOUP_MEMORY_COPY, body,
                                      len - (gsize) (body - text));
}

static void
reply_json (SoupServerMessage *msg, HztRequest *r, const char *json)
{
  set_status (msg, r, 200);
  soup_server_message_set_response (msg, "application/json; charset=utf-8", SOUP_MEMORY_COPY,
                                    json, strlen (json));
}

/* GET /api/models?search=... : the recorded search reply */
static void
handle_search (HztHub *hub, SoupServerMessage *msg, HztRequest *r)
{
  g_autofree char *path = fixture_path (hub, "search-gguf.json");
  g_autofree char *json = NULL;
  g_assert_true (g_file_get_contents (path, &json, NULL, NULL));
  reply_json (msg, r, json);
}

static JsonNode *
tree_entry (HztHub *hub, const HztFile *f)
{
  JsonObject *o = json_object_new ();
  gsize n = g_bytes_get_size (f->data);
  /* the recorded entry's members, in its order, with this file's values */
  GList *members = json_object_get_members (hub->tree_template);
  for (GList *m = members; m; m = m->next)
    {
      const char *k = m->data;
      if (strcmp (k, "type") == 0)
        json_object_set_string_member (o, k, "file");
      else if (strcmp (k, "oid") == 0)
        json_object_set_string_member (o, k, f->flags & HZT_LFS ? f->pointer_oid : f->git_oid);
      else if (strcmp (k, "size") == 0)
        json_object_set_int_member (o, k, (gint64) n);
      else if (strcmp (k, "path") == 0)
        json_object_set_string_member (o, k, f->path);
      else if (strcmp (k, "lfs") == 0 && (f->flags & HZT_LFS))
        {
          JsonObject *lfs = json_object_new ();
          json_object_set_string_member (lfs, "oid", f->sha256);
          json_object_set_int_member (lfs, "size", (gint64) n);
          json_object_set_int_member (lfs, "pointerSize", (gint64) f->pointer_size);
          json_object_set_object_member (o, "lfs", lfs);
        }
    }
  g_list_free (members);
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);
  json_node_take_object (node, o);
  return node;
}

/* GET /api/models/{repo}/tree/{rev}?recursive=true[&cursor=N] */
static void
handle_tree (HztHub *hub, SoupServerMessage *msg, HztRequest *r, HztRepo *repo, GHashTable *query)
{
  const char *cursor = query ? g_hash_table_lookup (query, "cursor") : NULL;
  guint start = cursor ? (guint) g_ascii_strtoull (cursor, NULL, 10) : 0;
  guint end = hub->tree_page ? MIN (start + hub->tree_page, repo->files->len) : repo->files->len;
  g_autoptr (JsonArray) arr = json_array_new ();
  for (guint i = start; i < end; i++)
    json_array_add_element (arr, tree_entry (hub, repo->files->pdata[i]));
  g_autoptr (JsonNode) root = json_node_new (JSON_NODE_ARRAY);
  json_node_set_array (root, arr);
  g_autofree char *json = json_to_string (root, FALSE);
  if (end < repo->files->len)
    {
      g_autofree char *link = g_strdup_printf ("<http://127.0.0.1:%u%s?recursive=true&cursor=%u>; "
                                               "rel=\"next\"", hub->hub_port, r->path, end);
      soup_message_headers_replace (soup_server_message_get_response_headers (msg), "Link", link);
    }
  reply_json (msg, r, json);
}

/* ----------------------------------------------------------------- streamed bodies */

typedef struct {
  HztHub            *hub;
  SoupServerMessage *msg;
  GBytes            *data;
  gsize              pos, end, cut_at;   /* cut_at 0: none */
  gboolean           stall, waiting, finished;
  GSource           *timer;
} Stream;

static void
stream_free (gpointer p)
{
  Stream *s = p;
  if (s->timer)
    {
      g_source_destroy (s->timer);
      g_source_unref (s->timer);
    }
  g_bytes_unref (s->data);
  g_free (s);
}

static gboolean
stream_tick (gpointer p)
{
  Stream *s = p;
  if (s->finished || s->waiting)
    return G_SOURCE_CONTINUE;
  SoupMessageBody *body = soup_server_message_get_response_body (s->msg);
  if (s->pos == s->end)
    {
      soup_message_body_complete (body);
      soup_server_message_unpause (s->msg);
      g_clear_pointer (&s->timer, g_source_unref);
      return G_SOURCE_REMOVE;
    }
  if (s->cut_at && s->pos == s->cut_at)
    {
      if (!s->stall)   /* cut: the client sees the connection end mid-body */
        g_socket_shutdown (soup_server_message_get_socket (s->msg), TRUE, TRUE, NULL);
      g_clear_pointer (&s->timer, g_source_unref);
      return G_SOURCE_REMOVE;   /* stall: nothing more is ever sent */
    }
  gsize limit = s->cut_at ? s->cut_at : s->end;
  gsize n = MIN (s->hub->chunk, limit - s->pos);
  g_autoptr (GBytes) chunk = g_bytes_new_from_bytes (s->data, s->pos, n);
  soup_message_body_append_bytes (body, chunk);   /* takes its own reference */
  s->pos += n;
  s->waiting = TRUE;
  soup_server_message_unpause (s->msg);
  return G_SOURCE_CONTINUE;
}

static void
on_wrote_chunk (SoupServerMessage *msg, gpointer p)
{
  ((Stream *) p)->waiting = FALSE;   /* flow control: one chunk in flight */
}

static void
on_finished (SoupServerMessage *msg, gpointer p)
{
  ((Stream *) p)->finished = TRUE;
}

/* 200 / 206 / 416 for `f` as Range asks, streamed with the file's failures. */
static void
serve_bytes (HztHub *hub, SoupServerMessage *msg, HztRequest *r, HztFile *f)
{
  SoupMessageHeaders *h = soup_server_message_get_response_headers (msg);
  gsize size = g_bytes_get_size (f->served);
  guint64 start = 0;
  soup_message_headers_replace (h, "Accept-Ranges", "bytes");
  if (r->range && !(f->flags & HZT_NO_RANGES))
    {
      g_assert_true (g_str_has_prefix (r->range, "bytes=") && g_str_has_suffix (r->range, "-"));
      start = g_ascii_strtoull (r->range + 6, NULL, 10);
      if (start >= size)
        {
          g_autofree char *cr = g_strdup_printf ("bytes */%" G_GSIZE_FORMAT, size);
          soup_message_headers_replace (h, "Content-Range", cr);
          set_status (msg, r, 416);
          return;
        }
      soup_message_headers_set_content_range (h, (goffset) start, (goffset) size - 1,
                                              (goffset) size);
      set_status (msg, r, 206);
    }
  else
    set_status (msg, r, 200);
  soup_message_headers_set_content_type (h, "application/octet-stream", NULL);
  soup_message_headers_set_content_length (h, (goffset) (size - start));
  Stream *s = g_new0 (Stream, 1);
  s->hub = hub;
  s->msg = msg;
  s->data = g_bytes_ref (f->served);
  s->pos = start;
  s->end = size;
  if ((f->flags & (HZT_CUT_ONCE | HZT_STALL_ONCE)) && !f->cut_done && f->cut_at > start &&
      f->cut_at < size)
    {
      f->cut_done = TRUE;
      s->cut_at = f->cut_at;
      s->stall = (f->flags & HZT_STALL_ONCE) != 0;
    }
  SoupMessageBody *body = soup_server_message_get_response_body (msg);
  soup_message_body_set_accumulate (body, FALSE);
  g_object_set_data_full (G_OBJECT (msg), "hzt-stream", s, stream_free);
  g_signal_connect (msg, "wrote-chunk", G_CALLBACK (on_wrote_chunk), s);
  g_signal_connect (msg, "finished", G_CALLBACK (on_finished), s);
  soup_server_message_pause (msg);
  s->timer = g_timeout_source_new (hub->interval_ms);
  g_source_set_callback (s->timer, stream_tick, s, NULL);
  g_source_attach (s->timer, g_main_context_get_thread_default ());
}

/* ----------------------------------------------------------------- routing */

static HztFile *
find_file (HztRepo *repo, const char *path)
{
  for (guint i = 0; repo && i < repo->files->len; i++)
    if (strcmp (((HztFile *) repo->files->pdata[i])->path, path) == 0)
      return repo->files->pdata[i];
  return NULL;
}

static gboolean
authorized (SoupServerMessage *msg)
{
  const char *a = soup_message_headers_get_one (soup_server_message_get_request_headers (msg),
                                                "Authorization");
  return a && strcmp (a, "Bearer " HZT_TOKEN) == 0;
}

/* GET /{owner}/{name}/resolve/{rev}/{path} */
static void
handle_resolve (HztHub *hub, SoupServerMessage *msg, HztRequest *r, HztRepo *repo,
                const char *file_path)
{
  if (!repo)
    {
      replay (hub, msg, r, "error-repo-not-found.http", TRUE);
      return;
    }
  if (repo->gated && !authorized (msg))
    {
      replay (hub, msg, r, "error-gated.http", TRUE);
      return;
    }
  HztFile *f = find_file (repo, file_path);
  if (!f)
    {
      replay (hub, msg, r, "error-entry-not-found.http", TRUE);
      return;
    }
  if ((f->flags & HZT_503_ALWAYS) || ((f->flags & HZT_503_ONCE) && !f->fail_done))
    {
      f->fail_done = TRUE;
      set_status (msg, r, 503);
      soup_server_message_set_response (msg, "text/plain", SOUP_MEMORY_STATIC,
                                        "Service Unavailable", 19);
      return;
    }
  SoupMessageHeaders *h = soup_server_message_get_response_headers (msg);
  soup_message_headers_replace (h, "X-Repo-Commit", HZT_COMMIT);
  if (!(f->flags & HZT_LFS))
    {
      replay (hub, msg, r, "resolve-plain.http", FALSE);
      g_autofree char *etag = g_strdup_printf ("\"%s\"", f->git_oid);
      soup_message_headers_replace (h, "ETag", etag);
      serve_bytes (hub, msg, r, f);
      return;
    }
  replay (hub, msg, r, "resolve-lfs.http", FALSE);
  g_autofree char *etag = g_strdup_printf ("\"%s\"", f->sha256);
  g_autofree char *size = g_strdup_printf ("%" G_GSIZE_FORMAT, g_bytes_get_size (f->data));
  /* /repos/REPO-INDEX/FILE-INDEX/SHA256: files of equal contents in two repositories (one
   * served corrupted) stay apart */
  guint ri = 0, fi = 0;
  g_assert_true (g_ptr_array_find (hub->repos, repo, &ri) && g_ptr_array_find (repo->files, f, &fi));
  g_autofree char *loc = g_strdup_printf ("http://127.0.0.1:%u/repos/%u/%u/%s?Expires=1747044891"
                                          "&Signature=Zm9v&Key-Pair-Id=K24J24Z295AEI9",
                                          hub->cdn_port, ri, fi, f->sha256);
  soup_message_headers_replace (h, "ETag", etag);
  soup_message_headers_replace (h, "X-Linked-ETag", etag);
  soup_message_headers_replace (h, "X-Linked-Size", size);
  soup_message_headers_replace (h, "Location", loc);
}

/* Fails `msg` as `how` (hzt_hub_fail_first). A cut or stalled message stays paused until
 * the client goes or hzt_hub_free() disconnects it; its recorded status stays 0. */
static void
fail_request (SoupServerMessage *msg, HztRequest *r, HztFail how)
{
  if (how == HZT_FAIL_503)
    {
      set_status (msg, r, 503);
      soup_server_message_set_response (msg, "text/plain", SOUP_MEMORY_STATIC,
                                        "Service Unavailable", 19);
      return;
    }
  soup_server_message_pause (msg);
  if (how == HZT_FAIL_CUT)
    g_socket_shutdown (soup_server_message_get_socket (msg), TRUE, TRUE, NULL);
}

static void
hub_handler (SoupServer *server, SoupServerMessage *msg, const char *path, GHashTable *query,
             gpointer p)
{
  HztHub *hub = p;
  HztRequest *r = record (hub, msg, FALSE);
  soup_message_headers_replace (soup_server_message_get_response_headers (msg), "Connection",
                                "close");
  if (hub->fail_first != HZT_FAIL_NONE)
    {
      fail_request (msg, r, hub->fail_first);
      hub->fail_first = HZT_FAIL_NONE;
      return;
    }
  if (strcmp (r->path, "/api/models") == 0)
    {
      handle_search (hub, msg, r);
      return;
    }
  g_auto (GStrv) parts = g_strsplit (r->path + 1, "/", 0);
  guint n = g_strv_length (parts);
  if (n >= 6 && strcmp (parts[0], "api") == 0 && strcmp (parts[1], "models") == 0 &&
      strcmp (parts[4], "tree") == 0)
    {
      g_autofree char *id = g_strdup_printf ("%s/%s", parts[2], parts[3]);
      HztRepo *repo = find_repo (hub, id, FALSE);
      if (!repo)
        replay (hub, msg, r, "error-repo-not-found.http", TRUE);
      else
        handle_tree (hub, msg, r, repo, query);
      return;
    }
  if (n >= 5 && strcmp (parts[2], "resolve") == 0)
    {
      g_autofree char *id = g_strdup_printf ("%s/%s", parts[0], parts[1]);
      g_autofree char *joined = g_strjoinv ("/", parts + 4);
      g_autofree char *file = g_uri_unescape_string (joined, NULL);
      handle_resolve (hub, msg, r, find_repo (hub, id, FALSE), file);
      return;
    }
  set_status (msg, r, 404);
}

static void
cdn_handler (SoupServer *server, SoupServerMessage *msg, const char *path, GHashTable *query,
             gpointer p)
{
  HztHub *hub = p;
  HztRequest *r = record (hub, msg, TRUE);
  soup_message_headers_replace (soup_server_message_get_response_headers (msg), "Connection",
                                "close");
  guint ri = 0, fi = 0;
  char sha[65] = "";
  if (sscanf (r->path, "/repos/%u/%u/%64s", &ri, &fi, sha) == 3 && ri < hub->repos->len)
    {
      HztRepo *repo = hub->repos->pdata[ri];
      HztFile *f = fi < repo->files->len ? repo->files->pdata[fi] : NULL;
      if (f && (f->flags & HZT_LFS) && strcmp (f->sha256, sha) == 0)
        {
          serve_bytes (hub, msg, r, f);
          return;
        }
    }
  set_status (msg, r, 404);
}

static guint
listen_one (SoupServer *server)
{
  g_autoptr (GError) error = NULL;
  g_assert_true (soup_server_listen_local (server, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error));
  g_assert_no_error (error);
  GSList *uris = soup_server_get_uris (server);
  guint port = (guint) g_uri_get_port (uris->data);
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);
  return port;
}

static guint
setup (gpointer p)
{
  HztHub *hub = p;
  hub->hub = soup_server_new ("server-header", "hzt-hub", NULL);
  hub->cdn = soup_server_new ("server-header", "hzt-cdn", NULL);
  soup_server_add_handler (hub->hub, NULL, hub_handler, hub, NULL);
  soup_server_add_handler (hub->cdn, NULL, cdn_handler, hub, NULL);
  hub->cdn_port = listen_one (hub->cdn);
  hub->hub_port = listen_one (hub->hub);
  return hub->hub_port;
}

static gboolean
teardown (gpointer p)
{
  HztHub *hub = p;
  soup_server_disconnect (hub->hub);
  soup_server_disconnect (hub->cdn);
  g_clear_object (&hub->hub);
  g_clear_object (&hub->cdn);
  return G_SOURCE_REMOVE;
}

void
hzt_hub_start (HztHub *hub)
{
  hub->thread = hzt_server_start (setup, hub);
}

char *
hzt_hub_url (HztHub *hub)
{
  return hzt_url (hub->hub_port);
}

GPtrArray *
hzt_hub_requests (HztHub *hub)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (request_free);
  g_mutex_lock (&hub->lock);
  for (guint i = 0; i < hub->requests->len; i++)
    {
      const HztRequest *r = hub->requests->pdata[i];
      HztRequest *c = g_new0 (HztRequest, 1);
      *c = *r;
      c->path = g_strdup (r->path);
      c->query = g_strdup (r->query);
      c->range = g_strdup (r->range);
      g_ptr_array_add (out, c);
    }
  g_mutex_unlock (&hub->lock);
  return out;
}

void
hzt_hub_free (HztHub *hub)
{
  if (hub->thread)
    hzt_server_stop (hub->thread, teardown, hub);
  g_ptr_array_unref (hub->repos);
  g_ptr_array_unref (hub->requests);
  json_object_unref (hub->tree_template);
  g_free (hub->fixtures);
  g_mutex_clear (&hub->lock);
  g_free (hub);
}

void
hzt_hub_assert_log (HztHub *hub, HzStore *store)
{
  g_autoptr (GPtrArray) reqs = hzt_hub_requests (hub);
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) rows = hz_store_list_egress_log (store, 0, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (rows->len, ==, reqs->len);
  const char *download_subject = NULL;
  for (guint i = 0; i < reqs->len; i++)
    {
      const HztRequest *r = reqs->pdata[i];
      const HzEgressLogEntry *e = rows->pdata[i];
      /* the server sees the path decoded (libsoup), the query as sent */
      g_autoptr (GUri) logged = g_uri_parse (e->endpoint, G_URI_FLAGS_ENCODED_QUERY, NULL);
      g_assert_nonnull (logged);
      g_assert_cmpstr (g_uri_get_path (logged), ==, r->path);
      g_assert_cmpstr (g_uri_get_query (logged), ==, r->cdn ? NULL : r->query);
      g_assert_cmpint (e->direction, ==, HZ_EGRESS_DOWNLOAD);
      g_assert_null (e->release_id);
      /* what it was for: the search text, the repository, the file "repo/path" (the CDN
       * hops too, whose URL names neither) */
      g_assert_nonnull (e->subject);
      if (r->cdn || strstr (r->path, "/resolve/"))
        {
          g_assert_cmpint (e->purpose, ==, HZ_EGRESS_PURPOSE_MODEL_DOWNLOAD);
          if (r->cdn)   /* a redirect hop: the subject of the request it came from */
            g_assert_cmpstr (e->subject, ==, download_subject);
          else
            {
              /* "owner/name/file" of "/owner/name/resolve/REV/file" */
              g_auto (GStrv) parts = g_strsplit (e->subject, "/", 3);
              g_assert_cmpuint (g_strv_length (parts), ==, 3);
              g_autofree char *prefix = g_strdup_printf ("/%s/%s/resolve/", parts[0], parts[1]);
              g_autofree char *suffix = g_strconcat ("/", parts[2], NULL);
              g_assert_true (g_str_has_prefix (r->path, prefix));
              g_assert_true (g_str_has_suffix (r->path, suffix));
              download_subject = e->subject;
            }
        }
      else if (g_str_has_prefix (r->path, "/api/models/"))
        {
          g_assert_cmpint (e->purpose, ==, HZ_EGRESS_PURPOSE_MODEL_FILES);
          g_assert_true (g_str_has_prefix (r->path + strlen ("/api/models/"), e->subject));
        }
      else
        g_assert_cmpint (e->purpose, ==, HZ_EGRESS_PURPOSE_MODEL_SEARCH);
      g_assert_cmpfloat (e->epsilon, ==, 0.0);
      /* a request cut short by a kill has no status from the client's side */
      if (r->status && e->http_status)
        g_assert_cmpint (e->http_status, ==, (int) r->status);
    }
}
