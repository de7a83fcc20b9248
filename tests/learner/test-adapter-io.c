/* tests/learner/test-adapter-io.c — PEFT safetensors and GGUF LoRA round trips, the q/k
 * row permutation of llama, refusal of adapters that do not fit, and the training
 * checkpoint (adapters + AdamW state) restored or refused. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include "adapter-io.h"
#include "checkpoint.h"
#include "gguf.h"
#include "train-ops.h"

static HzHparams
hparams (HzArch arch)
{
  HzHparams hp = { 0 };
  hp.arch = arch;
  hp.n_vocab = 64;
  hp.n_embd = 32;
  hp.n_layer = 3;
  hp.n_head = 4;
  hp.n_head_kv = 2;
  hp.head_dim_k = hp.head_dim_v = 8;
  hp.n_ff = 48;
  hp.n_rot = 8;
  hp.rope_mode = arch == HZ_ARCH_LLAMA ? HZ_ROPE_NORM : HZ_ROPE_NEOX;
  return hp;
}

static HzLora *
random_lora (const HzHparams *hp, guint32 targets, gboolean rslora)
{
  HzLoraConfig cfg;
  hz_lora_config_init (&cfg);
  cfg.r = 4;
  cfg.alpha = 12;
  cfg.use_rslora = rslora;
  cfg.targets = targets;
  g_autoptr (GError) error = NULL;
  HzLora *lora = hz_lora_new (hp, &cfg, &error);
  g_assert_no_error (error);
  g_autoptr (GRand) rng = g_rand_new_with_seed (99);
  for (gsize i = 0; i < lora->n_params; i++)
    lora->params[i] = (float) g_rand_double_range (rng, -1, 1);
  return lora;
}

static void
assert_same_config (const HzLora *a, const HzLora *b)
{
  g_assert_cmpint (a->config.r, ==, b->config.r);
  g_assert_cmpfloat (a->config.alpha, ==, b->config.alpha);
  g_assert_cmpint (!!a->config.use_rslora, ==, !!b->config.use_rslora);
  g_assert_cmpuint (a->config.targets, ==, b->config.targets);
  g_assert_cmpfloat (a->scaling, ==, b->scaling);
  g_assert_cmpuint (a->n_params, ==, b->n_params);
}

static void
test_init_and_scaling (void)
{
  HzHparams hp = hparams (HZ_ARCH_LLAMA);
  HzLoraConfig cfg;
  hz_lora_config_init (&cfg);
  g_assert_cmpint (cfg.r, ==, 8);
  g_assert_cmpfloat (cfg.alpha, ==, 8);
  g_assert_cmpfloat (hz_lora_config_scaling (&cfg), ==, 1.0);
  cfg.alpha = 16;
  cfg.r = 4;
  cfg.use_rslora = TRUE;
  g_assert_cmpfloat (hz_lora_config_scaling (&cfg), ==, 8.0);   /* 16 / sqrt(4) */
  cfg.use_rslora = FALSE;
  cfg.targets = HZ_LORA_TARGETS_ALL;
  g_autoptr (HzLora) lora = hz_lora_new (&hp, &cfg, NULL);
  g_assert_cmpfloat (lora->scaling, ==, 4.0f);
  hz_lora_init_peft (lora, 5);
  /* A ~ U(-1/sqrt(in), 1/sqrt(in)) (kaiming_uniform_, a = sqrt(5)), B = 0 */
  for (int t = 0; t < HZ_LORA_N_TARGETS; t++)
    {
      const HzLoraSlot *s = hz_lora_slot (lora, 2, t);
      const double bound = 1.0 / sqrt ((double) s->n_in);
      double mx = 0, sum2 = 0;
      const gsize na = (gsize) cfg.r * s->n_in;
      for (gsize i = 0; i < na; i++)
        {
          const float a = lora->params[s->off_a + i];
          g_assert_cmpfloat (fabs (a), <=, bound);
          mx = MAX (mx, fabs (a));
          sum2 += a * a;
        }
      g_assert_cmpfloat (mx, >, 0.8 * bound);              /* it fills the range */
      g_assert_cmpfloat (sum2 / na, >, 0.6 * bound * bound / 3);   /* variance bound^2/3 */
      g_assert_cmpfloat (sum2 / na, <, 1.4 * bound * bound / 3);
      for (int64_t i = 0; i < s->n_out * cfg.r; i++)
        g_assert_cmpfloat (lora->params[s->off_b + i], ==, 0);
    }
  /* invalid configurations */
  g_autoptr (GError) error = NULL;
  cfg.r = 0;
  g_assert_null (hz_lora_new (&hp, &cfg, &error));
  g_assert_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_INVALID);
}

