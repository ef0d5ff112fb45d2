"""What a step asks of the players: who acts, where each tile goes, how many.

A chart names its states; this module says, as data, what each passing state requires.
The table reads the requirement of the active state instead of branching on phase
names, so the chart stays the only place that decides what comes next.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..rulebook import enforces
from .seats import SEATS, Direction, Seat


@dataclass(frozen=True)
class Step:
    """One passing step.

    ``direction`` gives every participant the same target (a standard pass); ``pairs``
    makes two seats swap (a courtesy pair, a Four Winds swap). ``count`` is exact, or
    ``None`` when the table decides it (a courtesy pass: an agreed or chosen 0-3).
    ``blind`` marks the last pass of a Charleston, where a ruleset that allows blind
    passes lets a player forward unseen tiles. ``addressed`` lets each tile go to the
    player its giver names (a Ding Dong: one tile to each of the three others).
    """

    label: str
    participants: tuple[Seat, ...] = SEATS
    direction: Direction | None = None
    count: int | None = 3
    blind: bool = False
    courtesy: bool = False
    addressed: bool = False

    @enforces("SEAT-03")
    def target(self, seat: Seat) -> Seat | None:
        """Where the seat's tiles go (``None`` when each tile names its own receiver)."""
        if self.direction is not None:
            return seat.toward(self.direction)
        if self.addressed:
            return None
        a, b = self.participants
        return b if seat is a else a

    def source(self, seat: Seat) -> Seat | None:
        if self.direction is not None:
            return seat.source(self.direction)
        return self.target(seat)


def standard(label: str, direction: Direction, *, blind: bool = False) -> Step:
    return Step(label=label, direction=direction, blind=blind)


def courtesy(pair: tuple[Seat, Seat]) -> Step:
    return Step(
        label=f"Courtesy Pass {pair[0].label} and {pair[1].label}",
        participants=pair,
        count=None,
        courtesy=True,
    )


COURTESY_PAIRS: tuple[tuple[Seat, Seat], ...] = ((Seat.EAST, Seat.WEST), (Seat.SOUTH, Seat.NORTH))


def exchange(label: str, first: Seat, second: Seat) -> Step:
    """A Four Winds exchange: ``first`` gives 3, then ``second``; both receive at once."""
    return Step(label=label, participants=(first, second))


def ding_dong(label: str) -> Step:
    """Every player gives one tile to each of the three others, all at once."""
    return Step(label=label, addressed=True)
