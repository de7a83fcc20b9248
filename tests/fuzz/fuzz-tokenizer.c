/* tests/fuzz/fuzz-tokenizer.c — libFuzzer target for the tokenizer built from a GGUF's
 * tokenizer.* keys (engine/tokenizer.c: vocab, scores, token types, BPE merges, special
 * ids, pre-tokenizer choice): the input is a GGUF file (vocab-only seeds), read with
 * hz_gguf_open_from_data() and given to hz_tokenizer_new_from_gguf(); an accepted
 * tokenizer then encodes fixed texts (ASCII, accents, emoji, invalid UTF-8, special-token
 * texts) and the texts of its first tokens, with and without special parsing, and decodes
 * the ids back, whole and through the streaming detokenizer.
 *
 * Invariants: a refused vocabulary carries an error message; every id produced is inside
 * the vocabulary; special ids are -1 or inside it; a piece's length does not depend on the
 * buffer given for it; markup spans (hz_tokenizer_encode_spans) covering the whole text
 * give the ids of parse_special = TRUE, no spans those of parse_special = FALSE, and spans
 * cut anywhere give ids inside the vocabulary. Any violation aborts. */
#include <glib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gguf.h"
#include "tokenizer.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define CHECK(cond)                                                                     \
  do {                                                                                  \
    if (!(cond))                                                                        \
      {                                                                                 \
        g_printerr ("fuzz-tokenizer: invariant failed: %s (%s:%d)\n", #cond, __FILE__,  \
                    __LINE__);                                                          \
        abort ();                                                                       \
      }                                                                                 \
  } while (0)

static void
round_trip (const HzTokenizer *t, const char *text, gssize len)
{
  const int32_t n_vocab = hz_tokenizer_n_vocab (t);
  for (int mode = 0; mode < 2; mode++)
    {
      gsize n = 0;
      g_autofree HzToken *ids = hz_tokenizer_encode (t, text, len, mode, mode, &n);
      for (gsize i = 0; i < n; i++)
        CHECK (ids[i] >= 0 && ids[i] < n_vocab);
      g_autofree char *dec = hz_tokenizer_decode (t, ids, n, mode);
      CHECK (dec != NULL);
      g_autoptr (HzDetokenizer) d = hz_detokenizer_new (t, mode);
      for (gsize i = 0; i < n; i++)
        CHECK (hz_detokenizer_push (d, ids[i]) != NULL);
      CHECK (hz_detokenizer_flush (d) != NULL);

      /* the same through markup spans: all markup = parse_special, none = plain text */
      const gsize tl = len < 0 ? strlen (text) : (gsize) len;
      const HzTextSpan all = { 0, tl };
      gsize ns = 0;
      g_autofree HzToken *sp = hz_tokenizer_encode_spans (t, text, tl, mode ? &all : NULL,
                                                          mode ? 1 : 0, mode, &ns);
      CHECK (ns == n && (n == 0 || memcmp (sp, ids, n * sizeof *ids) == 0));
      /* a span over the middle third */
      const HzTextSpan mid = { tl / 3, tl / 3 };
      g_autofree HzToken *sm = hz_tokenizer_encode_spans (t, text, tl, &mid, 1, mode, &ns);
      for (gsize i = 0; i < ns; i++)
        CHECK (sm[i] >= 0 && sm[i] < n_vocab);
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  GError *error = NULL;
  g_autoptr (HzGguf) g = hz_gguf_open_from_data (data, size, &error);
  if (!g)
    {
      g_error_free (error);
      return 0;
    }
  g_autoptr (HzTokenizer) t = hz_tokenizer_new_from_gguf (g, &error);
  if (!t)
    {
      CHECK (error != NULL && error->message[0]);
      g_error_free (error);
      return 0;
    }
  const int32_t n_vocab = hz_tokenizer_n_vocab (t);
  CHECK (n_vocab > 0);
  const HzToken specials[] = { hz_tokenizer_bos (t), hz_tokenizer_eos (t), hz_tokenizer_eot (t) };
  for (gsize i = 0; i < G_N_ELEMENTS (specials); i++)
    CHECK (specials[i] == -1 || (specials[i] >= 0 && specials[i] < n_vocab));

  static const char *const texts[] = {
    "Hello world, it's 2026! 123 4567.", " leading  and\ttabs\n\nnew lines ",
    "caf\xc3\xa9 na\xc3\xafve \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x99\x82",
    "bad \xff\xfe utf-8 \xc3", "<s>[INST] x [/INST]</s><|im_start|>user\n<|im_end|>", "",
  };
  for (gsize i = 0; i < G_N_ELEMENTS (texts); i++)
    round_trip (t, texts[i], -1);
  for (HzToken id = 0; id < MIN (n_vocab, 64); id++)
    {
      const char *tt = hz_tokenizer_token_text (t, id);
      CHECK (tt != NULL);
      round_trip (t, tt, -1);
      char buf[8];
      const gsize full = hz_tokenizer_piece (t, id, TRUE, NULL, 0);
      CHECK (hz_tokenizer_piece (t, id, TRUE, buf, sizeof buf) == full);
    }
  CHECK (hz_tokenizer_token_text (t, n_vocab) == NULL);
  return 0;
}