/* Llama's converter permutes q/k rows for ggml's adjacent-pair RoPE: rotating the HF
 * vector with NeoX pairs and then permuting equals permuting and rotating with normal
 * pairs. This pins the direction of hz_lora_permute_qk_rows to the RoPE modes. */
static void
test_permutation_matches_rope (void)
{
  enum { NH = 2, HD = 8, T = 3 };
  g_autoptr (GRand) rng = g_rand_new_with_seed (3);
  float hf[T * NH * HD], gg[T * NH * HD], cs[T * HD];
  for (int i = 0; i < T * NH * HD; i++)
    hf[i] = (float) g_rand_double_range (rng, -1, 1);
  for (int t = 0; t < T; t++)
    for (int i = 0; i < HD / 2; i++)
      {
        cs[t * HD + 2 * i] = (float) cos (t * pow (10000.0, -2.0 * i / HD));
        cs[t * HD + 2 * i + 1] = (float) sin (t * pow (10000.0, -2.0 * i / HD));
      }
  memcpy (gg, hf, sizeof hf);
  for (int t = 0; t < T; t++)   /* each vector element is a "row" of length 1 */
    hz_lora_permute_qk_rows (gg + t * NH * HD, NH * HD, 1, NH, TRUE);
  hz_op_rope_f32 (hf, cs, T, NH, HD, HD, HZ_ROPE_NEOX, FALSE);
  hz_op_rope_f32 (gg, cs, T, NH, HD, HD, HZ_ROPE_NORM, FALSE);
  for (int t = 0; t < T; t++)
    hz_lora_permute_qk_rows (hf + t * NH * HD, NH * HD, 1, NH, TRUE);
  for (int i = 0; i < T * NH * HD; i++)
    g_assert_cmpfloat_with_epsilon (gg[i], hf[i], 1e-6);

  /* and the inverse undoes it */
  float rows[NH * HD * 2], orig[NH * HD * 2];
  for (int i = 0; i < NH * HD * 2; i++)
    orig[i] = rows[i] = (float) i;
  hz_lora_permute_qk_rows (rows, NH * HD, 2, NH, TRUE);
  g_assert_cmpfloat (rows[2 * 1], ==, orig[2 * (HD / 2)]);   /* GGUF row 1 = HF row hd/2 */
  hz_lora_permute_qk_rows (rows, NH * HD, 2, NH, FALSE);
  g_assert_cmpmem (rows, sizeof rows, orig, sizeof orig);
}

static char *
tmp_dir (void)
{
  g_autoptr (GError) error = NULL;
  char *d = g_dir_make_tmp ("hz-adapter-XXXXXX", &error);
  g_assert_no_error (error);
  return d;
}

static void
rm_rf (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name (d)))
    {
      g_autofree char *p = g_build_filename (dir, name, NULL);
      g_unlink (p);
    }
  g_rmdir (dir);
}

