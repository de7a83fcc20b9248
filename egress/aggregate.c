/* egress/aggregate.c — trimmed mean, Krum, Multi-Krum. Definitions in aggregate.h. */
#include "aggregate.h"

#include <stdlib.h>

/* Partition v[lo..hi] so that v[k] holds the value it would have after sorting, smaller
 * values before it and larger after it (Hoare's quickselect, median-of-three pivot). */
static void
select_kth (float *v, gsize lo, gsize hi, gsize k)
{
  while (hi > lo)
    {
      gsize mid = lo + (hi - lo) / 2;
      if (v[mid] < v[lo]) { float t = v[mid]; v[mid] = v[lo]; v[lo] = t; }
      if (v[hi] < v[lo]) { float t = v[hi]; v[hi] = v[lo]; v[lo] = t; }
      if (v[hi] < v[mid]) { float t = v[hi]; v[hi] = v[mid]; v[mid] = t; }
      float pivot = v[mid];
      gsize i = lo, j = hi;
      while (i <= j)
        {
          while (v[i] < pivot)
            i++;
          while (v[j] > pivot)
            j--;
          if (i <= j)
            {
              float t = v[i]; v[i] = v[j]; v[j] = t;
              i++;
              if (j == 0)
                break;
              j--;
            }
        }
      if (k <= j)
        hi = j;
      else if (k >= i)
        lo = i;
      else
        return;
    }
}

/* Coordinates are processed in tiles so that each client vector is read sequentially. */
#define TILE 256

gboolean
hz_agg_trimmed_mean (const float *const *updates, gsize n, gsize dim, double beta, float *out)
{
  g_return_val_if_fail (beta >= 0.0 && beta < 0.5, FALSE);
  gsize cut = (gsize) (beta * (double) n);
  if (n == 0 || 2 * cut >= n)
    return FALSE;
  g_autofree float *tile = g_new (float, (gsize) TILE * n);
  for (gsize j0 = 0; j0 < dim; j0 += TILE)
    {
      gsize w = MIN ((gsize) TILE, dim - j0);
      for (gsize i = 0; i < n; i++)
        for (gsize jj = 0; jj < w; jj++)
          tile[jj * n + i] = updates[i][j0 + jj];
      for (gsize jj = 0; jj < w; jj++)
        {
          float *col = tile + jj * n;
          if (cut > 0)
            {
              /* the cut smallest go below index cut, the cut largest above n-cut-1 */
              select_kth (col, 0, n - 1, cut);
              select_kth (col, cut, n - 1, n - cut - 1);
            }
          double sum = 0.0;
          for (gsize i = cut; i < n - cut; i++)
            sum += col[i];
          out[j0 + jj] = (float) (sum / (double) (n - 2 * cut));
        }
    }
  return TRUE;
}

static double
sq_dist (const float *a, const float *b, gsize dim)
{
  double s = 0.0;
  for (gsize j = 0; j < dim; j++)
    {
      double d = (double) a[j] - (double) b[j];
      s += d * d;
    }
  return s;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

gboolean
hz_agg_krum_scores (const float *const *updates, gsize n, gsize dim, guint f, double *scores)
{
  if (n < 2)
    return FALSE;
  gssize k = (gssize) n - (gssize) f - 2;
  gsize closest = k < 1 ? 1 : (gsize) k;
  if (closest > n - 1)
    closest = n - 1;
  g_autofree double *dist = g_new (double, n * n);
  for (gsize i = 0; i < n; i++)
    for (gsize j = i; j < n; j++)
      dist[i * n + j] = dist[j * n + i] = i == j ? 0.0 : sq_dist (updates[i], updates[j], dim);
  g_autofree double *row = g_new (double, n - 1);
  for (gsize i = 0; i < n; i++)
    {
      gsize m = 0;
      for (gsize j = 0; j < n; j++)
        if (j != i)
          row[m++] = dist[i * n + j];
      qsort (row, m, sizeof (double), cmp_double);
      double s = 0.0;
      for (gsize c = 0; c < closest; c++)
        s += row[c];
      scores[i] = s;
    }
  return TRUE;
}

gssize
hz_agg_krum (const float *const *updates, gsize n, gsize dim, guint f)
{
  if (n == 0)
    return -1;
  if (n == 1)
    return 0;
  g_autofree double *scores = g_new (double, n);
  hz_agg_krum_scores (updates, n, dim, f, scores);
  gsize best = 0;
  for (gsize i = 1; i < n; i++)
    if (scores[i] < scores[best])
      best = i;
  return (gssize) best;
}

typedef struct { double score; gsize index; } Ranked;

static int
cmp_ranked (const void *a, const void *b)
{
  const Ranked *x = a, *y = b;
  if (x->score != y->score)
    return (x->score > y->score) - (x->score < y->score);
  return (x->index > y->index) - (x->index < y->index);
}

gboolean
hz_agg_multi_krum (const float *const *updates, gsize n, gsize dim, guint f, guint m, float *out)
{
  if (m == 0 || m > n)
    return FALSE;
  g_autofree Ranked *r = g_new (Ranked, n);
  if (n == 1)
    r[0] = (Ranked) { 0.0, 0 };
  else
    {
      g_autofree double *scores = g_new (double, n);
      hz_agg_krum_scores (updates, n, dim, f, scores);
      for (gsize i = 0; i < n; i++)
        r[i] = (Ranked) { scores[i], i };
      qsort (r, n, sizeof (Ranked), cmp_ranked);
    }
  for (gsize j = 0; j < dim; j++)
    {
      double s = 0.0;
      for (guint c = 0; c < m; c++)
        s += updates[r[c].index][j];
      out[j] = (float) (s / m);
    }
  return TRUE;
}
