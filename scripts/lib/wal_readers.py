"""Readers and a WAL watcher for scripts/bench-wal-readers.sh.

Usage: wal_readers.py BASE_URL TOKEN DATA_DIR SECONDS KINDS
KINDS is a comma-separated list of reader threads: `list` (GET /v1/tasks?limit=200 in a loop),
`search` (GET /v1/tasks?q=WORD&limit=50 back to back) and `events` (one GET /v1/events stream).
Meanwhile the size of DATA_DIR/taskdeck.sqlite3-wal is sampled every 100 ms. Prints one JSON
line: per reader kind n, p50/p99/max in ms; errors; the WAL's largest size in MiB, the seconds
it spent over 64 MiB in a row at most, and whether it was ever truncated (a sample smaller than
the one before).
"""
import http.client, json, os, random, sys, threading, time, urllib.request

base, token, data, secs, kinds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5]
headers = {"Authorization": "Bearer " + token}
stop_at = time.time() + secs
took = {"list": [], "search": []}
errors = []


def get(path):
    started = time.time()
    try:
        with urllib.request.urlopen(urllib.request.Request(base + path, headers=headers), timeout=60) as r:
            r.read()
    except Exception as e:  # every failure is reported, none is retried
        errors.append(f"{path}: {e}")
        return None
    return time.time() - started


def reader(kind):
    words = ["echo", "hello", "needle", "benchmark", "note"]
    while time.time() < stop_at:
        path = "/v1/tasks?limit=200" if kind == "list" else f"/v1/tasks?q={random.choice(words)}&limit=50"
        d = get(path)
        if d is not None:
            took[kind].append(d)


events = {"lines": 0}


def follow_events():
    try:
        c = http.client.HTTPConnection(base.split("//")[1], timeout=secs + 60)
        c.request("GET", "/v1/events", headers=headers)
        r = c.getresponse()
        while time.time() < stop_at and r.fp.readline():
            events["lines"] += 1
    except Exception as e:
        errors.append(f"events: {e}")


threads = [threading.Thread(target=follow_events if k == "events" else reader, args=() if k == "events" else (k,), daemon=True)
           for k in kinds.split(",") if k]
for t in threads:
    t.start()
wal = os.path.join(data, "taskdeck.sqlite3-wal")
largest = last = 0
run = longest = 0
truncated = False
while time.time() < stop_at:
    size = os.stat(wal).st_size if os.path.exists(wal) else 0
    truncated |= size < last
    largest, last = max(largest, size), size
    run = run + 1 if size > 64 * 2**20 else 0
    longest = max(longest, run)
    time.sleep(0.1)


def summary(a):
    if not a:
        return {}
    a = sorted(a)
    return {"n": len(a), "p50_ms": round(a[len(a) // 2] * 1000, 1), "p99_ms": round(a[int(len(a) * .99)] * 1000, 1), "max_ms": round(a[-1] * 1000, 1)}


print(json.dumps({"list": summary(took["list"]), "search": summary(took["search"]), "events_lines": events["lines"],
                  "errors": len(errors), "first_errors": errors[:3], "wal_max_MiB": round(largest / 2**20, 1),
                  "wal_over_64MiB_longest_s": longest / 10, "wal_truncated": truncated}))
