/* tests/engine/test-scheduler.c — the iteration-level scheduler (scheduler.h) under
 * randomized workloads, with a simulated model instead of a real one.
 *
 * Simulation: the "K/V" of position p is a function of the token prefix [0..p] (as a real
 * model's is), written into the sequence's block through its block table when the step
 * computes p; the "greedy next token" is a function of the whole prefix and a per-sequence
 * salt. Before every token is sampled, every slot 0..p of the sequence is read back
 * through the block table and compared — so a block lost, shared without copy-on-write,
 * or a wrong prefix-cache hit shows up as wrong K/V.
 *
 * Checked after every step (thousands of steps, random arrivals, lengths, priorities,
 * forks, with and without the prefix cache, several block sizes):
 *  - hz_kv_pool_check: each block's count equals its holders, no leaked block;
 *  - every running sequence holds exactly ceil(l / s) blocks for its l slots (its tokens,
 *    or all but the newest when the step's budget ran out before it); waiting ones none;
 *  - without the prefix cache and forks: sum over running of ceil(l_i / s) <= P, and a
 *    waiting head left out while budget and seat were left does not fit:
 *    sum + ceil(l_head / s) > P (admission follows the inequality exactly);
 *  - no sequence waits while one of a lower priority class runs;
 *  - at most max_batch_tokens tokens per step, at most one chunk per sequence, chunks
 *    start at the computed length; something runs whenever something is queued;
 *  - at the end every sequence's tokens equal the unpreempted greedy continuation.
 */
#include <glib.h>
#include <string.h>

#include "hanzo/engine.h"
#include "kv-paged.h"
#include "prefix-cache.h"
#include "scheduler.h"

/* A chained hash of every prefix: out[p] = H(t[0..p]) for p < n, in O(n). */
static void
prefix_hashes (const HzToken *t, guint n, guint64 *out)
{
  guint64 h = 7;
  for (guint p = 0; p < n; p++)
    out[p] = h = hz_prefix_cache_hash (h, &t[p], 1);
}

static float
kv_of (guint64 prefix_hash)
{
  return (float) (prefix_hash % 1000003u);
}

static HzToken
next_token (const HzToken *t, guint n, guint salt)
{
  g_autofree guint64 *h = g_new (guint64, n);
  prefix_hashes (t, n, h);
  return (HzToken) ((h[n - 1] ^ (salt * 0x9e3779b9u)) % 37u);
}

typedef struct {
  guint salt;
  guint n_prompt, n_predict;
} Req;

typedef struct {
  guint s, P, max_batch_tokens, max_seqs, steps;
  gboolean cache, forks;
  guint32 seed;
} Scenario;

static guint
ceil_div (guint a, guint b)
{
  return (a + b - 1) / b;
}

