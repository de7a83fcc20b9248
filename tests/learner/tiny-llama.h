/* tests/learner/tiny-llama.h — random tiny llama-family GGUF models for the learner's
 * tests (header-only). The weights are random but realistic in scale (rows ~ 1/sqrt(n_in))
 * so that activations and gradients are O(1). */
#pragma once

#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <unistd.h>
#include "gguf.h"
#include "quant.h"
#include "model-train.h"

typedef struct {
  const char *arch;      /* "llama", "qwen2" (q/k/v biases, NeoX) or "qwen3" (q/k norms) */
  int n_vocab, n_embd, n_layer, n_head, n_head_kv, n_ff;
  HzType type;           /* of the matrices (norms and biases stay F32) */
  guint32 seed;
} TinyLlamaSpec;

static inline void
tiny_llama_spec_init (TinyLlamaSpec *s)
{
  *s = (TinyLlamaSpec) { "llama", 48, 32, 2, 4, 2, 64, HZ_TYPE_F32, 1234 };
}

static inline void
tiny_add_tensor (HzGgufWriter *w, GRand *rng, const char *name, HzType type, int64_t n_in,
                 int64_t n_out, double scale, double offset)
{
  const int64_t n = n_in * n_out;
  g_autofree float *v = g_new (float, n);
  for (int64_t i = 0; i < n; i++)
    v[i] = (float) (offset + scale * g_rand_double_range (rng, -1, 1));
  const HzQuantTraits *qt = hz_quant_traits (n_out == 1 ? HZ_TYPE_F32 : type);
  const gsize bytes = hz_quant_row_size (qt->type, n_in) * n_out;
  g_autofree guint8 *buf = g_malloc (bytes);
  qt->from_float (v, buf, n);
  const int64_t ne[2] = { n_in, n_out };
  g_autoptr (GError) error = NULL;
  g_assert_true (hz_gguf_writer_add_tensor (w, name, qt->type, n_out == 1 ? 1 : 2, ne, buf,
                                            bytes, TRUE, &error));
}

/** Write the model to a new temporary file; returns its path (g_free; caller unlinks). */
static inline char *
tiny_llama_write (const TinyLlamaSpec *s)
{
  g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
  g_autoptr (GRand) rng = g_rand_new_with_seed (s->seed);
  const int hd = s->n_embd / s->n_head;
  char key[128];
#define KEY(suffix) (g_snprintf (key, sizeof key, "%s.%s", s->arch, suffix), key)
  hz_gguf_writer_set_str (w, "general.architecture", s->arch);
  hz_gguf_writer_set_u32 (w, KEY ("embedding_length"), s->n_embd);
  hz_gguf_writer_set_u32 (w, KEY ("block_count"), s->n_layer);
  hz_gguf_writer_set_u32 (w, KEY ("feed_forward_length"), s->n_ff);
  hz_gguf_writer_set_u32 (w, KEY ("attention.head_count"), s->n_head);
  hz_gguf_writer_set_u32 (w, KEY ("attention.head_count_kv"), s->n_head_kv);
  hz_gguf_writer_set_u32 (w, KEY ("context_length"), 256);
  hz_gguf_writer_set_f32 (w, KEY ("attention.layer_norm_rms_epsilon"), 1e-5f);
  hz_gguf_writer_set_f32 (w, KEY ("rope.freq_base"), 10000.0f);
#undef KEY
  const gboolean bias = g_str_equal (s->arch, "qwen2"), qk_norm = g_str_equal (s->arch, "qwen3");
  const int64_t d = s->n_embd, dq = (int64_t) s->n_head * hd, dkv = (int64_t) s->n_head_kv * hd;
  tiny_add_tensor (w, rng, "token_embd.weight", s->type, d, s->n_vocab, 1.0, 0);
  tiny_add_tensor (w, rng, "output_norm.weight", HZ_TYPE_F32, d, 1, 0.2, 1.0);
  tiny_add_tensor (w, rng, "output.weight", s->type, d, s->n_vocab, 1.0 / sqrt (d), 0);
  for (int il = 0; il < s->n_layer; il++)
    {
      char n[96];
#define NAME(suffix) (g_snprintf (n, sizeof n, "blk.%d.%s", il, suffix), n)
      tiny_add_tensor (w, rng, NAME ("attn_norm.weight"), HZ_TYPE_F32, d, 1, 0.2, 1.0);
      tiny_add_tensor (w, rng, NAME ("attn_q.weight"), s->type, d, dq, 1.5 / sqrt (d), 0);
      tiny_add_tensor (w, rng, NAME ("attn_k.weight"), s->type, d, dkv, 1.5 / sqrt (d), 0);
      tiny_add_tensor (w, rng, NAME ("attn_v.weight"), s->type, d, dkv, 1.5 / sqrt (d), 0);
      tiny_add_tensor (w, rng, NAME ("attn_output.weight"), s->type, dq, d, 1.0 / sqrt (dq), 0);
      if (bias)
        {
          tiny_add_tensor (w, rng, NAME ("attn_q.bias"), HZ_TYPE_F32, dq, 1, 0.3, 0);
          tiny_add_tensor (w, rng, NAME ("attn_k.bias"), HZ_TYPE_F32, dkv, 1, 0.3, 0);
          tiny_add_tensor (w, rng, NAME ("attn_v.bias"), HZ_TYPE_F32, dkv, 1, 0.3, 0);
        }
      if (qk_norm)
        {
          tiny_add_tensor (w, rng, NAME ("attn_q_norm.weight"), HZ_TYPE_F32, hd, 1, 0.2, 1.0);
          tiny_add_tensor (w, rng, NAME ("attn_k_norm.weight"), HZ_TYPE_F32, hd, 1, 0.2, 1.0);
        }
      tiny_add_tensor (w, rng, NAME ("ffn_norm.weight"), HZ_TYPE_F32, d, 1, 0.2, 1.0);
      tiny_add_tensor (w, rng, NAME ("ffn_gate.weight"), s->type, d, s->n_ff, 1.5 / sqrt (d), 0);
      tiny_add_tensor (w, rng, NAME ("ffn_up.weight"), s->type, d, s->n_ff, 1.5 / sqrt (d), 0);
      tiny_add_tensor (w, rng, NAME ("ffn_down.weight"), s->type, s->n_ff, d, 1.0 / sqrt (s->n_ff), 0);
#undef NAME
    }
  static int counter;
  g_autoptr (GError) error = NULL;
  char *path = g_strdup_printf ("%s/hz-tiny-%s-%u-%d-%d.gguf", g_get_tmp_dir (), s->arch,
                                s->seed, (int) getpid (), counter++);
  g_assert_true (hz_gguf_writer_write_file (w, path, &error));
  g_assert_no_error (error);
  return path;
}

/** Write, open and unlink a tiny model: the returned base stays valid (mmap). */
static inline HzTrainBase *
tiny_llama_open (const TinyLlamaSpec *s)
{
  g_autofree char *path = tiny_llama_write (s);
  g_autoptr (GError) error = NULL;
  HzTrainBase *b = hz_train_base_open (path, &error);
  g_assert_no_error (error);
  g_unlink (path);
  return b;
}
