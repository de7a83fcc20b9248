/* tests/engine/test-model.c — the llama-family forward pass, contexts and generation.
 *
 * Core tests (no shared data): the thread pool; tiny random-weight llama / qwen2 / qwen3
 * models written with the GGUF writer, whose logits are compared with an independent
 * float64 reference forward written here; generation (n_predict, prefix reuse, stop
 * strings, cancellation, full context); bad input (missing file, unknown architecture,
 * missing or mis-shaped tensor, prompt longer than the context, bad token id).
 *
 * Shared tests (../shared, skipped when absent): stories260K greedy ids and logits against
 * llama.cpp (golden/stories260K), and every stories-distill quantization whose format the
 * quant table has against golden/stories-distill/<TYPE>.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>

#include "hanzo/engine.h"
#include "gguf.h"
#include "quant.h"
#include "ggml-order.h"
#include "threadpool.h"
#include "../hz-test-util.h"

/* ================================================================ thread pool */

typedef struct {
  HzThreadPool *pool;
  gint64       *partial;   /* [nth] */
  gint64        result;
  int           n;
} SumJob;

static void
sum_worker (guint ith, guint nth, gpointer data)
{
  SumJob *job = data;
  gint64 s = 0;
  for (int i = job->n * ith / nth; i < (int) (job->n * (ith + 1) / nth); i++)
    s += i;
  job->partial[ith] = s;
  hz_threadpool_barrier (job->pool);
  if (ith == 0)
    {
      job->result = 0;
      for (guint t = 0; t < nth; t++)
        job->result += job->partial[t];
    }
  hz_threadpool_barrier (job->pool);
}

static void
test_threadpool (void)
{
  g_autoptr (HzThreadPool) pool = hz_threadpool_new (4);
  gint64 partial[4];
  g_assert_cmpuint (hz_threadpool_n_threads (pool), ==, 4);
  for (int it = 0; it < 2000; it++)
    {
      SumJob job = { pool, partial, -1, 1000 + it };
      guint nth = 1 + it % 4;
      hz_threadpool_run (pool, nth, sum_worker, &job);
      g_assert_cmpint (job.result, ==, (gint64) job.n * (job.n - 1) / 2);
      if (it % 500 == 0)
        g_usleep (2000);  /* let the workers fall asleep and be woken again */
    }
}

/* ============================================================ synthetic models */

typedef struct {
  const char *arch;        /* "llama", "qwen2", "qwen3" */
  uint32_t    wtype;       /* matrix format: HZ_TYPE_F32 or HZ_TYPE_Q8_0 */
  gboolean    tied;        /* no output.weight */
  int         n_rot;       /* rope.dimension_count */
  const char *omit;        /* tensor to leave out, or NULL */
  const char *misshape;    /* tensor written with a wrong shape, or NULL */
} SynthSpec;

enum { S_EMBD = 32, S_HEAD = 4, S_HEAD_KV = 2, S_HDIM = 8, S_FF = 64, S_LAYER = 2, S_CTX = 64 };

/* Tiny SentencePiece vocabulary: <unk> <s> </s>, 256 byte tokens, and "▁x" / "x" for the
 * 26 lower-case letters. */
static int
synth_vocab (HzGgufWriter *w)
{
  GPtrArray *toks = g_ptr_array_new_with_free_func (g_free);
  GArray *scores = g_array_new (FALSE, FALSE, sizeof (float));
  GArray *types = g_array_new (FALSE, FALSE, sizeof (int32_t));
  const char *specials[] = { "<unk>", "<s>", "</s>" };
  const int32_t special_types[] = { 2, 3, 3 };
  for (int i = 0; i < 3; i++)
    {
      float sc = 0;
      g_ptr_array_add (toks, g_strdup (specials[i]));
      g_array_append_val (scores, sc);
      g_array_append_val (types, special_types[i]);
    }
  for (int b = 0; b < 256; b++)
    {
      float sc = 0;
      int32_t ty = 6;
      g_ptr_array_add (toks, g_strdup_printf ("<0x%02X>", b));
      g_array_append_val (scores, sc);
      g_array_append_val (types, ty);
    }
  for (int c = 0; c < 26; c++)
    for (int sp = 0; sp < 2; sp++)
      {
        float sc = -(float) (c * 2 + sp);
        int32_t ty = 1;
        g_ptr_array_add (toks, g_strdup_printf ("%s%c", sp ? "" : "\xe2\x96\x81", 'a' + c));
        g_array_append_val (scores, sc);
        g_array_append_val (types, ty);
      }
  int n = toks->len;
  hz_gguf_writer_set_str (w, "tokenizer.ggml.model", "llama");
  hz_gguf_writer_set_str_arr (w, "tokenizer.ggml.tokens", (const char *const *) toks->pdata, n);
  hz_gguf_writer_set_arr (w, "tokenizer.ggml.scores", HZ_GGUF_TYPE_FLOAT32, scores->data, n);
  hz_gguf_writer_set_arr (w, "tokenizer.ggml.token_type", HZ_GGUF_TYPE_INT32, types->data, n);
  hz_gguf_writer_set_u32 (w, "tokenizer.ggml.bos_token_id", 1);
  hz_gguf_writer_set_u32 (w, "tokenizer.ggml.eos_token_id", 2);
  hz_gguf_writer_set_u32 (w, "tokenizer.ggml.unknown_token_id", 0);
  g_ptr_array_unref (toks);
  g_array_unref (scores);
  g_array_unref (types);
  return n;
}

static void
synth_tensor (HzGgufWriter *w, const SynthSpec *spec, GRand *rng, const char *name,
              int64_t n_in, int64_t n_out, gboolean is_matrix, float center, float spread)
{
  if (spec->omit && strcmp (spec->omit, name) == 0)
    return;
  if (spec->misshape && strcmp (spec->misshape, name) == 0)
    n_out += 1;
  const int64_t n = n_in * n_out;
  g_autofree float *v = g_new (float, n);
  for (int64_t i = 0; i < n; i++)
    v[i] = center + spread * (float) g_rand_double_range (rng, -1.0, 1.0);
  uint32_t type = is_matrix ? spec->wtype : HZ_TYPE_F32;
  const HzQuantTraits *qt = hz_quant_traits (type);
  size_t bytes = hz_quant_row_size (type, n_in) * n_out;
  g_autofree void *data = g_malloc (bytes);
  qt->from_float (v, data, n);
  const int64_t ne[2] = { n_in, n_out };
  g_autoptr (GError) error = NULL;
  g_assert_true (hz_gguf_writer_add_tensor (w, name, type, n_out > 1 ? 2 : 1, ne, data, bytes,
                                            TRUE, &error));
  g_assert_no_error (error);
}

