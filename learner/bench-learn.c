/* learner/bench-learn.c — LoRA SFT throughput on the CPU or the GPU (issue 7's benchmark; run by
 * tools/bench-learn.sh, which prints the table). Not a test.
 *
 *   bench-learn MODEL.gguf [--seq 512] [--rank 16] [--batch 1] [--steps 1] [--warmup 0]
 *                          [--threads 0] [--require-gpu]
 *
 * Trains rank-r LoRA adapters on all seven projections (alpha = 2r, PEFT initialisation)
 * over the frozen, still quantized base with full SFT steps (forward, backward with
 * activation recomputation, AdamW) on random token sequences of length seq whose every
 * position is a target, and prints one line of key=value pairs: tokens/s and seconds per
 * step over the timed steps, by the wall clock and by this process's CPU time (stable on a
 * shared machine), peak resident memory (getrusage), parameter counts, threads, and where
 * the steps ran (device=gpu in a GPU build with a device, HZ_DEVICE=cpu forces the CPU)
 * with the device memory in use after the run (gpu_mib, the runtime's context included). */
#include <glib.h>
#include <stdio.h>
#include <sys/resource.h>
#include "sft.h"

int
main (int argc, char **argv)
{
  int seq = 512, rank = 16, batch = 1, steps = 1, warmup = 0, threads = 0;
  gboolean require_gpu = FALSE;
  GOptionEntry entries[] = {
    { "seq", 0, 0, G_OPTION_ARG_INT, &seq, "Sequence length (512)", "T" },
    { "rank", 'r', 0, G_OPTION_ARG_INT, &rank, "LoRA rank (16)", "R" },
    { "batch", 0, 0, G_OPTION_ARG_INT, &batch, "Sequences per step (1)", "B" },
    { "steps", 0, 0, G_OPTION_ARG_INT, &steps, "Timed steps (1)", "N" },
    { "warmup", 0, 0, G_OPTION_ARG_INT, &warmup, "Untimed steps first (0)", "N" },
    { "threads", 't', 0, G_OPTION_ARG_INT, &threads, "Threads (0: all processors)", "N" },
    { "require-gpu", 0, 0, G_OPTION_ARG_NONE, &require_gpu,
      "Exit with status 3 (printing device=cpu) unless the steps run on a GPU", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("MODEL.gguf — LoRA SFT tokens/s");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error) || argc != 2 || seq < 2 || rank < 1
      || batch < 1 || steps < 1 || warmup < 0 || threads < 0 || threads > 1024)
    {
      g_printerr ("%s\n", error ? error->message : "usage: bench-learn MODEL.gguf [options]");
      return 2;
    }
  g_autoptr (HzTrainBase) base = hz_train_base_open (argv[1], &error);
  if (base == NULL)
    {
      g_printerr ("%s: %s\n", argv[1], error->message);
      return 1;
    }
  HzLoraConfig cfg;
  hz_lora_config_init (&cfg);
  cfg.r = rank;
  cfg.alpha = 2.0f * rank;
  cfg.targets = HZ_LORA_TARGETS_ALL;
  g_autoptr (HzLora) lora = hz_lora_new (&base->llm->hp, &cfg, &error);
  if (lora == NULL)
    {
      g_printerr ("%s\n", error->message);
      return 1;
    }
  hz_lora_init_peft (lora, 1);
  HzSftParams p;
  hz_sft_params_init (&p);
  p.n_threads = (guint) threads;
  p.gpu_max_seqs = batch;   /* GPU builds: the whole batch in one device pass */
  g_autoptr (HzSftTrainer) tr = hz_sft_trainer_new (base->llm, lora, &p, seq);
  if (require_gpu && !hz_sft_trainer_on_gpu (tr))
    {
      printf ("device=cpu\n");
      return 3;
    }
  const int32_t n_vocab = base->llm->hp.n_vocab;
  g_autoptr (GRand) rng = g_rand_new_with_seed (7);
  g_autofree int32_t *tok = g_new (int32_t, (gsize) batch * (seq + 1));
  for (gsize i = 0; i < (gsize) batch * (seq + 1); i++)
    tok[i] = g_rand_int_range (rng, 0, n_vocab);
  g_autofree HzSftExample *ex = g_new (HzSftExample, batch);
  for (int b = 0; b < batch; b++)
    ex[b] = (HzSftExample) { tok + (gsize) b * (seq + 1), tok + (gsize) b * (seq + 1) + 1, seq };
  for (int s = 0; s < warmup; s++)
    hz_sft_trainer_step (tr, ex, batch, NULL);
  struct rusage r0;
  getrusage (RUSAGE_SELF, &r0);
  const gint64 t0 = g_get_monotonic_time ();
  double loss = 0;
  for (int s = 0; s < steps; s++)
    loss = hz_sft_trainer_step (tr, ex, batch, NULL);
  const double secs = (g_get_monotonic_time () - t0) / 1e6;
  struct rusage ru;
  getrusage (RUSAGE_SELF, &ru);
  /* CPU time too: on a shared machine wall time depends on the others' load */
  const double cpu = (ru.ru_utime.tv_sec - r0.ru_utime.tv_sec)
                     + (ru.ru_utime.tv_usec - r0.ru_utime.tv_usec) / 1e6
                     + (ru.ru_stime.tv_sec - r0.ru_stime.tv_sec)
                     + (ru.ru_stime.tv_usec - r0.ru_stime.tv_usec) / 1e6;
  printf ("tokens_per_s=%.2f s_per_step=%.3f tokens_per_cpu_s=%.2f cpu_s_per_step=%.3f "
          "peak_rss_mib=%.0f lora_params=%zu seq=%d batch=%d rank=%d steps=%d threads=%u loss=%.4f "
          "device=%s gpu_mib=%.0f\n",
          (double) steps * batch * seq / secs, secs / steps, (double) steps * batch * seq / cpu,
          cpu / steps, ru.ru_maxrss / 1024.0, lora->n_params, seq, batch, rank, steps,
          threads ? (guint) threads : g_get_num_processors (), loss,
          hz_sft_trainer_on_gpu (tr) ? "gpu" : "cpu", hz_sft_trainer_device_bytes (tr) / 1048576.0);
  return 0;
}
