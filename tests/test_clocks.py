"""Clocks, bot seats and the director's annotations, on both backends (store level)."""

from __future__ import annotations

import functools
import multiprocessing
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from clock_workers import fire_until_quiet
from sqlalchemy import select

from charleston_fsm.engine import clock_state
from charleston_fsm.engine.annotations import from_director
from charleston_fsm.engine.clocks import parse_time
from charleston_fsm.engine.commands import ChangePass, ConfirmPass
from charleston_fsm.engine.errors import ClockActed, ClockNotRunning, InvalidCommand
from charleston_fsm.engine.seats import SEATS, Seat
from charleston_fsm.engine.tiles import is_joker
from charleston_fsm.store import GameStore, InvalidGameSetup, NewGame
from charleston_fsm.store.database.models import CommandRow, GameRow

SHORT = 0.2
ALL_KINDS = {"confirm_pass": SHORT, "vote": SHORT, "courtesy": SHORT, "place_tiles": SHORT}


def plain(store: GameStore, game_id: str, seat: Seat) -> list[int]:
    return [t for t in store.reads.table(game_id).racks[seat] if not is_joker(t)][:3]


def next_due(store: GameStore, game_id: str) -> datetime | None:
    """The game's earliest armed deadline (``games.next_due``)."""
    with store.engine.connect() as conn:
        return conn.scalar(select(GameRow.next_due).where(GameRow.id == game_id))


def fire_after_due(store: GameStore, game_id: str) -> list[tuple[str, int]]:
    """Wait for the game's earliest deadline (``games.next_due``), then fire what is due
    at exactly that moment (a deadline armed a little later stays armed)."""
    due = next_due(store, game_id)
    assert due is not None, "nothing is due"
    time.sleep(max(0.0, due.timestamp() - time.time()) + 0.02)
    return store.clock_worker.fire_due_clocks(now=due)


def types(store: GameStore, game_id: str, after: int = 0) -> list[tuple[str, str | None]]:
    return [(e.type, e.seat) for e in store.reads.events(game_id, after)]


@pytest.mark.rule("SVC-10")
def test_bot_seats_play_a_game_to_the_end_with_no_human(store: GameStore) -> None:
    game_id = store.registry.create_game(NewGame(seed=5, bots=[s.value for s in SEATS]))
    assert store.reads.view(game_id)["clock"]["bots"] == [s.value for s in sorted(SEATS)]
    for _ in range(500):
        if not store.clock_worker.fire_due_clocks():
            break
    view = store.reads.view(game_id)
    assert view["game"]["finished"]
    assert view["clock"]["deadlines"] == {} and view["clock"]["late"] == []
    assert store.tamper.verify(game_id).ok
    with store.engine.connect() as conn:
        ids = conn.scalars(select(CommandRow.command_id).where(CommandRow.game_id == game_id))
        assert all(i.startswith("clock:") for i in ids)
    assert not any(t == "clock_expired" for t, _ in types(store, game_id))  # bots are not late


@pytest.mark.rule("SVC-10")
def test_expiry_acts_for_the_seat_from_its_own_view(store: GameStore) -> None:
    game_id = store.registry.create_game(NewGame(seed=7, clock={"confirm_pass": SHORT}))
    seat_clock = store.reads.view(game_id, "east")["clock"]
    assert seat_clock["kind"] == "confirm_pass" and seat_clock["seconds"] == SHORT
    assert not seat_clock["paused"] and not seat_clock["late"]
    assert parse_time(seat_clock["due_at"]) > parse_time("2026-01-01T00:00:00Z")
    for seat in (Seat.SOUTH, Seat.WEST, Seat.NORTH):
        store.writes.execute(game_id, ConfirmPass(seat=seat, tiles=plain(store, game_id, seat)))
    assert set(store.reads.view(game_id)["clock"]["deadlines"]) == {"east"}  # the others acted
    before = store.registry.last_seq(game_id)
    rack = set(store.reads.table(game_id).racks[Seat.EAST])
    due = next_due(store, game_id)
    written = fire_after_due(store, game_id)
    assert [g for g, _ in written] == [game_id]
    rows = store.reads.events(game_id, before)
    assert [(r.type, r.seat) for r in rows[:2]] == [
        ("clock_expired", "east"),
        ("pass_confirmed", "east"),
    ]
    expired, confirmed = rows[0], rows[1]
    assert expired.payload["kind"] == "confirm_pass"
    assert expired.payload["done"] == "passed 3 tiles"
    assert expired.command_id == confirmed.command_id
    assert confirmed.command_id.startswith("clock:east:")
    passed = confirmed.payload["tiles"]
    assert len(passed) == 3 and set(passed) <= rack and not any(is_joker(t) for t in passed)
    assert "pass_resolved" in [r.type for r in rows]
    assert store.reads.view(game_id)["clock"]["late"] == ["east"]
    assert store.reads.view(game_id, "east")["clock"]["late"]
    assert not store.reads.view(game_id, "south")["clock"]["late"]
    assert store.tamper.verify(game_id).ok
    # nothing else was due at that moment (the late seat is not acted for again: the kinds
    # have no limits), and the next pass's deadlines were armed after it. Asked at that
    # moment, not now: on a busy machine the next pass's 0.2 s may already be over (CI).
    assert store.clock_worker.fire_due_clocks(now=due) == []
    following = next_due(store, game_id)
    assert due is not None and following is not None and following > due


