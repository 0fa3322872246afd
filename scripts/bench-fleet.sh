#!/usr/bin/env bash
# Benchmarks the workloads of a fleet of agents (issue #17) on the release build over loopback
# HTTP; prints a markdown report (BENCHMARKS.md, "Fleet workloads"). Same setup as bench.sh:
# server pinned to core 0 (one tokio worker), load generator pinned to core 1.
#
# 1. `tasks/get` of a task picked at random per request (scripts/wrk/random_get.lua, wrk -t1
#    -c50, every answer checked) among each STORED count of tasks: finished `echo` tasks
#    (seeded once into $FLEET_STORES/STORED and reused by later runs), plus WORKING
#    `slow_compute` tasks (working for an hour) and WAITING `confirm_delete` tasks (waiting for
#    input) created on every start (a restart fails the previous ones as interrupted: they
#    join the finished). Next to each row, the bare axum ceiling in the same run, and the
#    server's CPU time (utime + stime, all threads) per answered request, which the host's
#    load disturbs less than req/s. Before each run the store file is read once into the page
#    cache (WARM_STORE=0 not to): a fleet polling its tasks keeps their pages cached, but a
#    host may page out a file left idle (this one's DAMON pages out file pages untouched for
#    60 s), and a run that starts on a half-cached 1 GB store measures the disk.
# 2. Durable creation on a fresh store (`taskdeck-bench rate`): offered at RATE/s (open loop,
#    latency from each request's due instant) after WARMUP seconds of the same load unmeasured
#    (a fresh store's first writes grow its files: stalls of 10-12 ms in the first 300 ms),
#    then the peak (closed loop), 50 connections; with the WAL file's largest size during each run.
#
# Usage: scripts/bench-fleet.sh [seconds per run, default 10] [STORED... default 100000 1000000;
#        0 for none, only creation]
#        scripts/bench-fleet.sh --ab OTHER_BINARY [seconds] [STORED...]: the tasks/get rows on
#        OTHER_BINARY (e.g. the release build of main, on a copy of the store) and on this
#        build, both servers running (idle but the one measured), alternated over 3 rounds,
#        each round with its own ceiling run; then creation on each build, alternated over 3
#        rounds: a before/after comparison inside one run.
# Environment: FLEET_STORES (default /tmp/taskdeck-fleet), WORKING and WAITING (default 1000
# each), RATE (default 10000), WARMUP (default 3), NO_BUILD=1 to use target/release as it is, QUIET_WAIT=0 not to
# wait for an idle machine before each measurement (wait_quiet), WARM_STORE=0 not to read the
# store into the page cache before each tasks/get run.
set -euo pipefail
cd "$(dirname "$0")/.."
AB=""
if [ "${1:-}" = --ab ]; then AB=$(realpath "$2"); shift 2; fi
SECS=${1:-10}
shift || true
SIZES=("${@:-100000 1000000}")
read -r -a SIZES <<<"${SIZES[*]}"
STORES=${FLEET_STORES:-/tmp/taskdeck-fleet}
WORKING=${WORKING:-1000}
WAITING=${WAITING:-1000}
RATE=${RATE:-10000}
WARMUP=${WARMUP:-3}
[ "${NO_BUILD:-}" = 1 ] || cargo build --release --bins -q
THIS=$PWD/target/release/taskdeck
LOAD=target/release/taskdeck-bench
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
source scripts/lib/search-index.sh
source scripts/lib/wrk.sh
# The tasks/get rows (any STORED but 0) run wrk.
for n in "${SIZES[@]}"; do [ "$n" != 0 ] && { need_wrk; break; }; done
field() { python3 -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; } # utime + stime, in 1/100 s
rss_mib() { awk '/VmRSS/ {printf "%d", $2 / 1024}' "/proc/$1/status"; }
ratio() { python3 -c "print(f'{$1/$2:.2f}')"; }

