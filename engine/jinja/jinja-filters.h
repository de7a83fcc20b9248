/* engine/jinja/jinja-filters.h — Jinja2 3.1's built-in filters that chat templates use
 * (jinja-filters.c, after jinja2/filters.py, with transformers' tojson).
 *
 * Filters: abs attr batch capitalize center count d default dictsort e escape first float
 * format forceescape indent int items join last length list lower map max min reject
 * rejectattr replace reverse round safe select selectattr sort string sum title tojson
 * trim truncate unique upper wordcount. */
#pragma once

#include "jinja-context.h"

G_BEGIN_DECLS

/** Whether a filter of that name exists (the parser refuses unknown ones). */
gboolean hzj_filter_exists (const char *name);

/** @value|@name(@args): a new reference, or NULL after an error (an unknown filter is a
 *  TemplateRuntimeError "No filter named 'x' found."). */
HzjValue *hzj_filter_apply (HzjCtx *ctx, const char *name, HzjValue *value, HzjArgs *args);

G_END_DECLS
