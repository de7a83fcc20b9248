/* tests/gpu/test-forward.c — the whole GPU decode step (engine/backend-hip/forward-gpu.c)
 * against the CPU forward pass (engine/cpu/forward.c) on real model files, and its speed.
 *
 *   test-forward [MODEL.gguf ...]     default: stories260K.gguf and every file of
 *                                     stories-distill/ in the shared data (skip if absent)
 *   test-forward --moe VOCAB.gguf     only the synthetic MoE models below
 *   test-forward --gemma VOCAB.gguf   only the synthetic Gemma models (gemma_models below)
 *   test-forward --bench MODEL.gguf [N]   decode speed only (tools/bench-gpu.sh)
 *
 * With stories260K.gguf in the shared data, the default run adds three small synthetic
 * mixture-of-experts models made with its vocabulary (hz_synth_write: tiny-qwen3moe Q4_K,
 * tiny-mixtral F32, tiny-qwen2moe F32 with its shared expert): the router, top-k, the
 * routed experts (kernels/moe.hip) in the decode graph and the grouped prefill, under the
 * same checks and thresholds as the quantized models; and four synthetic Gemma models
 * (tiny-gemma3 and tiny-gemma2, F32 and Q8_0: sliding-window layers, the window layers'
 * RoPE table, q/k norms, post-norms, GeGLU, the scaled embedding, soft-capping).
 *
 * Per model:
 *  1. a prompt of two sentences (PROMPT, with BOS, ~50 tokens) on both backends, the GPU's
 *     as two prefill passes (hz_gpu_forward_eval of n > 1 tokens: qmmq matmuls, tiled
 *     causal attention), the first half with every row's logits, the second from position
 *     n/2 with the last row's; then 32 greedy steps in lockstep, both fed the CPU's token.
 *     prefill  the logits of the last prompt token vs the CPU's (the thresholds below),
 *              the next id (argmax of the last row) identical; every row of the first pass
 *              (positions 0..n/2−1) 5e-2 for quantized models (measured up to 3.0e-2: the
 *              first positions' logits carry the same absolute noise with less signal);
 *     ids      equal at every step, except near ties: a step may differ only where the
 *              CPU's logit of the GPU's choice is within the step's largest logit
 *              difference of the CPU's best (quantized models accumulate ~1e-2 of
 *              int8-rounding noise over a long context, see below, which can flip the
 *              order of two tokens that close);
 *  2. the prompt "Once upon a time" (a prefill of a few tokens), then 64 greedy steps in
 *     lockstep. Checks:
 *   ids     the argmax of the GPU logits equals the CPU's at every step;
 *   logits  norm-wise relative error ||gpu − cpu|| / ||cpu||, worst step:
 *           float-weight models 1e-3 (measured 2e-6: only the summation order differs);
 *           quantized models 5e-2 (measured 6e-3 .. 2.1e-2 on stories-distill with the
 *           fp32 prefill attention and the first tensor-core qmmq tile; 4.1e-2 on
 *           Q4_K_M since the prefill attention runs on fp16 tensor cores (2.4e-2 with
 *           HZ_GPU_ATTN=fp32) and a 5-token prompt's matmul splits K across warps (2.7e-2
 *           with HZ_GPU_MMQ_TILE=big): both only change rounding and summation order, the
 *           ids stay identical; H200, 2026-11-30). The GPU
 *           quantizes the activations bit for bit as the CPU does (Q8_0 / Q8_1 / Q8_K,
 *           test-ops), but the int8 rounding amplifies any 1-ulp difference of a matvec
 *           (another summation order) into a one-step change of some q, whose effect
 *           then crosses more rounding boundaries in the next layers: after a few layers
 *           the two backends differ by about one quantization step of noise, ~1e-2.
 *           Models with tensors on the F16 fallback (no device decoder: the GPU reads
 *           fp16-rounded weights with fp32 activations) 5e-2;
 *   graph   hz_gpu_forward_greedy (device-side argmax feeding the next step, position
 *           updated on the device, the captured graph replayed) gives the same 63 ids;
 *   sample  hz_gpu_forward_sample (the device sampler in the graph) with top-k 1 at
 *           temperature 0.8 gives the same 63 ids, and with top-k 40 / top-p 0.95 /
 *           min-p 0.05 ids in the vocabulary (its distribution: test-ops).
 *  3. generation through the public API (hz_context_generate, the short prompt, 64
 *     tokens, EOG ignored) on a GPU context, which samples on the device (the decode
 *     graph ends in the draw, 4 bytes back per token):
 *   greedy   temperature 0, and top-k 1 at temperature 0.8, give the ids of a CPU context
 *            (HZ_DEVICE=cpu) and of the GPU context sampling on the host (HZ_GPU_SAMPLE=0);
 *   seeded   top-k 40 / top-p 0.95 / min-p 0.05 at temperature 0.8, seed 7: two runs give
 *            the same ids (the device's float sums differ from the CPU's, so the draws
 *            need not match the host sampler's: how many leading ids do is printed).
 *  4. the decode step's opt-in fusions (HZ_GPU_FUSE=1: attention merge in the split
 *     launch, MoE router + routing in one launch, the MoE weighted sum in the next norm;
 *     issue 21) against the default step, the short prompt and the 64 ids of check 2:
 *     logits bit-identical at every step (the dependent launches, HZ_GPU_PDL, are on in
 *     both).
 * --bench: synthetic or real model, n_ctx 512: prompt tokens/s of a 512-token prefill
 * (pp512, best of 3 after a warm-up), tokens/s of 128 graph-replayed greedy
 * steps (the mean of 3 runs) and of 128 host-driven steps (hz_gpu_forward_eval, logits copied back each
 * step), GB/s = weight bytes read per token × tokens/s, next to the device's copy
 * bandwidth; then op-by-op times of one decode step and of the pp512 pass
 * (hz_gpu_forward_profile); then tg128 through hz_context_generate (greedy and llama.cpp's
 * sampling defaults, EOG ignored) with the device sampler and with the host sampler
 * (HZ_GPU_SAMPLE=0: the logits row copied back each token; HZ_BENCH_GENERATE=0 skips
 * these). TAP output; exit 77 (skip)
 * without a GPU or models.
 */
