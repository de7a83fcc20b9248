/* rec-names-judge.h — the judging rules of the names family (rec-names-judge.c), called by
 * the run finder (rec-names.c). */
#pragma once

#include "rec-names-context.h"

/** Decide what the capitalised run of tokens [a, b) (at most 6) is and add its candidate, if
 *  any: a place, a street, a person's name, or nothing. `shouting`: the text is mostly in
 *  capitals; `informal`: chat-style text. */
void hz_names_judge_run (HzScan *scan, guint a, guint b, gboolean shouting, gboolean informal);
/** hz_names_judge_lower() for a token that is no ordinary word by its class bits. */
guint hz_names_judge_lower_word (HzScan *scan, guint i);

/** Judge the lower-case token i (given name + surname pairs, names after strong cues,
 *  places in text without capitals); returns the index of the token after what it took.
 *  Most lower-case words are ordinary words: those are decided here, inline, from the
 *  class bits. */
static inline guint
hz_names_judge_lower (HzScan *scan, guint i)
{
  const HzToken *t = &scan->toks[i];
  if ((t->cls & HZ_WB (HZ_W_COMMON)) && !(t->cls & HZ_WB (HZ_W_GIVEN)) && word_end (scan, t) == t->e)
    return i + 1;
  return hz_names_judge_lower_word (scan, i);
}
