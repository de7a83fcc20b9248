/* tools/bench-vecdot.c — micro-benchmark of every vec_dot kernel of the quant format table,
 * in GB/s of weight bytes, next to this core's memory read bandwidth.
 *
 *   bench-vecdot [--format NAME] [--seconds S] [--k N]
 *
 * For each weight format and each SIMD level the CPU supports (scalar, avx2, avx512 where
 * the format has a kernel), it times vec_dot over rows of K elements (default 4096):
 *   cache   a matrix of about 128 KiB, re-read (weights come from L2)
 *   stream  a matrix of about 64 MiB, read once per pass (weights come from DRAM)
 * and prints weight bytes / second. "memory read" is a plain AVX2/scalar sum over the same
 * 64 MiB, the single-core roofline for the stream column. Single-threaded; the machine is
 * shared, so numbers vary by a few percent between runs.
 */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "quant.h"

static double
now (void)
{
  return (double) g_get_monotonic_time () * 1e-6;
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

/** Single-core read bandwidth: sum of 64-bit words over `n` bytes, repeated. */
static double
mem_read_gbs (const guint8 *buf, size_t n, double secs, float *sink)
{
  double t0 = now (), t;
  size_t bytes = 0;
  guint64 acc[4] = { 0 };
  do
    {
      const guint64 *p = (const guint64 *) buf;
      for (size_t i = 0; i + 4 <= n / 8; i += 4)
        {
          acc[0] += p[i];
          acc[1] += p[i + 1];
          acc[2] += p[i + 2];
          acc[3] += p[i + 3];
        }
      bytes += n;
      t = now () - t0;
    }
  while (t < secs);
  *sink += (float) (acc[0] ^ acc[1] ^ acc[2] ^ acc[3]);
  return (double) bytes / t * 1e-9;
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
  guint8 *big = g_malloc (stream_bytes);
  memset (big, 1, stream_bytes);
  const double mem = mem_read_gbs (big, stream_bytes, secs * 2, &sink);
  g_free (big);

  printf ("vec_dot micro-benchmark: K = %d, 1 thread, dispatch level %s\n", k,
          hz_simd_level_name (hz_simd_level ()));
  printf ("single-core memory read bandwidth: %.2f GB/s\n\n", mem);
  fflush (stdout);
  printf ("%-8s %6s %-7s %12s %12s %9s\n", "format", "bpw", "simd", "cache GB/s",
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
      size_t row_bytes;
      const size_t row_size = hz_quant_row_size (t->type, k);
      const size_t rows_cache = MAX (1, cache_bytes / row_size);
      const size_t rows_stream = MAX (1, stream_bytes / row_size);
      g_autofree guint8 *w = make_weights (t, k, rows_stream, &row_bytes);
      for (int l = 0; l < HZ_SIMD_LEVELS; l++)
        {
          HzVecDotFn fn = hz_quant_vec_dot_at (t->type, l);
          if (!fn || !hz_simd_supported (l))
            continue;
          const double c = time_dot (fn, k, w, row_bytes, rows_cache, act, secs, &sink);
          const double s = time_dot (fn, k, w, row_bytes, rows_stream, act, secs, &sink);
          printf ("%-8s %6.3f %-7s %12.2f %12.2f %8.0f%%\n", t->name,
                  8.0 * t->block_bytes / t->block_elems, hz_simd_level_name (l), c, s,
                  100.0 * s / mem);
          fflush (stdout);
        }
    }
  g_free (xa);
  return sink == 12345.0f;   /* keeps the results alive; practically always 0 */
}
