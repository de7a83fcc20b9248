/* engine/jinja/jinja-parse-stream.h — what the parser's two halves share (jinja-parse-expr.c,
 * jinja-parser.c): the token stream with Jinja2's TokenStream operations (the current
 * token, look-ahead, skip_if, expect), syntax errors, and the bounds on nesting and on the
 * height of the tree. */
#pragma once

#include <glib.h>
#include <string.h>
#include "jinja-ast.h"
#include "jinja-lexer.h"

G_BEGIN_DECLS

/* how deep brackets, operators and blocks may nest */
#define HZJ_MAX_NESTING 200

/* the parser's state: the tokens of hzj_lex(), the position, the first error */
typedef struct {
  GArray *toks;
  guint pos;
  GError **error;
  gboolean failed;
  guint nesting;
  guint loops;                /* for loops around the current statement (break/continue) */
  GPtrArray *end_stack;       /* of const char *const * (the end tags looked for) */
  GPtrArray *tag_stack;       /* of const char * (the statements being parsed) */
} HzjParser;

static inline HzjToken *
cur (HzjParser *p)
{
  return &g_array_index (p->toks, HzjToken, p->pos);
}

static inline HzjToken *
look (HzjParser *p)
{
  return &g_array_index (p->toks, HzjToken, MIN (p->pos + 1, p->toks->len - 1));
}

static inline HzjToken *
next (HzjParser *p)
{
  HzjToken *t = cur (p);
  if (t->kind != HZJ_T_EOF)
    p->pos++;
  return t;
}

static inline gboolean
is_name (HzjToken *t, const char *name)
{
  return t->kind == HZJ_T_NAME && strcmp (t->text, name) == 0;
}

static inline gboolean
is_op (HzjToken *t, const char *op)
{
  return t->kind == HZJ_T_OP && strcmp (t->op, op) == 0;
}

/* TokenStream.skip_if: consumes the current token when it matches */
static inline gboolean
skip_if (HzjParser *p, gboolean match)
{
  if (match)
    next (p);
  return match;
}

#define skip_op(p, op) skip_if ((p), is_op (cur (p), (op)))
#define skip_name(p, name) skip_if ((p), is_name (cur (p), (name)))

/* the first syntax error wins: "TemplateSyntaxError: MESSAGE (template line @line)" in
 * p->error (HZ_JINJA_ERROR_SYNTAX). Returns NULL for `return hzj_parse_fail_at (...)`. */
gpointer hzj_parse_fail_at (HzjParser *p, int line, const char *fmt, ...) G_GNUC_PRINTF (3, 4);
/** TokenStream.expect: consumes the current token when @ok, else fails naming @what (an
 *  operator, a name, or a token kind's description) and the token found. */
gboolean hzj_parse_expect (HzjParser *p, gboolean ok, const char *what);
/** hzj_parse_expect() of the operator @op. */
gboolean hzj_parse_expect_op (HzjParser *p, const char *op);
/** hzj_parse_expect() of a token of @kind. */
gboolean hzj_parse_expect_kind (HzjParser *p, HzjTokKind kind);
/** A name token's text (newly allocated), or NULL after the error. */
char *hzj_parse_expect_name (HzjParser *p);
/** Sets @n's height from its children; FALSE (error set) past the bound. */
gboolean hzj_parse_measure (HzjParser *p, HzjNode *n);
/** @n measured, or freed and NULL. */
HzjNode *hzj_parse_sealed (HzjParser *p, HzjNode *n);
/** A sealed node of @kind with the children @a and @b. */
HzjNode *hzj_parse_node2 (HzjParser *p, HzjNodeKind kind, int line, HzjNode *a, HzjNode *b);
/** One more level of nesting (the caller drops it with p->nesting--); FALSE (error set)
 *  past HZJ_MAX_NESTING. */
gboolean hzj_parse_enter (HzjParser *p);

G_END_DECLS
