/* engine/tokenizer.c — building a tokenizer from GGUF metadata, token queries, pieces and
 * detokenization. Encoding lives in tokenizer-encode.c, the BPE pre-tokenizers in
 * tokenizer-pre.c. Behaviour follows llama.cpp's llama_vocab (src/llama-vocab.cpp of
 * c392e509): default special ids per model, tokenizer.ggml.* overrides, EOT/EOG detection
 * by token text, the special-token cache, and llama_token_to_piece / llama_detokenize.
 */
#include <string.h>
#include "tokenizer.h"
#include "tokenizer-private.h"
#include "unicode.h"

G_DEFINE_QUARK (hz-tokenizer-error-quark, hz_tokenizer_error)

/* GGUF token types (gguf-py TokenType / llama.cpp llama_token_type). */
enum { TT_UNDEFINED, TT_NORMAL, TT_UNKNOWN, TT_CONTROL, TT_USER_DEFINED, TT_UNUSED, TT_BYTE };

/* ---- string storage ---- */

static int32_t
add_string (HzTokenizer *t, const char *s, gsize len)
{
  if (t->n_strings == t->cap_strings)
    {
      t->cap_strings = t->cap_strings ? t->cap_strings * 2 : 1024;
      t->texts = g_renew (const char *, t->texts, t->cap_strings);
      t->lens = g_renew (guint32, t->lens, t->cap_strings);
      t->strtab.texts = t->texts;
      t->strtab.lens = t->lens;
    }
  t->texts[t->n_strings] = g_string_chunk_insert_len (t->chunk, s, (gssize) len);
  t->lens[t->n_strings] = (guint32) len;
  return t->n_strings++;
}

/* Id of a string, interning it when new (BPE merge parts). */
static int32_t
intern (HzTokenizer *t, const char *s, gsize len)
{
  int32_t id = hz_strtab_lookup (&t->strtab, s, len);
  if (id >= 0)
    return id;
  id = add_string (t, s, len);
  hz_strtab_insert (&t->strtab, id);
  return id;
}

/* ---- loading helpers ---- */

static gboolean
get_array (const HzGguf *g, const char *key, HzGgufType elem, gboolean required,
           int64_t *idx, GError **error)
{
  *idx = hz_gguf_find_key (g, key);
  if (*idx < 0)
    {
      if (required)
        g_set_error (error, HZ_TOKENIZER_ERROR, HZ_TOKENIZER_ERROR_INVALID,
                     "tokenizer metadata: missing key %s", key);
      return !required;
    }
  if (hz_gguf_kv_type (g, *idx) != HZ_GGUF_TYPE_ARRAY || hz_gguf_arr_type (g, *idx) != elem)
    {
      g_set_error (error, HZ_TOKENIZER_ERROR, HZ_TOKENIZER_ERROR_INVALID,
                   "tokenizer metadata: %s has the wrong type", key);
      return FALSE;
    }
  return TRUE;
}

