"""The feed (store/platform/feed.py): every lifecycle entry written with its cause, in one order,
resumable from a cursor on every process and after a restart; never a tile.

Both backends unless marked; two stores on one database stand for two processes.
"""

from __future__ import annotations

import random
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import psycopg
import pytest
from conftest import _libpq
from feed_helpers import assert_no_tiles, by_game
from sqlalchemy import String, event, func, insert, select, text
from sqlalchemy.exc import DBAPIError, IntegrityError

from charleston_fsm.engine.annotations import pause, resume, ruling
from charleston_fsm.engine.bots import bots_for, play
from charleston_fsm.engine.commands import RecordRuling
from charleston_fsm.engine.seats import Seat
from charleston_fsm.ledger.hashing import utc
from charleston_fsm.store import GameStore, NewGame, play_bots
from charleston_fsm.store.database.models import FeedRow, GameRow, RoundRow, WebhookOutboxRow
from charleston_fsm.store.platform.feed import (
    ENTRY_TYPES,
    FEED_TYPES,
    CursorAhead,
    InvalidCursor,
    UnknownEntryType,
    new_entry,
    now,
    of_organiser,
    record_seal,
)
from charleston_fsm.store.platform.feed_positions import ASSIGN_POSITIONS
from charleston_fsm.store.platform.outbox import entry_document


def read_all(store: GameStore, after: str | None = None, limit: int = 1000) -> list[dict]:
    """Every entry after ``after``, page by page (positions given first on PostgreSQL)."""
    while store.feed.sequence():
        pass
    entries: list[dict] = []
    while True:
        page, after = store.feed.read(after, limit)
        entries += [e.to_dict() for e in page]
        if not page:
            return entries


def test_a_played_game_leaves_its_lifecycle_and_no_tile(store: GameStore) -> None:
    game_id = store.registry.create_game(NewGame(seed=11))
    play_bots(store, game_id, seed=11)
    store.writes.wait_for_seals()
    entries = read_all(store)
    types = [e["type"] for e in entries]
    assert types[0] == "game.created"
    assert "game.step_reached" in types
    assert types.count("game.finished") == 1
    assert types.count("game.sealed") == 1  # once; a later seal is game.record_updated
    assert types.index("game.finished") < types.index("game.sealed")
    seals = [e for e in entries if e["type"] in ("game.sealed", "game.record_updated")]
    assert seals[0]["type"] == "game.sealed"
    sealed_at = [e["data"]["last_seq"] for e in seals]
    assert sealed_at == sorted(set(sealed_at))  # each a longer record than the one before
    assert sealed_at[-1] == store.registry.last_seq(game_id)  # the last names the final one
    assert {e["round_id"] for e in entries} == {None}  # a game of no round
    # the steps in the game's order, each entry naming the row it came from
    seqs = [e["seq"] for e in entries if e["type"] not in ("game.sealed", "game.record_updated")]
    assert seqs == sorted(seqs)
    rows = store.reads.events(game_id)
    mapped = [r for r in rows if r.type in FEED_TYPES]
    assert [e["seq"] for e in entries if e["seq"] and e["type"] != "game.created"][
        : len(mapped)
    ] == [r.seq for r in mapped]
    table = store.reads.table(game_id)
    assert table.finished
    for entry in entries:
        assert_no_tiles(entry)


def test_the_cursor_resumes_exactly_and_survives_a_restart(db_url: str) -> None:
    first = GameStore(db_url)
    try:
        ids = [first.registry.create_game(NewGame(seed=s, clock={"vote": 30})) for s in range(3)]
        for game_id in ids:
            first.writes.annotate(game_id, pause({"type": "pause_clock"}))
        whole = read_all(first)
        middle = whole[2]["cursor"]
    finally:
        first.dispose()
    again = GameStore(db_url)  # a new process, after a restart
    try:
        assert read_all(again, middle) == whole[3:]
        assert read_all(again, whole[-1]["cursor"]) == []
        for game_id in ids:
            again.writes.annotate(game_id, resume({"type": "resume_clock"}))
        after = read_all(again, whole[-1]["cursor"])
        assert [e["type"] for e in after] == ["game.resumed"] * 3
        assert read_all(again) == whole + after  # one order, whoever reads it
        page, cursor = again.feed.read(None, 2)
        assert [e.to_dict() for e in page] == whole[:2] and cursor == whole[1]["cursor"]
    finally:
        again.dispose()


