#!/usr/bin/env bash
# The desktop packages end to end (scripts/package.sh): builds the .deb and .rpm (debug
# profile, reusing target/desktop/debug), checks what each declares and holds, installs the
# .deb on this machine with apt, uses it as a user would (`taskdeck --version`, `taskdeck
# serve` answering /v1/me with its admin token, `taskdeck hook install` finding
# `taskdeck-hook` beside `taskdeck`, desktop-file-validate on the menu entry, the autostart
# entry's hidden start: hidden_start.sh), removes it and
# checks that none of its files is left while the user's data stays.
#
# Needs root (or sudo) for apt-get and dpkg; refuses to run when a `taskdeck` package is
# already installed (it would replace the user's). The package is removed on every exit path.
#
#   tests/package/run.sh            build with scripts/package.sh --debug, then test
#   tests/package/run.sh DEB RPM    test these files
set -euo pipefail
cd "$(dirname "$0")/../.."
sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
fail() { echo "package test: FAIL: $*" >&2; exit 1; }
step() { echo "package test: [${SECONDS}s] $*"; }

if dpkg -s taskdeck >/dev/null 2>&1; then
  fail "a taskdeck package is already installed; remove it first (apt-get remove taskdeck)"
fi

if [ $# -eq 2 ]; then
  deb=$1; rpm=$2
else
  step "building the packages (scripts/package.sh --debug)"
  mapfile -t built < <(scripts/package.sh --debug)
  deb=$(printf '%s\n' "${built[@]}" | grep '\.deb$' | tail -1)
  rpm=$(printf '%s\n' "${built[@]}" | grep '\.rpm$' | tail -1)
fi
[ -f "$deb" ] || fail "no .deb built"
[ -f "$rpm" ] || fail "no .rpm built"
deb=$(realpath "$deb"); rpm=$(realpath "$rpm")

tmp=$(mktemp -d)
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  if dpkg -s taskdeck >/dev/null 2>&1; then
    echo "package test: removing the package left installed"
    $sudo_cmd dpkg -r taskdeck >/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# Paths every package holds (the rpm and the deb alike).
expected=(/usr/bin/taskdeck /usr/bin/taskdeck-hook /usr/share/applications/Taskdeck.desktop)
for size in 16x16 24x24 32x32 48x48 64x64 128x128 256x256; do
  expected+=("/usr/share/icons/hicolor/$size/apps/taskdeck.png")
done

# ---- the .rpm: its files and declared dependencies ----------------------------------------
step "checking $(basename "$rpm")"
rpm -qlp "$rpm" 2>/dev/null >"$tmp/rpm-files"
for p in "${expected[@]}" /usr/share/licenses/taskdeck/LICENSE; do
  grep -qxF "$p" "$tmp/rpm-files" || fail "the rpm lacks $p (it holds: $(tr '\n' ' ' <"$tmp/rpm-files"))"
done
rpm -qpR "$rpm" 2>/dev/null >"$tmp/rpm-requires"
for dep in 'libwebkit2gtk-4.1.so.0()(64bit)' 'libgtk-3.so.0()(64bit)' 'libayatana-appindicator3.so.1()(64bit)'; do
  grep -qxF "$dep" "$tmp/rpm-requires" || fail "the rpm does not require $dep"
done
grep -q taskdeck-bench "$tmp/rpm-files" && fail "the rpm holds the developer tool taskdeck-bench"
[ "$(rpm -qp --qf '%{LICENSE}' "$rpm" 2>/dev/null)" = "Apache-2.0" ] || fail "the rpm's License is not Apache-2.0"

# ---- the .deb: its control data -------------------------------------------------------------
step "checking $(basename "$deb")"
depends=$(dpkg-deb -f "$deb" Depends)
for dep in libwebkit2gtk-4.1-0 libgtk-3-0 libayatana-appindicator3-1; do
  [[ ", $depends," == *", $dep"[\ ,]* ]] || fail "the deb's Depends ($depends) lacks $dep"
done
[ "$(dpkg-deb -f "$deb" Package)" = taskdeck ] || fail "the deb's package is not named taskdeck"

# ---- install with apt (pulls the declared dependencies) -------------------------------------
step "installing it (apt-get install ./$(basename "$deb"))"
DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "$deb" >"$tmp/apt.log" 2>&1 ||
  { cat "$tmp/apt.log"; fail "apt-get install failed"; }
dpkg -L taskdeck >"$tmp/deb-files"
for p in "${expected[@]}" /usr/share/doc/taskdeck/copyright; do
  grep -qxF "$p" "$tmp/deb-files" || fail "the installed package lacks $p"
done
[ "$(command -v taskdeck)" = /usr/bin/taskdeck ] || fail "taskdeck is not on PATH as /usr/bin/taskdeck"
[ "$(command -v taskdeck-hook)" = /usr/bin/taskdeck-hook ] || fail "taskdeck-hook is not on PATH"
version=$(taskdeck --version) || fail "taskdeck --version failed"
[ "$version" = "taskdeck $(dpkg-deb -f "$deb" Version)" ] || fail "taskdeck --version says '$version'"
step "$version"

# The menu entry.
desktop-file-validate /usr/share/applications/Taskdeck.desktop || fail "desktop-file-validate"
grep -qx 'Exec=taskdeck' /usr/share/applications/Taskdeck.desktop || fail "the menu entry does not run taskdeck"
grep -qx 'Icon=taskdeck' /usr/share/applications/Taskdeck.desktop || fail "the menu entry has no icon"

# `taskdeck serve` answers /v1/me with the admin token it writes.
home=$tmp/home; mkdir -p "$home"
data=$tmp/data; config=$tmp/config
HOME=$home taskdeck serve --port 0 --data-dir "$data" --config-dir "$config" >"$tmp/serve.out" 2>"$tmp/serve.err" &
server_pid=$!
port=""
for _ in $(seq 1 200); do
  port=$(sed -n 's|^Taskdeck is running headless on http://127.0.0.1:\([0-9]*\).*|\1|p' "$tmp/serve.out")
  [ -n "$port" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$tmp/serve.err"; fail "taskdeck serve exited"; }
  sleep 0.1
done
[ -n "$port" ] || fail "taskdeck serve did not print its port in 20 s"
me=$(curl -fsS -H "Authorization: Bearer $(cat "$config/admin-token")" "http://127.0.0.1:$port/v1/me") ||
  fail "/v1/me did not answer"
python3 -c 'import json,sys; me=json.loads(sys.argv[1]); assert me["principal"]=="admin" and me["admin"] is True, me' "$me" ||
  fail "/v1/me answered $me"
step "serve on port $port answers /v1/me: $me"
kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""

# `taskdeck hook install` writes the installed hook binary's path.
HOME=$home taskdeck hook install claude-code >/dev/null 2>&1 || fail "taskdeck hook install claude-code failed"
grep -q '/usr/bin/taskdeck-hook' "$home/.claude/settings.json" ||
  fail "hook install did not use /usr/bin/taskdeck-hook: $(cat "$home/.claude/settings.json")"

# Started at login from the autostart entry: hidden in the tray until a second launch.
step "starting it as the autostart entry does (tests/package/hidden_start.sh)"
mkdir -p "$tmp/login"
tests/package/hidden_start.sh "$tmp/login" || fail "hidden start"

# ---- remove: every file of the package goes, the user's data stays ---------------------------
step "removing it (apt-get remove taskdeck)"
DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get remove -y -qq taskdeck >"$tmp/apt.log" 2>&1 ||
  { cat "$tmp/apt.log"; fail "apt-get remove failed"; }
dpkg -s taskdeck >/dev/null 2>&1 && fail "taskdeck is still installed after removal"
left=()
while IFS= read -r p; do
  # Directories shared with other packages (/usr/bin, /usr/share/icons/...) stay; files and the
  # package's own directories must go.
  if [ -e "$p" ] && { [ ! -d "$p" ] || [[ "$p" == */taskdeck ]]; }; then left+=("$p"); fi
done <"$tmp/deb-files"
[ ${#left[@]} -eq 0 ] || fail "left behind after removal: ${left[*]}"
hash -r; command -v taskdeck >/dev/null && fail "taskdeck is still on PATH after removal"
[ -s "$config/admin-token" ] && [ -d "$data" ] || fail "removal touched the user's data"
# The autostart entry is the user's and stays; its TryExec names the removed program, so the
# session skips it at login instead of failing to run it.
entry=$tmp/login/xdg/autostart/taskdeck.desktop
try_exec=$(sed -n 's/^TryExec=//p' "$entry")
[ "$try_exec" = /usr/bin/taskdeck ] || fail "the autostart entry's TryExec is '$try_exec', not /usr/bin/taskdeck"
[ ! -e "$try_exec" ] || fail "$try_exec is still there after removal"
step "ok: installed, used and removed $(basename "$deb"); $(wc -l <"$tmp/deb-files") paths checked"
