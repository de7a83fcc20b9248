/* tests/ui/ui-test-models.h — small real GGUF models for the UI tests (header-only):
 * random weights from the engine's synthesizer (hz_synth_write) over a byte-level
 * SentencePiece vocabulary written with the GGUF writer. Needs ui-test-util.h's
 * hz_ui_tmpdir (call hz_ui_test_init() first). */
#pragma once

#include "gguf.h"
#include "quantize.h"
#include "synth.h"
#include "ui-test-util.h"

/** Write a llama tokenizer to `path`: a byte-level SentencePiece vocabulary (every text
 *  can be tokenized) of the specials, 256 byte tokens and "▁a".."▁z", with a ChatML
 *  template when `chat_template`. */
static inline void
hz_ui_write_vocab (const char *path, gboolean chat_template)
{
  g_autoptr(HzGgufWriter) w = hz_gguf_writer_new ();
  g_autoptr(GPtrArray) toks = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GArray) scores = g_array_new (FALSE, FALSE, sizeof (float));
  g_autoptr(GArray) types = g_array_new (FALSE, FALSE, sizeof (gint32));
  g_autoptr(GError) error = NULL;
  const char *specials[] = { "<unk>", "<s>", "</s>" };
  const gint32 special_types[] = { 2, 3, 3 };

  for (int i = 0; i < 3; i++)
    {
      float sc = 0;
      g_ptr_array_add (toks, g_strdup (specials[i]));
      g_array_append_val (scores, sc);
      g_array_append_val (types, special_types[i]);
    }
  for (int b = 0; b < 256; b++)  /* byte fallback: every text can be tokenized */
    {
      float sc = 0;
      gint32 ty = 6;
      g_ptr_array_add (toks, g_strdup_printf ("<0x%02X>", b));
      g_array_append_val (scores, sc);
      g_array_append_val (types, ty);
    }
  for (int c = 0; c < 26; c++)   /* "▁a".."▁z": words */
    {
      float sc = -(float) c;
      gint32 ty = 1;
      g_ptr_array_add (toks, g_strdup_printf ("\xe2\x96\x81%c", 'a' + c));
      g_array_append_val (scores, sc);
      g_array_append_val (types, ty);
    }
  hz_gguf_writer_set_str (w, "general.architecture", "llama");
  hz_gguf_writer_set_str (w, "tokenizer.ggml.model", "llama");
  hz_gguf_writer_set_str_arr (w, "tokenizer.ggml.tokens", (const char *const *) toks->pdata,
                              toks->len);
  hz_gguf_writer_set_arr (w, "tokenizer.ggml.scores", HZ_GGUF_TYPE_FLOAT32, scores->data,
                          toks->len);
  hz_gguf_writer_set_arr (w, "tokenizer.ggml.token_type", HZ_GGUF_TYPE_INT32, types->data,
                          toks->len);
  hz_gguf_writer_set_u32 (w, "tokenizer.ggml.bos_token_id", 1);
  hz_gguf_writer_set_u32 (w, "tokenizer.ggml.eos_token_id", 2);
  hz_gguf_writer_set_u32 (w, "tokenizer.ggml.unknown_token_id", 0);
  if (chat_template)
    hz_gguf_writer_set_str (w, "tokenizer.chat_template",
                            "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
                            "{{ m['content'] }}<|im_end|>\n{% endfor %}");
  g_assert_true (hz_gguf_writer_write_file (w, path, &error));
}


/** Write a random-weight llama model of `shape` (hz_synth_shape_parse) in file type `ftype`
 *  with hz_ui_write_vocab's tokenizer into the test's directory as `name`; its path
 *  (g_free). */
static inline char *
hz_ui_write_model (const char *name, gboolean chat_template, guint64 seed, const char *shape,
                   HzFtype ftype)
{
  g_autofree char *vocab = g_build_filename (hz_ui_tmpdir, "vocab.gguf", NULL);
  g_autoptr(GError) error = NULL;
  HzSynthParams p = { 0 };
  char *path = g_build_filename (hz_ui_tmpdir, name, NULL);

  hz_ui_write_vocab (vocab, chat_template);
  g_assert_true (hz_synth_shape_parse (shape, &p.shape, &error));
  p.matrix_type = -1;
  p.ftype = ftype;
  p.seed = seed;
  p.vocab_gguf = vocab;
  p.n_threads = 1;
  g_assert_true (hz_synth_write (&p, path, &error));
  g_assert_no_error (error);
  return path;
}

