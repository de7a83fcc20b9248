/* engine/jinja/jinja-error.h — how the interpreter's modules report errors. */
#pragma once

#include <glib.h>
#include "jinja.h"

G_BEGIN_DECLS

/**
 * hzj_error_set:
 * @error: (nullable): where to put the error (left alone when it is set already)
 * @code: a HzJinjaError
 * @pyclass: the Python exception Jinja2 raises for it ("TemplateSyntaxError", "TypeError")
 * @line: the template line (1-based), or 0 when unknown
 *
 * Sets "@pyclass: MESSAGE (template line @line)" in HZ_JINJA_ERROR.
 */
void hzj_error_set (GError **error, int code, const char *pyclass, int line,
                    const char *fmt, ...) G_GNUC_PRINTF (5, 6);

G_END_DECLS
