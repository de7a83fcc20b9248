/* tests/gpu/test-forward.c — the whole GPU decode step (engine/backend-hip/forward-gpu.c)
 * against the CPU forward pass (engine/cpu/forward.c) on real model files, and its speed.
 *
 *   test-forward [MODEL.gguf ...]     default: stories260K.gguf and every file of
 *                                     stories-distill/ in the shared data (skip if absent)
 *   test-forward --bench MODEL.gguf [N]   decode speed only (tools/bench-gpu.sh)
 *
 * Per model: the prompt "Once upon a time" (with BOS) on both backends (the GPU runs the
 * decode step once per prompt token), then 64 greedy steps in lockstep, both fed the CPU's
 * token. Checks:
 *   ids     the argmax of the GPU logits equals the CPU's at every step;
 *   logits  norm-wise relative error ||gpu − cpu|| / ||cpu||, worst step:
 *           float-weight models 1e-3 (measured 2e-6: only the summation order differs);
 *           quantized models 3e-2 (measured 6e-3 .. 2.1e-2 on stories-distill). The GPU
 *           quantizes the activations bit for bit as the CPU does (Q8_0 / Q8_1 / Q8_K,
 *           test-ops), but the int8 rounding amplifies any 1-ulp difference of a matvec
 *           (another summation order) into a one-step change of some q, whose effect
 *           then crosses more rounding boundaries in the next layers: after a few layers
 *           the two backends differ by about one quantization step of noise, ~1e-2.
 *           Models with tensors on the F16 fallback (no device decoder: the GPU reads
 *           fp16-rounded weights with fp32 activations) 5e-2;
 *   graph   hz_gpu_forward_greedy (device-side argmax feeding the next step, position
 *           updated on the device, the captured graph replayed) gives the same 63 ids.
 * --bench: synthetic or real model, n_ctx 512: tokens/s of 128 graph-replayed greedy
 * steps and of 128 host-driven steps (hz_gpu_forward_eval, logits copied back each
 * step), GB/s = weight bytes read per token × tokens/s, next to the device's copy
 * bandwidth. TAP output; exit 77 (skip) without a GPU or models.
 */
