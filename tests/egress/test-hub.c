/* The Hugging Face Hub download channel (egress/hub.h, issue 27) against the loopback Hub
 * of hub-server.c, which replays the reply shapes of tests/egress/hub-fixtures/: validated
 * requests, search and tree replies (paged), a download through the CDN redirect (the token
 * only to the Hub), resume with Range (206), a server that ignores Range (200), a stale
 * .part, gated (401) and unknown (404, RepoNotFound) repositories, a connection cut
 * mid-file, a stalled server, 5xx, a wrong SHA-256 (never renamed into place), no free
 * space, a split set placed only whole, an existing target, cancellation. In every case
 * the egress log holds exactly the requests the server saw. The served model is the real
 * ../shared/models/stories260K.gguf (1.2 MB). */
#include <glib/gstdio.h>
#include <string.h>
#include "hub.h"
#include "hub-select.h"
#include "hub-server.h"
#include "egress-test-util.h"
#include "../hz-test-util.h"

#define REPO "hanzo-test/stories260K-GGUF"
#define FILE_F32 "stories260K-F32.gguf"

/* Fast retry policy: 3 attempts, 50..200 ms backoff, 1 s I/O timeout. */
static const HzEgressRetry fast = { 3, 50, 200, 1 };

typedef struct {
  HztHub  *srv;
  HzStore *store;
  HzHub   *hub;
  char    *dir;     /* the download folder */
  GBytes  *model;   /* stories260K.gguf */
  char    *sha;     /* its sha256 */
} F;

static GBytes *
model_or_skip (void)
{
  g_autofree char *path = hz_test_shared_path ("models/stories260K.gguf");
  if (!path)
    return NULL;
  g_autoptr (GMappedFile) mf = g_mapped_file_new (path, FALSE, NULL);
  g_assert_nonnull (mf);
  return g_mapped_file_get_bytes (mf);
}

/* A server with no files yet (add them, then f_start). FALSE: skipped. */
static gboolean
f_init (F *f)
{
  memset (f, 0, sizeof *f);
  if (!(f->model = model_or_skip ()))
    return FALSE;
  f->sha = hzt_sha256 (f->model);
  f->srv = hzt_hub_new ();
  g_autoptr (GError) error = NULL;
  f->dir = g_dir_make_tmp ("hz-hub-XXXXXX", &error);
  g_assert_no_error (error);
  f->store = hzt_tmp_store ();
  return TRUE;
}

static void
f_start (F *f, const char *token)
{
  hzt_hub_start (f->srv);
  g_autofree char *url = hzt_hub_url (f->srv);
  g_autoptr (GError) error = NULL;
  f->hub = hz_hub_new (url, token, f->store, &error);
  g_assert_no_error (error);
  hz_hub_set_retry (f->hub, &fast);
}

static char *
f_path (F *f, const char *name)
{
  return g_build_filename (f->dir, name, NULL);
}

static int
cmp_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* The names in the download folder, sorted, joined with spaces ("" when empty). */
static char *
f_listing (F *f)
{
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GDir) d = g_dir_open (f->dir, 0, NULL);
  const char *e;
  while ((e = g_dir_read_name (d)))
    g_ptr_array_add (names, g_strdup (e));
  g_ptr_array_sort (names, cmp_names);
  g_ptr_array_add (names, NULL);
  return g_strjoinv (" ", (char **) names->pdata);
}

static void
f_clear (F *f)
{
  if (!f->model)
    return;
  hzt_hub_assert_log (f->srv, f->store);
  hz_hub_free (f->hub);
  hzt_hub_free (f->srv);
  hz_store_close (f->store);
  g_autoptr (GDir) d = g_dir_open (f->dir, 0, NULL);
  const char *e;
  while ((e = g_dir_read_name (d)))
    {
      g_autofree char *p = f_path (f, e);
      g_unlink (p);
    }
  g_rmdir (f->dir);
  g_free (f->dir);
  g_free (f->sha);
  g_bytes_unref (f->model);
}

/* A set of one file of REPO with what the tree says it is. */
static GPtrArray *
refs_of (const char *path, guint64 size, const char *sha256)
{
  g_autoptr (GError) error = NULL;
  GPtrArray *refs = g_ptr_array_new_with_free_func ((GDestroyNotify) hz_hub_file_ref_free);
  HzHubFileRef *ref = hz_hub_file_ref_new (REPO, NULL, path, &error);
  g_assert_no_error (error);
  g_assert_true (hz_hub_file_ref_set_expected (ref, size, sha256, NULL, &error));
  g_ptr_array_add (refs, ref);
  return refs;
}

static gboolean
download (F *f, GPtrArray *refs, GError **error)
{
  gboolean ok = hz_hub_download (f->hub, refs, f->dir, NULL, NULL, NULL, NULL, error);
  if (!ok)
    g_test_message ("download: %s", (*error)->message);
  return ok;
}

static void
assert_file_is (F *f, const char *name, GBytes *want)
{
  g_autofree char *p = f_path (f, name);
  g_autofree char *got = NULL;
  gsize len;
  g_assert_true (g_file_get_contents (p, &got, &len, NULL));
  g_assert_cmpmem (got, len, g_bytes_get_data (want, NULL), g_bytes_get_size (want));
}

/* Writes the first `n` bytes of `data` (or `n` bytes of junk) as NAME.part. */
static void
write_part (F *f, const char *name, GBytes *data, gsize n, gboolean junk)
{
  g_autofree char *part = g_strconcat (name, ".part", NULL);
  g_autofree char *p = f_path (f, part);
  g_autofree guint8 *buf = g_memdup2 (g_bytes_get_data (data, NULL), n);
  if (junk)
    memset (buf, 0x42, n);
  g_assert_true (g_file_set_contents (p, (const char *) buf, (gssize) n, NULL));
}

/* The i-th request the server saw. */
static HztRequest *
req (GPtrArray *reqs, guint i)
{
  g_assert_cmpuint (i, <, reqs->len);
  return reqs->pdata[i];
}

/* ---------------------------------------------------------------- no network */

