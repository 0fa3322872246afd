#!/usr/bin/env bash
# Benchmarks the agent hooks' fast path (issue #15): `taskdeck hook claude-code` run N times as
# a new process, as Claude Code runs it, with the PreToolUse fixture on stdin and an allow rule
# that matches it, against a running `taskdeck serve` (release build, default durability).
# Each run's wall time covers spawning the process, its start, reading stdin, the HTTP round
# trip and the policy decision, and its exit. Prints p50/p99/max (BENCHMARKS.md, "Hooks").
# Each binary runs twice: with nothing of Claude Code's in sight (the fixture's cwd does not
# exist), and with a user's setup in sight, which the server reads at every event to know
# which servers are Taskdeck's own: a ~1 MiB `~/.claude.json` of 300 projects, the event's
# cwd three dirs deep in a git checkout with a `.mcp.json`, and `$CLAUDE_PROJECT_DIR` set;
# then the same with `~/.claude.json` changed before each run (Claude Code rewrites it often),
# so the server parses it again at every event. A `PreToolUse` answers without that lookup;
# the last row is the event that waits for it: a `PermissionRequest` for Taskdeck's own
# `mcp__taskdeck__task_status`, which the hook allows (Taskdeck asks when the call arrives),
# with the file changed before each run.
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

# A user's Claude Code setup: $work/home/.claude.json, the project $work/src/shop.
mkdir -p "$work/home" "$work/src/shop/pkg/web/app"
git -C "$work/src/shop" init -q
port=$(cat "$work/data/taskdeck.port")
python3 - "$work" "$port" <<'PY'
import json, sys
work, port = sys.argv[1], sys.argv[2]
taskdeck = {"type": "http", "url": f"http://127.0.0.1:{port}/mcp",
            "headers": {"Authorization": "Bearer td_x"}}
projects = {}
for n in range(300):
    projects[f"/home/dev/p{n}"] = {
        "allowedTools": [f"Bash(npm run t{k}:*)" for k in range(20)],
        "history": [{"display": "x" * 120, "pastedContents": {}} for _ in range(20)],
        "mcpServers": {"github": {"command": "npx", "args": ["-y", "gh-mcp"]}},
    }
projects[f"{work}/src/shop"] = {"mcpServers": {}, "allowedTools": []}
user = {"numStartups": 310, "mcpServers": {"taskdeck": taskdeck}, "projects": projects}
json.dump(user, open(f"{work}/home/.claude.json", "w"))
json.dump({"mcpServers": {"taskdeck": taskdeck,
                          "fs": {"command": "npx", "args": ["-y", "fs-mcp", "."]}}},
          open(f"{work}/src/shop/.mcp.json", "w"))
PY
echo "$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $RUNS runs each after 50 warm-up runs"
echo
echo "| hook binary | Claude Code setup in sight (event) | runs | p50 ms | p99 ms | max ms |"
echo "|---|---|---|---|---|---|"
for hook in "${HOOKS[@]}"; do
for setup in no yes changed permission; do
python3 - "$hook" "$work" "$FIXTURE" "$RUNS" "$setup" <<'PY'
import json, os, subprocess, sys, time
bin_, work, fixture, runs, setup = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
event = json.load(open(fixture))
env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_"))}
if setup == "permission":
    event = json.load(open(fixture.replace("PreToolUse", "PermissionRequest")))
    event["tool_name"] = "mcp__taskdeck__task_status"
    event["tool_input"] = {"taskId": "t"}
if setup != "no":
    event["cwd"] = f"{work}/src/shop/pkg/web/app"
    env["HOME"] = f"{work}/home"
    env["CLAUDE_PROJECT_DIR"] = f"{work}/src/shop"
stdin = json.dumps(event).encode()
verb = ["claude-code"] if os.path.basename(bin_) == "taskdeck-hook" else ["hook", "claude-code"]
cmd = [bin_, *verb, "--data-dir", f"{work}/data", "--config-dir", f"{work}/cfg"]
def once():
    if setup in ("changed", "permission"):
        os.utime(f"{work}/home/.claude.json")
    t = time.perf_counter()
    out = subprocess.run(cmd, input=stdin, capture_output=True, check=True, env=env).stdout
    ms = (time.perf_counter() - t) * 1000
    answer = json.loads(out)["hookSpecificOutput"]
    decision = answer["decision"]["behavior"] if setup == "permission" else answer["permissionDecision"]
    assert decision == "allow", out
    return ms
for _ in range(50):
    once()
times = sorted(once() for _ in range(runs))
pct = lambda p: times[min(len(times) - 1, int(len(times) * p))]
print(f"| `{bin_.split('/target/')[-1]} {' '.join(verb)}` | {setup} | {runs} | {pct(0.5):.2f} | {pct(0.99):.2f} | {times[-1]:.2f} |")
PY
done
done
