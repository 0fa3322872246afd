# Sourced by the benchmark scripts (scripts/bench.sh, scripts/bench-fleet.sh).
#
# wait_for_index DATA_DIR [SECONDS, default 600]: waits until the search index
# (DATA_DIR/search.sqlite3, kept by a low-priority thread of the server) has seen the store's
# last event (DATA_DIR/taskdeck.sqlite3), so that measurements show steady state, not a first
# index build. Exits the script with a message when it has not caught up in SECONDS.
wait_for_index() {
  python3 - "$1" "${2:-600}" <<'PY'
import sqlite3, sys, time
data, limit = sys.argv[1], float(sys.argv[2])
deadline = time.monotonic() + limit
while time.monotonic() < deadline:
    newest = sqlite3.connect(f"file:{data}/taskdeck.sqlite3?mode=ro", uri=True).execute(
        "SELECT ifnull(max(id), 0) FROM events").fetchone()[0]
    try:
        seen = sqlite3.connect(f"file:{data}/search.sqlite3?mode=ro", uri=True).execute(
            "SELECT ifnull(max(value), 0) FROM meta WHERE key = 'event_id'").fetchone()[0]
    except sqlite3.Error:
        seen = -1
    if seen >= newest:
        sys.exit(0)
    time.sleep(0.2)
sys.exit(f"search index did not catch up in {limit:.0f} s")
PY
}