#include "cpu/forward.h"
#include "forward-gpu.h"
#include "hanzo/engine.h"
#include "model-private.h"
#include "hz-gpu.h"
#include "synth.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_STEPS 64

static int n_test, n_fail;

static int
argmax (const float *v, int n)
{
  int b = 0;
  for (int i = 1; i < n; i++)
    if (v[i] > v[b])
      b = i;
  return b;
}

static double
rel_err (const float *a, const float *ref, int64_t n)
{
  double se = 0, sr = 0;
  for (int64_t i = 0; i < n; i++)
    {
      se += ((double) a[i] - ref[i]) * ((double) a[i] - ref[i]);
      sr += (double) ref[i] * ref[i];
    }
  const double e = sqrt (se / (sr > 0 ? sr : 1));
  return isfinite (e) ? e : INFINITY;
}

/* A prompt of about 40..140 tokens (by tokenizer): several prefill tiles of 8 queries and
 * 32 tokens, split in two passes so that the second starts at a position > 0. */
#define PROMPT "Once upon a time, there was a little girl named Lily. She loved to play " \
               "outside in the park with her friends. One day, she saw a big red ball under a tree"
#define SHORT_PROMPT "Once upon a time"

static double
max_abs_diff (const float *a, const float *b, int n)
{
  double m = 0;
  for (int i = 0; i < n; i++)
    m = MAX (m, fabs ((double) a[i] - b[i]));
  return m;
}

/* n_steps greedy steps in lockstep from the logits lc (CPU) / lg (GPU) of position pos - 1,
 * both fed the CPU's token. ids_c[s] = the CPU's choice at step s. *first_diff = the first
 * step whose argmaxes differ (-1: none), *n_diff how many do; *flips = steps where they differ but the GPU's
 * choice is within the step's largest logit difference of the CPU's best (a near tie that
 * the backends' rounding can flip); *worst = the largest norm-wise logit error. */
static gboolean
lockstep (HzCpuForward *cpu, HzGpuForward *gpu, int nv, float *lc, float *lg, guint pos,
          int n_steps, int32_t *ids_c, int *first_diff, int *n_diff, int *flips, double *worst,
          GError **error)
{
  *first_diff = -1;
  *n_diff = 0;
  *flips = 0;
  *worst = 0;
  for (int s = 0; s < n_steps; s++)
    {
      *worst = MAX (*worst, rel_err (lg, lc, nv));
      ids_c[s] = argmax (lc, nv);
      const int idg = argmax (lg, nv);
      if (ids_c[s] != idg)
        {
          if (*first_diff < 0)
            *first_diff = s;
          (*n_diff)++;
          *flips += lc[ids_c[s]] - lc[idg] <= max_abs_diff (lg, lc, nv);
        }
      if (s + 1 < n_steps
          && !(hz_cpu_forward_eval (cpu, &ids_c[s], 1, pos, FALSE, lc, error)
               && hz_gpu_forward_eval (gpu, &ids_c[s], 1, pos, FALSE, lg, error)))
        return FALSE;
      pos++;
    }
  return TRUE;
}

/* hz_context_generate of n_predict tokens (EOG ignored) from prompt on a new context of
 * model, with HZ_DEVICE / HZ_GPU_SAMPLE set to device / gpu_sample for the call (NULL:
 * unset), n_runs times on the same context; the ids of run r into ids[r]. *tps = the
 * best tokens/s of the runs' generation phase, if larger (may be NULL). */
/* The decode step's opt-in fusions (HZ_GPU_FUSE=1, engine/backend-hip/forward-gpu.c: the
 * attention merge in the split launch, the MoE router + routing in one launch, the MoE
 * weighted sum in the next norm) change no arithmetic: a context made with HZ_GPU_FUSE=1
 * and `gpu` (the default step), fed the same prompt and ids, give bit-identical logits at
 * every step. */
