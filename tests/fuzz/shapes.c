/* tests/fuzz/shapes.c — the fixed shapes of shapes.h. */
#include "shapes.h"

HzDeltaConfig *
fuzz_lora_delta_config (void)
{
  HzDeltaConfig *cfg = hz_delta_config_new (2, 4);
  for (int l = 0; l < 2; l++)
    for (int p = 0; p < 2; p++)
      {
        g_autofree char *a = g_strdup_printf ("layers.%d.%s.lora_A.weight", l, p ? "v" : "q");
        g_autofree char *b = g_strdup_printf ("layers.%d.%s.lora_B.weight", l, p ? "v" : "q");
        const int64_t sa[2] = { 2, 16 }, sb[2] = { 16, 2 };
        hz_delta_config_add_tensor (cfg, a, 2, sa, NULL);
        hz_delta_config_add_tensor (cfg, b, 2, sb, NULL);
      }
  return cfg;
}

HzHparams
fuzz_adapter_hparams (void)
{
  HzHparams hp = { 0 };
  hp.arch = HZ_ARCH_LLAMA;
  hp.n_vocab = 64;
  hp.n_embd = 16;
  hp.n_layer = 2;
  hp.n_head = 2;
  hp.n_head_kv = 1;
  hp.head_dim_k = hp.head_dim_v = 8;
  hp.n_ff = 24;
  hp.n_rot = 8;
  hp.rope_mode = HZ_ROPE_NORM;
  return hp;
}

const char fuzz_hf_tokenizer_json[] =
  "{\"normalizer\":{\"type\":\"NFC\"},\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":["
  "{\"type\":\"Split\",\"pattern\":{\"Regex\":\"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}"
  "\\\\p{N}]?\\\\p{L}+|\\\\p{N}| ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|"
  "\\\\s+(?!\\\\S)|\\\\s+\"},\"behavior\":\"Isolated\",\"invert\":false},"
  "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"use_regex\":false}]},"
  "\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1,\"\xc4\xa0\":2,\"ab\":3,"
  "\"\xc4\xa0" "ab\":4,\"c\":5},\"merges\":[\"a b\",\"\xc4\xa0 ab\"]},\"added_tokens\":"
  "[{\"id\":6,\"content\":\"<|endoftext|>\",\"special\":true},{\"id\":7,\"content\":"
  "\"<|im_end|>\",\"special\":true}]}";

const char fuzz_hf_tokenizer_config_json[] =
  "{\"bos_token\":\"<|endoftext|>\",\"eos_token\":{\"content\":\"<|im_end|>\"},"
  "\"add_bos_token\":false,\"chat_template\":\"{% for m in messages %}<|im_start|>{{ m['role'] }}"
  "\\n{{ m['content'] }}<|im_end|>\\n{% endfor %}\"}";

char *
fuzz_hf_config_json (const char *model_type, const char *extra)
{
  return g_strdup_printf (
    "{\"model_type\":\"%s\",\"hidden_size\":8,\"intermediate_size\":16,"
    "\"num_hidden_layers\":1,\"num_attention_heads\":2,\"num_key_value_heads\":1,"
    "\"max_position_embeddings\":64,\"rms_norm_eps\":1e-5,\"rope_theta\":10000.0,"
    "\"vocab_size\":8,\"tie_word_embeddings\":true%s}", model_type, extra);
}

