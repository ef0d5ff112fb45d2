"""What ``record verify`` costs on big and hostile files: time and peak memory.

``python -m charleston_fsm.bench.record_file [--megabytes 60] [--dir DIR]`` writes three
files and verifies each in a child process (its peak RSS from ``getrusage``):

- *valid*: one bot game followed by rulings until the record holds ``--megabytes`` MB,
  correctly chained and signed (the rows replay; the rulings are annotation rows), so
  verify reads and checks every line and answers ok;
- *one game*: the bot game's own record (the floor: starting the command line);
- *repeated*: one game's record written over and over to ``--megabytes`` MB, and to
  200 MB (the file of issue 30);
- *one line*: a header, then one line of ``--megabytes`` MB.

Each verify prints its verdict's first lines; the table gives the wall time, the peak
RSS and the exit code (docs/bench/history.md, "record verify").
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

from ..ledger.hashing import row_hash
from ..ledger.record import export_record, public_key_text, record_lines
from ..store import GameStore, NewGame, StoredEvent, load_key, play_bots

_KEY = "bench-record-file-key-0123456789abcdef"
# run as ``python -c _MEASURE FILE KEY``: verify's output to stderr, then "seconds kb exit"
_MEASURE = """
import os, subprocess, sys, time
start = time.perf_counter()
child = subprocess.Popen(
    [sys.executable, "-c", "from charleston_fsm.cli import app; app()", "record", "verify",
     sys.argv[1], "--public-key", sys.argv[2]], stdout=sys.stderr)
_, status, usage = os.wait4(child.pid, 0)
print(time.perf_counter() - start, usage.ru_maxrss, os.waitstatus_to_exitcode(status))
"""


def _game(directory: Path) -> tuple[list[StoredEvent], str, str]:
    """One finished bot game's rows, its record and the public key that signed it."""
    store = GameStore(f"sqlite:///{directory / 'games.sqlite3'}", anchor_key=load_key(_KEY))
    try:
        store.core.upgrade()
        game_id = store.registry.create_game(NewGame(seed=7))
        play_bots(store, game_id, 7)
        return (
            store.reads.events(game_id),
            export_record(store, game_id),
            public_key_text(store.anchor_key),
        )
    finally:
        store.dispose()


def _with_rulings(rows: list[StoredEvent], megabytes: int) -> list[StoredEvent]:
    """``rows`` then rulings, chained, until their JSON holds ``megabytes`` MB."""
    out, last = list(rows), rows[-1]
    size = sum(len(json.dumps(r.to_dict())) for r in rows)
    text = "a note the director wrote for the record of this table " * 4
    while size < megabytes << 20:
        seq = last.seq + 1
        fields = {
            "game_id": last.game_id,
            "seq": seq,
            "type": "ruling_recorded",
            "seat": None,
            "step": None,
            "payload": {"kind": "note", "text": f"{seq}: {text}"},
            "command_id": f"ruling-{seq}",
            "created_at": last.created_at + timedelta(seconds=1),
            "prev_hash": last.hash,
        }
        last = StoredEvent(**fields, hash=row_hash(**fields))
        out.append(last)
        size += len(json.dumps(last.to_dict()))
    return out


def _measure(path: Path, key: str) -> dict[str, object]:
    """``record verify FILE`` in a grandchild: wall time, its own peak RSS, exit code, and
    how many lines it printed. A child's peak RSS starts at its parent's size when it
    forks (before its exec), so a small Python process forks it and reads ``wait4``."""
    with tempfile.TemporaryFile("w+", encoding="utf-8") as printed:
        done = subprocess.run(
            [sys.executable, "-c", _MEASURE, str(path), key],
            stdout=subprocess.PIPE,
            stderr=printed,
            env={**os.environ, "COLUMNS": "200"},
            text=True,
            check=True,
        )
        printed.seek(0)
        lines = printed.read().splitlines()
    seconds, peak_kb, code = done.stdout.split()
    return {
        "file": path.name,
        "size_mb": round(path.stat().st_size / (1 << 20), 1),
        "seconds": round(float(seconds), 2),
        "peak_rss_mb": round(int(peak_kb) / 1024, 1),
        "exit": int(code),
        "lines_printed": len(lines),
        "first_lines": [line[:160] for line in lines[:3]],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=60, help="the valid record's size")
    parser.add_argument("--dir", help="where the files go (default: a temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(args.dir or scratch)
        directory.mkdir(parents=True, exist_ok=True)
        rows, record, key = _game(directory)
        valid = directory / "valid.jsonl"
        with valid.open("w", encoding="utf-8") as out:
            for line in record_lines(_with_rulings(rows, args.megabytes), load_key(_KEY)):
                out.write(json.dumps(line, ensure_ascii=False) + "\n")
        small = directory / "one-game.jsonl"
        small.write_text(record, encoding="utf-8")
        repeated = {}
        for megabytes in (args.megabytes, 200):
            repeated[megabytes] = directory / f"repeated-{megabytes}.jsonl"
            with repeated[megabytes].open("w", encoding="utf-8") as out:
                for _ in range((megabytes << 20) // len(record.encode())):
                    out.write(record)
        one_line = directory / f"one-line-{args.megabytes}.jsonl"
        with one_line.open("w", encoding="utf-8") as out:
            out.write(record.splitlines()[0] + "\n")
            out.write('{"kind": "row", "payload": "' + "x" * (args.megabytes << 20) + '"}\n')
        for path in (small, valid, repeated[args.megabytes], repeated[200], one_line):
            print(json.dumps(_measure(path, key), ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
