/* tests/engine/test-serving.c — HzServe (hanzo/serving.h) end to end on stories260K
 * (../shared/models/stories260K.gguf; skipped when absent), greedy unless stated.
 *
 *  - batching: 16 concurrent sequences give the same tokens as 16 runs one after another;
 *  - preemption: with a pool too small for all of them, preempted sequences (interactive
 *    and background mixed) finish with the same tokens as with a large pool;
 *  - prefix cache: a second request sharing a 1,000-token system prompt computes only the
 *    tokens after the last full cached block (counted), with outputs identical to a server
 *    without the cache;
 *  - fork: n_samples = 4 with a seeded sampler equals 4 separate requests with seeds
 *    seed .. seed + 3 (copy-on-write of the shared prompt blocks);
 *  - threads: a loop thread serving requests submitted from 4 threads, with cancellations;
 *  - fcfs: the non-paged fallback gives the tokens of hz_context_generate;
 *  - logprobs: on_logprobs reports ln softmax of the logits hz_context_eval computes for the
 *    same positions, and the most likely tokens in order, on both paths.
 */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "hanzo/engine.h"
#include "hanzo/serving.h"
#include "../hz-test-util.h"
#include "serving-test-util.h"

#define N_THREADS 2

static HzModel *
load_model (void)
{
  g_autofree char *path = hz_test_shared_path ("models/stories260K.gguf");
  if (path == NULL)
    return NULL;
  g_autoptr (GError) error = NULL;
  HzModelParams mp;
  hz_model_params_init (&mp);
  mp.n_threads = N_THREADS;
  HzModel *m = hz_model_load (path, &mp, &error);
  g_assert_no_error (error);
  return m;
}

/* Deterministic pseudo-random prompt of n tokens (BOS first). */
static HzServe *
server (HzModel *m, guint n_blocks, gboolean cache, guint budget)
{
  HzServeParams sp;
  hz_serve_params_init (&sp);
  sp.n_blocks = n_blocks;
  sp.prefix_cache = cache;
  sp.max_batch_tokens = budget;
  sp.max_seq_len = 2048;
  sp.n_threads = N_THREADS;
  g_autoptr (GError) error = NULL;
  HzServe *srv = hz_serve_new (m, &sp, &error);
  g_assert_no_error (error);
  return srv;
}

#define N_SEQ 16

static void
test_batching (void)
{
  g_autoptr (HzModel) m = load_model ();
  if (!m)
    return;
  guint64 ids_seq[N_SEQ], ids_conc[N_SEQ];
  Collect seq, conc;
  collect_init (&seq);
  collect_init (&conc);
  /* one after another, alone on the server; then all at once: prompt chunks and decodes of
   * up to 16 sequences share each step */
  g_autoptr (HzServe) a = server (m, 0, FALSE, 64);
  g_autoptr (HzServe) b = server (m, 0, FALSE, 64);
  serve_alone_and_together (m, a, b, N_SEQ, 40, &seq, ids_seq, &conc, ids_conc);
  HzServeStats st;
  hz_serve_get_stats (b, &st);
  for (guint i = 0; i < N_SEQ; i++)
    {
      assert_same (got (&seq, ids_seq[i], 0), got (&conc, ids_conc[i], 0));
      g_assert_cmpuint (got (&seq, ids_seq[i], 0)->len, ==, 40);
    }
  g_test_message ("16 concurrent = 16 sequential: %" G_GUINT64_FORMAT " steps for %"
                  G_GUINT64_FORMAT " tokens (%.1f rows per step)", st.n_steps,
                  st.n_tokens_evaluated, (double) st.n_tokens_evaluated / st.n_steps);
  g_assert_cmpuint (st.n_steps, <, N_SEQ * 40);  /* sequences really shared steps */
  collect_clear (&seq);
  collect_clear (&conc);
}

