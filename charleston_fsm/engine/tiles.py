"""The American Mah Jongg set: 152 physical tiles, each with its own id and a face code.

Face notation (used in views, logs and reports):

========  ===========================================  ======
code      tile                                          copies
========  ===========================================  ======
``1B``    Bam 1 … ``9B`` Bam 9                           4 each
``1C``    Crack 1 … ``9C`` Crack 9                       4 each
``1D``    Dot 1 … ``9D`` Dot 9                           4 each
``EW``    East Wind (also ``SW``, ``WW``, ``NW``)        4 each
``RD``    Red Dragon, ``GD`` Green Dragon                4 each
``WD``    White Dragon (Soap)                            4
``F``     Flower                                         8
``J``     Joker                                          8
========  ===========================================  ======

Tile ids run 0–151 in the order of that table (suits, winds, dragons, flowers, jokers),
so two tiles of one face are different tiles with different ids.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..rulebook import enforces
from .seats import SEATS, Seat


@enforces("TILE-01", "TILE-02")
def _faces() -> tuple[str, ...]:
    faces: list[str] = []
    for suit in "BCD":
        for rank in range(1, 10):
            faces += [f"{rank}{suit}"] * 4
    for wind in ("EW", "SW", "WW", "NW"):
        faces += [wind] * 4
    for dragon in ("RD", "GD", "WD"):
        faces += [dragon] * 4
    faces += ["F"] * 8 + ["J"] * 8
    return tuple(faces)


FACES: tuple[str, ...] = _faces()
TILE_COUNT = len(FACES)
JOKER = "J"
FACE_NAMES = {
    "B": "Bam",
    "C": "Crack",
    "D": "Dot",
    "EW": "East Wind",
    "SW": "South Wind",
    "WW": "West Wind",
    "NW": "North Wind",
    "RD": "Red Dragon",
    "GD": "Green Dragon",
    "WD": "White Dragon (Soap)",
    "F": "Flower",
    "J": "Joker",
}
HAND_SIZE = {Seat.EAST: 14, Seat.SOUTH: 13, Seat.WEST: 13, Seat.NORTH: 13}

assert TILE_COUNT == 152


def face(tile: int) -> str:
    return FACES[tile]


def is_joker(tile: int) -> bool:
    return FACES[tile] == JOKER


def face_name(code: str) -> str:
    if code in FACE_NAMES:
        return FACE_NAMES[code]
    return f"{FACE_NAMES[code[1]]} {code[0]}"


def describe(tiles: Iterable[int]) -> str:
    """``"5B#17 RD#121"``: faces with ids, for people reading a log or report."""
    return " ".join(f"{face(t)}#{t}" for t in tiles)


@dataclass(frozen=True)
class Deal:
    """Who holds which tiles when the Charleston starts; the rest is the wall."""

    hands: Mapping[Seat, tuple[int, ...]]
    wall: tuple[int, ...]

    @classmethod
    @enforces("DEAL-01")
    def shuffled(cls, seed: int) -> Deal:
        """A reproducible deal: the same seed always gives the same hands."""
        tiles = list(range(TILE_COUNT))
        random.Random(seed).shuffle(tiles)
        hands: dict[Seat, tuple[int, ...]] = {}
        at = 0
        for seat in SEATS:
            hands[seat] = tuple(tiles[at : at + HAND_SIZE[seat]])
            at += HAND_SIZE[seat]
        return cls(hands=hands, wall=tuple(tiles[at:]))

    @classmethod
    @enforces("DEAL-01")
    def explicit(cls, hands: Mapping[Seat, Sequence[int]]) -> Deal:
        """A deal from given hands (for tests and for replaying a table's real deal)."""
        from .errors import InvalidDeal

        seen: set[int] = set()
        for seat in SEATS:
            hand = list(hands.get(seat, ()))
            if len(hand) != HAND_SIZE[seat]:
                raise InvalidDeal(
                    f"{seat.label} must be dealt {HAND_SIZE[seat]} tiles, not {len(hand)}."
                )
            for tile in hand:
                if not 0 <= tile < TILE_COUNT:
                    raise InvalidDeal(f"Tile id {tile} does not exist (ids run 0-151).")
                if tile in seen:
                    raise InvalidDeal(f"Tile {describe([tile])} is dealt twice.")
                seen.add(tile)
        wall = tuple(t for t in range(TILE_COUNT) if t not in seen)
        return cls(hands={s: tuple(hands[s]) for s in SEATS}, wall=wall)

    def to_dict(self) -> dict:
        return {"hands": {s.value: list(self.hands[s]) for s in SEATS}, "wall": list(self.wall)}

    @classmethod
    def from_dict(cls, data: Mapping) -> Deal:
        return cls(
            hands={Seat(s): tuple(h) for s, h in data["hands"].items()},
            wall=tuple(data["wall"]),
        )