#include "cpu/forward.h"
#include "forward-gpu.h"
#include "hanzo/engine.h"
#include "hz-gpu.h"

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
  const guint n_ctx = 256;
  HzCpuForward *cpu = hz_cpu_forward_new (llm, n_ctx, 64, 0, &error);
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
  gsize n_prompt = 0;
  g_autofree HzToken *prompt = hz_model_tokenize (model, "Once upon a time", -1, TRUE, FALSE,
                                                  &n_prompt);
  float *lc = g_new (float, nv), *lg = g_new (float, nv);
  int32_t ids_c[N_STEPS], ids_g[N_STEPS];
  double worst = 0;
  int first_diff = -1;
  gboolean ok = hz_cpu_forward_eval (cpu, prompt, n_prompt, 0, FALSE, lc, &error)
                && hz_gpu_forward_eval (gpu, prompt, n_prompt, 0, FALSE, lg, &error);
  guint pos = n_prompt;
  for (int s = 0; ok && s < N_STEPS; s++)
    {
      worst = MAX (worst, rel_err (lg, lc, nv));
      ids_c[s] = argmax (lc, nv);
      ids_g[s] = argmax (lg, nv);
      if (ids_c[s] != ids_g[s] && first_diff < 0)
        first_diff = s;
      if (s + 1 < N_STEPS)
        ok = hz_cpu_forward_eval (cpu, &ids_c[s], 1, pos, FALSE, lc, &error)
             && hz_gpu_forward_eval (gpu, &ids_c[s], 1, pos, FALSE, lg, &error);
      pos++;
    }
  /* the device-side greedy loop from the first generated token */
  int32_t ids_d[N_STEPS];
  guint n_done = 0;
  ok = ok && hz_gpu_forward_greedy (gpu, ids_c[0], n_prompt, N_STEPS - 1, ids_d, &n_done, &error);
  int graph_diff = -1;
  for (guint i = 0; ok && i < n_done; i++)
    if (ids_d[i] != ids_c[i + 1] && graph_diff < 0)
      graph_diff = (int) i + 1;
  if (!ok)
    {
      printf ("not ok %d - %s: %s\n", ++n_test, base, error->message);
      n_fail++;
      g_clear_error (&error);
    }
  else
    {
      const char *tn = llm->type_name;
      const guint conv = hz_gpu_forward_n_converted (gpu);
      const gboolean is_float = !g_strcmp0 (tn, "F32") || !g_strcmp0 (tn, "F16") || !g_strcmp0 (tn, "BF16");
      const double tol = conv ? 5e-2 : is_float ? 1e-3 : 3e-2;
      const gboolean pass = first_diff < 0 && graph_diff < 0 && worst <= tol && n_done == N_STEPS - 1;
      g_autofree char *ids = first_diff < 0 ? g_strdup ("64/64 identical")
                             : g_strdup_printf ("differ from step %d", first_diff);
      g_autofree char *gids = graph_diff < 0 ? g_strdup ("identical")
                              : g_strdup_printf ("differ from step %d", graph_diff);
      g_autofree char *fb = conv ? g_strdup_printf (" [%u tensors on the F16 fallback]", conv)
                            : g_strdup ("");
      printf ("%s %d - %-30s %-7s ids %s, graph ids %s, logits %.2e (< %.0e)%s\n",
              pass ? "ok" : "not ok", ++n_test, base, tn, ids, gids, worst, tol, fb);
      n_fail += !pass;
    }
  fflush (stdout);
  g_free (lc);
  g_free (lg);
  hz_gpu_forward_free (gpu);
  hz_cpu_forward_free (cpu);
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
  /* warm-up (captures the graph) */
  if (!hz_gpu_forward_greedy (f, bos, 0, 8, ids, &done, &error))
    g_error ("%s", error->message);
  printf ("\n| mode | tokens | s | tokens/s | GB/s of weights | %% of copy |\n|---|---:|---:|---:|---:|---:|\n");
  gint64 t0 = g_get_monotonic_time ();
  if (!hz_gpu_forward_greedy (f, bos, 0, n, ids, &done, &error))
    g_error ("%s", error->message);
  double s = (g_get_monotonic_time () - t0) / 1e6;
  printf ("| graph, device argmax | %u | %.3f | %.1f | %.0f | %.1f%% |\n", done, s, done / s,
          bytes * done / s / 1e9, 100.0 * bytes * done / s / 1e9 / copy);
  t0 = g_get_monotonic_time ();
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
  double ms[16];
  const char *const *names;
  int n_cat = 0;
  if (!hz_gpu_forward_profile (f, bos, 64, ms, &names, &n_cat, &error))
    g_error ("%s", error->message);
  double tot = 0;
  for (int c = 0; c < n_cat; c++)
    tot += ms[c];
  printf ("\none step at position 64, op by op (direct launches, events between them): %.3f ms\n"
          "| op | ms | %% |\n|---|---:|---:|\n", tot);
  for (int c = 0; c < n_cat; c++)
    printf ("| %s | %.3f | %.1f%% |\n", names[c], ms[c], 100 * ms[c] / tot);
  g_free (ids);
  g_free (logits);
  hz_gpu_forward_free (f);
  hz_model_free (model);
  return 0;
}

static gint
cmp_paths (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(char *const *) a, *(char *const *) b);
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
  for (int i = 1; i < argc; i++)
    g_ptr_array_add (paths, g_strdup (argv[i]));
  if (paths->len == 0)
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
      if (paths->len == 0)
        {
          printf ("1..0 # SKIP no models in %s/models (set HZ_SHARED_DIR)\n", dir);
          g_ptr_array_free (paths, TRUE);
          return 77;
        }
    }
  for (guint i = 0; i < paths->len; i++)
    check_model (paths->pdata[i]);
  printf ("1..%d\n", n_test);
  g_ptr_array_free (paths, TRUE);
  return n_fail ? 1 : 0;
}
