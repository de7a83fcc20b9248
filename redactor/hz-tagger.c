/* hz-tagger.c — the learned PERSON sequence tagger (see hz-tagger.h for the model and the
 * weights-file layout; the trainer is redactor/train-person-tagger.c). */
#include "hz-tagger.h"
#include "rec-names-context.h"

#include <math.h>
#include <string.h>

const char hz_tagger_rec[] = "person-tagger";

static void build_lut (HzTagger *t);

static HzTagger *
tagger_alloc (guint bucket_bits)
{
  HzTagger *t = g_new0 (HzTagger, 1);
  t->bucket_bits = bucket_bits;
  return t;
}

HzTagger *
hz_tagger_new (guint bucket_bits)
{
  g_return_val_if_fail (bucket_bits >= 8 && bucket_bits <= 22, NULL);
  HzTagger *t = tagger_alloc (bucket_bits);
  t->w = g_new0 (float, (gsize) HZ_TAG_N << bucket_bits);
  return t;
}

void
hz_tagger_free (HzTagger *tagger)
{
  if (!tagger)
    return;
  g_free (tagger->w);
  g_free (tagger->blocks);
  g_free (tagger->rows);
  g_free (tagger->lut);
  g_free (tagger);
}

static guint32
rd32 (const guint8 *p)
{
  return (guint32) p[0] | (guint32) p[1] << 8 | (guint32) p[2] << 16 | (guint32) p[3] << 24;
}

static guint64
rd64 (const guint8 *p)
{
  return (guint64) rd32 (p) | (guint64) rd32 (p + 4) << 32;
}

static float
rdf (const guint8 *p)
{
  guint32 u = rd32 (p);
  float f;
  memcpy (&f, &u, 4);
  return f;
}

static void
wr32 (guint8 *p, guint32 v)
{
  p[0] = (guint8) v;
  p[1] = (guint8) (v >> 8);
  p[2] = (guint8) (v >> 16);
  p[3] = (guint8) (v >> 24);
}

static void
wrf (guint8 *p, float f)
{
  guint32 u;
  memcpy (&u, &f, 4);
  wr32 (p, u);
}

void
hz_tagger_checksum (const guint8 *file, gsize size, guint8 out[32])
{
  g_return_if_fail (size >= HZ_TAGGER_HEADER);
  GChecksum *c = g_checksum_new (G_CHECKSUM_SHA256);
  g_checksum_update (c, file, HZ_TAGGER_OFF_SHA);
  g_checksum_update (c, file + HZ_TAGGER_HEADER, size - HZ_TAGGER_HEADER);
  gsize len = 32;
  g_checksum_get_digest (c, out, &len);
  g_checksum_free (c);
}

/* The run-time blocks of a used-bucket bitmap (2^bits / 64 words); returns the number of
 * used buckets. */
static guint32
build_blocks (HzTagger *t, const guint64 *used)
{
  gsize nblk = ((gsize) 1 << t->bucket_bits) / 64;
  g_free (t->blocks);
  t->blocks = g_new (HzTagBlock, nblk);
  guint32 rank = 1;
  for (gsize k = 0; k < nblk; k++)
    {
      t->blocks[k] = (HzTagBlock) { used[k], rank, 0 };
      rank += (guint32) __builtin_popcountll (used[k]);
    }
  return rank - 1;
}

#define BAD(...) \
  do { \
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "person tagger weights: " __VA_ARGS__); \
    return NULL; \
  } while (0)

HzTagger *
hz_tagger_new_from_bytes (GBytes *bytes, GError **error)
{
  gsize n = 0;
  const guint8 *p = bytes ? g_bytes_get_data (bytes, &n) : NULL;
  if (!p || n < 12)
    BAD ("file too short (%" G_GSIZE_FORMAT " bytes, the header alone is %u)", n, HZ_TAGGER_HEADER);
  if (memcmp (p, HZ_TAGGER_MAGIC, 8) != 0)
    BAD ("not a weights file (bad magic)");
  guint32 version = rd32 (p + 8);
  if (version > HZ_TAGGER_VERSION)
    BAD ("format version %u, written by a newer build (or a damaged file); this build reads version %u",
         version, HZ_TAGGER_VERSION);
  if (version != HZ_TAGGER_VERSION)
    BAD ("format version %u, this build reads version %u (retrain with train-person-tagger)", version,
         HZ_TAGGER_VERSION);
  if (n < HZ_TAGGER_HEADER)
    BAD ("file too short (%" G_GSIZE_FORMAT " bytes, the header alone is %u)", n, HZ_TAGGER_HEADER);
  guint32 bits = rd32 (p + 12), scope = rd32 (p + 16), veto = rd32 (p + 20), n_rows = rd32 (p + HZ_TAGGER_OFF_NROWS);
  if (bits < 8 || bits > 22)
    BAD ("bucket_bits %u out of range 8..22", bits);
  if (scope > HZ_TAGGER_SCOPE_SOCIAL || veto > HZ_TAGGER_VETO_X)
    BAD ("unknown scope %u or veto %u", scope, veto);
  gsize nb = (gsize) 1 << bits;
  if (n_rows > nb)
    BAD ("%u rows for %" G_GSIZE_FORMAT " buckets", n_rows, nb);
  gsize bitmap = nb / 8, payload = bitmap + (gsize) HZ_TAG_N * 2 * n_rows;
  if (n != HZ_TAGGER_HEADER + payload)
    BAD ("size %" G_GSIZE_FORMAT " bytes, expected %" G_GSIZE_FORMAT " for bucket_bits %u and %u rows (truncated?)",
         n, HZ_TAGGER_HEADER + payload, bits, n_rows);
  float o_bias = rdf (p + 24), scale = rdf (p + 28), veto_margin = rdf (p + 32), prose_bias = rdf (p + 36);
  if (!isfinite (o_bias) || fabsf (o_bias) > 1e6f || !isfinite (scale) || scale <= 0 || scale > 1e3f
      || !isfinite (veto_margin) || fabsf (veto_margin) > 1e6f || !isfinite (prose_bias)
      || fabsf (prose_bias) > 1e6f)
    BAD ("o_bias, scale, veto_margin or prose_bias not a sane number");
  float trans[(HZ_TAG_N + 1) * HZ_TAG_N];
  for (int k = 0; k < (HZ_TAG_N + 1) * HZ_TAG_N; k++)
    {
      trans[k] = rdf (p + HZ_TAGGER_OFF_TRANS + 4 * k);
      if (!isfinite (trans[k]) || fabsf (trans[k]) > 1e6f)
        BAD ("transition weight %d not a sane number", k);
    }
  const guint8 *pl = p + HZ_TAGGER_HEADER;
  guint8 sum[32];
  hz_tagger_checksum (p, n, sum);
  if (memcmp (sum, p + HZ_TAGGER_OFF_SHA, 32) != 0)
    BAD ("checksum mismatch (corrupt file)");
  guint64 *used = g_new (guint64, nb / 64);
  for (gsize k = 0; k < nb / 64; k++)
    used[k] = rd64 (pl + 8 * k);
  HzTagger *t = tagger_alloc (bits);
  guint32 set = build_blocks (t, used);
  g_free (used);
  if (set != n_rows)
    {
      hz_tagger_free (t);
      BAD ("bitmap marks %u buckets, the header says %u rows", set, n_rows);
    }
  t->scope = scope;
  t->veto = veto;
  t->o_bias = o_bias;
  t->veto_margin = veto_margin;
  t->prose_bias = prose_bias;
  t->scale = scale;
  t->n_rows = n_rows;
  memcpy (t->trans, trans, sizeof trans);
  t->rows = g_new0 (gint16, (gsize) HZ_TAG_ROW * (1 + n_rows));
  const guint8 *w = pl + bitmap;
  for (gsize r = 0; r < n_rows; r++)
    for (int y = 0; y < HZ_TAG_N; y++)
      {
        gsize k = r * HZ_TAG_N + (gsize) y;
        t->rows[HZ_TAG_ROW * (1 + r) + (gsize) y] = (gint16) (guint16) (w[2 * k] | w[2 * k + 1] << 8);
      }
  build_lut (t);
  return t;
}
#undef BAD

