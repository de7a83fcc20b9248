#!/bin/sh
# tools/bench-predict.sh — the model manager's speed prediction (app/hz-model-info.h:
# t = t0 + bytes / B) against measured decode rates, on the stories-distill quantizations:
# calibrated on Q8_0 (its measured rate gives t0), predicted for Q4_0, Q4_K_M, Q6_K and F32,
# next to the bandwidth bound the manager showed before and the rates measured here
# (build/tools/bench-predict; sampling as the app's defaults). stories260K, another shape,
# shows the bound only, as the manager does.
#
# Usage: tools/bench-predict.sh [-B BUILD_DIR] [bench-predict options: -n N -r R -t T
#        --bandwidth B]. Shared data from ../shared (or $HZ_SHARED_DIR).
set -eu
build=build
if [ "${1:-}" = "-B" ]; then build=$2; shift 2; fi
shared=${HZ_SHARED_DIR:-$(dirname "$0")/../../shared}
d=$shared/models/stories-distill
[ -f "$d/stories-distill-Q8_0.gguf" ] || { echo "no $d/stories-distill-Q8_0.gguf" >&2; exit 1; }
ninja -C "$build" tools/bench-predict >/dev/null
exec "$build/tools/bench-predict" "$@" "$d/stories-distill-Q8_0.gguf" \
  "$d/stories-distill-Q4_0.gguf" "$d/stories-distill-Q4_K_M.gguf" \
  "$d/stories-distill-Q6_K.gguf" "$d/stories-distill-F32.gguf" "$shared/models/stories260K.gguf"
