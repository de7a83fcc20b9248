#!/bin/sh
# Install the Debian/Ubuntu packages Hanzo Desktop needs to build, run and test.
# Idempotent: packages already present are skipped; apt is only called when something is missing.
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
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || true
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
