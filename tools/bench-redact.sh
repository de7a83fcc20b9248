#!/bin/sh
# tools/bench-redact.sh — benchmark of the rule-based redactor (libhzredact) on one core:
#   1. throughput in MB/s over the texts of the redactor-eval files (goal >= 20 MB/s),
#   2. latency of redacting one 500-word chat message (goal < 5 ms).
# Usage: tools/bench-redact.sh [--compare [ROUNDS]] [BUILD_DIR] [EVAL_DIR]
#   BUILD_DIR defaults to ./build, EVAL_DIR to ../shared/redactor-eval.
# Prints the load average, then a table: throughput as the best and median of 5 trials, both
# CPU-time and wall-clock rates (on a shared machine the CPU-time figure of the best trial is
# the one-core number), and the latency. Runs at nice -5 when allowed.
# --compare: the cost of the learned PERSON tagger. Runs the benchmark ROUNDS times (default
# 3) with the tagger and with the rules alone (HZ_REDACT_PERSON_TAGGER=none), interleaved so
# that both see the same load, and prints one row per run (load average, best CPU-time
# throughput, median latency) and the ratio of the best throughputs.
set -eu
cd "$(dirname "$0")/.."
compare=0
if [ "${1:-}" = "--compare" ]; then
  compare=3
  shift
  case "${1:-}" in
    ''|*[!0-9]*) ;;
    *) compare=$1; shift ;;
  esac
fi
build=${1:-build}
eval_dir=${2:-../shared/redactor-eval}
bench="$build/tools/hanzo-bench-redact"
if [ ! -x "$bench" ]; then
  ninja -C "$build" tools/hanzo-bench-redact >/dev/null
fi
files=""
for f in presidio_synth_v2 wnut17_dev wikigold_first60 handmade_cases; do
  [ -f "$eval_dir/$f.jsonl" ] && files="$files $eval_dir/$f.jsonl"
done
if [ -z "$files" ]; then
  echo "bench-redact: no evaluation files in $eval_dir" >&2
  exit 1
fi
# one core: pin to CPU 0 when taskset exists
prio=""
if nice -n -5 true 2>/dev/null; then
  prio="nice -n -5"
fi
pin=""
if command -v taskset >/dev/null 2>&1; then
  pin="taskset -c 0"
fi
if [ "$compare" -eq 0 ]; then
  uptime | sed "s/^/load: /"
  exec $prio $pin "$bench" $files
fi
# --compare: interleaved runs, one table row each
best_t=0
best_r=0
echo "| run | setting | load average (1 min) | throughput, CPU time, best of 5 | latency, 500 words, median |"
echo "|---:|---|---:|---:|---:|"
i=1
while [ "$i" -le "$compare" ]; do
  for setting in tagger rules; do
    load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo "?")
    if [ "$setting" = rules ]; then
      out=$(HZ_REDACT_PERSON_TAGGER=none $prio $pin "$bench" $files)
    else
      out=$(env -u HZ_REDACT_PERSON_TAGGER $prio $pin "$bench" $files)
    fi
    mbs=$(printf '%s\n' "$out" | sed -n 's/^| throughput, CPU time, best of [0-9]* trials | \([0-9.]*\) MB\/s.*/\1/p')
    lat=$(printf '%s\n' "$out" | sed -n 's/^| latency, 500-word message.* | \([0-9.]*\) ms | <.*/\1/p')
    echo "| $i | $setting | $load | $mbs MB/s | $lat ms |"
    if [ "$setting" = rules ]; then
      best_r=$(awk -v a="$best_r" -v b="$mbs" 'BEGIN { print (b > a) ? b : a }')
    else
      best_t=$(awk -v a="$best_t" -v b="$mbs" 'BEGIN { print (b > a) ? b : a }')
    fi
  done
  i=$((i + 1))
done
awk -v t="$best_t" -v r="$best_r" 'BEGIN { printf "\nbest: with the tagger %.1f MB/s, rules alone %.1f MB/s: the tagger costs %.0f %% of the rules-alone throughput\n", t, r, (r > 0 ? 100 * (1 - t / r) : 0) }'