static void
test_validation (void)
{
  static const char *const good_repos[] = { "TheBloke/TinyLlama-1.1B-Chat-v1.0-GGUF",
                                            "bartowski/Llama-3.2-1B-Instruct-GGUF", "a/b",
                                            "Qwen/Qwen2.5-0.5B-Instruct-GGUF", "u_1/m.x", NULL };
  static const char *const bad_repos[] = { "", "a", "/a", "a/", "a/b/c", "../a", "a/..",
                                           "a/b?x=1", "a/b#c", "a//b", "a/.b", "a/b.", "a--b/c",
                                           "a/b..c", "a/b.git", "é/b", "a b/c", "a/b%2e",
                                           "a/bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
                                           "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", NULL };
  for (int i = 0; good_repos[i]; i++)
    g_assert_true (hz_hub_repo_id_is_valid (good_repos[i]));
  for (int i = 0; bad_repos[i]; i++)
    {
      g_assert_false (hz_hub_repo_id_is_valid (bad_repos[i]));
      g_autoptr (GError) error = NULL;
      g_assert_null (hz_hub_file_ref_new (bad_repos[i], NULL, "x.gguf", &error));
      g_assert_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_INVALID);
    }
  static const char *const good_paths[] = { "model.gguf", "Q4_K_M/m-00001-of-00002.gguf",
                                            ".gitattributes", "a b (1).gguf", NULL };
  static const char *const bad_paths[] = { "", "/etc/passwd", "../x", "a/../b", "a/./b", "a//b",
                                           "a/", "a?b", "a#b", "a%2e%2e", "a\\b", "a\nb",
                                           "a\"b", "résumé.gguf", NULL };
  for (int i = 0; good_paths[i]; i++)
    g_assert_true (hz_hub_path_is_valid (good_paths[i]));
  for (int i = 0; bad_paths[i]; i++)
    g_assert_false (hz_hub_path_is_valid (bad_paths[i]));
  static const char *const good_revs[] = { "main", "refs/pr/1", "v1.0", HZT_COMMIT, NULL };
  static const char *const bad_revs[] = { "", "..", "a/../b", "-x", ".x", "/main", "main/",
                                          "a//b", "main?x", "ma in", NULL };
  for (int i = 0; good_revs[i]; i++)
    g_assert_true (hz_hub_revision_is_valid (good_revs[i]));
  for (int i = 0; bad_revs[i]; i++)
    g_assert_false (hz_hub_revision_is_valid (bad_revs[i]));

  /* endpoints and tokens; digests */
  g_autoptr (HzStore) store = hzt_tmp_store ();
  static const char *const bad_endpoints[] = { "http://example.org", "ftp://127.0.0.1",
                                               "https://h/?q=1", "https://u:p@h", "nonsense", NULL };
  for (int i = 0; bad_endpoints[i]; i++)
    {
      g_autoptr (GError) error = NULL;
      g_assert_null (hz_hub_new (bad_endpoints[i], NULL, store, &error));
      g_assert_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_INVALID);
    }
  g_autoptr (GError) error = NULL;
  g_assert_null (hz_hub_new ("https://huggingface.co", "hf_a b", store, &error));
  g_assert_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_INVALID);
  g_clear_error (&error);
  g_autoptr (HzHub) hub = hz_hub_new ("https://hf-mirror.example/", NULL, store, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (hz_hub_get_endpoint (hub), ==, "https://hf-mirror.example");
  g_autoptr (HzHubFileRef) ref = hz_hub_file_ref_new ("a/b", NULL, "m.gguf", &error);
  g_assert_cmpstr (hz_hub_file_ref_get_revision (ref), ==, "main");
  g_assert_false (hz_hub_file_ref_set_expected (ref, 1, "abc", NULL, &error));
  g_assert_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_INVALID);
  g_clear_error (&error);
  /* searches: only letters, digits, space and ._-+/ */
  static const char *const bad_queries[] = { "", "a&b", "a=b", "a#b", "a?b", "a%20b", "a\nb",
                                             "ééé", NULL };
  for (int i = 0; bad_queries[i]; i++)
    {
      g_assert_null (hz_hub_search (hub, bad_queries[i], 5, NULL, &error));
      g_assert_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_INVALID);
      g_clear_error (&error);
    }
  g_autofree char *long_q = g_strnfill (HZ_HUB_MAX_QUERY + 1, 'a');
  g_assert_null (hz_hub_search (hub, long_q, 5, NULL, &error));
  g_assert_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_INVALID);
  g_clear_error (&error);
  /* nothing was sent for any of them */
  g_autoptr (GPtrArray) rows = hz_store_list_egress_log (store, 0, 0, &error);
  g_assert_cmpuint (rows->len, ==, 0);
  hz_hub_free (g_steal_pointer (&hub));
  hz_store_close (g_steal_pointer (&store));
}

static GBytes *
fixture (const char *name)
{
  g_autofree char *p = g_build_filename (g_getenv ("HZ_SOURCE_DIR"), "tests", "egress",
                                         "hub-fixtures", name, NULL);
  g_autofree char *data = NULL;
  gsize len;
  g_assert_true (g_file_get_contents (p, &data, &len, NULL));
  return g_bytes_new_take (g_steal_pointer (&data), len);
}

static GPtrArray *
parse_tree_fixture (const char *name)
{
  g_autoptr (GBytes) b = fixture (name);
  g_autoptr (GError) error = NULL;
  GPtrArray *files = g_ptr_array_new_with_free_func ((GDestroyNotify) hz_hub_file_free);
  gsize len;
  const char *d = g_bytes_get_data (b, &len);
  g_assert_true (hz_hub_parse_tree_reply (d, len, files, &error));
  g_assert_no_error (error);
  return files;
}

