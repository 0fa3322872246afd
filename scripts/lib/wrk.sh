# Sourced by the benchmark scripts that drive the server with wrk (scripts/bench.sh,
# scripts/bench-fleet.sh).
#
# need_wrk: installs wrk (Debian's package) unless it is on PATH; uses sudo when not root.
need_wrk() {
  command -v wrk >/dev/null && return 0
  local sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends wrk
}
