/* engine/json-constrain.h — the JSON constraint's machinery (private to the engine and its
 * tests; the public face is hanzo/json-constrain.h).
 *
 *   HzJsonState   a byte-level pushdown automaton over RFC 8259 JSON text shaped by an
 *                 HzJsonSchema: a stack of open arrays and objects (at most
 *                 HZ_JSON_MAX_DEPTH) and the lexical state of the value or member name
 *                 being read (strings with escapes, \u and surrogate pairs, UTF-8 checked
 *                 byte by byte; numbers; literals; whitespace runs of at most 24 bytes).
 *                 It also keeps the fewest bytes that close the text from where it is.
 *   HzJsonVocab   a vocabulary's token byte strings, precomputed once per model: a byte
 *                 trie of every token, and for the state "inside a free string" (the
 *                 most common one) a bitmap per UTF-8 state of the tokens made only of
 *                 string bytes plus a trie of the other tokens' tails from their first
 *                 quote, backslash or control byte, so that the mask walks only the
 *                 tokens that can leave the string.
 *
 * hz_json_mask() gives, for a state, the tokens whose bytes continue a valid text (and,
 * with a budget, leave it closable in the tokens left, each closing byte counted as one
 * token), plus the end-of-generation tokens once the value is complete. It equals the
 * brute-force answer (every token fed to a copy of the state), which tests/engine/
 * test-json-constrain.c checks on real vocabularies.
 *
 * Thread safety: an HzJsonVocab is immutable once made (share it); an HzJsonState is
 * used by one thread at a time. */
#pragma once

#include "hanzo/json-constrain.h"
#include "json-schema.h"
#include "tokenizer.h"

G_BEGIN_DECLS

typedef struct _HzJsonVocab HzJsonVocab;
typedef struct _HzJsonState HzJsonState;

/** From `n` token byte strings (`pieces[i]`, `lens[i]` bytes; an empty one never
 *  matches) and the end-of-generation tokens (`eog[i]` TRUE; may be NULL). Never fails. */
HzJsonVocab *hz_json_vocab_new (const char *const *pieces, const gsize *lens, guint n,
                                const gboolean *eog);
/** From a tokenizer: each token's piece as the streaming detokenizer writes it
 *  (hz_tokenizer_piece(special = FALSE): control tokens are empty) and its EOG flag. */
HzJsonVocab *hz_json_vocab_new_from_tokenizer (const HzTokenizer *t);
void         hz_json_vocab_free (HzJsonVocab *v);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzJsonVocab, hz_json_vocab_free)
guint        hz_json_vocab_n_tokens (const HzJsonVocab *v);
/** Some end-of-generation token, or -1 when the vocabulary has none. */
HzToken      hz_json_vocab_any_eog (const HzJsonVocab *v);
/** Bytes of the mask: 64-bit words for n_tokens bits. */
gsize        hz_json_vocab_mask_words (const HzJsonVocab *v);

/** The state before the first byte of a text of `schema` (referenced). */
HzJsonState *hz_json_state_new (HzJsonSchema *schema);
HzJsonState *hz_json_state_copy (const HzJsonState *s);
void         hz_json_state_free (HzJsonState *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzJsonState, hz_json_state_free)

/** Feed `n` bytes. TRUE when they continue a valid text (the state moves on); FALSE
 *  otherwise, and the state is unchanged. */
gboolean hz_json_state_feed (HzJsonState *s, const char *bytes, gsize n);
/** Feed token `t`'s bytes (an EOG token: TRUE only when the value is complete). */
gboolean hz_json_state_accept (HzJsonState *s, const HzJsonVocab *v, HzToken t);
/** The value is complete: the text may end here (end-of-generation is allowed). */
gboolean hz_json_state_complete (const HzJsonState *s);
/** The fewest bytes that make the text complete from here (0 when it is). */
guint    hz_json_state_close_bytes (const HzJsonState *s);
/** What the state is reading, for benchmarks and messages: "value" (before a value),
 *  "structure" (between the members or elements of a container), "string", "number",
 *  "literal" (true/false/null, an enum value or a schema's member name) or "end". */
const char *hz_json_state_where (const HzJsonState *s);

/**
 * hz_json_mask:
 * @v: the vocabulary
 * @s: the state
 * @budget: tokens that may still be generated, this one included (>= 1), or G_MAXUINT
 * @mask: (out): hz_json_vocab_mask_words(v) words; bit t of word t / 64 set when token t
 *   is allowed
 *
 * Token t is allowed when its bytes continue a valid text from @s and the state after it
 * closes in at most @budget - 1 bytes, or when t is an end-of-generation token and @s is
 * complete. Cost: a few microseconds for most states (the walk visits only the trie
 * nodes whose bytes stay valid); inside a free string a bitmap copy plus the tails of the
 * tokens holding a quote, backslash or control byte.
 * Returns: the number of tokens allowed.
 */
guint hz_json_mask (const HzJsonVocab *v, const HzJsonState *s, guint budget, guint64 *mask);

G_END_DECLS
