/* tests/engine/test-kv-paged.c — the paged KV pool (kv-paged.h) and the prefix cache
 * (prefix-cache.h), without a model.
 *
 *  - basic: allocation order, exhaustion, reference counts, truncation;
 *  - copy-on-write: a fork shares every block; the first write into a shared partial block
 *    copies it (the contents of the copy are the original's), full blocks stay shared;
 *  - randomized: thousands of steps of random appends, truncations, forks and frees over a
 *    small pool with storage; after every step hz_kv_pool_check() verifies that each
 *    block's count equals its holders (no leak, nothing shared without a reference) and
 *    that each sequence holds exactly ceil(l / s) blocks (fragmentation < s slots), and
 *    every slot of every sequence still holds the value written for that (sequence,
 *    position) — writes never leak into another sequence's blocks;
 *  - prefix cache: chains are matched block by block, partial blocks never, LRU eviction of
 *    released blocks, collisions of content with another prefix are not hits, and a
 *    randomized run with the cache checks that every hit's contents equal what the
 *    sequence would have computed.
 */
#include <glib.h>
#include <string.h>

#include "hanzo/engine.h"
#include "kv-paged.h"
#include "prefix-cache.h"

static HzKvPool *
pool_new (guint s, guint P, guint n_layer)
{
  HzKvPoolParams p = { .block_size = s, .n_blocks = P, .n_layer = n_layer, .kv_dim_k = 3,
                       .kv_dim_v = 2 };
  g_autoptr (GError) error = NULL;
  HzKvPool *pool = hz_kv_pool_new (&p, &error);
  g_assert_no_error (error);
  return pool;
}

static void
check (HzKvPool *pool, GPtrArray *seqs, const guint *extra)
{
  g_autoptr (GError) error = NULL;
  if (!hz_kv_pool_check (pool, (HzKvSeq *const *) seqs->pdata, seqs->len, extra, &error))
    g_error ("pool check: %s", error->message);
}

static void
test_basic (void)
{
  g_autoptr (HzKvPool) pool = pool_new (4, 5, 0);
  g_autoptr (GError) error = NULL;
  HzKvPoolParams bad = { .n_blocks = 0 };
  g_assert_null (hz_kv_pool_new (&bad, &error));
  g_assert_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT);

  g_autoptr (HzKvSeq) a = hz_kv_seq_new (pool);
  g_assert_cmpuint (hz_kv_seq_blocks_needed (a, 9), ==, 3);
  g_assert_true (hz_kv_seq_reserve (a, 9));
  g_assert_cmpuint (hz_kv_seq_n_blocks (a), ==, 3);
  g_assert_cmpint (hz_kv_seq_table (a)[0], ==, 0);
  g_assert_cmpint (hz_kv_seq_table (a)[2], ==, 2);
  g_assert_cmpuint (hz_kv_pool_n_available (pool), ==, 2);
  g_assert_cmpuint (hz_kv_seq_blocks_needed (a, 3), ==, 0);  /* slots 9..11 in block 2 */
  g_assert_true (hz_kv_seq_reserve (a, 3));
  g_assert_cmpuint (hz_kv_seq_blocks_needed (a, 9), ==, 3);
  g_assert_false (hz_kv_seq_reserve (a, 9));                 /* all or nothing */
  g_assert_cmpuint (a->len, ==, 12);
  g_assert_cmpuint (hz_kv_pool_n_available (pool), ==, 2);
  hz_kv_seq_truncate (a, 5);
  g_assert_cmpuint (hz_kv_seq_n_blocks (a), ==, 2);
  g_assert_cmpuint (hz_kv_pool_n_available (pool), ==, 3);
  hz_kv_seq_truncate (a, 0);
  g_assert_cmpuint (hz_kv_pool_n_available (pool), ==, 5);
}

