/* engine/threadpool.h — persistent worker pool for the CPU backend's fine-grained
 * data-parallel work (one matmul, one attention layer: microseconds to milliseconds).
 *
 * Model: fork-join "parallel regions". hz_threadpool_run() runs fn(ith, nth, data) on nth
 * threads — the caller is ith 0, pool workers are 1..nth-1 — and returns when all of them
 * have returned. Inside a region, hz_threadpool_barrier() synchronises the nth threads (for
 * multi-phase work such as "quantize activations, then multiply").
 *
 * Every wait (idle workers, the caller waiting for a region to end, barriers) spins for at
 * most ~100 µs and then blocks on a condition variable: back-to-back regions cost ~1 µs to
 * start on an idle machine, an idle pool costs no CPU, and on an oversubscribed machine a
 * waiting thread gives its core to the (descheduled) thread it waits for instead of
 * spinning through its time slice. GThreadPool
 * is too coarse for this: it queues one closure per task and wakes threads through a
 * mutex-protected queue for every task.
 *
 * Thread safety: a pool is driven by one thread at a time (the one calling
 * hz_threadpool_run); regions do not nest. hz_threadpool_barrier() may only be called from
 * inside a region, by all nth threads of it.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _HzThreadPool HzThreadPool;

/** Body of a parallel region: called once per thread with ith in [0, nth). */
typedef void (*HzParallelFn) (guint ith, guint nth, gpointer data);

/** Create a pool able to run regions of up to `n_threads` threads (the caller counts as
 *  one: n_threads - 1 workers are started). n_threads 0 means g_get_num_processors().
 *  Never fails (thread creation failure aborts, as g_thread_new does). */
HzThreadPool *hz_threadpool_new (guint n_threads);

/** Stop and join the workers. NULL is ignored. */
void hz_threadpool_free (HzThreadPool *pool);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzThreadPool, hz_threadpool_free)

/** Maximum threads of a region (the value given to hz_threadpool_new, resolved). */
guint hz_threadpool_n_threads (const HzThreadPool *pool);

/** Run fn(ith, nth, data) on nth threads (clamped to [1, n_threads]); returns when every
 *  call has returned. nth == 1 calls fn directly without touching the workers. Memory
 *  written by any thread inside the region is visible to the caller afterwards. */
void hz_threadpool_run (HzThreadPool *pool, guint nth, HzParallelFn fn, gpointer data);

/** Barrier across the nth threads of the current region (bounded spin, then blocking).
 *  Writes before the barrier are visible to all threads after it. */
void hz_threadpool_barrier (HzThreadPool *pool);

G_END_DECLS
