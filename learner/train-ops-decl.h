/* learner/train-ops-decl.h — declarations of the training ops for one REAL type.
 * Included twice by train-ops.h (float: _f32, double: _f64); do not include directly.
 *
 * Conventions of every op:
 *  - Tensors are row-major [rows, cols], contiguous, of REAL unless stated. T is the number
 *    of tokens (rows) of one sequence.
 *  - Frozen model weights (norm weights, base matrices) come from the engine as float
 *    vectors or as HzMatrix in any quant-table format (engine/llm.h); they are never
 *    differentiated except by hz_op_embedding_bwd, which exists for completeness.
 *  - *_fwd writes its outputs (and the caches named in its comment); *_bwd ADDS the
 *    gradients with respect to its inputs into the given buffers (callers zero them), so
 *    that residual branches and shared inputs accumulate without copies.
 *  - No global state: all ops are reentrant and thread-safe on disjoint outputs. The heavy
 *    ops have a *_mt twin that takes an HzOpsThreads (train-ops.h; NULL = the calling thread
 *    only) and gives bit-identical results for every thread count; the plain op is the
 *    *_mt one on the calling thread.
 */
#include "real.h"

/* ------------------------------------------------------------------ RMSNorm */

/** RMSNorm forward (Zhang & Sennrich 2019; llama.cpp's rms_norm * weight):
 *  rstd[t] = 1 / sqrt(mean_j x[t,j]^2 + eps), y[t,j] = x[t,j] * rstd[t] * w[j].
 *  x, y: [n_rows, d] (may alias); rstd: [n_rows] cache for the backward; w: float [d] or
 *  NULL (no weight). The sum of squares is accumulated in double. */
void HZ_R (hz_op_rmsnorm_fwd) (REAL *y, REAL *rstd, const REAL *x, const float *w,
                               int64_t n_rows, int64_t d, float eps);

/** RMSNorm backward: with g_j = dy_j w_j, dx_j += rstd * g_j - rstd^3 / d * x_j *
 *  sum_k g_k x_k. dw (nullable, [d]) += sum_t dy[t,j] x[t,j] rstd[t]. x is the forward
 *  input, rstd its cache. dx must not alias dy. */
void HZ_R (hz_op_rmsnorm_bwd) (REAL *dx, REAL *dw, const REAL *dy, const REAL *x,
                               const float *w, const REAL *rstd, int64_t n_rows, int64_t d);

/* --------------------------------------------------------------------- RoPE */

/** Rotary position embedding (Su et al. 2021, arXiv 2104.09864), in place on x
 *  [T, n_heads * head_dim]: the first n_rot dims of every head are rotated by the angles
 *  of the token's position. cs: float [T, n_rot] tables from the engine's
 *  hz_cpu_rope_cache (cs[2i] = m cos theta_i, cs[2i+1] = m sin theta_i, m the YaRN
 *  magnitude), so every scaling mode of the engine is covered. mode: HZ_ROPE_NORM rotates
 *  (x[2i], x[2i+1]) (Llama in GGUF layout), HZ_ROPE_NEOX rotates (x[i], x[i + n_rot/2])
 *  (Qwen, and Llama in Hugging Face layout). transpose = TRUE applies the transposed
 *  rotation R^T, which is the backward of the op (dx = R^T dy); it is applied in place to
 *  the gradient, so unlike the other *_bwd ops it overwrites instead of accumulating. */
void HZ_R (hz_op_rope) (REAL *x, const float *cs, int64_t T, int32_t n_heads,
                        int32_t head_dim, int32_t n_rot, HzRopeMode mode, gboolean transpose);

/* ---------------------------------------------------------------- attention */

/** Causal scaled dot-product attention with grouped-query heads (GQA, Ainslie et al.
 *  2023): head h reads key/value head h / (n_head / n_head_kv).
 *  q: [T, n_head * hdk]; k: [T, n_head_kv * hdk]; v: [T, n_head_kv * hdv];
 *  out: [T, n_head * hdv]; P: cache [n_head, T, T] of the softmax probabilities
 *  P[h,t,s] = softmax_s<=t (q_t . k_s / sqrt(hdk)) (entries s > t are set to 0).
 *  Softmax is max-subtracted with the sum in double. */
void HZ_R (hz_op_attention_fwd) (REAL *out, REAL *P, const REAL *q, const REAL *k,
                                 const REAL *v, int64_t T, int32_t n_head, int32_t n_head_kv,
                                 int32_t hdk, int32_t hdv);
/** hz_op_attention_fwd on th's threads (nullable: the calling thread), split by heads. */
void HZ_R (hz_op_attention_fwd_mt) (HzOpsThreads *th, REAL *out, REAL *P, const REAL *q,
                                    const REAL *k, const REAL *v, int64_t T, int32_t n_head,
                                    int32_t n_head_kv, int32_t hdk, int32_t hdv);