static void
test_peft_round_trip (void)
{
  HzHparams hp = hparams (HZ_ARCH_LLAMA);
  g_autoptr (HzLora) lora = random_lora (&hp, HZ_LORA_TARGETS_ALL, FALSE);
  g_autofree char *dir = tmp_dir ();
  g_autoptr (GError) error = NULL;

  /* F32: exact */
  g_assert_true (hz_lora_save_peft (lora, dir, HZ_ST_F32, "tiny-llama", &error));
  g_assert_no_error (error);
  g_autoptr (HzLora) back = hz_lora_load_peft (dir, &hp, &error);
  g_assert_no_error (error);
  assert_same_config (lora, back);
  g_assert_cmpmem (back->params, back->n_params * sizeof (float), lora->params,
                   lora->n_params * sizeof (float));

  /* the file is in Hugging Face layout: q/k lora_B rows un-permuted, the rest as is */
  g_autofree char *st_path = g_build_filename (dir, "adapter_model.safetensors", NULL);
  g_autoptr (HzSafetensors) st = hz_safetensors_open (st_path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hz_safetensors_n_tensors (st), ==, 3 * 7 * 2);
  g_assert_cmpstr (hz_safetensors_metadata (st, "format"), ==, "pt");
  const HzLoraSlot *sq = hz_lora_slot (lora, 1, HZ_LORA_Q), *sk = hz_lora_slot (lora, 1, HZ_LORA_K);
  const HzSafetensor *tq = hz_safetensors_find (st, "base_model.model.model.layers.1.self_attn.q_proj.lora_B.weight");
  const HzSafetensor *tk = hz_safetensors_find (st, "base_model.model.model.layers.1.self_attn.k_proj.lora_B.weight");
  const HzSafetensor *ta = hz_safetensors_find (st, "base_model.model.model.layers.1.self_attn.q_proj.lora_A.weight");
  const HzSafetensor *td = hz_safetensors_find (st, "base_model.model.model.layers.2.mlp.down_proj.lora_B.weight");
  g_assert_nonnull (tq);
  g_assert_nonnull (tk);
  g_assert_nonnull (ta);
  g_assert_nonnull (td);
  g_assert_cmpint (tq->shape[0], ==, 32);
  g_assert_cmpint (tq->shape[1], ==, 4);
  g_assert_cmpint (ta->shape[0], ==, 4);
  g_assert_cmpint (ta->shape[1], ==, 32);
  g_assert_cmpint (tk->shape[0], ==, 16);
  const int r = 4, hd = 8;
  for (int h = 0; h < 4; h++)
    for (int i = 0; i < hd / 2; i++)
      for (int j = 0; j < 2; j++)
        {
          float fv;
          const int hf_row = h * hd + j * hd / 2 + i, gguf_row = h * hd + 2 * i + j;
          memcpy (&fv, (const guint8 *) tq->data + 4 * (hf_row * r + 1), 4);
          g_assert_cmpfloat (fv, ==, lora->params[sq->off_b + gguf_row * r + 1]);
          if (h < 2)
            {
              memcpy (&fv, (const guint8 *) tk->data + 4 * (hf_row * r + 3), 4);
              g_assert_cmpfloat (fv, ==, lora->params[sk->off_b + gguf_row * r + 3]);
            }
        }
  g_assert_cmpmem (ta->data, ta->n_bytes, lora->params + sq->off_a, ta->n_bytes);
  const HzLoraSlot *sd = hz_lora_slot (lora, 2, HZ_LORA_DOWN);
  g_assert_cmpmem (td->data, td->n_bytes, lora->params + sd->off_b, td->n_bytes);

  /* adapter_config.json */
  g_autofree char *cfg_path = g_build_filename (dir, "adapter_config.json", NULL);
  g_autofree char *cfg = NULL;
  g_assert_true (g_file_get_contents (cfg_path, &cfg, NULL, NULL));
  g_assert_nonnull (strstr (cfg, "\"peft_type\" : \"LORA\""));
  g_assert_nonnull (strstr (cfg, "\"gate_proj\""));
  g_assert_nonnull (strstr (cfg, "\"r\" : 4"));
  g_assert_nonnull (strstr (cfg, "\"lora_alpha\" : 12,"));   /* an integer, as PEFT writes it */

  /* BF16: within bf16 rounding (8 significant bits: relative 2^-8) */
  g_assert_true (hz_lora_save_peft (lora, dir, HZ_ST_BF16, NULL, &error));
  g_autoptr (HzLora) b16 = hz_lora_load_peft (dir, &hp, &error);
  g_assert_no_error (error);
  assert_same_config (lora, b16);
  double worst = 0;
  for (gsize i = 0; i < lora->n_params; i++)
    worst = MAX (worst, fabs (b16->params[i] - lora->params[i]) / fabs (lora->params[i]));
  g_assert_cmpfloat (worst, <=, 1.0 / 256);
  g_assert_cmpfloat (worst, >, 0);

  /* a model with another width refuses it */
  HzHparams other = hp;
  other.n_ff = 64;
  g_assert_null (hz_lora_load_peft (dir, &other, &error));
  g_assert_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_MISMATCH);
  g_clear_error (&error);
  /* as does a model with fewer layers (tensors left over) */
  other = hp;
  other.n_layer = 2;
  g_assert_null (hz_lora_load_peft (dir, &other, &error));
  g_assert_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_MISMATCH);
  g_clear_error (&error);
  rm_rf (dir);
}