static void
test_fixtures (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) sb = fixture ("search-gguf.json");
  g_autoptr (GPtrArray) models = NULL;
  gsize len;
  const char *d = g_bytes_get_data (sb, &len);
  g_assert_true (hz_hub_parse_search_reply (d, len, &models, &error));
  g_assert_cmpuint (models->len, ==, 5);
  const HzHubModel *m0 = models->pdata[0], *m1 = models->pdata[1];
  g_assert_cmpstr (m0->id, ==, "bartowski/Llama-3.2-1B-Instruct-GGUF");
  g_assert_cmpint (m0->downloads, ==, 112873);
  g_assert_cmpint (m0->likes, ==, 131);
  g_assert_cmpstr (m0->last_modified, ==, "2024-10-07T14:24:05.000Z");
  g_assert_null (m0->gated);
  g_assert_cmpstr (m1->gated, ==, "manual");

  g_autoptr (GPtrArray) files = parse_tree_fixture ("tree-llama-3.2-1b-instruct-gguf.json");
  g_assert_cmpuint (files->len, ==, 8);
  const HzHubFile *attrs = files->pdata[0], *q4 = files->pdata[3];
  g_assert_cmpstr (attrs->path, ==, ".gitattributes");
  g_assert_null (attrs->sha256);
  g_assert_cmpstr (attrs->git_oid, ==, "0bc1fd2a0a4c09a0cba5dd9b5ac4ffaf3d9a1f95");
  g_assert_cmpstr (q4->path, ==, "Llama-3.2-1B-Instruct-Q4_K_M.gguf");
  g_assert_cmpuint (q4->size, ==, 807694464);
  g_assert_cmpstr (q4->sha256, ==, "6f85a640a97cf2bf5b8e764087b1e83da0fdb51d7c9fab7d0fece9385611df83");
  /* the default choice: Q4_K_M, said why */
  g_autoptr (HzHubChoice) c = hz_hub_choose (files, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (c->quant, ==, "Q4_K_M");
  g_assert_true (g_ptr_array_index (c->files, 0) == q4);
  g_assert_nonnull (strstr (c->why, "usual balance"));
  g_test_message ("default: %s", c->why);
  g_autofree char *quants = hz_hub_list_quants (files);
  g_assert_cmpstr (quants, ==, "Q8_0, Q4_K_M, Q4_K_S, IQ4_XS, F16");
  g_autoptr (HzHubChoice) c8 = hz_hub_choose (files, "q8_0", NULL, &error);
  g_assert_cmpstr (((HzHubFile *) c8->files->pdata[0])->path, ==, "Llama-3.2-1B-Instruct-Q8_0.gguf");
  g_assert_null (hz_hub_choose (files, "Q2_K", NULL, &error));
  g_assert_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, "Q8_0, Q4_K_M"));
  g_clear_error (&error);

  /* split sets in folders */
  g_autoptr (GPtrArray) split = parse_tree_fixture ("tree-split-gguf.json");
  g_assert_cmpuint (split->len, ==, 9);   /* the two directories are not files */
  g_autoptr (HzHubChoice) cs = hz_hub_choose (split, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (cs->quant, ==, "Q4_K_M");
  g_assert_cmpuint (cs->files->len, ==, 3);
  for (guint i = 0; i < 3; i++)
    {
      g_autofree char *want = g_strdup_printf ("DeepSeek-R1-Q4_K_M/DeepSeek-R1-Q4_K_M-0000%u-of-00003.gguf", i + 1);
      g_assert_cmpstr (((HzHubFile *) cs->files->pdata[i])->path, ==, want);
    }
  g_assert_cmpuint (cs->size, ==, 49385652544ull + 49611208832ull + 49971920640ull);
  g_autoptr (HzHubChoice) ci = hz_hub_choose (split, "IQ1_S", NULL, &error);
  g_assert_cmpuint (ci->files->len, ==, 4);
  /* one shard named: the whole set */
  g_autoptr (HzHubChoice) cf = hz_hub_choose (split, NULL, "DeepSeek-R1-UD-IQ1_S-00002-of-00004.gguf", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (cf->files->len, ==, 4);
  /* an incomplete set is refused when asked for, passed over by the default choice */
  g_ptr_array_remove_index (split, 2);
  g_autoptr (HzHubChoice) cd = hz_hub_choose (split, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (cd->quant, ==, "IQ1_S");
  g_assert_null (hz_hub_choose (split, "Q4_K_M", NULL, &error));
  g_assert_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_BAD_REPLY);
  g_test_message ("incomplete: %s", error->message);
  g_clear_error (&error);

  /* replies that are not what the API promises */
  static const char *const bad[] = { "", "{}", "nul", "[{\"type\":\"file\",\"path\":\"a.gguf\","
                                     "\"size\":5,\"lfs\":{\"oid\":\"xyz\",\"size\":5}}]",
                                     "[{\"type\":\"file\",\"path\":\"a.gguf\",\"size\":-1}]", NULL };
  for (int i = 0; bad[i]; i++)
    {
      g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func ((GDestroyNotify) hz_hub_file_free);
      g_assert_false (hz_hub_parse_tree_reply (bad[i], strlen (bad[i]), out, &error));
      g_assert_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_BAD_REPLY);
      g_clear_error (&error);
    }
}

static void
test_names (void)
{
  static const char *const tags[][2] = {
    { "tinyllama-1.1b-chat-v1.0.Q4_K_M.gguf", "Q4_K_M" },
    { "qwen2.5-0.5b-instruct-q4_k_m.gguf", "Q4_K_M" },
    { "Llama-3.2-1B-Instruct-f16.gguf", "F16" },
    { "gemma-3-1b-it-q4_0.gguf", "Q4_0" },
    { "Meta-Llama-3.1-8B-Instruct-IQ4_XS.gguf", "IQ4_XS" },
    { "Qwen3-30B-A3B-UD-Q4_K_XL.gguf", "Q4_K_XL" },
    { "Phi-3-mini-4k-instruct-fp16.gguf", "F16" },
    { "model-bf16.gguf", "BF16" },
    { "Q8_0/model-00001-of-00002.gguf", "Q8_0" },
    { "Llama-3.2-3B-Instruct-Q4_0_4_4.gguf", "Q4_0_4_4" },
    { "model.gguf", NULL },
    { "Qwen2-7B.gguf", NULL },
  };
  for (guint i = 0; i < G_N_ELEMENTS (tags); i++)
    {
      g_autofree char *t = hz_hub_quant_tag (tags[i][0]);
      g_assert_cmpstr (t, ==, tags[i][1]);
    }
  guint idx = 0, count = 0;
  g_autofree char *stem = NULL;
  g_assert_true (hz_hub_split_info ("Q4/m-Q4_K_M-00002-of-00003.gguf", &idx, &count, &stem));
  g_assert_cmpuint (idx, ==, 2);
  g_assert_cmpuint (count, ==, 3);
  g_assert_cmpstr (stem, ==, "Q4/m-Q4_K_M");
  g_assert_false (hz_hub_split_info ("m-00004-of-00003.gguf", &idx, &count, NULL));
  g_assert_false (hz_hub_split_info ("m-0001-of-0003.gguf", &idx, &count, NULL));
  g_assert_false (hz_hub_split_info ("m.gguf", &idx, &count, NULL));
}

/* ---------------------------------------------------------------- loopback Hub */

