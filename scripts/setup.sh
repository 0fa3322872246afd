#!/usr/bin/env bash
# Installs the machine prerequisites of Taskdeck's build and tests, idempotently and quietly:
# it prints nothing when everything is present, and one line per thing it installs otherwise.
#
#   scripts/setup.sh          what `scripts/test.sh` needs (it calls this first)
#   scripts/setup.sh build    only what building the desktop window needs (`scripts/start.sh`)
#
# Who installs what:
# - this script: Debian packages (apt; WebKitGTK & co. to build the window; Chromium for the
#   browser test; Xvfb, D-Bus, dunst, ImageMagick, xdotool and WebKitWebDriver to drive the real
#   window; python3-venv; Node.js and npm when there is no `npm`), the rustup components
#   rustfmt and clippy, tauri-driver (`cargo install`, pinned), playwright-core for
#   tests/browser (`npm ci` of tests/browser/package-lock.json), the real upstream MCP
#   servers the gateway tests start (`npm ci` of tests/upstreams/package-lock.json), and the
#   pinned Tauri CLI (npm @tauri-apps/cli into .tools/tauri-cli; scripts/lib/tauri-cli.sh) with
#   desktop-file-utils and rpm for the package test;
# - scripts/conformance.sh: Node 22 and the pinned MCP conformance suite, into .tools/;
# - tests/clients/run.sh: the pinned npm packages of the real clients (tests/clients/node_modules)
#   and their pinned Python packages (the venv .tools/clients-venv);
# - tests/contract/run.sh: the pinned schemathesis, into the venv .tools/contract-venv.
# Those three stay with their suites so that each suite also runs on its own.
set -euo pipefail
cd "$(dirname "$0")/.."
group=${1:-test}
case "$group" in test | build) ;; *) echo "usage: scripts/setup.sh [build]" >&2; exit 2 ;; esac

command -v cargo >/dev/null || { echo "Taskdeck needs Rust (cargo): https://rustup.rs" >&2; exit 1; }

# ---- Debian packages (Debian/Ubuntu names) --------------------------------------------------
# Build prerequisites of the desktop window (Tauri 2 on WebKitGTK).
packages=(pkg-config build-essential file libwebkit2gtk-4.1-dev libjavascriptcoregtk-4.1-dev
  libsoup-3.0-dev libayatana-appindicator3-dev librsvg2-dev)
if [ "$group" = test ]; then
  # Chromium for the browser test; Xvfb, D-Bus, a notification daemon, ImageMagick and
  # WebKitWebDriver to drive the real window; `ss` (iproute2) to see the window's connections;
  # venv for the Python clients.
  packages+=(chromium xvfb xauth dbus-x11 dunst libnotify-bin imagemagick xdotool
    webkit2gtk-driver iproute2 python3-venv)
  # curl: a command whose password option (`-u user:password`) a test wraps with taskdeck run.
  packages+=(curl)
  # The package test (tests/package/run.sh): desktop-file-validate and `rpm -qlp`.
  packages+=(desktop-file-utils rpm)
  # Node.js from the distribution only when there is none (it may come from elsewhere).
  command -v npm >/dev/null || packages+=(nodejs npm)
fi
need=()
for pkg in "${packages[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${need[*]}"
  sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
[ "$group" = build ] && exit 0

# ---- Rust components of the format and lint suites -------------------------------------------
if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
  echo "setup: installing the rustup components rustfmt and clippy"
  rustup component add rustfmt clippy >/dev/null
fi

# ---- tauri-driver: WebDriver for the real window (tests/desktop/run.sh) -----------------------
if [ -x tests/desktop/run.sh ] && ! command -v tauri-driver >/dev/null; then
  echo "setup: installing tauri-driver 2.1.0 (cargo install)"
  cargo install tauri-driver --locked --version 2.1.0 --quiet
fi

# ---- pinned npm packages of the suites (each skipped while its lock file is unchanged) --------
. scripts/lib/pinned-npm.sh
if [ -f tests/browser/package-lock.json ]; then
  npm_ci_pinned tests/browser "playwright-core, for the browser test"
fi
npm_ci_pinned tests/upstreams "the MCP servers the gateway tests start"

# ---- the Tauri CLI that builds the .deb and .rpm (scripts/package.sh, tests/package) ------------
. scripts/lib/tauri-cli.sh
tauri_cli_pinned >/dev/null