static void
check_fused (const HzLlm *llm, HzGpuForward *gpu, const char *base, const HzToken *prompt,
               gsize n_prompt, const int32_t *ids, int n_steps, guint n_ctx)
{
  GError *error = NULL;
  const int nv = llm->hp.n_vocab;
  g_setenv ("HZ_GPU_FUSE", "1", TRUE);
  HzGpuForward *fz = hz_gpu_forward_new (llm, n_ctx, &error);
  g_unsetenv ("HZ_GPU_FUSE");
  float *a = g_new (float, nv), *b = g_new (float, nv);
  int same = 0;
  gboolean ok = fz && hz_gpu_forward_eval (gpu, prompt, n_prompt, 0, FALSE, a, &error)
                && hz_gpu_forward_eval (fz, prompt, n_prompt, 0, FALSE, b, &error);
  for (int s = 0; ok && s < n_steps; s++)
    {
      ok = hz_gpu_forward_eval (gpu, &ids[s], 1, (guint) n_prompt + s, FALSE, a, &error)
           && hz_gpu_forward_eval (fz, &ids[s], 1, (guint) n_prompt + s, FALSE, b, &error);
      same += ok && memcmp (a, b, sizeof (float) * nv) == 0;
    }
  if (!ok)
    printf ("not ok %d - %s: fused vs unfused: %s\n", ++n_test, base,
            error ? error->message : "?");
  else
    printf ("%s %d - %-30s fused decode step (HZ_GPU_FUSE=1) vs default: logits bit-identical "
            "at %d/%d steps\n", same == n_steps ? "ok" : "not ok", ++n_test, base, same, n_steps);
  n_fail += !ok || same != n_steps;
  g_clear_error (&error);
  hz_gpu_forward_free (fz);
  g_free (a), g_free (b);
}

static gboolean
generate_ids (HzModel *model, guint n_ctx, const char *device, const char *gpu_sample,
              const HzToken *prompt, gsize n_prompt, const HzSamplerParams *sp, int n_predict,
              int n_runs, GArray **ids, double *tps, GError **error)
{
  g_autofree char *old_dev = g_strdup (g_getenv ("HZ_DEVICE"));
  g_autofree char *old_smp = g_strdup (g_getenv ("HZ_GPU_SAMPLE"));
  if (device)
    g_setenv ("HZ_DEVICE", device, TRUE);
  else
    g_unsetenv ("HZ_DEVICE");
  HzContextParams cp;
  hz_context_params_init (&cp);
  cp.n_ctx = n_ctx;
  HzContext *ctx = hz_context_new (model, &cp, error);
  if (gpu_sample)
    g_setenv ("HZ_GPU_SAMPLE", gpu_sample, TRUE);
  else
    g_unsetenv ("HZ_GPU_SAMPLE");
  gboolean ok = ctx != NULL;
  HzGenerateParams gp;
  hz_generate_params_init (&gp);
  gp.sampler = *sp;
  gp.n_predict = n_predict;
  gp.ignore_eog = TRUE;
  for (int r = 0; ok && r < n_runs; r++)
    {
      HzGenerateStats st;
      ids[r] = g_array_new (FALSE, FALSE, sizeof (HzToken));
      g_autofree char *text = hz_context_generate (ctx, prompt, n_prompt, &gp, NULL, NULL, NULL,
                                                   ids[r], &st, error);
      ok = text != NULL;
      if (ok && tps)
        *tps = MAX (*tps, st.n_generated / MAX (st.gen_seconds, 1e-9));
    }
  hz_context_free (ctx);
  if (old_dev)
    g_setenv ("HZ_DEVICE", old_dev, TRUE);
  else
    g_unsetenv ("HZ_DEVICE");
  if (old_smp)
    g_setenv ("HZ_GPU_SAMPLE", old_smp, TRUE);
  else
    g_unsetenv ("HZ_GPU_SAMPLE");
  return ok;
}

/* Leading ids two sequences share (both lengths when equal). */
static guint
n_same (const GArray *a, const GArray *b)
{
  guint i = 0;
  while (i < a->len && i < b->len
         && g_array_index (a, HzToken, i) == g_array_index (b, HzToken, i))
    i++;
  return i;
}

static gboolean
same_ids (const GArray *a, const GArray *b)
{
  return a->len == b->len && n_same (a, b) == a->len;
}

