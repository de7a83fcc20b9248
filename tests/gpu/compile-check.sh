#!/bin/sh
# tests/gpu/compile-check.sh — CI compile check of the GPU kernels without a GPU
# (meson test suite 'gpu-build'). Compiles every kernels/*.hip source:
#   nvcc  -x cu for sm_90                  (CUDA toolkit: $CUDA_HOME or /usr/local/cuda; the
#                                          build's --expt-relaxed-constexpr, kernels/meson.build)
#   hipcc -x hip for gfx1030 and gfx90a    (Debian 12's hipcc 5.2: apt-get install hipcc)
# both at once, into a temporary directory. A missing compiler is skipped with a message;
# exit 77 (skip) when neither is present. About 40 s of CPU per compiler.
set -u
src=${HZ_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
inc="-I$src/kernels -I$src/engine/quant"
nvcc=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
[ -x "$nvcc" ] || nvcc=$(command -v nvcc || true)
hipcc=${HIPCC:-$(command -v hipcc || true)}
[ -n "$hipcc" ] || { [ -x /opt/rocm/bin/hipcc ] && hipcc=/opt/rocm/bin/hipcc; }

ran=0
pids=""
for f in "$src"/kernels/*.hip; do
  b=$(basename "$f" .hip)
  if [ -n "$nvcc" ] && [ -x "$nvcc" ]; then
    ( "$nvcc" -x cu -std=c++17 -O3 -arch=sm_90 --expt-relaxed-constexpr $inc -c "$f" -o "$tmp/$b.cuda.o" \
        > "$tmp/$b.cuda.log" 2>&1 && echo "ok: nvcc sm_90 $b.hip" \
        || { echo "FAIL: nvcc sm_90 $b.hip"; cat "$tmp/$b.cuda.log"; exit 1; } ) &
    pids="$pids $!"
  fi
  if [ -n "$hipcc" ]; then
    ( "$hipcc" -x hip -std=c++17 -O3 --offload-arch=gfx1030 --offload-arch=gfx90a $inc \
        -c "$f" -o "$tmp/$b.hip.o" > "$tmp/$b.hip.log" 2>&1 \
        && echo "ok: hipcc gfx1030,gfx90a $b.hip" \
        || { echo "FAIL: hipcc gfx1030,gfx90a $b.hip"; cat "$tmp/$b.hip.log"; exit 1; } ) &
    pids="$pids $!"
  fi
done
[ -n "$nvcc" ] && [ -x "$nvcc" ] && ran=1 || echo "skip: nvcc not found (install the CUDA toolkit or set NVCC)"
[ -n "$hipcc" ] && ran=1 || echo "skip: hipcc not found (Debian 12: apt-get install hipcc)"
if [ "$ran" = 0 ]; then
  echo "neither nvcc nor hipcc is installed: nothing to check"
  exit 77
fi
status=0
for p in $pids; do
  wait "$p" || status=1
done
exit $status
