#!/usr/bin/env bash
# Benchmarks the release build over loopback HTTP; prints a markdown report (BENCHMARKS.md).
# Server pinned to core 0 (one tokio worker), load generator (wrk, one thread, 50 connections,
# scripts/wrk/jsonrpc.lua checks every answer) pinned to core 1.
# Usage: scripts/bench.sh [seconds per run, default 10] [tasks to seed, default 100000]
#        scripts/bench.sh --ab OTHER_BINARY [seconds per run]: tasks/get of a finished task on
#        OTHER_BINARY (e.g. a release build of an earlier commit) and on this build, alternated
#        over 3 rounds in one run, each round with its ceiling: a regression check.
set -euo pipefail
cd "$(dirname "$0")/.."
AB=""
if [ "${1:-}" = --ab ]; then AB=$(realpath "$2"); shift 2; fi
SECS=${1:-10}
SEED=${2:-100000}
source scripts/lib/wrk.sh
need_wrk
cargo build --release --bins -q
BIN=target/release/taskdeck
LOAD=target/release/taskdeck-bench
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
META='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}'
# load URL get|create|ceiling [TASK_ID]: one wrk run; prints {"rps","p50us","p99us","requests","errors"}.
load() {
  local body expect method name out
  case "$2" in
    create) method=tools/call; name=echo; expect='"resultType":"task"'
      body="{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"note\":\"benchmark task\"},$META}}" ;;
    *) method=tasks/get; name=$3; expect='"resultType":"complete"'
      body="{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tasks/get\",\"params\":{\"taskId\":\"$3\",$META}}" ;;
  esac
  if [ "$2" = ceiling ]; then method=""; expect='"ok":true'; fi
  out=$(BODY="$body" TOKEN="${token:-}" MCP_METHOD="$method" MCP_NAME="$name" EXPECT="$expect" \
    taskset -c 1 wrk -t1 -c50 -d"${SECS}s" -s scripts/wrk/jsonrpc.lua "$1" | tail -1)
  if [ "$(field "$out" errors)" != 0 ]; then echo "bench: $2 against $1 had errors: $out" >&2; exit 1; fi
  echo "$out"
}
# report BASE_URL: status-message reports to one new external job (scripts/wrk/report.lua).
report() {
  local job out
  job=$(curl -s -X POST "$1/v1/jobs" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    -d '{"external":{"name":"bench-reports","heartbeatMs":600000}}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["taskId"])')
  out=$(TOKEN="$token" EXPECT='"statusMessage":"report ' taskset -c 1 wrk -t1 -c50 -d"${SECS}s" -s scripts/wrk/report.lua "$1/v1/jobs/$job/report" | tail -1)
  if [ "$(field "$out" errors)" != 0 ]; then echo "bench: reports had errors: $out" >&2; exit 1; fi
  echo "$out"
}
source scripts/lib/search-index.sh
field() { python3 -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }
rss_kib() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }

start_taskdeck() { # $1 = store (a directory under $work), $2 = extra flags
  port=$(free_port)
  data="$work/$1"
  TOKIO_WORKER_THREADS=1 taskset -c 0 "$BIN" serve --port "$port" --data-dir "$data" --config-dir "$work/cfg" \
    --conformance-fixtures $2 >"$work/out" 2>"$work/err" &
  td=$!; pids+=("$td")
  for _ in $(seq 200); do grep -q "running headless" "$work/out" 2>/dev/null && break; sleep 0.05; done
  token=$(cat "$work/cfg/admin-token")
  url="http://127.0.0.1:$port/mcp"
}
stop_taskdeck() { kill "$td"; wait "$td" 2>/dev/null || true; }

if [ -n "$AB" ]; then
  cport=$(free_port)
  taskset -c 0 "$LOAD" ceiling --port "$cport" >/dev/null & pids+=("$!")
  sleep 0.5
  echo "| round | ceiling req/s | other build tasks/get | this build tasks/get | other p99 | this p99 |"
  echo "|---|---|---|---|---|---|"
  for round in 1 2 3; do
    c=$(token="" load "http://127.0.0.1:$cport/mcp" ceiling x)
    row=()
    for b in "$AB" target/release/taskdeck; do
      BIN=$b; start_taskdeck "ab-$round-$(basename "$(dirname "$b")")" ""
      "$LOAD" seed --url "$url" --token "$token" --count 1 --connections 1 >/dev/null
      task=$(curl -s "http://127.0.0.1:$port/v1/tasks?limit=1" -H "Authorization: Bearer $token" | python3 -c 'import json,sys; print(json.load(sys.stdin)["tasks"][0]["taskId"])')
      row+=("$(load "$url" get "$task")")
      stop_taskdeck
    done
    echo "| $round | $(field "$c" rps) | $(field "${row[0]}" rps) | $(field "${row[1]}" rps) | $(field "${row[0]}" p99us) µs | $(field "${row[1]}" p99us) µs |"
  done
  exit 0
fi

# 1. The ceiling: a bare axum handler parsing the same body.
cport=$(free_port)
taskset -c 0 "$LOAD" ceiling --port "$cport" >/dev/null & pids+=("$!")
sleep 0.5
ceiling=$(token="" load "http://127.0.0.1:$cport/mcp" ceiling x)

