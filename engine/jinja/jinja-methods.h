/* engine/jinja/jinja-methods.h — the Python methods templates call on values
 * (str.strip/split/startswith/replace/format/..., dict.get/items/keys/values,
 * list.index/count), and the string helpers the filters share with them (string
 * formatting is jinja-format.h).
 *
 * As Jinja2's ImmutableSandboxedEnvironment, methods that would change a list or dict
 * (append, pop, update, ...) exist but are refused: reading them gives an Undefined that
 * raises SecurityError when used. dict.keys/values/items give lists (Python's views
 * iterate the same). Every string result keeps the tagging of the text it came from. */
#pragma once

#include "jinja-context.h"

G_BEGIN_DECLS

/**
 * hzj_method_get:
 * The method @name of @obj bound to it (a new reference), or NULL when @obj has no such
 * method; *@unsafe is set when it exists but the sandbox refuses it.
 */
HzjValue *hzj_method_get (HzjValue *obj, const char *name, gboolean *unsafe);

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