def test_a_bad_cursor_is_refused_with_what_to_send(store: GameStore) -> None:
    for bad in ("12", "p", "p-1", "x9", "p" + "9" * 30):
        with pytest.raises(InvalidCursor, match="not a feed cursor"):
            store.feed.read(bad)


def test_nothing_of_a_refused_command_reaches_the_feed(store: GameStore) -> None:
    game_id = store.registry.create_game(NewGame(seed=2))
    before = read_all(store)
    with pytest.raises(Exception):  # noqa: B017 (any refusal: the point is what stays)
        store.writes.execute(game_id, {"type": "vote", "seat": "east", "choice": "stop"})
    assert read_all(store) == before


def test_an_entry_a_command_carries_is_stored_as_one_recorded_apart(store: GameStore) -> None:
    """A command's entry (the write path's rider: on SQLite inserted through ``sqlite3``
    itself, ``store/database/on_sqlite.py``) is stored as the same text as an entry recorded through
    SQLAlchemy (``game.created``), reads back as written, and gets its outbox row."""
    endpoint = store.webhooks.create("https://example.invalid/hook", ["*"])
    game_id = store.registry.create_game(NewGame(seed=5, clock={"vote": 60}))
    store.writes.annotate(game_id, pause({"type": "pause_clock", "round": "r-2"}))
    created, paused = (e for e in read_all(store) if e["game_id"] == game_id)
    assert (created["type"], paused["type"]) == ("game.created", "game.paused")
    [row] = [r for r in store.reads.events(game_id) if r.type == "clock_paused"]
    assert paused["seq"] == row.seq and paused["data"] == {"round": "r-2"}
    assert paused["at"] == utc(row.created_at).isoformat().replace("+00:00", "Z")
    at = FeedRow.at
    kind = func.typeof(at) if store.dialect == "sqlite" else func.pg_typeof(at).cast(String)
    with store.core.reading() as conn:
        stored = conn.execute(
            select(kind, func.length(at.cast(String)), FeedRow.data)
            .where(FeedRow.game_id == game_id)
            .order_by(FeedRow.id)
        ).all()
        outbox = conn.execute(
            select(WebhookOutboxRow.entry_id, WebhookOutboxRow.queue).where(
                WebhookOutboxRow.endpoint_id == endpoint["id"]
            )
        ).all()
    assert stored[0][0] == stored[1][0]  # the same column type (SQLite: text)
    if store.dialect == "sqlite":  # and the same text: SQLAlchemy's form, not sqlite3's
        assert stored[0][1] == stored[1][1]
    assert stored[1][2] == {"round": "r-2"}
    assert {tuple(r) for r in outbox} == {
        (created["id"], game_id),
        (paused["id"], game_id),
    }


def test_rounds_and_their_acts_are_entries(store: GameStore) -> None:
    tables = [NewGame(seed=1, held=True), NewGame(seed=2, held=True)]
    round_id, _ = store.rounds.create_round(tables, token_hash="ab" * 32, name="R1")
    store.round_acts.act(round_id, "start", "s1")
    store.round_acts.act(round_id, "start", "s1")  # a retry announces nothing more
    entries = read_all(store)
    types = [e["type"] for e in entries]
    assert types.count("round.created") == 1 and types.count("round.started") == 1
    assert types.count("game.created") == 2 and types.count("game.started") == 2
    created = [e for e in entries if e["type"] == "game.created"]
    assert {e["round_id"] for e in created} == {round_id}
    assert sorted(e["data"]["table"] for e in created) == [1, 2]
    started = next(e for e in entries if e["type"] == "round.started")
    assert started["data"] == {"tables": 2} and started["round_id"] == round_id


