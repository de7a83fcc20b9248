/* tests/fuzz/gen-fuzz-corpus.c — writes the seed inputs of the safetensors, lora-delta,
 * aggregator-http, tokenizer, hf-folder, learn-dataset, redact-records, config-files,
 * chat-template, jinja, adapter, gguf-lora, hf-index, checkpoint, egress-round and
 * redact-model fuzz corpora (tests/fuzz/corpus/NAME/seed-*) with the project's own
 * writers, so that libFuzzer starts from valid files and mutates them. Each seed is a few
 * KiB at most. Not built by default: `ninja tests/fuzz/gen-fuzz-corpus`, then
 * `gen-fuzz-corpus tests/fuzz/corpus` (it writes into the NAME/ folders there). */
#include <errno.h>
#include <glib.h>
#include <math.h>
#include <string.h>

#include "gguf.h"
#include "tokenizer-private.h"
#include "shapes.h"
#include "quant.h"
#include "safetensors.h"
#include "adapter-io.h"
#include "checkpoint.h"
#include "optim.h"
#include <glib/gstdio.h>

static const char *root;

static void
write_seed (const char *corpus, const char *name, const void *data, gsize len)
{
  g_autofree char *dir = g_build_filename (root, corpus, NULL);
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr (GError) error = NULL;
  if (g_mkdir_with_parents (dir, 0755) != 0 || !g_file_set_contents (path, data, (gssize) len, &error))
    g_error ("%s: %s", path, error ? error->message : g_strerror (errno));
  g_print ("wrote %s (%" G_GSIZE_FORMAT " bytes)\n", path, len);
}

static void
write_bytes_seed (const char *corpus, const char *name, GBytes *b)
{
  gsize n;
  const void *d = g_bytes_get_data (b, &n);
  write_seed (corpus, name, d, n);
}

static void
safetensors_seeds (void)
{
  static const struct { HzStDtype dtype; const char *name; } dts[] = {
    { HZ_ST_F32, "f32" }, { HZ_ST_F16, "f16" }, { HZ_ST_BF16, "bf16" }, { HZ_ST_I64, "i64" },
    { HZ_ST_U8, "u8" }, { HZ_ST_BOOL, "bool" },
  };
  guint8 data[256];
  for (gsize i = 0; i < sizeof data; i++)
    data[i] = (guint8) (i * 37 + 11);
  for (gsize k = 0; k < G_N_ELEMENTS (dts); k++)
    {
      g_autoptr (HzSafetensorsWriter) w = hz_safetensors_writer_new ();
      const gsize es = hz_st_dtype_size (dts[k].dtype);
      const int64_t s2[2] = { 2, 4 }, s1[1] = { 3 }, s3[3] = { 1, 2, 2 };
      g_assert_true (hz_safetensors_writer_add (w, "a.weight", dts[k].dtype, 2, s2, data, 8 * es, NULL));
      g_assert_true (hz_safetensors_writer_add (w, "b", dts[k].dtype, 1, s1, data + 64, 3 * es, NULL));
      g_assert_true (hz_safetensors_writer_add (w, "c.ü", dts[k].dtype, 3, s3, data + 128, 4 * es, NULL));
      hz_safetensors_writer_set_metadata (w, "format", "pt");
      g_autoptr (GBytes) b = hz_safetensors_writer_to_bytes (w);
      g_autofree char *name = g_strdup_printf ("seed-%s.safetensors", dts[k].name);
      write_bytes_seed ("safetensors", name, b);
    }
  /* an empty file (no tensors) and a scalar (0 dims) */
  {
    g_autoptr (HzSafetensorsWriter) w = hz_safetensors_writer_new ();
    g_autoptr (GBytes) b = hz_safetensors_writer_to_bytes (w);
    write_bytes_seed ("safetensors", "seed-empty.safetensors", b);
  }
  static const char json[] = "{\"s\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]}}";
  const guint64 hl = GUINT64_TO_LE (sizeof json - 1);
  g_autoptr (GByteArray) sc = g_byte_array_new ();
  g_byte_array_append (sc, (const guint8 *) &hl, 8);
  g_byte_array_append (sc, (const guint8 *) json, sizeof json - 1);
  g_byte_array_append (sc, data, 4);
  write_seed ("safetensors", "seed-scalar.safetensors", sc->data, sc->len);
}

