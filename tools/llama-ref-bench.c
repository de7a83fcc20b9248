/* tools/llama-ref-bench.c — reference measurements with llama.cpp's CPU build, for the
 * comparisons in tools/bench-cpu.sh and tools/bench-serving.sh.
 *
 * NOT part of the meson build and not linked into anything we ship: the bench scripts
 * compile it with `cc` against a llama.cpp build the user supplies (LLAMA_LIB_DIR, a folder
 * holding libllama*.so and libggml*.so: the prebuilt npm package @node-llama-cpp/linux-x64,
 * bins/linux-x64/, or the build/bin of your own llama.cpp checkout). It contains no
 * llama.cpp code: it declares the handful of llama.h functions it calls. For the parameter
 * structs passed and returned by value it declares only their stable leading fields
 * (n_ctx, n_batch, n_ubatch, n_seq_max) followed by padding larger than any version's
 * struct: on x86-64 System V and AArch64 such structs (> 16 bytes) are passed and returned
 * in memory, so a larger declaration keeps the call ABI-compatible while the library reads
 * and writes only its own fields. llama_batch is declared in full (unchanged since 2023).
 *
 *   llama-ref-bench -m MODEL [-t 2] [-p 512] [-n 128] [-r 3]               pp/tg (llama-bench)
 *   llama-ref-bench -m MODEL [-t 2] --batched NPL [--npp 544] [--ntg 64]    batched decode
 *   llama-ref-bench -m MODEL [-t 2] --perplexity TEXT [-c 128] [-b 512]     perplexity
 *   llama-ref-bench -m MODEL [-t 2] --greedy N --prompt TEXT                greedy token ids
 *
 * pp/tg (llama-bench's method, tools/llama-bench/llama-bench.cpp): pp<P> decodes a prompt of
 * P tokens (BOS then random ids) in batches of 512 from an empty cache; tg<N> decodes N
 * tokens one at a time (BOS then random ids). Each repetition runs in a fresh context of
 * P + N cells (llama-bench clears its cache instead; same effect) after one warm-up run;
 * t/s = tokens / seconds, median ± sample stddev of the repetitions. The context uses the
 * library's defaults otherwise (flash attention "auto", F16 KV cache), as llama-bench does.
 *
 * Batched (llama-batched-bench's method, tools/batched-bench): NPL sequences, each with its
 * own prompt of NPP random tokens (decoded together, batches of up to 512 tokens), then NTG
 * steps that each decode one token per sequence in a single batch (seq_id = sequence,
 * logits for every row). Reports S_PP = NPL*NPP / t_pp, S_TG = NPL*NTG / t_tg (the
 * aggregate decode throughput) and S = total tokens / total time. Context: n_seq_max = NPL,
 * n_ctx = NPL * (NPP + NTG).
 *
 * Perplexity (llama-perplexity's method, as engine/perplexity.h): the text is tokenized
 * with llama.cpp's tokenizer (BOS added, special tokens not parsed), cut into chunks of
 * n_ctx tokens; each chunk runs from an empty cache (a fresh context) with its first token
 * replaced by BOS, and positions [n_ctx/2, n_ctx - 1) are scored with a double-precision
 * log-softmax. Prints "[i]ppl," per chunk and "Final estimate: PPL = x +/- e".
 *
 * Greedy: TEXT is tokenized with llama.cpp's tokenizer (BOS added as the vocabulary says,
 * special tokens not parsed) and decoded in one batch, then N tokens are chosen by argmax of
 * the last logits (ties to the lowest id) and fed back one at a time. Prints two lines,
 * "prompt_ids: ..." and "generated_ids: ..." (space-separated ids), for comparing with
 * `hanzo generate --temp 0 --json`.
 *
 * Exit status: 0 ok, 1 runtime error, 2 usage error.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the llama.h subset this tool uses ---- */
typedef int32_t llama_token;
typedef int32_t llama_pos;
typedef int32_t llama_seq_id;
struct llama_model;
struct llama_context;
struct llama_vocab;