/** Attention backward from dout [T, n_head * hdv] and the forward's q, k, v and P:
 *  dP = dout_h V^T, dS = P * (dP - rowsum(P * dP)), dq += dS K / sqrt(hdk),
 *  dk += dS^T Q / sqrt(hdk), dv += P^T dout (summed over the heads of a group).
 *  dq, dk, dv have the shapes of q, k, v. */
void HZ_R (hz_op_attention_bwd) (REAL *dq, REAL *dk, REAL *dv, const REAL *dout,
                                 const REAL *q, const REAL *k, const REAL *v, const REAL *P,
                                 int64_t T, int32_t n_head, int32_t n_head_kv,
                                 int32_t hdk, int32_t hdv);
/** hz_op_attention_bwd on th's threads (nullable), split by key/value heads (the heads of
 *  a group are summed in index order by one thread). */
void HZ_R (hz_op_attention_bwd_mt) (HzOpsThreads *th, REAL *dq, REAL *dk, REAL *dv,
                                    const REAL *dout, const REAL *q, const REAL *k,
                                    const REAL *v, const REAL *P, int64_t T, int32_t n_head,
                                    int32_t n_head_kv, int32_t hdk, int32_t hdv);

/* ------------------------------------------------------------------- SwiGLU */

/** SwiGLU (Shazeer 2020, arXiv 2002.05202): h = silu(g) * u, silu(g) = g / (1 + e^-g).
 *  g, u, h: [n] (h may not alias g or u). */
void HZ_R (hz_op_swiglu_fwd) (REAL *h, const REAL *g, const REAL *u, int64_t n);
/** hz_op_swiglu_fwd on th's threads (nullable). */
void HZ_R (hz_op_swiglu_fwd_mt) (HzOpsThreads *th, REAL *h, const REAL *g, const REAL *u,
                                 int64_t n);

/** SwiGLU backward: with s = sigmoid(g), dg += dh * u * s * (1 + g (1 - s)),
 *  du += dh * g * s. */
void HZ_R (hz_op_swiglu_bwd) (REAL *dg, REAL *du, const REAL *dh, const REAL *g,
                              const REAL *u, int64_t n);
/** hz_op_swiglu_bwd on th's threads (nullable). */
void HZ_R (hz_op_swiglu_bwd_mt) (HzOpsThreads *th, REAL *dg, REAL *du, const REAL *dh,
                                 const REAL *g, const REAL *u, int64_t n);

/* ---------------------------------------------------------------- embedding */

/** Embedding lookup: y[t] = row tokens[t] of `table` (an engine matrix of n_out = n_vocab
 *  rows of n_in = d elements, any quant format, dequantized with the table's to_float).
 *  y: [T, d]. Token ids must be in [0, n_vocab) (asserted). */
void HZ_R (hz_op_embedding_fwd) (REAL *y, const HzMatrix *table, const int32_t *tokens,
                                 int64_t T);

/** Embedding backward: dtable[tokens[t]] += dy[t] for a dense gradient dtable
 *  [n_vocab, d]. (The base embedding is frozen in LoRA training; this op serves trainable
 *  embeddings and the gradient check.) */
void HZ_R (hz_op_embedding_bwd) (REAL *dtable, const REAL *dy, const int32_t *tokens,
                                 int64_t T, int64_t d);

/* -------------------------------------------------- linear with LoRA (QLoRA) */

/** Linear layer over a frozen base in any quant format with an optional LoRA branch
 *  (LoRA, Hu et al. 2021, arXiv 2106.09685; QLoRA, Dettmers et al. 2023, arXiv
 *  2305.14314):  y = x W^T + bias + scaling * (x A^T) B^T.
 *  x: [T, n_in]; y: [T, n_out]; W: engine matrix with n_in, n_out (rows dequantized on
 *  the fly with the table's to_float, a block at a time into reused scratch, never the
 *  whole matrix; the float result equals f64 up to rounding, not bit for bit); bias: float
 *  [n_out] or NULL; A: [r, n_in], B: [n_out, r] (NULL: no LoRA); u: cache [T, r] of x A^T
 *  (required when A is given). y must not alias x. */
void HZ_R (hz_op_linear_fwd) (REAL *y, REAL *u, const REAL *x, int64_t T, const HzMatrix *W,
                              const float *bias, const REAL *A, const REAL *B, int32_t r,
                              REAL scaling);
/** hz_op_linear_fwd on th's threads (nullable). In float, the products are train-ops-gemm.h's
 *  (blocked, AVX2/FMA when available; W dequantized 64 rows at a time into per-thread
 *  scratch, never as a whole); in double, plain loops (the gradient-check reference). */