static gboolean
load_tokens (HzTokenizer *t, const HzGguf *g, GError **error)
{
  int64_t idx, sidx = -1, tidx = -1;
  uint64_t n;
  const void *scores = NULL, *types = NULL;
  HzGgufType score_type = HZ_GGUF_TYPE_FLOAT32;

  if (!get_array (g, "tokenizer.ggml.tokens", HZ_GGUF_TYPE_STRING, TRUE, &idx, error))
    return FALSE;
  n = hz_gguf_arr_n (g, idx);
  if (n == 0 || n > (uint64_t) G_MAXINT32 / 4)
    {
      g_set_error (error, HZ_TOKENIZER_ERROR, HZ_TOKENIZER_ERROR_INVALID,
                   "tokenizer metadata: tokenizer.ggml.tokens has %" G_GUINT64_FORMAT
                   " entries", n);
      return FALSE;
    }
  t->n_vocab = (int32_t) n;

  sidx = hz_gguf_find_key (g, "tokenizer.ggml.scores");
  if (sidx >= 0)
    {
      score_type = hz_gguf_kv_type (g, sidx) == HZ_GGUF_TYPE_ARRAY
                       ? hz_gguf_arr_type (g, sidx) : HZ_GGUF_TYPE_STRING;
      if (score_type != HZ_GGUF_TYPE_FLOAT32 && score_type != HZ_GGUF_TYPE_INT32)
        {
          g_set_error (error, HZ_TOKENIZER_ERROR, HZ_TOKENIZER_ERROR_INVALID,
                       "tokenizer metadata: tokenizer.ggml.scores has the wrong type");
          return FALSE;
        }
      if (hz_gguf_arr_n (g, sidx) < n)
        {
          g_set_error (error, HZ_TOKENIZER_ERROR, HZ_TOKENIZER_ERROR_INVALID,
                       "tokenizer metadata: %" G_GUINT64_FORMAT " scores for %"
                       G_GUINT64_FORMAT " tokens", hz_gguf_arr_n (g, sidx), n);
          return FALSE;
        }
      scores = hz_gguf_arr_data (g, sidx);
    }
  if (!get_array (g, "tokenizer.ggml.token_type", HZ_GGUF_TYPE_INT32, FALSE, &tidx, error))
    return FALSE;
  if (tidx >= 0)
    {
      if (hz_gguf_arr_n (g, tidx) < n)
        {
          g_set_error (error, HZ_TOKENIZER_ERROR, HZ_TOKENIZER_ERROR_INVALID,
                       "tokenizer metadata: %" G_GUINT64_FORMAT " token types for %"
                       G_GUINT64_FORMAT " tokens", hz_gguf_arr_n (g, tidx), n);
          return FALSE;
        }
      types = hz_gguf_arr_data (g, tidx);
    }

  t->scores = g_new0 (float, n);
  t->attrs = g_new0 (guint32, n);
  hz_strtab_init (&t->strtab, (guint32) n + 1024);
  t->strtab.texts = t->texts;
  t->strtab.lens = t->lens;

  for (uint64_t i = 0; i < n; i++)
    {
      HzGgufStr s = hz_gguf_arr_str (g, idx, i);
      g_autofree char *empty = NULL;
      int32_t id;

      if (s.ptr == NULL || s.len == 0)
        {
          /* llama.cpp renames empty tokens so that they stay unique */
          empty = g_strdup_printf ("[EMPTY_%" G_GUINT64_FORMAT "]", i);
          s.ptr = empty;
          s.len = strlen (empty);
        }
      if (s.len > G_MAXINT32)
        {
          g_set_error (error, HZ_TOKENIZER_ERROR, HZ_TOKENIZER_ERROR_INVALID,
                       "tokenizer metadata: token %" G_GUINT64_FORMAT " is too long", i);
          return FALSE;
        }
      id = add_string (t, s.ptr, s.len);
      if (hz_strtab_insert (&t->strtab, id) != id)
        {
          g_set_error (error, HZ_TOKENIZER_ERROR, HZ_TOKENIZER_ERROR_INVALID,
                       "tokenizer metadata: duplicate token '%s' (ids %d and %d)",
                       t->texts[id], hz_strtab_lookup (&t->strtab, s.ptr, s.len), id);
          return FALSE;
        }

      if (scores != NULL)
        {
          if (score_type == HZ_GGUF_TYPE_FLOAT32)
            memcpy (&t->scores[i], (const char *) scores + 4 * i, 4);
          else
            {
              int32_t v;
              memcpy (&v, (const char *) scores + 4 * i, 4);
              t->scores[i] = (float) v;
            }
        }
      t->attrs[i] = HZ_TOKEN_NORMAL;
      if (types != NULL)
        {
          int32_t tt;
          memcpy (&tt, (const char *) types + 4 * i, 4);
          switch (tt)
            {
            case TT_NORMAL:       t->attrs[i] = HZ_TOKEN_NORMAL; break;
            case TT_UNKNOWN:      t->attrs[i] = HZ_TOKEN_UNKNOWN; break;
            case TT_CONTROL:      t->attrs[i] = HZ_TOKEN_CONTROL; break;
            case TT_USER_DEFINED: t->attrs[i] = HZ_TOKEN_USER_DEFINED; break;
            case TT_UNUSED:       t->attrs[i] = HZ_TOKEN_UNUSED; break;
            case TT_BYTE:         t->attrs[i] = HZ_TOKEN_BYTE; break;
            default:              t->attrs[i] = 0; break;   /* undefined */
            }
        }
    }
  return TRUE;
}

/* tokenizer.ggml.merges: "left right" (split at the first space after the first byte);
 * the rank is the index, the first occurrence of a pair wins. */
static gboolean
load_merges (HzTokenizer *t, const HzGguf *g, GError **error)
{
  int64_t idx;
  uint64_t n;
  g_autoptr(GString) joined = g_string_new (NULL);

  if (!get_array (g, "tokenizer.ggml.merges", HZ_GGUF_TYPE_STRING, TRUE, &idx, error))
    return FALSE;
  n = hz_gguf_arr_n (g, idx);
  if (n > (uint64_t) G_MAXINT32 / 4)
    {
      g_set_error (error, HZ_TOKENIZER_ERROR, HZ_TOKENIZER_ERROR_INVALID,
                   "tokenizer metadata: %" G_GUINT64_FORMAT " merges is too many", n);
      return FALSE;
    }
  hz_pairtab_init (&t->merges, (guint32) n);

  for (uint64_t i = 0; i < n; i++)
    {
      HzGgufStr m = hz_gguf_arr_str (g, idx, i);
      const char *sp;
      int32_t left, right, result;
      gsize llen, rlen;

      if (m.ptr == NULL || m.len < 2)
        continue;
      sp = memchr (m.ptr + 1, ' ', m.len - 1);
      if (sp == NULL)
        continue;   /* llama.cpp maps it to the pair ("", ""), which never matches */
      llen = (gsize) (sp - m.ptr);
      rlen = m.len - llen - 1;
      if (rlen == 0)
        continue;
      left = intern (t, m.ptr, llen);
      right = intern (t, sp + 1, rlen);
      g_string_truncate (joined, 0);
      g_string_append_len (joined, m.ptr, (gssize) llen);
      g_string_append_len (joined, sp + 1, (gssize) rlen);
      result = intern (t, joined->str, joined->len);
      hz_pairtab_insert (&t->merges, left, right, (int32_t) i, result);
    }
  return TRUE;
}

