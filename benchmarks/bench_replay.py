"""Replay, verify and audit of many stored games, each beside the floor of the same run.

Run: ``.venv/bin/python benchmarks/bench_replay.py --games 1000 [--url URL] [--json FILE]``.
With no ``--url`` it uses a new SQLite file; the games are played by seeded bots
through the store (``store.play_bots``) in ``--jobs`` processes, so every row, anchor
and seal is the service's own. Figures:

- floor: read every event row (SQLAlchemy Core) and re-hash it, what any verify must do;
- replay through the chart, from rows read in bulk: a new table per game (cold), one
  warm table per chart class, and warm in ``--jobs`` processes (events/s);
- ``verify_all`` of every game (sealed anchors: no replay), serial and in processes;
  ``verify_all(replay=True)``; ``audit_all``; verify + audit together.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table as RichTable
from sqlalchemy import select

from charleston_fsm.ledger.verify import digest, fold_rows
from charleston_fsm.store import GameStore, NewGame, StoredEvent, play_bots
from charleston_fsm.store.database.models import EventRow

console = Console()


# -- making the games --------------------------------------------------------------------------
def _play(url: str, seeds: Sequence[int]) -> int:
    store = GameStore(url)
    for seed in seeds:
        play_bots(store, store.registry.create_game(NewGame(seed=seed)), seed)
    store.dispose()
    return len(seeds)


def make_games(url: str, count: int, jobs: int) -> None:
    """``count`` games played to their end by bots through the store, in ``jobs`` processes."""
    existing = len(GameStore(url).registry.games())
    seeds = list(range(existing, count))
    if not seeds:
        return
    chunks = [seeds[i : i + 25] for i in range(0, len(seeds), 25)]
    with Progress(console=console, transient=True) as bar, ProcessPoolExecutor(jobs) as pool:
        task = bar.add_task(f"playing {len(seeds)} games", total=len(seeds))
        for done in pool.map(_play, [url] * len(chunks), chunks):
            bar.advance(task, done)


# -- what is measured ----------------------------------------------------------------------------
def read_rows(store: GameStore) -> dict[str, list[StoredEvent]]:
    """Every event row, per game, in one Core statement."""
    by_game: dict[str, list[StoredEvent]] = {}
    with store.engine.connect() as conn:
        query = select(*EventRow.__table__.columns).order_by(EventRow.game_id, EventRow.seq)
        for row in conn.execute(query):
            by_game.setdefault(row.game_id, []).append(StoredEvent.from_row(row))
    return by_game


def read_and_rehash(store: GameStore) -> int:
    rows = 0
    for game_rows in read_rows(store).values():
        for row in game_rows:
            if digest(row) != row.hash:
                raise SystemExit(f"row {row.seq} of {row.game_id} does not match its hash")
            rows += 1
    return rows


def fold_all(games: Sequence[list[StoredEvent]], warm: bool) -> int:
    for rows in games:
        fold_rows(rows, warm=warm).snapshot()
    return sum(len(rows) for rows in games)


def _fold_chunk_in_worker(url: str, game_ids: Sequence[str]) -> int:
    store = GameStore(url)
    with store.engine.connect() as conn:
        query = (
            select(*EventRow.__table__.columns)
            .where(EventRow.game_id.in_(game_ids))
            .order_by(EventRow.game_id, EventRow.seq)
        )
        by_game: dict[str, list[StoredEvent]] = {}
        for row in conn.execute(query):
            by_game.setdefault(row.game_id, []).append(StoredEvent.from_row(row))
    store.dispose()
    return fold_all(list(by_game.values()), warm=True)


def fold_parallel(url: str, game_ids: Sequence[str], jobs: int) -> int:
    chunks = [list(game_ids[i : i + 250]) for i in range(0, len(game_ids), 250)]
    with ProcessPoolExecutor(jobs) as pool:
        return sum(pool.map(_fold_chunk_in_worker, [url] * len(chunks), chunks))


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """The median time of ``repeat`` runs of ``fn`` and its last result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2], result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--url", help="a database URL (default: a new SQLite file)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (median)")
    parser.add_argument("--replay-sample", type=int, default=300, help="games folded serially")
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    args = parser.parse_args()

    url = args.url or f"sqlite:///{tempfile.mkdtemp(prefix='bench-replay-')}/games.db"
    store = GameStore(url)
    store.core.upgrade()
    make_games(url, args.games, args.jobs)
    store.tamper.verify_all(jobs=args.jobs)  # seal any game not sealed yet (as a first verify does)
    game_ids = [g.id for g in store.registry.games()][: args.games]
    jobs = args.jobs

    figures: dict[str, dict[str, Any]] = {}

    def record(name: str, seconds: float, rows: int, games: int, note: str = "") -> None:
        figures[name] = {
            "seconds": round(seconds, 4),
            "rows": rows,
            "games": games,
            "rows_per_s": round(rows / seconds) if seconds else None,
            "seconds_per_10k_games": round(seconds * 10_000 / games, 2) if games else None,
            "note": note,
        }

    seconds, rows = timed(lambda: read_and_rehash(store), args.repeat)
    record("floor: read + re-hash every row", seconds, rows, len(game_ids), "Core, one statement")
    seconds, by_game = timed(lambda: read_rows(store), args.repeat)
    record("plain read of every row", seconds, rows, len(game_ids))
    sample = list(by_game.values())[: args.replay_sample]
    sample_rows = sum(len(r) for r in sample)
    seconds, _ = timed(lambda: fold_all(sample, warm=False), 1)
    record("replay, a new table per game", seconds, sample_rows, len(sample))
    seconds, _ = timed(lambda: fold_all(sample, warm=True), args.repeat)
    record("replay, warm table", seconds, sample_rows, len(sample))
    seconds, folded = timed(lambda: fold_parallel(url, game_ids, jobs), 1)
    record(f"replay, warm, {jobs} processes", seconds, folded, len(game_ids))

    verify_rows = sum(len(r) for r in by_game.values())
    for name, fn in [
        ("verify_all, serial (sealed)", lambda: store.tamper.verify_all(game_ids, jobs=1)),
        (
            f"verify_all, {jobs} processes (sealed)",
            lambda: store.tamper.verify_all(game_ids, jobs=jobs),
        ),
        (
            f"verify_all --replay, {jobs} processes",
            lambda: store.tamper.verify_all(game_ids, replay=True, jobs=jobs),
        ),
        (f"audit_all, {jobs} processes", lambda: store.auditor.audit_all(game_ids, jobs=jobs)),
    ]:
        seconds, swept = timed(fn, 1 if "replay" in name else args.repeat)
        assert not swept.failed, swept.failed[0].message
        record(name, seconds, verify_rows, len(game_ids), f"{swept.replayed} replayed")
    together = (
        figures[f"verify_all, {jobs} processes (sealed)"]["seconds"]
        + figures[f"audit_all, {jobs} processes"]["seconds"]
    )
    record("verify + audit (separate sweeps)", together, verify_rows, len(game_ids))

    out = RichTable(title=f"{len(game_ids)} games, {verify_rows} rows ({store.dialect})")
    for column in ("figure", "s", "rows/s", "s per 10k games", "note"):
        out.add_column(column, justify="left" if column in ("figure", "note") else "right")
    for name, f in figures.items():
        out.add_row(
            name,
            f"{f['seconds']:.3f}",
            f"{f['rows_per_s']:,}",
            f"{f['seconds_per_10k_games']:.1f}",
            f["note"],
        )
    console.print(out)
    if args.json:
        args.json.write_text(json.dumps({"url": store.dialect, "figures": figures}, indent=1))


if __name__ == "__main__":
    main()