/* Check 3 (see the top): generation through hz_context_generate on a GPU context. */
static void
check_generate (HzModel *model, const char *base, const HzToken *prompt, gsize n_prompt,
                guint n_ctx)
{
  GError *error = NULL;
  HzSamplerParams sp;
  hz_sampler_params_init (&sp);
  GArray *cpu[1] = { 0 }, *dev[1] = { 0 }, *host[1] = { 0 }, *k1[1] = { 0 }, *seeded[2] = { 0 },
         *hseed[1] = { 0 };
  gboolean ok = generate_ids (model, n_ctx, "cpu", NULL, prompt, n_prompt, &sp, N_STEPS, 1, cpu,
                              NULL, &error)
                && generate_ids (model, n_ctx, NULL, "1", prompt, n_prompt, &sp, N_STEPS, 1, dev,
                                 NULL, &error)
                && generate_ids (model, n_ctx, NULL, "0", prompt, n_prompt, &sp, N_STEPS, 1, host,
                                 NULL, &error);
  sp.temperature = 0.8f;
  sp.top_k = 1;
  ok = ok && generate_ids (model, n_ctx, NULL, "1", prompt, n_prompt, &sp, N_STEPS, 1, k1, NULL,
                           &error);
  sp.top_k = 40;
  sp.seed = 7;
  ok = ok && generate_ids (model, n_ctx, NULL, "1", prompt, n_prompt, &sp, N_STEPS, 2, seeded,
                           NULL, &error)
       && generate_ids (model, n_ctx, NULL, "0", prompt, n_prompt, &sp, N_STEPS, 1, hseed, NULL,
                        &error);
  if (!ok)
    {
      printf ("not ok %d - %s: generation: %s\n", ++n_test, base, error->message);
      n_fail++;
      g_clear_error (&error);
    }
  else
    {
      const int nv = hz_model_n_vocab (model);
      int bad = 0;
      for (guint i = 0; i < seeded[0]->len; i++)
        bad += g_array_index (seeded[0], HzToken, i) < 0
               || g_array_index (seeded[0], HzToken, i) >= nv;
      const gboolean g_dev = same_ids (dev[0], cpu[0]), g_host = same_ids (host[0], cpu[0]);
      const gboolean g_k1 = same_ids (k1[0], cpu[0]);
      const gboolean rep = same_ids (seeded[0], seeded[1]);
      const gboolean pass = cpu[0]->len == N_STEPS && g_dev && g_host && g_k1 && rep && bad == 0
                            && seeded[0]->len == N_STEPS;
      printf ("%s %d - %-30s hz_context_generate %d tokens: greedy ids vs CPU context: device "
              "sampler %u/%u, host sampler %u/%u, device top-k 1 %u/%u identical; seeded "
              "device sampling run to run %s (%u/%u), valid %u/%u; device vs host sampler "
              "(same seed) first %u ids identical\n",
              pass ? "ok" : "not ok", ++n_test, base, N_STEPS, n_same (dev[0], cpu[0]), cpu[0]->len,
              n_same (host[0], cpu[0]), cpu[0]->len, n_same (k1[0], cpu[0]), cpu[0]->len,
              rep ? "identical" : "differs", n_same (seeded[0], seeded[1]), seeded[0]->len,
              seeded[0]->len - bad, seeded[0]->len, n_same (seeded[0], hseed[0]));
      n_fail += !pass;
    }
  GArray **all[] = { cpu, dev, host, k1, seeded, seeded + 1, hseed };
  for (guint i = 0; i < G_N_ELEMENTS (all); i++)
    if (*all[i])
      g_array_unref (*all[i]);
}

