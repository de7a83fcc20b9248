/* tests/engine/test-load.c — model loading beyond plain GGUF files: Hugging Face
 * safetensors folders and load-time quantization (ISQ, HzModelParams.isq →
 * hz_isq_load in engine/quantize.h), and bad GGUF input at load.
 *
 * Core (no shared data): synthetic llama/qwen2/qwen3 models from hz_synth with a small
 * SentencePiece vocabulary written here.
 *   - a folder written from the GGUF (HF names, Llama q/k rows inverse-permuted, two shards
 *     with model.safetensors.index.json) loads with bit-identical logits and greedy ids;
 *   - `isq` Q8_0 / Q4_K (= Q4_K_M) at load gives byte-identical tensors and bit-identical
 *     logits to loading the file hz_quantize_file (`hanzo quantize`) writes, from an F32
 *     GGUF, from a quantized GGUF (requantization) and from a BF16 folder;
 *   - errors: unknown ISQ type, missing shard, GGUF tensors with an unknown type, rows that
 *     are not whole blocks, or data shorter than the shape name the tensor; MoE refused;
 *   - the in-memory GGUF image of the writer equals the file it writes.
 * Shared (../shared, skipped when absent): stories260K as a folder gives the same greedy
 * ids and logits as its GGUF; `isq` Q8_0 / Q4_K equals the quantized file bit for bit.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gguf.h"
#include "hanzo/engine.h"
#include "quant.h"
#include "quantize.h"
#include "synth.h"
#include "../hz-test-util.h"
#include "hf-folder.h"
#include "safetensors.h"

#define N_PROMPT 8
#define N_GREEDY 16

static char *
tmp_path (const char *what)
{
  return g_strdup_printf ("%s/hz-test-load-%d-%s", g_get_tmp_dir (), (int) getpid (), what);
}

/* A SentencePiece vocabulary: <unk> <s> </s>, the 256 byte tokens and a few pieces. */
static char *
write_vocab (void)
{
  static const char *const pieces[] = {
    "\xe2\x96\x81", "\xe2\x96\x81" "Once", "\xe2\x96\x81" "upon", "\xe2\x96\x81" "a",
    "\xe2\x96\x81" "time", "\xe2\x96\x81" "there", "\xe2\x96\x81" "was", "\xe2\x96\x81" "little",
    "\xe2\x96\x81" "girl", ",", ".", "e", "t", "a", "o", "n",
  };
  const guint n = 3 + 256 + G_N_ELEMENTS (pieces);
  g_autoptr (GPtrArray) toks = g_ptr_array_new_with_free_func (g_free);
  g_autofree int32_t *types = g_new (int32_t, n);
  g_autofree float *scores = g_new0 (float, n);
  const char *const specials[] = { "<unk>", "<s>", "</s>" };
  for (guint i = 0; i < 3; i++)
    {
      g_ptr_array_add (toks, g_strdup (specials[i]));
      types[i] = i == 0 ? 2 : 3;  /* unknown, control */
    }
  for (guint b = 0; b < 256; b++)
    {
      g_ptr_array_add (toks, g_strdup_printf ("<0x%02X>", b));
      types[3 + b] = 6;  /* byte */
    }
  for (guint i = 0; i < G_N_ELEMENTS (pieces); i++)
    {
      g_ptr_array_add (toks, g_strdup (pieces[i]));
      types[259 + i] = 1;
      scores[259 + i] = -(float) i;
    }
  g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
  hz_gguf_writer_set_str (w, "general.architecture", "llama");
  hz_gguf_writer_set_str (w, "tokenizer.ggml.model", "llama");
  hz_gguf_writer_set_str_arr (w, "tokenizer.ggml.tokens", (const char *const *) toks->pdata, n);
  hz_gguf_writer_set_arr (w, "tokenizer.ggml.scores", HZ_GGUF_TYPE_FLOAT32, scores, n);
  hz_gguf_writer_set_arr (w, "tokenizer.ggml.token_type", HZ_GGUF_TYPE_INT32, types, n);
  hz_gguf_writer_set_u32 (w, "tokenizer.ggml.bos_token_id", 1);
  hz_gguf_writer_set_u32 (w, "tokenizer.ggml.eos_token_id", 2);
  char *path = tmp_path ("vocab.gguf");
  g_autoptr (GError) error = NULL;
  g_assert_true (hz_gguf_writer_write_file (w, path, &error));
  g_assert_no_error (error);
  return path;
}

