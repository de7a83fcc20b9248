/* engine/tokenizer-pre.c — BPE pre-tokenizers: split text into words before merging.
 *
 * llama.cpp (src/unicode.cpp, unicode_regex_split) applies a list of regexes in turn; each
 * regex re-splits every current word into its matches and the text between them. Two of
 * the regexes have hand-written fast paths there (GPT-2's and Llama 3's); the others run
 * through std::regex over a "collapsed" text where every non-ASCII code point is replaced
 * by one byte per Unicode category. This file implements every regex used by the supported
 * pre-tokenizer families as a scanner over code points:
 *  - the GPT-2 and Llama-3 scanners mirror llama.cpp's custom splitters (including their
 *    corner cases, such as \s+(?!\S) at the end of a fragment);
 *  - the remaining, simple regexes are matched with regex_iterator semantics (leftmost
 *    match, greedy, first alternative wins) using the category of each code point; \s is
 *    ASCII \t\n\v\f\r and space plus non-ASCII White_Space, as in the collapsed text.
 * Qwen2's regex differs from Llama 3's only in \p{N} (one digit instead of up to three),
 * so it uses the Llama-3 scanner with a digit group of 1.
 */
#include "tokenizer-private.h"
#include "unicode.h"

#define OUT_OF_RANGE 0xFFFFFFFFu

/* A fragment [ini, end) of the code point array being split. */
typedef struct {
  const uint32_t *cpts;
  gsize ini, end;
  gsize prev_end;   /* end of the last emitted word */
  GArray *out;      /* gsize lengths */
} Scan;

static inline uint32_t
scan_cpt (const Scan *s, gsize pos)
{
  return (pos >= s->ini && pos < s->end) ? s->cpts[pos] : OUT_OF_RANGE;
}

static inline guint
scan_flags (const Scan *s, gsize pos)
{
  return (pos >= s->ini && pos < s->end) ? hz_unicode_flags (s->cpts[pos]) : 0;
}

/* Emit the word [prev_end, end) if non-empty; returns its length. */
static gsize
scan_emit (Scan *s, gsize end)
{
  gsize len = end - s->prev_end;
  if (len > 0)
    g_array_append_val (s->out, len);
  s->prev_end = end;
  return len;
}

#define IS_WS(f)     (((f) & HZ_UCF_WHITESPACE) != 0)
#define IS_LETTER(f) (((f) & HZ_UCF_LETTER) != 0)
#define IS_NUMBER(f) (((f) & HZ_UCF_NUMBER) != 0)

