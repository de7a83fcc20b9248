/* engine/tokenizer.h — tokenizers built from GGUF metadata (tokenizer.ggml.*).
 *
 *  - "llama": SentencePiece BPE (scores, byte fallback <0xXX>, "▁" for spaces, add a
 *    leading space), as llama.cpp's llm_tokenizer_spm.
 *  - "gpt2": byte-level BPE with merges and a pre-tokenizer chosen by tokenizer.ggml.pre
 *    ("llama-bpe"/"llama3", "qwen2", "gpt-2", "deepseek-coder", "default", ...), as
 *    llama.cpp's llm_tokenizer_bpe + unicode.cpp.
 * Results equal llama.cpp's llama_tokenize() (tests/engine/test-tokenizer.c runs the
 * golden vectors in ../shared/golden/tokenizer/).
 *
 * Thread safety: an HzTokenizer is immutable after creation; all functions may be called
 * concurrently. HzDetokenizer (streaming) is per-thread state.
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include "gguf.h"
#include "tokenizer-types.h"

G_BEGIN_DECLS

#define HZ_TOKENIZER_ERROR (hz_tokenizer_error_quark ())
GQuark hz_tokenizer_error_quark (void);
typedef enum {
  HZ_TOKENIZER_ERROR_UNSUPPORTED,  /* unknown tokenizer.ggml.model / pre */
  HZ_TOKENIZER_ERROR_INVALID,      /* inconsistent vocab metadata */
} HzTokenizerError;

/** Build from the GGUF's tokenizer.ggml.* keys. Works on vocab-only GGUF files. The
 *  tokenizer copies what it needs; `g` may be freed afterwards.
 *  Errors: HZ_TOKENIZER_ERROR_UNSUPPORTED for a tokenizer.ggml.model other than "llama"
 *  and "gpt2" (WordPiece "bert", "t5", "rwkv" are not implemented) or an unknown BPE
 *  tokenizer.ggml.pre; HZ_TOKENIZER_ERROR_INVALID for missing/mistyped keys, short score
 *  or type arrays, duplicate tokens, or add_bos/add_eos without the token id. */
HzTokenizer *hz_tokenizer_new_from_gguf (const HzGguf *g, GError **error);
void         hz_tokenizer_free (HzTokenizer *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzTokenizer, hz_tokenizer_free)

int32_t  hz_tokenizer_n_vocab (const HzTokenizer *t);
HzToken  hz_tokenizer_bos (const HzTokenizer *t);   /* -1 if none */
HzToken  hz_tokenizer_eos (const HzTokenizer *t);   /* -1 if none */
/* EOT: tokenizer.ggml.eot_token_id, else the first of <|eot_id|>, <|im_end|>, <|end|>,
 * <end_of_turn>, <|endoftext|>, ... present in the vocab (llama.cpp's list). */
HzToken  hz_tokenizer_eot (const HzTokenizer *t);   /* -1 if none */
gboolean hz_tokenizer_add_bos (const HzTokenizer *t);
gboolean hz_tokenizer_add_eos (const HzTokenizer *t);
/** End-of-generation: EOS, EOT, EOM or another token llama.cpp treats as EOG. */
gboolean hz_tokenizer_is_eog (const HzTokenizer *t, HzToken id);
HzTokenAttr hz_tokenizer_attr (const HzTokenizer *t, HzToken id);
/** Raw vocab text of a token (NUL-terminated, owned by the tokenizer), NULL if out of range. */
const char *hz_tokenizer_token_text (const HzTokenizer *t, HzToken id);
/** Id of an exact vocab string, or -1. */
HzToken  hz_tokenizer_find (const HzTokenizer *t, const char *text);

/** Tokenize `len` bytes of UTF-8 (len < 0: NUL-terminated). `add_special` adds BOS/EOS per
 *  the GGUF flags; `parse_special` recognises control/user-defined token texts in the
 *  input. Invalid UTF-8 is tokenized as bytes where the model can (byte fallback) and never
 *  crashes. Returns a newly allocated array; *n_out receives its length. */
HzToken *hz_tokenizer_encode (const HzTokenizer *t, const char *text, gssize len,
                              gboolean add_special, gboolean parse_special, gsize *n_out);

/** Tokenize `len` bytes of UTF-8 in which only the `n_markup` byte ranges `markup` (sorted,
 *  disjoint, inside the text) are a chat template's own text: a control (or unknown)
 *  token's text becomes that token only where it lies wholly inside one of them; a
 *  user-defined token's text becomes the token anywhere, unless that text occurs inside
 *  the markup (then, as a template marker, only there). The rest of the text is tokenized
 *  as with parse_special = FALSE. Text fragments are cut only at the special tokens
 *  found, never at a span's edge, so a prompt whose content holds no control text gets
 *  exactly the ids hz_tokenizer_encode(parse_special = TRUE) gives its concatenation.
 *  `add_special` as for hz_tokenizer_encode(). Returns a newly allocated array (g_free),
 *  its length in *n_out. Never fails. */
HzToken *hz_tokenizer_encode_spans (const HzTokenizer *t, const char *text, gsize len,
                                    const HzTextSpan *markup, gsize n_markup,
                                    gboolean add_special, gsize *n_out);

/** Bytes of one token's piece, as llama_token_to_piece(lstrip=0): SPM "▁" -> " ", byte
 *  tokens -> the byte, BPE byte-level decoding; control tokens give "" unless `special`.
 *  Writes at most `size` bytes and returns the full length (may exceed size). */
gsize hz_tokenizer_piece (const HzTokenizer *t, HzToken id, gboolean special,
                          char *buf, gsize size);
/** Whole detokenization (UTF-8 bytes, possibly invalid if the tokens are), as
 *  llama_detokenize(remove_special = FALSE, unparse_special = special): the pieces
 *  concatenated, minus one leading space of the first piece when the vocab adds a space
 *  prefix (SPM), followed by llama.cpp's clean-up of " ." " ," " ?" " !" " 's" ... for BPE
 *  vocabularies that ask for it (e.g. gpt-2, llama-bpe). Out-of-range ids give "".
 *  Free with g_free. */
char *hz_tokenizer_decode (const HzTokenizer *t, const HzToken *ids, gsize n,
                           gboolean special);

/** Streaming detokenizer: feed one token at a time, get back only complete UTF-8 text; a
 *  token that ends mid-character is held back until the character completes. Invalid
 *  sequences come out as U+FFFD. */
typedef struct _HzDetokenizer HzDetokenizer;
HzDetokenizer *hz_detokenizer_new (const HzTokenizer *t, gboolean special);
/** Returns the newly complete text (possibly ""), valid until the next call. (A piece
 *  holding a NUL byte, e.g. <0x00>, ends the returned C string early.) */
const char    *hz_detokenizer_push (HzDetokenizer *d, HzToken id);
/** hz_detokenizer_push; with `final` also flushes (the stream's last token): the text of
 *  both in one string, valid until the next call. */
const char    *hz_detokenizer_push_final (HzDetokenizer *d, HzToken id, gboolean final);
/** Flush held bytes (as U+FFFD if incomplete). */
const char    *hz_detokenizer_flush (HzDetokenizer *d);
void           hz_detokenizer_free (HzDetokenizer *d);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzDetokenizer, hz_detokenizer_free)

G_END_DECLS