static void
test_preemption (void)
{
  g_autoptr (HzModel) m = load_model ();
  if (!m)
    return;
  enum { N = 10 };
  HzToken *prompts[N];
  guint lens[N];
  guint64 ids_big[N], ids_small[N];
  Collect big, small;
  collect_init (&big);
  collect_init (&small);
  g_autoptr (HzServe) a = server (m, 0, FALSE, 48);
  /* 12 blocks of 16 tokens: 192 slots for 10 sequences of up to 100 tokens */
  g_autoptr (HzServe) b = server (m, 12, FALSE, 48);
  for (guint i = 0; i < N; i++)
    {
      lens[i] = 10 + 3 * i;
      prompts[i] = make_prompt (m, 200 + i, lens[i]);
      const HzPriority pr = i % 3 == 0 ? HZ_PRIORITY_BACKGROUND : HZ_PRIORITY_INTERACTIVE;
      ids_big[i] = submit (a, prompts[i], lens[i], 60, pr, &big);
      ids_small[i] = submit (b, prompts[i], lens[i], 60, pr, &small);
    }
  run (a);
  run (b);
  HzServeStats sa, sb;
  hz_serve_get_stats (a, &sa);
  hz_serve_get_stats (b, &sb);
  guint preempted = 0;
  for (guint i = 0; i < N; i++)
    {
      assert_same (got (&big, ids_big[i], 0), got (&small, ids_small[i], 0));
      preempted += result (&small, ids_small[i], 0)->n_preemptions > 0;
      g_free (prompts[i]);
    }
  g_test_message ("small pool: %" G_GUINT64_FORMAT " preemptions of %u sequences, %"
                  G_GUINT64_FORMAT " rows vs %" G_GUINT64_FORMAT " with a large pool",
                  sb.n_preemptions, preempted, sb.n_tokens_evaluated, sa.n_tokens_evaluated);
  g_assert_cmpuint (sa.n_preemptions, ==, 0);
  g_assert_cmpuint (sb.n_preemptions, >, 0);
  g_assert_cmpuint (preempted, >, 0);
  g_assert_cmpuint (sb.n_blocks_free, ==, 12);
  collect_clear (&big);
  collect_clear (&small);
}

static void
test_prefix_cache (void)
{
  g_autoptr (HzModel) m = load_model ();
  if (!m)
    return;
  enum { SYS = 1000, USER = 20 };
  g_autofree HzToken *sys = make_prompt (m, 300, SYS);
  g_autofree HzToken *p1 = g_new (HzToken, SYS + USER);
  g_autofree HzToken *p2 = g_new (HzToken, SYS + USER + 5);
  g_autofree HzToken *u1 = make_prompt (m, 301, USER + 1);
  g_autofree HzToken *u2 = make_prompt (m, 302, USER + 6);
  memcpy (p1, sys, SYS * sizeof (HzToken));
  memcpy (p1 + SYS, u1 + 1, USER * sizeof (HzToken));
  memcpy (p2, sys, SYS * sizeof (HzToken));
  memcpy (p2 + SYS, u2 + 1, (USER + 5) * sizeof (HzToken));
  g_assert_cmpint (p1[SYS], !=, p2[SYS]);

  Collect with, without;
  collect_init (&with);
  collect_init (&without);
  g_autoptr (HzServe) a = server (m, 0, TRUE, 256);
  g_autoptr (HzServe) b = server (m, 0, FALSE, 256);
  guint64 a1 = submit (a, p1, SYS + USER, 16, HZ_PRIORITY_INTERACTIVE, &with);
  run (a);
  guint64 a2 = submit (a, p2, SYS + USER + 5, 16, HZ_PRIORITY_INTERACTIVE, &with);
  run (a);
  guint64 b1 = submit (b, p1, SYS + USER, 16, HZ_PRIORITY_INTERACTIVE, &without);
  run (b);
  guint64 b2 = submit (b, p2, SYS + USER + 5, 16, HZ_PRIORITY_INTERACTIVE, &without);
  run (b);

  const HzServeResult *r1 = result (&with, a1, 0), *r2 = result (&with, a2, 0);
  const guint s = 16, cached = SYS / s * s;  /* whole blocks of the shared prefix */
  g_test_message ("second request: %u prompt tokens, %u from the cache, %u computed "
                  "(new tokens: %u)", r2->n_prompt, r2->n_prompt_cached, r2->n_prompt_evaluated,
                  r2->n_prompt - SYS);
  g_assert_cmpuint (r1->n_prompt_evaluated, ==, SYS + USER);
  g_assert_cmpuint (r2->n_prompt_cached, ==, cached);
  g_assert_cmpuint (r2->n_prompt_evaluated, ==, SYS + USER + 5 - cached);
  g_assert_cmpuint (r2->n_prompt_evaluated, <, (USER + 5) + s);
  g_assert_cmpuint (result (&without, b2, 0)->n_prompt_evaluated, ==, SYS + USER + 5);
  assert_same (got (&with, a1, 0), got (&without, b1, 0));
  assert_same (got (&with, a2, 0), got (&without, b2, 0));

  /* the same prompt again: everything but the last token comes from the cache */
  guint64 a3 = submit (a, p2, SYS + USER + 5, 16, HZ_PRIORITY_INTERACTIVE, &with);
  run (a);
  g_assert_cmpuint (result (&with, a3, 0)->n_prompt_evaluated, <=, s);
  assert_same (got (&with, a3, 0), got (&without, b2, 0));
  collect_clear (&with);
  collect_clear (&without);
}