static char *
write_synth (const char *arch, const char *shape, HzFtype ftype, const char *vocab, const char *tag)
{
  HzSynthParams p = { 0 };
  g_assert_true (hz_synth_shape_parse (shape, &p.shape, NULL));
  p.arch = arch;
  p.ftype = ftype;
  p.matrix_type = -1;
  p.seed = 11;
  p.vocab_gguf = vocab;
  p.n_threads = 2;
  char *out = tmp_path (tag);
  g_autoptr (GError) error = NULL;
  g_assert_true (hz_synth_write (&p, out, &error));
  g_assert_no_error (error);
  return out;
}

static HzModel *
load (const char *path, const char *isq, const char *vocab)
{
  HzModelParams mp;
  hz_model_params_init (&mp);
  mp.n_threads = 2;
  mp.isq = isq;
  mp.vocab_gguf = vocab;
  g_autoptr (GError) error = NULL;
  HzModel *m = hz_model_load (path, &mp, &error);
  g_assert_no_error (error);
  g_assert_nonnull (m);
  return m;
}

/* Logits of every prompt position, then N_GREEDY greedy ids appended to *ids. */
typedef struct {
  float   *logits;  /* [N_PROMPT][n_vocab] */
  HzToken  ids[N_GREEDY];
  int32_t  n_vocab;
} Run;

static void
run (HzModel *m, const HzToken *prompt, Run *r)
{
  g_autoptr (GError) error = NULL;
  HzContextParams cp;
  hz_context_params_init (&cp);
  cp.n_ctx = 64;
  cp.n_threads = 2;
  g_autoptr (HzContext) ctx = hz_context_new (m, &cp, &error);
  g_assert_no_error (error);
  r->n_vocab = hz_model_n_vocab (m);
  g_assert_true (hz_context_eval (ctx, prompt, N_PROMPT, TRUE, NULL, &error));
  g_assert_no_error (error);
  r->logits = g_new (float, (gsize) N_PROMPT * r->n_vocab);
  for (int p = 0; p < N_PROMPT; p++)
    memcpy (r->logits + (gsize) p * r->n_vocab, hz_context_logits (ctx, p), r->n_vocab * sizeof (float));
  for (int s = 0; s < N_GREEDY; s++)
    {
      const float *row = hz_context_logits (ctx, -1);
      HzToken best = 0;
      for (int v = 0; v < r->n_vocab; v++)
        {
          g_assert_true (isfinite (row[v]));
          if (row[v] > row[best])
            best = v;
        }
      r->ids[s] = best;
      g_assert_true (hz_context_eval (ctx, &best, 1, FALSE, NULL, &error));
      g_assert_no_error (error);
    }
}

/* Both models give the same logits bit for bit and the same greedy ids. */
static void
assert_same_run (HzModel *a, HzModel *b, const HzToken *prompt, const char *what)
{
  Run ra, rb;
  run (a, prompt, &ra);
  run (b, prompt, &rb);
  g_assert_cmpint (ra.n_vocab, ==, rb.n_vocab);
  gsize n = (gsize) N_PROMPT * ra.n_vocab, diff = 0;
  for (gsize i = 0; i < n; i++)
    diff += memcmp (&ra.logits[i], &rb.logits[i], sizeof (float)) != 0;
  if (diff)
    g_error ("%s: %" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT " logits differ", what, diff, n);
  g_assert_cmpmem (ra.ids, sizeof ra.ids, rb.ids, sizeof rb.ids);
  g_test_message ("%s: %" G_GSIZE_FORMAT " logits bit-identical, %d greedy ids equal", what, n, N_GREEDY);
  g_free (ra.logits);
  g_free (rb.logits);
}

/* hz_isq_load's tensors are byte-identical to the file written by hz_quantize_file. */
static void
assert_isq_matches_file (const char *src, const char *type, const char *vocab, const char *file)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (HzIsqModel) isq = hz_isq_load (src, type, vocab, 2, &error);
  g_assert_no_error (error);
  g_autoptr (HzGguf) g = hz_gguf_open (file, &error);
  g_assert_no_error (error);
  GHashTable *tensors = hz_isq_model_tensors (isq);
  g_assert_cmpuint (g_hash_table_size (tensors), ==, hz_gguf_n_tensors (g));
  for (int64_t i = 0; i < hz_gguf_n_tensors (g); i++)
    {
      const HzGgufTensor *f = hz_gguf_tensor (g, i);
      g_autofree char *name = g_strndup (f->name.ptr, f->name.len);
      const HzGgufTensor *t = g_hash_table_lookup (tensors, name);
      g_assert_nonnull (t);
      g_assert_cmpuint (t->type, ==, f->type);
      g_assert_cmpmem (t->data, t->n_bytes, f->data, f->n_bytes);
      if (t->type != HZ_TYPE_F32 && t->type != HZ_TYPE_F16 && t->type != HZ_TYPE_BF16)
        g_assert_cmpuint ((guintptr) t->data % 64, ==, 0);
    }
  const HzIsqStats *st = hz_isq_model_stats (isq);
  g_test_message ("isq %s: %u tensors, %u converted, %u fallback, %.1f -> %.1f KiB in %.3f s",
                  type, st->n_tensors, st->n_quantized, st->n_fallback, st->bytes_in / 1024.0,
                  st->bytes_out / 1024.0, st->seconds);
}

