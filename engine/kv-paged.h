/* engine/kv-paged.h — paged KV cache: a pool of P fixed-size blocks of s token slots,
 * per-sequence block tables, reference counts and copy-on-write forks.
 *
 * Design (PagedAttention, Kwon et al., "Efficient Memory Management for Large Language
 * Model Serving with PagedAttention", SOSP 2023): the KV memory of all sequences is one
 * pool of blocks; a sequence of l tokens holds exactly ceil(l / s) blocks, listed in its
 * block table (logical block i -> physical block id), so internal fragmentation is at
 * most s - 1 slots per sequence and there is no external fragmentation. Token position p
 * of a sequence lives in slot p % s of block table[p / s].
 *
 * Sharing: a block has a reference count (the number of block tables that list it, plus
 * one while the prefix cache pins it for a caller). hz_kv_seq_fork() gives a new sequence
 * the same table (every count + 1). Before a sequence writes into a block that another
 * table also lists, or whose contents the prefix cache vouches for, it gets a private copy
 * (copy-on-write of the last, partially filled block; only that block can ever be
 * written: positions are appended).
 *
 * Eviction hook: blocks with reference count 0 that the prefix cache still indexes are not
 * free but *evictable*: they keep their contents, in least-recently-released order, and
 * are reused only when no free block is left; the pool then calls the evict hook so that
 * the cache forgets them (vLLM's automatic prefix caching). The pool itself knows nothing
 * of token ids or hashes (prefix-cache.h).
 *
 * Storage (optional; n_layer 0 gives a metadata-only pool for allocator tests), float32:
 *   K of block b, layer il: [kv_dim_k][s] (transposed: slot j of element e at e * s + j,
 *     so attention accumulates q[e] * K[e][j..] over contiguous slots, cpu/attention.h);
 *   V of block b, layer il: [s][kv_dim_v].
 * Per token per layer: (kv_dim_k + kv_dim_v) * 4 bytes.
 *
 * Sliding-window layers (Gemma; HzKvPoolParams.n_swa and layer_swa): a window layer's query
 * at position p reads positions p - n_swa < j <= p only, so a sequence keeps the window
 * layers' K/V of the blocks that still hold such positions and no others. Their storage is
 * a second store of n_slots block-sized slots: a block gets a slot when it is allocated; a
 * sequence gives back the slots of its blocks that fall out of the window of its next
 * position when it reserves more tokens (hz_kv_seq_reserve slides first), unless another
 * table still holds them within its window (forks, prefix-cache hits). A block released
 * while still in its sequence's window keeps its slot, idle, for prefix-cache hits (a hit
 * is used only up to a length whose window has its slots: prefix-cache.h); an allocation
 * takes the oldest idle slot when none is free. So a sequence of l tokens holds
 * ceil(l / s) blocks of full-layer storage but about ceil((n_swa + n) / s) + 1 slots (n:
 * its last reserve). Without window layers (n_swa 0, layer_swa NULL or all zero) nothing
 * of this applies and the pool is exactly the plain one.
 *
 * Units: slots and lengths are tokens; block ids are indices in [0, P).
 * Thread safety: none; a pool and its sequences are driven by one thread at a time (the
 * serving loop, hanzo/serving.h). Storage may be read and written by the CPU backend's
 * worker threads inside one forward pass while no allocation happens.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

#define HZ_KV_DEFAULT_BLOCK_SIZE 16

typedef struct _HzKvPool HzKvPool;

typedef struct {
  guint block_size;  /* s: token slots per block; 0 = HZ_KV_DEFAULT_BLOCK_SIZE */
  guint n_blocks;    /* P: blocks in the pool (>= 1) */
  guint n_layer;     /* layers of K/V storage; 0 = metadata only (no storage) */
  guint kv_dim_k;    /* floats of K per token per layer (n_head_kv * head_dim_k) */
  guint kv_dim_v;    /* floats of V per token per layer */
  /* sliding-window layers (all 0 / NULL: none) */
  guint         n_swa;      /* the window in tokens (hz_layer_swa's n_swa) */
  const guint8 *layer_swa;  /* [n_layer]: nonzero for a window layer (read at creation) */
  guint         n_slots;    /* blocks' worth of window-layer storage (0: n_blocks; at most
                             * n_blocks) */
} HzKvPoolParams;

