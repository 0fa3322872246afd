#!/usr/bin/env bash
# Real-client compatibility suite: independently written MCP clients complete Taskdeck tasks
# through their native task APIs while this script plays the human through /v1 (see docs/protocol-and-clients.md).
# Usage: tests/clients/run.sh [path/to/taskdeck]   (default: target/debug/taskdeck)
# Installs what it needs, idempotently: the pinned npm packages into tests/clients/node_modules,
# the pinned Python packages into .tools/clients-venv, the pinned upstream MCP servers into
# tests/upstreams/node_modules (the gateway checks put server-filesystem behind Taskdeck as "fs").
# Prints one line per check and a closing "clients: N passed, M failed"; exits non-zero if any
# check failed.
# KEEP=1 keeps the server's data dir; the traffic of every client (one JSON line per HTTP
# exchange, tokens redacted) is written to test-artifacts/clients/traffic-CLIENT.jsonl, and
# `node tests/clients/lib/traffic.mjs FILE` prints it compactly.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
BIN=${1:-$root/target/debug/taskdeck}
case "$BIN" in /*) ;; *) BIN="$PWD/$BIN" ;; esac
[ -x "$BIN" ] || { echo "taskdeck binary not found: $BIN"; exit 2; }
# The tower-mcp example server with Taskdeck's embedded task store (tower-example.mjs drives it
# over stdio through a restart), built next to the taskdeck binary by `cargo test --workspace`.
EXAMPLE_BIN=$(dirname "$BIN")/examples/durable_tasks
[ -x "$EXAMPLE_BIN" ] || {
  echo "tower-mcp example binary not found: $EXAMPLE_BIN (build it: cargo build -p taskdeck-tower --example durable_tasks)"
  exit 2
}
export PYTHONDONTWRITEBYTECODE=1

# ---- install (idempotent: skipped while the pinned manifests are unchanged) -------------------
. "$root/scripts/lib/pinned-npm.sh"
npm_ci_pinned "$here" "the MCP clients" || exit 2
venv=$root/.tools/clients-venv
. "$root/scripts/lib/pinned-venv.sh"
pinned_venv "$venv" "$here/requirements.txt"
# The real upstream MCP servers the gateway checks put behind Taskdeck (tests/upstreams).
. "$root/scripts/lib/upstreams.sh"
install_upstreams "$root" || exit 2

# ---- a real taskdeck -----------------------------------------------------------------------
artifacts=$root/test-artifacts/clients
mkdir -p "$artifacts"
rm -f "$artifacts"/traffic-*.jsonl
pids=()
. "$root/scripts/lib/temp-taskdeck.sh"
start_temp_taskdeck "$BIN" "$artifacts"

token() { # NAME -> a new agent token for principal NAME
  "$BIN" token create "$1" --data-dir "$work/data" --config-dir "$work/cfg" --json |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).token))'
}
# ---- the gateway's upstream: server-filesystem over a temp dir, as server "fs" ---------------
fs_dir=$work/fs
mkdir -p "$fs_dir"
"$BIN" servers add fs --data-dir "$work/data" --config-dir "$work/cfg" -- node "$fs_server" "$fs_dir" >/dev/null 2>"$work/servers-add.err" ||
  { cat "$work/servers-add.err"; echo "taskdeck servers add fs failed"; exit 1; }
fs_state=
for _ in $(seq 150); do
  fs_state=$(node -e 'fetch(process.argv[1], {headers: {authorization: `Bearer ${process.argv[2]}`}})
    .then((r) => r.json()).then((j) => console.log(j.servers.find((s) => s.name === "fs")?.state ?? ""), () => {})' \
    "http://127.0.0.1:$port/v1/servers" "$admin")
  [ "$fs_state" = connected ] && break
  sleep 0.1
done
[ "$fs_state" = connected ] || { echo "upstream fs is not connected after 15 s (state: ${fs_state:-none})"; exit 1; }

# NAME -> starts a logging proxy in front of taskdeck for that client; its port in $pp.
# Not called in $(...): the proxy's pid must reach `pids` in this shell, or it outlives the run.
proxy() {
  node "$here/lib/proxy.mjs" "$port" "$artifacts/traffic-$1.jsonl" >"$work/proxy-$1.out" 2>&1 &
  pids+=($!)
  pp=
  for _ in $(seq 50); do
    pp=$(sed -n 's/^listening //p' "$work/proxy-$1.out")
    [ -n "$pp" ] && break
    sleep 0.1
  done
}

# ---- the clients (in parallel: each has its own principal; output is printed per client) ----
# tower-example does not talk to this taskdeck: it starts the tower-mcp example server itself.
# claude-desktop runs after the others: its `servers import` adds an upstream, and the tools
# change it announces (notifications/tools/list_changed) must not race the other clients' sessions.
parallel=(ts-sdk1 ext-tasks python-mcp fastmcp tower-example)
declare -A cmd=(
  [ts-sdk1]="node $here/ts-sdk1.mjs"
  [ext-tasks]="node $here/ext-tasks.mjs"
  [python-mcp]="$venv/bin/python $here/python-mcp.py"
  [fastmcp]="$venv/bin/python $here/fastmcp-client.py"
  [claude-desktop]="node $here/claude-desktop.mjs"
  [tower-example]="node $here/tower-example.mjs"
)
declare -A run_pid
launch() { # CLIENT: starts its script in the background; its pid in run_pid[CLIENT]
  local c=$1 tok
  if [ "$c" = claude-desktop ]; then
    # Its token comes from `taskdeck servers import claude-desktop`, which the script runs.
    tok=from-the-import
  else
    tok=$(token "$c") || { echo "FAILED $c: taskdeck token create $c"; return; }
  fi
  proxy "$c"
  (
    cd "$here" &&
      TD_BASE="http://127.0.0.1:$port" TD_MCP_URL="http://127.0.0.1:$pp/mcp" TD_AGENT_TOKEN="$tok" \
        TD_AGENT_NAME="$c" TD_ADMIN_TOKEN="$admin" TD_FS_DIR="$fs_dir" TD_BIN="$BIN" \
        TD_DATA_DIR="$work/data" TD_CONFIG_DIR="$work/cfg" TD_FS_SERVER="$fs_server" TD_WORK="$work" TD_EXAMPLE_BIN="$EXAMPLE_BIN" \
        timeout 150 ${cmd[$c]} >"$work/out-$c.txt" 2>"$work/err-$c.txt"
  ) &
  run_pid[$c]=$!
}

passed=0; failed=0
report() { # CLIENT: waits for its script and prints its checks
  local c=$1 rc p f
  [ -n "${run_pid[$c]:-}" ] || { failed=$((failed + 1)); return; }
  wait "${run_pid[$c]}"; rc=$?
  echo "=== $c"
  grep -E '^(ok|FAILED|  note) ' "$work/out-$c.txt"
  p=$(grep -c '^ok ' "$work/out-$c.txt"); f=$(grep -c '^FAILED ' "$work/out-$c.txt")
  passed=$((passed + p)); failed=$((failed + f))
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    failed=$((failed + 1))
    echo "FAILED $c: the script exited with code $rc without a FAILED check"
    tail -20 "$work/err-$c.txt" | sed 's/^/  stderr: /'
  fi
}
for c in "${parallel[@]}"; do launch "$c"; done
for c in "${parallel[@]}"; do report "$c"; done
launch claude-desktop
report claude-desktop
echo "clients: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
