"""The one write path (store/games/writes.py): optimistic appends from a process's cached heads.

Two stores on one database stand for two service processes: each caches the heads of
the games it wrote, and a head another one made old must cost a lost race and a read,
never a wrong answer or a wrong row. Both backends unless marked.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psycopg
import pytest
from fault_injection import BackendKiller, blocked_backend, libpq
from sqlalchemy import Column, Integer, MetaData, String, Table, event, select, update
from sqlalchemy.engine import make_url

from charleston_fsm.engine.commands import ConfirmPass, WithdrawPass
from charleston_fsm.engine.errors import NothingConfirmed
from charleston_fsm.engine.seats import Seat
from charleston_fsm.engine.tiles import is_joker
from charleston_fsm.store import GameQuarantined, GameStore, NewGame, OutcomeUnknown
from charleston_fsm.store.database.models import GameRow, QuarantineRow
from charleston_fsm.store.games.append import Append, Head, Rider
from charleston_fsm.store.games.served import ServedGames


@pytest.fixture
def twin(db_url: str) -> Iterator[GameStore]:
    """A second store on the same database: another process."""
    other = GameStore(db_url)
    try:
        yield other
    finally:
        other.dispose()


def statements_of(store: GameStore) -> list[str]:
    """Collect the first words of every statement ``store`` sends from now on."""
    seen: list[str] = []

    def note(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        seen.append(" ".join(statement.split()[:2]))

    event.listen(store.engine, "before_cursor_execute", note)
    return seen


def tiles(store: GameStore, game_id: str, seat: Seat) -> list[int]:
    return [t for t in store.reads.table(game_id).racks[seat] if not is_joker(t)][:3]


def test_a_command_on_a_served_game_is_one_statement(store: GameStore) -> None:
    game_id = store.registry.create_game(NewGame(seed=3))
    sent = statements_of(store)
    confirm = ConfirmPass(seat=Seat.EAST, tiles=tiles(store, game_id, Seat.EAST))
    sent.clear()
    store.writes.execute(game_id, confirm, command_id="c1")
    writes = [s for s in sent if not s.startswith(("SELECT 1", "BEGIN"))]
    if store.dialect == "postgresql":
        assert writes == ["WITH moved"]  # no read: the head the creation left
    else:
        assert writes[0] == "UPDATE games"  # the guard first, no read
    assert store.core.served.get(game_id).last_seq == 2


@pytest.mark.rule("SVC-06")
def test_a_head_another_process_made_old_loses_once_and_is_read_under_the_lock(
    store: GameStore, twin: GameStore
) -> None:
    game_id = store.registry.create_game(NewGame(seed=4))
    store.writes.execute(
        game_id, ConfirmPass(seat=Seat.EAST, tiles=tiles(store, game_id, Seat.EAST))
    )
    twin.writes.execute(
        game_id, ConfirmPass(seat=Seat.SOUTH, tiles=tiles(store, game_id, Seat.SOUTH))
    )
    assert store.core.served.get(game_id).last_seq == 2  # old: the twin is at 3
    west = ConfirmPass(seat=Seat.WEST, tiles=tiles(store, game_id, Seat.WEST))
    sent = statements_of(store)
    result = store.writes.execute(game_id, west)
    assert [e.seq for e in result.events] == [4]
    assert result.events[0].prev_hash == twin.reads.events(game_id)[2].hash
    if store.dialect == "postgresql":
        assert [s for s in sent if s != "SELECT 1"] == [
            "WITH moved",  # stored nothing: the game had moved
            "SELECT games.last_seq",  # the lock
            "SELECT games.last_seq,",  # the head, under it
            "WITH moved",
        ]
    assert store.tamper.verify(game_id).ok
    assert store.auditor.check_projections() == []


def test_a_refusal_on_an_old_head_is_judged_again_on_the_game_as_it_is(
    store: GameStore, twin: GameStore
) -> None:
    """This process remembers East with nothing chosen; another one stored East's
    choice: East's withdrawal is not refused from memory, it is stored."""
    game_id = store.registry.create_game(NewGame(seed=5))
    assert store.core.served.get(game_id).last_seq == 1  # East has chosen nothing here
    twin.writes.execute(game_id, ConfirmPass(seat=Seat.EAST, tiles=tiles(twin, game_id, Seat.EAST)))
    result = store.writes.execute(game_id, WithdrawPass(seat=Seat.EAST), command_id="w")
    assert [e.type for e in result.events] == ["pass_withdrawn"]
    with pytest.raises(NothingConfirmed):  # now refused: judged on a fresh read too
        twin.writes.execute(game_id, WithdrawPass(seat=Seat.EAST))
    assert store.tamper.verify(game_id).ok