static void
test_search (void)
{
  F f;
  if (!f_init (&f))
    return;
  f_start (&f, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) models = hz_hub_search (f.hub, "llama 3.2", 5, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (models->len, ==, 5);
  g_autoptr (GPtrArray) reqs = hzt_hub_requests (f.srv);
  g_assert_cmpuint (reqs->len, ==, 1);
  g_assert_cmpstr (req (reqs, 0)->path, ==, "/api/models");
  g_assert_cmpstr (req (reqs, 0)->query, ==, "search=llama%203.2&filter=gguf&sort=downloads"
                   "&direction=-1&limit=5&expand=downloads&expand=likes&expand=lastModified"
                   "&expand=gated");
  g_assert_false (req (reqs, 0)->auth);
  f_clear (&f);
}

static void
test_tree_pages (void)
{
  F f;
  if (!f_init (&f))
    return;
  for (int i = 0; i < 5; i++)
    {
      g_autofree char *name = g_strdup_printf ("part%d/stories260K-Q%d_0.gguf", i, i + 2);
      hzt_hub_add_file (f.srv, REPO, name, f.model, i % 2 ? HZT_LFS : 0, 0);
    }
  hzt_hub_set_tree_page (f.srv, 2);
  f_start (&f, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) files = hz_hub_list_files (f.hub, REPO, "refs/pr/1", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (files->len, ==, 5);
  for (guint i = 0; i < 5; i++)
    {
      const HzHubFile *hf = files->pdata[i];
      g_assert_cmpuint (hf->size, ==, g_bytes_get_size (f.model));
      g_assert_cmpstr (hf->sha256, ==, i % 2 ? f.sha : NULL);
      g_assert_nonnull (hf->git_oid);
    }
  g_autoptr (GPtrArray) reqs = hzt_hub_requests (f.srv);
  g_assert_cmpuint (reqs->len, ==, 3);   /* 2 + 2 + 1 entries */
  /* the revision is one path segment, its '/' encoded (the server decodes it) */
  g_assert_cmpstr (req (reqs, 0)->path, ==, "/api/models/" REPO "/tree/refs/pr/1");
  g_autoptr (GPtrArray) rows = hz_store_list_egress_log (f.store, 0, 0, &error);
  g_assert_true (g_str_has_suffix (((HzEgressLogEntry *) rows->pdata[0])->endpoint,
                                   "/api/models/" REPO "/tree/refs%2Fpr%2F1?recursive=true"));
  g_assert_cmpstr (req (reqs, 0)->query, ==, "recursive=true");
  g_assert_cmpstr (req (reqs, 2)->query, ==, "recursive=true&cursor=4");
  f_clear (&f);
}

static void
test_download (void)
{
  F f;
  if (!f_init (&f))
    return;
  hzt_hub_add_file (f.srv, REPO, "Q/" FILE_F32, f.model, HZT_LFS, 0);
  static const char readme[] = "# stories260K\nA tiny llama for tests.\n";
  g_autoptr (GBytes) rb = g_bytes_new_static (readme, sizeof readme - 1);
  hzt_hub_add_file (f.srv, REPO, "README.md", rb, 0, 0);
  f_start (&f, HZT_TOKEN);
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) files = hz_hub_list_files (f.hub, REPO, NULL, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (GPtrArray) refs = g_ptr_array_new_with_free_func ((GDestroyNotify) hz_hub_file_ref_free);
  for (guint i = 0; i < files->len; i++)
    {
      const HzHubFile *hf = files->pdata[i];
      HzHubFileRef *ref = hz_hub_file_ref_new (REPO, NULL, hf->path, &error);
      g_assert_true (hz_hub_file_ref_set_expected (ref, hf->size, hf->sha256, hf->git_oid, &error));
      g_ptr_array_add (refs, ref);
    }
  g_autofree char *commit = NULL;
  g_assert_true (hz_hub_download (f.hub, refs, f.dir, NULL, NULL, &commit, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (commit, ==, HZT_COMMIT);
  assert_file_is (&f, FILE_F32, f.model);
  assert_file_is (&f, "README.md", rb);
  g_autofree char *names = f_listing (&f);
  g_assert_cmpstr (names, ==, "README.md " FILE_F32);   /* no .part left */

  g_autoptr (GPtrArray) reqs = hzt_hub_requests (f.srv);
  g_assert_cmpuint (reqs->len, ==, 4);   /* tree, resolve (302), CDN (200), README (200) */
  g_assert_cmpstr (req (reqs, 1)->path, ==, "/" REPO "/resolve/main/Q/" FILE_F32);
  g_assert_cmpuint (req (reqs, 1)->status, ==, 302);
  g_assert_true (req (reqs, 1)->auth);    /* the token goes to the Hub ... */
  g_assert_true (req (reqs, 2)->cdn);
  g_assert_false (req (reqs, 2)->auth);   /* ... never to the CDN, another origin */
  g_assert_null (req (reqs, 2)->range);
  g_assert_cmpuint (req (reqs, 2)->status, ==, 200);
  g_assert_cmpuint (req (reqs, 3)->status, ==, 200);
  g_autoptr (GPtrArray) rows = hz_store_list_egress_log (f.store, 0, 0, &error);
  const HzEgressLogEntry *redirect = rows->pdata[1], *body = rows->pdata[2];
  g_assert_cmpint (redirect->status, ==, HZ_EGRESS_STATUS_OK);
  g_assert_cmpstr (redirect->message, ==, "redirect to http://127.0.0.1");
  g_assert_cmpint (body->status, ==, HZ_EGRESS_STATUS_OK);
  g_assert_cmpstr (body->payload_sha256, ==, f.sha);
  g_assert_cmpint (body->bytes, ==, (gint64) g_bytes_get_size (f.model));
  g_assert_null (strstr (body->endpoint, "Signature"));   /* the CDN's query is not logged */
  f_clear (&f);
}

typedef struct {
  guint64 first_done, last_done, last_total;
  guint   calls;
  GCancellable *cancel_at;   /* cancelled once 40 % is on disk */
} Progress;

static void
on_progress (guint64 done, guint64 total, const char *file, gpointer p)
{
  Progress *pr = p;
  if (pr->calls++ == 0)
    pr->first_done = done;
  g_assert_cmpuint (done, >=, pr->last_done);
  pr->last_done = done;
  pr->last_total = total;
  if (pr->cancel_at && total && done * 10 >= total * 4)
    g_cancellable_cancel (pr->cancel_at);
}

/* A .part holding the first 40 %: one request with Range, answered 206, resumed. */
static void
test_resume (void)
{
  F f;
  if (!f_init (&f))
    return;
  gsize size = g_bytes_get_size (f.model), n = size * 2 / 5;
  hzt_hub_add_file (f.srv, REPO, FILE_F32, f.model, HZT_LFS, 0);
  f_start (&f, NULL);
  write_part (&f, FILE_F32, f.model, n, FALSE);
  g_autoptr (GPtrArray) refs = refs_of (FILE_F32, size, f.sha);
  g_autoptr (GError) error = NULL;
  Progress pr = { 0 };
  g_assert_true (hz_hub_download (f.hub, refs, f.dir, on_progress, &pr, NULL, NULL, &error));
  g_assert_no_error (error);
  assert_file_is (&f, FILE_F32, f.model);
  g_assert_cmpuint (pr.first_done, ==, n);   /* counted from the .part */
  g_assert_cmpuint (pr.last_done, ==, size);
  g_assert_cmpuint (pr.last_total, ==, size);
  g_autoptr (GPtrArray) reqs = hzt_hub_requests (f.srv);
  g_assert_cmpuint (reqs->len, ==, 2);
  g_autofree char *range = g_strdup_printf ("bytes=%" G_GSIZE_FORMAT "-", n);
  g_assert_cmpstr (req (reqs, 1)->range, ==, range);
  g_assert_cmpuint (req (reqs, 1)->status, ==, 206);
  g_autoptr (GPtrArray) rows = hz_store_list_egress_log (f.store, 0, 0, &error);
  g_assert_cmpint (((HzEgressLogEntry *) rows->pdata[1])->bytes, ==, (gint64) (size - n));
  f_clear (&f);
}

/* The server answers 200 to a Range: the .part is started over, the file still right. */
static void
test_range_ignored (void)
{
  F f;
  if (!f_init (&f))
    return;
  gsize size = g_bytes_get_size (f.model);
  hzt_hub_add_file (f.srv, REPO, FILE_F32, f.model, HZT_LFS | HZT_NO_RANGES, 0);
  f_start (&f, NULL);
  write_part (&f, FILE_F32, f.model, size / 3, FALSE);
  g_autoptr (GPtrArray) refs = refs_of (FILE_F32, size, f.sha);
  g_autoptr (GError) error = NULL;
  g_assert_true (download (&f, refs, &error));
  g_assert_no_error (error);
  assert_file_is (&f, FILE_F32, f.model);
  g_autoptr (GPtrArray) reqs = hzt_hub_requests (f.srv);
  g_assert_cmpuint (reqs->len, ==, 2);
  g_assert_nonnull (req (reqs, 1)->range);
  g_assert_cmpuint (req (reqs, 1)->status, ==, 200);
  f_clear (&f);
}

/* A .part of other bytes (an older version of the file): resumed, found wrong, downloaded
 * again from the start once, right. */
static void
test_stale_part (void)
{
  F f;
  if (!f_init (&f))
    return;
  gsize size = g_bytes_get_size (f.model), n = size * 2 / 5;
  hzt_hub_add_file (f.srv, REPO, FILE_F32, f.model, HZT_LFS, 0);
  f_start (&f, NULL);
  write_part (&f, FILE_F32, f.model, n, TRUE);
  g_autoptr (GPtrArray) refs = refs_of (FILE_F32, size, f.sha);
  g_autoptr (GError) error = NULL;
  g_assert_true (download (&f, refs, &error));
  g_assert_no_error (error);
  assert_file_is (&f, FILE_F32, f.model);
  g_autoptr (GPtrArray) reqs = hzt_hub_requests (f.srv);
  g_assert_cmpuint (reqs->len, ==, 4);
  g_assert_nonnull (req (reqs, 1)->range);
  g_assert_null (req (reqs, 3)->range);   /* the second time from byte 0 */
  g_autoptr (GPtrArray) rows = hz_store_list_egress_log (f.store, 0, 0, &error);
  const HzEgressLogEntry *stale = rows->pdata[1];
  g_assert_cmpint (stale->status, ==, HZ_EGRESS_STATUS_RETRY);
  g_assert_nonnull (strstr (stale->message, "sha256 mismatch"));
  f_clear (&f);
}

static void
test_gated (void)
{
  F f;
  if (!f_init (&f))
    return;
  gsize size = g_bytes_get_size (f.model);
  hzt_hub_add_file (f.srv, REPO, FILE_F32, f.model, HZT_LFS, 0);
  hzt_hub_set_gated (f.srv, REPO);
  f_start (&f, NULL);
  g_autoptr (GPtrArray) refs = refs_of (FILE_F32, size, f.sha);
  g_autoptr (GError) error = NULL;
  g_assert_false (download (&f, refs, &error));
  g_assert_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_AUTH);
  g_assert_nonnull (strstr (error->message, "GatedRepo"));
  g_test_message ("gated: %s", error->message);
  g_clear_error (&error);
  g_autofree char *names = f_listing (&f);
  g_assert_cmpstr (names, ==, "");   /* nothing, not even an empty .part */
  /* with the token: downloaded */
  g_assert_true (hz_hub_set_token (f.hub, HZT_TOKEN, &error));
  g_assert_true (download (&f, refs, &error));
  g_assert_no_error (error);
  assert_file_is (&f, FILE_F32, f.model);
  g_autoptr (GPtrArray) reqs = hzt_hub_requests (f.srv);
  g_assert_cmpuint (reqs->len, ==, 3);   /* 401 (final, not retried), 302, 200 */
  g_assert_cmpuint (req (reqs, 0)->status, ==, 401);
  g_assert_false (req (reqs, 2)->auth);
  f_clear (&f);
}

static void
test_not_found (void)
{
  F f;
  if (!f_init (&f))
    return;
  hzt_hub_add_file (f.srv, REPO, FILE_F32, f.model, HZT_LFS, 0);
  f_start (&f, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) refs = refs_of ("missing.gguf", 0, NULL);
  g_assert_false (download (&f, refs, &error));
  g_assert_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, "EntryNotFound"));
  g_clear_error (&error);
  /* an unknown repository: the Hub answers 401 RepoNotFound to anonymous clients */
  g_assert_null (hz_hub_list_files (f.hub, "nobody/nothing", NULL, NULL, &error));
  g_assert_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_autofree char *names = f_listing (&f);
  g_assert_cmpstr (names, ==, "");
  g_autoptr (GPtrArray) reqs = hzt_hub_requests (f.srv);
  g_assert_cmpuint (reqs->len, ==, 2);   /* final: not retried */
  g_assert_cmpuint (req (reqs, 0)->status, ==, 404);
  g_assert_cmpuint (req (reqs, 1)->status, ==, 401);
  f_clear (&f);
}

/* The connection is cut at 40 %: the retry asks for the rest with Range. */
static void
test_cut (void)
{
  F f;
  if (!f_init (&f))
    return;
  gsize size = g_bytes_get_size (f.model), cut = size * 2 / 5;
  hzt_hub_add_file (f.srv, REPO, FILE_F32, f.model, HZT_LFS | HZT_CUT_ONCE, cut);
  hzt_hub_set_throttle (f.srv, 64 * 1024, 1);
  f_start (&f, NULL);
  g_autoptr (GPtrArray) refs = refs_of (FILE_F32, size, f.sha);
  g_autoptr (GError) error = NULL;
  g_assert_true (download (&f, refs, &error));
  g_assert_no_error (error);
  assert_file_is (&f, FILE_F32, f.model);
  g_autoptr (GPtrArray) reqs = hzt_hub_requests (f.srv);
  g_assert_cmpuint (reqs->len, ==, 4);
  g_autofree char *range = g_strdup_printf ("bytes=%" G_GSIZE_FORMAT "-", cut);
  g_assert_cmpstr (req (reqs, 3)->range, ==, range);
  g_autoptr (GPtrArray) rows = hz_store_list_egress_log (f.store, 0, 0, &error);
  const HzEgressLogEntry *lost = rows->pdata[1];
  g_assert_cmpint (lost->status, ==, HZ_EGRESS_STATUS_RETRY);
  g_assert_cmpint (lost->bytes, ==, (gint64) cut);
  g_test_message ("cut: %s", lost->message);
  f_clear (&f);
}

/* The server stops sending half-way and hangs: the read times out (1 s) and the retry
 * resumes; bounded in time. */
static void
test_stall (void)
{
  F f;
  if (!f_init (&f))
    return;
  gsize size = g_bytes_get_size (f.model), at = size / 2;
  hzt_hub_add_file (f.srv, REPO, FILE_F32, f.model, HZT_LFS | HZT_STALL_ONCE, at);
  hzt_hub_set_throttle (f.srv, 64 * 1024, 1);
  f_start (&f, NULL);
  g_autoptr (GPtrArray) refs = refs_of (FILE_F32, size, f.sha);
  g_autoptr (GError) error = NULL;
  gint64 t0 = g_get_monotonic_time ();
  g_assert_true (download (&f, refs, &error));
  double s = (g_get_monotonic_time () - t0) / 1e6;
  g_test_message ("stalled server: done in %.2f s", s);
  g_assert_no_error (error);
  g_assert_cmpfloat (s, <, 5.0);
  assert_file_is (&f, FILE_F32, f.model);
  g_autoptr (GPtrArray) reqs = hzt_hub_requests (f.srv);
  g_autofree char *range = g_strdup_printf ("bytes=%" G_GSIZE_FORMAT "-", at);
  g_assert_cmpuint (reqs->len, ==, 4);
  g_assert_cmpstr (req (reqs, 3)->range, ==, range);
  f_clear (&f);
}

static void
test_server_errors (void)
{
  F f;
  if (!f_init (&f))
    return;
  gsize size = g_bytes_get_size (f.model);
  hzt_hub_add_file (f.srv, REPO, FILE_F32, f.model, HZT_LFS | HZT_503_ONCE, 0);
  hzt_hub_add_file (f.srv, REPO, "down.gguf", f.model, HZT_LFS | HZT_503_ALWAYS, 0);
  f_start (&f, NULL);
  g_autoptr (GPtrArray) refs = refs_of (FILE_F32, size, f.sha);
  g_autoptr (GError) error = NULL;
  g_assert_true (download (&f, refs, &error));   /* 503, then 302 + 200 */
  g_assert_no_error (error);
  g_autoptr (GPtrArray) down = refs_of ("down.gguf", size, f.sha);
  gint64 t0 = g_get_monotonic_time ();
  g_assert_false (download (&f, down, &error));
  g_assert_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_NETWORK);
  g_test_message ("always 503: %s after %.2f s", error->message,
                  (g_get_monotonic_time () - t0) / 1e6);
  g_autoptr (GPtrArray) reqs = hzt_hub_requests (f.srv);
  g_assert_cmpuint (reqs->len, ==, 3 + 3);   /* bounded: max_attempts */
  g_autofree char *names = f_listing (&f);
  g_assert_cmpstr (names, ==, FILE_F32);
  g_autoptr (GPtrArray) rows = hz_store_list_egress_log (f.store, 0, 0, &error);
  g_assert_cmpint (((HzEgressLogEntry *) rows->pdata[5])->status, ==, HZ_EGRESS_STATUS_FAILED);
  f_clear (&f);
}