# 2. Taskdeck with 1 stored task (its own store: the creation run below adds to it).
start_taskdeck small ""
seed1=$("$LOAD" seed --url "$url" --token "$token" --count 1 --connections 1)
task=$(curl -s "http://127.0.0.1:$port/v1/tasks?limit=1" -H "Authorization: Bearer $token" | python3 -c 'import json,sys; print(json.load(sys.stdin)["tasks"][0]["taskId"])')
get1=$(load "$url" get "$task")
# A task that waits for a human: each client is shown only what it may answer (not cached).
waiting=$(curl -s "http://127.0.0.1:$port/v1/jobs" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
  -d '{"tool": "request_approval", "arguments": {"message": "benchmark question"}}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["taskId"])')
sleep 0.2
getwaiting=$(load "$url" get "$waiting")
create1=$(load "$url" create)
reports1=$(report "http://127.0.0.1:$port")
stop_taskdeck

# 3. The same tasks/get through rmcp's generic path, for comparison.
start_taskdeck small "--no-fast-path"
get1_rmcp=$(load "$url" get "$task")
stop_taskdeck

# 4. A second store grown to SEED tasks (retained: default ttlMs is 24 h), measured again.
start_taskdeck seeded ""
count=$(curl -s "http://127.0.0.1:$port/v1/tasks?limit=1" -H "Authorization: Bearer $token" | python3 -c 'import json,sys; c=json.load(sys.stdin)["counts"]; print(sum(c.values()))')
if [ "$count" -lt "$SEED" ]; then
  "$LOAD" seed --url "$url" --token "$token" --count $((SEED - count)) >/dev/null
fi
task=$(curl -s "http://127.0.0.1:$port/v1/tasks?limit=1" -H "Authorization: Bearer $token" | python3 -c 'import json,sys; print(json.load(sys.stdin)["tasks"][0]["taskId"])')
stop_taskdeck
start_taskdeck seeded ""
wait_for_index "$data"
sleep 1
seeded=$(curl -s "http://127.0.0.1:$port/v1/tasks?limit=1" -H "Authorization: Bearer $token" | python3 -c 'import json,sys; c=json.load(sys.stdin)["counts"]; print(sum(c.values()))')
rss_idle=$(rss_kib "$td")
get100k=$(load "$url" get "$task")
rss_get=$(rss_kib "$td")
create100k=$(load "$url" create)
rss_after=$(rss_kib "$td")
stored=$(curl -s "http://127.0.0.1:$port/v1/tasks?limit=1" -H "Authorization: Bearer $token" | python3 -c 'import json,sys; c=json.load(sys.stdin)["counts"]; print(sum(c.values()))')
dbsize=$(du -k "$data/taskdeck.sqlite3" | cut -f1)
stop_taskdeck

c=$(field "$ceiling" rps)
ratio() { python3 -c "print(f'{$1/$2:.2f}')"; }
cat <<MD
Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -r); $(rustc --version).
Command: \`scripts/bench.sh $SECS $SEED\` ($(date -u +%Y-%m-%d)). Server on core 0 (TOKIO_WORKER_THREADS=1), load (wrk -t1 -c50) on core 1, ${SECS} s per run, every response checked.

| workload | stored tasks | req/s | vs ceiling | p50 | p99 |
|---|---|---|---|---|---|
| bare axum ceiling (parse body, small JSON) | - | $c | 1.00 | $(field "$ceiling" p50us) µs | $(field "$ceiling" p99us) µs |
| tasks/get, dedicated path | 1 | $(field "$get1" rps) | $(ratio "$(field "$get1" rps)" "$c") | $(field "$get1" p50us) µs | $(field "$get1" p99us) µs |
| tasks/get, a task waiting for a human (request_approval) | 2 | $(field "$getwaiting" rps) | $(ratio "$(field "$getwaiting" rps)" "$c") | $(field "$getwaiting" p50us) µs | $(field "$getwaiting" p99us) µs |
| tasks/get, through rmcp (\`--no-fast-path\`) | 1 | $(field "$get1_rmcp" rps) | $(ratio "$(field "$get1_rmcp" rps)" "$c") | $(field "$get1_rmcp" p50us) µs | $(field "$get1_rmcp" p99us) µs |
| tasks/get, dedicated path | $seeded | $(field "$get100k" rps) | $(ratio "$(field "$get100k" rps)" "$c") | $(field "$get100k" p50us) µs | $(field "$get100k" p99us) µs |
| durable creation (tools/call echo → CreateTaskResult) | ~1 | $(field "$create1" rps) | $(ratio "$(field "$create1" rps)" "$c") | $(field "$create1" p50us) µs | $(field "$create1" p99us) µs |
| external job reports (\`POST /v1/jobs/{id}/report\` statusMessage, one job, each a committed write) | ~1 | $(field "$reports1" rps) | $(ratio "$(field "$reports1" rps)" "$c") | $(field "$reports1" p50us) µs | $(field "$reports1" p99us) µs |
| durable creation | $SEED+ | $(field "$create100k" rps) | $(ratio "$(field "$create100k" rps)" "$c") | $(field "$create100k" p50us) µs | $(field "$create100k" p99us) µs |

RSS with $seeded retained tasks: $((rss_idle / 1024)) MiB after start, $((rss_get / 1024)) MiB after the tasks/get run; with $stored tasks after the creation run: $((rss_after / 1024)) MiB. Database file: $((dbsize / 1024)) MiB.
MD