static void
init_byte_tables (HzTokenizer *t)
{
  for (int b = 0; b < 256; b++)
    {
      t->byte_token[b] = -1;
      t->bpe_byte_sid[b] = -1;
      if (t->type == HZ_VOCAB_SPM)
        {
          char hex[8], raw = (char) b;
          int32_t id;
          g_snprintf (hex, sizeof hex, "<0x%02X>", b);
          id = hz_strtab_lookup (&t->strtab, hex, 6);
          if (id < 0 || id >= t->n_vocab)
            id = hz_strtab_lookup (&t->strtab, &raw, 1);
          t->byte_token[b] = (id >= 0 && id < t->n_vocab) ? id : -1;
        }
      else
        {
          char enc[4];
          int n = hz_utf8_encode (hz_gpt2_byte_to_cpt ((guint8) b), enc);
          int32_t id = hz_strtab_lookup (&t->strtab, enc, (gsize) n);
          t->bpe_byte_sid[b] = id;
          t->byte_token[b] = (id >= 0 && id < t->n_vocab) ? id : -1;
        }
    }
}

static gboolean
setup_model (HzTokenizer *t, const HzGguf *g, GError **error)
{
  g_autofree char *model = hz_gguf_get_str (g, "tokenizer.ggml.model");
  g_autofree char *pre = hz_gguf_get_str (g, "tokenizer.ggml.pre");

  if (model == NULL)
    {
      g_set_error (error, HZ_TOKENIZER_ERROR, HZ_TOKENIZER_ERROR_INVALID,
                   "tokenizer metadata: missing key tokenizer.ggml.model");
      return FALSE;
    }
  t->eot = t->eom = t->sep = t->pad = -1;
  if (strcmp (model, "llama") == 0)
    {
      t->type = HZ_VOCAB_SPM;
      t->bos = 1, t->eos = 2, t->unk = 0;
      t->add_space_prefix = TRUE;
      t->add_bos = TRUE;
      t->clean_spaces = FALSE;
    }
  else if (strcmp (model, "gpt2") == 0)
    {
      /* llama.cpp: a missing name means "default" (with a warning) */
      const char *name = (pre == NULL || *pre == '\0') ? "default" : pre;
      const HzPreInfo *info = hz_pre_info (name);
      if (info == NULL)
        {
          g_set_error (error, HZ_TOKENIZER_ERROR, HZ_TOKENIZER_ERROR_UNSUPPORTED,
                       "unknown BPE pre-tokenizer '%s' (tokenizer.ggml.pre): not a name "
                       "llama.cpp knows", name);
          return FALSE;
        }
      if (info->regexes == NULL)
        {
          g_set_error (error, HZ_TOKENIZER_ERROR, HZ_TOKENIZER_ERROR_UNSUPPORTED,
                       "BPE pre-tokenizer '%s' (tokenizer.ggml.pre) is not supported: %s",
                       name, info->refused);
          return FALSE;
        }
      t->splitter = hz_pre_splitter_new (info->regexes, TRUE, error);
      if (t->splitter == NULL)
        return FALSE;
      t->type = HZ_VOCAB_BPE;
      t->pre = info;
      t->bos = (info->flags & HZ_PRE_NO_BOS) ? -1 : 11;
      t->eos = 11;
      t->unk = -1;
      t->add_bos = (info->flags & HZ_PRE_ADD_BOS) != 0;
      t->add_sep = (info->flags & HZ_PRE_ADD_SEP) != 0;
      t->ignore_merges = (info->flags & HZ_PRE_IGNORE_MERGES) != 0;
      t->clean_spaces = (info->flags & HZ_PRE_KEEP_SPACES) == 0;
      t->nfc = (info->flags & HZ_PRE_NFC) != 0;
    }
  else if (strcmp (model, "bert") == 0)
    {
      /* llama.cpp's WPM defaults: [CLS] 101, [UNK] 100, [SEP] 102, [PAD] 0; adds CLS and
       * SEP; BertNormalizer lowercase (default true) and strip_accents (default: lowercase) */
      t->type = HZ_VOCAB_WPM;
      t->bos = 101, t->eos = -1, t->unk = 100, t->sep = 102, t->pad = 0;
      t->add_bos = TRUE;
      t->add_sep = TRUE;
      t->clean_spaces = TRUE;
      t->lowercase = TRUE;
      hz_gguf_get_bool (g, "tokenizer.ggml.normalizer.lowercase", &t->lowercase);
      t->strip_accents = t->lowercase;
      hz_gguf_get_bool (g, "tokenizer.ggml.normalizer.strip_accents", &t->strip_accents);
    }
  else
    {
      g_set_error (error, HZ_TOKENIZER_ERROR, HZ_TOKENIZER_ERROR_UNSUPPORTED,
                   "unsupported tokenizer model '%s' (tokenizer.ggml.model); supported: "
                   "llama (SentencePiece), gpt2 (byte-level BPE), bert (WordPiece)", model);
      return FALSE;
    }
  hz_gguf_get_bool (g, "tokenizer.ggml.add_space_prefix", &t->add_space_prefix);
  /* a normalizer flag some converters write (Qwen-style NFC) */
  hz_gguf_get_bool (g, "tokenizer.ggml.normalizer.nfc", &t->nfc);
  return TRUE;
}

