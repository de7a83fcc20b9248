/* server/server-tools.h — tool calls in the OpenAI API (private to server/): `tools` and
 * `tool_choice` checked, the tools the chat template gets, the model's reply split into
 * content and `tool_calls` (engine/hanzo/tool-calls.h), streamed or whole.
 *
 * Request side (OpenAI's API reference, "Create chat completion": tools, tool_choice;
 * messages of role assistant with tool_calls, of role tool with tool_call_id):
 *   tools        an array of at most HZ_API_MAX_TOOLS {"type": "function", "function":
 *                {"name", "description"?, "parameters"?, "strict"?}}, names of 1-64
 *                characters [A-Za-z0-9_-], none twice;
 *   tool_choice  "none", "auto" (the default with tools), "required", or {"type":
 *                "function", "function": {"name"}} naming one of the tools; "required" and
 *                a named function need tools;
 *   messages     an assistant message's tool_calls: [{"id"?, "type": "function",
 *                "function": {"name", "arguments": a string (or an object)}}].
 * With "none" the template gets no tools and the reply is all content. "required" and a
 * named function are enforced by constrained sampling (hz_api_tools_forced()): the reply
 * is one call of the named tool, or for "required" one or more calls (one with
 * parallel_tool_calls false, or where the family has no separator) of the tools, in the family's markup, its arguments a JSON object of the
 * tool's parameters schema. parallel_tool_calls false keeps at most one call (the first).
 *
 * Reply side: a reply of a request with tools is parsed in the format of the model's
 * template (hz_model_tool_format()); with calls, finish_reason is "tool_calls" and the
 * message's content is what remains (null when nothing). Streamed, content goes out as it
 * comes until a call may begin (hz_tool_calls_content_prefix(): a marker, or a prefix of
 * one at the end; white space waits for what follows it), and the rest is held, parsed at
 * the end and sent as the remaining
 * content and one `delta.tool_calls` chunk with every call whole (as llama-server does
 * when it cannot stream a call's arguments partially). A forced reply (tool_choice
 * "required" / named), whose every byte the constraint fixes, streams each call as it is
 * written: a first piece with its index, id, type and name, then its arguments in pieces
 * (hz_tool_stream_set_forced()).
 *
 * Thread safety: plain functions; a stream is used by one thread at a time. */
#pragma once

#include <json-glib/json-glib.h>
#include "hanzo/tool-calls.h"
#include "server-request.h"

G_BEGIN_DECLS

/** Most tools a request may give. */
#define HZ_API_MAX_TOOLS 128

typedef enum {
  HZ_API_TOOL_CHOICE_NONE,
  HZ_API_TOOL_CHOICE_AUTO,
  HZ_API_TOOL_CHOICE_REQUIRED,
  HZ_API_TOOL_CHOICE_NAMED,
} HzApiToolChoice;

typedef struct {
  HzApiToolChoice choice;
  char           *tools_json;   /* the tools for the template (JSON array text), or NULL:
                                 * none given, or tool_choice "none" */
  char           *named;        /* NAMED: the function's name */
} HzApiTools;

/** Check the tool members of a chat request `r` (tools, tool_choice, the messages'
 *  tool_calls) and fill `out` (clear it with hz_api_tools_clear()). FALSE with
 *  HZ_API_ERROR_INVALID_VALUE, the message in terms of the API's members, and *param
 *  (nullable; g_free) the member at fault. A completion request has no tools. */
gboolean hz_api_tools_check (const HzApiRequest *r, HzApiTools *out, char **param,
                             GError **error);
void     hz_api_tools_clear (HzApiTools *t);

/** Most tools that tool_choice "required" can force (the constraint's alternatives). */
#define HZ_API_MAX_FORCED_TOOLS 64

