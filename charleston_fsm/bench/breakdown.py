"""Where a command's time goes: the engine alone and each store operation, in ms.

The figures of the speed targets say how far each path is from its floor; this says
which part to look at.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable

from ..engine.bots import play_table
from ..engine.commands import ConfirmPass
from ..engine.seats import SEATS, Seat
from ..engine.table import Table
from ..engine.tiles import Deal, is_joker
from ..store import GameStore, NewGame, play_bots
from .databases import Database
from .figures import percentile, timed
from .store_rows import plain_tiles, toggle

Costs = dict[str, tuple[float, float]]  # operation -> (median ms, p95 ms)


def _costs(samples: list[float]) -> tuple[float, float]:
    return statistics.median(samples) * 1e3, percentile(samples, 0.95) * 1e3


def engine_costs(repeat: int) -> Costs:
    """The engine with no database: a table, a command, a restore, a game, a fold."""

    def bot_game(seed: int) -> Table:
        table = Table(Deal.shuffled(seed))
        play_table(table, seed)
        return table

    sample = bot_game(0)

    def one_confirm() -> None:
        table = Table(Deal.shuffled(1))
        tiles = [t for t in table.racks[Seat.EAST] if not is_joker(t)][:3]
        table.execute(ConfirmPass(seat=Seat.EAST, tiles=tiles))

    runs: dict[str, Callable[[], object]] = {
        "engine: new table (deal + chart)": lambda: Table(Deal.shuffled(1)),
        "engine: new table + one confirm": one_confirm,
        "engine: restore from a snapshot": lambda: Table.restore(sample.snapshot()),
        "engine: whole bot game (with views)": lambda: bot_game(3),
        "engine: fold a finished game": lambda: Table.fold(sample.deal, "nmjl", None, sample.log),
    }
    slow = {"engine: whole bot game (with views)", "engine: fold a finished game"}
    return {
        name: _costs(timed(fn, max(3, repeat // 10) if name in slow else repeat))
        for name, fn in runs.items()
    }


def store_costs(database: Database, repeat: int) -> Costs:
    """Each store operation a command or a reader uses, on ``database``."""
    store = database.store()
    try:
        return _store_costs(store, repeat)
    finally:
        store.dispose()


def _store_costs(store: GameStore, repeat: int) -> Costs:
    game_id = store.registry.create_game(NewGame(seed=1))
    commands = toggle(store, game_id)
    flip = iter(range(10**9))

    def ready() -> tuple[str, ConfirmPass]:
        gid = store.registry.create_game(NewGame(seed=random.randrange(10**6)))
        for seat in SEATS[:3]:
            store.writes.execute(gid, ConfirmPass(seat=seat, tiles=plain_tiles(store, gid, seat)))
        return gid, ConfirmPass(seat=Seat.NORTH, tiles=plain_tiles(store, gid, Seat.NORTH))

    resolving = [ready() for _ in range(max(3, repeat // 6))]
    pending = iter(resolving)
    finished = store.registry.create_game(NewGame(seed=7))
    play_bots(store, finished, 7)
    seeds = iter(range(100, 10**6))
    few = max(3, repeat // 30)
    runs: list[tuple[str, Callable[[], object], int]] = [
        (
            "store: one command (1 event row)",
            lambda: store.writes.execute(game_id, commands[next(flip) % 2]),
            repeat,
        ),
        (
            "store: a command resolving a pass (7 rows)",
            lambda: store.writes.execute(*next(pending)),
            len(resolving),
        ),
        (
            "store: a repeated command id",
            lambda: store.writes.execute(game_id, commands[0], command_id="repeated"),
            repeat // 2,
        ),
        ("store: table() (the projection)", lambda: store.reads.table(game_id), repeat),
        ("store: view() of one seat", lambda: store.reads.view(game_id, Seat.EAST), repeat),
        (
            "store: a whole bot game (views via store.reads.view)",
            lambda: _bot_game(store, next(seeds)),
            few,
        ),
        ("store: replay() a finished game", lambda: store.reads.replay(finished), few * 3),
        ("store: verify() a finished game", lambda: store.tamper.verify(finished), few * 3),
        ("store: events() of a finished game", lambda: store.reads.events(finished), few * 3),
    ]
    return {name: _costs(timed(fn, count)) for name, fn, count in runs}


def _bot_game(store: GameStore, seed: int) -> None:
    play_bots(store, store.registry.create_game(NewGame(seed=seed)), seed)