@pytest.mark.postgres
def test_two_processes_writing_at_once_read_one_order(pg_url: str) -> None:
    """Two stores write many games at once; positions are given while they write; each
    reads the same whole order, every entry once, every game's entries in its order."""
    one, two = GameStore(pg_url), GameStore(pg_url)
    try:
        seen: list[dict] = []
        cursor = None

        def play(store: GameStore, seed: int) -> None:
            game_id = store.registry.create_game(NewGame(seed=seed))
            play_bots(store, game_id, seed=seed)

        with ThreadPoolExecutor(4) as pool:
            jobs = [pool.submit(play, (one, two)[n % 2], n) for n in range(6)]
            while not all(j.done() for j in jobs):  # read while they write
                (one if len(seen) % 2 else two).feed.sequence()
                page, cursor = one.feed.read(cursor, 50)
                seen += [e.to_dict() for e in page]
            for job in jobs:
                job.result()
        one.writes.wait_for_seals()
        two.writes.wait_for_seals()
        seen += read_all(two, cursor)
        with one.core.reading() as conn:
            stored = conn.execute(select(FeedRow.entry_id)).scalars().all()
        assert sorted(e["id"] for e in seen) == sorted(stored)  # each once, none lost
        assert read_all(one) == read_all(two) == seen
        for game_id, seqs in by_game(seen).items():
            moments = [s for s in seqs if s is not None]
            assert moments == sorted(moments), [
                (e["type"], e["seq"], e["cursor"]) for e in seen if e["game_id"] == game_id
            ][-6:]
        positions = [int(e["cursor"][1:]) for e in seen]
        assert positions == list(range(1, len(seen) + 1))
    finally:
        one.dispose()
        two.dispose()


def test_a_seat_late_entry_names_the_seat(store: GameStore) -> None:
    game_id = store.registry.create_game(
        NewGame(seed=4, clock={"confirm_pass": 1, "on_expiry": "flag_late"})
    )
    with store.core.reading() as conn:
        due = conn.execute(select(GameRow.next_due).where(GameRow.id == game_id)).scalar()
    assert due is not None
    assert store.clock_worker.fire_due_clocks(now=utc(due) + timedelta(seconds=5))
    late = [e for e in read_all(store) if e["type"] == "game.seat_late"]
    assert late and {e["data"]["seat"] for e in late} <= {s.value for s in Seat}


def test_a_scoped_read_keeps_the_same_order_and_cursors(store: GameStore) -> None:
    """The organisers' filter (a condition on the feed's rows): only their entries, the
    cursors of the one order."""
    mine, other = (store.registry.create_game(NewGame(seed=s, clock={"vote": 30})) for s in (1, 2))
    for game_id in (mine, other, mine):
        store.writes.annotate(game_id, pause({"type": "pause_clock"}))
        store.writes.annotate(game_id, resume({"type": "resume_clock"}))
    whole = read_all(store)
    scoped, _ = store.feed.read(None, 100, scope=FeedRow.game_id == mine)
    assert [e.to_dict() for e in scoped] == [e for e in whole if e["game_id"] == mine]
    later, _ = store.feed.read(scoped[1].cursor, 100, scope=FeedRow.game_id == mine)
    assert [e.id for e in later] == [e.id for e in scoped[2:]]


def test_an_organisers_scope_is_its_own_games_and_rounds_and_reads_on_past_the_others(
    store: GameStore,
) -> None:
    """``of_organiser``: the entries of the organiser's games, rounds and their tables,
    in the one order with its cursors; a short page reads on from the head, so the next
    poll does not scan the others' entries again."""
    made: dict[str | None, set[str]] = {}
    for owner in ("org-a", "org-b", "org-a", None):
        game = store.registry.create_game(NewGame(seed=3, clock={"vote": 30}, organiser_id=owner))
        round_id, tables = store.rounds.create_round(
            [NewGame(seed=4, held=True)] * 2, token_hash="cd" * 32, organiser_id=owner
        )
        store.round_acts.act(round_id, "start", f"s-{round_id}")
        store.writes.annotate(game, pause({"type": "pause_clock"}))  # the write path
        made.setdefault(owner, set()).update({game, round_id, *tables})
    whole = read_all(store)
    theirs = [e for e in whole if {e["game_id"], e["round_id"]} & made["org-a"]]
    assert {e["type"] for e in theirs} >= {"game.created", "round.started", "game.paused"}
    pages, after = [], None
    while True:
        page, after = store.feed.read(after, 3, scope=of_organiser("org-a"))
        pages += [e.to_dict() for e in page]
        if len(page) < 3:
            break
    assert pages == theirs
    assert after == whole[-1]["cursor"]  # read past B's and the platform's last entries
    assert store.feed.read(after, 3, scope=of_organiser("org-a")) == ([], after)
    assert store.feed.read(None, 1000, scope=of_organiser("nobody")) == ([], whole[-1]["cursor"])
    others = store.feed.read(None, 1000, scope=of_organiser("org-b"))[0]
    assert {e.id for e in others}.isdisjoint(e["id"] for e in theirs) and others


