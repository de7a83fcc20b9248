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
#       same small logits matrix). A type written moe:T is the qwen3moe 30B-A3B shape, 48
#       layers (`hanzo synth --shape moe-30b-a3b --type T --pure --fast`, 17 GB for Q4_K).
#       Our tg128 is the mean of 3 runs (as llama-bench's), with the GB/s of weights it
#       reads and their share of the device's measured copy bandwidth.
#       docs/PERFORMANCE.md has the numbers and how llama.cpp was built.
# Builds with -Dcuda=enabled (HZ_GPU=hip: -Dhip=enabled) if the build dir does not exist;
# HZ_BENCH_BIN=DIR (holding hanzo and test-forward, e.g. a packed build on a GPU machine)
# uses those binaries instead of a build dir.
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
bin=${HZ_BENCH_BIN:-}
if [ -z "$bin" ] && [ ! -d "$build" ]; then
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
if [ -n "$bin" ]; then
  hanzo=$bin/hanzo tf=$bin/test-forward
else
  ninja -C "$build" tools/hanzo tests/gpu/test-forward
  hanzo=$build/tools/hanzo tf=$build/tests/gpu/test-forward
fi
mkdir -p "$cache"
llama=${LLAMA_CUDA_BIN:-}
if [ -n "$llama" ] && [ ! -x "$llama/llama-bench" ]; then
  echo "bench-gpu: no llama-bench in LLAMA_CUDA_BIN=$llama: llama.cpp columns skipped" >&2
  llama=
fi
[ -n "$llama" ] || echo "(LLAMA_CUDA_BIN not set: llama.cpp columns skipped)" >&2

# cell $3 (5: t/s, 6: GB/s, 7: % of copy) of the test-forward --bench table row whose
# first cell starts with $1
ours_ts() {
  awk -F'|' -v k="$1" -v c="${3:-5}" 'index($2, k) == 2 { gsub(/ /, "", $c); print $c; exit }' "$2"
}
# avg_ts of the llama-bench JSONL line with n_prompt $1 and n_gen $2
llama_ts() {
  grep "\"n_prompt\": *$1," "$3" | grep "\"n_gen\": *$2," | head -n 1 \
    | sed 's/.*"avg_ts": *\([0-9.]*\).*/\1/' | awk '{ printf "%.1f\n", $1 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2fx", a / b; else print "-" }'; }

rows=""
for spec in $(echo "$types" | tr ',' ' '); do
  case $spec in
    moe:*) t=${spec#moe:} name="30B-A3B $t" f="$cache/moe-30b-a3b-$t-pure-fast.gguf"
           synth="--shape moe-30b-a3b" ;;
    *) t=$spec name="7B $t" f="$cache/llama2-7b-$t-pure-fast.gguf"
       synth="--arch llama --shape llama2-7b" ;;
  esac
  if [ ! -f "$f" ]; then
    "$hanzo" synth $synth --type "$t" --pure --fast --vocab "$vocab" -o "$f" >&2
  fi
  log="$cache/bench-gpu-$(echo "$spec" | tr ':' '-').txt"
  rc=0
  HZ_BENCH_GENERATE=0 "$tf" --bench "$f" 128 > "$log" || rc=$?
  if [ "$rc" != 0 ]; then
    tail -n 3 "$log" >&2
    exit "$rc"
  fi
  pp=$(ours_ts "pp512" "$log")
  tg=$(ours_ts "graph, device argmax" "$log")
  gbs=$(ours_ts "graph, device argmax" "$log" 6)
  pct=$(ours_ts "graph, device argmax" "$log" 7)
  lpp=- ltg=-
  if [ -n "$llama" ]; then
    lj="$cache/llama-bench-$(echo "$spec" | tr ':' '-').jsonl"
    LD_LIBRARY_PATH="$llama${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      "$llama/llama-bench" -m "$f" -p 512 -n 128 -ngl 99 -r 3 -o jsonl > "$lj"
    lpp=$(llama_ts 512 0 "$lj")
    ltg=$(llama_ts 0 128 "$lj")
  fi
  rows="$rows| $name | ${pp:--} | $lpp | $(ratio "${pp:-0}" "$lpp") | ${tg:--} | $ltg | $(ratio "${tg:-0}" "$ltg") | ${gbs:--} | ${pct:--} |
"
done
first=$(echo "$types" | cut -d, -f1 | tr ':' '-')
echo
echo "synthetic shapes (hanzo synth --pure --fast), tokens/s; device: $(grep -m 1 '^device:' "$cache/bench-gpu-$first.txt" | cut -c9-); $(grep -m 1 '^copy bandwidth:' "$cache/bench-gpu-$first.txt")"
echo
echo "| model | pp512 ours | pp512 llama.cpp | x | tg128 ours | tg128 llama.cpp | x | tg GB/s of weights | % of copy |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
printf '%s' "$rows"
