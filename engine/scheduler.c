/* engine/scheduler.c — waiting/running queues, admission, chunked prefill, preemption
 * (scheduler.h). Queues are small (tens to hundreds of sequences): sorted arrays with
 * O(n) insertion. */
#include "scheduler.h"

struct _HzScheduler {
  HzKvPool         *pool;
  HzPrefixCache    *cache;
  HzSchedulerParams p;
  GPtrArray        *waiting;   /* HzSchedSeq, (priority, arrival) order */
  GPtrArray        *running;   /* same order */
  guint64           next_arrival;
  guint64           n_preemptions;
};

HzSchedSeq *
hz_sched_seq_new (guint64 id, guint priority, const HzToken *prompt, guint n)
{
  HzSchedSeq *seq = g_new0 (HzSchedSeq, 1);
  seq->id = id;
  seq->priority = priority;
  seq->tokens = g_array_sized_new (FALSE, FALSE, sizeof (HzToken), n + 16);
  g_array_append_vals (seq->tokens, prompt, n);
  seq->state = HZ_SEQ_NEW;
  return seq;
}

void
hz_sched_seq_free (HzSchedSeq *seq)
{
  if (seq == NULL)
    return;
  g_return_if_fail (seq->state == HZ_SEQ_NEW || seq->state == HZ_SEQ_FINISHED);
  hz_kv_seq_free (seq->kv);
  g_array_unref (seq->tokens);
  g_free (seq);
}

void
hz_sched_batch_init (HzSchedBatch *b)
{
  b->items = g_array_new (FALSE, FALSE, sizeof (HzSchedItem));
  b->n_tokens = b->n_admitted = b->n_preempted = 0;
}

void
hz_sched_batch_clear (HzSchedBatch *b)
{
  g_clear_pointer (&b->items, g_array_unref);
}

HzScheduler *
hz_scheduler_new (HzKvPool *pool, HzPrefixCache *cache, const HzSchedulerParams *p)
{
  HzScheduler *s = g_new0 (HzScheduler, 1);
  s->pool = pool;
  s->cache = cache;
  s->p = *p;
  s->p.max_batch_tokens = MAX (s->p.max_batch_tokens, 1);
  s->p.max_seqs = MAX (s->p.max_seqs, 1);
  s->waiting = g_ptr_array_new ();
  s->running = g_ptr_array_new ();
  return s;
}

static void
release (HzSchedSeq *seq)
{
  g_clear_pointer (&seq->kv, hz_kv_seq_free);
}

void
hz_scheduler_free (HzScheduler *s)
{
  if (s == NULL)
    return;
  for (guint i = 0; i < s->running->len; i++)
    {
      HzSchedSeq *seq = s->running->pdata[i];
      release (seq);
      seq->state = HZ_SEQ_FINISHED;
    }
  for (guint i = 0; i < s->waiting->len; i++)
    ((HzSchedSeq *) s->waiting->pdata[i])->state = HZ_SEQ_FINISHED;
  g_ptr_array_unref (s->waiting);
  g_ptr_array_unref (s->running);
  g_free (s);
}

/* (priority, arrival) order: does a come before b? */
static inline gboolean
before (const HzSchedSeq *a, const HzSchedSeq *b)
{
  return a->priority != b->priority ? a->priority < b->priority : a->arrival < b->arrival;
}

static void
insert_sorted (GPtrArray *q, HzSchedSeq *seq)
{
  guint i = q->len;
  while (i > 0 && before (seq, q->pdata[i - 1]))
    i--;
  g_ptr_array_insert (q, (gint) i, seq);
}

void
hz_scheduler_add (HzScheduler *s, HzSchedSeq *seq)
{
  g_return_if_fail (seq->state == HZ_SEQ_NEW && seq->tokens->len > 0);
  seq->arrival = s->next_arrival++;
  seq->state = HZ_SEQ_WAITING;
  seq->n_computed = 0;
  insert_sorted (s->waiting, seq);
}

/* Free the blocks of running sequence `seq` and requeue it for recomputation. */
static void
preempt (HzScheduler *s, HzSchedSeq *seq, HzSchedBatch *batch)
{
  g_ptr_array_remove (s->running, seq);
  release (seq);
  seq->n_computed = 0;
  seq->n_preemptions++;
  seq->state = HZ_SEQ_WAITING;
  insert_sorted (s->waiting, seq);
  s->n_preemptions++;
  batch->n_preempted++;
}

static void
add_item (HzSchedBatch *batch, HzSchedSeq *seq, guint n)
{
  HzSchedItem it = { seq, seq->n_computed, n, seq->n_computed + n == seq->tokens->len };
  g_array_append_val (batch->items, it);
  batch->n_tokens += n;
}

