/* engine/tokenizer-regex.h — a small backtracking regex matcher over code points, for the
 * pre-tokenizer patterns of tokenizer-pretypes.c (internal to libhzengine).
 *
 * It implements the constructs those patterns use, with the semantics of Oniguruma as
 * Hugging Face `tokenizers` runs it (the `Split` pre-tokenizer's Regex):
 *  - alternation `|` (leftmost alternative first), groups `(…)` `(?:…)`, case-insensitive
 *    groups `(?i:…)` (Unicode simple case folding: 'ſ' matches `s`), lookahead `(?=…)`
 *    `(?!…)` (atomic, as in Oniguruma);
 *  - quantifiers `? * + {n} {n,} {n,m}`, greedy, lazy (`??` …) or possessive (`?+` `++` …);
 *  - `.` (any code point but \n), anchors `^` `$` (start/end of the subject or next to \n,
 *    Ruby semantics), `\b` `\B`;
 *  - classes `[…]` with ranges, negation, nested classes and `&&` intersection;
 *    `\s` (Unicode White_Space), `\d` (Nd), `\w` (L, M, N, Pc), their negations, and
 *    `\p{…}`/`\P{…}` for the general categories L Lu Ll Lt Lm Lo M Mn Mc Me N Nd Nl No
 *    P Pc Pd Ps Pe Pi Pf Po S Sm Sc Sk So Z Zs Zl Zp C Cc Cf Co Cn and the script Han;
 *  - escapes \t \n \r \f \v \e \0 \xHH \x{H…} \uHHHH and any escaped punctuation.
 * Anything else (backreferences, lookbehind, a repeated group that can match empty…) is
 * refused when compiling, so an unsupported pattern never runs with other semantics.
 *
 * Why a matcher rather than one hand-written splitter per pattern (as llama.cpp has for
 * four of them): the table holds about forty distinct patterns that combine the same dozen
 * constructs in different ways; a small matcher keeps the patterns as data, checkable
 * against Hugging Face's own tokenizer (tests/reference/pretok_reference.js), and lets the
 * Hugging Face importer compare a tokenizer.json's Split regex with the table by compiled
 * program (hz_regex_equal) instead of by spelling. The three patterns nearly every model
 * uses keep their scanners for speed (tokenizer-pre.c), tested equal to this matcher.
 *
 * Categories come from GLib's Unicode tables (g_unichar_type, g_unichar_get_script).
 * Thread safety: a compiled HzRegex is immutable and may be used from any thread; an
 * HzRegexScratch belongs to one thread at a time.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

typedef struct _HzRegex HzRegex;

/** Backtracking stack reused across searches (one per thread / session). */
typedef struct {
  GArray *stack;
} HzRegexScratch;

/** Compile `pattern` (UTF-8). Returns NULL and sets `error` (G_REGEX_ERROR,
 *  G_REGEX_ERROR_COMPILE) with the offending byte offset for a syntax error or an
 *  unsupported construct. */
HzRegex *hz_regex_new (const char *pattern, GError **error);
void     hz_regex_free (HzRegex *re);
/** TRUE if `a` and `b` compiled to the same program (so they match the same way):
 *  spellings such as "\\r" and a literal CR, or "(?:x)" and "(x)", compare equal. */
gboolean hz_regex_equal (const HzRegex *a, const HzRegex *b);

void     hz_regex_scratch_init (HzRegexScratch *s);
void     hz_regex_scratch_clear (HzRegexScratch *s);

/** Leftmost match of `re` in the subject cpts[ini, end) starting at or after `from`
 *  (ini <= from <= end; a match may be empty, also at `end`). Anchors and lookaheads see
 *  only the subject. Returns FALSE when there is none, else TRUE with [*m_start, *m_end)
 *  in absolute positions. */
gboolean hz_regex_search (const HzRegex *re, HzRegexScratch *scratch, const uint32_t *cpts,
                          gsize ini, gsize end, gsize from, gsize *m_start, gsize *m_end);

G_END_DECLS
