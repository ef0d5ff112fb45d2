"""The command path: one command is one transaction.

Lock the game's row, continue the table from its projection, run the command through
the chart, append every event it caused, move the projection and ``last_seq``, remember
the command id, notify listeners, commit. A reader sees all of a command or none of it.
A game a command finished is sealed afterwards, on the store's sealing thread.

A part of the store (:mod:`.core`); the clock worker (:mod:`.deadlines`) acts through
:meth:`CommandPath.apply`, :meth:`~CommandPath.lock` and :meth:`~CommandPath.append`.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError
from sqlalchemy import Connection

from ..engine import clocks, errors
from ..engine.commands import Command, parse_command
from ..engine.events import Event
from ..engine.table import DONE, Table
from . import commands, integrity
from .core import Part, StoreCore
from .errors import CommandIdConflict, Conflict, GameNotFound
from .results import ExecuteResult
from .rows import StoredEvent
from .tamper import TamperEvidence

if TYPE_CHECKING:  # the clock worker (above this part) hands its firing in
    from .deadlines import ClockFiring

MAX_COMMAND_ID = 128  # events.command_id, commands.command_id


@dataclass(frozen=True)
class _Locked:
    """What a write transaction read under the game's lock."""

    last_seq: int
    snapshot: dict[str, Any]
    head_hash: str
    clock: dict[str, Any] | None


