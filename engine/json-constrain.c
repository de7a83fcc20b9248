/* engine/json-constrain.c — the JSON constraint: a byte-level pushdown automaton over
 * RFC 8259 text shaped by a compiled schema, and token masks over a vocabulary
 * (json-constrain.h).
 *
 * The state is a stack of open containers (Frame) and the lexical state of the value or
 * member name being read (Lex). Each byte changes Lex and at most the top two frames and
 * the slot above them, so the mask's trie walk saves only those (Snap) before a byte and
 * puts them back after its subtree: no state copy per trie node.
 *
 * The closing cost (the fewest bytes that complete the text) is kept as it goes: a value
 * or name being read knows `rest`, the cost once it is done; a frame knows `base`, the
 * cost of the frames below it once it is closed; the top frame's own cost follows from
 * its phase and its schema's precomputed tables.
 *
 * Grammar bounds (so that every output parses with json-glib into ordinary values, and a
 * model cannot spin on whitespace): whitespace runs of at most WS_MAX bytes inside the
 * value, EDGE_WS_MAX before and after it, each with at most one newline and no carriage
 * return; numbers with at most 15 digits before the
 * point, 15 after it and 2 in the exponent; strings valid UTF-8 with escapes and \u
 * surrogate pairs complete (a lone surrogate is refused). */
#include "json-constrain.h"

#include <string.h>

#define WS_MAX 24
#define EDGE_WS_MAX 2   /* before and after the whole value */
#define MAX_INT_DIGITS 15
#define MAX_FRAC_DIGITS 15
#define MAX_EXP_DIGITS 2
#define MAX_TOKEN_BYTES 1024

/* M_FRAME: a framed text (hz_json_schema_new_framed()) before a prefix's first byte */
enum { M_VALUE, M_CONT, M_STR, M_NUM, M_LIT, M_END, M_FRAME };
/* Lex.frame: a literal that is a framed text's prefix (with its separator after the
 * first) or its suffix */
enum { F_NONE, F_PREFIX, F_SUFFIX };
enum { P_OPEN, P_COLON, P_VALUE, P_NEXT, P_COMMA };
/* numbers: after '-', after a leading 0, integer digits, after '.', fraction digits,
 * after 'e', after the exponent's sign, exponent digits */
enum { N_MINUS, N_ZERO, N_INT, N_DOT, N_FRAC, N_E, N_ESIGN, N_EXP };

typedef struct {
  const HzJsonNode *node;
  guint8   obj;        /* an object (else an array) */
  guint8   phase;      /* P_* */
  guint16  prop;       /* schema object: the next candidate property, or (P_COLON,
                          P_VALUE) the one being read */
  guint32  count;      /* array: elements so far */
  guint32  base;       /* closing bytes of the frames below, once this one is closed */
} Frame;

typedef struct {
  guint8   mode;       /* M_* */
  guint8   ws;         /* whitespace bytes in a row */
  guint8   utf8;       /* string: UTF-8 state (0: at a character boundary) */
  guint8   esc;        /* string: escape state (0: none; see str_step) */
  guint8   num;        /* number: N_* */
  guint8   digits;     /* number: digits of the current part */
  guint8   integer;    /* number: no fraction or exponent */
  guint8   key;        /* string / literal: a member name */
  guint8   nl;         /* the whitespace run has its newline */
  guint8   frame;      /* literal: F_* */
  guint8   again;      /* M_FRAME: a call was written (the text may end here) */
  guint16  pos;        /* literal: bytes matched */
  guint16  lit_base;   /* literal of a member name: the property of lits[0] */
  guint16  n_lits;
  guint16  depth;
  guint32  rest;       /* closing bytes after the value or name being read */
  guint64  alive;      /* literal: the candidates still matching */
  const HzJsonNode *want;          /* M_VALUE: the schema of the value */
  const char *const *lits;         /* M_LIT: candidate texts */
  const guint *lit_len;
} Lex;

struct _HzJsonState {
  Lex           x;
  Frame         f[HZ_JSON_MAX_DEPTH + 1];
  HzJsonSchema *schema;
};

static const char *const bool_lits[] = { "true", "false" };
static const guint bool_len[] = { 4, 5 };
static const char *const null_lits[] = { "null" };
static const guint null_len[] = { 4 };

/* ------------------------------------------------------------------- states */

HzJsonState *
hz_json_state_new (HzJsonSchema *schema)
{
  HzJsonState *s = g_new0 (HzJsonState, 1);
  s->schema = hz_json_schema_ref (schema);
  s->x.mode = schema->frame ? M_FRAME : M_VALUE;
  s->x.want = schema->root;
  return s;
}

HzJsonState *
hz_json_state_copy (const HzJsonState *s)
{
  HzJsonState *c = g_memdup2 (s, sizeof *s);
  hz_json_schema_ref (c->schema);
  return c;
}

void
hz_json_state_free (HzJsonState *s)
{
  if (s == NULL)
    return;
  hz_json_schema_unref (s->schema);
  g_free (s);
}

