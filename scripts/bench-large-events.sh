#!/usr/bin/env bash
# Benchmarks what a large call costs Taskdeck to judge (BENCHMARKS.md, "Large calls"): a Claude
# Code `PreToolUse` `Write` of a multi-line file, which a deny rule refuses, posted to
# `/v1/hooks/claude-code` as `taskdeck hook` posts it, at 16, 64, 256 and 3584 KiB (the most a /v1 body takes is 4 MiB). The file's lines
# are code as agents write it: comments with an apostrophe, URLs with a password, assignments
# of secret-named values, long paths; every line is read by the masking of credentials before
# the decision is recorded. Prints the median and max answer time of RUNS posts per size, for
# the same content on one line, and for what a misbehaving agent can send (one word of
# token-like path names, a command's option over and over, key headers that never end). Each
# binary runs against a fresh data dir of its own. Each size and shape is posted twice over: under a
# rule that denies the call, and under one that allows it, after which every string of the call is
# also read for names of Taskdeck's own files (policy/own_files.rs), which a deny skips.
# Then, for each binary, what large calls cost everyone else: while 0 to 3 agents post 3.9 MiB
# `Bash` commands a rule denies, back to back, one client reads `GET /v1/tasks?limit=1` and
# posts a small `PreToolUse` the rule denies, every 20 ms for 8 s; prints p50/p99/max of each
# and the large posts' median answer time; first, 5 such calls sent alone, 1 s apart.
# Usage: scripts/bench-large-events.sh [runs, default 20] [taskdeck binaries...]
#   default binary: the release `taskdeck` (built first).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-20}
shift || true
. scripts/lib/bench-server.sh
bench_binaries "$@"
bench_workdir

python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
event = json.load(open("tests/fixtures/hooks/claude-code/PreToolUse.json"))
event["tool_name"] = "Write"
lines = []
n = 0
while sum(map(len, lines)) < 3584 * 1024:
    lines.append(f"    # don't retry {n}: see https://ops:pw{n}@db.example/{n}?page={n}\n")
    lines.append(f"    token_{n}=ab'cd{n} ./build/out/{n}/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p\n")
    lines.append(f"    return fetch(url_{n}, timeout={n % 60}, headers={{'X-Request': '{n}'}})\n")
    n += 1
text = "".join(lines)
# What a misbehaving agent can send: one word of token-like path names, a command's option
# over and over, key headers that never end.
adversarial = {
    "path-tokens": "/ghp_x" * 700000,
    "options": "curl -u a:b " * 350000,
    "key-headers": "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n" * 120000,
}
for kib in (16, 64, 256, 3584):
    part = text[: kib * 1024]
    shapes = [("lines", part), ("one-line", part.replace("\n", " "))]
    shapes += [(name, t[: kib * 1024]) for name, t in adversarial.items()]
    for shape, content in shapes:
        event["tool_input"] = {"file_path": "/etc/cron.d/job.py", "content": content}
        json.dump(event, open(f"{work}/{kib}-{shape}.json", "w"))
PY

# Starts BIN on a fresh data dir with the one policy rule RULE (JSON); sets server, port and a
# claude-code token.
start() {
  bench_serve "$1" "{\"rules\": [$2]}"
  token=$("$1" token create claude-code --data-dir "$work/data" 2>/dev/null)
}

