#!/usr/bin/env bash
# Desktop end-to-end test: Taskdeck's real Tauri window (WebKitGTK) on a virtual X display,
# driven through tauri-driver + WebKitWebDriver by tests/desktop/desktop_e2e.py.
#
#   tests/desktop/run.sh [path/to/taskdeck]        (default: target/debug/taskdeck, desktop build)
#
# TASKDECK_E2E_SCREEN=WxH sets the virtual screen's size (default 1400x900, where a user saw
# the window open half off-screen); the window's geometry cases hold on any size.
#
# Needs: xvfb (xvfb-run), xauth, dbus (dbus-run-session, dbus-monitor, dbus-send), dunst (its
# /etc/xdg/dunst/dunstrc, with the context menu program replaced by dunst-menu.sh), xdotool,
# webkit2gtk-driver (WebKitWebDriver), tauri-driver (cargo install tauri-driver; or set
# TAURI_DRIVER=/path), python3 (standard library only), node and npm (the gateway check's
# upstream, server-filesystem from tests/upstreams, installed here idempotently).
#
# It runs on a copy of the binary (the original may be rebuilt meanwhile), wraps itself in
# xvfb-run + dbus-run-session, starts a notification daemon (dunst) and a dbus-monitor log of
# Notify calls (CloseNotification calls, ActionInvoked and NotificationClosed signals), runs the test, stops everything it started, and ends with the line
# "desktop e2e: N passed, M failed" (exit status 0 only when M is 0).
# Logs of a failed run are kept in the work directory it prints.

set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)

# ------------------------------------------------------------------ inside the X + D-Bus session
if [ -n "${TASKDECK_E2E_INNER:-}" ]; then
  WORK=$TASKDECK_E2E_WORK
  BIN=$1
  started=()
  cleanup() {
    for pid in "${started[@]}"; do kill "$pid" 2>/dev/null; done
    for pid in "${started[@]}"; do
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null
      wait "$pid" 2>/dev/null
    done
  }
  trap cleanup EXIT
  trap 'exit 143' TERM INT

  dbus-monitor --session "type='method_call',interface='org.freedesktop.Notifications',member='Notify'" \
    "type='method_call',interface='org.freedesktop.Notifications',member='CloseNotification'" \
    "type='signal',interface='org.freedesktop.Notifications',member='ActionInvoked'" \
    "type='signal',interface='org.freedesktop.Notifications',member='NotificationClosed'" \
    >"$WORK/notify.log" 2>"$WORK/dbus-monitor.err" &
  started+=($!)
  # dunst as installed, except that its context menu (`dunstctl context`) is dunst-menu.sh, which
  # picks the action named in $WORK/menu-choice.
  sed "s|^\( *dmenu *=\).*|\1 $HERE/dunst-menu.sh $WORK/menu-choice|" /etc/xdg/dunst/dunstrc >"$WORK/dunstrc"
  grep -q "dunst-menu.sh" "$WORK/dunstrc" || { echo "cannot set dunst's dmenu in $WORK/dunstrc" >&2; exit 1; }
  dunst -config "$WORK/dunstrc" >"$WORK/dunst.log" 2>&1 &
  started+=($!)

  # Both must be up before the app starts: the monitor is (its first line is NameAcquired),
  # and dunst owns org.freedesktop.Notifications.
  ready=
  for _ in $(seq 100); do
    if grep -q NameAcquired "$WORK/notify.log" 2>/dev/null &&
      dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
        org.freedesktop.DBus.NameHasOwner string:org.freedesktop.Notifications 2>/dev/null | grep -q 'boolean true'; then
      ready=1
      break
    fi
    sleep 0.1
  done
  if [ -z "$ready" ]; then
    echo "dbus-monitor or dunst did not start (see $WORK/dunst.log, $WORK/dbus-monitor.err)" >&2
    exit 1
  fi

  python3 "$HERE/desktop_e2e.py" --binary "$BIN" --work-dir "$WORK" --notify-log "$WORK/notify.log" \
    --menu-choice "$WORK/menu-choice" --summary "$WORK/summary" --tauri-driver "$TAURI_DRIVER"
  exit $?
