/* engine/tokenizer-regex.c — small backtracking regex matcher; see tokenizer-regex.h.
 *
 * A pattern is parsed into a tree, then compiled into a program for a backtracking VM with
 * an explicit stack (no recursion while matching, so long inputs cannot overflow the C
 * stack). A repeat of a single-character matcher is one instruction (REP1) that counts
 * the run and backtracks by moving its end, so `\p{L}+` over a long word pushes one stack
 * entry, not one per letter. Lookaheads and atomic (possessive) groups push a marker;
 * reaching their end cuts the stack back to it, as Oniguruma does.
 */
#include <string.h>
#include "tokenizer-regex.h"
#include "unicode.h"

/* ---- character classes ---- */

typedef enum {
  CI_RANGE,   /* lo..hi */
  CI_GC,      /* general category: lo = mask of (1 << GUnicodeType) */
  CI_SPACE,   /* White_Space */
  CI_WORD,    /* L M N Pc */
  CI_HAN,     /* Script=Han */
  CI_SUB,     /* nested class `sub` */
} ClassItemKind;

typedef struct {
  guint8   kind;
  gboolean neg;      /* \P{..} \S \D \W */
  uint32_t lo, hi;
  int      sub;
} ClassItem;

typedef struct {
  GArray  *items;    /* ClassItem */
  gboolean negated;  /* [^...] */
  int      and_cls;  /* [A&&B]: index of B, or -1 */
  guint32  ascii[4]; /* membership of code points < 128 */
} Class;

#define GC(t) (1u << (t))
#define GC_L (GC (G_UNICODE_UPPERCASE_LETTER) | GC (G_UNICODE_LOWERCASE_LETTER) | \
              GC (G_UNICODE_TITLECASE_LETTER) | GC (G_UNICODE_MODIFIER_LETTER) |   \
              GC (G_UNICODE_OTHER_LETTER))
#define GC_M (GC (G_UNICODE_NON_SPACING_MARK) | GC (G_UNICODE_SPACING_MARK) |       \
              GC (G_UNICODE_ENCLOSING_MARK))
#define GC_N (GC (G_UNICODE_DECIMAL_NUMBER) | GC (G_UNICODE_LETTER_NUMBER) |        \
              GC (G_UNICODE_OTHER_NUMBER))
#define GC_P (GC (G_UNICODE_CONNECT_PUNCTUATION) | GC (G_UNICODE_DASH_PUNCTUATION) | \
              GC (G_UNICODE_OPEN_PUNCTUATION) | GC (G_UNICODE_CLOSE_PUNCTUATION) |  \
              GC (G_UNICODE_INITIAL_PUNCTUATION) | GC (G_UNICODE_FINAL_PUNCTUATION) | \
              GC (G_UNICODE_OTHER_PUNCTUATION))
#define GC_S (GC (G_UNICODE_MATH_SYMBOL) | GC (G_UNICODE_CURRENCY_SYMBOL) |         \
              GC (G_UNICODE_MODIFIER_SYMBOL) | GC (G_UNICODE_OTHER_SYMBOL))
#define GC_Z (GC (G_UNICODE_SPACE_SEPARATOR) | GC (G_UNICODE_LINE_SEPARATOR) |      \
              GC (G_UNICODE_PARAGRAPH_SEPARATOR))
#define GC_C (GC (G_UNICODE_CONTROL) | GC (G_UNICODE_FORMAT) | GC (G_UNICODE_SURROGATE) | \
              GC (G_UNICODE_PRIVATE_USE) | GC (G_UNICODE_UNASSIGNED))

/* \p{NAME}: general categories by their Unicode short names. */
static const struct { const char *name; guint32 mask; } gc_names[] = {
  { "L", GC_L }, { "Lu", GC (G_UNICODE_UPPERCASE_LETTER) },
  { "Ll", GC (G_UNICODE_LOWERCASE_LETTER) }, { "Lt", GC (G_UNICODE_TITLECASE_LETTER) },
  { "Lm", GC (G_UNICODE_MODIFIER_LETTER) }, { "Lo", GC (G_UNICODE_OTHER_LETTER) },
  { "M", GC_M }, { "Mn", GC (G_UNICODE_NON_SPACING_MARK) },
  { "Mc", GC (G_UNICODE_SPACING_MARK) }, { "Me", GC (G_UNICODE_ENCLOSING_MARK) },
  { "N", GC_N }, { "Nd", GC (G_UNICODE_DECIMAL_NUMBER) },
  { "Nl", GC (G_UNICODE_LETTER_NUMBER) }, { "No", GC (G_UNICODE_OTHER_NUMBER) },
  { "P", GC_P }, { "Pc", GC (G_UNICODE_CONNECT_PUNCTUATION) },
  { "Pd", GC (G_UNICODE_DASH_PUNCTUATION) }, { "Ps", GC (G_UNICODE_OPEN_PUNCTUATION) },
  { "Pe", GC (G_UNICODE_CLOSE_PUNCTUATION) }, { "Pi", GC (G_UNICODE_INITIAL_PUNCTUATION) },
  { "Pf", GC (G_UNICODE_FINAL_PUNCTUATION) }, { "Po", GC (G_UNICODE_OTHER_PUNCTUATION) },
  { "S", GC_S }, { "Sm", GC (G_UNICODE_MATH_SYMBOL) }, { "Sc", GC (G_UNICODE_CURRENCY_SYMBOL) },
  { "Sk", GC (G_UNICODE_MODIFIER_SYMBOL) }, { "So", GC (G_UNICODE_OTHER_SYMBOL) },
  { "Z", GC_Z }, { "Zs", GC (G_UNICODE_SPACE_SEPARATOR) },
  { "Zl", GC (G_UNICODE_LINE_SEPARATOR) }, { "Zp", GC (G_UNICODE_PARAGRAPH_SEPARATOR) },
  { "C", GC_C }, { "Cc", GC (G_UNICODE_CONTROL) }, { "Cf", GC (G_UNICODE_FORMAT) },
  { "Co", GC (G_UNICODE_PRIVATE_USE) }, { "Cn", GC (G_UNICODE_UNASSIGNED) },
};

