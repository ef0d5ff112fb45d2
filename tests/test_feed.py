"""The feed (store/feed.py): every lifecycle entry written with its cause, in one order,
resumable from a cursor on every process and after a restart; never a tile.

Both backends unless marked; two stores on one database stand for two processes.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from feed_helpers import assert_no_tiles, by_game
from sqlalchemy import select

from charleston_fsm.engine.annotations import pause, resume
from charleston_fsm.engine.seats import Seat
from charleston_fsm.store import GameStore, play_bots
from charleston_fsm.store.feed import FEED_TYPES, InvalidCursor, of_organiser
from charleston_fsm.store.hashing import utc
from charleston_fsm.store.models import FeedRow, GameRow


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
    game_id = store.registry.create_game(seed=11)
    play_bots(store, game_id, seed=11)
    store.writes.wait_for_seals()
    entries = read_all(store)
    types = [e["type"] for e in entries]
    assert types[0] == "game.created"
    assert "game.step_reached" in types
    assert types.count("game.finished") == 1
    assert "game.sealed" in types
    assert types.index("game.finished") < types.index("game.sealed")
    # the steps in the game's order, each entry naming the row it came from
    seqs = [e["seq"] for e in entries if e["type"] not in ("game.sealed",)]
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
        ids = [first.registry.create_game(seed=s, clock={"vote": 30}) for s in range(3)]
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
    game_id = store.registry.create_game(seed=2)
    before = read_all(store)
    with pytest.raises(Exception):  # noqa: B017 (any refusal: the point is what stays)
        store.writes.execute(game_id, {"type": "vote", "seat": "east", "choice": "stop"})
    assert read_all(store) == before


def test_rounds_and_their_acts_are_entries(store: GameStore) -> None:
    tables = [{"seed": 1, "held": True}, {"seed": 2, "held": True}]
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
            game_id = store.registry.create_game(seed=seed)
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
        seed=4, clock={"confirm_pass": 1, "on_expiry": "flag_late"}
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
    mine, other = (store.registry.create_game(seed=s, clock={"vote": 30}) for s in (1, 2))
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
        game = store.registry.create_game(seed=3, clock={"vote": 30}, organiser_id=owner)
        round_id, tables = store.rounds.create_round(
            [{"seed": 4, "held": True}] * 2, token_hash="cd" * 32, organiser_id=owner
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
