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
# ---- synthetic TinyLlama-1.1B at several formats (section owned by the quantization tools) ----
# `hanzo synth` writes random weights with TinyLlama-1.1B's shape (dim 2048, 22 layers, 32
# heads / 4 KV heads, FFN 5632) and the Llama 2 SPM vocabulary (32000 tokens, from
# ../shared/golden/tokenizer/ggml-vocab-llama-spm.gguf) once per format into a cache folder
# ($HZ_BENCH_CACHE, default ${XDG_CACHE_HOME:-~/.cache}/hanzo/bench), then runs
# `hanzo bench` pp512/tg128 on each. Q4_K means llama-quantize's Q4_K_M mix. Set
# HZ_BENCH_SYNTH=0 to skip, HZ_BENCH_SYNTH_REPS to change the repeats (default 3),
# HZ_BENCH_SYNTH_TYPES for another list of types.
if [ "${HZ_BENCH_SYNTH:-1}" != 0 ]; then
  cache=${HZ_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hanzo/bench}
  vocab="$shared/golden/tokenizer/ggml-vocab-llama-spm.gguf"
  [ -f "$vocab" ] || vocab="$shared/models/stories260K.gguf"
  mkdir -p "$cache"
  for type in ${HZ_BENCH_SYNTH_TYPES:-Q4_0 Q8_0 Q4_K Q6_K IQ4_XS}; do
    m="$cache/synth-tinyllama-1.1b-$type.gguf"
    if [ ! -f "$m" ]; then
      echo "bench-cpu: generating $m (once)" >&2
      "$hanzo" synth --shape tinyllama-1.1b --type "$type" --vocab "$vocab" --seed 1 -o "$m" >&2 || { status=1; continue; }
    fi
    echo "## synthetic TinyLlama-1.1B $type ($(basename "$vocab") vocabulary)"
    "$hanzo" bench -m "$m" -p 512 -n 128 -r "${HZ_BENCH_SYNTH_REPS:-3}" -t "$threads" || status=1
    echo
  done
fi
exit $status
