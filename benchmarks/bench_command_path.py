"""The command path's load-robust figures: CPU per command, statements and socket waits.

Run: ``.venv/bin/python benchmarks/bench_command_path.py [--pg-admin URL] [-n 600]``.
Wall-clock times swing with whatever else the machine runs; the process's CPU time per
command and the number of statements and psycopg socket waits per command (counted by
cProfile) do not, so they compare two versions of the store on a busy machine. See
``docs/bench/history.md``, "The command path".
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import tempfile
import time
from pathlib import Path

from bench_store import pg_scratch, three
from rich.console import Console

from charleston_fsm.engine.commands import ConfirmPass, WithdrawPass
from charleston_fsm.engine.seats import Seat
from charleston_fsm.store import GameStore, NewGame

console = Console()
#: psycopg functions whose calls per command are counted (statements, waits, BEGIN/COMMIT)
COUNTED = {"execute": "statements", "wait": "socket waits", "_exec_command": "tx commands"}


def figures(store: GameStore, n: int) -> str:
    game_id = store.registry.create_game(NewGame(seed=1))
    commands = [ConfirmPass(seat=Seat.EAST, tiles=three(store, game_id, Seat.EAST))]
    commands.append(WithdrawPass(seat=Seat.EAST))
    for i in range(50):  # warm: pool, prepared statements, charts
        store.writes.execute(game_id, commands[i % 2])
    start = time.process_time()
    for i in range(n):
        store.writes.execute(game_id, commands[i % 2])
    cpu = (time.process_time() - start) / n * 1e3
    profile = cProfile.Profile()
    profile.enable()
    for i in range(100):
        store.writes.execute(game_id, commands[i % 2])
    profile.disable()
    calls: dict[str, float] = {}
    for (filename, _line, name), stat in pstats.Stats(profile).stats.items():  # type: ignore[attr-defined]
        if name in COUNTED and "psycopg" in filename:
            calls[COUNTED[name]] = calls.get(COUNTED[name], 0) + stat[0] / 100
    counted = ", ".join(f"{k} {v:.1f}" for k, v in sorted(calls.items()))
    return f"CPU {cpu:.3f} ms/command" + (f"; per command: {counted}" if counted else "")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--pg-admin", default="postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
    )
    parser.add_argument("-n", type=int, default=600)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = GameStore(f"sqlite:///{Path(tmp) / 'bench.sqlite3'}")
        store.core.upgrade()
        console.print(f"SQLite: {figures(store, args.n)}")
        store.dispose()
    scratch = pg_scratch(args.pg_admin)
    if scratch:
        url, drop = scratch
        try:
            store = GameStore(url)
            store.core.upgrade()
            console.print(f"PostgreSQL: {figures(store, args.n)}")
            store.dispose()
        finally:
            drop()


if __name__ == "__main__":
    main()
