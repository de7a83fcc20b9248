/* engine/kv-paged.c — block pool, block tables, reference counts, copy-on-write
 * (kv-paged.h).
 *
 * Free blocks are a stack (O(1) alloc/free, recently freed blocks are reused first while
 * they are still warm in the caches). Evictable blocks (count 0, indexed by the prefix
 * cache) form a doubly linked list in release order: the head is the least recently used
 * one and is evicted first; a prefix-cache hit unlinks a block in O(1).
 *
 * Window layers (HzKvPoolParams.n_swa, kv-paged.h "Sliding-window layers"): a block's
 * window-layer K/V lives in a slot of a second, smaller store. `wants` counts the tables
 * that list the block within their window (a table holds a want on each of its blocks from
 * its `swa_lo` on). A block whose last want ends by a table sliding past it gives its slot
 * back at once; one whose last want ends otherwise (its sequence freed or truncated while
 * the block was still in its window) keeps it, idle, for a prefix-cache hit, on a second
 * list in release order from which an allocation steals the oldest slot when no slot is
 * free; a block that becomes free gives its slot back.
 */
#include "kv-paged.h"

#include <string.h>
#include "hanzo/engine-error.h"

/* The two lists a block may be on, in release order (head: the oldest). */
enum { L_LRU,    /* evictable: count 0, indexed by the prefix cache */
       L_IDLE,   /* holds a window-layer slot that no table wants */
       L_N };

typedef struct {
  gint32 prev, next;     /* -1: none */
} Link;

typedef struct {
  gint32 head, tail;
  guint  n;
} List;

typedef struct {
  guint32  ref;
  guint32  gen;
  gboolean cached;
  Link     link[L_N];
  gboolean on[L_N];
  /* window layers (pool->n_win > 0) */
  gint32   slot;         /* its window-layer storage, or -1 */
  guint32  wants;        /* tables holding it within their window */
} Block;

struct _HzKvPool {
  guint   s, P, n_layer, kv_dim_k, kv_dim_v;
  Block  *blocks;
  gint32 *free_stack;     /* [P] */
  guint   n_free;
  List    list[L_N];      /* [L_LRU]: evictable blocks; [L_IDLE]: idle window slots */
  float  *k, *v;          /* [n_full][P][kv_dim_k][s], [n_full][P][s][kv_dim_v] */
  /* window layers: n_win of the n_layer keep their K/V in n_slots slots */
  guint   n_swa, n_win, n_full, n_slots;
  guint  *lmap;           /* [n_layer]: the layer's index among the full or window layers */
  guint8 *is_win;         /* [n_layer] */
  float  *k_swa, *v_swa;  /* [n_win][n_slots][kv_dim_k][s], [n_win][n_slots][s][kv_dim_v] */
  gint32 *free_slots;     /* [n_slots] stack */
  guint   n_free_slots;

  HzKvEvictFunc evict;
  gpointer      evict_data;
  HzKvCopyFunc  copy;         /* storage kept elsewhere (the GPU's pool) */
  gpointer      copy_data;
};

