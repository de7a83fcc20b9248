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
