/* mcp-message.h — JSON-RPC 2.0 messages as the Model Context Protocol's stdio transport
 * carries them: one UTF-8 JSON value per line (https://modelcontextprotocol.io/specification/
 * 2025-06-18/basic/transports#stdio, https://www.jsonrpc.org/specification). Parsing with
 * limits (bytes are counted by the reader, nesting depth here, before json-glib sees the
 * text) and the replies, written with json-glib. Fuzzed: tests/fuzz/fuzz-mcp-message.c.
 * Plain data, no global state: any thread, one message at a time per HzMcpMessage. */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* JSON-RPC 2.0's error codes. */
#define HZ_MCP_PARSE_ERROR      (-32700)  /* not JSON (or not UTF-8) */
#define HZ_MCP_INVALID_REQUEST  (-32600)  /* JSON, but not a request object we take */
#define HZ_MCP_METHOD_NOT_FOUND (-32601)
#define HZ_MCP_INVALID_PARAMS   (-32602)
#define HZ_MCP_INTERNAL_ERROR   (-32603)

/** Deepest nesting of arrays and objects a message may have (a tools/call of `chat` needs
 *  5: message, params, arguments, messages, one message). */
#define HZ_MCP_MAX_DEPTH 32

typedef enum {
  HZ_MCP_MSG_INVALID,       /* answer error_code / error_message to `id` (may be NULL) */
  HZ_MCP_MSG_REQUEST,       /* method, id, params */
  HZ_MCP_MSG_NOTIFICATION,  /* method, params; never answered */
  HZ_MCP_MSG_RESPONSE,      /* the client answering a request (we send none: ignored) */
  HZ_MCP_MSG_BATCH,         /* a JSON array: `batch` holds its elements, in order */
  HZ_MCP_MSG_EMPTY,         /* a blank line: ignored */
} HzMcpMsgKind;

typedef struct {
  HzMcpMsgKind kind;
  JsonNode   *root;           /* the parsed value (owned; NULL for EMPTY and parse errors) */
  JsonNode   *id;             /* REQUEST: its id, a string or an integer (owned copy);
                                 INVALID: the id when one could be read, else NULL */
  const char *method;         /* REQUEST, NOTIFICATION: in root */
  JsonObject *params;         /* REQUEST, NOTIFICATION: the params object, NULL if absent */
  gboolean    params_invalid; /* REQUEST, NOTIFICATION: params is an array (a structured
                                 value MCP's methods do not take: -32602) */
  GPtrArray  *batch;          /* BATCH: JsonNode* elements (in root), at least one */
  int         error_code;     /* INVALID */
  char       *error_message;  /* INVALID */
} HzMcpMessage;

/** Parse one line of `len` bytes (no newline; a trailing CR is ignored). Never fails:
 *  text that is not UTF-8, not JSON or nested deeper than HZ_MCP_MAX_DEPTH, JSON that is not
 *  a JSON-RPC 2.0 message (no "jsonrpc": "2.0", a method that is not a string, an id that
 *  is null or neither a string nor an integer, params that are not structured, an empty
 *  array) come back as HZ_MCP_MSG_INVALID with the code and message to answer. An array
 *  comes back as a BATCH of its elements, for hz_mcp_message_from_node(); whether batches
 *  are taken is the protocol version's matter. Free with hz_mcp_message_free(). */
HzMcpMessage *hz_mcp_message_parse (const char *line, gsize len);
/** Classify one value (an element of a batch; not copied: it must outlive the message). An
 *  array is INVALID here (batches do not nest). */
HzMcpMessage *hz_mcp_message_from_node (JsonNode *node);
void          hz_mcp_message_free (HzMcpMessage *msg);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzMcpMessage, hz_mcp_message_free)

/** A success response {"jsonrpc": "2.0", "id": ID, "result": RESULT} (RESULT taken). */
JsonNode *hz_mcp_response_result (JsonNode *id, JsonNode *result);
/** An error response; `id` NULL writes "id": null (the id could not be read). */
JsonNode *hz_mcp_response_error (JsonNode *id, int code, const char *message);
/** `node` as one line of compact JSON without the newline (g_free). json-glib escapes
 *  control characters in strings, so the text never holds a raw newline. */
char     *hz_mcp_to_line (JsonNode *node);

G_END_DECLS