HzKvPool *
hz_kv_pool_new (const HzKvPoolParams *p, GError **error)
{
  const guint s = p->block_size ? p->block_size : HZ_KV_DEFAULT_BLOCK_SIZE;
  if (p->n_blocks == 0 || p->n_blocks > G_MAXINT32 / 2)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "a KV pool needs between 1 and %d blocks (asked for %u)", G_MAXINT32 / 2,
                   p->n_blocks);
      return NULL;
    }
  guint n_win = 0;
  for (guint il = 0; p->n_swa > 0 && p->layer_swa && il < p->n_layer; il++)
    n_win += p->layer_swa[il] != 0;
  const guint n_full = p->n_layer - n_win;
  const guint n_slots = n_win == 0 ? 0 : p->n_slots ? MIN (p->n_slots, p->n_blocks) : p->n_blocks;
  /* floats of storage: (n_full * P + n_win * n_slots) * s * (kv_dim_k + kv_dim_v),
   * overflow-checked */
  const guint64 per_block = (guint64) s * ((guint64) p->kv_dim_k + p->kv_dim_v);
  const guint64 stored = (guint64) n_full * p->n_blocks + (guint64) n_win * n_slots;
  gsize k_floats = 0, v_floats = 0;
  if (p->n_layer > 0)
    {
      const double total = (double) stored * per_block * sizeof (float);
      if (total > (double) G_MAXSIZE / 2)
        {
          g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                       "a KV pool of %u blocks of %u tokens does not fit in the address "
                       "space", p->n_blocks, s);
          return NULL;
        }
      k_floats = (gsize) stored * s * p->kv_dim_k;
      v_floats = (gsize) stored * s * p->kv_dim_v;
    }

  HzKvPool *pool = g_new0 (HzKvPool, 1);
  pool->s = s;
  pool->P = p->n_blocks;
  pool->n_layer = p->n_layer;
  pool->kv_dim_k = p->kv_dim_k;
  pool->kv_dim_v = p->kv_dim_v;
  pool->n_swa = n_win ? p->n_swa : 0;
  pool->n_win = n_win;
  pool->n_full = n_full;
  pool->n_slots = n_slots;
  pool->lmap = g_new0 (guint, MAX (p->n_layer, 1));
  pool->is_win = g_new0 (guint8, MAX (p->n_layer, 1));
  for (guint il = 0, nf = 0, nw = 0; il < p->n_layer; il++)
    {
      pool->is_win[il] = n_win && p->layer_swa[il] != 0;
      pool->lmap[il] = pool->is_win[il] ? nw++ : nf++;
    }
  pool->free_slots = g_new (gint32, MAX (n_slots, 1));
  for (guint i = 0; i < n_slots; i++)
    pool->free_slots[i] = (gint32) (n_slots - 1 - i);
  pool->n_free_slots = n_slots;
  if (k_floats + v_floats > 0)
    {
      const gsize kf = (gsize) n_full * p->n_blocks * s * p->kv_dim_k;
      const gsize vf = (gsize) n_full * p->n_blocks * s * p->kv_dim_v;
      pool->k = g_try_malloc0 (kf * sizeof (float));
      pool->v = g_try_malloc0 (vf * sizeof (float));
      pool->k_swa = g_try_malloc0 ((k_floats - kf) * sizeof (float));
      pool->v_swa = g_try_malloc0 ((v_floats - vf) * sizeof (float));
      if ((kf && !pool->k) || (vf && !pool->v) || (k_floats > kf && !pool->k_swa)
          || (v_floats > vf && !pool->v_swa))
        {
          g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                       "out of memory allocating a KV pool of %" G_GSIZE_FORMAT " MiB",
                       (k_floats + v_floats) * sizeof (float) >> 20);
          hz_kv_pool_free (pool);
          return NULL;
        }
    }
  pool->blocks = g_new0 (Block, pool->P);
  pool->free_stack = g_new (gint32, pool->P);
  /* stack top = block 0, so a fresh pool hands out blocks in increasing order */
  for (guint i = 0; i < pool->P; i++)
    {
      for (int l = 0; l < L_N; l++)
        pool->blocks[i].link[l].prev = pool->blocks[i].link[l].next = -1;
      pool->blocks[i].slot = -1;
      pool->free_stack[i] = (gint32) (pool->P - 1 - i);
    }
  pool->n_free = pool->P;
  for (int l = 0; l < L_N; l++)
    pool->list[l].head = pool->list[l].tail = -1;
  return pool;
}

void
hz_kv_pool_free (HzKvPool *pool)
{
  if (pool == NULL)
    return;
  g_free (pool->blocks);
  g_free (pool->free_stack);
  g_free (pool->k);
  g_free (pool->v);
  g_free (pool->k_swa);
  g_free (pool->v_swa);
  g_free (pool->lmap);
  g_free (pool->is_win);
  g_free (pool->free_slots);
  g_free (pool);
}

