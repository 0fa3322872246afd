# Sourced by the suites that run Python tools (tests/clients/run.sh, tests/contract/run.sh).
#
# pinned_venv VENV REQUIREMENTS: makes VENV a virtualenv holding exactly the pinned packages of
# REQUIREMENTS. Idempotent: it installs only when REQUIREMENTS' content changed since the last
# install (the hash of its content is kept in VENV/.taskdeck-installed), so a second run, or a
# run from another checkout with the same file, does nothing. Exits 2 when it cannot install.
pinned_venv() {
  local venv=$1 requirements=$2 stamp want
  stamp=$venv/.taskdeck-installed
  want=$(sha256sum <"$requirements" | cut -c1-64)
  [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && return 0
  echo "installing the pinned Python packages of $requirements into $venv"
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv" || { echo "python3 -m venv failed"; exit 2; }
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements" || { echo "pip install failed"; exit 2; }
  echo "$want" >"$stamp"
}