/* 's|'t|'re|'ve|'m|'ll|'d at pos (optionally case-insensitive); returns its length or 0. */
static gsize
match_contraction (const Scan *s, gsize pos, gboolean ci)
{
  uint32_t c1, c2;

  if (scan_cpt (s, pos) != '\'' || pos + 1 >= s->end)
    return 0;
  c1 = scan_cpt (s, pos + 1);
  if (ci)
    c1 = hz_unicode_tolower (c1);
  if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd')
    return 2;
  if (pos + 2 >= s->end)
    return 0;
  c2 = scan_cpt (s, pos + 2);
  if (ci)
    c2 = hz_unicode_tolower (c2);
  if ((c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') || (c1 == 'l' && c2 == 'l'))
    return 3;
  return 0;
}

/* GPT-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 * (llama.cpp unicode_regex_split_custom_gpt2). */
static void
split_gpt2 (Scan *s)
{
  gsize pos = s->ini;

  while (pos < s->end)
    {
      uint32_t cpt = scan_cpt (s, pos);
      guint flags = scan_flags (s, pos), f2;
      gsize n, nws;

      if ((n = match_contraction (s, pos, FALSE)) > 0)
        {
          pos += scan_emit (s, pos + n);
          continue;
        }

      f2 = (cpt == ' ') ? scan_flags (s, pos + 1) : flags;
      if (IS_LETTER (f2))
        {
          pos += (cpt == ' ');
          while (IS_LETTER (f2))
            f2 = scan_flags (s, ++pos);
          scan_emit (s, pos);
          continue;
        }
      if (IS_NUMBER (f2))
        {
          pos += (cpt == ' ');
          while (IS_NUMBER (f2))
            f2 = scan_flags (s, ++pos);
          scan_emit (s, pos);
          continue;
        }
      if (!(f2 & (HZ_UCF_WHITESPACE | HZ_UCF_LETTER | HZ_UCF_NUMBER)) && f2)
        {
          pos += (cpt == ' ');
          while (!(f2 & (HZ_UCF_WHITESPACE | HZ_UCF_LETTER | HZ_UCF_NUMBER)) && f2)
            f2 = scan_flags (s, ++pos);
          scan_emit (s, pos);
          continue;
        }

      nws = 0;
      while (IS_WS (scan_flags (s, pos + nws)))
        nws++;
      if (nws > 1 && scan_cpt (s, pos + nws) != OUT_OF_RANGE)
        {
          pos += nws - 1;            /* \s+(?!\S) */
          scan_emit (s, pos);
          continue;
        }
      if (nws > 0)
        {
          pos += nws;                /* \s+ */
          scan_emit (s, pos);
          continue;
        }
      scan_emit (s, ++pos);          /* no match */
    }
}

/* Llama 3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,max_digits}|
 *  ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
 * (llama.cpp unicode_regex_split_custom_llama3; max_digits 1 gives Qwen2's regex). */
static void
split_llama3 (Scan *s, gsize max_digits)
{
  gsize pos = s->ini;

  while (pos < s->end)
    {
      uint32_t cpt = scan_cpt (s, pos);
      guint flags = scan_flags (s, pos), f2;
      gsize n, nws, last_rn;

      if ((n = match_contraction (s, pos, TRUE)) > 0)
        {
          pos += scan_emit (s, pos + n);
          continue;
        }

      /* [^\r\n\p{L}\p{N}]?\p{L}+ */
      if (!(cpt == '\r' || cpt == '\n' || IS_NUMBER (flags)))
        {
          if (IS_LETTER (flags) || IS_LETTER (scan_flags (s, pos + 1)))
            {
              pos++;
              while (IS_LETTER (scan_flags (s, pos)))
                pos++;
              scan_emit (s, pos);
              continue;
            }
        }

      /* \p{N}{1,max_digits} */
      if (IS_NUMBER (flags))
        {
          gsize ini = pos;
          while (IS_NUMBER (scan_flags (s, pos)))
            {
              if (++pos - ini >= max_digits)
                {
                  scan_emit (s, pos);
                  ini = pos;
                }
            }
          scan_emit (s, pos);
          continue;
        }

      /*  ?[^\s\p{L}\p{N}]+[\r\n]* */
      f2 = (cpt == ' ') ? scan_flags (s, pos + 1) : flags;
      if (!(f2 & (HZ_UCF_WHITESPACE | HZ_UCF_LETTER | HZ_UCF_NUMBER)) && flags)
        {
          uint32_t c2;
          pos += (cpt == ' ');
          while (!(f2 & (HZ_UCF_WHITESPACE | HZ_UCF_LETTER | HZ_UCF_NUMBER)) && f2)
            f2 = scan_flags (s, ++pos);
          c2 = scan_cpt (s, pos);
          while (c2 == '\r' || c2 == '\n')
            c2 = scan_cpt (s, ++pos);
          scan_emit (s, pos);
          continue;
        }

      nws = 0;
      last_rn = 0;
      while (IS_WS (scan_flags (s, pos + nws)))
        {
          uint32_t c2 = scan_cpt (s, pos + nws);
          if (c2 == '\r' || c2 == '\n')
            last_rn = pos + nws + 1;
          nws++;
        }
      if (last_rn > 0)
        {
          pos = last_rn;             /* \s*[\r\n]+ */
          scan_emit (s, pos);
          continue;
        }
      if (nws > 1 && scan_cpt (s, pos + nws) != OUT_OF_RANGE)
        {
          pos += nws - 1;            /* \s+(?!\S) */
          scan_emit (s, pos);
          continue;
        }
      if (nws > 0)
        {
          pos += nws;                /* \s+ */
          scan_emit (s, pos);
          continue;
        }
      scan_emit (s, ++pos);          /* no match */
    }
}

/* ---- simple regexes, matched at a position (0 = no match there) ---- */

/* \s of the collapsed std::regex text: ASCII isspace in the C locale, plus non-ASCII
 * White_Space (collapsed to \v). */
static inline gboolean
re_space (uint32_t c)
{
  return c < 128 ? (c == ' ' || (c >= '\t' && c <= '\r'))
                 : IS_WS (hz_unicode_flags (c));
}

static inline gboolean
re_cat (uint32_t c, guint cat)
{
  guint f = hz_unicode_flags (c);
  /* non-ASCII white space collapses to \v, which belongs to no category */
  return (f & cat) != 0 && !(c >= 128 && IS_WS (f));
}

typedef gsize (*MatchFn) (const Scan *s, gsize pos);

/* [\r\n] */
static gsize
m_newline (const Scan *s, gsize pos)
{
  uint32_t c = s->cpts[pos];
  return (c == '\r' || c == '\n') ? 1 : 0;
}

/* \s?X+ for a category X */
static gsize
m_space_opt_run (const Scan *s, gsize pos, guint cat)
{
  gsize p = pos;
  if (re_space (s->cpts[p]) && p + 1 < s->end && re_cat (s->cpts[p + 1], cat))
    p++;
  if (!re_cat (s->cpts[p], cat))
    return 0;
  while (p < s->end && re_cat (s->cpts[p], cat))
    p++;
  return p - pos;
}

static gsize
m_space_letters (const Scan *s, gsize pos)
{
  return m_space_opt_run (s, pos, HZ_UCF_LETTER);
}

static gsize
m_space_punct (const Scan *s, gsize pos)
{
  return m_space_opt_run (s, pos, HZ_UCF_PUNCTUATION);
}

/* [一-龥ࠀ-一가-퟿]+ : U+0800..U+9FA5 and U+AC00..U+D7FF (std::wregex over code points
 * with non-ASCII white space replaced by \v, so U+3000 does not match). */
static inline gboolean
is_deepseek_cjk (uint32_t c)
{
  return ((c >= 0x0800 && c <= 0x9FA5) || (c >= 0xAC00 && c <= 0xD7FF)) &&
         !IS_WS (hz_unicode_flags (c));
}

static gsize
m_cjk_run (const Scan *s, gsize pos)
{
  gsize p = pos;
  while (p < s->end && is_deepseek_cjk (s->cpts[p]))
    p++;
  return p - pos;
}

/* \p{N} */
static gsize
m_number (const Scan *s, gsize pos)
{
  return re_cat (s->cpts[pos], HZ_UCF_NUMBER) ? 1 : 0;
}

/* \p{N}+ */
static gsize
m_numbers (const Scan *s, gsize pos)
{
  gsize p = pos;
  while (p < s->end && re_cat (s->cpts[p], HZ_UCF_NUMBER))
    p++;
  return p - pos;
}

/* [0-9][0-9][0-9] */
static gsize
m_digits3 (const Scan *s, gsize pos)
{
  if (pos + 3 > s->end)
    return 0;
  for (gsize i = 0; i < 3; i++)
    if (s->cpts[pos + i] < '0' || s->cpts[pos + i] > '9')
      return 0;
  return 3;
}

/* [\p{P}\$\+<=>\^~\|]+ (default) and the same with ` (falcon) */
static gsize
m_punct_run_impl (const Scan *s, gsize pos, gboolean backtick)
{
  gsize p = pos;
  while (p < s->end)
    {
      uint32_t c = s->cpts[p];
      if (!(re_cat (c, HZ_UCF_PUNCTUATION) || c == '$' || c == '+' || c == '<' || c == '=' ||
            c == '>' || c == '^' || c == '~' || c == '|' || (backtick && c == '`')))
        break;
      p++;
    }
  return p - pos;
}

static gsize
m_punct_run (const Scan *s, gsize pos)
{
  return m_punct_run_impl (s, pos, FALSE);
}

static gsize
m_punct_run_bt (const Scan *s, gsize pos)
{
  return m_punct_run_impl (s, pos, TRUE);
}

/* regex_iterator over the fragment: matches and the gaps between them become words. */
static void
split_regex (Scan *s, MatchFn match)
{
  gsize pos = s->ini;

  while (pos < s->end)
    {
      gsize n = match (s, pos);
      if (n == 0)
        {
          pos++;
          continue;
        }
      scan_emit (s, pos);       /* gap before the match */
      scan_emit (s, pos + n);   /* the match */
      pos += n;
    }
  scan_emit (s, s->end);
}

/* One pass of the regex list. */
typedef enum {
  PASS_GPT2, PASS_LLAMA3, PASS_QWEN2, PASS_REGEX,
} PassKind;

typedef struct {
  PassKind kind;
  MatchFn  match;
} Pass;

static void
run_pass (const Pass *p, const uint32_t *cpts, GArray *in, GArray *out)
{
  gsize start = 0;

  for (guint i = 0; i < in->len; i++)
    {
      gsize len = g_array_index (in, gsize, i);
      Scan s = { cpts, start, start + len, start, out };
      switch (p->kind)
        {
        case PASS_GPT2:   split_gpt2 (&s); break;
        case PASS_LLAMA3: split_llama3 (&s, 3); break;
        case PASS_QWEN2:  split_llama3 (&s, 1); break;
        case PASS_REGEX:  split_regex (&s, p->match); break;
        }
      start += len;
    }
}

void
hz_pretokenize (HzPreType pre, const uint32_t *cpts, gsize n, GArray *lengths)
{
  static const Pass p_default[] = {
    { PASS_REGEX, m_punct_run }, { PASS_GPT2, NULL }, { PASS_REGEX, m_numbers },
    { PASS_REGEX, m_digits3 },
  };
  static const Pass p_llama3[] = { { PASS_LLAMA3, NULL } };
  static const Pass p_qwen2[] = { { PASS_QWEN2, NULL } };
  static const Pass p_gpt2[] = { { PASS_GPT2, NULL } };
  static const Pass p_starcoder[] = { { PASS_REGEX, m_number }, { PASS_GPT2, NULL } };
  static const Pass p_deepseek_coder[] = {
    { PASS_REGEX, m_newline }, { PASS_REGEX, m_space_letters },
    { PASS_REGEX, m_space_punct }, { PASS_REGEX, m_cjk_run }, { PASS_REGEX, m_number },
  };
  static const Pass p_falcon[] = {
    { PASS_REGEX, m_punct_run_bt }, { PASS_GPT2, NULL }, { PASS_REGEX, m_digits3 },
  };
  const Pass *passes;
  gsize n_passes;
  g_autoptr(GArray) cur = NULL;
  g_autoptr(GArray) next = NULL;

#define USE(arr) (passes = (arr), n_passes = G_N_ELEMENTS (arr))
  switch (pre)
    {
    case HZ_PRE_LLAMA3:         USE (p_llama3); break;
    case HZ_PRE_QWEN2:          USE (p_qwen2); break;
    case HZ_PRE_GPT2:           USE (p_gpt2); break;
    case HZ_PRE_STARCODER:      USE (p_starcoder); break;
    case HZ_PRE_DEEPSEEK_CODER: USE (p_deepseek_coder); break;
    case HZ_PRE_FALCON:         USE (p_falcon); break;
    case HZ_PRE_DEFAULT:
    default:                    USE (p_default); break;
    }
#undef USE

  if (n == 0)
    return;
  cur = g_array_new (FALSE, FALSE, sizeof (gsize));
  next = g_array_new (FALSE, FALSE, sizeof (gsize));
  g_array_append_val (cur, n);
  for (gsize i = 0; i < n_passes; i++)
    {
      GArray *tmp;
      g_array_set_size (next, 0);
      run_pass (&passes[i], cpts, cur, next);
      tmp = cur, cur = next, next = tmp;
    }
  g_array_append_vals (lengths, cur->data, cur->len);
}
