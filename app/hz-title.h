/* hz-title.h — conversation titles written by the model: the prompt that asks for one and
 * the clean-up of what comes back. Pure functions; thread-safe.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/** Longest title kept, in characters. */
#define HZ_TITLE_MAX_CHARS 60

/** The user turn that asks the model for a title of the exchange (`user`, `assistant`:
 *  the first message and reply, each cut to its first 400 characters). g_free. */
char *hz_title_prompt (const char *user, const char *assistant);

/** The model's answer made a title: the first non-empty line, without a "Title:" prefix,
 *  quotes, Markdown emphasis or heading marks and trailing punctuation, whitespace
 *  collapsed, cut at a word boundary to at most HZ_TITLE_MAX_CHARS characters (with "…").
 *  NULL when nothing usable is left: empty, invalid UTF-8, control characters, fewer than
 *  two letters, or the words of a refusal/echo of the instruction. g_free. */
char *hz_title_sanitize (const char *raw);

/** The title a new chat gets from its first message `text` before the model writes one:
 *  its first line, stripped, cut to HZ_TITLE_FIRST_LINE_CHARS characters (with "…").
 *  g_free. */
char *hz_title_from_text (const char *text);

/** Longest title made from a first message, in characters. */
#define HZ_TITLE_FIRST_LINE_CHARS 48

G_END_DECLS