static void
check_model (const char *path)
{
  GError *error = NULL;
  g_autofree char *base = g_path_get_basename (path);
  HzModel *model = hz_model_load (path, NULL, &error);
  if (!model)
    {
      printf ("not ok %d - %s: %s\n", ++n_test, base, error->message);
      n_fail++;
      g_clear_error (&error);
      return;
    }
  const HzLlm *llm = hz_model_get_llm (model);
  const int nv = llm->hp.n_vocab;
  gsize n_prompt = 0, n_short = 0;
  g_autofree HzToken *prompt = hz_model_tokenize (model, PROMPT, -1, TRUE, FALSE, &n_prompt);
  g_autofree HzToken *sprompt = hz_model_tokenize (model, SHORT_PROMPT, -1, TRUE, FALSE, &n_short);
  const guint n_ctx = MAX (256, (guint) n_prompt + N_STEPS + 8);
  HzCpuForward *cpu = hz_cpu_forward_new (llm, n_ctx, 512, 0, &error);
  g_assert_no_error (error);
  HzGpuForward *gpu = hz_gpu_forward_new (llm, n_ctx, &error);
  if (!gpu)
    {
      printf ("not ok %d - %s: GPU: %s\n", ++n_test, base, error->message);
      n_fail++;
      g_clear_error (&error);
      hz_cpu_forward_free (cpu);
      hz_model_free (model);
      return;
    }
  const char *tn = llm->type_name;
  const guint conv = hz_gpu_forward_n_converted (gpu);
  const gboolean is_float = !g_strcmp0 (tn, "F32") || !g_strcmp0 (tn, "F16") || !g_strcmp0 (tn, "BF16");
  const double tol = is_float && !conv ? 1e-3 : 5e-2;
  /* every row of a prompt: the first positions too (BOS, one or two words), whose logits
   * carry the same absolute noise with less signal */
  const double rows_tol = is_float ? tol : MAX (tol, 5e-2);
  g_autofree char *fb = conv ? g_strdup_printf (" [%u tensors on the F16 fallback]", conv)
                        : g_strdup ("");

  /* 1. long prompt: the CPU's prompt logits (every row) against the GPU's, the GPU in two
   * passes: rows [0, n1) with every row's logits, rows [n1, n) with the last row's only;
   * then N_STEPS / 2 lockstep steps */
  const guint n1 = (guint) n_prompt / 2;
  float *lc_all = g_new (float, (gsize) n_prompt * nv), *lg_all = g_new (float, (gsize) n1 * nv);
  float *lc = g_new (float, nv), *lg = g_new (float, nv);
  double pf_rows = 0, pf_last = 0, worst = 0;
  int32_t ids_c[N_STEPS];
  int first_diff = -1, n_diff = 0, flips = 0;
  gboolean ok = hz_cpu_forward_eval (cpu, prompt, n_prompt, 0, TRUE, lc_all, &error)
                && hz_gpu_forward_eval (gpu, prompt, n1, 0, TRUE, lg_all, &error)
                && hz_gpu_forward_eval (gpu, prompt + n1, n_prompt - n1, n1, FALSE, lg, &error);
  for (guint r = 0; ok && r < n1; r++)
    pf_rows = MAX (pf_rows, rel_err (lg_all + (gsize) r * nv, lc_all + (gsize) r * nv, nv));
  if (ok)
    {
      memcpy (lc, lc_all + (gsize) (n_prompt - 1) * nv, sizeof (float) * nv);
      pf_last = rel_err (lg, lc, nv);
    }
  const gboolean next_same = ok && argmax (lg, nv) == argmax (lc, nv);
  ok = ok && lockstep (cpu, gpu, nv, lc, lg, n_prompt, N_STEPS / 2, ids_c, &first_diff, &n_diff,
                       &flips, &worst, &error);
  if (ok)
    {
      /* only near ties may differ after the long prompt */
      const gboolean pass = pf_rows <= rows_tol && pf_last <= tol && next_same && worst <= tol
                            && n_diff == flips;
      g_autofree char *lids = n_diff == 0 ? g_strdup ("identical")
                              : g_strdup_printf ("%d differ, %d of them near ties", n_diff, flips);
      printf ("%s %d - %-30s %-7s prefill %zu tokens (%u + %zu): logits rows 0..%u %.2e (< %.0e), "
              "last %.2e, next id %s; then %d steps: ids %s, logits %.2e (< %.0e)%s\n",
              pass ? "ok" : "not ok", ++n_test, base, tn, n_prompt, n1, n_prompt - n1, n1 - 1,
              pf_rows, rows_tol, pf_last, next_same ? "identical" : "differs", N_STEPS / 2,
              lids, worst, tol, fb);
      n_fail += !pass;
    }

  /* 2. short prompt (a prefill of a few tokens), N_STEPS strict lockstep steps; the
   * device-side greedy loop from the first generated token; the device sampler with top-k
   * 1 (must give the same ids) and with llama.cpp's defaults (valid ids) */
  ok = ok && hz_cpu_forward_eval (cpu, sprompt, n_short, 0, FALSE, lc, &error)
       && hz_gpu_forward_eval (gpu, sprompt, n_short, 0, FALSE, lg, &error)
       && lockstep (cpu, gpu, nv, lc, lg, n_short, N_STEPS, ids_c, &first_diff, &n_diff, &flips,
                    &worst, &error);
  int32_t ids_d[N_STEPS], ids_s[N_STEPS], ids_r[N_STEPS];
  guint n_done = 0, n_s = 0, n_r = 0;
  HzSamplerParams sp;
  hz_sampler_params_init (&sp);
  sp.temperature = 0.8f;
  sp.top_k = 1;
  ok = ok && hz_gpu_forward_greedy (gpu, ids_c[0], n_short, N_STEPS - 1, ids_d, &n_done, &error)
       && hz_gpu_forward_set_sampler (gpu, &sp, &error)
       && hz_gpu_forward_sample (gpu, ids_c[0], n_short, N_STEPS - 1, ids_s, &n_s, &error);
  sp.top_k = 40;
  sp.seed = 7;
  ok = ok && hz_gpu_forward_set_sampler (gpu, &sp, &error)
       && hz_gpu_forward_sample (gpu, ids_c[0], n_short, N_STEPS - 1, ids_r, &n_r, &error);
  int graph_diff = -1, sample_diff = -1, bad_ids = 0;
  for (guint i = 0; ok && i < n_done; i++)
    if (ids_d[i] != ids_c[i + 1] && graph_diff < 0)
      graph_diff = (int) i + 1;
  for (guint i = 0; ok && i < n_s; i++)
    if (ids_s[i] != ids_c[i + 1] && sample_diff < 0)
      sample_diff = (int) i + 1;
  for (guint i = 0; ok && i < n_r; i++)
    bad_ids += ids_r[i] < 0 || ids_r[i] >= nv;
  if (!ok)
    {
      printf ("not ok %d - %s: %s\n", ++n_test, base, error->message);
      n_fail++;
      g_clear_error (&error);
    }
  else
    {
      const gboolean pass = first_diff < 0 && graph_diff < 0 && sample_diff < 0 && bad_ids == 0
                            && worst <= tol && n_done == N_STEPS - 1 && n_s == N_STEPS - 1
                            && n_r == N_STEPS - 1;
      g_autofree char *ids = first_diff < 0 ? g_strdup_printf ("%d/%d identical", N_STEPS, N_STEPS)
                             : g_strdup_printf ("differ from step %d (%d near ties)", first_diff, flips);
      g_autofree char *gids = graph_diff < 0 ? g_strdup ("identical")
                              : g_strdup_printf ("differ from step %d", graph_diff);
      g_autofree char *sids = sample_diff < 0 ? g_strdup ("identical")
                              : g_strdup_printf ("differ from step %d", sample_diff);
      printf ("%s %d - %-30s %-7s prefill %zu tokens, decode ids %s, graph ids %s, device top-k 1 "
              "ids %s, sampled ids valid %u/%u, logits %.2e (< %.0e)%s\n",
              pass ? "ok" : "not ok", ++n_test, base, tn, n_short, ids, gids, sids, n_r - bad_ids,
              n_r, worst, tol, fb);
      n_fail += !pass;
    }
  if (ok)
    check_fused (llm, gpu, base, sprompt, n_short, ids_c, N_STEPS, n_ctx);
  g_free (lc), g_free (lg), g_free (lc_all), g_free (lg_all);
  hz_gpu_forward_free (gpu);
  hz_cpu_forward_free (cpu);
  if (ok)
    check_generate (model, base, sprompt, n_short, n_ctx);
  fflush (stdout);
  hz_model_free (model);
}