static void
test_fork (void)
{
  g_autoptr (HzModel) m = load_model ();
  if (!m)
    return;
  g_autofree HzToken *p = make_prompt (m, 400, 37);
  Collect c;
  collect_init (&c);
  g_autoptr (HzServe) srv = server (m, 0, FALSE, 64);
  HzRequestParams rp;
  hz_request_params_init (&rp);
  rp.n_predict = 30;
  rp.ignore_eog = TRUE;
  rp.sampler.temperature = 0.9f;
  rp.sampler.seed = 42;
  rp.n_samples = 4;
  g_autoptr (GError) error = NULL;
  guint64 group = hz_serve_submit (srv, p, 37, &rp, NULL, on_done, &c, &error);
  g_assert_no_error (error);
  run (srv);
  HzServeStats st;
  hz_serve_get_stats (srv, &st);
  g_assert_cmpuint (st.n_prompt_evaluated, ==, 37);  /* the prompt was computed once */
  rp.n_samples = 1;
  guint distinct = 0;
  for (guint i = 0; i < 4; i++)
    {
      rp.sampler.seed = 42 + i;
      guint64 one = hz_serve_submit (srv, p, 37, &rp, NULL, on_done, &c, &error);
      run (srv);
      assert_same (got (&c, group, i), got (&c, one, 0));
      distinct += i > 0 && memcmp (got (&c, group, i)->data, got (&c, group, 0)->data,
                                   30 * sizeof (HzToken)) != 0;
    }
  g_assert_cmpuint (distinct, >, 0);
  g_assert_cmpuint (c.n_done, ==, 8);
  collect_clear (&c);
}

/* ---- threads: submitters, cancellations, a loop thread ---- */

typedef struct {
  HzServe  *srv;
  HzModel  *m;
  Collect  *c;
  guint     index;
  guint64   ids[8];
} Submitter;

static gboolean
on_token_noop (guint64 request, guint sample, HzToken token, const char *text, gpointer data)
{
  return TRUE;
}

static gpointer
submitter (gpointer data)
{
  Submitter *s = data;
  for (guint k = 0; k < 8; k++)
    {
      g_autofree HzToken *p = make_prompt (s->m, 500 + s->index * 8 + k, 9 + k);
      HzRequestParams rp;
      hz_request_params_init (&rp);
      rp.n_predict = 12;
      rp.ignore_eog = TRUE;
      rp.priority = k % 2 ? HZ_PRIORITY_BACKGROUND : HZ_PRIORITY_INTERACTIVE;
      s->ids[k] = hz_serve_submit (s->srv, p, 9 + k, &rp, on_token_noop, on_done, s->c, NULL);
      g_assert_cmpuint (s->ids[k], >, 0);
      if (k == 5)
        hz_serve_cancel (s->srv, s->ids[k]);
      g_usleep (500);
    }
  return NULL;
}

static void
test_threads (void)
{
  g_autoptr (HzModel) m = load_model ();
  if (!m)
    return;
  Collect c, ref;
  collect_init (&c);
  collect_init (&ref);
  g_autoptr (HzServe) srv = server (m, 10, TRUE, 32);
  hz_serve_start (srv);
  Submitter subs[4];
  GThread *th[4];
  for (guint i = 0; i < 4; i++)
    {
      subs[i] = (Submitter) { srv, m, &c, i, { 0 } };
      th[i] = g_thread_new ("submitter", submitter, &subs[i]);
    }
  for (guint i = 0; i < 4; i++)
    g_thread_join (th[i]);
  hz_serve_wait_idle (srv);
  HzServeStats st;
  hz_serve_get_stats (srv, &st);
  hz_serve_stop (srv);
  g_assert_cmpuint (c.n_done, ==, 32);

  g_autoptr (HzServe) solo = server (m, 0, FALSE, 32);
  for (guint i = 0; i < 4; i++)
    for (guint k = 0; k < 8; k++)
      {
        const HzServeResult *r = result (&c, subs[i].ids[k], 0);
        if (r->stop_reason == HZ_STOP_CANCELLED)
          continue;
        g_assert_cmpint (r->stop_reason, ==, HZ_STOP_LENGTH);
        g_autofree HzToken *p = make_prompt (m, 500 + i * 8 + k, 9 + k);
        guint64 id = submit (solo, p, 9 + k, 12, HZ_PRIORITY_INTERACTIVE, &ref);
        run (solo);
        assert_same (got (&c, subs[i].ids[k], 0), got (&ref, id, 0));
      }
  g_test_message ("threads: %" G_GUINT64_FORMAT " steps, %" G_GUINT64_FORMAT " preemptions",
                  st.n_steps, st.n_preemptions);
  collect_clear (&c);
  collect_clear (&ref);
}

