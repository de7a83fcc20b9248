/* hanzo/mcp.h — public API of libhzmcp: `hanzo mcp`, a Model Context Protocol server over
 * stdio (issue 25) through which an MCP client (an editor, another assistant) uses this
 * computer's private model, redactor and conversations.
 *
 * Protocol: JSON-RPC 2.0, one message per line of UTF-8 (the stdio transport;
 * https://modelcontextprotocol.io/specification/2025-06-18). Versions 2025-11-25,
 * 2025-06-18, 2025-03-26 and 2024-11-05: initialize answers the client's version when it is
 * one of them, else the newest (the client then decides, as the specification says).
 * Methods: initialize, ping, tools/list, tools/call; notifications/initialized, and
 * notifications/cancelled, which cancels the queued or running tools/call it names (chat
 * stops within one token) and leaves it unanswered. Answers come in order.
 * A tools/call of chat whose params carry _meta.progressToken gets notifications/progress
 * (generated tokens of max_tokens: after the first token, then every 16) while it runs.
 * Tools: `chat` (only with a model), `redact`, `search_conversations` (the store read-only,
 * every text redacted), each with an input and an output schema; arguments are checked
 * against the input schema.
 *
 * Errors (JSON-RPC codes): -32700 a line that is not UTF-8 JSON; -32600 not a request
 * (no "jsonrpc": "2.0", a bad id or method, nesting deeper than 32, a line over the size
 * limit, a request before initialize or a second initialize, a batch — taken only in
 * 2025-03-26, the one version that has them); -32601 an unknown method; -32602 bad params
 * (an unknown tool, arguments that do not fit the schema — answered as a tool error with
 * isError in 2025-11-25, which asks for that); a tool that fails answers a result with
 * isError: true and the reason.
 *
 * Privacy: no network code at all (tests/egress/test-no-network.sh checks the objects, the
 * mcp-stdio test the running process's descriptors); the store is opened read-only and
 * what a client sends is never stored.
 *
 * Threads: an HzMcpServer is used by one thread at a time. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/** Largest message (one line) taken by default: 8 MiB. */
#define HZ_MCP_DEFAULT_MAX_MESSAGE (8u << 20)

typedef struct {
  const char *model_path;    /* GGUF file or Hugging Face folder for `chat`; NULL: no chat */
  const char *store_path;    /* the app's store; NULL: hz_store_default_path() */
  guint       n_threads;     /* compute threads; 0: the engine's default */
  gsize       max_message;   /* bytes of one message; 0: HZ_MCP_DEFAULT_MAX_MESSAGE */
  const char *version;       /* serverInfo.version */
} HzMcpOptions;

void hz_mcp_options_init (HzMcpOptions *o);

typedef struct _HzMcpServer HzMcpServer;

/** A server; with a model, the model is loaded now so that a bad file is reported before
 *  the client connects (errors: hz_model_load's). The store and the redactor are opened
 *  on first use. */
HzMcpServer *hz_mcp_server_new (const HzMcpOptions *o, GError **error);
void         hz_mcp_server_free (HzMcpServer *srv);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzMcpServer, hz_mcp_server_free)

/** Answer one message (a line without its newline): returns the reply line (g_free; one
 *  JSON value, no newline) or NULL when there is none (a notification, a response, a blank
 *  line). */
char    *hz_mcp_server_handle_line (HzMcpServer *srv, const char *line, gsize len);

/** Serve `in` until it ends: read lines (on a thread of its own, which acts on
 *  notifications/cancelled as soon as it reads one), answer each on `out` in order
 *  (flushed after every line; progress notifications of a running call too).
 *  A line over the size limit is answered -32600 and skipped up to its newline. Returns
 *  TRUE at the end of `in`; FALSE with an error when reading or writing fails (the client
 *  went away: G_IO_ERROR_BROKEN_PIPE). */
gboolean hz_mcp_server_run (HzMcpServer *srv, GInputStream *in, GOutputStream *out,
                            GError **error);

G_END_DECLS