# wrk_run URL LUA [IDS]: one wrk run (-t1 -c50, SECS) on core 1; prints its JSON line.
wrk_run() {
  local out
  out=$(IDS="${3:-}" TOKEN="${token:-}" EXPECT="$expect" MCP_METHOD="" BODY="$body" \
    taskset -c 1 wrk -t1 -c50 -d"${SECS}s" -s "$2" "$1" | tail -1)
  if [ "$(field "$out" errors)" != 0 ]; then echo "bench-fleet: $2 against $1 had errors: $out" >&2; exit 1; fi
  echo "$out"
}
# Waits (up to 10 minutes) until both cores were at least 70% idle over 2 s: the machine is
# shared, and a compiler on core 0 halves the server's share. QUIET_WAIT=0 skips the wait.
wait_quiet() {
  [ "${QUIET_WAIT:-1}" = 0 ] && return 0
  python3 - <<'PY'
import time
def sample():
    with open("/proc/stat") as f:
        return {l.split()[0]: list(map(int, l.split()[1:])) for l in f if l.startswith("cpu") and l[3] != " "}
for _ in range(300):
    a = sample(); time.sleep(2); b = sample()
    idle = [(b[c][3] - a[c][3]) / max(1, sum(b[c]) - sum(a[c])) for c in a]
    if min(idle) >= 0.70:
        break
PY
}
ceiling_run() {
  body='{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"x"}}' expect='"ok":true' \
    token="" wrk_run "http://127.0.0.1:$cport/mcp" scripts/wrk/jsonrpc.lua
}
random_get_run() { body="" expect='"resultType":"complete"' wrk_run "$url" scripts/wrk/random_get.lua "$1"; }

