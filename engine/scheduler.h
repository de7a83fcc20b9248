/* engine/scheduler.h — iteration-level scheduling of many sequences over the paged KV pool.
 *
 * Model (Orca, Yu et al., "Orca: A Distributed Serving System for Transformer-Based
 * Generative Models", OSDI 2022; vLLM's scheduler, Kwon et al. SOSP 2023): each step of
 * the serving loop runs one forward pass over a batch that mixes, per sequence, either one
 * decode token or a chunk of its prompt (chunked prefill), under a token budget per step.
 * Sequences join and leave the batch between steps (continuous batching).
 *
 * Queues: `waiting` and `running`, both ordered by (priority class, arrival): interactive
 * before background, first come first served within a class.
 *
 * One step (hz_scheduler_schedule):
 *  0. Priority: while the head of `waiting` outranks the last running sequence, it is
 *     admitted if it fits (step 2's rule), else that running sequence is preempted. So a
 *     waiting sequence never waits while one of a lower class runs.
 *  1. Running sequences, in order, get their next tokens: a decode token, or the next
 *     prompt chunk, at most the remaining budget. A decode token that needs a new block
 *     when none is available preempts the last (lowest-priority, latest) running sequence
 *     — possibly itself — until it fits.
 *  2. Admission: while budget is left and fewer than max_seqs run, the head of `waiting`
 *     is admitted iff its blocks fit: with the prefix cache off, iff
 *         sum over running i of ceil(l_i / s) + ceil(l_head / s) <= P
 *     (l: tokens of the sequence, prompt plus tokens generated before a preemption; all of
 *     its blocks are reserved at admission). With the prefix cache, blocks found in it are
 *     taken instead of allocated. A head that does not fit blocks the queue (no
 *     overtaking, so large requests do not starve).
 * Preemption frees every block of the sequence and puts it back in `waiting` (in its
 * original place); on readmission its prompt and generated tokens are recomputed as one
 * prompt (vLLM's "recompute" mode), so greedy output is unchanged.
 *
 * Invariants after every step: every running sequence holds exactly ceil(l_i / s) blocks
 * (fragmentation < s slots per sequence); waiting sequences hold none.
 *
 * Units: tokens; blocks of hz_kv_pool_block_size() tokens. Thread safety: none (the
 * serving loop's thread).
 */
#pragma once

#include <glib.h>
#include "hanzo/engine.h"
#include "kv-paged.h"
#include "prefix-cache.h"

G_BEGIN_DECLS

typedef enum { HZ_SEQ_NEW, HZ_SEQ_WAITING, HZ_SEQ_RUNNING, HZ_SEQ_FINISHED } HzSeqState;

/** One sequence. The caller owns it (and appends sampled tokens to `tokens`); the
 *  scheduler owns `kv` while it runs. */
typedef struct {
  guint64    id;
  guint      priority;      /* 0 = most urgent (HZ_PRIORITY_INTERACTIVE, serving.h) */
  guint64    arrival;       /* set by hz_scheduler_add: FCFS order */
  GArray    *tokens;        /* HzToken: prompt then generated; token i at position i */
  guint      n_computed;    /* tokens whose K/V is in the cache */
  HzKvSeq   *kv;            /* block table while running, else NULL */
  HzSeqState state;
  guint      n_preemptions;
  guint      n_cached;      /* tokens taken from the prefix cache at the last admission */
  guint      n_evaluated;   /* tokens computed for this sequence, all steps together */
  guint64    cache_salt;    /* prefix-cache salt given to its kv (kv-paged.h); 0 = base */
  gpointer   user_data;
} HzSchedSeq;

/** A new sequence in state HZ_SEQ_NEW with a copy of the prompt (n >= 1). */
HzSchedSeq *hz_sched_seq_new (guint64 id, guint priority, const HzToken *prompt, guint n);
/** Free a sequence that is not in a scheduler (NEW or FINISHED). */
void        hz_sched_seq_free (HzSchedSeq *seq);

/** One entry of a step: compute tokens[pos0 .. pos0 + n) of `seq` (K/V written to its
 *  block table); `logits`: the last of them is the sequence's last token, so its logits
 *  give the next token. */
typedef struct {
  HzSchedSeq *seq;
  guint       pos0, n;
  gboolean    logits;
} HzSchedItem;

typedef struct {
  GArray *items;            /* HzSchedItem */
  guint   n_tokens;         /* sum of n */
  guint   n_admitted, n_preempted;
} HzSchedBatch;

void hz_sched_batch_init (HzSchedBatch *b);
void hz_sched_batch_clear (HzSchedBatch *b);

typedef struct {
  guint max_batch_tokens;   /* token budget per step (>= 1) */
  guint max_seqs;           /* running sequences at most (>= 1) */
} HzSchedulerParams;

typedef struct _HzScheduler HzScheduler;

/** `pool` (and `cache`, nullable: no prefix caching) must outlive the scheduler. */
HzScheduler *hz_scheduler_new (HzKvPool *pool, HzPrefixCache *cache,
                               const HzSchedulerParams *p);
/** Frees the scheduler; sequences still queued are released (blocks freed) and left in
 *  state FINISHED for their owner to free. */
void         hz_scheduler_free (HzScheduler *s);

/** Queue a NEW sequence (state -> WAITING). The caller keeps ownership. Its length must
 *  fit the pool alone (ceil(l / s) <= P) or it will never be admitted. */
void     hz_scheduler_add (HzScheduler *s, HzSchedSeq *seq);
/** Plan one step into `batch` (cleared first). Returns FALSE when nothing is to run. */
gboolean hz_scheduler_schedule (HzScheduler *s, HzSchedBatch *batch);
/** After the forward pass of `batch`: advance n_computed and index the full blocks in the
 *  prefix cache. Call before appending sampled tokens. */
void     hz_scheduler_commit (HzScheduler *s, const HzSchedBatch *batch);
/** Take a sequence out (finished, cancelled): its blocks are released (full computed ones
 *  stay in the prefix cache), state -> FINISHED. */
void     hz_scheduler_remove (HzScheduler *s, HzSchedSeq *seq);
/** Start a running sequence sharing all of `parent`'s blocks (copy-on-write): `child`
 *  (NEW, with the same tokens) becomes RUNNING with parent's n_computed. For n samples of
 *  one prompt; exceeds max_seqs if need be (the next decode preempts under pressure). */
void     hz_scheduler_fork (HzScheduler *s, HzSchedSeq *parent, HzSchedSeq *child);

guint hz_scheduler_n_waiting (const HzScheduler *s);
guint hz_scheduler_n_running (const HzScheduler *s);
/** Running / waiting sequences in queue order (borrowed). */
HzSchedSeq *const *hz_scheduler_running (const HzScheduler *s, guint *n);
HzSchedSeq *const *hz_scheduler_waiting (const HzScheduler *s, guint *n);
/** Preemptions so far. */
guint64 hz_scheduler_n_preemptions (const HzScheduler *s);

G_END_DECLS
