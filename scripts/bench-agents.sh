#!/usr/bin/env bash
# Benchmarks a fleet of simulated agents against one release `taskdeck serve` (issue #17, "a
# fleet" and "soak"); prints a markdown report (BENCHMARKS.md, "Fleet workloads"). Same setup as
# bench.sh: server on a fresh store with --conformance-fixtures (the search indexer on, as by
# default), pinned to core 0 with one tokio worker; the load on core 1.
#
# The load is `taskdeck-bench fleet` (src-tauri/src/bin/bench/fleet.rs; `taskdeck-bench fleet
# --help`): AGENTS agents on 32 shared connections, each creating a task (tools/call of echo,
# slow_compute 5 s, confirm_delete in turn), polling it with tasks/get at the pollIntervalMs
# the server gave (1000 ms by default), answering its input with tasks/update, then creating
# the next; STREAMS `GET /v1/events` streams (admin token) read continuously; in fleet mode also
# 10 jobs reporting once a second over HTTP, like `taskdeck run` (measured), and RUNS real
# `taskdeck run -- sh -c 'for i in $(seq 100); do echo $i/100; sleep 0.5; done'` processes,
# each started again when it ends (not measured: load). It reports p50/p99 per call kind and
# the server's CPU share (utime + stime of all its threads over wall time, % of one core; also
# by thread name: taskdeck-writer, tokio-rt-worker, taskdeck-index...), its CPU per call, RSS
# and open files (/proc/PID/fd), the machine's steal time over the run (the host running other
# guests: a slow run with steal is the host, not the build), with the load average before and
# after.
#
# Usage: scripts/bench-agents.sh fleet [seconds, default 60] [agents, default 1000]
#          [streams, default 20] [taskdeck run processes, default 10]
#        scripts/bench-agents.sh soak [seconds, default 600] [agents, default 500]
#          [streams, default 50]: no jobs; latencies, RSS and open files per minute, and the
#          first minute against the last.
#        scripts/bench-agents.sh --ab OTHER_BINARY fleet|soak [...]: the same run on
#          OTHER_BINARY (e.g. the release build before a change) and on this build, alternated
#          over 2 rounds each on fresh stores: a before/after comparison inside one run.
# Environment: NO_BUILD=1 to use target/release as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
AB=""
if [ "${1:-}" = --ab ]; then AB=$(realpath "$2"); shift 2; fi
MODE=${1:?usage: scripts/bench-agents.sh [--ab OTHER] fleet|soak [seconds] [agents] [streams] [runs]}
case "$MODE" in
  fleet) SECS=${2:-60} AGENTS=${3:-1000} STREAMS=${4:-20} RUNS=${5:-10} JOBS=10 WINDOW=0 ;;
  soak) SECS=${2:-600} AGENTS=${3:-500} STREAMS=${4:-50} RUNS=0 JOBS=0 WINDOW=60 ;;
  *) echo "bench-agents: unknown mode $MODE (fleet or soak)" >&2; exit 2 ;;
esac
[ "${NO_BUILD:-}" = 1 ] || cargo build --release --bins -q
THIS=$PWD/target/release/taskdeck
LOAD=$PWD/target/release/taskdeck-bench
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null; rm -rf "$work"' EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start_taskdeck BINARY NAME: a fresh store in $work/NAME; sets td, port, token.
start_taskdeck() {
  local out="$work/$2.out"
  port=$(free_port)
  TOKIO_WORKER_THREADS=1 taskset -c 0 "$1" serve --port "$port" --data-dir "$work/$2" \
    --config-dir "$work/$2-cfg" --conformance-fixtures >"$out" 2>&1 &
  td=$!; pids+=("$td")
  for _ in $(seq 400); do grep -q "running headless" "$out" 2>/dev/null && break; sleep 0.05; done
  grep -q "running headless" "$out" || { echo "bench-agents: taskdeck did not start: $(cat "$out")" >&2; exit 1; }
  token=$(cat "$work/$2-cfg/admin-token")
}

# run_once BINARY NAME: one run on a fresh store; writes the fleet's JSON line to $work/NAME.json.
run_once() {
  start_taskdeck "$1" "$2"
  local runners=() i
  for ((i = 0; i < RUNS; i++)); do
    # timeout ends the loop and the `taskdeck run` in it (its process group) after the run.
    timeout -s TERM "$SECS" taskset -c 1 bash -c "while :; do \"$1\" run --port $port --token $token --name 'fleet run $i' -- sh -c 'for i in \$(seq 100); do echo \$i/100; sleep 0.5; done' >/dev/null 2>&1; done" &
    runners+=("$!")
  done
  pids+=("${runners[@]}")
  loadavg_before=$(cut -d' ' -f1-3 /proc/loadavg)
  taskset -c 1 "$LOAD" fleet --url "http://127.0.0.1:$port/mcp" --token "$token" --agents "$AGENTS" \
    --streams "$STREAMS" --jobs "$JOBS" --seconds "$SECS" --window-seconds "$WINDOW" \
    --server-pid "$td" >"$work/$2.json"
  loadavg_after=$(cut -d' ' -f1-3 /proc/loadavg)
  echo "{\"loadBefore\": \"$loadavg_before\", \"loadAfter\": \"$loadavg_after\"}" >"$work/$2.load"
  # (`wait` without ids would wait for the server too.)
  if [ "$RUNS" -gt 0 ]; then wait "${runners[@]}" 2>/dev/null || true; fi
  kill "$td"; wait "$td" 2>/dev/null || true
}

