"""Rows 1-2: one command through the store, and commands/s of four store processes."""

from __future__ import annotations

import statistics
import uuid
from typing import Any

from ..engine.commands import ConfirmPass, WithdrawPass
from ..engine.seats import Seat
from ..engine.tiles import is_joker
from ..store import GameStore, NewGame
from . import floors
from .databases import Database
from .figures import Figure, Goal, timed
from .processes import rate_of, run_for

PROCESSES = 4
#: a store command's p50 at most this many times INSERT + COMMIT (issue 34)
COMMAND_RATIO = {"PostgreSQL": 2.5, "SQLite": 4.0}


def plain_tiles(store: GameStore, game_id: str, seat: Seat) -> list[int]:
    """The first three non-joker tiles of the seat's rack: a legal first pass."""
    return [t for t in store.reads.table(game_id).racks[seat] if not is_joker(t)][:3]


def toggle(store: GameStore, game_id: str) -> list[ConfirmPass | WithdrawPass]:
    """Confirm, withdraw, confirm…: a one-row command that leaves the game where it was."""
    tiles = plain_tiles(store, game_id, Seat.EAST)
    return [ConfirmPass(seat=Seat.EAST, tiles=tiles), WithdrawPass(seat=Seat.EAST)]


def command_row(database: Database, samples: int) -> Figure:
    """p50 of ``store.writes.execute`` beside a bare INSERT + COMMIT of the same row shape."""
    store = database.store()
    conn = database.connect()
    try:
        floors.create_tables(database, 0)
        game_id = store.registry.create_game(NewGame(seed=1))
        commands = toggle(store, game_id)
        flip, seq = iter(range(10**9)), iter(range(1, 10**9))
        floor_game = f"floor-{uuid.uuid4().hex[:12]}"
        for _ in range(10):  # warm both paths: pools, statement caches, the chart
            store.writes.execute(game_id, commands[next(flip) % 2])
            floors.insert_commit(database, conn, floor_game, next(seq))
        run = timed(lambda: store.writes.execute(game_id, commands[next(flip) % 2]), samples)
        floor = timed(lambda: floors.insert_commit(database, conn, floor_game, next(seq)), samples)
    finally:
        conn.close()
        store.dispose()
    bound = COMMAND_RATIO[database.name]
    return Figure(
        row="command",
        database=database.name,
        name="one command through the store, p50",
        value=statistics.median(run) * 1e3,
        unit="ms",
        floor=statistics.median(floor) * 1e3,
        floor_name=f"INSERT + COMMIT through {_driver(database)}",
        goal=Goal(f"≤ {bound}× the floor", bound, of="ratio"),
        details={"samples": samples},
    )


def _driver(database: Database) -> str:
    return "psycopg" if database.is_postgres else "sqlite3"


def _store_worker(url: str, game_id: str, barrier: Any, seconds: float) -> int:
    store = GameStore(url)
    try:
        commands = toggle(store, game_id)
        store.writes.execute(game_id, commands[0])  # connect and warm before the clock
        turn = iter(range(1, 10**12))
        return run_for(
            barrier, seconds, lambda: store.writes.execute(game_id, commands[next(turn) % 2])
        )
    finally:
        store.dispose()


def throughput_row(database: Database, seconds: float) -> Figure:
    """Commands/s of four store processes on four games, beside pgbench running the same
    transaction shape (a bare-driver process floor where pgbench is missing, or SQLite)."""
    store = database.store()
    try:
        games = [store.registry.create_game(NewGame(seed=seed)) for seed in range(PROCESSES)]
    finally:
        store.dispose()
    rate, counts = rate_of(_store_worker, [(database.url, g) for g in games], seconds)
    floor = floors.pgbench_rate(database, PROCESSES, seconds) if database.is_postgres else None
    if floor is not None:
        floor_name = f"pgbench, {PROCESSES} clients, same transaction shape"
    else:
        floor = floors.python_floor_rate(database, PROCESSES, seconds)
        floor_name = f"{PROCESSES} {_driver(database)} processes, same transaction shape"
    return Figure(
        row="throughput",
        database=database.name,
        name=f"commands/s through the store, {PROCESSES} processes on distinct games",
        value=rate,
        unit="/s",
        floor=floor,
        floor_name=floor_name,
        goal=Goal("≥ half the floor", 2.0, of="ratio"),
        higher_is_better=True,
        details={"seconds": seconds, "per_process": counts},
    )
