# tests/clients/node-test-prelude.sh — sourced by the tests that run an official npm SDK as a
# client (run-openai-test.sh, mcp/run-mcp-sdk-test.sh): skip the test with a TAP message
# when node, the SDK or the shared test model is missing. POSIX sh.
#
# Usage: clients=DIR_OF_THIS_FILE; . "$clients/node-test-prelude.sh"
#        hz_node_test_prelude NPM_DIR PACKAGE FOLDER WHAT
#   NPM_DIR  the folder whose node_modules holds PACKAGE (npm ci there)
#   FOLDER   that folder as the message names it (e.g. tests/clients/mcp)
#   WHAT     the test, for the message ("the OpenAI SDK test")
# Sets $model: the shared stories260K.gguf ($HZ_SHARED_DIR, or ../shared next to the checkout).

hz_node_test_prelude () {
  if ! command -v node >/dev/null 2>&1; then
    echo "1..0 # SKIP node is not installed (needed for $4)"
    exit 0
  fi
  if [ ! -f "$1/node_modules/$2/package.json" ]; then
    echo "1..0 # SKIP the npm package $2 is not installed: run 'npm ci' in $3 (tools/install-deps.sh does)"
    exit 0
  fi
  model=${HZ_SHARED_DIR:-$clients/../../../shared}/models/stories260K.gguf
  if [ ! -f "$model" ]; then
    echo "1..0 # SKIP shared test data not found: $model (set HZ_SHARED_DIR)"
    exit 0
  fi
}
