/* hz-tagger.h — the learned PERSON sequence tagger of libhzredact (internal).
 *
 * A first-order linear-chain model over the redactor's word tokens (hz_tokenize()) with the
 * tags O, B (first token of a name), I (inside a name) and X (part of another kind of named
 * entity: firm, place, work, ...; from the training files' other labels), trained as an averaged structured
 * perceptron (Collins 2002, "Discriminative training methods for hidden Markov models") and
 * decoded with Viterbi. Features (hz_tagger_features()) are hashed into 2^bucket_bits buckets
 * ("hashing trick", Weinberger et al. 2009); each bucket holds one weight per tag. They are
 * built from what the rules already compute: word identity and shape, lexicon classes
 * (gazetteers with their frequency tiers, cue lists), neighbouring words and classes, '@'/'#'
 * adjacency, position, chat-style flags, and the rule recognizers' own candidates (PERSON by
 * recognizer, LOCATION, identifiers), so the model learns when to trust the rules in chat
 * text and adds the names they miss.
 *
 * Genres: the training data are tweets. Texts of that genre (hz_tagger_text_is_social():
 * chat-style, a handle, hashtag or emoji, headline case) are tagged with o_bias; with
 * HZ_TAGGER_SCOPE_ALL every other text (comments, forum posts, prose) is tagged too, with
 * prose_bias added to the O score, so that the tagger adds only names it is surer of where
 * the rules' capitalisation cues hold.
 *
 * Weights file (`data/person-tagger.bin`, little-endian, written by hz_tagger_serialize()):
 *
 *   offset size  field
 *        0    8  magic "HZPTAG01"
 *        8    4  u32 format version (HZ_TAGGER_VERSION)
 *       12    4  u32 bucket_bits (8..22)
 *       16    4  u32 scope (HzTaggerScope)
 *       20    4  u32 veto (HzTaggerVeto)
 *       24    4  f32 o_bias (added to the O score of every token when decoding)
 *       28    4  f32 scale (weight = int16 * scale)
 *       32    4  f32 veto_margin (a rule name is vetoed only when the tagger prefers O, or
 *                with HZ_TAGGER_VETO_X the tag X, to a name by more than this, on average
 *                over its tokens)
 *       36    4  f32 prose_bias (added to o_bias for texts outside the social genre; used
 *                with HZ_TAGGER_SCOPE_ALL)
 *       40   80  f32 trans[5][4]: row 0 = start of text, row 1 + p = after tag p
 *      120    4  u32 n_rows: buckets with a weight other than 0 (<= 2^bucket_bits)
 *      124   32  SHA-256 of bytes 0..123 followed by the payload (every field is covered)
 *      156       payload:
 *                  used bitmap, 2^bucket_bits / 8 bytes: u64 words, bit (b % 64) of word
 *                    b / 64 set when bucket b has a row (n_rows bits set in all)
 *                  rows, 4 * 2 * n_rows bytes: int16 weights of the used buckets in bucket
 *                    order, one per tag (O, B, I, X); every other bucket weighs 0
 *
 * Version 4 adds the tag X (version 3 had O, B, I: trans[4][3], 3 weights per row) and
 * stores, like version 3, only the used buckets (the trainer leaves buckets seen fewer than
 * --min-count times at 0). Versions 1 to 3 (other layouts) are refused like any other
 * version: retrain with train-person-tagger.
 *
 * At run time (hz_tagger_pack()) the bitmap becomes 64-bucket blocks (used bits + rank of
 * the block's first row, 16 bytes each, 16 KiB for 2^16 buckets) and the rows a table of
 * 1 + n_rows int16 quadruples (O, B, I, X) whose row 0 is zeros (hz_tagger_row()): ~442 KiB
 * for the shipped weights (86 % of the buckets used), against 512 KiB for a dense table. The buckets of the templates with few values are
 * also copied into a small direct table (~30 KiB), so that only the ~10 word features of a
 * token are hashed when tagging.
 *
 * A loaded HzTagger is immutable and may be used from any number of threads.
 */
#pragma once

#include "hz-redact-private.h"

#include <gio/gio.h>

/* O: outside any name; B, I: first token of a person's name, and inside one; X: part of a
 * named entity that is no person (a firm, place, band, work, product, ...). X is learnt from
 * the training files' other entity labels so that the tagger has evidence *for* "not a
 * person", which HZ_TAGGER_VETO_X reads. */
