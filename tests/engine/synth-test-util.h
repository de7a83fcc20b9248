/* tests/engine/synth-test-util.h — writing a random-weight model (engine/synth.h) for a test,
 * loading it and serving it (header-only): shared by test-synth, test-moe and test-gemma. */
#pragma once

#include <glib.h>
#include <unistd.h>
#include "hanzo/engine.h"
#include "hanzo/serving.h"
#include "quant.h"
#include "synth.h"
#include "../hz-test-util.h"

/** Writes shape `shape` (a name or custom:...) as architecture `arch` (NULL: the shape's)
 *  with every matrix in ggml type `type` (vectors F32), seed `seed`, the vocabulary of
 *  ../shared/models/stories260K.gguf, to a file of the temporary folder named after the
 *  process, `tag`, the shape or arch and the type; `threads` writer threads. Returns the
 *  path (g_free; the caller unlinks it), NULL with *error set, or NULL without error after
 *  g_test_skip() when the shared vocabulary is absent. */
static inline char *
hz_test_synth_write (const char *tag, const char *shape, const char *arch, uint32_t type,
                     guint64 seed, guint threads, GError **error)
{
  g_autofree char *vocab = hz_test_shared_path ("models/stories260K.gguf");
  if (!vocab)
    return NULL;
  HzSynthParams p = { 0 };
  g_assert_true (hz_synth_shape_parse (shape, &p.shape, NULL));
  p.arch = arch;
  p.ftype = HZ_FTYPE_ALL_F32;
  p.matrix_type = (int32_t) type;
  p.seed = seed;
  p.vocab_gguf = vocab;
  p.n_threads = threads;
  char *out = g_strdup_printf ("%s/hz-test-%s-%d-%s-%s-%u.gguf", g_get_tmp_dir (), tag,
                               (int) getpid (), arch ? arch : p.shape.name,
                               hz_quant_traits (type)->name, threads);
  if (!hz_synth_write (&p, out, error))
    {
      g_free (out);
      return NULL;
    }
  return out;
}

/** hz_model_load with `threads` threads (errors as hz_model_load). */
static inline HzModel *
hz_test_model_load (const char *path, guint threads, GError **error)
{
  HzModelParams mp;
  hz_model_params_init (&mp);
  mp.n_threads = threads;
  return hz_model_load (path, &mp, error);
}

/** An HzServe for the synthetic models' serving tests: steps of up to 48 tokens (several
 *  prompt chunks and decodes share each step), sequences up to 256 positions. */
static inline HzServe *
hz_test_small_server (HzModel *m, guint threads)
{
  HzServeParams sp;
  hz_serve_params_init (&sp);
  sp.max_batch_tokens = 48;
  sp.max_seq_len = 256;
  sp.n_threads = threads;
  g_autoptr (GError) error = NULL;
  HzServe *srv = hz_serve_new (m, &sp, &error);
  g_assert_no_error (error);
  return srv;
}