/* A delta of `cfg` with small values 0.01 * wave(k), k the element index. */
static HzLoraDelta *
seed_delta (HzDeltaConfig *cfg, float (*wave) (float))
{
  static const char base[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  HzLoraDelta *d = hz_lora_delta_new (cfg, base);
  float *v = hz_lora_delta_data (d);
  for (gsize k = 0; k < hz_delta_config_n_elements (cfg); k++)
    v[k] = 0.01f * wave ((float) k);
  return d;
}

static void
lora_delta_seeds (void)
{
  g_autoptr (HzDeltaConfig) cfg = fuzz_lora_delta_config ();
  g_autoptr (HzLoraDelta) d = seed_delta (cfg, sinf);
  float *v = hz_lora_delta_data (d);
  g_autoptr (GBytes) ok = hz_lora_delta_to_wire (d, 3, 1.5);
  write_bytes_seed ("lora-delta", "seed-upload.safetensors", ok);
  g_autoptr (GBytes) agg = hz_lora_delta_to_wire (d, 1, 0);
  write_bytes_seed ("lora-delta", "seed-aggregate.safetensors", agg);
  v[5] = NAN;
  g_autoptr (GBytes) nan = hz_lora_delta_to_wire (d, 2, 1.0);
  write_bytes_seed ("lora-delta", "seed-nan.safetensors", nan);
  g_autofree char *json = hz_delta_config_to_json (cfg);
  write_seed ("lora-delta", "seed-config.json", json, strlen (json));
}

/* Requests to hanzo-aggregator as fuzz-aggregator-http.c serves them (round 1 open, tokens
 * "token-0" and "token-1"). */
static void
aggregator_http_seeds (void)
{
  g_autoptr (HzDeltaConfig) cfg = fuzz_lora_delta_config ();
  g_autoptr (HzLoraDelta) d = seed_delta (cfg, cosf);
  g_autoptr (GBytes) body = hz_lora_delta_to_wire (d, 1, 1.5);
  gsize n;
  const char *b = g_bytes_get_data (body, &n);
  static const char auth[] = "Host: agg\r\nAuthorization: Bearer token-0\r\n";
  static const struct { const char *name, *head; } plain[] = {
    { "seed-get-current", "GET /v1/rounds/current HTTP/1.1\r\n%s\r\n" },
    { "seed-get-aggregate", "GET /v1/rounds/1/aggregate HTTP/1.1\r\n%s\r\n" },
    { "seed-bad-path", "GET /v1/rounds/18446744073709551616/x%%2F..%%2F HTTP/1.0\r\n%s\r\n" },
    { "seed-no-auth", "PUT /v1/rounds/1/update HTTP/1.1\r\nHost: agg\r\nContent-Length: 4\r\n\r\nabcd%s" },
    { "seed-huge-length", "PUT /v1/rounds/1/update HTTP/1.1\r\n%sContent-Length: 99999999999999\r\n\r\nab" },
    { "seed-expect", "PUT /v1/rounds/1/update HTTP/1.1\r\n%sExpect: 100-continue\r\nContent-Length: 10\r\n\r\n0123456789" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (plain); i++)
    {
      g_autofree char *req = g_strdup_printf (plain[i].head, auth);
      write_seed ("aggregator-http", plain[i].name, req, strlen (req));
    }
  /* a valid upload, with Content-Length and chunked */
  g_autoptr (GByteArray) put = g_byte_array_new ();
  g_autofree char *head = g_strdup_printf ("PUT /v1/rounds/1/update HTTP/1.1\r\n%s"
                                           "Content-Type: application/octet-stream\r\n"
                                           "Content-Length: %" G_GSIZE_FORMAT "\r\n\r\n", auth, n);
  g_byte_array_append (put, (const guint8 *) head, strlen (head));
  g_byte_array_append (put, (const guint8 *) b, n);
  write_seed ("aggregator-http", "seed-put-update", put->data, put->len);
  g_autoptr (GByteArray) chunked = g_byte_array_new ();
  g_autofree char *chead = g_strdup_printf ("PUT /v1/rounds/1/update HTTP/1.1\r\n%s"
                                            "Transfer-Encoding: chunked\r\n\r\n", auth);
  g_byte_array_append (chunked, (const guint8 *) chead, strlen (chead));
  for (gsize off = 0; off < n; off += 100)
    {
      const gsize len = MIN ((gsize) 100, n - off);
      g_autofree char *size_line = g_strdup_printf ("%" G_GSIZE_MODIFIER "x\r\n", len);
      g_byte_array_append (chunked, (const guint8 *) size_line, strlen (size_line));
      g_byte_array_append (chunked, (const guint8 *) b + off, len);
      g_byte_array_append (chunked, (const guint8 *) "\r\n", 2);
    }
  g_byte_array_append (chunked, (const guint8 *) "0\r\n\r\n", 5);
  write_seed ("aggregator-http", "seed-put-chunked", chunked->data, chunked->len);
}

/* Vocab-only GGUFs: a small SentencePiece vocab, a byte-level BPE one with merges, and
 * stories260K's (when HZ_SHARED_DIR or ../shared has it). */
static void
write_gguf_seed (const char *corpus, const char *name, HzGgufWriter *w)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) b = hz_gguf_writer_to_bytes (w, &error);
  if (!b)
    g_error ("%s: %s", name, error->message);
  write_bytes_seed (corpus, name, b);
}

