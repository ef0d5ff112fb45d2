"""The clock worker and the director's annotations: rows a clock or a director adds.

Deadlines live in ``games.clock`` (the document of :mod:`charleston_fsm.engine.clocks`) and
``games.next_due`` (indexed), moved by the same statement that moves the game. The
worker takes one due game at a time with ``FOR UPDATE SKIP LOCKED`` (PostgreSQL; SQLite
has one writer anyway), re-checks the deadline under that lock and acts for the seat in
the same transaction, under the command id ``clock:{seat}:{armed seq}``: two processes
never act twice, a restart loses nothing, and a seat that acted meanwhile keeps its move.
A part of the store (:mod:`.core`) over the command path, whose transaction it acts in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import ValidationError
from sqlalchemy import Connection, bindparam, select, update

from ..engine import clocks, errors
from ..engine.commands import DIRECTOR_ANNOTATION_ADAPTER, Command, RecordRuling
from ..engine.events import Event
from ..engine.seats import Seat
from ..engine.views import seat_view
from . import commands
from .command_path import CommandPath
from .core import Part, StoreCore
from .hashing import utc
from .models import GameRow
from .results import ExecuteResult

#: how long a game whose firing failed waits before the worker tries it again
RETRY_AFTER = timedelta(seconds=5)

_PICK_DUE = (
    select(GameRow.id)
    .where(GameRow.next_due <= bindparam("b_now"))
    .order_by(GameRow.next_due)
    .limit(1)
    .with_for_update(skip_locked=True)
)
_ANY_DUE = select(GameRow.id).where(GameRow.next_due <= bindparam("b_now")).limit(1)
_SET_CLOCK = (
    update(GameRow)
    .where(GameRow.id == bindparam("b_game"))
    .values(clock=bindparam("b_clock", type_=GameRow.clock.type), next_due=bindparam("b_due"))
)
_POSTPONE = (
    update(GameRow).where(GameRow.id == bindparam("b_game")).values(next_due=bindparam("b_due"))
)


@dataclass(frozen=True)
class ClockFiring:
    """The clock acting for ``seat`` on ``deadline`` (as read when the game was picked)."""

    seat: Seat
    deadline: Mapping[str, Any]
    now: datetime
    expired: Event | None  # the clock_expired row (a timed seat); None for a bot seat

    def stands(self, doc: Mapping[str, Any] | None, now: datetime) -> bool:
        """Whether, under the game's lock, the deadline is still the one to fire."""
        current = (doc or {}).get("deadlines", {}).get(self.seat.value)
        return (
            current is not None
            and not doc.get("paused_at")  # type: ignore[union-attr]
            and not current.get("flagged")
            and current["armed_seq"] == self.deadline["armed_seq"]
            and current["key"] == self.deadline["key"]
            and clocks.parse_time(current["due_at"]) <= max(now, self.now)
        )

    def acted(self, kind: str, command: Command, scope: str) -> dict[str, Any] | None:
        """What the clock did in the seat's name, remembered to refuse its late command
        for that decision; ``scope``: the step it decided in (``clocks.scope``)."""
        if self.expired is None:
            return None
        return {
            "seat": self.seat.value,
            "scope": scope,
            "kind": kind,
            "due_at": self.deadline["due_at"],
            "done": clocks.done_text(command),
        }