/* one scale for all weights: the largest maps to 32767 */
static float
weight_scale (const HzTagger *t)
{
  float maxw = 0;
  for (gsize k = 0; k < (gsize) HZ_TAG_N << t->bucket_bits; k++)
    maxw = MAX (maxw, fabsf (t->w[k]));
  return maxw > 0 ? maxw / 32767.0f : 1.0f;
}

static inline gint16
quantise (float w, float scale)
{
  long q = lrintf (w / scale);
  return (gint16) CLAMP (q, -32767, 32767);
}

/* Quantise the float weights: *scale, the used-bucket bitmap (2^bits / 64 words, owned by
 * the caller) and the rows of the used buckets (HZ_TAG_N per row, bucket order, owned by the
 * caller); returns the number of rows. A bucket is used when one of its quantised weights
 * is not 0. */
static guint32
quantise_sparse (const HzTagger *t, float *scale, guint64 **used_out, gint16 **rows_out)
{
  gsize nb = (gsize) 1 << t->bucket_bits;
  *scale = weight_scale (t);
  guint64 *used = g_new0 (guint64, nb / 64);
  gint16 *rows = g_new (gint16, HZ_TAG_N * nb);
  guint32 n_rows = 0;
  for (gsize b = 0; b < nb; b++)
    {
      gint16 q[HZ_TAG_N];
      gboolean any = FALSE;
      for (int y = 0; y < HZ_TAG_N; y++)
        {
          q[y] = quantise (t->w[b * HZ_TAG_N + y], *scale);
          any |= q[y] != 0;
        }
      if (!any)
        continue;
      used[b / 64] |= G_GUINT64_CONSTANT (1) << (b % 64);
      memcpy (rows + (gsize) HZ_TAG_N * n_rows++, q, sizeof q);
    }
  *used_out = used;
  *rows_out = rows;
  return n_rows;
}

void
hz_tagger_pack (HzTagger *t)
{
  if (!t->w)
    return;
  guint64 *used;
  gint16 *rows;
  t->n_rows = quantise_sparse (t, &t->scale, &used, &rows);
  build_blocks (t, used);
  g_free (t->rows);
  t->rows = g_new0 (gint16, (gsize) HZ_TAG_ROW * (1 + t->n_rows));
  for (gsize r = 0; r < t->n_rows; r++)
    memcpy (t->rows + HZ_TAG_ROW * (1 + r), rows + HZ_TAG_N * r, sizeof (gint16) * HZ_TAG_N);
  g_free (used);
  g_free (rows);
  build_lut (t);
}

float
hz_tagger_weight (const HzTagger *tagger, guint32 b, int y)
{
  g_return_val_if_fail (tagger->blocks && b < (1u << tagger->bucket_bits) && y >= 0 && y < HZ_TAG_N, 0);
  return (float) tagger->rows[(gsize) hz_tagger_row (tagger, b) * HZ_TAG_ROW + (gsize) y] * tagger->scale;
}

GBytes *
hz_tagger_serialize (const HzTagger *t)
{
  g_return_val_if_fail (t != NULL && t->w != NULL, NULL);
  gsize nb = (gsize) 1 << t->bucket_bits;
  float scale;
  guint64 *used;
  gint16 *rows;
  guint32 n_rows = quantise_sparse (t, &scale, &used, &rows);
  gsize bitmap = nb / 8, nw = (gsize) HZ_TAG_N * n_rows;
  gsize n = HZ_TAGGER_HEADER + bitmap + 2 * nw;
  guint8 *p = g_malloc0 (n);
  memcpy (p, HZ_TAGGER_MAGIC, 8);
  wr32 (p + 8, HZ_TAGGER_VERSION);
  wr32 (p + 12, t->bucket_bits);
  wr32 (p + 16, t->scope);
  wr32 (p + 20, t->veto);
  wrf (p + 24, t->o_bias);
  wrf (p + 28, scale);
  wrf (p + 32, t->veto_margin);
  wrf (p + 36, t->prose_bias);
  for (int k = 0; k < (HZ_TAG_N + 1) * HZ_TAG_N; k++)
    wrf (p + HZ_TAGGER_OFF_TRANS + 4 * k, t->trans[k]);
  wr32 (p + HZ_TAGGER_OFF_NROWS, n_rows);
  guint8 *pl = p + HZ_TAGGER_HEADER;
  for (gsize k = 0; k < nb / 64; k++)
    {
      wr32 (pl + 8 * k, (guint32) used[k]);
      wr32 (pl + 8 * k + 4, (guint32) (used[k] >> 32));
    }
  guint8 *w = pl + bitmap;
  for (gsize k = 0; k < nw; k++)
    {
      guint16 u = (guint16) rows[k];
      w[2 * k] = (guint8) u;
      w[2 * k + 1] = (guint8) (u >> 8);
    }
  hz_tagger_checksum (p, n, p + HZ_TAGGER_OFF_SHA);
  g_free (used);
  g_free (rows);
  return g_bytes_new_take (p, n);
}

/* ---- features ---------------------------------------------------------------------- */

/* Feature templates (the first argument of fh()). The numbering is part of the weights
 * (the values are hashed): F_CLS0 and F_RULE_IDENT are retired, keep their slots. */
enum {
  F_BIAS = 1, F_W0, F_WM1, F_WP1, F_WM2, F_WP2, F_SHAPE0, F_SENTCAP, F_SHAPEM1, F_SHAPEP1,
  F_CLS0, F_CLS0_CAP, F_CLSM1, F_CLSP1, F_SUF3, F_PRE3, F_BEFORE, F_AFTER, F_RULE, F_RULE_REC,
  F_RULE_LOC, F_RULE_IDENT, F_GENRE, F_POS, F_W0_CAP, F_RULEM1, F_RULEP1, F_SHAPE_PAIR,
  F_WM1_CAP0,
};

/* multiplicative hashing (Knuth): the bucket is the top bits of one 64-bit product */
static inline guint64
fh (guint32 tmpl, guint64 v)
{
  return ((v ^ (v >> 29)) + tmpl * G_GUINT64_CONSTANT (0x9E3779B97F4A7C15)) * G_GUINT64_CONSTANT (0xff51afd7ed558ccd);
}

/* Small templates: the feature templates whose values are below a small power of two
 * (shapes < 512 or the sentinel 1023, lexicon class bits < 64, byte classes < 6, case
 * classes < 5, marks < 4; see features_of()). Their weights are copied into tagger->lut
 * (one int16 quadruple per template and value, from L_<template> on), so that tagging
 * hashes only the word features. */
