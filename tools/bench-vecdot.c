/* tools/bench-vecdot.c — micro-benchmark of every vec_dot kernel of the quant format table,
 * in GB/s of weight bytes, next to this core's memory read bandwidth.
 *
 *   bench-vecdot [--format NAME] [--seconds S] [--k N]
 *
 * For each weight format and each SIMD level the CPU supports (scalar, avx2, avx512 where
 * the format has a kernel), it times vec_dot over rows of K elements (default 4096):
 *   cache   a matrix of about 128 KiB, re-read (weights come from L2)
 *   stream  a matrix of about 64 MiB, read once per pass (weights come from DRAM)
 * and prints weight bytes / second. Besides the quant table's kernels it times the
 * exact-order kernels the CPU backend actually runs (ggml-order.h: "o1" for one
 * activation row, i.e. decode, "oN" for prompt batches when it differs, "o4" the four-row
 * decode kernel, "oT" the tiled prompt kernel: the cache-sized matrix against 64
 * activation rows per call, weight bytes counted once per activation row like the others,
 * so oT / oN is the speed-up of the tile), for a matrix of 4096 rows, at each SIMD level
 * (kernel column o1-<level> / oN-<level> / o4-<level> / oT-<level>); table kernels are
 * named by their level alone. Formats repacked at load (repack.h) also get "p1-<level>", the
 * repacked kernel on one activation row (decode: cache and stream, the matrices repacked
 * in 32-row multiples) and "pT-<level>", the same kernel against 64 activation rows (prompt
 * batches, counted as oT). "memory read" is a plain 64-bit sum over the same 64 MiB
 * (hz_measure_read_bandwidth_cpu), the single-core roofline for the stream column.
 * Single-threaded. Everything is timed in the thread's CPU time (bytes per CPU-second), so
 * that time slices lost to other processes on a shared machine do not count; cache and
 * memory contention from them still does.
 */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "quant.h"
#include "ggml-order.h"
#include "membw.h"
#include "repack.h"

/* Seconds of this thread's CPU time: on a shared machine wall-clock time includes the time
 * slices of other processes; CPU time of a memory-bound loop still includes its stalls. */
static double
now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* splitmix64 + Box-Muller, deterministic */
static guint64 rng = 0x1234567;
static float
gauss (void)
{
  double u[2];
  for (int i = 0; i < 2; i++)
    {
      guint64 z = (rng += 0x9e3779b97f4a7c15ull);
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      u[i] = (((z ^ (z >> 31)) >> 11) + 0.5) * 0x1p-53;
    }
  return (float) (sqrt (-2 * log (u[0])) * cos (2 * G_PI * u[1]));
}

/** Weight rows: 64 distinct rows, quantized from N(0, 0.05) data when the format has an
 *  encoder, otherwise random bytes with every 16-bit word cleared of its exponent's top
 *  bit (finite fp16 scales; the values do not matter for timing), repeated to fill `rows`
 *  (copies are as uncached as fresh data). */
static guint8 *
make_weights (const HzQuantTraits *t, int k, size_t rows, size_t *row_bytes)
{
  *row_bytes = hz_quant_row_size (t->type, k);
  guint8 *w = g_malloc (*row_bytes * rows);
  float *x = g_new (float, k);
  for (size_t r = 0; r < rows; r++)
    {
      guint8 *dst = w + r * *row_bytes;
      if (r >= 64)
        {
          memcpy (dst, w + (r % 64) * *row_bytes, *row_bytes);
          continue;
        }
      if (t->from_float)
        {
          for (int i = 0; i < k; i++)
            x[i] = 0.05f * gauss ();
          t->from_float (x, dst, k);
        }
      else
        for (size_t i = 0; i < *row_bytes; i++)
          dst[i] = (guint8) (g_random_int () & (i % 2 ? 0xbf : 0xff));
    }
  g_free (x);
  return w;
}

/** GB/s of weight bytes for `fn` over `rows` rows, repeated for about `secs`. */
static double
time_dot (HzVecDotFn fn, int k, const guint8 *w, size_t row_bytes, size_t rows,
          const void *act, double secs, float *sink)
{
  double t0 = now (), t;
  size_t bytes = 0;
  do
    {
      for (size_t r = 0; r < rows; r++)
        {
          float s;
          fn (k, &s, w + r * row_bytes, act);
          *sink += s;
        }
      bytes += rows * row_bytes;
      t = now () - t0;
    }
  while (t < secs);
  return (double) bytes / t * 1e-9;
}

#define TILE_TOKENS 64   /* activation rows per call of a tiled kernel */

