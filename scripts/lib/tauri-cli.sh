# Sourced by scripts/setup.sh and scripts/package.sh.
#
# tauri_cli_pinned: installs the pinned Tauri CLI (npm @tauri-apps/cli, the prebuilt `tauri`;
# its version matches the workspace's tauri 2) into .tools/tauri-cli unless it is there, and
# prints the path of its `tauri` command. Messages go to stderr.
TAURI_CLI_VERSION=2.11.5
tauri_cli_pinned() {
  local dir=$PWD/.tools/tauri-cli bin
  bin=$dir/node_modules/.bin/tauri
  if [ "$("$bin" --version 2>/dev/null)" != "tauri-cli $TAURI_CLI_VERSION" ]; then
    echo "installing the Tauri CLI $TAURI_CLI_VERSION (npm @tauri-apps/cli) into .tools/" >&2
    npm install --silent --no-audit --no-fund --prefix "$dir" "@tauri-apps/cli@$TAURI_CLI_VERSION" >/dev/null
  fi
  echo "$bin"
}
