#!/bin/sh
# tests/clients/run-openai-test.sh — meson test `openai-sdk` (TAP): the official OpenAI SDK
# for Node as the client of `hanzo serve` (test-openai.mjs). Skips with a message when node,
# the SDK (`npm ci` in tests/clients, which tools/install-deps.sh runs) or the shared
# models are missing. Makes the chat model (make-chat-model) and the tool model
# (make-tool-model: tests/server/tool-model.h, a scripted model that calls a tool). Needs HZ_BUILD_DIR (meson's test environment).
set -u
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v node >/dev/null 2>&1; then
  echo "1..0 # SKIP node is not installed (needed for the OpenAI SDK test)"
  exit 0
fi
if [ ! -f "$here/node_modules/openai/package.json" ]; then
  echo "1..0 # SKIP the npm package openai is not installed: run 'npm ci' in tests/clients (tools/install-deps.sh does)"
  exit 0
fi
model=${HZ_SHARED_DIR:-$here/../../../shared}/models/stories260K.gguf
if [ ! -f "$model" ]; then
  echo "1..0 # SKIP shared test data not found: $model (set HZ_SHARED_DIR)"
  exit 0
fi
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
