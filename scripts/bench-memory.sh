#!/usr/bin/env bash
# The server's memory (VmRSS) through a sequence of loads, for BENCHMARKS.md ("Memory and huge
# pages"): a release `taskdeck serve` on core 0 with one tokio worker and a fresh store,
# `taskdeck-bench` on core 1. Prints one line per build: RSS (MiB) just started, after 4,000
# `echo` tasks, after 2,000 `slow_compute` tasks working for an hour, after 2,000
# `confirm_delete` tasks waiting for input, after 50,000 more `echo`; the server's CPU time
# (ms) over it all; then the creation peak (`rate --rps 0`, 8 s, 50 connections, its own fresh
# server): RSS after it and server CPU per task.
#
# Usage: scripts/bench-memory.sh [BINARY...] (default target/release/taskdeck; several builds
# are measured in turn, in the order given)
set -euo pipefail
cd "$(dirname "$0")/.."
LOAD=$PWD/target/release/taskdeck-bench
[ $# -gt 0 ] || set -- target/release/taskdeck
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
rss() { awk '/VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$1/status"; }
cpu_ms() { awk '{print ($14 + $15) * 10}' "/proc/$1/stat"; }
# start BINARY DIR: starts the server; sets pid, url, token.
start() {
  local port
  port=$(free_port)
  mkdir -p "$2"
  TOKIO_WORKER_THREADS=1 taskset -c 0 "$1" serve --port "$port" --data-dir "$2/data" \
    --config-dir "$2/cfg" --conformance-fixtures >"$2/log" 2>&1 &
  pid=$!
  for _ in $(seq 200); do grep -q "running headless" "$2/log" 2>/dev/null && break; sleep 0.05; done
  url=http://127.0.0.1:$port/mcp token=$(cat "$2/cfg/admin-token")
}
seed() { taskset -c 1 "$LOAD" seed --url "$url" --token "$token" "$@" >/dev/null; sleep 1; }
for bin in "$@"; do
  work=$(mktemp -d)
  trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
  start "$bin" "$work/a"
  line="$bin: start $(rss "$pid")"
  seed --count 4000 --tool echo
  line="$line, 4000 echo $(rss "$pid")"
  seed --count 2000 --tool slow_compute --arguments '{"seconds":3600}'
  line="$line, +2000 working $(rss "$pid")"
  seed --count 2000 --tool confirm_delete --arguments '{}'
  line="$line, +2000 waiting $(rss "$pid")"
  seed --count 50000 --tool echo
  line="$line, +50000 echo $(rss "$pid") MiB; CPU $(cpu_ms "$pid") ms"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  start "$bin" "$work/b"
  c0=$(cpu_ms "$pid")
  peak=$(taskset -c 1 "$LOAD" rate --url "$url" --token "$token" --rps 0 --seconds 8 --connections 50)
  c1=$(cpu_ms "$pid")
  per=$(python3 -c 'import json, sys
d = json.loads(sys.argv[1])
per_task = (float(sys.argv[2]) - float(sys.argv[3])) * 1000 / d["requests"]
print("%.0f/s, %.1f µs CPU per task" % (d["rps"], per_task))' "$peak" "$c1" "$c0")
  line="$line; creation peak: RSS $(rss "$pid") MiB, $per"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  rm -rf "$work"
  echo "$line"
done
