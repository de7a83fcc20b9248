/* tests/fuzz/shapes.c — the fixed shapes of shapes.h. */
#include "shapes.h"

HzDeltaConfig *
fuzz_lora_delta_config (void)
{
  HzDeltaConfig *cfg = hz_delta_config_new (2, 4);
  for (int l = 0; l < 2; l++)
    for (int p = 0; p < 2; p++)
      {
        g_autofree char *a = g_strdup_printf ("layers.%d.%s.lora_A.weight", l, p ? "v" : "q");
        g_autofree char *b = g_strdup_printf ("layers.%d.%s.lora_B.weight", l, p ? "v" : "q");
        const int64_t sa[2] = { 2, 16 }, sb[2] = { 16, 2 };
        hz_delta_config_add_tensor (cfg, a, 2, sa, NULL);
        hz_delta_config_add_tensor (cfg, b, 2, sb, NULL);
      }
  return cfg;
}

HzHparams
fuzz_adapter_hparams (void)
{
  HzHparams hp = { 0 };
  hp.arch = HZ_ARCH_LLAMA;
  hp.n_vocab = 64;
  hp.n_embd = 16;
  hp.n_layer = 2;
  hp.n_head = 2;
  hp.n_head_kv = 1;
  hp.head_dim_k = hp.head_dim_v = 8;
  hp.n_ff = 24;
  hp.n_rot = 8;
  hp.rope_mode = HZ_ROPE_NORM;
  return hp;
}
