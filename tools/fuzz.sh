#!/bin/sh
# tools/fuzz.sh TARGET [SECONDS] — fuzz one target of tests/fuzz/ with libFuzzer.
#
# Builds a clang build with ASan+UBSan and libFuzzer instrumentation in build-fuzz/ (once;
# another folder with FUZZ_BUILD_DIR=DIR),
# runs tests/fuzz/fuzz-TARGET for SECONDS (default 600) starting from the corpus
# tests/fuzz/corpus/TARGET/, then merges (-merge=1) only the new inputs that add coverage
# back into that corpus. Crashes, leaks and timeouts are written to
# tests/fuzz/findings/TARGET/ (git-ignored); the script exits 1 when there is any. GLib
# criticals abort (G_DEBUG=fatal-criticals) and count as crashes.
# Inputs are capped at 64 KiB; the script warns when the corpus grows past 2 MiB.
set -eu

src=$(cd "$(dirname "$0")/.." && pwd)
targets=$(cd "$src/tests/fuzz" && ls fuzz-*.c | sed 's/^fuzz-//; s/\.c$//' | tr '\n' ' ')
usage() { echo "usage: $0 TARGET [SECONDS]   (targets: $targets)" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
target=$1
secs=${2:-600}
case $secs in ''|*[!0-9]*) usage ;; esac

[ -f "$src/tests/fuzz/fuzz-$target.c" ] || { echo "fuzz.sh: no target tests/fuzz/fuzz-$target.c" >&2; exit 2; }
build=${FUZZ_BUILD_DIR:-$src/build-fuzz}
corpus=$src/tests/fuzz/corpus/$target
findings=$src/tests/fuzz/findings/$target
jobs=${FUZZ_BUILD_JOBS:-2}

if [ ! -f "$build/build.ninja" ]; then
  CC=clang meson setup "$build" "$src" \
    -Dfuzzing=true -Dapp=disabled -Dbuildtype=debugoptimized \
    -Db_sanitize=address,undefined -Db_lundef=false \
    -Dc_args="-fsanitize=fuzzer-no-link -fno-sanitize-recover=all"
fi
ninja -C "$build" -j "$jobs" "tests/fuzz/fuzz-$target"

mkdir -p "$corpus" "$findings/new" "$findings/artifacts"
# known leaks of system libraries (each with its upstream fix) are not findings; the
# suppressions match by function name, which needs full stacks (the distribution's GLib has
# no frame pointers for the fast unwinder)
export LSAN_OPTIONS="suppressions=$src/tests/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export ASAN_OPTIONS="fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
fuzzer=$build/tests/fuzz/fuzz-$target
status=0
# New inputs go to findings/new; the checked-in corpus is read as extra seeds only.
# A GLib critical (a failed g_return_if_fail: hostile input reached an API the wrong way)
# aborts, so libFuzzer reports it as a crash, as `meson test` does with the same setting.
G_DEBUG=fatal-criticals "$fuzzer" -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="$findings/artifacts/" \
  "$findings/new" "$corpus" 2>&1 | tee "$findings/last-run.log" | grep -v '^#[0-9]' || true
# (a GLib critical made fatal by G_DEBUG stops the fuzzer with SIGTRAP, which libFuzzer does
# not catch: no "deadly signal" line and no artifact, only the critical in the log; a target
# that installs a writer calling abort() on criticals, as fuzz-server-request.c does, keeps one)
if grep -q -E 'ERROR|deadly signal|ALARM: working on the last Unit|-CRITICAL \*\*' "$findings/last-run.log"; then
  echo "fuzz.sh: the fuzzer found a problem; see $findings/last-run.log and $findings/artifacts/" >&2
  status=1
fi

# Keep only the inputs that add coverage to the corpus.
"$fuzzer" -merge=1 -max_len=65536 "$corpus" "$findings/new" 2>&1 | tail -n 2
rm -rf "$findings/new"
size=$(du -sk "$corpus" | cut -f1)
count=$(ls "$corpus" | wc -l)
echo "fuzz.sh: corpus $corpus: $count files, ${size} KiB"
[ "$size" -le 2048 ] || echo "fuzz.sh: warning: corpus is larger than 2 MiB; prune it" >&2
exit $status
