#!/usr/bin/env bash
# Benchmarks start, first paint, idle and memory with large stores (issue #17) on the release
# build; prints a markdown report (BENCHMARKS.md, "Fleet workloads").
#
# A. Cold start: `taskdeck serve` started on a fresh copy of the 1,000,000-task store (with its
#    1,000 working slow_compute and 1,000 input_required confirm_delete tasks, which every start
#    recovers) → the first 2026-07-28 `tasks/get` answered. The probe connects to the port
#    (given with --port) every 0.2 ms until it accepts, then sends the request; the time runs
#    from just before the process is spawned. RUNS starts with the page cache warm (the copy was
#    just written), and RUNS with it cold (`sync; echo 3 > /proc/sys/vm/drop_caches` after the
#    copy; needs root, skipped otherwise). The server's own log gives the time of the start
#    check and of the recovery.
# B. First paint: tests/browser/bench.mjs --only firstpaint on a copy of the same store
#    (navigation → first task row rendered, RUNS fresh tabs of headless Chromium).
# D. RSS: VmRSS (and smaps_rollup's anonymous part) of the server 5 s after each warm start of A
#    (2,000 live tasks), and of a start on the same store with no live task (they are settled
#    first: a start fails the working ones, and their copy is kept for this).
# C. Idle: a server with 10,000 stored tasks (seeded into a temporary store) and the UI open in
#    headless Chromium with its event stream connected; over IDLE_SECONDS (default 60) with
#    nothing happening: the server's CPU time (utime + stime, all threads), its context switches
#    (voluntary + nonvoluntary, summed over /proc/PID/task/*) and, per thread, how many times
#    it switched (= woke up, roughly).
#
# Usage: scripts/bench-start.sh [RUNS, default 5] [parts, default "A B C D"]
# Environment: FLEET_STORES (default /tmp/taskdeck-fleet; FLEET_STORES/1000000 must exist:
# `scripts/bench-fleet.sh 1 1000000` seeds it), WORK (default a temp dir; needs ~2.5 GB free),
# IDLE_SECONDS (default 60), TASKDECK_BIN (default target/release/taskdeck), NO_BUILD=1 to use target/release as it is, NO_DROP=1 to skip the
# cold-cache runs (they empty the whole machine's page cache).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5}
PARTS=${2:-A B C D}
STORES=${FLEET_STORES:-/tmp/taskdeck-fleet}
BASE=$STORES/1000000
IDLE_SECONDS=${IDLE_SECONDS:-60}
[ -f "$BASE/taskdeck.sqlite3" ] || { echo "bench-start: no store at $BASE (run scripts/bench-fleet.sh 1 1000000)" >&2; exit 1; }
[ "${NO_BUILD:-}" = 1 ] || cargo build --release --bins -q
BIN=${TASKDECK_BIN:-$PWD/target/release/taskdeck}
LOAD=$PWD/target/release/taskdeck-bench
work=${WORK:-$(mktemp -d)}
mkdir -p "$work"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -n "${WORK:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
part() { [[ " $PARTS " == *" $1 "* ]]; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
can_drop() { [ "${NO_DROP:-}" != 1 ] && [ -w /proc/sys/vm/drop_caches ]; }

# The store's settled copy (no live task): made once by a start that fails/settles them.
settled=$work/settled-1m

cat <<MD
Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -r); $(rustc --version).
Command: \`scripts/bench-start.sh $RUNS "$PARTS"\` ($(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src-tauri ui || echo ' + uncommitted changes')), load average $(loadavg) at the start.
MD

# start_probe MODE DIR RUNS LABEL: prints one JSON line per start of $BIN on a fresh copy of DIR:
# {"ms": first tasks/get answered, "checkMs", "recovered", "rssMiB", "anonMiB", "load"}.
# MODE warm|cold. With STAY_DIR set, the last copy is kept there (stopped cleanly).
start_probe() {
  python3 - "$BIN" "$1" "$2" "$3" "$work" "${STAY_DIR:-}" "$4" <<'PY'
import json, os, re, shutil, signal, socket, subprocess, sys, time
binary, mode, base, runs, work, stay, label = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6], sys.argv[7]
cfg = os.path.join(work, "cfg")
run_dir = os.path.join(work, "run")
def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p
# A finished task of the store, read before anything is copied.
import sqlite3
db = sqlite3.connect(f"file:{base}/taskdeck.sqlite3?mode=ro", uri=True)
task_id = db.execute("SELECT task_id FROM tasks WHERE status = 'completed' LIMIT 1").fetchone()[0]
db.close()
def request(token):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"taskId": task_id, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "bench-start", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}}}).encode()
    head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\nAuthorization: Bearer {token}\r\n"
            f"Mcp-Protocol-Version: 2026-07-28\r\nMcp-Method: tasks/get\r\nMcp-Name: {task_id}\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    return head + body
def smaps(pid):
    out = {}
    for line in open(f"/proc/{pid}/smaps_rollup"):
        parts = line.split()
        if len(parts) >= 3 and parts[2] == "kB":
            out[parts[0].rstrip(":")] = int(parts[1])
    return out
for i in range(runs):
    shutil.rmtree(run_dir, ignore_errors=True)
    shutil.copytree(base, run_dir)
    for f in ("taskdeck.port",):
        try: os.remove(os.path.join(run_dir, f))
        except FileNotFoundError: pass
    if mode == "cold":
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f: f.write("3\n")
    token_file = os.path.join(cfg, "admin-token")
    token = open(token_file).read().strip() if os.path.exists(token_file) else None
    port = free_port()
    log = open(os.path.join(work, f"serve-{label}-{i}.log"), "w")
    load = open("/proc/loadavg").read().split()[0]
    t0 = time.monotonic()
    p = subprocess.Popen([binary, "serve", "--port", str(port), "--data-dir", run_dir, "--config-dir", cfg,
                          "--conformance-fixtures"], stdout=log, stderr=subprocess.STDOUT)
    answered = None
    while answered is None and time.monotonic() - t0 < 120:
        if p.poll() is not None:
            sys.exit(f"serve exited: {open(log.name).read()}")
        if token is None:  # the first start of a new config dir writes the token
            token = open(token_file).read().strip() if os.path.exists(token_file) else None
            if token is None:
                time.sleep(0.001); continue
        s = socket.socket()
        try:
            s.connect(("127.0.0.1", port))
        except ConnectionRefusedError:
            s.close(); time.sleep(0.0002); continue
        s.sendall(request(token))
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk: break
            data += chunk
        s.close()
        if data.startswith(b"HTTP/1.1 200") and b'"resultType":"complete"' in data:
            answered = time.monotonic() - t0
        else:
            sys.exit(f"unexpected answer: {data[:300]!r}")
    time.sleep(5)
    mem = smaps(p.pid)
    p.send_signal(signal.SIGTERM); p.wait()
    text = open(log.name).read()
    check = re.search(r"store checked bytes=\d+ ms=(\d+)", text)
    rec = re.search(r"resumed=(\d+) failed=(\d+)", text)
    rec_ms = re.search(r"recovered tasks.*? ms=(\d+)|ms=(\d+).*recovered tasks", text)
    print(json.dumps({"ms": round(answered * 1000, 1), "checkMs": int(check.group(1)) if check else None,
                      "recovered": f"{rec.group(1)} resumed, {rec.group(2)} failed" if rec else "none",
                      "recoveryMs": next((int(g) for g in rec_ms.groups() if g), None) if rec_ms else None,
                      "rssMiB": round(mem["Rss"] / 1024, 1), "anonMiB": round(mem.get("Anonymous", 0) / 1024, 1),
                      "load": load}), flush=True)
if stay:
    shutil.rmtree(stay, ignore_errors=True)
    shutil.move(run_dir, stay)
else:
    shutil.rmtree(run_dir, ignore_errors=True)
PY
}
# summary FILE KEY: "p50 X, min Y, max Z (every run: ...)" of KEY over FILE's JSON lines.
summary() {
  python3 - "$1" "$2" <<'PY'
import json, statistics, sys
v = [json.loads(l)[sys.argv[2]] for l in open(sys.argv[1]) if l.strip()]
v = [x for x in v if x is not None]
if not v: print("n/a"); sys.exit()
print(f"p50 {statistics.median(v):g}, min {min(v):g}, max {max(v):g} (every run: {', '.join(f'{x:g}' for x in v)})")
PY
}
first() { python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())[sys.argv[2]])' "$1" "$2"; }

if part A || part D; then
  echo
  echo "### A. Cold start, 1,000,000 stored tasks (D: RSS 5 s after each start)"
  echo
  STAY_DIR=$settled start_probe warm "$BASE" "$RUNS" warm >"$work/warm.jsonl"
  echo "- Store: $(du -sm "$BASE" | cut -f1) MiB ($BASE), $(first "$work/warm.jsonl" recovered) at each start."
  echo "- Page cache warm: process start → first tasks/get answered, ms: $(summary "$work/warm.jsonl" ms); start check ms: $(summary "$work/warm.jsonl" checkMs); recovery ms: $(summary "$work/warm.jsonl" recoveryMs)."
  if can_drop; then
    start_probe cold "$BASE" "$RUNS" cold >"$work/cold.jsonl"
    echo "- Page cache cold (dropped after each copy): ms: $(summary "$work/cold.jsonl" ms); start check ms: $(summary "$work/cold.jsonl" checkMs); recovery ms: $(summary "$work/cold.jsonl" recoveryMs)."
  else
    echo "- Page cache cold: not measured (NO_DROP=1 or /proc/sys/vm/drop_caches not writable)."
  fi
  # The settled copy: no live task left to recover.
  start_probe warm "$settled" "$RUNS" settled >"$work/settled.jsonl"
  echo "- No live task (the copy a previous start settled), page cache warm: ms: $(summary "$work/settled.jsonl" ms)."
  echo "- D. RSS 5 s after start, MiB: after recovering the live tasks $(summary "$work/warm.jsonl" rssMiB) (anonymous $(summary "$work/warm.jsonl" anonMiB)); no live task $(summary "$work/settled.jsonl" rssMiB) (anonymous $(summary "$work/settled.jsonl" anonMiB))."
  echo "- Load average at each start: warm $(python3 -c 'import json,sys; print(", ".join(json.loads(l)["load"] for l in open(sys.argv[1])))' "$work/warm.jsonl")."
fi

# serve_on DIR NAME: starts $BIN on the store in DIR (config in $work/cfg); sets td, port,
# token, url. Waits for the banner.
serve_on() {
  local out="$work/serve-$2.log"
  port=$(free_port)
  "$BIN" serve --port "$port" --data-dir "$1" --config-dir "$work/cfg" --conformance-fixtures >"$out" 2>&1 &
  td=$!; pids+=("$td")
  for _ in $(seq 1200); do
    grep -q "running headless" "$out" 2>/dev/null && break
    kill -0 "$td" 2>/dev/null || { echo "bench-start: serve exited: $(cat "$out")" >&2; exit 1; }
    sleep 0.05
  done
  token=$(cat "$work/cfg/admin-token")
  url="http://127.0.0.1:$port/mcp"
}
stop_server() { kill "$td"; wait "$td" 2>/dev/null || true; }
mem_line() { # PID: "RSS X MiB (anonymous Y MiB), N threads"
  python3 - "$1" <<'PY'
import os, sys
pid = sys.argv[1]
m = {l.split()[0].rstrip(":"): int(l.split()[1]) for l in open(f"/proc/{pid}/smaps_rollup") if l.split()[-1] == "kB"}
print(f"RSS {m['Rss'] / 1024:.1f} MiB (anonymous {m.get('Anonymous', 0) / 1024:.1f} MiB), {len(os.listdir(f'/proc/{pid}/task'))} threads")
PY
}
rss_kib() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }

if part D; then
  echo
  echo "### D. RSS, 1,000,000 stored tasks, 2,000 live tasks"
  echo
  [ -d "$settled" ] || { echo "bench-start: part D needs part A's settled copy" >&2; exit 1; }
  rm -rf "$work/d" && cp -r "$settled" "$work/d"
  serve_on "$work/d" d
  sleep 5
  echo "- After start (no live task), 5 s: $(mem_line "$td")."
  r0=$(rss_kib "$td")
  "$LOAD" seed --url "$url" --token "$token" --count 1000 --tool slow_compute --arguments '{"seconds":3600,"label":"fleet"}' >/dev/null
  "$LOAD" seed --url "$url" --token "$token" --count 1000 --tool confirm_delete --arguments '{"filename":"fleet.txt"}' >/dev/null
  sleep 5
  r1=$(rss_kib "$td")
  echo "- With 1,000 working slow_compute and 1,000 input_required confirm_delete tasks, 5 s later: $(mem_line "$td"); $(( (r1 - r0) / 2000 )) KiB per live task."
  stop_server
  rm -rf "$work/d"
fi

if part B; then
  echo
  echo "### B. UI first paint, 1,000,000 stored tasks"
  echo
  # bench.mjs copies the store it is given for its runs: it gets the settled copy (moved, not
  # copied again: 1.2 GB each).
  rm -rf "$work/ui" && mkdir -p "$work/ui" && cp -r "$work/cfg" "$work/ui/cfg"
  if [ -d "$settled" ]; then mv "$settled" "$work/ui/data"; else cp -r "$BASE" "$work/ui/data"; fi
  (cd tests/browser && TASKDECK_BIN=$BIN node bench.mjs --tasks 1000000 --data "$work/ui" --only firstpaint --runs "$RUNS" 2>"$work/ui-bench.log") | sed 's/^/    /'
  mv "$work/ui/data" "$settled"
  rm -rf "$work/ui"
fi

if part C; then
  echo
  echo "### C. Idle, 10,000 stored tasks, the UI open"
  echo
  mkdir -p "$work/idle"
  serve_on "$work/idle" idle
  "$LOAD" seed --url "$url" --token "$token" --count 10000 >/dev/null
  source scripts/lib/search-index.sh
  wait_for_index "$work/idle" 300
  echo "- Load average before: $(loadavg)."
  (cd tests/browser && node --input-type=module - "http://127.0.0.1:$port" "$token" "$td" "$IDLE_SECONDS" <<'JS'
import fs from 'node:fs';
import { chromium } from 'playwright-core';
const [base, token, pid, seconds] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
await page.goto(`${base}/#token=${encodeURIComponent(token)}`);
await page.locator('#conn[data-state="open"]').waitFor();
await page.locator('#task-list .row').first().waitFor();
await new Promise((r) => setTimeout(r, 5000));
const threads = () => Object.fromEntries(fs.readdirSync(`/proc/${pid}/task`).map((tid) => {
  const st = fs.readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
  const n = (k) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(st)[1]);
  return [tid, { name: fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim(), switches: n('voluntary_ctxt_switches') + n('nonvoluntary_ctxt_switches') }];
}));
const ticks = () => { const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return Number(f[11]) + Number(f[12]); };
const a = threads(); const ta = ticks(); const t0 = Date.now();
await new Promise((r) => setTimeout(r, Number(seconds) * 1000));
const b = threads(); const tb = ticks(); const secs = (Date.now() - t0) / 1000;
await browser.close();
const per = Object.entries(b).map(([tid, x]) => ({ tid, name: x.name, woke: x.switches - (a[tid] ? a[tid].switches : 0) })).filter((x) => x.woke > 0);
const total = per.reduce((n, x) => n + x.woke, 0);
console.log(`- Over ${secs.toFixed(1)} s with nothing happening: server CPU ${((tb - ta) * 10).toFixed(0)} ms (${((tb - ta) / secs).toFixed(2)}% of a core), ${total} context switches (${(total / secs).toFixed(2)}/s).`);
console.log(`- Threads that switched: ${per.length ? per.map((x) => `${x.name} (${x.tid}): ${x.woke}`).join(', ') : 'none'}; ${Object.keys(b).length} threads in all.`);
JS
  )
  echo "- Load average after: $(loadavg)."
  stop_server
  rm -rf "$work/idle"
fi
