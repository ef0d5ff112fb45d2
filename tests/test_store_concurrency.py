"""Racing writers on one game (threads and processes), and a connection killed mid-command."""

from __future__ import annotations

import multiprocessing
from collections import Counter
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor

import psycopg
import pytest
from fault_injection import kill_blocked, libpq
from sqlalchemy import select
from sqlalchemy.engine import make_url
from store_workers import Outcome, seat_worker, toggler

from charleston_fsm.engine.commands import ConfirmPass
from charleston_fsm.engine.seats import SEATS, Seat
from charleston_fsm.engine.table import tiles_held
from charleston_fsm.engine.tiles import TILE_COUNT, is_joker
from charleston_fsm.store import GameStore, NewGame, OutcomeUnknown
from charleston_fsm.store.database.models import CommandRow, EventRow, GameRow, ProjectionRow

WORKERS_PER_SEAT = 2


def race(store: GameStore, url: str, executor: Executor, ruleset: str = "nmjl") -> list[Outcome]:
    game_id = store.registry.create_game(NewGame(ruleset, seed=11))
    futures = [
        executor.submit(seat_worker, url, game_id, seat.value, n)
        for seat in SEATS
        for n in range(WORKERS_PER_SEAT)
    ]
    # meanwhile a director reads: never half a command, never a false alarm
    reads = 0
    while not all(f.done() for f in futures) or reads == 0:
        table = store.reads.table(game_id)
        assert sorted(tiles_held(table)) == list(range(TILE_COUNT))
        assert store.tamper.verify(game_id).ok
        store.reads.replay(game_id)  # a fold of a partial command would raise ReplayMismatch
        assert store.auditor.check_projections() == []
        reads += 1
    outcomes: list[Outcome] = []
    for future in futures:
        done, _refusals, conflicts = future.result(timeout=180)
        outcomes.extend(done)
        assert conflicts == 0  # writers wait for the game's lock, they do not lose
    check_race(store, game_id, outcomes)
    return outcomes


def check_race(store: GameStore, game_id: str, outcomes: list[Outcome]) -> None:
    with store.engine.connect() as conn:
        seqs = conn.scalars(
            select(EventRow.seq).where(EventRow.game_id == game_id).order_by(EventRow.seq)
        ).all()
        last_seq = conn.scalar(select(GameRow.last_seq).where(GameRow.id == game_id))
        projection_seq = conn.scalar(
            select(ProjectionRow.seq).where(ProjectionRow.game_id == game_id)
        )
        commands = conn.execute(
            select(CommandRow.command_id, CommandRow.first_seq, CommandRow.last_seq)
            .where(CommandRow.game_id == game_id)
            .order_by(CommandRow.first_seq)
        ).all()
        row_ids = dict(
            conn.execute(
                select(EventRow.seq, EventRow.command_id).where(EventRow.game_id == game_id)
            ).all()
        )
    # contiguous seqs, one writer at a time
    assert seqs == list(range(1, last_seq + 1))
    assert projection_seq == last_seq
    # the commands' rows tile 2..last_seq exactly, each row naming its command
    expected_first = 2
    for command_id, first, last in commands:
        assert first == expected_first
        assert all(row_ids[s] == command_id for s in range(first, last + 1))
        expected_first = last + 1
    assert expected_first == last_seq + 1
    # nothing lost, nothing twice: every write a worker was told of is stored, once
    written = [(o.command_id, o.first_seq, o.last_seq) for o in outcomes if not o.duplicate]
    assert Counter(c for c, _, _ in written) == Counter(c for c, _, _ in commands)
    assert sorted(written, key=lambda w: w[1]) == [tuple(c) for c in commands]
    stored = {c: (f, la) for c, f, la in commands}
    for o in outcomes:
        assert stored[o.command_id] == (o.first_seq, o.last_seq)
    # the game is whole: finished, every tile once, chain and projection sound
    table = store.reads.table(game_id)
    assert table.finished
    assert sorted(tiles_held(table)) == list(range(TILE_COUNT))
    assert store.tamper.verify(game_id).ok
    assert store.auditor.check_projections() == []
    assert store.reads.replay(game_id).snapshot() == table.snapshot()


