/* engine/tokenizer-private.h — internals shared by tokenizer*.c (not installed).
 *
 *  - HzStrTab: string -> id hash table over caller-owned bytes (vocab texts, merge parts).
 *  - HzPairTab: (left id, right id) -> (rank, result id) table for BPE merges.
 *  - HzHeap: binary min-heap of merge candidates (llama.cpp's std::priority_queue).
 *  - HzPreInfo / HzPreSplitter / hz_pretokenize(): the BPE pre-tokenizers by name
 *    (tokenizer-pretypes.c) and their splitting (tokenizer-pre.c, tokenizer-regex.c).
 *
 * Thread safety: the tables are read-only after construction and may be read from any
 * thread; a heap belongs to one encode call.
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include "tokenizer-types.h"
#include "tokenizer-regex.h"

G_BEGIN_DECLS

/* ---- HzStrTab (tokenizer-tables.c) ---- */

/** Open-addressing hash table mapping byte strings (not NUL-terminated, may contain NUL)
 *  to non-negative int32 ids. Keys are NOT copied: the bytes must outlive the table. */
typedef struct {
  guint32 id1;   /* id + 1, 0 = empty */
  guint32 tag;   /* high 32 bits of the key's hash */
} HzStrSlot;

typedef struct {
  HzStrSlot  *slots;
  guint32     mask;    /* capacity - 1 (capacity is a power of two) */
  guint32     count;
  /* key access: the table stores ids only; texts are looked up through these */
  const char *const *texts;  /* filled by the owner: texts[id] */
  const guint32     *lens;   /* lens[id] */
} HzStrTab;

/** Initialise, sized for about `max_ids` entries (the table grows as needed). texts/lens
 *  must be set before use and may be reallocated by the owner as ids are added (re-set
 *  the pointers after growth). */
void    hz_strtab_init (HzStrTab *t, guint32 max_ids);
/** Free the slots (the texts belong to the owner). */
void    hz_strtab_clear (HzStrTab *t);
/** Id of `len` bytes at `s`, or -1. */
int32_t hz_strtab_lookup (const HzStrTab *t, const char *s, gsize len);
/** Insert id (whose text is texts[id]); returns the existing id if the text is already
 *  present (and does not insert), else `id`. */
int32_t hz_strtab_insert (HzStrTab *t, int32_t id);

/* ---- HzPairTab (tokenizer-tables.c) ---- */

typedef struct {
  guint64 key;    /* ((guint64) left << 32) | right, or G_MAXUINT64 when empty */
  int32_t rank;
  int32_t result; /* string id of left + right */
} HzPairSlot;

typedef struct {
  HzPairSlot *slots;
  guint32     mask;
  guint32     count;
} HzPairTab;

/** Initialise for at most `max_entries` insertions (the table does not grow). */
void     hz_pairtab_init (HzPairTab *t, guint32 max_entries);
void     hz_pairtab_clear (HzPairTab *t);
/** Insert unless (left, right) is present (the first rank wins, as in llama.cpp). */
void     hz_pairtab_insert (HzPairTab *t, int32_t left, int32_t right, int32_t rank,
                            int32_t result);
/** Rank and result of (left, right); FALSE if absent. */
gboolean hz_pairtab_lookup (const HzPairTab *t, int32_t left, int32_t right,
                            int32_t *rank, int32_t *result);

/* ---- HzHeap (tokenizer-tables.c) ---- */

/** A merge candidate: symbols `left` and `right` (indices into the session's symbol
 *  array). `key` orders the heap (smaller first; ties: smaller `left` first). `a`, `b`
 *  are the caller's validation data (SPM: merged byte size; BPE: left/right string ids). */
typedef struct {
  double  key;
  int32_t left, right;
  int32_t a, b;
} HzBigram;

typedef struct {
  HzBigram *v;
  gsize     n, cap;
} HzHeap;

void     hz_heap_push (HzHeap *h, const HzBigram *b);
gboolean hz_heap_pop (HzHeap *h, HzBigram *out);
void     hz_heap_clear (HzHeap *h);

/* ---- BPE pre-tokenizers (tokenizer-pretypes.c: the table; tokenizer-pre.c: splitting) ---- */

/** Flags of a pre-tokenizer name (llama.cpp's llama_vocab::impl::load settings). */
typedef enum {
  HZ_PRE_IGNORE_MERGES = 1 << 0,  /* a word that is a token is emitted whole */
  HZ_PRE_ADD_BOS       = 1 << 1,  /* add BOS by default */
  HZ_PRE_KEEP_SPACES   = 1 << 2,  /* clean_spaces = false when decoding */
  HZ_PRE_NO_BOS        = 1 << 3,  /* no default BOS id */
  HZ_PRE_ADD_SEP       = 1 << 4,  /* add SEP at the end by default */
  HZ_PRE_NFC           = 1 << 5,  /* the text is NFC-normalized before splitting */
} HzPreFlags;