class _Last(Exception):
    """The command that would finish the game (raised instead of sending it)."""

    def __init__(self, command: object) -> None:
        self.command = command


def play_to_the_last_command(store: GameStore, game_id: str, seed: int) -> object:
    """Bots play ``game_id`` up to its finishing command, which is returned unsent."""
    number = iter(range(1, 10_000))

    def execute(command: object) -> object:
        trial = store.reads.table(game_id)  # the caller's own table: nothing is stored
        trial.execute(command)
        if trial.finished:
            raise _Last(command)
        return store.writes.execute(game_id, command, command_id=f"b-{next(number)}").events

    try:
        play(
            execute,
            lambda seat: store.reads.view(game_id, seat),
            bots_for(seed),
            rng=random.Random(seed),
        )
    except _Last as last:
        return last.command
    raise AssertionError("the game finished without a last command")


def test_a_round_finishes_once_when_its_last_table_does(store: GameStore) -> None:
    """``round.finished``: one entry, written by the write finishing the last table, after
    that table's ``game.finished``; none while a table plays on; nothing concealed."""
    round_id, tables = store.rounds.create_round(
        [NewGame(seed=21), NewGame(seed=22), NewGame(seed=23)], token_hash="ef" * 32, name="Final"
    )
    lone = store.registry.create_game(NewGame(seed=24))  # outside any round: counts for none
    play_bots(store, lone, seed=24)
    for seed, game_id in zip((21, 22), tables[:2], strict=True):
        play_bots(store, game_id, seed=seed)
    assert [e for e in read_all(store) if e["type"] == "round.finished"] == []
    last = play_to_the_last_command(store, tables[2], 23)
    before = read_all(store)
    store.writes.execute(tables[2], last, command_id="the-last")
    store.writes.execute(tables[2], last, command_id="the-last")  # a retry: nothing more
    store.writes.wait_for_seals()
    entries = read_all(store)
    assert entries[: len(before)] == before
    finished = [e for e in entries if e["type"] == "round.finished"]
    assert len(finished) == 1
    [entry] = finished
    assert entry["round_id"] == round_id and entry["game_id"] is None
    assert entry["data"] == {"name": "Final", "tables": 3}
    assert_no_tiles(entry)
    # after the last table's game.finished, in the same write (same moment)
    last_game = next(
        e for e in entries if e["type"] == "game.finished" and e["game_id"] == tables[2]
    )
    assert entries.index(last_game) < entries.index(entry)
    assert entry["at"] == last_game["at"]
    listing = store.rounds.round_listing(round_id)
    assert listing.finished == 3
    with store.core.reading() as conn:
        counted = conn.execute(
            select(RoundRow.tables, RoundRow.finished_tables).where(RoundRow.id == round_id)
        ).one()
    assert tuple(counted) == (3, 3)


