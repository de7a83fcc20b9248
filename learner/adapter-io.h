/* learner/adapter-io.h — LoRA adapter files: PEFT safetensors + adapter_config.json, and
 * llama.cpp GGUF LoRA.
 *
 * PEFT (huggingface/peft, save_pretrained of a LoraModel on a LlamaForCausalLM):
 *   <dir>/adapter_model.safetensors with, per layer i and target,
 *     base_model.model.model.layers.{i}.self_attn.{q,k,v,o}_proj.lora_A.weight  [r, in]
 *     base_model.model.model.layers.{i}.self_attn.{q,k,v,o}_proj.lora_B.weight  [out, r]
 *     base_model.model.model.layers.{i}.mlp.{gate,up,down}_proj.lora_{A,B}.weight
 *   as F32 or BF16 (round to nearest even), metadata {"format": "pt"}; and
 *   <dir>/adapter_config.json with peft_type "LORA", task_type "CAUSAL_LM", r,
 *   lora_alpha, lora_dropout 0, target_modules, use_rslora, bias "none", ...
 * GGUF LoRA (llama.cpp convert_lora_to_gguf.py / llama-adapter.cpp):
 *   general.architecture = the base's, general.type = "adapter", adapter.type = "lora",
 *   adapter.lora.alpha (f32); tensors blk.{i}.{attn_q,...,ffn_down}.weight.lora_a with
 *   ggml ne = [in, r] (row-major [r, in], as PEFT's A) and .lora_b with ne = [r, out]
 *   (row-major [out, r]). llama.cpp scales by alpha / r (r = ne[1] of lora_a); an rsLoRA
 *   adapter is therefore written with adapter.lora.alpha = alpha * sqrt(r), which gives
 *   the same alpha / sqrt(r), and the original values are kept in the extra keys
 *   hanzo.lora.alpha and hanzo.lora.use_rslora (ignored by llama.cpp) for exact
 *   round trips.
 *
 * Row order of q and k (the only conversion done): for the `llama` architecture,
 * llama.cpp's convert_hf_to_gguf.py (LlamaModel.permute) reorders the rows of Wq and Wk
 * within each head from Hugging Face's rotate_half layout (pairs (i, i + hd/2)) to ggml's
 * adjacent-pair RoPE layout (pairs (2i, 2i+1)): GGUF row h*hd + 2i + j = HF row
 * h*hd + j*hd/2 + i (i < hd/2, j in {0, 1}; n_head heads for q, n_head_kv for k), and
 * convert_lora_to_gguf.py applies the same permutation to lora_B (since the permuted
 * W + s B A = P W + s (P B) A). Our adapters live in the GGUF order (lora.h), so PEFT
 * files are written with the inverse permutation on q/k lora_B and read with the forward
 * one; lora_A and every other tensor are unchanged. qwen2/qwen3 GGUFs use NeoX RoPE and
 * are not permuted, so neither are their adapters.
 *
 * Reading is the engine's (engine/lora-adapter.c, hz_lora_read_peft / hz_lora_read_gguf,
 * which the serving path uses too): the loaders here wrap it, add gradient buffers and
 * report errors in HZ_LEARN_ERROR. The q/k permutation helpers are the engine's as well.
 *
 * Thread safety: functions are reentrant; they read or write whole files (writes go to a
 * temporary file renamed into place).
 */
#pragma once

#include <glib.h>
#include "lora.h"
#include "hanzo/engine-train.h"

G_BEGIN_DECLS

/* hz_lora_permute_qk_rows() and hz_lora_arch_permutes_qk(): engine/lora-adapter.h */

/** Write `lora` as a PEFT adapter directory (created if missing): adapter_model.safetensors
 *  in `dtype` (HZ_ST_F32 or HZ_ST_BF16) and adapter_config.json (base_model_name_or_path =
 *  base_model, may be NULL). Errors: HZ_LEARN_ERROR_INVALID for another dtype, G_FILE_ERROR
 *  / HZ_SAFETENSORS_ERROR from the writers. */
gboolean hz_lora_save_peft (const HzLora *lora, const char *dir, HzStDtype dtype,
                            const char *base_model, GError **error);

/** Read a PEFT adapter directory for a model with hyperparameters `hp` with the engine's
 *  reader (hz_lora_read_peft: r, lora_alpha, use_rslora and target_modules from
 *  adapter_config.json, F32/F16/BF16 tensors, q/k B rows permuted to the GGUF order for
 *  llama, every value finite), with zero gradients. Errors: HZ_LEARN_ERROR_FORMAT (bad
 *  config: unsupported options such as layers_to_transform, rank_pattern or DoRA; missing
 *  tensors; non-finite values), HZ_LEARN_ERROR_MISMATCH (shapes), HZ_LEARN_ERROR_INVALID
 *  (r, alpha), and the file readers' errors. */
HzLora *hz_lora_load_peft (const char *dir, const HzHparams *hp, GError **error);

/** Write `lora` as a llama.cpp GGUF LoRA adapter with tensors of ggml `type` (HZ_TYPE_F32,
 *  HZ_TYPE_F16 or HZ_TYPE_BF16), general.architecture from the adapter's arch.
 *  Errors: HZ_LEARN_ERROR_INVALID for another type, HZ_GGUF_ERROR from the writer. */
gboolean hz_lora_save_gguf (const HzLora *lora, const char *path, HzType type, GError **error);

/** Read a GGUF LoRA adapter (any tensor type of the quant table) for a model with
 *  hyperparameters `hp` with the engine's reader (hz_lora_read_gguf: rank from the
 *  tensors, targets from the tensor names present, alpha from adapter.lora.alpha or the
 *  hanzo.lora.* keys when present), with zero gradients. Errors: HZ_LEARN_ERROR_FORMAT (not an adapter, not LoRA, inconsistent ranks or
 *  targets), HZ_LEARN_ERROR_MISMATCH (architecture, layer count or shapes), HZ_GGUF_ERROR. */
HzLora *hz_lora_load_gguf (const char *path, const HzHparams *hp, GError **error);

G_END_DECLS