static inline guint32
gc_mask (uint32_t c)
{
  return c > 0x10FFFF ? GC (G_UNICODE_UNASSIGNED) : GC (g_unichar_type (c));
}

static inline gboolean
is_space (uint32_t c)
{
  return (hz_unicode_flags (c) & HZ_UCF_WHITESPACE) != 0;
}

static inline gboolean
is_word (uint32_t c)
{
  return (gc_mask (c) & (GC_L | GC_M | GC_N | GC (G_UNICODE_CONNECT_PUNCTUATION))) != 0;
}

/* Simple case folding of one code point (CaseFolding.txt C+S; a code point whose full
 * folding is several characters folds to itself, as in a single-character compare). */
static uint32_t
fold1 (uint32_t c)
{
  char buf[8];
  uint32_t r;

  if (c < 128)
    return (c >= 'A' && c <= 'Z') ? c + 32 : c;
  if (c > 0x10FFFF)
    return c;
  {
    int n = g_unichar_to_utf8 (c, buf);
    g_autofree char *f = g_utf8_casefold (buf, n);
    r = g_utf8_get_char (f);
    if (*g_utf8_next_char (f) != '\0')
      r = c;
  }
  return r;
}

struct _HzRegex {
  GArray *classes;  /* Class */
  GArray *code;     /* Inst */
};

static gboolean class_match (const HzRegex *re, int idx, uint32_t c);

static gboolean
class_item_match (const HzRegex *re, const ClassItem *it, uint32_t c)
{
  gboolean r;
  switch (it->kind)
    {
    case CI_RANGE: r = c >= it->lo && c <= it->hi; break;
    case CI_GC:    r = (gc_mask (c) & it->lo) != 0; break;
    case CI_SPACE: r = is_space (c); break;
    case CI_WORD:  r = is_word (c); break;
    case CI_HAN:   r = c <= 0x10FFFF && g_unichar_get_script (c) == G_UNICODE_SCRIPT_HAN; break;
    case CI_SUB:   r = class_match (re, it->sub, c); break;
    default:       r = FALSE; break;
    }
  return it->neg ? !r : r;
}

static gboolean
class_match_slow (const HzRegex *re, const Class *cl, uint32_t c)
{
  gboolean r = FALSE;
  for (guint i = 0; i < cl->items->len && !r; i++)
    r = class_item_match (re, &g_array_index (cl->items, ClassItem, i), c);
  if (r && cl->and_cls >= 0)
    r = class_match (re, cl->and_cls, c);
  return cl->negated ? !r : r;
}

static gboolean
class_match (const HzRegex *re, int idx, uint32_t c)
{
  const Class *cl = &g_array_index (re->classes, Class, idx);
  if (c < 128)
    return (cl->ascii[c >> 5] >> (c & 31)) & 1;
  return class_match_slow (re, cl, c);
}

/* ---- parse tree ---- */

typedef enum {
  N_EMPTY, N_CHAR, N_CLASS, N_ANY, N_BOL, N_EOL, N_WORDB, N_NWORDB,
  N_CAT, N_ALT, N_REP, N_LOOK,
} NodeKind;

enum { MODE_GREEDY, MODE_LAZY, MODE_POSSESSIVE };

typedef struct Node Node;
struct Node {
  NodeKind   kind;
  uint32_t   c;       /* N_CHAR (folded when `fold`); N_CLASS: class index */
  gboolean   fold;    /* N_CHAR, N_CLASS: case-insensitive */
  gboolean   neg;     /* N_LOOK: (?!...) */
  int        min, max;/* N_REP (max -1: unbounded) */
  int        mode;    /* N_REP */
  GPtrArray *kids;    /* N_CAT, N_ALT; N_REP and N_LOOK have one */
};

typedef struct {
  const char *pat, *p;
  gboolean    fold;
  HzRegex    *re;
  GPtrArray  *nodes;  /* every node, for freeing */
  GError    **error;
  gboolean    failed;
  int         depth;
} Parser;

#define MAX_DEPTH 64
#define MAX_CODE  (1 << 16)
#define REP_INF   (-1)

