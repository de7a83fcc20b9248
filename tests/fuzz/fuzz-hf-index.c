/* tests/fuzz/fuzz-hf-index.c — libFuzzer target for sharded Hugging Face checkpoints
 * (engine/quantize.c): model.safetensors.index.json, whose "weight_map" names the shard of
 * every tensor, and the shards it names. The input is
 *   model.safetensors.index.json NUL model-00001-of-00002.safetensors NUL
 *   model-00002-of-00002.safetensors
 * The folder also holds the fixed config.json
 * (qwen2, no q/k permutation) and tokenizer files of shapes.h. It is opened with
 * hz_isq_open(); an accepted folder is converted to Q8_0 (hz_isq_convert).
 *
 * Invariants: a refused folder carries an error message; an accepted one has metadata with
 * general.architecture, and once converted one tensor per name. Any violation aborts. */
#include <stdint.h>
#include <string.h>

#define FUZZ_TARGET "fuzz-hf-index"
#include "hf-check.h"
#include "shapes.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* the parts of the input, in order, then the fixed files */
static const char *const files[] = {
  "model.safetensors.index.json", "model-00001-of-00002.safetensors",
  "model-00002-of-00002.safetensors", "config.json", "tokenizer.json", "tokenizer_config.json",
};
enum { N_PARTS = 3 };

/* Writes the NUL-terminated `text` as the folder's file `name`. */
static void
put_text (const char *name, const char *text)
{
  hf_dir_put (name, text, text + strlen (text));
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (hf_dir_once ("hz-fuzz-hf-index-XXXXXX", files, G_N_ELEMENTS (files)))
    {
      g_autofree char *cfg = fuzz_hf_config_json ("qwen2", "");
      put_text ("config.json", cfg);
      put_text ("tokenizer.json", fuzz_hf_tokenizer_json);
      put_text ("tokenizer_config.json", fuzz_hf_tokenizer_config_json);
    }
  const char *p = (const char *) data, *end = p + size;
  const char *nul = memchr (p, '\0', size);
  const char *index_end = nul ? nul : end;
  const char *s1 = nul ? nul + 1 : end;
  guint32 n1 = 0;
  if (end - s1 >= 4)
    {
      memcpy (&n1, s1, 4);
      n1 = GUINT32_FROM_LE (n1);
      s1 += 4;
    }
  else
    s1 = end;
  const char *e1 = (gsize) (end - s1) < n1 ? end : s1 + n1;
  const char *starts[N_PARTS] = { p, s1, e1 }, *ends[N_PARTS] = { index_end, e1, end };
  for (gsize i = 0; i < N_PARTS; i++)
    hf_dir_put (files[i], starts[i], ends[i]);

  g_autoptr (HzIsqModel) m = hf_open_checked ();
  if (!m || !hf_convert_checked (m))
    return 0;
  /* one tensor per name: a tensor in two shards is refused, not lost */
  CHECK (g_hash_table_size (hz_isq_model_tensors (m)) == hz_isq_model_stats (m)->n_tensors);
  return 0;
}
