"""Secrecy: nothing that leaves for a seat names another seat's concealed tiles.

A seat may know every tile that has ever been in its own hand (dealt, or received and
kept). It may never learn a tile that only passed through it blind, nor any tile of
another hand. We play many games (the package's bots, blind-happy) and, after every
command, check every new event as redacted for each seat and every seat's view.

The deals here use only tile ids 20-151 (ids 0-19 stay in the wall), so that any integer
below 20 in a payload is a count, never a tile: every integer of 20 or more must be a
tile the seat may know.
"""

from __future__ import annotations

import random
import re

import pytest
from engine_helpers import (
    E,
    N,
    S,
    W,
    change,
    confirm,
    ints_in,
    offer,
    place,
    place_all,
    run,
    vote,
)

from charleston_fsm.engine import errors
from charleston_fsm.engine.bots import Bot, bots_for
from charleston_fsm.engine.commands import Command
from charleston_fsm.engine.events import Event
from charleston_fsm.engine.seats import SEATS, Seat
from charleston_fsm.engine.table import Table
from charleston_fsm.engine.tiles import HAND_SIZE, Deal, is_joker
from charleston_fsm.engine.views import director_view, redact, seat_view

LOWEST_TILE = 20


def high_deal(seed: int) -> Deal:
    tiles = list(range(LOWEST_TILE, 152))
    random.Random(seed).shuffle(tiles)
    hands, at = {}, 0
    for seat in SEATS:
        hands[seat] = tiles[at : at + HAND_SIZE[seat]]
        at += HAND_SIZE[seat]
    return Deal.explicit(hands)


