# Sourced by the suites that put real upstream MCP servers behind Taskdeck's gateway
# (tests/clients/run.sh, tests/desktop/run.sh).
#
# install_upstreams ROOT: `npm ci` of ROOT/tests/upstreams (the pinned server-everything and
# server-filesystem), skipped while a stamp of its package.json + package-lock.json hash is
# current. Sets `fs_server`, the path of server-filesystem's dist/index.js. Returns 2 when
# npm ci fails.
install_upstreams() {
  local dir=$1/tests/upstreams want
  local stamp=$dir/node_modules/.taskdeck-installed
  want=$(sha256sum "$dir/package.json" "$dir/package-lock.json" | sha256sum | cut -c1-64)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "installing the pinned upstream MCP servers (tests/upstreams/package-lock.json)"
    (cd "$dir" && npm ci --silent --no-audit --no-fund >/dev/null) || { echo "npm ci in tests/upstreams failed"; return 2; }
    echo "$want" >"$stamp"
  fi
  fs_server=$dir/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js
}