def test_a_seen_command_id_is_answered_from_the_record_not_from_memory(
    store: GameStore, twin: GameStore
) -> None:
    game_id = store.registry.create_game(NewGame(seed=6))
    confirm = ConfirmPass(seat=Seat.EAST, tiles=tiles(store, game_id, Seat.EAST))
    first = twin.writes.execute(game_id, confirm, command_id="once")
    again = store.writes.execute(game_id, confirm, command_id="once")  # a stale head here
    assert again.duplicate and again.events == first.events
    assert store.registry.last_seq(game_id) == 2


@pytest.mark.rule("SVC-08")
def test_a_quarantine_opened_elsewhere_refuses_the_next_command(
    store: GameStore, twin: GameStore
) -> None:
    game_id = store.registry.create_game(NewGame(seed=7))
    east = tiles(store, game_id, Seat.EAST)
    with twin.engine.begin() as conn:  # a projection edited behind the service's back
        conn.execute(update(GameRow).where(GameRow.id == game_id).values(status="finished"))
    assert not twin.tamper.verify(game_id).ok  # quarantined by the other process
    with pytest.raises(GameQuarantined):
        store.writes.execute(game_id, ConfirmPass(seat=Seat.EAST, tiles=east))
    assert store.registry.last_seq(game_id) == 1


@pytest.mark.postgres
@pytest.mark.rule("SVC-08")
def test_a_quarantine_committed_while_the_append_waits_stores_nothing(
    pg_store: GameStore, pg_url: str, pg_admin_url: str
) -> None:
    """The append waits on the game's row, which a verifier holds while it opens a
    quarantine; when the verifier commits, the append must store nothing. (Its own
    snapshot cannot see the new quarantine: the epoch the verifier moved is what stops
    it.)"""
    game_id = pg_store.registry.create_game(NewGame(seed=8))
    confirm = ConfirmPass(seat=Seat.EAST, tiles=tiles(pg_store, game_id, Seat.EAST))
    database = make_url(pg_url).database
    with psycopg.connect(libpq(pg_url)) as verifier, ThreadPoolExecutor(1) as pool:
        verifier.execute("UPDATE games SET epoch = epoch + 1 WHERE id = %s", [game_id])
        attempt = pool.submit(pg_store.writes.execute, game_id, confirm, "late")
        with psycopg.connect(libpq(pg_admin_url), autocommit=True) as admin:
            deadline = time.monotonic() + 30
            while blocked_backend(admin, database, "WITH moved AS") is None:
                assert time.monotonic() < deadline, "the append never waited"
                time.sleep(0.01)
        verifier.execute(
            "INSERT INTO quarantines (game_id, number, created_at, report) "
            "VALUES (%s, 1, now(), '{}')",
            [game_id],
        )
        verifier.commit()
        with pytest.raises(GameQuarantined):
            attempt.result(timeout=30)
    assert pg_store.registry.last_seq(game_id) == 1


@pytest.mark.postgres
def test_a_notice_from_another_process_drops_the_head(pg_store: GameStore, pg_url: str) -> None:
    other = GameStore(pg_url)
    pg_store.core.notices.start()
    try:
        assert pg_store.core.notices.healthy
        game_id = pg_store.registry.create_game(NewGame(seed=9))
        assert pg_store.core.served.get(game_id) is not None
        other.writes.execute(
            game_id, ConfirmPass(seat=Seat.EAST, tiles=tiles(other, game_id, Seat.EAST))
        )
        deadline = time.monotonic() + 30
        while pg_store.core.served.get(game_id) is not None:
            assert time.monotonic() < deadline, "the other process's notice never came"
            time.sleep(0.01)
        south = ConfirmPass(seat=Seat.SOUTH, tiles=tiles(pg_store, game_id, Seat.SOUTH))
        sent = statements_of(pg_store)
        pg_store.writes.execute(game_id, south)
        assert [s for s in sent if s != "SELECT 1"] == ["SELECT games.last_seq,", "WITH moved"]
        # this process's own notice leaves its head as it is
        time.sleep(0.2)
        assert pg_store.core.served.get(game_id).last_seq == 3
    finally:
        pg_store.core.notices.stop()
        other.dispose()


