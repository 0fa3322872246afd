#!/usr/bin/env bash
# Runs the official MCP conformance suite (pinned) against a real `taskdeck serve`.
# Usage: scripts/conformance.sh [path/to/taskdeck]   (default: target/debug/taskdeck)
# Installs Node 22 and the suite from the npm registry into .tools/ (idempotent).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-target/debug/taskdeck}
SUITE_VERSION=0.2.0-alpha.12
TOOLS=$PWD/.tools
if [ ! -x "$TOOLS/node22/node_modules/.bin/node" ]; then
  npm install --silent --no-audit --no-fund --prefix "$TOOLS/node22" node@22 >/dev/null
fi
if [ "$(cat "$TOOLS/conformance/.version" 2>/dev/null)" != "$SUITE_VERSION" ]; then
  npm install --silent --no-audit --no-fund --prefix "$TOOLS/conformance" "@modelcontextprotocol/conformance@$SUITE_VERSION" >/dev/null
  echo "$SUITE_VERSION" > "$TOOLS/conformance/.version"
fi
export PATH="$TOOLS/node22/node_modules/.bin:$PATH"
CONF="$TOOLS/conformance/node_modules/.bin/conformance"

work=$(mktemp -d)
# The suite cannot send an Authorization header: --allow-anonymous, loopback only.
"$BIN" serve --port 0 --data-dir "$work/data" --config-dir "$work/cfg" --allow-anonymous --conformance-fixtures \
  >"$work/server.out" 2>"$work/server.err" &
server=$!
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 100); do
  port=$(sed -n 's/^Taskdeck is running headless on http:\/\/127.0.0.1:\([0-9]*\)$/\1/p' "$work/server.out")
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { cat "$work/server.err"; echo "taskdeck did not start"; exit 1; }
url="http://127.0.0.1:$port/mcp"

# Task scenarios must run without --spec-version (with one they are silently skipped).
scenarios="tasks-lifecycle tasks-capability-negotiation tasks-wire-fields tasks-request-state-removal
  tasks-mrtr-input tasks-request-headers tasks-dispatch-and-envelope tasks-status-notifications
  tasks-required-task-error tasks-mrtr-composition dns-rebinding-protection server-stateless
  http-header-validation tools-list server-initialize"
passed=0; failed=0
for s in $scenarios; do
  if out=$("$CONF" server --url "$url" --scenario "$s" 2>&1); then
    passed=$((passed + 1)); echo "conformance $s: ok ($(echo "$out" | grep -o 'Passed: [0-9/]*' | tail -1))"
  else
    failed=$((failed + 1)); echo "conformance $s: FAILED"; echo "$out" | sed -n '/=== Failed Checks ===/,$p'
  fi
done
# The same scenarios that also run at 2026-07-28 when asked explicitly.
for s in tools-list dns-rebinding-protection; do
  if "$CONF" server --url "$url" --scenario "$s" --spec-version 2026-07-28 >/dev/null 2>&1; then
    passed=$((passed + 1)); echo "conformance $s@2026-07-28: ok"
  else
    failed=$((failed + 1)); echo "conformance $s@2026-07-28: FAILED"
  fi
done
echo "conformance: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
