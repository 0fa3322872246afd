#!/usr/bin/env bash
# Where the server's CPU goes at the creation peak, thread by thread (BENCHMARKS.md, "Creation
# peak"): a release `taskdeck serve` on a fresh store (core 0, one tokio worker, search indexer
# on) under `taskdeck-bench rate` (core 1, 50 connections, tools/call echo, closed loop unless
# RPS is set), then each server thread's CPU time (utime + stime from /proc/PID/task/*/stat)
# per task created, in µs. Threads that work after the run (the search indexer catching up)
# are counted only for what they did during it. Also the store's WAL file at its largest
# (sampled every 50 ms): past 64 MiB (`journal_size_limit`) a reset truncates it. Run it on two builds in turn (A B B A) to
# compare them; the host's load moves all figures together.
#
# Usage: scripts/peak-threads.sh [BINARY, default target/release/taskdeck] [seconds, default 10]
# Environment: RPS (offered rate; default 0, the peak).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(realpath "${1:-target/release/taskdeck}") SECS=${2:-10}
d=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
TOKIO_WORKER_THREADS=1 taskset -c 0 "$BIN" serve --port "$port" --data-dir "$d/data" \
  --config-dir "$d/cfg" --conformance-fixtures >"$d/log" 2>&1 &
td=$!
trap 'kill $td 2>/dev/null || true; wait $td 2>/dev/null; rm -rf "$d"' EXIT
for _ in $(seq 400); do grep -q "running headless" "$d/log" 2>/dev/null && break; sleep 0.05; done
grep -q "running headless" "$d/log" || { echo "peak-threads: taskdeck did not start: $(cat "$d/log")" >&2; exit 1; }
# Each thread's CPU ticks, "name-tid ticks" per line.
threads() { for t in /proc/$td/task/*; do echo "$(tr ' ' _ <"$t/comm")-${t##*/} $(awk '{print $14 + $15}' "$t/stat")"; done; }
threads >"$d/before"
( while kill -0 $td 2>/dev/null; do stat -c %s "$d/data/taskdeck.sqlite3-wal" 2>/dev/null || echo 0; sleep 0.05; done >"$d/wal" ) &
taskset -c 1 target/release/taskdeck-bench rate --url "http://127.0.0.1:$port/mcp" \
  --token "$(cat "$d/cfg/admin-token")" --rps "${RPS:-0}" --seconds "$SECS" --connections 50 >"$d/rate.json"
threads >"$d/after"
python3 - "$d" "$(getconf CLK_TCK)" <<'PY'
import json, sys
d, hz = sys.argv[1], int(sys.argv[2])
r = json.load(open(f"{d}/rate.json"))
read = lambda f: dict(l.split() for l in open(f"{d}/{f}") if l.strip())
before, after = read("before"), read("after")
n = max(r["requests"], 1)
print(f"{r['rps']:.0f} tasks/s, p99 {r['p99us']} µs, errors {r['errors']}; server CPU per task created:")
rows = [(name, (int(t) - int(before.get(name, 0))) / hz * 1e6 / n) for name, t in after.items()]
for name, us in sorted(rows, key=lambda x: -x[1]):
    if us >= 0.05:
        print(f"  {name:28s} {us:6.1f} µs")
print(f"  {'all threads':28s} {sum(us for _, us in rows):6.1f} µs")
wal = [int(l) for l in open(f"{d}/wal") if l.strip()]
print(f"largest WAL {max(wal, default=0) / 2**20:.1f} MiB ({sum(w > 64 << 20 for w in wal)} of {len(wal)} samples past 64 MiB)")
PY
