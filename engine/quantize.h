/* engine/quantize.h — model-level quantization: llama-quantize's method (per-tensor type
 * choice for the mixes, fallback for rows that do not divide into blocks), a whole-file
 * quantizer for GGUF files and Hugging Face safetensors folders, and the load-time hook
 * (ISQ) for the engine.
 *
 * Method: llama.cpp's src/llama-quant.cpp (b4748, c392e509): `llama_tensor_get_type` for the
 * mixes, `llama_model_quantize_impl` for the file (tensor order, metadata, copies).
 * Quantization itself goes through the format table (hz_quant_quantize_rows, which is
 * ggml_quantize_chunk without an importance matrix), so the bytes are ggml's.
 *
 * Per-tensor rules, in brief (see hz_quant_chooser_type for the full list):
 *   - only tensors with >= 2 dimensions whose name ends in "weight" and that are not
 *     "*_norm.weight" are quantized; 1-D tensors (norms, biases) keep their type (F32);
 *   - output.weight (and token_embd.weight when the output is tied to it) → Q6_K unless the
 *     file type's default is Q8_0 (Q8_0 when its rows do not divide into the block);
 *   - attn_v, ffn_down, attn_output get more bits in the K mixes by layer index
 *     (use_more_bits: the first and last eighth and every third layer in between);
 *   - a tensor whose rows (ne[0]) do not divide into the chosen format's block falls back:
 *     IQ2/IQ3/IQ1/IQ4_XS/Q2_K/Q3_K → IQ4_NL, TQ1_0/TQ2_0 → Q4_0, Q4_K → Q5_0, Q5_K → Q5_1,
 *     Q6_K → Q8_0, and F16 when the fallback does not fit either. Unlike llama.cpp (which
 *     aborts), the 32-element formats (Q4_0 … Q8_0, IQ4_NL) also fall back to F16, so
 *     stories260K's 172-wide ffn_down quantizes.
 *
 * Thread safety: the functions are reentrant; a HzQuantChooser is used by one thread.
 */
#pragma once

#include <gio/gio.h>
#include <stdint.h>
#include "gguf.h"
#include "model-source.h"

G_BEGIN_DECLS

/** llama.cpp's llama_ftype values (llama.h): what general.file_type holds. */
typedef enum {
  HZ_FTYPE_ALL_F32 = 0,
  HZ_FTYPE_F16     = 1,
  HZ_FTYPE_Q4_0    = 2,
  HZ_FTYPE_Q4_1    = 3,
  HZ_FTYPE_Q8_0    = 7,
  HZ_FTYPE_Q5_0    = 8,
  HZ_FTYPE_Q5_1    = 9,
  HZ_FTYPE_Q2_K    = 10,
  HZ_FTYPE_Q3_K_S  = 11,
  HZ_FTYPE_Q3_K_M  = 12,
  HZ_FTYPE_Q3_K_L  = 13,
  HZ_FTYPE_Q4_K_S  = 14,
  HZ_FTYPE_Q4_K_M  = 15,
  HZ_FTYPE_Q5_K_S  = 16,
  HZ_FTYPE_Q5_K_M  = 17,
  HZ_FTYPE_Q6_K    = 18,
  HZ_FTYPE_IQ2_XXS = 19,
  HZ_FTYPE_IQ2_XS  = 20,
  HZ_FTYPE_Q2_K_S  = 21,
  HZ_FTYPE_IQ3_XS  = 22,
  HZ_FTYPE_IQ3_XXS = 23,
  HZ_FTYPE_IQ1_S   = 24,
  HZ_FTYPE_IQ4_NL  = 25,
  HZ_FTYPE_IQ3_S   = 26,
  HZ_FTYPE_IQ3_M   = 27,
  HZ_FTYPE_IQ2_S   = 28,
  HZ_FTYPE_IQ2_M   = 29,
  HZ_FTYPE_IQ4_XS  = 30,
  HZ_FTYPE_IQ1_M   = 31,
  HZ_FTYPE_BF16    = 32,
  HZ_FTYPE_TQ1_0   = 36,
  HZ_FTYPE_TQ2_0   = 37,
} HzFtype;

/** A file type that `hanzo quantize` can produce. */
typedef struct {
  const char *name;          /* "Q4_K_M" (as llama-quantize spells it) */
  HzFtype     ftype;
  uint32_t    default_type;  /* ggml type of most matrices (llama_ftype_get_default_type) */
  const char *summary;
} HzFtypeInfo;

/** File type by name, case-insensitive; llama-quantize's aliases Q3_K → Q3_K_M,
 *  Q4_K → Q4_K_M, Q5_K → Q5_K_M; "F32" → ALL_F32. NULL when unknown or when the file type
 *  needs an importance matrix (IQ1/IQ2/IQ3_XXS mixes). */
