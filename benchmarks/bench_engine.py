"""What the engine costs, with no database: a command, a whole game, a fold, a restore.

Run: ``.venv/bin/python benchmarks/bench_engine.py``. The store benchmark compares its
numbers with these and with the database's own floor.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from rich.console import Console
from rich.table import Table as RichTable

from charleston_fsm.bots import play_table
from charleston_fsm.commands import ConfirmPass
from charleston_fsm.seats import Seat
from charleston_fsm.table import Table
from charleston_fsm.tiles import Deal, is_joker


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return samples


def bot_game(seed: int) -> Table:
    table = Table(Deal.shuffled(seed))
    play_table(table, seed)
    return table


def main() -> None:
    games = [bot_game(seed) for seed in range(50)]
    commands = sum(1 for g in games for e in g.log if e.is_command)
    sample = games[0]

    def one_confirm() -> None:
        table = Table(Deal.shuffled(1))
        tiles = [t for t in table.racks[Seat.EAST] if not is_joker(t)][:3]
        table.execute(ConfirmPass(seat=Seat.EAST, tiles=tiles))

    rows = [
        ("new table (deal + chart)", timed(lambda: Table(Deal.shuffled(1)), 300), 1),
        ("new table + one confirm", timed(one_confirm, 300), 1),
        ("restore from snapshot", timed(lambda: Table.restore(sample.snapshot()), 300), 1),
        ("whole bot game (with views)", timed(lambda: bot_game(3), 30), 1),
        (
            "fold a finished game",
            timed(lambda: Table.fold(sample.deal, "nmjl", None, sample.log), 50),
            1,
        ),
    ]
    out = RichTable(title=f"Engine costs ({commands / len(games):.0f} commands per game)")
    out.add_column("operation")
    out.add_column("median", justify="right")
    out.add_column("p95", justify="right")
    for name, samples, _ in rows:
        samples.sort()
        out.add_row(
            name,
            f"{statistics.median(samples) * 1e3:.3f} ms",
            f"{samples[int(len(samples) * 0.95) - 1] * 1e3:.3f} ms",
        )
    Console().print(out)


if __name__ == "__main__":
    main()