/* Special ids from tokenizer.ggml.*_token_id. An out-of-range value keeps the default, as
 * llama.cpp does (llama-vocab.cpp: "bad special token ... using default id"); defaults
 * outside the vocab are disabled. 0xFFFFFFFF is (uint32) -1, which converters (llama2.c's
 * export, older gguf-py: stories260K has it for the separator and padding ids) write for "no
 * such token": same result, silently (llama.cpp warns about it on every load). Other
 * out-of-range values are listed in `bad`, for one message after all keys are read. */
static void
read_special_id (HzTokenizer *t, const HzGguf *g, const char *key, int32_t *id, GString *bad)
{
  uint32_t v;
  if (*id >= t->n_vocab)
    *id = -1;
  if (!hz_gguf_get_u32 (g, key, &v))
    return;
  if (v < (uint32_t) t->n_vocab)
    *id = (int32_t) v;
  else if (v != G_MAXUINT32)
    g_string_append_printf (bad, "%s%s = %u (kept %d)", bad->len ? ", " : "", key, v, *id);
}

static void
mark_control (HzTokenizer *t, int32_t id)
{
  t->attrs[id] |= HZ_TOKEN_CONTROL;
}

/* The first token whose text is in `names` (in list order), or -1. */
static int32_t
find_first (const HzTokenizer *t, const char *const *names)
{
  for (gsize i = 0; names[i] != NULL; i++)
    {
      int32_t id = hz_strtab_lookup (&t->strtab, names[i], strlen (names[i]));
      if (id >= 0 && id < t->n_vocab)
        return id;
    }
  return -1;
}

static void
add_eog (HzTokenizer *t, GArray *eog, int32_t id)
{
  if (id < 0 || id >= t->n_vocab)
    return;
  for (guint i = 0; i < eog->len; i++)
    if (g_array_index (eog, int32_t, i) == id)
      return;
  g_array_append_val (eog, id);
}

static int
cmp_int32 (gconstpointer a, gconstpointer b)
{
  int32_t x = *(const int32_t *) a, y = *(const int32_t *) b;
  return (x > y) - (x < y);
}

