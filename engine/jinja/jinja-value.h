/* engine/jinja/jinja-value.h — the values of the chat-template interpreter, with Python's
 * semantics (Jinja2 runs on Python objects): None, bool, int, float, str, list, tuple,
 * dict (insertion-ordered), Jinja's Undefined and namespace, callables.
 *
 * Values are reference counted (hzj_ref / hzj_unref; not atomic: a value belongs to one
 * render, on one thread). "Immortal" values (the singletons, and constants built when a
 * template is parsed, shared by every render of it from any thread) ignore ref/unref.
 * Lists, tuples and dicts are never changed once built (Jinja's immutable sandbox);
 * namespaces are the only mutable objects. A string's bytes are valid UTF-8 with data runs
 * (jinja-buf.h) saying which bytes came from caller data. */
#pragma once

#include <glib.h>
#include "jinja-buf.h"

G_BEGIN_DECLS

typedef enum {
  HZJ_UNDEFINED,
  HZJ_NONE,
  HZJ_BOOL,
  HZJ_INT,
  HZJ_FLOAT,
  HZJ_STR,
  HZJ_LIST,
  HZJ_TUPLE,
  HZJ_DICT,
  HZJ_NAMESPACE,
  HZJ_FUNC,   /* a built-in function or bound method */
  HZJ_MACRO,  /* a template macro (jinja-macro.c) */
  HZJ_LOOP,   /* the `loop` object of a for loop (jinja-loop.c) */
} HzjKind;

typedef struct _HzjValue HzjValue;
typedef struct _HzjCtx HzjCtx;        /* one render (jinja-context.h) */
typedef struct _HzjScope HzjScope;    /* variables (jinja-scope.c) */
typedef struct _HzjLoop HzjLoop;      /* loop state (jinja-loop.h) */
typedef struct _HzjNode HzjNode;      /* AST (jinja-ast.h) */

/** Arguments of a call: @n_pos positional values, then @n_kw keyword ones (borrowed). */
typedef struct {
  HzjValue **pos;
  guint n_pos;
  const char **kw_names;
  HzjValue **kw_vals;
  guint n_kw;
} HzjArgs;

/** A built-in: called with the bound object @self (NULL for a plain function) and @args;
 *  returns a new reference, or NULL after hzj_fail(). */
typedef HzjValue *(*HzjFn) (HzjCtx *ctx, HzjValue *self, HzjArgs *args);

/** An insertion-ordered dict (Python 3.7+ semantics); keys are hashable values. */
typedef struct {
  GPtrArray *keys, *vals; /* owned references, same length */
  GHashTable *index;      /* key -> index + 1, built once the dict passes 8 entries */
} HzjDict;

/**
 * HzjObjectClass:
 * @finalize: lets go of what the value holds (not of the value itself)
 * @repr: appends repr(v) (str(v) is the same) to @out; FALSE on overflow
 *
 * What this floor needs of a value kind that a floor above it defines: a macro
 * (jinja-macro.c) holds a scope, a loop object (jinja-loop.c) its state. hzj_unref() and
 * repr() reach them through the class the value carries, so that values never call up
 * (dependency inversion, as a GObject's class finalize).
 */
typedef struct {
  void (*finalize) (HzjValue *v);
  gboolean (*repr) (HzjBuf *out, HzjValue *v);
} HzjObjectClass;

/** How deep lists, tuples and dicts may nest (walks over values recurse; the evaluator
 *  refuses a deeper value, as Python's recursion limit would stop repr or json.dumps). */
#define HZJ_MAX_VALUE_DEPTH 200

struct _HzjValue {
  int ref; /* < 0: immortal */
  HzjKind kind;
  guint depth; /* list, tuple, dict: 1 + the deepest list, tuple or dict inside */
  union {
    gboolean b;
    gint64 i;
    double f;
    struct {
      char *s;      /* NUL-terminated; `len` bytes (may hold NUL bytes) */
      gsize len;
      HzjRun *runs; /* data runs, NULL when n_runs is 0 */
      guint n_runs;
    } str;
    GPtrArray *items; /* list, tuple */
    HzjDict *dict;    /* dict, namespace */
    struct {
      HzjFn fn;
      HzjValue *self;
      char *name;
    } func;
    struct {
      const HzjObjectClass *klass;
      const HzjNode *node; /* the macro (or call block body) node, owned by the template */
      HzjScope *scope;     /* where it was defined */
    } macro;
    struct {
      const HzjObjectClass *klass;
      HzjLoop *state;
    } loop;
    struct {
      char *hint;        /* the error an operation on it raises, or NULL */
      gboolean unsafe;   /* a sandbox refusal (SecurityError) rather than UndefinedError */
    } undef;
  };
};