const HzFtypeInfo *hz_ftype_from_name (const char *name);
/** Info of a file type, or NULL. */
const HzFtypeInfo *hz_ftype_info (HzFtype ftype);
/** The i-th supported file type (i < hz_ftype_count()), for --help listings. */
gsize              hz_ftype_count (void);
const HzFtypeInfo *hz_ftype_nth (gsize i);
/** The ggml types that quantizing to `ftype` may produce whose format the quant table
 *  lacks or cannot encode (from_float NULL). Returns the first such type name, or NULL when
 *  the table supports the whole mix. */
const char        *hz_ftype_missing_format (HzFtype ftype);

/* ------------------------------------------------------------ per-tensor types */

/* HzQuantModelInfo, the model facts the mixes depend on: model-source.h */

/** Reads HzQuantModelInfo from GGUF metadata (missing keys: n_layer 0, n_head_kv = n_head).
 *  `info->arch` points into a string owned by the caller-freed `*arch_out` (g_free). */
void hz_quant_model_info_from_gguf (const HzGguf *g, HzQuantModelInfo *info, char **arch_out);

typedef struct _HzQuantChooser HzQuantChooser;

/** A type chooser for one model. `names` lists every tensor of the model (the counts of
 *  attn_v tensors and whether output.weight exists come from it). `pure`: no mix rules
 *  (every quantizable tensor at the default type, fallback still applies). */
HzQuantChooser *hz_quant_chooser_new (HzFtype ftype, gboolean pure, const HzQuantModelInfo *info,
                                      const char *const *names, gsize n_names);
void            hz_quant_chooser_free (HzQuantChooser *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzQuantChooser, hz_quant_chooser_free)

/** The ggml type tensor `name` (shape ne[0..n_dims-1], current type `cur_type`) gets.
 *  Call once per tensor IN FILE ORDER (hz_quantize_sort_names order): the attn_v / ffn_down
 *  rules count the tensors seen so far, as llama.cpp does. *fallback (nullable) is set TRUE
 *  when the rows did not divide into the mix's choice. Never fails: an unquantizable tensor
 *  keeps cur_type. */
uint32_t hz_quant_chooser_type (HzQuantChooser *c, const char *name, uint32_t n_dims,
                                const int64_t *ne, uint32_t cur_type, gboolean *fallback);
/** Number of fallbacks so far. */
int      hz_quant_chooser_n_fallback (const HzQuantChooser *c);

/** Whether llama-quantize would quantize this tensor at all: >= 2 dimensions, name ending in
 *  "weight", not a norm, expert router, positional embedding, ... (1-D tensors never). */
gboolean hz_quant_tensor_allows_quantization (const char *name, uint32_t n_dims);

/** Sort tensor names in llama.cpp's order (llama_model_loader's weight_name_comparer):
 *  tensors outside blocks first, then by block index "blk.N.", then by name (strcmp).
 *  Sorts `names` in place. */
void hz_quantize_sort_names (const char **names, gsize n);

/* --------------------------------------------------------------- one tensor */

/** Converts one tensor to `dst_type`: dequantizes `src` (any type of the table with a
 *  to_float) to float32 and quantizes rows of ne[0] elements with the format table
 *  (ggml_quantize_chunk without an importance matrix), splitting the rows over
 *  `n_threads` threads (0 = number of cores). When src_type == dst_type the bytes are
 *  copied. Returns a g_malloc'ed buffer of *out_bytes bytes, or NULL with an
 *  HZ_GGUF_ERROR_INVALID / _UNKNOWN_TYPE error naming `name` when the source type has no
 *  decoder, `src_bytes` disagrees with the shape, the destination format has no encoder,
 *  or ne[0] is not a multiple of its block. */
void *hz_quantize_tensor (const char *name, uint32_t n_dims, const int64_t *ne,
                          uint32_t src_type, const void *src, uint64_t src_bytes,
                          uint32_t dst_type, guint n_threads, uint64_t *out_bytes,
                          GError **error);

/* --------------------------------------------------------------- whole files */

typedef struct {
  HzFtype  ftype;
  guint    n_threads;     /* 0 = number of cores */
  gboolean pure;          /* no mix rules (llama-quantize --pure) */
  gboolean verbose;       /* one line per tensor on stderr, as llama-quantize prints */
  const char *vocab_gguf; /* safetensors input: copy tokenizer.* keys from this GGUF
                           * (NULL: convert tokenizer.json in the folder) */
  GCancellable *cancellable; /* checked between tensors; NULL: not cancellable */
  /* called on the calling thread after each tensor with the fraction of the source's
   * tensor bytes done (0 < fraction <= 1); NULL: none */
  void        (*progress) (double fraction, gpointer user_data);
  gpointer      progress_data;
} HzQuantizeParams;

void hz_quantize_params_init (HzQuantizeParams *p);  /* Q8_0, threads 0, not pure */

typedef struct {
  guint    n_tensors;
  guint    n_quantized;   /* tensors whose type changed */
  guint    n_fallback;    /* tensors that took a fallback type */
  uint64_t bytes_in;      /* tensor bytes of the source */
  uint64_t bytes_out;
  uint64_t n_elements;
} HzQuantizeStats;

