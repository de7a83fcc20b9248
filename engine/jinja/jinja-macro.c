/* engine/jinja/jinja-macro.c — macro values (see jinja-macro.h). */
#include "jinja-macro.h"
#include "jinja-scope.h"

const char *
hzj_macro_name (HzjValue *macro)
{
  return macro->macro.node->kind == HZJ_N_MACRO ? macro->macro.node->name : "caller";
}

static void
macro_finalize (HzjValue *v)
{
  hzj_scope_unref (v->macro.scope);
}

static gboolean
macro_repr (HzjBuf *out, HzjValue *v)
{
  return hzj_buf_printf (out, "<Macro '%s'>", hzj_macro_name (v));
}

static const HzjObjectClass macro_class = { macro_finalize, macro_repr };

HzjValue *
hzj_macro_new (const HzjNode *node, HzjScope *scope)
{
  HzjValue *m = g_new0 (HzjValue, 1);
  m->ref = 1;
  m->kind = HZJ_MACRO;
  m->macro.klass = &macro_class;
  m->macro.node = node;
  m->macro.scope = hzj_scope_capture (scope);
  return m;
}
