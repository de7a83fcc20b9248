/* engine/threadpool.c — persistent fork-join worker pool (see threadpool.h).
 *
 * Every wait in the pool (an idle worker waiting for the next region, the caller waiting
 * for the workers to finish, a thread waiting at a barrier) is one primitive, wait_until():
 * spin for at most HZ_SPIN_US microseconds re-reading an atomic word, then block on the
 * pool's condition variable (a futex on Linux). Spinning keeps back-to-back regions cheap
 * (~1 µs to start) on an idle machine; the bound keeps a waiting thread from burning the
 * core that the thread it waits for needs when the machine is oversubscribed (more runnable
 * threads than cores: a spinning waiter then holds its core for a whole time slice while
 * the thread it waits for is descheduled, and decode collapses).
 *
 * Lost wake-ups are excluded by a Dekker-style handshake on seq_cst atomics: a waiter
 * increments `n_sleeping` *before* re-checking its word under `mutex`; a thread that
 * changes a word does so with a seq_cst RMW and *then* reads `n_sleeping`, broadcasting
 * under the mutex only when someone sleeps (one of the two always sees the other).
 * Because all waits share one condition variable, wake-ups are broadcasts and every
 * waiter re-checks its own word.
 *
 * Completion: every worker (also those beyond nth) increments `n_done`; the caller waits
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

/* How long a waiting thread spins before blocking. Back-to-back regions (prompt
 * processing, the matmuls of one decode step) arrive within a few microseconds, and a
 * balanced region's threads reach its barrier within microseconds of each other. */
#define HZ_SPIN_US 100

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
  _Atomic guint  stop;

  _Atomic guint  n_sleeping;
  GMutex         mutex;
  GCond          cond;

  /* barrier */
  _Atomic guint  barrier_count;
  _Atomic guint  barrier_phase;
};

/* What a waiter waits for: *word != value (WAIT_CHANGE) or *word == value (WAIT_EQUAL);
 * a non-zero `stop` also ends an idle worker's wait. */
typedef enum { WAIT_CHANGE, WAIT_EQUAL } WaitKind;

static inline gboolean
wait_done (HzThreadPool *pool, _Atomic guint *word, guint value, WaitKind kind,
           gboolean honour_stop)
{
  guint v = atomic_load_explicit (word, memory_order_acquire);
  if ((kind == WAIT_CHANGE) == (v != value))
    return TRUE;
  return honour_stop && atomic_load_explicit (&pool->stop, memory_order_acquire);
}

static void
wait_until (HzThreadPool *pool, _Atomic guint *word, guint value, WaitKind kind,
            gboolean honour_stop)
{
  if (wait_done (pool, word, value, kind, honour_stop))
    return;
  gint64 start = 0;
  for (guint spins = 1;; spins++)
    {
      hz_cpu_relax ();
      if (wait_done (pool, word, value, kind, honour_stop))
        return;
      if ((spins & 31) == 0)
        {
          gint64 now = g_get_monotonic_time ();
          if (start == 0)
            start = now;
          else if (now - start > HZ_SPIN_US)
            break;
        }
    }
  g_mutex_lock (&pool->mutex);
  atomic_fetch_add (&pool->n_sleeping, 1);
  while (!wait_done (pool, word, value, kind, honour_stop))
    g_cond_wait (&pool->cond, &pool->mutex);
  atomic_fetch_sub (&pool->n_sleeping, 1);
  g_mutex_unlock (&pool->mutex);
}

/* Call after changing a waited-on word with a seq_cst RMW. */
static inline void
wake_sleepers (HzThreadPool *pool)
{
  if (atomic_load (&pool->n_sleeping) > 0)
    {
      g_mutex_lock (&pool->mutex);
      g_cond_broadcast (&pool->cond);
      g_mutex_unlock (&pool->mutex);
    }
}

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
      wait_until (pool, &pool->generation, seen, WAIT_CHANGE, TRUE);
      if (atomic_load (&pool->stop))
        break;
      seen = atomic_load_explicit (&pool->generation, memory_order_acquire);
      /* Every worker acknowledges every region, participating or not, so the caller
       * never reuses the region fields while a late worker may still read them. */
      if (w->ith < pool->nth)
        pool->fn (w->ith, pool->nth, pool->data);
      atomic_fetch_add (&pool->n_done, 1);
      wake_sleepers (pool);
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
  atomic_store (&pool->stop, 1);
  g_mutex_lock (&pool->mutex);
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
  wake_sleepers (pool);

  fn (0, nth, data);

  wait_until (pool, &pool->n_done, pool->n_threads - 1, WAIT_EQUAL, FALSE);
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
      wake_sleepers (pool);
    }
  else
    wait_until (pool, &pool->barrier_phase, phase, WAIT_CHANGE, FALSE);
}
