/* tests/engine/test-chat-template.c — chat template rendering and detection.
 *
 * Rendering: the conversation of llama.cpp's tests/test-chat-template.cpp (system + user +
 * assistant + user + assistant + user, add_generation_prompt true) compared with the
 * expected strings given there for the template of each family. Detection: the Jinja
 * sources of those same test cases, the tokenizer.chat_template of the real GGUF
 * vocabularies in ../shared/golden/tokenizer/, and model names. */
#include <hanzo/engine.h>
#include "../hz-test-util.h"
#include "gguf.h"

#include <string.h>

static const HzChatMessage conversation[] = {
  { "system", "You are a helpful assistant" },
  { "user", "Hello" },
  { "assistant", "Hi there" },
  { "user", "Who are you" },
  { "assistant", "   I am an assistant   " },
  { "user", "Another question" },
};

static void
assert_render (HzChatTemplate t, const HzChatMessage *msgs, gsize n, gboolean gen,
               const char *expected)
{
  g_autofree char *got = hz_chat_template_apply (t, msgs, n, gen);
  g_assert_nonnull (got);
  if (strcmp (got, expected) != 0)
    {
      g_autofree char *eg = g_strescape (got, NULL);
      g_autofree char *ee = g_strescape (expected, NULL);
      g_error ("template %s:\n  got      \"%s\"\n  expected \"%s\"", hz_chat_template_name (t),
               eg, ee);
    }
}

#define RENDER_CONV(t, expected) \
  assert_render ((t), conversation, G_N_ELEMENTS (conversation), TRUE, (expected))

/* ------------------------------------------------- rendering (llama.cpp data) */

static void
test_render_chatml (void)
{
  /* llama.cpp case "teknium/OpenHermes-2.5-Mistral-7B". */
  RENDER_CONV (HZ_CHAT_TEMPLATE_CHATML,
               "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n"
               "<|im_start|>user\nHello<|im_end|>\n"
               "<|im_start|>assistant\nHi there<|im_end|>\n"
               "<|im_start|>user\nWho are you<|im_end|>\n"
               "<|im_start|>assistant\n   I am an assistant   <|im_end|>\n"
               "<|im_start|>user\nAnother question<|im_end|>\n"
               "<|im_start|>assistant\n");
  /* Without the generation prompt the last turn is closed and nothing follows. */
  assert_render (HZ_CHAT_TEMPLATE_CHATML, conversation, 2, FALSE,
                 "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n"
                 "<|im_start|>user\nHello<|im_end|>\n");
}