static void
parse_fail (Parser *ps, const char *what)
{
  if (!ps->failed)
    g_set_error (ps->error, G_REGEX_ERROR, G_REGEX_ERROR_COMPILE,
                 "pattern '%s': %s at byte %d", ps->pat, what, (int) (ps->p - ps->pat));
  ps->failed = TRUE;
}

static Node *
node_new (Parser *ps, NodeKind kind)
{
  Node *n = g_new0 (Node, 1);
  n->kind = kind;
  if (kind == N_CAT || kind == N_ALT || kind == N_REP || kind == N_LOOK)
    n->kids = g_ptr_array_new ();
  g_ptr_array_add (ps->nodes, n);
  return n;
}

static void
node_free (gpointer data)
{
  Node *n = data;
  if (n->kids)
    g_ptr_array_unref (n->kids);
  g_free (n);
}

static int
hex_digit (char c)
{
  return g_ascii_xdigit_value (c);
}

/* \xHH, \x{H...}, \uHHHH after the letter; -1 on error. */
static gint64
parse_hex (Parser *ps, int fixed)
{
  gint64 v = 0;
  int n = 0;
  if (fixed == 0 && *ps->p == '{')
    {
      ps->p++;
      while (hex_digit (*ps->p) >= 0 && n < 8)
        v = v * 16 + hex_digit (*ps->p++), n++;
      if (*ps->p != '}' || n == 0)
        return -1;
      ps->p++;
      return v;
    }
  for (n = 0; n < (fixed ? fixed : 2); n++)
    {
      if (hex_digit (*ps->p) < 0)
        return -1;
      v = v * 16 + hex_digit (*ps->p++);
    }
  return v;
}

/* The escape after a backslash (ps->p at the letter) as a class item (\s \d \w \p{..}
 * and negations): TRUE and *it filled, or FALSE when it is a character escape (then
 * *c holds it, or the parse failed). */
static gboolean
parse_escape (Parser *ps, ClassItem *it, uint32_t *c)
{
  char e = *ps->p++;
  memset (it, 0, sizeof *it);
  *c = 0;
  switch (e)
    {
    case 's': case 'S': it->kind = CI_SPACE; it->neg = e == 'S'; return TRUE;
    case 'w': case 'W': it->kind = CI_WORD; it->neg = e == 'W'; return TRUE;
    case 'd': case 'D':
      it->kind = CI_GC; it->lo = GC (G_UNICODE_DECIMAL_NUMBER); it->neg = e == 'D';
      return TRUE;
    case 'p': case 'P':
      {
        const char *close;
        it->neg = e == 'P';
        if (*ps->p != '{' || (close = strchr (ps->p, '}')) == NULL)
          {
            parse_fail (ps, "\\p without {NAME}");
            return FALSE;
          }
        g_autofree char *name = g_strndup (ps->p + 1, close - ps->p - 1);
        ps->p = close + 1;
        if (strcmp (name, "Han") == 0)
          {
            it->kind = CI_HAN;
            return TRUE;
          }
        for (gsize i = 0; i < G_N_ELEMENTS (gc_names); i++)
          if (strcmp (name, gc_names[i].name) == 0)
            {
              it->kind = CI_GC;
              it->lo = gc_names[i].mask;
              return TRUE;
            }
        parse_fail (ps, "unsupported \\p{} property");
        return FALSE;
      }
    case 't': *c = '\t'; return FALSE;
    case 'n': *c = '\n'; return FALSE;
    case 'r': *c = '\r'; return FALSE;
    case 'f': *c = '\f'; return FALSE;
    case 'v': *c = '\v'; return FALSE;
    case 'e': *c = 0x1B; return FALSE;
    case '0': *c = 0; return FALSE;
    case 'x': case 'u':
      {
        gint64 v = parse_hex (ps, e == 'u' ? 4 : 0);
        if (v < 0 || v > 0x10FFFF)
          parse_fail (ps, "bad hexadecimal escape");
        *c = (uint32_t) MAX (v, 0);
        return FALSE;
      }
    default:
      if (g_ascii_isalnum (e) || e == '\0')
        {
          ps->p--;
          parse_fail (ps, "unsupported escape");
          *c = 0;
          return FALSE;
        }
      ps->p--;
      *c = g_utf8_get_char (ps->p);   /* escaped punctuation or any non-ASCII literal */
      ps->p = g_utf8_next_char (ps->p);
      return FALSE;
    }
}

static int parse_class_items (Parser *ps, gboolean negated);

/* One member of a class at ps->p: a range, a single character, a class escape or a
 * nested class; appended to `cl`. */