enum { HZ_TAG_O = 0, HZ_TAG_B = 1, HZ_TAG_I = 2, HZ_TAG_X = 3, HZ_TAG_N = 4 };
/** Stride of a run-time weight row: O, B, I, X (aligned 8-byte rows). */
enum { HZ_TAG_ROW = 4 };

#define HZ_TAGGER_MAGIC "HZPTAG01"
#define HZ_TAGGER_VERSION 4u
/** Byte offsets of the header fields after the transitions (layout above). */
#define HZ_TAGGER_OFF_TRANS 40u
#define HZ_TAGGER_OFF_NROWS (HZ_TAGGER_OFF_TRANS + 4u * (HZ_TAG_N + 1) * HZ_TAG_N)
#define HZ_TAGGER_OFF_SHA (HZ_TAGGER_OFF_NROWS + 4u)
#define HZ_TAGGER_HEADER (HZ_TAGGER_OFF_SHA + 32u)
/** Most features of one token (hz_tagger_features() never writes more). */
#define HZ_TAGGER_MAX_FEATS 48
/** Built-in weights (GResource path). */
#define HZ_TAGGER_RESOURCE "/ai/hanzo/redact/data/person-tagger.bin"
/** Built-in weights of the prose tagger, used for texts that read as encyclopedic prose
 *  (hz_tagger_text_is_encyclopedic()): the same training data plus Wikipedia sentences of
 *  CrossNER (redactor/README.md, "PERSON tagger"). Same format. */
#define HZ_TAGGER_PROSE_RESOURCE "/ai/hanzo/redact/data/person-tagger-prose.bin"

/** Which texts the tagger runs on. */
typedef enum {
  HZ_TAGGER_SCOPE_ALL = 0,    /* every text; outside the social genre with prose_bias added */
  HZ_TAGGER_SCOPE_SOCIAL = 1, /* chat-style or social-media text only (hz_tagger_text_is_social()) */
} HzTaggerScope;

/** What happens to the rules' PERSON candidates (name tier) in texts within scope. */
typedef enum {
  HZ_TAGGER_VETO_NONE = 0, /* kept: the tagger only adds names */
  HZ_TAGGER_VETO_O = 1,    /* dropped when the tagger tags all their tokens O (by more than
                            * veto_margin on average) */
  HZ_TAGGER_VETO_ALL = 2,  /* dropped unless the tagger prefers O by at most veto_margin: the
                            * tagger's spans replace them */
  HZ_TAGGER_VETO_X = 3,    /* dropped when the tagger tags all their tokens X (another kind of
                            * named entity) */
} HzTaggerVeto;

/** Recognizer name of the tagger's spans. Adjacent tagger spans are not merged (a B tag
 *  right after a name starts another name: "Nicki Minaj Beyonce"). */
extern const char hz_tagger_rec[];

/** Per-token marks derived from the rule candidates (input of the rule features). */
typedef struct {
  guint8 person;   /* 0 none, 1 first token of a rule PERSON candidate, 2 inside one */
  guint8 loc;      /* inside a LOCATION candidate */
  guint8 ident;    /* inside a candidate of another type (URL, EMAIL, date, ...) */
  guint8 pad_;
  guint32 rec;     /* hash of the PERSON recognizer's name, 0 when none */
} HzTagMark;

/** Run-time block of 64 buckets: which of them have a row, and the row of the first one. */
typedef struct {
  guint64 used; /* bit k: bucket 64 * block + k has a row */
  guint32 rank; /* 1 + rows of the buckets before this block (row 0 is the zero row) */
  guint32 pad_;
} HzTagBlock;