static void
test_render_llama3 (void)
{
  /* llama.cpp case "Llama-3" (contents trimmed). */
  RENDER_CONV (HZ_CHAT_TEMPLATE_LLAMA3,
               "<|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant<|eot_id|>"
               "<|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|>"
               "<|start_header_id|>assistant<|end_header_id|>\n\nHi there<|eot_id|>"
               "<|start_header_id|>user<|end_header_id|>\n\nWho are you<|eot_id|>"
               "<|start_header_id|>assistant<|end_header_id|>\n\nI am an assistant<|eot_id|>"
               "<|start_header_id|>user<|end_header_id|>\n\nAnother question<|eot_id|>"
               "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

static void
test_render_llama2 (void)
{
  /* llama.cpp case "TheBloke/FusionNet_34Bx2_MoE-AWQ", expected_output_jinja: Meta's Llama 2
   * chat layout (system in <<SYS>>, " reply </s>", "<s>" before each later [INST]). */
  RENDER_CONV (HZ_CHAT_TEMPLATE_LLAMA2,
               "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]"
               " Hi there </s><s>[INST] Who are you [/INST]"
               "    I am an assistant    </s><s>[INST] Another question [/INST]");
  /* Without a system prompt (Mistral-style conversations). */
  assert_render (HZ_CHAT_TEMPLATE_LLAMA2, conversation + 1, 3, TRUE,
                 "[INST] Hello [/INST] Hi there </s><s>[INST] Who are you [/INST]");
}

static void
test_render_gemma (void)
{
  /* llama.cpp case "google/gemma-7b-it": system merged into the first user turn,
   * assistant -> model, contents trimmed. */
  RENDER_CONV (HZ_CHAT_TEMPLATE_GEMMA,
               "<start_of_turn>user\nYou are a helpful assistant\n\nHello<end_of_turn>\n"
               "<start_of_turn>model\nHi there<end_of_turn>\n"
               "<start_of_turn>user\nWho are you<end_of_turn>\n"
               "<start_of_turn>model\nI am an assistant<end_of_turn>\n"
               "<start_of_turn>user\nAnother question<end_of_turn>\n"
               "<start_of_turn>model\n");
}

static void
test_render_phi3 (void)
{
  /* llama.cpp cases "Phi-3-small", "Phi-3-medium", "Phi-3-vision" (expected_output). */
  RENDER_CONV (HZ_CHAT_TEMPLATE_PHI3,
               "<|system|>\nYou are a helpful assistant<|end|>\n"
               "<|user|>\nHello<|end|>\n"
               "<|assistant|>\nHi there<|end|>\n"
               "<|user|>\nWho are you<|end|>\n"
               "<|assistant|>\n   I am an assistant   <|end|>\n"
               "<|user|>\nAnother question<|end|>\n"
               "<|assistant|>\n");
}

static void
test_render_zephyr (void)
{
  /* llama.cpp's test has no Zephyr case; this is the rendering of HuggingFaceH4/zephyr-7b-beta's
   * own template (zephyr_jinja below, eos_token "</s>", Jinja trim_blocks as in
   * transformers) for the same conversation: llama.cpp's "zephyr" layout with the Llama
   * tokenizer's EOS text. */
  RENDER_CONV (HZ_CHAT_TEMPLATE_ZEPHYR,
               "<|system|>\nYou are a helpful assistant</s>\n"
               "<|user|>\nHello</s>\n"
               "<|assistant|>\nHi there</s>\n"
               "<|user|>\nWho are you</s>\n"
               "<|assistant|>\n   I am an assistant   </s>\n"
               "<|user|>\nAnother question</s>\n"
               "<|assistant|>\n");
}

static void
test_render_none (void)
{
  /* Plain completion: contents concatenated, no generation prompt. */
  RENDER_CONV (HZ_CHAT_TEMPLATE_NONE,
               "You are a helpful assistantHelloHi thereWho are you"
               "   I am an assistant   Another question");
  const HzChatMessage once[] = { { "user", "Once upon a time" } };
  assert_render (HZ_CHAT_TEMPLATE_NONE, once, 1, TRUE, "Once upon a time");
}

static void
test_render_bad_input (void)
{
  const HzChatTemplate all[] = {
    HZ_CHAT_TEMPLATE_NONE, HZ_CHAT_TEMPLATE_CHATML, HZ_CHAT_TEMPLATE_LLAMA3,
    HZ_CHAT_TEMPLATE_LLAMA2, HZ_CHAT_TEMPLATE_GEMMA, HZ_CHAT_TEMPLATE_PHI3,
    HZ_CHAT_TEMPLATE_ZEPHYR,
  };
  const HzChatMessage odd[] = {
    { NULL, NULL }, { "assistant", NULL }, { "tool", "x" }, { "system", "s" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (all); i++)
    {
      /* NULL messages with a count: treated as an empty conversation. */
      g_autofree char *a = hz_chat_template_apply (all[i], NULL, 5, FALSE);
      g_assert_cmpstr (a, ==, "");
      g_autofree char *b = hz_chat_template_apply (all[i], odd, G_N_ELEMENTS (odd), TRUE);
      g_assert_nonnull (b);
      g_assert_true (g_utf8_validate (b, -1, NULL));
    }
  /* NULL role = user, NULL content = "". */
  assert_render (HZ_CHAT_TEMPLATE_CHATML, odd, 2, FALSE,
                 "<|im_start|>user\n<|im_end|>\n<|im_start|>assistant\n<|im_end|>\n");
  /* A trailing system prompt in Llama 2 gets its own instruction. */
  assert_render (HZ_CHAT_TEMPLATE_LLAMA2, odd + 2, 2, TRUE,
                 "[INST] x [/INST][INST] <<SYS>>\ns\n<</SYS>>\n\n [/INST]");
  /* Empty conversation with a generation prompt: just the assistant header. */
  assert_render (HZ_CHAT_TEMPLATE_CHATML, NULL, 0, TRUE, "<|im_start|>assistant\n");
  assert_render (HZ_CHAT_TEMPLATE_GEMMA, NULL, 0, TRUE, "<start_of_turn>model\n");
  /* A value outside the enum renders as plain completion. */
  assert_render ((HzChatTemplate) 77, conversation + 1, 2, TRUE, "HelloHi there");
  g_assert_cmpstr (hz_chat_template_name ((HzChatTemplate) 77), ==, "unknown");
  g_assert_cmpstr (hz_chat_template_name ((HzChatTemplate) -1), ==, "unknown");
}

/* -------------------------------------------------------------- detection */

/* Jinja sources from llama.cpp's tests/test-chat-template.cpp (test data). */
static const char openhermes_jinja[] =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
static const char mistral_v02_jinja[] =
  "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token}}{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %}";
static const char fusionnet_jinja[] =
  "{%- for idx in range(0, messages|length) -%}\n{%- if messages[idx]['role'] == 'user' -%}\n{%- if idx > 1 -%}\n{{- bos_token + '[INST] ' + messages[idx]['content'] + ' [/INST]' -}}\n{%- else -%}\n{{- messages[idx]['content'] + ' [/INST]' -}}\n{%- endif -%}\n{% elif messages[idx]['role'] == 'system' %}\n{{- '[INST] <<SYS>>\\n' + messages[idx]['content'] + '\\n<</SYS>>\\n\\n' -}}\n{%- elif messages[idx]['role'] == 'assistant' -%}\n{{- ' '  + messages[idx]['content'] + ' ' + eos_token -}}\n{% endif %}\n{% endfor %}";
static const char gemma_jinja[] =
  "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\\n'}}{% endif %}";
static const char llama3_jinja[] =
  "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}";
static const char phi3_small_jinja[] =
  "{{ bos_token }}{% for message in messages %}{{'<|' + message['role'] + '|>' + '\n' + message['content'] + '<|end|>\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% else %}{{ eos_token }}{% endif %}";
static const char mistral_v1_jinja[] =
  "{%- if messages[0]['role'] == 'system' %}\n    {%- set system_message = messages[0]['content'] %}\n    {%- set loop_messages = messages[1:] %}\n{%- else %}\n    {%- set loop_messages = messages %}\n{%- endif %}\n\n{{- bos_token }}\n{%- for message in loop_messages %}\n    {%- if message['role'] == 'user' %}\n        {%- if loop.first and system_message is defined %}\n            {{- ' [INST] ' + system_message + '\\n\\n' + message['content'] + ' [/INST]' }}\n        {%- else %}\n            {{- ' [INST] ' + message['content'] + ' [/INST]' }}\n        {%- endif %}\n    {%- elif message['role'] == 'assistant' %}\n        {{- ' ' + message['content'] + eos_token}}\n    {%- endif %}\n{%- endfor %}\n";
/* HuggingFaceH4/zephyr-7b-beta tokenizer_config.json (also TinyLlama-1.1B-Chat-v1.0). */
static const char zephyr_jinja[] =
  "{% for message in messages %}\n{% if message['role'] == 'user' %}\n{{ '<|user|>\n' + message['content'] + eos_token }}\n{% elif message['role'] == 'system' %}\n{{ '<|system|>\n' + message['content'] + eos_token }}\n{% elif message['role'] == 'assistant' %}\n{{ '<|assistant|>\n'  + message['content'] + eos_token }}\n{% endif %}\n{% if loop.last and add_generation_prompt %}\n{{ '<|assistant|>' }}\n{% endif %}\n{% endfor %}";
/* Families not rendered here (llama.cpp test cases): must not be mistaken for ours. */
static const char chatglm4_jinja[] =
  "[gMASK]<sop>{% for item in messages %}{% if item['content'] %}<|{{ item['role'] }}|>{{ item['metadata'] }}\n{{ item['content'] }}{% endif %}{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}";
static const char phi4_jinja[] =
  "{% for message in messages %}{% if (message['role'] == 'system') %}{{'<|im_start|>system<|im_sep|>' + message['content'] + '<|im_end|>'}}{% elif (message['role'] == 'user') %}{{'<|im_start|>user<|im_sep|>' + message['content'] + '<|im_end|><|im_start|>assistant<|im_sep|>'}}{% elif (message['role'] == 'assistant') %}{{message['content'] + '<|im_end|>'}}{% endif %}{% endfor %}";
static const char command_r_jinja[] =
  "{{ bos_token }}{% if add_generation_prompt %}{{ '<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>' }}{% endif %}{{ '<|START_OF_TURN_TOKEN|><|USER_TOKEN|>' }}";

static void
test_detect_jinja (void)
{
  static const struct { const char *jinja; HzChatTemplate want; } cases[] = {
    { openhermes_jinja, HZ_CHAT_TEMPLATE_CHATML },
    { mistral_v02_jinja, HZ_CHAT_TEMPLATE_LLAMA2 },
    { fusionnet_jinja, HZ_CHAT_TEMPLATE_LLAMA2 },
    { mistral_v1_jinja, HZ_CHAT_TEMPLATE_LLAMA2 },
    { gemma_jinja, HZ_CHAT_TEMPLATE_GEMMA },
    { llama3_jinja, HZ_CHAT_TEMPLATE_LLAMA3 },
    { phi3_small_jinja, HZ_CHAT_TEMPLATE_PHI3 },
    { zephyr_jinja, HZ_CHAT_TEMPLATE_ZEPHYR },
    { chatglm4_jinja, HZ_CHAT_TEMPLATE_NONE },
    { phi4_jinja, HZ_CHAT_TEMPLATE_NONE },
    { command_r_jinja, HZ_CHAT_TEMPLATE_NONE },
    { "", HZ_CHAT_TEMPLATE_NONE },
    { NULL, HZ_CHAT_TEMPLATE_NONE },
    { "{{ messages }}", HZ_CHAT_TEMPLATE_NONE },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      HzChatTemplate got = hz_chat_template_detect (cases[i].jinja, NULL);
      if (got != cases[i].want)
        g_error ("case %u: detected %s, want %s", i, hz_chat_template_name (got),
                 hz_chat_template_name (cases[i].want));
    }

  /* The template wins over the name; an unrecognised template falls back to the name. */
  g_assert_cmpint (hz_chat_template_detect (openhermes_jinja, "gemma-2b-it"), ==,
                   HZ_CHAT_TEMPLATE_CHATML);
  g_assert_cmpint (hz_chat_template_detect ("{{ messages }}", "gemma-2b-it"), ==,
                   HZ_CHAT_TEMPLATE_GEMMA);

  /* Names are accepted as templates, and round-trip. */
  for (int t = HZ_CHAT_TEMPLATE_NONE; t <= HZ_CHAT_TEMPLATE_ZEPHYR; t++)
    g_assert_cmpint (hz_chat_template_detect (hz_chat_template_name (t), "Qwen2-Instruct"), ==,
                     t);
}

static void
test_detect_name (void)
{
  static const struct { const char *name; HzChatTemplate want; } cases[] = {
    { "stories260K", HZ_CHAT_TEMPLATE_NONE },
    { "Qwen2.5-0.5B-Instruct", HZ_CHAT_TEMPLATE_CHATML },
    { "SmolLM2-135M-Instruct", HZ_CHAT_TEMPLATE_CHATML },
    { "Meta-Llama-3-8B-Instruct", HZ_CHAT_TEMPLATE_LLAMA3 },
    { "Llama 3.2 1B Instruct", HZ_CHAT_TEMPLATE_LLAMA3 },
    { "Llama-2-7b-chat-hf", HZ_CHAT_TEMPLATE_LLAMA2 },
    { "Mistral-7B-Instruct-v0.2", HZ_CHAT_TEMPLATE_LLAMA2 },
    { "gemma-2b-it", HZ_CHAT_TEMPLATE_GEMMA },
    { "Phi-3-mini-4k-instruct", HZ_CHAT_TEMPLATE_PHI3 },
    { "zephyr-7b-beta", HZ_CHAT_TEMPLATE_ZEPHYR },
    { "TinyLlama-1.1B-Chat-v1.0", HZ_CHAT_TEMPLATE_ZEPHYR },
    /* Base models: plain completion. */
    { "Llama-2-7b", HZ_CHAT_TEMPLATE_NONE },
    { "Qwen2.5-0.5B", HZ_CHAT_TEMPLATE_NONE },
    { "gemma-2b", HZ_CHAT_TEMPLATE_NONE },
    { "TinyLlama-1.1B-intermediate-step", HZ_CHAT_TEMPLATE_NONE },
    { "Italian-Llama-2", HZ_CHAT_TEMPLATE_NONE },  /* "it" only as a whole word */
    { "", HZ_CHAT_TEMPLATE_NONE },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      HzChatTemplate got = hz_chat_template_detect (NULL, cases[i].name);
      if (got != cases[i].want)
        g_error ("name \"%s\": detected %s, want %s", cases[i].name,
                 hz_chat_template_name (got), hz_chat_template_name (cases[i].want));
    }
}

/* tokenizer.chat_template of a GGUF file read with the engine's GGUF reader, or NULL. */
static char *
gguf_chat_template (const char *path)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (HzGguf) g = hz_gguf_open (path, &error);
  g_assert_no_error (error);
  return hz_gguf_get_str (g, "tokenizer.chat_template");
}

static void
test_detect_gguf (void)
{
  static const struct { const char *file; HzChatTemplate want; } cases[] = {
    { "golden/tokenizer/ggml-vocab-phi-3.gguf", HZ_CHAT_TEMPLATE_PHI3 },
    { "golden/tokenizer/ggml-vocab-qwen2.gguf", HZ_CHAT_TEMPLATE_CHATML },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = hz_test_shared_path (cases[i].file);
      if (!path)
        return;  /* skipped with a message */
      g_autofree char *jinja = gguf_chat_template (path);
      g_assert_nonnull (jinja);
      g_test_message ("%s: %zu-byte template", cases[i].file, strlen (jinja));
      g_assert_cmpint (hz_chat_template_detect (jinja, NULL), ==, cases[i].want);
    }

  /* The same through the model API (vocab-only load), which names the template. */
  g_autofree char *qwen = hz_test_shared_path ("golden/tokenizer/ggml-vocab-qwen2.gguf");
  HzModelParams mp;
  hz_model_params_init (&mp);
  mp.vocab_only = TRUE;
  g_autoptr (GError) error = NULL;
  g_autoptr (HzModel) m = hz_model_load (qwen, &mp, &error);
  g_assert_no_error (error);
  g_assert_cmpint (hz_model_chat_template (m), ==, HZ_CHAT_TEMPLATE_CHATML);

  /* stories260K is a base model without a template: plain completion. */
  g_autofree char *stories = hz_test_shared_path ("models/stories260K.gguf");
  if (!stories)
    return;
  g_autofree char *none = gguf_chat_template (stories);
  g_assert_null (none);
  g_assert_cmpint (hz_chat_template_detect (none, "stories260K"), ==, HZ_CHAT_TEMPLATE_NONE);
  g_autoptr (HzModel) sm = hz_model_load (stories, &mp, &error);
  g_assert_no_error (error);
  g_test_message ("stories260K general.name: \"%s\"", hz_model_name (sm));
  g_assert_cmpint (hz_model_chat_template (sm), ==, HZ_CHAT_TEMPLATE_NONE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/chat-template/render/chatml", test_render_chatml);
  g_test_add_func ("/chat-template/render/llama3", test_render_llama3);
  g_test_add_func ("/chat-template/render/llama2", test_render_llama2);
  g_test_add_func ("/chat-template/render/gemma", test_render_gemma);
  g_test_add_func ("/chat-template/render/phi3", test_render_phi3);
  g_test_add_func ("/chat-template/render/zephyr", test_render_zephyr);
  g_test_add_func ("/chat-template/render/none", test_render_none);
  g_test_add_func ("/chat-template/render/bad-input", test_render_bad_input);
  g_test_add_func ("/chat-template/detect/jinja", test_detect_jinja);
  g_test_add_func ("/chat-template/detect/name", test_detect_name);
  g_test_add_func ("/chat-template/detect/gguf", test_detect_gguf);
  return g_test_run ();
}
