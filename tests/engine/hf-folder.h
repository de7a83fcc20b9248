/* tests/engine/hf-folder.h — test helper: turn a llama GGUF into a Hugging Face folder
 * (the inverse of the engine's conversion), so loading the folder can be compared with
 * loading the GGUF. */
#pragma once
#include <glib.h>

typedef enum {
  HZ_HF_F32,   /* every tensor float32 */
  HZ_HF_BF16,  /* matrices bfloat16 (rounded), 1-D tensors float32 */
  HZ_HF_F16,   /* matrices float16 (rounded), 1-D tensors float32 */
} HzHfDtype;

/** Writes `dir` (created) from the GGUF at `gguf_path` (architecture llama, qwen2 or qwen3,
 *  every tensor F32): config.json from the <arch>.* keys; tensors under HF names (llama: q/k
 *  rows in HF order, the inverse of convert_hf_to_gguf.py's permutation), in two shards
 *  model-0000{1,2}-of-00002.safetensors (layers of the second half in the second), plus
 *  model.safetensors.index.json when `index`. No tokenizer.json: load with a vocab GGUF.
 *  Fails the test on any error. */
void hz_test_write_hf_folder (const char *gguf_path, const char *dir, HzHfDtype dtype,
                              gboolean index);

/** Removes the files of `dir` and the directory (not recursive). */
void hz_test_rm_dir (const char *dir);
