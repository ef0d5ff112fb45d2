"""Blind passes ("stealing") worked out by hand, from explicit hands.

How to reach the blind steps with hands we know: on step 1 every seat passes its first
three tiles; on every later step it passes exactly the three it has just received. The
rest of each original hand never moves, so on step 3 (and step 7) the seats still hold:

    East  3-12 (+ joker 144)     South 16-24 (+ joker 145)
    West 28-36 (+ joker 146)     North 40-48 (+ joker 147)

The chain (resolution.py, rule NMJL-09): the seat giving the most tiles from the
hand starts (ties: earlier seat, East first); then each receiver in turn. On its turn a
seat forwards the first ``blind`` tiles waiting for it (first arrived first), and hands
over its own tiles; rounds repeat until every seat has given 3.

Step 3 passes Left:  East→North, North→West, West→South, South→East (turns E, N, W, S).
Step 7 passes Right: East→South, South→West, West→North, North→East (turns E, S, W, N).
"""

from __future__ import annotations

import itertools
import json

import pytest
from engine_helpers import (
    E,
    N,
    S,
    W,
    all_tiles,
    change,
    confirm,
    events_of,
    hand_sizes,
    ints_in,
    new_table,
    offer,
    place_all,
    run,
    vote_all,
    withdraw,
)

from charleston_fsm.engine import errors
from charleston_fsm.engine.events import Event
from charleston_fsm.engine.seats import SEATS, Seat
from charleston_fsm.engine.table import Table
from charleston_fsm.engine.views import redact, seat_view

FIRST = {E: [0, 1, 2], S: [13, 14, 15], W: [25, 26, 27], N: [37, 38, 39]}


def _pass_back_received(table: Table) -> None:
    """Everyone passes on the three tiles just received (after placing them)."""
    received = {s: list(table.received[s]) for s in SEATS}
    place_all(table)
    run(table, *(confirm(s, received[s]) for s in SEATS))


def at_step(step: int) -> Table:
    table = new_table("nmjl")
    run(table, *(confirm(s, FIRST[s]) for s in SEATS))
    for n in range(2, step):
        if n == 4:
            vote_all(table)
            continue
        _pass_back_received(table)
    place_all(table)
    expected = "CHARLESTON_P1_L" if step == 3 else "CHARLESTON_P2_R"
    assert table.configuration == [expected]
    return table


def declare_all(table: Table, own: dict[Seat, list[int]]) -> tuple[list[Event], dict]:
    before = {s: sorted(table.hand(s)) for s in SEATS}
    events = run(table, *(confirm(s, own[s], blind=3 - len(own[s])) for s in SEATS))
    return events, before


def transfers(events: list[Event]) -> dict[Seat, dict]:
    return {Seat(e.seat): e.payload for e in events_of(events, "tiles_transferred")}


def routes(events: list[Event]) -> dict[int, list[str]]:
    return {int(t): r for t, r in events_of(events, "pass_resolved")[0].payload["routes"].items()}


def check_consistency(table: Table, events: list[Event], before: dict) -> None:
    """What tiles_transferred says agrees with routes and with what the hands hold."""
    sent = transfers(events)
    path = routes(events)
    for giver, p in sent.items():
        for tile in p["from_hand"]:
            assert path[tile][:2] == [giver.value, p["receiver"]]
        for tile in p["kept"]:
            assert path[tile][-2:] == [giver.value, p["receiver"]]
        hops = [(a, b) for r in path.values() for a, b in itertools.pairwise(r)].count(
            (giver.value, p["receiver"])
        )
        assert hops == len(p["from_hand"]) + len(p["forwarded"]) == 3
        # every kept tile is exactly what its receiver now has beside the rack
        assert sorted(p["kept"]) == sorted(table.received[Seat(p["receiver"])])
    # every seat gave 3 and ends with as many tiles as before
    assert {s: len(before[s]) for s in SEATS} == hand_sizes(table)
    assert sorted(all_tiles(table)) == list(range(152))


