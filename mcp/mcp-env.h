/* mcp-env.h — what the tools of `hanzo mcp` use, opened once and kept: the model and its
 * context (engine), the redactor, the store (read-only). Each is made on first use, so that
 * a session that only redacts never opens the store, and a store the app creates after the
 * server started is found. One thread at a time (the server answers in order). */
#pragma once

#include "hanzo/engine.h"
#include "hanzo/redact.h"
#include "hanzo-store.h"

G_BEGIN_DECLS

/** Progress of the running tool call (MCP's notifications/progress): `done` grows from
 *  call to call, `total` is the most there can be (0: unknown). */
typedef void (*HzMcpProgressFunc) (double done, double total, gpointer user_data);

typedef struct {
  /* set by the server */
  HzMcpProgressFunc progress;   /* during a tools/call whose client asked for progress */
  gpointer    progress_data;
  GCancellable *cancellable;    /* during a tools/call: cancelled by the client's
                                 * notifications/cancelled (nullable; another thread
                                 * cancels it) */
  char       *model_path;   /* NULL: no chat tool */
  guint       n_threads;    /* 0: the engine's default */
  char       *store_path;   /* the store of search_conversations (hz_store_default_path()) */
  /* made on first use */
  HzModel    *model;
  HzContext  *context;
  HzRedactor *redactor;
  HzStore    *store;
} HzMcpEnv;

/** Load the model (once). Errors: hz_model_load's. */
gboolean    hz_mcp_env_load_model (HzMcpEnv *env, GError **error);
/** The model's context (made once, n_ctx: the engine's default), NULL with an error. */
HzContext  *hz_mcp_env_context (HzMcpEnv *env, GError **error);
/** The redactor with its built-in data and taggers (made once). */
HzRedactor *hz_mcp_env_redactor (HzMcpEnv *env, GError **error);
/** The store opened read-only (hz_store_open_readonly(); retried on every call until it
 *  opens). Errors: hz_store_open_readonly's. */
HzStore    *hz_mcp_env_store (HzMcpEnv *env, GError **error);
/** Close and free everything (the struct itself is the caller's). */
void        hz_mcp_env_clear (HzMcpEnv *env);

G_END_DECLS