guint hz_kv_pool_block_size (const HzKvPool *pool) { return pool->s; }
guint hz_kv_pool_n_blocks (const HzKvPool *pool) { return pool->P; }
guint
hz_kv_pool_n_available (const HzKvPool *pool)
{
  const guint blocks = pool->n_free + pool->list[L_LRU].n;
  return pool->n_win ? MIN (blocks, pool->n_free_slots + pool->list[L_IDLE].n) : blocks;
}

guint hz_kv_pool_window (const HzKvPool *pool) { return pool->n_swa; }
guint hz_kv_pool_n_slots (const HzKvPool *pool) { return pool->n_slots; }
guint hz_kv_pool_n_slots_used (const HzKvPool *pool) { return pool->n_slots - pool->n_free_slots; }

gsize
hz_kv_pool_storage_bytes (const HzKvPool *pool)
{
  if (pool->k == NULL)
    return 0;
  return ((gsize) pool->n_full * pool->P + (gsize) pool->n_win * pool->n_slots) * pool->s
         * (pool->kv_dim_k + pool->kv_dim_v) * sizeof (float);
}
guint hz_kv_pool_n_evictable (const HzKvPool *pool) { return pool->list[L_LRU].n; }

void
hz_kv_pool_kv_dims (const HzKvPool *pool, guint *kv_dim_k, guint *kv_dim_v)
{
  *kv_dim_k = pool->kv_dim_k;
  *kv_dim_v = pool->kv_dim_v;
}

gsize
hz_kv_pool_bytes_per_token (const HzKvPool *pool)
{
  return (gsize) pool->n_layer * (pool->kv_dim_k + pool->kv_dim_v) * sizeof (float);
}

void
hz_kv_pool_set_evict_func (HzKvPool *pool, HzKvEvictFunc func, gpointer user_data)
{
  pool->evict = func;
  pool->evict_data = user_data;
}

void
hz_kv_pool_set_copy_func (HzKvPool *pool, HzKvCopyFunc func, gpointer user_data)
{
  pool->copy = func;
  pool->copy_data = user_data;
}

/* ---------------------------------------------------------------- blocks */

static void
list_unlink (HzKvPool *pool, int l, gint32 b)
{
  Block *bl = &pool->blocks[b];
  List *li = &pool->list[l];
  Link *k = &bl->link[l];
  g_assert (bl->on[l]);
  if (k->prev >= 0)
    pool->blocks[k->prev].link[l].next = k->next;
  else
    li->head = k->next;
  if (k->next >= 0)
    pool->blocks[k->next].link[l].prev = k->prev;
  else
    li->tail = k->prev;
  k->prev = k->next = -1;
  bl->on[l] = FALSE;
  li->n--;
}

static void
list_push_tail (HzKvPool *pool, int l, gint32 b)
{
  Block *bl = &pool->blocks[b];
  List *li = &pool->list[l];
  bl->link[l].prev = li->tail;
  bl->link[l].next = -1;
  if (li->tail >= 0)
    pool->blocks[li->tail].link[l].next = b;
  else
    li->head = b;
  li->tail = b;
  bl->on[l] = TRUE;
  li->n++;
}

/* ---- window-layer slots ---- */

static void
idle_unlink (HzKvPool *pool, gint32 b)
{
  if (pool->blocks[b].on[L_IDLE])
    list_unlink (pool, L_IDLE, b);
}

/* The block's slot goes back to the free stack (it keeps no window-layer K/V). */
static void
slot_release (HzKvPool *pool, gint32 b)
{
  Block *bl = &pool->blocks[b];
  idle_unlink (pool, b);
  if (bl->slot >= 0)
    pool->free_slots[pool->n_free_slots++] = bl->slot;
  bl->slot = -1;
}

