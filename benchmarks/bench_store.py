"""What the event store costs, next to the database's own floor measured in the same run.

Run: ``.venv/bin/python benchmarks/bench_store.py [--pg-admin URL] [--quick]``. PostgreSQL
(default admin URL ``postgresql+psycopg://postgres@127.0.0.1:5432/postgres``) gets a
scratch database that is dropped afterwards; SQLite a temporary file. Skips PostgreSQL
when no server answers.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import psycopg
from rich.console import Console
from rich.table import Table as RichTable
from sqlalchemy import text

from charleston_fsm.commands import ConfirmPass, WithdrawPass
from charleston_fsm.seats import SEATS, Seat
from charleston_fsm.store import GameStore, play_bots
from charleston_fsm.store.urls import render, resolve_url
from charleston_fsm.tiles import is_joker
from charleston_fsm.views import seat_view

console = Console()


def timed(fn: Callable[[], object], repeat: int, setup: Callable[[], object] | None = None):
    samples = []
    for _ in range(repeat):
        arg = setup() if setup else None
        start = time.perf_counter()
        fn() if setup is None else fn(arg)  # type: ignore[call-arg]
        samples.append(time.perf_counter() - start)
    return samples


def three(store: GameStore, game_id: str, seat: Seat) -> list[int]:
    return [t for t in store.table(game_id).racks[seat] if not is_joker(t)][:3]


def bot_game(store: GameStore, seed: int) -> str:
    game_id = store.create_game(seed=seed)
    play_bots(store, game_id, seed, view_of=lambda s: seat_view(store.table(game_id), s))
    return game_id


def measure(store: GameStore, quick: bool) -> dict[str, list[float]]:
    n = 40 if quick else 300
    results: dict[str, list[float]] = {}
    with store.engine.begin() as conn:
        conn.execute(text("CREATE TABLE bench_floor (id VARCHAR(40) PRIMARY KEY, doc TEXT)"))

    def select_one() -> None:
        with store.engine.connect() as conn:
            conn.execute(text("SELECT 1")).scalar()

    def insert_commit() -> None:
        with store.engine.connect() as conn:
            conn.execution_options(charleston_write=True)
            with conn.begin():
                conn.execute(
                    text("INSERT INTO bench_floor VALUES (:id, :doc)"),
                    {"id": uuid.uuid4().hex, "doc": "{}"},
                )

    for _ in range(20):  # warm the pool
        select_one()
    results["floor: SELECT 1 (pool checkout + round trip)"] = timed(select_one, n)
    results["floor: one-row INSERT + COMMIT"] = timed(insert_commit, n)

    # one command that changes no state but the selection: confirm, withdraw, confirm…
    game_id = store.create_game(seed=1)
    tiles = three(store, game_id, Seat.EAST)
    commands = [ConfirmPass(seat=Seat.EAST, tiles=tiles), WithdrawPass(seat=Seat.EAST)]
    counter = iter(range(10**9))
    results["execute: one command (1 event row)"] = timed(
        lambda: store.execute(game_id, commands[next(counter) % 2]), n
    )

    # the resolving command: the fourth confirm writes 4 transfers + resolved + state
    def ready() -> tuple[str, ConfirmPass]:
        gid = store.create_game(seed=random.randrange(10**6))
        for seat in SEATS[:3]:
            store.execute(gid, ConfirmPass(seat=seat, tiles=three(store, gid, seat)))
        return gid, ConfirmPass(seat=Seat.NORTH, tiles=three(store, gid, Seat.NORTH))

    results["execute: resolving a pass (7 event rows)"] = timed(
        lambda g: store.execute(g[0], g[1]), max(10, n // 6), setup=ready
    )
    results["execute: duplicate command id"] = timed(
        lambda: store.execute(game_id, commands[0], command_id="dup"), n // 2
    )
    results["table(): projection read"] = timed(lambda: store.table(game_id), n)

    games = [bot_game(store, seed) for seed in range(3)]
    seeds = iter(range(100, 10**6))
    results["whole bot game, views via table() + seat_view"] = timed(
        lambda: bot_game(store, next(seeds)), 3 if quick else 10
    )

    def bot_game_store_views(seed: int) -> None:
        play_bots(store, store.create_game(seed=seed), seed)

    results["whole bot game, views via store.view()"] = timed(
        lambda: bot_game_store_views(next(seeds)), 3 if quick else 10
    )
    results["view(): one seat's view from the projection"] = timed(
        lambda: store.view(game_id, Seat.EAST), n
    )
    results["replay(): fold a finished game"] = timed(
        lambda: store.replay(games[0]), 10 if quick else 50
    )
    results["verify(): re-hash a finished game"] = timed(
        lambda: store.verify(games[0]), 10 if quick else 50
    )
    rows = len(store.events(games[0]))
    console.print(f"[dim]{store.dialect}: a finished game has {rows} event rows")
    return results


def pg_scratch(admin: str) -> tuple[str, Callable[[], None]] | None:
    libpq = render(resolve_url(admin).set(drivername="postgresql"))
    name = f"charleston_bench_{uuid.uuid4().hex[:8]}"
    try:
        with psycopg.connect(libpq, autocommit=True, connect_timeout=3) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
    except psycopg.Error as exc:
        console.print(f"[yellow]PostgreSQL skipped: {exc}")
        return None

    def drop() -> None:
        with psycopg.connect(libpq, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    return render(resolve_url(admin).set(database=name)), drop


def ms(samples: list[float]) -> tuple[str, str]:
    ordered = sorted(samples)
    p95 = ordered[max(0, int(len(ordered) * 0.95) - 1)]
    return f"{statistics.median(ordered) * 1e3:.2f}", f"{p95 * 1e3:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--pg-admin", default="postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
    )
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()

    columns: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        store = GameStore(f"sqlite:///{Path(tmp) / 'bench.sqlite3'}")
        store.upgrade()
        columns["SQLite"] = measure(store, args.quick)
        store.dispose()
    scratch = pg_scratch(args.pg_admin)
    if scratch:
        url, drop = scratch
        try:
            store = GameStore(url)
            store.upgrade()
            columns["PostgreSQL"] = measure(store, args.quick)
            store.dispose()
        finally:
            drop()

    out = RichTable(title="Event store costs (ms)")
    out.add_column("operation")
    for backend in columns:
        out.add_column(f"{backend} median", justify="right")
        out.add_column(f"{backend} p95", justify="right")
        out.add_column("× INSERT floor", justify="right")
    names = list(next(iter(columns.values())))
    for name in names:
        cells = []
        for results in columns.values():
            floor = statistics.median(results["floor: one-row INSERT + COMMIT"])
            cells += [*ms(results[name]), f"{statistics.median(results[name]) / floor:.1f}"]
        out.add_row(name, *cells)
    console.print(out)


if __name__ == "__main__":
    main()
