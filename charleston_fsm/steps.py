"""What a step asks of the players: who acts, where each tile goes, how many.

A chart names its states; this module says, as data, what each passing state requires.
The table reads the requirement of the active state instead of branching on phase
names, so the chart stays the only place that decides what comes next.
"""

from __future__ import annotations

from dataclasses import dataclass

from .seats import SEATS, Direction, Seat


@dataclass(frozen=True)
class Step:
    """One passing step.

    ``direction`` gives every participant the same target (a standard pass); ``pairs``
    makes two seats swap (a courtesy pair, a Four Winds swap). ``count`` is exact, or
    ``None`` when the table decides it (a courtesy pass: an agreed or chosen 0-3).
    ``blind`` marks the last pass of a Charleston, where a ruleset that allows blind
    passes lets a player forward unseen tiles.
    """

    label: str
    participants: tuple[Seat, ...] = SEATS
    direction: Direction | None = None
    count: int | None = 3
    blind: bool = False
    courtesy: bool = False

    def target(self, seat: Seat) -> Seat:
        if self.direction is not None:
            return seat.toward(self.direction)
        a, b = self.participants
        return b if seat is a else a

    def source(self, seat: Seat) -> Seat:
        if self.direction is not None:
            return seat.source(self.direction)
        return self.target(seat)

    def describe_for(self, seat: Seat) -> str:
        where = self.direction.label if self.direction else f"to {self.target(seat).label}"
        return f"{self.label} ({where})"


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
