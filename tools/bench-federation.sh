#!/bin/sh
# Federation benchmark (issue 8): upload/download size and time of a rank-16 all-projection
# LoRA delta of a 1.1B-shape model (TinyLlama: 22 layers, hidden 2048, kv 256, ffn 5632),
# and aggregator throughput at 100 clients (trimmed mean), printed as a table.
# Usage: tools/bench-federation.sh [BUILD_DIR] [-- extra bench-federation options]
#   e.g. tools/bench-federation.sh /tmp/build -- --clients 20 --rank 8
# Needs ~2.5 GB free disk in TMPDIR for the 100 spooled uploads (deleted afterwards).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
[ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift
if [ ! -d "$build" ]; then
  meson setup "$build" "$here" >/dev/null
fi
ninja -C "$build" egress/bench-federation >/dev/null
echo "machine: $(nproc) cores, $(uname -m), load $(cut -d' ' -f1-3 /proc/loadavg)"
exec "$build/egress/bench-federation" "$@"