typedef struct llama_batch {
  int32_t        n_tokens;
  llama_token   *token;
  float         *embd;
  llama_pos     *pos;
  int32_t       *n_seq_id;
  llama_seq_id **seq_id;
  int8_t        *logits;
} llama_batch;

/* Padding: llama_model_params is ~72 bytes, llama_context_params ~150 in 2025 versions. */
struct llama_model_params {
  uint8_t opaque[1024];
};

struct llama_context_params {
  uint32_t n_ctx, n_batch, n_ubatch, n_seq_max;   /* stable since 2024 */
  uint8_t  rest[1024];
};

extern void ggml_backend_load_all (void);
extern void ggml_backend_load_all_from_path (const char *dir_path);
extern void llama_log_set (void (*cb) (int level, const char *text, void *ud), void *ud);
extern void llama_backend_init (void);
extern struct llama_model_params llama_model_default_params (void);
extern struct llama_context_params llama_context_default_params (void);
extern struct llama_model *llama_model_load_from_file (const char *path, struct llama_model_params p);
extern struct llama_context *llama_init_from_model (struct llama_model *m, struct llama_context_params p);
extern void llama_set_n_threads (struct llama_context *ctx, int32_t n_threads, int32_t n_threads_batch);
extern llama_batch llama_batch_get_one (llama_token *tokens, int32_t n_tokens);
extern llama_batch llama_batch_init (int32_t n_tokens, int32_t embd, int32_t n_seq_max);
extern void llama_batch_free (llama_batch batch);
extern int32_t llama_decode (struct llama_context *ctx, llama_batch batch);
extern float *llama_get_logits_ith (struct llama_context *ctx, int32_t i);
extern const struct llama_vocab *llama_model_get_vocab (const struct llama_model *m);
extern int32_t llama_vocab_n_tokens (const struct llama_vocab *v);
extern llama_token llama_vocab_bos (const struct llama_vocab *v);
extern bool llama_vocab_get_add_bos (const struct llama_vocab *v);
extern int32_t llama_tokenize (const struct llama_vocab *v, const char *text, int32_t text_len,
                               llama_token *tokens, int32_t n_tokens_max, bool add_special,
                               bool parse_special);
extern void llama_free (struct llama_context *ctx);
extern void llama_model_free (struct llama_model *m);

/* ---- helpers ---- */

static void
quiet_log (int level, const char *text, void *ud)
{
  (void) ud;
  if (level == 4 /* GGML_LOG_LEVEL_ERROR */)
    fputs (text, stderr);
}

static double
now_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static void
summarize (double *v, int n, double *median, double *stddev)
{
  double mean = 0, ss = 0;
  qsort (v, n, sizeof *v, cmp_double);
  *median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  for (int i = 0; i < n; i++)
    mean += v[i] / n;
  for (int i = 0; i < n; i++)
    ss += (v[i] - mean) * (v[i] - mean);
  *stddev = n > 1 ? sqrt (ss / (n - 1)) : 0.0;
}

/* xorshift64*: reproducible random token ids without libc's rand state */
static uint64_t rng_state = 42;
static int32_t
rand_token (int32_t n_vocab)
{
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (int32_t) ((rng_state * 0x2545F4914F6CDD1DULL >> 33) % (uint64_t) n_vocab);
}

typedef struct {
  struct llama_model *model;
  const struct llama_vocab *vocab;
  int32_t n_vocab;
  int     threads;
} Ref;

static struct llama_context *
new_context (Ref *r, uint32_t n_ctx, uint32_t n_batch, uint32_t n_seq)
{
  struct llama_context_params cp = llama_context_default_params ();
  cp.n_ctx = n_ctx;
  cp.n_batch = n_batch;
  cp.n_ubatch = n_batch < 512 ? n_batch : 512;
  cp.n_seq_max = n_seq;
  struct llama_context *ctx = llama_init_from_model (r->model, cp);
  if (ctx == NULL)
    {
      fprintf (stderr, "llama-ref-bench: cannot create a context of %u cells\n", n_ctx);
      exit (1);
    }
  llama_set_n_threads (ctx, r->threads, r->threads);
  return ctx;
}