@pytest.mark.postgres
def test_two_processes_finishing_a_rounds_last_two_tables_at_once_make_one_entry(
    pg_url: str,
) -> None:
    """Two stores (two processes' pools) send the finishing commands of a round's last two
    tables while the round's row is locked, so both writes are in flight at once (each
    has moved its own game and waits for the round); once let go, exactly one of them
    records ``round.finished``, and the feed lists it once."""
    one, two = GameStore(pg_url), GameStore(pg_url)
    locker = psycopg.connect(_libpq(pg_url))
    try:
        round_id, tables = one.rounds.create_round(
            [NewGame(seed=31), NewGame(seed=32)], token_hash="12" * 32, name="Race"
        )
        lasts = [play_to_the_last_command(one, g, s) for g, s in zip(tables, (31, 32), strict=True)]
        database = locker.info.dbname
        locker.execute("SELECT 1 FROM rounds WHERE id = %s FOR UPDATE", (round_id,))
        with ThreadPoolExecutor(2) as pool:
            jobs = [
                pool.submit(s.writes.execute, g, last, "last")
                for s, g, last in zip((one, two), tables, lasts, strict=True)
            ]
            try:
                deadline = time.monotonic() + 120
                with psycopg.connect(_libpq(pg_url), autocommit=True) as watcher:
                    while True:  # both finishing writes wait on the round's row
                        waiting = watcher.execute(
                            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s "
                            "AND wait_event_type = 'Lock' AND query LIKE %s",
                            (database, "WITH moved AS %"),  # a write (the text is cut short)
                        ).fetchone()[0]
                        if waiting == 2:
                            break
                        assert not any(j.done() for j in jobs), [j.result() for j in jobs]
                        assert time.monotonic() < deadline, "the two writes never met"
                        time.sleep(0.05)
                locker.commit()  # let them go: one after the other on the round's row
            finally:
                locker.rollback()  # no-op after the commit; a failure lets them go too
            results = [j.result(timeout=120) for j in jobs]
        assert all(r.events and not r.duplicate for r in results)
        entries = read_all(two)
        finished = [e for e in entries if e["type"] == "round.finished"]
        assert len(finished) == 1 and finished[0]["round_id"] == round_id
        assert finished[0]["data"] == {"name": "Race", "tables": 2}
        ends = [e for e in entries if e["type"] == "game.finished"]
        assert {e["game_id"] for e in ends} == set(tables)
        assert max(entries.index(e) for e in ends) < entries.index(finished[0])
        with one.core.reading() as conn:
            stored = conn.execute(
                select(func.count()).select_from(FeedRow).where(FeedRow.type == "round.finished")
            ).scalar()
            counted = conn.execute(
                select(RoundRow.tables, RoundRow.finished_tables).where(RoundRow.id == round_id)
            ).one()
        assert stored == 1 and tuple(counted) == (2, 2)
    finally:
        locker.close()
        one.dispose()
        two.dispose()


@pytest.mark.postgres
def test_an_idle_sequencer_reads_and_commits_nothing(pg_store: GameStore) -> None:
    """A turn with nothing to number is one read ending in ROLLBACK: no advisory lock, no
    write transaction, no COMMIT (an idle service writes nothing); a turn with work
    numbers it in one write transaction."""
    store = pg_store
    store.registry.create_game(NewGame(seed=3))
    read_all(store)  # everything positioned
    commits: list[object] = []
    sent: list[str] = []
    event.listen(store.engine, "commit", lambda conn: commits.append(conn))
    event.listen(store.engine, "before_cursor_execute", lambda _c, _cur, sql, *_: sent.append(sql))
    for _ in range(20):
        assert store.feed.sequence() == 0
    assert commits == []
    assert not any("advisory" in sql or sql.lstrip().startswith("WITH todo") for sql in sent)
    assert len(sent) == 20  # one read per turn
    game_id = store.registry.create_game(NewGame(seed=4))
    commits.clear()
    assert store.feed.sequence() == 1  # the new game's game.created
    assert len(commits) == 1
    [entry] = store.feed.read(read_all(store)[-2]["cursor"])[0]
    assert entry.game_id == game_id and entry.type == "game.created"


def _ruling(kind: str = "note") -> object:
    doc = {"type": "record_ruling", "kind": kind, "text": "late ruling"}
    return ruling(doc, RecordRuling.model_validate(doc))


