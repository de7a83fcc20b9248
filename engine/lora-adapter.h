/* engine/lora-adapter.h — LoRA adapter sets over the projections of a llama-family model,
 * and the one reader of adapter files (PEFT folders and llama.cpp GGUF LoRAs) that the
 * engine (serving, hanzo/engine.h HzAdapter) and the learner (learner/adapter-io.h, which
 * adds the writers and gradients) share. Internal to libhzengine and libhzlearn.
 *
 * LoRA (Hu et al. 2021, arXiv 2106.09685): a frozen weight W [n_out, n_in] gets a
 * low-rank update, y = W x + scaling * B (A x), with A [r, n_in], B [n_out, r] (row-major,
 * the layout of PEFT's lora_A.weight / lora_B.weight and of llama.cpp's lora_a / lora_b).
 * scaling = alpha / r, or alpha / sqrt(r) with rsLoRA (Kalajdzievski 2023,
 * arXiv 2312.03732).
 *
 * Files
 *   PEFT (huggingface/peft, save_pretrained of a LoraModel on a LlamaForCausalLM):
 *     <dir>/adapter_model.safetensors with, per layer i and target,
 *       base_model.model.model.layers.{i}.self_attn.{q,k,v,o}_proj.lora_A.weight  [r, in]
 *       base_model.model.model.layers.{i}.self_attn.{q,k,v,o}_proj.lora_B.weight  [out, r]
 *       base_model.model.model.layers.{i}.mlp.{gate,up,down}_proj.lora_{A,B}.weight
 *     (F32, F16 or BF16), and <dir>/adapter_config.json with peft_type "LORA", r,
 *     lora_alpha, use_rslora, target_modules (a list of module names or "all-linear").
 *   GGUF LoRA (llama.cpp convert_lora_to_gguf.py / llama-adapter.cpp):
 *     general.architecture = the base's, general.type = "adapter", adapter.type = "lora",
 *     adapter.lora.alpha (f32); tensors blk.{i}.{attn_q,...,ffn_down}.weight.lora_a with
 *     ggml ne = [in, r] and .lora_b with ne = [r, out]. llama.cpp scales by alpha / r; our
 *     writer keeps rsLoRA's original values in hanzo.lora.alpha / hanzo.lora.use_rslora,
 *     which the reader prefers when present.
 *
 * Row order of q and k: adapters are kept in the row order of the GGUF the engine serves.
 * For `llama`, llama.cpp's convert_hf_to_gguf.py (LlamaModel.permute) reorders the rows of
 * Wq and Wk within each head from Hugging Face's rotate_half layout (pairs (i, i + hd/2))
 * to ggml's adjacent-pair layout (pairs (2i, 2i+1)): GGUF row h*hd + 2i + j = HF row
 * h*hd + j*hd/2 + i; convert_lora_to_gguf.py applies the same permutation to lora_B
 * (P W + s (P B) A). PEFT files are therefore read with the forward permutation on q/k
 * lora_B (and written with the inverse one by the learner); GGUF LoRAs are already in the
 * GGUF order. qwen2/qwen3 use NeoX RoPE and are not permuted.
 *
 * Validation: every targeted projection of every layer must be present with the model's
 * shape and the file's rank, every value finite, and no tensor left over. Errors name the
 * file and the tensor: HZ_ENGINE_ERROR_BAD_ADAPTER (malformed file or config, missing
 * tensor, non-finite value, unsupported option), HZ_ENGINE_ERROR_ADAPTER_MISMATCH (another
 * architecture, a shape or layer count that does not fit the model),
 * HZ_ENGINE_ERROR_INVALID_ARGUMENT (r < 1, alpha not finite and > 0, no target), and the
 * readers' HZ_SAFETENSORS_ERROR / HZ_GGUF_ERROR / G_FILE_ERROR / JSON_PARSER_ERROR
 * (unreadable or truncated files).
 *
 * Thread safety: an HzLora is plain data; concurrent reads are safe, writes need the
 * caller's exclusion. The readers are reentrant.
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include "llm.h"

G_BEGIN_DECLS

/** The projections that can carry an adapter, in PEFT order. */
typedef enum {
  HZ_LORA_Q, HZ_LORA_K, HZ_LORA_V, HZ_LORA_O, HZ_LORA_GATE, HZ_LORA_UP, HZ_LORA_DOWN,
  HZ_LORA_N_TARGETS
} HzLoraTarget;

#define HZ_LORA_BIT(t) (1u << (t))
#define HZ_LORA_TARGETS_ALL ((1u << HZ_LORA_N_TARGETS) - 1)