/* Try to admit the head of `waiting`: TRUE when it now runs (its blocks reserved). */
static gboolean
admit_head (HzScheduler *s)
{
  HzSchedSeq *seq = s->waiting->pdata[0];
  const guint len = seq->tokens->len;
  g_autoptr (HzKvSeq) kv = hz_kv_seq_new (s->pool);
  guint cached = 0;
  kv->cache_salt = seq->cache_salt;

  /* at least the last token is computed, for its logits */
  if (s->cache)
    cached = hz_prefix_cache_match (s->cache, kv, (const HzToken *) (void *) seq->tokens->data,
                                    len - 1);
  if (!hz_kv_seq_reserve (kv, len - kv->len))
    return FALSE;  /* kv's matched blocks go back to the cache when it is freed */
  g_ptr_array_remove_index (s->waiting, 0);
  seq->kv = g_steal_pointer (&kv);
  seq->n_computed = cached;
  seq->n_cached = cached;
  seq->state = HZ_SEQ_RUNNING;
  insert_sorted (s->running, seq);
  return TRUE;
}

gboolean
hz_scheduler_schedule (HzScheduler *s, HzSchedBatch *batch)
{
  guint budget = s->p.max_batch_tokens;

  g_array_set_size (batch->items, 0);
  batch->n_tokens = batch->n_admitted = batch->n_preempted = 0;

  /* 0. a waiting sequence of a higher class than the last running one is admitted first,
   *    displacing lower-class running sequences until it fits */
  while (s->waiting->len > 0 && s->running->len > 0)
    {
      HzSchedSeq *head = s->waiting->pdata[0];
      HzSchedSeq *last = s->running->pdata[s->running->len - 1];
      if (last->priority <= head->priority)
        break;
      if (s->running->len < s->p.max_seqs && admit_head (s))
        batch->n_admitted++;  /* its first chunk is scheduled in 1. */
      else
        preempt (s, last, batch);
    }

  /* 1. running sequences: decode tokens and prompt chunks */
  for (guint i = 0; i < s->running->len && budget > 0;)
    {
      HzSchedSeq *seq = s->running->pdata[i];
      const guint n = MIN (seq->tokens->len - seq->n_computed, budget);
      if (n == 0)
        {
          i++;
          continue;
        }
      const guint end = seq->n_computed + n;
      gboolean self_preempted = FALSE;
      while (end > seq->kv->len && !hz_kv_seq_reserve (seq->kv, end - seq->kv->len))
        {
          HzSchedSeq *victim = s->running->pdata[s->running->len - 1];
          preempt (s, victim, batch);
          if (victim == seq)
            {
              self_preempted = TRUE;
              break;
            }
        }
      if (self_preempted)
        break;  /* it was the last running sequence */
      add_item (batch, seq, n);
      budget -= n;
      i++;
    }

  /* 2. admission */
  while (s->waiting->len > 0 && budget > 0 && s->running->len < s->p.max_seqs)
    {
      HzSchedSeq *seq = s->waiting->pdata[0];
      if (!admit_head (s))
        break;
      batch->n_admitted++;
      const guint n = MIN (seq->tokens->len - seq->n_computed, budget);
      add_item (batch, seq, n);
      budget -= n;
    }
  return batch->items->len > 0;
}

void
hz_scheduler_commit (HzScheduler *s, const HzSchedBatch *batch)
{
  for (guint i = 0; i < batch->items->len; i++)
    {
      const HzSchedItem *it = &g_array_index (batch->items, HzSchedItem, i);
      HzSchedSeq *seq = it->seq;
      if (seq->state != HZ_SEQ_RUNNING || seq->n_computed != it->pos0)
        continue;  /* removed (cancelled) after scheduling */
      seq->n_computed += it->n;
      seq->n_evaluated += it->n;
      if (s->cache)
        hz_prefix_cache_commit (s->cache, seq->kv, (const HzToken *) (void *) seq->tokens->data,
                                seq->n_computed);
    }
}

void
hz_scheduler_remove (HzScheduler *s, HzSchedSeq *seq)
{
  if (seq->state == HZ_SEQ_RUNNING)
    g_ptr_array_remove (s->running, seq);
  else if (seq->state == HZ_SEQ_WAITING)
    g_ptr_array_remove (s->waiting, seq);
  release (seq);
  seq->state = HZ_SEQ_FINISHED;
}

void
hz_scheduler_fork (HzScheduler *s, HzSchedSeq *parent, HzSchedSeq *child)
{
  g_return_if_fail (parent->state == HZ_SEQ_RUNNING && child->state == HZ_SEQ_NEW);
  child->arrival = parent->arrival;
  child->kv = hz_kv_seq_fork (parent->kv);
  child->n_computed = parent->n_computed;
  child->n_cached = parent->n_cached;
  child->state = HZ_SEQ_RUNNING;
  insert_sorted (s->running, child);
}

guint hz_scheduler_n_waiting (const HzScheduler *s) { return s->waiting->len; }
guint hz_scheduler_n_running (const HzScheduler *s) { return s->running->len; }
guint64 hz_scheduler_n_preemptions (const HzScheduler *s) { return s->n_preemptions; }

HzSchedSeq *const *
hz_scheduler_running (const HzScheduler *s, guint *n)
{
  *n = s->running->len;
  return (HzSchedSeq *const *) s->running->pdata;
}

HzSchedSeq *const *
hz_scheduler_waiting (const HzScheduler *s, guint *n)
{
  *n = s->waiting->len;
  return (HzSchedSeq *const *) s->waiting->pdata;
}
