#!/usr/bin/env bash
# Contract fuzz of the /v1 HTTP API: schemathesis generates requests from /v1/openapi.json (the
# document the server generates from its handlers) and checks every answer against it (status
# declared, content type, body schema, headers, no 5xx, invalid input refused, valid input
# taken), then chains calls through the document's links (stateful phase).
# Usage: tests/contract/run.sh [path/to/taskdeck]   (default: target/debug/taskdeck)
# Installs the pinned schemathesis (requirements.txt) into .tools/contract-venv, idempotently.
# Settings (seed, examples per operation, excluded operations): tests/contract/schemathesis.toml.
# Exits non-zero on any failure. KEEP=1 keeps the server's data dir; the JUnit report is
# written to test-artifacts/contract/.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
BIN=${1:-$root/target/debug/taskdeck}
case "$BIN" in /*) ;; *) BIN="$PWD/$BIN" ;; esac
[ -x "$BIN" ] || { echo "taskdeck binary not found: $BIN"; exit 2; }
export PYTHONDONTWRITEBYTECODE=1

# ---- install (idempotent: skipped while requirements.txt is unchanged) ------------------------
venv=$root/.tools/contract-venv
. "$root/scripts/lib/pinned-venv.sh"
pinned_venv "$venv" "$here/requirements.txt"

# ---- a real taskdeck -----------------------------------------------------------------------
artifacts=$root/test-artifacts/contract
mkdir -p "$artifacts"
rm -f "$artifacts"/junit-*.xml
pids=()
. "$root/scripts/lib/temp-taskdeck.sh"
start_temp_taskdeck "$BIN" "$artifacts"

# ---- the fuzz ------------------------------------------------------------------------------
# From the temp dir: whatever the tools write there (.hypothesis, ...) goes with it.
cd "$work" || exit 2
# Every check but two:
# - use_after_free: `DELETE /v1/jobs/{taskId}` cancels the job (like `POST .../cancel`) and the
#   job stays readable as `cancelled`, which that check takes for a resource that should be gone;
# - ensure_resource_availability ("created resource not found"): a hosted task lives for its
#   `ttlMs` (tower-mcp's TaskStore contract: an expired task reads as absent at once), which may
#   be 1 ms, so the request after its creation rightly finds 404. The integration tests find
#   every created resource right after its creation (tests/integration/hosted_tasks.rs, ...).
"$venv/bin/schemathesis" --config-file "$here/schemathesis.toml" --no-color run \
  "http://127.0.0.1:$port/v1/openapi.json" \
  --header "Authorization: Bearer $admin" \
  --checks all --exclude-checks use_after_free,ensure_resource_availability \
  --phases examples,coverage,fuzzing,stateful \
  --report junit --report-dir "$artifacts"
status=$?
if [ "$status" -ne 0 ]; then
  echo "contract: FAILED (schemathesis exit $status)"
  exit 1
fi
kill -0 "${pids[0]}" 2>/dev/null || { echo "contract: FAILED (the server died)"; exit 1; }
echo "contract: passed"
