#!/bin/sh
# LoRA SFT throughput (issue 7's benchmark): tokens/s of full training steps (forward,
# backward with activation recomputation, AdamW) at sequence 512 with rank-16 adapters on
# all seven projections, over a synthetic TinyLlama-1.1B-shape base that stays quantized
# (llama-quantize's Q4_K_M mix), printed as a table next to the issue's PyTorch + PEFT
# figures measured on an H200 (bf16 base, same shape).
#
# Usage: tools/bench-learn.sh [BUILD_DIR] [MODEL.gguf]
#   HZ_BENCH_BATCHES  batch sizes to time on the CPU (default "1"; "1 8" for both, "" none — batch 8
#                     takes 8x as long)
#   HZ_BENCH_STEPS    timed steps per batch size (default 1; one step at batch 1 is 512
#                     tokens, about a minute of CPU time)
#   HZ_BENCH_THREADS  CPU thread counts to time (default "1 2"; results are bit-identical
#                     for any count, only the speed changes)
#   HZ_BENCH_SEQ      sequence length (default 512, the issue's; smaller for a quick look)
#   HZ_BENCH_CACHE    where the synthetic model is generated once (default
#                     $XDG_CACHE_HOME/hanzo/bench, shared with tools/bench-cpu.sh)
#   HZ_BENCH_GPU_BATCHES  batch sizes to time on the GPU (default "1 8"; only when BUILD_DIR
#                     is a GPU build, -Dcuda=enabled / -Dhip=enabled, and a device is
#                     present; "" skips the GPU rows)
#   HZ_BENCH_GPU_STEPS timed GPU steps per batch size (default 5, after 2 untimed ones)
#   HZ_BENCH_NO_BUILD  1: do not run ninja (binaries copied to a machine without a
#                     toolchain)
# The learner's CPU path (learner/train-ops-impl.c, learner/train-ops-gemm.c) runs on the engine's
# thread pool (HZ_DEVICE=cpu for those rows); the GPU path is learner/gpu-train.c over
# kernels/train.hip (its memory column is the device memory in use, the runtime's context
# included; HZ_GPU_TRAIN_KEEP_MIB sets how much device memory keeps layers' forward caches
# instead of recomputing them, default 1536 MiB, see learner/gpu-train.h). On a shared machine read tokens/CPU-s (this process's CPU time) next to the
# wall-clock tokens/s and the load.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
model=${2:-}
shared=${HZ_SHARED_DIR:-$here/../shared}
cache=${HZ_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hanzo/bench}
batches=${HZ_BENCH_BATCHES-1}
steps=${HZ_BENCH_STEPS:-1}
threads=${HZ_BENCH_THREADS-1 2}
seq=${HZ_BENCH_SEQ:-512}
gpu_batches=${HZ_BENCH_GPU_BATCHES-1 8}
gpu_steps=${HZ_BENCH_GPU_STEPS:-5}
if [ "${HZ_BENCH_NO_BUILD:-0}" != 1 ]; then
  if [ ! -d "$build" ]; then
    meson setup "$build" "$here" >/dev/null
  fi
  ninja -C "$build" tools/hanzo learner/bench-learn >/dev/null
fi
if [ -z "$model" ]; then
  mkdir -p "$cache"
  model="$cache/synth-tinyllama-1.1b-Q4_K.gguf"
  if [ ! -f "$model" ]; then
    vocab="$shared/golden/tokenizer/ggml-vocab-llama-spm.gguf"
    [ -f "$vocab" ] || vocab="$shared/models/stories260K.gguf"
    echo "bench-learn: generating $model (once)" >&2
    "$build/tools/hanzo" synth --shape tinyllama-1.1b --type Q4_K --vocab "$vocab" --seed 1 \
      -o "$model" >&2
  fi
fi
echo "machine: $(nproc) cores, $(uname -m), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "model:   $model"
echo
printf '%-34s %7s %12s %10s %12s %14s %6s\n' "LoRA SFT, seq $seq, r 16, all proj" "batch" "tokens/s" "s/step" "peak memory" "tokens/CPU-s" "load"
printf '%-34s %7s %12s %10s %12s %14s %6s\n' "----------------------------------" "-----" "--------" "------" "-----------" "------------" "----"
for b in $batches; do
  for t in $threads; do
    line=$(HZ_DEVICE=cpu "$build/learner/bench-learn" "$model" --seq "$seq" --rank 16 --batch "$b" --steps "$steps" --threads "$t")
    load=$(cut -d' ' -f1 /proc/loadavg)
    tps=$(echo "$line" | sed -n 's/.*tokens_per_s=\([^ ]*\).*/\1/p')
    sps=$(echo "$line" | sed -n 's/.* s_per_step=\([^ ]*\).*/\1/p')
    rss=$(echo "$line" | sed -n 's/.*peak_rss_mib=\([^ ]*\).*/\1/p')
    tpc=$(echo "$line" | sed -n 's/.*tokens_per_cpu_s=\([^ ]*\).*/\1/p')
    [ "$t" = 1 ] && what="1 thread" || what="$t threads"
    printf '%-34s %7s %12s %10s %8s MiB %14s %6s\n' "Hanzo CPU, $what, Q4_K base" "$b" "$tps" "$sps" "$rss" "$tpc" "$load"
  done
done
gpu_rows=0
for b in $gpu_batches; do
  line=$(env -u HZ_DEVICE "$build/learner/bench-learn" "$model" --seq "$seq" --rank 16 --batch "$b" \
           --steps "$gpu_steps" --warmup 2 --require-gpu 2>/dev/null || true)
  case "$line" in *device=gpu*) ;; *) continue ;; esac
  gpu_rows=1
  tps=$(echo "$line" | sed -n 's/.*tokens_per_s=\([^ ]*\).*/\1/p')
  sps=$(echo "$line" | sed -n 's/.* s_per_step=\([^ ]*\).*/\1/p')
  gmib=$(echo "$line" | sed -n 's/.*gpu_mib=\([^ ]*\).*/\1/p')
  gib=$(awk "BEGIN { printf \"%.1f\", $gmib / 1024 }")
  printf '%-34s %7s %12s %10s %8s GiB %14s\n' "Hanzo GPU, Q4_K base (quantized)" "$b" "$tps" "$sps" "$gib" "-"
done
[ "$gpu_rows" = 1 ] || printf '%-34s %7s %12s %10s %12s %14s\n' "Hanzo GPU" "1, 8" "no GPU build/device" "-" "-" "-"
printf '%-34s %7s %12s %10s %12s %14s\n' "PyTorch 2.11 + PEFT 0.21, H200" "8" "25,400" "0.161" "15.0 GiB" "-"
printf '%-34s %7s %12s %10s %12s %14s\n' "  (bf16 base, issue 7)" "1" "3,590" "0.143" "3.9 GiB" "-"
echo
echo "tokens/CPU-s: tokens per second of this process's CPU time, stable when others load the machine;"
echo "load: 1-minute load average after the run (the machine has $(nproc) cores)"