struct _HzTagger {
  guint32 bucket_bits;
  guint32 scope;
  guint32 veto;    /* HzTaggerVeto */
  float o_bias;
  float veto_margin;
  float prose_bias; /* added to o_bias outside the social genre (HZ_TAGGER_SCOPE_ALL) */
  float trans[(HZ_TAG_N + 1) * HZ_TAG_N];
  /* float weights, HZ_TAG_N << bucket_bits, bucket * HZ_TAG_N + tag: a tagger being trained
   * (hz_tagger_new()); NULL in a loaded one */
  float *w;
  /* run-time tables (hz_tagger_pack(), or the weights file): blocks[2^bucket_bits / 64],
   * rows[HZ_TAG_ROW * (1 + n_rows)] int16 (O, B, I, X; row 0 zeros); weight = rows[..] * scale */
  HzTagBlock *blocks;
  gint16 *rows;
  guint32 n_rows;
  float scale;
  /* the weights of the feature templates with few values (bias, shapes, case, classes,
   * punctuation, position, rule marks), one int16 quadruple (O, B, I, X) per template and
   * value, looked up directly instead of hashed (hz-tagger.c, "small templates") */
  gint16 *lut;
};
typedef struct _HzTagger HzTagger;

/** A zero-weight tagger with 2^bucket_bits buckets (8..22) for training. */
HzTagger *hz_tagger_new (guint bucket_bits);
/** Parse a weights file (layout above). Every field is checked (magic, version, bucket_bits
 *  range, exact size, finite floats, SHA-256 of the header fields and payload); on any mismatch returns NULL
 *  with G_IO_ERROR_INVALID_DATA and a message naming the problem. */
HzTagger *hz_tagger_new_from_bytes (GBytes *bytes, GError **error);
/** SHA-256 of a weights file of `size` bytes (>= HZ_TAGGER_HEADER; layout above): of its
 *  header fields before the checksum (bytes 0 .. HZ_TAGGER_OFF_SHA) and of its payload, so
 *  a flipped bit in the biases, scale or transitions is found like one in the weights. The
 *  value stored at HZ_TAGGER_OFF_SHA. Pure. */
void hz_tagger_checksum (const guint8 *file, gsize size, guint8 out[32]);
/** Serialise (weights quantised to int16 with one scale; see the layout above). */
GBytes *hz_tagger_serialize (const HzTagger *tagger);
void hz_tagger_free (HzTagger *tagger);

/** Quantise `w` into the run-time tables (int16 with one scale, exactly as
 *  hz_tagger_serialize() writes them, so a tagger scores the same before and after a save
 *  and load). hz_redactor_take_tagger() calls it; a tagger without `w` is left as it is. */
void hz_tagger_pack (HzTagger *tagger);

/** Row of bucket `b` (< 2^bucket_bits) in tagger->rows: 0 (the zero row) for a bucket
 *  without weights. Needs the run-time tables (hz_tagger_pack()). */
static inline guint32
hz_tagger_row (const HzTagger *tagger, guint32 b)
{
  const HzTagBlock *bl = &tagger->blocks[b >> 6];
  guint64 bit = G_GUINT64_CONSTANT (1) << (b & 63);
  guint32 r = bl->rank + (guint32) __builtin_popcountll (bl->used & (bit - 1));
  return bl->used & bit ? r : 0;
}

/** Weight of bucket `b` and tag `y` as the run-time tables hold it (dequantised). */
float hz_tagger_weight (const HzTagger *tagger, guint32 b, int y);

/** Fill marks[0..scan->n_toks) from the candidates in scan->cands (rule output so far). */
void hz_tagger_marks (const HzScan *scan, HzTagMark *marks);
/** Score added to O for a token without features (hz_tagger_token_is_o()): it is O. */
#define HZ_TAGGER_FORCE_O 1.0e4f

/** Tokens the tagger always tags O (and computes no features for): digits, and lower-case
 *  words of the English word list that are no given name or surname and that no rule
 *  marked as part of a name. */
static inline gboolean
hz_tagger_token_is_o (const HzToken *t, const HzTagMark *m)
{
  if (m->person)
    return FALSE;
  if (t->flags & HZ_TOK_DIGIT)
    return TRUE;
  return (t->flags & HZ_TOK_LOWER) && (t->cls & HZ_WB (HZ_W_COMMON))
         && !(t->cls & (HZ_WB (HZ_W_GIVEN) | HZ_WB (HZ_W_SURNAME)));
}

/** Hashed feature buckets of token `i` (in 0..2^bucket_bits) into `out`
 *  (HZ_TAGGER_MAX_FEATS entries); returns how many, 0 for a token that is always O
 *  (hz_tagger_token_is_o()). Pure function of the scan and marks. */
guint hz_tagger_features (const HzScan *scan, const HzTagMark *marks, guint i, guint bucket_bits,
                          guint32 *out);
