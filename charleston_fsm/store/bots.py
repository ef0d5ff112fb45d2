"""Bots playing a stored game: the demo, the simulator, benchmarks and tests share this."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Mapping
from typing import Any

from ..engine.bots import bots_for, play
from ..engine.seats import Seat
from .game_store import GameStore


def play_bots(
    store: GameStore,
    game_id: str,
    seed: int,
    *,
    view_of: Callable[[Seat], Mapping[str, Any]] | None = None,
) -> int:
    """Four seeded bots play ``game_id`` through the store to its end; returns the commands.

    Each bot sees its own seat's view, by default straight from the projection.
    """
    ids = itertools.count(1)
    return play(
        lambda command: store.execute(game_id, command, command_id=f"bot-{next(ids)}"),
        view_of or (lambda seat: store.view(game_id, seat)),
        bots_for(seed),
        rng=random.Random(seed),
    )