static gboolean
setup_specials (HzTokenizer *t, const HzGguf *g, GError **error)
{
  static const char *const eot_names[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
    "<|end_of_text|>", "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>",
    "<end_of_utterance>", NULL };
  static const char *const eom_names[] = { "<|eom_id|>", NULL };
  static const char *const fim_names[][9] = {
    { "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>",
      "▁<PRE>", "<|code_prefix|>", "<|prefix|>", NULL },
    { "<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>",
      "▁<SUF>", "<|code_suffix|>", "<|suffix|>", NULL },
    { "<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>",
      "▁<MID>", "<|code_middle|>", "<|middle|>", NULL },
    { "<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]", NULL },
    { "<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>", NULL },
    { "<|file_sep|>", NULL },
  };
  static const char *const fim_keys[][2] = {
    { "tokenizer.ggml.fim_pre_token_id", "tokenizer.ggml.prefix_token_id" },
    { "tokenizer.ggml.fim_suf_token_id", "tokenizer.ggml.suffix_token_id" },
    { "tokenizer.ggml.fim_mid_token_id", "tokenizer.ggml.middle_token_id" },
    { "tokenizer.ggml.fim_pad_token_id", NULL },
    { "tokenizer.ggml.fim_rep_token_id", NULL },
    { "tokenizer.ggml.fim_sep_token_id", NULL },
  };
  static const char *const eog_names[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>",
    "<|calls|>", "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>",
    "[EOT]", "[EOS]", "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>",
    "<|tool_response>", "<｜end▁of▁sentence｜>", "[e~[", NULL };
  static const char *const always_user[] = {
    "<|channel|>", "<|message|>", "<|start|>", "<|constrain|>", NULL };
  int32_t fim[6] = { -1, -1, -1, -1, -1, -1 };
  g_autoptr(GArray) eog = g_array_new (FALSE, FALSE, sizeof (int32_t));
  gboolean b;

  g_autoptr(GString) bad = g_string_new (NULL);
  read_special_id (t, g, "tokenizer.ggml.bos_token_id", &t->bos, bad);
  read_special_id (t, g, "tokenizer.ggml.eos_token_id", &t->eos, bad);
  read_special_id (t, g, "tokenizer.ggml.eot_token_id", &t->eot, bad);
  read_special_id (t, g, "tokenizer.ggml.eom_token_id", &t->eom, bad);
  read_special_id (t, g, "tokenizer.ggml.unknown_token_id", &t->unk, bad);
  read_special_id (t, g, "tokenizer.ggml.seperator_token_id", &t->sep, bad);
  read_special_id (t, g, "tokenizer.ggml.padding_token_id", &t->pad, bad);
  for (int k = 0; k < 6; k++)
    for (int j = 0; j < 2; j++)
      if (fim_keys[k][j] != NULL)
        read_special_id (t, g, fim_keys[k][j], &fim[k], bad);
  if (bad->len > 0)
    g_message ("tokenizer: special token ids outside the vocabulary of %d tokens ignored: %s",
               t->n_vocab, bad->str);

  if (hz_gguf_get_bool (g, "tokenizer.ggml.add_bos_token", &b))
    t->add_bos = b;
  if (hz_gguf_get_bool (g, "tokenizer.ggml.add_eos_token", &b))
    t->add_eos = b;
  if (hz_gguf_get_bool (g, "tokenizer.ggml.add_sep_token", &b))
    t->add_sep = b;
  if (t->add_bos && t->bos < 0)
    {
      g_set_error (error, HZ_TOKENIZER_ERROR, HZ_TOKENIZER_ERROR_INVALID,
                   "tokenizer.ggml.add_bos_token is true, but tokenizer.ggml.bos_token_id "
                   "is not set");
      return FALSE;
    }
  if (t->add_eos && t->eos < 0)
    {
      g_set_error (error, HZ_TOKENIZER_ERROR, HZ_TOKENIZER_ERROR_INVALID,
                   "tokenizer.ggml.add_eos_token is true, but tokenizer.ggml.eos_token_id "
                   "is not set");
      return FALSE;
    }
  if (t->add_sep && t->sep < 0)
    {
      g_set_error (error, HZ_TOKENIZER_ERROR, HZ_TOKENIZER_ERROR_INVALID,
                   "tokenizer.ggml.add_sep_token is true, but "
                   "tokenizer.ggml.seperator_token_id is not set");
      return FALSE;
    }

  /* auto-detect EOT/EOM/FIM by text; such tokens are made control tokens */
  if (t->eot < 0 && (t->eot = find_first (t, eot_names)) >= 0)
    mark_control (t, t->eot);
  if (t->eom < 0 && (t->eom = find_first (t, eom_names)) >= 0)
    mark_control (t, t->eom);
  for (int k = 0; k < 6; k++)
    if (fim[k] < 0 && (fim[k] = find_first (t, fim_names[k])) >= 0)
      mark_control (t, fim[k]);

  /* control tokens named "...unused..." are unused */
  for (int32_t i = 0; i < t->n_vocab; i++)
    if ((t->attrs[i] & HZ_TOKEN_CONTROL) && strstr (t->texts[i], "unused") != NULL)
      t->attrs[i] |= HZ_TOKEN_UNUSED;

  /* end-of-generation set */
  add_eog (t, eog, fim[3]);
  add_eog (t, eog, fim[4]);
  add_eog (t, eog, fim[5]);
  for (gsize i = 0; eog_names[i] != NULL; i++)
    {
      int32_t id = hz_strtab_lookup (&t->strtab, eog_names[i], strlen (eog_names[i]));
      if (id >= 0 && id < t->n_vocab)
        {
          add_eog (t, eog, id);
          mark_control (t, id);
        }
    }
  for (gsize i = 0; always_user[i] != NULL; i++)
    {
      int32_t id = hz_strtab_lookup (&t->strtab, always_user[i], strlen (always_user[i]));
      if (id >= 0 && id < t->n_vocab)
        t->attrs[id] = HZ_TOKEN_USER_DEFINED;
    }
  add_eog (t, eog, t->eos);
  add_eog (t, eog, t->eot);
  add_eog (t, eog, t->eom);

  /* o200k_harmony / solar-open: "<|end|>" is not EOG when <|return|>+<|call|> or
   * <|calls|>+<|flush|> exist; gemma4: "</s>" is not EOG when <|tool_response> exists */
  {
    gboolean has_ret = FALSE, has_call = FALSE, has_flush = FALSE, has_tool = FALSE;
    int32_t end_id = -1, s_id = -1;
    for (guint i = 0; i < eog->len; i++)
      {
        const char *txt = t->texts[g_array_index (eog, int32_t, i)];
        has_ret |= strcmp (txt, "<|return|>") == 0;
        has_call |= strcmp (txt, "<|call|>") == 0 || strcmp (txt, "<|calls|>") == 0;
        has_flush |= strcmp (txt, "<|flush|>") == 0;
        has_tool |= strcmp (txt, "<|tool_response>") == 0;
        if (strcmp (txt, "<|end|>") == 0)
          end_id = g_array_index (eog, int32_t, i);
        if (strcmp (txt, "</s>") == 0)
          s_id = g_array_index (eog, int32_t, i);
      }
    for (guint i = 0; i < eog->len; i++)
      {
        int32_t id = g_array_index (eog, int32_t, i);
        if ((id == end_id && ((has_ret && has_call) || (has_call && has_flush))) ||
            (id == s_id && has_tool))
          {
            t->attrs[id] = id == end_id ? HZ_TOKEN_USER_DEFINED : HZ_TOKEN_NORMAL;
            g_array_remove_index (eog, i--);
          }
      }
  }
  g_array_sort (eog, cmp_int32);
  t->n_eog = eog->len;
  t->eog = (int32_t *) (void *) g_array_free (g_steal_pointer (&eog), FALSE);
  return TRUE;
}

