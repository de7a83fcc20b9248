/* hz-tagger.c — the learned PERSON sequence tagger (see hz-tagger.h for the model and the
 * weights-file layout; the trainer is redactor/train-person-tagger.c). */
#include "hz-tagger.h"

#include <math.h>
#include <string.h>

const char hz_tagger_rec[] = "person-tagger";

HzTagger *
hz_tagger_new (guint bucket_bits)
{
  g_return_val_if_fail (bucket_bits >= 8 && bucket_bits <= 22, NULL);
  HzTagger *t = g_new0 (HzTagger, 1);
  t->bucket_bits = bucket_bits;
  t->w = g_new0 (float, (gsize) HZ_TAG_N << bucket_bits);
  return t;
}

void
hz_tagger_free (HzTagger *tagger)
{
  if (!tagger)
    return;
  g_free (tagger->w);
  g_free (tagger->q);
  g_free (tagger);
}

static guint32
rd32 (const guint8 *p)
{
  return (guint32) p[0] | (guint32) p[1] << 8 | (guint32) p[2] << 16 | (guint32) p[3] << 24;
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

static void
payload_sha256 (const guint8 *payload, gsize n, guint8 out[32])
{
  GChecksum *c = g_checksum_new (G_CHECKSUM_SHA256);
  g_checksum_update (c, payload, n);
  gsize len = 32;
  g_checksum_get_digest (c, out, &len);
  g_checksum_free (c);
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
  if (!p || n < HZ_TAGGER_HEADER)
    BAD ("file too short (%" G_GSIZE_FORMAT " bytes, the header alone is %u)", n, HZ_TAGGER_HEADER);
  if (memcmp (p, HZ_TAGGER_MAGIC, 8) != 0)
    BAD ("not a weights file (bad magic)");
  guint32 version = rd32 (p + 8), bits = rd32 (p + 12), scope = rd32 (p + 16), veto = rd32 (p + 20);
  if (version != HZ_TAGGER_VERSION)
    BAD ("format version %u, this build reads version %u", version, HZ_TAGGER_VERSION);
  if (bits < 8 || bits > 22)
    BAD ("bucket_bits %u out of range 8..22", bits);
  if (scope > HZ_TAGGER_SCOPE_SOCIAL || veto > HZ_TAGGER_VETO_ALL)
    BAD ("unknown scope %u or veto %u", scope, veto);
  gsize payload = (gsize) HZ_TAG_N * 2 << bits;
  if (n != HZ_TAGGER_HEADER + payload)
    BAD ("size %" G_GSIZE_FORMAT " bytes, expected %" G_GSIZE_FORMAT " for bucket_bits %u (truncated?)",
         n, HZ_TAGGER_HEADER + payload, bits);
  float o_bias = rdf (p + 24), scale = rdf (p + 28), veto_margin = rdf (p + 32), prose_bias = rdf (p + 36);
  if (!isfinite (o_bias) || fabsf (o_bias) > 1e6f || !isfinite (scale) || scale <= 0 || scale > 1e3f
      || !isfinite (veto_margin) || fabsf (veto_margin) > 1e6f || !isfinite (prose_bias)
      || fabsf (prose_bias) > 1e6f)
    BAD ("o_bias, scale, veto_margin or prose_bias not a sane number");
  float trans[(HZ_TAG_N + 1) * HZ_TAG_N];
  for (int k = 0; k < (HZ_TAG_N + 1) * HZ_TAG_N; k++)
    {
      trans[k] = rdf (p + 40 + 4 * k);
      if (!isfinite (trans[k]) || fabsf (trans[k]) > 1e6f)
        BAD ("transition weight %d not a sane number", k);
    }
  guint8 sum[32];
  payload_sha256 (p + HZ_TAGGER_HEADER, payload, sum);
  if (memcmp (sum, p + 88, 32) != 0)
    BAD ("payload checksum mismatch (corrupt file)");
  HzTagger *t = hz_tagger_new (bits);
  t->scope = scope;
  t->veto = veto;
  t->o_bias = o_bias;
  t->veto_margin = veto_margin;
  t->prose_bias = prose_bias;
  memcpy (t->trans, trans, sizeof trans);
  const guint8 *w = p + HZ_TAGGER_HEADER;
  for (gsize k = 0; k < (gsize) HZ_TAG_N << bits; k++)
    t->w[k] = (float) (gint16) (guint16) (w[2 * k] | w[2 * k + 1] << 8) * scale;
  hz_tagger_pack (t);
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

void
hz_tagger_pack (HzTagger *t)
{
  gsize nb = (gsize) 1 << t->bucket_bits;
  t->scale = weight_scale (t);
  g_free (t->q);
  t->q = g_new (gint16, 4 * nb);
  for (gsize b = 0; b < nb; b++)
    {
      for (int y = 0; y < HZ_TAG_N; y++)
        t->q[4 * b + y] = quantise (t->w[b * HZ_TAG_N + y], t->scale);
      t->q[4 * b + 3] = 0;
    }
}

GBytes *
hz_tagger_serialize (const HzTagger *t)
{
  g_return_val_if_fail (t != NULL, NULL);
  gsize nw = (gsize) HZ_TAG_N << t->bucket_bits;
  gsize n = HZ_TAGGER_HEADER + 2 * nw;
  guint8 *p = g_malloc0 (n);
  float scale = weight_scale (t);
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
    wrf (p + 40 + 4 * k, t->trans[k]);
  guint8 *w = p + HZ_TAGGER_HEADER;
  for (gsize k = 0; k < nw; k++)
    {
      guint16 u = (guint16) quantise (t->w[k], scale);
      w[2 * k] = (guint8) u;
      w[2 * k + 1] = (guint8) (u >> 8);
    }
  payload_sha256 (w, 2 * nw, p + 88);
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

/* TRUE when the bytes between two tokens can sit inside one name: spaces, and a dot, hyphen
 * or apostrophe ("M . Night", "Jean-Luc", "O' Neil"); a comma, bracket, quote, '&' or
 * sentence punctuation separates two names ("Levin , Hien") */
static gboolean
joins_name (const HzScan *scan, gsize a, gsize b)
{
  for (gsize k = a; k < b; k++)
    {
      char c = scan->text[k];
      if (c != ' ' && c != '.' && c != '-' && c != '\'')
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
    v = v << 8 | (guint8) g_ascii_tolower (s[k]);
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

guint
hz_tagger_features (const HzScan *scan, const HzTagMark *marks, guint i, guint bucket_bits,
                    guint32 *out)
{
  const guint shift = 64 - bucket_bits;
  const HzToken *t = &scan->toks[i];
  /* a lower-case English word that is no name, digits, and nothing a rule marked: O, no
   * features (most tokens of a text) */
  if (hz_tagger_token_is_o (t, &marks[i]))
    return 0;
  const HzToken *pv = i > 0 ? &scan->toks[i - 1] : NULL;
  const HzToken *nx = i + 1 < scan->n_toks ? &scan->toks[i + 1] : NULL;
  const HzToken *pv2 = i > 1 ? &scan->toks[i - 2] : NULL;
  const HzToken *nx2 = i + 2 < scan->n_toks ? &scan->toks[i + 2] : NULL;
  guint cap = cap_class (t);
  guint n = 0;
#define ADD(tmpl, v) (out[n++] = (guint32) (fh ((tmpl), (guint64) (v)) >> shift))
  ADD (F_BIAS, 0);
  /* word identity (lower case; digits and very long tokens by shape only) */
  guint64 w0 = t->hash ? t->hash : shape (t);
  ADD (F_W0, w0);
  ADD (F_W0_CAP, w0 * 7 + cap);
  guint64 wm1 = pv ? (pv->hash ? pv->hash : shape (pv)) : 1;
  ADD (F_WM1, wm1);
  ADD (F_WM1_CAP0, wm1 * 7 + cap);
  ADD (F_WP1, nx ? (nx->hash ? nx->hash : shape (nx)) : 1);
  ADD (F_WM2, pv2 ? (pv2->hash ? pv2->hash : shape (pv2)) : 1);
  ADD (F_WP2, nx2 ? (nx2->hash ? nx2->hash : shape (nx2)) : 1);
  /* shape, here and around */
  guint sh = shape (t);
  ADD (F_SHAPE0, sh);
  ADD (F_SENTCAP, (t->flags & HZ_TOK_SENT ? 8 : 0) | cap);
  ADD (F_SHAPEM1, pv ? shape (pv) : 1023);
  ADD (F_SHAPEP1, nx ? shape (nx) : 1023);
  ADD (F_SHAPE_PAIR, (pv ? cap_class (pv) : 7) * 64 + cap * 8 + (nx ? cap_class (nx) : 7));
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
      ADD (F_CLS0_CAP, b * 8 + cap);
    }
  guint64 cm = pv ? pv->cls & CTX_BITS : 0, cp = nx ? nx->cls & CTX_BITS : 0;
  while (cm && n < HZ_TAGGER_MAX_FEATS - 12)
    {
      guint b = (guint) __builtin_ctzll (cm);
      cm &= cm - 1;
      ADD (F_CLSM1, b);
    }
  while (cp && n < HZ_TAGGER_MAX_FEATS - 10)
    {
      guint b = (guint) __builtin_ctzll (cp);
      cp &= cp - 1;
      ADD (F_CLSP1, b);
    }
  /* '@' / '#' and punctuation next to the token */
  ADD (F_BEFORE, byte_class (byte_before (scan, t->s)) * 8 + cap);
  ADD (F_AFTER, byte_class (byte_after (scan, t->e)));
  /* genre and position */
  ADD (F_GENRE, (scan->informal ? 1 : 0) | (scan->all_lower ? 2 : 0) | cap << 2);
  ADD (F_POS, (i == 0 ? 1 : 0) | (i + 1 == scan->n_toks ? 2 : 0) | (t->flags & HZ_TOK_SENT ? 4 : 0));
  /* what the rules found */
  const HzTagMark *m = &marks[i];
  ADD (F_RULE, m->person * 8 + cap);
  if (m->rec)
    ADD (F_RULE_REC, m->rec);
  ADD (F_RULE_LOC, m->loc * 2 + m->ident);
  ADD (F_RULEM1, pv ? marks[i - 1].person : 3);
  ADD (F_RULEP1, nx ? marks[i + 1].person : 3);
#undef ADD
  return n;
}

void
hz_tagger_viterbi (const float *emit, guint n, const float *trans, guint8 *back, guint8 *tags)
{
  if (n == 0)
    return;
  float cur[HZ_TAG_N], nxt[HZ_TAG_N];
  for (int y = 0; y < HZ_TAG_N; y++)
    cur[y] = trans[y] + emit[y];
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
  for (int k = 1; k < HZ_TAG_N; k++)
    if (cur[k] > cur[y])
      y = k;
  for (guint i = n; i-- > 0;)
    {
      tags[i] = (guint8) y;
      if (i > 0)
        y = back[i * HZ_TAG_N + y];
    }
}

enum { HEADLINE_MIN_WORDS = 4, HEADLINE_CAPS_TENTHS = 7 };

gboolean
hz_tagger_in_scope (const HzTagger *tagger, const HzScan *scan)
{
  return tagger->scope == HZ_TAGGER_SCOPE_ALL || hz_tagger_text_is_social (scan);
}

float
hz_tagger_o_bias_for (const HzTagger *tagger, const HzScan *scan)
{
  return tagger->o_bias + (hz_tagger_text_is_social (scan) ? 0.0f : tagger->prose_bias);
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

void
hz_rec_tagger (HzScan *scan, const HzTagger *tagger)
{
  guint n = scan->n_toks;
  if (n == 0 || !tagger->q || !scan->r->enabled[HZ_ENTITY_PERSON] || !hz_tagger_in_scope (tagger, scan))
    return;
  /* work space: marks, scores, back pointers and tags (on the stack for chat messages) */
  enum { STACK_TOKS = 256 };
  HzTagMark marks_s[STACK_TOKS];
  float emit_s[STACK_TOKS * HZ_TAG_N];
  guint8 back_s[STACK_TOKS * HZ_TAG_N], tags_s[STACK_TOKS];
  gboolean heap = n > STACK_TOKS;
  HzTagMark *marks = heap ? g_new (HzTagMark, n) : marks_s;
  float *emit = heap ? g_new (float, (gsize) n * HZ_TAG_N) : emit_s;
  guint8 *back = heap ? g_new (guint8, (gsize) n * HZ_TAG_N) : back_s;
  guint8 *tags = heap ? g_new (guint8, n) : tags_s;

  hz_tagger_marks (scan, marks);
  const float o_bias = hz_tagger_o_bias_for (tagger, scan);
  /* the weight reads miss the cache: the features of the next token are computed and their
   * buckets prefetched before the current token's weights are summed */
  guint32 fbuf[2][HZ_TAGGER_MAX_FEATS];
  guint nf_next = hz_tagger_features (scan, marks, 0, tagger->bucket_bits, fbuf[0]);
  for (guint i = 0; i < n; i++)
    {
      const guint32 *f = fbuf[i & 1];
      guint nf = nf_next;
      if (i + 1 < n)
        {
          guint32 *g = fbuf[(i + 1) & 1];
          nf_next = hz_tagger_features (scan, marks, i + 1, tagger->bucket_bits, g);
          for (guint k = 0; k < nf_next; k++)
            __builtin_prefetch (tagger->q + 4 * (gsize) g[k]);
        }
      if (nf == 0)
        {
          emit[i * HZ_TAG_N + 0] = o_bias + HZ_TAGGER_FORCE_O;
          emit[i * HZ_TAG_N + 1] = emit[i * HZ_TAG_N + 2] = 0;
          continue;
        }
      gint32 s0 = 0, s1 = 0, s2 = 0;
      for (guint k = 0; k < nf; k++)
        {
          const gint16 *w = tagger->q + 4 * (gsize) f[k];
          s0 += w[0];
          s1 += w[1];
          s2 += w[2];
        }
      emit[i * HZ_TAG_N + 0] = o_bias + (float) s0 * tagger->scale;
      emit[i * HZ_TAG_N + 1] = (float) s1 * tagger->scale;
      emit[i * HZ_TAG_N + 2] = (float) s2 * tagger->scale;
    }
  hz_tagger_viterbi (emit, n, tagger->trans, back, tags);

  /* veto: rule PERSON candidates of the name tier whose tokens are all O are dropped
   * (HZ_TAGGER_VETO_O), or all of them: the tagger's spans replace them (HZ_TAGGER_VETO_ALL;
   * the rules' output is among its features). A repeat of a name ("... Faina D. Yefremova's
   * Tales. Early Yefremova") stays when the name itself is tagged or kept; a name with a
   * non-ASCII letter is never vetoed. */
  if (tagger->veto)
    {
      /* tokens of kept names: each token at most twice (tagged, and in a kept candidate) */
      guint names_s[2 * STACK_TOKS], n_names = 0;
      guint *names = heap ? g_new (guint, 2 * (gsize) n) : names_s;
      for (guint i = 0; i < n; i++)
        if (tags[i] != HZ_TAG_O)
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
                  for (; i1 < n && scan->toks[i1].s < k->e; i1++)
                    {
                      const float *e = emit + i1 * HZ_TAG_N;
                      pref_o += e[HZ_TAG_O] - MAX (e[HZ_TAG_B], e[HZ_TAG_I]);
                      if (repeat)
                        for (guint h = 0; h < n_names && !keep; h++)
                          keep = same_word (scan, &scan->toks[names[h]], &scan->toks[i1]);
                      else if (tagger->veto == HZ_TAGGER_VETO_O)
                        keep |= tags[i1] != HZ_TAG_O;
                      /* the training tweets are English: on names in other scripts and with
                       * diacritics ("Šárka Ottová") the tagger has too little evidence to
                       * overrule the rules */
                      keep |= !repeat && (scan->toks[i1].flags & HZ_TOK_NONASCII) != 0;
                    }
                  if (!repeat && i1 > i0 && pref_o <= tagger->veto_margin * (float) (i1 - i0))
                    keep = TRUE;
                  if (keep && !repeat)
                    for (guint i = i0; i < n && scan->toks[i].s < k->e && n_names < 2 * n; i++)
                      if (tags[i] == HZ_TAG_O)
                        names[n_names++] = i;
                }
              if (keep)
                g_array_index (scan->cands, HzCand, w++) = *k;
            }
          g_array_set_size (scan->cands, w);
        }
      if (heap)
        g_free (names);
    }
  /* B/I runs become candidates; the score is the mean margin of the name tags over O,
   * squashed into 0.5..1 */
  for (guint i = 0; i < n;)
    {
      if (tags[i] == HZ_TAG_O)
        {
          i++;
          continue;
        }
      guint j = i + 1;
      while (j < n && tags[j] == HZ_TAG_I && joins_name (scan, scan->toks[j - 1].e, scan->toks[j].s))
        j++;
      /* a title is a cue, not part of the name, where the rules start the name after it
       * ("Dr. Kyle Kuefer"; "Lady Gaga" stays whole), and titles alone right before a name
       * are none ("Brigadier General | Ross G. Hoyt"; "the Pope" stays) */
      while (i < j && hz_tok_in (&scan->toks[i], HZ_W_TITLE)
             && (i + 1 < j ? marks[i + 1].person == 1 || hz_tok_in (&scan->toks[i + 1], HZ_W_TITLE)
                           : j < n && (tags[j] == HZ_TAG_B || marks[j].person == 1)))
        i++;
      if (i == j)
        continue;
      /* an abbreviated title alone ("from Mr. to nobody") is no name */
      if (j == i + 1 && hz_tok_in (&scan->toks[i], HZ_W_TITLE)
          && (scan->toks[i].nchars <= 3 || (scan->toks[i].e < scan->len && scan->text[scan->toks[i].e] == '.')))
        {
          i = j;
          continue;
        }
      /* a firm or place, as the rules read one (rec-names.c): an organisation word inside
       * the run or right after it ("Russell Investments", "Aunt Bertha Inc"), a name of a firm
       * named after its partners ("at Whitfield, Okoro and Brandt"), or the subject of a
       * copula that names a kind of place or firm ("Grant is a small town"), is no person */
      gboolean firm = j < n && ((hz_tok_in (&scan->toks[j], HZ_W_ORG) && joins_name (scan, scan->toks[j - 1].e, scan->toks[j].s))
                                || hz_names_describes_thing (scan, j));
      for (guint k = i; k < j && !firm; k++)
        firm = (k > i && hz_tok_in (&scan->toks[k], HZ_W_ORG)) || hz_names_firm_of_partners (scan, k);
      if (firm)
        {
          i = j;
          continue;
        }
      float margin = 0;
      for (guint k = i; k < j; k++)
        margin += emit[k * HZ_TAG_N + tags[k]] - emit[k * HZ_TAG_N + HZ_TAG_O];
      margin /= (float) (j - i);
      float score = 0.5f + 0.5f * tanhf (MAX (margin, 0.0f) / 4.0f);
      hz_scan_add (scan, scan->toks[i].s, span_end (scan, &scan->toks[j - 1]), HZ_ENTITY_PERSON,
                   score, HZ_TIER_NAME, hz_tagger_rec);
      i = j;
    }
  if (heap)
    {
      g_free (marks);
      g_free (emit);
      g_free (back);
      g_free (tags);
    }
}
