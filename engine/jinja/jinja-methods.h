/* engine/jinja/jinja-methods.h — the Python methods templates call on values
 * (str.strip/split/startswith/replace/format/..., dict.get/items/keys/values,
 * list.index/count) as bound methods (the string operations they share with the filters
 * are jinja-str.h, string formatting jinja-format.h).
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

G_END_DECLS
