#!/bin/sh
# tools/bench-json.sh — benchmark of constrained JSON output (response_format; engine/
# json-constrain.c): the time of one token mask for a 32k vocabulary (llama-spm,
# SentencePiece) and a 152k one (qwen2, byte-level BPE) from ../shared/golden/tokenizer,
# by what the state is reading, beside the brute-force mask; then tokens/s of one greedy
# request with and without response_format json_object on small random-weight models with
# those vocabularies (made once with `hanzo synth` into HZ_BENCH_CACHE) and stories260K.
# Prints Markdown tables (tools/bench-json.c).
#
#   tools/bench-json.sh [BUILD_DIR]
# Environment: HZ_SHARED_DIR (../shared), HZ_BENCH_CACHE (BUILD_DIR/bench-cache), MASKS
#   (4000 per vocabulary and schema), GEN (128 tokens), THREADS (0: all cores), BIG (0; 1
#   adds the qwen2.5-0.5b shape at Q4_K_M with the 152k vocabulary: the mask's cost beside
#   a real model's step).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
shared=${HZ_SHARED_DIR:-$here/../shared}
cache=${HZ_BENCH_CACHE:-$build/bench-cache}
bin=$build/tools/bench-json
hanzo=$build/tools/hanzo
[ -x "$bin" ] && [ -x "$hanzo" ] || { echo "build first: ninja -C $build tools/bench-json tools/hanzo" >&2; exit 2; }
spm=$shared/golden/tokenizer/ggml-vocab-llama-spm.gguf
qwen=$shared/golden/tokenizer/ggml-vocab-qwen2.gguf
for f in "$spm" "$qwen" "$shared/models/stories260K.gguf"; do
  [ -f "$f" ] || { echo "not found: $f (set HZ_SHARED_DIR)" >&2; exit 2; }
done
mkdir -p "$cache"
tiny='custom:dim=256,layers=4,heads=4,kv=2,ffn=768,tied=1'
synth() {   # OUT ARCH SHAPE TYPE VOCAB
  [ -f "$1" ] || "$hanzo" synth --arch "$2" --shape "$3" --type "$4" --vocab "$5" --fast -o "$1" >&2
}
synth "$cache/json-tiny-llama-spm.gguf" llama "$tiny" Q8_0 "$spm"
synth "$cache/json-tiny-qwen2.gguf" qwen2 "$tiny" Q8_0 "$qwen"
models="$cache/json-tiny-llama-spm.gguf $cache/json-tiny-qwen2.gguf $shared/models/stories260K.gguf"
if [ "${BIG:-0}" = 1 ]; then
  synth "$cache/json-qwen2.5-0.5b.gguf" qwen2 qwen2.5-0.5b Q4_K_M "$qwen"
  models="$models $cache/json-qwen2.5-0.5b.gguf"
fi
echo "# bench-json on $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
# the vocabularies alone (masks), then the models (their masks again and tokens/s)
HZ_DEVICE=cpu "$bin" -n "${MASKS:-4000}" -g "${GEN:-128}" -t "${THREADS:-0}" "$spm" "$qwen" $models
