/* engine/quant/codec-iq-encode.c — reference encoders of the lattice formats that need no
 * importance matrix: IQ3_XXS, IQ3_S, IQ2_S and IQ1_M (ggml quantize_row_iq3_xxs_ref,
 * quantize_row_iq3_s_ref, quantize_row_iq2_s_ref; llama.cpp c392e509), bit-exact.
 *
 * The algorithm (re-implemented from ggml's description and code, see docs below):
 *   - every 4- or 8-element group is a point of a lattice of "levels" l (coordinate value
 *     2l+1); only some points are on the format's grid (iq-tables.c);
 *   - per sub-block, signs are taken out (xval = |x|), several trial scales are tried; for
 *     each, every group is rounded to levels and, when that point is off the grid, replaced
 *     by the weighted-nearest grid point among the precomputed neighbours (the points in
 *     the nwant nearest distance shells, ordered by (distance, index));
 *   - the best trial by weighted least squares wins, off-grid groups are re-fitted at that
 *     scale, and the sub-block scales are coded relative to the largest one.
 * IQ1_M (no _ref in ggml; ggml_quantize_chunk without imatrix) uses the same neighbour
 * tables with an exhaustive 3-level split search per 16 elements.
 * The neighbour tables are built once per grid (thread-safe, pthread_once).
 */
#include "quant-impl.h"

#include <float.h>
#include <pthread.h>
#include <stdlib.h>

extern const uint64_t hzq_iq2s_grid[1024], hzq_iq1s_grid[2048];
extern const uint32_t hzq_iq3xxs_grid[256], hzq_iq3s_grid[512];

/* ---- lattices ------------------------------------------------------------------------ */
typedef struct {
  int dims, bits, n;        /* coordinates per point, bits per level index, grid points */
  int8_t *pts;              /* n·dims coordinates 2l+1 */
  int *map;                 /* level-index -> grid index, or −1 − (offset into nb) */
  uint16_t *nb;             /* per off-grid index: count, then the neighbour grid indices */
} HzqLattice;

static int
level_of (const uint8_t *levels, int nlev, uint8_t byte)
{
  for (int l = 0; l < nlev; l++)
    if (levels[l] == byte)
      return l;
  return -1;
}

/** Builds the lattice of `n` grid points of `dims` bytes each (point j, coordinate k is
 *  byte k of grid[j]), the level of a byte being its rank in `levels`. Neighbour lists are
 *  made for every off-grid index whose levels are all ≤ maxl (the encoders never produce
 *  others): the grid points of the `nwant` smallest squared distances, by (distance,
 *  index) — ggml iq2xs_init_impl / iq3xs_init_impl. Aborts on allocation failure (these
 *  are a few hundred KiB, built once). */