static char *
quantize_file (const char *src, HzFtype ft, const char *vocab, const char *tag)
{
  HzQuantizeParams p;
  hz_quantize_params_init (&p);
  p.ftype = ft;
  p.n_threads = 2;
  p.vocab_gguf = vocab;
  char *out = tmp_path (tag);
  g_autoptr (GError) error = NULL;
  g_assert_true (hz_quantize_file (src, out, &p, NULL, &error));
  g_assert_no_error (error);
  return out;
}

/* --isq TYPE on `src` == loading `hanzo quantize src TYPE`: tensors and logits */
static void
check_isq (const char *src, const char *type, HzFtype ft, const char *vocab, const HzToken *prompt,
           const char *tag)
{
  g_autofree char *ftag = g_strdup_printf ("%s-%s.gguf", tag, type);
  g_autofree char *file = quantize_file (src, ft, vocab, ftag);
  assert_isq_matches_file (src, type, vocab, file);
  g_autoptr (HzModel) a = load (src, type, vocab);
  g_autoptr (HzModel) b = load (file, NULL, NULL);
  g_assert_cmpstr (hz_model_isq (a), ==, hz_ftype_info (ft)->name);
  g_assert_null (hz_model_isq (b));
  g_assert_cmpstr (hz_model_type_name (a), ==, hz_model_type_name (b));
  g_assert_cmpuint (hz_model_weight_bytes (a), ==, hz_model_weight_bytes (b));
  g_assert_cmpuint (hz_model_n_params (a), ==, hz_model_n_params (b));
  g_autofree char *what = g_strdup_printf ("%s --isq %s vs quantized file", tag, type);
  assert_same_run (a, b, prompt, what);
  g_unlink (file);
}

static const HzToken synth_prompt[N_PROMPT] = { 1, 260, 261, 262, 263, 264, 265, 266 };

/* Rewrites the llama GGUF at `path` with q/k/v/o biases (optional in llama; Llama's q/k
 * biases are permuted like the rows of their matrices on conversion). */
static void
add_llama_biases (const char *path)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (HzGguf) g = hz_gguf_open (path, &error);
  g_assert_no_error (error);
  g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
  for (int64_t i = 0; i < hz_gguf_n_kv (g); i++)
    hz_gguf_writer_copy_kv (w, g, i);
  guint32 state = 12345;
  for (int64_t i = 0; i < hz_gguf_n_tensors (g); i++)
    {
      const HzGgufTensor *t = hz_gguf_tensor (g, i);
      g_autofree char *name = g_strndup (t->name.ptr, t->name.len);
      g_assert_true (hz_gguf_writer_copy_tensor (w, g, i, TRUE, &error));
      static const char *const mats[] = { "attn_q", "attn_k", "attn_v", "attn_output" };
      for (gsize k = 0; k < G_N_ELEMENTS (mats); k++)
        {
          g_autofree char *suffix = g_strdup_printf ("%s.weight", mats[k]);
          int l, off = 0;
          if (sscanf (name, "blk.%d.%n", &l, &off) != 1 || strcmp (name + off, suffix) != 0)
            continue;
          const int64_t n = t->ne[1];
          g_autofree float *b = g_new (float, n);
          for (int64_t e = 0; e < n; e++)
            {
              state = state * 1664525u + 1013904223u;
              b[e] = ((state >> 8) / (float) (1 << 24) - 0.5f) * 0.2f;
            }
          g_autofree char *bname = g_strdup_printf ("blk.%d.%s.bias", l, mats[k]);
          g_assert_true (hz_gguf_writer_add_tensor (w, bname, HZ_TYPE_F32, 1, &n, b, n * sizeof (float),
                                                    TRUE, &error));
        }
    }
  hz_gguf_free (g_steal_pointer (&g));
  g_assert_true (hz_gguf_writer_write_file (w, path, &error));
  g_assert_no_error (error);
}

