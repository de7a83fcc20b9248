#!/bin/sh
# Install the Debian/Ubuntu packages Hanzo Desktop needs to build, run and test.
# Idempotent: packages already present are skipped; apt is only called when something is missing.
# Then `npm ci` for each test-client folder (tests/*/ and tests/clients/*/ with a
# package-lock.json), when npm is there.
# Usage: tools/install-deps.sh            (uses sudo when not root)
set -eu

PKGS="
build-essential pkg-config meson ninja-build gettext itstool clang
libglib2.0-dev libglib2.0-bin libgtk-4-dev libadwaita-1-dev
libsqlite3-dev sqlite3 libjson-glib-dev libsoup-3.0-dev libsecret-1-dev
libmd4c-dev libmd4c-html0-dev
desktop-file-utils appstream flatpak-builder xvfb xauth dbus dbus-x11 gnome-keyring
libclang-rt-14-dev
clang-19 libamdhip64-dev
"

missing=""
for p in $PKGS; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done

if [ -z "$missing" ]; then
  echo "install-deps: all packages present"
else
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "install-deps: installing:$missing"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq || true
  # shellcheck disable=SC2086
  $SUDO apt-get install -y -qq --no-install-recommends $missing
fi

# Test clients from npm (tests/clients: the official OpenAI SDK for `hanzo serve`;
# tests/clients/mcp: the official MCP SDK for `hanzo mcp`), exactly as their
# package-lock.json pins them. Optional: without node/npm (or offline) the
# tests that use them skip with a message.
src=$(cd "$(dirname "$0")/.." && pwd)
for lock in "$src"/tests/*/package-lock.json "$src"/tests/clients/*/package-lock.json; do
  [ -f "$lock" ] || continue
  dir=$(dirname "$lock")
  if ! command -v npm >/dev/null 2>&1; then
    echo "install-deps: npm not found: skipping the test clients of ${dir#"$src"/} (their tests skip)"
    continue
  fi
  if [ -d "$dir/node_modules" ] && [ "$dir/node_modules/.package-lock.json" -nt "$lock" ]; then
    continue   # installed from this lock file already
  fi
  echo "install-deps: npm ci in ${dir#"$src"/}"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) ||
    echo "install-deps: npm ci failed in ${dir#"$src"/} (offline?): its tests will skip" >&2
done