cat <<MD
Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -r); $(rustc --version).
Command: \`scripts/bench-agents.sh ${AB:+--ab $AB }$MODE $SECS $AGENTS $STREAMS$([ "$MODE" = fleet ] && echo " $RUNS")\` ($(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD)). Server on core 0 (TOKIO_WORKER_THREADS=1, fresh store, search indexer on), load on core 1: $AGENTS agents on 32 connections, $STREAMS event streams, $JOBS measured reporting jobs, $RUNS \`taskdeck run\` processes, $SECS s.

MD
names=()
if [ -n "$AB" ]; then
  for round in 1 2; do
    run_once "$AB" "other-$round"; names+=("other-$round")
    run_once "$THIS" "this-$round"; names+=("this-$round")
  done
else
  run_once "$THIS" this; names+=(this)
fi

python3 - "$MODE" "$work" "${names[@]}" <<'PY'
import json, sys
mode, work, names = sys.argv[1], sys.argv[2], sys.argv[3:]
runs = {n: json.load(open(f"{work}/{n}.json")) for n in names}
loads = {n: json.load(open(f"{work}/{n}.load")) for n in names}
kinds = ["create", "tasks/get", "tasks/update", "job start", "job report"]
ms = lambda us: f"{us / 1000:.2f}"
# The server's CPU by thread name (% of one core), busiest first; threads under 0.1% left out.
def by_thread(s):
    t = sorted(s.get("cpuPercentByThread", {}).items(), key=lambda kv: -kv[1])
    return ", ".join(f"{name} {pct}" for name, pct in t if pct >= 0.1) or "-"
# The machine's steal time (% of one core, all CPUs summed), "-" where not reported.
def steal(s):
    v = s.get("hostStealPercent")
    return "-" if v is None else f"{v}%"
if mode == "fleet":
    print("| run | calls/s | create p50 / p99 ms | tasks/get p50 / p99 ms | tasks/update p50 / p99 ms | job start p50 / p99 ms | job report p50 / p99 ms | server CPU (% of one core) | host steal (% of one core) | server CPU per call | RSS start → end (max) MiB | open files start → end | generator CPU | load average before → after |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n, r in runs.items():
        c, s = r["calls"], r["server"]
        cells = [f"{ms(c[k]['p50us'])} / {ms(c[k]['p99us'])}" for k in kinds]
        total = sum(c[k]["rps"] for k in kinds)
        print(f"| {n} | {total:.0f} | " + " | ".join(cells) + f" | {s['cpuPercent']}% | {steal(s)} | {s['cpuUsPerCall']} µs | {s['rssMiB'][0]} → {s['rssMiB'][1]} ({s['rssMiB'][2]}) | {s['fds'][0]} → {s['fds'][1]} | {r['generatorCpuPercent']}% | {loads[n]['loadBefore']} → {loads[n]['loadAfter']} |")
    print()
    for n, r in runs.items():
        c, t, e = r["calls"], r["tasks"], r["streamEvents"]
        counts = ", ".join(f"{k} {c[k]['count']}" for k in kinds)
        print(f"- {n}: server CPU by thread (% of one core): {by_thread(r['server'])}; calls answered: {counts} (errors: {r['errors']}); tasks created {t['created']}, completed {t['completed']}, inputs answered {t['inputsAnswered']}; event streams: {e['events']} change events ({e['bytes'] / 2**20:.0f} MiB), {e['resyncs']} resyncs, change → stream delay p50 {e['delayP50ms']} ms, p99 {e['delayP99ms']} ms, max {e['delayMaxms']} ms.")
else:
    print("| run | minute | calls/s | create p99 ms | tasks/get p50 / p99 ms | tasks/update p99 ms | server CPU | host steal | RSS at the end of the minute (max) MiB | open files at the end | change → stream delay p99 ms | server CPU by thread |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n, r in runs.items():
        for w in r["windows"]:
            c, s = w["calls"], w["server"]
            total = sum(c[k]["rps"] for k in kinds)
            print(f"| {n} | {w['fromS'] // 60 + 1} | {total:.0f} | {ms(c['create']['p99us'])} | {ms(c['tasks/get']['p50us'])} / {ms(c['tasks/get']['p99us'])} | {ms(c['tasks/update']['p99us'])} | {s['cpuPercent']}% | {steal(s)} | {s['rssMiB'][1]} ({s['rssMiB'][2]}) | {s['fds'][1]} | {w['delayP99ms']} | {by_thread(s)} |")
    print()
    for n, r in runs.items():
        first, last = r["windows"][0], r["windows"][-1]
        ratio = lambda a, b: f"{b / a:.2f}" if a else "-"
        p99 = lambda w, k: w["calls"][k]["p99us"]
        print(f"- {n}: last minute / first minute: RSS {ratio(first['server']['rssMiB'][1], last['server']['rssMiB'][1])}x, "
              + ", ".join(f"{k} p99 {ratio(p99(first, k), p99(last, k))}x" for k in ["create", "tasks/get", "tasks/update"])
              + f"; open files {first['server']['fds'][1]} → {last['server']['fds'][1]}; whole run: {r['tasks']['created']} tasks created, errors {r['errors']}, "
              + f"server CPU {r['server']['cpuPercent']}%, host steal {steal(r['server'])}, RSS {r['server']['rssMiB'][0]} → {r['server']['rssMiB'][1]} MiB; load average {loads[n]['loadBefore']} → {loads[n]['loadAfter']}.")
PY
