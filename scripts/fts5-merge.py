#!/usr/bin/env python3
"""What FTS5's merge setting and the size of a pass cost the search index (BENCHMARKS.md, "The
search indexer's passes"), measured with SQLite's own FTS5 (Python's sqlite3 module).

Builds an index like Taskdeck's (trigram tokenizer, detail=none, contentless, WAL,
synchronous=OFF, 1 MiB page cache) from N texts shaped like a settled `echo` task's (tool,
arguments, status message, result, taskId; ~200 bytes), inserted in transactions of PASS texts,
once per `automerge` setting; prints the CPU per text inserted (process time), the time of a
few trigram queries afterwards, the index's size and the largest its WAL grew (this script
sets no journal_size_limit).

Python's sqlite3 may be older than Taskdeck's bundled SQLite (no `contentless_delete`), and
each insert pays Python's call overhead (~1-2 µs): compare the rows with each other, not with
the server's figures.

Usage: scripts/fts5-merge.py [N, default 200000] [PASS, default 800] [automerge values, default 4,8,16]
"""

import json
import os
import sqlite3
import sys
import tempfile
import time
import uuid

N = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
PASS = int(sys.argv[2]) if len(sys.argv) > 2 else 800
SETTINGS = [int(v) for v in (sys.argv[3] if len(sys.argv) > 3 else "4,8,16").split(",")]
if N < 1 or PASS < 1:
    sys.exit("usage: scripts/fts5-merge.py [N >= 1] [PASS >= 1] [automerge values]")
# Taskdeck's index drops rows in place (contentless_delete, SQLite 3.43+) when this SQLite has it.
DELETE = ", contentless_delete=1" if sqlite3.sqlite_version_info >= (3, 43, 0) else ""
QUERIES = ['"ell" AND "llo"', '"abc"', '"o 1" AND " 12"']


def texts(n):
    out = []
    for i in range(n):
        task_id = "%012x-%s" % (1_733_000_000_000 + i, uuid.uuid4().hex)
        arguments = json.dumps({"message": "hello %d" % i})
        result = json.dumps({"content": [{"type": "text", "text": "echo: hello %d" % i}], "isError": False})
        out.append("\n".join(["echo", arguments, "echo: hello %d" % i, result, task_id]).lower())
    return out


def run(docs, automerge, path):
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    c = sqlite3.connect(path, isolation_level=None)
    if c.execute("PRAGMA journal_mode=WAL").fetchone()[0] != "wal":
        sys.exit("fts5-merge: WAL mode refused")
    c.execute("PRAGMA synchronous=OFF")
    c.execute("PRAGMA cache_size=-1024")
    c.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize='trigram', detail=none, content=''" + DELETE + ")")
    c.execute("INSERT INTO t(t, rank) VALUES ('automerge', ?)", (automerge,))
    start = time.process_time()
    for first in range(0, len(docs), PASS):
        c.execute("BEGIN")
        c.executemany(
            "INSERT INTO t(rowid, text) VALUES (?, ?)",
            [(i + 1, docs[i]) for i in range(first, min(len(docs), first + PASS))],
        )
        c.execute("COMMIT")
    cpu = time.process_time() - start
    start = time.perf_counter()
    for _ in range(20):
        for q in QUERIES:
            c.execute("SELECT count(*) FROM t WHERE t MATCH ?", (q,)).fetchone()
    query = (time.perf_counter() - start) / (20 * len(QUERIES))
    wal = os.path.getsize(path + "-wal") if os.path.exists(path + "-wal") else 0
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = os.path.getsize(path)
    c.close()
    return cpu / len(docs) * 1e6, query * 1e3, size / 2**20, wal / 2**20


def main():
    docs = texts(N)
    print(f"SQLite {sqlite3.sqlite_version}; {N} texts in passes of {PASS}")
    print("| automerge | CPU per text inserted | query (mean of 60) | index size | its WAL's high-water mark |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as d:
        for automerge in SETTINGS:
            us, ms, mib, wal = run(docs, automerge, os.path.join(d, "index.sqlite3"))
            print(f"| {automerge} | {us:.1f} µs | {ms:.2f} ms | {mib:.1f} MiB | {wal:.1f} MiB |", flush=True)


if __name__ == "__main__":
    main()
