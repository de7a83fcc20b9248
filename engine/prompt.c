/* engine/prompt.c — prompts as markup and content pieces and their tokenization
 * (hanzo/engine.h, "prompts"; fitting a conversation into a context is chat-fit.c).
 *
 * Issue 20: the whole rendered conversation used to be tokenized with parse_special = TRUE,
 * so "<|im_end|>" typed by a user became a control token and could forge turns. An
 * HzPrompt keeps what its renderer said is markup; hz_model_tokenize_prompt() hands the
 * markup's byte ranges to the tokenizer (hz_tokenizer_encode_spans), which recognises
 * control tokens only there. The text is still tokenized in one pass, so fragment
 * boundaries (SentencePiece's space prefix, BPE words) are those of the plain text.
 */
#include "prompt.h"

#include <string.h>

struct _HzPrompt {
  GString *text;
  GArray  *pieces;   /* Piece, in order, adjacent ones of different kinds */
};

typedef struct {
  gsize    off, len;
  gboolean markup;
} Piece;

HzPrompt *
hz_prompt_new (void)
{
  HzPrompt *p = g_new (HzPrompt, 1);
  p->text = g_string_new (NULL);
  p->pieces = g_array_new (FALSE, FALSE, sizeof (Piece));
  return p;
}

void
hz_prompt_free (HzPrompt *p)
{
  if (p == NULL)
    return;
  g_string_free (p->text, TRUE);
  g_array_unref (p->pieces);
  g_free (p);
}

void
hz_prompt_append (HzPrompt *p, const char *text, gssize len, gboolean markup)
{
  g_return_if_fail (p != NULL);
  if (text == NULL)
    return;
  if (len < 0)
    len = (gssize) strlen (text);
  if (len == 0)
    return;
  markup = !!markup;
  Piece *last = p->pieces->len ? &g_array_index (p->pieces, Piece, p->pieces->len - 1) : NULL;
  if (last != NULL && last->markup == markup)
    last->len += (gsize) len;
  else
    {
      Piece piece = { p->text->len, (gsize) len, markup };
      g_array_append_val (p->pieces, piece);
    }
  g_string_append_len (p->text, text, len);
}

void
hz_prompt_append_prompt (HzPrompt *p, const HzPrompt *other)
{
  g_return_if_fail (p != NULL && other != NULL && p != other);
  for (guint i = 0; i < other->pieces->len; i++)
    {
      const Piece *q = &g_array_index (other->pieces, Piece, i);
      hz_prompt_append (p, other->text->str + q->off, (gssize) q->len, q->markup);
    }
}

const char *
hz_prompt_text (const HzPrompt *p, gsize *len)
{
  g_return_val_if_fail (p != NULL, NULL);
  if (len)
    *len = p->text->len;
  return p->text->str;
}

guint
hz_prompt_n_pieces (const HzPrompt *p)
{
  g_return_val_if_fail (p != NULL, 0);
  return p->pieces->len;
}

HzPromptPiece
hz_prompt_get_piece (const HzPrompt *p, guint i)
{
  HzPromptPiece out = { "", 0, FALSE };
  g_return_val_if_fail (p != NULL && i < p->pieces->len, out);
  const Piece *q = &g_array_index (p->pieces, Piece, i);
  out.text = p->text->str + q->off;
  out.len = q->len;
  out.markup = q->markup;
  return out;
}

HzPrompt *
hz_prompt_tail (const HzPrompt *p, gsize offset)
{
  g_return_val_if_fail (p != NULL, NULL);
  HzPrompt *out = hz_prompt_new ();
  for (guint i = 0; i < p->pieces->len; i++)
    {
      const Piece *q = &g_array_index (p->pieces, Piece, i);
      const gsize end = q->off + q->len;
      if (end <= offset)
        continue;
      const gsize from = MAX (q->off, offset);
      hz_prompt_append (out, p->text->str + from, (gssize) (end - from), q->markup);
    }
  return out;
}

HzToken *
hz_prompt_tokenize (const HzTokenizer *t, const HzPrompt *p, gboolean add_special,
                    gsize *n_tokens)
{
  g_return_val_if_fail (t != NULL && p != NULL && n_tokens != NULL, NULL);
  g_autoptr (GArray) spans = g_array_new (FALSE, FALSE, sizeof (HzTextSpan));
  for (guint i = 0; i < p->pieces->len; i++)
    {
      const Piece *q = &g_array_index (p->pieces, Piece, i);
      if (q->markup)
        {
          HzTextSpan s = { q->off, q->len };
          g_array_append_val (spans, s);
        }
    }
  HzToken *tokens = hz_tokenizer_encode_spans (t, p->text->str, p->text->len,
                                               (const HzTextSpan *) (void *) spans->data,
                                               spans->len, add_special, n_tokens);
  /* A template that spells out the BOS text (a Jinja "{{ bos_token }}") gets it twice,
   * added and parsed: keep one, as llama.cpp warns and servers do. */
  const HzToken bos = hz_tokenizer_bos (t);
  if (add_special && *n_tokens >= 2 && bos >= 0 && tokens[0] == bos && tokens[1] == bos)
    {
      memmove (tokens, tokens + 1, (*n_tokens - 1) * sizeof (HzToken));
      (*n_tokens)--;
    }
  return tokens;
}
