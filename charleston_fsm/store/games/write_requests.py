"""What the write path asks of the database, one request at a time (``writes.py``
drives its plan with them; ``append.py``'s statements answer them): plain values, so the
plan that decides what to ask never touches a connection."""

from __future__ import annotations

from dataclasses import dataclass

from ...engine.clock_state import Clock
from .append import Append


@dataclass(frozen=True)
class Read:
    """The game's head and whether ``command_id`` was used (``append.read_head``)."""

    game_id: str
    command_id: str
    lock: bool


@dataclass(frozen=True)
class Write:
    """Store the append; answered with whether it stored anything."""

    append: Append


@dataclass(frozen=True)
class ReadEvents:
    """The stored rows ``first..last`` of a command seen before."""

    game_id: str
    first: int
    last: int


@dataclass(frozen=True)
class ResetClock:
    """The clock changes without a row (the game's lock held)."""

    game_id: str
    clock: Clock | None


Request = Read | Write | ReadEvents | ResetClock
