/* hanzo/engine-error.h — the engine's GError domain (HZ_ENGINE_ERROR) and its codes: the
 * ground floor of engine/, included by every engine file that reports an error, and by
 * hanzo/engine.h for users. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/** HZ_ENGINE_ERROR: the GError domain of the engine's own errors (a file the GGUF reader
 *  could not read reports HZ_GGUF_ERROR instead; cancellation G_IO_ERROR_CANCELLED).
 *  hz_engine_error_quark() is thread-safe. */
#define HZ_ENGINE_ERROR (hz_engine_error_quark ())
GQuark hz_engine_error_quark (void);

/** HzEngineError: the codes of HZ_ENGINE_ERROR. */
typedef enum {
  HZ_ENGINE_ERROR_FAILED,
  HZ_ENGINE_ERROR_UNSUPPORTED_ARCH,  /* general.architecture not supported */
  HZ_ENGINE_ERROR_BAD_MODEL,         /* missing/mis-shaped tensors, bad hyperparameters */
  HZ_ENGINE_ERROR_CONTEXT_FULL,      /* prompt (+ generation) longer than n_ctx */
  HZ_ENGINE_ERROR_INVALID_ARGUMENT,
  HZ_ENGINE_ERROR_BAD_ADAPTER,       /* malformed LoRA adapter file or config, missing
                                        tensor, non-finite value, unsupported option */
  HZ_ENGINE_ERROR_ADAPTER_MISMATCH,  /* the adapter does not fit the model (architecture,
                                        layer count, shapes) */
} HzEngineError;

G_END_DECLS