@pytest.mark.rule("SVC-10")
def test_late_human_command_after_the_clock_acted_is_refused(store: GameStore) -> None:
    game_id = store.registry.create_game(NewGame(seed=8, clock={"confirm_pass": SHORT}))
    store.writes.execute(
        game_id, ConfirmPass(seat=Seat.SOUTH, tiles=plain(store, game_id, Seat.SOUTH))
    )
    for seat in (Seat.WEST, Seat.NORTH):  # west and north keep their time: they act now
        store.writes.execute(game_id, ConfirmPass(seat=seat, tiles=plain(store, game_id, seat)))
    # ... but then withdraw, so the step stays open after the clock acts for east
    store.writes.execute(game_id, {"type": "withdraw_pass", "seat": "north"})
    fire_after_due(store, game_id)
    last = store.registry.last_seq(game_id)
    assert "clock_expired" in [t for t, _ in types(store, game_id)]
    with pytest.raises(ClockActed) as refused:
        store.writes.execute(
            game_id, ChangePass(seat=Seat.EAST, tiles=plain(store, game_id, Seat.EAST))
        )
    message = refused.value.message
    assert "ran out at" in message and "the clock passed 3 tiles for you" in message
    assert "Wait for the next step" in message
    assert refused.value.code == "clock_acted" and refused.value.rule == "SVC-10"
    assert store.registry.last_seq(game_id) == last  # nothing written
    # north (whose own deadline is still armed) acts in time: the step resolves
    store.writes.execute(
        game_id, ConfirmPass(seat=Seat.NORTH, tiles=plain(store, game_id, Seat.NORTH))
    )
    assert store.reads.table(game_id).passes_resolved == 1
    assert store.reads.view(game_id)["clock"]["late"] == ["east"]


def test_flag_late_flags_and_does_not_act(store: GameStore) -> None:
    game_id = store.registry.create_game(
        NewGame(seed=9, clock={"confirm_pass": SHORT, "on_expiry": "flag_late"})
    )
    for seat in (Seat.SOUTH, Seat.WEST, Seat.NORTH):
        store.writes.execute(game_id, ConfirmPass(seat=seat, tiles=plain(store, game_id, seat)))
    before = store.registry.last_seq(game_id)
    fire_after_due(store, game_id)
    assert types(store, game_id, before) == [("seat_late", "east")]
    view = store.reads.view(game_id)
    assert view["clock"]["late"] == ["east"]
    assert view["clock"]["deadlines"]["east"]["flagged"]
    assert "east" not in store.reads.table(game_id).selections  # nothing played in its name
    assert store.clock_worker.fire_due_clocks() == []  # flagged once, not again
    store.writes.execute(
        game_id, ConfirmPass(seat=Seat.EAST, tiles=plain(store, game_id, Seat.EAST))
    )
    assert store.reads.table(game_id).passes_resolved == 1  # a flagged seat still plays
    assert store.tamper.verify(game_id).ok


@pytest.mark.rule("SVC-11")
def test_pause_and_resume_are_recorded_and_shift_deadlines(store: GameStore) -> None:
    game_id = store.registry.create_game(NewGame(seed=10, clock={"confirm_pass": SHORT}))
    due = parse_time(store.reads.view(game_id)["clock"]["deadlines"]["east"]["due_at"])
    store.writes.annotate(game_id, from_director({"type": "pause_clock"}), "p-1")
    assert store.reads.view(game_id, "east")["clock"]["paused"]
    with pytest.raises(ClockNotRunning):
        store.writes.annotate(game_id, from_director({"type": "pause_clock"}), "p-2")
    time.sleep(SHORT + 0.2)
    assert store.clock_worker.fire_due_clocks() == []  # paused: nothing fires
    result = store.writes.annotate(game_id, from_director({"type": "resume_clock"}), "r-1")
    paused_for = result.events[0].payload["paused_seconds"]
    assert paused_for >= SHORT + 0.2
    moved = parse_time(store.reads.view(game_id)["clock"]["deadlines"]["east"]["due_at"])
    assert moved - due == timedelta(seconds=paused_for)
    assert store.writes.annotate(
        game_id, from_director({"type": "resume_clock"}), "r-1"
    ).duplicate  # idempotent
    with pytest.raises(ClockNotRunning):
        store.writes.annotate(game_id, from_director({"type": "resume_clock"}), "r-2")
    assert types(store, game_id)[1:] == [("clock_paused", None), ("clock_resumed", None)]
    assert store.tamper.verify(game_id).ok
    fire_after_due(store, game_id)
    assert len([t for t, _ in types(store, game_id) if t == "clock_expired"]) == 4


