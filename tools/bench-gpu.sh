#!/bin/sh
# tools/bench-gpu.sh — GB/s of the GPU decode matvec (qmatvec_core) per format at the 7B
# decode shapes, next to the device's measured copy bandwidth; prints a Markdown table
# (see tests/gpu/bench-qmatvec.c for the method).
#   tools/bench-gpu.sh [build-dir] [formats]   e.g. tools/bench-gpu.sh build-gpu q4_0,q4_K
# Builds with -Dcuda=enabled (HZ_GPU=hip: -Dhip=enabled) if the build dir does not exist.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build-gpu}
backend=${HZ_GPU:-cuda}
if [ ! -d "$build" ]; then
  meson setup "$build" -D"$backend"=enabled -Dapp=disabled
fi
ninja -C "$build" tests/gpu/bench-qmatvec
shift $(( $# > 0 ? 1 : 0 ))
exec "$build/tests/gpu/bench-qmatvec" "$@"