static void
parse_class_member (Parser *ps, GArray *items)
{
  ClassItem it;
  uint32_t lo;

  if (*ps->p == '[')
    {
      gboolean neg;
      ps->p++;
      neg = *ps->p == '^';
      ps->p += neg;
      memset (&it, 0, sizeof it);
      it.kind = CI_SUB;
      it.sub = parse_class_items (ps, neg);
      g_array_append_val (items, it);
      return;
    }
  if (*ps->p == '\\')
    {
      ps->p++;
      if (parse_escape (ps, &it, &lo))
        {
          g_array_append_val (items, it);
          return;
        }
    }
  else
    {
      lo = g_utf8_get_char (ps->p);
      ps->p = g_utf8_next_char (ps->p);
    }
  memset (&it, 0, sizeof it);
  it.kind = CI_RANGE;
  it.lo = it.hi = lo;
  if (ps->p[0] == '-' && ps->p[1] != ']' && ps->p[1] != '\0')
    {
      uint32_t hi;
      ClassItem tmp;
      ps->p++;
      if (*ps->p == '\\')
        {
          ps->p++;
          if (parse_escape (ps, &tmp, &hi))
            {
              parse_fail (ps, "class escape as a range end");
              return;
            }
        }
      else if (*ps->p == '[')
        {
          parse_fail (ps, "nested class as a range end");
          return;
        }
      else
        {
          hi = g_utf8_get_char (ps->p);
          ps->p = g_utf8_next_char (ps->p);
        }
      if (hi < lo)
        {
          parse_fail (ps, "range out of order");
          return;
        }
      it.hi = hi;
    }
  g_array_append_val (items, it);
}

/* Members up to and including the closing ']' (ps->p after '[' and any '^'); returns
 * the class index. */
static int
parse_class_items (Parser *ps, gboolean negated)
{
  Class cl = { g_array_new (FALSE, FALSE, sizeof (ClassItem)), negated, -1, { 0 } };
  gboolean first = TRUE;
  int idx;

  if (++ps->depth > MAX_DEPTH)
    parse_fail (ps, "classes nested too deeply");
  while (!ps->failed)
    {
      if (*ps->p == '\0')
        {
          parse_fail (ps, "unterminated class");
          break;
        }
      if (*ps->p == ']' && !first)
        {
          ps->p++;
          break;
        }
      if (ps->p[0] == '&' && ps->p[1] == '&')
        {
          ps->p += 2;
          cl.and_cls = parse_class_items (ps, FALSE);
          break;
        }
      parse_class_member (ps, cl.items);
      first = FALSE;
    }
  ps->depth--;
  idx = (int) ps->re->classes->len;
  g_array_append_val (ps->re->classes, cl);
  return idx;
}

static Node *parse_alt (Parser *ps);

static Node *
parse_group (Parser *ps)
{
  Node *n;
  gboolean saved_fold = ps->fold;

  /* ps->p after '(' */
  if (ps->p[0] == '?')
    {
      if (ps->p[1] == ':')
        ps->p += 2;
      else if (ps->p[1] == 'i' && ps->p[2] == ':')
        {
          ps->p += 3;
          ps->fold = TRUE;
        }
      else if (ps->p[1] == '=' || ps->p[1] == '!')
        {
          Node *look = node_new (ps, N_LOOK);
          look->neg = ps->p[1] == '!';
          ps->p += 2;
          g_ptr_array_add (look->kids, parse_alt (ps));
          if (*ps->p != ')')
            parse_fail (ps, "missing )");
          else
            ps->p++;
          return look;
        }
      else
        {
          parse_fail (ps, "unsupported group");
          return node_new (ps, N_EMPTY);
        }
    }
  n = parse_alt (ps);
  ps->fold = saved_fold;
  if (*ps->p != ')')
    parse_fail (ps, "missing )");
  else
    ps->p++;
  return n;
}

static Node *
parse_atom (Parser *ps)
{
  Node *n;
  char c = *ps->p;

  switch (c)
    {
    case '(':
      ps->p++;
      if (++ps->depth > MAX_DEPTH)
        {
          parse_fail (ps, "groups nested too deeply");
          return node_new (ps, N_EMPTY);
        }
      n = parse_group (ps);
      ps->depth--;
      return n;
    case '[':
      {
        gboolean neg;
        ps->p++;
        neg = *ps->p == '^';
        ps->p += neg;
        n = node_new (ps, N_CLASS);
        n->c = (uint32_t) parse_class_items (ps, neg);
        n->fold = ps->fold;
        return n;
      }
    case '.': ps->p++; return node_new (ps, N_ANY);
    case '^': ps->p++; return node_new (ps, N_BOL);
    case '$': ps->p++; return node_new (ps, N_EOL);
    case '*': case '+': case '?': case '{':
      parse_fail (ps, "nothing to repeat");
      return node_new (ps, N_EMPTY);
    case '\\':
      {
        ClassItem it;
        uint32_t ch = 0;
        ps->p++;
        if (*ps->p == 'b' || *ps->p == 'B')
          return node_new (ps, *ps->p++ == 'b' ? N_WORDB : N_NWORDB);
        if (parse_escape (ps, &it, &ch))
          {
            Class cl = { g_array_new (FALSE, FALSE, sizeof (ClassItem)), FALSE, -1, { 0 } };
            g_array_append_val (cl.items, it);
            n = node_new (ps, N_CLASS);
            n->c = ps->re->classes->len;
            g_array_append_val (ps->re->classes, cl);
            return n;
          }
        n = node_new (ps, N_CHAR);
        n->fold = ps->fold;
        n->c = n->fold ? fold1 (ch) : ch;
        return n;
      }
    default:
      n = node_new (ps, N_CHAR);
      n->fold = ps->fold;
      n->c = g_utf8_get_char (ps->p);
      if (n->fold)
        n->c = fold1 (n->c);
      ps->p = g_utf8_next_char (ps->p);
      return n;
    }
}