static void
tokenizer_seeds (void)
{
  {
    static const char *const tokens[] = {
      "<unk>", "<s>", "</s>", "<0x61>", "<0x62>", "<0xE2>", "<0x96>", "<0x81>",
      "\xe2\x96\x81", "a", "b", "ab", "\xe2\x96\x81" "a", "\xe2\x96\x81" "ab", "<|im_end|>", NULL };
    static const float scores[] = { 0, 0, 0, 0, 0, 0, 0, 0, -1, -2, -2, -3, -4, -5, 0 };
    static const int32_t types[] = { 2, 3, 3, 6, 6, 6, 6, 6, 1, 1, 1, 1, 1, 1, 3 };
    g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
    hz_gguf_writer_set_str (w, "tokenizer.ggml.model", "llama");
    hz_gguf_writer_set_str_arr (w, "tokenizer.ggml.tokens", tokens, G_N_ELEMENTS (types));
    hz_gguf_writer_set_arr (w, "tokenizer.ggml.scores", HZ_GGUF_TYPE_FLOAT32, scores, G_N_ELEMENTS (scores));
    hz_gguf_writer_set_arr (w, "tokenizer.ggml.token_type", HZ_GGUF_TYPE_INT32, types, G_N_ELEMENTS (types));
    hz_gguf_writer_set_u32 (w, "tokenizer.ggml.bos_token_id", 1);
    hz_gguf_writer_set_u32 (w, "tokenizer.ggml.eos_token_id", 2);
    hz_gguf_writer_set_u32 (w, "tokenizer.ggml.padding_token_id", G_MAXUINT32);
    hz_gguf_writer_set_bool (w, "tokenizer.ggml.add_bos_token", TRUE);
    write_gguf_seed ("tokenizer", "seed-spm.gguf", w);
  }
  {
    static const char *const tokens[] = { "a", "b", "c", "\xc4\xa0", "ab", "\xc4\xa0" "ab", "abc",
                                          "<|endoftext|>", "<|im_start|>", NULL };
    static const int32_t types[] = { 1, 1, 1, 1, 1, 1, 1, 3, 3 };
    static const char *const merges[] = { "a b", "\xc4\xa0 ab", "ab c", NULL };
    /* one name per distinct split of the pre-tokenizer table (tokenizer-pretypes.c) */
    gsize n_pre;
    const HzPreInfo *table = hz_pre_infos (&n_pre);
    g_autoptr (GPtrArray) pres = g_ptr_array_new ();
    for (gsize i = 0; i < n_pre; i++)
      {
        gboolean seen = table[i].regexes == NULL;
        for (gsize k = 0; k < i && !seen; k++)
          seen = table[k].regexes == table[i].regexes;
        if (!seen)
          g_ptr_array_add (pres, (gpointer) table[i].name);
      }
    for (guint i = 0; i < pres->len; i++)
      {
        g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
        hz_gguf_writer_set_str (w, "tokenizer.ggml.model", "gpt2");
        hz_gguf_writer_set_str (w, "tokenizer.ggml.pre", pres->pdata[i]);
        hz_gguf_writer_set_str_arr (w, "tokenizer.ggml.tokens", tokens, G_N_ELEMENTS (types));
        hz_gguf_writer_set_arr (w, "tokenizer.ggml.token_type", HZ_GGUF_TYPE_INT32, types, G_N_ELEMENTS (types));
        hz_gguf_writer_set_str_arr (w, "tokenizer.ggml.merges", merges, 3);
        hz_gguf_writer_set_u32 (w, "tokenizer.ggml.eos_token_id", 7);
        hz_gguf_writer_set_u32 (w, "tokenizer.ggml.bos_token_id", 8);
        g_autofree char *name = g_strdup_printf ("seed-bpe-%s.gguf", (char *) pres->pdata[i]);
        write_gguf_seed ("tokenizer", name, w);
      }
  }
  {
    /* WordPiece: word-initial pieces with U+2581, continuations bare (llama.cpp's form) */
    static const char *const tokens[] = { "[PAD]", "[UNK]", "[CLS]", "[SEP]", "\xe2\x96\x81" "a",
                                          "\xe2\x96\x81" "ab", "b", "c", "\xe2\x96\x81" ".", NULL };
    static const int32_t types[] = { 3, 2, 3, 3, 1, 1, 1, 1, 1 };
    g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
    hz_gguf_writer_set_str (w, "tokenizer.ggml.model", "bert");
    hz_gguf_writer_set_str_arr (w, "tokenizer.ggml.tokens", tokens, G_N_ELEMENTS (types));
    hz_gguf_writer_set_arr (w, "tokenizer.ggml.token_type", HZ_GGUF_TYPE_INT32, types, G_N_ELEMENTS (types));
    hz_gguf_writer_set_u32 (w, "tokenizer.ggml.unknown_token_id", 1);
    hz_gguf_writer_set_u32 (w, "tokenizer.ggml.bos_token_id", 2);
    hz_gguf_writer_set_u32 (w, "tokenizer.ggml.seperator_token_id", 3);
    hz_gguf_writer_set_u32 (w, "tokenizer.ggml.padding_token_id", 0);
    write_gguf_seed ("tokenizer", "seed-wpm.gguf", w);
  }
  const char *shared = g_getenv ("HZ_SHARED_DIR") ? g_getenv ("HZ_SHARED_DIR") : "../shared";
  g_autofree char *stories = g_build_filename (shared, "models", "stories260K.gguf", NULL);
  g_autoptr (HzGguf) g = hz_gguf_open (stories, NULL);
  if (g)
    {
      g_autoptr (HzGgufWriter) w = hz_gguf_writer_new ();
      for (int64_t i = 0; i < hz_gguf_n_kv (g); i++)
        {
          HzGgufStr k = hz_gguf_key (g, i);
          if (k.len > 10 && memcmp (k.ptr, "tokenizer.", 10) == 0)
            hz_gguf_writer_copy_kv (w, g, i);
        }
      write_gguf_seed ("tokenizer", "seed-stories260K-vocab.gguf", w);
    }
  else
    g_print ("no %s: seed-stories260K-vocab.gguf not written\n", stories);
}

/* The tensors of the tiny Hugging Face model of config fuzz_hf_config_json (arch) in
 * safetensors writers: tensor i goes to ws[i % n_ws], at `dtype` (F32 or BF16), and when
 * `weight_map` is given, "name": "shard_names[i % n_ws]" is appended to it (comma-separated). */
static void
hf_tensors (const char *arch, HzStDtype dtype, HzSafetensorsWriter **ws, guint n_ws,
            const char *const *shard_names, GString *weight_map)
{
  const int64_t n_embd = 8, n_ff = 16, n_vocab = 8, hd = 4, n_head = 2, n_kv = 1;
  float buf[8 * 16];
  for (gsize i = 0; i < G_N_ELEMENTS (buf); i++)
    buf[i] = 0.01f * (float) ((i * 7) % 13) - 0.05f;
  struct { const char *name; int64_t d0, d1; } ts[] = {
    { "model.embed_tokens.weight", n_vocab, n_embd },
    { "model.norm.weight", n_embd, 0 },
    { "model.layers.0.input_layernorm.weight", n_embd, 0 },
    { "model.layers.0.post_attention_layernorm.weight", n_embd, 0 },
    { "model.layers.0.self_attn.q_proj.weight", n_head * hd, n_embd },
    { "model.layers.0.self_attn.k_proj.weight", n_kv * hd, n_embd },
    { "model.layers.0.self_attn.v_proj.weight", n_kv * hd, n_embd },
    { "model.layers.0.self_attn.o_proj.weight", n_embd, n_head * hd },
    { "model.layers.0.mlp.gate_proj.weight", n_ff, n_embd },
    { "model.layers.0.mlp.up_proj.weight", n_ff, n_embd },
    { "model.layers.0.mlp.down_proj.weight", n_embd, n_ff },
    { "model.layers.0.self_attn.q_proj.bias", n_head * hd, 0 },
    { "model.layers.0.self_attn.q_norm.weight", hd, 0 },
  };
  const gsize es = hz_st_dtype_size (dtype);
  guint k = 0;
  for (gsize i = 0; i < G_N_ELEMENTS (ts); i++)
    {
      if ((strcmp (arch, "qwen2") != 0 && strstr (ts[i].name, ".bias")) ||
          (strcmp (arch, "qwen3") != 0 && strstr (ts[i].name, "q_norm")))
        continue;
      const int64_t shape[2] = { ts[i].d0, ts[i].d1 };
      const guint nd = ts[i].d1 ? 2 : 1;
      const gsize nel = (gsize) (ts[i].d0 * (ts[i].d1 ? ts[i].d1 : 1));
      g_assert_true (hz_safetensors_writer_add (ws[k % n_ws], ts[i].name, dtype, nd, shape, buf,
                                                nel * es, NULL));
      if (weight_map)
        g_string_append_printf (weight_map, "%s\"%s\": \"%s\"", weight_map->len ? ", " : "",
                                ts[i].name, shard_names[k % n_ws]);
      k++;
    }
}