/* a synthetic model as a folder (F32, sharded, index) loads exactly as its GGUF */
static void
test_synth_folder (gconstpointer data)
{
  const gboolean biases = strcmp (data, "llama+bias") == 0;
  const char *arch = biases ? "llama" : data;
  g_autofree char *vocab = write_vocab ();
  const char *shape = strcmp (arch, "qwen3") == 0
                      ? "custom:dim=256,layers=2,heads=4,kv=2,ffn=512,head_dim=64,ctx=128"
                      : "custom:dim=256,layers=2,heads=4,kv=2,ffn=512,ctx=128";
  g_autofree char *tag = g_strdup_printf ("synth-%s.gguf", (const char *) data);
  g_autofree char *gguf = write_synth (arch, shape, HZ_FTYPE_ALL_F32, vocab, tag);
  if (biases)
    add_llama_biases (gguf);
  g_autofree char *dir = tmp_path ("folder");
  hz_test_write_hf_folder (gguf, dir, HZ_HF_F32, TRUE);
  {
    g_autoptr (HzModel) a = load (gguf, NULL, NULL);
    g_autoptr (HzModel) b = load (dir, NULL, vocab);
    g_assert_cmpstr (hz_model_arch (b), ==, arch);
    g_assert_cmpstr (hz_model_type_name (b), ==, "F32");
    g_assert_null (hz_model_isq (b));
    g_assert_cmpuint (hz_model_n_params (a), ==, hz_model_n_params (b));
    g_assert_cmpint (hz_model_n_vocab (a), ==, hz_model_n_vocab (b));
    g_assert_cmpstr (hz_model_sha256 (b), !=, hz_model_sha256 (a));
    g_assert_cmpuint (strlen (hz_model_sha256 (b)), ==, 64);
    g_autofree char *what = g_strdup_printf ("%s folder (F32) vs GGUF", (const char *) data);
    assert_same_run (a, b, synth_prompt, what);
  }
  hz_test_rm_dir (dir);
  g_unlink (gguf);
  g_unlink (vocab);
}

/* ISQ from an F32 GGUF, from a quantized GGUF and from a BF16 folder */
static void
test_synth_isq (void)
{
  g_autofree char *vocab = write_vocab ();
  const char *shape = "custom:dim=256,layers=2,heads=4,kv=2,ffn=512,ctx=128";
  g_autofree char *f32 = write_synth ("llama", shape, HZ_FTYPE_ALL_F32, vocab, "isq-f32.gguf");
  check_isq (f32, "Q8_0", HZ_FTYPE_Q8_0, NULL, synth_prompt, "synth-F32");
  check_isq (f32, "Q4_K", HZ_FTYPE_Q4_K_M, NULL, synth_prompt, "synth-F32");
  check_isq (f32, "iq4_xs", HZ_FTYPE_IQ4_XS, NULL, synth_prompt, "synth-F32");

  /* requantization: a Q8_0 file loaded as Q4_K */
  g_autofree char *q8 = quantize_file (f32, HZ_FTYPE_Q8_0, NULL, "isq-q8.gguf");
  check_isq (q8, "Q4_K", HZ_FTYPE_Q4_K_M, NULL, synth_prompt, "synth-Q8_0");

  /* a BF16 folder: loads as BF16 by itself; with --isq as the quantized file of the folder */
  g_autofree char *dir = tmp_path ("folder-bf16");
  hz_test_write_hf_folder (f32, dir, HZ_HF_BF16, FALSE);
  {
    g_autoptr (HzModel) m = load (dir, NULL, vocab);
    g_assert_cmpstr (hz_model_type_name (m), ==, "BF16");
    Run r;
    run (m, synth_prompt, &r);  /* finite logits, greedy runs */
    g_free (r.logits);
  }
  check_isq (dir, "Q8_0", HZ_FTYPE_Q8_0, vocab, synth_prompt, "synth-BF16-folder");
  check_isq (dir, "Q4_K", HZ_FTYPE_Q4_K_M, vocab, synth_prompt, "synth-BF16-folder");
  hz_test_rm_dir (dir);

  /* an F16 folder (no index: the folder scan finds both shards) loads as F16 */
  hz_test_write_hf_folder (f32, dir, HZ_HF_F16, FALSE);
  {
    g_autoptr (HzModel) m = load (dir, NULL, vocab);
    g_assert_cmpstr (hz_model_type_name (m), ==, "F16");
    Run r;
    run (m, synth_prompt, &r);
    g_free (r.logits);
  }
  check_isq (dir, "Q6_K", HZ_FTYPE_Q6_K, vocab, synth_prompt, "synth-F16-folder");

  /* the names the API accepts */
  const char *const *types = hz_model_isq_types ();
  gboolean has_q4k = FALSE, has_q8 = FALSE;
  for (; *types; types++)
    {
      g_assert_nonnull (hz_ftype_from_name (*types));
      has_q4k |= strcmp (*types, "Q4_K_M") == 0;
      has_q8 |= strcmp (*types, "Q8_0") == 0;
    }
  g_assert_true (has_q4k && has_q8);

  hz_test_rm_dir (dir);
  g_unlink (q8);
  g_unlink (f32);
  g_unlink (vocab);
}