/* Write a random model following `spec` into a temporary file; returns its path. */
static char *
synth_write (const SynthSpec *spec, guint32 seed)
{
  g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
  g_autoptr (GRand) rng = g_rand_new_with_seed (seed);
  char key[128];
  const char *a = spec->arch;

  hz_gguf_writer_set_str (w, "general.architecture", a);
  hz_gguf_writer_set_str (w, "general.name", "synthetic test model");
#define KEY(s) (g_snprintf (key, sizeof key, "%s.%s", a, s), key)
  hz_gguf_writer_set_u32 (w, KEY ("context_length"), S_CTX);
  hz_gguf_writer_set_u32 (w, KEY ("embedding_length"), S_EMBD);
  hz_gguf_writer_set_u32 (w, KEY ("block_count"), S_LAYER);
  hz_gguf_writer_set_u32 (w, KEY ("feed_forward_length"), S_FF);
  hz_gguf_writer_set_u32 (w, KEY ("attention.head_count"), S_HEAD);
  hz_gguf_writer_set_u32 (w, KEY ("attention.head_count_kv"), S_HEAD_KV);
  hz_gguf_writer_set_u32 (w, KEY ("rope.dimension_count"), spec->n_rot);
  hz_gguf_writer_set_f32 (w, KEY ("rope.freq_base"), 10000.0f);
  hz_gguf_writer_set_f32 (w, KEY ("attention.layer_norm_rms_epsilon"), 1e-5f);
#undef KEY
  int n_vocab = synth_vocab (w);

  const int dq = S_HEAD * S_HDIM, dk = S_HEAD_KV * S_HDIM;
  synth_tensor (w, spec, rng, "token_embd.weight", S_EMBD, n_vocab, TRUE, 0, 1.0f);
  synth_tensor (w, spec, rng, "output_norm.weight", S_EMBD, 1, FALSE, 1, 0.2f);
  if (!spec->tied)
    synth_tensor (w, spec, rng, "output.weight", S_EMBD, n_vocab, TRUE, 0, 0.3f);
  for (int il = 0; il < S_LAYER; il++)
    {
      char n[64];
#define T(suffix, n_in, n_out, mat, c, s) \
      (g_snprintf (n, sizeof n, "blk.%d.%s", il, suffix), \
       synth_tensor (w, spec, rng, n, n_in, n_out, mat, c, s))
      T ("attn_norm.weight", S_EMBD, 1, FALSE, 1, 0.2f);
      T ("attn_q.weight", S_EMBD, dq, TRUE, 0, 0.3f);
      T ("attn_k.weight", S_EMBD, dk, TRUE, 0, 0.3f);
      T ("attn_v.weight", S_EMBD, dk, TRUE, 0, 0.3f);
      T ("attn_output.weight", dq, S_EMBD, TRUE, 0, 0.3f);
      if (strcmp (a, "qwen2") == 0)
        {
          T ("attn_q.bias", dq, 1, FALSE, 0, 0.5f);
          T ("attn_k.bias", dk, 1, FALSE, 0, 0.5f);
          T ("attn_v.bias", dk, 1, FALSE, 0, 0.5f);
        }
      if (strcmp (a, "qwen3") == 0)
        {
          T ("attn_q_norm.weight", S_HDIM, 1, FALSE, 1, 0.3f);
          T ("attn_k_norm.weight", S_HDIM, 1, FALSE, 1, 0.3f);
        }
      T ("ffn_norm.weight", S_EMBD, 1, FALSE, 1, 0.2f);
      T ("ffn_gate.weight", S_EMBD, S_FF, TRUE, 0, 0.3f);
      T ("ffn_up.weight", S_EMBD, S_FF, TRUE, 0, 0.3f);
      T ("ffn_down.weight", S_FF, S_EMBD, TRUE, 0, 0.3f);
#undef T
    }

  g_autofree char *tmpl = g_strdup_printf ("hz-test-model-%s-XXXXXX.gguf", a);
  g_autoptr (GError) error = NULL;
  g_autofree char *path = NULL;
  int fd = g_file_open_tmp (tmpl, &path, &error);
  g_assert_no_error (error);
  close (fd);
  g_assert_true (hz_gguf_writer_write_file (w, path, &error));
  g_assert_no_error (error);
  return g_steal_pointer (&path);
}

/* synth_write()'s model loaded; its path in *path (g_free; g_unlink when done). */
static HzModel *
synth_load (const SynthSpec *spec, guint32 seed, char **path)
{
  *path = synth_write (spec, seed);
  g_autoptr (GError) error = NULL;
  HzModel *model = hz_model_load (*path, NULL, &error);
  g_assert_no_error (error);
  return model;
}

/* ---- independent float64 reference forward over the dequantized weights ---- */

typedef struct {
  HzGguf *g;
  gboolean neox, qkv_bias, qk_norm;
  int n_rot, n_vocab;
} Ref;

static double *
ref_tensor (const Ref *r, const char *name)
{
  const HzGgufTensor *t = hz_gguf_find_tensor (r->g, name);
  if (t == NULL)
    return NULL;
  int64_t n = t->ne[0] * t->ne[1];
  g_autofree float *f = g_new (float, n);
  hz_quant_traits (t->type)->to_float (t->data, f, n);
  double *d = g_new (double, n);
  for (int64_t i = 0; i < n; i++)
    d[i] = f[i];
  return d;
}

static void
ref_matvec (const double *w, const double *x, double *y, int n_in, int n_out)
{
  for (int o = 0; o < n_out; o++)
    {
      double s = 0;
      for (int i = 0; i < n_in; i++)
        s += w[(int64_t) o * n_in + i] * x[i];
      y[o] = s;
    }
}

static void
ref_rmsnorm (double *x, const double *w, int n)
{
  double ss = 0;
  for (int i = 0; i < n; i++)
    ss += x[i] * x[i];
  double sc = 1.0 / sqrt (ss / n + 1e-5);
  for (int i = 0; i < n; i++)
    x[i] = x[i] * sc * w[i];
}

static void
ref_rope (const Ref *r, double *v, int pos)
{
  for (int i = 0; i < r->n_rot / 2; i++)
    {
      double th = pos * pow (10000.0, -2.0 * i / r->n_rot);
      int a = r->neox ? i : 2 * i, b = r->neox ? i + r->n_rot / 2 : 2 * i + 1;
      double x0 = v[a], x1 = v[b];
      v[a] = x0 * cos (th) - x1 * sin (th);
      v[b] = x0 * sin (th) + x1 * cos (th);
    }
}