enum {
  L_BIAS = 0, L_SHAPE0 = L_BIAS + 1, L_SHAPEM1 = L_SHAPE0 + 512, L_SHAPEP1 = L_SHAPEM1 + 1024,
  L_SENTCAP = L_SHAPEP1 + 1024, L_SHAPE_PAIR = L_SENTCAP + 16, L_CLS0_CAP = L_SHAPE_PAIR + 512,
  L_CLSM1 = L_CLS0_CAP + 512, L_CLSP1 = L_CLSM1 + 64, L_BEFORE = L_CLSP1 + 64, L_AFTER = L_BEFORE + 64,
  L_GENRE = L_AFTER + 8, L_POS = L_GENRE + 32, L_RULE = L_POS + 8, L_RULE_LOC = L_RULE + 32,
  L_RULEM1 = L_RULE_LOC + 4, L_RULEP1 = L_RULEM1 + 4, L_N = L_RULEP1 + 4
};

static const struct {
  guint8 tmpl;
  guint16 off;
} small_tmpl[] = {
  { F_BIAS, L_BIAS }, { F_SHAPE0, L_SHAPE0 }, { F_SHAPEM1, L_SHAPEM1 }, { F_SHAPEP1, L_SHAPEP1 },
  { F_SENTCAP, L_SENTCAP }, { F_SHAPE_PAIR, L_SHAPE_PAIR }, { F_CLS0_CAP, L_CLS0_CAP },
  { F_CLSM1, L_CLSM1 }, { F_CLSP1, L_CLSP1 }, { F_BEFORE, L_BEFORE }, { F_AFTER, L_AFTER },
  { F_GENRE, L_GENRE }, { F_POS, L_POS }, { F_RULE, L_RULE }, { F_RULE_LOC, L_RULE_LOC },
  { F_RULEM1, L_RULEM1 }, { F_RULEP1, L_RULEP1 },
};

static void
build_lut (HzTagger *t)
{
  g_free (t->lut);
  t->lut = g_new0 (gint16, (gsize) HZ_TAG_ROW * L_N);
  const guint shift = 64 - t->bucket_bits;
  for (gsize k = 0; k < G_N_ELEMENTS (small_tmpl); k++)
    {
      guint end = k + 1 < G_N_ELEMENTS (small_tmpl) ? small_tmpl[k + 1].off : L_N;
      for (guint v = 0; v < end - small_tmpl[k].off; v++)
        {
          guint32 r = hz_tagger_row (t, (guint32) (fh (small_tmpl[k].tmpl, v) >> shift));
          memcpy (t->lut + HZ_TAG_ROW * ((gsize) small_tmpl[k].off + v), t->rows + (gsize) HZ_TAG_ROW * r,
                  sizeof (gint16) * HZ_TAG_ROW);
        }
    }
}

/* Four int16 weights (O, B, I, 0) widened and added to four int32 sums: one load and two
 * vector instructions where the compiler has vectors (GCC/Clang vector extensions). */
typedef gint16 HzW4 __attribute__ ((vector_size (8)));
typedef gint32 HzS4 __attribute__ ((vector_size (16)));

static inline HzS4
widen4 (const gint16 *w)
{
  HzW4 v;
  memcpy (&v, w, sizeof v);
  return __builtin_convertvector (v, HzS4);
}

/* capitalisation class: 0 other, 1 Capitalised, 2 UPPER, 3 lower, 4 digits */
static inline guint
cap_class (const HzToken *t)
{
  if (t->flags & HZ_TOK_DIGIT)
    return 4;
  if (t->flags & HZ_TOK_UPPER)
    return t->nchars > 1 ? 2 : 1;
  if (t->flags & HZ_TOK_CAP)
    return 1;
  if (t->flags & HZ_TOK_LOWER)
    return 3;
  return 0;
}

/* word shape: case class, alphabetic/non-ASCII/elongated flags and a length bucket */
static inline guint
shape (const HzToken *t)
{
  guint len = t->nchars <= 1 ? 0 : t->nchars <= 3 ? 1 : t->nchars <= 5 ? 2 : t->nchars <= 8 ? 3 : 4;
  return cap_class (t) | (t->flags & HZ_TOK_ALPHA ? 8 : 0) | (t->flags & HZ_TOK_NONASCII ? 16 : 0)
         | (t->flags & HZ_TOK_ELONG ? 32 : 0) | len << 6;
}

/* class of the byte next to a token: 0 none/space, 1 '@', 2 '#', 3 sentence punctuation,
 * 4 other punctuation, 5 non-ASCII */
static inline guint
byte_class (int c)
{
  if (c < 0 || c == ' ' || c == '\t' || c == '\n' || c == '\r')
    return 0;
  if (c == '@')
    return 1;
  if (c == '#')
    return 2;
  if (c == '.' || c == '!' || c == '?' || c == ',' || c == ':' || c == ';')
    return 3;
  return c >= 0x80 ? 5 : 4;
}

/* the nearest byte before `pos` that is not a space, looking back at most 2 bytes (text
 * tokenised CoNLL-style writes "@ name", "Levin , Hien"); ' ' when there is none */
static inline int
byte_before (const HzScan *scan, gsize pos)
{
  if (pos == 0)
    return -1;
  int c = (guchar) scan->text[pos - 1];
  if (c == ' ' && pos >= 2 && (guchar) scan->text[pos - 2] != ' ' && !hz_alnum_before (scan->text, pos - 1))
    return (guchar) scan->text[pos - 2];
  return c;
}

/* TRUE when the bytes between two tokens can sit inside one name: spaces, a hyphen, an
 * apostrophe right after the first token ("Jean-Luc", "O' Neil"), and a dot after a token of
 * one or two letters, an initial ("M . Night", "Thomas D . Green"); a comma, bracket, quote
 * (an apostrophe that opens one: "William 'Buckshot' May"), '&' or sentence punctuation
 * separates two names ("Levin , Hien", "hurt Cindy . Hope she") */
static gboolean
joins_name (const HzScan *scan, gsize a, gsize b)
{
  gsize w = a; /* start of the word that ends at a */
  while (w > 0 && w + 3 > a && g_ascii_isalnum (scan->text[w - 1]))
    w--;
  gboolean initial = a - w <= 2 && (w == 0 || !g_ascii_isalnum (scan->text[w - 1]));
  for (gsize k = a; k < b; k++)
    {
      char c = scan->text[k];
      if (c != ' ' && c != '-' && !(c == '\'' && k == a) && !(c == '.' && initial))
        return FALSE;
    }
  return TRUE;
}

static inline int
byte_after (const HzScan *scan, gsize end)
{
  return end < scan->len ? (guchar) scan->text[end] : -1;
}

