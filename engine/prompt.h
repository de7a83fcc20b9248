/* engine/prompt.h — internal side of the prompt pieces (prompt.c; public API in
 * hanzo/engine.h, "prompts"). */
#pragma once

#include "hanzo/engine.h"
#include "tokenizer.h"

G_BEGIN_DECLS

/** hz_model_tokenize_prompt() on a tokenizer: the markup pieces of `p` are the spans of
 *  hz_tokenizer_encode_spans(), and a doubled BOS at the start becomes one. */
HzToken *hz_prompt_tokenize (const HzTokenizer *t, const HzPrompt *p, gboolean add_special,
                             gsize *n_tokens);

G_END_DECLS
