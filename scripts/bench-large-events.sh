#!/usr/bin/env bash
# Benchmarks what a large call costs Taskdeck to judge (BENCHMARKS.md, "Large calls"): a Claude
# Code `PreToolUse` `Write` of a multi-line file, which a deny rule refuses, posted to
# `/v1/hooks/claude-code` as `taskdeck hook` posts it, at 16, 64 and 256 KiB. The file's lines
# are code as agents write it: comments with an apostrophe, URLs with a password, assignments
# of secret-named values, long paths; every line is read by the masking of credentials before
# the decision is recorded. Prints the median and max answer time of RUNS posts per size, for
# the same content on one line, and for what a misbehaving agent can send (one word of
# token-like path names, a command's option over and over, key headers that never end). Each
# binary runs against a fresh data dir of its own.
# Usage: scripts/bench-large-events.sh [runs, default 20] [taskdeck binaries...]
#   default binary: the release `taskdeck` (built first).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-20}
shift || true
BINS=("$@")
if [ ${#BINS[@]} -eq 0 ]; then
  flock /tmp/cargo.lock cargo build --release --bin taskdeck -q
  BINS=("$PWD/target/release/taskdeck")
fi
work=$(mktemp -d)
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
event = json.load(open("tests/fixtures/hooks/claude-code/PreToolUse.json"))
event["tool_name"] = "Write"
lines = []
n = 0
while sum(map(len, lines)) < 256 * 1024:
    lines.append(f"    # don't retry {n}: see https://ops:pw{n}@db.example/{n}?page={n}\n")
    lines.append(f"    token_{n}=ab'cd{n} ./build/out/{n}/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p\n")
    lines.append(f"    return fetch(url_{n}, timeout={n % 60}, headers={{'X-Request': '{n}'}})\n")
    n += 1
text = "".join(lines)
# What a misbehaving agent can send: one word of token-like path names, a command's option
# over and over, key headers that never end.
adversarial = {
    "path-tokens": "/ghp_x" * 50000,
    "options": "curl -u a:b " * 30000,
    "key-headers": "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n" * 10000,
}
for kib in (16, 64, 256):
    part = text[: kib * 1024]
    shapes = [("lines", part), ("one-line", part.replace("\n", " "))]
    shapes += [(name, t[: kib * 1024]) for name, t in adversarial.items()]
    for shape, content in shapes:
        event["tool_input"] = {"file_path": "/etc/cron.d/job.py", "content": content}
        json.dump(event, open(f"{work}/{kib}-{shape}.json", "w"))
PY

for bin in "${BINS[@]}"; do
  rm -rf "$work/data" "$work/cfg"
  mkdir -p "$work/cfg"
  cat > "$work/cfg/policy.json" <<'JSON'
{"rules": [{"principal": "*", "server": "claude-code", "tool": "Write",
            "arguments": {"file_path": "/etc/*"}, "decision": "deny"}]}
JSON
  "$bin" serve --port 0 --data-dir "$work/data" --config-dir "$work/cfg" > "$work/serve.log" 2>&1 &
  server=$!
  for _ in $(seq 600); do [ -s "$work/data/taskdeck.port" ] && break; sleep 0.05; done
  port=$(cat "$work/data/taskdeck.port")
  token=$("$bin" token create claude-code --data-dir "$work/data" 2>/dev/null)
  echo "$bin"
  for kib in 16 64 256; do
    for shape in lines one-line path-tokens options key-headers; do
      times=()
      for _ in $(seq "$RUNS"); do
        t=$(curl -s -o "$work/out.json" -w '%{time_total}' -X POST \
          -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
          --data-binary "@$work/$kib-$shape.json" "http://127.0.0.1:$port/v1/hooks/claude-code")
        grep -q '"permissionDecision":"deny"' "$work/out.json" || { echo "no deny: $(head -c 300 "$work/out.json")"; exit 1; }
        times+=("$t")
      done
      printf '%s\n' "${times[@]}" | sort -n | awk -v kib="$kib" -v shape="$shape" '
        { v[NR] = $1 * 1000 } END { printf "  %3d KiB %-11s median %8.1f ms  max %8.1f ms\n", kib, shape, v[int((NR + 1) / 2)], v[NR] }'
    done
  done
  kill "$server"; wait "$server" 2>/dev/null || true; server=""
done