static void
test_peft_qwen_not_permuted_and_config_errors (void)
{
  HzHparams hp = hparams (HZ_ARCH_QWEN2);
  g_autoptr (HzLora) lora = random_lora (&hp, HZ_LORA_BIT (HZ_LORA_Q) | HZ_LORA_BIT (HZ_LORA_K), TRUE);
  g_autofree char *dir = tmp_dir ();
  g_autoptr (GError) error = NULL;
  g_assert_true (hz_lora_save_peft (lora, dir, HZ_ST_F32, NULL, &error));
  g_autofree char *st_path = g_build_filename (dir, "adapter_model.safetensors", NULL);
  {
    g_autoptr (HzSafetensors) st = hz_safetensors_open (st_path, &error);
    const HzSafetensor *tq = hz_safetensors_find (st, "base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight");
    g_assert_cmpmem (tq->data, tq->n_bytes, lora->params + hz_lora_slot (lora, 0, HZ_LORA_Q)->off_b, tq->n_bytes);
  }
  g_autoptr (HzLora) back = hz_lora_load_peft (dir, &hp, &error);
  g_assert_no_error (error);
  assert_same_config (lora, back);
  g_assert_true (back->config.use_rslora);

  /* unsupported PEFT options are refused, not ignored */
  g_autofree char *cfg_path = g_build_filename (dir, "adapter_config.json", NULL);
  g_assert_true (g_file_set_contents (cfg_path,
      "{\"peft_type\":\"LORA\",\"r\":4,\"lora_alpha\":12,\"target_modules\":[\"q_proj\",\"k_proj\"],"
      "\"use_dora\":true}", -1, NULL));
  g_assert_null (hz_lora_load_peft (dir, &hp, &error));
  g_assert_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_FORMAT);
  g_clear_error (&error);
  /* a config by PEFT itself (integer alpha, extra keys) loads */
  g_assert_true (g_file_set_contents (cfg_path,
      "{\"peft_type\":\"LORA\",\"r\":4,\"lora_alpha\":12,\"target_modules\":[\"k_proj\",\"q_proj\"],"
      "\"use_rslora\":true,\"lora_dropout\":0.05,\"rank_pattern\":{},\"revision\":null}", -1, NULL));
  g_autoptr (HzLora) again = hz_lora_load_peft (dir, &hp, &error);
  g_assert_no_error (error);
  assert_same_config (lora, again);
  /* a target without tensors */
  g_assert_true (g_file_set_contents (cfg_path,
      "{\"peft_type\":\"LORA\",\"r\":4,\"lora_alpha\":12,\"target_modules\":[\"q_proj\",\"v_proj\"]}",
      -1, NULL));
  g_assert_null (hz_lora_load_peft (dir, &hp, &error));
  g_assert_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_FORMAT);
  g_clear_error (&error);
  rm_rf (dir);
}

