/* engine/threadpool.c — persistent fork-join worker pool (see threadpool.h).
 *
 * Dispatch protocol: the caller publishes (fn, data, nth) and then increments `generation`
 * (seq_cst). Workers wait for `generation` to change: first spinning (HZ_SPIN_US
 * microseconds), then sleeping on `cond`. To avoid lost wake-ups a worker announces itself
 * in `n_sleeping` *before* re-checking `generation` under `mutex`, and the caller checks
 * `n_sleeping` *after* incrementing `generation` (a Dekker-style handshake on seq_cst
 * atomics), broadcasting under the mutex only when someone sleeps.
 * Completion: every worker (also those beyond nth) increments `n_done`; the caller spins
 * until all have, so region fields are never overwritten while a worker still reads them.
 * Barrier: counter + phase (sense reversal).
 */
#include "threadpool.h"

#include <stdatomic.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define hz_cpu_relax() _mm_pause ()
#elif defined(__aarch64__)
#define hz_cpu_relax() __asm__ __volatile__ ("yield")
#else
#define hz_cpu_relax() do { } while (0)
#endif

/* How long an idle worker spins before sleeping. Back-to-back regions (prompt processing)
 * arrive within a few microseconds; decode of tiny models never wakes workers at all. */
#define HZ_SPIN_US 200

/* Waiting inside a region (barrier, completion) spins, yielding the core every
 * HZ_YIELD_SPINS iterations: on an oversubscribed machine the thread being waited for may
 * be descheduled, and pure spinning would then burn its time slice. */
#define HZ_YIELD_SPINS 4096

static inline void
wait_relax (guint *spins)
{
  if (++*spins % HZ_YIELD_SPINS == 0)
    g_thread_yield ();
  else
    hz_cpu_relax ();
}

typedef struct {
  HzThreadPool *pool;
  guint         ith;
  GThread      *thread;
} HzWorker;

struct _HzThreadPool {
  guint          n_threads;
  HzWorker      *workers;          /* [n_threads - 1] */

  /* current region (written by the caller before bumping generation) */
  HzParallelFn   fn;
  gpointer       data;
  guint          nth;

  _Atomic guint  generation;
  _Atomic guint  n_done;
  _Atomic gboolean stop;

  _Atomic guint  n_sleeping;
  GMutex         mutex;
  GCond          cond;

  /* barrier */
  _Atomic guint  barrier_count;
  _Atomic guint  barrier_phase;
};

static gpointer
worker_main (gpointer p)
{
  HzWorker *w = p;
  HzThreadPool *pool = w->pool;
  /* Not a load: a region may be dispatched before this thread first runs, and it must
   * not be mistaken for the starting point. Generations start at 0. */
  guint seen = 0;

  for (;;)
    {
      guint gen = atomic_load (&pool->generation);
      if (gen == seen && !atomic_load (&pool->stop))
        {
          gint64 start = g_get_monotonic_time ();
          for (guint spins = 0;; spins++)
            {
              hz_cpu_relax ();
              gen = atomic_load_explicit (&pool->generation, memory_order_acquire);
              if (gen != seen || atomic_load_explicit (&pool->stop, memory_order_relaxed))
                break;
              if ((spins & 63) == 63 && g_get_monotonic_time () - start > HZ_SPIN_US)
                break;
            }
        }
      if (gen == seen && !atomic_load (&pool->stop))
        {
          g_mutex_lock (&pool->mutex);
          atomic_fetch_add (&pool->n_sleeping, 1);
          while ((gen = atomic_load (&pool->generation)) == seen && !atomic_load (&pool->stop))
            g_cond_wait (&pool->cond, &pool->mutex);
          atomic_fetch_sub (&pool->n_sleeping, 1);
          g_mutex_unlock (&pool->mutex);
        }
      if (atomic_load (&pool->stop))
        break;
      seen = gen;
      /* Every worker acknowledges every region, participating or not, so the caller
       * never reuses the region fields while a late worker may still read them. */
      if (w->ith < pool->nth)
        pool->fn (w->ith, pool->nth, pool->data);
      atomic_fetch_add_explicit (&pool->n_done, 1, memory_order_release);
    }
  return NULL;
}

HzThreadPool *
hz_threadpool_new (guint n_threads)
{
  HzThreadPool *pool = g_new0 (HzThreadPool, 1);

  if (n_threads == 0)
    n_threads = g_get_num_processors ();
  pool->n_threads = MAX (n_threads, 1);
  pool->nth = 1;
  g_mutex_init (&pool->mutex);
  g_cond_init (&pool->cond);
  pool->workers = g_new0 (HzWorker, pool->n_threads);
  for (guint i = 1; i < pool->n_threads; i++)
    {
      HzWorker *w = &pool->workers[i - 1];
      w->pool = pool;
      w->ith = i;
      w->thread = g_thread_new ("hz-worker", worker_main, w);
    }
  return pool;
}

void
hz_threadpool_free (HzThreadPool *pool)
{
  if (pool == NULL)
    return;
  g_mutex_lock (&pool->mutex);
  atomic_store (&pool->stop, TRUE);
  g_cond_broadcast (&pool->cond);
  g_mutex_unlock (&pool->mutex);
  for (guint i = 1; i < pool->n_threads; i++)
    g_thread_join (pool->workers[i - 1].thread);
  g_free (pool->workers);
  g_mutex_clear (&pool->mutex);
  g_cond_clear (&pool->cond);
  g_free (pool);
}

guint
hz_threadpool_n_threads (const HzThreadPool *pool)
{
  return pool->n_threads;
}

void
hz_threadpool_run (HzThreadPool *pool, guint nth, HzParallelFn fn, gpointer data)
{
  nth = CLAMP (nth, 1, pool->n_threads);
  if (nth == 1)
    {
      fn (0, 1, data);
      return;
    }

  pool->fn = fn;
  pool->data = data;
  pool->nth = nth;
  atomic_store (&pool->n_done, 0);
  atomic_store (&pool->barrier_count, 0);
  atomic_fetch_add (&pool->generation, 1);       /* seq_cst: publishes the fields above */
  if (atomic_load (&pool->n_sleeping) > 0)
    {
      g_mutex_lock (&pool->mutex);
      g_cond_broadcast (&pool->cond);
      g_mutex_unlock (&pool->mutex);
    }

  fn (0, nth, data);

  guint spins = 0;
  while (atomic_load_explicit (&pool->n_done, memory_order_acquire) != pool->n_threads - 1)
    wait_relax (&spins);
  pool->nth = 1;  /* hz_threadpool_barrier() outside a region is a no-op */
}

void
hz_threadpool_barrier (HzThreadPool *pool)
{
  guint nth = pool->nth;
  if (nth <= 1)
    return;
  guint phase = atomic_load (&pool->barrier_phase);
  if (atomic_fetch_add (&pool->barrier_count, 1) == nth - 1)
    {
      atomic_store (&pool->barrier_count, 0);
      atomic_fetch_add (&pool->barrier_phase, 1);
    }
  else
    {
      guint spins = 0;
      while (atomic_load (&pool->barrier_phase) == phase)
        wait_relax (&spins);
    }
}