def test_every_entry_of_a_rounds_table_names_its_round_and_so_do_its_webhooks(
    store: GameStore,
) -> None:
    """``round_id`` on every entry of a round's game (created, started, each step,
    finished, sealed, a late ruling's update), whichever path wrote it, and in the
    document its webhook carries; a game outside any round has none."""
    endpoint = store.webhooks.create("https://example.invalid/hook", ["*"])
    round_id, tables = store.rounds.create_round(
        [NewGame(seed=41, held=True), NewGame(seed=42, held=True)], token_hash="ab" * 32
    )
    lone = store.registry.create_game(NewGame(seed=43))
    store.round_acts.act(round_id, "start", "go")
    for seed, game_id in zip((41, 42, 43), [*tables, lone], strict=True):
        play_bots(store, game_id, seed=seed)
    store.writes.wait_for_seals()
    store.writes.annotate(tables[0], _ruling())  # after the finish: the record grows
    store.writes.wait_for_seals()
    entries = read_all(store)
    of_tables = [e for e in entries if e["game_id"] in tables]
    assert {e["type"] for e in of_tables} >= {
        "game.created",
        "game.started",
        "game.step_reached",
        "game.finished",
        "game.sealed",
        "game.ruling",
        "game.record_updated",
    }
    assert {e["round_id"] for e in of_tables} == {round_id}
    assert {e["round_id"] for e in entries if e["game_id"] == lone} == {None}
    with store.core.reading() as conn:
        sent = conn.execute(
            select(FeedRow)
            .join(WebhookOutboxRow, WebhookOutboxRow.entry_id == FeedRow.entry_id)
            .where(WebhookOutboxRow.endpoint_id == endpoint["id"])
        ).all()
    documents = [entry_document(row) for row in sent]
    assert len(documents) == len(entries)  # every entry, its round named as in the feed
    by_id = {e["id"]: e for e in entries}
    for document in documents:
        assert document["round_id"] == by_id[document["id"]]["round_id"]


def test_a_game_is_sealed_once_whoever_seals_it_and_a_later_change_is_an_update(
    store: GameStore,
) -> None:
    """``game.sealed`` once per game, whichever part seals (the write path's sealing
    thread, a replaying verify, a sweep); a record that grows after it (a director's
    late ruling) is ``game.record_updated`` naming the new last row; the database itself
    refuses a second ``game.sealed`` of a game."""
    game_id = store.registry.create_game(NewGame(seed=11))
    play_bots(store, game_id, seed=11)
    store.writes.wait_for_seals()
    store.tamper.verify(game_id, replay=True)
    store.tamper.verify_all(replay=True)
    store.tamper.seal(game_id)

    def seals() -> list[dict]:
        return [e for e in read_all(store) if e["type"] in ("game.sealed", "game.record_updated")]

    first = seals()
    assert first[0]["type"] == "game.sealed"
    assert [e["type"] for e in first].count("game.sealed") == 1
    before = len(first)
    store.writes.annotate(game_id, _ruling("warning"))
    store.writes.wait_for_seals()
    later = seals()
    assert later[:before] == first and len(later) == before + 1
    assert later[-1]["type"] == "game.record_updated"
    assert later[-1]["data"] == {"last_seq": store.registry.last_seq(game_id)}
    # nothing new to seal: verify and sweep add nothing
    store.tamper.verify(game_id, replay=True)
    store.tamper.verify_all(replay=True)
    assert seals() == later
    with pytest.raises(IntegrityError), store.engine.begin() as conn:
        conn.execute(insert(FeedRow), [new_entry("game.sealed", now(), game_id=game_id)])


def test_two_sealers_of_one_game_write_one_sealed_entry(db_url: str) -> None:
    """Two stores (two processes) recording a seal of the same game at once, each in its
    own transaction: one ``game.sealed``, the other a ``game.record_updated`` (the
    partial unique index decides: on PostgreSQL the second insert waits for the first's
    commit, on SQLite the writes are serialised)."""
    one, two = GameStore(db_url), GameStore(db_url)
    try:
        game_id = one.registry.create_game(NewGame(seed=12))
        barrier = threading.Barrier(2)

        def seal(store: GameStore) -> str:
            barrier.wait(timeout=60)
            with store.core.writing() as conn:
                return record_seal(conn, game_id, 7, now())

        with ThreadPoolExecutor(2) as pool:
            written = sorted(pool.map(seal, (one, two)))
        assert written == ["game.record_updated", "game.sealed"]
        entries = [e for e in read_all(one) if e["game_id"] == game_id]
        assert [e["type"] for e in entries] == ["game.created", *written[::-1]]
    finally:
        one.dispose()
        two.dispose()


