"""The write path on the event loop: PostgreSQL's writes without a thread hand-off.

The path itself is the one of ``writes.py`` (``Writes._plan``, a generator of database
requests); here its requests are answered on psycopg's async connections, so a command
on PostgreSQL runs on the service's event loop from its first byte to its answer: no
worker thread, no GIL passed back and forth. SQLite keeps its thread (its driver has no
async form, and its statements cost no round trip).

The transaction is the same as on a SQLAlchemy connection, and so are its answers:

- the first statement of the transaction is sent with its ``BEGIN`` in one pipeline (one
  round trip); the lock and the read after a lost race too;
- ``COMMIT`` is its own round trip, sent only once the append has answered, so a failure
  before it stored nothing (``StoreUnavailable``) and a failure during it may have stored
  (``OutcomeUnknown``), exactly as ``StoreCore.writing`` tells them;
- a database error is typed by ``StoreCore.typed`` (the same sentences), and a lost
  insert race asks the core's ``lost_race`` (in a thread: it reads and verifies).

Connections come from :class:`LoopPool`, at most :data:`~.connection_budget.LOOP_CONNECTIONS` per
process (the connection budget counts them beside the pool's). A connection that
received anything while it was idle (a backend terminated meanwhile sends its reason and
closes) is dropped before use, without a round trip.
"""

from __future__ import annotations

import asyncio
import select
from collections.abc import Generator
from typing import Any

import psycopg
from anyio import to_thread
from psycopg.rows import namedtuple_row
from sqlalchemy.exc import DBAPIError

from ..engine import errors
from . import append as statements
from .append import Read, ReadEvents, Write
from .connection_budget import LOOP_CONNECTIONS
from .core import StoreCore
from .errors import Conflict, OutcomeUnknown


class LoopPool:
    """At most ``size`` async connections of one event loop, opened when first needed."""

    def __init__(self, dsn: str, size: int) -> None:
        self.dsn = dsn
        self.size = size
        self._idle: list[psycopg.AsyncConnection[Any]] = []
        self._count = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._freed: asyncio.Condition | None = None

    async def take(self) -> psycopg.AsyncConnection[Any]:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # another loop (a test's, a second app): start afresh
            self.close_now()
            self._loop, self._freed = loop, asyncio.Condition()
        assert self._freed is not None
        async with self._freed:
            while True:
                while self._idle:
                    conn = self._idle.pop()
                    if _alive(conn):
                        return conn
                    self._drop(conn)
                if self._count < self.size:
                    self._count += 1
                    break
                await self._freed.wait()
        try:
            return await psycopg.AsyncConnection.connect(self.dsn)
        except BaseException:
            await self._release_slot()
            raise

    async def give(self, conn: psycopg.AsyncConnection[Any]) -> None:
        """Hand a connection back (a broken one is dropped)."""
        if self._freed is None:
            return
        async with self._freed:
            if conn.closed or conn.broken:
                self._drop(conn)
            else:
                self._idle.append(conn)
            self._freed.notify()

    async def _release_slot(self) -> None:
        assert self._freed is not None
        async with self._freed:
            self._count -= 1
            self._freed.notify()

    def _drop(self, conn: psycopg.AsyncConnection[Any]) -> None:
        self._count -= 1
        conn.pgconn.finish()

    def close_now(self) -> None:
        """Close the idle connections (those in use are closed when handed back)."""
        for conn in self._idle:
            conn.pgconn.finish()
        self._count -= len(self._idle)
        self._idle.clear()


def _alive(conn: psycopg.AsyncConnection[Any]) -> bool:
    """Whether an idle connection is still good: not closed, and nothing arrived on it
    while idle (a terminated backend's last words, or its end of file)."""
    if conn.closed or conn.broken:
        return False
    readable, _, _ = select.select([conn.pgconn.socket], [], [], 0)
    return not readable