static int
bench (const char *path, int n)
{
  GError *error = NULL;
  HzModel *model = hz_model_load (path, NULL, &error);
  if (!model)
    g_error ("%s", error->message);
  const HzLlm *llm = hz_model_get_llm (model);
  HzGpu *g = hz_gpu_open (0, &error);
  if (!g)
    {
      printf ("1..0 # SKIP %s\n", error->message);
      return 77;
    }
  double copy = 0;
  if (!hz_gpu_bench_copy (g, (size_t) 1 << 30, 10, &copy, &error))
    g_error ("%s", error->message);
  hz_gpu_close (g);
  const gint64 t_up = g_get_monotonic_time ();
  HzGpuForward *f = hz_gpu_forward_new (llm, 512, &error);
  if (!f)
    g_error ("%s", error->message);
  printf ("model: %s (%s, %d layers, n_embd %d, vocab %d), upload %.1f s\n", path, llm->type_name,
          llm->hp.n_layer, llm->hp.n_embd, llm->hp.n_vocab, (g_get_monotonic_time () - t_up) / 1e6);
  printf ("device: %s\ncopy bandwidth: %.0f GB/s\n", hz_gpu_forward_describe (f), copy);
  const double bytes = (double) hz_gpu_forward_step_bytes (f);
  int32_t *ids = g_new (int32_t, n + 1);
  guint done = 0;
  float *logits = g_new (float, llm->hp.n_vocab);
  const int32_t bos = hz_model_bos (model) >= 0 ? hz_model_bos (model) : 1;
  /* prompt processing: pp512 (random ids, one hz_gpu_forward_eval of 512 tokens, the
   * last row's logits copied back), best of 3 after a warm-up */
  const guint np = 512;
  int32_t *toks = g_new (int32_t, np);
  {
    GRand *r = g_rand_new_with_seed (3);
    for (guint i = 0; i < np; i++)
      toks[i] = i == 0 ? bos : g_rand_int_range (r, 0, llm->hp.n_vocab);
    g_rand_free (r);
    double best = 0;
    for (int it = 0; it < 4; it++)
      {
        const gint64 t0 = g_get_monotonic_time ();
        if (!hz_gpu_forward_eval (f, toks, np, 0, FALSE, logits, &error))
          g_error ("%s", error->message);
        const double sec = (g_get_monotonic_time () - t0) / 1e6;
        if (it > 0 && (best == 0 || sec < best))
          best = sec;
      }
    printf ("\n| prompt | tokens | s | tokens/s |\n|---|---:|---:|---:|\n| pp%u (prefill, qmmq) | %u | %.4f | %.1f |\n",
            np, np, best, np / best);
  }
  /* warm-up (captures the graph) */
  if (!hz_gpu_forward_greedy (f, bos, 0, 8, ids, &done, &error))
    g_error ("%s", error->message);
  printf ("\n| mode | tokens | s | tokens/s | GB/s of weights | %% of copy |\n|---|---:|---:|---:|---:|---:|\n");
  /* the mean of 3 runs (llama-bench -r 3 reports its mean too) */
  double s = 0;
  guint done_all = 0;
  for (int r = 0; r < 3; r++)
    {
      const gint64 tr = g_get_monotonic_time ();
      if (!hz_gpu_forward_greedy (f, bos, 0, n, ids, &done, &error))
        g_error ("%s", error->message);
      s += (g_get_monotonic_time () - tr) / 1e6;
      done_all += done;
    }
  done = done_all / 3;
  s /= 3;
  printf ("| graph, device argmax | %u | %.3f | %.1f | %.0f | %.1f%% |\n", done, s, done / s,
          bytes * done / s / 1e9, 100.0 * bytes * done / s / 1e9 / copy);
  gint64 t0 = g_get_monotonic_time ();
  int32_t tok = bos;
  for (int i = 0; i < n; i++)
    {
      if (!hz_gpu_forward_eval (f, &tok, 1, i, FALSE, logits, &error))
        g_error ("%s", error->message);
      tok = argmax (logits, llm->hp.n_vocab);
    }
  s = (g_get_monotonic_time () - t0) / 1e6;
  printf ("| host loop, logits copied | %d | %.3f | %.1f | %.0f | %.1f%% |\n", n, s, n / s,
          bytes * n / s / 1e9, 100.0 * bytes * n / s / 1e9 / copy);
  /* op by op: one decode step at position 64, then the pp512 prefill pass */
  for (int pass = 0; pass < 2; pass++)
    {
      double ms[16];
      const char *const *names;
      int n_cat = 0;
      if (!hz_gpu_forward_profile (f, pass ? toks : &bos, pass ? np : 1, pass ? 0 : 64, ms, &names,
                                   &n_cat, &error))
        g_error ("%s", error->message);
      double tot = 0;
      for (int c = 0; c < n_cat; c++)
        tot += ms[c];
      if (pass)
        printf ("\nthe pp%u prefill pass, op by op (events between them): %.3f ms\n", np, tot);
      else
        printf ("\none step at position 64, op by op (direct launches, events between them): %.3f ms\n",
                tot);
      printf ("| op | ms | %% |\n|---|---:|---:|\n");
      for (int c = 0; c < n_cat; c++)
        if (ms[c] > 0)
          printf ("| %s | %.3f | %.1f%% |\n", names[c], ms[c], 100 * ms[c] / tot);
    }
  g_free (toks);
  g_free (ids);
  g_free (logits);
  hz_gpu_forward_free (f);
  if (g_strcmp0 (g_getenv ("HZ_BENCH_GENERATE"), "0") == 0)
    {
      hz_model_free (model);      /* HZ_BENCH_GENERATE=0: the table above only */
      return 0;
    }
  /* tgN through the public API: the device sampler vs the host sampler on the same GPU
   * context kind (a new context per row: its own weight upload, untimed), prompt = BOS */
  printf ("\ntg%d through hz_context_generate (EOG ignored), best of 2 runs (the first captures "
          "the graph)\n"
          "| sampler | where | tokens/s |\n|---|---|---:|\n", n);
  for (int mode = 0; mode < 4; mode++)
    {
      HzSamplerParams sp;
      hz_sampler_params_init (&sp);
      if (mode >= 2)
        {
          sp.temperature = 0.8f;
          sp.seed = 1;
        }
      GArray *runs[2] = { 0 };
      double tps = 0;
      const HzToken prompt[1] = { bos };
      if (!generate_ids (model, 512, NULL, mode % 2 ? "0" : "1", prompt, 1, &sp, n, 2, runs, &tps,
                         &error))
        g_error ("%s", error->message);
      g_array_unref (runs[0]);
      g_array_unref (runs[1]);
      printf ("| %s | %s | %.1f |\n",
              mode < 2 ? "greedy" : "temp 0.8, top-k 40, top-p 0.95, min-p 0.05",
              mode % 2 ? "host (logits copied back)" : "device (4 bytes back)", tps);
    }
  hz_model_free (model);
  return 0;
}

