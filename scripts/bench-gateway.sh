#!/usr/bin/env bash
# Benchmarks Taskdeck's MCP gateway (issue #14) on the release build; prints a markdown report
# (BENCHMARKS.md, "Gateway").
# 1. Overhead: @modelcontextprotocol/server-everything (tests/upstreams, Streamable HTTP, pinned
#    to core 0) called directly at its /mcp, and the same server as a Taskdeck upstream called
#    through Taskdeck's /mcp (Taskdeck pinned to core 1, one tokio worker, default durability),
#    by the same client (`taskdeck-bench mcp-calls`, core 1): its read-only `echo` tool, with 1
#    session (latency) and with SESSIONS concurrent sessions (throughput), the two targets
#    alternated over ROUNDS rounds. Every gateway call is a task in the store.
# 2. Memory: Taskdeck's own VmRSS (not its children's) with no upstream and with IDLE idle stdio
#    upstreams (server-filesystem, each on its own temp directory), once all are connected.
# Usage: scripts/bench-gateway.sh [seconds per run, default 10] [sessions, default 16]
#        [idle upstreams, default 50] [rounds, default 3]
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-10}
SESSIONS=${2:-16}
IDLE=${3:-50}
ROUNDS=${4:-3}
WARMUP=2
SETTLE_MS=60000
load_at_start=$(cut -d' ' -f1-3 /proc/loadavg)

flock /tmp/cargo.lock cargo build --release --bin taskdeck --bin taskdeck-bench -q
if [ ! -d tests/upstreams/node_modules/@modelcontextprotocol/server-everything ]; then
  (cd tests/upstreams && npm ci --no-audit --no-fund --silent)
fi
BIN=$PWD/target/release/taskdeck
LOAD=$PWD/target/release/taskdeck-bench
UP=$PWD/tests/upstreams/node_modules/@modelcontextprotocol
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
field() { python3 -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }
rss_kib() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
die() { echo "bench-gateway: $*" >&2; exit 1; }

# start_taskdeck NAME [taskset/env prefix...]: Taskdeck on a fresh store with config dir
# $work/NAME/cfg (write servers.json there first), --upstream-settle-ms $SETTLE_MS; sets td,
# port, token (an agent token).
start_taskdeck() {
  local name=$1; shift
  local dir=$work/$name
  mkdir -p "$dir/cfg"
  port=$(free_port)
  "$@" "$BIN" serve --port "$port" --data-dir "$dir/data" --config-dir "$dir/cfg" --upstream-settle-ms "$SETTLE_MS" >"$dir/out" 2>"$dir/err" &
  td=$!; pids+=("$td")
  for _ in $(seq 400); do grep -q "running headless" "$dir/out" 2>/dev/null && break; sleep 0.05; done
  grep -q "running headless" "$dir/out" || die "Taskdeck $name did not start: $(cat "$dir/err")"
  token=$("$BIN" --data-dir "$dir/data" --config-dir "$dir/cfg" token create bench 2>"$dir/token.err" | grep -o 'td_[A-Za-z0-9_-]*' | head -1)
  [ -n "$token" ] || die "no agent token for $name"
}
stop_taskdeck() { kill "$td"; wait "$td" 2>/dev/null || true; }

# wait_for_servers COUNT [SECONDS]: until Taskdeck's /mcp tools/list (2026-07-28, stateless)
# shows tools of COUNT upstreams (names SERVER__TOOL); prints the number of upstream tools.
wait_for_servers() {
  python3 - "http://127.0.0.1:$port/mcp" "$token" "$1" "${2:-300}" <<'PY'
import json, sys, time, urllib.request
url, token, want, limit = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "bench-gateway", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}}
body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}).encode()
headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
           "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28",
           "Mcp-Method": "tools/list"}
deadline, tools = time.time() + limit, []
while True:
    answer = json.load(urllib.request.urlopen(urllib.request.Request(url, body, headers)))
    tools = [t["name"] for t in answer["result"]["tools"] if "__" in t["name"]]
    if len({t.split("__")[0] for t in tools}) >= want:
        print(len(tools))
        sys.exit(0)
    if time.time() > deadline:
        sys.exit(f"only {len(set(t.split('__')[0] for t in tools))} of {want} upstreams connected in {limit} s")
    time.sleep(0.5)
PY
}

# cpu_ticks PID: the process's user + system CPU time (all its threads), in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# calls LABEL URL TOOL TOKEN SESSIONS: one mcp-calls run of echo; prints its JSON line plus the
# CPU time per answered call (warmup included) of server-everything and of Taskdeck, in µs.
calls() {
  local out ev0 td0
  ev0=$(cpu_ticks "$ev"); td0=$(cpu_ticks "$td")
  out=$(taskset -c 1 "$LOAD" mcp-calls --url "$2" --tool "$3" --token "$4" --sessions "$5" \
    --arguments '{"message":"gateway benchmark"}' --expect 'Echo: gateway benchmark' \
    --seconds "$SECS" --warmup-seconds "$WARMUP") || die "$1 with $5 sessions failed: $out"
  python3 - "$out" $(($(cpu_ticks "$ev") - ev0)) $(($(cpu_ticks "$td") - td0)) "$(getconf CLK_TCK)" <<'PY'
import json, sys
run, ev, td, hz = json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
run["nodeCpuUs"] = round(ev * 1e6 / hz / run["allRequests"])
run["taskdeckCpuUs"] = round(td * 1e6 / hz / run["allRequests"])
print(json.dumps(run))
PY
}