static int
cmp_special (gconstpointer a, gconstpointer b, gpointer data)
{
  const HzTokenizer *t = data;
  int32_t x = *(const int32_t *) a, y = *(const int32_t *) b;
  guint32 lx = t->lens[x], ly = t->lens[y];
  if (lx != ly)
    return lx > ly ? -1 : 1;
  return (x > y) - (x < y);
}

/* Special tokens, longest text first (llama.cpp's cache_special_tokens), and the
 * per-model strip flags. */
static void
setup_special_cache (HzTokenizer *t, const HzGguf *g)
{
  GArray *ids = g_array_new (FALSE, FALSE, sizeof (int32_t));
  g_autofree char *name = hz_gguf_get_str (g, "general.name");
  g_autofree char *lname = name ? g_ascii_strdown (name, -1) : NULL;
  g_autofree char *pre = hz_gguf_get_str (g, "tokenizer.ggml.pre");
  g_autofree char *arch = hz_gguf_get_str (g, "general.architecture");

  for (int32_t i = 0; i < t->n_vocab; i++)
    if (t->attrs[i] & (HZ_TOKEN_CONTROL | HZ_TOKEN_USER_DEFINED | HZ_TOKEN_UNKNOWN))
      g_array_append_val (ids, i);
  g_array_sort_with_data (ids, cmp_special, t);
  t->n_special = ids->len;
  t->special = (int32_t *) (void *) g_array_free (ids, FALSE);

  if ((pre && (strstr (pre, "jina-v2-de") || strstr (pre, "jina-v2-es") ||
               strstr (pre, "jina-v2-code"))) ||
      (arch && (strstr (arch, "nomic-bert-moe") || strstr (arch, "jina-bert-v3"))))
    {
      int32_t id = hz_tokenizer_find (t, "<mask>");
      if (id >= 0)
        t->attrs[id] |= HZ_TOKEN_ATTR_LSTRIP;
    }
  else if (lname && (strstr (lname, "phi-3") || strstr (lname, "phi3")))
    {
      static const char *const no_rstrip[] = { "<unk>", "<s>", "<|endoftext|>" };
      int32_t id;
      for (gsize i = 0; i < t->n_special; i++)
        t->attrs[t->special[i]] |= HZ_TOKEN_ATTR_RSTRIP;
      if ((id = hz_tokenizer_find (t, "</s>")) >= 0)
        t->attrs[id] |= HZ_TOKEN_ATTR_RSTRIP;
      for (gsize i = 0; i < G_N_ELEMENTS (no_rstrip); i++)
        if ((id = hz_tokenizer_find (t, no_rstrip[i])) >= 0)
          t->attrs[id] &= ~HZ_TOKEN_ATTR_RSTRIP;
    }
}

/* ---- pieces ---- */

/* llama.cpp's llama_decode_text: GPT-2 alphabet back to bytes; a code point outside the
 * alphabet becomes "[UNK_BYTE_0x<hex>" + the whole token text + "]". */
static void
bpe_decode_text (const char *text, gsize len, GArray *cpts, GString *out)
{
  g_array_set_size (cpts, 0);
  hz_utf8_decode_lenient (text, len, cpts);
  for (guint i = 0; i < cpts->len; i++)
    {
      uint32_t c = g_array_index (cpts, uint32_t, i);
      int b = hz_gpt2_cpt_to_byte (c);
      if (b >= 0)
        g_string_append_c (out, (char) b);
      else
        {
          char u8[4];
          int n = hz_utf8_encode (c, u8);
          g_string_append (out, "[UNK_BYTE_0x");
          for (int j = 0; j < n; j++)
            g_string_append_printf (out, "%02x", (guchar) u8[j]);
          g_string_append_len (out, text, (gssize) len);
          g_string_append_c (out, ']');
        }
    }
}

static int
hexval (char c)
{
  return g_ascii_isxdigit (c) ? g_ascii_xdigit_value (c) : -1;
}

/* Byte of a <0xXX> token (strtol semantics on text[3..4]: stops at the first non-digit). */
static char
byte_token_value (const char *text, gsize len)
{
  int v = 0;
  for (gsize i = 3; i < 5 && i < len; i++)
    {
      int d = hexval (text[i]);
      if (d < 0)
        break;
      v = v * 16 + d;
    }
  return (char) v;
}