static void
decode_or_die (struct llama_context *ctx, llama_batch b)
{
  int32_t rc = llama_decode (ctx, b);
  if (rc != 0)
    {
      fprintf (stderr, "llama-ref-bench: llama_decode failed (%d)\n", rc);
      exit (1);
    }
}

/* llama-bench's test_prompt / test_gen; returns seconds */
static double
run_prompt (Ref *r, struct llama_context *ctx, int n_prompt, int n_batch)
{
  llama_token *toks = malloc (sizeof *toks * n_batch);
  double t0 = now_s ();
  for (int done = 0; done < n_prompt;)
    {
      int n = n_prompt - done < n_batch ? n_prompt - done : n_batch;
      for (int i = 0; i < n; i++)
        toks[i] = rand_token (r->n_vocab);
      if (done == 0 && llama_vocab_get_add_bos (r->vocab))
        toks[0] = llama_vocab_bos (r->vocab);
      decode_or_die (ctx, llama_batch_get_one (toks, n));
      done += n;
    }
  double t = now_s () - t0;
  free (toks);
  return t;
}

static double
run_gen (Ref *r, struct llama_context *ctx, int n_gen)
{
  llama_token tok = llama_vocab_get_add_bos (r->vocab) ? llama_vocab_bos (r->vocab)
                                                        : rand_token (r->n_vocab);
  double t0 = now_s ();
  for (int i = 0; i < n_gen; i++)
    {
      decode_or_die (ctx, llama_batch_get_one (&tok, 1));
      (void) llama_get_logits_ith (ctx, -1);
      tok = rand_token (r->n_vocab);
    }
  return now_s () - t0;
}

static void
bench_pp_tg (Ref *r, const char *name, int n_prompt, int n_gen, int reps)
{
  const int n_batch = 512;
  printf ("| %-30s | %-9s | %7s | %10s | %20s |\n", "model", "backend", "threads", "test", "t/s");
  printf ("| ------------------------------ | --------- | ------: | ---------: | -------------------: |\n");
  for (int test = 0; test < 2; test++)
    {
      const int decode = test == 1, n = decode ? n_gen : n_prompt;
      if (n == 0)
        continue;
      double *tps = malloc (sizeof *tps * reps), med, sd;
      for (int rep = -1; rep < reps; rep++)   /* rep -1: warm-up (llama-bench's) */
        {
          struct llama_context *ctx = new_context (r, n_prompt + n_gen, n_batch > n_prompt ? n_batch : n_prompt, 1);
          double s = decode ? run_gen (r, ctx, rep < 0 ? 1 : n)
                            : run_prompt (r, ctx, n, n_batch);
          if (rep >= 0)
            tps[rep] = n / s;
          llama_free (ctx);
        }
      summarize (tps, reps, &med, &sd);
      char label[32], val[64];
      snprintf (label, sizeof label, "%s%d", decode ? "tg" : "pp", n);
      snprintf (val, sizeof val, "%.2f ± %.2f", med, sd);
      printf ("| %-30s | %-9s | %7d | %10s | %20s |\n", name, "llama.cpp", r->threads, label, val);
      fflush (stdout);
      free (tps);
    }
}

static void
batch_add (llama_batch *b, llama_token tok, llama_pos pos, llama_seq_id seq, int logits)
{
  int i = b->n_tokens++;
  b->token[i] = tok;
  b->pos[i] = pos;
  b->n_seq_id[i] = 1;
  b->seq_id[i][0] = seq;
  b->logits[i] = (int8_t) logits;
}