static void
test_gguf_round_trip (void)
{
  HzHparams hp = hparams (HZ_ARCH_LLAMA);
  g_autoptr (HzLora) lora = random_lora (&hp, HZ_LORA_BIT (HZ_LORA_Q) | HZ_LORA_BIT (HZ_LORA_V) |
                                              HZ_LORA_BIT (HZ_LORA_DOWN), TRUE);
  g_autofree char *dir = tmp_dir ();
  g_autofree char *path = g_build_filename (dir, "adapter.gguf", NULL);
  g_autoptr (GError) error = NULL;
  g_assert_true (hz_lora_save_gguf (lora, path, HZ_TYPE_F32, &error));
  g_assert_no_error (error);

  /* llama.cpp's view of the file */
  {
    g_autoptr (HzGguf) g = hz_gguf_open (path, &error);
    g_assert_no_error (error);
    g_autofree char *gt = hz_gguf_get_str (g, "general.type");
    g_autofree char *at = hz_gguf_get_str (g, "adapter.type");
    g_autofree char *arch = hz_gguf_get_str (g, "general.architecture");
    g_assert_cmpstr (gt, ==, "adapter");
    g_assert_cmpstr (at, ==, "lora");
    g_assert_cmpstr (arch, ==, "llama");
    float alpha;
    g_assert_true (hz_gguf_get_f32 (g, "adapter.lora.alpha", &alpha));
    /* rsLoRA: llama.cpp scales by alpha / r, so alpha' = alpha sqrt(r) = 24 */
    g_assert_cmpfloat_with_epsilon (alpha / 4, lora->scaling, 1e-6);
    const HzGgufTensor *a = hz_gguf_find_tensor (g, "blk.2.attn_q.weight.lora_a");
    const HzGgufTensor *b = hz_gguf_find_tensor (g, "blk.2.attn_q.weight.lora_b");
    g_assert_nonnull (a);
    g_assert_nonnull (b);
    g_assert_cmpint (a->ne[0], ==, 32);   /* ne[0] of lora_a == model tensor ne[0] */
    g_assert_cmpint (a->ne[1], ==, 4);    /* == lora_b ne[0] (the rank) */
    g_assert_cmpint (b->ne[0], ==, 4);
    g_assert_cmpint (b->ne[1], ==, 32);   /* == model tensor ne[1] */
    g_assert_null (hz_gguf_find_tensor (g, "blk.0.attn_k.weight.lora_a"));
    /* GGUF order: no permutation */
    g_assert_cmpmem (b->data, b->n_bytes, lora->params + hz_lora_slot (lora, 2, HZ_LORA_Q)->off_b, b->n_bytes);
  }
  g_autoptr (HzLora) back = hz_lora_load_gguf (path, &hp, &error);
  g_assert_no_error (error);
  assert_same_config (lora, back);
  g_assert_cmpmem (back->params, back->n_params * sizeof (float), lora->params,
                   lora->n_params * sizeof (float));

  /* F16 */
  g_assert_true (hz_lora_save_gguf (lora, path, HZ_TYPE_F16, &error));
  g_autoptr (HzLora) h16 = hz_lora_load_gguf (path, &hp, &error);
  g_assert_no_error (error);
  for (gsize i = 0; i < lora->n_params; i++)
    g_assert_cmpfloat (fabs (h16->params[i] - lora->params[i]), <=, 1.0 / 2048 * fabs (lora->params[i]) + 1e-7);

  /* wrong architecture or shape */
  HzHparams q = hparams (HZ_ARCH_QWEN2);
  g_assert_null (hz_lora_load_gguf (path, &q, &error));
  g_assert_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_MISMATCH);
  g_clear_error (&error);
  HzHparams wide = hp;
  wide.n_embd = 64;
  wide.head_dim_k = wide.head_dim_v = 16;
  wide.n_rot = 16;
  g_assert_null (hz_lora_load_gguf (path, &wide, &error));
  g_assert_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_MISMATCH);
  g_clear_error (&error);
  g_assert_false (hz_lora_save_gguf (lora, path, HZ_TYPE_Q4_0, &error));
  g_assert_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_INVALID);
  g_unlink (path);
  rm_rf (dir);
}

/* A checkpoint (learner/checkpoint.h) restores the parameters, moments and step it was
 * saved with; another tag, a truncated file, a negative step, a NaN and a negative second
 * moment are refused with the state left as it was. */