class Watcher:
    """Tracks what each seat may know and checks everything it is shown."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.known: dict[Seat, set[int]] = {s: set(table.hand(s)) for s in SEATS}
        self.checked = 0

    def learn(self) -> None:
        for seat in SEATS:
            self.known[seat] |= set(self.table.hand(seat))

    def allowed(self, seat: Seat, extra: set[int] = frozenset()) -> set[int]:
        return self.known[seat] | set(extra)

    def check_shown(self, seat: Seat, data: object, what: str) -> None:
        leaked = {i for i in ints_in(data) if i >= LOWEST_TILE} - self.known[seat]
        assert not leaked, f"{what} shows {seat.value} tiles {sorted(leaked)}"

    def after(self, events: list[Event]) -> None:
        self.learn()
        for seat in SEATS:
            for event in events:
                shown = redact(event, seat)
                assert shown["type"] == event.type
                self.check_shown(seat, shown, f"event {event.type}")
                self.checked += 1
            self.check_shown(seat, seat_view(self.table, seat), "seat_view")
        for event in events:
            assert redact(event, None) == event.to_dict()  # the director sees it whole

    def execute(self, command: Command) -> list[Event]:
        events = self.table.execute(command)
        self.after(events)
        return events


def play_watched(table: Table, seed: int, blind_rate: float = 0.35) -> Watcher:
    watcher = Watcher(table)
    watcher.after([])
    bots = bots_for(seed, blind_rate=blind_rate)
    rng = random.Random(seed)
    for _ in range(400):
        acted = False
        seats = list(SEATS)
        rng.shuffle(seats)
        for seat in seats:
            command = bots[seat].decide(seat_view(table, seat))
            if command is not None:
                watcher.execute(command)
                acted = True
        if not acted:
            break
    assert table.finished
    return watcher


@pytest.mark.rule("PASS-11")
@pytest.mark.parametrize("ruleset", ["nmjl", "house"])
@pytest.mark.parametrize("seed", range(12))
def test_bot_games_leak_nothing(ruleset: str, seed: int) -> None:
    table = Table(high_deal(seed), ruleset)
    watcher = play_watched(table, seed, blind_rate=0.6)
    assert watcher.checked > 0


@pytest.mark.rule("PASS-11", "NMJL-08")
@pytest.mark.parametrize("seed", range(6))
def test_all_blind_bots_leak_nothing(seed: int) -> None:
    # every bot blind-passes whenever it can: long IOU chains, tiles going round
    table = Table(high_deal(100 + seed), "nmjl")
    play_watched(table, seed, blind_rate=1.0)


@pytest.mark.rule("NMJL-08")
def test_blind_forwarder_never_sees_what_it_forwarded() -> None:
    table = Table(high_deal(7), "nmjl")
    watcher = Watcher(table)
    for _ in range(2):
        place_all(table)
        for seat in SEATS:
            pick = [t for t in table.racks[seat] if not is_joker(t)][:3]
            watcher.execute(confirm(seat, pick))
    place_all(table)
    watcher.learn()
    own = {s: [t for t in table.racks[s] if not is_joker(t)] for s in SEATS}
    events = []
    events += watcher.execute(confirm(E, own[E][:1], blind=2))
    events += watcher.execute(confirm(S, [], blind=3))
    events += watcher.execute(confirm(W, own[W][:2], blind=1))
    events += watcher.execute(confirm(N, own[N][:3]))
    forwarded = {
        Seat(e.seat): set(e.payload["forwarded"]) for e in events if e.type == "tiles_transferred"
    }
    assert forwarded[S]  # South forwarded three unseen tiles
    for seat, tiles in forwarded.items():
        unseen = tiles - watcher.known[seat]
        for event in table.log:
            assert not ints_in(redact(event, seat)["payload"]) & unseen
        assert not ints_in(seat_view(table, seat)) & unseen
    # the director sees every route
    resolved = next(e for e in events if e.type == "pass_resolved")
    assert redact(resolved, None)["payload"]["routes"]
    assert "routes" not in redact(resolved, S)["payload"]


@pytest.mark.rule("PASS-11", "PASS-09")
def test_seat_view_shows_own_tiles_and_public_facts_only() -> None:
    table = Table(high_deal(3), "nmjl")
    run(table, confirm(E, [t for t in table.racks[E] if not is_joker(t)][:3]))
    for seat in SEATS:
        view = seat_view(table, seat)
        assert [t["id"] for t in view["rack"]] == table.racks[seat]
        assert view["game"]["hand_sizes"] == {"east": 14, "south": 13, "west": 13, "north": 13}
        assert view["game"]["steps"][0]["confirmed"] == ["east"]
        for other in SEATS:
            if other is not seat:
                assert not ints_in(view) & set(table.hand(other)), (seat, other)
        if seat is E:
            assert view["selection"]["locked"] is True
        else:
            assert view["selection"] is None
    # another seat's confirmation: a count, no tiles
    confirmed = table.log[0]
    assert redact(confirmed, S)["payload"] == {"count": 3, "blind": 0}
    assert redact(confirmed, E)["payload"]["tiles"] == list(table.selections[E].tiles)


def test_director_view_sees_everything() -> None:
    table = Table(high_deal(4), "nmjl")
    view = director_view(table)
    for seat in SEATS:
        assert [t["id"] for t in view["seats"][seat.value]["rack"]] == table.racks[seat]
    assert view["wall"] == {"count": len(table.wall)}


def test_unknown_event_types_are_redacted_to_nothing() -> None:
    event = Event("secret_thing", E, {"tiles": [30, 31, 32]})
    for seat in SEATS:
        assert redact(event, seat)["payload"] == {}
    assert redact(event, None)["payload"] == {"tiles": [30, 31, 32]}


def test_placed_and_changed_events_show_counts_to_others() -> None:
    table = Table(high_deal(5), "nmjl")
    picks = {s: [t for t in table.racks[s] if not is_joker(t)][:6] for s in SEATS}
    run(table, confirm(E, picks[E][:3]), change(E, picks[E][3:6]))
    changed = table.log[-1]
    assert changed.type == "pass_changed"
    assert redact(changed, W)["payload"] == {"count": 3, "blind": 0}
    run(table, *(confirm(s, picks[s][:3]) for s in (S, W, N)))
    events = run(table, place(S))
    assert redact(events[0], E)["payload"] == {"count": 3}
    assert redact(events[0], S)["payload"]["tiles"] == table.racks[S][-3:]


# == refusal messages ====================================================================
TILE_IN_MESSAGE = re.compile(r"#(\d+)")


def _check_message(watcher: Watcher, seat: Seat, command: Command, message: str) -> None:
    named = set(getattr(command, "tiles", []))
    for tile in map(int, TILE_IN_MESSAGE.findall(message)):
        assert tile in watcher.known[seat], (message, tile)
    numbers = {int(n) for n in re.findall(r"\d+", message)}
    leaked = {n for n in numbers if n >= LOWEST_TILE} - watcher.known[seat] - named
    assert not leaked, (message, leaked)


@pytest.mark.rule("PASS-11")
@pytest.mark.parametrize("seed", range(8))
def test_refusal_messages_never_mention_other_seats_tiles(seed: int) -> None:
    rng = random.Random(seed)
    table = Table(high_deal(200 + seed), rng.choice(["nmjl", "house"]))
    watcher = Watcher(table)
    bots = {s: Bot(seat=s, rng=random.Random(f"{seed}{s}")) for s in SEATS}
    refusals = 0
    for _ in range(300):
        if table.finished and rng.random() < 0.2:
            break
        seat = rng.choice(SEATS)
        others = [t for s in SEATS if s is not seat for t in table.hand(s)]
        mine = list(table.hand(seat))
        pool = others + mine + list(range(LOWEST_TILE, 152))
        kind = rng.randrange(6)
        if kind == 0:
            command: Command = confirm(seat, rng.sample(pool, rng.randint(0, 4)))
        elif kind == 1:
            command = confirm(seat, rng.sample(mine, 2) + rng.sample(others, 1))
        elif kind == 2:
            command = change(seat, rng.sample(others, 3), blind=rng.randint(-1, 4))
        elif kind == 3:
            command = rng.choice([vote(seat, "stop"), offer(seat, rng.randint(-1, 4))])
        else:
            command = bots[seat].decide(seat_view(table, seat)) or vote(seat, "continue")
        try:
            watcher.execute(command)
        except errors.CharlestonError as error:
            refusals += 1
            _check_message(watcher, seat, command, error.message)
            assert error.to_dict()["message"] == error.message
    assert refusals > 0


def test_tile_named_twice_message_shows_only_own_tile() -> None:
    table = Table(high_deal(9), "nmjl")
    watcher = Watcher(table)
    mine = [t for t in table.racks[S] if not is_joker(t)]
    with pytest.raises(errors.TileNamedTwice) as info:
        table.execute(confirm(S, [mine[0], mine[0], mine[1]]))
    assert f"#{mine[0]}" in info.value.message
    _check_message(watcher, S, confirm(S, []), info.value.message)
    theirs = table.racks[N][0]
    with pytest.raises(errors.TileNotInHand) as info:
        table.execute(confirm(S, [mine[0], theirs, theirs]))
    # the id South sent is echoed, but not its face nor where it is
    assert "#" not in info.value.message
    assert "North" not in info.value.message
    with pytest.raises(errors.CharlestonError):
        table.execute(vote(S, "continue"))
