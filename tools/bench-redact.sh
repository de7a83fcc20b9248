#!/bin/sh
# tools/bench-redact.sh — benchmark of the rule-based redactor (libhzredact) on one core:
#   1. throughput in MB/s over the texts of the redactor-eval files (goal >= 20 MB/s),
#   2. latency of redacting one 500-word chat message (goal < 5 ms).
# Usage: tools/bench-redact.sh [BUILD_DIR] [EVAL_DIR]
#   BUILD_DIR defaults to ./build, EVAL_DIR to ../shared/redactor-eval.
# Prints the load average, then a table: throughput as the best and median of 5 trials, both
# CPU-time and wall-clock rates (on a shared machine the CPU-time figure of the best trial is
# the one-core number), and the latency. Runs at nice -5 when allowed.
set -eu
cd "$(dirname "$0")/.."
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
uptime | sed "s/^/load: /"
# one core: pin to CPU 0 when taskset exists
prio=""
if nice -n -5 true 2>/dev/null; then
  prio="nice -n -5"
fi
if command -v taskset >/dev/null 2>&1; then
  exec $prio taskset -c 0 "$bench" $files
fi
exec $prio "$bench" $files