/* logits [n][n_vocab] of the token sequence, position by position */
static double *
ref_forward (const Ref *r, const HzToken *toks, int n)
{
  const int d = S_EMBD, dq = S_HEAD * S_HDIM, dk = S_HEAD_KV * S_HDIM;
  g_autofree double *emb = ref_tensor (r, "token_embd.weight");
  g_autofree double *outw = ref_tensor (r, "output.weight");
  g_autofree double *outn = ref_tensor (r, "output_norm.weight");
  double *kc = g_new0 (double, (gsize) S_LAYER * n * dk), *vc = g_new0 (double, (gsize) S_LAYER * n * dk);
  double *logits = g_new0 (double, (gsize) n * r->n_vocab);
  double x[S_EMBD], h[S_EMBD], q[S_HEAD * S_HDIM], k[S_HEAD_KV * S_HDIM], v[S_HEAD_KV * S_HDIM];
  double att[S_HEAD * S_HDIM], o[S_EMBD], g[S_FF], u[S_FF];
  double *sc = g_new (double, n);

  for (int p = 0; p < n; p++)
    {
      memcpy (x, emb + (gsize) toks[p] * d, sizeof x);
      for (int il = 0; il < S_LAYER; il++)
        {
          char nm[64];
#define W(s) (g_snprintf (nm, sizeof nm, "blk.%d.%s", il, s), ref_tensor (r, nm))
          g_autofree double *an = W ("attn_norm.weight"), *wq = W ("attn_q.weight"),
                            *wk = W ("attn_k.weight"), *wv = W ("attn_v.weight"),
                            *wo = W ("attn_output.weight"), *fnrm = W ("ffn_norm.weight"),
                            *wg = W ("ffn_gate.weight"), *wu = W ("ffn_up.weight"),
                            *wd = W ("ffn_down.weight"), *bq = W ("attn_q.bias"),
                            *bk = W ("attn_k.bias"), *bv = W ("attn_v.bias"),
                            *qn = W ("attn_q_norm.weight"), *kn = W ("attn_k_norm.weight");
#undef W
          memcpy (h, x, sizeof h);
          ref_rmsnorm (h, an, d);
          ref_matvec (wq, h, q, d, dq);
          ref_matvec (wk, h, k, d, dk);
          ref_matvec (wv, h, v, d, dk);
          for (int i = 0; bq && i < dq; i++)
            q[i] += bq[i];
          for (int i = 0; bk && i < dk; i++)
            k[i] += bk[i], v[i] += bv[i];
          for (int hh = 0; hh < S_HEAD; hh++)
            {
              if (qn)
                ref_rmsnorm (q + hh * S_HDIM, qn, S_HDIM);
              ref_rope (r, q + hh * S_HDIM, p);
            }
          for (int hh = 0; hh < S_HEAD_KV; hh++)
            {
              if (kn)
                ref_rmsnorm (k + hh * S_HDIM, kn, S_HDIM);
              ref_rope (r, k + hh * S_HDIM, p);
            }
          memcpy (kc + ((gsize) il * n + p) * dk, k, sizeof k);
          memcpy (vc + ((gsize) il * n + p) * dk, v, sizeof v);
          for (int hh = 0; hh < S_HEAD; hh++)
            {
              int kvh = hh / (S_HEAD / S_HEAD_KV);
              double mx = -INFINITY, sum = 0;
              for (int j = 0; j <= p; j++)
                {
                  double s = 0;
                  for (int e = 0; e < S_HDIM; e++)
                    s += q[hh * S_HDIM + e] * kc[((gsize) il * n + j) * dk + kvh * S_HDIM + e];
                  sc[j] = s / sqrt ((double) S_HDIM);
                  mx = MAX (mx, sc[j]);
                }
              for (int j = 0; j <= p; j++)
                sum += (sc[j] = exp (sc[j] - mx));
              for (int e = 0; e < S_HDIM; e++)
                {
                  double acc = 0;
                  for (int j = 0; j <= p; j++)
                    acc += sc[j] / sum * vc[((gsize) il * n + j) * dk + kvh * S_HDIM + e];
                  att[hh * S_HDIM + e] = acc;
                }
            }
          ref_matvec (wo, att, o, dq, d);
          for (int i = 0; i < d; i++)
            x[i] += o[i];
          memcpy (h, x, sizeof h);
          ref_rmsnorm (h, fnrm, d);
          ref_matvec (wg, h, g, d, S_FF);
          ref_matvec (wu, h, u, d, S_FF);
          for (int i = 0; i < S_FF; i++)
            g[i] = g[i] / (1 + exp (-g[i])) * u[i];
          ref_matvec (wd, g, o, S_FF, d);
          for (int i = 0; i < d; i++)
            x[i] += o[i];
        }
      memcpy (h, x, sizeof h);
      ref_rmsnorm (h, outn, d);
      ref_matvec (outw ? outw : emb, h, logits + (gsize) p * r->n_vocab, d, r->n_vocab);
    }
  g_free (kc);
  g_free (vc);
  g_free (sc);
  return logits;
}

static const SynthSpec synth_specs[] = {
  { "llama", HZ_TYPE_F32, FALSE, S_HDIM, NULL, NULL },
  { "llama", HZ_TYPE_F32, TRUE, S_HDIM, NULL, NULL },    /* tied output embedding */
  { "qwen2", HZ_TYPE_F32, FALSE, S_HDIM / 2, NULL, NULL }, /* partial NeoX rotation, biases */
  { "qwen3", HZ_TYPE_F32, TRUE, S_HDIM, NULL, NULL },    /* q/k norms */
  { "llama", HZ_TYPE_Q8_0, FALSE, S_HDIM, NULL, NULL },  /* quantized matrices */
};

/* Compare the engine (one batch with all logits, then the same tokens one at a time, with
 * 1 and 2 threads) against the float64 reference. */