/** As time_dot for a four-row kernel (HzGgmlDot4Fn); rows a multiple of 4. */
static double
time_dot4 (HzGgmlDot4Fn fn, int k, const guint8 *w, size_t row_bytes, size_t rows,
           const void *act, double secs, float *sink)
{
  double t0 = now (), t;
  size_t bytes = 0;
  do
    {
      for (size_t r = 0; r + 4 <= rows; r += 4)
        {
          float s[4];
          fn (k, s, w + r * row_bytes, row_bytes, act);
          *sink += s[0];
        }
      bytes += rows / 4 * 4 * row_bytes;
      t = now () - t0;
    }
  while (t < secs);
  return (double) bytes / t * 1e-9;
}

/** GB/s of weight bytes per activation row for a tiled kernel: `rows` rows against
 *  `n_tok` activation rows (acts, `act_bytes` apart) per call (in calls of 64 rows), each
 *  weight byte counted once per activation row, as the one-row kernels count it. */
static double
time_tile (HzGgmlTileFn fn, int k, const guint8 *w, size_t row_bytes, size_t rows, int n_tok,
           const void *acts, size_t act_bytes, float *out, double secs, float *sink)
{
  double t0 = now (), t;
  size_t bytes = 0;
  do
    {
      for (size_t r = 0; r < rows; r += 64)
        fn (k, (int) MIN (64, rows - r), n_tok, out + r, rows, w + r * row_bytes, row_bytes,
            acts, act_bytes);
      *sink += out[0];
      bytes += rows * row_bytes * n_tok;
      t = now () - t0;
    }
  while (t < secs);
  return (double) bytes / t * 1e-9;
}

static void
print_rate (const HzQuantTraits *t, const char *kernel, double c, double s, double mem)
{
  if (s > 0)
    printf ("%-8s %6.3f %-10s %12.2f %12.2f %8.0f%%\n", t->name,
            8.0 * t->block_bytes / t->block_elems, kernel, c, s, 100.0 * s / mem);
  else
    printf ("%-8s %6.3f %-10s %12.2f %12s %9s\n", t->name, 8.0 * t->block_bytes / t->block_elems,
            kernel, c, "-", "-");
  fflush (stdout);
}

static void
print_row (const HzQuantTraits *t, const char *kernel, HzVecDotFn fn, int k, const guint8 *w,
           size_t row_bytes, size_t rows_cache, size_t rows_stream, const void *act,
           double secs, double mem, float *sink)
{
  const double c = time_dot (fn, k, w, row_bytes, rows_cache, act, secs, sink);
  const double s = time_dot (fn, k, w, row_bytes, rows_stream, act, secs, sink);
  print_rate (t, kernel, c, s, mem);
}

