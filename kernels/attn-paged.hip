/* kernels/attn-paged.hip — attention over a paged KV cache (issue 5, PagedAttention:
 * Kwon et al., SOSP 2023): the K/V of many sequences live in one pool of blocks of s
 * token slots; a sequence reaches its positions through its block table (engine/kv-paged.h
 * keeps the tables on the host, engine/backend-hip/forward-gpu-paged.c mirrors them here).
 *
 * Pool layout (one layer): K [P][s][dk], V [P][s][dv] fp32 (dk = n_head_kv·hdk,
 * dv = n_head_kv·hdv; rows not transposed, as the contiguous cache of hzk_qkv_rope).
 * Position p of a sequence with block table tab lives in block tab[p / s], slot p % s.
 *
 * Rows: a batch is n rows (tokens) of several sequences: row t is at position pos[t] of
 * sequence seq[t], whose table is tables[seq[t]·tab_stride ..]. A row attends to the
 * positions 0..pos[t] of its sequence (causal), so the decode token of a sequence and the
 * rows of a prompt chunk are the same case: the chunk's own K/V are stored first
 * (hzk_paged_kv_store), then every row reads through the table (hzk_attn_paged).
 *
 * hzk_attn_paged is split-K flash attention per (row, head): n_split blocks each take a
 * contiguous share of the row's positions with an online softmax (running max, sum and
 * output), then a merge. Formula: out = softmax(scale · q·K^T) V, as hzk_attn_decode.
 * C ABI: kernels/hzk.h. Reading reference (not copied): vLLM's paged_attention kernels.
 */
#include "gpu_compat.h"
#include "hzk.h"
#include "attn-mask.h"

#include <math.h>

#define HZK_PGA_THREADS 128
#define HZK_PGA_SEG 32
#define HZK_PGA_MAXD 256

#define S(stream) ((hipStream_t) (stream))

/** Slot of position p of row t's sequence: the pool row index (block · s + p % s). */
static __device__ __forceinline__ int64_t
hzk_paged_slot (const int *HZK_RESTRICT tab, int s, int p)
{
  return (int64_t) tab[p / s] * s + p % s;
}

/** Block (t): row t of k_rows [n][dk] and v_rows [n][dv] into slot pos[t] of its table. */
__global__ void __launch_bounds__ (HZK_PGA_THREADS)
hzk_paged_kv_store_kernel (const float *HZK_RESTRICT k_rows, const float *HZK_RESTRICT v_rows,
                           int64_t dk, int64_t dv, const int *HZK_RESTRICT pos,
                           const int *HZK_RESTRICT seq, const int *HZK_RESTRICT tables,
                           int tab_stride, int s, float *HZK_RESTRICT k_pool,
                           float *HZK_RESTRICT v_pool)
{
  const int t = blockIdx.x;
  const int64_t slot = hzk_paged_slot (tables + (int64_t) seq[t] * tab_stride, s, pos[t]);
  for (int64_t i = threadIdx.x; i < dk; i += blockDim.x)
    k_pool[slot * dk + i] = k_rows[(int64_t) t * dk + i];
  for (int64_t i = threadIdx.x; i < dv; i += blockDim.x)
    v_pool[slot * dv + i] = v_rows[(int64_t) t * dv + i];
}

/** Block (h, split, t): q head h of row t against its positions [lo + split·chunk,
 *  min(n_kv, lo + (split+1)·chunk)), chunk = ceil((n_kv − lo) / n_split), n_kv = pos[t] + 1,
 *  lo the first position of the row's window under mk (else 0; scores soft-capped when mk
 *  says). Each
 *  32-lane segment walks every 4th position (online softmax, lane owning dims lane + 32i);
 *  the four are merged into part[t][h][split] = {m, l, acc[hdv]}. An empty share writes
 *  m = −inf, l = 0. */