/* A slot for a new block: a free one, else the oldest idle block's. */
static gint32
slot_take (HzKvPool *pool)
{
  if (pool->n_free_slots == 0 && pool->list[L_IDLE].head >= 0)
    slot_release (pool, pool->list[L_IDLE].head);
  return pool->n_free_slots > 0 ? pool->free_slots[--pool->n_free_slots] : -1;
}

/* A table starts holding block b within its window. */
static void
want_add (HzKvPool *pool, gint32 b)
{
  if (pool->n_win == 0)
    return;
  pool->blocks[b].wants++;
  idle_unlink (pool, b);
}

/* A table stops holding block b within its window: by sliding past it (`slid`: its slot is
 * given back when no table wants it), or by releasing it (the slot stays, idle, while the
 * block has holders or contents). */
static void
want_drop (HzKvPool *pool, gint32 b, gboolean slid)
{
  if (pool->n_win == 0)
    return;
  Block *bl = &pool->blocks[b];
  g_assert (bl->wants > 0);
  if (--bl->wants > 0 || bl->slot < 0)
    return;
  if (slid)
    slot_release (pool, b);
  else
    list_push_tail (pool, L_IDLE, b);
}

gboolean
hz_kv_block_has_window (const HzKvPool *pool, gint32 block)
{
  return pool->n_win == 0 || pool->blocks[block].slot >= 0;
}

gint32
hz_kv_block_alloc (HzKvPool *pool)
{
  if (pool->n_win && pool->n_free_slots + pool->list[L_IDLE].n == 0)
    return -1;
  gint32 b;
  if (pool->n_free > 0)
    b = pool->free_stack[--pool->n_free];
  else if (pool->list[L_LRU].head >= 0)
    {
      hz_kv_block_uncache (pool, pool->list[L_LRU].head);  /* moves it to the free stack */
      b = pool->free_stack[--pool->n_free];
    }
  else
    return -1;
  Block *bl = &pool->blocks[b];
  g_assert (bl->ref == 0 && !bl->cached && bl->slot < 0 && bl->wants == 0);
  bl->ref = 1;
  bl->gen++;
  if (pool->n_win)
    {
      bl->slot = slot_take (pool);
      g_assert (bl->slot >= 0);
    }
  return b;
}

void
hz_kv_block_ref (HzKvPool *pool, gint32 block)
{
  g_assert (block >= 0 && (guint) block < pool->P);
  Block *bl = &pool->blocks[block];
  if (bl->ref == 0)
    {
      /* only an evictable block can be revived: a free one has no contents */
      g_assert (bl->cached);
      list_unlink (pool, L_LRU, block);
    }
  bl->ref++;
}

void
hz_kv_block_unref (HzKvPool *pool, gint32 block)
{
  g_assert (block >= 0 && (guint) block < pool->P);
  Block *bl = &pool->blocks[block];
  g_assert (bl->ref > 0);
  if (--bl->ref > 0)
    return;
  if (bl->cached)
    list_push_tail (pool, L_LRU, block);
  else
    {
      slot_release (pool, block);
      pool->free_stack[pool->n_free++] = block;
    }
}

guint
hz_kv_block_refcount (const HzKvPool *pool, gint32 block)
{
  return pool->blocks[block].ref;
}

guint32
hz_kv_block_generation (const HzKvPool *pool, gint32 block)
{
  return pool->blocks[block].gen;
}

gboolean
hz_kv_block_is_cached (const HzKvPool *pool, gint32 block)
{
  return pool->blocks[block].cached;
}

void
hz_kv_block_set_cached (HzKvPool *pool, gint32 block)
{
  g_assert (pool->blocks[block].ref > 0);
  pool->blocks[block].cached = TRUE;
}

void
hz_kv_block_uncache (HzKvPool *pool, gint32 block)
{
  Block *bl = &pool->blocks[block];
  if (!bl->cached)
    return;
  if (pool->evict)
    pool->evict (block, pool->evict_data);
  bl->cached = FALSE;
  bl->gen++;
  if (bl->on[L_LRU])
    {
      list_unlink (pool, L_LRU, block);
      slot_release (pool, block);
      pool->free_stack[pool->n_free++] = block;
    }
}

