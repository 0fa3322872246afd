#!/usr/bin/env bash
# The one command that runs every Taskdeck test (README Quick start; .ci/run calls it).
# Installs what the tests need, idempotently: Debian packages (Chromium for the browser test),
# Node 22 and the MCP conformance suite from the npm registry (into .tools/), playwright-core.
set -uo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
# A clean checkout builds everything once: incremental caches would only add ~1.5 GB of disk.
export CARGO_INCREMENTAL=0

# Chromium for the browser test; WebKitGTK & co. to build the desktop window; Xvfb, D-Bus, a
# notification daemon, ImageMagick and WebKitWebDriver to drive the real window.
need=()
for pkg in chromium pkg-config build-essential file libwebkit2gtk-4.1-dev libjavascriptcoregtk-4.1-dev \
  libsoup-3.0-dev libayatana-appindicator3-dev librsvg2-dev xvfb xauth dbus-x11 dunst libnotify-bin \
  imagemagick xdotool webkit2gtk-driver python3-venv; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "installing Debian packages: ${need[*]}"
  sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

passed=0; failed=0
suite() { # name, command...
  local name=$1; shift
  echo "=== $name: $*"
  if "$@"; then passed=$((passed + 1)); echo "=== $name: ok"; else failed=$((failed + 1)); echo "=== $name: FAILED"; fi
}

suite "build" cargo build --bins --quiet
suite "rust unit + integration tests" cargo test --workspace --quiet
# cargo test rebuilds target/debug/taskdeck with test settings; the suites below drive it.
suite "build again" cargo build --bins --quiet
suite "MCP conformance suite" scripts/conformance.sh target/debug/taskdeck
suite "real MCP clients" tests/clients/run.sh target/debug/taskdeck
if [ -d ui/test ]; then
  suite "UI unit tests" node --test ui/test/
fi
if [ -f tests/browser/package.json ]; then
  (cd tests/browser && [ -d node_modules ] || npm ci --silent --no-audit --no-fund >/dev/null 2>&1 || npm install --silent --no-audit --no-fund >/dev/null)
  suite "UI in headless Chromium" env TASKDECK_BIN="$PWD/target/debug/taskdeck" node --test tests/browser/
fi

# The desktop build (Tauri window) in its own target dir, so the headless binary above stays as it is.
suite "build desktop window" env CARGO_TARGET_DIR=target/desktop cargo build -p taskdeck --features desktop --bins --quiet
suite "desktop unit tests" env CARGO_TARGET_DIR=target/desktop cargo test -p taskdeck --features desktop --lib --quiet
if [ -x tests/desktop/run.sh ]; then
  command -v tauri-driver >/dev/null || cargo install tauri-driver --locked --version 2.1.0 --quiet
  suite "desktop window end to end" tests/desktop/run.sh "$PWD/target/desktop/debug/taskdeck"
fi

echo "taskdeck test suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
