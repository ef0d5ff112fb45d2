"""The clock's typed value and its stored document: document -> value -> document is the
document itself, for every shape a game's clock has been stored in.

The store converts at its edge (``clock_state.stored`` where it reads ``games.clock``,
``storing`` where it writes it), so records, audits and existing databases must read
exactly as before: same keys, same values, a key absent stays absent, a ``null`` stays
``null``. Checked here on documents as the service writes them (literal, so a change of
the conversion cannot change them too), on clocks moved by every engine change, and on
games stored in SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select

from charleston_fsm.engine import calls, clocks, seating, time_control
from charleston_fsm.engine.annotations import call, from_director, substitute
from charleston_fsm.engine.clock_options import ClockOptions
from charleston_fsm.engine.clock_state import (
    Clock,
    Deadline,
    Extension,
    Hold,
    from_document,
    stored,
    storing,
    to_document,
)
from charleston_fsm.engine.commands import CallDirector
from charleston_fsm.engine.seats import Seat
from charleston_fsm.engine.table import Table
from charleston_fsm.engine.tiles import Deal
from charleston_fsm.store import GameStore, NewGame
from charleston_fsm.store.database.models import GameRow

T0 = datetime(2026, 11, 26, 14, 0, tzinfo=UTC)
OPTIONS = {
    "confirm_pass": 30.0,
    "vote": 20.0,
    "courtesy": None,
    "place_tiles": None,
    "on_expiry": "auto_play",
}
DEADLINE = {
    "kind": "confirm_pass",
    "seconds": 30.0,
    "key": "confirm_pass@0:CHARLESTON_P1_R",
    "armed_seq": 1,
    "due_at": "2026-11-26T14:00:30.000000Z",
}

#: documents as the service stores them, one per shape
DOCUMENTS: dict[str, dict[str, Any]] = {
    "no options, bots only": {
        "options": None,
        "bots": ["east", "north", "south", "west"],
        "game": "5:g1",
        "pace": 0.0,
        "paused_at": None,
        "deadlines": {"east": {**DEADLINE, "kind": "bot", "seconds": 0.0}},
        "late": [],
        "acted": {},
    },
    "options, player ids, a late seat and an act": {
        "options": OPTIONS,
        "bots": [],
        "game": "7:g2",
        "pace": 0.0,
        "paused_at": None,
        "deadlines": {"south": DEADLINE, "west": {**DEADLINE, "armed_seq": 3}},
        "late": ["east"],
        "acted": {
            "east": {
                "seat": "east",
                "scope": "0:CHARLESTON_P1_R",
                "kind": "confirm_pass",
                "due_at": "2026-11-26T14:00:30.000000Z",
                "done": "passed 3 tiles",
            }
        },
        "player_ids": {"east": "p-1", "south": "p-2"},
    },
    "held for a start time": {
        "options": OPTIONS,
        "bots": ["north"],
        "game": "8:g3",
        "pace": 3.0,
        "paused_at": None,
        "deadlines": {"east": DEADLINE},
        "late": [],
        "acted": {},
        "held": {"since": "2026-11-26T14:00:00.000000Z", "at": "2026-11-26T14:05:00.000000Z"},
    },
    "held for its players": {
        "options": None,
        "bots": [],
        "game": "9:g4",
        "pace": 0.0,
        "paused_at": None,
        "deadlines": {},
        "late": [],
        "acted": {},
        "held": {"since": "2026-11-26T14:00:00.000000Z", "at": None, "awaiting": ["south"]},
    },
    "started, paused, flagged and extended, called, seated": {
        "options": {**OPTIONS, "on_expiry": "flag_late"},
        "bots": ["west"],
        "game": "10:g5",
        "pace": 3.0,
        "paused_at": "2026-11-26T14:02:00.000000Z",
        "deadlines": {
            "east": {**DEADLINE, "flagged": True},
            "south": {
                **DEADLINE,
                "flagged": False,
                "extended": {"seconds": 80.0, "reason": "a spill"},
                "rearmed": 2,
            },
            "north": {**DEADLINE, "flagged": False, "extended": {"seconds": 5, "reason": None}},
        },
        "late": ["east", "south"],
        "acted": {},
        "held": None,
        "started_at": "2026-11-26T14:01:00.000000Z",
        "player_ids": {},
        "seated": {"north": "substitute: R. Chen"},
        "calls": {"west": {"at": "2026-11-26T14:01:30.000000Z", "reason": None}},
    },
    "every call answered, every seat handed back": {
        "options": OPTIONS,
        "bots": [],
        "game": "11:g6",
        "pace": 3.0,
        "paused_at": None,
        "deadlines": {},
        "late": [],
        "acted": {},
        "seated": {},
        "calls": {},
    },
    "made before games were named in it": {
        "options": {"confirm_pass": 30.0, "vote": None, "courtesy": None, "on_expiry": "auto_play"},
        "bots": [],
        "paused_at": None,
        "deadlines": {"east": DEADLINE},
    },
    "a key this version does not know": {
        "options": None,
        "bots": [],
        "game": "12:g7",
        "pace": 0.0,
        "paused_at": None,
        "deadlines": {},
        "late": [],
        "acted": {},
        "from_a_later_version": {"kept": True},
    },
}


def same(document: dict[str, Any] | None, again: dict[str, Any] | None) -> None:
    """Identical: equal, and the same JSON (a 30 written back as 30.0 would show)."""
    assert again == document
    assert json.dumps(again, sort_keys=True) == json.dumps(document, sort_keys=True)


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_a_stored_document_round_trips_to_itself(name: str) -> None:
    document = DOCUMENTS[name]
    clock = from_document(json.loads(json.dumps(document)))
    same(document, to_document(clock))
    same(document, to_document(from_document(to_document(clock))))


def test_the_value_holds_the_documents_parts_typed() -> None:
    clock = from_document(DOCUMENTS["started, paused, flagged and extended, called, seated"])
    south = clock.deadlines["south"]
    assert isinstance(south, Deadline) and south.extended == Extension(80.0, "a spill")
    assert south.rearmed == 2 and south.flagged is False and not south.is_flagged
    assert clock.deadlines["east"].is_flagged and clock.deadlines["east"].rearmed is None
    assert clock.options is not None and clock.options.on_expiry == "flag_late"
    assert clock.held is None and clock.started_at == "2026-11-26T14:01:00.000000Z"
    assert clock.calls["west"].reason is None and clock.late == ("east", "south")
    held = from_document(DOCUMENTS["held for its players"]).held
    assert held == Hold("2026-11-26T14:00:00.000000Z", None, ("south",))
    old = from_document(DOCUMENTS["made before games were named in it"])
    assert (old.game, old.pace, old.late, old.acted) == ("", 0.0, (), {})
    assert stored(None) is None and storing(None) is None


def test_a_set_key_is_written_even_empty_and_an_unset_one_stays_out() -> None:
    """As the document did: a seat handed back leaves ``seated: {}``, a player id
    removed ``player_ids: {}``; a key never set is never written."""
    table = Table(Deal.shuffled(3), "nmjl")
    new = clocks.advance(clocks.new_clock(ClockOptions(confirm_pass=30), ()), table, T0, 1)
    assert set(to_document(new)) == {
        "options",
        "bots",
        "game",
        "pace",
        "paused_at",
        "deadlines",
        "late",
        "acted",
    }
    assert to_document(new)["options"] == OPTIONS | {"vote": None}  # every option stored
    back = seating.with_person(seating.with_bot(new, Seat.NORTH), Seat.NORTH, None)
    assert to_document(back)["seated"] == {} and to_document(back)["bots"] == []
    assert to_document(seating.with_player_id(new, Seat.EAST, None))["player_ids"] == {}
    assert "player_ids" not in to_document(replace(new, player_ids={}))
    with_ids = clocks.new_clock(None, (), player_ids={"east": "p-1"})
    assert to_document(with_ids)["player_ids"] == {"east": "p-1"}
    old = from_document(DOCUMENTS["made before games were named in it"])
    assert "acted" in to_document(clocks.advance(old, table, T0, 1))  # advance writes it


def test_every_change_of_the_engine_leaves_a_clock_that_round_trips() -> None:
    table = Table(Deal.shuffled(3), "nmjl")
    held = time_control.hold(
        clocks.new_clock(ClockOptions(confirm_pass=30, vote=20), [Seat.NORTH], game="3:g"),
        T0,
        T0 + timedelta(minutes=5),
        ["east", "south"],
    )
    moments: list[Clock | None] = [clocks.advance(held, table, T0, 1)]
    arrived, _, _ = time_control.arrived(moments[0], Seat.EAST, T0 + timedelta(seconds=5))
    opened, _, _ = time_control.arrived(arrived, Seat.SOUTH, T0 + timedelta(seconds=9))
    moments += [arrived, opened]
    paused = clocks.paused(opened, T0 + timedelta(seconds=10))
    resumed, _ = clocks.resumed(paused, T0 + timedelta(seconds=70))
    firing = next(
        f for f in clocks.deadline_firings(resumed, T0 + timedelta(hours=1)) if not f.is_bot
    )
    flagged = clocks.flagged(resumed, firing.seat)
    extended, _ = time_control.extended(flagged, None, 60, "a spill", T0 + timedelta(hours=1))
    called = calls.called(extended, Seat.WEST, "why?", T0 + timedelta(hours=1))
    answered, _ = calls.answered(called, Seat.WEST, T0 + timedelta(hours=2))
    with_bot = clocks.advance(seating.with_bot(answered, Seat.EAST), table, T0, 2)
    substituted = seating.substituted(with_bot, Seat.EAST, "R. Chen", player_id="p-9")
    moments += [paused, resumed, flagged, extended, called, answered, with_bot, substituted]
    moments.append(call(CallDirector(seat=Seat.SOUTH, reason=None)).change(None, T0)[0])
    moments.append(substitute(Seat.EAST, None, player_id="p-2").change(None, T0)[0])
    moments.append(from_director({"type": "hand_to_bot", "seat": "south"}).change(None, T0)[0])
    for clock in moments:
        assert clock is not None
        document = to_document(clock)
        again = from_document(json.loads(json.dumps(document)))
        same(document, to_document(again))
        assert again == replace(clock, options=again.options)  # the value, too
    assert to_document(opened)["held"] is None and "started_at" in to_document(opened)
    assert to_document(extended)["deadlines"][firing.seat.value]["rearmed"] == 1


@pytest.mark.rule("SVC-10")
def test_a_stored_game_reads_back_to_its_column(store: GameStore) -> None:
    """Games of every shape, moved by the writers, on SQLite and PostgreSQL: the column
    converts to the value and back to itself, and the head a process keeps holds it."""
    registry = store.registry
    games = [
        registry.create_game(NewGame(seed=1)),
        registry.create_game(NewGame(seed=2, bots=["north"], pace=1.0)),
        registry.create_game(
            NewGame(
                seed=3,
                clock={"confirm_pass": 30, "vote": 20},
                player_ids={"east": "p-1"},
                start_at=datetime.now(UTC) + timedelta(hours=1),
            ),
        ),
        registry.create_game(
            NewGame(seed=4, clock={"confirm_pass": 600, "on_expiry": "flag_late"})
        ),
        registry.create_game(NewGame(seed=5, held=True, awaiting=["east", "west"])),
    ]
    flagging = games[3]
    store.writes.annotate(flagging, from_director({"type": "pause_clock"}), "p")
    store.writes.annotate(flagging, from_director({"type": "resume_clock"}), "r")
    store.writes.annotate(flagging, call(CallDirector(seat=Seat.WEST, reason="why?")), "c")
    extend = {"type": "extend_time", "seat": "east", "seconds": 30, "reason": "a spill"}
    store.writes.annotate(flagging, from_director(extend), "e")
    store.writes.annotate(flagging, from_director({"type": "hand_to_bot", "seat": "north"}), "b")
    store.writes.annotate(games[2], from_director({"type": "start_game"}), "s")
    with store.engine.connect() as conn:
        found = conn.execute(select(GameRow.id, GameRow.clock).where(GameRow.id.in_(games)))
        rows = {row.id: row.clock for row in found}
    assert rows[games[0]] is None
    for game_id in games[1:]:
        document = rows[game_id]
        assert document is not None
        same(document, to_document(from_document(document)))
        head = store.core.served.get(game_id)
        if head is not None:
            assert head.clock == from_document(document)
    flagged = from_document(rows[flagging])
    assert flagged.deadlines["east"].extended == Extension(30, "a spill")
    assert flagged.calls["west"].reason == "why?" and "north" in flagged.bots
    gate = from_document(rows[games[4]]).held
    assert gate is not None and gate.awaiting == ("east", "west") and gate.at is None