def known_to(table: Table, seat: Seat, forwarded: set[int]) -> None:
    """The forwarder's redacted events and its view never show the tiles it forwarded.

    (Forwarded ids here are all above 3, so counts in the payloads cannot be mistaken
    for them; in the view, tile ids sit under "id" keys.)
    """
    for event in table.log:
        shown = ints_in(redact(event, seat)["payload"])
        assert not shown & forwarded, (event.type, shown & forwarded)
    view = seat_view(table, seat)
    ids = {t["id"] for t in view["rack"] + view["received"]}
    assert not ids & forwarded
    assert "forwarded" not in json.dumps(view)


# == one blind player =====================================================================
@pytest.mark.rule("NMJL-07", "NMJL-09")
def test_one_blind_player_step_3() -> None:
    # South gives 1 of its own (19) and 2 blind; the others give 3 of their own.
    # Own counts E3 S1 W3 N3: East starts (tie at 3, East first). Turns E, N, W, S.
    #   E: gives 6 7 8 -> N              N waiting: 6 7 8
    #   N: gives 43 44 45 -> W           W waiting: 43 44 45
    #   W: gives 31 32 33 -> S           S waiting: 31 32 33
    #   S: forwards 31 32, gives 19 -> E E waiting: 19 31 32; S keeps 33
    # Kept: E 19 31 32 | N 6 7 8 | W 43 44 45 | S 33
    table = at_step(3)
    own = {E: [6, 7, 8], S: [19], W: [31, 32, 33], N: [43, 44, 45]}
    events, before = declare_all(table, own)
    assert sorted(table.received[E]) == [19, 31, 32]
    assert sorted(table.received[N]) == [6, 7, 8]
    assert sorted(table.received[W]) == [43, 44, 45]
    assert table.received[S] == [33]
    assert routes(events) == {
        6: ["east", "north"], 7: ["east", "north"], 8: ["east", "north"],
        43: ["north", "west"], 44: ["north", "west"], 45: ["north", "west"],
        31: ["west", "south", "east"], 32: ["west", "south", "east"], 33: ["west", "south"],
        19: ["south", "east"],
    }  # fmt: skip
    sent = transfers(events)
    assert sent[S] == {
        "step": "CHARLESTON_P1_L",
        "receiver": "east",
        "from_hand": [19],
        "forwarded": [31, 32],
        "kept": [19, 31, 32],
    }
    assert sent[W]["from_hand"] == [31, 32, 33] and sent[W]["kept"] == [33]
    assert events_of(events, "pass_resolved")[0].payload["blind"] is True
    assert table.configuration == ["CHARLESTON_DECIDE_STOP"]
    check_consistency(table, events, before)
    known_to(table, S, {31, 32})
    # South's own record of the handover: its own tile and a count, never the ids
    assert redact(events_of(events, "tiles_transferred")[1], S)["payload"] == {
        "step": "CHARLESTON_P1_L",
        "receiver": "east",
        "count": 3,
        "from_hand": [19],
        "forwarded_count": 2,
    }
    # what West sent to South, as South sees it: only the tile it kept
    assert redact(events_of(events, "tiles_transferred")[2], S)["payload"] == {
        "step": "CHARLESTON_P1_L",
        "receiver": "south",
        "count": 3,
        "kept": [33],
        "kept_blind": [],
        "forwarded_on_count": 2,
    }
    # East, the receiver, learns which of its kept tiles South forwarded unseen
    assert redact(events_of(events, "tiles_transferred")[1], E)["payload"]["kept_blind"] == [31, 32]