/* Appends the bytes of `w`'s file to `b`. */
static void
append_safetensors (GByteArray *b, HzSafetensorsWriter *w)
{
  g_autoptr (GBytes) st = hz_safetensors_writer_to_bytes (w);
  gsize n;
  const guint8 *d = g_bytes_get_data (st, &n);
  g_byte_array_append (b, d, n);
}

/* Hugging Face folders for fuzz-hf-folder.c: config.json NUL tokenizer.json NUL
 * tokenizer_config.json NUL model.safetensors, one tiny model per architecture. */
static void
hf_folder_seeds (void)
{
  static const char *const archs[][2] = {
    { "llama", ",\"rope_scaling\":{\"rope_type\":\"llama3\",\"factor\":8.0}" },
    { "qwen2", "" },
    { "qwen3", ",\"head_dim\":4" },
  };
  for (gsize a = 0; a < G_N_ELEMENTS (archs); a++)
    {
      const char *arch = archs[a][0];
      g_autofree char *cfg = fuzz_hf_config_json (arch, archs[a][1]);
      g_autoptr (HzSafetensorsWriter) w = hz_safetensors_writer_new ();
      hf_tensors (arch, a == 1 ? HZ_ST_F32 : HZ_ST_BF16, &w, 1, NULL, NULL);
      g_autoptr (GByteArray) in = g_byte_array_new ();
      g_byte_array_append (in, (const guint8 *) cfg, strlen (cfg) + 1);
      /* each part with its NUL */
      g_byte_array_append (in, (const guint8 *) fuzz_hf_tokenizer_json,
                           strlen (fuzz_hf_tokenizer_json) + 1);
      g_byte_array_append (in, (const guint8 *) fuzz_hf_tokenizer_config_json,
                           strlen (fuzz_hf_tokenizer_config_json) + 1);
      append_safetensors (in, w);
      g_autofree char *name = g_strdup_printf ("seed-%s", arch);
      write_seed ("hf-folder", name, in->data, in->len);
    }
  /* the qwen2 model with the pre-tokenizers of other models, and refused ones */
  static const char *const pre_tokenizers[][2] = {
    { "gpt2", "\"pre_tokenizer\":{\"type\":\"ByteLevel\",\"add_prefix_space\":false}" },
    { "smollm", "\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":"
      "\"Digits\",\"individual_digits\":true},{\"type\":\"ByteLevel\",\"use_regex\":true}]}" },
    { "deepseek-v3", "\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":["
      "{\"type\":\"Split\",\"pattern\":{\"Regex\":\"\\\\p{N}{1,3}\"},\"behavior\":\"Isolated\"},"
      "{\"type\":\"Split\",\"pattern\":{\"Regex\":\"[\xe4\xb8\x80-\xe9\xbe\xa5\xe3\x81\x80-"
      "\xe3\x82\x9f\xe3\x82\xa0-\xe3\x83\xbf]+\"},\"behavior\":\"Isolated\"},"
      "{\"type\":\"ByteLevel\",\"use_regex\":false}]}" },
    { "punctuation", "\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":["
      "{\"type\":\"Punctuation\",\"behavior\":\"Contiguous\"},{\"type\":\"ByteLevel\"}]}" },
    { "metaspace", "\"pre_tokenizer\":{\"type\":\"Metaspace\",\"replacement\":\"\xe2\x96\x81\"}" },
    { "nfkc", "\"normalizer\":{\"type\":\"NFKC\"},\"pre_tokenizer\":{\"type\":\"ByteLevel\"}" },
  };
  for (gsize p = 0; p < G_N_ELEMENTS (pre_tokenizers); p++)
    {
      g_autofree char *cfg = fuzz_hf_config_json ("qwen2", "");
      g_autoptr (HzSafetensorsWriter) w = hz_safetensors_writer_new ();
      hf_tensors ("qwen2", HZ_ST_F32, &w, 1, NULL, NULL);
      /* the fixed tokenizer.json with its normalizer/pre_tokenizer replaced */
      const char *model = strstr (fuzz_hf_tokenizer_json, "\"model\":");
      g_autofree char *tok = g_strdup_printf ("{%s,%s", pre_tokenizers[p][1], model);
      g_autoptr (GByteArray) in = g_byte_array_new ();
      g_byte_array_append (in, (const guint8 *) cfg, strlen (cfg) + 1);
      g_byte_array_append (in, (const guint8 *) tok, strlen (tok) + 1);
      g_byte_array_append (in, (const guint8 *) fuzz_hf_tokenizer_config_json,
                           strlen (fuzz_hf_tokenizer_config_json) + 1);
      append_safetensors (in, w);
      g_autofree char *name = g_strdup_printf ("seed-qwen2-pre-%s", pre_tokenizers[p][0]);
      write_seed ("hf-folder", name, in->data, in->len);
    }
}

/* Sharded folders for fuzz-hf-index.c (the qwen2 config of the target): index.json NUL
 * uint32 LE length of shard 1, shard 1, shard 2, the tensors alternating between the shards, and one shard only
 * (every tensor in shard 1, shard 2 absent); F32 and BF16. */
static void
hf_index_seeds (void)
{
  static const char *const shards[] = {
    "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
  };
  for (guint n_ws = 1; n_ws <= 2; n_ws++)
    for (int dt = 0; dt < 2; dt++)
      {
        HzSafetensorsWriter *ws[2] = { hz_safetensors_writer_new (), hz_safetensors_writer_new () };
        g_autoptr (GString) map = g_string_new (NULL);
        hf_tensors ("qwen2", dt ? HZ_ST_BF16 : HZ_ST_F32, ws, n_ws, shards, map);
        g_autofree char *index = g_strdup_printf (
          "{\"metadata\": {\"total_size\": 2048}, \"weight_map\": {%s}}", map->str);
        g_autoptr (GByteArray) in = g_byte_array_new ();
        g_byte_array_append (in, (const guint8 *) index, strlen (index) + 1);
        const guint at = in->len;
        g_byte_array_append (in, (const guint8 *) "\0\0\0\0", 4);   /* shard 1's length */
        append_safetensors (in, ws[0]);
        const guint32 n1 = GUINT32_TO_LE (in->len - at - 4);
        memcpy (in->data + at, &n1, 4);
        if (n_ws == 2)
          append_safetensors (in, ws[1]);
        g_autofree char *name = g_strdup_printf ("seed-%u-shard%s-%s", n_ws, n_ws > 1 ? "s" : "",
                                                 dt ? "bf16" : "f32");
        write_seed ("hf-index", name, in->data, in->len);
        hz_safetensors_writer_free (ws[0]);
        hz_safetensors_writer_free (ws[1]);
      }
}

/* JSONL training data for fuzz-learn-dataset.c: every record shape of learner/dataset.h. */
static void
learn_dataset_seeds (void)
{
  static const char all[] =
    "{\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\","
    "\"content\":\"Hi\"},{\"role\":\"assistant\",\"content\":\"Hello!\"},{\"role\":\"user\","
    "\"content\":\"2+2?\"},{\"role\":\"assistant\",\"content\":\"4\"}]}\n"
    "{\"prompt\":\"Name a color\",\"response\":\"Blue\",\"system\":\"Answer in one word.\"}\n"
    "{\"prompt\":\"Capital of France?\",\"chosen\":\"Paris\",\"rejected\":\"Lyon\"}\n"
    "{\"prompt\":\"Say hi\",\"completion\":\"hi\",\"rating\":1}\n"
    "{\"prompt\":\"Say hi\",\"completion\":\"go away\",\"rating\":-1}\n"
    "{\"prompt\":\"3*7?\",\"answer\":\"21\"}\n"
    "{\"prompt\":\"Open question\"}\n\n";
  write_seed ("learn-dataset", "seed-all-shapes.jsonl", all, sizeof all - 1);
  static const char bad[] = "{\"messages\":[{\"role\":\"robot\",\"content\":\"x\"}]}\n";
  write_seed ("learn-dataset", "seed-bad-role.jsonl", bad, sizeof bad - 1);
}

/* A clients file and a night window for fuzz-config-files.c. */
static void
config_files_seeds (void)
{
  static const char ok[] =
    "# hanzo-aggregator clients: id sha256(token)\n"
    "alice 2bd806c97f0e00af1a1fc3328fa763a9269723c8db8fac4f93af71db186d6e90\n"
    "  bob\t81b637d8fcd2c6da6359e6963113a1170de795e4b725b84d1e0b4cfd9ec58ce9  \n\n"
    "\0" "22:30-06:15";
  write_seed ("config-files", "seed-ok", ok, sizeof ok - 1);
  static const char bad[] =
    "alice 2bd806c97f0e00af1a1fc3328fa763a9269723c8db8fac4f93af71db186d6e90\n"
    "alice 2bd806c97f0e00af1a1fc3328fa763a9269723c8db8fac4f93af71db186d6e90 extra\n"
    "\0" "24:00-02:00";
  write_seed ("config-files", "seed-bad", bad, sizeof bad - 1);
}

/* Records of `hanzo redact --jsonl/--eval/--pred` for fuzz-redact-records.c. */
static void
redact_records_seeds (void)
{
  static const char eval[] =
    "{\"id\":\"a1\",\"text\":\"Mail bob@example.com, call Mary Smith.\",\"spans\":[{\"start\":5,"
    "\"end\":20,\"label\":\"EMAIL\"},{\"start\":27,\"end\":37,\"label\":\"PERSON\"}]}\n"
    "{\"id\":\"a2\",\"text\":\"caf\xc3\xa9 \xf0\x9f\x99\x82 DE89 3704 0044 0532 0130 00\",\"spans\":"
    "[{\"start\":7,\"end\":34,\"label\":\"IBAN\"}],\"source\":\"handmade\"}\r\n"
    "\n{\"id\":\"a3\",\"text\":\"nothing here\",\"spans\":null}\n";
  write_seed ("redact-records", "seed-eval.jsonl", eval, sizeof eval - 1);
  static const char pred[] =
    "{\"id\":\"a1\",\"spans\":[{\"start\":5,\"end\":20,\"label\":\"NEW_LABEL\"}]}\n";
  write_seed ("redact-records", "seed-pred.jsonl", pred, sizeof pred - 1);
}

static void
chat_template_seeds (void)
{
  /* pieces of the templates llama.cpp's detection keys on, with a model name after a NUL */
  static const char *const seeds[][2] = {
    { "chatml", "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}" },
    { "llama3", "{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + message['content'] | trim + '<|eot_id|>' }}" },
    { "llama2", "{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}<<SYS>>\\n" },
    { "gemma", "{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}" },
    { "phi3", "{{'<|user|>' + '\\n' + message['content'] + '<|end|>' + '\\n' + '<|assistant|>' + '\\n'}}" },
    { "zephyr", "{{ '<|user|>\\n' + message['content'] + eos_token }}{{ '<|assistant|>' }}" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (seeds); i++)
    {
      g_autofree char *name = g_strdup_printf ("seed-%s", seeds[i][0]);
      g_autoptr (GByteArray) b = g_byte_array_new ();
      g_byte_array_append (b, (const guint8 *) seeds[i][1], strlen (seeds[i][1]));
      g_byte_array_append (b, (const guint8 *) "\0", 1);
      g_byte_array_append (b, (const guint8 *) seeds[i][0], strlen (seeds[i][0]));
      write_seed ("chat-template", name, b->data, b->len);
    }
  static const char bad_utf8[] = "  \xff\xfe<|im_start|>\xc3\x28 \x01\x7f  ";
  write_seed ("chat-template", "seed-bad-utf8", bad_utf8, sizeof bad_utf8 - 1);
}

/* The jinja corpus: TEMPLATE NUL VARIABLES-JSON. The 35 real chat templates of
 * ../shared/chat-templates (each with one of its fixtures, in turn), and small templates
 * for the constructs real ones use rarely, with the fuzz target's own variables. */
static void
jinja_seeds (void)
{
  static const char *const snippets[][2] = {
    { "whitespace", "  {%- if 1 +%}\n  a {#- c -#}\n{%+ raw %}{{ x }}{% endraw -%}\n {{- ' b ' }}  {% endif %}\n" },
    { "macro-call", "{% macro m(a, b=2) %}{{ a }}{{ b }}{{ varargs }}{{ kwargs }}{{ caller(a) }}{% endmacro %}"
                    "{% call(x) m(1, 3, 4, k=5) %}[{{ x }}]{% endcall %}" },
    { "loops", "{% for k, v in {'a': [1, 2], 'b': {}}.items() if v recursive %}{{ loop.index }}{{ loop.cycle('x', 'y') }}"
               "{{ loop.previtem }}{% if v is mapping %}{{ loop(v.items()) }}{% endif %}{% else %}none{% endfor %}"
               "{% for i in range(5) %}{% if i is odd %}{% continue %}{% endif %}{% if i > 3 %}{% break %}{% endif %}{{ i }}{% endfor %}" },
    { "filters", "{{ messages|selectattr('role', 'equalto', 'user')|map(attribute='content')|join(', ')|trim|upper }}"
                 "{{ tools|tojson(indent=2, sort_keys=true) }}{{ [3, 1, 2]|sort(reverse=true)|unique|list }}"
                 "{{ {'b': 1, 'a': 2}|dictsort }}{{ 'x\ny'|indent(2, true) }}{{ '%s-%05.1f' % ('a', 2.25) }}" },
    { "methods", "{% set c = messages[1].content %}{{ c.split(' ')[1:]|list }}{{ c.strip().startswith('Hi') }}"
                 "{{ c.replace('<', '&lt;') }}{{ '{0}:{x!r:>8}'.format(1, x=c[:3]) }}{{ c[::-1] }}{{ c|length }}" },
    { "namespace", "{% set ns = namespace(n=0, s='') %}{% for m in messages %}{% set ns.n = ns.n + 1 %}"
                   "{% set ns.s = ns.s ~ m.role[0] %}{% endfor %}{% set b %}{{ ns.n }}{% endset %}{{ b }}{{ ns.s }}"
                   "{% with q = ns.n * 2 %}{{ q }}{% endwith %}{% filter lower %}ABC{% endfilter %}" },
    { "errors", "{% if messages[0].role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (snippets); i++)
    {
      g_autofree char *name = g_strdup_printf ("seed-%s", snippets[i][0]);
      g_autofree char *text = g_strcompress (snippets[i][1]);
      write_seed ("jinja", name, text, strlen (text));
    }
  const char *shared = g_getenv ("HZ_SHARED_DIR") ? g_getenv ("HZ_SHARED_DIR") : "../shared";
  g_autofree char *dir = g_build_filename (shared, "chat-templates", "templates", NULL);
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  static const char *const fixtures[] = { "basic", "nosys", "single", "tools" };
  guint k = 0;
  for (const char *f; d && (f = g_dir_read_name (d));)
    {
      if (!g_str_has_suffix (f, ".jinja"))
        continue;
      g_autofree char *tpath = g_build_filename (dir, f, NULL);
      g_autofree char *fpath = g_strdup_printf ("%s/chat-templates/fixtures/%s.json", shared, fixtures[k++ % 4]);
      g_autofree char *tmpl = NULL, *vars = NULL;
      gsize tn, vn;
      if (!g_file_get_contents (tpath, &tmpl, &tn, NULL) || !g_file_get_contents (fpath, &vars, &vn, NULL))
        continue;
      g_autoptr (GByteArray) b = g_byte_array_new ();
      g_byte_array_append (b, (const guint8 *) tmpl, (guint) tn);
      g_byte_array_append (b, (const guint8 *) "\0", 1);
      g_byte_array_append (b, (const guint8 *) vars, (guint) vn);
      g_autofree char *stem = g_strndup (f, strlen (f) - strlen (".jinja"));
      g_autofree char *name = g_strdup_printf ("seed-%s", stem);
      write_seed ("jinja", name, b->data, b->len);
    }
}

/* Adapters of rank r on `targets` for the model shape of shapes.c, parameters
 * 0.01 * ((i * 7) % 13) - 0.05. */
static HzLora *
seed_lora (guint32 targets, int32_t r)
{
  const HzHparams hp = fuzz_adapter_hparams ();
  HzLoraConfig c;
  hz_lora_config_init (&c);
  c.r = r;
  c.targets = targets;
  g_autoptr (GError) error = NULL;
  HzLora *lora = hz_lora_alloc (&hp, &c, FALSE, &error);
  g_assert_no_error (error);
  for (gsize i = 0; i < lora->n_params; i++)
    lora->params[i] = 0.01f * (float) ((i * 7) % 13) - 0.05f;
  return lora;
}

/* adapter_config.json, NUL, adapter_model.safetensors (F32 or BF16) for the model shape of
 * fuzz-adapter.c, with the tensors hz_lora_alloc() lays out for that config. */
static void
adapter_seed (const char *name, const char *json, guint32 targets, int32_t r, HzStDtype dtype)
{
  const HzHparams hp = fuzz_adapter_hparams ();
  g_autoptr (HzLora) lora = seed_lora (targets, r);
  g_autoptr (HzSafetensorsWriter) w = hz_safetensors_writer_new ();
  for (int32_t l = 0; l < hp.n_layer; l++)
    for (int t = 0; t < HZ_LORA_N_TARGETS; t++)
      {
        const HzLoraSlot *sl = hz_lora_slot (lora, l, (HzLoraTarget) t);
        if (!sl)
          continue;
        const int64_t sa[2] = { r, sl->n_in }, sb[2] = { sl->n_out, r };
        const gsize na = (gsize) (r * sl->n_in), nb = (gsize) (sl->n_out * r);
        g_autofree guint16 *ha = g_new (guint16, na), *hb = g_new (guint16, nb);
        for (gsize i = 0; i < na; i++)
          ha[i] = GUINT16_TO_LE (hz_fp32_to_bf16 (lora->params[sl->off_a + i]));
        for (gsize i = 0; i < nb; i++)
          hb[i] = GUINT16_TO_LE (hz_fp32_to_bf16 (lora->params[sl->off_b + i]));
        g_autofree char *ka = hz_lora_peft_key (l, (HzLoraTarget) t, 'A');
        g_autofree char *kb = hz_lora_peft_key (l, (HzLoraTarget) t, 'B');
        const gboolean f32 = dtype == HZ_ST_F32;
        g_assert_true (hz_safetensors_writer_add (w, ka, dtype, 2, sa,
                                                  f32 ? (const void *) (lora->params + sl->off_a) : ha,
                                                  na * hz_st_dtype_size (dtype), NULL));
        g_assert_true (hz_safetensors_writer_add (w, kb, dtype, 2, sb,
                                                  f32 ? (const void *) (lora->params + sl->off_b) : hb,
                                                  nb * hz_st_dtype_size (dtype), NULL));
      }
  hz_safetensors_writer_set_metadata (w, "format", "pt");
  g_autoptr (GBytes) st = hz_safetensors_writer_to_bytes (w);
  g_autoptr (GByteArray) b = g_byte_array_new ();
  g_byte_array_append (b, (const guint8 *) json, strlen (json));
  g_byte_array_append (b, (const guint8 *) "", 1);
  g_byte_array_append (b, g_bytes_get_data (st, NULL), g_bytes_get_size (st));
  write_seed ("adapter", name, b->data, b->len);
}

static void
adapter_seeds (void)
{
  adapter_seed ("seed-qv-f32", "{\"peft_type\": \"LORA\", \"r\": 2, \"lora_alpha\": 4, "
                "\"target_modules\": [\"q_proj\", \"v_proj\"], \"bias\": \"none\"}",
                HZ_LORA_BIT (HZ_LORA_Q) | HZ_LORA_BIT (HZ_LORA_V), 2, HZ_ST_F32);
  adapter_seed ("seed-all-bf16", "{\"peft_type\": \"LORA\", \"r\": 1, \"lora_alpha\": 2.5, "
                "\"use_rslora\": true, \"target_modules\": \"all-linear\", "
                "\"layers_to_transform\": null, \"rank_pattern\": {}}",
                HZ_LORA_TARGETS_ALL, 1, HZ_ST_BF16);
  /* JSON only: checked against the safetensors file of the previous input */
  static const char json_only[] = "{\"r\": 2, \"target_modules\": [\"q_proj\", \"v_proj\"]}";
  write_seed ("adapter", "seed-json-only", json_only, sizeof json_only - 1);
}

/* GGUF LoRA adapters for fuzz-gguf-lora.c, written by the learner's writer
 * (hz_lora_save_gguf) for the model shape of shapes.c: q and v at F32, every target at F16,
 * and rank 1 on the FFN at BF16. */
static void
gguf_lora_seeds (void)
{
  static const struct { const char *name; guint32 targets; int32_t r; HzType type; } seeds[] = {
    { "seed-qv-f32.gguf", HZ_LORA_BIT (HZ_LORA_Q) | HZ_LORA_BIT (HZ_LORA_V), 2, HZ_TYPE_F32 },
    { "seed-all-f16.gguf", HZ_LORA_TARGETS_ALL, 2, HZ_TYPE_F16 },
    { "seed-ffn-bf16.gguf", HZ_LORA_BIT (HZ_LORA_GATE) | HZ_LORA_BIT (HZ_LORA_UP) |
                            HZ_LORA_BIT (HZ_LORA_DOWN), 1, HZ_TYPE_BF16 },
  };
  g_autofree char *tmp = g_dir_make_tmp ("hz-gen-gguf-lora-XXXXXX", NULL);
  g_assert_nonnull (tmp);
  g_autofree char *path = g_build_filename (tmp, "a.gguf", NULL);
  for (gsize k = 0; k < G_N_ELEMENTS (seeds); k++)
    {
      g_autoptr (HzLora) lora = seed_lora (seeds[k].targets, seeds[k].r);
      g_autoptr (GError) error = NULL;
      g_assert_true (hz_lora_save_gguf (lora, path, seeds[k].type, &error));
      g_assert_no_error (error);
      g_autofree char *data = NULL;
      gsize len = 0;
      g_assert_true (g_file_get_contents (path, &data, &len, NULL));
      write_seed ("gguf-lora", seeds[k].name, data, len);
      g_unlink (path);
    }
  g_rmdir (tmp);
}

/* The learner's checkpoint file (optimizer.bin) for fuzz-checkpoint.c, written by
 * hz_checkpoint_save with the target's adapters and tag, after 0 and after 3 AdamW steps. */
static void
checkpoint_seeds (void)
{
  g_autofree char *tmp = g_dir_make_tmp ("hz-gen-ckpt-XXXXXX", NULL);
  g_assert_nonnull (tmp);
  g_autofree char *path = g_build_filename (tmp, "optimizer.bin", NULL);
  for (int steps = 0; steps <= 3; steps += 3)
    {
      g_autoptr (HzLora) lora = seed_lora (FUZZ_CHECKPOINT_TARGETS, FUZZ_CHECKPOINT_RANK);
      HzAdamWParams ap;
      hz_adamw_params_init (&ap);
      HzAdamW *opt = hz_adamw_new (lora->n_params, &ap);
      g_autofree float *grads = g_new (float, lora->n_params);
      for (gsize i = 0; i < lora->n_params; i++)
        grads[i] = 0.1f * (float) ((i * 5) % 7) - 0.3f;
      for (int s = 0; s < steps; s++)
        hz_adamw_step (opt, lora->params, grads, 1e-3);
      g_autoptr (GError) error = NULL;
      g_assert_true (hz_checkpoint_save (tmp, lora, opt, FUZZ_CHECKPOINT_TAG, &error));
      g_assert_no_error (error);
      g_autofree char *data = NULL;
      gsize len = 0;
      g_assert_true (g_file_get_contents (path, &data, &len, NULL));
      g_autofree char *name = g_strdup_printf ("seed-step%d", steps);
      write_seed ("checkpoint", name, data, len);
      hz_adamw_free (opt);
    }
  hz_checkpoint_clear (tmp);
}

/* Replies of the aggregation server for fuzz-egress-round.c: the current round, an upload
 * accepted and a duplicate, a refusal, and members of the wrong kind. */
static void
egress_round_seeds (void)
{
  static const char sha[] = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
  g_autofree char *accepted = g_strdup_printf ("{\"status\": \"accepted\", \"round\": 3, "
                                               "\"sha256\": \"%s\"}", sha);
  g_autofree char *duplicate = g_strdup_printf ("{\"status\":\"duplicate\",\"round\":7,"
                                                "\"sha256\":\"%s\",\"extra\":[1,{}]}", sha);
  const char *const seeds[][2] = {
    { "seed-current", "{\"round\": 3, \"state\": \"open\", \"clients\": 12}" },
    { "seed-accepted", accepted },
    { "seed-duplicate", duplicate },
    { "seed-refused", "{\"error\": \"round 2 is closed\"}" },
    { "seed-kinds", "{\"round\": {\"n\": 3}, \"status\": [\"accepted\"], \"sha256\": null}" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (seeds); i++)
    write_seed ("egress-round", seeds[i][0], seeds[i][1], strlen (seeds[i][1]));
}

/* selector byte + model answer for fuzz-redact-model.c (the texts of shapes.c): JSON with
 * right, wrong and no offsets, JSON wrapped in prose and a code fence, the line form, and
 * labels it does not know. */
static void
redact_model_seeds (void)
{
  const struct { const char *name; guint8 text; const char *answer; } seeds[] = {
    { "seed-json", 0, "[{\"label\": \"PERSON\", \"text\": \"Ann Lee\", \"start\": 0}, "
                      "{\"label\": \"PERSON\", \"text\": \"Bo\", \"start\": 11}, "
                      "{\"label\": \"LOCATION\", \"text\": \"Springfield\", \"start\": 99}, "
                      "{\"label\": \"PERSON\", \"text\": \"J\u00fcrgen Gro\u00df\"}]" },
    { "seed-prose", 0, "Here you go:\n```json\n[{\"type\": \"EMAIL_ADDRESS\", \"text\": "
                       "\"ann@example.org\"}, {\"label\": \"STREET_ADDRESS\", \"text\": "
                       "\"12 Elm Street\", \"start\": 18}]\n```\nDone." },
    { "seed-lines", 0, "- PERSON: Ann Lee\n2. LOCATION: \"M\xc3\xbcnchen\"\n* PHONE: +1 555 0100\n"
                       "DATE_TIME: 3 May 2021\nPERSON: Nobody Here\nnonsense" },
    { "seed-cases", 1, "[{\"label\": \"PERSON\", \"text\": \"ann\", \"start\": 4}, "
                       "{\"label\": \"PERSON\", \"text\": \"ANN\"}, {\"label\": \"PERSON\", "
                       "\"text\": \"Ann\", \"start\": 1000}]" },
    { "seed-bytes", 2, "PERSON: Bo\nLOCATION: \xe6\x9d\xb1\xe4\xba\xac\nPERSON: Lee" },
    { "seed-junk", 3, "[{\"label\": \"SPACESHIP\", \"text\": \"Ann\"}, 42, \"PERSON\", "
                      "{\"label\": 7, \"text\": [\"Bo\"]}, {\"label\": \"PERSON\", \"text\": \"nn Le\"}]" },
    { "seed-empty", 0, "[]" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (seeds); i++)
    {
      g_autoptr (GByteArray) b = g_byte_array_new ();
      g_byte_array_append (b, &seeds[i].text, 1);
      g_byte_array_append (b, (const guint8 *) seeds[i].answer, strlen (seeds[i].answer));
      write_seed ("redact-model", seeds[i].name, b->data, b->len);
    }
}

int
main (int argc, char **argv)
{
  if (argc != 2)
    {
      g_printerr ("usage: %s CORPUS-ROOT (tests/fuzz/corpus)\n", argv[0]);
      return 2;
    }
  root = argv[1];
  safetensors_seeds ();
  lora_delta_seeds ();
  aggregator_http_seeds ();
  tokenizer_seeds ();
  hf_folder_seeds ();
  learn_dataset_seeds ();
  redact_records_seeds ();
  config_files_seeds ();
  chat_template_seeds ();
  jinja_seeds ();
  adapter_seeds ();
  gguf_lora_seeds ();
  hf_index_seeds ();
  checkpoint_seeds ();
  egress_round_seeds ();
  redact_model_seeds ();
  return 0;
}
