#!/usr/bin/env bash
# Builds Taskdeck's desktop packages, a .deb and an .rpm, with the Tauri bundler
# (tauri.conf.json's "bundle" section: desktop entry, icons, dependencies, license).
#
#   scripts/package.sh            release build (optimised, stripped; ~10 min on 2 cores from
#                                 scratch; a 23 MB .deb, a 21 MB .rpm)
#   scripts/package.sh --debug    debug build (reuses target/desktop/debug; what the test uses)
#
# The packages land in target/desktop/{release,debug}/bundle/{deb,rpm}/ and the script prints
# their paths, one a line. Both install `taskdeck` and `taskdeck-hook` into /usr/bin (the
# bundler packs every [[bin]] of the package whose required features it is given, so not
# taskdeck-bench; the hook binary must lie beside `taskdeck` for `taskdeck hook install`,
# docs/hooks.md), the desktop entry, the icons of every size into /usr/share/icons/hicolor, and
# the license. The bundler declares the dependencies itself: WebKitGTK 4.1, GTK 3 and (for the
# tray icon) the Ayatana app indicator, as Debian package names in the .deb and as shared
# libraries in the .rpm. AppImage is not built: its tools are downloaded at build time.
#
# The Tauri CLI is the pinned npm package @tauri-apps/cli in .tools/ (scripts/setup.sh installs
# it; this script does too when it is missing). It builds with cargo itself (`--bins`, feature
# `desktop`, the tauri.conf.json context); another cargo build running meanwhile only waits.
set -euo pipefail
cd "$(dirname "$0")/.."
profile=release
args=()
case "${1:-}" in
  "") ;;
  --debug) profile=debug; args+=(--debug) ;;
  *) echo "usage: scripts/package.sh [--debug]" >&2; exit 2 ;;
esac

. scripts/lib/tauri-cli.sh
tauri=$(tauri_cli_pinned)
export CARGO_TARGET_DIR=$PWD/target/desktop
if [ "$profile" = release ]; then
  # What users install carries no debug info and no symbol table: 296 MB of line tables and
  # symbols per binary otherwise (the workspace's release profile keeps line tables for
  # profiling the benchmarks). Only target/desktop/release is built with these settings.
  export CARGO_PROFILE_RELEASE_DEBUG=false CARGO_PROFILE_RELEASE_STRIP=symbols
fi
"$tauri" build "${args[@]}" --bundles deb,rpm --features desktop --ci >&2
out=$CARGO_TARGET_DIR/$profile/bundle
ls "$out"/deb/*.deb "$out"/rpm/*.rpm
