#!/bin/sh
# tools/bench-serving.sh — serving benchmark (hanzo/serving.h): throughput and p50/p99
# time-to-first-token for 1, 4, 16 and 64 concurrent chat sessions sharing a system
# prompt, on the CPU with a tiny model; prints Markdown tables (with and without the
# prefix cache).
#
#   tools/bench-serving.sh [BUILD_DIR] [MODEL]     (defaults: build, ../shared/models/stories260K.gguf)
# Environment: CONC (1,4,16,64), SYS (512), USER (32), GEN (64), THREADS (cores), BATCH (256).
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