static void
test_cow (void)
{
  g_autoptr (HzKvPool) pool = pool_new (4, 8, 2);
  g_autoptr (HzKvSeq) a = hz_kv_seq_new (pool);
  g_assert_true (hz_kv_seq_reserve (a, 6));   /* block 0 full, block 1 with 2 slots */
  for (guint il = 0; il < 2; il++)
    for (guint j = 0; j < 4; j++)
      {
        hz_kv_block_k (pool, il, hz_kv_seq_table (a)[1])[1 * 4 + j] = 100 * il + j;
        hz_kv_block_v (pool, il, hz_kv_seq_table (a)[1])[j * 2 + 1] = -100.0f * il - j;
      }
  g_autoptr (HzKvSeq) b = hz_kv_seq_fork (a);
  const gint32 b0 = hz_kv_seq_table (a)[0], b1 = hz_kv_seq_table (a)[1];
  g_assert_cmpuint (hz_kv_block_refcount (pool, b0), ==, 2);
  g_assert_cmpuint (hz_kv_block_refcount (pool, b1), ==, 2);
  g_assert_cmpuint (hz_kv_seq_blocks_needed (b, 1), ==, 1);  /* copy of the partial block */
  g_assert_true (hz_kv_seq_reserve (b, 1));
  const gint32 c1 = hz_kv_seq_table (b)[1];
  g_assert_cmpint (hz_kv_seq_table (b)[0], ==, b0);           /* the full block is shared */
  g_assert_cmpint (c1, !=, b1);
  g_assert_cmpuint (hz_kv_block_refcount (pool, b1), ==, 1);
  for (guint il = 0; il < 2; il++)
    for (guint j = 0; j < 2; j++)  /* the copied (filled) slots */
      {
        g_assert_cmpfloat (hz_kv_block_k (pool, il, c1)[1 * 4 + j], ==, 100 * il + j);
        g_assert_cmpfloat (hz_kv_block_v (pool, il, c1)[j * 2 + 1], ==, -100.0f * il - j);
      }
  /* a's own partial block is no longer shared: appending needs no copy */
  g_assert_cmpuint (hz_kv_seq_blocks_needed (a, 2), ==, 0);
  g_autoptr (GPtrArray) all = g_ptr_array_new ();
  g_ptr_array_add (all, a);
  g_ptr_array_add (all, b);
  check (pool, all, NULL);
}

/* ---- randomized workload with storage: every slot holds tag(seq, pos) ---- */

typedef struct {
  HzKvSeq *kv;
  guint    uid;       /* identity of the writer of the contents, changes on fork */
  GArray  *owner;     /* guint per position: uid that wrote the slot */
  GArray  *tokens;    /* HzToken per position (for the prefix-cache variant) */
} Seq;

static float
tag (guint uid, guint pos, guint e)
{
  return (float) ((uid % 2039u) * 4099u + pos * 7u + e);  /* exact in float32 */
}

/* Write K/V of positions [from, len) as the sequence's uid. */
static void
write_slots (HzKvPool *pool, Seq *q, guint from, guint n_layer)
{
  const guint s = hz_kv_pool_block_size (pool);
  for (guint p = from; p < q->kv->len; p++)
    {
      const gint32 b = hz_kv_seq_table (q->kv)[p / s];
      for (guint il = 0; il < n_layer; il++)
        {
          for (guint e = 0; e < 3; e++)
            hz_kv_block_k (pool, il, b)[e * s + p % s] = tag (q->uid, p, e + il);
          for (guint e = 0; e < 2; e++)
            hz_kv_block_v (pool, il, b)[(p % s) * 2 + e] = -tag (q->uid, p, e + il);
        }
      g_array_index (q->owner, guint, p) = q->uid;
    }
}

static void
verify_slots (HzKvPool *pool, Seq *q, guint n_layer)
{
  const guint s = hz_kv_pool_block_size (pool);
  for (guint p = 0; p < q->kv->len; p++)
    {
      const gint32 b = hz_kv_seq_table (q->kv)[p / s];
      const guint uid = g_array_index (q->owner, guint, p);
      for (guint il = 0; il < n_layer; il++)
        {
          for (guint e = 0; e < 3; e++)
            g_assert_cmpfloat (hz_kv_block_k (pool, il, b)[e * s + p % s], ==,
                               tag (uid, p, e + il));
          for (guint e = 0; e < 2; e++)
            g_assert_cmpfloat (hz_kv_block_v (pool, il, b)[(p % s) * 2 + e], ==,
                               -tag (uid, p, e + il));
        }
    }
}