static inline gboolean
is_ws (guint8 c)
{
  return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

/* A whitespace byte of a run of at most `max` bytes with at most one newline (and no
 * carriage return: "\n" and spaces or tabs make every layout). */
static inline gboolean
ws_step (Lex *x, guint8 c, guint max)
{
  if (x->ws >= max || c == '\r' || (c == '\n' && x->nl))
    return FALSE;
  x->ws++;
  x->nl |= c == '\n';
  return TRUE;
}

static inline gboolean
is_digit (guint8 c)
{
  return c >= '0' && c <= '9';
}

static inline gboolean
is_hex (guint8 c)
{
  return is_digit (c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* UTF-8 (RFC 3629 table): state 0 at a boundary; 1-3 need that many continuation bytes;
 * 4 after E0 (A0-BF next), 5 after ED (80-9F), 6 after F0 (90-BF), 7 after F4 (80-8F).
 * Returns the next state, or -1. */
static inline int
utf8_step (int u, guint8 c)
{
  switch (u)
    {
    case 0:
      if (c < 0x80)
        return 0;
      if (c >= 0xc2 && c <= 0xdf)
        return 1;
      if (c == 0xe0)
        return 4;
      if (c == 0xed)
        return 5;
      if (c >= 0xe1 && c <= 0xef)
        return 2;
      if (c == 0xf0)
        return 6;
      if (c >= 0xf1 && c <= 0xf3)
        return 3;
      if (c == 0xf4)
        return 7;
      return -1;
    case 1: case 2: case 3:
      return c >= 0x80 && c <= 0xbf ? u - 1 : -1;
    case 4:
      return c >= 0xa0 && c <= 0xbf ? 1 : -1;
    case 5:
      return c >= 0x80 && c <= 0x9f ? 1 : -1;
    case 6:
      return c >= 0x90 && c <= 0xbf ? 2 : -1;
    default:
      return c >= 0x80 && c <= 0x8f ? 2 : -1;
    }
}

static const guint8 utf8_pending[8] = { 0, 1, 2, 3, 2, 2, 3, 3 };

/* Escape states: 1 after '\'; 2-5 the four hex digits of \u (12: the second after a 'D',
 * 13-14 the last two of a high surrogate); 6-11 the "\uDC.." that must follow it. Bytes
 * still needed in each: */
static const guint8 esc_pending[15] = { 0, 1, 4, 3, 2, 1, 6, 5, 4, 3, 2, 1, 3, 8, 7 };

/* String byte that needs no care inside a string: not a quote, backslash or control. */
static inline gboolean
is_plain (guint8 c)
{
  return c >= 0x20 && c != '"' && c != '\\';
}

/* ------------------------------------------------------------- closing costs */

static guint
frame_cost (const Frame *f)
{
  const HzJsonNode *n = f->node;
  if (f->obj)
    {
      if (n->any_keys)
        return f->phase == P_COMMA ? 5 : f->phase == P_COLON ? 3 : 1;   /* "":0}  :0}  } */
      switch (f->phase)
        {
        case P_OPEN:
          return n->req_rest[0] ? n->req_rest[0] : 1;
        case P_COLON:
          return 1 + n->props[f->prop]->min_len + n->req_rest[f->prop + 1] + 1;
        case P_COMMA:
          return n->after_comma[f->prop];
        default:
          return n->req_rest[f->prop] + 1;
        }
    }
  const guint ml = n->items->min_len;
  const guint need = n->min_items > f->count ? n->min_items - f->count : 0;
  switch (f->phase)
    {
    case P_OPEN:
      return need ? need * ml + need : 1;
    case P_COMMA:
      return MAX (need, 1) * (ml + 1);
    default:
      return need * (1 + ml) + 1;
    }
}

/* The cost of the next member after member name i of the top (schema) object. */
static inline guint
key_cost (const Frame *f, guint i)
{
  const HzJsonNode *n = f->node;
  return 1 + n->props[i]->min_len + n->req_rest[i + 1] + 1;
}

guint
hz_json_state_close_bytes (const HzJsonState *s)
{
  const Lex *x = &s->x;
  switch (x->mode)
    {
    case M_VALUE:
      return x->want->min_len + x->rest;
    case M_STR:
      return x->rest + 1 + utf8_pending[x->utf8] + esc_pending[x->esc];
    case M_NUM:
      return x->rest + (x->num == N_MINUS || x->num == N_DOT || x->num == N_E || x->num == N_ESIGN);
    case M_LIT:
      {
        guint best = G_MAXUINT;
        for (guint i = 0; i < x->n_lits; i++)
          if (x->alive & (G_GUINT64_CONSTANT (1) << i))
            {
              guint c = x->lit_len[i] - x->pos;
              if (x->key)
                c += key_cost (&s->f[x->depth - 1], x->lit_base + i);
              else if (x->frame == F_PREFIX)
                c += s->schema->frame->roots[i]->min_len + s->schema->frame->suffix_len;
              best = MIN (best, c);
            }
        return best + x->rest;
      }
    case M_CONT:
      return s->f[x->depth - 1].base + frame_cost (&s->f[x->depth - 1]);
    case M_FRAME:
      return x->again ? 0 : s->schema->frame->min_first;
    default:
      return 0;
    }
}

/* ---------------------------------------------------------------- the bytes */

static gboolean step (HzJsonState *s, guint8 c);

/* A framed text's suffix is done: the text may end, or (with a separator) go on. */
static void
frame_done (HzJsonState *s)
{
  Lex *x = &s->x;
  x->frame = F_NONE;
  x->mode = s->schema->frame->repeat ? M_FRAME : M_END;
  x->again = 1;
}

/* A value is done: its container moves on, or the text is complete (or, in a framed
 * text, its suffix comes). */
static void
value_done (HzJsonState *s)
{
  Lex *x = &s->x;
  x->ws = x->nl = 0;
  if (x->depth == 0 && s->schema->frame)
    {
      const HzJsonFrame *fr = s->schema->frame;
      if (fr->suffix_len == 0)
        {
          frame_done (s);
          return;
        }
      x->mode = M_LIT;
      x->lits = (const char *const *) &fr->suffix;
      x->lit_len = &fr->suffix_len;
      x->n_lits = 1;
      x->lit_base = 0;
      x->key = 0;
      x->frame = F_SUFFIX;
      x->alive = 1;
      x->pos = 0;
      x->rest = 0;
      return;
    }
  if (x->depth == 0)
    {
      x->mode = M_END;
      return;
    }
  Frame *f = &s->f[x->depth - 1];
  if (f->obj)
    f->prop++;
  else
    f->count++;
  f->phase = P_NEXT;
  x->mode = M_CONT;
}

/* A member name is done: a colon follows. */
static void
key_done (HzJsonState *s, guint prop)
{
  Frame *f = &s->f[s->x.depth - 1];
  f->phase = P_COLON;
  f->prop = (guint16) prop;
  s->x.mode = M_CONT;
  s->x.ws = s->x.nl = 0;
}

static void expect_value (HzJsonState *s, const HzJsonNode *node, guint rest);

/* After a literal byte: when every candidate left is complete, it is done. */
static void
lit_maybe_done (HzJsonState *s)
{
  Lex *x = &s->x;
  guint done = G_MAXUINT;
  for (guint i = 0; i < x->n_lits; i++)
    if (x->alive & (G_GUINT64_CONSTANT (1) << i))
      {
        if (x->lit_len[i] != x->pos)
          return;
        done = i;
      }
  if (x->key)
    key_done (s, x->lit_base + done);
  else if (x->frame == F_PREFIX)
    {
      const HzJsonFrame *fr = s->schema->frame;
      x->frame = F_NONE;
      expect_value (s, fr->roots[done], fr->suffix_len);
    }
  else if (x->frame == F_SUFFIX)
    frame_done (s);
  else
    value_done (s);
}

static gboolean
start_lit (HzJsonState *s, const char *const *lits, const guint *lens, guint n, guint base,
           gboolean key, guint8 frame, guint8 c)
{
  Lex *x = &s->x;
  guint64 alive = 0;
  for (guint i = 0; i < n; i++)
    if (lens[i] > 0 && (guint8) lits[i][0] == c)
      alive |= G_GUINT64_CONSTANT (1) << i;
  if (alive == 0)
    return FALSE;
  x->mode = M_LIT;
  x->lits = lits;
  x->lit_len = lens;
  x->n_lits = (guint16) n;
  x->lit_base = (guint16) base;
  x->key = (guint8) key;
  x->frame = frame;
  x->alive = alive;
  x->pos = 1;
  lit_maybe_done (s);
  return TRUE;
}

static gboolean
push (HzJsonState *s, const HzJsonNode *node, gboolean obj)
{
  Lex *x = &s->x;
  if (x->depth >= HZ_JSON_MAX_DEPTH)
    return FALSE;
  s->f[x->depth++] = (Frame) { .node = node, .obj = (guint8) obj, .phase = P_OPEN,
                               .base = x->rest };
  x->mode = M_CONT;
  x->ws = x->nl = 0;
  return TRUE;
}

/* The first byte of a value of `node` (not whitespace); x->rest is already set. */
static gboolean
start_value (HzJsonState *s, const HzJsonNode *node, guint8 c)
{
  Lex *x = &s->x;
  const guint t = node->types;
  if (node->n_lits)
    return start_lit (s, (const char *const *) node->lits, node->lit_len, node->n_lits, 0,
                      FALSE, F_NONE, c);
  switch (c)
    {
    case '{':
      return (t & HZ_JT_OBJECT) && push (s, node->as_object ? node->as_object : node, TRUE);
    case '[':
      return (t & HZ_JT_ARRAY) && push (s, node->as_array ? node->as_array : node, FALSE);
    case '"':
      if (!(t & HZ_JT_STRING))
        return FALSE;
      x->mode = M_STR;
      x->utf8 = x->esc = x->key = 0;
      return TRUE;
    case 't': case 'f':
      return (t & HZ_JT_BOOLEAN) && start_lit (s, bool_lits, bool_len, 2, 0, FALSE, F_NONE, c);
    case 'n':
      return (t & HZ_JT_NULL) && start_lit (s, null_lits, null_len, 1, 0, FALSE, F_NONE, c);
    default:
      if (!(c == '-' || is_digit (c)) || !(t & (HZ_JT_NUMBER | HZ_JT_INTEGER)))
        return FALSE;
      x->mode = M_NUM;
      x->integer = !(t & HZ_JT_NUMBER);
      x->num = c == '-' ? N_MINUS : c == '0' ? N_ZERO : N_INT;
      x->digits = c != '-';
      return TRUE;
    }
}

/* A value of `node` comes next, then `rest` closing bytes. */
static void
expect_value (HzJsonState *s, const HzJsonNode *node, guint rest)
{
  s->x.mode = M_VALUE;
  s->x.want = node;
  s->x.rest = rest;
  s->x.ws = s->x.nl = 0;
}

static gboolean
str_step (HzJsonState *s, guint8 c)
{
  Lex *x = &s->x;
  switch (x->esc)
    {
    case 0:
      if (c == '"' && x->utf8 == 0)
        {
          if (x->key)
            key_done (s, 0);
          else
            value_done (s);
          return TRUE;
        }
      if (c == '\\' && x->utf8 == 0)
        {
          x->esc = 1;
          return TRUE;
        }
      if (c < 0x20)
        return FALSE;
      {
        const int u = utf8_step (x->utf8, c);
        if (u < 0)
          return FALSE;
        x->utf8 = (guint8) u;
        return TRUE;
      }
    case 1:
      if (c == 'u')
        x->esc = 2;
      else if (strchr ("\"\\/bfnrt", c) && c != 0)
        x->esc = 0;
      else
        return FALSE;
      return TRUE;
    case 2:
      if (!is_hex (c))
        return FALSE;
      x->esc = c == 'd' || c == 'D' ? 12 : 3;
      return TRUE;
    case 12:   /* \uD?: 0-7 a plain code point, 8-B a high surrogate, C-F a lone low one */
      if (c >= '0' && c <= '7')
        x->esc = 4;
      else if (c == '8' || c == '9' || (c >= 'a' && c <= 'b') || (c >= 'A' && c <= 'B'))
        x->esc = 13;
      else
        return FALSE;
      return TRUE;
    case 3: case 4: case 5: case 10: case 11:
      if (!is_hex (c))
        return FALSE;
      x->esc = x->esc == 5 || x->esc == 11 ? 0 : x->esc + 1;
      return TRUE;
    case 13: case 14:
      if (!is_hex (c))
        return FALSE;
      x->esc = x->esc == 13 ? 14 : 6;
      return TRUE;
    case 6:
      return c == '\\' && (x->esc = 7);
    case 7:
      return c == 'u' && (x->esc = 8);
    case 8:
      return (c == 'd' || c == 'D') && (x->esc = 9);
    default:   /* 9: the low surrogate's second digit, C-F */
      if (!((c >= 'c' && c <= 'f') || (c >= 'C' && c <= 'F')))
        return FALSE;
      x->esc = 10;
      return TRUE;
    }
}

/* A number byte: 1 taken, 0 refused, -1 the number ended before it. */
static int
num_step (Lex *x, guint8 c)
{
  const gboolean d = is_digit (c);
  switch (x->num)
    {
    case N_MINUS:
      if (!d)
        return 0;
      x->num = c == '0' ? N_ZERO : N_INT;
      x->digits = 1;
      return 1;
    case N_ZERO: case N_INT: case N_FRAC: case N_EXP:
      if (d && x->num != N_ZERO)
        {
          const guint max = x->num == N_INT ? MAX_INT_DIGITS
                            : x->num == N_FRAC ? MAX_FRAC_DIGITS : MAX_EXP_DIGITS;
          if (x->digits >= max)
            return 0;
          x->digits++;
          return 1;
        }
      if (d)
        return 0;   /* a leading zero */
      if (c == '.' && (x->num == N_ZERO || x->num == N_INT) && !x->integer)
        {
          x->num = N_DOT;
          return 1;
        }
      if ((c == 'e' || c == 'E') && x->num != N_EXP && !x->integer)
        {
          x->num = N_E;
          return 1;
        }
      return -1;
    case N_DOT:
      if (!d)
        return 0;
      x->num = N_FRAC;
      x->digits = 1;
      return 1;
    case N_E:
      if (c == '+' || c == '-')
        {
          x->num = N_ESIGN;
          return 1;
        }
      G_GNUC_FALLTHROUGH;
    default:   /* N_ESIGN */
      if (!d)
        return 0;
      x->num = N_EXP;
      x->digits = 1;
      return 1;
    }
}

/* A member name starts ('"' read) in the top object. */
static gboolean
start_key (HzJsonState *s, Frame *f, guint8 c)
{
  const HzJsonNode *n = f->node;
  Lex *x = &s->x;
  if (n->any_keys)
    {
      x->mode = M_STR;
      x->utf8 = x->esc = 0;
      x->key = 1;
      x->rest = f->base + 3;   /* :0} */
      return TRUE;
    }
  if (f->prop >= n->n_props)
    return FALSE;
  /* candidates: from the next property up to the first required one */
  guint last = f->prop;
  while (last + 1 < n->n_props && !n->required[last])
    last++;
  x->rest = f->base;
  return start_lit (s, (const char *const *) n->keys + f->prop, n->key_len + f->prop,
                    last - f->prop + 1, f->prop, TRUE, F_NONE, c);
}

static gboolean
pop (HzJsonState *s)
{
  s->x.depth--;
  value_done (s);
  return TRUE;
}

static gboolean
cont_step (HzJsonState *s, guint8 c)
{
  Lex *x = &s->x;
  if (is_ws (c))
    return ws_step (x, c, WS_MAX);
  x->ws = x->nl = 0;
  Frame *f = &s->f[x->depth - 1];
  const HzJsonNode *n = f->node;
  if (f->obj)
    {
      const gboolean can_close = n->any_keys || n->req_rest[f->prop] == 0;
      switch (f->phase)
        {
        case P_OPEN:
          if (c == '}')
            return can_close && pop (s);
          return c == '"' && start_key (s, f, c);
        case P_COMMA:
          return c == '"' && start_key (s, f, c);
        case P_COLON:
          if (c != ':')
            return FALSE;
          f->phase = P_VALUE;
          if (n->any_keys)
            expect_value (s, hz_json_node_any (), f->base + 1);
          else
            expect_value (s, n->props[f->prop], f->base + n->req_rest[f->prop + 1] + 1);
          return TRUE;
        default:   /* P_NEXT */
          if (c == '}')
            return can_close && pop (s);
          if (c != ',' || !(n->any_keys || f->prop < n->n_props))
            return FALSE;
          f->phase = P_COMMA;
          return TRUE;
        }
    }
  switch (f->phase)
    {
    case P_NEXT:
      if (c == ']')
        return f->count >= n->min_items && pop (s);
      if (c != ',' || f->count >= n->max_items)
        return FALSE;
      f->phase = P_COMMA;
      return TRUE;
    case P_OPEN:
      if (c == ']')
        return n->min_items == 0 && pop (s);
      G_GNUC_FALLTHROUGH;   /* an element starts */
    default:
      {
        if (f->count >= n->max_items)
          return FALSE;
        const guint left = n->min_items > f->count + 1 ? n->min_items - f->count - 1 : 0;
        f->phase = P_VALUE;
        expect_value (s, n->items, f->base + left * (1 + n->items->min_len) + 1);
        return start_value (s, n->items, c);
      }
    }
}

static gboolean
step (HzJsonState *s, guint8 c)
{
  Lex *x = &s->x;
  switch (x->mode)
    {
    case M_STR:
      return str_step (s, c);
    case M_VALUE:
      if (is_ws (c))
        return ws_step (x, c, x->depth == 0 && x->rest == 0 ? EDGE_WS_MAX : WS_MAX);
      x->ws = x->nl = 0;
      return start_value (s, x->want, c);
    case M_CONT:
      return cont_step (s, c);
    case M_NUM:
      {
        const int r = num_step (x, c);
        if (r >= 0)
          return r;
        value_done (s);
        return step (s, c);
      }
    case M_LIT:
      {
        guint64 next = 0;
        gboolean complete = FALSE;
        for (guint i = 0; i < x->n_lits; i++)
          if (x->alive & (G_GUINT64_CONSTANT (1) << i))
            {
              if (x->lit_len[i] > x->pos && (guint8) x->lits[i][x->pos] == c)
                next |= G_GUINT64_CONSTANT (1) << i;
              complete |= x->lit_len[i] == x->pos;
            }
        if (next)
          {
            x->alive = next;
            x->pos++;
            lit_maybe_done (s);
            return TRUE;
          }
        if (!complete || x->key || x->frame)
          return FALSE;
        value_done (s);   /* a literal that others extend (enum [1, 12]) ended */
        return step (s, c);
      }
    case M_FRAME:
      {
        const HzJsonFrame *fr = s->schema->frame;
        x->rest = 0;
        return start_lit (s, (const char *const *) (x->again ? fr->again : fr->pre),
                          x->again ? fr->again_len : fr->pre_len, fr->n, 0, FALSE, F_PREFIX, c);
      }
    default:   /* M_END */
      return is_ws (c) && ws_step (x, c, EDGE_WS_MAX);
    }
}

gboolean
hz_json_state_complete (const HzJsonState *s)
{
  const Lex *x = &s->x;
  if (x->mode == M_END)
    return TRUE;
  if (x->mode == M_FRAME)
    return x->again;
  if (x->depth > 0 || x->rest > 0 || x->frame)
    return FALSE;
  if (x->mode == M_NUM)
    return x->num == N_ZERO || x->num == N_INT || x->num == N_FRAC || x->num == N_EXP;
  return x->mode == M_LIT && !x->key && hz_json_state_close_bytes (s) == 0;
}

const char *
hz_json_state_where (const HzJsonState *s)
{
  static const char *const names[] = { "value", "structure", "string", "number", "literal",
                                       "end", "frame" };
  return names[s->x.mode];
}

gboolean
hz_json_state_feed (HzJsonState *s, const char *bytes, gsize n)
{
  HzJsonState t;
  memcpy (&t, s, sizeof t);
  for (gsize i = 0; i < n; i++)
    if (!step (&t, (guint8) bytes[i]))
      return FALSE;
  memcpy (s, &t, sizeof t);
  return TRUE;
}

/* ---------------------------------------------------------------- the vocabulary */

typedef struct {
  guint32 child;     /* first child (children are contiguous) */
  guint32 tok;       /* first token ending here, in `toks` */
  guint16 n_child, n_tok;
  guint8  byte;
} TrieNode;

typedef struct {
  GArray  *nodes;    /* TrieNode; 0 is the root */
  GArray  *toks;     /* guint32 token ids, grouped by node */
} Trie;

struct _HzJsonVocab {
  guint     n, n_words;
  char    **bytes;         /* [n] token bytes (not NUL-terminated) */
  guint    *len;
  Trie      all;           /* every non-empty token */
  Trie      tails;         /* tokens with a non-plain byte: from the first one on */
  guint8   *pre_ok;        /* [n]: UTF-8 states from which such a token's plain head is
                              valid and ends on a character boundary (bit u) */
  guint64  *plain[8][4];   /* [u][p][n_words]: tokens all plain, valid from UTF-8 state u,
                              ending with p bytes of a character still to come */
  guint64  *plain_any[8];  /* [u][n_words]: the union over p */
  guint     n_plain_any[8];
  guint64  *eog;           /* [n_words] */
  HzToken   any_eog;
};

/* Where a token's tail starts (its first non-plain byte), or its length. */
static guint
tail_start (const HzJsonVocab *v, guint t)
{
  for (guint i = 0; i < v->len[t]; i++)
    if (!is_plain ((guint8) v->bytes[t][i]))
      return i;
  return v->len[t];
}

typedef struct {
  const HzJsonVocab *v;
  const guint       *start;   /* [n] byte offset of each token's key */
} KeyCtx;

/* Key byte d of token t (its tail's, for the tails trie), or 256 where the key ends. */
static inline guint
key_at (const KeyCtx *k, guint32 t, guint d)
{
  const guint at = k->start[t] + d;
  return at < k->v->len[t] ? (guint8) k->v->bytes[t][at] : 256;
}

/* Fill node `at` from ids[lo, hi), whose keys share their first d bytes: a counting sort
 * of the range by key byte d (the keys that end here first, then by byte; stable, so
 * equal keys keep their id order), then one child per byte, allocated together. The whole
 * trie costs O(total key bytes): an MSD radix sort that builds as it goes. */
static void
trie_fill (Trie *tr, const KeyCtx *k, guint32 *ids, guint32 *tmp, guint lo, guint hi, guint d,
           guint at)
{
  if (hi - lo > 1 && hi - lo <= 16)
    /* few keys (most nodes): insertion sort by this byte, stable */
    for (guint i = lo + 1; i < hi; i++)
      {
        const guint32 t = ids[i];
        const guint kt = (key_at (k, t, d) + 1) % 257;
        guint j = i;
        for (; j > lo && (key_at (k, ids[j - 1], d) + 1) % 257 > kt; j--)
          ids[j] = ids[j - 1];
        ids[j] = t;
      }
  else if (hi - lo > 16)
    {
      guint count[258] = { 0 };
      for (guint i = lo; i < hi; i++)
        count[(key_at (k, ids[i], d) + 1) % 257 + 1]++;   /* the end (256) sorts first */
      for (guint b = 1; b < 258; b++)
        count[b] += count[b - 1];
      for (guint i = lo; i < hi; i++)
        tmp[lo + count[(key_at (k, ids[i], d) + 1) % 257]++] = ids[i];
      memcpy (ids + lo, tmp + lo, (hi - lo) * sizeof *ids);
    }

  TrieNode node = g_array_index (tr->nodes, TrieNode, at);
  node.tok = tr->toks->len;
  while (lo < hi && key_at (k, ids[lo], d) == 256)
    {
      g_array_append_val (tr->toks, ids[lo]);
      lo++;
      node.n_tok++;
    }
  guint n_child = 0;
  for (guint i = lo; i < hi; n_child++)
    for (const guint b = key_at (k, ids[i], d); i < hi && key_at (k, ids[i], d) == b;)
      i++;
  node.child = tr->nodes->len;
  node.n_child = (guint16) n_child;
  g_array_index (tr->nodes, TrieNode, at) = node;
  g_array_set_size (tr->nodes, tr->nodes->len + n_child);
  guint c = node.child;
  for (guint i = lo; i < hi; c++)
    {
      const guint b = key_at (k, ids[i], d);
      guint j = i;
      while (j < hi && key_at (k, ids[j], d) == b)
        j++;
      g_array_index (tr->nodes, TrieNode, c) = (TrieNode) { .byte = (guint8) b };
      trie_fill (tr, k, ids, tmp, i, j, d + 1, c);
      i = j;
    }
}

static void
trie_build (Trie *tr, const HzJsonVocab *v, GArray *ids, const guint *start)
{
  KeyCtx k = { v, start };
  g_autofree guint32 *tmp = g_new (guint32, MAX (ids->len, 1));
  tr->nodes = g_array_new (FALSE, TRUE, sizeof (TrieNode));
  tr->toks = g_array_new (FALSE, FALSE, sizeof (guint32));
  g_array_set_size (tr->nodes, 1);
  trie_fill (tr, &k, (guint32 *) (void *) ids->data, tmp, 0, ids->len, 0, 0);
}

HzJsonVocab *
hz_json_vocab_new (const char *const *pieces, const gsize *lens, guint n, const gboolean *eog)
{
  HzJsonVocab *v = g_new0 (HzJsonVocab, 1);
  v->n = n;
  v->n_words = (n + 63) / 64;
  v->bytes = g_new0 (char *, n);
  v->len = g_new0 (guint, n);
  v->pre_ok = g_new0 (guint8, n);
  v->eog = g_new0 (guint64, v->n_words);
  v->any_eog = -1;
  for (guint u = 0; u < 8; u++)
    for (guint p = 0; p < 4; p++)
      v->plain[u][p] = g_new0 (guint64, v->n_words);
  g_autofree guint *start = g_new0 (guint, n);
  g_autoptr (GArray) all = g_array_new (FALSE, FALSE, sizeof (guint32));
  g_autoptr (GArray) tails = g_array_new (FALSE, FALSE, sizeof (guint32));
  for (guint t = 0; t < n; t++)
    {
      if (eog && eog[t])
        {
          v->eog[t / 64] |= G_GUINT64_CONSTANT (1) << (t % 64);
          if (v->any_eog < 0)
            v->any_eog = (HzToken) t;
        }
      /* a token longer than MAX_TOKEN_BYTES never matches (the walk recurses per byte) */
      v->len[t] = lens[t] <= MAX_TOKEN_BYTES ? (guint) lens[t] : 0;
      v->bytes[t] = g_memdup2 (pieces[t], v->len[t]);
      if (v->len[t] == 0)
        continue;
      g_array_append_val (all, t);
      const guint ts = tail_start (v, t);
      for (guint u = 0; u < 8; u++)
        {
          int s = (int) u;
          for (guint i = 0; i < ts && s >= 0; i++)
            s = utf8_step (s, (guint8) v->bytes[t][i]);
          if (ts == v->len[t] && s >= 0)
            v->plain[u][utf8_pending[s]][t / 64] |= G_GUINT64_CONSTANT (1) << (t % 64);
          else if (ts < v->len[t] && s == 0)
            v->pre_ok[t] |= (guint8) (1u << u);
        }
      if (ts < v->len[t])
        {
          start[t] = ts;
          g_array_append_val (tails, t);
        }
    }
  for (guint u = 0; u < 8; u++)
    {
      v->plain_any[u] = g_new0 (guint64, v->n_words);
      for (guint i = 0; i < v->n_words; i++)
        {
          for (guint p = 0; p < 4; p++)
            v->plain_any[u][i] |= v->plain[u][p][i];
          v->n_plain_any[u] += (guint) __builtin_popcountll (v->plain_any[u][i]);
        }
    }
  g_autofree guint *zero = g_new0 (guint, n);
  trie_build (&v->all, v, all, zero);
  trie_build (&v->tails, v, tails, start);
  return v;
}

HzJsonVocab *
hz_json_vocab_new_from_tokenizer (const HzTokenizer *t)
{
  const guint n = (guint) hz_tokenizer_n_vocab (t);
  g_autofree char **pieces = g_new0 (char *, n);
  g_autofree gsize *lens = g_new0 (gsize, n);
  g_autofree gboolean *eog = g_new0 (gboolean, n);
  char buf[256];
  for (guint i = 0; i < n; i++)
    {
      const gsize len = hz_tokenizer_piece (t, (HzToken) i, FALSE, buf, sizeof buf);
      pieces[i] = g_malloc (MAX (len, 1));
      if (len > sizeof buf)
        hz_tokenizer_piece (t, (HzToken) i, FALSE, pieces[i], len);
      else
        memcpy (pieces[i], buf, len);
      lens[i] = len;
      eog[i] = hz_tokenizer_is_eog (t, (HzToken) i);
    }
  HzJsonVocab *v = hz_json_vocab_new ((const char *const *) pieces, lens, n, eog);
  for (guint i = 0; i < n; i++)
    g_free (pieces[i]);
  return v;
}

void
hz_json_vocab_free (HzJsonVocab *v)
{
  if (v == NULL)
    return;
  for (guint t = 0; t < v->n; t++)
    g_free (v->bytes[t]);
  g_free (v->bytes);
  g_free (v->len);
  g_free (v->pre_ok);
  g_free (v->eog);
  for (guint u = 0; u < 8; u++)
    {
      for (guint p = 0; p < 4; p++)
        g_free (v->plain[u][p]);
      g_free (v->plain_any[u]);
    }
  g_array_unref (v->all.nodes);
  g_array_unref (v->all.toks);
  g_array_unref (v->tails.nodes);
  g_array_unref (v->tails.toks);
  g_free (v);
}

guint
hz_json_vocab_n_tokens (const HzJsonVocab *v)
{
  return v->n;
}

HzToken
hz_json_vocab_any_eog (const HzJsonVocab *v)
{
  return v->any_eog;
}

gsize
hz_json_vocab_mask_words (const HzJsonVocab *v)
{
  return v->n_words;
}

gboolean
hz_json_state_accept (HzJsonState *s, const HzJsonVocab *v, HzToken t)
{
  if (t < 0 || (guint) t >= v->n)
    return FALSE;
  if (v->eog[t / 64] & (G_GUINT64_CONSTANT (1) << (t % 64)))
    {
      const HzJsonFrame *fr = s->schema->frame;
      if (!hz_json_state_complete (s) || (fr && fr->end_token >= 0 && t != fr->end_token))
        return FALSE;
      s->x.mode = M_END;
      return TRUE;
    }
  return v->len[t] > 0 && hz_json_state_feed (s, v->bytes[t], v->len[t]);
}

/* --------------------------------------------------------------------- masks */

/* What one byte may change: the lexical state and the frames around the top. */
typedef struct {
  Lex   x;
  Frame f[3];
} Snap;

static inline void
snap_save (const HzJsonState *s, Snap *p)
{
  p->x = s->x;
  const guint d = s->x.depth;
  for (guint i = 0; i < 3; i++)
    if (d + i >= 2 && d + i - 2 <= HZ_JSON_MAX_DEPTH)
      p->f[i] = s->f[d + i - 2];
}

static inline void
snap_restore (HzJsonState *s, const Snap *p)
{
  const guint d = p->x.depth;
  s->x = p->x;
  for (guint i = 0; i < 3; i++)
    if (d + i >= 2 && d + i - 2 <= HZ_JSON_MAX_DEPTH)
      s->f[d + i - 2] = p->f[i];
}

typedef struct {
  HzJsonState       *s;
  const Trie        *tr;
  const guint8      *pre_ok;   /* tails: a token's head must suit UTF-8 state u */
  guint8             u_bit;
  guint              limit;    /* closing bytes allowed after the token */
  guint64           *mask;
  guint              count;
} Walk;

static void
walk (Walk *w, guint at)
{
  const TrieNode *nodes = (const TrieNode *) (void *) w->tr->nodes->data;
  const guint32 *toks = (const guint32 *) (void *) w->tr->toks->data;
  const TrieNode *n = &nodes[at];
  for (guint i = 0; i < n->n_child; i++)
    {
      const guint ci = n->child + i;
      const TrieNode *c = &nodes[ci];
      Snap snap;
      snap_save (w->s, &snap);
      if (step (w->s, c->byte))
        {
          if (c->n_tok && (w->limit == G_MAXUINT || hz_json_state_close_bytes (w->s) <= w->limit))
            for (guint k = 0; k < c->n_tok; k++)
              {
                const guint32 t = toks[c->tok + k];
                if (w->pre_ok && !(w->pre_ok[t] & w->u_bit))
                  continue;
                w->mask[t / 64] |= G_GUINT64_CONSTANT (1) << (t % 64);
                w->count++;
              }
          if (c->n_child)
            walk (w, ci);
        }
      snap_restore (w->s, &snap);
    }
}

guint
hz_json_mask (const HzJsonVocab *v, const HzJsonState *s, guint budget, guint64 *mask)
{
  HzJsonState st;
  memcpy (&st, s, sizeof st);
  memset (mask, 0, v->n_words * sizeof *mask);
  Walk w = { &st, &v->all, NULL, 0, budget == G_MAXUINT ? G_MAXUINT : MAX (budget, 1) - 1,
             mask, 0 };
  const Lex *x = &s->x;
  /* inside a free string: the plain tokens stay in it, needing rest + 1 + p bytes to
   * close when they end p bytes into a character: their bitmaps for the p that the budget
   * allows; the others are walked from their first quote, backslash or control byte */
  if (x->mode == M_STR && x->esc == 0 && (w.limit == G_MAXUINT || (guint64) x->rest + 4 <= w.limit))
    {
      /* far from the budget (most of the time): every plain token, one copy */
      memcpy (mask, v->plain_any[x->utf8], v->n_words * sizeof *mask);
      w.count = v->n_plain_any[x->utf8];
      w.tr = &v->tails;
      w.pre_ok = v->pre_ok;
      w.u_bit = (guint8) (1u << x->utf8);
      st.x.utf8 = 0;
    }
  else if (x->mode == M_STR && x->esc == 0)
    {
      for (guint p = 0; p < 4; p++)
        if ((guint64) x->rest + 1 + p <= w.limit)
          {
            const guint64 *plain = v->plain[x->utf8][p];
            for (guint i = 0; i < v->n_words; i++)
              {
                mask[i] |= plain[i];
                w.count += (guint) __builtin_popcountll (plain[i]);
              }
          }
      w.tr = &v->tails;
      w.pre_ok = v->pre_ok;
      w.u_bit = (guint8) (1u << x->utf8);
      st.x.utf8 = 0;
    }
  walk (&w, 0);
  const HzJsonFrame *fr = s->schema->frame;
  if (hz_json_state_complete (s) && fr && fr->end_token >= 0)
    {
      /* a framed text that must end with one token (harmony's <|call|>) */
      const guint t = (guint) fr->end_token;
      const guint64 bit = G_GUINT64_CONSTANT (1) << (t % 64);
      if (t < v->n && (v->eog[t / 64] & bit) && !(mask[t / 64] & bit))
        {
          mask[t / 64] |= bit;
          w.count++;
        }
    }
  else if (hz_json_state_complete (s))
    for (guint i = 0; i < v->n_words; i++)
      {
        w.count += (guint) __builtin_popcountll (v->eog[i] & ~mask[i]);
        mask[i] |= v->eog[i];
      }
  return w.count;
}
