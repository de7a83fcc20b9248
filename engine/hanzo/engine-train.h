/* hanzo/engine-train.h — the engine's face for training (issue 26 item 6): what libhzlearn
 * (learner/) needs beyond the public inference API, in one header, so that the learner
 * includes nothing else of engine/; egress' LoRA deltas (the learner's adapters on the
 * wire: PEFT names, safetensors, bf16) use it too. The learner trains on the engine's own weights and
 * files, so these are the engine's internal headers, exported as a contract: a change to
 * one of them is a change to this face.
 *
 *   hanzo/engine.h     the public API (HzModel, HzContext, tokenization, generation), and
 *   model-private.h    hz_model_get_llm: the bound weights of a loaded HzModel;
 *   llm.h              HzLlm, HzHparams, HzLayer, HzMatrix (the frozen base in any quant
 *                      format; ggml's shape convention), HzRopeMode, hz_llm_load/free;
 *   gguf.h             the GGUF reader and writer (bases, adapters as GGUF LoRAs, merges);
 *   safetensors.h      the safetensors reader and writer (PEFT adapter files);
 *   lora-adapter.h     HzLora, HzLoraConfig, targets and PEFT/GGUF key names, the one reader
 *                      of PEFT folders and GGUF LoRAs, the llama q/k row permutation;
 *   quant/quant.h      the format table's traits (row sizes, dequantization, bf16);
 *   threadpool.h       the fork-join pool the training ops run on;
 *   cpu/ops.h          the RoPE tables (HzRope, hz_cpu_rope_init, hz_cpu_rope_cache), so
 *                      that training rotates exactly as inference does.
 *
 * Thread safety: as documented in each header.
 */
#pragma once

#include "hanzo/engine.h"
#include "model-private.h"
#include "llm.h"
#include "gguf.h"
#include "safetensors.h"
#include "lora-adapter.h"
#include "quant.h"
#include "threadpool.h"
#include "cpu/ops.h"