def test_a_cursor_past_the_head_and_an_unknown_type_are_refused(store: GameStore) -> None:
    """A well-formed cursor the feed never gave (past its newest position) would skip
    whatever is written up to it: refused, with what to do; so is a type the feed has
    not. The head itself (a short page's ``next``) is a cursor it gave."""
    with pytest.raises(CursorAhead, match="past the newest entry"):
        store.feed.read("p999999")
    with pytest.raises(CursorAhead):
        store.feed.read("p1")  # an empty feed: only p0 (the start) is a place in it
    assert store.feed.read("p0") == ([], "p0")
    store.registry.create_game(NewGame(seed=1))
    whole = read_all(store)
    head = whole[-1]["cursor"]
    assert store.feed.read(head) == ([], head)
    with pytest.raises(CursorAhead):
        store.feed.read(f"p{int(head[1:]) + 1}")
    for bad in (["nope"], ["game.created", "game.nope"], ["GAME.CREATED"], ["*"]):
        with pytest.raises(UnknownEntryType, match="Unknown entry types"):
            store.feed.read(None, types=bad)
    assert store.feed.read(None, types=list(ENTRY_TYPES))[0]


def test_a_filtered_page_reads_on_past_what_it_skipped(store: GameStore) -> None:
    """``next`` of a short filtered page is the head: the next poll starts past the
    entries the filter skipped (a checkpoint), and never reads one twice."""
    games = [store.registry.create_game(NewGame(seed=s, clock={"vote": 30})) for s in range(3)]
    for game_id in games:
        store.writes.annotate(game_id, pause({"type": "pause_clock"}))
    whole = read_all(store)
    page, after = store.feed.read(None, 100, types=["game.paused"])
    assert [e.to_dict() for e in page] == [e for e in whole if e["type"] == "game.paused"]
    assert after == whole[-1]["cursor"]
    assert store.feed.read(after, 100, types=["game.paused"]) == ([], after)
    skipped, after = store.feed.read(after, 100, types=["round.created"])
    assert skipped == [] and after == whole[-1]["cursor"]
    store.writes.annotate(games[0], resume({"type": "resume_clock"}))
    store.registry.create_game(NewGame(seed=9))  # skipped by the filter, read past
    newer = read_all(store, after)
    page, after = store.feed.read(after, 100, types=["game.resumed"])
    assert [e.to_dict() for e in page] == [newer[0]] and after == newer[-1]["cursor"]
    # a full page reads on from its last entry: the rest comes on the next page
    page, after = store.feed.read(None, 2, types=["game.paused"])
    assert len(page) == 2 and after == page[-1].cursor
    rest, _ = store.feed.read(after, 2, types=["game.paused"])
    assert [e.id for e in page + rest] == [e["id"] for e in whole if e["type"] == "game.paused"]


def test_a_given_position_never_changes_the_database_refuses(store: GameStore) -> None:
    """Migration 0013's trigger: an update changing a position once given is refused,
    whatever the statement (SQLite never gives positions: its order is ``id``)."""
    store.registry.create_game(NewGame(seed=1))
    store.registry.create_game(NewGame(seed=2))
    read_all(store)
    if store.dialect == "sqlite":
        with store.core.writing() as conn:
            conn.execute(text("UPDATE feed SET position = id"))  # NULL -> given: allowed
    with pytest.raises(DBAPIError, match="never changes"), store.engine.begin() as conn:
        conn.execute(text("UPDATE feed SET position = position + 100"))
    with store.core.reading() as conn:
        assert max(conn.execute(select(FeedRow.position)).scalars()) <= 2