@pytest.mark.postgres
def test_notices_go_after_the_commit_batched_and_none_is_lost(
    pg_store: GameStore, pg_url: str
) -> None:
    """No ``pg_notify`` in any command's transaction; every game's last seq is heard."""
    games = [pg_store.registry.create_game(NewGame(seed=s)) for s in range(10, 16)]
    east = {g: ConfirmPass(seat=Seat.EAST, tiles=tiles(pg_store, g, Seat.EAST)) for g in games}
    sent = statements_of(pg_store)
    with psycopg.connect(libpq(pg_url), autocommit=True) as listener:
        listener.execute("LISTEN charleston_events")
        last = {}
        with ThreadPoolExecutor(3) as pool:
            for result, game_id in zip(
                pool.map(lambda g: pg_store.writes.execute(g, east[g]), games),
                games,
                strict=True,
            ):
                last[game_id] = result.last_seq
        heard: dict[str, int] = {}
        deadline = time.monotonic() + 30
        while heard != last:
            assert time.monotonic() < deadline, (heard, last)
            for note in listener.notifies(timeout=0.2, stop_after=1):
                game_id, _, seq = note.payload.rpartition(":")
                heard[game_id] = max(heard.get(game_id, 0), int(seq))
    assert not any("pg_notify" in s for s in sent)
    # the listener may hear a batch before its sender counts it: let the sender finish
    pg_store.core.notices.flush(timeout=30)
    assert pg_store.core.notices.sent >= len(games)
    assert pg_store.core.notices.batches <= pg_store.core.notices.sent


def test_this_process_hears_its_own_commit_before_the_answer(store: GameStore) -> None:
    heard: list[tuple[str, int | None]] = []
    store.core.notices.listen(lambda g, s: heard.append((g, s)))
    game_id = store.registry.create_game(NewGame(seed=17))
    result = store.writes.execute(
        game_id, ConfirmPass(seat=Seat.EAST, tiles=tiles(store, game_id, Seat.EAST))
    )
    assert heard == [(game_id, result.last_seq)]  # at once, by the writer's own thread


# -- riders: rows of another table in the same statement -------------------------------------
@pytest.fixture
def outbox(store: GameStore) -> Iterator[Table]:
    """A table of the test's own, standing for a feature's outbox."""
    table = Table(
        "test_outbox",
        MetaData(),
        Column("game_id", String(64), primary_key=True),
        Column("seq", Integer, primary_key=True),
        Column("note", String(64)),
    )
    table.create(store.engine)
    try:
        yield table
    finally:
        table.drop(store.engine)


def test_a_rider_is_stored_with_the_rows_and_never_without_them(
    store: GameStore, twin: GameStore, outbox: Table
) -> None:
    def entry(append: Append) -> Rider:
        row = {"game_id": append.game_id, "seq": append.last_seq, "note": append.command_id}
        return Rider(outbox, (row,))

    store.writes.add_rider(entry)
    game_id = store.registry.create_game(NewGame(seed=18))
    store.writes.execute(
        game_id, ConfirmPass(seat=Seat.EAST, tiles=tiles(store, game_id, Seat.EAST)), command_id="e"
    )
    # an old head: the first append stores nothing (nor its rider), the second both
    twin.writes.execute(
        game_id,
        ConfirmPass(seat=Seat.SOUTH, tiles=tiles(twin, game_id, Seat.SOUTH)),
        command_id="s",
    )
    store.writes.execute(
        game_id, ConfirmPass(seat=Seat.WEST, tiles=tiles(store, game_id, Seat.WEST)), command_id="w"
    )
    with store.engine.connect() as conn:
        rows = conn.execute(select(outbox).order_by(outbox.c.seq)).all()
    assert [tuple(r) for r in rows] == [(game_id, 2, "e"), (game_id, 4, "w")]


# -- the cache itself -------------------------------------------------------------------------
def _head(seq: int, epoch: int = 0) -> Head:
    return Head(seq, epoch, "h", {}, None)


def test_the_cache_is_bounded_and_keeps_the_newest_head() -> None:
    served = ServedGames(size=2)
    served.put("a", _head(3))
    served.put("b", _head(1))
    served.get("a")  # used: b is the oldest now
    served.put("c", _head(1))
    assert served.get("b") is None and len(served) == 2
    served.put("a", _head(2))  # a thread that finished later with an older head
    assert served.get("a").last_seq == 3
    served.put("a", _head(3, epoch=1))
    assert served.get("a").epoch == 1
    served.forget("a", 3)  # this process's own notice: kept
    assert served.get("a") is not None
    served.forget("a", 4)  # another process wrote row 4
    assert served.get("a") is None


