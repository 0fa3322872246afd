#!/usr/bin/env bash
# Builds Taskdeck (release, with its desktop window) and starts it. Extra arguments go to `taskdeck`,
# e.g. `scripts/start.sh serve --port 5000`.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo >/dev/null || { echo "Taskdeck needs Rust (cargo): https://rustup.rs"; exit 1; }
# Build prerequisites of the desktop window (Tauri 2 on WebKitGTK); Debian/Ubuntu package names.
need=()
for pkg in pkg-config build-essential file libwebkit2gtk-4.1-dev libjavascriptcoregtk-4.1-dev libsoup-3.0-dev \
  libayatana-appindicator3-dev librsvg2-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
cargo build --release --features desktop --bin taskdeck
# With a display: the window (plus the endpoints). Without one: headless, with a browser link.
exec target/release/taskdeck "$@"