@dataclass
class _Sealing:
    """The store's one sealing thread, made on first use, and the seals it has to do."""

    pool: ThreadPoolExecutor | None = None
    pending: list[Future[None]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class CommandPath(Part):
    """``execute`` and the seals of finished games; ``apply``, ``lock``, ``append`` and
    ``after_commit`` for the clock worker."""

    def __init__(self, core: StoreCore, integrity: TamperEvidence) -> None:
        super().__init__(core)
        self.integrity = integrity
        self._sealing = _Sealing()

    # -- commands -----------------------------------------------------------------------
    def execute(
        self, game_id: str, command: Command | Mapping[str, Any], command_id: str | None = None
    ) -> ExecuteResult:
        """Apply one command to the game, in one transaction; see the module docstring.

        A ``command_id`` seen before with the same command returns the events it wrote
        then (``duplicate=True``) and writes nothing; with another command it raises
        :class:`CommandIdConflict`. Refusals raise the engine's error and write nothing.
        """
        cmd = _parse(command)
        command_id = command_id or uuid.uuid4().hex
        if len(command_id) > MAX_COMMAND_ID:
            raise errors.InvalidCommand(
                f"A command id is at most {MAX_COMMAND_ID} characters, not {len(command_id)}."
            )
        unknown = (
            "The database connection was lost while the command was being committed, so "
            f"it may or may not be stored. Send it again with the same command id "
            f"({command_id!r}): it is applied at most once, and the answer says what is stored."
        )
        with self._writing(unknown, game_id) as conn:
            result = self.apply(conn, game_id, cmd, command_id)
        assert result is not None  # only a clock's firing can find nothing to do
        self.after_commit(game_id, result)
        return result

    def after_commit(self, game_id: str, result: ExecuteResult) -> None:
        """Seal a game the committed command finished (:meth:`_seal_later`)."""
        if result.events and not result.duplicate and DONE in result.snapshot["configuration"]:
            self._seal_later(game_id)

    def apply(
        self,
        conn: Connection,
        game_id: str,
        cmd: Command,
        command_id: str,
        firing: ClockFiring | None = None,
    ) -> ExecuteResult | None:
        """The command's work inside the caller's write transaction (see :meth:`execute`).

        ``firing``: the clock acts for a seat whose deadline passed; ``None`` is returned
        when, under the lock, that deadline no longer stands (the seat acted meanwhile).
        """
        command_doc = cmd.model_dump(mode="json")
        locked = self.lock(conn, game_id, command_id, command_doc)
        if isinstance(locked, ExecuteResult):
            return locked
        table = self._load(locked.snapshot)
        now = _now()
        doc = locked.clock
        if firing is not None and not firing.stands(doc, now):
            return None
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
        if firing is not None and firing.expired is not None:
            items.append((firing.expired, None))
        for ev in produced:
            step = None
            if ev.type in commands.PASS_COMMAND_EVENTS and ev.seat is not None:
                step = seat_steps.get(ev.seat)
            elif ev.type in ("tiles_transferred", "pass_resolved"):
                step = ev.payload["step"]
            items.append((ev, step))
        if doc is not None:
            acted = firing.acted(kind, cmd, decided_in) if firing is not None and kind else None
            doc = clocks.advance(doc, table, now, locked.last_seq + len(items), acted)
            if firing is not None and firing.expired is not None:
                doc = clocks.expired_late(doc, firing.seat)
        return self.append(conn, game_id, locked, items, command_id, command_doc, table, doc, now)

    def lock(
        self, conn: Connection, game_id: str, command_id: str, command_doc: dict[str, Any]
    ) -> _Locked | ExecuteResult:
        """Lock the game's row and read its head; a seen command id is answered here."""
        head = commands.read_head(conn, game_id, command_id)
        self._check_head(game_id, head)
        if head.seen_command is not None:
            return self._seen(conn, game_id, command_id, command_doc, head)
        return _Locked(head.last_seq, head.snapshot, head.head_hash, head.clock)

    def append(
        self,
        conn: Connection,
        game_id: str,
        locked: _Locked,
        items: Sequence[tuple[Event, str | None]],
        command_id: str,
        command_doc: Mapping[str, Any],
        table: Table | None,
        clock: dict[str, Any] | None,
        now: datetime,
    ) -> ExecuteResult:
        """Write the rows, move projection and game (with the clock), remember the id
        (``commands.write``: one statement on PostgreSQL).

        ``table``: the table the command left (``None``: annotation rows, the table as
        it was).
        """
        snapshot = table.snapshot() if table is not None else locked.snapshot
        if table is not None and self.core.warm.tables.get(type(table.chart)) is table:
            self.core.warm.holds[type(table.chart)] = snapshot
        finished = table.finished if table is not None else DONE in snapshot["configuration"]
        rows = commands.chained_rows(
            locked.last_seq, locked.head_hash, game_id, command_id, items, now
        )
        prev = rows[-1]["hash"] if rows else locked.head_hash
        last_seq = locked.last_seq + len(rows)
        effects = commands.Effects(
            game_id=game_id,
            command_id=command_id,
            command=dict(command_doc),
            old_seq=locked.last_seq,
            at=now,
            rows=rows,
            snapshot=snapshot,
            game={
                "last_seq": last_seq,
                "status": "finished" if finished else "active",
                "head_hash": prev,
                "clock": clock,
                "next_due": clocks.next_due(clock),
            },
            anchor=integrity.anchor_row(
                self.anchor_key, game_id, locked.last_seq + 1, last_seq, prev, finished, now
            ),
        )
        if not commands.write(conn, effects):
            raise Conflict(f"Game {game_id!r} moved past seq {locked.last_seq} meanwhile; retry.")
        return ExecuteResult(
            [StoredEvent(**r) for r in rows], snapshot=snapshot, command_id=command_id, clock=clock
        )

    @staticmethod
    def _check_head(game_id: str, head: Any) -> None:
        """Refuse a command to a game that is missing, quarantined or not whole."""
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

    @staticmethod
    def _seen(
        conn: Connection, game_id: str, command_id: str, command_doc: dict[str, Any], head: Any
    ) -> ExecuteResult:
        """A command id seen before: the events it wrote then, or the conflict."""
        if head.seen_command != command_doc:
            raise CommandIdConflict(
                f"Command id {command_id!r} was already used for another command "
                f"({head.seen_command['type']} by {head.seen_command.get('seat')}); "
                "choose a new id for a new command."
            )
        rows = conn.execute(
            commands.EVENTS_OF,
            {"b_game": game_id, "b_first": head.seen_first, "b_last": head.seen_last},
        ).all()
        return ExecuteResult(
            [StoredEvent.from_row(r) for r in rows],
            duplicate=True,
            snapshot=head.snapshot,
            command_id=command_id,
            clock=head.clock,
        )

    def _seal_later(self, game_id: str) -> None:
        """Seal the game that just finished (:meth:`seal`) on the store's sealing thread.

        The command's answer does not wait for the replay (tens of ms). A seal that
        fails, or never runs because the process ends first, leaves the anchor
        unsealed: the next verify replays the game and seals it then."""
        with self._sealing.lock:
            if self._sealing.pool is None:
                self._sealing.pool = ThreadPoolExecutor(1, thread_name_prefix="charleston-seal")
            self._sealing.pending = [f for f in self._sealing.pending if not f.done()]
            self._sealing.pending.append(self._sealing.pool.submit(self._seal_quietly, game_id))

    def _seal_quietly(self, game_id: str) -> None:
        with suppress(Exception):  # an unsealed anchor is the record of a seal not made
            self.integrity.seal(game_id)

    def wait_for_seals(self) -> None:
        """Return once every seal asked for so far is written (or given up)."""
        with self._sealing.lock:
            pending = list(self._sealing.pending)
        wait(pending)


def _parse(command: Command | Mapping[str, Any]) -> Command:
    if isinstance(command, Mapping):
        try:
            return parse_command(dict(command))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'command'}: {e['msg']}" for e in exc.errors()
            )
            raise errors.InvalidCommand(f"The command is not valid ({problems}).") from None
    return command


def _now() -> datetime:
    return datetime.now(UTC)
