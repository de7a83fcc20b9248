/* engine/jinja/jinja-lexer.h — Jinja2 3.1's lexer, configured as transformers configures it
 * for chat templates: default delimiters ({{ }}, {% %}, {# #}), trim_blocks and
 * lstrip_blocks on, keep_trailing_newline off, "\r\n" and "\r" read as "\n".
 *
 * Whitespace control follows jinja2/lexer.py: "-" on a tag strips the white space on that
 * side; "+" on an opening block or comment tag keeps the indentation lstrip_blocks would
 * remove; "+%}" keeps the newline trim_blocks would remove; {% raw %} blocks are data. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
  HZJ_T_DATA,        /* template text (text, len) */
  HZJ_T_VAR_BEGIN,   /* {{ */
  HZJ_T_VAR_END,     /* }} */
  HZJ_T_BLOCK_BEGIN, /* {% */
  HZJ_T_BLOCK_END,   /* %} */
  HZJ_T_NAME,        /* identifier (text) */
  HZJ_T_STRING,      /* string literal, escapes decoded (text, len; may hold NUL) */
  HZJ_T_INT,         /* integer literal (i) */
  HZJ_T_FLOAT,       /* float literal (f) */
  HZJ_T_OP,          /* operator or bracket (op: "+", "//", "(", ...) */
  HZJ_T_EOF,
} HzjTokKind;

/** One token; @line is 1-based. */
typedef struct {
  HzjTokKind kind;
  int line;
  char *text; /* NUL-terminated copy for DATA, NAME, STRING; else NULL */
  gsize len;
  gint64 i;
  double f;
  char op[3];
} HzjToken;

/**
 * hzj_lex:
 * @src: template source, @len bytes of valid UTF-8
 * @error: a HZ_JINJA_ERROR_SYNTAX error ("TemplateSyntaxError: ...") on bad input: an
 *   unknown character, an unterminated string or comment, unbalanced brackets, an integer
 *   literal beyond 64 bits
 *
 * Returns: (transfer full): the tokens (HzjToken), ending with HZJ_T_EOF; free with
 * hzj_tokens_free(). NULL on error.
 */
GArray *hzj_lex (const char *src, gsize len, GError **error);
void hzj_tokens_free (GArray *tokens);

/** Jinja's description of a token for error messages: a name's text, an operator, or
 *  "end of print statement", "end of statement block", "end of template", ... */
char *hzj_token_describe (const HzjToken *t);

G_END_DECLS
