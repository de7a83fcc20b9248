#!/bin/sh
# tests/gpu/run.sh — build the GPU backend and run its tests on a machine with a GPU.
#   tests/gpu/run.sh [build-dir]        (default: build-gpu; HZ_GPU=hip for hipcc, else nvcc)
# Builds with -Dcuda=enabled (or -Dhip=enabled), then runs the kernel compile check,
# test-qmatvec (every format of the table vs the CPU at the 7B decode shapes), test-ops
# (each decode op vs its CPU twin) and test-forward (the whole GPU decode step vs the CPU
# forward pass on ../shared/models: greedy ids and logits); thresholds in each file's
# header. Decode speed of a model: build-gpu/tests/gpu/test-forward --bench MODEL.gguf.
# Exit status: that of the tests.
set -eu
cd "$(dirname "$0")/../.."
build=${1:-build-gpu}
backend=${HZ_GPU:-cuda}
if [ ! -d "$build" ]; then
  meson setup "$build" -D"$backend"=enabled -Dapp=disabled
fi
ninja -C "$build" tests/gpu/test-qmatvec tests/gpu/test-ops tests/gpu/test-forward \
  tests/gpu/bench-qmatvec
exec meson test -C "$build" --print-errorlogs --suite gpu --suite gpu-build
