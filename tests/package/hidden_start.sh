#!/usr/bin/env bash
# Login start of the installed package (called by tests/package/run.sh while it is installed):
# `taskdeck autostart on` writes the XDG autostart entry, and its Exec line, run on a virtual X
# display in its own D-Bus session as a session manager would, starts Taskdeck with no visible
# window (tray only) that still serves; a second launch brings the window up.
#
#   tests/package/hidden_start.sh WORKDIR     (needs xvfb-run, dbus-run-session, xdotool)
set -euo pipefail
work=$1
fail() { echo "hidden start: FAIL: $*" >&2; exit 1; }

if [ "${TASKDECK_HIDDEN_INNER:-}" != 1 ]; then
  export XDG_CONFIG_HOME=$work/xdg TASKDECK_DATA_DIR=$work/data TASKDECK_CONFIG_DIR=$work/config
  taskdeck autostart on >/dev/null 2>&1 || fail "taskdeck autostart on"
  entry=$XDG_CONFIG_HOME/autostart/taskdeck.desktop
  desktop-file-validate "$entry" || fail "desktop-file-validate $entry"
  exec_line=$(sed -n 's/^Exec=//p' "$entry")
  # The dirs given to `autostart on` (here through the environment) are passed on.
  want="/usr/bin/taskdeck --data-dir $TASKDECK_DATA_DIR --config-dir $TASKDECK_CONFIG_DIR --hidden"
  [ "$exec_line" = "$want" ] || fail "the entry runs '$exec_line', not '$want'"
  TASKDECK_HIDDEN_INNER=1 timeout 120 xvfb-run -a dbus-run-session -- "$0" "$work" "$exec_line"
  exit
fi

read -r -a cmd <<<"$2"
export TASKDECK_PORT=0 # any free port (the entry runs on the default 4747 otherwise)
"${cmd[@]}" >"$work/hidden.out" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 300); do
  grep -q '^  Window:' "$work/hidden.out" && break
  kill -0 $pid 2>/dev/null || { cat "$work/hidden.out"; fail "taskdeck --hidden exited"; }
  sleep 0.1
done
grep -q '^  Window: *hidden in the tray' "$work/hidden.out" || { cat "$work/hidden.out"; fail "no 'hidden' banner"; }
port=$(cat "$TASKDECK_DATA_DIR/taskdeck.port")
curl -fsS -o /dev/null -H "Authorization: Bearer $(cat "$TASKDECK_CONFIG_DIR/admin-token")" \
  "http://127.0.0.1:$port/v1/me" || fail "the hidden Taskdeck does not serve /v1/me"
sleep 2 # a window mapped late would show up here
visible=$(xdotool search --onlyvisible --name '^Taskdeck$' 2>/dev/null || true)
[ -z "$visible" ] || fail "a Taskdeck window is visible after the hidden start ($visible)"
taskdeck >"$work/second.out" 2>&1 || { cat "$work/second.out"; fail "the second launch failed"; }
for _ in $(seq 1 100); do
  visible=$(xdotool search --onlyvisible --name '^Taskdeck$' 2>/dev/null || true)
  [ -n "$visible" ] && break
  sleep 0.1
done
[ -n "$visible" ] || fail "the second launch did not show the window"
echo "hidden start: ok (no window until the second launch; serving on port $port)"
