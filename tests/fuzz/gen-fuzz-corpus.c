/* tests/fuzz/gen-fuzz-corpus.c — writes the seed inputs of the safetensors, lora-delta,
 * chat-template and adapter fuzz corpora (tests/fuzz/corpus/NAME/seed-*) with the project's own
 * writers, so that libFuzzer starts from valid files and mutates them. Each seed is a few
 * KiB at most. Not built by default: `ninja tests/fuzz/gen-fuzz-corpus`, then
 * `gen-fuzz-corpus tests/fuzz/corpus` (it writes into the NAME/ folders there). */
#include <errno.h>
#include <glib.h>
#include <math.h>
#include <string.h>

#include "shapes.h"
#include "quant.h"
#include "safetensors.h"

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

static void
lora_delta_seeds (void)
{
  g_autoptr (HzDeltaConfig) cfg = fuzz_lora_delta_config ();
  static const char base[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  g_autoptr (HzLoraDelta) d = hz_lora_delta_new (cfg, base);
  float *v = hz_lora_delta_data (d);
  for (gsize k = 0; k < hz_delta_config_n_elements (cfg); k++)
    v[k] = 0.01f * sinf ((float) k);
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

/* adapter_config.json, NUL, adapter_model.safetensors (F32 or BF16) for the model shape of
 * fuzz-adapter.c, with the tensors hz_lora_alloc() lays out for that config. */
static void
adapter_seed (const char *name, const char *json, guint32 targets, int32_t r, HzStDtype dtype)
{
  const HzHparams hp = fuzz_adapter_hparams ();
  HzLoraConfig c;
  hz_lora_config_init (&c);
  c.r = r;
  c.targets = targets;
  g_autoptr (GError) error = NULL;
  g_autoptr (HzLora) lora = hz_lora_alloc (&hp, &c, FALSE, &error);
  g_assert_no_error (error);
  for (gsize i = 0; i < lora->n_params; i++)
    lora->params[i] = 0.01f * (float) ((i * 7) % 13) - 0.05f;
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
  chat_template_seeds ();
  adapter_seeds ();
  return 0;
}