static void
expect_load_error (const char *path, const char *isq, const char *vocab, GQuark domain,
                   const char *needle)
{
  HzModelParams mp;
  hz_model_params_init (&mp);
  mp.isq = isq;
  mp.vocab_gguf = vocab;
  g_autoptr (GError) error = NULL;
  g_autoptr (HzModel) m = hz_model_load (path, &mp, &error);
  g_assert_null (m);
  g_assert_nonnull (error);
  g_assert_true (error->domain == domain);
  if (!strstr (error->message, needle))
    g_error ("error '%s' does not mention '%s'", error->message, needle);
  g_test_message ("refused as expected: %s", error->message);
}

/* A GGUF with one tensor 'blk.0.attn_q.weight' of the given type/shape and `data_len` bytes. */
static char *
write_bad_gguf (uint32_t type, int64_t ne0, int64_t ne1, guint data_len, const char *tag)
{
  GByteArray *b = g_byte_array_new ();
  const uint32_t version = 3, n_dims = 2;
  const uint64_t n_tensors = 1, n_kv = 1, offset = 0;
  const char *key = "general.architecture", *val = "llama", *name = "blk.0.attn_q.weight";
  const uint32_t str_type = HZ_GGUF_TYPE_STRING;
  uint64_t len;
  g_byte_array_append (b, (const guint8 *) "GGUF", 4);
  g_byte_array_append (b, (const guint8 *) &version, 4);
  g_byte_array_append (b, (const guint8 *) &n_tensors, 8);
  g_byte_array_append (b, (const guint8 *) &n_kv, 8);
  len = strlen (key);
  g_byte_array_append (b, (const guint8 *) &len, 8);
  g_byte_array_append (b, (const guint8 *) key, len);
  g_byte_array_append (b, (const guint8 *) &str_type, 4);
  len = strlen (val);
  g_byte_array_append (b, (const guint8 *) &len, 8);
  g_byte_array_append (b, (const guint8 *) val, len);
  len = strlen (name);
  g_byte_array_append (b, (const guint8 *) &len, 8);
  g_byte_array_append (b, (const guint8 *) name, len);
  g_byte_array_append (b, (const guint8 *) &n_dims, 4);
  g_byte_array_append (b, (const guint8 *) &ne0, 8);
  g_byte_array_append (b, (const guint8 *) &ne1, 8);
  g_byte_array_append (b, (const guint8 *) &type, 4);
  g_byte_array_append (b, (const guint8 *) &offset, 8);
  g_byte_array_set_size (b, (b->len + 31) / 32 * 32 + data_len);
  char *path = tmp_path (tag);
  g_assert_true (g_file_set_contents (path, (const char *) b->data, b->len, NULL));
  g_byte_array_unref (b);
  return path;
}

/* `src` rewritten with only the first `n_keep` entries of its tokenizer arrays (tokens,
 * scores, types): a vocabulary smaller than the embedding table. */
static char *
write_short_vocab (const char *src, uint64_t n_keep, const char *tag)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (HzGguf) g = hz_gguf_open (src, &error);
  g_assert_no_error (error);
  g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
  for (int64_t i = 0; i < hz_gguf_n_kv (g); i++)
    {
      HzGgufStr k = hz_gguf_key (g, i);
      g_autofree char *key = g_strndup (k.ptr, k.len);
      if (g_str_equal (key, "tokenizer.ggml.tokens"))
        {
          g_autoptr (GPtrArray) toks = g_ptr_array_new_with_free_func (g_free);
          for (uint64_t j = 0; j < n_keep; j++)
            {
              HzGgufStr t = hz_gguf_arr_str (g, i, j);
              g_ptr_array_add (toks, g_strndup (t.ptr, t.len));
            }
          hz_gguf_writer_set_str_arr (w, key, (const char *const *) toks->pdata, n_keep);
        }
      else if (g_str_equal (key, "tokenizer.ggml.scores") ||
               g_str_equal (key, "tokenizer.ggml.token_type"))
        hz_gguf_writer_set_arr (w, key, hz_gguf_arr_type (g, i), hz_gguf_arr_data (g, i), n_keep);
      else
        hz_gguf_writer_copy_kv (w, g, i);
    }
  for (int64_t i = 0; i < hz_gguf_n_tensors (g); i++)
    g_assert_true (hz_gguf_writer_copy_tensor (w, g, i, FALSE, &error));
  char *out = tmp_path (tag);
  g_assert_true (hz_gguf_writer_write_file (w, out, &error));
  return out;
}

