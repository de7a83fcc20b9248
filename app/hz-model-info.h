/* hz-model-info.h — what the model manager shows about a GGUF file, read from its header
 * only (no weights are loaded), and the right-sizing arithmetic of the seed's cost law.
 *
 * Cost law: decoding one token reads every active weight once, and does some work whose
 * time does not depend on how many bytes the weights take (the thread pool's
 * synchronisation for each operation, attention, sampling, detokenizing, handing the token
 * to the window). So on a machine whose memory delivers B bytes/s a token takes
 *
 *     t = t0 + q * N_active / B      seconds, and the decode rate is R = 1 / t tokens/s,
 *
 * with q the bytes per weight of the storage format and N_active the weights read per
 * token (all of them for a dense model; for a mixture of experts the shared tensors plus
 * n_expert_used/n_expert of the expert tensors). q * N_active is computed exactly, tensor
 * by tensor, for the file as it is and for every quantization it could be stored in: the
 * per-tensor types come from llama-quantize's mix rules (HzQuantChooser, engine/quantize.h)
 * and the bytes of each row from the quant format table (hz_quant_row_size,
 * engine/quant/formats.def), so e.g. Q4_K_M counts its Q6_K output and attn_v tensors.
 * B is measured by the engine (hz_measure_read_bandwidth, engine/membw.h; the model
 * manager keeps it in GSettings). The embedding table is read one row per token (it does
 * not count) unless the output reuses it (tied). KV-cache reads are ignored (small next to
 * the weights at chat lengths).
 *
 * t0 is not modelled but measured: a reply the app streamed at m tokens/s with a model
 * reading b bytes per token gives t0 = 1/m - b/B (hz_speed_overhead_from_measurement).
 * It holds for the files of the same shape (hz_model_info_same_shape: the model in other
 * quantizations), whose layers, threads and vocabulary cost the same; for another shape it
 * is unknown (it depends on the layer count, the thread pool's synchronisation and what
 * else runs on the machine: stories260K decodes in 0.12 ms, stories-distill in 5 ms, on
 * the same loaded 2-core machine). For small models t0 dominates: stories-distill Q8_0
 * (6.8 MB per token) streamed at 146-240 tokens/s in the app on the 2-core development
 * machine while B / b was 7,450-8,431, so the prediction from the bandwidth alone was 35-50
 * times too high. Until a reply of the same shape has been measured t0 is unknown (0) and
 * R = B / b is an upper bound, which the manager says. tools/bench-predict.c prints both
 * predictions next to measured rates.
 *
 * Units: bytes, bytes/s, seconds, tokens/s. Thread safety: the functions are reentrant; an
 * HzModelInfo is immutable after hz_model_info_read() and may be shared between threads.
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define HZ_MODEL_INFO_ERROR (hz_model_info_error_quark ())
GQuark hz_model_info_error_quark (void);

/** Errors of hz_model_info_read(), with a message meant for the user (translated). */
typedef enum {
  HZ_MODEL_INFO_ERROR_NOT_GGUF,     /* not a GGUF file (other magic, unreadable, too short) */
  HZ_MODEL_INFO_ERROR_DAMAGED,      /* GGUF header present but malformed or truncated */
  HZ_MODEL_INFO_ERROR_NOT_A_MODEL,  /* a GGUF without general.architecture or tensors
                                       (a vocabulary or LoRA file) */
} HzModelInfoError;

typedef struct {
  char    *path;
  char    *name;              /* general.name, else the file name without .gguf */
  char    *arch;              /* general.architecture */
  gboolean arch_supported;    /* the engine can run it (hz_arch_from_name, and dense) */
  char    *quant;             /* dominant matrix format by bytes ("Q4_0", "F32", ...) */
  char    *file_type;         /* general.file_type as llama-quantize names it, or NULL */
  guint64  file_size;         /* bytes on disk */
  guint64  weight_bytes;      /* bytes of all tensors */
  guint64  active_bytes;      /* q * N_active: bytes read per decoded token, as stored */
  guint64  n_params;          /* elements of all tensors */
  guint64  n_params_active;   /* elements read per token (see the header comment) */
  guint32  n_ctx_train;       /* <arch>.context_length, 0 when absent */
  guint32  n_layer;
  guint32  n_expert, n_expert_used;
  /*< private >*/
  gint32     n_head, n_head_kv;
  GPtrArray *tensors;         /* TensorShape*: what the predictions need */
  GPtrArray *names;           /* char*: tensor names in llama.cpp's order */
} HzModelInfo;

