# Sourced by the benchmark scripts that compare `taskdeck` binaries, each against a fresh
# server of its own (scripts/bench-large-events.sh, scripts/bench-large-tasks.sh).
#
# bench_binaries [BIN...]: sets the array BINS to the binaries given, else builds the release
# `taskdeck` and names it.
# bench_workdir: makes the temp dir `work`, removed on exit together with the running server.
# bench_serve BIN [POLICY]: stops the server started before, if any, and starts `BIN serve` on a
# fresh data dir ($work/data) and config dir ($work/cfg; its policy.json is POLICY when given,
# a JSON document); waits until it listens; sets `server` (its pid) and `port`.
# bench_stop: stops the running server.

bench_binaries() {
  BINS=("$@")
  if [ ${#BINS[@]} -eq 0 ]; then
    flock /tmp/cargo.lock cargo build --release --bin taskdeck -q
    BINS=("$PWD/target/release/taskdeck")
  fi
}

bench_workdir() {
  work=$(mktemp -d)
  server=""
  trap 'bench_stop; rm -rf "$work"' EXIT
}

bench_stop() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  server=""
}

bench_serve() {
  bench_stop
  rm -rf "$work/data" "$work/cfg"
  mkdir -p "$work/cfg"
  if [ $# -gt 1 ]; then echo "$2" > "$work/cfg/policy.json"; fi
  "$1" serve --port 0 --data-dir "$work/data" --config-dir "$work/cfg" > "$work/serve.log" 2>&1 &
  server=$!
  for _ in $(seq 600); do [ -s "$work/data/taskdeck.port" ] && break; sleep 0.05; done
  port=$(cat "$work/data/taskdeck.port")
}