static void
run_scenario (gconstpointer data)
{
  const Scenario *sc = data;
  HzKvPoolParams pp = { .block_size = sc->s, .n_blocks = sc->P, .n_layer = 1, .kv_dim_k = 1,
                        .kv_dim_v = 1 };
  g_autoptr (GError) error = NULL;
  g_autoptr (HzKvPool) pool = hz_kv_pool_new (&pp, &error);
  g_assert_no_error (error);
  HzPrefixCache *cache = sc->cache ? hz_prefix_cache_new (pool) : NULL;
  HzSchedulerParams sp = { sc->max_batch_tokens, sc->max_seqs };
  HzScheduler *sched = hz_scheduler_new (pool, cache, &sp);
  g_autoptr (GRand) rng = g_rand_new_with_seed (sc->seed);
  g_autoptr (GPtrArray) live = g_ptr_array_new ();   /* HzSchedSeq in the scheduler */
  g_autoptr (GPtrArray) done = g_ptr_array_new ();   /* finished, checked at the end */
  HzSchedBatch batch;
  hz_sched_batch_init (&batch);
  const guint s = sc->s, max_len = sc->P * s;
  guint64 next_id = 1;
  guint n_steps_run = 0, max_running = 0, n_admit_refused = 0;
  const HzToken families[3][8] = { { 1, 2, 3, 4, 5, 6, 7, 8 }, { 9, 9, 9, 9, 1, 2, 3, 4 },
                                   { 5, 4, 3, 2, 1, 0, 1, 2 } };

  for (guint step = 0; step < sc->steps || live->len > 0; step++)
    {
      /* arrivals (none in the drain phase) */
      const guint n_new = step < sc->steps && g_rand_int_range (rng, 0, 4) == 0
                            ? g_rand_int_range (rng, 1, 4) : 0;
      for (guint k = 0; k < n_new; k++)
        {
          const guint n_prompt = g_rand_int_range (rng, 1, MAX (2, max_len / 2));
          const guint n_predict = g_rand_int_range (rng, 1, MAX (2, MIN (40, max_len - n_prompt)));
          g_autofree HzToken *prompt = g_new (HzToken, n_prompt);
          const guint fam = g_rand_int_range (rng, 0, 3);
          for (guint i = 0; i < n_prompt; i++)
            prompt[i] = i < 3 * s ? families[fam][i % 8] + (HzToken) (i / 8)
                                  : (HzToken) g_rand_int_range (rng, 0, 37);
          HzSchedSeq *seq = hz_sched_seq_new (next_id++, g_rand_int_range (rng, 0, 2), prompt,
                                              n_prompt);
          Req *r = g_new0 (Req, 1);
          r->salt = g_rand_int (rng);
          r->n_prompt = n_prompt;
          r->n_predict = n_predict;
          seq->user_data = r;
          hz_scheduler_add (sched, seq);
          g_ptr_array_add (live, seq);
        }

      const gboolean any = hz_scheduler_schedule (sched, &batch);
      guint n_run, n_wait;
      HzSchedSeq *const *run = hz_scheduler_running (sched, &n_run);
      HzSchedSeq *const *wait = hz_scheduler_waiting (sched, &n_wait);
      g_assert_true (any || (n_run == 0 && n_wait == 0));
      n_steps_run += any;
      max_running = MAX (max_running, n_run);

      /* ---- invariants of the plan ---- */
      g_assert_cmpuint (batch.n_tokens, <=, sc->max_batch_tokens);
      guint sum_blocks = 0;
      g_autoptr (GPtrArray) kvs = g_ptr_array_new ();
      for (guint i = 0; i < n_run; i++)
        {
          const HzSchedSeq *q = run[i];
          g_assert_cmpint (q->state, ==, HZ_SEQ_RUNNING);
          g_assert_nonnull (q->kv);
          /* all slots, or all but the newest token's when the budget ran out before it */
          g_assert_cmpuint (q->kv->len, <=, q->tokens->len);
          g_assert_cmpuint (q->kv->len + 1, >=, q->tokens->len);
          g_assert_cmpuint (hz_kv_seq_n_blocks (q->kv), ==, ceil_div (q->kv->len, s));
          sum_blocks += hz_kv_seq_n_blocks (q->kv);
          g_ptr_array_add (kvs, q->kv);
        }
      for (guint i = 0; i < n_wait; i++)
        {
          g_assert_null (wait[i]->kv);
          g_assert_cmpint (wait[i]->state, ==, HZ_SEQ_WAITING);
          g_assert_cmpuint (wait[i]->n_computed, ==, 0);
        }
      if (!hz_kv_pool_check (pool, (HzKvSeq *const *) kvs->pdata, kvs->len, NULL, &error))
        g_error ("step %u: %s", step, error->message);
      if (!sc->cache && !sc->forks)
        {
          g_assert_cmpuint (sum_blocks, <=, sc->P);
          g_assert_cmpuint (sum_blocks + hz_kv_pool_n_available (pool), ==, sc->P);
          if (n_wait > 0 && batch.n_tokens < sc->max_batch_tokens && n_run < sc->max_seqs)
            {
              g_assert_cmpuint (sum_blocks + ceil_div (wait[0]->tokens->len, s), >, sc->P);
              n_admit_refused++;
            }
        }
      if (n_wait > 0)
        for (guint i = 0; i < n_run; i++)
          g_assert_cmpuint (run[i]->priority, <=, wait[0]->priority);
      for (guint i = 0; i < batch.items->len; i++)
        {
          const HzSchedItem *it = &g_array_index (batch.items, HzSchedItem, i);
          g_assert_cmpint (it->seq->state, ==, HZ_SEQ_RUNNING);
          g_assert_cmpuint (it->pos0, ==, it->seq->n_computed);
          g_assert_cmpuint (it->n, >=, 1);
          g_assert_cmpuint (it->pos0 + it->n, <=, it->seq->tokens->len);
          g_assert_true (it->logits == (it->pos0 + it->n == it->seq->tokens->len));
          for (guint j = 0; j < i; j++)
            g_assert_true (g_array_index (batch.items, HzSchedItem, j).seq != it->seq);
        }

      /* ---- "forward": write K/V of the computed positions through the block table ---- */
      for (guint i = 0; i < batch.items->len; i++)
        {
          const HzSchedItem *it = &g_array_index (batch.items, HzSchedItem, i);
          const HzToken *toks = (const HzToken *) (void *) it->seq->tokens->data;
          g_autofree guint64 *h = g_new (guint64, it->pos0 + it->n);
          prefix_hashes (toks, it->pos0 + it->n, h);
          for (guint p = it->pos0; p < it->pos0 + it->n; p++)
            {
              const gint32 b = hz_kv_seq_table (it->seq->kv)[p / s];
              hz_kv_block_k (pool, 0, b)[p % s] = kv_of (h[p]);
              hz_kv_block_v (pool, 0, b)[p % s] = -kv_of (h[p]);
            }
        }
      hz_scheduler_commit (sched, &batch);

      /* ---- "sample": read every slot back, append the greedy token, finish, fork ---- */
      for (guint i = 0; i < batch.items->len; i++)
        {
          const HzSchedItem *it = &g_array_index (batch.items, HzSchedItem, i);
          HzSchedSeq *q = it->seq;
          Req *r = q->user_data;
          if (!it->logits)
            continue;
          const HzToken *toks = (const HzToken *) (void *) q->tokens->data;
          g_autofree guint64 *h = g_new (guint64, q->tokens->len);
          prefix_hashes (toks, q->tokens->len, h);
          for (guint p = 0; p < q->tokens->len; p++)
            {
              const gint32 b = hz_kv_seq_table (q->kv)[p / s];
              g_assert_cmpfloat (hz_kv_block_k (pool, 0, b)[p % s], ==, kv_of (h[p]));
              g_assert_cmpfloat (hz_kv_block_v (pool, 0, b)[p % s], ==, -kv_of (h[p]));
            }
          const gboolean first = q->tokens->len == r->n_prompt;
          if (sc->forks && first && g_rand_int_range (rng, 0, 4) == 0)
            {
              HzSchedSeq *c = hz_sched_seq_new (next_id++, q->priority, toks, q->tokens->len);
              Req *cr = g_memdup2 (r, sizeof *r);
              cr->salt = r->salt + 1;
              c->user_data = cr;
              hz_scheduler_fork (sched, q, c);
              g_ptr_array_add (live, c);
              HzToken t = next_token (toks, c->tokens->len, cr->salt);
              g_array_append_val (c->tokens, t);
              if (cr->n_predict == 1)
                {
                  hz_scheduler_remove (sched, c);
                  g_ptr_array_remove (live, c);
                  g_ptr_array_add (done, c);
                }
            }
          HzToken t = next_token (toks, q->tokens->len, r->salt);
          g_array_append_val (q->tokens, t);
          if (q->tokens->len - r->n_prompt >= r->n_predict)
            {
              hz_scheduler_remove (sched, q);
              g_ptr_array_remove (live, q);
              g_ptr_array_add (done, q);
            }
        }
      g_assert_cmpuint (step, <, sc->steps + 100000);  /* the drain terminates */
    }

  /* ---- every sequence equals its unpreempted greedy continuation ---- */
  guint n_preempted_seqs = 0, n_cached = 0;
  for (guint i = 0; i < done->len; i++)
    {
      HzSchedSeq *q = done->pdata[i];
      Req *r = q->user_data;
      g_autoptr (GArray) want = g_array_new (FALSE, FALSE, sizeof (HzToken));
      g_array_append_vals (want, q->tokens->data, r->n_prompt);
      while (want->len < r->n_prompt + r->n_predict)
        {
          HzToken t = next_token ((HzToken *) (void *) want->data, want->len, r->salt);
          g_array_append_val (want, t);
        }
      /* a forked child's first token came from its own salt, like all the others */
      g_assert_cmpuint (q->tokens->len, ==, want->len);
      g_assert_cmpmem (q->tokens->data, q->tokens->len * sizeof (HzToken), want->data,
                       want->len * sizeof (HzToken));
      n_preempted_seqs += q->n_preemptions > 0;
      n_cached += q->n_cached;
      g_free (r);
      hz_sched_seq_free (q);
    }
  g_test_message ("s=%u P=%u budget=%u max_seqs=%u%s%s: %u steps, %u sequences, %" G_GUINT64_FORMAT
                  " preemptions (%u sequences), %u refused admissions checked, max %u running,"
                  " %u prompt tokens from the prefix cache", s, sc->P, sc->max_batch_tokens,
                  sc->max_seqs, sc->cache ? " +cache" : "", sc->forks ? " +forks" : "",
                  n_steps_run, done->len, hz_scheduler_n_preemptions (sched), n_preempted_seqs,
                  n_admit_refused, max_running, n_cached);
  g_assert_cmpuint (hz_scheduler_n_preemptions (sched), >, 0);
  if (!sc->cache && !sc->forks)
    g_assert_cmpuint (n_admit_refused, >, 0);
  if (sc->cache)
    g_assert_cmpuint (n_cached, >, 0);
  hz_sched_batch_clear (&batch);
  hz_scheduler_free (sched);
  hz_prefix_cache_free (cache);
  g_assert_cmpuint (hz_kv_pool_n_available (pool), ==, sc->P);
}

