/* engine/hf-tokenizer.h — a Hugging Face tokenizer (tokenizer.json, tokenizer_config.json,
 * chat_template.jinja) as the tokenizer.ggml.* keys of a GGUF.
 *
 * Only what a GGUF can carry is converted; the rest is refused with an error that names
 * the file and the part (llama.cpp reads a GGUF the same way, so a GGUF we write
 * tokenizes identically there, up to llama.cpp's own approximations):
 *  - model: byte-level BPE (type "BPE", no byte_fallback, no subword prefix/suffix;
 *    ignore_merges is kept, through the pre-tokenizer name);
 *  - normalizer: none, or NFC (Qwen2); NFKC, NFD, Lowercase, Replace, Prepend and the
 *    others are refused;
 *  - pre_tokenizer: a Sequence of Split (behavior Isolated, not inverted), Digits,
 *    Punctuation (Isolated or Contiguous) and a final ByteLevel (no add_prefix_space;
 *    use_regex adds GPT-2's regex). The resulting list of regexes, with the normalizer and
 *    ignore_merges, must be the split of a tokenizer.ggml.pre name (tokenizer-pretypes.c):
 *    its name is written. Metaspace (SentencePiece-style), Whitespace and the others are
 *    refused;
 *  - post_processor: the special tokens it puts around the text (TemplateProcessing,
 *    RobertaProcessing, BertProcessing) become add_bos/add_eos, unless
 *    tokenizer_config.json's add_bos_token / add_eos_token say otherwise;
 *  - tokenizer_config.json: bos/eos/unk/pad token texts, clean_up_tokenization_spaces
 *    (chooses between names with the same split), chat_template (a string, or a list of
 *    named templates: "default" and tokenizer.chat_template.NAME); else the folder's
 *    chat_template.jinja.
 * Thread safety: plain functions of their arguments.
 */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdint.h>
#include "gguf.h"

G_BEGIN_DECLS

/** Convert DIR/tokenizer.json (required) and DIR/tokenizer_config.json,
 *  DIR/chat_template.jinja (optional) into tokenizer.ggml.* keys of `w`: model "gpt2",
 *  pre, tokens, token_type, merges, special ids, add_bos/add_eos_token, chat template.
 *  `vocab_size` (config.json's, 0 if unknown) pads the vocabulary with unused tokens;
 *  `config` (config.json, may be NULL) gives fallback bos/eos/pad ids.
 *  Errors: HZ_GGUF_ERROR_INVALID naming the file and what cannot be represented, or the
 *  JSON parser's error. */
gboolean    hz_hf_tokenizer_import (HzGgufWriter *w, const char *dir, int64_t vocab_size,
                                    JsonObject *config, GError **error);

/** The tokenizer.ggml.pre name for a parsed tokenizer.json (`tokenizer`) and its
 *  tokenizer_config.json (`tokenizer_config`, may be NULL): the first table name whose
 *  split, normalizer and ignore_merges equal the file's, preferring one whose
 *  clean_spaces equals clean_up_tokenization_spaces when the config says. NULL with
 *  `error` (HZ_GGUF_ERROR_INVALID; messages start with `path`) when there is none or a
 *  part cannot be represented. The returned string is static. */
const char *hz_hf_tokenizer_pre_name (JsonObject *tokenizer, JsonObject *tokenizer_config,
                                      const char *path, GError **error);

G_END_DECLS
