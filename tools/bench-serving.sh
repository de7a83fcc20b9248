#!/bin/sh
# tools/bench-serving.sh — serving benchmark (hanzo/serving.h): throughput and p50/p99
# time-to-first-token for 1, 4, 16 and 64 concurrent chat sessions sharing a system
# prompt, on the CPU with a tiny model; prints Markdown tables (with and without the
# prefix cache). With LLAMA_LIB_DIR set (see tools/llama-ref.sh) it adds llama.cpp's
# aggregate throughput at LLAMA_NPL (16) parallel sequences on the same file, by
# llama-batched-bench's method (tools/llama-ref-bench.c --batched: every sequence its own
# prompt of SYS + USER tokens, then GEN decode steps of one token per sequence per batch;
# S_TG = decode tokens / decode seconds, S = all tokens / all seconds). Compare S_TG with
# "decode tok/s" and S with "total tok/s" of the "prefix cache off" table at 16 sessions.
# The CPU tables run with HZ_DEVICE=cpu (a GPU build would otherwise serve on the GPU).
#
# GPU rows (GPU=1, a -Dcuda / -Dhip build): the same sessions on a 7B-shape synthetic model
# (GPU_MODEL, default: made once with `hanzo synth --arch llama --shape llama2-7b --type
# Q4_0 --pure --vocab MODEL` in HZ_BENCH_CACHE), served by the GPU step
# (engine/backend-hip/forward-gpu-paged.h), prefix cache on; one table per value of
# GPU_MV (HZ_GPU_SERVE_MV: rows up to which the matrices run as batched matvecs; default
# the server's). Then the aggregate decode speed-up at 16 sessions over 1 (goal >= 4x).
#
#   tools/bench-serving.sh [BUILD_DIR] [MODEL]     (defaults: build, ../shared/models/stories260K.gguf)
# Environment: CONC (1,4,16,64), SYS (512), USER (32), GEN (64), THREADS (cores), BATCH (256),
#   LLAMA_LIB_DIR, LLAMA_NPL (16), HZ_BENCH_CACHE (where llama-ref-bench is built),
#   CPU (1; 0 skips the CPU tables), GPU (0), GPU_MODEL, GPU_KV_MIB (16384), GPU_MV.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
model=${2:-${HZ_SHARED_DIR:-$here/../shared}/models/stories260K.gguf}
bin=$build/tools/hanzo-bench-serving
[ -x "$bin" ] || { echo "build first: ninja -C $build tools/hanzo-bench-serving" >&2; exit 2; }
[ -f "$model" ] || { echo "model not found: $model" >&2; exit 2; }
args="-m $model -c ${CONC:-1,4,16,64} -s ${SYS:-512} -u ${USER:-32} -n ${GEN:-64} -b ${BATCH:-256}"
[ -n "${THREADS:-}" ] && args="$args -t $THREADS"
cache=${HZ_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hanzo/bench}
if [ "${GPU:-0}" = 1 ]; then
  gmodel=${GPU_MODEL:-$cache/llama2-7b-Q4_0-pure.gguf}
  if [ ! -f "$gmodel" ]; then
    mkdir -p "$(dirname "$gmodel")"
    "$build/tools/hanzo" synth --arch llama --shape llama2-7b --type Q4_0 --pure --vocab "$model" \
      -o "$gmodel" -t "${THREADS:-$(nproc)}" >&2
  fi
  gargs="-m $gmodel -c ${CONC:-1,4,16,64} -s ${SYS:-512} -u ${USER:-32} -n ${GEN:-64} -b ${BATCH:-256} -k ${GPU_KV_MIB:-16384}"
  mkdir -p "$cache"
  for mv in ${GPU_MV:-default}; do
    echo "## GPU, prefix cache on, HZ_GPU_SERVE_MV=$mv"
    if [ "$mv" = default ]; then "$bin" $gargs; else HZ_GPU_SERVE_MV=$mv "$bin" $gargs; fi | tee "$cache/gpu-serving.txt"
    # aggregate decode (decode tok/s, column 5) at 16 sessions over 1 session
    awk -F'|' '$2+0 == 1 { one = $5 } $2+0 == 16 { sixteen = $5 }
      END { if (one > 0 && sixteen > 0)
              printf "\naggregate decode, 16 sessions / 1: %.1fx (goal >= 4x)\n", sixteen / one }' \
      "$cache/gpu-serving.txt"
    echo
  done
fi
[ "${CPU:-1}" = 0 ] && exit 0
echo "## prefix cache on"
HZ_DEVICE=cpu "$bin" $args
echo
echo "## prefix cache off"
HZ_DEVICE=cpu "$bin" $args --no-prefix-cache
. "$here/tools/llama-ref.sh"
llama_ref_build "$cache" "$here/tools/llama-ref-bench.c"
if [ -n "$llama_ref" ]; then
  echo
  echo "## llama.cpp, ${LLAMA_NPL:-16} parallel sequences (llama-batched-bench's method)"
  "$llama_ref" -m "$model" -t "${THREADS:-$(nproc)}" --batched "${LLAMA_NPL:-16}" \
    --npp $(( ${SYS:-512} + ${USER:-32} )) --ntg "${GEN:-64}"
fi
