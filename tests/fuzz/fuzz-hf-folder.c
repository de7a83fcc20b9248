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
#include <stdint.h>
#include <string.h>

#define FUZZ_TARGET "fuzz-hf-folder"
#include "hf-check.h"
#include "tokenizer.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static const char *const files[] = {
  "config.json", "tokenizer.json", "tokenizer_config.json", "model.safetensors",
};

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  hf_dir_once ("hz-fuzz-hf-XXXXXX", files, G_N_ELEMENTS (files));
  const char *p = (const char *) data, *end = p + size;
  for (gsize i = 0; i < G_N_ELEMENTS (files); i++)
    {
      const char *nul = i + 1 < G_N_ELEMENTS (files) ? memchr (p, '\0', (gsize) (end - p)) : NULL;
      hf_dir_put (files[i], p, nul ? nul : end);
      p = nul ? nul + 1 : end;
    }

  g_autoptr (HzIsqModel) m = hf_open_checked ();
  if (!m)
    return 0;
  GError *error = NULL;
  HzTokenizer *t = hz_tokenizer_new_from_gguf (hz_isq_model_gguf (m), &error);
  if (t)
    hz_tokenizer_free (t);
  else
    hf_check_refused (&error);
  hf_convert_checked (m);
  return 0;
}
