#!/bin/sh
# tools/bench-gpu.sh — GPU benchmarks (issue 4); each prints a Markdown table.
#
#   tools/bench-gpu.sh [build-dir] [formats]
#       GB/s of the GPU decode matvec (qmatvec_core) per format at the 7B decode shapes, next
#       to the device's measured copy bandwidth (method: tests/gpu/bench-qmatvec.c), e.g.
#       tools/bench-gpu.sh build-gpu q4_0,q4_K
#   tools/bench-gpu.sh --models [build-dir] [types]
#       pp512 and tg128 of synthetic Llama-2-7B-shape models (default types Q4_0,Q4_K,Q8_0;
#       `hanzo synth --arch llama --shape llama2-7b --type T --pure --fast --vocab VOCAB`, made
#       once in $HZ_BENCH_CACHE, default ~/.cache/hanzo/bench) with `test-forward --bench`
#       (pp512: one 512-token prefill pass; tg128: the captured decode step with the argmax
#       on the device), and, when LLAMA_CUDA_BIN names the bin/ folder of a llama.cpp CUDA
#       build, llama.cpp's llama-bench on the same files (-p 512 -n 128 -ngl 99 -r 3, its
#       defaults otherwise), with our speed over llama.cpp's. VOCAB defaults to
#       ../shared/models/stories260K.gguf (a 512-token vocabulary: both programs read the
#       same small logits matrix). docs/PERFORMANCE.md has the numbers and how llama.cpp
#       was built.
# Builds with -Dcuda=enabled (HZ_GPU=hip: -Dhip=enabled) if the build dir does not exist.
# Exit status: 0, or that of the first failing build or benchmark; 2 on usage errors.
set -eu
cd "$(dirname "$0")/.."
models=0
if [ "${1:-}" = --models ]; then
  models=1
  shift
fi
build=${1:-build-gpu}
backend=${HZ_GPU:-cuda}
if [ ! -d "$build" ]; then
  meson setup "$build" -D"$backend"=enabled -Dapp=disabled
fi
shift $(( $# > 0 ? 1 : 0 ))
if [ "$models" = 0 ]; then
  ninja -C "$build" tests/gpu/bench-qmatvec
  exec "$build/tests/gpu/bench-qmatvec" "$@"
fi

types=${1:-Q4_0,Q4_K,Q8_0}
vocab=${VOCAB:-${HZ_SHARED_DIR:-../shared}/models/stories260K.gguf}
cache=${HZ_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hanzo/bench}
[ -f "$vocab" ] || { echo "bench-gpu: vocabulary file not found: $vocab (set VOCAB)" >&2; exit 2; }
ninja -C "$build" tools/hanzo tests/gpu/test-forward
mkdir -p "$cache"
llama=${LLAMA_CUDA_BIN:-}
if [ -n "$llama" ] && [ ! -x "$llama/llama-bench" ]; then
  echo "bench-gpu: no llama-bench in LLAMA_CUDA_BIN=$llama: llama.cpp columns skipped" >&2
  llama=
fi
[ -n "$llama" ] || echo "(LLAMA_CUDA_BIN not set: llama.cpp columns skipped)" >&2

# t/s of the test-forward --bench table row whose first cell starts with $1
ours_ts() { awk -F'|' -v k="$1" 'index($2, k) == 2 { gsub(/ /, "", $5); print $5; exit }' "$2"; }
# avg_ts of the llama-bench JSONL line with n_prompt $1 and n_gen $2
llama_ts() {
  grep "\"n_prompt\": *$1," "$3" | grep "\"n_gen\": *$2," | head -n 1 \
    | sed 's/.*"avg_ts": *\([0-9.]*\).*/\1/'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2fx", a / b; else print "-" }'; }

rows=""
for t in $(echo "$types" | tr ',' ' '); do
  f="$cache/llama2-7b-$t-pure-fast.gguf"
  if [ ! -f "$f" ]; then
    "$build/tools/hanzo" synth --arch llama --shape llama2-7b --type "$t" --pure --fast \
      --vocab "$vocab" -o "$f" >&2
  fi
  log="$cache/bench-gpu-$t.txt"
  rc=0
  "$build/tests/gpu/test-forward" --bench "$f" 128 > "$log" || rc=$?
  if [ "$rc" != 0 ]; then
    tail -n 3 "$log" >&2
    exit "$rc"
  fi
  pp=$(ours_ts "pp512" "$log")
  tg=$(ours_ts "graph, device argmax" "$log")
  lpp=- ltg=-
  if [ -n "$llama" ]; then
    LD_LIBRARY_PATH="$llama${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      "$llama/llama-bench" -m "$f" -p 512 -n 128 -ngl 99 -r 3 -o jsonl > "$cache/llama-bench-$t.jsonl"
    lpp=$(llama_ts 512 0 "$cache/llama-bench-$t.jsonl")
    ltg=$(llama_ts 0 128 "$cache/llama-bench-$t.jsonl")
  fi
  rows="$rows| $t | ${pp:--} | $lpp | $(ratio "${pp:-0}" "$lpp") | ${tg:--} | $ltg | $(ratio "${tg:-0}" "$ltg") |
"
done
echo
echo "7B shape (hanzo synth --pure --fast), tokens/s; device: $(grep -m 1 '^device:' "$cache/bench-gpu-$(echo "$types" | cut -d, -f1).txt" | cut -c9-)"
echo
echo "| type | pp512 ours | pp512 llama.cpp | x | tg128 ours | tg128 llama.cpp | x |"
echo "|---|---:|---:|---:|---:|---:|---:|"
printf '%s' "$rows"
