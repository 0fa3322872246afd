# Sourced by the suites that drive a real server over HTTP (tests/clients/run.sh,
# tests/contract/run.sh).
#
# start_temp_taskdeck BIN ARTIFACTS: starts `BIN serve` on a free port with its own data and
# config dirs in a new temp dir, and waits until it listens. Sets `work` (the temp dir), `port`
# and `admin` (the admin token), and appends the server's pid to the array `pids` (set it first);
# a suite appends the pids of whatever else it starts. On exit every pid in `pids` is stopped, the
# server's stderr is copied into ARTIFACTS, and `work` is removed (kept with KEEP=1). Exits 1
# when the server does not start within 10 s.
start_temp_taskdeck() {
  local bin=$1
  temp_artifacts=$2
  work=$(mktemp -d)
  trap stop_temp_taskdeck EXIT
  "$bin" serve --port 0 --data-dir "$work/data" --config-dir "$work/cfg" --poll-interval-ms 200 \
    >"$work/server.out" 2>"$work/server.err" &
  pids+=($!)
  port=
  for _ in $(seq 100); do
    port=$(sed -n 's/^Taskdeck is running headless on http:\/\/127.0.0.1:\([0-9]*\)$/\1/p' "$work/server.out")
    [ -n "$port" ] && break
    sleep 0.1
  done
  [ -n "$port" ] || { cat "$work/server.err"; echo "taskdeck did not start"; exit 1; }
  admin=$(cat "$work/cfg/admin-token")
}

# The EXIT trap of start_temp_taskdeck.
stop_temp_taskdeck() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  cp "$work"/server.err "$temp_artifacts/server.err" 2>/dev/null
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi
}
