#!/bin/sh
# Install dependencies, build, and run the whole test suite (under a private D-Bus session
# and a virtual X server, because the UI tests open real windows).
# Usage: tools/run-tests.sh [extra meson test args]     Build dir: ./build
set -eu
cd "$(dirname "$0")/.."
tools/install-deps.sh
if [ ! -d build ]; then
  meson setup build
else
  meson setup --reconfigure build >/dev/null
fi
ninja -C build
exec dbus-run-session -- xvfb-run -a -s "-screen 0 1280x1024x24" \
  meson test -C build --print-errorlogs --num-processes 2 "$@"