__global__ void __launch_bounds__ (HZK_PGA_THREADS)
hzk_attn_paged_split_kernel (const float *HZK_RESTRICT q, const float *HZK_RESTRICT k_pool,
                             const float *HZK_RESTRICT v_pool, const int *HZK_RESTRICT pos,
                             const int *HZK_RESTRICT seq, const int *HZK_RESTRICT tables,
                             int tab_stride, int s, int n_head, int n_head_kv, int hdk, int hdv,
                             float scale, HzkAttnMask mk, float *HZK_RESTRICT part)
{
  constexpr int NW = HZK_PGA_THREADS / HZK_PGA_SEG, MAXV = HZK_PGA_MAXD / HZK_PGA_SEG;
  __shared__ float qs[HZK_PGA_MAXD];
  __shared__ float wm[NW], wl[NW];
  __shared__ float wacc[NW][HZK_PGA_MAXD];
  const int h = blockIdx.x, split = blockIdx.y, n_split = gridDim.y, t = blockIdx.z;
  const int kvh = h / (n_head / n_head_kv);
  const int n_kv = pos[t] + 1, lo = hzk_attn_lo (mk, pos[t]);
  const int chunk = (n_kv - lo + n_split - 1) / n_split;
  const int j0 = lo + split * chunk, j1 = min (n_kv, j0 + chunk);
  const int64_t dk = (int64_t) n_head_kv * hdk, dv = (int64_t) n_head_kv * hdv;
  const int *tab = tables + (int64_t) seq[t] * tab_stride;
  for (int i = threadIdx.x; i < hdk; i += blockDim.x)
    qs[i] = q[((int64_t) t * n_head + h) * hdk + i];
  __syncthreads ();

  const int w = threadIdx.x / HZK_PGA_SEG, lane = threadIdx.x % HZK_PGA_SEG;
  float m = -INFINITY, l = 0.0f, acc[MAXV];
#pragma unroll
  for (int i = 0; i < MAXV; i++)
    acc[i] = 0.0f;
  for (int j = j0 + w; j < j1; j += NW)
    {
      const int64_t slot = hzk_paged_slot (tab, s, j);
      const float *kj = k_pool + slot * dk + (int64_t) kvh * hdk;
      float sc = 0.0f;
      for (int d = lane; d < hdk; d += HZK_PGA_SEG)
        sc += qs[d] * kj[d];
      sc = hzk_softcap_score (mk, hzk_segment_sum (sc, HZK_PGA_SEG) * scale);
      const float m_new = fmaxf (m, sc);
      const float corr = expf (m - m_new), p = expf (sc - m_new);
      l = l * corr + p;
      const float *vj = v_pool + slot * dv + (int64_t) kvh * hdv;
#pragma unroll
      for (int i = 0; i < MAXV; i++)
        {
          const int d = lane + HZK_PGA_SEG * i;
          if (d < hdv)
            acc[i] = acc[i] * corr + p * vj[d];
        }
      m = m_new;
    }
  if (lane == 0)
    {
      wm[w] = m;
      wl[w] = l;
    }
#pragma unroll
  for (int i = 0; i < MAXV; i++)
    {
      const int d = lane + HZK_PGA_SEG * i;
      if (d < hdv)
        wacc[w][d] = acc[i];
    }
  __syncthreads ();
  float M = -INFINITY;
  for (int i = 0; i < NW; i++)
    M = fmaxf (M, wm[i]);
  float *out = part + (((int64_t) t * n_head + h) * n_split + split) * (2 + hdv);
  if (threadIdx.x == 0)
    {
      float L = 0.0f;
      for (int i = 0; i < NW; i++)
        L += wm[i] == -INFINITY ? 0.0f : wl[i] * expf (wm[i] - M);
      out[0] = M;
      out[1] = L;
    }
  for (int d = threadIdx.x; d < hdv; d += blockDim.x)
    {
      float a = 0.0f;
      for (int i = 0; i < NW; i++)
        a += wm[i] == -INFINITY ? 0.0f : wacc[i][d] * expf (wm[i] - M);
      out[2 + d] = a;
    }
}

/** Block (h, t): merge the n_split partials of row t, head h:
 *  out[t][h·hdv + d] = Σ_s acc_s[d] e^{m_s − M} / Σ_s l_s e^{m_s − M}. */
