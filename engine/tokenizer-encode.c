/* engine/tokenizer-encode.c — text -> token ids, as llama.cpp's llama_vocab::impl::tokenize
 * (src/llama-vocab.cpp, c392e509):
 *  1. special-token partitioning (tokenizer_st_partition): the text is cut around every
 *     occurrence of a special token's text, longest tokens first; user-defined tokens are
 *     always matched, control/unknown ones only when parse_special;
 *  2. each remaining text fragment goes through the model's algorithm:
 *     - SPM (llm_tokenizer_spm): spaces -> U+2581, a leading U+2581 when the fragment
 *       starts the text or follows a special token (add_space_prefix), then greedy merging
 *       of adjacent symbols into the vocab token with the highest score (ties: leftmost);
 *       symbols that are not tokens become byte tokens <0xXX>;
 *     - BPE (llm_tokenizer_bpe): pre-tokenizer words, GPT-2 byte-to-unicode encoding,
 *       merging the adjacent pair with the lowest merge rank (ties: leftmost);
 *     - WPM (WordPiece, BERT): Hugging Face's BertNormalizer and BertPreTokenizer, then the
 *       longest vocabulary match from the left (llama.cpp stores word-initial pieces with a
 *       U+2581 prefix and continuations bare, for HF's "##" prefix).
 * Both merge loops use a binary heap with lazy invalidation, O(n log n) per word.
 */
#include <string.h>
#include "tokenizer.h"
#include "tokenizer-private.h"
#include "unicode.h"

/* ---- special-token partitioning ---- */

typedef struct {
  int32_t token;   /* >= 0: a special token; -1: raw text [off, off + len) */
  gsize   off, len;
} Fragment;

static inline gboolean
c_isspace (char c)
{
  return c == ' ' || (c >= '\t' && c <= '\r');
}

/* Where control tokens may be recognised (hz_tokenizer_encode_spans): NULL spans = the
 * whole text (parse_special = TRUE) or nowhere (FALSE), as llama.cpp decides it per call. */
typedef struct {
  const char       *text;
  const HzTextSpan *markup;    /* sorted, disjoint; NULL: no restriction by place */
  gsize             n_markup;
} Markup;

