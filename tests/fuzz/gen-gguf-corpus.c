/* tests/fuzz/gen-gguf-corpus.c — writes the seed inputs of the GGUF fuzz corpus
 * (tests/fuzz/corpus/gguf/seed-*.gguf) with the project's GGUF writer, plus two hand-made
 * files for what the writer cannot express (nested arrays, a v2 header). Each seed is
 * a few KiB at most. Not built by default: `ninja gen-gguf-corpus`, then
 * `gen-gguf-corpus DIR`. */
#include <glib.h>
#include <string.h>

#include "gguf.h"
#include "quant.h"

static const char *out_dir;

static void
write_seed (HzGgufWriter *w, const char *name)
{
  g_autofree char *path = g_build_filename (out_dir, name, NULL);
  g_autoptr (GError) error = NULL;
  if (!hz_gguf_writer_write_file (w, path, &error))
    g_error ("%s: %s", path, error->message);
  g_print ("wrote %s\n", path);
}

static void
add_tensor (HzGgufWriter *w, const char *name, uint32_t type, uint32_t n_dims,
            const int64_t *ne)
{
  int64_t rows = 1;
  for (uint32_t d = 1; d < n_dims; d++)
    rows *= ne[d];
  size_t n = hz_quant_row_size (type, ne[0]) * rows;
  g_autofree guint8 *data = g_malloc (n);
  for (size_t i = 0; i < n; i++)
    data[i] = (guint8) (i * 37 + type);
  g_autoptr (GError) error = NULL;
  if (!hz_gguf_writer_add_tensor (w, name, type, n_dims, ne, data, n, TRUE, &error))
    g_error ("%s: %s", name, error->message);
}

static void
seed_values (void)
{
  g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
  hz_gguf_writer_set_u32 (w, "v.u32", 7);
  hz_gguf_writer_set_i32 (w, "v.i32", -7);
  hz_gguf_writer_set_u64 (w, "v.u64", G_MAXUINT64);
  hz_gguf_writer_set_f32 (w, "v.f32", 0.25f);
  hz_gguf_writer_set_bool (w, "v.bool", TRUE);
  hz_gguf_writer_set_str (w, "v.str", "h\xc3\xa9llo\n");
  hz_gguf_writer_set_str (w, "v.empty", "");
  const guint8 u8[] = { 1, 2, 3 };
  const gint16 i16[] = { -1, 1 };
  const double f64[] = { 0.5, -1e10 };
  const gint64 i64[] = { -1, 1 };
  const guint8 bools[] = { 0, 1 };
  hz_gguf_writer_set_arr (w, "a.u8", HZ_GGUF_TYPE_UINT8, u8, 3);
  hz_gguf_writer_set_arr (w, "a.i8", HZ_GGUF_TYPE_INT8, u8, 3);
  hz_gguf_writer_set_arr (w, "a.u16", HZ_GGUF_TYPE_UINT16, i16, 2);
  hz_gguf_writer_set_arr (w, "a.i16", HZ_GGUF_TYPE_INT16, i16, 2);
  hz_gguf_writer_set_arr (w, "a.f64", HZ_GGUF_TYPE_FLOAT64, f64, 2);
  hz_gguf_writer_set_arr (w, "a.i64", HZ_GGUF_TYPE_INT64, i64, 2);
  hz_gguf_writer_set_arr (w, "a.u64", HZ_GGUF_TYPE_UINT64, i64, 2);
  hz_gguf_writer_set_arr (w, "a.bool", HZ_GGUF_TYPE_BOOL, bools, 2);
  hz_gguf_writer_set_arr (w, "a.empty", HZ_GGUF_TYPE_UINT32, NULL, 0);
  const char *strs[] = { "a", "", "\xe2\x96\x81\x62" /* "▁b" */ };
  hz_gguf_writer_set_str_arr (w, "a.str", strs, 3);
  write_seed (w, "seed-values.gguf");
}

