"""The clock's action binds only the decision it made (issue 17, items 2 and 3).

After the clock acts for a seat, ``clock_acted`` refuses that seat's command for the
same decision in the same step, nothing else: from the next step on the seat plays as
usual, its late objection stays its own right (RULES NMJL), and ``allowed_commands``
lists exactly what the seat can still give. On both backends, at store level.
"""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from charleston_fsm.engine.errors import CharlestonError, ClockActed
from charleston_fsm.engine.seats import SEATS, Seat
from charleston_fsm.engine.tiles import is_joker
from charleston_fsm.store import GameStore, NewGame
from charleston_fsm.store.database.models import GameRow

E, S, W, N = SEATS


def fire_now(store: GameStore, game_id: str) -> None:
    """Fire the game's earliest deadline as if its moment had come (no waiting)."""
    with store.engine.connect() as conn:
        due = conn.scalar(select(GameRow.next_due).where(GameRow.id == game_id))
    assert due is not None, "nothing is due"
    assert store.clock_worker.fire_due_clocks(now=due), "the clock did nothing"


def confirm(store: GameStore, game_id: str, seat: Seat, **extra: Any) -> None:
    """The seat places what it received, then passes its first plain tiles."""
    if store.reads.view(game_id, seat)["received"]:
        store.writes.execute(game_id, {"type": "place_tiles", "seat": seat.value})
    view = store.reads.view(game_id, seat)
    tiles = [t["id"] for t in view["rack"] if not is_joker(t["id"])][: view["step"]["count"]]
    store.writes.execute(
        game_id, {"type": "confirm_pass", "seat": seat.value, "tiles": tiles, **extra}
    )


def accepted_somehow(store: GameStore, game_id: str, seat: Seat, name: str) -> bool:
    """Whether the store takes ``name`` from ``seat`` now with one of a few arguments;
    an accepted one is withdrawn again when it can be, else the caller stops there."""
    view = store.reads.view(game_id, seat)
    plain = [t["id"] for t in view["rack"] if not is_joker(t["id"])]
    tries: list[dict[str, Any]] = {
        "confirm_pass": [{"tiles": plain[:3]}],
        "change_pass": [{"tiles": plain[3:6]}],
        "withdraw_pass": [{}],
        "place_tiles": [{}],
        "vote": [{"choice": "stop"}, {"choice": "continue"}],
    }.get(name, [])
    for fields in tries:
        try:
            store.writes.execute(game_id, {"type": name, "seat": seat.value, **fields})
        except CharlestonError:
            continue
        return True
    return False


def assert_listing_exact(store: GameStore, game_id: str, seat: Seat) -> None:
    """What the seat's view lists of the pass commands is what the store takes."""
    listed = set(store.reads.view(game_id, seat)["allowed_commands"])
    for name in ("change_pass", "withdraw_pass"):
        before = store.registry.last_seq(game_id)
        taken = accepted_somehow(store, game_id, seat, name)
        assert taken == (name in listed), f"{seat.value} {name}: listed {name in listed}"
        if taken:
            assert store.registry.last_seq(game_id) > before


@pytest.mark.rule("SVC-10", "SVC-01")
def test_after_the_clock_passes_for_a_seat_it_plays_the_next_step(store: GameStore) -> None:
    """Issue 17's steps: the clock passes for North in the First Right; North places,
    its view lists confirm_pass for the First Across, and its pass is taken. The same in
    the First Left."""
    game_id = store.registry.create_game(
        NewGame(seed=42, clock={"confirm_pass": 1, "on_expiry": "auto_play"})
    )
    for step, following in (
        ("CHARLESTON_P1_R", "CHARLESTON_P1_A"),
        ("CHARLESTON_P1_A", "CHARLESTON_P1_L"),
    ):
        assert store.reads.view(game_id)["game"]["state"] == [step]
        for seat in (E, S, W):
            confirm(store, game_id, seat)
        fire_now(store, game_id)  # the clock passes for North: the step resolves
        assert store.reads.view(game_id)["game"]["state"] == [following]
        assert store.reads.view(game_id)["clock"]["late"] == ["north"]
        store.writes.execute(game_id, {"type": "place_tiles", "seat": "north"})
        view = store.reads.view(game_id, N)
        assert "confirm_pass" in view["allowed_commands"]
        assert view["clock"]["due_at"] is not None  # a fresh deadline
        confirm(store, game_id, N)  # taken: no clock_acted
        assert store.reads.view(game_id, N)["step"]["confirmed"]
        assert {"change_pass", "withdraw_pass"} <= set(
            store.reads.view(game_id, N)["allowed_commands"]
        )
        # its own pass is its own: it may take it back, and the clock acts again next
        store.writes.execute(game_id, {"type": "withdraw_pass", "seat": "north"})
    assert store.tamper.verify(game_id).ok