/* Where (layer, block) is stored: the store and the row index in it (window layers: the
 * block's slot, which must exist). */
static gsize
store_row (const HzKvPool *pool, guint layer, gint32 block, gboolean *win)
{
  *win = pool->is_win[layer];
  if (!*win)
    return (gsize) pool->lmap[layer] * pool->P + block;
  g_assert (pool->blocks[block].slot >= 0);
  return (gsize) pool->lmap[layer] * pool->n_slots + pool->blocks[block].slot;
}

float *
hz_kv_block_k (HzKvPool *pool, guint layer, gint32 block)
{
  if (pool->k == NULL)
    return NULL;
  gboolean win;
  const gsize row = store_row (pool, layer, block, &win);
  return (win ? pool->k_swa : pool->k) + row * pool->kv_dim_k * pool->s;
}

float *
hz_kv_block_v (HzKvPool *pool, guint layer, gint32 block)
{
  if (pool->v == NULL)
    return NULL;
  gboolean win;
  const gsize row = store_row (pool, layer, block, &win);
  return (win ? pool->v_swa : pool->v) + row * pool->s * pool->kv_dim_v;
}

/* Copy the first n_slots token slots of every layer from block src to block dst. */
static void
block_copy (HzKvPool *pool, gint32 dst, gint32 src, guint n_slots)
{
  if (pool->copy)
    pool->copy (dst, src, n_slots, pool->copy_data);
  for (guint il = 0; il < pool->n_layer && pool->k; il++)
    {
      if (pool->is_win[il] && (pool->blocks[src].slot < 0 || pool->blocks[dst].slot < 0))
        continue;
      float *kd = hz_kv_block_k (pool, il, dst);
      const float *ks = hz_kv_block_k (pool, il, src);
      for (guint e = 0; e < pool->kv_dim_k; e++)
        memcpy (kd + (gsize) e * pool->s, ks + (gsize) e * pool->s, n_slots * sizeof (float));
      memcpy (hz_kv_block_v (pool, il, dst), hz_kv_block_v (pool, il, src),
              (gsize) n_slots * pool->kv_dim_v * sizeof (float));
    }
}

/* ------------------------------------------------------------- sequences */

guint
hz_kv_pool_window_first_block (const HzKvPool *pool, guint pos)
{
  if (pool->n_win == 0 || pos + 1 <= pool->n_swa)
    return 0;
  return (pos + 1 - pool->n_swa) / pool->s;
}

/* Drop the sequence's wants on the blocks before the window of its next position (len):
 * their window-layer slots go back unless another table still wants them. */
static void
seq_slide (HzKvSeq *seq)
{
  HzKvPool *pool = seq->pool;
  const guint lo = MIN (hz_kv_pool_window_first_block (pool, seq->len), seq->table->len);
  for (guint i = seq->swa_lo; i < lo; i++)
    want_drop (pool, hz_kv_seq_table (seq)[i], TRUE);
  seq->swa_lo = MAX (seq->swa_lo, lo);
}

HzKvSeq *
hz_kv_seq_new (HzKvPool *pool)
{
  HzKvSeq *seq = g_new0 (HzKvSeq, 1);
  seq->pool = pool;
  seq->table = g_array_new (FALSE, FALSE, sizeof (gint32));
  seq->hashes = g_array_new (FALSE, FALSE, sizeof (guint64));
  return seq;
}

void
hz_kv_seq_free (HzKvSeq *seq)
{
  if (seq == NULL)
    return;
  hz_kv_seq_truncate (seq, 0);
  g_array_unref (seq->table);
  g_array_unref (seq->hashes);
  g_free (seq);
}

/* Does writing into the last (partial) block require a private copy first? */
static gboolean
last_block_needs_copy (const HzKvSeq *seq)
{
  const guint s = seq->pool->s;
  if (seq->len % s == 0)
    return FALSE;  /* the last block is full (or there is none): appends go to new blocks */
  const Block *bl = &seq->pool->blocks[hz_kv_seq_table (seq)[seq->table->len - 1]];
  return bl->ref > 1 || bl->cached;
}