static gboolean
parse_int (Parser *ps, int *v)
{
  if (!g_ascii_isdigit (*ps->p))
    return FALSE;
  *v = 0;
  while (g_ascii_isdigit (*ps->p))
    {
      *v = *v * 10 + (*ps->p++ - '0');
      if (*v > 10000)
        return FALSE;
    }
  return TRUE;
}

static Node *
parse_quant (Parser *ps, Node *atom)
{
  int min, max;
  Node *rep;

  switch (*ps->p)
    {
    case '?': min = 0; max = 1; ps->p++; break;
    case '*': min = 0; max = REP_INF; ps->p++; break;
    case '+': min = 1; max = REP_INF; ps->p++; break;
    case '{':
      ps->p++;
      if (!parse_int (ps, &min))
        {
          parse_fail (ps, "bad {n,m} quantifier");
          return atom;
        }
      max = min;
      if (*ps->p == ',')
        {
          ps->p++;
          if (*ps->p == '}')
            max = REP_INF;
          else if (!parse_int (ps, &max) || max < min)
            {
              parse_fail (ps, "bad {n,m} quantifier");
              return atom;
            }
        }
      if (*ps->p != '}')
        {
          parse_fail (ps, "bad {n,m} quantifier");
          return atom;
        }
      ps->p++;
      break;
    default:
      return atom;
    }
  if (atom->kind == N_BOL || atom->kind == N_EOL || atom->kind == N_WORDB ||
      atom->kind == N_NWORDB || atom->kind == N_LOOK)
    {
      parse_fail (ps, "quantified assertion");
      return atom;
    }
  rep = node_new (ps, N_REP);
  rep->min = min;
  rep->max = max;
  rep->mode = MODE_GREEDY;
  if (*ps->p == '?')
    rep->mode = MODE_LAZY, ps->p++;
  else if (*ps->p == '+')
    rep->mode = MODE_POSSESSIVE, ps->p++;
  g_ptr_array_add (rep->kids, atom);
  if (*ps->p == '?' || *ps->p == '*' || *ps->p == '+' || *ps->p == '{')
    parse_fail (ps, "stacked quantifiers");
  return rep;
}

static Node *
parse_cat (Parser *ps)
{
  Node *cat = node_new (ps, N_CAT);
  while (!ps->failed && *ps->p != '\0' && *ps->p != '|' && *ps->p != ')')
    g_ptr_array_add (cat->kids, parse_quant (ps, parse_atom (ps)));
  return cat;
}

static Node *
parse_alt (Parser *ps)
{
  Node *first = parse_cat (ps), *alt;
  if (*ps->p != '|')
    return first;
  alt = node_new (ps, N_ALT);
  g_ptr_array_add (alt->kids, first);
  while (!ps->failed && *ps->p == '|')
    {
      ps->p++;
      g_ptr_array_add (alt->kids, parse_cat (ps));
    }
  return alt;
}

/* ---- program ---- */

typedef enum {
  OP_CHAR, OP_CHARF, OP_CLASS, OP_CLASSF, OP_ANY,   /* single-character matchers */
  OP_BOL, OP_EOL, OP_WORDB, OP_NWORDB,
  OP_SPLIT,     /* continue at x, backtrack to y */
  OP_JMP,       /* x */
  OP_REP1,      /* repeat the single-character matcher (aop, arg) min..max times */
  OP_LOOK,      /* lookahead (mode: negated) of the code up to LOOK_END; x: after it */
  OP_LOOK_END,
  OP_ATOM,      /* atomic group up to ATOM_END */
  OP_ATOM_END,
  OP_MATCH,
} Op;

typedef struct {
  guint8   op, aop, mode;
  uint32_t arg;
  int      x, y;
  int      min, max;
} Inst;

static gboolean
nullable (const Node *n)
{
  switch (n->kind)
    {
    case N_CHAR: case N_CLASS: case N_ANY:
      return FALSE;
    case N_CAT:
      for (guint i = 0; i < n->kids->len; i++)
        if (!nullable (n->kids->pdata[i]))
          return FALSE;
      return TRUE;
    case N_ALT:
      for (guint i = 0; i < n->kids->len; i++)
        if (nullable (n->kids->pdata[i]))
          return TRUE;
      return FALSE;
    case N_REP:
      return n->min == 0 || nullable (n->kids->pdata[0]);
    default:
      return TRUE;
    }
}

/* The node as a single-character matcher (op, arg), after unwrapping one-element
 * concatenations; FALSE if it is not one. */
