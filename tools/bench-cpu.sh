#!/bin/sh
# tools/bench-cpu.sh — CPU speed of the engine: `hanzo bench` (pp512 / tg128, llama-bench's
# method; also weight bytes per token and the memory-bandwidth roofline) on stories260K,
# the stories-distill quantizations, synthetic TinyLlama-1.1B files and any GGUF given,
# optionally next to llama.cpp's CPU build on the same files; ends with a summary table.
#
# Usage: tools/bench-cpu.sh [-t THREADS] [-B BUILD_DIR] [-r REPS] [-P TEXT] [MODEL.gguf ...]
#   THREADS defaults to the number of cores (comma-separated lists allowed: -t 1,2),
#   BUILD_DIR to ./build, REPS to 3. Shared data from ../shared (or $HZ_SHARED_DIR).
#   -P TEXT: instead of speed, compare `hanzo perplexity` with llama.cpp's (llama-perplexity's
#   method, tools/llama-ref-bench.c) on TEXT for the same models, chunks of
#   HZ_BENCH_PPL_CTX (128) tokens, at most HZ_BENCH_PPL_CHUNKS chunks (default: all for
#   files under 100 MB, 2 for larger ones).
# Environment:
#   LLAMA_LIB_DIR     a folder with llama.cpp's shared libraries (libllama*.so, libggml*.so
#                     and the CPU backends libggml-cpu-*.so): adds llama.cpp columns. Not
#                     shipped with Hanzo; e.g. `npm pack @node-llama-cpp/linux-x64@3.22.1`
#                     and untar (package/bins/linux-x64), or build/bin of your own llama.cpp
#                     build (cmake -DBUILD_SHARED_LIBS=ON). tools/llama-ref-bench.c is
#                     compiled against it with cc into the cache folder.
#   HZ_BENCH_CACHE    cache folder (default ${XDG_CACHE_HOME:-~/.cache}/hanzo/bench)
#   HZ_BENCH_DISTILL  0: skip the stories-distill files (default types: Q4_0 Q8_0 Q4_K_M
#                     Q6_K IQ4_XS F32, or HZ_BENCH_DISTILL_TYPES)
#   HZ_BENCH_SYNTH    0: skip the synthetic TinyLlama files; HZ_BENCH_SYNTH_TYPES for
#                     another list of types (default Q4_0 Q8_0 Q4_K Q6_K IQ4_XS)
#   HZ_BANDWIDTH      memory read bandwidth in GB/s for the roofline (default: measured)
#   HZ_REPACK=0       run hanzo without the load-time repacked weights (engine/quant/repack.h),
#                     to compare the kernels on the original layout
#   HZ_BENCH_PP, HZ_BENCH_TG   prompt and generated tokens (default 512 and 128; smaller
#                     values keep a run short on a loaded machine, where llama.cpp's
#                     spinning threads slow down by orders of magnitude)
# Reference (llama.cpp CPU build, this 2-core machine when idle, 2 threads, stories260K):
#   tg128 about 2,800 t/s, pp512 about 2,970 t/s.
set -eu
cd "$(dirname "$0")/.."
threads=$(nproc)
build=build
reps=3
ppl_text=
while getopts "t:B:r:P:" opt; do
  case $opt in
    t) threads=$OPTARG ;;
    B) build=$OPTARG ;;
    r) reps=$OPTARG ;;
    P) ppl_text=$OPTARG ;;
    *) echo "usage: $0 [-t THREADS] [-B BUILD_DIR] [-r REPS] [-P TEXT] [MODEL.gguf ...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
hanzo="$build/tools/hanzo"
if [ ! -x "$hanzo" ]; then
  ninja -C "$build" tools/hanzo >/dev/null
fi
shared=${HZ_SHARED_DIR:-../shared}
pp=${HZ_BENCH_PP:-512}
tg=${HZ_BENCH_TG:-128}
cache=${HZ_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hanzo/bench}
mkdir -p "$cache"
bw_arg=
[ -n "${HZ_BANDWIDTH:-}" ] && bw_arg="--bandwidth $HZ_BANDWIDTH"

# ---- llama.cpp reference harness (optional) ----
. tools/llama-ref.sh
llama_ref_build "$cache" tools/llama-ref-bench.c
ref=$llama_ref

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
uptime | sed "s/^ */load: /"
echo "threads: $threads"
echo

# ---- the model list: "label|path" lines ----
list="$cache/.bench-cpu-list.$$"
summary="$cache/.bench-cpu-summary.$$"
trap 'rm -f "$list" "$summary"' EXIT
: >"$list"
: >"$summary"
echo "stories260K|$shared/models/stories260K.gguf" >>"$list"
if [ "${HZ_BENCH_DISTILL:-1}" != 0 ]; then
  for type in ${HZ_BENCH_DISTILL_TYPES:-Q4_0 Q8_0 Q4_K_M Q6_K IQ4_XS F32}; do
    echo "stories-distill $type|$shared/models/stories-distill/stories-distill-$type.gguf" >>"$list"
  done