/* The first request of a search, a tree listing and a download fails (503, a connection
 * cut before any reply, a server that never answers); the retry succeeds, once, and the
 * log has both rows. Before the fix of api_get a search or tree retried after a failure
 * freed the failure's message twice (a crash in `hanzo search` / `hanzo pull --list`). */
static void
test_first_request_fails (void)
{
  static const struct { HztFail how; const char *name; guint status; } fails[] = {
    { HZT_FAIL_503, "503", 503 }, { HZT_FAIL_CUT, "cut", 0 }, { HZT_FAIL_STALL, "stall", 0 },
  };
  static const char *const ops[] = { "search", "tree", "download" };
  for (guint fi = 0; fi < G_N_ELEMENTS (fails); fi++)
    for (guint oi = 0; oi < G_N_ELEMENTS (ops); oi++)
      {
        F f;
        if (!f_init (&f))
          return;
        gsize size = g_bytes_get_size (f.model);
        hzt_hub_add_file (f.srv, REPO, FILE_F32, f.model, HZT_LFS, 0);
        hzt_hub_fail_first (f.srv, fails[fi].how);
        f_start (&f, NULL);
        g_autoptr (GError) error = NULL;
        gint64 t0 = g_get_monotonic_time ();
        guint want_status = 200;
        if (oi == 0)
          {
            g_autoptr (GPtrArray) models = hz_hub_search (f.hub, "llama", 5, NULL, &error);
            g_assert_no_error (error);
            g_assert_cmpuint (models->len, ==, 5);
          }
        else if (oi == 1)
          {
            g_autoptr (GPtrArray) files = hz_hub_list_files (f.hub, REPO, NULL, NULL, &error);
            g_assert_no_error (error);
            g_assert_cmpuint (files->len, ==, 1);
            g_assert_cmpstr (((HzHubFile *) files->pdata[0])->sha256, ==, f.sha);
          }
        else
          {
            g_autoptr (GPtrArray) refs = refs_of (FILE_F32, size, f.sha);
            g_assert_true (download (&f, refs, &error));
            g_assert_no_error (error);
            assert_file_is (&f, FILE_F32, f.model);
            want_status = 302;
          }
        double s = (g_get_monotonic_time () - t0) / 1e6;
        g_test_message ("%s of the first %s request: done in %.2f s", fails[fi].name, ops[oi], s);
        g_assert_cmpfloat (s, <, 5.0);   /* the stall: the 1 s timeout, then the retry */
        g_autoptr (GPtrArray) reqs = hzt_hub_requests (f.srv);
        g_assert_cmpuint (reqs->len, ==, oi == 2 ? 3 : 2);
        g_assert_cmpstr (req (reqs, 0)->path, ==, req (reqs, 1)->path);
        g_assert_cmpstr (req (reqs, 0)->query, ==, req (reqs, 1)->query);
        g_assert_cmpuint (req (reqs, 0)->status, ==, fails[fi].status);
        g_assert_cmpuint (req (reqs, 1)->status, ==, want_status);
        g_autoptr (GPtrArray) rows = hz_store_list_egress_log (f.store, 0, 0, &error);
        const HzEgressLogEntry *failed = rows->pdata[0], *ok = rows->pdata[1];
        g_assert_cmpint (failed->status, ==, HZ_EGRESS_STATUS_RETRY);
        g_assert_cmpint (failed->attempt, ==, 1);
        g_assert_nonnull (failed->message);
        g_test_message ("  logged: %s", failed->message);
        g_assert_cmpint (ok->status, ==, HZ_EGRESS_STATUS_OK);
        g_assert_cmpint (ok->attempt, ==, 2);
        f_clear (&f);
      }
}

