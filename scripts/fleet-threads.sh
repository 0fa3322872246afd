#!/usr/bin/env bash
# Where the server's CPU goes under the 1,000-agent fleet, thread by thread (BENCHMARKS.md,
# "Fleet of 1,000 agents"): one run of `taskdeck-bench fleet` against a release `taskdeck
# serve` (core 0, one tokio worker, fresh store, the store's debug log on), then each server
# thread's CPU (utime + stime, ms) and context switches from /proc/PID/task/*, the process's
# bytes written (/proc/PID/io), the fleet's own CPU report, and the store's group commits.
# Cheaper and steadier than perf for comparing two builds: run it alternately on each.
#
# Usage: scripts/fleet-threads.sh [BINARY, default target/release/taskdeck] [seconds, default 20]
# Environment: STREAMS (UI event streams, default 20; 0 measures the calls alone), AGENTS
# (default 1000), WRITER_CMD (a command run with the store writer thread's id appended once the
# server is up, to try a scheduling policy without a build, e.g. "renice -n 5 -p" or
# "chrt -b -p 0"), CMD_THREAD (the thread name WRITER_CMD applies to instead of the writer's,
# e.g. tokio-rt-worker).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(realpath "${1:-target/release/taskdeck}") SECS=${2:-20}
d=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
RUST_LOG=taskdeck_engine::store=debug TOKIO_WORKER_THREADS=1 taskset -c 0 "$BIN" serve --port "$port" \
  --data-dir "$d/data" --config-dir "$d/cfg" --conformance-fixtures >"$d/log" 2>&1 &
td=$!
trap 'kill $td 2>/dev/null || true; rm -rf "$d"' EXIT
for _ in $(seq 400); do grep -q "running headless" "$d/log" 2>/dev/null && break; sleep 0.05; done
if [ -n "${WRITER_CMD:-}" ]; then
  for t in /proc/$td/task/*; do
    if [ "$(cat "$t/comm")" = "${CMD_THREAD:-taskdeck-writer}" ]; then $WRITER_CMD "${t##*/}" >/dev/null; fi
  done
fi
taskset -c 1 target/release/taskdeck-bench fleet --url "http://127.0.0.1:$port/mcp" --token "$(cat "$d/cfg/admin-token")" \
  --agents "${AGENTS:-1000}" --streams "${STREAMS:-20}" --jobs 10 --seconds "$SECS" --window-seconds 0 \
  --server-pid "$td" >"$d/fleet.json"
echo "## Threads (name-tid, voluntary and involuntary context switches, CPU ms over the run)"
for t in /proc/$td/task/*; do
  echo "$(tr " " _ <"$t/comm")-$(basename "$t") $(grep -h ctxt "$t/status" | awk '{printf "%s ", $2}') $(awk '{print ($14+$15)*10}' "$t/stat")"
done | awk '$4 > 0' | sort -k4 -n -r
echo "## Written: $(grep -E '^(wchar|write_bytes)' "/proc/$td/io" | tr '\n' ' ')"
python3 - "$d/log" "$SECS" "$d/fleet.json" <<'PY'
import json, re, sys
log = open(sys.argv[1]).read()
groups = [int(x) for x in re.findall(r"group of (\d+) writes", log)]
secs = float(sys.argv[2])
print(f"## Group commits: {len(groups) / secs:.0f} commits/s, {sum(groups) / secs:.0f} writes/s, "
      f"{sum(groups) / max(1, len(groups)):.2f} writes each; checkpoint passes: {len(re.findall('checkpoint .passive', log))}")
print("## The fleet's own report:", json.load(open(sys.argv[3]))["server"])
PY