class ClockWorker(Part):
    """``fire_due_clocks``, ``clock_view`` and the director's ``direct`` (pause, resume,
    rulings), acting through the command path's ``apply``, ``lock`` and ``append``."""

    def __init__(self, core: StoreCore, command_path: CommandPath) -> None:
        super().__init__(core)
        self.command_path = command_path

    def fire_due_clocks(
        self, now: datetime | None = None, limit: int = 50
    ) -> list[tuple[str, int]]:
        """Act on (or flag) every deadline due by ``now``; ``(game, last seq)`` written.

        One game per transaction, at most ``limit``. Safe to run in every process.
        """
        written: list[tuple[str, int]] = []
        for _ in range(limit):
            moment = utc(now) if now is not None else datetime.now(UTC)
            if not self._anything_due(moment):
                break
            game_id = None
            try:
                with self._writing() as conn:
                    game_id = conn.execute(_PICK_DUE, {"b_now": moment}).scalar()
                    if game_id is None:
                        break
                    result = self._fire(conn, game_id, moment)
            except errors.CharlestonError:
                if game_id is None:
                    raise
                # a refused or quarantined game must not hold the worker: try it later
                with self._writing() as conn:
                    conn.execute(_POSTPONE, {"b_game": game_id, "b_due": moment + RETRY_AFTER})
                continue
            if result is not None and result.events:
                written.append((game_id, result.last_seq))
                self.command_path.after_commit(game_id, result)
        return written

    def _anything_due(self, moment: datetime) -> bool:
        """A read before any write transaction: an idle poll takes no lock (SQLite's write
        lock stays free for commands) and, on PostgreSQL (autocommit), sends no COMMIT."""
        with self.core.engine.connect() as conn:
            if self.core.dialect == "postgresql":
                conn = conn.execution_options(isolation_level="AUTOCOMMIT")
            return conn.execute(_ANY_DUE, {"b_now": moment}).first() is not None

    def _fire(self, conn: Connection, game_id: str, now: datetime) -> Any:
        head = conn.execute(
            select(GameRow.clock).where(GameRow.id == game_id).with_for_update()
        ).scalar()
        found = clocks.due_seat(head, now) if head else None
        if found is None:  # moved or paused meanwhile: only the index is stale
            conn.execute(_POSTPONE, {"b_game": game_id, "b_due": clocks.next_due(head)})
            return None
        seat, deadline = found
        command_id = f"clock:{seat.value}:{deadline['armed_seq']}"
        is_bot = deadline["kind"] == clocks.BOT
        facts = {"kind": deadline["kind"], "seconds": deadline["seconds"]}
        facts["due_at"] = deadline["due_at"]
        if not is_bot and (head.get("options") or {}).get("on_expiry") == "flag_late":
            return self._annotate(
                conn,
                game_id,
                command_id,
                {"type": "seat_late", "seat": seat.value, **facts},
                lambda doc, _now: (clocks.flagged(doc, seat), [Event("seat_late", seat, facts)]),
            )
        locked = commands.read_head(conn, game_id, "")  # the command path's own read
        table = self._load(locked.snapshot)
        command = clocks.player_for(head, seat, deadline).decide(seat_view(table, seat))
        if command is None:  # nothing left for it to do: drop the deadline
            doc = clocks.advance(head, table, now, locked.last_seq)
            doc["deadlines"].pop(seat.value, None)
            conn.execute(
                _SET_CLOCK, {"b_game": game_id, "b_clock": doc, "b_due": clocks.next_due(doc)}
            )
            return None
        expired = None
        if not is_bot:
            done = {"done": clocks.done_text(command), "command": command.type}
            expired = Event("clock_expired", seat, {**facts, **done})
        return self.command_path.apply(
            conn, game_id, command, command_id, ClockFiring(seat, deadline, now, expired)
        )

    def clock_view(self, game_id: str, seat: Seat | None) -> dict[str, Any] | None:
        """The seat's own clock (``None``: the director's whole clock), one small read."""
        with self._reading() as conn:
            doc = conn.execute(select(GameRow.clock).where(GameRow.id == game_id)).scalar()
        return clocks.director_clock(doc) if seat is None else clocks.seat_clock(doc, seat)

    # -- the director ----------------------------------------------------------------------
    def direct(self, game_id: str, command: Mapping[str, Any], command_id: str) -> Any:
        """A director's ``pause_clock``, ``resume_clock`` or ``record_ruling``: one row."""
        try:
            parsed = DIRECTOR_ANNOTATION_ADAPTER.validate_python(dict(command))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'command'}: {e['msg']}" for e in exc.errors()
            )
            raise errors.InvalidCommand(f"The command is not valid ({problems}).") from None
        doc = parsed.model_dump(mode="json")
        if isinstance(parsed, RecordRuling):
            seat = parsed.seat
            payload = {"kind": parsed.kind, "text": parsed.text}

            def change(clock: Any, _now: datetime) -> tuple[Any, list[Event]]:
                return clock, [Event("ruling_recorded", seat, payload)]
        elif parsed.type == "pause_clock":

            def change(clock: Any, now: datetime) -> tuple[Any, list[Event]]:
                return clocks.paused(clock, now), [Event("clock_paused", None, {})]
        else:

            def change(clock: Any, now: datetime) -> tuple[Any, list[Event]]:
                moved, seconds = clocks.resumed(clock, now)
                return moved, [Event("clock_resumed", None, {"paused_seconds": seconds})]

        with self._writing(game_id=game_id) as conn:
            return self._annotate(conn, game_id, command_id, doc, change)

    def _annotate(
        self,
        conn: Connection,
        game_id: str,
        command_id: str,
        command_doc: Mapping[str, Any],
        change: Callable[[Any, datetime], tuple[Any, list[Event]]],
    ) -> Any:
        """Rows that move no tile: the clock document changes, the projection stays."""
        locked = self.command_path.lock(conn, game_id, command_id, command_doc)
        if isinstance(locked, ExecuteResult):  # a duplicate: answered as stored
            return locked
        now = datetime.now(UTC)
        clock, events = change(locked.clock, now)
        return self.command_path.append(
            conn,
            game_id,
            locked,
            [(e, None) for e in events],
            command_id,
            command_doc,
            None,
            clock,
            now,
        )