/* Cache mode: "compute" positions [from, len) — contents are a function of the token
 * prefix, as a model's K/V are — then index the full blocks. */
static void
compute_prefix_slots (HzKvPool *pool, HzPrefixCache *cache, Seq *q, guint from, guint n_layer)
{
  const HzToken *toks = (const HzToken *) (void *) q->tokens->data;
  const guint len = q->kv->len;
  g_array_set_size (q->owner, len);
  for (guint p = from; p < len; p++)
    {
      q->uid = (guint) (hz_prefix_cache_hash (0, toks, p + 1) & 0xffff);
      q->kv->len = p + 1;
      write_slots (pool, q, p, n_layer);
    }
  q->kv->len = len;
  hz_prefix_cache_commit (cache, q->kv, toks, len);
}

static Seq *
seq_new (HzKvPool *pool, guint *next_uid)
{
  Seq *q = g_new0 (Seq, 1);
  q->kv = hz_kv_seq_new (pool);
  q->uid = (*next_uid)++;
  q->owner = g_array_new (FALSE, TRUE, sizeof (guint));
  q->tokens = g_array_new (FALSE, TRUE, sizeof (HzToken));
  return q;
}

static void
seq_free (Seq *q)
{
  hz_kv_seq_free (q->kv);
  g_array_unref (q->owner);
  g_array_unref (q->tokens);
  g_free (q);
}

/* One randomized run. With a prefix cache, tokens come from a tiny alphabet with shared
 * prefixes so that hits are frequent; the contents of a slot are then a function of the
 * token prefix (what a model would compute), and every hit is checked against it. */