@pytest.mark.rule("NMJL-07", "NMJL-09")
def test_one_blind_player_step_7() -> None:
    # Step 7 passes Right. North gives 43 and 2 blind; the others 3 own.
    # East starts (tie at 3). Turns E, S, W, N.
    #   E: 6 7 8 -> S;  S: 19 20 21 -> W;  W: 31 32 33 -> N (waiting 31 32 33)
    #   N: forwards 31 32, gives 43 -> E; N keeps 33
    # Kept: S 6 7 8 | W 19 20 21 | N 33 | E 43 31 32
    table = at_step(7)
    own = {E: [6, 7, 8], S: [19, 20, 21], W: [31, 32, 33], N: [43]}
    events, before = declare_all(table, own)
    assert sorted(table.received[S]) == [6, 7, 8]
    assert sorted(table.received[W]) == [19, 20, 21]
    assert table.received[N] == [33]
    assert sorted(table.received[E]) == [31, 32, 43]
    assert routes(events)[31] == ["west", "north", "east"]
    assert routes(events)[43] == ["north", "east"]
    assert transfers(events)[N]["forwarded"] == [31, 32]
    assert "COURTESY_PASS" in table.configuration  # a pass moved: the Courtesy Pass follows
    check_consistency(table, events, before)
    known_to(table, N, {31, 32})


# == two blind players ====================================================================
@pytest.mark.rule("NMJL-09")
def test_two_blind_players() -> None:
    # East gives 6 + 2 blind, West 31 32 + 1 blind, South and North 3 own.
    # Own counts E1 S3 W2 N3: South starts (tie at 3 with North, South is earlier).
    # Turns S, E, N, W (each receiver in turn: South gives to East, East to North, …).
    #   S: 19 20 21 -> E                    E waiting: 19 20 21
    #   E: forwards 19 20, gives 6 -> N     N waiting: 6 19 20; E keeps 21
    #   N: 43 44 45 -> W                    W waiting: 43 44 45
    #   W: forwards 43, gives 31 32 -> S    S waiting: 31 32 43; W keeps 44 45
    # Kept: E 21 | N 6 19 20 | W 44 45 | S 31 32 43
    table = at_step(3)
    own = {E: [6], S: [19, 20, 21], W: [31, 32], N: [43, 44, 45]}
    events, before = declare_all(table, own)
    assert table.received[E] == [21]
    assert sorted(table.received[N]) == [6, 19, 20]
    assert sorted(table.received[W]) == [44, 45]
    assert sorted(table.received[S]) == [31, 32, 43]
    assert routes(events)[19] == ["south", "east", "north"]
    assert routes(events)[21] == ["south", "east"]
    assert routes(events)[43] == ["north", "west", "south"]
    sent = transfers(events)
    assert sent[E] == {
        "step": "CHARLESTON_P1_L",
        "receiver": "north",
        "from_hand": [6],
        "forwarded": [19, 20],
        "kept": [6, 19, 20],
    }
    assert sent[W]["forwarded"] == [43] and sorted(sent[W]["kept"]) == [31, 32, 43]
    assert sent[S]["kept"] == [21]
    check_consistency(table, events, before)
    known_to(table, E, {19, 20})
    known_to(table, W, {43})


# == three blind players ==================================================================
@pytest.mark.rule("NMJL-09")
def test_three_blind_players() -> None:
    # East 3 blind, South 19 + 2 blind, West 31 32 + 1 blind, North 43 44 45.
    # North starts (3 own). Turns N, W, S, E.
    #   N: 43 44 45 -> W                  W waiting: 43 44 45
    #   W: forwards 43, gives 31 32 -> S  S waiting: 31 32 43; W keeps 44 45
    #   S: forwards 31 32, gives 19 -> E  E waiting: 19 31 32; S keeps 43
    #   E: forwards 19 31 32 -> N         N waiting: 19 31 32; E keeps nothing
    # Kept: N 19 31 32 | W 44 45 | S 43 | E (nothing: East's hand is unchanged)
    table = at_step(3)
    own = {E: [], S: [19], W: [31, 32], N: [43, 44, 45]}
    events, before = declare_all(table, own)
    assert sorted(table.received[N]) == [19, 31, 32]
    assert sorted(table.received[W]) == [44, 45]
    assert table.received[S] == [43]
    assert table.received[E] == []
    assert sorted(table.hand(E)) == before[E]
    assert routes(events)[31] == ["west", "south", "east", "north"]
    assert routes(events)[19] == ["south", "east", "north"]
    sent = transfers(events)
    assert sent[E]["from_hand"] == [] and sent[E]["forwarded"] == [19, 31, 32]
    assert sent[S]["kept"] == []  # East forwarded all three that South sent
    check_consistency(table, events, before)
    known_to(table, E, {19, 31, 32})
    known_to(table, S, {31, 32})
    known_to(table, W, {43})
    # East's own view of its handover: three blind, none of the ids
    own_event = next(e for e in events_of(events, "tiles_transferred") if e.seat is E)
    assert redact(own_event, E)["payload"] == {
        "step": "CHARLESTON_P1_L",
        "receiver": "north",
        "count": 3,
        "from_hand": [],
        "forwarded_count": 3,
    }