HzjValue *hzj_ref (HzjValue *v);
void hzj_unref (HzjValue *v);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzjValue, hzj_unref)
/** Makes @v immortal (for constants of a parsed template); freed by hzj_free_immortal.
 *  Values immortal already (the singletons, small ints) stay as they are. */
void hzj_make_immortal (HzjValue *v);
void hzj_free_immortal (HzjValue *v);

/* -- constructors (each returns a new reference) -- */
HzjValue *hzj_undefined (void);             /* the plain Undefined (immortal) */
HzjValue *hzj_undefined_new (char *hint, gboolean unsafe); /* takes @hint (may be NULL) */
HzjValue *hzj_none (void);
HzjValue *hzj_bool (gboolean b);
HzjValue *hzj_int (gint64 i);
HzjValue *hzj_float (double f);
/** A string of @len bytes of @s (copied), all data when @data, else all markup. */
HzjValue *hzj_str (const char *s, gsize len, gboolean data);
/** The markup string of a NUL-terminated @s. */
HzjValue *hzj_cstr (const char *s);
/** A string from a builder's text and runs (the builder is cleared). */
HzjValue *hzj_str_from_buf (HzjBuf *b);
/** Appends the string value @s to @b with its tagging. FALSE on overflow. */
gboolean hzj_buf_append_str (HzjBuf *b, HzjValue *s);
/** A new empty list (or tuple when @tuple); hzj_list_push() fills it while it is built. */
HzjValue *hzj_list_new (gboolean tuple);
/** Appends @item (reference taken) to a list being built. */
void hzj_list_push (HzjValue *list, HzjValue *item);
HzjValue *hzj_dict_new (void);
HzjValue *hzj_namespace_new (void);
HzjValue *hzj_func_new (HzjFn fn, HzjValue *self, const char *name);

/* -- dicts -- */
/** The value of @key in @d (borrowed), or NULL. */
HzjValue *hzj_dict_get (HzjDict *d, HzjValue *key);
/** The value of the string key @name (@len bytes) in @d (borrowed), or NULL. */
HzjValue *hzj_dict_get_str (HzjDict *d, const char *name, gsize len);
/** Sets @key to @val (both references taken) in the dict or namespace @dict: a new key
 *  goes last, an existing one keeps its place. @key must be hashable (hzj_hashable()). */
void hzj_dict_set (HzjValue *dict, HzjValue *key, HzjValue *val);
guint hzj_dict_len (HzjDict *d);
/** Empties @d (breaks reference cycles through namespaces at the end of a render). */
void hzj_dict_clear (HzjDict *d);

/* -- Python semantics -- */
/** Python's type name of @v ("str", "dict", "NoneType", ...). */
const char *hzj_type_name (HzjValue *v);
/** Jinja's object_type_repr: "dict object", "None", "str object", ... */
char *hzj_object_type_repr (HzjValue *v);
/** Whether @v is a number (bool, int or float): its value as a double in *@f and, for a
 *  bool or int, as an integer in *@i with *@is_int set. */
gboolean hzj_number (HzjValue *v, double *f, gint64 *i, gboolean *is_int);
/** bool(v). */
gboolean hzj_truthy (HzjValue *v);
/** v == w. */
gboolean hzj_equal (HzjValue *v, HzjValue *w);
/** Whether @v can be a dict key (None, bool, int, float, str, tuples of those). */
gboolean hzj_hashable (HzjValue *v);
/** Orders @v and @w as Python's `<`: sets *@cmp to -1, 0 or 1; FALSE when the two cannot
 *  be ordered (Python's TypeError). */
gboolean hzj_compare (HzjValue *v, HzjValue *w, int *cmp);
/** len(v), or -1 when @v has no length. Undefined has length 0. */
gssize hzj_length (HzjValue *v);
/** Appends str(@v) to @out with its tagging (strings keep their runs; the text of a
 *  container is data as a whole when any string inside is). FALSE on overflow. */
gboolean hzj_str_append (HzjBuf *out, HzjValue *v);
/** Appends repr(@v) (as str, but strings quoted and escaped as Python does). */
gboolean hzj_repr_append (HzjBuf *out, HzjValue *v);
/** str(@v) as a string value (a new reference to @v when it is one already). NULL when the
 *  text passes @limit bytes. */
HzjValue *hzj_to_str (HzjValue *v, gsize limit);
/** Whether any string inside @v (deeply) holds caller data. */
gboolean hzj_has_data (HzjValue *v);
/** Python's repr() of a float into @out (at least 32 bytes): shortest round-trip digits,
 *  "1e+16" / "0.0001" / "1.0" forms, "inf", "nan". */
void hzj_float_repr (double x, char *out);

G_END_DECLS
