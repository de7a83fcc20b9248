/* engine/json-schema.h — compiled JSON schemas (json-schema.c), the nodes that the JSON
 * constraint's automaton (json-constrain.c) walks; private to the engine. The public face
 * is hanzo/json-constrain.h.
 *
 * Thread safety: nodes are immutable once compiled and shared by every state of a schema. */
#pragma once

#include "hanzo/json-constrain.h"

G_BEGIN_DECLS

/* Value types of a schema node (bits). */
enum {
  HZ_JT_OBJECT = 1 << 0, HZ_JT_ARRAY = 1 << 1, HZ_JT_STRING = 1 << 2, HZ_JT_NUMBER = 1 << 3,
  HZ_JT_INTEGER = 1 << 4, HZ_JT_BOOLEAN = 1 << 5, HZ_JT_NULL = 1 << 6, HZ_JT_ALL = 0x7f,
};

/** Most properties of an object schema, and most values of an enum. */
#define HZ_JSON_MAX_CHOICES 64

/* One schema: a value of one of `types`, or (n_lits > 0) one of the literal texts. */
typedef struct _HzJsonNode HzJsonNode;
struct _HzJsonNode {
  guint        types;
  /* objects: any_keys (no "properties"): any member names, values of any type; else the
   * properties in order, keys[i] the name as JSON text with its quotes */
  gboolean     any_keys;
  guint        n_props;
  char       **keys;
  guint       *key_len;
  HzJsonNode **props;
  gboolean    *required;
  guint       *req_rest;     /* [n_props + 1]: bytes of the required members i.., each
                                with its comma, key, colon and shortest value */
  guint       *after_comma;  /* [n_props + 1]: fewest bytes after a comma when property i
                                is the next candidate, up to and with the closing brace */
  /* anyOf / oneOf: the branch whose object / array keywords apply (NULL: this node's) */
  HzJsonNode  *as_object, *as_array;
  /* arrays */
  HzJsonNode  *items;        /* never NULL */
  guint        min_items, max_items;
  /* enum / const */
  guint        n_lits;
  char       **lits;
  guint       *lit_len;
  guint        min_len;      /* fewest bytes of a value */
};

/* A framed text (hz_json_schema_new_framed()): one of n literal prefixes, the value of
 * that alternative's schema, the suffix; with a separator, more of them may follow, each
 * after it. */
typedef struct {
  guint          n;
  char         **pre;        /* [n] the prefixes (NULL-terminated) */
  guint         *pre_len;
  char         **again;      /* [n] separator + prefix, for the calls after the first */
  guint         *again_len;
  HzJsonNode   **roots;      /* [n] their values' schemas (owned by `values`) */
  HzJsonSchema **values;     /* [n] referenced */
  char          *suffix;
  guint          suffix_len;
  gboolean       repeat;     /* a separator was given */
  gint32         end_token;  /* the only end of generation allowed, or -1: any */
  guint          min_first;  /* fewest bytes of a whole text */
} HzJsonFrame;

struct _HzJsonSchema {
  gint         ref;
  HzJsonNode  *root;         /* NULL for a framed text */
  GPtrArray   *nodes;        /* owned nodes (freed with the schema) */
  HzJsonFrame *frame;        /* a framed text, or NULL */
};

/** The node of any JSON value (its items and member values are itself). */
HzJsonNode *hz_json_node_any (void);

G_END_DECLS