static gint
cmp_paths (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(char *const *) a, *(char *const *) b);
}

/* Small synthetic mixture-of-experts models (hz_synth_write, the vocabulary of vocab_gguf)
 * in a temporary folder, added to paths: qwen3moe (8 experts, 2 used, normalised weights)
 * at Q4_K; Mixtral-style llama (4 experts, 2 used) and qwen2moe (8 experts, 4 used, raw
 * weights, sigmoid-gated shared expert) with F32 weights, where both backends compute in
 * fp32 and differ only by summation order (~1e-6), so their routing must agree exactly.
 * Quantized Mixtral (Q8_0) and qwen2moe (Q4_0) were run too (H200, 2026-11-29): their
 * logits differ by the int8-activation noise of quantized models (~1e-2), and with routing
 * that noise can move a token to another expert when two are within it: one near-tie id
 * flip in 64 lockstep steps (Mixtral Q8_0), one step with a 0.16 logit error after a
 * routing flip (qwen2moe Q4_0), so their ids need a routing-aware criterion, not this
 * test's. For the same reason these models run with the fp32 prefill attention
 * (HZ_GPU_ATTN=fp32): the Q4_K qwen3moe's layers would take the fp16 tensor-core kernel
 * (its ~3e-4 rounding, tests/gpu/test-ops.c), and that noise flipped a routing decision of
 * the 5-token prompt (H200, 2026-11-30: logits 3.85e-1 at one step, ids differing from step
 * 3, where HZ_GPU_ATTN=fp32 gave 9/9). The fp16 attention is checked by test-ops and by the
 * dense quantized models here; this part checks routing and the expert products. */
typedef struct { const char *shape; uint32_t type; } SynthModel;

static const SynthModel moe_models[] = {
  { "tiny-qwen3moe", HZ_TYPE_Q4_K }, { "tiny-mixtral", HZ_TYPE_F32 },
  { "tiny-qwen2moe", HZ_TYPE_F32 },
};

/* Small synthetic Gemma models (check_model's checks and thresholds): tiny-gemma3 (5 window
 * layers of 32 positions to 1 global, q/k norms, the window layers' own RoPE base, the
 * global one's linear scaling) and tiny-gemma2 (alternating window layers, attention and
 * final logit soft-capping), F32 (fp32 end to end: only summation orders differ) and Q8_0;
 * the long prompt (~50 tokens) and the 32 steps after it run far past the window. */
static const SynthModel gemma_models[] = {
  { "tiny-gemma3", HZ_TYPE_F32 }, { "tiny-gemma2", HZ_TYPE_F32 },
  { "tiny-gemma3", HZ_TYPE_Q8_0 }, { "tiny-gemma2", HZ_TYPE_Q8_0 },
};

/* Write the n_models models (hz_synth_write, the vocabulary of vocab_gguf) into a new
 * temporary folder and add their paths; returns the folder (to remove) or NULL after a
 * failed test line. */