static void
random_run (guint s, guint P, guint steps, guint32 seed, gboolean with_cache)
{
  const guint n_layer = 2;
  g_autoptr (HzKvPool) pool = pool_new (s, P, n_layer);
  HzPrefixCache *cache = with_cache ? hz_prefix_cache_new (pool) : NULL;
  g_autoptr (GRand) rng = g_rand_new_with_seed (seed);
  g_autoptr (GPtrArray) seqs = g_ptr_array_new_with_free_func ((GDestroyNotify) seq_free);
  g_autoptr (GPtrArray) kvs = g_ptr_array_new ();
  guint next_uid = 1, n_fail = 0, n_cow = 0, n_hit_blocks = 0;

  for (guint step = 0; step < steps; step++)
    {
      const guint op = g_rand_int_range (rng, 0, 100);
      Seq *q = seqs->len ? seqs->pdata[g_rand_int_range (rng, 0, seqs->len)] : NULL;
      if (q == NULL || op < 15)
        {
          /* new sequence (with the cache: look up a random shared-prefix prompt) */
          Seq *nq = seq_new (pool, &next_uid);
          if (with_cache)
            {
              const guint n = g_rand_int_range (rng, 1, 4 * s + 3);
              const guint family = g_rand_int_range (rng, 0, 3);
              for (guint i = 0; i < n; i++)
                {
                  HzToken t = i < 2 * s ? (HzToken) (family * 10 + i % 3)
                                        : (HzToken) g_rand_int_range (rng, 0, 3);
                  g_array_append_val (nq->tokens, t);
                }
              const guint hit = hz_prefix_cache_match (cache, nq->kv,
                                                       (HzToken *) (void *) nq->tokens->data, n);
              g_assert_cmpuint (hit % s, ==, 0);
              n_hit_blocks += hit / s;
              g_array_set_size (nq->owner, hit);
              /* contents of a hit were written by whoever computed that prefix: in this
               * mode the uid of a slot is derived from the token prefix */
              for (guint p = 0; p < hit; p++)
                g_array_index (nq->owner, guint, p) =
                  (guint) (hz_prefix_cache_hash (0, (HzToken *) (void *) nq->tokens->data, p + 1)
                           & 0xffff);
              if (!hz_kv_seq_reserve (nq->kv, n - hit))
                {
                  n_fail++;
                  seq_free (nq);
                  continue;
                }
              compute_prefix_slots (pool, cache, nq, hit, n_layer);
            }
          g_ptr_array_add (seqs, nq);
        }
      else if (op < 60)
        {
          /* append 1..2s tokens */
          const guint n = g_rand_int_range (rng, 1, 2 * s + 1);
          const guint before = q->kv->len;
          const guint need = hz_kv_seq_blocks_needed (q->kv, n);
          const gboolean shared_last = before % s != 0 &&
            (hz_kv_block_refcount (pool, hz_kv_seq_table (q->kv)[before / s]) > 1 ||
             hz_kv_block_is_cached (pool, hz_kv_seq_table (q->kv)[before / s]));
          const guint avail = hz_kv_pool_n_available (pool);
          if (!hz_kv_seq_reserve (q->kv, n))
            {
              g_assert_cmpuint (need, >, avail);
              g_assert_cmpuint (q->kv->len, ==, before);
              n_fail++;
              continue;
            }
          g_assert_cmpuint (need, <=, avail);
          n_cow += shared_last;
          g_array_set_size (q->owner, q->kv->len);
          if (with_cache)
            {
              g_array_set_size (q->tokens, before);
              for (guint i = 0; i < n; i++)
                {
                  HzToken t = g_rand_int_range (rng, 0, 3);
                  g_array_append_val (q->tokens, t);
                }
              compute_prefix_slots (pool, cache, q, before, n_layer);
            }
          else
            write_slots (pool, q, before, n_layer);
        }
      else if (op < 75)
        {
          const guint n = g_rand_int_range (rng, 0, q->kv->len + 1);
          hz_kv_seq_truncate (q->kv, n);
          g_array_set_size (q->owner, n);
          if (with_cache)
            g_array_set_size (q->tokens, n);
        }
      else if (op < 85)
        {
          Seq *c = g_new0 (Seq, 1);
          c->kv = hz_kv_seq_fork (q->kv);
          c->uid = next_uid++;
          c->owner = g_array_copy (q->owner);
          c->tokens = g_array_copy (q->tokens);
          g_ptr_array_add (seqs, c);
        }
      else
        g_ptr_array_remove_fast (seqs, q);

      /* invariants */
      g_ptr_array_set_size (kvs, 0);
      for (guint i = 0; i < seqs->len; i++)
        g_ptr_array_add (kvs, ((Seq *) seqs->pdata[i])->kv);
      check (pool, kvs, NULL);
      for (guint i = 0; i < seqs->len; i++)
        {
          Seq *x = seqs->pdata[i];
          g_assert_cmpuint (hz_kv_seq_n_blocks (x->kv) * s - x->kv->len, <, s);
        }
      if (step % 16 == 0 || step == steps - 1)
        for (guint i = 0; i < seqs->len; i++)
          verify_slots (pool, seqs->pdata[i], n_layer);
    }
  g_test_message ("s=%u P=%u%s: %u steps, %u refused reservations, %u copy-on-writes, "
                  "%u blocks from the prefix cache", s, P, with_cache ? " +cache" : "", steps,
                  n_fail, n_cow, n_hit_blocks);
  g_assert_cmpuint (n_fail, >, 0);  /* the pool was under pressure */
  if (s > 1)
    g_assert_cmpuint (n_cow, >, 0);  /* with s == 1 no block is ever partial */
  if (with_cache)
    g_assert_cmpuint (n_hit_blocks, >, 0);
  g_ptr_array_set_size (seqs, 0);
  g_ptr_array_set_size (kvs, 0);
  check (pool, kvs, NULL);
  hz_prefix_cache_free (cache);
  g_assert_cmpuint (hz_kv_pool_n_available (pool), ==, P);
  g_assert_cmpuint (hz_kv_pool_n_evictable (pool), ==, 0);
}

static void
test_random (void)
{
  random_run (16, 64, 5000, 1, FALSE);
  random_run (4, 23, 5000, 2, FALSE);
  random_run (1, 40, 3000, 3, FALSE);
}

static void
test_random_cache (void)
{
  random_run (4, 48, 5000, 4, TRUE);
  random_run (2, 30, 5000, 5, TRUE);
}