static void
test_synthetic_forward (gconstpointer data)
{
  const SynthSpec *spec = data;
  g_autofree char *path = NULL;
  g_autoptr (HzModel) model = synth_load (spec, 1234, &path);
  g_autoptr (GError) error = NULL;
  g_assert_cmpstr (hz_model_arch (model), ==, spec->arch);

  Ref r = { .n_rot = spec->n_rot, .neox = strcmp (spec->arch, "llama") != 0 };
  r.g = hz_gguf_open (path, &error);
  g_assert_no_error (error);
  r.n_vocab = hz_model_n_vocab (model);
  const int n = 12;
  HzToken toks[12];
  for (int i = 0; i < n; i++)
    toks[i] = (i * 37 + 1) % r.n_vocab;
  g_autofree double *ref = ref_forward (&r, toks, n);
  double max_ref = 0;
  for (gsize i = 0; i < (gsize) n * r.n_vocab; i++)
    max_ref = MAX (max_ref, fabs (ref[i]));
  /* F32 weights: float rounding only. Q8_0: the activations are quantized to 8 bits too. */
  const double tol = spec->wtype == HZ_TYPE_F32 ? 1e-4 * MAX (1.0, max_ref) : 0.03 * max_ref;

  for (guint threads = 1; threads <= 2; threads++)
    {
      HzContextParams cp;
      hz_context_params_init (&cp);
      cp.n_ctx = 32;
      cp.n_batch = 5;          /* the 12 tokens take three batches */
      cp.n_threads = threads;
      g_autoptr (HzContext) ctx = hz_context_new (model, &cp, &error);
      g_assert_no_error (error);
      g_assert_true (hz_context_eval (ctx, toks, n, TRUE, NULL, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (hz_context_n_past (ctx), ==, n);
      double max_diff = 0;
      g_autofree float *batched = g_new (float, (gsize) n * r.n_vocab);
      for (int p = 0; p < n; p++)
        {
          const float *row = hz_context_logits (ctx, p);
          g_assert_nonnull (row);
          memcpy (batched + (gsize) p * r.n_vocab, row, r.n_vocab * sizeof (float));
          for (int v = 0; v < r.n_vocab; v++)
            max_diff = MAX (max_diff, fabs (row[v] - ref[(gsize) p * r.n_vocab + v]));
        }
      g_test_message ("%s %s%s: max |logit - float64 reference| = %.3g (max |logit| %.3g)",
                      spec->arch, hz_quant_traits (spec->wtype)->name, spec->tied ? " tied" : "",
                      max_diff, max_ref);
      g_assert_cmpfloat (max_diff, <=, tol);

      /* token by token gives the same rows (each row is computed independently) */
      hz_context_truncate (ctx, 0);
      for (int p = 0; p < n; p++)
        {
          g_assert_true (hz_context_eval (ctx, &toks[p], 1, FALSE, NULL, &error));
          const float *row = hz_context_logits (ctx, -1);
          for (int v = 0; v < r.n_vocab; v++)
            g_assert_cmpfloat (fabsf (row[v] - batched[(gsize) p * r.n_vocab + v]), <=, 1e-5f);
        }
    }
  hz_gguf_free (r.g);
  g_unlink (path);
}

/* ================================================================ generation */

static HzToken
argmax (const float *v, int n)
{
  int best = 0;
  for (int i = 1; i < n; i++)
    if (v[i] > v[best])
      best = i;
  return best;
}

typedef struct {
  GString      *text;
  guint         calls;
  guint         stop_after;     /* return FALSE at this call (0: never) */
  GCancellable *cancel_after_3;
} CbState;

static gboolean
collect_cb (HzToken token, const char *text, gpointer user_data)
{
  CbState *cb = user_data;
  g_string_append (cb->text, text);
  cb->calls++;
  if (cb->cancel_after_3 && cb->calls == 3)
    g_cancellable_cancel (cb->cancel_after_3);
  return cb->stop_after == 0 || cb->calls < cb->stop_after;
}

static void
test_generate (void)
{
  static const SynthSpec spec = { "llama", HZ_TYPE_F32, FALSE, S_HDIM, NULL, NULL };
  g_autofree char *path = synth_write (&spec, 99);
  g_autoptr (GError) error = NULL;
  g_autoptr (HzModel) model = hz_model_load (path, NULL, &error);
  g_assert_no_error (error);
  const int n_vocab = hz_model_n_vocab (model);
  HzContextParams cp;
  hz_context_params_init (&cp);
  cp.n_ctx = 48;
  g_autoptr (HzContext) ctx = hz_context_new (model, &cp, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hz_context_n_ctx (ctx), ==, 48);

  const HzToken prompt[] = { 1, 300, 301, 302, 303, 304 };
  const gsize np = G_N_ELEMENTS (prompt);
  HzGenerateParams gp;
  hz_generate_params_init (&gp);
  g_assert_cmpfloat (gp.sampler.temperature, <=, 0);
  gp.n_predict = 20;
  gp.ignore_eog = TRUE;

  /* greedy generation equals a hand-written argmax loop */
  g_autoptr (GArray) ids = g_array_new (FALSE, FALSE, sizeof (HzToken));
  HzGenerateStats st;
  CbState cb = { g_string_new (NULL) };
  g_autofree char *text = hz_context_generate (ctx, prompt, np, &gp, collect_cb, &cb, NULL, ids,
                                               &st, &error);
  g_assert_no_error (error);
  g_assert_nonnull (text);
  g_assert_cmpuint (st.n_prompt, ==, np);
  g_assert_cmpuint (st.n_prompt_evaluated, ==, np);
  g_assert_cmpuint (st.n_generated, ==, 20);
  g_assert_cmpuint (ids->len, ==, 20);
  g_assert_cmpint (st.stop_reason, ==, HZ_STOP_LENGTH);
  g_assert_cmpstr (cb.text->str, ==, text);
  g_assert_cmpuint (cb.calls, ==, 20);
  g_assert_cmpfloat (st.ttft_seconds, >, 0);

  g_autoptr (HzContext) ref = hz_context_new (model, &cp, &error);
  g_assert_true (hz_context_eval (ref, prompt, np, FALSE, NULL, &error));
  for (guint i = 0; i < 20; i++)
    {
      HzToken t = argmax (hz_context_logits (ref, -1), n_vocab);
      g_assert_cmpint (t, ==, g_array_index (ids, HzToken, i));
      g_assert_true (hz_context_eval (ref, &t, 1, FALSE, NULL, &error));
    }
  g_autofree char *detok = hz_model_detokenize (model, (HzToken *) (void *) ids->data, ids->len, FALSE);
  g_assert_true (g_utf8_validate (text, -1, NULL));

  /* the same prompt again: only its last two tokens are recomputed; same output */
  g_autoptr (GArray) ids2 = g_array_new (FALSE, FALSE, sizeof (HzToken));
  g_autofree char *text2 = hz_context_generate (ctx, prompt, np, &gp, NULL, NULL, NULL, ids2,
                                                &st, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (st.n_prompt_evaluated, ==, 2);
  g_assert_cmpstr (text2, ==, text);
  g_assert_cmpmem (ids2->data, ids2->len * sizeof (HzToken), ids->data, ids->len * sizeof (HzToken));

  /* stop string: a piece from the middle of the text ends the output just before it */
  glong n_chars = g_utf8_strlen (text, -1);
  if (n_chars >= 6)
    {
      const char *start = g_utf8_offset_to_pointer (text, n_chars / 2);
      const char *end = g_utf8_offset_to_pointer (text, n_chars / 2 + 2);
      g_autofree char *stop = g_strndup (start, end - start);
      const char *first = strstr (text, stop);
      const char *stops[] = { "never-occurs-\x01", stop, NULL };
      gp.stop_strings = stops;
      CbState cb2 = { g_string_new (NULL) };
      g_autofree char *text3 = hz_context_generate (ctx, prompt, np, &gp, collect_cb, &cb2,
                                                    NULL, NULL, &st, &error);
      g_assert_no_error (error);
      g_assert_cmpint (st.stop_reason, ==, HZ_STOP_STRING);
      g_assert_cmpuint (strlen (text3), ==, (gsize) (first - text));
      g_assert_cmpint (strncmp (text3, text, first - text), ==, 0);
      g_assert_cmpstr (cb2.text->str, ==, text3);   /* the stop string never streamed */
      g_string_free (cb2.text, TRUE);
      gp.stop_strings = NULL;
    }
  else
    g_test_message ("generated text too short for the stop-string check: '%s'", text);

  /* callback stop and cancellation, within one token */
  CbState cb3 = { g_string_new (NULL), 0, 2 };
  g_free (hz_context_generate (ctx, prompt, np, &gp, collect_cb, &cb3, NULL, NULL, &st, &error));
  g_assert_cmpint (st.stop_reason, ==, HZ_STOP_CALLBACK);
  g_assert_cmpuint (st.n_generated, ==, 2);
  g_autoptr (GCancellable) cancel = g_cancellable_new ();
  CbState cb4 = { g_string_new (NULL), 0, 0, cancel };
  g_autofree char *partial = hz_context_generate (ctx, prompt, np, &gp, collect_cb, &cb4, cancel,
                                                  NULL, &st, &error);
  g_assert_no_error (error);
  g_assert_nonnull (partial);
  g_assert_cmpint (st.stop_reason, ==, HZ_STOP_CANCELLED);
  g_assert_cmpuint (st.n_generated, ==, 3);
  g_string_free (cb3.text, TRUE);
  g_string_free (cb4.text, TRUE);

  /* unlimited generation stops when the context is full */
  gp.n_predict = -1;
  hz_context_truncate (ctx, 0);
  g_free (hz_context_generate (ctx, prompt, np, &gp, NULL, NULL, NULL, NULL, &st, &error));
  g_assert_no_error (error);
  g_assert_cmpint (st.stop_reason, ==, HZ_STOP_CONTEXT_FULL);
  g_assert_cmpuint (hz_context_n_past (ctx), ==, 48);
  g_assert_cmpuint (st.n_generated, ==, 48 - np + 1);

  g_string_free (cb.text, TRUE);
  g_unlink (path);
}

/* ============================================== prefix reuse = fresh context */

/* The logits of the prompt's last token (n_predict 0: nothing is sampled) into `out`. */
static void
prompt_logits (HzContext *ctx, const HzToken *prompt, gsize n, float *out, guint *n_evaluated)
{
  g_autoptr (GError) error = NULL;
  HzGenerateParams gp;
  hz_generate_params_init (&gp);
  gp.n_predict = 0;
  HzGenerateStats st;
  g_autofree char *text = hz_context_generate (ctx, prompt, n, &gp, NULL, NULL, NULL, NULL, &st,
                                               &error);
  g_assert_no_error (error);
  g_assert_cmpstr (text, ==, "");
  const float *l = hz_context_logits (ctx, -1);
  g_assert_nonnull (l);
  memcpy (out, l, hz_model_n_vocab (hz_context_model (ctx)) * sizeof (float));
  if (n_evaluated)
    *n_evaluated = st.n_prompt_evaluated;
}

/* A seeded sample (temperature 0.9, llama.cpp's default top-k/top-p/min-p) of n tokens. */
static GArray *
seeded_ids (HzContext *ctx, const HzToken *prompt, gsize n_prompt, guint64 seed, int n)
{
  g_autoptr (GError) error = NULL;
  HzGenerateParams gp;
  hz_generate_params_init (&gp);
  gp.sampler.temperature = 0.9f;
  gp.sampler.seed = seed;
  gp.n_predict = n;
  gp.ignore_eog = TRUE;
  GArray *ids = g_array_new (FALSE, FALSE, sizeof (HzToken));
  g_free (hz_context_generate (ctx, prompt, n_prompt, &gp, NULL, NULL, NULL, ids, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (ids->len, ==, (guint) n);
  return ids;
}

/* A prompt found in the KV cache, whole or in part, gives bit for bit the logits and the
 * seeded tokens of a fresh context: hz_context_generate() never ends a prompt with a
 * forward pass of one token (whose decode kernels sum in another order), also when the
 * prompt is cut into n_batch passes. Checked on random-weight models and, when ../shared
 * has them, stories260K and stories-distill Q4_K_M. (mcp/'s `chat` relies on it: same
 * seed and arguments, same reply.) */
static void
check_cache_hit (HzModel *model, const char *label)
{
  g_autoptr (GError) error = NULL;
  const int n_vocab = hz_model_n_vocab (model);
  HzContextParams cp;
  hz_context_params_init (&cp);
  cp.n_ctx = 64;
  enum { NP = 13, NGEN = 40, NSEED = 8 };
  HzToken prompt[NP], other[NP + 4];
  for (int i = 0; i < NP; i++)
    prompt[i] = i == 0 ? 1 : 3 + (i * 37) % (n_vocab - 3);
  memcpy (other, prompt, 6 * sizeof (HzToken));       /* the same first 6 tokens */
  for (int i = 6; i < NP + 4; i++)
    other[i] = 3 + (i * 11) % (n_vocab - 3);

  g_autofree float *want = g_new (float, n_vocab), *got = g_new (float, n_vocab);
  GArray *fresh_ids[NSEED];
  for (guint s = 0; s < NSEED; s++)
    {
      g_autoptr (HzContext) fresh = hz_context_new (model, &cp, &error);
      g_assert_no_error (error);
      fresh_ids[s] = seeded_ids (fresh, prompt, NP, 1000 + s, NGEN);
    }
  {
    g_autoptr (HzContext) fresh = hz_context_new (model, &cp, &error);
    guint n_eval = 0;
    prompt_logits (fresh, prompt, NP, want, &n_eval);
    g_assert_cmpuint (n_eval, ==, NP);
  }

  /* whole prompt cached (after a reply: the cache holds prompt + reply), then partly
   * (after another prompt that shares 6 tokens), each seed twice */
  g_autoptr (HzContext) ctx = hz_context_new (model, &cp, &error);
  g_assert_no_error (error);
  guint n_eval = 0;
  for (guint s = 0; s < NSEED; s++)
    for (int round = 0; round < 2; round++)
      {
        if (round == 1)
          g_array_free (seeded_ids (ctx, other, G_N_ELEMENTS (other), 7, 5), TRUE);
        prompt_logits (ctx, prompt, NP, got, &n_eval);
        g_assert_cmpuint (n_eval, ==, round == 0 && s > 0 ? 2 : round == 0 ? NP : NP - 6);
        g_assert_cmpmem (got, n_vocab * sizeof (float), want, n_vocab * sizeof (float));
        g_autoptr (GArray) ids = seeded_ids (ctx, prompt, NP, 1000 + s, NGEN);
        g_assert_cmpmem (ids->data, NGEN * sizeof (HzToken), fresh_ids[s]->data,
                         NGEN * sizeof (HzToken));
      }

  /* passes of n_batch = 4: 13 = 4 + 4 + 3 + 2 (not 4 + 4 + 4 + 1), and whole again */
  cp.n_batch = 4;
  g_autoptr (HzContext) small = hz_context_new (model, &cp, &error);
  g_assert_no_error (error);
  prompt_logits (small, prompt, NP, got, &n_eval);
  g_assert_cmpmem (got, n_vocab * sizeof (float), want, n_vocab * sizeof (float));
  g_autoptr (GArray) ids = seeded_ids (small, prompt, NP, 1000, NGEN);
  g_assert_cmpmem (ids->data, NGEN * sizeof (HzToken), fresh_ids[0]->data, NGEN * sizeof (HzToken));
  prompt_logits (small, prompt, NP, got, &n_eval);
  g_assert_cmpuint (n_eval, ==, 2);
  g_assert_cmpmem (got, n_vocab * sizeof (float), want, n_vocab * sizeof (float));

  for (guint s = 0; s < NSEED; s++)
    g_array_free (fresh_ids[s], TRUE);
  g_test_message ("%s: %d seeds x %d tokens and the prompt's logits identical with the prompt "
                  "cached whole, in part and in passes of 4", label, NSEED, NGEN);
}

static void
test_cache_hit (gconstpointer data)
{
  const SynthSpec *spec = data;
  g_autofree char *path = NULL;
  g_autoptr (HzModel) model = synth_load (spec, 4321, &path);
  check_cache_hit (model, hz_quant_traits (spec->wtype)->name);
  g_unlink (path);
}

static void
test_cache_hit_shared (void)
{
  static const char *const files[] = { "models/stories260K.gguf",
                                       "models/stories-distill/stories-distill-Q4_K_M.gguf" };
  for (gsize i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *path = hz_test_shared_path (files[i]);
      if (!path)
        continue;
      g_autoptr (GError) error = NULL;
      g_autoptr (HzModel) model = hz_model_load (path, NULL, &error);
      g_assert_no_error (error);
      check_cache_hit (model, files[i]);
    }
}

/* ================================================================= bad input */

static void
assert_load_fails (const char *path, GQuark domain, int code, const char *needle)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (HzModel) m = hz_model_load (path, NULL, &error);
  g_assert_null (m);
  g_assert_error (error, domain, code);
  g_test_message ("%s -> %s", path, error->message);
  if (needle)
    g_assert_nonnull (strstr (error->message, needle));
}

static void
test_bad_input (void)
{
  g_autoptr (GError) error = NULL;

  /* missing file */
  {
    g_autoptr (HzModel) m = hz_model_load ("/nonexistent/dir/model.gguf", NULL, &error);
    g_assert_null (m);
    g_assert_nonnull (error);
    g_assert_true (error->domain == HZ_GGUF_ERROR);
    g_test_message ("missing file -> %s", error->message);
    g_clear_error (&error);
  }

  /* unknown architecture */
  {
    g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
    hz_gguf_writer_set_str (w, "general.architecture", "mamba-xl");
    synth_vocab (w);
    g_autofree char *path = g_build_filename (g_get_tmp_dir (), "hz-test-arch-XXXXXX", NULL);
    int fd = g_mkstemp (path);
    close (fd);
    g_assert_true (hz_gguf_writer_write_file (w, path, &error));
    assert_load_fails (path, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_UNSUPPORTED_ARCH, "mamba-xl");
    g_unlink (path);
  }

  /* missing and mis-shaped tensors are named */
  {
    SynthSpec s = { "llama", HZ_TYPE_F32, FALSE, S_HDIM, "blk.1.ffn_up.weight", NULL };
    g_autofree char *path = synth_write (&s, 5);
    assert_load_fails (path, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_BAD_MODEL, "blk.1.ffn_up.weight");
    g_unlink (path);
    SynthSpec s2 = { "qwen2", HZ_TYPE_F32, FALSE, S_HDIM, "blk.0.attn_k.bias", NULL };
    g_autofree char *path2 = synth_write (&s2, 5);
    assert_load_fails (path2, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_BAD_MODEL, "blk.0.attn_k.bias");
    g_unlink (path2);
    SynthSpec s3 = { "llama", HZ_TYPE_F32, FALSE, S_HDIM, NULL, "blk.0.attn_k.weight" };
    g_autofree char *path3 = synth_write (&s3, 5);
    assert_load_fails (path3, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_BAD_MODEL, "blk.0.attn_k.weight");
    g_unlink (path3);
  }

  /* prompt longer than the context; token id out of range */
  {
    SynthSpec s = { "llama", HZ_TYPE_F32, FALSE, S_HDIM, NULL, NULL };
    g_autofree char *path = synth_write (&s, 6);
    g_autoptr (HzModel) m = hz_model_load (path, NULL, &error);
    g_assert_no_error (error);
    HzContextParams cp;
    hz_context_params_init (&cp);
    cp.n_ctx = 8;
    g_autoptr (HzContext) ctx = hz_context_new (m, &cp, &error);
    g_assert_no_error (error);
    HzToken prompt[12] = { 1 };
    for (int i = 1; i < 12; i++)
      prompt[i] = 290 + i;
    HzGenerateParams gp;
    hz_generate_params_init (&gp);
    gp.n_predict = 4;
    char *text = hz_context_generate (ctx, prompt, 12, &gp, NULL, NULL, NULL, NULL, NULL, &error);
    g_assert_null (text);
    g_assert_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_CONTEXT_FULL);
    g_test_message ("long prompt -> %s", error->message);
    g_clear_error (&error);
    g_assert_false (hz_context_eval (ctx, prompt, 12, FALSE, NULL, &error));
    g_assert_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_CONTEXT_FULL);
    g_clear_error (&error);
    HzToken bad = 1 << 20;
    g_assert_false (hz_context_eval (ctx, &bad, 1, FALSE, NULL, &error));
    g_assert_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT);
    g_clear_error (&error);
    g_assert_cmpuint (hz_context_n_past (ctx), ==, 0);
    /* the context still works afterwards */
    g_assert_true (hz_context_eval (ctx, prompt, 8, FALSE, NULL, &error));
    g_assert_no_error (error);
    g_unlink (path);
  }
}

/* =========================================================== golden (shared) */

static JsonNode *
load_json (const char *path)
{
  g_autoptr (JsonParser) p = json_parser_new ();
  g_autoptr (GError) error = NULL;
  json_parser_load_from_file (p, path, &error);
  g_assert_no_error (error);
  return json_node_copy (json_parser_get_root (p));
}

static GArray *
json_ids (JsonObject *o, const char *member)
{
  JsonArray *a = json_object_get_array_member (o, member);
  GArray *ids = g_array_new (FALSE, FALSE, sizeof (HzToken));
  for (guint i = 0; i < json_array_get_length (a); i++)
    {
      HzToken t = (HzToken) json_array_get_int_element (a, i);
      g_array_append_val (ids, t);
    }
  return ids;
}

/* Run every prompt of a greedy_kv_f32.json file through hz_context_generate (greedy,
 * ignore EOG, n_ctx 512) and compare all token ids. One context for all prompts, so the
 * prefix reuse is exercised too. */
static void
check_greedy_golden (HzModel *model, const char *json_path, const char *label)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonNode) root = load_json (json_path);
  JsonObject *o = json_node_get_object (root);
  JsonArray *runs = json_object_get_array_member (o, "runs");
  const int n_gen = (int) json_object_get_int_member (o, "n_generate");
  HzContextParams cp;
  hz_context_params_init (&cp);
  cp.n_ctx = 512;
  g_autoptr (HzContext) ctx = hz_context_new (model, &cp, &error);
  g_assert_no_error (error);

  guint n_bad = 0;
  for (guint r = 0; r < json_array_get_length (runs); r++)
    {
      JsonObject *run = json_array_get_object_element (runs, r);
      const char *prompt_text = json_object_get_string_member (run, "prompt");
      g_autoptr (GArray) prompt = json_ids (run, "prompt_tokens");
      g_autoptr (GArray) want = json_ids (run, "tokens");
      HzGenerateParams gp;
      hz_generate_params_init (&gp);
      gp.n_predict = n_gen;
      gp.ignore_eog = TRUE;
      g_autoptr (GArray) got = g_array_new (FALSE, FALSE, sizeof (HzToken));
      HzGenerateStats st;
      g_autofree char *text = hz_context_generate (ctx, (HzToken *) (void *) prompt->data,
                                                   prompt->len, &gp, NULL, NULL, NULL, got,
                                                   &st, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (got->len, ==, want->len);
      guint first_diff = got->len;
      for (guint i = 0; i < got->len && first_diff == got->len; i++)
        if (g_array_index (got, HzToken, i) != g_array_index (want, HzToken, i))
          first_diff = i;
      if (first_diff != got->len)
        {
          /* keep going: the other prompts (and formats) are reported too */
          g_test_fail_printf ("%s prompt '%s': first difference at step %u: got %d, "
                              "llama.cpp %d", label, prompt_text, first_diff,
                              g_array_index (got, HzToken, first_diff),
                              g_array_index (want, HzToken, first_diff));
          n_bad++;
          continue;
        }
      /* the text is the detokenized ids when the reference text is valid UTF-8 */
      if (!json_object_get_null_member (run, "text"))
        g_assert_cmpstr (text, ==, json_object_get_string_member (run, "text"));
    }
  g_test_message ("%s: %u of %u prompts x %d greedy tokens identical to llama.cpp", label,
                  json_array_get_length (runs) - n_bad, json_array_get_length (runs), n_gen);
}

