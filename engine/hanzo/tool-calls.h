/* hanzo/tool-calls.h — the tool calls in a model's reply (issue 25): which format a chat
 * template teaches its model, and the reply's text split into content and calls
 * {id, name, arguments} for OpenAI's `tool_calls`.
 *
 * Formats (the shapes each family's template renders an assistant's call in, as in the
 * templates of llama.cpp's models/templates/ and ../shared/chat-templates):
 *   HERMES        <tool_call>{"name": N, "arguments": {...}}</tool_call>, repeated
 *                 (Hermes 2/3, Qwen2.5, Qwen3, MiMo, Granite 4, Bielik, Reka)
 *   QWEN3_CODER   <tool_call><function=N><parameter=K>V</parameter>...</function></tool_call>
 *                 (Qwen3-Coder, Step 3.5)
 *   GLM           <tool_call>N<arg_key>K</arg_key><arg_value>V</arg_value>...</tool_call>
 *                 (GLM 4.5-4.7, Ling)
 *   LLAMA3        {"name": N, "parameters": {...}} as the whole reply, or after
 *                 <|python_tag|> (Llama 3.1-3.3; several separated by ';')
 *   MISTRAL       [TOOL_CALLS][{"name": N, "arguments": {...}}, ...] (Mistral Nemo, v3
 *                 tokenizers) or [TOOL_CALLS]N[ARGS]{...} (newer: Devstral, Mistral Small
 *                 3.2), each optionally with [CALL_ID]ID
 *   HARMONY       gpt-oss: ... to=functions.N ...<|message|>{...}<|call|>
 *   DEEPSEEK_R1   <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>N
 *                 ```json {...} ```<｜tool▁call▁end｜>...<｜tool▁calls▁end｜>
 *   KIMI_K2       <|tool_calls_section_begin|><|tool_call_begin|>functions.N:I
 *                 <|tool_call_argument_begin|>{...}<|tool_call_end|>...
 *   COMMAND_R     <|START_ACTION|>[{"tool_call_id", "tool_name", "parameters"}]<|END_ACTION|>
 *   NEMOTRON      <TOOLCALL>[{"name", "arguments"}, ...]</TOOLCALL>
 *   MINIMAX_M2    <minimax:tool_call><invoke name="N"><parameter name="K">V</parameter>
 *                 </invoke></minimax:tool_call>
 *   GIGACHAT      <|function_call|>{"name", "arguments"}
 * Markers that are control tokens (harmony's, DeepSeek's, Kimi's, [TOOL_CALLS]) are in the
 * text only when the reply was detokenized with special tokens shown.
 *
 * Errors are never raised: a call that does not parse (arguments that are not JSON, a
 * missing name, an unclosed call) stays in the content as it was written.
 * Thread safety: plain functions of their arguments. */
#pragma once

#include <glib.h>
#include "hanzo/engine.h"

G_BEGIN_DECLS

typedef enum {
  HZ_TOOL_FORMAT_NONE = 0,   /* the template has no tool-call format known here */
  HZ_TOOL_FORMAT_HERMES,
  HZ_TOOL_FORMAT_QWEN3_CODER,
  HZ_TOOL_FORMAT_GLM,
  HZ_TOOL_FORMAT_LLAMA3,
  HZ_TOOL_FORMAT_MISTRAL,
  HZ_TOOL_FORMAT_HARMONY,
  HZ_TOOL_FORMAT_DEEPSEEK_R1,
  HZ_TOOL_FORMAT_KIMI_K2,
  HZ_TOOL_FORMAT_COMMAND_R,
  HZ_TOOL_FORMAT_NEMOTRON,
  HZ_TOOL_FORMAT_MINIMAX_M2,
  HZ_TOOL_FORMAT_GIGACHAT,
} HzToolFormat;

/** One tool call. `id`: the one the model wrote (Mistral's [CALL_ID], Command R's
 *  tool_call_id, Kimi's "functions.N:I"), else NULL (the caller makes one). `arguments`:
 *  compact JSON text of an object. All UTF-8, owned. */
typedef struct {
  char *id;
  char *name;
  char *arguments;
} HzToolCall;

void hz_tool_call_free (HzToolCall *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzToolCall, hz_tool_call_free)

/** The format a chat template (Jinja source; NULL: none) teaches, recognised by its
 *  markers; HZ_TOOL_FORMAT_NONE when it has none of them. */
HzToolFormat hz_tool_format_from_template (const char *tmpl);
/** The format of the model's tokenizer.chat_template. */
HzToolFormat hz_model_tool_format (const HzModel *m);
/** "hermes", "llama3", ... ("none"). */
const char  *hz_tool_format_name (HzToolFormat f);

/** Split `len` bytes of a reply (len < 0: NUL-terminated) into content and tool calls.
 *  Returns the calls in order (HzToolCall*, free function set; empty when there are none)
 *  and *content (nullable; g_free): the text outside the calls, trimmed of white space at
 *  both ends when there are calls, else the text as it is. */
GPtrArray *hz_tool_calls_parse (HzToolFormat f, const char *text, gssize len, char **content);

/** For streaming: how many leading bytes of a reply so far are content for sure — the
 *  text before the first place where a call begins or may begin (a prefix of a start
 *  marker at the end; for LLAMA3 a reply that starts with "{"). Bytes from there on are
 *  held until the reply is complete and parsed whole. */
gsize hz_tool_calls_content_prefix (HzToolFormat f, const char *text, gsize len);

/** How a forced call of function `name` is written in format `f` (for tool_choice
 *  "required" or a named function, by constrained sampling: hz_json_schema_new_framed()):
 *  *prefix (g_free) comes before the arguments (one JSON object), *suffix (g_free) after
 *  them; *separator (static, nullable) goes between two calls (NULL: one call at most);
 *  *end (static, nullable) names the control token that must end the reply (harmony's
 *  "<|call|>"; NULL: any end of generation). The shapes are those the family's templates
 *  render (the prefix's markers written as text; hz_tool_calls_parse() reads them back).
 *  FALSE for formats whose arguments are not one JSON value (QWEN3_CODER, GLM,
 *  MINIMAX_M2) and NONE. `name` is an OpenAI function name ([A-Za-z0-9_-]). */
gboolean hz_tool_call_frame (HzToolFormat f, const char *name, char **prefix, char **suffix,
                             const char **separator, const char **end);

G_END_DECLS