/* Wrong bytes (the tree's and X-Linked-Etag's sha256 is of the true file): refused, the
 * .part deleted, nothing ever named like the model. */
static void
test_corrupt (void)
{
  F f;
  if (!f_init (&f))
    return;
  gsize size = g_bytes_get_size (f.model);
  hzt_hub_add_file (f.srv, REPO, FILE_F32, f.model, HZT_LFS | HZT_CORRUPT, 0);
  f_start (&f, NULL);
  g_autoptr (GError) error = NULL;
  /* with the tree's digest, and with only the X-Linked-Etag's */
  for (int k = 0; k < 2; k++)
    {
      g_autoptr (GPtrArray) refs = refs_of (FILE_F32, k ? 0 : size, k ? NULL : f.sha);
      g_assert_false (download (&f, refs, &error));
      g_assert_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_CHECKSUM);
      g_assert_nonnull (strstr (error->message, f.sha));
      g_test_message ("corrupt: %s", error->message);
      g_clear_error (&error);
      g_autofree char *names = f_listing (&f);
      g_assert_cmpstr (names, ==, "");
    }
  g_autoptr (GPtrArray) rows = hz_store_list_egress_log (f.store, 0, 0, &error);
  const HzEgressLogEntry *bad = rows->pdata[1];
  g_assert_cmpint (bad->status, ==, HZ_EGRESS_STATUS_REJECTED);
  g_assert_nonnull (strstr (bad->message, "mismatch"));
  f_clear (&f);
}

