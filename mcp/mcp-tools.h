/* mcp-tools.h — the tools of `hanzo mcp`: what tools/list shows of each and the function
 * tools/call runs (mcp-chat.c, mcp-redact.c, mcp-search.c). */
#pragma once

#include "mcp-env.h"
#include "mcp-schema.h"

G_BEGIN_DECLS

/** Run a tool on arguments already checked against its input schema; returns its
 *  structured result (an object matching the output schema), or NULL with an error:
 *  HZ_MCP_ERROR_INVALID_ARGS for arguments its rules refuse beyond the schema (answered as
 *  invalid params), anything else for a failure (answered as a result with isError). */
typedef JsonNode *(*HzMcpToolFunc) (HzMcpEnv *env, JsonObject *args, GError **error);

typedef struct {
  const char   *name;
  const char   *title;
  const char   *description;
  const char   *input_schema;    /* JSON Schema text */
  const char   *output_schema;   /* JSON Schema text of structuredContent */
  gboolean      idempotent;      /* the same arguments give the same result */
  HzMcpToolFunc call;
} HzMcpTool;

extern const HzMcpTool hz_mcp_tool_chat;     /* mcp-chat.c */
extern const HzMcpTool hz_mcp_tool_redact;   /* mcp-redact.c */
extern const HzMcpTool hz_mcp_tool_search;   /* mcp-search.c */

G_END_DECLS