def test_pause_without_a_clock_is_refused(store: GameStore) -> None:
    game_id = store.registry.create_game(NewGame(seed=11))
    with pytest.raises(ClockNotRunning, match="no clock"):
        store.writes.annotate(game_id, from_director({"type": "pause_clock"}), "p-1")
    assert store.registry.last_seq(game_id) == 1


@pytest.mark.rule("SVC-11")
def test_rulings_join_the_chain_and_the_audit_and_move_no_tile(store: GameStore) -> None:
    game_id = store.registry.create_game(NewGame(seed=12))
    store.writes.execute(
        game_id, ConfirmPass(seat=Seat.EAST, tiles=plain(store, game_id, Seat.EAST))
    )
    table = store.reads.table(game_id).snapshot()
    store.writes.annotate(
        game_id,
        from_director(
            {"type": "record_ruling", "kind": "warning", "text": "Slow play", "seat": "east"}
        ),
        "r1",
    )
    store.writes.annotate(
        game_id, from_director({"type": "record_ruling", "kind": "note", "text": "All fine"}), "r2"
    )
    assert store.reads.table(game_id).snapshot() == table
    assert store.reads.replay(game_id).snapshot() == table
    assert store.tamper.verify(game_id).ok
    audit = store.auditor.audit(game_id)
    assert [(r["kind"], r["seat"], r["text"]) for r in audit.to_dict()["rulings"]] == [
        ("warning", "east", "Slow play"),
        ("note", None, "All fine"),
    ]
    assert "WARNING (East): Slow play" in audit.to_text()
    for bad in (
        {"type": "record_ruling", "kind": "scold", "text": "x"},
        {"type": "record_ruling", "kind": "note", "text": ""},
        {"type": "record_ruling", "kind": "note", "text": "x" * 2001},
    ):
        with pytest.raises(InvalidCommand):
            store.writes.annotate(game_id, from_director(bad), "bad")
    assert store.registry.last_seq(game_id) == 4
    # a seat sees the ruling (it names no tile); the game goes on
    store.writes.execute(
        game_id, ConfirmPass(seat=Seat.SOUTH, tiles=plain(store, game_id, Seat.SOUTH))
    )


def test_clock_options_are_checked_at_creation(store: GameStore) -> None:
    with pytest.raises(InvalidGameSetup, match=r"clock\.vote"):
        store.registry.create_game(NewGame(seed=1, clock={"vote": -1}))
    with pytest.raises(InvalidGameSetup, match="on_expiry"):
        store.registry.create_game(NewGame(seed=1, clock={"on_expiry": "shout"}))
    with pytest.raises(InvalidGameSetup, match="Bot seats"):
        store.registry.create_game(NewGame(seed=1, bots=["middle"]))
    game_id = store.registry.create_game(NewGame(seed=1, clock={"vote": 5}))
    assert store.reads.events(game_id)[0].payload["clock"]["vote"] == 5  # in the hash chain
    assert store.reads.view(game_id)["clock"]["deadlines"] == {}  # no pass is timed
    plain_game = store.registry.create_game(NewGame(seed=1))
    assert store.reads.view(plain_game)["clock"] is None
    assert store.reads.view(plain_game, "east")["clock"] is None


def test_expiry_across_a_restart(db_url: str) -> None:
    first = GameStore(db_url)
    game_id = first.registry.create_game(NewGame(seed=13, clock={"confirm_pass": SHORT}))
    first.dispose()
    time.sleep(SHORT + 0.1)
    second = GameStore(db_url)
    try:
        written = second.clock_worker.fire_due_clocks()
        assert {g for g, _ in written} == {game_id}
        assert Counter(t for t, _ in types(second, game_id))["clock_expired"] == 4
        assert second.reads.table(game_id).passes_resolved == 1
    finally:
        second.dispose()