static void
seed_model (const char *name, uint32_t align)
{
  g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
  hz_gguf_writer_set_str (w, "general.architecture", "llama");
  if (align)
    hz_gguf_writer_set_u32 (w, "general.alignment", align);
  hz_gguf_writer_set_u32 (w, "llama.context_length", 128);
  hz_gguf_writer_set_u32 (w, "llama.embedding_length", 32);
  hz_gguf_writer_set_f32 (w, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
  hz_gguf_writer_set_str (w, "tokenizer.ggml.model", "llama");
  char bufs[16][8];
  const char *toks[16];
  float scores[16];
  gint32 types[16];
  for (int i = 0; i < 16; i++)
    {
      g_snprintf (bufs[i], sizeof bufs[i], "<%d>", i);
      toks[i] = bufs[i];
      scores[i] = -i;
      types[i] = 1;
    }
  hz_gguf_writer_set_str_arr (w, "tokenizer.ggml.tokens", toks, 16);
  hz_gguf_writer_set_arr (w, "tokenizer.ggml.scores", HZ_GGUF_TYPE_FLOAT32, scores, 16);
  hz_gguf_writer_set_arr (w, "tokenizer.ggml.token_type", HZ_GGUF_TYPE_INT32, types, 16);
  int64_t emb[2] = { 32, 16 }, norm[1] = { 32 }, t3[3] = { 32, 2, 2 }, t4[4] = { 4, 3, 2, 1 };
  add_tensor (w, "token_embd.weight", HZ_TYPE_F32, 2, emb);
  add_tensor (w, "output_norm.weight", HZ_TYPE_F32, 1, norm);
  add_tensor (w, "blk.0.attn_q.weight", HZ_TYPE_Q8_0, 2, emb);
  add_tensor (w, "blk.0.attn_k.weight", HZ_TYPE_Q4_0, 3, t3);
  add_tensor (w, "blk.0.ffn_up.weight", HZ_TYPE_F16, 4, t4);
  add_tensor (w, "blk.0.ffn_down.weight", HZ_TYPE_BF16, 2, emb);
  write_seed (w, name);
}

/* Gemma metadata (no tensors): the keys llama.cpp reads for gemma2 / gemma3, the window
 * pattern as a period or as a per-layer bool array (hz_hparams_read); for gpt-oss also its
 * experts and YaRN keys. */
static void
seed_gemma (const char *arch, gboolean pattern_array)
{
  g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
  char key[96];
#define K(s) (g_snprintf (key, sizeof key, "%s.%s", arch, s), key)
  hz_gguf_writer_set_str (w, "general.architecture", arch);
  hz_gguf_writer_set_u32 (w, K ("context_length"), 8192);
  hz_gguf_writer_set_u32 (w, K ("embedding_length"), 64);
  hz_gguf_writer_set_u32 (w, K ("block_count"), 6);
  hz_gguf_writer_set_u32 (w, K ("feed_forward_length"), 128);
  hz_gguf_writer_set_u32 (w, K ("attention.head_count"), 4);
  hz_gguf_writer_set_u32 (w, K ("attention.head_count_kv"), 2);
  hz_gguf_writer_set_u32 (w, K ("attention.key_length"), 32);
  hz_gguf_writer_set_u32 (w, K ("attention.value_length"), 32);
  hz_gguf_writer_set_f32 (w, K ("attention.layer_norm_rms_epsilon"), 1e-6f);
  hz_gguf_writer_set_u32 (w, K ("attention.sliding_window"), 16);
  hz_gguf_writer_set_f32 (w, K ("rope.freq_base"), 1e6f);
  hz_gguf_writer_set_f32 (w, K ("rope.freq_base_swa"), 1e4f);
  const gboolean oss = strcmp (arch, "gpt-oss") == 0;
  hz_gguf_writer_set_str (w, K ("rope.scaling.type"), oss ? "yarn" : "linear");
  hz_gguf_writer_set_f32 (w, K ("rope.scaling.factor"), oss ? 32.0f : 8.0f);
  hz_gguf_writer_set_f32 (w, K ("attn_logit_softcapping"), 50.0f);
  hz_gguf_writer_set_f32 (w, K ("final_logit_softcapping"), 30.0f);
  if (oss)
    {
      hz_gguf_writer_set_u32 (w, K ("expert_count"), 8);
      hz_gguf_writer_set_u32 (w, K ("expert_used_count"), 4);
      hz_gguf_writer_set_u32 (w, K ("expert_feed_forward_length"), 64);
      hz_gguf_writer_set_u32 (w, K ("rope.scaling.original_context_length"), 256);
    }
  if (pattern_array)
    {
      const guint8 pattern[6] = { 1, 1, 0, 1, 1, 0 };
      hz_gguf_writer_set_arr (w, K ("attention.sliding_window_pattern"), HZ_GGUF_TYPE_BOOL, pattern, 6);
    }
  else
    hz_gguf_writer_set_u32 (w, K ("attention.sliding_window_pattern"), 3);
#undef K
  g_autofree char *name = g_strdup_printf ("seed-%s-%s.gguf", arch, pattern_array ? "array" : "period");
  write_seed (w, name);
}

static void
seed_empty (void)
{
  g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
  write_seed (w, "seed-empty.gguf");
}

/* Nested arrays [[1, 2], [], [[true]]] and a v2 header: bytes written by hand. */
static void
seed_hand_made (void)
{
  static const guint8 nested[] = {
    'G', 'G', 'U', 'F', 2, 0, 0, 0,                  /* version 2 */
    0, 0, 0, 0, 0, 0, 0, 0,                          /* n_tensors 0 */
    1, 0, 0, 0, 0, 0, 0, 0,                          /* n_kv 1 */
    1, 0, 0, 0, 0, 0, 0, 0, 'n',                     /* key "n" */
    9, 0, 0, 0,                                      /* ARRAY */
    9, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0,              /* of 3 ARRAYs */
    4, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, /* [u32 1, 2] */
    8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,              /* [] of strings */
    9, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0,              /* [ */
    7, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1,           /*   [true] ] */
  };
  g_autofree char *path = g_build_filename (out_dir, "seed-nested-v2.gguf", NULL);
  g_autoptr (GError) error = NULL;
  if (!g_file_set_contents (path, (const char *) nested, sizeof nested, &error))
    g_error ("%s", error->message);
  g_print ("wrote %s\n", path);
}

int
main (int argc, char **argv)
{
  if (argc != 2)
    {
      g_printerr ("usage: %s DIR\n", argv[0]);
      return 2;
    }
  out_dir = argv[1];
  seed_values ();
  seed_model ("seed-model.gguf", 0);
  seed_model ("seed-model-align64.gguf", 64);
  seed_model ("seed-model-align8.gguf", 8);
  seed_empty ();
  seed_hand_made ();
  seed_gemma ("gemma3", TRUE);
  seed_gemma ("gemma2", FALSE);
  seed_gemma ("gpt-oss", FALSE);
  return 0;
}
