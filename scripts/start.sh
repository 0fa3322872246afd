#!/usr/bin/env bash
# Builds Taskdeck (release, with its desktop window) and starts it. Extra arguments go to `taskdeck`,
# e.g. `scripts/start.sh serve --port 5000`.
set -euo pipefail
cd "$(dirname "$0")/.."
# Build prerequisites of the desktop window (Debian packages; see scripts/setup.sh).
scripts/setup.sh build
# `taskdeck-hook` too: the agents' hooks run it on every tool call (it links no GUI library).
cargo build --release --features desktop --bin taskdeck --bin taskdeck-hook
# With a display: the window (plus the endpoints). Without one: headless, with a browser link.
exec target/release/taskdeck "$@"
