#!/bin/sh
# tests/clients/mcp/run-mcp-sdk-test.sh — meson test `mcp-sdk` (TAP): the official Model
# Context Protocol SDK for TypeScript (npm @modelcontextprotocol/sdk) as the client of
# `hanzo mcp` (test-mcp-sdk.mjs). Skips with a message when node, the SDK (`npm ci` in
# tests/clients/mcp, which tools/install-deps.sh runs) or the shared models are missing.
# Usage: run-mcp-sdk-test.sh HANZO MAKE_MCP_STORE
set -u
here=$(cd "$(dirname "$0")" && pwd)
hanzo=${1:?hanzo binary}
make_store=${2:?make-mcp-store binary}
if ! command -v node >/dev/null 2>&1; then
  echo "1..0 # SKIP node is not installed (needed for the MCP SDK test)"
  exit 0
fi
if [ ! -f "$here/node_modules/@modelcontextprotocol/sdk/package.json" ]; then
  echo "1..0 # SKIP the npm package @modelcontextprotocol/sdk is not installed: run 'npm ci' in tests/clients/mcp (tools/install-deps.sh does)"
  exit 0
fi
model=${HZ_SHARED_DIR:-$here/../../../../shared}/models/stories260K.gguf
if [ ! -f "$model" ]; then
  echo "1..0 # SKIP shared test data not found: $model (set HZ_SHARED_DIR)"
  exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hz-mcp-sdk-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if ! "$make_store" "$tmp/hanzo.db"; then
  echo "1..1"
  echo "not ok 1 - make-mcp-store could not write the store"
  exit 1
fi
XDG_DATA_HOME="$tmp/data" node "$here/test-mcp-sdk.mjs" "$hanzo" "$model" "$tmp/hanzo.db"