static void
lattice_build (HzqLattice *lat, const void *grid, int n, int dims, int bits,
               const uint8_t *levels, int nlev, int maxl, int nwant)
{
  const int size = 1 << (dims * bits);
  lat->dims = dims;
  lat->bits = bits;
  lat->n = n;
  lat->pts = malloc ((size_t) n * dims);
  lat->map = malloc (sizeof (int) * size);
  int *d2 = malloc (sizeof (int) * n);
  if (!lat->pts || !lat->map || !d2)
    abort ();
  for (int i = 0; i < size; i++)
    lat->map[i] = INT32_MIN;
  for (int j = 0; j < n; j++)
    {
      int u = 0;
      for (int k = 0; k < dims; k++)
        {
          const uint8_t byte = dims == 8 ? (uint8_t) (((const uint64_t *) grid)[j] >> (8 * k))
                                         : (uint8_t) (((const uint32_t *) grid)[j] >> (8 * k));
          const int l = level_of (levels, nlev, byte);
          lat->pts[j * dims + k] = (int8_t) (2 * l + 1);
          u |= l << (bits * k);
        }
      lat->map[u] = j;
    }
  /* two passes over the off-grid indices: count, then fill */
  size_t total = 0;
  for (int pass = 0; pass < 2; pass++)
    {
      if (pass == 1)
        {
          lat->nb = malloc (sizeof (uint16_t) * (total ? total : 1));
          if (!lat->nb)
            abort ();
          total = 0;
        }
      for (int u = 0; u < size; u++)
        {
          bool ok = lat->map[u] < 0;
          int pos[8];
          for (int k = 0; k < dims && ok; k++)
            {
              const int l = (u >> (bits * k)) & ((1 << bits) - 1);
              ok = l <= maxl;
              pos[k] = 2 * l + 1;
            }
          if (!ok)
            continue;
          int shell[8] = { 0 }, nsh = 0;   /* the nwant smallest distinct distances */
          for (int j = 0; j < n; j++)
            {
              int s = 0;
              for (int k = 0; k < dims; k++)
                s += (lat->pts[j * dims + k] - pos[k]) * (lat->pts[j * dims + k] - pos[k]);
              d2[j] = s;
              int at = nsh;
              while (at > 0 && shell[at - 1] > s)
                at--;
              if ((at > 0 && shell[at - 1] == s) || at >= nwant)
                continue;
              const int keep = nsh < nwant ? nsh : nwant - 1;
              memmove (shell + at + 1, shell + at, sizeof (int) * (size_t) (keep - at));
              shell[at] = s;
              if (nsh < nwant)
                nsh++;
            }
          size_t count = 0;
          for (int j = 0; j < n; j++)
            count += d2[j] <= shell[nsh - 1];
          if (pass == 1)
            {
              lat->map[u] = -1 - (int) total;
              uint16_t *out = lat->nb + total;
              *out++ = (uint16_t) count;
              for (int s = 0; s < nsh; s++)
                for (int j = 0; j < n; j++)
                  if (d2[j] == shell[s])
                    *out++ = (uint16_t) j;
            }
          total += 1 + count;
        }
    }
  free (d2);
}

/** The grid point among u's neighbours nearest to xval at `scale` (weighted squared
 *  distance, first one on ties; ggml iq{2,3}_find_best_neighbour); the value of level l is
 *  2l+1, or xg[l] when xg is given (IQ1_M, iq1_find_best_neighbour2). Writes the levels to
 *  L and returns the grid index. */
static int
lattice_best (const HzqLattice *lat, int u, const float *xval, const float *w, float scale,
              const float *xg, int8_t *L)
{
  const uint16_t *nb = lat->nb + (-1 - lat->map[u]);
  float best_d2 = FLT_MAX;
  int best = nb[1];
  for (int c = 1; c <= nb[0]; c++)
    {
      const int8_t *pg = lat->pts + nb[c] * lat->dims;
      float d2 = 0;
      for (int i = 0; i < lat->dims; i++)
        {
          const float q = xg ? xg[(pg[i] - 1) / 2] : (float) pg[i];
          const float diff = scale * q - xval[i];
          d2 += w[i] * diff * diff;
        }
      if (d2 < best_d2)
        {
          best_d2 = d2;
          best = nb[c];
        }
    }
  for (int i = 0; i < lat->dims; i++)
    L[i] = (int8_t) ((lat->pts[best * lat->dims + i] - 1) / 2);
  return best;
}

static HzqLattice lat_iq3xxs, lat_iq3s, lat_iq2s, lat_iq1;
static pthread_once_t once_iq3xxs = PTHREAD_ONCE_INIT, once_iq3s = PTHREAD_ONCE_INIT,
                      once_iq2s = PTHREAD_ONCE_INIT, once_iq1 = PTHREAD_ONCE_INIT;

static void init_iq3xxs (void)
{
  static const uint8_t lv[8] = { 4, 12, 20, 28, 36, 44, 52, 62 };
  lattice_build (&lat_iq3xxs, hzq_iq3xxs_grid, 256, 4, 3, lv, 8, 7, 2);
}
static void init_iq3s (void)
{
  static const uint8_t lv[8] = { 1, 3, 5, 7, 9, 11, 13, 15 };
  lattice_build (&lat_iq3s, hzq_iq3s_grid, 512, 4, 3, lv, 8, 7, 3);
}
static void init_iq1 (void)
{
  static const uint8_t lv[3] = { 0xff, 0x00, 0x01 };   /* int8 −1, 0, 1 */
  lattice_build (&lat_iq1, hzq_iq1s_grid, 2048, 8, 2, lv, 3, 2, 3);
}
static void init_iq2s (void)
{
  static const uint8_t lv[3] = { 8, 25, 43 };
  lattice_build (&lat_iq2s, hzq_iq2s_grid, 1024, 8, 2, lv, 3, 2, 1);
}