/* bad input at load: every refusal is clear and names what is at fault */
static void
test_errors (void)
{
  /* issue 3's three bad-tensor cases, through hz_model_load (with and without ISQ) */
  static const struct { uint32_t type; int64_t ne0; guint len; const char *needle; } bad[] = {
    { 63, 32, 256, "unknown ggml type 63" },
    { HZ_TYPE_Q4_0, 48, 256, "not a multiple" },
    { HZ_TYPE_F32, 32, 100, "The file is incomplete: it ends after " },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autofree char *tag = g_strdup_printf ("bad-%" G_GSIZE_FORMAT ".gguf", i);
      g_autofree char *p = write_bad_gguf (bad[i].type, bad[i].ne0, 2, bad[i].len, tag);
      for (int with_isq = 0; with_isq <= 1; with_isq++)
        {
          expect_load_error (p, with_isq ? "Q8_0" : NULL, NULL, HZ_GGUF_ERROR, "blk.0.attn_q.weight");
          expect_load_error (p, with_isq ? "Q8_0" : NULL, NULL, HZ_GGUF_ERROR, bad[i].needle);
        }
      g_unlink (p);
    }

  g_autofree char *vocab = write_vocab ();
  const char *shape = "custom:dim=64,layers=2,heads=4,kv=2,ffn=128,ctx=64";
  g_autofree char *f32 = write_synth ("llama", shape, HZ_FTYPE_ALL_F32, vocab, "err.gguf");
  expect_load_error (f32, "Q9_9", NULL, HZ_GGUF_ERROR, "unknown quantization type 'Q9_9'");
  /* a vocabulary smaller than the embedding table: the ids it lacks would print nothing;
   * refused as llama.cpp refuses a token_embd.weight whose rows are not n_vocab */
  g_autofree char *short_vocab = write_short_vocab (f32, 200, "short-vocab.gguf");
  for (int with_isq = 0; with_isq <= 1; with_isq++)
    expect_load_error (short_vocab, with_isq ? "Q8_0" : NULL, NULL, HZ_ENGINE_ERROR,
                       "the vocabulary has 200 tokens but 'token_embd.weight' has 275 rows");
  expect_load_error (f32, "IQ2_XXS", NULL, HZ_GGUF_ERROR, "unknown quantization type");

  /* folders: a missing shard named by the index, no config.json, SentencePiece without --vocab */
  g_autofree char *dir = tmp_path ("folder-err");
  hz_test_write_hf_folder (f32, dir, HZ_HF_F32, TRUE);
  expect_load_error (dir, NULL, NULL, HZ_GGUF_ERROR, "tokenizer.json");
  /* a damaged shard: the error names the file, and the tensor when one is at fault */
  g_autofree char *shard1 = g_build_filename (dir, "model-00001-of-00002.safetensors", NULL);
  {
    g_autofree char *keep = NULL;
    gsize keep_len;
    g_assert_true (g_file_get_contents (shard1, &keep, &keep_len, NULL));
    g_assert_true (g_file_set_contents (shard1, keep, (gssize) keep_len - 1, NULL));
    g_autofree char *named = g_strdup_printf ("%s: ", shard1);
    expect_load_error (dir, NULL, vocab, HZ_SAFETENSORS_ERROR, named);
    /* the first tensor's dtype made unknown, length unchanged ("F32" -> "F3X") */
    char *dt = memmem (keep, keep_len, "\"dtype\":\"F32\"", 13);   /* (NULs before it) */
    g_assert_nonnull (dt);
    dt[strlen ("\"dtype\":\"F3")] = 'X';
    g_assert_true (g_file_set_contents (shard1, keep, (gssize) keep_len, NULL));
    expect_load_error (dir, NULL, vocab, HZ_SAFETENSORS_ERROR, named);
    expect_load_error (dir, NULL, vocab, HZ_SAFETENSORS_ERROR, "unsupported dtype 'F3X'");
    expect_load_error (dir, NULL, vocab, HZ_SAFETENSORS_ERROR, "tensor '");
  }
  hz_test_rm_dir (dir);
  hz_test_write_hf_folder (f32, dir, HZ_HF_F32, TRUE);
  g_autofree char *shard = g_build_filename (dir, "model-00002-of-00002.safetensors", NULL);
  g_unlink (shard);
  expect_load_error (dir, NULL, vocab, HZ_GGUF_ERROR, "model-00002-of-00002.safetensors");
  g_autofree char *cfg = g_build_filename (dir, "config.json", NULL);
  g_unlink (cfg);
  expect_load_error (dir, "Q8_0", vocab, G_FILE_ERROR, "config.json");
  hz_test_rm_dir (dir);

  /* quantizing a folder that lacks tensors (second shard gone, no index): refused, no file */
  g_autofree char *dir2 = tmp_path ("folder-incomplete");
  hz_test_write_hf_folder (f32, dir2, HZ_HF_F32, FALSE);
  g_autofree char *shard2 = g_build_filename (dir2, "model-00002-of-00002.safetensors", NULL);
  g_assert_cmpint (g_unlink (shard2), ==, 0);
  g_autofree char *out = tmp_path ("incomplete-q8.gguf");
  HzQuantizeParams qp;
  hz_quantize_params_init (&qp);
  qp.vocab_gguf = vocab;
  g_autoptr (GError) qerr = NULL;
  g_assert_false (hz_quantize_file (dir2, out, &qp, NULL, &qerr));
  g_assert_error (qerr, HZ_GGUF_ERROR, HZ_GGUF_ERROR_INVALID);
  g_assert_nonnull (strstr (qerr->message, "does not hold a complete model"));
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  hz_test_rm_dir (dir2);

  /* MoE metadata on a dense file: refused, naming the missing router (MoE models proper are
   * tested in test-moe.c and test-synth.c) */
  g_autoptr (GError) error = NULL;
  g_autoptr (HzGguf) g = hz_gguf_open (f32, &error);
  g_assert_no_error (error);
  g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
  for (int64_t i = 0; i < hz_gguf_n_kv (g); i++)
    hz_gguf_writer_copy_kv (w, g, i);
  hz_gguf_writer_set_u32 (w, "llama.expert_count", 8);
  hz_gguf_writer_set_u32 (w, "llama.expert_used_count", 2);
  for (int64_t i = 0; i < hz_gguf_n_tensors (g); i++)
    g_assert_true (hz_gguf_writer_copy_tensor (w, g, i, TRUE, NULL));
  g_autofree char *moe = tmp_path ("moe.gguf");
  g_assert_true (hz_gguf_writer_write_file (w, moe, NULL));
  expect_load_error (moe, NULL, NULL, HZ_ENGINE_ERROR, "'blk.0.ffn_gate_inp.weight'");
  expect_load_error (moe, "Q4_K", NULL, HZ_ENGINE_ERROR, "'blk.0.ffn_gate_inp.weight'");
  g_unlink (moe);
  g_unlink (f32);
  g_unlink (vocab);
}