@pytest.mark.postgres
def test_two_sequencers_interleaved_never_renumber_a_published_entry(pg_url: str) -> None:
    """Two sequencers' statements forced to interleave without the advisory lock, the
    case it exists for: an entry with a lower id commits late.

    e0 is at p1. A (its own connection) numbers the committed entry e2 (p2) and holds its
    transaction; e1 (lower id, its writer's transaction open all along) commits; B's
    statement, from a snapshot without A's numbers, wants e1 at p2 and e2 at p3. Its p2
    meets A's uncommitted p2 in the unique index, so B waits for A; A commits (e2
    published at p2) and B fails and rolls back; the next turn numbers e1 at p3. A reader
    polling throughout sees no position change. (Had B reached e2's row first, it would
    have waited on it and found it numbered: ``AND position IS NULL``; and the trigger
    refuses any change of a given position, tested on its own above.)"""
    url = _libpq(pg_url)
    store = GameStore(pg_url)
    try:
        store.registry.create_game(NewGame(seed=1))  # the schema's tables warmed; its entry is e0
        while store.feed.sequence():
            pass
        early, a, b = (psycopg.connect(url) for _ in range(3))
        seen: dict[str, int] = {}
        changed: list[tuple[str, int, int]] = []
        stop = threading.Event()

        def read_positions() -> None:
            with psycopg.connect(url, autocommit=True) as reader:
                while not stop.is_set():
                    for entry_id, position in reader.execute(
                        "SELECT entry_id, position FROM feed WHERE position IS NOT NULL"
                    ):
                        if seen.setdefault(entry_id, position) != position:
                            changed.append((entry_id, seen[entry_id], position))

        reader = threading.Thread(target=read_positions, daemon=True)
        reader.start()
        try:
            e1, e2 = _entry("e1"), _entry("e2")
            early.execute(_INSERT_ENTRY, e1)  # e1: the lower id, not committed
            with psycopg.connect(url, autocommit=True) as late:
                late.execute(_INSERT_ENTRY, e2)  # e2 committed first
            assert a.execute(ASSIGN_POSITIONS.text).rowcount == 1  # A: e2 -> p2, held
            early.commit()  # e1 committed now
            outcome: list[object] = []

            def second() -> None:
                try:
                    outcome.append(b.execute(ASSIGN_POSITIONS.text).rowcount)
                    b.commit()
                except psycopg.Error as exc:
                    outcome.append(exc)
                    b.rollback()

            runner = threading.Thread(target=second)
            runner.start()
            _wait_until_waiting_on_a_lock(url, b.info.backend_pid)
            a.commit()  # e2 published
            runner.join(timeout=60)
            assert outcome and isinstance(outcome[0], psycopg.errors.UniqueViolation), outcome
            while store.feed.sequence():  # the next turns number what is left
                pass
            with psycopg.connect(url) as check:
                rows = dict(check.execute("SELECT entry_id, position FROM feed").fetchall())
        finally:
            stop.set()
            reader.join(timeout=60)
            for conn in (early, a, b):
                conn.close()
        assert changed == []
        assert rows[e2["entry_id"]] == seen[e2["entry_id"]] == 2  # A's number, kept
        assert rows[e1["entry_id"]] == 3  # after it: the late entry is not lost
        assert sorted(rows.values()) == [1, 2, 3]
    finally:
        store.dispose()


_INSERT_ENTRY = (
    "INSERT INTO feed (entry_id, type, at, data) "
    "VALUES (%(entry_id)s, 'round.created', now(), '{}'::jsonb)"
)


def _entry(name: str) -> dict[str, str]:
    return {"entry_id": f"{name}-{uuid.uuid4().hex[:20]}"}


def _wait_until_waiting_on_a_lock(url: str, pid: int) -> None:
    """Until backend ``pid`` waits on a row lock (a condition, looked at every 10 ms)."""
    deadline = time.monotonic() + 60
    with psycopg.connect(url, autocommit=True) as watcher:
        while (
            watcher.execute(
                "SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", (pid,)
            ).fetchone()[0]
            != "Lock"
        ):
            assert time.monotonic() < deadline, "the second sequencer never waited on a row"
            time.sleep(0.01)
