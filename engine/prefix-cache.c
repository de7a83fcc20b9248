/* engine/prefix-cache.c — block-hash index of computed KV blocks (prefix-cache.h). */
#include "prefix-cache.h"

#include <string.h>

/* Hash of the (empty) prefix before the first block. */
#define ROOT_HASH G_GUINT64_CONSTANT (0x6a09e667f3bcc908)

typedef struct {
  guint64 hash;
  guint64 salt;          /* the sequence's cache_salt (kv-paged.h): adapters it ran with */
  gint32  block;
  gint32  parent_block;  /* block indexed for the prefix before this one; -1 for the root */
  guint32 parent_gen;
  HzToken tokens[];      /* [s] */
} Entry;

struct _HzPrefixCache {
  HzKvPool   *pool;
  guint       s;
  GHashTable *index;     /* guint64 hash -> Entry (owned) */
  Entry     **by_block;  /* [P]: the entry indexing each block, or NULL */
};

/* splitmix64's finaliser: a bijective 64-bit mixer with full avalanche. */
static inline guint64
mix64 (guint64 x)
{
  x ^= x >> 30;
  x *= G_GUINT64_CONSTANT (0xbf58476d1ce4e5b9);
  x ^= x >> 27;
  x *= G_GUINT64_CONSTANT (0x94d049bb133111eb);
  x ^= x >> 31;
  return x;
}

guint64
hz_prefix_cache_hash (guint64 prev, const HzToken *tokens, guint s)
{
  guint64 h = mix64 (prev ^ G_GUINT64_CONSTANT (0x9e3779b97f4a7c15));
  for (guint i = 0; i < s; i++)
    h = mix64 (h + (guint32) tokens[i] + G_GUINT64_CONSTANT (0x632be59bd9b4e019));
  return h;
}

static guint
hash_u64 (gconstpointer p)
{
  const guint64 h = *(const guint64 *) p;
  return (guint) (h ^ (h >> 32));
}

static gboolean
equal_u64 (gconstpointer a, gconstpointer b)
{
  return *(const guint64 *) a == *(const guint64 *) b;
}

/* Hash of the empty prefix of sequences with cache salt `salt` (0: ROOT_HASH). */
static guint64
root_hash (guint64 salt)
{
  return salt == 0 ? ROOT_HASH : mix64 (ROOT_HASH ^ mix64 (salt));
}

/* Pool hook: the block is being reused or rewritten; drop its entry. */
static void
on_evict (gint32 block, gpointer user_data)
{
  HzPrefixCache *cache = user_data;
  Entry *e = cache->by_block[block];
  if (e == NULL)
    return;
  cache->by_block[block] = NULL;
  g_hash_table_remove (cache->index, &e->hash);  /* frees e */
}

HzPrefixCache *
hz_prefix_cache_new (HzKvPool *pool)
{
  HzPrefixCache *cache = g_new0 (HzPrefixCache, 1);
  cache->pool = pool;
  cache->s = hz_kv_pool_block_size (pool);
  cache->index = g_hash_table_new_full (hash_u64, equal_u64, NULL, g_free);
  cache->by_block = g_new0 (Entry *, hz_kv_pool_n_blocks (pool));
  hz_kv_pool_set_evict_func (pool, on_evict, cache);
  return cache;
}

void
hz_prefix_cache_free (HzPrefixCache *cache)
{
  if (cache == NULL)
    return;
  /* un-index every block through the pool, which calls on_evict for each */
  for (guint b = 0; b < hz_kv_pool_n_blocks (cache->pool); b++)
    if (cache->by_block[b])
      hz_kv_block_uncache (cache->pool, (gint32) b);
  hz_kv_pool_set_evict_func (cache->pool, NULL, NULL);
  g_hash_table_unref (cache->index);
  g_free (cache->by_block);
  g_free (cache);
}

guint
hz_prefix_cache_n_entries (const HzPrefixCache *cache)
{
  return g_hash_table_size (cache->index);
}

/* The live entry for block i of a chain, given the block matched for the prefix before
 * it (parent -1: root), or NULL. */