@pytest.fixture
def conversions(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Every conversion of a stored clock document to its value and back, counted by
    direction (the real ones run: ``stored`` and ``storing`` call these two)."""
    calls: Counter[str] = Counter()
    for name in ("from_document", "to_document"):
        real = getattr(clock_state, name)

        @functools.wraps(real)
        def counted(*args: Any, _real: Any = real, _name: str = name, **kwargs: Any) -> Any:
            calls[_name] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(clock_state, name, counted)
    return calls


def test_a_firing_converts_the_stored_clock_once_each_way(
    store: GameStore, conversions: Counter[str]
) -> None:
    """The worker converts the document it picked to find what fired, and the write it
    runs takes that value (read under the same lock) rather than converting the document
    again: one read and one write of the clock per firing, as per scheduled start."""
    start_at = datetime.now(UTC) + timedelta(hours=1)
    held = store.registry.create_game(NewGame(seed=8, start_at=start_at))
    conversions.clear()
    assert [g for g, _ in store.clock_worker.fire_due_clocks(now=start_at)] == [held]
    assert conversions == Counter(from_document=1, to_document=1)
    assert types(store, held)[-1] == ("game_started", None)
    assert parse_time(store.reads.view(held)["clock"]["started_at"]) == start_at  # at its time

    game_id = store.registry.create_game(NewGame(seed=7, clock={"confirm_pass": SHORT}))
    for seat in (Seat.SOUTH, Seat.WEST, Seat.NORTH):
        store.writes.execute(game_id, ConfirmPass(seat=seat, tiles=plain(store, game_id, seat)))
    conversions.clear()
    assert [g for g, _ in fire_after_due(store, game_id)] == [game_id]
    assert conversions == Counter(from_document=1, to_document=1)
    assert ("clock_expired", "east") in types(store, game_id)  # it acted for east


@pytest.mark.postgres
def test_two_processes_racing_act_exactly_once(pg_store: GameStore, pg_url: str) -> None:
    games = [pg_store.registry.create_game(NewGame(seed=20 + i, clock=ALL_KINDS)) for i in range(3)]
    # bots beside people think for DEFAULT_PACE (3 s, more at the first look) by default:
    # ~30 s of waiting that races nothing, and went past the workers' minute on a busy CI
    games.append(
        pg_store.registry.create_game(
            NewGame(seed=30, bots=["east", "west"], clock=ALL_KINDS, pace=SHORT)
        )
    )
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(2, mp_context=context) as pool:
        runs = [pool.submit(fire_until_quiet, pg_url, games) for _ in range(2)]
        written = [r.result(timeout=120) for r in runs]
    assert all(written), "both processes fired some deadlines"
    for game_id in games:
        assert pg_store.reads.view(game_id)["game"]["finished"]
        assert pg_store.tamper.verify(game_id).ok
        rows = pg_store.reads.events(game_id)
        expired = [
            (r.seat, r.payload["due_at"], r.payload["kind"])
            for r in rows
            if r.type == "clock_expired"
        ]
        assert expired and len(expired) == len(set(expired))  # each deadline fired once
        with pg_store.engine.connect() as conn:
            ids = list(
                conn.scalars(select(CommandRow.command_id).where(CommandRow.game_id == game_id))
            )
        assert len(ids) == len(set(ids))
        # every clock row is followed by the one action it announced, by the same seat
        for index, row in enumerate(rows):
            if row.type == "clock_expired":
                action = rows[index + 1]
                assert action.seat == row.seat and action.command_id == row.command_id


def test_four_winds_exchanges_and_gifts_are_timed_as_passes(store: GameStore) -> None:
    """The clock plays every exchange and East's decision in the Ding Dong window (it
    declares Ready: every decision the table waits for has a deadline), and bot seats
    give their Ding Dong gifts."""
    game_id = store.registry.create_game(
        NewGame("four_winds", seed=14, clock={"confirm_pass": 0.05, "place_tiles": 0.05})
    )
    kinds = {d["kind"] for d in store.reads.view(game_id)["clock"]["deadlines"].values()}
    assert kinds == {"confirm_pass"}
    for _ in range(200):
        if not store.clock_worker.fire_due_clocks():
            if store.reads.view(game_id)["clock"]["deadlines"] == {}:
                break
            time.sleep(0.06)
    view = store.reads.view(game_id)
    assert view["game"]["finished"] and view["game"]["ding_dong"]["ready"] == "east"
    expired = [e.payload["done"] for e in store.reads.events(game_id) if e.type == "clock_expired"]
    assert "declared Ready" in expired
    assert store.tamper.verify(game_id).ok
    # East's bot asks for a Ding Dong in most games (the bots' habits): in the first such
    # game of a few deals, every bot seat gives its gifts
    for seed in range(14, 24):
        bots = store.registry.create_game(
            NewGame("four_winds", seed=seed, bots=[s.value for s in SEATS])
        )
        for _ in range(500):
            if not store.clock_worker.fire_due_clocks():
                break
        played = Counter(t for t, _ in types(store, bots))
        assert store.reads.view(bots)["game"]["finished"] and store.tamper.verify(bots).ok
        if played["ding_dong_requested"]:
            assert played["ding_dong_given"] >= 4
            break
    else:
        raise AssertionError("East's bot asked for no Ding Dong in ten games")