/* More than the disk holds: refused before any request or any file. */
static void
test_no_space (void)
{
  F f;
  if (!f_init (&f))
    return;
  hzt_hub_add_file (f.srv, REPO, FILE_F32, f.model, HZT_LFS, 0);
  f_start (&f, NULL);
  g_autoptr (GPtrArray) refs = refs_of (FILE_F32, G_GUINT64_CONSTANT (1) << 60, f.sha);
  g_autoptr (GError) error = NULL;
  g_assert_false (download (&f, refs, &error));
  g_assert_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_NO_SPACE);
  g_test_message ("no space: %s", error->message);
  g_autoptr (GPtrArray) reqs = hzt_hub_requests (f.srv);
  g_assert_cmpuint (reqs->len, ==, 0);
  g_autofree char *names = f_listing (&f);
  g_assert_cmpstr (names, ==, "");
  f_clear (&f);
}

/* A split set whose last shard is corrupt: no shard is placed; the verified ones stay as
 * .part; the next run fetches only the missing shard and places the three together. */
static void
test_split_set (void)
{
  F f;
  if (!f_init (&f))
    return;
  gsize size = g_bytes_get_size (f.model), third = size / 3;
  g_autoptr (GPtrArray) shards = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  for (guint i = 0; i < 3; i++)
    g_ptr_array_add (shards, g_bytes_new_from_bytes (f.model, i * third,
                                                     i < 2 ? third : size - 2 * third));
  for (int run = 0; run < 2; run++)
    {
      HztHub *srv = run ? hzt_hub_new () : f.srv;
      for (guint i = 0; i < 3; i++)
        {
          g_autofree char *name = g_strdup_printf ("Q8_0/stories260K-Q8_0-0000%u-of-00003.gguf", i + 1);
          hzt_hub_add_file (srv, REPO, name, shards->pdata[i],
                            HZT_LFS | (run == 0 && i == 2 ? HZT_CORRUPT : 0), 0);
        }
      if (run)
        {
          hzt_hub_assert_log (f.srv, f.store);
          hz_hub_free (f.hub);
          hzt_hub_free (f.srv);
          f.srv = srv;
          hz_store_close (f.store);
          f.store = hzt_tmp_store ();
        }
      f_start (&f, NULL);
      g_autoptr (GError) error = NULL;
      g_autoptr (GPtrArray) files = hz_hub_list_files (f.hub, REPO, NULL, NULL, &error);
      g_autoptr (HzHubChoice) c = hz_hub_choose (files, "Q8_0", NULL, &error);
      g_assert_no_error (error);
      g_autoptr (GPtrArray) refs = g_ptr_array_new_with_free_func ((GDestroyNotify) hz_hub_file_ref_free);
      for (guint i = 0; i < c->files->len; i++)
        {
          const HzHubFile *hf = c->files->pdata[i];
          HzHubFileRef *ref = hz_hub_file_ref_new (REPO, NULL, hf->path, &error);
          hz_hub_file_ref_set_expected (ref, hf->size, hf->sha256, hf->git_oid, &error);
          g_ptr_array_add (refs, ref);
        }
      g_autofree char *names = NULL;
      g_autoptr (GPtrArray) reqs = NULL;
      if (run == 0)
        {
          g_assert_false (download (&f, refs, &error));
          g_assert_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_CHECKSUM);
          names = f_listing (&f);
          g_assert_cmpstr (names, ==, "stories260K-Q8_0-00001-of-00003.gguf.part "
                                      "stories260K-Q8_0-00002-of-00003.gguf.part");
          continue;
        }
      g_assert_true (download (&f, refs, &error));
      g_assert_no_error (error);
      names = f_listing (&f);
      g_assert_cmpstr (names, ==, "stories260K-Q8_0-00001-of-00003.gguf "
                                  "stories260K-Q8_0-00002-of-00003.gguf "
                                  "stories260K-Q8_0-00003-of-00003.gguf");
      for (guint i = 0; i < 3; i++)
        {
          g_autofree char *name = g_strdup_printf ("stories260K-Q8_0-0000%u-of-00003.gguf", i + 1);
          assert_file_is (&f, name, shards->pdata[i]);
        }
      reqs = hzt_hub_requests (f.srv);
      g_assert_cmpuint (reqs->len, ==, 3);   /* tree, then shard 3 only (302 + 200) */
      g_assert_nonnull (strstr (req (reqs, 1)->path, "00003-of-00003"));
    }
  f_clear (&f);
}