/* The piece of token `id` with special = TRUE (llama.cpp's token_to_piece). */
static void
compute_piece (const HzTokenizer *t, int32_t id, GArray *scratch, GString *out)
{
  const char *text = t->texts[id];
  gsize len = t->lens[id];
  guint32 attr = t->attrs[id];

  g_string_truncate (out, 0);
  if (attr & (HZ_TOKEN_UNKNOWN | HZ_TOKEN_CONTROL | HZ_TOKEN_USER_DEFINED))
    g_string_append_len (out, text, (gssize) len);
  else if (attr & HZ_TOKEN_NORMAL)
    {
      if (t->type == HZ_VOCAB_BPE)
        bpe_decode_text (text, len, scratch, out);
      else
        for (gsize i = 0; i < len; i++)
          {
            if (i + 2 < len && memcmp (text + i, "\xe2\x96\x81", 3) == 0)
              {
                g_string_append_c (out, ' ');
                i += 2;
              }
            else
              g_string_append_c (out, text[i]);
          }
    }
  else if (attr & HZ_TOKEN_BYTE)
    g_string_append_c (out, byte_token_value (text, len));
}

static void
setup_pieces (HzTokenizer *t)
{
  GString *p = g_string_new (NULL);
  g_autoptr(GArray) scratch = g_array_new (FALSE, FALSE, sizeof (uint32_t));

  t->pieces = g_new (const char *, t->n_vocab);
  t->piece_lens = g_new (guint32, t->n_vocab);
  for (int32_t i = 0; i < t->n_vocab; i++)
    {
      compute_piece (t, i, scratch, p);
      t->pieces[i] = g_string_chunk_insert_len (t->chunk, p->str, (gssize) p->len);
      t->piece_lens[i] = (guint32) p->len;
    }
  g_string_free (p, TRUE);
}

/* ---- public API ---- */

