/* egress/lora-delta.h — LoRA adapter deltas: the only payload the federation moves.
 *
 * HzDeltaConfig describes an adapter's tensors (names and shapes, PEFT naming) plus its rank
 * and alpha; its identity is the sha256 of a canonical JSON text (hz_delta_config_hash()).
 * HzLoraDelta holds one f32 value per element of such a config in ONE contiguous buffer
 * (tensor i at hz_delta_config_offset(cfg, i), row-major), plus the sha256 of the base model
 * it was trained on.
 *
 * Wire format (issue 8): safetensors (engine/safetensors.{c,h}) with every tensor in dtype
 * BF16, rounded from f32 to nearest even by hz_fp32_to_bf16() (NaN stays NaN), in config
 * order with contiguous offsets, and "__metadata__":
 *   "format": "pt",
 *   "hanzo.adapter_config_sha256": hz_delta_config_hash(),
 *   "hanzo.base_model_sha256":     the delta's base model (lowercase hex),
 *   "hanzo.round_id":              decimal round id (u64),
 *   "hanzo.client_epsilon":        the release's epsilon ("%.17g"; "0" for an aggregate).
 * A reader (hz_lora_delta_from_wire()) accepts a file only when every tensor of the config
 * is present with exactly its shape, in dtype BF16, no other tensor exists, the config hash
 * matches and every value is finite.
 *
 * Thread safety: an HzDeltaConfig is immutable once built (after the last add_tensor) and
 * reference counted atomically, so it may be shared between threads. An HzLoraDelta is
 * used from one thread at a time.
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include "hanzo/engine-train.h"

G_BEGIN_DECLS

#define HZ_LORA_ERROR (hz_lora_error_quark ())
/** Error domain of this header. */
GQuark hz_lora_error_quark (void);
typedef enum {
  HZ_LORA_ERROR_INVALID,      /* bad argument: empty/duplicate name, zero dimension, ... */
  HZ_LORA_ERROR_CONFIG,       /* adapter config hash differs / config JSON malformed */
  HZ_LORA_ERROR_SHAPE,        /* missing, extra or wrongly shaped tensor */
  HZ_LORA_ERROR_DTYPE,        /* a tensor is not BF16 on the wire */
  HZ_LORA_ERROR_NOT_FINITE,   /* a NaN or infinity */
  HZ_LORA_ERROR_FORMAT,       /* not a safetensors file / metadata missing or malformed */
} HzLoraError;

/* ----------------------------------------------------------------- config */

typedef struct _HzDeltaConfig HzDeltaConfig;

/** An empty config of LoRA rank `rank` (>= 1) and scaling `alpha` (> 0). */
HzDeltaConfig *hz_delta_config_new (guint rank, double alpha);
/** All seven projections (q,k,v,o,gate,up,down) of every layer of a Llama-shaped model,
 *  PEFT names "base_model.model.model.layers.L.self_attn.q_proj.lora_A.weight" etc.;
 *  lora_A has shape [rank, in], lora_B [out, rank]. `kv_dim` = n_kv_heads * head_dim.
 *  TinyLlama 1.1B: (22, 2048, 256, 5632). */
HzDeltaConfig *hz_delta_config_new_llama (guint n_layers, guint hidden, guint kv_dim, guint ffn,
                                        guint rank, double alpha);
/** Parse the JSON written by hz_delta_config_to_json(). Errors: HZ_LORA_ERROR_CONFIG. */
HzDeltaConfig *hz_delta_config_new_from_json (const char *json, GError **error);
HzDeltaConfig *hz_delta_config_ref (HzDeltaConfig *cfg);
void          hz_delta_config_unref (HzDeltaConfig *cfg);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzDeltaConfig, hz_delta_config_unref)

/** Append a tensor. n_dims in [1, HZ_ST_MAX_DIMS], every dimension >= 1, the name non-empty,
 *  valid UTF-8, not "__metadata__" and new. Errors: HZ_LORA_ERROR_INVALID. Must not be
 *  called once the config is shared with another thread or used by a delta. */
gboolean hz_delta_config_add_tensor (HzDeltaConfig *cfg, const char *name, guint n_dims,
                                    const int64_t *shape, GError **error);

guint          hz_delta_config_rank (const HzDeltaConfig *cfg);
double         hz_delta_config_alpha (const HzDeltaConfig *cfg);
guint          hz_delta_config_n_tensors (const HzDeltaConfig *cfg);
const char    *hz_delta_config_tensor_name (const HzDeltaConfig *cfg, guint i);
guint          hz_delta_config_tensor_n_dims (const HzDeltaConfig *cfg, guint i);
const int64_t *hz_delta_config_tensor_shape (const HzDeltaConfig *cfg, guint i);
/** Elements of tensor i and its offset (in elements) in a delta's contiguous buffer. */
gsize          hz_delta_config_tensor_n_elements (const HzDeltaConfig *cfg, guint i);
gsize          hz_delta_config_offset (const HzDeltaConfig *cfg, guint i);
/** Sum of all tensors' elements. */
gsize          hz_delta_config_n_elements (const HzDeltaConfig *cfg);
/** Index of a tensor by name, or -1. */
gssize         hz_delta_config_find (const HzDeltaConfig *cfg, const char *name);
/** Canonical JSON: {"rank":R,"alpha":A,"tensors":[{"name":"..","shape":[..]},...]} with
 *  alpha as "%.17g" and no whitespace. Free with g_free(). */
