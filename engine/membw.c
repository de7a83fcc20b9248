/* engine/membw.c — memory read bandwidth measurement (membw.h). */
#include "membw.h"

#include <time.h>
#include <unistd.h>
#include "hanzo/engine-error.h"
#include "threadpool.h"

typedef struct {
  const guint64 *buf;
  gsize          n_words;
  guint64        sink[64];   /* per thread, so the loads are not optimised away */
} ReadJob;

static void
read_worker (guint ith, guint nth, gpointer data)
{
  ReadJob *job = data;
  /* slices start on 64-byte boundaries (8 words) */
  const gsize n_lines = job->n_words / 8;
  const gsize w0 = n_lines * ith / nth * 8, w1 = n_lines * (ith + 1) / nth * 8;
  const guint64 *p = job->buf;
  /* 8 independent accumulators: one cache line per iteration, no dependency chain */
  guint64 a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0;
  for (gsize i = w0; i < w1; i += 8)
    {
      a0 += p[i + 0];
      a1 += p[i + 1];
      a2 += p[i + 2];
      a3 += p[i + 3];
      a4 += p[i + 4];
      a5 += p[i + 5];
      a6 += p[i + 6];
      a7 += p[i + 7];
    }
  job->sink[ith % G_N_ELEMENTS (job->sink)] += a0 ^ a1 ^ a2 ^ a3 ^ a4 ^ a5 ^ a6 ^ a7;
}

/* Size in bytes of the cache of the highest level in `dir` (sysfs
 * /sys/devices/system/cpu/cpuN/cache: the files "level" and "size", e.g. "32K" or "16M",
 * of each indexN folder); 0 when there is none. */
static guint64
sysfs_last_level_cache (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  guint64 best_level = 0, best_size = 0;
  while (d && (name = g_dir_read_name (d)))
    {
      if (!g_str_has_prefix (name, "index"))
        continue;
      g_autofree char *lp = g_build_filename (dir, name, "level", NULL);
      g_autofree char *sp = g_build_filename (dir, name, "size", NULL);
      g_autofree char *ls = NULL, *ss = NULL;
      if (!g_file_get_contents (lp, &ls, NULL, NULL) || !g_file_get_contents (sp, &ss, NULL, NULL))
        continue;
      char *end;
      const guint64 level = g_ascii_strtoull (ls, NULL, 10);
      guint64 size = g_ascii_strtoull (ss, &end, 10);
      if (*end == 'K')
        size <<= 10;
      else if (*end == 'M')
        size <<= 20;
      else if (*end == 'G')
        size <<= 30;
      if (level > best_level || (level == best_level && size > best_size))
        {
          best_level = level;
          best_size = size;
        }
    }
  return best_size;
}

guint64
hz_last_level_cache_bytes (void)
{
  long llc = 0;
#ifdef _SC_LEVEL3_CACHE_SIZE
  llc = sysconf (_SC_LEVEL3_CACHE_SIZE);
  if (llc <= 0)
    llc = sysconf (_SC_LEVEL2_CACHE_SIZE);
#endif
  if (llc > 0)
    return (guint64) llc;
  return sysfs_last_level_cache ("/sys/devices/system/cpu/cpu0/cache");
}

static gsize
default_buffer_bytes (void)
{
  const guint64 llc = hz_last_level_cache_bytes ();
  if (llc == 0)
    return (gsize) 256 << 20;
  /* capped: virtual machines often report the whole socket's L3 (hundreds of MiB) while
   * one core sees a slice of it */
  return (gsize) CLAMP (llc * 4, (guint64) 64 << 20, (guint64) 256 << 20);
}

/* microseconds of the calling thread's CPU time */
static gint64
thread_cpu_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return (gint64) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static double
measure (guint n_threads, gsize buffer_bytes, double budget_s, gboolean cpu_time,
         GError **error)
{
  const gint64 t_start = g_get_monotonic_time ();
  if (n_threads == 0)
    n_threads = g_get_num_processors ();
  if (buffer_bytes == 0)
    buffer_bytes = default_buffer_bytes ();
  if (budget_s <= 0)
    budget_s = 0.5;
  /* at least 64 bytes per thread */
  buffer_bytes = MAX (buffer_bytes, (gsize) 64 * n_threads) / 64 * 64;

  guint64 *buf = g_try_malloc (buffer_bytes);
  if (buf == NULL)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "out of memory allocating a %" G_GSIZE_FORMAT " MiB bandwidth buffer",
                   buffer_bytes >> 20);
      return 0;
    }
  ReadJob job = { .buf = buf, .n_words = buffer_bytes / sizeof (guint64) };
  for (gsize i = 0; i < job.n_words; i++)   /* fault the pages in; not all zero */
    buf[i] = i;

  HzThreadPool *pool = n_threads > 1 ? hz_threadpool_new (n_threads) : NULL;
  const gint64 budget_us = (gint64) (budget_s * 1e6);
  double best = 0;
  for (int round = 0;; round++)
    {
      gint64 t0 = cpu_time ? thread_cpu_us () : g_get_monotonic_time ();
      if (pool)
        hz_threadpool_run (pool, n_threads, read_worker, &job);
      else
        read_worker (0, 1, &job);
      gint64 t1 = cpu_time ? thread_cpu_us () : g_get_monotonic_time ();
      double bw = (double) buffer_bytes / (MAX (t1 - t0, 1) * 1e-6);
      best = MAX (best, bw);
      if (round >= 1 && g_get_monotonic_time () - t_start >= budget_us)
        break;
    }
  hz_threadpool_free (pool);
  g_free (buf);
  return best;
}

double
hz_measure_read_bandwidth (guint n_threads, gsize buffer_bytes, double budget_s,
                           GError **error)
{
  return measure (n_threads, buffer_bytes, budget_s, FALSE, error);
}

double
hz_measure_read_bandwidth_cpu (gsize buffer_bytes, double budget_s, GError **error)
{
  return measure (1, buffer_bytes, budget_s, TRUE, error);
}
