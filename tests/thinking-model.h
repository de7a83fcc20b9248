/* tests/thinking-model.h — a thinking model for the tests of the reasoning split (engine,
 * app, learner). Header-only; link libhzengine (GGUF reader and writer, synth).
 *
 * Its vocabulary is Qwen3's: Qwen2's (llama.cpp's test vocabulary in ../shared/golden/
 * tokenizer/) with the four tokens Qwen3 puts on ids 151665-151668 of Qwen2's padding,
 * user-defined as in a Qwen3 GGUF ("<think>" shows as text); its template is Qwen3's own
 * (tests/engine/chat-templates/Qwen-Qwen3-0.6B.jinja) or another the test gives.
 *
 * hz_scripted_model_write() makes a model of it whose reply is known: every layer's
 * projections are zero (each layer adds nothing to the residual stream), so the next token
 * depends on the last token only, through token_embd and output: token i of the script is
 * embedded as the unit vector e_(i+1), the start token as e_0, and output row of token
 * i+1 has weight SCRIPT_LOGIT at column i, so after `start` the model writes the script
 * token by token and then "<|im_end|>" (its logit leads every other by about 23 after
 * the RMS norm: greedy or sampled at any usual temperature, the same tokens). */
#pragma once

#include <math.h>
#include "family-vocab.h"
#include "quant.h"

#define QWEN3_TEMPLATE "tests/engine/chat-templates/Qwen-Qwen3-0.6B.jinja"
#define SCRIPT_LOGIT   4.0f
#define SCRIPT_DIM     32

/** A file under the source tree (`rel` relative to it, e.g. a template of
 *  tests/engine/chat-templates/) or an absolute path, read whole (g_free). */
static inline char *
hz_test_source_file (const char *rel)
{
  g_autofree char *path = g_path_is_absolute (rel)
                            ? g_strdup (rel)
                            : g_build_filename (g_getenv ("HZ_SOURCE_DIR"), rel, NULL);
  char *text = NULL;
  g_autoptr (GError) error = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, &error));
  g_assert_no_error (error);
  return text;
}

/** Qwen3's vocabulary with the template `jinja` (nullable: none), as a family of
 *  tests/family-vocab.h named `name` (both strings must outlive it). */
static inline HzFamily
hz_qwen3_family (const char *name, const char *jinja)
{
  const HzFamily qwen3 = {
    .name = name, .tmpl = HZ_CHAT_TEMPLATE_CHATML,
    .vocab = "golden/tokenizer/ggml-vocab-qwen2.gguf", .jinja = jinja,
    .add = { "<tool_response>", "</tool_response>", "<think>", "</think>", NULL },
    .controls = { "<|im_start|>", "<|im_end|>", NULL }, .rstrip = { NULL }, .typed = "",
    .add_at = 151665, .add_type = 4,   /* llama.cpp's LLAMA_TOKEN_TYPE_USER_DEFINED */
  };
  return qwen3;
}

/** Qwen3's vocabulary with the template `jinja`, loaded (vocab only); NULL after
 *  g_test_skip() without the shared data. */
static inline HzModel *
hz_qwen3_vocab_load (const char *jinja)
{
  const HzFamily f = hz_qwen3_family ("qwen3", jinja);
  return hz_family_vocab_load (&f);
}

/* The one token of `text` in `m` (asserted). */
static inline HzToken
hz_test_one_token (HzModel *m, const char *text)
{
  gsize n = 0;
  g_autofree HzToken *ids = hz_model_tokenize (m, text, -1, FALSE, TRUE, &n);
  if (n != 1)
    g_error ("'%s' is %" G_GSIZE_FORMAT " tokens, not one", text, n);
  return ids[0];
}

/** A model with Qwen3's vocabulary and the template `jinja` that answers the token `start`
 *  with the tokens of `script` (NULL-ended texts, each one token, no two alike, none
 *  `start`), then "<|im_end|>" (see above); written to `dir`/`name`.gguf, F32, one layer,
 *  context 512. NULL after g_test_skip() without the shared data. g_free the path. */
static inline char *
hz_scripted_model_write_family (const char *dir, const HzFamily *family, const char *start,
                                const char *const *script);