static Entry *
lookup (HzPrefixCache *cache, guint64 h, gint32 parent, const HzToken *tokens, guint64 salt)
{
  Entry *e = g_hash_table_lookup (cache->index, &h);
  if (e == NULL || e->salt != salt || memcmp (e->tokens, tokens, cache->s * sizeof (HzToken)) != 0)
    return NULL;
  if (e->parent_block != parent)
    return NULL;
  if (parent >= 0 && e->parent_gen != hz_kv_block_generation (cache->pool, parent))
    return NULL;
  return e;
}

guint
hz_prefix_cache_match (HzPrefixCache *cache, HzKvSeq *seq, const HzToken *tokens, guint n)
{
  const guint s = cache->s;
  g_return_val_if_fail (seq->len == 0, 0);
  guint64 h = root_hash (seq->cache_salt);
  gint32 parent = -1;
  for (guint i = 0; (i + 1) * s <= n; i++)
    {
      const HzToken *bt = tokens + (gsize) i * s;
      h = hz_prefix_cache_hash (h, bt, s);
      Entry *e = lookup (cache, h, parent, bt, seq->cache_salt);
      if (e == NULL)
        break;
      hz_kv_block_ref (cache->pool, e->block);
      hz_kv_seq_append_block (seq, e->block);
      g_array_append_val (seq->hashes, h);
      parent = e->block;
    }
  /* window layers: a hit is used only up to a length whose window (the positions the next
   * query reads) still has its window-layer K/V (kv-paged.h); shorter, block by block */
  guint m = seq->len;
  while (m > 0)
    {
      gboolean whole = TRUE;
      for (guint i = hz_kv_pool_window_first_block (cache->pool, m); i < m / s; i++)
        whole = whole && hz_kv_block_has_window (cache->pool, hz_kv_seq_table (seq)[i]);
      if (whole)
        break;
      m -= s;
    }
  if (m < seq->len)
    hz_kv_seq_truncate (seq, m);
  return seq->len;
}

void
hz_prefix_cache_commit (HzPrefixCache *cache, HzKvSeq *seq, const HzToken *tokens,
                        guint n_computed)
{
  const guint s = cache->s;
  n_computed = MIN (n_computed, seq->len);
  while ((seq->hashes->len + 1) * s <= n_computed)
    {
      const guint i = seq->hashes->len;
      const guint64 prev = i ? g_array_index (seq->hashes, guint64, i - 1)
                             : root_hash (seq->cache_salt);
      const guint64 h = hz_prefix_cache_hash (prev, tokens + (gsize) i * s, s);
      g_array_append_val (seq->hashes, h);
      const gint32 block = hz_kv_seq_table (seq)[i];
      if (cache->by_block[block])
        continue;  /* already indexed (shared through a fork or a hit) */
      /* parent: the block indexed for the previous prefix (ours or an identical one) */
      gint32 parent = -1;
      if (i > 0)
        {
          Entry *pe = g_hash_table_lookup (cache->index, &prev);
          if (pe == NULL || pe->salt != seq->cache_salt ||
              memcmp (pe->tokens, tokens + (gsize) (i - 1) * s, s * sizeof (HzToken)) != 0)
            continue;  /* the prefix was evicted: this block could never be matched */
          parent = pe->block;
        }
      Entry *old = g_hash_table_lookup (cache->index, &h);
      if (old != NULL)
        {
          if (lookup (cache, h, parent, tokens + (gsize) i * s, seq->cache_salt) == old)
            continue;  /* the same prefix is indexed under another block */
          /* a stale entry (its parent was evicted) or a hash collision: replace it */
          hz_kv_block_uncache (cache->pool, old->block);
        }
      Entry *e = g_malloc (sizeof (Entry) + s * sizeof (HzToken));
      e->hash = h;
      e->salt = seq->cache_salt;
      e->block = block;
      e->parent_block = parent;
      e->parent_gen = parent >= 0 ? hz_kv_block_generation (cache->pool, parent) : 0;
      memcpy (e->tokens, tokens + (gsize) i * s, s * sizeof (HzToken));
      g_hash_table_insert (cache->index, &e->hash, e);
      cache->by_block[block] = e;
      hz_kv_block_set_cached (cache->pool, block);
    }
}