int
main (int argc, char **argv)
{
  const char *only = NULL;
  double secs = 0.15;
  int k = 4096;
  GOptionEntry entries[] = {
    { "format", 'f', 0, G_OPTION_ARG_STRING, &only, "Only this format (ggml name)", "NAME" },
    { "seconds", 's', 0, G_OPTION_ARG_DOUBLE, &secs, "Seconds per measurement (0.15)", "S" },
    { "k", 'k', 0, G_OPTION_ARG_INT, &k, "Row length in elements (4096)", "N" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- vec_dot GB/s per format");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_autoptr (GError) err = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &err))
    {
      fprintf (stderr, "bench-vecdot: %s\n", err->message);
      return 2;
    }
  if (k <= 0 || k % 256 != 0 || secs <= 0)
    {
      fprintf (stderr, "bench-vecdot: --k must be a positive multiple of 256, --seconds > 0\n");
      return 2;
    }
  if (only && !hz_quant_traits_by_name (only))
    {
      fprintf (stderr, "bench-vecdot: unknown format '%s'\n", only);
      return 2;
    }

  const size_t stream_bytes = 64u << 20, cache_bytes = 128u << 10;
  float sink = 0;
  const double mem = hz_measure_read_bandwidth_cpu (stream_bytes, MAX (secs * 2, 0.3), &err) * 1e-9;
  if (mem == 0)
    {
      fprintf (stderr, "bench-vecdot: %s\n", err->message);
      return 1;
    }

  printf ("vec_dot micro-benchmark: K = %d, 1 thread, dispatch level %s\n", k,
          hz_simd_level_name (hz_simd_level ()));
  printf ("single-core memory read bandwidth: %.2f GB/s\n\n", mem);
  fflush (stdout);
  printf ("%-8s %6s %-10s %12s %12s %9s\n", "format", "bpw", "kernel", "cache GB/s",
          "stream GB/s", "% of mem");

  float *xa = g_new (float, k);
  for (int i = 0; i < k; i++)
    xa[i] = gauss ();
  for (size_t i = 0; i < hz_quant_n_formats (); i++)
    {
      const HzQuantTraits *t = hz_quant_format (i);
      if (!t->vec_dot || (only && g_ascii_strcasecmp (only, t->name) != 0))
        continue;
      const HzQuantTraits *vt = hz_quant_traits (t->vec_dot_type);
      g_autofree guint8 *act = g_malloc (hz_quant_row_size (vt->type, k));
      vt->from_float (xa, act, k);
      /* TILE_TOKENS activation rows for the tiled kernels (copies: only timing matters) */
      const size_t act_bytes = hz_quant_row_size (vt->type, k);
      g_autofree guint8 *acts = g_malloc (act_bytes * TILE_TOKENS);
      for (int j = 0; j < TILE_TOKENS; j++)
        memcpy (acts + j * act_bytes, act, act_bytes);
      size_t row_bytes;
      const size_t row_size = hz_quant_row_size (t->type, k);
      const size_t rows_cache = MAX (1, cache_bytes / row_size);
      const size_t rows_stream = MAX (1, stream_bytes / row_size);
      g_autofree guint8 *w = make_weights (t, k, rows_stream, &row_bytes);
      g_autofree float *tile_out = g_new (float, MAX (2 * rows_cache, 32) * TILE_TOKENS);
      g_autofree float *stream_out = g_new (float, rows_stream);
      guint8 *packed = NULL;   /* the stream matrix repacked, made on first use */
      for (int l = 0; l < HZ_SIMD_LEVELS; l++)
        {
          HzVecDotFn fn = hz_quant_vec_dot_at (t->type, l);
          if (!fn || !hz_simd_supported (l))
            continue;
          print_row (t, hz_simd_level_name (l), fn, k, w, row_bytes, rows_cache, rows_stream,
                     act, secs, mem, &sink);
        }
      /* the kernels the CPU backend runs (llama.cpp's summation order), per SIMD level */
      for (int l = 0; l < HZ_SIMD_LEVELS; l++)
        {
          if (!hz_simd_supported (l))
            continue;
          const HzGgmlDots d = hz_ggml_order_dots_at (t->type, 4096, k, l);
          if (!d.exact)
            continue;
          g_autofree char *one = g_strdup_printf ("o1-%s", hz_simd_level_name (l));
          print_row (t, one, d.one, k, w, row_bytes, rows_cache, rows_stream, act, secs, mem,
                     &sink);
          if (d.batch != d.one)
            {
              g_autofree char *batch = g_strdup_printf ("oN-%s", hz_simd_level_name (l));
              print_row (t, batch, d.batch, k, w, row_bytes, rows_cache, rows_stream, act,
                         secs, mem, &sink);
            }
          if (d.one_x4)
            {
              g_autofree char *x4 = g_strdup_printf ("o4-%s", hz_simd_level_name (l));
              print_rate (t, x4,
                          time_dot4 (d.one_x4, k, w, row_bytes, rows_cache, act, secs, &sink),
                          time_dot4 (d.one_x4, k, w, row_bytes, rows_stream, act, secs, &sink),
                          mem);
            }
          if (d.tile)
            {
              g_autofree char *tile = g_strdup_printf ("oT-%s", hz_simd_level_name (l));
              print_rate (t, tile,
                          time_tile (d.tile, k, w, row_bytes, rows_cache, TILE_TOKENS, acts,
                                     act_bytes, tile_out, secs, &sink), 0, mem);
            }
          /* the repacked kernels: whole 32-row groups of the same matrices (the cache one
           * about twice as large, still in L2, so the timer's cost per pass stays small) */
          const size_t pc = MAX (32, 2 * rows_cache / 32 * 32), ps = rows_stream / 32 * 32;
          const HzGgmlTileFn pk = hz_repack_tile_at (t->type, (int64_t) ps, k, l);
          if (pk && hz_repack_tile_at (t->type, (int64_t) pc, k, l) == pk && pc <= ps)
            {
              if (packed == NULL)
                {
                  packed = g_malloc (ps * row_bytes);
                  hz_repack_rows (t->type, (int64_t) ps, k, w, packed);
                }
              g_autofree char *p1 = g_strdup_printf ("p1-%s", hz_simd_level_name (l));
              print_rate (t, p1,
                          time_tile (pk, k, packed, row_bytes, pc, 1, act, act_bytes, tile_out,
                                     secs, &sink),
                          time_tile (pk, k, packed, row_bytes, ps, 1, act, act_bytes, stream_out,
                                     secs, &sink), mem);
              g_autofree char *pT = g_strdup_printf ("pT-%s", hz_simd_level_name (l));
              print_rate (t, pT,
                          time_tile (pk, k, packed, row_bytes, pc, TILE_TOKENS, acts, act_bytes,
                                     tile_out, secs, &sink), 0, mem);
            }
        }
      g_free (packed);
    }
  g_free (xa);
  return sink == 12345.0f;   /* keeps the results alive; practically always 0 */
}