fi

# ------------------------------------------------------------------ outside: set up, then re-run inside
finish() { # passed failed
  echo "desktop e2e: $1 passed, $2 failed"
  [ "$2" -eq 0 ]
  exit $?
}

BIN_ARG=${1:-$REPO/target/debug/taskdeck}
TAURI_DRIVER=${TAURI_DRIVER:-$(command -v tauri-driver || echo "$HOME/.cargo/bin/tauri-driver")}
missing=
for tool in xvfb-run xauth dbus-run-session dbus-monitor dbus-send dunst xdotool WebKitWebDriver python3 timeout node npm; do
  command -v "$tool" >/dev/null || missing="$missing $tool"
done
[ -x "$TAURI_DRIVER" ] || missing="$missing tauri-driver($TAURI_DRIVER)"
if [ -n "$missing" ]; then
  echo "missing:$missing" >&2
  finish 0 1
fi
. "$REPO/scripts/lib/upstreams.sh"
install_upstreams "$REPO" || finish 0 1
if [ ! -x "$BIN_ARG" ]; then
  echo "no executable taskdeck binary at $BIN_ARG (build the desktop feature, or pass its path)" >&2
  finish 0 1
fi

WORK=$(mktemp -d /tmp/taskdeck-desktop-e2e.XXXXXX)
cp "$BIN_ARG" "$WORK/taskdeck"
# Every process of this run inherits this marker, so that leftovers can be found exactly.
MARK="TASKDECK_E2E_RUN=$(basename "$WORK")"

# `timeout` runs in its own process group; Ctrl-C or a TERM here is passed on to it (and from it
# to the whole run, whose test then stops the window it started).
env "$MARK" TASKDECK_E2E_INNER=1 TASKDECK_E2E_WORK="$WORK" TAURI_DRIVER="$TAURI_DRIVER" \
  timeout -k 10 "${TASKDECK_E2E_TIMEOUT:-200}" \
  xvfb-run -a -s "-screen 0 ${TASKDECK_E2E_SCREEN:-1400x900}x24" dbus-run-session -- bash "$HERE/run.sh" "$WORK/taskdeck" &
tpid=$!
trap 'kill -TERM "$tpid" 2>/dev/null' INT TERM
rc=0
wait "$tpid" || rc=$?
while kill -0 "$tpid" 2>/dev/null; do
  rc=0
  wait "$tpid" || rc=$?
done
trap - INT TERM

# Processes of this run still alive (not zombies): a test failure, then ended by pid.
ours() {
  local p
  for p in /proc/[0-9]*; do
    [ "${p#/proc/}" = "$$" ] && continue
    grep -qsz -x -F "$MARK" "$p/environ" || continue
    grep -qs '^State:.*Z' "$p/status" && continue
    echo "${p#/proc/}"
  done
}
strays=
for _ in $(seq 50); do
  strays=$(ours)
  [ -z "$strays" ] && break
  sleep 0.1
done

passed=0 failed=1
if [ -f "$WORK/summary" ]; then
  read -r passed failed <"$WORK/summary"
fi
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
  echo "FAIL  the run took longer than ${TASKDECK_E2E_TIMEOUT:-200} s and was stopped" >&2
  [ -f "$WORK/summary" ] && failed=$((failed + 1))
elif [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
  echo "FAIL  the test run ended with status $rc" >&2
  failed=1
fi
if [ -n "$strays" ]; then
  echo "FAIL  processes left running after the test:" >&2
  for pid in $strays; do echo "      $pid $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" >&2; done
  for pid in $strays; do kill -9 "$pid" 2>/dev/null; done
  failed=$((failed + 1))
else
  passed=$((passed + 1))
  echo "PASS  no processes left running"
fi

if [ "$failed" -eq 0 ]; then
  rm -rf "$WORK"
else
  echo "logs kept in $WORK" >&2
fi
finish "$passed" "$failed"