static void
test_stories260k_greedy (void)
{
  g_autofree char *model_path = hz_test_shared_path ("models/stories260K.gguf");
  if (!model_path)
    return;
  g_autofree char *json = hz_test_shared_path ("golden/stories260K/greedy_kv_f32.json");
  if (!json)
    return;
  g_autoptr (GError) error = NULL;
  g_autoptr (HzModel) model = hz_model_load (model_path, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (hz_model_arch (model), ==, "llama");
  g_assert_cmpint (hz_model_n_vocab (model), ==, 512);
  g_assert_cmpint (hz_model_n_layer (model), ==, 5);
  g_assert_cmpint (hz_model_n_embd (model), ==, 64);
  check_greedy_golden (model, json, "stories260K");
}

/* The golden prompts tokenize to llama.cpp's ids (add_special, no parse_special). */
static void
test_stories260k_prompts (void)
{
  g_autofree char *model_path = hz_test_shared_path ("models/stories260K.gguf");
  if (!model_path)
    return;
  g_autofree char *json = hz_test_shared_path ("golden/stories260K/greedy_kv_f32.json");
  g_autoptr (GError) error = NULL;
  g_autoptr (HzModel) model = hz_model_load (model_path, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (JsonNode) root = load_json (json);
  JsonArray *runs = json_object_get_array_member (json_node_get_object (root), "runs");
  for (guint r = 0; r < json_array_get_length (runs); r++)
    {
      JsonObject *run = json_array_get_object_element (runs, r);
      g_autoptr (GArray) want = json_ids (run, "prompt_tokens");
      gsize n = 0;
      g_autofree HzToken *got = hz_model_tokenize (model, json_object_get_string_member (run, "prompt"),
                                                   -1, TRUE, FALSE, &n);
      g_assert_cmpmem (got, n * sizeof (HzToken), want->data, want->len * sizeof (HzToken));
    }
}

/* Evaluate the sequence of a logits_kv_f32.bin file as llama.cpp did (prompt in one batch
 * with every row's logits, then one token at a time) and return the max |difference|. */
static double
logits_golden_diff (HzModel *model, const char *bin)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *data = NULL;
  gsize len = 0;
  g_assert_true (g_file_get_contents (bin, &data, &len, &error));
  g_assert_cmpmem (data, 8, "LLOGIT01", 8);
  guint32 hdr[6];
  memcpy (hdr, data + 8, sizeof hdr);
  const guint32 n_vocab = hdr[0], n_pos = hdr[1], n_prompt = hdr[2];
  g_assert_cmpuint (hdr[4], ==, 0);   /* f32 KV */
  g_assert_cmpuint (len, ==, 32 + 4 * n_pos + 4 * (gsize) n_pos * n_vocab);
  g_autofree HzToken *toks = g_new (HzToken, n_pos);
  memcpy (toks, data + 32, 4 * n_pos);
  const float *want = (const float *) (void *) (data + 32 + 4 * n_pos);

  g_assert_cmpuint (hz_model_n_vocab (model), ==, n_vocab);
  HzContextParams cp;
  hz_context_params_init (&cp);
  cp.n_ctx = 512;
  g_autoptr (HzContext) ctx = hz_context_new (model, &cp, &error);
  g_assert_no_error (error);

  double max_diff = 0;
  g_assert_true (hz_context_eval (ctx, toks, n_prompt, TRUE, NULL, &error));
  for (guint p = 0; p < n_pos; p++)
    {
      if (p >= n_prompt)
        g_assert_true (hz_context_eval (ctx, &toks[p], 1, FALSE, NULL, &error));
      const float *row = hz_context_logits (ctx, p < n_prompt ? (gint) p : -1);
      for (guint v = 0; v < n_vocab; v++)
        max_diff = MAX (max_diff, fabsf (row[v] - want[(gsize) p * n_vocab + v]));
    }
  return max_diff;
}

static void
test_stories260k_logits (void)
{
  g_autofree char *model_path = hz_test_shared_path ("models/stories260K.gguf");
  if (!model_path)
    return;
  g_autofree char *bin = hz_test_shared_path ("golden/stories260K/logits_kv_f32.bin");
  if (!bin)
    return;
  g_autoptr (GError) error = NULL;
  g_autoptr (HzModel) model = hz_model_load (model_path, NULL, &error);
  g_assert_no_error (error);
  double max_diff = logits_golden_diff (model, bin);
  g_test_message ("stories260K: max |logit - llama.cpp| over 48 positions = %.3g", max_diff);
  g_assert_cmpfloat (max_diff, <=, 1e-4);
}

/* Formats that must be supported (issue 2); others are checked when the table has them. */
static const char *const required_types[] = { "F32", "Q8_0", "Q4_0", NULL };

static void
test_distill (gconstpointer data)
{
  const char *type = data;
  g_autofree char *rel = g_strdup_printf ("models/stories-distill/stories-distill-%s.gguf", type);
  g_autofree char *model_path = hz_test_shared_path (rel);
  if (!model_path)
    return;
  g_autofree char *jrel = g_strdup_printf ("golden/stories-distill/%s/greedy_kv_f32.json", type);
  g_autofree char *json = hz_test_shared_path (jrel);
  if (!json)
    return;
  g_autoptr (GError) error = NULL;
  /* a file with a tensor format the quant table lacks is refused by the GGUF reader */
  g_autoptr (HzGguf) g = hz_gguf_open (model_path, &error);
  if (g == NULL && g_error_matches (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_UNKNOWN_TYPE) &&
      !g_strv_contains (required_types, type))
    {
      g_autofree char *msg = g_strdup_printf ("%s: the quant table lacks a format of this file "
                                              "(%s); skipping", type, error->message);
      g_test_skip (msg);
      return;
    }
  g_assert_no_error (error);
  g_autoptr (HzModel) model = hz_model_load (model_path, NULL, &error);
  g_assert_no_error (error);
  g_autofree char *label = g_strdup_printf ("stories-distill %s", type);
  g_autofree char *brel = g_strdup_printf ("golden/stories-distill/%s/logits_kv_f32.bin", type);
  g_autofree char *bin = hz_test_shared_path (brel);
  if (bin)
    {
      const double diff = logits_golden_diff (model, bin);
      g_test_message ("%s: max |logit - llama.cpp| over 48 positions = %.3g", label, diff);
      /* every float operation follows llama.cpp's order (ggml-order.h): bit-identical */
      if (hz_simd_supported (HZ_SIMD_AVX2))
        g_assert_cmpfloat (diff, ==, 0.0);
    }
  check_greedy_golden (model, json, label);
}

/* The ggml-order kernels that follow ggml_vec_dot_*'s AVX2 order (n_out not a multiple of
 * 8 or 32, so no repack/AMX order) reproduce the golden `result` bit for bit. */
static void
test_ggml_order_dots (void)
{
  g_autofree char *dir = hz_test_shared_path ("golden/quant/dot");
  if (!dir)
    return;
  if (!hz_simd_supported (HZ_SIMD_AVX2))
    {
      g_test_skip ("the table kernels of some formats need AVX2 for ggml's order");
      return;
    }
  guint n_checked = 0;
  for (size_t f = 0; f < hz_quant_n_formats (); f++)
    {
      const HzQuantTraits *t = hz_quant_format (f);
      g_autofree char *path = g_strdup_printf ("%s/%s.bin", dir, t->name);
      g_autofree char *data = NULL;
      gsize len = 0;
      if (t->vec_dot == NULL || !g_file_get_contents (path, &data, &len, NULL))
        continue;
      guint32 h[8];
      memcpy (h, data + 8, sizeof h);
      gsize off = 40;
      for (guint32 c = 0; c < h[6]; c++)
        {
          guint32 n;
          float want;
          memcpy (&n, data + off, 4);
          memcpy (&want, data + off + 8, 4);
          off += 32;
          const char *w = data + off;
          off += (gsize) n / h[2] * h[3] + 4 * (gsize) n;
          const char *aq = data + off;
          off += (gsize) n / h[4] * h[5];
          g_assert_cmpuint (off, <=, len);
          const HzGgmlDots d = hz_ggml_order_dots (t->type, 4, n);
          if (!d.exact || t->type == HZ_TYPE_F32)
            break;
          float got;
          d.one (n, &got, w, aq);
          g_assert_cmpmem (&got, 4, &want, 4);
          n_checked++;
        }
    }
  g_test_message ("ggml-order: %u golden dot cases bit-exact", n_checked);
  g_assert_cmpuint (n_checked, >=, 8 * 10);
}

static gint
cmp_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

static void
add_distill_tests (void)
{
  const char *dir = g_getenv ("HZ_SHARED_DIR");
  g_autofree char *golden = g_build_filename (dir ? dir : "../shared", "golden", "stories-distill", NULL);
  g_autoptr (GDir) d = g_dir_open (golden, 0, NULL);
  g_autoptr (GPtrArray) names = g_ptr_array_new ();
  const char *name;

  while (d && (name = g_dir_read_name (d)))
    {
      g_autofree char *sub = g_build_filename (golden, name, NULL);
      if (g_file_test (sub, G_FILE_TEST_IS_DIR))
        g_ptr_array_add (names, g_strdup (name));   /* leaked on purpose: test data */
    }
  for (int i = 0; required_types[i]; i++)
    if (!g_ptr_array_find_with_equal_func (names, required_types[i], g_str_equal, NULL))
      g_ptr_array_add (names, g_strdup (required_types[i]));  /* skips when absent */
  g_ptr_array_sort (names, cmp_names);
  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *tp = g_strdup_printf ("/model/stories-distill/%s", (char *) names->pdata[i]);
      g_test_add_data_func (tp, names->pdata[i], test_distill);
    }
}