static gboolean
single_char (const Node *n, guint8 *op, uint32_t *arg)
{
  while (n->kind == N_CAT && n->kids->len == 1)
    n = n->kids->pdata[0];
  switch (n->kind)
    {
    case N_CHAR:  *op = n->fold ? OP_CHARF : OP_CHAR; *arg = n->c; return TRUE;
    case N_CLASS: *op = n->fold ? OP_CLASSF : OP_CLASS; *arg = n->c; return TRUE;
    case N_ANY:   *op = OP_ANY; *arg = 0; return TRUE;
    default:      return FALSE;
    }
}

typedef struct {
  GArray  *code;
  Parser  *ps;
} Emitter;

static int
emit_inst (Emitter *e, guint8 op)
{
  Inst in = { 0 };
  in.op = op;
  if (e->code->len >= MAX_CODE)
    {
      parse_fail (e->ps, "pattern too large");
      return (int) e->code->len - 1;
    }
  g_array_append_val (e->code, in);
  return (int) e->code->len - 1;
}

/* (never with an emit_inst () call as the index: it may move the array) */
#define AT(e, i) (&g_array_index ((e)->code, Inst, (i)))
#define PC(e) ((int) (e)->code->len)

static void emit_node (Emitter *e, const Node *n);

static void
emit_rep (Emitter *e, const Node *n, int mode)
{
  const Node *kid = n->kids->pdata[0];
  for (int i = 0; i < n->min && !e->ps->failed; i++)
    emit_node (e, kid);
  if (n->max == REP_INF)
    {
      int loop = emit_inst (e, OP_SPLIT);
      if (nullable (kid))
        {
          parse_fail (e->ps, "unbounded repeat of a group that can match empty");
          return;
        }
      emit_node (e, kid);
      int jmp = emit_inst (e, OP_JMP);
      AT (e, jmp)->x = loop;
      AT (e, loop)->x = mode == MODE_LAZY ? PC (e) : loop + 1;
      AT (e, loop)->y = mode == MODE_LAZY ? loop + 1 : PC (e);
      return;
    }
  {
    g_autoptr(GArray) splits = g_array_new (FALSE, FALSE, sizeof (int));
    for (int i = n->min; i < n->max && !e->ps->failed; i++)
      {
        int s = emit_inst (e, OP_SPLIT);
        g_array_append_val (splits, s);
        emit_node (e, kid);
      }
    for (guint i = 0; i < splits->len && !e->ps->failed; i++)
      {
        int s = g_array_index (splits, int, i);
        AT (e, s)->x = mode == MODE_LAZY ? PC (e) : s + 1;
        AT (e, s)->y = mode == MODE_LAZY ? s + 1 : PC (e);
      }
  }
}

static void
emit_node (Emitter *e, const Node *n)
{
  guint8 aop;
  uint32_t arg;

  if (e->ps->failed)
    return;
  switch (n->kind)
    {
    case N_EMPTY:
      break;
    case N_CHAR: case N_CLASS: case N_ANY:
      {
        int k;
        single_char (n, &aop, &arg);
        k = emit_inst (e, aop);
        AT (e, k)->arg = arg;
      }
      break;
    case N_BOL:    emit_inst (e, OP_BOL); break;
    case N_EOL:    emit_inst (e, OP_EOL); break;
    case N_WORDB:  emit_inst (e, OP_WORDB); break;
    case N_NWORDB: emit_inst (e, OP_NWORDB); break;
    case N_CAT:
      for (guint i = 0; i < n->kids->len; i++)
        emit_node (e, n->kids->pdata[i]);
      break;
    case N_ALT:
      {
        g_autoptr(GArray) jmps = g_array_new (FALSE, FALSE, sizeof (int));
        for (guint i = 0; i < n->kids->len && !e->ps->failed; i++)
          {
            int split = -1;
            if (i + 1 < n->kids->len)
              split = emit_inst (e, OP_SPLIT);
            emit_node (e, n->kids->pdata[i]);
            if (split >= 0)
              {
                int j = emit_inst (e, OP_JMP);
                g_array_append_val (jmps, j);
                AT (e, split)->x = split + 1;
                AT (e, split)->y = PC (e);
              }
          }
        for (guint i = 0; i < jmps->len && !e->ps->failed; i++)
          AT (e, g_array_index (jmps, int, i))->x = PC (e);
        break;
      }
    case N_REP:
      if (single_char (n->kids->pdata[0], &aop, &arg))
        {
          int k = emit_inst (e, OP_REP1);
          Inst *in = AT (e, k);
          in->aop = aop;
          in->arg = arg;
          in->min = n->min;
          in->max = n->max;
          in->mode = (guint8) n->mode;
        }
      else if (n->mode == MODE_POSSESSIVE)
        {
          emit_inst (e, OP_ATOM);
          emit_rep (e, n, MODE_GREEDY);
          emit_inst (e, OP_ATOM_END);
        }
      else
        emit_rep (e, n, n->mode);
      break;
    case N_LOOK:
      {
        int look = emit_inst (e, OP_LOOK);
        AT (e, look)->mode = (guint8) n->neg;
        emit_node (e, n->kids->pdata[0]);
        emit_inst (e, OP_LOOK_END);
        AT (e, look)->x = PC (e);
        break;
      }
    }
}

