/* engine/membw.h — this machine's memory read bandwidth, for roofline estimates.
 *
 * Token generation of a dense model reads every weight once per token, so its speed is
 * bounded by R = B / bytes_per_token (B: memory read bandwidth). `hanzo bench` reports
 * the achieved fraction of R; the app's model manager can use the same number to predict
 * a model's speed before loading it.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/** Size in bytes of this machine's last-level CPU cache, as glibc reports it
 *  (sysconf _SC_LEVEL3_CACHE_SIZE, else _SC_LEVEL2_CACHE_SIZE), else the highest-level
 *  cache of /sys/devices/system/cpu/cpu0/cache; 0 when unknown. Virtual machines often
 *  report the whole socket's L3, more than one core sees. Thread safety: reentrant. */
guint64 hz_last_level_cache_bytes (void);

/** Measures the sustained memory read bandwidth in bytes per second.
 *
 *  Method (STREAM-like, read only): a buffer of `buffer_bytes` (0: 4 x the last-level
 *  cache, at least 64 MiB and at most 256 MiB; 256 MiB when the cache size is unknown) is
 *  allocated and written once (page faults, not timed); then `n_threads` threads (0: all
 *  cores; the caller's thread is one of them) repeatedly read disjoint equal slices of it
 *  with 64-bit loads, one pass over the whole buffer per timed round. Rounds repeat until
 *  `budget_s` seconds (<= 0: 0.5 s) have passed since the call began (at least two timed
 *  rounds are run, so a very small budget is exceeded by about two passes); the result is
 *  the fastest round's bytes / seconds (best-of, as STREAM reports).
 *
 *  Returns the bandwidth (> 0, finite) or 0 with `error` set (HZ_ENGINE_ERROR_INVALID_ARGUMENT)
 *  when the buffer cannot be allocated. Thread safety: reentrant; it creates and frees its
 *  own threads. The result is lower than the machine's peak when other processes use the
 *  memory system or the cores at the same time. */
double hz_measure_read_bandwidth (guint n_threads, gsize buffer_bytes, double budget_s,
                                  GError **error);

/** As hz_measure_read_bandwidth() with one thread (the caller's), but each round is timed
 *  by the thread's CPU time (CLOCK_THREAD_CPUTIME_ID) instead of wall-clock time: bytes
 *  per CPU-second, the bandwidth one core achieves while it runs. Unlike the wall-clock
 *  figure it does not drop when other processes share the core (time slicing), so it is
 *  the reference for single-core kernel micro-benchmarks timed the same way
 *  (tools/bench-vecdot.c). The budget is still wall-clock time. */
double hz_measure_read_bandwidth_cpu (gsize buffer_bytes, double budget_s, GError **error);

G_END_DECLS
