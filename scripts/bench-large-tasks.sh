#!/usr/bin/env bash
# Benchmarks what tasks with large arguments and results cost the answers that carry many tasks
# (BENCHMARKS.md, "Large tasks in lists and events"): 100 external jobs whose arguments hold a
# 64 KiB file and whose results hold another, as a gateway call that writes or reads a file
# does; then `GET /v1/tasks` pages of 50 (the window's first page) and 100 (the API's default),
# RUNS reads each, their bytes and median / max time; then the bytes one `/v1/events` stream
# receives while a job whose arguments hold 192 KiB is created and reports progress 20 times,
# and the same for `GET /v1/tasks/{taskId}` of one of the jobs (which stays whole). Each binary
# runs against a fresh data dir of its own.
# Usage: scripts/bench-large-tasks.sh [runs, default 20] [taskdeck binaries...]
#   default binary: the release `taskdeck` (built first).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-20}
shift || true
. scripts/lib/bench-server.sh
bench_binaries "$@"
bench_workdir

for bin in "${BINS[@]}"; do
  bench_serve "$bin"
  agent=$("$bin" token create agent1 --data-dir "$work/data" 2>/dev/null)
  echo "$bin"
  python3 - "$port" "$agent" "$(cat "$work/cfg/admin-token")" "$RUNS" <<'PY'
import http.client, json, sys, threading, time
port, agent, admin, runs = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
conn = http.client.HTTPConnection("127.0.0.1", port)

def call(method, path, body=None, token=agent):
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    conn.request(method, path, json.dumps(body).encode() if body is not None else None, headers)
    r = conn.getresponse()
    out = r.read()
    assert r.status < 300, (r.status, out[:300])
    return out

# Code as agents write it, 64 KiB.
lines, n = [], 0
while sum(map(len, lines)) < 64 * 1024:
    lines.append(f"    return fetch(url_{n}, timeout={n % 60}, headers={{'X-Request': '{n}'}})\n")
    n += 1
text = "".join(lines)[: 64 * 1024]
ids = []
for i in range(100):
    job = json.loads(call("POST", "/v1/jobs", {"external": {"name": f"write {i}", "path": f"src/m{i}.py", "content": text}}))
    ids.append(job["taskId"])
    call("POST", f"/v1/jobs/{job['taskId']}/report", {"result": {"content": [{"type": "text", "text": text}]}})

def timed(path):
    times, size = [], 0
    for _ in range(runs):
        t = time.perf_counter()
        size = len(call("GET", path, token=admin))
        times.append((time.perf_counter() - t) * 1000)
    times.sort()
    return size, times[(len(times) - 1) // 2], times[-1]

for path in ("/v1/tasks?limit=50", "/v1/tasks?limit=100", f"/v1/tasks/{ids[0]}"):
    size, median, worst = timed(path)
    print(f"  GET {path.replace(ids[0], '{taskId}'):24} {size / 1024:9.1f} KiB  median {median:7.1f} ms  max {worst:7.1f} ms")

received, ended = [0], threading.Event()
def reader():
    c = http.client.HTTPConnection("127.0.0.1", port)
    c.request("GET", "/v1/events", headers={"Authorization": f"Bearer {admin}", "Last-Event-ID": "999999999"})
    r = c.getresponse()
    while not ended.is_set():
        chunk = r.read1(65536)
        if not chunk:
            break
        received[0] += len(chunk)
threading.Thread(target=reader, daemon=True).start()
time.sleep(0.5)
job = json.loads(call("POST", "/v1/jobs", {"external": {"name": "big", "content": text * 3}}))
for i in range(20):
    call("POST", f"/v1/jobs/{job['taskId']}/report", {"progress": {"current": i + 1, "total": 20}})
    time.sleep(0.05)
time.sleep(1)
ended.set()
print(f"  /v1/events: created + 20 progress reports of a job with 192 KiB arguments: {received[0] / 1024:9.1f} KiB received")
PY
  bench_stop
done