/** Emission scores of every token of the scan for the tagger (packed: hz_tagger_pack() or
 *  loaded), `marks` from hz_tagger_marks(): forced[i] = 1 for a token that is O without
 *  features (hz_tagger_token_is_o(); emit = o_bias + HZ_TAGGER_FORCE_O, 0, 0), else 0 and
 *  emit[i * HZ_TAG_N + y] = (o_bias for O) + scale * the int16 weights of its
 *  hz_tagger_features() buckets summed exactly in int32 — the scores the trainer's weights
 *  give, computed with the small templates' direct table and the sparse rows, on x86-64
 *  with POPCNT/SSE4.1 when the CPU has them. emit[n * HZ_TAG_N], forced[n]. Returns the
 *  number of tokens with features; when 0, emit is left as it was. Uses per-thread work
 *  space; thread-safe. */
guint hz_tagger_score (const HzScan *scan, const HzTagger *tagger, const HzTagMark *marks, float o_bias,
                       float *emit, guint8 *forced);
/** Tests: TRUE makes hz_tagger_score() use its generic code on every CPU (process-wide). */
void hz_tagger_set_generic_only (gboolean generic);
/** Viterbi decoding of a first-order chain: emit[n * HZ_TAG_N] scores per token and tag,
 *  trans[(HZ_TAG_N + 1) * HZ_TAG_N] (row 0 = start). Writes the best tag sequence into
 *  tags[n]. `back` is n * HZ_TAG_N bytes of work space. Ties go to the lower tag. */
void hz_tagger_viterbi (const float *emit, guint n, const float *trans, guint8 *back, guint8 *tags);
/** Viterbi decoding with tokens known to be O (forced[i] != 0; their emissions are not
 *  read): every maximal run of other tokens is decoded on its own, entering from the start
 *  of the text or from O and leaving into O or the end of the text, and the forced tokens
 *  are tagged O. The same tags as hz_tagger_viterbi() over emissions that make the forced
 *  tokens O by a margin larger than any transition (HZ_TAGGER_FORCE_O), without summing
 *  those margins (scores stay small, so long texts lose no float precision), and a text
 *  without a run costs one pass over `forced`. Same arguments as hz_tagger_viterbi(). */
void hz_tagger_viterbi_runs (const float *emit, const guint8 *forced, guint n, const float *trans,
                             guint8 *back, guint8 *tags);
/** TRUE when the text is of the training data's genre: chat-style (scan->informal), with
 *  an emoji, a handle or hashtag ('@'/'#' right before a word), or in headline case (>= 70 %
 *  of >= 4 words after the first capitalised). rec-names.c must have run (it sets
 *  scan->informal). Pure function of the scan. */
gboolean hz_tagger_text_is_social (const HzScan *scan);
/** TRUE when the text reads as encyclopedic prose, the genre of the prose tagger
 *  (HZ_TAGGER_PROSE_RESOURCE): outside the social genre (hz_tagger_text_is_social()), no
 *  '@' or '#', at least 10 word tokens, starting with a capitalised word and ending with
 *  '.', '!', '?', '"' or ')', every sentence starting in upper case, no elongated word and
 *  no word that speaks to or of the reader or writer ("I", "you", "my", "we", "me", ...).
 *  rec-names.c must have run. Pure function of the scan. */
gboolean hz_tagger_text_is_encyclopedic (const HzScan *scan);
/** TRUE when the tagger runs on the scan: every text for HZ_TAGGER_SCOPE_ALL,
 *  hz_tagger_text_is_social() texts for HZ_TAGGER_SCOPE_SOCIAL. */
gboolean hz_tagger_in_scope (const HzTagger *tagger, const HzScan *scan);
/** O bias the tagger decodes the scan with: o_bias, plus prose_bias for a text outside the
 *  social genre. */
float hz_tagger_o_bias_for (const HzTagger *tagger, const HzScan *scan);
/** Tag the scan: scores (hz_tagger_o_bias_for() included), Viterbi, then add a PERSON candidate
 *  (hz_tagger_rec, tier NAME) for every B/I run and drop rule PERSON candidates as the
 *  tagger's veto says. Does nothing outside the tagger's scope. */
void hz_rec_tagger (HzScan *scan, const HzTagger *tagger);