static void
bench_batched (Ref *r, int npl, int npp, int ntg)
{
  const int n_batch = 512;
  struct llama_context *ctx = new_context (r, (uint32_t) npl * (npp + ntg), n_batch, npl);
  llama_batch b = llama_batch_init (n_batch > npl ? n_batch : npl, 0, 1);

  /* warm-up: one token per sequence, as llama-batched-bench does before measuring */
  b.n_tokens = 0;
  for (int s = 0; s < npl; s++)
    batch_add (&b, rand_token (r->n_vocab), 0, s, 1);
  decode_or_die (ctx, b);
  llama_free (ctx);
  ctx = new_context (r, (uint32_t) npl * (npp + ntg), n_batch, npl);

  double t0 = now_s ();
  b.n_tokens = 0;
  for (int s = 0; s < npl; s++)
    for (int p = 0; p < npp; p++)
      {
        batch_add (&b, rand_token (r->n_vocab), p, s, p == npp - 1);
        if (b.n_tokens == n_batch)
          {
            decode_or_die (ctx, b);
            b.n_tokens = 0;
          }
      }
  if (b.n_tokens > 0)
    decode_or_die (ctx, b);
  const double t_pp = now_s () - t0;

  double t1 = now_s ();
  for (int step = 0; step < ntg; step++)
    {
      b.n_tokens = 0;
      for (int s = 0; s < npl; s++)
        batch_add (&b, rand_token (r->n_vocab), npp + step, s, 1);
      decode_or_die (ctx, b);
    }
  const double t_tg = now_s () - t1;
  const double total = (double) npl * (npp + ntg);

  printf ("|    PP |     TG |    B |   N_KV |   T_PP s |  S_PP t/s |   T_TG s |  S_TG t/s |      T s |    S t/s |\n");
  printf ("|-------|--------|------|--------|----------|-----------|----------|-----------|----------|----------|\n");
  printf ("| %5d | %6d | %4d | %6d | %8.3f | %9.2f | %8.3f | %9.2f | %8.3f | %8.2f |\n",
          npp, ntg, npl, npl * (npp + ntg), t_pp, npl * npp / t_pp, t_tg, npl * ntg / t_tg,
          t_pp + t_tg, total / (t_pp + t_tg));
  llama_batch_free (b);
  llama_free (ctx);
}

static char *
read_text (const char *path, long *len)
{
  FILE *f = fopen (path, "rb");
  if (f == NULL)
    return NULL;
  fseek (f, 0, SEEK_END);
  *len = ftell (f);
  fseek (f, 0, SEEK_SET);
  char *buf = malloc (*len + 1);
  if (fread (buf, 1, *len, f) != (size_t) *len)
    {
      free (buf);
      fclose (f);
      return NULL;
    }
  buf[*len] = 0;
  fclose (f);
  return buf;
}

