/* engine/jinja/jinja-lookup.h — attribute and item lookup with Jinja2's sandbox rules
 * (SandboxedEnvironment.getattr / getitem): methods come bound to their object, names
 * starting with "__" are refused (an Undefined that raises SecurityError when used), and
 * what is missing is an Undefined that says what was looked up. Each returns a new
 * reference, NULL after an error. */
#pragma once

#include "jinja-context.h"

G_BEGIN_DECLS

/** obj.name with Jinja2's sandboxed getattr: a method or attribute first, then the item. */
HzjValue *hzj_getattr (HzjCtx *ctx, HzjValue *obj, const char *name);
/** obj[key] with Jinja2's getitem: the item first, then (for a string key) the attribute;
 *  what is missing is Undefined. */
HzjValue *hzj_getitem (HzjCtx *ctx, HzjValue *obj, HzjValue *key);
/** Jinja2's attribute path of filters (map, selectattr, sort, ...): "a.b.0" looked up
 *  part by part with getitem. */
HzjValue *hzj_get_path (HzjCtx *ctx, HzjValue *obj, HzjValue *path);

G_END_DECLS