# == all four blind, some own tiles =======================================================
@pytest.mark.rule("NMJL-09")
def test_all_four_blind_own_counts_1_0_0_0() -> None:
    # East gives 6 and 2 blind; South, West, North give 3 blind each.
    # East starts (the only own tile). Turns E, N, W, S. Only tile 6 is in play:
    #   round 1: E gives 6 -> N; N forwards it -> W; W -> S; S -> E   (E owes 2 blind)
    #   round 2: E forwards 6 -> N -> W -> S -> E                     (E owes 1)
    #   round 3: E forwards 6 -> N -> W -> S -> E                     (everyone done)
    # Every seat gave 3; tile 6 went round the table three times and East keeps it:
    # nothing has really moved, and nobody but East ever saw tile 6.
    table = at_step(3)
    own = {E: [6], S: [], W: [], N: []}
    events, before = declare_all(table, own)
    assert table.received == {E: [6], S: [], W: [], N: []}
    assert {s: sorted(table.hand(s)) for s in SEATS} == before
    assert routes(events) == {6: ["east", *["north", "west", "south", "east"] * 3]}
    sent = transfers(events)
    assert sent[E] == {
        "step": "CHARLESTON_P1_L",
        "receiver": "north",
        "from_hand": [6],
        "forwarded": [6, 6],
        "kept": [],
    }
    for seat in (N, W):
        assert sent[seat]["from_hand"] == [] and sent[seat]["forwarded"] == [6, 6, 6]
        assert sent[seat]["kept"] == []
    # South handed tile 6 to East three times; East kept it once (the last time)
    assert sent[S]["forwarded"] == [6, 6, 6]
    assert sent[S]["kept"] == [6]
    # a pass moved (from East's hand), so the Charleston goes on to the vote
    assert events_of(events, "pass_resolved")[0].payload["moved"] is True
    assert table.configuration == ["CHARLESTON_DECIDE_STOP"]
    check_consistency(table, events, before)
    for seat in (S, W, N):
        known_to(table, seat, {6})
    # East, receiving from South, is told it forwarded on 2 of the 3 arrivals
    to_east = next(e for e in events_of(events, "tiles_transferred") if e.seat is S)
    assert redact(to_east, E)["payload"] == {
        "step": "CHARLESTON_P1_L",
        "receiver": "east",
        "count": 3,
        "kept": [6],
        "kept_blind": [6],
        "forwarded_on_count": 2,
    }


@pytest.mark.rule("NMJL-09")
def test_all_four_blind_own_counts_2_1_0_0() -> None:
    # East gives 6 7 + 1 blind, South 19 + 2 blind, West and North 3 blind.
    # East starts (2 own). Turns E, N, W, S.
    #   round 1: E gives 6 7 -> N;  N forwards 6 7 -> W (owes 1);  W forwards 6 7 -> S
    #            (owes 1);  S gives 19 and forwards 6 7 -> E (done); E waiting: 19 6 7
    #   round 2: E forwards 19 (first arrived) -> N; N forwards 19 -> W; W forwards 19
    #            -> S; S owes nothing.
    # Kept: E 6 7 (its own, back) | S 19 (its own, back) | W, N nothing.
    table = at_step(3)
    own = {E: [6, 7], S: [19], W: [], N: []}
    events, before = declare_all(table, own)
    assert table.received == {E: [6, 7], S: [19], W: [], N: []}
    assert routes(events) == {
        6: ["east", "north", "west", "south", "east"],
        7: ["east", "north", "west", "south", "east"],
        19: ["south", "east", "north", "west", "south"],
    }
    sent = transfers(events)
    assert sent == {
        E: {
            "step": "CHARLESTON_P1_L",
            "receiver": "north",
            "from_hand": [6, 7],
            "forwarded": [19],
            "kept": [],
        },
        S: {
            "step": "CHARLESTON_P1_L",
            "receiver": "east",
            "from_hand": [19],
            "forwarded": [6, 7],
            "kept": [6, 7],
        },
        W: {
            "step": "CHARLESTON_P1_L",
            "receiver": "south",
            "from_hand": [],
            "forwarded": [6, 7, 19],
            "kept": [19],
        },
        N: {
            "step": "CHARLESTON_P1_L",
            "receiver": "west",
            "from_hand": [],
            "forwarded": [6, 7, 19],
            "kept": [],
        },
    }
    check_consistency(table, events, before)
    known_to(table, N, {6, 7, 19})
    known_to(table, W, {6, 7, 19})
    known_to(table, S, {6, 7})
    known_to(table, E, {19})