static char *
synth_models (const char *vocab_gguf, const SynthModel *moe, size_t n_models, GPtrArray *paths)
{
  GError *error = NULL;
  char *dir = g_dir_make_tmp ("hz-gpu-synth-XXXXXX", &error);
  for (size_t i = 0; dir && i < n_models; i++)
    {
      HzSynthParams p = { 0 };
      p.matrix_type = (int32_t) moe[i].type;
      p.seed = 11 + i;
      p.vocab_gguf = vocab_gguf;
      char *out = g_strdup_printf ("%s/%s-%s.gguf", dir, moe[i].shape,
                                   hz_quant_traits (moe[i].type)->name);
      if (!hz_synth_shape_parse (moe[i].shape, &p.shape, &error)
          || !hz_synth_write (&p, out, &error))
        {
          printf ("not ok %d - synthetic %s: %s\n", ++n_test, moe[i].shape, error->message);
          n_fail++;
          g_clear_error (&error);
          g_free (out);
          continue;
        }
      g_ptr_array_add (paths, out);
    }
  if (!dir)
    {
      printf ("not ok %d - synthetic models: %s\n", ++n_test, error->message);
      n_fail++;
      g_clear_error (&error);
    }
  return dir;
}

static void
remove_dir (const char *dir)
{
  GDir *d = dir ? g_dir_open (dir, 0, NULL) : NULL;
  for (const char *n; d && (n = g_dir_read_name (d));)
    {
      g_autofree char *f = g_build_filename (dir, n, NULL);
      g_remove (f);
    }
  if (d)
    g_dir_close (d);
  if (dir)
    g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  if (argc >= 3 && strcmp (argv[1], "--bench") == 0)
    return bench (argv[2], argc > 3 ? atoi (argv[3]) : 128);
  GError *error = NULL;
  HzGpu *probe = hz_gpu_open (0, &error);
  if (!probe)
    {
      printf ("1..0 # SKIP %s\n", error->message);
      return 77;
    }
  printf ("# %s\n", hz_gpu_describe (probe));
  hz_gpu_close (probe);
  GPtrArray *paths = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *tmp = NULL, *tmp_gemma = NULL;
  if (argc == 3 && strcmp (argv[1], "--moe") == 0)
    tmp = synth_models (argv[2], moe_models, G_N_ELEMENTS (moe_models), paths);
  else if (argc == 3 && strcmp (argv[1], "--gemma") == 0)
    tmp_gemma = synth_models (argv[2], gemma_models, G_N_ELEMENTS (gemma_models), paths);
  else
    for (int i = 1; i < argc; i++)
      g_ptr_array_add (paths, g_strdup (argv[i]));
  if (paths->len == 0 && !tmp && !tmp_gemma)
    {
      const char *dir = g_getenv ("HZ_SHARED_DIR") ? g_getenv ("HZ_SHARED_DIR") : "../shared";
      g_autofree char *s260 = g_build_filename (dir, "models", "stories260K.gguf", NULL);
      if (g_file_test (s260, G_FILE_TEST_EXISTS))
        g_ptr_array_add (paths, g_strdup (s260));
      g_autofree char *dd = g_build_filename (dir, "models", "stories-distill", NULL);
      GDir *d = g_dir_open (dd, 0, NULL);
      GPtrArray *found = g_ptr_array_new_with_free_func (g_free);
      for (const char *n; d && (n = g_dir_read_name (d));)
        if (g_str_has_suffix (n, ".gguf"))
          g_ptr_array_add (found, g_build_filename (dd, n, NULL));
      if (d)
        g_dir_close (d);
      g_ptr_array_sort (found, cmp_paths);
      for (guint i = 0; i < found->len; i++)
        g_ptr_array_add (paths, g_strdup (found->pdata[i]));
      g_ptr_array_free (found, TRUE);
      if (g_file_test (s260, G_FILE_TEST_EXISTS))
        {
          tmp = synth_models (s260, moe_models, G_N_ELEMENTS (moe_models), paths);
          tmp_gemma = synth_models (s260, gemma_models, G_N_ELEMENTS (gemma_models), paths);
        }
      if (paths->len == 0)
        {
          printf ("1..0 # SKIP no models in %s/models (set HZ_SHARED_DIR)\n", dir);
          g_ptr_array_free (paths, TRUE);
          return 77;
        }
    }
  g_autofree char *attn = g_strdup (g_getenv ("HZ_GPU_ATTN"));
  for (guint i = 0; i < paths->len; i++)
    {
      /* the synthetic MoE models run with the fp32 prefill attention (see moe_models) */
      const gboolean moe = tmp && g_str_has_prefix (paths->pdata[i], tmp);
      if (moe)
        g_setenv ("HZ_GPU_ATTN", "fp32", TRUE);
      check_model (paths->pdata[i]);
      if (moe && attn)
        g_setenv ("HZ_GPU_ATTN", attn, TRUE);
      else if (moe)
        g_unsetenv ("HZ_GPU_ATTN");
    }
  printf ("1..%d\n", n_test);
  g_ptr_array_free (paths, TRUE);
  remove_dir (tmp);
  remove_dir (tmp_gemma);
  return n_fail ? 1 : 0;
}