/* hz_gguf_writer_to_bytes (the metadata image of a folder) is the file the writer writes */
static void
test_gguf_image (void)
{
  g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
  hz_gguf_writer_set_str (w, "general.architecture", "llama");
  hz_gguf_writer_set_u32 (w, "general.alignment", 64);
  const float a[5] = { 1, 2, 3, 4, 5 };
  const int64_t ne_a[1] = { 5 }, ne_b[2] = { 32, 1 };
  g_autofree uint8_t *b = g_malloc0 (34);
  g_assert_true (hz_gguf_writer_add_tensor (w, "a", HZ_TYPE_F32, 1, ne_a, a, sizeof a, TRUE, NULL));
  g_assert_true (hz_gguf_writer_add_tensor (w, "b", HZ_TYPE_Q8_0, 2, ne_b, b, 34, TRUE, NULL));
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) img = hz_gguf_writer_to_bytes (w, &error);
  g_assert_no_error (error);
  g_autofree char *path = tmp_path ("image.gguf");
  g_assert_true (hz_gguf_writer_write_file (w, path, &error));
  g_autofree char *file = NULL;
  gsize len;
  g_assert_true (g_file_get_contents (path, &file, &len, NULL));
  gsize ilen;
  const void *idata = g_bytes_get_data (img, &ilen);
  g_assert_cmpmem (idata, ilen, file, len);
  g_autoptr (HzGguf) g = hz_gguf_open_from_data (idata, ilen, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (hz_gguf_find_tensor (g, "a")->data, sizeof a, a, sizeof a);
  g_unlink (path);
}

/* ------------------------------------------------------------ shared: stories260K */