void HZ_R (hz_op_linear_fwd_mt) (HzOpsThreads *th, REAL *y, REAL *u, const REAL *x, int64_t T,
                                 const HzMatrix *W, const float *bias, const REAL *A,
                                 const REAL *B, int32_t r, REAL scaling);

/** The LoRA branch's input projection alone: u = x A^T (x: [T, n_in], A: [r, n_in], u:
 *  [T, r]), the same values hz_op_linear_fwd_mt caches in u (bit for bit). For recomputing a
 *  layer whose base output is not needed again (the activation-recomputation pass). */
void HZ_R (hz_op_lora_u_mt) (HzOpsThreads *th, REAL *u, const REAL *x, int64_t T, int64_t n_in,
                             const REAL *A, int32_t r);

/** Linear backward from dy [T, n_out]:
 *   dB += scaling * dy^T u            ([n_out, r])
 *   du  = scaling * dy B              ([T, r], internal)
 *   dA += du^T x                      ([r, n_in])
 *   dx += dy W + du A                 ([T, n_in])
 *  Each of dx, dA, dB may be NULL to skip it (dA and dB together: frozen LoRA). */
void HZ_R (hz_op_linear_bwd) (REAL *dx, REAL *dA, REAL *dB, const REAL *dy, const REAL *x,
                              const REAL *u, int64_t T, const HzMatrix *W, const REAL *A,
                              const REAL *B, int32_t r, REAL scaling);
/** hz_op_linear_bwd on th's threads (nullable); float uses train-ops-gemm.h's products (W
 *  dequantized by 256-row x column-chunk blocks), double plain loops. */
void HZ_R (hz_op_linear_bwd_mt) (HzOpsThreads *th, REAL *dx, REAL *dA, REAL *dB,
                                 const REAL *dy, const REAL *x, const REAL *u, int64_t T,
                                 const HzMatrix *W, const REAL *A, const REAL *B, int32_t r,
                                 REAL scaling);

/* ------------------------------------------------ log-probs and cross-entropy */

/** Log-probability of the target tokens: logp[t] = logits[t, y_t] - logsumexp(logits[t]),
 *  with y_t = targets[t]; rows whose target is negative (ignored) get logp 0.
 *  logits: [T, V]. The log-sum-exp is computed in double. */
void HZ_R (hz_op_logprob_fwd) (REAL *logp, const REAL *logits, const int32_t *targets,
                               int64_t T, int64_t V);
/** hz_op_logprob_fwd on th's threads (nullable), split by rows. */
void HZ_R (hz_op_logprob_fwd_mt) (HzOpsThreads *th, REAL *logp, const REAL *logits,
                                  const int32_t *targets, int64_t T, int64_t V);

/** Backward of hz_op_logprob_fwd: dlogits[t, v] += dlogp[t] * (1[v = y_t] - softmax_v),
 *  nothing for ignored rows. */
void HZ_R (hz_op_logprob_bwd) (REAL *dlogits, const REAL *dlogp, const REAL *logits,
                               const int32_t *targets, int64_t T, int64_t V);
/** hz_op_logprob_bwd on th's threads (nullable), split by rows. */
void HZ_R (hz_op_logprob_bwd_mt) (HzOpsThreads *th, REAL *dlogits, const REAL *dlogp,
                                  const REAL *logits, const int32_t *targets, int64_t T,
                                  int64_t V);

/** Masked cross-entropy, summed: returns sum over t with targets[t] >= 0 of
 *  -log softmax(logits[t])[targets[t]] (as torch.nn.functional.cross_entropy with
 *  reduction "sum" and ignore_index < 0), in double; *n_valid (nullable) receives the
 *  number of counted rows. Targets >= V are a programming error (asserted). */
double HZ_R (hz_op_cross_entropy_fwd) (const REAL *logits, const int32_t *targets, int64_t T,
                                       int64_t V, int64_t *n_valid);
/** hz_op_cross_entropy_fwd on th's threads (nullable): per-row losses in parallel, summed
 *  in row order on the calling thread (the same value as the serial op). */
double HZ_R (hz_op_cross_entropy_fwd_mt) (HzOpsThreads *th, const REAL *logits,
                                          const int32_t *targets, int64_t T, int64_t V,
                                          int64_t *n_valid);

/** Backward of `weight` x the summed cross-entropy (weight = 1 / n_valid gives the mean):
 *  dlogits[t, v] += weight * (softmax_v - 1[v = y_t]) for the counted rows. */
void HZ_R (hz_op_cross_entropy_bwd) (REAL *dlogits, const REAL *logits, const int32_t *targets,
                                     int64_t T, int64_t V, double weight);
/** hz_op_cross_entropy_bwd on th's threads (nullable), split by rows. */
void HZ_R (hz_op_cross_entropy_bwd_mt) (HzOpsThreads *th, REAL *dlogits, const REAL *logits,
                                        const int32_t *targets, int64_t T, int64_t V,
                                        double weight);
