#!/bin/sh
# tools/moe-ref-check.sh — synthetic models next to llama.cpp's CPU build: for shapes of
# `hanzo synth` (default the tiny MoE shapes tiny-qwen3moe, tiny-mixtral, tiny-qwen2moe;
# -S names others, e.g. "tiny-gemma3 tiny-gemma2 gemma3-1b gemma2-2b tiny-gpt-oss") in a few
# formats (-T: a format of every matrix, or MATRIX+EXPERTS such as F32+MXFP4 for the
# experts' tensors in their own format), the greedy token ids of `hanzo generate --temp 0` and of llama.cpp
# (tools/llama-ref-bench.c --greedy) for a few prompts, and both perplexities on a text;
# prints one table row per model: the common prefix of the greedy ids per prompt, and the
# two perplexities.
#
# Random-weight models with 512-token vocabularies have many near-ties (between logits and
# between the experts' routing probabilities), so with quantized activations and
# llama.cpp's F16 KV cache the ids can part after a while; F32 files should agree over the
# whole run and the perplexities within a fraction of a percent.
#
# Usage: tools/moe-ref-check.sh [-B BUILD_DIR] [-n TOKENS] [-T "F32 Q8_0 Q4_K"] [-f TEXT]
#                               [-S "SHAPES"]
# Environment: LLAMA_LIB_DIR (see tools/llama-ref.sh; without it the script says so and
# exits 0), HZ_SHARED_DIR (default ../shared: models/stories260K.gguf for the vocabulary),
# HZ_BENCH_CACHE (where the harness and the models go; default ~/.cache/hanzo/bench).
set -eu
cd "$(dirname "$0")/.."
build=build
n_gen=32
types="F32 Q8_0 Q4_K"
shapes="tiny-qwen3moe tiny-mixtral tiny-qwen2moe"
text=
while getopts "B:n:T:f:S:" opt; do
  case $opt in
    B) build=$OPTARG ;;
    n) n_gen=$OPTARG ;;
    T) types=$OPTARG ;;
    f) text=$OPTARG ;;
    S) shapes=$OPTARG ;;
    *) echo "usage: $0 [-B BUILD_DIR] [-n TOKENS] [-T TYPES] [-f TEXT] [-S SHAPES]" >&2; exit 2 ;;
  esac
done
hanzo="$build/tools/hanzo"
[ -x "$hanzo" ] || ninja -C "$build" tools/hanzo >/dev/null
shared=${HZ_SHARED_DIR:-../shared}
vocab="$shared/models/stories260K.gguf"
if [ ! -f "$vocab" ]; then
  echo "no $vocab (set HZ_SHARED_DIR): skipped"
  exit 0
fi
cache=${HZ_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hanzo/bench}
mkdir -p "$cache"
. tools/llama-ref.sh
llama_ref_build "$cache" tools/llama-ref-bench.c
if [ -z "$llama_ref" ]; then
  echo "llama.cpp reference not available: skipped"
  exit 0
fi
if [ -z "$text" ]; then
  text="$cache/moe-ref-text.txt"
  # a deterministic text of stories260K-like words
  words="once upon a time there was a little girl named lily she liked to play with her ball in the park one day she saw a big dog"
  i=0
  : >"$text"
  while [ $i -lt 60 ]; do
    echo "$words" | awk -v s=$i '{ srand(s); for (k = 0; k < 40; k++) printf "%s ", $(int(rand() * NF) + 1); print "" }' >>"$text"
    i=$((i + 1))
  done
fi

ids_hanzo() {  # MODEL PROMPT
  "$hanzo" generate -m "$1" -p "$2" -n "$n_gen" --temp 0 -t 2 --json --ignore-eos 2>/dev/null |
    python3 -c 'import json, sys; print(*json.loads(sys.stdin.read(), strict=False)["generated_ids"])'
}
ids_llama() {
  "$llama_ref" -m "$1" -t 2 --greedy "$n_gen" --prompt "$2" 2>/dev/null | sed -n 's/^generated_ids: //p'
}
common() {  # "ids a" "ids b" -> length of the common prefix
  python3 -c 'import sys; a, b = sys.argv[1].split(), sys.argv[2].split()
print(next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b))))' "$1" "$2"
}

echo "greedy ids: common prefix of $n_gen generated tokens (hanzo vs llama.cpp), 3 prompts; perplexity on $(basename "$text") (ctx 128)"
printf '| %-14s | %-5s | %-14s | %-12s | %-12s |\n' shape type "greedy prefix" "PPL hanzo" "PPL llama.cpp"
printf '| %-14s | %-5s | %-14s | %-12s | %-12s |\n' -------------- ----- -------------- ------------ ------------
for shape in $shapes; do
  for type in $types; do
    model="$cache/moe-ref-$shape-$type.gguf"
    # TYPE or MATRIX+EXPERTS (e.g. F32+MXFP4: matrices F32, the experts' tensors MXFP4)
    experts=
    case $type in *+*) experts="--expert-type ${type#*+}" ;; esac
    [ -f "$model" ] || "$hanzo" synth --shape "$shape" --type F32 --matrix-type "${type%%+*}" $experts \
      --vocab "$vocab" -o "$model" -t 2 >/dev/null
    prefixes=
    for prompt in "Once upon a time" "The little dog ran to the park" "She said hello"; do
      prefixes="$prefixes $(common "$(ids_hanzo "$model" "$prompt")" "$(ids_llama "$model" "$prompt")")"
    done
    ppl_h=$("$hanzo" perplexity -m "$model" -f "$text" -c 128 -t 2 2>/dev/null | sed -n 's/^Final estimate: PPL = \([0-9.]*\).*/\1/p')
    ppl_l=$("$llama_ref" -m "$model" -t 2 --perplexity "$text" -c 128 2>/dev/null | sed -n 's/^Final estimate: PPL = \([0-9.]*\).*/\1/p')
    printf '| %-14s | %-5s | %-14s | %-12s | %-12s |\n' "$shape" "$type" "$prefixes" "$ppl_h" "$ppl_l"
  done
done
