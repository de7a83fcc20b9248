/* engine/jinja/jinja-tests.h — Jinja2 3.1's tests (`x is defined`, `x is string`, ...;
 * jinja-tests.c, after jinja2/tests.py).
 *
 * Tests: boolean callable defined divisibleby eq equalto escaped even false filter float
 * ge greaterthan gt in integer iterable le lessthan lower lt mapping ne none number odd
 * sameas sequence string test true undefined upper, and == != < <= > >=. The `filter`
 * test asks the environment (ctx->env->filter_exists), as Jinja2's asks env.filters. */
#pragma once

#include "jinja-context.h"

G_BEGIN_DECLS

/** Whether a test of that name exists (the parser refuses unknown ones). */
gboolean hzj_test_exists (const char *name);

/** @value is @name(@args): 1 or 0, -1 after an error. */
int hzj_test_apply (HzjCtx *ctx, const char *name, HzjValue *value, HzjArgs *args);

G_END_DECLS
