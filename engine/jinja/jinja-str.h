/* engine/jinja/jinja-str.h — Python's str operations on template strings, shared by the
 * str methods (jinja-methods.c) and the filters: strip, case mapping, replace, split,
 * join, and the byte and code point helpers under them. Every string result keeps the
 * tagging of the text it came from; strings are valid UTF-8 (jinja-buf.h). */
#pragma once

#include "jinja-context.h"

G_BEGIN_DECLS

/** Bytes [@from, @to) of the string @s (at code point boundaries), with their tagging. */
HzjValue *hzj_str_sub (HzjValue *s, gsize from, gsize to);
/** The first occurrence of the @n_len bytes of @needle in the @hay_len bytes of @hay
 *  (@hay itself for an empty needle), or NULL. */
const char *hzj_bytes_find (const char *hay, gsize hay_len, const char *needle, gsize n_len);
/** Whether @c has case: upper, lower or title case (Python's "cased" characters). */
gboolean hzj_unichar_is_cased (gunichar c);

/** Python's str.strip / lstrip / rstrip: @chars a string of code points to remove, or
 *  NULL / None for white space. */
HzjValue *hzj_str_strip (HzjValue *s, HzjValue *chars, gboolean left, gboolean right);

typedef enum { HZJ_CASE_UPPER, HZJ_CASE_LOWER, HZJ_CASE_TITLE, HZJ_CASE_CAPITALIZE,
               HZJ_CASE_SWAPCASE } HzjCase;
/** Python's str.upper / lower / title / capitalize / swapcase (full Unicode case mapping,
 *  one character at a time). */
HzjValue *hzj_str_case (HzjValue *s, HzjCase mode);

/** Python's str.replace(old, new, count): @count < 0 replaces all. */
HzjValue *hzj_str_replace (HzjCtx *ctx, HzjValue *s, HzjValue *old, HzjValue *new_, gint64 count);

/** Python's str.split(sep, maxsplit) (@sep NULL or None: runs of white space), or
 *  str.rsplit when @from_right. A list of strings; NULL (ValueError) for an empty @sep. */
HzjValue *hzj_str_split (HzjCtx *ctx, HzjValue *s, HzjValue *sep, gint64 maxsplit, gboolean from_right);

/** @sep joined between the @items: with @convert, str() of each (the join filter);
 *  without, items must be strings (str.join's TypeError otherwise). */
HzjValue *hzj_str_join (HzjCtx *ctx, HzjValue *sep, GPtrArray *items, gboolean convert);

G_END_DECLS
