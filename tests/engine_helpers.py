"""Helpers for the engine tests: tables from explicit hands, commands in one call, refusals.

Plain functions (no fixtures), so every test module imports what it uses and
``tests/conftest.py`` stays untouched.

Tile ids (see ``charleston_fsm.engine.tiles``): 0-107 suits, 108-123 winds, 124-135 dragons,
136-143 flowers, 144-151 jokers.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import pytest

from charleston_fsm.engine import errors
from charleston_fsm.engine.commands import (
    ChallengeDeadHand,
    ChangePass,
    Command,
    ConfirmPass,
    DeclareMahJongg,
    OfferCourtesy,
    PlaceTiles,
    Vote,
    WithdrawPass,
)
from charleston_fsm.engine.events import Event
from charleston_fsm.engine.seats import SEATS, Seat
from charleston_fsm.engine.table import Table
from charleston_fsm.engine.tiles import TILE_COUNT, Deal, is_joker
from charleston_fsm.rulebook import get_rule

E, S, W, N = Seat.EAST, Seat.SOUTH, Seat.WEST, Seat.NORTH
JOKERS = tuple(t for t in range(TILE_COUNT) if is_joker(t))

#: A readable deal: every seat holds a run of plain tiles and one joker at the end.
#: East 0-12 + joker 144, South 13-24 + 145, West 25-36 + 146, North 37-48 + 147.
PLAIN_HANDS: dict[Seat, tuple[int, ...]] = {
    E: (*range(0, 13), 144),
    S: (*range(13, 25), 145),
    W: (*range(25, 37), 146),
    N: (*range(37, 49), 147),
}


# Where each seat's tiles go, written out by hand from SEAT-02 (an oracle independent
# of Seat.toward).
RIGHT = {E: S, S: W, W: N, N: E}
ACROSS = {E: W, S: N, W: E, N: S}
LEFT = {E: N, S: E, W: S, N: W}


def plain_deal() -> Deal:
    return Deal.explicit(PLAIN_HANDS)


def new_table(
    ruleset: str = "nmjl",
    options: Mapping[str, Any] | None = None,
    hands: Mapping[Seat, Sequence[int]] | None = None,
) -> Table:
    return Table(Deal.explicit(hands or PLAIN_HANDS), ruleset, options)


# -- commands ------------------------------------------------------------------------------
def confirm(seat: Seat, tiles: Iterable[int] = (), blind: int = 0) -> ConfirmPass:
    return ConfirmPass(seat=seat, tiles=list(tiles), blind=blind)


def change(seat: Seat, tiles: Iterable[int] = (), blind: int = 0) -> ChangePass:
    return ChangePass(seat=seat, tiles=list(tiles), blind=blind)


def withdraw(seat: Seat) -> WithdrawPass:
    return WithdrawPass(seat=seat)


def place(seat: Seat) -> PlaceTiles:
    return PlaceTiles(seat=seat)


def vote(seat: Seat, choice: str) -> Vote:
    return Vote(seat=seat, choice=choice)  # type: ignore[arg-type]


def offer(seat: Seat, count: int) -> OfferCourtesy:
    return OfferCourtesy(seat=seat, count=count)


def declare(seat: Seat = E) -> DeclareMahJongg:
    return DeclareMahJongg(seat=seat)


def challenge(seat: Seat, target: Seat) -> ChallengeDeadHand:
    return ChallengeDeadHand(seat=seat, target=target)


def run(table: Table, *commands: Command) -> list[Event]:
    """Execute commands in order; return every event they caused."""
    events: list[Event] = []
    for command in commands:
        events.extend(table.execute(command))
    return events


# -- playing whole steps -------------------------------------------------------------------
def plain_tiles(table: Table, seat: Seat, count: int) -> list[int]:
    """The first ``count`` non-joker tiles of the seat's rack (received tiles excluded)."""
    return [t for t in table.racks[seat] if not is_joker(t)][:count]


def place_all(table: Table) -> list[Event]:
    return run(table, *(place(s) for s in SEATS if table.received[s]))


def pass_step(
    table: Table,
    counts: Mapping[Seat, int] | None = None,
) -> list[Event]:
    """Every seat of the active passing step(s) places its tiles and confirms.

    ``counts`` gives a seat's count where the table lets it choose (asymmetric courtesy);
    otherwise the required count is used. Tiles are the first plain tiles of the rack.
    """
    events = place_all(table)
    for _, step in table.active_steps():
        for seat in step.participants:
            required = table.required_count(seat, step)
            count = required if required is not None else (counts or {}).get(seat, 0)
            events += table.execute(confirm(seat, plain_tiles(table, seat, count)))
    return events


def vote_all(table: Table, choice: str = "continue", **per_seat: str) -> list[Event]:
    return run(table, *(vote(s, per_seat.get(s.value, choice)) for s in SEATS))


def play_steps(table: Table, count: int) -> None:
    """Play the first ``count`` standard passes, everyone voting continue after the third."""
    for i in range(count):
        pass_step(table)
        if i == 2:
            vote_all(table)


def first_charleston(table: Table) -> list[Event]:
    return pass_step(table) + pass_step(table) + pass_step(table)


def second_charleston(table: Table) -> list[Event]:
    return vote_all(table) + pass_step(table) + pass_step(table) + pass_step(table)


# -- observing -----------------------------------------------------------------------------
def hand_sizes(table: Table) -> dict[Seat, int]:
    return {s: len(table.hand(s)) for s in SEATS}


STANDARD_SIZES = {E: 14, S: 13, W: 13, N: 13}


def all_tiles(table: Table) -> list[int]:
    return [t for s in SEATS for t in table.hand(s)] + list(table.wall)


def events_of(events: Iterable[Event], type_: str) -> list[Event]:
    return [e for e in events if e.type == type_]


def frozen(table: Table) -> str:
    """Everything observable about a table, for 'nothing changed' comparisons."""
    return json.dumps(
        {
            "snapshot": table.snapshot(),
            "log": [e.to_dict() for e in table.log],
            "allowed": {s.value: table.allowed_commands(s) for s in SEATS},
        },
        sort_keys=True,
    )


@contextmanager
def unchanged(table: Table):
    before = frozen(table)
    snapshot = copy.deepcopy(table.snapshot())
    yield
    assert table.snapshot() == snapshot
    assert frozen(table) == before


def assert_refused(
    table: Table,
    command: Command,
    error: type[errors.CharlestonError],
    code: str,
    rule: str | None = None,
) -> errors.CharlestonError:
    """The command is refused with exactly ``error`` / ``code`` and the table is unchanged.

    ``rule``: the rule id the refusal must name (default: the class's own ``rule``).
    """
    with unchanged(table), pytest.raises(errors.CharlestonError) as info:
        table.execute(command)
    assert type(info.value) is error, f"{type(info.value).__name__}: {info.value.message}"
    assert info.value.code == code
    assert info.value.to_dict()["code"] == code
    assert info.value.rule == (rule or error.rule)
    assert info.value.to_dict()["rule_text"] == get_rule(info.value.rule).statement
    return info.value


def ints_in(data: Any) -> set[int]:
    """Every integer anywhere in a JSON-like structure (bools excluded)."""
    found: set[int] = set()
    if isinstance(data, bool):
        return found
    if isinstance(data, int):
        found.add(data)
    elif isinstance(data, Mapping):
        for key, value in data.items():
            if isinstance(key, str) and key.lstrip("-").isdigit():
                found.add(int(key))
            found |= ints_in(value)
    elif isinstance(data, (list, tuple)):
        for item in data:
            found |= ints_in(item)
    return found
