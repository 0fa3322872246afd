# Sourced by the suites that put real upstream MCP servers behind Taskdeck's gateway
# (tests/clients/run.sh, tests/desktop/run.sh).
#
# install_upstreams ROOT: the pinned server-everything and server-filesystem of
# ROOT/tests/upstreams (`npm_ci_pinned`). Sets `fs_server`, the path of server-filesystem's
# dist/index.js. Returns 2 when npm ci fails.
. "$(dirname "${BASH_SOURCE[0]}")/pinned-npm.sh"
install_upstreams() {
  npm_ci_pinned "$1/tests/upstreams" "the upstream MCP servers" || return 2
  fs_server=$1/tests/upstreams/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js
}