guint
hz_kv_seq_blocks_needed (const HzKvSeq *seq, guint n_more)
{
  const guint s = seq->pool->s;
  const guint64 want = ((guint64) seq->len + n_more + s - 1) / s;
  return (guint) (want - seq->table->len) + (n_more > 0 && last_block_needs_copy (seq));
}

gboolean
hz_kv_seq_reserve (HzKvSeq *seq, guint n_more)
{
  HzKvPool *pool = seq->pool;
  if (n_more == 0)
    return TRUE;
  seq_slide (seq);
  if (hz_kv_seq_blocks_needed (seq, n_more) > hz_kv_pool_n_available (pool))
    return FALSE;

  if (last_block_needs_copy (seq))
    {
      gint32 *last = &g_array_index (seq->table, gint32, seq->table->len - 1);
      Block *old = &pool->blocks[*last];
      if (old->ref == 1)
        {
          /* ours alone but indexed by the prefix cache: un-index instead of copying */
          hz_kv_block_uncache (pool, *last);
        }
      else
        {
          gint32 fresh = hz_kv_block_alloc (pool);
          g_assert (fresh >= 0);
          block_copy (pool, fresh, *last, seq->len % pool->s);
          want_drop (pool, *last, FALSE);   /* (the last block is always in the window) */
          hz_kv_block_unref (pool, *last);
          want_add (pool, fresh);
          *last = fresh;
        }
    }
  const guint want = (guint) (((guint64) seq->len + n_more + pool->s - 1) / pool->s);
  while (seq->table->len < want)
    {
      gint32 b = hz_kv_block_alloc (pool);
      g_assert (b >= 0);
      want_add (pool, b);
      g_array_append_val (seq->table, b);
    }
  seq->len += n_more;
  return TRUE;
}

void
hz_kv_seq_truncate (HzKvSeq *seq, guint n)
{
  g_return_if_fail (n <= seq->len);
  /* the window's K/V before swa_lo is gone: a shorter sequence must not need it */
  g_return_if_fail (n == 0 || hz_kv_pool_window_first_block (seq->pool, n) >= seq->swa_lo);
  const guint keep = (n + seq->pool->s - 1) / seq->pool->s;
  for (guint i = keep; i < seq->table->len; i++)
    {
      if (i >= seq->swa_lo)
        want_drop (seq->pool, hz_kv_seq_table (seq)[i], FALSE);
      hz_kv_block_unref (seq->pool, hz_kv_seq_table (seq)[i]);
    }
  g_array_set_size (seq->table, keep);
  seq->swa_lo = MIN (seq->swa_lo, keep);
  /* hashed blocks must be full and computed */
  g_array_set_size (seq->hashes, MIN (seq->hashes->len, n / seq->pool->s));
  seq->len = n;
}

HzKvSeq *
hz_kv_seq_fork (const HzKvSeq *seq)
{
  HzKvSeq *child = hz_kv_seq_new (seq->pool);
  g_array_append_vals (child->table, seq->table->data, seq->table->len);
  g_array_append_vals (child->hashes, seq->hashes->data, seq->hashes->len);
  for (guint i = 0; i < seq->table->len; i++)
    {
      hz_kv_block_ref (seq->pool, hz_kv_seq_table (seq)[i]);
      if (i >= seq->swa_lo)
        want_add (seq->pool, hz_kv_seq_table (seq)[i]);
    }
  child->swa_lo = seq->swa_lo;
  child->len = seq->len;
  child->cache_salt = seq->cache_salt;
  return child;
}

void
hz_kv_seq_append_block (HzKvSeq *seq, gint32 block)
{
  g_return_if_fail (seq->len % seq->pool->s == 0);
  want_add (seq->pool, block);
  g_array_append_val (seq->table, block);
  seq->len += seq->pool->s;
}