static inline char *
hz_scripted_model_write (const char *dir, const char *name, const char *jinja,
                         const char *start, const char *const *script)
{
  const HzFamily f = hz_qwen3_family (name, jinja);
  return hz_scripted_model_write_family (dir, &f, start, script);
}

/** hz_scripted_model_write() with another variant of Qwen3's vocabulary (`family`: its
 *  name names the file; other added tokens, e.g. harmony's markers as control tokens). */
static inline char *
hz_scripted_model_write_family (const char *dir, const HzFamily *family, const char *start,
                                const char *const *script)
{
  const HzFamily f = *family;
  const char *name = f.name;
  g_autofree char *vocab = hz_family_vocab_write (&f, dir);
  if (vocab == NULL)
    return NULL;
  g_autoptr (GError) error = NULL;
  /* a model of the right shapes (synth), whose tensors are then replaced */
  HzSynthParams p = { 0 };
  g_assert_true (hz_synth_shape_parse ("custom:dim=32,layers=1,heads=2,kv=2,ffn=32,ctx=512,"
                                       "tied=0", &p.shape, &error));
  g_assert_no_error (error);
  p.ftype = HZ_FTYPE_ALL_F32;
  p.matrix_type = -1;
  p.vocab_gguf = vocab;
  p.n_threads = 1;
  g_autofree char *raw = g_strdup_printf ("%s/%s.raw.gguf", dir, name);
  g_assert_true (hz_synth_write (&p, raw, &error));
  g_assert_no_error (error);

  g_autoptr (HzModel) vm = hz_family_load_vocab (vocab);
  guint n_script = 0;
  while (script[n_script])
    n_script++;
  g_assert_cmpuint (n_script + 2, <=, SCRIPT_DIM);
  /* chain[0] = start, chain[1..n] = script, chain[n+1] = <|im_end|> */
  g_autofree HzToken *chain = g_new (HzToken, n_script + 2);
  chain[0] = hz_test_one_token (vm, start);
  for (guint i = 0; i < n_script; i++)
    chain[i + 1] = hz_test_one_token (vm, script[i]);
  chain[n_script + 1] = hz_test_one_token (vm, "<|im_end|>");
  for (guint i = 0; i < n_script + 2; i++)
    for (guint j = i + 1; j < n_script + 2; j++)
      g_assert_cmpint (chain[i], !=, chain[j]);

  g_autoptr (HzGguf) g = hz_gguf_open (raw, &error);
  g_assert_no_error (error);
  g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
  for (int64_t i = 0; i < hz_gguf_n_kv (g); i++)
    hz_gguf_writer_copy_kv (w, g, i);
  for (int64_t i = 0; i < hz_gguf_n_tensors (g); i++)
    {
      const HzGgufTensor *t = hz_gguf_tensor (g, i);
      g_assert_cmpuint (t->type, ==, HZ_TYPE_F32);
      g_autofree char *tname = g_strndup (t->name.ptr, t->name.len);
      const int64_t cols = t->ne[0], rows = t->n_bytes / sizeof (float) / cols;
      g_autofree float *d = g_new0 (float, t->n_bytes / sizeof (float));
      if (g_str_has_suffix (tname, "_norm.weight") || strcmp (tname, "output_norm.weight") == 0)
        for (int64_t k = 0; k < cols * rows; k++)
          d[k] = 1.0f;
      else if (strcmp (tname, "token_embd.weight") == 0)
        {
          g_assert_cmpint (cols, ==, SCRIPT_DIM);
          for (guint k = 0; k <= n_script; k++)   /* the state after chain[k] */
            d[(int64_t) chain[k] * cols + k] = 1.0f;
        }
      else if (strcmp (tname, "output.weight") == 0)
        for (guint k = 0; k <= n_script; k++)     /* state k writes chain[k + 1] */
          d[(int64_t) chain[k + 1] * cols + k] = SCRIPT_LOGIT;
      g_assert_true (hz_gguf_writer_add_tensor (w, tname, HZ_TYPE_F32, t->n_dims, t->ne, d,
                                                t->n_bytes, TRUE, &error));
    }
  char *path = g_strdup_printf ("%s/%s.gguf", dir, name);
  g_assert_true (hz_gguf_writer_write_file (w, path, &error));
  g_assert_no_error (error);
  g_unlink (raw);
  g_unlink (vocab);
  return path;
}
