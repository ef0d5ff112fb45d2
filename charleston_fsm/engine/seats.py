"""Seats and pass directions.

Directions are always computed from seats, never taken from the client (SEAT-03): a
client names a seat, the table works out where its tiles go.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import StrEnum

from ..rulebook import enforces


class Seat(StrEnum):
    """The four seats in turn order; East is the dealer."""

    EAST = "east"
    SOUTH = "south"
    WEST = "west"
    NORTH = "north"

    @property
    def place(self) -> int:
        """The seat's place in turn order (East 0, North 3)."""
        return SEATS.index(self)

    @enforces("SEAT-02")
    def toward(self, direction: Direction) -> Seat:
        """The seat that receives when this seat passes in ``direction``."""
        return SEATS[(self.place + direction.offset) % 4]

    @enforces("SEAT-02")
    def source(self, direction: Direction) -> Seat:
        """The seat this one receives from when everyone passes in ``direction``."""
        return SEATS[(self.place - direction.offset) % 4]

    @property
    def opposite(self) -> Seat:
        return self.toward(Direction.ACROSS)

    @property
    def label(self) -> str:
        return self.value.capitalize()


class Direction(StrEnum):
    """Where a pass goes, relative to the giver: Right is the next seat in turn order."""

    RIGHT = "right"
    ACROSS = "across"
    LEFT = "left"

    @property
    def offset(self) -> int:
        return {"right": 1, "across": 2, "left": 3}[self.value]

    @property
    def label(self) -> str:
        return self.value.capitalize()


SEATS: tuple[Seat, ...] = (Seat.EAST, Seat.SOUTH, Seat.WEST, Seat.NORTH)


def seat_name(players: Mapping[str, str] | None) -> Callable[[Seat], str]:
    """How a seat is named for people: ``Ann (East)``, or ``East`` when it has no name."""
    names = players or {}

    def name(seat: Seat) -> str:
        given = names.get(seat.value)
        return f"{given} ({seat.label})" if given else seat.label

    return name


def joined(words: list[str]) -> str:
    """``A``, ``A and B``, ``A, B and C``."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"