static void
test_checkpoint (void)
{
  const HzHparams hp = hparams (HZ_ARCH_QWEN2);
  g_autoptr (HzLora) saved = random_lora (&hp, HZ_LORA_BIT (HZ_LORA_Q) | HZ_LORA_BIT (HZ_LORA_V),
                                          FALSE);
  HzAdamWParams ap;
  hz_adamw_params_init (&ap);
  g_autoptr (HzAdamW) opt = hz_adamw_new (saved->n_params, &ap);
  g_autofree float *grads = g_new (float, saved->n_params);
  for (gsize i = 0; i < saved->n_params; i++)
    grads[i] = (float) ((i % 7) - 3) * 0.1f;
  for (int s = 0; s < 3; s++)
    hz_adamw_step (opt, saved->params, grads, 1e-3);
  g_autofree char *dir = g_dir_make_tmp ("hz-ckpt-XXXXXX", NULL);
  g_autoptr (GError) error = NULL;
  g_assert_true (hz_checkpoint_save (dir, saved, opt, "job-1", &error));
  g_assert_no_error (error);

  g_autoptr (HzLora) lora = random_lora (&hp, HZ_LORA_BIT (HZ_LORA_Q) | HZ_LORA_BIT (HZ_LORA_V),
                                         FALSE);
  for (gsize i = 0; i < lora->n_params; i++)
    lora->params[i] = 0;
  g_autoptr (HzAdamW) back = hz_adamw_new (saved->n_params, &ap);
  g_assert_false (hz_checkpoint_load (dir, lora, back, "job-2", &error));   /* another job */
  g_assert_no_error (error);
  g_assert_cmpint (back->step, ==, 0);
  g_assert_true (hz_checkpoint_load (dir, lora, back, "job-1", &error));
  g_assert_no_error (error);
  g_assert_cmpint (back->step, ==, 3);
  g_assert_cmpmem (lora->params, 4 * lora->n_params, saved->params, 4 * saved->n_params);
  g_assert_cmpmem (back->m, 4 * back->n, opt->m, 4 * opt->n);
  g_assert_cmpmem (back->v, 4 * back->n, opt->v, 4 * opt->n);

  /* damaged copies of the file, each refused with the state untouched */
  g_autofree char *path = g_build_filename (dir, "optimizer.bin", NULL);
  g_autofree char *good = NULL;
  gsize len = 0;
  g_assert_true (g_file_get_contents (path, &good, &len, NULL));
  const gsize n = opt->n, v0 = 24 + 8 * n;   /* the first second moment */
  for (int k = 0; k < 4; k++)
    {
      g_autofree char *bad = g_memdup2 (good, len);
      gsize bad_len = len;
      const float nan = NAN, neg = -1.0f;
      const int64_t step = GINT64_TO_LE (-5);
      if (k == 0)
        bad_len = len - 1;                        /* truncated tag */
      else if (k == 1)
        memcpy (bad + 8, &step, 8);               /* negative step */
      else if (k == 2)
        memcpy (bad + 24, &nan, 4);               /* a NaN parameter */
      else
        memcpy (bad + v0, &neg, 4);               /* a negative second moment */
      g_autoptr (HzAdamW) o = hz_adamw_new (n, &ap);
      o->step = 77;
      o->m[0] = 42;
      const float p0 = lora->params[0];
      g_assert_false (hz_checkpoint_load_from_data (bad, bad_len, lora, o, "job-1"));
      g_assert_cmpint (o->step, ==, 77);
      g_assert_cmpfloat (o->m[0], ==, 42);
      g_assert_cmpfloat (lora->params[0], ==, p0);
    }
  hz_checkpoint_clear (dir);
  g_assert_false (g_file_test (dir, G_FILE_TEST_EXISTS));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/learner/adapter/init-and-scaling", test_init_and_scaling);
  g_test_add_func ("/learner/adapter/checkpoint", test_checkpoint);
  g_test_add_func ("/learner/adapter/permutation-matches-rope", test_permutation_matches_rope);
  g_test_add_func ("/learner/adapter/peft-round-trip", test_peft_round_trip);
  g_test_add_func ("/learner/adapter/peft-qwen-and-errors", test_peft_qwen_not_permuted_and_config_errors);
  g_test_add_func ("/learner/adapter/gguf-round-trip", test_gguf_round_trip);
  return g_test_run ();
}
