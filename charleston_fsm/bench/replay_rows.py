"""Rows 4-5: replay through the chart, and verify + audit of many stored games."""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Callable, Sequence

from sqlalchemy import select

from ..engine.seats import SEATS
from ..ledger.hashing import row_hash
from ..store import GameStore, NewGame, StoredEvent, play_bots
from ..store.database.models import EventRow
from .databases import Database
from .figures import Figure, Goal

FULL_GAMES = 10_000
VERIFY_SECONDS = 20.0  # the target for FULL_GAMES games, scaled to the games measured
REPLAY_TARGET = 50_000.0


def _play_worker(url: str, seeds: Sequence[int]) -> list[str]:
    store = GameStore(url)
    try:
        ids = []
        for seed in seeds:
            game_id = store.registry.create_game(NewGame(seed=seed))
            play_bots(store, game_id, seed, from_answers=True)
            ids.append(game_id)
        return ids
    finally:
        store.dispose()


def stored_games(
    database: Database, games: int, processes: int = 4, tick: Callable[[int], None] | None = None
) -> list[str]:
    """``games`` bot games played through the store, by ``processes`` processes."""
    seeds = list(range(games))
    chunks = [seeds[i : i + 25] for i in range(0, games, 25)]
    ids: list[str] = []
    with multiprocessing.get_context("spawn").Pool(processes) as pool:
        for done in pool.imap_unordered(_play_chunk, [(database.url, c) for c in chunks]):
            ids += done
            if tick:
                tick(len(done))
    return ids


def _play_chunk(job: tuple[str, Sequence[int]]) -> list[str]:
    return _play_worker(*job)


def fold_without_chart(rows: Sequence[StoredEvent]) -> dict[str, set[int]]:
    """The racks after the rows, by set arithmetic on the transfers: no chart, no rules."""
    hands = rows[0].payload["deal"]["hands"]
    racks = {s.value: set(hands[s.value]) for s in SEATS}
    for row in rows[1:]:
        if row.type == "tiles_transferred":
            payload = row.payload
            racks[row.seat or ""].difference_update(payload["from_hand"])
            racks[payload["receiver"]].update(payload["kept"])
    return racks


def _read_rows(store: GameStore, game_ids: Sequence[str] | None = None) -> list[StoredEvent]:
    """Every row of ``game_ids`` (default: all) in one ordered query: the plain read."""
    query = select(EventRow).order_by(EventRow.game_id, EventRow.seq)
    if game_ids is not None:
        query = query.where(EventRow.game_id.in_(list(game_ids)))
    with store.engine.connect() as conn:
        return [StoredEvent.from_row(r) for r in conn.execute(query)]


def _plain_read(database: Database, game_ids: Sequence[str]) -> int:
    """The rows of each game by one bare-driver query per game, as replay reads them."""
    conn = database.connect()
    marker = "%s" if database.is_postgres else "?"
    query = f"SELECT * FROM events WHERE game_id = {marker} ORDER BY seq"
    try:
        return sum(len(conn.execute(query, (g,)).fetchall()) for g in game_ids)
    finally:
        conn.close()


def replay_row(database: Database, game_ids: Sequence[str]) -> Figure:
    """Events/s of ``store.reads.replay`` (read, check, fold through the chart) per game, beside
    a plain per-game read of the same rows; a fold without the chart in the details."""
    store = database.store()
    try:
        start = time.perf_counter()
        for game_id in game_ids:
            store.reads.replay(game_id)
        replay_s = time.perf_counter() - start
        start = time.perf_counter()
        events = _plain_read(database, game_ids)
        read_s = time.perf_counter() - start
        rows = _read_rows(store, game_ids)
    finally:
        store.dispose()
    by_game: dict[str, list[StoredEvent]] = {}
    for row in rows:
        by_game.setdefault(row.game_id, []).append(row)
    start = time.perf_counter()
    for game_rows in by_game.values():
        fold_without_chart(game_rows)
    fold_s = time.perf_counter() - start
    fold_rate = events / fold_s
    return Figure(
        row="replay",
        database=database.name,
        name=f"replay of {len(game_ids)} stored games through the chart",
        value=events / replay_s,
        unit="events/s",
        floor=events / read_s,
        floor_name=(
            f"plain SQL read of the same rows (a fold without the chart: {fold_rate:,.0f}/s)"
        ),
        goal=Goal(f"≥ {REPLAY_TARGET:,.0f} events/s", REPLAY_TARGET, at_least=True),
        higher_is_better=True,
        details={"events": events, "fold_without_chart_per_s": fold_rate},
    )


def verify_row(database: Database, game_ids: Sequence[str]) -> Figure:
    """Seconds for verify + audit of every game in one sweep (``store.auditor.audit_all``: rows read
    in bulk, one process per core, sealed games checked against their signed replay digest
    instead of replayed), beside reading all their rows in one query and re-hashing each."""
    store = database.store()
    try:
        start = time.perf_counter()
        sweep = store.auditor.audit_all(list(game_ids), jobs=os.cpu_count() or 1)
        sweep_s = time.perf_counter() - start
        if sweep.failed:
            raise RuntimeError(f"bench game {sweep.failed[0].game_id} failed verify")
        start = time.perf_counter()
        rows = _read_rows(store, game_ids)
        mismatched = sum(row_hash(**r.hashed()) != r.hash for r in rows)
        floor_s = time.perf_counter() - start
    finally:
        store.dispose()
    if mismatched:
        raise RuntimeError(f"{mismatched} bench rows do not hash to their stored hash")
    bound = VERIFY_SECONDS * len(game_ids) / FULL_GAMES
    return Figure(
        row="verify",
        database=database.name,
        name=f"verify + audit of {len(game_ids):,} stored games ({len(rows):,} rows)",
        value=sweep_s,
        unit="s",
        floor=floor_s,
        floor_name="read and re-hash all rows",
        goal=Goal(f"< {VERIFY_SECONDS:.0f} s per {FULL_GAMES:,} games ({bound:.3g} s)", bound),
        details={
            "rows": len(rows),
            "audits": len(sweep.audits),
            "replayed": sweep.replayed,
            "sealed_by_the_sweep": sweep.sealed,
        },
    )
