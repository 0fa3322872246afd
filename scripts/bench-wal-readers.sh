#!/usr/bin/env bash
# Durable creation while readers run (issue #17, BENCHMARKS.md "The WAL's size under readers that
# never pause"): one release `taskdeck serve` (unpinned) on a fresh store, `taskdeck-bench rate`
# offering RATE/s (0 = the peak) for SECONDS over 50 connections, and scripts/lib/wal_readers.py
# running the reader threads KINDS (list, search, events; comma-separated) and sampling the
# size of the store's -wal file every 100 ms. Prints the load's JSON line, then the readers'.
#
# Usage: scripts/bench-wal-readers.sh [RATE, default 0] [SECONDS, default 20] [KINDS, default search]
# Environment: TASKDECK_BIN (default target/release/taskdeck), NO_BUILD=1 to use target/release as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
RATE=${1:-0}
SECS=${2:-20}
KINDS=${3:-search}
[ "${NO_BUILD:-}" = 1 ] || cargo build --release --bins -q
BIN=${TASKDECK_BIN:-$PWD/target/release/taskdeck}
LOAD=$PWD/target/release/taskdeck-bench
work=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$BIN" serve --port "$port" --data-dir "$work/data" --config-dir "$work/cfg" --conformance-fixtures >"$work/log" 2>&1 &
pid=$!
for _ in $(seq 200); do grep -q "running headless" "$work/log" 2>/dev/null && break; sleep 0.05; done
token=$(cat "$work/cfg/admin-token")
python3 scripts/lib/wal_readers.py "http://127.0.0.1:$port" "$token" "$work/data" "$SECS" "$KINDS" >"$work/readers" &
readers=$!
"$LOAD" rate --url "http://127.0.0.1:$port/mcp" --token "$token" --rps "$RATE" --seconds "$SECS" --connections 50
wait "$readers"
cat "$work/readers"