class OnLoop:
    """Runs the write path's plans (and small reads) on the event loop over a
    :class:`LoopPool`; one per store core (:meth:`of`)."""

    def __init__(self, core: StoreCore, size: int = LOOP_CONNECTIONS) -> None:
        assert core.notices.dsn is not None, "PostgreSQL only"
        self.core = core
        self.pool = LoopPool(core.notices.dsn, size)

    @classmethod
    def of(cls, core: StoreCore) -> OnLoop:
        """The core's one instance, made on first use."""
        if core.on_loop is None:
            core.on_loop = cls(core)
        return core.on_loop  # type: ignore[no-any-return]

    async def fetch_value(self, sql: str, params: dict[str, Any]) -> Any:
        """The first column of the first row of a read (``None``: no row), in a
        transaction of its own that writes nothing."""
        conn = await self.pool.take()
        try:
            cursor = conn.cursor()
            await cursor.execute(sql, params, prepare=True)
            row = await cursor.fetchone()
            await conn.rollback()
            return None if row is None else row[0]
        except psycopg.Error as exc:
            raise StoreCore.typed(
                DBAPIError.instance(
                    sql, params, exc, psycopg.Error, connection_invalidated=conn.broken
                )
            ) from exc
        finally:
            await self.pool.give(conn)

    async def run(self, plan: Generator[Any, Any, Any], game_id: str, unknown: str) -> Any:
        """``plan`` in one transaction on a connection of the pool; its result."""
        conn = await self.pool.take()
        phase = "work"
        try:
            try:
                request = next(plan)
                while True:
                    request = plan.send(await self._answer(conn, request))
            except StopIteration as done:
                written = done.value
            phase = "commit"
            await conn.commit()
            return written
        except errors.CharlestonError:
            if not conn.broken:
                await conn.rollback()
            raise
        except psycopg.Error as exc:
            if phase == "commit":
                raise OutcomeUnknown(unknown) from exc
            typed = StoreCore.typed(
                DBAPIError.instance(
                    None, None, exc, psycopg.Error, connection_invalidated=conn.broken
                )
            )
            if not conn.broken:
                await conn.rollback()
            if isinstance(typed, Conflict):
                # on anyio's threads, whose limit the pool is sized for (asyncio's own
                # executor would be threads the connection budget does not count)
                await to_thread.run_sync(self.core.lost_race, game_id)
            raise typed from exc
        finally:
            plan.close()
            await self.pool.give(conn)

    async def _answer(self, conn: psycopg.AsyncConnection[Any], request: Any) -> Any:
        if isinstance(request, Write):
            rows = await _first_rows(conn, [statements.pg_append(request.append)])
            return rows[0] is not None
        if isinstance(request, Read):
            found = statements.pg_read(request.game_id, request.command_id, lock=request.lock)
            return statements.head_of(await _first_rows(conn, found))
        if isinstance(request, ReadEvents):
            params = statements.events_params(request.game_id, request.first, request.last)
            cursor = conn.cursor(row_factory=namedtuple_row)
            await cursor.execute(statements.pg_sql(statements.EVENTS_OF), params, prepare=True)
            return await cursor.fetchall()
        raise TypeError(f"no answer on the loop for {type(request).__name__}")


async def _first_rows(
    conn: psycopg.AsyncConnection[Any], sent: list[tuple[str, dict[str, Any]]]
) -> list[Any]:
    """The first row of each statement (``None``: no row), sent in one round trip with
    the transaction's ``BEGIN`` when it is the first."""
    cursors = []
    if len(sent) == 1 and conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
        cursor = conn.cursor(row_factory=namedtuple_row)
        await cursor.execute(*sent[0], prepare=True)
        return [await cursor.fetchone() if cursor.description else None]
    async with conn.pipeline():
        for sql, params in sent:
            cursor = conn.cursor(row_factory=namedtuple_row)
            await cursor.execute(sql, params, prepare=True)
            cursors.append(cursor)
    return [await c.fetchone() if c.description else None for c in cursors]
