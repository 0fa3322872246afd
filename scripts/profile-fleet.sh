#!/usr/bin/env bash
# Profiles the release server under the 1,000-agent fleet (BENCHMARKS.md, "Fleet of 1,000
# agents"): one run of `taskdeck-bench fleet` against `taskdeck serve` (core 0, one tokio worker,
# the store's debug log on), `perf record --call-graph dwarf` of the server for PERF_SECONDS in
# the middle of the run, then prints the share of each server thread, the hottest symbols with
# their callers' totals, and the store's group commits (commits/s, writes per commit).
#
# Usage: scripts/profile-fleet.sh [seconds, default 40] [agents, default 1000] [streams, default 20]
# Environment: NO_BUILD=1 to use target/release as it is; PERF_SECONDS (default 8); OUT (a
# directory for perf.data and the server's log, default a temporary one, removed at the end).
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-40} AGENTS=${2:-1000} STREAMS=${3:-20} PERF_SECONDS=${PERF_SECONDS:-8}
command -v perf >/dev/null || { echo "profile-fleet: perf is not installed (apt-get install linux-perf)" >&2; exit 2; }
[ "${NO_BUILD:-}" = 1 ] || cargo build --release --bins -q
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
RUST_LOG=taskdeck_engine::store=debug TOKIO_WORKER_THREADS=1 taskset -c 0 target/release/taskdeck serve \
  --port "$port" --data-dir "$out/data" --config-dir "$out/cfg" --conformance-fixtures >"$out/server.log" 2>&1 &
td=$!
trap 'kill $td 2>/dev/null || true; [ -n "${OUT:-}" ] || rm -rf "$out"' EXIT
for _ in $(seq 400); do grep -q "running headless" "$out/server.log" 2>/dev/null && break; sleep 0.05; done
taskset -c 1 target/release/taskdeck-bench fleet --url "http://127.0.0.1:$port/mcp" --token "$(cat "$out/cfg/admin-token")" \
  --agents "$AGENTS" --streams "$STREAMS" --jobs 10 --seconds "$SECS" --window-seconds 0 --server-pid "$td" >"$out/fleet.json" &
load=$!
sleep $(( (SECS - PERF_SECONDS) / 2 ))
perf record -F 499 --call-graph dwarf,16384 -p "$td" -o "$out/perf.data" -- sleep "$PERF_SECONDS" >/dev/null 2>&1
wait "$load"
kill "$td"; wait "$td" 2>/dev/null || true
# The reports below cut perf's long output with head: its SIGPIPE is not a failure.
set +o pipefail
echo "## Server threads (share of the samples)"
perf report -i "$out/perf.data" --no-children --sort comm --stdio -g none 2>/dev/null | grep '%' | head -8
echo "## Hottest functions with their callees (share of all samples)"
perf report -i "$out/perf.data" --children --sort sym --stdio -g none 2>/dev/null | grep '%' | grep -v 'inlined' | head -60
echo "## Group commits"
python3 - "$out/server.log" "$SECS" <<'PY'
import collections, re, sys
sizes = [int(m.group(1)) for m in re.finditer(r"group of (\d+) writes", open(sys.argv[1]).read())]
secs = float(sys.argv[2])
if sizes:
    hist = collections.Counter(min(s, 10) for s in sizes)
    print(f"{len(sizes) / secs:.0f} commits/s, {sum(sizes) / secs:.0f} writes/s, {sum(sizes) / len(sizes):.2f} writes per commit;"
          f" commits of 1 write: {100 * hist[1] / len(sizes):.0f}%; by size (10 = 10 or more): {sorted(hist.items())}")
PY
echo "## The fleet's own report"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['server'])" "$out/fleet.json"
