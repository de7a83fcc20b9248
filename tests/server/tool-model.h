/* tests/server/tool-model.h — a model that really calls a tool, for the server's tests
 * (header-only; link libhzengine).
 *
 * It is tests/thinking-model.h's scripted model (Qwen3's vocabulary and Qwen3's own chat
 * template, tests/engine/chat-templates/Qwen-Qwen3-0.6B.jinja: a Hermes-style template that
 * lists the tools in <tools></tools> and shows calls as <tool_call>{...}</tool_call>), run
 * by the real engine: one layer whose projections are zero, so the next token depends on
 * the last one only, through token_embd and output — each token of the script below is
 * embedded as its own unit vector and the output row of the next one reads it. The
 * generation prompt ends with "<|im_start|>assistant\n", so after "\n" the model writes,
 * greedily or sampled at any usual temperature, TOOL_MODEL_REPLY and then "<|im_end|>"
 * (its end of generation): a call of get_weather for Paris, whatever the conversation.
 * The script's tokens are those of the reply in Qwen2's byte-level BPE, each once (the
 * spacing of the JSON is chosen so that no token repeats). */
#pragma once

#include "../thinking-model.h"

#define TOOL_MODEL_REPLY                                                                  \
  "<tool_call>{\"name\":\"get_weather\",\"arguments\":{\"city\": \"Paris\"}}</tool_call>"

/** Write the tool model to `dir`/tool.gguf; the path (g_free), or NULL after g_test_skip()
 *  without the shared data (Qwen2's vocabulary in ../shared/golden/tokenizer). */
static inline char *
hz_test_write_tool_model (const char *dir)
{
  static const char *const script[] = { "<tool_call>", "{\"", "name", "\":\"", "get",
                                        "_weather", "\",\"", "arguments", "\":{\"", "city",
                                        "\":", " \"", "Paris", "\"}}", "</tool_call>", NULL };
  g_autofree char *tmpl = hz_test_source_file (QWEN3_TEMPLATE);
  return hz_scripted_model_write (dir, "tool", tmpl, "\n", script);
}

#define TALKER_MODEL_REPLY "It is sunny today."

/** The same construction answering in words (TALKER_MODEL_REPLY, never a call), for
 *  tool_choice "required": DIR/talker.gguf; NULL after g_test_skip() without the shared
 *  data. */
static inline char *
hz_test_write_talker_model (const char *dir)
{
  static const char *const script[] = { "It", " is", " sunny", " today", ".", NULL };
  g_autofree char *tmpl = hz_test_source_file (QWEN3_TEMPLATE);
  return hz_scripted_model_write (dir, "talker", tmpl, "\n", script);
}

#define HARMONY_TEMPLATE "tests/engine/chat-templates/openai-gpt-oss-120b.jinja"
#define HARMONY_MODEL_REPLY                                                               \
  "<|channel|>commentary to=functions.get_weather json<|message|>{\"city\":\"Paris\"}<|call|>"

/** The same construction with gpt-oss's template and harmony's markers added to the
 *  vocabulary (<|start|>, <|channel|>, <|message|>, which the tokenizer shows as text as
 *  llama.cpp does, and <|call|>, a control token and an end of generation that reaches the
 *  text only when it is detokenized with special tokens): after the generation prompt's
 *  "<|start|>assistant" it writes HARMONY_MODEL_REPLY, a call of get_weather in gpt-oss's
 *  format. DIR/harmony.gguf; NULL after g_test_skip() without the shared data. */
static inline char *
hz_test_write_harmony_model (const char *dir)
{
  static const char *const script[] = { "<|channel|>", "comment", "ary", " to", "=", "functions",
                                        ".get", "_weather", " json", "<|message|>", "{\"",
                                        "city", "\":\"", "Paris", "\"}", "<|call|>", NULL };
  g_autofree char *tmpl = hz_test_source_file (HARMONY_TEMPLATE);
  HzFamily f = hz_qwen3_family ("harmony", tmpl);
  const HzFamily harmony = {
    .name = "harmony", .tmpl = f.tmpl, .vocab = f.vocab, .jinja = tmpl,
    .add = { "<|start|>", "<|channel|>", "<|message|>", "<|call|>", NULL },
    .controls = { "<|im_start|>", "<|im_end|>", NULL }, .rstrip = { NULL }, .typed = "",
    .add_at = 151665, .add_type = 3,
  };
  return hz_scripted_model_write_family (dir, &harmony, "assistant", script);
}