HzRegex *
hz_regex_new (const char *pattern, GError **error)
{
  HzRegex *re = g_new0 (HzRegex, 1);
  Parser ps = { pattern, pattern, FALSE, re, g_ptr_array_new_with_free_func (node_free),
                error, FALSE, 0 };
  Node *root;

  re->classes = g_array_new (FALSE, FALSE, sizeof (Class));
  re->code = g_array_new (FALSE, FALSE, sizeof (Inst));
  if (!g_utf8_validate (pattern, -1, NULL))
    {
      g_set_error (error, G_REGEX_ERROR, G_REGEX_ERROR_COMPILE, "pattern is not valid UTF-8");
      g_ptr_array_unref (ps.nodes);
      hz_regex_free (re);
      return NULL;
    }
  root = parse_alt (&ps);
  if (!ps.failed && *ps.p != '\0')
    parse_fail (&ps, "unmatched )");
  if (!ps.failed)
    {
      Emitter e = { re->code, &ps };
      emit_node (&e, root);
      emit_inst (&e, OP_MATCH);
    }
  g_ptr_array_unref (ps.nodes);
  if (ps.failed)
    {
      hz_regex_free (re);
      return NULL;
    }
  /* ASCII membership tables (nested classes are evaluated through the slow path) */
  for (guint i = 0; i < re->classes->len; i++)
    {
      Class *cl = &g_array_index (re->classes, Class, i);
      for (uint32_t c = 0; c < 128; c++)
        if (class_match_slow (re, cl, c))
          cl->ascii[c >> 5] |= 1u << (c & 31);
    }
  return re;
}

void
hz_regex_free (HzRegex *re)
{
  if (re == NULL)
    return;
  for (guint i = 0; i < re->classes->len; i++)
    g_array_unref (g_array_index (re->classes, Class, i).items);
  g_array_unref (re->classes);
  g_array_unref (re->code);
  g_free (re);
}

static gboolean
class_equal (const Class *a, const Class *b)
{
  if (a->negated != b->negated || a->and_cls != b->and_cls || a->items->len != b->items->len)
    return FALSE;
  for (guint i = 0; i < a->items->len; i++)
    {
      const ClassItem *x = &g_array_index (a->items, ClassItem, i);
      const ClassItem *y = &g_array_index (b->items, ClassItem, i);
      if (x->kind != y->kind || x->neg != y->neg || x->lo != y->lo || x->hi != y->hi ||
          x->sub != y->sub)
        return FALSE;
    }
  return TRUE;
}

/* Documented in tokenizer-regex.h. */
gboolean
hz_regex_equal (const HzRegex *a, const HzRegex *b)
{
  if (a->code->len != b->code->len || a->classes->len != b->classes->len)
    return FALSE;
  for (guint i = 0; i < a->code->len; i++)
    {
      const Inst *x = &g_array_index (a->code, Inst, i);
      const Inst *y = &g_array_index (b->code, Inst, i);
      if (x->op != y->op || x->aop != y->aop || x->mode != y->mode || x->arg != y->arg ||
          x->x != y->x || x->y != y->y || x->min != y->min || x->max != y->max)
        return FALSE;
    }
  for (guint i = 0; i < a->classes->len; i++)
    if (!class_equal (&g_array_index (a->classes, Class, i),
                      &g_array_index (b->classes, Class, i)))
      return FALSE;
  return TRUE;
}

/* ---- matching ---- */

typedef enum { BT_PC, BT_GREEDY, BT_LAZY, BT_LOOK, BT_ATOM } BtKind;

typedef struct {
  int    pc;     /* where to continue */
  guint8 kind;
  guint8 neg;    /* BT_LOOK */
  gsize  pos;
  gsize  lim;    /* BT_GREEDY: lowest end; BT_LAZY: highest end */
} Bt;

void
hz_regex_scratch_init (HzRegexScratch *s)
{
  s->stack = g_array_new (FALSE, FALSE, sizeof (Bt));
}

void
hz_regex_scratch_clear (HzRegexScratch *s)
{
  g_clear_pointer (&s->stack, g_array_unref);
}

static inline gboolean
match_one (const HzRegex *re, guint8 op, uint32_t arg, uint32_t c)
{
  switch (op)
    {
    case OP_CHAR:   return c == arg;
    case OP_CHARF:  return c == arg || fold1 (c) == arg;
    case OP_CLASS:  return class_match (re, (int) arg, c);
    case OP_CLASSF:
      return class_match (re, (int) arg, c) || class_match (re, (int) arg, fold1 (c)) ||
             (c < 128 && g_ascii_islower (c) && class_match (re, (int) arg, c - 32));
    case OP_ANY:    return c != '\n';
    default:        return FALSE;
    }
}

static inline void
push (GArray *st, int pc, BtKind kind, gsize pos, gsize lim, gboolean neg)
{
  Bt b = { pc, (guint8) kind, (guint8) neg, pos, lim };
  g_array_append_val (st, b);
}

