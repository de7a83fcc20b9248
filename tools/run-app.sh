#!/bin/sh
# Install dependencies, build, and launch Hanzo Desktop. With no --model argument the app
# opens the model remembered in GSettings, else ../shared/models/stories260K.gguf when present.
# Usage: tools/run-app.sh [--model PATH]
set -eu
cd "$(dirname "$0")/.."
tools/install-deps.sh
if [ ! -d build ]; then meson setup build; fi
# only what the app needs (the whole tree, tests included, is tools/run-tests.sh's job)
ninja -C build app/hanzo-desktop data/gschemas.compiled learner/hanzo-learner tools/hanzo
export GSETTINGS_SCHEMA_DIR="$PWD/build/data"
if [ $# -eq 0 ] && [ -f ../shared/models/stories260K.gguf ]; then
  set -- --default-model "$(readlink -f ../shared/models/stories260K.gguf)"
fi
exec build/app/hanzo-desktop "$@"
