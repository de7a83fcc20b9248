#!/bin/sh
# Run a command (a test) with its own D-Bus session bus and an unlocked gnome-keyring-daemon
# (Secret Service) in a throwaway HOME, so libsecret tests run for real and never touch the
# user's keyring. Without dbus-run-session or gnome-keyring-daemon the command runs as is
# (the test then skips with a message saying no Secret Service is reachable).
set -u
if ! command -v dbus-run-session >/dev/null 2>&1 || ! command -v gnome-keyring-daemon >/dev/null 2>&1; then
  echo "# with-keyring.sh: dbus-run-session or gnome-keyring-daemon missing" >&2
  exec "$@"
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hz-keyring-XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$tmp/run" "$tmp/data" "$tmp/config" "$tmp/cache"
chmod 700 "$tmp/run"
HOME="$tmp" XDG_RUNTIME_DIR="$tmp/run" XDG_DATA_HOME="$tmp/data" \
XDG_CONFIG_HOME="$tmp/config" XDG_CACHE_HOME="$tmp/cache" \
  dbus-run-session -- sh -c '
    # a password on stdin creates and unlocks a fresh "login" keyring (no prompt)
    printf "hanzo-test" | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1
    exec "$@"' sh "$@"
