"""Properties over many random command sequences, legal and illegal (hypothesis).

Each example deals a shuffled table under one ruleset/options profile and sends a long
sequence of commands: mostly what a bot would do from the seat's own view (so games
reach the vote, the Second Charleston and the Courtesy Pass), mixed with random and
deliberately bad commands (other seats' tiles, jokers, wrong counts, wrong moments).
After every command we check:

* a refused command changes nothing (snapshot, log and allowed commands all equal);
* the 152 tiles are conserved across hands (rack + received) and the wall;
* no joker ever leaves the hand it was dealt to;
* after every standard pass every hand is back to 14/13/13/13, and every receiver got
  exactly what its giver's handover says; after a courtesy exchange each size changes by
  exactly received - given (``house`` is asymmetric: 2 vs 0 is allowed);
* a table restored from a snapshot taken at a random moment (``Table.restore`` and the
  store's warm ``Table.load``) answers every later command identically;
* at the end ``Table.fold(deal, ruleset, options, log)`` rebuilds an identical snapshot,
  also from a log that went through JSON.
"""

from __future__ import annotations

import json
import random

import hypothesis
import pytest
from budget import examples
from engine_helpers import (
    STANDARD_SIZES,
    all_tiles,
    challenge,
    change,
    confirm,
    declare,
    hand_sizes,
    offer,
    place,
    vote,
    withdraw,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from charleston_fsm.engine import errors
from charleston_fsm.engine.bots import Bot
from charleston_fsm.engine.commands import (
    CloseDingDong,
    Command,
    DeclareReady,
    Gift,
    GiveDingDong,
    RequestDingDong,
)
from charleston_fsm.engine.events import Event
from charleston_fsm.engine.seats import SEATS, Seat
from charleston_fsm.engine.table import Table
from charleston_fsm.engine.tiles import Deal, is_joker
from charleston_fsm.engine.views import seat_view

PROFILES: list[tuple[str, dict | None]] = [
    ("nmjl", None),
    ("house", None),
    ("nmjl", {"blind_pass": False}),
    ("nmjl", {"courtesy_mode": "asymmetric", "require_placing": False}),
    ("house", {"courtesy_mode": "agreed_min"}),
    ("house", {"require_placing": False, "blind_pass": True}),
    ("four_winds", None),
    ("four_winds", {"ding_dong_max": 2, "require_placing": False, "round": "north"}),
]

PROPERTY_SETTINGS = settings(
    max_examples=examples(45, 500),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def draw_command(data: st.DataObject, table: Table, bots: dict[Seat, Bot]) -> Command:
    seat = data.draw(st.sampled_from(SEATS), label="seat")
    kinds = ["bot"] * 8 + ["own", "any", "change", "gifts", "other"]
    kind = data.draw(st.sampled_from(kinds), label="kind")
    hand = table.hand(seat)
    if kind == "bot":
        command = bots[seat].decide(seat_view(table, seat))
        if command is not None:
            return command
        kind = "other"
    if kind == "own":  # tiles of the own hand, counts and blind at random (jokers too)
        count = data.draw(st.integers(0, 4), label="count")
        tiles = data.draw(st.lists(st.sampled_from(hand), max_size=count), label="tiles")
        blind = data.draw(st.sampled_from([0, 0, 0, 1, 2, 3]), label="blind")
        return confirm(seat, tiles, blind)
    if kind == "any":  # any ids at all, duplicates and other seats' tiles included
        tiles = data.draw(st.lists(st.integers(0, 151), max_size=4), label="ids")
        return confirm(seat, tiles, data.draw(st.integers(-1, 4), label="blind"))
    if kind == "gifts":  # a Ding Dong: any tiles of the hand (jokers too), any receivers
        tiles = data.draw(st.lists(st.sampled_from(hand), min_size=2, max_size=4), label="tiles")
        to = st.one_of(st.none(), st.sampled_from(SEATS))
        receivers = data.draw(st.lists(to, min_size=len(tiles), max_size=len(tiles)))
        return GiveDingDong(
            seat=seat, gifts=[Gift(tile=t, to=r) for t, r in zip(tiles, receivers, strict=True)]
        )
    if kind == "change":
        tiles = data.draw(st.lists(st.sampled_from(hand), min_size=3, max_size=3), label="tiles")
        return change(seat, tiles, data.draw(st.sampled_from([0, 0, 1, 3]), label="blind"))
    return data.draw(
        st.sampled_from(
            [
                withdraw(seat),
                place(seat),
                vote(seat, "continue"),
                vote(seat, "stop"),
                offer(seat, -1),
                offer(seat, 0),
                offer(seat, 2),
                offer(seat, 4),
                declare(seat),
                challenge(seat, seat.opposite),
                RequestDingDong(seat=seat),
                DeclareReady(seat=seat),
                CloseDingDong(),
                CloseDingDong(seat=seat),
            ]
        ),
        label="other",
    )


def check_invariants(table: Table, deal: Deal, before: dict[Seat, list[int]], events) -> None:
    # the 152 tiles are conserved across hands (rack + received) and the wall
    assert sorted(all_tiles(table)) == list(range(152))
    # no joker ever moves
    for seat in SEATS:
        assert {t for t in table.hand(seat) if is_joker(t)} == {
            t for t in deal.hands[seat] if is_joker(t)
        }
    for event in events:
        if event.type == "tiles_transferred":
            moved = event.payload["from_hand"] + event.payload["forwarded"]
            assert not any(is_joker(t) for t in moved)
            assert len(moved) <= 3
    resolved = [e for e in events if e.type == "pass_resolved"]
    if not resolved:
        return
    courtesy = all(e.payload["step"].startswith("PAIR_") for e in resolved)
    transfers = [e for e in events if e.type == "tiles_transferred"]
    if not courtesy:
        # every hand is back to 14/13/13/13 after a standard pass, an exchange, a Ding Dong
        assert hand_sizes(table) == STANDARD_SIZES
        each = 1 if resolved[0].payload["step"] == "DING_DONG" else 3  # one to each other
        for e in transfers:
            assert len(e.payload["from_hand"]) + len(e.payload["forwarded"]) == each
    else:
        # NOTE: HOUSE-03 lets a courtesy pair exchange 2 vs 0, so sizes need not
        # return to 14/13/13/13: each size changes by exactly received - given.
        for seat in SEATS:
            given_ = sum(len(e.payload["from_hand"]) for e in transfers if e.seat is seat)
            got = sum(len(e.payload["kept"]) for e in transfers if e.payload["receiver"] == seat)
            assert len(table.hand(seat)) == len(before[seat]) - given_ + got
    # every hand receives exactly what was sent to it
    if not any(e.payload["forwarded"] for e in transfers):
        for e in transfers:
            assert sorted(e.payload["kept"]) == sorted(e.payload["from_hand"])
    for e in transfers:
        receiver = Seat(e.payload["receiver"])
        assert set(e.payload["kept"]) <= set(table.received[receiver])
        assert not set(e.payload["from_hand"]) & set(table.hand(e.seat)) - set(
            table.received[e.seat]
        )
    for seat in SEATS:
        if any(e.payload["receiver"] == seat for e in transfers):
            arrived = [
                t for e in transfers if e.payload["receiver"] == seat for t in e.payload["kept"]
            ]
            assert sorted(arrived) == sorted(
                table.received[seat][-len(arrived) :] if arrived else []
            )


def light_state(table: Table) -> tuple:
    """What a refusal must not change: the snapshot, the log and the chart's own state.

    (``engine_helpers.frozen`` also compares every seat's allowed commands; the refusal
    tests do that. Here the chart's raw configuration, in its own order, stands in.)
    """
    raw = [s.id for s in table.chart.configuration]
    return json.dumps(table.snapshot(), sort_keys=True), len(table.log), raw


def _ended_table_of_another_game(table: Table) -> Table:
    """A warm table of the same chart family, another ruleset where there is one, ended."""
    if table.ruleset.name == "four_winds":  # a round that plays neither ends at once
        return Table(Deal.shuffled(999), "four_winds", {"charleston": "off", "ding_dong": "off"})
    other = Table(Deal.shuffled(999), "house" if table.ruleset.name == "nmjl" else "nmjl")
    other.execute(declare(SEATS[0]))  # a Heavenly Hand ends it
    return other


class Twin:
    """A table restored from a snapshot, fed the same commands from then on.

    ``warm`` uses the store's path: an existing table of another game loads the snapshot.
    """

    def __init__(self, table: Table, warm: bool) -> None:
        snapshot = json.loads(json.dumps(table.snapshot()))  # JSON-ready, really
        if warm:
            twin = _ended_table_of_another_game(table)
            twin.load(snapshot)
        else:
            twin = Table.restore(snapshot)
        self.tables = [twin]
        self.offset = len(table.log)
        for twin in self.tables:
            assert twin.snapshot() == table.snapshot()

    def execute(self, command: Command, outcome: list[Event] | errors.CharlestonError) -> None:
        for twin in self.tables:
            if isinstance(outcome, errors.CharlestonError):
                try:
                    twin.execute(command)
                except errors.CharlestonError as error:
                    assert type(error) is type(outcome)
                    assert error.message == outcome.message
                else:
                    raise AssertionError(f"twin accepted {command!r}")
            else:
                assert twin.execute(command) == outcome

    def compare(self, table: Table) -> None:
        for twin in self.tables:
            assert twin.snapshot() == table.snapshot()
            assert twin.log == table.log[self.offset :]
            for seat in SEATS:
                assert twin.allowed_commands(seat) == table.allowed_commands(seat)
                assert seat_view(twin, seat) == seat_view(table, seat)


def run_random_game(data: st.DataObject, profile: int, seed: int, length: int) -> Table:
    ruleset, options = PROFILES[profile]
    deal = Deal.shuffled(seed)
    table = Table(deal, ruleset, options)
    bots = {
        s: Bot(
            seat=s,
            rng=random.Random(f"{seed}:{s}"),
            blind_rate=0.5,
            continue_rate=0.7,
            late_objection_rate=0.1,
        )
        for s in SEATS
    }
    twin_at = data.draw(st.integers(0, length), label="twin_at")
    warm = data.draw(st.booleans(), label="warm")
    twin: Twin | None = None
    for step in range(length):
        if step == twin_at:
            twin = Twin(table, warm)
        command = draw_command(data, table, bots)
        before_state = light_state(table)
        before_hands = {s: list(table.hand(s)) for s in SEATS}
        log_length = len(table.log)
        try:
            events = table.execute(command)
        except errors.CharlestonError as error:
            # a refused command changes nothing
            assert light_state(table) == before_state
            assert error.kind in ("rule", "not_now")
            outcome: list[Event] | errors.CharlestonError = error
        else:
            assert table.log[log_length:] == events
            assert events and events[0].type not in ("tiles_transferred", "pass_resolved")
            check_invariants(table, deal, before_hands, events)
            outcome = events
        if twin is not None:
            twin.execute(command, outcome)
    if twin is not None:
        twin.compare(table)
    hypothesis.event(f"reached {table.configuration[-1]}")
    # a fold of the log rebuilds an identical snapshot (after a trip through JSON, as a
    # store keeps it)
    stored = [Event.from_dict(json.loads(json.dumps(e.to_dict()))) for e in table.log]
    assert Table.fold(Deal.from_dict(deal.to_dict()), ruleset, options, stored).snapshot() == (
        table.snapshot()
    )
    return table


@pytest.mark.rule("PASS-07", "SVC-01")
@PROPERTY_SETTINGS
@given(
    data=st.data(),
    profile=st.integers(0, len(PROFILES) - 1),
    seed=st.integers(0, 10_000),
    length=st.one_of(st.integers(1, 30), st.integers(60, 150)),
)
def test_random_command_sequences_keep_every_invariant(
    data: st.DataObject, profile: int, seed: int, length: int
) -> None:
    run_random_game(data, profile, seed, length)


@pytest.mark.rule("SVC-04")
@settings(
    max_examples=examples(12, 120), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(data=st.data(), profile=st.integers(0, len(PROFILES) - 1), seed=st.integers(0, 10_000))
def test_long_games_reach_the_end_and_still_fold(
    data: st.DataObject, profile: int, seed: int
) -> None:
    table = run_random_game(data, profile, seed, 200)
    # with mostly legal play most games end; when they do, sizes are standard unless an
    # asymmetric courtesy exchange changed them (HOUSE-03: 2 vs 0 allowed)
    free_courtesy = getattr(table.options, "courtesy_mode", None) == "asymmetric"
    if table.finished and not free_courtesy:
        assert hand_sizes(table) == STANDARD_SIZES


@pytest.mark.rule("NMJL-08", "NMJL-09")
@settings(max_examples=examples(40, 400), deadline=None)
@given(
    own=st.tuples(*[st.integers(0, 3)] * 4),
    seed=st.integers(0, 1000),
    second=st.booleans(),
)
def test_any_blind_declarations_resolve(own: tuple[int, ...], seed: int, second: bool) -> None:
    """Every combination of own counts 0-3 on steps 3 and 7 resolves with 3 given each."""
    table = Table(Deal.shuffled(seed), "nmjl")
    bots = {s: Bot(seat=s, rng=random.Random(seed), blind_rate=0.0) for s in SEATS}

    def play_until(states: set[str]) -> None:
        while not set(table.configuration) & states:
            for seat in SEATS:
                command = bots[seat].decide(seat_view(table, seat))
                if command is not None:
                    if command.type == "vote":
                        command = vote(seat, "continue")
                    table.execute(command)

    target = "CHARLESTON_P2_R" if second else "CHARLESTON_P1_L"
    play_until({target})
    for seat in SEATS:
        if table.received[seat]:
            table.execute(place(seat))
    before = {s: list(table.hand(s)) for s in SEATS}
    events = []
    for seat, count in zip(SEATS, own, strict=True):
        tiles = [t for t in table.hand(seat) if not is_joker(t)][:count]
        events += table.execute(confirm(seat, tiles, blind=3 - count))
    check_invariants(table, table.deal, before, events)
    assert hand_sizes(table) == STANDARD_SIZES
    transfers = [e for e in events if e.type == "tiles_transferred"]
    if sum(own) == 0:
        assert not transfers
        # the Second Right ends the Charleston; the First Left goes on to the vote
        assert table.finished is second
    else:
        assert len(transfers) == 4
        routes = next(e for e in events if e.type == "pass_resolved").payload["routes"]
        # every own tile left its giver; the kept tiles are exactly what arrived
        assert sorted(int(t) for t in routes) == sorted(
            t for e in transfers for t in e.payload["from_hand"]
        )
        for seat in SEATS:
            kept = [
                t for e in transfers if e.payload["receiver"] == seat for t in e.payload["kept"]
            ]
            assert sorted(kept) == sorted(table.received[seat])
            assert all(routes[str(t)][-1] == seat.value for t in kept)


@pytest.mark.rule("SVC-04")
def test_fold_refuses_a_tampered_log() -> None:
    table = Table(Deal.shuffled(3), "nmjl")
    bots = {s: Bot(seat=s, rng=random.Random(s.value)) for s in SEATS}
    for _ in range(3):
        for seat in SEATS:
            command = bots[seat].decide(seat_view(table, seat))
            if command is not None:
                table.execute(command)
    index = next(i for i, e in enumerate(table.log) if e.type == "tiles_transferred")
    original = table.log[index]
    forged = Event(original.type, original.seat, {**original.payload, "kept": []})
    log = [*table.log[:index], forged, *table.log[index + 1 :]]
    try:
        Table.fold(table.deal, "nmjl", None, log)
    except errors.ReplayMismatch as error:
        assert error.code == "replay_mismatch"
    else:
        raise AssertionError("a forged event was folded")
