/* engine/prefix-cache.h — automatic prefix caching over the paged KV pool.
 *
 * Design (vLLM's automatic prefix caching): every *full* block of computed K/V is indexed
 * by the hash of (hash of the previous block, the block's s token ids), i.e. by its whole
 * prefix. A new request walks its prompt block by block and takes every block found in
 * the index (reference + 1, no computation); it stops at the first miss. Blocks released
 * by every sequence stay indexed and keep their contents (evictable, kv-paged.h) until the
 * pool needs them, least recently released first — so a system prompt, a few-shot preamble
 * or the conversation so far is computed once and reused by the next request or turn.
 *
 * Exactness: a hit is never a hash collision. Each entry keeps its s token ids and the
 * (block id, generation) of the block indexed for its prefix; a lookup compares both, so by
 * induction over the chain a matched block holds K/V of exactly the same token prefix.
 *
 * Window layers (kv-paged.h): a hit stops at the longest matched length whose window still
 * has its window-layer K/V (blocks whose slots were given back count as misses there).
 *
 * Sequences whose K/V depends on more than the tokens (LoRA adapters) carry a cache salt
 * (HzKvSeq.cache_salt): the chain starts from a salt-specific root and every entry keeps
 * its salt, so blocks are shared only between sequences of the same salt, exactly.
 *
 * Units: token counts; blocks of hz_kv_pool_block_size() tokens.
 * Thread safety: none (the serving loop's thread), like the pool.
 */
#pragma once

#include <glib.h>
#include "hanzo/engine.h"
#include "kv-paged.h"

G_BEGIN_DECLS

typedef struct _HzPrefixCache HzPrefixCache;

/** Create a cache over `pool` (which must outlive it); it installs the pool's evict hook. */
HzPrefixCache *hz_prefix_cache_new (HzKvPool *pool);
/** Forget every entry (evictable blocks become free) and remove the hook. NULL ignored. */
void           hz_prefix_cache_free (HzPrefixCache *cache);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzPrefixCache, hz_prefix_cache_free)

/** For an empty `seq`: append (with a reference each) the cached blocks of the longest
 *  indexed prefix of tokens[0..n), whole blocks only. Returns the tokens covered (a
 *  multiple of s, at most n). */
guint hz_prefix_cache_match (HzPrefixCache *cache, HzKvSeq *seq, const HzToken *tokens,
                             guint n);

/** Index every full block among the first n_computed tokens of `seq` (whose K/V must be
 *  computed; tokens[i] is the token at position i) that is not indexed yet. A block whose
 *  prefix is already indexed under another block (computed twice concurrently) is left
 *  out. */
void  hz_prefix_cache_commit (HzPrefixCache *cache, HzKvSeq *seq, const HzToken *tokens,
                              guint n_computed);

/** Indexed blocks. */
guint hz_prefix_cache_n_entries (const HzPrefixCache *cache);

/** Chained block hash: h(prev, tokens[0..s)). Exposed for tests. */
guint64 hz_prefix_cache_hash (guint64 prev, const HzToken *tokens, guint s);

G_END_DECLS