/** Quantizes `in` (a GGUF file of any table type, or a Hugging Face safetensors folder:
 *  config.json + *.safetensors of a Llama/Qwen2/Qwen3 model) into a GGUF at `out`.
 *  Metadata: every key of the source except split keys, then general.quantization_version
 *  = 2 and general.file_type = ftype (appended last, as llama.cpp does). Tensors in
 *  llama.cpp's order, 32-byte aligned. `stats` may be NULL. Errors: HZ_GGUF_ERROR_*,
 *  HZ_SAFETENSORS_ERROR_* or HZ_GGUF_ERROR_INVALID naming the tensor at fault,
 *  G_IO_ERROR_CANCELLED when p->cancellable was cancelled (checked between tensors),
 *  HZ_GGUF_ERROR_IO when `out` is `in` itself (same device and inode, links included).
 *  The output appears atomically (written to a temporary file, then renamed): on any error
 *  nothing is left at `out`. */
gboolean hz_quantize_file (const char *in, const char *out, const HzQuantizeParams *p,
                           HzQuantizeStats *stats, GError **error);

/* ------------------------------------------------------------ ISQ at load */

/** A model converted in memory for the loader (model-context.c): its metadata as an HzGguf and its
 *  tensors by GGUF name, each either in the source's mapping (type unchanged) or quantized
 *  into one 64-byte aligned buffer owned by the HzIsqModel. Immutable once loaded. */
typedef struct _HzIsqModel HzIsqModel;

typedef struct {
  guint    n_tensors;
  guint    n_quantized;   /* tensors converted to another type */
  guint    n_fallback;    /* tensors whose rows did not divide into the mix's type */
  uint64_t bytes_in;      /* tensor bytes of the source (after safetensors → GGUF mapping) */
  uint64_t bytes_out;     /* tensor bytes as loaded */
  double   seconds;       /* wall time of hz_isq_convert */
} HzIsqStats;

/** Whether `type_name` is a file type ISQ can produce (hz_ftype_from_name, and every
 *  format of its mix has an encoder). *out (nullable) receives its info. Errors:
 *  HZ_GGUF_ERROR_INVALID naming the type. */
gboolean hz_isq_check_type (const char *type_name, const HzFtypeInfo **out, GError **error);

/** Opens a model for conversion at load (ISQ, `--isq TYPE`; Hugging Face folders): `in` is
 *  a GGUF file (any table type) or a Hugging Face folder (config.json + *.safetensors,
 *  sharded through model.safetensors.index.json when present; Llama/Mistral, Qwen2, Qwen3;
 *  names mapped to GGUF names, Llama q/k rows permuted as convert_hf_to_gguf.py does, 1-D
 *  tensors as F32; tokenizer from tokenizer.json or, when `vocab_gguf` is given, the
 *  tokenizer.* keys of that GGUF). Only the metadata is ready afterwards
 *  (hz_isq_model_gguf), so the caller can validate it before paying for the conversion.
 *  Errors: those of hz_quantize_file naming the file, tensor or key at fault. */
HzIsqModel       *hz_isq_open (const char *in, const char *vocab_gguf, GError **error);
/** Converts the tensors (call once): `type_name` is a file type (hz_isq_check_type; "Q4_K" =
 *  Q4_K_M) whose per-tensor choices are exactly hz_quantize_file()'s, so the tensors are
 *  byte-identical to the file `hanzo quantize` writes; NULL keeps every tensor's type (a
 *  folder then loads at its own dtype F32/F16/BF16). Tensors are converted one by one
 *  (n_threads threads each, 0 = number of cores; the bytes do not depend on it) straight
 *  into one 64-byte aligned buffer: peak memory is the converted tensors plus one tensor in
 *  float32 (plus, for a Llama folder, its permuted q/k copies, each freed once converted);
 *  unchanged tensors stay in the source mapping. Errors: hz_isq_check_type's,
 *  HZ_GGUF_ERROR_INVALID / _IO naming the tensor; after a failure only
 *  hz_isq_model_free() may be called. */
gboolean          hz_isq_convert (HzIsqModel *m, const char *type_name, guint n_threads,
                                  GError **error);
/** hz_isq_open + hz_isq_convert. Reentrant. */
HzIsqModel       *hz_isq_load (const char *in, const char *type_name, const char *vocab_gguf,
                               guint n_threads, GError **error);
void              hz_isq_model_free (HzIsqModel *m);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzIsqModel, hz_isq_model_free)
/** The metadata: the source GGUF itself, or the converted keys of a folder (no tensors). */
const HzGguf     *hz_isq_model_gguf (const HzIsqModel *m);
/** After hz_isq_convert: char* GGUF name → const HzGgufTensor* (data and n_bytes as
 *  loaded; offset is the position in the conversion buffer and meaningless otherwise).
 *  Owned by `m`; NULL before the conversion. */
GHashTable       *hz_isq_model_tensors (const HzIsqModel *m);
/** What hz_isq_convert did (zeros before it ran). */
const HzIsqStats *hz_isq_model_stats (const HzIsqModel *m);

G_END_DECLS
