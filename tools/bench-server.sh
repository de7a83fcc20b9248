#!/bin/sh
# tools/bench-server.sh — `hanzo serve` beside llama.cpp's llama-server on the same GGUF file:
# 1, 4 and 16 concurrent streaming completions, aggregate and per-client tokens/s and time to
# first token (tools/bench-server-client.py; the same requests to both servers: temperature
# 0, GEN tokens with ignore_eos, a prompt of its own per client). Prints a Markdown table.
#
#   tools/bench-server.sh [BUILD_DIR] [MODEL]
#     (defaults: build, ../shared/models/stories-distill/stories-distill-Q8_0.gguf)
# Both servers run at once and take turns, REPEAT times per concurrency; rows are medians.
# Environment: CONC (1,4,16), GEN (128), WORDS (prompt words, 40), REPEAT (5), THREADS (compute threads
#   of both servers, default: cores), LLAMA_SERVER (llama.cpp's llama-server binary; default
#   the one in PATH; without one only hanzo serve is measured), LLAMA_CTX (llama-server's
#   context per slot, 512 = the stories models' training context), LLAMA_ARGS (more
#   llama-server arguments, e.g. "-ngl 99" on a GPU), PORT (first port, 18470).
# llama-server runs with -np = the largest CONC (one slot per client), -c = slots x LLAMA_CTX,
# -t/-tb THREADS; hanzo serve with --threads THREADS. Nothing from llama.cpp is part of the
# project: build it yourself (e.g. from the source bundled in npm node-llama-cpp) and point
# LLAMA_SERVER at it.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
model=${2:-${HZ_SHARED_DIR:-$here/../shared}/models/stories-distill/stories-distill-Q8_0.gguf}
hanzo=$build/tools/hanzo
[ -x "$hanzo" ] || { echo "build first: ninja -C $build tools/hanzo" >&2; exit 2; }
[ -f "$model" ] || { echo "model not found: $model" >&2; exit 2; }
conc=${CONC:-1,4,16}
gen=${GEN:-128}
words=${WORDS:-40}
repeat=${REPEAT:-5}
threads=${THREADS:-$(nproc)}
port=${PORT:-18470}
llama=${LLAMA_SERVER:-$(command -v llama-server || true)}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hz-bench-server-XXXXXX")
pids=""
cleanup () {
  for p in $pids; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

# wait until URL/health answers 200 (llama-server: after its model is loaded)
wait_health () {
  i=0
  until python3 -c "import sys, urllib.request; sys.exit(urllib.request.urlopen('$1/health', timeout=2).status != 200)" 2>/dev/null; do
    i=$((i + 1))
    [ $i -lt 600 ] || { echo "no answer from $1/health; log:" >&2; cat "$2" >&2; exit 1; }
    sleep 0.1
  done
}

id=$(basename "$model" .gguf)
"$hanzo" serve -m "$model" --port "$port" --threads "$threads" --idle-unload 0 \
  > "$tmp/hanzo.out" 2> "$tmp/hanzo.log" &
pids="$pids $!"
wait_health "http://127.0.0.1:$port" "$tmp/hanzo.log"
servers="hanzo serve=http://127.0.0.1:$port"
if [ -n "$llama" ] && [ -x "$llama" ]; then
  np=$(echo "$conc" | tr ',' '\n' | sort -n | tail -n 1)
  lport=$((port + 1))
  "$llama" -m "$model" --host 127.0.0.1 --port "$lport" -t "$threads" -tb "$threads" \
    -np "$np" -c $((np * ${LLAMA_CTX:-512})) ${LLAMA_ARGS:-} > "$tmp/llama.log" 2>&1 &
  pids="$pids $!"
  wait_health "http://127.0.0.1:$lport" "$tmp/llama.log"
  servers="$servers|llama-server=http://127.0.0.1:$lport"
fi

echo "model: $id ($(du -h "$model" | cut -f1)), $threads threads, $gen tokens per stream, prompts of about $((words + 4)) words, median of $repeat runs (servers taking turns)"
echo
echo "| server | clients | aggregate tokens/s | tokens/s per client | TTFT median ms | TTFT max ms |"
echo "|---|---:|---:|---:|---:|---:|"
IFS='|'
# shellcheck disable=SC2086
python3 "$here/tools/bench-server-client.py" "$id" "$conc" $servers --gen "$gen" --prompt-words "$words" --repeat "$repeat"
unset IFS
[ -n "$llama" ] || { echo; echo "(no llama-server: set LLAMA_SERVER=PATH to compare)"; }
