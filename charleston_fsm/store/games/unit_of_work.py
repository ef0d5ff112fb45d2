"""The unit of work: the one bracket every write of a game's rows runs in.

A writer decides what to store as a :class:`Plan` (``writes.py``: a generator of the
requests of ``write_requests.py``, with no I/O of its own) and runs it in a
:class:`UnitOfWork`, the one place that knows about a write's transaction:

- it owns the connection and its transaction (``StoreCore.writing``: database failures
  become the store's typed errors, a cut-off commit ``OutcomeUnknown`` in the writer's
  own words, and a lost insert race asks whether a touched game holds rows beyond its
  head); a *lone* unit (one plan, no statement of the writer's: a command, an
  annotation) sends its write in autocommit on PostgreSQL, one statement that is its own
  transaction, and begins a transaction only for a locked read (a lost race);
- it answers each plan's requests with ``append.py``'s statements; several plans may run
  in one unit (a round's tables), beside a writer's own statements on :attr:`UnitOfWork.conn`
  (a credential with its row, the clock worker's pick under its lock);
- when anything fails, it forgets the served head (``served.py``) of every game it
  touched and which snapshot this thread's warm tables hold: what is stored is not known
  here, so the next write of those games reads them again;
- once committed, it does each write's after-commit work: the game's new head is cached,
  the notice goes out (``notices.py``) and a game the write finished is sealed
  (``sealing.py``).

Its writers: a command and an annotation (``Writes.execute``, ``Writes.annotate``), the
clock (``clock_worker.py``), a round's acts (``round_acts.py``) and a credential changed
with its row (``credentials.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from sqlalchemy import Connection, bindparam, update
from sqlalchemy.exc import DBAPIError

from ...engine import clocks
from ...engine.clock_state import storing
from ...engine.table import DONE
from ..database.core import UNKNOWN_OUTCOME, StoreCore
from ..database.models import GameRow
from ..errors import OutcomeUnknown
from . import append as statements
from .append import Head
from .results import ExecuteResult
from .sealing import Sealing
from .write_requests import Read, ReadEvents, Request, Write

#: a clock changed without a row (its lock held): the epoch moves with it, so a process
#: that cached the game reads it again
_RESET_CLOCK = (
    update(GameRow)
    .where(GameRow.id == bindparam("b_game"))
    .values(
        clock=bindparam("b_clock", type_=GameRow.clock.type),
        next_due=bindparam("b_due"),
        epoch=GameRow.epoch + 1,
    )
)


@dataclass(frozen=True)
class Written:
    """A write's result and the game's head after it (``None``: forget the game)."""

    game_id: str
    result: ExecuteResult
    head: Head | None


@dataclass(frozen=True)
class Plan:
    """One game's write, as the requests it makes of the database (``Writes._plan``);
    what it returns is the :class:`Written` (``None``: nothing left to do)."""

    game_id: str
    requests: Generator[Request, Any, Written | None]


class UnitOfWork:
    """One write transaction: ``with`` it, :meth:`run` plans in it, and it commits at the
    end of the block (see the module docstring). Used once."""

    def __init__(
        self,
        core: StoreCore,
        sealing: Sealing,
        unknown: str = UNKNOWN_OUTCOME,
        *,
        lone: bool = False,
    ):
        self.core = core
        self.sealing = sealing
        #: what a cut-off commit tells (the writer's words: what to send again)
        self.unknown = unknown
        #: one plan and no statement of the writer's own: its write commits as it runs,
        #: until a locked read needs a transaction (``StoreCore.writing``)
        self.lone = lone
        #: the games whose plans ran here, in order (a game again for each plan of it)
        self.games: list[str] = []
        #: what the plans wrote, for the work after the commit
        self.written: list[Written] = []
        self._transaction: AbstractContextManager[Connection] | None = None
        self._conn: Connection | None = None

    @property
    def conn(self) -> Connection:
        """The transaction's connection, for a writer's own statements beside its plans."""
        if self._conn is None:
            raise RuntimeError("A unit of work's connection is used inside its with block.")
        return self._conn

    def __enter__(self) -> UnitOfWork:
        if self._transaction is not None:
            raise RuntimeError("A unit of work runs one transaction; make another.")
        self._transaction = self.core.writing(self.unknown, self.games, lone=self.lone)
        self._conn = self._transaction.__enter__()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> bool:
        assert self._transaction is not None
        try:
            # commits, or rolls back and raises the failure typed
            suppressed = bool(self._transaction.__exit__(kind, error, trace))
        except BaseException:
            self._forget()
            raise
        finally:
            self._conn = None
        if kind is not None:
            self._forget()
            return suppressed
        for written in self.written:
            self._after_commit(written)
        return False

    def run(self, plan: Plan) -> Written | None:
        """Answer ``plan``'s requests in this transaction; what it wrote (``None``: it
        found nothing to do). A refusal is raised as the plan raised it; the caller may
        catch it and go on (nothing of that plan was written)."""
        self.games.append(plan.game_id)
        written = _drive(plan.requests, self._answer)
        if written is not None:
            self.written.append(written)
        return written

    def _answer(self, request: Request) -> Any:
        """What the database says to one request of a plan."""
        conn = self.conn
        if isinstance(request, Write):
            with self._committing_if_alone(conn):
                return statements.write(conn, request.append)
        if isinstance(request, Read):
            if request.lock:  # the lock is held until the commit: one transaction from here
                self.core.begin_within(conn)
            return statements.read_head(
                conn, request.game_id, request.command_id, lock=request.lock
            )
        if isinstance(request, ReadEvents):
            return statements.events_of(conn, request.game_id, request.first, request.last)
        clock = request.clock
        params = {"b_game": request.game_id, "b_clock": storing(clock)}
        with self._committing_if_alone(conn):
            conn.execute(_RESET_CLOCK, {**params, "b_due": clocks.next_due(clock)})
        self.core.served.forget(request.game_id)
        return None

    @contextmanager
    def _committing_if_alone(self, conn: Connection) -> Iterator[None]:
        """A write that commits as it runs (``StoreCore.autocommitting``): a connection
        lost during it leaves its outcome unknown, as a lost ``COMMIT`` does. (An error
        the server answered, a conflict say, stored nothing and is told as such.)"""
        if not self.core.autocommitting(conn):
            yield
            return
        try:
            yield
        except DBAPIError as exc:
            if exc.connection_invalidated:
                raise OutcomeUnknown(self.unknown) from exc
            raise

    def _forget(self) -> None:
        """The transaction failed: what it stored is not known here."""
        for game_id in self.games:
            self.core.served.forget(game_id)
        self.core.warm.holds.clear()  # a warm table is loaded afresh from its snapshot

    def _after_commit(self, written: Written) -> None:
        """Cache the game's head, tell the listeners, seal a game the write finished."""
        game_id, result = written.game_id, written.result
        if written.head is not None:
            self.core.served.put(game_id, written.head)
        if not result.events or result.duplicate:
            return
        self.core.notices.committed(game_id, result.last_seq)
        if DONE in result.snapshot["configuration"]:
            self.sealing.later(game_id)


def _drive(plan: Generator[Request, Any, Written | None], answer: Callable[[Request], Any]) -> Any:
    """Run ``plan``, answering each of its requests with ``answer``; its result."""
    try:
        request = next(plan)
        while True:
            request = plan.send(answer(request))
    except StopIteration as done:
        return done.value
    finally:
        plan.close()
