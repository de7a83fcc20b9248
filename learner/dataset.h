/* learner/dataset.h — training data for the learner: SFT records (a chat context and the
 * assistant reply to learn) and feedback groups (a context with several rated replies, for
 * GRPO), from the store's redacted samples or from JSONL files; held-out split;
 * chat-template-aware tokenization with the loss on assistant tokens only.
 *
 * From the store (hz_learn_dataset_add_from_store): privacy invariant 2 — the learner reads
 * only redacted text. The only store call made is hz_store_list_learner_samples()
 * (store/hanzo-store-learner.h), which returns message_redactions.redacted and never
 * messages.content; messages without an up-to-date redacted copy, and contexts with such a
 * message anywhere up the parent chain, are skipped. Conversation system prompts are not
 * read (they are not redacted). Selection:
 *   SFT targets: assistant replies rated +1, and replies the user wrote or edited
 *     (assistant messages without model_sha256) — as targets for the same context;
 *     with include_unrated also unrated model replies; never replies rated -1.
 *   Feedback groups: all rated assistant replies to one parent message (regenerations are
 *     siblings) with rewards +1/-1; a group holding both is a pairwise preference.
 *   The context of a reply is the chain of its ancestors (parent_id) in order.
 *
 * From JSONL (hz_learn_dataset_load_jsonl), one object per line, for the CLI and tests
 * (the caller vouches that the file holds no personal data):
 *   {"messages": [{"role": "system"|"user"|"assistant", "content": "..."}, ...]}
 *       one SFT record per assistant message, with the messages before it as context;
 *   {"prompt": "...", "response": "..."[, "system": "..."]}            an SFT record;
 *   {"prompt": "...", "chosen": "...", "rejected": "..."}             a preference group
 *       (rewards 1 and 0);
 *   {"prompt": "...", "completion": "...", "rating": 1|-1}            a rated reply
 *       (grouped with other ratings of the same prompt);
 *   {"prompt": "...", "answer": "..."}                                 a GRPO prompt with a
 *       reference answer (for verifiable rewards); "answer" may be omitted.
 *
 * Tokenization (hz_learn_dataset_tokenize): the context is rendered with the model's chat
 * template and the generation prompt (hz_model_render_chat: the model's own Jinja template,
 * or a built-in format for a GGUF without one), the reply as the rest of the full
 * rendering (so the template's end-of-turn tokens are trained on); for models without a
 * template (NONE), or a template whose prompt is not a prefix of the full rendering, the
 * reply is the plain text (followed by EOS without a template). Only the
 * template's markup may become control tokens (hz_model_tokenize_prompt): control text in
 * a message or a reply ("<|im_end|>" typed or pasted) is trained on as text, never as a
 * turn boundary. Prompt tokens get
 * target -100 (no loss): only assistant tokens are trained. A thinking model's reasoning
 * ("<think>…</think>", harmony's analysis channel: engine/reasoning.c, in the model's
 * format) is never trained on: a target is its reply's answer (hz_reasoning_strip()), and
 * earlier replies in a context lose theirs as in every prompt (hz_model_render_chat()).
 * Replies from the store have none (the store keeps it apart from the content, which alone
 * is redacted); an old stored reply or a JSONL reply may. Examples longer than
 * max_tokens keep their end (the reply) and lose the start of the context; replies alone
 * longer than max_tokens are cut.
 *
 * Thread safety: plain data, one thread at a time.
 */
#pragma once

#include <glib.h>
#include "hanzo/engine.h"
#include "hanzo-store.h"
#include "sft.h"
#include "grpo-trainer.h"

G_BEGIN_DECLS

/** One SFT record. */
typedef struct {
  GPtrArray *context;    /* HzChatMessage* with owned strings (system/user/assistant turns) */
  char      *target;     /* the assistant reply to learn */
  gint64     source_id;  /* store message id, or JSONL line number; drives the split */
} HzLearnRecord;

