/* engine/tokenizer-types.h — the tokenizer's ground floor: the token id, the tokenizer's
 * opaque type, token attributes and text spans, shared by the public tokenizer.h and the
 * internals (tokenizer-private.h) so that neither includes the other. No code.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

typedef int32_t HzToken;
typedef struct _HzTokenizer HzTokenizer;

/** Token attributes (llama.cpp's llama_token_attr subset). */
typedef enum {
  HZ_TOKEN_NORMAL = 1, HZ_TOKEN_UNKNOWN = 2, HZ_TOKEN_CONTROL = 4,
  HZ_TOKEN_USER_DEFINED = 8, HZ_TOKEN_BYTE = 16, HZ_TOKEN_UNUSED = 32,
} HzTokenAttr;

/** A byte range [off, off + len) of a text. */
typedef struct {
  gsize off, len;
} HzTextSpan;

G_END_DECLS