/* TRUE when [off, off + len) lies wholly inside one markup span. */
static gboolean
markup_covers (const Markup *mk, gsize off, gsize len)
{
  gsize lo = 0, hi = mk->n_markup;
  while (lo < hi)   /* first span ending after off */
    {
      gsize mid = lo + (hi - lo) / 2;
      if (mk->markup[mid].off + mk->markup[mid].len <= off)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo < mk->n_markup && mk->markup[lo].off <= off &&
         off + len <= mk->markup[lo].off + mk->markup[lo].len;
}

/* TRUE when the text `tok` occurs inside a markup span. */
static gboolean
markup_contains (const Markup *mk, const char *tok, gsize tlen)
{
  for (gsize i = 0; i < mk->n_markup; i++)
    if (mk->markup[i].len >= tlen &&
        memmem (mk->text + mk->markup[i].off, mk->markup[i].len, tok, tlen) != NULL)
      return TRUE;
  return FALSE;
}

/* Whether an occurrence of special token `id` at [off, off + tlen) may become that token.
 * With markup spans: a control (or unknown) token only inside the markup; a user-defined
 * token anywhere, unless the markup itself uses its text (then it is the template's
 * marker, e.g. a turn delimiter a vocabulary lists as user-defined, and only the markup's
 * occurrences count). */
static gboolean
markup_allows (const HzTokenizer *t, const Markup *mk, int32_t id, gsize off, gsize tlen)
{
  if (mk == NULL || mk->markup == NULL || markup_covers (mk, off, tlen))
    return TRUE;
  if (t->attrs[id] & (HZ_TOKEN_CONTROL | HZ_TOKEN_UNKNOWN))
    return FALSE;
  return !markup_contains (mk, t->texts[id], tlen);
}

/* Split the raw fragments of `in` around the occurrences of token `id` that `mk` allows,
 * into `out`. */
static void
partition_one (const HzTokenizer *t, int32_t id, const char *text, const Markup *mk,
               GArray *in, GArray *out)
{
  const char *tok = t->texts[id];
  gsize tlen = t->lens[id];
  guint32 attr = t->attrs[id];

  for (guint i = 0; i < in->len; i++)
    {
      Fragment f = g_array_index (in, Fragment, i);
      gsize off = f.off, len = f.len;
      gsize from = off;   /* where the next search starts (after refused occurrences) */

      if (f.token >= 0)
        {
          g_array_append_val (out, f);
          continue;
        }
      for (;;)
        {
          const gsize end = off + len;
          const char *m = end - from >= tlen ? memmem (text + from, end - from, tok, tlen) : NULL;
          gsize moff, left_len, r_off, r_len;
          Fragment special = { id, 0, 0 };

          if (m == NULL)
            {
              if (len > 0)
                {
                  Fragment rest = { -1, off, len };
                  g_array_append_val (out, rest);
                }
              break;
            }
          moff = (gsize) (m - text);
          if (!markup_allows (t, mk, id, moff, tlen))
            {
              from = moff + 1;   /* stays text: look further on */
              continue;
            }
          left_len = moff - off;
          if (attr & HZ_TOKEN_ATTR_LSTRIP)
            while (left_len > 0 && c_isspace (text[off + left_len - 1]))
              left_len--;
          if (left_len > 0)
            {
              Fragment left = { -1, off, left_len };
              g_array_append_val (out, left);
            }
          g_array_append_val (out, special);
          r_off = moff + tlen;
          r_len = off + len - r_off;
          if (attr & HZ_TOKEN_ATTR_RSTRIP)
            while (r_len > 0 && c_isspace (text[r_off]))
              r_off++, r_len--;
          off = from = r_off;
          len = r_len;
        }
    }
}

/* Fragments of `text`: special tokens (user-defined ones always, control/unknown ones
 * when parse_special; with markup spans in `mk`, as markup_allows() says) and raw text. */
static GArray *
partition (const HzTokenizer *t, const char *text, gsize len, gboolean parse_special,
           const Markup *mk)
{
  GArray *cur = g_array_new (FALSE, FALSE, sizeof (Fragment));
  GArray *next = g_array_new (FALSE, FALSE, sizeof (Fragment));
  Fragment all = { -1, 0, len };

  if (len > 0)
    g_array_append_val (cur, all);
  for (gsize k = 0; k < t->n_special && cur->len > 0; k++)
    {
      int32_t id = t->special[k];
      GArray *tmp;

      if (!parse_special && (t->attrs[id] & (HZ_TOKEN_CONTROL | HZ_TOKEN_UNKNOWN)))
        continue;
      g_array_set_size (next, 0);
      partition_one (t, id, text, mk, cur, next);
      tmp = cur, cur = next, next = tmp;
    }
  g_array_free (next, TRUE);
  return cur;
}

/* ---- shared merge-session state ---- */

typedef struct {
  gsize   start;   /* byte offset in the session's text */
  gsize   n;       /* byte length; 0 once merged into its left neighbour */
  int32_t prev, next;
  int32_t sid;     /* BPE: string id of the symbol's text (-1: none) */
} Symbol;

typedef struct {
  GArray *symbols;   /* Symbol */
  HzHeap  heap;
  GString *buf;      /* BPE: byte-encoded word */
  GArray *cpts;      /* BPE: code points of a fragment */
  GArray *words;     /* BPE: word lengths in code points */
  HzRegexScratch regex;  /* BPE: the pre-tokenizer's backtracking stack */
} Session;

static void
session_init (Session *s)
{
  memset (s, 0, sizeof *s);
  s->symbols = g_array_new (FALSE, FALSE, sizeof (Symbol));
  s->buf = g_string_new (NULL);
  s->cpts = g_array_new (FALSE, FALSE, sizeof (uint32_t));
  s->words = g_array_new (FALSE, FALSE, sizeof (gsize));
  hz_regex_scratch_init (&s->regex);
}

static void
session_clear (Session *s)
{
  g_array_free (s->symbols, TRUE);
  hz_heap_clear (&s->heap);
  g_string_free (s->buf, TRUE);
  g_array_free (s->cpts, TRUE);
  g_array_free (s->words, TRUE);
  hz_regex_scratch_clear (&s->regex);
}

#define SYM(s, i) (&g_array_index ((s)->symbols, Symbol, (i)))

/* Remove the right symbol of a validated bigram from the chain, growing the left one. */
static void
merge_symbols (Session *s, int32_t left, int32_t right)
{
  Symbol *l = SYM (s, left), *r = SYM (s, right);

  l->n += r->n;
  r->n = 0;
  l->next = r->next;
  if (r->next >= 0)
    SYM (s, r->next)->prev = left;
}

/* Cut `text` into symbols of one UTF-8 sequence each (judged by the lead byte only). */
static void
split_symbols (Session *s, const char *text, gsize len)
{
  gsize off = 0;
  int32_t index = 0;

  g_array_set_size (s->symbols, 0);
  while (off < len)
    {
      Symbol sym;
      sym.start = off;
      sym.n = MIN (hz_utf8_len_from_lead ((guchar) text[off]), len - off);
      off += sym.n;
      sym.prev = index - 1;
      sym.next = off == len ? -1 : index + 1;
      sym.sid = -1;
      index++;
      g_array_append_val (s->symbols, sym);
    }
}

static void
push_token (GArray *out, int32_t id)
{
  g_array_append_val (out, id);
}

/* ---- SPM ---- */

static void
spm_try_bigram (const HzTokenizer *t, Session *s, const char *text, int32_t left,
                int32_t right)
{
  Symbol *l, *r;
  int32_t id;
  HzBigram b;

  if (left < 0 || right < 0)
    return;
  l = SYM (s, left);
  r = SYM (s, right);
  id = hz_strtab_lookup (&t->strtab, text + l->start, l->n + r->n);
  if (id < 0 || id >= t->n_vocab)
    return;
  b.key = -(double) t->scores[id];
  b.left = left;
  b.right = right;
  b.a = (int32_t) (l->n + r->n);
  b.b = 0;
  hz_heap_push (&s->heap, &b);
}

static void
spm_byte_tokens (const HzTokenizer *t, const char *p, gsize n, GArray *out)
{
  for (gsize j = 0; j < n; j++)
    {
      int32_t id = t->byte_token[(guchar) p[j]];
      if (id < 0)
        id = t->unk;
      if (id >= 0)
        push_token (out, id);
    }
}

static void
spm_tokenize (const HzTokenizer *t, Session *s, const char *text, gsize len, GArray *out)
{
  HzBigram b;

  if (len == 0)
    return;
  split_symbols (s, text, len);
  for (int32_t i = 1; i < (int32_t) s->symbols->len; i++)
    spm_try_bigram (t, s, text, i - 1, i);

  while (hz_heap_pop (&s->heap, &b))
    {
      Symbol *l = SYM (s, b.left), *r = SYM (s, b.right);
      if (l->n == 0 || r->n == 0 || (gsize) b.a != l->n + r->n)
        continue;
      merge_symbols (s, b.left, b.right);
      spm_try_bigram (t, s, text, SYM (s, b.left)->prev, b.left);
      spm_try_bigram (t, s, text, b.left, SYM (s, b.left)->next);
    }

  /* every merged symbol is a token; unmerged characters that are not fall back to bytes */
  for (int32_t i = 0; i != -1; i = SYM (s, i)->next)
    {
      Symbol *sym = SYM (s, i);
      int32_t id = hz_strtab_lookup (&t->strtab, text + sym->start, sym->n);
      if (id >= 0 && id < t->n_vocab)
        push_token (out, id);
      else
        spm_byte_tokens (t, text + sym->start, sym->n, out);
    }
}

/* SPM fragment: optional leading space, then spaces escaped as U+2581. */
static void
spm_fragment (const HzTokenizer *t, Session *s, const char *text, gsize len,
              gboolean prefix_space, GArray *out)
{
  GString *esc = g_string_sized_new (len + len / 2 + 4);

  if (prefix_space)
    g_string_append (esc, "\xe2\x96\x81");
  for (gsize i = 0; i < len; i++)
    {
      if (text[i] == ' ')
        g_string_append (esc, "\xe2\x96\x81");
      else
        g_string_append_c (esc, text[i]);
    }
  spm_tokenize (t, s, esc->str, esc->len, out);
  g_string_free (esc, TRUE);
}

/* ---- BPE ---- */

static void
bpe_try_bigram (const HzTokenizer *t, Session *s, int32_t left, int32_t right)
{
  Symbol *l, *r;
  int32_t rank, result;
  HzBigram b;

  if (left < 0 || right < 0)
    return;
  l = SYM (s, left);
  r = SYM (s, right);
  if (!hz_pairtab_lookup (&t->merges, l->sid, r->sid, &rank, &result))
    return;
  b.key = (double) rank;
  b.left = left;
  b.right = right;
  b.a = l->sid;
  b.b = r->sid;
  hz_heap_push (&s->heap, &b);
}

/* Merge one byte-encoded word (s->buf, with per-byte symbols already set). */
static void
bpe_word (const HzTokenizer *t, Session *s, GArray *out)
{
  const char *w = s->buf->str;
  HzBigram b;

  if (t->ignore_merges)
    {
      int32_t id = hz_strtab_lookup (&t->strtab, w, s->buf->len);
      if (id >= 0 && id < t->n_vocab)
        {
          push_token (out, id);
          return;
        }
    }

  for (int32_t i = 1; i < (int32_t) s->symbols->len; i++)
    bpe_try_bigram (t, s, i - 1, i);

  while (hz_heap_pop (&s->heap, &b))
    {
      Symbol *l = SYM (s, b.left), *r = SYM (s, b.right);
      int32_t rank, result;

      /* outdated: one side merged or grew since the bigram was queued */
      if (l->n == 0 || r->n == 0 || l->sid != b.a || r->sid != b.b)
        continue;
      if (!hz_pairtab_lookup (&t->merges, l->sid, r->sid, &rank, &result))
        continue;
      merge_symbols (s, b.left, b.right);
      SYM (s, b.left)->sid = result;
      bpe_try_bigram (t, s, SYM (s, b.left)->prev, b.left);
      bpe_try_bigram (t, s, b.left, SYM (s, b.left)->next);
    }

  for (int32_t i = 0; i != -1 && s->symbols->len > 0; i = SYM (s, i)->next)
    {
      Symbol *sym = SYM (s, i);
      if (sym->sid >= 0 && sym->sid < t->n_vocab)
        {
          push_token (out, sym->sid);
          continue;
        }
      /* not a token: llama.cpp looks up each byte of the encoded text alone */
      for (gsize j = 0; j < sym->n; j++)
        {
          int32_t id = hz_strtab_lookup (&t->strtab, w + sym->start + j, 1);
          if (id >= 0 && id < t->n_vocab)
            push_token (out, id);
        }
    }
}

static void
bpe_fragment (const HzTokenizer *t, Session *s, const char *text, gsize len, GArray *out)
{
  const uint32_t *cpts;
  gsize start = 0;

  g_array_set_size (s->cpts, 0);
  g_array_set_size (s->words, 0);
  hz_utf8_decode_lenient (text, len, s->cpts);
  if (t->nfc)
    hz_nfc_normalize (s->cpts);
  cpts = (const uint32_t *) (void *) s->cpts->data;
  hz_pretokenize (t->splitter, &s->regex, cpts, s->cpts->len, s->words);

  for (guint w = 0; w < s->words->len; w++)
    {
      gsize wlen = g_array_index (s->words, gsize, w);
      int32_t index = 0;

      g_string_truncate (s->buf, 0);
      g_array_set_size (s->symbols, 0);
      for (gsize k = start; k < start + wlen; k++)
        {
          char u8[4];
          int n = hz_utf8_encode (cpts[k], u8);
          for (int j = 0; j < n; j++)
            {
              guint8 byte = (guint8) u8[j];
              char enc[4];
              Symbol sym;
              sym.start = s->buf->len;
              sym.n = (gsize) hz_utf8_encode (hz_gpt2_byte_to_cpt (byte), enc);
              sym.prev = index - 1;
              sym.next = index + 1;
              sym.sid = t->bpe_byte_sid[byte];
              index++;
              g_string_append_len (s->buf, enc, (gssize) sym.n);
              g_array_append_val (s->symbols, sym);
            }
        }
      if (s->symbols->len > 0)
        SYM (s, s->symbols->len - 1)->next = -1;
      start += wlen;
      if (s->symbols->len > 0)
        bpe_word (t, s, out);
    }
}

/* ---- WordPiece ---- */

/* HF's BertNormalizer::is_chinese_char (its 0x2B920 lower bound, not 0x2B820, kept). */
static gboolean
wpm_is_chinese (uint32_t c)
{
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

/* BertPreTokenizer's punctuation: ASCII punctuation (symbols included) or \p{P}. */
static gboolean
wpm_is_punct (uint32_t c)
{
  guint f = hz_unicode_flags (c);
  return (f & HZ_UCF_PUNCTUATION) || (c < 0x7F && (f & HZ_UCF_SYMBOL));
}

/* The longest-match-first pieces of one word (code points `w`, `n`): appends them, or
 * [UNK] when a part of the word matches nothing or the word is over 100 characters. */
static void
wpm_word (const HzTokenizer *t, GString *buf, const uint32_t *w, gsize n, GArray *out)
{
  guint start_len = out->len;
  gsize pos = 0;

  g_string_assign (buf, "\xe2\x96\x81");   /* word-initial pieces carry U+2581 */
  for (gsize i = 0; i < n; i++)
    g_string_append_unichar (buf, w[i]);
  if (n > 100)
    goto unknown;
  while (pos < buf->len)
    {
      gsize end = MIN (buf->len, pos + t->max_token_len);
      int32_t id = -1;
      for (; end > pos; end--)
        {
          /* only ends on character boundaries */
          if (end < buf->len && ((guchar) buf->str[end] & 0xC0) == 0x80)
            continue;
          id = hz_strtab_lookup (&t->strtab, buf->str + pos, end - pos);
          if (id >= 0 && id < t->n_vocab)
            break;
          id = -1;
        }
      if (id < 0)
        goto unknown;
      push_token (out, id);
      pos = end;
    }
  return;
unknown:
  g_array_set_size (out, start_len);
  if (t->unk >= 0)
    push_token (out, t->unk);
}

static void
wpm_fragment (const HzTokenizer *t, Session *s, const char *text, gsize len, GArray *out)
{
  g_autoptr(GArray) word = g_array_new (FALSE, FALSE, sizeof (uint32_t));
  const uint32_t *cpts;

  g_array_set_size (s->cpts, 0);
  hz_utf8_decode_lenient (text, len, s->cpts);
  cpts = (const uint32_t *) (void *) s->cpts->data;
  for (gsize i = 0; i <= s->cpts->len; i++)
    {
      uint32_t c = i < s->cpts->len ? cpts[i] : ' ';
      guint f = hz_unicode_flags (c);
      uint32_t dec[18];
      gsize n_dec;

      /* clean_text: drop NUL, U+FFFD and other controls (but \t \n \r), white space
       * ends a word */
      if (c == 0 || c == 0xFFFD ||
          ((f & HZ_UCF_CONTROL) && c != '\t' && c != '\n' && c != '\r'))
        continue;
      if ((f & HZ_UCF_WHITESPACE) || wpm_is_chinese (c))
        {
          if (word->len > 0)
            wpm_word (t, s->buf, (const uint32_t *) (void *) word->data, word->len, out);
          g_array_set_size (word, 0);
          if (wpm_is_chinese (c))
            wpm_word (t, s->buf, &c, 1, out);
          continue;
        }
      /* strip_accents: NFD, nonspacing marks dropped; then lower case */
      if (t->strip_accents)
        n_dec = g_unichar_fully_decompose (c, FALSE, dec, G_N_ELEMENTS (dec));
      else
        dec[0] = c, n_dec = 1;
      for (gsize k = 0; k < n_dec; k++)
        {
          uint32_t d = dec[k];
          if (t->strip_accents && g_unichar_type (d) == G_UNICODE_NON_SPACING_MARK)
            continue;
          if (t->lowercase)
            d = hz_unicode_tolower (d);
          if (wpm_is_punct (d))
            {
              if (word->len > 0)
                wpm_word (t, s->buf, (const uint32_t *) (void *) word->data, word->len, out);
              g_array_set_size (word, 0);
              wpm_word (t, s->buf, &d, 1, out);
            }
          else
            g_array_append_val (word, d);
        }
    }
}

/* ---- entry point ---- */

static void
encode_fragments (const HzTokenizer *t, const char *text, GArray *frags, gboolean add_special,
                  GArray *out)
{
  Session s;
  gboolean prev_special = TRUE;   /* SPM: prefix a space to the first fragment */

  session_init (&s);
  if (add_special && t->add_bos && t->bos >= 0)
    push_token (out, t->bos);

  for (guint i = 0; i < frags->len; i++)
    {
      const Fragment *f = &g_array_index (frags, Fragment, i);
      if (f->token >= 0)
        {
          push_token (out, f->token);
          prev_special = TRUE;
          continue;
        }
      if (t->type == HZ_VOCAB_SPM)
        spm_fragment (t, &s, text + f->off, f->len, t->add_space_prefix && prev_special, out);
      else if (t->type == HZ_VOCAB_WPM)
        wpm_fragment (t, &s, text + f->off, f->len, out);
      else
        bpe_fragment (t, &s, text + f->off, f->len, out);
      prev_special = FALSE;
    }

  if (add_special && t->add_eos && t->eos >= 0)
    push_token (out, t->eos);
  if (add_special && t->add_sep && t->sep >= 0)
    push_token (out, t->sep);
  session_clear (&s);
}

/* Documented in tokenizer.h. */
HzToken *
hz_tokenizer_encode (const HzTokenizer *t, const char *text, gssize len,
                     gboolean add_special, gboolean parse_special, gsize *n_out)
{
  GArray *out;

  g_return_val_if_fail (t != NULL && n_out != NULL, NULL);
  out = g_array_new (FALSE, FALSE, sizeof (HzToken));
  if (text == NULL)
    text = "", len = 0;
  if (len < 0)
    len = (gssize) strlen (text);
  g_autoptr(GArray) frags = partition (t, text, (gsize) len, parse_special, NULL);
  encode_fragments (t, text, frags, add_special, out);
  *n_out = out->len;
  return (HzToken *) (void *) g_array_free (out, FALSE);
}

/* Documented in tokenizer.h. */
HzToken *
hz_tokenizer_encode_spans (const HzTokenizer *t, const char *text, gsize len,
                           const HzTextSpan *markup, gsize n_markup, gboolean add_special,
                           gsize *n_out)
{
  g_return_val_if_fail (t != NULL && n_out != NULL && (text != NULL || len == 0), NULL);
  static const HzTextSpan none = { 0, 0 };
  const Markup mk = { text ? text : "", n_markup ? markup : &none, n_markup };
  GArray *out = g_array_new (FALSE, FALSE, sizeof (HzToken));
  g_autoptr(GArray) frags = partition (t, mk.text, len, TRUE, &mk);
  encode_fragments (t, mk.text, frags, add_special, out);
  *n_out = out->len;
  return (HzToken *) (void *) g_array_free (out, FALSE);
}