static void
test_prefix_cache (void)
{
  const guint s = 4;
  g_autoptr (HzKvPool) pool = pool_new (s, 6, 0);
  g_autoptr (HzPrefixCache) cache = hz_prefix_cache_new (pool);
  const HzToken sys[10] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };

  g_autoptr (HzKvSeq) a = hz_kv_seq_new (pool);
  g_assert_cmpuint (hz_prefix_cache_match (cache, a, sys, 10), ==, 0);
  g_assert_true (hz_kv_seq_reserve (a, 10));
  hz_prefix_cache_commit (cache, a, sys, 6);       /* only block 0 is full and computed */
  g_assert_cmpuint (hz_prefix_cache_n_entries (cache), ==, 1);
  hz_prefix_cache_commit (cache, a, sys, 10);      /* blocks 0, 1; block 2 is partial */
  g_assert_cmpuint (hz_prefix_cache_n_entries (cache), ==, 2);

  /* same prefix: both full blocks shared; a different second block: one */
  g_autoptr (HzKvSeq) b = hz_kv_seq_new (pool);
  g_assert_cmpuint (hz_prefix_cache_match (cache, b, sys, 10), ==, 8);
  g_assert_cmpint (hz_kv_seq_table (b)[1], ==, hz_kv_seq_table (a)[1]);
  g_assert_cmpuint (hz_kv_block_refcount (pool, hz_kv_seq_table (a)[0]), ==, 2);
  const HzToken other[8] = { 1, 2, 3, 4, 5, 6, 7, 99 };
  g_autoptr (HzKvSeq) c = hz_kv_seq_new (pool);
  g_assert_cmpuint (hz_prefix_cache_match (cache, c, other, 8), ==, 4);
  /* the same block content after another prefix is not a hit */
  const HzToken shifted[8] = { 9, 9, 9, 9, 5, 6, 7, 8 };
  g_autoptr (HzKvSeq) d = hz_kv_seq_new (pool);
  g_assert_cmpuint (hz_prefix_cache_match (cache, d, shifted, 8), ==, 0);

  /* released blocks stay cached (evictable) and are found again */
  g_clear_pointer (&a, hz_kv_seq_free);
  g_clear_pointer (&b, hz_kv_seq_free);
  g_clear_pointer (&c, hz_kv_seq_free);
  g_assert_cmpuint (hz_kv_pool_n_evictable (pool), ==, 2);
  g_assert_cmpuint (hz_kv_pool_n_available (pool), ==, 6);
  b = hz_kv_seq_new (pool);
  g_assert_cmpuint (hz_prefix_cache_match (cache, b, sys, 10), ==, 8);
  g_assert_cmpuint (hz_kv_pool_n_evictable (pool), ==, 0);
  /* writing into a (truncated) cached block un-indexes it rather than corrupting it */
  hz_kv_seq_truncate (b, 6);
  g_assert_true (hz_kv_seq_reserve (b, 1));
  g_assert_cmpuint (hz_prefix_cache_n_entries (cache), ==, 1);
  g_clear_pointer (&b, hz_kv_seq_free);

  /* LRU eviction: fill the pool with fresh blocks; the cached one goes last */
  g_assert_cmpuint (hz_kv_pool_n_evictable (pool), ==, 1);
  g_autoptr (HzKvSeq) e = hz_kv_seq_new (pool);
  g_assert_true (hz_kv_seq_reserve (e, 5 * s));
  g_assert_cmpuint (hz_prefix_cache_n_entries (cache), ==, 1);
  g_assert_true (hz_kv_seq_reserve (e, 1));      /* takes the evictable block */
  g_assert_cmpuint (hz_prefix_cache_n_entries (cache), ==, 0);
  g_assert_false (hz_kv_seq_reserve (e, s));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/kv-paged/basic", test_basic);
  g_test_add_func ("/kv-paged/cow", test_cow);
  g_test_add_func ("/kv-paged/random", test_random);
  g_test_add_func ("/kv-paged/prefix-cache", test_prefix_cache);
  g_test_add_func ("/kv-paged/random-cache", test_random_cache);
  return g_test_run ();
}
