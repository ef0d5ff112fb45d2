"""Bots playing a stored game: the demo, the simulator, benchmarks and tests share this."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Mapping
from typing import Any

from ...engine.bots import bots_for, play
from ...engine.commands import Command
from ...engine.seats import Seat
from ..game_store import GameStore
from .results import ExecuteResult


def play_bots(
    store: GameStore,
    game_id: str,
    seed: int,
    *,
    view_of: Callable[[Seat], Mapping[str, Any]] | None = None,
    from_answers: bool = False,
) -> int:
    """Four seeded bots play ``game_id`` through the store to its end; returns the commands.

    Each bot sees its own seat's view, by default straight from the projection;
    ``from_answers``: from the table the last command left (what a command's answer
    carries), with no read per view, for a game no one else moves meanwhile.
    """
    ids = itertools.count(1)
    last: list[ExecuteResult] = []

    def execute(command: Command) -> Any:
        result = store.writes.execute(game_id, command, command_id=f"bot-{next(ids)}")
        last[:] = [result]
        return result.events

    def answered(seat: Seat) -> Mapping[str, Any]:
        if not last:
            return store.reads.view(game_id, seat)
        return store.reads.view_of(last[0].snapshot, seat, last[0].clock)

    return play(
        execute,
        view_of or (answered if from_answers else lambda seat: store.reads.view(game_id, seat)),
        bots_for(seed),
        rng=random.Random(seed),
    )