static void
test_fcfs (void)
{
  g_autoptr (HzModel) m = load_model ();
  if (!m)
    return;
  HzServeParams sp;
  hz_serve_params_init (&sp);
  sp.fcfs = TRUE;
  sp.n_threads = N_THREADS;
  g_autoptr (GError) error = NULL;
  g_autoptr (HzServe) srv = hz_serve_new (m, &sp, &error);
  g_assert_no_error (error);
  HzContextParams cp;
  hz_context_params_init (&cp);
  cp.n_threads = N_THREADS;
  g_autoptr (HzContext) ctx = hz_context_new (m, &cp, &error);
  g_assert_no_error (error);
  Collect c;
  collect_init (&c);
  guint64 ids[3];
  g_autofree HzToken *p = make_prompt (m, 600, 30);
  for (guint i = 0; i < 3; i++)
    ids[i] = submit (srv, p, 20 + 5 * i, 20, HZ_PRIORITY_INTERACTIVE, &c);
  run (srv);
  for (guint i = 0; i < 3; i++)
    {
      HzGenerateParams gp;
      hz_generate_params_init (&gp);
      gp.n_predict = 20;
      gp.ignore_eog = TRUE;
      g_autoptr (GArray) want = g_array_new (FALSE, FALSE, sizeof (HzToken));
      g_free (hz_context_generate (ctx, p, 20 + 5 * i, &gp, NULL, NULL, NULL, want, NULL,
                                   &error));
      g_assert_no_error (error);
      assert_same (got (&c, ids[i], 0), want);
    }
  /* the second and third prompts extend the first: only their new tokens are computed */
  g_assert_cmpuint (result (&c, ids[1], 0)->n_prompt_evaluated, ==, 5);
  collect_clear (&c);
}

/* A server with the default pool on the paged path, or the fcfs fallback. */
static HzServe *
server_on (HzModel *m, gboolean fcfs)
{
  HzServeParams sp;
  hz_serve_params_init (&sp);
  sp.fcfs = fcfs;
  sp.n_threads = N_THREADS;
  g_autoptr (GError) error = NULL;
  HzServe *srv = hz_serve_new (m, &sp, &error);
  g_assert_no_error (error);
  return srv;
}

/* Stop strings: the streamed text ends just before the first occurrence, on both paths. */
typedef struct {
  GString     *text;
  HzStopReason reason;
  guint        n_done;
} StopRun;

static gboolean
stop_on_token (guint64 request, guint sample, HzToken token, const char *text, gpointer data)
{
  StopRun *r = data;
  g_assert_nonnull (text);
  g_string_append (r->text, text);
  return TRUE;
}

static void
stop_on_done (const HzServeResult *res, gpointer data)
{
  StopRun *r = data;
  r->reason = res->stop_reason;
  r->n_done++;
}