/* lexicon classes that matter as neighbours of a name */
#define CTX_BITS (HZ_WB (HZ_W_TITLE) | HZ_WB (HZ_W_NAME_CUE) | HZ_WB (HZ_W_STRONG_CUE) \
                  | HZ_WB (HZ_W_VERB_AFTER) | HZ_WB (HZ_W_ORG) | HZ_WB (HZ_W_LOC_CUE) \
                  | HZ_WB (HZ_W_NAME_CONN) | HZ_WB (HZ_W_NOT_NAME) | HZ_WB (HZ_W_ORG_BEFORE) \
                  | HZ_WB (HZ_W_STAGE_PREFIX) | HZ_WB (HZ_W_LOC_CUE_WEAK) | HZ_WB (HZ_W_MODAL) \
                  | HZ_WB (HZ_W_DETERMINER) | HZ_WB (HZ_W_COPULA) | HZ_WB (HZ_W_GIVEN) \
                  | HZ_WB (HZ_W_SURNAME) | HZ_WB (HZ_W_COMMON) | HZ_WB (HZ_W_GIVEN_FREQ) \
                  | HZ_WB (HZ_W_SURNAME_FREQ) | HZ_WB (HZ_W_CALENDAR))

/* lower-cased ASCII bytes [s, s + n) packed into an integer (n <= 7) */
static inline guint64
pack_lower (const char *s, gsize n)
{
  guint64 v = n;
  for (gsize k = 0; k < n; k++)
    {
      guint8 c = (guint8) s[k];
      v = v << 8 | (c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c); /* g_ascii_tolower (), inline */
    }
  return v;
}

void
hz_tagger_marks (const HzScan *scan, HzTagMark *marks)
{
  memset (marks, 0, sizeof (HzTagMark) * scan->n_toks);
  for (guint c = 0; c < scan->cands->len; c++)
    {
      const HzCand *k = &g_array_index (scan->cands, HzCand, c);
      guint i = hz_token_at_or_after (scan, k->s);
      gboolean first = TRUE;
      for (; i < scan->n_toks && scan->toks[i].s < k->e; i++)
        {
          HzTagMark *m = &marks[i];
          if (k->type == HZ_ENTITY_PERSON)
            {
              if (!m->person || first)
                m->person = first ? 1 : 2;
              if (!m->rec)
                m->rec = (guint32) hz_key_hash (k->rec, strlen (k->rec)) | 1;
            }
          else if (k->type == HZ_ENTITY_LOCATION)
            m->loc = 1;
          else
            m->ident = 1;
          first = FALSE;
        }
    }
}

/* What the features read of one token, computed once per token: a token's shape, case,
 * word key and context classes are features of its neighbours too. */
typedef struct {
  guint64 key;   /* lower-case word hash, or the shape for a token without one (digits, very
                  * long tokens) */
  guint64 ctx;   /* cls & CTX_BITS */
  guint16 shape; /* shape () */
  guint8 cap;    /* cap_class () */
} TokInfo;

G_ALWAYS_INLINE static inline void
tok_info (const HzScan *scan, guint i, TokInfo *o)
{
  const HzToken *t = &scan->toks[i];
  o->shape = (guint16) shape (t);
  o->cap = (guint8) cap_class (t);
  o->key = t->hash ? t->hash : o->shape;
  o->ctx = t->cls & CTX_BITS;
}

/* The features of token i (not always O) from the infos of its tokens: ti[d] is the info of
 * token i + d, for every d in -2..2 with i + d a token of the scan. The one definition
 * of the features, for training (hz_tagger_features()) and tagging (hz_rec_tagger()). */