fi
# Synthetic TinyLlama-1.1B: `hanzo synth` writes random weights with its shape (dim 2048,
# 22 layers, 32 heads / 4 KV heads, FFN 5632) and the Llama 2 SPM vocabulary (32000
# tokens, from ../shared/golden/tokenizer/ggml-vocab-llama-spm.gguf) once per format into
# the cache folder. Q4_K means llama-quantize's Q4_K_M mix.
status=0
if [ "${HZ_BENCH_SYNTH:-1}" != 0 ]; then
  vocab="$shared/golden/tokenizer/ggml-vocab-llama-spm.gguf"
  [ -f "$vocab" ] || vocab="$shared/models/stories260K.gguf"
  for type in ${HZ_BENCH_SYNTH_TYPES:-Q4_0 Q8_0 Q4_K Q6_K IQ4_XS}; do
    m="$cache/synth-tinyllama-1.1b-$type.gguf"
    if [ ! -f "$m" ]; then
      echo "bench-cpu: generating $m (once)" >&2
      "$hanzo" synth --shape tinyllama-1.1b --type "$type" --vocab "$vocab" --seed 1 -o "$m" >&2 || { status=1; continue; }
    fi
    echo "TinyLlama-1.1B (synthetic) $type|$m" >>"$list"
  done
fi
for m in "$@"; do
  echo "$(basename "$m")|$m" >>"$list"
done

# t/s median of the row whose test column is $2 (pp512, tg128) in a Markdown table on stdin
tps() {
  awk -F'|' -v test="$1" '{ for (i = 2; i < NF; i++) { f = $i; gsub(/ /, "", f);
    if (f == test) { v = $(i + 1); sub(/^ */, "", v); split(v, a, " "); print a[1]; exit } } }'
}
ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b != "" && b + 0 > 0) printf "%.2fx", a / b; else printf "-" }'
}

if [ -n "$ppl_text" ]; then
  t1=${threads%%,*}
  echo "## perplexity on $(basename "$ppl_text"), chunks of ${HZ_BENCH_PPL_CTX:-128} tokens, $t1 threads"
  echo "| model | chunks | hanzo | llama.cpp |"
  echo "| --- | --: | --: | --: |"
  while IFS='|' read -r label m; do
    [ -f "$m" ] || continue
    chunks=${HZ_BENCH_PPL_CHUNKS:-}
    [ -z "$chunks" ] && [ "$(stat -c %s "$m")" -gt 100000000 ] && chunks=2
    carg=; [ -n "$chunks" ] && carg="--chunks $chunks"
    ours=$("$hanzo" perplexity -m "$m" -f "$ppl_text" -c "${HZ_BENCH_PPL_CTX:-128}" -t "$t1" $carg 2>/dev/null |
           sed -n 's/^Final estimate: PPL = //p') || status=1
    theirs=-
    [ -n "$ref" ] && theirs=$("$ref" -m "$m" -t "$t1" --perplexity "$ppl_text" -c "${HZ_BENCH_PPL_CTX:-128}" $carg 2>/dev/null |
           sed -n 's/^Final estimate: PPL = //p')
    echo "| $label | ${chunks:-all} | ${ours:-error} | ${theirs:-error} |"
  done <"$list"
  exit $status
fi

while IFS='|' read -r label m; do
  if [ ! -f "$m" ]; then
    echo "bench-cpu: $m not found, skipped" >&2
    continue
  fi
  echo "## $label"
  out=$("$hanzo" bench -m "$m" -p "$pp" -n "$tg" -r "$reps" -t "$threads" $bw_arg) || status=1
  echo "$out"
  for t in $(echo "$threads" | tr ',' ' '); do
    ours=$(echo "$out" | awk -F'|' -v t="$t" '{ f = $6; gsub(/ /, "", f); if (f == t) print }')
    opp=$(echo "$ours" | tps "pp$pp")
    otg=$(echo "$ours" | tps "tg$tg")
    roof=$(echo "$ours" | awk -F'|' -v test="tg$tg" '{ f = $7; gsub(/ /, "", f); if (f == test) { g = $11; gsub(/ /, "", g); print g } }')
    lpp=; ltg=
    if [ -n "$ref" ]; then
      lout=$("$ref" -m "$m" -t "$t" -p "$pp" -n "$tg" -r "$reps" 2>/dev/null) || { echo "bench-cpu: llama.cpp failed on $m" >&2; lout=; }
      echo "$lout"
      lpp=$(echo "$lout" | tps "pp$pp")
      ltg=$(echo "$lout" | tps "tg$tg")
    fi
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$label" "$t" "$opp" "${lpp:--}" \
      "$(ratio "$opp" "$lpp")" "$otg" "${ltg:--}" "$(ratio "$otg" "$ltg")" "${roof:--}" >>"$summary"
  done
  echo
done <"$list"

echo "## summary (t/s; ratio = ours / llama.cpp; goal tg >= 1.0x, pp >= 0.8x)"
uptime | sed "s/^ */load at the end: /"
echo "| model | threads | pp$pp ours | pp$pp llama.cpp | ratio | tg$tg ours | tg$tg llama.cpp | ratio | tg of roofline |"
echo "| --- | --: | --: | --: | --: | --: | --: | --: | --: |"
cat "$summary"
exit $status