__global__ void __launch_bounds__ (HZK_PGA_THREADS)
hzk_attn_paged_merge_kernel (const float *HZK_RESTRICT part, int n_head, int n_split, int hdv,
                             float *HZK_RESTRICT out)
{
  const int h = blockIdx.x, t = blockIdx.y;
  const float *p = part + ((int64_t) t * n_head + h) * n_split * (2 + hdv);
  float M = -INFINITY;
  for (int sp = 0; sp < n_split; sp++)
    M = fmaxf (M, p[sp * (2 + hdv)]);
  float L = 0.0f;
  for (int sp = 0; sp < n_split; sp++)
    {
      const float ms = p[sp * (2 + hdv)];
      L += ms == -INFINITY ? 0.0f : p[sp * (2 + hdv) + 1] * expf (ms - M);
    }
  const float inv = 1.0f / L;
  for (int d = threadIdx.x; d < hdv; d += blockDim.x)
    {
      float a = 0.0f;
      for (int sp = 0; sp < n_split; sp++)
        {
          const float ms = p[sp * (2 + hdv)];
          if (ms != -INFINITY)
            a += p[sp * (2 + hdv) + 2 + d] * expf (ms - M);
        }
      out[((int64_t) t * n_head + h) * hdv + d] = a * inv;
    }
}

/** Block (i): dst[i][0..width) = src[idx[i]][0..width) (rows ld floats apart). */
__global__ void __launch_bounds__ (HZK_PGA_THREADS)
hzk_gather_rows_kernel (const float *HZK_RESTRICT src, int64_t ld, const int *HZK_RESTRICT idx,
                        int64_t width, float *HZK_RESTRICT dst)
{
  const int64_t r = idx[blockIdx.x];
  for (int64_t i = threadIdx.x; i < width; i += blockDim.x)
    dst[(int64_t) blockIdx.x * width + i] = src[r * ld + i];
}

/* ---- host launchers ----------------------------------------------------------------------- */

extern "C" int
hzk_paged_kv_store (const float *k_rows, const float *v_rows, int64_t dk, int64_t dv,
                    const int *pos, const int *seq, const int *tables, int tab_stride,
                    int block_size, int n, float *k_pool, float *v_pool, void *stream)
{
  if (n < 1 || block_size < 1 || tab_stride < 1)
    return (int) hipErrorInvalidValue;
  hzk_paged_kv_store_kernel<<<n, HZK_PGA_THREADS, 0, S (stream)>>> (
      k_rows, v_rows, dk, dv, pos, seq, tables, tab_stride, block_size, k_pool, v_pool);
  return (int) hipGetLastError ();
}

extern "C" size_t
hzk_attn_paged_part_bytes (int n_rows, int n_head, int hdv, int n_split)
{
  return sizeof (float) * (size_t) n_rows * n_head * n_split * (2 + hdv);
}

extern "C" int
hzk_attn_paged (const float *q, const float *k_pool, const float *v_pool, const int *pos,
                const int *seq, const int *tables, int tab_stride, int block_size, int n,
                int n_head, int n_head_kv, int hdk, int hdv, float scale, int n_split,
                float *part, float *out, void *stream)
{
  return hzk_attn_paged_ext (q, k_pool, v_pool, pos, seq, tables, tab_stride, block_size, n,
                             n_head, n_head_kv, hdk, hdv, scale, HzkAttnMask {}, n_split, part,
                             out, stream);
}

extern "C" int
hzk_attn_paged_ext (const float *q, const float *k_pool, const float *v_pool, const int *pos,
                    const int *seq, const int *tables, int tab_stride, int block_size, int n,
                    int n_head, int n_head_kv, int hdk, int hdv, float scale, HzkAttnMask mask,
                    int n_split, float *part, float *out, void *stream)
{
  if (hdk > HZK_PGA_MAXD || hdv > HZK_PGA_MAXD || n_split < 1 || n < 1 || n_head_kv < 1
      || n_head % n_head_kv || block_size < 1 || tab_stride < 1)
    return (int) hipErrorInvalidValue;
  hzk_attn_paged_split_kernel<<<dim3 (n_head, n_split, n), HZK_PGA_THREADS, 0, S (stream)>>> (
      q, k_pool, v_pool, pos, seq, tables, tab_stride, block_size, n_head, n_head_kv, hdk, hdv,
      scale, mask, part);
  hzk_attn_paged_merge_kernel<<<dim3 (n_head, n), HZK_PGA_THREADS, 0, S (stream)>>> (
      part, n_head, n_split, hdv, out);
  return (int) hipGetLastError ();
}

extern "C" int
hzk_gather_rows (const float *src, int64_t ld, const int *idx, int n, int64_t width, float *dst,
                 void *stream)
{
  if (n < 1 || width < 1 || ld < width)
    return (int) hipErrorInvalidValue;
  hzk_gather_rows_kernel<<<n, HZK_PGA_THREADS, 0, S (stream)>>> (src, ld, idx, width, dst);
  return (int) hipGetLastError ();
}
