"""The one write path: every row a game gets after its first is appended here.

Three writers share it, each named for what it does:

- :meth:`Writes.execute`: a seat's or the director's command, through the chart;
- :meth:`Writes.act_for_seat`: the clock acting for a seat whose deadline passed (or
  flagging it late), in the clock worker's transaction, which holds the game's lock;
- :meth:`Writes.annotate`: rows that move no tile (pause, resume, a ruling): an
  :class:`~charleston_fsm.engine.annotations.Annotation`; :meth:`Writes.annotation_plan`
  and :meth:`Writes.drive_on` write one in a caller's transaction (a round's tables in
  one, a credential changed with its row).

How a write goes (an optimistic append with an expected seq, as event stores write):

1. The writer continues from the game's head as this process last left it (``served.py``)
   or, when it has none, from one read of it (no lock).
2. It decides the rows on that head: the chart, the clock, the annotation.
3. One statement appends them (``append.py``), storing nothing unless the game is still
   at the expected seq and epoch, the command id is new and no quarantine is open.
4. When it stored nothing, the head was stale (another process wrote, a quarantine was
   opened) or the id was used: the head is read again **under the game's lock**, in the
   same transaction, and the writer decides again; that attempt cannot lose.
5. A refusal decided on a cached head is decided again on a fresh read: the answer is
   about the game as it is, never as this process remembered it.
6. Commit. Then the head is cached, the notice goes out (``notices.py``: here at once,
   to other processes batched) and a game the write finished is sealed (``sealing.py``).

The path itself is :meth:`Writes._plan`, a generator that yields what it needs from the
database (``append.Read``, ``Write``, ``ReadEvents``, ``ResetClock``) and does no I/O of
its own; :meth:`Writes._run` answers those requests on a SQLAlchemy connection, in one
transaction, and :meth:`Writes.execute_on_loop` on the event loop's async connections
(``on_loop.py``). A :data:`RiderSource` added with :meth:`Writes.add_rider` gives a
write rows of another table to carry in its statement (an outbox entry).
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError
from sqlalchemy import Connection

from ..engine import clocks, errors
from ..engine.annotations import Annotation, seat_late
from ..engine.commands import Command, parse_command
from ..engine.events import Event
from ..engine.field_errors import field_errors
from ..engine.table import DONE, Table
from ..engine.views import seat_view
from ..ledger.chain import PASS_COMMAND_EVENTS, chained_rows
from ..ledger.rows import StoredEvent
from . import append as statements
from . import integrity
from .append import Append, Head, Read, ReadEvents, Request, ResetClock, Rider, Write
from .core import Part, StoreCore
from .errors import CommandIdConflict, Conflict, GameNotFound
from .on_loop import OnLoop
from .results import ExecuteResult
from .sealing import Sealing
from .tamper import TamperEvidence

MAX_COMMAND_ID = 128  # events.command_id, commands.command_id

#: gives a write the rows of another table its statement carries (``None``: none)
RiderSource = Callable[[Append], Rider | None]


@dataclass(frozen=True)
class Decision:
    """What a writer decided on a head: rows (each event with its step), the table they
    left (``None``: the snapshot stays), the clock after, and (the clock's writer) the
    command to remember under the id."""

    items: list[tuple[Event, str | None]]
    table: Table | None
    clock: dict[str, Any] | None
    command: Mapping[str, Any] | None = None


#: a writer: the decision on ``head`` at ``now`` (``None``: nothing to do any more)
Decide = Callable[[Head, datetime], Decision | None]


@dataclass(frozen=True)
class Written:
    """A write's result and the game's head after it (``None``: forget the game)."""

    game_id: str
    result: ExecuteResult
    head: Head | None


class Writes(Part):
    """The three writers over one write path; the seals of finished games."""

    def __init__(self, core: StoreCore, tamper: TamperEvidence) -> None:
        super().__init__(core)
        self.tamper = tamper
        self.sealing = Sealing(tamper.seal)
        self.riders: list[RiderSource] = []

    # -- the writers ------------------------------------------------------------------------
    def execute(
        self, game_id: str, command: Command | Mapping[str, Any], command_id: str | None = None
    ) -> ExecuteResult:
        """A seat's or the director's command, through the chart, in one transaction.

        A ``command_id`` seen before with the same command returns the events it wrote
        then (``duplicate=True``) and writes nothing; with another command it raises
        :class:`CommandIdConflict`. Refusals raise the engine's error and write nothing.
        """
        plan, command_id, unknown = self._command(game_id, command, command_id)
        written = self._run(plan, game_id, unknown)
        assert written is not None  # only the clock's writer can find nothing to do
        return written.result

    async def execute_on_loop(
        self, game_id: str, command: Command | Mapping[str, Any], command_id: str | None = None
    ) -> ExecuteResult:
        """:meth:`execute` on the running event loop, without a thread (PostgreSQL only,
        :attr:`on_loop_ready`): the same path, answered on async connections
        (``on_loop.py``)."""
        plan, command_id, unknown = self._command(game_id, command, command_id)
        try:
            written = await self.on_loop.run(plan, game_id, unknown)
        except BaseException:
            self.core.served.forget(game_id)
            raise
        self.after_commit(written)
        return written.result  # type: ignore[no-any-return]

    @property
    def on_loop_ready(self) -> bool:
        """Whether :meth:`execute_on_loop` serves this database (PostgreSQL)."""
        return self.core.dialect == "postgresql"

    @property
    def on_loop(self) -> OnLoop:
        return OnLoop.of(self.core)

    def _command(
        self, game_id: str, command: Command | Mapping[str, Any], command_id: str | None
    ) -> tuple[Generator[Request, Any, Written | None], str, str]:
        """The plan of a command, its id and what a cut-off commit tells."""
        cmd = _parse(command)
        command_id = checked_id(command_id)
        unknown = (
            "The database connection was lost while the command was being committed, so "
            f"it may or may not be stored. Send it again with the same command id "
            f"({command_id!r}): it is applied at most once, and the answer says what is stored."
        )

        def decide(head: Head, now: datetime) -> Decision:
            return self._through_chart(head, cmd, now)

        doc = cmd.model_dump(mode="json")
        return self._plan(game_id, command_id, doc, decide, cached=True), command_id, unknown

    def annotate(
        self, game_id: str, annotation: Annotation, command_id: str | None = None
    ) -> ExecuteResult:
        """Rows that move no tile (``annotation``): the clock document changes, the
        projection stays; a seen ``command_id`` is answered as ``execute`` does."""
        command_id = checked_id(command_id)
        plan = self.annotation_plan(game_id, annotation, command_id, cached=True)
        written = self._run(plan, game_id, unknown_change(command_id))
        assert written is not None
        return written.result

    def drive_on(
        self, conn: Connection, plan: Generator[Request, Any, Written | None]
    ) -> Written | None:
        """Run a write's ``plan`` in the caller's transaction (several games' writes in
        one, a start under the worker's lock); then :meth:`after_commit` the result."""
        return _drive(plan, lambda request: self._answer(conn, request))  # type: ignore[no-any-return]

    def annotation_plan(
        self, game_id: str, annotation: Annotation, command_id: str, *, cached: bool
    ) -> Generator[Request, Any, Written | None]:
        """The write of ``annotation`` (``cached``: from this process's head of the game;
        else read under the game's lock), to run with :meth:`drive_on` or alone."""

        def decide(head: Head, now: datetime) -> Decision:
            clock, events = annotation.change(head.clock, now)
            if annotation.rearm and clock is not None:  # who plays a seat changed
                table = self._load(head.snapshot)
                clock = clocks.advance(clock, table, now, head.last_seq + len(events))
            return Decision([(e, None) for e in events], None, clock)

        return self._plan(game_id, command_id, dict(annotation.command), decide, cached=cached)

    def act_for_seat(
        self, conn: Connection, game_id: str, firing: clocks.ClockFiring
    ) -> Written | None:
        """The clock acting for ``firing.seat`` (the auto player's command, after a
        ``clock_expired`` row for a timed seat) or flagging it late, in the caller's
        transaction, which holds the game's lock; ``None`` when there is nothing to do
        any more. After the commit, hand the result to :meth:`after_commit`.
        """

        def decide(head: Head, now: datetime) -> Decision | None:
            if not firing.stands(head.clock, now):
                return None  # the seat acted, or the clock moved, meanwhile
            if firing.flags_late(head.clock or {}):
                late = seat_late(firing)
                clock, events = late.change(head.clock, now)
                return Decision([(e, None) for e in events], None, clock, late.command)
            table = self._load(head.snapshot)
            command = firing.player().decide(seat_view(table, firing.seat))
            if command is None:  # nothing left for it to do: drop the deadline
                doc = clocks.advance(head.clock or {}, table, now, head.last_seq)
                doc["deadlines"].pop(firing.seat.value, None)
                return Decision([], None, doc)
            decision = self._through_chart(head, command, now, firing)
            return dataclasses.replace(decision, command=command.model_dump(mode="json"))

        plan = self._plan(game_id, firing.command_id, None, decide, cached=False)
        return _drive(plan, lambda request: self._answer(conn, request))

    def add_rider(self, source: RiderSource) -> None:
        """Every write from now on carries the rows ``source`` gives it, in its statement."""
        self.riders.append(source)

    def wait_for_seals(self) -> None:
        """Return once every seal asked for so far is written (or given up)."""
        self.sealing.wait()

    # -- the path ----------------------------------------------------------------------------
    def _plan(
        self,
        game_id: str,
        command_id: str,
        command_doc: Mapping[str, Any] | None,
        decide: Decide,
        *,
        cached: bool,
    ) -> Generator[Request, Any, Written | None]:
        """One write, as requests to the database (see the module docstring).

        ``command_doc``: what is remembered under the id (``None``: the decision says,
        and a seen id is a duplicate whatever it named); ``cached``: start from this
        process's head of the game; else read it under the lock from the start.
        """
        head = self.core.served.get(game_id) if cached else None
        fresh, lock = head is None, not cached
        while True:
            if head is None:
                found = yield Read(game_id, command_id, lock)
                _check_head(game_id, found)
                if found.seen_command is not None:
                    result = yield from self._seen(game_id, command_id, command_doc, found)
                    whole = found.projection_seq == found.last_seq
                    return Written(game_id, result, _head_of(found) if whole else None)
                head = _head_of(found)
            now = _now()
            try:
                decision = decide(head, now)
            except errors.CharlestonError:
                if fresh:
                    raise
                self.core.served.forget(game_id)
                head, fresh = None, True  # a refusal must hold for the game as it is now
                continue
            if decision is None:
                return None
            if not decision.items:
                yield ResetClock(game_id, decision.clock)
                return None
            doc = decision.command if decision.command is not None else command_doc
            assert doc is not None
            append, after = self._append(game_id, command_id, doc, head, decision, now)
            if (yield Write(append)):
                stored = [StoredEvent(**row) for row in append.rows]
                result = ExecuteResult(
                    stored, snapshot=after.snapshot, command_id=command_id, clock=after.clock
                )
                return Written(game_id, result, after)
            self.core.served.forget(game_id)
            if fresh and lock:  # under the lock no one moves the game: a belt
                raise Conflict(f"Game {game_id!r} moved past seq {head.last_seq}; retry.")
            head, fresh, lock = None, True, True

    def _seen(
        self, game_id: str, command_id: str, command_doc: Mapping[str, Any] | None, found: Any
    ) -> Generator[Request, Any, ExecuteResult]:
        """A command id seen before: the events it wrote then, or the conflict."""
        if command_doc is not None and found.seen_command != command_doc:
            raise CommandIdConflict(
                f"Command id {command_id!r} was already used for another command "
                f"({found.seen_command['type']} by {found.seen_command.get('seat')}); "
                "choose a new id for a new command."
            )
        rows = yield ReadEvents(game_id, found.seen_first, found.seen_last)
        return ExecuteResult(
            [StoredEvent.from_row(r) for r in rows],
            duplicate=True,
            snapshot=found.snapshot,
            command_id=command_id,
            clock=found.clock,
        )

    def _through_chart(
        self, head: Head, cmd: Command, now: datetime, firing: clocks.ClockFiring | None = None
    ) -> Decision:
        """The command run through the chart on the head's table (the seat's own, or the
        clock's for a seat: ``firing``), and the clock document after it."""
        table = self._load(head.snapshot)
        doc = head.clock
        clocks.refusal(None if firing else doc, table, cmd)
        seat_steps = {
            seat: state for state, step in table.active_steps() for seat in step.participants
        }
        kind = clocks.kind_of(table, cmd)
        self.core.warm.holds.pop(type(table.chart), None)  # the command moves it on
        decided_in = clocks.scope(table)  # the step of the decision, before it moves
        try:
            produced = table.execute(cmd)
        except BaseException:
            self.core.warm.tables.pop(type(table.chart), None)
            raise
        items: list[tuple[Event, str | None]] = []
        expired = firing.expired(cmd) if firing is not None else None
        if expired is not None:
            items.append((expired, None))
        for ev in produced:
            step = None
            if ev.type in PASS_COMMAND_EVENTS and ev.seat is not None:
                step = seat_steps.get(ev.seat)
            elif ev.type in ("tiles_transferred", "pass_resolved"):
                step = ev.payload["step"]
            items.append((ev, step))
        if doc is not None:
            acted = firing.acted(kind, cmd, decided_in) if firing is not None and kind else None
            doc = clocks.advance(doc, table, now, head.last_seq + len(items), acted)
            if firing is not None and expired is not None:
                doc = clocks.expired_late(doc, firing.seat)
        return Decision(items, table, doc)

    def _append(
        self,
        game_id: str,
        command_id: str,
        command_doc: Mapping[str, Any],
        head: Head,
        decision: Decision,
        now: datetime,
    ) -> tuple[Append, Head]:
        """The append of ``decision`` on ``head``, and the head it leaves."""
        table = decision.table
        snapshot = table.snapshot() if table is not None else head.snapshot
        if table is not None and self.core.warm.tables.get(type(table.chart)) is table:
            self.core.warm.holds[type(table.chart)] = snapshot
        finished = table.finished if table is not None else DONE in snapshot["configuration"]
        rows = chained_rows(head.last_seq, head.head_hash, game_id, command_id, decision.items, now)
        last_seq = head.last_seq + len(rows)
        head_hash = rows[-1]["hash"]
        append = Append(
            game_id=game_id,
            command_id=command_id,
            command=dict(command_doc),
            old_seq=head.last_seq,
            epoch=head.epoch,
            at=now,
            rows=rows,
            snapshot=snapshot,
            game={
                "last_seq": last_seq,
                "status": "finished" if finished else "active",
                "head_hash": head_hash,
                "clock": decision.clock,
                "next_due": clocks.next_due(decision.clock),
            },
            anchor=integrity.anchor_row(
                self.anchor_key, game_id, head.last_seq + 1, last_seq, head_hash, finished, now
            ),
        )
        riders = tuple(r for r in (source(append) for source in self.riders) if r and r.rows)
        if riders:
            append = dataclasses.replace(append, riders=riders)
        return append, Head(last_seq, head.epoch, head_hash, snapshot, decision.clock)

    # -- on a SQLAlchemy connection ---------------------------------------------------------
    def _run(
        self, plan: Generator[Request, Any, Written | None], game_id: str, unknown: str
    ) -> Written | None:
        """``plan`` in one write transaction of its own; after the commit, the cache, the
        notice and the seal (:meth:`after_commit`)."""
        try:
            with self._writing(unknown, game_id) as conn:
                written = _drive(plan, lambda request: self._answer(conn, request))
        except BaseException:
            self.core.served.forget(game_id)  # what is stored is not known here
            raise
        if written is not None:
            self.after_commit(written)
        return written

    def _answer(self, conn: Connection, request: Request) -> Any:
        """What the database says to one request of the path."""
        if isinstance(request, Write):
            return statements.write(conn, request.append)
        if isinstance(request, Read):
            return statements.read_head(
                conn, request.game_id, request.command_id, lock=request.lock
            )
        if isinstance(request, ReadEvents):
            return statements.events_of(conn, request.game_id, request.first, request.last)
        statements.reset_clock(conn, request.game_id, request.clock, clocks.next_due(request.clock))
        self.core.served.forget(request.game_id)
        return None

    def after_commit(self, written: Written) -> None:
        """Once the write is committed: cache the game's head, tell the listeners, and
        seal a game the write finished."""
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


def _check_head(game_id: str, head: Any) -> None:
    """Refuse a write to a game that is missing, quarantined or not whole."""
    if head is None:
        raise GameNotFound(f"There is no game {game_id!r}.")
    if head.quarantined:
        raise integrity.refuse(game_id)
    if head.projection_seq is None or head.head_hash is None:
        raise Conflict(
            f"Game {game_id!r} has no projection or no row {head.last_seq}; run verify "
            "and check_projections."
        )
    if head.seen_command is None and head.projection_seq != head.last_seq:
        raise Conflict(
            f"The projection of game {game_id!r} is at seq {head.projection_seq} but "
            f"the game at {head.last_seq}; rebuild it (check_projections)."
        )


def _head_of(found: Any) -> Head:
    return Head(found.last_seq, found.epoch, found.head_hash, found.snapshot, found.clock)


def unknown_change(command_id: str) -> str:
    """What a write whose commit was cut off tells (annotations, as commands)."""
    return (
        "The database connection was lost while the change was being committed, so it "
        f"may or may not be stored. Send it again with the same command id ({command_id!r}): "
        "it is applied at most once."
    )


def checked_id(command_id: str | None) -> str:
    """The command id to store (a new one when none is given); too long is refused."""
    command_id = command_id or uuid.uuid4().hex
    if len(command_id) > MAX_COMMAND_ID:
        raise errors.InvalidCommand(
            f"A command id is at most {MAX_COMMAND_ID} characters, not {len(command_id)}."
        )
    return command_id


def _parse(command: Command | Mapping[str, Any]) -> Command:
    if isinstance(command, Mapping):
        try:
            return parse_command(dict(command))
        except ValidationError as exc:
            problems = field_errors(exc.errors())
            raise errors.InvalidCommand(f"The command is not valid ({problems}).") from None
    return command


def _now() -> datetime:
    return datetime.now(UTC)
