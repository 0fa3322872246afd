#!/usr/bin/env bash
# Benchmarks the release build over loopback HTTP; prints a markdown report (BENCHMARKS.md).
# Server pinned to core 0 (one tokio worker), load generator to core 1.
# Usage: scripts/bench.sh [seconds per run, default 10] [tasks to seed, default 100000]
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-10}
SEED=${2:-100000}
cargo build --release --bins -q
BIN=target/release/taskdeck
LOAD=target/release/taskdeck-bench
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
load() { taskset -c 1 "$LOAD" load --seconds "$SECS" --connections 50 "$@"; }
field() { python3 -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }
rss_kib() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }

start_taskdeck() { # $1 = extra flags
  port=$(free_port)
  TOKIO_WORKER_THREADS=1 taskset -c 0 "$BIN" serve --port "$port" --data-dir "$work/data" --config-dir "$work/cfg" \
    --conformance-fixtures $1 >"$work/out" 2>"$work/err" &
  td=$!; pids+=("$td")
  for _ in $(seq 200); do grep -q "running headless" "$work/out" 2>/dev/null && break; sleep 0.05; done
  token=$(cat "$work/cfg/admin-token")
  url="http://127.0.0.1:$port/mcp"
}
stop_taskdeck() { kill "$td"; wait "$td" 2>/dev/null || true; }

# 1. The ceiling: a bare axum handler parsing the same body.
cport=$(free_port)
taskset -c 0 "$LOAD" ceiling --port "$cport" >/dev/null & pids+=("$!")
sleep 0.5
ceiling=$(load --url "http://127.0.0.1:$cport/mcp" --mode ceiling)

# 2. Taskdeck with 1 stored task.
start_taskdeck ""
seed1=$("$LOAD" seed --url "$url" --token "$token" --count 1 --connections 1)
task=$(curl -s "http://127.0.0.1:$port/v1/tasks?limit=1" -H "Authorization: Bearer $token" | python3 -c 'import json,sys; print(json.load(sys.stdin)["tasks"][0]["taskId"])')
get1=$(load --url "$url" --mode get --token "$token" --task-id "$task")
create1=$(load --url "$url" --mode create --token "$token")
stop_taskdeck

# 3. The same tasks/get through rmcp's generic path, for comparison.
start_taskdeck "--no-fast-path"
get1_rmcp=$(load --url "$url" --mode get --token "$token" --task-id "$task")
stop_taskdeck

# 4. Grow the store to SEED tasks (retained: default ttlMs is 24 h), measure again.
start_taskdeck ""
count=$(curl -s "http://127.0.0.1:$port/v1/tasks?limit=1" -H "Authorization: Bearer $token" | python3 -c 'import json,sys; c=json.load(sys.stdin)["counts"]; print(sum(c.values()))')
if [ "$count" -lt "$SEED" ]; then
  "$LOAD" seed --url "$url" --token "$token" --count $((SEED - count)) >/dev/null
fi
stop_taskdeck
start_taskdeck ""
sleep 1
rss_idle=$(rss_kib "$td")
get100k=$(load --url "$url" --mode get --token "$token" --task-id "$task")
create100k=$(load --url "$url" --mode create --token "$token")
rss_after=$(rss_kib "$td")
stored=$(curl -s "http://127.0.0.1:$port/v1/tasks?limit=1" -H "Authorization: Bearer $token" | python3 -c 'import json,sys; c=json.load(sys.stdin)["counts"]; print(sum(c.values()))')
dbsize=$(du -k "$work/data/taskdeck.sqlite3" | cut -f1)
stop_taskdeck

c=$(field "$ceiling" rps)
ratio() { python3 -c "print(f'{$1/$2:.2f}')"; }
cat <<MD
Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -r); $(rustc --version).
Command: \`scripts/bench.sh $SECS $SEED\` ($(date -u +%Y-%m-%d)). Server on core 0 (TOKIO_WORKER_THREADS=1), load on core 1, 50 keep-alive connections, ${SECS} s per run, every response checked.

| workload | stored tasks | req/s | vs ceiling | p50 | p99 |
|---|---|---|---|---|---|
| bare axum ceiling (parse body, small JSON) | - | $c | 1.00 | $(field "$ceiling" p50us) µs | $(field "$ceiling" p99us) µs |
| tasks/get, dedicated path | 1 | $(field "$get1" rps) | $(ratio "$(field "$get1" rps)" "$c") | $(field "$get1" p50us) µs | $(field "$get1" p99us) µs |
| tasks/get, through rmcp (\`--no-fast-path\`) | 1 | $(field "$get1_rmcp" rps) | $(ratio "$(field "$get1_rmcp" rps)" "$c") | $(field "$get1_rmcp" p50us) µs | $(field "$get1_rmcp" p99us) µs |
| tasks/get, dedicated path | $stored | $(field "$get100k" rps) | $(ratio "$(field "$get100k" rps)" "$c") | $(field "$get100k" p50us) µs | $(field "$get100k" p99us) µs |
| durable creation (tools/call echo → CreateTaskResult) | ~1 | $(field "$create1" rps) | $(ratio "$(field "$create1" rps)" "$c") | $(field "$create1" p50us) µs | $(field "$create1" p99us) µs |
| durable creation | $SEED+ | $(field "$create100k" rps) | $(ratio "$(field "$create100k" rps)" "$c") | $(field "$create100k" p50us) µs | $(field "$create100k" p99us) µs |

RSS with $stored retained tasks: $((rss_idle / 1024)) MiB after start, $((rss_after / 1024)) MiB after the runs above. Database file: $((dbsize / 1024)) MiB.
MD