start_taskdeck() { # $1 = binary, $2 = store directory; sets td, port, token, url, data
  data=$2
  local cfg="$work/cfg-$(basename "$2")" out="$work/out-$(basename "$2")" try
  for try in 1 2 3; do # a port free_port found may be taken before the server binds it
    port=$(free_port)
    rm -f "$out"
    TOKIO_WORKER_THREADS=1 taskset -c 0 "$1" serve --port "$port" --data-dir "$data" --config-dir "$cfg" \
      --conformance-fixtures >"$out" 2>&1 &
    td=$!; pids+=("$td")
    for _ in $(seq 1200); do
      grep -q "running headless" "$out" 2>/dev/null && break
      kill -0 "$td" 2>/dev/null || break
      sleep 0.05
    done
    grep -q "running headless" "$out" && break
    kill "$td" 2>/dev/null || true
    echo "bench-fleet: taskdeck did not start (try $try): $(cat "$out")" >&2
    [ "$try" = 3 ] && exit 1
  done
  token=$(cat "$cfg/admin-token")
  url="http://127.0.0.1:$port/mcp"
}
stop_taskdeck() { kill "$td"; wait "$td" 2>/dev/null || true; }
counts() { # the store's tasks per status, as JSON
  curl -s "http://127.0.0.1:$port/v1/tasks?limit=1" -H "Authorization: Bearer $token" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["counts"]))'
}
total() { python3 -c 'import json,sys; print(sum(json.loads(sys.argv[1]).values()))' "$1"; }
seed() { # COUNT [TOOL ARGUMENTS]
  [ "$1" -gt 0 ] || return 0
  if [ $# -gt 1 ]; then
    "$LOAD" seed --url "$url" --token "$token" --count "$1" --tool "$2" --arguments "$3" >/dev/null
  else
    "$LOAD" seed --url "$url" --token "$token" --count "$1" >/dev/null
  fi
}
dump_ids() { # every stored task id, one a line, into $1
  python3 - "$data" "$1" <<'PY'
import sqlite3, sys
c = sqlite3.connect(f"file:{sys.argv[1]}/taskdeck.sqlite3?mode=ro", uri=True)
with open(sys.argv[2], "w") as f:
    for (tid,) in c.execute("SELECT task_id FROM tasks"):
        f.write(tid + "\n")
PY
}
# prepare BINARY DIR SIZE NAME: starts BINARY on the store in DIR (seeding finished tasks up to
# SIZE), adds the working and waiting tasks, waits for the index, writes the ids to
# $work/ids-NAME, and keeps the server running; sets NAME_{td,url,token,mix,rss0,db}.
prepare() {
  local bin=$1 dir=$2 size=$3 name=$4 n c
  mkdir -p "$dir"
  start_taskdeck "$bin" "$dir"
  n=$(total "$(counts)")
  seed $((size - n - WORKING - WAITING))
  seed "$WORKING" slow_compute '{"seconds":3600,"label":"fleet"}'
  seed "$WAITING" confirm_delete '{"filename":"fleet.txt"}'
  wait_for_index "$data" 1200
  c=$(counts)
  dump_ids "$work/ids-$name"
  printf -v "${name}_td" %s "$td"; printf -v "${name}_url" %s "$url"; printf -v "${name}_token" %s "$token"
  printf -v "${name}_mix" %s "$(python3 -c 'import json,sys; c=json.loads(sys.argv[1]); w=c.get("working",0); i=c.get("input_required",0); print(f"{sum(c.values())} ({w} working, {i} input_required, {sum(c.values())-w-i} finished)")' "$c")"
  printf -v "${name}_db" %s "$(du -m "$dir/taskdeck.sqlite3" | cut -f1)"
  printf -v "${name}_dir" %s "$dir"
  sleep 1
  printf -v "${name}_rss0" %s "$(rss_mib "$td")"
}
# cached FILE: the share of FILE in the page cache, e.g. "41%".
cached() { fincore -b -n -o RES,SIZE "$1" | awk '{ printf "%d%%", $2 ? 100 * $1 / $2 : 0 }'; }
# measure NAME LABEL CEILING_JSON: one random tasks/get run against the prepared server NAME,
# its store file read into the page cache first (unless WARM_STORE=0); prints its table row.
measure() {
  local name=$1 pid_var="${1}_td" url_var="${1}_url" token_var="${1}_token" mix_var="${1}_mix" rss_var="${1}_rss0" db_var="${1}_db" dir_var="${1}_dir" r cr cache
  url=${!url_var} token=${!token_var}
  local file=${!dir_var}/taskdeck.sqlite3
  cache=$(cached "$file")
  if [ "${WARM_STORE:-1}" != 0 ]; then
    taskset -c 1 cat "$file" >/dev/null
    cache="$cache → $(cached "$file")"
  fi
  local t0; t0=$(cpu_ticks "${!pid_var}")
  r=$(random_get_run "$work/ids-$name")
  local cpu; cpu=$(python3 -c "print(round(($(cpu_ticks "${!pid_var}") - $t0) * 10000 / $(field "$r" requests), 1))")
  cr=$(field "$3" rps)
  echo "| $2 | ${!mix_var} | $cr | $(field "$r" rps) | $(ratio "$(field "$r" rps)" "$cr") | $(field "$r" p50us) µs | $(field "$r" p99us) µs | $cpu µs | ${!rss_var} → $(rss_mib "${!pid_var}") MiB | ${!db_var} MiB | $cache |"
}

cport=$(free_port)
taskset -c 0 "$LOAD" ceiling --port "$cport" >/dev/null & pids+=("$!")
sleep 0.5

cat <<MD
Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -r); $(rustc --version).
Command: \`scripts/bench-fleet.sh ${AB:+--ab $AB }$SECS ${SIZES[*]}\` ($(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD)). Server on core 0 (TOKIO_WORKER_THREADS=1), load on core 1, ${SECS} s per run, every answer checked.

| build | stored tasks | ceiling req/s (same round) | random tasks/get req/s | vs ceiling | p50 | p99 | server CPU per request | RSS (after start → after the run) | database | store in the page cache (before → after warming) |
|---|---|---|---|---|---|---|---|---|---|---|
MD
for size in "${SIZES[@]}"; do
  [ "$size" = 0 ] && continue
  prepare "$THIS" "$STORES/$size" "$size" this
  if [ -n "$AB" ]; then
    # The other build polls a copy of the same store, both servers idle on core 0 but the one
    # measured; the rounds alternate the builds, each round with its own ceiling run.
    if [ ! -d "$STORES/$size-other" ]; then
      kill "$this_td"; wait "$this_td" 2>/dev/null || true
      cp -r "$STORES/$size" "$STORES/$size-other"
      prepare "$THIS" "$STORES/$size" "$size" this
    fi
    prepare "$AB" "$STORES/$size-other" "$size" other
    for round in 1 2 3; do
      wait_quiet
      ceil=$(ceiling_run)
      measure other "other, round $round" "$ceil"
      measure this "this, round $round" "$ceil"
    done
    kill "$other_td"; wait "$other_td" 2>/dev/null || true
  else
    wait_quiet
    ceil=$(ceiling_run)
    measure this this "$ceil"
  fi
  kill "$this_td"; wait "$this_td" 2>/dev/null || true
done

# largest_wal FILE OUT: until killed, samples FILE's size every 20 ms (on core 1, with the load)
# and keeps the largest seen in OUT (MiB, one decimal), replaced whole so a kill never leaves it
# empty. The store's WAL is reset at 32 MiB and truncated past 64 MiB; the file only shrinks
# when truncated, so a run's largest size can be one an earlier run left.
largest_wal() {
  local max=0 size
  taskset -cp 1 "$BASHPID" >/dev/null
  echo 0 >"$2"
  while :; do
    size=$(stat -c %s "$1" 2>/dev/null || echo 0)
    if [ "$size" -gt "$max" ]; then
      max=$size
      awk -v b="$max" 'BEGIN { printf "%.1f\n", b / 1048576 }' >"$2.new" && mv "$2.new" "$2"
    fi
    sleep 0.02
  done
}

# creation_run RPS [rate options...]: one `taskdeck-bench rate` run against the server started
# last; prints its JSON report with the WAL's largest size during the run added (walMiB).
creation_run() {
  local rps=$1 watcher report
  shift
  largest_wal "$data/taskdeck.sqlite3-wal" "$work/wal-max" &
  watcher=$!
  report=$(taskset -c 1 "$LOAD" rate --url "$url" --token "$token" --rps "$rps" --seconds "$SECS" --connections 50 "$@")
  kill "$watcher"; wait "$watcher" 2>/dev/null || true
  python3 -c 'import json, sys; r = json.loads(sys.argv[1]); r["walMiB"] = float(sys.argv[2]); print(json.dumps(r))' \
    "$report" "$(cat "$work/wal-max")"
}

# creation_rows BINARY LABEL: durable creation on a fresh store, offered at RATE/s and at the
# peak; prints the two table rows.
creation_rows() {
  local fresh offered peak
  fresh=$(mktemp -d "$work/fresh-XXXX")
  start_taskdeck "$1" "$fresh"
  wait_quiet
  offered=$(creation_run "$RATE" --warmup-seconds "$WARMUP")
  wait_quiet
  peak=$(creation_run 0)
  stop_taskdeck
  rm -rf "$fresh"
  for run in "offered $RATE/s (open loop, after ${WARMUP} s of it unmeasured)|$offered" "peak (closed loop)|$peak"; do
    local r=${run#*|}
    echo "| $2${run%%|*} | $(field "$r" rps) | $(field "$r" p50us) µs | $(field "$r" p99us) µs | $(field "$r" p999us) µs | $(field "$r" maxus) µs | $(field "$r" over10ms) | $(field "$r" maxGapus) µs | $(field "$r" gapsOver10ms) | $(field "$r" walMiB) MiB |"
  done
}

cat <<MD

Durable creation on a fresh store (\`taskdeck-bench rate\`, 50 connections, tools/call echo → CreateTaskResult, committed before the answer)${AB:+, the two builds alternated over 3 rounds}:

| load | answers/s | p50 | p99 | p99.9 | max | answers over 10 ms | longest time without an answer | gaps over 10 ms | largest WAL |
|---|---|---|---|---|---|---|---|---|---|
MD
if [ -z "$AB" ]; then
  creation_rows "$THIS" ""
else
  for round in 1 2 3; do
    creation_rows "$AB" "other, round $round: "
    creation_rows "$THIS" "this, round $round: "
  done
fi