@pytest.mark.rule("SVC-10", "SVC-01")
def test_in_the_step_the_clock_acted_only_that_decision_is_refused(store: GameStore) -> None:
    """The clock passes for East while the step is still open: East's change and
    withdrawal of that pass are refused as clock_acted and are not listed; East's
    placing of tiles is not that decision; the others play on."""
    game_id = store.registry.create_game(NewGame(seed=7, clock={"confirm_pass": 1}))
    for seat in (S, W, N):
        confirm(store, game_id, seat)
    store.writes.execute(game_id, {"type": "withdraw_pass", "seat": "north"})  # the step stays open
    with store.engine.connect() as conn:
        due = conn.scalar(select(GameRow.next_due).where(GameRow.id == game_id))
    store.clock_worker.fire_due_clocks(now=due)  # east's deadline came first; north's is later
    assert store.reads.view(game_id, E)["step"]["confirmed"]
    listed = store.reads.view(game_id, E)["allowed_commands"]
    assert "change_pass" not in listed and "withdraw_pass" not in listed
    with pytest.raises(ClockActed):
        store.writes.execute(game_id, {"type": "withdraw_pass", "seat": "east"})
    assert_listing_exact(store, game_id, E)
    assert_listing_exact(store, game_id, S)  # south's own pass is still its own
    confirm(store, game_id, N)
    confirm(store, game_id, S)  # south withdrew in the listing check? then confirms again
    view = store.reads.view(game_id, E)
    assert view["game"]["passes_resolved"] == 1
    assert "place_tiles" in view["allowed_commands"]


@pytest.mark.rule("SVC-10", "NMJL-04")
def test_a_late_objection_is_taken_after_the_clock_voted_continue(store: GameStore) -> None:
    """nmjl: the clock votes continue for North (the fourth continue); in the late
    objection window North's view lists vote, and its stop is taken (RULES NMJL: a stop
    is still accepted after four continues until the first pass of the Second Charleston
    resolves)."""
    game_id = store.registry.create_game(NewGame("nmjl", seed=42, clock={"vote": 1}))
    for _ in range(3):  # the First Charleston, with no clock on passes
        for seat in SEATS:
            confirm(store, game_id, seat)
    for seat in SEATS:  # what the clock would do first is place: its vote comes next
        store.writes.execute(game_id, {"type": "place_tiles", "seat": seat.value})
    for seat in (E, S, W):
        store.writes.execute(game_id, {"type": "vote", "seat": seat.value, "choice": "continue"})
    fire_now(store, game_id)  # the clock votes continue for North
    view = store.reads.view(game_id, N)
    assert view["game"]["votes"] == {s.value: "continue" for s in SEATS}
    assert "vote" in view["allowed_commands"]
    store.writes.execute(game_id, {"type": "vote", "seat": "north", "choice": "stop"})
    game = store.reads.view(game_id)["game"]
    assert "stop" in game["votes"].values()
    assert not any("SECOND" in s or "P2" in s for s in game["state"]), game["state"]
    assert store.tamper.verify(game_id).ok


@pytest.mark.rule("SVC-10", "FW-06")
def test_east_in_the_ding_dong_window_has_a_deadline(store: GameStore) -> None:
    """four_winds with clocks: the window waits for East (a Ding Dong or Ready), so East
    has a deadline there; when it runs out the clock declares Ready and the deal ends."""
    game_id = store.registry.create_game(
        NewGame(
            "four_winds",
            {"charleston": "off"},
            seed=5,
            clock={"confirm_pass": 1, "on_expiry": "auto_play"},
        )
    )
    assert store.reads.view(game_id)["game"]["state"] == ["DING_DONG_OPEN"]
    mine = store.reads.view(game_id, E)["clock"]
    assert mine["kind"] == "confirm_pass" and mine["due_at"] is not None
    fire_now(store, game_id)
    game = store.reads.view(game_id)["game"]
    assert game["finished"] and game["ding_dong"]["ready"] == "east"
    expired = [e for e in store.reads.events(game_id) if e.type == "clock_expired"]
    assert [e.payload["done"] for e in expired] == ["declared Ready"]
    assert store.tamper.verify(game_id).ok


@pytest.mark.rule("SVC-10")
def test_a_seat_that_must_place_first_has_its_decision_s_deadline(store: GameStore) -> None:
    """Clocks on passes only: a seat holding received tiles (it must place them before it
    passes) still has a deadline, and the clock places, then passes for it."""
    game_id = store.registry.create_game(NewGame(seed=42, clock={"confirm_pass": 1}))
    for seat in SEATS:
        confirm(store, game_id, seat)  # the First Right resolves: everyone holds tiles
    for seat in (E, S, W):
        confirm(store, game_id, seat)  # they place and pass; North does nothing
    clock = store.reads.view(game_id, N)["clock"]
    assert clock["kind"] == "confirm_pass" and clock["due_at"] is not None
    for _ in range(2):  # the clock places, then (a fresh deadline) passes
        fire_now(store, game_id)
    assert store.reads.view(game_id)["game"]["state"] == ["CHARLESTON_P1_L"]
    assert store.tamper.verify(game_id).ok