/** The constraint that forces a call for tool_choice "required" or a named function
 *  (hanzo/json-constrain.h's hz_json_schema_new_framed() over hz_tool_call_frame()): one
 *  call of one of `t`'s tools (the named one) in format `f`, its arguments a value of the
 *  tool's "parameters" (when it is an object schema the engine's subset compiles; else
 *  any JSON object), then, for "required" unless r->single_tool_call, more calls where
 *  the family separates them (a named function: exactly one call); the end-of-generation token the family names, looked up in `model`.
 *  `model` may be NULL (no end token then: any). NULL without an error for "none" and
 *  "auto". `stream` (nullable) is told the frames, to stream the calls' arguments as they
 *  come (hz_tool_stream_take_deltas()). Errors: HZ_API_ERROR_UNSUPPORTED when `f`
 *  has no JSON-argument call shape (Qwen3-Coder, GLM, MiniMax M2) or "required" lists
 *  more than HZ_API_MAX_FORCED_TOOLS tools. */
typedef struct _HzToolStream HzToolStream;

HzJsonSchema *hz_api_tools_forced (const HzApiRequest *r, const HzApiTools *t, HzToolFormat f,
                                   HzModel *model, HzToolStream *stream, GError **error);

/** Give every call without an id one: "call_" and 24 random letters and digits. */
void hz_api_tool_calls_set_ids (GPtrArray *calls);

/** Add the member "tool_calls": [{"index"?, "id", "type": "function", "function":
 *  {"name", "arguments"}}] of `calls` (HzToolCall*) to the object being built; `delta`
 *  adds each call's "index" (a streamed chunk's shape). */
void hz_api_tool_calls_add_json (JsonBuilder *b, const GPtrArray *calls, gboolean delta);

/** A streamed reply being split: content released as it comes, calls at the end; a forced
 *  reply's calls as they come. */

/** `max_calls`: calls kept at most (the first ones; 0: all). */
HzToolStream *hz_tool_stream_new (HzToolFormat format, guint max_calls);
void          hz_tool_stream_free (HzToolStream *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzToolStream, hz_tool_stream_free)
/** Feed `len` bytes of reply text; returns the content that may be sent now (g_free;
 *  possibly ""). */
char         *hz_tool_stream_push (HzToolStream *s, const char *text, gsize len);
/** The reply is complete: the calls (with ids) and in *content (g_free) the content not
 *  sent yet. */
GPtrArray    *hz_tool_stream_finish (HzToolStream *s, char **content);

/** A piece of a call streamed while it is written: its index among the reply's calls; its
 *  id and name in its first piece (NULL in the others); a fragment of its arguments (the
 *  model's bytes, whitespace outside strings left out: the fragments of a call joined are
 *  its arguments as JSON text). */
typedef struct {
  guint index;
  char *id, *name, *arguments;
} HzToolDelta;
void hz_tool_delta_free (HzToolDelta *d);

/** The reply is forced (tool_choice "required" / named; hz_api_tools_forced()): it is
 *  prefixes[i] (a call of names[i]), a JSON object, `suffix`, then (with `separator`)
 *  the same again after the separator. Its calls are then streamed as pieces
 *  (hz_tool_stream_take_deltas()) and no content is released. Arrays of `n`; copied. */
void          hz_tool_stream_set_forced (HzToolStream *s, const char *const *names,
                                         const char *const *prefixes, guint n,
                                         const char *suffix, const char *separator);
/** The pieces of forced calls written since the last call (HzToolDelta*, free function
 *  set; empty when none). */
GPtrArray    *hz_tool_stream_take_deltas (HzToolStream *s);
/** Calls begun as pieces so far. */
guint         hz_tool_stream_n_streamed (const HzToolStream *s);

/** Add "tool_calls" of `deltas` (HzToolDelta*) in a streamed chunk's shape: each with its
 *  "index"; "id", "type" and "function"."name" in a call's first piece. */
void hz_api_tool_deltas_add_json (JsonBuilder *b, const GPtrArray *deltas);

G_END_DECLS
