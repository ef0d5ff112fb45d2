"""The one write path: every row a game gets after its first is appended here.

Three writers share it, each named for what it does:

- :meth:`Writes.execute`: a seat's or the director's command, through the chart;
- :meth:`Writes.act_for_seat`: the clock acting for a seat whose deadline passed (or
  flagging it late), in the clock worker's unit of work, which holds the game's lock;
- :meth:`Writes.annotate`: rows that move no tile (pause, resume, a ruling): an
  :class:`~charleston_fsm.engine.annotations.Annotation`; :meth:`Writes.annotation_plan`
  is its plan, for a caller's unit of work (a round's tables in one, a credential
  changed with its row).

How a write goes (an optimistic append with an expected seq, as event stores write):

1. The writer continues from the game's head as this process last left it (``served.py``)
   or, when it has none, from one read of it (no lock).
2. It asks the engine once for its turn on that head (``engine/turns.py``: the refusal,
   the rows with their steps, the table and the clock after); the store decides nothing
   of the game itself and reads the clock only for its next due time.
3. One statement appends them (``append.py``), storing nothing unless the game is still
   at the expected seq and epoch, the command id is new and no quarantine is open.
4. When it stored nothing, the head was stale (another process wrote, a quarantine was
   opened) or the id was used: the head is read again **under the game's lock**, in the
   same transaction, and the writer decides again; that attempt cannot lose.
5. A refusal decided on a cached head is decided again on a fresh read: the answer is
   about the game as it is, never as this process remembered it.
6. Commit (on PostgreSQL a write that runs alone is its one statement, sent in
   autocommit: ``StoreCore.writing``). Then the head is cached, the notice goes out
   (``notices.py``: here at once, to other processes batched) and a game the write
   finished is sealed (``sealing.py``).

The path itself is :meth:`Writes._plan`, a generator that yields what it needs from the
database (``write_requests.Read``, ``Write``, ``ReadEvents``, ``ResetClock``) and does no I/O of
its own. Every writer runs its :class:`~.unit_of_work.Plan` in a unit of work
(:meth:`Writes.transaction`, ``unit_of_work.py``): the one bracket that owns the
transaction, answers the requests, forgets the games it touched when anything fails and
does step 6's work after the commit. A :data:`RiderSource` added with
:meth:`Writes.add_rider` gives a write rows of another table to carry in its statement
(an outbox entry).
"""

from __future__ import annotations

import contextlib
import dataclasses
import uuid
from collections.abc import Callable, Generator, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from ...engine import errors, turns
from ...engine.annotations import Annotation
from ...engine.clock_state import Clock, stored, storing
from ...engine.clocks import ClockFiring, next_due
from ...engine.commands import Command, parse_command
from ...engine.field_errors import field_errors
from ...engine.table import DONE, Table
from ...engine.turns import Turn
from ...ledger.chain import chained_rows
from ...ledger.rows import StoredEvent
from ..database.core import UNKNOWN_OUTCOME, Part, StoreCore
from ..errors import CommandIdConflict, Conflict, GameNotFound
from ..evidence import integrity
from ..evidence.tamper import TamperEvidence
from .append import Append, Head, Rider
from .results import ExecuteResult
from .sealing import Sealing
from .unit_of_work import Plan, UnitOfWork, Written
from .write_requests import Read, ReadEvents, Request, ResetClock, Write

MAX_COMMAND_ID = 128  # events.command_id, commands.command_id

#: gives a write the rows of another table its statement carries (``None``: none)
RiderSource = Callable[[Append], Rider | None]