static void
check_stop_string (HzModel *m, gboolean fcfs)
{
  g_autoptr (GError) error = NULL;
  HzContextParams cp;
  hz_context_params_init (&cp);
  cp.n_threads = N_THREADS;
  g_autoptr (HzContext) ctx = hz_context_new (m, &cp, &error);
  g_assert_no_error (error);
  g_autofree HzToken *p = make_prompt (m, 700, 12);
  HzGenerateParams gp;
  hz_generate_params_init (&gp);
  gp.n_predict = 48;
  gp.ignore_eog = TRUE;
  g_autofree char *full = hz_context_generate (ctx, p, 12, &gp, NULL, NULL, NULL, NULL, NULL,
                                               &error);
  g_assert_no_error (error);
  g_assert_cmpuint (strlen (full), >, 40);
  /* a stop string from the middle of the reference text (usually across tokens) */
  g_autofree char *stop = g_strndup (full + 20, 5);
  const gsize want_len = strstr (full, stop) - full;
  char *stops[] = { g_strdup ("never generated \x01"), g_strdup (stop), NULL };

  g_autoptr (HzServe) srv = server_on (m, fcfs);
  HzRequestParams rp;
  hz_request_params_init (&rp);
  rp.n_predict = 48;
  rp.ignore_eog = TRUE;
  rp.stop_strings = (const char *const *) stops;
  StopRun r = { g_string_new (NULL), HZ_STOP_NONE, 0 };
  hz_serve_submit (srv, p, 12, &rp, stop_on_token, stop_on_done, &r, &error);
  g_assert_no_error (error);
  /* the request keeps its own copy of the stop strings */
  g_free (stops[1]);
  stops[1] = g_strdup ("\x02");
  g_assert_true (hz_serve_run (srv, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (r.n_done, ==, 1);
  g_assert_cmpint (r.reason, ==, HZ_STOP_STRING);
  g_assert_cmpuint (r.text->len, ==, want_len);
  g_assert_cmpmem (r.text->str, r.text->len, full, want_len);
  g_string_free (r.text, TRUE);
  g_free (stops[0]);
  g_free (stops[1]);
}

static void
test_stop_strings (void)
{
  g_autoptr (HzModel) m = load_model ();
  if (!m)
    return;
  check_stop_string (m, FALSE);
  check_stop_string (m, TRUE);
}

static void
test_errors (void)
{
  g_autoptr (HzModel) m = load_model ();
  if (!m)
    return;
  g_autoptr (HzServe) srv = server (m, 8, FALSE, 32);  /* 128 positions at most */
  g_autoptr (GError) error = NULL;
  HzToken bad[2] = { 1, 1 << 20 };
  g_assert_cmpuint (hz_serve_submit (srv, bad, 2, NULL, NULL, NULL, NULL, &error), ==, 0);
  g_assert_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_cmpuint (hz_serve_submit (srv, bad, 0, NULL, NULL, NULL, NULL, &error), ==, 0);
  g_clear_error (&error);
  g_autofree HzToken *longp = make_prompt (m, 1, 200);
  g_assert_cmpuint (hz_serve_submit (srv, longp, 200, NULL, NULL, NULL, NULL, &error), ==, 0);
  g_assert_error (error, HZ_SERVE_ERROR, HZ_SERVE_ERROR_TOO_LONG);
  g_clear_error (&error);
  /* a sequence that reaches the pool's capacity stops with CONTEXT_FULL */
  Collect c;
  collect_init (&c);
  guint64 id = submit (srv, longp, 100, 500, HZ_PRIORITY_INTERACTIVE, &c);
  run (srv);
  g_assert_cmpint (result (&c, id, 0)->stop_reason, ==, HZ_STOP_CONTEXT_FULL);
  g_assert_cmpuint (result (&c, id, 0)->n_generated, ==, 28);
  collect_clear (&c);
}

/* Logprobs: what on_logprobs reported, token by token. */
typedef struct {
  Collect c;        /* first: on_done's user data is the same pointer */
  GArray *chosen;   /* HzTokenLogprob */
  GArray *top;      /* HzTokenLogprob, n_top per token */
  guint   n_top;
} LogprobRun;

static void
lp_on_logprobs (guint64 request, guint sample, const HzTokenLogprob *chosen,
                const HzTokenLogprob *top, guint n_top, gpointer data)
{
  LogprobRun *r = data;
  g_assert_cmpuint (n_top, ==, r->n_top);
  g_array_append_vals (r->chosen, chosen, 1);
  g_array_append_vals (r->top, top, n_top);
}

static void
check_logprobs (HzModel *m, gboolean fcfs)
{
  enum { N_PROMPT = 10, N_GEN = 12, N_TOP = 5 };
  g_autoptr (GError) error = NULL;
  g_autofree HzToken *p = make_prompt (m, 800, N_PROMPT);
  g_autoptr (HzServe) srv = server_on (m, fcfs);
  HzRequestParams rp;
  hz_request_params_init (&rp);
  rp.n_predict = N_GEN;
  rp.ignore_eog = TRUE;
  rp.sampler.temperature = 0.8f;   /* sampled: the chosen token is not always the top one */
  rp.sampler.seed = 5;
  rp.on_logprobs = lp_on_logprobs;
  rp.n_top_logprobs = N_TOP;
  LogprobRun r = { .chosen = g_array_new (FALSE, FALSE, sizeof (HzTokenLogprob)),
                   .top = g_array_new (FALSE, FALSE, sizeof (HzTokenLogprob)), .n_top = N_TOP };
  collect_init (&r.c);
  const guint64 id = hz_serve_submit (srv, p, N_PROMPT, &rp, NULL, on_done, &r, &error);
  g_assert_no_error (error);
  run (srv);
  GArray *gen = got (&r.c, id, 0);
  g_assert_cmpuint (gen->len, ==, N_GEN);
  g_assert_cmpuint (r.chosen->len, ==, N_GEN);

  /* the reference: the logits of every position from one context evaluation */
  HzContextParams cp;
  hz_context_params_init (&cp);
  cp.n_threads = N_THREADS;
  g_autoptr (HzContext) ctx = hz_context_new (m, &cp, &error);
  g_assert_no_error (error);
  g_autoptr (GArray) all = g_array_new (FALSE, FALSE, sizeof (HzToken));
  g_array_append_vals (all, p, N_PROMPT);
  g_array_append_vals (all, gen->data, N_GEN - 1);
  g_assert_true (hz_context_eval (ctx, (const HzToken *) (void *) all->data, all->len, TRUE, NULL,
                                  &error));
  const int n_vocab = hz_model_n_vocab (m);
  guint n_not_top = 0;
  for (guint i = 0; i < N_GEN; i++)
    {
      const float *l = hz_context_logits (ctx, N_PROMPT - 1 + i);
      double mx = l[0], sum = 0;
      for (int v = 1; v < n_vocab; v++)
        mx = MAX (mx, l[v]);
      for (int v = 0; v < n_vocab; v++)
        sum += exp (l[v] - mx);
      const double log_z = mx + log (sum);
      const HzTokenLogprob *ch = &g_array_index (r.chosen, HzTokenLogprob, i);
      const HzTokenLogprob *top = &g_array_index (r.top, HzTokenLogprob, i * N_TOP);
      g_assert_cmpint (ch->token, ==, g_array_index (gen, HzToken, i));
      g_assert_cmpfloat_with_epsilon (ch->logprob, l[ch->token] - log_z, 1e-4);
      g_assert_cmpfloat (ch->logprob, <=, 0);
      n_not_top += ch->token != top[0].token;
      double mass = 0;
      for (guint k = 0; k < N_TOP; k++)
        {
          g_assert_cmpfloat_with_epsilon (top[k].logprob, l[top[k].token] - log_z, 1e-4);
          if (k > 0)
            g_assert_cmpfloat (top[k].logprob, <=, top[k - 1].logprob);
          mass += exp (top[k].logprob);
          /* nothing outside the list is more likely than its last entry */
          for (int v = 0; v < n_vocab; v++)
            {
              gboolean listed = FALSE;
              for (guint j = 0; j < N_TOP; j++)
                listed |= top[j].token == v;
              g_assert_true (listed || l[v] <= l[top[N_TOP - 1].token]);
            }
        }
      g_assert_cmpfloat (mass, <=, 1.0 + 1e-5);
      g_assert_cmpfloat (ch->logprob, <=, top[0].logprob + 1e-6);
    }
  g_test_message ("logprobs (%s): %u of %u sampled tokens were not the most likely one",
                  fcfs ? "fcfs" : "paged", n_not_top, (guint) N_GEN);
  g_array_unref (r.chosen);
  g_array_unref (r.top);
  collect_clear (&r.c);
}

static void
test_logprobs (void)
{
  g_autoptr (HzModel) m = load_model ();
  if (!m)
    return;
  check_logprobs (m, FALSE);
  check_logprobs (m, TRUE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/serving/batching", test_batching);
  g_test_add_func ("/serving/preemption", test_preemption);
  g_test_add_func ("/serving/prefix-cache", test_prefix_cache);
  g_test_add_func ("/serving/fork", test_fork);
  g_test_add_func ("/serving/threads", test_threads);
  g_test_add_func ("/serving/fcfs", test_fcfs);
  g_test_add_func ("/serving/stop-strings", test_stop_strings);
  g_test_add_func ("/serving/errors", test_errors);
  g_test_add_func ("/serving/logprobs", test_logprobs);
  return g_test_run ();
}
