#!/bin/sh
# tools/bench-cpu.sh — CPU speed of the engine: `hanzo bench` (pp512 / tg128, median of
# 5 repeats ± stddev, llama-bench's method) on stories260K and on any GGUF given.
# Usage: tools/bench-cpu.sh [-t THREADS] [-B BUILD_DIR] [MODEL.gguf ...]
#   THREADS defaults to the number of cores (comma-separated lists allowed: -t 1,2),
#   BUILD_DIR to ./build. stories260K is read from ../shared/models (or $HZ_SHARED_DIR).
# Reference (llama.cpp CPU build, this 2-core machine, 2 threads, stories260K):
#   tg128 about 2,800 t/s, pp512 about 2,970 t/s.
set -eu
cd "$(dirname "$0")/.."
threads=$(nproc)
build=build
while getopts "t:B:" opt; do
  case $opt in
    t) threads=$OPTARG ;;
    B) build=$OPTARG ;;
    *) echo "usage: $0 [-t THREADS] [-B BUILD_DIR] [MODEL.gguf ...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
hanzo="$build/tools/hanzo"
if [ ! -x "$hanzo" ]; then
  ninja -C "$build" tools/hanzo >/dev/null
fi
shared=${HZ_SHARED_DIR:-../shared}
models="$shared/models/stories260K.gguf $*"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
uptime | sed "s/^ */load: /"
echo "threads: $threads"
echo
status=0
for m in $models; do
  if [ ! -f "$m" ]; then
    echo "bench-cpu: $m not found, skipped" >&2
    continue
  fi
  echo "## $(basename "$m")"
  "$hanzo" bench -m "$m" -p 512 -n 128 -r 5 -t "$threads" || status=1
  echo
done
exit $status