static int
perplexity (Ref *r, const char *path, int n_ctx, int n_batch, int max_chunks)
{
  long len;
  char *text = read_text (path, &len);
  if (text == NULL)
    {
      fprintf (stderr, "llama-ref-bench: cannot read %s\n", path);
      return 1;
    }
  int32_t n_tok = -llama_tokenize (r->vocab, text, (int32_t) len, NULL, 0, true, false);
  llama_token *toks = malloc (sizeof *toks * (n_tok > 0 ? n_tok : 1));
  if (n_tok <= 0 || llama_tokenize (r->vocab, text, (int32_t) len, toks, n_tok, true, false) != n_tok)
    {
      fprintf (stderr, "llama-ref-bench: tokenization of %s failed\n", path);
      return 1;
    }
  free (text);
  if (n_tok < 2 * n_ctx)
    {
      fprintf (stderr, "llama-ref-bench: %d tokens, need at least 2 * n_ctx = %d\n", n_tok, 2 * n_ctx);
      return 1;
    }
  if (n_batch > n_ctx)
    n_batch = n_ctx;
  int n_chunk = n_tok / n_ctx;
  if (max_chunks > 0 && max_chunks < n_chunk)
    n_chunk = max_chunks;
  const int first = n_ctx / 2;
  double nll = 0, nll2 = 0;
  long count = 0;
  llama_batch b = llama_batch_init (n_batch, 0, 1);
  double t0 = now_s ();

  for (int c = 0; c < n_chunk; c++)
    {
      struct llama_context *ctx = new_context (r, n_ctx, n_batch, 1);
      const llama_token *ct = toks + (long) c * n_ctx;
      float *logits = malloc (sizeof (float) * (size_t) n_ctx * r->n_vocab);
      for (int j0 = 0; j0 < n_ctx; j0 += n_batch)
        {
          const int n = n_ctx - j0 < n_batch ? n_ctx - j0 : n_batch;
          b.n_tokens = 0;
          for (int j = 0; j < n; j++)
            {
              llama_token t = ct[j0 + j];
              if (j0 + j == 0 && llama_vocab_get_add_bos (r->vocab))
                t = llama_vocab_bos (r->vocab);
              batch_add (&b, t, j0 + j, 0, 1);
            }
          decode_or_die (ctx, b);
          for (int j = 0; j < n; j++)
            memcpy (logits + (size_t) (j0 + j) * r->n_vocab, llama_get_logits_ith (ctx, j),
                    sizeof (float) * r->n_vocab);
        }
      for (int j = first; j < n_ctx - 1; j++)
        {
          const float *lg = logits + (size_t) j * r->n_vocab;
          float mx = lg[0];
          for (int v = 1; v < r->n_vocab; v++)
            mx = lg[v] > mx ? lg[v] : mx;
          double sum = 0;
          for (int v = 0; v < r->n_vocab; v++)
            sum += expf (lg[v] - mx);
          const double v = -((lg[ct[j + 1]] - mx) - log (sum));
          nll += v;
          nll2 += v * v;
          count++;
        }
      printf ("[%d]%.4f,", c + 1, exp (nll / count));
      fflush (stdout);
      free (logits);
      llama_free (ctx);
    }
  printf ("\n");
  const double mean = nll / count, var = nll2 / count - mean * mean;
  const double ppl = exp (mean);
  const double err = count > 1 && var > 0 ? ppl * sqrt (var / (count - 1)) : 0.0;
  fprintf (stderr, "perplexity: %d tokens, %d chunks, %ld scored, %.2f s\n", n_tok, n_chunk,
           count, now_s () - t0);
  printf ("Final estimate: PPL = %.4f +/- %.5f\n", ppl, err);
  llama_batch_free (b);
  free (toks);
  return 0;
}

static int
greedy (Ref *r, const char *text, int n_gen)
{
  const int32_t len = (int32_t) strlen (text), cap = len + 8;
  llama_token *toks = malloc (sizeof *toks * (cap + n_gen));
  const int32_t n = llama_tokenize (r->vocab, text, len, toks, cap, true, false);
  if (n <= 0)
    {
      fprintf (stderr, "llama-ref-bench: cannot tokenize the prompt\n");
      free (toks);
      return 1;
    }
  struct llama_context *ctx = new_context (r, (uint32_t) (n + n_gen + 1), (uint32_t) n, 1);
  printf ("prompt_ids:");
  for (int32_t i = 0; i < n; i++)
    printf (" %d", toks[i]);
  printf ("\ngenerated_ids:");
  decode_or_die (ctx, llama_batch_get_one (toks, n));
  for (int i = 0; i < n_gen; i++)
    {
      const float *lg = llama_get_logits_ith (ctx, -1);
      llama_token best = 0;
      for (llama_token v = 1; v < r->n_vocab; v++)
        if (lg[v] > lg[best])
          best = v;
      printf (" %d", best);
      toks[n + i] = best;
      decode_or_die (ctx, llama_batch_get_one (&toks[n + i], 1));
    }
  printf ("\n");
  llama_free (ctx);
  free (toks);
  return 0;
}

