/* engine/jinja/jinja-ast.h — the syntax tree of a parsed template (jinja-parser.c builds it,
 * jinja-eval.c walks it). One node type for every construct; which fields a kind uses is
 * listed beside it. A tree is immutable once parsed and owns its constants (immortal
 * values, jinja-value.h). */
#pragma once

#include <glib.h>
#include "jinja-value.h"

G_BEGIN_DECLS

typedef enum {
  /* expressions */
  HZJ_N_CONST,    /* value */
  HZJ_N_NAME,     /* name */
  HZJ_N_GETATTR,  /* a.name */
  HZJ_N_GETITEM,  /* a[b]; b may be a SLICE */
  HZJ_N_SLICE,    /* a:b:c, each NULL when left out */
  HZJ_N_LIST,     /* [list...] */
  HZJ_N_TUPLE,    /* (list...) */
  HZJ_N_DICT,     /* {list[i]: list2[i]} */
  HZJ_N_NEG,      /* -a */
  HZJ_N_POS,      /* +a */
  HZJ_N_NOT,      /* not a */
  HZJ_N_AND,      /* a and b */
  HZJ_N_OR,       /* a or b */
  HZJ_N_BINOP,    /* a op b: op one of HzjBinop */
  HZJ_N_COMPARE,  /* a, then list of OPERAND nodes (chained: a < b < c) */
  HZJ_N_OPERAND,  /* op (HzjCmpop), a */
  HZJ_N_CONCAT,   /* list[0] ~ list[1] ~ ... */
  HZJ_N_COND,     /* b if a else c (c NULL: undefined) */
  HZJ_N_CALL,     /* a(list..., list2 KWARGs..., *c, **d) */
  HZJ_N_FILTER,   /* a|name(list..., list2 KWARGs..., *c, **d); a NULL in filter blocks */
  HZJ_N_TEST,     /* a is [not] name(args as FILTER); flags HZJ_F_NEGATED */
  HZJ_N_KWARG,    /* name=a (call keyword argument, macro parameter with default a) */
  /* statements */
  HZJ_N_BODY,       /* list of statements */
  HZJ_N_DATA,       /* value: template text */
  HZJ_N_OUTPUT,     /* {{ a }} */
  HZJ_N_IF,         /* if a: list, else list2 (an elif is an IF alone in list2) */
  HZJ_N_FOR,        /* for a (NAME / TUPLE) in b [if c]: list, else list2; HZJ_F_RECURSIVE */
  HZJ_N_SET,        /* a (NAME / TUPLE / NSREF) = b */
  HZJ_N_SET_BLOCK,  /* a = rendered list, through filter chain b (innermost a NULL) or NULL */
  HZJ_N_MACRO,      /* macro name(list2 KWARG params, a NULL when no default): list */
  HZJ_N_CALL_BLOCK, /* call(list2 params) a (a CALL): list is the caller's body */
  HZJ_N_FILTER_BLOCK, /* filter b (filter chain, innermost a NULL): list */
  HZJ_N_WITH,       /* with list2 (SET nodes): list */
  HZJ_N_BREAK,
  HZJ_N_CONTINUE,
  HZJ_N_NSREF,      /* name.name2 as an assignment target */
} HzjNodeKind;

typedef enum { HZJ_OP_ADD, HZJ_OP_SUB, HZJ_OP_MUL, HZJ_OP_DIV, HZJ_OP_FLOORDIV, HZJ_OP_MOD,
               HZJ_OP_POW } HzjBinop;
typedef enum { HZJ_CMP_EQ, HZJ_CMP_NE, HZJ_CMP_LT, HZJ_CMP_LE, HZJ_CMP_GT, HZJ_CMP_GE,
               HZJ_CMP_IN, HZJ_CMP_NOTIN } HzjCmpop;

enum {
  HZJ_F_NEGATED = 1 << 0,    /* TEST: "is not" */
  HZJ_F_RECURSIVE = 1 << 1,  /* FOR: "recursive" */
  HZJ_F_VARARGS = 1 << 2,    /* MACRO: the body reads `varargs` */
  HZJ_F_KWARGS = 1 << 3,     /* MACRO: the body reads `kwargs` */
  HZJ_F_CALLER = 1 << 4,     /* MACRO: the body reads `caller` */
  HZJ_F_ELIF = 1 << 5,       /* IF: an {% elif %} (in list2 of the IF before it) */
};

struct _HzjNode {
  HzjNodeKind kind;
  int line;
  int op;
  guint flags;
  guint depth; /* height of the subtree (the parser bounds it: tree walks recurse) */
  char *name, *name2;
  HzjValue *value;
  HzjNode *a, *b, *c, *d;
  GPtrArray *list, *list2; /* of HzjNode*, owned; NULL when empty */
  /* frames (the template's BODY, FOR body, MACRO, CALL_BLOCK, SET_BLOCK, FILTER_BLOCK,
   * WITH): the names Jinja2 makes Undefined when the frame starts (jinja-symbols.c);
   * shadow2: a FOR's else block. NULL-terminated, or NULL. */
  char **shadow, **shadow2;
};

/** A new node of @kind at @line, every other field zero. */
HzjNode *hzj_node_new (HzjNodeKind kind, int line);
/** Frees @n and everything under it (its constants too). */
void hzj_node_free (HzjNode *n);
/** Appends @child to *@list (created on first use). */
void hzj_node_list_add (GPtrArray **list, HzjNode *child);

G_END_DECLS
