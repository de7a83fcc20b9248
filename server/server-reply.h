/* server/server-reply.h — the JSON bodies of the OpenAI-compatible API (private to server/):
 * error objects, chat.completion / text_completion objects, their streamed chunks, the
 * model list. Shapes follow OpenAI's API reference (platform.openai.com/docs/api-reference:
 * "The chat completion object", "The chat completion chunk object", "Completions" (legacy),
 * "Models"), field for field, so that its SDKs parse them.
 *
 * Every function returns newly allocated JSON text (g_free), control characters escaped
 * (common/hanzo/json-out.h). Thread safety: plain functions of their arguments. */
#pragma once

#include <json-glib/json-glib.h>
#include <libsoup/soup.h>
#include "hanzo/serving.h"
#include "server-request.h"

G_BEGIN_DECLS

/** {"error": {"message", "type", "param", "code"}}; param and code may be NULL (JSON null). */
char *hz_reply_error (const char *message, const char *type, const char *code,
                      const char *param);

/** Answer `msg` with `status` and an error body: type "invalid_request_error" for 4xx
 *  (401: "authentication_error", 429: "rate_limit_error"), "server_error" for 5xx; code and
 *  param may be NULL. */
void hz_reply_send_error (SoupServerMessage *msg, guint status, const char *code,
                          const char *param, const char *message);

/** One generated token's log-probabilities (HzServeLogprobsFunc's arguments, copied). */
typedef struct {
  HzTokenLogprob chosen;
  guint          n_top;
  HzTokenLogprob top[HZ_API_MAX_TOP_LOGPROBS];
} HzReplyLogprob;

/** What every object of one response shares. */
typedef struct {
  HzApiKind   kind;
  const char *id;        /* "chatcmpl-..." / "cmpl-..." */
  gint64      created;   /* Unix seconds */
  const char *model;     /* the model id the client asked for */
  HzModel    *tokens;    /* the model, for the token texts of logprobs */
} HzReplyInfo;

typedef struct {
  guint prompt, completion, cached;   /* tokens; cached: prompt tokens from the prefix cache */
} HzReplyUsage;

/** The whole reply of a request that does not stream: the text, its tool calls (chat;
 *  HzToolCall* with ids, nullable: with some, the message gets "tool_calls" and an empty
 *  text is "content": null), "stop" / "length" / "tool_calls", the logprobs of its tokens
 *  (n_lp entries; lp NULL: "logprobs": null), usage. */
char *hz_reply_completion (const HzReplyInfo *info, const char *text, const GPtrArray *calls,
                           const char *finish_reason, const HzReplyLogprob *lp, guint n_lp,
                           const HzReplyUsage *usage);

/** One streamed chunk (without the "data: " framing). `role`: the chat's first chunk (delta
 *  {"role": "assistant", "content": ""}); `text` the new text (may be NULL); finish_reason
 *  NULL until the last; lp/n_lp the logprobs of the tokens of this chunk (lp NULL: null);
 *  text_offset the bytes of text sent before this chunk (completion logprobs' text_offset).
 *  With `usage`, the chunk that carries only the usage (choices []); with_usage_null adds
 *  "usage": null to the others (stream_options.include_usage). */
char *hz_reply_chunk (const HzReplyInfo *info, gboolean role, const char *text,
                      const char *finish_reason, const HzReplyLogprob *lp, guint n_lp,
                      gsize text_offset, const HzReplyUsage *usage, gboolean with_usage_null);

/** The streamed chunk of a chat's tool calls (server-tools.h): delta {"tool_calls": [...]}
 *  with each call whole (index, id, type, function {name, arguments}). */
char *hz_reply_chunk_calls (const HzReplyInfo *info, const GPtrArray *calls,
                            gboolean with_usage_null);
/** The same with pieces of forced calls (HzToolDelta*, server-tools.h): each with its index,
 *  a call's first piece with its id, type and name, every piece a fragment of the
 *  arguments. */
char *hz_reply_chunk_call_pieces (const HzReplyInfo *info, const GPtrArray *deltas,
                                  gboolean with_usage_null);

/** {"object": "list", "data": [{"id", "object": "model", "created", "owned_by"}...]} of the
 *  NULL-terminated `ids`; `created` per id (Unix seconds, the file's time). */
char *hz_reply_models (const char *const *ids, const gint64 *created);

/** One model object (GET /v1/models/{id}). */
char *hz_reply_model (const char *id, gint64 created);

G_END_DECLS
