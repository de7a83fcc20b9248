#!/bin/sh
# tests/gpu/run.sh — build the GPU backend and run its tests on a machine with a GPU.
#   tests/gpu/run.sh [build-dir]        (default: build-gpu; HZ_GPU=hip for hipcc, else nvcc)
# Builds with -Dcuda=enabled (or -Dhip=enabled), then runs the kernel compile check,
# test-qmatvec (every format of the table vs the CPU: the decode matvec at the 7B decode
# shapes, the prefill matmul qmmq on random data), test-ops (each decode and prefill op vs
# its CPU twin, the device sampler's histograms vs the CPU sampler's probabilities),
# test-moe (the mixture-of-experts ops vs the CPU routing and the dense products) and
# test-forward (prefill and decode vs the CPU forward pass on ../shared/models: logits,
# greedy ids, the device sampler at top-k 1, hz_context_generate sampling on the device:
# greedy ids equal to a CPU context's, seeded draws reproducible); thresholds in each
# file's header.
# Speed of a model (pp512 prefill, tg128 decode): build-gpu/tests/gpu/test-forward --bench
# MODEL.gguf; of the prefill matmul alone: build-gpu/tests/gpu/bench-qmatvec --mm.
# Exit status: that of the tests.
set -eu
cd "$(dirname "$0")/../.."
build=${1:-build-gpu}
backend=${HZ_GPU:-cuda}
if [ ! -d "$build" ]; then
  meson setup "$build" -D"$backend"=enabled -Dapp=disabled
fi
ninja -C "$build" tests/gpu/test-qmatvec tests/gpu/test-ops tests/gpu/test-moe tests/gpu/test-forward \
  tests/gpu/bench-qmatvec
ninja -C "$build" tests/gpu/test-train tests/gpu/test-paged   # LoRA training (issue 7), GPU serving (issue 5)
exec meson test -C "$build" --print-errorlogs --suite gpu --suite gpu-build