HzTokenizer *
hz_tokenizer_new_from_gguf (const HzGguf *g, GError **error)
{
  g_autoptr(HzTokenizer) t = NULL;

  g_return_val_if_fail (g != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  t = g_new0 (HzTokenizer, 1);
  t->chunk = g_string_chunk_new (1 << 20);
  if (!setup_model (t, g, error) || !load_tokens (t, g, error))
    return NULL;
  for (int32_t i = 0; i < t->n_vocab; i++)
    t->max_token_len = MAX (t->max_token_len, t->lens[i]);
  if (t->type == HZ_VOCAB_BPE && !load_merges (t, g, error))
    return NULL;
  init_byte_tables (t);
  if (!setup_specials (t, g, error))
    return NULL;
  setup_special_cache (t, g);
  setup_pieces (t);
  return g_steal_pointer (&t);
}

void
hz_tokenizer_free (HzTokenizer *t)
{
  if (t == NULL)
    return;
  hz_strtab_clear (&t->strtab);
  hz_pairtab_clear (&t->merges);
  hz_pre_splitter_free (t->splitter);
  if (t->chunk)
    g_string_chunk_free (t->chunk);
  g_free (t->texts);
  g_free (t->lens);
  g_free (t->scores);
  g_free (t->attrs);
  g_free (t->special);
  g_free (t->eog);
  g_free (t->pieces);
  g_free (t->piece_lens);
  g_free (t);
}

int32_t
hz_tokenizer_n_vocab (const HzTokenizer *t)
{
  return t->n_vocab;
}

HzToken
hz_tokenizer_bos (const HzTokenizer *t)
{
  return t->bos;
}

HzToken
hz_tokenizer_eos (const HzTokenizer *t)
{
  return t->eos;
}

HzToken
hz_tokenizer_eot (const HzTokenizer *t)
{
  return t->eot;
}

gboolean
hz_tokenizer_add_bos (const HzTokenizer *t)
{
  return t->add_bos;
}

gboolean
hz_tokenizer_add_eos (const HzTokenizer *t)
{
  return t->add_eos;
}

gboolean
hz_tokenizer_is_eog (const HzTokenizer *t, HzToken id)
{
  return id >= 0 &&
         bsearch (&id, t->eog, t->n_eog, sizeof (int32_t),
                  (int (*) (const void *, const void *)) cmp_int32) != NULL;
}

HzTokenAttr
hz_tokenizer_attr (const HzTokenizer *t, HzToken id)
{
  if (id < 0 || id >= t->n_vocab)
    return 0;
  return (HzTokenAttr) (t->attrs[id] & HZ_TOKEN_ATTR_PUBLIC_MASK);
}

const char *
hz_tokenizer_token_text (const HzTokenizer *t, HzToken id)
{
  return (id >= 0 && id < t->n_vocab) ? t->texts[id] : NULL;
}

HzToken
hz_tokenizer_find (const HzTokenizer *t, const char *text)
{
  int32_t id = hz_strtab_lookup (&t->strtab, text, strlen (text));
  return id < t->n_vocab ? id : -1;
}

gsize
hz_tokenizer_piece (const HzTokenizer *t, HzToken id, gboolean special, char *buf,
                    gsize size)
{
  gsize n;

  if (id < 0 || id >= t->n_vocab)
    return 0;
  if (!special && (t->attrs[id] & (HZ_TOKEN_UNKNOWN | HZ_TOKEN_CONTROL)))
    return 0;
  n = t->piece_lens[id];
  if (buf != NULL && size > 0)
    memcpy (buf, t->pieces[id], MIN (n, size));
  return n;
}

/* llama.cpp's clean_up_tokenization_spaces passes, in place (llama_vocab::detokenize). */
static gsize
clean_spaces (char *s, gsize total)
{
  gsize n, i, n1, n2, n3;

  /* " ?", " !", " .", " ," -> drop the space */
  n1 = total;
  n = n1 ? 1 : 0;
  for (i = 1; i < n1; i++)
    {
      char x = s[i];
      if (s[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ','))
        n--;
      s[n++] = x;
    }
  /* " ' " -> "'" */
  n2 = n;
  n = n2 ? 1 : 0;
  for (i = 1; i < n2; i++)
    {
      char x = s[i];
      if (x == '\'' && i + 1 < n2 && s[i - 1] == ' ' && s[i + 1] == ' ')
        {
          n--;
          s[++i] = '\0';
        }
      s[n++] = x;
    }
  /* " 's", " 'm", " 're", " 've" -> drop the space */
  n3 = n;
  n = n3 ? 1 : 0;
  for (i = 1; i < n3; i++)
    {
      char x = s[i];
      if (s[i - 1] == ' ' && x == '\'' && i + 1 < n3)
        {
          char x1 = s[i + 1];
          if (x1 == 's' || x1 == 'm')
            n--;
          else if (x1 != 't' && x1 != 'd' && i + 2 < n3)
            {
              char x2 = s[i + 2];
              if ((x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e'))
                n--;
            }
        }
      s[n++] = x;
    }
  return n;
}

char *
hz_tokenizer_decode (const HzTokenizer *t, const HzToken *ids, gsize n, gboolean special)
{
  GString *out = g_string_new (NULL);
  gboolean remove_space = t->add_space_prefix;

  for (gsize i = 0; i < n; i++)
    {
      gsize len = hz_tokenizer_piece (t, ids[i], special, NULL, 0);
      const char *p = len ? t->pieces[ids[i]] : "";
      if (remove_space && len > 0 && p[0] == ' ')
        p++, len--;
      remove_space = FALSE;
      g_string_append_len (out, p, (gssize) len);
    }
  if (t->clean_spaces)
    g_string_truncate (out, clean_spaces (out->str, out->len));
  return g_string_free (out, FALSE);
}

/* ---- streaming detokenizer ---- */

struct _HzDetokenizer {
  const HzTokenizer *t;
  gboolean special;
  GString *pending;   /* bytes not yet returned (an incomplete UTF-8 sequence) */
  GString *out;
};

HzDetokenizer *
hz_detokenizer_new (const HzTokenizer *t, gboolean special)
{
  HzDetokenizer *d = g_new0 (HzDetokenizer, 1);
  d->t = t;
  d->special = special;
  d->pending = g_string_new (NULL);
  d->out = g_string_new (NULL);
  return d;
}

/* Move complete characters from pending to out; invalid bytes become U+FFFD. With
 * `flush`, an incomplete tail also becomes one U+FFFD. */
static const char *
drain (HzDetokenizer *d, gboolean flush)
{
  const char *p = d->pending->str;
  gsize len = d->pending->len, i = 0;

  g_string_truncate (d->out, 0);
  while (i < len)
    {
      gunichar c = g_utf8_get_char_validated (p + i, (gssize) (len - i));
      if (c == (gunichar) -2)
        {
          if (!flush)
            break;
          g_string_append (d->out, "\xef\xbf\xbd");
          i = len;
        }
      else if (c == (gunichar) -1)
        {
          g_string_append (d->out, "\xef\xbf\xbd");
          i++;
        }
      else
        {
          gsize n = c == 0 ? 1 : (gsize) g_unichar_to_utf8 (c, NULL);
          g_string_append_len (d->out, p + i, (gssize) n);
          i += n;
        }
    }
  g_string_erase (d->pending, 0, (gssize) i);
  return d->out->str;
}

const char *
hz_detokenizer_push_final (HzDetokenizer *d, HzToken id, gboolean final)
{
  gsize len = hz_tokenizer_piece (d->t, id, d->special, NULL, 0);
  if (len > 0)
    g_string_append_len (d->pending, d->t->pieces[id], (gssize) len);
  return drain (d, final);
}

const char *
hz_detokenizer_push (HzDetokenizer *d, HzToken id)
{
  return hz_detokenizer_push_final (d, id, FALSE);
}

const char *
hz_detokenizer_flush (HzDetokenizer *d)
{
  return drain (d, TRUE);
}

void
hz_detokenizer_free (HzDetokenizer *d)
{
  if (d == NULL)
    return;
  g_string_free (d->pending, TRUE);
  g_string_free (d->out, TRUE);
  g_free (d);
}