/** Called when an evictable block (reference count 0, `cached` set) is taken for reuse;
 *  the hook must drop every index entry for the block. */
typedef void (*HzKvEvictFunc) (gint32 block, gpointer user_data);

/** Create a pool. Storage is allocated up front: n_layer * P * s * (kv_dim_k + kv_dim_v)
 *  floats. Errors: HZ_ENGINE_ERROR_INVALID_ARGUMENT for P == 0 or a size that does not
 *  fit in memory / the address space. */
HzKvPool *hz_kv_pool_new (const HzKvPoolParams *p, GError **error);
void      hz_kv_pool_free (HzKvPool *pool);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzKvPool, hz_kv_pool_free)

guint hz_kv_pool_block_size (const HzKvPool *pool);
guint hz_kv_pool_n_blocks (const HzKvPool *pool);
/** Blocks an allocation can take now: free plus evictable. */
guint hz_kv_pool_n_available (const HzKvPool *pool);
/** Blocks with reference count 0 that the prefix cache still indexes. */
guint hz_kv_pool_n_evictable (const HzKvPool *pool);
/** Floats of K and of V per token per layer (as created). */
void  hz_kv_pool_kv_dims (const HzKvPool *pool, guint *kv_dim_k, guint *kv_dim_v);
/** Bytes of K/V storage per token (all layers); 0 for a metadata-only pool. */
gsize hz_kv_pool_bytes_per_token (const HzKvPool *pool);
/** Bytes of K/V storage the pool allocated (full layers for n_blocks blocks, window layers
 *  for n_slots slots); 0 for a metadata-only pool. */
gsize hz_kv_pool_storage_bytes (const HzKvPool *pool);
/** The window of the pool's window layers (0: it has none). */
guint hz_kv_pool_window (const HzKvPool *pool);
/** Window-layer slots in all (0: no window layers), and those held by blocks. */
guint hz_kv_pool_n_slots (const HzKvPool *pool);
guint hz_kv_pool_n_slots_used (const HzKvPool *pool);
/** The first logical block a window layer's query at position pos reads: (pos + 1 -
 *  n_swa) / s, or 0 (no window layers, or pos < n_swa). */
guint hz_kv_pool_window_first_block (const HzKvPool *pool, guint pos);

/** Install the eviction hook (one per pool; NULL removes it). */
void hz_kv_pool_set_evict_func (HzKvPool *pool, HzKvEvictFunc func, gpointer user_data);
/** Called when copy-on-write copies the first n_slots slots of block src into block dst
 *  (besides the copy of the pool's own storage, if any): for storage kept outside the pool,
 *  e.g. the GPU's (backend-hip/forward-gpu-paged.h), usually with a metadata-only pool. */
typedef void (*HzKvCopyFunc) (gint32 dst, gint32 src, guint n_slots, gpointer user_data);
/** Install the copy hook (one per pool; NULL removes it). */
void hz_kv_pool_set_copy_func (HzKvPool *pool, HzKvCopyFunc func, gpointer user_data);

/* ---- blocks (used by sequences and the prefix cache) ---- */

/** Take a block (free first, else the least recently released evictable one, after the
 *  evict hook ran); its count is 1 and its generation is new. Returns -1 when none. */
gint32  hz_kv_block_alloc (HzKvPool *pool);
/** Add a reference. An evictable block leaves the eviction list (a prefix-cache hit). */
void    hz_kv_block_ref (HzKvPool *pool, gint32 block);
/** Drop a reference; at 0 the block becomes evictable when `cached`, else free. */
void    hz_kv_block_unref (HzKvPool *pool, gint32 block);
guint   hz_kv_block_refcount (const HzKvPool *pool, gint32 block);
/** Generation: changes every time the block is (re)allocated or its contents may change,
 *  so that an index entry (block, generation) can tell a stale block from a live one. */
guint32 hz_kv_block_generation (const HzKvPool *pool, gint32 block);
/** Mark the block as indexed by the prefix cache (called by the cache on insertion). */
void    hz_kv_block_set_cached (HzKvPool *pool, gint32 block);
/** Stop vouching for the block's contents: if it is cached, the evict hook runs (the cache
 *  forgets it), the generation changes and an evictable block becomes free. */
