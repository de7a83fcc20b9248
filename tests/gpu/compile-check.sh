#!/bin/sh
# tests/gpu/compile-check.sh — CI compile check of the GPU kernels without a GPU
# (meson test suite 'gpu-build'). Compiles every kernels/*.hip source:
#   nvcc  -x cu for sm_90                  (CUDA toolkit: $CUDA_HOME or /usr/local/cuda; the
#                                          build's --expt-relaxed-constexpr, kernels/meson.build)
#   hipcc -x hip for gfx1030 and gfx90a    (Debian 12's hipcc 5.2: apt-get install hipcc)
#   clang -x hip for gfx1151, device code only, to assembly (the product's target, RDNA 3.5,
#                                          wave32: LLVM 17 or newer with the HIP headers, e.g.
#                                          Debian 12's clang-19 + libamdhip64-dev; -nogpulib:
#                                          no gfx11 device libraries are needed, the ocml
#                                          calls stay unresolved in the assembly; $HIP_CLANG
#                                          names the compiler)
# all at once, into a temporary directory. A missing compiler is skipped with a message;
# exit 77 (skip) when none is present. About 40 s of CPU per compiler.
set -u
src=${HZ_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
inc="-I$src/kernels -I$src/engine/quant"
nvcc=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
[ -x "$nvcc" ] || nvcc=$(command -v nvcc || true)
hipcc=${HIPCC:-$(command -v hipcc || true)}
[ -n "$hipcc" ] || { [ -x /opt/rocm/bin/hipcc ] && hipcc=/opt/rocm/bin/hipcc; }
hipclang=${HIP_CLANG:-}
if [ -z "$hipclang" ]; then
  for v in 21 20 19 18 17; do
    c=/usr/lib/llvm-$v/bin/clang++
    if [ -x "$c" ] && [ -f /usr/include/hip/hip_runtime.h ]; then hipclang=$c; break; fi
  done
fi

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
  if [ -n "$hipclang" ]; then
    ( "$hipclang" -x hip -std=c++17 -O3 --offload-arch=gfx1151 -nogpulib --cuda-device-only -S \
        $inc "$f" -o "$tmp/$b.gfx1151.s" > "$tmp/$b.gfx1151.log" 2>&1 \
        && grep -q 'amdgcn-amd-amdhsa--gfx1151' "$tmp/$b.gfx1151.s" \
        && ! grep -q 'amdhsa_wavefront_size32 0' "$tmp/$b.gfx1151.s" \
        && echo "ok: clang gfx1151 (wave32) $b.hip" \
        || { echo "FAIL: clang gfx1151 $b.hip"; cat "$tmp/$b.gfx1151.log"; exit 1; } ) &
    pids="$pids $!"
  fi
done
[ -n "$nvcc" ] && [ -x "$nvcc" ] && ran=1 || echo "skip: nvcc not found (install the CUDA toolkit or set NVCC)"
[ -n "$hipcc" ] && ran=1 || echo "skip: hipcc not found (Debian 12: apt-get install hipcc)"
[ -n "$hipclang" ] && ran=1 \
  || echo "skip: no clang >= 17 with the HIP headers for gfx1151 (Debian 12: apt-get install clang-19 libamdhip64-dev)"
if [ "$ran" = 0 ]; then
  echo "no nvcc, hipcc or HIP-capable clang is installed: nothing to check"
  exit 77
fi
status=0
for p in $pids; do
  wait "$p" || status=1
done
exit $status