/* Priority: a background sequence running alone is preempted for an interactive one that
 * does not fit next to it, and finishes afterwards with the same tokens. */
static void
test_priority (void)
{
  HzKvPoolParams pp = { .block_size = 4, .n_blocks = 4 };
  g_autoptr (HzKvPool) pool = hz_kv_pool_new (&pp, NULL);
  HzSchedulerParams sp = { 64, 8 };
  HzScheduler *sched = hz_scheduler_new (pool, NULL, &sp);
  HzSchedBatch batch;
  hz_sched_batch_init (&batch);
  const HzToken p[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
  HzSchedSeq *bg = hz_sched_seq_new (1, 1, p, 10);
  HzSchedSeq *ia = hz_sched_seq_new (2, 0, p, 8);
  hz_scheduler_add (sched, bg);
  g_assert_true (hz_scheduler_schedule (sched, &batch));
  g_assert_cmpuint (batch.n_admitted, ==, 1);
  hz_scheduler_commit (sched, &batch);
  HzToken t = 13;
  g_array_append_val (bg->tokens, t);
  hz_scheduler_add (sched, ia);               /* needs 2 blocks; 3 are held by bg */
  g_assert_true (hz_scheduler_schedule (sched, &batch));
  g_assert_cmpuint (batch.n_preempted, ==, 1);
  g_assert_cmpint (bg->state, ==, HZ_SEQ_WAITING);
  g_assert_cmpint (ia->state, ==, HZ_SEQ_RUNNING);
  g_assert_cmpuint (batch.items->len, ==, 1); /* bg (11 tokens, 3 blocks) cannot join */
  hz_scheduler_commit (sched, &batch);
  hz_scheduler_remove (sched, ia);
  g_assert_true (hz_scheduler_schedule (sched, &batch));
  const HzSchedItem *it = &g_array_index (batch.items, HzSchedItem, 0);
  g_assert_true (it->seq == bg);
  g_assert_cmpuint (it->n, ==, 11);           /* recomputed: prompt + generated token */
  g_assert_true (it->logits);
  g_assert_cmpuint (bg->n_preemptions, ==, 1);
  hz_scheduler_remove (sched, bg);
  hz_sched_batch_clear (&batch);
  hz_scheduler_free (sched);
  hz_sched_seq_free (bg);
  hz_sched_seq_free (ia);
}

/* Chunked prefill: a long prompt is split into budget-sized chunks that share each step
 * with the decode tokens of running sequences. */
static void
test_chunked_prefill (void)
{
  HzKvPoolParams pp = { .block_size = 16, .n_blocks = 64 };
  g_autoptr (HzKvPool) pool = hz_kv_pool_new (&pp, NULL);
  HzSchedulerParams sp = { 32, 8 };
  HzScheduler *sched = hz_scheduler_new (pool, NULL, &sp);
  HzSchedBatch batch;
  hz_sched_batch_init (&batch);
  HzToken p[100];
  for (int i = 0; i < 100; i++)
    p[i] = i;
  HzSchedSeq *a = hz_sched_seq_new (1, 0, p, 5), *b = hz_sched_seq_new (2, 0, p, 100);
  hz_scheduler_add (sched, a);
  g_assert_true (hz_scheduler_schedule (sched, &batch));
  hz_scheduler_commit (sched, &batch);
  HzToken t = 7;
  g_array_append_val (a->tokens, t);
  hz_scheduler_add (sched, b);
  guint chunks = 0;
  while (b->n_computed < 100)
    {
      g_assert_true (hz_scheduler_schedule (sched, &batch));
      g_assert_cmpuint (batch.items->len, ==, 2);
      const HzSchedItem *i0 = &g_array_index (batch.items, HzSchedItem, 0);
      const HzSchedItem *i1 = &g_array_index (batch.items, HzSchedItem, 1);
      g_assert_true (i0->seq == a && i0->n == 1 && i0->logits);   /* decode first */
      g_assert_true (i1->seq == b && i1->n == MIN (31u, 100 - b->n_computed));
      g_assert_cmpuint (batch.n_tokens, <=, 32);
      hz_scheduler_commit (sched, &batch);
      g_array_append_val (a->tokens, t);
      chunks++;
    }
  g_assert_cmpuint (chunks, ==, 4);  /* 31 + 31 + 31 + 7 */
  hz_scheduler_remove (sched, a);
  hz_scheduler_remove (sched, b);
  hz_sched_batch_clear (&batch);
  hz_scheduler_free (sched);
  hz_sched_seq_free (a);
  hz_sched_seq_free (b);
}

static const Scenario scenarios[] = {
  /* s, P, budget, max_seqs, steps, cache, forks, seed */
  { 16, 24, 64, 16, 3000, FALSE, FALSE, 11 },
  { 4, 40, 32, 8, 3000, FALSE, FALSE, 12 },
  { 1, 48, 16, 32, 2000, FALSE, FALSE, 13 },
  { 16, 24, 48, 16, 3000, TRUE, FALSE, 14 },
  { 4, 40, 24, 12, 3000, TRUE, TRUE, 15 },
  { 2, 30, 512, 64, 2000, FALSE, TRUE, 16 },
};

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/scheduler/priority", test_priority);
  g_test_add_func ("/scheduler/chunked-prefill", test_chunked_prefill);
  for (guint i = 0; i < G_N_ELEMENTS (scenarios); i++)
    {
      g_autofree char *name = g_strdup_printf ("/scheduler/random/%u", i);
      g_test_add_data_func (name, &scenarios[i], run_scenario);
    }
  return g_test_run ();
}