for bin in "${BINS[@]}"; do
 for decision in deny allow; do
  start "$bin" '{"principal": "*", "server": "claude-code", "tool": "Write",
                 "arguments": {"file_path": "/etc/*"}, "decision": "'"$decision"'"}'
  echo "$bin: a rule that ${decision}s"
  for kib in 16 64 256 3584; do
    for shape in lines one-line path-tokens options key-headers; do
      times=()
      for _ in $(seq "$RUNS"); do
        t=$(curl -s -o "$work/out.json" -w '%{time_total}' -X POST \
          -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
          --data-binary "@$work/$kib-$shape.json" "http://127.0.0.1:$port/v1/hooks/claude-code")
        grep -q '"permissionDecision":"'"$decision"'"' "$work/out.json" || { echo "no $decision: $(head -c 300 "$work/out.json")"; exit 1; }
        times+=("$t")
      done
      printf '%s\n' "${times[@]}" | sort -n | awk -v kib="$kib" -v shape="$shape" '
        { v[NR] = $1 * 1000 } END { printf "  %3d KiB %-11s median %8.1f ms  max %8.1f ms\n", kib, shape, v[int((NR + 1) / 2)], v[NR] }'
    done
  done
  bench_stop
 done
done

cat > "$work/crowd.py" <<'PY'
import http.client, json, sys, threading, time
port, token, agents = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
event = json.load(open("tests/fixtures/hooks/claude-code/PreToolUse.json"))
event["tool_name"] = "Bash"
event["tool_input"] = {"command": "rm -rf build/ " * (int(3.9 * 1024 * 1024) // 14)}
body, stop, large = json.dumps(event).encode(), False, []
headers = {"Authorization": f"Bearer {token}"}
def agent():
    c = http.client.HTTPConnection("127.0.0.1", port)
    while not stop:
        t = time.time()
        c.request("POST", "/v1/hooks/claude-code", body, {**headers, "Content-Type": "application/json"})
        r = c.getresponse(); out = r.read()
        assert b'"deny"' in out, out[:300]
        large.append(time.time() - t)
if agents == 0:
    # One large call at a time, 1 s apart: what an agent that sends one waits.
    alone = []
    for _ in range(5):
        c = http.client.HTTPConnection("127.0.0.1", port)
        t = time.time()
        c.request("POST", "/v1/hooks/claude-code", body, {**headers, "Content-Type": "application/json"})
        r = c.getresponse(); assert b'"deny"' in r.read()
        alone.append(time.time() - t)
        time.sleep(1)
    alone.sort()
    print(f"  one 3.9 MiB call alone: median {alone[2] * 1000:.1f} ms  max {alone[-1] * 1000:.1f} ms (n=5)")
threads = [threading.Thread(target=agent) for _ in range(agents)]
for t in threads: t.start()
time.sleep(0.5)
c, end = http.client.HTTPConnection("127.0.0.1", port), time.time() + 8
small = {"GET /v1/tasks": [], "small hook deny": []}
event["tool_input"] = {"command": "rm -rf /tmp/x"}
small_hook = json.dumps(event).encode()
while time.time() < end:
    t = time.time()
    c.request("GET", "/v1/tasks?limit=1", headers=headers)
    r = c.getresponse(); r.read(); assert r.status == 200
    small["GET /v1/tasks"].append(time.time() - t)
    t = time.time()
    c.request("POST", "/v1/hooks/claude-code", small_hook, {**headers, "Content-Type": "application/json"})
    r = c.getresponse(); assert b'"deny"' in r.read()
    small["small hook deny"].append(time.time() - t)
    time.sleep(0.02)
stop = True
for t in threads: t.join()
large.sort()
ms = lambda v: f"{v * 1000:7.1f}"
print(f"  {agents} agents posting" + (f" (their posts' median {ms(large[len(large) // 2]).strip()} ms, n={len(large)})" if large else ""))
for name, v in small.items():
    v.sort()
    print(f"    {name:16} p50 {ms(v[len(v) // 2])} ms  p99 {ms(v[int(len(v) * 0.99)])} ms  max {ms(v[-1])} ms (n={len(v)})")
PY
for bin in "${BINS[@]}"; do
  start "$bin" '{"principal": "*", "server": "claude-code", "tool": "Bash",
                 "arguments": {"command": "rm *"}, "decision": "deny"}'
  echo "$bin: a small read while agents post 3.9 MiB calls"
  for agents in 0 1 2 3; do python3 "$work/crowd.py" "$port" "$token" "$agents"; done
  bench_stop
done