/** Read `path`'s header (mmap; no tensor data is touched beyond the header). Errors:
 *  HZ_MODEL_INFO_ERROR_* with a translated message naming the file; an unsupported
 *  architecture is NOT an error (arch_supported is FALSE). */
HzModelInfo *hz_model_info_read (const char *path, GError **error);
void         hz_model_info_free (HzModelInfo *info);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzModelInfo, hz_model_info_free)

/** Human explanation of why the engine cannot run it, or NULL when it can (g_free). */
char *hz_model_info_unsupported_reason (const HzModelInfo *info);

/** The decode-rate model of the header comment: t = overhead_s + bytes / bandwidth. */
typedef struct {
  double bandwidth;    /* B, bytes/s; 0 = not measured: no prediction */
  double overhead_s;   /* t0, seconds per token besides reading the weights; 0 = not
                          measured yet (the prediction is then an upper bound) */
} HzSpeedModel;

/** Predicted decode rate in tokens/s of a model reading `active_bytes` per token:
 *  1 / (overhead_s + active_bytes / bandwidth); 0 when the bandwidth or the bytes are 0. */
double hz_speed_predict (const HzSpeedModel *speed, guint64 active_bytes);

/** The per-token overhead t0 (seconds) that a measured decode rate implies for a model
 *  reading `active_bytes` per token at `bandwidth` bytes/s: 1/measured - active_bytes /
 *  bandwidth, at least 0 (a rate above the bandwidth bound, e.g. a model that stays in the
 *  CPU caches, gives 0); 0 when `measured_tokens_per_s` or `bandwidth` is not positive. */
double hz_speed_overhead_from_measurement (guint64 active_bytes, double bandwidth,
                                           double measured_tokens_per_s);

/** One way to store the model. */
typedef struct {
  const char *name;           /* "Q4_K_M"; "" for the file as it is */
  guint64     weight_bytes;   /* memory the weights take */
  guint64     active_bytes;   /* bytes read per token */
  double      tokens_per_s;   /* predicted decode rate, hz_speed_predict (0: unknown) */
  gboolean    fits;           /* weight_bytes plus HZ_MEMORY_HEADROOM fit in the memory */
  gboolean    recommended;
  gboolean    is_current;     /* the file as imported */
} HzQuantOption;

/** Whether `a` and `b` are the same model in possibly different storage formats: the same
 *  architecture, layer and head counts and number of weights (hence the same per-token
 *  overhead t0, see the header comment). */
gboolean hz_model_info_same_shape (const HzModelInfo *a, const HzModelInfo *b);

/** Extra memory asked for besides the weights (KV cache, scratch, the app): 10 % + 512 MiB. */
guint64 hz_memory_needed (guint64 weight_bytes);

/** The storage options of `info`: first the file as it is, then each of Q8_0, Q6_K,
 *  Q5_K_M, Q4_K_M, Q4_0, IQ4_XS that the quant table can produce and that is smaller than
 *  the file, with exact sizes (see the header comment). `speed` predicts each option's
 *  decode rate (bandwidth 0: no prediction), `memory` the bytes available. Recommends the
 *  largest (best quality) option that fits and reaches `target_tokens_per_s`; when none
 *  reaches it, the fastest option that fits; none when nothing fits. Returns a GArray of
 *  HzQuantOption. */
GArray *hz_model_info_quant_options (const HzModelInfo *info, const HzSpeedModel *speed,
                                     guint64 memory, double target_tokens_per_s);

/** Bytes of memory available to a new model now: MemAvailable of /proc/meminfo, else free
 *  physical pages (sysconf). 0 when unknown. The environment variable HZ_MEMORY_AVAILABLE
 *  (bytes; set before any thread starts) replaces the measurement, to try the "too large"
 *  path (tests, debugging). */
guint64 hz_memory_available (void);
/** Physical memory in bytes (sysconf), 0 when unknown. */
guint64 hz_memory_total (void);

G_END_DECLS