@pytest.mark.rule("SVC-06")
def test_racing_threads(store: GameStore, db_url: str) -> None:
    with ThreadPoolExecutor(max_workers=len(SEATS) * WORKERS_PER_SEAT) as pool:
        outcomes = race(store, db_url, pool)
    assert outcomes


@pytest.mark.slow
def test_racing_processes(store: GameStore, db_url: str) -> None:
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(len(SEATS) * WORKERS_PER_SEAT, mp_context=context) as pool:
        outcomes = race(store, db_url, pool, ruleset="house")
    assert outcomes


def test_contended_writers_wait_and_never_see_a_stale_game(store: GameStore, db_url: str) -> None:
    """Three seats toggle their own choice as fast as they can: every command must succeed.

    (A command that waited for the game's lock once read the winner's games row with the
    loser's old projection; it showed up as a spurious GameNotFound.)
    """
    game_id = store.registry.create_game(NewGame(seed=31))
    rounds = 40
    with ThreadPoolExecutor(max_workers=3) as pool:
        results = pool.map(lambda seat: toggler(db_url, game_id, seat.value, rounds), SEATS[:3])
        problems = [p for found in results for p in found]
    assert problems == []
    assert store.registry.last_seq(game_id) == 1 + 3 * rounds
    assert store.tamper.verify(game_id).ok
    assert store.auditor.check_projections() == []
    assert store.reads.table(game_id).selections == {}


def _three(store: GameStore, game_id: str, seat: Seat) -> list[int]:
    return [t for t in store.reads.table(game_id).racks[seat] if not is_joker(t)][:3]


def _everything(store: GameStore, game_id: str) -> tuple:
    with store.engine.connect() as conn:
        return (
            [e.to_dict() for e in store.reads.events(game_id)],
            conn.execute(select(ProjectionRow.seq, ProjectionRow.snapshot)).all(),
            conn.execute(select(GameRow.last_seq, GameRow.status)).all(),
            conn.execute(select(CommandRow.command_id)).all(),
        )


@pytest.mark.rule("SVC-06")
@pytest.mark.postgres
def test_connection_killed_mid_resolution_leaves_the_game_as_before(
    pg_store: GameStore, pg_url: str, pg_admin_url: str
) -> None:
    """The resolution's one writing statement is held on a lock half-way (its rows of
    the tables before ``commands`` written) and its backend terminated there."""
    game_id = pg_store.registry.create_game(NewGame(seed=21))
    for seat in SEATS[:3]:
        pg_store.writes.execute(
            game_id, ConfirmPass(seat=seat, tiles=_three(pg_store, game_id, seat))
        )
    resolving = ConfirmPass(seat=Seat.NORTH, tiles=_three(pg_store, game_id, Seat.NORTH))
    before = _everything(pg_store, game_id)
    database = make_url(pg_url).database
    assert database is not None
    with psycopg.connect(libpq(pg_url)) as holder, ThreadPoolExecutor(1) as pool:
        holder.execute("LOCK TABLE commands IN SHARE MODE")
        attempt = pool.submit(pg_store.writes.execute, game_id, resolving, command_id="resolve")
        kill_blocked(pg_admin_url, database, "WITH moved AS")
        # the command's one statement commits as it runs: ended there, its outcome is
        # not known to the store, which says so (and nothing was stored)
        with pytest.raises(OutcomeUnknown) as info:
            attempt.result(timeout=30)
        holder.rollback()
    assert info.value.code == "outcome_unknown"
    assert _everything(pg_store, game_id) == before
    assert pg_store.tamper.verify(game_id).ok
    # the client retries with the same id: the pass resolves once
    result = pg_store.writes.execute(game_id, resolving, command_id="resolve")
    assert not result.duplicate
    assert [e.type for e in result.events].count("tiles_transferred") == 4
    assert pg_store.auditor.check_projections() == []
    assert pg_store.writes.execute(game_id, resolving, command_id="resolve").duplicate
