/* tests/fuzz/shapes.h — the fixed adapter shapes that the fuzz targets check inputs
 * against and that gen-fuzz-corpus.c writes the seeds for (shared so the two agree). */
#pragma once

#include "lora-adapter.h"
#include "lora-delta.h"

/** The federation config of fuzz-lora-delta.c: rank 2, alpha 4, lora_A [2, 16] and
 *  lora_B [16, 2] of q and v in 2 layers ("layers.L.q.lora_A.weight", ...). New reference. */
HzDeltaConfig *fuzz_lora_delta_config (void);

/** The model of fuzz-adapter.c: Llama, 2 layers, n_embd 16, 2 heads (1 KV head) of 8,
 *  n_ff 24. */
HzHparams fuzz_adapter_hparams (void);

/** The adapters of fuzz-checkpoint.c (on the model of fuzz_adapter_hparams) and the job
 *  tag its checkpoint seeds are written with. */
#define FUZZ_CHECKPOINT_TARGETS (HZ_LORA_BIT (HZ_LORA_Q) | HZ_LORA_BIT (HZ_LORA_V))
#define FUZZ_CHECKPOINT_RANK 2
#define FUZZ_CHECKPOINT_TAG "fuzz-job"

/** The tokenizer.json (byte-level BPE, 6 tokens, 2 merges, 2 added special tokens) and
 *  tokenizer_config.json of the Hugging Face folders of fuzz-hf-folder.c and
 *  fuzz-hf-index.c (static strings). */
extern const char fuzz_hf_tokenizer_json[];
extern const char fuzz_hf_tokenizer_config_json[];

/** config.json of a 1-layer model of `model_type` (n_embd 8, n_ff 16, 2 heads of 4, 1 KV
 *  head, vocabulary 8, tied embeddings) with `extra` (members with a leading comma, or "")
 *  appended inside the object (g_free). */
char *fuzz_hf_config_json (const char *model_type, const char *extra);