/* ---- the shared sub-block search --------------------------------------------------------- */
typedef struct {
  const HzqLattice *lat;
  int gs;              /* sub-block size: 32 (IQ3) or 16 (IQ2_S) */
  int kmaxq;           /* levels 0..kmaxq−1 */
  int is_range;        /* trial scales is = −is_range..is_range */
  float is_step;       /* (2·kmaxq − 1 + is·is_step)/max */
  float eps;           /* max < eps: zero sub-block; eps = 0: only max == 0 */
  bool start_on_grid;  /* initial is_on_grid (matters when no trial improves) */
  bool refit_all;      /* re-fit every group at the final scale, not only off-grid ones */
  bool parity_signs;   /* IQ3_XXS: 7 sign bits per 8, an odd count flips the weakest */
} HzqGridFit;

static inline int clampi (int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* levels of every group at inverse scale id; off-grid groups replaced by their best
 * neighbour at scale `scale`; returns the grid index of each group in gi */
static void
fit_groups (const HzqGridFit *p, const float *xval, const float *waux, float id, float scale,
            int8_t *L, bool *on_grid, int *gi, bool only_off_grid)
{
  const HzqLattice *lat = p->lat;
  for (int k = 0; k < p->gs / lat->dims; k++)
    {
      if (only_off_grid && on_grid[k])
        continue;
      int u = 0;
      for (int i = 0; i < lat->dims; i++)
        {
          const int l = clampi (hzq_nearest_int (0.5f * (id * xval[lat->dims * k + i] - 1)), 0, p->kmaxq - 1);
          L[lat->dims * k + i] = (int8_t) l;
          u |= l << (lat->bits * i);
        }
      int g = lat->map[u];
      on_grid[k] = g >= 0;
      if (g < 0)
        g = lattice_best (lat, u, xval + lat->dims * k, waux + lat->dims * k, scale, NULL,
                          L + lat->dims * k);
      gi[k] = g;
    }
}

static void
lsq (int n, const float *w, const float *xval, const int8_t *L, float *sumqx, float *sumq2)
{
  float sx = 0, s2 = 0;
  for (int i = 0; i < n; i++)
    {
      const float q = (float) (2 * L[i] + 1);
      sx += w[i] * xval[i] * q;
      s2 += w[i] * q * q;
    }
  *sumqx = sx;
  *sumq2 = s2;
}

/** Fits one sub-block: returns its scale (≥ 0), the grid index of each group in gi and
 *  the sign bytes (one per 8 elements). Returns −1 for a sub-block below the threshold,
 *  which ggml skips without storing anything. */
static float
grid_fit (const HzqGridFit *p, const float *xb, const float *weight, int *gi, uint8_t *signs)
{
  const int gs = p->gs, ng = gs / p->lat->dims;
  float xval[32], waux[32];
  int8_t L[32], Laux[32];
  bool on_grid[8], on_grid_aux[8];
  int gi_aux[8];

  for (int i = 0; i < gs; i++)
    waux[i] = sqrtf (weight[i]);
  for (int k = 0; k < gs / 8; k++)
    {
      uint8_t s = 0;
      int nflip = 0;
      for (int i = 0; i < 8; i++)
        {
          const float v = xb[8 * k + i];
          xval[8 * k + i] = v >= 0 ? v : -v;
          if (!(v >= 0))
            {
              s |= (uint8_t) (1u << i);
              nflip++;
            }
        }
      if (p->parity_signs)
        {
          if (nflip % 2)
            {
              int imin = 0;
              float mn = weight[8 * k] * xb[8 * k] * xb[8 * k];
              for (int i = 1; i < 8; i++)
                {
                  const float ax = weight[8 * k + i] * xb[8 * k + i] * xb[8 * k + i];
                  if (ax < mn)
                    {
                      mn = ax;
                      imin = i;
                    }
                }
              xval[8 * k + imin] = -xval[8 * k + imin];
              s ^= (uint8_t) (1u << imin);
            }
          s &= 127;
        }
      signs[k] = s;
    }
  float max = xval[0];
  for (int i = 1; i < gs; i++)
    max = xval[i] > max ? xval[i] : max;
  memset (gi, 0, sizeof (int) * (size_t) ng);
  if (p->eps > 0 ? max < p->eps : max == 0)
    return -1;

  float best = 0, scale = max / (float) (2 * p->kmaxq - 1);
  memset (L, 0, sizeof L);
  for (int k = 0; k < ng; k++)
    on_grid[k] = p->start_on_grid;
  for (int is = -p->is_range; is <= p->is_range; is++)
    {
      const float id = ((float) (2 * p->kmaxq - 1) + (float) is * p->is_step) / max;
      fit_groups (p, xval, waux, id, 1 / id, Laux, on_grid_aux, gi_aux, false);
      float sumqx, sumq2;
      lsq (gs, weight, xval, Laux, &sumqx, &sumq2);
      if (sumq2 > 0 && sumqx * sumqx > best * sumq2)
        {
          scale = sumqx / sumq2;
          best = scale * sumqx;
          memcpy (L, Laux, (size_t) gs);
          memcpy (on_grid, on_grid_aux, sizeof on_grid);
          memcpy (gi, gi_aux, sizeof (int) * (size_t) ng);
        }
    }
  int off = 0;
  for (int k = 0; k < ng; k++)
    off += !on_grid[k];
  if (off > 0 && scale > 0)
    {
      fit_groups (p, xval, waux, 1 / scale, scale, L, on_grid, gi, !p->refit_all);
      float sumqx, sumq2;
      lsq (gs, weight, xval, L, &sumqx, &sumq2);
      if (sumq2 > 0)
        scale = sumqx / sumq2;
    }
  if (scale < 0)
    {
      scale = -scale;
      for (int k = 0; k < gs / 8; k++)
        signs[k] = (uint8_t) (p->parity_signs ? ~signs[k] & 127 : ~signs[k]);
    }
  /* grid indices of the final levels (every group is on the grid now) */
  for (int k = 0; k < ng; k++)
    {
      int u = 0;
      for (int i = 0; i < p->lat->dims; i++)
        u |= L[p->lat->dims * k + i] << (p->lat->bits * i);
      gi[k] = p->lat->map[u] >= 0 ? p->lat->map[u] : 0;
    }
  return scale;
}

/** 4-bit code of a sub-block scale relative to d: clamp(nearest_int((s/d − 1)/2), 0, 15). */
static inline int
scale_code (float id, float s)
{
  return clampi (hzq_nearest_int (0.5f * (id * s - 1)), 0, 15);
}

/* ---- IQ3_XXS ------------------------------------------------------------------------------- */
/** floats -> IQ3_XXS (quantize_row_iq3_xxs_ref). */
void
iq3_xxs_from_float (const float *restrict x, void *restrict vy, int64_t n)
{
  pthread_once (&once_iq3xxs, init_iq3xxs);
  const HzqGridFit p = { &lat_iq3xxs, 32, 8, 15, 0.2f, 1e-8f, true, false, true };
  for (HzBlockIQ3_XXS *y = vy; n >= 256; n -= 256, x += 256, y++)
    {
      float scales[8], weight[32], max_scale = 0;
      uint32_t sas[8] = { 0 };
      memset (y, 0, sizeof *y);
      for (int ib = 0; ib < 8; ib++)
        {
          const float *xb = x + 32 * ib;
          int gi[8];
          uint8_t signs[4];
          for (int i = 0; i < 32; i++)
            weight[i] = xb[i] * xb[i];
          scales[ib] = grid_fit (&p, xb, weight, gi, signs);
          if (scales[ib] < 0)
            {
              scales[ib] = 0;   /* nothing stored: codes and signs stay 0 */
              continue;
            }
          for (int k = 0; k < 8; k++)
            y->qs[8 * ib + k] = (uint8_t) gi[k];
          sas[ib] = signs[0] | (uint32_t) signs[1] << 7 | (uint32_t) signs[2] << 14 | (uint32_t) signs[3] << 21;
          max_scale = scales[ib] > max_scale ? scales[ib] : max_scale;
        }
      if (max_scale == 0)
        {
          memset (y, 0, sizeof *y);
          continue;
        }
      const float d = max_scale / 31;
      y->d = hzq_fp32_to_fp16 (d * 1.0125f);
      const float id = 1 / d;
      for (int ib = 0; ib < 8; ib++)
        {
          sas[ib] |= (uint32_t) scale_code (id, scales[ib]) << 28;
          memcpy (y->qs + 64 + 4 * ib, &sas[ib], 4);
        }
    }
}

/* ---- IQ3_S --------------------------------------------------------------------------------- */
/** floats -> IQ3_S (quantize_row_iq3_s_ref). */
void
iq3_s_from_float (const float *restrict x, void *restrict vy, int64_t n)
{
  pthread_once (&once_iq3s, init_iq3s);
  const HzqGridFit p = { &lat_iq3s, 32, 8, 9, 0.2f, 0.0f, false, true, false };
  for (HzBlockIQ3_S *y = vy; n >= 256; n -= 256, x += 256, y++)
    {
      float scales[8], weight[32], max_scale = 0;
      memset (y, 0, sizeof *y);
      /* ggml advances its qs/signs write positions only for stored sub-blocks (a skipped
       * all-zero sub-block shifts the following ones); qh is indexed absolutely */
      uint8_t *qs = y->qs, *signs = y->signs;
      for (int ib = 0; ib < 8; ib++)
        {
          const float *xb = x + 32 * ib;
          int gi[8];
          uint8_t sg[4];
          for (int i = 0; i < 32; i++)
            weight[i] = xb[i] * xb[i];
          scales[ib] = grid_fit (&p, xb, weight, gi, sg);
          if (scales[ib] < 0)
            {
              scales[ib] = 0;
              continue;
            }
          for (int k = 0; k < 8; k++)
            {
              qs[k] = (uint8_t) (gi[k] & 255);
              y->qh[ib] |= (uint8_t) ((gi[k] >> 8) << k);
            }
          memcpy (signs, sg, 4);
          qs += 8;
          signs += 4;
          max_scale = scales[ib] > max_scale ? scales[ib] : max_scale;
        }
      if (max_scale == 0)
        continue;
      const float d = max_scale / 31;
      y->d = hzq_fp32_to_fp16 (d * 1.033f);
      const float id = 1 / d;
      for (int ib = 0; ib < 8; ib += 2)
        y->scales[ib / 2] = (uint8_t) (scale_code (id, scales[ib]) | scale_code (id, scales[ib + 1]) << 4);
    }
}

/* ---- IQ2_S --------------------------------------------------------------------------------- */
/** floats -> IQ2_S (quantize_row_iq2_s_ref): sub-blocks of 16, weights σ²/4 + x². */
void
iq2_s_from_float (const float *restrict x, void *restrict vy, int64_t n)
{
  pthread_once (&once_iq2s, init_iq2s);
  const HzqGridFit p = { &lat_iq2s, 16, 3, 9, 0.1f, 1e-8f, true, false, false };
  for (HzBlockIQ2_S *y = vy; n >= 256; n -= 256, x += 256, y++)
    {
      float scales[16], weight[16], max_scale = 0, sumx2 = 0;
      memset (y, 0, sizeof *y);
      for (int i = 0; i < 256; i++)
        sumx2 += x[i] * x[i];
      const float sigma2 = 2 * sumx2 / 256;
      for (int ib = 0; ib < 16; ib++)
        {
          const float *xb = x + 16 * ib;
          int gi[2];
          uint8_t signs[2];
          for (int i = 0; i < 16; i++)
            weight[i] = 0.25f * sigma2 + xb[i] * xb[i];
          scales[ib] = grid_fit (&p, xb, weight, gi, signs);
          if (scales[ib] < 0)
            {
              scales[ib] = 0;
              continue;
            }
          for (int k = 0; k < 2; k++)
            {
              const int i8 = 2 * ib + k;
              y->qs[i8] = (uint8_t) (gi[k] & 255);
              y->qh[i8 / 4] |= (uint8_t) ((gi[k] >> 8) << (2 * (i8 % 4)));
              y->qs[32 + i8] = signs[k];
            }
          max_scale = scales[ib] > max_scale ? scales[ib] : max_scale;
        }
      if (max_scale == 0)
        continue;
      const float d = max_scale / 31;
      y->d = hzq_fp32_to_fp16 (d * 0.9875f);
      const float id = 1 / d;
      for (int ib = 0; ib < 16; ib++)
        y->scales[ib / 2] |= (uint8_t) (scale_code (id, scales[ib]) << (4 * (ib % 2)));
    }
}

/* ---- IQ1_M --------------------------------------------------------------------------------- */

/* ggml's IQ1_M sub-block search (quantize_row_iq1_m_impl without importance): sub-blocks of
 * 16, values {−1, 0, 1} + δ with δ = ±1/8 chosen per 8 elements; the exact weighted
 * least-squares optimum over all splits of the sorted values into the three levels. */
#define IQ1M_DELTA 0.125f

static const float iq1m_xp[3] = { -1 + IQ1M_DELTA, IQ1M_DELTA, 1 + IQ1M_DELTA };
static const float iq1m_xm[3] = { -1 - IQ1M_DELTA, -IQ1M_DELTA, 1 - IQ1M_DELTA };

/* the value table of 8-group k (0, 1) under shift code sh: bit 1 of sh for group 0 and
 * bit 0 for group 1 select −δ */
static inline const float *
iq1m_values (int sh, int k)
{
  return (k == 0 ? sh < 2 : sh % 2 == 0) ? iq1m_xp : iq1m_xm;
}

/** floats -> IQ1_M (ggml_quantize_chunk(IQ1_M, imatrix = NULL); ggml has no _ref). */
void
iq1_m_from_float (const float *restrict x, void *restrict vy, int64_t n)
{
  pthread_once (&once_iq1, init_iq1);
  static const uint8_t masks[4] = { 0x00, 0x80, 0x08, 0x88 };
  for (HzBlockIQ1_M *y = vy; n >= 256; n -= 256, x += 256, y++)
    {
      float scales[16], w[16], max_scale = 0;
      int shifts[16];
      int8_t L[16];
      memset (y, 0, sizeof *y);
      for (int ib = 0; ib < 16; ib++)
        {
          const float *xb = x + 16 * ib;
          for (int i = 0; i < 16; i++)
            w[i] = xb[i] * xb[i];
          float max = fabsf (xb[0]);
          for (int i = 1; i < 16; i++)
            max = fabsf (xb[i]) > max ? fabsf (xb[i]) : max;
          scales[ib] = 0;
          shifts[ib] = 0;
          if (max < 1e-7f)
            continue;
          /* element order by value (stable, as glibc's merge-sort qsort on these inputs) */
          int ord[16];
          for (int j = 0; j < 16; j++)
            {
              int at = j;
              while (at > 0 && xb[ord[at - 1]] > xb[j])
                {
                  ord[at] = ord[at - 1];
                  at--;
                }
              ord[at] = j;
            }
          float best_score = -FLT_MAX, scale = max;
          int bi1 = -1, bi2 = -1, bk = -1;
          for (int i1 = 0; i1 <= 16; i1++)
            for (int i2 = i1; i2 <= 16; i2++)
              {
                float sqx[4] = { 0 }, sq2[4] = { 0 };
                for (int j = 0; j < 16; j++)
                  {
                    const int i = ord[j], lv = j < i1 ? 0 : j < i2 ? 1 : 2;
                    const float p = iq1m_xp[lv], m = iq1m_xm[lv];
                    /* k: bit 1 = group 0 uses −δ, bit 0 = group 1 uses −δ */
                    const float v[4] = { p, i < 8 ? p : m, i < 8 ? m : p, m };
                    for (int k = 0; k < 4; k++)
                      {
                        sqx[k] += w[i] * v[k] * xb[i];
                        sq2[k] += w[i] * v[k] * v[k];
                      }
                  }
                for (int k = 0; k < 4; k++)
                  if (sq2[k] > 0 && sqx[k] * sqx[k] > best_score * sq2[k])
                    {
                      scale = sqx[k] / sq2[k];
                      best_score = scale * sqx[k];
                      bi1 = i1;
                      bi2 = i2;
                      bk = k;
                    }
              }
          if (bi1 < 0)
            continue;
          for (int j = 0; j < 16; j++)
            L[ord[j]] = (int8_t) (j < bi1 ? 0 : j < bi2 ? 1 : 2);
          if (scale < 0)
            {
              for (int j = 0; j < 16; j++)
                L[j] = (int8_t) (2 - L[j]);
              scale = -scale;
              bk = 3 - bk;
            }
          int index[2];
          bool all_on_grid = true;
          for (int k = 0; k < 2; k++)
            {
              int u = 0;
              for (int j = 0; j < 8; j++)
                u |= L[8 * k + j] << (2 * j);
              index[k] = lat_iq1.map[u];
              if (index[k] < 0)
                {
                  all_on_grid = false;
                  index[k] = lattice_best (&lat_iq1, u, xb + 8 * k, w + 8 * k, scale,
                                           iq1m_values (bk, k), L + 8 * k);
                }
            }
          if (!all_on_grid)
            {
              float sqx = 0, sq2 = 0;
              for (int k = 0; k < 2; k++)
                {
                  const float *xx = iq1m_values (bk, k);
                  const int8_t *pg = lat_iq1.pts + 8 * index[k];
                  for (int j = 0; j < 8; j++)
                    {
                      const float q = xx[(pg[j] - 1) / 2];
                      sqx += w[8 * k + j] * q * xb[8 * k + j];
                      sq2 += w[8 * k + j] * q * q;
                    }
                }
              if (sqx > 0 && sq2 > 0)
                scale = sqx / sq2;
            }
          y->qs[2 * ib] = (uint8_t) (index[0] & 255);
          y->qs[2 * ib + 1] = (uint8_t) (index[1] & 255);
          y->qh[ib] = (uint8_t) ((index[0] >> 8) | (index[1] >> 8) << 4);
          scales[ib] = scale;
          shifts[ib] = bk;
          max_scale = scale > max_scale ? scale : max_scale;
        }
      if (max_scale == 0)
        continue;

      uint16_t sc[4] = { 0 };
      float d = max_scale / 15;
      const float id = 1 / d;
      float sqx = 0, sq2 = 0;
      for (int ib = 0; ib < 16; ib++)
        {
          const int l = clampi (hzq_nearest_int (0.5f * (id * scales[ib] - 1)), 0, 7);
          sc[ib / 4] |= (uint16_t) (l << (3 * (ib % 4)));
          y->qh[ib] |= masks[shifts[ib]];
          const float *xb = x + 16 * ib;
          for (int k = 0; k < 2; k++)
            {
              const float *xx = iq1m_values (shifts[ib], k);
              const int gidx = y->qs[2 * ib + k] + ((y->qh[ib] << (8 - 4 * k)) & 0x700);
              const int8_t *pg = lat_iq1.pts + 8 * gidx;
              for (int j = 0; j < 8; j++)
                {
                  const float wj = xb[8 * k + j] * xb[8 * k + j];
                  const float q = xx[(pg[j] - 1) / 2] * (float) (2 * l + 1);
                  sqx += wj * q * xb[8 * k + j];
                  sq2 += wj * q * q;
                }
            }
        }
      if (sq2 > 0)
        d = sqx / sq2;
      const uint16_t dh = hzq_fp32_to_fp16 (d * 1.1125f);
      sc[0] |= (uint16_t) ((dh & 0x000f) << 12);
      sc[1] |= (uint16_t) ((dh & 0x00f0) << 8);
      sc[2] |= (uint16_t) ((dh & 0x0f00) << 4);
      sc[3] |= (uint16_t) (dh & 0xf000);
      memcpy (y->scales, sc, 8);
    }
}