/** PEFT module name: "q_proj", ..., "down_proj". */
const char *hz_lora_target_peft_name (HzLoraTarget t);
/** Parent module in the HF llama model: "self_attn" (q, k, v, o) or "mlp". */
const char *hz_lora_target_peft_parent (HzLoraTarget t);
/** GGUF tensor stem: "attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up",
 *  "ffn_down". */
const char *hz_lora_target_gguf_name (HzLoraTarget t);
/** Target from a PEFT ("q_proj") or GGUF ("attn_q") name; FALSE if neither. */
gboolean    hz_lora_target_from_name (const char *name, HzLoraTarget *out);
/** PEFT tensor key of (layer, target), ab 'A' or 'B' (g_free). */
char       *hz_lora_peft_key (int32_t layer, HzLoraTarget t, char ab);
/** GGUF LoRA tensor name of (layer, target), ab 'a' or 'b' (g_free). */
char       *hz_lora_gguf_key (int32_t layer, HzLoraTarget t, char ab);

/** Hyperparameters of an adapter set. */
typedef struct {
  int32_t  r;           /* rank, >= 1 (default 8) */
  float    alpha;       /* lora_alpha (default 8) */
  gboolean use_rslora;  /* scaling alpha / sqrt(r) instead of alpha / r (default FALSE) */
  guint32  targets;     /* HZ_LORA_BIT mask (default q and v, as PEFT for llama) */
} HzLoraConfig;

/** PEFT defaults: r 8, alpha 8, no rsLoRA, targets q_proj and v_proj. */
void   hz_lora_config_init (HzLoraConfig *c);
/** alpha / r, or alpha / sqrt(r) with use_rslora. */
double hz_lora_config_scaling (const HzLoraConfig *c);

/** Where one adapter lives in the flat arrays; n_in == 0 when the target has none. */
typedef struct {
  int64_t n_in, n_out;
  gsize   off_a;   /* A: [r, n_in] at params + off_a */
  gsize   off_b;   /* B: [n_out, r] at params + off_b */
} HzLoraSlot;

/** A set of adapters, one per (layer, target) of config.targets. All parameters live in
 *  one flat float array (`params`, n_params elements) and, for training, their gradients
 *  in another of the same layout (`grads`; NULL when the set was made for serving), so
 *  that the optimiser works on flat vectors. */
typedef struct {
  HzLoraConfig config;
  float        scaling;     /* hz_lora_config_scaling (config) */
  int32_t      n_layer;
  HzArch       arch;        /* of the model it was made for (q/k row order, see above) */
  int32_t      n_head, n_head_kv, head_dim_k;
  HzLoraSlot  *slots;       /* [n_layer * HZ_LORA_N_TARGETS] */
  gsize        n_params;
  float       *params;      /* [n_params] float32 */
  float       *grads;       /* [n_params] or NULL */
} HzLora;

/** Allocate adapters for every layer of a model with hyperparameters `hp` on the targets
 *  of `cfg`, parameters zero (and zero gradients when with_grads). Shapes: q
 *  [n_embd -> n_head*hdk], k [n_embd -> n_head_kv*hdk], v [n_embd -> n_head_kv*hdv],
 *  o [n_head*hdv -> n_embd], gate/up [n_embd -> n_ff], down [n_ff -> n_embd].
 *  Errors: HZ_ENGINE_ERROR_INVALID_ARGUMENT (r < 1, alpha not finite and > 0, no
 *  target). */
HzLora *hz_lora_alloc (const HzHparams *hp, const HzLoraConfig *cfg, gboolean with_grads,
                       GError **error);
void    hz_lora_free (HzLora *lora);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzLora, hz_lora_free)

/** The slot of (layer, target), or NULL when that projection has no adapter. */
const HzLoraSlot *hz_lora_slot (const HzLora *lora, int32_t layer, HzLoraTarget t);

/** Whether the adapter set fits a model of hyperparameters `hp` (architecture, layer
 *  count and every slot's shape). Errors: HZ_ENGINE_ERROR_ADAPTER_MISMATCH naming the
 *  first difference. */
gboolean hz_lora_check_model (const HzLora *lora, const HzHparams *hp, GError **error);

/** Permute rows of a q or k matrix (n_head heads of n_rows / n_head rows of row_len
 *  elements, in place) between the Hugging Face and the GGUF (llama.cpp) order described
 *  above: to_gguf = TRUE maps HF -> GGUF (LlamaModel.permute), FALSE the inverse. */
