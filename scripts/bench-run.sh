#!/usr/bin/env bash
# Benchmarks what `taskdeck run` costs a command that writes a lot (issue #17): the same
# `cat FILE` alone and under `taskdeck run --` (its output piped through the runner, its lines
# read for the status, progress and tail, its reports sent to a headless release Taskdeck),
# output to /dev/null. Prints a markdown report (BENCHMARKS.md, "taskdeck run's output").
#
# Inputs (SIZE MiB each, made in a temp dir): `y` lines ("y\n", what `yes` writes: the most
# lines per byte), 100-byte log lines with a counter ("step 123/45678 ..."; every line shows
# progress), a `\r` progress bar (80-byte redraws, a newline every 100), and no output at all
# (an empty file: what starting and ending a job costs). For each, ROUNDS rounds run `cat`
# alone, `cat | cat` (the copy through one more pipe that any wrapper adds) and `cat` under
# `taskdeck run`. The table gives median wall times, the CPU time of the runner's process tree
# (`/usr/bin/time`: user + system of the runner and of `cat`, which it waits for), its
# throughput and its ratio to `cat | cat` in the same round. Every run must be a job Taskdeck
# recorded as completed with the file's last line at the end of its tail.
#
# Usage: scripts/bench-run.sh [SIZE MiB, default 32] [ROUNDS, default 5]
# Environment: NO_BUILD=1 to use target/release as it is; TASKDECK_BIN (default
# target/release/taskdeck).
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE=${1:-32}
ROUNDS=${2:-5}
[ "${NO_BUILD:-}" = 1 ] || flock /tmp/cargo.lock cargo build --release --bin taskdeck -q
BIN=${TASKDECK_BIN:-$PWD/target/release/taskdeck}
work=$(mktemp -d)
server=
cleanup() {
  [ -z "$server" ] || { kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true; }
  rm -rf "$work"
}
trap cleanup EXIT

"$BIN" serve --port 0 --data-dir "$work/data" --config-dir "$work/cfg" >"$work/server.out" 2>"$work/server.err" &
server=$!
for _ in $(seq 100); do grep -q "running headless" "$work/server.out" 2>/dev/null && break; sleep 0.1; done
grep -q "running headless" "$work/server.out" || { cat "$work/server.err" >&2; echo "bench-run: taskdeck did not start" >&2; exit 1; }

python3 - "$work" "$SIZE" <<'EOF'
import sys
work, size = sys.argv[1], int(sys.argv[2]) << 20
def fill(name, piece):
    with open(f"{work}/{name}", "wb") as f:
        written = 0
        i = 0
        while written < size:
            chunk = piece(i)
            f.write(chunk)
            written += len(chunk)
            i += 1
fill("y", lambda i: b"y\n" * 65536)
fill("log", lambda i: b"".join(
    (f"step {n}/10000000 compiled module_{n % 977} in {n % 89} ms".ljust(99) + "\n").encode()
    for n in range(i * 1000, i * 1000 + 1000)))
fill("bar", lambda i: b"".join(
    (f"\r[{'#' * (n % 60):<60}] {n % 100:3d}% {n}".ljust(80)).encode() + (b"\n" if n % 100 == 99 else b"")
    for n in range(i * 1000, i * 1000 + 1000)))
EOF

# measure OUT CMD...: appends "wall cpu" (seconds) of CMD, its stdout to /dev/null, to OUT.
measure() {
  local out=$1; shift
  local start end
  start=$(date +%s.%N)
  /usr/bin/time -f "%U %S" -o "$work/time" "$@" >/dev/null 2>>"$work/run.err" \
    || { cat "$work/run.err" >&2; echo "bench-run: $* failed" >&2; exit 1; }
  end=$(date +%s.%N)
  read -r user sys <"$work/time"
  echo "$(echo "$end - $start" | bc) $(echo "$user + $sys" | bc)" >>"$out"
}

echo "\`scripts/bench-run.sh $SIZE $ROUNDS\` ($(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores,"
echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average $(cut -d' ' -f1-3 /proc/loadavg)):"
echo
echo "| output ($SIZE MiB) | lines | \`cat\` alone | \`cat \| cat\` | under \`taskdeck run\` | CPU (runner + cat) | MiB/s | vs \`cat \| cat\` |"
echo "|---|---|---|---|---|---|---|---|"
: >"$work/none"
for input in y log bar none; do
  file=$work/$input
  : >"$work/$input.alone"; : >"$work/$input.pipe"; : >"$work/$input.run"
  for _ in $(seq "$ROUNDS"); do
    measure "$work/$input.alone" cat "$file"
    measure "$work/$input.pipe" sh -c 'cat "$1" | cat' sh "$file"
    measure "$work/$input.run" "$BIN" --data-dir "$work/data" --config-dir "$work/cfg" run --name "bench $input" -- cat "$file"
  done
  # Every run was a job that Taskdeck recorded, with the output's last line at the end of its tail.
  "$BIN" --data-dir "$work/data" --config-dir "$work/cfg" tasks list --json >"$work/jobs.json"
  python3 - "$work" "$input" "$ROUNDS" <<'EOF2' || exit 1
import json, sys
work, name, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
jobs = [t for t in json.load(open(f"{work}/jobs.json"))["tasks"] if t.get("title") == f"bench {name}"]
data = open(f"{work}/{name}", "rb").read()
last = data.rstrip(b"\n").split(b"\n")[-1].split(b"\r")[-1].decode().strip()
for job in jobs:
    tail = job["result"]["structuredContent"]["tail"]
    if job["status"] != "completed" or job["result"]["structuredContent"]["exitCode"] != 0 or not tail.endswith(last):
        sys.exit(f"bench-run: job {job['taskId']} ({name}) ended {job['status']} with tail ...{tail[-80:]!r}, not ...{last!r}")
if len(jobs) != rounds:
    sys.exit(f"bench-run: {len(jobs)} jobs recorded for {name}, not {rounds}")
EOF2
  python3 - "$work" "$input" "$SIZE" <<'EOF'
import statistics, sys
work, name, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
def rows(kind):
    return [tuple(map(float, l.split())) for l in open(f"{work}/{name}.{kind}")]
alone, pipe, run = rows("alone"), rows("pipe"), rows("run")
lines = open(f"{work}/{name}", "rb").read().count(b"\n")
wall = lambda rs: statistics.median(r[0] for r in rs)
ratio = statistics.median(r[0] / p[0] for r, p in zip(run, pipe))
label = {"y": '`y` lines ("y\\n")', "log": "100-byte log lines with progress",
         "bar": "`\\r` progress bar, a newline every 100 redraws", "none": "none (an empty file)"}[name]
speed = f"{size / wall(run):.0f}" if name != "none" else "-"
print(f"| {label} | {lines:,} | {wall(alone):.3f} s | {wall(pipe):.3f} s | {wall(run):.3f} s "
      f"| {statistics.median(r[1] for r in run):.2f} s | {speed} | {ratio:.1f}x |")
EOF
done
echo
echo "Medians of $ROUNDS rounds; each round runs \`cat\` alone, \`cat | cat\`, then \`cat\` under \`taskdeck run\`."
