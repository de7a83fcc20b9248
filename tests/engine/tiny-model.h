/* tests/engine/tiny-model.h — random tiny llama-family models that hz_model_load takes
 * (tests/learner/tiny-llama.h plus a vocabulary) and random LoRA adapters for them, for
 * the LoRA tests of the engine and the app (header-only; link libhzlearn). */
#pragma once

#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include "hanzo/engine.h"
#include "lora.h"
#include "model-private.h"
#include "tiny-llama.h"

/* tiny_llama_write() plus a 48-token SentencePiece vocabulary, so that hz_model_load takes
 * it; returns the path (g_free; caller unlinks). */
static inline char *
tiny_model_write (const char *arch, guint32 seed, int n_ff)
{
  TinyLlamaSpec spec;
  tiny_llama_spec_init (&spec);
  spec.arch = arch;
  spec.seed = seed;
  spec.n_ff = n_ff;
  g_autofree char *raw = tiny_llama_write (&spec);
  g_autoptr (GError) error = NULL;
  g_autoptr (HzGguf) g = hz_gguf_open (raw, &error);
  g_assert_no_error (error);
  g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
  for (int64_t i = 0; i < hz_gguf_n_kv (g); i++)
    hz_gguf_writer_copy_kv (w, g, i);
  const int n = spec.n_vocab;
  g_autoptr (GPtrArray) toks = g_ptr_array_new_with_free_func (g_free);
  float scores[64];
  int32_t types[64];
  for (int i = 0; i < n; i++)
    {
      g_ptr_array_add (toks, i == 0 ? g_strdup ("<unk>") : i == 1 ? g_strdup ("<s>")
                             : i == 2 ? g_strdup ("</s>") : g_strdup_printf ("\u2581w%d", i));
      scores[i] = -(float) i;
      types[i] = i == 0 ? 2 : i < 3 ? 3 : 1;
    }
  hz_gguf_writer_set_str (w, "tokenizer.ggml.model", "llama");
  hz_gguf_writer_set_str_arr (w, "tokenizer.ggml.tokens", (const char *const *) toks->pdata, n);
  hz_gguf_writer_set_arr (w, "tokenizer.ggml.scores", HZ_GGUF_TYPE_FLOAT32, scores, n);
  hz_gguf_writer_set_arr (w, "tokenizer.ggml.token_type", HZ_GGUF_TYPE_INT32, types, n);
  hz_gguf_writer_set_u32 (w, "tokenizer.ggml.bos_token_id", 1);
  hz_gguf_writer_set_u32 (w, "tokenizer.ggml.eos_token_id", 2);
  for (int64_t i = 0; i < hz_gguf_n_tensors (g); i++)
    g_assert_true (hz_gguf_writer_copy_tensor (w, g, i, FALSE, &error));
  char *path = g_strdup_printf ("%s.vocab.gguf", raw);
  g_assert_true (hz_gguf_writer_write_file (w, path, &error));
  g_assert_no_error (error);
  g_unlink (raw);
  return path;
}

static inline HzModel *
tiny_model_load (const char *path)
{
  g_autoptr (GError) error = NULL;
  HzModelParams mp;
  hz_model_params_init (&mp);
  mp.n_threads = 2;
  HzModel *m = hz_model_load (path, &mp, &error);
  g_assert_no_error (error);
  return m;
}

/* A random adapter on `targets` for `m`: PEFT initialisation, then B != 0 (0.05 sin). */
static inline HzLora *
tiny_random_lora (HzModel *m, guint32 targets, int r, float alpha, gboolean rs, guint32 seed)
{
  HzLoraConfig cfg;
  hz_lora_config_init (&cfg);
  cfg.r = r;
  cfg.alpha = alpha;
  cfg.use_rslora = rs;
  cfg.targets = targets;
  g_autoptr (GError) error = NULL;
  HzLora *lora = hz_lora_new (&hz_model_get_llm (m)->hp, &cfg, &error);
  g_assert_no_error (error);
  hz_lora_init_peft (lora, seed);
  for (gsize i = 0; i < lora->n_params; i++)
    lora->params[i] += 0.05f * sinf (0.37f * (float) i + (float) seed);
  return lora;
}


/** Remove a directory tree made by a test (files and folders below it). */
static inline void
tiny_rm_rf (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name (d)))
    {
      g_autofree char *p = g_build_filename (dir, name, NULL);
      if (g_file_test (p, G_FILE_TEST_IS_DIR) && !g_file_test (p, G_FILE_TEST_IS_SYMLINK))
        tiny_rm_rf (p);
      else
        g_unlink (p);
    }
  g_rmdir (dir);
}
