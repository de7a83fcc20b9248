/* engine/model-private.h — internal accessors of HzModel (defined in model-context.c) for
 * the other engine modules: its GGUF, tokenizer, bound weights (HzLlm, llm.h) and parsed
 * chat template. Internal to libhzengine (the public face is HzModel in hanzo/engine.h);
 * model-context.c also implements the public hz_model_chat_template() on top of
 * hz_chat_template_detect().
 *
 * Thread safety: every accessor reads immutable state of a loaded model, except
 * hz_model_first_builtin_render (atomic).
 */
#pragma once

#include <glib.h>
#include "llm.h"

G_BEGIN_DECLS

typedef struct _HzModel HzModel;
struct _HzTokenizer;
/** The model's GGUF (metadata such as tokenizer.chat_template). */
const HzGguf *hz_model_get_gguf (const HzModel *m);
/** The tokenizer (never NULL for a loaded model). */
const struct _HzTokenizer *hz_model_get_tokenizer (const HzModel *m);
/** The bound weights, or NULL for a vocab-only model. */
const HzLlm *hz_model_get_llm (const HzModel *m);
struct _HzJinjaTemplate;
/** The model's tokenizer.chat_template, parsed at load (immutable; shared by all threads),
 *  or NULL when the GGUF has none (or names a built-in one) or it failed to parse: then
 *  *parse_error is that error (owned by the model), else NULL. */
const struct _HzJinjaTemplate *hz_model_get_chat_jinja (const HzModel *m,
                                                        const GError **parse_error);
/** TRUE exactly once per model (atomic): the first time the built-in renderer stands in
 *  for a missing template, so that this is said once. */
gboolean hz_model_first_builtin_render (const HzModel *m);

G_END_DECLS
