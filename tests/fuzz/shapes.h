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