# 1. Overhead.
ev_port=$(free_port)
PORT=$ev_port taskset -c 0 node "$UP/server-everything/dist/index.js" streamableHttp >"$work/everything.out" 2>"$work/everything.err" &
ev=$!; pids+=("$ev")
for _ in $(seq 200); do grep -q "listening on port" "$work/everything.err" 2>/dev/null && break; sleep 0.05; done
grep -q "listening on port" "$work/everything.err" || die "server-everything did not start: $(cat "$work/everything.err")"
direct_url="http://127.0.0.1:$ev_port/mcp"
mkdir -p "$work/gateway/cfg"
printf '{"servers": {"everything": {"url": "%s"}}}\n' "$direct_url" >"$work/gateway/cfg/servers.json"
# A call slower than --upstream-settle-ms is answered with its task instead of its result: the
# bench waits up to 60 s so that such an outlier counts as latency, not as an error.
start_taskdeck gateway env TOKIO_WORKER_THREADS=1 taskset -c 1
wait_for_servers 1 60 >/dev/null
gateway_url="http://127.0.0.1:$port/mcp"
gateway_token=$token
rows=()
for round in $(seq "$ROUNDS"); do
  for n in 1 "$SESSIONS"; do
    d=$(calls direct "$direct_url" echo "" "$n")
    g=$(calls gateway "$gateway_url" everything__echo "$gateway_token" "$n")
    rows+=("$(python3 - "$round" "$n" "$d" "$g" <<'PY'
import json, sys
r, n, d, g = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4])
print(f"| {r} | {n} | {d['rps']:.0f} | {g['rps']:.0f} | {g['rps'] / d['rps']:.2f} "
      f"| {d['p50us']} µs | {g['p50us']} µs | {g['p50us'] - d['p50us']:+d} µs "
      f"| {d['p99us']} µs | {g['p99us']} µs "
      f"| {d['nodeCpuUs']} µs | {g['nodeCpuUs']} + {g['taskdeckCpuUs']} µs |")
PY
)")
  done
done
tasks=$(curl -s "http://127.0.0.1:$port/v1/tasks?limit=1" -H "Authorization: Bearer $(cat "$work/gateway/cfg/admin-token")" \
  | python3 -c 'import json,sys; c=json.load(sys.stdin)["counts"]; print(sum(c.values()))')
stop_taskdeck

# 2. Memory: no upstream, then IDLE idle stdio upstreams (a fresh Taskdeck each).
start_taskdeck idle0
wait_for_servers 0 10 >/dev/null
sleep 3
rss0=$(rss_kib "$td")
stop_taskdeck
mkdir -p "$work/idle/cfg"
python3 - "$IDLE" "$UP/server-filesystem/dist/index.js" "$work/idle" >"$work/idle/cfg/servers.json" <<'PY'
import json, os, sys
count, script, root = int(sys.argv[1]), sys.argv[2], sys.argv[3]
servers = {}
for i in range(count):
    d = os.path.join(root, "files", f"fs{i}")
    os.makedirs(d)
    servers[f"fs{i}"] = {"command": "node", "args": [script, d]}
print(json.dumps({"servers": servers}))
PY
start_taskdeck idle
started=$(date +%s.%N)
upstream_tools=$(wait_for_servers "$IDLE" 600)
connect_s=$(python3 -c "import time; print(f'{time.time() - $started:.1f}')")
sleep 3
rss_idle=$(rss_kib "$td")
mapfile -t upstream_pids < <(pgrep -P "$td")
children=${#upstream_pids[@]}
children_kib=$(for c in "${upstream_pids[@]}"; do rss_kib "$c"; done | awk '{s += $1} END {print s + 0}')
stop_taskdeck
# Taskdeck stops its upstreams as it exits; any left over are stopped here.
for c in "${upstream_pids[@]}"; do kill "$c" 2>/dev/null || true; done
[ "$children" -ge "$IDLE" ] || die "expected $IDLE upstream processes, found $children"

per_upstream=$(python3 -c "print(f'{($rss_idle - $rss0) / 1024 / $IDLE:.2f}')")
cat <<MD
Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -r); $(rustc --version); Node $(node --version); load average $load_at_start at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end.
Command: \`scripts/bench-gateway.sh $SECS $SESSIONS $IDLE $ROUNDS\` ($(date -u '+%Y-%m-%d %H:%M UTC')). server-everything $(node -p "require('$UP/server-everything/package.json').version") (Streamable HTTP) on core 0; Taskdeck (TOKIO_WORKER_THREADS=1, default durability \`process\`) and the client (\`taskdeck-bench mcp-calls\`, 2025-11-25 sessions) on core 1; ${WARMUP} s warmup + ${SECS} s per run, every answer checked. Tool: \`echo\` direct, \`everything__echo\` through Taskdeck (readOnlyHint: allowed without asking; \`--upstream-settle-ms $SETTLE_MS\` so a slow call is still answered with its result), each call a stored task ($tasks tasks at the end).

| round | sessions | direct calls/s | gateway calls/s | gateway / direct | direct p50 | gateway p50 | p50 added | direct p99 | gateway p99 | CPU per call, direct (node) | CPU per call, gateway (node + Taskdeck) |
|---|---|---|---|---|---|---|---|---|---|---|---|
$(printf '%s\n' "${rows[@]}")

Taskdeck's RSS (VmRSS, its own process): $((rss0 / 1024)) MiB with no upstream, $((rss_idle / 1024)) MiB with $IDLE idle stdio upstreams (server-filesystem, $upstream_tools tools, all connected ${connect_s} s after start): **$per_upstream MiB per upstream**. The $children upstream processes themselves: $((children_kib / 1024)) MiB.
MD
