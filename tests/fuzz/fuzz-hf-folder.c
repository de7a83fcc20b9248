/* tests/fuzz/fuzz-hf-folder.c — libFuzzer target for Hugging Face model folders
 * (engine/quantize.c: config.json → GGUF metadata, tokenizer.json + tokenizer_config.json →
 * the byte-level BPE vocabulary, model.safetensors → tensors under GGUF names, Llama q/k
 * permutation, 1-D tensors to F32). The input is
 *   config.json NUL tokenizer.json NUL tokenizer_config.json NUL model.safetensors
 * (an empty part: the file is absent); the parts are written to a private folder and
 * opened with hz_isq_open(); an accepted folder is converted to Q8_0 at load
 * (hz_isq_convert) and its vocabulary built with hz_tokenizer_new_from_gguf().
 *
 * Invariants: a refused folder carries an error message; an accepted one has metadata with
 * general.architecture. Any violation aborts. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gguf.h"
#include "quantize.h"
#include "tokenizer.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define CHECK(cond)                                                                      \
  do {                                                                                   \
    if (!(cond))                                                                         \
      {                                                                                  \
        g_printerr ("fuzz-hf-folder: invariant failed: %s (%s:%d)\n", #cond, __FILE__,   \
                    __LINE__);                                                           \
        abort ();                                                                        \
      }                                                                                  \
  } while (0)

static const char *const files[] = {
  "config.json", "tokenizer.json", "tokenizer_config.json", "model.safetensors",
};
static char *dir;

static void
remove_dir (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *p = g_build_filename (dir, files[i], NULL);
      g_unlink (p);
    }
  g_rmdir (dir);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (!dir)
    {
      /* memory-backed when there is /dev/shm: every input writes four files */
      const char *base = g_file_test ("/dev/shm", G_FILE_TEST_IS_DIR) ? "/dev/shm" : g_get_tmp_dir ();
      g_autofree char *tmpl = g_build_filename (base, "hz-fuzz-hf-XXXXXX", NULL);
      dir = g_mkdtemp (g_steal_pointer (&tmpl));
      CHECK (dir != NULL);
      atexit (remove_dir);
    }
  const char *p = (const char *) data, *end = p + size;
  for (gsize i = 0; i < G_N_ELEMENTS (files); i++)
    {
      const char *nul = i + 1 < G_N_ELEMENTS (files) ? memchr (p, '\0', (gsize) (end - p)) : NULL;
      const char *stop = nul ? nul : end;
      g_autofree char *path = g_build_filename (dir, files[i], NULL);
      if (stop > p)
        CHECK (g_file_set_contents (path, p, stop - p, NULL));
      else
        g_unlink (path);
      p = nul ? nul + 1 : end;
    }

  GError *error = NULL;
  g_autoptr (HzIsqModel) m = hz_isq_open (dir, NULL, &error);
  if (!m)
    {
      CHECK (error != NULL && error->message[0]);
      g_error_free (error);
      return 0;
    }
  const HzGguf *g = hz_isq_model_gguf (m);
  CHECK (g != NULL);
  g_autofree char *arch = hz_gguf_get_str (g, "general.architecture");
  CHECK (arch != NULL);
  HzTokenizer *t = hz_tokenizer_new_from_gguf (g, &error);
  if (t)
    hz_tokenizer_free (t);
  else
    {
      CHECK (error != NULL && error->message[0]);
      g_clear_error (&error);
    }
  if (!hz_isq_convert (m, "Q8_0", 1, &error))
    {
      CHECK (error != NULL && error->message[0]);
      g_error_free (error);
    }
  return 0;
}
