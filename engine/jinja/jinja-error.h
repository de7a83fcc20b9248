/* engine/jinja/jinja-error.h — the interpreter's error domain, HZ_JINJA_ERROR (part of the
 * public face: jinja.h includes this header), and how its modules set an error. The ground
 * floor of engine/jinja/: every module may use it; it uses nothing of the folder. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define HZ_JINJA_ERROR (hz_jinja_error_quark ())
GQuark hz_jinja_error_quark (void);

typedef enum {
  HZ_JINJA_ERROR_SYNTAX,  /* the template does not parse (TemplateSyntaxError, ...) */
  HZ_JINJA_ERROR_RAISED,  /* the template called raise_exception() (TemplateError) */
  HZ_JINJA_ERROR_RUNTIME, /* UndefinedError, TypeError, SecurityError, ... while rendering */
  HZ_JINJA_ERROR_LIMIT,   /* a bound of HzJinjaLimits was reached */
  HZ_JINJA_ERROR_INPUT,   /* the template or a variable is not valid UTF-8, or not usable */
} HzJinjaError;

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
