/* tests/engine/serving-test-util.h — helpers shared by the serving tests (header-only):
 * random prompts, a collector of HzServe results (thread-safe on_done), submit and run.
 * Used by tests/engine/test-serving.c (CPU) and tests/gpu/test-paged.c (GPU). */
#pragma once

#include <glib.h>
#include <string.h>
#include "hanzo/engine.h"
#include "hanzo/serving.h"

static inline HzToken *
make_prompt (const HzModel *m, guint32 seed, guint n)
{
  g_autoptr (GRand) rng = g_rand_new_with_seed (seed);
  HzToken *p = g_new (HzToken, n);
  p[0] = hz_model_bos (m) >= 0 ? hz_model_bos (m) : 1;   /* models without BOS: 1 */
  for (guint i = 1; i < n; i++)
    p[i] = g_rand_int_range (rng, 3, hz_model_n_vocab (m));
  return p;
}

/* Collects the results of one server run. */
typedef struct {
  GHashTable *tokens;   /* "request/sample" -> GArray of HzToken */
  GHashTable *results;  /* same key -> HzServeResult copy (tokens NULL) */
  GMutex      lock;
  guint       n_done;
} Collect;

static inline void
collect_init (Collect *c)
{
  c->tokens = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                     (GDestroyNotify) g_array_unref);
  c->results = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_mutex_init (&c->lock);
  c->n_done = 0;
}

static inline void
collect_clear (Collect *c)
{
  g_hash_table_unref (c->tokens);
  g_hash_table_unref (c->results);
  g_mutex_clear (&c->lock);
}

static inline void
on_done (const HzServeResult *r, gpointer user_data)
{
  Collect *c = user_data;
  char *key = g_strdup_printf ("%" G_GUINT64_FORMAT "/%u", r->request, r->sample);
  GArray *t = g_array_new (FALSE, FALSE, sizeof (HzToken));
  g_array_append_vals (t, r->tokens, r->n_generated);
  HzServeResult *copy = g_memdup2 (r, sizeof *r);
  copy->tokens = NULL;
  g_mutex_lock (&c->lock);
  g_hash_table_insert (c->tokens, g_strdup (key), t);
  g_hash_table_insert (c->results, key, copy);
  c->n_done++;
  g_mutex_unlock (&c->lock);
}

static inline GArray *
got (Collect *c, guint64 id, guint sample)
{
  g_autofree char *key = g_strdup_printf ("%" G_GUINT64_FORMAT "/%u", id, sample);
  GArray *t = g_hash_table_lookup (c->tokens, key);
  g_assert_nonnull (t);
  return t;
}

static inline const HzServeResult *
result (Collect *c, guint64 id, guint sample)
{
  g_autofree char *key = g_strdup_printf ("%" G_GUINT64_FORMAT "/%u", id, sample);
  const HzServeResult *r = g_hash_table_lookup (c->results, key);
  g_assert_nonnull (r);
  return r;
}

static inline void
assert_same (GArray *a, GArray *b)
{
  g_assert_cmpuint (a->len, ==, b->len);
  g_assert_cmpmem (a->data, a->len * sizeof (HzToken), b->data, b->len * sizeof (HzToken));
}

static inline guint64
submit (HzServe *srv, const HzToken *p, guint n, int n_predict, HzPriority prio, Collect *c)
{
  HzRequestParams rp;
  hz_request_params_init (&rp);
  rp.n_predict = n_predict;
  rp.ignore_eog = TRUE;
  rp.priority = prio;
  g_autoptr (GError) error = NULL;
  guint64 id = hz_serve_submit (srv, p, n, &rp, NULL, on_done, c, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (id, >, 0);
  return id;
}

static inline void
run (HzServe *srv)
{
  g_autoptr (GError) error = NULL;
  g_assert_true (hz_serve_run (srv, &error));
  g_assert_no_error (error);
}

/* The 16-concurrent-vs-16-sequential check's two runs: n prompts of 5 + 7 i random tokens
 * (seed 100 + i), each asking n_predict tokens at interactive priority, served one after
 * another on `alone` (each run to its end before the next is submitted), then all at once on
 * `together`. Results go to `seq` / `conc` (initialised by the caller), request ids to
 * ids_seq[n] / ids_conc[n]. */
static inline void
serve_alone_and_together (const HzModel *m, HzServe *alone, HzServe *together, guint n,
                          int n_predict, Collect *seq, guint64 *ids_seq, Collect *conc,
                          guint64 *ids_conc)
{
  HzToken **prompts = g_new (HzToken *, n);
  guint *lens = g_new (guint, n);
  for (guint i = 0; i < n; i++)
    {
      lens[i] = 5 + 7 * i;
      prompts[i] = make_prompt (m, 100 + i, lens[i]);
    }
  for (guint i = 0; i < n; i++)
    {
      ids_seq[i] = submit (alone, prompts[i], lens[i], n_predict, HZ_PRIORITY_INTERACTIVE, seq);
      run (alone);
    }
  for (guint i = 0; i < n; i++)
    ids_conc[i] = submit (together, prompts[i], lens[i], n_predict, HZ_PRIORITY_INTERACTIVE, conc);
  run (together);
  for (guint i = 0; i < n; i++)
    g_free (prompts[i]);
  g_free (prompts);
  g_free (lens);
}