/* An existing file of that name: identical, nothing to do (no request); different, an
 * error and the file untouched. */
static void
test_existing_target (void)
{
  F f;
  if (!f_init (&f))
    return;
  gsize size = g_bytes_get_size (f.model);
  hzt_hub_add_file (f.srv, REPO, FILE_F32, f.model, HZT_LFS, 0);
  f_start (&f, NULL);
  g_autofree char *target = f_path (&f, FILE_F32);
  g_assert_true (g_file_set_contents (target, g_bytes_get_data (f.model, NULL), (gssize) size, NULL));
  g_autoptr (GPtrArray) refs = refs_of (FILE_F32, size, f.sha);
  g_autoptr (GError) error = NULL;
  g_assert_true (download (&f, refs, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_set_contents (target, "mine", -1, NULL));
  g_assert_false (download (&f, refs, &error));
  g_assert_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_IO);
  g_autofree char *now = NULL;
  g_assert_true (g_file_get_contents (target, &now, NULL, NULL));
  g_assert_cmpstr (now, ==, "mine");
  g_autoptr (GPtrArray) reqs = hzt_hub_requests (f.srv);
  g_assert_cmpuint (reqs->len, ==, 0);
  f_clear (&f);
}

/* Cancelled at 40 %: CANCELLED, the .part kept with what arrived, a "cancelled" log row;
 * the next call resumes it. */
static void
test_cancel (void)
{
  F f;
  if (!f_init (&f))
    return;
  gsize size = g_bytes_get_size (f.model);
  hzt_hub_add_file (f.srv, REPO, FILE_F32, f.model, HZT_LFS, 0);
  hzt_hub_set_throttle (f.srv, 4 * 1024, 2);
  f_start (&f, NULL);
  g_autoptr (GPtrArray) refs = refs_of (FILE_F32, size, f.sha);
  g_autoptr (GCancellable) cancel = g_cancellable_new ();
  Progress pr = { .cancel_at = cancel };
  g_autoptr (GError) error = NULL;
  g_assert_false (hz_hub_download (f.hub, refs, f.dir, on_progress, &pr, NULL, cancel, &error));
  g_assert_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_CANCELLED);
  g_clear_error (&error);
  g_autofree char *part = f_path (&f, FILE_F32 ".part");
  GStatBuf st;
  g_assert_cmpint (g_stat (part, &st), ==, 0);
  g_assert_cmpuint ((guint64) st.st_size * 10, >=, (guint64) size * 4);
  g_assert_cmpuint ((guint64) st.st_size, <, size);
  g_autoptr (GPtrArray) rows = hz_store_list_egress_log (f.store, 0, 0, &error);
  g_assert_cmpint (((HzEgressLogEntry *) rows->pdata[rows->len - 1])->status, ==,
                   HZ_EGRESS_STATUS_CANCELLED);
  g_assert_true (download (&f, refs, &error));
  g_assert_no_error (error);
  assert_file_is (&f, FILE_F32, f.model);
  g_autoptr (GPtrArray) reqs = hzt_hub_requests (f.srv);
  g_autofree char *range = g_strdup_printf ("bytes=%" G_GOFFSET_FORMAT "-", (goffset) st.st_size);
  g_assert_cmpstr (req (reqs, reqs->len - 1)->range, ==, range);
  f_clear (&f);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/egress/hub/validation", test_validation);
  g_test_add_func ("/egress/hub/fixtures", test_fixtures);
  g_test_add_func ("/egress/hub/names", test_names);
  g_test_add_func ("/egress/hub/search", test_search);
  g_test_add_func ("/egress/hub/tree-pages", test_tree_pages);
  g_test_add_func ("/egress/hub/download", test_download);
  g_test_add_func ("/egress/hub/resume", test_resume);
  g_test_add_func ("/egress/hub/range-ignored", test_range_ignored);
  g_test_add_func ("/egress/hub/stale-part", test_stale_part);
  g_test_add_func ("/egress/hub/gated", test_gated);
  g_test_add_func ("/egress/hub/not-found", test_not_found);
  g_test_add_func ("/egress/hub/cut", test_cut);
  g_test_add_func ("/egress/hub/stall", test_stall);
  g_test_add_func ("/egress/hub/server-errors", test_server_errors);
  g_test_add_func ("/egress/hub/first-request-fails", test_first_request_fails);
  g_test_add_func ("/egress/hub/corrupt", test_corrupt);
  g_test_add_func ("/egress/hub/no-space", test_no_space);
  g_test_add_func ("/egress/hub/split-set", test_split_set);
  g_test_add_func ("/egress/hub/existing-target", test_existing_target);
  g_test_add_func ("/egress/hub/cancel", test_cancel);
  return g_test_run ();
}