char          *hz_delta_config_to_json (const HzDeltaConfig *cfg);
/** Lowercase hex sha256 of hz_delta_config_to_json() (owned by the config; valid until the
 *  next add_tensor). */
const char    *hz_delta_config_hash (HzDeltaConfig *cfg);

/* ----------------------------------------------------------------- delta */

typedef struct _HzLoraDelta HzLoraDelta;

/** A zero delta for `cfg` (referenced) trained on the base model `base_sha256` (64
 *  lowercase hex digits; anything else is a programming error and returns NULL). */
HzLoraDelta *hz_lora_delta_new (HzDeltaConfig *cfg, const char *base_sha256);
HzLoraDelta *hz_lora_delta_copy (const HzLoraDelta *delta);
void         hz_lora_delta_free (HzLoraDelta *delta);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzLoraDelta, hz_lora_delta_free)

HzDeltaConfig *hz_lora_delta_get_config (const HzLoraDelta *delta);
const char   *hz_lora_delta_get_base_sha256 (const HzLoraDelta *delta);
/** The contiguous buffer of all values (hz_delta_config_n_elements() floats). */
float        *hz_lora_delta_data (HzLoraDelta *delta);
const float  *hz_lora_delta_const_data (const HzLoraDelta *delta);
/** Tensor i's values (a view into the buffer). */
float        *hz_lora_delta_tensor (HzLoraDelta *delta, guint i);
/** Copy `n` values into the tensor called `name`; n must equal its element count.
 *  Errors: HZ_LORA_ERROR_SHAPE. */
gboolean      hz_lora_delta_set_tensor (HzLoraDelta *delta, const char *name,
                                        const float *values, gsize n, GError **error);
/** L2 norm over every value (accumulated in double). */
double        hz_lora_delta_l2_norm (const HzLoraDelta *delta);
/** Check the delta against an adapter config: same config hash (so same names, shapes,
 *  rank, alpha) and every value finite. Errors: HZ_LORA_ERROR_CONFIG (naming both hashes),
 *  HZ_LORA_ERROR_NOT_FINITE (naming the tensor and element). */
gboolean      hz_lora_delta_validate (const HzLoraDelta *delta, HzDeltaConfig *expected,
                                      GError **error);

/** Round every value to the nearest bf16 (round-to-nearest-even, NaN stays NaN), i.e.
 *  x := hz_bf16_to_fp32(hz_fp32_to_bf16(x)). */
void          hz_lora_round_bf16 (float *values, gsize n);

/** Serialise to the wire format above (BF16). The values are rounded; the delta itself is
 *  not modified. Never fails. */
GBytes       *hz_lora_delta_to_wire (HzLoraDelta *delta, guint64 round_id, double client_epsilon);

/** Parse and validate a wire file against `expected` (see the rules above). On success
 *  returns a delta whose values are the bf16 values widened to f32, and the metadata's round
 *  id and epsilon in *round_id / *client_epsilon (either may be NULL).
 *  Errors: HZ_LORA_ERROR_FORMAT (not safetensors, metadata missing/malformed),
 *  HZ_LORA_ERROR_CONFIG, HZ_LORA_ERROR_SHAPE, HZ_LORA_ERROR_DTYPE, HZ_LORA_ERROR_NOT_FINITE. */
HzLoraDelta  *hz_lora_delta_from_wire (GBytes *bytes, HzDeltaConfig *expected,
                                       guint64 *round_id, double *client_epsilon,
                                       GError **error);

/* ----------------------------------------------------------------- PEFT adapter dirs */

/** The config of a PEFT adapter directory (adapter_model.safetensors + adapter_config.json,
 *  as the learner writes them): its lora_A / lora_B tensors with their shapes, rank `r` and
 *  `lora_alpha` from the JSON, ordered by layer, then projection (q, k, v, o, gate, up,
 *  down), A before B — for an all-projection Llama adapter exactly the config (and hash)
 *  of hz_delta_config_new_llama(), so `hanzo-aggregator --llama` accepts its uploads;
 *  other names follow in strcmp order. Reads only the safetensors header and
 *  the JSON (the file is mapped, not loaded). Errors: HZ_LORA_ERROR_FORMAT (no LoRA tensors,
 *  bad r/alpha), HZ_SAFETENSORS_ERROR_*, G_FILE_ERROR / JSON_PARSER_ERROR. */
HzDeltaConfig *hz_delta_config_new_from_peft (const char *adapter_dir, GError **error);

/** The adapter's values (F32, F16 or BF16 on disk, widened to f32) as a delta of
 *  hz_delta_config_new_from_peft()'s config, for base model `base_sha256`. Errors as above,
 *  HZ_LORA_ERROR_DTYPE (another dtype), HZ_LORA_ERROR_INVALID (bad sha256). */
HzLoraDelta   *hz_lora_delta_new_from_peft (const char *adapter_dir, const char *base_sha256,
                                            GError **error);

/** Lowercase hex sha256 of `bytes`. Free with g_free(). */
char         *hz_sha256_hex (GBytes *bytes);
/** TRUE when `s` is a SHA-256 in lowercase hex, as hz_sha256_hex writes it (64 characters
 *  of [0-9a-f]); FALSE for NULL. Pure. */
gboolean      hz_is_sha256_hex (const char *s);

G_END_DECLS