void hz_lora_permute_qk_rows (float *rows, int64_t n_rows, int64_t row_len, int32_t n_head,
                              gboolean to_gguf);
/** Whether adapters of `arch` get the q/k row permutation in PEFT files (llama only). */
gboolean hz_lora_arch_permutes_qk (HzArch arch);
/** Heads whose B rows of target t are permuted in PEFT files, or 0 when not permuted. */
int32_t  hz_lora_permute_heads (const HzLora *lora, HzLoraTarget t);

/** Read a PEFT adapter folder (adapter_config.json + adapter_model.safetensors, F32, F16
 *  or BF16) for a model with hyperparameters `hp`; q/k B rows permuted to the GGUF order
 *  for llama. Unsupported PEFT options (layers_to_transform, rank_pattern, alpha_pattern,
 *  DoRA, modules_to_save, fan_in_fan_out, target regular expressions) are refused, not
 *  ignored. grads is NULL. Errors: see the top of this file. */
HzLora *hz_lora_read_peft (const char *dir, const HzHparams *hp, GError **error);

/** Read a llama.cpp GGUF LoRA adapter (tensors of any type of the quant table with a
 *  float decoder) for a model with hyperparameters `hp`. The rank comes from the tensors,
 *  the targets from the tensor names present, alpha from hanzo.lora.alpha (+
 *  hanzo.lora.use_rslora) when present, else adapter.lora.alpha (0 or absent: alpha = r,
 *  scale 1, as llama.cpp). grads is NULL. Errors: see the top of this file. */
HzLora *hz_lora_read_gguf (const char *path, const HzHparams *hp, GError **error);

/** hz_lora_read_peft for a folder, hz_lora_read_gguf for a file. */
HzLora *hz_lora_read (const char *path, const HzHparams *hp, GError **error);

/* ------------------------------------------------------- serving-time stacks */

/** One LoRA adapter set of a stack applied without merging: every projection p that
 *  `lora` has gets y_p += scale * B_p (A_p x) after the base matmul (and bias). `scale` is
 *  the whole factor: the caller's per-adapter scale times lora->scaling (alpha / r or
 *  alpha / sqrt(r)). */
typedef struct {
  const HzLora *lora;
  float         scale;
} HzLoraTerm;

/** A stack of adapters applied to the same rows: y = W x + sum_i scale_i B_i (A_i x), in
 *  order (the shared federation adapter under the personal one). n == 0 is the base. */
typedef struct {
  const HzLoraTerm *terms;   /* [n] */
  guint             n;
} HzLoraStack;

typedef struct _HzAdapter HzAdapter;   /* hanzo/engine.h */

/** The adapters of one context or request, resolved: references on the public
 *  HzAdapters, the stack of their terms with a non-zero scale, and an identity key. */
typedef struct {
  HzLoraStack stack;     /* terms with scale != 0, in the given order */
  HzAdapter **refs;      /* [n_refs] references held (all given adapters) */
  guint       n_refs;
  char       *key;       /* "" for the base; else the adapters' load serials and scale
                            bits: two bindings with equal keys compute the same K/V */
} HzLoraBinding;

/** Resolve n adapters (scales NULL: 1 each) for a model of hyperparameters `hp` into `b`
 *  (which must be zeroed or cleared). Errors: HZ_ENGINE_ERROR_ADAPTER_MISMATCH (an
 *  adapter does not fit the model), HZ_ENGINE_ERROR_INVALID_ARGUMENT (a NULL adapter, a
 *  scale that is not finite); `b` is left cleared then. */
gboolean hz_lora_binding_init (HzLoraBinding *b, const HzHparams *hp,
                               HzAdapter *const *adapters, const float *scales, guint n,
                               GError **error);
/** Drop the references and arrays of `b` (a cleared binding is the base). */
void     hz_lora_binding_clear (HzLoraBinding *b);
/** The adapter set inside a public HzAdapter. */
const HzLora *hz_adapter_get_lora (const HzAdapter *a);

/** The refcounted HzAdapter of hz_adapter_load() (hanzo/engine.h) for a model of
 *  hyperparameters `hp`: reads `path` (a PEFT folder or a GGUF LoRA file, hz_lora_read())
 *  and checks it against `hp`. Errors as hz_lora_read(). Thread-safe (the serial number
 *  that identifies each load is taken under a lock). */
HzAdapter *hz_adapter_new_for (const HzHparams *hp, const char *path, GError **error);

G_END_DECLS
