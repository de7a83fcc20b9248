/* engine/jinja/jinja-builtins.h — the globals of a chat template: range (the sandbox's, at
 * most 100 000 items), namespace, dict, raise_exception and strftime_now. */
#pragma once

#include "jinja-context.h"

G_BEGIN_DECLS

/** Binds the globals (range, namespace, dict, raise_exception, strftime_now) in @s. */
void hzj_globals_install (HzjScope *s);

G_END_DECLS
