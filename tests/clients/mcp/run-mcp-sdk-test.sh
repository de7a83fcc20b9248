#!/bin/sh
# tests/clients/mcp/run-mcp-sdk-test.sh — meson test `mcp-sdk` (TAP): the official Model
# Context Protocol SDK for TypeScript (npm @modelcontextprotocol/sdk) as the client of
# `hanzo mcp` (test-mcp-sdk.mjs). Skips with a message when node, the SDK (`npm ci` in
# tests/clients/mcp, which tools/install-deps.sh runs) or the shared models are missing
# (../node-test-prelude.sh).
# Usage: run-mcp-sdk-test.sh HANZO MAKE_MCP_STORE
set -u
here=$(cd "$(dirname "$0")" && pwd)
hanzo=${1:?hanzo binary}
make_store=${2:?make-mcp-store binary}
clients=$(cd "$here/.." && pwd)
. "$clients/node-test-prelude.sh"
hz_node_test_prelude "$here" @modelcontextprotocol/sdk tests/clients/mcp "the MCP SDK test"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hz-mcp-sdk-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if ! "$make_store" "$tmp/hanzo.db"; then
  echo "1..1"
  echo "not ok 1 - make-mcp-store could not write the store"
  exit 1
fi
XDG_DATA_HOME="$tmp/data" node "$here/test-mcp-sdk.mjs" "$hanzo" "$model" "$tmp/hanzo.db"
