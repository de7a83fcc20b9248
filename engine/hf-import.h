/* engine/hf-import.h — a Hugging Face safetensors folder read as a GGUF-to-be, the input side
 * of `hanzo quantize FOLDER` and of loading a folder (hz_isq_open, quantize.h).
 *
 * What it reads (llama.cpp's convert_hf_to_gguf.py is the reference for every mapping):
 *   - config.json: model_type llama/mistral (→ "llama"), qwen2, qwen3; hidden_size,
 *     num_hidden_layers, num_attention_heads, num_key_value_heads, intermediate_size,
 *     head_dim, rope_theta, rms_norm_eps, max_position_embeddings, rope_scaling (linear,
 *     yarn, llama3: the rope_freqs.weight factors as convert_hf_to_gguf computes them) →
 *     the `<arch>.*` keys;
 *   - *.safetensors, sharded through model.safetensors.index.json when present: names mapped
 *     to GGUF names (unknown ones skipped with a message on stderr), F32/F16/BF16 kept in
 *     place from the mapping, Llama q/k rows (and biases) permuted to llama.cpp's RoPE order,
 *     1-D tensors converted to F32;
 *   - the tokenizer: tokenizer.json and friends (hf-tokenizer.h), or the tokenizer.* keys of
 *     `vocab_gguf` when given.
 *
 * Thread safety: reentrant (one HzModelSource per call).
 */
#pragma once

#include <glib.h>
#include "model-source.h"

G_BEGIN_DECLS

/** Reads the Hugging Face folder `dir` into `s` (initialised by hz_model_source_init): the
 *  metadata keys into s->w, the tensors (GGUF names, in the files' order) into s->tensors,
 *  s->info and s->arch; the parsed JSON, the mapped safetensors files and converted
 *  buffers are kept in `s`. Errors: G_FILE_ERROR_NOENT when `dir` has no config.json,
 *  HZ_GGUF_ERROR_INVALID naming the file and key or tensor at fault (unsupported
 *  model_type or rope_scaling, inconsistent or out-of-range sizes, a dtype other than
 *  F32/F16/BF16, rows that do not split into heads), the safetensors reader's and the
 *  tokenizer importer's errors. On failure `s` holds what was read so far (release and
 *  clear it as usual). */
gboolean hz_hf_import_folder (HzModelSource *s, const char *dir, const char *vocab_gguf,
                              GError **error);

G_END_DECLS
