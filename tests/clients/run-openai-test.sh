#!/bin/sh
# tests/clients/run-openai-test.sh — meson test `openai-sdk` (TAP): the official OpenAI SDK
# for Node as the client of `hanzo serve` (test-openai.mjs). Skips with a message when node,
# the SDK (`npm ci` in tests/clients, which tools/install-deps.sh runs) or the shared
# models are missing (node-test-prelude.sh). Makes the chat model (make-chat-model) and the tool model
# (make-tool-model: tests/server/tool-model.h, a scripted model that calls a tool). Needs HZ_BUILD_DIR (meson's test environment).
set -u
here=$(cd "$(dirname "$0")" && pwd)
clients=$here
. "$clients/node-test-prelude.sh"
hz_node_test_prelude "$here" openai tests/clients "the OpenAI SDK test"
build=${HZ_BUILD_DIR:?HZ_BUILD_DIR (meson test sets it)}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hz-openai-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if ! "$build/tests/server/make-chat-model" "$model" "$tmp/stories-chat.gguf"; then
  echo "1..1"
  echo "not ok 1 - make-chat-model could not write the chat model"
  exit 1
fi
if ! "$build/tests/server/make-tool-model" "$tmp" >/dev/null; then
  echo "1..1"
  echo "not ok 1 - make-tool-model could not write the tool models"
  exit 1
fi
node "$here/test-openai.mjs" "$build/tools/hanzo" "$model" "$tmp/stories-chat.gguf" "$tmp/tool.gguf" \
  "$tmp/harmony.gguf" "$tmp/talker.gguf"