#: a writer: the engine's turn on ``head`` at ``now`` (``None``: nothing to do any more)
Decide = Callable[[Head, datetime], Turn | None]


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
        plan, unknown = self._command(game_id, command, command_id)
        return self._alone(plan, unknown).result

    def _command(
        self, game_id: str, command: Command | Mapping[str, Any], command_id: str | None
    ) -> tuple[Plan, str]:
        """The plan of a command and what a cut-off commit tells."""
        cmd = _parse(command)
        command_id = checked_id(command_id)
        unknown = (
            "The database connection was lost while the command was being committed, so "
            f"it may or may not be stored. Send it again with the same command id "
            f"({command_id!r}): it is applied at most once, and the answer says what is stored."
        )

        def decide(head: Head, now: datetime) -> Turn:
            table = self._moving(head.snapshot)
            with self._discarded_if_failed(table):
                return turns.command_turn(table, head.clock, cmd, now, head.last_seq)

        doc = cmd.model_dump(mode="json")
        return Plan(game_id, self._plan(game_id, command_id, doc, decide, cached=True)), unknown

    def annotate(
        self, game_id: str, annotation: Annotation, command_id: str | None = None
    ) -> ExecuteResult:
        """Rows that move no tile (``annotation``): the clock changes, the
        projection stays; a seen ``command_id`` is answered as ``execute`` does."""
        command_id = checked_id(command_id)
        plan = self.annotation_plan(game_id, annotation, command_id, cached=True)
        return self._alone(plan, unknown_change(command_id)).result

    def transaction(self, unknown: str = UNKNOWN_OUTCOME, *, lone: bool = False) -> UnitOfWork:
        """A unit of work to run plans in (``with writes.transaction() as work:
        work.run(plan)``); ``unknown``: what a cut-off commit tells; ``lone``: it runs one
        plan and nothing else, whose write may commit as it runs (``unit_of_work.py``)."""
        return UnitOfWork(self.core, self.sealing, unknown, lone=lone)

    def _alone(self, plan: Plan, unknown: str) -> Written:
        """``plan`` in a unit of work of its own: its one statement is its transaction."""
        with self.transaction(unknown, lone=True) as work:
            written = work.run(plan)
        assert written is not None  # only the clock's writer can find nothing to do
        return written

    def annotation_plan(
        self,
        game_id: str,
        annotation: Annotation,
        command_id: str,
        *,
        cached: bool,
        clock: Clock | None = None,
    ) -> Plan:
        """The write of ``annotation`` (``cached``: from this process's head of the game;
        else read under the game's lock), to run in a unit of work (:meth:`transaction`).
        ``clock``: the game's clock as the caller already read it under the game's lock in
        that unit of work (the clock worker's pick), taken as the head's clock rather than
        converting the same document again."""

        def decide(head: Head, now: datetime) -> Turn:
            table = lambda: self.core.load(head.snapshot)  # noqa: E731 - read only, kept warm
            return turns.annotation_turn(table, head.clock, annotation, now, head.last_seq)

        command = dict(annotation.command)
        plan = self._plan(game_id, command_id, command, decide, cached=cached, clock=clock)
        return Plan(game_id, plan)

    def act_for_seat(self, game_id: str, firing: ClockFiring, clock: Clock) -> Plan:
        """The clock acting for ``firing.seat`` (the auto player's command, after a
        ``clock_expired`` row for a timed seat) or flagging it late: the plan, to run in
        the clock worker's unit of work, which holds the game's lock (it writes nothing
        when there is nothing to do any more). ``clock``: the clock the worker found
        ``firing`` in, read under that lock: the head's clock, not converted again.
        """

        def decide(head: Head, now: datetime) -> Turn | None:
            loaded: list[Table] = []

            def table() -> Table:
                loaded.append(self._moving(head.snapshot))
                return loaded[-1]

            try:
                return turns.firing_turn(table, head.clock, firing, now, head.last_seq)
            except BaseException:
                for moved in loaded:
                    self._discard(moved)
                raise

        plan = self._plan(game_id, firing.command_id, None, decide, cached=False, clock=clock)
        return Plan(game_id, plan)

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
        clock: Clock | None = None,
    ) -> Generator[Request, Any, Written | None]:
        """One write, as requests to the database (see the module docstring).

        ``command_doc``: what is remembered under the id (``None``: the decision says,
        and a seen id is a duplicate whatever it named); ``cached``: start from this
        process's head of the game; else read it under the lock from the start.
        ``clock``: the game's clock as the caller read it under the game's lock in this
        transaction (``None``: not read); the first read of the head takes it instead of
        converting the document it finds (the same document: the lock was held between).
        """
        head = self.core.served.get(game_id) if cached else None
        fresh, lock = head is None, not cached
        known = clock if not cached else None
        while True:
            if head is None:
                found = yield Read(game_id, command_id, lock)
                _check_head(game_id, found)
                # the store's edge: the document converted once per read
                found_clock = known if known is not None else stored(found.clock)
                known = None  # a later read (a retry) converts what it finds
                if found.seen_command is not None:
                    result = yield from self._seen(
                        game_id, command_id, command_doc, found, found_clock
                    )
                    whole = found.projection_seq == found.last_seq
                    return Written(game_id, result, _head_of(found, found_clock) if whole else None)
                head = _head_of(found, found_clock)
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
            if not decision.rows:
                yield ResetClock(game_id, decision.clock)
                return None
            doc = decision.command if decision.command is not None else command_doc
            assert doc is not None
            append, after = self._append(game_id, command_id, doc, head, decision, now)
            if (yield Write(append)):
                events = [StoredEvent(**row) for row in append.rows]
                result = ExecuteResult(
                    events, snapshot=after.snapshot, command_id=command_id, clock=after.clock
                )
                return Written(game_id, result, after)
            self.core.served.forget(game_id)
            if fresh and lock:  # under the lock no one moves the game: a belt
                raise Conflict(f"Game {game_id!r} moved past seq {head.last_seq}; retry.")
            head, fresh, lock = None, True, True

    def _seen(
        self,
        game_id: str,
        command_id: str,
        command_doc: Mapping[str, Any] | None,
        found: Any,
        clock: Clock | None,
    ) -> Generator[Request, Any, ExecuteResult]:
        """A command id seen before: the events it wrote then, or the conflict; ``clock``:
        the game's clock as the read found it, converted."""
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
            clock=clock,
        )

    def _moving(self, snapshot: Mapping[str, Any]) -> Table:
        """The warm table of ``snapshot`` for a turn that moves it on: from now it no
        longer holds the snapshot (:meth:`_append` says what it holds after)."""
        table = self.core.load(snapshot)
        self.core.warm.holds.pop(type(table.chart), None)
        return table

    def _discard(self, table: Table) -> None:
        """Forget the warm table a failed turn may have left half moved."""
        self.core.warm.tables.pop(type(table.chart), None)

    @contextlib.contextmanager
    def _discarded_if_failed(self, table: Table) -> Iterator[None]:
        try:
            yield
        except BaseException:
            self._discard(table)
            raise

    def _append(
        self,
        game_id: str,
        command_id: str,
        command_doc: Mapping[str, Any],
        head: Head,
        decision: Turn,
        now: datetime,
    ) -> tuple[Append, Head]:
        """The append of ``decision`` on ``head``, and the head it leaves."""
        table = decision.table
        snapshot = table.snapshot() if table is not None else head.snapshot
        if table is not None and self.core.warm.tables.get(type(table.chart)) is table:
            self.core.warm.holds[type(table.chart)] = snapshot
        finished = table.finished if table is not None else DONE in snapshot["configuration"]
        rows = chained_rows(
            head.last_seq, head.head_hash, game_id, command_id, list(decision.rows), now
        )
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
                "clock": storing(decision.clock),  # the one conversion a write makes
                "next_due": next_due(decision.clock),
            },
            anchor=integrity.anchor_row(
                self.core.anchor_key, game_id, head.last_seq + 1, last_seq, head_hash, finished, now
            ),
            clock=decision.clock,
        )
        riders = tuple(r for r in (source(append) for source in self.riders) if r and r.rows)
        if riders:
            append = dataclasses.replace(append, riders=riders)
        return append, Head(last_seq, head.epoch, head_hash, snapshot, decision.clock)


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


def _head_of(found: Any, clock: Clock | None) -> Head:
    """The head a read found, with its clock as converted once where it was read."""
    return Head(found.last_seq, found.epoch, found.head_hash, found.snapshot, clock)


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