def test_many_threads_of_one_process_on_one_game_store_every_command_once(
    store: GameStore,
) -> None:
    """Three seats confirm and withdraw at once through one store: every command is
    stored (a lost race is read again and decided again, never refused for it)."""
    game_id = store.registry.create_game(NewGame(seed=19))
    picks = {seat: tiles(store, game_id, seat) for seat in (Seat.EAST, Seat.SOUTH, Seat.WEST)}
    barrier = threading.Barrier(3)

    def toggle(seat: Seat) -> int:
        barrier.wait()
        for n in range(10):
            command = (
                ConfirmPass(seat=seat, tiles=picks[seat]) if n % 2 == 0 else WithdrawPass(seat=seat)
            )
            store.writes.execute(game_id, command)
        return 10

    with ThreadPoolExecutor(3) as pool:
        assert sum(pool.map(toggle, picks)) == 30
    assert store.registry.last_seq(game_id) == 31
    assert store.tamper.verify(game_id).ok
    assert store.auditor.check_projections() == []


@pytest.mark.postgres
def test_a_connection_killed_at_the_append_forgets_the_head(
    pg_store: GameStore, pg_admin_url: str
) -> None:
    game_id = pg_store.registry.create_game(NewGame(seed=20))
    confirm = ConfirmPass(seat=Seat.EAST, tiles=tiles(pg_store, game_id, Seat.EAST))
    killer = BackendKiller(pg_store, pg_admin_url, point=1)
    # the append commits as it runs: killed there, the store cannot know, and says so
    with killer.armed(), pytest.raises(OutcomeUnknown, match="may or may not be stored"):
        pg_store.writes.execute(game_id, confirm, command_id="k")
    assert pg_store.core.served.get(game_id) is None
    assert not pg_store.writes.execute(game_id, confirm, command_id="k").duplicate
    with pg_store.engine.connect() as conn:
        assert conn.scalar(select(QuarantineRow.game_id)) is None


@pytest.mark.postgres
def test_a_lone_write_commits_as_it_runs_and_pools_its_connection_out_of_autocommit(
    pg_store: GameStore, pg_admin_url: str
) -> None:
    """A command alone is its one statement, sent in autocommit (no BEGIN, no COMMIT);
    whatever happens to it, its connection goes back to the pool as every other: out of
    autocommit, so a read's or another writer's transaction is still one."""
    game_id = pg_store.registry.create_game(NewGame(seed=22))
    confirm = ConfirmPass(seat=Seat.EAST, tiles=tiles(pg_store, game_id, Seat.EAST))
    sent: list[str] = []

    def statement(_conn: Any, _cursor: Any, sql: str, *_: Any) -> None:
        sent.append(" ".join(sql.split()[:3]))

    def commit(_conn: Any) -> None:
        sent.append("COMMIT")

    event.listen(pg_store.engine, "before_cursor_execute", statement)
    event.listen(pg_store.engine, "commit", commit)
    try:
        pg_store.writes.execute(game_id, confirm, command_id="a")
        with pytest.raises(NothingConfirmed):  # refused: nothing to withdraw any more
            pg_store.writes.execute(game_id, WithdrawPass(seat=Seat.WEST), command_id="b")
    finally:
        event.remove(pg_store.engine, "before_cursor_execute", statement)
        event.remove(pg_store.engine, "commit", commit)
    # the refusal on a cached head is decided again on a fresh read (no lock: no BEGIN)
    assert sent == ["WITH moved AS", "SELECT games.last_seq, games.epoch,"]
    # the refusal left no head cached: a read, then the append, killed there
    killer = BackendKiller(pg_store, pg_admin_url, point=2)
    with killer.armed(), pytest.raises(OutcomeUnknown):
        pg_store.writes.execute(game_id, WithdrawPass(seat=Seat.EAST), command_id="c")
    assert killer.statements == ["SELECT games.last_seq, games.epoch,", "WITH moved AS"]
    pool = pg_store.engine.pool
    held = [pg_store.engine.connect() for _ in range(pool.size())]  # type: ignore[attr-defined]
    try:
        for conn in held:
            assert conn.connection.driver_connection.autocommit is False  # type: ignore[union-attr]
    finally:
        for conn in held:
            conn.close()
    assert pg_store.writes.execute(game_id, WithdrawPass(seat=Seat.EAST), command_id="c").events
