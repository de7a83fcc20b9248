/* engine/jinja/jinja-filters.h — Jinja2 3.1's built-in filters (jinja-filters.c, after
 * jinja2/filters.py, with transformers' tojson) and tests (jinja-tests.c, after
 * jinja2/tests.py) that chat templates use, and the globals of a chat template: range (the
 * sandbox's, at most 100 000 items), namespace, dict, raise_exception and strftime_now
 * (jinja-builtins.c).
 *
 * Filters: abs attr batch capitalize center count d default dictsort e escape first float
 * format forceescape indent int items join last length list lower map max min reject
 * rejectattr replace reverse round safe select selectattr sort string sum title tojson
 * trim truncate unique upper wordcount.
 * Tests: boolean callable defined divisibleby eq equalto escaped even false filter float
 * ge greaterthan gt in integer iterable le lessthan lower lt mapping ne none number odd
 * sameas sequence string test true undefined upper, and == != < <= > >=. */
#pragma once

#include "jinja-eval.h"

G_BEGIN_DECLS

/** Whether a filter or test of that name exists (the parser refuses unknown ones). */
gboolean hzj_filter_exists (const char *name);
gboolean hzj_test_exists (const char *name);

/** @value|@name(@args): a new reference, or NULL after an error (an unknown filter is a
 *  TemplateRuntimeError "No filter named 'x' found."). */
HzjValue *hzj_filter_apply (HzjCtx *ctx, const char *name, HzjValue *value, HzjArgs *args);
/** @value is @name(@args): 1 or 0, -1 after an error. */
int hzj_test_apply (HzjCtx *ctx, const char *name, HzjValue *value, HzjArgs *args);

/** Binds the globals (range, namespace, dict, raise_exception, strftime_now) in @s. */
void hzj_globals_install (HzjScope *s);

G_END_DECLS