static void
usage (void)
{
  fprintf (stderr,
           "usage: llama-ref-bench -m MODEL [-t THREADS] [-p 512] [-n 128] [-r 3]\n"
           "       llama-ref-bench -m MODEL [-t THREADS] --batched NPL [--npp 544] [--ntg 64]\n"
           "       llama-ref-bench -m MODEL [-t THREADS] --perplexity TEXT [-c 128] [-b 512] [--chunks N]\n"
           "       llama-ref-bench -m MODEL [-t THREADS] --greedy N --prompt TEXT\n"
           "environment: LLAMA_LIB_DIR (folder of the ggml CPU backends, default: next to the binary)\n");
}

static int
parse_int (const char *s, int min, int *out)
{
  char *end;
  long v = s ? strtol (s, &end, 10) : 0;
  if (s == NULL || *s == 0 || *end != 0 || v < min || v > 1 << 20)
    return 0;
  *out = (int) v;
  return 1;
}

int
main (int argc, char **argv)
{
  const char *model_path = NULL, *ppl_path = NULL, *prompt = NULL;
  int threads = 2, n_prompt = 512, n_gen = 128, reps = 3, npl = 0, npp = 544, ntg = 64;
  int n_ctx = 128, n_batch = 512, chunks = 0, n_greedy = 0;

  for (int i = 1; i < argc; i++)
    {
      const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
      int ok = 1;
      if (!strcmp (a, "-m"))
        model_path = v;
      else if (!strcmp (a, "--perplexity") || !strcmp (a, "-f"))
        ppl_path = v;
      else if (!strcmp (a, "-t"))
        ok = parse_int (v, 1, &threads);
      else if (!strcmp (a, "-p"))
        ok = parse_int (v, 0, &n_prompt);
      else if (!strcmp (a, "-n"))
        ok = parse_int (v, 0, &n_gen);
      else if (!strcmp (a, "-r"))
        ok = parse_int (v, 1, &reps);
      else if (!strcmp (a, "--batched"))
        ok = parse_int (v, 1, &npl);
      else if (!strcmp (a, "--npp"))
        ok = parse_int (v, 1, &npp);
      else if (!strcmp (a, "--ntg"))
        ok = parse_int (v, 1, &ntg);
      else if (!strcmp (a, "-c"))
        ok = parse_int (v, 4, &n_ctx);
      else if (!strcmp (a, "-b"))
        ok = parse_int (v, 1, &n_batch);
      else if (!strcmp (a, "--chunks"))
        ok = parse_int (v, 1, &chunks);
      else if (!strcmp (a, "--greedy"))
        ok = parse_int (v, 1, &n_greedy);
      else if (!strcmp (a, "--prompt"))
        prompt = v;
      else
        ok = 0;
      if (!ok || v == NULL)
        {
          usage ();
          return 2;
        }
      i++;
    }
  if (model_path == NULL || (n_prompt == 0 && n_gen == 0) || (n_greedy > 0) != (prompt != NULL))
    {
      usage ();
      return 2;
    }

  llama_log_set (quiet_log, NULL);
  const char *dir = getenv ("LLAMA_LIB_DIR");
  if (dir && *dir)
    ggml_backend_load_all_from_path (dir);
  else
    ggml_backend_load_all ();
  llama_backend_init ();

  struct llama_model_params mp = llama_model_default_params ();
  Ref r = { .threads = threads };
  r.model = llama_model_load_from_file (model_path, mp);
  if (r.model == NULL)
    {
      fprintf (stderr, "llama-ref-bench: cannot load %s\n", model_path);
      return 1;
    }
  r.vocab = llama_model_get_vocab (r.model);
  r.n_vocab = llama_vocab_n_tokens (r.vocab);

  const char *base = strrchr (model_path, '/');
  base = base ? base + 1 : model_path;
  int rc = 0;
  if (n_greedy > 0)
    rc = greedy (&r, prompt, n_greedy);
  else if (ppl_path)
    rc = perplexity (&r, ppl_path, n_ctx, n_batch, chunks);
  else if (npl > 0)
    bench_batched (&r, npl, npp, ntg);
  else
    bench_pp_tg (&r, base, n_prompt, n_gen, reps);
  llama_model_free (r.model);
  return rc;
}
