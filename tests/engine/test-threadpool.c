/* tests/engine/test-threadpool.c — the CPU backend's worker pool (threadpool.h) under
 * oversubscription, and the memory-bandwidth measurement (membw.h).
 *
 * Thread pool: regions with barriers where one participant sleeps before arriving (the
 * others must block, not spin, and still see every write), more threads than cores, and an
 * idle pool that must not consume CPU time. The basic fork-join/barrier arithmetic over
 * 2,000 regions is in test-model.c. Bandwidth: a positive finite value within a time
 * budget, single- and multi-threaded, wall-clock and CPU-time variants.
 */
#include <glib.h>
#include <math.h>
#include <string.h>
#include <sys/resource.h>

#include "threadpool.h"
#include "membw.h"

typedef struct {
  HzThreadPool *pool;
  gint64       *slots;      /* [nth] */
  gint64        sums[3];    /* what thread 0 saw after each barrier */
  guint         sleeper;    /* this thread sleeps before each barrier */
  gulong        sleep_us;
} BarrierJob;

static void
barrier_worker (guint ith, guint nth, gpointer data)
{
  BarrierJob *job = data;
  for (int phase = 0; phase < 3; phase++)
    {
      if (ith == job->sleeper)
        g_usleep (job->sleep_us);
      job->slots[ith] = (gint64) (phase + 1) * (ith + 1);
      hz_threadpool_barrier (job->pool);
      if (ith == 0)
        {
          gint64 s = 0;
          for (guint t = 0; t < nth; t++)
            s += job->slots[t];
          job->sums[phase] = s;
        }
      hz_threadpool_barrier (job->pool);
    }
}

/* A participant arriving late (1 ms, far beyond the spin bound) at every barrier: the
 * others block and are woken; every write before a barrier is seen after it. */
static void
test_barrier_late_arrival (void)
{
  const guint n = 4;
  g_autoptr (HzThreadPool) pool = hz_threadpool_new (n);
  gint64 slots[4];
  for (guint sleeper = 0; sleeper < n; sleeper++)
    for (guint nth = 2; nth <= n; nth++)
      {
        BarrierJob job = { pool, slots, { 0 }, sleeper % nth, 1000 };
        hz_threadpool_run (pool, nth, barrier_worker, &job);
        for (int phase = 0; phase < 3; phase++)
          g_assert_cmpint (job.sums[phase], ==, (gint64) (phase + 1) * nth * (nth + 1) / 2);
      }
}

typedef struct {
  gint64 *out;
  int     n;
} FillJob;

static void
fill_worker (guint ith, guint nth, gpointer data)
{
  FillJob *job = data;
  for (int i = job->n * ith / nth; i < (int) (job->n * (ith + 1) / nth); i++)
    job->out[i] = (gint64) i * i;
}

/* 4x as many threads as cores, many short regions, a worker sleeping in some of them:
 * every region completes with all of its writes visible to the caller. */
static void
test_oversubscribed (void)
{
  const guint n = MAX (4 * g_get_num_processors (), 8);
  g_autoptr (HzThreadPool) pool = hz_threadpool_new (n);
  enum { N = 4096 };
  g_autofree gint64 *out = g_new (gint64, N);
  for (int it = 0; it < 300; it++)
    {
      FillJob job = { out, 64 + it * 13 % (N - 64) };
      memset (out, 0xff, sizeof (gint64) * N);
      hz_threadpool_run (pool, 1 + it % n, fill_worker, &job);
      for (int i = 0; i < job.n; i++)
        g_assert_cmpint (out[i], ==, (gint64) i * i);
    }
}

static double
cpu_seconds (void)
{
  struct rusage ru;
  getrusage (RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + 1e-6 * (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* An idle pool blocks: over 300 ms of idleness after a region, its 3 workers use far less
 * CPU than spinning would (3 x 300 ms). */
static void
test_idle_does_not_spin (void)
{
  g_autoptr (HzThreadPool) pool = hz_threadpool_new (4);
  gint64 out[64];
  FillJob job = { out, 64 };
  hz_threadpool_run (pool, 4, fill_worker, &job);
  const double c0 = cpu_seconds ();
  g_usleep (300000);
  const double used = cpu_seconds () - c0;
  g_test_message ("CPU time while idle: %.1f ms", used * 1e3);
  g_assert_cmpfloat (used, <, 0.1);
  hz_threadpool_run (pool, 4, fill_worker, &job);   /* and it wakes up again */
  g_assert_cmpint (out[63], ==, 63 * 63);
}

static void
test_bandwidth (void)
{
  /* threads 0: the CPU-time variant (one thread) */
  for (guint threads = 0; threads <= 2; threads++)
    {
      g_autoptr (GError) error = NULL;
      const gint64 t0 = g_get_monotonic_time ();
      const double bw = threads == 0 ? hz_measure_read_bandwidth_cpu (8 << 20, 0.05, &error)
                                     : hz_measure_read_bandwidth (threads, 8 << 20, 0.05, &error);
      const double secs = (g_get_monotonic_time () - t0) * 1e-6;
      g_assert_no_error (error);
      g_test_message ("%u thread(s): %.2f GB/s in %.3f s", threads, bw * 1e-9, secs);
      g_assert_true (isfinite (bw));
      g_assert_cmpfloat (bw, >, 1e6);      /* more than 1 MB/s: it measured something */
      g_assert_cmpfloat (bw, <, 1e14);     /* and less than 100 TB/s */
      /* 0.05 s budget plus at most a few 8 MiB passes and the pool start; generous bound
       * for a loaded machine */
      g_assert_cmpfloat (secs, <, 5.0);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/threadpool/barrier-late-arrival", test_barrier_late_arrival);
  g_test_add_func ("/threadpool/oversubscribed", test_oversubscribed);
  g_test_add_func ("/threadpool/idle-does-not-spin", test_idle_does_not_spin);
  g_test_add_func ("/membw/read-bandwidth", test_bandwidth);
  return g_test_run ();
}