static void
test_stories260k (void)
{
  g_autofree char *src = hz_test_shared_path ("models/stories260K.gguf");
  if (!src)
    return;
  /* BOS + "Once upon a time" in tok512 (golden/stories260K/tokenize.json) and a few more */
  HzToken prompt[N_PROMPT];
  {
    g_autoptr (HzModel) m = load (src, NULL, NULL);
    gsize n = 0;
    g_autofree HzToken *ids = hz_model_tokenize (m, "Once upon a time, there was a little girl",
                                                 -1, TRUE, FALSE, &n);
    g_assert_cmpuint (n, >=, N_PROMPT);
    memcpy (prompt, ids, sizeof prompt);
  }
  g_autofree char *dir = tmp_path ("stories260K");
  hz_test_write_hf_folder (src, dir, HZ_HF_F32, TRUE);
  {
    g_autoptr (HzModel) a = load (src, NULL, NULL);
    g_autoptr (HzModel) b = load (dir, NULL, src);
    assert_same_run (a, b, prompt, "stories260K folder vs GGUF");
  }
  /* ISQ of the folder and of the GGUF: the same tensors (same F32 weights) */
  check_isq (src, "Q8_0", HZ_FTYPE_Q8_0, NULL, prompt, "stories260K");
  check_isq (src, "Q4_K", HZ_FTYPE_Q4_K_M, NULL, prompt, "stories260K");
  check_isq (dir, "Q4_K", HZ_FTYPE_Q4_K_M, src, prompt, "stories260K-folder");
  hz_test_rm_dir (dir);
}

/* hz_quantize_file reports progress per tensor and stops when cancelled, leaving nothing. */
typedef struct {
  GArray       *fractions;
  GCancellable *cancel_after;   /* cancelled at the third report */
} Progress;

static void
on_progress (double fraction, gpointer data)
{
  Progress *pr = data;
  g_array_append_val (pr->fractions, fraction);
  if (pr->cancel_after && pr->fractions->len == 3)
    g_cancellable_cancel (pr->cancel_after);
}

static void
test_quantize_progress_cancel (void)
{
  g_autofree char *vocab = write_vocab ();
  const char *shape = "custom:dim=256,layers=2,heads=4,kv=2,ffn=512,ctx=128";
  g_autofree char *f32 = write_synth ("llama", shape, HZ_FTYPE_ALL_F32, vocab, "prog-f32.gguf");
  g_autofree char *out = tmp_path ("prog-q8.gguf");
  g_autoptr (GError) error = NULL;
  HzQuantizeParams p;
  hz_quantize_params_init (&p);
  p.ftype = HZ_FTYPE_Q8_0;
  p.n_threads = 2;
  Progress pr = { g_array_new (FALSE, FALSE, sizeof (double)), NULL };
  p.progress = on_progress;
  p.progress_data = &pr;
  HzQuantizeStats st;
  g_assert_true (hz_quantize_file (f32, out, &p, &st, &error));
  g_assert_no_error (error);
  /* one report per tensor, increasing, ending at 1 */
  g_assert_cmpuint (pr.fractions->len, ==, st.n_tensors);
  for (guint i = 1; i < pr.fractions->len; i++)
    g_assert_cmpfloat (g_array_index (pr.fractions, double, i), >,
                       g_array_index (pr.fractions, double, i - 1));
  g_assert_cmpfloat (g_array_index (pr.fractions, double, pr.fractions->len - 1), ==, 1.0);
  g_assert_cmpint (g_unlink (out), ==, 0);

  /* cancelled mid-way: G_IO_ERROR_CANCELLED, no output (not even a temporary file) */
  g_autoptr (GCancellable) cancel = g_cancellable_new ();
  g_array_set_size (pr.fractions, 0);
  pr.cancel_after = cancel;
  p.cancellable = cancel;
  g_assert_false (hz_quantize_file (f32, out, &p, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_cmpuint (pr.fractions->len, ==, 3);
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  g_autofree char *dir = g_path_get_dirname (out);
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  for (const char *name; (name = g_dir_read_name (d));)
    g_assert_false (g_str_has_prefix (name, "prog-q8.gguf"));
  g_array_unref (pr.fractions);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_data_func ("/load/folder/llama", "llama", test_synth_folder);
  g_test_add_data_func ("/load/folder/llama+bias", "llama+bias", test_synth_folder);
  g_test_add_data_func ("/load/folder/qwen2", "qwen2", test_synth_folder);
  g_test_add_data_func ("/load/folder/qwen3", "qwen3", test_synth_folder);
  g_test_add_func ("/load/isq", test_synth_isq);
  g_test_add_func ("/load/errors", test_errors);
  g_test_add_func ("/load/quantize-progress-cancel", test_quantize_progress_cancel);
  g_test_add_func ("/load/gguf-image", test_gguf_image);
  g_test_add_func ("/load/shared/stories260K", test_stories260k);
  return g_test_run ();
}