G_ALWAYS_INLINE static inline guint
features_of (const HzScan *scan, const HzTagMark *marks, guint i, const TokInfo *ti, guint shift,
             guint32 *out, const gboolean fast, const HzTagger *tagger, HzS4 *acc)
{
  const HzToken *t = &scan->toks[i];
  const guint nt = scan->n_toks;
  const guint cap = ti->cap;
  guint n = 0, nh = 0; /* features, hashed features written to out */
#define ADD(tmpl, v) (out[nh++] = (guint32) (fh ((tmpl), (guint64) (v)) >> shift), n++)
#define ADD_S(tmpl, v) \
  do \
    { \
      if (fast) \
        { \
          *acc += widen4 (tagger->lut + HZ_TAG_ROW * ((gsize) L_##tmpl + (guint) (v))); \
          n++; \
        } \
      else \
        ADD (F_##tmpl, v); \
    } \
  while (0)
  ADD_S (BIAS, 0);
  /* word identity (lower case; digits and very long tokens by shape only) */
  ADD (F_W0, ti->key);
  ADD (F_W0_CAP, ti->key * 7 + cap);
  guint64 wm1 = i > 0 ? ti[-1].key : 1;
  ADD (F_WM1, wm1);
  ADD (F_WM1_CAP0, wm1 * 7 + cap);
  ADD (F_WP1, i + 1 < nt ? ti[1].key : 1);
  ADD (F_WM2, i > 1 ? ti[-2].key : 1);
  ADD (F_WP2, i + 2 < nt ? ti[2].key : 1);
  /* shape, here and around */
  ADD_S (SHAPE0, ti->shape);
  ADD_S (SENTCAP, (t->flags & HZ_TOK_SENT ? 8 : 0) | cap);
  ADD_S (SHAPEM1, i > 0 ? ti[-1].shape : 1023);
  ADD_S (SHAPEP1, i + 1 < nt ? ti[1].shape : 1023);
  ADD_S (SHAPE_PAIR, (i > 0 ? ti[-1].cap : 7) * 64 + cap * 8 + (i + 1 < nt ? ti[1].cap : 7));
  /* affixes (ASCII bytes, lower case) */
  gsize len = t->e - t->s;
  if (len > 3 && !(t->flags & HZ_TOK_DIGIT))
    {
      ADD (F_SUF3, pack_lower (scan->text + t->e - 3, 3));
      ADD (F_PRE3, pack_lower (scan->text + t->s, 3));
    }
  /* lexicon classes of the word (with its case) and of the neighbours */
  guint64 cls = t->cls;
  while (cls && n < HZ_TAGGER_MAX_FEATS - 12)
    {
      guint b = (guint) __builtin_ctzll (cls);
      cls &= cls - 1;
      ADD_S (CLS0_CAP, b * 8 + cap);
    }
  guint64 cm = i > 0 ? ti[-1].ctx : 0, cp = i + 1 < nt ? ti[1].ctx : 0;
  while (cm && n < HZ_TAGGER_MAX_FEATS - 12)
    {
      guint b = (guint) __builtin_ctzll (cm);
      cm &= cm - 1;
      ADD_S (CLSM1, b);
    }
  while (cp && n < HZ_TAGGER_MAX_FEATS - 10)
    {
      guint b = (guint) __builtin_ctzll (cp);
      cp &= cp - 1;
      ADD_S (CLSP1, b);
    }
  /* '@' / '#' and punctuation next to the token */
  ADD_S (BEFORE, byte_class (byte_before (scan, t->s)) * 8 + cap);
  ADD_S (AFTER, byte_class (byte_after (scan, t->e)));
  /* genre and position */
  ADD_S (GENRE, (scan->informal ? 1 : 0) | (scan->all_lower ? 2 : 0) | cap << 2);
  ADD_S (POS, (i == 0 ? 1 : 0) | (i + 1 == nt ? 2 : 0) | (t->flags & HZ_TOK_SENT ? 4 : 0));
  /* what the rules found */
  const HzTagMark *m = &marks[i];
  ADD_S (RULE, m->person * 8 + cap);
  if (m->rec)
    ADD (F_RULE_REC, m->rec);
  ADD_S (RULE_LOC, m->loc * 2 + m->ident);
  ADD_S (RULEM1, i > 0 ? marks[i - 1].person : 3);
  ADD_S (RULEP1, i + 1 < nt ? marks[i + 1].person : 3);
#undef ADD
#undef ADD_S
  return nh;
}

guint
hz_tagger_features (const HzScan *scan, const HzTagMark *marks, guint i, guint bucket_bits,
                    guint32 *out)
{
  /* a lower-case English word that is no name, digits, and nothing a rule marked: O, no
   * features (most tokens of a text) */
  if (hz_tagger_token_is_o (&scan->toks[i], &marks[i]))
    return 0;
  /* the infos of tokens i - 2 .. i + 2, as win[k - i + 2] */
  TokInfo win[5];
  for (guint k = i >= 2 ? i - 2 : 0; k <= i + 2 && k < scan->n_toks; k++)
    tok_info (scan, k, &win[k + 2 - i]);
  return features_of (scan, marks, i, &win[2], 64 - bucket_bits, out, FALSE, NULL, NULL);
}

/* Viterbi over emit[0..n) (n >= 1): start[y] is the score of entering with tag y, end[y]
 * that of leaving after tag y; the best tags go to tags[0..n). Ties go to the lower tag. */
static void
viterbi_core (const float *emit, guint n, const float *start, const float *end, const float *trans,
              guint8 *back, guint8 *tags)
{
  float cur[HZ_TAG_N], nxt[HZ_TAG_N];
  for (int y = 0; y < HZ_TAG_N; y++)
    cur[y] = start[y] + emit[y];
  for (guint i = 1; i < n; i++)
    {
      for (int y = 0; y < HZ_TAG_N; y++)
        {
          int best = 0;
          float bs = cur[0] + trans[(1 + 0) * HZ_TAG_N + y];
          for (int p = 1; p < HZ_TAG_N; p++)
            {
              float s = cur[p] + trans[(1 + p) * HZ_TAG_N + y];
              if (s > bs)
                {
                  bs = s;
                  best = p;
                }
            }
          nxt[y] = bs + emit[i * HZ_TAG_N + y];
          back[i * HZ_TAG_N + y] = (guint8) best;
        }
      memcpy (cur, nxt, sizeof cur);
    }
  int y = 0;
  float by = cur[0] + end[0];
  for (int k = 1; k < HZ_TAG_N; k++)
    if (cur[k] + end[k] > by)
      {
        by = cur[k] + end[k];
        y = k;
      }
  for (guint i = n; i-- > 0;)
    {
      tags[i] = (guint8) y;
      if (i > 0)
        y = back[i * HZ_TAG_N + y];
    }
}

static const float no_end[HZ_TAG_N] = { 0 };

void
hz_tagger_viterbi (const float *emit, guint n, const float *trans, guint8 *back, guint8 *tags)
{
  if (n > 0)
    viterbi_core (emit, n, trans, no_end, trans, back, tags);
}

void
hz_tagger_viterbi_runs (const float *emit, const guint8 *forced, guint n, const float *trans,
                        guint8 *back, guint8 *tags)
{
  /* entering after a forced O: row 1 + O of the transitions; leaving into one: column O */
  const float *after_o = trans + (1 + HZ_TAG_O) * HZ_TAG_N;
  float into_o[HZ_TAG_N];
  for (int p = 0; p < HZ_TAG_N; p++)
    into_o[p] = trans[(1 + p) * HZ_TAG_N + HZ_TAG_O];
  for (guint i = 0; i < n;)
    {
      if (forced[i])
        {
          tags[i++] = HZ_TAG_O;
          continue;
        }
      guint j = i + 1;
      while (j < n && !forced[j])
        j++;
      viterbi_core (emit + (gsize) i * HZ_TAG_N, j - i, i == 0 ? trans : after_o, j == n ? no_end : into_o,
                    trans, back + (gsize) i * HZ_TAG_N, tags + i);
      i = j;
    }
}

enum { HEADLINE_MIN_WORDS = 4, HEADLINE_CAPS_TENTHS = 7 };

gboolean
hz_tagger_in_scope (const HzTagger *tagger, const HzScan *scan)
{
  return tagger->scope == HZ_TAGGER_SCOPE_ALL || hz_tagger_text_is_social (scan);
}

static float
o_bias_of (const HzTagger *tagger, gboolean social)
{
  return tagger->o_bias + (social ? 0.0f : tagger->prose_bias);
}

float
hz_tagger_o_bias_for (const HzTagger *tagger, const HzScan *scan)
{
  return o_bias_of (tagger, hz_tagger_text_is_social (scan));
}

gboolean
hz_tagger_text_is_social (const HzScan *scan)
{
  if (scan->informal)
    return TRUE;
  for (int c = 0xF0; c <= 0xF4; c++)
    if (scan->has[c])
      return TRUE; /* emoji */
  /* a handle or hashtag: '@' or '#' right before a word token; headline case: most words
   * capitalised, so capitalisation says little and the rules' cues misfire */
  gboolean tags = scan->has['@'] || scan->has['#'];
  guint alpha = 0, caps = 0;
  for (guint i = 0; i < scan->n_toks; i++)
    {
      const HzToken *t = &scan->toks[i];
      if (tags)
        {
          int c = byte_before (scan, t->s);
          if (c == '@' || c == '#')
            return TRUE;
        }
      if ((t->flags & HZ_TOK_ALPHA) && i > 0)
        {
          alpha++;
          caps += (t->flags & (HZ_TOK_CAP | HZ_TOK_UPPER)) != 0;
        }
    }
  return alpha >= HEADLINE_MIN_WORDS && caps * 10 >= alpha * HEADLINE_CAPS_TENTHS;
}

/* Words of a text that speaks to or of its reader or writer: encyclopedic prose has none */
static const char *const personal_words[] = { "i", "you", "my", "your", "we", "me", "u", "lol", NULL };
enum { ENCYCLOPEDIC_MIN_TOKENS = 10 };

/* c (any case) is the first letter of one of personal_words: a cheap test before comparing
 * the words */
static gboolean
starts_personal_word (char c)
{
  c = g_ascii_tolower (c);
  for (const char *const *w = personal_words; *w; w++)
    if (**w == c)
      return TRUE;
  return FALSE;
}

gboolean
hz_tagger_text_is_encyclopedic (const HzScan *scan)
{
  if (scan->n_toks < ENCYCLOPEDIC_MIN_TOKENS || scan->has['@'] || scan->has['#'] || hz_tagger_text_is_social (scan))
    return FALSE;
  gsize a = 0, b = scan->len;
  while (a < b && g_ascii_isspace (scan->text[a]))
    a++;
  while (b > a && g_ascii_isspace (scan->text[b - 1]))
    b--;
  if (a == b || !strchr (".!?\")", scan->text[b - 1]) || scan->toks[0].s != a
      || !(scan->toks[0].flags & (HZ_TOK_CAP | HZ_TOK_UPPER)))
    return FALSE;
  for (guint i = 0; i < scan->n_toks; i++)
    {
      const HzToken *t = &scan->toks[i];
      if ((t->flags & HZ_TOK_ELONG) || ((t->flags & HZ_TOK_SENT) && (t->flags & HZ_TOK_LOWER) && (t->flags & HZ_TOK_ALPHA)))
        return FALSE;
      if (t->nchars <= 4 && (t->flags & HZ_TOK_ALPHA) && starts_personal_word (scan->text[t->s])
          && hz_token_among (scan, t, personal_words))
        return FALSE;
    }
  return TRUE;
}

/* Salutations before a name ("Dear", "Hi"): the name after one is a person's */
static const char *const salutations[] = { "dear", "hi", "hey", "hello", NULL };

/* end of a name span: a possessive "'s" stays outside */
static gsize
span_end (const HzScan *scan, const HzToken *t)
{
  gsize e = t->e;
  if (e - t->s > 2 && scan->text[e - 2] == '\'' && (scan->text[e - 1] == 's' || scan->text[e - 1] == 'S'))
    e -= 2;
  return e;
}

/* the same word, ignoring case and a possessive "'s" */
static gboolean
same_word (const HzScan *scan, const HzToken *a, const HzToken *b)
{
  gsize ea = span_end (scan, a), eb = span_end (scan, b);
  return ea - a->s == eb - b->s && g_ascii_strncasecmp (scan->text + a->s, scan->text + b->s, ea - a->s) == 0;
}

/* Per-thread work space of hz_rec_tagger(), grown to the longest text seen (no allocation
 * per text). hz_rec_tagger() calls nothing that analyses another text, so one per thread
 * is enough. */
typedef struct {
  guint cap;
  HzTagMark *marks;
  float *emit;
  guint8 *back, *tags, *forced;
  guint *names;
  TokInfo *info;
} TagWork;

static void
tag_work_free (gpointer p)
{
  TagWork *w = p;
  g_free (w->marks);
  g_free (w->emit);
  g_free (w->back);
  g_free (w->tags);
  g_free (w->forced);
  g_free (w->names);
  g_free (w->info);
  g_free (w);
}

static GPrivate tag_work_key = G_PRIVATE_INIT (tag_work_free);

static TagWork *
tag_work_get (guint n)
{
  TagWork *w = g_private_get (&tag_work_key);
  if (!w)
    {
      w = g_new0 (TagWork, 1);
      g_private_set (&tag_work_key, w);
    }
  if (w->cap < n)
    {
      guint cap = MAX (n, MAX (256u, w->cap * 2));
      w->marks = g_renew (HzTagMark, w->marks, cap);
      w->emit = g_renew (float, w->emit, (gsize) cap * HZ_TAG_N);
      w->back = g_renew (guint8, w->back, (gsize) cap * HZ_TAG_N);
      w->tags = g_renew (guint8, w->tags, cap);
      w->forced = g_renew (guint8, w->forced, cap);
      w->names = g_renew (guint, w->names, 2 * (gsize) cap);
      w->info = g_renew (TokInfo, w->info, cap);
      w->cap = cap;
    }
  return w;
}

/* Features of token i (not always O): the small templates' weights summed into acc[0..2],
 * the word features as rows of the weight table (row 0, no weights, left out), prefetched;
 * returns the number of rows. */
G_ALWAYS_INLINE static inline guint
token_rows (const HzScan *scan, const HzTagMark *marks, guint i, const TokInfo *info, const HzTagger *tagger,
            guint32 *rows, HzS4 *acc)
{
  guint32 f[HZ_TAGGER_MAX_FEATS];
  *acc = (HzS4) { 0, 0, 0, 0 };
  guint nf = features_of (scan, marks, i, &info[i], 64 - tagger->bucket_bits, f, TRUE, tagger, acc), nr = 0;
  for (guint k = 0; k < nf; k++)
    {
      guint32 r = hz_tagger_row (tagger, f[k]);
      __builtin_prefetch (tagger->rows + (gsize) HZ_TAG_ROW * r);
      rows[nr] = r;
      nr += r != 0;
    }
  return nr;
}

/* The emissions of every token (o_bias added to O; tokens with forced[i] set are O by
 * HZ_TAGGER_FORCE_O). info[] must hold every token within 2 of one that is not forced. */
G_ALWAYS_INLINE static inline void
score_body (const HzScan *scan, const HzTagger *tagger, const HzTagMark *marks, const TokInfo *info,
            const guint8 *forced, float o_bias, float *emit)
{
  const guint n = scan->n_toks;
  /* the weight reads miss the cache: the rows of the next token with features are found and
   * prefetched before the current token's weights are summed */
  guint32 rbuf[2][HZ_TAGGER_MAX_FEATS];
  HzS4 abuf[2];
  guint next = 0, slot = 0;
  while (next < n && forced[next])
    next++;
  guint nr_next = next < n ? token_rows (scan, marks, next, info, tagger, rbuf[0], &abuf[0]) : 0;
  for (guint i = 0; i < n; i++)
    {
      if (forced[i])
        {
          emit[i * HZ_TAG_N + 0] = o_bias + HZ_TAGGER_FORCE_O;
          emit[i * HZ_TAG_N + 1] = emit[i * HZ_TAG_N + 2] = emit[i * HZ_TAG_N + 3] = 0;
          continue;
        }
      const guint32 *rw = rbuf[slot];
      HzS4 sum = abuf[slot];
      guint nr = nr_next;
      slot ^= 1;
      for (next = i + 1; next < n && forced[next]; next++)
        ;
      if (next < n)
        nr_next = token_rows (scan, marks, next, info, tagger, rbuf[slot], &abuf[slot]);
      for (guint k = 0; k < nr; k++)
        sum += widen4 (tagger->rows + (gsize) HZ_TAG_ROW * rw[k]);
      emit[i * HZ_TAG_N + 0] = o_bias + (float) sum[0] * tagger->scale;
      emit[i * HZ_TAG_N + 1] = (float) sum[1] * tagger->scale;
      emit[i * HZ_TAG_N + 2] = (float) sum[2] * tagger->scale;
      emit[i * HZ_TAG_N + 3] = (float) sum[3] * tagger->scale;
    }
}

/* score_body() compiled twice on x86-64: with POPCNT (hz_tagger_row()'s rank) and SSE4.1
 * (widen4()), used when the CPU has both, and for the generic x86-64 baseline, which has
 * neither */
#if defined(__x86_64__) && defined(__GNUC__)
#define HZ_TAGGER_POPCNT_CLONE 1
__attribute__ ((target ("popcnt,sse4.1"))) static void
score_popcnt (const HzScan *scan, const HzTagger *tagger, const HzTagMark *marks, const TokInfo *info,
              const guint8 *forced, float o_bias, float *emit)
{
  score_body (scan, tagger, marks, info, forced, o_bias, emit);
}
#endif

static void
score_generic (const HzScan *scan, const HzTagger *tagger, const HzTagMark *marks, const TokInfo *info,
               const guint8 *forced, float o_bias, float *emit)
{
  score_body (scan, tagger, marks, info, forced, o_bias, emit);
}

static gint generic_only; /* hz_tagger_set_generic_only() */

void
hz_tagger_set_generic_only (gboolean generic)
{
  g_atomic_int_set (&generic_only, generic ? 1 : 0);
}

guint
hz_tagger_score (const HzScan *scan, const HzTagger *tagger, const HzTagMark *marks, float o_bias, float *emit,
                 guint8 *forced)
{
  const guint n = scan->n_toks;
  g_return_val_if_fail (tagger->rows != NULL, 0);
  TokInfo *info = tag_work_get (n)->info;
  /* the tokens that are O without features, and the infos of the tokens within 2 of one
   * that is not (the features read no others) */
  guint n_feat = 0, done = 0;
  for (guint i = 0; i < n; i++)
    {
      forced[i] = hz_tagger_token_is_o (&scan->toks[i], &marks[i]);
      if (forced[i])
        continue;
      n_feat++;
      for (guint k = MAX (done, i >= 2 ? i - 2 : 0); k <= i + 2 && k < n; k++)
        tok_info (scan, k, &info[k]);
      done = MIN (i + 3, n);
    }
  if (n_feat == 0)
    return 0;
#ifdef HZ_TAGGER_POPCNT_CLONE
  if (!g_atomic_int_get (&generic_only) && __builtin_cpu_supports ("popcnt") && __builtin_cpu_supports ("sse4.1"))
    score_popcnt (scan, tagger, marks, info, forced, o_bias, emit);
  else
#endif
    score_generic (scan, tagger, marks, info, forced, o_bias, emit);
  return n_feat;
}

/* B or I: a token of a person's name (O and X are not) */
static inline gboolean
is_name_tag (guint8 tag)
{
  return tag == HZ_TAG_B || tag == HZ_TAG_I;
}

/* a lower-case word of the English word list ("young", "later"; also where it is a surname
 * too) that is no particle of names ("van", "de", "bin") */
static gboolean
lower_english_word (const HzToken *t)
{
  return (t->flags & HZ_TOK_LOWER) && (t->cls & HZ_WB (HZ_W_COMMON)) && !(t->cls & HZ_WB (HZ_W_NAME_CONN));
}

/* TRUE when token t has a letter: a name's tokens do ("078-05-1120" is none of a name) */
static gboolean
tok_has_letter (const HzScan *scan, const HzToken *t)
{
  if (t->flags & (HZ_TOK_ALPHA | HZ_TOK_CAP | HZ_TOK_UPPER | HZ_TOK_LOWER))
    return TRUE;
  for (const char *p = scan->text + t->s, *e = scan->text + t->e; p < e; p = g_utf8_next_char (p))
    if ((guchar) *p < 0x80 ? hz_is_alpha_ascii (*p) : g_unichar_isalpha (g_utf8_get_char (p)))
      return TRUE;
  return FALSE;
}

/* Trims the tagger's B/I run [*i, *j) of tokens to the name it holds; FALSE when it holds
 * none. `social`: hz_tagger_text_is_social() of the text. */
static gboolean
run_to_name (const HzScan *scan, const HzTagMark *marks, const guint8 *tags, guint n, gboolean social,
             guint *pi, guint *pj)
{
  guint i = *pi, j = *pj;
  /* tokens without a letter at either end are no part of a name ("SSN 078-05-1120"),
   * except a number of one or two digits opening a stage name ("50 Cent", "21 Savage") */
  while (j > i && !tok_has_letter (scan, &scan->toks[j - 1]))
    j--;
  while (i < j && !tok_has_letter (scan, &scan->toks[i])
         && !(i + 1 < j && (scan->toks[i].flags & HZ_TOK_DIGIT) && scan->toks[i].nchars <= 2))
    i++;
  if (i == j)
    return FALSE;
  /* a title is a cue, not part of the name, where the rules start the name after it
   * ("Dr. Kyle Kuefer"; "Lady Gaga" stays whole), and titles alone right before a name
   * are none ("Brigadier General | Ross G. Hoyt"; "the Pope" stays) */
  while (i < j && hz_tok_in (&scan->toks[i], HZ_W_TITLE)
         && (i + 1 < j ? marks[i + 1].person == 1 || hz_tok_in (&scan->toks[i + 1], HZ_W_TITLE)
                       : j < n && (tags[j] == HZ_TAG_B || marks[j].person == 1)))
    i++;
  if (i == j)
    return FALSE;
  /* a salutation's word is a cue, not (part of) a name ("Dear Grace", "Hi Mark") */
  while (i + 1 < j && hz_tok_in (&scan->toks[i], HZ_W_STRONG_CUE))
    i++;
  if (j == i + 1 && hz_tok_in (&scan->toks[i], HZ_W_STRONG_CUE) && !(scan->toks[i].cls & HZ_WB (HZ_W_GIVEN)))
    return FALSE;
  /* an abbreviated title alone ("from Mr. to nobody"), or a title alone after another
   * ("Mr. President") is no name */
  if (j == i + 1 && hz_tok_in (&scan->toks[i], HZ_W_TITLE)
      && (scan->toks[i].nchars <= 3 || (scan->toks[i].e < scan->len && scan->text[scan->toks[i].e] == '.')
          || (i > 0 && hz_tok_in (&scan->toks[i - 1], HZ_W_TITLE))))
    return FALSE;
  /* a form field's label is no name, nor part of the name before it ("Personal Info:",
   * "Name: Toshiko Varlund Phone: ...") */
  while (j > i && hz_names_field_label (scan, j - 1))
    j--;
  if (i == j)
    return FALSE;
  if (!social)
    {
      gboolean cap = FALSE, listed = FALSE;
      for (guint k = i; k < j; k++)
        {
          cap |= (scan->toks[k].flags & (HZ_TOK_CAP | HZ_TOK_UPPER)) != 0;
          listed |= (scan->toks[k].cls & (HZ_WB (HZ_W_GIVEN) | HZ_WB (HZ_W_SURNAME))) != 0;
        }
      /* outside chat and social-media text, a name without a capital letter is one of the
       * name lists' ("bruno mars"; not "maestro 0604...", "and essn 1234...") */
      if (!cap && !listed)
        return FALSE;
      /* and a lower-case English word at either end of a run with a capital is no part of
       * the name ("took young Carter along", "Angela later married"); at the end, one that
       * is also a given name or surname stays ("Donald trump") */
      while (cap && i < j && lower_english_word (&scan->toks[i]))
        i++;
      while (cap && j > i && lower_english_word (&scan->toks[j - 1])
             && !(scan->toks[j - 1].cls & (HZ_WB (HZ_W_GIVEN) | HZ_WB (HZ_W_SURNAME))))
        j--;
    }
  /* the label of an identifier ("Aadhaar: 2345 6789 0124", "HETU 131052-308T") */
  if (hz_names_identifier_label (scan, i, j))
    return FALSE;
  /* a run after an '@' is an account name or no name at all: the rules decide */
  if (scan->has['@'] && hz_names_after_at (scan, &scan->toks[i]))
    return FALSE;
  /* a firm or place, as the rules read one (rec-names.c): an organisation word inside
   * the run or right after it ("Russell Investments", "Aunt Bertha Inc"), a name of a firm
   * named after its partners ("at Whitfield, Okoro and Brandt"), or the subject of a
   * copula that names a kind of place or firm ("Grant is a small town"), is no person */
  gboolean firm = j < n && ((hz_tok_in (&scan->toks[j], HZ_W_ORG) && joins_name (scan, scan->toks[j - 1].e, scan->toks[j].s))
                            || hz_names_describes_thing (scan, j));
  for (guint k = i; k < j && !firm; k++)
    firm = (k > i && hz_tok_in (&scan->toks[k], HZ_W_ORG)) || hz_names_firm_of_partners (scan, k);
  if (firm)
    return FALSE;
  *pi = i;
  *pj = j;
  return TRUE;
}

void
hz_rec_tagger (HzScan *scan, const HzTagger *tagger)
{
  guint n = scan->n_toks;
  if (n == 0 || !tagger->rows || !scan->r->enabled[HZ_ENTITY_PERSON] || !hz_tagger_in_scope (tagger, scan))
    return;
  /* work space: marks, scores, back pointers, tags and the tokens that are surely O */
  TagWork *wk = tag_work_get (n);
  HzTagMark *marks = wk->marks;
  float *emit = wk->emit;
  guint8 *back = wk->back, *tags = wk->tags, *forced = wk->forced;

  hz_tagger_marks (scan, marks);
  gboolean social = hz_tagger_text_is_social (scan);
  if (hz_tagger_score (scan, tagger, marks, o_bias_of (tagger, social), emit, forced) == 0)
    return; /* all O: no name to add, nothing to veto */
  /* runs of tokens with features are decoded on their own: the others are O */
  hz_tagger_viterbi_runs (emit, forced, n, tagger->trans, back, tags);

  /* veto: rule PERSON candidates of the name tier whose tokens are all O are dropped
   * (HZ_TAGGER_VETO_O), or all of them: the tagger's spans replace them (HZ_TAGGER_VETO_ALL;
   * the rules' output is among its features). With HZ_TAGGER_VETO_X those whose tokens are
   * all X, with X preferred to a name by more than veto_margin on average, are dropped
   * (another kind of entity: "in Hesse, Germany"), except a listed given name that is no
   * place with a capitalised word after it. In every mode a repeat of a name ("... Faina D. Yefremova's
   * Tales. Early Yefremova") stays when the name itself is tagged or kept, and a name with a
   * non-ASCII letter or a title before it ("Miss Ramos") is never vetoed. */
  if (tagger->veto)
    {
      /* tokens of kept names: each token at most twice (tagged, and in a kept candidate) */
      guint n_names = 0, *names = wk->names;
      for (guint i = 0; i < n; i++)
        if (is_name_tag (tags[i]))
          names[n_names++] = i;
      for (int pass = 0; pass < 2; pass++)
        {
          guint w = 0;
          for (guint c = 0; c < scan->cands->len; c++)
            {
              HzCand *k = &g_array_index (scan->cands, HzCand, c);
              gboolean repeat = k->rec && strcmp (k->rec, "name-repeat") == 0;
              gboolean keep = TRUE;
              if (k->type == HZ_ENTITY_PERSON && k->tier == HZ_TIER_NAME && repeat == (pass == 1))
                {
                  keep = FALSE;
                  guint i0 = hz_token_at_or_after (scan, k->s), i1 = i0;
                  float pref_o = 0; /* how much the tagger prefers O, summed over the tokens */
                  float pref_x = 0; /* how much it prefers X to a name, likewise */
                  for (; i1 < n && scan->toks[i1].s < k->e; i1++)
                    {
                      const float *e = emit + i1 * HZ_TAG_N;
                      pref_o += e[HZ_TAG_O] - MAX (e[HZ_TAG_B], e[HZ_TAG_I]);
                      pref_x += e[HZ_TAG_X] - MAX (e[HZ_TAG_B], e[HZ_TAG_I]);
                      if (repeat)
                        for (guint h = 0; h < n_names && !keep; h++)
                          keep = same_word (scan, &scan->toks[names[h]], &scan->toks[i1]);
                      else if (tagger->veto == HZ_TAGGER_VETO_O)
                        keep |= is_name_tag (tags[i1]);
                      else if (tagger->veto == HZ_TAGGER_VETO_X)
                        keep |= tags[i1] != HZ_TAG_X;
                      /* the training tweets are English: on names in other scripts and with
                       * diacritics ("Šárka Ottová") the tagger has too little evidence to
                       * overrule the rules */
                      keep |= !repeat && (scan->toks[i1].flags & HZ_TOK_NONASCII) != 0;
                    }
                  /* a name after a title, a salutation or "to" after a word that takes a
                   * person ("Miss Ramos", "Dr. Okafor", "hi Sunny,", "a letter to Tamsin
                   * Ode"), and a listed given name owning something ("at Mary's house",
                   * "to Kelsey's party") are a person's */
                  keep |= !repeat && hz_names_to_person (scan, i0);
                  keep |= !repeat && i0 > 0 && i0 < n && scan->toks[i0].s - scan->toks[i0 - 1].e <= 2
                          && (hz_tok_in (&scan->toks[i0 - 1], HZ_W_TITLE) || hz_token_among (scan, &scan->toks[i0 - 1], salutations));
                  keep |= !repeat && i0 < n && k->e > scan->toks[i0].s && k->e + 2 <= scan->len
                          && scan->text[k->e] == '\'' && (scan->text[k->e + 1] == 's' || scan->text[k->e + 1] == 'S')
                          && (hz_lex_lookup (&scan->r->lex, scan->text + scan->toks[i0].s, MIN (scan->toks[i0].e, k->e) - scan->toks[i0].s)
                              & HZ_WB (HZ_W_GIVEN));
                  const float margin = tagger->veto_margin * (float) (i1 - i0);
                  if (tagger->veto == HZ_TAGGER_VETO_X)
                    /* kept where X is not preferred by the margin, and a listed given name
                     * that is no place with a capitalised word after it is a person's name
                     * whatever the tagger reads ("Tamir Lindqvist"; not "Boston Bruins") */
                    keep |= pref_x <= margin
                            || (!repeat && i1 >= i0 + 2 && hz_tok_in (&scan->toks[i0], HZ_W_GIVEN)
                                && !(scan->toks[i0].cls & (HZ_WB (HZ_W_PLACE) | HZ_WB (HZ_W_CITY)))
                                && (scan->toks[i0 + 1].flags & (HZ_TOK_CAP | HZ_TOK_UPPER)));
                  else if (!repeat && i1 > i0 && pref_o <= margin)
                    keep = TRUE;
                  if (keep && !repeat)
                    for (guint i = i0; i < n && scan->toks[i].s < k->e && n_names < 2 * n; i++)
                      if (!is_name_tag (tags[i]))
                        names[n_names++] = i;
                }
              if (keep)
                g_array_index (scan->cands, HzCand, w++) = *k;
            }
          g_array_set_size (scan->cands, w);
        }
    }
  /* B/I runs become candidates; the score is the mean margin of the name tags over O,
   * squashed into 0.5..1 */
  for (guint i = 0; i < n;)
    {
      if (!is_name_tag (tags[i]))
        {
          i++;
          continue;
        }
      guint j = i + 1;
      while (j < n && tags[j] == HZ_TAG_I && joins_name (scan, scan->toks[j - 1].e, scan->toks[j].s))
        j++;
      guint next = j; /* where the next run may start */
      if (run_to_name (scan, marks, tags, n, social, &i, &j))
        {
          float margin = 0;
          for (guint k = i; k < j; k++)
            margin += emit[k * HZ_TAG_N + tags[k]] - emit[k * HZ_TAG_N + HZ_TAG_O];
          margin /= (float) (j - i);
          float score = 0.5f + 0.5f * tanhf (MAX (margin, 0.0f) / 4.0f);
          hz_scan_add (scan, scan->toks[i].s, hz_names_person_end (scan, span_end (scan, &scan->toks[j - 1])), HZ_ENTITY_PERSON,
                       score, HZ_TIER_NAME, hz_tagger_rec);
        }
      i = next;
    }
}