/** One tokenizer.ggml.pre name: its split (regexes applied in turn, each re-splitting
 *  every word into its matches and the text between them, as Hugging Face's Split with
 *  behavior Isolated), flags, or why it is refused. Static data. */
typedef struct {
  const char        *name;
  const char *const *regexes;  /* NULL-terminated, tokenizer-regex.h syntax; NULL: refused */
  guint              flags;    /* HzPreFlags */
  const char        *refused;  /* when regexes is NULL: what the vocabulary needs */
} HzPreInfo;

/** The row of `name`, or NULL when llama.cpp does not know it. */
const HzPreInfo *hz_pre_info (const char *name);
/** The whole table (`*n` rows), in the order the Hugging Face importer prefers names. */
const HzPreInfo *hz_pre_infos (gsize *n);

/** The three regexes with hand-written scanners (GPT-2's, Llama 3's, Qwen2's). */
extern const char hz_re_gpt2[];
extern const char hz_re_llama3[];
extern const char hz_re_qwen2[];

/** A compiled split: one step per regex. Immutable; shareable between threads. */
typedef struct _HzPreSplitter HzPreSplitter;

/** Compile `regexes` (NULL-terminated). With `fast`, the GPT-2, Llama 3 and Qwen2 regexes
 *  run through their scanners (same result, faster); without, everything runs through
 *  the regex matcher (for tests). NULL + error (G_REGEX_ERROR) on a bad pattern. */
HzPreSplitter *hz_pre_splitter_new (const char *const *regexes, gboolean fast, GError **error);
void           hz_pre_splitter_free (HzPreSplitter *sp);
/** TRUE if both splitters apply the same compiled programs in the same order. */
gboolean       hz_pre_splitter_equal (const HzPreSplitter *a, const HzPreSplitter *b);

/** Split `n` code points into words. Appends the word lengths (in code points, summing to
 *  n) to `lengths` (an array of gsize). `scratch` is the caller's (one per thread). */
void hz_pretokenize (const HzPreSplitter *sp, HzRegexScratch *scratch, const uint32_t *cpts,
                     gsize n, GArray *lengths);

/* ---- the tokenizer object (tokenizer.c loads it, tokenizer-encode.c encodes) ---- */

typedef enum { HZ_VOCAB_SPM, HZ_VOCAB_BPE, HZ_VOCAB_WPM } HzVocabType;

/* Internal attribute bits above the public HzTokenAttr ones (llama.cpp LSTRIP/RSTRIP:
 * strip white space next to a special token when partitioning). */
#define HZ_TOKEN_ATTR_PUBLIC_MASK 0x3Fu
#define HZ_TOKEN_ATTR_LSTRIP      (1u << 8)
#define HZ_TOKEN_ATTR_RSTRIP      (1u << 9)

struct _HzTokenizer {
  HzVocabType   type;
  const HzPreInfo *pre;      /* BPE: the tokenizer.ggml.pre row */
  HzPreSplitter *splitter;   /* BPE: its compiled split */
  int32_t       n_vocab;

  /* strings: ids 0..n_vocab-1 are the tokens; ids >= n_vocab are BPE merge parts and
   * results that are not tokens. texts[i] is NUL-terminated, lens[i] its byte length. */
  GStringChunk *chunk;
  const char  **texts;
  guint32      *lens;
  int32_t       n_strings, cap_strings;
  HzStrTab      strtab;

  float        *scores;      /* [n_vocab] */
  guint32      *attrs;       /* [n_vocab] HzTokenAttr | HZ_TOKEN_ATTR_* */

  HzPairTab     merges;      /* BPE: (left, right) string ids -> rank, result */
  int32_t       bpe_byte_sid[256];  /* BPE: string id of the 1-char symbol of each byte */
  int32_t       byte_token[256];    /* token of a raw byte (SPM <0xXX>, BPE alphabet) */

  int32_t       bos, eos, eot, eom, unk, sep, pad;
  gboolean      add_bos, add_eos, add_sep, add_space_prefix, ignore_merges, clean_spaces, nfc;
  gboolean      lowercase, strip_accents;  /* WPM: BertNormalizer options */
  guint32       max_token_len;             /* WPM: longest token text in bytes */

  int32_t      *special;     /* control/user-defined/unknown ids, longest text first */
  gsize         n_special;
  int32_t      *eog;         /* sorted end-of-generation ids */
  gsize         n_eog;

  const char  **pieces;      /* llama_token_to_piece(special = TRUE) of each token */
  guint32      *piece_lens;
};

G_END_DECLS
