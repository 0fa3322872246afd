# Sourced by scripts/setup.sh and the suites that install their own npm packages.
#
# npm_ci_pinned DIR WHAT: `npm ci` in DIR when its package.json or package-lock.json changed
# since the last install (a stamp in DIR/node_modules remembers their hash); WHAT says what is
# being installed. Returns 2 when npm ci fails.
npm_ci_pinned() {
  local stamp=$1/node_modules/.taskdeck-installed want
  want=$(cat "$1/package.json" "$1/package-lock.json" | sha256sum | cut -c1-64)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "installing the pinned npm packages of $1 ($2)"
    (cd "$1" && npm ci --silent --no-audit --no-fund >/dev/null) || { echo "npm ci in $1 failed"; return 2; }
    echo "$want" >"$stamp"
  fi
}
