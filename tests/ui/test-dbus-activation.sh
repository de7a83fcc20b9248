#!/bin/sh
# D-Bus activation of the chat app, as a desktop shell (DBusActivatable=true) or the
# learner's tray ("Open Hanzo") does it: a private session bus whose service directory
# holds ai.hanzo.Desktop.service (Exec = the built hanzo-desktop --gapplication-service);
# org.freedesktop.Application.Activate must start the app, which must then own its name
# and quit through its "quit" action. Needs a display (the suite runs under xvfb-run).
# Usage: test-dbus-activation.sh SERVICE_DIR SCHEMA_DIR
set -eu
svcdir=$1
schemas=$2
echo "1..1"
if [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  echo "ok 1 # SKIP no display (run the suite under xvfb-run)"
  exit 0
fi
tmp=$(mktemp -d)
pid=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
cat > "$tmp/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir=$tmp</listen>
  <servicedir>$svcdir</servicedir>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
CONF
# what the activated app inherits: an empty home, the build's schemas, memory settings
export HOME="$tmp/home" XDG_DATA_HOME="$tmp/home/data" XDG_CONFIG_HOME="$tmp/home/config"
export XDG_CACHE_HOME="$tmp/home/cache" GSETTINGS_SCHEMA_DIR="$schemas" GSETTINGS_BACKEND=memory
mkdir -p "$HOME"
dbus-daemon --config-file="$tmp/bus.conf" --print-address=3 --print-pid=4 --fork \
  3>"$tmp/address" 4>"$tmp/pid"
addr=$(head -n1 "$tmp/address")
pid=$(head -n1 "$tmp/pid")
has_owner() {
  gdbus call --address "$addr" --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus \
    --method org.freedesktop.DBus.NameHasOwner ai.hanzo.Desktop
}
[ "$(has_owner)" = "(false,)" ] || { echo "not ok 1 the name is owned before activation"; exit 1; }
# Activate starts the service (the call returns once the app has handled it)
gdbus call --address "$addr" --timeout 60 --dest ai.hanzo.Desktop --object-path /ai/hanzo/Desktop \
  --method org.freedesktop.Application.Activate "{}" >/dev/null
[ "$(has_owner)" = "(true,)" ] || { echo "not ok 1 the app does not own ai.hanzo.Desktop"; exit 1; }
gdbus call --address "$addr" --timeout 30 --dest ai.hanzo.Desktop --object-path /ai/hanzo/Desktop \
  --method org.freedesktop.Application.ActivateAction quit "[]" "{}" >/dev/null
i=0
while [ "$(has_owner)" = "(true,)" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ "$(has_owner)" = "(false,)" ] || { echo "not ok 1 the app did not quit"; exit 1; }
echo "ok 1 D-Bus activation starts the app; its quit action ends it"
