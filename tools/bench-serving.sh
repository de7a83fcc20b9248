#!/bin/sh
# tools/bench-serving.sh — serving benchmark (hanzo/serving.h): throughput and p50/p99
# time-to-first-token for 1, 4, 16 and 64 concurrent chat sessions sharing a system
# prompt, on the CPU with a tiny model; prints Markdown tables (with and without the
# prefix cache). With LLAMA_LIB_DIR set (see tools/llama-ref.sh) it adds llama.cpp's
# aggregate throughput at LLAMA_NPL (16) parallel sequences on the same file, by
# llama-batched-bench's method (tools/llama-ref-bench.c --batched: every sequence its own
# prompt of SYS + USER tokens, then GEN decode steps of one token per sequence per batch;
# S_TG = decode tokens / decode seconds, S = all tokens / all seconds). Compare S_TG with
# "gen tok/s" and S with "total tok/s" of the "prefix cache off" table at 16 sessions.
#
#   tools/bench-serving.sh [BUILD_DIR] [MODEL]     (defaults: build, ../shared/models/stories260K.gguf)
# Environment: CONC (1,4,16,64), SYS (512), USER (32), GEN (64), THREADS (cores), BATCH (256),
#   LLAMA_LIB_DIR, LLAMA_NPL (16), HZ_BENCH_CACHE (where llama-ref-bench is built).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
model=${2:-${HZ_SHARED_DIR:-$here/../shared}/models/stories260K.gguf}
bin=$build/tools/hanzo-bench-serving
[ -x "$bin" ] || { echo "build first: ninja -C $build tools/hanzo-bench-serving" >&2; exit 2; }
[ -f "$model" ] || { echo "model not found: $model" >&2; exit 2; }
args="-m $model -c ${CONC:-1,4,16,64} -s ${SYS:-512} -u ${USER:-32} -n ${GEN:-64} -b ${BATCH:-256}"
[ -n "${THREADS:-}" ] && args="$args -t $THREADS"
echo "## prefix cache on"
"$bin" $args
echo
echo "## prefix cache off"
"$bin" $args --no-prefix-cache
. "$here/tools/llama-ref.sh"
llama_ref_build "${HZ_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hanzo/bench}" "$here/tools/llama-ref-bench.c"
if [ -n "$llama_ref" ]; then
  echo
  echo "## llama.cpp, ${LLAMA_NPL:-16} parallel sequences (llama-batched-bench's method)"
  "$llama_ref" -m "$model" -t "${THREADS:-$(nproc)}" --batched "${LLAMA_NPL:-16}" \
    --npp $(( ${SYS:-512} + ${USER:-32} )) --ntg "${GEN:-64}"
fi