/* ----------------------------------------------------------------- check */

gboolean
hz_kv_pool_check (const HzKvPool *pool, HzKvSeq *const *seqs, guint n_seqs,
                  const guint *extra_refs, GError **error)
{
  g_autofree guint *count = g_new0 (guint, pool->P);
  g_autofree guint *wants = g_new0 (guint, pool->P);
  g_autofree guint8 *seen = g_new0 (guint8, pool->P);

#define FAIL(...) \
  do { g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_FAILED, __VA_ARGS__); \
       return FALSE; } while (0)
  for (guint i = 0; i < n_seqs; i++)
    {
      const HzKvSeq *q = seqs[i];
      const guint want = (q->len + pool->s - 1) / pool->s;
      if (q->table->len != want)
        FAIL ("sequence %u has %u tokens in %u blocks (want %u)", i, q->len, q->table->len,
              want);
      for (guint j = 0; j < q->table->len; j++)
        {
          const gint32 b = hz_kv_seq_table (q)[j];
          if (b < 0 || (guint) b >= pool->P)
            FAIL ("sequence %u lists block %d outside the pool", i, b);
          count[b]++;
          wants[b] += j >= q->swa_lo;
          if (pool->n_win && j >= hz_kv_pool_window_first_block (pool, q->len)
              && pool->blocks[b].slot < 0)
            FAIL ("sequence %u's block %u (%d) is in its window but has no window storage",
                  i, j, b);
        }
    }
  guint n_slotted = 0, n_idle = 0;
  for (guint b = 0; pool->n_win && b < pool->P; b++)
    {
      const Block *bl = &pool->blocks[b];
      n_slotted += bl->slot >= 0;
      if (bl->wants != wants[b])
        FAIL ("block %u is wanted by %u windows but counts %u", b, wants[b], bl->wants);
      if (bl->on[L_IDLE] != (bl->slot >= 0 && bl->wants == 0))
        FAIL ("block %u: slot %d, %u wants, %s the idle list", b, bl->slot, bl->wants,
              bl->on[L_IDLE] ? "on" : "not on");
    }
  for (gint32 b = pool->list[L_IDLE].head; b >= 0; b = pool->blocks[b].link[L_IDLE].next)
    n_idle++;
  if (pool->n_win && (n_idle != pool->list[L_IDLE].n
                      || n_slotted + pool->n_free_slots != pool->n_slots))
    FAIL ("window slots: %u idle listed (counter %u), %u held + %u free of %u", n_idle,
          pool->list[L_IDLE].n, n_slotted, pool->n_free_slots, pool->n_slots);
  for (guint b = 0; b < pool->P; b++)
    {
      const guint want = count[b] + (extra_refs ? extra_refs[b] : 0);
      if (pool->blocks[b].ref != want)
        FAIL ("block %u has reference count %u but %u holders", b, pool->blocks[b].ref, want);
    }
  for (guint i = 0; i < pool->n_free; i++)
    {
      const gint32 b = pool->free_stack[i];
      if (seen[b]++ || pool->blocks[b].ref != 0 || pool->blocks[b].cached
          || pool->blocks[b].slot >= 0)
        FAIL ("free block %d is listed twice, referenced, cached or holds a window slot", b);
    }
  guint n_lru = 0;
  for (gint32 b = pool->list[L_LRU].head; b >= 0; b = pool->blocks[b].link[L_LRU].next, n_lru++)
    if (seen[b]++ || pool->blocks[b].ref != 0 || !pool->blocks[b].cached)
      FAIL ("evictable block %d is listed twice, referenced or not cached", b);
  if (n_lru != pool->list[L_LRU].n)
    FAIL ("eviction list has %u blocks, counter says %u", n_lru, pool->list[L_LRU].n);
  for (guint b = 0; b < pool->P; b++)
    if (!seen[b] && pool->blocks[b].ref == 0)
      FAIL ("block %u is leaked: no reference and on no list", b);
#undef FAIL
  return TRUE;
}
