"""How many PostgreSQL connections one service process may open, part by part, and
whether a plan of processes fits what the server admits.

Every connection a process may hold is counted here, once, so the pool, the start-up
line and the refusal agree (docs/deploy.md, "Connections"):

- the pool (SQLAlchemy's, ``core.py``) keeps one connection per thread that may call the
  store at once and opens none beyond them (no overflow): the route threads (anyio's
  thread limiter, set from the same number by ``api/app.py``; bots' steps and streams'
  reads run there too) and the background threads that read or write: the clock
  worker, the credential watch, the sealing thread, the feed's sequencer and the webhook
  sender (its claims and its records take turns; its HTTP senders never touch the store);
- the notices' two connections of their own (``notices.py``): one sending, one
  listening;
- with standbys to read (``standbys.py``), the standby watch's one connection to the
  primary (it samples the primary's WAL position). Each standby gets the route threads
  and one more of its own, on its own server (not counted here).

A plan is refused when its processes together may open more than the server admits:
``max_connections`` less the slots reserved for superusers (and, PostgreSQL 16+,
``reserved_connections``) less :data:`MARGIN`, and no more than the role's or the
database's own connection limit.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from .notices import NOTICE_CONNECTIONS

#: the setting: threads serving requests in each process (each holds at most one connection)
ROUTE_THREADS_ENV = "CHARLESTON_ROUTE_THREADS"
#: 14 keeps two cores busy (a command is CPU-bound: ~2 ms of CPU, under 1 ms waiting on
#: the database) while four processes (21 connections each) fit PostgreSQL's default of
#: 100 connections
DEFAULT_ROUTE_THREADS = 14
#: background threads that use the pool, one connection each (every process may run the
#: feed's sequencer and the webhook sender: ``api/app.py``)
POOL_BACKGROUND = (
    "clock worker",
    "credential watch",
    "sealing",
    "feed sequencer",
    "webhook sender",
)
#: connections left free beside the service's: migrate, psql, monitoring, a backup
MARGIN = 10


def route_threads() -> int:
    """The route threads of this process: ``$CHARLESTON_ROUTE_THREADS``, else the default
    (a value that is not a whole number ≥ 1 is refused by ``serve`` before it gets here)."""
    given = os.environ.get(ROUTE_THREADS_ENV, "")
    return int(given) if given.isdigit() and int(given) > 0 else DEFAULT_ROUTE_THREADS


@dataclass(frozen=True)
class ConnectionBudget:
    """The connections one process may open, each part named."""

    route_threads: int
    standby_watch: bool = False

    @property
    def pool_size(self) -> int:
        """The pool's connections: one per thread that may call the store at once."""
        return self.route_threads + len(POOL_BACKGROUND)

    @property
    def parts(self) -> tuple[tuple[str, int], ...]:
        """(what, connections), in the order the start-up line names them."""
        named = [("for routes", self.route_threads)]
        named += [(thread, 1) for thread in POOL_BACKGROUND]
        named += [("notices sending", 1), ("notices listening", NOTICE_CONNECTIONS - 1)]
        if self.standby_watch:
            named.append(("standby watch", 1))
        return tuple(named)

    @property
    def total(self) -> int:
        return sum(count for _, count in self.parts)

    def sentence(self) -> str:
        listed = ", ".join(f"{count} {what}" for what, count in self.parts)
        return f"this process may open {self.total} PostgreSQL connections: {listed}"


@dataclass(frozen=True)
class ServerRoom:
    """What a PostgreSQL server admits for this role and database."""

    max_connections: int
    reserved: int  # superuser_reserved_connections (+ reserved_connections, 16+)
    role_limit: int | None = None  # the role's CONNECTION LIMIT (None: none)
    database_limit: int | None = None  # the database's CONNECTION LIMIT
    margin: int = MARGIN

    @property
    def admits(self) -> int:
        """The connections a plan may open in all."""
        limits = [self.max_connections - self.reserved - self.margin]
        limits += [limit for limit in (self.role_limit, self.database_limit) if limit is not None]
        return max(0, min(limits))

    def arithmetic(self) -> str:
        """How :attr:`admits` was reached, in words."""
        said = (
            f"max_connections {self.max_connections}, less {self.reserved} reserved for "
            f"superusers and {self.margin} kept free"
        )
        if self.role_limit is not None:
            said += f"; the role's limit {self.role_limit}"
        if self.database_limit is not None:
            said += f"; the database's limit {self.database_limit}"
        return said


def server_room(conn: Any, margin: int = MARGIN) -> ServerRoom:
    """The server's limits, read over a SQLAlchemy connection to it."""
    from sqlalchemy import text

    settings = dict(
        conn.execute(
            text(
                "SELECT name, setting FROM pg_settings WHERE name IN ('max_connections', "
                "'superuser_reserved_connections', 'reserved_connections')"
            )
        ).all()
    )
    role, database = conn.execute(
        text(
            "SELECT r.rolconnlimit, d.datconnlimit FROM pg_roles r, pg_database d "
            "WHERE r.rolname = current_user AND d.datname = current_database()"
        )
    ).one()
    return ServerRoom(
        max_connections=int(settings["max_connections"]),
        reserved=int(settings.get("superuser_reserved_connections", 0))
        + int(settings.get("reserved_connections", 0)),
        role_limit=None if role is None or role < 0 else int(role),
        database_limit=None if database is None or database < 0 else int(database),
        margin=margin,
    )


def refusal(budget: ConnectionBudget, workers: int, admits: int, why: str) -> str | None:
    """``None`` when ``workers`` processes of ``budget`` fit in ``admits`` connections;
    else the sentence that refuses the plan and says what to do."""
    planned = workers * budget.total
    if planned <= admits:
        return None
    fixed = budget.total - budget.route_threads  # what a process holds whatever its threads
    threads = admits // workers - fixed
    most = admits // budget.total
    ways = [f"fewer workers (--workers {most} fits)"] if most >= 1 else []
    if threads >= 1:
        ways.append(
            f"fewer route threads (--route-threads {threads} or ${ROUTE_THREADS_ENV}: "
            f"{threads + fixed} connections a process)"
        )
    ways.append("behind a pooler such as PgBouncer (give its client limit as --max-connections)")
    return (
        f"Not starting: {workers} process(es) of {budget.total} connections each may open "
        f"{planned}, more than the {admits} this PostgreSQL admits ({why}). Serve with "
        f"{', or '.join(ways)}; docs/deploy.md, Connections, has the arithmetic."
    )
