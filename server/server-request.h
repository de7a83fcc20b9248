/* server/server-request.h — the body of an OpenAI-style request (POST /v1/chat/completions,
 * POST /v1/completions) parsed and checked with json-glib, before anything else sees it
 * (private to server/).
 *
 * What is read (every other member is ignored, as llama-server does):
 *   model (string, required); messages (chat: array of {role, content}, content a string or
 *   an array of {"type":"text","text"} parts; "developer" is "system"); prompt (completion:
 *   a string or an array of one string); max_tokens / max_completion_tokens (>= 1);
 *   temperature [0, 2]; top_p (0, 1]; top_k >= 0; min_p [0, 1]; seed (integer);
 *   stop (a string or an array of at most 16 strings, none empty); presence_penalty and
 *   frequency_penalty [-2, 2]; n (only 1); stream; stream_options.include_usage;
 *   logprobs (chat: boolean; completion: an integer 0..20, the number of alternatives);
 *   top_logprobs (chat, 0..20, with logprobs); ignore_eos (llama-server's extension);
 *   parallel_tool_calls (boolean, default true); tools, tool_choice, response_format (kept as sent for the features that read them:
 *   server-tools.h, hz_api_request_check_served()); response_format compiled into `json`
 *   (server-format.h: an unsupported schema keyword is HZ_API_ERROR_UNSUPPORTED); a message's
 *   tool_calls (its JSON text),
 *   tool_call_id and name (strings) on its HzChatMessage.
 * Members that clients send but this server cannot honour (best_of > 1, echo, suffix, a
 * non-empty logit_bias, images or audio in messages) are refused rather than ignored.
 * JSON null counts as absent. Nesting deeper than 64 is refused before json-glib parses
 * (its parser recurses).
 *
 * Thread safety: plain functions; a request is used by one thread at a time. */
#pragma once

#include <json-glib/json-glib.h>
#include "hanzo/engine.h"
#include "hanzo/json-constrain.h"

G_BEGIN_DECLS

#define HZ_API_ERROR (hz_api_error_quark ())
GQuark hz_api_error_quark (void);
typedef enum {
  HZ_API_ERROR_INVALID_JSON,   /* not JSON, not an object, nested too deep, not UTF-8 */
  HZ_API_ERROR_INVALID_VALUE,  /* a member missing, of the wrong type or out of range */
  HZ_API_ERROR_UNSUPPORTED,    /* a valid request this server does not serve (yet) */
} HzApiError;

typedef enum {
  HZ_API_CHAT,        /* /v1/chat/completions */
  HZ_API_COMPLETION,  /* /v1/completions */
} HzApiKind;

/** Most stop strings a request may give. */
#define HZ_API_MAX_STOP 16
/** Most alternatives per token (top_logprobs, or a completion's logprobs). */
#define HZ_API_MAX_TOP_LOGPROBS 20

typedef struct {
  HzApiKind       kind;
  char           *model;
  HzChatMessage  *messages;      /* chat: [n_messages]; strings owned by the request */
  guint           n_messages;
  char           *prompt;        /* completion */
  gint64          max_tokens;    /* -1: until the end of generation or the context */
  HzSamplerParams sampler;       /* temperature 1 unless given (OpenAI's default) */
  gboolean        seeded;        /* seed given (else the caller picks a random one) */
  char          **stop;          /* NULL-terminated, or NULL */
  gboolean        stream, include_usage;
  gboolean        logprobs;      /* report log-probabilities */
  guint           top_logprobs;  /* alternatives per token (0..20) */
  gboolean        ignore_eos;
  gboolean        single_tool_call;   /* parallel_tool_calls: false (at most one call) */
  JsonNode       *tools, *tool_choice, *response_format;   /* as sent, or NULL */
  HzJsonSchema   *json;          /* response_format's constraint (server-format.h), or NULL */
} HzApiRequest;

/** Parse `len` bytes of `body` (need not be NUL-terminated; may hold anything). Returns
 *  the request, or NULL with `error` in HZ_API_ERROR (the message says what is wrong, in
 *  terms of the API's member names) and *param (nullable; g_free) the member at fault or
 *  NULL. */
HzApiRequest *hz_api_request_parse (HzApiKind kind, const char *body, gsize len, char **param,
                                    GError **error);

/** The seam for the features that other parts of the server add: FALSE with
 *  HZ_API_ERROR_UNSUPPORTED and *param (g_free) naming the member when the request needs
 *  one that is not wired yet: tools on /v1/completions. Tools of chat requests are checked
 *  by server-tools.h (hz_api_tools_check()); response_format is compiled at parse time
 *  (server-format.h). */
gboolean hz_api_request_check_served (const HzApiRequest *r, char **param, GError **error);

void hz_api_request_free (HzApiRequest *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzApiRequest, hz_api_request_free)

G_END_DECLS
