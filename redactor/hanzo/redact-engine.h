/* hanzo/redact-engine.h — the model-based pass of the redactor run by the local engine.
 * Part of libhzredactengine (redactor/hz-redact-engine.c), which links libhzredact and
 * libhzengine (libhzredact itself stays GLib-only).
 *
 * hz_redactor_set_engine_model() installs, through hz_redactor_set_model(), a model function
 * that renders the redactor's prompt with the model's chat template (plain text for base
 * models without one), and generates greedily. The redactor verifies every span the model
 * returns against the text (see hz_redactor_set_model()), so a small or confused model can
 * only add spans that are really in the text. */
#pragma once

#include "hanzo/engine.h"
#include "hanzo/redact.h"

G_BEGIN_DECLS

/** Use `model` for the model-based pass of `self` (analyses with HZ_REDACT_MODEL). The
 *  redactor keeps its own KV-cache context (`n_ctx` tokens, 0: min(model context, 4096));
 *  `model` must outlive the redactor or the next call. Each analysis generates at most
 *  `n_predict` tokens (<= 0: 256) greedily, stopping at end of generation or at three
 *  newlines in a row. When the prompt does not fit the context the model is not asked for that
 *  text and the rule-based result stands. Calls are serialised by a mutex, so analyses may
 *  run on several threads.
 *  Returns FALSE with `error` set (HZ_ENGINE_ERROR_*) when no context can be created. */
gboolean hz_redactor_set_engine_model (HzRedactor *self, HzModel *model, guint n_ctx,
                                       gint n_predict, GError **error);

/** The raw answer of `model` for `prompt` rendered as one user message with the model's chat
 *  template and generated greedily with at most `n_predict` tokens: what the model-based
 *  pass parses (for logging and tests). NULL with `error` set when the prompt does not fit
 *  (HZ_ENGINE_ERROR_CONTEXT_FULL) or evaluation fails. Not thread-safe for one `ctx`. */
char *hz_redact_engine_ask (HzContext *ctx, const char *prompt, gint n_predict, GError **error);

G_END_DECLS
