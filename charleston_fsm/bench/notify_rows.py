"""The commit rate with and without ``pg_notify`` in the transaction (PostgreSQL).

``NOTIFY`` takes a lock of the whole database at commit and holds it while the commit is
flushed, so every transaction that notifies commits one after the other. Commands used
to notify in their own transaction; the store now notifies after the commit, batched
(``store/database/notices.py``). This row measures what that buys at the database: pgbench running
the command's transaction shape with ``pg_notify`` inside and without it, alternated in
the same run, at several client counts, with one ``LISTEN`` connection open (as a
service's).
"""

from __future__ import annotations

import shutil
import statistics

import psycopg

from . import floors
from .databases import Database
from .figures import Figure, Goal

CLIENTS = (4, 8, 16)


def notify_rows(
    database: Database, seconds: float, clients: tuple[int, ...] = CLIENTS, rounds: int = 2
) -> list[Figure]:
    """One figure per client count: commits/s without ``pg_notify`` in the transaction,
    beside the same shape with it (``rounds`` alternated runs of each, medians)."""
    if not database.is_postgres or shutil.which("pgbench") is None:
        return []
    figures = []
    with psycopg.connect(database.libpq, autocommit=True) as listener:
        listener.execute("LISTEN floor")
        for count in clients:
            runs: dict[bool, list[float]] = {False: [], True: []}
            for _ in range(rounds):
                for notify in (False, True):
                    rate = floors.pgbench_rate(database, count, seconds, notify=notify)
                    runs[notify].append(rate or 0.0)
            figures.append(
                Figure(
                    row="notify",
                    database=database.name,
                    name=f"commits/s, {count} clients, no pg_notify in the transaction",
                    value=statistics.median(runs[False]),
                    unit="/s",
                    floor=statistics.median(runs[True]),
                    floor_name="the same transaction with pg_notify (pgbench, same run)",
                    goal=Goal("at least the rate with pg_notify", 1.0, of="ratio"),
                    higher_is_better=True,
                    details={"clients": count, "without": runs[False], "with": runs[True]},
                )
            )
    return figures