void    hz_kv_block_uncache (HzKvPool *pool, gint32 block);
gboolean hz_kv_block_is_cached (const HzKvPool *pool, gint32 block);
/** Whether the block holds window-layer K/V (always TRUE without window layers). */
gboolean hz_kv_block_has_window (const HzKvPool *pool, gint32 block);
/** K storage of (layer, block): [kv_dim_k][s] floats; NULL for a metadata-only pool. For
 *  a window layer the block must hold its slot (hz_kv_block_has_window). */
float  *hz_kv_block_k (HzKvPool *pool, guint layer, gint32 block);
/** V storage of (layer, block): [s][kv_dim_v] floats; NULL for a metadata-only pool. */
float  *hz_kv_block_v (HzKvPool *pool, guint layer, gint32 block);

/* ---- sequences ---- */

/** A sequence's view of the pool: `len` token slots in `table` (ceil(len / s) blocks).
 *  Fields are read-only outside kv-paged.c and prefix-cache.c. */
typedef struct {
  HzKvPool *pool;
  GArray   *table;     /* gint32 block ids, logical order */
  guint     len;       /* tokens with a slot */
  /* prefix-cache bookkeeping (prefix-cache.c): hash of the chain ending at block i, for
   * the first hashes->len blocks, which are full and hold computed K/V */
  GArray   *hashes;    /* guint64 */
  guint64   cache_salt;/* what else the K/V depends on (LoRA adapters): blocks are shared
                          through the prefix cache only between equal salts; 0 = the base
                          model; copied by hz_kv_seq_fork */
  guint     swa_lo;    /* window layers: the sequence holds its blocks from this one on
                          within its window (the ones before it were slid past) */
} HzKvSeq;

HzKvSeq *hz_kv_seq_new (HzKvPool *pool);
/** Release every block of the sequence and free it. NULL is ignored. */
void     hz_kv_seq_free (HzKvSeq *seq);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzKvSeq, hz_kv_seq_free)

static inline guint hz_kv_seq_n_blocks (const HzKvSeq *seq) { return seq->table->len; }
static inline const gint32 *
hz_kv_seq_table (const HzKvSeq *seq) { return (const gint32 *) (void *) seq->table->data; }

/** Blocks that hz_kv_seq_reserve (seq, n_more) would allocate: new blocks for the slots
 *  beyond the last block, plus one for copy-on-write when the last block is partial and
 *  shared or cached. */
guint    hz_kv_seq_blocks_needed (const HzKvSeq *seq, guint n_more);
/** Make room for n_more more tokens (len += n_more), allocating blocks and copying the
 *  last block first if it is shared (copy-on-write). All or nothing: returns FALSE, with
 *  the sequence unchanged, when the pool has fewer than hz_kv_seq_blocks_needed() blocks
 *  available. */
gboolean hz_kv_seq_reserve (HzKvSeq *seq, guint n_more);
/** Shrink to n tokens (n <= len), releasing the blocks past ceil(n / s). With window layers
 *  n must be 0 or a length whose window the sequence still holds
 *  (hz_kv_pool_window_first_block (pool, n) >= swa_lo). */
void     hz_kv_seq_truncate (HzKvSeq *seq, guint n);
/** A new sequence sharing all of seq's blocks (each count + 1); writes diverge by
 *  copy-on-write. Never fails (allocates no block). */
HzKvSeq *hz_kv_seq_fork (const HzKvSeq *seq);
/** Append an already referenced block (the caller's reference moves to the sequence);
 *  the sequence must end on a block boundary. len grows by s. Used by prefix-cache hits. */
void     hz_kv_seq_append_block (HzKvSeq *seq, gint32 block);

/** Consistency check for tests: every block's count equals the number of tables in
 *  `seqs` listing it plus `extra_refs[b]` (nullable), free/evictable lists match the
 *  counts, and every table has ceil(len / s) blocks. Returns FALSE with a message. */
gboolean hz_kv_pool_check (const HzKvPool *pool, HzKvSeq *const *seqs, guint n_seqs,
                           const guint *extra_refs, GError **error);

G_END_DECLS
