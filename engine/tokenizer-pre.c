/* engine/tokenizer-pre.c — BPE pre-tokenizers: split text into words before merging.
 *
 * A split (tokenizer-pretypes.c) is a list of regexes applied in turn; each one re-splits
 * every current word into its matches and the text between them (Hugging Face's Split
 * pre-tokenizer with behavior Isolated; llama.cpp's unicode_regex_split). Regexes run
 * through tokenizer-regex.c, except the three that nearly every model uses, which have
 * hand-written scanners over code points (as llama.cpp has for two of them):
 *  - GPT-2's 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 *  - Llama 3's (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
 *     ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
 *  - Qwen2's, which is Llama 3's with \p{N} for \p{N}{1,3}.
 * test-tokenizer checks that each scanner splits exactly as the regex matcher does.
 */
#include "tokenizer-private.h"
#include <string.h>
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

/* Case folding for the contraction letters: ASCII lower case, and U+017F LATIN SMALL
 * LETTER LONG S, whose folding is 's' (the only non-ASCII code point folding to one of
 * s t r e v m l d). */
static inline uint32_t
fold_contraction (uint32_t c)
{
  return c == 0x17F ? 's' : hz_unicode_tolower (c);
}

/* 's|'t|'re|'ve|'m|'ll|'d at pos (optionally case-insensitive); returns its length or 0. */
static gsize
match_contraction (const Scan *s, gsize pos, gboolean ci)
{
  uint32_t c1, c2;

  if (scan_cpt (s, pos) != '\'' || pos + 1 >= s->end)
    return 0;
  c1 = scan_cpt (s, pos + 1);
  if (ci)
    c1 = fold_contraction (c1);
  if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd')
    return 2;
  if (pos + 2 >= s->end)
    return 0;
  c2 = scan_cpt (s, pos + 2);
  if (ci)
    c2 = fold_contraction (c2);
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

/* ---- the split driver ---- */

typedef enum { STEP_REGEX, STEP_GPT2, STEP_LLAMA3, STEP_QWEN2 } StepKind;

typedef struct {
  StepKind kind;
  HzRegex *re;     /* always compiled (also for the scanner kinds: for equality) */
} Step;

struct _HzPreSplitter {
  Step *steps;
  guint n_steps;
};

/* Documented in tokenizer-private.h. */
HzPreSplitter *
hz_pre_splitter_new (const char *const *regexes, gboolean fast, GError **error)
{
  HzPreSplitter *sp = g_new0 (HzPreSplitter, 1);

  while (regexes[sp->n_steps] != NULL)
    sp->n_steps++;
  sp->steps = g_new0 (Step, sp->n_steps);
  for (guint i = 0; i < sp->n_steps; i++)
    {
      const char *r = regexes[i];
      Step *st = &sp->steps[i];
      st->re = hz_regex_new (r, error);
      if (st->re == NULL)
        {
          hz_pre_splitter_free (sp);
          return NULL;
        }
      st->kind = STEP_REGEX;
      if (fast && strcmp (r, hz_re_gpt2) == 0)
        st->kind = STEP_GPT2;
      else if (fast && strcmp (r, hz_re_llama3) == 0)
        st->kind = STEP_LLAMA3;
      else if (fast && strcmp (r, hz_re_qwen2) == 0)
        st->kind = STEP_QWEN2;
    }
  return sp;
}

/* Documented in tokenizer-private.h. */
void
hz_pre_splitter_free (HzPreSplitter *sp)
{
  if (sp == NULL)
    return;
  for (guint i = 0; i < sp->n_steps; i++)
    hz_regex_free (sp->steps[i].re);
  g_free (sp->steps);
  g_free (sp);
}

/* Documented in tokenizer-private.h. */
gboolean
hz_pre_splitter_equal (const HzPreSplitter *a, const HzPreSplitter *b)
{
  if (a->n_steps != b->n_steps)
    return FALSE;
  for (guint i = 0; i < a->n_steps; i++)
    if (!hz_regex_equal (a->steps[i].re, b->steps[i].re))
      return FALSE;
  return TRUE;
}

/* Matches and the gaps between them become words; an empty match only marks a boundary,
 * and the next search starts one code point further (Oniguruma's find_iter). */
static void
split_regex (Scan *s, const HzRegex *re, HzRegexScratch *scratch)
{
  gsize pos = s->ini, ms, me;

  while (pos <= s->end &&
         hz_regex_search (re, scratch, s->cpts, s->ini, s->end, pos, &ms, &me))
    {
      scan_emit (s, ms);        /* gap before the match */
      scan_emit (s, me);        /* the match */
      pos = me > ms ? me : me + 1;
    }
  scan_emit (s, s->end);
}

static void
run_step (const Step *st, HzRegexScratch *scratch, const uint32_t *cpts, GArray *in,
          GArray *out)
{
  gsize start = 0;

  for (guint i = 0; i < in->len; i++)
    {
      gsize len = g_array_index (in, gsize, i);
      Scan s = { cpts, start, start + len, start, out };
      switch (st->kind)
        {
        case STEP_GPT2:   split_gpt2 (&s); break;
        case STEP_LLAMA3: split_llama3 (&s, 3); break;
        case STEP_QWEN2:  split_llama3 (&s, 1); break;
        case STEP_REGEX:  split_regex (&s, st->re, scratch); break;
        }
      start += len;
    }
}

/* Documented in tokenizer-private.h. */
void
hz_pretokenize (const HzPreSplitter *sp, HzRegexScratch *scratch, const uint32_t *cpts,
                gsize n, GArray *lengths)
{
  g_autoptr(GArray) cur = NULL;
  g_autoptr(GArray) next = NULL;

  if (n == 0)
    return;
  cur = g_array_new (FALSE, FALSE, sizeof (gsize));
  next = g_array_new (FALSE, FALSE, sizeof (gsize));
  g_array_append_val (cur, n);
  for (guint i = 0; i < sp->n_steps; i++)
    {
      GArray *tmp;
      g_array_set_size (next, 0);
      run_step (&sp->steps[i], scratch, cpts, cur, next);
      tmp = cur, cur = next, next = tmp;
    }
  g_array_append_vals (lengths, cur->data, cur->len);
}