/** A context with several replies and their rewards (user feedback), or a GRPO prompt
 *  (n_replies 0) with an optional reference answer. */
typedef struct {
  GPtrArray *context;    /* HzChatMessage* */
  GPtrArray *replies;    /* char* */
  GArray    *rewards;    /* double, one per reply */
  char      *reference;  /* nullable */
  gint64     source_id;
  char      *key;        /* grouping key (parent id or prompt text) */
} HzLearnGroup;

typedef struct {
  GPtrArray *records;    /* HzLearnRecord* */
  GPtrArray *groups;     /* HzLearnGroup* */
} HzLearnDataset;

HzLearnDataset *hz_learn_dataset_new (void);
void            hz_learn_dataset_free (HzLearnDataset *d);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzLearnDataset, hz_learn_dataset_free)

/** Append the records and groups of a JSONL file (format above). Errors: G_FILE_ERROR,
 *  HZ_LEARN_ERROR_FORMAT naming the line (bad JSON, unknown shape, bad role). */
gboolean hz_learn_dataset_load_jsonl (HzLearnDataset *d, const char *path, GError **error);

typedef struct {
  gboolean include_unrated;   /* also learn unrated model replies (default FALSE) */
} HzLearnStoreOptions;

/** Append the store's redacted samples (selection above). options nullable. Errors: those
 *  of hz_store_list_learner_samples(). */
gboolean hz_learn_dataset_add_from_store (HzLearnDataset *d, HzStore *store,
                                          const HzLearnStoreOptions *options, GError **error);

/** Deterministic held-out split of the SFT records: a record is held out when a hash of
 *  (source_id, seed) falls below `fraction`; at least one record is held out (and one
 *  kept) when there are two or more. Records are shared (ref-counted arrays): both outputs
 *  are new datasets (groups go to `train`). */
void hz_learn_dataset_split (const HzLearnDataset *d, double fraction, guint32 seed,
                             HzLearnDataset **train, HzLearnDataset **heldout);

/** Tokenized SFT examples over owned buffers. */
typedef struct {
  GArray    *examples;   /* HzSftExample (pointers into bufs) */
  GPtrArray *bufs;
  int64_t    max_len;    /* longest example */
  int64_t    n_target_tokens;
} HzLearnTokenized;

void hz_learn_tokenized_free (HzLearnTokenized *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzLearnTokenized, hz_learn_tokenized_free)

/** Tokenize the SFT records for `model` (its template, hz_model_render_chat()) with
 *  examples of at most max_tokens tokens (see above). Records whose reply is empty are
 *  dropped. NULL with hz_model_render_chat()'s error, prefixed "record N: ", when the
 *  model's template does not parse or refuses a record. */
HzLearnTokenized *hz_learn_dataset_tokenize (const HzLearnDataset *d, HzModel *model,
                                             int64_t max_tokens, GError **error);

/** Prompt tokens of a context: rendered with the template and the generation prompt,
 *  tokenized with BOS, control tokens from the template's markup only
 *  (hz_model_tokenize_prompt; g_free; length in *n). Also the rendered text in *text
 *  (nullable, g_free). NULL with hz_model_render_chat()'s error when the template refuses
 *  the context. */
int32_t *hz_learn_context_tokens (HzModel *model, const GPtrArray *context, int64_t *n,
                                  char **text, GError **error);

/** The feedback groups with replies as HzGrpoGroup* (fixed rewards; tokenized like SFT
 *  replies), for hz_grpo_trainer_step(). Groups whose prompt and longest reply exceed
 *  max_tokens are dropped. NULL with the error of hz_learn_dataset_tokenize() (prefixed
 *  "feedback group N: "). */
GPtrArray *hz_learn_dataset_feedback_groups (const HzLearnDataset *d, HzModel *model,
                                             int64_t max_tokens, GError **error);

G_END_DECLS