@pytest.mark.rule("NMJL-09")
def test_all_four_blind_own_counts_1_1_1_1() -> None:
    # Each gives one own tile and 2 blind. East starts (tie). Turns E, N, W, S.
    #   round 1: E gives 6 -> N; N forwards 6, gives 43 -> W (W waiting 43 6);
    #            W forwards 43 6, gives 31 -> S (S waiting 31 43 6);
    #            S forwards 31 43, gives 19 -> E (E waiting 19 31 43); S keeps 6
    #   round 2: E forwards 19 31 -> N; N forwards 19 -> W; W owes nothing; S nothing.
    # Kept: E 43 | N 31 | W 19 | S 6
    table = at_step(3)
    own = {E: [6], S: [19], W: [31], N: [43]}
    events, before = declare_all(table, own)
    assert table.received == {E: [43], N: [31], W: [19], S: [6]}
    assert routes(events) == {
        6: ["east", "north", "west", "south"],
        43: ["north", "west", "south", "east"],
        31: ["west", "south", "east", "north"],
        19: ["south", "east", "north", "west"],
    }
    check_consistency(table, events, before)
    known_to(table, N, {6, 19})
    known_to(table, W, {43, 6})
    known_to(table, S, {31, 43})
    known_to(table, E, {19, 31})


# == all four blind, no own tiles =========================================================
@pytest.mark.rule("NMJL-10", "NMJL-11")
@pytest.mark.parametrize("step", [3, 7])
def test_all_four_blind_with_no_own_tiles(step: int) -> None:
    # Nobody gives a tile from the hand: nothing can move. On step 7 the Charleston ends
    # at once with no Courtesy Pass; on step 3 the vote follows as usual.
    table = at_step(step)
    events, before = declare_all(table, {s: [] for s in SEATS})
    assert {s: sorted(table.hand(s)) for s in SEATS} == before
    assert table.received == {s: [] for s in SEATS}
    assert events_of(events, "tiles_transferred") == []
    resolved = events_of(events, "pass_resolved")[0].payload
    assert resolved["moved"] is False and resolved["blind"] is False
    assert resolved["routes"] == {}
    if step == 3:
        assert table.configuration == ["CHARLESTON_DECIDE_STOP"]
        assert events_of(events, "charleston_ended") == []
        return
    assert table.configuration == ["CHARLESTON_DONE"]
    assert [e.type for e in events[-2:]] == ["charleston_ended", "state_changed"]
    assert events[-1].payload["to"] == ["CHARLESTON_DONE"]
    with pytest.raises(errors.CharlestonOver):  # no Courtesy Pass
        table.execute(offer(E, 1))


@pytest.mark.rule("NMJL-07", "PASS-05")
def test_blind_choice_may_be_changed_or_withdrawn() -> None:
    # A blind choice is a confirmed choice like any other: it may be changed or withdrawn.
    table = at_step(3)
    run(table, confirm(S, [], blind=3))
    run(table, change(S, [19, 20], blind=1))
    assert table.selections[S].blind == 1
    run(table, withdraw(S), confirm(S, [19, 20, 21]))
    assert table.selections[S].blind == 0
