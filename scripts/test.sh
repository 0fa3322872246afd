#!/usr/bin/env bash
# The one command that runs every Taskdeck test (README Quick start; .ci/run calls it).
# First scripts/setup.sh installs what the tests need (idempotent; its header says who installs
# what), then every suite runs, even after one failed; the last line counts them.
set -uo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
# A clean checkout builds everything once: incremental caches would only add ~1.5 GB of disk.
export CARGO_INCREMENTAL=0

passed=0; failed=0
suite() { # name, command...
  local name=$1; shift
  echo "=== $name: $*"
  if "$@"; then passed=$((passed + 1)); echo "=== $name: ok"; else failed=$((failed + 1)); echo "=== $name: FAILED"; fi
}

suite "set-up" scripts/setup.sh
suite "format" cargo fmt --all --check
suite "docs links" python3 scripts/check-doc-links.py
suite "build" cargo build --bins --quiet
suite "rust unit + integration tests" cargo test --workspace --quiet
suite "lint" cargo clippy --workspace --all-targets --quiet -- -D warnings
# cargo test rebuilds target/debug/taskdeck with test settings; the suites below drive it.
suite "build again" cargo build --bins --quiet
suite "MCP conformance suite" scripts/conformance.sh target/debug/taskdeck
suite "real MCP clients" tests/clients/run.sh target/debug/taskdeck
suite "contract fuzz of /v1" tests/contract/run.sh target/debug/taskdeck
if [ -d ui/test ]; then
  suite "UI unit tests" node --test ui/test/
fi
if [ -f tests/browser/package.json ]; then
  suite "UI in headless Chromium" env TASKDECK_BIN="$PWD/target/debug/taskdeck" node --test tests/browser/
fi

# The desktop build (Tauri window) in its own target dir, so the headless binary above stays as it is.
suite "build desktop window" env CARGO_TARGET_DIR=target/desktop cargo build -p taskdeck --features desktop --bins --quiet
suite "desktop unit tests" env CARGO_TARGET_DIR=target/desktop cargo test -p taskdeck --features desktop --lib --quiet
suite "lint desktop window" env CARGO_TARGET_DIR=target/desktop cargo clippy -p taskdeck --features desktop --all-targets --quiet -- -D warnings
if [ -x tests/desktop/run.sh ]; then
  suite "desktop window end to end" tests/desktop/run.sh "$PWD/target/desktop/debug/taskdeck"
fi
suite "desktop packages (.deb install/remove, .rpm contents)" tests/package/run.sh

echo "taskdeck test suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
