#!/usr/bin/env bash
# Builds Taskdeck (release) and starts it. Extra arguments go to `taskdeck`,
# e.g. `scripts/start.sh serve --port 5000`.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo >/dev/null || { echo "Taskdeck needs Rust (cargo): https://rustup.rs"; exit 1; }
need=()
for pkg in pkg-config build-essential; do dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg"); done
if [ ${#need[@]} -gt 0 ]; then
  sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
cargo build --release --bin taskdeck
exec target/release/taskdeck "$@"
