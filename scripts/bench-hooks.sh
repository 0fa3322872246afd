#!/usr/bin/env bash
# Benchmarks the agent hooks' fast path (issue #15): `taskdeck hook claude-code` run N times as
# a new process, as Claude Code runs it, with the PreToolUse fixture on stdin and an allow rule
# that matches it, against a running `taskdeck serve` (release build, default durability).
# Each run's wall time covers spawning the process, its start, reading stdin, the HTTP round
# trip and the policy decision, and its exit. Prints p50/p99/max (BENCHMARKS.md, "Hooks").
# Usage: scripts/bench-hooks.sh [runs, default 2000] [hook binaries...]
#   default binaries: the release `taskdeck-hook` and `taskdeck` (built first); pass others, e.g.
#   a desktop-feature build's, to compare their process start. The server is the first `taskdeck`
#   given (else the release one).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-2000}
shift || true
HOOKS=("$@")
if [ ${#HOOKS[@]} -eq 0 ]; then
  flock /tmp/cargo.lock cargo build --release --bin taskdeck --bin taskdeck-hook -q
  HOOKS=("$PWD/target/release/taskdeck-hook" "$PWD/target/release/taskdeck")
fi
BIN=$PWD/target/release/taskdeck
for h in "${HOOKS[@]}"; do [ "$(basename "$h")" = taskdeck ] && BIN=$h && break; done
FIXTURE=$PWD/tests/fixtures/hooks/claude-code/PreToolUse.json
work=$(mktemp -d)
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

"$BIN" serve --port 0 --data-dir "$work/data" --config-dir "$work/cfg" > "$work/serve.log" 2>&1 &
server=$!
for _ in $(seq 600); do [ -s "$work/data/taskdeck.port" ] && break; sleep 0.05; done
mkdir -p "$work/cfg/hooks"
"$BIN" token create claude-code --data-dir "$work/data" 2>/dev/null > "$work/cfg/hooks/claude-code.token"
cat > "$work/cfg/policy.json" <<'JSON'
{"rules": [{"principal": "claude-code", "server": "claude-code", "tool": "Bash",
            "arguments": {"command": "npm test*"}, "decision": "allow"}]}
JSON

echo "$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $RUNS runs each after 50 warm-up runs"
echo
echo "| hook binary | runs | p50 ms | p99 ms | max ms |"
echo "|---|---|---|---|---|"
for hook in "${HOOKS[@]}"; do
python3 - "$hook" "$work" "$FIXTURE" "$RUNS" <<'PY'
import json, os, subprocess, sys, time
bin_, work, fixture, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
stdin = open(fixture, "rb").read()
verb = ["claude-code"] if os.path.basename(bin_) == "taskdeck-hook" else ["hook", "claude-code"]
cmd = [bin_, *verb, "--data-dir", f"{work}/data", "--config-dir", f"{work}/cfg"]
def once():
    t = time.perf_counter()
    out = subprocess.run(cmd, input=stdin, capture_output=True, check=True).stdout
    ms = (time.perf_counter() - t) * 1000
    decision = json.loads(out)["hookSpecificOutput"]["permissionDecision"]
    assert decision == "allow", out
    return ms
for _ in range(50):
    once()
times = sorted(once() for _ in range(runs))
pct = lambda p: times[min(len(times) - 1, int(len(times) * p))]
print(f"| `{bin_.split('/target/')[-1]} {' '.join(verb)}` | {runs} | {pct(0.5):.2f} | {pct(0.99):.2f} | {times[-1]:.2f} |")
PY
done