int
main (int argc, char **argv)
{
  /* run every test even after a failure, so each quantization format gets reported */
  char **args = g_new0 (char *, argc + 2);
  memcpy (args, argv, argc * sizeof (char *));
  args[argc++] = (char *) "--keep-going";
  argv = args;
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/model/threadpool", test_threadpool);
  for (gsize i = 0; i < G_N_ELEMENTS (synth_specs); i++)
    {
      const SynthSpec *s = &synth_specs[i];
      g_autofree char *tp = g_strdup_printf ("/model/synthetic/%s-%s%s%s", s->arch,
                                             hz_quant_traits (s->wtype)->name,
                                             s->tied ? "-tied" : "",
                                             s->n_rot < S_HDIM ? "-partial-rope" : "");
      g_test_add_data_func (tp, s, test_synthetic_forward);
    }
  g_test_add_func ("/model/generate", test_generate);
  g_test_add_data_func ("/model/cache-hit/llama-F32", &synth_specs[0], test_cache_hit);
  g_test_add_data_func ("/model/cache-hit/llama-Q8_0", &synth_specs[4], test_cache_hit);
  g_test_add_func ("/model/cache-hit/shared", test_cache_hit_shared);
  g_test_add_func ("/model/bad-input", test_bad_input);
  g_test_add_func ("/model/ggml-order/dots", test_ggml_order_dots);
  g_test_add_func ("/model/stories260K/prompts", test_stories260k_prompts);
  g_test_add_func ("/model/stories260K/logits", test_stories260k_logits);
  g_test_add_func ("/model/stories260K/greedy", test_stories260k_greedy);
  add_distill_tests ();
  return g_test_run ();
}