/* Pop entries down to the innermost marker of `kind` (inclusive); returns it. */
static Bt
cut_to_marker (GArray *st, BtKind kind)
{
  while (st->len > 0)
    {
      Bt b = g_array_index (st, Bt, st->len - 1);
      g_array_set_size (st, st->len - 1);
      if (b.kind == kind)
        return b;
    }
  g_return_val_if_reached ((Bt) { 0 });
}

/* Run the program anchored at `start`; TRUE with *m_end on a match. */
static gboolean
run (const HzRegex *re, GArray *st, const uint32_t *cpts, gsize ini, gsize end, gsize start,
     gsize *m_end)
{
  const Inst *code = (const Inst *) (void *) re->code->data;
  int pc = 0;
  gsize pos = start;

  g_array_set_size (st, 0);
  for (;;)
    {
      const Inst *in = &code[pc];
      switch (in->op)
        {
        case OP_CHAR: case OP_CHARF: case OP_CLASS: case OP_CLASSF: case OP_ANY:
          if (pos < end && match_one (re, in->op, in->arg, cpts[pos]))
            {
              pos++;
              pc++;
              continue;
            }
          goto fail;
        case OP_BOL:
          if (pos == ini || cpts[pos - 1] == '\n')
            {
              pc++;
              continue;
            }
          goto fail;
        case OP_EOL:
          if (pos == end || cpts[pos] == '\n')
            {
              pc++;
              continue;
            }
          goto fail;
        case OP_WORDB: case OP_NWORDB:
          {
            gboolean a = pos > ini && is_word (cpts[pos - 1]);
            gboolean b = pos < end && is_word (cpts[pos]);
            if ((a != b) == (in->op == OP_WORDB))
              {
                pc++;
                continue;
              }
            goto fail;
          }
        case OP_SPLIT:
          push (st, in->y, BT_PC, pos, 0, FALSE);
          pc = in->x;
          continue;
        case OP_JMP:
          pc = in->x;
          continue;
        case OP_REP1:
          {
            gsize n = 0, lim = in->max == REP_INF ? G_MAXSIZE : (gsize) in->max;
            while (n < lim && pos + n < end && match_one (re, in->aop, in->arg, cpts[pos + n]))
              n++;
            if (n < (gsize) in->min)
              goto fail;
            if (in->mode == MODE_LAZY)
              {
                if (n > (gsize) in->min)
                  push (st, pc + 1, BT_LAZY, pos + in->min, pos + n, FALSE);
                pos += in->min;
              }
            else
              {
                if (in->mode == MODE_GREEDY && n > (gsize) in->min)
                  push (st, pc + 1, BT_GREEDY, pos + n, pos + in->min, FALSE);
                pos += n;
              }
            pc++;
            continue;
          }
        case OP_LOOK:
          push (st, in->x, BT_LOOK, pos, 0, in->mode);
          pc++;
          continue;
        case OP_LOOK_END:
          {
            Bt m = cut_to_marker (st, BT_LOOK);
            if (m.neg)
              goto fail;        /* the negated body matched */
            pc = m.pc;
            pos = m.pos;
            continue;
          }
        case OP_ATOM:
          push (st, 0, BT_ATOM, pos, 0, FALSE);
          pc++;
          continue;
        case OP_ATOM_END:
          cut_to_marker (st, BT_ATOM);
          pc++;
          continue;
        case OP_MATCH:
          *m_end = pos;
          return TRUE;
        default:
          g_return_val_if_reached (FALSE);
        }

    fail:
      for (;;)
        {
          Bt *b;
          if (st->len == 0)
            return FALSE;
          b = &g_array_index (st, Bt, st->len - 1);
          if (b->kind == BT_PC)
            {
              pc = b->pc;
              pos = b->pos;
              g_array_set_size (st, st->len - 1);
              break;
            }
          if (b->kind == BT_GREEDY)
            {
              pc = b->pc;
              pos = --b->pos;
              if (b->pos <= b->lim)
                g_array_set_size (st, st->len - 1);
              break;
            }
          if (b->kind == BT_LAZY)
            {
              pc = b->pc;
              pos = ++b->pos;
              if (b->pos >= b->lim)
                g_array_set_size (st, st->len - 1);
              break;
            }
          if (b->kind == BT_LOOK && b->neg)
            {
              pc = b->pc;       /* the negated body failed: the assertion holds */
              pos = b->pos;
              g_array_set_size (st, st->len - 1);
              break;
            }
          g_array_set_size (st, st->len - 1);   /* positive lookahead or atom: fails */
        }
    }
}

gboolean
hz_regex_search (const HzRegex *re, HzRegexScratch *scratch, const uint32_t *cpts,
                 gsize ini, gsize end, gsize from, gsize *m_start, gsize *m_end)
{
  const Inst *first = &g_array_index (re->code, Inst, 0);

  for (gsize s = from; s <= end; s++)
    {
      /* quick reject on a leading single-character matcher */
      if (first->op <= OP_ANY && (s == end || !match_one (re, first->op, first->arg, cpts[s])))
        continue;
      if (run (re, scratch->stack, cpts, ini, end, s, m_end))
        {
          *m_start = s;
          return TRUE;
        }
    }
  return FALSE;
}
